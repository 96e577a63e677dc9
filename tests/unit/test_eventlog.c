/* test_eventlog.c: the decoder (src/eventlog) against hand-made streams
 * whose expected values are computed by hand from spec/eventlog-format.md,
 * and against the shared real logs (chunking invariance, sessions, stale
 * bytes, allocation). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_eventlog_util.h"

/* {====== type table ======} */

static void test_type_table_names_and_fields(void **st) {
  (void)st;
  const el_ev_type_info_t *t = el_ev_type_info(1);
  assert_non_null(t);
  assert_string_equal(t->name, "RUN_THREAD");
  assert_int_equal(t->nfields, 1);
  assert_string_equal(t->fields[0].name, "thread");
  assert_int_equal(el_ev_type_by_name("RUN_THREAD"), 1);
  assert_int_equal(el_ev_type_by_name("EVENT_HEAP_SIZE"), 50);
  assert_int_equal(el_ev_type_by_name("NO_SUCH_EVENT"), -1);
  assert_int_equal(el_ev_field_index(50, "heap_capset"), 0);
  assert_int_equal(el_ev_field_index(50, "size_bytes"), 1);
  assert_int_equal(el_ev_field_index(2, "status"), 1);
  assert_int_equal(el_ev_field_index(2, "info"), 2);
  assert_int_equal(el_ev_field_index(53, "par_balanced_copied"), 8);
  assert_int_equal(el_ev_field_index(43, "nsec"), 2);
  assert_int_equal(el_ev_field_index(1, "nope"), -1);
  assert_null(el_ev_type_info(70));
  assert_null(el_ev_type_info(209));
  assert_null(el_ev_type_info(1000));
  /* Every GHC id the spec lists is known. */
  static const uint16_t ids[] = {0,   1,   2,   3,   4,   8,   9,   10,
                                 15,  16,  18,  19,  25,  29,  30,  31,
                                 34,  42,  43,  44,  49,  52,  53,  55,
                                 58,  60,  69,  90,  91,  100, 113, 140,
                                 142, 160, 163, 167, 169, 181, 200, 207,
                                 208, 210, 211, 212};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
    assert_non_null(el_ev_type_info(ids[i]));
  t = el_ev_type_info(163);
  assert_int_equal(t->fields[3].kind, EL_EV_CCS);
  assert_int_equal(el_ev_type_info(181)->fields[0].kind, EL_EV_BYTES);
  assert_int_equal(el_ev_type_info(30)->fields[1].kind, EL_EV_STRLIST);
  assert_int_equal(el_ev_type_info(19)->fields[0].kind, EL_EV_TEXT);
}

/* The table holds its names in fixed-size rows (ev_types.c: 32 bytes a
 * type name, 24 a field name): every name comes out whole and ends where
 * it should. The longest of each, by hand from the spec's table (§2.1):
 * MER_LOOKING_FOR_GLOBAL_CONTEXT (30 characters), par_balanced_copied
 * (19). An unterminated name would run into the row's next bytes. */
