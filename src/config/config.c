/* config.c: loading the YAML configuration with libyaml's document API,
 * the enabling and defaulting rules, and window resolution.
 * Spec: ../shared/spec/reference-behaviour.md §3; semantics in config.h. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../common/el_grow.h"
#include "config_internal.h"

#define MAX_FILE_BYTES (16u << 20)  /* refuse absurd configuration files */

struct el_cfg_s {
  el_cfg_proc_t *procs;      /* el__cfg_nprocs entries, table order */
  bool from_file;            /* a file was loaded */
  uint64_t batch_ms;         /* from el_cfg_resolve */
  el_cfg_diag_t diag;
  el_cfg_warn_fn warn;
  void *warn_ud;
  int web_ports[2];          /* web.prometheus_port, web.web_port; -1 */
  char web_hosts[2][256];    /* web.prometheus_host, web.web_host; "" */
};

/* State of one load. */
typedef struct load_s {
  el_cfg_t *c;
  const char *file;
  yaml_document_t *doc;
  el_cfg_proc_t *procs;      /* the settings being built */
  int err;                   /* first error, 0 if none */
  unsigned merges;           /* mappings merged through `<<` so far */
  unsigned warnings;         /* warnings raised (shown: MAX_WARNINGS) */
} load_t;

/* Bounds on hostile files (libyaml's scanner is quadratic in the nesting
 * depth; the key walk in a mapping's size). A real file nests 5 levels
 * and has a few keys per mapping. */
#define MAX_DEPTH 32
#define MAX_KEYS 1000
#define MAX_WARNINGS 20u

/* Mappings a file may merge through `<<` in all: aliases make the walk
 * exponential in the nesting (a "merge bomb"); real files merge a few. */
#define MAX_MERGES 10000u

static void default_warn(void *ud, const char *msg) {
  (void)ud;
  el_log(EL_LOG_WARN, "%s", msg);
}

/* {====== settings arrays ======} */

static void procs_clear(el_cfg_proc_t *procs) {
  if (!procs) return;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    el_free(procs[i].name);
    el_free(procs[i].description);
  }
  el_free(procs);
}

/* Fills procs[i] with the table defaults; present/enabled per the default
 * file (every processor is listed there). Returns 0 or EL_ENOMEM. */
static int proc_defaults(el_cfg_proc_t *p, const el_cfg_proc_info_t *info) {
  memset(p, 0, sizeof *p);
  p->info = info;
  p->name = el_strdup(info->name);
  p->description = el_strdup(info->description);
  if (!p->name || !p->description) return EL_ENOMEM;
  if (info->aggregate) el_cfg_parse_strategy(info->aggregate, &p->aggregate);
  el_cfg_parse_strategy(info->export_, &p->export_);
  p->max_threads = el_cfg_max_threads_default(info);
  p->present = true;
  p->enabled = el_cfg_strategy_on(&p->export_);
  return 0;
}

static el_cfg_proc_t *procs_new_defaults(void) {
  el_cfg_proc_t *procs = el_calloc(el__cfg_nprocs, sizeof *procs);
  if (!procs) return NULL;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    if (proc_defaults(&procs[i], &el__cfg_procs[i]) < 0) {
      procs_clear(procs);
      return NULL;
    }
  }
  return procs;
}

el_cfg_t *el_cfg_new(void) {
  el_cfg_t *c = el_calloc(1, sizeof *c);
  if (!c) return NULL;
  c->procs = procs_new_defaults();
  if (!c->procs) {
    el_free(c);
    return NULL;
  }
  c->warn = default_warn;
  c->web_ports[0] = c->web_ports[1] = -1;
  el_cfg_resolve(c, 1000);
  return c;
}

void el_cfg_free(el_cfg_t *c) {
  if (!c) return;
  procs_clear(c->procs);
  el_free(c);
}

void el_cfg_set_warn(el_cfg_t *c, el_cfg_warn_fn fn, void *ud) {
  c->warn = fn;
  c->warn_ud = ud;
}

const el_cfg_diag_t *el_cfg_diag(const el_cfg_t *c) { return &c->diag; }

/* {====== strategies ======} */

bool el_cfg_strategy_on(const el_cfg_strategy_t *s) {
  switch (s->kind) {
  case EL_CFG_BOOL: return s->b;
  case EL_CFG_TIMES: return s->times > 0;
  case EL_CFG_SECONDS: return s->positive;
  default: return false;
  }
}

static bool is_null_text(const char *t) {
  return !*t || !strcmp(t, "~") || !strcmp(t, "null") ||
         !strcmp(t, "Null") || !strcmp(t, "NULL");
}

static int bool_text(const char *t) {
  if (!strcmp(t, "true") || !strcmp(t, "True") || !strcmp(t, "TRUE"))
    return 1;
  if (!strcmp(t, "false") || !strcmp(t, "False") || !strcmp(t, "FALSE"))
    return 0;
  return -1;
}

