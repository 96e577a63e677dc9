/* el_par_decode.c: what decoding an eventlog on two cores, split at a
 * block marker, would give (issue 16, "Decode": measure, then decide).
 *
 * Usage: el_par_decode [-n REPS] FILE
 * Reads FILE into memory, finds its block markers with a decoder that
 * skips capability blocks (EL_EV_OPT_SKIP_CAP_BLOCKS: it reads only the
 * markers and the global blocks), and takes the one nearest the middle.
 * Then,
 * REPS times (default 3) each:
 *   serial    one decoder fed the whole file, 256 KiB per feed;
 *   parallel  two threads: one decoder fed [0, split), the other the
 *             header's bytes then [split, end) (a block marker starts a
 *             capability's block, spec §1.5, so the second half frames
 *             on its own).
 * The sink counts events (what `stats` minimally does). Prints the best
 * wall time of each (on a machine shared with other jobs the second
 * core may be busy: the figure is what this run got) and the speed-up, and checks that both ways count
 * the same events (exit 1 if not). Only for a file with one session and
 * without corruption (the second half's decoder would not know the
 * first's state: resynchronisation and sessions stay serial). Exit
 * status 0, 1 on a read error or a count mismatch, 2 usage. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eventlog/eventlog.h"

#define FEED (256u << 10)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct {
  uint64_t events, tsum;
  uint64_t first_event; /* offset of the first event: the header's end */
  uint64_t *markers;    /* block marker offsets (the scan) */
  size_t nmarkers, cap;
} count_t;

static int on_count(void *ud, const el_ev_event_t *ev) {
  count_t *c = ud;
  c->events++;
  c->tsum += ev->t_ns;
  return 0;
}

static int on_marker(void *ud, const el_ev_event_t *ev) {
  count_t *c = ud;
  if (!c->events++) c->first_event = ev->offset;
  if (ev->type != EL_EV_BLOCK_MARKER) return 0;
  if (c->nmarkers == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 1024;
    uint64_t *m = realloc(c->markers, c->cap * sizeof *m);
    if (!m) return 1;
    c->markers = m;
  }
  c->markers[c->nmarkers++] = ev->offset;
  return 0;
}

typedef struct {
  const uint8_t *hdr; /* header bytes fed first (second half), or NULL */
  size_t hdrlen;
  const uint8_t *p;
  size_t n;
  count_t c;
} part_t;

/* Decode one part with a decoder of its own; returns its status. */
static void *decode_part(void *arg) {
  part_t *pt = arg;
  memset(&pt->c, 0, sizeof pt->c);
  el_ev_sink_t sink = {.ud = &pt->c, .on_event = on_count};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  if (!d) return NULL;
  if (pt->hdr) el_ev_decoder_feed(d, pt->hdr, pt->hdrlen);
  for (size_t o = 0; o < pt->n; o += FEED)
    el_ev_decoder_feed(d, pt->p + o, pt->n - o < FEED ? pt->n - o : FEED);
  el_ev_decoder_finish(d);
  el_ev_decoder_free(d);
  return NULL;
}

static uint8_t *read_file(const char *path, size_t *n) {
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb)) {
    perror(path);
    return NULL;
  }
  uint8_t *b = malloc((size_t)sb.st_size + 1);
  size_t got = 0;
  ssize_t k;
  while (b && got < (size_t)sb.st_size &&
         (k = read(fd, b + got, (size_t)sb.st_size - got)) > 0)
    got += (size_t)k;
  close(fd);
  *n = got;
  return b;
}

int main(int argc, char **argv) {
  int reps = 3, a = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) {
    reps = atoi(argv[2]);
    a = 3;
  }
  if (a != argc - 1 || reps < 1) {
    fprintf(stderr, "usage: el_par_decode [-n REPS] FILE\n");
    return 2;
  }
  size_t n;
  uint8_t *buf = read_file(argv[a], &n);
  if (!buf) return 1;
  count_t scan = {0};
  el_ev_sink_t sink = {.ud = &scan, .on_event = on_marker};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  el_ev_decoder_set_opts(d, EL_EV_OPT_SKIP_CAP_BLOCKS);
  el_ev_decoder_feed(d, buf, n);
  el_ev_decoder_finish(d);
  el_ev_decoder_free(d);
  uint64_t split = 0;
  for (size_t i = 0; i < scan.nmarkers; i++)
    if (!split || (scan.markers[i] > n / 2 ? scan.markers[i] - n / 2
                                           : n / 2 - scan.markers[i]) <
                      (split > n / 2 ? split - n / 2 : n / 2 - split))
      split = scan.markers[i];
  if (!split || split <= scan.first_event) {
    fprintf(stderr, "el_par_decode: %s: no block marker to split at\n",
            argv[a]);
    return 1;
  }
  part_t whole = {.p = buf, .n = n};
  part_t half[2] = {{.p = buf, .n = split},
                    {.hdr = buf,
                     .hdrlen = scan.first_event,
                     .p = buf + split,
                     .n = n - split}};
  double best_s = 1e30, best_p = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    decode_part(&whole);
    double t1 = now_s();
    pthread_t th;
    pthread_create(&th, NULL, decode_part, &half[1]);
    decode_part(&half[0]);
    pthread_join(th, NULL);
    double t2 = now_s();
    best_s = t1 - t0 < best_s ? t1 - t0 : best_s;
    best_p = t2 - t1 < best_p ? t2 - t1 : best_p;
  }
  uint64_t pe = half[0].c.events + half[1].c.events;
  uint64_t pt = half[0].c.tsum + half[1].c.tsum;
  printf("serial   %.3f s %6.2f GB/s (%llu events)\n", best_s,
         (double)n / best_s / 1e9, (unsigned long long)whole.c.events);
  printf(
      "parallel %.3f s %6.2f GB/s (2 threads, split at byte %llu of "
      "%zu): %.2fx the serial speed\n",
      best_p, (double)n / best_p / 1e9, (unsigned long long)split, n,
      best_s / best_p);
  free(scan.markers);
  free(buf);
  if (pe != whole.c.events || pt != whole.c.tsum) {
    fprintf(stderr,
            "el_par_decode: the halves count %llu events, the "
            "whole %llu\n",
            (unsigned long long)pe, (unsigned long long)whole.c.events);
    return 1;
  }
  return 0;
}