static void test_type_table_names_fit_their_rows(void **st) {
  (void)st;
  assert_string_equal(el_ev_type_info(108)->name,
                      "MER_LOOKING_FOR_GLOBAL_CONTEXT");
  assert_string_equal(el_ev_type_info(53)->fields[8].name,
                      "par_balanced_copied");
  size_t known = 0;
  for (unsigned id = 0; id < 65536; id++) {
    const el_ev_type_info_t *t = el_ev_type_info((uint16_t)id);
    if (!t) continue;
    known++;
    size_t n = strlen(t->name);
    assert_true(n >= 1 && n <= 30);
    assert_int_equal(strspn(t->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
                     n);
    assert_int_equal(el_ev_type_by_name(t->name), (int)id);
    for (unsigned k = 0; k < t->nfields; k++) {
      size_t m = strlen(t->fields[k].name);
      assert_true(m >= 1 && m <= 19);
      assert_int_equal(
          strspn(t->fields[k].name, "abcdefghijklmnopqrstuvwxyz0123456789_"),
          m);
      assert_int_equal(el_ev_field_index((uint16_t)id, t->fields[k].name),
                       (int)k);
    }
  }
  assert_true(known >= 44); /* the spec's ids listed above */
}

/* The id enum comes from the same table as the type infos: every
 * EL_EV_<NAME> names its own type (ids from spec §2.1 by hand). */
static void test_type_enum_matches_table(void **st) {
  (void)st;
  assert_int_equal(EL_EV_CREATE_THREAD, 0);
  assert_int_equal(EL_EV_RUN_THREAD, 1);
  assert_int_equal(EL_EV_BLOCK_MARKER, 18);
  assert_int_equal(EL_EV_WALL_CLOCK_TIME, 43);
  assert_int_equal(EL_EV_HEAP_PROF_SAMPLE_STRING, 164);
  assert_int_equal(EL_EV_TICKY_COUNTER_BEGIN_SAMPLE, 212);
#define CHECK_ID(i, nm, fields)    \
  assert_int_equal(EL_EV_##nm, i); \
  assert_string_equal(el_ev_type_info(EL_EV_##nm)->name, #nm);
#define SKIP_OLDER(i, nm, variant, fields)
  EL_EV_TYPE_TABLE(CHECK_ID, SKIP_OLDER)
#undef CHECK_ID
#undef SKIP_OLDER
}

/* STOP_THREAD status names (spec §2.2, ghc-events' constructors) and
 * heap profile breakdown flags (§2.5). */
static void test_payload_code_names(void **st) {
  (void)st;
  char buf[64];
  assert_int_equal(el_ev_stop_status_name(3, 0, buf, sizeof buf), 14);
  assert_string_equal(buf, "ThreadYielding");
  el_ev_stop_status_name(20, 7, buf, sizeof buf);
  assert_string_equal(buf, "BlockedOnMVarRead");
  el_ev_stop_status_name(99, 0, buf, sizeof buf);
  assert_string_equal(buf, "NoStatus");
  el_ev_stop_status_name(EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE, 42, buf,
                         sizeof buf);
  assert_string_equal(buf, "BlockedOnBlackHoleOwnedBy 42");
  /* info 0: the RTS knew no owner (spec §2.2); no thread 0 is named */
  assert_int_equal(el_ev_stop_status_name(EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE, 0,
                                          buf, sizeof buf),
                   18);
  assert_string_equal(buf, "BlockedOnBlackHole");
  assert_int_equal(el_ev_stop_status_name(7, 0, buf, 6), 13); /* cut */
  assert_string_equal(buf, "Block");
  assert_int_equal(el_ev_stop_status_name(7, 0, NULL, 0), 13);
  assert_string_equal(el_ev_breakdown_flag(7), "-hT");
  assert_string_equal(el_ev_breakdown_flag(1), "-hc");
  assert_null(el_ev_breakdown_flag(0));
  assert_null(el_ev_breakdown_flag(10));
}

/* {====== hand-made stream ======} */

typedef struct {
  el_ev_event_t ev;
  uint8_t payload[64];
  char s[EL_EV_MAX_FIELDS][64];
  size_t slen[EL_EV_MAX_FIELDS];
  uint64_t unix_ns;
} rec_t;

typedef struct {
  rec_t r[64];
  int n;
  int headers, data_ends;
  el_ev_decoder_t *d;
} recorder_t;

static int rec_event(void *ud, const el_ev_event_t *e) {
  recorder_t *R = ud;
  if (R->n == 64)
    return 0;
  rec_t *r = &R->r[R->n++];
  r->ev = *e;
  memcpy(r->payload, e->payload, e->payload_len < 64 ? e->payload_len : 64);
  for (unsigned i = 0; i < e->nfields; i++) {
    size_t n = e->v[i].s.len < 63 ? e->v[i].s.len : 63;
    const el_ev_type_info_t *t = el_ev_type_info(e->type);
    if (t && t->fields[i].kind != EL_EV_U64 && n)
      memcpy(r->s[i], e->v[i].s.p, n);
    r->slen[i] = t && t->fields[i].kind != EL_EV_U64 ? e->v[i].s.len : 0;
  }
  r->unix_ns = el_ev_decoder_unix_ns(R->d, 1500);
  return 0;
}
static int rec_header(void *ud, const el_ev_header_t *h) {
  ((recorder_t *)ud)->headers++;
  return 0;
}
static void rec_data_end(void *ud, uint64_t off) {
  ((recorder_t *)ud)->data_ends++;
}

static size_t g_hdr_len; /* header length of build_stream's output */

static void build_stream(tu_buf_t *b) {
  b->n = 0;
  tu_hdr_begin(b);
  tu_decl(b, 1, 4, "Run thread");
  tu_decl(b, 2, 10, "Stop thread");
  tu_decl(b, 18, 14, "Block marker");
  tu_decl(b, 19, 0xFFFF, "User message");
  tu_decl(b, 50, 14, "Heap size, extended");
  tu_decl(b, 250, 3, "Future event");
  tu_decl(b, 53, 50, "GC statistics");
  tu_decl(b, 43, 16, "Wall clock time");
  tu_decl(b, 169, 0xFFFF, "IPE");
  tu_decl(b, 30, 0xFFFF, "Program arguments");
  tu_decl(b, 207, 13, "Nonmoving heap census");
  tu_hdr_end(b);
  g_hdr_len = b->n;
  /* E1 block marker: covers itself (24) and the RUN_THREAD (14). */
  tu_ev(b, 18, 100);
  tu_u32(b, 38);
  tu_u64(b, 500);
  tu_u16(b, 3);
  tu_ev(b, 1, 110); /* E2 */
  tu_u32(b, 7);
  tu_ev(b, 2, 120); /* E3, outside the block */
  tu_u32(b, 7);
  tu_u16(b, 2);
  tu_u32(b, 4242);
  tu_ev(b, 19, 130); /* E4 */
  tu_u16(b, 6);
  tu_str(b, "h\xc3\xa9llo");
  tu_ev(b, 50, 140); /* E5: 2 bytes more than known */
  tu_u32(b, 0);
  tu_u64(b, 0x0102030405060708ull);
  tu_u16(b, 0xBEEF);
  tu_ev(b, 250, 150); /* E6: declared, unknown */
  tu_bytes(b, "xyz", 3);
  tu_ev(b, 53, 160); /* E7: 50-byte GC stats */
  tu_u32(b, 1);
  tu_u16(b, 1);
  for (int i = 2; i <= 4; i++)
    tu_u64(b, (uint64_t)i);
  tu_u32(b, 5);
  tu_u64(b, 6);
  tu_u64(b, 7);
  tu_ev(b, 43, 1000); /* E8 */
  tu_u32(b, 1);
  tu_u64(b, 1700000000ull);
  tu_u32(b, 5);
  tu_ev(b, 169, 1100); /* E9: IPE whose size misses its last NUL */
  tu_u16(b, 22);
  tu_u64(b, 0x409f78);
  tu_bytes(b, "a\0" "21\0" "t\0" "l\0" "m\0" "f:1\0", 15);
  tu_ev(b, 30, 1200); /* E10 */
  tu_u16(b, 9);
  tu_u32(b, 0);
  tu_bytes(b, "a\0bb\0", 5);
  tu_ev(b, 207, 1300); /* E11 */
  tu_u8(b, 3);
  tu_u32(b, 10);
  tu_u32(b, 20);
  tu_u32(b, 30);
  tu_u16(b, 0xFFFF);
}

static void decode_recorded_opts(recorder_t *R, const uint8_t *p, size_t n,
                                 size_t chunk, unsigned opts) {
  memset(R, 0, sizeof *R);
  el_ev_sink_t s = {.ud = R, .on_event = rec_event,
                    .on_header = rec_header, .on_data_end = rec_data_end};
  R->d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_set_opts(R->d, opts), 0);
  assert_int_equal(tu_feed_chunks(R->d, p, n, chunk), 0);
}

static void decode_recorded(recorder_t *R, const uint8_t *p, size_t n,
                            size_t chunk) {
  decode_recorded_opts(R, p, n, chunk, 0);
}

static void check_recorded(recorder_t *R) {
  assert_int_equal(R->headers, 1);
  assert_int_equal(R->data_ends, 1);
  assert_int_equal(R->n, 11);
  rec_t *r = R->r;
  /* E1: marker, own block's capability. */
  assert_int_equal(r[0].ev.type, 18);
  assert_int_equal(r[0].ev.offset, g_hdr_len);
  assert_int_equal(r[0].ev.cap, 3);
  assert_int_equal(r[0].ev.v[0].u, 38);
  assert_int_equal(r[0].ev.v[1].u, 500);
  /* E2: inside the block. */
  assert_int_equal(r[1].ev.type, 1);
  assert_int_equal(r[1].ev.cap, 3);
  assert_int_equal(r[1].ev.t_ns, 110);
  assert_int_equal(r[1].ev.v[0].u, 7);
  assert_int_equal(r[1].ev.offset, g_hdr_len + 24);
  /* E3: starts exactly at the block end: no capability. */
  assert_int_equal(r[2].ev.cap, EL_EV_NO_CAP);
  assert_int_equal(r[2].ev.v[1].u, 2);
  assert_int_equal(r[2].ev.v[2].u, 4242);
  assert_int_equal(r[2].ev.layout, 0);
  /* E4: text view, invalid-or-not bytes kept. */
  assert_int_equal(r[3].slen[0], 6);
  assert_memory_equal(r[3].s[0], "h\xc3\xa9llo", 6);
  /* E5: longer than known: prefix decoded. */
  assert_true(r[4].ev.known);
  assert_int_equal(r[4].ev.v[1].u, 0x0102030405060708ull);
  assert_int_equal(r[4].ev.payload_len, 14);
  /* E6: unknown, raw payload. */
  assert_false(r[5].ev.known);
  assert_int_equal(r[5].ev.payload_len, 3);
  assert_memory_equal(r[5].payload, "xyz", 3);
  /* E7: 50-byte GC stats = older layout. */
  assert_true(r[6].ev.known);
  assert_int_equal(r[6].ev.layout, 1);
  assert_int_equal(r[6].ev.v[5].u, 5);
  assert_int_equal(r[6].ev.v[7].u, 7);
  assert_int_equal(r[6].ev.v[8].u, 0);
  /* E8: wall clock; unix_ns(1500) = sec*1e9 + nsec + (1500 - 1000). */
  assert_int_equal(r[7].unix_ns, 1700000000ull * 1000000000ull + 5 + 500);
  assert_int_equal(r[6].unix_ns, 0); /* before WALL_CLOCK_TIME */
  /* E9: IPE with the off-by-one (GHC #24287) and the event after it. */
  assert_int_equal(r[8].ev.type, 169);
  assert_true(r[8].ev.known);
  assert_int_equal(r[8].ev.payload_len, 23);
  assert_int_equal(r[8].ev.v[0].u, 0x409f78);
  assert_memory_equal(r[8].s[2], "21", 2);
  assert_int_equal(r[8].slen[6], 3);
  assert_memory_equal(r[8].s[6], "f:1", 3);
  /* E10: strlist view including the NULs. */
  assert_int_equal(r[9].ev.type, 30);
  assert_int_equal(r[9].slen[1], 5);
  assert_memory_equal(r[9].s[1], "a\0bb\0", 5);
  /* E11: 13-byte census: block size is 2^3. */
  assert_int_equal(r[10].ev.layout, 1);
  assert_int_equal(r[10].ev.v[0].u, 8);
  assert_int_equal(r[10].ev.v[3].u, 30);
  assert_int_equal(r[10].ev.cap, EL_EV_NO_CAP);
}

static void test_handmade_stream_fields(void **st) {
  (void)st;
  static tu_buf_t b;
  build_stream(&b);
  static recorder_t R;
  decode_recorded(&R, b.b, b.n, b.n);
  check_recorded(&R);
  el_ev_decoder_free(R.d);
  for (size_t chunk = 1; chunk < 40; chunk++) {
    decode_recorded(&R, b.b, b.n, chunk);
    check_recorded(&R);
    el_ev_decoder_free(R.d);
  }
}

/* EL_EV_OPT_NO_FIELDS: the fixed-size integer events (RUN_THREAD E2,
 * STOP_THREAD E3, the 13-byte census E11) come without fields, everything
 * else as without the option; type, time, offset, capability and payload
 * are those build_stream wrote, however the input is cut. */
/* E2 of build_stream as the decoder delivers it whatever its fields:
 * type 1 on capability 3 at 110 ns, the 4-byte payload 7 right after the
 * header and the first block marker (24 bytes). */
static void check_e2_header(const rec_t *r) {
  assert_int_equal(r->ev.type, 1);
  assert_int_equal(r->ev.cap, 3);
  assert_int_equal(r->ev.t_ns, 110);
  assert_int_equal(r->ev.offset, g_hdr_len + 24);
  assert_int_equal(r->ev.payload_len, 4);
  assert_memory_equal(r->payload, "\0\0\0\7", 4);
  assert_true(r->ev.known);
}

static void test_no_fields_option(void **st) {
  (void)st;
  static tu_buf_t b;
  build_stream(&b);
  static recorder_t R;
  for (size_t chunk = 1; chunk <= b.n; chunk += chunk < 40 ? 1 : b.n) {
    decode_recorded_opts(&R, b.b, b.n, chunk, EL_EV_OPT_NO_FIELDS);
    rec_t *r = R.r;
    assert_int_equal(R.n, 11);
    check_e2_header(&r[1]);
    assert_int_equal(r[1].ev.nfields, 0);
    assert_int_equal(r[2].ev.type, 2); /* E3 */
    assert_int_equal(r[2].ev.cap, EL_EV_NO_CAP);
    assert_int_equal(r[2].ev.t_ns, 120);
    assert_int_equal(r[2].ev.nfields, 0);
    assert_int_equal(r[10].ev.nfields, 0); /* E11 */
    assert_int_equal(r[10].ev.payload_len, 13);
    /* The block marker, text, variable-size, unknown and wall clock
     * events keep their fields. */
    assert_int_equal(r[0].ev.v[0].u, 38);
    assert_int_equal(r[0].ev.cap, 3);
    assert_int_equal(r[3].slen[0], 6);
    assert_false(r[5].ev.known);
    assert_int_equal(r[7].unix_ns, 1700000000ull * 1000000000ull + 5 + 500);
    assert_int_equal(r[9].slen[1], 5);
    assert_int_equal(el_ev_decoder_opts(R.d), EL_EV_OPT_NO_FIELDS);
    el_ev_decoder_free(R.d);
  }
}

/* {====== fields wanted per type (el_ev_decoder_set_fields) ======} */

/* decode_recorded with the fields of types off[] not wanted (-1: every
 * type), then those of types on[] wanted again, before the first feed. */
static void decode_masked(recorder_t *R, const uint8_t *p, size_t n,
                          size_t chunk, const int *off, size_t noff,
                          const int *on, size_t non) {
  memset(R, 0, sizeof *R);
  el_ev_sink_t s = {.ud = R,
                    .on_event = rec_event,
                    .on_header = rec_header,
                    .on_data_end = rec_data_end};
  R->d = el_ev_decoder_new(&s);
  for (size_t i = 0; i < noff; i++)
    assert_int_equal(el_ev_decoder_set_fields(R->d, off[i], 0), 0);
  for (size_t i = 0; i < non; i++)
    assert_int_equal(el_ev_decoder_set_fields(R->d, on[i], 1), 0);
  assert_int_equal(tu_feed_chunks(R->d, p, n, chunk), 0);
}

/* Do records a and b say the same about their event (fields included,
 * as far as nfields goes)? */
static void same_record(const rec_t *a, const rec_t *b, int i) {
  const el_ev_event_t *x = &a->ev, *y = &b->ev;
  if (x->type != y->type || x->cap != y->cap || x->t_ns != y->t_ns ||
      x->offset != y->offset || x->payload_len != y->payload_len ||
      x->known != y->known || x->malformed != y->malformed ||
      x->layout != y->layout || x->nfields != y->nfields ||
      a->unix_ns != b->unix_ns ||
      memcmp(a->payload, b->payload, x->payload_len < 64 ? x->payload_len : 64))
    fail_msg("event %d (type %u) differs", i, x->type);
  for (unsigned f = 0; f < x->nfields; f++)
    if (x->v[f].u != y->v[f].u || a->slen[f] != b->slen[f] ||
        memcmp(a->s[f], b->s[f], a->slen[f] < 63 ? a->slen[f] : 63))
      fail_msg("event %d (type %u): field %u differs", i, x->type, f);
}

/* RUN_THREAD (E2) and the 13-byte census (E11) not wanted: they come
 * with nfields = 0 and layout 0, their type, time, offset, capability
 * and payload those build_stream wrote; STOP_THREAD (E3, a fixed-size
 * integer type too) and every other event keep the fields check_recorded
 * expects; every event is counted; however the input is cut. */
static void test_fields_mask_per_type(void **st) {
  (void)st;
  static tu_buf_t b;
  build_stream(&b);
  static recorder_t R;
  static const int off[] = {1, 207};
  for (size_t chunk = 1; chunk <= b.n; chunk += chunk < 40 ? 1 : b.n) {
    decode_masked(&R, b.b, b.n, chunk, off, 2, NULL, 0);
    rec_t *r = R.r;
    assert_int_equal(R.n, 11);
    assert_int_equal(el_ev_decoder_stats(R.d)->events, 11);
    assert_int_equal(el_ev_decoder_stats(R.d)->malformed_events, 0);
    check_e2_header(&r[1]);
    assert_false(r[1].ev.malformed);
    assert_int_equal(r[1].ev.nfields, 0);
    assert_int_equal(r[10].ev.type, 207); /* E11 */
    assert_int_equal(r[10].ev.t_ns, 1300);
    assert_int_equal(r[10].ev.nfields, 0);
    assert_int_equal(r[10].ev.layout, 0);
    assert_int_equal(r[10].ev.payload_len, 13);
    assert_memory_equal(r[10].payload, "\3\0\0\0\12", 5);
    /* E3, wanted: all three fields. */
    assert_int_equal(r[2].ev.nfields, 3);
    assert_int_equal(r[2].ev.v[0].u, 7);
    assert_int_equal(r[2].ev.v[1].u, 2);
    assert_int_equal(r[2].ev.v[2].u, 4242);
    /* The others as check_recorded has them. */
    assert_int_equal(r[0].ev.v[0].u, 38);
    assert_int_equal(r[0].ev.v[1].u, 500);
    assert_memory_equal(r[3].s[0], "h\xc3\xa9llo", 6);
    assert_int_equal(r[4].ev.v[1].u, 0x0102030405060708ull);
    assert_int_equal(r[6].ev.layout, 1);
    assert_int_equal(r[6].ev.v[7].u, 7);
    assert_int_equal(r[7].unix_ns, 1700000000ull * 1000000000ull + 5 + 500);
    assert_memory_equal(r[8].s[6], "f:1", 3);
    assert_memory_equal(r[9].s[1], "a\0bb\0", 5);
    assert_int_equal(el_ev_decoder_fields(R.d, 1), 0);
    assert_int_equal(el_ev_decoder_fields(R.d, 2), 1);
    assert_int_equal(el_ev_decoder_fields(R.d, 207), 0);
    el_ev_decoder_free(R.d);
  }
}

/* No type wanted but STOP_THREAD: every event is what EL_EV_OPT_NO_FIELDS
 * gives (variable-size, text, block marker, wall clock and unknown events
 * keep their fields), except E3, which is what a plain decode gives. */
static void test_fields_mask_none_but_one(void **st) {
  (void)st;
  static tu_buf_t b;
  build_stream(&b);
  static recorder_t R, N, F;
  static const int off[] = {-1}, on[] = {2};
  for (size_t chunk = 1; chunk <= b.n; chunk += chunk < 40 ? 1 : b.n) {
    decode_masked(&R, b.b, b.n, chunk, off, 1, on, 1);
    decode_recorded_opts(&N, b.b, b.n, chunk, EL_EV_OPT_NO_FIELDS);
    decode_recorded(&F, b.b, b.n, chunk);
    assert_int_equal(R.n, 11);
    for (int i = 0; i < 11; i++)
      same_record(&R.r[i], i == 2 ? &F.r[i] : &N.r[i], i);
    assert_int_equal(R.r[2].ev.nfields, 3);
    assert_int_equal(N.r[2].ev.nfields, 0); /* the two runs differ there */
    assert_int_equal(el_ev_decoder_fields(R.d, 250), 0);
    el_ev_decoder_free(R.d);
    el_ev_decoder_free(N.d);
    el_ev_decoder_free(F.d);
  }
}

/* {====== quiet types (el_ev_decoder_set_quiet) ======} */

/* A sink that records the (type, time) of what it is given, and sets
 * *until to 0 at its stop_at-th event (0: never). */
typedef struct {
  int n;
  uint16_t type[512];
  uint64_t t[512];
  uint64_t events, tmax, until;
  int stop_at;
} quiet_sink_t;

static int quiet_event(void *ud, const el_ev_event_t *e) {
  quiet_sink_t *Q = ud;
  if (Q->n < 512) {
    Q->type[Q->n] = e->type;
    Q->t[Q->n] = e->t_ns;
  }
  if (++Q->n == Q->stop_at) Q->until = 0;
  return 0;
}

/* 300 events of RUN_THREAD (type 1) and STOP_THREAD (type 2): event k at
 * time 1000 + 10k, except every 7th RUN_THREAD 5 ns earlier than its
 * predecessor would make it (times not monotone, for tmax); its type is 2
 * when k % 3 == 0. Writes the expected times into t[] and types into y[]. */
static void build_quiet_stream(tu_buf_t *b, uint64_t *t, uint16_t *y) {
  b->n = 0;
  tu_hdr_begin(b);
  tu_decl(b, 1, 4, "Run thread");
  tu_decl(b, 2, 10, "Stop thread");
  tu_hdr_end(b);
  for (int k = 0; k < 300; k++) {
    y[k] = k % 3 == 0 ? 2 : 1;
    t[k] = 1000 + 10 * (uint64_t)k - (y[k] == 1 && k % 7 == 0 ? 15 : 0);
    tu_ev(b, y[k], t[k]);
    tu_u32(b, (uint32_t)k);
    if (y[k] == 2) {
      tu_u16(b, 1);
      tu_u32(b, 0);
    }
  }
  tu_u16(b, 0xFFFF);
}

/* Decode b in chunks with RUN_THREAD quiet below until. */
static el_ev_decoder_t *quiet_decode(quiet_sink_t *Q, const tu_buf_t *b,
                                     size_t chunk, uint64_t until,
                                     int counters) {
  memset(Q, 0, sizeof *Q);
  Q->until = until;
  el_ev_sink_t s = {.ud = Q, .on_event = quiet_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  if (counters)
    el_ev_decoder_quiet_counters(
        d, &(el_ev_quiet_t){
               .events = &Q->events, .tmax = &Q->tmax, .until = &Q->until});
  assert_int_equal(el_ev_decoder_set_quiet(d, 1, 1), 0);
  assert_int_equal(tu_feed_chunks(d, b->b, b->n, chunk), 0);
  return d;
}

/* Whole: every RUN_THREAD below the bound is counted into the sink's
 * counters (200 of them, tmax the largest of their times by hand) and
 * not delivered; every STOP_THREAD is delivered in order. In chunks, the
 * ones cut across feeds are delivered instead; nothing is lost or
 * counted twice. The decoder counts all 300. */
static void test_quiet_types_counted_not_delivered(void **st) {
  (void)st;
  static tu_buf_t b;
  static uint64_t t[300];
  static uint16_t y[300];
  build_quiet_stream(&b, t, y);
  static quiet_sink_t Q;
  uint64_t tmax = 0;
  for (int k = 0; k < 300; k++)
    if (y[k] == 1 && t[k] > tmax) tmax = t[k];
  assert_int_equal(tmax, 1000 + 10 * 299);
  el_ev_decoder_t *d = quiet_decode(&Q, &b, b.n, UINT64_MAX, 1);
  assert_int_equal(Q.events, 200);
  assert_int_equal(Q.tmax, tmax);
  assert_int_equal(Q.n, 100);
  for (int i = 0; i < 100; i++) {
    assert_int_equal(Q.type[i], 2);
    assert_int_equal(Q.t[i], 1000 + 30 * (uint64_t)i);
  }
  assert_int_equal(el_ev_decoder_stats(d)->events, 300);
  el_ev_decoder_free(d);
  for (size_t chunk = 1; chunk < 80; chunk += 3) {
    d = quiet_decode(&Q, &b, chunk, UINT64_MAX, 1);
    int stops = 0, runs = 0;
    for (int i = 0; i < Q.n; i++) {
      stops += Q.type[i] == 2;
      runs += Q.type[i] == 1;
    }
    assert_int_equal(stops, 100);
    assert_int_equal(runs + (int)Q.events, 200);
    assert_int_equal(el_ev_decoder_stats(d)->events, 300);
    el_ev_decoder_free(d);
  }
}

/* The bound: RUN_THREADs at or past *until (2000) are delivered, those
 * before it counted (66: k < 100 with k % 3 != 0; the early ones at
 * k % 7 == 0 do not cross it), and a sink that sets it to 0 from
 * on_event gets every later event. Without counters nothing is held
 * back. */
static void test_quiet_until_bound(void **st) {
  (void)st;
  static tu_buf_t b;
  static uint64_t t[300];
  static uint16_t y[300];
  build_quiet_stream(&b, t, y);
  static quiet_sink_t Q;
  int below = 0;
  for (int k = 0; k < 300; k++) below += y[k] == 1 && t[k] < 2000;
  assert_int_equal(below, 66);
  el_ev_decoder_t *d = quiet_decode(&Q, &b, b.n, 2000, 1);
  assert_int_equal(Q.events, 66);
  assert_int_equal(Q.n, 300 - below);
  for (int i = 0; i < Q.n && i < 512; i++)
    assert_true(Q.type[i] == 2 || Q.t[i] >= 2000);
  el_ev_decoder_free(d);
  /* until = 0 after the 10th delivered event (the STOP_THREAD of k = 27):
   * 18 RUN_THREADs before it counted, the 272 events after delivered. */
  memset(&Q, 0, sizeof Q);
  Q.until = UINT64_MAX;
  Q.stop_at = 10;
  el_ev_sink_t s = {.ud = &Q, .on_event = quiet_event};
  d = el_ev_decoder_new(&s);
  el_ev_decoder_quiet_counters(
      d, &(el_ev_quiet_t){
             .events = &Q.events, .tmax = &Q.tmax, .until = &Q.until});
  assert_int_equal(el_ev_decoder_set_quiet(d, 1, 1), 0);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), 0);
  assert_int_equal(Q.events, 18);
  assert_int_equal(Q.n, 10 + 272);
  el_ev_decoder_free(d);
  /* No counters: everything delivered. */
  d = quiet_decode(&Q, &b, b.n, UINT64_MAX, 0);
  assert_int_equal(Q.n, 300);
  assert_int_equal(Q.events, 0);
  assert_int_equal(el_ev_decoder_set_quiet(d, 0xFFFF, 1), EL_EINVAL);
  assert_int_equal(el_ev_decoder_set_quiet(d, -2, 1), EL_EINVAL);
  el_ev_decoder_free(d);
  /* Every type quiet, then STOP_THREAD not: the same as RUN_THREAD only. */
  memset(&Q, 0, sizeof Q);
  Q.until = UINT64_MAX;
  d = el_ev_decoder_new(&s);
  el_ev_decoder_quiet_counters(
      d, &(el_ev_quiet_t){
             .events = &Q.events, .tmax = &Q.tmax, .until = &Q.until});
  assert_int_equal(el_ev_decoder_set_quiet(d, -1, 1), 0);
  assert_int_equal(el_ev_decoder_set_quiet(d, 2, 0), 0);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), 0);
  assert_int_equal(Q.events, 200);
  assert_int_equal(Q.n, 100);
  el_ev_decoder_free(d);
}

