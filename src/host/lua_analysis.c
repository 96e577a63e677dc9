/* lua_analysis.c: C helpers for the high-volume analyses, so scripts need
 * not see every RUN_THREAD/STOP_THREAD: per-thread state machine, GC spans
 * per capability, and capability usage (Mutator/GC/Idle).
 * Implements spec/reference-behaviour.md §5.2.3 (thread-state spans, GC
 * spans, capability usage) on events sorted as §5.3.1 requires, with a
 * reorder buffer released by a per-capability watermark (each capability's
 * blocks arrive in time order: spec/eventlog-format.md §3.5, §3.6).
 * docs/lua-api.md §6. */
#include <stdlib.h>
#include <string.h>

#include "host_internal.h"

#define TRACKER_MT "el.Tracker"
#define MAX_CAPS 1024
#define MAX_HELD (4u << 20)   /* events held before forced release */
#define NSTATUS 24            /* STOP_THREAD status codes tracked */

enum { K_RUN = 1, K_STOP, K_GC_START, K_GC_END };
enum { TK_THREADS = 0, TK_GC, TK_CAPS, TK_POINTS, TK_PROD, TK_N };
#define SPANS_PER_FLUSH 8192  /* native spans between store flushes */
#define MAX_TRACE_IDS 65536   /* per-thread trace ids kept at most */
/* Finished threads kept in the table (el.threads{keep_finished=}); the
 * oldest finished beyond it are forgotten, counted in threads_evicted. */
#define KEEP_FINISHED 1000
/* Thread series of the capability usage metric (el.cap_usage{max_users=});
 * beyond it a thread's mutator time goes to the series of user "other". */
#define MAX_USERS 1000
enum { TS_NEW = 0, TS_RUNNING, TS_BLOCKED, TS_FINISHED };

typedef struct {
  uint64_t t, seq;
  uint32_t thread, info;
  uint16_t cap, status;
  uint8_t kind;
} rec_t;

typedef struct {
  uint32_t id;
  int state;                /* TS_* */
  int prev;                 /* 0, K_RUN, K_STOP: last accepted event */
  uint64_t prev_t;
  uint16_t prev_cap, prev_status;
  uint32_t prev_info;
  int has_status;
  char *label;
  uint64_t created_t, first_t, last_t, finished_t;
  int has_created, has_first, has_finished;
  uint64_t running_ns, blocked_ns, runs;
  uint64_t blocked[NSTATUS + 1];  /* by status; last slot = others */
  uint16_t cap;
  int has_trace;            /* native thread spans: trace id given */
  uint8_t trace[16];
} thread_t;

/* One (capability, category, user) series of the capability usage metric
 * (el.cap_usage{on_point=}): running total and latest span start. */
typedef struct {
  uint64_t key;             /* cap << 34 | category << 32 | thread */
  int64_t total, t, win;
  int dirty;
  int used; /* 0: a free slot (ufree) */
} ustate_t;

typedef struct {
  int state;                /* 0, K_GC_START, K_GC_END */
  uint64_t t;
  uint64_t count, total_ns, max_ns;
  int used_prev;            /* cap usage: a previous span exists */
  uint64_t prev_end;
  uint64_t mut_ns, gc_ns, idle_ns;  /* since the last totals(true) */
  /* productivity (el.cap_usage{on_productivity=}): running totals since
   * the last reset_productivity(), and the latest value of the current
   * aggregation window not yet handed to Lua */
  uint64_t pm, pg;   /* mutator, GC ns */
  uint64_t ppm, ppg; /* their values at pt */
  int64_t pt, pwin;
  int pdirty;
} cap_t;

typedef struct {
  rec_t *v;
  size_t head, n, cap;      /* live entries are v[head..n) */
} q_t;

typedef struct el__ana_s {
  q_t q[MAX_CAPS];          /* reorder queues, one per capability */
  size_t held;              /* events in all queues */
  uint64_t seq;
  uint64_t released_t;      /* latest time released so far */
  int max_q;                /* highest queue index used, -1 none */
  cap_t caps[MAX_CAPS];
  int max_cap;              /* highest cap index used, -1 none */
  thread_t **threads;       /* owned */
  size_t nthreads, threads_cap;
  uint32_t *hkeys;          /* open addressing: thread id -> index+1 */
  uint32_t *hvals;
  size_t hcap;
  int cb[TK_N][16];         /* on_span refs per tracker kind */
  int ncb[TK_N];
  uint64_t unexpected;      /* thread/GC sequences the spec warns about */
  /* capability usage metric in C (el.cap_usage{on_point=}) */
  int64_t uagg;             /* aggregation window ns, 0 = every span */
  int64_t pagg;             /* the same for on_productivity */
  ustate_t *us;
  size_t nus, us_cap; /* slots used or free */
  uint32_t *ufree;    /* free slots of us, reused first */
  size_t nufree, ufree_cap;
  size_t nusers, max_users; /* thread series live; their bound */
  size_t nfinished;         /* finished threads in the table */
  size_t keep_finished;     /* finished threads kept (KEEP_FINISHED) */
  uint64_t *ukeys;          /* open addressing: key -> index+1 */
  uint32_t *uvals;
  size_t ucap;
  uint32_t *udirty;         /* indexes of states dirtied, in order */
  size_t nudirty, udirty_cap;
  /* native spans (el.cap_usage{spans=}, el.threads{spans=}) */
  char *cap_names[2];       /* "<name> GC", "<name> Mutator"; NULL = off */
  char *th_names[2];        /* "<name> Running", "<name> Blocked" */
  uint8_t cap_trace[MAX_CAPS][16];
  uint8_t cap_has_trace[MAX_CAPS];
  size_t ntrace;            /* threads holding a trace id */
  unsigned nspans[2];       /* spans since the last flush: caps, threads */
} ana_t;

/* {====== reorder buffer ======} */

static int rec_before(const rec_t *a, const rec_t *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Per-capability FIFO queues: each capability's events arrive in time
 * order (its blocks are written in order), so a k-way merge of the queue
 * heads gives time order. An event earlier than its queue's tail (GC_END
 * carries an explicit, earlier time) is moved back into place. */
