/* cmd_run.c: `eventlog-live run SCRIPT.lua [options] <source options>`:
 * load a Lua script into the host (src/host/host.h), pump a source into
 * it, flush the telemetry at the end. docs/lua-api.md describes the
 * script API. Exit status: 0 success; 1 runtime failure (an input file
 * that cannot be opened, checked before the script loads; decode error,
 * fail-fast handler error, telemetry dropped but for what a closed
 * stdout lost: records_lost); 2 usage or script load error;
 * the script's os.exit(code): code, after a clean stop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "control/control.h"
#include "host/host.h"
#include "otlp/exp_console.h"
#include "otlp/otlp.h"
#include "source/source.h"
#include "telemetry/telemetry.h"

typedef struct {
  const char *script;
  int fail_fast;
  int budget_ms;            /* --handler-budget-ms, 0 = none */
  uint64_t lua_memory;      /* --lua-memory, 0 = the default */
  const char *output;       /* "console" or "none" */
  el_src_opts_t src;
  const char *sets[256];    /* "key=value" */
  int nsets;
} run_opts_t;

static void usage(FILE *f) {
  fprintf(f,
          "Usage: eventlog-live run SCRIPT.lua [OPTIONS] SOURCE-OPTIONS\n"
          "  or:  eventlog-live run SCRIPT.lua [OPTIONS] FILE.eventlog\n\n"
          "Run a Lua script (docs/lua-api.md) over an eventlog.\n\n"
          "Options:\n"
          "  --set KEY=VALUE      visible to the script as "
          "eventlog_live.config.KEY\n"
          "  --fail-fast          stop at the first error in a handler "
          "(exit 1)\n"
          "  --handler-budget-ms N  stop (as an error) any handler, timer "
          "or hook call\n"
          "                       running longer than N ms (slows Lua "
          "down)\n"
          "  --lua-memory SIZE    most memory the Lua heap may hold "
          "(K, M, G;\n"
          "                       default: 4G or half the RAM if less)\n"
          "  --output console|none  where emitted telemetry goes "
          "(default console:\n"
          "                       OTLP/JSON lines on stdout; telemetry "
          "dropped\n"
          "                       on the way, e.g. too large: exit 1)\n"
          "  -v, --log-level LEVEL  debug, info, warn (default), error, "
          "quiet\n                         (trace, fatal: as debug, error)\n"
          "  -h, --help           this text\n\nSource options:\n%s",
          el_src_opts_help());
}

/* The keys of --set KEY=VALUE (a dotted key makes nested tables,
 * docs/lua-api.md §7): no empty part ("a..b", ".a", "a."), and no key
 * that is both a value and a table ("--set a=1 --set a.b=2": the second
 * replaced the first). Returns 0, or -1 after printing why. */
static int check_sets(const run_opts_t *o) {
  for (int i = 0; i < o->nsets; i++) {
    const char *k = o->sets[i];
    size_t n = (size_t)(strchr(k, '=') - k);
    int empty = n == 0 || k[0] == '.' || k[n - 1] == '.';
    for (size_t j = 0; j + 1 < n; j++)
      if (k[j] == '.' && k[j + 1] == '.') empty = 1;
    if (empty) {
      el_eprintf("run: --set %.*s: a key part is empty\n", (int)n, k);
      return -1;
    }
    for (int m = 0; m < o->nsets; m++) {
      const char *l = o->sets[m];
      size_t ln = (size_t)(strchr(l, '=') - l);
      if (m != i && ln > n && l[n] == '.' && !strncmp(k, l, n)) {
        el_eprintf(
            "run: --set %.*s and --set %.*s: %.*s cannot be both a "
            "value and a table\n",
            (int)n, k, (int)ln, l, (int)n, k);
        return -1;
      }
    }
  }
  return 0;
}

/* The argument at argv[*i] (an option of ours or of the source, or a
 * positional one); *i moves past it. Returns 0, 1 (help printed) or 2
 * (usage error printed). */
