/* src_pump.c: run a source into a decoder until the input ends; what
 * `show`, `stats` and the other commands use to read any source. Each
 * connection is a new session (spec/eventlog-format.md §4.7, §5.8): the
 * consumer is reset when it begins and finished when it ends, so a stream
 * cut mid-event is reported as truncated and the next connection starts
 * from a fresh header. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eventlog/eventlog.h"
#include "source_internal.h"

#define NSIG_HANDLED 3

typedef struct {
  const el_src_consumer_t *c;
  el_src_pump_result_t res;
  char desc[512];          /* source description for messages */
  int in_session;          /* fed since the last finish */
  uint64_t fed;            /* bytes fed in all sessions */
  uint64_t conn_off;       /* the consumer's offset (or fed) when the
                              source last connected or opened: where its
                              byte 0 is (a file truncated under --follow
                              is read again from 0) */
  uv_async_t sig_async;    /* wakes the loop after a signal */
  int nsig;                /* 1 while the handlers are installed */
  struct sigaction old_sa[NSIG_HANDLED]; /* handlers to restore */
  volatile sig_atomic_t pending[NSIG_HANDLED]; /* signals not yet acted on */
  int ended;
  int socket;              /* the source reconnects (Unix, TCP) */
  int read_failed;         /* a file, FIFO or stdin read failed before
                              its first byte (said once: on_disconnect) */
  int sig_closing;         /* handles in *p whose close is pending */
  el_src_t *src;
  int stopping;           /* a stop was asked for (signal, EL_ESTOPPED) */
  int stop_signals;       /* SIGINT/SIGTERM acted on */
  int stop_by_signal;     /* the stop came from one of them */
  int draining;           /* reading on, discarding, until EOF */
  int drain_over;         /* it ended early (its bound, a second stop):
                             bytes still delivered are not counted */
  uv_timer_t drain_timer; /* the drain's bound */
  int drain_timer_open;
  uint64_t drain_start_ms;
  /* While the input waits: input_waits(1) again every EL_SRC_WAIT_BEAT_MS,
   * which shows the consumer that the process runs (src_consumer.h). */
  uv_timer_t beat;
  int beat_open;
  /* What stops the drain at once, for messages (el_src_pump_stop); NULL:
   * a signal. */
  const char *again;
} pump_t;

/* The consumer's count of the input bytes processed (all connections),
 * or without one the bytes fed. */
static uint64_t consumed(const pump_t *p) {
  return p->c->offset ? p->c->offset(p->c->ud) : p->fed;
}

/* Count error rc of the consumer (without a word: it said it itself). */
static void count_error(pump_t *p, int rc) {
  p->res.errors++;
  if (!p->res.first_error)
    p->res.first_error = rc;
}

/* Count and log error rc of the consumer, "DESC: WHAT: its message";
 * what NULL, or an error about the header (d->header: none found, a
 * malformed or cut one; no session began, so it did not "end early"):
 * "DESC: its message", which names its byte and what was wrong, in the
 * words show and stats use for it (docs/exit-codes.md). */
static void report(pump_t *p, int rc, const char *what) {
  count_error(p, rc);
  const el_diag_t *d = p->c->diag ? p->c->diag(p->c->ud) : NULL;
  if (d && d->code && d->header && d->msg[0])
    what = NULL;
  if (!what && d && d->msg[0]) /* the message says it all */
    el_log(EL_LOG_ERROR, "%s: %s", p->desc, d->msg);
  else if (!what)
    el_log(EL_LOG_ERROR, "%s: %s", p->desc, el_strerror(rc));
  else if (d && d->code && d->msg[0]) /* the decoder's message names its byte */
    el_log(EL_LOG_ERROR, "%s: %s: %s", p->desc, what, d->msg);
  else if (d && d->code)
    el_log(EL_LOG_ERROR, "%s: %s at byte %llu: %s", p->desc, what,
           (unsigned long long)d->offset, el_strerror(d->code));
  else
    el_log(EL_LOG_ERROR, "%s: %s: %s", p->desc, what, el_strerror(rc));
}

