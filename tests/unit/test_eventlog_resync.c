/* test_eventlog_resync.c: the decoder resynchronises after a corrupt part
 * of a stream (docs/eventlog.md, Resynchronisation) instead of losing the
 * rest of it.
 *
 * A real GHC 9.0 log (threads-big: 7 blocks, capabilities 0 and 1) is
 * corrupted in the ways real eventlog-socket streams were seen corrupted
 * (tests/e2e/test_producer_tcp.sh on GHC 9.0): a block whose size ends
 * inside an event, garbage spliced mid-block, a block cut short inside an
 * event followed by a valid block (with and without the cut event's tail
 * after the next block's marker, GHC #26222), a stale block marker with
 * the tail of a cut event in place of a block's marker, and a whole block
 * of another (earlier) session spliced in mid-block. Every event of every
 * later intact block must be decoded, at its offset, with its type and
 * time, for any chunking; the skipped part is reported once with its
 * offset and length. The expected events come from walk(), a framing of
 * the clean file written for this test (header sizes, event lengths; no
 * decoder code), and the edits' offsets.
 *
 * Two real captures (the .tee files in tests/data/eventlogs/eventlog-socket/, the first
 * blocks of raw streams from the real eventlog-socket on GHC 9.0 after a
 * reconnection) are decoded too: their expected counts were computed with
 * an independent Python framing of the capture (see the README there).
 *
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_eventlog_util.h"

/* {====== the clean file, framed independently ======} */

typedef struct {
  size_t off, len;
  uint16_t type;
  uint64_t t;
  int block; /* index of the block it is in (its marker's), -1 none */
} wev_t;

typedef struct {
  size_t off, size; /* marker offset, block size */
  size_t first, n;  /* its events in ev[]: the marker, then the body */
} wblk_t;

typedef struct {
  wev_t *ev;
  size_t nev;
  wblk_t bl[64];
  size_t nbl;
} walk_t;

static uint32_t be(const uint8_t *p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}
static uint64_t be64(const uint8_t *p) {
  return (uint64_t)be(p, 4) << 32 | be(p + 4, 4);
}

/* Frame the clean log: header declarations, then events by their sizes up
 * to DATA_END. */
static void walk(const uint8_t *p, size_t n, walk_t *w) {
  static int32_t size[65536];
  for (size_t i = 0; i < 65536; i++) size[i] = -1;
  assert_memory_equal(p, "hdrbhetb", 8);
  size_t i = 8;
  while (!memcmp(p + i, "etb\0", 4)) {
    uint32_t id = be(p + i + 4, 2), sz = be(p + i + 6, 2);
    uint32_t dl = be(p + i + 8, 4);
    uint32_t xl = be(p + i + 12 + dl, 4);
    size[id] = (int32_t)sz;
    i += 16 + dl + xl + 4;
  }
  assert_memory_equal(p + i, "hetehdredatb", 12);
  i += 12;
  w->nev = 0;
  w->nbl = 0;
  w->ev = malloc(n / 10 * sizeof *w->ev);
  size_t bend = 0;
  int blk = -1;
  while (i + 2 <= n) {
    uint32_t type = be(p + i, 2);
    if (type == 0xFFFF) break;
    assert_true(size[type] >= 0);
    size_t hl = 10, len = (size_t)size[type];
    if (len == 0xFFFF) {
      len = be(p + i + 10, 2);
      hl = 12;
    }
    if (type == 18) {
      assert_true(w->nbl < 64);
      blk = (int)w->nbl;
      w->bl[w->nbl++] = (wblk_t){i, be(p + i + 10, 4), w->nev, 0};
      bend = i + be(p + i + 10, 4);
    } else if (i >= bend) {
      blk = -1;
    }
    w->ev[w->nev++] =
        (wev_t){i, hl + len, (uint16_t)type, be64(p + i + 2), blk};
    if (blk >= 0) w->bl[blk].n++;
    i += hl + len;
  }
}

/* {====== edits ======} */

typedef struct {
  size_t from, to; /* clean bytes [from, to) replaced by */
  uint8_t *with;   /* these (owned) */
  size_t wlen;
} edit_t;

typedef struct {
  edit_t e[8];
  int n;
} edits_t;

static void edit(edits_t *E, size_t from, size_t to, const void *with,
                 size_t wlen) {
  edit_t *e = &E->e[E->n++];
  e->from = from;
  e->to = to;
  e->with = malloc(wlen + 1);
  if (wlen) memcpy(e->with, with, wlen);
  e->wlen = wlen;
}

static void edit_u32(edits_t *E, size_t at, uint32_t v) {
  uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                  (uint8_t)v};
  edit(E, at, at + 4, b, 4);
}

/* The corrupted bytes (edits in increasing order, not overlapping). */
static uint8_t *apply(const uint8_t *p, size_t n, const edits_t *E,
                      size_t *out_n) {
  size_t m = n;
  for (int k = 0; k < E->n; k++)
    m += E->e[k].wlen - (E->e[k].to - E->e[k].from);
  uint8_t *q = malloc(m), *o = q;
  size_t at = 0;
  for (int k = 0; k < E->n; k++) {
    assert_true(E->e[k].from >= at);
    memcpy(o, p + at, E->e[k].from - at);
    o += E->e[k].from - at;
    memcpy(o, E->e[k].with, E->e[k].wlen);
    o += E->e[k].wlen;
    at = E->e[k].to;
  }
  memcpy(o, p + at, n - at);
  *out_n = m;
  return q;
}

/* Where clean offset x lies in the corrupted bytes (x not inside an
 * edit's range; bytes inserted at x come before it). */
static size_t map(const edits_t *E, size_t x) {
  size_t y = x;
  for (int k = 0; k < E->n; k++)
    if (E->e[k].to <= x) y = y + E->e[k].wlen - (E->e[k].to - E->e[k].from);
  return y;
}

static void edits_free(edits_t *E) {
  for (int k = 0; k < E->n; k++) free(E->e[k].with);
  E->n = 0;
}

/* {====== decoding the corrupted bytes ======} */

typedef struct {
  tu_digest_t g;
  uint64_t *off;
  uint16_t *type;
  uint64_t *t;
  uint16_t *evcap; /* each event's capability */
  size_t n, cap;
  int ncorrupt;
  uint64_t corrupt_off[16];
  char corrupt_msg[16][512];
  int nother; /* the other warnings (code 0) */
  char other_msg[16][512];
} rec_t;

/* Set while check_every_event decodes: it compares each event (offset,
 * type, time, capability) with the clean log's, not digests, so
 * rec_event does not compute tu_on_event's FNV digest (byte by byte,
 * nearly half the time of this file's decodes) but still reads every
 * byte the event points to (payload, string fields), so that
 * AddressSanitizer checks those views as the digest's reads did. */
static int no_digest;

/* A sum of the bytes e points to (see no_digest). */
static uint64_t touch(const el_ev_event_t *e) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < e->payload_len; i++) sum += e->payload[i];
  const el_ev_type_info_t *t = el_ev_type_info(e->type);
  for (unsigned i = 0; e->known && t && i < e->nfields; i++)
    if (t->fields[i].kind != EL_EV_U64 && t->fields[i].kind != EL_EV_I64)
      for (size_t k = 0; k < e->v[i].s.len; k++) sum += (uint8_t)e->v[i].s.p[k];
  return sum;
}

static int rec_event(void *ud, const el_ev_event_t *e) {
  rec_t *r = ud;
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 4096;
    r->off = realloc(r->off, r->cap * sizeof *r->off);
    r->type = realloc(r->type, r->cap * sizeof *r->type);
    r->t = realloc(r->t, r->cap * sizeof *r->t);
    r->evcap = realloc(r->evcap, r->cap * sizeof *r->evcap);
  }
  r->evcap[r->n] = e->cap;
  r->off[r->n] = e->offset;
  r->type[r->n] = e->type;
  r->t[r->n] = e->t_ns;
  r->n++;
  if (!no_digest) return tu_on_event(&r->g, e);
  r->g.events++;
  r->g.max_offset = e->offset;
  r->g.h += touch(e);
  return 0;
}

static void rec_warning(void *ud, const el_diag_t *d) {
  rec_t *r = ud;
  if (d->code == EL_ECORRUPT && r->ncorrupt < 16) {
    r->corrupt_off[r->ncorrupt] = d->offset;
    snprintf(r->corrupt_msg[r->ncorrupt], sizeof r->corrupt_msg[0], "%s",
             d->msg);
    r->ncorrupt++;
  } else if (d->code != EL_ECORRUPT && r->nother < 16) {
    snprintf(r->other_msg[r->nother++], sizeof r->other_msg[0], "%s", d->msg);
  }
  tu_on_warning(&r->g, d);
}

