/* daemon.c: the pipeline of `eventlog-live-otelcol`: source ->
 * decoder -> Lua host running the default processors
 * (lua/eventlog_live/processors) -> telemetry store -> exporters (OTLP,
 * console, the Prometheus endpoint and web view), plus the control server.
 *
 * The source is read through el_src_pump with the host as its consumer
 * (el_host_consumer). Windows are in eventlog time; a wall-clock libuv
 * timer runs the host's wall timers (which close windows of a quiet live
 * stream), drains the host's own log messages into the store and
 * refreshes --stats. At the end of input everything is flushed and
 * exported. A stop by SIGINT/SIGTERM of a FIFO or stdin pipe source first
 * drains it so that the program writing it is never left blocked
 * (el_src_pump, --eventlog-drain-timeout). Exit status: 0 after a clean
 * end of input or a stop by SIGINT/SIGTERM; 1 when the input could not be read or decoded, or setup
 * failed. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "daemon_internal.h"

#define SCOPE_NAME "eventlog-live-otelcol"
/* The final export's budget when no event was decoded (finish). */
#define NO_EVENTS_FLUSH_MS 1000

/* {====== configuration to Lua ======} */

/* Pass the resolved configuration to the processors as the table
 * el.config (lua/eventlog_live/processors/init.lua):
 *   flush_ns, batch_ns   --eventlog-flush-interval and the batch interval
 *   breakdown            -h<X> from the command line (absent if none)
 *   processors.<group>.<key> = {enabled, name, description (absent if
 *                        none), aggregate_ns, export_ns, max_threads (the
 *                        processors with a thread attribute)}
 * Times in ns of eventlog time. */
static int config_to_lua(el_host_t *h, const el_cfg_t *cfg,
                         uint64_t flush_ms, const el_daemon_opts_t *o) {
  int rc = 0;
  rc |= el_host_set_config_integer(h, "flush_ns",
                                   (int64_t)flush_ms * 1000000);
  rc |= el_host_set_config_integer(
      h, "batch_ns", (int64_t)el_cfg_batch_ms(cfg) * 1000000);
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
    if (el_cfg_max_threads_default(p->info))
      rc |= el_host_set_config_integer(h, K("max_threads"),
                                       (int64_t)p->max_threads);
#undef K
  }
  return rc ? EL_ENOMEM : 0;
}

/* {====== the pump's consumer: the host, counted ======}
 * The host consumes the source (el_host_consumer); the daemon wraps it to
 * count decode errors for --stats and to know when a session is open (the
 * "No input after 10 ticks" warning). */

/* The period of on_timer (wall timers, flow control, progress), in ms. */
#define TICK_MS 50
/* watch: how long the program's eventlog may stay open and silent after
 * the program's exit before the input ends (on_timer). */
#define HELD_MS 2000
/* fifo_kick: how long the FIFO stays open for writing while the source's
 * open has not returned, in ms. */
#define KICK_MS 5000

static void d_reset(void *ud) {
  el__daemon_t *d = ud;
  d->host_c.reset(d->host_c.ud);
  d->session_open = 1;
  d->connected_ms = uv_now(&d->loop);
  d->awaited_ms = 0;
  d->waiting = 0;
  d->session_fed = 0;
}

/* {------ flow control of a recorded file ------}
 * docs/otlp.md §8.2 "Flow control", docs/sources.md. Nobody writes a
 * recorded file, so nobody is harmed when it is read more slowly: after
 * each chunk, reading pauses while an OTLP export queue is half full, and
 * goes on once the sender thread says every queue is down to a quarter
 * (uv_async), the collector is failing, or bound_ms passed. While paused
 * (and until the next chunk) the host's wall timers are held: the
 * processors would take the stream's stillness for a quiet live stream
 * and close windows on the wall clock, changing what is exported. */

static void flow_wake(void *ud) { /* sender thread, exporter lock held */
  el__daemon_t *d = ud;
  uv_async_send(&d->flow.async);
}

static void flow_resume(el__daemon_t *d, int timed_out) {
  if (!d->flow.paused) return;
  d->flow.paused = 0;
  d->flow.total_ms += uv_now(&d->loop) - d->flow.since_ms;
  uv_unref((uv_handle_t *)&d->flow.async);
  if (timed_out) {
    d->flow.timeouts++;
    el_log(EL_LOG_WARN,
           "the OTLP export queues stayed full for %llu ms: reading the "
           "file on (the queues may drop, counted)",
           (unsigned long long)d->flow.bound_ms);
  }
  if (d->src) el_src_resume(d->src);
}

