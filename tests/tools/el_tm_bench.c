/* el_tm_bench: speed of the telemetry store and the OTLP encoder, for
 * scripts/bench.d/telemetry.sh. Emits N data points (metric "heap_size",
 * attributes evCap and heapCapset, like the default heap processors) and
 * N log records (two attributes), flushes, and encodes both batches into
 * 4 MiB requests; prints one line per phase:
 *   <phase> records=<n> ns_per_record=<CPU ns> allocs_per_record=<y>
 * Usage: el_tm_bench [N] (default 1000000). Figures only. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "otlp/otlp_encode.h"
#include "telemetry/telemetry.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static el_tm_batch_t *got[EL_TM_NSIGNALS];

static int take(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  got[sig] = b;
  return 0;
}

typedef struct {
  size_t bytes, requests;
} sink_t;

static int sink(void *ud, const uint8_t *b, size_t n, size_t nrec) {
  sink_t *s = ud;
  s->bytes += n;
  s->requests++;
  return 0;
}

static void report(const char *phase, long n, double t0, uint64_t a0) {
  double ns = (now_ns() - t0) / (double)n;
  double allocs = (double)(el_mem_alloc_count() - a0) / (double)n;
  printf("%-14s records=%ld ns_per_record=%.1f allocs_per_record=%.5f\n",
         phase, n, ns, allocs);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  el_tm_store_t *st = el_tm_store_new("eventlog-live", "bench");
  el_tm_exporter_t ex = {.name = "take", .signals = 3, .export = take};
  el_tm_store_add_exporter(st, &ex);
  el_tm_attr_t svc = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {"bench", 5}};
  el_tm_store_set_resource(st, &svc);
  el_tm_metric_desc_t d = {"ghc_eventlog_HeapSize", "The current heap size.",
                           "By", EL_TM_GAUGE, 0, false};
  double t0 = now_ns();
  uint64_t a0 = el_mem_alloc_count();
  for (long i = 0; i < n; i++) {
    el_tm_attr_t a[2] = {{.key = "evCap", .type = EL_TM_INT, .v.i = i & 3},
                         {.key = "heapCapset", .type = EL_TM_INT, .v.i = 0}};
    el_tm_metric_point(
        st, &d,
        &(el_tm_point_t){.attrs = a,
                         .nattrs = 2,
                         .start_unix_ns = 1785000000000000000u,
                         .time_unix_ns = 1785000000000000000u + (uint64_t)i,
                         .is_int = true,
                         .ival = i * 4096});
  }
  report("emit_point", n, t0, a0);
  t0 = now_ns();
  a0 = el_mem_alloc_count();
  for (long i = 0; i < n; i++) {
    el_tm_attr_t a[2] = {{.key = "evCap", .type = EL_TM_INT, .v.i = i & 3},
                         {.key = "kind", .type = EL_TM_STR,
                          .v.s = {"UserMarker", 10}}};
    el_tm_log_t l = {.time_unix_ns = (uint64_t)i, .observed_unix_ns = 1,
                     .severity_number = 1, .body = {"marker text", 11},
                     .attrs = a, .nattrs = 2};
    el_tm_log(st, &l);
  }
  report("emit_log", n, t0, a0);
  t0 = now_ns();
  a0 = el_mem_alloc_count();
  el_tm_store_flush(st);
  report("flush", 2 * n, t0, a0);
  printf("peak_mem_bytes=%zu (%.1f per record)\n", el_mem_peak(),
         (double)el_mem_peak() / (2.0 * n));
  for (int sig = 0; sig < 2; sig++) {
    sink_t s = {0};
    t0 = now_ns();
    a0 = el_mem_alloc_count();
    el_otlp_encode(sig, got[sig], EL_OTLP_DEFAULT_MAX_BYTES, sink, &s);
    report(sig ? "encode_logs" : "encode_points", n, t0, a0);
    printf("%-14s requests=%zu bytes_per_record=%.1f\n", "", s.requests,
           (double)s.bytes / (double)n);
    el_tm_batch_free(got[sig]);
  }
  el_tm_store_free(st);
  return 0;
}
