/* host.c: the Lua host's state, script loading, the decoder sink and the
 * dispatch fast path, and protected calls with error accounting.
 * The Lua API is in docs/lua-api.md; design notes in DESIGN.md ("Lua must
 * not see the raw firehose") and spec/field-notes.md §2.5. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_internal.h"
#include "lua_embed.h"

#ifndef EL_LUA_INSTALL_DIR
#define EL_LUA_INSTALL_DIR "/usr/local/share/eventlog-live/lua"
#endif

/* The host pointer lives in the state's extra space (el__host_from). */
_Static_assert(LUA_EXTRASPACE >= sizeof(void *), "LUA_EXTRASPACE too small");

uint64_t el_host_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* {====== allocator and state ======} */

uint64_t el_host_default_lua_memory(void) {
  const uint64_t cap = (uint64_t)4 << 30;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0) return cap;
  uint64_t half = (uint64_t)pages * (uint64_t)size / 2;
  return half < cap ? half : cap;
}

/* lua_Alloc over the counting allocator (STYLE: one allocator), ud the
 * host: growth past opts.lua_memory fails (Lua then collects and, if
 * still short, raises "not enough memory"); shrinking never fails, as Lua
 * requires. */
static void *lalloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  el_host_t *h = ud;
  size_t old = ptr ? osize : 0; /* without ptr, osize is a type tag */
  if (nsize == 0) {
    el_free(ptr);
    h->lua_bytes -= old;
    return NULL;
  }
  if (nsize > old && h->lua_bytes - old + nsize > h->opts.lua_memory) {
    h->st.lua_memory_refused++;
    return NULL;
  }
  void *p = el_realloc(ptr, nsize);
  if (p) h->lua_bytes = h->lua_bytes - old + nsize;
  return p;
}

static int lpanic(lua_State *L) {
  el_log(EL_LOG_ERROR, "Lua panic: %s", lua_tostring(L, -1));
  return 0;
}

el_host_t *el__host_from(lua_State *L) {
  el_host_t *h;
  memcpy(&h, lua_getextraspace(L), sizeof h);
  return h;
}

/* The project's lua/ directory, the one rule (docs/lua-api.md §1):
 * $EVENTLOG_LIVE_LUA_DIR; else share/eventlog-live/lua beside the
 * executable's directory (an installed or packaged copy, wherever it was
 * moved); else the source tree the binary was built from; else the install
 * prefix configured at build time. buf: at least PATH_MAX bytes. */
static const char *default_lua_dir(char *buf, size_t size) {
  const char *env = getenv("EVENTLOG_LIVE_LUA_DIR");
  if (env && *env) return env;
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n > 0) {
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash) {
      *slash = '\0';
      size_t used = strlen(buf);
      snprintf(buf + used, size - used, "/../share/eventlog-live/lua");
      size_t len = strlen(buf);
      snprintf(buf + len, size - len, "/eventlog_live");
      if (access(buf, R_OK) == 0) {
        buf[len] = '\0';
        return buf;
      }
    }
  }
  if (access(EL_SOURCE_DIR "/lua/eventlog_live", R_OK) == 0)
    return EL_SOURCE_DIR "/lua";
  return EL_LUA_INSTALL_DIR;
}

/* package.path = [script dir;] $EVENTLOG_LIVE_LUA_PATH; lua_dir; default.
 * [-0, +0, m] */
static void set_path(el_host_t *h, const char *script_dir) {
  lua_State *L = h->L;
  luaL_Buffer b;
  lua_getglobal(L, "package");
  luaL_buffinit(L, &b);
  if (script_dir) {
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", script_dir, script_dir);
    luaL_addvalue(&b);
  }
  const char *env = getenv("EVENTLOG_LIVE_LUA_PATH");
  if (env && *env) {
    luaL_addstring(&b, env);
    luaL_addchar(&b, ';');
  }
  lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", h->lua_dir, h->lua_dir);
  luaL_addvalue(&b);
  /* Lua's default, kept from the first call: a script's load calls this
   * again, which must not add our folders a second time */
  if (lua_getfield(L, LUA_REGISTRYINDEX, "eventlog_live.lua_path") ==
      LUA_TNIL) {
    lua_pop(L, 1);
    lua_getfield(L, -2, "path");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "eventlog_live.lua_path");
  }
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

static int on_event(void *ud, const el_ev_event_t *ev);
static int on_header(void *ud, const el_ev_header_t *hdr);
static void on_data_end(void *ud, uint64_t offset);
static void on_warning(void *ud, const el_diag_t *diag);

/* os.exit([code [, close]]) with el_host_opts_t.exit_stops: the run
 * stops cleanly (el_host_interrupt: the running call ends with
 * "interrupted", not an error, and so would any later one that caught
 * it; decoding stops and the input is drained), and the command exits
 * with code once on_end has run and telemetry is flushed. The first
 * call's code counts. [-0, +0, v] */
