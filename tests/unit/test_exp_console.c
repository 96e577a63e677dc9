/* test_exp_console.c: the console exporter's writer thread at the end of
 * the output (el_otlp_console_shutdown, through el_tm_store_shutdown as
 * the daemon calls it): what the shutdown budget leaves unwritten is
 * counted, in the store and by the exporter, and said by signal with its
 * cause; into a pipe no line is left cut (a line starts only when the
 * pipe takes it whole); a reader that goes while lines wait for room in
 * its pipe is noticed as a broken pipe, not waited for until the budget
 * runs out; a file is written to its end whatever the budget, unless a
 * signal came (docs/otlp.md §5 "Who waits for stdout").
 *
 * Expected counts are the records the tests emit; what reached a file is
 * counted by decoding its lines with jansson, not by our renderer.
 * ctest-labels: asan */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "otlp/exp_console.h"
#include "telemetry/telemetry.h"

#define M EL_TM_SIGNAL_METRICS
#define L EL_TM_SIGNAL_LOGS

static char warns[8][512];
static int nwarns;
static void hook(void *ud, el_log_level_t level, const char *msg) {
  if (level == EL_LOG_WARN && nwarns < 8)
    snprintf(warns[nwarns++], sizeof warns[0], "%s", msg);
}

static void capture(bool on) {
  if (on) nwarns = 0;
  el_log_threshold = on ? EL_LOG_WARN : EL_LOG_QUIET;
  el_log_set_hook(on ? hook : NULL, NULL);
}

/* The warning that starts with prefix, or NULL. */
static const char *warned(const char *prefix) {
  for (int i = 0; i < nwarns; i++)
    if (strncmp(warns[i], prefix, strlen(prefix)) == 0) return warns[i];
  return NULL;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void emit_points(el_tm_store_t *st, int n) {
  el_tm_metric_desc_t d = {"m", NULL, NULL, EL_TM_GAUGE, 0, false};
  for (int i = 0; i < n; i++)
    assert_int_equal(
        el_tm_metric_point(
            st, &d,
            &(el_tm_point_t){.time_unix_ns = 1, .is_int = true, .ival = i}),
        0);
}

static void emit_logs(el_tm_store_t *st, int n) {
  el_tm_log_t l = {.body = {"a log line of some length", 25}};
  for (int i = 0; i < n; i++) assert_int_equal(el_tm_log(st, &l), 0);
}

/* A console exporter on out with a writer thread, registered on st. */
static el_otlp_console_t *console_on(el_tm_store_t *st, FILE *out,
                                     int to_file) {
  el_otlp_console_t *c;
  el_tm_exporter_t ex;
  assert_int_equal(el_otlp_console_new(out, 0xf, 0, st, &c, &ex), 0);
  assert_int_equal(el_otlp_console_start_writer(c, 64u << 20, to_file), 0);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  return c;
}

/* Log records and data points in the complete lines of f (decoded by
 * jansson); *lines: how many lines. */
static void count_file(FILE *f, long *logs, long *points, long *lines) {
  *logs = *points = *lines = 0;
  fflush(f);
  rewind(f);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    assert_int_equal(line[n - 1], '\n');
    json_error_t err;
    json_t *j = json_loads(line, 0, &err);
    assert_non_null(j);
    (*lines)++;
    size_t i, k, m;
    json_t *r, *s, *x;
    json_array_foreach(json_object_get(j, "resourceLogs"), i, r)
        json_array_foreach(json_object_get(r, "scopeLogs"), k, s) *logs +=
        (long)json_array_size(json_object_get(s, "logRecords"));
    json_array_foreach(json_object_get(j, "resourceMetrics"), i, r)
        json_array_foreach(json_object_get(r, "scopeMetrics"), k, s)
            json_array_foreach(json_object_get(s, "metrics"), m, x) *points +=
        (long)json_array_size(
            json_object_get(json_object_get(x, "gauge"), "dataPoints"));
    json_decref(j);
  }
  free(line);
}

/* stdout a pipe whose reader does not read (filled beforehand, so the
 * first write blocks): at the end of the 50 ms budget the line being
 * written and the one queued are given up, counted (store and exporter)
 * and said by signal with the budget; the writer counts nothing twice
 * and writes nothing more, also when the reader goes. Before the fix the
 * store's
 * shutdown returned EL_EEXPORT with nothing counted: --stats showed the
 * records as exported. */