/* The arrays of the last rec_t freed, which the next decode reuses: a
 * decode of threads-big records about a million events, and growing
 * fresh arrays for each of the hundreds of decodes cost about as much as
 * the decoding (realloc's copies, page faults). */
static rec_t spare;

static void rec_free(rec_t *r) {
  free(spare.off);
  free(spare.type);
  free(spare.t);
  free(spare.evcap);
  spare.off = r->off, spare.type = r->type, spare.t = r->t;
  spare.evcap = r->evcap, spare.cap = r->cap;
  r->off = NULL, r->type = NULL, r->t = NULL, r->evcap = NULL;
}

/* Decode q[0..n) in chunks of step bytes (0: at once) into r; stats in
 * *st. Feed and finish must not fail (the problems are warnings). */
/* Decoder options for decode (EL_EV_OPT_LIVE: as stdin and FIFOs). */
static unsigned decode_opts;

static void decode(const uint8_t *q, size_t n, size_t step, rec_t *r,
                   el_ev_stats_t *st) {
  memset(r, 0, sizeof *r);
  r->off = spare.off, r->type = spare.type, r->t = spare.t;
  r->evcap = spare.evcap, r->cap = spare.cap;
  memset(&spare, 0, sizeof spare);
  el_ev_sink_t s = tu_sink(&r->g);
  s.ud = r;
  s.on_event = rec_event;
  s.on_warning = rec_warning;
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_non_null(d);
  assert_int_equal(el_ev_decoder_set_opts(d, decode_opts), 0);
  if (!step) step = n;
  for (size_t i = 0; i < n; i += step)
    assert_int_equal(el_ev_decoder_feed(d, q + i, n - i < step ? n - i : step),
                     0);
  assert_int_equal(el_ev_decoder_finish(d), 0);
  *st = *el_ev_decoder_stats(d);
  el_ev_decoder_free(d);
}

/* The index of the first event delivered at offset o or after. */
static size_t first_at(const rec_t *r, uint64_t o) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) { /* offsets are increasing */
    size_t mid = (lo + hi) / 2;
    if (r->off[mid] < o)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Was an event of this type and time delivered at offset o? */
static int delivered(const rec_t *r, uint64_t o, uint16_t type, uint64_t t) {
  size_t lo = first_at(r, o);
  return lo < r->n && r->off[lo] == o && r->type[lo] == type && r->t[lo] == t;
}

/* delivered, with *j (0 at first) set to first_at(r, o): found by
 * moving on from *j when o is past the event before it (offsets asked in
 * increasing order: linear in the events over all the calls instead of a
 * binary search each), else by first_at (o went back: an event inside an
 * edit's range, which map leaves where it was). */
static int delivered_from(const rec_t *r, size_t *j, uint64_t o, uint16_t type,
                          uint64_t t) {
  if (*j > 0 && r->off[*j - 1] >= o) *j = first_at(r, o);
  while (*j < r->n && r->off[*j] < o) ++*j;
  size_t lo = *j;
  return lo < r->n && r->off[lo] == o && r->type[lo] == type && r->t[lo] == t;
}

typedef struct {
  const char *name;
  size_t keep_before;     /* clean events ending at or before this are all
                           delivered */
  size_t intact_block;    /* this block and all later ones are intact */
  size_t corrupt_from;    /* the corrupt part: where it starts in the
                           corrupted bytes (NO_PART: none expected) */
  uint64_t corrupt_bytes; /* its length in the corrupted bytes */
} expect_t;

#define NO_PART ((size_t)-1)

/* Check the corrupted log against the clean one's framing, for several
 * chunkings; each must give the same events and warnings. */
static void check(const char *name, const uint8_t *p, size_t n, const walk_t *w,
                  const edits_t *E, const expect_t *x) {
  size_t m;
  uint8_t *q = apply(p, n, E, &m);
  static const size_t steps[] = {0, 4093, 77};
  uint64_t h0 = 0;
  for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
    rec_t r;
    el_ev_stats_t st;
    decode(q, m, steps[si], &r, &st);
    if (si == 0)
      h0 = r.g.h;
    else if (r.g.h != h0)
      fail_msg("%s: chunks of %zu bytes give other events", name, steps[si]);
    /* Every event before the damage. */
    size_t missing = 0, expected = 0;
    for (size_t i = 0; i < w->nev; i++) {
      const wev_t *e = &w->ev[i];
      int later = e->block >= 0 && (size_t)e->block >= x->intact_block;
      if (e->off + e->len > x->keep_before && !later) continue;
      expected++;
      if (!delivered(&r, map(E, e->off), e->type, e->t)) {
        if (!missing)
          print_message(
              "%s: event type %u at clean byte %zu (block %d) "
              "not delivered\n",
              name, e->type, e->off, e->block);
        missing++;
      }
    }
    if (missing)
      fail_msg("%s: %zu of %zu expected events not delivered", name, missing,
               expected);
    /* Sanity of the expectation itself: the later intact blocks are there. */
    assert_true(w->bl[x->intact_block].n > 1000);
    if (x->corrupt_from == NO_PART) {
      assert_int_equal(st.corrupt_parts, 0);
    } else {
      /* Reported once, at its offset, with its length. */
      assert_int_equal(st.corrupt_parts, 1);
      assert_int_equal(r.ncorrupt, 1);
      assert_int_equal(r.corrupt_off[0], x->corrupt_from);
      assert_int_equal(st.corrupt_bytes, x->corrupt_bytes);
      char want[64];
      snprintf(want, sizeof want, "skipped %llu byte%s",
               (unsigned long long)x->corrupt_bytes,
               x->corrupt_bytes == 1 ? " " : "s");
      if (!strstr(r.corrupt_msg[0], want))
        fail_msg("%s: report \"%s\" lacks \"%s\"", name, r.corrupt_msg[0],
                 want);
      snprintf(want, sizeof want, "block marker at byte %zu",
               map(E, w->bl[x->intact_block].off));
      if (!strstr(r.corrupt_msg[0], want))
        fail_msg("%s: report \"%s\" lacks \"%s\"", name, r.corrupt_msg[0],
                 want);
      assert_true(st.skipped_bytes >= st.corrupt_bytes);
    }
    rec_free(&r);
  }
  free(q);
}

/* What check_every_event expects of a damaged log. */
typedef struct every_s {
  const char *name;
  size_t pivot;        /* also decoded in pieces of pivot and pivot + 1
                       bytes: the first ends there (0: not) */
  size_t part_off;     /* the one corrupt part: its byte */
  uint64_t part_bytes; /* its stats.corrupt_bytes */
  uint64_t skipped;    /* stats.skipped_bytes */
  int nocap_block;     /* this block's events have no capability (-1: none) */
  int cap_block;       /* this block's events have capability cap (-1) */
  uint16_t cap;
  const char *want; /* in the part's report; NULL: no part */
  /* The clean offset of the event whose last bytes were lost (0: none):
   * garbled_kept, it is delivered at its offset with its type and, for
   * its time, the 8 bytes now there (some of them the next marker's);
   * else it is not delivered (its bytes are in the part). */
  size_t garbled;
  int garbled_kept;
} every_t;

/* The clean log p[0..n) (framed: w) with the edits E: every event of the
 * clean log is delivered, at its offset (map), with its type, time and
 * capability, and nothing else: the capability is the one of the marker
 * of the block it lies in by the clean log's framing (0xFFFF outside
 * any), but x->nocap_block's (0xFFFF) and x->cap_block's (x->cap). The
 * damage is one corrupt part as x says. Decoded whole, in pieces of 4093
 * and 77 bytes, of x->pivot and x->pivot + 1, and live (EL_EV_OPT_LIVE,
 * as a pipe or FIFO is read) in pieces of 77 and 7 bytes: the same. */
