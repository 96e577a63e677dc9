/* cmd_report.c: `eventlog-live report [options] <source options | FILE>`
 * writes one self-contained HTML page (docs/report.md): heap, heap
 * profile, capability timeline, GC pauses, threads, profiles as flame
 * graphs, logs, and sections added by scripts.
 *
 * Pipeline: the source is pumped into the Lua host (el_host_consumer), as
 * in the daemon (daemon.c); the host runs the default processors (lua/
 * eventlog_live/processors) with a report configuration (every point kept,
 * exported every second of eventlog time, the capability usage spans on)
 * and the report's script (lua/eventlog_live/report/main.lua), then the
 * user's --script files. Their telemetry goes into a store whose only
 * exporter is the reducer (src/report/report.h), which keeps what the page
 * needs as the batches arrive: memory does not grow with the input's
 * length. At the end the page is written to a temporary file beside the
 * output and renamed into place (or written to stdout for `-o -`).
 *
 * Exit status: 0 the report was written; 1 the input could not be read
 * (nothing written) or was corrupt (the report is written with what could
 * be read and lists the errors with their byte offsets at the top), or
 * the report could not be written; 2 usage or script error. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "config/config.h"
#include "control/control.h"
#include "host/host.h"
#include "report/report.h"
#include "source/source.h"
#include "telemetry/telemetry.h"

extern char **environ;

#define MAX_SCRIPTS 32
#define MAX_SETS 256

typedef struct {
  const char *output; /* -o: path or "-"; NULL with --open */
  int open;           /* --open */
  const char *title;
  char breakdown[8]; /* -h<X> */
  long top, columns;
  const char *scripts[MAX_SCRIPTS];
  int nscripts;
  const char *sets[MAX_SETS];
  int nsets;
  el_src_opts_t src;
} report_opts_t;

/* The processors' configuration for a report: every measurement kept
 * (aggregate: false), everything exported each second of eventlog time,
 * the capability usage spans on (the timeline and GC pauses), nothing the
 * report does not read. Names and descriptions are the defaults, so the
 * telemetry is the daemon's. */
static const char REPORT_CONFIG[] =
    "processors:\n"
    "  logs:\n"
    "    user_marker: {export: 1s}\n"
    "    user_message: {export: 1s}\n"
    "  metrics:\n"
    "    heap_size: {aggregate: false, export: 1s}\n"
    "    heap_live: {aggregate: false, export: 1s}\n"
    "    blocks_size: {aggregate: false, export: 1s}\n"
    "    heap_allocated: {aggregate: false, export: 1s}\n"
    "    mem_current: {aggregate: false, export: 1s}\n"
    "    mem_needed: {aggregate: false, export: 1s}\n"
    "    mem_returned: {aggregate: false, export: 1s}\n"
    "    heap_prof_sample: {aggregate: false, export: 1s}\n"
    "  traces:\n"
    "    capability_usage: {export: true}\n"
    "  profiles:\n"
    "    cost_centre_stack_profile: {export: 1s}\n"
    "    call_stack_profile: {export: 1s}\n";
#define FLUSH_MS 1000

static void usage(FILE *f) {
  fprintf(f,
          "Usage: eventlog-live report [OPTIONS] FILE.eventlog -o REPORT.html"
          "\n  or:  eventlog-live report [OPTIONS] SOURCE-OPTIONS -o "
          "REPORT.html\n\n"
          "Write one HTML page (styles, scripts and data inline: no network "
          "needed\nto view it) with the heap, heap profile, capability "
          "timeline, GC pauses,\nthreads, profiles and logs of an eventlog "
          "(docs/report.md).\n\nOptions:\n"
          "  -o, --output PATH    the report (\"-\": standard output)\n"
          "  --open               open it in a browser (xdg-open); without "
          "-o, in a\n"
          "                       temporary file\n"
          "  --title TEXT         the page's title (default: the file's name)\n"
          "  --top N              heap profile bands drawn, the rest as "
          "\"other\" (1..50,\n"
          "                       default 15)\n"
          "  --columns N          buckets per chart before they merge "
          "(64..65536,\n"
          "                       default 2048)\n"
          "  --script FILE.lua    also run this script; it may add sections"
          " (repeatable)\n"
          "  --set KEY=VALUE      visible to scripts as "
          "eventlog_live.config.KEY\n"
          "  -h<X>                heap profile breakdown (-hT, -hi, ...) "
          "when the\n"
          "                       eventlog does not say it (GHC < 9.14)\n"
          "  -v, --log-level LEVEL  debug, info, warn (default), error, "
          "quiet\n                         (trace, fatal: as debug, error)\n"
          "  -h, --help           this text\n\nSource options:\n%s",
          el_src_opts_help());
}

