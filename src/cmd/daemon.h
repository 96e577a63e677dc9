/* daemon.h: the pipeline of `eventlog-live-otelcol` (daemon.c), for the
 * commands that run it: the daemon's own command line (cmd_otelcol.c). */
#ifndef EL_DAEMON_H
#define EL_DAEMON_H

#include <signal.h>

#include "config/config.h"
#include "control/control.h"
#include "otlp/otlp.h"
#include "source/source.h"
#include "web/web.h"

/* Everything the pipeline needs besides the configuration file. */
typedef struct el_daemon_opts_s {
  el_src_opts_t src;           /* the eventlog source */
  el_otlp_config_t otlp;       /* exporters (resolved) */
  el_ctl_opts_t ctl;           /* control server */
  el_web_opts_t web;           /* --prometheus-port, --web-port */
  double flush_s;              /* --eventlog-flush-interval, seconds */
  char breakdown[4];           /* "-hT", "" when not given */
  int stats;                   /* -s: the live table on stderr */

  /* For a command that embeds the pipeline (`eventlog-live watch`,
   * cmd_watch.c); all zero for the daemon itself. */
  int own_signals; /* the caller handles SIGINT/SIGTERM (the
                                  pump installs no handler for them) */
  int no_linger;   /* do not keep serving the web view after
                                  the input ended */
  /* When non-NULL: called once the input ended cleanly and the telemetry
   * was exported, just before the daemon keeps serving the web view
   * until SIGINT/SIGTERM (not called when it does not linger: no_linger,
   * a signal, an error, no web view; the stop end_when_idle asks for is
   * a clean end). web is the view; ud is ready_ud. E.g. watch waits for
   * its program there and says why it stays. */
  void (*before_linger)(void *ud, el_web_t *web);
  /* When non-NULL: replaces the daemon's "Did you pass -l to the GHC
   * RTS?" after "No input after 10 ticks." (watch passes -l itself). */
  const char *no_input_hint;
  /* Called once the pipeline is built (exporters, web view started) and
   * before the source is read: web is the view (NULL when off), e.g. to
   * print its URL and start the program. A negative return ends the run
   * (status 1) without reading. */
  int (*on_ready)(void *ud, el_web_t *web);
  void *ready_ud;
  /* When non-NULL: read once on_ready returned, a NULL-terminated list of
   * the arguments on_ready put into its program's command line after
   * argv[0] (watch's "+RTS -l -ol<fifo> ... -RTS"; empty: none), left out
   * of the session's arguments (el_host_set_args_drop), so that
   * process.command_args is the command line the user gave. */
  char *const *args_added;
  /* When non-NULL and set to 1 (from any thread or a signal handler), the
   * input ends as soon as no session is open (e.g. the watched program
   * exited: a FIFO whose writer never came, a socket between
   * reconnections); an open session still ends at its own EOF. */
  volatile sig_atomic_t *end_when_idle;
  /* When non-NULL (watch, src a FIFO): a descriptor the caller holds open
   * for reading on the FIFO from before its program starts (O_RDONLY |
   * O_NONBLOCK; borrowed, never read), so that what the program writes
   * stays in the pipe even if it exits before the source opened the
   * FIFO. With end_when_idle set and no session open while bytes wait in
   * the pipe (FIONREAD on it), the daemon opens the FIFO for writing
   * until the source's open returns, and that session reads them. */
  const int *fifo_hold_fd;
  /* When non-NULL: set, once the input ended, to the number of sessions
   * the source opened (0: e.g. a socket nobody ever listened on). */
  uint64_t *sessions_out;
} el_daemon_opts_t;

/* Build the pipeline for *o and cfg (resolved: el_cfg_resolve), run it
 * until the input ends or SIGINT/SIGTERM, flush and export everything,
 * tear down. o->web.service_name is set. Returns the exit status: 0 after
 * a clean end (or a stop by signal), 1 when the input could not be read or
 * decoded (the error was logged with its byte offset) or setup failed. */
int el_daemon_run(el_daemon_opts_t *o, const el_cfg_t *cfg);

#endif /* EL_DAEMON_H */
