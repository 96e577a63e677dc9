/* rp_out.c: the page's data (el_rp_write_json): one JSON document whose
 * fields docs/report.md "Data" describes. Times are seconds since the
 * first session's RTS start (`origin_unix_ns`, a string: it does not fit
 * a JavaScript number); durations are ns; sizes bytes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rp_internal.h"

#define BANDS_LISTED 5000  /* rows of the band table */
#define NODES_LISTED 30000 /* call tree nodes per profile */
#define SYMS_LISTED 3000   /* rows of the symbol table */

typedef struct {
  el_rp_t *rp;
  rp_json_t j;
  uint64_t origin;
} out_t;

static double rel(const out_t *o, uint64_t t) {
  return ((double)t - (double)o->origin) / 1e9;
}

/* Centre of bucket i of c, in seconds. */
static double centre(const out_t *o, const rp_cols_t *c, size_t i) {
  return rel(o, el__rp_cols_start(c, i)) + (double)el__rp_cols_width(c) / 2e9;
}

static void kv_uint(rp_json_t *j, const char *k, uint64_t v) {
  el__rp_json_key(j, k);
  el__rp_json_uint(j, v);
}

static void kv_num(rp_json_t *j, const char *k, double v) {
  el__rp_json_key(j, k);
  el__rp_json_num(j, v);
}

static void kv_str(rp_json_t *j, const char *k, const char *v) {
  el__rp_json_key(j, k);
  el__rp_json_str(j, v);
}

/* k: v, or null when v is negative (unknown, e.g. a pid of -1). */
static void kv_int_known(rp_json_t *j, const char *k, int64_t v) {
  el__rp_json_key(j, k);
  if (v >= 0)
    el__rp_json_int(j, v);
  else
    el__rp_json_null(j);
}

/* {====== header ======} */

