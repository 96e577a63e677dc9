/* source.h: byte sources for eventlog streams, on a libuv loop.
 *
 * A source delivers the raw bytes of one or more eventlog sessions from a
 * regular file (optionally followed like `tail -f`), a named FIFO, stdin, a
 * Unix-domain socket or a TCP socket (eventlog-socket). Socket sources
 * reconnect with exponential backoff; every connection is a new session
 * (spec/eventlog-format.md §4.7, §5.3-§5.4, §5.8). Every byte received can
 * be teed to a file (--eventlog-log-file; rotated at a cut point so that
 * each file reads as an eventlog, src_tee.h). Bytes can be written back on the
 * current socket connection (the control channel, spec §5.7).
 *
 * Option names and defaults follow the reference tool
 * (spec/reference-behaviour.md §1.1, §1.3, §1.5); docs/sources.md describes
 * every option, the reconnection rules and what "end of input" means.
 *
 * Two layers:
 *   - options: el_src_opts_t, filled from argv by el_src_opts_parse, one
 *     option at a time, so each command can mix in its own options;
 *   - runtime: el_src_t on a caller's uv_loop_t, reporting through
 *     el_src_cb_t; el_src_pump runs a source into a decoder-like consumer.
 * Thread: everything here runs on the loop's thread.
 *
 * Signals: the module changes no signal disposition of the process except
 * in el_src_pump, which handles SIGINT, SIGTERM and SIGHUP while it runs
 * (unless c->own_signals) and restores the previous handlers before it
 * returns. It never touches SIGPIPE: el_src_write writes through libuv
 * (write(2)), so a program that writes on a socket source must ignore
 * SIGPIPE itself, or a peer that closes kills it (`otelcol` and `run` do,
 * src/cmd/); writes to the --eventlog-log-file tee cannot raise it. */
#ifndef EL_SOURCE_H
#define EL_SOURCE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "../common/el_common.h"
#include "src_consumer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* {====== options ======} */

typedef enum {
  EL_SRC_NONE = 0, /* no source option given yet */
  EL_SRC_FILE,     /* --eventlog-file PATH: regular file or named FIFO */
  EL_SRC_STDIN,    /* --eventlog-stdin */
  EL_SRC_UNIX,     /* --eventlog-socket PATH */
  EL_SRC_TCP       /* --eventlog-socket-host H --eventlog-socket-port P */
} el_src_kind_t;

/* Source options. Strings are borrowed (normally from argv) and must outlive
 * every el_src_t made from the struct; el_src_new copies what it keeps. */
typedef struct el_src_opts_s {
  el_src_kind_t kind;       /* chosen source, EL_SRC_NONE if none */
  unsigned nsources;        /* source options seen (validation: exactly 1) */
  const char *path;         /* file, FIFO or Unix socket path */
  const char *host;         /* TCP host (name, IPv4 or IPv6 literal) */
  const char *port;         /* TCP port or service name (getaddrinfo) */
  int follow;               /* --follow: keep reading a growing file */
  double timeout_s;         /* --eventlog-socket-timeout: first retry delay,
                               seconds; default 1 */
  double exponent;          /* --eventlog-socket-exponent: delay multiplier
                               after each failed attempt; default 1 */
  double max_delay_s;       /* --eventlog-socket-max-delay: delay cap,
                               seconds; default 60 */
  long retries;             /* --eventlog-socket-retries: consecutive failed
                               attempts tolerated before giving up; -1 =
                               retry forever (default, as the reference) */
  const char *log_file;     /* --eventlog-log-file: raw tee, NULL = none */
  size_t read_size;         /* bytes per read; 0 = default (64 KiB for
                               streams, 256 KiB for regular files) */
  double follow_poll_s;     /* --follow poll period, seconds; default 0.1 */
  double drain_s;           /* --eventlog-drain-timeout: after SIGINT or
                               SIGTERM, how long el_src_pump keeps reading
                               (and discarding) a FIFO or a pipe on stdin
                               until its writer closes it, seconds;
                               default 10, 0 = stop at once */
  /* peer_exited: NULL, or (a socket source whose server is a program the
   * caller started: watch --eventlog-socket) a flag the caller sets once
   * that program has exited (borrowed; it outlives the source). Failing
   * to connect is then expected while the program starts or ends: a
   * series of failures is said at debug level, and warned about only
   * once it has lasted peer_grace_s while the program runs; after the
   * program exited, at debug level only. Not an option. */
  const volatile sig_atomic_t *peer_exited;
  /* fifo_reopen: a FIFO is opened again after each writer's EOF, each
   * writer a session, as with --follow, until el_src_stop (watch: its
   * program, a wrapper, may run several GHC programs one after the
   * other, each writing its eventlog into the FIFO; h77). Not an
   * option. */
  int fifo_reopen;
  /* peer_grace_s: with peer_exited, the seconds the program may take to
   * listen, or to be seen exiting after it closed its socket, before
   * failing to connect is a warning; default 5. */
  double peer_grace_s;
  char err[200];            /* message of the last parse/validate error */
} el_src_opts_t;

