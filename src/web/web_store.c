/* web_store.c: the series store of the Prometheus endpoint and the web
 * view: one family per OTLP metric, one series per Prometheus label set,
 * each with its latest value and (for the page) a ring of points. Series
 * keys follow the OpenTelemetry Collector's Prometheus exporter with the
 * demo's configuration (demo/config/otelcol.yaml:
 * resource_to_telemetry_conversion, transform/ghc); docs/web.md has the
 * rules. Bounded: WEB_FAMILIES_MAX families, WEB_SERIES_PER_METRIC series
 * per family (a full family forgets its least recently updated series),
 * WEB_POINTS_PER_SERIES points per series. Thread: the loop thread, under
 * el_web_t.mu. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/el_grow.h"
#include "../common/el_hash.h"
#include "telemetry/telemetry_batch.h"
#include "web_internal.h"

/* {====== series keys ======} */

/* The demo collector's transform/ghc: census era and id go from every
 * point, the capability from gauges. */
static bool attr_dropped(const char *key, bool gauge) {
  return !strcmp(key, "heapProfSampleEra") || !strcmp(key, "heapProfId") ||
         (gauge && !strcmp(key, "evCap"));
}

/* {====== label lists ======}
 *
 * A series key is rendered from two label lists: the resource's (its
 * attributes, job, instance, otel_scope_*), built once per resource
 * group, and the point's, kept with the series so that the key can be
 * rendered again when its session's resource is corrected (series_rekey).
 * A list is serialized: per label the value's length (uint32_t, host
 * order), the sanitized name NUL-terminated, then the value's bytes
 * (unescaped). Empty values are left out, as the collector leaves out
 * empty labels. */

static void lab_add(el_buf_t *l, const char *key, const char *v, size_t vlen) {
  if (!vlen) return;
  char name[128];
  el_web_prom_label(key, name, sizeof name);
  uint32_t n = vlen > UINT32_MAX ? UINT32_MAX : (uint32_t)vlen;
  el_buf_put(l, &n, sizeof n);
  el_buf_put(l, name, strlen(name) + 1);
  el_buf_put(l, v, n);
}

static void lab_add_attr(el_buf_t *l, const el_tm_attr_t *a, el_buf_t *tmp) {
  el_buf_reset(tmp);
  web_attr_value(a, tmp);
  if (tmp->oom)
    l->oom = true;
  else
    lab_add(l, a->key, tmp->p, tmp->len);
}

/* The resource's labels into l: its attributes, job =
 * service.namespace/service.name, instance = service.instance.id,
 * otel_scope_name/version. res may be NULL. */
static void res_labels(const el_tm_resource_t *res, const char *scope,
                       const char *scope_version, el_buf_t *l, el_buf_t *tmp) {
  el_buf_reset(l);
  bool estimated = false;
  const char *svc = NULL, *ns = NULL, *inst = NULL;
  size_t svcn = 0, nsn = 0, instn = 0;
  for (size_t k = 0; res && k < res->nattrs; k++) {
    const el_tm_attr_t *a = &res->attrs[k];
    /* Marks estimated times (docs/differences.md); as a label it would
     * split every series when the session's exact clock arrives. */
    if (!strcmp(a->key, "eventlog_live.clock")) {
      estimated = true;
      continue;
    }
    if (a->type == EL_TM_STR) {
      if (!strcmp(a->key, "service.name")) svc = a->v.s.p, svcn = a->v.s.len;
      if (!strcmp(a->key, "service.namespace")) ns = a->v.s.p, nsn = a->v.s.len;
      if (!strcmp(a->key, "service.instance.id"))
        inst = a->v.s.p, instn = a->v.s.len;
    }
    lab_add_attr(l, a, tmp);
  }
  if (svcn) {
    el_buf_reset(tmp);
    if (nsn) {
      el_buf_put(tmp, ns, nsn);
      el_buf_puts(tmp, "/");
    }
    el_buf_put(tmp, svc, svcn);
    if (tmp->oom) l->oom = true;
    lab_add(l, "job", tmp->p, tmp->oom ? 0 : tmp->len);
  }
  if (instn) lab_add(l, "instance", inst, instn);
  if (scope && *scope) lab_add(l, "otel_scope_name", scope, strlen(scope));
  if (scope_version && *scope_version)
    lab_add(l, "otel_scope_version", scope_version, strlen(scope_version));
  /* Not a label: the last byte tells whether the times were estimated
   * (session_labels compares it; lab_parse stops before it). */
  el_buf_put(l, estimated ? "e" : "x", 1);
}

