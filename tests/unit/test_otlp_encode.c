/* test_otlp_encode.c: OTLP protobuf encoding (src/otlp/otlp_encode.c).
 *
 * Known batches are encoded and the bytes decoded by an independent
 * decoder, `protoc --decode` (Debian protobuf-compiler) against our
 * proto/ files; its text output is compared to expected text written by
 * hand from the inputs (reference-behaviour.md §2, §5.4.2 and Appendix A
 * for the profiles dictionary order). Also: splitting at max_bytes, the
 * profiles field numbers of otlp-profiles.md (OTLP v1.11.0) pinned in
 * both proto/ and the generated code, and an out-of-memory sweep.
 * ctest-labels: asan */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "otlp/exp_console.h"
#include "otlp/otlp_encode.h"
#include "telemetry/telemetry.h"
#include "telemetry/telemetry_batch.h"
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb-c.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/* {====== helpers ======} */

typedef struct grab_s {
  el_tm_batch_t *b[EL_TM_NSIGNALS];
} grab_t;

static int grab_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  grab_t *g = ud;
  el_tm_batch_free(g->b[sig]);
  g->b[sig] = b;
  return 0;
}

static el_tm_store_t *new_store(grab_t *g) {
  el_tm_store_t *st = el_tm_store_new("eventlog-live", "0.1.0");
  assert_non_null(st);
  el_tm_exporter_t ex = {.name = "grab", .ud = g, .signals = 0xf,
                         .export = grab_export};
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_tm_attr_t svc = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {"oddball", 7}};
  assert_int_equal(el_tm_store_set_resource(st, &svc), 0);
  return st;
}

static void grab_free(grab_t *g) {
  for (int i = 0; i < EL_TM_NSIGNALS; i++) el_tm_batch_free(g->b[i]);
}

#define MAXREQ 512
typedef struct reqs_s {
  uint8_t *buf[MAXREQ];
  size_t len[MAXREQ];
  size_t nrec[MAXREQ];
  int n;
} reqs_t;

static int collect(void *ud, const uint8_t *bytes, size_t len, size_t nrec) {
  reqs_t *r = ud;
  assert_true(r->n < MAXREQ);
  r->buf[r->n] = malloc(len ? len : 1);
  memcpy(r->buf[r->n], bytes, len);
  r->len[r->n] = len;
  r->nrec[r->n++] = nrec;
  return 0;
}

static void reqs_free(reqs_t *r) {
  for (int i = 0; i < r->n; i++) free(r->buf[i]);
  r->n = 0;
}

static const char *const req_type[EL_TM_NSIGNALS] = {
    "opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest",
    "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest",
    "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
    ("opentelemetry.proto.collector.profiles.v1development."
     "ExportProfilesServiceRequest")};
static const char *const req_proto[EL_TM_NSIGNALS] = {
    "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
    "opentelemetry/proto/collector/logs/v1/logs_service.proto",
    "opentelemetry/proto/collector/trace/v1/trace_service.proto",
    ("opentelemetry/proto/collector/profiles/v1development/"
     "profiles_service.proto")};

static bool have_protoc(void) {
  return system("protoc --version >/dev/null 2>&1") == 0;
}

/* protoc's text rendering of one request (malloc'd). */
static char *protoc_decode(el_tm_signal_t sig, const uint8_t *b, size_t n) {
  char path[] = "/tmp/el-otlp-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, b, n), (ssize_t)n);
  close(fd);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "protoc --decode=%s -I %s/proto %s < %s",
           req_type[sig], EL_SOURCE_DIR, req_proto[sig], path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t cap = 1 << 16, len = 0;
  char *out = malloc(cap);
  size_t got;
  while ((got = fread(out + len, 1, cap - len - 1, p)) > 0) {
    len += got;
    if (len + 1 == cap) out = realloc(out, cap *= 2);
  }
  out[len] = '\0';
  assert_int_equal(pclose(p), 0);
  unlink(path);
  return out;
}

/* Encode b (no size bound), expect exactly one request decoding to text. */
static void expect_text(el_tm_signal_t sig, el_tm_batch_t *b,
                        const char *text) {
  reqs_t r = {0};
  assert_int_equal(el_otlp_encode(sig, b, 0, collect, &r), 0);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.nrec[0], el_tm_batch_count(b));
  char *got = protoc_decode(sig, r.buf[0], r.len[0]);
  if (strcmp(got, text) != 0) fprintf(stderr, "got:\n%s", got);
  assert_string_equal(got, text);
  free(got);
  reqs_free(&r);
}

static el_tm_attr_t iattr(const char *k, int64_t v) {
  return (el_tm_attr_t){.key = k, .type = EL_TM_INT, .v.i = v};
}

static el_tm_attr_t sattr(const char *k, const char *v) {
  return (el_tm_attr_t){.key = k, .type = EL_TM_STR, .v.s = {v, strlen(v)}};
}

#define RESOURCE_ODDBALL                                                    \
  "  resource {\n"                                                          \
  "    attributes {\n"                                                      \
  "      key: \"service.name\"\n"                                           \
  "      value {\n"                                                         \
  "        string_value: \"oddball\"\n"                                     \
  "      }\n"                                                               \
  "    }\n"                                                                 \
  "  }\n"
#define SCOPE(sp)                                                           \
  sp "scope {\n"                                                            \
  sp "  name: \"eventlog-live\"\n"                                          \
  sp "  version: \"0.1.0\"\n"                                               \
  sp "}\n"

/* {====== one request per signal, decoded by protoc ======} */

static void test_metrics_decoded_by_protoc(void **state) {
  if (!have_protoc()) skip();
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_metric_desc_t hs = {"ghc_eventlog_HeapSize", "The current heap size.",
                            "By", EL_TM_GAUGE, 0, false};
  el_tm_metric_desc_t ha = {"ghc_eventlog_HeapAllocated", NULL, "By",
                            EL_TM_SUM, EL_TM_TEMP_CUMULATIVE, true};
  el_tm_attr_t a[2] = {iattr("evCap", 0), iattr("heapCapset", 0)};
  el_tm_attr_t a1 = iattr("evCap", 1);
  el_tm_metric_point(st, &hs,
                     &(el_tm_point_t){.attrs = a,
                                      .nattrs = 2,
                                      .start_unix_ns = 1785000000000000000u,
                                      .time_unix_ns = 1785000000123456789u,
                                      .is_int = true,
                                      .ival = 8388608});
  el_tm_metric_point(st, &ha,
                     &(el_tm_point_t){.attrs = &a1,
                                      .nattrs = 1,
                                      .time_unix_ns = 5,
                                      .is_int = true,
                                      .ival = 4096});
  el_tm_metric_point(st, &hs, &(el_tm_point_t){.time_unix_ns = 7, .dval = 1.5});
  el_tm_store_flush(st);
  expect_text(EL_TM_SIGNAL_METRICS, g.b[0],
              "resource_metrics {\n" RESOURCE_ODDBALL
              "  scope_metrics {\n" SCOPE("    ")
              "    metrics {\n"
              "      name: \"ghc_eventlog_HeapSize\"\n"
              "      description: \"The current heap size.\"\n"
              "      unit: \"By\"\n"
              "      gauge {\n"
              "        data_points {\n"
              "          start_time_unix_nano: 1785000000000000000\n"
              "          time_unix_nano: 1785000000123456789\n"
              "          as_int: 8388608\n"
              "          attributes {\n"
              "            key: \"evCap\"\n"
              "            value {\n"
              "              int_value: 0\n"
              "            }\n"
              "          }\n"
              "          attributes {\n"
              "            key: \"heapCapset\"\n"
              "            value {\n"
              "              int_value: 0\n"
              "            }\n"
              "          }\n"
              "        }\n"
              "        data_points {\n"
              "          time_unix_nano: 7\n"
              "          as_double: 1.5\n"
              "        }\n"
              "      }\n"
              "    }\n"
              "    metrics {\n"
              "      name: \"ghc_eventlog_HeapAllocated\"\n"
              "      unit: \"By\"\n"
              "      sum {\n"
              "        data_points {\n"
              "          time_unix_nano: 5\n"
              "          as_int: 4096\n"
              "          attributes {\n"
              "            key: \"evCap\"\n"
              "            value {\n"
              "              int_value: 1\n"
              "            }\n"
              "          }\n"
              "        }\n"
              "        aggregation_temporality: "
              "AGGREGATION_TEMPORALITY_CUMULATIVE\n"
              "        is_monotonic: true\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "}\n");
  el_tm_store_free(st);
  grab_free(&g);
}

