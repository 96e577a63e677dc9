/* host_internal.h: the host's private state, shared by the files of
 * src/host/ (host.c: state, loading, dispatch; lua_events.c: the
 * `eventlog_live` module, subscriptions, sessions; lua_time.c: timers;
 * lua_emit.c: telemetry; lua_analysis.c and ana_*.c: thread/GC/capability
 * helpers, ana_internal.h). */
#ifndef EL_HOST_INTERNAL_H
#define EL_HOST_INTERNAL_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "host.h"

#define EL__HOST_NTYPES 256   /* type ids with a dispatch slot */

/* Bits of el_host_t.flags[type]: who wants events of this type. */
enum {
  EL__F_LUA = 1,  /* Lua handlers subscribed to this type */
  EL__F_SYS = 2,  /* the session tracker needs it */
  EL__F_ANA = 4,  /* the C analyses need it */
  EL__F_STAR = 8, /* some handler subscribed to "*" */
  EL__F_ORD = 16  /* Lua handlers want this type in time order
                     (lua_order.c) */
};

/* How a handler is called (el.on option `args`, docs/lua-api.md §2). */
enum {
  EL__ARGS_EV = 0, /* fn(ev, field1, ...): ev.t and ev.cap stored in the
                      reused ev table per event */
  EL__ARGS_T = 1   /* fn(t, cap, field1, ...): nothing stored */
};

/* One event held for later dispatch: by the batch queue (below) and by
 * the reorder buffer of time-order handlers (lua_order.c), in one layout
 * (el__rec_fill, el__rec_event). After the header: f[nfields] (each
 * field's .u), then one el__rec_str_t per string field (strmask bit i:
 * field i is a string view into the payload), then the payload bytes. */
typedef struct el__rec_s {
  el_rts_ns_t t;   /* event time */
  el_rts_ns_t now; /* stream time when it was decoded */
  uint64_t offset; /* byte offset of the event in the input */
  /* plen to nfields mirror el_ev_event_t's payload_len to nfields (small
   * in malformed's place), so a batch slot takes them in one 8-byte copy
   * (el__rec_fill_batch) */
  uint32_t plen; /* payload bytes */
  uint8_t known;
  uint8_t small; /* lua_order.c: a recycled EL__REC_SMALL block */
  uint8_t layout, nfields;
  uint16_t type, cap; /* as el_ev_event_t's first 4 bytes */
  uint16_t strmask;   /* string fields (bit i: field i) */
  /* A batch slot: 1 when it holds a record released to the time-order
   * handlers (el__batch_add_ordered), 0 for the stream-order ones. */
  uint16_t ordered;
  uint64_t f[]; /* nfields values */
} el__rec_t;
_Static_assert(
    offsetof(el_ev_event_t, known) ==
            offsetof(el_ev_event_t, payload_len) + 4 &&
        offsetof(el_ev_event_t, malformed) ==
            offsetof(el_ev_event_t, payload_len) + 5 &&
        offsetof(el_ev_event_t, layout) ==
            offsetof(el_ev_event_t, payload_len) + 6 &&
        offsetof(el_ev_event_t, nfields) ==
            offsetof(el_ev_event_t, payload_len) + 7 &&
        offsetof(el__rec_t, known) == offsetof(el__rec_t, plen) + 4 &&
        offsetof(el__rec_t, nfields) == offsetof(el__rec_t, plen) + 7 &&
        offsetof(el_ev_event_t, cap) == 2 &&
        offsetof(el__rec_t, cap) == offsetof(el__rec_t, type) + 2 &&
        offsetof(el__rec_t, ordered) == offsetof(el__rec_t, type) + 6,
    "el__rec_fill_batch's copies follow these layouts");
typedef struct el__rec_str_s {
  uint32_t off, len; /* a string field's view in the payload */
} el__rec_str_t;
#define EL__REC_SMALL 96 /* bytes of a batch slot / recycled record */

/* Bytes of the record of ev. */
size_t el__rec_size(const el_ev_event_t *ev);
/* Store ev (and the stream time now) into r, el__rec_size(ev) bytes
 * (r->small is left as it is). */
void el__rec_fill(el__rec_t *r, const el_ev_event_t *ev, el_rts_ns_t now);
/* The same for a known event of an EL__D_BATCH type (integer fields, as
 * many as the type has) with at most EL__BATCH_PAYLOAD payload bytes,
 * into EL__REC_SMALL bytes; faster (no string views). lua_order.c's
 * records; the batch queue's slots take el__rec_fill_batch. */
void el__rec_fill_ints(el__rec_t *r, const el_ev_event_t *ev, el_rts_ns_t now);
/* The event r holds; its string views and payload point into r. The
 * string views of integer fields (as the decoder leaves them) and fields
 * past nfields are left unset (nothing reads them). */
void el__rec_event(const el__rec_t *r, el_ev_event_t *ev);

/* Integer-only events for Lua handlers are queued (one EL__REC_SMALL slot
 * each) and replayed in batches under one protected call (one setjmp per
 * batch instead of per event). Anything else that involves Lua (timers,
 * hooks, helpers, other events) first replays the queue, so handlers see
 * events in stream order. */
#define EL__BATCH 256
#define EL__BATCH_FIELDS 4   /* events with more fields: not queued */
#define EL__BATCH_PAYLOAD 24 /* events with longer payloads: not queued */

/* Bits of el_host_t.direct[type]. */
enum {
  EL__D_INTS = 1,  /* integer fields only: handlers are called without a
                      trampoline (pushing the fields cannot allocate) */
  EL__D_BATCH = 2, /* and at most EL__BATCH_FIELDS of them: queued */
  EL__D_NSHIFT = 2 /* EL__D_BATCH types: their field count at bits 2-4 */
};