/* {====== direct types (el_ev_decoder_set_direct) ======} */

/* A quiet_sink_t with a run handler (direct_run_take) that takes the
 * STOP_THREADs of even threads. At each delivery and each run offered it
 * checks that the counters hold every event of the stream before it
 * (counters_hold), and after a run the handler stopped at a whole event
 * of, that this event is the next one delivered. */
typedef struct {
  quiet_sink_t q;
  int bad;                /* counters out of step at a delivery or a run */
  const uint64_t *t;      /* the stream's times */
  uint8_t delivered[300]; /* the stream's events delivered, by index */
  int n;                  /* direct events taken */
  uint16_t cap[512];
  uint64_t dt[512];
  uint32_t thread[512], len[512], status[512];
  int delivered_odd; /* delivered STOP_THREADs of odd threads, fields right */
  int delivered_stops;
  int refuse;        /* the run handler declines every other run */
  int expect;        /* the next delivery must be at next_off */
  uint64_t next_off; /* the offset of the event a run stopped at */
  int runs_bad;      /* a run's start or kinds, or the delivery after it,
                        out of step */
  int nruns;         /* runs offered to the run handler */
  int stop_at;       /* the run handler asks to stop after taking this many */
} direct_sink_t;

/* The sink's counters hold exactly the events of the stream before the
 * one at time t_next, which is not yet delivered or counted: its index k
 * is the events delivered plus counted, and tmax is the latest time of
 * the events before k not delivered (the stream's times are distinct). */