static int l_exit(lua_State *L) {
  el_host_t *h = el__host_from(L);
  int code = lua_isboolean(L, 1) ? (lua_toboolean(L, 1) ? 0 : 1)
                                 : (int)luaL_optinteger(L, 1, 0);
  if (!h->exit_asked) {
    h->exit_asked = 1;
    h->exit_status = code;
    el_log(EL_LOG_INFO, "os.exit(%d): stopping the run", code);
  }
  el_host_interrupt(h);
  h->interrupt_hit = 1;
  return luaL_error(L, "interrupted");
}

/* Set up the Lua side: libraries, registry slots, the module. Runs
 * protected: [-0, +0, m]. */
static int setup(lua_State *L) {
  el_host_t *h = lua_touserdata(L, 1);
  /* Before any thread is made: each copies the main thread's space. */
  memcpy(lua_getextraspace(L), &h, sizeof h);
  luaL_openlibs(L);
  if (h->opts.exit_stops) {
    lua_getglobal(L, "os");
    lua_pushcfunction(L, l_exit);
    lua_setfield(L, -2, "exit");
    lua_pop(L, 1);
  }
  el__stdout_install(L);
  el__lua_embed_install(L); /* require: the precompiled library */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, el__lua_open_module);
  lua_setfield(L, -2, "eventlog_live");
  lua_pop(L, 1);
  /* Open it now so that C can reach its tables before any require. */
  luaL_requiref(L, "eventlog_live", el__lua_open_module, 0);
  lua_pop(L, 1);
  set_path(h, NULL);
  return 0;
}

el_host_t *el_host_new(const el_host_opts_t *opts) {
  el_host_t *h = el_calloc(1, sizeof *h);
  if (!h) return NULL;
  if (opts) h->opts = *opts;
  if (!h->opts.lua_memory) h->opts.lua_memory = el_host_default_lua_memory();
  char dir[4096];
  h->lua_dir = el_strdup(opts && opts->lua_dir
                             ? opts->lua_dir
                             : default_lua_dir(dir, sizeof dir));
  h->opts.lua_dir = h->lua_dir;
  el__clock_init(h);
  h->next_deadline = UINT64_MAX;
  el__host_quiet_sync(h);
  h->ev_ref = h->mod_ref = h->hooks_ref = h->session_ref = LUA_NOREF;
  h->evl_ref = LUA_NOREF;
  h->next_id = 1;
  h->ev_cap = -1;
  snprintf(h->timer_handler.where, sizeof h->timer_handler.where, "timer");
  snprintf(h->hook_handler.where, sizeof h->hook_handler.where, "hook");
  el_ev_sink_t sink = {.ud = h,
                       .on_header = on_header,
                       .on_event = on_event,
                       .on_data_end = on_data_end,
                       .on_warning = on_warning};
  if (!h->lua_dir) goto fail;
  h->dec = el_ev_decoder_new(&sink);
  if (!h->dec) goto fail;
  h->L = lua_newstate(lalloc, h);
  if (!h->L) goto fail;
  memset(lua_getextraspace(h->L), 0, LUA_EXTRASPACE); /* no host yet */
  lua_atpanic(h->L, lpanic);
  lua_pushcfunction(h->L, setup);
  lua_pushlightuserdata(h->L, h);
  if (lua_pcall(h->L, 1, 0, 0) != LUA_OK) {
    el_log(EL_LOG_ERROR, "cannot set up Lua: %s", lua_tostring(h->L, -1));
    goto fail;
  }
  /* No fields for types nobody wants (el__host_set_flag keeps the
   * decoder's mask in step with flags[]). */
  el_ev_decoder_set_fields(h->dec, -1, 0);
  /* Nor delivery, while on_event would only count them (quiet_until). */
  el_ev_decoder_quiet_counters(
      h->dec,
      &(el_ev_quiet_t){
          .events = &h->st.events, .tmax = &h->now, .until = &h->quiet_until});
  el_ev_decoder_set_quiet(h->dec, -1, 1);
  /* Batched Lua events straight from the decoder's runs; RUN_THREAD and
   * STOP_THREAD to the analyses while only they want them
   * (el__host_set_flag, el__direct_sync) */
  el_ev_decoder_direct_run(h->dec, el__lua_direct_run, h);
  /* Init events always feed the session tracker (spec §2.4). */
  static const int sys[] = {EL_EV_WALL_CLOCK_TIME, EL_EV_OSPROCESS_PID,
                            EL_EV_OSPROCESS_PPID,  EL_EV_RTS_IDENTIFIER,
                            EL_EV_PROGRAM_ARGS,    EL_EV_HEAP_PROF_BEGIN,
                            EL_EV_CAP_CREATE,      EL_EV_BLOCK_MARKER};
  for (size_t i = 0; i < EL_ARRAY_LEN(sys); i++)
    el__host_set_flag(h, sys[i], EL__F_SYS, 1);
  return h;
fail:
  el_host_free(h);
  return NULL;
}