/* Whole numbers of a duration saturate here: any window past
 * EL_CFG_MAX_WINDOW_MS (10^9 s) is capped by el_cfg_resolve anyway, and
 * 10^13 * 1000 ms still fits in 64 bits. */
#define DURATION_SATURATE UINT64_C(10000000000000)

/* "<digits>[.<digits>]s" or "<digits>x" (spec §3.3 grammar): the one
 * grammar of durations, in the file and on the command line. Any number
 * of digits; a value past the longest window saturates (then capped). */
static int duration_text(const char *t, el_cfg_strategy_t *out) {
  const char *p = t;
  uint64_t whole = 0;
  bool positive = false;   /* some digit is not 0 */
  if (*p < '0' || *p > '9') return EL_EINVAL;
  for (; *p >= '0' && *p <= '9'; p++) {
    whole = whole * 10 + (uint64_t)(*p - '0');
    if (whole > DURATION_SATURATE) whole = DURATION_SATURATE;
    positive |= *p != '0';
  }
  uint64_t frac_ms = 0;  /* fraction in ms, rounded half up */
  bool has_frac = false;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9') return EL_EINVAL;
    has_frac = true;
    unsigned digits = 0;
    uint64_t num = 0;  /* first 4 digits */
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
      if (digits < 4) num = num * 10 + (uint64_t)(*p - '0');
      positive |= *p != '0';
    }
    for (; digits < 4; digits++) num *= 10;
    frac_ms = (num + 5) / 10;
  }
  if (p[0] == 's' && p[1] == 0) {
    out->kind = EL_CFG_SECONDS;
    out->ms = whole * 1000 + frac_ms;
    out->positive = positive;
    return 0;
  }
  if (p[0] == 'x' && p[1] == 0 && !has_frac) {
    out->kind = EL_CFG_TIMES;
    out->times = whole;
    return 0;
  }
  return EL_EINVAL;
}

int el_cfg_parse_duration(const char *text, el_cfg_strategy_t *out) {
  el_cfg_strategy_t s = {0};
  if (!text || duration_text(text, &s) < 0) return EL_EINVAL;
  *out = s;
  return 0;
}

/* The seconds of v as the grammar writes them ("0.5", "120"), or ""
 * when v is out of the range a hint can spell. */
static const char *seconds_text(double v, char *buf, size_t len) {
  if (!(v >= 1e-4 && v < 1e12)) return "";
  snprintf(buf, len, "%.15g", v);
  return buf;
}

/* The unit words a mistaken duration may end in, and their seconds. */
static const struct {
  const char *unit;
  double seconds;
} hint_units[] = {{"", 1},     {"s", 1},    {"ms", 1e-3}, {"m", 60},
                  {"min", 60}, {"h", 3600}, {"x", 0}};

const char *el_cfg_duration_hint(const char *text, char *buf, size_t len) {
  char num[64], secs[64];
  size_t n = text ? strspn(text, "0123456789.eE+-") : 0;
  if (len) buf[0] = 0;
  if (!len || n == 0 || n >= sizeof num) return buf;
  memcpy(num, text, n);
  num[n] = 0;
  char *end;
  double v = strtod(num, &end);
  if (*end || !isfinite(v)) return buf;
  if (v < 0) {
    snprintf(buf, len, "a duration cannot be negative");
    return buf;
  }
  for (size_t i = 0; i < EL_ARRAY_LEN(hint_units); i++) {
    if (strcmp(text + n, hint_units[i].unit)) continue;
    bool whole = v == floor(v) && v < 1e15;
    if (!strcmp(hint_units[i].unit, "x")) {
      if (whole)
        snprintf(buf, len, "write %.0fx: plain digits only", v);
      else
        snprintf(buf, len, "\"<N>x\" takes a whole number; write seconds");
    } else if (!*seconds_text(v * hint_units[i].seconds, secs, sizeof secs)) {
      break;
    } else if (i == 0 && whole) {
      snprintf(buf, len,
               "no unit: write %ss (seconds) or %sx (flush "
               "intervals)",
               secs, secs);
    } else if (i == 0) {
      snprintf(buf, len, "no unit: write %ss (seconds)", secs);
    } else if (i == 1) {
      snprintf(buf, len, "write %ss: plain digits only", secs);
    } else {
      snprintf(buf, len,
               "write %ss: durations are in seconds (\"<N>s\") "
               "or flush intervals (\"<N>x\")",
               secs);
    }
    break;
  }
  return buf;
}

int el_cfg_parse_strategy(const char *text, el_cfg_strategy_t *out) {
  el_cfg_strategy_t s = {0};
  if (is_null_text(text)) {
    *out = s;
    return 0;
  }
  int b = bool_text(text);
  if (b >= 0) {
    s.kind = EL_CFG_BOOL;
    s.b = b;
    *out = s;
    return 0;
  }
  if (duration_text(text, &s) < 0) return EL_EINVAL;
  *out = s;
  return 0;
}