/* Fill *o with the defaults above (no source chosen). */
void el_src_opts_init(el_src_opts_t *o);

/* Try to consume one source option at argv[*i]. Accepts "--opt value" and
 * "--opt=value". argv: borrowed; values are kept as pointers into it.
 * Returns 1 and advances *i past the option (and its value) when it was a
 *   source option; 0 and leaves *i when argv[*i] is not a source option;
 *   EL_EUSAGE with o->err set (missing or malformed value).
 * Thread: any. Spec: reference-behaviour.md §1.1, §1.3. */
int el_src_opts_parse(el_src_opts_t *o, int argc, char **argv, int *i);

/* Choose a file source from a positional argument: "-" means stdin, any
 * other string a file path (borrowed). Counts as one source option. */
void el_src_opts_set_path(el_src_opts_t *o, const char *path);

/* Check that exactly one source was chosen and the values are coherent
 * (host with port, --follow with a file, timeout >= 0, exponent >= 1,
 * --eventlog-log-file not naming the input file).
 * Returns 0, or EL_EUSAGE with o->err set. */
int el_src_opts_validate(el_src_opts_t *o);

/* Parse a whole command line made only of source options and at most one
 * positional FILE ("-" = stdin), for commands with no options of their own
 * (show, stats). argv[0] is skipped.
 * Returns 0 (then call el_src_opts_validate), 1 when -h/--help was given,
 * or EL_EUSAGE with o->err set (unknown option, second positional). */
int el_src_opts_parse_all(el_src_opts_t *o, int argc, char **argv);

/* 1 when the source is a plain file or stdin read once to the end (no
 * --follow, no tee): a command may read it with read(2) itself. */
int el_src_opts_is_plain(const el_src_opts_t *o);

/* 1 when fd is read to its end like a recorded file: a regular file, or a
 * character device other than a terminal (/dev/null, which ends at once,
 * like an empty file); 0 for a FIFO, pipe, socket or terminal, which may
 * pause for a long time and ends when its writer says so, and when fstat
 * fails. Thread: any. */
int el_src_fd_recorded(int fd);

/* 1 when the input may pause for a long time after any byte (a socket, a
 * FIFO, a pipe or terminal on stdin, --follow): its decoder should then run
 * with EL_EV_OPT_LIVE (src/eventlog/eventlog.h), which never holds a
 * complete event back waiting for the next bytes. 0 for a recorded file
 * (el_src_fd_recorded: a regular file or a device such as /dev/null, by
 * path or on stdin) read to its end, or a path that does not exist. A
 * character device given by path is opened for a moment to tell a
 * terminal. Thread: any. */
int el_src_opts_live(const el_src_opts_t *o);

/* The decoder options (src/eventlog/eventlog.h EL_EV_OPT_*) the input o
 * asks for: EL_EV_OPT_LIVE when el_src_opts_live, and
 * EL_EV_OPT_CONNECTION for a Unix or TCP socket (eventlog-socket: where
 * its data stops is said in a connection's words). 0 for a recorded
 * file. Thread: any. */
unsigned el_src_opts_decoder_opts(const el_src_opts_t *o);

/* Parse the source options of a command with no options of its own (show,
 * stats) and decide who reads the input. cmd: the command's name, for the
 * error message printed on stderr.
 * Returns the path to read directly with read(2) ("-" = stdin) when the
 * input is a recorded file (el_src_fd_recorded: a regular file or a device
 * such as /dev/null, by path or on stdin) read once to the end; NULL
 * otherwise. With NULL, *err is 0 when the input must go through
 * src/source (a FIFO, pipe, terminal or socket, which may block or never
 * end: see el_src_pump), 1 after -h/--help, 2 after a usage error.
 * A path that does not exist is returned as a path: the caller's open
 * reports it. */
const char *el_src_opts_direct_input(el_src_opts_t *o, int argc, char **argv,
                                     const char *cmd, int *err);

/* Help text for the source options: NUL-terminated, lines end in '\n',
 * each indented by two spaces. Static string. */