void el_host_free(el_host_t *h) {
  if (!h) return;
  el__ana_free(h);
  el__order_free(h);
  el__timers_free(h);
  el__clock_free(h);
  if (h->L) lua_close(h->L);
  el__handlers_free(h);
  el_free(h->batch);
  el_ev_decoder_free(h->dec);
  el_free(h->lua_dir);
  el_free(h->args_drop);
  el_free(h);
}

el_ev_decoder_t *el_host_decoder(el_host_t *h) { return h->dec; }
void el_host_set_store(el_host_t *h, el_tm_store_t *st) {
  h->store = st;
  el__ana_store_set(h);
}
const char *el_host_error(const el_host_t *h) { return h->err; }
const el_host_stats_t *el_host_stats(const el_host_t *h) { return &h->st; }
struct lua_State *el_host_lua(el_host_t *h) { return h->L; }

void el_host_set_control(el_host_t *h, el_host_control_fn fn, void *ud) {
  h->control_fn = fn;
  h->control_ud = ud;
}

void el_host_set_stdout_sync(el_host_t *h, void (*fn)(void *ud), void *ud) {
  h->out_sync = fn;
  h->out_sync_ud = ud;
}

void el_host_set_input_name(el_host_t *h, const char *name) {
  snprintf(h->input_name, sizeof h->input_name, "%s", name ? name : "");
}

void el_host_set_warning_hook(el_host_t *h, el_host_warning_fn fn, void *ud) {
  h->warning_fn = fn;
  h->warning_ud = ud;
}

void el_host_set_clock_hook(el_host_t *h, el_host_clock_fn fn, void *ud) {
  h->clock_fn = fn;
  h->clock_ud = ud;
}

int el_host_set_args_drop(el_host_t *h, const char *const *args) {
  size_t n = 0;
  for (size_t i = 0; args && args[i]; i++) n += strlen(args[i]) + 1;
  el_free(h->args_drop);
  h->args_drop = NULL;
  h->args_drop_len = 0;
  if (!n) return 0;
  char *b = el_malloc(n);
  if (!b) return EL_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; args[i]; i++) {
    size_t l = strlen(args[i]) + 1;
    memcpy(b + k, args[i], l);
    k += l;
  }
  h->args_drop = b;
  h->args_drop_len = n;
  return 0;
}

/* Protected: eventlog_live.config[path] = value (arg 3), path dotted,
 * intermediate tables made as needed (a non-table on the way is
 * replaced). */
static int set_config(lua_State *L) {
  el_host_t *h = lua_touserdata(L, 1);
  const char *path = lua_tostring(L, 2);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->mod_ref);
  lua_getfield(L, -1, "config");
  for (const char *dot; (dot = strchr(path, '.')) != NULL; path = dot + 1) {
    lua_pushlstring(L, path, (size_t)(dot - path));
    if (lua_rawget(L, -2) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushlstring(L, path, (size_t)(dot - path));
      lua_pushvalue(L, -2);
      lua_rawset(L, -4);
    }
    lua_remove(L, -2);
  }
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, path);
  return 0;
}

/* Run set_config with the value on top of L's stack (popped). */
static int set_config_top(el_host_t *h, const char *path) {
  lua_State *L = h->L;
  lua_pushcfunction(L, set_config);
  lua_pushlightuserdata(L, h);
  lua_pushstring(L, path);
  lua_rotate(L, -4, -1);  /* fn, h, path, value */
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    lua_pop(L, 1);
    return EL_ENOMEM;
  }
  return 0;
}

int el_host_set_config(el_host_t *h, const char *path, const char *value) {
  lua_pushstring(h->L, value);
  return set_config_top(h, path);
}

int el_host_set_config_integer(el_host_t *h, const char *path,
                               int64_t value) {
  lua_pushinteger(h->L, (lua_Integer)value);
  return set_config_top(h, path);
}

int el_host_set_config_boolean(el_host_t *h, const char *path, int value) {
  lua_pushboolean(h->L, value);
  return set_config_top(h, path);
}

/* {====== protected calls ======} */

/* Levels of a traceback beyond which only the innermost are shown. */
#define TB_DEEP 64
#define TB_SHOWN 12

/* A traceback of a stack deeper than TB_DEEP levels (a runaway recursion):
 * msg, then the innermost TB_SHOWN levels as luaL_traceback writes them.
 * luaL_traceback would find the stack's depth first, and lua_getstack
 * walks the call list from the top: on the 300,000 levels of a stack
 * overflow that took seconds per error. */
