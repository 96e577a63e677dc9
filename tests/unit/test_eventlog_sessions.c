/* test_eventlog_sessions.c: sessions in one byte stream (a raw tee of
 * several eventlog-socket connections, spec §4.7, §5.4), duplicate
 * event-type declarations, malformed variable-size events (§4.8), and
 * el_ev_scan_sessions.
 *
 * Expected values come from the connections decoded one by one (each a
 * plain stream, whose decoding test_show_reference.sh checks against
 * ghc-events), from positions computed here by hand from the bytes the
 * test builds, and from `show --json` values of threads.eventlog written
 * below as literals.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_eventlog_util.h"

/* {====== a recording sink ======} */

typedef struct {
  uint64_t offset, t, h;
  uint16_t type, cap;
  uint8_t known, malformed;
  unsigned session;
} rev_t;

typedef struct {
  char msg[512];
  int code;
  uint64_t offset;
  int expected;
} rwarn_t;

typedef struct {
  rev_t *ev;
  size_t nev, cap;
  uint64_t hdr_off[16];
  unsigned nhdr;
  unsigned data_ends;
  rwarn_t warn[64];
  unsigned nwarn;
  int feed_rc, finish_rc; /* first nonzero feed result; finish result */
  el_ev_stats_t st;
  el_diag_t diag; /* the decoder's diagnostic after finish */
} rec_t;

static uint64_t fnv(const void *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static int r_header(void *ud, const el_ev_header_t *h) {
  rec_t *r = ud;
  if (r->nhdr < 16)
    r->hdr_off[r->nhdr] = h->offset;
  r->nhdr++;
  return 0;
}

static int r_event(void *ud, const el_ev_event_t *e) {
  rec_t *r = ud;
  if (r->nev == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
  }
  rev_t *v = &r->ev[r->nev++];
  v->offset = e->offset;
  v->t = e->t_ns;
  v->type = e->type;
  v->cap = e->cap;
  v->known = e->known;
  v->malformed = e->malformed;
  v->h = fnv(e->payload, e->payload_len);
  v->session = r->nhdr;
  return 0;
}

static void r_data_end(void *ud, uint64_t off) {
  (void)off;
  ((rec_t *)ud)->data_ends++;
}

static void r_warning(void *ud, const el_diag_t *d) {
  rec_t *r = ud;
  if (r->nwarn < 64) {
    snprintf(r->warn[r->nwarn].msg, sizeof r->warn[0].msg, "%s", d->msg);
    r->warn[r->nwarn].code = d->code;
    r->warn[r->nwarn].offset = d->offset;
    r->warn[r->nwarn].expected = d->expected;
  }
  r->nwarn++;
}

/* A decoder with opts whose sink records into r (cleared). The sink is
 * copied by el_ev_decoder_new, so it may live on this frame. */
static el_ev_decoder_t *recorder_new(rec_t *r, unsigned opts) {
  memset(r, 0, sizeof *r);
  el_ev_sink_t s = {.ud = r,
                    .on_header = r_header,
                    .on_event = r_event,
                    .on_data_end = r_data_end,
                    .on_warning = r_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_non_null(d);
  assert_int_equal(el_ev_decoder_set_opts(d, opts), 0);
  return d;
}

/* Feed p[0..n) to recorder d; the first failure goes into r->feed_rc. */
static void recorder_feed(el_ev_decoder_t *d, rec_t *r, const uint8_t *p,
                          size_t n) {
  int rc = el_ev_decoder_feed(d, p, n);
  if (rc && !r->feed_rc) r->feed_rc = rc;
}

/* Finish recorder d into r (its result and stats) and free it. */
static void recorder_end(el_ev_decoder_t *d, rec_t *r) {
  r->finish_rc = el_ev_decoder_finish(d);
  r->st = *el_ev_decoder_stats(d);
  r->diag = *el_ev_decoder_diag(d);
  el_ev_decoder_free(d);
}

/* decode(): -2 = every type's fields wanted (the default); else none
 * but those of type g_want (-1: none at all; el_ev_decoder_set_fields). */
static int g_want = -2;

/* Decode p[0..n) in chunks of step bytes (0 = one feed) with opts and
 * the fields mask g_want. */
static void decode(const uint8_t *p, size_t n, size_t step, unsigned opts,
                   rec_t *r) {
  el_ev_decoder_t *d = recorder_new(r, opts);
  if (g_want >= -1) { /* no type's fields wanted but g_want's */
    assert_int_equal(el_ev_decoder_set_fields(d, -1, 0), 0);
    if (g_want >= 0)
      assert_int_equal(el_ev_decoder_set_fields(d, g_want, 1), 0);
  }
  if (!step)
    step = n ? n : 1;
  for (size_t i = 0; i < n; i += step)
    recorder_feed(d, r, p + i, n - i < step ? n - i : step);
  recorder_end(d, r);
}

static void rec_free(rec_t *r) { free(r->ev); }

/* Are a's events those of b, b's offsets shifted by delta and from
 * session b_sess on? Reports the first difference. */
static void same_events(const rev_t *a, const rec_t *b, uint64_t delta,
                        const char *what) {
  for (size_t i = 0; i < b->nev; i++) {
    const rev_t *x = &a[i], *y = &b->ev[i];
    if (x->offset != y->offset + delta || x->type != y->type ||
        x->t != y->t || x->cap != y->cap || x->known != y->known ||
        x->malformed != y->malformed || x->h != y->h)
      fail_msg("%s: event %zu differs: offset %llu vs %llu, type %u vs %u",
               what, i, (unsigned long long)x->offset,
               (unsigned long long)(y->offset + delta), x->type, y->type);
  }
}

/* eventlog-socket's 24 stray bytes before every connection's header: a
 * BLOCK_MARKER (type 18) of the global buffer (cap 0xFFFF) whose block
 * wraps the header (shared/peers/eventlog-socket/README.md). */
static void stray_marker(uint8_t *o, uint64_t t, uint32_t hdr_len) {
  tu_buf_t b;
  b.n = 0;
  tu_ev(&b, 18, t);
  tu_u32(&b, 24 + hdr_len);
  tu_u64(&b, t + 1000);
  tu_u16(&b, 0xFFFF);
  assert_int_equal(b.n, 24);
  memcpy(o, b.b, 24);
}

/* Length of the header: through "datb" (computed from the bytes). */
static size_t header_len(const uint8_t *p, size_t n) {
  for (size_t i = 0; i + 4 <= n; i++)
    if (!memcmp(p + i, "hetehdredatb", 12))
      return i + 12;
  fail_msg("no header end");
  return 0;
}

/* A connection's bytes: stray marker + the log's first x bytes. */
static size_t connection(uint8_t *o, const uint8_t *log, size_t n, size_t x,
                         uint64_t t) {
  stray_marker(o, t, (uint32_t)header_len(log, n));
  memcpy(o + 24, log, x);
  return 24 + x;
}

/* Offsets where events of log begin, plus DATA_END and the end. */
static uint8_t *event_starts(const uint8_t *log, size_t n) {
  rec_t r;
  decode(log, n, 0, 0, &r);
  uint8_t *is = calloc(n + 1, 1);
  for (size_t i = 0; i < r.nev; i++)
    is[r.ev[i].offset] = 1;
  /* DATA_END: the 2 bytes FF FF after the last event, when present. */
  if (r.data_ends)
    is[n - 2] = 1;
  is[n] = 1;
  rec_free(&r);
  return is;
}

/* {====== eventlog-socket's stray marker at a connection's start ======} */

/* Decode pre[0..npre) then the whole log, in chunks of every size in
 * steps[]: one warning, code 0, at byte 0, naming npre stray bytes, whose
 * diag.expected is want (el_diag_t: only eventlog-socket's exact stray
 * marker is part of a normal stream), and every event of the log. */
static void check_stray(const uint8_t *pre, size_t npre, const uint8_t *log,
                        size_t n, int want, const char *what) {
  uint8_t *in = malloc(npre + n);
  memcpy(in, pre, npre);
  memcpy(in + npre, log, n);
  rec_t plain;
  decode(log, n, 0, 0, &plain);
  size_t steps[] = {0, 1, 7, 23, 24, 25, 4096};
  for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
    rec_t r;
    decode(in, npre + n, steps[s], 0, &r);
    if (r.nwarn != 1 || r.warn[0].code != 0 || r.warn[0].offset != 0 ||
        r.warn[0].expected != want || r.nev != plain.nev ||
        r.st.stray_bytes != npre)
      fail_msg("%s, step %zu: %u warnings, expected %d (want %d): %s", what,
               steps[s], r.nwarn, r.warn[0].expected, want, r.warn[0].msg);
    char skipped[64];
    snprintf(skipped, sizeof skipped, "skipped %zu stray bytes at byte 0 ",
             npre);
    assert_non_null(strstr(r.warn[0].msg, skipped));
    rec_free(&r);
  }
  rec_free(&plain);
  free(in);
}

/* The 24 bytes eventlog-socket sends before every connection's header (a
 * global block marker, spec §5.4) are skipped with a warning marked
 * expected; any other stray bytes before a header (a capability's block
 * marker, text, the marker with one more byte) with a plain warning. */
static void test_stray_marker_is_expected(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-9.0/heapy-hT.eventlog", &n);
  assert_non_null(log);
  uint8_t m[25];
  stray_marker(m, 1000, (uint32_t)header_len(log, n));
  check_stray(m, 24, log, n, 1, "eventlog-socket's marker");
  uint8_t cap0[24];
  memcpy(cap0, m, 24);
  cap0[22] = 0;
  cap0[23] = 0; /* capability 0's block, not the global buffer's */
  check_stray(cap0, 24, log, n, 0, "a capability's block marker");
  check_stray((const uint8_t *)"program output: 24 bytes", 24, log, n, 0,
              "24 bytes of text");
  uint8_t more[25];
  more[0] = 0;
  memcpy(more + 1, m, 24);
  check_stray(more, 25, log, n, 0, "the marker after one more byte");
  free(log);
}

/* {====== a raw tee of several connections ======} */

/* Three connections as the real library sends them (stray marker, header,
 * events), the first two cut mid-stream: the tee gives three sessions
 * and, event for event, what the three connections give one by one. */
static void test_tee_of_three_connections(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-9.0/heapy-hT.eventlog", &n);
  assert_non_null(log);
  size_t cuts[3] = {5001, 20017, n};
  uint8_t *is = event_starts(log, n);
  assert_false(is[cuts[0]]); /* both cuts fall inside an event */
  assert_false(is[cuts[1]]);
  uint8_t *tee = malloc(3 * (n + 24));
  size_t at[3], len[3], tn = 0;
  rec_t one[3];
  for (int k = 0; k < 3; k++) {
    at[k] = tn;
    len[k] = connection(tee + tn, log, n, cuts[k], 1000000 * (k + 1));
    decode(tee + tn, len[k], 0, 0, &one[k]);
    assert_int_equal(one[k].nhdr, 1);
    tn += len[k];
  }
  assert_int_equal(one[0].finish_rc, EL_ETRUNC); /* cut mid-event */
  assert_int_equal(one[2].finish_rc, 0);
  size_t steps[] = {0, 1, 7, 4096, 65536};
  for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
    rec_t r;
    decode(tee, tn, steps[s], 0, &r);
    assert_int_equal(r.feed_rc, 0);
    assert_int_equal(r.finish_rc, 0);
    assert_int_equal(r.nhdr, 3);
    assert_int_equal(r.st.sessions, 3);
    assert_int_equal(r.st.cut_events, 2);
    assert_int_equal(r.st.stray_bytes, 3 * 24);
    assert_int_equal(r.nev, one[0].nev + one[1].nev + one[2].nev);
    for (int k = 0; k < 3; k++)
      assert_int_equal(r.hdr_off[k], at[k] + 24);
    same_events(r.ev, &one[0], at[0], "connection 1");
    same_events(r.ev + one[0].nev, &one[1], at[1], "connection 2");
    same_events(r.ev + one[0].nev + one[1].nev, &one[2], at[2],
                "connection 3");
    /* Every warning is located; none is an error. */
    for (unsigned w = 0; w < r.nwarn && w < 64; w++)
      assert_int_equal(r.warn[w].code, 0);
    rec_free(&r);
  }
  /* The cut events are named with their offsets. */
  rec_t r;
  decode(tee, tn, 0, 0, &r);
  int named = 0;
  for (unsigned w = 0; w < r.nwarn; w++)
    if (strstr(r.warn[w].msg, "is cut off at byte") &&
        (r.warn[w].offset < at[1] || r.warn[w].offset < at[2]))
      named++;
  assert_int_equal(named, 2);
  rec_free(&r);
  for (int k = 0; k < 3; k++)
    rec_free(&one[k]);
  free(tee);
  free(is);
  free(log);
}