static int parse_long(const char *opt, const char *v, long lo, long hi,
                      long *out) {
  char *end;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || *end || x < lo || x > hi) {
    el_eprintf("report: %s wants %ld..%ld\n", opt, lo, hi);
    return 2;
  }
  *out = x;
  return 0;
}

/* One option of our own at argv[*i]; returns 0 consumed, 1 help, 2 usage
 * error, 3 not ours. */
static int parse_one(report_opts_t *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v = NULL;
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
  if (!strcmp(a, "--open")) {
    o->open = 1;
  } else if (!strcmp(a, "-o") || el_opt_value(argc, argv, i, "--output", &v)) {
    if (!strcmp(a, "-o")) { /* el_opt_value advanced *i for --output */
      v = *i + 1 < argc ? argv[*i + 1] : NULL;
      *i += 2;
    }
    if (!v) {
      el_eprintf("report: -o wants a path\n");
      return 2;
    }
    o->output = v;
    return 0;
  } else if (el_opt_value(argc, argv, i, "--title", &v)) {
    if (!v) return el_eprintf("report: --title TEXT\n"), 2;
    o->title = v;
    return 0;
  } else if (el_opt_value(argc, argv, i, "--top", &v)) {
    return parse_long("--top", v, 1, 50, &o->top);
  } else if (el_opt_value(argc, argv, i, "--columns", &v)) {
    return parse_long("--columns", v, 64, 65536, &o->columns);
  } else if (el_opt_value(argc, argv, i, "--script", &v)) {
    if (!v || o->nscripts == MAX_SCRIPTS)
      return el_eprintf("report: --script FILE\n"), 2;
    o->scripts[o->nscripts++] = v;
    return 0;
  } else if (el_opt_value(argc, argv, i, "--set", &v)) {
    if (!v || !strchr(v, '=') || v[0] == '=' || o->nsets == MAX_SETS)
      return el_eprintf("report: --set KEY=VALUE\n"), 2;
    o->sets[o->nsets++] = v;
    return 0;
  } else if (el_opt_value(argc, argv, i, "--log-level", &v) ||
             (!strcmp(a, "-v") && el_opt_value(argc, argv, i, "-v", &v))) {
    return el_opt_log_level("report", a[1] == 'v' ? "-v" : "--log-level", v,
                            &el_log_threshold)
               ? 2
               : 0;
  } else if (a[0] == '-' && a[1] == 'h' && a[2] && strlen(a) < 8) {
    snprintf(o->breakdown, sizeof o->breakdown, "%s", a);
  } else {
    return 3;
  }
  ++*i;
  return 0;
}

/* The argument at argv[*i]: a source option, one of ours, or the input
 * path; *i moves past it. Returns 0, 1 (help printed) or 2 (usage error
 * printed). */
static int parse_arg(report_opts_t *o, int argc, char **argv, int *i) {
  int rc = el_src_opts_parse(&o->src, argc, argv, i);
  if (rc < 0) {
    el_eprintf("report: %s\n", o->src.err);
    return 2;
  }
  if (rc == 1) return 0;
  rc = parse_one(o, argc, argv, i);
  if (rc == 1) usage(stdout);
  if (rc != 3) return rc;
  if (argv[*i][0] == '-' && argv[*i][1] != '\0') {
    el_opt_unknown("report", argv[*i], usage);
    return 2;
  }
  el_src_opts_set_path(&o->src, argv[(*i)++]);
  return 0;
}