/* {====== stopping: the drain ======}
 * A FIFO or a pipe on stdin whose reader stops does not make its writer
 * fail: a GHC program's RTS opens its -ol FIFO read-write, so it never
 * gets EPIPE and blocks for good once the pipe is full. So a stop (a
 * signal, or EL_ESTOPPED from feed) on such a source first drains it:
 * bytes are read and discarded (counted in res.drained_bytes) until the
 * writer closes it or drain_s seconds pass; a second signal stops at
 * once. Other sources stop at once. docs/sources.md "Stopping". */

static void handle_closed(uv_handle_t *h) {
  ((pump_t *)h->data)->sig_closing--;
}

static void close_drain_timer(pump_t *p) {
  if (!p->drain_timer_open)
    return;
  p->drain_timer_open = 0;
  uv_timer_stop(&p->drain_timer);
  p->sig_closing++;
  uv_close((uv_handle_t *)&p->drain_timer, handle_closed);
}

static void on_drain_timeout(uv_timer_t *t) {
  pump_t *p = t->data;
  p->res.drain_timed_out = 1;
  p->drain_over = 1;
  el_log(EL_LOG_WARN,
         "%s: its writer still had it open %g s after the "
         "stop: stopped reading (discarded %llu bytes); the "
         "writer blocks once the pipe is full "
         "(--eventlog-drain-timeout)",
         p->desc, el_src_options(p->src)->drain_s,
         (unsigned long long)p->res.drained_bytes);
  close_drain_timer(p);
  el_src_stop(p->src);
}

/* Stop draining at once (a second signal, or a second el_src_pump_stop);
 * why: what asked, for the message. */
static void stop_draining(pump_t *p, const char *why) {
  p->drain_over = 1;
  el_log(EL_LOG_WARN, "%s: %s: stopped draining (discarded %llu bytes)",
         p->desc, why, (unsigned long long)p->res.drained_bytes);
  close_drain_timer(p);
  el_src_stop(p->src);
}

/* A stop was asked for; by_signal: SIGINT/SIGTERM (a second one during
 * the drain stops at once). */
static void begin_stop(pump_t *p, int by_signal) {
  el_src_t *src = p->src;
  if (by_signal)
    p->stop_signals++;
  if (p->stopping) {
    /* The drain after a signal ends at the second one; after a stop
     * asked otherwise (a script, el_src_pump_stop), at the first. */
    if (p->draining && p->drain_timer_open && by_signal &&
        (p->stop_signals > 1 || !p->stop_by_signal))
      stop_draining(p, p->stop_signals > 1 ? "second signal" : "signal");
    return;
  }
  p->stopping = 1;
  p->stop_by_signal = by_signal;
  double bound = el_src_options(src)->drain_s;
  if (bound <= 0 || !el_src_drainable(src) ||
      uv_timer_init(src->loop, &p->drain_timer) != 0) {
    /* A file's bytes past this point stay unread: say where, counted
     * from the byte 0 of the file as now open (a socket's peer just
     * loses its reader; a followed file not open yet has no byte to
     * name) */
    if ((by_signal || p->pending[0] || p->pending[1]) && !p->socket &&
        src->ever_connected) {
      /* (a followed log read to its end-of-data marker lost nothing:
       * h88 took the warning for a loss) */
      int whole = !p->pending[0] && !p->pending[1] && p->c->data_ended &&
                  p->c->data_ended(p->c->ud);
      el_log(whole ? EL_LOG_INFO : EL_LOG_WARN,
             "%s: stopped by a signal at byte %llu%s", p->desc,
             (unsigned long long)(consumed(p) - p->conn_off),
             whole ? ", after the end of its data (read whole)" : "");
    }
    el_src_stop(src);
    return;
  }
  p->draining = 1;
  p->res.drained = 1;
  el_src_discard(src);
  p->drain_timer_open = 1;
  p->drain_timer.data = p;
  /* The loop's time is that of its last turn: a feed that ran a busy
   * Lua handler for seconds (the signal interrupted it) left it behind,
   * and the bound would be counted from before the stop (h36). */
  uv_update_time(src->loop);
  p->drain_start_ms = uv_now(src->loop);
  uv_timer_start(&p->drain_timer, on_drain_timeout,
                 (uint64_t)(bound * 1000 + 0.5), 0);
  if (el_src_paused(src))
    el_src_resume(src);
  el_log(EL_LOG_WARN,
         "%s: stopping; reading on (and discarding) until its "
         "writer closes it, at most %g s, so that the writer "
         "is not blocked (--eventlog-drain-timeout; %s stops at once)",
         p->desc, bound,
         p->again    ? p->again
         : by_signal ? "a second signal"
                     : "a signal");
}