/* The first connection cut at every byte of a small log, then a whole
 * second connection: the tee always gives the cut stream's events
 * followed by the whole stream's, and the same whatever the chunking. */
static void test_tee_cut_at_every_byte(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-events/unicode.eventlog", &n);
  assert_non_null(log);
  size_t hl = header_len(log, n);
  uint8_t *is = event_starts(log, n);
  uint8_t *tee = malloc(2 * (n + 24));
  rec_t second;
  size_t n2 = connection(tee, log, n, n, 7);
  decode(tee, n2, 0, 0, &second);
  for (size_t x = 0; x <= n; x++) {
    size_t n1 = connection(tee, log, n, x, 5);
    connection(tee + n1, log, n, n, 7);
    rec_t first, r, bytewise;
    decode(tee, n1, 0, 0, &first);
    decode(tee, n1 + n2, 0, 0, &r);
    if (r.nev != first.nev + second.nev)
      fail_msg("cut at %zu: %zu events, expected %zu + %zu", x, r.nev,
               first.nev, second.nev);
    same_events(r.ev, &first, 0, "cut connection");
    same_events(r.ev + first.nev, &second, n1, "whole connection");
    /* A session per complete header; the cut one only if x reached its
     * end. A cut inside the data section drops the event cut, if any. */
    unsigned sessions = x >= hl ? 2 : 1;
    if (r.nhdr != sessions)
      fail_msg("cut at %zu: %u sessions, expected %u", x, r.nhdr, sessions);
    uint64_t cut = x > hl && !is[x] ? 1 : 0;
    if (r.st.cut_events != cut)
      fail_msg("cut at %zu: %llu cut events, expected %llu", x,
               (unsigned long long)r.st.cut_events, (unsigned long long)cut);
    if (x > hl && r.feed_rc)
      fail_msg("cut at %zu: feed returned %d", x, r.feed_rc);
    assert_int_equal(r.finish_rc, 0);
    decode(tee, n1 + n2, 1, 0, &bytewise);
    if (bytewise.nev != r.nev || bytewise.nwarn != r.nwarn ||
        bytewise.feed_rc != r.feed_rc)
      fail_msg("cut at %zu: byte-at-a-time differs", x);
    same_events(bytewise.ev, &r, 0, "byte at a time");
    rec_free(&first);
    rec_free(&r);
    rec_free(&bytewise);
  }
  rec_free(&second);
  free(tee);
  free(is);
  free(log);
}

/* One tee, fed in two pieces split at every byte: always the same. */
static void test_tee_split_at_every_byte(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-events/trace-binary-event.eventlog", &n);
  assert_non_null(log);
  uint8_t *tee = malloc(3 * (n + 24));
  size_t hl = header_len(log, n);
  size_t tn = connection(tee, log, n, hl + (n - hl) / 2 + 3, 1);
  tn += connection(tee + tn, log, n, n - 5, 2);
  tn += connection(tee + tn, log, n, n, 3);
  rec_t ref;
  decode(tee, tn, 0, 0, &ref);
  assert_int_equal(ref.nhdr, 3);
  for (size_t split = 0; split <= tn; split++) {
    rec_t r;
    memset(&r, 0, sizeof r);
    el_ev_sink_t s = {.ud = &r, .on_header = r_header, .on_event = r_event,
                      .on_data_end = r_data_end, .on_warning = r_warning};
    el_ev_decoder_t *d = el_ev_decoder_new(&s);
    assert_int_equal(el_ev_decoder_feed(d, tee, split), 0);
    assert_int_equal(el_ev_decoder_feed(d, tee + split, tn - split), 0);
    assert_int_equal(el_ev_decoder_finish(d), ref.finish_rc);
    el_ev_decoder_free(d);
    if (r.nev != ref.nev || r.nhdr != 3 || r.nwarn != ref.nwarn)
      fail_msg("split at %zu differs", split);
    same_events(r.ev, &ref, 0, "split");
    for (unsigned w = 0; w < r.nwarn && w < 64; w++)
      if (r.warn[w].offset != ref.warn[w].offset ||
          strcmp(r.warn[w].msg, ref.warn[w].msg))
        fail_msg("split at %zu: warning %u differs", split, w);
    rec_free(&r);
  }
  rec_free(&ref);
  free(tee);
  free(log);
}

/* The stray marker after DATA_END, and a header right after an event
 * (files concatenated): new sessions, warnings, no error. Text that
 * happens to contain "hdrbhetb" inside a USER_MSG is just text. */
/* A header declaring USER_MSG (19, variable size) and BLOCK_MARKER. */
static void user_msg_header(tu_buf_t *b) {
  tu_hdr_begin(b);
  tu_decl(b, 19, 0xFFFF, "User message");
  tu_decl(b, 18, 14, "Block marker");
  tu_hdr_end(b);
}

static void test_sessions_without_cut(void **st) {
  (void)st;
  tu_buf_t b;
  b.n = 0;
  uint8_t stray[24];
  for (int k = 0; k < 3; k++) {
    if (k < 2) {
      stray_marker(stray, 1, 100);
      tu_bytes(&b, stray, 24);
    }
    user_msg_header(&b);
    tu_ev(&b, 19, 10 + k);
    tu_u16(&b, 12);
    tu_str(&b, "xhdrbhetbyzw"); /* not a header: inside a payload */
    if (k == 0)
      tu_u16(&b, 0xFFFF); /* DATA_END, then the next connection */
  }
  rec_t r;
  decode(b.b, b.n, 0, 0, &r);
  assert_int_equal(r.feed_rc, 0);
  assert_int_equal(r.finish_rc, 0);
  assert_int_equal(r.nhdr, 3);
  assert_int_equal(r.nev, 3);
  assert_int_equal(r.st.stray_bytes, 48);
  assert_int_equal(r.st.cut_events, 0);
  for (int k = 0; k < 3; k++) {
    assert_int_equal(r.ev[k].type, 19);
    assert_int_equal(r.ev[k].session, k + 1);
  }
  int ends = 0;
  for (unsigned w = 0; w < r.nwarn; w++)
    ends += strstr(r.warn[w].msg, "without DATA_END") != NULL;
  assert_int_equal(ends, 1);
  rec_free(&r);
}

/* Two logs joined (a FIFO read by two programs in turn; `cat a b`) where
 * the first one's last event ends in 22 bytes beginning 00 12 (the type
 * of a block marker), so that with its DATA_END (FF FF) and the next
 * header they look like eventlog-socket's stray pattern (h78: the event
 * was dropped as cut, 24 "stray bytes" skipped). Expected by hand: two
 * sessions, both events whole, nothing cut or skipped, fed whole and a
 * byte at a time. */
static void test_joined_logs_like_stray_pattern(void **st) {
  (void)st;
  tu_buf_t b;
  b.n = 0;
  for (int k = 0; k < 2; k++) {
    user_msg_header(&b);
    tu_ev(&b, 19, 10 + k);
    tu_u16(&b, 30);
    uint8_t text[30];
    memset(text, 'a', sizeof text);
    text[30 - 22] = 0x00; /* the event's last 22 bytes: 00 12 ... */
    text[30 - 21] = 0x12;
    tu_bytes(&b, text, sizeof text);
    tu_u16(&b, 0xFFFF); /* DATA_END */
  }
  for (size_t step = 0; step <= 1; step++) {
    rec_t r;
    decode(b.b, b.n, step, 0, &r);
    assert_int_equal(r.feed_rc, 0);
    assert_int_equal(r.finish_rc, 0);
    assert_int_equal(r.nhdr, 2);
    assert_int_equal(r.nev, 2);
    assert_int_equal(r.data_ends, 2);
    assert_int_equal(r.st.stray_bytes, 0);
    assert_int_equal(r.st.cut_events, 0);
    assert_int_equal(r.nwarn, 0);
    for (int k = 0; k < 2; k++) {
      assert_int_equal(r.ev[k].type, 19);
      assert_int_equal(r.ev[k].t, 10 + k);
      assert_int_equal(r.ev[k].session, k + 1);
    }
    rec_free(&r);
  }
}

/* EL_EV_OPT_LIVE: a complete event is never held back; over the whole
 * input at once the results are those of the default. */
static void test_live_option_does_not_hold_events(void **st) {
  (void)st;
  tu_buf_t b;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 4, "Run thread");
  tu_hdr_end(&b);
  tu_ev(&b, 1, 5);
  tu_u32(&b, 0x00000700); /* ends in 00: may begin the stray marker */
  rec_t r;
  memset(&r, 0, sizeof r);
  el_ev_sink_t s = {.ud = &r, .on_event = r_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), 0);
  assert_int_equal(r.nev, 0); /* waits: the next bytes decide */
  assert_int_equal(el_ev_decoder_finish(d), 0);
  assert_int_equal(r.nev, 1);
  el_ev_decoder_free(d);
  /* A reset (a new connection) delivers it too: it was received. */
  free(r.ev);
  memset(&r, 0, sizeof r);
  d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), 0);
  assert_int_equal(r.nev, 0);
  el_ev_decoder_reset(d);
  assert_int_equal(r.nev, 1);
  el_ev_decoder_free(d);
  free(r.ev);
  memset(&r, 0, sizeof r);
  d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_set_opts(d, EL_EV_OPT_LIVE), 0);
  assert_int_equal(el_ev_decoder_set_opts(d, 0x80), EL_EINVAL);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), 0);
  assert_int_equal(r.nev, 1); /* at once */
  el_ev_decoder_free(d);
  free(r.ev);
  /* The three-connection tee in one feed: LIVE gives the same. */
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-events/hello-ghc-8.2.2.eventlog", &n);
  uint8_t *tee = malloc(2 * (n + 24));
  size_t tn = connection(tee, log, n, 4000, 1);
  tn += connection(tee + tn, log, n, n, 2);
  rec_t a, l;
  decode(tee, tn, 0, 0, &a);
  decode(tee, tn, 0, EL_EV_OPT_LIVE, &l);
  assert_int_equal(a.nhdr, 2);
  assert_int_equal(l.nhdr, 2);
  assert_int_equal(a.nev, l.nev);
  same_events(l.ev, &a, 0, "live");
  rec_free(&a);
  rec_free(&l);
  free(tee);
  free(log);
}

