/* cmd_otelcol.c: the daemon `eventlog-live-otelcol` (also `eventlog-live
 * otelcol`): the reference tool's command line
 * (spec/reference-behaviour.md §1.1), the configuration (src/config), and
 * the pipeline source -> decoder -> Lua host running the default
 * processors (lua/eventlog_live/processors) -> telemetry store ->
 * exporters (src/otlp), plus the control server (src/control) and --stats.
 *
 * The processors get the resolved configuration through el.config (see
 * lua/eventlog_live/processors/init.lua for the keys). Windows are in
 * eventlog time; a wall-clock libuv timer runs the host's wall timers
 * (which close windows of a quiet live stream), drains the host's own log
 * messages into the store and refreshes the --stats line. At end of input
 * everything is flushed and exported, and the exit status is 0. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "config/config.h"
#include "control/control.h"
#include "eventlog/eventlog.h"
#include "host/host.h"
#include "otlp/exp_console.h"
#include "otlp/otlp.h"
#include "source/source.h"
#include "telemetry/telemetry.h"
#include "web/web.h"

#include <lua.h>

#define PROG "eventlog-live-otelcol"
#define SCOPE_NAME "eventlog-live-otelcol"

/* {====== command line ======} */

typedef struct opts_s {
  el_src_opts_t src;
  el_otlp_config_t otlp;
  el_ctl_opts_t ctl;
  el_web_opts_t web;            /* --prometheus-port, --web-port */
  double flush_s;              /* --eventlog-flush-interval, seconds */
  char breakdown[4];           /* "-hT", "" when not given */
  el_log_level_t level;        /* -v; default WARN */
  int stats;                   /* -s */
  const char *config;          /* --config FILE */
  int print_defaults, print_defaults_debug, print_schema;
  int help, version;
} opts_t;

static const char *const usage_text =
    "Usage: " PROG " (--eventlog-stdin | --eventlog-file FILE |\n"
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
    "                           (default: OTEL_SERVICE_NAME, else undefined)\n"
    "  -v, --verbosity LEVEL    fatal|error|warn|warning|info|debug|trace\n"
    "                           (default warn)\n"
    "  -s, --stats              show live statistics on stderr\n"
    "  --config FILE            YAML configuration (see --print-defaults)\n"
    "  --print-defaults         print the default configuration and exit\n"
    "  --print-config-json-schema\n"
    "                           print the configuration's JSON schema\n"
    "  --version                print the version and exit\n"
    "  --help                   this text\n"
    "\nEventlog source options:\n";