static void test_pipe_budget_counts_what_is_not_written(void **state) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  int fl = fcntl(p[1], F_GETFL);
  fcntl(p[1], F_SETFL, fl | O_NONBLOCK);
  static char fill[4096];
  while (write(p[1], fill, sizeof fill) > 0) {
  }
  assert_int_equal(errno, EAGAIN);
  fcntl(p[1], F_SETFL, fl);
  FILE *out = fdopen(p[1], "w");
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_on(st, out, 0);
  emit_points(st, 50);
  emit_logs(st, 3);
  capture(true);
  int64_t t0 = now_ms();
  assert_int_equal(el_tm_store_shutdown(st, 50), EL_EEXPORT);
  int64_t dt = now_ms() - t0;
  capture(false);
  assert_true(dt >= 50 && dt < 3000);
  const el_tm_stats_t *ts = el_tm_store_stats(st);
  assert_int_equal(ts->dropped[M], 50);
  assert_int_equal(ts->dropped[L], 3);
  assert_int_equal(el_otlp_console_dropped(c, M), 50);
  assert_int_equal(el_otlp_console_dropped(c, L), 3);
  assert_non_null(
      warned("console: 50 data points (metrics) not written: the "
             "shutdown budget of 50 ms (--otlp-shutdown-timeout) "
             "ran out; "));
  assert_non_null(
      warned("console: 3 log records (logs) not written: the "
             "shutdown budget of 50 ms (--otlp-shutdown-timeout) "
             "ran out; "));
  /* The reader goes: nothing is counted twice, nothing more written (the
   * writer waited for room in the pipe, never blocked in a write: it gave
   * the line up before its start and is idle now). */
  close(p[0]);
  capture(true);
  assert_int_equal(el_tm_store_shutdown(st, 2000), 0);
  capture(false);
  assert_int_equal(ts->dropped[M], 50);
  assert_int_equal(ts->dropped[L], 3);
  assert_int_equal(el_otlp_console_lines(c), 0);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
}

/* A console exporter on out with a writer thread for a pipe, requests
 * split at max_bytes, registered on st. */
static el_otlp_console_t *console_split(el_tm_store_t *st, FILE *out,
                                        size_t max_bytes) {
  el_otlp_console_t *c;
  el_tm_exporter_t ex;
  assert_int_equal(el_otlp_console_new(out, 0xf, max_bytes, st, &c, &ex), 0);
  assert_int_equal(el_otlp_console_start_writer(c, 64u << 20, 0), 0);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  return c;
}

/* The bytes unread in the pipe fd now (FIONREAD: what a reader finds
 * there when the writer exits), NUL-terminated, in a malloc'd buffer;
 * *len: their count. */
static char *read_now(int fd, size_t *len) {
  int unread = 0;
  assert_int_equal(ioctl(fd, FIONREAD, &unread), 0);
  char *b = malloc((size_t)unread + 1);
  assert_non_null(b);
  size_t n = 0;
  while (n < (size_t)unread) {
    ssize_t r = read(fd, b + n, (size_t)unread - n);
    assert_true(r > 0);
    n += (size_t)r;
  }
  b[n] = '\0';
  *len = n;
  return b;
}

/* The lines of b[0..n): every one whole (ending in a newline) and a JSON
 * object; *records: the log records in those with resourceLogs. Returns
 * how many lines. */
static long whole_lines(char *b, size_t n, long *records) {
  long lines = 0;
  *records = 0;
  assert_true(n == 0 || b[n - 1] == '\n'); /* the last line is whole */
  for (char *p = b, *nl; p < b + n; p = nl + 1) {
    nl = memchr(p, '\n', (size_t)(b + n - p));
    json_error_t err;
    json_t *j = json_loadb(p, (size_t)(nl - p), 0, &err);
    assert_non_null(j);
    lines++;
    size_t i, k;
    json_t *r, *s;
    json_array_foreach(json_object_get(j, "resourceLogs"), i, r)
        json_array_foreach(json_object_get(r, "scopeLogs"), k, s) *records +=
        (long)json_array_size(json_object_get(s, "logRecords"));
    json_decref(j);
  }
  return lines;
}

/* A pipe whose reader reads nothing before the end, with some room left
 * (a 40,000-byte line of another writer in it) and lines of ~12.7 KB
 * (logs split at 20,000-byte requests): when the 100 ms budget runs out,
 * the pipe
 * holds whole lines only (the writer started a line only when the pipe
 * could take all of it), and the log records in them plus those counted
 * as dropped are every record emitted; the lines written are those read.
 * Before the fix the line written when the room ran out was cut: the
 * reader found its first part at the end of the pipe. */