/* Returns 0, 1 (help printed) or 2 (usage error printed). An option
 * given twice with different values is warned about (cmd.h
 * el__cmd_note_option; --set per key, --script values add up). */
static int parse(report_opts_t *o, int argc, char **argv) {
  static const char *const shorts[] = {"-h", "-h",       "-v", "--log-level",
                                       "-o", "--output", NULL};
  static const char *const adds[] = {"--script", NULL};
  el__cmd_seen_t seen = {.shorts = shorts, .repeatable = adds};
  el_src_opts_init(&o->src);
  o->top = 15;
  o->columns = 2048;
  for (int i = 1; i < argc;) {
    int start = i, rc = parse_arg(o, argc, argv, &i);
    if (rc) return rc;
    el__cmd_note_option(&seen, argv, start, i);
  }
  if (el_src_opts_validate(&o->src) != 0) {
    el_eprintf("report: %s\n", o->src.err);
    return 2;
  }
  if (!o->output && !o->open) {
    el_eprintf(
        "report: no output: give -o REPORT.html "
        "(or -o - for stdout, or --open)\n");
    return 2;
  }
  if (o->open && o->output && !strcmp(o->output, "-")) {
    el_eprintf("report: --open needs a file, not -o -\n");
    return 2;
  }
  /* The page is renamed over PATH: were PATH the input (or a link to
   * it), the eventlog would be gone. */
  if (o->output && strcmp(o->output, "-") && o->src.kind == EL_SRC_FILE &&
      el_same_file(o->src.path, o->output)) {
    el_eprintf("report: -o %s is the input itself\n", o->output);
    return 2;
  }
  el__cmd_warn_repeated(&seen, "report");
  return 0;
}

/* {====== configuration ======} */

/* el.config for the processors, as the daemon passes it (daemon.c
 * config_to_lua), and the names the reducer reads. */
static int config_to_host(el_host_t *h, const el_cfg_t *cfg,
                          const report_opts_t *o, el_rp_names_t *names) {
  int rc = 0;
  rc |= el_host_set_config_integer(h, "flush_ns", (int64_t)FLUSH_MS * 1000000);
  rc |= el_host_set_config_integer(h, "batch_ns",
                                   (int64_t)el_cfg_batch_ms(cfg) * 1000000);
  if (o->breakdown[0]) rc |= el_host_set_config(h, "breakdown", o->breakdown);
  for (size_t i = 0; i < el_cfg_nprocs(); i++) {
    const el_cfg_proc_t *p = el_cfg_proc_at(cfg, i);
    char key[160];
    const char *g = el_cfg_group_name(p->info->group);
#define K(field) \
  (snprintf(key, sizeof key, "processors.%s.%s." field, g, p->info->key), key)
    rc |= el_host_set_config_boolean(h, K("enabled"), p->enabled);
    rc |= el_host_set_config(h, K("name"), p->name);
    if (p->description)
      rc |= el_host_set_config(h, K("description"), p->description);
    rc |= el_host_set_config_integer(h, K("aggregate_ns"),
                                     (int64_t)p->aggregate_ms * 1000000);
    rc |= el_host_set_config_integer(h, K("export_ns"),
                                     (int64_t)p->export_ms * 1000000);
#undef K
  }
  for (int i = 0; i < o->nsets; i++) {
    const char *eq = strchr(o->sets[i], '=');
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - o->sets[i]), o->sets[i]);
    rc |= el_host_set_config(h, key, eq + 1);
  }
  const struct {
    el_cfg_group_t g;
    const char *key;
    const char **out;
  } m[] = {{EL_CFG_METRICS, "heap_size", &names->heap_size},
           {EL_CFG_METRICS, "heap_live", &names->heap_live},
           {EL_CFG_METRICS, "blocks_size", &names->blocks_size},
           {EL_CFG_METRICS, "heap_allocated", &names->heap_allocated},
           {EL_CFG_METRICS, "mem_current", &names->mem_current},
           {EL_CFG_METRICS, "mem_needed", &names->mem_needed},
           {EL_CFG_METRICS, "mem_returned", &names->mem_returned},
           {EL_CFG_METRICS, "heap_prof_sample", &names->heap_prof_sample},
           {EL_CFG_TRACES, "capability_usage", &names->cap_usage},
           {EL_CFG_PROFILES, "cost_centre_stack_profile", &names->cc_profile},
           {EL_CFG_PROFILES, "call_stack_profile", &names->stack_profile}};
  for (size_t i = 0; i < EL_ARRAY_LEN(m); i++) {
    const el_cfg_proc_t *p = el_cfg_proc(cfg, m[i].g, m[i].key);
    *m[i].out = p && p->enabled ? p->name : NULL;
  }
  return rc ? EL_ENOMEM : 0;
}

