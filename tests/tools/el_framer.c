/* el_framer.c: the yardstick of the decoder benchmark: the least work
 * that finds every event of an eventlog. It reads the header's event
 * type table (spec/eventlog-format.md §1.3) into a table of event lengths
 * indexed by the 16-bit type (0 for a variable-size type, whose length is
 * then read from the event: §1.4), then hops from event to event, adding
 * up the timestamps so that each event is read; no fields, no checks of
 * blocks, no callbacks. Its own code: nothing from src/.
 *
 * Usage: el_framer [-n REPS] FILE
 * Prints, for the run with the least CPU time (user + system) of REPS
 * (default 3) runs of each way of reading:
 *   read  read(2) 256 KiB at a time into one reused buffer (as `stats`)
 *   mmap  the whole file mapped (MAP_PRIVATE, MADV_SEQUENTIAL), afresh
 *         each run
 * one line each: "framer <way> <GB/s> GB/s <events> events <s> s cpu",
 * GB/s per CPU second.
 * Only the first session is framed (up to DATA_END or an undeclared
 * type). Exit status 0,
 * 1 when the file cannot be read, 2 for a usage error. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256u << 10)

/* CPU seconds of this process (user + system): on a shared machine the
 * figure to compare, as `stats`' "cpu throughput". */
static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p) { return be16(p) << 16 | be16(p + 2); }

typedef struct {
  uint32_t len[65536]; /* event length incl. the 10-byte header; 0 =
                          variable (12 + the u16 at byte 10); 1 = not
                          declared */
  uint64_t events, tsum;
  int stopped;
} framer_t;

/* Parse the header at p[0..n): fill f->len; returns the offset of the
 * first event, or 0 if the header is malformed or longer than n. */
static size_t header(framer_t *f, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < 65536; i++) f->len[i] = 1;
  if (n < 12 || memcmp(p, "hdrbhetb", 8)) return 0;
  size_t o = 8;
  while (o + 4 <= n && !memcmp(p + o, "etb\0", 4)) {
    if (o + 16 > n) return 0;
    uint32_t id = be16(p + o + 4), size = be16(p + o + 6);
    size_t dl = be32(p + o + 8);
    if (o + 16 + dl > n) return 0;
    size_t xl = be32(p + o + 12 + dl);
    o += 12 + dl + 4 + xl + 4; /* through "ete\0" */
    f->len[id] = size == 0xFFFF ? 0 : 10 + size;
  }
  if (o + 12 > n || memcmp(p + o, "hetehdredatb", 12)) return 0;
  return o + 12;
}

/* Frame the events in p[0..n); returns the bytes used (a partial event
 * at the end is left). Sets f->stopped at DATA_END or an undeclared
 * type. */
static size_t frame(framer_t *f, const uint8_t *p, size_t n) {
  size_t i = 0;
  uint64_t events = 0, tsum = 0;
  while (n - i >= 12) {
    uint32_t type = be16(p + i), l = f->len[type];
    if (l == 1) {
      f->stopped = 1; /* DATA_END (never declared) or undeclared */
      break;
    }
    if (l == 0) l = 12 + be16(p + i + 10);
    if (l > n - i) break;
    uint64_t t;
    memcpy(&t, p + i + 2, 8);
    tsum += t;
    events++;
    i += l;
  }
  f->events += events;
  f->tsum += tsum;
  return i;
}

/* read(2) into a reused buffer; a partial event moves to its front. */
static int run_read(framer_t *f, int fd, uint8_t *buf) {
  size_t have = 0, pos = 0, done = 0;
  ssize_t k;
  lseek(fd, 0, SEEK_SET);
  f->events = f->tsum = 0;
  f->stopped = 0;
  while (!f->stopped && (k = read(fd, buf + have, CHUNK)) > 0) {
    have += (size_t)k;
    if (!done) {
      if (!(pos = header(f, buf, have))) {
        if (have > CHUNK) break; /* a header over 256 KiB, or malformed */
        continue;
      }
      done = 1;
    }
    pos += frame(f, buf + pos, have - pos);
    memmove(buf, buf + pos, have - pos);
    have -= pos;
    pos = 0;
    if (have > CHUNK) break;
  }
  return done ? 0 : -1;
}

static int run_mmap(framer_t *f, int fd, size_t size) {
  const uint8_t *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return -1;
  madvise((void *)p, size, MADV_SEQUENTIAL);
  f->events = f->tsum = 0;
  f->stopped = 0;
  size_t pos = header(f, p, size);
  if (pos) frame(f, p + pos, size - pos);
  munmap((void *)p, size);
  return pos ? 0 : -1;
}

int main(int argc, char **argv) {
  int reps = 3, a = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) {
    reps = atoi(argv[2]);
    a = 3;
  }
  if (a != argc - 1 || reps < 1) {
    fprintf(stderr, "usage: el_framer [-n REPS] FILE\n");
    return 2;
  }
  int fd = open(argv[a], O_RDONLY);
  struct stat sb;
  framer_t *f = calloc(1, sizeof *f);
  uint8_t *buf = malloc(2 * CHUNK + 16);
  if (fd < 0 || fstat(fd, &sb) || !f || !buf) {
    perror(argv[a]);
    return 1;
  }
  for (int way = 0; way < 2; way++) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
      double t0 = cpu_s();
      int rc = way ? run_mmap(f, fd, (size_t)sb.st_size) : run_read(f, fd, buf);
      double t = cpu_s() - t0;
      if (rc) {
        fprintf(stderr, "el_framer: %s: no eventlog header\n", argv[a]);
        return 1;
      }
      best = t < best ? t : best;
    }
    printf(
        "framer %-4s %6.2f GB/s %llu events %.3f s cpu (timestamp sum %llx)\n",
        way ? "mmap" : "read", (double)sb.st_size / best / 1e9,
        (unsigned long long)f->events, best, (unsigned long long)f->tsum);
  }
  free(buf);
  free(f);
  close(fd);
  return 0;
}
