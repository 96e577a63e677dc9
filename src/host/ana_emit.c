/* ana_emit.c: what the C analyses' spans become (docs/lua-api.md §6,
 * spec/reference-behaviour.md §5.2.3): the trackers' on_span callbacks,
 * native spans straight into the telemetry store (el.threads{spans=},
 * el.cap_usage{spans=}), the capability usage series (on_point, Mutator /
 * GC / Idle per capability and user) and productivity (on_productivity).
 * The state machines (ana_state.c) call in here in time order. */
#include <errno.h>
#include <string.h>

#include "ana_internal.h"
#include "../common/el_fmt.h"
#include "../common/el_grow.h"

static const char *const cat_names[] = {"Mutator", "GC", "Idle", "Mutator"};

/* {====== Lua callbacks ======} */

/* Arguments of a span callback, built in C and pushed inside a protected
 * call (pushing strings allocates). */
enum { A_NIL = 0, A_INT, A_STR, A_DEC }; /* A_DEC: integer as decimal */
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
    case A_INT:
      lua_pushinteger(L, a->v[j].i);
      break;
    case A_STR:
      lua_pushstring(L, a->v[j].s);
      break;
    case A_DEC:
      lua_pushfstring(L, "%I", a->v[j].i);
      break;
    default:
      lua_pushnil(L);
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

/* {====== native spans ======} */

/* One more span of source which (0 caps, 1 threads) emitted or counted:
 * the store is flushed every SPANS_PER_FLUSH spans of the same source,
 * the memory bound of capability.lua. */
static void native_count(el_host_t *h, int which) {
  ana_t *a = h->ana;
  if (++a->nspans[which] >= SPANS_PER_FLUSH) {
    a->nspans[which] = 0;
    el_tm_store_flush(h->store);
  }
}

void el__ana_store_set(el_host_t *h) {
  if (!h->ana) return;
  h->ana->untaken = NULL;
  h->ana->untaken_st = NULL;
}

/* native_untaken's first case (and any with another store). */
static __attribute__((noinline)) bool native_untaken_slow(el_host_t *h,
                                                          int which) {
  ana_t *a = h->ana;
  if (!h->store) return true;
  if (el_tm_store_takes(h->store, EL_TM_SIGNAL_TRACES)) return false;
  /* sealed: it stays untaken */
  a->untaken = el_tm_store_untaken_counter(h->store, EL_TM_SIGNAL_TRACES);
  a->untaken_st = a->untaken ? h->store : NULL;
  el_tm_store_count_untaken(h->store, EL_TM_SIGNAL_TRACES, 1);
  native_count(h, which);
  return true;
}

/* True when no store or no exporter takes traces (el_tm_store_takes):
 * the span of source which is then counted (emitted, as the store counts
 * a discarded one) without being built; once the store is sealed, into
 * its counter without a call (el_tm_store_untaken_counter). */
static inline bool native_untaken(el_host_t *h, int which) {
  ana_t *a = h->ana;
  if (h->store && h->store == a->untaken_st) {
    ++*a->untaken;
    native_count(h, which);
    return true;
  }
  return native_untaken_slow(h, which);
}

/* Fill *sp as a native span (kind internal, status ok, random span id)
 * with nattrs attributes not given yet (attrs NULL), named by the tag
 * (el_tm_span_t.attrs_tag: equal tags, equal attributes). */
static void native_init(el_host_t *h, el_tm_span_t *sp, const char *name,
                        const uint8_t *trace, uint64_t start, uint64_t end,
                        size_t nattrs, uint64_t tag0, uint64_t tag1) {
  memset(sp, 0, sizeof *sp);
  memcpy(sp->trace_id, trace, 16);
  el_tm_random_span_id(sp->span_id);
  sp->name = name;
  sp->kind = EL_TM_SPAN_INTERNAL;
  sp->status_code = 1;
  sp->start_unix_ns = el__host_unix(h, (el_rts_ns_t)start);
  sp->end_unix_ns = el__host_unix(h, (el_rts_ns_t)end);
  sp->nattrs = nattrs;
  sp->static_keys = true; /* every key is a string literal */
  sp->attrs_tag[0] = tag0;
  sp->attrs_tag[1] = tag1;
}

