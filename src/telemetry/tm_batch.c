/* tm_batch.c: reference counting and read accessors of telemetry batches
 * (telemetry_batch.h). A batch is immutable once built by the store, so
 * the accessors need no locking. */
#include "telemetry_internal.h"

void el__tm_res_ref(el__tm_res_t *r) {
  __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
}

void el__tm_res_unref(el__tm_res_t *r) {
  if (!r) return;
  if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  el_arena_free(&r->arena);
  el_free(r);
}

void el_tm_batch_ref(el_tm_batch_t *b) {
  if (b) __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

void el_tm_batch_free(el_tm_batch_t *b) {
  if (!b) return;
  if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (size_t i = 0; i < b->ngroups; i++) el__tm_res_unref(b->res[i]);
  el_free(b->res);
  el_free(b->groups);
  el_free(b->items);
  el_free(b->recs);
  el_arena_free(&b->arena);
  el_free(b);
}

size_t el_tm_batch_count(const el_tm_batch_t *b) { return b ? b->nrecs : 0; }

el_tm_signal_t el_tm_batch_signal(const el_tm_batch_t *b) { return b->sig; }

const char *el_tm_batch_scope_name(const el_tm_batch_t *b) {
  return b->scope_name;
}

const char *el_tm_batch_scope_version(const el_tm_batch_t *b) {
  return b->scope_version;
}

const el_tm_rgroup_t *el_tm_batch_groups(const el_tm_batch_t *b, size_t *n) {
  *n = b->ngroups;
  return b->groups;
}

static const void *recs_of(const el_tm_batch_t *b, el_tm_signal_t sig,
                           size_t *n) {
  if (b->sig != sig) {
    *n = 0;
    return NULL;
  }
  *n = b->nrecs;
  return b->recs;
}

static const void *items_of(const el_tm_batch_t *b, el_tm_signal_t sig,
                            size_t *n) {
  if (b->sig != sig) {
    *n = 0;
    return NULL;
  }
  *n = b->nitems;
  return b->items;
}

const el_tm_metric_t *el_tm_batch_metrics(const el_tm_batch_t *b, size_t *n) {
  return items_of(b, EL_TM_SIGNAL_METRICS, n);
}

const el_tm_point_t *el_tm_batch_points(const el_tm_batch_t *b, size_t *n) {
  return recs_of(b, EL_TM_SIGNAL_METRICS, n);
}

const el_tm_log_t *el_tm_batch_logs(const el_tm_batch_t *b, size_t *n) {
  return recs_of(b, EL_TM_SIGNAL_LOGS, n);
}

const el_tm_span_t *el_tm_batch_spans(const el_tm_batch_t *b, size_t *n) {
  return recs_of(b, EL_TM_SIGNAL_TRACES, n);
}

const el_tm_profile_t *el_tm_batch_profiles(const el_tm_batch_t *b,
                                            size_t *n) {
  return items_of(b, EL_TM_SIGNAL_PROFILES, n);
}

const el_tm_profile_sample_t *el_tm_batch_samples(const el_tm_batch_t *b,
                                                  size_t *n) {
  return recs_of(b, EL_TM_SIGNAL_PROFILES, n);
}
