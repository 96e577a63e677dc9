/* ana_internal.h: the C analyses' shared state (docs/lua-api.md §6,
 * spec/reference-behaviour.md §5.2.3), split by concern:
 *   ana_reorder.c  the reorder buffer: events in, time order out (§5.3.1)
 *   ana_state.c    the thread and GC state machines, the thread table
 *   ana_emit.c     spans and metric points: Lua callbacks, native spans,
 *                  capability usage and productivity
 *   lua_analysis.c the Lua binding (el.threads, el.gc, el.cap_usage)
 * Private to src/host. */
#ifndef EL_ANA_INTERNAL_H
#define EL_ANA_INTERNAL_H

#include "../common/el_map.h"
#include "host_internal.h"

#define TRACKER_MT "el.Tracker"
#define MAX_CAPS 1024
/* Events held before forced release: 2^20 - 1, so that a queue holding
 * them all and the one that crosses the bound fits a ring of 2^20 slots,
 * about 24 MB (a qrec_t and a qstop_t each); the time-order handlers'
 * default max_held is alike (lua_order.c). No recorded eventlog in
 * tests/data holds more than 114 K; live, a capability that writes a
 * block only every few seconds while another is busy (GHC 9.0's 2 MiB
 * buffers) can hold back more. Past it the oldest go at once until
 * FORCE_BATCH fewer than the bound are held, so that the events after
 * them are queued without a release each. */
#define MAX_HELD ((1u << 20) - 1)
#define FORCE_BATCH (1u << 16)
#define NSTATUS 24          /* STOP_THREAD status codes tracked */
#define MAX_TRACE_IDS 65536 /* per-thread trace ids kept at most */
/* Finished threads kept in the table (el.threads{keep_finished=}); the
 * oldest finished beyond it are forgotten, counted in threads_evicted. */
#define KEEP_FINISHED 1000
/* Per-capability mode: finished threads kept beyond keep_finished because
 * another capability's earlier events of them may still come (they
 * finished after el__ana_settled). Past it the oldest are forgotten
 * anyway, each leaving a 16-byte record (ana_t.gone) so that a late event
 * of it finds it finished. */
#define MAX_UNSETTLED 8192
/* Thread series of the capability usage metric (el.cap_usage{max_users=});
 * beyond it a thread's mutator time goes to the series of user "other". */
#define MAX_USERS 1000
/* Thread ids below this are found by direct index (GHC numbers threads
 * from 1 up); larger ones through the map. */
#define DIRECT_IDS (1u << 20)
/* Runs of one thread open at once on different capabilities (only late
 * events make more than one); beyond it the oldest is dropped, counted in
 * unexpected. */
#define OPEN_RUNS 4
#define SPANS_PER_FLUSH 8192 /* native spans between store flushes */

enum { K_RUN = 1, K_STOP, K_GC_START, K_GC_END };
enum { TK_THREADS = 0, TK_GC, TK_CAPS, TK_POINTS, TK_PROD, TK_N };
enum { TS_NEW = 0, TS_RUNNING, TS_BLOCKED, TS_FINISHED };
/* Usage series categories; CAT_OTHER is Mutator time of the threads past
 * max_users, one series per capability with user "other". */
enum { CAT_MUT = 0, CAT_GC, CAT_IDLE, CAT_OTHER };
/* What the spans feed (ana_t.feat), set when a tracker is made
 * (el__ana_features): usage series (on_point), productivity
 * (on_productivity), el.cap_usage's on_span or native spans, el.threads'
 * on_span or native spans. */
enum {
  F_POINTS = 1,
  F_PROD = 2,
  F_CAPS_CB = 4,
  F_CAPS_NATIVE = 8,
  F_THREAD_OUT = 16
};

/* One event as the state machines take it (the reorder buffer stores it
 * in a smaller form, ana_reorder.c). status and info are a STOP_THREAD's
 * only: left as they were for the other kinds popped from the queues. */
