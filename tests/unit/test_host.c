/* test_host.c: the Lua host binding: dispatch only to subscribed types,
 * handler errors counted and not fatal, tracebacks, fail-fast, timers in
 * eventlog-time order, emit reaching the store, load errors, the C
 * analyses' time order across capability blocks, and live, what counts as
 * a capability's silence.
 * Expected counts come from the ghc-events reference of oddball-hT
 * (10 "marker:" lines, 1289 "starting GC" lines, last event time).
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>

#include "host/host.h"
#include "host/host_internal.h" /* el__lua_direct_run */
#include "test_eventlog_util.h"

static uint8_t *read_all(const char *path, size_t *len) {
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

/* The path of the GHC 9.0 test log `name` (without .eventlog), in a
 * static buffer (valid until the next call). */
static const char *eventlog_named(const char *name) {
  static char path[1024];
  const char *d = getenv("EL_EVENTLOGS");
  snprintf(path, sizeof path, "%s/ghc-9.0/%s.eventlog",
           d ? d : EL_SOURCE_DIR "/tests/data/eventlogs", name);
  return path;
}

static const char *eventlog(void) { return eventlog_named("oddball-hT"); }

static int feed_file(el_host_t *h) {
  size_t len;
  uint8_t *b = read_all(eventlog(), &len);
  int rc = el_host_feed(h, b, len);
  free(b);
  return rc;
}

/* Run `expr` in the host's state and return it as an integer. */
static long long lua_int(el_host_t *h, const char *expr) {
  lua_State *L = el_host_lua(h);
  char code[512];
  snprintf(code, sizeof code, "return %s", expr);
  assert_int_equal(luaL_dostring(L, code), 0);
  long long v = (long long)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

static el_host_t *host_opts_with(const char *script, el_host_opts_t o) {
  el_host_t *h = el_host_new(&o);
  assert_non_null(h);
  int rc = el_host_load_string(h, script, "=test");
  if (rc != 0) fprintf(stderr, "%s\n", el_host_error(h));
  assert_int_equal(rc, 0);
  return h;
}

static el_host_t *host_with(const char *script, int fail_fast) {
  return host_opts_with(script, (el_host_opts_t){.fail_fast = fail_fast});
}

/* eventlog_live.status names STOP_THREAD statuses as ghc-events does,
 * from the C table (el.status_name); moved here from the pure-Lua
 * tests/lua/stats_spec.lua when the module came to need a host. A failed
 * Lua assert is a load error. */
static void test_status_module_names(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "local status = require('eventlog_live.status')\n"
      "local function eq(a, b) assert(a == b, tostring(b)) end\n"
      "eq('ThreadYielding', status.name(3))\n"
      "eq('ThreadFinished', status.name(5))\n"
      "eq('BlockedOnMVar', status.name(7))\n"
      "eq('BlockedOnBlackHoleOwnedBy 42', status.name(8, 42))\n"
      "eq('BlockedOnMVarRead', status.name(20))\n"
      "eq('NoStatus', status.name(99))\n"
      "assert(status.is_blocked(7) == true)\n"
      "assert(status.is_blocked(3) == false)\n"
      "done = 1\n",
      1);
  assert_int_equal(lua_int(h, "done"), 1);
  el_host_free(h);
}

static void test_dispatch_only_subscribed(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); n = 0; texts = {}\n"
      "el.on('USER_MARKER', function(ev, m) n = n + 1\n"
      "  assert(ev.type == 'USER_MARKER' and ev.marker == m)\n"
      "  assert(ev.cap == 1 and ev.t > 0) end)\n",
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(lua_int(h, "n"), 10);
  const el_host_stats_t *st = el_host_stats(h);
  assert_int_equal(st->dispatched, 10);
  assert_true(st->events > 30000);
  assert_int_equal(st->handler_errors, 0);
  el_host_free(h);
}

static int nlogged;
static int saw_traceback;
static void log_hook(void *ud, el_log_level_t level, const char *msg) {
  (void)ud;
  (void)level;
  nlogged++;
  if (strstr(msg, "stack traceback") && strstr(msg, "boom")) saw_traceback++;
}

static void test_handler_error_counted_not_fatal(void **state) {
  (void)state;
  nlogged = saw_traceback = 0;
  el_log_set_hook(log_hook, NULL);
  el_host_t *h = host_with(
      "el = require('eventlog_live'); ok = 0\n"
      "el.on('USER_MARKER', function(ev) error('boom') end)\n"
      "el.on('USER_MARKER', function(ev) ok = ok + 1 end)\n",
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(el_host_stats(h)->handler_errors, 10);
  assert_int_equal(lua_int(h, "ok"), 10);
  /* rate limit: the first 5 errors are logged, with a traceback */
  assert_int_equal(nlogged, 5);
  assert_int_equal(saw_traceback, 5);
  el_log_set_hook(NULL, NULL);
  el_host_free(h);
}

static void test_fail_fast_stops(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); n = 0\n"
      "el.on('USER_MARKER', function(ev) n = n + 1; error('stop here') end)\n",
      1);
  assert_int_equal(feed_file(h), EL_ESTOPPED);
  assert_int_equal(el_host_end(h), EL_ESTOPPED);
  assert_int_equal(lua_int(h, "n"), 1);
  assert_non_null(strstr(el_host_error(h), "test:2:"));
  assert_non_null(strstr(el_host_error(h), "stop here"));
  el_host_free(h);
}

static void test_timers_fire_in_eventlog_time_order(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); ticks = {}; order_ok = true\n"
      "last_ev = 0; late = 0\n"
      "el.every(100000000, function(t) ticks[#ticks + 1] = t\n"
      "  if el.now() < t then order_ok = false end end)\n"
      "at_fired = 0; el.at(250000000, function(t) at_fired = t end)\n"
      "el.on('GC_START', function(ev)\n"
      "  -- a GC_START after a tick has a time >= the tick or is late\n"
      "  if #ticks > 0 and ev.t < ticks[#ticks] then late = late + 1 end\n"
      "end)\n",
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  /* the last event of oddball-hT is at 1183473045 ns (block end time) */
  assert_int_equal(lua_int(h, "#ticks"), 11);
  assert_int_equal(lua_int(h, "ticks[1]"), 100000000);
  assert_int_equal(lua_int(h, "ticks[11]"), 1100000000);
  assert_int_equal(lua_int(h, "order_ok and 1 or 0"), 1);
  assert_int_equal(lua_int(h, "at_fired"), 250000000);
  el_host_free(h);
}

/* A timer whose handle is dropped and collected, or closed, inside its
 * own callback must keep working (periodic) or end (closed) without the
 * firing loop touching freed memory (a use after free found by the
 * daemon's audit; ASan catches a regression). */
static void test_timer_collected_in_own_callback(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); ticks = 0; closed_runs = 0\n"
      "el.every(100000000, function() ticks = ticks + 1\n"
      "  collectgarbage('collect') end)\n"
      "local tc; tc = el.every(100000000, function()\n"
      "  closed_runs = closed_runs + 1\n"
      "  local h <close> = tc; tc = nil; collectgarbage('collect') end)\n"
      "collectgarbage('collect')\n",
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  /* ticks at 100, 200, ..., 1100 ms: the last event of oddball-hT is at
   * 1183473045 ns (as in the test above). */
  assert_int_equal(lua_int(h, "ticks"), 11);
  assert_int_equal(lua_int(h, "closed_runs"), 1);
  el_host_free(h);
}

/* {====== emit reaches the store ======} */

static int exported[EL_TM_NSIGNALS];
static int cap_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  (void)ud;
  exported[sig] += (int)el_tm_batch_count(b);
  el_tm_batch_free(b);
  return 0;
}
static int cap_flush(void *ud, int timeout_ms) {
  (void)ud;
  (void)timeout_ms;
  return 0;
}

static void test_emit_reaches_store(void **state) {
  (void)state;
  memset(exported, 0, sizeof exported);
  el_tm_store_t *st = el_tm_store_new("test", "0");
  assert_non_null(st);
  el_tm_exporter_t ex = {.name = "cap", .signals = 0xF,
                         .export = cap_export, .flush = cap_flush};
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_host_opts_t o = {0};
  el_host_t *h = el_host_new(&o);
  el_host_set_store(h, st);
  assert_int_equal(
      el_host_load_string(h,
          "el = require('eventlog_live')\n"
          "m = el.metric{name = 'markers', kind = 'sum', monotonic = true,"
          " temporality = 'delta', unit = '1'}\n"
          "el.on('USER_MARKER', function(ev, text)\n"
          "  assert(m:point(1, {cap = ev.cap, text = text}))\n"
          "  assert(el.log{body = text, severity = 'info'})\n"
          "  assert(el.span{name = 'x', start_t = ev.t, end_t = ev.t + 1})\n"
          "  assert(el.profile_sample{frames = {'main', {func = 'f',"
          " file = 'F.hs', line = 3}}})\n"
          "end)\n",
          "=emit"),
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  const el_tm_stats_t *ts = el_tm_store_stats(st);
  assert_int_equal(ts->emitted[EL_TM_SIGNAL_METRICS], 10);
  assert_int_equal(ts->emitted[EL_TM_SIGNAL_LOGS], 10);
  assert_int_equal(ts->emitted[EL_TM_SIGNAL_TRACES], 10);
  assert_int_equal(ts->emitted[EL_TM_SIGNAL_PROFILES], 10);
  assert_true(exported[EL_TM_SIGNAL_LOGS] > 0);
  el_host_free(h);
  el_tm_store_free(st);
}

/* A host on a new store (*st) whose exporter (cap_export, counts in
 * exported[], reset) takes `signals`; the store sealed when seal is set. */
static el_host_t *host_on_store(unsigned signals, int seal,
                                el_tm_store_t **st) {
  memset(exported, 0, sizeof exported);
  *st = el_tm_store_new("test", "0");
  assert_non_null(*st);
  el_tm_exporter_t ex = {.name = "cap",
                         .signals = signals,
                         .export = cap_export,
                         .flush = cap_flush};
  assert_int_equal(el_tm_store_add_exporter(*st, &ex), 0);
  if (seal) el_tm_store_seal(*st);
  el_host_t *h = el_host_new(NULL);
  el_host_set_store(h, *st);
  return h;
}

/* Native spans (el.threads{spans=}, el.cap_usage{spans=}) on the test
 * log with a store whose exporter takes `signals`, sealed or not: *n gets
 * the spans the on_span callbacks saw (the same spans, Idle excepted),
 * *emitted the store's count of traces. */
static void native_spans_run(unsigned signals, int seal, long long *n,
                             uint64_t *emitted) {
  el_tm_store_t *st;
  el_host_t *h = host_on_store(signals, seal, &st);
  assert_int_equal(
      el_host_load_string(
          h,
          "el = require('eventlog_live'); n = 0\n"
          "el.threads{spans = 'T', on_span = function() n = n + 1 end}\n"
          "el.cap_usage{spans = 'C', on_span = function(cap, cat)\n"
          "  if cat ~= 'Idle' then n = n + 1 end end}\n",
          "=native"),
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  *n = lua_int(h, "n");
  *emitted = el_tm_store_stats(st)->emitted[EL_TM_SIGNAL_TRACES];
  el_host_free(h);
  el_tm_store_free(st);
}

/* With no exporter taking traces (a sealed store, OTEL_TRACES_EXPORTER=
 * none) the native spans are not built but still counted as emitted, one
 * per span; with a trace exporter, or unsealed, they are exported. */
static void test_native_spans_untaken_counted(void **state) {
  (void)state;
  long long n;
  uint64_t emitted;
  native_spans_run(1u << EL_TM_SIGNAL_TRACES, 1, &n, &emitted);
  assert_true(n > 100);
  assert_int_equal(emitted, (uint64_t)n);
  assert_int_equal(exported[EL_TM_SIGNAL_TRACES], n);
  long long n2;
  native_spans_run(1u << EL_TM_SIGNAL_METRICS, 1, &n2, &emitted);
  assert_int_equal(n2, n);
  assert_int_equal(emitted, (uint64_t)n);
  assert_int_equal(exported[EL_TM_SIGNAL_TRACES], 0);
  native_spans_run(1u << EL_TM_SIGNAL_METRICS, 0, &n2, &emitted);
  assert_int_equal(emitted, (uint64_t)n); /* not sealed: built */
}

/* The spans of el.threads{spans=} and el.cap_usage{spans=} without
 * on_span callbacks (the daemon's every-processor-on script) on
 * threads-big (over 100,000 spans: past several store flushes, every
 * SPANS_PER_FLUSH), into a store whose exporter takes `signals`, sealed:
 * the store's count of traces. */
static uint64_t native_spans_only(unsigned signals) {
  el_tm_store_t *st;
  el_host_t *h = host_on_store(signals, 1, &st);
  assert_int_equal(el_host_load_string(h,
                                       "el = require('eventlog_live')\n"
                                       "el.threads{spans = 'T'}\n"
                                       "el.cap_usage{spans = 'C'}\n",
                                       "=native"),
                   0);
  size_t len;
  uint8_t *b = read_all(eventlog_named("threads-big"), &len);
  assert_int_equal(el_host_feed(h, b, len), 0);
  free(b);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  uint64_t emitted = el_tm_store_stats(st)->emitted[EL_TM_SIGNAL_TRACES];
  el_host_free(h);
  el_tm_store_free(st);
  return emitted;
}

/* Without on_span, the spans no exporter takes are counted, one per
 * span, as many as a trace exporter receives (the count of thread spans
 * takes an inline path: ana_internal.h el__ana_thread_out_counted). */
static void test_native_spans_only_untaken_counted(void **state) {
  (void)state;
  uint64_t taken = native_spans_only(1u << EL_TM_SIGNAL_TRACES);
  long long sent = exported[EL_TM_SIGNAL_TRACES];
  assert_true(taken > 100000);
  assert_int_equal(sent, (long long)taken);
  assert_int_equal(native_spans_only(1u << EL_TM_SIGNAL_METRICS), taken);
  assert_int_equal(exported[EL_TM_SIGNAL_TRACES], 0);
}

/* The daemon's every-processor-on shape (usage points and productivity
 * fed, thread and capability spans without on_span) on threads-big, into
 * a sealed store whose exporter takes `signals`: the store's count of
 * traces; *pts the usage points and productivity values the callbacks got
 * and *sum their total (ns of usage, per cent). threads 0: without the
 * thread spans (the traces processor thread_state off), which keeps the
 * per-capability mode. */
static uint64_t all_processors_run(unsigned signals, int threads,
                                   long long *pts, double *sum) {
  el_tm_store_t *st;
  el_host_t *h = host_on_store(signals, 1, &st);
  assert_int_equal(
      el_host_load_string(
          h,
          threads ? "el = require('eventlog_live'); n, sum = 0, 0\n"
                    "el.threads{spans = 'T'}\n"
                  : "el = require('eventlog_live'); n, sum = 0, 0\n",
          "=threads"),
      0);
  assert_int_equal(
      el_host_load_string(h,
                          "el.cap_usage{aggregate_ns = 1000000, spans = 'C',\n"
                          "  on_point = function(series, t, total)\n"
                          "    n = n + 1; sum = sum + total end}\n"
                          "el.cap_usage{productivity_aggregate_ns = 1000000,\n"
                          "  on_productivity = function(cap, t, m, g)\n"
                          "    n = n + 1; sum = sum + m / (m + g) end}\n",
                          "=all"),
      0);
  size_t len;
  uint8_t *b = read_all(eventlog_named("threads-big"), &len);
  assert_int_equal(el_host_feed(h, b, len), 0);
  free(b);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  uint64_t emitted = el_tm_store_stats(st)->emitted[EL_TM_SIGNAL_TRACES];
  *pts = lua_int(h, "n");
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "sum");
  *sum = lua_tonumber(L, -1);
  lua_pop(L, 1);
  el_host_free(h);
  el_tm_store_free(st);
  return emitted;
}

/* With every processor on and no exporter taking traces, the time-order
 * path counts the spans inline (ana_reorder.c ordered_one, release_fast):
 * as many as a trace exporter receives from the general path, with the
 * same usage points and productivity values. */
static void all_processors_same(int threads) {
  long long pts, pts2;
  double sum, sum2;
  uint64_t taken =
      all_processors_run(1u << EL_TM_SIGNAL_TRACES, threads, &pts, &sum);
  long long sent = exported[EL_TM_SIGNAL_TRACES];
  assert_true(taken > 100000);
  assert_int_equal(sent, (long long)taken);
  assert_true(pts > 100);
  assert_int_equal(
      all_processors_run(1u << EL_TM_SIGNAL_METRICS, threads, &pts2, &sum2),
      taken);
  assert_int_equal(exported[EL_TM_SIGNAL_TRACES], 0);
  assert_int_equal(pts2, pts);
  assert_true(sum2 == sum);
}

static void test_all_processors_untaken_counted(void **state) {
  (void)state;
  all_processors_same(1);
}

/* The same without the thread spans: the per-capability mode's path
 * (ana_reorder.c direct_stop_native) counts the Mutator spans inline. */
static void test_cap_usage_spans_untaken_counted(void **state) {
  (void)state;
  all_processors_same(0);
}

static void test_syntax_error_names_line(void **state) {
  (void)state;
  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_host_load_string(h, "x = 1\ny = = 2\n", "@bad.lua"),
                   EL_ELUA);
  assert_non_null(strstr(el_host_error(h), "bad.lua:2:"));
  assert_int_equal(el_host_load_string(h, "error('at load')", "@r.lua"),
                   EL_ELUA);
  assert_non_null(strstr(el_host_error(h), "r.lua:1: at load"));
  el_host_free(h);
}