/* After a chunk of input (or a wall tick): pause while the queues are
 * full. */
static void flow_check(el__daemon_t *d) {
  if (!d->flow.on || d->flow.paused || !d->src || !d->otlp) return;
  if (!el_otlp_exporter_should_pause(d->otlp)) return;
  d->flow.paused = 1;
  d->flow.hold_wall = 1;
  d->flow.pauses++;
  d->flow.since_ms = uv_now(&d->loop);
  /* A paused file has no read in flight: the async keeps the loop (and
   * so the pump) alive until the sender wakes it. */
  uv_ref((uv_handle_t *)&d->flow.async);
  el_src_pause(d->src);
}

static void on_flow(uv_async_t *a) {
  el__daemon_t *d = a->data;
  if (d->flow.paused && d->otlp && el_otlp_exporter_may_resume(d->otlp))
    flow_resume(d, 0);
}

/* Flow control when the source is a recorded file (a regular file, or
 * stdin redirected from one, read once to its end) and OTLP export is on.
 * The bound: the longest a healthy exporter may take to deliver or drop
 * the request at hand (retries, then one more attempt). */
static void flow_start(el__daemon_t *d) {
  const el_otlp_config_t *c = &d->o->otlp;
  if (!d->otlp || el_src_opts_live(&d->o->src) ||
      uv_async_init(&d->loop, &d->flow.async, on_flow) < 0)
    return;
  int timeout = 0;
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    if (c->sig[s].timeout_ms > timeout) timeout = c->sig[s].timeout_ms;
  d->flow.open = d->flow.on = 1;
  d->flow.async.data = d;
  d->flow.bound_ms =
      (uint64_t)c->retry_max_elapsed_ms + (uint64_t)timeout + 1000;
  uv_unref((uv_handle_t *)&d->flow.async);
  el_otlp_exporter_set_flow(d->otlp, flow_wake, d);
}

/* The input ended: no more pauses. */
static void flow_stop(el__daemon_t *d) {
  if (!d->flow.on) return;
  flow_resume(d, 0);
  d->flow.on = 0;
  el_otlp_exporter_set_flow(d->otlp, NULL, NULL);
}

static int d_feed(void *ud, const uint8_t *buf, size_t len) {
  el__daemon_t *d = ud;
  d->flow.hold_wall = 0;
  /* A new session's first bytes end the wait for a reconnection (not its
   * connect: a dying program's socket may accept and close at once). */
  if (!d->session_fed && d->web) d->httpd->web_set_reconnecting(d->web, NULL);
  d->session_fed = 1;
  int rc = d->host_c.feed(d->host_c.ud, buf, len);
  if (rc < 0 && rc != EL_ESTOPPED) d->decode_errors++;
  flow_check(d);
  return rc;
}

/* How the session that just ended closed when the source now waits for
 * the next (a socket reconnects, a FIFO under --follow is opened again:
 * docs/sources.md), in the web view's words; NULL when the input ends
 * here or was stopped (a file, stdin, a signal, watch's end), or a
 * followed file was truncated (its next session follows at once). */
static const char *closed_why(const el__daemon_t *d) {
  const el_src_opts_t *so = &d->o->src;
  struct stat st;
  if (d->stop_signal || d->idle_ended) return NULL;
  if (so->kind == EL_SRC_UNIX || so->kind == EL_SRC_TCP)
    return "connection closed";
  if (so->kind == EL_SRC_FILE && so->follow && so->path &&
      stat(so->path, &st) == 0 && S_ISFIFO(st.st_mode))
    return "writer closed the FIFO";
  return NULL;
}

static int d_finish(void *ud) {
  el__daemon_t *d = ud;
  int rc = d->host_c.finish(d->host_c.ud);
  if (rc < 0 && rc != EL_ESTOPPED) d->decode_errors++;
  d->session_open = 0;
  /* The host flushed the session's telemetry into the web view: its
   * threads end now, not when the next program connects (docs/web.md
   * "Sessions"). */
  const char *why = d->web ? closed_why(d) : NULL;
  if (why) d->httpd->web_set_reconnecting(d->web, why);
  return rc;
}