static el_cfg_t *report_config(void) {
  el_cfg_t *cfg = el_cfg_new();
  if (!cfg) return NULL;
  if (el_cfg_load_string(cfg, "<report>", REPORT_CONFIG,
                         sizeof REPORT_CONFIG - 1) < 0 ||
      el_cfg_resolve(cfg, FLUSH_MS) < 0) {
    el_log(EL_LOG_ERROR, "report configuration: %s", el_cfg_diag(cfg)->msg);
    el_cfg_free(cfg);
    return NULL;
  }
  return cfg;
}

/* {====== the pump's consumer: the host, with errors noted ======} */

typedef struct {
  el_src_consumer_t host; /* el_host_consumer */
  el_rp_t *rp;
  uint64_t errors;
  int have_error; /* an error was noted, at error_offset */
  uint64_t error_offset;
  uint64_t listed; /* parts of the input that could not be read, listed
                      at the top of the page (el_rp_add_error) */
} pump_t;

static void note_error(pump_t *p) {
  const el_diag_t *d = p->host.diag ? p->host.diag(p->host.ud) : NULL;
  p->errors++;
  if (!d) return;
  el_rp_add_error(p->rp, d->offset, d->msg);
  p->listed++;
  p->have_error = 1;
  p->error_offset = d->offset;
}

/* A decoder warning that says data was lost (a corrupt part skipped, a
 * malformed event, conflicting declarations; not the informational ones
 * such as stray bytes before a header) is listed at the top of the page,
 * as the errors are: the page must not look complete when it is not. The
 * status stays 0 (docs/exit-codes.md: decoding went on around it). */
static void on_host_warning(void *ud, const el_diag_t *d) {
  pump_t *p = ud;
  /* An event cut off where a new stream begins (eventlogs joined): the
   * session ends mid-event, shown as a cut at the end of input is. */
  if (d->code == 0 && d->cut_event) {
    el_rp_add_cut(p->rp, d->offset, 1, d->msg);
    return;
  }
  /* The part skipped after an error already listed is the same fault. */
  if (d->code == 0 || (p->have_error && d->offset == p->error_offset)) return;
  el_rp_add_error(p->rp, d->offset, d->msg);
  p->listed++;
}

static void c_reset(void *ud) {
  pump_t *p = ud;
  p->host.reset(p->host.ud);
}

static int c_feed(void *ud, const uint8_t *buf, size_t len) {
  pump_t *p = ud;
  int rc = p->host.feed(p->host.ud, buf, len);
  if (rc < 0 && rc != EL_ESTOPPED) note_error(p);
  return rc;
}

static const el_diag_t *c_diag(void *ud) {
  pump_t *p = ud;
  return p->host.diag(p->host.ud);
}

static int c_finish(void *ud) {
  pump_t *p = ud;
  int rc = p->host.finish(p->host.ud);
  /* A session cut inside an event is a warning (the pump says so on
   * stderr); the page shows it too. */
  const el_diag_t *d = rc == EL_ETRUNC ? c_diag(p) : NULL;
  /* A later header cut short (cut_event with header): not "mid-event";
   * listed at the top, as a part that could not be read is. */
  if (d && d->cut_event && d->header) {
    el_rp_add_error(p->rp, d->offset, d->msg);
    p->listed++;
  } else if (d && d->cut_event)
    el_rp_add_cut(p->rp, d->offset, 0, d->msg);
  if (rc < 0 && rc != EL_ESTOPPED && rc != EL_ETRUNC) note_error(p);
  return rc;
}