static void print_help(void) {
  fputs(usage_text, stdout);
  fputs(el_src_opts_help(), stdout);
  fputs("\nOpenTelemetry Collector options:\n", stdout);
  fputs(el_otlp_opts_help(), stdout);
  fputs("\nControl server options:\n", stdout);
  el_ctl_opts_help(stdout);
  fputs("\nPrometheus endpoint and web view options:\n", stdout);
  el_web_opts_help(stdout);
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

static int set_breakdown(opts_t *o, const char *x) {
  if (!x || strlen(x) != 1 || !strchr("Tcmdyerbi", x[0])) {
    fprintf(stderr, PROG ": Unsupported heap profile breakdown -h%s\n",
            x ? x : "");
    return EL_EUSAGE;
  }
  snprintf(o->breakdown, sizeof o->breakdown, "-h%c", x[0]);
  return 0;
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
      fprintf(stderr, PROG ": %s is not supported (%s: an option of the "
                           "Haskell eventlog-live-otelcol; see "
                           "docs/differences.md)\n", t[k].name, t[k].why);
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
  if (!strcmp(a, "-s") || !strcmp(a, "--stats")) return (*i)++, o->stats = 1;
  if (el_opt_value(argc, argv, i, "--config", &v)) {
    if (!v) goto missing;
    o->config = v;
    return 1;
  }
  if (el_opt_value(argc, argv, i, "--eventlog-flush-interval", &v)) {
    char *end;
    if (!v) goto missing;
    o->flush_s = strtod(v, &end);
    if (end == v || *end || !isfinite(o->flush_s) || o->flush_s < 0.001 ||
        o->flush_s > 86400) {
      fprintf(stderr, PROG ": --eventlog-flush-interval: expected seconds "
                           "between 0.001 and 86400, got '%s'\n", v);
      return EL_EUSAGE;
    }
    return 1;
  }
  if (el_opt_value(argc, argv, i, "--verbosity", &v) ||
      (!strcmp(a, "-v") && el_opt_value(argc, argv, i, "-v", &v)) ||
      (!strncmp(a, "-v", 2) && a[2] && (v = a + 2, (*i)++, 1))) {
    if (!v) goto missing;
    if (parse_level(v, &o->level) < 0) {
      fprintf(stderr, PROG ": unknown verbosity '%s' (use fatal, error, "
                           "warn, info, debug or trace)\n", v);
      return EL_EUSAGE;
    }
    return 1;
  }
  if (!strncmp(a, "-h", 2) && strncmp(a, "-h-", 3)) {
    (*i)++;
    if (a[2]) return set_breakdown(o, a + 2) < 0 ? EL_EUSAGE : 1;
    if (*i >= argc || argv[*i][0] == '-') {
      fprintf(stderr, PROG ": -h needs a letter: T, c, m, d, y, e, r, b or "
                           "i (the program's heap profile breakdown)\n");
      return EL_EUSAGE;
    }
    return set_breakdown(o, argv[(*i)++]) < 0 ? EL_EUSAGE : 1;
  }
  return 0;
missing:
  fprintf(stderr, PROG ": option %s needs a value\n", a);
  return EL_EUSAGE;
}

/* Parse argv into *o. Returns 0 or EL_EUSAGE (message printed). */
static int parse_args(opts_t *o, int argc, char **argv) {
  for (int i = 1; i < argc;) {
    int r = el_src_opts_parse(&o->src, argc, argv, &i);
    if (r < 0) {
      fprintf(stderr, PROG ": %s\n", o->src.err);
      return EL_EUSAGE;
    }
    if (r) continue;
    r = el_otlp_opts_parse(&o->otlp, argc, argv, &i);
    if (r < 0) {
      fprintf(stderr, PROG ": %s\n", o->otlp.err);
      return EL_EUSAGE;
    }
    if (r) continue;
    r = el_ctl_opts_parse(&o->ctl, argc, argv, &i);
    if (r < 0) return EL_EUSAGE;
    if (r) continue;
    r = el_web_opts_parse(&o->web, argc, argv, &i);
    if (r < 0) {
      fprintf(stderr, PROG ": %s\n", o->web.err);
      return EL_EUSAGE;
    }
    if (r) continue;
    r = parse_own(o, argc, argv, &i);
    if (r < 0) return EL_EUSAGE;
    if (r) continue;
    fprintf(stderr, PROG ": unknown option '%s' (see --help)\n", argv[i]);
    return EL_EUSAGE;
  }
  return 0;
}

/* {====== configuration to Lua ======} */

static int set_cfg(el_host_t *h, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_cfg(el_host_t *h, const char *key, const char *fmt, ...) {
  char val[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  return el_host_set_config(h, key, val);
}

/* Pass the resolved configuration to the processors through el.config. */
static int config_to_lua(el_host_t *h, const el_cfg_t *cfg,
                         uint64_t flush_ms, const opts_t *o) {
  int rc = 0;
  rc |= set_cfg(h, "flush_ms", "%llu", (unsigned long long)flush_ms);
  rc |= set_cfg(h, "batch_ms", "%llu",
                (unsigned long long)el_cfg_batch_ms(cfg));
  rc |= set_cfg(h, "breakdown", "%s", o->breakdown);
  for (size_t i = 0; i < el_cfg_nprocs(); i++) {
    const el_cfg_proc_t *p = el_cfg_proc_at(cfg, i);
    char key[160];
    const char *g = el_cfg_group_name(p->info->group);
#define K(suffix) (snprintf(key, sizeof key, "%s.%s." suffix, g, p->info->key), key)
    rc |= set_cfg(h, K("enabled"), "%s", p->enabled ? "true" : "false");
    rc |= set_cfg(h, K("name"), "%s", p->name);
    rc |= set_cfg(h, K("description"), "%s",
                  p->description ? p->description : "");
    rc |= set_cfg(h, K("aggregate_ms"), "%llu",
                  (unsigned long long)p->aggregate_ms);
    rc |= set_cfg(h, K("export_ms"), "%llu",
                  (unsigned long long)p->export_ms);
#undef K
  }
  return rc ? EL_ENOMEM : 0;
}

/* The processors' entry script: <lua dir>/eventlog_live/processors/main.lua
 * with the lua directory chosen as the host does (EVENTLOG_LIVE_LUA_DIR,
 * the build tree's lua/, the installed share/eventlog-live/lua). */
static void main_script(char *buf, size_t size) {
  static const char rel[] = "/eventlog_live/processors/main.lua";
  const char *env = getenv("EVENTLOG_LIVE_LUA_DIR");
  if (env && *env) {
    snprintf(buf, size, "%s%s", env, rel);
    return;
  }
  char exe[1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      snprintf(buf, size, "%s/../share/eventlog-live/lua%s", exe, rel);
      if (access(buf, R_OK) == 0) return;
    }
  }
  snprintf(buf, size, "%s/lua%s", EL_SOURCE_DIR, rel);
}

/* {====== the host's own logs (internal_log_message) ======}
 * el_log may be called from any thread (exporter threads log too); the
 * store is the loop thread's. Messages are queued under a mutex and moved
 * into the store on the loop thread. */

#define LOGQ_MAX 256

typedef struct logq_s {
  pthread_mutex_t mu;
  struct {
    el_log_level_t level;
    el_unix_ns_t unix_ns;
    char *msg;
  } item[LOGQ_MAX];
  size_t n;
  uint64_t dropped;
} logq_t;

static logq_t logq = {.mu = PTHREAD_MUTEX_INITIALIZER};
static __thread int in_log_hook;

static el_unix_ns_t now_unix_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (el_unix_ns_t)ts.tv_sec * 1000000000u + (el_unix_ns_t)ts.tv_nsec;
}

static void log_hook(void *ud, el_log_level_t level, const char *msg) {
  (void)ud;
  if (in_log_hook) return;
  in_log_hook = 1;
  char *copy = el_strdup(msg);
  pthread_mutex_lock(&logq.mu);
  if (copy && logq.n < LOGQ_MAX) {
    logq.item[logq.n].level = level;
    logq.item[logq.n].unix_ns = now_unix_ns();
    logq.item[logq.n].msg = copy;
    logq.n++;
    copy = NULL;
  } else {
    logq.dropped++;
  }
  pthread_mutex_unlock(&logq.mu);
  el_free(copy);
  in_log_hook = 0;
}

/* Move queued messages into st (NULL: discard). Loop thread. */
static void logq_drain(el_tm_store_t *st) {
  static const int sev[] = {EL_TM_SEV_DEBUG, EL_TM_SEV_INFO, EL_TM_SEV_WARN,
                            EL_TM_SEV_ERROR, EL_TM_SEV_FATAL};
  pthread_mutex_lock(&logq.mu);
  size_t n = logq.n;
  logq.n = 0;
  typeof(logq.item[0]) items[LOGQ_MAX];
  memcpy(items, logq.item, n * sizeof items[0]);
  pthread_mutex_unlock(&logq.mu);
  in_log_hook = 1;  /* the store's own warnings must not re-enter */
  for (size_t k = 0; k < n; k++) {
    if (st) {
      el_tm_log_t rec = {
          .time_unix_ns = items[k].unix_ns,
          .observed_unix_ns = items[k].unix_ns,
          .severity_number = sev[items[k].level <= EL_LOG_QUIET
                                     ? items[k].level
                                     : EL_LOG_ERROR],
          .body = {items[k].msg, strlen(items[k].msg)},
          .host_log = true,
      };
      el_tm_log(st, &rec);
    }
    el_free(items[k].msg);
  }
  in_log_hook = 0;
}

/* {====== the daemon ======} */

/* Totals for --stats. */
typedef struct totals_s {
  uint64_t events;
  uint64_t emitted[EL_TM_NSIGNALS];   /* accepted by the store */
  uint64_t exported[EL_TM_NSIGNALS];  /* delivered to the collector */
  uint64_t rejected[EL_TM_NSIGNALS];  /* partial_success rejections */
  uint64_t dropped[EL_TM_NSIGNALS];   /* store + exporter drops */
} totals_t;

typedef struct daemon_s {
  opts_t *o;
  uv_loop_t loop;
  uv_timer_t timer;
  uv_signal_t sigint, sigterm;
  el_src_t *src;
  el_host_t *host;
  el_ev_decoder_t *dec;
  el_tm_store_t *store;
  el_otlp_exporter_t *otlp;
  el_otlp_console_t *console;
  el_otlp_stats_t otlp_final;  /* exporter counters when it was freed */
  el_ctl_server_t *ctl;
  el_web_t *web;               /* --prometheus-port / --web-port, or NULL */
  int internal_logs;           /* internal_log_message enabled */
  int session_open;
  int handles;                 /* timer and signal handles initialised */
  int end_status;              /* source's on_end status */
  uint64_t decode_errors;
  uint64_t started_ms;
  uint64_t stats_last_ms;
  totals_t stats_prev;         /* totals at the last --stats display */
  int stats_lines;             /* lines of the last display */
  el_tm_exporter_t console_tm; /* the console exporter, wrapped to count */
  uint64_t console_records[EL_TM_NSIGNALS]; /* records it printed */
  uint64_t batch_ms;           /* batch interval (spec §3.4) */
  uint64_t log_last_ms;        /* last "Received <n> events." check */
  totals_t log_prev;           /* totals at that check */
  uint64_t connected_ms;       /* when the current session began */
  int input_warned;            /* "No input after 10 ticks" given */
} daemon_t;

static void on_connect(void *ud, el_src_t *src) {
  daemon_t *d = ud;
  (void)src;
  if (d->session_open) el_host_session_end(d->host);
  el_ev_decoder_reset(d->dec);
  d->session_open = 1;
  d->connected_ms = uv_now(&d->loop);
}

static void report_decode_error(daemon_t *d, int rc) {
  const el_diag_t *g = el_ev_decoder_diag(d->dec);
  d->decode_errors++;
  el_log(EL_LOG_ERROR, "eventlog decoding failed at byte %llu: %s",
         (unsigned long long)g->offset, g->msg[0] ? g->msg : el_strerror(rc));
}

static void on_data(void *ud, el_src_t *src, const uint8_t *buf,
                    size_t len) {
  daemon_t *d = ud;
  int rc = el_ev_decoder_feed(d->dec, buf, len);
  if (rc == EL_ESTOPPED) {
    el_src_stop(src);
  } else if (rc < 0) {
    report_decode_error(d, rc);
  }
}

static void end_session(daemon_t *d) {
  if (!d->session_open) return;
  int rc = el_ev_decoder_finish(d->dec);
  if (rc < 0 && rc != EL_ESTOPPED) report_decode_error(d, rc);
  el_host_session_end(d->host);
  d->session_open = 0;
}

static void on_disconnect(void *ud, el_src_t *src, int err) {
  daemon_t *d = ud;
  (void)src;
  if (err && err != EL_ECLOSED)
    el_log(EL_LOG_WARN, "eventlog connection lost: %s", el_strerror(err));
  end_session(d);
}

static void on_end(void *ud, el_src_t *src, int status) {
  daemon_t *d = ud;
  (void)src;
  end_session(d);
  d->end_status = status;
  uv_timer_stop(&d->timer);
  uv_close((uv_handle_t *)&d->timer, NULL);
  uv_close((uv_handle_t *)&d->sigint, NULL);
  uv_close((uv_handle_t *)&d->sigterm, NULL);
  if (d->ctl) {
    el_ctl_server_free(d->ctl);
    d->ctl = NULL;
    el_web_set_control_port(d->web, -1);
  }
}

static void on_signal(uv_signal_t *s, int signum) {
  daemon_t *d = s->data;
  el_log(EL_LOG_INFO, "signal %d: stopping", signum);
  el_src_stop(d->src);
}

static int ctl_send(void *ud, const uint8_t *buf, size_t len) {
  daemon_t *d = ud;
  return d->src ? el_src_write(d->src, buf, len) : EL_ECLOSED;
}

static int host_control(void *ud, const char *ns, size_t ns_len,
                        uint32_t command_id) {
  el_ctl_sender_t s = {ctl_send, ud};
  return el_ctl_send(&s, ns, ns_len, (int)command_id);
}

/* {====== --stats ======} */


static void totals(daemon_t *d, totals_t *t) {
  memset(t, 0, sizeof *t);
  t->events = el_ev_decoder_stats(d->dec)->events;
  const el_tm_stats_t *ts = el_tm_store_stats(d->store);
  el_otlp_stats_t os = d->otlp_final;
  if (d->otlp) el_otlp_exporter_stats(d->otlp, &os);
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    t->emitted[s] = ts->emitted[s];
    t->exported[s] = os.records[s] + d->console_records[s];
    t->rejected[s] = os.rejected[s];
    /* The exporter reports its drops to the store as well. */
    t->dropped[s] = ts->dropped[s];
  }
}

