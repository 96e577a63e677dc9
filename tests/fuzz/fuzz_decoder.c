/* fuzz_decoder.c: libFuzzer target for the eventlog decoder and the show
 * formatter (src/eventlog). Built only with EL_FUZZ=ON (clang).
 *
 * Each input is decoded twice, whole and split at a point taken from its
 * last byte; both runs must deliver the same events (chunking invariance,
 * eventlog.h), every reported offset must lie inside the input, and the
 * show formatter must accept the input without crashing. Then a raw tee
 * of two eventlog-socket connections is built from it (24 stray bytes +
 * the input cut at a point taken from its second-last byte, 24 stray
 * bytes + the whole input): whole, split, and whole with EL_EV_OPT_LIVE
 * must agree. el_ev_scan_sessions must report offsets inside the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventlog/eventlog.h"

typedef struct {
  uint64_t h, events, len;
} fz_t;

static void mix(fz_t *f, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++)
    f->h = (f->h ^ b[i]) * 1099511628211ull;
}

static int on_event(void *ud, const el_ev_event_t *e) {
  fz_t *f = ud;
  if (e->offset >= f->len)
    abort();
  f->events++;
  mix(f, &e->type, 2);
  mix(f, &e->t_ns, 8);
  mix(f, &e->offset, 8);
  mix(f, &e->cap, 2);
  mix(f, e->payload, e->payload_len);
  const el_ev_type_info_t *t = el_ev_type_info(e->type);
  for (unsigned i = 0; e->known && t && i < e->nfields; i++) {
    mix(f, &e->v[i].u, 8);
    if (t->fields[i].kind != EL_EV_U64 && e->v[i].s.len)
      mix(f, e->v[i].s.p, e->v[i].s.len);
  }
  return 0;
}

static int on_header(void *ud, const el_ev_header_t *h) {
  fz_t *f = ud;
  for (size_t i = 0; i < h->ndecls; i++)
    mix(f, h->decls[i].desc.p, h->decls[i].desc.len);
  return 0;
}

/* The digest of decoding p[0..n) fed in two pieces split at split, with
 * opts; with_rc: the finish status counts too (with EL_EV_OPT_LIVE an error
 * in the last bytes may be reported by feed instead of finish). */
static uint64_t run(const uint8_t *p, size_t n, size_t split,
                    unsigned opts, int with_rc) {
  fz_t f = {.h = 14695981039346656037ull, .len = n};
  el_ev_sink_t s = {.ud = &f, .on_event = on_event, .on_header = on_header};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  if (!d)
    return 0;
  el_ev_decoder_set_opts(d, opts);
  int r1 = el_ev_decoder_feed(d, p, split);
  if (r1 && el_ev_decoder_diag(d)->offset > n)
    abort();
  int r2 = el_ev_decoder_feed(d, p + split, n - split);
  if (r2 && el_ev_decoder_diag(d)->offset > n)
    abort();
  int rc = el_ev_decoder_finish(d);
  if (rc && el_ev_decoder_diag(d)->offset > n)
    abort();
  if (with_rc)
    mix(&f, &rc, sizeof rc);
  el_ev_decoder_free(d);
  return f.h;
}

/* eventlog-socket's stray bytes before a connection's header: a global
 * BLOCK_MARKER (spec §1.5, §5.4). */
static const uint8_t stray[24] = {0x00, 0x12, 0, 0, 0, 0, 0, 0, 0, 7,
                                  0,    0,    9, 0, 0, 0, 0, 0, 0, 0,
                                  0,    8,    0xFF, 0xFF};

static void tee_checks(const uint8_t *data, size_t size) {
  size_t cut = (size * data[size - 2]) / 256;
  size_t tn = 48 + cut + size;
  uint8_t *t = malloc(tn);
  if (!t)
    return;
  memcpy(t, stray, 24);
  memcpy(t + 24, data, cut);
  memcpy(t + 24 + cut, stray, 24);
  memcpy(t + 48 + cut, data, size);
  size_t split = (tn * data[0]) / 256;
  if (run(t, tn, tn, 0, 1) != run(t, tn, split, 0, 1) ||
      run(t, tn, tn, 0, 0) != run(t, tn, tn, EL_EV_OPT_LIVE, 0))
    abort();
  free(t);
}

static void scan_checks(const uint8_t *data, size_t size) {
  el_ev_scan_t sc;
  el_ev_scan_sessions(data, size, &sc);
  for (size_t i = 0; i < sc.nsessions; i++)
    if (sc.sessions[i].header_offset >= size ||
        sc.sessions[i].end_offset > size)
      abort();
  if (sc.status && sc.diag.offset > size)
    abort();
  el_ev_scan_free(&sc);
}

/* The entry point libFuzzer calls with each input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t split = size ? (size * data[size - 1]) / 256 : 0;
  if (run(data, size, size, 0, 1) != run(data, size, split, 0, 1))
    abort();
  if (size >= 2 && size <= 32768)
    tee_checks(data, size);
  scan_checks(data, size);
  static FILE *null;
  if (!null)
    null = fopen("/dev/null", "w");
  el_ev_show_t *s = el_ev_show_new(null);
  if (s) {
    el_ev_show_feed(s, data, split);
    el_ev_show_feed(s, data + split, size - split);
    el_ev_show_finish(s);
    el_ev_show_free(s);
  }
  return 0;
}
