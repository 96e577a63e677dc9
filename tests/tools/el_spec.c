/* el_spec.c: run busted specs against real hosts (src/host/host.h), so the
 * specs of the default processors test the path production takes: the
 * real decoder, dispatch, watermark, session clock, C helpers and
 * telemetry store, with the telemetry captured by an in-memory exporter.
 *
 * Usage: el_spec [busted options] ROOT...
 *   e.g. el_spec --output=TAP tests/lua/host
 * runs busted (Debian's lua-busted for Lua 5.4, require "busted.runner")
 * in a Lua state of its own, where the module `el_spec` creates hosts.
 * Exit status: 0 when every spec passed, 1 otherwise.
 *
 * Lua API of the module `el_spec` (each host is independent; make a fresh
 * one per test):
 *
 *   el_spec.host{config =, load = | code = | script =, fail_fast = true,
 *                horizon_ns =, service_name =, lua_dir =} -> host
 *     config: the nested table the daemon builds as el.config
 *       (src/cmd/daemon.c config_to_lua), e.g. {flush_ns = 1000000000,
 *       processors = {logs = {user_marker = {enabled = true, ...}}}}:
 *       strings, integers, booleans and tables of them.
 *     load: a module to run as the script ("eventlog_live.processors.main",
 *       what the daemon runs); code: a chunk of Lua; script: a file path.
 *     fail_fast: a Lua error in a handler, timer or hook stops the host
 *       and the next feed/finish raises it (default true: a broken
 *       processor fails the spec). horizon_ns: el_host_opts_t.horizon_ns.
 *     service_name: the resource attribute service.name.
 *     Raises on a load error (with the host's message) or out of memory.
 *   host:scan(bytes)   before the first feed: scan a recorded file ahead,
 *                      as the daemon does (exact clock from its
 *                      WALL_CLOCK_TIME, capabilities waited for from the
 *                      start; el_host_consumer's scan).
 *   host:received(unix_ns, live)  el_host_received for the next feeds.
 *   host:wall_timers(now_ms)  el_host_run_wall_timers: the wall-clock
 *                      timers (el.every_wall) due by now_ms (Unix ms, as
 *                      the daemon's loop passes; a periodic one is due
 *                      again an interval after now_ms) run. Their
 *                      callbacks get the real Unix time, as there.
 *   host:feed(bytes)   eventlog bytes (any piece of the stream). Returns
 *                      true, or nil, message for a decode error; raises
 *                      when a script error stopped the host.
 *   host:finish()      end of input: the session's finish (a stream cut
 *                      inside an event returns nil, message), el_host_end
 *                      (on_end hooks, store flush). Once.
 *   host:records()     everything the store exported so far, as plain
 *                      tables {metrics =, logs =, spans =, profiles =},
 *                      each an array in export order of:
 *     metrics:  {name, description, unit, kind = "gauge"|"sum",
 *                temporality = "delta"|"cumulative"|nil, monotonic,
 *                value, time_unix_ns, start_unix_ns, attrs}  (one per
 *                data point)
 *     logs:     {body, severity (nil = unset), severity_text,
 *                time_unix_ns, observed_unix_ns, attrs, trace_id,
 *                span_id, host_log}
 *     spans:    {name, trace_id, span_id, parent_span_id (nil = root),
 *                kind = "internal"|..., status = "unset"|"ok"|"error",
 *                start_unix_ns, end_unix_ns, attrs}
 *     profiles: {profile_kind, sample_type, sample_unit, value,
 *                time_unix_ns, attrs, frames = {{func =, file =, line =,
 *                column =}, ...}} (file, line, column omitted when
 *                empty / 0)
 *     and in every record: resource (its resource's attributes) and batch
 *     (1, 2, ...: which export of its signal carried it). Ids are hex.
 *   host:stats()       el_host_stats fields, and store = {emitted =,
 *                      dropped =, batches =} per signal name.
 *   host:messages()    the host's own log lines (el_log, e.g. el.host_log
 *                      from the processors' warnings) written during this
 *                      host's calls, at the default threshold (warn and
 *                      above): array of {level = "warn"|"error", text =}.
 *   host:close()       free it now (also __gc, __close).
 *
 * Thread: single-threaded; el_log lines are attributed to the host whose
 * call is running. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/el_common.h"
#include "host/host.h"
#include "telemetry/telemetry.h"
#include "telemetry/telemetry_batch.h"

#define HOST_MT "el_spec.Host"
#define CFG_PATH_MAX 512

typedef struct {
  el_tm_batch_t *b;         /* one reference, owned */
  el_tm_signal_t sig;
  unsigned seq;             /* 1, 2, ... per signal */
} kept_t;