/* {====== diagnostics ======} */

static void set_error(load_t *L, const yaml_mark_t *m, const char *key,
                      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set_error(load_t *L, const yaml_mark_t *m, const char *key,
                      const char *fmt, ...) {
  if (L->err) return;  /* keep the first error */
  el_cfg_diag_t *d = &L->c->diag;
  L->err = EL_ECONFIG;
  d->code = EL_ECONFIG;
  snprintf(d->file, sizeof d->file, "%s", L->file);
  d->line = m ? (int)m->line + 1 : 0;
  d->column = m ? (int)m->column + 1 : 0;
  snprintf(d->key, sizeof d->key, "%s", key ? key : "");
  char text[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (key && *key)
    snprintf(d->msg, sizeof d->msg, "%s:%d:%d: %s: %s", d->file, d->line,
             d->column, key, text);
  else
    snprintf(d->msg, sizeof d->msg, "%s:%d:%d: %s", d->file, d->line,
             d->column, text);
}

static void warn(load_t *L, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(load_t *L, const yaml_mark_t *m, const char *fmt, ...) {
  if (!L->c->warn || ++L->warnings > MAX_WARNINGS) return;
  char text[384], msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  snprintf(msg, sizeof msg, "%s:%d:%d: %s", L->file, (int)m->line + 1,
           (int)m->column + 1, text);
  L->c->warn(L->c->warn_ud, msg);
}

size_t el_cfg_edit_distance(const char *a, const char *b) {
  return el_edit_distance(a, b);
}

/* Warns about unknown key k at m, suggesting the nearest of cands[0..n). */
static void unknown_key(load_t *L, const yaml_mark_t *m, const char *path,
                        const char *k, const char *const *cands, size_t n) {
  const char *best = NULL;
  size_t bestd = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    size_t d = el_cfg_edit_distance(k, cands[i]);
    if (d < bestd) {
      bestd = d;
      best = cands[i];
    }
  }
  size_t limit = strlen(k) / 2 > 3 ? strlen(k) / 2 : 3;
  if (best && bestd <= limit)
    warn(L, m, "unknown key '%s' in %s (ignored); did you mean '%s'?", k,
         path, best);
  else
    warn(L, m, "unknown key '%s' in %s (ignored)", k, path);
}

/* {====== YAML walking ======} */

static const char *node_kind(const yaml_node_t *n) {
  switch (n->type) {
  case YAML_SCALAR_NODE: return "a scalar";
  case YAML_SEQUENCE_NODE: return "a sequence";
  case YAML_MAPPING_NODE: return "a mapping";
  default: return "nothing";
  }
}

static const char *scalar(const yaml_node_t *n) {
  return (const char *)n->data.scalar.value;
}

/* A plain null scalar (`key:`, `~`, `null`), or a missing node. */
static bool is_null(const yaml_node_t *n) {
  return !n || (n->type == YAML_SCALAR_NODE &&
                n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                is_null_text(scalar(n)));
}

typedef void (*pair_fn)(load_t *L, const char *path, const yaml_node_t *k,
                        const yaml_node_t *v, void *ud);

/* Calls fn for each key/value of mapping m. Keys of `<<` merge mappings
 * come first so explicit keys override them. Duplicate explicit keys and
 * non-scalar keys are errors. */
static void each_pair(load_t *L, const char *path, const yaml_node_t *m,
                      pair_fn fn, void *ud, int depth) {
  yaml_node_pair_t *a = m->data.mapping.pairs.start;
  yaml_node_pair_t *end = m->data.mapping.pairs.top;
  if (depth > 8) {
    set_error(L, &m->start_mark, path, "merge keys nested too deeply");
    return;
  }
  if (end - a > MAX_KEYS) {
    set_error(L, &m->start_mark, path, "a mapping with more than %d keys",
              MAX_KEYS);
    return;
  }
  if (depth > 0 && ++L->merges > MAX_MERGES) {
    set_error(L, &m->start_mark, path,
              "merge keys ('<<') expand to more than %u mappings",
              MAX_MERGES);
    return;
  }
  for (yaml_node_pair_t *p = a; p < end && !L->err; p++) {
    const yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(L->doc, p->value);
    if (!k || k->type != YAML_SCALAR_NODE) {
      set_error(L, k ? &k->start_mark : &m->start_mark, path,
                "expected a string key, found %s",
                k ? node_kind(k) : "nothing");
      return;
    }
    if (strcmp(scalar(k), "<<") || !v) continue;
    if (v->type == YAML_MAPPING_NODE) {
      each_pair(L, path, v, fn, ud, depth + 1);
    } else if (v->type == YAML_SEQUENCE_NODE) {
      for (yaml_node_item_t *it = v->data.sequence.items.start;
           it < v->data.sequence.items.top && !L->err; it++) {
        const yaml_node_t *mv = yaml_document_get_node(L->doc, *it);
        if (mv && mv->type == YAML_MAPPING_NODE)
          each_pair(L, path, mv, fn, ud, depth + 1);
        else
          set_error(L, &v->start_mark, path, "'<<' expects mappings");
      }
    } else {
      set_error(L, &v->start_mark, path, "'<<' expects a mapping");
    }
  }
  for (yaml_node_pair_t *p = a; p < end && !L->err; p++) {
    const yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
    if (!strcmp(scalar(k), "<<")) continue;
    for (yaml_node_pair_t *q = a; q < p; q++) {
      const yaml_node_t *kq = yaml_document_get_node(L->doc, q->key);
      if (!strcmp(scalar(kq), scalar(k))) {
        set_error(L, &k->start_mark, path, "duplicate key '%s'", scalar(k));
        return;
      }
    }
    fn(L, path, k, yaml_document_get_node(L->doc, p->value), ud);
  }
}

/* Requires v to be a mapping or null; returns true for a mapping. */
static bool want_mapping(load_t *L, const char *path, const yaml_node_t *k,
                         const yaml_node_t *v, const char *what) {
  if (is_null(v)) return false;
  if (v->type == YAML_MAPPING_NODE) return true;
  set_error(L, &v->start_mark, path, "expected %s (a mapping), found %s",
            what, node_kind(v));
  return false;
}

/* {====== processor entries ======} */

typedef struct entry_s {
  el_cfg_proc_t *p;
  bool export_set;           /* the entry itself gave `export` */
} entry_t;

static void set_string(load_t *L, const char *path, const yaml_node_t *v,
                       char **dst, bool nonempty) {
  if (is_null(v)) return;    /* null = absent: keep the default */
  if (v->type != YAML_SCALAR_NODE) {
    set_error(L, &v->start_mark, path, "expected a string, found %s",
              node_kind(v));
    return;
  }
  if (nonempty && !*scalar(v)) {
    set_error(L, &v->start_mark, path, "expected a non-empty string");
    return;
  }
  if (strlen(scalar(v)) != v->data.scalar.length) { /* "\0" in quotes */
    set_error(L, &v->start_mark, path,
              "the string holds a NUL character (\\0), which no name or "
              "description may");
    return;
  }
  char *s = el_strdup(scalar(v));
  if (!s) {
    set_error(L, &v->start_mark, path, "out of memory");
    L->err = EL_ENOMEM;
    return;
  }
  el_free(*dst);
  *dst = s;
}

/* A whole number 0..2^32-1 (null = absent: keep the default). */
static void set_count(load_t *L, const char *path, const yaml_node_t *v,
                      uint64_t *dst) {
  if (is_null(v)) return;
  const char *t = v->type == YAML_SCALAR_NODE ? scalar(v) : "";
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull(t, &end, 10);
  if (!*t || *end || *t == '-' || errno || n > 0xffffffffull) {
    set_error(L, &v->start_mark, path,
              "expected a whole number 0..4294967295, found '%s'",
              v->type == YAML_SCALAR_NODE ? t : node_kind(v));
    return;
  }
  *dst = n;
}

static void set_strategy(load_t *L, const char *path, const yaml_node_t *v,
                         el_cfg_strategy_t *dst, bool *was_set) {
  if (is_null(v)) return;
  el_cfg_strategy_t s;
  if (v->type != YAML_SCALAR_NODE) {
    set_error(L, &v->start_mark, path,
              "expected true, false, \"<N>x\" or \"<N>s\", found %s",
              node_kind(v));
    return;
  }
  /* A quoted "true" is a string, not a boolean (YAML): say so rather
   * than list true among the expected values. */
  bool plain = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  int b = bool_text(scalar(v));
  if (!plain && b >= 0) {
    const char *prop = strrchr(path, '.');
    set_error(L, &v->start_mark, path,
              "'%s' in quotes is a string, not a boolean: drop the quotes "
              "(%s: %s)",
              scalar(v), prop ? prop + 1 : path, scalar(v));
    return;
  }
  memset(&s, 0, sizeof s);
  if (b >= 0) {
    s.kind = EL_CFG_BOOL;
    s.b = b;
  } else if (duration_text(scalar(v), &s) < 0) {
    char hint[160];
    el_cfg_duration_hint(scalar(v), hint, sizeof hint);
    set_error(L, &v->start_mark, path,
              "expected true, false, \"<N>x\" (N whole flush intervals) or"
              " \"<N>s\" (seconds), found '%s'%s%s%s",
              scalar(v), *hint ? " (" : "", hint, *hint ? ")" : "");
    return;
  }
  /* Spec §3.3 keeps it (on, every batch interval / no aggregation), but
   * a value under the 1 ms resolution is most likely a typo: say so. */
  if (s.kind == EL_CFG_SECONDS && s.positive && s.ms == 0)
    warn(
        L, &v->start_mark,
        "%s: '%s' is under 1 ms, the resolution: taken as %s", path, scalar(v),
        strstr(path, ".aggregate") ? "no aggregation" : "every batch interval");
  *dst = s;
  if (was_set) *was_set = true;
}

static void entry_pair(load_t *L, const char *path, const yaml_node_t *k,
                       const yaml_node_t *v, void *ud) {
  entry_t *e = ud;
  const char *key = scalar(k);
  bool metric = e->p->info->group == EL_CFG_METRICS;
  char sub[128];
  snprintf(sub, sizeof sub, "%s.%s", path, key);
  if (!strcmp(key, "name")) {
    set_string(L, sub, v, &e->p->name, true);
  } else if (!strcmp(key, "description")) {
    set_string(L, sub, v, &e->p->description, false);
  } else if (!strcmp(key, "export")) {
    set_strategy(L, sub, v, &e->p->export_, &e->export_set);
  } else if (!strcmp(key, "aggregate") && metric) {
    set_strategy(L, sub, v, &e->p->aggregate, NULL);
  } else if (!strcmp(key, "aggregate")) {
    warn(L, &k->start_mark,
         "'aggregate' applies to metric processors only; ignored in %s",
         path);
  } else if (!strcmp(key, "max_threads") &&
             el_cfg_max_threads_default(e->p->info)) {
    set_count(L, sub, v, &e->p->max_threads);
  } else {
    const char *cands[] = {"name", "description", "export", "aggregate",
                           "max_threads"};
    unknown_key(L, &k->start_mark, path, key, cands,
                el_cfg_max_threads_default(e->p->info) ? 5
                : metric                               ? 4
                                                       : 3);
  }
}

/* Applies one processor entry (`heap_size: {...}` or `heap_size:`). */
static void apply_entry(load_t *L, const char *path, const yaml_node_t *k,
                        const yaml_node_t *v, el_cfg_proc_t *p) {
  entry_t e = {p, false};
  if (p->present) {
    set_error(L, &k->start_mark, path, "processor given twice");
    return;
  }
  p->present = true;
  p->line = (int)k->start_mark.line + 1;
  p->column = (int)k->start_mark.column + 1;
  if (want_mapping(L, path, k, v, "processor settings"))
    each_pair(L, path, v, entry_pair, &e, 0);
  p->enabled = e.export_set ? el_cfg_strategy_on(&p->export_) : true;
}

/* 9aeb052's profile keys, renamed in 0.7.0.0 (spec §3.1, §11). */
static const struct {
  const char *old, *new_;
} aliases[] = {{"stack_sample", "call_stack_profile"},
               {"cost_centre_sample", "cost_centre_stack_profile"}};

static void group_pair(load_t *L, const char *path, const yaml_node_t *k,
                       const yaml_node_t *v, void *ud) {
  el_cfg_group_t g = *(el_cfg_group_t *)ud;
  const char *key = scalar(k);
  if (!strcmp(key, "defaults")) return;  /* anchors only */
  for (size_t i = 0; i < EL_ARRAY_LEN(aliases); i++) {
    if (g == EL_CFG_PROFILES && !strcmp(key, aliases[i].old)) {
      warn(L, &k->start_mark, "'%s' is the old name of '%s'; using it",
           key, aliases[i].new_);
      key = aliases[i].new_;
    }
  }
  char sub[128];
  snprintf(sub, sizeof sub, "%s.%s", path, key);
  const char *cands[32];
  size_t n = 0;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    if (el__cfg_procs[i].group != g) continue;
    if (!strcmp(el__cfg_procs[i].key, key)) {
      apply_entry(L, sub, k, v, &L->procs[i]);
      return;
    }
    if (n < EL_ARRAY_LEN(cands)) cands[n++] = el__cfg_procs[i].key;
  }
  unknown_key(L, &k->start_mark, path, key, cands, n);
}

static void processors_pair(load_t *L, const char *path,
                            const yaml_node_t *k, const yaml_node_t *v,
                            void *ud) {
  const char *key = scalar(k);
  if (!strcmp(key, "defaults")) return;
  char sub[128];
  snprintf(sub, sizeof sub, "%s.%s", path, key);
  for (int g = 0; g < EL_CFG_NGROUPS; g++) {
    if (strcmp(key, el_cfg_group_name(g))) continue;
    el_cfg_group_t gg = g;
    if (want_mapping(L, sub, k, v, "a group of processors"))
      each_pair(L, sub, v, group_pair, &gg, 0);
    return;
  }
  const char *cands[] = {"logs", "metrics", "traces", "profiles"};
  unknown_key(L, &k->start_mark, path, key, cands, 4);
}

/* web: {prometheus_port: PORT, web_port: PORT, prometheus_host: HOST,
 * web_host: HOST} (docs/web.md, docs/security.md). */
static void web_pair(load_t *L, const char *path, const yaml_node_t *k,
                     const yaml_node_t *v, void *ud) {
  static const char *const keys[] = {"prometheus_port", "web_port",
                                     "prometheus_host", "web_host"};
  const char *key = scalar(k);
  char full[160]; /* the key's path, for messages */
  snprintf(full, sizeof full, "%s.%s", path, key);
  (void)ud;
  for (int i = 2; i < 4; i++) {
    if (strcmp(key, keys[i])) continue;
    const char *t = v && v->type == YAML_SCALAR_NODE ? scalar(v) : "";
    size_t n = strlen(t), bad = n == 0 || n >= sizeof L->c->web_hosts[0];
    for (size_t j = 0; j < n && !bad; j++)
      bad = (unsigned char)t[j] <= ' ' || t[j] == 0x7f;
    if (bad)
      set_error(L, &v->start_mark, full,
                "expected an address or host name to listen on "
                "(1..255 bytes, no spaces), got '%s'",
                t);
    else
      memcpy(L->c->web_hosts[i - 2], t, n + 1);
    return;
  }
  for (int i = 0; i < 2; i++) {
    if (strcmp(key, keys[i])) continue;
    char *end = NULL;
    const char *t = v && v->type == YAML_SCALAR_NODE ? scalar(v) : "";
    long port = strtol(t, &end, 10);
    if (!*t || *end || port < 0 || port > 65535)
      set_error(L, &v->start_mark, full,
                "expected a port number 0..65535, got '%s'", t);
    else
      L->c->web_ports[i] = (int)port;
    return;
  }
  unknown_key(L, &k->start_mark, path, key, keys, 4);
}

static void root_pair(load_t *L, const char *path, const yaml_node_t *k,
                      const yaml_node_t *v, void *ud) {
  const char *key = scalar(k);
  if (!strcmp(key, "defaults")) return;
  if (!strcmp(key, "processors")) {
    if (want_mapping(L, "processors", k, v, "processor groups"))
      each_pair(L, "processors", v, processors_pair, NULL, 0);
    return;
  }
  if (!strcmp(key, "web")) {
    if (want_mapping(L, "web", k, v, "web endpoint ports"))
      each_pair(L, "web", v, web_pair, NULL, 0);
    return;
  }
  const char *cands[] = {"processors", "defaults", "web"};
  unknown_key(L, &k->start_mark, "the top level", key, cands, 3);
}

/* {====== loading ======} */

/* A file that turns nothing on is most likely a mistake: say so. A
 * processor left out of a file is disabled, so that is the case when the
 * file lists none (e.g. its one key a misspelt name, warned about above)
 * or when each one listed says `export: false`, `0s` or `0x`. */
static void warn_all_disabled(load_t *L) {
  const el_cfg_proc_t *first = NULL; /* the first listed, in the file */
  int listed = 0;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    const el_cfg_proc_t *p = &L->procs[i];
    if (p->enabled) return;
    if (!p->present) continue;
    listed++;
    if (!first || p->line < first->line ||
        (p->line == first->line && p->column < first->column))
      first = p;
  }
  yaml_mark_t m = {0, 0, 0};
  if (!first) {
    warn(L, &m,
         "no processor is listed under 'processors': every processor is "
         "disabled (--print-defaults lists them)");
    return;
  }
  const el_cfg_strategy_t *ex = &first->export_;
  const char *text = ex->kind == EL_CFG_BOOL    ? "false"
                     : ex->kind == EL_CFG_TIMES ? "0x"
                                                : "0s";
  m.line = (size_t)first->line - 1;
  m.column = (size_t)first->column - 1;
  if (listed == 1)
    warn(L, &m,
         "export: %s disables processors.%s.%s, the only processor "
         "listed: the file turns every processor off",
         text, el_cfg_group_name(first->info->group), first->info->key);
  else
    warn(L, &m,
         "every processor listed is disabled by its own export (false, 0s "
         "or 0x): the file turns every processor off");
}

