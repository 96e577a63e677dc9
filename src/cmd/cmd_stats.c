/* cmd_stats.c: `eventlog-live stats` decodes a whole stream (framing,
 * blocks, and the typed fields of all but the fixed-size integer events:
 * EL_EV_OPT_NO_FIELDS; spec/eventlog-format.md §1-§3) and prints counts by
 * event type, bytes, sessions, warnings, elapsed time, throughput and
 * peak RSS. The decoder's fast path counts the fixed-size integer events
 * into the same tables itself (el_ev_decoder_tally); count_event counts
 * the others.
 *
 * Usage: eventlog-live stats [FILE | - | --eventlog-file FILE |
 *                             --eventlog-stdin]
 * A file or stdin is read with read(2), 256 KiB at a time into one
 * reused buffer; SIGINT/SIGTERM stop it between reads and the report is
 * printed. Every other input (FIFO, pipe, character device,
 * socket, --follow, tee) goes through src/source, which opens FIFOs without
 * blocking and stops cleanly on SIGINT/SIGTERM (docs/sources.md). Memory
 * use does not depend on the input's length. Exit status as for `show`:
 * 0 (also for a truncated stream, reported on stderr), 1 corrupt or I/O
 * error, 2 usage. */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "eventlog/eventlog.h"
#include "source/source.h"

#define CHUNK (256u << 10) /* read(2) size: fits the L2 cache */

/* The counts: per event type (events, payload bytes) and the
 * capabilities and time span seen. The decoder's fast path adds its
 * events to them itself (el_ev_decoder_tally); count_event adds the
 * others the same way. */
typedef struct {
  el_ev_tally_type_t type[65536]; /* by type id: one cache line per event */
  uint8_t hdr_len[65536];         /* 10, or 12 for variable-size types */
  /* ids declared by some header (bit per id): the decoder delivers no
   * other type, so the report looks at these ids only */
  uint64_t declared[1024];
  uint64_t capbits[1024]; /* capabilities seen (bit per cap number) */
  /* .type = type, .capbits = capbits; the timestamp range, ns */
  el_ev_tally_t tally;
  uint16_t last_cap; /* capability of the previous event */
  uint64_t warnings;
  uint64_t corrupt; /* warnings that report corruption */
  char name[512];   /* the input in messages: a path, "stdin", ... */
} counts_t;

static int count_header(void *ud, const el_ev_header_t *h) {
  counts_t *c = ud;
  for (size_t i = 0; i < h->ndecls; i++) {
    uint16_t id = h->decls[i].id;
    c->hdr_len[id] = h->decls[i].size == EL_EV_VARIABLE ? 12 : 10;
    c->declared[id >> 6] |= (uint64_t)1 << (id & 63);
  }
  return 0;
}

/* Every event the decoder's fast path does not tally (variable-size
 * ones, block markers, events cut across reads...): counted as
 * el_ev_decoder_tally does. No field is read (the decoder runs with
 * EL_EV_OPT_NO_FIELDS). */
static int count_event(void *ud, const el_ev_event_t *ev) {
  counts_t *c = ud;
  el_ev_tally_type_t *tc = &c->type[ev->type];
  uint64_t t = ev->t_ns;
  tc->events++;
  tc->payload_bytes += ev->payload_len; /* + headers, added at the end */
  if (ev->cap != c->last_cap) {
    c->last_cap = ev->cap;
    c->capbits[ev->cap >> 6] |= (uint64_t)1 << (ev->cap & 63);
  }
  c->tally.tmin = t < c->tally.tmin ? t : c->tally.tmin;
  c->tally.tmax = t > c->tally.tmax ? t : c->tally.tmax;
  return 0;
}

static counts_t *counts_new(void) {
  counts_t *c = calloc(1, sizeof *c);
  if (c) {
    c->tally.type = c->type;
    c->tally.capbits = c->capbits;
    c->tally.tmin = UINT64_MAX;
    c->last_cap = EL_EV_NO_CAP;
  }
  return c;
}

/* "N (0, 1, 2)" for the capabilities seen, the global block excluded. */
static void print_caps(const counts_t *c) {
  /* A word at a time (a bit at a time was 1.2 M instructions, most of
   * `stats` on a small file); bit 63 of the last word is 0xFFFF. */
  enum { W = EL_ARRAY_LEN(c->capbits) };
  uint64_t last = c->capbits[W - 1] & ~((uint64_t)1 << 63);
  unsigned n = 0;
  for (unsigned w = 0; w < W; w++)
    n += (unsigned)__builtin_popcountll(w == W - 1 ? last : c->capbits[w]);
  printf("capabilities:     %u", n);
  unsigned shown = 0;
  for (unsigned w = 0; w < W && shown < 32; w++)
    for (uint64_t b = w == W - 1 ? last : c->capbits[w]; b && shown < 32;
         b &= b - 1)
      printf("%s%u", shown++ ? ", " : " (",
             w * 64 + (unsigned)__builtin_ctzll(b));
  printf("%s\n", n > 32 ? ", ...)" : shown ? ")" : "");
}