static int counters_hold(direct_sink_t *D, uint64_t t_next) {
  int k = D->q.n + (int)D->q.events;
  if (k >= 300 || D->t[k] != t_next) return 0;
  uint64_t tmax = 0;
  for (int j = 0; j < k; j++)
    if (!D->delivered[j] && D->t[j] > tmax) tmax = D->t[j];
  return D->q.tmax == tmax;
}

static int direct_event(void *ud, const el_ev_event_t *e) {
  direct_sink_t *D = ud;
  if (counters_hold(D, e->t_ns))
    D->delivered[D->q.n + (int)D->q.events] = 1;
  else
    D->bad++;
  if (D->expect && e->offset != D->next_off) D->runs_bad++;
  D->expect = 0;
  if (e->type == 2 && e->nfields == 3 && e->v[0].u % 2 == 1 && e->v[1].u == 1)
    D->delivered_odd++;
  D->delivered_stops += e->type == 2;
  return quiet_event(&D->q, e);
}

/* The STOP_THREAD at p (payload: thread, status, info) at time t of a
 * block of capability cap: taken (1) when its thread is even, noted. */
static int direct_take(direct_sink_t *D, uint16_t cap, el_rts_ns_t t,
                       const uint8_t *p, uint32_t len) {
  uint32_t thread = el_ev_be32(p);
  if (thread % 2) return 0;
  if (D->n < 512) {
    D->cap[D->n] = cap;
    D->dt[D->n] = t;
    D->thread[D->n] = thread;
    D->len[D->n] = len;
    D->status[D->n] = el_ev_be16(p + 4);
  }
  D->n++;
  return 1;
}

/* The run handler (el_ev_decoder_direct_run): the run's events in order
 * while each is quiet (RUN_THREAD, counted) or a STOP_THREAD direct_take
 * takes, below *until and the block's end time; with refuse, every
 * other run declined whole (nothing taken). A run not starting at a
 * direct event with the counters holding every event before it, or a
 * kind other than the one set up for its type, is out of step
 * (runs_bad). */
static size_t direct_run_take(void *ud, const el_ev_run_t *run,
                              el_ev_run_taken_t *tk) {
  direct_sink_t *D = ud;
  const uint8_t *p = run->p, *last = p;
  int kind = EL_EV_RUN_STOP;
  D->nruns++;
  if (!el_ev_run_frame(run, p, &kind) || kind != EL_EV_RUN_DIRECT ||
      run->cap != EL_EV_NO_CAP || !counters_hold(D, el_ev_run_time(p)))
    D->runs_bad++;
  D->expect = 1; /* where it stops at a whole event: delivered next */
  D->next_off = run->offset;
  if (D->refuse && D->nruns % 2 == 0) return 0; /* declined: none */
  for (;;) {
    size_t len = el_ev_run_frame(run, p, &kind);
    if (!len) {
      D->expect = 0; /* the run's end: what follows may be counted */
      break;
    }
    uint16_t type = el_ev_run_type(p);
    el_rts_ns_t t = el_ev_run_time(p);
    if (kind != (type == 1 ? EL_EV_RUN_QUIET : EL_EV_RUN_DIRECT)) D->runs_bad++;
    if (t > run->tend || t >= D->q.until) break;
    if (type == 2 && !direct_take(D, run->cap, t, p + 10, (uint32_t)(len - 10)))
      break;
    tk->events++;
    tk->tmax = t > tk->tmax ? t : tk->tmax;
    last = p;
    p += len;
    D->next_off = run->offset + (uint64_t)(p - run->p);
    if (type == 2 && D->stop_at && D->n == D->stop_at) {
      tk->stop = 1; /* after this one, as on_event returning 1 would */
      D->expect = 0;
      break;
    }
  }
  tk->last = (size_t)(last - run->p);
  return (size_t)(p - run->p);
}

/* A decoder feeding D, quiet counters given, RUN_THREAD quiet and
 * STOP_THREAD direct (RUN_THREAD direct too: quiet wins), the run
 * handler direct_run_take (with refuse, declining every other run). */
