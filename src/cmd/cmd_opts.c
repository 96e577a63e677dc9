/* cmd_opts.c: the unknown-option check of the commands whose options are
 * the source options plus a few of their own taken out of argv first
 * (show, stats; cmd.h el__cmd_check_options), and the warning about an
 * option given twice with different values (daemon, watch, run, report;
 * cmd.h el__cmd_note_option). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/el_common.h"
#include "config/config.h"
#include "source/source.h"

int el__cmd_check_options(const char *cmd, int argc, char **argv,
                          void (*help)(FILE *f), el__cmd_seen_t *seen) {
  el_src_opts_t o;
  el_src_opts_init(&o);
  for (int i = 1; i < argc;) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 0;
    int start = i, rc = el_src_opts_parse(&o, argc, argv, &i);
    if (rc < 0) return 0; /* a bad value: the real parse says so */
    if (rc > 0) {
      if (seen) el__cmd_note_option(seen, argv, start, i);
      continue;
    }
    if (a[0] == '-' && a[1] != '\0') {
      el_opt_unknown(cmd, a, help);
      return 2;
    }
    i++;
  }
  if (seen) el__cmd_warn_repeated(seen, cmd);
  return 0;
}

/* {====== options given twice ======} */

static int listed(const char *const *list, const char *name) {
  for (size_t k = 0; list && list[k]; k++)
    if (!strcmp(list[k], name)) return 1;
  return 0;
}

/* The name (into name[64]) and value of the option argv[start..end);
 * the value is NULL when it is not followed. */
static const char *option_value(const el__cmd_seen_t *s, char **argv, int start,
                                int end, char *name) {
  const char *a = argv[start], *v = NULL;
  if (a[0] != '-' || !a[1]) return NULL;
  if (a[1] != '-') { /* -v LEVEL, -hX, -o PATH: as the command lists */
    size_t k = 0;
    while (s->shorts && s->shorts[k] && s->shorts[k][1] != a[1]) k += 2;
    if (!s->shorts || !s->shorts[k]) return NULL;
    snprintf(name, 64, "%s", s->shorts[k + 1]);
    return a[2] ? a + 2 : end - start == 2 ? argv[start + 1] : NULL;
  }
  const char *eq = strchr(a, '=');
  size_t n = eq ? (size_t)(eq - a) : strlen(a);
  if (n >= 64) return NULL;
  memcpy(name, a, n);
  name[n] = 0;
  v = eq ? eq + 1 : end - start == 2 ? argv[start + 1] : NULL;
  if (!v || listed(s->repeatable, name)) return NULL;
  /* a second source is refused (el_src_opts_validate: "give exactly one
   * eventlog source"), not replaced: no warning that says it is (h57) */
  if (!strcmp(name, "--eventlog-file") || !strcmp(name, "--eventlog-socket"))
    return NULL;
  const char *kv = strchr(v, '=');
  if (!strcmp(name, "--set") && kv) { /* per key: "--set KEY" */
    if ((size_t)(kv - v) + 7 > 64) return NULL;
    snprintf(name, 64, "--set %.*s", (int)(kv - v), v);
    v = kv + 1;
  }
  return v;
}

/* How the values of an option are compared: as text, or as what they
 * mean, so that "--lua-memory 1G --lua-memory 1024M" or "--web-port
 * 8080 --web-port=08080" are the same value given twice (h60). */
typedef enum { VAL_TEXT, VAL_SIZE, VAL_DURATION, VAL_NUMBER } val_kind_t;

