/* host.h: the Lua host. One Lua 5.4 state per host, fed by an eventlog
 * decoder that the host owns; scripts subscribe to event types and emit
 * telemetry into a store. The Lua-visible API is documented in
 * docs/lua-api.md (module `eventlog_live`).
 *
 * Flow: el_host_new -> el_host_set_store / el_host_set_config ->
 * el_host_load(script) -> feed bytes through el_host_decoder(h) (or
 * el_host_feed) -> el_host_end -> el_host_free.
 * Thread: everything runs on the one thread that feeds the decoder. */
#ifndef EL_HOST_H
#define EL_HOST_H

#include <stdint.h>

#include "../common/el_common.h"
#include "../eventlog/eventlog.h"
#include "../source/src_consumer.h"
#include "../telemetry/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct el_host_s el_host_t;

typedef struct el_host_opts_s {
  int fail_fast;            /* stop at the first Lua error (EL_ESTOPPED) */
  int handler_budget_ms;    /* > 0: a handler, timer or hook call that
                               runs longer is stopped with an error
                               (counted like any handler error); checked
                               by a Lua count hook, which slows Lua code
                               down while enabled. 0 = no limit. */
  int64_t horizon_ns;       /* live: a capability silent for longer
                               (quiet time: el_host_input_waits) is no
                               longer waited for by the reorder buffer and
                               windows, unless its blocks come further
                               apart (docs/lua-api.md §6 "Ordering"); 0 =
                               the default, 5 s */
  const char *lua_dir;      /* the project's lua/ directory; NULL = the
                               rule of docs/lua-api.md §1 (see
                               el_host_lua_dir) */
  uint64_t lua_memory;      /* bytes the Lua heap may hold: an allocation
                               past it fails as Lua's "not enough memory"
                               error (after a full collection), caught
                               like any error; 0 = the default, the
                               smaller of 4 GiB and half the physical
                               memory (el_host_default_lua_memory) */
  /* os.exit([code]) in the script stops the run cleanly instead of
   * ending the process at once: decoding stops as after a signal (the
   * input drained, so its writer is not left blocked), on_end hooks run,
   * telemetry is flushed, and el_host_exit_status gives the code
   * (docs/lua-api.md §9, `run`) */
  int exit_stops;
} el_host_opts_t;

/* The default Lua heap limit (el_host_opts_t.lua_memory = 0), bytes: the
 * smaller of 4 GiB and half the physical memory (4 GiB when that is not
 * known). */
uint64_t el_host_default_lua_memory(void);

/* Create a host: a Lua state with the standard libraries and the
 * `eventlog_live` module preloaded, and a decoder whose sink is the host.
 * opts: borrowed (copied); NULL = defaults.
 * Returns NULL when out of memory. Free with el_host_free. */
el_host_t *el_host_new(const el_host_opts_t *opts);

/* Free the host, its Lua state and decoder. NULL does nothing. */
void el_host_free(el_host_t *h);

/* The decoder the host consumes (owned by the host): feed it bytes, or
 * hand it to el_src_pump_decoder. Valid until el_host_free. */
el_ev_decoder_t *el_host_decoder(el_host_t *h);

/* Where emitted telemetry goes. st: borrowed, must outlive h (or be
 * replaced). NULL = emit calls return nil, "no telemetry store". */
void el_host_set_store(el_host_t *h, el_tm_store_t *st);

/* Set eventlog_live.config[path] = value, the table scripts read their
 * options from (docs/lua-api.md §7). path: dotted, e.g. "top" or
 * "processors.metrics.heap_size.export_ns": intermediate tables are made
 * as needed. Strings copied. Call before el_host_load. Returns 0 or
 * EL_ENOMEM. */
int el_host_set_config(el_host_t *h, const char *path, const char *value);
int el_host_set_config_integer(el_host_t *h, const char *path,
                               int64_t value);
int el_host_set_config_boolean(el_host_t *h, const char *path, int value);

