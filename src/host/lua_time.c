/* lua_time.c: timers on eventlog time (fired from the dispatch path as the
 * stream time passes their deadlines) and on wall-clock time (fired by
 * el_host_run_wall_timers from the command's event loop).
 * docs/lua-api.md §4. */
#include <string.h>
#include <time.h>

#include "../common/el_grow.h"
#include "host_internal.h"

#define TIMER_MT "el.Timer"
#define MAX_CATCHUP 10000  /* deadlines fired per jump before skipping */

static uint64_t unix_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* {====== binary min-heap on (deadline, seq) ======} */

static int before(const el__timer_t *a, const el__timer_t *b) {
  return a->deadline < b->deadline ||
         (a->deadline == b->deadline && a->seq < b->seq);
}

static int heap_push(el__theap_t *hp, el__timer_t *t) {
  if (el_grow(&hp->v, &hp->cap, (size_t)hp->n + 1, sizeof *hp->v) < 0)
    return EL_ENOMEM;
  int i = hp->n++;
  while (i > 0 && before(t, hp->v[(i - 1) / 2])) {
    hp->v[i] = hp->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  hp->v[i] = t;
  t->in_heap = 1;
  return 0;
}

static el__timer_t *heap_pop(el__theap_t *hp) {
  el__timer_t *top = hp->v[0];
  el__timer_t *last = hp->v[--hp->n];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= hp->n) break;
    if (c + 1 < hp->n && before(hp->v[c + 1], hp->v[c])) c++;
    if (!before(hp->v[c], last)) break;
    hp->v[i] = hp->v[c];
    i = c;
  }
  if (hp->n > 0) hp->v[i] = last;
  top->in_heap = 0;
  return top;
}

/* Drop the heap's hold on t: unref the callback, free if unreferenced. */
static void release(el_host_t *h, el__timer_t *t) {
  if (t->ref != LUA_NOREF && h->L) {
    luaL_unref(h->L, LUA_REGISTRYINDEX, t->ref);
    t->ref = LUA_NOREF;
  }
  if (!t->has_ud) el_free(t);
}

void el__timers_free(el_host_t *h) {
  el__theap_t *hs[2] = {&h->evt_timers, &h->wall_timers};
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < hs[k]->n; i++) {
      el__timer_t *t = hs[k]->v[i];
      t->in_heap = 0;
      t->ref = LUA_NOREF;  /* the state is being closed */
      if (!t->has_ud) el_free(t);
    }
    el_free(hs[k]->v);
    hs[k]->v = NULL;
    hs[k]->n = 0;
    hs[k]->cap = 0;
  }
}

static void update_next(el_host_t *h) {
  h->next_deadline =
      h->evt_timers.n ? h->evt_timers.v[0]->deadline : UINT64_MAX;
  el__host_quiet_sync(h);
}

/* A timer made at where failed: counted by that place
 * (el_host_t.timer_err) for the end's report. */
static void count_error_at(el_host_t *h, const char *where) {
  int n = h->ntimer_err;
  for (int i = 0; i < n; i++)
    if (!strcmp(h->timer_err[i].where, where)) {
      h->timer_err[i].errors++;
      return;
    }
  if (n == (int)(sizeof h->timer_err / sizeof h->timer_err[0])) {
    h->timer_err_other++;
    return;
  }
  snprintf(h->timer_err[n].where, sizeof h->timer_err[n].where, "%s", where);
  h->timer_err[n].errors = 1;
  h->ntimer_err++;
}

/* Run the callback of t with one integer argument. The callback may drop
 * the last Lua reference to the timer's handle and collect it (or close
 * it): `firing` keeps __gc from freeing t until the loop is done with it. */
static void fire(el_host_t *h, el__timer_t *t, uint64_t arg) {
  t->firing = 1;
  t->fired = 1;
  lua_rawgeti(h->L, LUA_REGISTRYINDEX, t->ref);
  lua_pushinteger(h->L, (lua_Integer)arg);
  const char *outer = h->call_where;
  h->call_where = t->where;
  uint64_t errors = h->timer_handler.errors;
  el__host_pcall(h, 1, &h->timer_handler, "timer");
  if (h->timer_handler.errors != errors) count_error_at(h, t->where);
  h->call_where = outer;
  t->firing = 0;
}

/* Reschedule a periodic timer after it fired, the time being `now`.
 * Deadlines never wrap: a timer whose next deadline would pass 2^64-1 has
 * fired for the last time (a corrupt stream's timestamp near 2^64 must not
 * make it fire forever). */