static void test_pipe_budget_leaves_no_partial_line(void **state) {
  enum { NLOGS = 2000, FILL = 40000 };
  int p[2];
  assert_int_equal(pipe(p), 0);
  static char fill[FILL];
  memset(fill, 'x', sizeof fill);
  memcpy(fill, "{\"fill\":\"", 9);
  memcpy(fill + FILL - 3, "\"}\n", 3);
  assert_int_equal(write(p[1], fill, FILL), FILL);
  FILE *out = fdopen(p[1], "w");
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_split(st, out, 20000);
  emit_logs(st, NLOGS);
  capture(true);
  int64_t t0 = now_ms();
  assert_int_equal(el_tm_store_shutdown(st, 100), EL_EEXPORT);
  int64_t dt = now_ms() - t0;
  capture(false);
  assert_true(dt >= 100 && dt < 3000);
  size_t n;
  char *b = read_now(p[0], &n);
  long logs, lines = whole_lines(b, n, &logs);
  uint64_t dropped = el_otlp_console_dropped(c, L);
  assert_true(lines >= 2); /* the fill, and a line of ours */
  assert_true((n - FILL) / (size_t)(lines - 1) > 4096); /* > PIPE_BUF */
  assert_true(dropped > 0);
  assert_int_equal((uint64_t)logs + dropped, NLOGS);
  assert_int_equal(el_tm_store_stats(st)->dropped[L], dropped);
  assert_int_equal(el_otlp_console_lines(c), lines - 1);
  free(b);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
  close(p[0]);
}

/* Whether this process may grow a pipe to 1 MiB (F_SETPIPE_SZ). */
static bool can_grow_pipes(void) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  bool ok = fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= 1 << 20;
  close(p[0]);
  close(p[1]);
  return ok;
}

/* A line larger than the pipe (~200 KB of 2,000 log records, one request;
 * the pipe 64 KiB) whose reader reads nothing before the end: the pipe is
 * grown to take the line whole, written, nothing dropped. Skipped where
 * pipes cannot grow to 1 MiB (a lowered /proc/sys/fs/pipe-max-size). */
static void test_pipe_grown_for_a_large_line(void **state) {
  if (!can_grow_pipes()) skip();
  int p[2];
  assert_int_equal(pipe(p), 0);
  assert_int_equal(fcntl(p[1], F_GETPIPE_SZ), 65536);
  FILE *out = fdopen(p[1], "w");
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_on(st, out, 0);
  emit_logs(st, 2000);
  assert_int_equal(el_tm_store_shutdown(st, 2000), 0);
  size_t n;
  char *b = read_now(p[0], &n);
  long logs, lines = whole_lines(b, n, &logs);
  assert_true(n > 65536);
  assert_int_equal(lines, 1);
  assert_int_equal(logs, 2000);
  assert_int_equal(el_otlp_console_lines(c), 1);
  assert_int_equal(el_otlp_console_dropped(c, L), 0);
  free(b);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
  close(p[0]);
}

/* The reader of a pipe: reads fd to its end, 4 KiB a millisecond (a slow
 * reader), into r->b (malloc'd, NUL-terminated; NULL when out of
 * memory). */
typedef struct {
  int fd;
  char *b;
  size_t n, cap;
} slow_reader_t;

static void *slow_read(void *ud) {
  slow_reader_t *r = ud;
  for (;;) {
    if (r->cap - r->n < 4096)
      r->b = realloc(r->b, (r->cap = 2 * r->cap + 4096) + 1);
    if (!r->b) return NULL;
    ssize_t k = read(r->fd, r->b + r->n, 4096);
    if (k <= 0) break;
    r->n += (size_t)k;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  if (r->b) r->b[r->n] = '\0';
  return NULL;
}

/* Lines larger than a pipe can be made (~3 MB of 30,000 log records, in
 * requests of at most 4 MiB) to a slow reader: written in pieces as it
 * reads, every line whole, every record there. */
static void test_pipe_line_larger_than_any_pipe(void **state) {
  enum { NLOGS = 30000 };
  int p[2];
  assert_int_equal(pipe(p), 0);
  FILE *out = fdopen(p[1], "w");
  assert_non_null(out);
  slow_reader_t r = {p[0], NULL, 0, 0};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, slow_read, &r), 0);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_on(st, out, 0);
  emit_logs(st, NLOGS);
  assert_int_equal(el_tm_store_shutdown(st, 60000), 0);
  el_otlp_console_free(c);
  fclose(out); /* the reader's end of file */
  pthread_join(th, NULL);
  assert_non_null(r.b);
  long logs, lines = whole_lines(r.b, r.n, &logs);
  assert_true(r.n / (size_t)lines > (1u << 20));
  assert_int_equal(logs, NLOGS);
  assert_int_equal(el_tm_store_stats(st)->dropped[L], 0);
  free(r.b);
  el_tm_store_free(st);
  close(p[0]);
}

