/* cmd_otelcol.c: the command line of the daemon `eventlog-live-otelcol`
 * (also `eventlog-live otelcol`): the reference tool's options
 * (spec/reference-behaviour.md §1.1) and the configuration file
 * (src/config); the pipeline itself is daemon.c. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "config/config.h"
#include "daemon.h"

#define PROG "eventlog-live-otelcol"

/* The embedding command's name ("watch"), NULL for the daemon itself. */
static const char *g_sub;
/* The embedding command's --help (el_otelcol_embed_t.help), or NULL. */
static void (*g_sub_help)(FILE *f);

/* A command-line message on stderr: the binary's one prefix
 * (el_prog_name()), then g_sub if set, then the message. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", el_prog_name());
  if (g_sub) fprintf(stderr, "%s: ", g_sub);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

/* {====== command line ======} */

typedef struct opts_s {
  el_daemon_opts_t d;   /* what the pipeline needs (daemon.h) */
  el_log_level_t level; /* -v, else OTEL_LOG_LEVEL, else INFO */
  int level_given;      /* -v was given */
  const char *config;   /* --config FILE */
  int print_defaults, print_defaults_debug, print_schema, print_markdown;
  int help, version;
  uint64_t export_ms;    /* --export-interval "<N>s"; 0 = not given */
  uint64_t export_times; /* --export-interval "<N>x"; 0 = not given */
  int traces;            /* --traces 1, --no-traces 0, -1 = not given */
  bool heap_every;       /* watch: heap gauges unaggregated */
  el__cmd_seen_t seen;   /* options with a value given so far */
} opts_t;

static const char *const usage_text =
    "Usage: " PROG
    " (--eventlog-stdin | --eventlog-file FILE |\n"
    "         --eventlog-socket SOCKET | --eventlog-socket-host HOST\n"
    "         --eventlog-socket-port PORT) [OPTIONS]\n"
    "\n"
    "Read a GHC eventlog live, run the default processors over it and send\n"
    "heap, thread, log and profile telemetry to an OpenTelemetry collector.\n"
    "\n"
    "Options:\n"
    "  --eventlog-flush-interval SECONDS\n"
    "                           the program's RTS --eventlog-flush-interval\n"
    "                           (default 1): unit of \"<N>x\" and `true`\n"
    "  -h<T|c|m|d|y|e|r|b|i>    the program's heap profile breakdown (-hT..)\n"
    "  --service-name STRING    resource attribute service.name\n"
    "                           (default: OTEL_SERVICE_NAME, else service.name\n"
    "                           in OTEL_RESOURCE_ATTRIBUTES, else undefined)\n"
    "  -v, --verbosity LEVEL    fatal|error|warn|warning|info|debug|trace\n"
    "                           (default: OTEL_LOG_LEVEL, else info)\n"
    "  -s, --stats              show live statistics on stderr\n"
    "  --export-interval DURATION\n"
    "                           every enabled processor exports every\n"
    "                           DURATION: \"<N>s\" seconds or \"<N>x\" flush\n"
    "                           intervals, as in --config (e.g. 1s, 0.5s,\n"
    "                           2x; over --config)\n"
    "  --traces, --no-traces    turn the trace processors on or off\n"
    "                           (over --config)\n"
    "  --no-otlp                no OTLP exporter (see below)\n"
    "  --config FILE            YAML configuration (see --print-defaults)\n"
    "  --print-defaults         print the default configuration and exit\n"
    "  --print-config-json-schema\n"
    "                           print the configuration's JSON schema\n"
    "  --version                print the version and exit\n"
    "  --help                   this text\n"
    "\nAn option given twice with different values: the last one is used,\n"
    "with a warning (--control-cors-allow-origin values add up).\n"
    "\nEventlog source options:\n";

static void print_help_to(FILE *f) {
  fputs(usage_text, f);
  fputs(el_src_opts_help(), f);
  fputs("\nOpenTelemetry Collector options:\n", f);
  fputs(el_otlp_opts_help(), f);
  fputs("\nControl server options:\n", f);
  el_ctl_opts_help(f);
  fputs("\nPrometheus endpoint and web view options:\n", f);
  el_web_opts_help(f);
}

static void print_help(void) { print_help_to(stdout); }

/* The options an unknown one is compared with (el_opt_unknown): the
 * daemon's, and the embedding command's own (watch --linger). */
static void suggest_from(FILE *f) {
  print_help_to(f);
  if (g_sub_help) g_sub_help(f);
}