/* Warnings stats prints as they come; how many more there were is said
 * with the summary. */
#define STATS_WARNINGS_SHOWN 10

/* A decoder warning, said as show says it (src/cmd/cmd_show.c
 * print_warning): "NAME: MESSAGE", a corrupt part (a code) as an error,
 * since it makes stats exit 1 (docs/exit-codes.md); the first
 * STATS_WARNINGS_SHOWN. */
static void count_warning(void *ud, const el_diag_t *d) {
  counts_t *c = ud;
  if (d->code)
    c->corrupt++;
  if (c->warnings++ < STATS_WARNINGS_SHOWN)
    el_log(d->code ? EL_LOG_ERROR : EL_LOG_WARN, "%s: %s", c->name, d->msg);
}

static void stats_usage(FILE *f) {
  fprintf(f,
          "Usage: eventlog-live stats [FILE | - | SOURCE-OPTIONS]\n\n"
          "Decode a whole eventlog and print counts by event type, bytes,\n"
          "sessions, warnings, elapsed time, throughput and peak RSS.\n\n"
          "Options:\n"
          "  -h, --help  this text\n\n"
          "Source options (docs/sources.md):\n%s",
          el_src_opts_help());
}


static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Events counted under declared ids. */
static uint64_t declared_total(const counts_t *c) {
  uint64_t n = 0;
  for (unsigned w = 0; w < 1024; w++)
    for (uint64_t b = c->declared[w]; b; b &= b - 1)
      n += c->type[w * 64 + (unsigned)__builtin_ctzll(b)].events;
  return n;
}

/* One line of "events by type": name, id, events, bytes with headers. */
static void print_type(const counts_t *c, uint16_t id) {
  const el_ev_type_info_t *t = el_ev_type_info(id);
  char name[48];
  if (t)
    snprintf(name, sizeof name, "%s", t->name);
  else
    snprintf(name, sizeof name, "type %u", id);
  const el_ev_tally_type_t *tc = &c->type[id];
  uint64_t hl = c->hdr_len[id] ? c->hdr_len[id] : 10;
  printf("  %-32s %5u %12llu %14llu\n", name, id,
         (unsigned long long)tc->events,
         (unsigned long long)(tc->payload_bytes + hl * tc->events));
}