/* A string attribute of the decimal digits of v (buf: EL_FMT_U64_ROOM). */
static void attr_dec(el_tm_attr_t *at, const char *key, char *buf, uint64_t v) {
  at->key = key;
  at->type = EL_TM_STR;
  at->v.s.p = buf;
  at->v.s.len = (size_t)(el_fmt_u64(buf, v) - buf);
}

/* Thread-state span of el.threads{spans=} (when taken: native_untaken
 * first): trace id per thread, attrs
 * thread (decimal string) and status (blocked: why it stopped; running:
 * why the run ended, docs/differences.md: the stop's), plus capability
 * (running: the stop's).
 * The attributes are built only when the store's window has no copy of
 * their tag: every input of them (the capability only when running, the
 * info only for the status that names it). */
static __attribute__((noinline)) void thread_native_span(
    el_host_t *h, thread_t *th, int running, const rec_t *stop, uint64_t start,
    uint64_t end) {
  ana_t *a = h->ana;
  if (!th->has_trace) {
    if (a->ntrace >= MAX_TRACE_IDS) { /* forget old threads' ids */
      for (size_t i = 0; i < a->nthreads; i++) a->threads[i].has_trace = 0;
      a->ntrace = 0;
    }
    a->ntrace++;
    el_tm_random_id(th->trace, 16);
    th->has_trace = 1;
  }
  uint64_t info =
      stop->status == EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE ? stop->info : 0;
  el_tm_span_t sp;
  native_init(h, &sp, a->th_names[running ? 0 : 1], th->trace, start, end,
              running ? 3 : 2, (uint64_t)th->id << 32 | info,
              (uint64_t)stop->status << 32 |
                  (uint64_t)(running ? stop->cap : 0) << 8 |
                  (uint64_t)running << 2 | 1);
  if (el_tm_span(h->store, &sp) == -EAGAIN) {
    char dec[EL_FMT_U64_ROOM], st[64];
    el_tm_attr_t at[3];
    attr_dec(&at[1], "thread", dec, th->id);
    at[0].key = "status";
    at[0].type = EL_TM_STR;
    at[0].v.s.p = st;
    at[0].v.s.len =
        el_ev_stop_status_name(stop->status, stop->info, st, sizeof st);
    if (running) {
      at[2].key = "capability";
      at[2].type = EL_TM_INT;
      at[2].v.i = stop->cap;
    }
    sp.attrs = at;
    el_tm_span(h->store, &sp); /* EL_ENOMEM: dropped and counted there */
  }
  native_count(h, 1);
}

/* Capability usage span of el.cap_usage{spans=} (not Idle; when taken:
 * native_untaken first); attributes built as thread_native_span's. */
static __attribute__((noinline)) void cap_native_span(el_host_t *h,
                                                      unsigned cap, int gc,
                                                      uint32_t thread,
                                                      uint64_t start,
                                                      uint64_t end) {
  ana_t *a = h->ana;
  if (!a->cap_has_trace[cap]) {
    el_tm_random_id(a->cap_trace[cap], 16);
    a->cap_has_trace[cap] = 1;
  }
  el_tm_span_t sp;
  native_init(h, &sp, a->cap_names[gc ? 0 : 1], a->cap_trace[cap], start, end,
              2, (uint64_t)cap << 32 | (gc ? 0 : thread),
              (uint64_t)gc << 2 | 2);
  if (el_tm_span(h->store, &sp) == -EAGAIN) {
    char dec[EL_FMT_U64_ROOM];
    el_tm_attr_t at[2];
    at[0].key = "capability";
    at[0].type = EL_TM_INT;
    at[0].v.i = cap;
    if (gc) {
      at[1].key = "user";
      at[1].type = EL_TM_STR;
      at[1].v.s.p = "GC";
      at[1].v.s.len = 2;
    } else {
      attr_dec(&at[1], "user", dec, thread);
    }
    sp.attrs = at;
    el_tm_span(h->store, &sp); /* EL_ENOMEM: dropped and counted there */
  }
  native_count(h, 0);
}

