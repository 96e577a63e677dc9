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
 * DATA frames events; RESYNC skips a corrupt part up to the next
 * believable block marker or header (§4.6; "resynchronisation" below);
 * BODY skips a capability block's body unread
 * (EL_EV_OPT_SKIP_CAP_BLOCKS). Events that
 * lie wholly inside the caller's buffer are decoded in place (the fast
 * path); an event split across feeds is completed in the reassembly buffer
 * `pend`, which grows geometrically and is reused, so steady-state decoding
 * allocates nothing.
 *
 * Sessions (§4.7, §5.4): every header starts one. Besides a header after
 * DATA_END, a raw tee of several eventlog-socket connections holds, where
 * one connection ended early, the next connection's 24 stray bytes (a
 * global block marker: 00 12, 8 time bytes, 4 size bytes, 8 end-time
 * bytes, FF FF) and its header "hdrbhetb" right after the last byte the
 * earlier connection sent, possibly inside an event. Likewise a cut log
 * followed by a whole one (files joined, a FIFO reopened by the next
 * program) holds the new header, without stray bytes, right after the
 * last byte of the cut one. Wherever an event is framed, the decoder
 * looks for the 32-byte "stray pattern" and for a header's first 12 bytes
 * "hdrbhetb" "etb\0" (find_new): an event that contains the start of
 * either was cut there and is dropped (reported with both offsets); the
 * marker is skipped; the header starts a new session. Deciding needs up to
 * 31 bytes past an event whose tail matches the start of either: such an
 * event waits for them (or for finish) unless EL_EV_OPT_LIVE; an event
 * completed from the reassembly buffer takes them from the same feed if
 * they are there, even with EL_EV_OPT_LIVE. A header right where an event
 * should start, the "hdrbhetb" in a corrupt block being skipped, and one
 * inside a header being read also start a new session. The fast path
 * only runs up to the first position where either may start (found with
 * memchr on the 'h' of "hdrbhetb").
 *
 * Capability (§3.6): an event starting before marker_offset + block_size
 * belongs to the marker's capability (0xFFFF = none). Where a block ends,
 * what follows is looked at (reopen_at): the events of the same block
 * (its marker's size was damaged), or a block marker a few bytes away
 * (bytes lost or inserted before it); a block spliced into another gives
 * way to that one when it ends. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../common/el_grow.h"
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
/* The largest size of a T_FAST type: its length fits flen[]'s byte. */
#define FAST_MAX_SIZE (255u - 10u)
/* tab[]: a T_FAST type whose fields the sink does not want
 * (el_ev_decoder_set_fields): delivered with nfields = 0. */
#define T_NOFIELDS 0x40000u
/* tab[]: a T_FAST type the sink does not want delivered
 * (el_ev_decoder_set_quiet, counters given): the fast path counts it into
 * the sink's counters instead while its time is below their bound. */
#define T_QUIET 0x80000u
/* tab[]: a T_FAST type offered to the sink's run handler first
 * (el_ev_decoder_set_direct, a run handler and quiet counters given): one
 * it takes is counted as a quiet one, the first one it does not take is
 * delivered. Never set together with T_QUIET. */
#define T_DIRECT 0x100000u

#define MAX_DESC (1u << 20)   /* sanity limits for header fields */
#define MAX_HEADER (16u << 20)

#define MAGIC_LEN 8           /* "hdrbhetb" */
#define HDR_LEN 12            /* "hdrbhetb" "etb\0": a header inside an event */
#define STRAY_LEN 24          /* eventlog-socket's stray block marker */
#define PAT_LEN (STRAY_LEN + MAGIC_LEN)
#define NONE ((size_t)-1)

#define MAX_DUP_WARN 8        /* duplicate declarations reported one by one */
#define MAX_MALFORMED_WARN 64 /* malformed events reported one by one */

enum { ST_SCAN, ST_HEADER, ST_DATA, ST_POST, ST_RESYNC, ST_BODY };

#define FRAME_BAD_BLOCK (-1) /* frame(): event does not fit its block */
#define MAX_BLOCK (16u << 20) /* larger block sizes are not believed */
/* block_end of a block whose marker's size was damaged (fix_marker): it
 * ends where the next block marker is (or the data). */
#define BLOCK_OPEN UINT64_MAX

/* Resynchronisation (ST_RESYNC): a block marker's length; a candidate
 * marker's body is checked over its first RS_CHAIN bytes; RS_WIN bytes
 * always decide whether a position holds a believable marker (the marker,
 * RS_CHAIN bytes and an event header that may start just before their
 * end) or "hdrbhetb". */
#define RS_LOOK 24
#define RS_CHAIN 256
#define RS_TAIL 64 /* the longest tail of a cut event looked past */
#define RS_WIN (RS_LOOK + RS_TAIL + RS_CHAIN + 12)
/* Bytes from a DATA_END on that decide whether more data follows it
 * (end_damaged) and whether it is a damaged block marker (end_is_marker):
 * waited for, unless EL_EV_OPT_LIVE, so that the decision does not depend
 * on how the input was chunked. */
#define END_NEED (RS_LOOK + RS_CHAIN + 12)
/* A believable marker's times are at most this far (ns) after the
 * largest time seen in the session: 1 hour. */
#define RS_AHEAD_NS 3600000000000ull
/* Capabilities above the largest seen + 1 are not believed (GHC numbers
 * them from 0); before any block of a capability, up to this one. */
#define RS_CAP_FIRST 63
/* A block marker where an event is expected (not a resync target): its
 * capability is believed up to this one, or up to the largest seen in the
 * session + 1. GHC since 9.4 has at most 256 (MAX_N_CAPABILITIES), but
 * older ones have no bound: a GHC 9.0 program run with -N300 writes
 * capabilities 0 to 299, whose blocks may come in any order (257's before
 * 256's). 1023 is the largest the analyses track (EL__MAX_CAPS); a
 * damaged field is most often far above (32767: a bit of the high byte). */
#define CAP_MAX_BELIEVED 1023
/* Resynchronisation looks this many bytes back from where the corrupt
 * part begins as well as forward: bytes lost before a block marker make
 * the event before it frame the marker's first bytes and end inside the
 * marker, where the part begins: at most RS_LOOK - 1 bytes after the
 * marker's start. A marker wholly inside the event before could not be
 * told from one already delivered (the event's start is not kept), so
 * no more: below RS_LOOK, no candidate is a marker already delivered.
 * That covers every overlap of an event of up to 24 bytes, and 23 bytes
 * of a longer one: the 22-byte HEAP_ALLOCATED before GHC 9.0's global
 * block, HEAP_SIZE, HEAP_LIVE. With 16, 17 bytes lost before such a
 * marker lost its block (18 to 20 too where the event's time, garbled
 * to 77 s to 58 days, stays within its block). */
#define RS_BACK (RS_LOOK - 1)
/* Bytes of a corrupt part before it is said while it lasts, the first
 * time (resync_note): as long as the search for a first header waits
 * (NOHDR_WARN). */
#define RS_NOTE ((uint64_t)64 << 20)
/* The first event of a session, where its header declares block markers
 * and it is not one, is believable when dated up to this (ns): 10 s
 * (data_begin_at). GHC's first event is its first block marker, and old
 * GHCs' STARTUP before it is dated at the program's start (115 us in
 * ghc-events' testlog); one to four bytes inserted before the marker
 * date it 77 s (0x12 << 32 ns) or later. */
#define FIRST_ABSURD_NS 10000000000ull
enum { RS_NO, RS_NEED, RS_HIT };
enum { H_MARK, H_DECL_FIXED, H_DECL_DESC, H_DECL_END, H_END, H_SEEK };
/* Where the header end and data begin markers ("hdre" "datb") are not
 * right after the type list's end ("hete"), the data begin marker is
 * looked for in this many bytes after it (h_seek): bytes inserted there,
 * or "hdre" overwritten, lose only themselves. */
#define HDR_SEEK 1024

/* What the bytes at a frame position are (step()). */
enum {
  S_NEED,
  S_EVENT,
  S_CUT,
  S_HDR,
  S_MAGIC,
  S_BAD,
  S_REOPEN,
  S_RESUME,
  S_SPLICED
};

static const uint8_t magic8[MAGIC_LEN] = {'h', 'd', 'r', 'b',
                                          'h', 'e', 't', 'b'};

/* The two bytes of a type id on the wire (big-endian) as one native
 * 16-bit load reads them: flen[]'s index. */
static inline uint16_t wire_key_at(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static inline uint16_t wire_key(uint16_t id) {
  const uint8_t b[2] = {(uint8_t)(id >> 8), (uint8_t)id};
  return wire_key_at(b);
}

typedef struct {
  uint16_t id, size;
  uint32_t desc_off, desc_len;
} rawdecl_t;

/* The first error of a feed call (returned) and how later ones are
 * handled (on_warning). */
typedef struct {
  int first;
  el_diag_t diag;
} errs_t;

/* The per-type masks, 65,536 bits each, bit id for type id. */
typedef struct masks_s {
  /* el_ev_decoder_set_fields: set = the sink does not want the fields of
   * type id (applied to tab[] as T_NOFIELDS) */
  uint64_t nofields[65536 / 64];
  /* el_ev_decoder_set_quiet: set = type id need not be delivered (applied
   * to tab[] as T_QUIET while quiet counters are given) */
  uint64_t quiet[65536 / 64];
  /* el_ev_decoder_set_direct: set = type id is offered to the run handler
   * first (applied to tab[] as T_DIRECT while quiet counters and a run
   * handler are given) */
  uint64_t direct[65536 / 64];
} masks_t;

struct el_ev_decoder_s {
  el_ev_sink_t sink;
  unsigned opts;            /* EL_EV_OPT_* */
  int state;
  int eof;                  /* inside el_ev_decoder_finish */
  uint64_t base;            /* input offset of the current buf[0] */
  /* SCAN */
  unsigned scan_m;          /* bytes of "hdrbhetb" matched so far */
  uint64_t scan_from;       /* offset where the current skipped run began */
  uint8_t scan_head[STRAY_LEN]; /* its first bytes (scan_head_n of them),
                               for a message that quotes them
                               (text_at_start) or a stray pattern
                               (stray_marker_only) */
  unsigned scan_head_n;
  uint64_t scan_head_from;  /* the scan_from they belong to */
  int seen_header;          /* a header was read at least once */
  /* A later header (seen_header set) could not be read: the bytes from
   * its "hdrb" (rs_from; what was wrong: rs_why) up to the next header,
   * or the end of the input or connection, are a corrupt part, reported
   * once its end is known (lost_header_end). */
  int hdr_lost;
  /* HEADER */
  uint8_t *hbuf;
  size_t hlen, hcap, hpos;  /* bytes held, capacity, parse position */
  size_t hneed;             /* hlen needed for the next step */
  int hstep;
  size_t hseek;             /* H_SEEK: the next position in hbuf where
                               "datb" is looked for */
  int hseek_said;           /* H_SEEK: the bytes before it were reported */
  unsigned hscan_m;         /* "hdrbhetb" matched in the header's bytes */
  uint64_t hoff;            /* offset of "hdrb" */
  rawdecl_t *raw;
  size_t nraw, rawcap;
  el_ev_decl_t *decls;
  size_t declcap;
  uint32_t *holder;         /* header_done: per id, index + 1 into raw[]
                               of the declaration in force */
  size_t holdcap;
  el_ev_header_t hdr;
  int have_hdr;
  unsigned sessions;
  /* DATA */
  uint32_t *tab; /* per id up to ntab (its last entry, 0, included):
                    T_* bits, 0 = undeclared */
  size_t ntab, tabcap;
  /* Per type, indexed by its two wire bytes as they lie in memory
   * (wire_key: no byte swap on the fast path's chain from one event to
   * the next): the event's length (10 + size) if tab[] has T_FAST for
   * it, else 0. 65,536 entries once a header was read, followed by as
   * many of its EL_EV_RUN_* kind (el_ev_run_frame: run_kind). */
  uint8_t *flen;
  uint8_t *pend;            /* partial event being reassembled */
  size_t plen, pcap;
  uint64_t poff;            /* offset of pend[0] */
  uint8_t *rbuf;            /* spare buffer, swapped with pend to process
                               leftover bytes in another state */
  size_t rcap;
  uint64_t block_end;
  uint16_t block_cap;
  uint64_t block_off;  /* the current block's marker: its offset */
  uint32_t block_size; /* and its declared size (reopen's report) */
  /* The block the current one lies in (a block spliced into another),
   * resumed where the current one ends (reopen), its end moved by the
   * current one's size; end 0: none. */
  struct {
    uint64_t end, t0, t1, off;
    uint32_t size;
    uint16_t cap;
    uint64_t inner_off; /* the first block spliced into it: its marker */
    uint16_t inner_cap;
  } outer;
  /* The last bytes decoded (up to RS_BACK) before back_end, contiguous:
   * where a corrupt part begins, resync_begin looks back into them. Kept
   * per data_feed call and per event completed in pend, not per event. */
  uint8_t back[RS_BACK];
  size_t back_len;
  uint64_t back_end;
  /* The current block's times: its marker's start and end (UINT64_MAX
   * when the end is before the start). An event in the block is dated at
   * or before its end (spec §1.5), else the block is damaged (step). The
   * start is not a bound: old logs (ghc-events' parallelTest) date events
   * before their block's start. */
  uint64_t block_t0, block_t1;
  int open_block;      /* deliver: the marker's size is damaged (fix_marker):
                          its block ends at the next marker (block_end =
                          BLOCK_OPEN) */
  int cap_unknown;     /* deliver: the marker's capability is damaged
                          (fix_marker): its block is not kept in prev[] */
  int bad_time;        /* resync_begin: the part begins at an event so dated */
  int bad_order;       /* resync_begin: the part begins at a block marker
                          out of its capability's time order (out_of_order) */
  uint64_t skip_until; /* ST_BODY: offset where it ends */
  uint64_t input_end;  /* el__ev_decoder_set_input_end: a capability body
                          ending past it is decoded, not skipped
                          (UINT64_MAX: the end is not known) */
  int body_spliced;    /* ST_BODY: the body is a block spliced into the
                          current one, out of time order (skip_spliced):
                          that one goes on after it */
  /* RESYNC: a corrupt part, from rs_from, is being skipped up to the
   * next believable block marker or header (resync_feed) */
  uint64_t rs_from;         /* offset of the event that did not frame */
  int rs_type;              /* its type */
  char rs_why[200];         /* what was wrong there, for the report */
  uint8_t rs_carry[RS_WIN]; /* the last bytes fed, not yet decided: */
  size_t rs_clen;           /* they precede base */
  uint64_t rs_next_note;    /* skipped bytes at which the part is said
                               while it lasts (resync_note) */
  /* The part began at a DATA_END that more data follows (end_damaged):
   * landing on a block marker, the session goes on; on a header or at the
   * end of the input, its data ended there after all (end_off: the
   * DATA_END's offset). */
  int end_held;
  uint64_t end_off;
  /* the session so far, to judge a marker (reset by each header) */
  uint64_t sess_tmax;       /* largest time: events, markers' start/end */
  int sess_cap_hi;          /* largest capability with a block, -1 none */
  uint64_t sess_blocks;     /* believable block markers delivered */
  /* Per capability, the session's previous block (its marker's offset,
   * start and end time; t1 = t0 where the end is before the start; all
   * 0: none yet), indexed by prev_ix: the global block (0xFFFF), then
   * capabilities 0 to CAP_MAX_BELIEVED. GHC writes a capability's blocks
   * in time order (out_of_order). Grown to the highest index kept
   * (nprev entries valid; reset to none by a header): a few entries, not
   * CAP_MAX_BELIEVED's 24 KiB, which every `show` of a small file paid in
   * page faults (issue 16, start-up). */
  struct prev_s {
    uint64_t off, t0, t1;
  } * prev;
  size_t nprev, prevcap;
  uint64_t data_off;        /* the session's first data byte (after datb);
                               block_end until its first block */
  uint64_t body_from;       /* ST_BODY: offset of the body's first byte */
  int landing;              /* DATA: a skipped body just ended here */
  int rewind;               /* data_feed asks run() to go back to
                               body_from and decode the body after all */
  uint64_t run_off;         /* offset of the innermost run()'s buf[0] */
  uint64_t malformed_warned;
  /* time */
  int have_wall;
  uint64_t wall_unix_ns, wall_t;
  /* results */
  el_diag_t diag;
  el_ev_stats_t stats;
  el_ev_event_t ev;
  const el__ev_layout_t *layouts;
  /* The per-type masks of el_ev_decoder_set_fields, _set_quiet and
   * _set_direct (masks_t), allocated by the first of those calls: NULL,
   * every bit clear (all fields wanted, nothing quiet or direct). Their
   * 24 KiB are not paid by a decoder that never sets one (`show`,
   * `stats`: issue 16, start-up). */
  struct masks_s *masks;
  el_ev_quiet_t qc;    /* el_ev_decoder_quiet_counters; events NULL: none */
  int in_event;        /* inside on_event for d->ev (its payload is valid) */
  size_t ndirect;      /* bits set in masks->direct */
  el_ev_run_fn run_fn; /* el_ev_decoder_direct_run; NULL: none */
  void *run_ud;        /* its ud */
  /* el_ev_decoder_tally; NULL: none */
  el_ev_tally_t *tally;
  /* A warning was given that NOHDR_WARN bytes held no header. */
  int nohdr_warned;
  int nohdr_said; /* a reset said a connection's bytes held no header
                     (el_ev_decoder_reset); lasts */
  int unfinished; /* bytes were fed since the last finish or reset */
};

static int run(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
               errs_t *E);
static int data_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                     size_t *used, errs_t *E);
static void resync_end(el_ev_decoder_t *d, uint64_t at, const char *what,
                       size_t tail);
static int deliver(el_ev_decoder_t *d, const uint8_t *p, size_t len,
                   uint64_t off);
static int blocks_expected(const el_ev_decoder_t *d);
static int no_header(el_ev_decoder_t *d);
static int header_cut(el_ev_decoder_t *d);

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
  d->diag.cut_event = 0;
  d->diag.header = code == EL_EBADHDR; /* and where EL_ETRUNC is a header's */
  d->diag.expected = 0;
  d->diag.block_missing = 0;
  va_start(ap, fmt);
  vsnprintf(d->diag.msg, sizeof d->diag.msg, fmt, ap);
  va_end(ap);
}

/* "s" unless n is 1: "1 byte", "2 bytes" in the messages. */
static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

static void warn(el_ev_decoder_t *d) {
  if (d->sink.on_warning)
    d->sink.on_warning(d->sink.ud, &d->diag);
}

/* Record an error: the first of a feed call is returned, later ones go
 * to on_warning (so results do not depend on chunking). */
static void note_err(el_ev_decoder_t *d, errs_t *E, int rc) {
  if (!E->first) {
    E->first = rc;
    E->diag = d->diag;
  } else {
    warn(d);
  }
}

/* "RUN_THREAD (type 1)", or "type 77" for a type we do not know. */
static const char *tname(int type, char *buf, size_t n) {
  const el_ev_type_info_t *t =
      type >= 0 && type <= 0xFFFF ? el_ev_type_info((uint16_t)type) : NULL;
  if (t)
    snprintf(buf, n, "%s (type %d)", t->name, type);
  else if (type >= 0)
    snprintf(buf, n, "type %d", type);
  else
    snprintf(buf, n, "unknown type");
  return buf;
}

/* Room for need bytes in the reassembly buffer, 256 at least (most events
 * fit at once, so it stops growing early). */
static int pend_room(el_ev_decoder_t *d, size_t need) {
  return el_grow(&d->pend, &d->pcap, need < 256 ? 256 : need, 1);
}

/* The n bytes at p, ending at input offset end, were decoded in DATA:
 * keep the last RS_BACK bytes decoded (back[]), continuing the ones kept
 * if they end where these begin, else starting afresh. */
static void back_push(el_ev_decoder_t *d, const uint8_t *p, size_t n,
                      uint64_t end) {
  if (!n)
    return;
  if (end - n != d->back_end)
    d->back_len = 0;
  if (n >= RS_BACK) {
    memcpy(d->back, p + n - RS_BACK, RS_BACK);
    d->back_len = RS_BACK;
  } else {
    size_t keep = d->back_len + n > RS_BACK ? RS_BACK - n : d->back_len;
    memmove(d->back, d->back + d->back_len - keep, keep);
    memcpy(d->back + keep, p, n);
    d->back_len = keep + n;
  }
  d->back_end = end;
}

/* The up to RS_BACK bytes just before input offset off that are known,
 * contiguous, into out: from buf (its first byte at offset buf_off, its
 * bytes up to off; NULL: none) and from back[]. Returns how many. */
