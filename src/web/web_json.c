/* web_json.c: GET /api/data, the web view's JSON (docs/web.md
 * "/api/data"). Per metric, the WEB_JSON_SERIES most active series are
 * sent as they are and the others summed into one "other" series per
 * group (the same attributes but user, thread and heapProfLabel), so an
 * answer stays bounded whatever the program does. Thread: HTTP threads,
 * under el_web_t.mu. */
#include <stdlib.h>
#include <string.h>

#include "web_internal.h"

/* Points per series in one answer: the newest ones, at most
 * WEB_JSON_POINTS over all series (the answer is built under the mutex
 * the loop thread's exporter needs). */
#define WEB_JSON_POINTS 400000

static const web_point_t *pt_at(const web_series_t *s, size_t j) {
  return &s->pts[(s->head + j) % s->cap];
}

/* The index of the first point of s an answer sends (per at most). */
static size_t first_sent(const web_series_t *s, size_t per) {
  return s->npts > per ? s->npts - per : 0;
}

/* How much a series moved in its kept history: the increase of a sum,
 * the magnitude of a gauge's last value. */
static double activity(const web_family_t *f, const web_series_t *s) {
  if (!s->npts) return 0;
  double last = pt_at(s, s->npts - 1)->v;
  if (f->sum) return last - pt_at(s, 0)->v;
  return last < 0 ? -last : last;
}

typedef struct ranked_s {
  double act;
  size_t i;          /* index in f->s */
  const char *group; /* its group_json */
  uint64_t session;  /* its session: groups do not mix sessions */
  bool stale;
} ranked_t;