/* After a stop by signal: nothing said about where the bytes end. */
static int c_finish_stopped(void *ud) {
  pump_t *p = ud;
  return p->host.finish_stopped(p->host.ud);
}

/* From the SIGINT/SIGTERM handler: a Lua handler that loops (a --script)
 * is abandoned, as in run and the daemon; without it the report ignored
 * both signals for as long as the handler ran. */
static void c_interrupt(void *ud, int sig) {
  pump_t *p = ud;
  p->host.interrupt(p->host.ud, sig);
}

static void c_input_name(void *ud, const char *name) {
  pump_t *p = ud;
  p->host.input_name(p->host.ud, name);
}

static uint64_t c_offset(void *ud) {
  pump_t *p = ud;
  return p->host.offset(p->host.ud);
}

static int c_data_ended(void *ud) {
  pump_t *p = ud;
  return p->host.data_ended(p->host.ud);
}

static void c_received(void *ud, uint64_t by, int live) {
  pump_t *p = ud;
  p->host.received(p->host.ud, by, live);
}

static void c_input_waits(void *ud, int waiting) {
  pump_t *p = ud;
  p->host.input_waits(p->host.ud, waiting);
}

/* The report's own scan of the whole file (el_rp_scan: the host's hints
 * and the report's census index), over a mapping whose pages it gives
 * back as it goes (313 MB of a 1 GB -hT log would stay resident). */
static void c_scan(void *ud, int fd, uint64_t from, uint64_t len) {
  pump_t *p = ud;
  size_t all = (size_t)(from + len); /* mapped from 0: page-aligned */
  uint8_t *m = mmap(NULL, all, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) {
    el_log(EL_LOG_DEBUG, "cannot map the eventlog for a scan: %s",
           el_strerror(-errno));
    return;
  }
  el_rp_scan(p->host.ud, m + from, (size_t)len);
  munmap(m, all);
}

/* Wall-clock timers (live sources): polled by an unreferenced timer. */
static void on_wall(uv_timer_t *t) {
  el_host_t *h = t->data;
  int64_t next = el_host_run_wall_timers(h, uv_now(t->loop));
  uint64_t delay = next < 0 || next > 100 ? 100 : (uint64_t)next;
  uv_timer_start(t, on_wall, delay ? delay : 1, 0);
}

/* {====== output ======} */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write the page to f, closed after (path names it in messages).
 * Returns 0 or a negated errno. */
static int write_to(el_rp_t *rp, FILE *f) {
  int rc = el_rp_write_html(rp, f);
  if (fclose(f) != 0 && rc == 0) rc = -errno;
  return rc;
}

/* Write the page to path ("-" = stdout). A regular file, or a path where
 * nothing is yet, gets it through a temporary file renamed into place (a
 * reader never sees half a page); anything else (/dev/null, a FIFO, a
 * terminal, a symbolic link) is written as it is: renamed over, a device
 * node would be replaced by a file (as root, /dev/null). Returns 0 or a
 * negated errno (message printed). */
static int write_report(el_rp_t *rp, const char *path) {
  if (!strcmp(path, "-")) {
    int rc = el_rp_write_html(rp, stdout);
    if (rc < 0) el_eprintf("report: writing the output: %s\n", el_strerror(rc));
    return rc;
  }
  struct stat sb;
  if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    FILE *f = fopen(path, "wbe");
    int rc = f ? write_to(rp, f) : -errno;
    if (rc < 0)
      el_eprintf("report: cannot write %s: %s\n", path, el_strerror(rc));
    return rc;
  }
  char tmp[4096];
  int n = snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof tmp) {
    el_eprintf("report: path too long: %s\n", path);
    return EL_EINVAL;
  }
  FILE *f = fopen(tmp, "wbe");
  if (!f) {
    int e = errno;
    el_eprintf("report: cannot write %s: %s\n", path, strerror(e));
    return -e;
  }
  int rc = write_to(rp, f);
  if (rc == 0 && rename(tmp, path) != 0) rc = -errno;
  if (rc < 0) {
    el_eprintf("report: cannot write %s: %s\n", path, el_strerror(rc));
    unlink(tmp);
  }
  return rc;
}

