/* test_web.c: the embedded Prometheus endpoint's naming and rendering
 * (src/web, docs/web.md). Expected names are written out by hand from the
 * OpenTelemetry Collector's Prometheus translation rules
 * (pkg/translator/prometheus, as tests/demo/otlp_prom_names.py states
 * them); rendered text is compared with hand-written exposition lines.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "telemetry/telemetry.h"
#include "web/web.h"
#include "web/web_internal.h"

/* {====== names ======} */

static void name_is(const char *name, const char *unit, bool sum, bool mono,
                    const char *want) {
  char buf[256];
  el_web_prom_name(name, unit, sum, mono, buf, sizeof buf);
  if (strcmp(buf, want)) {
    print_error("name(%s, %s, %d, %d) = %s, want %s\n", name,
                unit ? unit : "NULL", sum, mono, buf, want);
    fail();
  }
}

static void test_metric_names(void **state) {
  (void)state;
  name_is("ghc_eventlog_HeapSize", "By", false, false,
          "ghc_eventlog_HeapSize_bytes");
  name_is("ghc_eventlog_HeapAllocated", "By", true, true,
          "ghc_eventlog_HeapAllocated_bytes_total");
  name_is("ghc_eventlog_CapabilityUsageDuration", "ns", true, true,
          "ghc_eventlog_CapabilityUsageDuration_nanoseconds_total");
  name_is("ghc_eventlog_MemCurrent", "{mblock}", false, false,
          "ghc_eventlog_MemCurrent");
  name_is("http.server.duration", "s", false, false,
          "http_server_duration_seconds");
  name_is("requests", "{request}", true, true, "requests_total");
  name_is("cpu.utilization", "1", false, false, "cpu_utilization_ratio");
  name_is("cpu.utilization", "1", true, false, "cpu_utilization");
  name_is("throughput", "By/s", false, false, "throughput_bytes_per_second");
  name_is("speed", "m/s", false, false, "speed_meters_per_second");
  name_is("total_foo", NULL, true, true, "foo_total");
  name_is("foo_total", "", true, true, "foo_total");
  name_is("x_seconds", "s", false, false, "x_seconds");
  name_is("ratio_x", "1", false, false, "x_ratio");
  name_is("1abc", "", false, false, "_1abc");
  name_is("a..b::c", "ms", false, false, "a_b::c_milliseconds");
  name_is("mem", "MiBy", false, false, "mem_mebibytes");
  name_is("temp", "Cel", false, false, "temp_celsius");
  name_is("x", "foo", false, false, "x_foo");
  name_is("x", " s ", false, false, "x_seconds");
  name_is("", "", false, false, "");
  /* Truncation keeps a NUL-terminated prefix. */
  char small[8];
  size_t n = el_web_prom_name("abcdefghijkl", "By", false, false, small,
                              sizeof small);
  assert_int_equal(n, 7);
  assert_string_equal(small, "abcdefg");
}

static void label_is(const char *key, const char *want) {
  char buf[64];
  el_web_prom_label(key, buf, sizeof buf);
  assert_string_equal(buf, want);
}

static void test_label_names(void **state) {
  (void)state;
  label_is("service.name", "service_name");
  label_is("heapProfLabel", "heapProfLabel");
  label_is("1st", "key_1st");
  label_is("_x", "key_x");
  label_is("__x", "__x");
  label_is("a-b/c d", "a_b_c_d");
}

/* {====== rendering through a real store ======} */

typedef struct fix_s {
  el_tm_store_t *st;
  el_web_t *w;
} fix_t;

static fix_t *fix_new(bool view) {
  fix_t *f = calloc(1, sizeof *f);
  el_web_opts_t o;
  el_web_opts_init(&o);
  o.prom_port = 0;            /* not started: el_web_start is not called */
  if (view) o.web_port = 0;
  o.service_name = "svc";
  f->st = el_tm_store_new("scope", "1.2");
  assert_non_null(f->st);
  el_tm_exporter_t ex;
  assert_int_equal(el_web_new(&o, &f->w, &ex), 0);
  assert_int_equal(el_tm_store_add_exporter(f->st, &ex), 0);
  el_tm_attr_t svc = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {"svc", 3}};
  assert_int_equal(el_tm_store_set_resource(f->st, &svc), 0);
  return f;
}

static void fix_free(fix_t *f) {
  el_tm_store_free(f->st);
  el_web_free(f->w);
  free(f);
}

/* Render /metrics into a malloc'd... el_malloc'd string. */
static char *render(fix_t *f, bool om) {
  el_buf_t b = EL_BUF_INIT;
  web_model_prom(f->w, om, &b);
  assert_false(b.oom);
  return b.p ? b.p : el_strdup("");
}

/* The web view's /api/data JSON (web_model_json) as an el_malloc'd
 * string, the caller frees it. */
static char *model_json(fix_t *f) {
  el_buf_t b = EL_BUF_INIT;
  web_model_json(f->w, &b);
  assert_false(b.oom);
  return b.p ? b.p : el_strdup("");
}

static void point(fix_t *f, const el_tm_metric_desc_t *d,
                  const el_tm_attr_t *a, size_t n, el_unix_ns_t t,
                  int64_t v) {
  assert_int_equal(el_tm_metric_point(f->st, d,
                                      &(el_tm_point_t){.attrs = a,
                                                       .nattrs = n,
                                                       .time_unix_ns = t,
                                                       .is_int = true,
                                                       .ival = v}),
                   0);
}

#define SVC "job=\"svc\",otel_scope_name=\"scope\",otel_scope_version=\"1.2\"," \
            "service_name=\"svc\""

static void test_gauge_last_value_and_drops(void **state) {
  (void)state;
  fix_t *f = fix_new(false);
  el_tm_metric_desc_t d = {.name = "ghc_eventlog_HeapProfSample",
                           .description = "A heap\\profile\nsample.",
                           .unit = "By", .kind = EL_TM_GAUGE};
  el_tm_attr_t a[] = {
      {.key = "heapProfLabel", .type = EL_TM_STR, .v.s = {"THUNK", 5}},
      {.key = "heapProfSampleEra", .type = EL_TM_INT, .v.i = 1},
      {.key = "heapProfId", .type = EL_TM_INT, .v.i = 7},
      {.key = "evCap", .type = EL_TM_INT, .v.i = 0}};
  point(f, &d, a, 4, 1000, 10);
  a[1].v.i = 2;               /* next census: same series */
  point(f, &d, a, 4, 3000, 30);
  point(f, &d, a, 4, 2000, 20);   /* older: ignored */
  el_tm_store_flush(f->st);
  char *got = render(f, false);
  assert_string_equal(
      got,
      "# HELP ghc_eventlog_HeapProfSample_bytes A heap\\\\profile\\n"
      "sample.\n"
      "# TYPE ghc_eventlog_HeapProfSample_bytes gauge\n"
      "ghc_eventlog_HeapProfSample_bytes{heapProfLabel=\"THUNK\"," SVC "} 30\n");
  el_free(got);
  fix_free(f);
}

/* docs/web.md "Sessions": a session's series follow its corrected
 * resource (one series, points kept); a new session's points of the same
 * labels start a new series and the old one goes stale (not in /metrics). */
