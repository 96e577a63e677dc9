/* lua_analysis.c: the Lua binding of the C helpers for the high-volume
 * analyses, so scripts need not see every RUN_THREAD/STOP_THREAD:
 * el.threads (per-thread state machine), el.gc (GC spans per capability)
 * and el.cap_usage (Mutator/GC/Idle per capability, usage series,
 * productivity), and their trackers. Implements spec/reference-behaviour.md
 * §5.2.3 through ana_reorder.c (time order), ana_state.c (state machines)
 * and ana_emit.c (spans and points). docs/lua-api.md §6. */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "../common/el_grow.h"

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

/* qsort: finished threads by finish time, then id (the oldest first). */
static int cmp_finish(const void *x, const void *y) {
  const thread_t *a = *(const thread_t *const *)x;
  const thread_t *b = *(const thread_t *const *)y;
  if (a->finished_t != b->finished_t)
    return a->finished_t < b->finished_t ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* tracker:list() -> array of thread tables, ascending by thread id
 * [-0, +1, m]. Of the finished threads only the keep_finished that
 * finished last are listed: the table forgets the older ones in batches
 * (ana_state.c), but what a script sees keeps to the bound. The table
 * itself is not reordered (a span in progress may hold a thread of it
 * when on_span calls this). */
static int tr_list(lua_State *L) {
  el_host_t *h = el__host_from(L);
  ana_t *a = h->ana;
  luaL_checkudata(L, 1, TRACKER_MT);
  lua_createtable(L, a ? (int)a->nthreads : 0, 0);
  if (!a || !a->nthreads) return 1;
  const thread_t **v = lua_newuserdatauv(L, a->nthreads * sizeof *v, 0);
  size_t n = 0, nfin = 0;
  for (size_t j = 0; j < a->nthreads; j++)
    if (a->threads[j].state == TS_FINISHED) v[nfin++] = &a->threads[j];
  /* v[0..nfin): finished; the oldest beyond keep_finished are left out */
  if (nfin > a->keep_finished) {
    qsort(v, nfin, sizeof *v, cmp_finish);
    memmove(v, v + (nfin - a->keep_finished), a->keep_finished * sizeof *v);
    nfin = a->keep_finished;
  }
  n = nfin;
  for (size_t j = 0; j < a->nthreads; j++)
    if (a->threads[j].state != TS_FINISHED) v[n++] = &a->threads[j];
  qsort(v, n, sizeof *v, cmp_thread);
  for (size_t j = 0; j < n; j++) {
    push_thread(L, v[j]);
    lua_rawseti(L, -3, (lua_Integer)j + 1);
  }
  lua_pop(L, 1);
  return 1;
}

/* tracker:get(thread) -> table, or nil for a thread the table does not
 * hold [-0, +1, m] */
static int tr_get(lua_State *L) {
  el_host_t *h = el__host_from(L);
  luaL_checkudata(L, 1, TRACKER_MT);
  lua_Integer id = luaL_checkinteger(L, 2);
  thread_t *t = h->ana ? el__ana_thread(h->ana, (uint32_t)id, 0) : NULL;
  if (!t) {
    lua_pushnil(L); /* one value, as el.type_info's */
    return 1;
  }
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
    cp->plen = 0;
    el__ana_prod_call(h, (unsigned)c, cp->pt, cp->ppm, cp->ppg);
  }
  for (size_t k = 0; k < a->nudirty; k++) {
    size_t i = a->udirty[k];
    if (!a->us[i].dirty) continue;
    a->us[i].dirty = 0;
    a->us[i].wlen = 0;
    el__ana_upoint_call(h, i, a->us[i].t, a->us[i].total);
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
  /* Beyond max_cap every capability's totals are 0 (el__ana_session). */
  for (int c = 0; a && c <= a->max_cap; c++) {
    cap_t *cp = &a->caps[c];
    cp->pm = cp->pg = cp->ppm = cp->ppg = 0;
    cp->pdirty = 0;
    cp->plen = 0;
  }
  return 0;
}

/* tracker:release_finished() -> array of the usage series indexes (as
 * given to on_point) freed: the thread series whose thread has finished
 * (or was forgotten) at or before el__ana_settled (no capability's
 * earlier run of it can still come) and whose last point on_point has
 * had. Their slots
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
  uint64_t settled = el__ana_settled(h);
  for (size_t j = 0; j < a->nus; j++) {
    ustate_t *u = &a->us[j];
    if (!u->used || u->dirty || (u->key >> 32 & 3) != CAT_MUT) continue;
    const thread_t *t = el__ana_thread(a, (uint32_t)(u->key & 0xffffffffu), 0);
    if (t && (t->state != TS_FINISHED || t->finished_t > settled)) continue;
    if (el_grow(&a->ufree, &a->ufree_cap, a->nufree + 1, sizeof *a->ufree))
      break; /* the rest next time */
    u->used = 0;
    u->key = USTATE_FREE; /* no hint holds it */
    a->ufree[a->nufree++] = (uint32_t)j;
    a->nusers--;
    lua_pushinteger(L, (lua_Integer)j + 1);
    lua_rawseti(L, -2, ++n);
  }
  if (n) {
    el__ana_umap_rebuild(a);
    el__ana_users_changed(a); /* room for thread series again */
  }
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
  h->ana->lo = UINT64_MAX;
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