static size_t back_fill(const el_ev_decoder_t *d, uint64_t off,
                        const uint8_t *buf, uint64_t buf_off, uint8_t *out) {
  uint8_t rev[RS_BACK];
  size_t k = 0;
  for (; k < RS_BACK && off > k; k++) {
    uint64_t o = off - 1 - k;
    if (buf && o >= buf_off)
      rev[k] = buf[o - buf_off];
    else if (o < d->back_end && d->back_end - o <= d->back_len)
      rev[k] = d->back[d->back_len - (size_t)(d->back_end - o)];
    else
      break;
  }
  for (size_t j = 0; j < k; j++)
    out[j] = rev[k - 1 - j];
  return k;
}

/* One step of the "hdrbhetb" matcher: m bytes matched, next byte c.
 * The only border is "h" (after "hdrbh"), hence the special case. */
static inline unsigned scan_step(unsigned m, uint8_t c) {
  if (c == magic8[m])
    return m + 1;
  if (m == 5 && c == 'd')
    return 2;
  return c == 'h';
}

/* Advance the matcher *m over buf[0..len). Returns the index just past
 * the first complete "hdrbhetb" (and resets *m), or NONE. */
static size_t match_magic(unsigned *m, const uint8_t *buf, size_t len) {
  unsigned s = *m;
  size_t i = 0;
  while (i < len) {
    if (s == 0) {
      const uint8_t *q = memchr(buf + i, 'h', len - i);
      if (!q)
        break;
      i = (size_t)(q - buf);
    }
    s = scan_step(s, buf[i++]);
    if (s == MAGIC_LEN) {
      *m = 0;
      return i;
    }
  }
  *m = i < len ? 0 : s;
  return NONE;
}

/* {====== a new stream inside the data (a raw tee, logs concatenated) ======} */

/* Are the k known bytes at q consistent with the stray pattern: a block
 * marker (type 18) of the global buffer (cap 0xFFFF) followed by
 * "hdrbhetb" (spec §5.4; shared/peers/eventlog-socket/README.md)? */
static int pat_prefix(const uint8_t *q, size_t k) {
  if (k > PAT_LEN)
    k = PAT_LEN;
  if (k > 0 && q[0] != 0x00)
    return 0;
  if (k > 1 && q[1] != EL_EV_BLOCK_MARKER)
    return 0;
  if (k > 22 && q[22] != 0xFF)
    return 0;
  if (k > 23 && q[23] != 0xFF)
    return 0;
  for (size_t j = STRAY_LEN; j < k; j++)
    if (q[j] != magic8[j - STRAY_LEN])
      return 0;
  return 1;
}

/* Is the stray pattern at q (PAT_LEN bytes, pat_prefix) a believable
 * eventlog-socket marker: its block wraps at least itself and the
 * header's first bytes, at most 16 MiB (a header), and it ends no earlier
 * than it begins (the real library's: about 2.7 KB, tens of us)? */
static int stray_believable(const uint8_t *q) {
  uint32_t size = el_ev_be32(q + 10);
  return size >= PAT_LEN && size <= (16u << 20) &&
         el_ev_be64(q + 14) >= el_ev_be64(q + 2);
}

/* Are the k known bytes at q consistent with the start of a header:
 * "hdrbhetb" and then the first declaration's "etb\0" or, for a header
 * that declares nothing, "hete" (HDR_LEN bytes, spec §1.2)? */
static int hdr_prefix(const uint8_t *q, size_t k) {
  if (k > HDR_LEN)
    k = HDR_LEN;
  size_t m = k < MAGIC_LEN ? k : MAGIC_LEN;
  if (memcmp(q, magic8, m))
    return 0;
  return k <= MAGIC_LEN || !memcmp(q + MAGIC_LEN, "etb", k - MAGIC_LEN) ||
         !memcmp(q + MAGIC_LEN, "hete", k - MAGIC_LEN);
}

/* Do the k bytes at q hold the whole start of a new stream: a header's
 * first HDR_LEN bytes or the stray pattern? */
static int new_stream_at(const uint8_t *q, size_t k) {
  return (k >= HDR_LEN && hdr_prefix(q, HDR_LEN)) ||
         (k >= PAT_LEN && pat_prefix(q, PAT_LEN));
}

/* The first c in [from, to) where a new stream starts in p[0..avail):
 * eventlog-socket's stray pattern (*kind = S_CUT) or a header (*kind =
 * S_HDR, HDR_LEN bytes: "hdrbhetb" alone is also ordinary text) begins
 * there, wholly in the bytes (*full = 1), or running past avail with the
 * known part matching (*full = 0, only when partial is set). NONE if
 * there is none. A whole candidate always precedes a partial one. */