static void test_logs_two_resources_decoded_by_protoc(void **state) {
  if (!have_protoc()) skip();
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_attr_t a[2] = {iattr("evCap", 0), sattr("kind", "UserMarker")};
  el_tm_log_t prog = {.time_unix_ns = 100, .observed_unix_ns = 100,
                      .severity_number = EL_TM_SEV_TRACE,
                      .body = {"Summing 1234 numbers", 20}, .attrs = a,
                      .nattrs = 2};
  el_tm_log_t host = {.time_unix_ns = 200, .observed_unix_ns = 201,
                      .severity_number = EL_TM_SEV_WARN,
                      .severity_text = "WARN", .body = {"No input", 8},
                      .trace_id = (const uint8_t *)"0123456789abcdef",
                      .span_id = (const uint8_t *)"ABCDEFGH",
                      .host_log = true};
  el_tm_log(st, &prog);
  el_tm_log(st, &host);
  el_tm_store_flush(st);
  expect_text(EL_TM_SIGNAL_LOGS, g.b[1],
              "resource_logs {\n" RESOURCE_ODDBALL
              "  scope_logs {\n" SCOPE("    ")
              "    log_records {\n"
              "      time_unix_nano: 100\n"
              "      severity_number: SEVERITY_NUMBER_TRACE\n"
              "      body {\n"
              "        string_value: \"Summing 1234 numbers\"\n"
              "      }\n"
              "      attributes {\n"
              "        key: \"evCap\"\n"
              "        value {\n"
              "          int_value: 0\n"
              "        }\n"
              "      }\n"
              "      attributes {\n"
              "        key: \"kind\"\n"
              "        value {\n"
              "          string_value: \"UserMarker\"\n"
              "        }\n"
              "      }\n"
              "      observed_time_unix_nano: 100\n"
              "    }\n"
              "  }\n"
              "}\n"
              "resource_logs {\n"
              "  resource {\n"
              "    attributes {\n"
              "      key: \"service.name\"\n"
              "      value {\n"
              "        string_value: \"eventlog-live-otelcol-for-oddball\"\n"
              "      }\n"
              "    }\n"
              "    attributes {\n"
              "      key: \"service.version\"\n"
              "      value {\n"
              "        string_value: \"" EL_VERSION "\"\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "  scope_logs {\n" SCOPE("    ")
              "    log_records {\n"
              "      time_unix_nano: 200\n"
              "      severity_number: SEVERITY_NUMBER_WARN\n"
              "      severity_text: \"WARN\"\n"
              "      body {\n"
              "        string_value: \"No input\"\n"
              "      }\n"
              "      trace_id: \"0123456789abcdef\"\n"
              "      span_id: \"ABCDEFGH\"\n"
              "      observed_time_unix_nano: 201\n"
              "    }\n"
              "  }\n"
              "}\n");
  el_tm_store_free(st);
  grab_free(&g);
}

static void test_traces_decoded_by_protoc(void **state) {
  if (!have_protoc()) skip();
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_strview_t args[2] = {{"a", 1}, {"b", 1}};
  el_tm_attr_t a[5] = {
      sattr("thread", "7"), sattr("status", "ThreadYielding"),
      {.key = "flag", .type = EL_TM_BOOL, .v.b = true},
      {.key = "ratio", .type = EL_TM_DOUBLE, .v.d = 0.25},
      {.key = "args", .type = EL_TM_STRLIST, .v.list = {args, 2}}};
  el_tm_span_t s1 = {.name = "ghc_eventlog_ThreadState Blocked",
                     .kind = EL_TM_SPAN_INTERNAL, .start_unix_ns = 1000,
                     .end_unix_ns = 2000, .attrs = a, .nattrs = 5,
                     .status_code = 1};
  memcpy(s1.trace_id, "0123456789abcdef", 16);
  memcpy(s1.span_id, "ABCDEFGH", 8);
  el_tm_span_t s2 = {.name = "child", .kind = EL_TM_SPAN_SERVER,
                     .start_unix_ns = 3, .end_unix_ns = 4};
  memcpy(s2.trace_id, "0123456789abcdef", 16);
  memcpy(s2.span_id, "IJKLMNOP", 8);
  memcpy(s2.parent_span_id, "ABCDEFGH", 8);
  el_tm_span(st, &s1);
  el_tm_span(st, &s2);
  el_tm_store_flush(st);
  expect_text(EL_TM_SIGNAL_TRACES, g.b[2],
              "resource_spans {\n" RESOURCE_ODDBALL
              "  scope_spans {\n" SCOPE("    ")
              "    spans {\n"
              "      trace_id: \"0123456789abcdef\"\n"
              "      span_id: \"ABCDEFGH\"\n"
              "      name: \"ghc_eventlog_ThreadState Blocked\"\n"
              "      kind: SPAN_KIND_INTERNAL\n"
              "      start_time_unix_nano: 1000\n"
              "      end_time_unix_nano: 2000\n"
              "      attributes {\n"
              "        key: \"thread\"\n"
              "        value {\n"
              "          string_value: \"7\"\n"
              "        }\n"
              "      }\n"
              "      attributes {\n"
              "        key: \"status\"\n"
              "        value {\n"
              "          string_value: \"ThreadYielding\"\n"
              "        }\n"
              "      }\n"
              "      attributes {\n"
              "        key: \"flag\"\n"
              "        value {\n"
              "          bool_value: true\n"
              "        }\n"
              "      }\n"
              "      attributes {\n"
              "        key: \"ratio\"\n"
              "        value {\n"
              "          double_value: 0.25\n"
              "        }\n"
              "      }\n"
              "      attributes {\n"
              "        key: \"args\"\n"
              "        value {\n"
              "          array_value {\n"
              "            values {\n"
              "              string_value: \"a\"\n"
              "            }\n"
              "            values {\n"
              "              string_value: \"b\"\n"
              "            }\n"
              "          }\n"
              "        }\n"
              "      }\n"
              "      status {\n"
              "        code: STATUS_CODE_OK\n"
              "      }\n"
              "    }\n"
              "    spans {\n"
              "      trace_id: \"0123456789abcdef\"\n"
              "      span_id: \"IJKLMNOP\"\n"
              "      parent_span_id: \"ABCDEFGH\"\n"
              "      name: \"child\"\n"
              "      kind: SPAN_KIND_SERVER\n"
              "      start_time_unix_nano: 3\n"
              "      end_time_unix_nano: 4\n"
              "    }\n"
              "  }\n"
              "}\n");
  el_tm_store_free(st);
  grab_free(&g);
}

/* Two call-stack samples sharing a frame: the dictionary order follows
 * reference-behaviour.md §5.4.2 (file, function name, Function, Location
 * per frame; Stack; key string and attribute per attribute; then the
 * sample type strings), index 0 of every table the zero value. */
static void test_profiles_dictionary_decoded_by_protoc(void **state) {
  if (!have_protoc()) skip();
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_frame_t f[2] = {{{"Main:foo", 8}, {"src/Foo.hs", 10}, 10, 5},
                        {{"Main:main", 9}, {NULL, 0}, 0, 0}};
  el_tm_attr_t a1[3] = {sattr("__name__", "ghc_eventlog_CallStackProfile"),
                        iattr("capability", 0), iattr("thread", 7)};
  el_tm_attr_t a2[3] = {sattr("__name__", "ghc_eventlog_CallStackProfile"),
                        iattr("capability", 1), iattr("thread", 7)};
  el_tm_profile_sample_t s1 = {"call_stack_profile", "cpu", "samples", f, 2,
                               1, 1785000000000000001u, a1, 3};
  el_tm_profile_sample_t s2 = {"call_stack_profile", "cpu", "samples", f, 1,
                               1, 0, a2, 3};
  el_tm_profile_sample(st, &s1);
  el_tm_profile_sample(st, &s2);
  el_tm_store_flush(st);
  expect_text(EL_TM_SIGNAL_PROFILES, g.b[3],
              "resource_profiles {\n" RESOURCE_ODDBALL
              "  scope_profiles {\n" SCOPE("    ")
              "    profiles {\n"
              "      sample_type {\n"
              "        type_strindex: 7\n"
              "        unit_strindex: 8\n"
              "      }\n"
              "      samples {\n"
              "        stack_index: 1\n"
              "        attribute_indices: 1\n"
              "        attribute_indices: 2\n"
              "        attribute_indices: 3\n"
              "        values: 1\n"
              "        timestamps_unix_nano: 1785000000000000001\n"
              "      }\n"
              "      samples {\n"
              "        stack_index: 2\n"
              "        attribute_indices: 1\n"
              "        attribute_indices: 4\n"
              "        attribute_indices: 3\n"
              "        values: 1\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "}\n"
              "dictionary {\n"
              "  mapping_table {\n"
              "  }\n"
              "  location_table {\n"
              "  }\n"
              "  location_table {\n"
              "    lines {\n"
              "      function_index: 1\n"
              "      line: 10\n"
              "      column: 5\n"
              "    }\n"
              "  }\n"
              "  location_table {\n"
              "    lines {\n"
              "      function_index: 2\n"
              "    }\n"
              "  }\n"
              "  function_table {\n"
              "  }\n"
              "  function_table {\n"
              "    name_strindex: 2\n"
              "    filename_strindex: 1\n"
              "    start_line: 10\n"
              "  }\n"
              "  function_table {\n"
              "    name_strindex: 3\n"
              "  }\n"
              "  link_table {\n"
              "  }\n"
              "  string_table: \"\"\n"
              "  string_table: \"src/Foo.hs\"\n"
              "  string_table: \"Main:foo\"\n"
              "  string_table: \"Main:main\"\n"
              "  string_table: \"__name__\"\n"
              "  string_table: \"capability\"\n"
              "  string_table: \"thread\"\n"
              "  string_table: \"cpu\"\n"
              "  string_table: \"samples\"\n"
              "  attribute_table {\n"
              "  }\n"
              "  attribute_table {\n"
              "    key_strindex: 4\n"
              "    value {\n"
              "      string_value: \"ghc_eventlog_CallStackProfile\"\n"
              "    }\n"
              "  }\n"
              "  attribute_table {\n"
              "    key_strindex: 5\n"
              "    value {\n"
              "      int_value: 0\n"
              "    }\n"
              "  }\n"
              "  attribute_table {\n"
              "    key_strindex: 6\n"
              "    value {\n"
              "      int_value: 7\n"
              "    }\n"
              "  }\n"
              "  attribute_table {\n"
              "    key_strindex: 5\n"
              "    value {\n"
              "      int_value: 1\n"
              "    }\n"
              "  }\n"
              "  stack_table {\n"
              "  }\n"
              "  stack_table {\n"
              "    location_indices: 1\n"
              "    location_indices: 2\n"
              "  }\n"
              "  stack_table {\n"
              "    location_indices: 1\n"
              "  }\n"
              "}\n");
  el_tm_store_free(st);
  grab_free(&g);
}