static const el_diag_t *d_diag(void *ud) {
  el__daemon_t *d = ud;
  return d->host_c.diag(d->host_c.ud);
}

static int d_data_ended(void *ud) {
  el__daemon_t *d = ud;
  return d->host_c.data_ended(d->host_c.ud);
}

static void d_received(void *ud, uint64_t by, int live) {
  el__daemon_t *d = ud;
  d->host_c.received(d->host_c.ud, by, live);
}

static void d_input_waits(void *ud, int waiting) {
  el__daemon_t *d = ud;
  d->waiting = waiting;
  d->host_c.input_waits(d->host_c.ud, waiting);
}

static void d_scan(void *ud, int fd, uint64_t from, uint64_t len) {
  el__daemon_t *d = ud;
  d->host_c.scan(d->host_c.ud, fd, from, len);
}

/* Any SIGINT/SIGTERM of this run, while reading (d_interrupt) or during
 * the final flush (flush_signal): ends the console's wait for a slow
 * reader of a recorded file's replay (el_otlp_console_set_stop). */
static volatile sig_atomic_t g_console_stop;

static void d_interrupt(void *ud, int sig) { /* from a signal handler */
  el__daemon_t *d = ud;
  g_console_stop = 1;
  d->stop_signal = 1;
  d->host_c.interrupt(d->host_c.ud, sig);
}

static void d_input_name(void *ud, const char *name) {
  el__daemon_t *d = ud;
  d->host_c.input_name(d->host_c.ud, name);
}

static void d_source(void *ud, el_src_t *src) {
  el__daemon_t *d = ud;
  d->src = src;
}

static int ctl_send(void *ud, const uint8_t *buf, size_t len) {
  el__daemon_t *d = ud;
  return d->src ? el_src_write(d->src, buf, len) : EL_ECLOSED;
}

static int host_control(void *ud, const char *ns, size_t ns_len,
                        uint32_t command_id) {
  el_ctl_sender_t s = {ctl_send, ud};
  return el_ctl_host_control(&s, ns, ns_len, command_id);
}

/* The time since the last tick, if the input was awaited meanwhile (for
 * "No input after 10 ticks"). A longer gap than a few ticks (the process
 * stopped, the loop blocked) counts as 4 ticks: the writer may have
 * written meanwhile. */
static void count_awaited(el__daemon_t *d) {
  uint64_t now = uv_now(&d->loop), gap = now - d->tick_ms;
  d->tick_ms = now;
  if (d->session_open && !d->input_over && !d->stop_signal && !d->flow.paused &&
      (d->waiting || !d->session_fed))
    d->awaited_ms += gap < 4 * TICK_MS ? gap : 4 * TICK_MS;
}

/* watch's FIFO (o->fifo_hold_fd), on a tick with end_when_idle set and no
 * session open (connected: el_src_connected): the program exited before
 * the source's blocking open of the FIFO returned (a program that ends
 * within milliseconds), and what it wrote waits in the pipe, kept there
 * by the caller's hold. Open the FIFO for writing (non-blocking: the hold
 * is a reader) and keep it open until the source's open returned (at
 * most KICK_MS): the session then reads those bytes, and the close is its
 * EOF. Once per run. Returns 1 while the kick waits for the source (the
 * input is not idle). */
