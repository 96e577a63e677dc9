/* el_repeat_blocks.c: write a large GHC-9.0-shaped eventlog for the
 * pipeline benchmark by repeating a real log's capability blocks.
 *
 * Usage: el_repeat_blocks [-r REPEAT] [-g last|first] -o OUT SOURCE
 *   -r  how many times the capability blocks are written (default 10:
 *       threads-big.eventlog, 12 MB, gives about 120 MB)
 *   -g  where the global blocks go: "last" (default) after every
 *       capability block, as GHC 9.0 writes its global buffer (startup
 *       events included) only at exit; "first" right after the header
 *
 * Output (spec/eventlog-format.md §1): SOURCE's header; its capability
 * blocks (BLOCK_MARKER cap != 0xFFFF, §1.5) byte for byte, REPEAT times,
 * repetition r with every event time and the markers' start and end times
 * raised by r * D, D = the largest time in SOURCE + 1, so time keeps
 * increasing from one repetition to the next; its global blocks (cap
 * 0xFFFF) once, where -g says, with the events later than the last
 * capability block's start (the shutdown: TASK_DELETE, CAP_DELETE, ...)
 * and the block's end time raised by (REPEAT - 1) * D, so they stay last;
 * then DATA_END outside any block (as GHC <= 9.0, §1.5). Events outside
 * blocks other than DATA_END are not supported (GHC >= 7 writes none).
 * The source is read with the project's decoder; sizes and layouts come
 * from its header. Exit status 0, or 1 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventlog/eventlog.h"

#define EV_BLOCK_MARKER 18

typedef struct {
  uint64_t off, size, start_t;
  uint16_t cap;
} blk_t;

typedef struct {
  uint64_t off, len, t;
  uint16_t type;
} sev_t;

typedef struct {
  blk_t *blk;
  size_t nblk, cblk;
  sev_t *ev;
  size_t nev, cev;
  uint64_t hdr_end;       /* offset of the first event */
  uint64_t max_t;         /* largest event or block-end time */
  uint8_t var[65536];     /* 1: declared variable-size (12-byte header) */
  int bad;
} src_t;

static void *grow(void *p, size_t *cap, size_t n, size_t elem) {
  if (n < *cap)
    return p;
  *cap = *cap ? 2 * *cap : 1024;
  p = realloc(p, *cap * elem);
  if (!p) {
    fprintf(stderr, "el_repeat_blocks: out of memory\n");
    exit(1);
  }
  return p;
}

static int on_header(void *ud, const el_ev_header_t *h) {
  src_t *s = ud;
  if (h->session > 1) {
    fprintf(stderr, "el_repeat_blocks: more than one session\n");
    s->bad = 1;
    return 1;
  }
  for (size_t i = 0; i < h->ndecls; i++)
    if (!h->decls[i].overridden)
      s->var[h->decls[i].id] = h->decls[i].size == EL_EV_VARIABLE;
  return 0;
}

static int on_event(void *ud, const el_ev_event_t *e) {
  src_t *s = ud;
  if (!s->hdr_end)
    s->hdr_end = e->offset;
  s->ev = grow(s->ev, &s->cev, s->nev, sizeof *s->ev);
  sev_t *v = &s->ev[s->nev++];
  v->off = e->offset;
  v->len = (s->var[e->type] ? 12 : 10) + (uint64_t)e->payload_len;
  v->t = e->t_ns;
  v->type = e->type;
  if (e->t_ns > s->max_t)
    s->max_t = e->t_ns;
  if (e->type == EV_BLOCK_MARKER && e->known) {
    s->blk = grow(s->blk, &s->cblk, s->nblk, sizeof *s->blk);
    blk_t *b = &s->blk[s->nblk++];
    b->off = e->offset;
    b->size = e->v[0].u;
    b->start_t = e->t_ns;
    b->cap = (uint16_t)e->v[2].u;
    if (e->v[1].u > s->max_t)
      s->max_t = e->v[1].u;
  }
  return 0;
}

static void on_warning(void *ud, const el_diag_t *d) {
  fprintf(stderr, "el_repeat_blocks: source: %s\n", d->msg);
  ((src_t *)ud)->bad = 1;
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++)
    v = v << 8 | p[k];
  return v;
}

static void put64(uint8_t *p, uint64_t v) {
  for (int k = 7; k >= 0; k--, v >>= 8)
    p[k] = (uint8_t)v;
}