/* Samples of an empty stack (GHC's empty cost-centre stack, `frames = {}`
 * in el.profile_sample) point at the zero Stack at index 0 (profiles.proto:
 * index 0 of every table is the zero value; tables deduplicate by
 * structural equality): the stack table holds exactly one empty entry,
 * and protoc prints no stack_index (proto3 omits 0) for those samples. */
static void test_profiles_empty_stack_is_index_0(void **state) {
  if (!have_protoc()) skip();
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_frame_t f = {{"Main:main", 9}, {NULL, 0}, 0, 0};
  el_tm_profile_sample_t empty = {
      "cost_centre_stack_profile", "cpu", "samples", NULL, 0, 1, 0, NULL, 0};
  el_tm_profile_sample_t one = {
      "cost_centre_stack_profile", "cpu", "samples", &f, 1, 1, 0, NULL, 0};
  el_tm_profile_sample(st, &empty);
  el_tm_profile_sample(st, &one);
  el_tm_profile_sample(st, &empty);
  el_tm_store_flush(st);
  expect_text(EL_TM_SIGNAL_PROFILES, g.b[3],
              "resource_profiles {\n" RESOURCE_ODDBALL
              "  scope_profiles {\n" SCOPE("    ")
              "    profiles {\n"
              "      sample_type {\n"
              "        type_strindex: 2\n"
              "        unit_strindex: 3\n"
              "      }\n"
              "      samples {\n"
              "        values: 1\n"
              "      }\n"
              "      samples {\n"
              "        stack_index: 1\n"
              "        values: 1\n"
              "      }\n"
              "      samples {\n"
              "        values: 1\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "}\n"
              "dictionary {\n"
              "  mapping_table {\n"
              "  }\n"
              "  location_table {\n"
              "  }\n"
              "  location_table {\n"
              "    lines {\n"
              "      function_index: 1\n"
              "    }\n"
              "  }\n"
              "  function_table {\n"
              "  }\n"
              "  function_table {\n"
              "    name_strindex: 1\n"
              "  }\n"
              "  link_table {\n"
              "  }\n"
              "  string_table: \"\"\n"
              "  string_table: \"Main:main\"\n"
              "  string_table: \"cpu\"\n"
              "  string_table: \"samples\"\n"
              "  attribute_table {\n"
              "  }\n"
              "  stack_table {\n"
              "  }\n"
              "  stack_table {\n"
              "    location_indices: 1\n"
              "  }\n"
              "}\n");
  el_tm_store_free(st);
  grab_free(&g);
}

/* A frame with no name, file or line (el.profile_sample{frames = {""}})
 * makes Function{}, which is the zero Function at index 0: the function
 * table keeps one entry, and the frame's Location (one Line, so not the
 * zero Location) points at it. */
