/* ev_decoder.c: the streaming eventlog decoder (eventlog.h).
 *
 * Wire format (spec/eventlog-format.md §1): a header
 *   "hdrb" "hetb" ("etb\0" id:u16 size:u16 dlen:u32 desc[dlen]
 *   xlen:u32 extra[xlen] "ete\0")* "hete" "hdre" "datb"
 * then events  type:u16 t:u64 [len:u16 if size == 0xFFFF] payload
 * and DATA_END (type 0xFFFF, nothing after it). Everything big-endian.
 *
 * States: SCAN looks for "hdrbhetb" (stale bytes before a header, bytes
 * after DATA_END or after an error, §4.7); HEADER parses the header one
 * step at a time, copying into hbuf exactly the bytes the next step needs;
 * DATA frames events. Events that lie wholly inside the caller's buffer are
 * decoded in place (the fast path); an event split across feeds is
 * completed in the reassembly buffer `pend`, which grows geometrically and
 * is reused, so steady-state decoding allocates nothing.
 *
 * Capability (§3.6): an event starting before marker_offset + block_size
 * belongs to the marker's capability (0xFFFF = none). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eventlog_internal.h"

#define MARK_HDRB 0x68647262u
#define MARK_HETB 0x68657462u
#define MARK_ETB 0x65746200u
#define MARK_ETE 0x65746500u
#define MARK_HETE 0x68657465u
#define MARK_HDRE 0x68647265u
#define MARK_DATB 0x64617462u

#define T_DECLARED 0x10000u   /* tab[]: type declared in the header */
#define T_SIZE_MASK 0xFFFFu   /* tab[]: declared size */
#define T_FAST 0x20000u       /* tab[]: fixed size, integer-only layout, no
                                 side effects: decoded on the fast path */
#define T_LAYOUT_SHIFT 24     /* tab[]: layout index + 1, 0 = unknown */

#define MAX_DESC (1u << 20)   /* sanity limits for header fields */
#define MAX_HEADER (16u << 20)

#define EV_IPE 169
#define EV_BLOCK_MARKER 18
#define EV_WALL_CLOCK 43

enum { ST_SCAN, ST_HEADER, ST_DATA, ST_POST, ST_SKIP };

#define FRAME_BAD_BLOCK (-1) /* frame(): event does not fit its block */
#define MAX_BLOCK (16u << 20) /* larger block sizes are not believed */
enum { H_MARK, H_DECL_FIXED, H_DECL_DESC, H_DECL_END, H_END };

typedef struct {
  uint16_t id, size;
  uint32_t desc_off, desc_len;
} rawdecl_t;

struct el_ev_decoder_s {
  el_ev_sink_t sink;
  int state;
  uint64_t base;            /* input offset of the current buf[0] */
  /* SCAN */
  unsigned scan_m;          /* bytes of "hdrbhetb" matched so far */
  uint64_t scan_from;       /* offset where the current skipped run began */
  int seen_header;          /* a header was read at least once */
  /* HEADER */
  uint8_t *hbuf;
  size_t hlen, hcap, hpos;  /* bytes held, capacity, parse position */
  size_t hneed;             /* hlen needed for the next step */
  int hstep;
  uint64_t hoff;            /* offset of "hdrb" */
  rawdecl_t *raw;
  size_t nraw, rawcap;
  el_ev_decl_t *decls;
  size_t declcap;
  el_ev_header_t hdr;
  int have_hdr;
  unsigned sessions;
  /* DATA */
  uint32_t *tab;            /* per id below ntab: T_* bits (0 = undeclared) */
  size_t ntab, tabcap;
  uint8_t *pend;            /* partial event being reassembled */
  size_t plen, pcap;
  uint64_t poff;            /* offset of pend[0] */
  uint64_t block_end;
  uint16_t block_cap;
  uint64_t skip_until;      /* ST_SKIP: offset of the next block */
  /* time */
  int have_wall;
  uint64_t wall_unix_ns, wall_t;
  /* results */
  el_diag_t diag;
  el_ev_stats_t stats;
  el_ev_event_t ev;
  const el__ev_layout_t *layouts;
};