static int parse_one(run_opts_t *o, int argc, char **argv, int *ip) {
  int i = *ip;
  const char *a = argv[i];
  int rc = el_src_opts_parse(&o->src, argc, argv, ip);
  if (rc < 0) {
    el_eprintf("run: %s\n", o->src.err);
    return 2;
  }
  if (rc == 1) return 0;
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
    usage(stdout);
    return 1;
  } else if (!strcmp(a, "--fail-fast")) {
    o->fail_fast = 1;
  } else if (!strcmp(a, "--handler-budget-ms") && i + 1 < argc) {
    char *end;
    long v = strtol(argv[++i], &end, 10);
    if (*end || v <= 0 || v > 3600000) {
      el_eprintf(
          "run: --handler-budget-ms wants "
          "1..3600000\n");
      return 2;
    }
    o->budget_ms = (int)v;
  } else if (!strcmp(a, "--lua-memory") && i + 1 < argc) {
    char err[160];
    if (el_parse_size(argv[++i], (uint64_t)16 << 20, (uint64_t)1 << 40,
                      &o->lua_memory, err, sizeof err) != 0) {
      el_eprintf("run: --lua-memory: %s\n", err);
      return 2;
    }
  } else if ((!strcmp(a, "--set") || !strcmp(a, "--output") ||
              !strcmp(a, "--log-level") || !strcmp(a, "-v")) &&
             i + 1 < argc) {
    const char *v = argv[++i];
    if (a[2] == 's') {
      if (!strchr(v, '=') || v[0] == '=' || o->nsets == 256) {
        el_eprintf("run: --set wants KEY=VALUE\n");
        return 2;
      }
      o->sets[o->nsets++] = v;
    } else if (a[2] == 'o') {
      if (strcmp(v, "console") && strcmp(v, "none")) {
        el_eprintf("run: --output console|none\n");
        return 2;
      }
      o->output = v;
    } else if (el_opt_log_level("run", a, v, &el_log_threshold) != 0) {
      return 2;
    }
  } else if (!strncmp(a, "--set=", 6)) {
    if (!strchr(a + 6, '=') || o->nsets == 256) {
      el_eprintf("run: --set wants KEY=VALUE\n");
      return 2;
    }
    o->sets[o->nsets++] = a + 6;
  } else if (a[0] == '-' && a[1] != '\0') {
    el_opt_unknown("run", a, usage);
    return 2;
  } else if (!o->script) {
    o->script = a;
  } else {
    el_src_opts_set_path(&o->src, a);
  }
  *ip = i + 1;
  return 0;
}

/* Returns 0, 1 (help printed) or 2 (usage error printed). An option
 * given twice with different values is warned about (cmd.h
 * el__cmd_note_option; --set per key). */
static int parse(run_opts_t *o, int argc, char **argv) {
  static const char *const shorts[] = {"-v", "--log-level", NULL};
  el__cmd_seen_t seen = {.shorts = shorts};
  el_src_opts_init(&o->src);
  o->output = "console";
  for (int i = 1; i < argc;) {
    int start = i, rc = parse_one(o, argc, argv, &i);
    if (rc) return rc;
    el__cmd_note_option(&seen, argv, start, i);
  }
  if (check_sets(o) != 0) return 2;
  if (!o->script) {
    el_eprintf("run: no script given\n");
    usage(stderr);
    return 2;
  }
  if (el_src_opts_validate(&o->src) != 0) {
    el_eprintf("run: %s\n", o->src.err);
    return 2;
  }
  el__cmd_warn_repeated(&seen, "run");
  return 0;
}

/* {====== the source: el.control ======} */

/* Lua's el.control goes to the pump's source, as in the daemon
 * (cmd_otelcol.c): the sender points at the source while it exists, and
 * has no writer otherwise (el.control then answers nil, "not connected";
 * a file, FIFO or stdin source answers the same through el_src_write). */
static el_ctl_sender_t g_ctl;

static void c_source(void *ud, el_src_t *src) {
  (void)ud;
  g_ctl.send = src ? el_ctl_src_send : NULL;
  g_ctl.ud = src;
}

/* Wall-clock timers: polled by an unreferenced libuv timer, so they never
 * keep the loop alive after the input ended. */