/* The point's labels into l (after the demo collector's drops). */
static void point_labels(const el_tm_point_t *p, bool gauge, el_buf_t *l,
                         el_buf_t *tmp) {
  el_buf_reset(l);
  for (size_t k = 0; k < p->nattrs; k++)
    if (!attr_dropped(p->attrs[k].key, gauge))
      lab_add_attr(l, &p->attrs[k], tmp);
}

typedef struct label_s {
  const char *name;
  const char *val;
  size_t vlen;
  size_t idx; /* order of addition: resource, then point */
} label_t;

/* By name, then in attribute order (colliding names join in that order). */
static int label_cmp(const void *a, const void *b) {
  const label_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

#define MAX_LABELS 128

/* Append the labels of the serialized list p[0..len) to lab[n..); returns
 * the new count (at most MAX_LABELS). */
static size_t lab_parse(const char *p, size_t len, label_t *lab, size_t n) {
  size_t off = 0;
  while (p && n < MAX_LABELS && off + sizeof(uint32_t) + 1 < len) {
    uint32_t vl;
    memcpy(&vl, p + off, sizeof vl);
    off += sizeof vl;
    const char *name = p + off;
    const char *nul = memchr(name, 0, len - off);
    if (!nul) break;
    off += (size_t)(nul - name) + 1;
    if (vl > len - off) break;
    lab[n] = (label_t){name, p + off, vl, n};
    n++;
    off += vl;
  }
  return n;
}

/* Render the series key of the resource labels rl and the point labels
 * pl: {name="value",...} sorted by name, duplicates (after sanitizing)
 * joined with ';' as the collector does. */
static void render_key(const el_buf_t *rl, const char *pl, size_t npl,
                       el_buf_t *key) {
  label_t lab[MAX_LABELS];
  size_t n = lab_parse(rl->p, rl->len, lab, 0);
  n = lab_parse(pl, npl, lab, n);
  qsort(lab, n, sizeof lab[0], label_cmp);
  el_buf_reset(key);
  if (n == 0) {
    el_buf_put(key, "", 0);
    return;
  }
  el_buf_puts(key, "{");
  for (size_t k = 0; k < n; k++) {
    bool dup = k > 0 && !strcmp(lab[k].name, lab[k - 1].name);
    if (dup) {
      el_buf_truncate(key, key->len - 1); /* reopen the previous value */
      el_buf_puts(key, ";");
    } else {
      if (k) el_buf_puts(key, ",");
      el_buf_puts(key, lab[k].name);
      el_buf_puts(key, "=\"");
    }
    web_put_esc(key, lab[k].val, lab[k].vlen, WEB_ESC_PROM);
    el_buf_puts(key, "\"");
  }
  el_buf_puts(key, "}");
}

/* Attributes that name a thread or a heap profile label: /api/data sums
 * the less active series that differ only in them into "other" series
 * (docs/web.md "Limits"). */
static bool attr_identifies(const char *key) {
  return !strcmp(key, "user") || !strcmp(key, "thread") ||
         !strcmp(key, "heapProfLabel");
}

/* The point's own attributes (after the drops; without those that
 * identify a thread or label when group) as a JSON object. */
static char *attrs_json(const el_tm_point_t *p, bool gauge, bool group) {
  el_buf_t b = EL_BUF_INIT, v = EL_BUF_INIT;
  el_buf_puts(&b, "{");
  bool first = true;
  for (size_t k = 0; k < p->nattrs; k++) {
    const el_tm_attr_t *a = &p->attrs[k];
    if (attr_dropped(a->key, gauge) || (group && attr_identifies(a->key)))
      continue;
    if (!first) el_buf_puts(&b, ",");
    first = false;
    web_put_json_str(&b, a->key, strlen(a->key));
    el_buf_puts(&b, ":");
    el_buf_reset(&v);
    web_attr_value(a, &v);
    web_put_json_str(&b, v.oom || !v.p ? "" : v.p, v.oom ? 0 : v.len);
  }
  el_buf_puts(&b, "}");
  el_buf_free(&v);
  return el_buf_take(&b);
}

/* {====== families and series ======} */

static void series_free(web_series_t *s) {
  el_free(s->key);
  el_free(s->attrs_json);
  el_free(s->group_json);
  el_free(s->plab);
  el_free(s->pts);
  el_free(s);
}

static void family_free(web_family_t *f) {
  for (size_t i = 0; i < f->n; i++) series_free(f->s[i]);
  el_free(f->s);
  el_map_free(&f->idx);
  el_free(f->name), el_free(f->prom), el_free(f->help), el_free(f->unit);
  el_free(f);
}

static web_family_t *family_new(const el_tm_metric_desc_t *d) {
  bool sum = d->kind == EL_TM_SUM;
  web_family_t *f = el_calloc(1, sizeof *f);
  if (!f) return NULL;
  char prom[512];
  el_web_prom_name(d->name, d->unit, sum, d->monotonic, prom, sizeof prom);
  f->name = el_strdup(d->name);
  f->prom = el_strdup(prom);
  f->help = el_strdup(d->description ? d->description : "");
  f->unit = el_strdup(d->unit ? d->unit : "");
  f->sum = sum;
  f->monotonic = d->monotonic;
  f->delta = d->temporality == EL_TM_TEMP_DELTA;
  if (!f->name || !f->prom || !f->help || !f->unit) {
    family_free(f);
    return NULL;
  }
  return f;
}

static web_family_t *family_get(el_web_t *w, const el_tm_metric_desc_t *d) {
  bool sum = d->kind == EL_TM_SUM;
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    if (f->sum == sum && !strcmp(f->name, d->name) &&
        !strcmp(f->unit, d->unit ? d->unit : ""))
      return f;
  }
  if (w->nfam >= WEB_FAMILIES_MAX ||
      el_grow(&w->fam, &w->capfam, w->nfam + 1, sizeof *w->fam) < 0)
    return NULL;
  web_family_t *f = family_new(d);
  if (f) w->fam[w->nfam++] = f;
  return f;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* A full family forgets its least recently updated eighth (touched
 * values are unique: a series' last w->tick), counted in
 * w->evicted_series (and the stale ones among them in
 * w->evicted_stale_series), and re-indexes the rest (the index keeps its
 * memory: nothing allocated). Returns false when out of memory. */
static bool family_evict(el_web_t *w, web_family_t *f) {
  uint64_t *t = el_malloc(f->n * sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < f->n; i++) t[i] = f->s[i]->touched;
  qsort(t, f->n, sizeof *t, cmp_u64);
  uint64_t cut = t[f->n / 8]; /* forget those touched before cut */
  el_free(t);
  size_t j = 0;
  el_map_clear(&f->idx);
  for (size_t i = 0; i < f->n; i++) {
    if (f->s[i]->touched < cut) {
      w->evicted_series++;
      if (f->s[i]->stale) w->evicted_stale_series++;
      series_free(f->s[i]);
      continue;
    }
    f->s[j] = f->s[i];
    el_map_add(&f->idx, f->s[j]->hash, (uint32_t)j);
    j++;
  }
  f->n = j;
  return j < WEB_SERIES_PER_METRIC;
}

/* The series of f with key k[0..n) (hash h) from session sess. */
static web_series_t *series_find(web_family_t *f, const char *k, size_t n,
                                 uint64_t h, uint64_t sess) {
  size_t pos;
  for (uint32_t i = el_map_first(&f->idx, h, &pos); i != EL_MAP_NONE;
       i = el_map_next(&f->idx, h, &pos)) {
    const web_series_t *c = f->s[i];
    if (c->session == sess && strlen(c->key) == n && !memcmp(c->key, k, n))
      return f->s[i];
  }
  return NULL;
}

/* A new series s of key k takes over from the other sessions' series of
 * that key: older sessions' series become stale (left out of /metrics,
 * kept for the page until evicted), a newer session's makes s stale. A
 * new (fresh) delta sum's running value carries over (the collector keeps
 * adding). */
static void series_succeed(web_family_t *f, web_series_t *s, bool fresh) {
  size_t pos;
  web_series_t *prev = NULL;
  for (uint32_t i = el_map_first(&f->idx, s->hash, &pos); i != EL_MAP_NONE;
       i = el_map_next(&f->idx, s->hash, &pos)) {
    web_series_t *c = f->s[i];
    if (c == s || strcmp(c->key, s->key)) continue;
    if (c->session < s->session)
      c->stale = true;
    else
      s->stale = true;
    if (!prev || c->session > prev->session) prev = c;
  }
  if (fresh && prev && !s->stale && f->sum && f->delta && prev->has) {
    s->has = true;
    s->is_int = prev->is_int;
    s->ival = prev->ival;
    s->dval = prev->dval;
  }
}

static web_series_t *series_new(el_web_t *w, web_family_t *f,
                                const el_buf_t *key, const el_buf_t *pl,
                                const el_tm_point_t *p) {
  web_series_t *s = el_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->key = el_strndup(key->p ? key->p : "", key->len);
  s->plab = el_malloc(pl->len ? pl->len : 1);
  if (s->plab && pl->len) memcpy(s->plab, pl->p, pl->len);
  s->nplab = pl->len;
  if (w->view) {
    s->attrs_json = attrs_json(p, !f->sum, false);
    s->group_json = attrs_json(p, !f->sum, true);
  }
  if (!s->key || !s->plab || (w->view && (!s->attrs_json || !s->group_json))) {
    series_free(s);
    return NULL;
  }
  return s;
}

/* The series of key (point labels pl) from session sess; a new one when
 * none, NULL when out of memory or the family is full and cannot evict. */
static web_series_t *series_get(el_web_t *w, web_family_t *f,
                                const el_buf_t *key, const el_buf_t *pl,
                                uint64_t sess, const el_tm_point_t *p) {
  const char *k = key->p ? key->p : "";
  uint64_t h = el_hash_bytes(k, key->len, 0);
  web_series_t *s = series_find(f, k, key->len, h, sess);
  if (s) return s;
  if (f->n >= WEB_SERIES_PER_METRIC && !family_evict(w, f)) return NULL;
  if (el_grow(&f->s, &f->cap, f->n + 1, sizeof *f->s) < 0 ||
      el_map_reserve(&f->idx, WEB_SERIES_PER_METRIC + 1) < 0)
    return NULL;
  s = series_new(w, f, key, pl, p);
  if (!s) return NULL;
  s->hash = h;
  s->session = sess;
  el_map_add(&f->idx, h, (uint32_t)f->n); /* reserved above */
  f->s[f->n++] = s;
  series_succeed(f, s, true);
  return s;
}

/* After keys changed: index f again. A series whose new key another
 * series of its session has already is forgotten (counted in
 * merged_series); of two sessions' series with one key the older
 * becomes stale. */
static void family_reindex(el_web_t *w, web_family_t *f) {
  el_map_clear(&f->idx);
  size_t j = 0;
  for (size_t i = 0; i < f->n; i++) {
    web_series_t *s = f->s[i];
    if (series_find(f, s->key, strlen(s->key), s->hash, s->session)) {
      series_free(s);
      w->merged_series++;
      continue;
    }
    f->s[j] = s;
    el_map_add(&f->idx, s->hash, (uint32_t)j); /* the index keeps room */
    j++;
    series_succeed(f, s, false);
  }
  f->n = j;
}

/* Session sess's resource labels became rl (the pid and arguments of a
 * GHC 9.0 program arrive with its global buffer at exit, and its exact
 * clock with them): every series of that session gets the key it has
 * under rl, keeping its values and points, so that a label set has one
 * continuous series (docs/web.md "Sessions"), counted in
 * w->rekeyed_series. The out-of-order guard starts again: times before
 * were estimated when the clock came with the correction. */
static void series_rekey(el_web_t *w, uint64_t sess, const el_buf_t *rl,
                         el_buf_t *key) {
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    bool changed = false;
    for (size_t i = 0; i < f->n; i++) {
      web_series_t *s = f->s[i];
      if (s->session != sess) continue;
      s->t = 0;
      render_key(rl, s->plab, s->nplab, key);
      if (key->oom || (strlen(s->key) == key->len &&
                       !memcmp(s->key, key->p ? key->p : "", key->len)))
        continue;
      char *nk = el_strndup(key->p ? key->p : "", key->len);
      if (!nk) continue; /* keeps its old key */
      el_free(s->key);
      s->key = nk;
      s->hash = el_hash_bytes(nk, key->len, 0);
      s->stale = false;
      w->rekeyed_series++;
      changed = true;
    }
    if (changed) family_reindex(w, f);
  }
}

/* The resource labels rl of a group of session sess: the newest session's
 * labels are remembered; when they change within the session, its series
 * are re-keyed. Returns false when out of memory (rl not adopted). */
static bool session_labels(el_web_t *w, uint64_t sess, const el_buf_t *rl,
                           el_buf_t *key) {
  if (!sess || sess < w->key_session) return true;
  if (sess == w->key_session && rl->len == w->key_nrlab &&
      (!rl->len || !memcmp(rl->p, w->key_rlab, rl->len)))
    return true;
  char *copy = el_malloc(rl->len ? rl->len : 1);
  if (!copy) return false;
  if (rl->len) memcpy(copy, rl->p, rl->len);
  if (sess == w->key_session) series_rekey(w, sess, rl, key);
  el_free(w->key_rlab);
  w->key_rlab = copy;
  w->key_nrlab = rl->len;
  w->key_session = sess;
  return true;
}

static void ring_push(web_point_t *a, size_t cap, size_t *n, size_t *head,
                      web_point_t p) {
  if (*n < cap) {
    a[(*head + *n) % cap] = p;
    (*n)++;
  } else {
    a[*head] = p;
    *head = (*head + 1) % cap;
  }
}

/* {====== a gauge's history ======}
 *
 * A gauge series' points for the page (docs/web.md "Limits") cover the
 * whole run: its ring never drops its oldest points. Until it first fills
 * every point has a slot; then its points are merged into time buckets of
 * bucket_ms (from origin_ms), each keeping its largest point at that
 * point's own time (the earlier on a tie), and the width doubles each
 * time the ring fills again (thinned counts them), so the kept points
 * stay spread over the run's time, new and late ones alike, and the peaks
 * stay. The first point (slot 0: where the chart begins) and the newest
 * (tail_raw: the series' current value) keep slots of their own. A
 * gauge's ring is kept in order from slot 0 (head 0). */

#define GAUGE_PT(s, j) ((s)->pts[((s)->head + (j)) % (s)->cap])

/* The bucket of a point at t_ms (bucket_ms > 0). */
static double gauge_bucket(const web_series_t *s, double t_ms) {
  return floor((t_ms - s->origin_ms) / s->bucket_ms);
}

/* Whether point b, in the same bucket as a, replaces it: larger, or as
 * large and earlier. */
static bool gauge_wins(web_point_t b, web_point_t a) {
  return b.v > a.v || (b.v == a.v && b.t_ms < a.t_ms);
}

/* Merge the ring's bucketed points (all but the first and a raw newest)
 * at the current width into out; returns how many remain. */
static size_t gauge_merge(web_series_t *s, web_point_t *out, size_t n) {
  size_t m = 0;
  for (size_t j = 0; j < n; j++) {
    web_point_t p = GAUGE_PT(s, j);
    if (m > 1 && gauge_bucket(s, out[m - 1].t_ms) == gauge_bucket(s, p.t_ms)) {
      if (gauge_wins(p, out[m - 1])) out[m - 1] = p;
    } else {
      out[m++] = p;
    }
  }
  return m;
}

/* Make room in the full ring of gauge series s: the first time, buckets
 * of a quarter of the ring over the span of its points; then twice the
 * width, until at most three quarters of the ring is used. */
static void ring_thin(web_series_t *s) {
  web_point_t out[WEB_POINTS_PER_SERIES]; /* 32 KB */
  size_t n = s->npts - (s->tail_raw && s->npts ? 1 : 0), m = n;
  web_point_t tail = s->npts ? GAUGE_PT(s, s->npts - 1) : (web_point_t){0};
  do {
    if (s->bucket_ms > 0) {
      s->bucket_ms *= 2;
    } else {
      double span = n ? GAUGE_PT(s, n - 1).t_ms - GAUGE_PT(s, 0).t_ms : 0;
      s->origin_ms = n ? GAUGE_PT(s, 0).t_ms : 0;
      s->bucket_ms = span / (double)(s->cap / 4);
      if (!(s->bucket_ms >= 1e-3)) s->bucket_ms = 1e-3; /* 1 µs */
    }
    s->thinned++;
    m = gauge_merge(s, out, n);
  } while (m > s->cap / 4 * 3);
  if (n < s->npts) out[m++] = tail;
  memcpy(s->pts, out, m * sizeof *out);
  s->head = 0;
  s->npts = m;
}

/* Append point pt (not older than the newest) to gauge series s. */
static void gauge_push(web_series_t *s, web_point_t pt) {
  if (s->bucket_ms > 0 && s->tail_raw && s->npts) {
    /* the newest so far joins its bucket */
    web_point_t q = GAUGE_PT(s, s->npts - 1);
    s->npts--;
    web_point_t *last = s->npts > 1 ? &GAUGE_PT(s, s->npts - 1) : NULL;
    if (last && gauge_bucket(s, last->t_ms) == gauge_bucket(s, q.t_ms)) {
      if (gauge_wins(q, *last)) *last = q;
    } else {
      GAUGE_PT(s, s->npts) = q;
      s->npts++;
    }
  }
  if (s->npts == s->cap) ring_thin(s);
  GAUGE_PT(s, s->npts) = pt;
  s->npts++;
  s->tail_raw = true;
}

/* Put point pt of gauge series s (older than its newest point: another
 * capability's block came late) into the ring in time order, into the
 * bucket of a neighbour when it has one. */
static void ring_insert(web_series_t *s, web_point_t pt) {
  if (s->npts == s->cap) ring_thin(s);
  size_t lo = 0, hi = s->npts; /* the first point later than pt */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (GAUGE_PT(s, mid).t_ms > pt.t_ms)
      hi = mid;
    else
      lo = mid + 1;
  }
  size_t k = lo, nb = s->npts - (s->tail_raw && s->npts ? 1 : 0);
  s->pushed++;
  if (s->bucket_ms > 0) {
    double b = gauge_bucket(s, pt.t_ms);
    /* not into the first point (a point before it becomes the first) */
    web_point_t *nbr =
        k > 1 && gauge_bucket(s, GAUGE_PT(s, k - 1).t_ms) == b
            ? &GAUGE_PT(s, k - 1)
        : k > 0 && k < nb && gauge_bucket(s, GAUGE_PT(s, k).t_ms) == b
            ? &GAUGE_PT(s, k)
            : NULL;
    if (nbr) {
      if (gauge_wins(pt, *nbr)) *nbr = pt;
      return;
    }
  }
  for (size_t j = s->npts; j > k; j--) GAUGE_PT(s, j) = GAUGE_PT(s, j - 1);
  GAUGE_PT(s, k) = pt;
  s->npts++;
}