/* {====== helpers ======} */

static void set_diag(el_ev_decoder_t *d, int code, uint64_t off, int type,
                     const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void set_diag(el_ev_decoder_t *d, int code, uint64_t off, int type,
                     const char *fmt, ...) {
  va_list ap;
  d->diag.code = code;
  d->diag.offset = off;
  d->diag.event_type = type;
  va_start(ap, fmt);
  vsnprintf(d->diag.msg, sizeof d->diag.msg, fmt, ap);
  va_end(ap);
}

static void warn(el_ev_decoder_t *d) {
  if (d->sink.on_warning)
    d->sink.on_warning(d->sink.ud, &d->diag);
}

/* Grow *buf to hold at least need bytes (geometric). */
static int reserve(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap : 256;
  while (n < need)
    n *= 2;
  uint8_t *p = el_realloc(*buf, n);
  if (!p)
    return EL_ENOMEM;
  *buf = p;
  *cap = n;
  return 0;
}

/* {====== life cycle ======} */

el_ev_decoder_t *el_ev_decoder_new(const el_ev_sink_t *sink) {
  el_ev_decoder_t *d = el_calloc(1, sizeof *d);
  if (!d)
    return NULL;
  if (sink)
    d->sink = *sink;
  size_t n;
  d->layouts = el__ev_layouts(&n);
  d->state = ST_SCAN;
  /* header_begin writes the magic without allocating. */
  if (reserve(&d->hbuf, &d->hcap, 256)) {
    el_free(d);
    return NULL;
  }
  d->diag.event_type = -1;
  return d;
}

void el_ev_decoder_free(el_ev_decoder_t *d) {
  if (!d)
    return;
  el_free(d->hbuf);
  el_free(d->tab);
  el_free(d->raw);
  el_free(d->decls);
  el_free(d->pend);
  el_free(d);
}

static void start_scan(el_ev_decoder_t *d, uint64_t from) {
  d->state = ST_SCAN;
  d->scan_m = 0;
  d->scan_from = from;
  d->plen = 0;
}

void el_ev_decoder_reset(el_ev_decoder_t *d) {
  start_scan(d, d->base);
  d->hlen = 0;
  d->have_wall = 0;
  d->block_end = 0;
  d->block_cap = EL_EV_NO_CAP;
  d->seen_header = 0; /* the next header begins a new connection */
}

const el_diag_t *el_ev_decoder_diag(const el_ev_decoder_t *d) {
  return &d->diag;
}

const el_ev_header_t *el_ev_decoder_header(const el_ev_decoder_t *d) {
  return d->have_hdr ? &d->hdr : NULL;
}

const el_ev_stats_t *el_ev_decoder_stats(const el_ev_decoder_t *d) {
  return &d->stats;
}

el_unix_ns_t el_ev_decoder_unix_ns(const el_ev_decoder_t *d,
                                   el_rts_ns_t t_ns) {
  if (!d->have_wall)
    return 0;
  return d->wall_unix_ns + (uint64_t)((int64_t)t_ns - (int64_t)d->wall_t);
}

/* {====== header ======} */

/* Pick the layout for a declared (id, size): variable layouts for variable
 * declarations; otherwise the largest fixed layout not exceeding size
 * (spec §1.6, §4.2). Returns index + 1, or 0 if none fits. */
static unsigned pick_layout(el_ev_decoder_t *d, uint16_t id, uint16_t size) {
  size_t n;
  const el__ev_layout_t *L = el__ev_layouts(&n);
  unsigned best = 0;
  uint16_t best_size = 0;
  for (size_t i = 0; i < n; i++) {
    if (L[i].id != id)
      continue;
    if (size == EL_EV_VARIABLE) {
      if (L[i].variable)
        return (unsigned)i + 1;
      continue;
    }
    if (L[i].variable || L[i].min_size > size)
      continue;
    if (!best || L[i].min_size > best_size) {
      best = (unsigned)i + 1;
      best_size = L[i].min_size;
    }
  }
  return best;
}

static int header_done(el_ev_decoder_t *d) {
  size_t ntab = 0;
  for (size_t i = 0; i < d->nraw; i++)
    if (d->raw[i].id != 0xFFFF && (size_t)d->raw[i].id + 1 > ntab)
      ntab = (size_t)d->raw[i].id + 1;
  if (ntab > d->tabcap) {
    /* Entries below tabcap are all zero here (header_begin cleared the
     * previous session's); zero the new part. */
    uint32_t *p = el_realloc(d->tab, ntab * sizeof *p);
    if (!p)
      return EL_ENOMEM;
    memset(p + d->tabcap, 0, (ntab - d->tabcap) * sizeof *p);
    d->tab = p;
    d->tabcap = ntab;
  }
  if (d->nraw > d->declcap) {
    el_ev_decl_t *p = el_realloc(d->decls, d->nraw * sizeof *p);
    if (!p)
      return EL_ENOMEM;
    d->decls = p;
    d->declcap = d->nraw;
  }
  for (size_t i = 0; i < d->nraw; i++) {
    rawdecl_t *r = &d->raw[i];
    d->decls[i].id = r->id;
    d->decls[i].size = r->size;
    d->decls[i].desc.p = (const char *)d->hbuf + r->desc_off;
    d->decls[i].desc.len = r->desc_len;
    if (r->id == 0xFFFF)
      continue; /* DATA_END can never be an event type */
    unsigned li = pick_layout(d, r->id, r->size);
    uint32_t fast = li && d->layouts[li - 1].intonly &&
                            r->size != EL_EV_VARIABLE &&
                            r->id != EV_BLOCK_MARKER && r->id != EV_WALL_CLOCK
                        ? T_FAST
                        : 0;
    d->tab[r->id] = T_DECLARED | fast | r->size | (li << T_LAYOUT_SHIFT);
  }
  d->ntab = ntab;
  d->hdr.decls = d->decls;
  d->hdr.ndecls = d->nraw;
  d->hdr.offset = d->hoff;
  d->hdr.session = ++d->sessions;
  d->have_hdr = 1;
  d->seen_header = 1;
  d->stats.sessions++;
  d->state = ST_DATA;
  d->plen = 0;
  d->block_end = 0;
  d->block_cap = EL_EV_NO_CAP;
  d->have_wall = 0;
  if (d->sink.on_header && d->sink.on_header(d->sink.ud, &d->hdr))
    return EL_ESTOPPED;
  return 0;
}

/* Run header steps while hbuf holds what they need. Returns 0 (need more or
 * done), or an error. */
static int header_steps(el_ev_decoder_t *d) {
  while (d->state == ST_HEADER && d->hlen >= d->hneed) {
    const uint8_t *h = d->hbuf + d->hpos;
    uint64_t off = d->hoff + d->hpos;
    switch (d->hstep) {
    case H_MARK: {
      uint32_t m = el__be32(h);
      if (m == MARK_ETB) {
        d->hpos += 4;
        d->hstep = H_DECL_FIXED;
        d->hneed = d->hpos + 8;
      } else if (m == MARK_HETE) {
        d->hpos += 4;
        d->hstep = H_END;
        d->hneed = d->hpos + 8;
      } else {
        set_diag(d, EL_EBADHDR, off, -1,
                 "malformed header: expected an event type or the end "
                 "of the type list at byte %llu",
                 (unsigned long long)off);
        return EL_EBADHDR;
      }
      break;
    }
    case H_DECL_FIXED: {
      uint32_t dlen = el__be32(h + 4);
      if (dlen > MAX_DESC) {
        set_diag(d, EL_EBADHDR, off, el__be16(h),
                 "malformed header: description of event type %u is %u "
                 "bytes long",
                 el__be16(h), dlen);
        return EL_EBADHDR;
      }
      d->hstep = H_DECL_DESC;
      d->hneed = d->hpos + 8 + dlen + 4;
      break;
    }
    case H_DECL_DESC: {
      uint32_t dlen = el__be32(h + 4);
      uint32_t xlen = el__be32(h + 8 + dlen);
      if (xlen > MAX_DESC) {
        set_diag(d, EL_EBADHDR, off, el__be16(h),
                 "malformed header: extra info of event type %u is %u "
                 "bytes long",
                 el__be16(h), xlen);
        return EL_EBADHDR;
      }
      d->hstep = H_DECL_END;
      d->hneed = d->hpos + 8 + dlen + 4 + xlen + 4;
      break;
    }
    case H_DECL_END: {
      uint32_t dlen = el__be32(h + 4);
      uint32_t xlen = el__be32(h + 8 + dlen);
      size_t end = 8 + dlen + 4 + xlen;
      if (el__be32(h + end) != MARK_ETE) {
        set_diag(d, EL_EBADHDR, off + end, el__be16(h),
                 "malformed header: no end marker after event type %u",
                 el__be16(h));
        return EL_EBADHDR;
      }
      if (d->nraw == d->rawcap) {
        size_t n = d->rawcap ? d->rawcap * 2 : 128;
        rawdecl_t *p = el_realloc(d->raw, n * sizeof *p);
        if (!p)
          return EL_ENOMEM;
        d->raw = p;
        d->rawcap = n;
      }
      rawdecl_t *r = &d->raw[d->nraw++];
      r->id = el__be16(h);
      r->size = el__be16(h + 2);
      r->desc_off = (uint32_t)(d->hpos + 8);
      r->desc_len = dlen;
      d->hpos += end + 4;
      d->hstep = H_MARK;
      d->hneed = d->hpos + 4;
      break;
    }
    case H_END:
      if (el__be32(h) != MARK_HDRE || el__be32(h + 4) != MARK_DATB) {
        set_diag(d, EL_EBADHDR, off, -1,
                 "malformed header: missing header end or data begin "
                 "marker at byte %llu",
                 (unsigned long long)off);
        return EL_EBADHDR;
      }
      {
        int rc = header_done(d);
        if (rc != EL_ENOMEM)
          d->hpos += 8; /* on ENOMEM the step is retried */
        return rc;
      }
    }
    if (d->hneed > MAX_HEADER) {
      set_diag(d, EL_EBADHDR, d->hoff, -1, "header larger than %u bytes",
               MAX_HEADER);
      return EL_EBADHDR;
    }
  }
  return 0;
}

/* Copy header bytes from buf; *used receives how many were taken. */
static int header_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                       size_t *used) {
  size_t u = 0;
  int rc = 0;
  while (d->state == ST_HEADER && u < len) {
    size_t want = d->hneed - d->hlen;
    size_t take = len - u < want ? len - u : want;
    if ((rc = reserve(&d->hbuf, &d->hcap, d->hlen + take)))
      break;
    memcpy(d->hbuf + d->hlen, buf + u, take);
    d->hlen += take;
    u += take;
    if ((rc = header_steps(d)))
      break;
  }
  *used = u;
  return rc;
}