static void check_every_event(const uint8_t *p, size_t n, const walk_t *w,
                              const edits_t *E, const every_t *x) {
  size_t m;
  uint8_t *q = apply(p, n, E, &m);
  const size_t steps[] = {0, 4093, 77, x->pivot, x->pivot + 1, 77, 7};
  const int live[] = {0, 0, 0, 0, 0, 1, 1};
  for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
    if (si >= 3 && si <= 4 && !x->pivot) continue;
    rec_t r;
    el_ev_stats_t s;
    decode_opts = live[si] ? EL_EV_OPT_LIVE : 0;
    no_digest = 1;
    decode(q, m, steps[si], &r, &s);
    decode_opts = 0;
    no_digest = 0;
    size_t missing = 0, badcap = 0, j = 0;
    for (size_t i = 0; i < w->nev; i++) {
      const wev_t *e = &w->ev[i];
      size_t o = map(E, e->off);
      uint64_t et = e->t;
      if (x->garbled && e->off == x->garbled) {
        if (!x->garbled_kept) {
          size_t g = first_at(&r, o);
          if (g < r.n && r.off[g] == o)
            fail_msg(
                "%s, pieces of %zu%s: the garbled event at byte %zu "
                "delivered",
                x->name, steps[si], live[si] ? " live" : "", o);
          continue;
        }
        et = be64(q + o + 2);
      }
      if (!delivered_from(&r, &j, o, e->type, et)) {
        if (!missing)
          print_message(
              "%s, pieces of %zu%s: event type %u at byte %zu "
              "(block %d) not delivered\n",
              x->name, steps[si], live[si] ? " live" : "", e->type, o,
              e->block);
        missing++;
        continue;
      }
      /* r.off[j] == o: both in increasing offsets */
      uint16_t cap = e->block < 0                 ? 0xFFFF
                     : e->block == x->nocap_block ? 0xFFFF
                     : e->block == x->cap_block
                         ? x->cap
                         : (uint16_t)be(p + w->bl[e->block].off + 22, 2);
      if (r.evcap[j] != cap && !badcap++)
        print_message(
            "%s, pieces of %zu%s: event type %u at byte %zu "
            "(block %d) has capability %u, not %u\n",
            x->name, steps[si], live[si] ? " live" : "", e->type, o, e->block,
            r.evcap[j], cap);
    }
    if (missing || badcap || r.n != w->nev - (x->garbled && !x->garbled_kept))
      fail_msg(
          "%s, pieces of %zu%s: %zu of %zu events missing, %zu with "
          "another capability, %zu delivered",
          x->name, steps[si], live[si] ? " live" : "", missing, w->nev, badcap,
          r.n);
    assert_int_equal(s.corrupt_parts, x->want ? 1 : 0);
    assert_int_equal(r.ncorrupt, x->want ? 1 : 0);
    assert_int_equal(s.corrupt_bytes, x->part_bytes);
    assert_int_equal(s.skipped_bytes, x->skipped);
    if (x->want) {
      assert_int_equal(r.corrupt_off[0], x->part_off);
      if (!strstr(r.corrupt_msg[0], x->want))
        fail_msg("%s: report \"%s\" lacks \"%s\"", x->name, r.corrupt_msg[0],
                 x->want);
    }
    assert_int_equal(r.nother, 0);
    assert_int_equal(r.g.data_ends, 1);
    rec_free(&r);
  }
  free(q);
}

/* The event of block b nearest after the block's middle whose length is
 * in [lo, hi]. */
static const wev_t *mid_event(const walk_t *w, size_t b, size_t lo, size_t hi) {
  const wblk_t *B = &w->bl[b];
  for (size_t i = B->first + B->n / 2; i < B->first + B->n; i++)
    if (w->ev[i].len >= lo && w->ev[i].len <= hi) return &w->ev[i];
  fail_msg("no event of %zu..%zu bytes in block %zu", lo, hi, b);
  return NULL;
}

static uint8_t *P;
static size_t N;
static walk_t W;

static int setup(void **st) {
  (void)st;
  P = tu_read_log("ghc-9.0/threads-big.eventlog", &N);
  if (!P) return -1;
  walk(P, N, &W);
  /* 7 blocks: caps 0 and 1, then the global one; the test damages
   * blocks 1 and 2 and needs 3.. intact. */
  if (W.nbl < 5) return -1;
  return 0;
}

static int teardown(void **st) {
  (void)st;
  free(P);
  free(W.ev);
  rec_t none = {0};
  rec_free(&none); /* frees the spare arrays */
  return 0;
}

/* Block 1's size damaged into a smaller one, to end where the clean
 * log's event e begins plus k bytes: at_end (e's first byte) or inside
 * e. The events from there chain as the block's (declared types, times
 * within the block's) and no block marker stands at that end: the block
 * goes on to the next marker. Every event is delivered with its
 * capability; the size is one corrupt part of its 4 bytes at the
 * marker's byte, nothing skipped. Frees E. */
static void check_size_smaller(const char *name, const uint8_t *p, size_t n,
                               const walk_t *w, size_t b, const wev_t *e,
                               size_t k) {
  const wblk_t *B = &w->bl[b];
  uint32_t size = (uint32_t)(e->off + k - B->off);
  edits_t E = {0};
  edit_u32(&E, B->off + 10, size);
  char want[128];
  snprintf(want, sizeof want,
           "block marker at byte %zu (cap %u, from %llu ns) has a size (%u "
           "bytes) ending at byte %zu inside its block",
           B->off, (unsigned)be(p + B->off + 22, 2),
           (unsigned long long)be64(p + B->off + 2), size, e->off + k);
  every_t x = {name, e->off + k, B->off, 4, 0, -1, -1, 0, want, 0, 0};
  check_every_event(p, n, w, &E, &x);
  edits_free(&E);
}

/* A block's size ends 3 bytes into its last event: that event crosses
 * it, but it and the next block's marker after it chain as the block's
 * (check_size_smaller). Before, the event was skipped as a corrupt part
 * to that marker. */
static void test_event_does_not_fit(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[1];
  check_size_smaller("does not fit", P, N, &W, 1, &W.ev[B->first + B->n - 1],
                     3);
}

/* 300 bytes of garbage (beginning with an undeclared type) spliced between
 * two events in the middle of a block: the rest of that block is lost (it
 * has no marker to find), the next block is found. */
static void test_garbage_mid_block(void **st) {
  (void)st;
  const wev_t *at = mid_event(&W, 1, 1, 1 << 20);
  uint8_t junk[300];
  uint32_t s = 12345;
  for (size_t i = 0; i < sizeof junk; i++) {
    s = s * 1103515245u + 12345u;
    junk[i] = (uint8_t)(s >> 16);
  }
  junk[0] = junk[1] = 0xEE; /* type 0xEEEE: not declared */
  edits_t E = {0};
  edit(&E, at->off, at->off, junk, sizeof junk);
  size_t next = W.bl[2].off;
  expect_t x = {"garbage", at->off, 2, at->off, next + sizeof junk - at->off};
  check(x.name, P, N, &W, &E, &x);
  edits_free(&E);
}

/* A block cut short 5 bytes into an event (the flush wrote what it had:
 * the marker's size says so) and the rest of the block missing; the next
 * block follows. */
static void test_block_cut_short(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[1];
  const wev_t *cut = mid_event(&W, 1, 14, 64);
  edits_t E = {0};
  edit_u32(&E, B->off + 10, (uint32_t)(cut->off + 5 - B->off));
  edit(&E, cut->off + 5, W.bl[2].off, NULL, 0);
  expect_t x = {"cut short", cut->off, 2, cut->off, 5};
  check(x.name, P, N, &W, &E, &x);
  edits_free(&E);
}

/* GHC #26222: the same cut, and the cut event's other bytes after the
 * next block's marker (whose size counts them). The marker is found
 * behind the tail; the tail is skipped and reported with the cut. */
static void test_cut_event_tail_after_marker(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[1], *B2 = &W.bl[2];
  const wev_t *cut = mid_event(&W, 1, 14, 64);
  size_t tail = cut->len - 5;
  edits_t E = {0};
  edit_u32(&E, B->off + 10, (uint32_t)(cut->off + 5 - B->off));
  edit(&E, cut->off + 5, B2->off, NULL, 0);
  edit_u32(&E, B2->off + 10, (uint32_t)(B2->size + tail));
  edit(&E, B2->off + 24, B2->off + 24, P + cut->off + 5, tail);
  expect_t x = {"cut with tail", cut->off, 2, cut->off, 5 + tail};
  check(x.name, P, N, &W, &E, &x);
  edits_free(&E);
}

/* What the real producer sent after a reconnection (restart-stale-
 * marker.tee): in place of a block's marker, a stale one (here block 0's:
 * earlier times, another size) followed by the last 4 bytes of a cut
 * event. That block has no marker left: it is lost; the next is found.
 * Here, in the same session as block 0, the stale marker repeats block
 * 0's (capability 1, the same times: out of that capability's time
 * order), so the part begins at it, not after it; after a reconnection
 * (a new session, test_real_captures) it is delivered. */
static void test_stale_marker(void **st) {
  (void)st;
  const wblk_t *B0 = &W.bl[0], *B2 = &W.bl[2];
  assert_int_equal(be(P + B0->off + 22, 2), be(P + B2->off + 22, 2));
  uint8_t stale[24 + 4];
  memcpy(stale, P + B0->off, 24);
  static const uint8_t cut_tail[4] = {0xEE, 0xEE, 0x00, 0x00};
  memcpy(stale + 24, cut_tail, 4);
  edits_t E = {0};
  edit(&E, B2->off, B2->off + 24, stale, sizeof stale);
  /* The part: from the stale marker to block 3's marker, 4 bytes further
   * on. */
  expect_t x = {"stale marker", B2->off, 3, B2->off, W.bl[3].off + 4 - B2->off};
  check(x.name, P, N, &W, &E, &x);
  edits_free(&E);
}

