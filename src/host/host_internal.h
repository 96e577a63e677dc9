/* host_internal.h: the host's private state, shared by the files of
 * src/host/ (host.c: state, loading, dispatch; lua_events.c: the
 * `eventlog_live` module, subscriptions, sessions; lua_time.c: timers;
 * lua_emit.c: telemetry; lua_analysis.c: thread/GC/capability helpers). */
#ifndef EL_HOST_INTERNAL_H
#define EL_HOST_INTERNAL_H

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdint.h>

#include "host.h"

#define EL__HOST_NTYPES 256   /* type ids with a dispatch slot */

/* Bits of el_host_t.flags[type]: who wants events of this type. */
enum {
  EL__F_LUA = 1,    /* Lua handlers subscribed to this type */
  EL__F_SYS = 2,    /* the session tracker needs it */
  EL__F_ANA = 4,    /* the C analyses need it */
  EL__F_STAR = 8    /* some handler subscribed to "*" */
};

/* Integer-only events for Lua handlers are queued and replayed in batches
 * under one protected call (one setjmp per batch instead of per event).
 * Anything else that involves Lua (timers, hooks, helpers, other events)
 * first replays the queue, so handlers see events in stream order. */
#define EL__BATCH 256
#define EL__BATCH_FIELDS 4        /* events with more fields: not queued */
#define EL__BATCH_PAYLOAD 24      /* events with longer payloads: not queued */
typedef struct el__brec_s {
  el_rts_ns_t t;            /* event time */
  el_rts_ns_t now;          /* stream time when it was decoded */
  uint64_t offset;
  uint16_t type, cap;
  uint8_t nfields, layout, plen;
  uint64_t v[EL__BATCH_FIELDS];
  uint8_t payload[EL__BATCH_PAYLOAD];
} el__brec_t;

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
  char where[128];          /* "file.lua:12" of the function */
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
} el__timer_t;

typedef struct el__theap_s {
  el__timer_t **v;
  int n, cap;
} el__theap_t;

/* What the session tracker learned from init events. */
typedef struct el__session_s {
  unsigned number;
  int seen_wct, seen_pid, seen_rts, seen_args;
  int ready, ended;
  int breakdown_from_begin;
  uint8_t caps[8192];       /* bitmap of capabilities seen */
} el__session_t;

struct el__ana_s;           /* lua_analysis.c */

struct el_host_s {
  lua_State *L;
  el_ev_decoder_t *dec;
  el_tm_store_t *store;
  el_host_opts_t opts;
  char *lua_dir;

  const el_ev_event_t *cur; /* event being dispatched, or NULL */
  el_rts_ns_t now;          /* largest event time seen */
  int stop;                 /* nonzero after a fail-fast error */
  int ended;
  int loaded;

  uint8_t flags[EL__HOST_NTYPES];
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
  uint8_t direct[EL__HOST_NTYPES]; /* 1: integer fields only, handlers
                                      are called without a trampoline */
  int mod_ref;              /* the module table */
  int hooks_ref;            /* table of hook arrays */
  int session_ref;          /* current session table */
  int in_dispatch;
  el__brec_t *batch;        /* queued events (EL__BATCH), lazily made */
  int nbatch;               /* queued */
  int bpos, bh;             /* replay position: event, handler index */
  el__handler_t *replay_hd; /* handler being called by the replay */
  unsigned replay_gen;      /* replay calls made (handler rslot cache) */

  el__theap_t evt_timers;   /* eventlog-time timers */
  el__theap_t wall_timers;  /* wall-clock timers */
  uint64_t next_deadline;   /* earliest eventlog-time deadline */
  uint64_t timer_seq;
  el__handler_t timer_handler; /* error accounting for timers */
  el__handler_t hook_handler;  /* error accounting for hooks/helpers */

  el__session_t sess;
  struct el__ana_s *ana;

  el_host_control_fn control_fn;
  void *control_ud;

  el_host_stats_t st;
  uint64_t npcalls;         /* protected calls of timers/hooks/helpers */
  uint64_t hook_seq;        /* call the budget hook last saw */
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
/* Count and log (or fail-fast) the error message on top of L (the main
 * state or the dispatch thread); pops it. */
void el__host_error(el_host_t *h, lua_State *L, el__handler_t *hd,
                    const char *what);
void el__host_set_flag(el_host_t *h, int type, uint8_t bit, int on);
/* Time for emit calls: t if given, else the current event's or now. */
el_unix_ns_t el__host_unix(el_host_t *h, el_rts_ns_t t);
el_host_t *el__host_from(lua_State *L);

/* lua_events.c */
int el__lua_open_module(lua_State *L);
void el__events_dispatch(el_host_t *h, const el_ev_event_t *ev, uint8_t f);
/* Queue ev for batched dispatch if it qualifies; 1 if queued. */
int el__batch_add(el_host_t *h, const el_ev_event_t *ev);
/* Replay the queued events (does nothing when none). */
void el__batch_flush(el_host_t *h);
void el__session_event(el_host_t *h, const el_ev_event_t *ev);
void el__session_header(el_host_t *h);
void el__session_end(el_host_t *h);
void el__hooks_call(el_host_t *h, const char *hook, int with_session);
void el__handlers_free(el_host_t *h);
int el__push_field(lua_State *L, const el_ev_event_t *ev, int i,
                   el_ev_kind_t kind);

/* lua_time.c */
void el__timers_fire(el_host_t *h);
void el__timers_free(el_host_t *h);
void el__lua_time_register(lua_State *L);

/* lua_emit.c */
void el__lua_emit_register(lua_State *L);

/* lua_analysis.c */
void el__lua_analysis_register(lua_State *L);
void el__ana_event(el_host_t *h, const el_ev_event_t *ev);
void el__ana_flush(el_host_t *h);
void el__ana_free(el_host_t *h);

#endif /* EL_HOST_INTERNAL_H */