static void header_begin(el_ev_decoder_t *d, uint64_t off) {
  uint64_t skipped = off - d->scan_from;
  if (skipped) {
    d->stats.skipped_bytes += skipped;
    set_diag(d, 0, d->scan_from, -1,
             "skipped %llu bytes before the header at byte %llu",
             (unsigned long long)skipped, (unsigned long long)off);
    warn(d);
  }
  static const uint8_t magic[8] = {'h', 'd', 'r', 'b', 'h', 'e', 't', 'b'};
  memcpy(d->hbuf, magic, 8);
  d->hlen = 8;
  d->hpos = 8;
  d->hstep = H_MARK;
  d->hneed = 12;
  d->hoff = off;
  /* Forget the previous session's table: only its declared ids are set
   * (raw[] still lists them; cheaper than clearing all 64 Ki entries). */
  for (size_t i = 0; i < d->nraw; i++)
    if (d->raw[i].id < d->tabcap)
      d->tab[d->raw[i].id] = 0;
  d->nraw = 0;
  d->ntab = 0;
  d->have_hdr = 0;
  d->state = ST_HEADER;
}

/* One step of the "hdrbhetb" matcher: m bytes matched, next byte c.
 * The only border is "h" (after "hdrbh"), hence the special case. */
static inline unsigned scan_step(unsigned m, uint8_t c) {
  static const char pat[] = "hdrbhetb";
  if (c == (uint8_t)pat[m])
    return m + 1;
  if (m == 5 && c == 'd')
    return 2;
  return c == 'h';
}