/* {====== a cut eventlog and a whole one joined ======} */

/* Decode p[0..n) in two feeds, split at byte split, with opts. */
static void decode_split(const uint8_t *p, size_t n, size_t split,
                         unsigned opts, rec_t *r) {
  el_ev_decoder_t *d = recorder_new(r, opts);
  recorder_feed(d, r, p, split);
  recorder_feed(d, r, p + split, n - split);
  recorder_end(d, r);
}

/* Does a warning of r hold "want" followed by a non-digit? */
static int warned(const rec_t *r, const char *want) {
  size_t k = strlen(want);
  for (unsigned w = 0; w < r->nwarn && w < 64; w++)
    for (const char *q = r->warn[w].msg; (q = strstr(q, want)); q++)
      if (q[k] < '0' || q[k] > '9') return 1;
  return 0;
}

/* The decoding r of log's first x bytes followed by the whole log (n
 * bytes; header hl bytes; is: event_starts) is first's events, then
 * second's shifted by x, in a session of its own; the event cut at x, if
 * any, is dropped, counted and named with both offsets; no error. */
static void check_joined(const rec_t *r, const rec_t *first,
                         const rec_t *second, size_t x, size_t hl,
                         const uint8_t *is, const char *what) {
  char want[96];
  if (r->nev != first->nev + second->nev)
    fail_msg("%s, cut at %zu: %zu events, expected %zu + %zu", what, x, r->nev,
             first->nev, second->nev);
  same_events(r->ev, first, 0, what);
  same_events(r->ev + first->nev, second, x, what);
  if (second->nev && r->ev[r->nev - 1].session != r->nhdr)
    fail_msg("%s, cut at %zu: the whole log's events in session %u of %u", what,
             x, r->ev[r->nev - 1].session, r->nhdr);
  unsigned sessions = x >= hl ? 2 : 1;
  uint64_t cut = x > hl && !is[x] ? 1 : 0;
  if (r->nhdr != sessions || r->hdr_off[sessions - 1] != x)
    fail_msg("%s, cut at %zu: %u sessions, expected %u, the last at %zu", what,
             x, r->nhdr, sessions, x);
  if (r->st.cut_events != cut)
    fail_msg("%s, cut at %zu: %llu cut events, expected %llu", what, x,
             (unsigned long long)r->st.cut_events, (unsigned long long)cut);
  if (r->feed_rc || r->finish_rc)
    fail_msg("%s, cut at %zu: feed %d, finish %d", what, x, r->feed_rc,
             r->finish_rc);
  for (unsigned w = 0; w < r->nwarn && w < 64; w++)
    if (r->warn[w].code)
      fail_msg("%s, cut at %zu: an error: %s", what, x, r->warn[w].msg);
  snprintf(want, sizeof want, cut ? "is cut off at byte %zu" : "byte %zu", x);
  if (!warned(r, want))
    fail_msg("%s, cut at %zu: no warning with '%s'", what, x, want);
}

#define STRAY 24 /* eventlog-socket's stray bytes: a global block marker */

/* Cut log at x, join the whole log, and check every way of feeding it:
 * at once, in 7-byte chunks, byte at a time (bytewise), and with
 * EL_EV_OPT_LIVE at once and split at the join or 3 bytes before it (a
 * pipe read as the writer wrote: its first file, then the second). */
static void joined_at(const uint8_t *log, size_t n, size_t x, size_t hl,
                      const uint8_t *is, const rec_t *second, int bytewise,
                      uint8_t *buf) {
  memcpy(buf, log, x);
  memcpy(buf + x, log, n);
  rec_t first, r;
  decode(log, x, 0, 0, &first);
  /* A global block's marker (cap 0xFFFF) that ends at x, right before the
   * header, reads as eventlog-socket's stray bytes: skipped, with a
   * warning at x - 24 that names the header at x (docs/eventlog.md). */
  int glob = x >= hl + STRAY && is[x - STRAY] && log[x - STRAY] == 0 &&
             log[x - STRAY + 1] == EL_EV_BLOCK_MARKER && log[x - 2] == 0xFF &&
             log[x - 1] == 0xFF;
  first.nev -= glob;
  decode(buf, x + n, 0, 0, &r);
  check_joined(&r, &first, second, x, hl, is, "at once");
  rec_free(&r);
  decode(buf, x + n, 7, 0, &r);
  check_joined(&r, &first, second, x, hl, is, "7-byte chunks");
  rec_free(&r);
  if (bytewise) {
    decode(buf, x + n, 1, 0, &r);
    check_joined(&r, &first, second, x, hl, is, "byte at a time");
    rec_free(&r);
  }
  decode(buf, x + n, 0, EL_EV_OPT_LIVE, &r);
  check_joined(&r, &first, second, x, hl, is, "live, at once");
  rec_free(&r);
  /* (Live, that marker came whole in the first feed: it is delivered.) */
  first.nev += glob;
  decode_split(buf, x + n, x, EL_EV_OPT_LIVE, &r);
  check_joined(&r, &first, second, x, hl, is, "live, split at the join");
  rec_free(&r);
  first.nev -= glob;
  if (x >= 3) {
    decode_split(buf, x + n, x - 3, EL_EV_OPT_LIVE, &r);
    check_joined(&r, &first, second, x, hl, is, "live, split before");
    rec_free(&r);
  }
  rec_free(&first);
}

/* The offset of the first event of type after byte from, or 0. */
static size_t first_of(const rec_t *r, uint16_t type, size_t from) {
  for (size_t i = 0; i < r->nev; i++)
    if (r->ev[i].type == type && r->ev[i].offset > from)
      return (size_t)r->ev[i].offset;
  return 0;
}

/* A log cut anywhere (a program killed mid-write), then a whole one in the
 * same stream with nothing between (`cat cut.eventlog whole.eventlog`, a
 * FIFO reopened by the next program): the whole log's header begins a
 * session, and the bytes of the cut event that would have come from it
 * are never decoded as the event's (it is dropped and reported). Expected
 * values: the cut log decoded alone and the whole log decoded alone.
 * unicode.eventlog is cut at every byte (header, events, DATA_END);
 * heapy-hT.eventlog at every byte of its header and the first 500 bytes
 * of data (a capability block's marker, fixed-size events, THREAD_LABEL
 * and USER_MARKER of variable size), and around its global block's marker
 * and its first HEAP_PROF_SAMPLE_STRING. */
static void test_joined_logs_cut_at_every_byte(void **st) {
  (void)st;
  const char *logs[] = {"ghc-events/unicode.eventlog",
                        "ghc-9.0/heapy-hT.eventlog"};
  for (int k = 0; k < 2; k++) {
    size_t n = 0;
    uint8_t *log = tu_read_log(logs[k], &n);
    assert_non_null(log);
    size_t hl = header_len(log, n);
    uint8_t *is = event_starts(log, n);
    uint8_t *buf = malloc(2 * n);
    rec_t second;
    decode(log, n, 0, 0, &second);
    assert_int_equal(second.finish_rc, 0);
    size_t bm = first_of(&second, EL_EV_BLOCK_MARKER, hl + 1000);
    size_t hs = first_of(&second, 164, hl); /* HEAP_PROF_SAMPLE_STRING */
    for (size_t x = 1; x < n; x++) {
      int near = x < hl + 500 || (bm && x + 40 >= bm && x < bm + 60) ||
                 (hs && x + 10 >= hs && x < hs + 60);
      if (k == 0 || near) joined_at(log, n, x, hl, is, &second, k == 0, buf);
    }
    rec_free(&second);
    free(buf);
    free(is);
    free(log);
  }
}

/* {====== a stream read as TCP delivers it ======} */

/* Decode p[0..n) with opts in chunks of 1..maxc bytes, their sizes drawn
 * from seed (a TCP connection's reads: any size, any split point). */
static void decode_reads(const uint8_t *p, size_t n, uint64_t seed, size_t maxc,
                         unsigned opts, rec_t *r) {
  el_ev_decoder_t *d = recorder_new(r, opts);
  for (size_t i = 0; i < n;) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    size_t k = (size_t)(seed >> 33) % maxc + 1;
    if (k > n - i) k = n - i;
    recorder_feed(d, r, p + i, k);
    i += k;
  }
  recorder_end(d, r);
}

/* Is r exactly ref: the same events, headers, warnings, results and
 * counts? Reports the first difference. */
static void same_decoding(const rec_t *r, const rec_t *ref, const char *what,
                          uint64_t seed, size_t maxc) {
  if (r->nev != ref->nev)
    fail_msg(
        "%s, seed %llu, reads up to %zu bytes: %zu events, fed at once "
        "%zu",
        what, (unsigned long long)seed, maxc, r->nev, ref->nev);
  same_events(r->ev, ref, 0, what);
  if (r->nhdr != ref->nhdr || r->data_ends != ref->data_ends ||
      r->nwarn != ref->nwarn || r->feed_rc != ref->feed_rc ||
      r->finish_rc != ref->finish_rc || memcmp(&r->st, &ref->st, sizeof r->st))
    fail_msg(
        "%s, seed %llu, reads up to %zu bytes: %u headers, %u "
        "warnings, feed %d, finish %d, %llu skipped bytes; fed at once "
        "%u, %u, %d, %d, %llu",
        what, (unsigned long long)seed, maxc, r->nhdr, r->nwarn, r->feed_rc,
        r->finish_rc, (unsigned long long)r->st.skipped_bytes, ref->nhdr,
        ref->nwarn, ref->feed_rc, ref->finish_rc,
        (unsigned long long)ref->st.skipped_bytes);
  for (unsigned k = 0; k < ref->nhdr && k < 16; k++)
    assert_int_equal(r->hdr_off[k], ref->hdr_off[k]);
  for (unsigned w = 0; w < ref->nwarn && w < 64; w++)
    if (strcmp(r->warn[w].msg, ref->warn[w].msg) ||
        r->warn[w].offset != ref->warn[w].offset)
      fail_msg(
          "%s, seed %llu, reads up to %zu bytes: warning %u is '%s', "
          "fed at once '%s'",
          what, (unsigned long long)seed, maxc, w, r->warn[w].msg,
          ref->warn[w].msg);
}

/* p[0..n) read as a socket delivers it, with opts: seeds reads of 1 to
 * 4096 bytes and as many of 1 to 64 bytes, each decoding exactly as the
 * stream fed at once. */
static void tcp_reads(const uint8_t *p, size_t n, unsigned opts, int seeds,
                      const char *what) {
  rec_t ref;
  decode(p, n, 0, opts, &ref);
  for (int k = 0; k < 2 * seeds; k++) {
    size_t maxc = k < seeds ? 4096 : 64;
    rec_t r;
    decode_reads(p, n, (uint64_t)k + 1, maxc, opts, &r);
    same_decoding(&r, &ref, what, (uint64_t)k + 1, maxc);
    rec_free(&r);
  }
  rec_free(&ref);
}

/* Streams as eventlog-socket sends them (its 24 stray bytes, the header,
 * the events; the two real captures whose first block the producer
 * damaged: a stale marker, an event cut by its block's end), a raw tee
 * of connections cut anywhere, and cut logs joined to whole ones, read
 * in TCP-like chunks of every size and split point: the same events,
 * sessions, warnings and counts as fed at once. Without EL_EV_OPT_LIVE
 * always; with it for the streams in which nothing new begins inside an
 * event (there, a cut is only found when its bytes came in one feed:
 * eventlog.h). */