/* xdg-open the page; a failure is only told. Some browsers keep
 * xdg-open running until their window closes: it is waited for 3 s at
 * most, then left to run. */
static void open_report(const char *path) {
  char *argv[] = {(char *)"xdg-open", (char *)path, NULL};
  pid_t pid;
  if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) != 0) {
    el_eprintf(
        "report: cannot run xdg-open; open %s in "
        "a browser\n",
        path);
    return;
  }
  for (int i = 0; i < 30; i++) {
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        el_eprintf(
            "report: xdg-open failed; open %s in "
            "a browser\n",
            path);
      return;
    }
    if (r < 0) return;
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
  }
}

/* {====== run ======} */

typedef struct {
  el_host_t *h;
  el_tm_store_t *st;
  el_rp_t *rp;
  el_cfg_t *cfg;
} parts_t;

static void parts_free(parts_t *p) {
  el_host_free(p->h);
  el_tm_store_free(p->st); /* before the reducer: it exports there */
  el_rp_free(p->rp);
  el_cfg_free(p->cfg);
}

/* The host's clock hook: the records converted with the session's
 * previous clock go to the reducer first (flushed), then it is told the
 * new one (report.h el_rp_clock: it holds a session's records until its
 * clock settles, then moves them to it). */
static void on_clock(void *ud, uint64_t session, el_unix_ns_t start_unix_ns,
                     el_rts_ns_t end_t, int settled) {
  parts_t *p = ud;
  el_tm_store_flush(p->st);
  el_rp_clock(p->rp, session, start_unix_ns, end_t, settled);
}

/* Build the host, store and reducer and load the scripts. Returns 0, 1
 * (setup failed) or 2 (a script failed to load). */
static int setup(parts_t *p, const report_opts_t *o) {
  el_rp_opts_t ro;
  el_rp_opts_init(&ro);
  ro.top_bands = (size_t)o->top;
  ro.columns = (size_t)o->columns;
  p->cfg = report_config();
  p->h = el_host_new(NULL);
  p->st = el_tm_store_new("eventlog-live-report", EL_VERSION);
  if (!p->cfg || !p->h || !p->st ||
      config_to_host(p->h, p->cfg, o, &ro.names) < 0 ||
      el_rp_new(&ro, &p->rp) < 0) {
    el_eprintf("report: out of memory\n");
    return 1;
  }
  el_tm_exporter_t ex;
  el_rp_exporter(p->rp, &ex);
  if (el_tm_store_add_exporter(p->st, &ex) < 0 ||
      el_rp_lua_register(p->rp, el_host_lua(p->h)) < 0) {
    el_eprintf("report: out of memory\n");
    return 1;
  }
  el_host_set_store(p->h, p->st);
  el_host_set_clock_hook(p->h, on_clock, p);
  /* No socket to send on: el.control checks a builtin name, then answers
   * "not connected" (docs/lua-api.md §7). */
  static el_ctl_sender_t no_ctl;
  el_host_set_control(p->h, el_ctl_host_control, &no_ctl);
  if (el_host_load_module(p->h, "eventlog_live.report.main") < 0) {
    el_eprintf("report: %s\n", el_host_error(p->h));
    return 2;
  }
  for (int i = 0; i < o->nscripts; i++) {
    if (el_host_load(p->h, o->scripts[i]) < 0) {
      el_eprintf("report: %s\n", el_host_error(p->h));
      return 2;
    }
  }
  return 0;
}