static void test_unknown_event_name_raises(void **state) {
  (void)state;
  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_host_load_string(
                       h, "require('eventlog_live').on('NO_SUCH', print)",
                       "=t"),
                   EL_ELUA);
  assert_non_null(strstr(el_host_error(h), "unknown event type 'NO_SUCH'"));
  assert_null(strstr(el_host_error(h), "did you mean")); /* nothing near */
  el_host_free(h);
  /* A near miss names the GHC event (ghc-events spells it USER_MARKER). */
  h = el_host_new(NULL);
  assert_int_equal(
      el_host_load_string(
          h, "require('eventlog_live').on('USER_MARKERS', print)", "=t"),
      EL_ELUA);
  assert_non_null(strstr(el_host_error(h),
                         "unknown event type "
                         "'USER_MARKERS' (did you mean "
                         "'USER_MARKER'?)"));
  el_host_free(h);
}

static void test_gc_helper_matches_reference(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); g = el.gc(); n = 0\n"
      "el.gc{on_span = function(cap, s, e) n = n + 1 end}\n"
      "el.on_end(function() c = g:stats().count end)\n",
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  /* 1289 "starting GC" lines in the reference, each with its GC_END */
  assert_int_equal(lua_int(h, "c"), 1289);
  assert_int_equal(lua_int(h, "n"), 1289);
  el_host_free(h);
}

static void test_session_and_config(void **state) {
  (void)state;
  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_host_set_config(h, "top", "7"), 0);
  assert_int_equal(
      el_host_load_string(h,
          "el = require('eventlog_live'); ready = 0\n"
          "assert(el.config.top == '7')\n"
          "el.on_session(function(s) ready = ready + 1; pid = s.pid\n"
          "  ncaps = #s.caps; hb = s.heap_prof_breakdown end)\n",
          "=s"),
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(lua_int(h, "ready"), 1);
  assert_int_equal(lua_int(h, "pid"), 10811);  /* "capset 0: pid 10811" */
  assert_int_equal(lua_int(h, "ncaps"), 2);
  assert_int_equal(lua_int(h, "hb == '-hT' and 1 or 0"), 1);
  assert_int_equal(lua_int(h, "select(2, el.control('x', 1)) == "
                              "'not connected' and 1 or 0"), 1);
  el_host_free(h);
}

/* Out-of-memory sweep: allocation n fails, for every n of a clean run;
 * each step ends in a clean error or a working host, never a crash, and
 * leaves no memory behind. */
static void test_oom_sweep(void **state) {
  (void)state;
  static const char *script =
      "local el = require('eventlog_live')\n"
      "local n = 0\n"
      "el.on('USER_MARKER', function(ev, m) n = n + #m end)\n"
      "el.on('RUN_THREAD', function(ev, t) n = n + t end)\n"
      "el.every(100000000, function(t) n = n + 1 end)\n"
      "el.threads{on_span = function() n = n + 1 end}\n"
      "el.on_session(function(s) n = n + #s.args end)\n";
  size_t len;
  uint8_t *log = read_all(eventlog(), &len);
  size_t base = el_mem_in_use();
  uint64_t c0 = el_mem_alloc_count();
  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_host_load_string(h, script, "=oom"), 0);
  assert_int_equal(el_host_feed(h, log, len), 0);
  el_host_end(h);
  el_host_free(h);
  uint64_t total = el_mem_alloc_count() - c0;
  assert_int_equal(el_mem_in_use(), base);
  uint64_t step = total / 400 + 1;  /* about 400 runs */
  for (uint64_t n = 1; n <= total; n += step) {
    el_mem_fail_after(n);
    h = el_host_new(NULL);
    if (h) {
      if (el_host_load_string(h, script, "=oom") == 0) {
        el_host_feed(h, log, len);
        el_host_end(h);
      }
      el_host_free(h);
    }
    el_mem_fail_after(0);
    assert_int_equal(el_mem_in_use(), base);
  }
  free(log);
}

/* A Lua allocator that refuses every growth from allocation number
 * `fail_from` on (persistent failure: Lua's emergency GC cannot hide it). */
static lua_Alloc real_alloc;
static void *real_ud;
static uint64_t alloc_no, fail_from;
static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  if (nsize > 0 && (ptr == NULL || nsize > osize) && fail_from &&
      ++alloc_no >= fail_from)
    return NULL;
  return real_alloc(ud, ptr, osize, nsize);
}

static void test_lua_oom_never_panics(void **state) {
  (void)state;
  static const char *script =
      "local el = require('eventlog_live')\n"
      "local n, s = 0, {}\n"
      "el.on('USER_MARKER', function(ev, m) s[#s + 1] = m .. ev.type end)\n"
      "el.on('RUN_THREAD', function(ev, t) n = n + t end)\n"
      "el.on('PROGRAM_ARGS', function(ev, c, args) s[#s + 1] = args end)\n"
      "el.every(100000000, function(t) s[#s + 1] = {t} end)\n"
      "el.cap_usage{on_span = function(c, cat, u) s[#s + 1] = u end}\n"
      "el.on_session(function(ss) s[#s + 1] = ss.args end)\n"
      "el.on_end(function() s[#s + 1] = string.rep('x', 100) end)\n";
  size_t len;
  uint8_t *log = read_all(eventlog(), &len);
  size_t base = el_mem_in_use();
  for (uint64_t n = 1; n < 20000; n = n < 200 ? n + 1 : n * 5 / 4) {
    el_host_t *h = el_host_new(NULL);
    assert_non_null(h);
    lua_State *L = el_host_lua(h);
    real_alloc = lua_getallocf(L, &real_ud);
    lua_setallocf(L, failing_alloc, real_ud);
    alloc_no = 0;
    fail_from = n;
    if (el_host_load_string(h, script, "=oom") == 0) {
      el_host_feed(h, log, len);
      el_host_end(h);
    }
    fail_from = 0;
    el_host_free(h);
    assert_int_equal(el_mem_in_use(), base);
  }
  free(log);
}

/* Corrupted and truncated input through every Lua path: "*" handlers
 * reading every ev key and field, the C helpers, timers, sessions. The
 * host must neither crash nor stop (ASan build: no invalid access). */
static void test_hostile_input(void **state) {
  (void)state;
  static const char *script =
      "local el = require('eventlog_live')\n"
      "n = 0\n"
      "el.on('*', function(ev, ...)\n"
      "  local f = ev:fields(); local p = ev.payload\n"
      "  local x = ev.t + (ev.cap or 0) + ev.offset + ev.session + ev.unix_ns\n"
      "  local y = ev.type .. ev.type_id .. tostring(ev:field('cap'))\n"
      "  for i = 1, select('#', ...) do local v = select(i, ...) end\n"
      "  n = n + 1 end)\n"
      "el.threads{on_span = function(...) end}\n"
      "el.cap_usage{on_span = function(...) end}\n"
      "el.gc{on_span = function(...) end}\n"
      "el.every(1000000, function() end)\n"
      "el.on_session(function(s) end)\n";
  size_t len;
  uint8_t *orig = read_all(eventlog(), &len);
  uint8_t *buf = malloc(len);
  uint64_t seed = 12345;
  for (int round = 0; round < 40; round++) {
    memcpy(buf, orig, len);
    size_t n = len;
    if (round % 4 == 3) n = (size_t)(seed % len);  /* truncated */
    for (int k = 0; k < 1 + round * 3; k++) {      /* flipped bytes */
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      buf[(seed >> 17) % n] ^= (uint8_t)(seed >> 40);
    }
    el_host_t *h = host_with(script, 0);
    /* feed in uneven chunks; errors are expected, crashes are not */
    for (size_t off = 0; off < n;) {
      size_t c = 1 + (size_t)((seed >> (off % 23)) % 70000);
      if (c > n - off) c = n - off;
      el_host_feed(h, buf + off, c);
      off += c;
    }
    el_ev_decoder_finish(el_host_decoder(h));
    assert_int_equal(el_host_end(h), 0);
    assert_true(lua_int(h, "n") >= 0);
    el_host_free(h);
  }
  free(buf);
  free(orig);
}

/* Batched (integer-only) and unbatched events, timers and errors keep
 * stream order; errors in batched handlers are counted per handler and
 * the next handler still runs; ev and el.now() describe the event being
 * handled. 9835 "running thread" lines in the oddball-hT reference. */
static void test_batched_dispatch_order(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live')\n"
      "last_off, bad, runs, ok2, ticks = -1, 0, 0, 0, 0\n"
      "local function seen(ev) if ev.offset <= last_off then bad = bad + 1 end\n"
      "  last_off = ev.offset; if el.now() < ev.t then bad = bad + 1 end end\n"
      "el.on('RUN_THREAD', function(ev, th) seen(ev); runs = runs + 1\n"
      "  assert(ev.thread == th and ev.type == 'RUN_THREAD')\n"
      "  if runs % 100 == 0 then error('every 100th') end end)\n"
      "el.on('RUN_THREAD', function(ev) ok2 = ok2 + 1 end)\n"
      "el.on('USER_MARKER', function(ev) seen(ev) end)\n"
      "el.on('HEAP_ALLOCATED', function(ev, cs, b) seen(ev) end)\n"
      "el.every(10000000, function(t) ticks = ticks + 1\n"
      "  if el.now() < t then bad = bad + 1 end end)\n",
      0);
  assert_int_equal(feed_file(h), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(lua_int(h, "runs"), 9835);
  assert_int_equal(lua_int(h, "ok2"), 9835);
  assert_int_equal(lua_int(h, "bad"), 0);
  assert_int_equal(el_host_stats(h)->handler_errors, 98);
  assert_int_equal(lua_int(h, "ticks"), 118);
  el_host_free(h);
  /* fail-fast inside a batch: nothing runs after the failing call */
  h = host_with(
      "el = require('eventlog_live'); n, m = 0, 0\n"
      "el.on('RUN_THREAD', function(ev) n = n + 1\n"
      "  if n == 3 then error('third') end end)\n"
      "el.on('STOP_THREAD', function(ev) m = m + 1 end)\n",
      1);
  assert_int_equal(feed_file(h), EL_ESTOPPED);
  assert_int_equal(el_host_end(h), EL_ESTOPPED);
  assert_int_equal(lua_int(h, "n"), 3);
  assert_true(lua_int(h, "m") <= 3);
  assert_non_null(strstr(el_host_error(h), "test:3: third"));
  el_host_free(h);
}

/* The events queued for batched dispatch (integer fields only, copied
 * into a record and back) reach their handlers as the same event as a
 * "*" handler, which is never batched, sees it: time, capability,
 * offset, payload bytes and fields, for fn(ev, ...) and fn(t, cap, ...)
 * with el.event(), on oddball-hT and testlog-part (STOP_THREAD's 10-
 * and 6-byte payloads) and for a type with no fields (GC_START). The
 * two runs' texts are compared whole. */
static char *batched_text(const char *log, int star) {
  static const char *common =
      "el = require('eventlog_live'); acc = {}\n"
      "local function hex(s) return (s:gsub('.', function(c)\n"
      "  return string.format('%02x', c:byte()) end)) end\n"
      "function key(name, ev, t, cap, ...)\n"
      "  acc[#acc + 1] = string.format('%s %d %d %s %s [%s]', name,\n"
      "    ev.offset, t, tostring(cap), hex(ev.payload),\n"
      "    table.concat({...}, ','))\n"
      "end\n";
  static const char *batched =
      "el.on('RUN_THREAD', function(ev, ...)\n"
      "  key('RUN_THREAD', ev, ev.t, ev.cap, ...) end)\n"
      "el.on('STOP_THREAD', function(t, cap, ...)\n"
      "  key('STOP_THREAD', el.event(), t, cap, ...) end, {args = 't'})\n"
      "el.on('GC_START', function(t, cap)\n"
      "  key('GC_START', el.event(), t, cap) end, {args = 't'})\n";
  static const char *unbatched =
      "local want = {RUN_THREAD = 1, STOP_THREAD = 1, GC_START = 1}\n"
      "el.on('*', function(ev, ...)\n"
      "  if want[ev.type] then key(ev.type, ev, ev.t, ev.cap, ...) end\n"
      "end)\n";
  char script[2048];
  snprintf(script, sizeof script, "%s%s", common, star ? unbatched : batched);
  el_host_t *h = host_with(script, 1);
  size_t len;
  uint8_t *b = read_all(log, &len);
  assert_int_equal(el_host_feed(h, b, len), 0);
  free(b);
  el_ev_decoder_finish(el_host_decoder(h));
  assert_int_equal(el_host_end(h), 0);
  lua_State *L = el_host_lua(h);
  assert_int_equal(luaL_dostring(L, "return table.concat(acc, '\\n')"), 0);
  char *text = strdup(lua_tostring(L, -1));
  lua_pop(L, 1);
  el_host_free(h);
  return text;
}

static void test_batched_record_matches_event(void **state) {
  (void)state;
  static const char *logs[] = {"ghc-9.0/oddball-hT.eventlog",
                               "ghc-events/testlog-part.eventlog"};
  const char *d = getenv("EL_EVENTLOGS");
  for (size_t i = 0; i < sizeof logs / sizeof *logs; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s",
             d ? d : EL_SOURCE_DIR "/tests/data/eventlogs", logs[i]);
    char *batched = batched_text(path, 0), *star = batched_text(path, 1);
    assert_true(strstr(batched, "STOP_THREAD ") != NULL);
    assert_true(strstr(batched, "RUN_THREAD ") != NULL);
    assert_true(strstr(batched, "GC_START ") != NULL);
    assert_string_equal(batched, star);
    free(batched);
    free(star);
  }
}

/* No allocation per dispatched event: after a warm-up, feeding the rest
 * of a log (tens of thousands of dispatched events) to integer-field
 * handlers, a timer and the C thread helper allocates a bounded few
 * times. */