static void test_sessions_rekey_and_cut(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_metric_desc_t d = {.name = "alloc",
                           .unit = "By",
                           .kind = EL_TM_SUM,
                           .temporality = EL_TM_TEMP_CUMULATIVE,
                           .monotonic = true};
  el_tm_attr_t a[] = {{.key = "evCap", .type = EL_TM_INT, .v.i = 0}};
  assert_int_equal(el_tm_store_set_session(f->st, 1), 0);
  point(f, &d, a, 1, 1000000, 100);
  el_tm_store_flush(f->st);
  el_tm_attr_t pid = {.key = "process.pid", .type = EL_TM_INT, .v.i = 7};
  assert_int_equal(el_tm_store_set_resource(f->st, &pid), 0);
  point(f, &d, a, 1, 2000000, 300);
  el_tm_store_flush(f->st);
#define PID_LINE(v)                                                      \
  "alloc_bytes_total{evCap=\"0\",job=\"svc\",otel_scope_name=\"scope\"," \
  "otel_scope_version=\"1.2\",process_pid=\"7\",service_name=\"svc\"} " v "\n"
  char *got = render(f, false);
  assert_string_equal(got,
                      "# TYPE alloc_bytes_total counter\n" PID_LINE("300"));
  el_free(got);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"nseries\":1,"));
  assert_non_null(strstr(js, "\"rekeyed_series\":1,"));
  assert_non_null(strstr(js,
                         "\"session\":1,\"stale\":false,"
                         "\"points\":[[1,100],[2,300]]"));
  el_free(js);
  /* The next session of the same program (pid 7 again): a new series. */
  assert_int_equal(el_tm_store_set_session(f->st, 2), 0);
  point(f, &d, a, 1, 3000000, 50);
  el_tm_store_flush(f->st);
  got = render(f, false);
  assert_string_equal(got, "# TYPE alloc_bytes_total counter\n" PID_LINE("50"));
  el_free(got);
  js = model_json(f);
  assert_non_null(strstr(js, "\"nseries\":2,"));
  assert_non_null(strstr(js,
                         "\"session\":1,\"stale\":true,"
                         "\"points\":[[1,100],[2,300]]"));
  assert_non_null(
      strstr(js, "\"session\":2,\"stale\":false,\"points\":[[3,50]]"));
  el_free(js);
#undef PID_LINE
  fix_free(f);
}

static void test_counter_openmetrics_and_escaping(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_metric_desc_t d = {.name = "alloc", .unit = "By", .kind = EL_TM_SUM,
                           .temporality = EL_TM_TEMP_DELTA,
                           .monotonic = true};
  el_tm_attr_t a[] = {
      {.key = "evCap", .type = EL_TM_INT, .v.i = 1},
      {.key = "a.b", .type = EL_TM_STR, .v.s = {"x\"y\n\\\xff", 6}},
      {.key = "a_b", .type = EL_TM_BOOL, .v.b = true},
      {.key = "empty", .type = EL_TM_STR, .v.s = {"", 0}}};
  point(f, &d, a, 4, 1000, 5);
  point(f, &d, a, 4, 2000, 7);    /* delta: adds up */
  el_tm_metric_desc_t nm = {.name = "updown", .kind = EL_TM_SUM,
                            .temporality = EL_TM_TEMP_DELTA};
  point(f, &nm, NULL, 0, 1000, 3);   /* delta non-monotonic: dropped */
  el_tm_store_flush(f->st);
  char *got = render(f, false);
  assert_string_equal(
      got,
      "# TYPE alloc_bytes_total counter\n"
      "alloc_bytes_total{a_b=\"x\\\"y\\n\\\\\xEF\xBF\xBD;true\",evCap=\"1\","
      SVC "} 12\n");
  el_free(got);
  got = render(f, true);
  assert_string_equal(
      got,
      "# TYPE alloc_bytes counter\n"
      "alloc_bytes_total{a_b=\"x\\\"y\\n\\\\\xEF\xBF\xBD;true\",evCap=\"1\","
      SVC "} 12\n# EOF\n");
  el_free(got);
  /* The view keeps both points (cumulative values) and the attributes. */
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"points\":[[0.001,5],[0.002,12]]"));
  assert_non_null(strstr(js, "\"a.b\":\"x\\\"y\\n\\\\\xEF\xBF\xBD\""));
  assert_non_null(strstr(js, "\"service\":\"svc\""));
  el_free(js);
  fix_free(f);
}

static void test_logs_threads_spans(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_attr_t la[] = {
      {.key = "kind", .type = EL_TM_STR, .v.s = {"ThreadLabel", 11}},
      {.key = "thread", .type = EL_TM_INT, .v.i = 4}};
  el_tm_log_t l = {.time_unix_ns = 5000000, .body = {"worker", 6},
                   .attrs = la, .nattrs = 2};
  assert_int_equal(el_tm_log(f->st, &l), 0);
  el_tm_attr_t ma[] = {
      {.key = "kind", .type = EL_TM_STR, .v.s = {"UserMarker", 10}}};
  el_tm_log_t m = {.time_unix_ns = 6000000, .body = {"go\x01", 3},
                   .attrs = ma, .nattrs = 1};
  assert_int_equal(el_tm_log(f->st, &m), 0);
  el_tm_attr_t sa[] = {
      {.key = "thread", .type = EL_TM_INT, .v.i = 4},
      {.key = "capability", .type = EL_TM_INT, .v.i = 1},
      {.key = "status", .type = EL_TM_STR, .v.s = {"BlockedOnMVar", 13}}};
  el_tm_span_t s = {.name = "ghc_eventlog_ThreadState Blocked",
                    .kind = EL_TM_SPAN_INTERNAL, .start_unix_ns = 7000000,
                    .end_unix_ns = 8000000, .attrs = sa, .nattrs = 3};
  el_tm_random_id(s.trace_id, 16);
  el_tm_random_id(s.span_id, 8);
  assert_int_equal(el_tm_span(f->st, &s), 0);
  el_tm_span_t gc = {.name = "ghc_eventlog_CapabilityUsage GC",
                     .kind = EL_TM_SPAN_INTERNAL, .start_unix_ns = 9000000,
                     .end_unix_ns = 9500000};
  el_tm_random_id(gc.trace_id, 16);
  el_tm_random_id(gc.span_id, 8);
  assert_int_equal(el_tm_span(f->st, &gc), 0);
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"markers\":[[6,\"go\\u0001\"]]"));
  /* A Blocked span ends when the thread runs again (spec §5.3). */
  assert_non_null(strstr(js,
                         "\"threads\":[{\"id\":4,\"label\":\"worker\","
                         "\"state\":\"Running\",\"status\":null,"
                         "\"cap\":1,\"session\":0,\"t\":8,\"running_ms\":0}]"));
  assert_non_null(strstr(js, "\"gc_pauses\":[[9.5,0.5]]"));
  el_free(js);
  fix_free(f);
}

/* eventlog-live's own messages are kept apart from the program's log
 * records (docs/web.md "The web view"): a replayed recording of
 * 2024-03-01 00:00:00 UTC (1709251200000 ms) whose 600 user messages,
 * record k at + k ms, come after eventlog-live logged a warning at
 * 2026-09-21 (1790000000000 ms, its wall clock). By hand: "logs" keeps
 * the 500 newest of the recording (records 100..599, from
 * 1709251200100), nothing of eventlog-live; "internal_logs" keeps the
 * warning with its own time, as the OTLP record has it (not pushed out
 * by the 600, not re-dated). */