void el_src_warn_cut(const char *desc, const el_diag_t *d) {
  el_log(EL_LOG_WARN, "%s: %s; everything before it was processed", desc,
         d->msg);
}

/* A connection that ended inside an event. With the real eventlog-socket
 * on GHC 9.0 this is how every run ends: at exit the library writes what
 * the socket takes at once (about 214 KiB), frees the rest of its queue
 * and closes, so the end of the program's last block (about a second of
 * events), its global block and the end-of-data marker never arrive
 * (measured: peers/eventlog-socket, docs/sources.md). A warning: those
 * events are lost (the last markers among them). A later header cut
 * short is said as from any other source. */
static void warn_conn_cut(const char *desc, const el_diag_t *d) {
  if (d->header) { /* in the words of every other source */
    el_src_warn_cut(desc, d);
    return;
  }
  /* (no block left short: the cut event is the marker of the next
   * block, right after a whole one) */
  el_log(EL_LOG_WARN,
         "%s: the connection closed before the program's last events "
         "were sent: %s; everything before it was processed, %s "
         "lost (eventlog-socket drops what it has not sent when its "
         "program exits)",
         desc, d->msg,
         d->block_missing ? "the rest of that block and whatever the "
                            "program wrote after it were"
                          : "whatever the program wrote after it was");
}

static void finish_session(pump_t *p, int at_end) {
  /* A file, FIFO or stdin that delivered nothing is reported ("no
   * header"), unless a stop came first (e.g. SIGINT before the writer
   * wrote anything): then there is nothing to say. */
  if (!p->in_session &&
      !(at_end && p->fed == 0 && !p->socket && !p->stopping && !p->read_failed))
    return;
  p->in_session = 0;
  if (!p->c->finish || (p->c->one_stream && !at_end))
    return;
  /* After a stop the input was cut by us: where its bytes stop is no
   * news (finish_stopped says nothing about it). */
  int rc = p->stopping && p->c->finish_stopped ? p->c->finish_stopped(p->c->ud)
                                               : p->c->finish(p->c->ud);
  const el_diag_t *d = p->c->diag ? p->c->diag(p->c->ud) : NULL;
  if (rc == EL_ETRUNC && d && d->cut_event) {
    /* Cut inside an event, even inside its 2-byte type: a program killed
     * or exiting mid-write (on GHC 9.0 eventlog-socket cuts its last
     * flush anywhere). Everything before it was
     * delivered: no error (docs/eventlog.md, "Behaviour on bad input"). */
    p->res.truncated++;
    if (p->socket)
      warn_conn_cut(p->desc, d);
    else
      el_src_warn_cut(p->desc, d);
  } else if (rc == EL_ECORRUPT) {
    /* A consumer that held a corrupt part for its status (show), having
     * said it as it came (el_ev_show_set_warn): the session did not end
     * early, the part was skipped. */
    count_error(p, rc);
  } else if (rc < 0 && rc != EL_ESTOPPED) {
    report(p, rc, "session ended early");
  }
}