static int q_push(ana_t *a, const rec_t *r) {
  q_t *q = &a->q[r->cap];
  if ((int)r->cap > a->max_q) a->max_q = r->cap;
  if (q->n == q->cap) {
    if (q->head > 0) {  /* reuse the consumed front */
      memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof *q->v);
      q->n -= q->head;
      q->head = 0;
    } else {
      size_t ncap = q->cap ? q->cap * 2 : 1024;
      rec_t *nv = el_realloc(q->v, ncap * sizeof *nv);
      if (!nv) return EL_ENOMEM;
      q->v = nv;
      q->cap = ncap;
    }
  }
  size_t i = q->n++;
  while (i > q->head && rec_before(r, &q->v[i - 1])) {
    q->v[i] = q->v[i - 1];
    i--;
  }
  q->v[i] = *r;
  a->held++;
  return 0;
}

/* The capability whose queue head comes first, or -1 if all are empty. */
static int q_first(const ana_t *a) {
  int best = -1;
  for (int c = 0; c <= a->max_q; c++) {
    const q_t *q = &a->q[c];
    if (q->head == q->n) continue;
    if (best < 0 || rec_before(&q->v[q->head],
                               &a->q[best].v[a->q[best].head]))
      best = c;
  }
  return best;
}

static rec_t q_pop(ana_t *a, int c) {
  q_t *q = &a->q[c];
  rec_t r = q->v[q->head++];
  if (q->head == q->n) q->head = q->n = 0;
  a->held--;
  return r;
}

/* {====== threads ======} */

static thread_t *thread_get(ana_t *a, uint32_t id, int create) {
  if (a->hcap) {
    size_t m = a->hcap - 1, i = (id * 2654435761u) & m;
    while (a->hvals[i]) {
      if (a->hkeys[i] == id) return a->threads[a->hvals[i] - 1];
      i = (i + 1) & m;
    }
  }
  if (!create) return NULL;
  if ((a->nthreads + 1) * 2 > a->hcap) {  /* grow the index */
    size_t ncap = a->hcap ? a->hcap * 2 : 256;
    uint32_t *nk = el_calloc(ncap, sizeof *nk), *nv = el_calloc(ncap, 4);
    if (!nk || !nv) {
      el_free(nk);
      el_free(nv);
      return NULL;
    }
    for (size_t j = 0; j < a->nthreads; j++) {
      uint32_t k = a->threads[j]->id;
      size_t i = (k * 2654435761u) & (ncap - 1);
      while (nv[i]) i = (i + 1) & (ncap - 1);
      nk[i] = k;
      nv[i] = (uint32_t)j + 1;
    }
    el_free(a->hkeys);
    el_free(a->hvals);
    a->hkeys = nk;
    a->hvals = nv;
    a->hcap = ncap;
  }
  if (a->nthreads == a->threads_cap) {
    size_t ncap = a->threads_cap ? a->threads_cap * 2 : 64;
    thread_t **nv = el_realloc(a->threads, ncap * sizeof *nv);
    if (!nv) return NULL;
    a->threads = nv;
    a->threads_cap = ncap;
  }
  thread_t *t = el_calloc(1, sizeof *t);
  if (!t) return NULL;
  t->id = id;
  a->threads[a->nthreads++] = t;
  size_t m = a->hcap - 1, i = (id * 2654435761u) & m;
  while (a->hvals[i]) i = (i + 1) & m;
  a->hkeys[i] = id;
  a->hvals[i] = (uint32_t)a->nthreads;
  return t;
}

/* Rebuild the thread index from a->threads (after threads were removed). */
static int threads_reindex(ana_t *a) {
  if (!a->hcap) return 0;
  memset(a->hvals, 0, a->hcap * sizeof *a->hvals);
  size_t m = a->hcap - 1;
  for (size_t j = 0; j < a->nthreads; j++) {
    uint32_t k = a->threads[j]->id;
    size_t i = (k * 2654435761u) & m;
    while (a->hvals[i]) i = (i + 1) & m;
    a->hkeys[i] = k;
    a->hvals[i] = (uint32_t)j + 1;
  }
  return 0;
}

static void thread_free(ana_t *a, thread_t *t) {
  if (t->has_trace && a->ntrace) a->ntrace--;
  el_free(t->label);
  el_free(t);
}

static int cmp_finished(const void *x, const void *y) {
  const thread_t *a = *(thread_t *const *)x, *b = *(thread_t *const *)y;
  if (a->finished_t != b->finished_t)
    return a->finished_t < b->finished_t ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* Forget the finished threads that finished longest ago, keeping
 * keep_finished of them; counted in threads_evicted. Runs when twice as
 * many have finished, so its cost per thread is constant. */
static void threads_evict(el_host_t *h) {
  ana_t *a = h->ana;
  thread_t **fin = el_malloc(a->nfinished * sizeof *fin);
  if (!fin) return; /* try again at the next finished thread */
  size_t n = 0;
  for (size_t j = 0; j < a->nthreads; j++)
    if (a->threads[j]->state == TS_FINISHED && n < a->nfinished)
      fin[n++] = a->threads[j];
  size_t drop = n > a->keep_finished ? n - a->keep_finished : 0;
  if (drop) qsort(fin, n, sizeof *fin, cmp_finished);
  for (size_t k = 0; k < drop; k++) fin[k]->state = -1; /* marked */
  size_t w = 0;
  for (size_t j = 0; j < a->nthreads; j++) {
    thread_t *t = a->threads[j];
    if (t->state == -1)
      thread_free(a, t);
    else
      a->threads[w++] = t;
  }
  a->nthreads = w;
  a->nfinished = n - drop;
  h->st.threads_evicted += drop;
  el_free(fin);
  threads_reindex(a);
}

/* {====== span outputs ======} */

static void cap_usage_span(el_host_t *h, unsigned cap, const char *cat,
                           uint32_t thread, uint64_t start, uint64_t end);
static void prod_span(el_host_t *h, unsigned cap, int gc, uint64_t start,
                      uint64_t d);

/* Arguments of a span callback, built in C and pushed inside a protected
 * call (pushing strings allocates). */
enum { A_NIL = 0, A_INT, A_STR, A_DEC };  /* A_DEC: integer as decimal */
typedef struct {
  int kind, n;
  struct {
    int type;
    lua_Integer i;
    const char *s;
  } v[8];
} sargs_t;

static void arg_int(sargs_t *a, lua_Integer i) {
  a->v[a->n].type = A_INT;
  a->v[a->n++].i = i;
}
static void arg_str(sargs_t *a, const char *s) {
  a->v[a->n].type = A_STR;
  a->v[a->n++].s = s;
}
static void arg_nil(sargs_t *a) { a->v[a->n++].type = A_NIL; }
static void arg_dec(sargs_t *a, lua_Integer i) {
  a->v[a->n].type = A_DEC;
  a->v[a->n++].i = i;
}

/* [-2, +0, e] Push the span arguments, call every on_span of the kind
 * (each call protected). */
static int spans_tramp(lua_State *L) {
  el_host_t *h = lua_touserdata(L, 1);
  const sargs_t *a = lua_touserdata(L, 2);
  ana_t *an = h->ana;
  int base = lua_gettop(L);
  for (int j = 0; j < a->n; j++) {
    switch (a->v[j].type) {
    case A_INT: lua_pushinteger(L, a->v[j].i); break;
    case A_STR: lua_pushstring(L, a->v[j].s); break;
    case A_DEC: lua_pushfstring(L, "%I", a->v[j].i); break;
    default: lua_pushnil(L);
    }
  }
  for (int i = 0; i < an->ncb[a->kind] && !h->stop; i++) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, an->cb[a->kind][i]);
    for (int j = 1; j <= a->n; j++) lua_pushvalue(L, base + j);
    el__host_pcall(h, a->n, &h->hook_handler, "on_span");
  }
  return 0;
}

