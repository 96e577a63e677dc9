/* Lua's print() and io.write() to stdout, with their failures said.
 *
 * Lua's own print() ignores write errors, and io.write() only returns
 * them: a script piped into a reader that went away (`run s.lua | head`)
 * would lose its output without a word. These wrappers behave as Lua's
 * (the same text, io.write's same results), and when a write to stdout
 * fails they warn once naming the error, as the console exporter does
 * (src/otlp/exp_console.c); after a broken pipe (EPIPE: `run` ignores
 * SIGPIPE) nothing more is written to stdout, the calls are only
 * counted, and el__stdout_report says how many were dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "host_internal.h"

/* A write to stdout failed with e: warn the first time. */
static void out_failed(el_host_t *h, int e) {
  if (h->out_err) return;
  h->out_err = e ? e : EIO;
  if (h->out_err == EPIPE) {
    /* What stdout still holds can never be written: dropped, so that no
     * later fflush (the console exporter's, the exit's) fails on it and
     * turns a closed reader into an export failure. */
    __fpurge(stdout);
    clearerr(stdout);
  }
  el_log(EL_LOG_WARN, "Lua print()/io.write(): writing stdout failed: %s; %s",
         strerror(h->out_err),
         h->out_err == EPIPE
             ? "the script's output to stdout is dropped from now on "
               "(counted)"
             : "the calls that fail are counted");
}

/* Lua 5.4's luaB_print, writing to stdout with its errors checked. */
static int l_print(lua_State *L) {
  el_host_t *h = el__host_from(L);
  int n = lua_gettop(L);
  int skip = h->out_err == EPIPE;
  h->out_used = 1;
  if (!skip && h->out_sync) h->out_sync(h->out_sync_ud);
  int bad = 0;
  for (int i = 1; i <= n; i++) {
    size_t l;
    const char *s = luaL_tolstring(L, i, &l); /* __tostring runs anyway */
    if (!skip) {
      if (i > 1 && fwrite("\t", 1, 1, stdout) != 1) bad = 1;
      if (fwrite(s, 1, l, stdout) != l) bad = 1;
    }
    lua_pop(L, 1);
  }
  if (!skip) {
    errno = 0;
    if (fwrite("\n", 1, 1, stdout) != 1) bad = 1;
    if (fflush(stdout) != 0) bad = 1;
    if (bad) out_failed(h, errno);
  }
  if (skip || bad) h->out_dropped++;
  return 0;
}

/* Is the file io.write or file:write writes to stdout? method: arg 1 is
 * the file; otherwise io's default output. */
static int to_stdout(lua_State *L, int method) {
  luaL_Stream *p;
  if (method) {
    p = luaL_testudata(L, 1, LUA_FILEHANDLE);
  } else {
    lua_getfield(L, LUA_REGISTRYINDEX, "_IO_output");
    p = luaL_testudata(L, -1, LUA_FILEHANDLE);
    lua_pop(L, 1);
  }
  return p && p->closef && p->f == stdout;
}

/* io.write and file:write (upvalue 1: Lua's function, upvalue 2: 1 for
 * the method). */
static int l_write(lua_State *L) {
  el_host_t *h = el__host_from(L);
  int method = (int)lua_tointeger(L, lua_upvalueindex(2));
  if (!to_stdout(L, method)) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  h->out_used = 1;
  if (h->out_err == EPIPE) { /* what Lua's write would say, unwritten */
    h->out_dropped++;
    lua_pushnil(L);
    lua_pushstring(L, strerror(EPIPE));
    lua_pushinteger(L, EPIPE);
    return 3;
  }
  if (h->out_sync) h->out_sync(h->out_sync_ud);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  int nres = lua_gettop(L);
  if (nres >= 3 && lua_isnil(L, 1) && lua_isinteger(L, 3)) {
    out_failed(h, (int)lua_tointeger(L, 3));
    h->out_dropped++;
  }
  return nres;
}

/* Replace t[name] (t at idx) by l_write around it. */
static void wrap_write(lua_State *L, int idx, int method) {
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, idx, "write") != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushinteger(L, method);
  lua_pushcclosure(L, l_write, 2);
  lua_setfield(L, idx, "write");
}

void el__stdout_install(lua_State *L) {
  lua_pushcfunction(L, l_print);
  lua_setglobal(L, "print");
  if (lua_getglobal(L, "io") == LUA_TTABLE) wrap_write(L, -1, 0);
  lua_pop(L, 1);
  if (luaL_getmetatable(L, LUA_FILEHANDLE) == LUA_TTABLE &&
      lua_getfield(L, -1, "__index") == LUA_TTABLE)
    wrap_write(L, -1, 1);
  lua_pop(L, 2);
}

void el__stdout_report(el_host_t *h) {
  if (h->out_used && h->out_err != EPIPE) {
    /* io.write's last bytes may still sit in stdout's buffer */
    errno = 0;
    if (fflush(stdout) != 0) out_failed(h, errno);
  }
  if (!h->out_dropped || h->out_reported == h->out_dropped) return;
  h->out_reported = h->out_dropped;
  el_log(EL_LOG_WARN,
         "Lua print()/io.write(): %llu call%s writing stdout dropped%s",
         (unsigned long long)h->out_dropped, h->out_dropped == 1 ? "" : "s",
         h->out_err == EPIPE ? ": the output's reader had gone" : "");
}
