/* rp_export.c: the store's exporter (el_rp_exporter): every batch the
 * processors produce is reduced (rp_internal.h) and freed, at once or,
 * while the clock of its session may still move, once that clock has
 * settled, its times moved by the change (rp_clock.c). Records
 * are told apart by the processors' names (el_rp_names_t) and the
 * attributes of spec/reference-behaviour.md §5: evCap, heapCapset,
 * heapProfLabel (+ ip* for -hi), kind (UserMarker / UserMessage),
 * capability and user (capability usage spans). */
#include <stdlib.h>
#include <string.h>

#include "../telemetry/telemetry_batch.h"
#include "rp_internal.h"

enum {
  N_HEAP_SIZE = 0,
  N_HEAP_LIVE,
  N_BLOCKS_SIZE,
  N_HEAP_ALLOCATED,
  N_MEM_CURRENT,
  N_MEM_NEEDED,
  N_MEM_RETURNED,
  N_HEAP_PROF_SAMPLE,
  N_CAP_USAGE,
  N_CC_PROFILE,
  N_STACK_PROFILE
};

static const el_tm_attr_t *attr(const el_tm_attr_t *a, size_t n,
                                const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(a[i].key, key) == 0) return &a[i];
  return NULL;
}

static int64_t attr_int(const el_tm_attr_t *a, size_t n, const char *key,
                        int64_t dflt) {
  const el_tm_attr_t *x = attr(a, n, key);
  if (!x) return dflt;
  if (x->type == EL_TM_INT) return x->v.i;
  if (x->type == EL_TM_STR) return strtoll(x->v.s.p, NULL, 10);
  return dflt;
}

static double point_value(const el_tm_point_t *p) {
  return p->is_int ? (double)p->ival : p->dval;
}

static int name_is(const el_rp_t *rp, int which, const char *name) {
  return rp->names[which] && strcmp(rp->names[which], name) == 0;
}

/* The -hi info table of a heap profile sample: "<ipName> :: <ipTyDesc>
 * (<ipModule> <ipSrcLoc>)" from the attributes heap_prof.lua resolved, or
 * NULL when none. */
static const char *ipe_detail(const el_tm_point_t *p, char *buf, size_t size) {
  const el_tm_attr_t *nm = attr(p->attrs, p->nattrs, "ipName");
  if (!nm) return NULL;
  const el_tm_attr_t *ty = attr(p->attrs, p->nattrs, "ipTyDesc");
  const el_tm_attr_t *lb = attr(p->attrs, p->nattrs, "ipLabel");
  const el_tm_attr_t *md = attr(p->attrs, p->nattrs, "ipModule");
  const el_tm_attr_t *sl = attr(p->attrs, p->nattrs, "ipSrcLoc");
#define S(a) ((a) && (a)->type == EL_TM_STR ? (a)->v.s.p : "")
  snprintf(buf, size, "%s%s%s :: %s (%s %s)", S(nm), *S(lb) ? " " : "", S(lb),
           S(ty), S(md), S(sl));
#undef S
  return buf;
}

static void heap_prof_points(el_rp_t *rp, const el_tm_point_t *pts, size_t n,
                             int64_t off) {
  for (size_t i = 0; i < n; i++) {
    const el_tm_point_t *p = &pts[i];
    const el_tm_attr_t *lab = attr(p->attrs, p->nattrs, "heapProfLabel");
    if (!lab || lab->type != EL_TM_STR) continue;
    const el_tm_attr_t *bd = attr(p->attrs, p->nattrs, "heapProfBreakdown");
    if (bd && bd->type == EL_TM_STR && !rp->heap.breakdown[0])
      snprintf(rp->heap.breakdown, sizeof rp->heap.breakdown, "%s", bd->v.s.p);
    char buf[1024];
    const char *detail = ipe_detail(p, buf, sizeof buf);
    uint64_t t = el__rp_shift(p->time_unix_ns, off);
    el__rp_seen(rp, t);
    el__rp_heap_sample(&rp->heap, t, lab->v.s.p, lab->v.s.len, point_value(p),
                       detail);
  }
}

static void metric(el_rp_t *rp, const el_tm_metric_t *m,
                   const el_tm_point_t *pts, int64_t off) {
  static const struct {
    int name, gauge;
  } gauges[] = {
      {N_HEAP_SIZE, RP_G_HEAP_SIZE},     {N_HEAP_LIVE, RP_G_HEAP_LIVE},
      {N_BLOCKS_SIZE, RP_G_BLOCKS_SIZE}, {N_MEM_CURRENT, RP_G_MEM_CURRENT},
      {N_MEM_NEEDED, RP_G_MEM_NEEDED},   {N_MEM_RETURNED, RP_G_MEM_RETURNED}};
  const char *name = m->desc.name;
  const el_tm_point_t *p = pts + m->first;
  if (name_is(rp, N_HEAP_PROF_SAMPLE, name)) {
    heap_prof_points(rp, p, m->n, off);
    return;
  }
  if (name_is(rp, N_HEAP_ALLOCATED, name)) {
    for (size_t i = 0; i < m->n; i++) {
      uint64_t t = el__rp_shift(p[i].time_unix_ns, off);
      el__rp_seen(rp, t);
      /* A first interval from the RTS start: the charts begin there. A
       * held point's start is its session's final one (rp_internal.h
       * held_start). */
      uint64_t start = p[i].start_unix_ns && rp->held_start
                           ? rp->held_start
                           : el__rp_shift(p[i].start_unix_ns, off);
      uint64_t t0 = el__rp_heap_alloc(
          &rp->heap, t, start, attr_int(p[i].attrs, p[i].nattrs, "evCap", 0),
          point_value(&p[i]));
      if (t0) el__rp_seen(rp, t0);
    }
    return;
  }
  for (size_t g = 0; g < EL_ARRAY_LEN(gauges); g++) {
    if (!name_is(rp, gauges[g].name, name)) continue;
    for (size_t i = 0; i < m->n; i++) {
      uint64_t t = el__rp_shift(p[i].time_unix_ns, off);
      el__rp_seen(rp, t);
      el__rp_heap_gauge(&rp->heap, gauges[g].gauge, t,
                        attr_int(p[i].attrs, p[i].nattrs, "heapCapset", 0),
                        point_value(&p[i]));
    }
    return;
  }
}