/* Hand a recorded file to the consumer's scan. */
static void scan_file(pump_t *p, el_src_t *src) {
  int fd = el_src_recorded_fd(src);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0)
    return;
  /* A file on stdin may be read from anywhere (h80: `(head -c N; exec
   * eventlog-live run S) < FILE`): the scan starts where reading does. */
  off_t from = lseek(fd, 0, SEEK_CUR);
  if (from < 0)
    from = 0;
  if (from >= st.st_size)
    return;
  p->c->scan(p->c->ud, fd, (uint64_t)from, (uint64_t)(st.st_size - from));
  /* Another process truncated it: the scan gave up at the first byte
   * past the new end and reading goes on with read(2), which meets the
   * new end. */
  struct stat now;
  if (fstat(fd, &now) == 0 && now.st_size < st.st_size)
    el_log(EL_LOG_WARN,
           "%s: the file shrank from %lld to %lld bytes while it was "
           "scanned ahead: reading on without the scan's results",
           p->desc, (long long)st.st_size, (long long)now.st_size);
}

static void on_connect(void *ud, el_src_t *src) {
  pump_t *p = ud;
  p->res.sessions++;
  p->conn_off = consumed(p);
  if (p->c->reset)
    p->c->reset(p->c->ud);
  if (p->c->input_waits)
    p->c->input_waits(p->c->ud, 0);
  if (p->c->scan)
    scan_file(p, src);
}

static void take_signals(pump_t *p);

static void on_data(void *ud, el_src_t *src, const uint8_t *buf,
                    size_t len) {
  pump_t *p = ud;
  /* A signal caught but not acted on yet (its uv_async still pending)
   * stops first: these bytes come after it. */
  if (p->pending[0] || p->pending[1])
    take_signals(p);
  if (p->draining) {
    if (!p->drain_over) /* as the drain's messages said */
      p->res.drained_bytes += len;
    return;
  }
  if (p->stopping) /* read after the stop, not drained: not processed */
    return;
  if (!p->c->feed)
    return;
  p->in_session = 1;
  p->fed += len;
  if (p->c->received) {
    uint64_t by;
    int live;
    el_src_received(src, &by, &live);
    p->c->received(p->c->ud, by, live);
  }
  int rc = p->c->feed(p->c->ud, buf, len);
  if (rc == EL_ESTOPPED) {
    /* A signal caught meanwhile interrupted the host (sig_handler): the
     * stop is that signal's, not a script's, so that it counts once (a
     * stop by a script ends the drain at the first signal). */
    if (p->pending[0] || p->pending[1])
      take_signals(p);
    else
      begin_stop(p, 0);
  } else if (rc < 0) {
    report(p, rc, "decode error");
  }
}

static void on_beat(uv_timer_t *t) {
  pump_t *p = t->data;
  if (p->draining) {
    uv_timer_stop(t);
    return;
  }
  p->c->input_waits(p->c->ud, 1);
}

static void on_wait(void *ud, el_src_t *src, int waiting) {
  pump_t *p = ud;
  (void)src;
  if (!p->c->input_waits || p->draining)
    return;
  p->c->input_waits(p->c->ud, waiting);
  if (!p->beat_open)
    return;
  if (waiting)
    uv_timer_start(&p->beat, on_beat, EL_SRC_WAIT_BEAT_MS, EL_SRC_WAIT_BEAT_MS);
  else
    uv_timer_stop(&p->beat);
}

/* The beat timer, if its consumer measures waits (on_wait); unreferenced:
 * the source keeps the loop alive. */
static void open_beat(pump_t *p, uv_loop_t *loop) {
  if (!p->c->input_waits || uv_timer_init(loop, &p->beat) != 0)
    return;
  p->beat.data = p;
  uv_unref((uv_handle_t *)&p->beat);
  p->beat_open = 1;
}

static void close_beat(pump_t *p) {
  if (!p->beat_open)
    return;
  p->beat_open = 0;
  uv_timer_stop(&p->beat);
  p->sig_closing++;
  uv_close((uv_handle_t *)&p->beat, handle_closed);
}