/* A malformed THREAD_LABEL (2-byte payload, shorter than its thread id)
 * reaches no handler, not even "*"; the well-formed one after it does,
 * and el.stats() counts the malformed one. */
static void test_malformed_event_not_dispatched(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); star, tl, msg = 0, 0, 0\n"
      "el.on('*', function(ev) star = star + 1 end)\n"
      "el.on('THREAD_LABEL', function(ev) tl = tl + 1\n"
      "  assert(ev.thread == 7 and ev.label == 'ab') end)\n"
      "el.on('USER_MSG', function(ev) msg = msg + 1 end)\n",
      0);
  static tu_buf_t b;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 19, 0xFFFF, "User message");
  tu_decl(&b, 44, 0xFFFF, "Thread label");
  tu_hdr_end(&b);
  tu_ev(&b, 44, 10); /* malformed: 2 bytes, the thread id needs 4 */
  tu_u16(&b, 2);
  tu_u16(&b, 7);
  tu_ev(&b, 44, 11); /* well-formed: thread 7, label "ab" */
  tu_u16(&b, 6);
  tu_u32(&b, 7);
  tu_str(&b, "ab");
  tu_ev(&b, 19, 12);
  tu_u16(&b, 2);
  tu_str(&b, "hi");
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(lua_int(h, "star"), 2);
  assert_int_equal(lua_int(h, "tl"), 1);
  assert_int_equal(lua_int(h, "msg"), 1);
  assert_int_equal(lua_int(h, "el.stats().malformed"), 1);
  assert_int_equal(el_host_stats(h)->malformed, 1);
  assert_int_equal(el_host_stats(h)->events, 3);
  assert_int_equal(el_host_stats(h)->handler_errors, 0);
  el_host_free(h);
}

/* Does the host's decoder hand out the fields of `type`? */
static int fields(el_host_t *h, int type) {
  return el_ev_decoder_fields(el_host_decoder(h), (uint16_t)type);
}

/* The decoder's wanted-fields mask follows the subscriptions: the session
 * tracker's types always, a type while a handler (or "*") wants it, no
 * other; unknown ids past the dispatch slots with "*". */
static void test_fields_mask_follows_subscriptions(void **state) {
  (void)state;
  el_host_t *h = host_with("el = require('eventlog_live')\n", 0);
  assert_int_equal(fields(h, EL_EV_CAP_CREATE), 1);
  assert_int_equal(fields(h, EL_EV_BLOCK_MARKER), 1);
  assert_int_equal(fields(h, EL_EV_WALL_CLOCK_TIME), 1);
  assert_int_equal(fields(h, EL_EV_THREAD_WAKEUP), 0);
  assert_int_equal(fields(h, EL_EV_RUN_THREAD), 0);
  assert_int_equal(fields(h, 300), 0);
  lua_State *L = el_host_lua(h);
  assert_int_equal(luaL_dostring(L,
                                 "tw = el.on('THREAD_WAKEUP', "
                                 "function() end)"),
                   0);
  assert_int_equal(fields(h, EL_EV_THREAD_WAKEUP), 1);
  assert_int_equal(fields(h, EL_EV_RUN_THREAD), 0);
  assert_int_equal(luaL_dostring(L, "st = el.on('*', function() end)"), 0);
  assert_int_equal(fields(h, EL_EV_RUN_THREAD), 1);
  assert_int_equal(fields(h, 300), 1);
  assert_int_equal(luaL_dostring(L, "el.off(st)"), 0);
  assert_int_equal(fields(h, EL_EV_RUN_THREAD), 0);
  assert_int_equal(fields(h, 300), 0);
  assert_int_equal(fields(h, EL_EV_THREAD_WAKEUP), 1);
  assert_int_equal(fields(h, EL_EV_CAP_CREATE), 1);
  assert_int_equal(luaL_dostring(L, "el.off(tw)"), 0);
  assert_int_equal(fields(h, EL_EV_THREAD_WAKEUP), 0);
  assert_int_equal(fields(h, EL_EV_CAP_CREATE), 1);
  el_host_free(h);
}

/* A handler subscribed in the middle of the stream (from the first
 * RUN_THREAD's handler), while nothing wanted THREAD_WAKEUP's fields,
 * gets them in every call; a time-ordered one too. A script subscribed
 * from the start sees all 70322 of threads.eventlog with their fields
 * (its ghc-events reference: "waking up thread"); the late one most of
 * them (not those that arrived while the RUN_THREAD's call waited in the
 * batch queue). */
static void test_fields_for_late_subscription(void **state) {
  (void)state;
  static const char *const scripts[] = {
      "el = require('eventlog_live'); n, bad, late = 0, 0, false\n"
      "el.on('RUN_THREAD', function() if late then return end\n"
      "  late = true\n"
      "  el.on('THREAD_WAKEUP', function(ev, thread, other_cap)\n"
      "    n = n + 1\n"
      "    if thread == nil or other_cap == nil or ev.thread ~= thread\n"
      "    then bad = bad + 1 end end%s) end)\n",
      "el = require('eventlog_live'); n, bad, late, all = 0, 0, false, 0\n"
      "el.on('THREAD_WAKEUP', function(ev, thread, other_cap)\n"
      "  all = all + 1; if late then n = n + 1 end\n"
      "  if thread == nil or other_cap == nil or ev.thread ~= thread\n"
      "  then bad = bad + 1 end end%s)\n"
      "el.on('RUN_THREAD', function() late = true end)\n"};
  static const char *const opts[] = {"", ", {order = 'time'}"};
  for (int o = 0; o < 2; o++) {
    long long n[2];
    for (int k = 0; k < 2; k++) {
      char script[1024];
      snprintf(script, sizeof script, scripts[k], opts[o]);
      el_host_t *h = host_with(script, 1);
      size_t len = 0;
      uint8_t *b = tu_read_log("ghc-9.0/threads.eventlog", &len);
      assert_non_null(b);
      assert_int_equal(el_host_feed(h, b, len), 0);
      free(b);
      assert_int_equal(el_host_end(h), 0);
      assert_int_equal(lua_int(h, "bad"), 0);
      n[k] = lua_int(h, "n");
      if (k == 1) assert_int_equal(lua_int(h, "all"), 70322);
      el_host_free(h);
    }
    assert_true(n[0] > 60000);
    assert_true(n[0] <= n[1]);
  }
}

/* A timer that fires when an event of a type nobody wanted arrives
 * (el.at(50): the THREAD_WAKEUP at t = 100 passes its deadline) and
 * subscribes to that type: the decoder left the event's fields out, yet
 * the handler gets them for it and every later one (the stream is made by
 * hand: thread ids 1, 2, 3 at t = 10, 100, 200). */
static void test_fields_for_subscription_from_timer(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); got = {}\n"
      "el.at(50, function() el.on('THREAD_WAKEUP',\n"
      "  function(ev, thread, other_cap)\n"
      "    got[#got + 1] = (thread or -1) * 10 + (other_cap or -1) end)\n"
      "end)\n",
      1);
  static tu_buf_t b;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 8, 6, "Wakeup thread");
  tu_hdr_end(&b);
  for (uint32_t i = 1; i <= 3; i++) {
    tu_ev(&b, 8, i == 1 ? 10 : i == 2 ? 100 : 200);
    tu_u32(&b, i);
    tu_u16(&b, 4);
  }
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(lua_int(h, "#got"), 2);
  assert_int_equal(lua_int(h, "got[1]"), 24);
  assert_int_equal(lua_int(h, "got[2]"), 34);
  el_host_free(h);
}

/* Events nobody wants are counted by the decoder into the host's
 * counters (el_ev_decoder_set_quiet) and yet read as before: two sessions
 * of 100 THREAD_WAKEUPs each (t = 10, 20, ..., 1000, then 5, 10, ...,
 * 500, the second session's stream time starting again from 0), an
 * el.at(505) timer that sees the first event at or past its deadline
 * (t = 510, the 51st: on_event counts an event before timers fire), a
 * second el.at(255) set at the second header (fires at the event of
 * t = 255, the 151st), el.stats() counting all 200 and el.now() the last
 * time of the second session. Subscribing to the type from the second
 * timer makes the rest delivered: 50 calls (t = 255..500: the event that
 * fired the timer is dispatched to the new handler, as in
 * test_fields_for_subscription_from_timer). An el.every(100) ticks at
 * 100, 200, ... in both sessions. */
static void test_quiet_events_counted(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); n = 0; ticks = ''\n"
      "el.every(100, function() ticks = ticks .. el.now() .. ' ' end)\n"
      "el.at(505, function()\n"
      "  a_now, a_n = el.now(), el.stats().events end)\n"
      "el.on_header(function() if el.session.number == 2 then\n"
      "  el.at(255, function()\n"
      "    b_now, b_n = el.now(), el.stats().events\n"
      "    el.on('THREAD_WAKEUP', function() n = n + 1 end) end) end end)\n",
      1);
  static tu_buf_t b;
  b.n = 0;
  for (int sess = 0; sess < 2; sess++) {
    tu_hdr_begin(&b);
    tu_decl(&b, 8, 6, "Wakeup thread");
    tu_hdr_end(&b);
    for (uint32_t i = 1; i <= 100; i++) {
      tu_ev(&b, 8, (sess ? 5 : 10) * (uint64_t)i);
      tu_u32(&b, i);
      tu_u16(&b, 0);
    }
    tu_u16(&b, 0xFFFF);
  }
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(lua_int(h, "el.stats().events"), 200);
  assert_int_equal(lua_int(h, "el.now()"), 500);
  assert_int_equal(lua_int(h, "a_now"), 510);
  assert_int_equal(lua_int(h, "a_n"), 51);
  assert_int_equal(lua_int(h, "b_now"), 255);
  assert_int_equal(lua_int(h, "b_n"), 151);
  assert_int_equal(lua_int(h, "n"), 50);
  /* el.every(100) is rebased on each session's first event (t = 10, then
   * t = 5: first deadline 100 both times), so it needs that event
   * delivered, not counted. */
  lua_State *L = el_host_lua(h);
  assert_int_equal(luaL_dostring(L, "return ticks"), 0);
  assert_string_equal(lua_tostring(L, -1),
                      "100 200 300 400 500 600 700 800 900 1000 "
                      "100 200 300 400 500 ");
  lua_pop(L, 1);
  assert_int_equal(el_host_end(h), 0);
  el_host_free(h);
}

/* A host whose el.threads on_span appends "thread state status start-end"
 * (and " info" when with_info) to a list that on_end joins with ';' into
 * the global `got`. */
static el_host_t *spans_host_opts(int with_info, el_host_opts_t o) {
  return host_opts_with(
      with_info
          ? "el = require('eventlog_live'); out = {}\n"
            "el.threads{on_span = function(th, st, status, cap, s, e, info)\n"
            "  out[#out + 1] = string.format('%d %s %s %d-%d %s', th, st,\n"
            "    tostring(status), s, e, tostring(info)) end}\n"
            "el.on_end(function() got = table.concat(out, ';') end)\n"
          : "el = require('eventlog_live'); out = {}\n"
            "el.threads{on_span = function(th, st, status, cap, s, e)\n"
            "  out[#out + 1] = string.format('%d %s %s %d-%d', th, st,\n"
            "    tostring(status), s, e) end}\n"
            "el.on_end(function() got = table.concat(out, ';') end)\n",
      o);
}

static el_host_t *spans_host(int with_info) {
  return spans_host_opts(with_info, (el_host_opts_t){0});
}

/* An eventlog header declaring RUN_THREAD, STOP_THREAD, BLOCK_MARKER and
 * CAP_CREATE (sizes of spec/eventlog-format.md §4). */
static void hdr_threads(tu_buf_t *b) {
  tu_hdr_begin(b);
  tu_decl(b, 1, 4, "Run thread");
  tu_decl(b, 2, 10, "Stop thread");
  tu_decl(b, 18, 14, "Block marker");
  tu_decl(b, 45, 2, "Create capability");
  tu_hdr_end(b);
}

/* Empty b, then the header of hdr_threads and CAP_CREATE of capabilities
 * 0 to ncaps - 1 at time 0. */
static void hdr_caps(tu_buf_t *b, uint16_t ncaps) {
  b->n = 0;
  hdr_threads(b);
  for (uint16_t c = 0; c < ncaps; c++) {
    tu_ev(b, 45, 0); /* CAP_CREATE c */
    tu_u16(b, c);
  }
}

static void hdr_two_caps(tu_buf_t *b) { hdr_caps(b, 2); }

/* The reorder buffer of the C analyses (docs/lua-api.md "Ordering"): a
 * STOP_THREAD earlier than its capability's queue tail goes back into
 * place past another STOP_THREAD and keeps its own status and info.
 * Capability 1 (CAP_CREATE at 0, no events) holds the watermark at 0, so
 * everything waits for the end of the session and leaves in time order.
 * The expected spans are worked out by hand from the event times below
 * (spec/reference-behaviour.md §5.2.3: a span per RUN/STOP pair; a
 * blocked span carries its STOP_THREAD's status and info). */
static void test_reorder_stop_keeps_status(void **state) {
  (void)state;
  el_host_t *h = spans_host(1);
  static const struct {
    uint16_t type;
    uint64_t t;
    uint32_t th;
    uint16_t status;
    uint32_t info;
  } ev[] = {{1, 100, 1, 0, 0},  {1, 110, 2, 0, 0},  {2, 300, 2, 2, 0},
            {2, 200, 1, 4, 77}, {1, 400, 1, 0, 0},  {1, 410, 2, 0, 0},
            {2, 500, 1, 3, 0},  {2, 510, 2, 4, 99}, {1, 600, 1, 0, 0},
            {1, 610, 2, 0, 0}};
  static tu_buf_t b;
  b.n = 0;
  hdr_threads(&b);
  tu_ev(&b, 45, 0); /* CAP_CREATE 1 */
  tu_u16(&b, 1);
  tu_ev(&b, 18, 50); /* capability 0's block: 24 + 6 * 14 + 4 * 20 bytes */
  tu_u32(&b, 24 + 6 * 14 + 4 * 20);
  tu_u64(&b, 610);
  tu_u16(&b, 0);
  for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
    tu_ev(&b, ev[i].type, ev[i].t);
    tu_u32(&b, ev[i].th);
    if (ev[i].type == 2) {
      tu_u16(&b, ev[i].status);
      tu_u32(&b, ev[i].info);
    }
  }
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "got");
  assert_string_equal(lua_tostring(L, -1),
                      /* a Running span carries the stop that ends it,
                         the same stop that begins the next Blocked span */
                      "1 running 4 100-200 77;2 running 2 110-300 0;"
                      "1 blocked 4 200-400 77;2 blocked 2 300-410 0;"
                      "1 running 3 400-500 0;2 running 4 410-510 99;"
                      "1 blocked 3 500-600 0;2 blocked 4 510-610 99");
  lua_pop(L, 1);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  assert_int_equal(el_host_stats(h)->malformed, 0);
  el_host_free(h);
}

/* The watermark kept without a rescan (host_clock.c, ana_reorder.c) stays
 * right when the capability holding it passes the other one: capabilities
 * 0 and 1 (CAP_CREATE at 0), blocks in the order cap 0 (100-300), cap 1
 * (150-350), cap 0 (320). Cap 1's event at 150 moves the watermark to 150
 * (cap 1 still holds it); its event at 350 passes cap 0's 300, so cap 0
 * holds it at 300 and the event at 350 waits: cap 0's next block brings
 * an event at 320, which goes first. Were 350 taken as the watermark, 320
 * would be late (reorder_late 1) and its span would come after 350's.
 * The spans are worked out by hand from the times (spec/reference-
 * behaviour.md §5.2.3: a running span carries the stop that ends it). */