static el_ev_decoder_t *direct_decoder(direct_sink_t *D, const uint64_t *t,
                                       int refuse) {
  memset(D, 0, sizeof *D);
  D->q.until = UINT64_MAX;
  D->t = t;
  D->refuse = refuse;
  el_ev_sink_t s = {.ud = D, .on_event = direct_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  el_ev_decoder_quiet_counters(
      d, &(el_ev_quiet_t){
             .events = &D->q.events, .tmax = &D->q.tmax, .until = &D->q.until});
  el_ev_decoder_direct_run(d, direct_run_take, D);
  assert_int_equal(el_ev_decoder_set_quiet(d, 1, 1), 0);
  assert_int_equal(el_ev_decoder_set_direct(d, 2, 1), 0);
  assert_int_equal(el_ev_decoder_set_direct(d, 1, 1), 0); /* quiet wins */
  return d;
}

/* Decode b in chunks into D (direct_decoder). */
static el_ev_decoder_t *direct_decode(direct_sink_t *D, const tu_buf_t *b,
                                      size_t chunk, const uint64_t *t,
                                      int refuse) {
  el_ev_decoder_t *d = direct_decoder(D, t, refuse);
  assert_int_equal(tu_feed_chunks(d, b->b, b->n, chunk), 0);
  return d;
}

/* build_quiet_stream's stream, its times and a direct_sink_t, shared by
 * the direct types' tests (static: large). */
typedef struct {
  tu_buf_t b;
  uint64_t t[300];
  uint16_t y[300];
  direct_sink_t D;
} direct_fixture_t;

static direct_fixture_t *direct_fixture(void) {
  static direct_fixture_t f;
  build_quiet_stream(&f.b, f.t, f.y);
  return &f;
}

/* What holds in every chunking of the stream (events cut across feeds
 * are delivered: the fast path takes whole events only): the taken
 * events are even threads' stops, in order, with their time, payload
 * (10 bytes: thread, status 1) and no capability (no blocks); the odd
 * threads' stops are delivered with their fields; every event is
 * delivered or counted once, and every RUN_THREAD (200) counted or
 * delivered; at each delivery and each run offered, the counters hold
 * every event before it (counters_hold: events and tmax); after a run
 * the handler stopped at a whole event of, that event is delivered next
 * (runs_bad). */
static void direct_check_any_chunking(const direct_sink_t *D,
                                      el_ev_decoder_t *d) {
  assert_int_equal(D->bad, 0);
  assert_int_equal(D->runs_bad, 0);
  assert_int_equal(D->delivered_odd, 50);
  assert_int_equal(D->n + D->delivered_stops, 100);
  assert_int_equal(D->q.n + (int)D->q.events, 300);
  assert_int_equal(
      D->q.events - (uint64_t)D->n + (uint64_t)(D->q.n - D->delivered_stops),
      200);
  assert_int_equal(el_ev_decoder_stats(d)->events, 300);
  for (int i = 0; i < D->n && i < 512; i++) {
    assert_int_equal(D->thread[i] % 6, 0); /* even threads' stops */
    if (i) assert_true(D->thread[i] > D->thread[i - 1]);
    assert_int_equal(D->dt[i], 1000 + 10 * (uint64_t)D->thread[i]);
    assert_int_equal(D->cap[i], EL_EV_NO_CAP);
    assert_int_equal(D->len[i], 10);
    assert_int_equal(D->status[i], 1);
  }
}

/* The decoder counts the direct types as their bits change, and offers
 * runs only while the count is above 0: clearing a type never set, or
 * setting one again, leaves the count alone. With STOP_THREAD (and
 * RUN_THREAD) direct, then type 4 cleared twice and STOP_THREAD set
 * again, the whole stream's 50 runs are offered and 50 stops taken, as
 * in test_direct_types_taken_or_delivered; then every type cleared
 * (-1) and STOP_THREAD set again: the same. */
static void test_direct_types_counted_as_set(void **st) {
  (void)st;
  direct_fixture_t *f = direct_fixture();
  for (int round = 0; round < 2; round++) {
    el_ev_decoder_t *d = direct_decoder(&f->D, f->t, 0);
    if (round == 1) {
      assert_int_equal(el_ev_decoder_set_direct(d, -1, 0), 0);
      assert_int_equal(el_ev_decoder_set_direct(d, 1, 1), 0);
    }
    assert_int_equal(el_ev_decoder_set_direct(d, 4, 0), 0);
    assert_int_equal(el_ev_decoder_set_direct(d, 4, 0), 0);
    assert_int_equal(el_ev_decoder_set_direct(d, 2, 1), 0);
    assert_int_equal(el_ev_decoder_set_direct(d, 1, 0), 0);
    assert_int_equal(tu_feed_chunks(d, f->b.b, f->b.n, f->b.n), 0);
    direct_check_any_chunking(&f->D, d);
    assert_int_equal(f->D.nruns, 50);
    assert_int_equal(f->D.n, 50);
    el_ev_decoder_free(d);
  }
}

/* RUN_THREAD quiet, STOP_THREAD (event k for k % 3 == 0, thread k,
 * status 1) direct, the run handler taking even threads' stops. Whole:
 * the 50 stops of k % 6 == 0 are taken (the i-th: thread 6i at 1000 +
 * 60i), the 50 others delivered, the 200 RUN_THREADs counted (quiet wins
 * over direct: a RUN_THREAD's kind is quiet), tmax the latest time
 * (event 299's); a run is offered from each direct event that starts the
 * stream or follows a delivery (the decoder counts the quiet events
 * before it itself): at the stream's start and at the next stop after
 * each of the first 49 deliveries (the last one is followed by quiet
 * events only): 50 runs. In chunks of 1 to 79 bytes (every third) and
 * 2, 8 and 77: direct_check_any_chunking. */
static void test_direct_types_taken_or_delivered(void **st) {
  (void)st;
  direct_fixture_t *f = direct_fixture();
  tu_buf_t *const bp = &f->b;
  direct_sink_t *const Dp = &f->D;
  size_t chunks[40], nc = 0;
  chunks[nc++] = bp->n;
  for (size_t c = 1; c < 80; c += 3) chunks[nc++] = c;
  chunks[nc++] = 2;
  chunks[nc++] = 8;
  chunks[nc++] = 77;
  for (size_t ci = 0; ci < nc; ci++) {
    el_ev_decoder_t *d = direct_decode(Dp, bp, chunks[ci], f->t, 0);
    direct_check_any_chunking(Dp, d);
    if (ci == 0) { /* whole: every event on the fast path */
      assert_int_equal(Dp->n, 50);
      for (int i = 0; i < 50; i++) {
        assert_int_equal(Dp->thread[i], 6 * i);
        assert_int_equal(Dp->dt[i], 1000 + 60 * (uint64_t)i);
      }
      assert_int_equal(Dp->q.n, 50);
      assert_int_equal(Dp->q.events, 250);
      assert_int_equal(Dp->q.tmax, 1000 + 10 * 299);
      assert_int_equal(Dp->nruns, 50);
    }
    assert_int_equal(el_ev_decoder_set_direct(d, 0xFFFF, 1), EL_EINVAL);
    assert_int_equal(el_ev_decoder_set_direct(d, -2, 1), EL_EINVAL);
    el_ev_decoder_free(d);
  }
}

/* A run handler that declines every other run (returns 0, nothing
 * taken) on the stream of test_direct_types_taken_or_delivered. Whole:
 * the first run (from stop 0) is taken up to stop 3 (an odd thread's,
 * declined: delivered); from then on every stop is the first direct
 * event after a delivery and starts a run, and the declined runs fall
 * on stops 6, 12, ...: the even threads' (the odd ones the handler
 * declines anyway). So 99 runs, 1 stop taken (thread 0 at 1000), 99
 * delivered, each declined stop delivered next with nothing counted for
 * it; the 199 RUN_THREADs after stop 3 and the 2 before it counted, tmax
 * event 299's time. In every chunking: direct_check_any_chunking. */
static void test_direct_run_declined(void **st) {
  (void)st;
  direct_fixture_t *f = direct_fixture();
  tu_buf_t *const bp = &f->b;
  direct_sink_t *const Dp = &f->D;
  for (size_t chunk = bp->n; chunk > 0;
       chunk = chunk == bp->n ? 77 : chunk / 4) {
    el_ev_decoder_t *d = direct_decode(Dp, bp, chunk, f->t, 1);
    direct_check_any_chunking(Dp, d);
    if (chunk == bp->n) {
      assert_int_equal(Dp->nruns, 99);
      assert_int_equal(Dp->n, 1);
      assert_int_equal(Dp->thread[0], 0);
      assert_int_equal(Dp->dt[0], 1000);
      assert_int_equal(Dp->delivered_stops, 99);
      assert_int_equal(Dp->q.n, 99);
      assert_int_equal(Dp->q.events, 201);
      assert_int_equal(Dp->q.tmax, 1000 + 10 * 299);
    }
    el_ev_decoder_free(d);
  }
}

/* A run handler that asks to stop (el_ev_run_taken_t.stop) after the
 * 10th stop it takes, the stream's event 54 (a taken stop every sixth
 * event from 0): the feed ends there as when on_event returns nonzero,
 * EL_ESTOPPED, with events 0..54 counted (delivered or taken) and none
 * delivered after it, in every chunking. */
static void test_direct_run_handler_stops(void **st) {
  (void)st;
  direct_fixture_t *f = direct_fixture();
  for (size_t chunk = f->b.n; chunk > 0;
       chunk = chunk == f->b.n ? 77 : chunk / 3) {
    direct_sink_t *D = &f->D;
    el_ev_decoder_t *d = direct_decoder(D, f->t, 0);
    D->stop_at = 10;
    int rc = 0;
    for (size_t at = 0; at < f->b.n && rc == 0; at += chunk)
      rc = el_ev_decoder_feed(d, f->b.b + at,
                              f->b.n - at < chunk ? f->b.n - at : chunk);
    assert_int_equal(D->bad, 0);
    assert_int_equal(D->runs_bad, 0);
    if (chunk == f->b.n) { /* whole: the run handler's stop */
      assert_int_equal(rc, EL_ESTOPPED);
      assert_int_equal(D->n, 10);
      assert_int_equal(el_ev_decoder_stats(d)->events, 55);
      assert_int_equal(D->q.n + (int)D->q.events, 55);
      assert_int_equal(D->q.tmax, f->t[54]);
    } else { /* cut: events of a run may be delivered instead */
      assert_int_equal(rc, D->n == 10 ? EL_ESTOPPED : 0);
    }
    el_ev_decoder_free(d);
  }
}

/* {====== tallies (el_ev_decoder_tally) ======} */

/* A sink that tallies what it is given the way the decoder does, into
 * the same tally (as `eventlog-live stats`), and notes which types
 * reached it. */
typedef struct {
  el_ev_tally_t t;
  el_ev_tally_type_t type[65536];
  uint64_t capbits[1024];
  uint64_t delivered[65536]; /* events given to on_event, by type */
} tally_sink_t;

static int tally_event(void *ud, const el_ev_event_t *e) {
  tally_sink_t *T = ud;
  T->delivered[e->type]++;
  T->type[e->type].events++;
  T->type[e->type].payload_bytes += e->payload_len;
  T->capbits[e->cap >> 6] |= (uint64_t)1 << (e->cap & 63);
  if (e->t_ns < T->t.tmin) T->t.tmin = e->t_ns;
  if (e->t_ns > T->t.tmax) T->t.tmax = e->t_ns;
  return 0;
}

static void tu_marker(tu_buf_t *b, uint64_t t, uint32_t size, uint64_t te,
                      uint16_t cap) {
  tu_ev(b, 18, t);
  tu_u32(b, size);
  tu_u64(b, te);
  tu_u16(b, cap);
}

/* One session: RUN_THREAD (1, 4 bytes), STOP_THREAD (2, 10 bytes),
 * USER_MSG (19, variable), BLOCK_MARKER (18, 14 bytes). A RUN_THREAD
 * outside any block at t 500; a block of capability 3 (t 1000..1100):
 * RUN_THREAD 1000, STOP_THREAD 1050, USER_MSG "xyz12" 1060, RUN_THREAD
 * 20 (the least time); a block of capability 1 (t 1200..9000; an event
 * after its block's end is damage): STOP_THREAD 1200, RUN_THREAD 9000 (the
 * greatest time), STOP_THREAD 1300; then
 * STOP_THREAD 1400 outside blocks. Events (with markers): 11. By hand:
 * RUN_THREAD 4 events, 16 payload bytes; STOP_THREAD 4, 40; USER_MSG 1,
 * 5; BLOCK_MARKER 2, 28. Capabilities 1, 3 and none (0xFFFF). No event
 * ends in a 00 byte and no 'h' is in the stream after the header: either
 * could be part of eventlog-socket's stray marker + header, before which
 * the fast path stops (docs/eventlog.md, Sessions). */
static void build_tally_stream(tu_buf_t *b) {
  b->n = 0;
  tu_hdr_begin(b);
  tu_decl(b, 1, 4, "Run thread");
  tu_decl(b, 2, 10, "Stop thread");
  tu_decl(b, 18, 14, "Block marker");
  tu_decl(b, 19, 0xFFFF, "Log message");
  tu_hdr_end(b);
  tu_ev(b, 1, 500);
  tu_u32(b, 7);
  /* cap 3: marker 24 + 14 + 20 + 17 + 14 bytes */
  tu_marker(b, 1000, 24 + 14 + 20 + 17 + 14, 1100, 3);
  tu_ev(b, 1, 1000);
  tu_u32(b, 1);
  tu_ev(b, 2, 1050);
  tu_u32(b, 1);
  tu_u16(b, 1);
  tu_u32(b, 5);
  tu_ev(b, 19, 1060);
  tu_u16(b, 5);
  tu_str(b, "xyz12");
  tu_ev(b, 1, 20);
  tu_u32(b, 2);
  /* cap 1: marker 24 + 20 + 14 + 20 bytes */
  tu_marker(b, 1200, 24 + 20 + 14 + 20, 9000, 1);
  tu_ev(b, 2, 1200);
  tu_u32(b, 2);
  tu_u16(b, 1);
  tu_u32(b, 5);
  tu_ev(b, 1, 9000);
  tu_u32(b, 3);
  tu_ev(b, 2, 1300);
  tu_u32(b, 3);
  tu_u16(b, 1);
  tu_u32(b, 5);
  tu_ev(b, 2, 1400);
  tu_u32(b, 4);
  tu_u16(b, 1);
  tu_u32(b, 5);
  tu_u16(b, 0xFFFF);
}

static el_ev_decoder_t *tally_decode(tally_sink_t *T, const tu_buf_t *b,
                                     size_t chunk) {
  memset(T, 0, sizeof *T);
  T->t.type = T->type;
  T->t.capbits = T->capbits;
  T->t.tmin = UINT64_MAX;
  el_ev_sink_t s = {.ud = T, .on_event = tally_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  el_ev_decoder_set_opts(d, EL_EV_OPT_NO_FIELDS);
  el_ev_decoder_tally(d, &T->t);
  assert_int_equal(tu_feed_chunks(d, b->b, b->n, chunk), 0);
  return d;
}

/* Per-type counts and payload bytes, capabilities and the time span of
 * the hand-built stream, against the hand counts above, whole and in
 * every chunk size up to 40 (events cut across feeds reach on_event,
 * which tallies them the same way). Fed whole, only the USER_MSG, the
 * two markers and the last event reach on_event: the other fixed-size
 * events were tallied by the decoder. */
static void test_tally_counts_by_hand(void **st) {
  (void)st;
  static tu_buf_t b;
  static tally_sink_t T;
  build_tally_stream(&b);
  for (size_t chunk = 0; chunk <= 40; chunk++) {
    el_ev_decoder_t *d = tally_decode(&T, &b, chunk ? chunk : b.n);
    assert_int_equal(T.type[1].events, 4);
    assert_int_equal(T.type[1].payload_bytes, 16);
    assert_int_equal(T.type[2].events, 4);
    assert_int_equal(T.type[2].payload_bytes, 40);
    assert_int_equal(T.type[19].events, 1);
    assert_int_equal(T.type[19].payload_bytes, 5);
    assert_int_equal(T.type[18].events, 2);
    assert_int_equal(T.type[18].payload_bytes, 28);
    uint64_t all = 0;
    for (unsigned id = 0; id < 65536; id++) all += T.type[id].events;
    assert_int_equal(all, 11);
    assert_int_equal(el_ev_decoder_stats(d)->events, 11);
    assert_int_equal(T.capbits[0], (uint64_t)1 << 1 | (uint64_t)1 << 3);
    for (unsigned w = 1; w < 1023; w++) assert_int_equal(T.capbits[w], 0);
    assert_int_equal(T.capbits[1023], (uint64_t)1 << 63);
    assert_int_equal(T.t.tmin, 20);
    assert_int_equal(T.t.tmax, 9000);
    if (!chunk) {
      /* the first event after the header, RUN_THREAD at 500 ns, is not
       * a block marker although the header declares them: the general
       * path looks at it (whether bytes were inserted before a marker:
       * data_begin_at; at 500 ns, decided at once) and delivers it; the
       * last STOP_THREAD, within the stray pattern's length of the
       * input's end, is left to the general path */
      assert_int_equal(T.delivered[1], 1);
      assert_int_equal(T.delivered[2], 1);
      assert_int_equal(T.delivered[18], 2);
      assert_int_equal(T.delivered[19], 1);
    }
    el_ev_decoder_free(d);
  }
}

/* The fast path's event lengths follow the session's header: STOP_THREAD
 * declared in the first session only is undeclared in the second (an
 * error there, not framed by its old size; what follows is skipped up to
 * a header, and none comes), and a fixed size too large
 * for the fast path's length table (RUN_THREAD of 250 bytes) is framed
 * whole: 3 events of 260 bytes, then the DATA_END. */
static void test_fast_lengths_follow_header(void **st) {
  (void)st;
  static tu_buf_t b;
  static tally_sink_t T;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 250, "Run thread");
  tu_hdr_end(&b);
  uint8_t pad[246] = {0};
  for (int k = 0; k < 3; k++) {
    tu_ev(&b, 1, 100 + (uint64_t)k);
    tu_u32(&b, (uint32_t)k);
    tu_bytes(&b, pad, sizeof pad);
  }
  tu_u16(&b, 0xFFFF);
  el_ev_decoder_t *d = tally_decode(&T, &b, b.n);
  assert_int_equal(T.type[1].events, 3);
  assert_int_equal(T.type[1].payload_bytes, 3 * 250);
  assert_int_equal(el_ev_decoder_stats(d)->events, 3);
  assert_int_equal(el_ev_decoder_stats(d)->bytes, b.n);
  el_ev_decoder_free(d);
  /* Session 1 declares 1 and 2; session 2 only 1, then has a type 2. */
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 4, "Run thread");
  tu_decl(&b, 2, 10, "Stop thread");
  tu_hdr_end(&b);
  tu_ev(&b, 2, 10);
  tu_u32(&b, 1);
  tu_u16(&b, 1);
  tu_u32(&b, 0);
  tu_u16(&b, 0xFFFF);
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 4, "Run thread");
  tu_hdr_end(&b);
  tu_ev(&b, 1, 20);
  tu_u32(&b, 1);
  size_t bad = b.n;
  tu_ev(&b, 2, 30);
  tu_u32(&b, 1);
  tu_u16(&b, 1);
  tu_u32(&b, 0);
  for (int k = 0; k < 3; k++) { /* skipped: no header follows */
    tu_ev(&b, 1, 40);
    tu_u32(&b, 1);
  }
  memset(&T, 0, sizeof T);
  T.t.type = T.type;
  T.t.capbits = T.capbits;
  T.t.tmin = UINT64_MAX;
  el_ev_sink_t s = {.ud = &T, .on_event = tally_event};
  d = el_ev_decoder_new(&s);
  el_ev_decoder_tally(d, &T.t);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), EL_EUNDECL);
  assert_int_equal(el_ev_decoder_diag(d)->offset, bad);
  assert_int_equal(T.type[2].events, 1);
  assert_int_equal(T.type[1].events, 1);
  assert_int_equal(el_ev_decoder_stats(d)->events, 2);
  el_ev_decoder_free(d);
}

