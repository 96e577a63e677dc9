/* web_naming.c: the Prometheus metric and label names the OpenTelemetry
 * Collector's Prometheus exporter (pkg/translator/prometheus, contrib
 * 0.140) gives OTLP metrics and attribute keys; docs/web.md "Metric
 * names and labels" has the rules. Thread: any (pure). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "web_internal.h"

static const struct {
  const char *unit, *word;
} units[] = {
    {"d", "days"},          {"h", "hours"},
    {"min", "minutes"},     {"s", "seconds"},
    {"ms", "milliseconds"}, {"us", "microseconds"},
    {"ns", "nanoseconds"},  {"By", "bytes"},
    {"KiBy", "kibibytes"},  {"MiBy", "mebibytes"},
    {"GiBy", "gibibytes"},  {"TiBy", "tibibytes"},
    {"KBy", "kilobytes"},   {"MBy", "megabytes"},
    {"GBy", "gigabytes"},   {"TBy", "terabytes"},
    {"m", "meters"},        {"V", "volts"},
    {"A", "amperes"},       {"J", "joules"},
    {"W", "watts"},         {"g", "grams"},
    {"Cel", "celsius"},     {"Hz", "hertz"},
    {"%", "percent"},       {"1", ""},
};
static const struct {
  const char *unit, *word;
} per_units[] = {{"s", "second"}, {"m", "minute"}, {"h", "hour"}, {"d", "day"},
                 {"w", "week"},   {"mo", "month"}, {"y", "year"}};

#define MAX_TOKENS 64

typedef struct tokens_s {
  char text[512]; /* tokens, NUL-separated */
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
    len += (size_t)snprintf(joined + len,
                            len < sizeof joined ? sizeof joined - len : 0,
                            "%s%s", k ? "_" : "", w.tok[k]);
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
    len +=
        (size_t)snprintf(buf + len, size - len, "%s%s", k ? "_" : "", t.tok[k]);
  return len < size ? len : size - 1;
}

size_t el_web_prom_label(const char *key, char *buf, size_t size) {
  if (size == 0) return 0;
  size_t len = 0;
  const char *k = key ? key : "";
  if (isdigit((unsigned char)k[0]))
    len = (size_t)snprintf(buf, size, "key_");
  else if (k[0] == '_' && k[1] != '_')
    len = (size_t)snprintf(buf, size, "key");
  for (; *k && len + 1 < size; k++)
    buf[len++] = isalnum((unsigned char)*k) ? *k : '_';
  if (len >= size) len = size - 1;
  buf[len] = 0;
  return len;
}
