/* otlp_encode.c: telemetry batches -> OTLP Export*ServiceRequest bytes.
 *
 * For each request, protobuf-c message structs are built in a scratch
 * arena that points straight at the batch's strings (nothing is copied),
 * packed into a reused buffer, handed to the emit callback, and the arena
 * is reset. Requests are bounded by max_bytes: records are first cut into
 * chunks by a size estimate that never undercounts what a record adds
 * (its own fields plus, when it opens a resource or metric within the
 * chunk, their headers); a chunk whose packed size still exceeds the
 * bound is halved until it fits or is a single record, which is dropped.
 * Profiles requests, with their dictionary, are built by otlp_profiles.c. */
#include <string.h>

#include "../common/el_grow.h"
#include "otlp_encode_internal.h"

/* {====== common messages ======} */

AnyValue *el__otlp_any_value(el__otlp_enc_t *e, const el_tm_attr_t *a) {
  AnyValue *v = NEW(&e->sc, AnyValue);
  if (!v) return NULL;
  *v = (AnyValue)OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
  switch (a->type) {
  case EL_TM_STR:
    v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
    v->string_value = (char *)a->v.s.p;
    break;
  case EL_TM_INT:
    v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
    v->int_value = a->v.i;
    break;
  case EL_TM_DOUBLE:
    v->value_case =
        OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
    v->double_value = a->v.d;
    break;
  case EL_TM_BOOL:
    v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
    v->bool_value = a->v.b;
    break;
  case EL_TM_STRLIST: {
    ArrayValue *arr = NEW(&e->sc, ArrayValue);
    AnyValue **items = NEWN(&e->sc, AnyValue *, a->v.list.n);
    if (!arr || !items) return NULL;
    *arr = (ArrayValue)OPENTELEMETRY__PROTO__COMMON__V1__ARRAY_VALUE__INIT;
    for (size_t i = 0; i < a->v.list.n; i++) {
      el_tm_attr_t s = {.key = "", .type = EL_TM_STR,
                        .v.s = a->v.list.items[i]};
      if (!(items[i] = el__otlp_any_value(e, &s))) return NULL;
    }
    arr->n_values = a->v.list.n;
    arr->values = items;
    v->value_case =
        OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_ARRAY_VALUE;
    v->array_value = arr;
    break;
  }
  }
  return v;
}

/* KeyValue array for attrs[0..n); *out NULL when n == 0. */
static int key_values(el__otlp_enc_t *e, const el_tm_attr_t *attrs,
                      size_t n, KeyValue ***out, size_t *nout) {
  *out = NULL;
  *nout = 0;
  if (n == 0) return 0;
  KeyValue **kvs = NEWN(&e->sc, KeyValue *, n);
  KeyValue *kv = NEWN(&e->sc, KeyValue, n);
  if (!kvs || !kv) return EL_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    kv[i] = (KeyValue)OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
    kv[i].key = (char *)attrs[i].key;
    if (!(kv[i].value = el__otlp_any_value(e, &attrs[i])))
      return EL_ENOMEM;
    kvs[i] = &kv[i];
  }
  *out = kvs;
  *nout = n;
  return 0;
}

static Resource *resource(el__otlp_enc_t *e, const el_tm_resource_t *r) {
  Resource *m = NEW(&e->sc, Resource);
  if (!m) return NULL;
  *m = (Resource)OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
  if (key_values(e, r->attrs, r->nattrs, &m->attributes, &m->n_attributes))
    return NULL;
  return m;
}

static Scope *scope(el__otlp_enc_t *e) {
  Scope *m = NEW(&e->sc, Scope);
  if (!m) return NULL;
  *m = (Scope)OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
  m->name = (char *)el_tm_batch_scope_name(e->b);
  m->version = (char *)el_tm_batch_scope_version(e->b);
  return m;
}

int el__otlp_group_head(el__otlp_enc_t *e, const el_tm_rgroup_t *g,
                        Resource **res, Scope **sc) {
  *res = resource(e, g->resource);
  *sc = *res ? scope(e) : NULL;
  return *sc ? 0 : EL_ENOMEM;
}