/* Scan for "hdrbhetb"; returns bytes consumed (through the magic if
 * found, in which case the state is now HEADER). */
static size_t scan(el_ev_decoder_t *d, const uint8_t *buf, size_t len) {
  unsigned m = d->scan_m;
  for (size_t i = 0; i < len; i++) {
    m = scan_step(m, buf[i]);
    if (m == 8) {
      d->scan_m = 0;
      header_begin(d, d->base + i + 1 - 8);
      return i + 1;
    }
  }
  d->scan_m = m;
  return len;
}

/* {====== events ======} */

/* Frame the event at p[0..avail): returns its total length, or 0 when more
 * bytes are needed (*need = total bytes needed so far), or a negative
 * error. eof: no more bytes will come (decides the IPE peek, §4.4). */
static inline long frame(el_ev_decoder_t *d, const uint8_t *p, size_t avail,
                         int eof, size_t *need, uint64_t off) {
  if (avail < 2) {
    *need = 2;
    return 0;
  }
  uint16_t type = el__be16(p);
  if (type == 0xFFFF)
    return 2;
  int in_block = off < d->block_end;
  uint32_t t = type < d->ntab ? d->tab[type] : 0;
  if (!(t & T_DECLARED))
    return in_block ? FRAME_BAD_BLOCK : EL_EUNDECL;
  size_t size = t & T_SIZE_MASK, hl = 10;
  if (size == EL_EV_VARIABLE) {
    if (in_block && off + 12 > d->block_end)
      return FRAME_BAD_BLOCK;
    if (avail < 12) {
      *need = 12;
      return 0;
    }
    size = el__be16(p + 10);
    hl = 12;
  }
  /* An event never crosses its block's end (§1.5); one that does means
   * the block was cut (GHC #26222, §4.6). */
  if (in_block && off + hl + size > d->block_end)
    return FRAME_BAD_BLOCK;
  if (avail < hl + size) {
    *need = hl + size;
    return 0;
  }
  if (type == EV_IPE && (t >> T_LAYOUT_SHIFT) && size >= 8) {
    /* GHC #24287: the declared size may miss the last NUL. */
    const uint8_t *q = p + hl + 8, *end = p + hl + size;
    int nuls = 0;
    for (; q < end; q++)
      nuls += *q == 0;
    if (nuls == 5 && end[-1] != 0) {
      if (avail < hl + size + 1) {
        if (!eof) {
          *need = hl + size + 1;
          return 0;
        }
      } else if (p[hl + size] == 0 &&
                 !(in_block && off + hl + size + 1 > d->block_end)) {
        return (long)(hl + size + 1);
      }
    }
  }
  return (long)(hl + size);
}