typedef struct {
  uint64_t t;
  uint32_t thread, info;
  uint16_t cap, status;
  uint8_t kind; /* K_* */
} rec_t;

/* A thread of the table. The first 64 bytes hold what every RUN_THREAD
 * and STOP_THREAD reads or writes; the rest is read when spans end or by
 * el.threads' listing. */
typedef struct {
  uint32_t id;
  int8_t state; /* TS_*; -1 while being evicted */
  uint8_t prev; /* 0, K_RUN, K_STOP: last accepted event */
  uint8_t has_first, has_status;
  uint64_t prev_t;
  uint32_t prev_info;
  uint16_t prev_cap, prev_status;
  uint16_t cap;
  uint8_t has_created, has_finished;
  uint8_t nopen;      /* runs in open[] */
  uint16_t other_cap; /* with other_gen: see there */
  uint32_t mut_us;    /* a hint: 1 + the index of its latest Mutator usage
                         series (us), checked against the key before use;
                         0 = none */
  uint32_t other_gen; /* 1 + ana_t.ugen when its Mutator time on capability
                         other_cap last went to user "other" (no series of
                         its own there, max_users reached); 0 = none */
  uint64_t first_t, last_t; /* UINT64_MAX and 0 until has_first */
  uint64_t running_ns, blocked_ns;
  uint64_t runs;
  /* Runs begun and not stopped yet, one per capability: a STOP_THREAD
   * ends the run of its thread on its own capability (ana_state.c). More
   * than one only when a capability's events came late. */
  struct {
    uint64_t t;
    uint16_t cap;
  } open[OPEN_RUNS];
  uint64_t created_t, finished_t;
  char *label;
  int has_trace; /* native thread spans: trace id given */
  uint8_t trace[16];
  uint64_t blocked[NSTATUS + 1]; /* by status; last slot = others */
} thread_t;

/* One (capability, category, user) series of the capability usage metric
 * (el.cap_usage{on_point=}): running total and latest span start. */
/* The key of a free usage series slot: no live key equals it. */
#define USTATE_FREE UINT64_MAX

typedef struct {
  uint64_t key; /* cap << 34 | category << 32 | thread */
  int64_t total, t, win;
  /* While dirty, window win as [wlo, wlo + wlen) ns (wlen 0 when not
   * dirty, or when that overflows int64): a span starting in it needs no
   * division and no call (one unsigned compare). */
  int64_t wlo;
  uint64_t wlen;
  int dirty;
  int used;      /* 0: a free slot (ufree); key is then USTATE_FREE */
  uint64_t pad_; /* to 64 bytes: an index is a shift */
} ustate_t;

typedef struct {
  int state; /* 0, K_GC_START, K_GC_END */
  uint64_t t;
  uint64_t count, total_ns, max_ns;
  int used_prev; /* cap usage: a previous span exists */
  uint64_t prev_end;
  uint64_t mut_ns, gc_ns, idle_ns; /* since the last totals(true) */
  /* productivity (el.cap_usage{on_productivity=}): running totals since
   * the last reset_productivity(), and the latest value of the current
   * aggregation window not yet handed to Lua */
  uint64_t pm, pg;   /* mutator, GC ns */
  uint64_t ppm, ppg; /* their values at pt */
  int64_t pt, pwin;
  int64_t plo;   /* while pdirty, pwin as [plo, plo + plen) ns, as */
  uint64_t plen; /* ustate_t.wlo, wlen (plen 0 when not pdirty) */
  int pdirty;
  uint32_t us_hint[CAT_OTHER + 1]; /* as thread_t.mut_us, for its GC, Idle
                                      and "other" series (by category) */
} cap_t;
_Static_assert(sizeof(ustate_t) == 64, "ustate_t is 64 bytes");