/* A sink that changes the mask for RUN_THREAD while it runs. */
typedef struct {
  el_ev_decoder_t *d;
  int n;           /* events seen */
  uint8_t nf[256]; /* nfields of each */
  uint32_t thread[256];
} toggler_t;

static int toggle_event(void *ud, const el_ev_event_t *e) {
  toggler_t *T = ud;
  if (T->n < 256) {
    T->nf[T->n] = e->nfields;
    T->thread[T->n] = e->nfields ? (uint32_t)e->v[0].u : 0;
  }
  T->n++;
  if (T->n == 11) /* after event 10: none for events 11 to 60 */
    el_ev_decoder_set_fields(T->d, 1, 0);
  else if (T->n == 61) /* fields again from event 61 */
    el_ev_decoder_set_fields(T->d, 1, 1);
  else if (T->n == 131) /* none for any type from event 131 */
    el_ev_decoder_set_fields(T->d, -1, 0);
  return 0;
}

/* Changing the mask from inside on_event takes effect at the next event,
 * on the fast path and on events completed across feeds alike, and holds
 * across a new session (two sessions of 100 RUN_THREADs, thread = index
 * in its session + 1) and a decoder reset. */
static void test_fields_mask_changes_at_next_event(void **st) {
  (void)st;
  static tu_buf_t b;
  b.n = 0;
  for (int s = 0; s < 2; s++) {
    tu_hdr_begin(&b);
    tu_decl(&b, 1, 4, "Run thread");
    tu_hdr_end(&b);
    for (uint32_t i = 1; i <= 100; i++) {
      tu_ev(&b, 1, i);
      tu_u32(&b, i);
    }
    tu_u16(&b, 0xFFFF);
  }
  for (size_t chunk = 1; chunk <= b.n; chunk += chunk < 40 ? 1 : b.n) {
    static toggler_t T;
    memset(&T, 0, sizeof T);
    el_ev_sink_t s = {.ud = &T, .on_event = toggle_event};
    T.d = el_ev_decoder_new(&s);
    assert_int_equal(tu_feed_chunks(T.d, b.b, b.n, chunk), 0);
    assert_int_equal(T.n, 200);
    for (int k = 0; k < 200; k++) {
      int want = k < 11 || (k >= 61 && k < 131);
      if (T.nf[k] != (want ? 1 : 0) ||
          (want && T.thread[k] != (uint32_t)(k % 100 + 1)))
        fail_msg("chunk %zu, event %d: nfields %u thread %u", chunk, k, T.nf[k],
                 T.thread[k]);
    }
    el_ev_decoder_reset(T.d); /* the mask outlives a reset */
    assert_int_equal(el_ev_decoder_fields(T.d, 1), 0);
    assert_int_equal(el_ev_decoder_fields(T.d, 0xFFFE), 0);
    el_ev_decoder_free(T.d);
  }
}

/* Types outside -1..0xFFFE are refused and change nothing; fields are
 * wanted by default. */
static void test_fields_mask_bad_type(void **st) {
  (void)st;
  el_ev_decoder_t *d = el_ev_decoder_new(NULL);
  assert_int_equal(el_ev_decoder_fields(d, 1), 1);
  assert_int_equal(el_ev_decoder_fields(d, 0xFFFE), 1);
  assert_int_equal(el_ev_decoder_set_fields(d, -2, 0), EL_EINVAL);
  assert_int_equal(el_ev_decoder_set_fields(d, 0xFFFF, 0), EL_EINVAL);
  assert_int_equal(el_ev_decoder_set_fields(d, 70000, 0), EL_EINVAL);
  for (int t = 0; t < 0xFFFF; t++)
    if (!el_ev_decoder_fields(d, (uint16_t)t)) fail_msg("type %d changed", t);
  assert_int_equal(el_ev_decoder_set_fields(d, 0xFFFE, 0), 0);
  assert_int_equal(el_ev_decoder_fields(d, 0xFFFE), 0);
  assert_int_equal(el_ev_decoder_fields(d, 0xFFFD), 1);
  el_ev_decoder_free(d);
}

static void test_undeclared_type_is_corrupt(void **st) {
  (void)st;
  static tu_buf_t b;
  b.n = 0;
  tu_hdr_begin(&b);
  tu_decl(&b, 1, 4, "Run thread");
  tu_hdr_end(&b);
  tu_ev(&b, 1, 5);
  tu_u32(&b, 1);
  size_t bad = b.n;
  tu_ev(&b, 7, 6);
  tu_u32(&b, 1);
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, b.b, b.n), EL_EUNDECL);
  assert_int_equal(el_ev_decoder_diag(d)->offset, bad);
  assert_int_equal(el_ev_decoder_diag(d)->event_type, 7);
  assert_int_equal(g.events, 1);
  el_ev_decoder_free(d);
}

/* GHC #26222 (§4.6): a flush cuts a STOP_THREAD between two blocks; the
 * decoder reports the corrupt block, skips to its end, and decodes the
 * next block normally, identically for any chunking. */
static size_t build_cut_block_stream(tu_buf_t *b, size_t *cut_off,
                                     size_t *b2_off, size_t *b3_off) {
  b->n = 0;
  tu_hdr_begin(b);
  tu_decl(b, 1, 4, "Run thread");
  tu_decl(b, 2, 10, "Stop thread");
  tu_decl(b, 18, 14, "Block marker");
  tu_hdr_end(b);
  /* Block 1 (cap 0): marker 24 + RUN_THREAD 14 + 5 bytes of STOP. */
  tu_ev(b, 18, 100);
  tu_u32(b, 24 + 14 + 5);
  tu_u64(b, 200);
  tu_u16(b, 0);
  tu_ev(b, 1, 110);
  tu_u32(b, 1);
  *cut_off = b->n;
  static tu_buf_t stop;
  stop.n = 0;
  tu_ev(&stop, 2, 120);
  tu_u32(&stop, 1);
  tu_u16(&stop, 7);
  tu_u32(&stop, 0);
  tu_bytes(b, stop.b, 5);
  /* Block 2 (cap 0): marker + the other 15 bytes of STOP + RUN_THREAD. */
  *b2_off = b->n;
  tu_ev(b, 18, 130);
  tu_u32(b, 24 + 15 + 14);
  tu_u64(b, 300);
  tu_u16(b, 0);
  tu_bytes(b, stop.b + 5, 15);
  tu_ev(b, 1, 140);
  tu_u32(b, 2);
  /* Block 3 (cap 1): marker + RUN_THREAD 9. */
  *b3_off = b->n;
  tu_ev(b, 18, 150);
  tu_u32(b, 24 + 14);
  tu_u64(b, 400);
  tu_u16(b, 1);
  tu_ev(b, 1, 160);
  tu_u32(b, 9);
  tu_u16(b, 0xFFFF);
  return b->n;
}