/* How far the processed stream is behind the wall clock, in seconds
 * (negative: unknown). Asks the processors (processors/init.lua). */
static double stream_lag_s(daemon_t *d) {
  lua_State *L = el_host_lua(d->host);
  double lag = -1;
  int top = lua_gettop(L);
  if (lua_getglobal(L, "eventlog_live_otelcol_stream_unix_ns") ==
          LUA_TFUNCTION &&
      lua_pcall(L, 0, 1, 0) == LUA_OK && lua_isinteger(L, -1)) {
    lua_Integer u = lua_tointeger(L, -1);
    if (u > 0) lag = ((double)now_unix_ns() - (double)u) / 1e9;
  }
  lua_settop(L, top);
  return lag;
}

static const char *const sig_names[EL_TM_NSIGNALS] = {"Metrics", "Logs",
                                                      "Traces", "Profiles"};

/* The table: totals, rates over the last interval (or the whole run when
 * final), what is still pending (in windows or export queues). */
static void print_stats(daemon_t *d, FILE *f, int final) {
  totals_t t;
  totals(d, &t);
  uint64_t now = uv_now(&d->loop);
  double dt = final ? (now - d->started_ms) / 1000.0
                    : (now - d->stats_last_ms) / 1000.0;
  const totals_t *p = final ? NULL : &d->stats_prev;
  if (dt <= 0) dt = 1e-3;
#define RATE(field) ((double)(t.field - (p ? p->field : 0)) / dt)
  if (!final && d->stats_lines && isatty(fileno(f)))
    fprintf(f, "\033[%dA\033[J", d->stats_lines);
  int lines = 0;
  fprintf(f, "%-9s %-9s %14s %12s\n", "Item", "Action", "Total",
          "Rate (/s)");
  fprintf(f, "%-9s %-9s %14llu %12.0f\n", "Events", "Received",
          (unsigned long long)t.events, RATE(events));
  lines += 2;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    uint64_t gone = t.exported[s] + t.rejected[s] + t.dropped[s];
    uint64_t pending = t.emitted[s] > gone ? t.emitted[s] - gone : 0;
    fprintf(f, "%-9s %-9s %14llu %12.0f\n", sig_names[s], "Exported",
            (unsigned long long)t.exported[s], RATE(exported[s]));
    fprintf(f, "%-9s %-9s %14llu %12.0f\n", "", "Rejected",
            (unsigned long long)t.rejected[s], RATE(rejected[s]));
    fprintf(f, "%-9s %-9s %14llu %12.0f\n", "", "Dropped",
            (unsigned long long)t.dropped[s], RATE(dropped[s]));
    fprintf(f, "%-9s %-9s %14llu\n", "", "Pending",
            (unsigned long long)(d->otlp || d->console ? pending : 0));
    lines += 4;
  }