/* Deliver the framed event at p (len bytes, offset off). Returns 0 or
 * EL_ESTOPPED. */
static int deliver(el_ev_decoder_t *d, const uint8_t *p, size_t len,
                   uint64_t off) {
  el_ev_event_t *ev = &d->ev;
  uint16_t type = el__be16(p);
  if (type == 0xFFFF) {
    d->state = ST_POST;
    d->scan_m = 0;
    d->scan_from = off + 2;
    if (d->sink.on_data_end)
      d->sink.on_data_end(d->sink.ud, off);
    return 0;
  }
  uint32_t t = type < d->ntab ? d->tab[type] : 0;
  size_t hl = (t & T_SIZE_MASK) == EL_EV_VARIABLE ? 12 : 10;
  ev->type = type;
  ev->t_ns = el__be64(p + 2);
  ev->offset = off;
  ev->payload = p + hl;
  ev->payload_len = (uint32_t)(len - hl);
  unsigned li = t >> T_LAYOUT_SHIFT;
  ev->known = 0;
  ev->nfields = 0;
  ev->layout = 0;
  if (li) {
    if (el__ev_decode_fields(&d->layouts[li - 1], ev->payload,
                             ev->payload_len, ev) == 0)
      ev->known = 1;
    else
      d->stats.malformed_events++;
  } else {
    d->stats.unknown_events++;
  }
  if (type == EV_BLOCK_MARKER && ev->known) {
    if (ev->v[0].u >= len && ev->v[0].u <= MAX_BLOCK) {
      d->block_end = off + ev->v[0].u;
      d->block_cap = (uint16_t)ev->v[2].u;
    } else {
      d->block_end = off; /* not believable: no block, no capability */
      set_diag(d, EL_ECORRUPT, off, type,
               "block marker at byte %llu has an impossible size %llu; "
               "ignored",
               (unsigned long long)off, (unsigned long long)ev->v[0].u);
      warn(d);
    }
  } else if (type == EV_WALL_CLOCK && ev->known) {
    d->have_wall = 1;
    d->wall_unix_ns = ev->v[1].u * 1000000000ull + ev->v[2].u;
    d->wall_t = ev->t_ns;
  }
  ev->cap = off < d->block_end ? d->block_cap : EL_EV_NO_CAP;
  d->stats.events++;
  if (d->sink.on_event && d->sink.on_event(d->sink.ud, ev))
    return EL_ESTOPPED;
  return 0;
}