/* A reorder record: 16 bytes, so that the events held (up to a block of
 * each capability) take half the cache they did. sk = seq << 2 | kind - 1,
 * seq counting queued events modulo 2^30, compared wrap-safe: it breaks
 * ties of equal times across capabilities in arrival order as long as two
 * held events arrived fewer than 2^29 queued events apart (one held for
 * that long while half a billion others passed it would be misordered
 * against events of its own time only). A STOP_THREAD's status and info
 * wait in the queue's parallel array s, at its record's slot. */
typedef struct {
  uint64_t t;
  uint32_t thread;
  uint32_t sk;
} qrec_t;

typedef struct {
  uint32_t info;
  uint16_t status;
} qstop_t;

/* One capability's queue: a ring of records in (time, seq) order. */
typedef struct {
  qrec_t *v;           /* cap records, then s (q_grow) */
  qstop_t *s;          /* parallel to v (same slots): set for stops only */
  size_t head, n, cap; /* live: v[(head + i) & (cap - 1)], i < n */
  /* No live record is later: an event at or after it is appended without
   * a look at the tail (q_push); one before it takes q_push_slow. */
  uint64_t last_t;
} q_t;

typedef struct el__ana_s {
  q_t q[MAX_CAPS];     /* reorder queues, one per capability */
  size_t held;         /* events in all queues */
  uint32_t seq;        /* queued events, modulo 2^30 */
  uint64_t lo;         /* no held event is earlier (UINT64_MAX: none) */
  uint64_t released_t; /* latest time released so far */
  int max_q;           /* highest queue index used, -1 none */
  cap_t caps[MAX_CAPS];
  int max_cap;       /* highest cap index used, -1 none */
  thread_t *threads; /* flat table, owned */
  size_t nthreads, threads_cap;
  uint32_t *direct; /* id < DIRECT_IDS -> index + 1 (0: none) */
  size_t ndirect;
  el_map_t tmap;    /* larger ids -> index */
  int cb[TK_N][16]; /* on_span refs per tracker kind */
  int ncb[TK_N];
  unsigned made[TK_N]; /* trackers made, by kind (TK_THREADS, TK_GC, TK_CAPS) */
  unsigned feat;       /* F_*: what spans feed (el__ana_features) */
  /* Per-capability mode (el__ana_features): every output asked for is
   * per capability (el.cap_usage without on_span, no el.threads or
   * el.gc), so the events skip the reorder buffer and go through the
   * state machines as they arrive, each capability's in its time order
   * (docs/lua-api.md §6 "Ordering"). */
  int arrival;
  uint64_t unexpected; /* thread/GC sequences the spec warns about */
  /* capability usage metric in C (el.cap_usage{on_point=}) */
  int64_t uagg; /* aggregation window ns, 0 = every span */
  int64_t pagg; /* the same for on_productivity */
  ustate_t *us;
  size_t nus, us_cap; /* slots used or free */
  uint32_t *ufree;    /* free slots of us, reused first */
  size_t nufree, ufree_cap;
  size_t nusers, max_users; /* thread series live; their bound */
  size_t nfinished;         /* finished threads in the table */
  size_t keep_finished;     /* finished threads kept (KEEP_FINISHED) */
  el_map_t umap;            /* usage series key -> index in us */
  uint32_t *udirty;         /* indexes of states dirtied, in order */
  size_t nudirty, udirty_cap;
  /* Finished threads the last eviction kept beyond keep_finished because
   * they finished after el__ana_settled (per-capability mode): the next
   * eviction waits until as many more have finished. */
  size_t nfin_unsettled;
  /* Per-capability mode: the threads forgotten before they settled (past
   * MAX_UNSETTLED), id -> index in gone_v, their finish times; dropped
   * once the watermark passes them (threads_evict). */
  el_map_t gone;
  struct {
    uint64_t t;
    uint32_t id;
  } * gone_v;
  size_t ngone, gone_cap;
  /* Moves on whenever there may be room for thread series again (series
   * freed, max_users set, a new session): a thread_t.other_gen older than
   * it is stale. */
  uint32_t ugen;
  /* native spans (el.cap_usage{spans=}, el.threads{spans=}) */
  char *cap_names[2]; /* "<name> GC", "<name> Mutator"; NULL = off */
  char *th_names[2];  /* "<name> Running", "<name> Blocked" */
  uint8_t cap_trace[MAX_CAPS][16];
  uint8_t cap_has_trace[MAX_CAPS];
  size_t ntrace;      /* threads holding a trace id */
  unsigned nspans[2]; /* spans since the last flush: caps, threads */
  /* The store's count of traces no exporter takes
   * (el_tm_store_untaken_counter) for untaken_st, known once it is
   * sealed: a native span is then counted there without a call. */
  uint64_t *untaken;
  const el_tm_store_t *untaken_st;
} ana_t;