typedef struct {
  el_log_level_t level;
  char *text;               /* owned */
} msg_t;

typedef struct {
  el_host_t *h;             /* NULL once closed */
  el_tm_store_t *st;        /* outlives h; freed after it */
  el_src_consumer_t c;      /* the host as the pump's consumer */
  int started;              /* the session began (consumer reset) */
  int finished;             /* el_host_end ran */
  kept_t *kept;             /* exported batches, in export order */
  size_t nkept, ckept;
  unsigned nbatches[EL_TM_NSIGNALS];
  msg_t *msgs;              /* el_log lines during this host's calls */
  size_t nmsgs, cmsgs;
  int lost;                 /* batches or lines lost to out of memory */
} spec_host_t;

static spec_host_t *current;  /* the host whose call is running */

static const char *const signal_names[EL_TM_NSIGNALS] = {
    "metrics", "logs", "spans", "profiles"};

/* {====== capture: exporter and log hook ======} */

/* The in-memory exporter: keep the batch (ownership taken). */
static int export_keep(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  spec_host_t *s = ud;
  if (s->nkept == s->ckept) {
    size_t n = s->ckept ? s->ckept * 2 : 16;
    kept_t *v = el_realloc(s->kept, n * sizeof *v);
    if (!v) {
      s->lost++;
      el_tm_batch_free(b);
      return EL_ENOMEM;
    }
    s->kept = v;
    s->ckept = n;
  }
  s->kept[s->nkept++] = (kept_t){b, sig, ++s->nbatches[sig]};
  return 0;
}

/* el_log hook: the line goes to the host whose call is running. */
static void log_capture(void *ud, el_log_level_t level, const char *text) {
  (void)ud;
  spec_host_t *s = current;
  if (!s) return;
  if (s->nmsgs == s->cmsgs) {
    size_t n = s->cmsgs ? s->cmsgs * 2 : 16;
    msg_t *v = el_realloc(s->msgs, n * sizeof *v);
    if (!v) {
      s->lost++;
      return;
    }
    s->msgs = v;
    s->cmsgs = n;
  }
  char *t = el_strdup(text);
  if (!t) {
    s->lost++;
    return;
  }
  s->msgs[s->nmsgs++] = (msg_t){level, t};
}

/* {====== the host object ======} */

static void host_free(spec_host_t *s) {
  el_host_free(s->h);       /* the host first: it uses the store */
  el_tm_store_free(s->st);
  s->h = NULL;
  s->st = NULL;
  for (size_t i = 0; i < s->nkept; i++) el_tm_batch_free(s->kept[i].b);
  el_free(s->kept);
  s->kept = NULL;
  s->nkept = s->ckept = 0;
  for (size_t i = 0; i < s->nmsgs; i++) el_free(s->msgs[i].text);
  el_free(s->msgs);
  s->msgs = NULL;
  s->nmsgs = s->cmsgs = 0;
  if (current == s) current = NULL;
}

static spec_host_t *check_open(lua_State *L) {
  spec_host_t *s = luaL_checkudata(L, 1, HOST_MT);
  if (!s->h) luaL_error(L, "el_spec: host is closed");
  return s;
}

/* Set config.<path>.<key> = value for every entry of the table at tbl.
 * path: buffer of CFG_PATH_MAX bytes holding len bytes. [-0, +0, v] */