static void short_traceback(lua_State *L, const char *msg) {
  luaL_Buffer b;
  lua_Debug ar;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, msg);
  luaL_addstring(&b, "\nstack traceback:");
  for (int level = 1; level <= TB_SHOWN && lua_getstack(L, level, &ar);
       level++) {
    lua_getinfo(L, "Slnt", &ar);
    if (ar.currentline <= 0)
      lua_pushfstring(L, "\n\t%s: in ", ar.short_src);
    else
      lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
    luaL_addvalue(&b);
    if (*ar.namewhat)
      lua_pushfstring(L, "%s '%s'", ar.namewhat, ar.name);
    else if (*ar.what == 'm')
      lua_pushliteral(L, "main chunk");
    else if (*ar.what != 'C')
      lua_pushfstring(L, "function <%s:%d>", ar.short_src, ar.linedefined);
    else
      lua_pushliteral(L, "?");
    luaL_addvalue(&b);
    if (ar.istailcall) luaL_addstring(&b, "\n\t(...tail calls...)");
  }
  lua_pushfstring(L, "\n\t...\t(more than %d levels: the rest not shown)",
                  TB_DEEP);
  luaL_addvalue(&b);
  luaL_pushresult(&b);
}

int el__host_traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  lua_Debug ar;
  if (lua_getstack(L, TB_DEEP + 1, &ar))
    short_traceback(L, msg);
  else
    luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Log an error of hd with a rate limit: the first 5, then at most one per
 * 10 s carrying the count of those not logged. */
static void log_error(el_host_t *h, el__handler_t *hd, const char *what,
                      const char *where, const char *msg) {
  uint64_t now = el_host_clock_ms();
  if (hd->errors <= 5 || now - hd->last_log_ms >= 10000) {
    if (hd->unlogged)
      el_log(EL_LOG_ERROR, "%s (%s): error #%llu (%llu not shown): %s", what,
             where, (unsigned long long)hd->errors,
             (unsigned long long)hd->unlogged, msg);
    else
      el_log(EL_LOG_ERROR, "%s (%s): %s", what, where, msg);
    hd->last_log_ms = now;
    hd->unlogged = 0;
  } else {
    hd->unlogged++;
  }
}

int el__host_pcall(el_host_t *h, int nargs, el__handler_t *hd,
                   const char *what) {
  lua_State *L = h->L;
  int fn = lua_gettop(L) - nargs;
  h->npcalls++;
  lua_pushcfunction(L, el__host_traceback);
  lua_insert(L, fn);
  int rc = lua_pcall(L, nargs, 0, fn);
  if (rc == LUA_OK) {
    lua_remove(L, fn);
    return 0;
  }
  el__host_error(h, L, hd, what);
  lua_pop(L, 1);
  return -1;
}

/* A handler (not a timer's or hook's shared record) whose calls the time
 * budget stopped EL__BUDGET_DISABLE times, or that overflowed Lua's stack
 * (overflow 1) or ran the Lua heap out of memory (overflow 2) as many
 * times, gets no more events, as after el.off; said once as an error. */
static void budget_disable(el_host_t *h, el__handler_t *hd, int overflow) {
  if (hd == &h->timer_handler || hd == &h->hook_handler || hd->dead ||
      ++*(overflow ? &hd->overflows : &hd->budget_stops) < EL__BUDGET_DISABLE)
    return;
  hd->dead = 1;
  luaL_unref(h->L, LUA_REGISTRYINDEX, hd->ref);
  hd->ref = LUA_NOREF;
  h->need_compact = 1;
  h->st.handlers_disabled++;
  if (overflow == 2)
    el_log(EL_LOG_ERROR,
           "handler (%s) disabled: %d of its calls ran the Lua heap out of "
           "memory; it gets no more events",
           hd->where, EL__BUDGET_DISABLE);
  else if (overflow)
    el_log(EL_LOG_ERROR,
           "handler (%s) disabled: %d of its calls overflowed Lua's stack (a "
           "runaway recursion?); it gets no more events",
           hd->where, EL__BUDGET_DISABLE);
  else
    el_log(EL_LOG_ERROR,
           "handler (%s) disabled: the time budget of %d ms stopped %d of "
           "its calls; it gets no more events",
           hd->where, h->opts.handler_budget_ms, EL__BUDGET_DISABLE);
}

