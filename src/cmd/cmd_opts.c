/* cmd_opts.c: the unknown-option check of the commands whose options are
 * the source options plus a few of their own taken out of argv first
 * (show, stats; cmd.h el__cmd_check_options), and the warning about an
 * option given twice with different values (daemon, watch, run, report;
 * cmd.h el__cmd_note_option). */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "common/el_common.h"
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

void el__cmd_note_option(el__cmd_seen_t *s, char **argv, int start, int end) {
  char name[64];
  const char *v = option_value(s, argv, start, end, name);
  if (!v) return;
  for (int k = 0; k < s->n; k++) {
    struct el__cmd_seen_opt_s *o = &s->opt[k];
    if (strcmp(o->name, name)) continue;
    o->count++;
    o->differs |= strcmp(o->first, v) != 0;
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