/* {====== record ranges ======}
 * Records of a batch are ordered by group, then item. A range [lo, hi) of
 * records meets a contiguous run of groups and items. For logs and spans
 * a group's first/n index records; for metrics and profiles they index
 * items, whose first/n index records. */

el__otlp_range_t el__otlp_clip(size_t first, size_t n, size_t lo,
                               size_t hi) {
  el__otlp_range_t s = {first > lo ? first : lo,
                        first + n < hi ? first + n : hi};
  if (s.hi < s.lo) s.hi = s.lo;
  return s;
}

/* Record range of item i (metrics/profiles) or group g (logs/spans). */
static void item_range(const el_tm_batch_t *b, size_t i, size_t *first,
                       size_t *n) {
  size_t cnt;
  if (el_tm_batch_signal(b) == EL_TM_SIGNAL_METRICS) {
    const el_tm_metric_t *m = el_tm_batch_metrics(b, &cnt);
    *first = m[i].first;
    *n = m[i].n;
  } else {
    const el_tm_profile_t *p = el_tm_batch_profiles(b, &cnt);
    *first = p[i].first;
    *n = p[i].n;
  }
}

static void group_range(const el_tm_batch_t *b, const el_tm_rgroup_t *g,
                        size_t *first, size_t *n) {
  el_tm_signal_t sig = el_tm_batch_signal(b);
  if (sig == EL_TM_SIGNAL_LOGS || sig == EL_TM_SIGNAL_TRACES) {
    *first = g->first;
    *n = g->n;
    return;
  }
  size_t f0, n0, fl, nl;
  item_range(b, g->first, &f0, &n0);
  item_range(b, g->first + g->n - 1, &fl, &nl);
  *first = f0;
  *n = fl + nl - f0;
}

/* {====== metrics ======} */

static NumberDataPoint *data_point(el__otlp_enc_t *e,
                                   const el_tm_point_t *p) {
  NumberDataPoint *m = NEW(&e->sc, NumberDataPoint);
  if (!m) return NULL;
  *m = (NumberDataPoint)
      OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__INIT;
  m->start_time_unix_nano = p->start_unix_ns;
  m->time_unix_nano = p->time_unix_ns;
  if (p->is_int) {
    m->value_case =
        OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_INT;
    m->as_int = p->ival;
  } else {
    m->value_case =
        OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_DOUBLE;
    m->as_double = p->dval;
  }
  if (key_values(e, p->attrs, p->nattrs, &m->attributes, &m->n_attributes))
    return NULL;
  return m;
}

static Metric *metric(el__otlp_enc_t *e, const el_tm_metric_t *mt,
                      el__otlp_range_t r) {
  size_t np;
  const el_tm_point_t *pts = el_tm_batch_points(e->b, &np);
  Metric *m = NEW(&e->sc, Metric);
  NumberDataPoint **dps = NEWN(&e->sc, NumberDataPoint *, r.hi - r.lo);
  if (!m || !dps) return NULL;
  *m = (Metric)OPENTELEMETRY__PROTO__METRICS__V1__METRIC__INIT;
  m->name = (char *)mt->desc.name;
  m->description = (char *)mt->desc.description;
  m->unit = (char *)mt->desc.unit;
  for (size_t i = r.lo; i < r.hi; i++)
    if (!(dps[i - r.lo] = data_point(e, &pts[i]))) return NULL;
  if (mt->desc.kind == EL_TM_SUM) {
    Sum *s = NEW(&e->sc, Sum);
    if (!s) return NULL;
    *s = (Sum)OPENTELEMETRY__PROTO__METRICS__V1__SUM__INIT;
    s->n_data_points = r.hi - r.lo;
    s->data_points = dps;
    s->aggregation_temporality =
        (Opentelemetry__Proto__Metrics__V1__AggregationTemporality)
            mt->desc.temporality;
    s->is_monotonic = mt->desc.monotonic;
    m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
    m->sum = s;
  } else {
    Gauge *g = NEW(&e->sc, Gauge);
    if (!g) return NULL;
    *g = (Gauge)OPENTELEMETRY__PROTO__METRICS__V1__GAUGE__INIT;
    g->n_data_points = r.hi - r.lo;
    g->data_points = dps;
    m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE;
    m->gauge = g;
  }
  return m;
}