static void walk_document(load_t *L) {
  const yaml_node_t *root = yaml_document_get_root_node(L->doc);
  yaml_mark_t m = {0, 0, 0};
  if (is_null(root)) {
    warn(L, &m, "the configuration is empty: every processor is disabled");
    return;
  }
  if (root->type != YAML_MAPPING_NODE) {
    set_error(L, &root->start_mark, "",
              "expected a mapping with key 'processors', found %s",
              node_kind(root));
    return;
  }
  each_pair(L, "", root, root_pair, NULL, 0);
  if (!L->err) warn_all_disabled(L);
}

/* Refuses nesting deeper than MAX_DEPTH before libyaml builds the
 * document (reading stops there). Syntax errors are left to the load. */
static void prescan(load_t *L, const char *text, size_t len) {
  yaml_parser_t p;
  yaml_event_t ev;
  if (!yaml_parser_initialize(&p)) {
    L->err = EL_ENOMEM;
    return;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  int depth = 0;
  while (!L->err && yaml_parser_parse(&p, &ev)) {
    yaml_event_type_t t = ev.type;
    if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
      if (++depth > MAX_DEPTH)
        set_error(L, &ev.start_mark, "", "nested more than %d levels deep",
                  MAX_DEPTH);
    } else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
      depth--;
    }
    yaml_event_delete(&ev);
    if (t == YAML_STREAM_END_EVENT) break;
  }
  yaml_parser_delete(&p);
}

