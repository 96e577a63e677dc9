/* test_eventlog_corrupt.c: the decoder on truncated and corrupted input.
 * ctest-labels: asan
 *
 * Every small shared log is cut at every offset and must report exactly
 * the truncation the event boundaries of the intact log predict (spec
 * §4.1); random byte flips (fixed seeds) must never crash or hang, must
 * report offsets inside the input, and must give the same results however
 * the input is chunked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_eventlog_util.h"

typedef struct {
  tu_digest_t g;
  uint64_t err_sum;   /* order-independent sum over errors seen */
  uint64_t nerr;
} cdigest_t;

static void c_on_warning(void *ud, const el_diag_t *d) {
  cdigest_t *c = ud;
  if (d->code) {
    c->err_sum += d->offset * 31 + (uint64_t)(-d->code);
    c->nerr++;
  } else {
    tu_on_warning(&c->g, d);
  }
}

/* Decode p[0..n) in chunks of `step` (0 = whole); returns finish's rc. */
static int run(const uint8_t *p, size_t n, size_t step, cdigest_t *c,
               el_diag_t *fin) {
  memset(c, 0, sizeof *c);
  c->g.h = 1469598103934665603ull;
  el_ev_sink_t s = tu_sink(&c->g);
  s.on_warning = c_on_warning;
  s.ud = c; /* tu_* callbacks take the digest, which is c's first member */
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_non_null(d);
  if (!step)
    step = n ? n : 1;
  for (size_t i = 0; i < n; i += step) {
    size_t k = n - i < step ? n - i : step;
    int rc = el_ev_decoder_feed(d, p + i, k);
    if (rc) {
      const el_diag_t *dg = el_ev_decoder_diag(d);
      assert_int_equal(dg->code, rc);
      assert_true(dg->offset <= n);
      c->err_sum += dg->offset * 31 + (uint64_t)(-rc);
      c->nerr++;
    }
  }
  assert_int_equal(el_ev_decoder_offset(d), n);
  int rc = el_ev_decoder_finish(d);
  *fin = *el_ev_decoder_diag(d);
  if (rc)
    assert_true(fin->offset <= n);
  assert_true(c->g.events == 0 || c->g.max_offset < n);
  el_ev_decoder_free(d);
  return rc;
}

static void test_truncated_at_every_offset(void **st) {
  (void)st;
  for (size_t k = 0; k < sizeof tu_small_logs / sizeof tu_small_logs[0];
       k++) {
    size_t n = 0;
    uint8_t *p = tu_read_log(tu_small_logs[k], &n);
    assert_non_null(p);
    /* Boundaries of the intact log: event starts, then where it ends. */
    tu_digest_t full = {0};
    el_ev_sink_t s = tu_sink(&full);
    full.offsets = malloc(sizeof(uint64_t));
    full.capoffsets = 1;
    el_ev_decoder_t *d = el_ev_decoder_new(&s);
    el_ev_decoder_feed(d, p, n);
    int frc = el_ev_decoder_finish(d);
    uint64_t tail = frc ? el_ev_decoder_diag(d)->offset
                        : (full.data_ends ? full.data_end_off : n);
    el_ev_decoder_free(d);
    assert_true(full.noffsets > 0);
    uint64_t hdr_end = full.offsets[0];
    size_t j = 0; /* events with offset < cut */
    for (size_t cut = 0; cut <= n; cut++) {
      while (j < full.noffsets && full.offsets[j] < cut)
        j++;
      cdigest_t c;
      el_diag_t fin;
      int rc = run(p, cut, 0, &c, &fin);
      if (cut < hdr_end) {
        if (rc != EL_ETRUNC)
          fail_msg("%s cut %zu: header truncation not reported",
                   tu_small_logs[k], cut);
        assert_int_equal(c.g.events, 0);
        continue;
      }
      /* Last boundary at or before cut. */
      uint64_t start = j ? full.offsets[j - 1] : hdr_end;
      int at_boundary = cut == hdr_end ||
                        (j < full.noffsets && full.offsets[j] == cut) ||
                        cut == tail || (full.data_ends && cut == n);
      if (cut > tail) /* inside the end marker or trailing bytes */
        start = tail;
      if (at_boundary) {
        if (rc != 0)
          fail_msg("%s cut %zu (boundary): rc %d", tu_small_logs[k], cut,
                   rc);
      } else {
        if (rc != EL_ETRUNC || fin.offset != (cut > tail ? tail : start))
          fail_msg("%s cut %zu: rc %d offset %llu, want truncation at %llu",
                   tu_small_logs[k], cut, rc,
                   (unsigned long long)fin.offset,
                   (unsigned long long)start);
      }
      size_t want = j;
      if (want && !at_boundary && full.offsets[j - 1] == start)
        want--; /* the cut event itself is not delivered */
      if (c.g.events != want)
        fail_msg("%s cut %zu: %llu events, want %zu", tu_small_logs[k], cut,
                 (unsigned long long)c.g.events, want);
    }
    free(full.offsets);
    free(p);
  }
}