/* How the current session's events of one type become batch records
 * straight from the decoder's runs (lua_run.c, el_host_t.lrun). */
typedef struct el__lrun_s {
  /* The record's plen..nfields word (el__ev_tail_word of its events:
   * payload length, known 1, malformed 0, layout, nfields). */
  uint64_t w;
  uint8_t shape; /* EL__LR_*: how its fields lie; 0: not taken (its
                    layout this session is not fixed-size integer-only
                    with at most EL__BATCH_FIELDS fields and
                    EL__BATCH_PAYLOAD bytes) */
  uint8_t on;    /* a direct type of the decoder for el__lua_direct_run */
  uint8_t nwire; /* EL__LR_GEN: fields on the wire (the rest are 0) */
  uint8_t wire[EL__BATCH_FIELDS]; /* EL__LR_GEN: EL_EV_WIRE_* of each */
} el__lrun_t;
enum {
  EL__LR_NONE = 1, /* no fields */
  EL__LR_U32,      /* u32 (RUN_THREAD, CREATE_THREAD, ...) */
  EL__LR_U32_U16,  /* u32 u16 (THREAD_WAKEUP, MIGRATE_THREAD) */
  EL__LR_STOP,     /* u32 u16 u32 (STOP_THREAD's GHC layout) */
  EL__LR_GEN       /* any other: nwire fields by wire[], zeros after */
};

/* A handler (el.on) stopped by the time budget this many times is
 * disabled: a handler that loops on every event would otherwise hold the
 * reader for the budget times every event (docs/lua-api.md "Time
 * budget"). */
#define EL__BUDGET_DISABLE 10

/* Fixed slots of the dispatch thread's stack. */
enum { D_TB = 1, D_EV, D_KT, D_KCAP, D_NSLOTS = D_KCAP };

/* One subscription of a Lua function to one event type (or "*"). */
typedef struct el__handler_s {
  int ref;                  /* registry ref of the function */
  int id;                   /* id returned by el.on */
  int type;                 /* type id, -1 for "*" */
  int dead;                 /* removed by el.off; freed at compaction */
  int slot;                 /* index of the function on the dispatch
                               thread's stack, 0 = use the registry ref */
  int rslot;                /* its copy in the batch replay's frame */
  unsigned rgen;            /* replay call rslot belongs to */
  uint64_t calls;
  uint64_t errors;
  uint64_t last_log_ms;     /* when the last error was logged */
  uint64_t unlogged;        /* errors since then, not logged */
  /* Its calls stopped by the time budget (handler_budget_ms), and those
   * that overflowed Lua's stack (a runaway recursion: up to a second
   * each, growing the stack to its limit) or ran the Lua heap out of
   * memory: at EL__BUDGET_DISABLE of either the handler is disabled
   * (el__host_error). */
  uint64_t budget_stops, overflows;
  char where[128];          /* "file.lua:12" of the function */

  /* The calling convention (EL__ARGS_*) and 1 when called in time order
   * (lua_order.c). */
  int args, ordered;
} el__handler_t;

/* Handlers of one type, in subscription order. */
typedef struct el__hlist_s {
  el__handler_t **v;
  int n, cap;
} el__hlist_t;

/* A timer (eventlog or wall clock). Shared by the heap and the Lua
 * userdata; freed when neither refers to it any more. */
typedef struct el__timer_s {
  uint64_t deadline;        /* eventlog ns, or monotonic ms */
  uint64_t interval;        /* 0 = one-shot */
  uint64_t seq;             /* creation order, breaks ties */
  int ref;                  /* registry ref of the callback */
  int cancelled;
  int in_heap;
  int firing;               /* its callback is running: popped from the
                               heap but still owned by the firing loop */
  int has_ud;
  int wall;
  int fired;       /* its callback has run at least once */
  int session_end; /* made in an on_session_end hook: for a session to
                      come (el__timers_warn_unfired) */
  char where[96]; /* "file.lua:12" where el.every etc. made it */
} el__timer_t;

typedef struct el__theap_s {
  el__timer_t **v;
  int n;      /* timers in the heap */
  size_t cap; /* allocated in v (el_grow) */
} el__theap_t;

/* What the session tracker learned from init events. */
typedef struct el__session_s {
  unsigned number;
  int seen_wct, seen_pid, seen_rts, seen_args;
  int ready, ended;
  int breakdown_from_begin;
  int rebase_timers;        /* eventlog timers wait for the first event */
  uint8_t caps[8192];       /* bitmap of capabilities seen */
} el__session_t;

/* The session's clock: eventlog time to Unix time (host_clock.c,
 * docs/lua-api.md §3). The anchor is the Unix time of RTS time 0. */
typedef struct el__clock_s {
  el_host_clock_t state;    /* NONE, ESTIMATED, EXACT */
  int64_t anchor;           /* Unix ns of RTS time 0 (not NONE) */
  int from_file;            /* ESTIMATED from a file's modification time */
  int from_next;            /* ... of it, from a later session's exact
                               start instead (from_file_end): it ended
                               where that one started */
  el_unix_ns_t received;    /* the bytes being fed existed by then; 0 =
                               unknown */
  int live;                 /* they arrive as the program writes them */
  el_host_hint_t *hints;    /* scan results for the next sessions */
  uint16_t *hint_caps;      /* owned copies of their capability lists */
  char *hint_strs;          /* owned copies of their strings */
  size_t nhints, next_hint;
  int hinted;               /* the current session had a hint */
  /* The session's largest block end time (the clock hook's end_t). */
  el_rts_ns_t block_end;
} el__clock_t;

/* How far each capability has delivered its events (host_clock.c): the
 * watermark below which no event of an expected capability can still
 * arrive (each capability's blocks arrive in time order, spec
 * eventlog-format.md §3.5, §3.6). */