/* Write block b of buf with its marker's end time raised by shift and,
 * for a capability block (global = 0), every event time and the marker's
 * start time too; for a global block only the events later than after. */
static void write_block(FILE *o, const uint8_t *buf, const src_t *s,
                        const blk_t *b, uint64_t shift, int global,
                        uint64_t after, uint8_t *tmp) {
  memcpy(tmp, buf + b->off, b->size);
  for (size_t i = 0; i < s->nev; i++) {
    const sev_t *e = &s->ev[i];
    if (e->off < b->off || e->off >= b->off + b->size)
      continue;
    uint8_t *p = tmp + (e->off - b->off);
    if (e->off == b->off) { /* the marker: its end time always */
      put64(p + 14, get64(p + 14) + shift);
      if (!global)
        put64(p + 2, e->t + shift);
    } else if (!global || e->t > after) {
      put64(p + 2, e->t + shift);
    }
  }
  if (fwrite(tmp, 1, b->size, o) != b->size) {
    perror("el_repeat_blocks: write");
    exit(1);
  }
}

int main(int argc, char **argv) {
  long reps = 10;
  int global_first = 0;
  const char *out = NULL, *in = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-r") && i + 1 < argc)
      reps = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "-g") && i + 1 < argc)
      global_first = !strcmp(argv[++i], "first");
    else if (!strcmp(argv[i], "-o") && i + 1 < argc)
      out = argv[++i];
    else
      in = argv[i];
  }
  if (!in || !out || reps < 1) {
    fprintf(stderr, "usage: el_repeat_blocks [-r REPEAT] [-g last|first] "
                    "-o OUT SOURCE\n");
    return 2;
  }
  FILE *f = fopen(in, "rb");
  if (!f) {
    perror(in);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    perror(in);
    return 1;
  }
  fclose(f);
  static src_t s;
  el_ev_sink_t sink = {.ud = &s, .on_header = on_header,
                       .on_event = on_event, .on_warning = on_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  int rc = el_ev_decoder_feed(d, buf, (size_t)n);
  if (!rc)
    rc = el_ev_decoder_finish(d);
  el_ev_decoder_free(d);
  if (rc || s.bad || !s.nblk) {
    fprintf(stderr, "el_repeat_blocks: %s: not a clean eventlog with "
                    "blocks\n", in);
    return 1;
  }
  /* Every event must lie in a block (DATA_END aside). */
  uint64_t covered = s.hdr_end;
  for (size_t i = 0; i < s.nblk; i++) {
    if (s.blk[i].off != covered) {
      fprintf(stderr, "el_repeat_blocks: bytes outside blocks at %llu\n",
              (unsigned long long)covered);
      return 1;
    }
    covered += s.blk[i].size;
  }
  uint64_t D = s.max_t + 1, last_cap_start = 0, maxblk = 0;
  for (size_t i = 0; i < s.nblk; i++) {
    if (s.blk[i].cap != EL_EV_NO_CAP && s.blk[i].start_t > last_cap_start)
      last_cap_start = s.blk[i].start_t;
    if (s.blk[i].size > maxblk)
      maxblk = s.blk[i].size;
  }
  uint8_t *tmp = malloc(maxblk);
  FILE *o = fopen(out, "wb");
  if (!o || !tmp) {
    perror(out);
    return 1;
  }
  fwrite(buf, 1, s.hdr_end, o);
  uint64_t gshift = (uint64_t)(reps - 1) * D;
  for (int pass = 0; pass < 2; pass++) {
    int global_pass = global_first ? pass == 0 : pass == 1;
    for (long r = 0; r < (global_pass ? 1 : reps); r++)
      for (size_t i = 0; i < s.nblk; i++) {
        const blk_t *b = &s.blk[i];
        if ((b->cap == EL_EV_NO_CAP) != global_pass)
          continue;
        if (global_pass)
          write_block(o, buf, &s, b, gshift, 1, last_cap_start, tmp);
        else
          write_block(o, buf, &s, b, (uint64_t)r * D, 0, 0, tmp);
      }
  }
  static const uint8_t end[2] = {0xFF, 0xFF};
  fwrite(end, 1, 2, o);
  if (fclose(o) != 0) {
    perror(out);
    return 1;
  }
  free(tmp);
  free(buf);
  free(s.ev);
  free(s.blk);
  return 0;
}