static void on_wall(uv_timer_t *t) {
  el_host_t *h = t->data;
  int64_t next = el_host_run_wall_timers(h, uv_now(t->loop));
  uint64_t delay = next < 0 || next > 100 ? 100 : (uint64_t)next;
  uv_timer_start(t, on_wall, delay ? delay : 1, 0);
}

/* The program resource starts as an OpenTelemetry SDK's would: the
 * pairs of OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME as
 * service.name (docs/otlp.md); the script's el.set_resource, which runs
 * later, replaces any of them. Returns 0, EL_ECONFIG after printing
 * which variable is malformed (a setup error, exit status 1,
 * docs/exit-codes.md "usage"), or EL_ENOMEM. */
static int env_resource(el_tm_store_t *st) {
  el_otlp_config_t cfg;
  el_otlp_config_init(&cfg);
  int rc = el_otlp_config_resolve_resource(&cfg, NULL, NULL);
  if (rc == 0) rc = el_otlp_config_apply_resource(&cfg, st);
  if (rc == EL_ECONFIG) el_eprintf("run: %s\n", cfg.err);
  el_otlp_config_free(&cfg);
  return rc;
}

/* The OpenTelemetry exporter variables are the daemon's: run writes to
 * its --output only. The first one set that asks for anything else is
 * said on stderr (once), so that a script's telemetry is not looked for
 * at a collector. docs/otlp.md. */
static void warn_exporter_env(void) {
  static const char *const vars[] = {
      "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_TRACES_EXPORTER",
      "OTEL_PROFILES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (!v || !*v || !strcasecmp(v, "console") || !strcasecmp(v, "none"))
      continue;
    el_eprintf(
        "run: %s=%s ignored: run writes its script's telemetry to "
        "--output (console or none); eventlog-live-otelcol exports "
        "over OTLP\n",
        vars[i], v);
    return;
  }
}

/* Any SIGINT/SIGTERM of this run, while reading (run_interrupt) or after
 * the input (el__cmd_end_set_flag): ends the console's wait for a reader
 * of stdout that reads slowly or not at all (el_otlp_console_set_stop). */
static volatile sig_atomic_t g_console_stop;

static void console_sync(void *ud) { el_otlp_console_sync(ud); }

/* The console's writer thread, as the daemon's (docs/otlp.md §5 "Who
 * waits for stdout"): a live source never waits for a reader of stdout
 * (past 64 MiB queued, dropped and counted; into a file, 8 MiB and the
 * input waits); a recorded file's replay into a pipe, socket or terminal
 * goes at its reader's pace until a signal (EL_OTLP_CONSOLE_WAIT_READER),
 * so that one SIGINT/SIGTERM stops it even when nobody reads; into a file
 * the loop writes itself. Lua's print() and io.write() wait for the
 * queued lines first (el_host_set_stdout_sync): the order is kept. */
static void console_writer(el_host_t *h, const run_opts_t *o,
                           el_otlp_console_t *con) {
  int to_file = el__cmd_stdout_is_file(), live = el_src_opts_live(&o->src);
  int mode = live ? to_file : EL_OTLP_CONSOLE_WAIT_READER;
  g_console_stop = 0;
  el_otlp_console_set_stop(con, &g_console_stop);
  el__cmd_end_set_flag(&g_console_stop);
  if (!live && to_file) return;
  if (el_otlp_console_start_writer(
          con, (size_t)(live && !to_file ? 64 : 8) << 20, mode) < 0) {
    el_log(EL_LOG_WARN, "console: no writer thread: writing on the loop");
    return;
  }
  el_host_set_stdout_sync(h, console_sync, con);
}

/* The store and its --output. *con: the console exporter (NULL for
 * --output none), the store's: valid until *st is freed. */
static int setup_store(el_host_t *h, const run_opts_t *o, el_tm_store_t **st,
                       el_otlp_console_t **con) {
  warn_exporter_env();
  *st = el_tm_store_new("eventlog-live", EL_VERSION);
  if (!*st) return EL_ENOMEM;
  el_host_set_store(h, *st);
  int rc = env_resource(*st);
  if (rc < 0) return rc;
  if (!strcmp(o->output, "console")) rc = el_otlp_console_add(*st, stdout, con);
  if (rc == 0 && *con) console_writer(h, o, *con);
  return rc < 0 ? rc : 0;
}