static void test_internal_logs_apart(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  const char *warn = "decoding: 3 bytes skipped";
  el_tm_log_t h = {.time_unix_ns = (el_unix_ns_t)1790000000000 * 1000000,
                   .observed_unix_ns = (el_unix_ns_t)1790000000000 * 1000000,
                   .severity_number = EL_TM_SEV_WARN,
                   .body = {warn, strlen(warn)},
                   .host_log = true};
  assert_int_equal(el_tm_log(f->st, &h), 0);
  el_tm_attr_t ua[] = {
      {.key = "kind", .type = EL_TM_STR, .v.s = {"UserMessage", 11}}};
  for (int k = 0; k < 600; k++) {
    char body[32];
    int n = snprintf(body, sizeof body, "record %d", k);
    el_tm_log_t l = {
        .time_unix_ns =
            ((el_unix_ns_t)1709251200000 + (el_unix_ns_t)k) * 1000000,
        .severity_number = EL_TM_SEV_INFO,
        .body = {body, (size_t)n},
        .attrs = ua,
        .nattrs = 1};
    assert_int_equal(el_tm_log(f->st, &l), 0);
  }
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(strstr(js,
                         "\"logs\":[{\"t\":1709251200100,\"kind\":"
                         "\"UserMessage\",\"body\":\"record 100\","));
  assert_non_null(strstr(js,
                         "{\"t\":1709251200599,\"kind\":\"UserMessage\","
                         "\"body\":\"record 599\",\"severity\":9,"
                         "\"thread\":-1}],\"internal_logs\":"
                         "[{\"t\":1790000000000,\"kind\":\"internal\","
                         "\"body\":\"decoding: 3 bytes skipped\","
                         "\"severity\":13,\"thread\":-1}],\"markers\":[]"));
  const char *logs = strstr(js, "\"logs\":[");
  const char *end = strstr(js, "\"internal_logs\":");
  assert_true(logs && end && logs < end);
  size_t nrec = 0;
  for (const char *p = logs; (p = strstr(p, "{\"t\":")) && p < end; p++) nrec++;
  assert_int_equal(nrec, 500);
  el_free(js);
  fix_free(f);
}

/* Many threads (the table grows and rehashes): one row per id. */
static void test_many_threads(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  for (int round = 0; round < 2; round++) {
    for (int64_t id = 0; id < 300; id++) {
      char body[32];
      int n = snprintf(body, sizeof body, "t%lld-%d", (long long)id, round);
      el_tm_attr_t la[] = {
          {.key = "kind", .type = EL_TM_STR, .v.s = {"ThreadLabel", 11}},
          {.key = "thread", .type = EL_TM_INT, .v.i = id * 7919}};
      el_tm_log_t l = {.time_unix_ns = 1, .body = {body, (size_t)n},
                       .attrs = la, .nattrs = 2};
      assert_int_equal(el_tm_log(f->st, &l), 0);
    }
  }
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 300);
  char *js = model_json(f);
  assert_non_null(strstr(js, "{\"id\":1187850,\"label\":\"t150-1\""));
  el_free(js);
  fix_free(f);
}

static void span(fix_t *f, const char *name, el_unix_ns_t a, el_unix_ns_t b,
                 const el_tm_attr_t *at, size_t n) {
  el_tm_span_t s = {.name = name,
                    .kind = EL_TM_SPAN_INTERNAL,
                    .start_unix_ns = a,
                    .end_unix_ns = b,
                    .attrs = at,
                    .nattrs = n};
  el_tm_random_id(s.trace_id, 16);
  el_tm_random_id(s.span_id, 8);
  assert_int_equal(el_tm_span(f->st, &s), 0);
}

/* Capability usage from spans: each span credited to the 50 ms bins it
 * overlaps. By hand: Mutator on cap 0 over [10, 135] ms covers bins
 * [10, 60), [60, 110), [110, 160) for 50, 50 and 25 ms; GC on cap 1 over
 * [20, 30] ms adds 10 ms of GC to the first. */
static void test_usage_bins(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_attr_t c0[] = {{.key = "capability", .type = EL_TM_INT, .v.i = 0},
                       {.key = "user", .type = EL_TM_STR, .v.s = {"7", 1}}};
  el_tm_attr_t c1[] = {{.key = "capability", .type = EL_TM_INT, .v.i = 1},
                       {.key = "user", .type = EL_TM_STR, .v.s = {"GC", 2}}};
  span(f, "ghc_eventlog_CapabilityUsage Mutator", 10000000, 135000000, c0, 2);
  span(f, "ghc_eventlog_CapabilityUsage GC", 20000000, 30000000, c1, 2);
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(strstr(js,
                         "\"cap_usage\":{\"caps\":2,\"bin_ms\":50,"
                         "\"lo\":10,\"hi\":135,\"clipped\":0,"
                         "\"bins\":[[10,10,50],[60,0,50],[110,0,25]]}"));
  assert_non_null(strstr(js, "\"gc_pauses\":[[30,10]]"));
  el_free(js);
  fix_free(f);
}

/* Thread states left by thread_state spans (spec §5.3: a Running span
 * ends with a stop, a Blocked span when the thread runs again). */
static void test_thread_states(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_attr_t fin[] = {
      {.key = "thread", .type = EL_TM_STR, .v.s = {"1", 1}},
      {.key = "capability", .type = EL_TM_INT, .v.i = 0},
      {.key = "status", .type = EL_TM_STR, .v.s = {"ThreadFinished", 14}}};
  el_tm_attr_t blk[] = {
      {.key = "thread", .type = EL_TM_STR, .v.s = {"2", 1}},
      {.key = "capability", .type = EL_TM_INT, .v.i = 1},
      {.key = "status", .type = EL_TM_STR, .v.s = {"BlockedOnMVar", 13}}};
  span(f, "x ThreadState Running", 1000000, 3000000, fin, 3);
  span(f, "x ThreadState Running", 1000000, 2000000, blk, 3);
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(
      strstr(js,
             "{\"id\":1,\"label\":null,\"state\":\"Finished\","
             "\"status\":\"ThreadFinished\",\"cap\":0,\"session\":0,\"t\":3,"
             "\"running_ms\":2}"));
  assert_non_null(
      strstr(js,
             "{\"id\":2,\"label\":null,\"state\":\"Blocked\","
             "\"status\":\"BlockedOnMVar\",\"cap\":1,\"session\":0,\"t\":2,"
             "\"running_ms\":1}"));
  el_free(js);
  fix_free(f);
}

/* The end of input ends the threads not finished (docs/web.md
 * "Sessions"): by hand, thread 1 runs [1, 3] ms and finishes, thread 2
 * runs [1, 2] ms and stops BlockedOnMVar, thread 3 is blocked [1, 4] ms
 * and runs again. Before the end: Finished, Blocked, Running. After
 * el_web_set_ended: thread 1 stays Finished; 2 and 3 are Ended as of the
 * newest span's end (4 ms), with the state they were left in. */
