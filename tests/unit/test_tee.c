/* test_tee.c: rotation of the --eventlog-log-file tee (src/source/
 * src_tee.c). A small real eventlog is teed, a rotation is asked at every
 * byte offset, and the two files are decoded by the eventlog library (an
 * independent parser): each must decode on its own without any warning or
 * error and end with DATA_END, and the events of the old file followed by
 * those of the new one must be the input's events (type, time,
 * capability, payload), in order.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "eventlog/eventlog.h"
#include "source/src_tee.h"
#include "test_eventlog_util.h"

/* The eventlog name (relative to tests/data/eventlogs or $EL_EVENTLOGS),
 * read whole. */
static uint8_t *shared_log(const char *name, size_t *len) {
  *len = 0;
  uint8_t *b = tu_read_log(name, len);
  assert_non_null(b);
  return b;
}

/* {====== decoding: the events as one byte string ======} */

typedef struct {
  uint8_t *b;
  size_t len, cap;
  unsigned warnings, data_ends, headers;
} evs_t;

static void add(evs_t *e, const void *p, size_t n) {
  if (e->len + n > e->cap) {
    e->cap = (e->len + n) * 2;
    e->b = realloc(e->b, e->cap);
    assert_non_null(e->b);
  }
  if (n) /* an empty payload may be NULL: memcpy's arguments may not */
    memcpy(e->b + e->len, p, n);
  e->len += n;
}

static int on_event(void *ud, const el_ev_event_t *ev) {
  evs_t *e = ud;
  add(e, &ev->type, sizeof ev->type);
  add(e, &ev->cap, sizeof ev->cap);
  add(e, &ev->t_ns, sizeof ev->t_ns);
  add(e, &ev->payload_len, sizeof ev->payload_len);
  add(e, ev->payload, ev->payload_len);
  return 0;
}

static int on_header(void *ud, const el_ev_header_t *h) {
  (void)h;
  ((evs_t *)ud)->headers++;
  return 0;
}

static void on_data_end(void *ud, uint64_t off) {
  (void)off;
  ((evs_t *)ud)->data_ends++;
}

static void on_warning(void *ud, const el_diag_t *d) {
  evs_t *e = ud;
  if (e->warnings++ == 0) print_message("warning: %s\n", d->msg);
}