/* Load and run the script at path (its directory is added to the require
 * path; arg[0] = path). path: borrowed. On failure returns EL_ELUA (syntax
 * error "file:line: msg", or an error while the main chunk ran, with its
 * traceback), a negated errno (unreadable) or EL_ENOMEM, with the message
 * in el_host_error(h); subscriptions made before the error stay. May be
 * called again (REPL :load). Spec: docs/lua-api.md §1. */
int el_host_load(el_host_t *h, const char *path);

/* Load and run the module `name` (e.g. "eventlog_live.processors.main")
 * as a script (el_host_load), found on the host's require path. Returns
 * as el_host_load, or EL_ELUA when not found (el_host_error lists where it
 * was looked for). */
int el_host_load_module(el_host_t *h, const char *name);

/* The project's lua/ directory the host uses: $EVENTLOG_LIVE_LUA_DIR; else
 * share/eventlog-live/lua beside the executable's directory; else the
 * source tree the binary was built from; else the configured install
 * prefix (docs/lua-api.md §1). Owned by h. */
const char *el_host_lua_dir(const el_host_t *h);

/* Load and run a chunk from memory (tests, REPL). name: chunk name used in
 * messages, e.g. "=test". Same errors as el_host_load. */
int el_host_load_string(el_host_t *h, const char *code, const char *name);

/* The last error message (load errors, fail-fast error). Static until the
 * next call on h; "" if none. */
const char *el_host_error(const el_host_t *h);

/* With el_host_opts_t.exit_stops: 1 and *status = the script's os.exit
 * code (true or none: 0, false: 1, else the integer) once it called
 * os.exit, else 0. */
int el_host_exit_status(const el_host_t *h, int *status);

/* el_ev_decoder_feed on the host's decoder, then el_host_flush. Returns
 * the decoder's result, or EL_ESTOPPED after a fail-fast error. */
int el_host_feed(el_host_t *h, const uint8_t *buf, size_t len);

/* Dispatch the events still queued for batched dispatch. el_host_feed,
 * el_host_session_end, el_host_end and el_host_run_wall_timers do it;
 * a driver that feeds el_host_decoder(h) directly calls it (or one of
 * those) after each chunk, else up to 256 integer-only events wait for
 * the next chunk. */
void el_host_flush(el_host_t *h);

/* A session ended (DATA_END, EOF, connection closed): flush the sorted
 * analyses and run on_session_end hooks. Idempotent per session. */
void el_host_session_end(el_host_t *h);

/* End of input: finish the session, run on_end hooks, flush the store.
 * Returns 0, or EL_ESTOPPED when a fail-fast error happened (now or
 * earlier). Call once. */
int el_host_end(el_host_t *h);

/* {====== absolute time and ordering ======}
 * Spec: eventlog-format.md §3.5 (absolute time), §3.6 and §4.7 (blocks,
 * sessions); docs/lua-api.md §3 ("The session clock"). */

/* How the current session's Unix times are known. */
typedef enum {
  EL_HOST_CLOCK_NONE = 0,   /* nothing yet: conversions give 0 */
  EL_HOST_CLOCK_ESTIMATED,  /* from when its bytes arrived (or a file's
                               modification time): an upper bound that
                               tightens as blocks arrive */
  EL_HOST_CLOCK_EXACT       /* from the session's WALL_CLOCK_TIME */
} el_host_clock_t;

/* The bytes fed next existed by Unix time by_unix_ns (ns since the epoch):
 * the time a live source received them, or the modification time of a
 * recorded file. live: 1 when they arrive as the program writes them
 * (socket, FIFO, pipe, followed file): the wall clock then also moves the
 * session's time, so windows close while the stream is quiet; 0 for a
 * recorded file. Until the session's WALL_CLOCK_TIME arrives its clock is
 * estimated from these bounds: RTS start <= by_unix_ns - t for every event
 * time t (a block marker's end time is when the RTS wrote the block), the
 * smallest such bound wins. 0 = unknown (nothing estimated). Sticky until
 * the next call. */
void el_host_received(el_host_t *h, el_unix_ns_t by_unix_ns, int live);