#undef RATE
  double lag = final ? -1 : stream_lag_s(d);
  const el_host_stats_t *hs = el_host_stats(d->host);
  if (lag >= 0)
    fprintf(f, "Lag behind the stream: %.1f s. ", lag);
  fprintf(f, "Script errors %llu, decode errors %llu, memory %zu bytes "
             "(peak %zu)\n",
          (unsigned long long)hs->handler_errors,
          (unsigned long long)d->decode_errors, el_mem_in_use(),
          el_mem_peak());
  lines++;
  fflush(f);
  d->stats_lines = lines;
  d->stats_last_ms = now;
  d->stats_prev = t;
}

/* Once per batch interval, what the reference logs per tick (spec §9,
 * §6.1): DEBUG "Received <n> events.", DEBUG "Exported <n> <signal>.",
 * ERROR "Rejected <n> <signal>.", and once WARN "No input after 10
 * ticks..." when a session delivered no event for 10 batch intervals. */
static void log_progress(daemon_t *d, int force) {
  static const char *const what[EL_TM_NSIGNALS] = {"metrics", "logs",
                                                   "spans", "profiles"};
  uv_update_time(&d->loop);
  uint64_t now = uv_now(&d->loop);
  if (!force && now - d->log_last_ms < d->batch_ms) return;
  d->log_last_ms = now;
  totals_t t;
  totals(d, &t);
  if (t.events > d->log_prev.events)
    el_log(EL_LOG_DEBUG, "Received %llu events.",
           (unsigned long long)(t.events - d->log_prev.events));
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    if (t.exported[s] > d->log_prev.exported[s])
      el_log(EL_LOG_DEBUG, "Exported %llu %s.",
             (unsigned long long)(t.exported[s] - d->log_prev.exported[s]),
             what[s]);
    if (t.rejected[s] > d->log_prev.rejected[s])
      el_log(EL_LOG_ERROR, "Rejected %llu %s.",
             (unsigned long long)(t.rejected[s] - d->log_prev.rejected[s]),
             what[s]);
  }
  if (!d->input_warned && d->session_open && t.events == 0 &&
      now - d->connected_ms >= 10 * d->batch_ms) {
    d->input_warned = 1;
    el_log(EL_LOG_WARN,
           "No input after 10 ticks. Did you pass -l to the GHC RTS?");
  }
  d->log_prev = t;
}