/* -v levels: the reference's severity names (case-insensitive, with the
 * 2..4 variants), plus `warning` (spec §1.1 QUIRK fixed) and `quiet`. */
static int parse_level(const char *s, el_log_level_t *out) {
  char buf[16];
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof buf) return EL_EINVAL;
  for (size_t k = 0; k <= n; k++) buf[k] = (char)tolower((unsigned char)s[k]);
  if (n > 1 && buf[n - 1] >= '2' && buf[n - 1] <= '4') buf[n - 1] = 0;
  static const struct {
    const char *name;
    el_log_level_t level;
  } t[] = {{"trace", EL_LOG_DEBUG}, {"debug", EL_LOG_DEBUG},
           {"info", EL_LOG_INFO},   {"warn", EL_LOG_WARN},
           {"warning", EL_LOG_WARN}, {"error", EL_LOG_ERROR},
           {"fatal", EL_LOG_ERROR}, {"quiet", EL_LOG_QUIET}};
  for (size_t k = 0; k < EL_ARRAY_LEN(t); k++) {
    if (!strcmp(buf, t[k].name)) {
      *out = t[k].level;
      return 0;
    }
  }
  return EL_EINVAL;
}

/* The log threshold when -v was not given: OTEL_LOG_LEVEL (the
 * reference's variable, spec §1.2; the names of -v, case-insensitive),
 * else INFO (the reference's default; WARN under watch). -v wins over the variable, which is
 * then not read. Returns 0, or EL_EINVAL after printing why (a malformed
 * value is a configuration error: exit status 1). */