static void test_profiles_empty_function_is_index_0(void **state) {
  if (!have_protoc()) skip();
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_frame_t f = {{"", 0}, {NULL, 0}, 0, 0};
  el_tm_profile_sample_t s = {"p", "cpu", "samples", &f, 1, 1, 0, NULL, 0};
  el_tm_profile_sample(st, &s);
  el_tm_store_flush(st);
  expect_text(EL_TM_SIGNAL_PROFILES, g.b[3],
              "resource_profiles {\n" RESOURCE_ODDBALL
              "  scope_profiles {\n" SCOPE("    ")
              "    profiles {\n"
              "      sample_type {\n"
              "        type_strindex: 1\n"
              "        unit_strindex: 2\n"
              "      }\n"
              "      samples {\n"
              "        stack_index: 1\n"
              "        values: 1\n"
              "      }\n"
              "    }\n"
              "  }\n"
              "}\n"
              "dictionary {\n"
              "  mapping_table {\n"
              "  }\n"
              "  location_table {\n"
              "  }\n"
              "  location_table {\n"
              "    lines {\n"
              "    }\n"
              "  }\n"
              "  function_table {\n"
              "  }\n"
              "  link_table {\n"
              "  }\n"
              "  string_table: \"\"\n"
              "  string_table: \"cpu\"\n"
              "  string_table: \"samples\"\n"
              "  attribute_table {\n"
              "  }\n"
              "  stack_table {\n"
              "  }\n"
              "  stack_table {\n"
              "    location_indices: 1\n"
              "  }\n"
              "}\n");
  el_tm_store_free(st);
  grab_free(&g);
}

/* {====== splitting at max_bytes ======} */

typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest
    MetricsReq;
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
    ProfilesReq;

static void test_split_at_max_bytes(void **state) {
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_metric_desc_t d1 = {"m_one", "first", "By", EL_TM_GAUGE, 0, false};
  el_tm_metric_desc_t d2 = {"m_two", NULL, "ns", EL_TM_SUM,
                            EL_TM_TEMP_DELTA, true};
  char label[64];
  memset(label, 'l', 50);
  label[50] = '\0';
  el_tm_attr_t a = sattr("label", label);
  for (int i = 0; i < 1000; i++)
    el_tm_metric_point(st, i % 3 ? &d1 : &d2,
                       &(el_tm_point_t){.attrs = &a,
                                        .nattrs = 1,
                                        .time_unix_ns = i + 1,
                                        .is_int = true,
                                        .ival = i});
  el_tm_store_flush(st);
  reqs_t r = {0};
  const size_t max = 4000;
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_METRICS, g.b[0], max, collect,
                                  &r), 0);
  assert_true(r.n > 1000 * 60 / (int)max);  /* really split */
  /* Every request fits, decodes, and together they hold each point once,
   * in order within each metric. */
  size_t total = 0;
  int64_t next[2] = {-1, -1};
  for (int i = 0; i < r.n; i++) {
    assert_true(r.len[i] <= max);
    MetricsReq *m =
        opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(
            NULL, r.len[i], r.buf[i]);
    assert_non_null(m);
    size_t in_req = 0;
    assert_int_equal(m->n_resource_metrics, 1);
    assert_non_null(m->resource_metrics[0]->resource);
    assert_int_equal(m->resource_metrics[0]->resource->n_attributes, 1);
    Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm =
        m->resource_metrics[0]->scope_metrics[0];
    assert_string_equal(sm->scope->name, "eventlog-live");
    for (size_t k = 0; k < sm->n_metrics; k++) {
      Opentelemetry__Proto__Metrics__V1__Metric *mt = sm->metrics[k];
      bool one = strcmp(mt->name, "m_one") == 0;
      size_t np = one ? mt->gauge->n_data_points : mt->sum->n_data_points;
      Opentelemetry__Proto__Metrics__V1__NumberDataPoint **dp =
          one ? mt->gauge->data_points : mt->sum->data_points;
      if (!one) assert_true(mt->sum->is_monotonic);
      for (size_t j = 0; j < np; j++) {
        assert_true(dp[j]->as_int > next[one]);
        assert_int_equal(dp[j]->as_int % 3 ? 1 : 0, one);
        next[one] = dp[j]->as_int;
        assert_string_equal(dp[j]->attributes[0]->value->string_value, label);
      }
      in_req += np;
    }
    assert_int_equal(in_req, r.nrec[i]);
    total += in_req;
    opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(
        m, NULL);
  }
  assert_int_equal(total, 1000);
  reqs_free(&r);
  el_tm_store_free(st);
  grab_free(&g);
}

static void test_oversized_record_dropped_and_counted(void **state) {
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_metric_desc_t d = {"m", NULL, NULL, EL_TM_GAUGE, 0, false};
  static char big[10000];
  memset(big, 'x', sizeof big - 1);
  el_tm_attr_t small = sattr("k", "v"), huge = sattr("k", big);
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &small,
                                      .nattrs = 1,
                                      .time_unix_ns = 1,
                                      .is_int = true,
                                      .ival = 1});
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &huge,
                                      .nattrs = 1,
                                      .time_unix_ns = 2,
                                      .is_int = true,
                                      .ival = 2});
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &small,
                                      .nattrs = 1,
                                      .time_unix_ns = 3,
                                      .is_int = true,
                                      .ival = 3});
  el_tm_store_flush(st);
  reqs_t r = {0};
  el_log_threshold = EL_LOG_QUIET;
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_METRICS, g.b[0], 2000,
                                  collect, &r), 1);
  el_log_threshold = EL_LOG_WARN;
  size_t total = 0;
  for (int i = 0; i < r.n; i++) {
    assert_true(r.len[i] <= 2000);
    total += r.nrec[i];
  }
  assert_int_equal(total, 2);
  reqs_free(&r);
  el_tm_store_free(st);
  grab_free(&g);
}

/* Each split profiles request carries its own, self-contained dictionary. */
static void test_profiles_split_self_contained(void **state) {
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  char fn[64][16];
  for (int i = 0; i < 300; i++) {
    el_tm_frame_t f[3];
    for (int k = 0; k < 3; k++) {
      snprintf(fn[(i + k) % 64], 16, "fun%d", (i + k) % 64);
      f[k] = (el_tm_frame_t){{fn[(i + k) % 64], strlen(fn[(i + k) % 64])},
                             {"M.hs", 4}, k + 1, 0};
    }
    el_tm_attr_t a = iattr("thread", i);
    el_tm_profile_sample_t s = {"p", "cpu", "samples", f, 3, 1, 0, &a, 1};
    el_tm_profile_sample(st, &s);
  }
  el_tm_store_flush(st);
  reqs_t r = {0};
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_PROFILES, g.b[3], 3000,
                                  collect, &r), 0);
  assert_true(r.n > 1);
  size_t total = 0;
  for (int i = 0; i < r.n; i++) {
    assert_true(r.len[i] <= 3000);
    ProfilesReq *m =
        opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
            NULL, r.len[i], r.buf[i]);
    assert_non_null(m);
    Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d =
        m->dictionary;
    assert_non_null(d);
    assert_string_equal(d->string_table[0], "");
    Opentelemetry__Proto__Profiles__V1development__Profile *p =
        m->resource_profiles[0]->scope_profiles[0]->profiles[0];
    assert_string_equal(d->string_table[p->sample_type->type_strindex], "cpu");
    for (size_t s = 0; s < p->n_samples; s++) {
      Opentelemetry__Proto__Profiles__V1development__Sample *sm =
          p->samples[s];
      assert_true(sm->stack_index > 0 &&
                  (size_t)sm->stack_index < d->n_stack_table);
      Opentelemetry__Proto__Profiles__V1development__Stack *stk =
          d->stack_table[sm->stack_index];
      assert_int_equal(stk->n_location_indices, 3);
      for (size_t k = 0; k < 3; k++) {
        int32_t li = stk->location_indices[k];
        assert_true(li > 0 && (size_t)li < d->n_location_table);
        int32_t fi = d->location_table[li]->lines[0]->function_index;
        assert_true(fi > 0 && (size_t)fi < d->n_function_table);
        int32_t ni = d->function_table[fi]->name_strindex;
        assert_true(ni > 0 && (size_t)ni < d->n_string_table);
        assert_int_equal(strncmp(d->string_table[ni], "fun", 3), 0);
        assert_int_equal(d->location_table[li]->lines[0]->line, (int)k + 1);
      }
      assert_int_equal(sm->n_attribute_indices, 1);
      int32_t ai = sm->attribute_indices[0];
      assert_true(ai > 0 && (size_t)ai < d->n_attribute_table);
      assert_int_equal((size_t)d->attribute_table[ai]->value->int_value,
                       total + s);
    }
    total += p->n_samples;
    opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
        m, NULL);
  }
  assert_int_equal(total, 300);
  reqs_free(&r);
  el_tm_store_free(st);
  grab_free(&g);
}