#define EL__MAX_CAPS 1024
enum { CAP_UNKNOWN = 0, CAP_EXPECTED, CAP_SEEN };
typedef struct el__progress_s {
  el_rts_ns_t last[EL__MAX_CAPS]; /* latest time delivered by each cap */
  /* Live: when it last delivered, on the quiet clock (quiet_now in
   * host_clock.c): ns the input waited for its writer, or wall-clock Unix
   * ns when the source does not report waits (waits_known 0). */
  uint64_t arrived[EL__MAX_CAPS];
  /* Live: the quiet time between its last two block arrivals (the first
   * counted from the session's start), halved at each block unless a
   * longer one comes; 0 = no block yet. It sets how long the capability
   * is waited for (host_clock.c, wait_of). */
  uint64_t gap[EL__MAX_CAPS];
  uint8_t state[EL__MAX_CAPS]; /* CAP_* */
  int max_cap;                 /* highest cap index used, -1 none */
  int block_cap;               /* cap of the block being read, -1 */
  el_rts_ns_t block_end;       /* its end time */
  /* Live: the least wait for a silent cap (quiet time; wait_of in
   * host_clock.c). */
  el_rts_ns_t horizon;
  uint64_t max_wait; /* the longest wait, unless the horizon is longer */
  /* The input's waits for its writer (el_host_input_waits); kept across
   * sessions. */
  int waits_known; /* the source reports them: silence is quiet time */
  int waiting;     /* it waits now */
  /* Then: its last report (monotonic ns). */
  uint64_t wait_since_ns;
  /* The stretches of waits up to the last report, summed, each counted
   * up to host_clock.c's MAX_STEP_NS (the quiet clock). */
  uint64_t waited_ns;
  uint64_t session_at; /* live: the quiet time when the session began */
  uint64_t gap_max;    /* live: the longest gap[] of the session */
  el_rts_ns_t wm;      /* cached watermark */
  /* With the cache: the least latest time of the other capabilities
   * waited for (UINT64_MAX: none), as it was when the cache was computed
   * (they only move up since; live, silence only takes some out). While
   * wm_cap's latest time stays below it, it alone holds the watermark. */
  el_rts_ns_t wm_next;
  int wm_cap;   /* cap holding it, -1 = none */
  int wm_dirty; /* recompute before use */
  /* reorder_late, reorder_forced, order_late, order_forced already
   * warned about (el__order_report). */
  uint64_t told[4];
  /* Live: the quiet time when the session's first capability block came
   * (any_block set): the next capability is waited for during the horizon
   * from then (host_clock.c, el__watermark). */
  uint64_t first_block_at;
  int any_block;
  /* Live: the next capability is no longer waited for this session: the
   * reorder buffers held EL__NEXT_CAP_HELD events while it alone held
   * the watermark (el__progress_held). */
  int next_given_up;
  /* A recorded session's events without a capability (global blocks),
   * from the scan's hint: still to come until a block marker after byte
   * nocap_until (the last one's offset); nocap_last: the latest time they
   * delivered (global blocks are written in time order, GHC 9.0's at
   * exit). The time-order handlers wait for them when one of their types
   * is in nocap_types (nocap_high: a type id >= 256); nocap_ord caches
   * that (-1: to compute; el__host_set_flag clears it). */
  int nocap_wait;
  int nocap_high;
  int nocap_ord;
  int nocap_block; /* a global block is being read, ending at */
  el_rts_ns_t nocap_block_end;
  el_rts_ns_t nocap_last;
  uint64_t nocap_until;
  uint64_t nocap_types[4];
} el__progress_t;

struct el__ana_s;           /* ana_internal.h */

/* The reorder buffer of the time-order handlers (lua_order.c). */
typedef struct el__order_s el__order_t;

struct el_host_s {
  lua_State *L;
  el_ev_decoder_t *dec;
  el_tm_store_t *store;
  el_host_opts_t opts;
  uint64_t lua_bytes; /* the Lua heap's bytes in use (lalloc) */
  char *lua_dir;

  const el_ev_event_t *cur; /* event being dispatched, or NULL */
  el_rts_ns_t now;          /* largest event time seen */
  int stop;                 /* nonzero after a fail-fast error */
  int in_end_hooks;         /* on_session_end / on_end hooks running: under
                               --fail-fast their errors are logged each
                               and stop none of the others */
  volatile sig_atomic_t interrupted; /* el_host_interrupt: no more events */
  volatile sig_atomic_t interrupt_sig; /* its signal's number, 0 unknown */
  int exit_asked, exit_status; /* os.exit(code) (el_host_opts_t.exit_stops) */
  int interrupt_hit; /* interrupt_hook raised "interrupted" in a call whose
                        error was not reported yet (el__host_stopped) */
  volatile sig_atomic_t break_lua;   /* stop the running Lua call */
  int ended;
  int loaded;
  int loading;           /* a script's chunk is running (load_chunk) */
  int out_err;           /* errno of the first failed Lua write to stdout */
  uint64_t out_dropped;  /* print()/io.write() calls whose stdout write
                            failed or was skipped (lua_stdout.c) */
  uint64_t out_reported; /* out_dropped when last reported */
  void (*out_sync)(void *ud); /* el_host_set_stdout_sync; NULL */
  void *out_sync_ud;
  int out_used;          /* Lua wrote to stdout (el__stdout_report may
                            flush it: never otherwise, the console
                            exporter's writer may hold it, blocked) */