/* The live input waits for its writer (waiting = 1: everything it had was
 * fed) or no longer does (0: more bytes come, or reading was paused). Time
 * spent waiting, on the monotonic clock, is the only time that counts as a
 * capability's silence (docs/lua-api.md §6 "Ordering"): a backlog being
 * processed is never silence. While the wait lasts, call again with 1 every
 * EL_SRC_WAIT_BEAT_MS (el_src_pump does, src_consumer.h): a stretch between
 * two calls counts for at most twice that, since for the rest this process
 * did not run (SIGSTOP, a paused VM) or its loop was blocked, and the
 * writer may have written meanwhile. The first call (el_src_pump makes one
 * with 0 when each session begins) switches the host from wall-clock
 * silence, which a host fed without such calls keeps, to this waiting time
 * for good. Thread: the loop thread. */
void el_host_input_waits(el_host_t *h, int waiting);

/* What a scan of a recorded file found for one session (header), ahead of
 * reading it (el_ev_scan, src/eventlog/eventlog.h). */
typedef struct el_host_hint_s {
  int has_wall_clock;       /* the session has a WALL_CLOCK_TIME: the
                               clock is exact from its first event */
  int64_t start_unix_ns;    /* then: Unix ns of its RTS time 0 */
  el_rts_ns_t max_t;        /* largest event or block end time, ns */
  const uint16_t *caps;     /* capabilities that have blocks (borrowed
                               for the call), ascending */
  size_t ncaps;
  /* The session's init events (spec §2.4; on GHC 9.0 at the end of the
   * file), so that el.session holds them from the header on: */
  int has_pid, has_ppid; /* an OSPROCESS_PID / OSPROCESS_PPID */
  uint64_t pid, ppid;
  /* RTS_IDENTIFIER's name and PROGRAM_ARGS's NUL-ended arguments; p NULL:
   * none. Borrowed for the call. */
  el_strview_t rts_id;
  el_strview_t args;
  /* Events without a capability (global blocks; GHC 9.0 writes its one at
   * exit, after the capability blocks), from el_ev_scan_session_t: the
   * time-order handlers of a type among nocap_types (ids below 256;
   * nocap_high: some id >= 256) wait for them until the block marker
   * after nocap_last_offset, the byte offset of the last one. */
  int has_nocap;
  int nocap_high;
  uint64_t nocap_last_offset;
  uint64_t nocap_types[4];
} el_host_hint_t;

/* Hints for the next n sessions (headers) the host reads, in order (a
 * file of several sessions, e.g. a raw tee). hints: copied, their lists
 * and strings too. Replaces hints not yet used. A hinted session's clock
 * is exact from its first event (WALL_CLOCK_TIME found), else estimated
 * from max_t and the el_host_received bound; its capabilities are
 * expected from the start (the watermark waits for each one's first
 * block); its init events' fields (pid, ppid, rts_version, ghc_version,
 * rts_way, args, heap_prof_breakdown from -h<X>) are in el.session
 * before on_header runs, with el.session.init_scanned = true, and set
 * again, unchanged, when the events come (docs/lua-api.md). Returns 0
 * or EL_ENOMEM (no hints kept). */
int el_host_set_hints(el_host_t *h, const el_host_hint_t *hints, size_t n);

/* The current (or last) session's clock state. */
el_host_clock_t el_host_clock(const el_host_t *h);

/* Unix ns of the latest event time seen in the current session (for a
 * lag display), 0 when the clock is not known yet. */
el_unix_ns_t el_host_stream_unix_ns(el_host_t *h);

/* Interrupt the host from a signal handler (async-signal-safe): the Lua
 * call running now (a handler, timer or hook) stops at its next
 * instruction with the error "interrupted" (a call blocked inside C, e.g.
 * os.execute, stops when it returns to Lua), no further event is
 * dispatched, no timer callback of either clock starts again
 * (el_host_run_wall_timers), and el_host_feed returns EL_ESTOPPED from
 * now on (the driver then ends the input). Session-end and on_end hooks
 * still run (the daemon flushes its windows); they can be interrupted
 * again. */
void el_host_interrupt(el_host_t *h);

/* el_host_interrupt for signal number sig (SIGINT, SIGTERM; 0: unknown),
 * from its handler (async-signal-safe). The Lua call it stops is a stop,
 * not an error: logged once at info ("<what> (<where>): stopped by signal
 * <sig> (interrupted, not an error)"), not counted in handler_errors nor
 * in el_host_report_errors. A real error in the same call (raised before
 * the interrupt reached it) stays an error. */