int el_cfg_load_string(el_cfg_t *c, const char *name, const char *text,
                       size_t len) {
  load_t L = {.c = c, .file = name};
  memset(&c->diag, 0, sizeof c->diag);
  yaml_parser_t parser;
  yaml_document_t doc;
  prescan(&L, text, len);
  if (L.err) return L.err;
  if (!yaml_parser_initialize(&parser)) return EL_ENOMEM;
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &doc)) {
    const char *ctx = parser.context ? parser.context : "";
    if (parser.error == YAML_READER_ERROR) {
      /* The reader gives a byte offset, not a mark. */
      yaml_mark_t m = {0, 0, 0};
      for (size_t i = 0; i < parser.problem_offset && i < len; i++) {
        if (text[i] == '\n') {
          m.line++;
          m.column = 0;
        } else {
          m.column++;
        }
      }
      parser.problem_mark = m;
    }
    size_t at = parser.problem_mark.index;
    const char *tab =
        parser.error == YAML_SCANNER_ERROR && at < len && text[at] == '\t'
            ? " (a tab: YAML indents with spaces only)"
            : "";
    set_error(&L, &parser.problem_mark, "", "YAML syntax error: %s%s%s%s",
              parser.problem ? parser.problem : "unknown problem",
              *ctx ? " " : "", ctx, tab);
    yaml_parser_delete(&parser);
    return L.err;
  }
  L.doc = &doc;
  L.procs = el_calloc(el__cfg_nprocs, sizeof *L.procs);
  if (!L.procs) {
    L.err = EL_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    if (proc_defaults(&L.procs[i], &el__cfg_procs[i]) < 0) {
      L.err = EL_ENOMEM;
      goto done;
    }
    L.procs[i].present = L.procs[i].enabled = false;
  }
  walk_document(&L);
  if (L.warnings > MAX_WARNINGS && c->warn) {
    char msg[300];
    snprintf(msg, sizeof msg, "%s: %u more warnings not shown", name,
             L.warnings - MAX_WARNINGS);
    c->warn(c->warn_ud, msg);
  }
  /* A second document is not part of the configuration. */
  yaml_document_t extra;
  if (!L.err && yaml_parser_load(&parser, &extra)) {
    if (yaml_document_get_root_node(&extra))
      set_error(&L, &yaml_document_get_root_node(&extra)->start_mark, "",
                "only one YAML document is allowed");
    yaml_document_delete(&extra);
  }
