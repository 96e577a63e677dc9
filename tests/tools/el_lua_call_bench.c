/* el_lua_call_bench: the yardstick of scripts/bench.d/lua.sh, a bare
 * lua_call loop from C. In the Lua state of a real host (same Lua, same
 * counting allocator) it calls the trivial handlers of the bench script,
 * alternately RUN_THREAD's (1 field) and STOP_THREAD's (3 fields), N times
 * in all, with the arguments pushed from C as the host pushes them, inside
 * one protected call: no decoding, no queue, no bookkeeping. Per calling
 * convention (docs/lua-api.md §2) it prints the best of R rounds:
 *   args=<ev|t> calls=<n> ns_per_call=<CPU ns>
 * Usage: el_lua_call_bench [N [R [SHAPE]]] (default 20000000 calls, 5
 * rounds, both conventions; SHAPE "ev" or "t": that one only, for
 * scripts/bench.d/instructions.sh, which counts the instructions of two
 * call counts). Figures only. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/host.h"

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The handlers of scripts/bench.d/lua.sh's trivial scripts, as globals. */
static const char SCRIPT[] =
    "local n = 0\n"
    "run_ev = function(ev, thread) n = n + 1 end\n"
    "stop_ev = function(ev, thread, status) n = n + 1 end\n"
    "run_t = function(t, cap, thread) n = n + 1 end\n"
    "stop_t = function(t, cap, thread, status) n = n + 1 end\n"
    "ev = {t = 0, cap = 0}\n"
    "function count() return n end\n";

/* Protected: N calls. Args: N, shape (0 = ev, 1 = t). Stack slots: 3 run,
 * 4 stop, 5 ev. [-2, +0, e] */
static int loop(lua_State *L) {
  lua_Integer n = lua_tointeger(L, 1);
  int t_shape = (int)lua_tointeger(L, 2);
  lua_getglobal(L, t_shape ? "run_t" : "run_ev");
  lua_getglobal(L, t_shape ? "stop_t" : "stop_ev");
  lua_getglobal(L, "ev");
  for (lua_Integer i = 0; i < n; i++) {
    int stop = (int)(i & 1), na;
    lua_pushvalue(L, stop ? 4 : 3);
    if (t_shape) {
      lua_pushinteger(L, 1000 + i);
      lua_pushinteger(L, (lua_Integer)(i >> 8) & 1);
      na = 2;
    } else {
      lua_pushvalue(L, 5);
      na = 1;
    }
    lua_pushinteger(L, 7 + (i & 63));
    if (stop) {
      lua_pushinteger(L, 5);
      lua_pushinteger(L, 0);
      na += 2;
    }
    lua_call(L, na + 1, 0);
  }
  return 0;
}

int main(int argc, char **argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 20000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  const char *only = argc > 3 ? argv[3] : NULL;
  if (n < 1 || rounds < 1 ||
      (only && strcmp(only, "ev") != 0 && strcmp(only, "t") != 0)) {
    fprintf(stderr,
            "usage: el_lua_call_bench [calls >= 1 [rounds >= 1 "
            "[ev|t]]]\n");
    return 2;
  }
  el_host_t *h = el_host_new(NULL);
  if (!h || el_host_load_string(h, SCRIPT, "=bench") != 0) {
    fprintf(stderr, "el_lua_call_bench: cannot set up a host: %s\n",
            h ? el_host_error(h) : "out of memory");
    el_host_free(h);
    return 1;
  }
  lua_State *L = el_host_lua(h);
  static const char *const shapes[] = {"ev", "t"};
  for (int s = 0; s < 2; s++) {
    if (only && strcmp(only, shapes[s]) != 0) continue;
    double best = 0;
    for (int r = 0; r < rounds; r++) {
      lua_pushcfunction(L, loop);
      lua_pushinteger(L, n);
      lua_pushinteger(L, s);
      double t0 = cpu_ns();
      if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        fprintf(stderr, "el_lua_call_bench: %s\n", lua_tostring(L, -1));
        el_host_free(h);
        return 1;
      }
      double dt = cpu_ns() - t0;
      if (r == 0 || dt < best) best = dt;
    }
    printf("args=%s calls=%lld ns_per_call=%.1f\n", shapes[s], n, best / n);
  }
  el_host_free(h);
  return 0;
}