  /* Who gets each type's events this session (EL__F_*): want[], except
   * for a type of nolayout[], which only the "*" handlers get
   * (star_flag). Kept by el__host_set_flag. */
  uint8_t flags[EL__HOST_NTYPES];
  uint8_t want[EL__HOST_NTYPES]; /* EL__F_* asked for each type */
  /* 1: a known type the session's header declares with a size no layout
   * of it fits (el_ev_decl_t.known = 0): its events come with known = 0
   * and no fields, so its own handlers, the session tracker and the C
   * analyses never get them (on_header in host.c). */
  uint8_t nolayout[EL__HOST_NTYPES];
  uint8_t star_flag;        /* flags for types >= EL__HOST_NTYPES */
  el__hlist_t types[EL__HOST_NTYPES];
  el__hlist_t star;
  el__hlist_t all;          /* every handler ever made (owner) */
  int next_id;
  int need_compact;
  int ev_ref;               /* the reused `ev` table */
  lua_State *D;             /* dispatch thread: its stack holds, at rest,
                               exactly D_TB, D_EV, D_KT, D_KCAP below */
  int D_ref;                /* registry ref anchoring D */
  int d_top;                /* dispatch thread's stack height at rest */
  int ev_cap;               /* cap stored in ev.cap; -1 = none stored yet
                               (a script writing ev.cap is its own risk) */
  const el_ev_type_info_t *ti[EL__HOST_NTYPES]; /* cached type infos */
  uint8_t direct[EL__HOST_NTYPES];              /* EL__D_* bits of each type */
  uint64_t bkey[EL__HOST_NTYPES]; /* EL__BKEY(nfields) of EL__D_BATCH types,
                                     else EL__BKEY_NONE (el__batch_add_in) */
  /* The run path of batched events (lua_run.c): each type's record
   * recipe for the current session and whether it is direct for it. */
  el__lrun_t lrun[EL__HOST_NTYPES];
  /* While the analyses' types are direct (el__ana_direct_sync), the
   * decoder's run handler is theirs: 1 el__ana_direct_run (per
   * capability), 2 el__ana_direct_run_ordered (time order); 0: the Lua
   * one, el__lua_direct_run. */
  int lrun_ana;
  /* 1 while no type is direct for el__lua_direct_run: the analyses want
   * events (el__direct_sync). */
  int lrun_off;
  int mod_ref;              /* the module table */
  int hooks_ref;            /* table of hook arrays */
  int session_ref;          /* current session table */
  int in_dispatch;
  unsigned char *batch;     /* queued events: EL__BATCH slots of
                               EL__REC_SMALL bytes, lazily made */
  int nbatch;               /* queued */
  int bpos, bh;             /* replay position: event, handler index */
  const el__rec_t *bset;    /* the queued event whose t and cap the ev
                               table holds (NULL = none) */
  el__handler_t *replay_hd; /* handler being called by the replay */
  /* The queued event being replayed; h->cur is made from it on demand
   * (el__host_cur) into cur_buf. NULL outside a replay. */
  const el__rec_t *cur_rec;
  const el__rec_t *cur_built; /* the record cur_buf holds (el__host_cur) */
  el_ev_event_t cur_buf;
  /* The event h->cur points to while the analyses take a RUN_THREAD or
   * STOP_THREAD from a run in time order (ana_reorder.c direct_cur). */
  el_ev_event_t ev_direct;
  unsigned replay_gen;      /* replay calls made (handler rslot cache) */
  int olist; /* replay position in a time-order slot: 0 its type's
                 handlers, 1 the "*" ones (handler index in bh) */

  el__theap_t evt_timers;   /* eventlog-time timers */
  el__theap_t wall_timers;  /* wall-clock timers */
  uint64_t next_deadline;   /* earliest eventlog-time deadline */
  /* The decoder counts an event of a type nobody wants (no flag) into
   * st.events and now instead of delivering it when its time is below
   * this (el_ev_quiet_t.until): next_deadline, or 0 while on_event must
   * see every event (el__host_quiet_sync). */
  uint64_t quiet_until;
  /* The session's header declares RUN_THREAD with 4 payload bytes and
   * STOP_THREAD with 10, as GHC does (on_header): what el__ana_direct_run
   * reads them as. */
  int direct_sizes;
  uint64_t timer_seq;
  el__handler_t timer_handler; /* error accounting for timers */
  /* The timers whose callbacks failed, by where the script made them
   * (el__timer_t.where), for el_host_report_errors; those past the
   * first 8 places add to timer_err_other. */
  struct {
    char where[96];
    uint64_t errors;
  } timer_err[8];
  int ntimer_err;
  uint64_t timer_err_other;
  el__handler_t hook_handler;  /* error accounting for hooks/helpers */
  /* While a timer's or a hook's call runs: where the script made that
   * timer or added that hook ("file.lua:12"), which its errors name in
   * place of the shared record's "timer"/"hook"; else NULL. */
  const char *call_where;

  /* Handlers in time order (lua_order.c), by type and for "*"; the
   * default order of el.on (el.order(), reset per loaded script); the
   * reorder buffer (made on first use); el.event()'s table, whose keys
   * are all computed from the current event. */
  el__hlist_t otypes[EL__HOST_NTYPES];
  el__hlist_t ostar;
  int def_ordered;
  el__order_t *order;
  int evl_ref;

  el__session_t sess;
  el__clock_t clock;
  el__progress_t prog;
  struct el__ana_s *ana;

  el_host_control_fn control_fn;
  void *control_ud;
  char input_name[512];          /* el_host_set_input_name; "" = none */
  el_host_warning_fn warning_fn; /* el_host_set_warning_hook */
  void *warning_ud;
  el_host_clock_fn clock_fn; /* el_host_set_clock_hook */
  void *clock_ud;
  char *args_drop;      /* el_host_set_args_drop: the strings, each with
                            its NUL, or NULL */
  size_t args_drop_len; /* their bytes */