void el__host_error(el_host_t *h, lua_State *L, el__handler_t *hd,
                    const char *what) {
  const char *msg = lua_tostring(L, -1);
  if (!msg) msg = "(no message)";
  char mem[160];
  if (h->st.lua_memory_refused && !strcmp(msg, "not enough memory")) {
    snprintf(mem, sizeof mem,
             "not enough memory: the Lua heap reached its limit of %llu MiB "
             "(run --lua-memory SIZE)",
             (unsigned long long)(h->opts.lua_memory >> 20));
    msg = mem;
  }
  int budget = h->budget_call == h->st.dispatched + h->npcalls + 1;
  el__handler_t *shown = hd ? hd : &h->hook_handler;
  /* a timer's or hook's own place, not its shared record's name */
  const char *where =
      h->call_where && (shown == &h->timer_handler || shown == &h->hook_handler)
          ? h->call_where
          : shown->where;
  if (el__host_stopped(h, what, where, msg)) {
    lua_pop(L, 1);
    return;
  }
  h->st.handler_errors++;
  if (hd) hd->errors++;
  if (h->opts.fail_fast) {
    /* An end hook's error is said as it comes, as without --fail-fast:
     * the hooks after it still run, and each failure must be seen; the
     * stop line then repeats only its first line (no traceback twice). */
    int said = h->in_end_hooks;
    if (said) log_error(h, shown, what, where, msg);
    if (!h->err[0]) /* the first error stopped the run; keep it */
      snprintf(h->err, sizeof h->err, "%s (%s): %.*s", what, where,
               said ? (int)strcspn(msg, "\n") : (int)strlen(msg), msg);
    h->stop = 1;
    el__host_quiet_sync(h);
  } else {
    log_error(h, shown, what, where, msg);
    /* Lua's message for a stack past LUAI_MAXSTACK (ldo.c), also
     * "C stack overflow" for nested C calls; the Lua heap at its limit
     * (msg rewritten above). */
    if (hd && budget)
      budget_disable(h, hd, 0);
    else if (hd && (strstr(msg, "stack overflow") || msg == mem))
      budget_disable(h, hd, msg == mem ? 2 : 1);
  }
  lua_pop(L, 1);
}

/* {====== time budget of a call ======} */

#define BUDGET_HOOK_COUNT 100000  /* VM instructions between checks */

/* Count hook: stops a call (handler, timer, hook) that has run longer than
 * opts.handler_budget_ms. A call is identified by the dispatch and
 * protected-call counters; its clock starts at the first check inside it,
 * so the budget may be exceeded by one check interval. */
static void budget_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  el_host_t *h = el__host_from(L);
  if (!h) return;
  uint64_t seq = h->st.dispatched + h->npcalls;
  uint64_t now = el_host_clock_ms();
  if (seq != h->hook_seq) {
    h->hook_seq = seq;
    h->hook_start_ms = now;
    return;
  }
  if (now - h->hook_start_ms <= (uint64_t)h->opts.handler_budget_ms) return;
  h->st.budget_exceeded++;
  h->budget_call = seq + 1; /* el__host_error: this call's error */
  h->hook_start_ms = now;
  luaL_error(L, "call ran longer than its budget of %d ms",
             h->opts.handler_budget_ms);
}

/* After loading: from now on every call runs under the budget. */
static void arm_budget(el_host_t *h) {
  if (h->opts.handler_budget_ms <= 0) return;
  lua_sethook(h->L, budget_hook, LUA_MASKCOUNT, BUDGET_HOOK_COUNT);
  if (h->D) lua_sethook(h->D, budget_hook, LUA_MASKCOUNT, BUDGET_HOOK_COUNT);
}

/* Set by el_host_interrupt from a signal handler (as lua.c does): raises
 * "interrupted" in the running call at its next instruction, then gives
 * the states their budget hook back. */
static void interrupt_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  el_host_t *h = el__host_from(L);
  if (h) {
    h->break_lua = 0;
    lua_sethook(h->L, NULL, 0, 0);
    if (h->D) lua_sethook(h->D, NULL, 0, 0);
    arm_budget(h);
  }
  if (h) h->interrupt_hit = 1;
  luaL_error(L, "interrupted");
}

int el__host_stopped(el_host_t *h, const char *what, const char *where,
                     const char *msg) {
  if (!h->interrupt_hit) return 0;
  h->interrupt_hit = 0;
  if (!msg || !strstr(msg, "interrupted")) return 0; /* a real error */
  if (h->interrupt_sig)
    el_log(EL_LOG_INFO,
           "%s (%s): stopped by signal %d (interrupted, not an "
           "error)",
           what, where, (int)h->interrupt_sig);
  else
    el_log(EL_LOG_INFO, "%s (%s): stopped (interrupted, not an error)", what,
           where);
  return 1;
}

int el_host_exit_status(const el_host_t *h, int *status) {
  if (!h->exit_asked) return 0;
  *status = h->exit_status;
  return 1;
}

void el_host_interrupt_signal(el_host_t *h, int sig) {
  h->interrupt_sig = sig;
  el_host_interrupt(h);
}

void el_host_interrupt(el_host_t *h) {
  h->interrupted = 1; /* quiet_until is left: a signal may land here */
  h->break_lua = 1;
  int mask = LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT;
  lua_sethook(h->L, interrupt_hook, mask, 1);
  if (h->D) lua_sethook(h->D, interrupt_hook, mask, 1);
}

/* {====== loading ======} */