static void test_threads_end_with_input(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_attr_t fin[] = {
      {.key = "thread", .type = EL_TM_INT, .v.i = 1},
      {.key = "capability", .type = EL_TM_INT, .v.i = 0},
      {.key = "status", .type = EL_TM_STR, .v.s = {"ThreadFinished", 14}}};
  el_tm_attr_t blk[] = {
      {.key = "thread", .type = EL_TM_INT, .v.i = 2},
      {.key = "capability", .type = EL_TM_INT, .v.i = 1},
      {.key = "status", .type = EL_TM_STR, .v.s = {"BlockedOnMVar", 13}}};
  el_tm_attr_t run[] = {{.key = "thread", .type = EL_TM_INT, .v.i = 3},
                        {.key = "capability", .type = EL_TM_INT, .v.i = 0}};
  span(f, "x ThreadState Running", 1000000, 3000000, fin, 3);
  span(f, "x ThreadState Running", 1000000, 2000000, blk, 3);
  span(f, "x ThreadState Blocked", 1000000, 4000000, run, 2);
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"id\":3,\"label\":null,\"state\":\"Running\""));
  el_free(js);
  el_web_set_ended(f->w, true);
  js = model_json(f);
  assert_non_null(
      strstr(js,
             "{\"id\":1,\"label\":null,\"state\":\"Finished\","
             "\"status\":\"ThreadFinished\",\"cap\":0,\"session\":0,\"t\":3,"
             "\"running_ms\":2}"));
  assert_non_null(strstr(js,
                         "{\"id\":2,\"label\":null,\"state\":\"Ended\","
                         "\"status\":\"input ended (was Blocked: "
                         "BlockedOnMVar)\",\"cap\":1,\"session\":0,"
                         "\"t\":4,\"running_ms\":1}"));
  assert_non_null(strstr(js,
                         "{\"id\":3,\"label\":null,\"state\":\"Ended\","
                         "\"status\":\"input ended (was Running)\","
                         "\"cap\":0,\"session\":0,\"t\":4,"
                         "\"running_ms\":0}"));
  assert_null(strstr(js, "\"Running\""));
  assert_null(strstr(js, "\"Blocked\""));
  /* three thread-state spans came: the other row's running time is known */
  assert_non_null(strstr(js, "\"running_ms\":0},\"thread_spans\":3"));
  el_free(js);
  fix_free(f);
}

/* A ThreadState span of thread id over [a_ms, b_ms] (Unix ms): Running
 * (ending with status st) or Blocked (st NULL: the thread runs again). */
static void thread_state(fix_t *f, int64_t id, int64_t a_ms, int64_t b_ms,
                         const char *st) {
  el_tm_attr_t sa[] = {
      {.key = "thread", .type = EL_TM_INT, .v.i = id},
      {.key = "capability", .type = EL_TM_INT, .v.i = 0},
      {.key = "status", .type = EL_TM_STR, .v.s = {st, st ? strlen(st) : 0}}};
  span(f, st ? "x ThreadState Running" : "x ThreadState Blocked",
       (el_unix_ns_t)a_ms * 1000000, (el_unix_ns_t)b_ms * 1000000, sa,
       st ? 3 : 2);
}

/* A thread preempted or moving (its stop says HeapOverflow,
 * StackOverflow, ThreadYielding or ThreadMigrating) waits on a run queue:
 * Runnable, not Blocked (docs/web.md "threads"); a stop for something it
 * waits for (ForeignCall, BlockedOnMVar) leaves it Blocked. Threads 1-6
 * each run [1, 2] ms and stop with one of these statuses in turn; at the
 * end of input the Runnable ones end "(was Runnable: <status>)". */
static void test_thread_runnable(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  static const char *const st[] = {"HeapOverflow",   "StackOverflow",
                                   "ThreadYielding", "ThreadMigrating",
                                   "ForeignCall",    "BlockedOnMVar"};
  for (int i = 0; i < 6; i++) thread_state(f, i + 1, 1, 2, st[i]);
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  char want[256];
  for (int i = 0; i < 6; i++) {
    snprintf(want, sizeof want,
             "{\"id\":%d,\"label\":null,\"state\":\"%s\",\"status\":\"%s\"",
             i + 1, i < 4 ? "Runnable" : "Blocked", st[i]);
    assert_non_null(strstr(js, want));
  }
  el_free(js);
  el_web_set_ended(f->w, true);
  js = model_json(f);
  assert_non_null(strstr(js,
                         "\"status\":\"input ended (was Runnable: "
                         "ThreadYielding)\""));
  assert_null(strstr(js, "\"Runnable\""));
  el_free(js);
  fix_free(f);
}

/* A closed connection the daemon waits to see reopened ends the threads
 * of its session (docs/web.md "Sessions"). By hand, session 1: thread 1
 * runs [1, 3] ms and finishes, thread 2 runs [1, 2] ms and stops
 * BlockedOnMVar, thread 3 is blocked [1, 4] ms and runs again. Once
 * el_web_set_reconnecting says "connection closed": "reconnecting" true,
 * thread 1 stays Finished, 2 and 3 are Ended as of the newest span (4
 * ms) with the state they were left in; a late span of session 1 (thread
 * 4 blocked [4, 5] ms) leaves its row Ended too (t 5). Session 2 (after
 * el_web_set_reconnecting(NULL)): thread 2 runs [10, 11] ms and blocks:
 * a new row, Blocked, "reconnecting" false, session 1's rows unchanged.
 * The end of input then ends session 2's row as "input ended". */
static void test_threads_end_with_connection(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  assert_int_equal(el_tm_store_set_session(f->st, 1), 0);
  thread_state(f, 1, 1, 3, "ThreadFinished");
  thread_state(f, 2, 1, 2, "BlockedOnMVar");
  thread_state(f, 3, 1, 4, NULL);
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"ended\":false,\"reconnecting\":false,"));
  assert_non_null(strstr(js, "\"id\":3,\"label\":null,\"state\":\"Running\""));
  el_free(js);
  el_web_set_reconnecting(f->w, "connection closed");
  thread_state(f, 4, 4, 5, NULL); /* late, of session 1 */
  el_tm_store_flush(f->st);
  js = model_json(f);
  assert_non_null(strstr(js, "\"ended\":false,\"reconnecting\":true,"));
  assert_non_null(strstr(js,
                         "{\"id\":1,\"label\":null,\"state\":"
                         "\"Finished\",\"status\":\"ThreadFinished\","
                         "\"cap\":0,\"session\":1,\"t\":3,"));
  assert_non_null(strstr(js,
                         "{\"id\":2,\"label\":null,\"state\":\"Ended\","
                         "\"status\":\"connection closed (was Blocked: "
                         "BlockedOnMVar)\",\"cap\":0,\"session\":1,"
                         "\"t\":4,"));
  assert_non_null(strstr(js,
                         "{\"id\":3,\"label\":null,\"state\":\"Ended\","
                         "\"status\":\"connection closed (was "
                         "Running)\",\"cap\":0,\"session\":1,\"t\":4,"));
  assert_non_null(strstr(js,
                         "{\"id\":4,\"label\":null,\"state\":\"Ended\","
                         "\"status\":\"connection closed (was "
                         "Running)\",\"cap\":0,\"session\":1,\"t\":5,"));
  assert_null(strstr(js, "\"Running\""));
  assert_null(strstr(js, "\"Blocked\""));
  el_free(js);
  el_web_set_reconnecting(f->w, NULL);
  assert_int_equal(el_tm_store_set_session(f->st, 2), 0);
  thread_state(f, 2, 10, 11, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  js = model_json(f);
  assert_non_null(strstr(js, "\"ended\":false,\"reconnecting\":false,"));
  assert_non_null(strstr(js,
                         "{\"id\":2,\"label\":null,\"state\":\"Blocked\","
                         "\"status\":\"BlockedOnMVar\",\"cap\":0,"
                         "\"session\":2,\"t\":11,"));
  assert_non_null(strstr(js,
                         "\"status\":\"connection closed (was Blocked: "
                         "BlockedOnMVar)\",\"cap\":0,\"session\":1,"));
  assert_null(strstr(js, "session 1 ended"));
  el_free(js);
  el_web_set_ended(f->w, true);
  js = model_json(f);
  assert_non_null(strstr(js, "\"ended\":true,\"reconnecting\":false,"));
  assert_non_null(strstr(js,
                         "{\"id\":2,\"label\":null,\"state\":\"Ended\","
                         "\"status\":\"input ended (was Blocked: "
                         "BlockedOnMVar)\",\"cap\":0,\"session\":2,"));
  assert_non_null(strstr(js,
                         "\"status\":\"connection closed (was "
                         "Running)\",\"cap\":0,\"session\":1,\"t\":5,"));
  el_free(js);
  fix_free(f);
}