done:
  if (!L.err) {
    procs_clear(c->procs);
    c->procs = L.procs;
    c->from_file = true;
    el_cfg_resolve(c, 1000);
  } else {
    procs_clear(L.procs);
    if (L.err == EL_ENOMEM && !c->diag.code) {
      c->diag.code = EL_ENOMEM;
      snprintf(c->diag.msg, sizeof c->diag.msg, "%s: out of memory", name);
    }
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  return L.err;
}

int el_cfg_load_file(el_cfg_t *c, const char *path) {
  memset(&c->diag, 0, sizeof c->diag);
  FILE *f = fopen(path, "rbe");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int err = 0;
  if (!f) {
    err = -errno;
    goto fail;
  }
  errno = 0;
  for (;;) {
    if (len == cap) {
      if (len >= MAX_FILE_BYTES) {
        err = -EFBIG;
        goto fail;
      }
      if (el_grow(&buf, &cap, len + 4096, 1) < 0) {
        err = EL_ENOMEM;
        goto fail;
      }
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  if (ferror(f)) {
    err = errno ? -errno : -EIO;  /* e.g. EISDIR for a directory */
    goto fail;
  }
  fclose(f);
  err = el_cfg_load_string(c, path, buf, len);
  el_free(buf);
  return err;
fail:
  if (f) fclose(f);
  el_free(buf);
  c->diag.code = err;
  snprintf(c->diag.file, sizeof c->diag.file, "%s", path);
  snprintf(c->diag.msg, sizeof c->diag.msg,
           "%s: cannot read configuration file: %s", path, el_strerror(err));
  return err;
}

/* {====== resolution and access ======} */

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static uint64_t strategy_ms(const el_cfg_strategy_t *s, uint64_t flush_ms) {
  switch (s->kind) {
  case EL_CFG_BOOL: return s->b ? flush_ms : 0;
  case EL_CFG_TIMES:
    return s->times > UINT64_MAX / flush_ms ? UINT64_MAX
                                            : s->times * flush_ms;
  case EL_CFG_SECONDS: return s->ms;
  default: return 0;
  }
}

int el_cfg_resolve(el_cfg_t *c, uint64_t flush_ms) {
  if (flush_ms == 0) return EL_EINVAL;
  uint64_t batch = flush_ms;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    const el_cfg_proc_t *p = &c->procs[i];
    if (!p->present) continue;
    if (p->info->group == EL_CFG_METRICS &&
        p->aggregate.kind == EL_CFG_SECONDS && p->aggregate.ms)
      batch = gcd(batch, p->aggregate.ms);
    if (p->export_.kind == EL_CFG_SECONDS && p->export_.ms)
      batch = gcd(batch, p->export_.ms);
  }
  c->batch_ms = batch;
  /* A multiple of the batch interval, so that rounding up stays below. */
  uint64_t cap = EL_CFG_MAX_WINDOW_MS / batch * batch;
  if (cap == 0) cap = batch;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    el_cfg_proc_t *p = &c->procs[i];
    uint64_t ag = p->info->group == EL_CFG_METRICS
                      ? strategy_ms(&p->aggregate, flush_ms)
                      : 0;
    if (ag > cap) ag = cap;
    /* Seconds values of absent processors may not divide the batch
     * interval: round them to a whole number of batches. */
    if (ag % batch) ag = (ag / batch + 1) * batch;
    p->aggregate_ms = ag;
    uint64_t ex = strategy_ms(&p->export_, flush_ms);
    if (ex > cap) ex = cap;
    if (ex % batch) ex = (ex / batch + 1) * batch;
    p->export_ms = ex < batch ? batch : ex;
  }
  return 0;
}