static void print_report(const counts_t *c, const el_ev_stats_t *st,
                         double secs, double cpu) {
  printf("events by type:%*s%12s %14s\n", 24, "id", "count", "bytes");
  /* The declared ids hold every event (the decoder delivers no other
   * type), so only their entries are read: reading all 65,536 would
   * fault in 1 MiB of untouched zero pages, 1-2 ms on a small input. Were
   * an event ever counted outside them, every id is looked at. */
  int all = declared_total(c) != st->events;
  for (unsigned id = 0; id < 65536; id++) {
    if (!all && !((c->declared[id >> 6] >> (id & 63)) & 1)) {
      if (!c->declared[id >> 6]) id |= 63; /* none in this word */
      continue;
    }
    if (c->type[id].events) print_type(c, (uint16_t)id);
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double mb = (double)st->bytes / 1e6;
  printf("events:           %llu\n", (unsigned long long)st->events);
  printf("unknown events:   %llu\n", (unsigned long long)st->unknown_events);
  printf("malformed events: %llu\n",
         (unsigned long long)st->malformed_events);
  printf("bytes:            %llu\n", (unsigned long long)st->bytes);
  printf("skipped bytes:    %llu\n", (unsigned long long)st->skipped_bytes);
  printf("stray bytes:      %llu (skipped before a header)\n",
         (unsigned long long)st->stray_bytes);
  printf("cut events:       %llu (dropped: a new connection's stream began "
         "inside)\n", (unsigned long long)st->cut_events);
  printf(
      "corrupt parts:    %llu (%llu byte%s in them; a part runs from an "
      "event that did not frame to the next believable block, or is "
      "damage decoded through)\n",
      (unsigned long long)st->corrupt_parts,
      (unsigned long long)st->corrupt_bytes, st->corrupt_bytes == 1 ? "" : "s");
  printf("duplicate decls:  %llu\n", (unsigned long long)st->dup_decls);
  printf("sessions:         %llu\n", (unsigned long long)st->sessions);
  print_caps(c);
  if (st->events)
    printf("duration:         %.6f s (timestamps %llu .. %llu ns)\n",
           (double)(c->tally.tmax - c->tally.tmin) * 1e-9,
           (unsigned long long)c->tally.tmin,
           (unsigned long long)c->tally.tmax);
  if (c->warnings > STATS_WARNINGS_SHOWN) /* never a silent cut */
    el_log(EL_LOG_WARN,
           "%s: %llu more warnings not shown (stats prints the first %d; "
           "'eventlog-live show' prints every one)",
           c->name, (unsigned long long)(c->warnings - STATS_WARNINGS_SHOWN),
           STATS_WARNINGS_SHOWN);
  printf("warnings:         %llu (%llu reporting corruption)\n",
         (unsigned long long)c->warnings, (unsigned long long)c->corrupt);
  printf("elapsed:          %.3f s\n", secs);
  printf("throughput:       %.1f MB/s, %.0f events/s\n",
         secs > 0 ? mb / secs : 0.0,
         secs > 0 ? (double)st->events / secs : 0.0);
  printf("cpu time:         %.3f s (user + system, this process)\n", cpu);
  printf("cpu throughput:   %.1f MB/s, %.0f events/s\n",
         cpu > 0 ? mb / cpu : 0.0,
         cpu > 0 ? (double)st->events / cpu : 0.0);
  printf("peak RSS:         %ld KiB\n", ru.ru_maxrss);
}

/* 1 (with a message) if stdout could not be written. */
static int output_failed(void) {
  if (fflush(stdout) == 0 && !ferror(stdout))
    return 0;
  el_eprintf("stats: writing the output: %s\n", strerror(errno ? errno : EIO));
  return 1;
}

/* Any other source (sockets, --follow, tee): run it through the pump;
 * each connection is a new session. */
static int stats_live(const el_src_opts_t *o) {
  counts_t *c = counts_new();
  if (c) el_src_opts_describe(o, c->name, sizeof c->name);
  el_ev_sink_t sink = {.ud = c, .on_event = count_event,
                       .on_header = count_header,
                       .on_warning = count_warning};
  el_ev_decoder_t *d = c ? el_ev_decoder_new(&sink) : NULL;
  if (d) {
    el_ev_decoder_set_opts(d, EL_EV_OPT_NO_FIELDS); /* count_event reads
                                                       no field */
    el_ev_decoder_tally(d, &c->tally); /* the fast path counts itself */
  }
  if (!d) {
    el_eprintf("stats: out of memory\n");
    free(c);
    return 1;
  }
  double t0 = now_s(), c0 = cpu_s();
  el_src_pump_result_t res;
  int rc = el_src_pump_decoder(NULL, o, d, &res);
  const el_ev_stats_t *st = el_ev_decoder_stats(d);
  c->warnings += res.truncated; /* each session cut inside an event: the
                                   pump's warning (el_src_warn_cut) */
  /* no report of zeros for an input that never opened (its error said
   * why) */
  if (rc == 0 || rc == EL_ESTOPPED || res.stats.connections > 0)
    print_report(c, st, now_s() - t0, cpu_s() - c0);
  int out_bad = output_failed();
  int status = rc == 0 || rc == EL_ESTOPPED ||
                       (rc == EL_ETRUNC && st->sessions > 0)
                   ? 0
                   : 1;
  if (c->corrupt || out_bad)
    status = 1; /* corruption skipped over is still a decode problem */
  el_ev_decoder_free(d);
  free(c);
  return status;
}

/* A file or stdin read directly with read(2) into one reused buffer of
 * CHUNK bytes, which stays in the CPU's cache while the decoder reads it.
 * Mapping the file instead was measured slower on the project's machine
 * (a 1 GB file in the page cache: 0.8-1.4 GB/s through 1-16 MiB mapped
 * windows, 6 GB/s through 256 KiB read(2) calls, each followed by one
 * pass over the bytes; `el_framer` in scripts/bench.d/decoder.sh prints
 * both on every run). */
typedef struct {
  const char *path; /* for messages ("-" = stdin) */
  const char *name; /* the input in the decoder's messages: path, "stdin" */
  int fd;
  uint8_t *buf; /* CHUNK bytes */
  el_ev_decoder_t *d;
  int unread; /* a read failed before the first byte (said already) */
} reader_t;

static void report_errno(const reader_t *r) {
  el_eprintf("stats: %s: %s\n", r->path, strerror(errno));
}

/* Feed one buffer to the decoder; sets *status to 1 on a decode error. */
static void feed_buf(reader_t *r, size_t n, int *status) {
  int rc = el_ev_decoder_feed(r->d, r->buf, n);
  if (rc) {
    const el_diag_t *dg = el_ev_decoder_diag(r->d);
    /* "error: NAME: malformed header: ...", as every command says it
     * (src/source/src_pump.c report); the message names its byte */
    el_log(rc != EL_ESTOPPED ? EL_LOG_ERROR : EL_LOG_WARN, "%s: %s", r->name,
           dg->msg);
    if (rc != EL_ESTOPPED) *status = 1;
  }
}

/* Feed the whole input, buffer by buffer, until its end, an error or
 * SIGINT/SIGTERM (handlers installed for the call, then restored).
 * Returns the exit status so far. */
static int read_all(reader_t *r) {
  int status = 0;
  el__cmd_stop_t stop;
  el__cmd_stop_begin(&stop);
  for (;;) {
    if (el__cmd_stop_signal) {
      el_eprintf("stats: signal %d: stopping at byte %llu\n",
                 (int)el__cmd_stop_signal,
                 (unsigned long long)el_ev_decoder_stats(r->d)->bytes);
      break;
    }
    ssize_t n = read(r->fd, r->buf, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      report_errno(r);
      status = 1;
      r->unread = !el_ev_decoder_stats(r->d)->bytes;
    }
    if (n <= 0) break;
    feed_buf(r, (size_t)n, &status);
  }
  el__cmd_stop_end(&stop);
  return status;
}

/* Read a file or stdin ("-") directly; returns the exit status. */
static int stats_direct(const char *path) {
  reader_t r = {.path = path, .name = strcmp(path, "-") ? path : "stdin"};
  r.fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
  if (r.fd < 0) {
    report_errno(&r);
    return 1;
  }
  counts_t *c = counts_new();
  if (c) snprintf(c->name, sizeof c->name, "%s", r.name);
  r.buf = malloc(CHUNK);
  el_ev_sink_t sink = {.ud = c,
                       .on_event = count_event,
                       .on_header = count_header,
                       .on_warning = count_warning};
  r.d = c && r.buf ? el_ev_decoder_new(&sink) : NULL;
  if (r.d) {
    el_ev_decoder_set_opts(r.d, EL_EV_OPT_NO_FIELDS);
    el_ev_decoder_tally(r.d, &c->tally); /* the fast path counts itself */
  }
  int status = 1;
  if (!r.d) {
    el_eprintf("stats: out of memory\n");
    goto done;
  }
  double t0 = now_s(), c0 = cpu_s();
  status = read_all(&r);
  int rc = el_ev_decoder_finish(r.d);
  const el_diag_t *dg = el_ev_decoder_diag(r.d);
  if (rc == EL_ETRUNC && dg->cut_event) { /* as through a FIFO or pipe */
    el_src_warn_cut(strcmp(path, "-") ? path : "stdin", dg);
    c->warnings++; /* a warning as the end without DATA_END is */
  } else if (rc && !(r.unread && rc == EL_ETRUNC)) { /* not "empty" */
    int fails = rc != EL_ETRUNC || !el_ev_decoder_stats(r.d)->sessions;
    /* "error: NAME: no eventlog header found ...", in every command's
     * words (src/source/src_pump.c report); the message names its byte */
    el_log(fails ? EL_LOG_ERROR : EL_LOG_WARN, "%s: %s", r.name, dg->msg);
    if (fails) status = 1;
  }
  print_report(c, el_ev_decoder_stats(r.d), now_s() - t0, cpu_s() - c0);
  if (output_failed() || c->corrupt)
    status = 1; /* corruption skipped over is still a decode problem */
done:
  el_ev_decoder_free(r.d);
  free(c);
  free(r.buf);
  if (r.fd > 0) close(r.fd);
  return status;
}

int el_cmd_stats(int argc, char **argv) {
  int err;
  el_src_opts_t o;
  el__cmd_seen_t seen = {0};
  if (el__cmd_check_options("stats", argc, argv, stats_usage, &seen)) return 2;
  const char *path = el_src_opts_direct_input(&o, argc, argv, "stats", &err);
  if (!path && !err) return stats_live(&o);
  if (!path && err == 1) { /* -h, --help */
    stats_usage(stdout);
    return 0;
  }
  if (!path) return 2; /* the message is out, as in the other commands */
  return stats_direct(path);
}