/* A ThreadLabel log for thread id. */
static void thread_label_log(fix_t *f, int64_t id, const char *label) {
  el_tm_attr_t la[] = {
      {.key = "kind", .type = EL_TM_STR, .v.s = {"ThreadLabel", 11}},
      {.key = "thread", .type = EL_TM_INT, .v.i = id}};
  el_tm_log_t l = {.time_unix_ns = 1,
                   .body = {label, strlen(label)},
                   .attrs = la,
                   .nattrs = 2};
  assert_int_equal(el_tm_log(f->st, &l), 0);
}

/* A Running span of thread id over [a_us, b_us] (Unix us) ending with
 * status st ("ThreadFinished": the thread is over). */
static void thread_run(fix_t *f, int64_t id, int64_t a_us, int64_t b_us,
                       const char *st) {
  el_tm_attr_t sa[] = {
      {.key = "thread", .type = EL_TM_INT, .v.i = id},
      {.key = "capability", .type = EL_TM_INT, .v.i = 0},
      {.key = "status", .type = EL_TM_STR, .v.s = {st, strlen(st)}}};
  span(f, "x ThreadState Running", (el_unix_ns_t)a_us * 1000,
       (el_unix_ns_t)b_us * 1000, sa, 3);
}

static const web_thread_t *row_of(const fix_t *f, int64_t id) {
  for (size_t k = 0; k < f->w->nthreads; k++)
    if (f->w->threads[k].id == id) return &f->w->threads[k];
  return NULL;
}

/* With the traces processor thread_state off only ThreadLabel logs come
 * (h55): their rows know a label and nothing else. By hand: threads 4
 * ("worker") and 5 ("main") labelled, no span: state, t and running_ms
 * null, "thread_spans" 0, the other row's running_ms null; once the input
 * ended, the same with status "input ended" (not "Ended", "input ended
 * (was unknown)" and a running time of 0, as the old daemon said). */
static void test_threads_labels_only(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  thread_label_log(f, 4, "worker");
  thread_label_log(f, 5, "main");
  el_tm_store_flush(f->st);
  char *js = model_json(f);
  assert_non_null(strstr(js,
                         "{\"id\":4,\"label\":\"worker\",\"state\":null,"
                         "\"status\":null,\"cap\":-1,\"session\":0,"
                         "\"t\":null,\"running_ms\":null}"));
  assert_non_null(strstr(js, "\"running_ms\":null},\"thread_spans\":0"));
  el_free(js);
  el_web_set_ended(f->w, true);
  js = model_json(f);
  assert_non_null(strstr(js,
                         "{\"id\":4,\"label\":\"worker\",\"state\":null,"
                         "\"status\":\"input ended\",\"cap\":-1,"
                         "\"session\":0,\"t\":null,\"running_ms\":null}"));
  assert_non_null(strstr(js,
                         "{\"id\":5,\"label\":\"main\",\"state\":null,"
                         "\"status\":\"input ended\",\"cap\":-1,"
                         "\"session\":0,\"t\":null,\"running_ms\":null}"));
  assert_null(strstr(js, "Ended"));
  assert_null(strstr(js, "was unknown"));
  el_free(js);
  fix_free(f);
}

/* A full table keeps the long-lived threads (docs/web.md "Limits"): by
 * hand, 2 labelled threads that ran 1 ms and block (main, IOManager),
 * then 800 labelled short threads (ids 100..899) that run 5 ms each and
 * block, then run again and finish. The table (500 rows) is cut several
 * times; main and IOManager stay, every short thread that comes back
 * keeps its label, and rows + "other" count the 802 threads once, the
 * 800 finished ones once. */
static void test_threads_table_keeps_long_lived(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  thread_label_log(f, 1, "main");
  thread_label_log(f, 2, "IOManager");
  el_tm_store_flush(f->st);
  thread_run(f, 1, 1000, 2000, "BlockedOnMVar");
  thread_run(f, 2, 1000, 2000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  for (int64_t id = 100; id < 900; id++) thread_label_log(f, id, "spark");
  el_tm_store_flush(f->st);
  for (int64_t id = 100; id < 900; id++)
    thread_run(f, id, 10000 + id, 15000 + id, "BlockedOnBlackHole");
  el_tm_store_flush(f->st);
  for (int64_t id = 100; id < 900; id++)
    thread_run(f, id, 20000 + id, 21000 + id, "ThreadFinished");
  el_tm_store_flush(f->st);
  const web_thread_t *t = row_of(f, 1);
  assert_non_null(t);
  assert_string_equal(t->label, "main");
  assert_string_equal(t->state, "Blocked");
  t = row_of(f, 2);
  assert_non_null(t);
  assert_string_equal(t->label, "IOManager");
  size_t finished = 0;
  for (size_t k = 0; k < f->w->nthreads; k++) {
    t = &f->w->threads[k];
    if (t->id < 100) continue;
    assert_non_null(t->label);
    assert_string_equal(t->label, "spark");
    assert_string_equal(t->state, "Finished");
    finished++;
  }
  assert_true(f->w->nthreads <= WEB_THREADS_MAX);
  assert_int_equal(f->w->nthreads + f->w->thother.threads, 802);
  assert_int_equal(finished + f->w->thother.finished, 800);
  assert_int_equal(f->w->thother.late_labels, 0);
  assert_int_equal(f->w->thother.dropped_labels, 0);
  fix_free(f);
}

/* Thread ids above 2^22 (issue: a returning one was counted twice) up
 * to the largest 32-bit id: the scenario above with main, IOManager and
 * the 800 short threads at base + 1, base + 2 and base + 100..899. Rows
 * plus "other" count the 802 threads once, the 800 finished ones once.
 * Then main runs 40 s later: the finished threads age out, so "other"
 * holds exactly the 800 finished ones, and every id is known to have
 * left finished (a late label is counted, not made a row). */
static void threads_high_ids(int64_t base) {
  fix_t *f = fix_new(true);
  thread_label_log(f, base + 1, "main");
  thread_label_log(f, base + 2, "IOManager");
  el_tm_store_flush(f->st);
  thread_run(f, base + 1, 1000, 2000, "BlockedOnMVar");
  thread_run(f, base + 2, 1000, 2000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  for (int64_t k = 100; k < 900; k++) thread_label_log(f, base + k, "spark");
  for (int64_t k = 100; k < 900; k++)
    thread_run(f, base + k, 10000 + k, 15000 + k, "BlockedOnBlackHole");
  el_tm_store_flush(f->st);
  assert_true(f->w->thother.threads > 0); /* some left alive */
  for (int64_t k = 100; k < 900; k++)
    thread_run(f, base + k, 20000 + k, 21000 + k, "ThreadFinished");
  el_tm_store_flush(f->st);
  size_t finished = 0;
  for (size_t k = 0; k < f->w->nthreads; k++) {
    const web_thread_t *t = &f->w->threads[k];
    if (t->id < base + 100) continue;
    assert_string_equal(t->label, "spark");
    assert_string_equal(t->state, "Finished");
    finished++;
  }
  assert_non_null(row_of(f, base + 1));
  assert_non_null(row_of(f, base + 2));
  assert_int_equal(f->w->nthreads + f->w->thother.threads, 802);
  assert_int_equal(finished + f->w->thother.finished, 800);
  thread_run(f, base + 1, 60000000, 60001000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 2);
  assert_int_equal(f->w->thother.threads, 800);
  assert_int_equal(f->w->thother.finished, 800);
  thread_label_log(f, base + 500, "late");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->thother.late_labels, 1);
  assert_null(row_of(f, base + 500));
  assert_int_equal(f->w->thother.unremembered, 0);
  fix_free(f);
}

static void test_threads_high_ids(void **state) {
  (void)state;
  threads_high_ids((1 << 22) + 100);
  threads_high_ids(((int64_t)1 << 31) - 450); /* across 2^31 */
  threads_high_ids(0xFFFFFFFFll - 899);       /* up to 2^32 - 1 */
}

/* The memory of the ids that left is bounded (WEB_THREAD_ID_PAGES pages
 * of 65536 ids) and says what it could not keep. By hand: 600 threads,
 * each in a page of its own (ids (k + 1) * 65536 + 7), run once and
 * block, each starting later than the one before. The 501st finds the
 * table full (500): the youngest quarter, 125 threads (k = 375..499),
 * leaves, youngest first, and the other 100 come: 475 rows. The first 64
 * to leave (k = 499..436) take the 64 pages; the other 61 are not
 * remembered. Then k = 499 (remembered) and k = 375 (not) come back:
 * 477 rows, and only 499 leaves the "other" sum (125 - 1 = 124), so the
 * rows and "other" count 601 threads for 600, one above, within the 61
 * said. k = 499's page is free again. */
static void test_thread_ids_bounded(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  assert_int_equal(WEB_THREAD_ID_PAGES, 64);
  assert_int_equal(WEB_THREAD_ID_PAGE, 65536);
  for (int64_t k = 0; k < 600; k++)
    thread_run(f, (k + 1) * 65536 + 7, 1000 + 10 * k, 1001 + 10 * k,
               "BlockedOnMVar");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 475);
  assert_int_equal(f->w->thother.threads, 125);
  assert_int_equal(f->w->thother.unremembered, 61);
  assert_int_equal(web_thids_pages(&f->w->thids), 64);
  assert_null(row_of(f, 500 * 65536 + 7));
  assert_null(row_of(f, 376 * 65536 + 7));
  thread_run(f, 500 * 65536 + 7, 20000, 20001, "BlockedOnMVar");
  thread_run(f, 376 * 65536 + 7, 20000, 20001, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 477);
  assert_int_equal(f->w->thother.threads, 124);
  assert_int_equal(web_thids_pages(&f->w->thids), 63);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"unremembered\":61,"));
  el_free(js);
  fix_free(f);
}

