/* rp_scan.c: the scan ahead of a recorded file (el_rp_scan, report.h), as
 * the host's own (src/host/host_consumer.c: each session's
 * WALL_CLOCK_TIME, largest time and capabilities, handed over with
 * el_host_set_hints) but in bounded memory: the pump hands the scan the
 * whole file mapped read-only, and decoding it in one go makes every page
 * of the mapping resident (a 1 GB file: 1 GB of RSS, although only
 * file-backed). Here the mapping is decoded in windows of SCAN_WINDOW
 * bytes and each window's pages are dropped (MADV_DONTNEED) once the
 * decoder has moved past them: the decoder copies an event cut by a
 * window's end into its own buffer, so nothing points into dropped pages.
 * Spec: eventlog-format.md §3.5 (absolute time), docs/lua-api.md §3. */
#include <setjmp.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../host/host.h"
#include "../common/el_grow.h"
#include "../common/el_mapguard.h"
#include "rp_internal.h"

#define SCAN_WINDOW ((size_t)8 << 20)
#define SCAN_SESSIONS 4096 /* as the host: more, and no hints at all */
#define SCAN_CAPS 64       /* capabilities listed per session */
#define SCAN_MAX_CAP 1024

typedef struct {
  el_host_hint_t *v;
  uint16_t (*caps)[SCAN_CAPS];
  size_t n, vcap, capscap; /* sessions; allocated in v, in caps */
  uint8_t seen[SCAN_MAX_CAP];
  int wct_type;
  int over;
} scan_t;

static int on_header(void *ud, const el_ev_header_t *hdr) {
  scan_t *s = ud;
  (void)hdr;
  if (s->n >= SCAN_SESSIONS) {
    s->over = 1;
    return 1;
  }
  if (el_grow(&s->v, &s->vcap, s->n + 1, sizeof *s->v) < 0 ||
      el_grow(&s->caps, &s->capscap, s->n + 1, sizeof *s->caps) < 0)
    return s->over = 1;
  memset(&s->v[s->n], 0, sizeof s->v[0]);
  memset(s->seen, 0, sizeof s->seen);
  s->n++;
  return 0;
}

static void add_cap(scan_t *s, el_host_hint_t *hi, uint64_t cap) {
  if (cap >= SCAN_MAX_CAP || s->seen[cap] || hi->ncaps >= SCAN_CAPS) return;
  s->seen[cap] = 1;
  uint16_t *c = s->caps[hi - s->v];
  size_t i = hi->ncaps++;
  while (i > 0 && c[i - 1] > cap) {
    c[i] = c[i - 1];
    i--;
  }
  c[i] = (uint16_t)cap;
}

static int on_event(void *ud, const el_ev_event_t *ev) {
  scan_t *s = ud;
  el_host_hint_t *hi = s->n ? &s->v[s->n - 1] : NULL;
  if (!hi) return 0;
  if (ev->cap == EL_EV_NO_CAP && ev->type != 18) { /* see el_host_hint_t */
    hi->has_nocap = 1;
    if (ev->offset > hi->nocap_last_offset) hi->nocap_last_offset = ev->offset;
    if (ev->type < 256)
      hi->nocap_types[ev->type >> 6] |= (uint64_t)1 << (ev->type & 63);
    else
      hi->nocap_high = 1;
  }
  if (!ev->known) return 0;
  if (ev->t_ns > hi->max_t) hi->max_t = ev->t_ns;
  if (ev->type == 18 && ev->nfields >= 3) { /* BLOCK_MARKER */
    if (ev->v[1].u > hi->max_t) hi->max_t = ev->v[1].u;
    if (ev->v[2].u != EL_EV_NO_CAP) add_cap(s, hi, ev->v[2].u);
  } else if ((int)ev->type == s->wct_type && ev->nfields >= 3 &&
             !hi->has_wall_clock) {
    uint64_t sec = ev->v[1].u, nsec = ev->v[2].u;
    if (sec < (uint64_t)INT64_MAX / 1000000000u) {
      hi->has_wall_clock = 1;
      hi->start_unix_ns =
          (int64_t)(sec * 1000000000u + nsec) -
          (int64_t)(ev->t_ns > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX
                                                   : ev->t_ns);
    }
  }
  return 0;
}

/* Drop the pages of [lo, hi): everything before hi has been decoded, so
 * the page holding lo may go too. The mapping starts on a page. */
static void drop(const uint8_t *lo, const uint8_t *hi) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t a = (uintptr_t)lo & ~(page - 1);
  uintptr_t b = (uintptr_t)hi & ~(page - 1);
  if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Decode buf in windows, dropping each window's pages after it. */
static void feed_windows(el_ev_decoder_t *d, scan_t *s, const uint8_t *buf,
                         size_t len) {
  for (size_t off = 0; off < len && !s->over;) {
    size_t n = len - off < SCAN_WINDOW ? len - off : SCAN_WINDOW;
    int rc = el_ev_decoder_feed(d, buf + off, n);
    drop(buf + off, buf + off + n);
    off += n;
    if (rc < 0) break; /* corrupt: the hints so far still hold */
  }
}

/* Hand the sessions found to h, unless the scan was cut short. */
static void hand_over(struct el_host_s *h, scan_t *s) {
  for (size_t i = 0; i < s->n; i++) s->v[i].caps = s->caps[i];
  if (!s->over && s->n) el_host_set_hints(h, s->v, s->n);
}

void el_rp_scan(struct el_host_s *h, const uint8_t *buf, size_t len) {
  /* On the heap: what the decoder's sink changes after sigsetjmp is no
   * automatic variable of this function, so it is intact after a fault. */
  scan_t *s = el_calloc(1, sizeof *s);
  if (!s) return;
  s->wct_type = el_ev_type_by_name("WALL_CLOCK_TIME");
  el_ev_sink_t sink = {.ud = s, .on_header = on_header, .on_event = on_event};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  el_mapguard_t g;
  if (!d || el_mapguard_push(&g, buf, len) < 0) {
    el_ev_decoder_free(d);
    el_free(s);
    return;
  }
  if (sigsetjmp(g.env, 1)) {
    /* The file shrank (el_mapguard.h): no hints; read(2) meets the new
     * end and reports it. s and d are as the fault left them. */
    el_mapguard_pop(&g);
    s->over = 1;
  } else {
    feed_windows(d, s, buf, len);
    el_mapguard_pop(&g);
  }
  el_ev_decoder_free(d);
  hand_over(h, s);
  el_free(s->v);
  el_free(s->caps);
  el_free(s);
}