static uint64_t rng_state;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void test_random_byte_flips(void **st) {
  (void)st;
  for (size_t k = 0; k < sizeof tu_small_logs / sizeof tu_small_logs[0];
       k++) {
    size_t n = 0;
    uint8_t *p = tu_read_log(tu_small_logs[k], &n);
    uint8_t *q = malloc(n);
    rng_state = 0x9E3779B97F4A7C15ull + k;
    for (int iter = 0; iter < 60; iter++) {
      memcpy(q, p, n);
      int flips = 1 + (int)(rng() % 6);
      for (int f = 0; f < flips; f++) {
        size_t at = (size_t)(rng() % n);
        /* Mostly in the data section, sometimes in the header. */
        q[at] ^= (uint8_t)(1 + rng() % 255);
      }
      cdigest_t whole, part;
      el_diag_t f1, f2;
      int r1 = run(q, n, 0, &whole, &f1);
      size_t step = 1 + (size_t)(rng() % 300);
      int r2 = run(q, n, step, &part, &f2);
      if (r1 != r2 || whole.g.h != part.g.h ||
          whole.err_sum != part.err_sum || whole.nerr != part.nerr)
        fail_msg("%s seed %d: chunking by %zu changes the result",
                 tu_small_logs[k], iter, step);
      if (iter % 10 == 0) {
        run(q, n, 1, &part, &f2);
        if (whole.g.h != part.g.h)
          fail_msg("%s seed %d: byte-at-a-time differs", tu_small_logs[k],
                   iter);
      }
    }
    free(q);
    free(p);
  }
}

static void test_garbage_never_hangs(void **st) {
  (void)st;
  enum { N = 1 << 16 };
  uint8_t *q = malloc(N + 64);
  rng_state = 42;
  for (int iter = 0; iter < 20; iter++) {
    for (size_t i = 0; i < N; i++)
      q[i] = (uint8_t)rng();
    /* A valid-looking header start in the middle of garbage. */
    memcpy(q + 1000 + (size_t)iter * 100, "hdrbhetbetb\0", 12);
    cdigest_t c;
    el_diag_t fin;
    run(q, N, 4096, &c, &fin);
    assert_true(c.g.events < N / 10);
  }
  free(q);
}

/* Input without any header: the bytes are counted as skipped, and after a
 * reset (a reconnecting socket) the message counts only the new session's
 * bytes, at the offset where the input ended. */