/* opts.on_span: one more callback of the kind (fn: "el.threads", ...). */
static void opt_on_span(lua_State *L, ana_t *a, int kind, const char *fn) {
  if (lua_getfield(L, 1, "on_span") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  el__field_function(L, fn, "on_span");
  if (a->ncb[kind] >= 16) luaL_error(L, "too many trackers");
  a->cb[kind][a->ncb[kind]++] = luaL_ref(L, LUA_REGISTRYINDEX);
  el__ana_features(a);
}

/* opts.keep_finished, opts.max_users: integers >= 0. */
static void opt_limits(lua_State *L, ana_t *a, const char *fn) {
  static const char *const opt[] = {"keep_finished", "max_users"};
  size_t *dst[] = {&a->keep_finished, &a->max_users};
  for (int k = 0; k < 2; k++) {
    if (lua_getfield(L, 1, opt[k]) != LUA_TNIL) {
      lua_Integer v = el__field_integer(L, fn, opt[k]);
      if (v < 0)
        luaL_error(L, "%s: option '%s' must be >= 0 (got %I)", fn, opt[k], v);
      *dst[k] = (size_t)v;
      el__ana_users_changed(a); /* max_users may have moved up */
    }
    lua_pop(L, 1);
  }
}

/* opts[name] (on_point or on_productivity): the one callback of kind per
 * host, with its aggregation window opts[agg_name] (ns >= 0) into *agg. */
static void opt_point_cb(lua_State *L, ana_t *a, int kind, const char *name,
                         const char *agg_name, int64_t *agg) {
  const char *fn = "el.cap_usage";
  lua_getfield(L, 1, agg_name); /* checked with or without the callback */
  lua_Integer v = el__field_opt_integer(L, fn, agg_name, 0);
  lua_pop(L, 1);
  if (v < 0)
    luaL_error(L, "%s: option '%s' must be >= 0 (got %I)", fn, agg_name, v);
  if (lua_getfield(L, 1, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  el__field_function(L, fn, name);
  if (a->ncb[kind] >= 1) luaL_error(L, "%s: only one %s per host", fn, name);
  *agg = v;
  a->cb[kind][a->ncb[kind]++] = luaL_ref(L, LUA_REGISTRYINDEX);
  el__ana_features(a);
}

/* opts.spans: the base name of the native spans of cap_usage or threads. */
static void opt_spans(lua_State *L, ana_t *a, int kind, const char *fn) {
  if (lua_getfield(L, 1, "spans") != LUA_TNIL) {
    const char *base = el__field_string(L, fn, "spans", NULL);
    char **names = kind == TK_CAPS ? a->cap_names : a->th_names;
    const char *sfx[2][2] = {{" GC", " Mutator"}, {" Running", " Blocked"}};
    for (int i = 0; i < 2; i++) {
      const char *x = sfx[kind == TK_CAPS ? 0 : 1][i];
      size_t n = strlen(base), m = strlen(x);
      char *p = el_malloc(n + m + 1);
      if (!p) luaL_error(L, "out of memory");
      memcpy(p, base, n);
      memcpy(p + n, x, m + 1);
      el_free(names[i]);
      names[i] = p;
      el__ana_features(a);
    }
  }
  lua_pop(L, 1);
}

/* The option keys each constructor reads (new_tracker), by kind. */
static const char *const *tracker_keys(int kind) {
  static const char *const threads[] = {"on_span", "keep_finished", "max_users",
                                        "spans", NULL};
  static const char *const gc[] = {"on_span", "keep_finished", "max_users",
                                   NULL};
  static const char *const caps[] = {"on_span",
                                     "keep_finished",
                                     "max_users",
                                     "spans",
                                     "on_point",
                                     "aggregate_ns",
                                     "on_productivity",
                                     "productivity_aggregate_ns",
                                     NULL};
  return kind == TK_THREADS ? threads : kind == TK_GC ? gc : caps;
}

static int new_tracker(lua_State *L, int kind) {
  static const char *const fn[] = {"el.threads", "el.gc", "el.cap_usage"};
  el_host_t *h = el__host_from(L);
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    el__lua_check_keys(L, 1, fn[kind], "option", tracker_keys(kind));
  }
  enable(L, h);
  ana_t *a = h->ana;
  if (!lua_isnoneornil(L, 1)) {
    opt_on_span(L, a, kind, fn[kind]);
    opt_limits(L, a, fn[kind]);
    if (kind == TK_CAPS) {
      opt_point_cb(L, a, TK_POINTS, "on_point", "aggregate_ns", &a->uagg);
      opt_point_cb(L, a, TK_PROD, "on_productivity",
                   "productivity_aggregate_ns", &a->pagg);
    }
    if (kind == TK_CAPS || kind == TK_THREADS) opt_spans(L, a, kind, fn[kind]);
  }
  a->made[kind]++;
  el__ana_features(a); /* el.threads and el.gc need time order */
  el__direct_sync(h, -1);
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