/* {====== profiles field numbers (otlp-profiles.md, OTLP v1.11.0) ======} */

typedef struct pin_s {
  const char *message;
  const char *field;
  unsigned number;
} pin_t;

/* Written from otlp-profiles.md; Sample carries the v1.10.0 renumbering. */
static const pin_t pins[] = {
    {"ProfilesDictionary", "mapping_table", 1},
    {"ProfilesDictionary", "location_table", 2},
    {"ProfilesDictionary", "function_table", 3},
    {"ProfilesDictionary", "link_table", 4},
    {"ProfilesDictionary", "string_table", 5},
    {"ProfilesDictionary", "attribute_table", 6},
    {"ProfilesDictionary", "stack_table", 7},
    {"ProfilesData", "resource_profiles", 1},
    {"ProfilesData", "dictionary", 2},
    {"ResourceProfiles", "resource", 1},
    {"ResourceProfiles", "scope_profiles", 2},
    {"ResourceProfiles", "schema_url", 3},
    {"ScopeProfiles", "scope", 1},
    {"ScopeProfiles", "profiles", 2},
    {"ScopeProfiles", "schema_url", 3},
    {"Profile", "sample_type", 1},
    {"Profile", "samples", 2},
    {"Profile", "time_unix_nano", 3},
    {"Profile", "duration_nano", 4},
    {"Profile", "period_type", 5},
    {"Profile", "period", 6},
    {"Profile", "profile_id", 7},
    {"Profile", "dropped_attributes_count", 8},
    {"Profile", "original_payload_format", 9},
    {"Profile", "original_payload", 10},
    {"Profile", "attribute_indices", 11},
    {"Link", "trace_id", 1},
    {"Link", "span_id", 2},
    {"ValueType", "type_strindex", 1},
    {"ValueType", "unit_strindex", 2},
    {"Sample", "stack_index", 1},
    {"Sample", "attribute_indices", 2},
    {"Sample", "link_index", 3},
    {"Sample", "values", 4},
    {"Sample", "timestamps_unix_nano", 5},
    {"Mapping", "memory_start", 1},
    {"Mapping", "memory_limit", 2},
    {"Mapping", "file_offset", 3},
    {"Mapping", "filename_strindex", 4},
    {"Mapping", "attribute_indices", 5},
    {"Stack", "location_indices", 1},
    {"Location", "mapping_index", 1},
    {"Location", "address", 2},
    {"Location", "lines", 3},
    {"Location", "attribute_indices", 4},
    {"Line", "function_index", 1},
    {"Line", "line", 2},
    {"Line", "column", 3},
    {"Function", "name_strindex", 1},
    {"Function", "system_name_strindex", 2},
    {"Function", "filename_strindex", 3},
    {"Function", "start_line", 4},
    {"KeyValueAndUnit", "key_strindex", 1},
    {"KeyValueAndUnit", "value", 2},
    {"KeyValueAndUnit", "unit_strindex", 3},
    {"ExportProfilesServiceRequest", "resource_profiles", 1},
    {"ExportProfilesServiceRequest", "dictionary", 2},
    {"ExportProfilesServiceResponse", "partial_success", 1},
    {"ExportProfilesPartialSuccess", "rejected_profiles", 1},
    {"ExportProfilesPartialSuccess", "error_message", 2},
};

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

/* The number of `field` declared in `message {...}` of proto text, or 0.
 * Tolerates declarations wrapped over two lines. */
static unsigned proto_number(const char *text, const char *message,
                             const char *field) {
  char head[128];
  snprintf(head, sizeof head, "\nmessage %s {", message);
  const char *m = strstr(text, head);
  if (!m) return 0;
  const char *end = strstr(m, "\n}");
  char pat[128];
  snprintf(pat, sizeof pat, " %s = ", field);
  for (const char *p = strstr(m, pat); p && p < end; p = strstr(p + 1, pat)) {
    const char *bol = p;                /* skip comments */
    while (bol > m && bol[-1] != '\n') bol--;
    if (strstr(bol, "//") && strstr(bol, "//") < p) continue;
    return (unsigned)strtoul(p + strlen(pat), NULL, 10);
  }
  return 0;
}

static const ProtobufCMessageDescriptor *descriptor_of(const char *message) {
  static const struct {
    const char *name;
    const ProtobufCMessageDescriptor *d;
  } ds[] = {
#define D(n, sym) {n, &opentelemetry__proto__profiles__v1development__##sym}
      D("ProfilesDictionary", profiles_dictionary__descriptor),
      D("ProfilesData", profiles_data__descriptor),
      D("ResourceProfiles", resource_profiles__descriptor),
      D("ScopeProfiles", scope_profiles__descriptor),
      D("Profile", profile__descriptor),
      D("Link", link__descriptor),
      D("ValueType", value_type__descriptor),
      D("Sample", sample__descriptor),
      D("Mapping", mapping__descriptor),
      D("Stack", stack__descriptor),
      D("Location", location__descriptor),
      D("Line", line__descriptor),
      D("Function", function__descriptor),
      D("KeyValueAndUnit", key_value_and_unit__descriptor),
#undef D
#define C(n, sym)                                                           \
  {n, &opentelemetry__proto__collector__profiles__v1development__##sym}
      C("ExportProfilesServiceRequest",
        export_profiles_service_request__descriptor),
      C("ExportProfilesServiceResponse",
        export_profiles_service_response__descriptor),
      C("ExportProfilesPartialSuccess",
        export_profiles_partial_success__descriptor),
#undef C
  };
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
    if (strcmp(ds[i].name, message) == 0) return ds[i].d;
  return NULL;
}

static void test_profiles_field_numbers_pinned(void **state) {
  char *prof = slurp(EL_SOURCE_DIR
                     "/proto/opentelemetry/proto/profiles/v1development/"
                     "profiles.proto");
  char *svc = slurp(EL_SOURCE_DIR "/proto/opentelemetry/proto/collector/"
                    "profiles/v1development/profiles_service.proto");
  assert_non_null(strstr(prof, "\npackage opentelemetry.proto.profiles."
                               "v1development;"));
  assert_non_null(strstr(svc, "\npackage opentelemetry.proto.collector."
                              "profiles.v1development;"));
  assert_non_null(strstr(svc, "service ProfilesService {"));
  assert_non_null(strstr(svc, "rpc Export(ExportProfilesServiceRequest)"));
  for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
    const pin_t *p = &pins[i];
    const char *text = strncmp(p->message, "Export", 6) ? prof : svc;
    unsigned got = proto_number(text, p->message, p->field);
    if (got != p->number)
      fail_msg("proto/: %s.%s = %u, want %u", p->message, p->field, got,
               p->number);
    const ProtobufCMessageDescriptor *d = descriptor_of(p->message);
    assert_non_null(d);
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(d, p->field);
    if (!f || f->id != p->number)
      fail_msg("generated: %s.%s = %u, want %u", p->message, p->field,
               f ? f->id : 0, p->number);
  }
  /* And nothing more: every generated field is pinned. */
  size_t nfields = 0;
  const char *seen[32];
  size_t nseen = 0;
  for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
    bool dup = false;
    for (size_t k = 0; k < nseen; k++)
      if (strcmp(seen[k], pins[i].message) == 0) dup = true;
    if (dup) continue;
    seen[nseen++] = pins[i].message;
    nfields += descriptor_of(pins[i].message)->n_fields;
  }
  assert_int_equal(nfields, sizeof pins / sizeof pins[0]);
  free(prof);
  free(svc);
}