/* Groups of the batch that meet [lo, hi): *g0 first, returns count. */
size_t el__otlp_groups_in(el__otlp_enc_t *e, size_t lo, size_t hi,
                          size_t *g0) {
  size_t ng, k = 0;
  const el_tm_rgroup_t *gs = el_tm_batch_groups(e->b, &ng);
  *g0 = ng;
  for (size_t g = 0; g < ng; g++) {
    size_t f, n;
    group_range(e->b, &gs[g], &f, &n);
    el__otlp_range_t r = el__otlp_clip(f, n, lo, hi);
    if (r.hi == r.lo) continue;
    if (k == 0) *g0 = g;
    k++;
  }
  return k;
}

static ProtobufCMessage *metrics_request(el__otlp_enc_t *e, size_t lo,
                                   size_t hi) {
  size_t ng, nm, g0;
  const el_tm_rgroup_t *gs = el_tm_batch_groups(e->b, &ng);
  const el_tm_metric_t *ms = el_tm_batch_metrics(e->b, &nm);
  size_t k = el__otlp_groups_in(e, lo, hi, &g0);
  MetricsRequest *req = NEW(&e->sc, MetricsRequest);
  ResourceMetrics **rms = NEWN(&e->sc, ResourceMetrics *, k);
  if (!req || !rms) return NULL;
  *req = (MetricsRequest)
      OPENTELEMETRY__PROTO__COLLECTOR__METRICS__V1__EXPORT_METRICS_SERVICE_REQUEST__INIT;
  for (size_t gi = 0; gi < k; gi++) {
    const el_tm_rgroup_t *g = &gs[g0 + gi];
    ResourceMetrics *rm = NEW(&e->sc, ResourceMetrics);
    ScopeMetrics *sm = NEW(&e->sc, ScopeMetrics);
    ScopeMetrics **sms = NEWN(&e->sc, ScopeMetrics *, 1);
    Metric **mets = NEWN(&e->sc, Metric *, g->n);
    if (!rm || !sm || !sms || !mets) return NULL;
    *rm = (ResourceMetrics)
        OPENTELEMETRY__PROTO__METRICS__V1__RESOURCE_METRICS__INIT;
    *sm = (ScopeMetrics)OPENTELEMETRY__PROTO__METRICS__V1__SCOPE_METRICS__INIT;
    if (el__otlp_group_head(e, g, &rm->resource, &sm->scope) < 0)
      return NULL;
    for (size_t i = g->first; i < g->first + g->n; i++) {
      el__otlp_range_t r = el__otlp_clip(ms[i].first, ms[i].n, lo, hi);
      if (r.hi == r.lo) continue;
      if (!(mets[sm->n_metrics++] = metric(e, &ms[i], r))) return NULL;
    }
    sm->metrics = mets;
    sms[0] = sm;
    rm->n_scope_metrics = 1;
    rm->scope_metrics = sms;
    rms[gi] = rm;
  }
  req->n_resource_metrics = k;
  req->resource_metrics = rms;
  return &req->base;
}

/* {====== logs ======} */

static LogRecord *log_record(el__otlp_enc_t *e, const el_tm_log_t *l) {
  LogRecord *m = NEW(&e->sc, LogRecord);
  AnyValue *body = NEW(&e->sc, AnyValue);
  if (!m || !body) return NULL;
  *m = (LogRecord)OPENTELEMETRY__PROTO__LOGS__V1__LOG_RECORD__INIT;
  *body = (AnyValue)OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
  m->time_unix_nano = l->time_unix_ns;
  m->observed_time_unix_nano = l->observed_unix_ns;
  m->severity_number =
      (Opentelemetry__Proto__Logs__V1__SeverityNumber)l->severity_number;
  if (l->severity_text) m->severity_text = (char *)l->severity_text;
  body->value_case =
      OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
  body->string_value = (char *)l->body.p;
  m->body = body;
  if (l->trace_id) m->trace_id = (ProtobufCBinaryData){16, (uint8_t *)l->trace_id};
  if (l->span_id) m->span_id = (ProtobufCBinaryData){8, (uint8_t *)l->span_id};
  if (key_values(e, l->attrs, l->nattrs, &m->attributes, &m->n_attributes))
    return NULL;
  return m;
}