/* ana_reorder.c */

/* Free the reorder queues' memory. */
void el__ana_queues_free(ana_t *a);

/* ana_state.c */

/* The thread with id, created (zeroed, state TS_NEW) when create is set
 * and it is absent. NULL when absent, or when out of memory. The pointer
 * is valid until the next thread is created or the table is compacted. */
thread_t *el__ana_thread(ana_t *a, uint32_t id, int create);
/* Rebuild the thread index after the table was reordered or compacted. */
void el__ana_threads_reindex(ana_t *a);
/* One event in time order through the state machines (§5.2.3):
 * el__ana_process_in (below) as a function. */
void el__ana_process(el_host_t *h, const rec_t *r);
/* The state machines' parts that el__ana_process_in calls: th's
 * STOP_THREAD and RUN_THREAD r (latest: r is the thread's latest event by
 * time), after the first/last bookkeeping; r for a thread not found by
 * direct index (looked up in the map, or created: then as
 * el__ana_thread_event); GC_START and GC_END. */
void el__ana_thread_stop(el_host_t *h, thread_t *th, const rec_t *r,
                         int latest);
void el__ana_thread_run(el_host_t *h, thread_t *th, const rec_t *r, int latest);
void el__ana_thread_lookup(el_host_t *h, const rec_t *r);
/* The time (ns since RTS start) up to which every capability's events
 * have been through the state machines: in the per-capability mode
 * (ana_t.arrival) the host's watermark, UINT64_MAX when no capability is
 * waited for; UINT64_MAX in time order (what is released is settled). A
 * thread that finished after it may still have earlier runs to come on
 * another capability, so its usage series and table entry stay. */
uint64_t el__ana_settled(el_host_t *h);
void el__ana_gc(el_host_t *h, const rec_t *r);

/* RUN_THREAD and STOP_THREAD r of thread th. Each capability's events come
 * in time order, but a capability's may come late behind the others'
 * (live, past the horizon): runs pair with stops on the same capability,
 * so run counts and running time do not depend on the order across
 * capabilities, and the thread's state is that of its latest event by
 * time. Inline, so that the common case (an event that only moves the
 * thread's first/last times, or one of a finished thread) needs no call
 * in the reorder buffer's loops; the rest are tail calls. */
static inline __attribute__((always_inline)) void el__ana_thread_event(
    el_host_t *h, thread_t *th, const rec_t *r) {
  int latest = r->t >= th->last_t;            /* last_t 0 without an event */
  if (r->t < th->first_t) th->first_t = r->t; /* UINT64_MAX: none */
  th->has_first = 1;
  if (latest) th->last_t = r->t;
  if (th->state == TS_FINISHED && r->t >= th->finished_t) return;
  if (r->kind == K_STOP)
    el__ana_thread_stop(h, th, r, latest);
  else
    el__ana_thread_run(h, th, r, latest);
}

/* One event r in time order through the state machines (§5.2.3), inline:
 * a known thread of a small id is found without a call. */
static inline __attribute__((always_inline)) void el__ana_process_in(
    el_host_t *h, const rec_t *r) {
  ana_t *a = h->ana;
  if ((int)r->cap > a->max_cap) a->max_cap = r->cap;
  if (r->kind != K_RUN && r->kind != K_STOP) {
    el__ana_gc(h, r);
    return;
  }
  uint32_t id = r->thread;
  if (id < a->ndirect && a->direct[id])
    el__ana_thread_event(h, &a->threads[a->direct[id] - 1], r);
  else
    el__ana_thread_lookup(h, r);
}