static void metrics(el_rp_t *rp, el_tm_batch_t *b, int64_t off) {
  size_t nm, np;
  const el_tm_metric_t *ms = el_tm_batch_metrics(b, &nm);
  const el_tm_point_t *pts = el_tm_batch_points(b, &np);
  for (size_t i = 0; i < nm; i++) {
    metric(rp, &ms[i], pts, off);
    rp->records[EL_TM_SIGNAL_METRICS] += ms[i].n;
  }
}

static void logs(el_rp_t *rp, el_tm_batch_t *b, int64_t off) {
  size_t n;
  const el_tm_log_t *ls = el_tm_batch_logs(b, &n);
  for (size_t i = 0; i < n; i++) {
    const el_tm_log_t *l = &ls[i];
    if (l->host_log) continue;
    const el_tm_attr_t *k = attr(l->attrs, l->nattrs, "kind");
    if (!k || k->type != EL_TM_STR) continue;
    int kind = strcmp(k->v.s.p, "UserMarker") == 0    ? 1
               : strcmp(k->v.s.p, "UserMessage") == 0 ? 0
                                                      : -1;
    if (kind < 0) continue;
    int64_t cap = attr_int(l->attrs, l->nattrs, "evCap", -1);
    uint64_t t = el__rp_shift(l->time_unix_ns, off);
    el__rp_seen(rp, t);
    el__rp_logs_add(&rp->logs, t, cap, kind, l->body.p, l->body.len);
    if (kind == 1) {
      rp->markers_total++;
      el__rp_marks_add(&rp->markers, t, l->body.p, l->body.len);
    }
    rp->records[EL_TM_SIGNAL_LOGS]++;
  }
}

static void spans(el_rp_t *rp, el_tm_batch_t *b, int64_t off) {
  const char *pre = rp->names[N_CAP_USAGE];
  if (!pre) return;
  size_t plen = strlen(pre), n;
  const el_tm_span_t *ss = el_tm_batch_spans(b, &n);
  for (size_t i = 0; i < n; i++) {
    const el_tm_span_t *s = &ss[i];
    if (strncmp(s->name, pre, plen) != 0) continue;
    const char *sfx = s->name + plen;
    bool gc = strcmp(sfx, " GC") == 0;
    if (!gc && strcmp(sfx, " Mutator") != 0) continue;
    int64_t cap = attr_int(s->attrs, s->nattrs, "capability", -1);
    int64_t user = gc ? 0 : attr_int(s->attrs, s->nattrs, "user", 0);
    uint64_t t0 = el__rp_shift(s->start_unix_ns, off);
    uint64_t t1 = el__rp_shift(s->end_unix_ns, off);
    el__rp_seen(rp, t0);
    el__rp_seen(rp, t1);
    el__rp_time_span(&rp->time, cap, gc, (uint32_t)user, t0, t1);
    rp->records[EL_TM_SIGNAL_TRACES]++;
  }
}

static void profiles(el_rp_t *rp, el_tm_batch_t *b, int64_t off) {
  size_t np, ns;
  const el_tm_profile_t *ps = el_tm_batch_profiles(b, &np);
  const el_tm_profile_sample_t *ss = el_tm_batch_samples(b, &ns);
  for (size_t i = 0; i < np; i++) {
    rp_prof_t *p = el__rp_prof_get(rp->profs, &rp->nprofs, ps[i].profile_kind,
                                   ps[i].sample_type, ps[i].sample_unit);
    if (!p) continue;
    for (size_t k = ps[i].first; k < ps[i].first + ps[i].n; k++) {
      el__rp_seen(rp, el__rp_shift(ss[k].time_unix_ns, off));
      el__rp_prof_sample(p, ss[k].frames, ss[k].nframes, ss[k].value);
      rp->records[EL_TM_SIGNAL_PROFILES]++;
    }
  }
}

void el__rp_reduce(el_rp_t *rp, el_tm_signal_t sig, el_tm_batch_t *b,
                   int64_t off) {
  switch (sig) {
  case EL_TM_SIGNAL_METRICS:
    metrics(rp, b, off);
    break;
  case EL_TM_SIGNAL_LOGS:
    logs(rp, b, off);
    break;
  case EL_TM_SIGNAL_TRACES:
    spans(rp, b, off);
    break;
  case EL_TM_SIGNAL_PROFILES:
    profiles(rp, b, off);
    break;
  default:
    break;
  }
}

/* Each batch is reduced at once when the clock of the session its records
 * belong to is settled, else held until it is (rp_clock.c). */
static int rp_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  el__rp_take_batch(ud, sig, b);
  return 0;
}

void el_rp_exporter(el_rp_t *rp, el_tm_exporter_t *ex) {
  memset(ex, 0, sizeof *ex);
  ex->name = "report";
  ex->ud = rp;
  ex->signals = (1u << EL_TM_NSIGNALS) - 1;
  ex->export = rp_export;
}