typedef struct {
  tu_digest_t g;
  uint64_t corrupt_off[8];
  int ncorrupt;
  uint64_t last_thread, last_cap, last_t;
} cut_t;

static int cut_event(void *ud, const el_ev_event_t *e) {
  cut_t *c = ud;
  if (e->type == 1) {
    c->last_thread = e->v[0].u;
    c->last_cap = e->cap;
    c->last_t = e->t_ns;
  }
  return tu_on_event(&c->g, e);
}

static void cut_warning(void *ud, const el_diag_t *d) {
  cut_t *c = ud;
  if (d->code == EL_ECORRUPT && c->ncorrupt < 8)
    c->corrupt_off[c->ncorrupt++] = d->offset;
  tu_on_warning(&c->g, d);
}

static void test_cut_block_resyncs_at_next_block(void **st) {
  (void)st;
  static tu_buf_t b;
  size_t cut, b2, b3;
  size_t n = build_cut_block_stream(&b, &cut, &b2, &b3);
  uint64_t ref = 0;
  for (size_t step = 1; step <= n; step++) {
    cut_t c = {0};
    el_ev_sink_t s = tu_sink(&c.g);
    s.ud = &c;
    s.on_event = cut_event;
    s.on_warning = cut_warning;
    el_ev_decoder_t *d = el_ev_decoder_new(&s);
    for (size_t i = 0; i < n; i += step)
      assert_int_equal(el_ev_decoder_feed(d, b.b + i, n - i < step ? n - i
                                                                  : step),
                       0);
    assert_int_equal(el_ev_decoder_finish(d), 0);
    /* The cut STOP_THREAD is reported at its offset; block 2's tail (the
     * rest of the STOP) cannot be framed either and is skipped too. */
    assert_true(c.ncorrupt >= 1);
    assert_int_equal(c.corrupt_off[0], cut);
    /* Block 3 decodes normally: RUN_THREAD 9 on cap 1 at t = 160. */
    assert_int_equal(c.last_thread, 9);
    assert_int_equal(c.last_cap, 1);
    assert_int_equal(c.last_t, 160);
    assert_int_equal(c.g.data_ends, 1);
    assert_true(el_ev_decoder_stats(d)->skipped_bytes >= 5);
    el_ev_decoder_free(d);
    if (step == 1)
      ref = c.g.h;
    else if (c.g.h != ref)
      fail_msg("chunks of %zu bytes give different events", step);
  }
}

/* The stream of build_stream (B) cut INTO bytes into its second event
 * E2, which starts at g_hdr_len + 24: finishing the decoder reports
 * EL_ETRUNC, a cut event at E2's offset with type EVENT_TYPE (-1 while the
 * cut falls inside the type field itself), after one whole event. */
static void check_cut_in_e2(const tu_buf_t *b, size_t into, int event_type) {
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, b->b, g_hdr_len + 24 + into), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_int_equal(el_ev_decoder_diag(d)->offset, g_hdr_len + 24);
  assert_int_equal(el_ev_decoder_diag(d)->event_type, event_type);
  assert_int_equal(el_ev_decoder_diag(d)->cut_event, 1);
  assert_int_equal(g.events, 1);
  el_ev_decoder_free(d);
}

static void test_truncated_header_and_event(void **st) {
  (void)st;
  static tu_buf_t b;
  build_stream(&b);
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, b.b, 40), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  assert_int_equal(g.headers, 0);
  assert_int_equal(el_ev_decoder_diag(d)->cut_event, 0);
  el_ev_decoder_free(d);
  /* Cut 3 bytes into E2 (RUN_THREAD = type 1 at g_hdr_len + 24). */
  check_cut_in_e2(&b, 3, 1);
  /* Cut 1 byte into E2: inside its 2-byte type, still a cut event (the
   * real eventlog-socket's last flush can end there). */
  check_cut_in_e2(&b, 1, -1);
  /* Cut between events: clean. */
  memset(&g, 0, sizeof g);
  d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, b.b, g_hdr_len + 38), 0);
  assert_int_equal(el_ev_decoder_finish(d), 0);
  assert_int_equal(g.events, 2);
  el_ev_decoder_free(d);
}

/* The input ends inside a block (eventlog-socket on GHC 9.0 closes its
 * connection at exit partway through its last block): the diagnostic
 * says how many bytes the block's marker still declared, which were lost
 * with the cut event. By hand: a header declaring RUN_THREAD (1, 4
 * bytes) and BLOCK_MARKER (18, 14), then at byte M a capability 3 block
 * of 24 + 3 x 14 = 66 bytes, of which the marker, one RUN_THREAD and 5
 * bytes of the next come: the input ends at M + 43, 66 - 43 = 23 bytes
 * short. Ending between events there (M + 38): 28 bytes short, in the
 * warning about the missing end-of-data marker. Ending after the block
 * whole (M + 66, no DATA_END): nothing is short. Any chunking. */
static void build_short_block(tu_buf_t *b, size_t *m) {
  b->n = 0;
  tu_hdr_begin(b);
  tu_decl(b, 1, 4, "Run thread");
  tu_decl(b, 18, 14, "Block marker");
  tu_hdr_end(b);
  *m = b->n;
  tu_ev(b, 18, 100);
  tu_u32(b, 24 + 3 * 14);
  tu_u64(b, 200);
  tu_u16(b, 3);
  for (uint32_t k = 1; k <= 3; k++) {
    tu_ev(b, 1, 100 + 10 * k);
    tu_u32(b, k);
  }
}

static uint64_t short_missing;
static char short_msg[512];
static void short_warning(void *ud, const el_diag_t *d) {
  tu_on_warning(ud, d);
  short_missing = d->block_missing;
  snprintf(short_msg, sizeof short_msg, "%s", d->msg);
}

/* Decode the first len bytes of b in pieces of step; finish's code. The
 * last diagnostic (finish's error, else the last warning) goes into
 * short_missing and short_msg. */
static int decode_short(const tu_buf_t *b, size_t len, size_t step) {
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  s.on_warning = short_warning;
  short_missing = 0;
  short_msg[0] = '\0';
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  for (size_t i = 0; i < len; i += step)
    assert_int_equal(
        el_ev_decoder_feed(d, b->b + i, len - i < step ? len - i : step), 0);
  int rc = el_ev_decoder_finish(d);
  if (rc) {
    short_missing = el_ev_decoder_diag(d)->block_missing;
    snprintf(short_msg, sizeof short_msg, "%s", el_ev_decoder_diag(d)->msg);
  }
  el_ev_decoder_free(d);
  return rc;
}

static void test_cut_short_of_its_block(void **st) {
  (void)st;
  static tu_buf_t b;
  size_t m;
  char want[160];
  build_short_block(&b, &m);
  for (size_t step = 1; step <= b.n; step++) {
    assert_int_equal(decode_short(&b, m + 43, step), EL_ETRUNC);
    assert_int_equal(short_missing, 23);
    snprintf(want, sizeof want,
             "the input ends at byte %zu, 23 bytes short of the end of "
             "capability 3's block from byte %zu",
             m + 43, m);
    if (!strstr(short_msg, want))
      fail_msg("step %zu: \"%s\" lacks \"%s\"", step, short_msg, want);
    assert_int_equal(decode_short(&b, m + 38, step), 0);
    assert_int_equal(short_missing, 28);
    snprintf(want, sizeof want,
             "ends at byte %zu without its end-of-data marker, 28 bytes "
             "short of the end of capability 3's block from byte %zu:",
             m + 38, m);
    if (!strstr(short_msg, want))
      fail_msg("step %zu: \"%s\" lacks \"%s\"", step, short_msg, want);
    assert_int_equal(decode_short(&b, m + 66, step), 0);
    assert_int_equal(short_missing, 0);
    assert_null(strstr(short_msg, "short of"));
  }
}

/* {====== real logs ======} */

static uint64_t digest_chunked(const uint8_t *p, size_t n, size_t split,
                               size_t step, tu_digest_t *out) {
  tu_digest_t g = {0};
  g.h = 1469598103934665603ull;
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  if (step) {
    for (size_t i = 0; i < n; i += step)
      el_ev_decoder_feed(d, p + i, n - i < step ? n - i : step);
  } else {
    el_ev_decoder_feed(d, p, split);
    el_ev_decoder_feed(d, p + split, n - split);
  }
  int rc = el_ev_decoder_finish(d);
  tu_mix(&g, &rc, sizeof rc);
  el_ev_decoder_free(d);
  if (out)
    *out = g;
  return g.h;
}

static void test_feed_split_at_every_byte(void **st) {
  (void)st;
  for (size_t k = 0; k < sizeof tu_small_logs / sizeof tu_small_logs[0];
       k++) {
    size_t n = 0;
    uint8_t *p = tu_read_log(tu_small_logs[k], &n);
    assert_non_null(p);
    tu_digest_t whole;
    uint64_t ref = digest_chunked(p, n, n, 0, &whole);
    assert_true(whole.events > 10);
    for (size_t split = 0; split <= n; split++) {
      uint64_t h = digest_chunked(p, n, split, 0, NULL);
      if (h != ref)
        fail_msg("%s: split at %zu differs", tu_small_logs[k], split);
    }
    if (digest_chunked(p, n, 0, 1, NULL) != ref)
      fail_msg("%s: byte-at-a-time differs", tu_small_logs[k]);
    if (digest_chunked(p, n, 0, 7, NULL) != ref)
      fail_msg("%s: 7-byte chunks differ", tu_small_logs[k]);
    free(p);
  }
}

static void test_stale_bytes_before_header(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/hello-ghc-8.2.2.eventlog", &n);
  assert_non_null(p);
  tu_digest_t plain;
  digest_chunked(p, n, n, 0, &plain);
  /* 1000 stale bytes, including partial magics, then the log. */
  size_t pre = 1000;
  uint8_t *q = malloc(pre + n);
  for (size_t i = 0; i < pre; i++)
    q[i] = (uint8_t)(i * 7 + 1);
  memcpy(q + 100, "hdrbhet", 7);
  memcpy(q + 300, "hdrbh", 5);
  memcpy(q + pre - 4, "hdrb", 4);
  memcpy(q + pre, p, n);
  for (size_t step = 1; step <= 4096; step *= 8) {
    tu_digest_t g;
    digest_chunked(q, pre + n, 0, step, &g);
    assert_int_equal(g.headers, 1);
    assert_int_equal(g.events, plain.events);
    assert_int_equal(g.warnings, plain.warnings + 1);
    assert_int_equal(g.max_offset, plain.max_offset + pre);
  }
  free(q);
  free(p);
}

