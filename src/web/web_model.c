/* web_model.c: what the Prometheus endpoint and the web view keep from the
 * telemetry batches, and how it is rendered (Prometheus text, OpenMetrics,
 * the page's JSON). Naming follows the OpenTelemetry Collector's
 * Prometheus exporter (pkg/translator/prometheus, contrib 0.140) with the
 * demo's collector configuration (demo/config/otelcol.yaml:
 * resource_to_telemetry_conversion, transform/ghc); docs/web.md has the
 * rules. Thread: web_model_consume on the loop thread, the renderers on
 * HTTP threads, all under el_web_t.mu. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "telemetry/telemetry_batch.h"
#include "web_internal.h"

/* {====== buffer ======} */

static bool buf_grow(web_buf_t *b, size_t n) {
  if (b->oom) return false;
  if (b->len + n + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + n + 1) cap *= 2;
  char *p = el_realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

void web_buf_put(web_buf_t *b, const char *s, size_t n) {
  if (!buf_grow(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

void web_buf_puts(web_buf_t *b, const char *s) { web_buf_put(b, s, strlen(s)); }

void web_buf_printf(web_buf_t *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    web_buf_put(b, tmp, (size_t)n);
    return;
  }
  if (!buf_grow(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  if (s[0] < 0x80) return 1;
  size_t k;
  uint32_t c;
  if ((s[0] & 0xE0) == 0xC0) k = 2, c = s[0] & 0x1F;
  else if ((s[0] & 0xF0) == 0xE0) k = 3, c = s[0] & 0x0F;
  else if ((s[0] & 0xF8) == 0xF0) k = 4, c = s[0] & 0x07;
  else return 0;
  if (k > n) return 0;
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3F);
  }
  if ((k == 2 && c < 0x80) || (k == 3 && c < 0x800) ||
      (k == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
      (c >= 0xD800 && c <= 0xDFFF))
    return 0;
  return k;
}

enum { ESC_PROM, ESC_JSON, ESC_HELP };

/* Append s[0..n) escaped for a Prometheus label value (\\ \" \n), a
 * HELP text (\\ \n) or a JSON string body. Invalid UTF-8 becomes U+FFFD
 * (Prometheus refuses a scrape with invalid label values). */
static void put_esc(web_buf_t *b, const char *s, size_t n, int mode) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    unsigned char c = u[i];
    size_t k = utf8_len(u + i, n - i);
    const char *rep = NULL;
    char tmp[8];
    if (k == 0) rep = "\xEF\xBF\xBD";
    else if (c == '\\') rep = "\\\\";
    else if (c == '\n') rep = "\\n";
    else if (c == '"' && mode != ESC_HELP) rep = "\\\"";
    else if (c < 0x20 && mode == ESC_JSON) {
      snprintf(tmp, sizeof tmp, "\\u%04x", c);
      rep = tmp;
    }
    if (rep) {
      web_buf_put(b, s + run, i - run);
      web_buf_puts(b, rep);
      i += k ? k : 1;
      run = i;
    } else {
      i += k;
    }
  }
  web_buf_put(b, s + run, n - run);
}

static void put_json_str(web_buf_t *b, const char *s, size_t n) {
  web_buf_put(b, "\"", 1);
  put_esc(b, s, n, ESC_JSON);
  web_buf_put(b, "\"", 1);
}

/* Shortest decimal that reads back as v (Prometheus and JSON numbers). */
static void fmt_double(double v, char *out, size_t size, bool json) {
  if (isnan(v)) {
    snprintf(out, size, json ? "null" : "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(out, size, json ? "null" : (v > 0 ? "+Inf" : "-Inf"));
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, size, "%.*g", prec, v);
    if (strtod(out, NULL) == v) return;
  }
}

/* {====== naming ======} */

static const struct {
  const char *unit, *word;
} units[] = {
    {"d", "days"},          {"h", "hours"},         {"min", "minutes"},
    {"s", "seconds"},       {"ms", "milliseconds"}, {"us", "microseconds"},
    {"ns", "nanoseconds"},  {"By", "bytes"},        {"KiBy", "kibibytes"},
    {"MiBy", "mebibytes"},  {"GiBy", "gibibytes"},  {"TiBy", "tibibytes"},
    {"KBy", "kilobytes"},   {"MBy", "megabytes"},   {"GBy", "gigabytes"},
    {"TBy", "terabytes"},   {"m", "meters"},        {"V", "volts"},
    {"A", "amperes"},       {"J", "joules"},        {"W", "watts"},
    {"g", "grams"},         {"Cel", "celsius"},     {"Hz", "hertz"},
    {"%", "percent"},       {"1", ""},
};
static const struct {
  const char *unit, *word;
} per_units[] = {{"s", "second"}, {"m", "minute"}, {"h", "hour"},
                 {"d", "day"},    {"w", "week"},   {"mo", "month"},
                 {"y", "year"}};

#define MAX_TOKENS 64

typedef struct tokens_s {
  char text[512];             /* tokens, NUL-separated */
  size_t used;
  const char *tok[MAX_TOKENS];
  size_t n;
} tokens_t;

/* Split s[0..n) at characters not in [a-zA-Z0-9] (plus ':' when colon)
 * and append the non-empty pieces. */
static void tok_split(tokens_t *t, const char *s, size_t n, bool colon) {
  size_t i = 0;
  while (i < n) {
    while (i < n && !(isalnum((unsigned char)s[i]) || (colon && s[i] == ':')))
      i++;
    size_t a = i;
    while (i < n && (isalnum((unsigned char)s[i]) || (colon && s[i] == ':')))
      i++;
    if (i > a && t->n < MAX_TOKENS && t->used + (i - a) + 1 <= sizeof t->text) {
      memcpy(t->text + t->used, s + a, i - a);
      t->text[t->used + (i - a)] = 0;
      t->tok[t->n++] = t->text + t->used;
      t->used += i - a + 1;
    }
  }
}

static bool tok_has(const tokens_t *t, const char *w) {
  for (size_t k = 0; k < t->n; k++)
    if (!strcmp(t->tok[k], w)) return true;
  return false;
}

static void tok_remove(tokens_t *t, const char *w) {
  size_t j = 0;
  for (size_t k = 0; k < t->n; k++)
    if (strcmp(t->tok[k], w)) t->tok[j++] = t->tok[k];
  t->n = j;
}

/* Append the unit word (already split into [a-zA-Z0-9] pieces, joined by
 * '_') unless it is a token already. */
static void tok_add_word(tokens_t *t, const char *word, const char *prefix) {
  tokens_t w = {.used = 0, .n = 0};
  tok_split(&w, word, strlen(word), false);
  if (w.n == 0) return;
  char joined[128] = "";
  size_t len = 0;
  for (size_t k = 0; k < w.n; k++)
    len += (size_t)snprintf(joined + len, len < sizeof joined ?
                            sizeof joined - len : 0, "%s%s",
                            k ? "_" : "", w.tok[k]);
  if (len >= sizeof joined || tok_has(t, joined)) return;
  const char *parts[2] = {prefix, joined};
  for (int k = prefix ? 0 : 1; k < 2; k++) {
    size_t l = strlen(parts[k]);
    if (t->n >= MAX_TOKENS || t->used + l + 1 > sizeof t->text) return;
    memcpy(t->text + t->used, parts[k], l + 1);
    t->tok[t->n++] = t->text + t->used;
    t->used += l + 1;
  }
}

static const char *unit_word(const char *u, size_t n, bool per) {
  static __thread char raw[64];
  if (per) {
    for (size_t k = 0; k < EL_ARRAY_LEN(per_units); k++)
      if (strlen(per_units[k].unit) == n && !memcmp(per_units[k].unit, u, n))
        return per_units[k].word;
  } else {
    for (size_t k = 0; k < EL_ARRAY_LEN(units); k++)
      if (strlen(units[k].unit) == n && !memcmp(units[k].unit, u, n))
        return units[k].word;
  }
  snprintf(raw, sizeof raw, "%.*s", (int)n, u);
  return raw;
}

static void trim(const char **s, size_t *n) {
  while (*n && isspace((unsigned char)**s)) (*s)++, (*n)--;
  while (*n && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

size_t el_web_prom_name(const char *name, const char *unit, bool sum,
                        bool monotonic, char *buf, size_t size) {
  tokens_t t = {.used = 0, .n = 0};
  tok_split(&t, name ? name : "", name ? strlen(name) : 0, true);
  const char *u = unit ? unit : "";
  size_t un = strlen(u);
  trim(&u, &un);
  const char *slash = memchr(u, '/', un);
  const char *main_u = u, *per_u = slash ? slash + 1 : NULL;
  size_t main_n = slash ? (size_t)(slash - u) : un;
  size_t per_n = slash ? un - main_n - 1 : 0;
  trim(&main_u, &main_n);
  if (per_u) trim(&per_u, &per_n);
  if (main_n && !memchr(main_u, '{', main_n) && !memchr(main_u, '}', main_n))
    tok_add_word(&t, unit_word(main_u, main_n, false), NULL);
  if (per_n && !memchr(per_u, '{', per_n) && !memchr(per_u, '}', per_n))
    tok_add_word(&t, unit_word(per_u, per_n, true), "per");
  if (sum && monotonic) {
    tok_remove(&t, "total");
    if (t.n < MAX_TOKENS) t.tok[t.n++] = "total";
  }
  if (!sum && un == 1 && u[0] == '1') {
    tok_remove(&t, "ratio");
    if (t.n < MAX_TOKENS) t.tok[t.n++] = "ratio";
  }
  size_t len = 0;
  if (size == 0) return 0;
  buf[0] = 0;
  if (t.n && isdigit((unsigned char)t.tok[0][0]))
    len += (size_t)snprintf(buf, size, "_");
  for (size_t k = 0; k < t.n && len < size; k++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? "_" : "",
                            t.tok[k]);
  return len < size ? len : size - 1;
}

size_t el_web_prom_label(const char *key, char *buf, size_t size) {
  if (size == 0) return 0;
  size_t len = 0;
  const char *k = key ? key : "";
  if (isdigit((unsigned char)k[0])) len = (size_t)snprintf(buf, size, "key_");
  else if (k[0] == '_' && k[1] != '_')
    len = (size_t)snprintf(buf, size, "key");
  for (; *k && len + 1 < size; k++)
    buf[len++] = isalnum((unsigned char)*k) ? *k : '_';
  if (len >= size) len = size - 1;
  buf[len] = 0;
  return len;
}

/* {====== attributes ======} */

/* The attribute's value as the collector stringifies it. */
static void attr_value(const el_tm_attr_t *a, web_buf_t *b) {
  char tmp[64];
  switch (a->type) {
    case EL_TM_STR: web_buf_put(b, a->v.s.p ? a->v.s.p : "", a->v.s.len); break;
    case EL_TM_INT: web_buf_printf(b, "%lld", (long long)a->v.i); break;
    case EL_TM_DOUBLE:
      fmt_double(a->v.d, tmp, sizeof tmp, false);
      web_buf_puts(b, tmp);
      break;
    case EL_TM_BOOL: web_buf_puts(b, a->v.b ? "true" : "false"); break;
    case EL_TM_STRLIST:
      web_buf_puts(b, "[");
      for (size_t k = 0; k < a->v.list.n; k++) {
        if (k) web_buf_puts(b, ",");
        put_json_str(b, a->v.list.items[k].p ? a->v.list.items[k].p : "",
                     a->v.list.items[k].len);
      }
      web_buf_puts(b, "]");
      break;
  }
}

/* The demo collector's transform/ghc: census era and id go from every
 * point, the capability from gauges. */
static bool attr_dropped(const char *key, bool gauge) {
  return !strcmp(key, "heapProfSampleEra") || !strcmp(key, "heapProfId") ||
         (gauge && !strcmp(key, "evCap"));
}

typedef struct label_s {
  char name[128];
  size_t voff, vlen;          /* value in the scratch buffer */
  size_t idx;                 /* order of addition: resource, then point */
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
                       bool gauge, web_buf_t *key, web_buf_t *scratch) {
  label_t lab[MAX_LABELS];
  size_t n = 0;
  scratch->len = 0;
  const char *svc = NULL, *ns = NULL, *inst = NULL;
  size_t svcn = 0, nsn = 0, instn = 0;
#define ADD(nm, fill)                                                       \
  do {                                                                      \
    if (n < MAX_LABELS) {                                                   \
      size_t off_ = scratch->len;                                           \
      fill;                                                                 \
      if (scratch->len > off_) {                                            \
        lab[n].voff = off_;                                                 \
        lab[n].vlen = scratch->len - off_;                                  \
        lab[n].idx = n;                                                     \
        el_web_prom_label(nm, lab[n].name, sizeof lab[n].name);             \
        n++;                                                                \
      }                                                                     \
    }                                                                       \
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
    ADD(a->key, attr_value(a, scratch));
  }
  if (svcn) {
    ADD("job", {
      if (nsn) {
        web_buf_put(scratch, ns, nsn);
        web_buf_puts(scratch, "/");
      }
      web_buf_put(scratch, svc, svcn);
    });
  }
  if (instn) ADD("instance", web_buf_put(scratch, inst, instn));
  if (scope && *scope) ADD("otel_scope_name", web_buf_puts(scratch, scope));
  if (scope_version && *scope_version)
    ADD("otel_scope_version", web_buf_puts(scratch, scope_version));
  for (size_t k = 0; k < p->nattrs; k++) {
    if (attr_dropped(p->attrs[k].key, gauge)) continue;
    ADD(p->attrs[k].key, attr_value(&p->attrs[k], scratch));
  }
#undef ADD
  qsort(lab, n, sizeof lab[0], label_cmp);
  key->len = 0;
  if (key->p) key->p[0] = 0;
  if (n == 0) {
    web_buf_put(key, "", 0);
    return;
  }
  web_buf_puts(key, "{");
  for (size_t k = 0; k < n; k++) {
    bool dup = k > 0 && !strcmp(lab[k].name, lab[k - 1].name);
    if (dup) {
      key->len--;             /* reopen the previous value */
      web_buf_puts(key, ";");
    } else {
      if (k) web_buf_puts(key, ",");
      web_buf_puts(key, lab[k].name);
      web_buf_puts(key, "=\"");
    }
    if (!scratch->oom)
      put_esc(key, scratch->p + lab[k].voff, lab[k].vlen, ESC_PROM);
    web_buf_puts(key, "\"");
  }
  web_buf_puts(key, "}");
}

/* The point's own attributes (after the drops) as a JSON object. */
static char *attrs_json(const el_tm_point_t *p, bool gauge) {
  web_buf_t b = {0}, v = {0};
  web_buf_puts(&b, "{");
  bool first = true;
  for (size_t k = 0; k < p->nattrs; k++) {
    const el_tm_attr_t *a = &p->attrs[k];
    if (attr_dropped(a->key, gauge)) continue;
    if (!first) web_buf_puts(&b, ",");
    first = false;
    put_json_str(&b, a->key, strlen(a->key));
    web_buf_puts(&b, ":");
    v.len = 0;
    attr_value(a, &v);
    put_json_str(&b, v.oom || !v.p ? "" : v.p, v.oom ? 0 : v.len);
  }
  web_buf_puts(&b, "}");
  el_free(v.p);
  if (b.oom) {
    el_free(b.p);
    return NULL;
  }
  return b.p;
}

/* {====== metrics ======} */

static uint32_t hash_str(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t k = 0; k < n; k++) h = (h ^ (unsigned char)s[k]) * 16777619u;
  return h;
}

static web_family_t *family_get(el_web_t *w, const el_tm_metric_desc_t *d) {
  bool sum = d->kind == EL_TM_SUM;
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    if (f->sum == sum && !strcmp(f->name, d->name) &&
        !strcmp(f->unit, d->unit ? d->unit : ""))
      return f;
  }
  if (w->nfam >= WEB_FAMILIES_MAX) return NULL;
  if (w->nfam == w->capfam) {
    size_t cap = w->capfam ? w->capfam * 2 : 16;
    web_family_t **a = el_realloc(w->fam, cap * sizeof *a);
    if (!a) return NULL;
    w->fam = a;
    w->capfam = cap;
  }
  web_family_t *f = el_calloc(1, sizeof *f);
  char prom[512];
  el_web_prom_name(d->name, d->unit, sum, d->monotonic, prom, sizeof prom);
  if (!f) return NULL;
  f->name = el_strdup(d->name);
  f->prom = el_strdup(prom);
  f->help = el_strdup(d->description ? d->description : "");
  f->unit = el_strdup(d->unit ? d->unit : "");
  f->sum = sum;
  f->monotonic = d->monotonic;
  f->delta = d->temporality == EL_TM_TEMP_DELTA;
  if (!f->name || !f->prom || !f->help || !f->unit) {
    el_free(f->name), el_free(f->prom), el_free(f->help), el_free(f->unit);
    el_free(f);
    return NULL;
  }
  w->fam[w->nfam++] = f;
  return f;
}

static bool family_rehash(web_family_t *f, size_t cap) {
  uint32_t *t = el_calloc(cap, sizeof *t);
  if (!t) return false;
  for (size_t k = 0; k < f->n; k++) {
    size_t i = f->s[k]->hash & (cap - 1);
    while (t[i]) i = (i + 1) & (cap - 1);
    t[i] = (uint32_t)k + 1;
  }
  el_free(f->tab);
  f->tab = t;
  f->tabcap = cap;
  return true;
}

static web_series_t *series_get(el_web_t *w, web_family_t *f,
                                const web_buf_t *key,
                                const el_tm_point_t *p) {
  const char *k = key->p ? key->p : "";
  uint32_t h = hash_str(k, key->len);
  if (f->tabcap) {
    size_t i = h & (f->tabcap - 1);
    while (f->tab[i]) {
      web_series_t *s = f->s[f->tab[i] - 1];
      if (s->hash == h && !strcmp(s->key, k)) return s;
      i = (i + 1) & (f->tabcap - 1);
    }
  }
  if (f->n >= WEB_SERIES_PER_METRIC) {
    if (w->dropped_series++ == 0)
      el_log(EL_LOG_WARN, "web: %s has %d series: further series are "
             "dropped (counted in /api/data stats.dropped_series)",
             f->prom, WEB_SERIES_PER_METRIC);
    return NULL;
  }
  if ((f->n + 1) * 2 > f->tabcap &&
      !family_rehash(f, f->tabcap ? f->tabcap * 2 : 64))
    return NULL;
  if (f->n == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 16;
    web_series_t **a = el_realloc(f->s, cap * sizeof *a);
    if (!a) return NULL;
    f->s = a;
    f->cap = cap;
  }
  web_series_t *s = el_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->key = el_strndup(k, key->len);
  s->attrs_json = w->view ? attrs_json(p, !f->sum) : NULL;
  if (!s->key || (w->view && !s->attrs_json)) {
    el_free(s->key);
    el_free(s->attrs_json);
    el_free(s);
    return NULL;
  }
  s->hash = h;
  f->s[f->n] = s;
  size_t i = h & (f->tabcap - 1);
  while (f->tab[i]) i = (i + 1) & (f->tabcap - 1);
  f->tab[i] = (uint32_t)f->n + 1;
  f->n++;
  return s;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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
    if (s->is_int && p->is_int) s->ival += p->ival;
    else s->dval = (s->is_int ? (double)s->ival : s->dval) + v;
    s->is_int = s->is_int && p->is_int;
    v = s->is_int ? (double)s->ival : s->dval;
  } else {
    s->is_int = p->is_int;
    s->ival = p->ival;
    s->dval = p->dval;
  }
  s->has = true;
  if (p->time_unix_ns) s->t = p->time_unix_ns;
  if (!w->view) return;
  if (!s->pts) {
    s->pts = el_malloc(WEB_POINTS_PER_SERIES * sizeof *s->pts);
    if (!s->pts) return;
    s->cap = WEB_POINTS_PER_SERIES;
  }
  web_point_t pt = {p->time_unix_ns ? (double)p->time_unix_ns / 1e6 : now_ms(),
                    v};
  ring_push(s->pts, s->cap, &s->npts, &s->head, pt);
}

static void consume_metrics(el_web_t *w, const el_tm_batch_t *b) {
  size_t ng, nm, np;
  const el_tm_rgroup_t *g = el_tm_batch_groups(b, &ng);
  const el_tm_metric_t *m = el_tm_batch_metrics(b, &nm);
  const el_tm_point_t *pts = el_tm_batch_points(b, &np);
  const char *scope = el_tm_batch_scope_name(b);
  const char *scope_v = el_tm_batch_scope_version(b);
  web_buf_t key = {0}, scratch = {0};
  for (size_t gi = 0; gi < ng; gi++) {
    for (size_t mi = g[gi].first; mi < g[gi].first + g[gi].n && mi < nm;
         mi++) {
      const el_tm_metric_t *mt = &m[mi];
      if (mt->desc.kind == EL_TM_SUM && !mt->desc.monotonic &&
          mt->desc.temporality == EL_TM_TEMP_DELTA)
        continue;             /* the collector drops these */
      web_family_t *f = family_get(w, &mt->desc);
      if (!f) {
        w->dropped_series += mt->n;
        continue;
      }
      for (size_t pi = mt->first; pi < mt->first + mt->n && pi < np; pi++) {
        render_key(g[gi].resource, scope, scope_v, &pts[pi], !f->sum, &key,
                   &scratch);
        if (key.oom || scratch.oom) {
          w->dropped_series++;
          key.oom = scratch.oom = false;
          continue;
        }
        web_series_t *s = series_get(w, f, &key, &pts[pi]);
        if (s) series_store(w, f, s, &pts[pi]);
        w->points++;
      }
    }
  }
  el_free(key.p);
  el_free(scratch.p);
}

/* {====== logs, threads, pauses ======} */

static const el_tm_attr_t *attr_find(const el_tm_attr_t *a, size_t n,
                                     const char *key) {
  for (size_t k = 0; k < n; k++)
    if (!strcmp(a[k].key, key)) return &a[k];
  return NULL;
}

static char *attr_str(const el_tm_attr_t *a) {
  if (!a) return NULL;
  web_buf_t b = {0};
  attr_value(a, &b);
  if (b.oom) {
    el_free(b.p);
    return NULL;
  }
  return b.p ? b.p : el_strdup("");
}

static bool attr_int(const el_tm_attr_t *a, int64_t *out) {
  if (!a) return false;
  if (a->type == EL_TM_INT) return *out = a->v.i, true;
  if (a->type == EL_TM_STR && a->v.s.len && a->v.s.len < 24) {
    char tmp[24], *end;
    memcpy(tmp, a->v.s.p, a->v.s.len);
    tmp[a->v.s.len] = 0;
    long long v = strtoll(tmp, &end, 10);
    if (*end == 0) return *out = v, true;
  }
  return false;
}

static size_t thread_slot(const el_web_t *w, int64_t id) {
  uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
  size_t i = (size_t)(h >> 32) & (w->thtabcap - 1);
  while (w->thtab[i] && w->threads[w->thtab[i] - 1].id != id)
    i = (i + 1) & (w->thtabcap - 1);
  return i;
}

static web_thread_t *thread_get(el_web_t *w, int64_t id) {
  if (w->thtabcap) {
    size_t i = thread_slot(w, id);
    if (w->thtab[i]) return &w->threads[w->thtab[i] - 1];
  }
  if (w->nthreads >= WEB_THREADS_MAX) return NULL;
  if ((w->nthreads + 1) * 2 > w->thtabcap) {
    size_t cap = w->thtabcap ? w->thtabcap * 2 : 128;
    uint32_t *t = el_calloc(cap, sizeof *t);
    if (!t) return NULL;
    el_free(w->thtab);
    w->thtab = t;
    w->thtabcap = cap;
    for (size_t k = 0; k < w->nthreads; k++)
      w->thtab[thread_slot(w, w->threads[k].id)] = (uint32_t)k + 1;
  }
  if (w->nthreads == w->capthreads) {
    size_t cap = w->capthreads ? w->capthreads * 2 : 64;
    web_thread_t *a = el_realloc(w->threads, cap * sizeof *a);
    if (!a) return NULL;
    w->threads = a;
    w->capthreads = cap;
  }
  web_thread_t *t = &w->threads[w->nthreads];
  memset(t, 0, sizeof *t);
  t->id = id;
  t->cap = -1;
  w->thtab[thread_slot(w, id)] = (uint32_t)++w->nthreads;
  return t;
}

static void replace(char **dst, char *src) {
  el_free(*dst);
  *dst = src;
}

static void consume_logs(el_web_t *w, const el_tm_batch_t *b) {
  size_t n;
  const el_tm_log_t *l = el_tm_batch_logs(b, &n);
  for (size_t k = 0; k < n; k++) {
    const el_tm_log_t *r = &l[k];
    double t = (double)(r->time_unix_ns ? r->time_unix_ns
                                        : r->observed_unix_ns) / 1e6;
    char *kind = attr_str(attr_find(r->attrs, r->nattrs, "kind"));
    char *body = el_strndup(r->body.p ? r->body.p : "", r->body.len);
    int64_t tid = -1;
    attr_int(attr_find(r->attrs, r->nattrs, "thread"), &tid);
    if (!body) {
      el_free(kind);
      continue;
    }
    if (kind && !strcmp(kind, "ThreadLabel") && tid >= 0) {
      web_thread_t *th = thread_get(w, tid);
      if (th) replace(&th->label, el_strdup(body));
    }
    if (kind && !strcmp(kind, "UserMarker")) {
      web_marker_t *m;
      if (w->nmarkers < WEB_MARKERS_MAX) {
        m = &w->markers[(w->hmarkers + w->nmarkers++) % WEB_MARKERS_MAX];
      } else {
        m = &w->markers[w->hmarkers];
        el_free(m->body);
        w->hmarkers = (w->hmarkers + 1) % WEB_MARKERS_MAX;
      }
      m->t_ms = t;
      m->body = el_strdup(body);
    }
    web_log_t *e;
    if (w->nlogs < WEB_LOGS_MAX) {
      e = &w->logs[(w->hlogs + w->nlogs++) % WEB_LOGS_MAX];
    } else {
      e = &w->logs[w->hlogs];
      el_free(e->kind);
      el_free(e->body);
      w->hlogs = (w->hlogs + 1) % WEB_LOGS_MAX;
    }
    e->t_ms = t;
    e->kind = kind ? kind : el_strdup(r->host_log ? "internal" : "");
    e->body = body;
    e->severity = r->severity_number;
    e->thread = tid;
  }
}

/* Span names of the trace processors (lua/eventlog_live/processors/
 * capability.lua): "<prefix>ThreadState <state>" with attributes thread,
 * capability, status; "<prefix>CapabilityUsage GC" for collections. */
static void consume_spans(el_web_t *w, const el_tm_batch_t *b) {
  size_t n;
  const el_tm_span_t *sp = el_tm_batch_spans(b, &n);
  for (size_t k = 0; k < n; k++) {
    const el_tm_span_t *s = &sp[k];
    const char *name = s->name ? s->name : "";
    const char *space = strrchr(name, ' ');
    double end_ms = (double)s->end_unix_ns / 1e6;
    if (strstr(name, "CapabilityUsage GC")) {
      double d = (double)(s->end_unix_ns - s->start_unix_ns) / 1e6;
      web_point_t p = {end_ms, s->end_unix_ns >= s->start_unix_ns ? d : 0};
      ring_push(w->pauses, WEB_PAUSES_MAX, &w->npauses, &w->hpauses, p);
      continue;
    }
    if (!strstr(name, "ThreadState") || !space) continue;
    int64_t tid;
    if (!attr_int(attr_find(s->attrs, s->nattrs, "thread"), &tid)) continue;
    web_thread_t *th = thread_get(w, tid);
    if (!th || end_ms < th->t_ms) continue;
    th->t_ms = end_ms;
    replace(&th->state, el_strdup(space + 1));
    replace(&th->status, attr_str(attr_find(s->attrs, s->nattrs, "status")));
    int64_t cap;
    if (attr_int(attr_find(s->attrs, s->nattrs, "capability"), &cap))
      th->cap = cap;
  }
}

void web_model_consume(el_web_t *w, el_tm_signal_t sig,
                       const el_tm_batch_t *b) {
  pthread_mutex_lock(&w->mu);
  w->batches++;
  if (sig == EL_TM_SIGNAL_METRICS) consume_metrics(w, b);
  else if (w->view && sig == EL_TM_SIGNAL_LOGS) consume_logs(w, b);
  else if (w->view && sig == EL_TM_SIGNAL_TRACES) consume_spans(w, b);
  pthread_mutex_unlock(&w->mu);
}

void web_model_clear(el_web_t *w) {
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    for (size_t i = 0; i < f->n; i++) {
      el_free(f->s[i]->key);
      el_free(f->s[i]->attrs_json);
      el_free(f->s[i]->pts);
      el_free(f->s[i]);
    }
    el_free(f->s);
    el_free(f->tab);
    el_free(f->name), el_free(f->prom), el_free(f->help), el_free(f->unit);
    el_free(f);
  }
  el_free(w->fam);
  w->fam = NULL;
  w->nfam = w->capfam = 0;
  for (size_t k = 0; k < w->nlogs; k++) {
    web_log_t *e = &w->logs[(w->hlogs + k) % WEB_LOGS_MAX];
    el_free(e->kind);
    el_free(e->body);
  }
  w->nlogs = w->hlogs = 0;
  for (size_t k = 0; k < w->nmarkers; k++)
    el_free(w->markers[(w->hmarkers + k) % WEB_MARKERS_MAX].body);
  w->nmarkers = w->hmarkers = 0;
  for (size_t k = 0; k < w->nthreads; k++) {
    el_free(w->threads[k].label);
    el_free(w->threads[k].state);
    el_free(w->threads[k].status);
  }
  el_free(w->threads);
  w->threads = NULL;
  el_free(w->thtab);
  w->thtab = NULL;
  w->thtabcap = 0;
  w->nthreads = w->capthreads = 0;
}