static int load_chunk(el_host_t *h, int status) {
  lua_State *L = h->L;
  if (status != LUA_OK) {
    snprintf(h->err, sizeof h->err, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return EL_ELUA;
  }
  int fn = lua_gettop(L);
  lua_pushcfunction(L, el__host_traceback);
  lua_insert(L, fn);
  h->def_ordered = 0; /* el.order() holds for the script being loaded */
  h->loading = 1;
  int rc = lua_pcall(L, 0, 0, fn);
  h->loading = 0;
  if (rc != LUA_OK) {
    snprintf(h->err, sizeof h->err, "%s", lua_tostring(L, -1));
    lua_pop(L, 2);
    return EL_ELUA;
  }
  lua_pop(L, 1);
  h->loaded = 1;
  arm_budget(h);
  return h->stop ? EL_ESTOPPED : 0;
}

/* Protected: require path with the script's directory, arg[0]. */
static int prepare_script(lua_State *L) {
  el_host_t *h = lua_touserdata(L, 1);
  const char *path = lua_tostring(L, 2);
  const char *slash = strrchr(path, '/');
  if (slash)
    lua_pushlstring(L, path, slash == path ? 1 : (size_t)(slash - path));
  else
    lua_pushliteral(L, ".");
  set_path(h, lua_tostring(L, -1));
  /* arg[0] = script path, as the stand-alone interpreter does. */
  lua_createtable(L, 1, 0);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, 0);
  lua_setglobal(L, "arg");
  return 0;
}

int el_host_load(el_host_t *h, const char *path) {
  h->err[0] = '\0';
  if (access(path, R_OK) != 0) {
    int e = errno;
    snprintf(h->err, sizeof h->err, "cannot open %s: %s", path, strerror(e));
    return -e;
  }
  lua_State *L = h->L;
  lua_pushcfunction(L, prepare_script);
  lua_pushlightuserdata(L, h);
  lua_pushstring(L, path);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    snprintf(h->err, sizeof h->err, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return EL_ENOMEM;
  }
  return load_chunk(h, el__lua_loadfile(L, path));
}

/* Protected: package.searchpath(name, package.path) -> path or error. */
static int search_module(lua_State *L) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchpath");
  lua_pushvalue(L, 1);
  lua_getfield(L, -3, "path");
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return lua_error(L);
  lua_pop(L, 1);
  return 1;
}

int el_host_load_module(el_host_t *h, const char *name) {
  lua_State *L = h->L;
  h->err[0] = '\0';
  lua_pushcfunction(L, search_module);
  lua_pushstring(L, name);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    snprintf(h->err, sizeof h->err, "module '%s' not found (Lua directory "
             "%s):%s", name, h->lua_dir, lua_tostring(L, -1));
    lua_pop(L, 1);
    return EL_ELUA;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  return el_host_load(h, path);
}

const char *el_host_lua_dir(const el_host_t *h) { return h->lua_dir; }

int el_host_load_string(el_host_t *h, const char *code, const char *name) {
  h->err[0] = '\0';
  return load_chunk(h, luaL_loadbuffer(h->L, code, strlen(code), name));
}

/* {====== the sink ======} */

static void apply_flags(el_host_t *h, int type);

/* Keeps the decoder's wanted-fields and quiet masks in step with the
 * flags: a type with a flag gets its fields (any of its readers may look
 * at them: the session tracker, the analyses, handlers, the reorder
 * buffer); one without reaches on_event only to be counted and timed, so
 * the decoder may leave its fields out (el_ev_decoder_set_fields) and,
 * below quiet_until, count it itself (el_ev_decoder_set_quiet). Types past the
 * dispatch slots follow star_flag (none of them is known to the decoder,
 * so none has fields to leave out today). */
void el__host_set_flag(el_host_t *h, int type, uint8_t bit, int on) {
  if (bit & EL__F_ORD) h->prog.nocap_ord = -1; /* host_clock.c */
  if (type < 0) {
    h->star_flag = on ? (h->star_flag | bit) : (h->star_flag & ~bit);
    el_ev_decoder_set_fields(h->dec, -1, h->star_flag != 0);
    el_ev_decoder_set_quiet(h->dec, -1, h->star_flag == 0);
    for (int i = 0; i < EL__HOST_NTYPES; i++) el__host_set_flag(h, i, bit, on);
    return;
  }
  if (type >= EL__HOST_NTYPES) return;
  if (on)
    h->want[type] |= bit;
  else
    h->want[type] &= (uint8_t)~bit;
  apply_flags(h, type);
}

/* flags[type] from want[type] and nolayout[type] (host_internal.h), and
 * the decoder's masks and the direct paths in step with it. */
static void apply_flags(el_host_t *h, int type) {
  h->flags[type] =
      h->nolayout[type] ? h->want[type] & h->star_flag : h->want[type];
  el_ev_decoder_set_fields(h->dec, type, h->flags[type] != 0);
  el_ev_decoder_set_quiet(h->dec, type, h->flags[type] == 0);
  el__direct_sync(h, type);
}