const char *el_src_opts_help(void);

/* A short description of the source for messages, e.g. "Unix socket
 * /tmp/x.sock". Writes at most size bytes (NUL-terminated) into buf. */
void el_src_opts_describe(const el_src_opts_t *o, char *buf, size_t size);

/* {====== runtime ======} */

typedef struct el_src_s el_src_t;

/* Callbacks; any may be NULL. All run on the loop thread. From inside any
 * of them the consumer may call el_src_pause, el_src_resume, el_src_write
 * and el_src_stop; from on_end also el_src_free. */
typedef struct el_src_cb_s {
  void *ud;
  /* A new session begins: a socket connected, or the file/FIFO/stdin was
   * opened (or a followed file was truncated and is read again from 0).
   * The consumer resets its decoder. */
  void (*on_connect)(void *ud, el_src_t *src);
  /* Bytes received, in order. buf is borrowed for this call only. */
  void (*on_data)(void *ud, el_src_t *src, const uint8_t *buf, size_t len);
  /* The session ended: the peer closed or the source was stopped
   * (err = 0) or a read failed (a negative libuv code, i.e. a negated
   * errno such as -ECONNRESET). A socket source then reconnects. */
  void (*on_disconnect)(void *ud, el_src_t *src, int err);
  /* No more input, ever. status: 0 = end of file/stdin/FIFO (not
   * following); EL_ESTOPPED = el_src_stop was called; a negative errno or
   * libuv code (UV_EAI_* for name resolution) = the file could not be
   * opened, a read failed, or a socket source gave up reconnecting (the
   * last connection error). Called once, after every handle has closed; the
   * source may be freed from inside this callback. */
  void (*on_end)(void *ud, el_src_t *src, int status);
  /* May be NULL. The session's input was read up to what its writer had
   * written and the source now waits for more (waiting = 1: a read found
   * nothing more, or read less than it asked for, after the bytes read were
   * delivered; a followed file met its end), or no longer does (0: bytes
   * arrived, reading was paused, or the session ended). Called on changes
   * only. Time spent waiting is the only time a live consumer may take for
   * a writer's silence: time spent processing a backlog is not, nor time
   * this process did not run (SIGSTOP, a paused VM) while it waited:
   * el_src_pump repeats the report every EL_SRC_WAIT_BEAT_MS during a wait
   * so that its consumer can tell (src_consumer.h, src/host/host_clock.c).
   */
  void (*on_wait)(void *ud, el_src_t *src, int waiting);
} el_src_cb_t;

/* Counters, updated as bytes arrive. */
typedef struct el_src_stats_s {
  uint64_t bytes;            /* bytes received (all sessions) */
  uint64_t connections;      /* successful connects / opens (sessions) */
  uint64_t attempts;         /* connect or open attempts */
  uint64_t failures;         /* failed attempts */
  uint64_t reconnects;       /* attempts after the first connection ended
                                or failed */
  uint64_t tee_bytes;        /* bytes written to --eventlog-log-file */
  uint64_t tee_errors;       /* failed tee writes (bytes not teed) */
  uint64_t sent_bytes;       /* bytes accepted by el_src_write */
  uint64_t send_dropped;     /* bytes refused by el_src_write (closed,
                                queue full) */
  uint64_t pool_reads;       /* reads of a file or stdin file done on
                                libuv's thread pool: bytes the page cache
                                did not hold, a character device (the
                                rest are read on the loop thread) */
  /* The bytes the current (or last) session's pipe or FIFO holds after
   * the source grew it (F_SETPIPE_SZ: 1 MiB unless the system allows
   * less, docs/sources.md "Pipes"); 0: the input is no pipe. */
  uint64_t pipe_size;
} el_src_stats_t;

/* Create a source for *o (validated; copied, strings duplicated) on loop.
 * cb: copied. Nothing happens until el_src_start.
 * Returns 0 and *out, or EL_EINVAL (o not valid), EL_ENOMEM, or EL_ETEE
 * when the tee file cannot be opened (logged here, with its name and
 * cause: the caller says nothing more). On failure *out is NULL. */
int el_src_new(uv_loop_t *loop, const el_src_opts_t *o,
               const el_src_cb_t *cb, el_src_t **out);

/* Check, before anything depends on it, that the tee file path
 * (--eventlog-log-file; docs/sources.md "Tee") can be opened as el_src_new
 * will open it (created or truncated, non-blocking). Returns 0, or
 * EL_ETEE after logging the error with path and cause. `watch` calls it
 * before it starts the program (docs/exit-codes.md: a setup failure). */