/* The reader of the pipe under c has gone, leaving bytes unread, while
 * nlogs log records wait to be written: the writer must notice that no
 * reader is left (as a write would: EPIPE) rather than wait for room
 * until the budget (10 s here) runs out. One warning names the broken
 * pipe, none names the budget, every record is counted as dropped (store
 * and exporter), none written, and the shutdown returns EL_EEXPORT.
 * Before the fix the writer waited out the budget, and the records were
 * said not written because "the shutdown budget of 10000 ms ... ran
 * out". */
static void check_reader_gone(el_tm_store_t *st, el_otlp_console_t *c,
                              int nlogs) {
  capture(true);
  assert_int_equal(el_tm_store_shutdown(st, 10000), EL_EEXPORT);
  capture(false);
  assert_non_null(warned("console: writing the output failed: Broken pipe"));
  for (int i = 0; i < nwarns; i++)
    assert_null(strstr(warns[i], "shutdown budget"));
  assert_int_equal(el_otlp_console_lines(c), 0);
  assert_int_equal(el_otlp_console_dropped(c, L), (uint64_t)nlogs);
  assert_int_equal(el_tm_store_stats(st)->dropped[L], (uint64_t)nlogs);
}

/* A pipe holding nfill bytes of another writer whose reader goes while
 * lines wait (check_reader_gone). lines_max: requests split at that many
 * bytes (lines of ~12.7 KB for 20,000: more than PIPE_BUF, less than the
 * pipe, full here, so they wait for room); 0: one request of nlogs
 * records (30,000: ~3 MB, larger than any pipe, so it waits for the pipe,
 * never empty here, to be empty). */
static void reader_gone_while_waiting(size_t lines_max, size_t nfill,
                                      int nlogs) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  static char fill[65536];
  memset(fill, 'x', sizeof fill);
  assert_true(nfill <= sizeof fill);
  assert_int_equal(write(p[1], fill, nfill), (ssize_t)nfill);
  FILE *out = fdopen(p[1], "w");
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c =
      lines_max ? console_split(st, out, lines_max) : console_on(st, out, 0);
  emit_logs(st, nlogs);
  assert_int_equal(el_tm_store_flush(st), 0); /* queued for the writer */
  close(p[0]);                                /* the reader goes */
  check_reader_gone(st, c, nlogs);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
}

static void test_pipe_reader_gone_while_waiting_for_room(void **state) {
  reader_gone_while_waiting(20000, 65536, 2000);
}

static void test_pipe_reader_gone_while_waiting_for_empty(void **state) {
  reader_gone_while_waiting(0, 200, 30000);
}

/* stdout a named FIFO (where RWF_NOWAIT is refused: each piece of a line
 * is written no larger than the room asked for) and a line larger than
 * any pipe (~3 MB, 30,000 records): the reader reads the first 100 bytes
 * of its first piece and goes, the rest of the line waiting for room
 * (check_reader_gone). */
