/* lua_control.c: the Lua function control(namespace, command_id), which
 * sends an eventlog-socket control message through the same el_ctl_send
 * path as the HTTP server. The host registers it (see control.h,
 * el_ctl_lua_push_control, and docs/control.md). */
#include <lauxlib.h>
#include <lua.h>

#include "control/control.h"

/* [-2, +1|2, v] control(namespace, id) or control(builtin_name).
 * Upvalue 1: light userdata, the el_ctl_sender_t (may be NULL). */
static int ctl_control(lua_State *L) {
  const el_ctl_sender_t *s = lua_touserdata(L, lua_upvalueindex(1));
  size_t ns_len;
  const char *ns = luaL_checklstring(L, 1, &ns_len);
  lua_Integer id;
  if (lua_isnoneornil(L, 2)) {
    /* control("request-heap-census"): a builtin route name. */
    id = el_ctl_builtin_id(ns, ns_len);
    if (id == 0)
      return luaL_argerror(L, 1, "not a builtin command name "
                                 "(give a namespace and a command id)");
    ns = EL_CTL_NS_EVENTLOG_SOCKET;
    ns_len = sizeof EL_CTL_NS_EVENTLOG_SOCKET - 1;
  } else {
    id = luaL_checkinteger(L, 2);
    luaL_argcheck(L, id >= 1 && id <= 255, 2, "command id must be 1..255");
    luaL_argcheck(L, ns_len >= 1 && ns_len <= EL_CTL_NS_MAX, 1,
                  "namespace must be 1..255 bytes");
  }
  int rc = el_ctl_send(s, ns, ns_len, (int)id);
  if (rc == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_pushfail(L);
  lua_pushstring(L, el_strerror(rc));
  return 2;
}

void el_ctl_lua_push_control(lua_State *L, const el_ctl_sender_t *s) {
  lua_pushlightuserdata(L, (void *)s);
  lua_pushcclosure(L, ctl_control, 1);
}
