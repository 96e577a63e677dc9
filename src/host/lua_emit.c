/* lua_emit.c: the emit API over the telemetry store (telemetry.h):
 * metric instruments and data points, log records, spans, profile samples,
 * resource attributes. docs/lua-api.md §5. Everything passed to the store
 * is borrowed for the call (the store copies), so attribute arrays live
 * on the C stack and point into Lua strings kept alive by the arguments. */
#include <string.h>

#include "host_internal.h"

#define METRIC_MT "el.Metric"
#define MAX_ATTRS 64
#define MAX_LIST_ITEMS 256
#define MAX_FRAMES 512

typedef struct {
  el_tm_attr_t a[MAX_ATTRS];
  el_strview_t items[MAX_LIST_ITEMS];
  size_t n, nitems;
} attrs_t;

/* {====== helpers ======} */

static int no_store(lua_State *L) {
  lua_pushnil(L);
  lua_pushliteral(L, "no telemetry store");
  return 2;
}

static int result(lua_State *L, int rc) {
  if (rc == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_pushstring(L, el_strerror(rc));
  return 2;
}

/* Sort a[0..n) by key (insertion sort: a handful of attributes). */
static void sort_attr_array(el_tm_attr_t *a, size_t n) {
  for (size_t i = 1; i < n; i++) {
    el_tm_attr_t x = a[i];
    size_t j = i;
    while (j > 0 && strcmp(a[j - 1].key, x.key) > 0) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

static void sort_attrs(attrs_t *as) { sort_attr_array(as->a, as->n); }

static void list_attr(lua_State *L, attrs_t *as, el_tm_attr_t *a, int vi,
                      const char *fn) {
  a->type = EL_TM_STRLIST;
  a->v.list.items = &as->items[as->nitems];
  a->v.list.n = 0;
  lua_Integer n = luaL_len(L, vi), keys = 0;
  /* A map (or a list with other keys) has no OTLP form here: it would
   * go out as an empty or partial list. */
  lua_pushnil(L);
  while (lua_next(L, vi)) {
    keys++;
    lua_pop(L, 1);
  }
  if (keys != n)
    luaL_error(L,
               "%s: attribute '%s': a table value must be a list of strings "
               "(keys 1..n), not a map",
               fn, a->key);
  for (lua_Integer i = 1; i <= n; i++) {
    if (as->nitems >= MAX_LIST_ITEMS)
      luaL_error(L, "%s: too many attribute list items (max %d)", fn,
                 MAX_LIST_ITEMS);
    lua_rawgeti(L, vi, i);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: attribute '%s': list items must be strings", fn,
                 a->key);
    el_strview_t *s = &as->items[as->nitems++];
    s->p = lua_tolstring(L, -1, &s->len);
    lua_pop(L, 1);  /* still referenced by the list table */
    a->v.list.n++;
  }
}

/* The string, number or boolean at the top of the stack into attribute
 * *a (a string stays referenced by the stack slot). Returns 0, or -1 for
 * any other type (*a's value unset). [-0, +0, -] */
static int scalar_attr(lua_State *L, el_tm_attr_t *a) {
  switch (lua_type(L, -1)) {
  case LUA_TSTRING:
    a->type = EL_TM_STR;
    a->v.s.p = lua_tolstring(L, -1, &a->v.s.len);
    return 0;
  case LUA_TNUMBER:
    if (lua_isinteger(L, -1)) {
      a->type = EL_TM_INT;
      a->v.i = lua_tointeger(L, -1);
    } else {
      a->type = EL_TM_DOUBLE;
      a->v.d = lua_tonumber(L, -1);
    }
    return 0;
  case LUA_TBOOLEAN:
    a->type = EL_TM_BOOL;
    a->v.b = lua_toboolean(L, -1);
    return 0;
  default:
    return -1;
  }
}

/* Fill *as from the attribute table at idx (nil = none) of the function
 * fn ("el.log", ...: the prefix of its errors). Keys are non-empty
 * strings, at most MAX_ATTRS of them (docs/lua-api.md §5 "Attributes").
 * Strings stay valid while the table is on the stack. [-0, +0, v] */
static void get_attrs(lua_State *L, int idx, attrs_t *as, const char *fn) {
  as->n = as->nitems = 0;
  if (lua_isnoneornil(L, idx)) return;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    luaL_error(L, "%s: attributes must be a table (got %s)", fn,
               luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: attribute keys must be strings (got %s)", fn,
                 luaL_typename(L, -2));
    if (as->n >= MAX_ATTRS)
      luaL_error(L, "%s: too many attributes (max %d)", fn, MAX_ATTRS);
    el_tm_attr_t *a = &as->a[as->n++];
    a->key = lua_tostring(L, -2);
    if (!*a->key) luaL_error(L, "%s: an attribute key is empty", fn);
    if (lua_type(L, -1) == LUA_TTABLE)
      list_attr(L, as, a, lua_absindex(L, -1), fn);
    else if (scalar_attr(L, a) < 0)
      luaL_error(L, "%s: attribute '%s': unsupported value type %s", fn, a->key,
                 luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  sort_attrs(as);
}

/* A time argument at idx (an integer >= 0, ns), else an error naming
 * the argument. [-0, +0, v] */
static uint64_t check_time_arg(lua_State *L, int idx) {
  lua_Integer v = luaL_checkinteger(L, idx);
  luaL_argcheck(L, v >= 0, idx, "a time must be >= 0 (ns)");
  return (uint64_t)v;
}

/* Eventlog time at argument idx, or the current event's / stream time. */
/* el__host_unix(h, t) for the emitting function fn, which raises while a
 * script loads before any event: no event, stream time or session clock
 * exists to take a time from or convert one with, and 0 would be exported
 * as 1970 (docs/lua-api.md §5 "Times"). unix_hint names what to pass
 * instead. [-0, +0, v] */
static el_unix_ns_t to_unix(lua_State *L, el_host_t *h, el_rts_ns_t t,
                            const char *fn, const char *unix_hint) {
  if (h->loading && h->sess.number == 0)
    luaL_error(L,
               "%s: no time while the script loads (no event, no session "
               "clock yet): pass %s, or emit from a handler, timer or hook",
               fn, unix_hint);
  /* The same before the first session anywhere else (a REPL line, a
   * wall-clock timer while the source waits for its input: h49), rather
   * than a record of 1970. */
  if (h->sess.number == 0 && h->clock.state == EL_HOST_CLOCK_NONE)
    luaL_error(L,
               "%s: no time before the first event (no session clock "
               "yet): pass %s (a wall-clock timer gets the Unix time as "
               "its argument), or emit from an event handler",
               fn, unix_hint);
  return el__host_unix(h, t);
}

static el_rts_ns_t opt_t(lua_State *L, el_host_t *h, int idx) {
  if (!lua_isnoneornil(L, idx)) return check_time_arg(L, idx);
  const el_ev_event_t *ev = el__host_cur(h);
  return ev ? ev->t_ns : h->now;
}

/* Unix time from the fields `unix_key` or `t_key` (eventlog time; neither:
 * the current event's or the stream's time) of the table at tbl, an
 * argument of fn. *t gets the eventlog time the Unix time was converted
 * from, or UINT64_MAX when the field `unix_key` gave it. [-0, +0, v] */
static el_unix_ns_t field_time_t(lua_State *L, el_host_t *h, int tbl,
                                 const char *fn, const char *unix_key,
                                 const char *t_key, el_rts_ns_t *t) {
  el_unix_ns_t u = 0;
  *t = UINT64_MAX;
  if (lua_getfield(L, tbl, unix_key) != LUA_TNIL) {
    u = el__field_time(L, fn, unix_key);
  } else if (lua_getfield(L, tbl, t_key) != LUA_TNIL) {
    *t = el__field_time(L, fn, t_key);
    u = to_unix(L, h, *t, fn, unix_key);
    lua_pop(L, 1);
  } else {
    lua_pop(L, 1);
    *t = opt_t(L, h, 0);
    u = to_unix(L, h, *t, fn, unix_key);
  }
  lua_pop(L, 1);
  return u;
}

/* field_time_t without the eventlog time. [-0, +0, v] */
static el_unix_ns_t field_time(lua_State *L, el_host_t *h, int tbl,
                               const char *fn, const char *unix_key,
                               const char *t_key) {
  el_rts_ns_t t;
  return field_time_t(L, h, tbl, fn, unix_key, t_key, &t);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Read field key of table tbl (an argument of fn) as n bytes of hex into
 * out. Returns 1 if present, 0 if absent; raises on malformed, and on an
 * id of all zeros (invalid in OTLP: "no id"). */
static int field_hex(lua_State *L, int tbl, const char *fn, const char *key,
                     uint8_t *out, size_t n) {
  if (lua_getfield(L, tbl, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  size_t len;
  const char *s = el__field_string(L, fn, key, &len);
  if (len != 2 * n)
    luaL_error(L, "%s: field '%s' must be %d hex digits", fn, key,
               (int)(2 * n));
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
    if (hi < 0 || lo < 0) luaL_error(L, "%s: field '%s' is not hex", fn, key);
    out[i] = (uint8_t)(hi << 4 | lo);
    any |= out[i];
  }
  if (!any)
    luaL_error(L, "%s: field '%s' is all zeros, which OTLP reads as no id", fn,
               key);
  lua_pop(L, 1);
  return 1;
}

static void push_hex(lua_State *L, const uint8_t *b, size_t n) {
  char buf[64];
  static const char d[] = "0123456789abcdef";
  for (size_t i = 0; i < n && i < 32; i++) {
    buf[2 * i] = d[b[i] >> 4];
    buf[2 * i + 1] = d[b[i] & 15];
  }
  lua_pushlstring(L, buf, 2 * n);
}

/* Field k of the table at tbl (an argument of fn): a string, or def when
 * nil. [-0, +0, v] */
static const char *opt_string_field(lua_State *L, int tbl, const char *fn,
                                    const char *k, const char *def) {
  lua_getfield(L, tbl, k);
  const char *s = lua_isnil(L, -1) ? def : el__field_string(L, fn, k, NULL);
  lua_pop(L, 1);  /* the string stays referenced by the table */
  return s;
}

/* {====== metrics ======} */

typedef struct {
  el_tm_metric_desc_t d;
  char *name, *description, *unit;
} metric_t;

static char *dup_opt(const char *s) { return s ? el_strdup(s) : NULL; }

/* The registry key of the table {name = "kind\0where"} of the metrics
 * declared in this Lua state (one per host). */
static const char declared_key = 0;

/* What makes two declarations of one name the same metric: its kind and,
 * for a sum, temporality and monotonicity (OTLP carries them per metric,
 * and a backend keeps one type per name). Written into buf. */
static const char *kind_text(const el_tm_metric_desc_t *d, char *buf,
                             size_t size) {
  static const char *const temps[] = {"unspecified", "delta", "cumulative"};
  if (d->kind != EL_TM_SUM) return "gauge";
  snprintf(buf, size, "sum (%s, %s)", temps[d->temporality % 3],
           d->monotonic ? "monotonic" : "not monotonic");
  return buf;
}

/* A name identifies one metric (OpenTelemetry data model, "Metric
 * identity"): the first declaration of `name` is remembered with its kind
 * and the caller's position; a later one of the same kind is another
 * instrument of that metric, one of another kind an error naming both
 * kinds and where the first was declared. [-0, +0, v] */
static void check_declared(lua_State *L, const char *name,
                           const el_tm_metric_desc_t *d) {
  char buf[64];
  const char *kind = kind_text(d, buf, sizeof buf);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &declared_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &declared_key);
  }
  size_t len;
  if (lua_getfield(L, -1, name) == LUA_TSTRING) {
    const char *old = lua_tolstring(L, -1, &len);
    if (strcmp(old, kind) != 0)
      luaL_error(L,
                 "el.metric: metric '%s' declared as a %s, but it was "
                 "declared as a %s at %s (a name identifies one metric)",
                 name, kind, old, old + strlen(old) + 1);
    lua_pop(L, 2);
    return;
  }
  lua_pop(L, 1);
  luaL_where(L, 1); /* "file.lua:3: ", or "" from C */
  const char *where = lua_tolstring(L, -1, &len);
  if (len >= 2) len -= 2;
  lua_pushstring(L, kind);
  lua_pushlstring(L, "", 1);
  lua_pushlstring(L, len ? where : "?", len ? len : 1);
  lua_concat(L, 3);
  lua_setfield(L, -3, name);
  lua_pop(L, 2);
}

/* el.metric{name=, kind=, unit=, description=, temporality=, monotonic=}
 * -> an instrument. Raises on an unknown field, a bad value, or a name
 * declared before with another kind (check_declared). [-0, +1, v] */
static int em_metric(lua_State *L) {
  static const char *const kinds[] = {"gauge", "sum", NULL};
  /* (OTLP forbids an unspecified temporality for a sum) */
  static const char *const temps[] = {"delta", "cumulative", NULL};
  static const char *const keys[] = {
      "name", "kind", "unit", "description", "temporality", "monotonic", NULL};
  luaL_checktype(L, 1, LUA_TTABLE);
  el__lua_check_keys(L, 1, "el.metric", "field", keys);
  metric_t *m = lua_newuserdatauv(L, sizeof *m, 0);
  memset(m, 0, sizeof *m);
  luaL_setmetatable(L, METRIC_MT);
  lua_getfield(L, 1, "name");
  const char *name = el__field_string(L, "el.metric", "name", NULL);
  if (!*name) return luaL_error(L, "el.metric: field 'name' is empty");
  lua_getfield(L, 1, "kind");
  int kind = el__field_option(L, "el.metric", "kind", "gauge", kinds);
  lua_getfield(L, 1, "temporality");
  int temp =
      el__field_option(L, "el.metric", "temporality", "cumulative", temps);
  if (lua_getfield(L, 1, "monotonic") > LUA_TBOOLEAN)
    return luaL_error(L,
                      "el.metric: field 'monotonic' must be a boolean "
                      "(got %s)",
                      luaL_typename(L, -1));
  int mono = lua_toboolean(L, -1);
  const char *unit = opt_string_field(L, 1, "el.metric", "unit", NULL);
  const char *desc = opt_string_field(L, 1, "el.metric", "description", NULL);
  m->name = el_strdup(name);
  m->unit = dup_opt(unit);
  m->description = dup_opt(desc);
  if (!m->name || (unit && !m->unit) || (desc && !m->description))
    return luaL_error(L, "out of memory");
  m->d.name = m->name;
  m->d.unit = m->unit;
  m->d.description = m->description;
  m->d.kind = kind ? EL_TM_SUM : EL_TM_GAUGE;
  m->d.temporality = kind ? (el_tm_temporality_t)(EL_TM_TEMP_DELTA + temp)
                          : EL_TM_TEMP_UNSPECIFIED;
  m->d.monotonic = kind ? mono : 0;
  check_declared(L, m->name, &m->d);
  lua_pop(L, 4);
  return 1;
}

/* A point of the instrument at 1 with the value at 2, attributes at 3,
 * start_unix_ns at 5, for the method fn. A monotonic sum counts up: a
 * negative or NaN value is an error (OpenTelemetry data model, "Sums";
 * docs/lua-api.md §5). [-0, +1|2, v] */
static int point(lua_State *L, el_unix_ns_t time_unix, const char *fn) {
  el_host_t *h = el__host_from(L);
  metric_t *m = luaL_checkudata(L, 1, METRIC_MT);
  luaL_checktype(L, 2, LUA_TNUMBER);
  lua_Number v = lua_tonumber(L, 2);
  if (m->d.kind == EL_TM_SUM && m->d.monotonic && !(v >= 0))
    return luaL_error(L,
                      "%s: metric '%s' is a monotonic sum: a value must be "
                      ">= 0 (got %s)",
                      fn, m->name, v != v ? "nan" : lua_tostring(L, 2));
  attrs_t as;
  get_attrs(L, 3, &as, fn);
  el_unix_ns_t start = lua_isnoneornil(L, 5) ? 0 : check_time_arg(L, 5);
  if (!h->store) return no_store(L);
  bool is_int = lua_isinteger(L, 2);
  el_tm_point_t pt = {.attrs = as.a,
                      .nattrs = as.n,
                      .start_unix_ns = start,
                      .time_unix_ns = time_unix,
                      .is_int = is_int,
                      .ival = is_int ? lua_tointeger(L, 2) : 0,
                      .dval = is_int ? 0 : lua_tonumber(L, 2)};
  return result(L, el_tm_metric_point(h->store, &m->d, &pt));
}

/* metric:point(value, attrs, t, start_unix_ns) [-0, +1|2, v] */
static int em_point(lua_State *L) {
  el_host_t *h = el__host_from(L);
  return point(L,
               to_unix(L, h, opt_t(L, h, 4), "instrument:point",
                       "a Unix time to instrument:point_unix"),
               "instrument:point");
}

/* metric:point_unix(value, attrs, unix_ns, start_unix_ns). [-0, +1|2, v] */
static int em_point_unix(lua_State *L) {
  return point(L, check_time_arg(L, 4), "instrument:point_unix");
}

/* [-0, +0, -] __gc/__close: free the copied strings. */
static int em_metric_gc(lua_State *L) {
  metric_t *m = luaL_checkudata(L, 1, METRIC_MT);
  el_free(m->name);
  el_free(m->unit);
  el_free(m->description);
  m->name = m->unit = m->description = NULL;
  return 0;
}

/* [-0, +1, m] __tostring. */
static int em_metric_tostring(lua_State *L) {
  metric_t *m = luaL_checkudata(L, 1, METRIC_MT);
  lua_pushfstring(L, "metric %s (%s)", m->name ? m->name : "?",
                  m->d.kind == EL_TM_SUM ? "sum" : "gauge");
  return 1;
}

/* {====== logs ======} */

/* Field severity of the table at tbl (an argument of fn): a number 0..24
 * or a name, 0 when absent. [-0, +0, v] */
static int severity(lua_State *L, int tbl, const char *fn) {
  static const char *const names[] = {"trace", "debug", "info",
                                      "warn",  "error", "fatal", NULL};
  static const int nums[] = {1, 5, 9, 13, 17, 21};
  int t = lua_getfield(L, tbl, "severity");
  int sev = 0;
  if (t == LUA_TNUMBER) {
    sev = (int)el__field_integer(L, fn, "severity");
    if (sev < 0 || sev > 24)
      luaL_error(L, "%s: field 'severity' must be 0..24 (got %d)", fn, sev);
  } else if (t != LUA_TNIL) {
    sev = nums[el__field_option(L, fn, "severity", NULL, names)];
  }
  lua_pop(L, 1);
  return sev;
}

/* el.log{body=, severity=, severity_text=, t=|unix_ns=, observed_unix_ns=,
 * attrs=, trace_id=, span_id=, host=} [-0, +1|2, v] */
static int em_log(lua_State *L) {
  static const char *const keys[] = {"body",  "severity", "severity_text",
                                     "t",     "unix_ns",  "observed_unix_ns",
                                     "attrs", "trace_id", "span_id",
                                     "host",  NULL};
  /* Bits of keys[] in the mask el__lua_check_keys returns. */
  enum {
    SEV = 1 << 1,
    SEV_TEXT = 1 << 2,
    T = 1 << 3,
    UNIX = 1 << 4,
    OBSERVED = 1 << 5,
    ATTRS = 1 << 6,
    TRACE = 1 << 7,
    SPAN = 1 << 8,
    HOST = 1 << 9
  };
  el_host_t *h = el__host_from(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  /* Only the fields present are read (one lookup each). */
  uint64_t has = el__lua_check_keys(L, 1, "el.log", "field", keys);
  el_tm_log_t rec;
  memset(&rec, 0, sizeof rec);
  lua_getfield(L, 1, "body");
  /* A string only, as el.log_batch's column (a number is not converted:
   * docs/lua-api.md §5). */
  if (lua_type(L, -1) != LUA_TSTRING)
    return luaL_error(L, "el.log: field 'body' must be a string (got %s)",
                      luaL_typename(L, -1));
  rec.body.p = lua_tolstring(L, -1, &rec.body.len);
  if (has & SEV) rec.severity_number = severity(L, 1, "el.log");
  if (has & SEV_TEXT)
    rec.severity_text = opt_string_field(L, 1, "el.log", "severity_text", NULL);
  if (has & UNIX) {
    rec.time_unix_ns = field_time(L, h, 1, "el.log", "unix_ns", "t");
  } else if (has & T) {
    lua_getfield(L, 1, "t");
    rec.time_unix_ns =
        to_unix(L, h, el__field_time(L, "el.log", "t"), "el.log", "unix_ns");
    lua_pop(L, 1);
  } else { /* the current event's time or the stream's */
    const el_ev_event_t *ev = el__host_cur(h);
    rec.time_unix_ns =
        to_unix(L, h, ev ? ev->t_ns : h->now, "el.log", "unix_ns");
  }
  rec.observed_unix_ns = rec.time_unix_ns;
  if (has & OBSERVED) {
    lua_getfield(L, 1, "observed_unix_ns");
    rec.observed_unix_ns = el__field_time(L, "el.log", "observed_unix_ns");
    lua_pop(L, 1);
  }
  uint8_t tid[16], sid[8];
  if ((has & TRACE) && field_hex(L, 1, "el.log", "trace_id", tid, 16))
    rec.trace_id = tid;
  if ((has & SPAN) && field_hex(L, 1, "el.log", "span_id", sid, 8))
    rec.span_id = sid;
  if (has & HOST) {
    lua_getfield(L, 1, "host");
    rec.host_log = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  attrs_t as;
  as.n = as.nitems = 0;
  if (has & ATTRS) {
    lua_getfield(L, 1, "attrs");
    get_attrs(L, -1, &as, "el.log");
  }
  rec.attrs = as.a;
  rec.nattrs = as.n;
  if (!h->store) return no_store(L);
  return result(L, el_tm_log(h->store, &rec));
}

/* {====== log batches ======} */

/* One el.log_batch call: the template record, its attributes, and the
 * stack indexes of the columns (0 = absent). */
typedef struct {
  el_tm_log_t rec; /* the template's fields */
  attrs_t as;      /* the template's attributes */
  uint8_t tid[16], sid[8];
  int body, time, time_is_unix;
  const char *col_key[MAX_ATTRS];
  int col[MAX_ATTRS];
  size_t ncols;
  el_unix_ns_t now_unix; /* time when no time column is given */
} batch_t;

/* The template (table at index 1): every el.log field but body and
 * time, checked and read once. [-0, +0, v] */
static void batch_template(lua_State *L, batch_t *b) {
  static const char *const keys[] = {"severity", "severity_text", "attrs",
                                     "trace_id", "span_id",       "host",
                                     NULL};
  enum { SEV = 1, SEV_TEXT = 2, ATTRS = 4, TRACE = 8, SPAN = 16, HOST = 32 };
  luaL_checktype(L, 1, LUA_TTABLE);
  uint64_t has = el__lua_check_keys(L, 1, "el.log_batch", "field", keys);
  if (has & SEV) b->rec.severity_number = severity(L, 1, "el.log_batch");
  if (has & SEV_TEXT)
    b->rec.severity_text =
        opt_string_field(L, 1, "el.log_batch", "severity_text", NULL);
  if ((has & TRACE) && field_hex(L, 1, "el.log_batch", "trace_id", b->tid, 16))
    b->rec.trace_id = b->tid;
  if ((has & SPAN) && field_hex(L, 1, "el.log_batch", "span_id", b->sid, 8))
    b->rec.span_id = b->sid;
  if (has & HOST) {
    lua_getfield(L, 1, "host");
    b->rec.host_log = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  b->as.n = b->as.nitems = 0;
  if (has & ATTRS) {
    lua_getfield(L, 1, "attrs");
    get_attrs(L, -1, &b->as,
              "el.log_batch"); /* stays on the stack: its strings */
  }
}

/* Push column `key` of the columns table (index 3) if present; returns
 * its stack index or 0. [-0, +0|1, v] */
static int batch_column(lua_State *L, const char *key) {
  int t = lua_getfield(L, 3, key);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (t != LUA_TTABLE)
    luaL_error(L, "el.log_batch: column '%s' must be a table", key);
  return lua_gettop(L);
}

/* The attribute columns (columns.attrs: name -> array), pushed one per
 * name. A name also among the template's attributes is an error. */
static void batch_attr_columns(lua_State *L, batch_t *b) {
  int t = batch_column(L, "attrs");
  b->ncols = 0;
  if (!t) return;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TTABLE)
      luaL_error(L, "el.log_batch: columns.attrs maps names to arrays");
    const char *k = lua_tostring(L, -2); /* kept alive by columns.attrs */
    if (b->as.n + b->ncols >= MAX_ATTRS)
      luaL_error(L, "el.log_batch: too many attributes (max %d)", MAX_ATTRS);
    if (!*k) luaL_error(L, "el.log_batch: an attribute key is empty");
    for (size_t i = 0; i < b->as.n; i++)
      if (strcmp(b->as.a[i].key, k) == 0)
        luaL_error(L,
                   "el.log_batch: attribute '%s' in both the template "
                   "and the columns",
                   k);
    b->col_key[b->ncols++] = k;
    lua_pop(L, 1);
  }
  luaL_checkstack(L, (int)b->ncols, "el.log_batch: too many columns");
  for (size_t i = 0; i < b->ncols; i++) {
    lua_getfield(L, t, b->col_key[i]);
    b->col[i] = lua_gettop(L);
  }
}

/* The value at the top of the stack (popped) into attribute *a; returns
 * 0, or -1 for a type no attribute takes. Strings stay referenced by
 * their column. */
static int batch_value(lua_State *L, el_tm_attr_t *a) {
  int rc = scalar_attr(L, a);
  lua_pop(L, 1);
  return rc;
}

/* Record i of the batch into the store. Returns NULL, or what is wrong
 * with the record (it is then dropped). */
static const char *batch_row(lua_State *L, el_host_t *h, const batch_t *b,
                             lua_Integer i) {
  el_tm_log_t r = b->rec;
  if (lua_rawgeti(L, b->body, i) != LUA_TSTRING) {
    lua_pop(L, 1);
    return "body is not a string";
  }
  r.body.p = lua_tolstring(L, -1, &r.body.len); /* referenced by the column */
  lua_pop(L, 1);
  r.time_unix_ns = b->now_unix;
  if (b->time) {
    lua_rawgeti(L, b->time, i);
    if (!lua_isinteger(L, -1)) {
      lua_pop(L, 1);
      return "time is not an integer";
    }
    lua_Integer v = lua_tointeger(L, -1);
    lua_pop(L, 1);
    r.time_unix_ns =
        b->time_is_unix ? (el_unix_ns_t)v : el__host_unix(h, (el_rts_ns_t)v);
  }
  r.observed_unix_ns = r.time_unix_ns;
  el_tm_attr_t a[MAX_ATTRS];
  size_t na = b->as.n;
  memcpy(a, b->as.a, na * sizeof *a);
  for (size_t c = 0; c < b->ncols; c++) {
    if (lua_rawgeti(L, b->col[c], i) == LUA_TNIL) {
      lua_pop(L, 1);
      continue;
    }
    a[na].key = b->col_key[c];
    if (batch_value(L, &a[na]) < 0) return "attribute of unsupported type";
    na++;
  }
  sort_attr_array(a, na);
  r.attrs = a;
  r.nattrs = na;
  el_tm_log(h->store, &r); /* refused: counted by the store, as el.log's */
  return NULL;
}

/* el.log_batch(template, n, columns) -> dropped, first_error. Records
 * 1..n: body = columns.body[i], time = columns.t[i] (eventlog time) or
 * columns.unix_ns[i], attribute k = columns.attrs[k][i] where not nil,
 * the other fields from the template (el.log's fields but body and
 * time). A record with a malformed value is dropped and counted.
 * [-0, +1|2, v] */
static int em_log_batch(lua_State *L) {
  static const char *const ckeys[] = {"body", "t", "unix_ns", "attrs", NULL};
  el_host_t *h = el__host_from(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);
  batch_t b;
  memset(&b.rec, 0, sizeof b.rec);
  batch_template(L, &b);
  uint64_t has = el__lua_check_keys(L, 3, "el.log_batch", "column", ckeys);
  if (!(has & 1)) return luaL_error(L, "el.log_batch: column 'body' needed");
  b.body = batch_column(L, "body");
  lua_Integer nb = (lua_Integer)lua_rawlen(L, b.body);
  if (n < 0 || n > nb)
    return luaL_error(L, "el.log_batch: n = %I, not in 0..#columns.body (%I)",
                      (LUAI_UACINT)n, (LUAI_UACINT)nb);
  b.time_is_unix = (has & 4) != 0;
  b.time = batch_column(L, b.time_is_unix ? "unix_ns" : "t");
  batch_attr_columns(L, &b);
  const el_ev_event_t *ev = el__host_cur(h);
  b.now_unix = b.time_is_unix ? 0
                              : to_unix(L, h, ev ? ev->t_ns : h->now,
                                        "el.log_batch", "columns.unix_ns");
  if (!h->store) return no_store(L);
  lua_Integer dropped = 0;
  const char *first = NULL;
  lua_Integer first_i = 0;
  for (lua_Integer i = 1; i <= n; i++) {
    const char *bad = batch_row(L, h, &b, i);
    if (bad && !dropped++) {
      first = bad;
      first_i = i;
    }
  }
  lua_pushinteger(L, dropped);
  if (!dropped) return 1;
  lua_pushfstring(L, "el.log_batch: record %I: %s", (LUAI_UACINT)first_i,
                  first);
  return 2;
}

/* {====== spans ======} */

/* el.span{name=, start_t=, end_t= | start_unix_ns=, end_unix_ns=,
 * trace_id=, span_id=, parent_span_id=, kind=, status=, attrs=} -> id.
 * [-0, +1|2, v] */
static int em_span(lua_State *L) {
  static const char *const kinds[] = {"internal", "server", "client",
                                      "producer", "consumer", NULL};
  static const char *const statuses[] = {"unset", "ok", "error", NULL};
  static const char *const keys[] = {
      "name",        "start_t",  "end_t",   "start_unix_ns",
      "end_unix_ns", "trace_id", "span_id", "parent_span_id",
      "kind",        "status",   "attrs",   NULL};
  el_host_t *h = el__host_from(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  el__lua_check_keys(L, 1, "el.span", "field", keys);
  el_tm_span_t sp;
  memset(&sp, 0, sizeof sp);
  sp.name = opt_string_field(L, 1, "el.span", "name", NULL);
  if (!sp.name) return luaL_error(L, "el.span: field 'name' is missing");
  el_rts_ns_t start_t, end_t;
  sp.start_unix_ns =
      field_time_t(L, h, 1, "el.span", "start_unix_ns", "start_t", &start_t);
  sp.end_unix_ns =
      field_time_t(L, h, 1, "el.span", "end_unix_ns", "end_t", &end_t);
  /* Both in eventlog time: compared as given, since before the session's
   * clock is known (while the script loads) both convert to 0. */
  if (start_t != UINT64_MAX && end_t != UINT64_MAX && end_t < start_t)
    return luaL_error(L,
                      "el.span: it ends (%I) before it starts (%I), eventlog "
                      "ns",
                      (lua_Integer)end_t, (lua_Integer)start_t);
  if (sp.end_unix_ns < sp.start_unix_ns)
    return luaL_error(L,
                      "el.span: it ends (%I) before it starts (%I), Unix "
                      "ns",
                      (lua_Integer)sp.end_unix_ns,
                      (lua_Integer)sp.start_unix_ns);
  if (!field_hex(L, 1, "el.span", "trace_id", sp.trace_id, 16))
    el_tm_random_id(sp.trace_id, 16);
  if (!field_hex(L, 1, "el.span", "span_id", sp.span_id, 8))
    el_tm_random_id(sp.span_id, 8);
  field_hex(L, 1, "el.span", "parent_span_id", sp.parent_span_id, 8);
  lua_getfield(L, 1, "kind");
  sp.kind = (el_tm_span_kind_t)(el__field_option(L, "el.span", "kind",
                                                 "internal", kinds) +
                                1);
  lua_getfield(L, 1, "status");
  sp.status_code = el__field_option(L, "el.span", "status", "ok", statuses);
  lua_pop(L, 2);
  attrs_t as;
  lua_getfield(L, 1, "attrs");
  get_attrs(L, -1, &as, "el.span");
  sp.attrs = as.a;
  sp.nattrs = as.n;
  if (!h->store) return no_store(L);
  int rc = el_tm_span(h->store, &sp);
  if (rc != 0) return result(L, rc);
  push_hex(L, sp.span_id, 8);
  return 1;
}

/* {====== profiles ======} */

static void get_frame(lua_State *L, int i, el_tm_frame_t *f) {
  memset(f, 0, sizeof *f);
  if (lua_type(L, -1) == LUA_TSTRING) {
    f->function.p = lua_tolstring(L, -1, &f->function.len);
    return;
  }
  static const char *const keys[] = {"func", "file", "line", "column", NULL};
  if (lua_type(L, -1) != LUA_TTABLE)
    luaL_error(L, "el.profile_sample: frame %d must be a string or a table", i);
  int tbl = lua_absindex(L, -1);
  el__lua_check_keys(L, tbl, "el.profile_sample: frame", "field", keys);
  static const char *const names[] = {"frames[%d].func", "frames[%d].file",
                                      "frames[%d].line", "frames[%d].column"};
  char k[4][40];
  for (int j = 0; j < 4; j++) snprintf(k[j], sizeof k[j], names[j], i);
  const char *fn = "el.profile_sample";
  lua_getfield(L, tbl, "func");
  f->function.p = el__field_string(L, fn, k[0], &f->function.len);
  lua_getfield(L, tbl, "file");
  if (!lua_isnil(L, -1))
    f->file.p = el__field_string(L, fn, k[1], &f->file.len);
  lua_getfield(L, tbl, "line");
  f->line = el__field_opt_integer(L, fn, k[2], 0);
  lua_getfield(L, tbl, "column");
  f->column = el__field_opt_integer(L, fn, k[3], 0);
  lua_pop(L, 4);
}

/* el.profile_sample{frames=, value=, profile_kind=, sample_type=,
 * sample_unit=, t=|unix_ns=, attrs=} [-0, +1|2, v] */
static int em_profile_sample(lua_State *L) {
  static const char *const keys[] = {
      "frames", "value",   "profile_kind", "sample_type", "sample_unit",
      "t",      "unix_ns", "attrs",        NULL};
  el_host_t *h = el__host_from(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  el__lua_check_keys(L, 1, "el.profile_sample", "field", keys);
  el_tm_profile_sample_t s;
  memset(&s, 0, sizeof s);
  lua_getfield(L, 1, "frames");
  int fi = lua_gettop(L);
  if (lua_type(L, fi) != LUA_TTABLE)
    return luaL_error(L,
                      "el.profile_sample: field 'frames' must be a table "
                      "(got %s)",
                      luaL_typename(L, fi));
  /* (empty: a sample with no stack, as GHC's cost-centre sample of an
   * empty stack) */
  lua_Integer nf = luaL_len(L, fi);
  if (nf > MAX_FRAMES)
    return luaL_error(L, "el.profile_sample: too many frames (max %d)",
                      MAX_FRAMES);
  el_tm_frame_t *frames =
      lua_newuserdatauv(L, (size_t)(nf ? nf : 1) * sizeof *frames, 0);
  for (lua_Integer i = 1; i <= nf; i++) {
    lua_rawgeti(L, fi, i);
    get_frame(L, (int)i, &frames[i - 1]);
    lua_pop(L, 1);  /* strings remain referenced by the frames table */
  }
  s.frames = frames;
  s.nframes = (size_t)nf;
  lua_getfield(L, 1, "value");
  s.value = el__field_opt_integer(L, "el.profile_sample", "value", 1);
  lua_pop(L, 1);
  s.profile_kind =
      opt_string_field(L, 1, "el.profile_sample", "profile_kind", "samples");
  s.sample_type =
      opt_string_field(L, 1, "el.profile_sample", "sample_type", "samples");
  s.sample_unit =
      opt_string_field(L, 1, "el.profile_sample", "sample_unit", "count");
  s.time_unix_ns = field_time(L, h, 1, "el.profile_sample", "unix_ns", "t");
  attrs_t as;
  lua_getfield(L, 1, "attrs");
  get_attrs(L, -1, &as, "el.profile_sample");
  s.attrs = as.a;
  s.nattrs = as.n;
  if (!h->store) return no_store(L);
  return result(L, el_tm_profile_sample(h->store, &s));
}

/* {====== resource, ids, flush ======} */

/* el.set_resource(key, value) [-0, +1|2, v]; value nil removes the
 * attribute. */
static int em_set_resource(lua_State *L) {
  el_host_t *h = el__host_from(L);
  luaL_checkstring(L, 1);
  luaL_checkany(L, 2);
  if (lua_isnil(L, 2)) {
    if (!h->store) return no_store(L);
    return result(L, el_tm_store_unset_resource(h->store,
                                                lua_tostring(L, 1)));
  }
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, lua_tostring(L, 1));
  attrs_t as;
  get_attrs(L, -1, &as, "el.set_resource");
  if (!h->store) return no_store(L);
  return result(L, el_tm_store_set_resource(h->store, &as.a[0]));
}

/* el.random_id(nbytes) -> hex [-0, +1, v] */
static int em_random_id(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  luaL_argcheck(L, n > 0 && n <= 32, 1, "1..32 bytes");
  uint8_t b[32];
  el_tm_random_id(b, (size_t)n);
  push_hex(L, b, (size_t)n);
  return 1;
}

/* [-0, +1|2, -] el.flush() -> true | nil, msg */
static int em_flush(lua_State *L) {
  el_host_t *h = el__host_from(L);
  if (!h->store) return no_store(L);
  return result(L, el_tm_store_flush(h->store));
}

static const luaL_Reg em_funcs[] = {{"metric", em_metric},
                                    {"log", em_log},
                                    {"log_batch", em_log_batch},
                                    {"span", em_span},
                                    {"profile_sample", em_profile_sample},
                                    {"set_resource", em_set_resource},
                                    {"random_id", em_random_id},
                                    {"flush", em_flush},
                                    {NULL, NULL}};

static const luaL_Reg metric_meta[] = {{"point", em_point},
                                       {"point_unix", em_point_unix},
                                       {"__gc", em_metric_gc},
                                       {"__close", em_metric_gc},
                                       {"__tostring", em_metric_tostring},
                                       {NULL, NULL}};

/* Add the emit functions to the module table on top. [-0, +0, m] */
void el__lua_emit_register(lua_State *L) {
  luaL_setfuncs(L, em_funcs, 0);
  if (luaL_newmetatable(L, METRIC_MT)) {
    luaL_setfuncs(L, metric_meta, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
