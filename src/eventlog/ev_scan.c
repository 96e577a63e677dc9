/* ev_scan.c: el_ev_scan_sessions, the fast per-session clock and
 * capability scan of a whole eventlog in memory (eventlog.h).
 *
 * No parser of its own: the decoder runs with EL_EV_OPT_SKIP_CAP_BLOCKS,
 * fed the whole buffer in one call, so a capability block costs its
 * marker (spec §1.5) and its body is jumped over by the declared size; the
 * global blocks (cap 0xFFFF), which hold WALL_CLOCK_TIME and CAP_CREATE
 * (§2.4), are decoded. A sink collects, per session (header, §4.7):
 *   - WALL_CLOCK_TIME (§3.5): anchor = unix_sec*1e9 + nsec - t, the Unix
 *     time of RTS time 0, in 128-bit arithmetic clamped to int64;
 *   - capabilities: BLOCK_MARKER.cap (!= 0xFFFF) and CAP_CREATE.cap, as a
 *     bitmap turned into a sorted list when the session ends;
 *   - the largest timestamp: every decoded event's, and each block
 *     marker's start and end time (§1.5: end_time bounds the block's
 *     events, whose own times are not read);
 *   - the first OSPROCESS_PID, OSPROCESS_PPID, RTS_IDENTIFIER and
 *     PROGRAM_ARGS (§2.4), the strings copied;
 *   - the events without a capability (§3.6): the offset of the last
 *     one and the set of their types. */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/el_grow.h"
#include "../common/el_mapguard.h"
#include "eventlog_internal.h"

typedef struct {
  el_ev_scan_t *out;
  el_ev_scan_session_t *cur;   /* the open session, NULL before one */
  uint64_t capbits[65536 / 64];/* capabilities of the open session */
  size_t cap_hi;               /* capbits words below this may be set */
  size_t scap;                 /* sessions[] capacity */
  uint64_t varbits[65536 / 64];/* ids declared variable-size (12-byte
                                  event header) in the open session */
  int nomem;
  uint64_t len;                /* bytes in the buffer */
} scan_t;

/* Unix ns of RTS time 0: sec*1e9 + nsec - t, clamped to int64. */
static int64_t anchor_ns(uint64_t sec, uint64_t nsec, uint64_t t) {
  __int128 v = (__int128)sec * 1000000000 + (__int128)nsec - (__int128)t;
  if (v > INT64_MAX)
    return INT64_MAX;
  if (v < INT64_MIN)
    return INT64_MIN;
  return (int64_t)v;
}

static void add_cap(scan_t *s, uint64_t cap) {
  if (cap >= EL_EV_NO_CAP)
    return;
  s->capbits[cap >> 6] |= (uint64_t)1 << (cap & 63);
  if ((cap >> 6) + 1 > s->cap_hi)
    s->cap_hi = (cap >> 6) + 1;
}

static void see_time(scan_t *s, uint64_t t) {
  if (t > s->cur->max_t_ns)
    s->cur->max_t_ns = t;
}

/* Close the open session: its capability list, its end. */
static void close_session(scan_t *s) {
  el_ev_scan_session_t *c = s->cur;
  if (!c)
    return;
  size_t n = 0;
  for (size_t w = 0; w < s->cap_hi; w++)
    n += (size_t)__builtin_popcountll(s->capbits[w]);
  if (n) {
    c->caps = el_malloc(n * sizeof *c->caps);
    if (!c->caps) {
      s->nomem = 1;
    } else {
      for (size_t w = 0; w < s->cap_hi; w++)
        for (uint64_t b = s->capbits[w]; b; b &= b - 1)
          c->caps[c->ncaps++] = (uint16_t)(w * 64 + (size_t)__builtin_ctzll(b));
    }
  }
  memset(s->capbits, 0, s->cap_hi * sizeof s->capbits[0]);
  s->cap_hi = 0;
  s->cur = NULL;
}