static void test_reorder_watermark_passes(void **state) {
  (void)state;
  el_host_t *h = spans_host(0);
  static tu_buf_t b;
  hdr_two_caps(&b);
  static const struct {
    uint64_t bt, end; /* block marker time, end time */
    uint16_t cap;
    uint64_t run, stop; /* RUN_THREAD at run; STOP_THREAD at stop, 0 none */
    uint32_t th;
    uint16_t status;
  } blk[] = {{50, 300, 0, 100, 300, 1, 2},
             {60, 350, 1, 150, 350, 2, 4},
             {320, 320, 0, 320, 0, 1, 0}};
  for (size_t i = 0; i < sizeof blk / sizeof blk[0]; i++) {
    tu_ev(&b, 18, blk[i].bt);
    tu_u32(&b, 24 + 14 + (blk[i].stop ? 20 : 0));
    tu_u64(&b, blk[i].end);
    tu_u16(&b, blk[i].cap);
    tu_ev(&b, 1, blk[i].run);
    tu_u32(&b, blk[i].th);
    if (!blk[i].stop) continue;
    tu_ev(&b, 2, blk[i].stop);
    tu_u32(&b, blk[i].th);
    tu_u16(&b, blk[i].status);
    tu_u32(&b, 0);
  }
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "got");
  assert_string_equal(lua_tostring(L, -1),
                      "1 running 2 100-300;1 blocked 2 300-320;"
                      "2 running 4 150-350");
  lua_pop(L, 1);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  el_host_free(h);
}

/* Append one capability's block: n RUN_THREAD/STOP_THREAD pairs of
 * thread th, the pair k running from t0 + 20 k to t0 + 20 k + 10 (status
 * 3, ThreadYielding). */
static void put_pairs_block(tu_buf_t *b, uint16_t cap, uint32_t th, uint64_t t0,
                            int n) {
  tu_ev(b, 18, t0);
  tu_u32(b, 24 + (uint32_t)n * (14 + 20));
  tu_u64(b, t0 + 20 * (uint64_t)(n - 1) + 10);
  tu_u16(b, cap);
  for (int k = 0; k < n; k++) {
    tu_ev(b, 1, t0 + 20 * (uint64_t)k);
    tu_u32(b, th);
    tu_ev(b, 2, t0 + 20 * (uint64_t)k + 10);
    tu_u32(b, th);
    tu_u16(b, 3);
    tu_u32(b, 0);
  }
}

/* The run of the capability holding the watermark merges with the held
 * queue (ana_reorder.c ordered_merge: every processor on, no exporter
 * taking traces) and keeps, in registers, the latest time released; it
 * must still be the host's afterwards, or events that come behind it are
 * not counted late. Capabilities 0 and 1 are created; capability 0's block
 * (thread 1, 40 runs from 1000 to 1790) waits for capability 1, whose
 * block (thread 2, 20 runs from 1005 to 1395, all below 1790) merges with
 * it to its end: the latest time released is then 1395, set by the merge
 * alone. Then a block of capability 2, never announced (no CAP_CREATE),
 * brings thread 3's run from 1100 to 1110: both events lie behind 1395, so
 * reorder_late is 2 (worked out by hand; 0 if the merge's latest time
 * released were lost). Every run is counted: 61 Running spans, 58 Blocked
 * ones (39 of thread 1, 19 of thread 2: a thread's first run has none)
 * and 61 Mutator spans: 180 traces. */
static void test_ordered_merge_keeps_released_time(void **state) {
  (void)state;
  el_tm_store_t *st;
  el_host_t *h = host_on_store(1u << EL_TM_SIGNAL_METRICS, 1, &st);
  assert_int_equal(
      el_host_load_string(h,
                          "el = require('eventlog_live')\n"
                          "el.threads{spans = 'T'}\n"
                          "el.cap_usage{aggregate_ns = 1000000, spans = 'C',\n"
                          "  on_point = function() end}\n"
                          "el.cap_usage{productivity_aggregate_ns = 1000000,\n"
                          "  on_productivity = function() end}\n",
                          "=merge"),
      0);
  static tu_buf_t b;
  hdr_two_caps(&b);
  put_pairs_block(&b, 0, 1, 1000, 40);
  put_pairs_block(&b, 1, 2, 1005, 20);
  put_pairs_block(&b, 2, 3, 1100, 1);
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 2);
  assert_int_equal(el_tm_store_stats(st)->emitted[EL_TM_SIGNAL_TRACES], 180);
  el_host_free(h);
  el_tm_store_free(st);
}

/* The reorder queue grows while its ring wraps, up to a ring backed by
 * huge pages (ana_reorder.c q_grow: 16,384 records and more). Capability 0
 * writes 40,000 events in 10 blocks of 4,000: event i at 1000 + 10 i, pair
 * j = i / 2 a RUN_THREAD (i even) then a STOP_THREAD (status j % 4 + 1,
 * info j) of thread j % 3 + 1. After its block k, capability 1's block
 * runs thread 9 from T = 1005 + 20,000 k to T + 1 (status 3, info 100 + k):
 * the watermark moves to T + 1, which releases capability 0's events up
 * to i = 2,000 k and leaves 2,000 k + 4,000 held: the queue grows (1,024
 * to 65,536 records) with its head inside the ring each time. The spans
 * expected are worked out here from the events in time order (spec/
 * reference-behaviour.md §5.2.3: a Running span ends at the thread's
 * STOP_THREAD, a Blocked one at its next RUN_THREAD, both carrying that
 * stop's status and info), independently of the queue. */
#define WRAP_BLOCKS 10
#define WRAP_PER 4000
static void wrap_event(int i, uint64_t *t, uint32_t *th, uint16_t *status,
                       uint32_t *info) {
  int j = i / 2;
  *t = 1000 + 10 * (uint64_t)i;
  *th = (uint32_t)(j % 3 + 1);
  *status = i % 2 ? (uint16_t)(j % 4 + 1) : 0;
  *info = (uint32_t)j;
}

/* The expected span of an event of thread th at t (a stop when status),
 * appended to out: a stop ends the Running span from the thread's last
 * run; a run ends the Blocked span from its last stop. */
static void wrap_expect(char *out, size_t *len, size_t cap, uint64_t *run_t,
                        uint64_t *stop_t, uint16_t *st, uint32_t *inf,
                        uint32_t th, uint64_t t, uint16_t status,
                        uint32_t info) {
  int k = 0;
  if (status) {
    k = snprintf(out + *len, cap - *len, "%s%u running %u %llu-%llu %u",
                 *len ? ";" : "", th, status, (unsigned long long)run_t[th],
                 (unsigned long long)t, info);
    stop_t[th] = t;
    st[th] = status;
    inf[th] = info;
  } else {
    if (stop_t[th])
      k = snprintf(out + *len, cap - *len, "%s%u blocked %u %llu-%llu %u",
                   *len ? ";" : "", th, st[th], (unsigned long long)stop_t[th],
                   (unsigned long long)t, inf[th]);
    run_t[th] = t;
  }
  *len += (size_t)k;
}

static void test_reorder_ring_grows_wrapped(void **state) {
  (void)state;
  el_host_t *h = spans_host(1);
  static tu_buf_t b;
  static char want[WRAP_BLOCKS * WRAP_PER * 40];
  size_t len = 0;
  uint64_t run_t[10] = {0}, stop_t[10] = {0};
  uint16_t st[10] = {0};
  uint32_t inf[10] = {0};
  hdr_two_caps(&b);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  int next = 0; /* capability 0's next event in time order (expected) */
  for (int k = 0; k < WRAP_BLOCKS; k++) {
    uint64_t t, t9 = 1005 + 20000 * (uint64_t)k;
    uint32_t th, info;
    uint16_t status;
    b.n = 0;
    wrap_event(k * WRAP_PER, &t, &th, &status, &info);
    tu_ev(&b, 18, t);
    tu_u32(&b, 24 + WRAP_PER / 2 * (14 + 20));
    tu_u64(&b, t + 10 * (WRAP_PER - 1));
    tu_u16(&b, 0);
    for (int i = k * WRAP_PER; i < (k + 1) * WRAP_PER; i++) {
      wrap_event(i, &t, &th, &status, &info);
      tu_ev(&b, status ? 2 : 1, t);
      tu_u32(&b, th);
      if (!status) continue;
      tu_u16(&b, status);
      tu_u32(&b, info);
    }
    tu_ev(&b, 18, t9); /* capability 1: thread 9 from t9 to t9 + 1 */
    tu_u32(&b, 24 + 14 + 20);
    tu_u64(&b, t9 + 1);
    tu_u16(&b, 1);
    tu_ev(&b, 1, t9);
    tu_u32(&b, 9);
    tu_ev(&b, 2, t9 + 1);
    tu_u32(&b, 9);
    tu_u16(&b, 3);
    tu_u32(&b, 100 + (uint32_t)k);
    assert_int_equal(el_host_feed(h, b.b, b.n), 0);
    /* expected: capability 0's events before t9, then thread 9's */
    for (; next < WRAP_BLOCKS * WRAP_PER; next++) {
      wrap_event(next, &t, &th, &status, &info);
      if (t > t9) break;
      wrap_expect(want, &len, sizeof want, run_t, stop_t, st, inf, th, t,
                  status, info);
    }
    wrap_expect(want, &len, sizeof want, run_t, stop_t, st, inf, 9, t9, 0, 0);
    wrap_expect(want, &len, sizeof want, run_t, stop_t, st, inf, 9, t9 + 1, 3,
                100 + (uint32_t)k);
  }
  b.n = 0;
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  for (uint64_t t; next < WRAP_BLOCKS * WRAP_PER; next++) {
    uint32_t th, info;
    uint16_t status;
    wrap_event(next, &t, &th, &status, &info);
    wrap_expect(want, &len, sizeof want, run_t, stop_t, st, inf, th, t, status,
                info);
  }
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "got");
  assert_non_null(lua_tostring(L, -1));
  assert_string_equal(lua_tostring(L, -1), want);
  lua_pop(L, 1);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  assert_int_equal(lua_int(h, "el.stats().reorder_forced"), 0);
  el_host_free(h);
}

/* One capability's block of RUN_THREAD (stop 0) and STOP_THREAD events,
 * for the per-capability order tests below. */
typedef struct {
  uint16_t cap;
  int n;
  struct {
    uint64_t t;
    uint32_t th;
    uint16_t stop; /* 0: RUN_THREAD; else STOP_THREAD with this status */
  } ev[4];
} blk_t;

/* Append blk to b: its marker (from its first to its last event's time),
 * then its events. */
static void put_block(tu_buf_t *b, const blk_t *blk) {
  uint32_t size = 24;
  for (int k = 0; k < blk->n; k++) size += blk->ev[k].stop ? 20 : 14;
  tu_ev(b, 18, blk->ev[0].t);
  tu_u32(b, size);
  tu_u64(b, blk->ev[blk->n - 1].t);
  tu_u16(b, blk->cap);
  for (int k = 0; k < blk->n; k++) {
    tu_ev(b, blk->ev[k].stop ? 2 : 1, blk->ev[k].t);
    tu_u32(b, blk->ev[k].th);
    if (!blk->ev[k].stop) continue;
    tu_u16(b, blk->ev[k].stop);
    tu_u32(b, 0);
  }
}

/* Feed capabilities 0 to ncaps - 1 (CAP_CREATE at 0) and the blocks, in
 * order, to h (whose script sets the global `got` on_end); end the
 * session. */
static void feed_caps_blocks(el_host_t *h, uint16_t ncaps, const blk_t *blk,
                             size_t nblk) {
  static tu_buf_t b;
  hdr_caps(&b, ncaps);
  for (size_t i = 0; i < nblk; i++) put_block(&b, &blk[i]);
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
}

/* feed_caps_blocks with capabilities 0 and 1. */
static void feed_blocks(el_host_t *h, const blk_t *blk, size_t nblk) {
  feed_caps_blocks(h, 2, blk, nblk);
}

/* A host whose el.cap_usage on_point (every span: no aggregation) appends
 * "cap category user t value" to a list that on_end joins with ';' into
 * the global `got`. */
static el_host_t *points_host(void) {
  return host_with(
      "el = require('eventlog_live'); out = {}\n"
      "tr = el.cap_usage{on_point = function(i, t, v, cap, cat, user)\n"
      "  out[#out + 1] = string.format('%d %s %s %d %d', cap, cat,\n"
      "    tostring(user), t, v) end}\n"
      "el.on_end(function() got = table.concat(out, ';') end)\n",
      0);
}

/* points_host with more el.cap_usage options (opts: "key = value, ")
 * and more script (extra); on_end calls flush_points() first. */
static el_host_t *points_host_with(const char *opts, const char *extra) {
  static char script[1024];
  snprintf(script, sizeof script,
           "el = require('eventlog_live'); out = {}\n"
           "tr = el.cap_usage{%son_point = function(i, t, v, cap, cat, u)\n"
           "  out[#out + 1] = string.format('%%d %%s %%s %%d %%d', cap, cat,\n"
           "    tostring(u), t, v) end}\n"
           "%s\n"
           "el.on_end(function() tr:flush_points()\n"
           "  got = table.concat(out, ';') end)\n",
           opts, extra);
  return host_with(script, 0);
}

static void assert_got(el_host_t *h, const char *want) {
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "got");
  assert_string_equal(lua_tostring(L, -1), want);
  lua_pop(L, 1);
}

/* points_host with el.threads() made too: its thread states need time
 * order, so the analyses take the events in time order across
 * capabilities (docs/lua-api.md §6 "Ordering"). */
static el_host_t *points_host_time_order(void) {
  return points_host_with("", "el.threads()");
}

/* Two capabilities' blocks, each arriving whole: cap 0's (thread 1 runs
 * 100-300 and 500-600) before cap 1's (thread 2 runs 150-250 and
 * 400-450). By hand, one point per span, t = the span's end (a running
 * total holds time up to its time), value = the series' running total
 * (Idle: the gap between two spans of the capability, at the start of
 * the span that ends it, before it):
 *   cap 0: Mutator 1 at 300, 200; Idle at 500, 200; Mutator 1 at 600,
 *          200 + 100;
 *   cap 1: Mutator 2 at 250, 100; Idle at 400, 150; Mutator 2 at 450,
 *          100 + 50. */
static const blk_t two_caps_blk[] = {
    {0, 4, {{100, 1, 0}, {300, 1, 3}, {500, 1, 0}, {600, 1, 3}}},
    {1, 4, {{150, 2, 0}, {250, 2, 3}, {400, 2, 0}, {450, 2, 3}}}};

/* With el.threads() made, the points come in time order across
 * capabilities (each when its STOP_THREAD is reached in time order):
 *   250: cap 1's first; 300: cap 0's first; 450: cap 1's Idle and
 *   second Mutator; 600: cap 0's Idle and second Mutator.
 * Taken in arrival order instead, cap 0's three points would come first. */
static void test_cap_usage_points_time_order(void **state) {
  (void)state;
  el_host_t *h = points_host_time_order();
  feed_blocks(h, two_caps_blk, 2);
  assert_got(h,
             "1 Mutator 2 250 100;0 Mutator 1 300 200;"
             "1 Idle nil 400 150;1 Mutator 2 450 150;"
             "0 Idle nil 500 200;0 Mutator 1 600 300");
  assert_int_equal(lua_int(h, "tr:unexpected()"), 0);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  el_host_free(h);
}

/* With el.cap_usage alone (the daemon's default processors) every output
 * is per capability: the events are taken as they arrive, without the
 * reorder buffer. The same points as in time order, each capability's in
 * its time order, cap 0's (its block came first) before cap 1's. */
