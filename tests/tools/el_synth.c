/* el_synth.c: write a large valid eventlog for benchmarks by repeating a
 * real log's data section with shifted timestamps.
 *
 * Usage: el_synth [-n BYTES] [-x TYPE] [-o FILE] SOURCE.eventlog
 *   -n  at least this many bytes (default 1 GiB; suffixes K, M, G)
 *   -x  leave out the events of this type id (e.g. 43, WALL_CLOCK_TIME,
 *       for a file as eventlog-socket records on GHC 9.0); repeatable
 *   -o  output file (default stdout)
 *
 * Output (spec/eventlog-format.md §1): SOURCE's header bytes unchanged,
 * then SOURCE's events (block markers dropped) repeated; repetition r adds
 * r * (span + 1) ns to every timestamp, span = last - first timestamp of
 * SOURCE. Events are re-framed into fresh blocks: a new BLOCK_MARKER
 * whenever the capability changes or a block would exceed 2 MiB, with the
 * block's size and end time filled in. One DATA_END at the end. Variable
 * events are written with their delivered payload length, which also
 * repairs an IPE off-by-one (§4.4). */
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
  uint8_t declared[65536];
  uint8_t drop[65536]; /* -x: types left out */
  uint64_t tmin, tmax;
} src_t;

static int on_header(void *ud, const el_ev_header_t *h) {
  src_t *s = ud;
  if (h->session > 1)
    return 1; /* one session only */
  for (size_t i = 0; i < h->ndecls; i++) {
    s->size[h->decls[i].id] = h->decls[i].size;
    s->declared[h->decls[i].id] = 1;
  }
  return 0;
}

static int on_event(void *ud, const el_ev_event_t *e) {
  src_t *s = ud;
  if (!s->hdr_len)
    s->hdr_len = e->offset; /* the first event follows the header */
  if (e->type == 18 || s->drop[e->type]) return 0;
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 4096;
    s->ev = realloc(s->ev, s->cap * sizeof *s->ev);
  }
  if (s->alen + e->payload_len > s->acap) {
    s->acap = (s->acap + e->payload_len) * 2;
    s->arena = realloc(s->arena, s->acap);
  }
  if (!s->ev || !s->arena) {
    fprintf(stderr, "el_synth: out of memory\n");
    exit(1);
  }
  memcpy(s->arena + s->alen, e->payload, e->payload_len);
  sev_t *v = &s->ev[s->n++];
  v->type = e->type;
  v->cap = e->cap;
  v->t = e->t_ns;
  v->off = (uint32_t)s->alen;
  v->len = e->payload_len;
  s->alen += e->payload_len;
  if (s->n == 1 || e->t_ns < s->tmin)
    s->tmin = e->t_ns;
  if (e->t_ns > s->tmax)
    s->tmax = e->t_ns;
  return 0;
}

/* {====== output ======} */

typedef struct {
  FILE *f;
  uint8_t *blk;       /* current block, marker included */
  size_t blen;
  uint16_t bcap;
  uint64_t bstart, bend;
  uint64_t written;
} out_t;

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

static void flush_block(out_t *o) {
  if (!o->blen)
    return;
  put16(o->blk, 18);
  put64(o->blk + 2, o->bstart);
  put32(o->blk + 10, (uint32_t)o->blen);
  put64(o->blk + 14, o->bend);
  put16(o->blk + 22, o->bcap);
  if (fwrite(o->blk, 1, o->blen, o->f) != o->blen) {
    fprintf(stderr, "el_synth: write: %s\n", strerror(errno));
    exit(1);
  }
  o->written += o->blen;
  o->blen = 0;
}

static void emit(out_t *o, const src_t *s, const sev_t *v, uint64_t t) {
  int var = s->size[v->type] == 0xFFFF;
  size_t len = 10 + (var ? 2 : 0) + v->len;
  if (o->blen && (v->cap != o->bcap || o->blen + len > BLOCK_MAX))
    flush_block(o);
  if (!o->blen) {
    o->blen = 24;
    o->bcap = v->cap;
    o->bstart = t;
    o->bend = t;
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
  o->blen += len;
  if (t > o->bend)
    o->bend = t;
}

static uint64_t parse_size(const char *a) {
  char *end;
  double v = strtod(a, &end);
  switch (*end) {
  case 'k': case 'K': v *= 1024; break;
  case 'm': case 'M': v *= 1024 * 1024; break;
  case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
  }
  return (uint64_t)v;
}

int main(int argc, char **argv) {
  uint64_t want = 1ull << 30;
  const char *outp = NULL, *inp = NULL;
  static src_t s;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc)
      want = parse_size(argv[++i]);
    else if (!strcmp(argv[i], "-x") && i + 1 < argc)
      s.drop[(uint16_t)atoi(argv[++i])] = 1;
    else if (!strcmp(argv[i], "-o") && i + 1 < argc)
      outp = argv[++i];
    else
      inp = argv[i];
  }
  if (!inp) {
    fprintf(stderr,
            "usage: el_synth [-n BYTES] [-x TYPE] [-o FILE] SOURCE.eventlog\n");
    return 2;
  }
  FILE *in = fopen(inp, "rb");
  if (!in) {
    fprintf(stderr, "el_synth: %s: %s\n", inp, strerror(errno));
    return 1;
  }
  el_ev_sink_t sink = {.ud = &s, .on_header = on_header,
                       .on_event = on_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  uint8_t *buf = malloc(1 << 20);
  uint8_t *hdr = malloc(1 << 20);
  size_t got, hdr_have = 0;
  while ((got = fread(buf, 1, 1 << 20, in)) > 0) {
    if (hdr_have < (1u << 20)) {
      size_t k = got < (1u << 20) - hdr_have ? got : (1u << 20) - hdr_have;
      memcpy(hdr + hdr_have, buf, k);
      hdr_have += k;
    }
    if (el_ev_decoder_feed(d, buf, got) == EL_ESTOPPED)
      break;
  }
  el_ev_decoder_finish(d);
  fclose(in);
  if (!s.n || !s.hdr_len || s.hdr_len > hdr_have) {
    fprintf(stderr, "el_synth: %s: no events or header too large\n", inp);
    return 1;
  }
  out_t o = {.f = outp ? fopen(outp, "wb") : stdout};
  if (!o.f) {
    fprintf(stderr, "el_synth: %s: %s\n", outp, strerror(errno));
    return 1;
  }
  o.blk = malloc(BLOCK_MAX + 70000);
  fwrite(hdr, 1, s.hdr_len, o.f);
  o.written = s.hdr_len;
  uint64_t span = s.tmax - s.tmin + 1;
  for (uint64_t r = 0; o.written + o.blen < want; r++)
    for (size_t i = 0; i < s.n; i++)
      emit(&o, &s, &s.ev[i], s.ev[i].t + r * span);
  flush_block(&o);
  uint8_t end[2] = {0xFF, 0xFF};
  fwrite(end, 1, 2, o.f);
  if (fflush(o.f) != 0 || (outp && fclose(o.f) != 0)) {
    fprintf(stderr, "el_synth: write failed: %s\n", strerror(errno));
    return 1;
  }
  el_ev_decoder_free(d);
  free(buf);
  free(hdr);
  free(o.blk);
  free(s.ev);
  free(s.arena);
  return 0;
}