/* One byte inserted right before block 2's marker (GHC 9.0 writes markers
 * outside any block): with the marker's first byte it reads as an
 * undeclared type outside any block. That is a corrupt part like the
 * others, not an error: reported once (a warning naming its byte and the
 * marker decoding resumes at, nothing returned by feed or finish: decode()
 * checks), 1 byte skipped, every event delivered. Before, the same byte
 * was also returned as an EL_EUNDECL error (reported twice, and `run`,
 * `report` and the daemon exited 1). */
static void test_undeclared_before_marker(void **st) {
  (void)st;
  /* before block 2's marker, and before the first one (no block yet: the
   * header declares BLOCK_MARKER, so the data is made of blocks) */
  static const int blocks[] = {2, 0};
  for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++) {
    const wblk_t *B = &W.bl[blocks[bi]];
    static const uint8_t one[1] = {0x07};
    edits_t E = {0};
    edit(&E, B->off, B->off, one, 1);
    expect_t x = {"byte before a marker", B->off, (size_t)blocks[bi], B->off,
                  1};
    check(x.name, P, N, &W, &E, &x);
    size_t m;
    uint8_t *q = apply(P, N, &E, &m);
    rec_t r;
    el_ev_stats_t s;
    decode(q, m, 0, &r, &s);
    char want[96];
    snprintf(want, sizeof want,
             "at byte %zu is not declared in the header (outside any block)",
             B->off);
    if (!strstr(r.corrupt_msg[0], want))
      fail_msg("report \"%s\" lacks \"%s\"", r.corrupt_msg[0], want);
    assert_null(strstr(r.corrupt_msg[0], "(text:"));
    assert_int_equal(r.n, W.nev);
    assert_int_equal(r.nother, 0);
    rec_free(&r);
    free(q);
    edits_free(&E);
  }
}

/* A program's own output written into its eventlog (+RTS -ol/dev/stdout
 * with a program that prints): 19 bytes of text before the first block
 * marker. One corrupt part of those bytes, whose report quotes them as
 * text; every event delivered. */
static void test_text_before_first_marker(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[0];
  static const char text[] = "start 17964553 x\nA\n";
  edits_t E = {0};
  edit(&E, B->off, B->off, (const uint8_t *)text, sizeof text - 1);
  expect_t x = {"text before the first marker", B->off, 0, B->off,
                sizeof text - 1};
  check(x.name, P, N, &W, &E, &x);
  size_t m;
  uint8_t *q = apply(P, N, &E, &m);
  rec_t r;
  el_ev_stats_t s;
  decode(q, m, 0, &r, &s);
  if (!strstr(r.corrupt_msg[0],
              "(text: \"start 17964553 x...\": program output in the "
              "eventlog?); skipped 19 bytes (2688 to 2707)"))
    fail_msg("report \"%s\" does not quote the text", r.corrupt_msg[0]);
  assert_int_equal(r.n, W.nev);
  rec_free(&r);
  free(q);
  edits_free(&E);
}

/* The same with a short line, fewer than 8 bytes ("300000\n": a program
 * printing a number, h51): quoted as text too; two printable bytes that
 * are not a whole line ("30") are not. */
static void test_short_line_before_marker(void **st) {
  (void)st;
  static const struct {
    const char *text, *quoted; /* quoted: NULL when no text hint */
  } cases[] = {{"300000\n",
                "(text: \"300000 ...\": program output in the "
                "eventlog?); skipped 7 bytes (2688 to 2695)"},
               {"30", NULL}};
  const wblk_t *B = &W.bl[0];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t len = strlen(cases[i].text);
    edits_t E = {0};
    edit(&E, B->off, B->off, (const uint8_t *)cases[i].text, len);
    expect_t x = {"short text before the first marker", B->off, 0, B->off, len};
    check(x.name, P, N, &W, &E, &x);
    size_t m;
    uint8_t *q = apply(P, N, &E, &m);
    rec_t r;
    el_ev_stats_t s;
    decode(q, m, 0, &r, &s);
    if (cases[i].quoted && !strstr(r.corrupt_msg[0], cases[i].quoted))
      fail_msg("report \"%s\" lacks \"%s\"", r.corrupt_msg[0], cases[i].quoted);
    if (!cases[i].quoted) assert_null(strstr(r.corrupt_msg[0], "(text:"));
    assert_int_equal(r.n, W.nev);
    rec_free(&r);
    free(q);
    edits_free(&E);
  }
}

/* A whole block of an earlier session (heapy-hT's global block, recorded
 * by the same GHC) spliced between two events mid-block. It frames: it is
 * decoded as a block (not detectable as stale by framing), and everything
 * else, in that block and after, is delivered too, with its capability
 * (the clean log's): where the spliced block ends, the block it lies in
 * goes on (before, its events after the splice had none). */
static void test_stale_block_spliced(void **st) {
  (void)st;
  size_t sn = 0;
  uint8_t *sp = tu_read_log("ghc-9.0/heapy-hT.eventlog", &sn);
  assert_non_null(sp);
  walk_t sw;
  walk(sp, sn, &sw);
  const wblk_t *g = &sw.bl[sw.nbl - 1];
  assert_int_equal(be(sp + g->off + 22, 2), 0xFFFF);
  const wev_t *at = mid_event(&W, 1, 1, 1 << 20);
  edits_t E = {0};
  edit(&E, at->off, at->off, sp + g->off, g->size);
  expect_t x = {"stale block", N, 2, NO_PART, 0};
  check(x.name, P, N, &W, &E, &x);
  size_t m;
  uint8_t *q = apply(P, N, &E, &m);
  rec_t r;
  el_ev_stats_t s;
  decode(q, m, 0, &r, &s);
  size_t badcap = 0, j = 0;
  for (size_t i = 0; i < W.nev; i++) {
    const wev_t *e = &W.ev[i];
    size_t o = map(&E, e->off);
    while (j < r.n && r.off[j] < o) j++;
    assert_true(j < r.n && r.off[j] == o);
    uint16_t cap = e->block < 0 ? 0xFFFF : be(P + W.bl[e->block].off + 22, 2);
    if (r.evcap[j] != cap && !badcap++)
      print_message("event type %u at byte %zu: capability %u, not %u\n",
                    e->type, o, r.evcap[j], cap);
  }
  assert_int_equal(badcap, 0);
  rec_free(&r);
  free(q);
  edits_free(&E);
  free(sw.ev);
  free(sp);
}

/* Block 1 (capability 0) repeated, its bytes inserted again at clean
 * byte at (E): one corrupt part of `bytes` bytes from it (in the damaged
 * bytes, at), every event of the clean log delivered once with its
 * capability (check_every_event), and the report naming the copy's byte
 * and times, and the end and byte of block prev (capability 0's block
 * before it); tail: the rest of the report (where decoding went on).
 * Frees E. */
static void check_repeated(const char *name, edits_t *E, size_t at,
                           uint64_t bytes, size_t prev, const char *tail) {
  const wblk_t *B = &W.bl[1], *Q = &W.bl[prev];
  char want[256];
  snprintf(want, sizeof want,
           "block marker at byte %zu (cap 0, %llu to %llu ns) begins before "
           "the end (%llu ns) of cap 0's block at byte %zu: repeated or "
           "misplaced; %s",
           at, (unsigned long long)be64(P + B->off + 2),
           (unsigned long long)be64(P + B->off + 14),
           (unsigned long long)be64(P + Q->off + 14), Q->off, tail);
  every_t x = {name, at + 24, at, bytes, bytes, -1, -1, 0, want, 0, 0};
  check_every_event(P, N, &W, E, &x);
  edits_free(E);
}

/* One capability's block repeated (its bytes twice in a row, as `cat` or
 * `head -c` splicing or a producer bug make them; h75): GHC writes a
 * capability's blocks in time order, and the copy begins before the end
 * of the block before it of that capability. Before, its events were
 * delivered and counted twice, silently. Now it is a corrupt part: the
 * copy skipped to the next block marker, every event delivered once,
 * reported once. Also a range of blocks repeated (blocks 1 to 3 again
 * after 3: one part, the copies of 2 and 3 out of order too), and block
 * 1 spliced into the middle of block 2 (another capability's): the copy
 * skipped by its size, block 2 goes on with its capability. */