/* {====== traces ======} */

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

static Span *span(el__otlp_enc_t *e, const el_tm_span_t *s) {
  Span *m = NEW(&e->sc, Span);
  if (!m) return NULL;
  *m = (Span)OPENTELEMETRY__PROTO__TRACE__V1__SPAN__INIT;
  m->trace_id = (ProtobufCBinaryData){16, (uint8_t *)s->trace_id};
  m->span_id = (ProtobufCBinaryData){8, (uint8_t *)s->span_id};
  if (!all_zero(s->parent_span_id, 8))
    m->parent_span_id = (ProtobufCBinaryData){8, (uint8_t *)s->parent_span_id};
  m->name = (char *)s->name;
  m->kind = (Opentelemetry__Proto__Trace__V1__Span__SpanKind)s->kind;
  m->start_time_unix_nano = s->start_unix_ns;
  m->end_time_unix_nano = s->end_unix_ns;
  if (s->status_code != 0) {
    Status *st = NEW(&e->sc, Status);
    if (!st) return NULL;
    *st = (Status)OPENTELEMETRY__PROTO__TRACE__V1__STATUS__INIT;
    st->code = (Opentelemetry__Proto__Trace__V1__Status__StatusCode)
        s->status_code;
    m->status = st;
  }
  if (key_values(e, s->attrs, s->nattrs, &m->attributes, &m->n_attributes))
    return NULL;
  return m;
}

/* {====== logs and traces: records directly under a scope ======}
 * Their requests have the same nesting, request -> Resource* (one per
 * group) -> one Scope* -> records, in different protobuf-c types: one
 * builder walks it through the types' descriptors. */

typedef struct flat_shape_s {
  const ProtobufCMessageDescriptor *request, *resource, *scope;
  const char *resources, *scopes, *records;     /* their repeated fields */
  void *(*record)(el__otlp_enc_t *e, size_t i); /* message of record i */
} flat_shape_t;

static void *log_message(el__otlp_enc_t *e, size_t i) {
  size_t n;
  return log_record(e, &el_tm_batch_logs(e->b, &n)[i]);
}

static void *span_message(el__otlp_enc_t *e, size_t i) {
  size_t n;
  return span(e, &el_tm_batch_spans(e->b, &n)[i]);
}

static const flat_shape_t logs_shape = {
    &opentelemetry__proto__collector__logs__v1__export_logs_service_request__descriptor,
    &opentelemetry__proto__logs__v1__resource_logs__descriptor,
    &opentelemetry__proto__logs__v1__scope_logs__descriptor,
    "resource_logs",
    "scope_logs",
    "log_records",
    log_message};

static const flat_shape_t traces_shape = {
    &opentelemetry__proto__collector__trace__v1__export_trace_service_request__descriptor,
    &opentelemetry__proto__trace__v1__resource_spans__descriptor,
    &opentelemetry__proto__trace__v1__scope_spans__descriptor,
    "resource_spans",
    "scope_spans",
    "spans",
    span_message};

/* A message of type d in the scratch arena, with its defaults. */
static void *new_message(el__otlp_enc_t *e,
                         const ProtobufCMessageDescriptor *d) {
  void *m = el_arena_calloc(&e->sc, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

/* The address of message m's field `name` (of m's type: generated code
 * names it, so it exists). */
static void *field_at(void *m, const char *name) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(
          ((ProtobufCMessage *)m)->descriptor, name);
  return (char *)m + f->offset;
}

/* Point m's repeated message field `name` at items[0..n). */
static void set_repeated(void *m, const char *name, void **items, size_t n) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(
          ((ProtobufCMessage *)m)->descriptor, name);
  memcpy((char *)m + f->quantifier_offset, &n, sizeof n);
  memcpy((char *)m + f->offset, &items, sizeof items);
}