/* The consumer's interrupt (a signal handler, async-signal-safe): the
 * console's stop too. */
static el_src_consumer_t g_host_c;

static void run_interrupt(void *ud, int sig) {
  g_console_stop = 1;
  if (g_host_c.interrupt) g_host_c.interrupt(ud, sig);
}

/* The telemetry records the run lost: every record the store counted as
 * dropped (a point too large for one request, a failed write, a window
 * limit, out of memory) but those a closed stdout lost (`run ... | head`:
 * its reader chose to stop, as for `cat`) and those a SIGINT/SIGTERM gave
 * up waiting for a reader that did not read (the user stopped the run).
 * docs/exit-codes.md. */
static uint64_t records_lost(el_tm_store_t *st, const el_otlp_console_t *con) {
  const el_tm_stats_t *s = el_tm_store_stats(st);
  uint64_t n = 0;
  for (int k = 0; k < EL_TM_NSIGNALS; k++) n += s->dropped[k];
  uint64_t closed = con ? el_otlp_console_dropped_closed(con) +
                              el_otlp_console_dropped_stopped(con)
                        : 0;
  return n > closed ? n - closed : 0;
}

/* Whether the console's failed end (el_tm_store_shutdown < 0: its writer
 * thread gave something up, or its write failed) only lost what
 * records_lost does not count: what a closed stdout or a SIGINT/SIGTERM
 * stopping the wait for a reader that did not read gave up (exit status
 * 0). */
static int stopped_only(el_tm_store_t *st, const el_otlp_console_t *con) {
  return con &&
         el_otlp_console_dropped_closed(con) +
                 el_otlp_console_dropped_stopped(con) >
             0 &&
         records_lost(st, con) == 0;
}

/* An input file that cannot be read (missing, unreadable, a folder) is
 * said in one line naming it, before the script is loaded: its hooks
 * (on_end, ...) must not run over an input that never was. Not for a
 * FIFO's contents (opening one would wait for its writer), nor with
 * --follow, which waits for the file to appear (docs/sources.md).
 * Returns 0, or -1 after printing why (exit status 1,
 * docs/exit-codes.md "missing"). */
static int check_input(const run_opts_t *o) {
  const char *path = o->src.path;
  struct stat st;
  if (o->src.kind != EL_SRC_FILE || o->src.follow || !path) return 0;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    errno = EISDIR;
  else if (access(path, R_OK) == 0)
    return 0;
  el_eprintf("run: cannot open %s: %s\n", path, strerror(errno));
  return -1;
}

/* After the input (the pump returned rc): on_end, telemetry flushed, the
 * errors reported. Returns the exit status. */
static int end_run(el_host_t *h, el_tm_store_t *st,
                   const el_otlp_console_t *con, int rc) {
  el__cmd_stop_t guard;
  el__cmd_end_begin(&guard, h); /* a signal now stops on_end, not run */
  int end_rc = el_host_end(h);
  int exp_rc = el_tm_store_shutdown(st, 10000);
  el__cmd_end_end(&guard);
  el_host_report_errors(h);
  int status = 0;
  uint64_t lost;
  if (end_rc == EL_ESTOPPED) {
    el_eprintf("run: stopped (--fail-fast): %s\n", el_host_error(h));
    status = 1;
  } else if (rc < 0 && rc != EL_ESTOPPED) {
    status = 1; /* the pump logged the decode error and its offset */
  } else if (exp_rc < 0 && !stopped_only(st, con)) {
    el_eprintf("run: export: %s\n", el_strerror(exp_rc));
    status = 1;
  } else if ((lost = records_lost(st, con)) > 0) {
    el_eprintf(
        "run: %llu telemetry record%s dropped (see the warnings): exit "
        "status 1\n",
        (unsigned long long)lost, lost == 1 ? " was" : "s were");
    status = 1;
  }
  el_host_exit_status(h, &status); /* os.exit(code): its code */
  return status;
}