static int fifo_kick(el__daemon_t *d, int connected) {
  if (d->kick_fd >= 0) {
    if (connected || ++d->kick_ticks > KICK_MS / TICK_MS) {
      close(d->kick_fd);
      d->kick_fd = -1;
    }
    return d->kick_fd >= 0;
  }
  int n = 0;
  if (connected || !d->o->fifo_hold_fd || d->kicked ||
      ioctl(*d->o->fifo_hold_fd, FIONREAD, &n) < 0 || n <= 0)
    return 0;
  d->kicked = 1;
  d->kick_fd = open(d->o->src.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (d->kick_fd < 0) {
    el_log(EL_LOG_WARN, "cannot open %s to read the %d bytes left in it: %s",
           d->o->src.path, n, strerror(errno));
    return 0;
  }
  el_log(EL_LOG_DEBUG,
         "the program exited before its FIFO was opened; reading the %d "
         "bytes it left there",
         n);
  return 1;
}

static void on_timer(uv_timer_t *tm) {
  el__daemon_t *d = tm->data;
  count_awaited(d);
  if (!d->flow.hold_wall) el_host_run_wall_timers(d->host, uv_now(&d->loop));
  if (d->flow.paused && uv_now(&d->loop) - d->flow.since_ms >= d->flow.bound_ms)
    flow_resume(d, 1);
  else
    flow_check(d);
  el__daemon_log_progress(d, 0);
  el__daemon_self_metrics(d, 0);
  el_tm_hostlog_drain(d->hostlog, d->internal_logs ? d->store : NULL);
  /* On a terminal the table is redrawn every second; a file or pipe gets
   * a line every 10 s. */
  if (d->o->stats &&
      uv_now(&d->loop) - d->stats_last_ms >= (d->stats_tty ? 1000u : 10000u))
    el__daemon_print_stats(d, stderr, 0);
  /* Two ticks in a row with no session: a FIFO whose open was about to
   * return gets 50 ms to deliver what is in the pipe. A session still
   * open with its pipe read empty for HELD_MS after the program's exit:
   * the program's RTS wrote everything before it exited, so another
   * process holds the FIFO (a child that inherited the descriptor, or
   * GHCRTS) and may hold it for ever. */
  if (d->o->end_when_idle && *d->o->end_when_idle && d->src) {
    int connected = el_src_connected(d->src);
    int kicking = fifo_kick(d, connected);
    d->idle_ticks = connected || kicking ? 0 : d->idle_ticks + 1;
    d->held_ticks = connected && d->waiting ? d->held_ticks + 1 : 0;
    if (d->idle_ticks == 2) {
      el_log(EL_LOG_DEBUG, "the program has gone: ending the input");
      d->idle_ended = 1;
      el_src_stop(d->src);
    } else if (d->held_ticks == HELD_MS / TICK_MS) {
      el_log(EL_LOG_WARN,
             "the program has exited, but another process still holds "
             "its eventlog open (a child that inherited it, or GHCRTS): "
             "ending the input");
      d->idle_ended = 1;
      el_src_stop(d->src);
    }
  }
}

/* The console exporter, counted: what it accepted is delivered (as the
 * reference's console exporter, spec §1.4: "fully successful"), less
 * what it reports dropped (el_otlp_console_dropped: a failed write, or
 * for a live source a full writer queue). */
static int console_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  el__daemon_t *d = ud;
  size_t n = el_tm_batch_count(b);
  int rc = d->console_tm.export(d->console_tm.ud, sig, b);
  if (rc == 0) d->console_records[sig] += n;
  return rc;
}

/* SIGINT/SIGTERM received during the final flush (flush_signal). */
static volatile sig_atomic_t g_flush_signals;

/* The console's end (el_otlp_console_shutdown): a file is written to its
 * end, unless a signal comes; a pipe or terminal waits at most the
 * budget. */
static int console_flush(void *ud, int timeout_ms) {
  el__daemon_t *d = ud;
  return el_otlp_console_shutdown(d->console, timeout_ms, &g_flush_signals);
}

static void free_exporter(el__daemon_t *d) {
  el_otlp_stats_t before;
  el_otlp_exporter_stats(d->otlp, &before);
  el_otlp_exporter_free(d->otlp);
  d->otlp = NULL;
  d->otlp_final = before;
}

/* Exporters for every signal per the resolved OTLP configuration. Returns
 * 0, EL_ENOMEM, a negated errno, or EL_ECONFIG after logging its cause. */