/* Pump the source into the host. Returns the pump's result code. */
static int pump(parts_t *p, const report_opts_t *o, pump_t *pc,
                el_src_pump_result_t *res) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  uv_timer_t wall;
  uv_timer_init(&loop, &wall);
  wall.data = p->h;
  uv_timer_start(&wall, on_wall, 0, 0);
  uv_unref((uv_handle_t *)&wall);
  el_host_consumer(p->h, &pc->host);
  /* a socket's end in its words (report needs no EL_EV_OPT_LIVE: it
   * writes once, at the end) */
  el_ev_decoder_t *dec = el_host_decoder(p->h);
  el_ev_decoder_set_opts(
      dec, el_ev_decoder_opts(dec) |
               (el_src_opts_decoder_opts(&o->src) & EL_EV_OPT_CONNECTION));
  pc->rp = p->rp;
  el_host_set_warning_hook(p->h, on_host_warning, pc);
  el_src_consumer_t c = {.ud = pc,
                         .reset = c_reset,
                         .feed = c_feed,
                         .finish = c_finish,
                         .finish_stopped = c_finish_stopped,
                         .diag = c_diag,
                         .interrupt = c_interrupt,
                         .offset = c_offset,
                         .data_ended = c_data_ended,
                         .received = c_received,
                         .input_waits = c_input_waits,
                         .scan = c_scan,
                         .input_name = c_input_name};
  int rc = el_src_pump(&loop, &o->src, &c, res);
  uv_close((uv_handle_t *)&wall, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return rc;
}

static int run(const report_opts_t *o) {
  parts_t p = {0};
  double t0 = now_s();
  int status = setup(&p, o);
  if (status) goto done;
  pump_t pc = {0};
  el_src_pump_result_t res;
  memset(&res, 0, sizeof res);
  int rc = pump(&p, o, &pc, &res);
  el__cmd_stop_t guard;
  el__cmd_end_begin(&guard, p.h); /* a signal now stops on_end */
  el_host_end(p.h);
  el_tm_store_flush(p.st);
  el_rp_settle(p.rp); /* the last session's clock is its final one */
  el__cmd_end_end(&guard);
  if (el_host_stats(p.h)->handler_errors) el_host_report_errors(p.h);
  if (rc < 0 && rc != EL_ESTOPPED && el_host_stats(p.h)->events == 0) {
    /* Nothing decoded: the pump said why (cannot open, no header). */
    el_eprintf("report: no report written\n");
    status = 1;
    goto done;
  }
  char desc[512];
  el_src_opts_describe(&o->src, desc, sizeof desc);
  /* Default title: a file's name without its directories. */
  const char *title = o->title;
  if (!title && o->src.kind == EL_SRC_FILE && o->src.path) {
    const char *slash = strrchr(o->src.path, '/');
    title = slash && slash[1] ? slash + 1 : o->src.path;
  }
  el_rp_input_t in = {.title = title,
                      .input = desc,
                      /* what was read less what the drain after a
                       * stop discarded (h88: the page gave 128 MiB for
                       * 62 MiB decoded) */
                      .bytes = res.stats.bytes - res.drained_bytes,
                      .events = el_host_stats(p.h)->events,
                      .sessions = res.sessions,
                      .truncated = res.truncated,
                      .handler_errors = el_host_stats(p.h)->handler_errors,
                      .elapsed_s = now_s() - t0};
  el_rp_set_input(p.rp, &in);
  const char *path = o->output;
  char tmp[4096];
  if (!path) {
    const char *dir = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/eventlog-report-%ld.html",
             dir && *dir ? dir : "/tmp", (long)getpid());
    path = tmp;
  }
  status = write_report(p.rp, path) < 0 ? 1 : 0;
  /* A page of part of the input says so: not a plain "wrote" (the status
   * is 1 after a decode error, 0 after parts skipped: docs/report.md). */
  if (status == 0 && strcmp(path, "-") && pc.listed)
    el_eprintf(
        "report: wrote %s with what was read: %llu part%s of the "
        "input could not be read (listed at the top of the page)\n",
        path, (unsigned long long)pc.listed, pc.listed == 1 ? "" : "s");
  else if (status == 0 && strcmp(path, "-"))
    el_eprintf("report: wrote %s\n", path);
  if (rc < 0 && rc != EL_ESTOPPED) status = 1; /* corrupt input: told */
  if (status == 0 && o->open) open_report(path);
done:
  parts_free(&p);
  return status;
}

int el_cmd_report(int argc, char **argv) {
  report_opts_t o;
  memset(&o, 0, sizeof o);
  int rc = parse(&o, argc, argv);
  if (rc == 1) return 0;
  if (rc) return 2;
  return run(&o);
}
