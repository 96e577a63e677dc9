/* test_repl.c: the REPL's event store (src/repl/repl_store.h): results do
 * not depend on how the input is chunked, the byte bound holds and drops
 * are counted, queries through the Lua binding filter by type, capability,
 * thread, time window, text and session, and hostile input (truncated,
 * random bytes) neither crashes nor corrupts the records.
 * Expected figures are counted in the ghc-events reference of oddball-hT
 * (33275 event lines; 9835 "running thread" lines; 10 "marker:" lines, the
 * last at 1140351868 ns; first event 629681 ns, last 1182132831 ns; 4
 * "cap 0: running thread" lines; 8 lines about thread 3; 2 markers with
 * "Summing 24").
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "eventlog/eventlog.h"
#include "repl/repl_store.h"

static uint8_t *read_all(const char *name, size_t *len) {
  char path[1024];
  const char *d = getenv("EL_EVENTLOGS");
  snprintf(path, sizeof path, "%s/%s",
           d ? d : EL_SOURCE_DIR "/tests/data/eventlogs", name);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n);
  assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return b;
}

static void feed_chunks(el_repl_store_t *s, const uint8_t *b, size_t n,
                        size_t chunk) {
  for (size_t off = 0; off < n; off += chunk)
    el_repl_store_feed(s, b + off, n - off < chunk ? n - off : chunk);
}

static void test_chunking(void **state) {
  (void)state;
  size_t n;
  uint8_t *b = read_all("ghc-9.0/oddball-hT.eventlog", &n);
  const size_t chunks[] = {n, 65536, 4093, 7, 1};
  int run = el_ev_type_by_name("RUN_THREAD");
  for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    el_repl_store_t *s = el_repl_store_new(0);
    assert_non_null(s);
    feed_chunks(s, b, n, chunks[i]);
    el_repl_store_stats_t st;
    el_repl_store_stats(s, &st);
    assert_int_equal(st.events, 33275);
    assert_int_equal(st.stored, 33275);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.sessions, 1);
    assert_int_equal(st.first_seq, 1);
    assert_int_equal(st.min_t, 629681);
    assert_int_equal(st.max_t, 1182132831);
    assert_int_equal(el_repl_store_count(s, (uint16_t)run), 9835);
    el_repl_store_free(s);
  }
  free(b);
}

static void test_bound(void **state) {
  (void)state;
  size_t n;
  uint8_t *b = read_all("ghc-9.0/threads.eventlog", &n);
  const size_t bound = 256 * 1024;
  el_repl_store_t *s = el_repl_store_new(bound);
  size_t peak = 0;
  for (size_t off = 0; off < n; off += 100000) {
    el_repl_store_feed(s, b + off, n - off < 100000 ? n - off : 100000);
    el_repl_store_stats_t st;
    el_repl_store_stats(s, &st);
    assert_true(st.bytes <= bound);
    if (st.bytes > peak) peak = st.bytes;
  }
  el_repl_store_stats_t st;
  el_repl_store_stats(s, &st);
  assert_true(st.dropped > 0);
  assert_int_equal(st.stored + st.dropped, st.events);
  assert_int_equal(st.first_seq, st.dropped + 1);
  assert_true(peak > bound / 2);  /* most of the bound is used */
  el_repl_store_free(s);
  free(b);
}

/* Run `code` (returning values) with the store module as global S. */
static lua_State *lua_with(el_repl_store_t *s) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  el_repl_store_push_lua(L, s);
  lua_setglobal(L, "S");
  return L;
}

static void run_lua(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) != LUA_OK)
    fail_msg("lua: %s", lua_tostring(L, -1));
}