/* A page whose ids all left finished holds no bits: by hand, the 131072
 * threads of ids 2 * 65536 .. 4 * 65536 - 1 (two whole pages) run and
 * finish, and age out when thread 1 runs 40 s later: "other" counts them
 * all, finished, and no page of the pool is in use. One of them coming
 * back (a late span) leaves the sums, its page taking bits again. */
static void test_thread_ids_full_pages(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  const int64_t lo = 2 * 65536, hi = 4 * 65536;
  for (int64_t id = lo; id < hi; id++) {
    thread_run(f, id, 1000, 2000, "ThreadFinished");
    if (id % 4096 == 0) el_tm_store_flush(f->st);
  }
  thread_run(f, 1, 50000000, 50001000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 1);
  assert_int_equal(f->w->thother.threads, 131072);
  assert_int_equal(f->w->thother.finished, 131072);
  assert_int_equal(web_thids_pages(&f->w->thids), 0);
  assert_int_equal(web_thids_get(&f->w->thids, lo + 12345),
                   WEB_TH_OUT_FINISHED);
  thread_run(f, lo + 12345, 50002000, 50003000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 2);
  assert_int_equal(f->w->thother.threads, 131071);
  assert_int_equal(f->w->thother.finished, 131071);
  assert_int_equal(web_thids_pages(&f->w->thids), 1);
  assert_int_equal(f->w->thother.unremembered, 0);
  fix_free(f);
}

/* The labels kept apart from the rows are bounded: with a span seen
 * (labels then wait for their thread's row), 5000 labels keep
 * WEB_THREAD_LABELS and drop the rest (by hand 5000 - 4096 = 904,
 * counted). A finished thread's label goes with its row: once all 4096
 * kept threads have finished and aged out (30 s), 4096 new labels are
 * all kept, and each is found by its row (the deletions left the store
 * consistent). */
static void test_thread_labels_bounded(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  thread_run(f, 1, 1000, 2000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  for (int64_t id = 10; id < 5010; id++) thread_label_log(f, id, "a");
  el_tm_store_flush(f->st);
  assert_int_equal(WEB_THREAD_LABELS, 4096);
  assert_int_equal(f->w->thother.dropped_labels, 904);
  for (int64_t id = 10; id < 10 + 4096; id++)
    thread_run(f, id, 3000, 4000, "ThreadFinished");
  thread_run(f, 1, 40000000, 40001000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->nthreads, 1);
  assert_int_equal(f->w->nthlab, 0);
  assert_int_equal(f->w->thother.threads, 4096);
  char label[16];
  for (int64_t id = 10000; id < 10000 + 4096; id++) {
    snprintf(label, sizeof label, "b%lld", (long long)id);
    thread_label_log(f, id, label);
  }
  el_tm_store_flush(f->st);
  assert_int_equal(f->w->thother.dropped_labels, 904);
  for (int64_t id = 10000; id < 10000 + 400; id++)
    thread_run(f, id * 7 % 4096 + 10000, 40002000, 40003000, "BlockedOnMVar");
  el_tm_store_flush(f->st);
  for (size_t k = 0; k < f->w->nthreads; k++) {
    const web_thread_t *t = &f->w->threads[k];
    if (t->id == 1) continue;
    snprintf(label, sizeof label, "b%lld", (long long)t->id);
    assert_non_null(t->label);
    assert_string_equal(t->label, label);
  }
  assert_int_equal(f->w->nthreads, 401);
  fix_free(f);
}

/* A fixture whose web view keeps every HeapSize value (aggregate_ms 0,
 * as watch sets it), and that gauge's description in *d. */
static fix_t *heap_size_fix(el_tm_metric_desc_t *d) {
  fix_t *f = fix_new(true);
  f->w->opts.aggs[0].name = "ghc_eventlog_HeapSize";
  f->w->opts.aggs[0].aggregate_ms = 0;
  f->w->opts.naggs = 1;
  *d = (el_tm_metric_desc_t){
      .name = "ghc_eventlog_HeapSize", .unit = "By", .kind = EL_TM_GAUGE};
  return f;
}

/* The fixture's first series, checked thinned, within its ring's bound
 * and in time order. */
static const web_series_t *thinned_series(fix_t *f) {
  const web_series_t *s = f->w->fam[0]->s[0];
  assert_true(s->npts <= WEB_POINTS_PER_SERIES);
  assert_true(s->thinned > 0);
  for (size_t j = 1; j < s->npts; j++)
    assert_true(s->pts[(s->head + j) % s->cap].t_ms >=
                s->pts[(s->head + j - 1) % s->cap].t_ms);
  return s;
}

/* A gauge keeps its peaks for the page (docs/web.md "Limits"): by hand,
 * 5000 points at t = 1..5000 ms of value t % 100, but 1000000 at
 * t = 1234, then one late point (another capability's block) at
 * t = 2500 ms + 1 ns of 2000000. The ring (2000 points) is thinned
 * into time buckets, each keeping its largest point, instead of dropping
 * the oldest, and the late point goes in at its time (into its bucket):
 * both peaks are kept, at their times, the
 * points stay in time order and end at t = 5000. /metrics keeps the
 * newest value (5000 % 100 = 0), the late one ignored as the collector
 * does. /api/data says the window of the metric's processor. */
static void test_gauge_keeps_peaks(void **state) {
  (void)state;
  el_tm_metric_desc_t d;
  fix_t *f = heap_size_fix(&d);
  for (int64_t t = 1; t <= 5000; t++) {
    point(f, &d, NULL, 0, (el_unix_ns_t)t * 1000000,
          t == 1234 ? 1000000 : t % 100);
    if (t % 500 == 0) el_tm_store_flush(f->st);
  }
  point(f, &d, NULL, 0, 2500000001, 2000000);
  el_tm_store_flush(f->st);
  const web_series_t *s = thinned_series(f);
  bool peak1 = false, peak2 = false;
  for (size_t j = 0; j < s->npts; j++) {
    const web_point_t *pt = &s->pts[(s->head + j) % s->cap];
    peak1 |= pt->t_ms == 1234 && pt->v == 1000000;
    peak2 |= pt->t_ms == 2500.000001 && pt->v == 2000000;
  }
  assert_true(peak1);
  assert_true(peak2);
  assert_true(s->pts[(s->head + s->npts - 1) % s->cap].t_ms == 5000);
  char *got = render(f, false);
  assert_non_null(strstr(got, "ghc_eventlog_HeapSize_bytes{" SVC "} 0\n"));
  el_free(got);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"nseries\":1,\"aggregate_ms\":0,"));
  el_free(js);
  fix_free(f);
}

