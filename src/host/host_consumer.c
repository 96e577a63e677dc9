/* host_consumer.c: the host as the consumer of el_src_pump
 * (src/source/src_consumer.h): the one session protocol every command that
 * runs Lua over a source uses (run, repl, the daemon). A session begins with
 * reset (the previous one ends, the decoder expects a header), its bytes
 * are fed with the time they were received, and it ends with finish; a
 * recorded file is scanned ahead so its sessions are dated exactly from
 * their first event (spec eventlog-format.md §3.5). */
#include <string.h>

#include "host_internal.h"

static void c_reset(void *ud) {
  el_host_t *h = ud;
  el_host_session_end(h);
  el_ev_decoder_reset(h->dec);
  el_host_set_hints(h, NULL, 0);  /* hints belong to one connection */
}

static int c_feed(void *ud, const uint8_t *buf, size_t len) {
  return el_host_feed(ud, buf, len);
}

static int c_finish(void *ud) {
  el_host_t *h = ud;
  int rc = el_ev_decoder_finish(h->dec);
  el_host_session_end(h);
  return rc;
}

static const el_diag_t *c_diag(void *ud) {
  return el_ev_decoder_diag(((el_host_t *)ud)->dec);
}

static void c_received(void *ud, uint64_t by_unix_ns, int live) {
  el_host_received(ud, by_unix_ns, live);
}

/* {====== scanning a recorded file ======} */

#define MAX_SCAN_SESSIONS 4096

typedef struct {
  el_host_hint_t *v;
  uint16_t (*caps)[64];     /* capability list per session (first 64) */
  size_t n, cap;
  uint8_t seen[EL__MAX_CAPS];
  int wct_type;
  int over;                 /* more sessions than kept */
} scan_t;

static el_host_hint_t *scan_cur(scan_t *s) {
  return s->n ? &s->v[s->n - 1] : NULL;
}

static int scan_header(void *ud, const el_ev_header_t *hdr) {
  scan_t *s = ud;
  (void)hdr;
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 8;
    if (ncap > MAX_SCAN_SESSIONS) {
      s->over = 1;
      return 1;  /* stop: the hints would not line up after this */
    }
    el_host_hint_t *nv = el_realloc(s->v, ncap * sizeof *nv);
    if (!nv) return 1;
    s->v = nv;
    void *nc = el_realloc(s->caps, ncap * sizeof *s->caps);
    if (!nc) return 1;
    s->caps = nc;
    s->cap = ncap;
  }
  memset(&s->v[s->n], 0, sizeof s->v[0]);
  memset(s->seen, 0, sizeof s->seen);
  s->n++;
  return 0;
}

static void scan_cap(scan_t *s, el_host_hint_t *hi, uint64_t cap) {
  if (cap >= EL__MAX_CAPS || s->seen[cap] || hi->ncaps >= 64) return;
  s->seen[cap] = 1;
  size_t i = hi->ncaps++;
  uint16_t *c = s->caps[hi - s->v];
  while (i > 0 && c[i - 1] > cap) {
    c[i] = c[i - 1];
    i--;
  }
  c[i] = (uint16_t)cap;
}

static int scan_event(void *ud, const el_ev_event_t *ev) {
  scan_t *s = ud;
  el_host_hint_t *hi = scan_cur(s);
  if (!hi || !ev->known) return 0;
  if (ev->t_ns > hi->max_t) hi->max_t = ev->t_ns;
  if (ev->type == 18 && ev->nfields >= 3) {  /* BLOCK_MARKER */
    if (ev->v[1].u > hi->max_t) hi->max_t = ev->v[1].u;
    if (ev->v[2].u != EL_EV_NO_CAP) scan_cap(s, hi, ev->v[2].u);
  } else if ((int)ev->type == s->wct_type && ev->nfields >= 3 &&
             !hi->has_wall_clock) {
    uint64_t sec = ev->v[1].u, nsec = ev->v[2].u;
    if (sec < (uint64_t)INT64_MAX / 1000000000u) {
      hi->has_wall_clock = 1;
      hi->start_unix_ns = (int64_t)(sec * 1000000000u + nsec) -
                          (int64_t)(ev->t_ns > (uint64_t)INT64_MAX
                                        ? (uint64_t)INT64_MAX
                                        : ev->t_ns);
    }
  }
  return 0;
}

static void c_scan(void *ud, const uint8_t *buf, size_t len) {
  el_host_t *h = ud;
  scan_t s;
  memset(&s, 0, sizeof s);
  s.wct_type = el_ev_type_by_name("WALL_CLOCK_TIME");
  el_ev_sink_t sink = {.ud = &s, .on_header = scan_header,
                       .on_event = scan_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  if (d) {
    el_ev_decoder_feed(d, buf, len);
    el_ev_decoder_free(d);
  }
  for (size_t i = 0; i < s.n; i++) s.v[i].caps = s.caps[i];
  if (!s.over && s.n) el_host_set_hints(h, s.v, s.n);
  el_free(s.v);
  el_free(s.caps);
}

void el_host_consumer(el_host_t *h, el_src_consumer_t *c) {
  memset(c, 0, sizeof *c);
  c->ud = h;
  c->reset = c_reset;
  c->feed = c_feed;
  c->finish = c_finish;
  c->diag = c_diag;
  c->received = c_received;
  c->scan = c_scan;
}