static void on_timer(uv_timer_t *tm) {
  daemon_t *d = tm->data;
  el_host_run_wall_timers(d->host, uv_now(&d->loop));
  log_progress(d, 0);
  logq_drain(d->internal_logs ? d->store : NULL);
  if (d->o->stats && uv_now(&d->loop) - d->stats_last_ms >= 1000)
    print_stats(d, stderr, 0);
}

/* The console exporter, counted: it prints on the loop thread inside
 * export(), so what it accepted is delivered (as the reference's console
 * exporter, spec §1.4: "fully successful"). */
static int console_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  daemon_t *d = ud;
  size_t n = el_tm_batch_count(b);
  int rc = d->console_tm.export(d->console_tm.ud, sig, b);
  if (rc == 0) d->console_records[sig] += n;
  return rc;
}

static int console_flush(void *ud, int timeout_ms) {
  daemon_t *d = ud;
  return d->console_tm.flush ? d->console_tm.flush(d->console_tm.ud,
                                                   timeout_ms)
                             : 0;
}

static void free_exporter(daemon_t *d) {
  el_otlp_stats_t before;
  el_otlp_exporter_stats(d->otlp, &before);
  el_otlp_exporter_free(d->otlp);
  d->otlp = NULL;
  d->otlp_final = before;
}