static size_t find_new(const uint8_t *p, size_t avail, size_t from, size_t to,
                       int partial, int *full, int *kind) {
  if (to > avail)
    to = avail;
  if (from >= to)
    return NONE;
  /* Whole candidates: "hdrbhetb" at m, a header at c = m, or the stray
   * marker at c = m - 24, with c in [from, to). The smallest c wins:
   * past best + 24 no m gives a smaller one. */
  size_t best = NONE, m = from;
  size_t mend = to + STRAY_LEN;
  if (avail < MAGIC_LEN)
    mend = 0;
  else if (mend > avail - MAGIC_LEN + 1)
    mend = avail - MAGIC_LEN + 1;
  while (m < mend && (best == NONE || m < best + STRAY_LEN)) {
    const uint8_t *q = memchr(p + m, 'h', mend - m);
    if (!q)
      break;
    m = (size_t)(q - p);
    if (!memcmp(q, magic8, MAGIC_LEN)) {
      if (m >= from + STRAY_LEN && m - STRAY_LEN < to && m - STRAY_LEN < best &&
          pat_prefix(q - STRAY_LEN, STRAY_LEN)) {
        best = m - STRAY_LEN;
        *kind = S_CUT;
      } else if (m < to && m < best && m + HDR_LEN <= avail &&
                 hdr_prefix(q, HDR_LEN)) {
        best = m;
        *kind = S_HDR;
      }
    }
    m++;
  }
  if (best != NONE) {
    *full = 1;
    return best;
  }
  if (!partial)
    return NONE;
  size_t c = avail > PAT_LEN - 1 ? avail - (PAT_LEN - 1) : 0;
  for (c = c > from ? c : from; c < to; c++) {
    if (pat_prefix(p + c, avail - c))
      *kind = S_CUT;
    else if (avail - c < HDR_LEN && hdr_prefix(p + c, avail - c))
      *kind = S_HDR;
    else
      continue;
    *full = 0;
    return c;
  }
  return NONE;
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
  d->input_end = UINT64_MAX;
  /* header_begin writes the magic without allocating. */
  if (el_grow(&d->hbuf, &d->hcap, 256, 1)) {
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
  el_free(d->flen);
  el_free(d->raw);
  el_free(d->decls);
  el_free(d->holder);
  el_free(d->pend);
  el_free(d->rbuf);
  el_free(d->prev);
  el_free(d->masks);
  el_free(d);
}

int el_ev_decoder_set_opts(el_ev_decoder_t *d, unsigned opts) {
  if (opts & ~(EL_EV_OPT_SKIP_CAP_BLOCKS | EL_EV_OPT_LIVE |
               EL_EV_OPT_NO_FIELDS | EL_EV_OPT_CONNECTION))
    return EL_EINVAL;
  d->opts = opts;
  return 0;
}

unsigned el_ev_decoder_opts(const el_ev_decoder_t *d) { return d->opts; }

/* Bit id of the mask m (a masks_t member; every bit clear when the masks
 * are not allocated, m NULL). */
static int mask_bit(const uint64_t *m, uint16_t id) {
  return m && ((m[id >> 6] >> (id & 63)) & 1);
}

/* tab[] flags of a declared type for the wanted-fields mask and the
 * quiet mask: T_NOFIELDS on a fast type whose fields are not wanted,
 * T_QUIET on a fast type not to be delivered when the sink gave counters
 * for it. */
static uint32_t with_mask(const el_ev_decoder_t *d, uint16_t id, uint32_t t) {
  const masks_t *m = d->masks;
  int off = mask_bit(m ? m->nofields : NULL, id);
  int quiet = d->qc.events && mask_bit(m ? m->quiet : NULL, id);
  int direct =
      !quiet && d->qc.events && d->run_fn && mask_bit(m ? m->direct : NULL, id);
  t &= ~(T_NOFIELDS | T_QUIET | T_DIRECT);
  if (!(t & T_FAST))
    return t;
  return t | (off ? T_NOFIELDS : 0) | (quiet ? T_QUIET : 0) |
         (direct ? T_DIRECT : 0);
}

/* Apply the masks to the current session's table entries from..to-1
 * (tab[ntab] stays 0). */
/* A tab[] entry's EL_EV_RUN_* kind (el_ev_run_frame). */
static uint8_t run_kind(uint32_t t) {
  return !(t & T_FAST)  ? EL_EV_RUN_STOP
         : t & T_QUIET  ? EL_EV_RUN_QUIET
         : t & T_DIRECT ? EL_EV_RUN_DIRECT
                        : EL_EV_RUN_STOP;
}

static void remask(el_ev_decoder_t *d, size_t from, size_t to) {
  for (size_t i = from; i < to && i < d->ntab; i++)
    if (d->tab[i]) {
      d->tab[i] = with_mask(d, (uint16_t)i, d->tab[i]);
      d->flen[65536 + wire_key((uint16_t)i)] = run_kind(d->tab[i]);
    }
}

/* From inside on_event: the event being delivered gets the fields it was
 * delivered without if its type's are wanted now (a sink that comes to
 * want them before it looks at the event: a timer firing first). */
static void refill(el_ev_decoder_t *d) {
  el_ev_event_t *ev = &d->ev;
  if (!d->in_event || !ev->known || ev->nfields ||
      (d->opts & EL_EV_OPT_NO_FIELDS))
    return;
  uint32_t t = ev->type < d->ntab ? d->tab[ev->type] : 0;
  if ((t & T_FAST) && !(t & T_NOFIELDS))
    el__ev_decode_ints(&d->layouts[(t >> T_LAYOUT_SHIFT) - 1], ev->payload, ev);
}

/* Set (set != 0) or clear type's bit in the mask at byte offset moff of
 * masks_t, every type's for type -1, allocating the masks first; then
 * apply it to the table. Returns 0, EL_EINVAL (type outside -1..0xFFFE)
 * or EL_ENOMEM (the masks could not be allocated; nothing changed). */
static int set_mask(el_ev_decoder_t *d, size_t moff, int type, int set) {
  if (type < -1 || type >= 0xFFFF)
    return EL_EINVAL;
  if (!d->masks && !(d->masks = el_calloc(1, sizeof *d->masks)))
    return EL_ENOMEM;
  uint64_t *m = (uint64_t *)(void *)((char *)d->masks + moff);
  if (type < 0) {
    memset(m, set ? 0xFF : 0, sizeof d->masks->quiet);
  } else {
    uint64_t bit = (uint64_t)1 << (type & 63);
    if (set)
      m[type >> 6] |= bit;
    else
      m[type >> 6] &= ~bit;
  }
  remask(d, type < 0 ? 0 : (size_t)type, type < 0 ? d->ntab : (size_t)type + 1);
  return 0;
}

int el_ev_decoder_set_fields(el_ev_decoder_t *d, int type, int on) {
  int r = set_mask(d, offsetof(masks_t, nofields), type, !on);
  if (!r && on)
    refill(d);
  return r;
}

int el_ev_decoder_set_quiet(el_ev_decoder_t *d, int type, int on) {
  return set_mask(d, offsetof(masks_t, quiet), type, on);
}

int el_ev_decoder_set_direct(el_ev_decoder_t *d, int type, int on) {
  /* ndirect follows the bits set, counted as they change (recounting
   * the 1,024 words took 230,000 instructions of the daemon's start-up:
   * one call per type) */
  int was =
      type >= 0 && mask_bit(d->masks ? d->masks->direct : NULL, (uint16_t)type);
  int r = set_mask(d, offsetof(masks_t, direct), type, on);
  if (r)
    return r;
  if (type < 0)
    d->ndirect = on ? 65536 : 0;
  else if (on && !was)
    d->ndirect++;
  else if (!on && was)
    d->ndirect--;
  return 0;
}

void el_ev_decoder_direct_run(el_ev_decoder_t *d, el_ev_run_fn fn, void *ud) {
  d->run_fn = fn;
  d->run_ud = fn ? ud : NULL;
  remask(d, 0, d->ntab);
}

void el_ev_decoder_quiet_counters(el_ev_decoder_t *d, const el_ev_quiet_t *qc) {
  if (qc && qc->events && qc->tmax && qc->until)
    d->qc = *qc;
  else
    memset(&d->qc, 0, sizeof d->qc);
  remask(d, 0, d->ntab);
}

void el_ev_decoder_tally(el_ev_decoder_t *d, el_ev_tally_t *t) { d->tally = t; }

_Static_assert((int)EL_EV_WIRE_U8 == (int)EL__W_U8 &&
                   (int)EL_EV_WIRE_U16 == (int)EL__W_U16 &&
                   (int)EL_EV_WIRE_U32 == (int)EL__W_U32 &&
                   (int)EL_EV_WIRE_U64 == (int)EL__W_U64 &&
                   (int)EL_EV_WIRE_LOG2U8 == (int)EL__W_LOG2U8,
               "el_ev_fixed_t.wire holds el__ev_wire_t codes");

int el_ev_decoder_fixed(const el_ev_decoder_t *d, uint16_t type,
                        el_ev_fixed_t *out) {
  uint32_t t = d->have_hdr && type < d->ntab ? d->tab[type] : 0;
  if (!(t & T_FAST))
    return -1;
  const el__ev_layout_t *L = &d->layouts[(t >> T_LAYOUT_SHIFT) - 1];
  out->payload_len = t & T_SIZE_MASK;
  out->layout = L->variant;
  out->nfields = L->nfields;
  out->nwire = L->nwire;
  memset(out->wire, 0, sizeof out->wire);
  memcpy(out->wire, L->wire, L->nwire);
  return 0;
}

int el_ev_decoder_fields(const el_ev_decoder_t *d, uint16_t type) {
  return type == 0xFFFF ||
         !mask_bit(d->masks ? d->masks->nofields : NULL, type);
}

static void start_scan(el_ev_decoder_t *d, uint64_t from) {
  d->state = ST_SCAN;
  d->scan_m = 0;
  d->scan_from = from;
  d->scan_head_from = from;
  d->scan_head_n = 0;
  d->plen = 0;
}

static void data_end(el_ev_decoder_t *d, uint64_t off);
static void post_ignored(el_ev_decoder_t *d, uint64_t at);
static void lost_header_end(el_ev_decoder_t *d, uint64_t at, const char *what);

/* The input ends (or its connection) while the bytes after a DATA_END
 * that more data followed are being skipped (end_held): the data did end
 * there, and the bytes after it were ignored. */
static void end_release(el_ev_decoder_t *d) {
  d->end_held = 0;
  d->rs_clen = 0;
  data_end(d, d->end_off);
  post_ignored(d, d->base);
}

void el_ev_decoder_reset(el_ev_decoder_t *d) {
  /* A connection whose bytes held no header, or ended inside one, not
   * finished (a formatter that finishes once, at the end of input:
   * el_ev_show_t): said now, as finish would say it, a warning with its
   * code (EL_ETRUNC, diag.header); else the next connection would hide
   * it. */
  if (d->unfinished && ((d->state == ST_SCAN && !d->seen_header &&
                         !d->stats.sessions && d->base > d->scan_from) ||
                        d->state == ST_HEADER)) {
    if (d->state == ST_HEADER)
      header_cut(d);
    else
      no_header(d);
    warn(d);
    d->nohdr_said = 1;
  }
  d->unfinished = 0;
  if (d->state == ST_DATA && d->plen) {
    /* Complete events held back for lookahead were received: deliver
     * them (as finish would); only a partial one is forgotten. */
    static const uint8_t none[1];
    errs_t E = {0};
    size_t used = 0;
    d->eof = 1;
    data_feed(d, none, 0, &used, &E);
    d->eof = 0;
  }
  if (d->state == ST_RESYNC && d->end_held)
    end_release(d);
  else if (d->state == ST_RESYNC)
    resync_end(d, d->base, "to the end of the connection", 0);
  else if (d->hdr_lost)
    lost_header_end(d, d->base, "to the end of the connection");
  start_scan(d, d->base);
  d->hlen = 0;
  d->have_wall = 0;
  d->block_end = 0;
  d->block_cap = EL_EV_NO_CAP;
  d->outer.end = 0;
  d->landing = 0;
  d->seen_header = 0; /* the next header begins a new connection */
  d->nohdr_warned = 0;
}

const el_diag_t *el_ev_decoder_diag(const el_ev_decoder_t *d) {
  return &d->diag;
}

int el_ev_decoder_data_ended(const el_ev_decoder_t *d) {
  /* or its DATA_END, the last bytes fed, is held back to see whether more
   * data follows it (end_damaged: without EL_EV_OPT_LIVE; h89: report) */
  return (d->state == ST_POST && d->base == d->scan_from) ||
         (d->state == ST_DATA && d->plen == 2 && d->pend[0] == 0xFF &&
          d->pend[1] == 0xFF);
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
  (void)d;
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

/* Does declaration i sit where GHC would write it, between neighbours
 * with smaller and larger ids (GHC declares ids in increasing order)? */
static int in_id_order(const el_ev_decoder_t *d, size_t i) {
  uint16_t id = d->raw[i].id;
  return (i == 0 || d->raw[i - 1].id < id) &&
         (i + 1 == d->nraw || d->raw[i + 1].id > id);
}

static uint64_t decl_offset(const el_ev_decoder_t *d, size_t i) {
  return d->hoff + d->raw[i].desc_off - 12; /* "etb\0" id size dlen */
}

/* A second declaration i of an id already declared by j (docs/eventlog.md,
 * "Duplicate declarations"): identical ones are harmless; for different
 * sizes the one in increasing id order wins (a corrupted id is out of
 * order), else the last, as in ghc-events. Returns the winner. */
static size_t resolve_dup(el_ev_decoder_t *d, size_t j, size_t i) {
  const rawdecl_t *a = &d->raw[j], *b = &d->raw[i];
  size_t win = i;
  int same = a->size == b->size;
  if (!same && in_id_order(d, j) && !in_id_order(d, i))
    win = j;
  d->stats.dup_decls++;
  if (d->stats.dup_decls > MAX_DUP_WARN)
    return win;
  char nm[64], sa[16], sb[16];
  tname(b->id, nm, sizeof nm);
  snprintf(sa, sizeof sa, a->size == EL_EV_VARIABLE ? "variable" : "%u",
           a->size);
  snprintf(sb, sizeof sb, b->size == EL_EV_VARIABLE ? "variable" : "%u",
           b->size);
  if (same)
    set_diag(d, 0, decl_offset(d, i), b->id,
             "duplicate declaration of event %s at byte %llu, identical to "
             "the one at byte %llu (size %s); ignored",
             nm, (unsigned long long)decl_offset(d, i),
             (unsigned long long)decl_offset(d, j), sa);
  else
    set_diag(d, EL_EBADHDR, decl_offset(d, i), b->id,
             "conflicting declarations of event %s: size %s at byte %llu, "
             "size %s at byte %llu; using the one at byte %llu (%s)",
             nm, sa, (unsigned long long)decl_offset(d, j), sb,
             (unsigned long long)decl_offset(d, i),
             (unsigned long long)decl_offset(d, win),
             win == j ? "the other is out of id order"
                      : "the last one, as ghc-events");
  warn(d);
  if (d->stats.dup_decls == MAX_DUP_WARN) {
    set_diag(d, 0, decl_offset(d, i), -1,
             "further duplicate declarations are counted, not reported");
    warn(d);
  }
  return win;
}

/* The session's data begins (its header read): no block, no time seen. */
static void session_begin(el_ev_decoder_t *d) {
  d->state = ST_DATA;
  d->plen = 0;
  d->block_cap = EL_EV_NO_CAP;
  d->outer.end = 0;
  d->landing = 0;
  d->body_spliced = 0;
  d->have_wall = 0;
  d->sess_tmax = 0;
  d->sess_cap_hi = -1;
  d->sess_blocks = 0;
  d->nprev = 0;
  /* No block yet. Where the data begins, its first event is looked at
   * by step() (data_begin_at) when the data is made of blocks: the fast
   * path stops at block_end, so it is set there (before the first
   * block, block_end means nothing else: no event is inside it). */
  d->block_end = blocks_expected(d) ? d->data_off : 0;
}

static int header_done(el_ev_decoder_t *d) {
  size_t ntab = 0;
  for (size_t i = 0; i < d->nraw; i++)
    if (d->raw[i].id != 0xFFFF && (size_t)d->raw[i].id + 1 > ntab)
      ntab = (size_t)d->raw[i].id + 1;
  /* Entries below tabcap are all zero here (header_begin cleared the
   * previous session's); zero the new part. */
  if (!d->flen && !(d->flen = el_calloc(2 * 65536, 1)))
    return EL_ENOMEM; /* before tab: header_begin clears both */
  size_t old = d->tabcap;
  /* One entry more than the ids declared: tab[ntab] stays 0 (undeclared),
   * the entry fast_run reads for every id >= ntab. */
  if (el_grow(&d->tab, &d->tabcap, ntab + 1, sizeof *d->tab))
    return EL_ENOMEM;
  if (d->tabcap > old) /* tab may still be NULL (no ids declared) */
    memset(d->tab + old, 0, (d->tabcap - old) * sizeof *d->tab);
  if (el_grow(&d->holder, &d->holdcap, ntab, sizeof *d->holder) ||
      el_grow(&d->decls, &d->declcap, d->nraw, sizeof *d->decls))
    return EL_ENOMEM;
  for (size_t i = 0; i < d->nraw; i++)
    if (d->raw[i].id != 0xFFFF)
      d->holder[d->raw[i].id] = 0;
  for (size_t i = 0; i < d->nraw; i++) {
    rawdecl_t *r = &d->raw[i];
    d->decls[i].id = r->id;
    d->decls[i].size = r->size;
    d->decls[i].desc.p = (const char *)d->hbuf + r->desc_off;
    d->decls[i].desc.len = r->desc_len;
    d->decls[i].offset = decl_offset(d, i);
    d->decls[i].overridden = 0;
    if (r->id == 0xFFFF) {
      d->decls[i].known = 0;
      continue; /* DATA_END can never be an event type */
    }
    unsigned li = pick_layout(d, r->id, r->size);
    d->decls[i].known = li != 0;
    int dup = d->holder[r->id] != 0; /* an earlier declaration set it */
    if (dup) {
      size_t j = d->holder[r->id] - 1;
      size_t win = resolve_dup(d, j, i);
      d->decls[win == i ? j : i].overridden = 1;
      if (win == j)
        continue;
    }
    d->holder[r->id] = (uint32_t)i + 1;
    uint32_t fast =
        li && d->layouts[li - 1].intonly && r->size <= FAST_MAX_SIZE &&
                r->id != EL_EV_BLOCK_MARKER && r->id != EL_EV_WALL_CLOCK_TIME
            ? T_FAST
            : 0;
    d->tab[r->id] = with_mask(
        d, r->id, T_DECLARED | fast | r->size | (li << T_LAYOUT_SHIFT));
    /* Both tables are all zero here but for a duplicate's entries: only
     * the other values are written, since each write faults in a page
     * of them (one per 16 ids: wire_key), ~10 us each on a VM, and a
     * `show` has no run kinds (issue 16, start-up). */
    uint8_t len = fast ? (uint8_t)(10 + r->size) : 0,
            kind = run_kind(d->tab[r->id]);
    if (len || dup)
      d->flen[wire_key(r->id)] = len;
    if (kind || dup)
      d->flen[65536 + wire_key(r->id)] = kind;
  }
  d->ntab = ntab;
  d->hdr.decls = d->decls;
  d->hdr.ndecls = d->nraw;
  d->hdr.offset = d->hoff;
  d->hdr.session = ++d->sessions;
  d->have_hdr = 1;
  d->seen_header = 1;
  d->stats.sessions++;
  session_begin(d);
  if (d->sink.on_header && d->sink.on_header(d->sink.ud, &d->hdr))
    return EL_ESTOPPED;
  return 0;
}

/* Header step: an event type declaration or the end of the list, at h
 * (byte offset off). Returns 0 (the next step is set) or an error. */
static int h_mark(el_ev_decoder_t *d, const uint8_t *h, uint64_t off) {
  uint32_t m = el_ev_be32(h);
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
  return 0;
}

/* A declaration's description or extra info (what) at byte off declared
 * len bytes long, over MAX_DESC: a malformed header. Sets the diagnostic;
 * returns EL_EBADHDR. */
static int decl_too_long(el_ev_decoder_t *d, const uint8_t *h, uint64_t off,
                         const char *what, uint32_t len) {
  char nm[64];
  set_diag(d, EL_EBADHDR, off, el_ev_be16(h),
           "malformed header: %s of event %s at byte %llu is %u byte%s long",
           what, tname(el_ev_be16(h), nm, sizeof nm), (unsigned long long)off,
           len, plural(len));
  return EL_EBADHDR;
}

/* Header step: a declaration's id, size and description length, at h
 * (byte offset off). Returns 0 (the next step is set) or an error. */
static int h_decl_fixed(el_ev_decoder_t *d, const uint8_t *h, uint64_t off) {
  uint32_t dlen = el_ev_be32(h + 4);
  if (dlen > MAX_DESC)
    return decl_too_long(d, h, off, "description", dlen);
  d->hstep = H_DECL_DESC;
  d->hneed = d->hpos + 8 + dlen + 4;
  return 0;
}

/* Header step: a declaration's description and extra-info length, at h
 * (byte offset off). Returns 0 (the next step is set) or an error. */
static int h_decl_desc(el_ev_decoder_t *d, const uint8_t *h, uint64_t off) {
  uint32_t dlen = el_ev_be32(h + 4);
  uint32_t xlen = el_ev_be32(h + 8 + dlen);
  if (xlen > MAX_DESC)
    return decl_too_long(d, h, off, "extra info", xlen);
  d->hstep = H_DECL_END;
  d->hneed = d->hpos + 8 + dlen + 4 + xlen + 4;
  return 0;
}

/* Header step: a declaration's extra info and end marker, at h (byte
 * offset off): the declaration is kept. Returns 0 (the next step is set)
 * or an error. */
static int h_decl_end(el_ev_decoder_t *d, const uint8_t *h, uint64_t off) {
  uint32_t dlen = el_ev_be32(h + 4);
  uint32_t xlen = el_ev_be32(h + 8 + dlen);
  size_t end = 8 + dlen + 4 + xlen;
  if (el_ev_be32(h + end) != MARK_ETE) {
    char nm[64];
    set_diag(d, EL_EBADHDR, off + end, el_ev_be16(h),
             "malformed header: no end marker after event %s at byte "
             "%llu",
             tname(el_ev_be16(h), nm, sizeof nm),
             (unsigned long long)(off + end));
    return EL_EBADHDR;
  }
  if (el_grow(&d->raw, &d->rawcap, d->nraw + 1, sizeof *d->raw))
    return EL_ENOMEM;
  rawdecl_t *r = &d->raw[d->nraw++];
  r->id = el_ev_be16(h);
  r->size = el_ev_be16(h + 2);
  r->desc_off = (uint32_t)(d->hpos + 8);
  r->desc_len = dlen;
  d->hpos += end + 4;
  d->hstep = H_MARK;
  d->hneed = d->hpos + 4;
  return 0;
}

/* Header step: the header end and data begin markers at h (byte offset
 * off); then the header is done (header_done). Where they are not there,
 * the data begin marker is looked for after them (H_SEEK, h_seek).
 * Returns header_done's result, or 0 (the next step is set). */
static int h_end(el_ev_decoder_t *d, const uint8_t *h, uint64_t off) {
  if (el_ev_be32(h) != MARK_HDRE || el_ev_be32(h + 4) != MARK_DATB) {
    d->hstep = H_SEEK;
    d->hseek = d->hpos;
    d->hseek_said = 0;
    d->hneed = d->hlen; /* search the bytes held */
    return 0;
  }
  d->data_off = off + 8;
  int rc = header_done(d);
  if (rc != EL_ENOMEM)
    d->hpos += 8; /* on ENOMEM the step is retried */
  return rc;
}

/* Header step H_SEEK: the bytes from hpos (byte offset off, where "hdre"
 * should begin, right after "hete") are searched for the data begin
 * marker "datb", up to HDR_SEEK bytes on, one more byte at a time as they
 * come (the first one found whatever the chunking). Found, the bytes
 * before it (before the "hdre" just before it, if there is one) are a
 * corrupt part (EL_ECORRUPT, a warning: spec §1.2 "hdre" "datb"; bytes
 * inserted after "hete"), and the session's data begins after it.
 * Returns header_done's result, 0 (waiting for a byte more) or
 * EL_EBADHDR (none in HDR_SEEK bytes: "missing header end or data begin
 * marker"). */
static int h_seek(el_ev_decoder_t *d, uint64_t off) {
  size_t j = d->hseek;
  for (; j + 4 <= d->hlen; j++)
    if (el_ev_be32(d->hbuf + j) == MARK_DATB)
      break;
  if (j + 4 > d->hlen) {
    d->hseek = j;
    if (j - d->hpos < HDR_SEEK) {
      d->hneed = d->hlen + 1;
      return 0;
    }
    set_diag(d, EL_EBADHDR, off, -1,
             "malformed header: missing header end or data begin "
             "marker at byte %llu (no data begin marker in the %u bytes "
             "after it)",
             (unsigned long long)off, HDR_SEEK);
    return EL_EBADHDR;
  }
  d->hseek = j; /* (on EL_ENOMEM the step is retried: found again) */
  int hdre = j >= d->hpos + 4 && el_ev_be32(d->hbuf + j - 4) == MARK_HDRE;
  size_t lost = j - d->hpos - (hdre ? 4 : 0);
  /* "datb" found in the 8 bytes held for "hdre" "datb" (bytes of "hdre"
   * lost): the bytes after it are the data's, read first (from pend). */
  size_t left = d->hlen - (j + 4);
  if (left && pend_room(d, left))
    return EL_ENOMEM;
  if (!d->hseek_said) {
    d->hseek_said = 1;
    d->stats.skipped_bytes += lost;
    d->stats.corrupt_bytes += lost;
    d->stats.corrupt_parts++;
    if (lost)
      set_diag(d, EL_ECORRUPT, off, -1,
               "corrupt stream: malformed header: the header end and data "
               "begin markers are not at byte %llu, after the end of the "
               "type list; skipped %zu byte%s (%llu to %llu) to the %s at "
               "byte %llu",
               (unsigned long long)off, lost, plural(lost),
               (unsigned long long)off, (unsigned long long)(off + lost),
               hdre ? "header end marker" : "data begin marker",
               (unsigned long long)(off + lost));
    else
      set_diag(d, EL_ECORRUPT, off, -1,
               "corrupt stream: malformed header: no header end marker "
               "before the data begin marker at byte %llu, after the end "
               "of the type list (bytes lost?); nothing skipped",
               (unsigned long long)off);
    warn(d);
  }
  d->data_off = d->hoff + j + 4;
  int rc = header_done(d);
  if (rc == EL_ENOMEM)
    return rc;
  d->hpos = j + 4;
  if (left) { /* (header_done emptied pend) */
    memcpy(d->pend, d->hbuf + j + 4, left);
    d->plen = left;
    d->poff = d->data_off;
    d->hlen = j + 4;
  }
  return rc;
}

/* Run header steps while hbuf holds what they need. Returns 0 (need more or
 * done), or an error. */
static int header_steps(el_ev_decoder_t *d) {
  while (d->state == ST_HEADER && d->hlen >= d->hneed) {
    const uint8_t *h = d->hbuf + d->hpos;
    uint64_t off = d->hoff + d->hpos;
    int rc = 0;
    switch (d->hstep) {
    case H_MARK:
      rc = h_mark(d, h, off);
      break;
    case H_DECL_FIXED:
      rc = h_decl_fixed(d, h, off);
      break;
    case H_DECL_DESC:
      rc = h_decl_desc(d, h, off);
      break;
    case H_DECL_END:
      rc = h_decl_end(d, h, off);
      break;
    case H_END:
      rc = h_end(d, h, off);
      if (rc || d->hstep != H_SEEK)
        return rc;
      break;
    case H_SEEK:
      return h_seek(d, off);
    }
    if (rc)
      return rc;
    if (d->hneed > MAX_HEADER) {
      set_diag(d, EL_EBADHDR, d->hoff, -1,
               "header at byte %llu larger than %u bytes",
               (unsigned long long)d->hoff, MAX_HEADER);
      return EL_EBADHDR;
    }
  }
  return 0;
}

/* Up to 16 printable bytes (as_text's: a tab, a line feed or a carriage
 * return too, the last two written as spaces) at the start of the n
 * bytes at p, as text into out (16 + 1 bytes); 0 when fewer than 8 begin
 * it. Unlike as_text, what follows them does not matter: a program's
 * short output written over an eventlog's header leaves the header's
 * other bytes after it. */
static size_t text_prefix(const uint8_t *p, size_t n, char *out) {
  size_t k = 0;
  for (; k < n && k < 16; k++) {
    uint8_t c = p[k];
    if (c == '\n' || c == '\r')
      c = ' ';
    else if (c != '\t' && (c < 0x20 || c > 0x7e))
      break;
    out[k] = c == '"' ? '\'' : (char)c;
  }
  out[k] = '\0';
  return k >= 8 ? k : 0;
}

/* Keep the first bytes of the scan run that began at scan_from (buf: the
 * len bytes at d->base) in scan_head, as they come: whatever the
 * chunking, the same bytes. */
static void keep_scan_head(el_ev_decoder_t *d, const uint8_t *buf, size_t len) {
  if (d->scan_head_from != d->scan_from) {
    d->scan_head_from = d->scan_from;
    d->scan_head_n = 0;
  }
  uint64_t at = d->scan_from + d->scan_head_n;
  if (d->scan_head_n >= sizeof d->scan_head || at < d->base ||
      at >= d->base + len)
    return;
  size_t k = sizeof d->scan_head - d->scan_head_n;
  size_t have = (size_t)(d->base + len - at);
  if (k > have)
    k = have;
  memcpy(d->scan_head + d->scan_head_n, buf + (at - d->base), k);
  d->scan_head_n += (unsigned)k;
}

/* When the first of the n bytes skipped from scan_from (before a header,
 * or with none found) read as text, a hint quoting them for the message
 * (fmt: a printf format with one %s, the text, "..." after it when more
 * bytes follow), else "": out, size bytes. A program's own output in its eventlog (+RTS -ol/dev/stdout
 * with stdout sent to the same file: both write from byte 0, the text
 * over the header) is otherwise only "no eventlog header found". */
static const char *text_at_start(const el_ev_decoder_t *d, uint64_t n,
                                 const char *fmt, char *out, size_t size) {
  char text[20];
  size_t k = d->scan_head_from == d->scan_from ? d->scan_head_n : 0;
  if (k > n)
    k = (size_t)n;
  size_t t = text_prefix(d->scan_head, k, text);
  if (!t)
    return "";
  if (t < n)
    memcpy(text + t, "...", 4);
  snprintf(out, size, fmt, text);
  return out;
}

/* Were the n bytes skipped before a header exactly eventlog-socket's
 * stray block marker (pat_prefix), the normal start of each of its
 * connections (spec §5.4), rather than other stray bytes? */
static int stray_marker_only(const el_ev_decoder_t *d, uint64_t n) {
  return n == STRAY_LEN && d->scan_head_from == d->scan_from &&
         d->scan_head_n == STRAY_LEN && pat_prefix(d->scan_head, STRAY_LEN);
}

/* A later header could not be read (hdr_lost): its bytes from rs_from
 * up to at, where decoding goes on (what: "to the header at byte N", "to
 * the end of the input"), are a corrupt part: counted and reported once,
 * as resync_end reports one (EL_ECORRUPT, a warning), instead of "stray
 * bytes" before the next header or bytes "ignored" at the end. */
static void lost_header_end(el_ev_decoder_t *d, uint64_t at, const char *what) {
  uint64_t n = at - d->rs_from;
  d->hdr_lost = 0;
  d->stats.skipped_bytes += n;
  d->stats.corrupt_bytes += n;
  d->stats.corrupt_parts++;
  set_diag(d, EL_ECORRUPT, d->rs_from, -1,
           "corrupt stream: %s; skipped %llu byte%s (%llu to %llu), the "
           "header and its session, %s",
           d->rs_why, (unsigned long long)n, plural(n),
           (unsigned long long)d->rs_from, (unsigned long long)at, what);
  warn(d);
  d->diag.code = 0;
  d->scan_from = at;
}

static void header_begin(el_ev_decoder_t *d, uint64_t off) {
  if (d->hdr_lost) {
    char what[64];
    snprintf(what, sizeof what, "to the header at byte %llu",
             (unsigned long long)off);
    lost_header_end(d, off, what);
  }
  uint64_t skipped = off - d->scan_from;
  if (skipped) {
    char hint[128];
    d->stats.skipped_bytes += skipped;
    d->stats.stray_bytes += skipped;
    set_diag(d, 0, d->scan_from, -1,
             "skipped %llu stray byte%s at byte %llu before the header at "
             "byte %llu%s",
             (unsigned long long)skipped, plural(skipped),
             (unsigned long long)d->scan_from, (unsigned long long)off,
             text_at_start(d, skipped,
                           " (text: \"%s\": program output in the "
                           "eventlog?)",
                           hint, sizeof hint));
    d->diag.expected = stray_marker_only(d, skipped);
    warn(d);
  }
  memcpy(d->hbuf, magic8, MAGIC_LEN);
  d->hlen = MAGIC_LEN;
  d->hpos = MAGIC_LEN;
  d->hstep = H_MARK;
  d->hneed = 12;
  d->hoff = off;
  d->hscan_m = 0;
  /* Forget the previous session's table: only its declared ids are set
   * (raw[] still lists them; cheaper than clearing all 64 Ki entries). */
  for (size_t i = 0; i < d->nraw; i++)
    if (d->raw[i].id < d->tabcap) {
      d->tab[d->raw[i].id] = 0;
      d->flen[wire_key(d->raw[i].id)] = 0;
      d->flen[65536 + wire_key(d->raw[i].id)] = 0;
    }
  d->nraw = 0;
  d->ntab = 0;
  d->have_hdr = 0;
  d->state = ST_HEADER;
}

/* Copy header bytes from buf; *used receives how many were taken. A
 * "hdrbhetb" inside the header's bytes means this header was cut off by
 * a new stream (a tee of connections, or a cut log and a whole one
 * joined): the new header starts there. While the bytes held end with
 * the start of "hdrbhetb", the steps wait for the bytes that decide (a
 * valid header never ends so: its last bytes are "datb"), so that a
 * field read from the new header's bytes cannot make the cut header an
 * error. */
static int header_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                       size_t *used) {
  size_t u = 0;
  int rc = 0;
  while (d->state == ST_HEADER && u < len) {
    /* (Steps that wait for the match take the bytes that decide it;
     * others, e.g. one retried after EL_ENOMEM, take nothing.) */
    size_t want = d->hneed > d->hlen ? d->hneed - d->hlen
                  : d->hscan_m       ? MAGIC_LEN - d->hscan_m
                                     : 0;
    size_t take = len - u < want ? len - u : want;
    unsigned m = d->hscan_m;
    size_t k = match_magic(&m, buf + u, take);
    if (k != NONE) {
      uint64_t at = d->base + u + k - MAGIC_LEN;
      d->stats.skipped_bytes += at - d->hoff;
      set_diag(d, 0, d->hoff, -1,
               "header at byte %llu cut off at byte %llu by a new header: "
               "%llu byte%s dropped",
               (unsigned long long)d->hoff, (unsigned long long)at,
               (unsigned long long)(at - d->hoff), plural(at - d->hoff));
      warn(d);
      d->scan_from = at;
      header_begin(d, at);
      u += k;
      continue;
    }
    if ((rc = el_grow(&d->hbuf, &d->hcap, d->hlen + take, 1)))
      break;
    d->hscan_m = m; /* (not before: on EL_ENOMEM the bytes come again) */
    memcpy(d->hbuf + d->hlen, buf + u, take);
    d->hlen += take;
    u += take;
    if (!d->hscan_m && (rc = header_steps(d)))
      break;
  }
  *used = u;
  return rc;
}

/* Scan for "hdrbhetb"; returns bytes consumed (through the magic if
 * found, in which case the state is now HEADER). */
/* Bytes looked through for a first header before a warning that the
 * input may not be an eventlog (it is still read: a raw tee may begin with
 * any amount of a cut connection's bytes). */
#define NOHDR_WARN (64u << 20)

/* What "no eventlog header found" adds when the bytes read as text
 * (text_at_start). */
#define NOHDR_TEXT                                                       \
  "; they begin with text (\"%s\"): not an eventlog, or a program's "    \
  "own output written over its header (+RTS -ol/dev/stdout with stdout " \
  "sent to the same file)?"

static size_t scan(el_ev_decoder_t *d, const uint8_t *buf, size_t len) {
  keep_scan_head(d, buf, len);
  size_t k = match_magic(&d->scan_m, buf, len);
  if (k == NONE) {
    uint64_t looked = d->base + len - d->scan_from;
    if (!d->seen_header && !d->nohdr_warned && looked >= NOHDR_WARN) {
      char hint[160];
      d->nohdr_warned = 1;
      set_diag(d, 0, d->scan_from, -1,
               "no eventlog header in %llu MiB from byte %llu: is this an "
               "eventlog? (still looking)%s",
               (unsigned long long)(looked >> 20),
               (unsigned long long)d->scan_from,
               text_at_start(d, looked,
                             "; it begins with text (\"%s\"): a "
                             "program's own output written into it?",
                             hint, sizeof hint));
      warn(d);
    }
    return len;
  }
  header_begin(d, d->base + k - MAGIC_LEN);
  return k;
}

/* {====== resynchronisation after a corrupt part ======}
 *
 * An event that does not fit its block, or an undeclared type in a
 * session that has blocks, starts a corrupt part (resync_begin). The
 * bytes from up to RS_BACK before it on are searched for the next
 * believable block marker (rs_marker_ok) or "hdrbhetb" (only markers
 * behind it); decoding goes on there in DATA, which
 * delivers the marker (or starts the new session). The part skipped is
 * reported once, with its offset and length, when its end is known
 * (resync_end). Every decision waits for the RS_WIN bytes it depends on
 * (held in rs_carry across feeds) or for finish, so the result does not
 * depend on chunking. */

/* Is the block marker at q (RS_LOOK bytes, its type declared with the
 * 14-byte payload) believable in its size and times (where an event is
 * expected, marker_fine also asks for its capability): a size from 24
 * bytes to 16 MiB, an end time not before its start, and a start time at
 * most RS_AHEAD_NS after the largest time of the session so far (a block
 * starts when the same capability's previous block was flushed, or at
 * the session's start)? The end time has no upper bound: an idle
 * program's block can be flushed hours after the last event. */
static int marker_ok(const el_ev_decoder_t *d, const uint8_t *q) {
  uint64_t t = el_ev_be64(q + 2), te = el_ev_be64(q + 14);
  uint32_t size = el_ev_be32(q + 10);
  return size >= RS_LOOK && size <= MAX_BLOCK && te >= t &&
         (!d->sess_tmax || t <= d->sess_tmax + RS_AHEAD_NS);
}

/* Is capability cap believable for a block marker where an event is
 * expected: 0xFFFF (the global block), at most CAP_MAX_BELIEVED (any -N
 * up to 1024, whatever order its blocks come in), or at most the largest
 * seen in the session + 1 (GHC numbers them from 0)? A capability never
 * seen and far above every other (a damaged field, e.g. 32767 in a
 * session of capabilities 0 and 1) is not. Resync targets are held to
 * the stricter rs_marker_ok. */
static int cap_ok(const el_ev_decoder_t *d, unsigned cap) {
  return cap == EL_EV_NO_CAP || cap <= CAP_MAX_BELIEVED ||
         (int)cap <= d->sess_cap_hi + 1;
}

/* The block marker at q (RS_LOOK bytes) is believable where an event is
 * expected: marker_ok, and its capability (cap_ok). */
static int marker_fine(const el_ev_decoder_t *d, const uint8_t *q) {
  return marker_ok(d, q) && cap_ok(d, el_ev_be16(q + 22));
}

/* prev[]'s index for capability cap: 0 for the global block (0xFFFF),
 * then cap + 1 up to CAP_MAX_BELIEVED; -1: not kept. */
static int prev_ix(unsigned cap) {
  return cap == EL_EV_NO_CAP ? 0 : cap <= CAP_MAX_BELIEVED ? (int)cap + 1 : -1;
}

/* Is the block marker at q (RS_LOOK bytes) out of its capability's time
 * order: does its block begin before the end of the same capability's
 * previous block in the session (prev[]), and not after that block's
 * start? GHC closes a block (its end time) before it opens the next one
 * of the same capability (its start time, on the same monotonic clock):
 * such a block is one seen already (the same bytes repeated) or an
 * earlier one in a later place. A block beginning after the previous
 * one's start but before its end is not: one damaged time (the other's
 * end) explains it as well, and rejecting blocks on it would lose every
 * later block of that capability. */
static int out_of_order(const el_ev_decoder_t *d, const uint8_t *q) {
  int i = prev_ix(el_ev_be16(q + 22));
  uint64_t t0 = el_ev_be64(q + 2);
  return i >= 0 && (size_t)i < d->nprev && t0 < d->prev[i].t1 &&
         t0 <= d->prev[i].t0;
}

/* The frame at p (n bytes) is a block marker that is not believable. */
static int marker_bad(const el_ev_decoder_t *d, const uint8_t *p, size_t n) {
  return n == RS_LOOK && el_ev_be16(p) == EL_EV_BLOCK_MARKER &&
         (d->tab[EL_EV_BLOCK_MARKER] & T_SIZE_MASK) == RS_LOOK - 10 &&
         !marker_fine(d, p);
}

/* The session's data is made of blocks: it has had one, or its header
 * declares BLOCK_MARKER with a marker's size (every GHC eventlog; its
 * data begins with a block marker). Bytes that do not frame outside any
 * block are then a corrupt part up to the next believable block, also
 * before the first one (a byte inserted there, a program's output
 * written into its eventlog). */
static int blocks_expected(const el_ev_decoder_t *d) {
  return d->sess_blocks ||
         (EL_EV_BLOCK_MARKER < d->ntab &&
          (d->tab[EL_EV_BLOCK_MARKER] & T_DECLARED) &&
          (d->tab[EL_EV_BLOCK_MARKER] & T_SIZE_MASK) == RS_LOOK - 10);
}

/* A resync target: marker_ok, and a capability that is 0xFFFF or at most
 * the largest seen in the session + 1 (GHC numbers them from 0), or at
 * most RS_CAP_FIRST; and in its capability's time order (out_of_order:
 * the blocks of a range repeated are skipped as one part). */
static int rs_marker_ok(const el_ev_decoder_t *d, const uint8_t *q) {
  unsigned cap = el_ev_be16(q + 22);
  int hi =
      d->sess_cap_hi + 1 > RS_CAP_FIRST ? d->sess_cap_hi + 1 : RS_CAP_FIRST;
  return marker_ok(d, q) && (cap == EL_EV_NO_CAP || (int)cap <= hi) &&
         !out_of_order(d, q);
}

/* The body of the candidate marker at q (avail bytes there; eof: no
 * more), from q + RS_LOOK + k: the events in its first RS_CHAIN bytes
 * must be declared, fit the block and have times within the marker's
 * start and end; in the global block (cap 0xFFFF) also before its start,
 * where one at least is within them (chain_at's early: an old GHC's
 * startup events, ghc-events' parallelTest). RS_HIT, RS_NO, or RS_NEED
 * (more bytes decide). */
static int chain_at(const el_ev_decoder_t *d, const uint8_t *q, size_t avail,
                    int eof, size_t pos, size_t end, uint64_t t0, uint64_t t1,
                    int early);

static int rs_chain1(const el_ev_decoder_t *d, const uint8_t *q, size_t avail,
                     int eof, size_t k) {
  return chain_at(d, q, avail, eof, RS_LOOK + k, el_ev_be32(q + 10),
                  el_ev_be64(q + 2), el_ev_be64(q + 14),
                  el_ev_be16(q + 22) == EL_EV_NO_CAP);
}

/* The events from q + pos (avail bytes at q; eof: no more), over
 * RS_CHAIN bytes or up to q + end if that comes first: each declared,
 * ending at or before q + end, dated from t0 to t1; with early, also
 * before t0 (never after t1), as long as one of them is from t0 to t1
 * (zero bytes, type 0 dated 0, do not chain). RS_HIT, RS_NO, or RS_NEED
 * (more bytes decide). */
static int chain_at(const el_ev_decoder_t *d, const uint8_t *q, size_t avail,
                    int eof, size_t pos, size_t end, uint64_t t0, uint64_t t1,
                    int early) {
  if (pos > end)
    return RS_NO;
  size_t lim = end - pos < RS_CHAIN ? end : pos + RS_CHAIN;
  int within = !early; /* an event from t0 to t1 was seen (or needed not) */
  while (pos < lim) {
    if (avail < pos + 2)
      return eof ? RS_NO : RS_NEED;
    unsigned type = el_ev_be16(q + pos);
    uint32_t t = type < d->ntab ? d->tab[type] : 0;
    if (!(t & T_DECLARED))
      return RS_NO;
    if (avail < pos + ((t & T_SIZE_MASK) == EL_EV_VARIABLE ? 12 : 10))
      return eof ? RS_NO : RS_NEED;
    uint64_t et = el_ev_be64(q + pos + 2);
    if (et > t1 || (et < t0 && !early))
      return RS_NO;
    within |= et >= t0;
    size_t n = t & T_SIZE_MASK;
    n = n == EL_EV_VARIABLE ? 12 + (size_t)el_ev_be16(q + pos + 10) : 10 + n;
    if (pos + n > end)
      return RS_NO;
    pos += n;
  }
  return within ? RS_HIT : RS_NO;
}

/* rs_chain1 from the body's first byte, else (the block begins with the
 * tail of an event cut by a flush, GHC #26222, §4.6) from the first of
 * the next RS_TAIL bytes where it holds: *tail = that many bytes. The
 * first k that is not RS_NO decides. */
static int rs_chain(const el_ev_decoder_t *d, const uint8_t *q, size_t avail,
                    int eof, size_t *tail) {
  for (size_t k = 0; k <= RS_TAIL; k++) {
    int r = rs_chain1(d, q, avail, eof, k);
    if (r != RS_NO) {
      *tail = k;
      return r;
    }
  }
  return RS_NO;
}

/* Does a resync target start at q (avail bytes; eof: no more)? *tail:
 * for a marker, the bytes after it to skip (rs_chain). */
static int rs_check(const el_ev_decoder_t *d, const uint8_t *q, size_t avail,
                    int eof, size_t *tail) {
  int need = eof ? RS_NO : RS_NEED;
  *tail = 0;
  if (!avail)
    return need;
  if (q[0] == 'h') {
    size_t k = avail < MAGIC_LEN ? avail : MAGIC_LEN;
    if (memcmp(q, magic8, k))
      return RS_NO;
    return k == MAGIC_LEN ? RS_HIT : need;
  }
  if (q[0] != 0 || (avail > 1 && q[1] != EL_EV_BLOCK_MARKER))
    return RS_NO;
  if (d->ntab <= EL_EV_BLOCK_MARKER ||
      (d->tab[EL_EV_BLOCK_MARKER] & (T_DECLARED | T_SIZE_MASK)) !=
          (T_DECLARED | (RS_LOOK - 10)))
    return RS_NO; /* markers cannot be framed in this session */
  if (avail < RS_LOOK)
    return need;
  return rs_marker_ok(d, q) ? rs_chain(d, q, avail, eof, tail) : RS_NO;
}

/* rs_why for the block marker at p (offset off) out of its capability's
 * time order (out_of_order). */
static void order_why(el_ev_decoder_t *d, const uint8_t *p, uint64_t off) {
  unsigned cap = el_ev_be16(p + 22);
  int i = prev_ix(cap);
  snprintf(d->rs_why, sizeof d->rs_why,
           "block marker at byte %llu (cap %u, %llu to %llu ns) begins "
           "before the end (%llu ns) of cap %u's block at byte %llu: "
           "repeated or misplaced",
           (unsigned long long)off, cap, (unsigned long long)el_ev_be64(p + 2),
           (unsigned long long)el_ev_be64(p + 14),
           (unsigned long long)d->prev[i].t1, cap,
           (unsigned long long)d->prev[i].off);
}

/* Why a corrupt part begins (resync_begin). */
enum { RS_NOFIT, RS_UNDECL, RS_BADMARK, RS_END };

/* The event at off (type from p: 2 bytes there; 24 for RS_BADMARK) does
 * not frame: RS_UNDECL, its type is not declared; RS_NOFIT, it does not
 * fit its block (cut by a flush, GHC #26222, §4.6; or a block marker
 * before it was garbage), or stands where its block ended without
 * chaining as its events (reopen_at); RS_BADMARK, it is a block marker
 * that is not believable (marker_bad); RS_END, it is a DATA_END that
 * more data follows (end_damaged). Start skipping; the caller goes on at
 * off + 1. The search (resync_feed) begins up to RS_BACK bytes before
 * off, with the bytes decoded there (from buf, whose first byte is at
 * offset buf_off, NULL: none, and back[]: back_fill), carried: a block
 * marker whose first bytes the event before off framed as its own (bytes
 * lost before the marker) is found there; and at off itself (a
 * believable marker that crosses the end its block declared). */
static void resync_begin(el_ev_decoder_t *d, const uint8_t *p, uint64_t off,
                         int why, const uint8_t *buf, uint64_t buf_off) {
  char nm[64];
  int type = el_ev_be16(p);
  if (why == RS_BADMARK)
    snprintf(d->rs_why, sizeof d->rs_why,
             "block marker at byte %llu is not believable (size %u, times "
             "%llu to %llu ns, cap %u; largest time so far %llu ns)",
             (unsigned long long)off, (unsigned)el_ev_be32(p + 10),
             (unsigned long long)el_ev_be64(p + 2),
             (unsigned long long)el_ev_be64(p + 14),
             (unsigned)el_ev_be16(p + 22), (unsigned long long)d->sess_tmax);
  else if (why == RS_END)
    snprintf(d->rs_why, sizeof d->rs_why,
             "end-of-data marker (type 0xFFFF) at byte %llu is followed by "
             "more data, not by a new eventlog",
             (unsigned long long)off);
  else if (d->bad_order)
    order_why(d, p, off);
  else if (d->bad_time && off < d->block_end)
    snprintf(d->rs_why, sizeof d->rs_why,
             "event %s at byte %llu is dated %llu ns, after the end of its "
             "block (cap %u, %llu to %llu ns)",
             tname(type, nm, sizeof nm), (unsigned long long)off,
             (unsigned long long)el_ev_be64(p + 2), d->block_cap,
             (unsigned long long)d->block_t0, (unsigned long long)d->block_t1);
  else if (type == 0xFFFF && why == RS_NOFIT && off < d->block_end)
    snprintf(d->rs_why, sizeof d->rs_why,
             "end-of-data marker (type 0xFFFF) at byte %llu inside a block "
             "(cap %u) that ends at byte %llu, not the end of the data",
             (unsigned long long)off, d->block_cap,
             (unsigned long long)d->block_end);
  else if (why == RS_UNDECL ||
           !(type < (int)d->ntab && (d->tab[type] & T_DECLARED)))
    snprintf(
        d->rs_why, sizeof d->rs_why,
        "event type %d%s%s%s at byte %llu is not declared in the "
        "header%s",
        type, el_ev_type_info((uint16_t)type) ? " (known as " : "",
        el_ev_type_info((uint16_t)type) ? el_ev_type_info((uint16_t)type)->name
                                        : "",
        el_ev_type_info((uint16_t)type) ? ")" : "", (unsigned long long)off,
        why == RS_UNDECL ? " (outside any block)" : " (inside a block)");
  else if (off < d->block_end)
    snprintf(d->rs_why, sizeof d->rs_why,
             "event %s at byte %llu does not fit its block (cap %u, ending "
             "at byte %llu)",
             tname(type, nm, sizeof nm), (unsigned long long)off, d->block_cap,
             (unsigned long long)d->block_end);
  else
    snprintf(d->rs_why, sizeof d->rs_why,
             "event %s at byte %llu is outside any block",
             tname(type, nm, sizeof nm), (unsigned long long)off);
  d->bad_time = 0;
  d->bad_order = 0;
  d->end_held = why == RS_END;
  d->end_off = off;
  d->rs_from = off;
  d->rs_next_note = RS_NOTE;
  d->rs_type = type;
  size_t k = back_fill(d, off, buf, buf_off, d->rs_carry);
  d->rs_carry[k] = p[0];
  d->rs_clen = k + 1; /* (the caller consumes p[0]: they precede base) */
  d->block_end = 0;
  d->block_cap = EL_EV_NO_CAP;
  d->outer.end = 0;
  d->landing = 0;
  d->state = ST_RESYNC;
}

/* The corrupt part ends at offset at (what: where decoding goes on):
 * count it and report it once. A block marker found before rs_from (at
 * < rs_from: resync_begin looked back) was framed in part as the end of
 * the event before rs_from, which was delivered: nothing is skipped (but
 * a cut event's tail after the marker); the overlap is the part. */
static void resync_end(el_ev_decoder_t *d, uint64_t at, const char *what,
                       size_t tail) {
  if (at < d->rs_from) {
    uint64_t k = d->rs_from - at;
    d->stats.skipped_bytes += tail;
    d->stats.corrupt_bytes += k + tail;
    d->stats.corrupt_parts++;
    set_diag(d, EL_ECORRUPT, at, d->rs_type,
             "corrupt stream: %s; the block marker at byte %llu is %llu "
             "byte%s back, inside the event before (delivered ending with "
             "the marker's first byte%s: lost byte%s?); %llu byte%s skipped",
             d->rs_why, (unsigned long long)at, (unsigned long long)k,
             plural(k), plural(k), plural(k), (unsigned long long)tail,
             plural(tail));
    warn(d);
    d->rs_clen = 0;
    return;
  }
  uint64_t n = at - d->rs_from + tail;
  d->stats.skipped_bytes += n;
  d->stats.corrupt_bytes += n;
  d->stats.corrupt_parts++;
  if (!n) /* a believable marker crossing the end of the block before */
    set_diag(d, EL_ECORRUPT, d->rs_from, d->rs_type,
             "corrupt stream: %s; it is a believable block marker with its "
             "block (the size of the one before is damaged?): decoded, "
             "nothing skipped",
             d->rs_why);
  else
    set_diag(d, EL_ECORRUPT, d->rs_from, d->rs_type,
             "corrupt stream: %s; skipped %llu byte%s (%llu to %llu%s) %s",
             d->rs_why, (unsigned long long)n, plural(n),
             (unsigned long long)d->rs_from, (unsigned long long)at,
             tail ? ", and after the marker the tail of a cut event" : "",
             what);
  warn(d);
  d->rs_clen = 0;
}

/* A target at offset at (its bytes at q): DATA goes on there, or, for a
 * marker followed by the tail of a cut event, the marker is delivered
 * here and DATA goes on after the tail. Returns 0 or EL_ESTOPPED. */
static int resync_land(el_ev_decoder_t *d, uint64_t at, const uint8_t *q,
                       size_t tail) {
  char what[128];
  if (d->end_held && q[0] == 'h') {
    /* The data did end at end_off: new_stream says what was skipped. */
    d->rs_clen = 0;
    d->state = ST_DATA;
    d->plen = 0;
    return 0;
  }
  d->end_held = 0; /* a block: the session goes on */
  snprintf(what, sizeof what, "to the %s at byte %llu",
           q[0] == 'h' ? "header" : "block marker", (unsigned long long)at);
  resync_end(d, at, what, tail);
  d->state = ST_DATA;
  d->plen = 0;
  if (!tail)
    return 0;
  return deliver(d, q, RS_LOOK, at);
}

/* A corrupt part of a live input (EL_EV_OPT_LIVE: a socket, FIFO or pipe,
 * where it may last as long as the connection) that has gone on for a
 * while is said while it lasts (a
 * warning, code 0: it is counted and said again, with its extent, when it
 * ends): at RS_NOTE bytes from its start, then each time it doubles.
 * h88: 4.5 GB of garbage after a socket's eventlog went unsaid for 15 s,
 * and would have until the connection ended. Called with base moved
 * past the bytes searched. */
static void resync_note(el_ev_decoder_t *d) {
  uint64_t n = d->base - d->rs_from;
  if (!(d->opts & EL_EV_OPT_LIVE) || d->end_held || n < d->rs_next_note)
    return;
  while (d->rs_next_note <= n && d->rs_next_note < UINT64_MAX / 2)
    d->rs_next_note *= 2;
  set_diag(d, 0, d->rs_from, d->rs_type,
           "corrupt stream: %s; %llu MiB skipped so far (from byte %llu), "
           "no believable block marker or header yet (still looking; said "
           "again at %llu MiB)",
           d->rs_why, (unsigned long long)(n >> 20),
           (unsigned long long)d->rs_from,
           (unsigned long long)(d->rs_next_note >> 20));
  warn(d);
}

/* ST_RESYNC: search buf (after the carried bytes) for a target. *used:
 * bytes consumed (up to the target, or all). Returns 0, or EL_ENOMEM or
 * EL_ESTOPPED (a marker delivered here stopped decoding). */
static int resync_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                       size_t *used) {
  int eof = d->eof, r;
  size_t tail;
  *used = 0;
  if (d->rs_clen) {
    uint8_t w[2 * RS_WIN];
    size_t c = d->rs_clen, t = len < RS_WIN ? len : RS_WIN;
    memcpy(w, d->rs_carry, c);
    memcpy(w + c, buf, t);
    uint64_t w0 = d->base - c;
    for (size_t j = 0; j < c; j++) {
      if (w0 + j < d->rs_from && w[j] != 0)
        continue; /* looking back: block markers only */
      r = rs_check(d, w + j, c + t - j, eof, &tail);
      if (r == RS_NO)
        continue;
      if (r == RS_NEED) { /* all of buf is in w: keep waiting */
        memmove(d->rs_carry, w + j, c + t - j);
        d->rs_clen = c + t - j;
        *used = len;
        return 0;
      }
      /* The target begins among the carried bytes: DATA reads the rest
       * of them first (from pend), then buf. */
      size_t from = tail ? j + RS_LOOK + tail : j; /* in w */
      if (from < c && pend_room(d, c - from))
        return EL_ENOMEM;
      d->rs_clen = 0;
      int rc = resync_land(d, w0 + j, w + j, tail);
      if (from < c && d->state == ST_DATA) {
        /* (in ST_BODY, the skipped body, they need not be read) */
        memcpy(d->pend, w + from, c - from);
        d->plen = c - from;
        d->poff = w0 + from;
      } else if (from >= c) {
        *used = from - c;
      }
      return rc;
    }
    d->rs_clen = 0;
  }
  for (size_t i = 0; i < len; i++) {
    if (buf[i] != 0 && buf[i] != 'h')
      continue;
    r = rs_check(d, buf + i, len - i, eof, &tail);
    if (r == RS_NO)
      continue;
    if (r == RS_NEED) { /* fewer than RS_WIN bytes left */
      memcpy(d->rs_carry, buf + i, len - i);
      d->rs_clen = len - i;
      *used = len;
      return 0;
    }
    *used = tail ? i + RS_LOOK + tail : i;
    return resync_land(d, d->base + i, buf + i, tail);
  }
  *used = len;
  return 0;
}