static void test_streams_in_tcp_reads(void **st) {
  (void)st;
  size_t n = 0, cn = 0;
  uint8_t *log = tu_read_log("ghc-9.0/heapy-hT.eventlog", &n);
  assert_non_null(log);
  size_t hl = header_len(log, n);
  uint8_t *is = event_starts(log, n);
  uint8_t *buf = malloc(2 * (n + 24));
  size_t one = connection(buf, log, n, n, 1000);
  tcp_reads(buf, one, 0, 40, "one connection");
  tcp_reads(buf, one, EL_EV_OPT_LIVE, 40, "one connection, live");
  const char *caps[] = {"eventlog-socket/restart-stale-marker.tee",
                        "eventlog-socket/restart-cut-event.tee"};
  for (int k = 0; k < 2; k++) {
    uint8_t *c = tu_read_log(caps[k], &cn);
    assert_non_null(c);
    tcp_reads(c, cn, 0, 10, caps[k]);
    tcp_reads(c, cn, EL_EV_OPT_LIVE, 10, caps[k]);
    free(c);
  }
  /* Cuts in the header, at its end, in and between the first events, a
   * capability's block marker, variable-size events, and later. */
  size_t cuts[] = {5,      30,      hl - 13, hl - 5,  hl,       hl + 1,
                   hl + 7, hl + 24, hl + 31, hl + 50, hl + 200, hl + 317,
                   n / 2,  n - 7,   n - 2,   n - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    size_t x = cuts[i];
    size_t tn = connection(buf, log, n, x, 1000);
    tn += connection(buf + tn, log, n, n, 2000);
    tcp_reads(buf, tn, 0, 6, "a tee of two connections");
    memcpy(buf, log, x);
    memcpy(buf + x, log, n);
    tcp_reads(buf, x + n, 0, 6, "a cut log and a whole one");
    if (is[x])
      tcp_reads(buf, x + n, EL_EV_OPT_LIVE, 6,
                "a log cut between events and a whole one, live");
  }
  free(buf);
  free(is);
  free(log);
}

/* {====== duplicate declarations ======} */

/* A header 0, 1 (RUN_THREAD), 2, then dup (id 1, size dsize) after 19;
 * RUN_THREAD events with 4-byte payloads. */
static size_t dup_stream(tu_buf_t *b, int where, uint16_t dsize) {
  b->n = 0;
  tu_hdr_begin(b);
  if (where == 1) /* the duplicate first, out of order */
    tu_decl(b, 1, dsize, "Run thread (dup)");
  tu_decl(b, 0, 4, "Create thread");
  tu_decl(b, 1, 4, "Run thread");
  if (where == 2) /* right after: neither is in id order */
    tu_decl(b, 1, dsize, "Run thread (dup)");
  tu_decl(b, 2, 10, "Stop thread");
  tu_decl(b, 19, 0xFFFF, "User message");
  if (where == 0) /* after 19: out of order */
    tu_decl(b, 1, dsize, "Run thread (dup)");
  tu_hdr_end(b);
  size_t hl = b->n;
  for (uint32_t k = 0; k < 5; k++) {
    tu_ev(b, 1, 100 + k);
    tu_u32(b, 40 + k);
  }
  tu_ev(b, 19, 200);
  tu_u16(b, 3);
  tu_str(b, "end");
  tu_u16(b, 0xFFFF);
  return hl;
}

/* Offset of the i-th "etb\0" in b (hand count of declarations). */
static uint64_t decl_at(const tu_buf_t *b, int i) {
  for (size_t k = 0; k + 4 <= b->n; k++)
    if (!memcmp(b->b + k, "etb\0", 4) && i-- == 0)
      return k;
  return 0;
}

static void test_duplicate_declarations(void **st) {
  (void)st;
  tu_buf_t b;
  rec_t r;
  /* Identical: harmless, one code-0 warning with the later offset. */
  dup_stream(&b, 0, 4);
  decode(b.b, b.n, 0, 0, &r);
  assert_int_equal(r.feed_rc, 0);
  assert_int_equal(r.nev, 6);
  assert_int_equal(r.st.dup_decls, 1);
  assert_int_equal(r.nwarn, 1);
  assert_int_equal(r.warn[0].code, 0);
  assert_int_equal(r.warn[0].offset, decl_at(&b, 4));
  assert_non_null(strstr(r.warn[0].msg, "RUN_THREAD"));
  rec_free(&r);
  /* Conflicting, the later one out of id order: the first wins, every
   * RUN_THREAD decodes (with the last one, 6-byte events would eat the
   * stream). */
  for (size_t step = 0; step <= 1; step++) {
    dup_stream(&b, 0, 6);
    decode(b.b, b.n, step, 0, &r);
    assert_int_equal(r.nev, 6);
    for (int k = 0; k < 5; k++) {
      assert_int_equal(r.ev[k].type, 1);
      assert_int_equal(r.ev[k].t, 100 + k);
      assert_true(r.ev[k].known);
    }
    assert_int_equal(r.ev[5].type, 19);
    assert_int_equal(r.data_ends, 1);
    assert_int_equal(r.nwarn, 1);
    assert_int_equal(r.warn[0].code, EL_EBADHDR);
    assert_int_equal(r.warn[0].offset, decl_at(&b, 4));
    assert_non_null(strstr(r.warn[0].msg, "RUN_THREAD"));
    char where[64];
    snprintf(where, sizeof where, "using the one at byte %llu",
             (unsigned long long)decl_at(&b, 1));
    assert_non_null(strstr(r.warn[0].msg, where));
    rec_free(&r);
  }
  /* Conflicting, the earlier one out of order: the later one wins. */
  dup_stream(&b, 1, 6);
  decode(b.b, b.n, 0, 0, &r);
  assert_int_equal(r.nev, 6);
  assert_int_equal(r.ev[4].t, 104);
  assert_int_equal(r.warn[0].offset, decl_at(&b, 2));
  rec_free(&r);
  /* Neither in order: the last wins, as in ghc-events; RUN_THREAD is
   * then 6 bytes and the 4-byte events no longer frame as written. */
  dup_stream(&b, 2, 6);
  decode(b.b, b.n, 0, 0, &r);
  assert_int_equal(r.warn[0].code, EL_EBADHDR);
  char where[64];
  snprintf(where, sizeof where, "using the one at byte %llu",
           (unsigned long long)decl_at(&b, 2));
  assert_non_null(strstr(r.warn[0].msg, where));
  assert_int_equal(r.ev[0].type, 1);
  assert_int_equal(r.ev[0].t, 100);
  assert_false(r.nev >= 2 && r.ev[1].type == 1 && r.ev[1].t == 101);
  rec_free(&r);
  /* The same with the last one of variable size, after a CREATE_THREAD
   * (the session's first event is framed by the general path, the next
   * ones by the fast path): RUN_THREAD is no longer a fixed-size type,
   * so the fast path's table of lengths, where the first declaration put
   * 14, must not frame the 4-byte events either: the first RUN_THREAD
   * frames as a variable-size event of 0 bytes (its u16 size, the high
   * bytes of 40, is 0), 12 bytes, and what follows does not frame. */
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 0, 4, "Create thread");
  tu_decl(&b, 1, 4, "Run thread");
  tu_decl(&b, 1, 0xFFFF, "Run thread (dup)");
  tu_decl(&b, 2, 10, "Stop thread");
  tu_hdr_end(&b);
  tu_ev(&b, 0, 99);
  tu_u32(&b, 7);
  for (uint32_t k = 0; k < 5; k++) {
    tu_ev(&b, 1, 100 + k);
    tu_u32(&b, 40 + k);
  }
  tu_u16(&b, 0xFFFF);
  decode(b.b, b.n, 0, 0, &r);
  assert_int_equal(r.warn[0].code, EL_EBADHDR);
  assert_true(r.nev >= 2);
  assert_int_equal(r.ev[0].type, 0);
  assert_int_equal(r.ev[1].type, 1);
  assert_int_equal(r.ev[1].t, 100);
  assert_false(r.nev >= 3 && r.ev[2].type == 1 && r.ev[2].t == 101);
  rec_free(&r);
  /* The header keeps every declaration (show lists them all) and marks
   * the one not used. */
  dup_stream(&b, 0, 6);
  el_ev_decoder_t *d = el_ev_decoder_new(NULL);
  el_ev_decoder_feed(d, b.b, b.n);
  const el_ev_header_t *h = el_ev_decoder_header(d);
  assert_int_equal(h->ndecls, 5);
  assert_int_equal(h->decls[4].id, 1);
  assert_int_equal(h->decls[4].overridden, 1);
  assert_int_equal(h->decls[1].overridden, 0);
  assert_int_equal(h->decls[4].offset, decl_at(&b, 4));
  el_ev_decoder_free(d);
}

/* {====== malformed variable-size events ======} */

typedef struct {
  uint16_t id;
  const char *name;
  uint8_t payload[32];
  uint16_t len;
} bad_t;

/* Payloads that do not hold their type's fields (spec §2.1, §3.1):
 * shorter than the fixed prefix, or a string without its NUL. */