static void test_block_repeated(void **st) {
  (void)st;
  const wblk_t *B1 = &W.bl[1], *B4 = &W.bl[4];
  assert_int_equal(be(P + B1->off + 22, 2), 0);
  edits_t E = {0};
  edit(&E, W.bl[2].off, W.bl[2].off, P + B1->off, B1->size);
  char tail[160];
  snprintf(tail, sizeof tail,
           "skipped %zu bytes (%zu to %zu) to the block marker at byte %zu",
           B1->size, W.bl[2].off, W.bl[2].off + B1->size,
           W.bl[2].off + B1->size);
  check_repeated("block repeated", &E, W.bl[2].off, B1->size, 1, tail);

  size_t range = B4->off - B1->off;
  edit(&E, B4->off, B4->off, P + B1->off, range);
  snprintf(tail, sizeof tail,
           "skipped %zu bytes (%zu to %zu) to the block marker at byte %zu",
           range, B4->off, B4->off + range, B4->off + range);
  assert_int_equal(be(P + W.bl[3].off + 22, 2), 0);
  check_repeated("blocks repeated", &E, B4->off, range, 3, tail);

  const wev_t *at = mid_event(&W, 2, 1, 1 << 20);
  assert_int_equal(be(P + W.bl[2].off + 22, 2), 1);
  edit(&E, at->off, at->off, P + B1->off, B1->size);
  snprintf(tail, sizeof tail,
           "inside cap 1's block: skipped %zu bytes (%zu to %zu), that "
           "block goes on",
           B1->size, at->off, at->off + B1->size);
  check_repeated("block repeated inside another", &E, at->off, B1->size, 1,
                 tail);
}

/* Block 1 damaged by E at the event at: one corrupt part from it to
 * block 2's marker (check), reported with want in its message, and every
 * later block decoded up to the clean log's last event. Frees E. */
static void check_mid_block(const char *name, edits_t *E, const wev_t *at,
                            const char *want) {
  expect_t x = {name, at->off, 2, at->off, W.bl[2].off - at->off};
  check(x.name, P, N, &W, E, &x);
  size_t m;
  uint8_t *q = apply(P, N, E, &m);
  rec_t r;
  el_ev_stats_t s;
  decode(q, m, 0, &r, &s);
  if (r.ncorrupt != 1 || !strstr(r.corrupt_msg[0], want))
    fail_msg("%s: report \"%s\" lacks \"%s\"", name,
             r.ncorrupt ? r.corrupt_msg[0] : "", want);
  assert_true(r.n > 0);
  assert_int_equal(r.off[r.n - 1], W.ev[W.nev - 1].off);
  rec_free(&r);
  free(q);
  edits_free(E);
}

/* 40 bytes of 0xFF written over a block's middle, from the start of an
 * event: its type reads as the end-of-data marker (0xFFFF), inside a block
 * whose marker declared it longer. That is damage, not the end of the
 * data: the part from there to the next block is skipped and reported
 * (naming the marker and its byte), and every later block is decoded. A
 * real end-of-data marker is followed by nothing or by a new header; GHC
 * >= 9.2 puts it as the last 2 bytes of the last block (the clean logs of
 * the reference tests). */
static void test_data_end_mid_block(void **st) {
  (void)st;
  const wev_t *at = mid_event(&W, 1, 1, 1 << 20);
  uint8_t ff[40];
  memset(ff, 0xFF, sizeof ff);
  edits_t E = {0};
  edit(&E, at->off, at->off + sizeof ff, ff, sizeof ff);
  char want[96];
  snprintf(want, sizeof want, "end-of-data marker (type 0xFFFF) at byte %zu",
           at->off);
  check_mid_block("end-of-data marker mid-block", &E, at, want);
}

/* An event in the middle of block 1 dated 2^48 ns, after its block's
 * end time (eventlog-socket's stale first block after a connect): a
 * corrupt part from it to block 2's marker, whose report names the byte
 * and the time; the blocks after it are decoded (docs/eventlog.md,
 * Resynchronisation). */
static void test_dated_after_block(void **st) {
  (void)st;
  const wev_t *at = mid_event(&W, 1, 1, 1 << 20);
  uint8_t t[8] = {0, 1, 0, 0, 0, 0, 0, 0}; /* big-endian 2^48 */
  edits_t E = {0};
  edit(&E, at->off + 2, at->off + 10, t, sizeof t);
  char want[128];
  snprintf(want, sizeof want,
           "at byte %zu is dated 281474976710656 ns, after the end of its "
           "block",
           at->off);
  check_mid_block("event dated after its block", &E, at, want);
}

/* Block 2's marker (GHC 9.0 writes markers outside any block) with its
 * type bytes overwritten by 0xFFFF, the end-of-data marker's type. More
 * data follows it, so it is damage; and the other 22 bytes are a
 * believable marker whose block's events follow: it is read as that
 * marker. Every event is delivered, the marker with its type, and the 2
 * bytes are reported as a corrupt part of 2 bytes; for any chunking,
 * including one whose first feed ends right after the 0xFFFF (a live
 * stream aside, the decoder waits for the bytes that decide). Before,
 * the data ended there: everything after it was ignored, with a
 * warning only. */
static void test_data_end_over_marker(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[2];
  uint8_t ff[2] = {0xFF, 0xFF};
  edits_t E = {0};
  edit(&E, B->off, B->off + 2, ff, 2);
  size_t m;
  uint8_t *q = apply(P, N, &E, &m);
  const size_t steps[] = {0, 4093, 77, B->off + 2, B->off + 100};
  char want[96];
  snprintf(want, sizeof want,
           "(type 0xFFFF) at byte %zu stands where a block marker's type "
           "belongs",
           B->off);
  for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
    rec_t r;
    el_ev_stats_t s;
    decode(q, m, steps[si], &r, &s);
    assert_int_equal(r.n, W.nev);
    for (size_t i = 0; i < W.nev; i++)
      if (!delivered(&r, W.ev[i].off, W.ev[i].type, W.ev[i].t))
        fail_msg("chunks of %zu: event type %u at byte %zu not delivered",
                 steps[si], W.ev[i].type, W.ev[i].off);
    assert_int_equal(s.corrupt_parts, 1);
    assert_int_equal(s.corrupt_bytes, 2);
    assert_int_equal(s.skipped_bytes, 0);
    assert_int_equal(r.ncorrupt, 1);
    assert_int_equal(r.corrupt_off[0], B->off);
    if (!strstr(r.corrupt_msg[0], want))
      fail_msg("report \"%s\" lacks \"%s\"", r.corrupt_msg[0], want);
    assert_int_equal(r.g.data_ends, 1);
    assert_int_equal(r.g.data_end_off, N - 2);
    rec_free(&r);
  }
  free(q);
  edits_free(&E);
}

/* The same 0xFFFF over block 2's marker, whose end time is also damaged
 * (before its start: not a believable marker): a corrupt part from the
 * 0xFFFF to block 3's marker, reported once; every other block is
 * decoded. */