/* ST_BODY: a capability block's body, not read (SKIP_CAP_BLOCKS). */
static size_t skip_body(el_ev_decoder_t *d, size_t len) {
  uint64_t left = d->skip_until - d->base;
  if (left > len)
    return len;
  d->state = ST_DATA;
  d->landing = !d->body_spliced; /* (the block it lay in goes on) */
  d->body_spliced = 0;
  return (size_t)left;
}

void el__ev_decoder_set_input_end(el_ev_decoder_t *d, uint64_t end) {
  d->input_end = end;
}

int el__ev_decoder_body_end(const el_ev_decoder_t *d, uint64_t *end) {
  if (d->state == ST_BODY) {
    *end = d->skip_until;
    return 1;
  }
  if (d->state == ST_DATA && d->landing) { /* not checked yet */
    *end = d->skip_until;
    return 1;
  }
  return 0;
}

void el__ev_decoder_skip_to(el_ev_decoder_t *d, uint64_t to) {
  if (d->state != ST_BODY || to <= d->base)
    return;
  if (to > d->skip_until)
    to = d->skip_until;
  size_t n = skip_body(d, (size_t)(to - d->base));
  d->base += n;
  d->stats.bytes += n;
}

/* {====== events ======} */

/* Frame the event at p[0..avail): returns its total length, or 0 when more
 * bytes are needed (*need = total bytes needed so far), or a negative
 * error; *claim = the length its header claims (0 if not known yet).
 * eof: no more bytes will come (decides the IPE peek, §4.4). */