/* The Resource* message of group g with its one Scope* holding records
 * [lo, hi) of the group; NULL when out of memory. */
static void *flat_group(el__otlp_enc_t *e, const flat_shape_t *sh,
                        const el_tm_rgroup_t *g, size_t lo, size_t hi) {
  el__otlp_range_t r = el__otlp_clip(g->first, g->n, lo, hi);
  void *res = new_message(e, sh->resource);
  void *sc = new_message(e, sh->scope);
  void **scs = NEWN(&e->sc, void *, 1);
  void **recs = NEWN(&e->sc, void *, r.hi - r.lo);
  if (!res || !sc || !scs || !recs) return NULL;
  if (el__otlp_group_head(e, g, field_at(res, "resource"),
                          field_at(sc, "scope")) < 0)
    return NULL;
  for (size_t i = r.lo; i < r.hi; i++)
    if (!(recs[i - r.lo] = sh->record(e, i))) return NULL;
  set_repeated(sc, sh->records, recs, r.hi - r.lo);
  scs[0] = sc;
  set_repeated(res, sh->scopes, scs, 1);
  return res;
}

/* The request of records [lo, hi) of a logs or traces batch. */
static ProtobufCMessage *flat_request(el__otlp_enc_t *e, const flat_shape_t *sh,
                                      size_t lo, size_t hi) {
  size_t ng, g0;
  const el_tm_rgroup_t *gs = el_tm_batch_groups(e->b, &ng);
  size_t k = el__otlp_groups_in(e, lo, hi, &g0);
  ProtobufCMessage *req = new_message(e, sh->request);
  void **ress = NEWN(&e->sc, void *, k);
  if (!req || !ress) return NULL;
  for (size_t gi = 0; gi < k; gi++)
    if (!(ress[gi] = flat_group(e, sh, &gs[g0 + gi], lo, hi))) return NULL;
  set_repeated(req, sh->resources, ress, k);
  return req;
}

/* {====== size estimates and splitting ======} */

enum { EST_SLACK = 16 };              /* tag + length prefix, generous */

static size_t est_attrs(const el_tm_attr_t *a, size_t n) {
  size_t s = 0;
  for (size_t i = 0; i < n; i++) {
    s += 2 * EST_SLACK + strlen(a[i].key);
    if (a[i].type == EL_TM_STR) s += a[i].v.s.len;
    else if (a[i].type == EL_TM_STRLIST)
      for (size_t j = 0; j < a[i].v.list.n; j++)
        s += EST_SLACK + a[i].v.list.items[j].len;
    else s += 10;
  }
  return s;
}

/* Upper bound of what record i adds to a request, by itself. */
static size_t est_record(const el_tm_batch_t *b, size_t i) {
  size_t n;
  switch (el_tm_batch_signal(b)) {
  case EL_TM_SIGNAL_METRICS: {
    const el_tm_point_t *p = &el_tm_batch_points(b, &n)[i];
    return 4 * EST_SLACK + est_attrs(p->attrs, p->nattrs);
  }
  case EL_TM_SIGNAL_LOGS: {
    const el_tm_log_t *l = &el_tm_batch_logs(b, &n)[i];
    return 8 * EST_SLACK + l->body.len +
           (l->severity_text ? strlen(l->severity_text) : 0) +
           est_attrs(l->attrs, l->nattrs);
  }
  case EL_TM_SIGNAL_TRACES: {
    const el_tm_span_t *s = &el_tm_batch_spans(b, &n)[i];
    return 10 * EST_SLACK + strlen(s->name) + est_attrs(s->attrs, s->nattrs);
  }
  case EL_TM_SIGNAL_PROFILES: {
    const el_tm_profile_sample_t *s = &el_tm_batch_samples(b, &n)[i];
    size_t est = 6 * EST_SLACK + est_attrs(s->attrs, s->nattrs);
    for (size_t f = 0; f < s->nframes; f++)
      est += 8 * EST_SLACK + s->frames[f].function.len + s->frames[f].file.len;
    return est;
  }
  default:
    return 0;
  }
}