static int on_header(void *ud, const el_ev_header_t *h) {
  scan_t *s = ud;
  close_session(s);
  el_ev_scan_t *o = s->out;
  if (el_grow(&o->sessions, &s->scap, o->nsessions + 1, sizeof *o->sessions)) {
    s->nomem = 1;
    return 1; /* stop: report what was found */
  }
  s->cur = &o->sessions[o->nsessions++];
  memset(s->cur, 0, sizeof *s->cur);
  s->cur->header_offset = h->offset;
  memset(s->varbits, 0, sizeof s->varbits);
  for (size_t i = 0; i < h->ndecls; i++)
    if (h->decls[i].size == EL_EV_VARIABLE && !h->decls[i].overridden)
      s->varbits[h->decls[i].id >> 6] |= (uint64_t)1 << (h->decls[i].id & 63);
  return 0;
}

/* A copy of v into *dst (NUL-terminated), unless *dst is set already (the
 * first one wins). The pointer is stored before the bytes are copied: a
 * fault while copying from a shrunk mapping leaves nothing unowned. */
static void keep_str(scan_t *s, char **dst, size_t *len, el_strview_t v) {
  if (*dst)
    return;
  *dst = el_malloc(v.len + 1);
  if (!*dst) {
    s->nomem = 1;
    return;
  }
  if (v.len)
    memcpy(*dst, v.p, v.len);
  (*dst)[v.len] = '\0';
  *len = v.len;
}

/* The init events of §2.4 the host's session table holds. */
static void see_init(scan_t *s, const el_ev_event_t *ev) {
  el_ev_scan_session_t *c = s->cur;
  if (ev->malformed || ev->nfields < 2)
    return;
  switch (ev->type) {
  case EL_EV_OSPROCESS_PID:
    if (!c->has_pid)
      c->pid = ev->v[1].u;
    c->has_pid = 1;
    break;
  case EL_EV_OSPROCESS_PPID:
    if (!c->has_ppid)
      c->ppid = ev->v[1].u;
    c->has_ppid = 1;
    break;
  case EL_EV_RTS_IDENTIFIER:
    keep_str(s, &c->rts_id, &c->rts_id_len, ev->v[1].s);
    break;
  case EL_EV_PROGRAM_ARGS:
    keep_str(s, &c->args, &c->args_len, ev->v[1].s);
    break;
  }
}

/* An event without a capability (a global block's, or outside blocks). */
static void see_nocap(el_ev_scan_session_t *c, const el_ev_event_t *ev) {
  c->has_nocap = 1;
  if (ev->offset > c->nocap_last_offset)
    c->nocap_last_offset = ev->offset;
  if (ev->type < 256)
    c->nocap_types[ev->type >> 6] |= (uint64_t)1 << (ev->type & 63);
  else
    c->nocap_high = 1;
}

static int on_event(void *ud, const el_ev_event_t *ev) {
  scan_t *s = ud;
  el_ev_scan_session_t *c = s->cur;
  if (!c)
    return 0;
  int var = (s->varbits[ev->type >> 6] >> (ev->type & 63)) & 1;
  uint64_t end = ev->offset + (var ? 12 : 10) + ev->payload_len;
  if (ev->type == EL_EV_BLOCK_MARKER && ev->known && ev->v[0].u >= 24 &&
      ev->v[0].u <= (16u << 20))
    end = ev->offset + ev->v[0].u; /* the body, even if not read */
  if (end > s->len)
    end = s->len; /* a block cut by the end of the buffer */
  if (end > c->end_offset)
    c->end_offset = end;
  see_time(s, ev->t_ns);
  if (ev->cap == EL_EV_NO_CAP && ev->type != EL_EV_BLOCK_MARKER)
    see_nocap(c, ev);
  if (!ev->known)
    return 0;
  switch (ev->type) {
  case EL_EV_BLOCK_MARKER:
    see_time(s, ev->v[1].u);
    add_cap(s, ev->v[2].u);
    break;
  case EL_EV_CAP_CREATE:
    add_cap(s, ev->v[0].u);
    break;
  case EL_EV_WALL_CLOCK_TIME:
    c->has_wall_clock = 1;
    c->wall_t_ns = ev->t_ns;
    c->anchor_unix_ns = anchor_ns(ev->v[1].u, ev->v[2].u, ev->t_ns);
    break;
  default:
    see_init(s, ev);
  }
  return 0;
}

