/* el_repeat_blocks.c: write a large GHC-9.0-shaped eventlog for the
 * pipeline benchmark by repeating a real log's capability blocks.
 *
 * Usage: el_repeat_blocks [-r REPEAT] [-g last|first] [-t | --thread-offset
 *                         N] -o OUT SOURCE
 *   -r  how many times the capability blocks are written (default 10:
 *       threads-big.eventlog, 12 MB, gives about 120 MB)
 *   -g  where the global blocks go: "last" (default) after every
 *       capability block, as GHC 9.0 writes its global buffer (startup
 *       events included) only at exit; "first" right after the header
 *   -t  give each repetition thread ids of its own: repetition r adds
 *       r * (the largest thread id in SOURCE + 1) to every thread id
 *   --thread-offset N  the same with r * N (N above the largest id)
 *   Without -t the thread ids repeat: every repetition after the first
 *   names threads that already finished (STOP_THREAD status 5), whose
 *   events the analyses skip, so such a log measures less work than its
 *   event count suggests.
 *
 * Output (spec/eventlog-format.md §1): SOURCE's header; its capability
 * blocks (BLOCK_MARKER cap != 0xFFFF, §1.5) byte for byte, REPEAT times,
 * repetition r with every event time and the markers' start and end times
 * raised by r * D, D = the largest time in SOURCE + 1, so time keeps
 * increasing from one repetition to the next; its global blocks (cap
 * 0xFFFF) once, where -g says, with the events later than the last
 * capability block's start (the shutdown: TASK_DELETE, CAP_DELETE, ...)
 * and the block's end time raised by (REPEAT - 1) * D, so they stay last;
 * then DATA_END outside any block (as GHC <= 9.0, §1.5). With -t, a
 * thread id is every field of the project's type table (eventlog.h,
 * spec §2.1) named "thread" or "*_thread" (CREATE_THREAD, RUN_THREAD,
 * STOP_THREAD, THREAD_RUNNABLE, MIGRATE_THREAD, RUN_SPARK, STEAL_SPARK,
 * THREAD_WAKEUP, CREATE_SPARK_THREAD, THREAD_LABEL, the Eden and Mercury
 * ones), in the layout the decoder found (el_ev_event_t.layout), and
 * STOP_THREAD's info when its status is BlockedOnBlackHole (8) and info
 * is not 0 ("owner unknown", §2.2); a global block's events take the
 * offset of the repetition their time was shifted with (the last, or
 * none). Events outside
 * blocks other than DATA_END are not supported (GHC >= 7 writes none).
 * The source is read with the project's decoder; sizes and layouts come
 * from its header. Exit status 0, or 1 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventlog/eventlog.h"

#define EV_BLOCK_MARKER 18
#define MAX_THR 4 /* thread-id fields of one event, at most */

typedef struct {
  uint64_t off, size, start_t;
  uint16_t cap;
} blk_t;

typedef struct {
  uint64_t off, len, t;
  uint16_t type;
  uint8_t known;  /* el_ev_event_t.known */
  uint8_t layout; /* el_ev_event_t.layout */
} sev_t;

/* The type table's layouts (eventlog.h, spec §2.1) with each field's wire
 * width in bytes, -1 for a field of variable width. */
typedef struct {
  const char *name;
  int width;
} fld_t;

typedef struct {
  uint16_t id;
  uint8_t variant;
  fld_t f[EL_EV_MAX_FIELDS + 1]; /* ends with name NULL */
} lay_t;

enum {
  W_U8 = 1,
  W_U16 = 2,
  W_U32 = 4,
  W_U64 = 8,
  W_LOG2U8 = 1,
  W_DEPTH = 1,
  W_TEXT = -1,
  W_TEXT_M4 = -1,
  W_CSTR = -1,
  W_STRLIST = -1,
  W_STACK = -1,
  W_BYTES = -1,
  W_OPT_U64 = -1,
  W_OPT_CSTR = -1
};

#define F(name, wire) {#name, W_##wire},
#define NO_FIELDS
#define T(id, name, fields) {id, 0, {fields{NULL, 0}}},
#define V(id, name, variant, fields) {id, variant, {fields{NULL, 0}}},
static const lay_t layouts[] = {EL_EV_TYPE_TABLE(T, V)};
#undef F
#undef NO_FIELDS
#undef T
#undef V

/* Where one layout keeps thread ids: payload byte offsets of its u32
 * fields named "thread" or "*_thread", and of STOP_THREAD's status and
 * info (-1: none). */
typedef struct {
  uint16_t id;
  uint8_t variant, n;
  int off[MAX_THR];
  int status_off, info_off;
} thr_lay_t;

static thr_lay_t thr_lays[sizeof layouts / sizeof layouts[0]];
static int first_lay[65536]; /* index + 1 of the type's first row, or 0 */

static int is_thread_field(const char *name) {
  size_t n = strlen(name);
  return !strcmp(name, "thread") || (n > 7 && !strcmp(name + n - 7, "_thread"));
}

/* Fill thr_lays from layouts. A thread field after a field of variable
 * width (none in the table today) would have no fixed offset: exit 1. */
static void build_thr_lays(void) {
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
    const lay_t *l = &layouts[i];
    thr_lay_t *t = &thr_lays[i];
    *t = (thr_lay_t){
        .id = l->id, .variant = l->variant, .status_off = -1, .info_off = -1};
    if (!first_lay[l->id]) first_lay[l->id] = (int)i + 1;
    int at = 0;
    for (const fld_t *f = l->f; f->name; f++) {
      int thr = is_thread_field(f->name);
      if ((thr && (at < 0 || f->width != 4 || t->n == MAX_THR))) {
        fprintf(stderr,
                "el_repeat_blocks: type %u field %s: no fixed u32 "
                "offset\n",
                l->id, f->name);
        exit(1);
      }
      if (thr) t->off[t->n++] = at;
      if (l->id == EL_EV_STOP_THREAD && !strcmp(f->name, "status"))
        t->status_off = at;
      if (l->id == EL_EV_STOP_THREAD && !strcmp(f->name, "info"))
        t->info_off = at;
      at = at < 0 || f->width < 0 ? -1 : at + f->width;
    }
  }
}

