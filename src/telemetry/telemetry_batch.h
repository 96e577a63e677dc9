/* telemetry_batch.h: read-only view of a batch built by el_tm_store_flush().
 *
 * A batch holds the records of one signal from one export window, grouped
 * the way OTLP nests them:
 *
 *   batch ─ groups (one per resource, in order of first use)
 *            └─ items: metrics (name+unit+kind+temporality+monotonic) or
 *                      profiles (profile_kind+sample_type+sample_unit),
 *                      in order of first use; logs and spans have no item
 *                      level: a group indexes records directly
 *                 └─ records: data points / samples in emission order
 *
 * Every pointer returned here (strings, attribute arrays, frames) points
 * into memory the batch owns; it stays valid until the last reference is
 * dropped with el_tm_batch_free(). Stored attributes reuse el_tm_attr_t:
 * keys and strings are NUL-terminated copies.
 *
 * Thread: a batch is immutable once built, so any thread holding a
 * reference may read it concurrently. Spec: reference-behaviour.md §2, §5. */
#ifndef EL_TELEMETRY_BATCH_H
#define EL_TELEMETRY_BATCH_H

#include "telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An immutable resource (attribute set), shared by batches. session is
 * the eventlog session the main resource described when its records were
 * emitted (el_tm_store_set_session: 1 for the first header, 2 after a
 * reconnection, ...); 0 before any session and for the host resource.
 * It is not an attribute: OTLP exporters ignore it; the web store
 * (src/web) uses it to tell a corrected resource of the same program
 * (re-keyed) from the next program (docs/web.md "Sessions"). */
typedef struct el_tm_resource_s {
  const el_tm_attr_t *attrs;          /* nattrs attributes, keys unique */
  size_t nattrs;
  uint64_t session;
} el_tm_resource_t;

/* One resource's share of the batch. first/n index the item array
 * (metrics, profiles) or, for logs and spans, the record array. */
typedef struct el_tm_rgroup_s {
  const el_tm_resource_t *resource;
  size_t first;
  size_t n;
} el_tm_rgroup_t;

/* One OTLP Metric: its description and points [first, first+n) of
 * el_tm_batch_points(). description/unit are "" when not given. */
typedef struct el_tm_metric_s {
  el_tm_metric_desc_t desc;
  size_t first;
  size_t n;
} el_tm_metric_t;

/* One OTLP Profile: samples [first, first+n) of el_tm_batch_samples(). */
typedef struct el_tm_profile_s {
  const char *profile_kind;
  const char *sample_type;
  const char *sample_unit;
  size_t first;
  size_t n;
} el_tm_profile_t;

/* The signal of the batch. */
el_tm_signal_t el_tm_batch_signal(const el_tm_batch_t *b);
/* The instrumentation scope given to el_tm_store_new ("" when NULL). */
const char *el_tm_batch_scope_name(const el_tm_batch_t *b);
const char *el_tm_batch_scope_version(const el_tm_batch_t *b);

/* Resource groups: *n receives the count. Never NULL when *n > 0. */
const el_tm_rgroup_t *el_tm_batch_groups(const el_tm_batch_t *b, size_t *n);

/* Items and records; each returns NULL with *n = 0 when the batch is of
 * another signal. Logs keep their emission order within a group;
 * observed_unix_ns is always set (0 at emission was replaced by the clock);
 * host_log is true for records of the host resource. Log trace_id/span_id
 * are NULL or 16/8 bytes. */
const el_tm_metric_t *el_tm_batch_metrics(const el_tm_batch_t *b, size_t *n);
const el_tm_point_t *el_tm_batch_points(const el_tm_batch_t *b, size_t *n);
const el_tm_log_t *el_tm_batch_logs(const el_tm_batch_t *b, size_t *n);
const el_tm_span_t *el_tm_batch_spans(const el_tm_batch_t *b, size_t *n);
const el_tm_profile_t *el_tm_batch_profiles(const el_tm_batch_t *b,
                                            size_t *n);
const el_tm_profile_sample_t *el_tm_batch_samples(const el_tm_batch_t *b,
                                                  size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* EL_TELEMETRY_BATCH_H */