/* Upper bound of a group's resource + scope headers. */
static size_t est_group(const el_tm_batch_t *b, const el_tm_rgroup_t *g) {
  return 6 * EST_SLACK + strlen(el_tm_batch_scope_name(b)) +
         strlen(el_tm_batch_scope_version(b)) +
         est_attrs(g->resource->attrs, g->resource->nattrs);
}

static size_t est_item(const el_tm_batch_t *b, size_t i) {
  size_t n;
  if (el_tm_batch_signal(b) == EL_TM_SIGNAL_METRICS) {
    const el_tm_metric_t *m = &el_tm_batch_metrics(b, &n)[i];
    return 6 * EST_SLACK + strlen(m->desc.name) + strlen(m->desc.unit) +
           strlen(m->desc.description);
  }
  const el_tm_profile_t *p = &el_tm_batch_profiles(b, &n)[i];
  return 6 * EST_SLACK + strlen(p->sample_type) + strlen(p->sample_unit);
}

static ProtobufCMessage *build(el__otlp_enc_t *e, size_t lo, size_t hi) {
  switch (e->sig) {
  case EL_TM_SIGNAL_METRICS: return metrics_request(e, lo, hi);
  case EL_TM_SIGNAL_LOGS:
    return flat_request(e, &logs_shape, lo, hi);
  case EL_TM_SIGNAL_TRACES:
    return flat_request(e, &traces_shape, lo, hi);
  case EL_TM_SIGNAL_PROFILES: return el__otlp_profiles_request(e, lo, hi);
  default: return NULL;
  }
}

/* Encode records [lo, hi) as one request, halving while too large. */
static int encode_range(el__otlp_enc_t *e, size_t lo, size_t hi) {
  if (lo >= hi) return 0;
  ProtobufCMessage *msg = build(e, lo, hi);
  if (!msg) {
    el_arena_reset(&e->sc);
    return EL_ENOMEM;
  }
  size_t size = protobuf_c_message_get_packed_size(msg);
  if (e->max_bytes && size > e->max_bytes) {
    el_arena_reset(&e->sc);
    if (hi - lo == 1) {
      e->dropped++;
      return 0;
    }
    size_t mid = lo + (hi - lo) / 2;
    int rc = encode_range(e, lo, mid);
    return rc < 0 ? rc : encode_range(e, mid, hi);
  }
  if (el_grow(&e->buf, &e->bufcap, size, 1) < 0) {
    el_arena_reset(&e->sc);
    return EL_ENOMEM;
  }
  size_t packed = protobuf_c_message_pack(msg, e->buf);
  el_arena_reset(&e->sc);
  el_assert(packed == size && "protobuf-c packed size mismatch");
  return e->emit(e->ud, e->buf, packed, hi - lo);
}

size_t el_otlp_encode_estimate(const el_tm_batch_t *b) {
  if (!b) return 0;
  el_tm_signal_t sig = el_tm_batch_signal(b);
  bool items = sig == EL_TM_SIGNAL_METRICS || sig == EL_TM_SIGNAL_PROFILES;
  size_t ng, n = el_tm_batch_count(b), est = 8 * EST_SLACK;
  const el_tm_rgroup_t *gs = el_tm_batch_groups(b, &ng);
  for (size_t g = 0; g < ng; g++) {
    est += est_group(b, &gs[g]);
    for (size_t it = 0; items && it < gs[g].n; it++)
      est += est_item(b, gs[g].first + it);
  }
  for (size_t r = 0; r < n; r++) est += est_record(b, r);
  return est;
}