static int add_exporters(el__daemon_t *d) {
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
    /* A live source never waits for a reader of stdout (a slow `| jq`, a
     * stopped pager): requests queue on a writer thread, past 64 MiB
     * dropped and counted. Into a file (always writable) nothing is
     * dropped: past 8 MiB queued the input waits for the rendering. A
     * recorded file's replay into a pipe or terminal goes at its
     * reader's pace, through the writer thread too, so that a signal
     * still stops it when the reader does not read (h59). */
    int to_file = el__cmd_stdout_is_file(), live = el_src_opts_live(&d->o->src);
    int mode = live ? to_file : to_file ? 1 : EL_OTLP_CONSOLE_WAIT_READER;
    g_console_stop = 0;
    el_otlp_console_set_stop(d->console, &g_console_stop);
    if ((live || !to_file) &&
        el_otlp_console_start_writer(
            d->console, (size_t)(live && !to_file ? 64 : 8) << 20, mode) < 0)
      el_log(EL_LOG_WARN, "console: no writer thread: writing on the loop");
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

/* {====== signals during the final flush ======}
 * After the input ended the pump's handlers are gone; a SIGINT/SIGTERM
 * then would kill the daemon (status 130) with the summary unprinted and
 * the telemetry undelivered. The flush is bounded anyway
 * (--otlp-shutdown-timeout), so a signal now is noted, said once, and the
 * daemon exits 0 with its summary as after any stop (docs/config.md "Exit
 * status"); it does not linger serving the web view. */

static void flush_signal(int sig) {
  static const char msg[] =
      ": warning: signal during the final flush: exporting what was "
      "decoded first (at most --otlp-shutdown-timeout), then exiting\n";
  static const char third[] =
      ": third signal during the final flush: exiting at once (what was "
      "not yet exported is lost)\n";
  g_console_stop = 1;
  int n = ++g_flush_signals;
  if (n != 1 && n != 3) return;
  const char *prog = el_prog_name(); /* set before any signal */
  ssize_t r = write(2, prog, strlen(prog));
  r = n == 1 ? write(2, msg, sizeof msg - 1)
             : write(2, third, sizeof third - 1);
  (void)r;
  if (n == 3) _exit(128 + sig); /* a backstop: something does not return */
}

/* The HTTP servers' plugin (httpd_plugin.h) in d->httpd, opened on first
 * use; NULL after logging why it cannot be loaded. */
static const el_httpd_plugin_t *httpd(el__daemon_t *d) {
  char err[1024];
  if (!d->httpd && !(d->httpd = el_httpd_plugin(err, sizeof err)))
    el_log(EL_LOG_ERROR, "%s", err);
  return d->httpd;
}

/* The aggregation window of each enabled metric processor, and whether
 * the traces processors are on, for the page (el_web_opts_t). */
static void web_aggs(el_web_opts_t *w, const el_cfg_t *cfg) {
  w->naggs = 0;
  for (size_t i = 0; i < el_cfg_nprocs() && w->naggs < EL_WEB_AGGS_MAX; i++) {
    const el_cfg_proc_t *p = el_cfg_proc_at(cfg, i);
    if (p->info->group != EL_CFG_METRICS || !p->enabled || !p->name) continue;
    w->aggs[w->naggs].name = p->name;
    w->aggs[w->naggs++].aggregate_ms = p->aggregate_ms;
  }
  w->cap_usage_on = el_cfg_enabled(cfg, EL_CFG_TRACES, "capability_usage");
  w->thread_state_on = el_cfg_enabled(cfg, EL_CFG_TRACES, "thread_state");
}

/* The store, the host and its log buffer, the resource, the web
 * endpoints and the exporters. Returns 0, or < 0 after logging why. */
static int setup_store(el__daemon_t *d, const el_cfg_t *cfg) {
  el_daemon_opts_t *o = d->o;
  int rc;
  d->store = el_tm_store_new(SCOPE_NAME, EL_VERSION);
  d->host = el_host_new(NULL);
  d->hostlog = el_tm_hostlog_new();
  if (!d->store || !d->host || !d->hostlog) {
    el_log(EL_LOG_ERROR, "out of memory");
    return EL_ENOMEM;
  }
  if ((rc = el_otlp_config_apply_resource(&o->otlp, d->store)) < 0) return rc;
  if (!o->otlp.service_name) {
    el_tm_attr_t a = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {"undefined", 9}};
    el_tm_store_set_resource(d->store, &a);
  }
  if (el_web_enabled(&o->web)) {
    el_tm_exporter_t tm;
    o->web.service_name = o->otlp.service_name;
    web_aggs(&o->web, cfg);
    if (!httpd(d)) return EL_ECONFIG;
    if ((rc = d->httpd->web_new(&o->web, &d->web, &tm)) < 0 ||
        (rc = el_tm_store_add_exporter(d->store, &tm)) < 0 ||
        (rc = d->httpd->web_start(d->web)) < 0) {
      el_log(EL_LOG_ERROR, "cannot start the web endpoints: %s",
             el_strerror(rc));
      return rc;
    }
    d->web_ex_ud = tm.ud;
  }
  /* EL_ECONFIG (a transport plugin that cannot be loaded) was logged with
   * its real cause by el_otlp_exporter_new: not said again. */
  if ((rc = add_exporters(d)) < 0) {
    if (rc != EL_ECONFIG)
      el_log(EL_LOG_ERROR, "cannot create the exporters: %s", el_strerror(rc));
    return rc;
  }
  /* Every consumer of the store (web view, console, OTLP) is registered:
   * a signal none takes is counted, not built (OTEL_*_EXPORTER=none). */
  el_tm_store_seal(d->store);
  return 0;
}