/* Exporters for every signal per the resolved OTLP configuration. */
static int add_exporters(daemon_t *d) {
  const el_otlp_config_t *c = &d->o->otlp;
  unsigned otlp_sigs = 0, console_sigs = 0;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    if (c->sig[s].exporter == EL_OTLP_EXP_OTLP) otlp_sigs |= 1u << s;
    if (c->sig[s].exporter == EL_OTLP_EXP_CONSOLE) console_sigs |= 1u << s;
  }
  if (console_sigs) {
    el_tm_exporter_t tm;
    int rc = el_otlp_console_new(stdout, console_sigs, c->max_message_bytes,
                                 d->store, &d->console, &d->console_tm);
    if (rc < 0) return rc;
    tm = d->console_tm;
    tm.ud = d;
    tm.export = console_export;
    tm.flush = console_flush;
    tm.release = NULL;   /* d->console is freed by run() */
    rc = el_tm_store_add_exporter(d->store, &tm);
    if (rc < 0) return rc;
  }
  if (otlp_sigs) {
    el_tm_exporter_t tm;
    int rc = el_otlp_exporter_new(c, otlp_sigs, d->store, &d->otlp, &tm);
    if (rc < 0) return rc;
    rc = el_tm_store_add_exporter(d->store, &tm);
    if (rc < 0) return rc;
  }
  return 0;
}

