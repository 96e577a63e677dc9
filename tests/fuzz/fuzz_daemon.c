/* fuzz_daemon.c: libFuzzer target for the daemon's whole path (issue 13):
 * the decoder, the host (dispatch, reorder buffer, session clock, timers,
 * C helpers) and every default processor (lua/eventlog_live/processors,
 * all of them on, traces too, aggregate and export every 1 ms of eventlog
 * time so windows close and export often), into the telemetry store with
 * a null exporter that frees each batch. Built only with EL_FUZZ=ON.
 *
 * Each input is one recorded file: scanned ahead (el_src_consumer_t.scan,
 * as the daemon does for a regular file), then fed in two pieces split at
 * a point taken from its last byte, the session finished and the host
 * ended. A crash, a sanitizer report or a hang (libFuzzer's -timeout) is a
 * finding; a decode error is not (it is reported, as the daemon does). The
 * host is built afresh per input (about 1 ms), so inputs do not depend on
 * each other. lua/ is found through EL_SOURCE_DIR (environment, else the
 * source tree it was built from). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/host.h"
#include "source/src_consumer.h"
#include "telemetry/telemetry.h"

static char lua_dir[4096];

/* The null exporter: takes each batch and frees it. */
static int export_null(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  (void)ud;
  (void)sig;
  el_tm_batch_free(b);
  return 0;
}

static void quiet(void *ud, el_log_level_t level, const char *text) {
  (void)ud;
  (void)level;
  (void)text;
}

/* el.config as the daemon builds it (src/cmd/daemon.c config_to_lua),
 * every processor on with 1 ms windows. */
static int configure(el_host_t *h) {
  static const char *const procs[] = {
      "logs.thread_label",           "logs.user_marker",
      "logs.user_message",           "metrics.blocks_size",
      "metrics.capability_usage",    "metrics.heap_allocated",
      "metrics.heap_live",           "metrics.heap_prof_sample",
      "metrics.heap_size",           "metrics.mem_current",
      "metrics.mem_needed",          "metrics.mem_returned",
      "traces.capability_usage",     "traces.thread_state",
      "profiles.call_stack_profile", "profiles.cost_centre_stack_profile"};
  int rc = el_host_set_config_integer(h, "flush_ns", 1000000);
  rc |= el_host_set_config_integer(h, "batch_ns", 1000000);
  rc |= el_host_set_config(h, "breakdown", "-hT");
  for (size_t i = 0; i < sizeof procs / sizeof *procs; i++) {
    char k[160];
    const char *p = procs[i];
    snprintf(k, sizeof k, "processors.%s.enabled", p);
    rc |= el_host_set_config_boolean(h, k, 1);
    snprintf(k, sizeof k, "processors.%s.name", p);
    rc |= el_host_set_config(h, k, strchr(p, '.') + 1);
    snprintf(k, sizeof k, "processors.%s.aggregate_ns", p);
    rc |= el_host_set_config_integer(h, k, 1000000);
    snprintf(k, sizeof k, "processors.%s.export_ns", p);
    rc |= el_host_set_config_integer(h, k, 1000000);
  }
  rc |= el_host_set_config_integer(
      h, "processors.metrics.capability_usage.max_threads", 4);
  return rc;
}

/* The entry points libFuzzer calls: once at start, then with each input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *src = getenv("EL_SOURCE_DIR");
  snprintf(lua_dir, sizeof lua_dir, "%s/lua", src ? src : EL_SOURCE_DIR);
  el_log_set_hook(quiet, NULL);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) {
  el_tm_store_t *st = el_tm_store_new("eventlog-live", EL_VERSION);
  el_host_opts_t o;
  memset(&o, 0, sizeof o);
  o.lua_dir = lua_dir;
  el_host_t *h = st ? el_host_new(&o) : NULL;
  if (!h) abort();
  el_host_set_store(h, st);
  el_tm_exporter_t ex = {.name = "null",
                         .signals = (1u << EL_TM_NSIGNALS) - 1,
                         .export = export_null};
  if (el_tm_store_add_exporter(st, &ex) < 0 || configure(h) != 0) abort();
  if (el_host_load_module(h, "eventlog_live.processors.main") != 0) {
    fprintf(stderr, "fuzz_daemon: %s\n", el_host_error(h));
    abort(); /* the processors must load: EL_SOURCE_DIR wrong? */
  }
  el_src_consumer_t c;
  el_host_consumer(h, &c);
  c.reset(c.ud);
  if (len) { /* the scan reads a file: the input in a memory file */
    int fd = memfd_create("fuzz_daemon", 0);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len) abort();
    c.scan(c.ud, fd, 0, len);
    close(fd);
  }
  size_t cut = len ? data[len - 1] * len / 256 : 0;
  int rc = c.feed(c.ud, data, cut);
  if (rc == 0) c.feed(c.ud, data + cut, len - cut);
  c.finish(c.ud);
  el_host_end(h);
  el_host_free(h);
  el_tm_store_free(st);
  return 0;
}