static void test_two_sessions_back_to_back(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/unicode.eventlog", &n);
  assert_non_null(p);
  tu_digest_t one;
  digest_chunked(p, n, n, 0, &one);
  assert_int_equal(one.data_ends, 1);
  uint8_t *q = malloc(2 * n);
  memcpy(q, p, n);
  memcpy(q + n, p, n);
  for (size_t step = 1; step <= 8192; step *= 2) {
    tu_digest_t g = {0};
    el_ev_sink_t s = tu_sink(&g);
    el_ev_decoder_t *d = el_ev_decoder_new(&s);
    for (size_t i = 0; i < 2 * n; i += step)
      assert_int_equal(
          el_ev_decoder_feed(d, q + i, 2 * n - i < step ? 2 * n - i : step),
          0);
    assert_int_equal(el_ev_decoder_finish(d), 0);
    assert_int_equal(g.headers, 2);
    assert_int_equal(g.data_ends, 2);
    assert_int_equal(g.events, 2 * one.events);
    assert_int_equal(el_ev_decoder_stats(d)->sessions, 2);
    assert_int_equal(el_ev_decoder_header(d)->session, 2);
    assert_int_equal(el_ev_decoder_header(d)->offset, n);
    el_ev_decoder_free(d);
  }
  free(q);
  free(p);
}

static void test_reset_starts_new_session(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/time-prof.eventlog", &n);
  tu_digest_t one;
  digest_chunked(p, n, n, 0, &one);
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, p, n / 2), 0);
  uint64_t half = g.events;
  assert_int_equal(g.headers, 1);
  assert_true(half > 10);
  el_ev_decoder_reset(d);
  assert_int_equal(el_ev_decoder_feed(d, p, n), 0);
  assert_int_equal(el_ev_decoder_finish(d), 0);
  assert_int_equal(g.headers, 2);
  assert_int_equal(g.events, half + one.events);
  assert_int_equal(g.warnings, 0);
  el_ev_decoder_free(d);
  free(p);
}

static void test_stop_from_callback(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/unicode.eventlog", &n);
  tu_digest_t g = {0};
  g.stop_after = 10;
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, p, n), EL_ESTOPPED);
  assert_int_equal(g.events, 10);
  el_ev_decoder_free(d);
  free(p);
}

static void test_no_allocation_per_event(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-9.0/threads.eventlog", &n);
  assert_non_null(p);
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  /* Odd chunk size so that many events straddle feeds. */
  size_t step = 4093, i = 0;
  for (; i < n && g.events < 2000; i += step)
    el_ev_decoder_feed(d, p + i, n - i < step ? n - i : step);
  uint64_t before = el_mem_alloc_count();
  uint64_t ev_before = g.events;
  for (; i < n; i += step)
    assert_int_equal(
        el_ev_decoder_feed(d, p + i, n - i < step ? n - i : step), 0);
  assert_int_equal(el_ev_decoder_finish(d), 0);
  assert_true(g.events > ev_before + 100000);
  assert_int_equal(el_mem_alloc_count(), before);
  el_ev_decoder_free(d);
  free(p);
}

static void test_data_end_inside_last_block(void **st) {
  (void)st;
  /* GHC >= 9.2 puts DATA_END inside the final global block (§1.5). */
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/ghc-9.2-events.eventlog", &n);
  tu_digest_t g;
  digest_chunked(p, n, n, 0, &g);
  assert_int_equal(g.data_ends, 1);
  assert_int_equal(g.data_end_off, n - 2);
  assert_int_equal(g.warnings, 0);
  free(p);
}

/* A digest that also keeps the last warning. */
typedef struct {
  tu_digest_t g; /* first: tu_sink's callbacks take it as their ud */
  el_diag_t last;
} warned_t;

static void keep_warning(void *ud, const el_diag_t *d) {
  warned_t *w = ud;
  w->last = *d;
  tu_on_warning(&w->g, d);
}

/* Feed p[0..n) whole, then finish; the result of finish. */
static int feed_finish(const uint8_t *p, size_t n, warned_t *w) {
  el_ev_sink_t s = tu_sink(&w->g);
  s.ud = w;
  s.on_warning = keep_warning;
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, p, n), 0);
  int rc = el_ev_decoder_finish(d);
  el_ev_decoder_free(d);
  return rc;
}

/* Data that stops between two events, without DATA_END (a killed
 * program): every event is delivered, and one warning names the byte
 * where the data stops and the missing marker (spec §1.7, §4.1). */
static void test_missing_end_marker_warns(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-9.0/threads.eventlog", &n);
  assert_non_null(p);
  assert_true(n > 2 && p[n - 2] == 0xff && p[n - 1] == 0xff);
  warned_t whole = {0}, cut = {0};
  assert_int_equal(feed_finish(p, n, &whole), 0);
  assert_int_equal(whole.g.warnings, 0);
  assert_int_equal(whole.g.data_ends, 1);
  assert_int_equal(feed_finish(p, n - 2, &cut), 0); /* the marker only */
  assert_int_equal(cut.g.events, whole.g.events);
  assert_int_equal(cut.g.data_ends, 0);
  assert_int_equal(cut.g.warnings, 1);
  assert_int_equal(cut.last.offset, n - 2);
  assert_non_null(strstr(cut.last.msg, "end-of-data marker"));
  char at[32];
  snprintf(at, sizeof at, "byte %zu ", n - 2);
  assert_non_null(strstr(cut.last.msg, at));
  free(p);
}

static void test_testlog_part_reports_truncation(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/testlog-part.eventlog", &n);
  assert_non_null(p);
  tu_digest_t g = {0};
  el_ev_sink_t s = tu_sink(&g);
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  assert_int_equal(el_ev_decoder_feed(d, p, n), 0);
  assert_int_equal(el_ev_decoder_finish(d), EL_ETRUNC);
  const el_diag_t *dg = el_ev_decoder_diag(d);
  assert_true(dg->offset < n && dg->offset > g.max_offset);
  assert_true(dg->event_type >= 0);
  assert_true(g.events > 100);
  el_ev_decoder_free(d);
  free(p);
}

#ifndef EL_TESTING
#error "the unit tests need the EL_TESTING hooks (tests/CMakeLists.txt)"
#endif
/* Allocation n fails, for n = 1, 2, ...: every run ends cleanly (0 or
 * EL_ENOMEM, never a crash) and frees everything it allocated. */
static void test_out_of_memory_sweep(void **st) {
  (void)st;
  size_t n = 0;
  uint8_t *p = tu_read_log("ghc-events/time-prof.eventlog", &n);
  assert_non_null(p);
  size_t base = el_mem_in_use();
  int completed = 0;
  for (uint64_t k = 1; k < 40 && !completed; k++) {
    el_mem_fail_after(k);
    tu_digest_t g = {0};
    el_ev_sink_t s = tu_sink(&g);
    el_ev_decoder_t *d = el_ev_decoder_new(&s);
    int failed = !d;
    for (size_t i = 0; d && i < n; i += 977) {
      size_t len = n - i < 977 ? n - i : 977;
      int rc = el_ev_decoder_feed(d, p + i, len);
      if (rc == EL_ENOMEM) {
        failed = 1;
        /* Retrying the unconsumed rest must work once memory is back. */
        el_mem_fail_after(0);
        uint64_t at = el_ev_decoder_offset(d);
        assert_int_equal(el_ev_decoder_feed(d, p + at, n - at), 0);
        break;
      }
      assert_int_equal(rc, 0);
    }
    if (d) {
      assert_int_equal(el_ev_decoder_finish(d), 0);
      assert_int_equal(el_ev_decoder_stats(d)->events, 477);
    }
    el_ev_decoder_free(d);
    el_mem_fail_after(0);
    assert_int_equal(el_mem_in_use(), base);
    completed = !failed;
  }
  assert_true(completed);
  /* The per-type masks are allocated by the first el_ev_decoder_set_*
   * call: without memory it fails and changes nothing (every field
   * still wanted), and a later call works. */
  el_ev_decoder_t *md = el_ev_decoder_new(NULL);
  el_mem_fail_after(1);
  assert_int_equal(el_ev_decoder_set_fields(md, -1, 0), EL_ENOMEM);
  el_mem_fail_after(1);
  assert_int_equal(el_ev_decoder_set_direct(md, 2, 1), EL_ENOMEM);
  el_mem_fail_after(0);
  assert_int_equal(el_ev_decoder_fields(md, 1), 1);
  assert_int_equal(el_ev_decoder_set_fields(md, -1, 0), 0);
  assert_int_equal(el_ev_decoder_fields(md, 1), 0);
  el_ev_decoder_free(md);
  assert_int_equal(el_mem_in_use(), base);
  /* The show formatter too. */
  for (uint64_t k = 1; k < 60; k++) {
    el_mem_fail_after(k);
    FILE *null = fopen("/dev/null", "w");
    el_ev_show_t *sh = el_ev_show_new(null);
    if (sh) {
      el_ev_show_feed(sh, p, n);
      el_ev_show_finish(sh);
    }
    el_ev_show_free(sh);
    fclose(null);
    el_mem_fail_after(0);
    assert_int_equal(el_mem_in_use(), base);
  }
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_type_table_names_and_fields),
      cmocka_unit_test(test_type_table_names_fit_their_rows),
      cmocka_unit_test(test_type_enum_matches_table),
      cmocka_unit_test(test_payload_code_names),
      cmocka_unit_test(test_handmade_stream_fields),
      cmocka_unit_test(test_no_fields_option),
      cmocka_unit_test(test_fields_mask_per_type),
      cmocka_unit_test(test_quiet_types_counted_not_delivered),
      cmocka_unit_test(test_quiet_until_bound),
      cmocka_unit_test(test_direct_types_taken_or_delivered),
      cmocka_unit_test(test_direct_types_counted_as_set),
      cmocka_unit_test(test_direct_run_declined),
      cmocka_unit_test(test_direct_run_handler_stops),
      cmocka_unit_test(test_tally_counts_by_hand),
      cmocka_unit_test(test_fast_lengths_follow_header),
      cmocka_unit_test(test_fields_mask_none_but_one),
      cmocka_unit_test(test_fields_mask_changes_at_next_event),
      cmocka_unit_test(test_fields_mask_bad_type),
      cmocka_unit_test(test_undeclared_type_is_corrupt),
      cmocka_unit_test(test_cut_block_resyncs_at_next_block),
      cmocka_unit_test(test_truncated_header_and_event),
      cmocka_unit_test(test_cut_short_of_its_block),
      cmocka_unit_test(test_feed_split_at_every_byte),
      cmocka_unit_test(test_stale_bytes_before_header),
      cmocka_unit_test(test_two_sessions_back_to_back),
      cmocka_unit_test(test_reset_starts_new_session),
      cmocka_unit_test(test_stop_from_callback),
      cmocka_unit_test(test_no_allocation_per_event),
      cmocka_unit_test(test_data_end_inside_last_block),
      cmocka_unit_test(test_testlog_part_reports_truncation),
      cmocka_unit_test(test_missing_end_marker_warns),
      cmocka_unit_test(test_out_of_memory_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