static void test_cap_usage_points_per_capability(void **state) {
  (void)state;
  el_host_t *h = points_host();
  feed_blocks(h, two_caps_blk, 2);
  assert_got(h,
             "0 Mutator 1 300 200;0 Idle nil 500 200;0 Mutator 1 600 300;"
             "1 Mutator 2 250 100;1 Idle nil 400 150;1 Mutator 2 450 150");
  assert_int_equal(lua_int(h, "tr:unexpected()"), 0);
  el_host_free(h);
}

/* A run that spans its capability's block boundary while the thread's
 * later run on another capability arrives first (seen in threads-big:
 * thread 37 runs on cap 0 from 387495510, cap 0's block ends; cap 1's
 * block, with the thread's run at 395500709-395501130, comes before cap
 * 0's next block with the STOP_THREAD at 392388748). Here thread 1 runs
 * on cap 0 100-200 (RUN in cap 0's first block, STOP in its second) and
 * on cap 1 300-310, whose block comes between. Both runs are spans: cap 0
 * Mutator 1 at 200, 100; cap 1 Mutator 1 at 310, 10: in time order with
 * el.threads() made, in arrival order (cap 1's first) with el.cap_usage
 * alone. Time order taken wrongly (arrival order through the time-order
 * state machine) would end the run on cap 1 first and drop the older run
 * still open on cap 0 (a thread runs on one capability at a time,
 * ana_state.c), losing its span and counting it unexpected. */
static void test_cap_usage_run_across_blocks(void **state) {
  (void)state;
  static const blk_t blk[] = {{0, 1, {{100, 1, 0}}},
                              {1, 2, {{300, 1, 0}, {310, 1, 3}}},
                              {0, 1, {{200, 1, 3}}}};
  el_host_t *h = points_host_time_order();
  feed_blocks(h, blk, 3);
  assert_got(h, "0 Mutator 1 200 100;1 Mutator 1 310 10");
  assert_int_equal(lua_int(h, "tr:unexpected()"), 0);
  el_host_free(h);
  h = points_host();
  feed_blocks(h, blk, 3);
  assert_got(h, "1 Mutator 1 310 10;0 Mutator 1 200 100");
  assert_int_equal(lua_int(h, "tr:unexpected()"), 0);
  el_host_free(h);
}

/* Per capability, a run whose STOP_THREAD was lost: on cap 0 thread 1
 * runs from 100 (its stop lost), thread 2 runs 200-300, thread 1 runs
 * 400-450. Thread 2's span on the capability shows that thread 1's run
 * from 100 had ended, so its RUN_THREAD at 400 starts a new run (the old
 * one counted unexpected). By hand (each at its end): Mutator 2 at 300,
 * 100; Idle at 400, 100; Mutator 1 at 450, 50. Pairing the stop at 450
 * with the run from 100 would give "0 Mutator 1 450 350" (time counted
 * twice, no Idle). */
static void test_cap_usage_stale_run_per_capability(void **state) {
  (void)state;
  static const blk_t blk[] = {{0, 3, {{100, 1, 0}, {200, 2, 0}, {300, 2, 3}}},
                              {0, 2, {{400, 1, 0}, {450, 1, 3}}}};
  el_host_t *h = points_host();
  feed_caps_blocks(h, 1, blk, 2);
  assert_got(h, "0 Mutator 2 300 100;0 Idle nil 400 100;0 Mutator 1 450 50");
  assert_int_equal(lua_int(h, "tr:unexpected()"), 1);
  el_host_free(h);
}

/* Per capability, a thread's series is not released (tr:release_finished)
 * while another capability's earlier runs of it may still come: thread 1
 * runs on cap 1 10-20, then on cap 0 100-200 and finishes there (status
 * 5); cap 1's next block, with its run 50-60, arrives after cap 0's.
 * Between them the host's watermark is 20 (cap 1's latest), below the
 * finish: nothing is released. Released then, cap 1's series would start
 * again from 0 (a cumulative sum reset: "1 Mutator 1 60 10"); kept, it
 * goes on: 10 + 10 = 20, after its Idle gap 20-50 (each point at its
 * span's end). Once cap 1 is past
 * the finish (thread 2 runs there 250-260: Idle 60-250 adds 190 to 30),
 * both of thread 1's series are released. */
static void test_cap_usage_release_waits_for_caps(void **state) {
  (void)state;
  /* STOP_THREAD handlers run after the analysis took the event. */
  el_host_t *h = points_host_with(
      "",
      "el.on('STOP_THREAD', function(ev, th, st)\n"
      "  if th == 1 and st == 5 then freed = #tr:release_finished() end\n"
      "  if th == 2 then freed_later = #tr:release_finished() end end)");
  static const blk_t blk[] = {{1, 2, {{10, 1, 0}, {20, 1, 3}}},
                              {0, 2, {{100, 1, 0}, {200, 1, 5}}},
                              {1, 2, {{50, 1, 0}, {60, 1, 3}}},
                              {1, 2, {{250, 2, 0}, {260, 2, 3}}}};
  feed_caps_blocks(h, 2, blk, 4);
  assert_got(h,
             "1 Mutator 1 20 10;0 Mutator 1 200 100;"
             "1 Idle nil 50 30;1 Mutator 1 60 20;"
             "1 Idle nil 250 220;1 Mutator 2 260 10");
  assert_int_equal(lua_int(h, "freed"), 0);
  assert_int_equal(lua_int(h, "freed_later"), 2);
  el_host_free(h);
}

/* Append to b a block of capability cap in which threads first ..
 * first + n - 1 each run 5 ns and finish (status 5): thread i from
 * 100 + 10 i - 5 to 100 + 10 i. */
static void put_finishing_threads(tu_buf_t *b, uint16_t cap, uint32_t first,
                                  uint32_t n) {
  tu_ev(b, 18, 100 + 10 * first - 5);
  tu_u32(b, 24 + n * 34);
  tu_u64(b, 100 + 10 * (first + n - 1));
  tu_u16(b, cap);
  for (uint32_t i = first; i < first + n; i++) {
    tu_ev(b, 1, 100 + 10 * i - 5);
    tu_u32(b, i);
    tu_ev(b, 2, 100 + 10 * i);
    tu_u32(b, i);
    tu_u16(b, 5);
    tu_u32(b, 0);
  }
}

/* Per capability, the finished-thread eviction keeps the threads that
 * finished after the watermark; while it stays behind (here capability 1,
 * created at 0, delivers its block only at the end) every finished thread
 * is such. The eviction must not then run again at each finished thread
 * (each run allocates its list, sorts it and rebuilds the index: quadratic,
 * minutes for a block of 100,000 short threads): 4,000 threads finish on
 * cap 0 with keep_finished 0 (and max_users 0: no thread series), the
 * allocations counted (one per run: about 4,000 without the guard, a
 * few dozen in all with it). */
static void test_cap_usage_evict_waits_amortized(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live'); n = 0\n"
      "tr = el.cap_usage{keep_finished = 0, max_users = 0,\n"
      "  on_point = function() n = n + 1 end}\n",
      0);
  static tu_buf_t b;
  enum { N = 4000 };
  hdr_caps(&b, 2);
  /* cap 0's block: threads 1..N; then cap 1's, last */
  put_finishing_threads(&b, 0, 1, N);
  tu_ev(&b, 18, 50);
  tu_u32(&b, 24 + 34);
  tu_u64(&b, 60);
  tu_u16(&b, 1);
  tu_ev(&b, 1, 50);
  tu_u32(&b, N + 1);
  tu_ev(&b, 2, 60);
  tu_u32(&b, N + 1);
  tu_u16(&b, 5);
  tu_u32(&b, 0);
  tu_u16(&b, 0xFFFF);
  uint64_t before = el_mem_alloc_count();
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  uint64_t allocs = el_mem_alloc_count() - before;
  assert_int_equal(el_host_end(h), 0);
  assert_true(allocs < N / 10);
  assert_int_equal(lua_int(h, "tr:unexpected()"), 0);
  el_host_free(h);
}

/* Per capability, past MAX_UNSETTLED (8192) finished threads that have
 * not settled the oldest are forgotten anyway (memory stays bounded), but
 * each is remembered as finished, and none with a run still open: threads
 * 1..20,000 run and finish on cap 0, in 4 blocks fed one by one
 * (keep_finished 0, no usage series kept: max_users 0), while cap 1 has
 * delivered only a block ending with thread 2's RUN_THREAD at 50; its
 * next block, last, holds thread 2's STOP_THREAD at 60 and a run of
 * thread 1 at 70-80 (both before their finishes at 120 and 110). At most
 * 2 x 8192 + 64 finished threads are held at once, so some were forgotten
 * before cap 1's last block (threads_evicted > 0; none without the bound:
 * cap 1 holds the watermark at 50). Thread 1, forgotten, is made again by
 * its late run: "finished 110 1", as it was, the run counted. Thread 2,
 * kept for its open run, ends it there: 2 runs, none unexpected. Without
 * the record thread 1 would come back "blocked nil 1" and never finish;
 * forgotten with its open run, thread 2's stop would match nothing. */
static void test_cap_usage_unsettled_bound(void **state) {
  (void)state;
  el_host_t *h = host_with(
      "el = require('eventlog_live')\n"
      "tr = el.cap_usage{keep_finished = 0, max_users = 0,\n"
      "  on_point = function() end}\n"
      "el.on_end(function() local got_ = {}\n"
      "  for id = 1, 2 do local t = tr:get(id) or {}\n"
      "    got_[id] = string.format('%s %s %s', t.state, t.finished_t, t.runs)\n"
      "  end\n"
      "  got = table.concat(got_, ';') end)\n",
      0);
  static tu_buf_t b;
  enum { K = 5000, NBLK = 4 }; /* K threads a block (the buffer's room) */
  hdr_caps(&b, 2);
  tu_ev(&b, 18, 40); /* cap 1's first block: thread 2 runs from 50 */
  tu_u32(&b, 24 + 14);
  tu_u64(&b, 50);
  tu_u16(&b, 1);
  tu_ev(&b, 1, 50);
  tu_u32(&b, 2);
  for (uint32_t k = 0; k < NBLK; k++) { /* cap 0's blocks, fed one by one */
    put_finishing_threads(&b, 0, k * K + 1, K);
    assert_int_equal(el_host_feed(h, b.b, b.n), 0);
    b.n = 0;
  }
  tu_ev(&b, 18, 60); /* cap 1's last block */
  tu_u32(&b, 24 + 20 + 34);
  tu_u64(&b, 80);
  tu_u16(&b, 1);
  tu_ev(&b, 2, 60); /* thread 2 stops */
  tu_u32(&b, 2);
  tu_u16(&b, 3);
  tu_u32(&b, 0);
  tu_ev(&b, 1, 70); /* thread 1 runs 70-80 */
  tu_u32(&b, 1);
  tu_ev(&b, 2, 80);
  tu_u32(&b, 1);
  tu_u16(&b, 3);
  tu_u32(&b, 0);
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_true(lua_int(h, "el.stats().threads_evicted") > 0);
  assert_int_equal(el_host_end(h), 0);
  assert_got(h, "finished 110 1;finished 120 2");
  assert_int_equal(lua_int(h, "tr:unexpected()"), 0);
  el_host_free(h);
}

/* Feed b[from..b->n) to h as bytes a live source received now. */
static void feed_live(el_host_t *h, const tu_buf_t *b, size_t from) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  el_host_received(h, (el_unix_ns_t)ts.tv_sec * 1000000000u + ts.tv_nsec, 1);
  assert_int_equal(el_host_feed(h, b->b + from, b->n - from), 0);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* The input waits for its writer for ms, reported as el_src_pump does
 * (el_host_input_waits 1, then again at each beat: here every 100 ms,
 * EL_SRC_WAIT_BEAT_MS in the pump). */
static void wait_ms(el_host_t *h, long ms) {
  el_host_input_waits(h, 1);
  for (; ms > 0; ms -= 100) {
    sleep_ms(ms < 100 ? ms : 100);
    el_host_input_waits(h, 1);
  }
}

/* How the input spends the pause of silence_session. */
enum { BUSY, WAITING, STOPPED };

/* One live session of capabilities 0 and 1 (CAP_CREATE at 0) with a
 * horizon of horizon_ms, its input reporting waits (el_host_input_waits) as
 * el_src_pump does: cap 0's block (thread 1 runs 100-300) arrives, then
 * ms pass, during which the input waits for its writer (WAITING), or does
 * not (BUSY: a backlog is being processed), or waits but the process does
 * not run (STOPPED: by SIGSTOP; no report of the wait until it ends);
 * `wm` gets el.watermark() then. Then cap 0's next block (thread 1 runs
 * 400-500), then cap 1's (thread 2 runs 150-250), and the session ends.
 * Returns the host. */
static el_host_t *silence_session(int pause, long ms, long horizon_ms,
                                  long long *wm) {
  el_host_t *h =
      spans_host_opts(0, (el_host_opts_t){.horizon_ns = horizon_ms * 1000000});
  static const blk_t c0a = {0, 2, {{100, 1, 0}, {300, 1, 2}}};
  static const blk_t c0b = {0, 2, {{400, 1, 0}, {500, 1, 2}}};
  static const blk_t c1 = {1, 2, {{150, 2, 0}, {250, 2, 2}}};
  static tu_buf_t b;
  el_host_input_waits(h, 0); /* the session begins */
  hdr_two_caps(&b);
  put_block(&b, &c0a);
  feed_live(h, &b, 0);
  if (pause == WAITING) {
    wait_ms(h, ms);
  } else {
    if (pause == STOPPED) el_host_input_waits(h, 1);
    sleep_ms(ms);
  }
  *wm = lua_int(h, "el.watermark() or -1");
  el_host_input_waits(h, 0); /* more bytes */
  size_t from = b.n;
  put_block(&b, &c0b);
  feed_live(h, &b, from);
  from = b.n;
  put_block(&b, &c1);
  tu_u16(&b, 0xFFFF);
  feed_live(h, &b, from);
  assert_int_equal(el_host_end(h), 0);
  return h;
}

/* Live, a capability's silence is the time the input waited for its
 * writer, not wall time (docs/lua-api.md §6 "Ordering"). By hand, from
 * the blocks of silence_session:
 *  - busy for 300 ms (no wait): cap 1 is still waited for, the watermark
 *    stays at its 0, nothing is late and the spans come in time order
 *    (thread 2's, ending at 250, first);
 *  - waiting for 300 ms, past the 100 ms horizon: both capabilities are
 *    given up on (el.watermark() nil, -1 here); cap 0's next block makes
 *    it waited for again, alone, so its events are released up to 500
 *    when it comes, and cap 1's RUN at 150 and STOP at 250 are late
 *    (reorder_late 2): thread 2's span comes last. */
static void test_live_silence_is_waiting_time(void **state) {
  (void)state;
  long long wm;
  el_host_t *h = silence_session(BUSY, 300, 100, &wm);
  assert_int_equal(wm, 0);
  assert_got(h,
             "2 running 2 150-250;1 running 2 100-300;"
             "1 blocked 2 300-400;1 running 2 400-500");
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  el_host_free(h);

  h = silence_session(WAITING, 300, 100, &wm);
  assert_int_equal(wm, -1);
  assert_got(h,
             "1 running 2 100-300;1 blocked 2 300-400;"
             "1 running 2 400-500;2 running 2 150-250");
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 2);
  el_host_free(h);
}

/* Live, time during which the process did not run is not silence, even
 * while its input waited: a daemon stopped by SIGSTOP (or a paused VM, or
 * a long callback) does not give up on capabilities whose blocks the
 * writer wrote meanwhile (docs/lua-api.md §6 "Ordering"). Horizon 700 ms,
 * a pause of 1.5 s, from silence_session:
 *  - stopped: the wait is not reported during the pause, as when the
 *    process does not run, so it counts for at most 500 ms (twice the
 *    pump's beat, host_clock.c): cap 1 is still waited for, the watermark
 *    stays at its 0 and nothing is late, as when busy;
 *  - waiting, reported every 100 ms: all 1.5 s count, both capabilities
 *    are given up on (el.watermark() nil, -1 here) and cap 1's 2 events
 *    are late. */