static const bad_t bad_payloads[] = {
    {29, "RTS_IDENTIFIER", {0, 0, 1}, 3},            /* capset is 4 */
    {30, "PROGRAM_ARGS", {0, 0, 0}, 3},
    {30, "PROGRAM_ARGS", {0, 0, 0, 0, 'a', 0, 'b'}, 7}, /* last no NUL */
    {31, "PROGRAM_ENV", {0, 0}, 2},
    {31, "PROGRAM_ENV", {0, 0, 0, 0, 'A', '=', '1'}, 7},
    {42, "INTERN_STRING", {'a', 'b', 'c'}, 3},       /* id is 4 */
    {44, "THREAD_LABEL", {0, 5}, 2},                 /* thread is 4 */
    {140, "PERF_NAME", {0, 0, 1}, 3},
    {160, "HEAP_PROF_BEGIN", {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 12},
    {160, "HEAP_PROF_BEGIN", {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 'm'},
     14},                                            /* filter no NUL */
    {161, "HEAP_PROF_COST_CENTRE", {0, 0, 7}, 3},
    {161, "HEAP_PROF_COST_CENTRE", {0, 0, 0, 7, 'l', 0, 'm', 0, 's'}, 9},
    {163, "HEAP_PROF_SAMPLE_COST_CENTRE", {0, 0, 0, 0, 0, 0, 0, 0, 9}, 9},
    {163, "HEAP_PROF_SAMPLE_COST_CENTRE",
     {0, 0, 0, 0, 0, 0, 0, 0, 9, 2, 0, 0, 0, 1}, 14}, /* depth 2, 1 id */
    {164, "HEAP_PROF_SAMPLE_STRING", {0, 0, 0, 0, 0, 0, 0, 0, 9, 'x'}, 10},
    {167, "PROF_SAMPLE_COST_CENTRE", {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5},
     12},
    {169, "IPE", {0, 0, 0, 0, 0, 0, 0, 9}, 7},
    {169, "IPE", {0, 0, 0, 0, 0, 0, 0, 9, 't', 0, '2', 0, 'x'}, 13},
    {210, "TICKY_COUNTER_DEF", {0, 0, 0, 0, 0, 0, 0, 1, 0}, 9},
    {210, "TICKY_COUNTER_DEF", {0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 'k'}, 11},
};

/* Each malformed payload between two USER_MSGs, inside a block of cap 3:
 * delivered once with malformed = 1 (never known), reported at its
 * offset with its name, counted; the USER_MSG after it decodes. */
static void check_malformed_events(int mask) {
  for (size_t k = 0; k < sizeof bad_payloads / sizeof bad_payloads[0];
       k++) {
    const bad_t *x = &bad_payloads[k];
    g_want = mask == 1 ? x->id : mask == 2 ? -1 : -2;
    tu_buf_t b;
    b.n = 0;
    tu_hdr_begin(&b);
    tu_decl(&b, 18, 14, "Block marker");
    tu_decl(&b, 19, 0xFFFF, "User message");
    tu_decl(&b, x->id, 0xFFFF, "the type under test");
    tu_hdr_end(&b);
    size_t blk = b.n;
    size_t size = 24 + (12 + 6) + (12 + x->len) + (12 + 5);
    tu_ev(&b, 18, 1);
    tu_u32(&b, (uint32_t)size);
    tu_u64(&b, 99);
    tu_u16(&b, 3);
    tu_ev(&b, 19, 2);
    tu_u16(&b, 6);
    tu_str(&b, "before");
    size_t bad_at = b.n; /* by hand: the offset to report */
    tu_ev(&b, x->id, 3);
    tu_u16(&b, x->len);
    tu_bytes(&b, x->payload, x->len);
    tu_ev(&b, 19, 4);
    tu_u16(&b, 5);
    tu_str(&b, "after");
    assert_int_equal(b.n - blk, size);
    tu_u16(&b, 0xFFFF);
    for (size_t step = 0; step <= 1; step++) {
      rec_t r;
      decode(b.b, b.n, step, 0, &r);
      if (r.nev != 4)
        fail_msg("%s #%zu: %zu events", x->name, k, r.nev);
      const rev_t *e = &r.ev[2];
      assert_int_equal(e->type, x->id);
      assert_int_equal(e->offset, bad_at);
      if (!e->malformed || e->known)
        fail_msg("%s #%zu: not flagged malformed", x->name, k);
      assert_int_equal(e->cap, 3);
      assert_int_equal(r.ev[3].type, 19);
      assert_true(r.ev[3].known);
      assert_int_equal(r.ev[3].t, 4);
      assert_false(r.ev[3].malformed);
      assert_int_equal(r.st.malformed_events, 1);
      assert_int_equal(r.nwarn, 1);
      assert_int_equal(r.warn[0].offset, bad_at);
      if (!strstr(r.warn[0].msg, x->name))
        fail_msg("%s #%zu: warning does not name it: %s", x->name, k,
                 r.warn[0].msg);
      char off[32];
      snprintf(off, sizeof off, "at byte %zu", bad_at);
      assert_non_null(strstr(r.warn[0].msg, off));
      assert_int_equal(r.finish_rc, 0);
      rec_free(&r);
    }
  }
  g_want = -2;
}

static void test_malformed_variable_events(void **st) {
  (void)st;
  check_malformed_events(0);
}

/* The same with the fields of no type wanted but the one under test, and
 * with none wanted at all (el_ev_decoder_set_fields): a malformed event
 * is flagged, warned about and counted whatever the mask, so the host
 * keeps it from every handler. */
static void test_malformed_with_fields_mask(void **st) {
  (void)st;
  check_malformed_events(1);
  check_malformed_events(2);
}

/* The same types with well-formed payloads are not malformed (a check
 * that the cases above fail for the stated reason only). */
static void test_wellformed_variable_events(void **st) {
  (void)st;
  static const bad_t good[] = {
      {29, "RTS_IDENTIFIER", {0, 0, 0, 0}, 4},
      {30, "PROGRAM_ARGS", {0, 0, 0, 0, 'a', 0, 'b', 0}, 8},
      {30, "PROGRAM_ARGS", {0, 0, 0, 0}, 4},
      {44, "THREAD_LABEL", {0, 0, 0, 5}, 4},
      {163, "HEAP_PROF_SAMPLE_COST_CENTRE",
       {0, 0, 0, 0, 0, 0, 0, 0, 9, 1, 0, 0, 0, 1}, 14},
      {169, "IPE", {0, 0, 0, 0, 0, 0, 0, 9, 't', 0, '2', 0, 0, 0, 0, 0},
       16},
  };
  for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
    tu_buf_t b;
    b.n = 0;
    tu_hdr_begin(&b);
    tu_decl(&b, good[k].id, 0xFFFF, "x");
    tu_hdr_end(&b);
    tu_ev(&b, good[k].id, 3);
    tu_u16(&b, good[k].len);
    tu_bytes(&b, good[k].payload, good[k].len);
    tu_u16(&b, 0xFFFF);
    rec_t r;
    decode(b.b, b.n, 0, 0, &r);
    assert_int_equal(r.nev, 1);
    if (!r.ev[0].known || r.ev[0].malformed)
      fail_msg("%s #%zu: well-formed payload rejected", good[k].name, k);
    assert_int_equal(r.st.malformed_events, 0);
    rec_free(&r);
  }
}

/* {====== el_ev_scan_sessions ======} */

/* threads.eventlog (GHC 9.0: the global block with the startup events is
 * at the end). From `show --json`: blocks of cap 0 and 1 and a global
 * one ending at t = 276359333 (the largest time of the log),
 * CAP_CREATE 0 and 1, WALL_CLOCK_TIME at t = 888974 with unix_sec
 * 1795960854, nsec 677232000. From its ghc-events reference text:
 * "capset 0: pid 10888", "parent pid 10886", "RTS version
 * "GHC-9.0.2 rts_thr_l"", "args: ["./Threads","16","+RTS","-l","-N2",
 * "-ollogs/threads.eventlog","-RTS"]". */
static void test_scan_threads_log(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-9.0/threads.eventlog", &n);
  assert_non_null(p);
  el_ev_scan_t s;
  assert_int_equal(el_ev_scan_sessions(p, n, &s), 0);
  assert_int_equal(s.status, 0);
  assert_int_equal(s.nsessions, 1);
  const el_ev_scan_session_t *x = &s.sessions[0];
  assert_int_equal(x->header_offset, 0);
  assert_int_equal(x->end_offset, n);
  assert_true(x->data_end);
  assert_true(x->has_wall_clock);
  assert_int_equal(x->wall_t_ns, 888974);
  assert_int_equal(x->anchor_unix_ns,
                   1795960854LL * 1000000000LL + 677232000LL - 888974LL);
  assert_int_equal(x->max_t_ns, 276359333);
  assert_int_equal(x->ncaps, 2);
  assert_int_equal(x->caps[0], 0);
  assert_int_equal(x->caps[1], 1);
  assert_true(x->has_pid && x->has_ppid);
  assert_int_equal(x->pid, 10888);
  assert_int_equal(x->ppid, 10886);
  assert_non_null(x->rts_id);
  assert_string_equal(x->rts_id, "GHC-9.0.2 rts_thr_l");
  assert_int_equal(x->rts_id_len, strlen("GHC-9.0.2 rts_thr_l"));
  static const char args[] =
      "./Threads\0"
      "16\0"
      "+RTS\0"
      "-l\0"
      "-N2\0"
      "-ollogs/threads.eventlog\0"
      "-RTS";
  assert_non_null(x->args);
  /* Each argument ends with NUL; the last one's may be the event's end. */
  assert_true(x->args_len == sizeof args - 1 || x->args_len == sizeof args);
  assert_memory_equal(x->args, args, sizeof args - 1);
  /* Its events without a capability, all in the global block at the end
   * (ghc-events text: startup, task and capset events): the last is a
   * CAPSET_DELETE (10-byte header + 4-byte capset), then DATA_END (2
   * bytes) ends the file. Their type ids (spec §4): CAPSET_CREATE 25,
   * CAPSET_DELETE 26, CAPSET_ASSIGN_CAP 27, CAPSET_REMOVE_CAP 28,
   * RTS_IDENTIFIER 29, PROGRAM_ARGS 30, OSPROCESS_PID 32, OSPROCESS_PPID
   * 33, WALL_CLOCK_TIME 43, CAP_CREATE 45, CAP_DELETE 46, HEAP_INFO_GHC
   * 52, TASK_CREATE 55, TASK_DELETE 57. */
  assert_true(x->has_nocap);
  assert_false(x->nocap_high);
  assert_int_equal(x->nocap_last_offset, n - 2 - 14);
  static const int nocap_ids[] = {25, 26, 27, 28, 29, 30, 32,
                                  33, 43, 45, 46, 52, 55, 57};
  uint64_t want[4] = {0};
  for (size_t i = 0; i < sizeof nocap_ids / sizeof nocap_ids[0]; i++)
    want[nocap_ids[i] >> 6] |= (uint64_t)1 << (nocap_ids[i] & 63);
  for (int w = 0; w < 4; w++) assert_int_equal(x->nocap_types[w], want[w]);
  /* Both capability blocks' bodies were not read. */
  assert_int_equal(s.stats.skipped_blocks, 2);
  assert_int_equal(s.stats.skipped_block_bytes,
                   (1335587 - 24) + (1468280 - 24));
  el_ev_scan_free(&s);
  free(p);
}

/* A tee of three connections, one cut inside a capability block: three
 * sessions at the right offsets, the cut block decoded after all. */
static void test_scan_tee(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-9.0/threads.eventlog", &n);
  uint8_t *tee = malloc(3 * (n + 24));
  size_t tn = 0, at[3];
  size_t cuts[3] = {2000000, n, n}; /* inside cap 1's block (1338275..) */
  for (int k = 0; k < 3; k++) {
    at[k] = tn;
    tn += connection(tee + tn, log, n, cuts[k], 1);
  }
  el_ev_scan_t s;
  assert_int_equal(el_ev_scan_sessions(tee, tn, &s), 0);
  assert_int_equal(s.nsessions, 3);
  for (int k = 0; k < 3; k++)
    assert_int_equal(s.sessions[k].header_offset, at[k] + 24);
  /* The cut session never got to its global block. */
  assert_false(s.sessions[0].has_wall_clock);
  assert_false(s.sessions[0].data_end);
  assert_int_equal(s.sessions[0].ncaps, 2);
  for (int k = 1; k < 3; k++) {
    assert_true(s.sessions[k].has_wall_clock);
    assert_true(s.sessions[k].data_end);
    assert_int_equal(s.sessions[k].max_t_ns, 276359333);
    assert_int_equal(s.sessions[k].end_offset, at[k] + 24 + n);
  }
  assert_int_equal(s.stats.cut_events, 1);
  el_ev_scan_free(&s);
  free(tee);
  free(log);
}

/* Truncated at many points and with bytes flipped: never a crash, and
 * what precedes the damage is reported (the header's session). */
static void test_scan_damaged_input(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/ghc-9.2-events.eventlog", &n);
  size_t hl = header_len(p, n);
  for (size_t x = 0; x <= n; x += x < 4000 ? 1 : 97) {
    el_ev_scan_t s;
    int rc = el_ev_scan_sessions(p, x, &s);
    assert_int_equal(s.nsessions, x >= hl ? 1 : 0);
    if (x < n && x >= hl && rc)
      assert_int_equal(rc, EL_ETRUNC);
    el_ev_scan_free(&s);
  }
  uint8_t *q = malloc(n);
  uint64_t seed = 12345;
  for (int round = 0; round < 2000; round++) {
    memcpy(q, p, n);
    for (int f = 0; f < 4; f++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      q[(seed >> 33) % n] ^= (uint8_t)(seed >> 13);
    }
    el_ev_scan_t s;
    el_ev_scan_sessions(q, n, &s);
    el_ev_scan_free(&s);
  }
  free(q);
  el_ev_scan_t s;
  assert_int_equal(el_ev_scan_sessions(p, 0, &s), 0);
  assert_int_equal(s.nsessions, 0);
  el_ev_scan_free(&s);
  el_ev_scan_free(NULL);
  free(p);
}