/* Most active first (then in store order). */
static int cmp_active(const void *a, const void *b) {
  const ranked_t *x = a, *y = b;
  if (x->act != y->act) return x->act > y->act ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* By group and session, then in store order. */
static int cmp_group(const void *a, const void *b) {
  const ranked_t *x = a, *y = b;
  int c = strcmp(x->group ? x->group : "", y->group ? y->group : "");
  if (!c) c = (x->session > y->session) - (x->session < y->session);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

static bool same_group(const ranked_t *x, const ranked_t *y) {
  return x->session == y->session &&
         !strcmp(x->group ? x->group : "", y->group ? y->group : "");
}

/* [t_ms, v], or [t_ms, v, start_ms] when start_ms > 0. */
static void put_point(el_buf_t *b, bool first, const web_point_t *p,
                      double start_ms) {
  el_buf_puts(b, first ? "[" : ",[");
  web_put_num(b, p->t_ms);
  el_buf_puts(b, ",");
  web_put_num(b, p->v);
  if (start_ms > 0) {
    el_buf_puts(b, ",");
    web_put_num(b, start_ms);
  }
  el_buf_puts(b, "]");
}

/* A series' points; the very first one it stored, if sent, with the
 * start of its count (web_series_t.start_ms). */
static void json_series(el_buf_t *b, const web_series_t *s, size_t per) {
  el_buf_puts(b, "{\"attrs\":");
  el_buf_puts(b, s->attrs_json ? s->attrs_json : "{}");
  el_buf_printf(b, ",\"session\":%llu,\"stale\":%s",
                (unsigned long long)s->session, s->stale ? "true" : "false");
  if (s->thinned) el_buf_printf(b, ",\"thinned\":%u", (unsigned)s->thinned);
  el_buf_puts(b, ",\"points\":[");
  size_t j0 = first_sent(s, per);
  bool first_kept = j0 == 0 && s->pushed == s->npts;
  for (size_t j = j0; j < s->npts; j++)
    put_point(b, j == j0, pt_at(s, j), j == 0 && first_kept ? s->start_ms : 0);
  el_buf_puts(b, "]}");
}

typedef struct tagged_s {
  double t_ms;
  size_t k; /* which series of the group */
} tagged_t;

static int cmp_tagged(const void *a, const void *b) {
  const tagged_t *x = a, *y = b;
  if (x->t_ms != y->t_ms) return x->t_ms < y->t_ms ? -1 : 1;
  return (x->k > y->k) - (x->k < y->k);
}

/* The points of the sum of the group g[0..n) at each of its point times,
 * each series carrying its last value forward (as the page sums series).
 * Returns false when out of memory. */
static bool group_points(el_buf_t *b, const web_family_t *f, const ranked_t *g,
                         size_t n, size_t per) {
  size_t m = 0;
  for (size_t k = 0; k < n; k++)
    m += f->s[g[k].i]->npts - first_sent(f->s[g[k].i], per);
  tagged_t *ev = el_malloc((m ? m : 1) * sizeof *ev);
  size_t *next = el_calloc(n, sizeof *next);
  double *last = el_calloc(n, sizeof *last);
  if (!ev || !next || !last) {
    el_free(ev), el_free(next), el_free(last);
    return false;
  }
  m = 0;
  for (size_t k = 0; k < n; k++) {
    const web_series_t *s = f->s[g[k].i];
    for (size_t j = first_sent(s, per); j < s->npts; j++)
      ev[m++] = (tagged_t){pt_at(s, j)->t_ms, k};
  }
  qsort(ev, m, sizeof *ev, cmp_tagged);
  double sum = 0;
  bool first = true;
  for (size_t e = 0; e < m; e++) {
    const web_series_t *s = f->s[g[ev[e].k].i];
    double v = pt_at(s, first_sent(s, per) + next[ev[e].k]++)->v;
    sum += v - last[ev[e].k];
    last[ev[e].k] = v;
    if (e + 1 < m && ev[e + 1].t_ms == ev[e].t_ms) continue;
    put_point(b, first, &(web_point_t){ev[e].t_ms, sum}, 0);
    first = false;
  }
  el_free(ev), el_free(next), el_free(last);
  return true;
}

/* One "other" series: the group's attributes plus "other": n. */
static void json_other(el_buf_t *b, const web_family_t *f, const ranked_t *g,
                       size_t n, size_t per) {
  const char *grp = g[0].group ? g[0].group : "{}";
  size_t gl = strlen(grp);
  el_buf_puts(b, "{\"attrs\":");
  if (gl > 2)
    el_buf_put(b, grp, gl - 1), el_buf_puts(b, ",");
  else
    el_buf_puts(b, "{");
  bool stale = true;
  for (size_t k = 0; k < n; k++) stale = stale && g[k].stale;
  el_buf_printf(b, "\"other\":%zu},\"session\":%llu,\"stale\":%s,\"points\":[",
                n, (unsigned long long)g[0].session, stale ? "true" : "false");
  if (!group_points(b, f, g, n, per)) b->oom = true; /* an error answer */
  el_buf_puts(b, "]}");
}

/* The series of f: the WEB_JSON_SERIES most active, then the others'
 * sums per group. */
static void json_family_series(el_buf_t *b, const web_family_t *f, size_t per) {
  ranked_t *rk = el_malloc((f->n ? f->n : 1) * sizeof *rk);
  if (!rk) {
    b->oom = true; /* the answer is an error (web_http.c) */
    return;
  }
  for (size_t i = 0; i < f->n; i++)
    rk[i] = (ranked_t){activity(f, f->s[i]), i, f->s[i]->group_json,
                       f->s[i]->session, f->s[i]->stale};
  size_t top = f->n;
  if (f->n > WEB_JSON_SERIES) {
    qsort(rk, f->n, sizeof *rk, cmp_active);
    top = WEB_JSON_SERIES;
    qsort(rk + top, f->n - top, sizeof *rk, cmp_group);
  }
  for (size_t k = 0; k < top; k++) {
    if (k) el_buf_puts(b, ",");
    json_series(b, f->s[rk[k].i], per);
  }
  /* the rest, at most WEB_JSON_POINTS points in all */
  size_t per_rest = f->n > top ? WEB_JSON_POINTS / (f->n - top) : per;
  if (per_rest > per) per_rest = per;
  if (per_rest < 10) per_rest = 10;
  for (size_t k = top, e; k < f->n; k = e) {
    for (e = k + 1; e < f->n && same_group(&rk[k], &rk[e]); e++) continue;
    el_buf_puts(b, top ? "," : "");
    json_other(b, f, rk + k, e - k, per_rest);
  }
  el_free(rk);
}

/* JSON for a -1/0/1 setting: null, false, true. */
static const char *tri(int v) { return v < 0 ? "null" : v ? "true" : "false"; }

/* "aggregate_ms": the aggregation window of f's processor (0: every
 * value), null when no processor of that name is known. */
static void json_aggregate(el_buf_t *b, const el_web_t *w,
                           const web_family_t *f) {
  for (size_t k = 0; k < w->opts.naggs; k++)
    if (w->opts.aggs[k].name && !strcmp(w->opts.aggs[k].name, f->name)) {
      el_buf_printf(b, ",\"aggregate_ms\":%llu",
                    (unsigned long long)w->opts.aggs[k].aggregate_ms);
      return;
    }
  el_buf_puts(b, ",\"aggregate_ms\":null");
}

static void json_family(el_buf_t *b, const el_web_t *w, const web_family_t *f,
                        size_t per) {
  el_buf_puts(b, "{\"name\":");
  web_put_json_cstr(b, f->name);
  el_buf_puts(b, ",\"prom\":");
  web_put_json_cstr(b, f->prom);
  el_buf_puts(b, ",\"unit\":");
  web_put_json_cstr(b, f->unit);
  el_buf_printf(b, ",\"kind\":\"%s\",\"monotonic\":%s,\"nseries\":%zu",
                f->sum ? "sum" : "gauge", f->monotonic ? "true" : "false",
                f->n);
  json_aggregate(b, w, f);
  el_buf_puts(b, ",\"series\":[");
  json_family_series(b, f, per);
  el_buf_puts(b, "]}");
}

void web_model_json(el_web_t *w, el_buf_t *b) {
  size_t nseries = 0;
  for (size_t k = 0; k < w->nfam; k++)
    nseries +=
        w->fam[k]->n < WEB_JSON_SERIES ? w->fam[k]->n : WEB_JSON_SERIES + 4;
  size_t per = nseries ? WEB_JSON_POINTS / nseries : WEB_POINTS_PER_SERIES;
  if (per < 10) per = 10;
  el_buf_puts(b, "{\"service\":");
  web_put_json_cstr(b, w->service ? w->service : "");
  el_buf_printf(b,
                ",\"control_port\":%d,\"ended\":%s,\"reconnecting\":%s,"
                "\"ghc_before_9_2\":%s,\"traces\":{\"capability_usage\":%s,"
                "\"thread_state\":%s},\"now_ms\":",
                w->control_port, w->ended ? "true" : "false",
                w->closed_why[0] ? "true" : "false",
                w->ghc_before_9_2 < 0 ? "null"
                : w->ghc_before_9_2   ? "true"
                                      : "false",
                tri(w->opts.cap_usage_on), tri(w->opts.thread_state_on));
  web_put_num(b, web_now_ms());
  el_buf_printf(b,
                ",\"stats\":{\"batches\":%llu,\"points\":%llu,"
                "\"dropped_series\":%llu,\"evicted_series\":%llu,"
                "\"evicted_stale_series\":%llu,\"merged_series\":%llu,"
                "\"rekeyed_series\":%llu,\"series_limit\":%d},"
                "\"metrics\":[",
                (unsigned long long)w->batches, (unsigned long long)w->points,
                (unsigned long long)w->dropped_series,
                (unsigned long long)w->evicted_series,
                (unsigned long long)w->evicted_stale_series,
                (unsigned long long)w->merged_series,
                (unsigned long long)w->rekeyed_series, WEB_SERIES_PER_METRIC);
  for (size_t k = 0; k < w->nfam; k++) {
    if (k) el_buf_puts(b, ",");
    json_family(b, w, w->fam[k], per);
  }
  el_buf_puts(b, "]");
  web_json_events(w, b);
  el_buf_puts(b, "}");
}