int el_src_tee_check(const char *path);

/* Begin opening/connecting. Returns 0; errors of the open/connect itself
 * arrive later through on_end (files) or are retried (sockets). For files
 * and stdin on_connect runs inside this call; bytes always arrive on later
 * loop turns. Returns EL_EINVAL if already started, EL_ENOMEM if the read
 * buffer cannot be allocated (the source is then unchanged). */
int el_src_start(el_src_t *src);

/* Stop reading and close everything; on_end(EL_ESTOPPED) follows once the
 * handles have closed (on a later loop turn; at once if the source was never
 * started). Does nothing if already stopping or ended. */
void el_src_stop(el_src_t *src);

/* Stop / restart delivering bytes (flow control for a slow consumer).
 * While paused nothing is read: the OS buffers fill and the writer side
 * queues (spec §5.5). Pauses nest not: pause twice, resume once. */
void el_src_pause(el_src_t *src);
void el_src_resume(el_src_t *src);
int el_src_paused(const el_src_t *src);

/* Queue buf[0..len) to be written on the current socket connection (the
 * eventlog-socket control channel, spec §5.7). buf is copied; never
 * blocks. Returns 0; EL_ECLOSED when no socket connection is open (or the
 * source is not a socket); EL_ENOMEM when the pending queue would exceed
 * 1 MiB. Bytes queued when a connection drops are lost and counted in
 * send_dropped. A write on a connection the peer closed raises SIGPIPE:
 * the program must ignore it (see "Signals" above). */
int el_src_write(el_src_t *src, const uint8_t *buf, size_t len);

/* During on_data: *by_unix_ns gets the Unix time (ns) by which the bytes
 * being delivered existed, *live whether they arrive as they are written.
 * A regular file's bytes present when it was opened existed by its
 * modification time (live only with --follow); anything else (a followed
 * file's growth, FIFO, pipe, socket) was received now, live. Used to date
 * a stream before its WALL_CLOCK_TIME (spec eventlog-format.md §3.5). */
void el_src_received(const el_src_t *src, uint64_t *by_unix_ns, int *live);

/* The descriptor of the current session when it is a regular file read
 * once to the end (--eventlog-file without --follow, or stdin redirected
 * from a file), so the consumer can scan it ahead; -1 otherwise. Borrowed:
 * never close it. */
int el_src_recorded_fd(const el_src_t *src);

/* Reopen the --eventlog-log-file tee (after log rotation moved it away):
 * the file now at that path is opened at once (created if needed, appended
 * to; nothing already written is truncated; if it is the file being
 * written, nothing changes), and later bytes go to it from the next cut
 * point on: the end of the block in progress, or at once before a header
 * or between sessions; the old file then gets DATA_END and the new one
 * the session's header first, so that each reads as an eventlog
 * (src_tee.h, docs/sources.md "Tee"). Returns 0 (also without a tee), or
 * a negated errno with the old file kept open. */
int el_src_reopen_tee(el_src_t *src);

/* Is a session open now (connected socket, open file)? */
int el_src_connected(const el_src_t *src);

/* 1 when a session is open on a named FIFO or on a pipe on stdin: a
 * writer the reader cannot make fail. (A GHC program's RTS opens its -ol
 * FIFO read-write, so it never gets EPIPE: once the reader stops, its
 * writes block for good when the pipe is full.) el_src_pump drains such a
 * source after a stop by signal (el_src_opts_t.drain_s). */
int el_src_drainable(const el_src_t *src);

/* From now on the bytes read are being discarded (el_src_pump's drain):
 * they are no longer written to the --eventlog-log-file tee, which thus
 * holds what was processed. Still delivered to on_data and counted in
 * stats.bytes. */
void el_src_discard(el_src_t *src);

/* Counters. Valid until el_src_free. */
const el_src_stats_t *el_src_stats(const el_src_t *src);

/* The options the source was made from (its own copy). */
const el_src_opts_t *el_src_options(const el_src_t *src);

/* Free src. NULL does nothing. If the source is still running it is
 * stopped without calling any callback (on_disconnect, on_end), and the
 * memory is released once its handles have closed: the loop must run again
 * for that. */
void el_src_free(el_src_t *src);

/* {====== pump: run a source into a decoder ======} */

/* el_src_consumer_t: src_consumer.h (no libuv there, so the Lua host can
 * offer one without depending on libuv). */


