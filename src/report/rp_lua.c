/* rp_lua.c: the Lua module `eventlog_live.report.native` (report.h,
 * el_rp_lua_register): what the report's own script
 * (lua/eventlog_live/report/main.lua) and the section API for user
 * scripts (lua/eventlog_live/report.lua) hand to the reducer. Times are
 * Unix ns (the scripts convert eventlog times with el.unix_ns at the
 * call): census and series points given while the session's clock may
 * still move are held and moved to its final clock (rp_clock.c). Misuse
 * (a wrong argument type) raises; docs/report.md "Lua API". */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "rp_internal.h"

static el_rp_t *self(lua_State *L) {
  return lua_touserdata(L, lua_upvalueindex(1));
}

static uint64_t check_unix(lua_State *L, int i) {
  lua_Integer t = luaL_checkinteger(L, i);
  return t > 0 ? (uint64_t)t : 0;
}

/* A string field of the table at idx, copied, or NULL. */
static char *field_str(lua_State *L, int idx, const char *k) {
  char *s = NULL;
  if (lua_getfield(L, idx, k) == LUA_TSTRING)
    s = el_strdup(lua_tostring(L, -1));
  lua_pop(L, 1);
  return s;
}

static int64_t field_int(lua_State *L, int idx, const char *k, int64_t d) {
  int isnum = 0;
  lua_getfield(L, idx, k);
  lua_Integer v = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  return isnum ? (int64_t)v : d;
}

/* An array of strings at field k joined with sep, or NULL. */
static char *field_join(lua_State *L, int idx, const char *k, const char *sep,
                        char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  if (lua_getfield(L, idx, k) == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n && used + 1 < size; i++) {
      lua_geti(L, -1, i);
      const char *s = lua_tostring(L, -1);
      if (s)
        used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                 i > 1 ? sep : "", s);
      lua_pop(L, 1);
      if (used >= size) used = size - 1;
    }
  }
  lua_pop(L, 1);
  return buf;
}

/* The place of session `number` (rp_span_t), added on first use; NULL
 * beyond RP_MAX_SESSIONS. */
static rp_span_t *span_of(el_rp_t *rp, uint64_t number) {
  for (size_t i = rp->nspans; i-- > 0;)
    if (rp->spans[i].number == number) return &rp->spans[i];
  if (rp->nspans >= RP_MAX_SESSIONS) return NULL;
  rp_span_t *sp = &rp->spans[rp->nspans++];
  sp->number = number;
  sp->pid = -1;
  return sp;
}

/* Note in sp what the session table at idx says of the session: its
 * start (Unix ns), clock, program arguments, pid and breakdown. */
static void span_from(lua_State *L, int idx, rp_span_t *sp) {
  int64_t start = field_int(L, idx, "start_unix_ns", 0);
  if (start > 0) sp->start_unix_ns = (uint64_t)start;
  char *clock = field_str(L, idx, "clock");
  if (clock) sp->estimated = strcmp(clock, "exact") != 0;
  el_free(clock);
  char buf[4096];
  field_join(L, idx, "args", " ", buf, sizeof buf);
  if (buf[0]) {
    char *a = el_strdup(buf);
    if (a) {
      el_free(sp->args);
      sp->args = a;
    }
  }
  sp->pid = field_int(L, idx, "pid", sp->pid);
  char *bd = field_str(L, idx, "heap_prof_breakdown");
  if (bd) snprintf(sp->breakdown, sizeof sp->breakdown, "%s", bd);
  el_free(bd);
}

/* native.session(s [, end_unix_ns]): the session table el.session
 * (docs/lua-api.md §3), as it becomes known and at its end, when
 * end_unix_ns is its last event's Unix time. The first session is kept
 * for the header; every session is placed on the page's axis, with its
 * program (rp_span_t). [-0, +0, e] */
