/* test_eventlog_util.h: helpers shared by the decoder's unit tests:
 * reading test logs, a digest sink that hashes every event and field, and a
 * tiny builder for hand-made streams (bytes written exactly as spec
 * §1.2-§1.4 describes, big-endian). */
#ifndef TEST_EVENTLOG_UTIL_H
#define TEST_EVENTLOG_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventlog/eventlog.h"

/* Read a whole file; NULL if missing. Caller frees. */
static inline uint8_t *tu_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
  if (fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return p;
}

static inline const char *tu_logs_dir(void) {
  const char *d = getenv("EL_EVENTLOGS");
  return d ? d : EL_SOURCE_DIR "/tests/data/eventlogs";
}

/* Small logs: every file here is decoded at every split point. */
static const char *const tu_small_logs[] = {
    "ghc-events/biographical-samples.eventlog",
    "ghc-events/ghc-9.2-events.eventlog",
    "ghc-events/hello-ghc-8.2.2.eventlog",
    "ghc-events/nonmoving-gc.eventlog",
    "ghc-events/parallelTest.eventlog",
    "ghc-events/sleep.h.eventlog",
    "ghc-events/sleep.hC.eventlog",
    "ghc-events/sleep.hd.eventlog",
    "ghc-events/testlog-part.eventlog",
    "ghc-events/ticky-ticky.eventlog",
    "ghc-events/time-prof.eventlog",
    "ghc-events/trace-binary-event.eventlog",
    "ghc-events/unicode.eventlog",
};

static inline uint8_t *tu_read_log(const char *rel, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", tu_logs_dir(), rel);
  return tu_read(path, len);
}

/* {====== digest sink ======} */

typedef struct {
  uint64_t h;          /* FNV-1a over everything delivered */
  uint64_t events, headers, data_ends, warnings;
  uint64_t max_offset; /* offset of the last event */
  uint64_t *offsets;   /* optional: offsets of events (cap noffsets) */
  size_t noffsets, capoffsets;
  uint64_t data_end_off;
  int stop_after;      /* stop when events reaches this (0 = never) */
} tu_digest_t;

static inline void tu_mix(tu_digest_t *g, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) {
    g->h ^= b[i];
    g->h *= 1099511628211ull;
  }
}

static inline int tu_on_header(void *ud, const el_ev_header_t *h) {
  tu_digest_t *g = ud;
  g->headers++;
  tu_mix(g, &h->ndecls, sizeof h->ndecls);
  tu_mix(g, &h->offset, sizeof h->offset);
  for (size_t i = 0; i < h->ndecls; i++) {
    tu_mix(g, &h->decls[i].id, 2);
    tu_mix(g, &h->decls[i].size, 2);
    tu_mix(g, h->decls[i].desc.p, h->decls[i].desc.len);
  }
  return 0;
}

static inline int tu_on_event(void *ud, const el_ev_event_t *e) {
  tu_digest_t *g = ud;
  g->events++;
  g->max_offset = e->offset;
  if (g->offsets) {
    if (g->noffsets == g->capoffsets) {
      g->capoffsets = g->capoffsets ? g->capoffsets * 2 : 1024;
      g->offsets = realloc(g->offsets, g->capoffsets * sizeof *g->offsets);
    }
    g->offsets[g->noffsets++] = e->offset;
  }
  tu_mix(g, &e->type, 2);
  tu_mix(g, &e->cap, 2);
  tu_mix(g, &e->t_ns, 8);
  tu_mix(g, &e->offset, 8);
  tu_mix(g, &e->known, 1);
  tu_mix(g, &e->layout, 1);
  tu_mix(g, &e->nfields, 1);
  tu_mix(g, e->payload, e->payload_len);
  const el_ev_type_info_t *t = el_ev_type_info(e->type);
  for (unsigned i = 0; e->known && t && i < e->nfields; i++) {
    tu_mix(g, &e->v[i].u, 8);
    if (t->fields[i].kind != EL_EV_U64 && t->fields[i].kind != EL_EV_I64) {
      tu_mix(g, &e->v[i].s.len, sizeof e->v[i].s.len);
      if (e->v[i].s.len)
        tu_mix(g, e->v[i].s.p, e->v[i].s.len);
    }
  }
  return g->stop_after && g->events >= (uint64_t)g->stop_after;
}

static inline void tu_on_data_end(void *ud, uint64_t off) {
  tu_digest_t *g = ud;
  g->data_ends++;
  g->data_end_off = off;
  tu_mix(g, &off, 8);
}

static inline void tu_on_warning(void *ud, const el_diag_t *d) {
  tu_digest_t *g = ud;
  g->warnings++;
  tu_mix(g, &d->offset, 8);
}

static inline el_ev_sink_t tu_sink(tu_digest_t *g) {
  el_ev_sink_t s = {.ud = g,
                    .on_header = tu_on_header,
                    .on_event = tu_on_event,
                    .on_data_end = tu_on_data_end,
                    .on_warning = tu_on_warning};
  return s;
}

/* {====== stream builder ======} */

typedef struct {
  uint8_t b[65536 * 4];
  size_t n;
} tu_buf_t;

/* Feed p[0..n) to d in pieces of chunk bytes (>= 1), then finish. Returns
 * 0, or the first non-zero result of a feed (nothing more fed) or of
 * the finish. */
static inline int tu_feed_chunks(el_ev_decoder_t *d, const uint8_t *p, size_t n,
                                 size_t chunk) {
  for (size_t i = 0; i < n; i += chunk) {
    size_t k = n - i < chunk ? n - i : chunk;
    int rc = el_ev_decoder_feed(d, p + i, k);
    if (rc != 0) return rc;
  }
  return el_ev_decoder_finish(d);
}

static inline void tu_u8(tu_buf_t *b, uint8_t v) { b->b[b->n++] = v; }
static inline void tu_u16(tu_buf_t *b, uint16_t v) {
  tu_u8(b, (uint8_t)(v >> 8));
  tu_u8(b, (uint8_t)v);
}
static inline void tu_u32(tu_buf_t *b, uint32_t v) {
  tu_u16(b, (uint16_t)(v >> 16));
  tu_u16(b, (uint16_t)v);
}
static inline void tu_u64(tu_buf_t *b, uint64_t v) {
  tu_u32(b, (uint32_t)(v >> 32));
  tu_u32(b, (uint32_t)v);
}
static inline void tu_bytes(tu_buf_t *b, const void *p, size_t n) {
  memcpy(b->b + b->n, p, n);
  b->n += n;
}
static inline void tu_str(tu_buf_t *b, const char *s) {
  tu_bytes(b, s, strlen(s));
}

static inline void tu_hdr_begin(tu_buf_t *b) { tu_str(b, "hdrbhetb"); }
static inline void tu_decl(tu_buf_t *b, uint16_t id, uint16_t size,
                    const char *desc) {
  tu_str(b, "etb");
  tu_u8(b, 0);
  tu_u16(b, id);
  tu_u16(b, size);
  tu_u32(b, (uint32_t)strlen(desc));
  tu_str(b, desc);
  tu_u32(b, 0);
  tu_str(b, "ete");
  tu_u8(b, 0);
}
static inline void tu_hdr_end(tu_buf_t *b) { tu_str(b, "hetehdredatb"); }
static inline void tu_ev(tu_buf_t *b, uint16_t type, uint64_t t) {
  tu_u16(b, type);
  tu_u64(b, t);
}

#endif