/* The clock hook (el_host_set_clock_hook), called at each header among
 * other times: at a new session, tell the web view whether its producer
 * is GHC before 9.2, known from the header alone (it declares no
 * BLOCKS_SIZE, which 9.2 added with --eventlog-flush-interval), since a
 * 9.0 program's RTS_IDENTIFIER comes in its global buffer, at exit. */
static void on_session_clock(void *ud, uint64_t session, el_unix_ns_t start,
                             el_rts_ns_t end_t, int settled) {
  (void)start, (void)end_t, (void)settled;
  el__daemon_t *d = ud;
  const el_ev_header_t *h = el_ev_decoder_header(d->dec);
  if (session == d->web_session || !h) return;
  d->web_session = session;
  int before = 1;
  for (size_t i = 0; i < h->ndecls; i++)
    if (h->decls[i].id == EL_EV_BLOCKS_SIZE) before = 0;
  d->httpd->web_set_producer(d->web, before);
}

/* The host: decoder options, store, control, el.config and the default
 * processors. Returns 0, or < 0 (logged when the processors fail). */
static int setup_host(el__daemon_t *d, const el_cfg_t *cfg) {
  el_daemon_opts_t *o = d->o;
  uint64_t flush_ms = (uint64_t)llround(o->flush_s * 1000);
  d->dec = el_host_decoder(d->host);
  /* live: never hold an event back; a socket's end in its words */
  el_ev_decoder_set_opts(d->dec, el_src_opts_decoder_opts(&o->src));
  el_host_set_store(d->host, d->store);
  el_host_set_control(d->host, host_control, d);
  if (d->web) el_host_set_clock_hook(d->host, on_session_clock, d);
  int rc = config_to_lua(d->host, cfg, flush_ms, o);
  if (rc < 0) return rc;
  rc = el_host_load_module(d->host, "eventlog_live.processors.main");
  if (rc < 0)
    el_log(EL_LOG_ERROR, "cannot load the processors: %s",
           el_host_error(d->host));
  return rc;
}

/* The control server (--control), if asked for; a failure is logged and
 * the daemon runs on without it. */
static void start_control(el__daemon_t *d) {
  el_daemon_opts_t *o = d->o;
  if (!o->ctl.enabled) return;
  const char *svc = o->otlp.service_name ? o->otlp.service_name : "undefined";
  el_ctl_sender_t s = {ctl_send, d};
  if (!httpd(d)) return;
  if (d->web) /* the page's buttons */
    d->httpd->web_allow_page_origins(d->web, &o->ctl);
  int rc = d->httpd->ctl_server_start(&d->loop, &o->ctl, svc, s, &d->ctl);
  if (rc < 0)
    el_log(EL_LOG_ERROR, "cannot start the control server on port %d: %s",
           o->ctl.port, el_strerror(rc));
  else if (d->web)
    d->httpd->web_set_control_port(d->web, d->httpd->ctl_server_port(d->ctl));
}

/* The wall-clock timer (on_timer). */
static void start_timer(el__daemon_t *d, const el_cfg_t *cfg) {
  uv_timer_init(&d->loop, &d->timer);
  d->handles = 1;
  d->timer.data = d;
  uv_timer_start(&d->timer, on_timer, TICK_MS, TICK_MS);
  uv_unref((uv_handle_t *)&d->timer);
  d->started_ms = d->stats_last_ms = d->log_last_ms = d->tick_ms =
      uv_now(&d->loop);
  d->stats_tty = isatty(STDERR_FILENO);
  d->batch_ms = el_cfg_batch_ms(cfg);
}

/* Source -> host until the input ends (or SIGINT/SIGTERM); then the
 * control server stops. */