static void series_store(el_web_t *w, web_family_t *f, web_series_t *s,
                         const el_tm_point_t *p) {
  /* Out-of-order points are ignored, as the collector's accumulator does
   * (the page's chart of a gauge still gets them, in time order);
   * monotonic delta sums add up, other delta sums are not exported. */
  if (s->has && p->time_unix_ns && s->t && p->time_unix_ns < s->t) {
    if (w->view && !f->sum && s->pts)
      ring_insert(s, (web_point_t){(double)p->time_unix_ns / 1e6,
                                   p->is_int ? (double)p->ival : p->dval});
    return;
  }
  double v = p->is_int ? (double)p->ival : p->dval;
  if (f->sum && f->delta && s->has) {
    if (s->is_int && p->is_int)
      s->ival += p->ival;
    else
      s->dval = (s->is_int ? (double)s->ival : s->dval) + v;
    s->is_int = s->is_int && p->is_int;
    v = s->is_int ? (double)s->ival : s->dval;
  } else {
    s->is_int = p->is_int;
    s->ival = p->ival;
    s->dval = p->dval;
  }
  s->has = true;
  s->touched = ++w->tick;
  if (p->time_unix_ns) s->t = p->time_unix_ns;
  if (!w->view) return;
  if (!s->pts) {
    s->pts = el_malloc(WEB_POINTS_PER_SERIES * sizeof *s->pts);
    if (!s->pts) return;
    s->cap = WEB_POINTS_PER_SERIES;
  }
  web_point_t pt = {
      p->time_unix_ns ? (double)p->time_unix_ns / 1e6 : web_now_ms(), v};
  /* The first point of a cumulative sum counts from its start time (for
   * HeapAllocated: bytes since the program started), the interval the
   * page's rate begins with (docs/web.md "/api/data"). */
  if (!s->pushed && f->sum && !f->delta && p->start_unix_ns &&
      (double)p->start_unix_ns / 1e6 < pt.t_ms)
    s->start_ms = (double)p->start_unix_ns / 1e6;
  if (f->sum)
    ring_push(s->pts, s->cap, &s->npts, &s->head, pt);
  else
    gauge_push(s, pt);
  s->pushed++;
}