/* An event someone wants (f: the flags of its type, not 0): the batch
 * queue, or the session tracker, the C analyses, the Lua handlers in
 * stream and in time order, in turn. */
static __attribute__((noinline)) int on_event_wanted(el_host_t *h,
                                                     const el_ev_event_t *ev,
                                                     uint8_t f) {
  const el_ev_event_t *saved;
  if (f == EL__F_ANA && !h->nbatch) return el__ana_event_only(h, ev);
  if (f == EL__F_LUA && el__batch_add(h, ev)) return h->stop;
  /* Queued events first, as for any Lua; a time-order event alone waits:
   * the records it releases join the queue after them (lua_order.c). */
  if (h->nbatch && f != EL__F_ORD) el__batch_flush(h);
  saved = h->cur;
  h->cur = ev;
  if (f & EL__F_SYS) el__session_event(h, ev);
  if (f & EL__F_ANA) el__ana_event(h, ev);
  if (f & (EL__F_LUA | EL__F_STAR)) el__events_dispatch(h, ev, f);
  if (f & EL__F_ORD)
    el__order_event(h, ev);
  else if (h->order && ev->type == EL_EV_BLOCK_MARKER)
    el__order_release(h, 0); /* the watermark moved (host_clock.c) */
  h->cur = saved;
  return h->stop;
}

/* on_event for the rare events: after an interrupt, malformed, a new
 * session's first event, or at or past the next timer deadline. */
static __attribute__((noinline)) int on_event_rare(el_host_t *h,
                                                   const el_ev_event_t *ev) {
  if (h->interrupted) return 1; /* stop decoding */
  h->st.events++;
  if (ev->malformed) {
    h->st.malformed++; /* its fields cannot be trusted: no handler sees it */
    return h->stop;
  }
  if (h->sess.rebase_timers) {
    h->sess.rebase_timers = 0; /* a new session's first event */
    el__host_quiet_sync(h);
    el__timers_rebase(h, ev->t_ns);
  }
  /* A deadline at or behind the stream time (el.at of a past time, or
   * one added while a batch was replayed at an earlier time) fires on
   * the next event, even one that does not move the stream time. */
  el_rts_ns_t t = ev->t_ns > h->now ? ev->t_ns : h->now;
  if (t >= h->next_deadline) {
    el__batch_flush(h); /* events before the deadline first */
    h->now = t;
    el__timers_fire(h);
  } else {
    h->now = t;
  }
  uint8_t f = ev->type < EL__HOST_NTYPES ? h->flags[ev->type] : h->star_flag;
  return f ? on_event_wanted(h, ev, f) : h->stop;
}

/* The fast path: the count, the stream time and one array lookup for an
 * event nobody wants, without a frame (the other paths are tail calls). */
static int on_event(void *ud, const el_ev_event_t *ev) {
  el_host_t *h = ud;
  if (__builtin_expect(
          h->interrupted || ev->malformed || ev->t_ns >= h->quiet_until, 0))
    return on_event_rare(h, ev); /* quiet_until: el__host_quiet_sync */
  h->st.events++;
  if (ev->t_ns > h->now) h->now = ev->t_ns;
  uint8_t f = ev->type < EL__HOST_NTYPES ? h->flags[ev->type] : h->star_flag;
  if (__builtin_expect(f == 0, 1)) return h->stop;
  if (f == EL__F_ANA && !h->nbatch) return el__ana_event_only(h, ev);
  if (f == EL__F_LUA && el__batch_add_in(h, ev)) return h->stop;
  return on_event_wanted(h, ev, f);
}

/* The known types whose declaration in this header fits none of their
 * layouts (el_ev_decl_t.known = 0): their events come with known = 0,
 * the raw payload and no fields (docs/eventlog.md "Unknown types"), so
 * from now on only the "*" handlers get them (nolayout[]). Each is
 * warned about, naming its declaration's byte, once per session. */
static void header_layouts(el_host_t *h, const el_ev_header_t *hdr) {
  uint8_t nl[EL__HOST_NTYPES] = {0};
  for (size_t i = 0; i < hdr->ndecls; i++) {
    const el_ev_decl_t *dc = &hdr->decls[i];
    const el_ev_type_info_t *ti =
        dc->id < EL__HOST_NTYPES ? el_ev_type_info(dc->id) : NULL;
    if (dc->overridden || dc->known || !ti) continue;
    nl[dc->id] = 1;
    /* code 0: a warning, not a fault of the stream (report lists none) */
    el_diag_t dg = {.offset = dc->offset, .event_type = dc->id};
    char sz[24];
    snprintf(sz, sizeof sz,
             dc->size == EL_EV_VARIABLE ? "variable size" : "size %u",
             (unsigned)dc->size);
    snprintf(dg.msg, sizeof dg.msg,
             "event %s (type %u) is declared at byte %llu with %s, which "
             "no layout of it has: its events are unknown events (raw "
             "payload, no fields), given to \"*\" handlers only, not to "
             "%s handlers",
             ti->name, (unsigned)dc->id, (unsigned long long)dc->offset, sz,
             ti->name);
    on_warning(h, &dg);
  }
  for (int t = 0; t < EL__HOST_NTYPES; t++) {
    if (nl[t] == h->nolayout[t]) continue;
    h->nolayout[t] = nl[t];
    apply_flags(h, t);
  }
}