/* The event at off (type from p, 2 bytes) does not fit its block: the
 * block was cut mid-event (§4.6). Report it as a warning and skip to the
 * block's end, where the next block marker should be. */
static void block_corrupt(el_ev_decoder_t *d, const uint8_t *p,
                          uint64_t off) {
  unsigned type = el__be16(p);
  set_diag(d, EL_ECORRUPT, off, (int)type,
           "corrupt block: event of type %u at byte %llu does not fit its "
           "block (cap %u, ending at byte %llu); skipped %llu bytes to the "
           "next block",
           type, (unsigned long long)off, d->block_cap,
           (unsigned long long)d->block_end,
           (unsigned long long)(d->block_end - off));
  warn(d);
  d->stats.skipped_bytes += d->block_end - off;
  d->skip_until = d->block_end;
}

static int undeclared(el_ev_decoder_t *d, const uint8_t *p, uint64_t off) {
  unsigned type = el__be16(p);
  set_diag(d, EL_EUNDECL, off, (int)type,
           "event type %u at byte %llu is not declared in the header "
           "(corrupt stream)",
           type, (unsigned long long)off);
  return EL_EUNDECL;
}

/* Decode events in buf; *used receives bytes consumed. */
static int data_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                     size_t *used) {
  size_t i = 0;
  int rc = 0;
  /* Complete a partial event first. */
  while (d->plen && d->state == ST_DATA) {
    size_t need = 0;
    long n = frame(d, d->pend, d->plen, 0, &need, d->poff);
    if (n == FRAME_BAD_BLOCK) {
      block_corrupt(d, d->pend, d->poff);
      if (d->poff + d->plen > d->skip_until) {
        /* pend already holds bytes of the next block: keep those. */
        size_t k = (size_t)(d->skip_until - d->poff);
        memmove(d->pend, d->pend + k, d->plen - k);
        d->plen -= k;
        d->poff = d->skip_until;
        continue;
      }
      d->plen = 0;
      d->state = ST_SKIP;
      goto out;
    }
    if (n < 0) {
      /* pend holds just the 2 type bytes (frame reports an undeclared
       * type as soon as it has them): rescan them for a header. */
      rc = undeclared(d, d->pend, d->poff);
      uint64_t at = d->poff;
      unsigned m = 0;
      for (size_t k = 0; k < d->plen && k < 7; k++)
        m = scan_step(m, d->pend[k]);
      start_scan(d, at);
      d->scan_m = m;
      goto out;
    }
    if (n == 0) {
      size_t take = need - d->plen;
      if (take > len - i)
        take = len - i;
      if ((rc = reserve(&d->pend, &d->pcap, d->plen + take)))
        goto out;
      memcpy(d->pend + d->plen, buf + i, take);
      d->plen += take;
      i += take;
      if (d->plen < need)
        goto out; /* wait for more */
      continue;
    }
    rc = deliver(d, d->pend, (size_t)n, d->poff);
    d->plen -= (size_t)n;
    d->poff += (size_t)n;
    if (d->plen)
      memmove(d->pend, d->pend + n, d->plen);
    if (rc)
      goto out;
  }
  /* Fast path: whole fixed-size integer-only events inside buf. */
  while (d->state == ST_DATA) {
    if (len - i < 10)
      goto general;
    const uint8_t *p = buf + i;
    uint16_t type = el__be16(p);
    uint32_t t = type < d->ntab ? d->tab[type] : 0;
    size_t size = t & T_SIZE_MASK;
    if (!(t & T_FAST) || len - i < 10 + size)
      goto general;
    el_ev_event_t *ev = &d->ev;
    uint64_t off = d->base + i;
    ev->type = type;
    ev->t_ns = el__be64(p + 2);
    ev->offset = off;
    ev->payload = p + 10;
    ev->payload_len = (uint32_t)size;
    ev->known = 1;
    el__ev_decode_ints(&d->layouts[(t >> T_LAYOUT_SHIFT) - 1], p + 10, ev);
    if (off < d->block_end) {
      ev->cap = d->block_cap;
      if (off + 10 + size > d->block_end)
        goto general; /* crosses the block end: frame() reports it */
    } else {
      ev->cap = EL_EV_NO_CAP;
    }
    d->stats.events++;
    i += 10 + size;
    if (d->sink.on_event && d->sink.on_event(d->sink.ud, ev)) {
      rc = EL_ESTOPPED;
      goto out;
    }
    continue;
  general:;
    size_t need;
    long n = frame(d, buf + i, len - i, 0, &need, d->base + i);
    if (n == FRAME_BAD_BLOCK) {
      block_corrupt(d, buf + i, d->base + i);
      d->state = ST_SKIP;
      goto out;
    }
    if (n < 0) {
      rc = undeclared(d, buf + i, d->base + i);
      start_scan(d, d->base + i); /* rescan from the bad event */
      goto out;
    }
    if (n == 0) {
      size_t rest = len - i;
      if ((rc = reserve(&d->pend, &d->pcap, need > rest ? need : rest)))
        goto out;
      memcpy(d->pend, buf + i, rest);
      d->plen = rest;
      d->poff = d->base + i;
      i = len;
      break;
    }
    rc = deliver(d, buf + i, (size_t)n, d->base + i);
    i += (size_t)n;
    if (rc)
      break;
  }
out:
  *used = i;
  return rc;
}