static inline long frame(el_ev_decoder_t *d, const uint8_t *p, size_t avail,
                         int eof, size_t *need, size_t *claim, uint64_t off) {
  *claim = 0;
  if (avail < 2) {
    *need = 2;
    return 0;
  }
  uint16_t type = el_ev_be16(p);
  int in_block = off < d->block_end;
  if (type == 0xFFFF) {
    *claim = 2;
    /* DATA_END inside a block only as its last 2 bytes (GHC >= 9.2,
     * spec §1.5); before the end the block declared, it is damage. */
    return in_block && off + 2 != d->block_end && d->block_end != BLOCK_OPEN
               ? FRAME_BAD_BLOCK
               : 2;
  }
  uint32_t t = type < d->ntab ? d->tab[type] : 0;
  if (!(t & T_DECLARED))
    return in_block ? FRAME_BAD_BLOCK : EL_EUNDECL;
  size_t size = t & T_SIZE_MASK, hl = 10;
  if (size == EL_EV_VARIABLE) {
    if (in_block && off + 12 > d->block_end) {
      *claim = 12;
      return FRAME_BAD_BLOCK;
    }
    if (avail < 12) {
      *need = 12;
      return 0;
    }
    size = el_ev_be16(p + 10);
    hl = 12;
  }
  *claim = hl + size;
  /* An event never crosses its block's end (§1.5); one that does means
   * the block was cut (GHC #26222, §4.6). */
  if (in_block && off + hl + size > d->block_end)
    return FRAME_BAD_BLOCK;
  if (avail < hl + size) {
    *need = hl + size;
    return 0;
  }
  if (type == EL_EV_IPE && (t >> T_LAYOUT_SHIFT) && size >= 8) {
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
        *claim = hl + size + 1;
        return (long)(hl + size + 1);
      }
    }
  }
  return (long)(hl + size);
}

/* Do the events at q (avail bytes; no more are looked at) chain as the
 * events of a block from t0 to t1 ns (past the end its marker declared):
 * each of a declared type, dated from t0 to t1, over RS_CHAIN bytes, or
 * up to a block marker believable where an event is expected
 * (marker_fine: the next block), a DATA_END, or the end of the bytes
 * after at least one whole event? RS_HIT or RS_NO. */
static int open_chain(const el_ev_decoder_t *d, const uint8_t *q, size_t avail,
                      uint64_t t0, uint64_t t1) {
  size_t pos = 0, whole = 0;
  while (pos < RS_CHAIN) {
    if (avail < pos + 2)
      return whole ? RS_HIT : RS_NO;
    unsigned type = el_ev_be16(q + pos);
    if (pos && type == 0xFFFF)
      return RS_HIT;
    if (pos && type == EL_EV_BLOCK_MARKER)
      return avail >= pos + RS_LOOK && marker_fine(d, q + pos) ? RS_HIT : RS_NO;
    uint32_t t = type < d->ntab ? d->tab[type] : 0;
    int var = (t & T_SIZE_MASK) == EL_EV_VARIABLE;
    if (!(t & T_DECLARED) || avail < pos + (var ? 12 : 10))
      return RS_NO;
    uint64_t et = el_ev_be64(q + pos + 2);
    if (et < t0 || et > t1)
      return RS_NO;
    pos += var ? 12 + (size_t)el_ev_be16(q + pos + 10) : 10 + (t & T_SIZE_MASK);
    whole += pos <= avail;
  }
  return RS_HIT;
}

/* Is there a believable block marker (a resync target: rs_check) within
 * RS_BACK bytes before or after the event at p (offset off, avail bytes
 * there; back[] holds those before it), where a block ends: bytes lost or
 * inserted just before a block marker? The bytes there decide (avail:
 * RS_BACK + RS_WIN of them, or the end of the input). */
static int near_marker(const el_ev_decoder_t *d, const uint8_t *p, size_t avail,
                       uint64_t off) {
  uint8_t w[2 * RS_BACK + RS_WIN];
  size_t k = back_fill(d, off, NULL, 0, w), tail;
  size_t t = avail < RS_BACK + RS_WIN ? avail : RS_BACK + RS_WIN;
  memcpy(w + k, p, t);
  for (size_t j = 0; j <= k + RS_BACK && j < k + t; j++)
    if (j != k && w[j] == 0 &&
        rs_check(d, w + j, k + t - j, 1, &tail) == RS_HIT)
      return 1;
  return 0;
}

/* reopen_at: the event is where its block ended, and a block marker is
 * near it (near_marker): a corrupt part begins there. RS_OUTER: the block
 * that one lay in goes on. */
#define RS_CORRUPT 3
#define RS_OUTER 4

/* Is the current block's declared size damaged, smaller than its body?
 * Asked of the event at p (offset off, avail bytes; frame() gave r and
 * claim) when it crosses the block's declared end (FRAME_BAD_BLOCK, of a
 * declared type) or when the block ended right before it (off ==
 * block_end: GHC writes a block marker there), and it is neither a block
 * marker nor a DATA_END. RS_HIT: the events from p chain as the block's
 * (open_chain, over END_NEED bytes) and no resync target (rs_check: a
 * believable marker with its events, or a header) stands at the declared
 * end; such a marker wins, as a block cut short by a flush keeps its size
 * (GHC #26222). The block then goes on to the next block marker
 * (reopen). RS_OUTER first: the block ended inside an outer one (a block
 * spliced in) and the events chain as the outer one's: it goes on
 * (reopen). RS_CORRUPT: after the end, they do not chain, and a block
 * marker is near (near_marker). RS_NO: an event that crosses the end is a
 * corrupt part (resync_begin); one after the end is outside any block,
 * as the format allows (spec §3.6). RS_NEED: *need bytes from p decide,
 * waited for also live (as fix_marker's), or the end of the input. -1:
 * not such an event. */
static int reopen_at(const el_ev_decoder_t *d, const uint8_t *p, size_t avail,
                     uint64_t off, long r, size_t claim, size_t *need) {
  if (avail < 2 || !d->block_end || d->block_end == BLOCK_OPEN ||
      !d->sess_blocks) /* (data_off: before the first block, no end) */
    return -1;
  unsigned type = el_ev_be16(p);
  if (type == EL_EV_BLOCK_MARKER || type == 0xFFFF)
    return -1;
  int crosses = r == FRAME_BAD_BLOCK && claim && off < d->block_end;
  if (!crosses && !(r > 0 && off == d->block_end))
    return -1;
  size_t e = crosses ? (size_t)(d->block_end - off) : 0, tail;
  size_t want = !crosses                ? RS_BACK + RS_WIN
                : e + RS_WIN > END_NEED ? e + RS_WIN
                                        : END_NEED;
  if (avail < want && !d->eof) {
    *need = want;
    return RS_NEED;
  }
  size_t a = avail < END_NEED ? avail : END_NEED;
  if (!crosses && off < d->outer.end &&
      open_chain(d, p, a, d->outer.t0, d->outer.t1) == RS_HIT)
    return RS_OUTER;
  if (crosses && avail > e &&
      rs_check(d, p + e, avail - e < RS_WIN ? avail - e : RS_WIN, 1, &tail) ==
          RS_HIT)
    return RS_NO;
  if (open_chain(d, p, a, d->block_t0, d->block_t1) == RS_HIT)
    return RS_HIT;
  return !crosses && near_marker(d, p, avail, off) ? RS_CORRUPT : RS_NO;
}

/* Where a session's data begins (off = data_off: right after "datb"),
 * its header declaring block markers (blocks_expected: GHC's data begins
 * with one), an event of a declared type that is not a block marker (nor
 * DATA_END) dated after FIRST_ABSURD_NS, with a believable marker
 * (rs_check) starting inside it (fewer than its claim bytes after it and
 * fewer than RS_BACK) whose start time is earlier than the event's: bytes
 * inserted before the first marker framed with the marker's own, as at a
 * block's end (reopen_at's RS_CORRUPT). One to four bytes inserted put
 * the marker's type 0x00 0x12 in the event's time's first four bytes: it
 * is then at least 0x12 << 32 ns (77 s; one byte: 41 years). Before,
 * two bytes inserted there framed with the marker's as one declared event
 * and the first block was lost; one zero byte made an event of invented
 * fields. An event dated up to FIRST_ABSURD_NS is decided at once (-1:
 * an event outside any block, as the format allows: old GHCs' STARTUP,
 * a test's synthetic stream), so that it is delivered without waiting;
 * only an absurd time waits for the bytes that decide (RS_NEED: *need
 * bytes from p, waited for also live) or the end of the input. (Five or
 * more bytes inserted give a believable time: as before, the event is
 * delivered, and so are the marker's bytes after it as far as they frame
 * as events outside any block.) -1: not such bytes. */
static int data_begin_at(const el_ev_decoder_t *d, const uint8_t *p,
                         size_t avail, uint64_t off, size_t claim,
                         size_t *need) {
  if (d->sess_blocks || off != d->data_off || !blocks_expected(d))
    return -1;
  size_t want = avail < 2 ? 2 : 10; /* the type, then the time */
  if (avail < 2)
    goto more;
  unsigned type = el_ev_be16(p);
  /* (an undeclared type is a corrupt part anyway: blocks_expected) */
  if (type == EL_EV_BLOCK_MARKER || type == 0xFFFF || type >= d->ntab ||
      !(d->tab[type] & T_DECLARED))
    return -1;
  if (avail < 10)
    goto more;
  uint64_t t = el_ev_be64(p + 2);
  if (t <= FIRST_ABSURD_NS)
    return -1; /* believable: decided at once */
  /* (with them, a variable size's claim) */
  want = RS_BACK + RS_WIN;
  if (avail < want && !d->eof)
    goto more;
  size_t tail;
  for (size_t j = 1; j < RS_BACK && j < claim && j + RS_LOOK <= avail; j++) {
    size_t w = avail - j < RS_WIN ? avail - j : RS_WIN;
    if (p[j] == 0 && el_ev_be64(p + j + 2) < t &&
        rs_check(d, p + j, w, 1, &tail) == RS_HIT)
      return RS_CORRUPT;
  }
  return -1;
more:
  if (d->eof)
    return -1;
  *need = want;
  return RS_NEED;
}

/* What the bytes at p (avail of them, at input offset off) are:
 *   S_EVENT  an event of *n bytes;
 *   S_NEED   undecided until there are *n bytes;
 *   S_CUT    a new connection's stray pattern starts at p + *cut, inside
 *            (or, *cut = 0, at) the event there;
 *   S_HDR    a header starts at p + *cut, *cut > 0, inside the event
 *            there (a cut log and another joined);
 *   S_MAGIC  a header starts right at p;
 *   S_BAD    the bytes do not frame: *n = FRAME_BAD_BLOCK (with
 *            d->bad_time: it frames, but is dated after its block; with
 *            d->bad_order: a block marker out of its capability's time
 *            order (out_of_order), not inside the current block; or
 *            it is where its block ended, a block marker near: reopen_at)
 *            or EL_EUNDECL;
 *   S_REOPEN an event of the current block past the end its marker's
 *            size (damaged) declared (reopen_at): reopen, then frame it;
 *   S_RESUME an event of the block the current one was spliced into:
 *            reopen(outer), then frame it;
 *   S_SPLICED a block marker out of its capability's time order
 *            (out_of_order) inside the current block: skip_spliced.
 * The same bytes give the same answer however they were chunked: a
 * decision is only taken once every byte it depends on is there, or at
 * the end of input (d->eof). */
static int step(el_ev_decoder_t *d, const uint8_t *p, size_t avail,
                uint64_t off, long *n, size_t *cut) {
  size_t need = 0, claim = 0;
  int eof = d->eof;
  long r = frame(d, p, avail, eof, &need, &claim, off);
  int wait = !eof && !(d->opts & EL_EV_OPT_LIVE);
  /* Where the stray pattern or a header may start: inside the event (as
   * far as known). For
   * bytes that do not frame (an undeclared type, an event crossing its
   * block's end) only where a cut could have made them so: inside the
   * fields that give the length (the type; and the payload size of a
   * variable-size type). A cut after those leaves a length that fits the
   * block, and a bounded window keeps the decision independent of how
   * the bytes were chunked. */
  size_t lim = r > 0 ? (size_t)r : r == 0 ? avail : claim >= 12 ? 12 : 2;
  if (r < 0 && claim >= 12) {
    uint16_t type = el_ev_be16(p);
    uint32_t t = type < d->ntab ? d->tab[type] : 0;
    if ((t & T_SIZE_MASK) != EL_EV_VARIABLE)
      lim = 2; /* fixed size: the type alone gives the length */
  }
  int full = 0, kind = S_CUT;
  size_t c = find_new(p, avail, 0, lim, wait, &full, &kind);
  /* A whole event, DATA_END and a header (one log's end, the next one's
   * start: a FIFO read by several programs in turn, `cat a b`) can look
   * like eventlog-socket's pattern: the event's last 22 bytes beginning
   * 00 12, DATA_END its FF FF. Where the marker those bytes would be is
   * not believable (stray_believable), that reading wins: nothing was
   * cut (h78: the event was dropped as cut, a real log's end). */
  if (c != NONE && full && kind == S_CUT && r > 0 &&
      (size_t)r + 2 == c + STRAY_LEN && !stray_believable(p + c))
    c = NONE;
  if (c != NONE) {
    if (full) {
      *cut = c;
      return kind == S_HDR && c == 0 ? S_MAGIC : kind;
    }
    /* a partial candidate: wait for all of it */
    size_t w = c + (kind == S_CUT ? PAT_LEN : HDR_LEN);
    *n = (long)(r == 0 && need < w ? need : w);
    return S_NEED;
  }
  if (r == 2 && wait && avail < END_NEED && el_ev_be16(p) == 0xFFFF &&
      !new_stream_at(p + 2, avail - 2)) {
    *n = END_NEED; /* what follows it decides (end_damaged) */
    return S_NEED;
  }
  /* (live too: the block's events come with its marker, and without
   * them the decision would depend on how the bytes arrived) */
  if (r == RS_LOOK && !eof && avail < END_NEED && marker_bad(d, p, RS_LOOK)) {
    *n = END_NEED; /* what follows it decides (fix_marker) */
    return S_NEED;
  }
  /* (live too, as above) */
  size_t want = 0;
  int ro = data_begin_at(d, p, avail, off, claim, &want);
  if (ro < 0)
    ro = reopen_at(d, p, avail, off, r, claim, &want);
  if (ro == RS_NEED) {
    *n = (long)want; /* what follows decides (reopen_at) */
    return S_NEED;
  }
  if (ro == RS_HIT || ro == RS_OUTER) {
    *n = (long)claim;
    return ro == RS_HIT ? S_REOPEN : S_RESUME;
  }
  if (ro == RS_CORRUPT) {
    *n = FRAME_BAD_BLOCK; /* bytes lost or inserted before a marker */
    return S_BAD;
  }
  if (r > 0) {
    if (r == RS_LOOK && el_ev_be16(p) == EL_EV_BLOCK_MARKER &&
        marker_fine(d, p) && out_of_order(d, p)) {
      if (off < d->block_end && d->block_end != BLOCK_OPEN)
        return S_SPLICED; /* inside the current block (skip_spliced) */
      d->bad_order = 1;   /* a block repeated or misplaced */
      *n = FRAME_BAD_BLOCK;
      return S_BAD;
    }
    if (off < d->block_end && r >= 10 && el_ev_be16(p) != 0xFFFF &&
        el_ev_be64(p + 2) > d->block_t1) {
      d->bad_time = 1; /* dated after its block's end: damage (§4.6) */
      *n = FRAME_BAD_BLOCK;
      return S_BAD;
    }
    *n = r;
    return S_EVENT;
  }
  if (r == 0) {
    *n = (long)need;
    return S_NEED;
  }
  /* A header where an event should begin: the session ended without
   * DATA_END and a new one begins (a tee, or files concatenated). */
  size_t k = avail < MAGIC_LEN ? avail : MAGIC_LEN;
  if (!memcmp(p, magic8, k)) {
    if (k == MAGIC_LEN)
      return S_MAGIC;
    if (!eof) {
      *n = MAGIC_LEN;
      return S_NEED;
    }
  }
  *n = r;
  return S_BAD;
}

/* A malformed event of a known type (spec §4.8): report, count. */
static void malformed(el_ev_decoder_t *d, const el_ev_event_t *ev) {
  d->stats.malformed_events++;
  if (++d->malformed_warned > MAX_MALFORMED_WARN)
    return;
  char nm[64];
  set_diag(d, EL_ECORRUPT, ev->offset, ev->type,
           "malformed event %s at byte %llu: its %u-byte payload does not "
           "hold its fields (too short, or a string without its NUL); "
           "not decoded",
           tname(ev->type, nm, sizeof nm), (unsigned long long)ev->offset,
           ev->payload_len);
  warn(d);
  if (d->malformed_warned == MAX_MALFORMED_WARN) {
    set_diag(d, 0, ev->offset, -1,
             "further malformed events are counted, not reported");
    warn(d);
  }
}

/* Has the DATA_END at p (framed: 2 bytes) more data after it, judged by
 * the k bytes that follow it in the buffer: bytes that begin neither a
 * header nor eventlog-socket's stray pattern (a new stream, §5.4)? Only
 * damage makes that (0xFFFF written over a block marker's type: GHC
 * <= 9.0 writes markers outside any block, §1.5). k = 0 tells nothing:
 * the data ends there. */
