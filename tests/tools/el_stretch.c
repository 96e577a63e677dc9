/* el_stretch.c: write a long, plausible eventlog by repeating a real one's
 * data as if the program had kept running: for benchmarks of whole
 * pipelines (scripts/bench.d/report.sh), where el_synth's plain repetition
 * is not enough (its repeated thread ids are already finished, so thread
 * trackers ignore every repetition after the first, and its repeated
 * WALL_CLOCK_TIME moves the session's clock back each time).
 *
 * Usage: el_stretch [-n BYTES] [-o FILE] SOURCE.eventlog
 *   -n  about this many bytes (default 1 GiB; suffixes K, M, G): whole
 *       repetitions, the last one ending at or after it
 *   -o  output file (default stdout)
 *
 * Output (spec/eventlog-format.md §1): SOURCE's header unchanged, then
 * SOURCE's events (block markers dropped) repeated R times, re-framed into
 * blocks per capability as el_synth does. Repetition r adds r * (span + 1)
 * ns to every timestamp (span = last - first timestamp of SOURCE),
 * r * (largest thread id + 1) to every thread id (CREATE_THREAD,
 * RUN_THREAD, STOP_THREAD and its BlockedOnBlackHoleOwnedBy owner,
 * THREAD_RUNNABLE, MIGRATE_THREAD, THREAD_WAKEUP, CREATE_SPARK_THREAD,
 * THREAD_LABEL) and r * (the capability's last total) to HEAP_ALLOCATED
 * totals. Events that describe the process once (capsets, RTS identity,
 * arguments, pid, WALL_CLOCK_TIME, capability creation, heap and profiling
 * parameters, cost centres, IPE) are written in the first repetition only;
 * the teardown ones (CAP_DELETE, CAPSET_REMOVE_CAP, CAPSET_DELETE) in the
 * last only. One DATA_END at the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventlog/eventlog.h"

#define BLOCK_MAX (2u << 20)

typedef struct {
  uint16_t type, cap;
  uint64_t t;
  uint32_t off, len; /* payload in the arena */
} sev_t;

typedef struct {
  uint8_t *arena;
  size_t alen, acap;
  sev_t *ev;
  size_t n, cap;
  size_t hdr_len;
  uint16_t size[65536]; /* declared sizes */
  uint64_t tmin, tmax;
  uint32_t max_thread;
  uint64_t alloc_last[65536]; /* last HEAP_ALLOCATED total per cap */
  uint64_t bytes;             /* event bytes of one repetition */
} src_t;

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}
static uint64_t get64(const uint8_t *p) {
  return (uint64_t)get32(p) << 32 | get32(p + 4);
}
static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v) {
  put16(p, (uint16_t)(v >> 16));
  put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}

/* Types whose first field is a thread id. */
static int has_thread(uint16_t type) {
  switch (type) {
  case 0:
  case 1:
  case 2:
  case 3:
  case 4:
  case 8:
  case 15:
  case 44:
    return 1;
  default:
    return 0;
  }
}

/* 1: first repetition only; 2: last only; 0: every repetition. */
static int once(uint16_t type) {
  switch (type) {
  case 26:
  case 28:
  case 46: /* teardown */
    return 2;
  case 17:
  case 25:
  case 27:
  case 29:
  case 30:
  case 31:
  case 32:
  case 33:
  case 43:
  case 45:
  case 47:
  case 48:
  case 52:
  case 160:
  case 161:
  case 168:
  case 169:
    return 1;
  default:
    return 0;
  }
}

static int on_header(void *ud, const el_ev_header_t *h) {
  src_t *s = ud;
  if (h->session > 1) return 1; /* one session only */
  for (size_t i = 0; i < h->ndecls; i++)
    s->size[h->decls[i].id] = h->decls[i].size;
  return 0;
}

static int on_event(void *ud, const el_ev_event_t *e) {
  src_t *s = ud;
  if (!s->hdr_len) s->hdr_len = e->offset; /* the first event follows it */
  if (e->type == 18) return 0;
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 4096;
    s->ev = realloc(s->ev, s->cap * sizeof *s->ev);
  }
  if (s->alen + e->payload_len > s->acap) {
    s->acap = (s->acap + e->payload_len) * 2;
    s->arena = realloc(s->arena, s->acap);
  }
  if (!s->ev || !s->arena) {
    fprintf(stderr, "el_stretch: out of memory\n");
    exit(1);
  }
  memcpy(s->arena + s->alen, e->payload, e->payload_len);
  sev_t *v = &s->ev[s->n++];
  *v = (sev_t){.type = e->type,
               .cap = e->cap,
               .t = e->t_ns,
               .off = (uint32_t)s->alen,
               .len = e->payload_len};
  s->alen += e->payload_len;
  if (s->n == 1 || e->t_ns < s->tmin) s->tmin = e->t_ns;
  if (e->t_ns > s->tmax) s->tmax = e->t_ns;
  if (has_thread(e->type) && e->payload_len >= 4) {
    uint32_t th = get32(e->payload);
    if (th > s->max_thread) s->max_thread = th;
  }
  if (e->type == 49 && e->payload_len >= 12 && e->cap != EL_EV_NO_CAP)
    s->alloc_last[e->cap] = get64(e->payload + 4);
  s->bytes += 10 + (s->size[e->type] == 0xFFFF ? 2 : 0) + e->payload_len;
  return 0;
}

typedef struct {
  FILE *f;
  uint8_t *blk; /* current block, marker included */
  size_t blen;
  uint16_t bcap;
  uint64_t bstart, bend;
  uint64_t written;
} out_t;