/* What happened during el_src_pump. */
typedef struct el_src_pump_result_s {
  int status;               /* the source's on_end status */
  int first_error;          /* first feed/finish error code, 0 if none */
  uint64_t errors;          /* feed/finish errors reported */
  uint64_t sessions;        /* sessions (on_connect calls) */
  uint64_t truncated;       /* sessions that ended inside an event (a
                               warning, not an error: everything before
                               the cut was delivered) */
  el_src_stats_t stats;     /* source counters at the end */
  int drained;              /* a stop drained the FIFO/pipe (drain_s) */
  int drain_timed_out;      /* ... and gave up after drain_s seconds */
  uint64_t drained_bytes;   /* bytes read and discarded after the stop */
} el_src_pump_result_t;

/* Run a source made from *o on loop until it ends, driving *c: each
 * session begins with reset, its bytes go to feed, and it ends with finish
 * (finish_stopped when the reader stopped it)
 * (sessions that delivered no byte are not finished: a socket that was
 * accepted and closed at once is no error; but a file, FIFO or stdin that
 * delivered nothing at all is finished, so "no header" is reported).
 * Feed/finish errors are logged with their byte offset (diag) and reading
 * continues (the decoder resyncs at the next header); a session cut inside
 * an event (finish answers EL_ETRUNC with a diag naming the event type) is
 * only a warning; EL_ESTOPPED from feed
 * stops the source. SIGINT and SIGTERM stop the source cleanly (the last
 * session is then finished); a stop of a FIFO or a pipe on stdin first
 * drains it (reads and discards until its writer closes it, at most
 * o->drain_s seconds; a second signal stops at once; el_src_drainable),
 * so that a writer that cannot get EPIPE is never left blocked; and SIGHUP reopens the --eventlog-log-file tee
 * (el_src_reopen_tee; without one it is logged and ignored), unless
 * c->own_signals. loop: borrowed, must not be running; NULL =
 * use a private loop.
 * Returns 0 when the input ended cleanly with no decode error (for a socket:
 * it delivered bytes, then reconnection gave up: the program went away),
 * EL_ESTOPPED after a signal or a stop request (still a clean end), the
 * first feed or finish error, or the source's error (cannot open, never
 * connected: a negated errno or libuv code; EL_ETEE: the tee could not be
 * opened, already logged, nothing read); *res (may be NULL) gets the
 * details. */
int el_src_pump(uv_loop_t *loop, const el_src_opts_t *o,
                const el_src_consumer_t *c, el_src_pump_result_t *res);

/* Stop the el_src_pump that runs src (the source its consumer got through
 * on_source) as SIGINT stops it, at the caller's request (e.g. the
 * REPL's :quit): a FIFO or a pipe on stdin is drained first (read and
 * discarded until its writer closes it, at most drain_s seconds;
 * el_src_drainable) so that a writer that cannot get EPIPE is not left
 * blocked; any other source stops at once. The session then ends as
 * stopped (the consumer's finish_stopped: nothing said about where the
 * input stops). again: what the caller offers to stop the drain at once,
 * named in the drain's message (e.g. "Ctrl-C"; borrowed until the pump
 * returns; NULL: "a signal"). A second call during the drain stops it at
 * once; a call after the stop does nothing. A src not run by el_src_pump
 * is stopped with el_src_stop. Loop thread, from a callback of the loop
 * the pump runs. */
void el_src_pump_stop(el_src_t *src, const char *again);

/* Say that a session's input ended inside an event: one warning, "DESC:
 * MSG; everything before it was processed" (MSG: d->msg, which names the
 * event, where it starts and the byte where the input ends). The same
 * words whoever read the input: el_src_pump, or a command reading a
 * regular file itself (show, stats). d: the decoder's diag after finish
 * answered EL_ETRUNC with d->cut_event set; borrowed. desc: the source
 * as el_src_opts_describe names it ("stdin" for standard input).
 * Thread: any. */
struct el_diag_s;
void el_src_warn_cut(const char *desc, const struct el_diag_s *d);

/* el_src_pump with an el_ev_decoder_t (src/eventlog/eventlog.h) as the
 * consumer: reset = el_ev_decoder_reset, feed = el_ev_decoder_feed,
 * finish = el_ev_decoder_finish, finish_stopped =
 * el_ev_decoder_finish_stopped once the session's header was read (before
 * it, el_ev_decoder_finish: bytes without a header are still reported).
 * dec: borrowed. */
struct el_ev_decoder_s;
int el_src_pump_decoder(uv_loop_t *loop, const el_src_opts_t *o,
                        struct el_ev_decoder_s *dec,
                        el_src_pump_result_t *res);

#ifdef __cplusplus
}
#endif
#endif /* EL_SOURCE_H */