/* {====== renderers ======} */

void web_model_prom(el_web_t *w, bool om, web_buf_t *out) {
  char num[64];
  w->scrapes++;
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    if (f->n == 0) continue;
    bool counter = f->sum && f->monotonic;
    /* OpenMetrics names a counter family without its _total suffix. */
    size_t plen = strlen(f->prom);
    size_t flen = om && counter && plen > 6 &&
                  !strcmp(f->prom + plen - 6, "_total") ? plen - 6 : plen;
    if (f->help[0]) {
      web_buf_printf(out, "# HELP %.*s ", (int)flen, f->prom);
      put_esc(out, f->help, strlen(f->help), om ? ESC_PROM : ESC_HELP);
      web_buf_puts(out, "\n");
    }
    web_buf_printf(out, "# TYPE %.*s %s\n", (int)flen, f->prom,
                   counter ? "counter" : "gauge");
    for (size_t i = 0; i < f->n; i++) {
      web_series_t *s = f->s[i];
      if (!s->has) continue;
      if (s->is_int) snprintf(num, sizeof num, "%lld", (long long)s->ival);
      else fmt_double(s->dval, num, sizeof num, false);
      web_buf_printf(out, "%s%s %s\n", f->prom, s->key, num);
    }
  }
  if (om) web_buf_puts(out, "# EOF\n");
}