void el_host_interrupt_signal(el_host_t *h, int sig);

/* The host as the consumer of el_src_pump (src/source/source.h): fills
 * *c (ud = h) so that each session begins with reset (the previous
 * session ends: el_host_session_end; the decoder expects a header), its
 * bytes go to el_host_feed with their el_host_received bounds, a recorded
 * file is scanned ahead (each session's WALL_CLOCK_TIME and capabilities,
 * el_host_set_hints), and finish ends it (el_ev_decoder_finish: a cut
 * stream is reported as truncated; finish_stopped, after the reader
 * stopped: el_ev_decoder_finish_stopped, nothing said). The caller adds
 * on_source if it needs the source. Call el_host_end after the pump
 * returns. */
void el_host_consumer(el_host_t *h, el_src_consumer_t *c);

/* Wall-clock timers: run those due at `now_ms` (CLOCK_MONOTONIC in ms:
 * uv_now() or el_host_clock_ms()); first dispatches any queued events
 * (el_host_flush). Returns the delay in ms until the next timer, or -1 if
 * none; timers created later are due no earlier than their interval, so
 * polling every 100 ms is enough. After a stop (el_host_interrupt, or a
 * fail-fast error) it runs nothing and returns -1: no timer callback
 * starts while the source drains, so a script cannot hold off the drain's
 * bound (docs/sources.md "Stopping"); only the session-end and on_end
 * hooks of el_host_end run after that. The command's loop calls it from
 * an unreferenced libuv timer. Thread: the loop's. */
int64_t el_host_run_wall_timers(el_host_t *h, uint64_t now_ms);

/* Monotonic milliseconds used by wall timers when no loop time is given. */
uint64_t el_host_clock_ms(void);

/* Control hook: el.control(namespace, command_id) calls fn, which returns
 * 0 or a negative EL_E* code (EL_ECLOSED = not connected). command_id 0:
 * namespace is a builtin command name (el.control("request-heap-census"));
 * fn returns EL_EINVAL for an unknown one (el_ctl_host_control does all
 * this). NULL = not wired (el.control returns nil, "not connected"). */
typedef int (*el_host_control_fn)(void *ud, const char *ns, size_t ns_len,
                                  uint32_t command_id);
void el_host_set_control(el_host_t *h, el_host_control_fn fn, void *ud);

/* Called before each print(), io.write() or file:write() of the script
 * to stdout, on the thread running Lua, so that another writer of stdout
 * can write what it holds first (`run`: el_otlp_console_sync, keeping
 * the console's lines and the script's output in the order of the calls).
 * fn: NULL (the default) for none. */
void el_host_set_stdout_sync(el_host_t *h, void (*fn)(void *ud), void *ud);

/* The input's name in the decoder's warnings, which the host logs as
 * "NAME: MESSAGE" (show's words for them, src/cmd/cmd_show.c), or NULL
 * (the default) for the message alone. name: copied (at most 511 bytes
 * kept). el_host_consumer's input_name hook calls it with el_src_pump's
 * name for its source (a path, "stdin", "Unix socket PATH"). Thread: the
 * feeding thread. */
void el_host_set_input_name(el_host_t *h, const char *name);

/* Warning hook: fn(ud, diag) after each decoder warning has been logged
 * and counted (on the feeding thread; diag is borrowed for the call).
 * Code 0 is information (stray bytes skipped, ...), EL_ECORRUPT a corrupt
 * part skipped or a malformed event, EL_EBADHDR conflicting declarations
 * (el_ev_sink_t.on_warning). NULL = none. */
typedef void (*el_host_warning_fn)(void *ud, const el_diag_t *diag);
void el_host_set_warning_hook(el_host_t *h, el_host_warning_fn fn, void *ud);