static void test_data_end_over_bad_marker(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[2];
  assert_int_equal(B->off + B->size, W.bl[3].off); /* blocks adjoin */
  uint8_t ff[2] = {0xFF, 0xFF}, t1[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  edits_t E = {0};
  edit(&E, B->off, B->off + 2, ff, 2);
  edit(&E, B->off + 14, B->off + 22, t1, 8);
  expect_t x = {"end-of-data marker over a bad marker", B->off, 3, B->off,
                B->size};
  check(x.name, P, N, &W, &E, &x);
  size_t m;
  uint8_t *q = apply(P, N, &E, &m);
  rec_t r;
  el_ev_stats_t s;
  decode(q, m, 0, &r, &s);
  char want[96];
  snprintf(want, sizeof want,
           "(type 0xFFFF) at byte %zu is followed by more data", B->off);
  if (!strstr(r.corrupt_msg[0], want))
    fail_msg("report \"%s\" lacks \"%s\"", r.corrupt_msg[0], want);
  assert_int_equal(r.n, W.nev - B->n); /* block 2's events, marker too */
  rec_free(&r);
  free(q);
  edits_free(&E);
}

/* Block 2's marker with one field damaged (bytes [at, at + k) replaced by
 * with): its block's events still follow it and chain (declared types,
 * times from its start). They are decoded as that block's, with its
 * capability, and so is everything else: every event of the clean log at
 * its offset, with its type, time and capability (from the clean log's
 * framing: the capability of the marker before it, if it lies in that
 * marker's block). The damaged field is reported once, as a corrupt part
 * of the field's bytes (the size's 4, the end time's 8) at the marker's
 * byte (nothing skipped), with want in the message; for any chunking, also one that ends inside the marker or
 * right after it, before the bytes that decide. Before, the marker was
 * taken for garbage and its whole block skipped to the next marker. */
static void check_marker_field(const char *name, size_t at, size_t k,
                               const uint8_t *with, const char *want) {
  const wblk_t *B = &W.bl[2];
  edits_t E = {0};
  edit(&E, B->off + at, B->off + at + k, with, k);
  size_t m;
  uint8_t *q = apply(P, N, &E, &m);
  /* the last two live (EL_EV_OPT_LIVE), as a pipe or FIFO is read: the
   * decision waits for the marker's block there too */
  const size_t steps[] = {0, 4093, 77, B->off + 12, B->off + 24, 77, 7};
  for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
    rec_t r;
    el_ev_stats_t s;
    decode_opts = si >= 5 ? EL_EV_OPT_LIVE : 0;
    decode(q, m, steps[si], &r, &s);
    decode_opts = 0;
    size_t missing = 0, badcap = 0, j = 0;
    for (size_t i = 0; i < W.nev; i++) {
      const wev_t *e = &W.ev[i];
      if (!delivered(&r, e->off, e->type, e->t)) {
        missing++;
        continue;
      }
      while (r.off[j] != e->off) j++; /* both in increasing offsets */
      uint16_t cap =
          e->block >= 0 ? (uint16_t)be(P + W.bl[e->block].off + 22, 2) : 0xFFFF;
      badcap += r.evcap[j] != cap;
    }
    if (missing || badcap || r.n != W.nev)
      fail_msg(
          "%s, chunks of %zu: %zu of %zu events missing, %zu with "
          "another capability, %zu delivered",
          name, steps[si], missing, W.nev, badcap, r.n);
    assert_int_equal(s.corrupt_parts, 1);
    assert_int_equal(s.corrupt_bytes, at == 10 ? 4 : 8); /* the field */
    assert_int_equal(s.skipped_bytes, 0);
    assert_int_equal(r.ncorrupt, 1);
    assert_int_equal(r.corrupt_off[0], B->off);
    char at_byte[64];
    snprintf(at_byte, sizeof at_byte, "block marker at byte %zu", B->off);
    if (!strstr(r.corrupt_msg[0], at_byte) || !strstr(r.corrupt_msg[0], want))
      fail_msg("%s: report \"%s\" lacks \"%s\" or \"%s\"", name,
               r.corrupt_msg[0], at_byte, want);
    assert_int_equal(r.g.data_ends, 1);
    rec_free(&r);
  }
  free(q);
  edits_free(&E);
}

/* The size's first 2 bytes overwritten with 0xFFFF (a size above 16 MiB),
 * and the size set to 5 (below a marker's 24 bytes). */
static void test_marker_size_damaged(void **st) {
  (void)st;
  static const uint8_t ff[2] = {0xFF, 0xFF}, five[4] = {0, 0, 0, 5};
  check_marker_field("marker size 0xFFFF....", 10, 2, ff,
                     "has a size that is not believable");
  check_marker_field("marker size 5", 10, 4, five,
                     "has a size that is not believable (5 bytes)");
}

/* The end time set to 1 ns, before the marker's start. */
static void test_marker_end_damaged(void **st) {
  (void)st;
  static const uint8_t one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  check_marker_field("marker end time 1", 14, 8, one,
                     "has an end time before its start (1 ns)");
}

/* Bytes lost just before a block marker (GHC 9.0 writes markers between
 * blocks): the last event of the block before frames with the marker's
 * first bytes as its last and ends where its block's size says, and the
 * bytes there, the rest of the marker, do not frame (type 0x12..: not
 * declared) or frame as an event that is not the block's (type 0 after 2
 * bytes lost: its time is not the block's). The search for the next
 * block looks back into that event as well as forward: the marker is
 * found k bytes back. Every event is delivered with its capability (the
 * one before the marker, its last k bytes the marker's, too); one
 * corrupt part of those k bytes at the marker's byte, nothing skipped.
 * Before, the search went forward only: the marker's whole block was
 * lost. 1 byte before blocks 1 (cap 0), 3 (cap 0, after a block of cap
 * 1) and 6 (the global one, the last); 2 and 5 before block 4 (after a
 * STOP_THREAD, 10 bytes of payload), 12 before block 6 (after a
 * HEAP_ALLOCATED, 12). And zero bytes inserted before blocks 3 and 4: the
 * first frames as an event outside any block (type 0) that is not the
 * block's, and a marker follows: a corrupt part of those bytes, skipped
 * (one byte of another value is test_undeclared_before_marker). The same
 * before block 0, where the data begins: before, one zero byte made an
 * event of invented fields (thread 1845494110 at 1,297,036,692 s) and
 * the marker was found 13 bytes back, two made the whole first block a
 * corrupt part (a tester's findings); three made an event dated 5.5
 * hours (0x12 << 40 ns) and the marker was found 11 bytes back; four an
 * event dated 77 s (0x12 << 32 ns), and the marker's next bytes framed
 * as events outside any block up to byte 6169, the first block lost. One
 * to four bytes put the marker's type (00 12) in the first four bytes of
 * the event's time: dated after 10 s, it waits for the bytes that decide
 * (test_first_event_not_a_marker: a believable time does not). */
static void test_byte_lost_before_marker(void **st) {
  (void)st;
  static const struct {
    size_t block, lost, added;
  } cases[] = {{1, 1, 0}, {3, 1, 0},  {6, 1, 0}, {4, 2, 0},
               {4, 5, 0}, {6, 12, 0}, {3, 0, 1}, {4, 0, 2},
               {0, 0, 1}, {0, 0, 2},  {0, 0, 3}, {0, 0, 4}};
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  assert_int_equal(W.nbl, 7);
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    const wblk_t *B = &W.bl[cases[ci].block];
    size_t k = cases[ci].lost, a = cases[ci].added;
    edits_t E = {0};
    if (k)
      edit(&E, B->off - k, B->off, NULL, 0);
    else
      edit(&E, B->off, B->off, zeros, a);
    char want[128];
    if (k)
      snprintf(want, sizeof want,
               "the block marker at byte %zu is %zu byte%s back", B->off - k, k,
               k == 1 ? "" : "s");
    else
      snprintf(want, sizeof want,
               "event CREATE_THREAD (type 0) at byte %zu is outside any "
               "block; skipped %zu byte%s (%zu to %zu) to the block marker "
               "at byte %zu",
               B->off, a, a == 1 ? "" : "s", B->off, B->off + a, B->off + a);
    every_t x = {k ? "bytes lost before a marker" : "bytes added before one",
                 B->off - k,
                 B->off - k,
                 k ? k : a,
                 a,
                 -1,
                 -1,
                 0,
                 want,
                 0,
                 0};
    check_every_event(P, N, &W, &E, &x);
    edits_free(&E);
  }
}

/* More bytes lost before block 6 (the global block, after a 22-byte
 * HEAP_ALLOCATED E of block 5, cap 1) than resync used to look back (16
 * bytes). 17 lost: E keeps its type and the first 3 bytes of its time
 * (zeros) and frames with the marker's first 17 bytes, its time now
 * 00 00 00 00 12 00 00 00 (the marker's type, then its start time's
 * first bytes, zeros): 301,989,888 ns, within its block, so it is
 * delivered with that time (and its fields from the marker's bytes) and
 * block 5 ends where E does, inside the marker; the bytes there do not
 * frame, and the marker is found 17 bytes back: one corrupt part of 17
 * bytes at the marker's byte, nothing skipped, every other event
 * delivered. Before, the look-back (16) missed it and block 6 was lost.
 * 21 lost: E keeps its first byte, 00, which with the marker's 00 makes
 * a CREATE_THREAD (type 0) dated 0x12 << 56 ns, after its block's end:
 * a corrupt part from E's byte, the marker found 1 byte on; E is not
 * delivered (1 byte skipped). RS_BACK is 23 now: a marker whose first
 * 23 bytes an event framed as its own ends after it. */
static void test_bytes_lost_past_16(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[6];
  const wev_t *e = &W.ev[B->first - 1];
  assert_int_equal(e->type, 49);
  assert_int_equal(e->len, 22);
  assert_int_equal(e->off + e->len, B->off);
  for (size_t k = 17; k <= 21; k += 4) {
    edits_t E = {0};
    edit(&E, B->off - k, B->off, NULL, 0);
    char want[256];
    if (k == 17)
      snprintf(want, sizeof want,
               "the block marker at byte %zu is 17 bytes back, inside the "
               "event before",
               B->off - k);
    else
      snprintf(want, sizeof want,
               "event CREATE_THREAD (type 0) at byte %zu is dated "
               "1297036692682704849 ns, after the end of its block (cap 1, "
               "%llu to %llu ns); skipped 1 byte (%zu to %zu) to the block "
               "marker at byte %zu",
               e->off, (unsigned long long)be64(P + W.bl[5].off + 2),
               (unsigned long long)be64(P + W.bl[5].off + 14), e->off,
               e->off + 1, e->off + 1);
    every_t x = {k == 17 ? "17 bytes lost before a marker"
                         : "21 bytes lost before a marker",
                 B->off - k,
                 k == 17 ? B->off - k : e->off,
                 k == 17 ? 17 : 1,
                 k == 17 ? 0 : 1,
                 -1,
                 -1,
                 0,
                 want,
                 e->off,
                 k == 17};
    check_every_event(P, N, &W, &E, &x);
    edits_free(&E);
  }
}

