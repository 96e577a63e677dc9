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

typedef struct label_s {
  char name[128];
  size_t voff, vlen; /* value in the scratch buffer */
  size_t idx;        /* order of addition: resource, then point */
} label_t;

/* By name, then in attribute order (colliding names join in that order). */
static int label_cmp(const void *a, const void *b) {
  const label_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

#define MAX_LABELS 128

/* Render the series key: {name="value",...} sorted by name, duplicates
 * (after sanitizing) joined with ';' as the collector does. Resource
 * attributes become labels, job = service.namespace/service.name,
 * instance = service.instance.id, otel_scope_name/version. */
static void render_key(const el_tm_resource_t *res, const char *scope,
                       const char *scope_version, const el_tm_point_t *p,
                       bool gauge, el_buf_t *key, el_buf_t *scratch) {
  label_t lab[MAX_LABELS];
  size_t n = 0;
  el_buf_reset(scratch);
  const char *svc = NULL, *ns = NULL, *inst = NULL;
  size_t svcn = 0, nsn = 0, instn = 0;
#define ADD(nm, fill)                                           \
  do {                                                          \
    if (n < MAX_LABELS) {                                       \
      size_t off_ = scratch->len;                               \
      fill;                                                     \
      if (scratch->len > off_) {                                \
        lab[n].voff = off_;                                     \
        lab[n].vlen = scratch->len - off_;                      \
        lab[n].idx = n;                                         \
        el_web_prom_label(nm, lab[n].name, sizeof lab[n].name); \
        n++;                                                    \
      }                                                         \
    }                                                           \
  } while (0)
  for (size_t k = 0; res && k < res->nattrs; k++) {
    const el_tm_attr_t *a = &res->attrs[k];
    /* Marks estimated times (docs/differences.md); as a label it would
     * split every series when the session's exact clock arrives. */
    if (!strcmp(a->key, "eventlog_live.clock")) continue;
    if (a->type == EL_TM_STR) {
      if (!strcmp(a->key, "service.name")) svc = a->v.s.p, svcn = a->v.s.len;
      if (!strcmp(a->key, "service.namespace")) ns = a->v.s.p, nsn = a->v.s.len;
      if (!strcmp(a->key, "service.instance.id"))
        inst = a->v.s.p, instn = a->v.s.len;
    }
    ADD(a->key, web_attr_value(a, scratch));
  }
  if (svcn) {
    ADD("job", {
      if (nsn) {
        el_buf_put(scratch, ns, nsn);
        el_buf_puts(scratch, "/");
      }
      el_buf_put(scratch, svc, svcn);
    });
  }
  if (instn) ADD("instance", el_buf_put(scratch, inst, instn));
  if (scope && *scope) ADD("otel_scope_name", el_buf_puts(scratch, scope));
  if (scope_version && *scope_version)
    ADD("otel_scope_version", el_buf_puts(scratch, scope_version));
  for (size_t k = 0; k < p->nattrs; k++) {
    if (attr_dropped(p->attrs[k].key, gauge)) continue;
    ADD(p->attrs[k].key, web_attr_value(&p->attrs[k], scratch));
  }
#undef ADD
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
    if (!scratch->oom)
      web_put_esc(key, scratch->p + lab[k].voff, lab[k].vlen, WEB_ESC_PROM);
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
 * w->evicted_series, and re-indexes the rest (the index keeps its
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
      series_free(f->s[i]);
      w->evicted_series++;
      continue;
    }
    f->s[j] = f->s[i];
    el_map_add(&f->idx, f->s[j]->hash, (uint32_t)j);
    j++;
  }
  f->n = j;
  return j < WEB_SERIES_PER_METRIC;
}

static web_series_t *series_find(web_family_t *f, const char *k, size_t n,
                                 uint64_t h) {
  size_t pos;
  for (uint32_t i = el_map_first(&f->idx, h, &pos); i != EL_MAP_NONE;
       i = el_map_next(&f->idx, h, &pos))
    if (!strcmp(f->s[i]->key, k) && strlen(f->s[i]->key) == n) return f->s[i];
  return NULL;
}

static web_series_t *series_get(el_web_t *w, web_family_t *f,
                                const el_buf_t *key, const el_tm_point_t *p) {
  const char *k = key->p ? key->p : "";
  uint64_t h = el_hash_bytes(k, key->len, 0);
  web_series_t *s = series_find(f, k, key->len, h);
  if (s) return s;
  if (f->n >= WEB_SERIES_PER_METRIC && !family_evict(w, f)) return NULL;
  if (el_grow(&f->s, &f->cap, f->n + 1, sizeof *f->s) < 0 ||
      el_map_reserve(&f->idx, WEB_SERIES_PER_METRIC + 1) < 0)
    return NULL;
  s = el_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->key = el_strndup(k, key->len);
  if (w->view) {
    s->attrs_json = attrs_json(p, !f->sum, false);
    s->group_json = attrs_json(p, !f->sum, true);
  }
  if (!s->key || (w->view && (!s->attrs_json || !s->group_json))) {
    series_free(s);
    return NULL;
  }
  s->hash = h;
  el_map_add(&f->idx, h, (uint32_t)f->n); /* reserved above */
  f->s[f->n++] = s;
  return s;
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

static void series_store(el_web_t *w, web_family_t *f, web_series_t *s,
                         const el_tm_point_t *p) {
  /* Out-of-order points are ignored, as the collector's accumulator does;
   * monotonic delta sums add up, other delta sums are not exported. */
  if (s->has && p->time_unix_ns && s->t && p->time_unix_ns < s->t) return;
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
  ring_push(s->pts, s->cap, &s->npts, &s->head, pt);
  s->pushed++;
}

/* The points of metric mt (resource group g) into their series. */
static void store_metric(el_web_t *w, const el_tm_rgroup_t *g,
                         const el_tm_metric_t *mt, const el_tm_batch_t *b,
                         el_buf_t *key, el_buf_t *scratch) {
  size_t np;
  const el_tm_point_t *pts = el_tm_batch_points(b, &np);
  const char *scope = el_tm_batch_scope_name(b);
  const char *scope_v = el_tm_batch_scope_version(b);
  web_family_t *f = family_get(w, &mt->desc);
  if (!f) {
    w->dropped_series += mt->n;
    return;
  }
  for (size_t pi = mt->first; pi < mt->first + mt->n && pi < np; pi++) {
    render_key(g->resource, scope, scope_v, &pts[pi], !f->sum, key, scratch);
    if (key->oom || scratch->oom) {
      w->dropped_series++;
      continue;
    }
    web_series_t *s = series_get(w, f, key, &pts[pi]);
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
  el_buf_t key = EL_BUF_INIT, scratch = EL_BUF_INIT;
  for (size_t gi = 0; gi < ng; gi++) {
    for (size_t mi = g[gi].first; mi < g[gi].first + g[gi].n && mi < nm; mi++) {
      const el_tm_metric_t *mt = &m[mi];
      if (mt->desc.kind == EL_TM_SUM && !mt->desc.monotonic &&
          mt->desc.temporality == EL_TM_TEMP_DELTA)
        continue; /* the collector drops these */
      store_metric(w, &g[gi], mt, b, &key, &scratch);
    }
  }
  el_buf_free(&key);
  el_buf_free(&scratch);
}

void web_store_clear(el_web_t *w) {
  for (size_t k = 0; k < w->nfam; k++) family_free(w->fam[k]);
  el_free(w->fam);
  w->fam = NULL;
  w->nfam = w->capfam = 0;
}