static int end_damaged(const uint8_t *p, size_t k) {
  return el_ev_be16(p) == 0xFFFF && k > 0 && !hdr_prefix(p + 2, k) &&
         !pat_prefix(p + 2, k);
}

/* Is the DATA_END at p (avail bytes there, more data after it:
 * end_damaged) a block marker whose type was damaged: markers can be
 * framed in this session, its other 22 bytes make a believable one
 * (rs_marker_ok: the type bytes are not read) and the events after it
 * chain in its block (rs_chain1, within avail)? */
static int end_is_marker(const el_ev_decoder_t *d, const uint8_t *p,
                         size_t avail) {
  if (avail < RS_LOOK || d->ntab <= EL_EV_BLOCK_MARKER ||
      (d->tab[EL_EV_BLOCK_MARKER] & (T_DECLARED | T_SIZE_MASK)) !=
          (T_DECLARED | (RS_LOOK - 10)))
    return 0;
  return rs_marker_ok(d, p) && rs_chain1(d, p, avail, 1, 0) == RS_HIT;
}

/* Deliver the block marker at p whose type bytes hold 0xFFFF
 * (end_is_marker) as the marker it is, reporting the 2 damaged bytes as
 * a corrupt part (nothing is skipped). Returns 0 or EL_ESTOPPED. */
static int end_repair(el_ev_decoder_t *d, const uint8_t *p, uint64_t off) {
  uint8_t m[RS_LOOK];
  memcpy(m, p, RS_LOOK);
  m[0] = (uint8_t)(EL_EV_BLOCK_MARKER >> 8);
  m[1] = (uint8_t)EL_EV_BLOCK_MARKER;
  d->stats.corrupt_parts++;
  d->stats.corrupt_bytes += 2;
  set_diag(d, EL_ECORRUPT, off, 0xFFFF,
           "corrupt stream: end-of-data marker (type 0xFFFF) at byte %llu "
           "stands where a block marker's type belongs (the rest is a "
           "believable marker: cap %u, %llu to %llu ns, %u bytes, and its "
           "block's events follow): read as that block marker",
           (unsigned long long)off, (unsigned)el_ev_be16(p + 22),
           (unsigned long long)el_ev_be64(p + 2),
           (unsigned long long)el_ev_be64(p + 14),
           (unsigned)el_ev_be32(p + 10));
  warn(d);
  return deliver(d, m, RS_LOOK, off);
}

/* Which one field of the block marker at p (framed, not believable:
 * marker_bad; avail bytes there, the decision's END_NEED if the input
 * has them) is damaged, such that its block's events still follow it:
 * FIX_SIZE, a size below 24 or above 16 MiB; FIX_END, an end time before
 * its start; FIX_CAP, a capability that is not believable (cap_ok); the
 * other two believable, and the start time (marker_ok). The events in
 * the RS_CHAIN bytes after it must chain (chain_at: declared types, sizes
 * that fit the block if its size is believable, times from its start to
 * its end, or, the end damaged, to RS_AHEAD_NS after the largest time of
 * the session). FIX_NONE otherwise: the marker is garbage and a corrupt
 * part begins there (RS_BADMARK). */
enum { FIX_NONE, FIX_SIZE, FIX_END, FIX_CAP };
static int fix_marker(const el_ev_decoder_t *d, const uint8_t *p,
                      size_t avail) {
  uint64_t t0 = el_ev_be64(p + 2), te = el_ev_be64(p + 14);
  uint32_t size = el_ev_be32(p + 10);
  int size_ok = size >= RS_LOOK && size <= MAX_BLOCK, end_ok = te >= t0;
  int cap_fine = cap_ok(d, el_ev_be16(p + 22));
  uint64_t ahead =
      d->sess_tmax ? d->sess_tmax + RS_AHEAD_NS : UINT64_MAX; /* t0's bound */
  if (size_ok + end_ok + cap_fine != 2 || t0 > ahead)
    return FIX_NONE;
  if (chain_at(d, p, avail, 1, RS_LOOK, size_ok ? size : SIZE_MAX, t0,
               end_ok ? te : ahead, 0) != RS_HIT)
    return FIX_NONE;
  return !size_ok ? FIX_SIZE : !end_ok ? FIX_END : FIX_CAP;
}

/* Deliver the block marker at p (offset off) whose one damaged field
 * (fix_marker: how) does not cost its block: reported as a corrupt part
 * of that field's bytes (nothing is skipped), the marker delivered, and
 * the events after it decoded as its block's. A damaged size: the block
 * ends at the next block marker (BLOCK_OPEN); a damaged end time: no
 * event is dated after it; both delivered as they are. A damaged
 * capability is not known: the marker is delivered with 0xFFFF there,
 * and its block's events with no capability (EL_EV_NO_CAP), rather than
 * with one the program never had. Returns 0 or EL_ESTOPPED. */
static int fix_repair(el_ev_decoder_t *d, const uint8_t *p, uint64_t off,
                      int how) {
  uint64_t t0 = el_ev_be64(p + 2), te = el_ev_be64(p + 14);
  uint32_t size = el_ev_be32(p + 10);
  unsigned cap = el_ev_be16(p + 22);
  char what[160];
  uint8_t m[RS_LOOK];
  if (how == FIX_SIZE)
    snprintf(what, sizeof what,
             "a size that is not believable (%u bytes): its block ends at "
             "the next block marker",
             (unsigned)size);
  else if (how == FIX_END)
    snprintf(what, sizeof what,
             "an end time before its start (%llu ns): its block's events "
             "are not bounded by it",
             (unsigned long long)te);
  else if (d->sess_cap_hi < 0)
    snprintf(what, sizeof what,
             "a capability that is not believable (above %d, and none "
             "seen yet): its events get none",
             CAP_MAX_BELIEVED);
  else
    snprintf(what, sizeof what,
             "a capability that is not believable (above %d, and the "
             "largest seen is %d): its events get none",
             CAP_MAX_BELIEVED, d->sess_cap_hi);
  if (how == FIX_CAP) {
    memcpy(m, p, RS_LOOK);
    m[22] = m[23] = 0xFF;
    p = m;
  }
  d->stats.corrupt_parts++;
  d->stats.corrupt_bytes += how == FIX_SIZE ? 4 : how == FIX_END ? 8 : 2;
  set_diag(d, EL_ECORRUPT, off, EL_EV_BLOCK_MARKER,
           "corrupt stream: block marker at byte %llu (cap %u, from %llu "
           "ns) has %s; the events after it chain as its block's: decoded "
           "as that block",
           (unsigned long long)off, cap, (unsigned long long)t0, what);
  warn(d);
  d->open_block = how == FIX_SIZE;
  d->cap_unknown = how == FIX_CAP;
  int rc = deliver(d, p, RS_LOOK, off);
  d->open_block = 0;
  d->cap_unknown = 0;
  return rc;
}

/* The block marker at p (offset off), out of its capability's time order
 * (out_of_order), lies inside the current block: a block repeated or
 * misplaced, spliced in between two of its events (GHC does not nest
 * blocks). It and its body (its size: believable, marker_fine) are one
 * corrupt part, reported at once and skipped (ST_BODY); the current block
 * goes on after it, its end (and the outer one's, if inside) moved by
 * that size, as deliver moves it for a block spliced in. */
static void skip_spliced(el_ev_decoder_t *d, const uint8_t *p, uint64_t off) {
  uint32_t size = el_ev_be32(p + 10);
  order_why(d, p, off);
  d->stats.corrupt_parts++;
  d->stats.corrupt_bytes += size;
  d->stats.skipped_bytes += size;
  set_diag(d, EL_ECORRUPT, off, EL_EV_BLOCK_MARKER,
           "corrupt stream: %s; inside cap %u's block: skipped %u bytes "
           "(%llu to %llu), that block goes on",
           d->rs_why, d->block_cap, (unsigned)size, (unsigned long long)off,
           (unsigned long long)(off + size));
  warn(d);
  if (d->outer.end && off < d->outer.end)
    d->outer.end += size;
  d->block_end += size;
  d->state = ST_BODY;
  d->body_from = off;
  d->skip_until = off + size;
  d->body_spliced = 1;
}

/* The current block goes on past the end its marker declared (reopen_at,
 * at the event at off): its size was damaged into a smaller one. One
 * corrupt part of the size's 4 bytes at the marker's byte, nothing
 * skipped; the block ends at the next block marker (BLOCK_OPEN). With
 * outer (S_RESUME), the block the current one lay in goes on instead. */
static void reopen(el_ev_decoder_t *d, uint64_t off, int outer) {
  if (outer) {
    /* A block inside another ended (spliced into it: GHC does not nest
     * them): the other one goes on, as its marker's size says (§3.6). */
    d->block_end = d->outer.end;
    d->block_cap = d->outer.cap;
    d->block_t0 = d->outer.t0;
    d->block_t1 = d->outer.t1;
    d->block_off = d->outer.off;
    d->block_size = d->outer.size;
    d->outer.end = 0;
    return;
  }
  d->stats.corrupt_parts++;
  d->stats.corrupt_bytes += 4;
  set_diag(d, EL_ECORRUPT, d->block_off, EL_EV_BLOCK_MARKER,
           "corrupt stream: block marker at byte %llu (cap %u, from %llu "
           "ns) has a size (%u bytes) ending at byte %llu inside its block: "
           "its events go on from byte %llu, no block marker there; decoded "
           "as that block up to the next marker",
           (unsigned long long)d->block_off, d->block_cap,
           (unsigned long long)d->block_t0, (unsigned)d->block_size,
           (unsigned long long)d->block_end, (unsigned long long)off);
  warn(d);
  d->block_end = BLOCK_OPEN;
}

/* A block marker or DATA_END at off, at or after the end of the current
 * block, which lies inside another (outer: spliced into it, deliver),
 * while that other one still declares outer.end - off bytes after it: it
 * does not go on there (GHC writes a block's events up to the end its
 * marker declares), so those bytes of it are missing before the marker of
 * the block inside it (deleted, or lost in transit). One corrupt part of
 * 0 bytes, nothing skipped, said once; the other block is given up. h88:
 * 34 bytes deleted inside a block, two events, went unsaid, the next
 * block's marker read as one spliced into it. n: the bytes missing (the
 * other's end less the end of the block inside it, or off past it). */
static void outer_cut(el_ev_decoder_t *d, uint64_t off, uint64_t n,
                      const char *what) {
  uint64_t in = d->outer.inner_off;
  d->stats.corrupt_parts++;
  set_diag(d, EL_ECORRUPT, in, EL_EV_BLOCK_MARKER,
           "corrupt stream: the block marker at byte %llu (cap %u) lies "
           "inside cap %u's block from byte %llu (its marker declares %llu "
           "more byte%s after it), which does not go on after it: %s at "
           "byte %llu; %llu byte%s of cap %u's block missing before byte "
           "%llu (deleted or lost?), nothing skipped",
           (unsigned long long)in, d->outer.inner_cap, d->outer.cap,
           (unsigned long long)d->outer.off, (unsigned long long)n, plural(n),
           what, (unsigned long long)off, (unsigned long long)n, plural(n),
           d->outer.cap, (unsigned long long)in);
  warn(d);
  d->outer.end = 0;
}

/* A block marker (event ev at off) right after a block spliced into
 * another (outer), while that other still declares bytes: it ended
 * before (bytes of it missing: outer_cut) when this block is of its
 * capability (GHC closes a capability's block before it opens its next)
 * or begins after its end time; else this block may be spliced in too
 * (h89: two whole blocks, one after the other; giving the other up took
 * its capability from its 40,077 events after them), and the other's
 * end moves by its size: the question waits for this block's end (its
 * events chain as the other's: reopen_at), or for the end of data. */
static void outer_next(el_ev_decoder_t *d, uint64_t off,
                       const el_ev_event_t *ev) {
  uint16_t cap = (uint16_t)ev->v[2].u;
  if (cap == d->outer.cap || ev->t_ns > d->outer.t1)
    outer_cut(d, off, d->outer.end - off, "a block marker");
  else
    d->outer.end += ev->v[0].u;
}

/* The data of the session ends with the DATA_END at off: bytes after it
 * are looked through for a new header (ST_POST), and the sink is told. */
static void data_end(el_ev_decoder_t *d, uint64_t off) {
  /* (GHC 9.2 on counts the marker in the last block: it may lie inside
   * the block spliced in, 2 bytes before its end; h89) */
  uint64_t at = off > d->block_end ? off : d->block_end;
  if (d->outer.end && at < d->outer.end && off + 2 >= d->block_end)
    outer_cut(d, off, d->outer.end - at, "the end-of-data marker");
  d->state = ST_POST;
  d->scan_m = 0;
  d->scan_from = off + 2;
  if (d->sink.on_data_end)
    d->sink.on_data_end(d->sink.ud, off);
}

/* The bytes from scan_from (after a DATA_END) up to at were ignored:
 * counted in skipped_bytes and reported in a warning, if any. */
static void post_ignored(el_ev_decoder_t *d, uint64_t at) {
  if (at <= d->scan_from)
    return;
  set_diag(d, 0, d->scan_from, -1,
           "ignored %llu byte%s from byte %llu after the end of data",
           (unsigned long long)(at - d->scan_from), plural(at - d->scan_from),
           (unsigned long long)d->scan_from);
  d->stats.skipped_bytes += at - d->scan_from;
  warn(d);
  d->diag.code = 0;
  d->scan_from = at;
}

/* The block whose marker at off deliver has just made current is its
 * capability's latest (prev[]), unless its capability is damaged
 * (cap_unknown: not the one of the global block it is delivered as). */
static void keep_prev(el_ev_decoder_t *d, uint64_t off) {
  int i = prev_ix(d->block_cap);
  if (i < 0 || d->cap_unknown)
    return;
  if ((size_t)i >= d->nprev) {
    /* Out of memory: this block is not kept, so the next one of its
     * capability is not checked against it (out_of_order): a repeated
     * block would go undetected, nothing is lost. */
    if (el_grow(&d->prev, &d->prevcap, (size_t)i + 1, sizeof *d->prev))
      return;
    memset(d->prev + d->nprev, 0, ((size_t)i + 1 - d->nprev) * sizeof *d->prev);
    d->nprev = (size_t)i + 1;
  }
  d->prev[i].off = off;
  d->prev[i].t0 = d->block_t0;
  d->prev[i].t1 = d->block_t1 == UINT64_MAX ? d->block_t0 : d->block_t1;
}

/* Deliver the framed event at p (len bytes, offset off). Returns 0 or
 * EL_ESTOPPED. */
static int deliver(el_ev_decoder_t *d, const uint8_t *p, size_t len,
                   uint64_t off) {
  el_ev_event_t *ev = &d->ev;
  uint16_t type = el_ev_be16(p);
  if (type == 0xFFFF) {
    data_end(d, off);
    return 0;
  }
  uint32_t t = type < d->ntab ? d->tab[type] : 0;
  size_t hl = (t & T_SIZE_MASK) == EL_EV_VARIABLE ? 12 : 10;
  ev->type = type;
  ev->t_ns = el_ev_be64(p + 2);
  ev->offset = off;
  ev->payload = p + hl;
  ev->payload_len = (uint32_t)(len - hl);
  unsigned li = t >> T_LAYOUT_SHIFT;
  ev->known = 0;
  ev->malformed = 0;
  ev->nfields = 0;
  ev->layout = 0;
  if ((t & T_FAST) && ((t & T_NOFIELDS) || (d->opts & EL_EV_OPT_NO_FIELDS))) {
    ev->known = 1; /* as on the fast path: fields of no interest */
  } else if (li) {
    if (el__ev_decode_fields(&d->layouts[li - 1], ev->payload,
                             ev->payload_len, ev) == 0) {
      ev->known = 1;
    } else {
      ev->malformed = 1;
      ev->nfields = 0;
      ev->layout = 0;
      malformed(d, ev);
    }
  } else {
    d->stats.unknown_events++;
  }
  int skip_body = 0;
  if (type == EL_EV_BLOCK_MARKER && ev->known) {
    if (d->open_block || (ev->v[0].u >= len && ev->v[0].u <= MAX_BLOCK)) {
      if (off < d->block_end && d->block_end != BLOCK_OPEN) {
        /* Inside the current block, which goes on after this one: GHC
         * does not nest blocks, so this one was spliced in, and the
         * other's size does not count it. */
        d->outer.end = d->block_end + ev->v[0].u;
        d->outer.cap = d->block_cap;
        d->outer.t0 = d->block_t0;
        d->outer.t1 = d->block_t1;
        d->outer.off = d->block_off;
        d->outer.size = d->block_size;
        d->outer.inner_off = off;
        d->outer.inner_cap = (uint16_t)ev->v[2].u;
      } else if (d->outer.end && off < d->outer.end) {
        outer_next(d, off, ev);
      } else if (off >= d->outer.end) {
        d->outer.end = 0;
      }
      d->block_end = d->open_block ? BLOCK_OPEN : off + ev->v[0].u;
      d->block_cap = (uint16_t)ev->v[2].u;
      d->block_off = off;
      d->block_size = (uint32_t)ev->v[0].u;
      d->block_t0 = ev->t_ns;
      d->block_t1 = ev->v[1].u >= ev->t_ns ? ev->v[1].u : UINT64_MAX;
      d->sess_blocks++;
      keep_prev(d, off);
      if (d->block_cap != EL_EV_NO_CAP && (int)d->block_cap > d->sess_cap_hi)
        d->sess_cap_hi = d->block_cap;
      if (ev->v[1].u >= ev->t_ns && ev->v[1].u > d->sess_tmax)
        d->sess_tmax = ev->v[1].u; /* its end time */
      /* A body ending past the end of the input was cut: what
       * follows it (another connection's header) lies inside it. */
      skip_body = (d->opts & EL_EV_OPT_SKIP_CAP_BLOCKS) &&
                  d->block_cap != EL_EV_NO_CAP && d->block_end != BLOCK_OPEN &&
                  d->block_end <= d->input_end;
    } else {
      d->block_end = off; /* not believable: no block, no capability */
      set_diag(d, EL_ECORRUPT, off, type,
               "block marker at byte %llu has an impossible size %llu; "
               "ignored",
               (unsigned long long)off, (unsigned long long)ev->v[0].u);
      warn(d);
    }
  } else if (type == EL_EV_WALL_CLOCK_TIME && ev->known) {
    d->have_wall = 1;
    d->wall_unix_ns = ev->v[1].u * 1000000000ull + ev->v[2].u;
    d->wall_t = ev->t_ns;
  }
  ev->cap = off < d->block_end ? d->block_cap : EL_EV_NO_CAP;
  if (ev->t_ns > d->sess_tmax)
    d->sess_tmax = ev->t_ns;
  d->stats.events++;
  if (skip_body) {
    d->state = ST_BODY;
    d->body_from = off + len;
    d->skip_until = d->block_end;
    d->stats.skipped_blocks++;
    d->stats.skipped_block_bytes += d->block_end - (off + len);
  }
  d->in_event = 1;
  int stop = d->sink.on_event && d->sink.on_event(d->sink.ud, ev);
  d->in_event = 0;
  ev->malformed = 0; /* the fast path does not touch it */
  return stop ? EL_ESTOPPED : 0;
}

/* Up to 16 of the n bytes at p as text into out (16 + 1 bytes), or 0
 * unless they are text: printable ASCII, tabs, line feeds and carriage
 * returns (the last two written as spaces), all of the first 16 and at
 * least 8; or else whole lines of them (at least 3 bytes, the last a
 * line feed: a program printing "30" into its eventlog, h51). */
static __attribute__((cold, noinline)) size_t as_text(const uint8_t *p,
                                                      size_t n, char *out) {
  size_t lim = n < 16 ? n : 16, k = 0;
  for (; k < lim; k++) {
    uint8_t c = p[k];
    if (c == '\n' || c == '\r')
      c = ' ';
    else if (c != '\t' && (c < 0x20 || c > 0x7e))
      break;
    out[k] = c == '"' ? '\'' : (char)c;
  }
  if (k < lim || k < 8) {
    while (k > 0 && p[k - 1] != '\n')
      k--; /* the last whole line */
    if (k < 3)
      return 0;
  }
  out[k] = '\0';
  return k;
}

/* An undeclared type at off (p: the n bytes held from there) outside any
 * block in a session without blocks: an error. When those bytes read as
 * text, the message says so: a program's own output written into its
 * eventlog (`+RTS -ol/dev/stdout` with the program printing). */