/* A gauge's history covers the whole run (docs/web.md "Limits"; h39 saw
 * a 27 s run's heap chart keep only its last 2.7 s). By hand: 200,000
 * points, one a millisecond, as GHC 9.0 delivers them from two
 * capabilities: per 2000 ms block, capability A's even milliseconds in
 * order, then B's odd ones (all late but the block's last). Every value
 * is 4 but the first 1000 points' (1 + t % 3: the heap growing at the
 * start of the run, so a bucket's largest is not its first point) and one
 * late peak of 9 at t = 123457. However the ring is thinned, it holds at
 * most 2000 points in time order, begins with the run's first point
 * (t = 0, value 1; h42 saw a growing heap's chart begin 20 ms late), has
 * a point in every 2 s of the run, keeps the peak at its time and ends
 * with the newest. */
static void test_gauge_covers_run(void **state) {
  (void)state;
  el_tm_metric_desc_t d;
  fix_t *f = heap_size_fix(&d);
  for (int64_t b = 0; b < 100; b++) {
    for (int64_t odd = 0; odd <= 1; odd++) {
      for (int64_t i = 0; i < 1000; i++) {
        int64_t t = b * 2000 + 2 * i + odd;
        point(f, &d, NULL, 0, (el_unix_ns_t)t * 1000000 + 1,
              t == 123457 ? 9
              : t < 1000  ? 1 + t % 3
                          : 4);
      }
      el_tm_store_flush(f->st);
    }
  }
  const web_series_t *s = thinned_series(f);
  bool covered[100] = {false}, peak = false;
  for (size_t j = 0; j < s->npts; j++) {
    const web_point_t *pt = &s->pts[(s->head + j) % s->cap];
    assert_true(pt->t_ms >= 0 && pt->t_ms < 200000);
    covered[(int)(pt->t_ms / 2000)] = true;
    peak |= pt->t_ms == 123457.000001 && pt->v == 9;
    assert_true(pt->v == 9 ||
                (pt->t_ms < 1000 ? pt->v >= 1 && pt->v <= 3 : pt->v == 4));
  }
  const web_point_t *first = &s->pts[s->head % s->cap];
  assert_true(first->t_ms == 0.000001 && first->v == 1);
  for (int k = 0; k < 100; k++) assert_true(covered[k]);
  assert_true(peak);
  assert_true(s->pts[(s->head + s->npts - 1) % s->cap].t_ms == 199999.000001);
  fix_free(f);
}

/* A metric with 2100 series (one per user): the store forgets the least
 * recently updated eighth when it reaches 2000 (series 1..250, counted),
 * and /api/data sends the 50 largest (2051..2100) plus one "other" series
 * holding the sum of the rest, by hand sum(251..2050) = 2070900. */
static void test_series_bounded(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_metric_desc_t d = {.name = "g", .unit = "By", .kind = EL_TM_GAUGE};
  for (int64_t k = 1; k <= 2100; k++) {
    char u[16];
    int n = snprintf(u, sizeof u, "%lld", (long long)k);
    el_tm_attr_t a[] = {
        {.key = "cap", .type = EL_TM_INT, .v.i = 0},
        {.key = "user", .type = EL_TM_STR, .v.s = {u, (size_t)n}}};
    point(f, &d, a, 2, 1000, k);
    el_tm_store_flush(f->st);
  }
  assert_int_equal(f->w->fam[0]->n, 1850);
  assert_int_equal(f->w->evicted_series, 250);
  char *js = model_json(f);
  assert_non_null(strstr(js, "\"nseries\":1850,"));
  assert_non_null(strstr(js,
                         "{\"attrs\":{\"cap\":\"0\",\"user\":\"2100\"},"
                         "\"session\":0,\"stale\":false,"
                         "\"points\":[[0.001,2100]]}"));
  assert_null(strstr(js, "\"user\":\"2050\""));
  assert_non_null(strstr(js,
                         "{\"attrs\":{\"cap\":\"0\",\"other\":1800},"
                         "\"session\":0,\"stale\":false,"
                         "\"points\":[[0.001,2070900]]}]"));
  el_free(js);
  fix_free(f);
}

/* One series per user, of session sess, users lo..hi, each flushed alone
 * (so each is touched at its own tick). */
static void users(fix_t *f, const el_tm_metric_desc_t *d, uint64_t sess, int lo,
                  int hi) {
  assert_int_equal(el_tm_store_set_session(f->st, sess), 0);
  for (int k = lo; k <= hi; k++) {
    char u[16];
    int n = snprintf(u, sizeof u, "%d", k);
    el_tm_attr_t a[] = {
        {.key = "user", .type = EL_TM_STR, .v.s = {u, (size_t)n}}};
    point(f, d, a, 1, (el_unix_ns_t)sess * 1000000, k);
    el_tm_store_flush(f->st);
  }
}

/* docs/web.md "/api/data": a full metric's evictions are counted apart
 * from the stale ones among them. Session 1 stores users 1..1100; session
 * 2 users 101..1000 (2000 series: session 1's 101..1000 stale); session
 * 2's user 2001 makes the metric forget its least recently updated eighth,
 * 250 series: session 1's users 1..250, of which 101..250 (150) stale. */
static void test_series_evicted_stale(void **state) {
  (void)state;
  fix_t *f = fix_new(true);
  el_tm_metric_desc_t d = {.name = "g", .unit = "By", .kind = EL_TM_GAUGE};
  users(f, &d, 1, 1, 1100);
  users(f, &d, 2, 101, 1000);
  assert_int_equal(f->w->fam[0]->n, 2000);
  assert_int_equal(f->w->evicted_series, 0);
  users(f, &d, 2, 2001, 2001);
  assert_int_equal(f->w->fam[0]->n, 1751);
  assert_int_equal(f->w->evicted_series, 250);
  assert_int_equal(f->w->evicted_stale_series, 150);
  char *js = model_json(f);
  assert_non_null(strstr(js,
                         "\"evicted_series\":250,\"evicted_stale_series\":150,"
                         "\"merged_series\":0,\"rekeyed_series\":0,"
                         "\"series_limit\":2000}"));
  el_free(js);
  fix_free(f);
}