static void call_spans(el_host_t *h, const sargs_t *a) {
  lua_State *L = h->L;
  lua_pushcfunction(L, spans_tramp);
  lua_pushlightuserdata(L, h);
  lua_pushlightuserdata(L, (void *)a);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    h->st.handler_errors++;
    el_log(EL_LOG_ERROR, "on_span: %s", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
}

/* {====== native spans and metric points ======} */

/* Decimal digits of v into buf (>= 21 bytes); returns the length. */
static size_t fmt_dec(char *buf, uint64_t v) {
  char tmp[24];
  size_t n = 0, len = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) buf[len++] = tmp[--n];
  buf[len] = '\0';
  return len;
}

/* Emit one span (kind internal, status ok, random span id) straight into
 * the store, flushing it every SPANS_PER_FLUSH spans of the same source
 * (which = 0 caps, 1 threads): the memory bound of capability.lua. */
static void native_span(el_host_t *h, int which, const char *name,
                        const uint8_t *trace, uint64_t start, uint64_t end,
                        const el_tm_attr_t *attrs, size_t nattrs) {
  if (!h->store) return;
  ana_t *a = h->ana;
  el_tm_span_t sp;
  memset(&sp, 0, sizeof sp);
  memcpy(sp.trace_id, trace, 16);
  el_tm_random_id(sp.span_id, 8);
  sp.name = name;
  sp.kind = EL_TM_SPAN_INTERNAL;
  sp.status_code = 1;
  sp.start_unix_ns = el__host_unix(h, (el_rts_ns_t)start);
  sp.end_unix_ns = el__host_unix(h, (el_rts_ns_t)end);
  sp.attrs = attrs;
  sp.nattrs = nattrs;
  el_tm_span(h->store, &sp);  /* EL_ENOMEM: dropped and counted there */
  if (++a->nspans[which] >= SPANS_PER_FLUSH) {
    a->nspans[which] = 0;
    el_tm_store_flush(h->store);
  }
}

/* Thread-state span of el.threads{spans=}: trace id per thread, attrs
 * thread (decimal string) and status (blocked: why it stopped; running:
 * why the run ended, docs/differences.md), plus capability (running). */
static void thread_native_span(el_host_t *h, thread_t *th, int running,
                               uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  if (!th->has_trace) {
    if (a->ntrace >= MAX_TRACE_IDS) {  /* forget old threads' ids */
      for (size_t i = 0; i < a->nthreads; i++) a->threads[i]->has_trace = 0;
      a->ntrace = 0;
    }
    a->ntrace++;
    el_tm_random_id(th->trace, 16);
    th->has_trace = 1;
  }
  char dec[24], st[64];
  el_tm_attr_t at[3];
  el_tm_attr_t *tattr = &at[1];
  tattr->key = "thread";
  tattr->type = EL_TM_STR;
  tattr->v.s.p = dec;
  tattr->v.s.len = fmt_dec(dec, th->id);
  at[0].key = "status";
  at[0].type = EL_TM_STR;
  at[0].v.s.p = st;
  at[0].v.s.len =
      el_ev_stop_status_name(th->prev_status, th->prev_info, st, sizeof st);
  if (running) {
    at[2].key = "capability";
    at[2].type = EL_TM_INT;
    at[2].v.i = th->prev_cap;
  }
  native_span(h, 1, a->th_names[running ? 0 : 1], th->trace, start, end, at,
              running ? 3 : 2);
}

/* Capability usage span of el.cap_usage{spans=} (not Idle). */
static void cap_native_span(el_host_t *h, unsigned cap, int gc,
                            uint32_t thread, uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  if (!a->cap_has_trace[cap]) {
    el_tm_random_id(a->cap_trace[cap], 16);
    a->cap_has_trace[cap] = 1;
  }
  char dec[24];
  el_tm_attr_t at[2];
  at[0].key = "capability";
  at[0].type = EL_TM_INT;
  at[0].v.i = cap;
  at[1].key = "user";
  at[1].type = EL_TM_STR;
  if (gc) {
    at[1].v.s.p = "GC";
    at[1].v.s.len = 2;
  } else {
    at[1].v.s.p = dec;
    at[1].v.s.len = fmt_dec(dec, thread);
  }
  native_span(h, 0, a->cap_names[gc ? 0 : 1], a->cap_trace[cap], start, end,
              at, 2);
}

/* Usage series categories; CAT_OTHER is Mutator time of the threads past
 * max_users, one series per capability with user "other". */
enum { CAT_MUT = 0, CAT_GC, CAT_IDLE, CAT_OTHER };
static const char *const cat_names[] = {"Mutator", "GC", "Idle", "Mutator"};