/* {====== capability usage series ======} */

void el__ana_upoint_call(el_host_t *h, size_t i, int64_t t, int64_t v) {
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

int el__ana_umap_rebuild(ana_t *a) {
  el_map_clear(&a->umap); /* keeps its memory: the puts cannot fail */
  for (size_t j = 0; j < a->nus; j++)
    if (a->us[j].used && el_map_put(&a->umap, a->us[j].key, (uint32_t)j))
      return -1;
  return 0;
}

/* The state of key, or -1 when there is none. */
static long ustate_find(const ana_t *a, uint64_t key) {
  uint32_t j;
  if (!el_map_get(&a->umap, key, &j)) return -1;
  return a->us[j].used && a->us[j].key == key ? (long)j : -1;
}

/* A new state for key (not present), in a free slot if there is one; -1
 * when out of memory. */
static long ustate_add(ana_t *a, uint64_t key) {
  size_t j;
  if (a->nufree) {
    j = a->ufree[a->nufree - 1];
  } else {
    if (el_grow(&a->us, &a->us_cap, a->nus + 1, sizeof *a->us) < 0) return -1;
    j = a->nus;
  }
  if (el_map_put(&a->umap, key, (uint32_t)j) != 0) return -1;
  if (a->nufree)
    a->nufree--;
  else
    a->nus++;
  ustate_t *u = &a->us[j];
  memset(u, 0, sizeof *u); /* wlen = 0: no window yet */
  u->key = key;
  u->win = -1;
  u->used = 1;
  if ((key >> 32 & 3) == CAT_MUT) a->nusers++;
  return (long)j;
}

void el__ana_users_changed(ana_t *a) {
  if (++a->ugen != 0) return;
  /* wrapped (after 2^32 changes): an old other_gen could match again */
  for (size_t i = 0; i < a->nthreads; i++) a->threads[i].other_gen = 0;
}

/* Series i of key (-1: none yet, made now), *hint set to it; -1 when out
 * of memory (counted in helper_dropped). */
static long ustate_hint(el_host_t *h, long i, uint64_t key, uint32_t *hint) {
  if (i < 0) i = ustate_add(h->ana, key);
  if (i >= 0)
    *hint = (uint32_t)i + 1;
  else
    h->st.helper_dropped++; /* out of memory: update dropped */
  return i;
}

/* Capability cap's series of category cat (CAT_GC, CAT_IDLE, CAT_OTHER),
 * found through the capability's hint. -1 when out of memory. */
static inline long ustate_cap(el_host_t *h, unsigned cap, int cat) {
  ana_t *a = h->ana;
  uint64_t key = (uint64_t)cap << 34 | (uint64_t)cat << 32;
  uint32_t *hint = &a->caps[cap].us_hint[cat];
  if (el__ana_hint_holds(a, *hint, key)) return (long)*hint - 1;
  return ustate_hint(h, ustate_find(a, key), key, hint);
}

/* Thread th's Mutator time on cap when th has no series of its own there
 * and max_users are live: credited to the capability's "other" series. */
static long ustate_other(el_host_t *h, unsigned cap, thread_t *th) {
  h->st.usage_other++;
  th->other_gen = h->ana->ugen + 1;
  th->other_cap = (uint16_t)cap;
  return ustate_cap(h, cap, CAT_OTHER);
}

/* ustate_mut when its hints do not answer: th's series on cap, made when
 * new while fewer than max_users are live, else "other". */
static __attribute__((noinline)) long ustate_mut_slow(el_host_t *h,
                                                      unsigned cap,
                                                      thread_t *th,
                                                      uint64_t key) {
  ana_t *a = h->ana;
  long i = ustate_find(a, key);
  if (i < 0 && a->nusers >= a->max_users) return ustate_other(h, cap, th);
  return ustate_hint(h, i, key, &th->mut_us);
}

/* Thread th's Mutator series on capability cap, made when new; past
 * max_users the capability's "other" series (never remembered as th's
 * hint: a thread gets its own series once there is room again). th's
 * hints answer without a lookup: mut_us, its latest series, and
 * other_gen: its time on other_cap went to "other" and nothing has made
 * room since (a series of its own there could only be made with room).
 * -1 when out of memory (counted in helper_dropped). */
static inline long ustate_mut(el_host_t *h, unsigned cap, thread_t *th) {
  ana_t *a = h->ana;
  uint64_t key = (uint64_t)cap << 34 | th->id; /* CAT_MUT is 0 */
  if (el__ana_hint_holds(a, th->mut_us, key)) return (long)th->mut_us - 1;
  if (th->other_gen == a->ugen + 1 && th->other_cap == cap &&
      th->other_gen != 0)
    return ustate_other(h, cap, th);
  return ustate_mut_slow(h, cap, th, key);
}

/* floor(s / agg) for agg > 0 (as Lua's //), without a division when s is
 * in window w (the caller's latest). */
static int64_t window_of(int64_t s, int64_t agg, int64_t w) {
  int64_t lo, d;
  if (!__builtin_mul_overflow(w, agg, &lo) &&
      !__builtin_sub_overflow(s, lo, &d) && d >= 0 && d < agg)
    return w;
  int64_t q = s / agg;
  if (s < 0 && s % agg) q--;
  return q;
}

/* Window w of agg ns as [*lo, *lo + *len); empty (len 0) when that
 * overflows int64 (a span in it then always takes the slow path). */
static void window_bounds(int64_t w, int64_t agg, int64_t *lo, uint64_t *len) {
  int64_t hi;
  if (__builtin_mul_overflow(w, agg, lo) ||
      __builtin_add_overflow(*lo, agg, &hi)) {
    *lo = 0;
    *len = 0;
    return;
  }
  *len = (uint64_t)agg;
}

/* upoint_span's general case (u->total already counts the span of d ns
 * starting at s): without aggregation a point per span; else a point
 * when the series moves to another window, and the series marked dirty
 * for flush_points(). */
static __attribute__((noinline)) void upoint_slow(el_host_t *h, size_t i,
                                                  int64_t s, int64_t d) {
  ana_t *a = h->ana;
  ustate_t *u = &a->us[i];
  if (a->uagg == 0) {
    u->t = s;
    el__ana_upoint_call(h, i, s, u->total);
    return;
  }
  int64_t w = window_of(s, a->uagg, u->win);
  if (u->dirty && w != u->win) {
    int64_t t0 = u->t, v0 = u->total - d;
    u->dirty = 0;
    u->wlen = 0;
    el__ana_upoint_call(h, i, t0, v0);
    u = &a->us[i];
  }
  u->t = s;
  u->win = w;
  window_bounds(w, a->uagg, &u->wlo, &u->wlen);
  if (!u->dirty) {
    if (el_grow(&a->udirty, &a->udirty_cap, a->nudirty + 1, sizeof *a->udirty) <
        0) {
      h->st.helper_dropped++;
      u->wlen = 0; /* not dirty: no fast path */
      return;
    }
    u->dirty = 1;
    a->udirty[a->nudirty++] = (uint32_t)i;
  }
}

/* One usage span into series i (-1: none, out of memory) of the metric
 * state: a point goes to Lua only when a series moves to another
 * aggregation window, and for every changed series at flush_points().
 * The span counts at its end, in the window of its end: a running total
 * at time T holds only time up to T (the reference dates its deltas at
 * the span's start, which a running total must not be: it would hold time
 * still to come). Inline: a span in the window of a dirty series only
 * moves its total and time. */
static inline void upoint_span(el_host_t *h, long i, uint64_t start,
                               uint64_t end) {
  if (i < 0) return;
  ustate_t *u = &h->ana->us[i];
  int64_t s = (int64_t)end, d = end > start ? (int64_t)(end - start) : 0;
  u->total += d;
  if (el__ana_in_window(s, u->wlo, u->wlen)) { /* dirty: wlen > 0 */
    u->t = s; /* the same window (never dirty without aggregation) */
    return;
  }
  upoint_slow(h, (size_t)i, s, d);
}

/* {====== productivity ======} */

void el__ana_prod_call(el_host_t *h, unsigned cap, int64_t t, uint64_t m,
                       uint64_t g) {
  sargs_t a = {.kind = TK_PROD};
  arg_int(&a, cap);
  arg_int(&a, t);
  arg_int(&a, (lua_Integer)m);
  arg_int(&a, (lua_Integer)g);
  call_spans(h, &a);
}

/* prod_span's general case (totals updated, not both 0). */
static __attribute__((noinline)) void prod_slow(el_host_t *h, unsigned cap,
                                                int64_t s) {
  ana_t *a = h->ana;
  cap_t *c = &a->caps[cap];
  if (a->pagg == 0) {
    el__ana_prod_call(h, cap, s, c->pm, c->pg);
    return;
  }
  int64_t w = window_of(s, a->pagg, c->pwin);
  if (c->pdirty && w != c->pwin) {
    c->pdirty = 0;
    c->plen = 0;
    el__ana_prod_call(h, cap, c->pt, c->ppm, c->ppg);
    c = &a->caps[cap];
  }
  c->pt = s;
  c->pwin = w;
  window_bounds(w, a->pagg, &c->plo, &c->plen);
  c->ppm = c->pm;
  c->ppg = c->pg;
  c->pdirty = 1;
}

/* One Mutator or GC span (its end, duration d) into capability c's
 * productivity totals: a value goes to Lua per span without aggregation,
 * else only when the capability moves to another aggregation window (and
 * at flush_points()). No value while both totals are 0. */
static inline void prod_span(el_host_t *h, unsigned cap, int gc, uint64_t end,
                             uint64_t d) {
  cap_t *c = &h->ana->caps[cap];
  if (gc)
    c->pg += d;
  else
    c->pm += d;
  if (c->pm + c->pg == 0) return;
  int64_t s = (int64_t)end;
  if (el__ana_in_window(s, c->plo, c->plen)) { /* pdirty: plen > 0 */
    c->pt = s; /* the same window (never dirty without aggregation) */
    c->ppm = c->pm;
    c->ppg = c->pg;
    return;
  }
  prod_slow(h, cap, s);
}

/* {====== spans ======} */

void el__ana_features(ana_t *a) {
  a->feat = (a->ncb[TK_POINTS] ? F_POINTS : 0) |
            (a->ncb[TK_PROD] ? F_PROD : 0) | (a->ncb[TK_CAPS] ? F_CAPS_CB : 0) |
            (a->cap_names[0] ? F_CAPS_NATIVE : 0) |
            (a->th_names[0] || a->ncb[TK_THREADS] ? F_THREAD_OUT : 0);
  /* Thread states and blocked times (el.threads), GC spans in time order
   * (el.gc) and on_span calls across capabilities need time order; the
   * usage series, productivity and the native capability spans are per
   * capability. */
  a->arrival = !a->made[TK_THREADS] && !a->made[TK_GC] &&
               !(a->feat & (F_CAPS_CB | F_THREAD_OUT));
}

/* cap_idle's callback part. */
static __attribute__((noinline)) void cap_idle_call(el_host_t *h, unsigned cap,
                                                    uint64_t start,
                                                    uint64_t end) {
  sargs_t g = {.kind = TK_CAPS};
  arg_int(&g, cap);
  arg_str(&g, "Idle");
  arg_nil(&g);
  arg_int(&g, (lua_Integer)start);
  arg_int(&g, (lua_Integer)end);
  call_spans(h, &g);
}

/* The Idle time of capability cap (c) from its previous span's end to
 * start (later). */
static inline void cap_idle(el_host_t *h, cap_t *c, unsigned cap,
                            uint64_t start) {
  ana_t *a = h->ana;
  uint64_t from = c->prev_end;
  c->idle_ns += start - from;
  if (a->feat & F_POINTS)
    upoint_span(h, ustate_cap(h, cap, CAT_IDLE), from, start);
  if (a->feat & F_CAPS_CB) cap_idle_call(h, cap, from, start);
}

/* cap_usage_span's callback part. */
static __attribute__((noinline)) void cap_usage_call(el_host_t *h, unsigned cap,
                                                     int gc, uint32_t thread,
                                                     uint64_t start,
                                                     uint64_t end) {
  sargs_t g = {.kind = TK_CAPS};
  arg_int(&g, cap);
  arg_str(&g, cat_names[gc ? CAT_GC : CAT_MUT]);
  if (gc)
    arg_str(&g, "GC");
  else
    arg_dec(&g, thread);
  arg_int(&g, (lua_Integer)start);
  arg_int(&g, (lua_Integer)end);
  call_spans(h, &g);
}

/* A Mutator (thread th's, gc 0) or GC (gc 1, th NULL) span of capability
 * cap (< MAX_CAPS, <= max_cap: the event's, el__ana_process_in), after its
 * Idle gap. Inline in its two callers, each for one of the two. */
static inline __attribute__((always_inline)) void cap_usage_span(
    el_host_t *h, unsigned cap, int gc, thread_t *th, uint64_t start,
    uint64_t end) {
  ana_t *a = h->ana;
  cap_t *c = &a->caps[cap];
  if (c->used_prev && c->prev_end < start) cap_idle(h, c, cap, start);
  uint64_t d = end > start ? end - start : 0;
  if (gc)
    c->gc_ns += d;
  else
    c->mut_ns += d;
  c->used_prev = 1;
  c->prev_end = end;
  unsigned f = a->feat;
  if (f & F_POINTS) {
    upoint_span(h, gc ? ustate_cap(h, cap, CAT_GC) : ustate_mut(h, cap, th),
                start, end);
    f = a->feat; /* (a callback may have made a tracker) */
  }
  if (f & F_PROD) {
    prod_span(h, cap, gc, end, d); /* at its end, as upoint_span */
    f = a->feat;
  }
  if ((f & F_CAPS_NATIVE) && !native_untaken(h, 0))
    cap_native_span(h, cap, gc, gc ? 0 : th->id, start, end);
  if (a->feat & F_CAPS_CB)
    cap_usage_call(h, cap, gc, gc ? 0 : th->id, start, end);
}

/* el.threads' on_span (el__ana_thread_out). */
static __attribute__((noinline)) void thread_span_call(
    el_host_t *h, const thread_t *th, int running, const rec_t *stop,
    uint64_t start, uint64_t end) {
  sargs_t g = {.kind = TK_THREADS};
  arg_int(&g, th->id);
  arg_str(&g, running ? "running" : "blocked");
  /* running: the stop that ended the run; blocked: the one that began it */
  arg_int(&g, stop->status);
  arg_int(&g, stop->cap);
  arg_int(&g, (lua_Integer)start);
  arg_int(&g, (lua_Integer)end);
  arg_int(&g, stop->info);
  call_spans(h, &g);
}

void el__ana_thread_out(el_host_t *h, thread_t *th, int running,
                        const rec_t *stop, uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  if (a->th_names[0] && !native_untaken(h, 1))
    thread_native_span(h, th, running, stop, start, end);
  if (a->ncb[TK_THREADS]) thread_span_call(h, th, running, stop, start, end);
}

void el__ana_cap_mut_span(el_host_t *h, unsigned cap, uint32_t thread,
                          uint64_t start, uint64_t end) {
  if (!native_untaken(h, 0)) cap_native_span(h, cap, 0, thread, start, end);
}

void el__ana_run_span(el_host_t *h, thread_t *th, const rec_t *stop,
                      uint64_t start) {
  cap_usage_span(h, stop->cap, 0, th, start, stop->t);
  if ((h->ana->feat & F_THREAD_OUT) && !el__ana_thread_out_counted(h))
    el__ana_thread_out(h, th, 1, stop, start, stop->t);
}

void el__ana_gc_span(el_host_t *h, unsigned cap, uint64_t start, uint64_t end) {
  ana_t *a = h->ana;
  cap_usage_span(h, cap, 1, NULL, start, end);
  if (!a->ncb[TK_GC]) return;
  sargs_t g = {.kind = TK_GC};
  arg_int(&g, cap);
  arg_int(&g, (lua_Integer)start);
  arg_int(&g, (lua_Integer)end);
  call_spans(h, &g);
}