static void test_fifo_reader_gone_in_a_line(void **state) {
  enum { NLOGS = 30000 };
  const char *tmp = getenv("TMPDIR");
  char path[512], fifo[520];
  snprintf(path, sizeof path, "%s/el_console_fifo_XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(path));
  snprintf(fifo, sizeof fifo, "%s/out", path);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  int r = open(fifo, O_RDONLY | O_NONBLOCK);
  assert_true(r >= 0);
  int w = open(fifo, O_WRONLY);
  assert_true(w >= 0);
  fcntl(r, F_SETFL, fcntl(r, F_GETFL) & ~O_NONBLOCK);
  FILE *out = fdopen(w, "w");
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_on(st, out, 0);
  emit_logs(st, NLOGS);
  assert_int_equal(el_tm_store_flush(st), 0); /* queued for the writer */
  char head[100];
  for (size_t got = 0; got < sizeof head;) {
    ssize_t k = read(r, head + got, sizeof head - got); /* waits for it */
    assert_true(k > 0);
    got += (size_t)k;
  }
  assert_memory_equal(head, "{\"resourceLogs\":", 16);
  close(r); /* the reader goes, the line under way */
  check_reader_gone(st, c, NLOGS);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
  unlink(fifo);
  rmdir(path);
}

/* stdout a file: the budget (0 ms here) does not bound the rendering into
 * it; every record is written (the daemon's `> out.jsonl` lost the last
 * 52,390 of 138,470 spans of threads.eventlog with a 1 ms budget, and
 * 11,864 of 625,359 of threads-big under load with the default 10 s). */
static void test_file_written_to_its_end_whatever_the_budget(void **state) {
  FILE *out = tmpfile();
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_on(st, out, 1);
  emit_logs(st, 50000);
  emit_points(st, 7);
  capture(true);
  assert_int_equal(el_tm_store_shutdown(st, 0), 0);
  capture(false);
  assert_int_equal(nwarns, 0);
  long logs, points, lines;
  count_file(out, &logs, &points, &lines);
  assert_int_equal(logs, 50000);
  assert_int_equal(points, 7);
  assert_int_equal(el_otlp_console_lines(c), lines);
  assert_int_equal(el_tm_store_stats(st)->dropped[L], 0);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
}

/* A file after a signal (the daemon's SIGINT during its final flush): the
 * budget applies again; what is left is counted and said with that cause,
 * and what was written plus what was counted is every record. */
static void test_file_after_signal_bounded_and_counted(void **state) {
  FILE *out = tmpfile();
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("s", "v");
  el_otlp_console_t *c = console_on(st, out, 1);
  emit_logs(st, 50000);
  assert_int_equal(el_tm_store_flush(st), 0); /* queued for the writer */
  volatile sig_atomic_t signals = 1;
  capture(true);
  int rc = el_otlp_console_shutdown(c, 0, &signals);
  capture(false);
  uint64_t lost = el_otlp_console_dropped(c, L);
  long logs, points, lines;
  el_otlp_console_shutdown(c, 5000, NULL); /* the writer idle: no race */
  count_file(out, &logs, &points, &lines);
  assert_int_equal((uint64_t)logs + lost, 50000);
  assert_int_equal(el_tm_store_stats(st)->dropped[L], lost);
  assert_true(lost > 0); /* rendering 50000 records takes some time */
  {
    char want[256];
    snprintf(want, sizeof want,
             "console: %llu log records (logs) not written: a signal ended "
             "the final flush, past the shutdown budget of 0 ms "
             "(--otlp-shutdown-timeout); ",
             (unsigned long long)lost);
    assert_non_null(warned(want));
    assert_int_equal(rc, EL_EEXPORT);
  }
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
}

/* Without a writer thread (`run`): the records a closed pipe lost are
 * told apart from those dropped otherwise (here one too large for the
 * 1024-byte request bound), for run's exit status (docs/exit-codes.md
 * "export losses"). */
static void test_sync_closed_pipe_drops_told_apart(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  FILE *out = fdopen(fds[1], "w");
  assert_non_null(out);
  el_tm_store_t *st = el_tm_store_new("t", "1");
  el_otlp_console_t *c;
  el_tm_exporter_t ex;
  assert_int_equal(el_otlp_console_new(out, 0xf, 1024, st, &c, &ex), 0);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  capture(true);
  static char body[2000];
  memset(body, 'x', sizeof body);
  el_tm_log_t big = {.body = {body, sizeof body}};
  assert_int_equal(el_tm_log(st, &big), 0);
  emit_logs(st, 2);
  el_tm_store_flush(st);
  assert_int_equal(el_otlp_console_dropped(c, L), 1);
  assert_int_equal(el_otlp_console_dropped_closed(c), 0);
  close(fds[0]); /* the reader goes */
  emit_logs(st, 3);
  el_tm_store_flush(st);
  emit_logs(st, 4);
  el_tm_store_flush(st);
  assert_non_null(warned("console: writing the output failed: Broken pipe"));
  assert_int_equal(el_otlp_console_dropped(c, L), 8);
  assert_int_equal(el_otlp_console_dropped_closed(c), 7);
  assert_int_equal(el_tm_store_stats(st)->dropped[L], 8);
  capture(false);
  el_tm_store_free(st);
  el_otlp_console_free(c);
  fclose(out);
  signal(SIGPIPE, old);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  el_log_threshold = EL_LOG_QUIET;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipe_budget_counts_what_is_not_written),
      cmocka_unit_test(test_pipe_budget_leaves_no_partial_line),
      cmocka_unit_test(test_pipe_grown_for_a_large_line),
      cmocka_unit_test(test_pipe_line_larger_than_any_pipe),
      cmocka_unit_test(test_pipe_reader_gone_while_waiting_for_room),
      cmocka_unit_test(test_pipe_reader_gone_while_waiting_for_empty),
      cmocka_unit_test(test_fifo_reader_gone_in_a_line),
      cmocka_unit_test(test_file_written_to_its_end_whatever_the_budget),
      cmocka_unit_test(test_file_after_signal_bounded_and_counted),
      cmocka_unit_test(test_sync_closed_pipe_drops_told_apart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