/* The arguments swapped (`run app.eventlog script.lua`): a script that
 * begins with an eventlog header ("hdrbhetb", spec §1.1) is said as such
 * instead of Lua's "syntax error" at its line 1. Returns 0, or -1 after
 * printing why (exit status 2, a usage error). */
static int check_script(const run_opts_t *o) {
  char magic[8];
  FILE *f = fopen(o->script, "rb");
  if (!f) return 0; /* el_host_load says why */
  size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  if (n < sizeof magic || memcmp(magic, "hdrbhetb", sizeof magic) != 0)
    return 0;
  el_eprintf(
      "run: %s is an eventlog, not a Lua script: the script comes "
      "first (eventlog-live run SCRIPT.lua [OPTIONS] FILE.eventlog)\n",
      o->script);
  return -1;
}

static int run(const run_opts_t *o) {
  if (check_script(o) != 0) return 2;
  if (check_input(o) != 0) return 1;
  el_host_opts_t hopts = {.fail_fast = o->fail_fast,
                          .handler_budget_ms = o->budget_ms,
                          .lua_memory = o->lua_memory,
                          .exit_stops = 1};
  el_host_t *h = el_host_new(&hopts);
  el_tm_store_t *st = NULL;
  el_otlp_console_t *con = NULL; /* st's, for records_lost */
  int status = 1;
  if (!h) {
    el_eprintf("run: out of memory\n");
    return 1;
  }
  /* live: never hold an event back; a socket's end in its words */
  el_ev_decoder_set_opts(el_host_decoder(h), el_src_opts_decoder_opts(&o->src));
  int rc = setup_store(h, o, &st, &con);
  if (rc < 0) {
    if (rc != EL_ECONFIG) el_eprintf("run: telemetry: %s\n", el_strerror(rc));
    goto done;
  }
  for (int i = 0; i < o->nsets; i++) {
    const char *eq = strchr(o->sets[i], '=');
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - o->sets[i]), o->sets[i]);
    el_host_set_config(h, key, eq + 1);
  }
  /* el.control validates a builtin name even before a source is open
   * (while the script loads: an unknown name is said as such, a known one
   * is "not connected"); c_source gives it the source to write to. */
  g_ctl.send = NULL;
  g_ctl.ud = NULL;
  el_host_set_control(h, el_ctl_host_control, &g_ctl);
  rc = el_host_load(h, o->script);
  if (rc < 0 && el_host_exit_status(h, &status)) {
    goto done; /* os.exit while loading: nothing read */
  } else if (rc < 0) {
    el_eprintf("run: %s\n", el_host_error(h));
    status = rc == EL_ESTOPPED ? 1 : 2;
    goto done;
  }
  uv_loop_t loop;
  uv_loop_init(&loop);
  uv_timer_t wall;
  uv_timer_init(&loop, &wall);
  wall.data = h;
  uv_timer_start(&wall, on_wall, 0, 0);
  uv_unref((uv_handle_t *)&wall);
  el_src_consumer_t c;
  el_host_consumer(h, &c);
  c.on_source = c_source;
  g_host_c = c;
  c.interrupt = run_interrupt;
  /* A closed pipe gives EPIPE, never the end of the run: el.control
   * writing to a socket source whose peer closed (src/source/source.h,
   * "Signals"), and stdout closed by its reader (`| head`): the console
   * says so once and the input is still read to its end, so a program
   * writing a FIFO is never left blocked on it. */
  signal(SIGPIPE, SIG_IGN);
  el_src_pump_result_t res;
  rc = el_src_pump(&loop, &o->src, &c, &res);
  uv_close((uv_handle_t *)&wall, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  status = end_run(h, st, con, rc);
done:
  el_host_free(h);
  el_tm_store_free(st);
  return status;
}

int el_cmd_run(int argc, char **argv) {
  run_opts_t o;
  memset(&o, 0, sizeof o);
  int rc = parse(&o, argc, argv);
  if (rc == 1) return 0;
  if (rc) return 2;
  return run(&o);
}