static void on_data_end(void *ud, uint64_t off) {
  scan_t *s = ud;
  if (!s->cur)
    return;
  s->cur->data_end = 1;
  s->cur->end_offset = off + 2;
}

static void on_warning(void *ud, const el_diag_t *dg) {
  scan_t *s = ud;
  s->out->warnings++;
  if (dg->code && !s->out->status) {
    s->out->status = dg->code;
    s->out->diag = *dg;
  }
}

#define SCAN_WINDOW ((size_t)16 << 20) /* bytes fed at a time (mapped) */

/* A feed call returned rc: a problem of the input (the decoder went on
 * past it) is kept in out when it is the first, as one feed call of the
 * whole input would report it; returns rc when decoding must stop
 * (EL_ESTOPPED, EL_ENOMEM), else 0. */
static int keep_first(el_ev_scan_t *out, el_ev_decoder_t *d, int rc) {
  if (!rc || rc == EL_ESTOPPED || rc == EL_ENOMEM)
    return rc;
  if (!out->status || el_ev_decoder_diag(d)->offset < out->diag.offset) {
    out->status = rc;
    out->diag = *el_ev_decoder_diag(d);
  }
  return 0;
}

/* Feed buf to d; with `release`, in windows, giving each window's pages
 * back to the kernel once the decoder is past them. */
static int scan_feed(el_ev_decoder_t *d, el_ev_scan_t *out, const uint8_t *buf,
                     size_t len, int release) {
  if (!release)
    return keep_first(out, d, el_ev_decoder_feed(d, buf, len));
  long page = sysconf(_SC_PAGESIZE);
  size_t pg = page > 0 ? (size_t)page : 4096, dropped = 0;
  for (size_t off = 0; off < len;) {
    size_t n = len - off < SCAN_WINDOW ? len - off : SCAN_WINDOW;
    int rc = keep_first(out, d, el_ev_decoder_feed(d, buf + off, n));
    if (rc)
      return rc;
    off += n;
    size_t upto = (size_t)((uintptr_t)(buf + off) & ~(uintptr_t)(pg - 1)) -
                  (size_t)(uintptr_t)buf;
    if (off < len && upto > dropped + pg) {
      /* The decoder keeps no view into bytes it has consumed. */
      madvise((void *)(buf + dropped), upto - dropped, MADV_DONTNEED);
      dropped = upto;
    }
  }
  return 0;
}

/* Begin a scan of len bytes into out (cleared): 1, with its sink's state
 * in *sp and the decoder in *dp, skipping capability bodies; 0 when len
 * is 0 (nothing to scan); EL_ENOMEM. */
static int scan_open(el_ev_scan_t *out, uint64_t len, scan_t **sp,
                     el_ev_decoder_t **dp) {
  memset(out, 0, sizeof *out);
  out->diag.event_type = -1;
  if (!len)
    return 0;
  scan_t *s = el_calloc(1, sizeof *s);
  if (!s)
    return EL_ENOMEM;
  s->out = out;
  s->len = len;
  el_ev_sink_t sink = {.ud = s,
                       .on_header = on_header,
                       .on_event = on_event,
                       .on_data_end = on_data_end,
                       .on_warning = on_warning};
  el_ev_decoder_t *d = el_ev_decoder_new(&sink);
  if (!d) {
    el_free(s);
    return EL_ENOMEM;
  }
  el_ev_decoder_set_opts(d, EL_EV_OPT_SKIP_CAP_BLOCKS);
  el__ev_decoder_set_input_end(d, len);
  *sp = s;
  *dp = d;
  return 1;
}

/* A read of the input at byte `at` found no data (the file shrank): the
 * decoder and s are freed as they were left; out keeps the sessions found
 * (caps of the open one are lost) and says so. */
