/* otlp_encode_internal.h: what the files of the OTLP encoder share
 * (otlp_encode.c: requests of every signal, size bounds, the public API;
 * otlp_profiles.c: profiles requests and their dictionary). Not for use
 * outside src/otlp/. */
#ifndef EL_OTLP_ENCODE_INTERNAL_H
#define EL_OTLP_ENCODE_INTERNAL_H

#include "../common/el_arena.h"
#include "../telemetry/telemetry_batch.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb-c.h"
#include "otlp_encode.h"

typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;
typedef Opentelemetry__Proto__Common__V1__ArrayValue ArrayValue;
typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope Scope;
typedef Opentelemetry__Proto__Resource__V1__Resource Resource;
typedef Opentelemetry__Proto__Metrics__V1__ResourceMetrics ResourceMetrics;
typedef Opentelemetry__Proto__Metrics__V1__ScopeMetrics ScopeMetrics;
typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;
typedef Opentelemetry__Proto__Metrics__V1__Gauge Gauge;
typedef Opentelemetry__Proto__Metrics__V1__Sum Sum;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint NumberDataPoint;
typedef Opentelemetry__Proto__Logs__V1__LogRecord LogRecord;
typedef Opentelemetry__Proto__Trace__V1__Span Span;
typedef Opentelemetry__Proto__Trace__V1__Status Status;
typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest
    MetricsRequest;

/* Zeroed objects in the scratch arena (el_arena.h), which holds one
 * request's messages and is reset after each. */
#define NEW(s, T) ((T *)el_arena_calloc((s), sizeof(T)))
#define NEWN(s, T, n) ((T *)el_arena_calloc((s), ((n) ? (n) : 1) * sizeof(T)))

typedef struct el__otlp_dict_s el__otlp_dict_t; /* otlp_profiles.c */

/* The state of one el_otlp_encode call. */
typedef struct el__otlp_enc_s {
  el_arena_t sc; /* the request being built */
  const el_tm_batch_t *b;
  el_tm_signal_t sig;
  size_t max_bytes;
  el_otlp_emit_fn emit;
  void *ud;
  int dropped;  /* records too large on their own */
  uint8_t *buf; /* packed request, bufcap bytes */
  size_t bufcap;
  el__otlp_dict_t *dict; /* profiles only: the dictionary,
                            emptied per request */
} el__otlp_enc_t;

/* A range [lo, hi) of records. */
typedef struct el__otlp_range_s {
  size_t lo, hi;
} el__otlp_range_t;

/* [first, first + n) clipped to [lo, hi) (empty: hi == lo). */
el__otlp_range_t el__otlp_clip(size_t first, size_t n, size_t lo, size_t hi);

/* The groups of the batch that meet records [lo, hi): returns how many,
 * *g0 the first. */
size_t el__otlp_groups_in(el__otlp_enc_t *e, size_t lo, size_t hi, size_t *g0);

/* Messages in the scratch arena, pointing at the batch's strings; NULL
 * (or EL_ENOMEM) when out of memory. */
AnyValue *el__otlp_any_value(el__otlp_enc_t *e, const el_tm_attr_t *a);
/* The Resource of group g and the batch's InstrumentationScope. */
int el__otlp_group_head(el__otlp_enc_t *e, const el_tm_rgroup_t *g,
                        Resource **res, Scope **scope);

/* otlp_profiles.c: the ExportProfilesServiceRequest of records [lo, hi),
 * with its own ProfilesDictionary; NULL when out of memory. */
ProtobufCMessage *el__otlp_profiles_request(el__otlp_enc_t *e, size_t lo,
                                            size_t hi);
/* Free the dictionary (e->dict may be NULL). */
void el__otlp_dict_free(el__otlp_enc_t *e);

#endif /* EL_OTLP_ENCODE_INTERNAL_H */