/* Call on_point(idx, t, v, cap, category, user) for state i. */
static void upoint_call(el_host_t *h, size_t i, int64_t t, int64_t v) {
  ana_t *a = h->ana;
  const ustate_t *u = &a->us[i];
  int cat = (int)(u->key >> 32 & 3);
  sargs_t g = {.kind = TK_POINTS};
  arg_int(&g, (lua_Integer)i + 1);
  arg_int(&g, t);
  arg_int(&g, v);
  arg_int(&g, (lua_Integer)(u->key >> 34));
  arg_str(&g, cat_names[cat]);
  if (cat == CAT_GC)
    arg_str(&g, "GC");
  else if (cat == CAT_MUT)
    arg_dec(&g, (lua_Integer)(u->key & 0xffffffffu));
  else if (cat == CAT_OTHER)
    arg_str(&g, "other");
  else
    arg_nil(&g);
  call_spans(h, &g);
}

static size_t ukey_slot(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9e3779b97f4a7c15u) >> 40) & (cap - 1);
}

/* Rebuild the key index of the usage series with ncap slots (a power of
 * two above twice the used states); 0 or -1 when out of memory. Freed
 * states leave it this way (at most once per export). */
static int ustate_rehash(ana_t *a, size_t ncap) {
  uint64_t *nk = el_calloc(ncap, sizeof *nk);
  uint32_t *nv = el_calloc(ncap, sizeof *nv);
  if (!nk || !nv) {
    el_free(nk);
    el_free(nv);
    return -1;
  }
  for (size_t j = 0; j < a->nus; j++) {
    if (!a->us[j].used) continue;
    size_t i = ukey_slot(a->us[j].key, ncap);
    while (nv[i]) i = (i + 1) & (ncap - 1);
    nk[i] = a->us[j].key;
    nv[i] = (uint32_t)j + 1;
  }
  el_free(a->ukeys);
  el_free(a->uvals);
  a->ukeys = nk;
  a->uvals = nv;
  a->ucap = ncap;
  return 0;
}

/* The state of key, or -1 when there is none. */
static long ustate_find(const ana_t *a, uint64_t key) {
  if (!a->ucap) return -1;
  size_t m = a->ucap - 1, i = ukey_slot(key, a->ucap);
  while (a->uvals[i]) {
    const ustate_t *u = &a->us[a->uvals[i] - 1];
    /* an entry of a freed state may stay when a rehash failed */
    if (a->ukeys[i] == key && u->used && u->key == key)
      return (long)a->uvals[i] - 1;
    i = (i + 1) & m;
  }
  return -1;
}

/* A new state for key (not present), in a free slot if there is one; -1
 * when out of memory. */
static long ustate_add(ana_t *a, uint64_t key) {
  if ((a->nus + 1) * 2 > a->ucap &&
      ustate_rehash(a, a->ucap ? a->ucap * 2 : 64) < 0)
    return -1;
  size_t j;
  if (a->nufree) {
    j = a->ufree[--a->nufree];
  } else {
    if (a->nus == a->us_cap) {
      size_t ncap = a->us_cap ? a->us_cap * 2 : 32;
      ustate_t *nv = el_realloc(a->us, ncap * sizeof *nv);
      if (!nv) return -1;
      a->us = nv;
      a->us_cap = ncap;
    }
    j = a->nus++;
  }
  ustate_t *u = &a->us[j];
  memset(u, 0, sizeof *u);
  u->key = key;
  u->win = -1;
  u->used = 1;
  size_t m = a->ucap - 1, i = ukey_slot(key, a->ucap);
  while (a->uvals[i]) i = (i + 1) & m;
  a->ukeys[i] = key;
  a->uvals[i] = (uint32_t)j + 1;
  if ((key >> 32 & 3) == CAT_MUT) a->nusers++;
  return (long)j;
}

/* One usage span into the metric state (the algorithm capability.lua used
 * per span): a point goes to Lua only when a series moves to another
 * aggregation window, and for every changed series at flush_points(). */
static void upoint_span(el_host_t *h, unsigned cap, int cat, uint32_t thread,
                        uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  uint64_t key = (uint64_t)cap << 34 | (uint64_t)cat << 32 |
                 (cat == CAT_MUT ? thread : 0);
  long i = ustate_find(a, key);
  if (i < 0 && cat == CAT_MUT && a->nusers >= a->max_users) {
    h->st.usage_other++; /* past max_users: credited to "other" */
    key = (uint64_t)cap << 34 | (uint64_t)CAT_OTHER << 32;
    i = ustate_find(a, key);
  }
  if (i < 0) i = ustate_add(a, key);
  if (i < 0) {
    h->st.helper_dropped++;  /* out of memory: counted, update dropped */
    return;
  }
  ustate_t *u = &a->us[i];
  int64_t s = (int64_t)start, d = end > start ? (int64_t)(end - start) : 0;
  u->total += d;
  if (a->uagg == 0) {
    u->t = s;
    upoint_call(h, (size_t)i, s, a->us[i].total);
    return;
  }
  int64_t w = s / a->uagg;
  if (s < 0 && s % a->uagg) w--;  /* floor division, as Lua's // */
  if (u->dirty && w != u->win) {
    int64_t t0 = u->t, v0 = u->total - d;
    u->dirty = 0;
    upoint_call(h, (size_t)i, t0, v0);
    u = &a->us[i];
  }
  u->t = s;
  u->win = w;
  if (!u->dirty) {
    if (a->nudirty == a->udirty_cap) {
      size_t ncap = a->udirty_cap ? a->udirty_cap * 2 : 64;
      uint32_t *nv = el_realloc(a->udirty, ncap * sizeof *nv);
      if (!nv) {
        h->st.helper_dropped++;
        return;
      }
      a->udirty = nv;
      a->udirty_cap = ncap;
    }
    u->dirty = 1;
    a->udirty[a->nudirty++] = (uint32_t)i;
  }
}

static void thread_span(el_host_t *h, thread_t *th, int running,
                        uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  uint64_t d = end > start ? end - start : 0;
  if (running) {
    th->running_ns += d;
    th->runs++;
    cap_usage_span(h, th->prev_cap, "Mutator", th->id, start, end);
  } else {
    th->blocked_ns += d;
    th->blocked[th->prev_status < NSTATUS ? th->prev_status : NSTATUS] += d;
  }
  if (a->th_names[0]) thread_native_span(h, th, running, start, end);
  if (!a->ncb[TK_THREADS]) return;
  sargs_t g = {.kind = TK_THREADS};
  arg_int(&g, th->id);
  arg_str(&g, running ? "running" : "blocked");
  /* running: the stop that ended the run; blocked: the one that began it */
  arg_int(&g, th->prev_status);
  arg_int(&g, th->prev_cap);
  arg_int(&g, (lua_Integer)start);
  arg_int(&g, (lua_Integer)end);
  arg_int(&g, th->prev_info);
  call_spans(h, &g);
}