  el_host_stats_t st;
  uint64_t npcalls;         /* protected calls of timers/hooks/helpers */
  uint64_t hook_seq;        /* call the budget hook last saw */
  /* 1 + the call (hook_seq) the budget hook last stopped: an error of
   * that call is the budget's (a script's pcall may have caught it) */
  uint64_t budget_call;
  uint64_t hook_start_ms;   /* when it first saw it */
  char err[2048];
};

/* host.c */
/* Call the function on top of the stack (below it: nargs arguments, above
 * nothing) in protected mode with a traceback; account errors to hd.
 * [-(nargs+1), +0, -]. Returns 0 or -1 (error, counted and logged). */
int el__host_pcall(el_host_t *h, int nargs, el__handler_t *hd,
                   const char *what);
/* The message handler of every protected call. [-0, +1, m] */
int el__host_traceback(lua_State *L);
/* A protected call of what (where: its handler's name) failed with msg:
 * when interrupt_hook raised it (a signal's el_host_interrupt), log the
 * stop once at info and return 1 (not an error: not counted); else 0.
 * Clears interrupt_hit either way. */
int el__host_stopped(el_host_t *h, const char *what, const char *where,
                     const char *msg);
/* Count and log (or fail-fast) the error message on top of L (the main
 * state or the dispatch thread); pops it. */
void el__host_error(el_host_t *h, lua_State *L, el__handler_t *hd,
                    const char *what);
void el__host_set_flag(el_host_t *h, int type, uint8_t bit, int on);
/* Time for emit calls: t if given, else the current event's or now. */
el_unix_ns_t el__host_unix(el_host_t *h, el_rts_ns_t t);
/* The host of L or of any thread of its state (kept in the state's extra
 * space, copied into every thread: no registry lookup per API call). */
el_host_t *el__host_from(lua_State *L);

/* lua_stdout.c: print(), io.write() and file:write() to stdout with
 * their failures said once; the report says what was dropped. */
void el__stdout_install(lua_State *L);
void el__stdout_report(el_host_t *h);

/* lua_events.c */
int el__lua_open_module(lua_State *L);
/* Call the stream-order handlers of ev's type (f: its EL__F_LUA and
 * EL__F_STAR bits select the lists). */
void el__events_dispatch(el_host_t *h, const el_ev_event_t *ev, uint8_t f);
/* Call the time-order handlers of ev's type and the time-order "*"
 * handlers (lua_order.c releases events through it); sets h->cur. */
void el__events_dispatch_ordered(el_host_t *h, const el_ev_event_t *ev);
/* True when record r (lua_order.c's) can wait in the batch queue for the
 * time-order handlers (el__batch_add_ordered): a known event of an
 * EL__D_BATCH type with its type's field count (integers only, at most
 * EL__BATCH_FIELDS) and at most EL__BATCH_PAYLOAD payload bytes, i.e. a
 * record of EL__REC_SMALL bytes made by el__rec_fill_ints. */
static inline int el__rec_replayable(const el_host_t *h, const el__rec_t *r) {
  unsigned d = r->type < EL__HOST_NTYPES ? h->direct[r->type] : 0;
  return (d & EL__D_BATCH) && r->known &&
         r->nfields == ((d >> EL__D_NSHIFT) & 7) &&
         r->plen <= EL__BATCH_PAYLOAD;
}
/* Queue a copy of record r (el__rec_replayable), released now, for the
 * time-order handlers of its type and "*": the batch queue replays it
 * in its turn among the stream-order events, as
 * el__events_dispatch_ordered would call them for its event, with the
 * stream time of now. Not inside a dispatch. Returns 0, or EL_ENOMEM
 * (nothing queued: the caller dispatches it itself). docs/lua-api.md §2
 * "Order of events". */
int el__batch_add_ordered(el_host_t *h, const el__rec_t *r);
/* The event being dispatched (made from the queued record during a batch
 * replay), or NULL. Valid until the handler returns. */
const el_ev_event_t *el__host_cur(el_host_t *h);
/* Queue ev for batched dispatch if it qualifies (known, integer fields
 * only, at most EL__BATCH_FIELDS of them and EL__BATCH_PAYLOAD payload
 * bytes, not inside a dispatch); 1 if queued. Replays the queue when it
 * is full. el__batch_add_in (below) is its body, inline. */
int el__batch_add(el_host_t *h, const el_ev_event_t *ev);
/* Replay the queued events (does nothing when none). */
void el__batch_flush(el_host_t *h);
/* Allocate the batch queue (h->batch) if it is not: 0, or EL_ENOMEM. */
int el__batch_grow(el_host_t *h);

/* The header of the record of ev (el__rec_t up to f[]): its time, the
 * stream time now, where it was in the input, KNOWN and NF fields, no
 * string field yet (r->small is left as it is). Inline: both of
 * lua_order.c's fills are on its per-event path. */
static inline void el__rec_fill_header(el__rec_t *r, const el_ev_event_t *ev,
                                       el_rts_ns_t now, uint8_t known,
                                       size_t nf) {
  r->t = ev->t_ns;
  r->now = now;
  r->offset = ev->offset;
  r->plen = ev->payload_len;
  r->type = ev->type;
  r->cap = ev->cap;
  r->known = known;
  r->layout = ev->layout;
  r->nfields = (uint8_t)nf;
  r->strmask = 0;
}

/* Copy n <= EL__BATCH_PAYLOAD bytes without a call (two overlapping
 * moves of the largest size that fits). */
static inline void el__small_copy(unsigned char *d, const unsigned char *s,
                                  uint32_t n) {
  if (n >= 16) {
    memcpy(d, s, 16);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 8) {
    memcpy(d, s, 8);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (uint32_t i = 0; i < n; i++) d[i] = s[i];
  }
}