/* Clock hook: fn(ud, session, start_unix_ns, end_t, settled) each time
 * the current session's clock (docs/lua-api.md §3 "The session clock")
 * changes: at each header (a new session: its clock, or start_unix_ns 0
 * while none is known), when a live session's estimate tightens, when
 * its WALL_CLOCK_TIME makes it exact, and once more as the session ends
 * (the clock unchanged, end_t final). session: el.session.number.
 * start_unix_ns: the Unix ns of its RTS start that el.unix_ns and the C
 * helpers convert with from now on (0: no clock). end_t: the session's
 * largest eventlog time so far (ns since its RTS start), of its events and
 * its block markers' end times, as the report's scan measures a recorded
 * session (el_host_hint_t max_t): where the session ends, which places
 * a session without WALL_CLOCK_TIME before the next one. settled: it will not
 * change again in this session (exact, or a recorded file's estimate from
 * the scan); an unsettled one may still move, and the times converted
 * with it then differ from later ones by the change. Called on the
 * feeding thread between events, never from inside a Lua handler; fn
 * must not feed the host. NULL = none. */
typedef void (*el_host_clock_fn)(void *ud, uint64_t session,
                                 el_unix_ns_t start_unix_ns, el_rts_ns_t end_t,
                                 int settled);
void el_host_set_clock_hook(el_host_t *h, el_host_clock_fn fn, void *ud);

/* Arguments the caller put into its program's command line, right after
 * argv[0] (watch's "+RTS -l -ol<fifo> ... -RTS", cmd_watch.c): args, a
 * NULL-terminated list (copied; NULL or empty: none). A session's
 * program arguments (PROGRAM_ARGS, or the scan's hint) that hold exactly
 * these strings at argv[1..] are given to the scripts without them, as
 * the user wrote the command line: el.session.args and so the resource
 * attribute process.command_args (the -h<X> among them still sets
 * heap_prof_breakdown). Returns 0 or EL_ENOMEM (then none are left out).
 * Additive. */
int el_host_set_args_drop(el_host_t *h, const char *const *args);

/* Counters. */
typedef struct el_host_stats_s {
  uint64_t events;          /* events seen by the sink */
  uint64_t dispatched;      /* handler calls into Lua */
  uint64_t handler_errors;  /* errors raised by handlers, timers, hooks */
  uint64_t timer_skipped;   /* eventlog-time deadlines skipped (big jumps) */
  uint64_t reorder_forced;  /* helper events released before their turn */
  uint64_t warnings;        /* decoder warnings */
  uint64_t reentrant_dropped; /* events fed from inside a handler: not
                               dispatched to Lua */
  uint64_t budget_exceeded; /* calls stopped by handler_budget_ms */
  /* handlers disabled after EL__BUDGET_DISABLE (10) budget stops each */
  uint64_t handlers_disabled;
  /* allocations refused at the Lua heap limit (el_host_opts_t.lua_memory) */
  uint64_t lua_memory_refused;
  uint64_t helper_dropped;  /* usage metric updates of the C helpers lost
                               to out of memory (el.cap_usage on_point) */
  uint64_t reorder_late;    /* helper events that arrived after later
                               events had been released (a capability
                               silent past its wait, or first seen
                               late): processed out of order */
  uint64_t threads_evicted; /* finished threads forgotten by the C helpers
                               (beyond el.threads{keep_finished=}) */
  uint64_t usage_other;     /* mutator spans credited to the usage series
                               of user "other" (beyond max_users) */
  uint64_t malformed;       /* malformed events (el_ev_event_t.malformed,
                               reported by the decoder): dispatched to
                               nothing, not even "*" handlers */

  /* Events for the time-order Lua handlers (docs/lua-api.md §2) that
   * arrived behind one already released, a capability silent past the
   * horizon: dispatched at once, out of order (order_late); released
   * before the watermark reached them, more than max_held held or out of
   * memory (order_forced). */
  uint64_t order_late, order_forced;
} el_host_stats_t;
const el_host_stats_t *el_host_stats(const el_host_t *h);

/* Print one line per failing handler (count, event type, where it was
 * defined) to stderr. */
void el_host_report_errors(const el_host_t *h);

/* The Lua state (REPL, tests). Owned by h. */
struct lua_State *el_host_lua(el_host_t *h);

#ifdef __cplusplus
}
#endif
#endif /* EL_HOST_H */