/* A session whose header declares block markers and whose first event is
 * not one (ghc-events' testlog: STARTUP before the first block; the
 * host's tests' synthetic streams): whether bytes were inserted before a
 * marker (data_begin_at) is decided at once when the event's time is
 * believable (500 ns, up to 10 s): it is delivered by the feed that
 * brings it, also live, before any more bytes come. Dated 2 hours, it
 * waits for the bytes that decide, here the end of the input: with no
 * marker near, it is delivered outside any block. Before (fba2550,
 * reverted), every such event waited, and after a feed the host saw
 * nothing. */
static void test_first_event_not_a_marker(void **st) {
  (void)st;
  static const uint64_t times[] = {500, 7200000000000ull};
  for (size_t ti = 0; ti < 2; ti++)
    for (unsigned live = 0; live < 2; live++) {
      static tu_buf_t b;
      b.n = 0;
      tu_hdr_begin(&b);
      tu_decl(&b, 1, 4, "Run thread");
      tu_decl(&b, 18, 14, "Block marker");
      tu_hdr_end(&b);
      tu_ev(&b, 1, times[ti]);
      tu_u32(&b, 7);
      rec_t r;
      memset(&r, 0, sizeof r);
      el_ev_sink_t s = tu_sink(&r.g);
      s.ud = &r;
      s.on_event = rec_event;
      s.on_warning = rec_warning;
      el_ev_decoder_t *d = el_ev_decoder_new(&s);
      assert_non_null(d);
      assert_int_equal(el_ev_decoder_set_opts(d, live ? EL_EV_OPT_LIVE : 0), 0);
      assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), 0);
      assert_int_equal(r.n, ti ? 0 : 1);
      assert_int_equal(el_ev_decoder_finish(d), 0);
      assert_int_equal(r.n, 1);
      assert_int_equal(r.type[0], 1);
      assert_int_equal(r.t[0], times[ti]);
      assert_int_equal(r.evcap[0], 0xFFFF);
      assert_int_equal(r.ncorrupt, 0);
      assert_int_equal(el_ev_decoder_stats(d)->corrupt_parts, 0);
      el_ev_decoder_free(d);
      rec_free(&r);
    }
}

/* Block 2's marker (cap 1) with its capability damaged: 0x7FFF, and 1024
 * (a bit of the high byte), neither seen in the session (0 and 1) and
 * above any the analyses track (1024). The marker is believable
 * but for that field and its events chain: its block is decoded, its
 * events (and the marker) with no capability rather than one the program
 * never had; one corrupt part of the field's 2 bytes at the marker's byte,
 * nothing skipped. Before, the field was taken as it was (every event of
 * the block on capability 32767), silently. A capability a -N128, -N256
 * or (GHC before 9.4) -N300 program has (127, 255, 299), never seen
 * before in the session, is believed: the block's events have it, no
 * part is reported. (A tester's -N300 log whose capability 257's block
 * came before 256's lost capabilities 257 to 299 when the bound was
 * 255: a capability not believed is not seen, so each next one failed
 * too.) */
static void test_marker_cap_damaged(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[2];
  assert_int_equal(be(P + B->off + 22, 2), 1);
  static const uint16_t caps[] = {0x7FFF, 0x0400, 127, 255, 299, 1023};
  for (size_t ci = 0; ci < sizeof caps / sizeof *caps; ci++) {
    uint8_t c[2] = {(uint8_t)(caps[ci] >> 8), (uint8_t)caps[ci]};
    int bad = caps[ci] > 1023;
    edits_t E = {0};
    edit(&E, B->off + 22, B->off + 24, c, 2);
    char want[160];
    snprintf(want, sizeof want,
             "block marker at byte %zu (cap %u, from %llu ns) has a "
             "capability that is not believable (above 1023, and the largest "
             "seen is 1): its events get none",
             B->off, caps[ci], (unsigned long long)be64(P + B->off + 2));
    every_t x = {"marker capability",
                 B->off + 23,
                 B->off,
                 bad ? 2 : 0,
                 0,
                 bad ? 2 : -1,
                 bad ? -1 : 2,
                 caps[ci],
                 bad ? want : NULL,
                 0,
                 0};
    check_every_event(P, N, &W, &E, &x);
    edits_free(&E);
  }
}

/* Block 1's size damaged into a smaller one ending inside the block: 3
 * bytes into an event in its middle (the event crosses it), and right
 * where that event begins (the block seems to end there, and an event of
 * it stands where a block marker belongs). check_size_smaller. Before,
 * the events from there to the next marker were lost (crossing), or
 * delivered with no capability, silently. */
static void test_marker_size_smaller(void **st) {
  (void)st;
  const wev_t *e = mid_event(&W, 1, 14, 64);
  check_size_smaller("size 3 bytes into an event", P, N, &W, 1, e, 3);
  check_size_smaller("size to an event's start", P, N, &W, 1, e, 0);
}

/* Block 1's size damaged into a larger one, ending 10 bytes into block
 * 2's marker: that marker crosses the end, but it is a believable one
 * with its block. The search for the next block begins at it: it is
 * decoded, every event with its capability; one corrupt part of no
 * bytes at its byte. Before, the search began after its first byte and
 * block 2 was lost. (A larger size that leaves the next marker inside
 * the block was, and is, decoded without a word: a marker there begins
 * the next block.) */
static void test_marker_size_larger(void **st) {
  (void)st;
  const wblk_t *B = &W.bl[1], *B2 = &W.bl[2];
  edits_t E = {0};
  edit_u32(&E, B->off + 10, (uint32_t)(B2->off + 10 - B->off));
  char want[160];
  snprintf(want, sizeof want,
           "BLOCK_MARKER (type 18) at byte %zu does not fit its block (cap "
           "%u, ending at byte %zu); it is a believable block marker",
           B2->off, (unsigned)be(P + B->off + 22, 2), B2->off + 10);
  every_t x = {"size into the next marker",
               B2->off,
               B2->off,
               0,
               0,
               -1,
               -1,
               0,
               want,
               0,
               0};
  check_every_event(P, N, &W, &E, &x);
  edits_free(&E);
}

/* The tester's three findings on the shared GHC 9.0 logs, each decoded
 * whole and in pieces, live too (check_every_event): the byte before
 * oddball-hT's second block marker deleted (5,098 of 33,275 events
 * delivered before), that marker's capability set to 32767 (28,177
 * events moved to capability 32767, silently), threads' second block's
 * size lowered so that it ends 3 bytes into the event 1,589 events
 * before the block's end (those 1,589 lost). Every event of the clean
 * log must be delivered, with its capability (none for the damaged
 * capability's block). */
static void test_testers_findings(void **st) {
  (void)st;
  size_t n = 0;
  walk_t w;
  uint8_t *p = tu_read_log("ghc-9.0/oddball-hT.eventlog", &n);
  assert_non_null(p);
  walk(p, n, &w);
  assert_int_equal(w.nev, 33275);
  const wblk_t *B = &w.bl[1];
  edits_t E = {0};
  edit(&E, B->off - 1, B->off, NULL, 0);
  char want[160];
  snprintf(want, sizeof want, "the block marker at byte %zu is 1 byte back",
           B->off - 1);
  every_t x1 = {"oddball-hT, byte lost",
                B->off - 1,
                B->off - 1,
                1,
                0,
                -1,
                -1,
                0,
                want,
                0,
                0};
  check_every_event(p, n, &w, &E, &x1);
  edits_free(&E);
  static const uint8_t c[2] = {0x7F, 0xFF};
  edit(&E, B->off + 22, B->off + 24, c, 2);
  every_t x2 = {"oddball-hT, cap 32767",
                0,
                B->off,
                2,
                0,
                1,
                -1,
                0,
                "has a capability that is not believable",
                0,
                0};
  check_every_event(p, n, &w, &E, &x2);
  edits_free(&E);
  free(w.ev);
  free(p);
  p = tu_read_log("ghc-9.0/threads.eventlog", &n);
  assert_non_null(p);
  walk(p, n, &w);
  assert_int_equal(w.nev, 169097);
  B = &w.bl[1];
  const wev_t *e = &w.ev[B->first + B->n - 1589];
  check_size_smaller("threads, size", p, n, &w, 1, e, 3);
  free(w.ev);
  free(p);
}