static void test_options(void **state) {
  (void)state;
  el_web_opts_t o;
  el_web_opts_init(&o);
  assert_false(el_web_enabled(&o));
  char *argv[] = {"x", "--prometheus-port", "9464", "--web-port=0",
                  "--web-port", "65536", "--web-port", NULL};
  int i = 1;
  assert_int_equal(el_web_opts_parse(&o, 7, argv, &i), 1);
  assert_int_equal(i, 3);
  assert_int_equal(o.prom_port, 9464);
  assert_int_equal(el_web_opts_parse(&o, 7, argv, &i), 1);
  assert_int_equal(o.web_port, 0);
  assert_true(el_web_enabled(&o));
  assert_int_equal(el_web_opts_parse(&o, 7, argv, &i), EL_EUSAGE);
  i = 6;
  assert_int_equal(el_web_opts_parse(&o, 7, argv, &i), EL_EUSAGE);
  char *other[] = {"x", "--web-portal", "1"};
  i = 1;
  assert_int_equal(el_web_opts_parse(&o, 3, other, &i), 0);
  /* Hosts: default empty (127.0.0.1); a host alone enables nothing. */
  el_web_opts_init(&o);
  assert_string_equal(o.prom_host, "");
  assert_string_equal(o.web_host, "");
  char *hosts[] = {"x", "--prometheus-host", "0.0.0.0", "--web-host=::1",
                   "--web-host", "a b", "--prometheus-host"};
  i = 1;
  assert_int_equal(el_web_opts_parse(&o, 7, hosts, &i), 1);
  assert_string_equal(o.prom_host, "0.0.0.0");
  assert_int_equal(el_web_opts_parse(&o, 7, hosts, &i), 1);
  assert_string_equal(o.web_host, "::1");
  assert_false(el_web_enabled(&o));
  assert_int_equal(el_web_opts_parse(&o, 7, hosts, &i), EL_EUSAGE);
  assert_non_null(strstr(o.err, "--web-host"));
  assert_non_null(strstr(o.err, "'a b'"));
  i = 6;
  assert_int_equal(el_web_opts_parse(&o, 7, hosts, &i), EL_EUSAGE);
}

/* web: {prometheus_host, web_host, ...} fills what the command line left
 * unset; the command line wins. */
static void test_options_from_config(void **state) {
  (void)state;
  el_cfg_t *cfg = el_cfg_new();
  assert_non_null(cfg);
  const char *yaml = "web:\n  prometheus_port: 9464\n"
                     "  prometheus_host: '::'\n  web_host: 10.0.0.1\n";
  assert_int_equal(el_cfg_load_string(cfg, "t.yaml", yaml, strlen(yaml)),
                   0);
  el_web_opts_t o;
  el_web_opts_init(&o);
  char *argv[] = {"x", "--web-host", "127.0.0.2"};
  int i = 1;
  assert_int_equal(el_web_opts_parse(&o, 3, argv, &i), 1);
  el_web_opts_from_config(&o, cfg);
  assert_int_equal(o.prom_port, 9464);
  assert_int_equal(o.web_port, -1);
  assert_string_equal(o.prom_host, "::");
  assert_string_equal(o.web_host, "127.0.0.2");
  el_web_opts_from_config(&o, NULL); /* nothing to take */
  assert_string_equal(o.prom_host, "::");
  /* A bad host in the file is an error with its line. */
  const char *bad = "web:\n  web_host: ''\n";
  assert_true(el_cfg_load_string(cfg, "b.yaml", bad, strlen(bad)) < 0);
  assert_non_null(strstr(el_cfg_diag(cfg)->msg, "web.web_host"));
  el_cfg_free(cfg);
}

static int have_curl(void) {
  return system("curl --version >/dev/null 2>&1") == 0;
}

/* The status of GET url (curl), 0 when nothing answered. */
static int get_status(const char *url) {
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "curl -s -o /dev/null -m 10 -w '%%{http_code}' '%s'", url);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char out[16] = "";
  if (!fgets(out, sizeof out, p)) out[0] = '\0';
  pclose(p);
  return atoi(out);
}

/* Both servers: on 127.0.0.1 by default, GET /health answered by each,
 * and the page's own origins offered to the control server's CORS list. */
static void test_servers_default_loopback(void **state) {
  (void)state;
  if (!have_curl()) skip();
  size_t base = el_mem_in_use();
  el_web_opts_t o;
  el_web_opts_init(&o);
  o.prom_port = 0;
  o.web_port = 0;
  el_web_t *w;
  el_tm_exporter_t ex;
  assert_int_equal(el_web_new(&o, &w, &ex), 0);
  assert_int_equal(el_web_start(w), 0);
  assert_string_equal(el_ctl_httpd_address(w->prom_d), "127.0.0.1");
  assert_string_equal(el_ctl_httpd_address(w->view_d), "127.0.0.1");
  char url[128];
  const int ports[2] = {el_web_prom_port(w), el_web_view_port(w)};
  for (int k = 0; k < 2; k++) {
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", ports[k]);
    assert_int_equal(get_status(url), 200);
  }
  snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", ports[0]);
  assert_int_equal(get_status(url), 200);
  el_ctl_opts_t ctl;
  el_ctl_opts_init(&ctl);
  assert_int_equal(el_web_allow_page_origins(w, &ctl), 0);
  assert_int_equal(ctl.n_allow_origins, 3);
  char want[64];
  snprintf(want, sizeof want, "http://127.0.0.1:%d", ports[1]);
  assert_string_equal(ctl.allow_origins[1], want);
  el_ctl_opts_close(&ctl);
  el_web_free(w);
  assert_int_equal(el_mem_in_use(), base);
}

/* A host that is not this machine's: an error, nothing left running. */
static void test_servers_bad_host(void **state) {
  (void)state;
  size_t base = el_mem_in_use();
  el_web_opts_t o;
  el_web_opts_init(&o);
  o.prom_port = 0;
  o.web_port = 0;
  snprintf(o.web_host, sizeof o.web_host, "192.0.2.1");
  el_web_t *w;
  el_tm_exporter_t ex;
  assert_int_equal(el_web_new(&o, &w, &ex), 0);
  assert_true(el_web_start(w) < 0);
  assert_int_equal(el_web_prom_port(w), -1);
  el_web_free(w);
  assert_int_equal(el_mem_in_use(), base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metric_names),
      cmocka_unit_test(test_label_names),
      cmocka_unit_test(test_gauge_last_value_and_drops),
      cmocka_unit_test(test_counter_openmetrics_and_escaping),
      cmocka_unit_test(test_sessions_rekey_and_cut),
      cmocka_unit_test(test_series_evicted_stale),
      cmocka_unit_test(test_logs_threads_spans),
      cmocka_unit_test(test_internal_logs_apart),
      cmocka_unit_test(test_many_threads),
      cmocka_unit_test(test_usage_bins),
      cmocka_unit_test(test_thread_states),
      cmocka_unit_test(test_threads_end_with_input),
      cmocka_unit_test(test_threads_labels_only),
      cmocka_unit_test(test_thread_runnable),
      cmocka_unit_test(test_threads_end_with_connection),
      cmocka_unit_test(test_threads_table_keeps_long_lived),
      cmocka_unit_test(test_thread_labels_bounded),
      cmocka_unit_test(test_threads_high_ids),
      cmocka_unit_test(test_thread_ids_bounded),
      cmocka_unit_test(test_thread_ids_full_pages),
      cmocka_unit_test(test_gauge_keeps_peaks),
      cmocka_unit_test(test_gauge_covers_run),
      cmocka_unit_test(test_series_bounded),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_options_from_config),
      cmocka_unit_test(test_servers_default_loopback),
      cmocka_unit_test(test_servers_bad_host),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