/* ev's payload_len, known, malformed, layout and nfields as one word
 * (little-endian: payload_len in the low 32 bits, nfields in the top 8). */
static inline uint64_t el__ev_tail_word(const el_ev_event_t *ev) {
  uint64_t w;
  memcpy(&w, &ev->payload_len, 8);
  return w;
}
/* The known and nfields bytes of el__ev_tail_word. */
#define EL__TAIL_MASK 0xFF0000FF00000000ull
/* el_host_t.bkey[type] of a type whose events may be queued with N
 * fields: known = 1 and nfields = N under EL__TAIL_MASK. Other types have
 * EL__BKEY_NONE, which no masked word equals. */
#define EL__BKEY(n) ((1ull << 32) | ((uint64_t)(n) << 56))
#define EL__BKEY_NONE UINT64_MAX

/* el__rec_fill_ints for a batch slot, given el__ev_tail_word(ev): the
 * header in five copies (r->small then holds ev->malformed, 0: a batch
 * slot is not one of lua_order.c's records). */
static inline void el__rec_fill_batch(el__rec_t *r, const el_ev_event_t *ev,
                                      el_rts_ns_t now, uint64_t w) {
  uint32_t tc;
  uint64_t tcs;
  r->t = ev->t_ns;
  r->now = now;
  r->offset = ev->offset;
  memcpy(&r->plen, &w, 8);
  memcpy(&tc, &ev->type, 4);
  tcs = tc; /* type, cap; strmask and ordered 0 */
  memcpy(&r->type, &tcs, 8);
  r->f[0] = ev->v[0].u;
  r->f[1] = ev->v[1].u;
  r->f[2] = ev->v[2].u;
  r->f[3] = ev->v[3].u;
  el__small_copy((unsigned char *)&r->f[ev->nfields], ev->payload, (uint32_t)w);
}

/* el__batch_add's body, inline on the host's per-event path (host.c
 * on_event): ev's type must be below EL__HOST_NTYPES. One compare checks
 * that the type is queued (EL__D_BATCH), that ev is known and that it has
 * the type's field count (h->bkey). */
static inline __attribute__((always_inline)) int el__batch_add_in(
    el_host_t *h, const el_ev_event_t *ev) {
  uint64_t w = el__ev_tail_word(ev);
  if ((w & EL__TAIL_MASK) != h->bkey[ev->type] ||
      (uint32_t)w > EL__BATCH_PAYLOAD || h->in_dispatch)
    return 0;
  if (__builtin_expect(!h->batch, 0) && el__batch_grow(h) != 0) return 0;
  el__rec_fill_batch(
      (el__rec_t *)(h->batch + (size_t)h->nbatch++ * EL__REC_SMALL), ev, h->now,
      w);
  if (h->nbatch == EL__BATCH) el__batch_flush(h);
  return 1;
}
void el__session_event(el_host_t *h, const el_ev_event_t *ev);
void el__session_header(el_host_t *h);
void el__session_end(el_host_t *h);
void el__hooks_call(el_host_t *h, const char *hook, int with_session);
/* lua_time.c: "file.lua:12" of the Lua code that called the running C
 * function, into buf (size bytes), or "?" when C called it. [-0, +0, -] */
void el__host_caller_where(lua_State *L, char *buf, size_t size);
void el__handlers_free(el_host_t *h);
int el__push_field(lua_State *L, const el_ev_event_t *ev, int i,
                   el_ev_kind_t kind);

/* lua_order.c (docs/lua-api.md §2 "Order of events") */
/* Hold a copy of ev for the time-order handlers (flag EL__F_ORD), then
 * release what the watermark allows. ev: borrowed for the call. An event
 * behind one already released (late), or one that cannot be held (out of
 * memory), is dispatched at once and counted (order_late, order_forced). */
void el__order_event(el_host_t *h, const el_ev_event_t *ev);
/* Dispatch, in (time, arrival) order, the held events at or below the
 * watermark, the oldest beyond max_held (counted in order_forced), and
 * with all = 1 every one (end of a session). Does nothing inside a
 * dispatch. */
void el__order_release(el_host_t *h, int all);
/* Events held now; *peak (if not NULL) = the most held at once. */
size_t el__order_held(const el_host_t *h, size_t *peak);
/* The most events held before forced releases (el.order's max_held). */
size_t el__order_max(const el_host_t *h);
/* Hold at most max_held events (>= 1) before forcing releases. */
void el__order_set_max(el_host_t *h, size_t max_held);
void el__order_free(el_host_t *h);

/* lua_time.c */
void el__timers_fire(el_host_t *h);
/* A new session's first event at eventlog time t0: periodic eventlog
 * timers continue at the first multiple of their interval after t0 (a
 * restarted program's clock starts again at 0; a reconnection to a running
 * one starts late). */
void el__timers_rebase(el_host_t *h, uint64_t t0);
/* At the end of input (el_host_end, after the on_end hooks): one warning
 * naming the script line of each timer made in an on_session_end hook
 * that never fired and is not cancelled (it waited for a session that
 * did not come; docs/lua-api.md §4). Nothing after a stop. */
void el__timers_warn_unfired(el_host_t *h);
void el__timers_free(el_host_t *h);
void el__lua_time_register(lua_State *L);

/* lua_emit.c */
void el__lua_emit_register(lua_State *L);

/* lua_opts.c: raise unless every key of the table at idx is one of keys
 * (NULL-terminated; a key with a nil value is not in the table). The
 * error names fn (e.g. "el.on"), the kind of key `what` ("option",
 * "field"), the key, and the nearest of keys (el_nearest) or, with none
 * near, all of them: `el.on: unknown option 'ordr' (did you mean
 * 'order'?)`. A key that is not a string is an error too. The table is
 * not changed. Returns the set of keys present: bit i for keys[i] (at
 * most 64 keys), so that a caller reads only the fields given (el.log
 * runs per record). [-0, +0, v] */