/* ana_emit.c */

/* The running span of th from start to the STOP_THREAD stop that ends
 * it, on stop->cap (< MAX_CAPS, as every event the analyses take): the
 * capability usage (its Idle gap first), then el.threads' on_span and
 * native span when asked for (F_THREAD_OUT). The thread's own totals are
 * the caller's (ana_state.c run_span, which takes the common case inline
 * first: el__ana_run_span_fast and the spans counted). */
void el__ana_run_span(el_host_t *h, thread_t *th, const rec_t *stop,
                      uint64_t start);
/* (el__ana_run_span_fast, its common case inline, is below.) */
/* el.threads' on_span and native span of a thread-state span of th from
 * start to end: running (ended by stop, on stop->cap) or blocked (begun by
 * stop: its status and info name why). Only with F_THREAD_OUT. */
void el__ana_thread_out(el_host_t *h, thread_t *th, int running,
                        const rec_t *stop, uint64_t start, uint64_t end);
/* A native span of source which (0 caps, 1 threads) counted inline in
 * the common case with no exporter taking traces: the store sealed with
 * none taking them (ana_t.untaken_st) and no flush due. The span is then
 * counted into the store's counter of untaken traces, as ana_emit.c's
 * native_untaken counts it: 1. Else 0, nothing changed: the caller takes
 * the general path (which flushes the store every SPANS_PER_FLUSH). */
static inline int el__ana_native_counted(el_host_t *h, int which) {
  ana_t *a = h->ana;
  if (!h->store || h->store != a->untaken_st ||
      a->nspans[which] + 1 >= SPANS_PER_FLUSH)
    return 0;
  ++*a->untaken;
  a->nspans[which]++;
  return 1;
}

/* el__ana_thread_out's common case with every processor on and no
 * exporter taking traces, inline: el.threads' native span only (no
 * on_span), counted by el__ana_native_counted. 1 when done so, else 0
 * (nothing changed: the caller calls el__ana_thread_out). */
static inline int el__ana_thread_out_counted(el_host_t *h) {
  const ana_t *a = h->ana;
  return a->th_names[0] && !a->ncb[TK_THREADS] && el__ana_native_counted(h, 1);
}
/* el.cap_usage's native Mutator span of thread on cap from start to end
 * (ns since RTS start), when a->cap_names is set: counted when no
 * exporter takes traces, else built. */
void el__ana_cap_mut_span(el_host_t *h, unsigned cap, uint32_t thread,
                          uint64_t start, uint64_t end);
/* A GC span of capability cap: usage, on_span of el.gc, native span. */
void el__ana_gc_span(el_host_t *h, unsigned cap, uint64_t start, uint64_t end);
/* on_productivity(cap, t, mutator_ns, gc_ns). */
void el__ana_prod_call(el_host_t *h, unsigned cap, int64_t t, uint64_t m,
                       uint64_t g);
/* on_point(index, t, value, cap, category, user) for usage series i. */
void el__ana_upoint_call(el_host_t *h, size_t i, int64_t t, int64_t v);
/* Slot j (1 + it in hint; 0 = none) holds the live series key (a free
 * slot's key is USTATE_FREE, no live key). */
static inline int el__ana_hint_holds(const ana_t *a, uint32_t hint,
                                     uint64_t key) {
  size_t j = (size_t)hint - 1; /* SIZE_MAX without a hint */
  return j < a->nus && a->us[j].key == key;
}

/* s in [lo, lo + len) (int64 s, lo; len 0: never), in one compare. */
static inline int el__ana_in_window(int64_t s, int64_t lo, uint64_t len) {
  return (uint64_t)s - (uint64_t)lo < len;
}

/* The usage series of hint (1 + its index; 0 = none) when it holds key
 * and s is in its dirty window, else NULL. */