static void reschedule(el_host_t *h, el__theap_t *hp, el__timer_t *t,
                       uint64_t now) {
  if (t->deadline > UINT64_MAX - t->interval) {
    release(h, t);
    return;
  }
  t->deadline += t->interval;
  if (t->deadline <= now && (now - t->deadline) / t->interval > MAX_CATCHUP) {
    uint64_t k = (now - t->deadline) / t->interval;  /* k * interval <=
                                                         now - deadline */
    h->st.timer_skipped += k;
    t->deadline += k * t->interval;
  }
  if (heap_push(hp, t) != 0) release(h, t);
}

void el__timers_rebase(el_host_t *h, uint64_t t0) {
  el__theap_t *hp = &h->evt_timers;
  int n = hp->n;
  el__timer_t **v = hp->v;
  hp->v = NULL;
  hp->n = 0;
  hp->cap = 0;
  for (int i = 0; i < n; i++) {
    el__timer_t *t = v[i];
    t->in_heap = 0;
    if (t->cancelled) {
      release(h, t);
      continue;
    }
    if (t->interval) {
      uint64_t k = t0 / t->interval;
      t->deadline = k >= UINT64_MAX / t->interval ? UINT64_MAX
                                                   : (k + 1) * t->interval;
    }
    if (heap_push(hp, t) != 0) release(h, t);
  }
  el_free(v);
  update_next(h);
}

void el__timers_fire(el_host_t *h) {
  el__theap_t *hp = &h->evt_timers;
  while (hp->n && hp->v[0]->deadline <= h->now && !h->stop && !h->interrupted) {
    el__timer_t *t = heap_pop(hp);
    if (t->cancelled) {
      release(h, t);
      continue;
    }
    fire(h, t, t->deadline);
    if (t->interval && !t->cancelled)
      reschedule(h, hp, t, h->now);
    else
      release(h, t);
  }
  update_next(h);
}

int64_t el_host_run_wall_timers(el_host_t *h, uint64_t now_ms) {
  el__theap_t *hp = &h->wall_timers;
  /* After a stop (a signal's el_host_interrupt, a --fail-fast error) no
   * callback starts: the source may still be draining a FIFO, whose bound
   * a looping callback would otherwise hold off (docs/lua-api.md §4). */
  if (h->stop || h->interrupted) return -1;
  el__batch_flush(h);  /* a quiet live stream: queued events go out now */
  /* and the events held for a capability silent since */
  el__ana_release(h);
  if (h->order) {
    /* The horizon moves with the wall clock: held events may be due. */
    h->prog.wm_dirty = 1;
    el__order_release(h, 0);
    el__batch_flush(h); /* those released now go out now */
  }
  while (hp->n && hp->v[0]->deadline <= now_ms && !h->stop && !h->interrupted) {
    el__timer_t *t = heap_pop(hp);
    if (t->cancelled) {
      release(h, t);
      continue;
    }
    fire(h, t, unix_now_ns());
    if (t->interval && !t->cancelled)
      reschedule(h, hp, t, now_ms);
    else
      release(h, t);
  }
  while (hp->n && hp->v[0]->cancelled) release(h, heap_pop(hp));
  return hp->n ? (int64_t)(hp->v[0]->deadline - now_ms) : -1;
}

static void warn_unfired(const el__theap_t *hp) {
  for (int i = 0; i < hp->n; i++) {
    const el__timer_t *t = hp->v[i];
    if (t->cancelled || t->fired || !t->session_end) continue;
    el_log(EL_LOG_WARN,
           "timer (%s): made in on_session_end, never fired: no session "
           "followed before the input ended (end-of-input work goes in "
           "on_end)",
           t->where);
  }
}

void el__timers_warn_unfired(el_host_t *h) {
  if (h->stop || h->interrupted) return; /* no timer runs after a stop */
  warn_unfired(&h->evt_timers);
  warn_unfired(&h->wall_timers);
}

/* {====== Lua side ======} */

typedef struct {
  el__timer_t *t;
} tbox_t;

/* "file.lua:12" of the Lua code calling the running C function into
 * buf, or "?" when a C function called it. */
void el__host_caller_where(lua_State *L, char *buf, size_t size) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) &&
      ar.currentline > 0)
    snprintf(buf, size, "%s:%d", ar.short_src, ar.currentline);
  else
    snprintf(buf, size, "?");
}

/* A timer made once the input has ended (in on_end) would never fire:
 * said as an error (docs/lua-api.md §4). */