/* threads.eventlog written to a temporary file and mapped whole, then the
 * file truncated to `keep` bytes behind the mapping's back (as another
 * process could). *fd and *len: to unmap and close. */
static const uint8_t *map_then_truncate(size_t keep, int *fd, size_t *len) {
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-9.0/threads.eventlog", &n);
  assert_non_null(log);
  char path[] = "/tmp/el_test_shrinkXXXXXX";
  *fd = mkstemp(path);
  assert_true(*fd >= 0);
  unlink(path);
  assert_int_equal(write(*fd, log, n), (ssize_t)n);
  free(log);
  void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, *fd, 0);
  assert_true(m != MAP_FAILED);
  assert_int_equal(ftruncate(*fd, (off_t)keep), 0);
  *len = n;
  return m;
}

/* The file of a mapped scan shrinks before the scan reads it: no SIGBUS,
 * EL_ESHRUNK naming the first byte that could not be read. Truncated to
 * nothing, that is byte 0. Truncated to the page holding the start of cap
 * 1's block (1338275, see test_scan_threads_log: cap 0's block runs from
 * the end of the 2688-byte header for 1335587 bytes), the header and cap
 * 0's marker are read, the body skipped, and cap 1's marker is the first
 * byte past the new end (its page lies wholly beyond it). */
static void test_scan_mapped_file_shrinks(void **st) {
  (void)st;
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  const struct {
    size_t keep;
    uint64_t fault;
    size_t nsessions;
  } c[] = {{0, 0, 0}, {1338275 / pg * pg, 1338275, 1}};
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    int fd;
    size_t n;
    const uint8_t *m = map_then_truncate(c[k].keep, &fd, &n);
    el_ev_scan_t s;
    assert_int_equal(el_ev_scan_mapped(m, n, &s), EL_ESHRUNK);
    assert_int_equal(s.status, EL_ESHRUNK);
    assert_int_equal(s.diag.code, EL_ESHRUNK);
    assert_int_equal(s.diag.offset, c[k].fault);
    char want[64];
    snprintf(want, sizeof want, "no data at byte %llu",
             (unsigned long long)c[k].fault);
    if (!strstr(s.diag.msg, want))
      fail_msg("case %zu: message \"%s\" lacks \"%s\"", k, s.diag.msg, want);
    assert_int_equal(s.nsessions, c[k].nsessions);
    el_ev_scan_free(&s);
    /* The plain scan of the same mapping is guarded too. */
    assert_int_equal(el_ev_scan_sessions(m, n, &s), EL_ESHRUNK);
    assert_int_equal(s.diag.offset, c[k].fault);
    el_ev_scan_free(&s);
    munmap((void *)m, n);
    close(fd);
  }
}

/* {====== el_ev_scan_fd ======} */

/* p[0..n) in a memory file, for el_ev_scan_fd. */
static int mem_file(const uint8_t *p, size_t n) {
  int fd = memfd_create("test_scan_fd", 0);
  assert_true(fd >= 0);
  if (n) assert_int_equal(write(fd, p, n), (ssize_t)n);
  return fd;
}

/* Bytes this process has read with read(2) and pread(2) so far
 * (/proc/self/io rchar), or UINT64_MAX when the kernel does not say. */
static uint64_t bytes_read(void) {
  FILE *f = fopen("/proc/self/io", "r");
  unsigned long long v = 0;
  int ok = f && fscanf(f, "rchar: %llu", &v) == 1;
  if (f) fclose(f);
  return ok ? (uint64_t)v : UINT64_MAX;
}

/* a (el_ev_scan_fd) found what b (el_ev_scan_sessions) did: the same
 * result, sessions and counters. */
static void same_scan(const el_ev_scan_t *a, int arc, const el_ev_scan_t *b,
                      int brc, const char *what) {
  if (arc != brc || a->status != b->status || a->nsessions != b->nsessions ||
      a->diag.offset != b->diag.offset || a->warnings != b->warnings ||
      strcmp(a->diag.msg, b->diag.msg) != 0)
    fail_msg(
        "%s: rc %d status %d, %zu sessions, %llu warnings, '%s' at %llu; "
        "in memory rc %d status %d, %zu, %llu, '%s' at %llu",
        what, arc, a->status, a->nsessions, (unsigned long long)a->warnings,
        a->diag.msg, (unsigned long long)a->diag.offset, brc, b->status,
        b->nsessions, (unsigned long long)b->warnings, b->diag.msg,
        (unsigned long long)b->diag.offset);
  if (a->stats.events != b->stats.events ||
      a->stats.skipped_blocks != b->stats.skipped_blocks ||
      a->stats.skipped_block_bytes != b->stats.skipped_block_bytes ||
      a->stats.bytes != b->stats.bytes)
    fail_msg(
        "%s: counters differ (events %llu/%llu, skipped blocks "
        "%llu/%llu, bytes %llu/%llu)",
        what, (unsigned long long)a->stats.events,
        (unsigned long long)b->stats.events,
        (unsigned long long)a->stats.skipped_blocks,
        (unsigned long long)b->stats.skipped_blocks,
        (unsigned long long)a->stats.bytes, (unsigned long long)b->stats.bytes);
  for (size_t i = 0; i < a->nsessions; i++) {
    const el_ev_scan_session_t *x = &a->sessions[i], *y = &b->sessions[i];
    if (x->header_offset != y->header_offset ||
        x->end_offset != y->end_offset || x->data_end != y->data_end ||
        x->has_wall_clock != y->has_wall_clock ||
        x->anchor_unix_ns != y->anchor_unix_ns ||
        x->wall_t_ns != y->wall_t_ns || x->max_t_ns != y->max_t_ns ||
        x->ncaps != y->ncaps ||
        (x->ncaps && memcmp(x->caps, y->caps, x->ncaps * 2)) ||
        x->has_pid != y->has_pid || x->pid != y->pid ||
        x->has_ppid != y->has_ppid || x->ppid != y->ppid ||
        x->rts_id_len != y->rts_id_len || x->args_len != y->args_len ||
        (!x->rts_id) != (!y->rts_id) || (!x->args) != (!y->args) ||
        (x->rts_id && memcmp(x->rts_id, y->rts_id, x->rts_id_len)) ||
        (x->args && memcmp(x->args, y->args, x->args_len)) ||
        x->has_nocap != y->has_nocap || x->nocap_high != y->nocap_high ||
        x->nocap_last_offset != y->nocap_last_offset ||
        memcmp(x->nocap_types, y->nocap_types, sizeof x->nocap_types))
      fail_msg("%s: session %zu (header at %llu) differs", what, i,
               (unsigned long long)y->header_offset);
  }
}

#define PREFIX 4097 /* bytes before the log: not a page's multiple */

/* el_ev_scan_fd of p[0..n) in a file against el_ev_scan_sessions of the
 * bytes in memory (one feed call), and of p after PREFIX other bytes in a
 * file, scanned from there (a file on stdin read from its middle);
 * returns the bytes the first scan read. */
static uint64_t scan_fd_like_memory(const uint8_t *p, size_t n,
                                    const char *what) {
  int fd = mem_file(p, n);
  el_ev_scan_t a, b;
  uint64_t r0 = bytes_read();
  int arc = el_ev_scan_fd(fd, 0, n, &a);
  uint64_t r1 = bytes_read();
  int brc = el_ev_scan_sessions(p, n, &b);
  same_scan(&a, arc, &b, brc, what);
  el_ev_scan_free(&a);
  close(fd);
  uint8_t *q = malloc(PREFIX + n);
  assert_non_null(q);
  memset(q, 0xAB, PREFIX);
  memcpy(q + PREFIX, p, n);
  fd = mem_file(q, PREFIX + n);
  free(q);
  char w[160];
  snprintf(w, sizeof w, "%s, from byte %d of a file", what, PREFIX);
  arc = el_ev_scan_fd(fd, PREFIX, n, &a);
  same_scan(&a, arc, &b, brc, w);
  el_ev_scan_free(&a);
  el_ev_scan_free(&b);
  close(fd);
  return r0 == UINT64_MAX || r1 == UINT64_MAX ? UINT64_MAX : r1 - r0;
}

/* A file scanned with pread gives what the scan of its bytes in memory
 * gives: recorded logs (blocks of GHC 9.0 and 9.2, a log without blocks),
 * logs cut anywhere, a tee whose first connection ends inside a block
 * (the body's end falls inside the next connection: decoded after all),
 * a block whose declared end is at or just before the end of the first
 * window read (16 KiB) and lies inside an event (decoded after all too),
 * and logs with bytes flipped. threads.eventlog's two 1.3 MB capability bodies are not read:
 * the scan reads less than 1/16 of its 2.8 MB. */
static void test_scan_fd_like_memory(void **st) {
  (void)st;
  static const char *const logs[] = {"ghc-9.0/threads.eventlog",
                                     "ghc-9.0/heapy-hT.eventlog",
                                     "ghc-events/ghc-9.2-events.eventlog",
                                     "ghc-events/hello-ghc-8.2.2.eventlog"};
  for (size_t k = 0; k < sizeof logs / sizeof logs[0]; k++) {
    size_t n = 0;
    uint8_t *p = tu_read_log(logs[k], &n);
    assert_non_null(p);
    uint64_t r = scan_fd_like_memory(p, n, logs[k]);
    if (k == 0 && r != UINT64_MAX && r >= n / 16)
      fail_msg("%s: read %llu of its %zu bytes", logs[k], (unsigned long long)r,
               n);
    char what[96];
    for (size_t x = 1; x < n; x = x * 3 + 1001) {
      snprintf(what, sizeof what, "%s cut at %zu", logs[k], x);
      scan_fd_like_memory(p, x, what);
    }
    free(p);
  }
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-9.0/threads.eventlog", &n);
  uint8_t *tee = malloc(3 * (n + 24));
  size_t tn = 0, cuts[3] = {2000000, n, n}; /* inside cap 1's block */
  for (int k = 0; k < 3; k++) tn += connection(tee + tn, log, n, cuts[k], 1);
  scan_fd_like_memory(tee, tn, "tee cut inside a block");
  /* cap 0's marker at 2688 (test_scan_threads_log): its u32 size, after
   * the 10-byte event header, made to end the block at the end of the
   * first window read (16384), or 1 or 2 bytes before it: the decoder
   * has fewer than 2 bytes of what follows to check in that window. */
  uint8_t *q = malloc(n);
  for (uint32_t end = 16382; end <= 16384; end++) {
    memcpy(q, log, n);
    uint32_t size = end - 2688;
    for (int i = 0; i < 4; i++)
      q[2688 + 10 + i] = (uint8_t)(size >> (24 - 8 * i));
    char what[64];
    snprintf(what, sizeof what, "a block ending at %u, the first window 16384",
             end);
    scan_fd_like_memory(q, n, what);
  }
  free(q);
  free(tee);
  free(log);
  uint8_t *p = tu_read_log("ghc-events/ghc-9.2-events.eventlog", &n);
  q = malloc(n);
  uint64_t seed = 4242;
  for (int round = 0; round < 300; round++) {
    memcpy(q, p, n);
    for (int f = 0; f < 4; f++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      q[(seed >> 33) % n] ^= (uint8_t)(seed >> 13);
    }
    char what[64];
    snprintf(what, sizeof what, "flipped bytes, round %d", round);
    scan_fd_like_memory(q, n, what);
  }
  free(q);
  free(p);
}