static void flush_block(out_t *o) {
  if (!o->blen) return;
  put16(o->blk, 18);
  put64(o->blk + 2, o->bstart);
  put32(o->blk + 10, (uint32_t)o->blen);
  put64(o->blk + 14, o->bend);
  put16(o->blk + 22, o->bcap);
  if (fwrite(o->blk, 1, o->blen, o->f) != o->blen) {
    fprintf(stderr, "el_stretch: write: %s\n", strerror(errno));
    exit(1);
  }
  o->written += o->blen;
  o->blen = 0;
}

/* Write event v of repetition r. */
static void emit(out_t *o, const src_t *s, const sev_t *v, uint64_t r) {
  uint64_t t = v->t + r * (s->tmax - s->tmin + 1);
  int var = s->size[v->type] == 0xFFFF;
  size_t len = 10 + (var ? 2 : 0) + v->len;
  if (o->blen && (v->cap != o->bcap || o->blen + len > BLOCK_MAX))
    flush_block(o);
  if (!o->blen) {
    o->blen = 24;
    o->bcap = v->cap;
    o->bstart = o->bend = t;
  }
  uint8_t *p = o->blk + o->blen;
  put16(p, v->type);
  put64(p + 2, t);
  p += 10;
  if (var) {
    put16(p, (uint16_t)v->len);
    p += 2;
  }
  memcpy(p, s->arena + v->off, v->len);
  uint64_t tshift = r * ((uint64_t)s->max_thread + 1);
  if (has_thread(v->type) && v->len >= 4)
    put32(p, (uint32_t)(get32(p) + tshift));
  /* STOP_THREAD BlockedOnBlackHoleOwnedBy (8): info is the owner thread */
  if (v->type == 2 && v->len >= 10 && p[4] == 0 && p[5] == 8)
    put32(p + 6, (uint32_t)(get32(p + 6) + tshift));
  if (v->type == 49 && v->len >= 12 && v->cap != EL_EV_NO_CAP)
    put64(p + 4, get64(p + 4) + r * s->alloc_last[v->cap]);
  o->blen += len;
  if (t > o->bend) o->bend = t;
}

static uint64_t parse_size(const char *a) {
  char *end;
  double v = strtod(a, &end);
  switch (*end) {
  case 'k':
  case 'K':
    v *= 1024;
    break;
  case 'm':
  case 'M':
    v *= 1024 * 1024;
    break;
  case 'g':
  case 'G':
    v *= 1024.0 * 1024 * 1024;
    break;
  default:
    break;
  }
  return (uint64_t)v;
}

static int load(src_t *s, const char *inp, uint8_t **hdr) {
  FILE *in = fopen(inp, "rb");
  if (!in) {
    fprintf(stderr, "el_stretch: %s: %s\n", inp, strerror(errno));
    return 1;
  }
  el_ev_sink_t sink = {.ud = s, .on_header = on_header, .on_event = on_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  uint8_t *buf = malloc(1 << 20);
  *hdr = malloc(1 << 20);
  size_t got, have = 0;
  while ((got = fread(buf, 1, 1 << 20, in)) > 0) {
    if (have < (1u << 20)) {
      size_t k = got < (1u << 20) - have ? got : (1u << 20) - have;
      memcpy(*hdr + have, buf, k);
      have += k;
    }
    if (el_ev_decoder_feed(d, buf, got) == EL_ESTOPPED) break;
  }
  el_ev_decoder_finish(d);
  el_ev_decoder_free(d);
  free(buf);
  fclose(in);
  if (!s->n || !s->hdr_len || s->hdr_len > have) {
    fprintf(stderr, "el_stretch: %s: no events or header too large\n", inp);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  uint64_t want = 1ull << 30;
  const char *outp = NULL, *inp = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc)
      want = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "-o") && i + 1 < argc)
      outp = argv[++i];
    else
      inp = argv[i];
  }
  if (!inp) {
    fprintf(stderr, "usage: el_stretch [-n BYTES] [-o FILE] SOURCE.eventlog\n");
    return 2;
  }
  static src_t s;
  uint8_t *hdr = NULL;
  if (load(&s, inp, &hdr)) return 1;
  out_t o = {.f = outp ? fopen(outp, "wb") : stdout};
  if (!o.f) {
    fprintf(stderr, "el_stretch: %s: %s\n", outp, strerror(errno));
    return 1;
  }
  o.blk = malloc(BLOCK_MAX + 70000);
  fwrite(hdr, 1, s.hdr_len, o.f);
  o.written = s.hdr_len;
  uint64_t reps =
      want > s.hdr_len ? (want - s.hdr_len + s.bytes - 1) / s.bytes : 1;
  if (reps == 0) reps = 1;
  for (uint64_t r = 0; r < reps; r++) {
    for (size_t i = 0; i < s.n; i++) {
      int k = once(s.ev[i].type);
      if ((k == 1 && r > 0) || (k == 2 && r + 1 < reps)) continue;
      emit(&o, &s, &s.ev[i], r);
    }
  }
  flush_block(&o);
  uint8_t end[2] = {0xFF, 0xFF};
  fwrite(end, 1, 2, o.f);
  if (fflush(o.f) != 0 || (outp && fclose(o.f) != 0)) {
    fprintf(stderr, "el_stretch: write failed: %s\n", strerror(errno));
    return 1;
  }
  fprintf(stderr, "el_stretch: %llu repetitions of %s, %llu bytes\n",
          (unsigned long long)reps, inp, (unsigned long long)(o.written + 2));
  free(hdr);
  free(o.blk);
  free(s.ev);
  free(s.arena);
  return 0;
}