uint64_t el_cfg_batch_ms(const el_cfg_t *c) { return c->batch_ms; }

void el_cfg_override_export(el_cfg_t *c, uint64_t ms) {
  if (!c || ms == 0) return;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    el_cfg_proc_t *p = &c->procs[i];
    if (!p->enabled) continue;
    p->export_.kind = EL_CFG_SECONDS;
    p->export_.ms = ms;
    p->export_.positive = true;
    p->present = true;
    /* An aggregation window longer than the export interval would leave
     * exports without a fresh point: shorten it to the interval. */
    if (p->aggregate.kind == EL_CFG_SECONDS && p->aggregate.ms > ms)
      p->aggregate.ms = ms;
  }
}

void el_cfg_override_aggregate_off(el_cfg_t *c, el_cfg_group_t g,
                                   const char *key) {
  if (!c) return;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    el_cfg_proc_t *p = &c->procs[i];
    if (p->info->group != g || strcmp(p->info->key, key)) continue;
    p->aggregate = (el_cfg_strategy_t){.kind = EL_CFG_BOOL, .b = false};
  }
}

void el_cfg_override_group(el_cfg_t *c, el_cfg_group_t g, bool on) {
  if (!c) return;
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    el_cfg_proc_t *p = &c->procs[i];
    if (p->info->group != g) continue;
    p->enabled = on;
    if (!on) continue;
    p->present = true;
    if (!el_cfg_strategy_on(&p->export_)) {
      p->export_.kind = EL_CFG_BOOL; /* every flush interval */
      p->export_.b = true;
    }
  }
}

const el_cfg_proc_t *el_cfg_proc_at(const el_cfg_t *c, size_t i) {
  return i < el__cfg_nprocs ? &c->procs[i] : NULL;
}

const el_cfg_proc_t *el_cfg_proc(const el_cfg_t *c, el_cfg_group_t group,
                                 const char *key) {
  for (size_t i = 0; i < el__cfg_nprocs; i++)
    if (el__cfg_procs[i].group == group && !strcmp(el__cfg_procs[i].key, key))
      return &c->procs[i];
  return NULL;
}

bool el_cfg_enabled(const el_cfg_t *c, el_cfg_group_t group,
                    const char *key) {
  const el_cfg_proc_t *p = el_cfg_proc(c, group, key);
  return p && p->enabled;
}

int el_cfg_web_port(const el_cfg_t *c, bool prometheus) {
  return c ? c->web_ports[prometheus ? 0 : 1] : -1;
}

const char *el_cfg_web_host(const el_cfg_t *c, bool prometheus) {
  const char *h = c ? c->web_hosts[prometheus ? 0 : 1] : "";
  return *h ? h : NULL;
}