/* The points of metric mt (resource labels rl, session sess) into their
 * series. */
static void store_metric(el_web_t *w, const el_buf_t *rl, uint64_t sess,
                         const el_tm_metric_t *mt, const el_tm_batch_t *b,
                         el_buf_t *bufs) {
  el_buf_t *key = &bufs[0], *pl = &bufs[1], *tmp = &bufs[2];
  size_t np;
  const el_tm_point_t *pts = el_tm_batch_points(b, &np);
  web_family_t *f = family_get(w, &mt->desc);
  if (!f) {
    w->dropped_series += mt->n;
    return;
  }
  for (size_t pi = mt->first; pi < mt->first + mt->n && pi < np; pi++) {
    point_labels(&pts[pi], !f->sum, pl, tmp);
    render_key(rl, pl->p, pl->len, key);
    if (key->oom || pl->oom || rl->oom) {
      w->dropped_series++;
      continue;
    }
    web_series_t *s = series_get(w, f, key, pl, sess, &pts[pi]);
    if (s)
      series_store(w, f, s, &pts[pi]);
    else
      w->dropped_series++;
    w->points++;
  }
}

void web_store_metrics(el_web_t *w, const el_tm_batch_t *b) {
  size_t ng, nm;
  const el_tm_rgroup_t *g = el_tm_batch_groups(b, &ng);
  const el_tm_metric_t *m = el_tm_batch_metrics(b, &nm);
  /* resource labels, key, point labels, scratch */
  el_buf_t rl = EL_BUF_INIT, bufs[3] = {EL_BUF_INIT, EL_BUF_INIT, EL_BUF_INIT};
  for (size_t gi = 0; gi < ng; gi++) {
    const el_tm_resource_t *res = g[gi].resource;
    uint64_t sess = res ? res->session : 0;
    res_labels(res, el_tm_batch_scope_name(b), el_tm_batch_scope_version(b),
               &rl, &bufs[2]);
    if (!rl.oom && !session_labels(w, sess, &rl, &bufs[0])) rl.oom = true;
    for (size_t mi = g[gi].first; mi < g[gi].first + g[gi].n && mi < nm; mi++) {
      const el_tm_metric_t *mt = &m[mi];
      if (mt->desc.kind == EL_TM_SUM && !mt->desc.monotonic &&
          mt->desc.temporality == EL_TM_TEMP_DELTA)
        continue; /* the collector drops these */
      store_metric(w, &rl, sess, mt, b, bufs);
    }
  }
  el_buf_free(&rl);
  for (size_t k = 0; k < 3; k++) el_buf_free(&bufs[k]);
}

void web_store_clear(el_web_t *w) {
  for (size_t k = 0; k < w->nfam; k++) family_free(w->fam[k]);
  el_free(w->fam);
  w->fam = NULL;
  w->nfam = w->capfam = 0;
  el_free(w->key_rlab);
  w->key_rlab = NULL;
  w->key_nrlab = 0;
  w->key_session = 0;
}