static void on_disconnect(void *ud, el_src_t *src, int err) {
  pump_t *p = ud;
  /* A connection that delivered nothing (e.g. reset while still in the
   * listen backlog of a program that exited) is no news. */
  if (err < 0 && err != EL_ECLOSED && p->in_session)
    el_log(EL_LOG_WARN, "%s: connection lost: %s", p->desc,
           el__src_strerror(err));
  /* A file, FIFO or stdin whose first read failed (EIO) is not empty:
   * say why, once, instead of "no eventlog header: the input is empty". */
  if (err < 0 && err != EL_ECLOSED && !p->in_session && !p->socket &&
      p->fed == 0 && !p->read_failed) {
    p->read_failed = 1;
    report(p, err, "cannot read");
  }
  finish_session(p, 0);
  /* The drain timer is still open only while the drain waits for the
   * writer: a second signal or the timeout closed it before stopping. */
  if (p->draining && p->drain_timer_open) {
    uv_update_time(src->loop); /* for the time said */
    el_log(p->res.drained_bytes ? EL_LOG_WARN : EL_LOG_INFO,
           "%s: its writer closed it %.1f s after the stop; discarded %llu "
           "bytes",
           p->desc, (double)(uv_now(src->loop) - p->drain_start_ms) / 1000.0,
           (unsigned long long)p->res.drained_bytes);
    close_drain_timer(p);
    el_src_stop(src);
  }
}

/* {====== signals ======}
 * SIGINT and SIGTERM stop the source, SIGHUP reopens the tee. The handlers
 * are sigaction handlers, not uv_signal watchers: a Lua handler that loops
 * (or any long computation inside feed) blocks the loop, so the handler
 * itself must reach the consumer (c->interrupt, async-signal-safe) before
 * waking the loop through an uv_async. One pump runs at a time per
 * process; the previous handlers are restored when it returns. */

static const int handled[NSIG_HANDLED] = {SIGINT, SIGTERM, SIGHUP};
static pump_t *volatile g_pump;  /* the pump whose handlers are installed */

/* SIGINT/SIGTERM received while a pump ran, in this process. */
static volatile sig_atomic_t g_stops;

/* The third SIGINT/SIGTERM while reading ends the process at once, with
 * the status of a death by that signal (128 + signum): the first stops
 * the input, the second the drain, and a third means that something
 * does not return (a handler writing into a stdout nobody reads, which
 * no flag can interrupt). Said on stderr; nothing more is written or
 * exported. Async-signal-safe. */
static void third_stop(int signum) {
  static const char msg[] =
      ": third SIGINT/SIGTERM: exiting at once (what was not yet "
      "written or exported is lost)\n";
  if (++g_stops < 3)
    return;
  const char *prog = el_prog_name();
  ssize_t r = write(2, prog, strlen(prog));
  r = write(2, msg, sizeof msg - 1);
  (void)r;
  _exit(128 + signum);
}

static void sig_handler(int signum) {
  pump_t *p = g_pump;
  if (!p)
    return;
  if (signum != SIGHUP)
    third_stop(signum);
  for (int k = 0; k < NSIG_HANDLED; k++)
    if (handled[k] == signum)
      p->pending[k] = 1;
  if (signum != SIGHUP && p->c->interrupt)
    p->c->interrupt(p->c->ud, signum);
  uv_async_send(&p->sig_async);
}

static void sig_closed(uv_handle_t *h) {
  ((pump_t *)h->data)->sig_closing--;
}

/* SIGHUP once the pump has returned, where its action was the default
 * (ending the process): ignored, said once on stderr at -v info and
 * below (async-signal-safe: write(2), the threshold read), so
 * that what follows the input (the final flush and its summary, on_end,
 * the web view's linger) is not cut short by a log rotation's
 * `kill -HUP`. While the pump ran it was ignored too, or reopened the
 * tee (docs/sources.md "Rotation"). */