static void pump(el__daemon_t *d) {
  const el_src_opts_t *so = &d->o->src;
  if (so->kind == EL_SRC_FILE)
    el_log(EL_LOG_INFO, "Reading eventlog from %s", so->path);
  else if (so->kind == EL_SRC_STDIN)
    el_log(EL_LOG_INFO, "Reading eventlog from stdin");
  el_host_consumer(d->host, &d->host_c);
  el_src_consumer_t c = {.ud = d,
                         .reset = d_reset,
                         .feed = d_feed,
                         .finish = d_finish,
                         .diag = d_diag,
                         .data_ended = d_data_ended,
                         .received = d_received,
                         .input_waits = d_input_waits,
                         .scan = d_scan,
                         .interrupt = d_interrupt,
                         .on_source = d_source,
                         .input_name = d_input_name,
                         .own_signals = d->o->own_signals};
  flow_start(d);
  d->end_status = el_src_pump(&d->loop, so, &c, &d->pump);
  flow_stop(d);
  if (d->o->sessions_out) *d->o->sessions_out = d->pump.sessions;
  uv_timer_stop(&d->timer);
  if (d->ctl) {
    d->httpd->ctl_server_free(d->ctl);
    d->ctl = NULL;
    if (d->web) d->httpd->web_set_control_port(d->web, -1);
  }
}

/* After the shutdown's flush: how much telemetry was not delivered, in
 * all (each exporter said its part by signal with its cause: a full
 * queue, a failed write, a collector's answer, the shutdown budget). */
static void say_undelivered(el__daemon_t *d) {
  el__totals_t t;
  el__daemon_totals(d, &t);
  uint64_t dropped = 0, rejected = 0;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    dropped += t.dropped[s];
    rejected += t.rejected[s];
  }
  if (!dropped && !rejected) { /* left in a queue, not counted yet */
    el_log(EL_LOG_WARN, "some telemetry could not be delivered");
    return;
  }
  el_log(EL_LOG_WARN,
         "some telemetry could not be delivered: %llu records dropped, "
         "%llu rejected by the receiver",
         (unsigned long long)dropped, (unsigned long long)rejected);
}

/* End of input: the processors flush their windows, then the store
 * exports everything. A SIGINT/SIGTERM meanwhile is noted (flush_signal).
 * Returns the exit status. */
static int finish(el__daemon_t *d) {
  el_daemon_opts_t *o = d->o;
  struct sigaction flush_sa, old_int, old_term;
  if (!o->own_signals) {
    memset(&flush_sa, 0, sizeof flush_sa);
    flush_sa.sa_handler = flush_signal;
    sigemptyset(&flush_sa.sa_mask);
    flush_sa.sa_flags = SA_RESTART;
    g_flush_signals = 0;
    sigaction(SIGINT, &flush_sa, &old_int);
    sigaction(SIGTERM, &flush_sa, &old_term);
  }
  d->input_over = 1; /* the shutdown's flush is no wait for input */
  /* No event was decoded (a folder, an empty file, no header): only the
   * daemon's own records are left, which get at most a second, not the
   * whole budget an unreachable collector would cost (h75). */
  int timeout_ms = o->otlp.shutdown_timeout_ms;
  if (!el_ev_decoder_stats(d->dec)->events && timeout_ms > NO_EVENTS_FLUSH_MS)
    timeout_ms = NO_EVENTS_FLUSH_MS;
  /* EL_ETEE: the tee could not be opened, nothing was read (said) */
  if (d->end_status != EL_ETEE)
    el_log(EL_LOG_INFO, "Input ended: flushing and exporting (at most %d ms)",
           timeout_ms);
  el__daemon_log_progress(d, 1);
  el_host_end(d->host);
  el__daemon_self_metrics(d, 1);
  el_tm_hostlog_drain(d->hostlog, d->internal_logs ? d->store : NULL);
  el_tm_store_flush(d->store);
  /* Not after a signal (end_when_idle's stop is the input's end) */
  int clean_end =
      d->end_status == 0 || (d->end_status == EL_ESTOPPED && d->idle_ended);
  /* The web store has everything now: the page says the input ended
   * while the exporters deliver, not after their budget (h39). */
  if (clean_end && d->web) d->httpd->web_set_ended(d->web, true);
  if (el_tm_store_shutdown(d->store, timeout_ms) < 0) say_undelivered(d);
  el__daemon_log_progress(d, 1);
  /* The pump logged a decode error with its byte offset, or the source's
   * failure; a stop by signal is a clean end. */
  int status = (d->end_status == 0 || d->end_status == EL_ESTOPPED) ? 0 : 1;
  /* (a source that never opened said why: "cannot open PATH: ...") */
  if (status && !d->decode_errors && d->end_status != EL_ETEE &&
      d->pump.stats.connections)
    el_log(EL_LOG_ERROR, "eventlog source failed: %s",
           el_strerror(d->end_status));
  if (el_host_stats(d->host)->handler_errors) el_host_report_errors(d->host);
  if (!o->own_signals) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  }
  if (clean_end && !o->no_linger && !g_flush_signals &&
      d->web) { /* nor without --*-port */
    /* The self-metrics once more, for the endpoints that go on serving
     * them (/metrics): the sample above was taken before the final export
     * it could not count (h73). Not exported: OTLP has shut down. */
    d->self_aside += (uint64_t)el__daemon_self_metrics(d, 1);
    el_tm_store_flush_to(d->store, d->web_ex_ud);
    if (o->before_linger) o->before_linger(o->ready_ud, d->web);
    d->httpd->web_serve_until_signal(d->web);
  }
  return status;
}