static void test_no_header_counts_session_bytes(void **st) {
  (void)st;
  uint8_t junk[1000];
  memset(junk, 0x01, sizeof junk); /* not text (no text hint) */
  el_ev_decoder_t *d = el_ev_decoder_new(NULL);
  assert_non_null(d);
  assert_int_equal(el_ev_decoder_feed(d, junk, 700), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_string_equal(el_ev_decoder_diag(d)->msg,
                      "no eventlog header found in 700 bytes from byte 0");
  assert_int_equal(el_ev_decoder_stats(d)->skipped_bytes, 700);
  el_ev_decoder_reset(d);
  assert_int_equal(el_ev_decoder_feed(d, junk, 1), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_string_equal(el_ev_decoder_diag(d)->msg,
                      "no eventlog header found in 1 byte from byte 700");
  assert_int_equal(el_ev_decoder_diag(d)->offset, 701);
  assert_int_equal(el_ev_decoder_stats(d)->skipped_bytes, 701);
  /* skipped looking for a header: stray bytes too */
  assert_int_equal(el_ev_decoder_stats(d)->stray_bytes, 701);
  el_ev_decoder_free(d);
}

static int nwarn;
static char lastwarn[512];
static void count_warning(void *ud, const el_diag_t *dg) {
  (void)ud;
  nwarn++;
  snprintf(lastwarn, sizeof lastwarn, "%s", dg->msg);
}

/* 64 MiB without a header (zeros: /dev/zero, a peer sending garbage):
 * one warning that this may not be an eventlog, naming the amount and
 * where the search began; reading goes on (no second warning); a reset (a
 * new connection) may warn again. */
static void test_no_header_warns_once(void **st) {
  (void)st;
  enum { CHUNK = 1 << 20 };
  uint8_t *zeros = calloc(1, CHUNK);
  assert_non_null(zeros);
  el_ev_sink_t sink = {.on_warning = count_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  assert_non_null(d);
  nwarn = 0;
  for (int i = 0; i < 63; i++)
    assert_int_equal(el_ev_decoder_feed(d, zeros, CHUNK), 0);
  assert_int_equal(nwarn, 0); /* 63 MiB: not yet */
  assert_int_equal(el_ev_decoder_feed(d, zeros, CHUNK), 0);
  assert_int_equal(nwarn, 1);
  assert_string_equal(lastwarn,
                      "no eventlog header in 64 MiB from byte 0: is this an "
                      "eventlog? (still looking)");
  for (int i = 0; i < 70; i++)
    assert_int_equal(el_ev_decoder_feed(d, zeros, CHUNK), 0);
  assert_int_equal(nwarn, 1);
  /* The reset (not finished before: as show over a socket) says the
   * connection's 134 MiB held no header (134 << 20 = 140509184). */
  el_ev_decoder_reset(d);
  assert_int_equal(nwarn, 2);
  assert_string_equal(lastwarn,
                      "no eventlog header found in 140509184 "
                      "bytes from byte 0");
  for (int i = 0; i < 64; i++)
    assert_int_equal(el_ev_decoder_feed(d, zeros, CHUNK), 0);
  assert_int_equal(nwarn, 3);
  assert_string_equal(lastwarn,
                      "no eventlog header in 64 MiB from byte 140509184: is "
                      "this an eventlog? (still looking)");
  el_ev_decoder_free(d);
  free(zeros);
}

static int nwarn_code, nwarn_header;
static void flag_warning(void *ud, const el_diag_t *dg) {
  count_warning(ud, dg);
  nwarn_code = dg->code;
  nwarn_header = dg->header;
}

/* The errors about a header carry diag.header (no session began: callers
 * say the message alone, docs/exit-codes.md "Messages"), a cut event
 * after one does not; a connection's bytes without a header, or ending
 * inside one, not finished before a reset (show over a socket finishes
 * once, at the end) are said at the reset as finish would say them, and
 * not again by a finish with no new byte. Expected messages by hand from
 * the byte counts; the log's header (hello-ghc-8.2.2) is longer than the
 * 100 bytes kept, and its first declaration's end marker "ete\0" follows
 * its 2 + 2 + 4 + description + 4 + extra-info bytes at byte 12. */
static void test_header_errors_flagged(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/hello-ghc-8.2.2.eventlog", &n);
  assert_non_null(p);
  assert_true(n > 1000 && memcmp(p, "hdrbhetbetb", 12) == 0);
  el_ev_sink_t sink = {.on_warning = flag_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  assert_non_null(d);
  /* none found */
  assert_int_equal(el_ev_decoder_feed(d, (const uint8_t *)"abcde", 5), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_string_equal(el_ev_decoder_diag(d)->msg,
                      "no eventlog header found in 5 bytes from byte 0");
  assert_int_equal(el_ev_decoder_diag(d)->header, 1);
  el_ev_decoder_free(d);
  /* cut inside it */
  d = el_ev_decoder_new(&sink);
  assert_int_equal(el_ev_decoder_feed(d, p, 100), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_string_equal(el_ev_decoder_diag(d)->msg,
                      "eventlog truncated inside the header at byte 100");
  assert_int_equal(el_ev_decoder_diag(d)->header, 1);
  el_ev_decoder_free(d);
  /* malformed: the first declaration's end marker overwritten */
  uint32_t dlen = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 |
                  (uint32_t)p[18] << 8 | p[19];
  size_t x = 20 + dlen;
  uint32_t xlen = (uint32_t)p[x] << 24 | (uint32_t)p[x + 1] << 16 |
                  (uint32_t)p[x + 2] << 8 | p[x + 3];
  size_t ete = x + 4 + xlen;
  assert_memory_equal(p + ete, "ete\0", 4);
  uint8_t *m = malloc(n);
  assert_non_null(m);
  memcpy(m, p, n);
  memcpy(m + ete, "XXXX", 4);
  d = el_ev_decoder_new(&sink);
  assert_int_equal(el_ev_decoder_feed(d, m, n), EL_EBADHDR);
  assert_int_equal(el_ev_decoder_diag(d)->header, 1);
  assert_int_equal(el_ev_decoder_diag(d)->offset, ete);
  el_ev_decoder_free(d);
  free(m);
  /* a cut event after a complete header: not a header error */
  d = el_ev_decoder_new(&sink);
  assert_int_equal(el_ev_decoder_feed(d, p, n - 3), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_int_equal(el_ev_decoder_diag(d)->cut_event, 1);
  assert_int_equal(el_ev_decoder_diag(d)->header, 0);
  el_ev_decoder_free(d);
  /* said at a reset: none found, then a header cut short */
  d = el_ev_decoder_new(&sink);
  nwarn = 0;
  assert_int_equal(el_ev_decoder_feed(d, (const uint8_t *)"abcde", 5), 0);
  el_ev_decoder_reset(d);
  assert_int_equal(nwarn, 1);
  assert_string_equal(lastwarn,
                      "no eventlog header found in 5 bytes from byte 0");
  assert_int_equal(nwarn_code, EL_ETRUNC);
  assert_int_equal(nwarn_header, 1);
  assert_int_equal(el_ev_decoder_feed(d, p, 100), 0);
  el_ev_decoder_reset(d);
  assert_int_equal(nwarn, 2);
  assert_string_equal(lastwarn,
                      "eventlog truncated inside the header at byte 105");
  assert_int_equal(nwarn_header, 1);
  el_ev_decoder_reset(d); /* nothing since: nothing said */
  assert_int_equal(nwarn, 2);
  assert_int_equal(el_ev_decoder_finish(d), 0); /* said already */
  assert_int_equal(nwarn, 2);
  el_ev_decoder_free(d);
  /* finished before the reset (stats, run): said once, by finish */
  d = el_ev_decoder_new(&sink);
  nwarn = 0;
  assert_int_equal(el_ev_decoder_feed(d, (const uint8_t *)"abcde", 5), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  el_ev_decoder_reset(d);
  assert_int_equal(nwarn, 0);
  el_ev_decoder_free(d);
  free(p);
}

/* Text where the first event should be (a program printing to the
 * stdout its eventlog goes to, +RTS -ol/dev/stdout): the undeclared type
 * is an error that says the bytes read as text, quoting them (line feeds
 * as spaces); binary garbage gets no such hint. By hand: the header is
 * "hdrbhetb" (8 bytes), one declaration ("etb\0" 4, id 2, size 2, length
 * 4, "Run thread" 10, extra length 4, "ete\0" 4: 30) and "hetehdredatb"
 * (12): "start" begins at byte 50. */
static void test_text_in_the_eventlog_named(void **st) {
  (void)st;
  static tu_buf_t b;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 4, "Run thread");
  tu_hdr_end(&b);
  assert_int_equal(b.n, 50);
  tu_str(&b, "start tag=x\nseconds=8\n");
  el_ev_decoder_t *d = el_ev_decoder_new(NULL);
  assert_non_null(d);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), EL_EUNDECL);
  assert_string_equal(
      el_ev_decoder_diag(d)->msg,
      "event type 29556 at byte 50 is not declared in the header (corrupt "
      "stream); the bytes there read as text (\"start tag=x seco...\"): is "
      "something else, such as the program's own output, written into the "
      "eventlog (-ol/dev/stdout)?");
  el_ev_decoder_free(d);
  b.n = 50;
  static const uint8_t bin[] = {0x73, 0x74, 0x01, 0x02, 0x03, 0x04,
                                0x05, 0x06, 0x07, 0x08, 0x09, 0x0a};
  for (size_t i = 0; i < sizeof bin; i++) tu_u8(&b, bin[i]);
  d = el_ev_decoder_new(NULL);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), EL_EUNDECL);
  assert_null(strstr(el_ev_decoder_diag(d)->msg, "text"));
  el_ev_decoder_free(d);
}

/* Decode the n bytes at p in pieces of step bytes, finish, and return
 * the message of finish's EL_ETRUNC (static); warnings: the last one's
 * message into lastwarn, counted in nwarn. */
static const char *no_header_msg(const uint8_t *p, size_t n, size_t step) {
  static char msg[512];
  el_ev_sink_t sink = {.on_warning = count_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  assert_non_null(d);
  nwarn = 0;
  lastwarn[0] = '\0';
  for (size_t i = 0; i < n; i += step)
    assert_int_equal(el_ev_decoder_feed(d, p + i, n - i < step ? n - i : step),
                     0);
  int rc = el_ev_decoder_finish(d);
  snprintf(msg, sizeof msg, "%s", rc ? el_ev_decoder_diag(d)->msg : "");
  el_ev_decoder_free(d);
  return msg;
}

/* A program's output written over its eventlog's header (`prog +RTS -l
 * -ol/dev/stdout > file` with prog printing: the RTS and the program
 * both write from byte 0 of the file, the text last). There is no header
 * to find; the error says the bytes read as text, quoting 16 of them
 * (line feeds as spaces), however the input is fed. Before, only "no
 * eventlog header found in N bytes from byte 0". A short text leaves the
 * header's printable first bytes after it ("hi\n" over "hdr": "hi
 * bhetbetb", then the NUL of "etb\0"): quoted up to that NUL. Text before
 * an intact header is named in the stray bytes' warning. Binary bytes
 * get no hint. The log by hand: a header (50 bytes, as above), one
 * RUN_THREAD event (type 1, 10 + 4 bytes) and the end marker (2). */
static void test_text_over_the_header_named(void **st) {
  (void)st;
  static tu_buf_t b;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 4, "Run thread");
  tu_hdr_end(&b);
  tu_ev(&b, 1, 1000);
  tu_u32(&b, 1);
  tu_u16(&b, 0xFFFF); /* the end of the data */
  assert_int_equal(b.n, 66);
  static uint8_t log[66], t[128];
  memcpy(log, b.b, 66);
  static const char out[] = "hello line 1\nhello line 2\n";
  memcpy(t, log, 66);
  memcpy(t, out, strlen(out));
  static const char want[] =
      "no eventlog header found in 66 bytes from byte 0; they begin with "
      "text (\"hello line 1 hel...\"): not an eventlog, or a program's own "
      "output written over its header (+RTS -ol/dev/stdout with stdout "
      "sent to the same file)?";
  assert_string_equal(no_header_msg(t, 66, 66), want);
  assert_string_equal(no_header_msg(t, 66, 1), want);
  assert_string_equal(no_header_msg(t, 66, 7), want);
  memcpy(t, log, 66);
  memcpy(t, "hi\n", 3);
  assert_string_equal(
      no_header_msg(t, 66, 1),
      "no eventlog header found in 66 bytes from byte 0; they begin with "
      "text (\"hi bhetbetb...\"): not an eventlog, or a program's own "
      "output written over its header (+RTS -ol/dev/stdout with stdout "
      "sent to the same file)?");
  /* Binary: the magic's first byte zeroed. */
  memcpy(t, log, 66);
  t[0] = 0;
  assert_string_equal(no_header_msg(t, 66, 66),
                      "no eventlog header found in 66 bytes from byte 0");
  /* Text before a whole header: decoded, the text named. */
  memcpy(t, "hello world\n", 12);
  memcpy(t + 12, log, 66);
  assert_string_equal(no_header_msg(t, 78, 1), "");
  assert_int_equal(nwarn, 1);
  assert_string_equal(lastwarn,
                      "skipped 12 stray bytes at byte 0 before the header at "
                      "byte 12 (text: \"hello world \": program output in "
                      "the eventlog?)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_truncated_at_every_offset),
      cmocka_unit_test(test_random_byte_flips),
      cmocka_unit_test(test_garbage_never_hangs),
      cmocka_unit_test(test_text_in_the_eventlog_named),
      cmocka_unit_test(test_text_over_the_header_named),
      cmocka_unit_test(test_no_header_counts_session_bytes),
      cmocka_unit_test(test_no_header_warns_once),
      cmocka_unit_test(test_header_errors_flagged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