/* A file shorter than the length given (it shrank after its size was
 * taken): EL_ESHRUNK naming the first byte missing, as the mapped scan
 * (test_scan_mapped_file_shrinks); a descriptor that cannot be read:
 * -EBADF naming byte 0, nothing found. */
static void test_scan_fd_short_or_unreadable(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-9.0/threads.eventlog", &n);
  const struct {
    size_t keep;
    uint64_t at;
    size_t nsessions;
  } c[] = {{0, 0, 0}, {1338275 - 100, 1338275, 1}, {n - 1, n - 1, 1}};
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    int fd = mem_file(log, c[k].keep);
    el_ev_scan_t s;
    assert_int_equal(el_ev_scan_fd(fd, 0, n, &s), EL_ESHRUNK);
    assert_int_equal(s.status, EL_ESHRUNK);
    assert_int_equal(s.diag.offset, c[k].at);
    assert_int_equal(s.nsessions, c[k].nsessions);
    el_ev_scan_free(&s);
    close(fd);
  }
  char path[] = "/tmp/el_test_scanfdXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, log, n), (ssize_t)n);
  close(fd);
  fd = open(path, O_WRONLY);
  unlink(path);
  assert_true(fd >= 0);
  el_ev_scan_t s;
  assert_int_equal(el_ev_scan_fd(fd, 0, n, &s), -EBADF);
  assert_int_equal(s.status, -EBADF);
  assert_int_equal(s.diag.offset, 0);
  assert_non_null(strstr(s.diag.msg, "cannot read at byte 0"));
  assert_int_equal(s.nsessions, 0);
  el_ev_scan_free(&s);
  close(fd);
  free(log);
}

/* A tee whose cut connection's last block declares an end past the end
 * of the file, followed by a short whole log (h80: eventlog-socket's tee
 * of a program restarted for a short run): the short log's session is
 * found with its clock and init events, as when it is scanned alone; the
 * scan of the file (el_ev_scan_fd) finds the same. Before, the body was
 * skipped to the end of the file, the second header inside it unseen. */
static void test_scan_cut_block_then_short_log(void **st) {
  (void)st;
  size_t n = 0, hn = 0;
  uint8_t *log = tu_read_log("ghc-9.0/threads.eventlog", &n);
  uint8_t *heapy = tu_read_log("ghc-9.0/heapy-hT.eventlog", &hn);
  assert_non_null(log);
  assert_non_null(heapy);
  /* Cut at 2,000,000: inside cap 1's block, which ends at 2,806,555 (see
   * test_scan_threads_log), past the end of the tee (2,062,874). */
  uint8_t *tee = malloc(24 + 2000000 + hn);
  size_t tn = connection(tee, log, n, 2000000, 1);
  memcpy(tee + tn, heapy, hn);
  tn += hn;
  assert_true(24 + 2806555 > tn);
  el_ev_scan_t alone, s;
  assert_int_equal(el_ev_scan_sessions(heapy, hn, &alone), 0);
  assert_int_equal(alone.nsessions, 1);
  el_ev_scan_sessions(tee, tn, &s);
  assert_int_equal(s.nsessions, 2);
  assert_int_equal(s.sessions[1].header_offset, 24 + 2000000);
  const el_ev_scan_session_t *x = &s.sessions[1], *y = &alone.sessions[0];
  assert_true(x->has_wall_clock);
  assert_int_equal(x->anchor_unix_ns, y->anchor_unix_ns);
  assert_int_equal(x->max_t_ns, y->max_t_ns);
  assert_int_equal(x->ncaps, y->ncaps);
  assert_true(x->has_pid);
  assert_int_equal(x->pid, y->pid);
  assert_int_equal(x->args_len, y->args_len);
  assert_memory_equal(x->args, y->args, y->args_len);
  assert_int_equal(x->end_offset, tn);
  el_ev_scan_free(&s);
  el_ev_scan_free(&alone);
  scan_fd_like_memory(tee, tn, "a cut block past the end, then a short log");
  free(tee);
  free(heapy);
  free(log);
}

/* Saturation: a wall clock too large for int64 ns, and one smaller than
 * its own timestamp. */
static void test_scan_anchor_saturates(void **st) {
  (void)st;
  static const struct {
    uint64_t sec, nsec, t;
    int64_t want;
  } c[] = {
      {UINT64_MAX, 999999999, 0, INT64_MAX},
      {9223372036ull, 854775807ull, 0, INT64_MAX}, /* exactly INT64_MAX */
      {9223372036ull, 854775808ull, 0, INT64_MAX}, /* one more */
      {0, 0, UINT64_MAX, INT64_MIN},
      {1, 5, 1000000010ull, -5},
      {1700000000ull, 123, 1000, 1700000000000000000LL + 123 - 1000},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    tu_buf_t b;
    b.n = 0;
    tu_hdr_begin(&b);
    tu_decl(&b, 43, 16, "Wall clock time");
    tu_hdr_end(&b);
    tu_ev(&b, 43, c[k].t);
    tu_u32(&b, 1);
    tu_u64(&b, c[k].sec);
    tu_u32(&b, (uint32_t)c[k].nsec);
    tu_u16(&b, 0xFFFF);
    el_ev_scan_t s;
    assert_int_equal(el_ev_scan_sessions(b.b, b.n, &s), 0);
    assert_int_equal(s.nsessions, 1);
    assert_true(s.sessions[0].has_wall_clock);
    if (s.sessions[0].anchor_unix_ns != c[k].want)
      fail_msg("case %zu: anchor %lld, expected %lld", k,
               (long long)s.sessions[0].anchor_unix_ns, (long long)c[k].want);
    assert_int_equal(s.sessions[0].max_t_ns, c[k].t);
    el_ev_scan_free(&s);
  }
}

/* Skipping capability blocks delivers their markers but none of their
 * events; the global block's events all arrive; a fed-whole buffer and a
 * byte-at-a-time one agree when no block is cut. */
static void test_skip_cap_blocks_option(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/ghc-9.2-events.eventlog", &n);
  rec_t all, skip, bytewise;
  decode(p, n, 0, 0, &all);
  decode(p, n, 0, EL_EV_OPT_SKIP_CAP_BLOCKS, &skip);
  decode(p, n, 1, EL_EV_OPT_SKIP_CAP_BLOCKS, &bytewise);
  size_t want = 0;
  for (size_t i = 0; i < all.nev; i++)
    if (all.ev[i].cap == EL_EV_NO_CAP || all.ev[i].type == 18)
      want++;
  assert_int_equal(skip.nev, want);
  assert_true(skip.nev < all.nev);
  size_t j = 0;
  for (size_t i = 0; i < all.nev; i++)
    if (all.ev[i].cap == EL_EV_NO_CAP || all.ev[i].type == 18) {
      assert_int_equal(skip.ev[j].offset, all.ev[i].offset);
      assert_int_equal(skip.ev[j].h, all.ev[i].h);
      j++;
    }
  assert_int_equal(bytewise.nev, skip.nev);
  same_events(bytewise.ev, &skip, 0, "skip, byte at a time");
  assert_int_equal(skip.finish_rc, 0);
  assert_int_equal(skip.nwarn, 0);
  rec_free(&all);
  rec_free(&skip);
  rec_free(&bytewise);
  free(p);
}

/* {====== a later header damaged or cut ======} */

/* The events of r are those of ref, the ones from session 2 on (of ref)
 * at offsets shifted by delta; ref's sessions from drop_sess on (0:
 * none) are not in r. */
static void same_but_shifted(const rec_t *r, const rec_t *ref, uint64_t delta,
                             const char *what) {
  size_t j = 0;
  for (size_t i = 0; i < ref->nev; i++) {
    const rev_t *y = &ref->ev[i];
    if (j >= r->nev)
      fail_msg("%s: %zu events, expected %zu", what, r->nev, ref->nev);
    const rev_t *x = &r->ev[j++];
    uint64_t want = y->offset + (y->session >= 2 ? delta : 0);
    if (x->offset != want || x->type != y->type || x->t != y->t ||
        x->cap != y->cap || x->h != y->h)
      fail_msg("%s: event %zu differs: offset %llu, expected %llu", what, i,
               (unsigned long long)x->offset, (unsigned long long)want);
  }
  if (r->nev != ref->nev)
    fail_msg("%s: %zu events, expected %zu", what, r->nev, ref->nev);
}

/* The one warning of r with a code: EL_ECORRUPT at offset off, its
 * message holding want; every other warning has none. */
static void one_corrupt_part(const rec_t *r, uint64_t off, const char *want,
                             const char *what) {
  unsigned k = 0;
  for (unsigned w = 0; w < r->nwarn && w < 64; w++) {
    if (!r->warn[w].code) continue;
    k++;
    if (r->warn[w].code != EL_ECORRUPT || r->warn[w].offset != off ||
        !strstr(r->warn[w].msg, want))
      fail_msg(
          "%s: warning (code %d) at %llu: '%s'; expected EL_ECORRUPT at "
          "%llu with '%s'",
          what, r->warn[w].code, (unsigned long long)r->warn[w].offset,
          r->warn[w].msg, (unsigned long long)off, want);
  }
  if (k != 1) fail_msg("%s: %u warnings with a code, expected 1", what, k);
  if (r->feed_rc || r->finish_rc)
    fail_msg(
        "%s: feed %d, finish %d, expected 0 (a corrupt part is a "
        "warning)",
        what, r->feed_rc, r->finish_rc);
  if (r->st.corrupt_parts != 1)
    fail_msg("%s: %llu corrupt parts", what,
             (unsigned long long)r->st.corrupt_parts);
}

/* Decode p[0..n) at once, in 7-byte and 4096-byte chunks, byte at a time,
 * live at once and live split at split, and as TCP reads: each into
 * r[0..6) (the TCP reads checked here against "at once"). */
#define NWAYS 6
static const char *const ways[NWAYS] = {"at once",          "7-byte chunks",
                                        "4096-byte chunks", "byte at a time",
                                        "live, at once",    "live, split"};
static void decode_ways(const uint8_t *p, size_t n, size_t split,
                        rec_t r[NWAYS]) {
  decode(p, n, 0, 0, &r[0]);
  decode(p, n, 7, 0, &r[1]);
  decode(p, n, 4096, 0, &r[2]);
  decode(p, n, 1, 0, &r[3]);
  decode(p, n, 0, EL_EV_OPT_LIVE, &r[4]);
  decode_split(p, n, split, EL_EV_OPT_LIVE, &r[5]);
  tcp_reads(p, n, 0, 3, "TCP reads");
  tcp_reads(p, n, EL_EV_OPT_LIVE, 3, "TCP reads, live");
}

/* A later header with bytes inserted between its "hete" (the end of the
 * type list) and "hdre" "datb", or with "hdre" overwritten or lost (wholly
 * or in part: the data's first bytes then among the 8 read for "hdre"
 * "datb"): before, the
 * whole session was lost ("malformed header: missing header end or data
 * begin marker", an error, then every byte to the end skipped). Now the
 * data begin marker is found after them: those bytes are a corrupt part
 * (a warning naming them) and the session is decoded. Expected: the two
 * copies of the log joined without damage, decoded (the second session's
 * offsets moved by the bytes inserted); the byte offsets computed here
 * from the log's bytes. The first header alike. */