static int log_level_from_env(opts_t *o) {
  if (o->level_given) return 0;
  const char *v = getenv("OTEL_LOG_LEVEL");
  if (!v || !*v) return 0;
  if (parse_level(v, &o->level) < 0) {
    static const char *const names[] = {"fatal", "error", "warn",
                                        "info",  "debug", "trace"};
    const char *near = el_nearest(v, names, EL_ARRAY_LEN(names));
    say("Environment variable OTEL_LOG_LEVEL specifies "
        "malformed log level '%s'%s%s%s (use fatal, error, warn, "
        "info, debug or trace).\n",
        v, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    return EL_EINVAL;
  }
  return 0;
}

static int set_breakdown(opts_t *o, const char *x) {
  if (!x || strlen(x) != 1 || !strchr("Tcmdyerbi", x[0])) {
    say("Unsupported heap profile breakdown -h%s\n", x ? x : "");
    return EL_EUSAGE;
  }
  snprintf(o->d.breakdown, sizeof o->d.breakdown, "-h%c", x[0]);
  return 0;
}

/* --export-interval DURATION: the grammar of the file's `export`
 * (el_cfg_parse_duration, docs/config.md "Durations"), 1 ms or more, or
 * 1x or more. Returns 1, or EL_EUSAGE after saying why. */
static int parse_export_interval(opts_t *o, const char *v) {
  el_cfg_strategy_t s;
  char hint[160] = "";
  bool ok = el_cfg_parse_duration(v, &s) == 0;
  if (ok && ((s.kind == EL_CFG_SECONDS && s.ms > 0) ||
             (s.kind == EL_CFG_TIMES && s.times > 0))) {
    o->export_ms = s.kind == EL_CFG_SECONDS ? s.ms : 0;
    o->export_times = s.kind == EL_CFG_TIMES ? s.times : 0;
    return 1;
  }
  if (!ok)
    el_cfg_duration_hint(v, hint, sizeof hint);
  else if (s.kind == EL_CFG_SECONDS && s.positive)
    snprintf(hint, sizeof hint, "under 1 ms, the resolution");
  else
    snprintf(hint, sizeof hint, "0 would export nothing");
  say("--export-interval: expected a duration \"<N>s\" (seconds, e.g. 1s, "
      "0.5s) or \"<N>x\" (N whole flush intervals), 1 ms or more, got "
      "'%s'%s%s%s\n",
      v, *hint ? " (" : "", hint, *hint ? ")" : "");
  return EL_EUSAGE;
}

/* Options of the reference (spec §1.1) that this program does not
 * implement: named as such rather than "unknown". */
static int unsupported(const char *a) {
  static const struct {
    const char *name, *why;
  } t[] = {
      {"--otelcol-ssl-key-log-from-env", "TLS key logging"},
      {"--otelcol-ssl-key-log", "TLS key logging"},
      {"--my-eventlog-socket-unix", "self-instrumentation of the Haskell "
                                    "tool"},
      {"--my-ghc-debug-socket-unix", "ghc-debug of the Haskell tool"},
      {"--my-ghc-debug-socket-tcp", "ghc-debug of the Haskell tool"},
      {"--my-ghc-debug-socket", "ghc-debug of the Haskell tool"},
  };
  for (size_t k = 0; k < EL_ARRAY_LEN(t); k++) {
    size_t n = strlen(t[k].name);
    if (!strncmp(a, t[k].name, n) && (a[n] == 0 || a[n] == '=')) {
      say("%s is not supported (%s: an option of the "
          "Haskell eventlog-live-otelcol; see "
          "docs/differences.md)\n",
          t[k].name, t[k].why);
      return 1;
    }
  }
  return 0;
}

/* Our own options. Returns 1 consumed, 0 not ours, EL_EUSAGE. */
static int parse_own(opts_t *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v = NULL;
  if (unsupported(a)) return EL_EUSAGE;
  if (!strcmp(a, "--help")) return (*i)++, o->help = 1;
  if (!strcmp(a, "--version")) return (*i)++, o->version = 1;
  if (!strcmp(a, "--print-defaults")) return (*i)++, o->print_defaults = 1;
  if (!strcmp(a, "--print-defaults-debug"))
    return (*i)++, o->print_defaults_debug = 1;
  if (!strcmp(a, "--print-config-json-schema"))
    return (*i)++, o->print_schema = 1;
  /* Undocumented: the key table of docs/config.md (tests compare). */
  if (!strcmp(a, "--print-config-markdown"))
    return (*i)++, o->print_markdown = 1;
  if (!strcmp(a, "-s") || !strcmp(a, "--stats")) return (*i)++, o->d.stats = 1;
  if (!strcmp(a, "--traces")) return (*i)++, o->traces = 1, 1;
  if (!strcmp(a, "--no-traces")) return (*i)++, o->traces = 0, 1;
  if (el_opt_value(argc, argv, i, "--export-interval", &v)) {
    if (!v) goto missing;
    return parse_export_interval(o, v);
  }
  if (el_opt_value(argc, argv, i, "--config", &v)) {
    if (!v) goto missing;
    o->config = v;
    return 1;
  }
  if (el_opt_value(argc, argv, i, "--eventlog-flush-interval", &v)) {
    char *end;
    if (!v) goto missing;
    o->d.flush_s = strtod(v, &end);
    if (end == v || *end || !isfinite(o->d.flush_s) || o->d.flush_s < 0.001 ||
        o->d.flush_s > 86400) {
      say("--eventlog-flush-interval: expected seconds "
          "between 0.001 and 86400, got '%s'\n",
          v);
      return EL_EUSAGE;
    }
    return 1;
  }
  if (el_opt_value(argc, argv, i, "--verbosity", &v) ||
      (!strcmp(a, "-v") && el_opt_value(argc, argv, i, "-v", &v)) ||
      (!strncmp(a, "-v", 2) && a[2] && (v = a + 2, (*i)++, 1))) {
    if (!v) goto missing;
    if (parse_level(v, &o->level) < 0) {
      static const char *const names[] = {"fatal", "error", "warn", "info",
                                          "debug", "trace", "quiet"};
      const char *near = el_nearest(v, names, EL_ARRAY_LEN(names));
      say("unknown verbosity '%s'%s%s%s (use fatal, error, "
          "warn, info, debug or trace)\n",
          v, near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
      return EL_EUSAGE;
    }
    o->level_given = 1;
    return 1;
  }
  if (!strncmp(a, "-h", 2) && strncmp(a, "-h-", 3)) {
    (*i)++;
    if (a[2]) return set_breakdown(o, a + 2) < 0 ? EL_EUSAGE : 1;
    if (*i >= argc || argv[*i][0] == '-') {
      say("-h needs a letter: T, c, m, d, y, e, r, b or "
          "i (the program's heap profile breakdown)\n");
      return EL_EUSAGE;
    }
    return set_breakdown(o, argv[(*i)++]) < 0 ? EL_EUSAGE : 1;
  }
  return 0;
missing:
  say("option %s needs a value\n", a);
  return EL_EUSAGE;
}

/* The option at argv[*i], through each parser in turn; *i moves past
 * it. Returns 1, or EL_EUSAGE (message printed). */
static int parse_one(opts_t *o, int argc, char **argv, int *i) {
  int r = el_src_opts_parse(&o->d.src, argc, argv, i);
  if (r < 0) say("%s\n", o->d.src.err);
  if (r) return r < 0 ? EL_EUSAGE : 1;
  r = el_otlp_opts_parse(&o->d.otlp, argc, argv, i);
  if (r < 0) say("%s\n", o->d.otlp.err);
  if (r) return r < 0 ? EL_EUSAGE : 1;
  r = el_ctl_opts_parse(&o->d.ctl, argc, argv, i);
  if (r) return r < 0 ? EL_EUSAGE : 1;
  r = el_web_opts_parse(&o->d.web, argc, argv, i);
  if (r < 0) say("%s\n", o->d.web.err);
  if (r) return r < 0 ? EL_EUSAGE : 1;
  r = parse_own(o, argc, argv, i);
  if (r) return r < 0 ? EL_EUSAGE : 1;
  el_opt_unknown(g_sub, argv[*i], suggest_from);
  return EL_EUSAGE;
}

/* Parse argv into *o, noting the options given twice (cmd.h
 * el__cmd_note_option: -h<X>, -v as --verbosity; the values of
 * --control-cors-allow-origin add up). Returns 0 or EL_EUSAGE (message
 * printed). */
static int parse_args(opts_t *o, int argc, char **argv) {
  static const char *const shorts[] = {"-h", "-h", "-v", "--verbosity", NULL};
  static const char *const adds[] = {"--control-cors-allow-origin", NULL};
  o->seen.shorts = shorts;
  o->seen.repeatable = adds;
  for (int i = 1; i < argc;) {
    int start = i;
    if (parse_one(o, argc, argv, &i) < 0) return EL_EUSAGE;
    el__cmd_note_option(&o->seen, argv, start, i);
  }
  return 0;
}

/* The command-line knobs over the configuration file (CLI over config
 * over defaults, docs/config.md "Command-line overrides"). */
static void apply_overrides(const opts_t *o, el_cfg_t *cfg) {
  if (o->heap_every) {
    el_cfg_override_aggregate_off(cfg, EL_CFG_METRICS, "heap_size");
    el_cfg_override_aggregate_off(cfg, EL_CFG_METRICS, "heap_live");
    el_cfg_override_aggregate_off(cfg, EL_CFG_METRICS, "blocks_size");
  }
  if (o->traces >= 0) el_cfg_override_group(cfg, EL_CFG_TRACES, o->traces);
  uint64_t ms = o->export_ms;
  if (o->export_times) { /* "<N>x": N flush intervals, capped */
    uint64_t flush_ms = (uint64_t)llround(o->d.flush_s * 1000);
    ms = o->export_times > EL_CFG_MAX_WINDOW_MS / flush_ms
             ? EL_CFG_MAX_WINDOW_MS
             : o->export_times * flush_ms;
  }
  if (ms > EL_CFG_MAX_WINDOW_MS) ms = EL_CFG_MAX_WINDOW_MS;
  if (ms) el_cfg_override_export(cfg, ms);
}

static int print_defaults_debug(const opts_t *o, el_cfg_t *cfg) {
  el_cfg_resolve(cfg, (uint64_t)llround(o->d.flush_s * 1000));
  printf("# resolved: batch interval %llu ms\nprocessors:\n",
         (unsigned long long)el_cfg_batch_ms(cfg));
  for (int g = 0; g < EL_CFG_NGROUPS; g++) {
    printf("  %s:\n", el_cfg_group_name(g));
    for (size_t i = 0; i < el_cfg_nprocs(); i++) {
      const el_cfg_proc_t *p = el_cfg_proc_at(cfg, i);
      if ((int)p->info->group != g || !p->enabled) continue;
      printf("    %s: {name: \"%s\", aggregate: %llums, export: %llums}\n",
             p->info->key, p->name, (unsigned long long)p->aggregate_ms,
             (unsigned long long)p->export_ms);
    }
  }
  return 0;
}

/* Local defaults of an embedding command (el_otelcol_embed_t.local),
 * below every option and the configuration file: exports every second,
 * the trace processors on and every value of the heap gauges (HeapSize,
 * HeapLive, BlocksSize: no aggregation, so the page shows every GC's
 * peak) unless --config or the knobs say otherwise, OTLP
 * off unless asked for (el_otlp_config_requested), the web view on a free
 * port unless --web-port or web.web_port. */
static void apply_local_defaults(opts_t *o) {
  if (!o->config) {
    if (!o->export_ms && !o->export_times) o->export_ms = 1000;
    if (o->traces < 0) o->traces = 1;
    o->heap_every = true;
  }
  if (!el_otlp_config_requested(&o->d.otlp, NULL, NULL))
    o->d.otlp.flag.no_otlp = true;
  if (o->d.web.web_port < 0) o->d.web.web_port = 0;
}

int el_cmd_otelcol(int argc, char **argv) {
  return el_otelcol_main(argc, argv, NULL);
}

/* --help, --version, --print-defaults, --print-config-json-schema,
 * --print-config-markdown: print
 * and return the exit status; -1 when none of them was given. */
static int print_and_exit(const opts_t *o, const el_otelcol_embed_t *e) {
  if (o->help) {
    if (e && e->help)
      e->help(stdout);
    else
      print_help();
    return 0;
  }
  if (o->version) {
    printf("%s\n", EL_VERSION);
    return 0;
  }
  if (o->print_defaults) return el_cfg_print_defaults(stdout) < 0;
  if (o->print_schema) return el_cfg_print_schema(stdout) < 0;
  if (o->print_markdown) return el_cfg_print_markdown(stdout) < 0;
  return -1;
}

int el_otelcol_main(int argc, char **argv, const el_otelcol_embed_t *e) {
  opts_t o;
  memset(&o, 0, sizeof o);
  el_src_opts_init(&o.d.src);
  el_otlp_config_init(&o.d.otlp);
  el_ctl_opts_init(&o.d.ctl);
  el_web_opts_init(&o.d.web);
  o.d.flush_s = 1.0;
  /* watch (local) says little by default: its URL and notes are
   * printed whatever the level (watch --help "default warn"). */
  o.level = e && e->local ? EL_LOG_WARN : EL_LOG_INFO;
  o.traces = -1;
  int status = 2;
  el_cfg_t *cfg = NULL;
  /* A daemon whose stdout (console exporter) or a socket closes must not
   * die of SIGPIPE: the write fails with EPIPE instead, and what could not
   * be written is counted as dropped and reported. */
  signal(SIGPIPE, SIG_IGN);
  g_sub = e ? e->prog : NULL;
  g_sub_help = e ? e->help : NULL;

  if (parse_args(&o, argc, argv) < 0) goto out;
  if ((status = print_and_exit(&o, e)) >= 0) goto out;
  status = 1;
  if (log_level_from_env(&o) < 0) goto out;
  el_log_threshold = o.level;
  el__cmd_warn_repeated(&o.seen, NULL);
  cfg = el_cfg_new();
  if (!cfg) goto out;
  if (o.config)
    el_log(EL_LOG_DEBUG, "Reading configuration file from %s", o.config);
  if (o.config && el_cfg_load_file(cfg, o.config) < 0) {
    say("%s\n", el_cfg_diag(cfg)->msg);
    goto out;
  }
  if (o.d.web.prom_port < 0) o.d.web.prom_port = el_cfg_web_port(cfg, true);
  if (o.d.web.web_port < 0) o.d.web.web_port = el_cfg_web_port(cfg, false);
  el_web_opts_from_config(&o.d.web, cfg); /* web.*_host (docs/security.md) */
  if (e && e->local) apply_local_defaults(&o);
  apply_overrides(&o, cfg);
  if (o.print_defaults_debug) {
    status = print_defaults_debug(&o, cfg);
    goto out;
  }
  if (e && e->prepare && (status = e->prepare(e->ud, &o.d)) != 0) goto out;
  status = 1;
  if (el_src_opts_validate(&o.d.src) < 0) {
    say("%s (see --help)\n", o.d.src.err);
    status = 2;
    goto out;
  }
  /* A missing file fails now, not after the exporters' shutdown wait. */
  if (o.d.src.kind == EL_SRC_FILE && !o.d.src.follow &&
      access(o.d.src.path, R_OK) < 0) {
    say("error: cannot open %s: %s\n", o.d.src.path, strerror(errno));
    goto out;
  }
  if (el_otlp_config_resolve(&o.d.otlp, NULL, NULL) < 0) {
    say("%s\n", o.d.otlp.err);
    if (el_otlp_config_err_is_usage(&o.d.otlp)) status = 2; /* a bad flag */
    goto out;
  }
  el_cfg_resolve(cfg, (uint64_t)llround(o.d.flush_s * 1000));
  el_log(EL_LOG_DEBUG, "Batch interval is %llums",
         (unsigned long long)el_cfg_batch_ms(cfg));
  status = el_daemon_run(&o.d, cfg);
out:
  el_cfg_free(cfg);
  el_otlp_config_free(&o.d.otlp);
  el_ctl_opts_close(&o.d.ctl);
  return status;
}