/* Cut the batch into chunks whose estimated size fits max_bytes. */
static int encode_all(el__otlp_enc_t *e) {
  const el_tm_batch_t *b = e->b;
  bool items = e->sig == EL_TM_SIGNAL_METRICS ||
               e->sig == EL_TM_SIGNAL_PROFILES;
  size_t ng, lo = 0, est = 8 * EST_SLACK;
  const el_tm_rgroup_t *gs = el_tm_batch_groups(b, &ng);
  size_t limit = e->max_bytes ? e->max_bytes : SIZE_MAX;
  for (size_t g = 0; g < ng; g++) {
    size_t gest = est_group(b, &gs[g]);
    size_t gfirst, gn;
    group_range(b, &gs[g], &gfirst, &gn);
    size_t nit = items ? gs[g].n : 1;
    for (size_t it = 0; it < nit; it++) {
      size_t first = gfirst, n = gn, iest = 0;
      if (items) {
        item_range(b, gs[g].first + it, &first, &n);
        iest = est_item(b, gs[g].first + it);
      }
      for (size_t r = first; r < first + n; r++) {
        size_t rest = est_record(b, r);
        size_t add = rest + (r == first || r == lo ? iest : 0) +
                     (r == gfirst || r == lo ? gest : 0);
        if (r > lo && est + add > limit) {
          int rc = encode_range(e, lo, r);
          if (rc < 0) return rc;
          lo = r;
          est = 8 * EST_SLACK;
          add = rest + iest + gest;
        }
        est += add;
      }
    }
  }
  return encode_range(e, lo, el_tm_batch_count(b));
}

int el_otlp_encode(el_tm_signal_t sig, const el_tm_batch_t *batch,
                   size_t max_bytes, el_otlp_emit_fn emit, void *ud) {
  if (!batch || !emit || sig != el_tm_batch_signal(batch)) return EL_EINVAL;
  if (el_tm_batch_count(batch) == 0) return 0;
  el__otlp_enc_t e = {.b = batch, .sig = sig, .max_bytes = max_bytes,
                      .emit = emit, .ud = ud};
  int rc = encode_all(&e);
  el_arena_free(&e.sc);
  el__otlp_dict_free(&e);
  el_free(e.buf);
  return rc < 0 ? rc : e.dropped;     /* callers count and log drops */
}

const ProtobufCMessageDescriptor *el_otlp_request_descriptor(
    el_tm_signal_t sig) {
  switch (sig) {
  case EL_TM_SIGNAL_METRICS:
    return &opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__descriptor;
  case EL_TM_SIGNAL_LOGS:
    return &opentelemetry__proto__collector__logs__v1__export_logs_service_request__descriptor;
  case EL_TM_SIGNAL_TRACES:
    return &opentelemetry__proto__collector__trace__v1__export_trace_service_request__descriptor;
  case EL_TM_SIGNAL_PROFILES:
    return &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor;
  default:
    return NULL;
  }
}

const ProtobufCMessageDescriptor *el_otlp_response_descriptor(
    el_tm_signal_t sig) {
  switch (sig) {
  case EL_TM_SIGNAL_METRICS:
    return &opentelemetry__proto__collector__metrics__v1__export_metrics_service_response__descriptor;
  case EL_TM_SIGNAL_LOGS:
    return &opentelemetry__proto__collector__logs__v1__export_logs_service_response__descriptor;
  case EL_TM_SIGNAL_TRACES:
    return &opentelemetry__proto__collector__trace__v1__export_trace_service_response__descriptor;
  case EL_TM_SIGNAL_PROFILES:
    return &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__descriptor;
  default:
    return NULL;
  }
}

const char *el_otlp_signal_name(el_tm_signal_t sig) {
  static const char *names[EL_TM_NSIGNALS] = {"metrics", "logs", "traces",
                                              "profiles"};
  return sig >= 0 && sig < EL_TM_NSIGNALS ? names[sig] : "unknown";
}

const char *el_otlp_record_name(el_tm_signal_t sig) {
  static const char *names[EL_TM_NSIGNALS] = {"data points", "log records",
                                              "spans", "profile samples"};
  return sig >= 0 && sig < EL_TM_NSIGNALS ? names[sig] : "records";
}