static __attribute__((cold, noinline)) void undeclared(el_ev_decoder_t *d,
                                                       const uint8_t *p,
                                                       size_t n, uint64_t off) {
  unsigned type = el_ev_be16(p);
  char nm[64], text[17];
  int is_text = as_text(p, n, text) > 0;
  set_diag(
      d, EL_EUNDECL, off, (int)type,
      "event type %u at byte %llu is not declared in the header "
      "(corrupt stream%s%s)%s%s%s",
      type, (unsigned long long)off,
      el_ev_type_info((uint16_t)type) ? "; known as " : "",
      el_ev_type_info((uint16_t)type) ? tname((int)type, nm, sizeof nm) : "",
      is_text ? "; the bytes there read as text (\"" : "", is_text ? text : "",
      is_text ? "...\"): is something else, such as the program's "
                "own output, written into the eventlog (-ol/dev/stdout)?"
              : "");
}

/* After resync_begin(RS_UNDECL) at p (n bytes held from there): when
 * they read as text, the part's report says so (as undeclared). */
static __attribute__((cold, noinline)) void text_hint(el_ev_decoder_t *d,
                                                      const uint8_t *p,
                                                      size_t n) {
  char text[17];
  size_t k = strlen(d->rs_why);
  if (as_text(p, n, text) && k < sizeof d->rs_why)
    snprintf(d->rs_why + k, sizeof d->rs_why - k,
             " (text: \"%s...\": program output in the eventlog?)", text);
}

/* A new stream begins in the bytes at off: the stray pattern at off + c
 * (S_CUT; c > 0: the event at off is cut off), a header at off + c,
 * c > 0, inside the event at off (S_HDR: it is cut off) or a header at
 * off (S_MAGIC). Reports what is dropped and begins the header. Returns
 * the offset just past "hdrbhetb". */
/* The c bytes at off (p), the start of an event cut off where a new
 * stream begins (where: what begins there and what it means, for the
 * message): dropped, counted in cut_events and skipped_bytes, and
 * reported in a warning naming both offsets. */
static void cut_event(el_ev_decoder_t *d, const uint8_t *p, size_t c,
                      uint64_t off, const char *where) {
  char nm[64];
  int type = c >= 2 ? el_ev_be16(p) : -1;
  d->stats.cut_events++;
  d->stats.skipped_bytes += c;
  set_diag(d, 0, off, type,
           "event %s at byte %llu is cut off at byte %llu, where %s: its %zu "
           "byte%s dropped",
           tname(type, nm, sizeof nm), (unsigned long long)off,
           (unsigned long long)(off + c), where, c, plural(c));
  d->diag.cut_event = 1;
  warn(d);
}

static uint64_t new_stream(el_ev_decoder_t *d, const uint8_t *p, size_t c,
                           uint64_t off, int kind) {
  uint64_t at = off;
  if (kind == S_HDR) {
    char where[128];
    snprintf(where, sizeof where,
             "a new header begins (session %u ends there without DATA_END; "
             "eventlogs joined)",
             d->sessions);
    at = off + c;
    cut_event(d, p, c, off, where);
  } else if (kind == S_CUT) {
    if (c > 0)
      cut_event(d, p, c, off,
                "a new connection's stream begins (a raw tee of several "
                "connections)");
    at = off + c + STRAY_LEN;
    d->stats.skipped_bytes += STRAY_LEN;
    d->stats.stray_bytes += STRAY_LEN;
    set_diag(d, 0, off + c, -1,
             "skipped %d stray bytes at byte %llu (eventlog-socket's "
             "global block marker) before the header at byte %llu",
             STRAY_LEN, (unsigned long long)(off + c),
             (unsigned long long)at);
    warn(d);
  } else if (d->end_held) { /* resync_land: after DATA_END and junk */
    d->end_held = 0;
    data_end(d, d->end_off);
    post_ignored(d, off);
  } else {
    set_diag(d, 0, off, -1,
             "session %u ends at byte %llu without DATA_END: a new header "
             "begins there",
             d->sessions, (unsigned long long)off);
    warn(d);
  }
  d->scan_from = at;
  header_begin(d, at);
  return at + MAGIC_LEN;
}

/* Drop the first n bytes of pend (read: back_push). */
static void pend_consume(el_ev_decoder_t *d, size_t n) {
  back_push(d, d->pend, n, d->poff + n);
  d->plen -= n;
  d->poff += n;
  if (d->plen)
    memmove(d->pend, d->pend + n, d->plen);
}

/* pend holds bytes that a state other than DATA must now read (after
 * DATA_END, a new header, a corrupt block...): run them through the
 * decoder again. pend and rbuf are swapped, so nothing is copied. */
static int reprocess(el_ev_decoder_t *d, errs_t *E) {
  uint8_t *b = d->pend;
  size_t cap = d->pcap, n = d->plen;
  d->pend = d->rbuf;
  d->pcap = d->rcap;
  d->rbuf = b;
  d->rcap = cap;
  d->plen = 0;
  uint64_t save = d->base, from = d->poff;
  d->base = from;
  int rc = run(d, b, n, E);
  if (rc) {
    /* Stopped: keep what was not consumed, to be read on the next feed
     * (el_ev_decoder_offset counts it as consumed already). A stop
     * leaves pend empty: it happens on delivery, before pend refills. */
    size_t k = (size_t)(d->base - from);
    if (k < n && pend_room(d, n - k) == 0) {
      memcpy(d->pend, b + k, n - k);
      d->plen = n - k;
      d->poff = d->base;
    }
  }
  d->base = save;
  return rc;
}

/* The item after a skipped capability body must be a block marker or
 * DATA_END (§1.5, §1.7). Returns 1 if the body must be decoded after all
 * (the caller rewinds to it), 0 to go on. */
static int check_landing(el_ev_decoder_t *d, const uint8_t *p, size_t avail,
                         uint64_t off, int can_rewind) {
  if (avail < 2)
    return 0;
  d->landing = 0;
  uint16_t type = el_ev_be16(p);
  if (el__ev_lands_after_body(type))
    return 0;
  if (can_rewind) {
    d->stats.skipped_blocks--;
    d->stats.skipped_block_bytes -= off - d->body_from;
    return 1;
  }
  char nm[64];
  set_diag(d, EL_ECORRUPT, off, type,
           "the capability block whose body was skipped from byte %llu "
           "ends at byte %llu on an event %s, not on a block marker: "
           "decoding goes on there",
           (unsigned long long)d->body_from, (unsigned long long)off,
           tname(type, nm, sizeof nm));
  warn(d);
  return 0;
}

/* How far ahead fast_limit looks: bounded, so that a caller skipping
 * capability blocks never has the bytes it skips read. */
#define FAST_WINDOW (64u << 10)

/* The first position >= i in buf where the fast path must stop: where the
 * stray pattern or a header may start (*cand = 1), or the end of the
 * window looked at (*cand = 0: look further from there). */
static size_t fast_limit(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                         size_t i, int *cand) {
  size_t to = len - i > FAST_WINDOW ? i + FAST_WINDOW : len;
  int full, kind;
  size_t c =
      find_new(buf, len, i, to, !(d->opts & EL_EV_OPT_LIVE), &full, &kind);
  *cand = c != NONE;
  return c == NONE ? to : c;
}

/* Complete the partial event in pend with bytes from buf; *i advances
 * over the bytes taken. Returns 0 (pend empty, or waiting for bytes, or
 * the state changed) or EL_ESTOPPED / EL_ENOMEM. */
static int pend_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                     size_t *ip, errs_t *E) {
  size_t i = *ip, took = 0; /* took: pend's last bytes are buf's */
  int rc = 0;
  while (d->plen && d->state == ST_DATA) {
    long n = 0;
    size_t c = 0;
    if (d->landing && d->plen >= 2)
      check_landing(d, d->pend, d->plen, d->poff, 0);
    int s = step(d, d->pend, d->plen, d->poff, &n, &c);
    if (s == S_NEED) {
      /* What step needs and, if buf has them, the bytes that show
       * whether a new stream begins inside the event (even with
       * EL_EV_OPT_LIVE: they are here, nothing waits for them); those
       * left over after it are given back to buf below. */
      size_t take = (size_t)n - d->plen + (PAT_LEN - 1);
      if (take > len - i)
        take = len - i;
      if (!take)
        break; /* wait for more */
      if ((rc = pend_room(d, d->plen + take)))
        break;
      memcpy(d->pend + d->plen, buf + i, take);
      d->plen += take;
      i += take;
      took += take;
      continue;
    }
    if (s == S_REOPEN || s == S_RESUME) {
      reopen(d, d->poff, s == S_RESUME); /* a block goes on */
      continue;
    }
    if (s == S_SPLICED) {
      skip_spliced(d, d->pend, d->poff); /* from the marker, in pend */
      rc = reprocess(d, E);
      break;
    }
    int how = FIX_NONE;
    if (s == S_EVENT && marker_bad(d, d->pend, (size_t)n) &&
        !(how = fix_marker(d, d->pend, d->plen))) {
      resync_begin(d, d->pend, d->poff, RS_BADMARK, NULL, 0);
      pend_consume(d, 1);
      rc = reprocess(d, E);
      break;
    }
    int fix = s == S_EVENT && n == 2 && end_damaged(d->pend, d->plen - 2);
    if (fix && !end_is_marker(d, d->pend, d->plen)) {
      resync_begin(d, d->pend, d->poff, RS_END, NULL,
                   0); /* to a block or header */
      pend_consume(d, 1);
      rc = reprocess(d, E);
      break;
    }
    if (s == S_EVENT) {
      if (fix) {
        rc = end_repair(d, d->pend, d->poff);
        n = RS_LOOK;
      } else if (how) {
        rc = fix_repair(d, d->pend, d->poff, how);
      } else {
        rc = deliver(d, d->pend, (size_t)n, d->poff);
      }
      pend_consume(d, (size_t)n);
      if (d->plen && d->plen <= took) { /* all from buf: read them there */
        i -= d->plen;
        took -= d->plen;
        d->plen = 0;
      }
      if (rc)
        break;
      if (d->plen && d->state != ST_DATA && (rc = reprocess(d, E)))
        break;
      continue;
    }
    if (s == S_CUT || s == S_HDR || s == S_MAGIC) {
      uint64_t past = new_stream(d, d->pend, c, d->poff, s);
      pend_consume(d, (size_t)(past - d->poff));
    } else if (n == FRAME_BAD_BLOCK) {
      /* a warning, not an error: skip to the next believable block */
      resync_begin(d, d->pend, d->poff, RS_NOFIT, NULL, 0);
      pend_consume(d, 1);
    } else if (blocks_expected(d)) {
      /* a corrupt part (a warning), to the next believable block */
      resync_begin(d, d->pend, d->poff, RS_UNDECL, NULL, 0);
      text_hint(d, d->pend, d->plen);
      pend_consume(d, 1);
    } else {
      undeclared(d, d->pend, d->plen, d->poff);
      note_err(d, E, EL_EUNDECL);
      size_t keep = d->plen;
      start_scan(d, d->poff); /* rescan from the bad event */
      d->plen = keep;
    }
    if (d->plen)
      rc = reprocess(d, E);
    break;
  }
  *ip = i;
  return rc;
}

/* fast_run_t: *qn quiet events were taken since the last delivery, the
 * latest at qt, the last at buf + qlast: into the sink's counters, and
 * into d->ev (type, time, offset: what the general path after the run may
 * read of the last event), as if each had been counted at once. */
static __attribute__((noinline)) void quiet_flush(el_ev_decoder_t *d,
                                                  const uint8_t *buf,
                                                  size_t qlast, uint64_t *qn,
                                                  el_rts_ns_t qt) {
  *d->qc.events += *qn;
  *qn = 0;
  if (qt > *d->qc.tmax)
    *d->qc.tmax = qt;
  d->ev.type = el_ev_be16(buf + qlast);
  d->ev.t_ns = el_ev_be64(buf + qlast + 2);
  d->ev.offset = d->base + qlast;
}

/* fast_run_t with a run handler (el_ev_decoder_direct_run): offer it
 * the run of buf[i, r) (whole fast events from i, none past r nor dated
 * after tend) and add what it took to the loop's quiet events (*qn, the
 * latest at *qt, the last at buf + *qlast) and *nfast; *stop set when
 * the sink asked to stop after them. The quiet events before the run
 * go into the sink's counters first (its handler may read them). A run
 * whose first event is cut at r (the feed's end) is not offered: the
 * fast path could not take that event. Returns the bytes taken. */
static __attribute__((noinline)) size_t run_offer(el_ev_decoder_t *d,
                                                  const uint8_t *buf, size_t i,
                                                  size_t r, el_rts_ns_t tend,
                                                  uint64_t *qn, el_rts_ns_t *qt,
                                                  size_t *qlast, size_t *nfast,
                                                  int *stop) {
  if (d->flen[wire_key_at(buf + i)] > r - i)
    return 0;
  if (*qn) {
    *d->qc.events += *qn;
    *qn = 0;
    if (*qt > *d->qc.tmax)
      *d->qc.tmax = *qt;
  }
  el_ev_run_t run = {.p = buf + i,
                     .end = buf + r,
                     .tend = tend,
                     .cap = d->ev.cap,
                     .flen_ = d->flen,
                     .kind_ = d->flen + 65536,
                     .offset = d->base + i};
  el_ev_run_taken_t tk = {0, 0, 0, 0};
  size_t took = d->run_fn(d->run_ud, &run, &tk);
  if (!tk.events || took > r - i || tk.last >= took)
    return 0; /* none (or a handler out of bounds: as none) */
  *qn += tk.events;
  *nfast += tk.events;
  *qt = tk.tmax > *qt ? tk.tmax : *qt;
  *qlast = i + tk.last;
  *stop = tk.stop != 0;
  return took;
}

/* The fast path: whole fixed-size integer-only events from buf + *ip,
 * before *lim (no start of the stray pattern or of a header before it:
 * data_feed; *cand as there), inside buf and inside the current block. Everything it reads
 * from d changes only on the general path, so it is loaded into locals
 * once. An event's length comes from flen[], indexed by its type bytes
 * as loaded (no byte swap, no bound: every 16-bit key has an entry, 0 for
 * all but the fast types), so that from one event to the next there are
 * only two loads and an add (the loop's speed on a large input: docs/
 * eventlog.md, Benchmarks); one comparison against the nearest of the
 * limits decides whether an event is taken; the limits are told apart
 * only when an event reaches one. With tally, an event is counted into
 * d->tally instead of delivered (el_ev_decoder_tally). *ip advances over
 * the events taken. Returns 1 when the sink asked to stop. */
static inline __attribute__((always_inline)) int fast_run_t(
    el_ev_decoder_t *d, const uint8_t *buf, size_t len, size_t *ip, size_t *lim,
    int *cand, const int fields, const int quiet, const int tally,
    const int direct_on) {
  const uint32_t *tab = d->tab;
  const uint32_t ntab = (uint32_t)d->ntab;
  const uint8_t *const flen = d->flen;
  const uint64_t base = d->base, bend = d->block_end;
  const el__ev_layout_t *layouts = d->layouts;
  int (*const on_event)(void *, const el_ev_event_t *) = d->sink.on_event;
  void *const ud = d->sink.ud;
  el_ev_event_t *const ev = &d->ev;
  /* T_QUIET is set only while these are given (with_mask). */
  uint64_t *const q_events = d->qc.events;
  el_rts_ns_t *const q_tmax = d->qc.tmax;
  const uint64_t *const q_until = d->qc.until;
  size_t i = *ip, nfast = 0;
  /* The tally (el_ev_decoder_tally): its times kept in locals. */
  el_ev_tally_type_t *const ttype = tally ? d->tally->type : NULL;
  uint64_t tmin = tally ? d->tally->tmin : 0;
  uint64_t tmax = tally ? d->tally->tmax : 0, tlast = 0;
  /* After a skipped body the general path checks the landing first. */
  const size_t end = d->landing ? i : len;
  int stop = 0;
  /* What every event of the fast path shares (the event is the sink's
   * only while its callback runs: set once, not per event). */
  ev->known = 1;
  if (!fields) {
    ev->nfields = 0;
    ev->layout = 0;
  }
  d->in_event = 1; /* its only callback is on_event, for ev */
  for (;;) {
    if (base + i == bend)
      break; /* a block ends here: step() looks at what follows */
    int in_block = base + i < bend;
    size_t r = in_block && bend - base < end ? (size_t)(bend - base) : end;
    r = r < *lim ? r : *lim;
    ev->cap = in_block ? d->block_cap : EL_EV_NO_CAP;
    /* An event dated after its block's end goes to the general path,
     * which reports the damage (step): one compare. */
    const uint64_t tend = in_block ? d->block_t1 : UINT64_MAX;
    const size_t nfast0 = nfast;
    if (tally) { /* counted, not delivered: no call, no ev */
      /* A pointer, not an index: the chain from one event to the next
       * is two loads and an add. */
      const uint8_t *p = buf + i, *const pr = buf + r;
      while (pr - p >= 10) {
        size_t n = flen[wire_key_at(p)]; /* 0: not T_FAST */
        if (!n || n > (size_t)(pr - p))
          break;
        uint32_t type = el_ev_be16(p);
        uint64_t ts = el_ev_be64(p + 2);
        if (ts > tend)
          break;
        ttype[type].events++;
        ttype[type].payload_bytes += n - 10;
        tmin = ts < tmin ? ts : tmin;
        tmax = ts > tmax ? ts : tmax;
        tlast = ts;
        nfast++;
        p += n;
      }
      i = (size_t)(p - buf);
    }
    /* With direct types (direct_on): the quiet events and those the run
     * handler took since the last delivery: how many, their latest time,
     * where the last one lies, added to the sink's counters before an
     * event is delivered and when the loop ends (quiet_flush, which fills
     * ev from the last one), so that on_event and the general path see
     * them as if each had been counted at once. */
    uint64_t qn = 0;
    el_rts_ns_t qt = 0;
    size_t qlast = 0;
    /* With direct types: the run handler was offered a run since the last
     * delivery (the next direct event is then delivered, not offered). */
    int offered = 0;
    while (!tally && i + 10 <= r) {
      if (direct_on && !offered &&
          flen[65536 + wire_key_at(buf + i)] == EL_EV_RUN_DIRECT) {
        /* the run to the run handler; what it leaves goes on here, its
         * next event delivered. It is offered from a direct event on: the
         * events before that one are counted (quiet) or delivered here,
         * then the next one looked at. A direct kind implies a run
         * handler (with_mask). */
        int sunk = 0;
        offered = 1;
        i += run_offer(d, buf, i, r, tend, &qn, &qt, &qlast, &nfast, &sunk);
        if (sunk) { /* as on_event returning nonzero */
          quiet_flush(d, buf, qlast, &qn, qt);
          stop = 1;
          goto done;
        }
        continue;
      }
      const uint8_t *p = buf + i;
      size_t n = flen[wire_key_at(p)]; /* 0: not T_FAST */
      if (!n || i + n > r)
        break;
      uint32_t type = el_ev_be16(p);
      uint64_t ts = el_ev_be64(p + 2);
      if (ts > tend)
        break;
      uint32_t t = tab[type]; /* declared: below ntab */
      if (quiet && (t & T_QUIET) && ts < *q_until) {
        /* counted and timed in the sink's counters, as its on_event
         * would have done, and not delivered (ev keeps what the general
         * path after the run may read of the last event) */
        if (direct_on) {
          qn++;
          qt = ts > qt ? ts : qt;
          qlast = i;
        } else {
          ++*q_events;
          if (ts > *q_tmax)
            *q_tmax = ts;
          ev->type = (uint16_t)type;
          ev->t_ns = ts;
          ev->offset = base + i;
        }
        nfast++;
        i += n;
        continue;
      }
      if (direct_on && qn) { /* quiet_flush but for ev, filled now */
        *q_events += qn;
        qn = 0;
        if (qt > *q_tmax)
          *q_tmax = qt;
      }
      offered = 0; /* a direct event after this delivery is offered */
      ev->type = (uint16_t)type;
      ev->t_ns = ts;
      ev->offset = base + i;
      ev->payload = p + 10;
      ev->payload_len = (uint32_t)(n - 10);
      if (fields && !(t & T_NOFIELDS)) {
        el__ev_decode_ints(&layouts[(t >> T_LAYOUT_SHIFT) - 1], p + 10, ev);
      } else if (fields) { /* not wanted (el_ev_decoder_set_fields) */
        ev->nfields = 0;
        ev->layout = 0;
      }
      nfast++;
      i += n;
      if (on_event && on_event(ud, ev)) {
        stop = 1;
        goto done;
      }
    }
    if (direct_on && qn)
      quiet_flush(d, buf, qlast, &qn, qt);
    if (tally && nfast != nfast0) /* the block's capability */
      d->tally->capbits[ev->cap >> 6] |= (uint64_t)1 << (ev->cap & 63);
    /* Which limit the next event reaches, if any. */
    if (end - i < 10)
      break;
    uint32_t type = el_ev_be16(buf + i);
    uint32_t t = tab[type < ntab ? type : ntab];
    size_t n = 10 + (t & T_SIZE_MASK);
    if (!(t & T_FAST) || i + n > end)
      break;
    if (in_block && base + i + n > bend)
      break; /* crosses the block end: frame() reports it */
    if (el_ev_be64(buf + i + 2) > tend)
      break; /* dated after its block's end: step() reports it */
    if (i + n > *lim &&
        (*cand || (*lim = fast_limit(d, buf, len, i, cand), i + n > *lim)))
      break;
    /* else: the block ended at i, or the window looked at grew */
  }
done:
  d->in_event = 0;
  d->stats.events += nfast;
  if (tally) {
    d->tally->tmin = tmin;
    d->tally->tmax = tmax;
    if (nfast && tlast > d->sess_tmax)
      d->sess_tmax = tlast; /* the last one: enough for resync */
  } else if (nfast && ev->t_ns > d->sess_tmax) {
    d->sess_tmax = ev->t_ns; /* the last one: enough for resync */
  }
  *ip = i;
  return stop;
}