static int print_defaults_debug(const opts_t *o, el_cfg_t *cfg) {
  el_cfg_resolve(cfg, (uint64_t)llround(o->flush_s * 1000));
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

/* Build everything, run until the input ends, tear down. Returns the exit
 * status. */
static int run(opts_t *o, el_cfg_t *cfg) {
  daemon_t d;
  memset(&d, 0, sizeof d);
  d.o = o;
  int status = 1, rc;
  uint64_t flush_ms = (uint64_t)llround(o->flush_s * 1000);
  char script[1200];

  d.internal_logs = el_cfg_enabled(cfg, EL_CFG_LOGS, "internal_log_message");
  if (uv_loop_init(&d.loop) < 0) return 1;
  d.store = el_tm_store_new(SCOPE_NAME, EL_VERSION);
  d.host = el_host_new(NULL);
  if (!d.store || !d.host) {
    el_log(EL_LOG_ERROR, "out of memory");
    goto done;
  }
  if (el_otlp_config_apply_resource(&o->otlp, d.store) < 0) goto done;
  if (!o->otlp.service_name) {
    el_tm_attr_t a = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {"undefined", 9}};
    el_tm_store_set_resource(d.store, &a);
  }
  if (el_web_enabled(&o->web)) {
    el_tm_exporter_t tm;
    o->web.service_name = o->otlp.service_name;
    if ((rc = el_web_new(&o->web, &d.web, &tm)) < 0 ||
        (rc = el_tm_store_add_exporter(d.store, &tm)) < 0 ||
        (rc = el_web_start(d.web)) < 0) {
      el_log(EL_LOG_ERROR, "cannot start the web endpoints: %s",
             el_strerror(rc));
      goto done;
    }
  }
  if ((rc = add_exporters(&d)) < 0) {
    el_log(EL_LOG_ERROR, "cannot create the exporters: %s", el_strerror(rc));
    goto done;
  }
  d.dec = el_host_decoder(d.host);
  if (el_src_opts_live(&o->src)) /* never hold an event back */
    el_ev_decoder_set_opts(d.dec, EL_EV_OPT_LIVE);
  el_host_set_store(d.host, d.store);
  el_host_set_control(d.host, host_control, &d);
  if (config_to_lua(d.host, cfg, flush_ms, o) < 0) goto done;
  main_script(script, sizeof script);
  if ((rc = el_host_load(d.host, script)) < 0) {
    el_log(EL_LOG_ERROR, "cannot load the processors (%s): %s", script,
           el_host_error(d.host));
    goto done;
  }

  el_src_cb_t cb = {.ud = &d, .on_connect = on_connect, .on_data = on_data,
                    .on_disconnect = on_disconnect, .on_end = on_end};
  if ((rc = el_src_new(&d.loop, &o->src, &cb, &d.src)) < 0) {
    el_log(EL_LOG_ERROR, "cannot open the eventlog source: %s",
           el_strerror(rc));
    goto done;
  }
  if (o->ctl.enabled) {
    const char *svc = o->otlp.service_name ? o->otlp.service_name
                                           : "undefined";
    el_ctl_sender_t s = {ctl_send, &d};
    rc = el_ctl_server_start(&d.loop, &o->ctl, svc, s, &d.ctl);
    if (rc < 0)
      el_log(EL_LOG_ERROR, "cannot start the control server on port %d: %s",
             o->ctl.port, el_strerror(rc));
    else
      el_web_set_control_port(d.web, el_ctl_server_port(d.ctl));
  }
  uv_timer_init(&d.loop, &d.timer);
  d.handles = 1;
  d.timer.data = &d;
  uv_timer_start(&d.timer, on_timer, 50, 50);
  uv_unref((uv_handle_t *)&d.timer);
  uv_signal_init(&d.loop, &d.sigint);
  uv_signal_init(&d.loop, &d.sigterm);
  d.sigint.data = d.sigterm.data = &d;
  uv_signal_start(&d.sigint, on_signal, SIGINT);
  uv_signal_start(&d.sigterm, on_signal, SIGTERM);
  uv_unref((uv_handle_t *)&d.sigint);
  uv_unref((uv_handle_t *)&d.sigterm);
  d.started_ms = d.stats_last_ms = d.log_last_ms = uv_now(&d.loop);
  d.batch_ms = el_cfg_batch_ms(cfg);
  el_log_set_hook(log_hook, NULL);
  if (o->src.kind == EL_SRC_FILE)
    el_log(EL_LOG_INFO, "Reading eventlog from %s", o->src.path);
  else if (o->src.kind == EL_SRC_STDIN)
    el_log(EL_LOG_INFO, "Reading eventlog from stdin");

  if ((rc = el_src_start(d.src)) < 0) {
    el_log(EL_LOG_ERROR, "cannot start the eventlog source: %s",
           el_strerror(rc));
    goto done;
  }
  uv_run(&d.loop, UV_RUN_DEFAULT);

  /* End of input: processors flush their windows, then the store. */
  log_progress(&d, 1);
  el_host_end(d.host);
  logq_drain(d.internal_logs ? d.store : NULL);
  el_tm_store_flush(d.store);
  if (el_tm_store_shutdown(d.store, o->otlp.shutdown_timeout_ms) < 0)
    el_log(EL_LOG_WARN, "some telemetry could not be delivered");
  log_progress(&d, 1);
  status = (d.end_status == 0 || d.end_status == EL_ESTOPPED) ? 0 : 1;
  if (status)
    el_log(EL_LOG_ERROR, "eventlog source failed: %s",
           el_strerror(d.end_status));
  if (el_host_stats(d.host)->handler_errors) el_host_report_errors(d.host);
  if (d.end_status == 0)              /* not after a signal */
    el_web_serve_until_signal(d.web); /* no-op without --*-port */

done:
  el_log_set_hook(NULL, NULL);
  logq_drain(NULL);
  el_ctl_server_free(d.ctl);
  el_src_free(d.src);
  if (d.otlp) {
    /* Freeing counts what is still queued as dropped (in the store). */
    free_exporter(&d);
  }
  if (o->stats && d.started_ms) print_stats(&d, stderr, 1);
  if (d.handles) {
    uv_handle_t *hs[] = {(uv_handle_t *)&d.timer, (uv_handle_t *)&d.sigint,
                         (uv_handle_t *)&d.sigterm};
    for (size_t k = 0; k < EL_ARRAY_LEN(hs); k++)
      if (!uv_is_closing(hs[k])) uv_close(hs[k], NULL);
  }
  uv_run(&d.loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&d.loop) < 0)
    el_log(EL_LOG_DEBUG, "event loop closed with handles left");
  el_host_free(d.host);
  el_tm_store_free(d.store);
  el_otlp_console_free(d.console);
  el_web_free(d.web);                 /* after the store: it exports here */
  return status;
}

