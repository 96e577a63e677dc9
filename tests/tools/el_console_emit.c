/* el_console_emit: emit a fixed, hand-chosen set of telemetry (metrics,
 * logs, spans, profile samples) through the telemetry store into the
 * console exporter on stdout, for tests/e2e/test_console.sh to check with
 * jq. Usage: el_console_emit [--points N] [--max-bytes N]
 *   --points N     also emit N extra gauge points "bulk" (value i)
 *   --max-bytes N  request size bound of the console exporter */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp/exp_console.h"
#include "telemetry/telemetry.h"

static el_tm_attr_t iattr(const char *k, int64_t v) {
  return (el_tm_attr_t){.key = k, .type = EL_TM_INT, .v.i = v};
}

static el_tm_attr_t sattr(const char *k, const char *v) {
  return (el_tm_attr_t){.key = k, .type = EL_TM_STR, .v.s = {v, strlen(v)}};
}

static void emit_all(el_tm_store_t *st, long points) {
  el_tm_metric_desc_t hs = {"ghc_eventlog_HeapSize", "The current heap size.",
                            "By", EL_TM_GAUGE, 0, false};
  el_tm_metric_desc_t cu = {"ghc_eventlog_CapabilityUsageDuration", NULL,
                            "ns", EL_TM_SUM, EL_TM_TEMP_DELTA, true};
  el_tm_attr_t a[2] = {iattr("evCap", 0), iattr("heapCapset", -1)};
  el_tm_metric_point(st, &hs,
                     &(el_tm_point_t){.attrs = a,
                                      .nattrs = 2,
                                      .start_unix_ns = 1785000000000000000u,
                                      .time_unix_ns = 1785000000123456789u,
                                      .is_int = true,
                                      .ival = 8388608});
  el_tm_metric_point(st, &hs, &(el_tm_point_t){.is_int = true});
  el_tm_attr_t c[3] = {iattr("cap", 0), sattr("category", "Mutator"),
                       sattr("user", "7")};
  el_tm_metric_point(st, &cu,
                     &(el_tm_point_t){.attrs = c,
                                      .nattrs = 3,
                                      .start_unix_ns = 1,
                                      .time_unix_ns = 18446744073709551615u,
                                      .dval = 0.5});
  el_tm_metric_desc_t bulk = {"bulk", NULL, "1", EL_TM_GAUGE, 0, false};
  for (long i = 0; i < points; i++)
    el_tm_metric_point(
        st, &bulk,
        &(el_tm_point_t){
            .time_unix_ns = (el_unix_ns_t)i + 1, .is_int = true, .ival = i});

  el_tm_attr_t la[2] = {iattr("evCap", 0), sattr("kind", "UserMarker")};
  el_tm_log_t l = {.time_unix_ns = 100, .observed_unix_ns = 100,
                   .severity_number = EL_TM_SEV_TRACE,
                   .body = {"say \"hi\"\n\ttab", 13}, .attrs = la,
                   .nattrs = 2};
  el_tm_log(st, &l);
  static const uint8_t tid[16] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
                                  0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
                                  0x0c, 0x0d, 0xfe, 0xff};
  static const uint8_t sid[8] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x11,
                                 0x22, 0x33};
  el_tm_log_t h = {.time_unix_ns = 200, .observed_unix_ns = 201,
                   .severity_number = EL_TM_SEV_WARN, .severity_text = "WARN",
                   .body = {"host message", 12}, .trace_id = tid,
                   .span_id = sid, .host_log = true};
  el_tm_log(st, &h);

  el_strview_t args[2] = {{"./oddball", 9}, {"+RTS", 4}};
  el_tm_attr_t sa[4] = {
      sattr("thread", "7"), {.key = "flag", .type = EL_TM_BOOL, .v.b = true},
      {.key = "ratio", .type = EL_TM_DOUBLE, .v.d = 0.25},
      {.key = "args", .type = EL_TM_STRLIST, .v.list = {args, 2}}};
  el_tm_span_t sp = {.name = "ghc_eventlog_ThreadState Blocked",
                     .kind = EL_TM_SPAN_INTERNAL, .start_unix_ns = 1000,
                     .end_unix_ns = 2000, .attrs = sa, .nattrs = 4,
                     .status_code = 1};
  memcpy(sp.trace_id, tid, 16);
  memcpy(sp.span_id, sid, 8);
  el_tm_span(st, &sp);
  el_tm_span_t child = sp;
  child.name = "child";
  child.attrs = NULL;
  child.nattrs = 0;
  child.status_code = 0;
  child.kind = EL_TM_SPAN_CLIENT;
  memcpy(child.parent_span_id, sid, 8);
  memset(child.span_id, 0x11, 8);
  el_tm_span(st, &child);

  el_tm_frame_t f[2] = {{{"Main:foo", 8}, {"src/Foo.hs", 10}, 10, 5},
                        {{"Main:main", 9}, {NULL, 0}, 0, 0}};
  el_tm_attr_t pa[3] = {sattr("__name__", "ghc_eventlog_CallStackProfile"),
                        iattr("capability", 0), iattr("thread", 7)};
  el_tm_profile_sample_t s = {"call_stack_profile", "cpu", "samples", f, 2,
                              1, 1785000000000000001u, pa, 3};
  el_tm_profile_sample(st, &s);
}

int main(int argc, char **argv) {
  long points = 0;
  size_t max_bytes = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--points") == 0) points = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--max-bytes") == 0)
      max_bytes = (size_t)atol(argv[i + 1]);
  }
  el_tm_store_t *st = el_tm_store_new("eventlog-live", "0.1.0");
  el_otlp_console_t *con = NULL;
  el_tm_exporter_t ex;
  if (!st || el_otlp_console_new(stdout, 0xf, max_bytes, st, &con, &ex) ||
      el_tm_store_add_exporter(st, &ex))
    return 1;
  el_tm_attr_t svc = sattr("service.name", "oddball");
  el_tm_store_set_resource(st, &svc);
  emit_all(st, points);
  int rc = el_tm_store_shutdown(st, 1000);
  const el_tm_stats_t *stats = el_tm_store_stats(st);
  unsigned long long dropped = 0;
  for (int i = 0; i < EL_TM_NSIGNALS; i++) dropped += stats->dropped[i];
  fprintf(stderr, "lines=%llu dropped=%llu\n",
          (unsigned long long)el_otlp_console_lines(con), dropped);
  el_tm_store_free(st);
  el_otlp_console_free(con);
  return rc ? 1 : 0;
}