static void test_live_stopped_is_not_silence(void **state) {
  (void)state;
  long long wm;
  el_host_t *h = silence_session(STOPPED, 1500, 700, &wm);
  assert_int_equal(wm, 0);
  assert_got(h,
             "2 running 2 150-250;1 running 2 100-300;"
             "1 blocked 2 300-400;1 running 2 400-500");
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  el_host_free(h);

  h = silence_session(WAITING, 1500, 700, &wm);
  assert_int_equal(wm, -1);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 2);
  el_host_free(h);
}

/* Append to b a block of capability cap holding `runs` runs of thread
 * th: RUN_THREAD at t0 + 10 k and STOP_THREAD (status 2) at t0 + 10 k + 5,
 * k = 0 .. runs - 1; its marker from t0 to the last stop. */
static void put_runs_block(tu_buf_t *b, uint16_t cap, uint32_t th, uint64_t t0,
                           int runs) {
  tu_ev(b, 18, t0);
  tu_u32(b, 24 + (uint32_t)runs * (14 + 20));
  tu_u64(b, t0 + (uint64_t)(runs - 1) * 10 + 5);
  tu_u16(b, cap);
  for (int k = 0; k < runs; k++) {
    tu_ev(b, 1, t0 + (uint64_t)k * 10);
    tu_u32(b, th);
    tu_ev(b, 2, t0 + (uint64_t)k * 10 + 5);
    tu_u32(b, th);
    tu_u16(b, 2);
    tu_u32(b, 0);
  }
}

/* Live, capabilities 0 and 1 (CAP_CREATE at 0) of a busy program whose
 * input never waits (a backlog): 80 rounds of one block per capability,
 * each of 1,000 runs of its thread (thread 1 on cap 0, 2 on cap 1), a
 * RUN_THREAD at t and a STOP_THREAD (status 2) at t + 5, t = 10 apart:
 * 320,000 events, fed one round at a time; then the session ends. The
 * host runs `script`, which sets the global n; *mid gets n before the
 * end. */
static el_host_t *busy_two_caps(const char *script, long long *mid) {
  el_host_t *h = host_opts_with(script, (el_host_opts_t){0});
  static tu_buf_t b;
  enum { ROUNDS = 80, RUNS = 1000 };
  el_host_input_waits(h, 0); /* never waits: quiet time stays 0 */
  hdr_two_caps(&b);
  feed_live(h, &b, 0);
  for (int r = 0; r < ROUNDS; r++) {
    b.n = 0;
    for (uint16_t cap = 0; cap < 2; cap++)
      put_runs_block(&b, cap, cap + 1u, 1000 + (uint64_t)r * RUNS * 10 + cap,
                     RUNS);
    feed_live(h, &b, 0);
  }
  *mid = lua_int(h, "n");
  b.n = 0;
  tu_u16(&b, 0xFFFF);
  feed_live(h, &b, 0);
  assert_int_equal(el_host_end(h), 0);
  return h;
}

/* Live, the capability after the highest seen (2 here) is waited for
 * during the horizon of quiet time, which a busy input never reaches;
 * holding every event meanwhile grew the reorder buffers without bound
 * (4 M events, ~100 MB, before a forced release: a GHC 9.0 program
 * switching threads fast reached it in 7 s). Once EL__NEXT_CAP_HELD
 * events are held for it alone, it is not waited for any more: the
 * output flows while the input is read. By hand, from busy_two_caps: each
 * thread has 80,000 Running spans and 79,999 Blocked ones (319,998 in
 * all); before the end, everything up to the older capability's latest
 * event has left: all but the last round's 4,000 or so. Nothing late or
 * forced. The same for time-order handlers (lua_order.c): 320,000 events
 * delivered, all but the last round's before the end. */
static void test_live_next_cap_wait_bounded(void **state) {
  (void)state;
  long long mid;
  el_host_t *h = busy_two_caps(
      "el = require('eventlog_live'); n = 0\n"
      "el.threads{on_span = function() n = n + 1 end}\n",
      &mid);
  assert_int_equal(lua_int(h, "n"), 319998);
  assert_true(mid > 319998 - 4 * 1000 - 10);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  assert_int_equal(lua_int(h, "el.stats().reorder_forced"), 0);
  el_host_free(h);

  h = busy_two_caps(
      "el = require('eventlog_live'); n = 0\n"
      "el.order('time')\n"
      "el.on('RUN_THREAD', function() n = n + 1 end)\n"
      "el.on('STOP_THREAD', function() n = n + 1 end)\n",
      &mid);
  assert_int_equal(lua_int(h, "n"), 320000);
  assert_true(mid > 320000 - 4 * 1000 - 10);
  assert_int_equal(lua_int(h, "el.stats().order_late"), 0);
  assert_int_equal(lua_int(h, "el.stats().order_forced"), 0);
  el_host_free(h);
}

/* A recorded session of capabilities 0 and 1 (CAP_CREATE at 0) in which
 * capability 1 writes nothing, so it holds the watermark at 0 until the
 * end: capability 0's 1,100,000 events (550 blocks of 1,000 runs of
 * thread 1, RUN_THREAD at t, STOP_THREAD status 2 at t + 5, t = 10 apart)
 * all wait in the reorder buffer, past its bound of 2^20 - 1 = 1,048,575
 * (ana_internal.h, MAX_HELD: ~24 MB). By hand: when the 1,048,576th is
 * held, the oldest go until FORCE_BATCH (65,536) fewer than the bound are
 * held (983,039): 65,537 forced; the 51,424 events left then stay under
 * it (1,034,463). The
 * forced ones are the oldest, in time order, so the spans are those of
 * an unforced run: 550,000 Running and 549,999 Blocked. */
static void test_reorder_forced_in_batches(void **state) {
  (void)state;
  el_host_t *h = host_opts_with(
      "el = require('eventlog_live'); n = 0\n"
      "el.threads{on_span = function() n = n + 1 end}\n",
      (el_host_opts_t){0});
  static tu_buf_t b;
  enum { BLOCKS = 550, RUNS = 1000 };
  hdr_two_caps(&b);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  for (int i = 0; i < BLOCKS; i++) {
    b.n = 0;
    put_runs_block(&b, 0, 1, 1000 + (uint64_t)i * RUNS * 10, RUNS);
    assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  }
  b.n = 0;
  tu_u16(&b, 0xFFFF);
  assert_int_equal(el_host_feed(h, b.b, b.n), 0);
  assert_int_equal(el_host_end(h), 0);
  assert_int_equal(lua_int(h, "el.stats().reorder_forced"), 65537);
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  assert_int_equal(lua_int(h, "n"), 550000 + 549999);
  el_host_free(h);
}

/* Live, a capability whose blocks come far apart is waited for longer
 * than the horizon: twice the quiet time between its blocks (the first
 * counted from the session's start; docs/lua-api.md §6 "Ordering").
 * Horizon 50 ms. Cap 0's block comes with the header; cap 1's after the
 * input waited 1 s, so cap 1 is waited for at least 2 s of quiet time and
 * cap 0 (its block came at once) for the horizon. After 100 ms more of
 * waiting cap 1 is still waited for: the watermark is where its block
 * begins, 150 (its end counts once the block is known complete, at the
 * next block marker). With a wait of just the horizon both would be
 * silent (el.watermark() nil, -1 here): as when the longest wait,
 * $EVENTLOG_LIVE_REORDER_MAX_WAIT_MS, is set to the horizon. */
static long long block_gap_watermark(void) {
  el_host_t *h = spans_host_opts(0, (el_host_opts_t){.horizon_ns = 50000000});
  static const blk_t c0 = {0, 2, {{100, 1, 0}, {300, 1, 2}}};
  static const blk_t c1 = {1, 2, {{150, 2, 0}, {250, 2, 2}}};
  static tu_buf_t b;
  b.n = 0;
  el_host_input_waits(h, 0); /* the session begins */
  hdr_two_caps(&b);
  put_block(&b, &c0);
  feed_live(h, &b, 0);
  wait_ms(h, 1000);
  el_host_input_waits(h, 0);
  size_t from = b.n;
  put_block(&b, &c1);
  feed_live(h, &b, from);
  el_host_input_waits(h, 1);
  sleep_ms(100);
  long long wm = lua_int(h, "el.watermark() or -1");
  el_host_input_waits(h, 0);
  from = b.n;
  tu_u16(&b, 0xFFFF);
  feed_live(h, &b, from);
  assert_int_equal(el_host_end(h), 0);
  el_host_free(h);
  return wm;
}

static void test_live_wait_follows_block_gap(void **state) {
  (void)state;
  assert_int_equal(block_gap_watermark(), 150);
  setenv("EVENTLOG_LIVE_REORDER_MAX_WAIT_MS", "50", 1);
  long long capped = block_gap_watermark();
  unsetenv("EVENTLOG_LIVE_REORDER_MAX_WAIT_MS");
  assert_int_equal(capped, -1);
}

/* Live, the capability after the highest seen is waited for from time 0
 * during the session's first horizon of quiet time: a GHC 9.0 program
 * writes CAP_CREATE at exit, and capability 1's first block can come
 * after capability 0's whole run (ghc-9.0/threads.eventlog piped: 41,760
 * late events before). Horizon 100 ms; no CAP_CREATE. By hand:
 *  - cap 0's block (thread 1 runs 100-300) then cap 1's (thread 2 runs
 *    150-250) arrive with no wait between: right after cap 0's block the
 *    watermark is 0 (cap 1 may still come; cap 0 alone would give 100,
 *    its block's start), and the spans come in time order, thread 2's
 *    (ending at 250) first, nothing late (else its RUN at 150 and STOP at
 *    250 come behind 300: reorder_late 2);
 *  - cap 0's block, then 300 ms of waiting (past the horizon), then cap
 *    0's next block (thread 1 runs 400-500): cap 1 is no longer waited
 *    for, so the watermark is cap 0's, 400 (the new block's start), not 0:
 *    a program with one capability is not held back for good;
 *  - cap 0's block with thread 2's RUN at 350 after thread 1's run (the
 *    decoder may hold a stream's last event for a few more bytes), then
 *    300 ms of waiting and no more input: a wall-clock tick
 *    (el_host_run_wall_timers) releases thread 1's run, 1 span, before
 *    the session ends (held until then, 0). */
static void test_live_next_cap_waited(void **state) {
  (void)state;
  static const blk_t c0a = {0, 2, {{100, 1, 0}, {300, 1, 2}}};
  static const blk_t c0b = {0, 2, {{400, 1, 0}, {500, 1, 2}}};
  static const blk_t c1 = {1, 2, {{150, 2, 0}, {250, 2, 2}}};
  static tu_buf_t b;
  el_host_opts_t o = {.horizon_ns = 100000000};
  el_host_t *h = spans_host_opts(0, o);
  el_host_input_waits(h, 0); /* the session begins */
  hdr_caps(&b, 0);
  put_block(&b, &c0a);
  feed_live(h, &b, 0);
  assert_int_equal(lua_int(h, "el.watermark() or -1"), 0);
  size_t from = b.n;
  put_block(&b, &c1);
  tu_u16(&b, 0xFFFF);
  feed_live(h, &b, from);
  assert_int_equal(el_host_end(h), 0);
  assert_got(h, "2 running 2 150-250;1 running 2 100-300");
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  el_host_free(h);

  h = spans_host_opts(0, o);
  el_host_input_waits(h, 0);
  hdr_caps(&b, 0);
  put_block(&b, &c0a);
  feed_live(h, &b, 0);
  el_host_input_waits(h, 1);
  sleep_ms(300);
  el_host_input_waits(h, 0);
  from = b.n;
  put_block(&b, &c0b);
  feed_live(h, &b, from);
  assert_int_equal(lua_int(h, "el.watermark() or -1"), 400);
  from = b.n;
  tu_u16(&b, 0xFFFF);
  feed_live(h, &b, from);
  assert_int_equal(el_host_end(h), 0);
  el_host_free(h);

  static const blk_t c0c = {0, 3, {{100, 1, 0}, {300, 1, 2}, {350, 2, 0}}};
  h = spans_host_opts(0, o);
  el_host_input_waits(h, 0);
  hdr_caps(&b, 0);
  put_block(&b, &c0c);
  feed_live(h, &b, 0);
  el_host_input_waits(h, 1);
  sleep_ms(300);
  assert_int_equal(lua_int(h, "#out"), 0);
  el_host_run_wall_timers(h, 0);
  assert_int_equal(lua_int(h, "#out"), 1);
  el_host_free(h);
}

/* A capability's queue stays in time order when an event earlier than its
 * latest one arrives after events that took the fast append (ana_reorder.c
 * keeps the latest time queued per capability, q_t.last_t, and sends an
 * earlier event to the insertion path). Capability 1 (no events) holds
 * the watermark at 0, so capability 0's RUN_THREADs at 100 (thread 1),
 * 300 (thread 2), 200 (thread 3) and its STOP_THREAD at 400 (thread 1)
 * all wait for the end of the session and leave in time order: nothing
 * is late, and thread 1's run is the one span (by hand: 100-400, status
 * 3). Appended at the tail instead, the event at 200 would leave after
 * the one at 300 and count in reorder_late. */
static void test_reorder_earlier_than_tail(void **state) {
  (void)state;
  el_host_t *h = spans_host(0);
  static const blk_t blk[] = {
      {0, 4, {{100, 1, 0}, {300, 2, 0}, {200, 3, 0}, {400, 1, 3}}}};
  feed_blocks(h, blk, 1);
  assert_got(h, "1 running 3 100-400");
  assert_int_equal(lua_int(h, "el.stats().reorder_late"), 0);
  el_host_free(h);
}

/* A thread's Mutator time past max_users goes to its capability's "other"
 * series only where it has no series of its own (ana_emit.c remembers the
 * capability where it last went to "other", thread_t.other_cap, and skips
 * the lookup only there). max_users = 2, thread 1 runs on capabilities
 * 0 (100-110), 1 (120-130), 2 (140-150), then 0 again (160-170). By hand,
 * one point per span at its end, value = the series' running total: cap 0
 * Mutator 1 at 110, 10; cap 1 Mutator 1 at 130, 10 (2 series: max_users
 * reached); cap 2 "other" at 150, 10; then cap 0's Idle 110-160 (at 160,
 * 50) and its own series again at 170, 10 + 10. Credited to "other" there
 * too, the last point would read "0 Mutator other 170 10". In time order
 * (el.threads() made): taken per capability, cap 0's second span would
 * come before cap 2's. */
static void test_cap_usage_other_per_capability(void **state) {
  (void)state;
  el_host_t *h = points_host_with("max_users = 2, ", "el.threads()");
  static const blk_t blk[] = {
      {0, 4, {{100, 1, 0}, {110, 1, 3}, {160, 1, 0}, {170, 1, 3}}},
      {1, 2, {{120, 1, 0}, {130, 1, 3}}},
      {2, 2, {{140, 1, 0}, {150, 1, 3}}}};
  feed_caps_blocks(h, 3, blk, 3);
  assert_got(h,
             "0 Mutator 1 110 10;1 Mutator 1 130 10;2 Mutator other 150 10;"
             "0 Idle nil 160 50;0 Mutator 1 170 20");
  assert_int_equal(lua_int(h, "el.stats().usage_other"), 1);
  el_host_free(h);
}