static int l_session(lua_State *L) {
  el_rp_t *rp = self(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  uint64_t number = (uint64_t)field_int(L, 1, "number", 1);
  lua_Integer end = luaL_optinteger(L, 2, 0);
  rp_span_t *sp = span_of(rp, number);
  if (sp) {
    span_from(L, 1, sp);
    if (end > 0) sp->end_unix_ns = (uint64_t)end;
  }
  if (number > rp->sessions) rp->sessions = number;
  if (rp->session.number && rp->session.number != number) return 0;
  rp_session_t *s = &rp->session;
  el__rp_session_clear(s);
  s->number = number;
  s->rts_version = field_str(L, 1, "rts_version");
  s->ghc_version = field_str(L, 1, "ghc_version");
  s->clock = field_str(L, 1, "clock");
  s->clock_from = field_str(L, 1, "clock_from");
  char buf[4096];
  field_join(L, 1, "args", " ", buf, sizeof buf);
  s->args = buf[0] ? el_strdup(buf) : NULL;
  field_join(L, 1, "caps", ", ", s->caps, sizeof s->caps);
  s->pid = field_int(L, 1, "pid", -1);
  int64_t st = field_int(L, 1, "start_unix_ns", 0);
  s->start_unix_ns = st > 0 ? (uint64_t)st : 0;
  if (s->start_unix_ns) rp->origin = s->start_unix_ns;
  char *bd = field_str(L, 1, "heap_prof_breakdown");
  if (bd && !rp->heap.breakdown[0])
    snprintf(rp->heap.breakdown, sizeof rp->heap.breakdown, "%s", bd);
  el_free(bd);
  /* heap_prof_interval_ns is set by HEAP_PROF_BEGIN alone (0 for -i0). */
  int64_t iv = field_int(L, 1, "heap_prof_interval_ns", -1);
  if (iv >= 0) rp->heap.begun = true;
  if (iv > 0 && !rp->heap.interval_ns) rp->heap.interval_ns = (uint64_t)iv;
  return 0;
}

/* native.census_begin(unix_ns): a heap census began. [-0, +0, v] */
static int l_census_begin(lua_State *L) {
  el_rp_t *rp = self(L);
  uint64_t t = check_unix(L, 1);
  if (el__rp_take_census_begin(rp, t) < 0)
    return luaL_error(L, "out of memory");
  return 0;
}

/* native.census_sample(unix_ns, label, bytes): one band of the census
 * begun last. [-0, +0, v] */
static int l_census_sample(lua_State *L) {
  el_rp_t *rp = self(L);
  uint64_t t = check_unix(L, 1);
  size_t len;
  const char *label = luaL_checklstring(L, 2, &len);
  double bytes = (double)luaL_checknumber(L, 3);
  if (el__rp_take_census_sample(rp, t, label, len, bytes) < 0)
    return luaL_error(L, "out of memory");
  return 0;
}

static int cmp_thread_run(const void *a, const void *b) {
  const rp_thread_t *x = a, *y = b;
  if (x->running_ns != y->running_ns)
    return x->running_ns < y->running_ns ? 1 : -1;
  if (x->session != y->session) return x->session < y->session ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Read row i of the tracker list at idx into t. */
static void thread_row(lua_State *L, int idx, rp_thread_t *t) {
  memset(t, 0, sizeof *t);
  t->id = (uint64_t)field_int(L, idx, "thread", 0);
  t->label = field_str(L, idx, "label");
  t->state = field_str(L, idx, "state");
  t->created_t = field_int(L, idx, "created_t", -1);
  t->finished_t = field_int(L, idx, "finished_t", -1);
  t->first_t = field_int(L, idx, "first_t", -1);
  t->last_t = field_int(L, idx, "last_t", -1);
  t->running_ns = (uint64_t)field_int(L, idx, "running_ns", 0);
  t->blocked_ns = (uint64_t)field_int(L, idx, "blocked_ns", 0);
  t->runs = (uint64_t)field_int(L, idx, "runs", 0);
  t->cap = field_int(L, idx, "cap", -1);
  t->status = field_str(L, idx, "status_name");
}

/* native.threads(list, session, start_unix_ns): the el.threads():list()
 * rows (docs/lua-api.md §6) of one session (el.session.number; a thread
 * id names another thread in each session), each with status_name added;
 * their times are eventlog ns of that session, whose RTS started at
 * start_unix_ns (0: unknown). Added to the rows of earlier sessions: the
 * RP_MAX_ROWS that ran longest of all sessions are kept, the total
 * counted. [-0, +0, m] */
static int l_threads(lua_State *L) {
  el_rp_t *rp = self(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer session = luaL_optinteger(L, 2, 1);
  lua_Integer start = luaL_optinteger(L, 3, 0);
  lua_Integer n = luaL_len(L, 1);
  if (n <= 0) return 0;
  size_t have = rp->nthreads;
  rp_thread_t *v = el_realloc(rp->threads, (have + (size_t)n) * sizeof *v);
  if (!v) return luaL_error(L, "out of memory");
  rp->threads = v;
  for (lua_Integer i = 1; i <= n; i++) {
    rp_thread_t *t = &v[have + (size_t)i - 1];
    memset(t, 0, sizeof *t);
    lua_geti(L, 1, i);
    if (lua_istable(L, -1)) thread_row(L, lua_gettop(L), t);
    lua_pop(L, 1);
    t->session = session > 0 ? (uint64_t)session : 0;
    t->start_unix_ns = start > 0 ? (uint64_t)start : 0;
  }
  rp->threads_total += (uint64_t)n;
  size_t all = have + (size_t)n;
  qsort(v, all, sizeof *v, cmp_thread_run);
  size_t keep = all < RP_MAX_ROWS ? all : RP_MAX_ROWS;
  for (size_t i = keep; i < all; i++) el__rp_thread_clear(&v[i]);
  rp->nthreads = keep;
  return 0;
}

static rp_section_t *check_section(lua_State *L, int i, int kind) {
  el_rp_t *rp = self(L);
  lua_Integer id = luaL_checkinteger(L, i);
  if (id < 1 || (size_t)id > rp->nsections ||
      rp->sections[id - 1]->kind != kind)
    luaL_argerror(L, i, "not a section of this kind");
  return rp->sections[id - 1];
}

/* native.series(title, unit, description) -> id. [-0, +1, m] */
static int l_series(lua_State *L) {
  el_rp_t *rp = self(L);
  const char *title = luaL_checkstring(L, 1);
  const char *unit = luaL_optstring(L, 2, NULL);
  const char *desc = luaL_optstring(L, 3, NULL);
  int id = el__rp_section_series(rp, title, unit, desc);
  if (id < 0) {
    luaL_pushfail(L);
    lua_pushstring(L, rp->nsections >= RP_MAX_SECTIONS ? "too many sections"
                                                       : "out of memory");
    return 2;
  }
  lua_pushinteger(L, id + 1);
  return 1;
}

/* The array of line `name` of s, added on first use; -1 when
 * RP_MAX_LINES are taken or out of memory. */
static int line_of(rp_section_t *s, const char *name) {
  for (size_t i = 0; i < s->nlines; i++)
    if (strcmp(s->lines[i], name) == 0) return (int)i;
  if (s->nlines >= RP_MAX_LINES) return -1;
  char *copy = el_strdup(name);
  if (!copy) return -1;
  int a = el__rp_cols_add_array(&s->cols);
  if (a < 0) {
    el_free(copy);
    return -1;
  }
  s->lines[s->nlines++] = copy;
  return a;
}

/* native.point(id, line, unix_ns, value). [-0, +0, v] */
static int l_point(lua_State *L) {
  el_rp_t *rp = self(L);
  rp_section_t *s = check_section(L, 1, 0);
  const char *line = luaL_checkstring(L, 2);
  uint64_t t = check_unix(L, 3);
  double v = (double)luaL_checknumber(L, 4);
  int a = line_of(s, line);
  if (a < 0) {
    s->dropped++;
    return 0;
  }
  size_t id = (size_t)lua_tointeger(L, 1) - 1;
  if (el__rp_take_point(rp, id, (size_t)a, t, v) < 0)
    return luaL_error(L, "out of memory");
  return 0;
}

/* Copy the cell on top of the stack. */
static void cell_of(lua_State *L, rp_cell_t *c) {
  memset(c, 0, sizeof *c);
  int ty = lua_type(L, -1);
  if (ty == LUA_TNUMBER) {
    c->is_num = true;
    c->num = (double)lua_tonumber(L, -1);
  } else if (ty != LUA_TNIL) {
    const char *s = luaL_tolstring(L, -1, NULL);
    c->str = el_strdup(s);
    lua_pop(L, 1);
  }
}

/* native.table(title, description, columns, rows): rows is an array of
 * arrays (cells: numbers, strings, nil; other values via tostring). At
 * most RP_MAX_COLUMNS columns and RP_MAX_ROWS rows are kept. [-0, +1, m] */
static int l_table(lua_State *L) {
  el_rp_t *rp = self(L);
  const char *title = luaL_checkstring(L, 1);
  const char *desc = luaL_optstring(L, 2, NULL);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_checktype(L, 4, LUA_TTABLE);
  int id = el__rp_section_table(rp, title, desc);
  if (id < 0) {
    luaL_pushfail(L);
    lua_pushstring(L, "too many sections or out of memory");
    return 2;
  }
  rp_section_t *s = rp->sections[id];
  lua_Integer nc = luaL_len(L, 3), nr = luaL_len(L, 4);
  if (nc > RP_MAX_COLUMNS) nc = RP_MAX_COLUMNS;
  for (lua_Integer i = 1; i <= nc; i++) {
    lua_geti(L, 3, i);
    s->columns[s->ncolumns++] = el_strdup(luaL_tolstring(L, -1, NULL));
    lua_pop(L, 2);
  }
  size_t keep = nr < 0                     ? 0
                : (size_t)nr < RP_MAX_ROWS ? (size_t)nr
                                           : RP_MAX_ROWS;
  s->omitted = nr > 0 ? (uint64_t)nr - keep : 0;
  if (keep && s->ncolumns) {
    s->cells = el_calloc(keep * s->ncolumns, sizeof *s->cells);
    if (!s->cells) return luaL_error(L, "out of memory");
    for (size_t r = 0; r < keep; r++) {
      lua_geti(L, 4, (lua_Integer)r + 1);
      for (size_t c = 0; c < s->ncolumns && lua_istable(L, -1); c++) {
        lua_geti(L, -1, (lua_Integer)c + 1);
        cell_of(L, &s->cells[r * s->ncolumns + c]);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      s->nrows++;
    }
  }
  lua_pushinteger(L, id + 1);
  return 1;
}

/* native.mutator_spans() -> Mutator spans reduced so far. [-0, +1, -] */
static int l_mutator_spans(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)self(L)->time.mut_spans);
  return 1;
}

static const luaL_Reg funcs[] = {{"session", l_session},
                                 {"census_begin", l_census_begin},
                                 {"census_sample", l_census_sample},
                                 {"threads", l_threads},
                                 {"mutator_spans", l_mutator_spans},
                                 {"series", l_series},
                                 {"point", l_point},
                                 {"table", l_table},
                                 {NULL, NULL}};

/* The preload loader: builds the module table. [-0, +1, m] */
static int open_native(lua_State *L) {
  luaL_newlibtable(L, funcs);
  lua_pushvalue(L, lua_upvalueindex(1));
  luaL_setfuncs(L, funcs, 1);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "active");
  return 1;
}

int el_rp_lua_register(el_rp_t *rp, lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushlightuserdata(L, rp);
  lua_pushcclosure(L, open_native, 1);
  lua_setfield(L, -2, "eventlog_live.report.native");
  lua_pop(L, 1);
  return 0;
}