static int shrunk(el_ev_scan_t *out, el_ev_decoder_t *d, scan_t *s,
                  uint64_t at) {
  out->status = EL_ESHRUNK;
  memset(&out->diag, 0, sizeof out->diag);
  out->diag.code = EL_ESHRUNK;
  out->diag.offset = at;
  out->diag.event_type = -1;
  snprintf(out->diag.msg, sizeof out->diag.msg,
           "the file shrank while being read: no data at byte %llu "
           "any more",
           (unsigned long long)at);
  out->stats = *el_ev_decoder_stats(d);
  el_ev_decoder_free(d);
  el_free(s);
  return EL_ESHRUNK;
}

/* End a scan whose feeding returned rc: the decoder finished (unless
 * memory ran out), the open session closed, the first problem kept in
 * out; d and s freed. Returns what el_ev_scan_sessions returns. */
static int scan_close(el_ev_scan_t *out, el_ev_decoder_t *d, scan_t *s,
                      int rc) {
  int fin = s->nomem ? 0 : el_ev_decoder_finish(d);
  close_session(s);
  if (rc == 0 || rc == EL_ESTOPPED)
    rc = fin;
  if (rc && rc != EL_ESTOPPED && rc != EL_ENOMEM) {
    /* The first problem wins over later warnings: it decides how far
     * the results can be trusted. */
    if (!out->status || el_ev_decoder_diag(d)->offset < out->diag.offset) {
      out->status = rc;
      out->diag = *el_ev_decoder_diag(d);
    }
  }
  out->stats = *el_ev_decoder_stats(d);
  int nomem = s->nomem || rc == EL_ENOMEM;
  el_ev_decoder_free(d);
  el_free(s);
  if (nomem)
    return EL_ENOMEM;
  return out->status;
}

static int scan(const uint8_t *buf, size_t len, el_ev_scan_t *out,
                int release) {
  scan_t *s;
  el_ev_decoder_t *d;
  int rc = scan_open(out, len, &s, &d);
  if (rc <= 0)
    return rc;
  el_mapguard_t g;
  rc = el_mapguard_push(&g, buf, len);
  if (rc < 0) {
    el_ev_decoder_free(d);
    el_free(s);
    return rc;
  }
  if (sigsetjmp(g.env, 1)) {
    el_mapguard_pop(&g);
    return shrunk(out, d, s, g.fault_offset);
  }
  rc = scan_feed(d, out, buf, len, release);
  rc = scan_close(out, d, s, rc);
  el_mapguard_pop(&g);
  return rc;
}

int el_ev_scan_sessions(const uint8_t *buf, size_t len, el_ev_scan_t *out) {
  return scan(buf, len, out, 0);
}

int el_ev_scan_mapped(const uint8_t *buf, size_t len, el_ev_scan_t *out) {
  return scan(buf, len, out, 1);
}

/* {====== scanning a file descriptor ======} */

/* Bytes read at a time by el_ev_scan_fd: SCAN_READ_MIN after a jump over
 * a body (the next marker and little of its body), doubled after every
 * window read through (a global block, events outside blocks, small
 * blocks) up to SCAN_READ_MAX. */
#define SCAN_READ_MIN ((size_t)16 << 10)
#define SCAN_READ_MAX ((size_t)1 << 20)

/* Up to n bytes at offset off of fd into buf, through short reads and
 * EINTR: the bytes read (fewer only at the end of the file), or -errno. */
static ssize_t read_at(int fd, uint8_t *buf, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return -errno;
    if (k == 0)
      break;
    got += (size_t)k;
  }
  return (ssize_t)got;
}

#define BODY_CUT 2 /* jump_body: the body must be decoded after all */

/* Where a window (ending at `off`) left d skipping a capability body that
 * goes on past it: 1 and *to = where reading goes on (the body's end, or
 * len), the body's bytes jumped over unread; 0 when there is no such body
 * (or it ended in the window, too near its end for the decoder to check
 * what follows, and that is a block marker or DATA_END);
 * BODY_CUT when the body does not end on a block marker or DATA_END, so
 * that it must be decoded after all (el_ev_scan_fd maps the file); or
 * -errno. */