static void cap_usage_span(el_host_t *h, unsigned cap, const char *cat,
                           uint32_t thread, uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  if (cap >= MAX_CAPS) return;
  cap_t *c = &a->caps[cap];
  if ((int)cap > a->max_cap) a->max_cap = (int)cap;
  int gc = cat[0] == 'G';
  if (c->used_prev && c->prev_end < start) {
    c->idle_ns += start - c->prev_end;
    if (a->ncb[TK_POINTS])
      upoint_span(h, cap, CAT_IDLE, 0, c->prev_end, start);
    if (a->ncb[TK_CAPS]) {
      sargs_t g = {.kind = TK_CAPS};
      arg_int(&g, cap);
      arg_str(&g, "Idle");
      arg_nil(&g);
      arg_int(&g, (lua_Integer)c->prev_end);
      arg_int(&g, (lua_Integer)start);
      call_spans(h, &g);
    }
  }
  uint64_t d = end > start ? end - start : 0;
  if (cat[0] == 'G')
    c->gc_ns += d;
  else
    c->mut_ns += d;
  c->used_prev = 1;
  c->prev_end = end;
  if (a->ncb[TK_POINTS])
    upoint_span(h, cap, gc ? CAT_GC : CAT_MUT, thread, start, end);
  if (a->ncb[TK_PROD]) prod_span(h, cap, gc, start, d);
  if (a->cap_names[0]) cap_native_span(h, cap, gc, thread, start, end);
  if (!a->ncb[TK_CAPS]) return;
  sargs_t g = {.kind = TK_CAPS};
  arg_int(&g, cap);
  arg_str(&g, cat);
  if (cat[0] == 'G')
    arg_str(&g, "GC");
  else
    arg_dec(&g, thread);
  arg_int(&g, (lua_Integer)start);
  arg_int(&g, (lua_Integer)end);
  call_spans(h, &g);
}

/* Call on_productivity(cap, t, mutator_ns, gc_ns). */
static void prod_call(el_host_t *h, unsigned cap, int64_t t, uint64_t m,
                      uint64_t g) {
  sargs_t a = {.kind = TK_PROD};
  arg_int(&a, cap);
  arg_int(&a, t);
  arg_int(&a, (lua_Integer)m);
  arg_int(&a, (lua_Integer)g);
  call_spans(h, &a);
}

/* One Mutator or GC span (start, duration d) into capability c's
 * productivity totals: a value goes to Lua per span without aggregation,
 * else only when the capability moves to another aggregation window (and
 * at flush_points()). No value while both totals are 0. */
static void prod_span(el_host_t *h, unsigned cap, int gc, uint64_t start,
                      uint64_t d) {
  ana_t *a = h->ana;
  cap_t *c = &a->caps[cap];
  if (gc)
    c->pg += d;
  else
    c->pm += d;
  if (c->pm + c->pg == 0) return;
  int64_t s = (int64_t)start;
  if (a->pagg == 0) {
    prod_call(h, cap, s, c->pm, c->pg);
    return;
  }
  int64_t w = s / a->pagg;
  if (s < 0 && s % a->pagg) w--;
  if (c->pdirty && w != c->pwin) {
    c->pdirty = 0;
    prod_call(h, cap, c->pt, c->ppm, c->ppg);
    c = &a->caps[cap];
  }
  c->pt = s;
  c->pwin = w;
  c->ppm = c->pm;
  c->ppg = c->pg;
  c->pdirty = 1;
}

/* {====== state machines (reference §5.2.3) ======} */

static void on_thread(el_host_t *h, const rec_t *r) {
  ana_t *a = h->ana;
  thread_t *th = thread_get(a, r->thread, 1);
  if (!th) return;
  if (!th->has_first) {
    th->first_t = r->t;
    th->has_first = 1;
  }
  th->last_t = r->t;
  if (th->state == TS_FINISHED) return;
  if (r->kind == K_RUN) {
    if (th->prev == K_STOP) {
      thread_span(h, th, 0, th->prev_t, r->t);
    } else if (th->prev == K_RUN) {
      return;  /* keep the earlier Run */
    }
    th->prev = K_RUN;
    th->prev_t = r->t;
    th->prev_cap = r->cap;
    th->cap = r->cap;
    th->state = TS_RUNNING;
    return;
  }
  /* K_STOP */
  if (th->prev == K_STOP) {
    thread_span(h, th, 0, th->prev_t, r->t);
  } else if (th->prev == K_RUN) {
    /* The Running span names the stop that ends it (its status). */
    th->prev_status = r->status;
    th->prev_info = r->info;
    thread_span(h, th, 1, th->prev_t, r->t);
  } else {
    a->unexpected++;
    return;
  }
  th->prev = K_STOP;
  th->prev_t = r->t;
  th->prev_status = r->status;
  th->prev_info = r->info;
  th->has_status = 1;
  if (r->status == EL_EV_STATUS_THREAD_FINISHED) {
    th->state = TS_FINISHED;
    th->finished_t = r->t;
    th->has_finished = 1;
    if (++a->nfinished > 2 * a->keep_finished + 64) threads_evict(h);
  } else {
    th->state = TS_BLOCKED;
  }
}

static void on_gc(el_host_t *h, const rec_t *r) {
  ana_t *a = h->ana;
  if (r->cap >= MAX_CAPS) return;
  cap_t *c = &a->caps[r->cap];
  if (r->kind == K_GC_START) {
    if (c->state == K_GC_START && c->t < r->t) return;  /* keep earlier */
    c->state = K_GC_START;
    c->t = r->t;
    return;
  }
  if (c->state == 0) {
    a->unexpected++;
    return;
  }
  if (c->state == K_GC_END) {
    if (r->t < c->t) c->t = r->t;
    return;
  }
  uint64_t start = c->t, d = r->t > start ? r->t - start : 0;
  c->state = K_GC_END;
  c->t = r->t;
  c->count++;
  c->total_ns += d;
  if (d > c->max_ns) c->max_ns = d;
  cap_usage_span(h, r->cap, "GC", 0, start, r->t);
  if (a->ncb[TK_GC]) {
    sargs_t g = {.kind = TK_GC};
    arg_int(&g, r->cap);
    arg_int(&g, (lua_Integer)start);
    arg_int(&g, (lua_Integer)r->t);
    call_spans(h, &g);
  }
}