static int add_timer(lua_State *L, const char *fn, int wall, uint64_t deadline,
                     uint64_t interval, int fn_idx) {
  el_host_t *h = el__host_from(L);
  luaL_checktype(L, fn_idx, LUA_TFUNCTION);
  if (h->ended)
    return luaL_error(L,
                      "%s: the input has ended (on_end or later): no event or "
                      "wall-clock tick will come, the timer would never "
                      "fire",
                      fn);
  tbox_t *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->t = NULL;
  luaL_setmetatable(L, TIMER_MT);
  el__timer_t *t = el_calloc(1, sizeof *t);
  if (!t) return luaL_error(L, "out of memory");
  t->deadline = deadline;
  t->interval = interval;
  t->seq = ++h->timer_seq;
  t->wall = wall;
  t->has_ud = 1;
  t->session_end = h->in_end_hooks; /* on_end is refused above */
  el__host_caller_where(L, t->where, sizeof t->where);
  box->t = t;
  el__theap_t *hp = wall ? &h->wall_timers : &h->evt_timers;
  if (heap_push(hp, t) != 0) return luaL_error(L, "out of memory");
  lua_pushvalue(L, fn_idx);
  t->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (!wall) update_next(h);
  return 1;
}

/* el.every(interval_ns, fn) -> timer [-0, +1, m] */
static int tm_every(lua_State *L) {
  el_host_t *h = el__host_from(L);
  lua_Integer iv = luaL_checkinteger(L, 1);
  luaL_argcheck(L, iv > 0, 1, "interval must be > 0");
  uint64_t k = h->now / (uint64_t)iv;
  uint64_t d = k >= UINT64_MAX / (uint64_t)iv ? UINT64_MAX
                                               : (k + 1) * (uint64_t)iv;
  return add_timer(L, "el.every", 0, d, (uint64_t)iv, 2);
}

/* el.at(t_ns, fn) -> timer [-0, +1, v] */
static int tm_at(lua_State *L) {
  lua_Integer t = luaL_checkinteger(L, 1);
  luaL_argcheck(L, t >= 0, 1, "time must be >= 0");
  return add_timer(L, "el.at", 0, (uint64_t)t, 0, 2);
}

/* el.every_wall(interval_ms, fn) -> timer [-0, +1, v] */
static int tm_every_wall(lua_State *L) {
  lua_Integer iv = luaL_checkinteger(L, 1);
  luaL_argcheck(L, iv > 0, 1, "interval must be > 0");
  return add_timer(L, "el.every_wall", 1, el_host_clock_ms() + (uint64_t)iv,
                   (uint64_t)iv, 2);
}

/* el.after_wall(ms, fn) -> timer [-0, +1, v] */
static int tm_after_wall(lua_State *L) {
  lua_Integer ms = luaL_checkinteger(L, 1);
  luaL_argcheck(L, ms >= 0, 1, "delay must be >= 0");
  return add_timer(L, "el.after_wall", 1, el_host_clock_ms() + (uint64_t)ms, 0,
                   2);
}

/* [-0, +0, v] timer:cancel() */
static int tm_cancel(lua_State *L) {
  tbox_t *box = luaL_checkudata(L, 1, TIMER_MT);
  if (box->t) box->t->cancelled = 1;
  return 0;
}

/* [-0, +0, -] __gc: drop the userdata's hold on the timer. */
static int tm_gc(lua_State *L) {
  tbox_t *box = luaL_checkudata(L, 1, TIMER_MT);
  el__timer_t *t = box->t;
  box->t = NULL;
  if (!t) return 0;
  t->has_ud = 0;
  if (!t->in_heap && !t->firing) el_free(t);
  return 0;
}

/* [-0, +0, -] __close: cancel, then release. */
static int tm_close(lua_State *L) {
  tm_cancel(L);
  return tm_gc(L);
}

/* [-0, +1, m] __tostring. */
static int tm_tostring(lua_State *L) {
  tbox_t *box = luaL_checkudata(L, 1, TIMER_MT);
  if (!box->t)
    lua_pushliteral(L, "timer (released)");
  else
    lua_pushfstring(L, "timer (%s, deadline %I%s)",
                    box->t->wall ? "wall" : "eventlog",
                    (lua_Integer)box->t->deadline,
                    box->t->cancelled ? ", cancelled" : "");
  return 1;
}

static const luaL_Reg tm_funcs[] = {{"every", tm_every},
                                    {"at", tm_at},
                                    {"every_wall", tm_every_wall},
                                    {"after_wall", tm_after_wall},
                                    {NULL, NULL}};

static const luaL_Reg tm_meta[] = {{"__gc", tm_gc},
                                   {"__close", tm_close},
                                   {"__tostring", tm_tostring},
                                   {"cancel", tm_cancel},
                                   {NULL, NULL}};

/* Add the timer functions to the module table on top. [-0, +0, m] */
void el__lua_time_register(lua_State *L) {
  luaL_setfuncs(L, tm_funcs, 0);
  if (luaL_newmetatable(L, TIMER_MT)) {
    luaL_setfuncs(L, tm_meta, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