/* A thread sent to "other" gets a series of its own once
 * release_finished() makes room (ana_t.ugen moves on: its memory of
 * "other" is stale). One capability (its events are taken as they come),
 * max_users = 1: thread 1 runs 100-200 (blocked), thread 2 300-400
 * ("other"), thread 1 500-600 and finishes (status 5): the STOP_THREAD
 * handler, which runs after the analysis took the event, releases its
 * series; thread 2 runs 700-800. By hand, each at its end: cap 0 Mutator
 * 1 at 200, 100; Idle at 300, 100; "other" at 400, 100; Idle at 500,
 * 100 + 100; Mutator 1 at 600, 100 + 100; Idle at 700, 200 + 100; Mutator
 * 2 at 800, 100 (still "other", it would read "0 Mutator other 800
 * 200"). */
static void test_cap_usage_other_until_room(void **state) {
  (void)state;
  el_host_t *h = points_host_with(
      "max_users = 1, ",
      "el.on('STOP_THREAD', function(ev, th, st)\n"
      "  if st == 5 then freed = #tr:release_finished() end end)");
  static const blk_t blk[] = {
      {0, 4, {{100, 1, 0}, {200, 1, 3}, {300, 2, 0}, {400, 2, 3}}},
      {0, 4, {{500, 1, 0}, {600, 1, 5}, {700, 2, 0}, {800, 2, 3}}}};
  feed_caps_blocks(h, 1, blk, 2);
  assert_got(h,
             "0 Mutator 1 200 100;0 Idle nil 300 100;"
             "0 Mutator other 400 100;0 Idle nil 500 200;"
             "0 Mutator 1 600 200;0 Idle nil 700 300;0 Mutator 2 800 100");
  assert_int_equal(lua_int(h, "freed"), 1);
  assert_int_equal(lua_int(h, "el.stats().usage_other"), 1);
  el_host_free(h);
}

/* Aggregated points (aggregate_ns = 100): a series gives a point only when
 * a span ends in another window ([0, 100), [100, 200), ...: the window
 * bounds ana_emit.c keeps per series; a span counts at its end) and at
 * flush_points(), in the order the series changed. Thread 1 runs 10-20,
 * 50-60, 99-100, 100-110, 250-260 on capability 0. By hand: Mutator
 * totals 10, 20 in window 0 (last end 60); the span 99-100 ends in window
 * 1: point (60, 20), then 21 and 31 there (last end 110); the Idle gaps
 * 20-50, 60-99 give 30 + 39 in window 0 (last end 99), none at 100 (no
 * gap); at 250 the Idle gap 110-250 ends in window 2: point (99, 69),
 * then Mutator moves to window 2: point (110, 31); the flush gives
 * Mutator (260, 41) and Idle (250, 69 + 140). */
static void test_cap_usage_points_windows(void **state) {
  (void)state;
  el_host_t *h = points_host_with("aggregate_ns = 100, ", "");
  static const blk_t blk[] = {
      {0, 4, {{10, 1, 0}, {20, 1, 3}, {50, 1, 0}, {60, 1, 3}}},
      {0, 4, {{99, 1, 0}, {100, 1, 3}, {100, 1, 0}, {110, 1, 3}}},
      {0, 2, {{250, 1, 0}, {260, 1, 3}}}};
  feed_caps_blocks(h, 1, blk, 3);
  assert_got(h,
             "0 Mutator 1 60 20;0 Idle nil 99 69;0 Mutator 1 110 31;"
             "0 Mutator 1 260 41;0 Idle nil 250 209");
  el_host_free(h);
}

/* The default processors' case, which ana_state.c and ana_internal.h
 * take without a call (el__ana_run_span_fast) while every series a span
 * moves stays in its dirty window: usage points and productivity, both
 * aggregated (1000 ns), max_users = 1. One capability; thread 1 runs
 * 100-200, 400-450, 1100-1200, thread 2 ("other": no room) 250-300,
 * 500-600, every stop status 3. By hand, each span and gap at its end:
 * spans 1 and 2 make the series (Mutator 1, then Idle 200-250 and
 * "other"); spans 3 and 4 stay in window 0 (Idle 300-400 and 450-500,
 * Mutator 1 and "other" 50 and 100 more: no point); span 5's Idle gap
 * 600-1100 ends in window 1: point (500, 200), then Mutator 1 moves to
 * window 1: point (450, 150), and productivity: (600, 300, 0). The flush
 * gives productivity (1200, 400, 0), then the series in the order they
 * changed: Mutator 1 (1200, 250), Idle (1100, 700), "other" (600, 150).
 * Thread 1: running 250 ns in
 * 3 runs, blocked 200 + 650 ns (status 3), first at 100, last at 1200;
 * thread 2: running 150, blocked 200, first at 250; "other" took 2
 * spans; capability 0's totals: Mutator 400, Idle 700. */
static void test_cap_usage_default_fast_path(void **state) {
  (void)state;
  el_host_t *h = points_host_with(
      "max_users = 1, aggregate_ns = 1000, productivity_aggregate_ns = 1000,"
      " on_productivity = function(cap, t, m, g)\n"
      "  out[#out + 1] = string.format('P %d %d %d %d', cap, t, m, g) end, ",
      "");
  static const blk_t blk[] = {
      {0, 4, {{100, 1, 0}, {200, 1, 3}, {250, 2, 0}, {300, 2, 3}}},
      {0, 4, {{400, 1, 0}, {450, 1, 3}, {500, 2, 0}, {600, 2, 3}}},
      {0, 2, {{1100, 1, 0}, {1200, 1, 3}}}};
  feed_caps_blocks(h, 1, blk, 3);
  assert_got(h,
             "0 Idle nil 500 200;0 Mutator 1 450 150;P 0 600 300 0;"
             "P 0 1200 400 0;0 Mutator 1 1200 250;0 Idle nil 1100 700;"
             "0 Mutator other 600 150");
  assert_int_equal(lua_int(h, "el.stats().usage_other"), 2);
  assert_int_equal(lua_int(h, "tr:get(1).running_ns"), 250);
  assert_int_equal(lua_int(h, "tr:get(1).runs"), 3);
  assert_int_equal(lua_int(h, "tr:get(1).blocked_ns"), 850);
  assert_int_equal(lua_int(h, "tr:get(1).blocked[3]"), 850);
  assert_int_equal(lua_int(h, "tr:get(1).first_t"), 100);
  assert_int_equal(lua_int(h, "tr:get(1).last_t"), 1200);
  assert_int_equal(lua_int(h, "tr:get(2).running_ns"), 150);
  assert_int_equal(lua_int(h, "tr:get(2).blocked_ns"), 200);
  assert_int_equal(lua_int(h, "tr:get(2).first_t"), 250);
  assert_int_equal(lua_int(h, "tr:totals()[0].mutator_ns"), 400);
  assert_int_equal(lua_int(h, "tr:totals()[0].idle_ns"), 700);
  el_host_free(h);
}

/* What the daemon's default analysis (el.cap_usage with on_point and
 * on_productivity, aggregated in windows of window_ns, at most max_users
 * thread series) makes of the GHC 9.0 eventlog `name` fed in pieces of
 * `piece` bytes (0: whole): every point and productivity value in order,
 * then every thread of tracker:list(), the capability totals, usage_other
 * and the unexpected count, as one string (malloc'd). With spans, also
 * el.cap_usage's and el.threads' on_span calls (the time order of every
 * processor on), each with what a handler reads then: the stream time,
 * the event count, and the current event's type, time, capability and
 * offset (el.event()). */
static char *default_analysis(const char *name, size_t piece, long window_ns,
                              int max_users, int spans) {
  char path[1024], script[3072];
  const char *d = getenv("EL_EVENTLOGS");
  snprintf(path, sizeof path, "%s/ghc-9.0/%s",
           d ? d : EL_SOURCE_DIR "/tests/data/eventlogs", name);
  if (!strncmp(name, "x2:", 3)) { /* its blocks twice, thread ids repeated */
    char cmd[4096];
    const char *b = getenv("EL_BUILD_DIR"), *tmp = getenv("TMPDIR");
    snprintf(script, sizeof path, "%.900s/el-test-host-x2-%d.eventlog",
             tmp ? tmp : "/tmp", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "'%s/tests/el_repeat_blocks' -r 2 -g last -o '%s' "
             "'%s/ghc-9.0/%s'",
             b ? b : ".", script, d ? d : EL_SOURCE_DIR "/tests/data/eventlogs",
             name + 3);
    assert_int_equal(system(cmd), 0);
    memcpy(path, script, sizeof path); /* below sizeof path */
  }
  snprintf(
      script, sizeof script,
      "el = require('eventlog_live'); out = {}\n"
      "local function add(...) out[#out + 1] = table.concat({...}, ' ') end\n"
      "local function seen()\n"
      "  local e = el.event()\n"
      "  return el.now() .. ' ' .. el.stats().events .. ' ' ..\n"
      "    tostring(e.type) .. ' ' .. tostring(e.t) .. ' ' ..\n"
      "    tostring(e.cap) .. ' ' .. tostring(e.offset) end\n"
      "local function cat(...)\n"
      "  local a = table.pack(...)\n"
      "  for k = 1, a.n do a[k] = tostring(a[k]) end\n"
      "  return table.concat(a, ' ', 1, a.n) end\n"
      "local span = %s\n"
      "if span then el.threads{on_span = function(...)\n"
      "  add('H', cat(...), seen()) end} end\n"
      "tr = el.cap_usage{aggregate_ns = %ld, productivity_aggregate_ns = %ld,\n"
      "  max_users = %d, on_span = span and function(...)\n"
      "    add('K', cat(...), seen()) end or nil,\n"
      "  on_point = function(i, t, v, cap, cat, u)\n"
      "    add('U', i, t, v, cap, cat, tostring(u)) end,\n"
      "  on_productivity = function(cap, t, m, g) add('P', cap, t, m, g) end}\n"
      /* the host's progress as it goes: the direct path's is kept per
       * run (direct_end in ana_reorder.c), the general path's per event */
      "el.every(1000000, function(t)\n"
      "  add('W', t, tostring(el.watermark())) end)\n"
      "el.on_end(function()\n"
      "  tr:flush_points()\n"
      "  for _, th in ipairs(tr:list()) do\n"
      "    local b = {}\n"
      "    for k, v in pairs(th.blocked) do b[#b + 1] = k .. '=' .. v end\n"
      "    table.sort(b)\n"
      "    add('T', th.thread, th.state, tostring(th.status), th.first_t,\n"
      "      th.last_t, tostring(th.finished_t), th.running_ns,\n"
      "      th.blocked_ns, th.runs, th.cap, table.concat(b, ','))\n"
      "  end\n"
      "  for cap, c in pairs(tr:totals()) do\n"
      "    add('C', cap, c.mutator_ns, c.gc_ns, c.idle_ns) end\n"
      "  add('S', el.stats().usage_other, tr:unexpected())\n"
      "  got = table.concat(out, '\\n') end)\n",
      spans ? "true" : "false", window_ns, window_ns, max_users);
  el_host_t *h = host_with(script, 0);
  size_t len;
  uint8_t *log = read_all(path, &len);
  if (!strncmp(name, "x2:", 3)) unlink(path);
  for (size_t at = 0; at < len;) {
    size_t n = piece && len - at > piece ? piece : len - at;
    assert_int_equal(el_host_feed(h, log + at, n), 0);
    at += n;
  }
  assert_int_equal(el_host_end(h), 0);
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "got");
  assert_non_null(lua_tostring(L, -1));
  char *got = strdup(lua_tostring(L, -1));
  lua_pop(L, 1);
  el_host_free(h);
  free(log);
  return got;
}

/* The default analysis, and the time order of every processor on (spans),
 * give the same result whether the events come
 * whole in one feed (most RUN_THREAD and STOP_THREAD then go from the
 * decoder's fast path straight to the analyses: el__ana_direct_run) or in
 * 13-byte pieces (every RUN_THREAD and STOP_THREAD, 14 and 20 bytes, cut
 * across feeds: the general path through on_event, tested against the
 * ghc-events references elsewhere), for each shared GHC 9.0 eventlog
 * but the 12 MB threads-big (the same events as threads ten times), with
 * windows of 1 ms and 1 s, and with room for 2 thread series (the rest
 * to "other"). */
static void test_default_analysis_direct_same(void **state) {
  (void)state;
  static const char *const logs[] = {
      "threads.eventlog", "oddball-hT.eventlog", "heapy-hT.eventlog",
      "heapy-prof-hc.eventlog", "heapy-prof-hy.eventlog",
      /* its second half names finished threads (el_repeat_blocks) */
      "x2:threads.eventlog"};
  static const struct {
    long window_ns;
    int max_users;
  } cfg[] = {{1000000, 1000}, {1000000000, 1000}, {1000000, 2}};
  for (size_t i = 0; i < EL_ARRAY_LEN(logs); i++)
    for (size_t c = 0; c < 2 * EL_ARRAY_LEN(cfg); c++) {
      int spans = c >= EL_ARRAY_LEN(cfg);
      long w = cfg[c % EL_ARRAY_LEN(cfg)].window_ns;
      int mu = cfg[c % EL_ARRAY_LEN(cfg)].max_users;
      char *whole = default_analysis(logs[i], 0, w, mu, spans);
      char *cut = default_analysis(logs[i], 13, w, mu, spans);
      if (strcmp(whole, cut) != 0)
        fprintf(stderr, "%s, window %ld ns, max_users %d, spans %d: differ\n",
                logs[i], w, mu, spans);
      /* points, productivity and threads listed */
      assert_non_null(strstr(whole, "U 1 "));
      assert_non_null(strstr(whole, "P 0 "));
      assert_non_null(strstr(whole, "\nT "));
      assert_non_null(strstr(whole, "\nW "));
      if (spans) { /* and spans */
        assert_non_null(strstr(whole, "\nK "));
        assert_non_null(strstr(whole, "\nH "));
      }
      assert_string_equal(whole, cut);
      free(whole);
      free(cut);
    }
}

/* A fail-fast error in an el.threads on_span handler, called while a
 * RUN_THREAD or STOP_THREAD goes through the state machines, stops the
 * host at that event whether it came from the decoder's run (whole feed:
 * el__ana_direct_run_ordered passes the stop on) or was delivered
 * (13-byte pieces): the same event count, stream time and current event
 * at the error, the same count after it (nothing taken past it), on
 * threads.eventlog. Returns what the handler saw and the count after. */
static char *fail_fast_in_time_order(size_t piece) {
  char path[1024], *got;
  const char *d = getenv("EL_EVENTLOGS");
  snprintf(path, sizeof path, "%s/ghc-9.0/threads.eventlog",
           d ? d : EL_SOURCE_DIR "/tests/data/eventlogs");
  el_host_t *h = host_with(
      "el = require('eventlog_live'); n = 0\n"
      "el.threads{on_span = function(...)\n"
      "  n = n + 1\n"
      "  if n == 500 then\n"
      "    local e = el.event()\n"
      "    seen = table.concat({el.stats().events, el.now(), e.type, e.t,\n"
      "      e.cap, e.offset}, ' ')\n"
      "    error('stop here') end end}\n",
      1);
  size_t len;
  uint8_t *log = read_all(path, &len);
  int rc = 0;
  for (size_t at = 0; at < len && rc == 0;) {
    size_t n = piece && len - at > piece ? piece : len - at;
    rc = el_host_feed(h, log + at, n);
    at += n;
  }
  assert_int_equal(rc, EL_ESTOPPED);
  assert_int_equal(lua_int(h, "n"), 500);
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "seen");
  assert_non_null(lua_tostring(L, -1));
  char buf[512];
  snprintf(buf, sizeof buf, "%s; %llu", lua_tostring(L, -1),
           (unsigned long long)el_host_stats(h)->events);
  got = strdup(buf);
  lua_pop(L, 1);
  el_host_free(h);
  free(log);
  return got;
}

static void test_fail_fast_in_time_order_direct(void **state) {
  (void)state;
  char *whole = fail_fast_in_time_order(0), *cut = fail_fast_in_time_order(13);
  assert_string_equal(whole, cut);
  free(whole);
  free(cut);
}