static void test_query(void **state) {
  (void)state;
  size_t n;
  uint8_t *b = read_all("ghc-9.0/oddball-hT.eventlog", &n);
  el_repl_store_t *s = el_repl_store_new(0);
  el_repl_store_feed(s, b, n);
  lua_State *L = lua_with(s);
  run_lua(
      L,
      "local l, m = S.query{type = 'USER_MARKER'}\n"
      "assert(#l == 10 and m == 10, 'markers ' .. #l)\n"
      "assert(l[10].t == 1140351868 and l[10].cap == 1)\n"
      "assert(l[10].marker == 'Summing 240086 numbers', l[10].marker)\n"
      "assert(l[1].type == 'USER_MARKER' and l[1].type_id == 58)\n"
      "local r = S.query{type = {'RUN_THREAD'}, cap = 0}\n"
      "assert(#r == 4, 'cap 0 runs ' .. #r)\n"
      "local t = S.query{thread = 3}\n"
      "assert(#t == 8, 'thread 3: ' .. #t)\n"
      "for _, e in ipairs(t) do assert(e.thread == 3) end\n"
      "assert(#S.query{text = 'Summing 24'} == 2)\n"
      "local w = S.query{type = 'USER_MARKER', from = 465563072,\n"
      "                  to = 508358298}\n"
      "assert(#w == 2, 'window ' .. #w)\n"
      "local last = S.query{last = 3}\n"
      "assert(#last == 3 and last[3].seq == 33275 and last[1].seq == 33273)\n"
      "local first, all = S.query{limit = 2}\n"
      "assert(#first == 2 and first[1].seq == 1 and all == 33275)\n"
      "assert(#S.query{session = 2} == 0)\n"
      "local g = S.query{cap = 'none', type = 'PROGRAM_ARGS'}\n"
      "assert(#g == 1 and g[1].cap == nil and g[1].args[1] == './Oddball')\n"
      "assert(S.counts().USER_MARKER == 10)\n"
      "assert(not pcall(S.query, {type = 'NO_SUCH_TYPE'}))\n"
      "local ok2, e2 = pcall(S.query, {type = 'RUN_THRAED'})\n"
      "assert(not ok2 and e2:find(\"did you mean 'RUN_THREAD'\", 1, true),"
      " e2)\n"
      "assert(not pcall(S.query, {cap = 'x'}))\n");
  lua_close(L);
  el_repl_store_free(s);
  free(b);
}

/* Truncated and random input: records stay walkable, nothing crashes. */
static void test_hostile(void **state) {
  (void)state;
  size_t n;
  uint8_t *b = read_all("ghc-9.0/oddball-hT.eventlog", &n);
  srand(42);
  for (int round = 0; round < 20; round++) {
    el_repl_store_t *s = el_repl_store_new(128 * 1024);
    size_t cut = (size_t)rand() % n;
    uint8_t *c = malloc(n);
    memcpy(c, b, n);
    if (round % 2)  /* corrupt some bytes after the header */
      for (int k = 0; k < 50; k++) c[4096 + (size_t)rand() % (n - 4096)] =
          (uint8_t)rand();
    el_repl_store_feed(s, c, cut);
    el_repl_store_reset(s);  /* a reconnect in the middle */
    el_repl_store_feed(s, c, n);
    uint8_t junk[3000];
    for (size_t k = 0; k < sizeof junk; k++) junk[k] = (uint8_t)rand();
    el_repl_store_feed(s, junk, sizeof junk);
    el_repl_store_stats_t st;
    el_repl_store_stats(s, &st);
    assert_int_equal(st.stored + st.dropped, st.events);
    lua_State *L = lua_with(s);
    char code[256];
    snprintf(code, sizeof code,
             "local l, m = S.query{}\n"
             "assert(#l == %llu and m == #l)\n"
             "for _, e in ipairs(S.query{last = 50}) do assert(e.t) end\n",
             (unsigned long long)st.stored);
    run_lua(L, code);
    lua_close(L);
    el_repl_store_free(s);
    free(c);
  }
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chunking),
      cmocka_unit_test(test_bound),
      cmocka_unit_test(test_query),
      cmocka_unit_test(test_hostile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