/* The payload offsets of e's thread ids (payload p of plen bytes) into
 * off[]; returns how many. STOP_THREAD's info counts when its status is
 * BlockedOnBlackHole and it is not 0 (owner unknown, spec §2.2). */
static int thread_offsets(const sev_t *e, const uint8_t *p, uint64_t plen,
                          int off[MAX_THR + 1]) {
  if (!e->known || !first_lay[e->type]) return 0;
  const thr_lay_t *t = &thr_lays[first_lay[e->type] - 1];
  while (t->variant != e->layout) {
    if (++t == thr_lays + sizeof thr_lays / sizeof thr_lays[0] ||
        t->id != e->type)
      return 0;
  }
  int n = 0;
  for (int k = 0; k < t->n; k++)
    if ((uint64_t)t->off[k] + 4 <= plen) off[n++] = t->off[k];
  if (t->info_off >= 0 && (uint64_t)t->info_off + 4 <= plen &&
      (p[t->status_off] << 8 | p[t->status_off + 1]) ==
          EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE &&
      (p[t->info_off] | p[t->info_off + 1] | p[t->info_off + 2] |
       p[t->info_off + 3]))
    off[n++] = t->info_off;
  return n;
}

typedef struct {
  blk_t *blk;
  size_t nblk, cblk;
  sev_t *ev;
  size_t nev, cev;
  uint64_t hdr_end;       /* offset of the first event */
  uint64_t max_t;         /* largest event or block-end time */
  uint32_t max_thread;    /* largest thread id (thread_offsets) */
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
  v->known = e->known;
  v->layout = e->layout;
  int off[MAX_THR + 1];
  int n = thread_offsets(v, e->payload, e->payload_len, off);
  for (int k = 0; k < n; k++) {
    const uint8_t *q = e->payload + off[k];
    uint32_t th = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
                  (uint32_t)q[2] << 8 | q[3];
    if (th > s->max_thread) s->max_thread = th;
  }
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

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static void put32(uint8_t *p, uint32_t v) {
  for (int k = 3; k >= 0; k--, v >>= 8) p[k] = (uint8_t)v;
}

/* Add tshift to the thread ids of event e, written at p (its header). */
static void shift_threads(const src_t *s, const sev_t *e, uint8_t *p,
                          uint32_t tshift) {
  if (!tshift) return;
  int hdr = s->var[e->type] ? 12 : 10;
  int off[MAX_THR + 1];
  int n = thread_offsets(e, p + hdr, e->len - (uint64_t)hdr, off);
  for (int k = 0; k < n; k++)
    put32(p + hdr + off[k], get32(p + hdr + off[k]) + tshift);
}

/* Write block b of buf with its marker's end time raised by shift and,
 * for a capability block (global = 0), every event time and the marker's
 * start time too; for a global block only the events later than after.
 * The events whose time is raised get tshift added to their thread ids. */
static void write_block(FILE *o, const uint8_t *buf, const src_t *s,
                        const blk_t *b, uint64_t shift, uint32_t tshift,
                        int global, uint64_t after, uint8_t *tmp) {
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
      shift_threads(s, e, p, tshift);
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
  int thread_auto = 0;
  long long thread_off = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-r") && i + 1 < argc)
      reps = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "-t"))
      thread_auto = 1;
    else if (!strcmp(argv[i], "--thread-offset") && i + 1 < argc)
      thread_off = strtoll(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "-g") && i + 1 < argc)
      global_first = !strcmp(argv[++i], "first");
    else if (!strcmp(argv[i], "-o") && i + 1 < argc)
      out = argv[++i];
    else
      in = argv[i];
  }
  if (!in || !out || reps < 1 || thread_off < 0 || thread_off > UINT32_MAX) {
    fprintf(stderr,
            "usage: el_repeat_blocks [-r REPEAT] [-g last|first] "
            "[-t | --thread-offset N] -o OUT SOURCE\n");
    return 2;
  }
  build_thr_lays();
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
  if (thread_auto) thread_off = (long long)s.max_thread + 1;
  if (thread_off && thread_off <= s.max_thread) {
    fprintf(stderr,
            "el_repeat_blocks: thread offset %lld is not above "
            "the largest thread id of %s, %u\n",
            thread_off, in, s.max_thread);
    return 1;
  }
  if ((uint64_t)thread_off * (uint64_t)(reps - 1) + s.max_thread > UINT32_MAX) {
    fprintf(stderr,
            "el_repeat_blocks: thread ids beyond 2^32 - 1 (offset "
            "%lld, %ld repetitions, largest id %u)\n",
            thread_off, reps, s.max_thread);
    return 1;
  }
  if (thread_off)
    fprintf(stderr,
            "el_repeat_blocks: thread ids offset by %lld per "
            "repetition (largest in %s: %u)\n",
            thread_off, in, s.max_thread);
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
          write_block(o, buf, &s, b, gshift,
                      (uint32_t)(thread_off * (reps - 1)), 1, last_cap_start,
                      tmp);
        else
          write_block(o, buf, &s, b, (uint64_t)r * D,
                      (uint32_t)(thread_off * r), 0, 0, tmp);
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