/* Free everything setup made, whatever point it reached. */
static void teardown(el__daemon_t *d) {
  el_log_set_hook(NULL, NULL);
  if (d->kick_fd >= 0) close(d->kick_fd);
  if (d->hostlog) el_tm_hostlog_drain(d->hostlog, NULL);
  if (d->ctl) d->httpd->ctl_server_free(d->ctl);
  if (d->otlp) {
    /* Freeing counts what is still queued as dropped (in the store). */
    free_exporter(d);
  }
  if (d->o->stats && d->started_ms) el__daemon_print_stats(d, stderr, 1);
  if (d->handles && !uv_is_closing((uv_handle_t *)&d->timer))
    uv_close((uv_handle_t *)&d->timer, NULL);
  if (d->flow.open) uv_close((uv_handle_t *)&d->flow.async, NULL);
  uv_run(&d->loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&d->loop) < 0)
    el_log(EL_LOG_DEBUG, "event loop closed with handles left");
  el_host_free(d->host);
  el_tm_store_free(d->store);
  el_otlp_console_free(d->console);
  /* The web endpoints after the store: it exports to them here. */
  if (d->web) d->httpd->web_free(d->web);
  el_tm_hostlog_free(d->hostlog);
}

/* Build everything, run until the input ends, tear down. Returns the exit
 * status: 0 after a clean end of input or a stop by signal, 1 otherwise. */
int el_daemon_run(el_daemon_opts_t *o, const el_cfg_t *cfg) {
  el__daemon_t d;
  memset(&d, 0, sizeof d);
  d.o = o;
  d.kick_fd = -1;
  d.internal_logs = el_cfg_enabled(cfg, EL_CFG_LOGS, "internal_log_message");
  el__daemon_self_init(&d, cfg);
  /* A file source (or stdin, which may be a file) keeps at most one read
   * in flight on libuv's pool (src_file.c): one thread does, where its
   * default four cost start-up time (four 8 MiB stacks, and the loop
   * waits for each thread to start). Set before any thread exists (the
   * exporters start below); a value the user set wins. Other sources
   * leave the environment alone, and so does watch (on_ready set), whose
   * program would inherit it (h76: its FIFO is a file source). */
  if (!o->on_ready &&
      (o->src.kind == EL_SRC_FILE || o->src.kind == EL_SRC_STDIN))
    setenv("UV_THREADPOOL_SIZE", "1", 0); /* stdin: `< file` reads as one */
  if (uv_loop_init(&d.loop) < 0) return 1;
  int status = 1;
  if (setup_store(&d, cfg) == 0 && setup_host(&d, cfg) == 0) {
    start_control(&d);
    start_timer(&d, cfg);
    if (!o->on_ready || o->on_ready(o->ready_ud, d.web) >= 0) {
      if (o->args_added &&
          el_host_set_args_drop(d.host, (const char *const *)o->args_added))
        el_log(EL_LOG_WARN,
               "out of memory: process.command_args keeps "
               "the RTS options watch added");
      el_log_set_hook(el_tm_hostlog_hook, d.hostlog);
      pump(&d);
      status = finish(&d);
    }
  }
  teardown(&d);
  return status;
}