static void out_meta(out_t *o) {
  el_rp_t *rp = o->rp;
  rp_json_t *j = &o->j;
  char buf[32];
  kv_num(j, "version", 1);
  kv_str(j, "title", rp->in.title ? rp->in.title : rp->in.input);
  kv_str(j, "input", rp->in.input);
  kv_str(j, "generator", "eventlog-live " EL_VERSION);
  kv_num(j, "generated_unix_ms", (double)time(NULL) * 1000);
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->origin);
  kv_str(j, "origin_unix_ns", buf);
  el__rp_json_key(j, "range");
  el__rp_json_arr(j);
  el__rp_json_secs(j, rp->t_min ? rel(o, rp->t_min) : 0);
  el__rp_json_secs(j, rp->t_max ? rel(o, rp->t_max) : 0);
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "stats");
  el__rp_json_obj(j);
  kv_uint(j, "bytes", rp->in.bytes);
  kv_uint(j, "events", rp->in.events);
  /* Eventlog sessions (headers, el.session.number) and the source's
   * connections: a file of several sessions (a tee) is one connection. */
  kv_uint(j, "sessions",
          rp->in.sessions > rp->sessions ? rp->in.sessions : rp->sessions);
  kv_uint(j, "truncated", rp->in.truncated);
  kv_uint(j, "handler_errors", rp->in.handler_errors);
  kv_num(j, "elapsed_s", rp->in.elapsed_s);
  kv_uint(j, "peak_mem_bytes", el_mem_peak());
  static const char *sig[] = {"metrics", "logs", "traces", "profiles"};
  for (size_t s = 0; s < EL_TM_NSIGNALS; s++)
    kv_uint(j, sig[s], rp->records[s]);
  el__rp_json_end_obj(j);
  el__rp_json_key(j, "errors");
  el__rp_json_arr(j);
  for (size_t i = 0; i < rp->nerrors; i++) {
    el__rp_json_obj(j);
    kv_uint(j, "offset", rp->errors[i].offset);
    kv_str(j, "msg", rp->errors[i].msg);
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
  kv_uint(j, "errors_total", rp->errors_total);
  el__rp_json_key(j, "cuts");
  el__rp_json_arr(j);
  for (size_t i = 0; i < rp->ncuts; i++) {
    el__rp_json_obj(j);
    kv_uint(j, "offset", rp->cuts[i].offset);
    kv_uint(j, "session", rp->cuts[i].session);
    el__rp_json_key(j, "inside");
    el__rp_json_bool(j, rp->cuts[i].inside);
    kv_str(j, "msg", rp->cuts[i].msg);
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
  kv_uint(j, "cuts_total", rp->cuts_total);
}

static void out_session(out_t *o) {
  const rp_session_t *s = &o->rp->session;
  rp_json_t *j = &o->j;
  el__rp_json_key(j, "session");
  el__rp_json_obj(j);
  kv_str(j, "rts_version", s->rts_version);
  kv_str(j, "ghc_version", s->ghc_version);
  kv_str(j, "args", s->args);
  kv_int_known(j, "pid", s->pid);
  kv_str(j, "clock", s->clock);
  kv_str(j, "clock_from", s->clock_from);
  kv_str(j, "caps", s->caps);
  kv_num(j, "start_unix_ms",
         s->start_unix_ns ? (double)(s->start_unix_ns / 1000000) : NAN);
  el__rp_json_end_obj(j);
}

/* {====== heap ======} */

static const struct {
  const char *key, *label, *unit;
} GAUGES[RP_G_N] = {
    {"HeapSize", "heap size", "By"},
    {"HeapLive", "live data", "By"},
    {"BlocksSize", "blocks", "By"},
    {"MemCurrent", "megablocks allocated", "{mblock}"},
    {"MemNeeded", "megablocks needed", "{mblock}"},
    {"MemReturned", "megablocks returned", "{mblock}"},
    {"HeapAllocated", "allocation", "By/s"},
};

/* Buckets of the heap gauges that hold a point of any gauge. */
static bool gauge_bucket_used(const rp_cols_t *c, size_t i) {
  for (size_t a = 0; a < c->narr; a++)
    if (((rp_gauge_t *)el__rp_cols_el(c, a, i))->n) return true;
  return false;
}

static void out_gauge_values(out_t *o, size_t g, int what) {
  const rp_cols_t *c = &o->rp->heap.g;
  double w = (double)el__rp_cols_width(c) / 1e9;
  el__rp_json_arr(&o->j);
  for (size_t i = 0; i < c->n; i++) {
    if (!gauge_bucket_used(c, i)) continue;
    const rp_gauge_t *b = el__rp_cols_el(c, g, i);
    if (!b->n)
      el__rp_json_null(&o->j);
    else if (what == 0)
      el__rp_json_num(&o->j, b->max);
    else if (what == 1)
      el__rp_json_num(&o->j, b->min);
    else
      el__rp_json_num(&o->j, round(b->sum / w)); /* rate per second */
  }
  el__rp_json_end_arr(&o->j);
}

static void out_heap(out_t *o) {
  rp_heap_t *h = &o->rp->heap;
  rp_json_t *j = &o->j;
  const rp_cols_t *c = &h->g;
  el__rp_json_key(j, "heap");
  el__rp_json_obj(j);
  kv_num(j, "width_s", c->narr ? (double)el__rp_cols_width(c) / 1e9 : 0);
  el__rp_json_key(j, "t");
  el__rp_json_arr(j);
  for (size_t i = 0; c->narr && i < c->n; i++)
    if (gauge_bucket_used(c, i)) el__rp_json_secs(j, centre(o, c, i));
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "series");
  el__rp_json_arr(j);
  for (size_t g = 0; g < RP_G_N && c->narr; g++) {
    const rp_gauge_stat_t *st = &h->st[g];
    if (!st->points) continue;
    el__rp_json_obj(j);
    kv_str(j, "key", GAUGES[g].key);
    kv_str(j, "label", GAUGES[g].label);
    kv_str(j, "unit", GAUGES[g].unit);
    kv_uint(j, "points", st->points);
    if (g == RP_G_ALLOC) {
      kv_num(j, "total", h->alloc_total);
      el__rp_json_key(j, "rate");
      out_gauge_values(o, g, 2);
    } else {
      kv_num(j, "peak", st->peak);
      el__rp_json_key(j, "peak_t");
      el__rp_json_secs(j, rel(o, st->peak_t));
      el__rp_json_key(j, "max");
      out_gauge_values(o, g, 0);
      el__rp_json_key(j, "min");
      out_gauge_values(o, g, 1);
    }
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
}

/* {====== heap profile ======} */

/* qsort_r: band ids by bytes summed over censuses, largest first. */
static int cmp_band_sum(const void *a, const void *b, void *ud) {
  const rp_heap_t *h = ud;
  const rp_band_t *x = &h->bands[*(const uint32_t *)a];
  const rp_band_t *y = &h->bands[*(const uint32_t *)b];
  if (x->sum != y->sum) return x->sum < y->sum ? 1 : -1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static double entry_bytes(const rp_census_t *c, uint32_t band) {
  size_t lo = 0, hi = c->nent;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (c->ent[mid].band < band)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->nent && c->ent[lo].band == band ? c->ent[lo].bytes : 0;
}

static void out_band_values(out_t *o, uint32_t band) {
  const rp_cols_t *c = &o->rp->heap.c;
  el__rp_json_arr(&o->j);
  for (size_t i = 0; c->narr && i < c->n; i++) {
    const rp_census_t *b = el__rp_cols_el(c, 0, i);
    if (b->ncensus) el__rp_json_num(&o->j, entry_bytes(b, band));
  }
  el__rp_json_end_arr(&o->j);
}

static void out_census_columns(out_t *o, const uint32_t *top, size_t ntop) {
  const rp_cols_t *c = &o->rp->heap.c;
  rp_json_t *j = &o->j;
  static const char *keys[] = {"t", "ncensus", "total", "other", "min_total"};
  for (int k = 0; k < 5; k++) {
    el__rp_json_key(j, keys[k]);
    el__rp_json_arr(j);
    for (size_t i = 0; c->narr && i < c->n; i++) {
      const rp_census_t *b = el__rp_cols_el(c, 0, i);
      if (!b->ncensus) continue;
      if (k == 0) {
        el__rp_json_secs(j, rel(o, b->t));
      } else if (k == 1) {
        el__rp_json_uint(j, b->ncensus);
      } else if (k == 2) {
        el__rp_json_num(j, b->total);
      } else if (k == 4) {
        el__rp_json_num(j, b->min_total);
      } else {
        double other = b->total;
        for (size_t x = 0; x < ntop; x++) other -= entry_bytes(b, top[x]);
        el__rp_json_num(j, other < 0 ? 0 : other);
      }
    }
    el__rp_json_end_arr(j);
  }
}

static void out_band_row(out_t *o, uint32_t id) {
  const rp_heap_t *h = &o->rp->heap;
  const rp_band_t *b = &h->bands[id];
  rp_json_t *j = &o->j;
  el__rp_json_arr(j);
  el__rp_json_strn(j, h->names.s[id], h->names.len[id]);
  el__rp_json_num(j, b->peak);
  el__rp_json_num(j, h->censuses ? b->sum / (double)h->censuses : 0);
  el__rp_json_uint(j, b->n);
  el__rp_json_str(j, b->detail);
  el__rp_json_secs(j, rel(o, b->peak_t));
  el__rp_json_end_arr(j);
}

static void out_heapprof(out_t *o) {
  rp_heap_t *h = &o->rp->heap;
  rp_json_t *j = &o->j;
  size_t nb = h->names.n;
  uint32_t *order = nb ? el_malloc(nb * sizeof *order) : NULL;
  if (nb && !order) nb = 0;
  for (size_t i = 0; i < nb; i++) order[i] = (uint32_t)i;
  if (nb) qsort_r(order, nb, sizeof *order, cmp_band_sum, h);
  size_t ntop = nb < o->rp->o.top_bands ? nb : o->rp->o.top_bands;
  el__rp_json_key(j, "heapprof");
  el__rp_json_obj(j);
  kv_str(j, "breakdown", h->breakdown[0] ? h->breakdown : NULL);
  kv_uint(j, "interval_ns", h->interval_ns);
  el__rp_json_key(j, "begun");
  el__rp_json_bool(j, h->begun);
  kv_uint(j, "censuses_begun", h->censuses_begun);
  kv_uint(j, "censuses", h->censuses);
  kv_uint(j, "samples", h->samples);
  kv_uint(j, "bands_total", h->names.n);
  kv_uint(j, "dropped_samples", h->dropped_bands);
  out_census_columns(o, order, ntop);
  el__rp_json_key(j, "top");
  el__rp_json_arr(j);
  for (size_t i = 0; i < ntop; i++) {
    el__rp_json_obj(j);
    el__rp_json_key(j, "band");
    out_band_row(o, order[i]);
    el__rp_json_key(j, "v");
    out_band_values(o, order[i]);
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "bands");
  el__rp_json_arr(j);
  for (size_t i = 0; i < nb && i < BANDS_LISTED; i++) out_band_row(o, order[i]);
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
  el_free(order);
}

/* {====== logs, markers ======} */

/* One row per column holding a marker: [t, text of the first, count]. */
static void out_markers(out_t *o) {
  rp_json_t *j = &o->j;
  const rp_cols_t *c = &o->rp->markers;
  el__rp_json_key(j, "markers");
  el__rp_json_obj(j);
  kv_uint(j, "total", o->rp->markers_total);
  el__rp_json_key(j, "rows");
  el__rp_json_arr(j);
  for (size_t i = 0; c->narr && i < c->n; i++) {
    const rp_mark_t *m = el__rp_cols_el(c, 0, i);
    if (!m->n) continue;
    el__rp_json_arr(j);
    el__rp_json_secs(j, rel(o, m->t));
    el__rp_json_str(j, m->text);
    el__rp_json_uint(j, m->n);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
}

static void out_logs(out_t *o, const char *key, const rp_logs_t *l, bool full) {
  rp_json_t *j = &o->j;
  el__rp_json_key(j, key);
  el__rp_json_obj(j);
  kv_uint(j, "total", l->total);
  el__rp_json_key(j, "rows");
  el__rp_json_arr(j);
  for (size_t i = 0; i < el__rp_logs_count(l); i++) {
    const rp_log_t *r = el__rp_logs_at(l, i);
    el__rp_json_arr(j);
    el__rp_json_secs(j, rel(o, r->t));
    if (full) {
      el__rp_json_str(j, r->kind ? "marker" : "message");
      if (r->cap >= 0)
        el__rp_json_int(j, r->cap);
      else
        el__rp_json_null(j);
    }
    el__rp_json_str(j, r->body);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
}

/* {====== time ======} */

static int permille(uint64_t part, uint64_t whole) {
  if (!whole) return 0;
  uint64_t p = (part * 1000 + whole / 2) / whole;
  return p > 1000 ? 1000 : (int)p;
}

static void out_cap(out_t *o, size_t a) {
  const rp_cols_t *c = &o->rp->time.c;
  rp_json_t *j = &o->j;
  uint64_t w = el__rp_cols_width(c);
  el__rp_json_obj(j);
  el__rp_json_key(j, "cap");
  el__rp_json_int(j, o->rp->time.cap_of_arr[a]);
  static const char *keys[] = {"mut", "gc", "thr", "thr_share"};
  for (int k = 0; k < 4; k++) {
    el__rp_json_key(j, keys[k]);
    el__rp_json_arr(j);
    for (size_t i = 0; i < c->n; i++) {
      const rp_tl_t *b = el__rp_cols_el(c, a, i);
      size_t best = 0;
      for (size_t x = 1; x < RP_TL_THREADS; x++)
        if (b->thr_ns[x] > b->thr_ns[best]) best = x;
      if (k == 0)
        el__rp_json_int(j, permille(b->mut_ns, w));
      else if (k == 1)
        el__rp_json_int(j, permille(b->gc_ns, w));
      else if (k == 2)
        el__rp_json_int(j, b->thr[best] ? (int64_t)b->thr[best] - 1 : -1);
      else
        el__rp_json_int(j, permille(b->thr_ns[best], w));
    }
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_obj(j);
}

static void out_timeline(out_t *o) {
  const rp_time_t *tm = &o->rp->time;
  const rp_cols_t *c = &tm->c;
  rp_json_t *j = &o->j;
  el__rp_json_key(j, "timeline");
  el__rp_json_obj(j);
  kv_num(j, "width_s", (double)el__rp_cols_width(c) / 1e9);
  el__rp_json_key(j, "t0");
  el__rp_json_secs(j, c->n ? rel(o, el__rp_cols_start(c, 0)) : 0);
  kv_uint(j, "n", c->n);
  kv_uint(j, "mutator_spans", tm->mut_spans);
  kv_uint(j, "gc_spans", tm->gc_spans);
  kv_uint(j, "mutator_ns", tm->mut_ns);
  kv_uint(j, "gc_ns", tm->gc_ns);
  el__rp_json_key(j, "caps");
  el__rp_json_arr(j);
  /* Capabilities in numeric order. */
  for (size_t cap = 0; cap < RP_MAX_CAPS; cap++)
    if (tm->arr_of_cap[cap] >= 0) out_cap(o, (size_t)tm->arr_of_cap[cap]);
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
}

static void out_gc(out_t *o) {
  const rp_time_t *tm = &o->rp->time;
  rp_json_t *j = &o->j;
  el__rp_json_key(j, "gc");
  el__rp_json_obj(j);
  kv_uint(j, "collections", tm->collections);
  kv_uint(j, "spans", tm->gc_spans);
  kv_uint(j, "pause_total_ns", tm->pause_total_ns);
  kv_uint(j, "pause_max_ns", tm->pause_max_ns);
  el__rp_json_key(j, "hist");
  el__rp_json_arr(j);
  for (unsigned k = 0; k < 64; k++) {
    if (!tm->hist[k]) continue;
    el__rp_json_arr(j);
    el__rp_json_uint(j, k ? (uint64_t)1 << k : 0);
    el__rp_json_uint(j, k < 63 ? (uint64_t)1 << (k + 1) : UINT64_MAX);
    el__rp_json_uint(j, tm->hist[k]);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "longest");
  el__rp_json_arr(j);
  for (size_t i = 0; i < tm->nlongest; i++) {
    el__rp_json_arr(j);
    el__rp_json_secs(j, rel(o, tm->longest[i].start));
    el__rp_json_uint(j, tm->longest[i].end - tm->longest[i].start);
    el__rp_json_uint(j, tm->longest[i].ncaps);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  const rp_cols_t *c = &tm->gcc;
  static const char *keys[] = {"t", "max_ns", "count"};
  for (int k = 0; k < 3; k++) {
    el__rp_json_key(j, keys[k]);
    el__rp_json_arr(j);
    for (size_t i = 0; c->narr && i < c->n; i++) {
      const rp_gauge_t *b = el__rp_cols_el(c, 0, i);
      if (!b->n) continue;
      if (k == 0)
        el__rp_json_secs(j, centre(o, c, i));
      else if (k == 1)
        el__rp_json_num(j, b->max);
      else
        el__rp_json_uint(j, b->n);
    }
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_obj(j);
}

/* A thread's time t (ns since its session's RTS start, -1 none) on the
 * page's axis; in its session's own seconds when that session's start is
 * unknown. */
static void thread_secs(out_t *o, const rp_thread_t *th, int64_t t) {
  if (t < 0)
    el__rp_json_null(&o->j);
  else if (th->start_unix_ns)
    el__rp_json_secs(&o->j, rel(o, th->start_unix_ns + (uint64_t)t));
  else
    el__rp_json_secs(&o->j, (double)t / 1e9);
}

/* Rows [id, label, created, finished, running_ns, blocked_ns, runs, state,
 * status, finished?, session]: threads of every session, times on the
 * page's axis. */
static void out_threads(out_t *o) {
  const el_rp_t *rp = o->rp;
  rp_json_t *j = &o->j;
  el__rp_json_key(j, "threads");
  el__rp_json_obj(j);
  kv_uint(j, "total", rp->threads_total);
  el__rp_json_key(j, "rows");
  el__rp_json_arr(j);
  for (size_t i = 0; i < rp->nthreads; i++) {
    const rp_thread_t *t = &rp->threads[i];
    el__rp_json_arr(j);
    el__rp_json_uint(j, t->id);
    el__rp_json_str(j, t->label);
    thread_secs(o, t, t->created_t >= 0 ? t->created_t : t->first_t);
    thread_secs(o, t, t->finished_t >= 0 ? t->finished_t : t->last_t);
    el__rp_json_uint(j, t->running_ns);
    el__rp_json_uint(j, t->blocked_ns);
    el__rp_json_uint(j, t->runs);
    el__rp_json_str(j, t->state);
    el__rp_json_str(j, t->status);
    el__rp_json_bool(j, t->finished_t >= 0);
    el__rp_json_uint(j, t->session);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
}

/* qsort: sessions by RTS start, then number. */
static int cmp_span(const void *a, const void *b) {
  const rp_span_t *x = a, *y = b;
  if (x->start_unix_ns != y->start_unix_ns)
    return x->start_unix_ns < y->start_unix_ns ? -1 : 1;
  return x->number < y->number ? -1 : x->number > y->number;
}

/* `spans`: per session in time order {number, start, end (seconds on
 * the page's axis; end null while unknown), args, pid, breakdown,
 * estimated}; sessions whose start is unknown are left out. The page
 * breaks its lines between sessions and lists them. */
static void out_spans(out_t *o) {
  el_rp_t *rp = o->rp;
  rp_json_t *j = &o->j;
  qsort(rp->spans, rp->nspans, sizeof rp->spans[0], cmp_span);
  el__rp_json_key(j, "spans");
  el__rp_json_arr(j);
  for (size_t i = 0; i < rp->nspans; i++) {
    const rp_span_t *s = &rp->spans[i];
    if (!s->start_unix_ns) continue;
    el__rp_json_obj(j);
    kv_uint(j, "number", s->number);
    el__rp_json_key(j, "start");
    el__rp_json_secs(j, rel(o, s->start_unix_ns));
    el__rp_json_key(j, "end");
    if (s->end_unix_ns)
      el__rp_json_secs(j, rel(o, s->end_unix_ns));
    else
      el__rp_json_null(j);
    kv_str(j, "args", s->args);
    kv_int_known(j, "pid", s->pid);
    kv_str(j, "breakdown", s->breakdown[0] ? s->breakdown : NULL);
    el__rp_json_key(j, "estimated");
    el__rp_json_bool(j, s->estimated);
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
}

/* {====== profiles ======} */

/* qsort_r: symbol ids by total, then self, largest first. */
static int cmp_sym_total(const void *a, const void *b, void *ud) {
  const rp_prof_t *p = ud;
  const rp_sym_t *x = &p->syms[*(const uint32_t *)a];
  const rp_sym_t *y = &p->syms[*(const uint32_t *)b];
  if (x->total != y->total) return x->total < y->total ? 1 : -1;
  if (x->self != y->self) return x->self < y->self ? 1 : -1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The function part of a symbol key ("func\x1f" "loc"). */
static void out_sym_name(rp_json_t *j, const rp_prof_t *p, uint32_t s) {
  const char *k = p->names.s[s];
  const char *sep = memchr(k, '\x1f', p->names.len[s]);
  el__rp_json_strn(j, k, sep ? (size_t)(sep - k) : p->names.len[s]);
}

static void out_profile(out_t *o, const rp_prof_t *p) {
  rp_json_t *j = &o->j;
  const el_rp_t *rp = o->rp;
  size_t nsym = p->names.n;
  int32_t *map = el_malloc((nsym + 1) * sizeof *map);
  int32_t *nmap = el_malloc(p->nnodes * sizeof *nmap);
  uint32_t *order = el_malloc((nsym + 1) * sizeof *order);
  if (!map || !nmap || !order) goto done;
  for (size_t i = 0; i < nsym; i++) map[i] = -1, order[i] = (uint32_t)i;
  qsort_r(order, nsym, sizeof *order, cmp_sym_total, (void *)p);
  /* Nodes: those with at least 1/20000 of the samples under a kept
   * parent, at most NODES_LISTED (parents come before children). */
  uint64_t min = p->nodes[0].total / 20000;
  size_t kept = 0;
  int32_t nnames = 0;
  for (size_t i = 0; i < p->nnodes; i++) {
    const rp_node_t *n = &p->nodes[i];
    bool keep = i == 0 || (nmap[n->parent] >= 0 && n->total > min && n->total &&
                           kept < NODES_LISTED);
    nmap[i] = keep ? (int32_t)kept++ : -1;
    if (keep && i && map[n->sym] < 0) map[n->sym] = nnames++;
  }
  for (size_t i = 0; i < nsym && i < SYMS_LISTED; i++)
    if (map[order[i]] < 0) map[order[i]] = nnames++;
  el__rp_json_obj(j);
  kv_str(j, "kind", p->kind);
  kv_str(j, "source",
         rp->names[9] && !strcmp(p->kind, rp->names[9])     ? "cost-centre"
         : rp->names[10] && !strcmp(p->kind, rp->names[10]) ? "call-stack"
                                                            : "other");
  kv_str(j, "type", p->sample_type);
  kv_str(j, "unit", p->sample_unit);
  kv_uint(j, "samples", p->samples);
  kv_uint(j, "nsamples", p->nsamples);
  kv_uint(j, "truncated", p->truncated);
  kv_uint(j, "nodes_total", p->nnodes);
  kv_uint(j, "symbols_total", nsym);
  el__rp_json_key(j, "symbols");
  el__rp_json_arr(j);
  for (size_t i = 0; i < nsym && i < SYMS_LISTED; i++) {
    const rp_sym_t *s = &p->syms[order[i]];
    el__rp_json_arr(j);
    el__rp_json_int(j, map[order[i]]);
    el__rp_json_uint(j, s->self);
    el__rp_json_uint(j, s->total);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  /* names[k], locs[k]: the symbol numbered k by map */
  for (size_t i = 0; i < nsym; i++)
    if (map[i] >= 0) order[map[i]] = (uint32_t)i; /* order: done with it */
  el__rp_json_key(j, "names");
  el__rp_json_arr(j);
  for (int32_t k = 0; k < nnames; k++) out_sym_name(j, p, order[k]);
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "locs");
  el__rp_json_arr(j);
  for (int32_t k = 0; k < nnames; k++)
    el__rp_json_str(j, p->syms[order[k]].loc);
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "nodes");
  el__rp_json_arr(j);
  for (size_t i = 0; i < p->nnodes; i++) {
    if (nmap[i] < 0) continue;
    const rp_node_t *n = &p->nodes[i];
    el__rp_json_arr(j);
    el__rp_json_int(j, i ? nmap[n->parent] : -1);
    el__rp_json_int(j, i ? map[n->sym] : -1);
    el__rp_json_uint(j, n->self);
    el__rp_json_uint(j, n->total);
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
  el__rp_json_end_obj(j);
done:
  el_free(map);
  el_free(nmap);
  el_free(order);
}

static void out_profiles(out_t *o) {
  el__rp_json_key(&o->j, "profiles");
  el__rp_json_arr(&o->j);
  for (size_t i = 0; i < o->rp->nprofs; i++) out_profile(o, o->rp->profs[i]);
  el__rp_json_end_arr(&o->j);
}

/* {====== sections ======} */

static void out_series(out_t *o, const rp_section_t *s) {
  rp_json_t *j = &o->j;
  const rp_cols_t *c = &s->cols;
  kv_uint(j, "points", s->points);
  kv_uint(j, "dropped", s->dropped);
  el__rp_json_key(j, "t");
  el__rp_json_arr(j);
  for (size_t i = 0; c->narr && i < c->n; i++)
    if (gauge_bucket_used(c, i)) el__rp_json_secs(j, centre(o, c, i));
  el__rp_json_end_arr(j);
  el__rp_json_key(j, "lines");
  el__rp_json_arr(j);
  static const char *keys[] = {"min", "max", "mean", "last"};
  for (size_t a = 0; a < s->nlines; a++) {
    el__rp_json_obj(j);
    kv_str(j, "name", s->lines[a]);
    for (int k = 0; k < 4; k++) {
      el__rp_json_key(j, keys[k]);
      el__rp_json_arr(j);
      for (size_t i = 0; i < c->n; i++) {
        if (!gauge_bucket_used(c, i)) continue;
        const rp_gauge_t *b = el__rp_cols_el(c, a, i);
        if (!b->n)
          el__rp_json_null(j);
        else
          el__rp_json_num(j, k == 0   ? b->min
                             : k == 1 ? b->max
                             : k == 2 ? b->sum / b->n
                                      : b->last);
      }
      el__rp_json_end_arr(j);
    }
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
}

static void out_table(out_t *o, const rp_section_t *s) {
  rp_json_t *j = &o->j;
  el__rp_json_key(j, "columns");
  el__rp_json_arr(j);
  for (size_t c = 0; c < s->ncolumns; c++) el__rp_json_str(j, s->columns[c]);
  el__rp_json_end_arr(j);
  kv_uint(j, "omitted", s->omitted);
  el__rp_json_key(j, "rows");
  el__rp_json_arr(j);
  for (size_t r = 0; r < s->nrows; r++) {
    el__rp_json_arr(j);
    for (size_t c = 0; c < s->ncolumns; c++) {
      const rp_cell_t *x = &s->cells[r * s->ncolumns + c];
      if (x->is_num)
        el__rp_json_num(j, x->num);
      else
        el__rp_json_str(j, x->str);
    }
    el__rp_json_end_arr(j);
  }
  el__rp_json_end_arr(j);
}

static void out_sections(out_t *o) {
  rp_json_t *j = &o->j;
  el__rp_json_key(j, "sections");
  el__rp_json_arr(j);
  for (size_t i = 0; i < o->rp->nsections; i++) {
    const rp_section_t *s = o->rp->sections[i];
    el__rp_json_obj(j);
    kv_str(j, "kind", s->kind ? "table" : "series");
    kv_str(j, "title", s->title);
    kv_str(j, "unit", s->unit);
    kv_str(j, "description", s->description);
    if (s->kind)
      out_table(o, s);
    else
      out_series(o, s);
    el__rp_json_end_obj(j);
  }
  el__rp_json_end_arr(j);
}

int el_rp_write_json(el_rp_t *rp, FILE *f) {
  el_rp_settle(rp);
  el__rp_heap_finish(&rp->heap);
  el__rp_time_finish(&rp->time);
  out_t o = {.rp = rp};
  o.origin = rp->origin ? rp->origin : rp->t_min;
  if (rp->t_min && rp->t_min < o.origin) o.origin = rp->t_min;
  el__rp_json_init(&o.j, f);
  el__rp_json_obj(&o.j);
  out_meta(&o);
  out_session(&o);
  out_spans(&o);
  out_heap(&o);
  out_heapprof(&o);
  out_markers(&o);
  out_timeline(&o);
  out_gc(&o);
  out_threads(&o);
  out_profiles(&o);
  out_logs(&o, "logs", &rp->logs, true);
  out_sections(&o);
  el__rp_json_end_obj(&o.j);
  return ferror(f) ? -(errno ? errno : EIO) : 0;
}