static void put_num(web_buf_t *b, double v) {
  char num[64];
  fmt_double(v, num, sizeof num, true);
  web_buf_puts(b, num);
}

/* Points per series in one /api/data answer: the newest ones, at most
 * WEB_JSON_POINTS over all series (the answer is built under the mutex the
 * loop thread's exporter needs). */
#define WEB_JSON_POINTS 400000

void web_model_json(el_web_t *w, web_buf_t *b) {
  size_t nseries = 0;
  for (size_t k = 0; k < w->nfam; k++) nseries += w->fam[k]->n;
  size_t per = nseries ? WEB_JSON_POINTS / nseries : WEB_POINTS_PER_SERIES;
  if (per < 10) per = 10;
  web_buf_puts(b, "{\"service\":");
  const char *svc = w->service ? w->service : "";
  put_json_str(b, svc, strlen(svc));
  web_buf_printf(b, ",\"control_port\":%d,\"ended\":%s,\"now_ms\":",
                 w->control_port, w->ended ? "true" : "false");
  put_num(b, now_ms());
  web_buf_printf(b, ",\"stats\":{\"batches\":%llu,\"points\":%llu,"
                    "\"dropped_series\":%llu},\"metrics\":[",
                 (unsigned long long)w->batches,
                 (unsigned long long)w->points,
                 (unsigned long long)w->dropped_series);
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    if (k) web_buf_puts(b, ",");
    web_buf_puts(b, "{\"name\":");
    put_json_str(b, f->name, strlen(f->name));
    web_buf_puts(b, ",\"prom\":");
    put_json_str(b, f->prom, strlen(f->prom));
    web_buf_puts(b, ",\"unit\":");
    put_json_str(b, f->unit, strlen(f->unit));
    web_buf_printf(b, ",\"kind\":\"%s\",\"monotonic\":%s,\"series\":[",
                   f->sum ? "sum" : "gauge", f->monotonic ? "true" : "false");
    for (size_t i = 0; i < f->n; i++) {
      web_series_t *s = f->s[i];
      if (i) web_buf_puts(b, ",");
      web_buf_puts(b, "{\"attrs\":");
      web_buf_puts(b, s->attrs_json ? s->attrs_json : "{}");
      web_buf_puts(b, ",\"points\":[");
      size_t skip = s->npts > per ? s->npts - per : 0;
      for (size_t j = skip; j < s->npts; j++) {
        const web_point_t *p = &s->pts[(s->head + j) % s->cap];
        web_buf_puts(b, j > skip ? ",[" : "[");
        put_num(b, p->t_ms);
        web_buf_puts(b, ",");
        put_num(b, p->v);
        web_buf_puts(b, "]");
      }
      web_buf_puts(b, "]}");
    }
    web_buf_puts(b, "]}");
  }
  web_buf_puts(b, "],\"logs\":[");
  for (size_t k = 0; k < w->nlogs; k++) {
    const web_log_t *e = &w->logs[(w->hlogs + k) % WEB_LOGS_MAX];
    web_buf_puts(b, k ? ",{\"t\":" : "{\"t\":");
    put_num(b, e->t_ms);
    web_buf_puts(b, ",\"kind\":");
    put_json_str(b, e->kind ? e->kind : "", e->kind ? strlen(e->kind) : 0);
    web_buf_puts(b, ",\"body\":");
    put_json_str(b, e->body, strlen(e->body));
    web_buf_printf(b, ",\"severity\":%d,\"thread\":%lld}", e->severity,
                   (long long)e->thread);
  }
  web_buf_puts(b, "],\"markers\":[");
  for (size_t k = 0; k < w->nmarkers; k++) {
    const web_marker_t *m = &w->markers[(w->hmarkers + k) % WEB_MARKERS_MAX];
    web_buf_puts(b, k ? ",[" : "[");
    put_num(b, m->t_ms);
    web_buf_puts(b, ",");
    put_json_str(b, m->body ? m->body : "", m->body ? strlen(m->body) : 0);
    web_buf_puts(b, "]");
  }
  web_buf_puts(b, "],\"gc_pauses\":[");
  for (size_t k = 0; k < w->npauses; k++) {
    const web_point_t *p = &w->pauses[(w->hpauses + k) % WEB_PAUSES_MAX];
    web_buf_puts(b, k ? ",[" : "[");
    put_num(b, p->t_ms);
    web_buf_puts(b, ",");
    put_num(b, p->v);
    web_buf_puts(b, "]");
  }
  web_buf_puts(b, "],\"threads\":[");
  for (size_t k = 0; k < w->nthreads; k++) {
    const web_thread_t *t = &w->threads[k];
    web_buf_printf(b, "%s{\"id\":%lld,\"label\":", k ? "," : "",
                   (long long)t->id);
    if (t->label) put_json_str(b, t->label, strlen(t->label));
    else web_buf_puts(b, "null");
    web_buf_puts(b, ",\"state\":");
    if (t->state) put_json_str(b, t->state, strlen(t->state));
    else web_buf_puts(b, "null");
    web_buf_puts(b, ",\"status\":");
    if (t->status) put_json_str(b, t->status, strlen(t->status));
    else web_buf_puts(b, "null");
    web_buf_printf(b, ",\"cap\":%lld,\"t\":", (long long)t->cap);
    put_num(b, t->t_ms);
    web_buf_puts(b, "}");
  }
  web_buf_puts(b, "]}");
}