static void test_later_header_bytes_inserted(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-events/hello-ghc-8.2.2.eventlog", &n);
  assert_non_null(log);
  size_t he = header_len(log, n) - 8; /* where "hdre" begins */
  uint8_t *buf = malloc(2 * n + 200);
  memcpy(buf, log, n);
  memcpy(buf + n, log, n);
  rec_t ref;
  decode(buf, 2 * n, 0, 0, &ref);
  assert_int_equal(ref.nhdr, 2);
  assert_int_equal(ref.finish_rc, 0);
  assert_int_equal(ref.st.corrupt_parts, 0);
  const size_t ks[] = {1, 8, 100};
  for (int v = 0; v < 6; v++) {
    /* v 0-2: ks[v] bytes inserted; 3: "hdre" overwritten; 4: "hdre"
     * lost (4 bytes fewer); 5: its last 2 bytes lost ("hd" then "datb") */
    size_t k = v < 3 ? ks[v] : 0, at = n + he;
    size_t del = v == 4 ? 4 : v == 5 ? 2 : 0, len = 2 * n + k - del;
    uint64_t shift = (uint64_t)k - del, skipped = v == 3 ? 4 : v == 5 ? 2 : k;
    char want[160], what[192];
    memcpy(buf + n, log, he);
    memset(buf + at, 0, k); /* no "datb" in them */
    memcpy(buf + at + k, log + he, n - he);
    if (v == 3) /* "hdre" overwritten: 4 bytes lost, none inserted */
      memcpy(buf + at, "XXXX", 4);
    if (del == 4) memcpy(buf + at, log + he + 4, n - he - 4);
    if (del == 2) {
      memcpy(buf + at, "hd", 2);
      memcpy(buf + at + 2, log + he + 4, n - he - 4);
    }
    if (v == 4)
      snprintf(want, sizeof want,
               "no header end marker before the data begin marker at byte "
               "%zu, after the end of the type list (bytes lost?); nothing "
               "skipped",
               at);
    else if (v >= 3)
      snprintf(want, sizeof want,
               "skipped %llu bytes (%zu to %llu) to the data begin marker at "
               "byte %llu",
               (unsigned long long)skipped, at,
               (unsigned long long)(at + skipped),
               (unsigned long long)(at + skipped));
    else
      snprintf(want, sizeof want,
               "skipped %zu byte%s (%zu to %zu) to the header end marker at "
               "byte %zu",
               k, k == 1 ? "" : "s", at, at + k, at + k);
    rec_t r[NWAYS];
    decode_ways(buf, len, at + 3, r);
    for (int w = 0; w < NWAYS; w++) {
      snprintf(what, sizeof what,
               "variant %d (%zu bytes inserted, %zu lost), %s", v, k, del,
               ways[w]);
      assert_int_equal(r[w].nhdr, 2);
      same_but_shifted(&r[w], &ref, shift, what);
      one_corrupt_part(&r[w], at, want, what);
      assert_int_equal(r[w].st.corrupt_bytes, skipped);
      rec_free(&r[w]);
    }
  }
  /* The first header: 8 bytes inserted, the log decoded all the same. */
  rec_t one;
  decode(log, n, 0, 0, &one);
  memcpy(buf, log, he);
  memset(buf + he, 0, 8);
  memcpy(buf + he + 8, log + he, n - he);
  rec_t r;
  decode(buf, n + 8, 0, 0, &r);
  for (size_t i = 0; i < one.nev; i++)
    one.ev[i].session = 2; /* (all shifted) */
  same_but_shifted(&r, &one, 8, "first header, 8 bytes inserted");
  one_corrupt_part(&r, he, "skipped 8 bytes", "first header");
  rec_free(&r);
  rec_free(&one);
  rec_free(&ref);
  free(buf);
  free(log);
}

/* A later header that cannot be read (its data begin marker damaged and
 * none in the 1024 bytes after): the header and its session, up to the
 * next header or the end of the input or connection, are one corrupt
 * part, a warning naming its bytes; the next session is decoded; no
 * error (before: EL_EBADHDR from feed, an error in every command, then
 * "ignored N bytes ... after a corrupt part"). The first header so
 * damaged is still an error (no session began). Expected: the log
 * decoded alone, its offsets moved by where each copy begins. */
static void test_later_header_unreadable(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-events/hello-ghc-8.2.2.eventlog", &n);
  assert_non_null(log);
  size_t hl = header_len(log, n);
  uint8_t *buf = malloc(3 * n);
  memcpy(buf, log, n);
  memcpy(buf + n, log, n);
  memcpy(buf + 2 * n, log, n);
  memcpy(buf + n + hl - 4, "XXXX", 4); /* the second header's "datb" */
  rec_t one;
  decode(log, n, 0, 0, &one);
  assert_int_equal(one.finish_rc, 0);
  char want[192], what[192];
  /* log, damaged log, log: sessions 1 and 3 (delivered as the 2nd). */
  rec_t r[NWAYS];
  snprintf(want, sizeof want,
           "skipped %zu bytes (%zu to %zu), the header and its session, to "
           "the header at byte %zu",
           n, n, 2 * n, 2 * n);
  decode_ways(buf, 3 * n, n + hl + 5, r);
  for (int w = 0; w < NWAYS; w++) {
    snprintf(what, sizeof what, "log, damaged, log: %s", ways[w]);
    assert_int_equal(r[w].nhdr, 2);
    assert_int_equal(r[w].hdr_off[1], 2 * n);
    assert_int_equal(r[w].nev, 2 * one.nev);
    same_events(r[w].ev, &one, 0, what);
    same_events(r[w].ev + one.nev, &one, 2 * n, what);
    one_corrupt_part(&r[w], n, want, what);
    assert_int_equal(r[w].st.corrupt_bytes, n);
    rec_free(&r[w]);
  }
  /* log, damaged log: to the end of the input. */
  snprintf(want, sizeof want,
           "skipped %zu bytes (%zu to %zu), the header and its session, to "
           "the end of the input",
           n, n, 2 * n);
  decode_ways(buf, 2 * n, n + hl + 5, r);
  for (int w = 0; w < NWAYS; w++) {
    snprintf(what, sizeof what, "log, damaged: %s", ways[w]);
    assert_int_equal(r[w].nhdr, 1);
    assert_int_equal(r[w].nev, one.nev);
    same_events(r[w].ev, &one, 0, what);
    one_corrupt_part(&r[w], n, want, what);
    rec_free(&r[w]);
  }
  /* The connection ends (a socket's): to the end of the connection. */
  rec_t c;
  el_ev_decoder_t *d = recorder_new(&c, 0);
  recorder_feed(d, &c, buf, 2 * n);
  el_ev_decoder_reset(d);
  recorder_end(d, &c);
  snprintf(want, sizeof want,
           "(%zu to %zu), the header and its session, to "
           "the end of the connection",
           n, 2 * n);
  one_corrupt_part(&c, n, want, "a connection");
  rec_free(&c);
  /* The first header so damaged: an error, as before. */
  rec_t f;
  decode(buf + n, n, 0, 0, &f);
  assert_int_equal(f.feed_rc, EL_EBADHDR);
  assert_int_equal(f.nhdr, 0);
  rec_free(&f);
  rec_free(&one);
  free(buf);
  free(log);
}

/* A complete log, then a second header cut short (`cat a.eventlog; head
 * -c X a.eventlog`: the next program killed while it wrote its header):
 * EL_ETRUNC with cut_event and header set, as a log cut inside its last
 * event is, which every command takes as a cut (a warning, status 0:
 * docs/exit-codes.md), not as a header error (before: cut_event 0, said
 * as an error by some commands and a warning by others). The first
 * header cut short stays a header error (cut_event 0). Expected: the
 * log decoded alone; the byte where the input ends, n + x. */
static void test_later_header_cut(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *log = tu_read_log("ghc-events/hello-ghc-8.2.2.eventlog", &n);
  assert_non_null(log);
  size_t hl = header_len(log, n);
  uint8_t *buf = malloc(2 * n);
  memcpy(buf, log, n);
  memcpy(buf + n, log, n);
  rec_t one;
  decode(log, n, 0, 0, &one);
  const size_t xs[] = {8, 12, 100, hl - 12, hl - 8, hl - 1};
  for (int k = 0; k < 6; k++) {
    size_t x = xs[k];
    char want[128], what[160];
    snprintf(want, sizeof want,
             "eventlog truncated inside the header at byte %zu (a later "
             "header, from byte %zu",
             n + x, n);
    rec_t r[NWAYS];
    decode_ways(buf, n + x, n + x / 2, r);
    for (int w = 0; w < NWAYS; w++) {
      snprintf(what, sizeof what, "cut at %zu of the second header, %s", x,
               ways[w]);
      assert_int_equal(r[w].nhdr, 1);
      assert_int_equal(r[w].nev, one.nev);
      same_events(r[w].ev, &one, 0, what);
      if (r[w].feed_rc || r[w].finish_rc != EL_ETRUNC || !r[w].diag.cut_event ||
          !r[w].diag.header || r[w].diag.offset != n + x ||
          !strstr(r[w].diag.msg, want))
        fail_msg(
            "%s: feed %d, finish %d, cut_event %d, header %d, at %llu: "
            "'%s'",
            what, r[w].feed_rc, r[w].finish_rc, r[w].diag.cut_event,
            r[w].diag.header, (unsigned long long)r[w].diag.offset,
            r[w].diag.msg);
      rec_free(&r[w]);
    }
  }
  rec_t f;
  decode(log, 100, 0, 0, &f);
  assert_int_equal(f.finish_rc, EL_ETRUNC);
  assert_int_equal(f.diag.header, 1);
  assert_int_equal(f.diag.cut_event, 0);
  rec_free(&f);
  rec_free(&one);
  free(buf);
  free(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stray_marker_is_expected),
      cmocka_unit_test(test_tee_of_three_connections),
      cmocka_unit_test(test_tee_cut_at_every_byte),
      cmocka_unit_test(test_tee_split_at_every_byte),
      cmocka_unit_test(test_sessions_without_cut),
      cmocka_unit_test(test_joined_logs_like_stray_pattern),
      cmocka_unit_test(test_live_option_does_not_hold_events),
      cmocka_unit_test(test_joined_logs_cut_at_every_byte),
      cmocka_unit_test(test_streams_in_tcp_reads),
      cmocka_unit_test(test_duplicate_declarations),
      cmocka_unit_test(test_malformed_variable_events),
      cmocka_unit_test(test_malformed_with_fields_mask),
      cmocka_unit_test(test_wellformed_variable_events),
      cmocka_unit_test(test_scan_threads_log),
      cmocka_unit_test(test_scan_tee),
      cmocka_unit_test(test_scan_damaged_input),
      cmocka_unit_test(test_scan_anchor_saturates),
      cmocka_unit_test(test_scan_mapped_file_shrinks),
      cmocka_unit_test(test_scan_fd_like_memory),
      cmocka_unit_test(test_scan_fd_short_or_unreadable),
      cmocka_unit_test(test_scan_cut_block_then_short_log),
      cmocka_unit_test(test_skip_cap_blocks_option),
      cmocka_unit_test(test_later_header_bytes_inserted),
      cmocka_unit_test(test_later_header_unreadable),
      cmocka_unit_test(test_later_header_cut),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