/* A real end of data followed by stray bytes (not a new eventlog), then,
 * in the second case, by the whole log again: the first session's data
 * ends at its DATA_END (on_data_end), the bytes are ignored with a
 * warning naming their count and offset, no corrupt part; in the second
 * case the next session is decoded whole. Any chunking. */
static void test_data_end_then_stray_bytes(void **st) {
  (void)st;
  for (int twice = 0; twice < 2; twice++) {
    size_t m = N + 100 + (twice ? N : 0);
    uint8_t *q = malloc(m);
    memcpy(q, P, N);
    memset(q + N, 'x', 100);
    if (twice) memcpy(q + N + 100, P, N);
    const size_t steps[] = {0, 4093, 77, N, N + 50};
    char want[96];
    snprintf(want, sizeof want,
             "ignored 100 bytes from byte %zu after the end of data", N);
    for (size_t si = 0; si < sizeof steps / sizeof *steps; si++) {
      rec_t r;
      el_ev_stats_t s;
      decode(q, m, steps[si], &r, &s);
      assert_int_equal(r.n, (twice ? 2 : 1) * W.nev);
      assert_int_equal(r.g.headers, twice ? 2 : 1);
      assert_int_equal(r.g.data_ends, twice ? 2 : 1);
      assert_int_equal(s.corrupt_parts, 0);
      assert_int_equal(s.skipped_bytes, 100);
      int found = 0;
      for (int k = 0; k < r.nother; k++)
        found |= strstr(r.other_msg[k], want) != NULL;
      if (!found)
        fail_msg("%s, chunks of %zu: no warning \"%s\" (%d others)",
                 twice ? "log, bytes, log" : "log, bytes", steps[si], want,
                 r.nother);
      rec_free(&r);
    }
    free(q);
  }
}

/* {====== real captures ======} */

typedef struct {
  const char *file;
  uint64_t events;     /* events delivered */
  uint64_t part_from;  /* the corrupt part's offset */
  uint64_t part_bytes; /* and length */
  uint64_t marker;     /* the block marker decoding resumes at */
  uint64_t skipped;    /* all skipped bytes (with the 24 stray bytes) */
} capture_t;

static void test_real_captures(void **st) {
  (void)st;
  /* Expected values: tests/data/eventlogs/eventlog-socket/README.md. */
  static const capture_t caps[] = {
      {"eventlog-socket/restart-stale-marker.tee", 14757, 2736, 51339, 54075,
       51363},
      {"eventlog-socket/restart-cut-event.tee", 11836, 28356, 14, 28358, 38},
  };
  for (size_t k = 0; k < sizeof caps / sizeof *caps; k++) {
    const capture_t *c = &caps[k];
    size_t n = 0;
    uint8_t *q = tu_read_log(c->file, &n);
    assert_non_null(q);
    uint64_t h0 = 0;
    for (size_t step = 0; step < 3000; step = step ? step * 7 : 1) {
      rec_t r;
      el_ev_stats_t s;
      decode(q, n, step, &r, &s);
      if (!step)
        h0 = r.g.h;
      else if (r.g.h != h0)
        fail_msg("%s: chunks of %zu bytes give other events", c->file, step);
      assert_int_equal(r.n, c->events);
      assert_int_equal(s.corrupt_parts, 1);
      assert_int_equal(s.corrupt_bytes, c->part_bytes);
      assert_int_equal(s.skipped_bytes, c->skipped);
      assert_int_equal(r.ncorrupt, 1);
      assert_int_equal(r.corrupt_off[0], c->part_from);
      char want[64];
      snprintf(want, sizeof want, "block marker at byte %llu",
               (unsigned long long)c->marker);
      if (!strstr(r.corrupt_msg[0], want))
        fail_msg("%s: \"%s\" lacks \"%s\"", c->file, r.corrupt_msg[0], want);
      /* Decoding resumed with the marker there. */
      size_t i = 0;
      while (i < r.n && r.off[i] < c->marker) i++;
      assert_true(i < r.n && r.off[i] == c->marker && r.type[i] == 18);
      rec_free(&r);
    }
    free(q);
  }
}

/* ghc-events' parallelTest (an Eden program, GHC 7.10) dates its global
 * block's CREATE_MACHINE at 965 ns, before the block's start (1016685948
 * ns), as old logs may (spec §1.5 bounds a block's events by its end
 * only). Bytes inserted just before that block's marker (at byte 8520)
 * begin a corrupt part; the search found the marker but, its body's
 * events not all within its times, took STARTUP and CREATE_MACHINE for
 * the tail of a cut event and dropped them (412 of 414 events). Now in
 * the global block an event may be dated before its start when another
 * of the chain is within its times: every event is delivered, the part is
 * the bytes inserted. Expected: the clean log's framing (walk), its
 * offsets moved by the bytes inserted; decoded at once, in 77-, 7- and
 * 1-byte pieces, and live in 77- and 7-byte pieces. */
static void test_early_events_in_global_block(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/parallelTest.eventlog", &n);
  assert_non_null(p);
  walk_t w;
  walk(p, n, &w);
  size_t g = 0; /* the global block's marker */
  for (size_t b = 0; b < w.nbl && !g; b++)
    if (be(p + w.bl[b].off + 22, 2) == 0xFFFF) g = w.bl[b].off;
  assert_int_equal(g, 8520);
  int early = 0; /* the clean log has events dated before their block */
  for (size_t i = 0; i < w.nev; i++)
    early += w.ev[i].block >= 0 && w.ev[i].type != 18 &&
             w.ev[i].t < be64(p + w.bl[w.ev[i].block].off + 2);
  assert_true(early > 0);
  static const uint8_t ins[][3] = {{0x00}, {0x41}, {0x00, 0x00}, {1, 2, 3}};
  static const size_t inslen[] = {1, 1, 2, 3};
  static const size_t steps[] = {0, 77, 7, 1, 77, 7};
  for (size_t k = 0; k < 4; k++) {
    edits_t E = {0};
    edit(&E, g, g, ins[k], inslen[k]);
    size_t m;
    uint8_t *q = apply(p, n, &E, &m);
    for (size_t si = 0; si < 6; si++) {
      rec_t r;
      el_ev_stats_t s;
      decode_opts = si >= 4 ? EL_EV_OPT_LIVE : 0;
      decode(q, m, steps[si], &r, &s);
      decode_opts = 0;
      for (size_t i = 0; i < w.nev; i++)
        if (!delivered(&r, map(&E, w.ev[i].off), w.ev[i].type, w.ev[i].t))
          fail_msg(
              "%zu byte(s) inserted at %zu, pieces of %zu%s: event type "
              "%u at clean byte %zu (t %llu) not delivered",
              inslen[k], g, steps[si], si >= 4 ? ", live" : "", w.ev[i].type,
              w.ev[i].off, (unsigned long long)w.ev[i].t);
      assert_int_equal(r.n, w.nev);
      assert_int_equal(s.corrupt_parts, 1);
      assert_int_equal(r.ncorrupt, 1);
      assert_int_equal(r.corrupt_off[0], g);
      assert_int_equal(s.corrupt_bytes, inslen[k]);
      rec_free(&r);
    }
    free(q);
    edits_free(&E);
  }
  free(w.ev);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_event_does_not_fit),
      cmocka_unit_test(test_garbage_mid_block),
      cmocka_unit_test(test_block_cut_short),
      cmocka_unit_test(test_cut_event_tail_after_marker),
      cmocka_unit_test(test_stale_marker),
      cmocka_unit_test(test_stale_block_spliced),
      cmocka_unit_test(test_undeclared_before_marker),
      cmocka_unit_test(test_text_before_first_marker),
      cmocka_unit_test(test_short_line_before_marker),
      cmocka_unit_test(test_data_end_mid_block),
      cmocka_unit_test(test_dated_after_block),
      cmocka_unit_test(test_data_end_over_marker),
      cmocka_unit_test(test_data_end_over_bad_marker),
      cmocka_unit_test(test_marker_size_damaged),
      cmocka_unit_test(test_marker_end_damaged),
      cmocka_unit_test(test_byte_lost_before_marker),
      cmocka_unit_test(test_bytes_lost_past_16),
      cmocka_unit_test(test_first_event_not_a_marker),
      cmocka_unit_test(test_marker_cap_damaged),
      cmocka_unit_test(test_marker_size_smaller),
      cmocka_unit_test(test_marker_size_larger),
      cmocka_unit_test(test_testers_findings),
      cmocka_unit_test(test_data_end_then_stray_bytes),
      cmocka_unit_test(test_real_captures),
      cmocka_unit_test(test_early_events_in_global_block),
      cmocka_unit_test(test_block_repeated),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
