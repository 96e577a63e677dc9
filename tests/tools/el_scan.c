/* el_scan.c: run el_ev_scan_sessions (src/eventlog/eventlog.h) over a file
 * and print what it found per session and how long it took, for the
 * decoder benchmark (scripts/bench.d/decoder.sh) and by hand.
 *
 * Usage: el_scan [-m] [-n REPS] FILE
 * -m: el_ev_scan_mapped instead (gives pages back as it goes).
 * Each repetition maps the file afresh (mmap, scan, munmap: the pages the
 * scan touches are faulted in again from the page cache); prints the first
 * repetition's time and the best one, in ms and ms per GB. Exit status 0,
 * 1 when the file cannot be read, 2 for a usage error; a problem in the
 * eventlog is printed and does not change the status. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eventlog/eventlog.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  int reps = 5, mapped = 0;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-m"))
      mapped = 1;
    else if (!strcmp(argv[i], "-n") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else
      path = argv[i];
  }
  if (!path || reps < 1) {
    fprintf(stderr, "usage: el_scan [-m] [-n REPS] FILE\n");
    return 2;
  }
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) < 0) {
    perror(path);
    return 1;
  }
  size_t len = (size_t)sb.st_size;
  double first = 0, best = 1e30;
  el_ev_scan_t r;
  memset(&r, 0, sizeof r);
  int rc = 0;
  for (int k = 0; k < reps; k++) {
    el_ev_scan_free(&r);
    double t0 = now_s();
    void *p = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (p == MAP_FAILED) {
      perror("mmap");
      return 1;
    }
    rc = mapped ? el_ev_scan_mapped(p, len, &r)
                : el_ev_scan_sessions(p, len, &r);
    if (len)
      munmap(p, len);
    double dt = now_s() - t0;
    if (k == 0)
      first = dt;
    if (dt < best)
      best = dt;
  }
  double gb = (double)len / 1e9;
  printf("scan %s: %.1f MB, %zu session(s), %llu capability blocks not "
         "read; first %.3f ms, best of %d %.3f ms = %.2f ms/GB\n",
         path, (double)len / 1e6, r.nsessions,
         (unsigned long long)r.stats.skipped_blocks, first * 1e3, reps,
         best * 1e3, gb > 0 ? best * 1e3 / gb : 0.0);
  if (rc)
    printf("  status: %s (byte %llu)\n", r.diag.msg,
           (unsigned long long)r.diag.offset);
  for (size_t i = 0; i < r.nsessions; i++) {
    const el_ev_scan_session_t *s = &r.sessions[i];
    printf("  session %zu: header at %llu, ends at %llu%s, ", i + 1,
           (unsigned long long)s->header_offset,
           (unsigned long long)s->end_offset,
           s->data_end ? " (DATA_END)" : "");
    if (s->has_wall_clock)
      printf("Unix ns of RTS time 0 = %lld (WALL_CLOCK_TIME at t=%llu), ",
             (long long)s->anchor_unix_ns, (unsigned long long)s->wall_t_ns);
    else
      printf("no WALL_CLOCK_TIME, ");
    printf("max t=%llu, caps", (unsigned long long)s->max_t_ns);
    for (size_t k = 0; k < s->ncaps && k < 16; k++)
      printf(" %u", s->caps[k]);
    printf("%s\n", s->ncaps > 16 ? " ..." : s->ncaps ? "" : " none");
  }
  el_ev_scan_free(&r);
  close(fd);
  return 0;
}