static int on_header(void *ud, const el_ev_header_t *hdr) {
  el_host_t *h = ud;
  /* The sizes the decoder frames this session's RUN_THREAD and
   * STOP_THREAD with (a declaration overridden by a later one of the
   * same id is not the one used, docs/eventlog.md). */
  int run = -1, stop = -1;
  for (size_t i = 0; i < hdr->ndecls; i++) {
    const el_ev_decl_t *dc = &hdr->decls[i];
    if (dc->overridden) continue;
    if (dc->id == EL_EV_RUN_THREAD) run = dc->size;
    if (dc->id == EL_EV_STOP_THREAD) stop = dc->size;
  }
  h->direct_sizes = run == 4 && stop == 10;
  el__batch_flush(h);
  header_layouts(h, hdr);
  el__lrun_session(h);
  el__session_header(h);
  return h->stop;
}

static void on_data_end(void *ud, uint64_t offset) {
  (void)offset;
  el_host_session_end(ud);
}

static void on_warning(void *ud, const el_diag_t *diag) {
  el_host_t *h = ud;
  h->st.warnings++;
  /* It names its byte; a corrupt part is said in show's words, a warning
   * here as decoding goes on (docs/exit-codes.md). eventlog-socket's
   * stray marker at a connection's start is normal: info. */
  int level = diag->expected ? EL_LOG_INFO : EL_LOG_WARN;
  if (h->input_name[0])
    el_log(level, "%s: %s", h->input_name, diag->msg);
  else
    el_log(level, "%s", diag->msg);
  if (h->warning_fn) h->warning_fn(h->warning_ud, diag);
}

int el_host_feed(el_host_t *h, const uint8_t *buf, size_t len) {
  if (h->interrupted) return EL_ESTOPPED;
  int rc = el_ev_decoder_feed(h->dec, buf, len);
  el__batch_flush(h);
  return rc == 0 && (h->stop || h->interrupted) ? EL_ESTOPPED : rc;
}

void el_host_flush(el_host_t *h) { el__batch_flush(h); }

/* A signal's interrupt that found no Lua call running is still armed:
 * it would fail the first session-end or on_end hook instead. Those run
 * after an interrupt by contract (host.h), so the hook is taken back. */
static void disarm_interrupt(el_host_t *h) {
  if (!h->break_lua) return;
  h->break_lua = 0;
  lua_sethook(h->L, NULL, 0, 0);
  if (h->D) lua_sethook(h->D, NULL, 0, 0);
  arm_budget(h);
}

void el_host_session_end(el_host_t *h) {
  disarm_interrupt(h);
  el__batch_flush(h);
  el__session_end(h);
}

int el_host_end(el_host_t *h) {
  if (!h->ended) {
    h->ended = 1;
    disarm_interrupt(h);
    el__batch_flush(h);
    el__session_end(h);
    el__ana_flush(h);
    el__order_report(h);
    el__hooks_call(h, "on_end", 0); /* also after a stop */
    el__timers_warn_unfired(h);
    if (h->store) el_tm_store_flush(h->store);
    el__stdout_report(h);
  }
  return h->stop ? EL_ESTOPPED : 0;
}

void el_host_report_errors(const el_host_t *h) {
  for (int i = 0; i < h->all.n; i++) {
    const el__handler_t *hd = h->all.v[i];
    if (!hd->errors) continue;
    const el_ev_type_info_t *ti =
        hd->type >= 0 ? el_ev_type_info((uint16_t)hd->type) : NULL;
    el_eprintf(
        "%llu error(s) in %llu call(s) of the %s handler "
        "defined at %s\n",
        (unsigned long long)hd->errors, (unsigned long long)hd->calls,
        hd->type < 0 ? "\"*\""
        : ti         ? ti->name
                     : "?",
        hd->where);
  }
  for (int i = 0; i < h->ntimer_err; i++)
    el_eprintf("%llu error(s) in callbacks of the timer(s) made at %s\n",
               (unsigned long long)h->timer_err[i].errors,
               h->timer_err[i].where);
  if (h->timer_err_other)
    el_eprintf("%llu error(s) in the callbacks of other timers\n",
               (unsigned long long)h->timer_err_other);
  if (h->hook_handler.errors)
    el_eprintf(
        "%llu error(s) in hooks and helper "
        "callbacks\n",
        (unsigned long long)h->hook_handler.errors);
}
