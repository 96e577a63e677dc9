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
  const char *lua_dir;      /* the project's lua/ directory; NULL = the
                               default (EVENTLOG_LIVE_LUA_DIR env, the
                               installed path, else EL_SOURCE_DIR/lua) */
} el_host_opts_t;

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

/* Add `key = value` to the script-visible table eventlog_live.config.
 * Strings copied. Call before el_host_load. Returns 0 or EL_ENOMEM. */
int el_host_set_config(el_host_t *h, const char *key, const char *value);

/* Load and run the script at path (its directory is added to the require
 * path; arg[0] = path). path: borrowed. On failure returns EL_ELUA (syntax
 * error "file:line: msg", or an error while the main chunk ran, with its
 * traceback), a negated errno (unreadable) or EL_ENOMEM, with the message
 * in el_host_error(h); subscriptions made before the error stay. May be
 * called again (REPL :load). Spec: docs/lua-api.md §1. */
int el_host_load(el_host_t *h, const char *path);

/* Load and run a chunk from memory (tests, REPL). name: chunk name used in
 * messages, e.g. "=test". Same errors as el_host_load. */
int el_host_load_string(el_host_t *h, const char *code, const char *name);

/* The last error message (load errors, fail-fast error). Static until the
 * next call on h; "" if none. */
const char *el_host_error(const el_host_t *h);

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

/* Wall-clock timers: run those due at `now_ms` (CLOCK_MONOTONIC in ms:
 * uv_now() or el_host_clock_ms()); first dispatches any queued events
 * (el_host_flush). Returns the delay in ms until the next timer, or -1 if
 * none; timers created later are due no earlier than their interval, so
 * polling every 100 ms is enough. The command's loop calls it from an
 * unreferenced libuv timer. Thread: the loop's. */
int64_t el_host_run_wall_timers(el_host_t *h, uint64_t now_ms);

/* Monotonic milliseconds used by wall timers when no loop time is given. */
uint64_t el_host_clock_ms(void);

/* Control hook: el.control(namespace, command_id) calls fn, which returns
 * 0 or a negative EL_E* code (EL_ECLOSED = not connected). NULL = not
 * wired (el.control returns nil, "not connected"). */
typedef int (*el_host_control_fn)(void *ud, const char *ns, size_t ns_len,
                                  uint32_t command_id);
void el_host_set_control(el_host_t *h, el_host_control_fn fn, void *ud);

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
  uint64_t helper_dropped;  /* usage metric updates of the C helpers lost
                               to out of memory (el.cap_usage on_point) */
  uint64_t malformed;       /* malformed events (el_ev_event_t.malformed,
                               reported by the decoder): dispatched to
                               nothing, not even "*" handlers */
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