static void process(el_host_t *h, const rec_t *r) {
  if ((int)r->cap > h->ana->max_cap) h->ana->max_cap = r->cap;
  if (r->kind == K_RUN || r->kind == K_STOP)
    on_thread(h, r);
  else
    on_gc(h, r);
}

/* Release events in time order: those at or below the watermark (no
 * event of a capability still waited for can come before them), all of
 * them at the end of a session, and the oldest when too many are held. */
static void release(el_host_t *h, int all) {
  ana_t *a = h->ana;
  el_rts_ns_t wm = 0;
  int none = all || el__watermark(h, &wm) < 0;
  while (a->held && !h->stop) {
    int c = q_first(a);
    const rec_t *head = &a->q[c].v[a->q[c].head];
    if (!none && head->t > wm) {
      if (a->held <= MAX_HELD) break;
      h->st.reorder_forced++;
    }
    rec_t r = q_pop(a, c);
    if (r.t < a->released_t)
      h->st.reorder_late++;
    else
      a->released_t = r.t;
    process(h, &r);
  }
}

void el__ana_flush(el_host_t *h) {
  if (h->ana) release(h, 1);
}

/* Called for the types enabled by the trackers. */
void el__ana_event(el_host_t *h, const el_ev_event_t *ev) {
  ana_t *a = h->ana;
  if (!a || !ev->known) return;
  rec_t r = {.t = ev->t_ns, .seq = ++a->seq, .cap = ev->cap};
  switch (ev->type) {
  case EL_EV_CREATE_THREAD: {
    thread_t *th = thread_get(a, (uint32_t)ev->v[0].u, 1);
    if (th && !th->has_created) {
      th->created_t = ev->t_ns;
      th->has_created = 1;
    }
    return;
  }
  case EL_EV_RUN_THREAD:
    r.kind = K_RUN;
    r.thread = (uint32_t)ev->v[0].u;
    break;
  case EL_EV_STOP_THREAD:
    r.kind = K_STOP;
    r.thread = (uint32_t)ev->v[0].u;
    r.status = (uint16_t)ev->v[1].u;
    r.info = ev->nfields > 2 ? (uint32_t)ev->v[2].u : 0;
    break;
  case EL_EV_GC_START:
    r.kind = K_GC_START;
    break;
  case EL_EV_GC_END:
    r.kind = K_GC_END;
    break;
  case EL_EV_THREAD_LABEL: {
    thread_t *th = thread_get(a, (uint32_t)ev->v[0].u, 1);
    if (th) {
      el_free(th->label);
      th->label = el_strndup(ev->v[1].s.p ? ev->v[1].s.p : "",
                             ev->v[1].s.len);
    }
    return;
  }
  case EL_EV_BLOCK_MARKER:
    release(h, 0);  /* the host's watermark moved (host_clock.c) */
    return;
  default:
    return;
  }
  if (ev->cap >= MAX_CAPS) return;  /* §5.2.3: ignored without cap */
  el__progress_event(h, ev->cap, ev->t_ns);
  if (q_push(a, &r) != 0) {
    h->st.reorder_forced++;
    process(h, &r);
  }
  release(h, 0);
}

void el__ana_session(el_host_t *h) {
  ana_t *a = h->ana;
  if (!a) return;
  for (size_t i = 0; i < a->nthreads; i++) thread_free(a, a->threads[i]);
  a->nthreads = 0;
  a->nfinished = 0;
  a->ntrace = 0;
  if (a->hcap) memset(a->hvals, 0, a->hcap * sizeof *a->hvals);
  memset(a->caps, 0, sizeof a->caps);
  a->max_cap = -1;
  memset(a->cap_has_trace, 0, sizeof a->cap_has_trace);
  a->nus = a->nufree = a->nusers = a->nudirty = 0;
  if (a->ucap) memset(a->uvals, 0, a->ucap * sizeof *a->uvals);
  a->released_t = 0;
}

void el__ana_free(el_host_t *h) {
  ana_t *a = h->ana;
  if (!a) return;
  for (size_t i = 0; i < a->nthreads; i++) {
    el_free(a->threads[i]->label);
    el_free(a->threads[i]);
  }
  el_free(a->threads);
  el_free(a->hkeys);
  el_free(a->hvals);
  for (int c = 0; c < MAX_CAPS; c++) el_free(a->q[c].v);
  el_free(a->us);
  el_free(a->ufree);
  el_free(a->ukeys);
  el_free(a->uvals);
  el_free(a->udirty);
  for (int i = 0; i < 2; i++) {
    el_free(a->cap_names[i]);
    el_free(a->th_names[i]);
  }
  el_free(a);
  h->ana = NULL;
}

/* {====== Lua side ======} */

typedef struct {
  int kind;
} tracker_t;

static const char *state_name(int s) {
  static const char *n[] = {"new", "running", "blocked", "finished"};
  return n[s];
}