int el_ev_decoder_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len) {
  size_t i = 0;
  int first = 0;
  el_diag_t first_diag;
  d->diag.code = 0;
  while (i < len) {
    size_t used = 0;
    int rc = 0;
    switch (d->state) {
    case ST_SCAN:
    case ST_POST:
      used = scan(d, buf + i, len - i);
      break;
    case ST_HEADER:
      rc = header_feed(d, buf + i, len - i, &used);
      break;
    case ST_DATA:
      rc = data_feed(d, buf + i, len - i, &used);
      break;
    case ST_SKIP: {
      uint64_t left = d->skip_until - d->base;
      used = left < len - i ? (size_t)left : len - i;
      if (used == left)
        d->state = ST_DATA;
      break;
    }
    }
    i += used;
    d->base += used;
    if (!rc)
      continue;
    if (rc == EL_ESTOPPED || rc == EL_ENOMEM) {
      if (!first) {
        first = rc;
        first_diag = d->diag;
      }
      break;
    }
    /* Corrupt header or data: this session is over; look for the next
     * header in the remaining bytes (§4.7). Later errors in the same call
     * go to on_warning, the first is returned. */
    if (d->state != ST_SCAN)
      start_scan(d, d->base);
    if (!first) {
      first = rc;
      first_diag = d->diag;
    } else {
      warn(d);
    }
  }
  d->stats.bytes += i;
  if (first)
    d->diag = first_diag;
  return first;
}