static inline ustate_t *el__ana_series_fast(const ana_t *a, uint32_t hint,
                                            uint64_t key, int64_t s) {
  size_t j = (size_t)hint - 1; /* SIZE_MAX without a hint */
  if (j >= a->nus) return NULL;
  ustate_t *u = &a->us[j];
  return u->key == key && el__ana_in_window(s, u->wlo, u->wlen) ? u : NULL;
}

/* el__ana_series_fast as a call, for el__ana_run_span_fast's outline
 * form. */
static __attribute__((noinline, unused)) ustate_t *el__ana_series_fast_call(
    const ana_t *a, uint32_t hint, uint64_t key, int64_t s) {
  return el__ana_series_fast(a, hint, key, s);
}

/* The usage part (ana_emit.c cap_usage_span) of a thread's running span
 * of start to end on cap, inline and without a call, when the usage
 * series and productivity are fed and el.cap_usage's on_span is not
 * (F_POINTS and F_PROD set, F_CAPS_CB clear: the caller checks), every
 * series the span moves is found through its hint and the span stays in
 * its dirty aggregation window, and so does the capability's
 * productivity. Checked before anything is changed: 0 (and nothing done)
 * when any of that does not hold. Native spans are the caller's. With
 * outline, the series are looked up by a call (fewer instructions in the
 * direct path's loop, which keeps more values in registers). */
static inline __attribute__((always_inline)) int el__ana_run_span_fast(
    el_host_t *h, thread_t *th, unsigned cap, uint64_t start, uint64_t end,
    const int outline) {
  ustate_t *(*const series)(const ana_t *, uint32_t, uint64_t, int64_t) =
      outline ? el__ana_series_fast_call : el__ana_series_fast;
  ana_t *a = h->ana;
  cap_t *restrict c = &a->caps[cap];
  uint64_t key = (uint64_t)cap << 34, from = c->prev_end;
  ustate_t *restrict ui = NULL, *restrict um;
  /* each span at its end (ana_emit.c upoint_span) */
  if (c->used_prev && from < start) { /* its Idle gap, in the Idle series */
    ui = series(a, c->us_hint[CAT_IDLE], key | (uint64_t)CAT_IDLE << 32,
                (int64_t)start);
    if (!ui) return 0;
  }
  int other = 0; /* the Mutator time, as ustate_mut */
  um = series(a, th->mut_us, key | th->id, (int64_t)end);
  if (!um) {
    if (th->other_gen != a->ugen + 1 || th->other_cap != cap ||
        th->other_gen == 0 || el__ana_hint_holds(a, th->mut_us, key | th->id))
      return 0;
    um = series(a, c->us_hint[CAT_OTHER], key | (uint64_t)CAT_OTHER << 32,
                (int64_t)end);
    if (!um) return 0;
    other = 1;
  }
  uint64_t d = end > start ? end - start : 0, pm = c->pm + d;
  if (pm + c->pg == 0 || !el__ana_in_window((int64_t)end, c->plo, c->plen))
    return 0;
  if (ui) {
    c->idle_ns += start - from;
    ui->total += (int64_t)(start - from);
    ui->t = (int64_t)start;
  }
  h->st.usage_other += (uint64_t)other;
  c->mut_ns += d;
  c->used_prev = 1;
  c->prev_end = end;
  um->total += (int64_t)d;
  um->t = (int64_t)end;
  c->pm = c->ppm = pm;
  c->ppg = c->pg;
  c->pt = (int64_t)end;
  return 1;
}

/* Rebuild the usage series index (after series were freed). */
int el__ana_umap_rebuild(ana_t *a);
/* Set a->feat from the trackers made so far (after each one). */
void el__ana_features(ana_t *a);
/* There may be room for thread series again (series freed, max_users
 * set): every thread's other_gen is stale from now. */
void el__ana_users_changed(ana_t *a);

#endif /* EL_ANA_INTERNAL_H */
