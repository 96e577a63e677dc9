/* lua_opts.c: the keys of the Lua API's option tables (el.on, el.order,
 * el.threads, el.gc, el.cap_usage) and description tables (el.metric,
 * el.log, el.log_batch, el.span, el.profile_sample and its frames). A key
 * the function does not read is an error that names it and the nearest
 * known key, not an option silently ignored ({ordr = "time"}).
 * docs/lua-api.md §9 "Errors". */
#include <string.h>

#include "../common/el_common.h"
#include "host_internal.h"

/* The set {key = index} of keys[] (NULL-terminated, at most 64) onto the
 * stack, made once per state and kept in the registry under the array's
 * address: a key is then checked with one table lookup, not a string
 * compare per known key (el.log runs per record). [-0, +1, m] */
static void push_key_set(lua_State *L, const char *const *keys) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, keys) == LUA_TTABLE) return;
  lua_pop(L, 1);
  int n = 0;
  while (keys[n]) n++;
  if (n > 64) luaL_error(L, "internal: more than 64 keys");
  lua_createtable(L, 0, n);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, i);
    lua_setfield(L, -2, keys[i]);
  }
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, keys);
}

/* Raise for the key on top of the stack (at -2 of lua_next's pair).
 * Never returns. [-0, +0, v] */
static int unknown_key(lua_State *L, const char *fn, const char *what,
                       const char *const *keys) {
  if (lua_type(L, -2) != LUA_TSTRING) {
    const char *type = luaL_typename(L, -2);
    return luaL_error(L, "%s: %s names must be strings (got the %s key %s)", fn,
                      what, type, luaL_tolstring(L, -2, NULL));
  }
  const char *k = lua_tostring(L, -2);
  size_t nkeys = 0;
  while (keys[nkeys]) nkeys++;
  const char *near = el_nearest(k, keys, nkeys);
  if (near)
    return luaL_error(L, "%s: unknown %s '%s' (did you mean '%s'?)", fn, what,
                      k, near);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; keys[i]; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, keys[i]);
  }
  luaL_pushresult(&b);
  return luaL_error(L, "%s: unknown %s '%s' (known: %s)", fn, what, k,
                    lua_tostring(L, -1));
}

uint64_t el__lua_check_keys(lua_State *L, int idx, const char *fn,
                            const char *what, const char *const *keys) {
  idx = lua_absindex(L, idx);
  push_key_set(L, keys);
  int set = lua_gettop(L);
  uint64_t present = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pushvalue(L, -2);
    if (lua_rawget(L, set) == LUA_TNIL) {
      lua_pop(L, 1);
      unknown_key(L, fn, what, keys);
    }
    present |= (uint64_t)1 << lua_tointeger(L, -1);
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  return present;
}

/* {====== field values ======} */

/* Raise "FN: field 'KEY' must be WANT (got GOT)" for the value at the top
 * of the stack. Never returns. [-0, +0, v] */
static int field_error(lua_State *L, const char *fn, const char *key,
                       const char *want) {
  const char *got = lua_type(L, -1) == LUA_TNUMBER
                        ? lua_pushfstring(L, "%s", luaL_tolstring(L, -1, NULL))
                        : luaL_typename(L, -1);
  return luaL_error(L, "%s: field '%s' must be %s (got %s)", fn, key, want,
                    got);
}

lua_Integer el__field_integer(lua_State *L, const char *fn, const char *key) {
  int ok;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || lua_type(L, -1) != LUA_TNUMBER)
    field_error(L, fn, key, "an integer");
  return v;
}

lua_Integer el__field_opt_integer(lua_State *L, const char *fn, const char *key,
                                  lua_Integer def) {
  return lua_isnil(L, -1) ? def : el__field_integer(L, fn, key);
}

uint64_t el__field_time(lua_State *L, const char *fn, const char *key) {
  int ok;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || lua_type(L, -1) != LUA_TNUMBER || v < 0)
    field_error(L, fn, key, "an integer time >= 0 (ns)");
  return (uint64_t)v;
}

const char *el__field_string(lua_State *L, const char *fn, const char *key,
                             size_t *len) {
  int t = lua_type(L, -1);
  if (t != LUA_TSTRING && t != LUA_TNUMBER) field_error(L, fn, key, "a string");
  return lua_tolstring(L, -1, len);
}

int el__field_option(lua_State *L, const char *fn, const char *key,
                     const char *def, const char *const lst[]) {
  const char *v = def && lua_isnil(L, -1) ? def : NULL;
  if (!v) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      luaL_addstring(&b, "one of ");
      for (int i = 0; lst[i]; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, lst[i]);
      }
      luaL_pushresult(&b);
      lua_insert(L, -2); /* the value back on top */
      field_error(L, fn, key, lua_tostring(L, -2));
    }
    v = lua_tostring(L, -1);
  }
  size_t n = 0;
  for (; lst[n]; n++)
    if (!strcmp(lst[n], v)) return (int)n;
  const char *near = el_nearest(v, lst, n);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < n; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, lst[i]);
  }
  luaL_pushresult(&b);
  return luaL_error(L, "%s: field '%s' is '%s'%s%s%s: use one of %s", fn, key,
                    v, near ? " (did you mean '" : "", near ? near : "",
                    near ? "'?)" : "", lua_tostring(L, -1));
}

void el__field_function(lua_State *L, const char *fn, const char *key) {
  if (lua_type(L, -1) != LUA_TFUNCTION) field_error(L, fn, key, "a function");
}