/* {====== errors ======} */

static int count_only(void *ud, const uint8_t *b, size_t n, size_t nrec) {
  (*(int *)ud)++;
  return 0;
}

static int refuse(void *ud, const uint8_t *b, size_t n, size_t nrec) {
  return EL_ECLOSED;
}

static void test_bad_arguments_and_emit_error(void **state) {
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_log_t l = {.body = {"x", 1}};
  el_tm_log(st, &l);
  el_tm_store_flush(st);
  int n = 0;
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_METRICS, g.b[1], 0,
                                  count_only, &n), EL_EINVAL);
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_LOGS, NULL, 0, count_only, &n),
                   EL_EINVAL);
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_LOGS, g.b[1], 0, refuse, NULL),
                   EL_ECLOSED);
  assert_int_equal(n, 0);
  assert_string_equal(el_otlp_signal_name(EL_TM_SIGNAL_PROFILES), "profiles");
  assert_ptr_equal(
      el_otlp_request_descriptor(EL_TM_SIGNAL_PROFILES),
      &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor);
  assert_null(el_otlp_response_descriptor(EL_TM_NSIGNALS));
  el_tm_store_free(st);
  grab_free(&g);
}

static void test_out_of_memory_sweep(void **state) {
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_metric_desc_t d = {"m", NULL, NULL, EL_TM_GAUGE, 0, false};
  el_tm_attr_t a[2] = {iattr("i", 1), sattr("s", "str")};
  el_tm_frame_t f = {{"fn", 2}, {"file", 4}, 1, 1};
  el_tm_log_t l = {.body = {"x", 1}, .attrs = a, .nattrs = 2};
  el_tm_span_t sp = {.name = "s", .attrs = a, .nattrs = 2};
  el_tm_profile_sample_t s = {"p", "cpu", "samples", &f, 1, 1, 0, a, 2};
  for (int i = 0; i < 50; i++) {
    el_tm_metric_point(st, &d,
                       &(el_tm_point_t){.attrs = a,
                                        .nattrs = 2,
                                        .time_unix_ns = 1,
                                        .is_int = true,
                                        .ival = i});
    el_tm_log(st, &l);
    el_tm_span(st, &sp);
    el_tm_profile_sample(st, &s);
  }
  el_tm_store_flush(st);
  size_t base = el_mem_in_use();
  for (int sig = 0; sig < EL_TM_NSIGNALS; sig++) {
    int n = 0;
    uint64_t before = el_mem_alloc_count();
    assert_int_equal(el_otlp_encode(sig, g.b[sig], 1500, count_only, &n), 0);
    uint64_t total = el_mem_alloc_count() - before;
    assert_true(n > 1);
    for (uint64_t k = 1; k <= total + 1; k++) {
      el_mem_fail_after(k);
      int rc = el_otlp_encode(sig, g.b[sig], 1500, count_only, &n);
      el_mem_fail_after(0);
      assert_true(rc == 0 || rc == EL_ENOMEM);
      assert_int_equal(el_mem_in_use(), base);
    }
  }
  el_tm_store_free(st);
  grab_free(&g);
}

/* {====== console exporter ======} */

/* A trace request by hand: one span, trace_id 0xab 0xcd, name 'a' n1 n2
 * (ExportTraceServiceRequest.resource_spans 1 > ResourceSpans.scope_spans 2
 * > ScopeSpans.spans 2 > Span.trace_id 1, Span.name 5). */
static void span_request(uint8_t out[15], uint8_t n1, uint8_t n2) {
  const uint8_t r[15] = {0x0a, 0x0d, 0x12, 0x0b, 0x12, 0x09, 0x0a, 0x02,
                         0xab, 0xcd, 0x2a, 0x03, 'a',  n1,   n2};
  memcpy(out, r, sizeof r);
}

/* el_otlp_json_in: the same line as el_otlp_json, with one arena over
 * several renders (reset after each, a failed one included); a string
 * that is not UTF-8 renders NULL (jansson's dump checks it: the render
 * skips json_string's check); after a render this thread's jansson
 * allocates from malloc again, not from the arena. Expected lines by hand
 * (OTLP/JSON: hex ids, escapes). */
static void test_console_json_arena(void **state) {
  (void)state;
  size_t base = el_mem_in_use();
  uint8_t ok[15], bad[15];
  span_request(ok, '"', 0x01);
  span_request(bad, 0xff, 0x01);
  const char *want =
      "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{"
      "\"traceId\":\"abcd\",\"name\":\"a\\\"\\u0001\"}]}]}]}";
  el_arena_t a = {0};
  for (int round = 0; round < 3; round++) {
    char *j = el_otlp_json_in(&a, EL_TM_SIGNAL_TRACES, ok, sizeof ok);
    assert_non_null(j);
    assert_string_equal(j, want);
    el_free(j);
    assert_int_equal(a.bytes, 0); /* reset */
    assert_null(el_otlp_json_in(&a, EL_TM_SIGNAL_TRACES, bad, sizeof bad));
    assert_int_equal(a.bytes, 0);
  }
  char *j = el_otlp_json(EL_TM_SIGNAL_TRACES, ok, sizeof ok);
  assert_string_equal(j, want);
  el_free(j);
  assert_null(el_otlp_json(EL_TM_SIGNAL_TRACES, bad, sizeof bad));
  /* jansson outside a render: malloc'd, freed by json_decref */
  json_t *o = json_object();
  assert_int_equal(json_object_set_new(o, "k", json_string("v")), 0);
  assert_int_equal(a.bytes, 0);
  json_decref(o);
  el_arena_free(&a);
  assert_int_equal(el_mem_in_use(), base);
}