uint64_t el_ev_decoder_offset(const el_ev_decoder_t *d) { return d->base; }

int el_ev_decoder_finish(el_ev_decoder_t *d) {
  switch (d->state) {
  case ST_DATA:
    if (d->plen) {
      size_t need = 0;
      long n = frame(d, d->pend, d->plen, 1, &need, d->poff);
      if (n > 0) {
        int rc = deliver(d, d->pend, (size_t)n, d->poff);
        d->plen = 0;
        return rc;
      }
      int type = d->plen >= 2 ? el__be16(d->pend) : -1;
      char what[32] = "";
      if (type >= 0)
        snprintf(what, sizeof what, " of type %d", type);
      set_diag(d, EL_ETRUNC, d->poff, type,
               "eventlog truncated inside an event%s at byte %llu "
               "(%zu of %zu bytes present)",
               what, (unsigned long long)d->poff, d->plen, need);
      d->plen = 0;
      return EL_ETRUNC;
    }
    return 0;
  case ST_HEADER:
    set_diag(d, EL_ETRUNC, d->hoff + d->hlen, -1,
             "eventlog truncated inside the header at byte %llu",
             (unsigned long long)(d->hoff + d->hlen));
    return EL_ETRUNC;
  case ST_SCAN:
    if (d->seen_header && d->base > d->scan_from) {
      set_diag(d, 0, d->scan_from, -1,
               "ignored %llu bytes after a corrupt part of the stream",
               (unsigned long long)(d->base - d->scan_from));
      d->stats.skipped_bytes += d->base - d->scan_from;
      warn(d);
      d->diag.code = 0;
      return 0;
    }
    if (!d->seen_header && !d->stats.sessions) {
      /* The bytes of this session (since the last reset), not of the
       * whole input: a reconnecting socket resets once per connection. */
      uint64_t skipped = d->base - d->scan_from;
      d->stats.skipped_bytes += skipped;
      d->scan_from = d->base;
      set_diag(d, EL_ETRUNC, d->base, -1,
               "no eventlog header found in %llu bytes",
               (unsigned long long)skipped);
      return EL_ETRUNC;
    }
    return 0;
  case ST_SKIP:
    set_diag(d, EL_ETRUNC, d->base, -1,
             "eventlog ends at byte %llu inside a corrupt block being "
             "skipped (it ends at byte %llu)",
             (unsigned long long)d->base,
             (unsigned long long)d->skip_until);
    return EL_ETRUNC;
  case ST_POST:
    if (d->base > d->scan_from) {
      set_diag(d, 0, d->scan_from, -1,
               "ignored %llu bytes after the end of data",
               (unsigned long long)(d->base - d->scan_from));
      d->stats.skipped_bytes += d->base - d->scan_from;
      warn(d);
      d->diag.code = 0;
    }
    return 0;
  }
  return 0;
}