/* Decode buf; events appended to *e. Returns finish's status. */
static int decode(const uint8_t *buf, size_t len, evs_t *e) {
  el_ev_sink_t sink = {e, on_header, on_event, on_data_end, on_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  assert_non_null(d);
  int rc = el_ev_decoder_feed(d, buf, len);
  int fin = el_ev_decoder_finish(d);
  el_ev_decoder_free(d);
  return rc ? rc : fin;
}

/* {====== one rotation ======} */

/* The tee's files are memory files (no file system in the loop): the
 * tee gets one descriptor and closes it; *keep is a second one to read
 * the bytes back with take(). */
static int open_mem(int *keep) {
  int fd = memfd_create("tee", MFD_CLOEXEC);
  assert_true(fd >= 0);
  *keep = dup(fd);
  assert_true(*keep >= 0);
  return fd;
}

/* The bytes of a memory file (malloc'd; *len its size); closes keep. */
static uint8_t *take(int keep, size_t *len) {
  off_t n = lseek(keep, 0, SEEK_END);
  assert_true(n >= 0);
  uint8_t *b = malloc((size_t)n + 1);
  assert_non_null(b);
  assert_int_equal(pread(keep, b, (size_t)n, 0), n);
  close(keep);
  *len = (size_t)n;
  return b;
}

/* Write buf[from..to) to the tee in pieces of `piece` bytes. */
static void tee_range(el__tee_t *t, const uint8_t *buf, size_t from, size_t to,
                      size_t piece) {
  while (from < to) {
    size_t n = to - from < piece ? to - from : piece;
    el__tee_write(t, buf + from, n);
    from += n;
  }
}

/* Tee buf with a rotation asked after byte k (the source's session then
 * ends at the end of buf); check both files against want. */
static void rotate_at(const uint8_t *buf, size_t len, size_t k, size_t piece,
                      const evs_t *want) {
  el_src_stats_t st;
  memset(&st, 0, sizeof st);
  el__tee_t t;
  int okeep, nkeep;
  el__tee_init(&t, open_mem(&okeep), "old", &st);
  tee_range(&t, buf, 0, k, piece);
  el__tee_rotate(&t, open_mem(&nkeep));
  tee_range(&t, buf, k, len, piece);
  el__tee_session_end(&t);
  el__tee_close(&t);
  assert_int_equal(st.tee_errors, 0);

  size_t olen, nlen;
  uint8_t *ob = take(okeep, &olen);
  uint8_t *nb = take(nkeep, &nlen);
  assert_int_equal(st.tee_bytes, olen + nlen);
  if (nlen == 0) { /* asked in the block holding DATA_END (GHC >= 9.2),
                     or after it: the new file waits for a session */
    assert_int_equal(olen, len);
    assert_memory_equal(ob, buf, len);
    free(ob);
    free(nb);
    return;
  }
  if (k == 0) { /* before any byte: all goes to the new file */
    assert_int_equal(olen, 0);
    assert_int_equal(nlen, len);
    assert_memory_equal(nb, buf, len);
    free(ob);
    free(nb);
    return;
  }
  evs_t got = {0};
  evs_t o = {0};
  int rc_old = decode(ob, olen, &o);
  int rc_new = decode(nb, nlen, &got);
  if (rc_old || rc_new || o.warnings || got.warnings || o.data_ends != 1 ||
      got.data_ends != 1)
    print_message(
        "rotation after byte %zu (pieces of %zu): old %zu bytes "
        "rc %d, %u warnings, %u DATA_END; new %zu bytes rc %d, "
        "%u warnings, %u DATA_END\n",
        k, piece, olen, rc_old, o.warnings, o.data_ends, nlen, rc_new,
        got.warnings, got.data_ends);
  assert_int_equal(rc_old, 0);
  assert_int_equal(rc_new, 0);
  assert_int_equal(o.warnings + got.warnings, 0);
  assert_int_equal(o.data_ends, 1);
  assert_int_equal(got.data_ends, 1);
  add(&o, got.b, got.len); /* old's events, then new's */
  assert_int_equal(o.len, want->len);
  assert_memory_equal(o.b, want->b, want->len);
  free(o.b);
  free(got.b);
  free(ob);
  free(nb);
}

/* Every offset 0..len of the log `name` (every `stride`-th when larger),
 * written in one piece before and one after, and in small odd pieces
 * every 211th offset (events then arrive split across writes). */
static void every_offset(const char *name, size_t stride) {
  size_t len;
  uint8_t *buf = shared_log(name, &len);
  evs_t want = {0};
  assert_int_equal(decode(buf, len, &want), 0);
  assert_int_equal(want.warnings, 0);
  assert_int_equal(want.data_ends, 1);
  assert_true(want.len > 0);
  for (size_t k = 0; k <= len; k += stride) {
    rotate_at(buf, len, k, len, &want);
    if (k % 211 == 0) rotate_at(buf, len, k, 1 + k % 13, &want);
  }
  rotate_at(buf, len, len, len, &want);
  free(want.b);
  free(buf);
}

/* GHC 8.2 blocks; DATA_END after the last block. */
static void test_rotate_every_offset_ghc82(void **state) {
  (void)state;
  every_offset("ghc-events/hello-ghc-8.2.2.eventlog", 1);
}

/* GHC 9.2: DATA_END inside the last global block (spec §1.5). */
static void test_rotate_every_offset_ghc92(void **state) {
  (void)state;
  every_offset("ghc-events/ghc-9.2-events.eventlog", 1);
}

/* A GHC 9.0 log (62 KB, heap profile samples), every 97th offset. */
static void test_rotate_ghc90_blocks(void **state) {
  (void)state;
  every_offset("ghc-9.0/heapy-hT.eventlog", 97);
}

/* Inside a block the switch waits for the block's end: the old file grows
 * past the rotation point up to it, and the new file begins with the
 * header, byte for byte the input's. */
static void test_rotate_waits_for_block_end(void **state) {
  (void)state;
  size_t len;
  uint8_t *buf = shared_log("ghc-events/hello-ghc-8.2.2.eventlog", &len);
  el_src_stats_t st;
  memset(&st, 0, sizeof st);
  el__tee_t t;
  int okeep, nkeep;
  el__tee_init(&t, open_mem(&okeep), "old", &st);
  /* The first block marker follows the header: find "datb". */
  size_t h = 0;
  while (h + 4 <= len && memcmp(buf + h, "datb", 4) != 0) h++;
  h += 4;
  assert_int_equal(buf[h] << 8 | buf[h + 1], 18);
  size_t bs = (size_t)buf[h + 10] << 24 | (size_t)buf[h + 11] << 16 |
              (size_t)buf[h + 12] << 8 | buf[h + 13];
  assert_true(bs > 100 && h + bs < len);
  el__tee_write(&t, buf, h + 50);
  el__tee_rotate(&t, open_mem(&nkeep));
  assert_true(el__tee_pending(&t));
  el__tee_write(&t, buf + h + 50, bs - 51);
  assert_true(el__tee_pending(&t)); /* one byte of the block to come */
  el__tee_write(&t, buf + h + bs - 1, 1);
  assert_false(el__tee_pending(&t));
  el__tee_write(&t, buf + h + bs, len - h - bs);
  el__tee_close(&t);
  size_t olen, nlen;
  uint8_t *ob = take(okeep, &olen);
  uint8_t *nb = take(nkeep, &nlen);
  assert_int_equal(olen, h + bs + 2);
  assert_memory_equal(ob, buf, h + bs);
  assert_int_equal(ob[h + bs] & ob[h + bs + 1], 0xFF);
  assert_int_equal(nlen, h + len - h - bs);
  assert_memory_equal(nb, buf, h);
  assert_memory_equal(nb + h, buf + h + bs, len - h - bs);
  free(ob);
  free(nb);
  free(buf);
}

/* Two sessions (a socket's connections: the source ends the first):
 * a rotation at every offset of the second, and before any byte. */
static void test_rotate_across_sessions(void **state) {
  (void)state;
  size_t alen, blen;
  uint8_t *a = shared_log("ghc-events/unicode.eventlog", &alen);
  uint8_t *b = shared_log("ghc-events/trace-binary-event.eventlog", &blen);
  evs_t want = {0};
  assert_int_equal(decode(b, blen, &want), 0);
  for (size_t k = 0; k <= blen; k++) {
    el_src_stats_t st;
    memset(&st, 0, sizeof st);
    el__tee_t t;
    int okeep, nkeep;
    el__tee_init(&t, open_mem(&okeep), "old", &st);
    el__tee_write(&t, a, alen - 40); /* a connection cut short */
    el__tee_session_end(&t);
    el__tee_write(&t, b, k);
    el__tee_rotate(&t, open_mem(&nkeep));
    el__tee_write(&t, b + k, blen - k);
    el__tee_close(&t);
    size_t olen, nlen;
    free(take(okeep, &olen));
    uint8_t *nb = take(nkeep, &nlen);
    /* The new file: the second session's header then its events from
     * the cut; their union with the old file's tail is checked by
     * rotate_at; here: it reads alone, one session, DATA_END. */
    evs_t got = {0};
    if (nlen == 0 && k > blen - 2) { /* in or after DATA_END */
      free(nb);
      continue;
    }
    int rc = decode(nb, nlen, &got);
    if (rc) print_message("k %zu: new %zu bytes\n", k, nlen);
    assert_int_equal(rc, 0);
    assert_int_equal(got.warnings, 0);
    assert_int_equal(got.headers, 1);
    assert_int_equal(got.data_ends, 1);
    assert_true(got.len <= want.len);
    assert_memory_equal(got.b, want.b + want.len - got.len, got.len);
    free(got.b);
    free(nb);
  }
  free(want.b);
  free(a);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rotate_every_offset_ghc82),
      cmocka_unit_test(test_rotate_every_offset_ghc92),
      cmocka_unit_test(test_rotate_ghc90_blocks),
      cmocka_unit_test(test_rotate_waits_for_block_end),
      cmocka_unit_test(test_rotate_across_sessions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