/* JSON rendering of values proto3 JSON spells specially; garbage bytes. */
static void test_console_json_special_values(void **state) {
  grab_t g = {0};
  el_tm_store_t *st = new_store(&g);
  el_tm_metric_desc_t d = {"m", NULL, NULL, EL_TM_GAUGE, 0, false};
  el_tm_metric_point(st, &d, &(el_tm_point_t){.dval = NAN});
  el_tm_metric_point(st, &d, &(el_tm_point_t){.dval = -INFINITY});
  el_tm_metric_point(st, &d, &(el_tm_point_t){0});
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.is_int = true, .ival = INT64_MIN});
  el_tm_store_flush(st);
  reqs_t r = {0};
  assert_int_equal(el_otlp_encode(EL_TM_SIGNAL_METRICS, g.b[0], 0, collect,
                                  &r), 0);
  char *j = el_otlp_json(EL_TM_SIGNAL_METRICS, r.buf[0], r.len[0]);
  assert_non_null(j);
  assert_non_null(strstr(j, "\"dataPoints\":[{\"asDouble\":\"NaN\"},"
                            "{\"asDouble\":\"-Infinity\"},"
                            "{\"asDouble\":0.0},"
                            "{\"asInt\":\"-9223372036854775808\"}]"));
  el_free(j);
  /* Allocation failures while rendering: NULL, nothing leaked. */
  size_t base = el_mem_in_use();
  for (uint64_t k = 1; k < 40; k++) {
    el_mem_fail_after(k);
    char *x = el_otlp_json(EL_TM_SIGNAL_METRICS, r.buf[0], r.len[0]);
    el_mem_fail_after(0);
    el_free(x);
    assert_int_equal(el_mem_in_use(), base);
  }
  /* Bytes that are not a request. */
  static const uint8_t junk[] = {0x0a, 0x05, 0x01};
  assert_null(el_otlp_json(EL_TM_SIGNAL_METRICS, junk, sizeof junk));
  assert_null(el_otlp_json(EL_TM_NSIGNALS, r.buf[0], r.len[0]));
  reqs_free(&r);
  el_tm_store_free(st);
  grab_free(&g);
}

/* Writes that fail count every record of the batch as dropped, and the
 * warning says how many. */
static char console_warn[8][256];
static int nconsole_warn;
static void console_hook(void *ud, el_log_level_t level, const char *msg) {
  if (level == EL_LOG_WARN && nconsole_warn < 8)
    snprintf(console_warn[nconsole_warn++], 256, "%s", msg);
}

static void test_console_write_failure_counted(void **state) {
  FILE *full = fopen("/dev/full", "w");
  if (!full) skip();
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c;
  el_tm_exporter_t ex;
  assert_int_equal(el_otlp_console_new(full, 0xf, 300, st, &c, &ex), 0);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_tm_metric_desc_t d = {"m", NULL, NULL, EL_TM_GAUGE, 0, false};
  for (int i = 0; i < 50; i++)
    el_tm_metric_point(
        st, &d, &(el_tm_point_t){.time_unix_ns = 1, .is_int = true, .ival = i});
  el_tm_log_t l = {.body = {"x", 1}};
  el_tm_log(st, &l);
  el_log_level_t was = el_log_threshold;
  el_log_threshold = EL_LOG_WARN;
  nconsole_warn = 0;
  el_log_set_hook(console_hook, NULL);
  assert_int_equal(el_tm_store_flush(st), 0);
  el_log_set_hook(NULL, NULL);
  el_log_threshold = was;
  assert_int_equal(nconsole_warn, 2);
  assert_non_null(strstr(console_warn[0], " 50 data points dropped"));
  assert_non_null(strstr(console_warn[1], " 1 log records dropped"));
  const el_tm_stats_t *stt = el_tm_store_stats(st);
  assert_int_equal(stt->dropped[EL_TM_SIGNAL_METRICS], 50);
  assert_int_equal(stt->dropped[EL_TM_SIGNAL_LOGS], 1);
  assert_int_equal(el_otlp_console_lines(c), 0);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(full);
}