uint64_t el__lua_check_keys(lua_State *L, int idx, const char *fn,
                            const char *what, const char *const *keys);

/* lua_opts.c: the value at the top of the stack (just fetched with
 * lua_getfield; left there), field `key` of the table argument of fn
 * ("el.log"), checked as luaL_check* would, with an error naming fn and
 * the field: `el.log: field 'body' must be a string (got nil)`,
 * `el.span: field 'kind' is 'weird': use one of internal, server, ...`.
 *   el__field_integer      an integer (a float with an exact integer
 *                          value too)
 *   el__field_opt_integer  nil (def) or an integer
 *   el__field_time         an integer >= 0 (eventlog or Unix ns)
 *   el__field_string       a string or a number (converted in place)
 *   el__field_option       the index of the string in lst (NULL-ended);
 *                          nil is def when def is not NULL
 *   el__field_function     a function
 * [-0, +0, v] */
lua_Integer el__field_integer(lua_State *L, const char *fn, const char *key);
lua_Integer el__field_opt_integer(lua_State *L, const char *fn, const char *key,
                                  lua_Integer def);
uint64_t el__field_time(lua_State *L, const char *fn, const char *key);
const char *el__field_string(lua_State *L, const char *fn, const char *key,
                             size_t *len);
int el__field_option(lua_State *L, const char *fn, const char *key,
                     const char *def, const char *const lst[]);
void el__field_function(lua_State *L, const char *fn, const char *key);

/* host_clock.c */
void el__clock_init(el_host_t *h);
void el__clock_free(el_host_t *h);
/* A header was read: a fresh clock (from the next hint, if any) and
 * fresh capability progress. Returns the session's hint (valid until the
 * hints are replaced) or NULL. */
const el_host_hint_t *el__clock_session(el_host_t *h);
/* Session events that concern the clock and the watermark
 * (BLOCK_MARKER, WALL_CLOCK_TIME, CAP_CREATE). Returns 1 when the
 * clock changed (the session table needs updating). */
int el__clock_event(el_host_t *h, const el_ev_event_t *ev);
/* The session ended: every capability's block is complete. */
void el__clock_end(el_host_t *h);
/* Capability progress from an event the C analyses use (finer than
 * blocks). */
void el__progress_event(el_host_t *h, unsigned cap, el_rts_ns_t t);
/* At a session's end (and the host's): one warning per count of events
 * processed out of order since the last report (el_host_stats_t
 * reorder_late, reorder_forced, order_late, order_forced), naming the
 * consequence and the knob (docs/lua-api.md §6 "Ordering"). */
void el__order_report(el_host_t *h);
/* The watermark: no event of an expected capability older than it can
 * arrive any more. Returns 0 and sets *wm, or -1 when no capability is
 * expected (nothing to wait for). */
int el__watermark(el_host_t *h, el_rts_ns_t *wm);

/* Live: how many events a reorder buffer (ana_reorder.c, lua_order.c)
 * holds at most while only the next capability, not seen yet, holds the
 * watermark back: a fast program writes millions of events during the
 * horizon of quiet time for which that capability is waited for
 * (host_clock.c), and holding them all costs ~24 bytes each (the C
 * analyses) or more (time-order handlers). 2^18: ~2 GHC 9.0 capability
 * blocks of RUN_THREAD/STOP_THREAD/THREAD_WAKEUP events. */
#define EL__NEXT_CAP_HELD (1u << 18)
/* Live: a reorder buffer now holds EL__NEXT_CAP_HELD events. When the
 * next capability (not seen yet) is all that holds the watermark back, it
 * is not waited for any more this session (el__progress_t.next_given_up;
 * its events, if it comes, are late: counted and warned about) and 1 is
 * returned: the caller releases what the new watermark lets go. Else 0,
 * nothing changed. docs/lua-api.md §6 "Ordering". */
int el__progress_held(el_host_t *h);

/* el__watermark for the time-order handlers (lua_order.c): also no later
 * than the latest time of the events without a capability, while a
 * recorded file's scan shows some of a type those handlers want still to
 * come (GHC 9.0 writes its global block at exit). Returns 0 with *wm set,
 * or -1 when nothing is waited for. */
int el__order_watermark(el_host_t *h, el_rts_ns_t *wm);

/* A time-order event ev without a capability (ev->cap EL_EV_NO_CAP) was
 * read: the global blocks have delivered up to its time. */
void el__progress_nocap(el_host_t *h, const el_ev_event_t *ev);
/* Eventlog time of the wall clock now in a live session with a clock
 * (for closing windows of a quiet stream); returns 0 and sets *t, or -1. */
int el__clock_wall_t(el_host_t *h, el_rts_ns_t *t);
/* Push the session table's clock fields (start_unix_ns, clock). */
void el__clock_push_fields(el_host_t *h, lua_State *L, int tbl);

/* lua_analysis.c, ana_reorder.c, ana_state.c */
void el__lua_analysis_register(lua_State *L);
void el__ana_event(el_host_t *h, const el_ev_event_t *ev);
/* The sink's path for an event that only the C analyses want (its flags
 * are EL__F_ANA alone, so not a BLOCK_MARKER) with no events waiting in
 * the batch queue: el__ana_event with h->cur set to ev meanwhile.
 * Returns h->stop. */