/* The run path of batched Lua events (el__lua_direct_run, lua_run.c)
 * against the path before it (every event delivered to on_event, which
 * queues the same record): the decoder's run handler replaced by a
 * wrapper that counts the direct events it took (run path), or removed
 * (delivered path; the host sets its run handler again only when the
 * analyses' trackers change, which this script makes none of). */
static uint64_t run_direct_taken;
static size_t counting_run(void *ud, const el_ev_run_t *run,
                           el_ev_run_taken_t *taken) {
  size_t n = el__lua_direct_run(ud, run, taken);
  el_ev_run_t r = *run;
  for (const uint8_t *p = r.p; p < r.p + n;) {
    int kind;
    size_t len = el_ev_run_frame(&r, p, &kind);
    if (!len) break;
    run_direct_taken += kind == EL_EV_RUN_DIRECT;
    p += len;
  }
  return n;
}

/* What handlers see of `path` fed in pieces of `piece` bytes (0: whole)
 * through the run path (run 1) or the delivered path (run 0): a line for
 * every `detail`-th handler call (its time, capability, offset, stream
 * time, type, payload, fields by argument and by ev:fields(), Unix time)
 * with el.stats() (but lua_memory: the Lua heap's size differs between
 * two states, whose string hashes are seeded apart); el.stats() at every timer tick, string event
 * and at the end; every call's time, capability, offset, stream time,
 * type, session and fields folded into one integer. The handlers: every
 * field shape of the run path (RUN_THREAD u32, STOP_THREAD u32 u16 u32
 * and its 6-byte older layout, THREAD_WAKEUP u32 u16, GC_START none,
 * HEAP_ALLOCATED u32 u64), both calling conventions, events that are
 * not batched between them (USER_MSG: strings; SPARK_COUNTERS: 7 fields;
 * GC_END in time order), a handler added and removed midway, a timer
 * every millisecond and a one-shot one set from a handler, an error
 * every 7919th call (counted in el.stats()); with fail_at > 0 the
 * fail_at-th call raises (with fail_fast: the host stops there). */
static char *run_path_text(const char *path, size_t piece, int run, int detail,
                           int fail_at, uint64_t *direct) {
  char script[6144];
  snprintf(
      script, sizeof script,
      "el = require('eventlog_live'); out = {}; acc = 0; n = 0\n"
      "local fmt, byte = string.format, string.byte\n"
      "local DETAIL, FAIL_AT = %d, %d\n"
      "local function fold(v) acc = acc * 1000003 + v end\n"
      "local function hex(s) return (s:gsub('.', function(c)\n"
      "  return fmt('%%02x', c:byte()) end)) end\n"
      "local function stats_line(tag)\n"
      "  local k = {}\n"
      "  for key, v in pairs(el.stats()) do\n"
      "    if key ~= 'lua_memory' then k[#k + 1] = key .. '=' .. v end end\n"
      "  table.sort(k)\n"
      "  out[#out + 1] = tag .. ' ' .. el.now() .. ' ' .. n .. ' ' ..\n"
      "    table.concat(k, ',')\n"
      "end\n"
      "local function seen(name, ev, t, cap, ...)\n"
      "  n = n + 1\n"
      "  if n == FAIL_AT then\n"
      "    error(fmt('fail at %%d: %%d %%d', n, ev.offset, el.now())) end\n"
      "  fold(t); fold(cap or -1); fold(ev.offset); fold(el.now())\n"
      "  fold(ev.type_id); fold(ev.session)\n"
      "  for i = 1, select('#', ...) do fold(select(i, ...)) end\n"
      "  if n %% DETAIL == 0 then\n"
      "    local p, f = ev.payload, {}\n"
      "    for k, v in pairs(ev:fields()) do f[#f + 1] = k .. '=' .. v end\n"
      "    table.sort(f)\n"
      "    out[#out + 1] = fmt('%%s %%d %%s %%d %%d %%s %%s [%%s] {%%s} %%s',\n"
      "      name, t, tostring(cap), ev.offset, el.now(), ev.type, hex(p),\n"
      "      table.concat({...}, ','), table.concat(f, ','),\n"
      "      tostring(ev.unix_ns))\n"
      "    stats_line('S')\n"
      "  end\n"
      "  if n %% 7919 == 0 then error('every 7919th') end\n"
      "end\n"
      "local mig\n"
      "el.on('RUN_THREAD', function(t, cap, th)\n"
      "  seen('R', el.event(), t, cap, th)\n"
      "  if n > 500 and not mig then\n"
      "    mig = el.on('MIGRATE_THREAD', function(t, cap, ...)\n"
      "      seen('M', el.event(), t, cap, ...) end, {args = 't'})\n"
      "    el.at(t + 50000, function(tt) fold(tt); stats_line('A') end)\n"
      "  elseif n > 20000 and mig and mig ~= true then\n"
      "    el.off(mig); mig = true end\n"
      "end, {args = 't'})\n"
      "el.on('STOP_THREAD', function(ev, ...) seen('S', ev, ev.t, ev.cap, ...)"
      " end)\n"
      "el.on('THREAD_WAKEUP', function(t, cap, ...)\n"
      "  seen('W', el.event(), t, cap, ...) end, {args = 't'})\n"
      "el.on('GC_START', function(t, cap) seen('G', el.event(), t, cap) end,\n"
      "  {args = 't'})\n"
      "el.on('HEAP_ALLOCATED', function(ev, ...)\n"
      "  seen('H', ev, ev.t, ev.cap, ...) end)\n"
      "el.on('USER_MSG', function(ev, msg)\n"
      "  seen('U', ev, ev.t, ev.cap); out[#out + 1] = msg; stats_line('U') end)\n"
      "el.on('SPARK_COUNTERS', function(ev, ...)\n"
      "  seen('K', ev, ev.t, ev.cap, ...) end)\n"
      "el.on('GC_END', function(t, cap) seen('E', el.event(), t, cap) end,\n"
      "  {args = 't', order = 'time'})\n"
      "el.every(1000000, function(t) fold(t); stats_line('T') end)\n"
      "el.on_end(function() stats_line('Z')\n"
      "  out[#out + 1] = fmt('%%d calls, %%d', n, acc)\n"
      "  got = table.concat(out, '\\n') end)\n",
      detail, fail_at);
  el_host_t *h = host_with(script, fail_at > 0);
  el_ev_decoder_direct_run(el_host_decoder(h), run ? counting_run : NULL, h);
  run_direct_taken = 0;
  size_t len;
  uint8_t *log = read_all(path, &len);
  int rc = 0;
  for (size_t at = 0; at < len && !rc;) {
    size_t k = piece && len - at > piece ? piece : len - at;
    rc = el_host_feed(h, log + at, k);
    at += k;
  }
  free(log);
  assert_true(rc == 0 || (fail_at > 0 && rc == EL_ESTOPPED));
  el_host_end(h);
  *direct = run_direct_taken;
  lua_State *L = el_host_lua(h);
  lua_getglobal(L, "got");
  assert_non_null(lua_tostring(L, -1));
  const el_host_stats_t *st = el_host_stats(h);
  char *text = NULL;
  assert_true(asprintf(&text,
                       "%s\nhost: events %llu dispatched %llu errors "
                       "%llu\nerror: %s",
                       lua_tostring(L, -1), (unsigned long long)st->events,
                       (unsigned long long)st->dispatched,
                       (unsigned long long)st->handler_errors,
                       el_host_error(h)) > 0);
  lua_pop(L, 1);
  el_host_free(h);
  return text;
}

/* Handlers see the same through the run path as through the delivered
 * path (run_path_text): on testlog-part (STOP_THREAD's 6-byte layout,
 * three capabilities), oddball-hT (whole and in 4,093-byte pieces, and
 * stopped by a fail-fast error) and threads-big's blocks written twice
 * (el_repeat_blocks: 1.4 M handler calls, 1 MiB pieces). The run path
 * must have taken most of the batched events. Fails when a record of the
 * run path is built wrong (a field, the offset, the stream time). */
static void test_lua_run_path_same(void **state) {
  (void)state;
  const char *d = getenv("EL_EVENTLOGS"), *b = getenv("EL_BUILD_DIR");
  const char *tmp = getenv("TMPDIR");
  if (!d) d = EL_SOURCE_DIR "/tests/data/eventlogs";
  char x2[1024], cmd[4096];
  snprintf(x2, sizeof x2, "%.900s/el-test-host-run-x2-%d.eventlog",
           tmp ? tmp : "/tmp", (int)getpid());
  snprintf(cmd, sizeof cmd,
           "'%s/tests/el_repeat_blocks' -r 2 -g last -o '%s' "
           "'%s/ghc-9.0/threads-big.eventlog'",
           b ? b : ".", x2, d);
  char part[1024], odd[1024];
  snprintf(part, sizeof part, "%s/ghc-events/testlog-part.eventlog", d);
  snprintf(odd, sizeof odd, "%s/ghc-9.0/oddball-hT.eventlog", d);
  static const struct {
    int log; /* 0 part, 1 odd, 2 x2 */
    size_t piece;
    int detail, fail_at;
    uint64_t min_direct; /* batched events the run path took, at least */
  } cases[] = {{0, 0, 1, 0, 200},
               {1, 0, 1, 0, 15000},
               {1, 4093, 1, 0, 15000},
               {1, 0, 1, 12345, 5000},
               {2, 1 << 20, 997, 0, 1000000}};
  for (size_t i = 0; i < EL_ARRAY_LEN(cases); i++) {
    const char *path = cases[i].log == 0 ? part : cases[i].log == 1 ? odd : x2;
    uint64_t direct_run, direct_del;
    if (cases[i].log == 2) assert_int_equal(system(cmd), 0);
    char *via_run = run_path_text(path, cases[i].piece, 1, cases[i].detail,
                                  cases[i].fail_at, &direct_run);
    char *via_del = run_path_text(path, cases[i].piece, 0, cases[i].detail,
                                  cases[i].fail_at, &direct_del);
    if (cases[i].log == 2) unlink(x2);
    if (strcmp(via_run, via_del) != 0 || direct_run < cases[i].min_direct) {
      fprintf(stderr, "case %zu (%s): %llu taken by the run path\n", i, path,
              (unsigned long long)direct_run);
      for (size_t k = 0; via_run[k] && via_run[k] == via_del[k]; k++)
        if (via_run[k + 1] != via_del[k + 1]) {
          fprintf(stderr,
                  "first difference at byte %zu: ...%.200s\n"
                  "against ...%.200s\n",
                  k + 1, via_run + (k > 100 ? k - 100 : 0),
                  via_del + (k > 100 ? k - 100 : 0));
          break;
        }
    }
    assert_int_equal(direct_del, 0);
    assert_true(direct_run >= cases[i].min_direct);
    assert_non_null(strstr(via_run, "\nT "));
    assert_non_null(strstr(via_run, "\nS "));
    assert_string_equal(via_run, via_del);
    free(via_run);
    free(via_del);
  }
}

static void test_no_allocation_per_event(void **state) {
  (void)state;
  size_t len;
  uint8_t *log = read_all(eventlog_named("threads"), &len);
  el_host_t *h = host_with(
      "el = require('eventlog_live'); n = 0\n"
      "el.on('RUN_THREAD', function(ev, t) n = n + t + ev.t end)\n"
      "el.on('STOP_THREAD', function(ev, t, s, i) n = n + s end)\n"
      "el.on('HEAP_ALLOCATED', function(ev, c, b) n = n + b end)\n"
      "el.every(1000000, function(t) n = n + 1 end)\n"
      "th = el.threads()\n",
      0);
  size_t half = len / 2;
  assert_int_equal(el_host_feed(h, log, half), 0);
  lua_gc(el_host_lua(h), LUA_GCSTOP);  /* the collector may shrink, then
                                          regrow, the stacks */
  uint64_t before = el_mem_alloc_count();
  uint64_t disp = el_host_stats(h)->dispatched;
  assert_int_equal(el_host_feed(h, log + half, len - half), 0);
  uint64_t allocs = el_mem_alloc_count() - before;
  assert_true(el_host_stats(h)->dispatched - disp > 30000);
  /* what remains: the session's init events (args, version strings: the
   * global block comes last in this file) and the geometric growth of the
   * helper's reorder queues and thread table */
  assert_true(allocs <= 64);
  lua_gc(el_host_lua(h), LUA_GCRESTART);
  assert_int_equal(el_host_end(h), 0);
  el_host_free(h);
  free(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dispatch_only_subscribed),
      cmocka_unit_test(test_handler_error_counted_not_fatal),
      cmocka_unit_test(test_fail_fast_stops),
      cmocka_unit_test(test_timers_fire_in_eventlog_time_order),
      cmocka_unit_test(test_timer_collected_in_own_callback),
      cmocka_unit_test(test_emit_reaches_store),
      cmocka_unit_test(test_native_spans_untaken_counted),
      cmocka_unit_test(test_native_spans_only_untaken_counted),
      cmocka_unit_test(test_all_processors_untaken_counted),
      cmocka_unit_test(test_cap_usage_spans_untaken_counted),
      cmocka_unit_test(test_ordered_merge_keeps_released_time),
      cmocka_unit_test(test_syntax_error_names_line),
      cmocka_unit_test(test_unknown_event_name_raises),
      cmocka_unit_test(test_gc_helper_matches_reference),
      cmocka_unit_test(test_session_and_config),
      cmocka_unit_test(test_oom_sweep),
      cmocka_unit_test(test_lua_oom_never_panics),
      cmocka_unit_test(test_hostile_input),
      cmocka_unit_test(test_batched_dispatch_order),
      cmocka_unit_test(test_batched_record_matches_event),
      cmocka_unit_test(test_malformed_event_not_dispatched),
      cmocka_unit_test(test_fields_mask_follows_subscriptions),
      cmocka_unit_test(test_fields_for_late_subscription),
      cmocka_unit_test(test_fields_for_subscription_from_timer),
      cmocka_unit_test(test_quiet_events_counted),
      cmocka_unit_test(test_no_allocation_per_event),
      cmocka_unit_test(test_status_module_names),
      cmocka_unit_test(test_reorder_stop_keeps_status),
      cmocka_unit_test(test_reorder_watermark_passes),
      cmocka_unit_test(test_reorder_ring_grows_wrapped),
      cmocka_unit_test(test_cap_usage_points_time_order),
      cmocka_unit_test(test_cap_usage_points_per_capability),
      cmocka_unit_test(test_cap_usage_stale_run_per_capability),
      cmocka_unit_test(test_cap_usage_release_waits_for_caps),
      cmocka_unit_test(test_cap_usage_evict_waits_amortized),
      cmocka_unit_test(test_cap_usage_unsettled_bound),
      cmocka_unit_test(test_default_analysis_direct_same),
      cmocka_unit_test(test_fail_fast_in_time_order_direct),
      cmocka_unit_test(test_lua_run_path_same),
      cmocka_unit_test(test_cap_usage_run_across_blocks),
      cmocka_unit_test(test_live_silence_is_waiting_time),
      cmocka_unit_test(test_live_stopped_is_not_silence),
      cmocka_unit_test(test_live_next_cap_wait_bounded),
      cmocka_unit_test(test_reorder_forced_in_batches),
      cmocka_unit_test(test_live_wait_follows_block_gap),
      cmocka_unit_test(test_live_next_cap_waited),
      cmocka_unit_test(test_reorder_earlier_than_tail),
      cmocka_unit_test(test_cap_usage_other_per_capability),
      cmocka_unit_test(test_cap_usage_other_until_room),
      cmocka_unit_test(test_cap_usage_points_windows),
      cmocka_unit_test(test_cap_usage_default_fast_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