static void hup_after_input(int signum) {
  static const char msg[] = ": info: SIGHUP after the input ended: ignored\n";
  static volatile sig_atomic_t said;
  (void)signum;
  if (said || !el_log_enabled(EL_LOG_INFO)) /* as el_log would, once */
    return;
  said = 1;
  const char *prog = el_prog_name();
  ssize_t r = write(2, prog, strlen(prog));
  r = write(2, msg, sizeof msg - 1);
  (void)r;
}

static void close_signals(pump_t *p) {
  if (!p->nsig)
    return;
  for (int k = 0; k < NSIG_HANDLED; k++) {
    struct sigaction *old = &p->old_sa[k];
    if (handled[k] == SIGHUP && !(old->sa_flags & SA_SIGINFO) &&
        old->sa_handler == SIG_DFL) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = hup_after_input; /* back to the default at exec */
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      sigaction(SIGHUP, &sa, NULL);
      continue;
    }
    sigaction(handled[k], old, NULL);
  }
  g_pump = NULL;
  p->nsig = 0;
  p->sig_async.data = p;
  p->sig_closing++;
  uv_close((uv_handle_t *)&p->sig_async, sig_closed);
}

static void on_end(void *ud, el_src_t *src, int status) {
  pump_t *p = ud;
  if (p->c->one_stream)
    p->in_session = p->fed > 0;
  /* A source that never opened said why ("cannot open ..."): no "no
   * eventlog header" after it. */
  if (status >= 0 || src->ever_connected)
    finish_session(p, 1);
  /* The end of a drain after a stop is still a stop, not an end of input. */
  p->res.status = p->stopping && status == 0 ? EL_ESTOPPED : status;
  close_drain_timer(p);
  p->res.stats = *el_src_stats(src);
  p->ended = 1;
  close_signals(p);
  uv_stop(src->loop);  /* the caller's other handles may keep it alive */
}

/* Act on the signals caught since the last call (sig_handler). */
static void take_signals(pump_t *p) {
  el_src_t *src = p->src;
  for (int k = 0; k < NSIG_HANDLED; k++) {
    if (!p->pending[k])
      continue;
    p->pending[k] = 0;
    if (handled[k] == SIGHUP) {
      if (el_src_options(src)->log_file)
        el_src_reopen_tee(src);
      else
        el_log(EL_LOG_INFO, "SIGHUP: no --eventlog-log-file to reopen; "
                            "ignored");
      continue;
    }
    el_log(EL_LOG_INFO, "signal %d: stopping", handled[k]);
    begin_stop(p, 1);
  }
}

static void on_sig_async(uv_async_t *a) { take_signals(a->data); }

static void start_signals(pump_t *p, uv_loop_t *loop) {
  if (uv_async_init(loop, &p->sig_async, on_sig_async) != 0)
    return;
  p->sig_async.data = p;
  uv_unref((uv_handle_t *)&p->sig_async);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = sig_handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  g_pump = p;
  for (int k = 0; k < NSIG_HANDLED; k++)
    sigaction(handled[k], &sa, &p->old_sa[k]);
  p->nsig = 1;
}

static int run(uv_loop_t *loop, const el_src_opts_t *o,
               const el_src_consumer_t *c, pump_t *p) {
  el_src_cb_t cb = {.ud = p,
                    .on_connect = on_connect,
                    .on_data = on_data,
                    .on_disconnect = on_disconnect,
                    .on_end = on_end,
                    .on_wait = on_wait};
  el_src_t *src;
  int rc = el_src_new(loop, o, &cb, &src);
  if (rc < 0) {
    if (rc != EL_ETEE) /* the tee's failure was said with its name */
      el_log(EL_LOG_ERROR, "%s: %s", p->desc, el_strerror(rc));
    return rc;
  }
  p->src = src;
  if (c->on_source)
    c->on_source(c->ud, src);
  if (!c->own_signals)
    start_signals(p, loop);
  open_beat(p, loop);
  rc = el_src_start(src);
  if (rc < 0) {
    if (c->on_source)
      c->on_source(c->ud, NULL);
    close_signals(p);
    close_beat(p);
    el_src_free(src);
    while (p->sig_closing > 0)
      uv_run(loop, UV_RUN_ONCE);
    return rc;
  }
  while (!p->ended && uv_run(loop, UV_RUN_DEFAULT) != 0 && !p->ended)
    ;  /* returned early through someone's uv_stop: go on */
  if (!p->ended) {  /* cannot happen: the source keeps the loop alive */
    el_src_stop(src);
    while (!p->ended)
      uv_run(loop, UV_RUN_ONCE);
  }
  close_beat(p);
  while (p->sig_closing > 0)  /* the handles live in *p: close them */
    uv_run(loop, UV_RUN_NOWAIT);
  if (c->on_source)
    c->on_source(c->ud, NULL);
  el_src_free(src);
  return 0;
}