int el__ana_event_only(el_host_t *h, const el_ev_event_t *ev);
/* The daemon's run handler (el_ev_run_fn; ud: the host, host.c) for
 * RUN_THREAD and STOP_THREAD while only the C analyses want them
 * (el__host_set_flag): when it may take the run (the per-capability
 * mode, nothing held, batched or stopping, a capability seen before),
 * its
 * events in order while each is quiet (counted) or a direct one it can
 * take, then the capability's progress for those (direct_end,
 * ana_reorder.c); returns the bytes taken. It
 * takes a direct event with a GHC 9.0 payload (4 or 10 bytes) of a
 * thread already in the table by a small id: finished before the event
 * (only its first and latest times move), or in its common state (no run
 * open for a RUN_THREAD; one, on the run's capability, for a STOP_THREAD
 * that does not finish it, and the usage fast path el__ana_run_span_fast
 * taking its span, the daemon's default processors' case), with
 * el__ana_event_only's effect; it stops at any other (then delivered).
 * Times: ns since RTS start. */
size_t el__ana_direct_run(void *ud, const el_ev_run_t *run,
                          el_ev_run_taken_t *taken);
/* The same in time order (el.threads, el.gc, on_span callbacks: every
 * processor on): a recorded session's RUN_THREAD and STOP_THREAD take
 * el__ana_event_only's two short paths (through the state machines at
 * once on the capability holding the cached watermark, after the held
 * events before them; appended to their capability's queue on another
 * one, above the watermark), each counted and the stream time raised as
 * on_event does before one goes through (a handler called meanwhile sees
 * what it would have seen, h->cur included); the run stops at anything
 * else, and at a stop (fail-fast), which it passes on to the decoder
 * (el_ev_run_taken_t.stop). */
size_t el__ana_direct_run_ordered(void *ud, const el_ev_run_t *run,
                                  el_ev_run_taken_t *taken);
/* lua_run.c: the Lua handlers' batched events straight from the
 * decoder's runs (docs/eventlog.md "A run handed over whole").
 * el__lua_direct_run: the decoder's run handler (el_ev_run_fn; ud: the
 * host) while no type is direct for the analyses (with types direct for
 * it only while the analyses want no type at all): it takes the run's
 * events in order while each is quiet (counted) or one of a type that
 * only stream-order Lua handlers want and whose events are batched
 * (el__batch_add_in: known, integer fields only, at most
 * EL__BATCH_FIELDS of them and EL__BATCH_PAYLOAD bytes), writing the
 * same batch record as on_event would from the event's bytes; it stops
 * before the record that would fill the queue (on_event adds that one and
 * replays the queue, as before), and takes nothing while the host is
 * stopping, interrupted, inside a dispatch or timers are due
 * (quiet_until 0). Returns the bytes taken (el_ev_run_fn). */
size_t el__lua_direct_run(void *ud, const el_ev_run_t *run,
                          el_ev_run_taken_t *taken);
/* A session's header was read: each type's record recipe (el__lrun_t)
 * from the decoder's layouts of the session (el_ev_decoder_fixed), then
 * el__direct_sync(h, -1). */
void el__lrun_session(el_host_t *h);
/* Keep the decoder's direct types and run handler in step with who
 * wants type `type` (-1: all types, also after the analyses' trackers
 * changed): RUN_THREAD and STOP_THREAD for the analyses
 * (el__ana_direct_sync) and, while the analyses want no type, the types
 * only stream-order Lua handlers want whose events are batched and whose
 * session layout el__lua_direct_run decodes. Called by
 * el__host_set_flag, lua_analysis.c and el__lrun_session. */
void el__direct_sync(el_host_t *h, int type);

/* Make RUN_THREAD and STOP_THREAD direct types of the decoder
 * (el_ev_decoder_set_direct) exactly while the C analyses alone want them
 * (flags EL__F_ANA); el__direct_sync then installs the run handler of the
 * analyses' mode (el__ana_direct_run per capability,
 * el__ana_direct_run_ordered in time order). */
void el__ana_direct_sync(el_host_t *h);
/* Whether the analyses take RUN_THREAD and STOP_THREAD runs from the
 * decoder: they exist and want one of the two types alone (EL__F_ANA),
 * and not live in time order (el__ana_direct_run_ordered would decline
 * every run: a live watermark moves with quiet time). 1 or 0. Changes
 * with the session's liveness: el_host_received then calls
 * el__direct_sync. */
int el__ana_direct_wanted(const el_host_t *h);
/* The host's store changed (el_host_set_store): what the analyses knew
 * of the old one is forgotten. */
void el__ana_store_set(el_host_t *h);
void el__ana_flush(el_host_t *h);
/* Live: release the held events the watermark now allows, a capability
 * having gone silent since the last event (called on wall-clock ticks,
 * el_host_run_wall_timers; docs/lua-api.md §6 "Ordering"). No-op for a
 * recorded session, whose watermark moves only with its events. */
void el__ana_release(el_host_t *h);
/* A new session: forget threads, capability states and usage series (a
 * restarted program numbers its threads from 1 again). */
void el__ana_session(el_host_t *h);
void el__ana_free(el_host_t *h);

/* Keep quiet_until in step: on_event's fast path is only the count, the
 * stream time and the dispatch while the event's time is below
 * next_deadline (timers fire first), no new session's first event is
 * awaited (timers are rebased on it) and no fail-fast error stopped the
 * host; for an event nobody wants it is only the count and the time, so
 * below quiet_until the decoder may do that itself. Called wherever one
 * of those changes (host.c, lua_time.c, lua_events.c). An interrupt (a
 * signal handler) does not move it: the decoder stops at the next event
 * it delivers, and what it counted before that was not dispatched. */
static inline void el__host_quiet_sync(el_host_t *h) {
  h->quiet_until = h->stop || h->interrupted || h->sess.rebase_timers ||
                           h->next_deadline <= h->now
                       ? 0 /* a deadline already due: the next event */
                       : h->next_deadline;
}

#endif /* EL_HOST_INTERNAL_H */