static void set_config(lua_State *L, spec_host_t *s, int tbl, char *path,
                       size_t len) {
  luaL_checkstack(L, 3, "config too deep");
  lua_pushnil(L);
  while (lua_next(L, tbl)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "el_spec: config keys must be strings");
    size_t klen, n = len;
    const char *k = lua_tolstring(L, -2, &klen);
    if (len + klen + 2 > CFG_PATH_MAX)
      luaL_error(L, "el_spec: config path too long");
    if (n) path[n++] = '.';
    memcpy(path + n, k, klen);
    n += klen;
    path[n] = '\0';
    int rc = 0;
    switch (lua_type(L, -1)) {
    case LUA_TTABLE: set_config(L, s, lua_gettop(L), path, n); break;
    case LUA_TSTRING:
      rc = el_host_set_config(s->h, path, lua_tostring(L, -1));
      break;
    case LUA_TBOOLEAN:
      rc = el_host_set_config_boolean(s->h, path, lua_toboolean(L, -1));
      break;
    case LUA_TNUMBER:
      if (!lua_isinteger(L, -1))
        luaL_error(L, "el_spec: config.%s must be an integer", path);
      rc = el_host_set_config_integer(s->h, path, lua_tointeger(L, -1));
      break;
    default:
      luaL_error(L, "el_spec: config.%s: unsupported %s", path,
                 luaL_typename(L, -1));
    }
    if (rc < 0) luaL_error(L, "el_spec: config.%s: %s", path,
                           el_strerror(rc));
    path[len] = '\0';
    lua_pop(L, 1);
  }
}

static const char *opt_string(lua_State *L, int tbl, const char *k) {
  lua_getfield(L, tbl, k);
  const char *v = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
  lua_pop(L, 1);  /* still referenced by the table */
  return v;
}

/* Load what opts asks for: load (module), code or script. */
static int load_script(lua_State *L, spec_host_t *s, int opts) {
  const char *mod = opt_string(L, opts, "load");
  const char *code = opt_string(L, opts, "code");
  const char *path = opt_string(L, opts, "script");
  if (!!mod + !!code + !!path != 1)
    return luaL_error(L, "el_spec.host: give one of load, code, script");
  current = s;
  int rc = mod    ? el_host_load_module(s->h, mod)
           : code ? el_host_load_string(s->h, code, "=spec")
                  : el_host_load(s->h, path);
  current = NULL;
  if (rc < 0)
    return luaL_error(L, "el_spec.host: %s", el_host_error(s->h));
  return 0;
}

/* [-0, +1, v] el_spec.host(opts) -> host */
static int l_host(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  spec_host_t *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  luaL_setmetatable(L, HOST_MT);
  el_host_opts_t o;
  memset(&o, 0, sizeof o);
  lua_getfield(L, 1, "fail_fast");
  o.fail_fast = lua_isnil(L, -1) ? 1 : lua_toboolean(L, -1);
  lua_getfield(L, 1, "horizon_ns");
  o.horizon_ns = luaL_optinteger(L, -1, 0);
  lua_pop(L, 2);
  o.lua_dir = opt_string(L, 1, "lua_dir");
  s->st = el_tm_store_new("eventlog-live", EL_VERSION);
  s->h = s->st ? el_host_new(&o) : NULL;
  if (!s->h) return luaL_error(L, "el_spec.host: out of memory");
  el_host_set_store(s->h, s->st);
  el_tm_exporter_t ex = {.name = "el_spec",
                         .ud = s,
                         .signals = (1u << EL_TM_NSIGNALS) - 1,
                         .export = export_keep};
  if (el_tm_store_add_exporter(s->st, &ex) < 0)
    return luaL_error(L, "el_spec.host: out of memory");
  el_host_consumer(s->h, &s->c);
  const char *svc = opt_string(L, 1, "service_name");
  if (svc) {
    el_tm_attr_t a = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {svc, strlen(svc)}};
    if (el_tm_store_set_resource(s->st, &a) < 0)
      return luaL_error(L, "el_spec.host: out of memory");
  }
  if (lua_getfield(L, 1, "config") != LUA_TNIL) {
    luaL_checktype(L, -1, LUA_TTABLE);
    char path[CFG_PATH_MAX] = "";
    set_config(L, s, lua_gettop(L), path, 0);
  }
  lua_pop(L, 1);
  load_script(L, s, 1);
  return 1;
}