int el_src_pump(uv_loop_t *loop, const el_src_opts_t *o,
                const el_src_consumer_t *c, el_src_pump_result_t *res) {
  pump_t p;
  memset(&p, 0, sizeof p);
  p.c = c;
  el_src_opts_describe(o, p.desc, sizeof p.desc);
  if (c->input_name)
    c->input_name(c->ud, p.desc);
  p.socket = o->kind == EL_SRC_UNIX || o->kind == EL_SRC_TCP;
  uv_loop_t own;
  if (!loop) {
    int rc = uv_loop_init(&own);
    if (rc < 0)
      return rc;
    loop = &own;
  }
  int rc = run(loop, o, c, &p);
  if (loop == &own) {
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
  }
  if (rc == 0) {
    rc = p.res.first_error ? p.res.first_error : p.res.status;
    /* A socket that delivered sessions and then stayed away: a normal end
     * (the program exited); res.status keeps the last connection error. */
    if (!p.res.first_error && p.socket && p.fed > 0 && rc != EL_ESTOPPED)
      rc = 0;
  }
  if (res)
    *res = p.res;
  return rc;
}

void el_src_pump_stop(el_src_t *src, const char *again) {
  if (!src)
    return;
  if (src->cb.on_data != on_data) { /* not a pump's source */
    el_src_stop(src);
    return;
  }
  pump_t *p = src->cb.ud;
  if (p->stopping) {
    if (p->draining && p->drain_timer_open)
      stop_draining(p, again ? again : "asked again");
    return;
  }
  p->again = again;
  begin_stop(p, 0);
}

/* {====== the eventlog decoder as consumer ======} */

static void dec_reset(void *ud) { el_ev_decoder_reset(ud); }
static int dec_feed(void *ud, const uint8_t *buf, size_t len) {
  return el_ev_decoder_feed(ud, buf, len);
}
static int dec_finish(void *ud) { return el_ev_decoder_finish(ud); }
/* A session the reader stopped: a cut event or a missing end-of-data
 * marker is the stop's doing, but bytes without a header are still
 * reported ("no eventlog header found in N bytes"). */
static int dec_finish_stopped(void *ud) {
  return el_ev_decoder_header(ud) ? el_ev_decoder_finish_stopped(ud)
                                  : el_ev_decoder_finish(ud);
}
static int dec_data_ended(void *ud) { return el_ev_decoder_data_ended(ud); }
static const el_diag_t *dec_diag(void *ud) {
  return el_ev_decoder_diag(ud);
}

int el_src_pump_decoder(uv_loop_t *loop, const el_src_opts_t *o,
                        struct el_ev_decoder_s *dec,
                        el_src_pump_result_t *res) {
  el_ev_decoder_set_opts(dec,
                         el_ev_decoder_opts(dec) | el_src_opts_decoder_opts(o));
  el_src_consumer_t c = {.ud = dec,
                         .reset = dec_reset,
                         .feed = dec_feed,
                         .finish = dec_finish,
                         .finish_stopped = dec_finish_stopped,
                         .diag = dec_diag,
                         .data_ended = dec_data_ended};
  return el_src_pump(loop, o, &c, res);
}
