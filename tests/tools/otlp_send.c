/* otlp_send.c: test and benchmark driver for the OTLP exporters.
 *
 * Creates a telemetry store and an OTLP exporter configured like the
 * daemon (exporter flags + OTEL_* / EL_OTLP_* environment), emits known
 * records over a number of export windows, shuts down with the configured
 * shutdown timeout, and prints one JSON object with the exporter's and the
 * store's counters on stdout, and times: emit_s (emitting and flushing the
 * windows, i.e. the loop thread's share), shutdown_s, wall_s, cpu_s.
 *
 * Records carry their index i (0-based, per signal) so a test can check
 * that each arrives exactly once:
 *   metrics  gauge "otlp_send.value", int value i, attribute i=i
 *   logs     body "log <i>", severity INFO, attribute i=i
 *   spans    name "span <i>", attribute i=i
 *   profiles samples of kind "otlp_send_profile", value i, attribute i=i,
 *            frames fn_<i % 5> (Main.hs line i) and main (Main.hs line 1)
 *
 *   otlp_send [exporter options] [--points N] [--logs N] [--spans N]
 *             [--samples N]
 *             [--windows W] [--interval-ms MS] [--attr-bytes B]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/el_common.h"
#include "otlp/otlp.h"
#include "telemetry/telemetry.h"

typedef struct {
  long points, logs, spans, samples, windows, interval_ms, attr_bytes;
} opts_t;

static el_unix_ns_t now_unix_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (el_unix_ns_t)ts.tv_sec * 1000000000u + (el_unix_ns_t)ts.tv_nsec;
}

static double now_s(int clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int emit_window(el_tm_store_t *st, const opts_t *o, long w,
                       const char *pad) {
  el_unix_ns_t t = now_unix_ns();
  el_tm_metric_desc_t desc = {"otlp_send.value", "a test value", "1",
                              EL_TM_GAUGE, EL_TM_TEMP_UNSPECIFIED, false};
  el_tm_attr_t a[2];
  a[0].key = "i";
  a[0].type = EL_TM_INT;
  a[1].key = "pad";
  a[1].type = EL_TM_STR;
  a[1].v.s.p = pad;
  a[1].v.s.len = (size_t)o->attr_bytes;
  size_t na = o->attr_bytes > 0 ? 2 : 1;
  for (long i = o->points * w / o->windows;
       i < o->points * (w + 1) / o->windows; i++) {
    a[0].v.i = i;
    if (el_tm_metric_point(st, &desc,
                           &(el_tm_point_t){.attrs = a,
                                            .nattrs = na,
                                            .time_unix_ns = t + (el_unix_ns_t)i,
                                            .is_int = true,
                                            .ival = i}) < 0)
      return 1;
  }
  for (long i = o->logs * w / o->windows;
       i < o->logs * (w + 1) / o->windows; i++) {
    char body[64];
    int n = snprintf(body, sizeof body, "log %ld", i);
    a[0].v.i = i;
    el_tm_log_t rec = {.time_unix_ns = t, .observed_unix_ns = t,
                       .severity_number = EL_TM_SEV_INFO,
                       .severity_text = "INFO", .body = {body, (size_t)n},
                       .attrs = a, .nattrs = na};
    if (el_tm_log(st, &rec) < 0) return 1;
  }
  for (long i = o->spans * w / o->windows;
       i < o->spans * (w + 1) / o->windows; i++) {
    char name[64];
    snprintf(name, sizeof name, "span %ld", i);
    a[0].v.i = i;
    el_tm_span_t sp = {.name = name, .kind = EL_TM_SPAN_INTERNAL,
                       .start_unix_ns = t, .end_unix_ns = t + 1000,
                       .attrs = a, .nattrs = na};
    el_tm_random_id(sp.trace_id, sizeof sp.trace_id);
    el_tm_random_id(sp.span_id, sizeof sp.span_id);
    if (el_tm_span(st, &sp) < 0) return 1;
  }
  for (long i = o->samples * w / o->windows;
       i < o->samples * (w + 1) / o->windows; i++) {
    char fn[32];
    int n = snprintf(fn, sizeof fn, "fn_%ld", i % 5);
    el_tm_frame_t fr[2] = {{{fn, (size_t)n}, {"Main.hs", 7}, i, 0},
                           {{"main", 4}, {"Main.hs", 7}, 1, 0}};
    a[0].v.i = i;
    el_tm_profile_sample_t ps = {
        .profile_kind = "otlp_send_profile", .sample_type = "samples",
        .sample_unit = "count", .frames = fr, .nframes = 2, .value = i,
        .time_unix_ns = t, .attrs = a, .nattrs = na};
    if (el_tm_profile_sample(st, &ps) < 0) return 1;
  }
  return 0;
}

static void print_stats(const el_otlp_stats_t *s, const el_tm_stats_t *ts,
                        int shutdown_rc, double shutdown_s, double cpu_s,
                        double wall_s, double emit_s) {
  static const char *names[] = {"metrics", "logs", "traces", "profiles"};
  printf("{\"shutdown_rc\":%d,\"shutdown_s\":%.3f,\"cpu_s\":%.4f,"
         "\"wall_s\":%.4f,\"emit_s\":%.4f", shutdown_rc, shutdown_s, cpu_s,
         wall_s, emit_s);
  for (int i = 0; i < EL_TM_NSIGNALS; i++) {
    printf(",\"%s\":{\"emitted\":%llu,\"store_dropped\":%llu,"
           "\"requests\":%llu,\"records\":%llu,\"bytes\":%llu,"
           "\"rejected\":%llu,\"retries\":%llu,\"dropped_queue\":%llu,"
           "\"dropped_failed\":%llu,\"dropped_shutdown\":%llu,"
           "\"dropped_size\":%llu}", names[i],
           (unsigned long long)ts->emitted[i],
           (unsigned long long)ts->dropped[i],
           (unsigned long long)s->requests[i],
           (unsigned long long)s->records[i],
           (unsigned long long)s->bytes[i],
           (unsigned long long)s->rejected[i],
           (unsigned long long)s->retries[i],
           (unsigned long long)s->dropped_queue[i],
           (unsigned long long)s->dropped_failed[i],
           (unsigned long long)s->dropped_shutdown[i],
           (unsigned long long)s->dropped_size[i]);
  }
  printf("}\n");
}

static int parse_args(int argc, char **argv, el_otlp_config_t *cfg,
                      opts_t *o) {
  for (int i = 1; i < argc;) {
    int rc = el_otlp_opts_parse(cfg, argc, argv, &i);
    if (rc < 0) {
      fprintf(stderr, "otlp_send: %s\n", cfg->err);
      return 2;
    }
    if (rc == 1) continue;
    long *dst = NULL;
    if (!strcmp(argv[i], "--points")) dst = &o->points;
    else if (!strcmp(argv[i], "--logs")) dst = &o->logs;
    else if (!strcmp(argv[i], "--spans")) dst = &o->spans;
    else if (!strcmp(argv[i], "--samples")) dst = &o->samples;
    else if (!strcmp(argv[i], "--windows")) dst = &o->windows;
    else if (!strcmp(argv[i], "--interval-ms")) dst = &o->interval_ms;
    else if (!strcmp(argv[i], "--attr-bytes")) dst = &o->attr_bytes;
    else if (!strcmp(argv[i], "-v")) {
      el_log_threshold = EL_LOG_DEBUG;
      i++;
      continue;
    }
    if (!dst || i + 1 >= argc) {
      fprintf(stderr, "otlp_send: bad argument '%s'\n", argv[i]);
      return 2;
    }
    *dst = strtol(argv[i + 1], NULL, 10);
    i += 2;
  }
  if (o->windows < 1) o->windows = 1;
  return 0;
}

int main(int argc, char **argv) {
  opts_t o = {1000, 0, 0, 0, 1, 0, 0};
  el_otlp_config_t cfg;
  el_otlp_config_init(&cfg);
  if (getenv("EL_LOG_LEVEL"))
    el_log_parse_level(getenv("EL_LOG_LEVEL"), &el_log_threshold);
  int rc = parse_args(argc, argv, &cfg, &o);
  if (rc) return rc;
  if (el_otlp_config_resolve(&cfg, NULL, NULL) < 0) {
    fprintf(stderr, "otlp_send: %s\n", cfg.err);
    return 2;
  }
  el_tm_store_t *st = el_tm_store_new("otlp_send", "1.0");
  if (!st || el_otlp_config_apply_resource(&cfg, st) < 0) return 1;
  el_otlp_exporter_t *ex;
  el_tm_exporter_t tm;
  rc = el_otlp_exporter_new(&cfg, (1u << EL_TM_NSIGNALS) - 1, st, &ex, &tm);
  if (rc < 0) {
    fprintf(stderr, "otlp_send: exporter: %s\n", el_strerror(rc));
    return 1;
  }
  el_tm_store_add_exporter(st, &tm);
  char *pad = el_malloc((size_t)o.attr_bytes + 1);
  memset(pad, 'x', (size_t)o.attr_bytes);
  double wall0 = now_s(CLOCK_MONOTONIC);
  double cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
  double sleep_s = 0;               /* --interval-ms sleeps, not emit time */
  for (long w = 0; w < o.windows; w++) {
    if (emit_window(st, &o, w, pad)) return 1;
    el_tm_store_flush(st);
    if (o.interval_ms > 0) {
      struct timespec d = {o.interval_ms / 1000,
                           (o.interval_ms % 1000) * 1000000};
      nanosleep(&d, NULL);
      sleep_s += o.interval_ms / 1000.0;
    }
  }
  double t0 = now_s(CLOCK_MONOTONIC);
  int src = el_tm_store_shutdown(st, cfg.shutdown_timeout_ms);
  el_otlp_exporter_stop(ex);   /* counts what is left as dropped */
  el_otlp_stats_t s;
  el_otlp_exporter_stats(ex, &s);
  el_otlp_exporter_free(ex);
  double t1 = now_s(CLOCK_MONOTONIC);
  double cpu1 = now_s(CLOCK_PROCESS_CPUTIME_ID);
  print_stats(&s, el_tm_store_stats(st), src, t1 - t0, cpu1 - cpu0,
              t1 - wall0, t0 - wall0 - sleep_s);
  el_free(pad);
  el_tm_store_free(st);
  el_otlp_config_free(&cfg);
  return 0;
}