/* true, or nil + message for a decode error; raises after a stop. */
static int input_result(lua_State *L, spec_host_t *s, int rc) {
  if (rc == EL_ESTOPPED)
    return luaL_error(L, "el_spec: the host stopped: %s", el_host_error(s->h));
  if (rc < 0) {
    const el_diag_t *d = s->c.diag(s->c.ud);
    lua_pushnil(L);
    lua_pushfstring(L, "%s at byte %I: %s", el_strerror(rc),
                    (lua_Integer)d->offset, d->msg);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static void begin_session(spec_host_t *s) {
  if (s->started) return;
  s->started = 1;
  s->c.reset(s->c.ud);
}

/* [-0, +0, v] host:scan(bytes) */
static int l_scan(lua_State *L) {
  spec_host_t *s = check_open(L);
  size_t len;
  const char *p = luaL_checklstring(L, 2, &len);
  if (s->started) return luaL_error(L, "el_spec: scan before the first feed");
  /* The scan reads a file (el_src_consumer_t.scan): bytes in a memory
   * file. */
  int fd = memfd_create("el_spec", 0);
  if (fd < 0 || write(fd, p, len) != (ssize_t)len) {
    if (fd >= 0) close(fd);
    return luaL_error(L, "el_spec: cannot make the file to scan");
  }
  current = s;
  begin_session(s);
  s->c.scan(s->c.ud, fd, 0, len);
  current = NULL;
  close(fd);
  return 0;
}

/* [-0, +0, v] host:received(unix_ns, live) */
static int l_received(lua_State *L) {
  spec_host_t *s = check_open(L);
  lua_Integer u = luaL_checkinteger(L, 2);
  s->c.received(s->c.ud, (uint64_t)u, lua_toboolean(L, 3));
  return 0;
}

/* [-0, +1|2, v] host:wall_timers(now_ms) -> true */
static int l_wall_timers(lua_State *L) {
  spec_host_t *s = check_open(L);
  lua_Integer ms = luaL_checkinteger(L, 2);
  current = s;
  el_host_run_wall_timers(s->h, (uint64_t)(ms < 0 ? 0 : ms));
  current = NULL;
  return input_result(L, s, 0);
}

/* [-0, +1|2, v] host:feed(bytes) -> true | nil, msg */
static int l_feed(lua_State *L) {
  spec_host_t *s = check_open(L);
  size_t len;
  const char *p = luaL_checklstring(L, 2, &len);
  if (s->finished) return luaL_error(L, "el_spec: feed after finish");
  current = s;
  begin_session(s);
  int rc = s->c.feed(s->c.ud, (const uint8_t *)p, len);
  current = NULL;
  return input_result(L, s, rc);
}

/* [-0, +1|2, v] host:finish() -> true | nil, msg */
static int l_finish(lua_State *L) {
  spec_host_t *s = check_open(L);
  if (s->finished) return luaL_error(L, "el_spec: finish called twice");
  s->finished = 1;
  current = s;
  int rc = s->started ? s->c.finish(s->c.ud) : 0;
  int end = el_host_end(s->h);
  current = NULL;
  return input_result(L, s, end < 0 ? end : rc);
}

/* {====== records as plain tables ======} */

static void push_hex(lua_State *L, const uint8_t *b, size_t n) {
  static const char d[] = "0123456789abcdef";
  char buf[64];
  for (size_t i = 0; i < n; i++) {
    buf[2 * i] = d[b[i] >> 4];
    buf[2 * i + 1] = d[b[i] & 15];
  }
  lua_pushlstring(L, buf, 2 * n);
}

static int all_zero(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

static void push_view(lua_State *L, el_strview_t v) {
  lua_pushlstring(L, v.p ? v.p : "", v.len);
}

static void push_attr_value(lua_State *L, const el_tm_attr_t *a) {
  switch (a->type) {
  case EL_TM_STR: push_view(L, a->v.s); break;
  case EL_TM_INT: lua_pushinteger(L, a->v.i); break;
  case EL_TM_DOUBLE: lua_pushnumber(L, a->v.d); break;
  case EL_TM_BOOL: lua_pushboolean(L, a->v.b); break;
  case EL_TM_STRLIST:
    lua_createtable(L, (int)a->v.list.n, 0);
    for (size_t i = 0; i < a->v.list.n; i++) {
      push_view(L, a->v.list.items[i]);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    break;
  default: lua_pushnil(L);
  }
}

static void push_attrs(lua_State *L, const el_tm_attr_t *a, size_t n) {
  lua_createtable(L, 0, (int)n);
  for (size_t i = 0; i < n; i++) {
    push_attr_value(L, &a[i]);
    lua_setfield(L, -2, a[i].key);
  }
}

static void set_int(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v || !*v) return;  /* "" and NULL: absent */
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

/* Where the records of one resource group go. */
typedef struct {
  int list;                 /* stack index of the signal's array */
  int res;                  /* stack index of the resource table */
  unsigned seq;             /* batch number */
} dest_t;

/* Finish the record table on top: resource, batch; append it. */
static void append(lua_State *L, const dest_t *d) {
  lua_pushvalue(L, d->res);
  lua_setfield(L, -2, "resource");
  set_int(L, "batch", d->seq);
  lua_rawseti(L, d->list, (lua_Integer)lua_rawlen(L, d->list) + 1);
}

static void push_points(lua_State *L, const el_tm_batch_t *b,
                        const el_tm_rgroup_t *g, const dest_t *d) {
  static const char *const temps[] = {NULL, "delta", "cumulative"};
  size_t nm, np;
  const el_tm_metric_t *ms = el_tm_batch_metrics(b, &nm);
  const el_tm_point_t *ps = el_tm_batch_points(b, &np);
  for (size_t mi = g->first; mi < g->first + g->n && mi < nm; mi++) {
    const el_tm_metric_t *m = &ms[mi];
    for (size_t pi = m->first; pi < m->first + m->n && pi < np; pi++) {
      const el_tm_point_t *p = &ps[pi];
      lua_createtable(L, 0, 14);
      set_str(L, "name", m->desc.name);
      set_str(L, "description", m->desc.description);
      set_str(L, "unit", m->desc.unit);
      lua_pushstring(L, m->desc.kind == EL_TM_SUM ? "sum" : "gauge");
      lua_setfield(L, -2, "kind");
      if (m->desc.kind == EL_TM_SUM) {
        if ((unsigned)m->desc.temporality < 3)
          set_str(L, "temporality", temps[m->desc.temporality]);
        lua_pushboolean(L, m->desc.monotonic);
        lua_setfield(L, -2, "monotonic");
      }
      if (p->is_int)
        lua_pushinteger(L, p->ival);
      else
        lua_pushnumber(L, p->dval);
      lua_setfield(L, -2, "value");
      set_int(L, "time_unix_ns", (int64_t)p->time_unix_ns);
      set_int(L, "start_unix_ns", (int64_t)p->start_unix_ns);
      push_attrs(L, p->attrs, p->nattrs);
      lua_setfield(L, -2, "attrs");
      append(L, d);
    }
  }
}

static void push_logs(lua_State *L, const el_tm_batch_t *b,
                      const el_tm_rgroup_t *g, const dest_t *d) {
  size_t n;
  const el_tm_log_t *ls = el_tm_batch_logs(b, &n);
  for (size_t i = g->first; i < g->first + g->n && i < n; i++) {
    const el_tm_log_t *r = &ls[i];
    lua_createtable(L, 0, 12);
    push_view(L, r->body);
    lua_setfield(L, -2, "body");
    if (r->severity_number) set_int(L, "severity", r->severity_number);
    set_str(L, "severity_text", r->severity_text);
    set_int(L, "time_unix_ns", (int64_t)r->time_unix_ns);
    set_int(L, "observed_unix_ns", (int64_t)r->observed_unix_ns);
    if (r->trace_id) {
      push_hex(L, r->trace_id, 16);
      lua_setfield(L, -2, "trace_id");
    }
    if (r->span_id) {
      push_hex(L, r->span_id, 8);
      lua_setfield(L, -2, "span_id");
    }
    lua_pushboolean(L, r->host_log);
    lua_setfield(L, -2, "host_log");
    push_attrs(L, r->attrs, r->nattrs);
    lua_setfield(L, -2, "attrs");
    append(L, d);
  }
}

static void push_spans(lua_State *L, const el_tm_batch_t *b,
                       const el_tm_rgroup_t *g, const dest_t *d) {
  static const char *const kinds[] = {"unspecified", "internal", "server",
                                      "client", "producer", "consumer"};
  static const char *const statuses[] = {"unset", "ok", "error"};
  size_t n;
  const el_tm_span_t *ss = el_tm_batch_spans(b, &n);
  for (size_t i = g->first; i < g->first + g->n && i < n; i++) {
    const el_tm_span_t *sp = &ss[i];
    lua_createtable(L, 0, 12);
    set_str(L, "name", sp->name);
    push_hex(L, sp->trace_id, 16);
    lua_setfield(L, -2, "trace_id");
    push_hex(L, sp->span_id, 8);
    lua_setfield(L, -2, "span_id");
    if (!all_zero(sp->parent_span_id, 8)) {
      push_hex(L, sp->parent_span_id, 8);
      lua_setfield(L, -2, "parent_span_id");
    }
    set_str(L, "kind", (unsigned)sp->kind < 6 ? kinds[sp->kind] : "?");
    set_str(L, "status",
            (unsigned)sp->status_code < 3 ? statuses[sp->status_code] : "?");
    set_int(L, "start_unix_ns", (int64_t)sp->start_unix_ns);
    set_int(L, "end_unix_ns", (int64_t)sp->end_unix_ns);
    push_attrs(L, sp->attrs, sp->nattrs);
    lua_setfield(L, -2, "attrs");
    append(L, d);
  }
}

static void push_frames(lua_State *L, const el_tm_profile_sample_t *s) {
  lua_createtable(L, (int)s->nframes, 0);
  for (size_t i = 0; i < s->nframes; i++) {
    const el_tm_frame_t *f = &s->frames[i];
    lua_createtable(L, 0, 4);
    push_view(L, f->function);
    lua_setfield(L, -2, "func");
    if (f->file.len) {
      push_view(L, f->file);
      lua_setfield(L, -2, "file");
    }
    if (f->line) set_int(L, "line", f->line);
    if (f->column) set_int(L, "column", f->column);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static void push_samples(lua_State *L, const el_tm_batch_t *b,
                         const el_tm_rgroup_t *g, const dest_t *d) {
  size_t np, ns;
  const el_tm_profile_t *ps = el_tm_batch_profiles(b, &np);
  const el_tm_profile_sample_t *ss = el_tm_batch_samples(b, &ns);
  for (size_t pi = g->first; pi < g->first + g->n && pi < np; pi++) {
    const el_tm_profile_t *p = &ps[pi];
    for (size_t i = p->first; i < p->first + p->n && i < ns; i++) {
      const el_tm_profile_sample_t *s = &ss[i];
      lua_createtable(L, 0, 10);
      set_str(L, "profile_kind", p->profile_kind);
      set_str(L, "sample_type", p->sample_type);
      set_str(L, "sample_unit", p->sample_unit);
      set_int(L, "value", s->value);
      set_int(L, "time_unix_ns", (int64_t)s->time_unix_ns);
      push_frames(L, s);
      lua_setfield(L, -2, "frames");
      push_attrs(L, s->attrs, s->nattrs);
      lua_setfield(L, -2, "attrs");
      append(L, d);
    }
  }
}

/* [-0, +1, m] host:records() -> {metrics =, logs =, spans =, profiles =} */
static int l_records(lua_State *L) {
  spec_host_t *s = luaL_checkudata(L, 1, HOST_MT);
  lua_createtable(L, 0, EL_TM_NSIGNALS);
  int out = lua_gettop(L);
  for (int i = 0; i < EL_TM_NSIGNALS; i++) {
    lua_newtable(L);
    lua_setfield(L, out, signal_names[i]);
  }
  for (size_t k = 0; k < s->nkept; k++) {
    const kept_t *kb = &s->kept[k];
    lua_getfield(L, out, signal_names[kb->sig]);
    dest_t d = {.list = lua_gettop(L), .seq = kb->seq};
    size_t ng;
    const el_tm_rgroup_t *gs = el_tm_batch_groups(kb->b, &ng);
    for (size_t gi = 0; gi < ng; gi++) {
      const el_tm_resource_t *r = gs[gi].resource;
      push_attrs(L, r ? r->attrs : NULL, r ? r->nattrs : 0);
      d.res = lua_gettop(L);
      switch (kb->sig) {
      case EL_TM_SIGNAL_METRICS: push_points(L, kb->b, &gs[gi], &d); break;
      case EL_TM_SIGNAL_LOGS: push_logs(L, kb->b, &gs[gi], &d); break;
      case EL_TM_SIGNAL_TRACES: push_spans(L, kb->b, &gs[gi], &d); break;
      default: push_samples(L, kb->b, &gs[gi], &d);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* [-0, +1, m] host:stats() */
static int l_stats(lua_State *L) {
  spec_host_t *s = check_open(L);
  const el_host_stats_t *st = el_host_stats(s->h);
  lua_createtable(L, 0, 16);
  set_int(L, "events", (int64_t)st->events);
  set_int(L, "dispatched", (int64_t)st->dispatched);
  set_int(L, "handler_errors", (int64_t)st->handler_errors);
  set_int(L, "timer_skipped", (int64_t)st->timer_skipped);
  set_int(L, "reorder_forced", (int64_t)st->reorder_forced);
  set_int(L, "reorder_late", (int64_t)st->reorder_late);
  set_int(L, "warnings", (int64_t)st->warnings);
  set_int(L, "reentrant_dropped", (int64_t)st->reentrant_dropped);
  set_int(L, "budget_exceeded", (int64_t)st->budget_exceeded);
  set_int(L, "helper_dropped", (int64_t)st->helper_dropped);
  set_int(L, "lost", s->lost);
  const el_tm_stats_t *ts = el_tm_store_stats(s->st);
  lua_createtable(L, 0, 3);
  const struct {
    const char *k;
    const uint64_t *v;
  } rows[] = {{"emitted", ts->emitted},
              {"dropped", ts->dropped},
              {"batches", ts->batches}};
  for (size_t r = 0; r < EL_ARRAY_LEN(rows); r++) {
    lua_createtable(L, 0, EL_TM_NSIGNALS);
    for (int i = 0; i < EL_TM_NSIGNALS; i++)
      set_int(L, signal_names[i], (int64_t)rows[r].v[i]);
    lua_setfield(L, -2, rows[r].k);
  }
  lua_setfield(L, -2, "store");
  return 1;
}

/* [-0, +1, m] host:messages() */
static int l_messages(lua_State *L) {
  static const char *const levels[] = {"debug", "info", "warn", "error"};
  spec_host_t *s = luaL_checkudata(L, 1, HOST_MT);
  lua_createtable(L, (int)s->nmsgs, 0);
  for (size_t i = 0; i < s->nmsgs; i++) {
    lua_createtable(L, 0, 2);
    set_str(L, "level", (unsigned)s->msgs[i].level < 4
                            ? levels[s->msgs[i].level] : "?");
    lua_pushstring(L, s->msgs[i].text);
    lua_setfield(L, -2, "text");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* [-0, +0, -] host:close(), __gc, __close */
static int l_close(lua_State *L) {
  host_free(luaL_checkudata(L, 1, HOST_MT));
  return 0;
}

/* [-0, +1, m] __tostring */
static int l_tostring(lua_State *L) {
  spec_host_t *s = luaL_checkudata(L, 1, HOST_MT);
  lua_pushfstring(L, "el_spec host (%s)", !s->h ? "closed"
                                          : s->finished ? "finished"
                                                        : "open");
  return 1;
}

static const luaL_Reg host_methods[] = {{"scan", l_scan},
                                        {"received", l_received},
                                        {"wall_timers", l_wall_timers},
                                        {"feed", l_feed},
                                        {"finish", l_finish},
                                        {"records", l_records},
                                        {"stats", l_stats},
                                        {"messages", l_messages},
                                        {"close", l_close},
                                        {"__gc", l_close},
                                        {"__close", l_close},
                                        {"__tostring", l_tostring},
                                        {NULL, NULL}};

static const luaL_Reg funcs[] = {{"host", l_host}, {NULL, NULL}};

/* [-0, +1, m] The module `el_spec` (see the comment atop this file). */
static int luaopen_el_spec(lua_State *L) {
  if (luaL_newmetatable(L, HOST_MT)) {
    luaL_setfuncs(L, host_methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}

/* {====== main: busted in our own state ======} */

static int traceback(lua_State *L) {
  luaL_traceback(L, L, lua_tostring(L, 1), 1);
  return 1;
}

/* Runs busted with argv as its command line; exits 0 when every spec
 * passed (busted itself exits 1 through os.exit on a failure). */
int main(int argc, char **argv) {
  static const char runner[] =
      "require('busted.runner')({standalone = false})";
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "el_spec: out of memory\n");
    return 1;
  }
  luaL_openlibs(L);
  luaL_requiref(L, "el_spec", luaopen_el_spec, 0);
  lua_pop(L, 1);
  lua_createtable(L, argc, 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_setglobal(L, "arg");
  el_log_set_hook(log_capture, NULL);
  lua_pushcfunction(L, traceback);
  int rc = luaL_loadbuffer(L, runner, sizeof runner - 1, "@el_spec");
  if (rc == LUA_OK) rc = lua_pcall(L, 0, 0, -2);
  int status = 0;
  if (rc != LUA_OK) {
    fprintf(stderr, "el_spec: %s\n", lua_tostring(L, -1));
    status = 1;
  }
  lua_close(L);
  el_log_set_hook(NULL, NULL);
  return status;
}