int el_cmd_otelcol(int argc, char **argv) {
  opts_t o;
  memset(&o, 0, sizeof o);
  el_src_opts_init(&o.src);
  el_otlp_config_init(&o.otlp);
  el_ctl_opts_init(&o.ctl);
  el_web_opts_init(&o.web);
  o.flush_s = 1.0;
  o.level = EL_LOG_WARN;
  int status = 2;
  el_cfg_t *cfg = NULL;
  /* A daemon whose stdout (console exporter) or a socket closes must not
   * die of SIGPIPE: the write fails with EPIPE instead, and what could not
   * be written is counted as dropped and reported. */
  signal(SIGPIPE, SIG_IGN);

  if (parse_args(&o, argc, argv) < 0) goto out;
  status = 0;
  if (o.help) {
    print_help();
    goto out;
  }
  if (o.version) {
    printf("%s\n", EL_VERSION);
    goto out;
  }
  if (o.print_defaults) {
    status = el_cfg_print_defaults(stdout) < 0;
    goto out;
  }
  if (o.print_schema) {
    status = el_cfg_print_schema(stdout) < 0;
    goto out;
  }
  el_log_threshold = o.level;
  status = 1;
  cfg = el_cfg_new();
  if (!cfg) goto out;
  if (o.config)
    el_log(EL_LOG_DEBUG, "Reading configuration file from %s", o.config);
  if (o.config && el_cfg_load_file(cfg, o.config) < 0) {
    fprintf(stderr, PROG ": %s\n", el_cfg_diag(cfg)->msg);
    goto out;
  }
  if (o.web.prom_port < 0) o.web.prom_port = el_cfg_web_port(cfg, true);
  if (o.web.web_port < 0) o.web.web_port = el_cfg_web_port(cfg, false);
  if (o.print_defaults_debug) {
    status = print_defaults_debug(&o, cfg);
    goto out;
  }
  if (el_src_opts_validate(&o.src) < 0) {
    fprintf(stderr, PROG ": %s (see --help)\n", o.src.err);
    status = 2;
    goto out;
  }
  /* A missing file fails now, not after the exporters' shutdown wait. */
  if (o.src.kind == EL_SRC_FILE && !o.src.follow &&
      access(o.src.path, R_OK) < 0) {
    fprintf(stderr, PROG ": cannot open %s: %s\n", o.src.path,
            strerror(errno));
    goto out;
  }
  if (el_otlp_config_resolve(&o.otlp, NULL, NULL) < 0) {
    fprintf(stderr, PROG ": %s\n", o.otlp.err);
    goto out;
  }
  el_cfg_resolve(cfg, (uint64_t)llround(o.flush_s * 1000));
  el_log(EL_LOG_DEBUG, "Batch interval is %llums",
         (unsigned long long)el_cfg_batch_ms(cfg));
  status = run(&o, cfg);
out:
  el_cfg_free(cfg);
  el_otlp_config_free(&o.otlp);
  el_ctl_opts_close(&o.ctl);
  return status;
}