/* {====== random batches: properties ======} */

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {   /* xorshift64*, uniform enough */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

static char rstr_buf[8][300];
static el_strview_t rstr(int slot) {
  static const char alpha[] = "abcXYZ:._-/ \"\\\n\x01\xc3\xa9\xff";
  size_t len = rnd(5) == 0 ? 100 + rnd(200) : rnd(12);
  for (size_t i = 0; i < len; i++)
    rstr_buf[slot][i] = alpha[rnd(sizeof alpha - 1)];
  rstr_buf[slot][len] = '\0';
  return (el_strview_t){rstr_buf[slot], len};
}

static size_t rattrs(el_tm_attr_t *a, el_strview_t *list) {
  size_t n = rnd(4);
  static char keys[4][8];
  for (size_t i = 0; i < n; i++) {
    snprintf(keys[i], sizeof keys[i], "k%u", rnd(6));
    a[i].key = keys[i];
    a[i].type = (el_tm_attr_type_t)rnd(5);
    switch (a[i].type) {
    case EL_TM_STR: a[i].v.s = rstr(4 + (int)i); break;
    case EL_TM_INT: a[i].v.i = (int64_t)rng_state; break;
    case EL_TM_DOUBLE: a[i].v.d = (double)rnd(1000) / 7.0; break;
    case EL_TM_BOOL: a[i].v.b = rnd(2); break;
    case EL_TM_STRLIST:
      list[0] = (el_strview_t){"x", 1};
      list[1] = (el_strview_t){"", 0};
      a[i].v.list.items = list;
      a[i].v.list.n = rnd(3);
      break;
    }
  }
  return n;
}

static void random_ops(el_tm_store_t *st, int nops) {
  static const char *names[] = {"m0", "m1", "m2"};
  static const char *units[] = {"", "By", "ns"};
  for (int op = 0; op < nops; op++) {
    el_tm_attr_t a[4];
    el_strview_t list[2];
    size_t na = rattrs(a, list);
    switch (rnd(6)) {
    case 0: {
      el_tm_metric_desc_t d = {names[rnd(3)], rnd(2) ? "desc" : NULL,
                               units[rnd(3)], (el_tm_metric_kind_t)rnd(2),
                               (el_tm_temporality_t)rnd(3), rnd(2)};
      el_tm_metric_point(st, &d,
                         &(el_tm_point_t){.attrs = a,
                                          .nattrs = na,
                                          .start_unix_ns = rnd(3),
                                          .time_unix_ns = rng_state,
                                          .is_int = rnd(2),
                                          .ival = (int64_t)rng_state,
                                          .dval = 1.5});
      break;
    }
    case 1: {
      uint8_t tid[16] = {1}, sid[8] = {2};
      el_tm_log_t l = {.time_unix_ns = rnd(100), .observed_unix_ns = 1,
                       .severity_number = (int)rnd(25), .body = rstr(0),
                       .severity_text = rnd(2) ? "sev" : NULL, .attrs = a,
                       .nattrs = na, .trace_id = rnd(2) ? tid : NULL,
                       .span_id = rnd(2) ? sid : NULL, .host_log = rnd(2)};
      el_tm_log(st, &l);
      break;
    }
    case 2: {
      el_tm_span_t sp = {.name = rstr_buf[1], .kind = 1 + rnd(5),
                         .start_unix_ns = 1, .end_unix_ns = 2, .attrs = a,
                         .nattrs = na, .status_code = (int)rnd(3)};
      rstr(1);
      el_tm_random_id(sp.trace_id, 16);
      el_tm_random_id(sp.span_id, 8);
      if (rnd(2)) el_tm_random_id(sp.parent_span_id, 8);
      el_tm_span(st, &sp);
      break;
    }
    case 3: {
      el_tm_frame_t f[4];
      size_t nf = rnd(5);
      for (size_t i = 0; i < nf; i++)
        f[i] = (el_tm_frame_t){rstr(2 + (int)(i & 1)),
                               rnd(2) ? rstr(3) : (el_strview_t){NULL, 0},
                               rnd(3), rnd(3)};
      el_tm_profile_sample_t s = {rnd(2) ? "k1" : "k2", "cpu",
                                  rnd(2) ? "samples" : "ns", f, nf,
                                  rnd(10), rnd(2) ? 5 : 0, a, na};
      el_tm_profile_sample(st, &s);
      break;
    }
    case 4: {
      el_tm_attr_t r = {.key = rnd(2) ? "service.name" : "x",
                        .type = EL_TM_STR, .v.s = rstr(0)};
      el_tm_store_set_resource(st, &r);
      break;
    }
    default:
      break;
    }
  }
}

typedef struct prop_s {
  el_tm_signal_t sig;
  size_t max;
  size_t nrec;
  int nreq;
} prop_t;

/* Records of a request, counted from the decoded message. */
static size_t decoded_records(el_tm_signal_t sig, const uint8_t *b,
                              size_t n) {
  ProtobufCMessage *m = protobuf_c_message_unpack(
      el_otlp_request_descriptor(sig), NULL, n, b);
  assert_non_null(m);
  size_t cnt = 0;
  if (sig == EL_TM_SIGNAL_METRICS) {
    MetricsReq *r = (MetricsReq *)m;
    for (size_t i = 0; i < r->n_resource_metrics; i++)
      for (size_t j = 0; j < r->resource_metrics[i]->n_scope_metrics; j++) {
        Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm =
            r->resource_metrics[i]->scope_metrics[j];
        for (size_t k = 0; k < sm->n_metrics; k++)
          cnt += sm->metrics[k]->gauge ? sm->metrics[k]->gauge->n_data_points
                                       : sm->metrics[k]->sum->n_data_points;
      }
  } else if (sig == EL_TM_SIGNAL_LOGS) {
    Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceRequest *r =
        (void *)m;
    for (size_t i = 0; i < r->n_resource_logs; i++)
      for (size_t j = 0; j < r->resource_logs[i]->n_scope_logs; j++)
        cnt += r->resource_logs[i]->scope_logs[j]->n_log_records;
  } else if (sig == EL_TM_SIGNAL_TRACES) {
    Opentelemetry__Proto__Collector__Trace__V1__ExportTraceServiceRequest *r =
        (void *)m;
    for (size_t i = 0; i < r->n_resource_spans; i++)
      for (size_t j = 0; j < r->resource_spans[i]->n_scope_spans; j++)
        cnt += r->resource_spans[i]->scope_spans[j]->n_spans;
  } else {
    ProfilesReq *r = (ProfilesReq *)m;
    Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d =
        r->dictionary;
    for (size_t i = 0; i < r->n_resource_profiles; i++)
      for (size_t j = 0; j < r->resource_profiles[i]->n_scope_profiles; j++) {
        Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp =
            r->resource_profiles[i]->scope_profiles[j];
        for (size_t k = 0; k < sp->n_profiles; k++) {
          Opentelemetry__Proto__Profiles__V1development__Profile *p =
              sp->profiles[k];
          cnt += p->n_samples;
          for (size_t q = 0; q < p->n_samples; q++) {
            assert_true((size_t)p->samples[q]->stack_index <
                        d->n_stack_table);
            for (size_t a = 0; a < p->samples[q]->n_attribute_indices; a++)
              assert_true((size_t)p->samples[q]->attribute_indices[a] <
                          d->n_attribute_table);
          }
        }
      }
    for (size_t i = 0; i < d->n_stack_table; i++)
      for (size_t k = 0; k < d->stack_table[i]->n_location_indices; k++)
        assert_true((size_t)d->stack_table[i]->location_indices[k] <
                    d->n_location_table);
    for (size_t i = 1; i < d->n_location_table; i++)
      assert_true((size_t)d->location_table[i]->lines[0]->function_index <
                  d->n_function_table);
    for (size_t i = 1; i < d->n_function_table; i++)
      assert_true((size_t)d->function_table[i]->name_strindex <
                  d->n_string_table);
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return cnt;
}

static int check_request(void *ud, const uint8_t *b, size_t n, size_t nrec) {
  prop_t *p = ud;
  assert_true(p->max == 0 || n <= p->max);
  assert_int_equal(decoded_records(p->sig, b, n), nrec);
  char *j = el_otlp_json(p->sig, b, n);
  assert_non_null(j);
  json_error_t err;
  json_t *back = json_loads(j, 0, &err);
  assert_non_null(back);
  json_decref(back);
  el_free(j);
  p->nrec += nrec;
  p->nreq++;
  return 0;
}

/* Random emissions (strings with quotes, control bytes, invalid UTF-8,
 * several resources and metrics, big and empty values) encoded under
 * random bounds: every request fits, decodes, renders as valid JSON, has
 * in-range profile indices, and requests + drops account for every
 * record. */
static void test_random_batches_properties(void **state) {
  const char *env = getenv("EL_PROP_SEEDS");   /* longer local runs */
  uint64_t seeds = env ? strtoull(env, NULL, 10) : 150;
  for (uint64_t seed = 1; seed <= seeds; seed++) {
    rng_state = seed * 0x9e3779b97f4a7c15ull;
    grab_t g = {0};
    el_tm_store_t *st = el_tm_store_new("s", "v");
    el_tm_exporter_t ex = {.name = "grab", .ud = &g, .signals = 0xf,
                           .export = grab_export};
    assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
    random_ops(st, 20 + (int)rnd(200));
    assert_int_equal(el_tm_store_flush(st), 0);
    for (int sig = 0; sig < EL_TM_NSIGNALS; sig++) {
      if (!g.b[sig]) continue;
      prop_t p = {sig, rnd(4) == 0 ? 0 : 150 + rnd(3000), 0, 0};
      int dropped = el_otlp_encode(sig, g.b[sig], p.max, check_request, &p);
      assert_true(dropped >= 0);
      assert_int_equal(p.nrec + (size_t)dropped, el_tm_batch_count(g.b[sig]));
      if (p.max == 0) assert_int_equal(p.nreq, 1);
    }
    el_tm_store_free(st);
    grab_free(&g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metrics_decoded_by_protoc),
      cmocka_unit_test(test_logs_two_resources_decoded_by_protoc),
      cmocka_unit_test(test_traces_decoded_by_protoc),
      cmocka_unit_test(test_profiles_dictionary_decoded_by_protoc),
      cmocka_unit_test(test_profiles_empty_stack_is_index_0),
      cmocka_unit_test(test_profiles_empty_function_is_index_0),
      cmocka_unit_test(test_split_at_max_bytes),
      cmocka_unit_test(test_oversized_record_dropped_and_counted),
      cmocka_unit_test(test_profiles_split_self_contained),
      cmocka_unit_test(test_profiles_field_numbers_pinned),
      cmocka_unit_test(test_bad_arguments_and_emit_error),
      cmocka_unit_test(test_out_of_memory_sweep),
      cmocka_unit_test(test_console_json_special_values),
      cmocka_unit_test(test_console_json_arena),
      cmocka_unit_test(test_console_write_failure_counted),
      cmocka_unit_test(test_random_batches_properties),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