/* fast_run_t with and without the fields (EL_EV_OPT_NO_FIELDS), with and
 * without quiet counters, with direct types (fields and counters given,
 * el_ev_decoder_set_direct), and tallying (el_ev_decoder_tally): six
 * copies of the loop, so that none tests the option per event and a
 * decoder without quiet or direct types or a tally pays nothing for
 * them. */
/* fast_run_t's copy with direct types, apart (not inlined into the
 * caller with the others), so that the others' code does not change with
 * it. */
static __attribute__((noinline)) int fast_run_direct(el_ev_decoder_t *d,
                                                     const uint8_t *buf,
                                                     size_t len, size_t *ip,
                                                     size_t *lim, int *cand) {
  return fast_run_t(d, buf, len, ip, lim, cand, 1, 1, 0, 1);
}

static int fast_run(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                    size_t *ip, size_t *lim, int *cand) {
  int fields = !(d->opts & EL_EV_OPT_NO_FIELDS);
  if (d->tally)
    return fast_run_t(d, buf, len, ip, lim, cand, 0, 0, 1, 0);
  if (d->qc.events && fields && d->run_fn && d->ndirect)
    return fast_run_direct(d, buf, len, ip, lim, cand);
  if (d->qc.events)
    return fields ? fast_run_t(d, buf, len, ip, lim, cand, 1, 1, 0, 0)
                  : fast_run_t(d, buf, len, ip, lim, cand, 0, 1, 0, 0);
  return fields ? fast_run_t(d, buf, len, ip, lim, cand, 1, 0, 0, 0)
                : fast_run_t(d, buf, len, ip, lim, cand, 0, 0, 0, 0);
}

/* Decode events in buf; *used receives bytes consumed. */
static int data_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
                     size_t *used, errs_t *E) {
  size_t i = 0;
  int rc = pend_feed(d, buf, len, &i, E);
  size_t i0 = i; /* buf[i0, i) is decoded here (back_push at out) */
  if (rc || d->plen || d->state != ST_DATA)
    goto out;
  /* The fast path runs up to lim: bytes [i, lim) hold no start of the
   * stray pattern or of a header; looked for lazily, so that a run of events the fast
   * path does not take (a block marker, whose body is then skipped) reads
   * no byte ahead. cand: lim is such a start, not just how far we looked. */
  size_t lim = i;
  int cand = 0;
  while (d->state == ST_DATA) {
    if (fast_run(d, buf, len, &i, &lim, &cand)) {
      rc = EL_ESTOPPED;
      goto out;
    }
    /* general path: one event that is not a fast one */
    if (i == len)
      break;
    uint64_t off0 = d->base + i;
    if (d->landing && len - i >= 2) {
      if (check_landing(d, buf + i, len - i, off0,
                        d->body_from >= d->run_off)) {
        d->rewind = 1; /* run() goes back to the body */
        break;
      }
      continue;
    }
    long n = 0;
    size_t c = 0;
    if (off0 == d->block_end) { /* (near_marker reads back[]) */
      back_push(d, buf + i0, i - i0, off0);
      i0 = i;
    }
    int s = step(d, buf + i, len - i, off0, &n, &c);
    if (s == S_NEED) {
      size_t rest = len - i;
      if ((rc = pend_room(d, rest)))
        goto out;
      memcpy(d->pend, buf + i, rest);
      d->plen = rest;
      d->poff = off0;
      back_push(d, buf + i0, i - i0, off0);
      i0 = i = len; /* (pend's bytes are kept when they are read) */
      break;
    }
    if (s == S_REOPEN || s == S_RESUME) {
      reopen(d, off0, s == S_RESUME); /* a block goes on */
      continue;
    }
    if (s == S_SPLICED) {
      skip_spliced(d, buf + i, off0); /* skipped from buf + i */
      break;
    }
    if (s == S_CUT || s == S_HDR || s == S_MAGIC) {
      i = (size_t)(new_stream(d, buf + i, c, off0, s) - d->base);
      break;
    }
    if (s == S_BAD) {
      if (n == FRAME_BAD_BLOCK) {
        /* A warning: the corrupt part is skipped up to the next
         * believable block marker, reported when it ends. */
        resync_begin(d, buf + i, off0, RS_NOFIT, buf, d->base);
        i++;
        break;
      }
      /* An undeclared type outside any block. In a session with blocks
       * a corrupt part like the others (a warning), skipped to the next
       * believable block; without blocks an error, and decoding goes on
       * at the next header. */
      if (blocks_expected(d)) {
        resync_begin(d, buf + i, off0, RS_UNDECL, buf, d->base);
        text_hint(d, buf + i, len - i);
        i++;
        break;
      }
      undeclared(d, buf + i, len - i, off0);
      rc = EL_EUNDECL;
      start_scan(d, off0); /* rescan from the bad event */
      goto out;
    }
    int how = FIX_NONE;
    if (marker_bad(d, buf + i, (size_t)n) &&
        !(how = fix_marker(d, buf + i, len - i))) {
      resync_begin(d, buf + i, off0, RS_BADMARK, buf,
                   d->base); /* garbage, no block */
      i++;
      break;
    }
    if (how) {
      rc = fix_repair(d, buf + i, off0, how);
    } else if (n == 2 && end_damaged(buf + i, len - i - 2)) {
      if (!end_is_marker(d, buf + i, len - i)) {
        resync_begin(d, buf + i, off0, RS_END, buf,
                     d->base); /* to a block or header */
        i++;
        break;
      }
      rc = end_repair(d, buf + i, off0);
      n = RS_LOOK;
    } else {
      rc = deliver(d, buf + i, (size_t)n, off0);
    }
    i += (size_t)n;
    if (rc)
      break;
    if (i >= lim) {
      lim = i; /* past it: look again when the fast path needs to */
      cand = 0;
    }
  }
out:
  back_push(d, buf + i0, i - i0, d->base + i);
  *used = i;
  return rc;
}

/* Process buf[0..len), whose first byte is at input offset d->base, in
 * whatever state the decoder is; d->base advances over what is consumed.
 * Errors are recorded in E. Returns 0, or EL_ESTOPPED / EL_ENOMEM when it
 * stopped early (d->base is where to resume). */
static int run(el_ev_decoder_t *d, const uint8_t *buf, size_t len,
               errs_t *E) {
  size_t i = 0;
  uint64_t outer = d->run_off;
  d->run_off = d->base;
  int ret = 0;
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
      rc = data_feed(d, buf + i, len - i, &used, E);
      break;
    case ST_RESYNC:
      rc = resync_feed(d, buf + i, len - i, &used);
      break;
    case ST_BODY:
      used = skip_body(d, len - i);
      break;
    }
    i += used;
    d->base += used;
    if (d->state == ST_RESYNC)
      resync_note(d); /* a long part said while it lasts */
    if (d->rewind) {
      /* A skipped body ended on something else than a block: decode it
       * (it lies in this buf: data_feed checked run_off). */
      d->rewind = 0;
      i -= (size_t)(d->base - d->body_from);
      d->base = d->body_from;
      continue;
    }
    if (!rc)
      continue;
    if (rc == EL_ESTOPPED || rc == EL_ENOMEM) {
      if (!E->first) {
        E->first = rc;
        E->diag = d->diag;
      }
      ret = rc;
      break;
    }
    /* Corrupt header or data: this session is over; look for the next
     * header in the remaining bytes (§4.7), going on with a "hdrbhetb"
     * the header's bytes may have begun. */
    if (d->state != ST_SCAN && d->state != ST_RESYNC) {
      unsigned m = d->state == ST_HEADER ? d->hscan_m : 0;
      int lost = d->state == ST_HEADER && rc == EL_EBADHDR && d->seen_header;
      start_scan(d, d->base);
      d->scan_m = m;
      if (lost) {
        /* A later header (after a session of the same input or
         * connection): a corrupt part up to the next header, reported
         * when its end is known (lost_header_end), as a damaged block
         * is; not an error of the input (docs/exit-codes.md). */
        d->hdr_lost = 1;
        d->rs_from = d->hoff;
        snprintf(d->rs_why, sizeof d->rs_why, "%.199s", d->diag.msg);
        d->diag.code = 0;
        continue;
      }
    }
    note_err(d, E, rc);
  }
  d->run_off = outer;
  return ret;
}

int el_ev_decoder_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len) {
  errs_t E = {0};
  uint64_t start = d->base;
  d->diag.code = 0;
  if (len)
    d->unfinished = 1;
  int rc = 0;
  if (d->plen && d->state != ST_DATA) /* left by a stop in reprocess */
    rc = reprocess(d, &E);
  if (!rc)
    run(d, buf, len, &E);
  d->stats.bytes += d->base - start;
  if (E.first)
    d->diag = E.diag;
  return E.first;
}

uint64_t el_ev_decoder_offset(const el_ev_decoder_t *d) { return d->base; }

/* At the end of the input, the event cut short in the reassembly buffer:
 * EL_ETRUNC with its type, how many of its bytes came and the byte where
 * the input ends (as the message of an end between events names it). */
/* How far short of its block the input ending at `end` is: the bytes
 * the current block's marker declared beyond end (0 when end is not
 * inside a block of believable size), with ", N bytes short of the end
 * of the capability C block from byte B" (or "the global block") in
 * buf[size] ("" when 0). */
static uint64_t block_short(const el_ev_decoder_t *d, uint64_t end, char *buf,
                            size_t size) {
  buf[0] = '\0';
  if (d->block_end == BLOCK_OPEN || end >= d->block_end || end <= d->block_off)
    return 0;
  uint64_t missing = d->block_end - end;
  char who[32];
  if (d->block_cap == EL_EV_NO_CAP)
    snprintf(who, sizeof who, "the global block");
  else
    snprintf(who, sizeof who, "capability %u's block", d->block_cap);
  snprintf(buf, size, ", %llu byte%s short of the end of %s from byte %llu",
           (unsigned long long)missing, plural(missing), who,
           (unsigned long long)d->block_off);
  return missing;
}

static int truncated_event(el_ev_decoder_t *d) {
  long n = 0;
  size_t c = 0, need;
  d->eof = 1;
  step(d, d->pend, d->plen, d->poff, &n, &c);
  d->eof = 0;
  d->bad_time = 0;
  need = n > 0 ? (size_t)n : d->plen;
  int type = d->plen >= 2 ? el_ev_be16(d->pend) : -1;
  char nm[64], blk[96];
  uint64_t missing = block_short(d, d->poff + d->plen, blk, sizeof blk);
  set_diag(d, EL_ETRUNC, d->poff, type,
           "eventlog truncated inside an event, %s, at byte %llu "
           "(%zu of %zu byte%s present): the input ends at byte %llu%s",
           tname(type, nm, sizeof nm), (unsigned long long)d->poff, d->plen,
           need, plural(need), (unsigned long long)(d->poff + d->plen), blk);
  d->diag.cut_event = 1;
  d->diag.block_missing = missing;
  d->plen = 0;
  return EL_ETRUNC;
}

/* The end of input in the data section: a cut event is EL_ETRUNC
 * (truncated_event); complete events without DATA_END (spec §1.7, §4.1:
 * a killed program) a warning, since every event that came is delivered.
 * Returns 0 or EL_ETRUNC. */
static int finish_data(el_ev_decoder_t *d) {
  if (d->plen)
    return truncated_event(d);
  char blk[96];
  uint64_t missing = block_short(d, d->base, blk, sizeof blk);
  if (d->opts & EL_EV_OPT_CONNECTION) /* as src_pump.c's warn_conn_cut */
    set_diag(d, 0, d->base, -1,
             "the connection closed before the program's last events were "
             "sent: eventlog ends at byte %llu without its end-of-data "
             "marker%s; everything before it was processed, %s lost "
             "(eventlog-socket drops what it has not sent when its program "
             "exits)",
             (unsigned long long)d->base, blk,
             missing ? "the rest of that block and whatever the program "
                       "wrote after it were"
                     : "whatever the program wrote after it was");
  else
    set_diag(d, 0, d->base, -1,
             "eventlog ends at byte %llu without its end-of-data marker%s: "
             "the log is incomplete (the program was killed or is still "
             "writing)",
             (unsigned long long)d->base, blk);
  d->diag.block_missing = missing;
  warn(d);
  d->diag.code = 0;
  return 0;
}

/* The input (or a connection) ends inside a header: the diagnostic
 * (diag.header set; cut_event too for a later header). Returns
 * EL_ETRUNC. */
static int header_cut(el_ev_decoder_t *d) {
  if (d->seen_header) {
    /* A later header (after a session of the same input or connection)
     * cut short: the input ends as a log cut inside its last event does
     * (a program killed mid-write, the next one writing a FIFO),
     * everything before it delivered: cut_event, as every command takes
     * it (docs/exit-codes.md, the "latercut" row). */
    set_diag(d, EL_ETRUNC, d->hoff + d->hlen, -1,
             "eventlog truncated inside the header at byte %llu (a later "
             "header, from byte %llu, after session %u)",
             (unsigned long long)(d->hoff + d->hlen),
             (unsigned long long)d->hoff, d->sessions);
    d->diag.cut_event = 1;
  } else {
    set_diag(d, EL_ETRUNC, d->hoff + d->hlen, -1,
             "eventlog truncated inside the header at byte %llu",
             (unsigned long long)(d->hoff + d->hlen));
  }
  d->diag.header = 1;
  return EL_ETRUNC;
}

/* The session's bytes (since the last reset: a reconnecting socket
 * resets once per connection, so not those of the whole input) held no
 * header, and none came before: the diagnostic, naming them and, when
 * they read as text, quoting it (text_at_start); diag.header is set (no
 * session began: no "session ended early", docs/exit-codes.md). The bytes
 * count as skipped and stray. Returns EL_ETRUNC. */
static int no_header(el_ev_decoder_t *d) {
  uint64_t skipped = d->base - d->scan_from;
  char hint[224];
  /* (before scan_from moves: it quotes the bytes from there) */
  const char *text = text_at_start(d, skipped, NOHDR_TEXT, hint, sizeof hint);
  if (skipped >= 4 && skipped < MAGIC_LEN &&
      d->scan_head_from == d->scan_from && d->scan_head_n == skipped &&
      !memcmp(d->scan_head, "hdrbhetb", skipped)) {
    /* the input ends inside a header's first 8 bytes ("hdrb" and part of
     * "hetb"): cut inside the header, as header_cut says it from byte 8 */
    d->scan_from = d->base;
    set_diag(d, EL_ETRUNC, d->base, -1,
             "eventlog truncated inside the header at byte %llu",
             (unsigned long long)d->base);
    d->diag.header = 1;
    return EL_ETRUNC;
  }
  d->stats.skipped_bytes += skipped;
  d->stats.stray_bytes += skipped; /* skipped looking for a header */
  d->scan_from = d->base;
  if (!skipped && !d->base)
    set_diag(d, EL_ETRUNC, 0, -1, "no eventlog header: the input is empty");
  else if (!skipped)
    set_diag(d, EL_ETRUNC, d->base, -1,
             "no eventlog header: no bytes after byte %llu",
             (unsigned long long)d->base);
  else
    set_diag(d, EL_ETRUNC, d->base, -1,
             "no eventlog header found in %llu byte%s from byte %llu%s",
             (unsigned long long)skipped, plural(skipped),
             (unsigned long long)(d->base - skipped), text);
  d->diag.header = 1;
  return EL_ETRUNC;
}

/* The end of input in the decoder's current state: a cut event, header or
 * skipped block body is EL_ETRUNC (diag set); bytes ignored after a
 * corrupt part or the end of data, and data that stops between events
 * without its end-of-data marker, are a warning. Returns 0 or EL_ETRUNC. */
static int finish_state(el_ev_decoder_t *d) {
  switch (d->state) {
  case ST_DATA:
    return finish_data(d);
  case ST_HEADER:
    return header_cut(d);
  case ST_SCAN:
    if (d->hdr_lost) {
      lost_header_end(d, d->base, "to the end of the input");
      return 0;
    }
    if (d->seen_header && d->base > d->scan_from) {
      set_diag(d, 0, d->scan_from, -1,
               "ignored %llu byte%s from byte %llu after a corrupt part of "
               "the stream",
               (unsigned long long)(d->base - d->scan_from),
               plural(d->base - d->scan_from),
               (unsigned long long)d->scan_from);
      d->stats.skipped_bytes += d->base - d->scan_from;
      warn(d);
      d->diag.code = 0;
      return 0;
    }
    if (!d->seen_header && !d->stats.sessions) {
      /* A last connection that brought nothing after one whose bytes
       * held no header, said at the reset between them: nothing new. */
      if (d->base == d->scan_from && d->nohdr_said)
        return 0;
      return no_header(d);
    }
    return 0;
  case ST_RESYNC:
    if (d->end_held) { /* the data did end there: bytes after it */
      end_release(d);
      return 0;
    }
    /* A warning (EL_ECORRUPT), as every skipped corrupt part. */
    resync_end(d, d->base, "to the end of the input", 0);
    start_scan(d, d->base);
    d->diag.code = 0;
    return 0;
  case ST_BODY:
    if (d->body_spliced) { /* reported already: counted as far as read */
      d->stats.skipped_bytes -= d->skip_until - d->base;
      d->stats.corrupt_bytes -= d->skip_until - d->base;
      d->body_spliced = 0;
      return 0;
    }
    d->stats.skipped_block_bytes -= d->skip_until - d->base;
    set_diag(d, EL_ETRUNC, d->base, -1,
             "eventlog ends at byte %llu inside a capability block whose "
             "body was being skipped (it ends at byte %llu)",
             (unsigned long long)d->base,
             (unsigned long long)d->skip_until);
    return EL_ETRUNC;
  case ST_POST:
    post_ignored(d, d->base);
    return 0;
  }
  return 0;
}

int el_ev_decoder_finish_stopped(el_ev_decoder_t *d) {
  d->unfinished = 0;
  d->plen = 0;
  d->rs_clen = 0; /* (carried bytes precede base: counted below) */
  /* A corrupt part, or a lost header's bytes, being skipped when the
   * reader stopped: said as far as it was read, as the end of input says
   * it (h88: SIGINT after 3 s of a damaged FIFO said nothing of it). */
  if (d->state == ST_RESYNC && d->end_held) {
    end_release(d);
  } else if (d->state == ST_RESYNC) {
    resync_end(d, d->base, "up to the stop (not read further)", 0);
    start_scan(d, d->base);
  } else if (d->state == ST_SCAN && d->hdr_lost) {
    lost_header_end(d, d->base, "up to the stop (not read further)");
  } else if (d->state == ST_SCAN && !d->seen_header && !d->stats.sessions &&
             d->base > d->scan_from) {
    /* bytes and no header in them: said as the end of input says it, a
     * warning here (h89: a FIFO of 500000 bytes of garbage stopped by
     * SIGINT said nothing of them) */
    no_header(d);
    warn(d);
    d->nohdr_said = 1;
  }
  d->diag.code = 0;
  return 0;
}

int el_ev_decoder_finish(el_ev_decoder_t *d) {
  static const uint8_t none[1];
  errs_t E = {0};
  d->unfinished = 0;
  d->eof = 1;
  if (d->state == ST_RESYNC && d->rs_clen) {
    /* The carried bytes, decided now: a target among them is decoded. */
    size_t used = 0;
    if (resync_feed(d, none, 0, &used))
      note_err(d, &E, EL_ENOMEM);
  }
  if (d->plen) {
    if (d->state == ST_DATA) {
      size_t used = 0;
      data_feed(d, none, 0, &used, &E);
    } else {
      reprocess(d, &E);
    }
  }
  d->eof = 0;
  if (E.first) {
    d->diag = E.diag;
    d->plen = 0;
    return E.first;
  }
  return finish_state(d);
}