static void set_i(lua_State *L, const char *k, uint64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void push_thread(lua_State *L, const thread_t *t) {
  lua_createtable(L, 0, 16);
  set_i(L, "thread", t->id);
  if (t->label) {
    lua_pushstring(L, t->label);
    lua_setfield(L, -2, "label");
  }
  lua_pushstring(L, state_name(t->state));
  lua_setfield(L, -2, "state");
  if (t->has_status) set_i(L, "status", t->prev_status);
  if (t->has_created) set_i(L, "created_t", t->created_t);
  if (t->has_first) {
    set_i(L, "first_t", t->first_t);
    set_i(L, "last_t", t->last_t);
  }
  if (t->has_finished) set_i(L, "finished_t", t->finished_t);
  set_i(L, "running_ns", t->running_ns);
  set_i(L, "blocked_ns", t->blocked_ns);
  set_i(L, "runs", t->runs);
  if (t->runs || t->state == TS_RUNNING) set_i(L, "cap", t->cap);
  lua_newtable(L);
  for (int s = 0; s <= NSTATUS; s++)
    if (t->blocked[s]) {
      lua_pushinteger(L, (lua_Integer)t->blocked[s]);
      lua_rawseti(L, -2, s);
    }
  lua_setfield(L, -2, "blocked");
}

static int cmp_thread(const void *x, const void *y) {
  const thread_t *a = *(thread_t *const *)x, *b = *(thread_t *const *)y;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* tracker:list() -> array of thread tables [-0, +1, m] */
static int tr_list(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  lua_createtable(L, a ? (int)a->nthreads : 0, 0);
  if (!a) return 1;
  if (a->nthreads > 1) /* qsort(NULL, 0) is undefined */
    qsort(a->threads, a->nthreads, sizeof *a->threads, cmp_thread);
  for (size_t j = 0; j < a->nthreads; j++) {  /* reindex after sort */
    thread_t *t = a->threads[j];
    size_t m = a->hcap - 1, i = (t->id * 2654435761u) & m;
    while (a->hkeys[i] != t->id) i = (i + 1) & m;
    a->hvals[i] = (uint32_t)j + 1;
  }
  for (size_t j = 0; j < a->nthreads; j++) {
    push_thread(L, a->threads[j]);
    lua_rawseti(L, -2, (lua_Integer)j + 1);
  }
  return 1;
}

/* tracker:get(thread) -> table or nil [-0, +0|1, m] */
static int tr_get(lua_State *L) {
  el_host_t *h = el__host_from(L);
  luaL_checkudata(L, 1, TRACKER_MT);
  lua_Integer id = luaL_checkinteger(L, 2);
  thread_t *t = h->ana ? thread_get(h->ana, (uint32_t)id, 0) : NULL;
  if (!t) return 0;
  push_thread(L, t);
  return 1;
}

/* tracker:stats() -> {count, total_ns, max_ns, caps = {...}}. [-0, +1, m] */
static int tr_stats(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  uint64_t count = 0, total = 0, max = 0;
  lua_createtable(L, 0, 4);
  lua_newtable(L);
  for (int c = 0; a && c <= a->max_cap; c++) {
    cap_t *cp = &a->caps[c];
    if (!cp->count) continue;
    count += cp->count;
    total += cp->total_ns;
    if (cp->max_ns > max) max = cp->max_ns;
    lua_createtable(L, 0, 3);
    set_i(L, "count", cp->count);
    set_i(L, "total_ns", cp->total_ns);
    set_i(L, "max_ns", cp->max_ns);
    lua_rawseti(L, -2, c);
  }
  lua_setfield(L, -2, "caps");
  set_i(L, "count", count);
  set_i(L, "total_ns", total);
  set_i(L, "max_ns", max);
  return 1;
}

/* tracker:totals(reset) -> {[cap] = {mutator_ns, gc_ns, idle_ns}}.
 * [-0, +1, m] */
static int tr_totals(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  int reset = lua_toboolean(L, 2);
  lua_newtable(L);
  for (int c = 0; a && c <= a->max_cap; c++) {
    cap_t *cp = &a->caps[c];
    if (!cp->used_prev) continue;
    lua_createtable(L, 0, 3);
    set_i(L, "mutator_ns", cp->mut_ns);
    set_i(L, "gc_ns", cp->gc_ns);
    set_i(L, "idle_ns", cp->idle_ns);
    lua_rawseti(L, -2, c);
    if (reset) cp->mut_ns = cp->gc_ns = cp->idle_ns = 0;
  }
  return 1;
}

/* tracker:flush_points(): call on_point for every usage series changed
 * since the last call, in the order they changed, and on_productivity for
 * every capability with a value not yet given. [-0, +0, e] */
static int tr_flush_points(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  if (!a) return 0;
  for (int c = 0; c <= a->max_cap; c++) {
    cap_t *cp = &a->caps[c];
    if (!cp->pdirty) continue;
    cp->pdirty = 0;
    prod_call(h, (unsigned)c, cp->pt, cp->ppm, cp->ppg);
  }
  for (size_t k = 0; k < a->nudirty; k++) {
    size_t i = a->udirty[k];
    if (!a->us[i].dirty) continue;
    a->us[i].dirty = 0;
    upoint_call(h, i, a->us[i].t, a->us[i].total);
  }
  a->nudirty = 0;
  return 0;
}

/* tracker:reset_productivity(): the productivity totals start again from
 * zero (a new session's program); a value not yet given is dropped (call
 * flush_points() first). [-0, +0, -] */
static int tr_reset_productivity(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  for (int c = 0; a && c < MAX_CAPS; c++) {
    cap_t *cp = &a->caps[c];
    cp->pm = cp->pg = cp->ppm = cp->ppg = 0;
    cp->pdirty = 0;
  }
  return 0;
}

/* tracker:release_finished() -> array of the usage series indexes (as
 * given to on_point) freed: the thread series whose thread has finished
 * (or was forgotten) and whose last point on_point has had. Their slots
 * take new series afterwards; the caller drops what it keeps per index.
 * Called after each export, so a series lives at least one export
 * window. [-0, +1, m] */
static int tr_release_finished(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  lua_newtable(L);
  if (!a) return 1;
  lua_Integer n = 0;
  for (size_t j = 0; j < a->nus; j++) {
    ustate_t *u = &a->us[j];
    if (!u->used || u->dirty || (u->key >> 32 & 3) != CAT_MUT) continue;
    const thread_t *t = thread_get(a, (uint32_t)(u->key & 0xffffffffu), 0);
    if (t && t->state != TS_FINISHED) continue;
    if (a->nufree == a->ufree_cap) {
      size_t ncap = a->ufree_cap ? a->ufree_cap * 2 : 64;
      uint32_t *nv = el_realloc(a->ufree, ncap * sizeof *nv);
      if (!nv) break; /* the rest next time */
      a->ufree = nv;
      a->ufree_cap = ncap;
    }
    u->used = 0;
    a->ufree[a->nufree++] = (uint32_t)j;
    a->nusers--;
    lua_pushinteger(L, (lua_Integer)j + 1);
    lua_rawseti(L, -2, ++n);
  }
  if (n) ustate_rehash(a, a->ucap);
  return 1;
}

/* tracker:unexpected() -> count of sequences the reference warns about.
 * [-0, +1, -] */
static int tr_unexpected(lua_State *L) {
  el_host_t *h = el__host_from(L);
  lua_pushinteger(L, h->ana ? (lua_Integer)h->ana->unexpected : 0);
  return 1;
}

static int enable(lua_State *L, el_host_t *h) {
  if (h->ana) return 0;
  h->ana = el_calloc(1, sizeof *h->ana);
  if (!h->ana) return luaL_error(L, "out of memory");
  h->ana->max_cap = -1;
  h->ana->max_q = -1;
  h->ana->keep_finished = KEEP_FINISHED;
  h->ana->max_users = MAX_USERS;
  static const int types[] = {EL_EV_CREATE_THREAD, EL_EV_RUN_THREAD,
                              EL_EV_STOP_THREAD,   EL_EV_THREAD_LABEL,
                              EL_EV_GC_START,      EL_EV_GC_END,
                              EL_EV_BLOCK_MARKER,  EL_EV_CAP_CREATE};
  for (size_t i = 0; i < EL_ARRAY_LEN(types); i++)
    el__host_set_flag(h, types[i], EL__F_ANA, 1);
  return 0;
}

static int new_tracker(lua_State *L, int kind) {
  el_host_t *h = el__host_from(L);
  enable(L, h);
  ana_t *a = h->ana;
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (lua_getfield(L, 1, "on_span") != LUA_TNIL) {
      luaL_checktype(L, -1, LUA_TFUNCTION);
      if (a->ncb[kind] >= 16) return luaL_error(L, "too many trackers");
      a->cb[kind][a->ncb[kind]++] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
      lua_pop(L, 1);
    }
  }
  if (!lua_isnoneornil(L, 1)) {
    static const char *const opt[] = {"keep_finished", "max_users"};
    size_t *dst[] = {&a->keep_finished, &a->max_users};
    for (int k = 0; k < 2; k++) {
      if (lua_getfield(L, 1, opt[k]) != LUA_TNIL) {
        lua_Integer v = luaL_checkinteger(L, -1);
        if (v < 0) return luaL_error(L, "%s must be >= 0", opt[k]);
        *dst[k] = (size_t)v;
      }
      lua_pop(L, 1);
    }
  }
  if (kind == TK_CAPS && !lua_isnoneornil(L, 1)) {
    if (lua_getfield(L, 1, "on_point") != LUA_TNIL) {
      luaL_checktype(L, -1, LUA_TFUNCTION);
      if (a->ncb[TK_POINTS] >= 1)
        return luaL_error(L, "only one cap_usage on_point per host");
      lua_getfield(L, 1, "aggregate_ns");
      lua_Integer agg = luaL_optinteger(L, -1, 0);
      lua_pop(L, 1);
      if (agg < 0) return luaL_error(L, "aggregate_ns must be >= 0");
      a->uagg = agg;
      a->cb[TK_POINTS][a->ncb[TK_POINTS]++] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
      lua_pop(L, 1);
    }
  }
  if (kind == TK_CAPS && !lua_isnoneornil(L, 1)) {
    if (lua_getfield(L, 1, "on_productivity") != LUA_TNIL) {
      luaL_checktype(L, -1, LUA_TFUNCTION);
      if (a->ncb[TK_PROD] >= 1)
        return luaL_error(L, "only one cap_usage on_productivity per host");
      lua_getfield(L, 1, "productivity_aggregate_ns");
      lua_Integer agg = luaL_optinteger(L, -1, 0);
      lua_pop(L, 1);
      if (agg < 0)
        return luaL_error(L, "productivity_aggregate_ns must be >= 0");
      a->pagg = agg;
      a->cb[TK_PROD][a->ncb[TK_PROD]++] = luaL_ref(L, LUA_REGISTRYINDEX);
    } else {
      lua_pop(L, 1);
    }
  }
  if ((kind == TK_CAPS || kind == TK_THREADS) && !lua_isnoneornil(L, 1)) {
    if (lua_getfield(L, 1, "spans") != LUA_TNIL) {
      const char *base = luaL_checkstring(L, -1);
      char **names = kind == TK_CAPS ? a->cap_names : a->th_names;
      const char *sfx[2][2] = {{" GC", " Mutator"}, {" Running", " Blocked"}};
      for (int i = 0; i < 2; i++) {
        const char *x = sfx[kind == TK_CAPS ? 0 : 1][i];
        size_t n = strlen(base), m = strlen(x);
        char *p = el_malloc(n + m + 1);
        if (!p) return luaL_error(L, "out of memory");
        memcpy(p, base, n);
        memcpy(p + n, x, m + 1);
        el_free(names[i]);
        names[i] = p;
      }
    }
    lua_pop(L, 1);
  }
  tracker_t *t = lua_newuserdatauv(L, sizeof *t, 0);
  t->kind = kind;
  luaL_setmetatable(L, TRACKER_MT);
  return 1;
}

/* [-0, +1, m] el.threads(opts) -> tracker */
static int an_threads(lua_State *L) { return new_tracker(L, TK_THREADS); }
/* [-0, +1, m] el.gc(opts) -> tracker */
static int an_gc(lua_State *L) { return new_tracker(L, TK_GC); }
/* [-0, +1, m] el.cap_usage(opts) -> tracker */
static int an_cap_usage(lua_State *L) { return new_tracker(L, TK_CAPS); }

/* [-0, +1, m] __tostring. */
static int tr_tostring(lua_State *L) {
  tracker_t *t = luaL_checkudata(L, 1, TRACKER_MT);
  static const char *n[] = {"threads", "gc", "cap_usage"};
  lua_pushfstring(L, "tracker (%s)", n[t->kind]);
  return 1;
}

static const luaL_Reg an_funcs[] = {{"threads", an_threads},
                                    {"gc", an_gc},
                                    {"cap_usage", an_cap_usage},
                                    {NULL, NULL}};

static const luaL_Reg tr_meta[] = {
    {"list", tr_list},
    {"get", tr_get},
    {"stats", tr_stats},
    {"totals", tr_totals},
    {"unexpected", tr_unexpected},
    {"flush_points", tr_flush_points},
    {"reset_productivity", tr_reset_productivity},
    {"release_finished", tr_release_finished},
    {"__tostring", tr_tostring},
    {NULL, NULL}};

/* Add the helper constructors to the module table on top. */
void el__lua_analysis_register(lua_State *L) {
  luaL_setfuncs(L, an_funcs, 0);
  if (luaL_newmetatable(L, TRACKER_MT)) {
    luaL_setfuncs(L, tr_meta, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