static int jump_body(el_ev_decoder_t *d, int fd, uint64_t from, uint64_t off,
                     uint64_t len, uint64_t *to) {
  uint64_t end;
  if (!el__ev_decoder_body_end(d, &end))
    return 0;
  if (len >= 2 && end <= len - 2) {
    uint8_t next[2];
    ssize_t k = read_at(fd, next, 2, from + end);
    if (k < 0)
      return (int)k;
    if (k == 2 && !el__ev_lands_after_body(el_ev_be16(next)))
      return BODY_CUT;
  }
  if (end <= off) /* the body ended in the window: checked */
    return 0;
  *to = end < len ? end : len;
  el__ev_decoder_skip_to(d, *to);
  return 1;
}

/* Feed d the len bytes of fd from byte `from` in windows, jumping
 * over capability bodies; problems of the input go to out (keep_first).
 * Returns 0, EL_ESTOPPED or EL_ENOMEM, EL_ESHRUNK (*at = the first byte
 * missing), BODY_CUT, or -errno (*at = where reading failed). */
static int scan_fd_feed(el_ev_decoder_t *d, el_ev_scan_t *out, int fd,
                        uint64_t from, uint64_t len, uint64_t *at) {
  uint8_t *w = el_malloc(SCAN_READ_MAX);
  if (!w)
    return EL_ENOMEM;
  uint64_t off = 0, to = 0;
  size_t win = SCAN_READ_MIN;
  int rc = 0;
  while (off < len && !rc) {
    size_t want = len - off < win ? (size_t)(len - off) : win;
    ssize_t got = read_at(fd, w, want, from + off);
    *at = off;
    if (got < 0) {
      rc = (int)got;
      break;
    }
    rc = keep_first(out, d, el_ev_decoder_feed(d, w, (size_t)got));
    off += (uint64_t)got;
    *at = off;
    if (!rc && (size_t)got < want)
      rc = EL_ESHRUNK;
    if (!rc)
      rc = jump_body(d, fd, from, off, len, &to);
    if (rc == 1) {
      off = to;
      rc = 0;
      win = SCAN_READ_MIN;
    } else if (win < SCAN_READ_MAX) {
      win *= 2;
    }
  }
  el_free(w);
  return rc;
}

int el_ev_scan_fd(int fd, uint64_t from, uint64_t len, el_ev_scan_t *out) {
  scan_t *s;
  el_ev_decoder_t *d;
  int rc = scan_open(out, len, &s, &d);
  if (rc <= 0)
    return rc;
  uint64_t at = 0;
  rc = scan_fd_feed(d, out, fd, from, len, &at);
  if (rc == EL_ESHRUNK)
    return shrunk(out, d, s, at);
  if (rc == BODY_CUT) {
    /* A block cut short (a raw tee of cut connections): decode its body
     * after all, as el_ev_scan_mapped does when it lies in one window. */
    el_ev_decoder_free(d);
    el_free(s);
    el_ev_scan_free(out);
    memset(out, 0, sizeof *out);
    out->diag.event_type = -1;
    size_t all = (size_t)(from + len); /* mapped from 0: page-aligned */
    uint8_t *m = mmap(NULL, all, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
      return out->status = out->diag.code = -errno;
    rc = scan(m + from, (size_t)len, out, 1);
    munmap(m, all);
    return rc;
  }
  if (rc < 0 && rc > -4096) { /* a read error: what was found stays */
    scan_close(out, d, s, 0);
    memset(&out->diag, 0, sizeof out->diag);
    out->status = out->diag.code = rc;
    out->diag.offset = at;
    out->diag.event_type = -1;
    snprintf(out->diag.msg, sizeof out->diag.msg,
             "cannot read at byte %llu: %s", (unsigned long long)at,
             el_strerror(rc));
    return rc;
  }
  return scan_close(out, d, s, rc);
}

void el_ev_scan_free(el_ev_scan_t *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->nsessions; i++) {
    el_free(s->sessions[i].caps);
    el_free(s->sessions[i].rts_id);
    el_free(s->sessions[i].args);
  }
  el_free(s->sessions);
  s->sessions = NULL;
  s->nsessions = 0;
}
