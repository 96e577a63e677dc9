/* fuzz_decoder.c: libFuzzer target for the eventlog decoder and the show
 * formatter (src/eventlog). Built only with EL_FUZZ=ON (clang).
 *
 * Each input is decoded twice, whole and split at a point taken from its
 * last byte; both runs must deliver the same events (chunking invariance,
 * eventlog.h), every reported offset must lie inside the input, and the
 * show formatter must accept the input without crashing. */
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

static uint64_t run(const uint8_t *p, size_t n, size_t split) {
  fz_t f = {.h = 14695981039346656037ull, .len = n};
  el_ev_sink_t s = {.ud = &f, .on_event = on_event, .on_header = on_header};
  el_ev_decoder_t *d = el_ev_decoder_new(&s);
  if (!d)
    return 0;
  int r1 = el_ev_decoder_feed(d, p, split);
  if (r1 && el_ev_decoder_diag(d)->offset > n)
    abort();
  int r2 = el_ev_decoder_feed(d, p + split, n - split);
  if (r2 && el_ev_decoder_diag(d)->offset > n)
    abort();
  int rc = el_ev_decoder_finish(d);
  if (rc && el_ev_decoder_diag(d)->offset > n)
    abort();
  mix(&f, &rc, sizeof rc);
  el_ev_decoder_free(d);
  return f.h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t split = size ? (size * data[size - 1]) / 256 : 0;
  if (run(data, size, size) != run(data, size, split))
    abort();
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