static const struct {
  const char *name;
  val_kind_t kind;
} val_kinds[] = {
    /* sizes (el_parse_size: K, M, G, KiB...) */
    {"--lua-memory", VAL_SIZE},
    {"--sort-memory", VAL_SIZE},
    /* durations (el_cfg_parse_duration: "1s", "1.0s", "2x") */
    {"--export-interval", VAL_DURATION},
    /* plain numbers: seconds, counts, ports ("1", "1.0", "01") */
    {"--eventlog-flush-interval", VAL_NUMBER},
    {"--eventlog-socket-timeout", VAL_NUMBER},
    {"--eventlog-socket-exponent", VAL_NUMBER},
    {"--eventlog-socket-max-delay", VAL_NUMBER},
    {"--eventlog-socket-retries", VAL_NUMBER},
    {"--eventlog-drain-timeout", VAL_NUMBER},
    {"--eventlog-socket-port", VAL_NUMBER},
    {"--otelcol-port", VAL_NUMBER},
    {"--web-port", VAL_NUMBER},
    {"--prometheus-port", VAL_NUMBER},
    {"--control-port", VAL_NUMBER},
    {"--control-cors-max-age", VAL_NUMBER},
    {"--otlp-queue-bytes", VAL_NUMBER},
    {"--otlp-queue-items", VAL_NUMBER},
    {"--otlp-max-message-bytes", VAL_NUMBER},
    {"--otlp-shutdown-timeout", VAL_NUMBER},
    {"--handler-budget-ms", VAL_NUMBER},
    {"--store-mb", VAL_NUMBER},
    {"--top", VAL_NUMBER},
    {"--columns", VAL_NUMBER},
};

/* A finite decimal number, the whole of s; 0, or -1. */
static int number_of(const char *s, double *out) {
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  return end != s && !*end && !errno && isfinite(*out) ? 0 : -1;
}

/* 1 when the values a and b of option name mean the same: equal text, or
 * equal once parsed as the option's kind (both must parse; a value that
 * does not is compared as text, and its own parser refuses it). */
static int same_value(const char *name, const char *a, const char *b) {
  if (!strcmp(a, b)) return 1;
  val_kind_t kind = VAL_TEXT;
  for (size_t k = 0; k < EL_ARRAY_LEN(val_kinds); k++)
    if (!strcmp(val_kinds[k].name, name)) kind = val_kinds[k].kind;
  char err[8];
  uint64_t na, nb;
  el_cfg_strategy_t da, db;
  double xa, xb;
  switch (kind) {
  case VAL_SIZE:
    return !el_parse_size(a, 0, UINT64_MAX, &na, err, sizeof err) &&
           !el_parse_size(b, 0, UINT64_MAX, &nb, err, sizeof err) && na == nb;
  case VAL_DURATION:
    return !el_cfg_parse_duration(a, &da) && !el_cfg_parse_duration(b, &db) &&
           da.kind == db.kind && da.ms == db.ms && da.times == db.times;
  case VAL_NUMBER:
    return !number_of(a, &xa) && !number_of(b, &xb) && xa == xb;
  case VAL_TEXT:
    break;
  }
  return 0;
}

void el__cmd_note_option(el__cmd_seen_t *s, char **argv, int start, int end) {
  char name[64];
  const char *v = option_value(s, argv, start, end, name);
  if (!v) return;
  for (int k = 0; k < s->n; k++) {
    struct el__cmd_seen_opt_s *o = &s->opt[k];
    if (strcmp(o->name, name)) continue;
    o->count++;
    o->differs |= !same_value(name, o->first, v);
    o->last = v;
    return;
  }
  if (s->n == EL__CMD_MAX_SEEN) return;
  struct el__cmd_seen_opt_s *o = &s->opt[s->n++];
  memcpy(o->name, name, sizeof name);
  o->first = o->last = v;
  o->count = 1;
}

void el__cmd_warn_repeated(const el__cmd_seen_t *s, const char *cmd) {
  for (int k = 0; k < s->n; k++) {
    const struct el__cmd_seen_opt_s *o = &s->opt[k];
    if (!o->differs) continue;
    const char *pre = strcmp(o->name, "-h") ? "" : "-h";
    const char *why = strcmp(o->name, "--config")
                          ? ""
                          : " (configuration files are not merged)";
    const char *c = cmd ? cmd : "", *sep = cmd ? ": " : "";
    if (o->count == 2)
      el_log(EL_LOG_WARN,
             "%s%s%s given twice ('%s%s', then '%s%s'): the last one is "
             "used%s",
             c, sep, o->name, pre, o->first, pre, o->last, why);
    else
      el_log(EL_LOG_WARN,
             "%s%s%s given %d times (first '%s%s', last '%s%s'): the last "
             "one is used%s",
             c, sep, o->name, o->count, pre, o->first, pre, o->last, why);
  }
}
