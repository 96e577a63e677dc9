/* eventlog_internal.h: declarations shared by the decoder, the type table
 * and the show formatter. Not part of the public API.
 *
 * Each known event layout (spec §2.1) is a list of wire fields. The decoder
 * picks one layout per declared event type when it reads a header
 * (ev_decoder.c) and fills el_ev_event_t.v[] from it. */
#ifndef EL_EVENTLOG_INTERNAL_H
#define EL_EVENTLOG_INTERNAL_H

#include <stdint.h>

#include "eventlog.h"

/* How one field is laid out on the wire (all integers big-endian). */
typedef enum {
  EL__W_U8 = 1,     /* u8 */
  EL__W_U16,        /* u16 */
  EL__W_U32,        /* u32 */
  EL__W_U64,        /* u64 */
  EL__W_LOG2U8,     /* u8 holding log2 of the value (13-byte census) */
  EL__W_TEXT,       /* rest of the payload as text, no NUL */
  EL__W_TEXT_M4,    /* text = payload minus its last 4 bytes (INTERN_STRING) */
  EL__W_CSTR,       /* NUL-terminated text; the view excludes the NUL */
  EL__W_STRLIST,    /* rest of the payload: strings each followed by NUL */
  EL__W_DEPTH,      /* u8 stack depth (cost-centre stacks) */
  EL__W_STACK,      /* depth x u32 ids; depth from the previous field */
  EL__W_BYTES,      /* rest of the payload as raw bytes */
  EL__W_OPT_U64,    /* u64 if any payload bytes remain, else 0 */
  EL__W_OPT_CSTR    /* cstr if any payload bytes remain, else empty */
} el__ev_wire_t;

/* One known layout of one event type. */
typedef struct el__ev_layout_s {
  uint16_t id;                    /* event type id */
  uint8_t variant;                /* 0 = newest layout (el_ev_event_t.layout) */
  uint8_t nwire;                  /* fields on the wire */
  uint8_t nfields;                /* fields delivered (newest layout's) */
  uint8_t variable;               /* 1 if the payload has variable size */
  uint16_t min_size;              /* bytes taken by the fixed-size fields */
  uint8_t intonly;                /* 1 if every field is a fixed integer:
                                     decodable without bounds checks once
                                     the payload has min_size bytes */
  uint8_t shape;                  /* EL__SHAPE_*: common intonly layouts
                                     decoded by straight-line code */
  uint8_t wire[EL_EV_MAX_FIELDS]; /* el__ev_wire_t per field */
} el__ev_layout_t;

/* All known layouts, and how many. Built once, thread-safe. */
const el__ev_layout_t *el__ev_layouts(size_t *n);

/* Fill ev->v[] from payload p[0..len) per layout L. Returns 0, or -1 when
 * the payload is too short for the layout's fields (malformed). */
int el__ev_decode_fields(const el__ev_layout_t *L, const uint8_t *p,
                         uint32_t len, el_ev_event_t *ev);

/* The current session's description of event type id (of the declaration
 * used for decoding: duplicates, docs/eventlog.md), or an empty view. */
static inline el_strview_t el__ev_decl_desc(const el_ev_decoder_t *d,
                                            uint16_t id) {
  const el_ev_header_t *h = el_ev_decoder_header(d);
  el_strview_t none = {0};
  for (size_t i = h ? h->ndecls : 0; i-- > 0;)
    if (h->decls[i].id == id && !h->decls[i].overridden)
      return h->decls[i].desc;
  return none;
}
#define decl_desc el__ev_decl_desc

/* ev_codes.c: the `show` texts of STOP_THREAD statuses (padded to
 * EL__EV_STATUS_TEXT bytes: copy that many, then advance by strlen) and
 * of heap profile breakdowns, "No stop thread status" / "unknown" for
 * unknown codes. Static strings. */
#define EL__EV_STATUS_TEXT 40
const char *el__ev_stop_status_text(uint64_t code);
const char *el__ev_breakdown_text(uint64_t code);

/* Shapes of the most frequent fixed layouts (thread and GC events). */
enum {
  EL__SHAPE_GENERIC = 0,
  EL__SHAPE_NONE,          /* no fields (GC_START, GC_END, ...) */
  EL__SHAPE_U32,           /* RUN_THREAD, CREATE_THREAD, ... */
  EL__SHAPE_U32_U16,       /* THREAD_WAKEUP, MIGRATE_THREAD */
  EL__SHAPE_U32_U16_U32    /* STOP_THREAD */
};

/* Decode an intonly layout from p (at least L->min_size bytes): the hot
 * path for fixed-size events, no bounds checks. */
static inline void el__ev_decode_ints(const el__ev_layout_t *L,
                                      const uint8_t *p, el_ev_event_t *ev) {
  el_ev_value_t *v = ev->v;
  ev->nfields = L->nfields;
  ev->layout = L->variant;
  switch (L->shape) {
  case EL__SHAPE_NONE:
    return;
  case EL__SHAPE_U32:
    v[0].u = el_ev_be32(p);
    return;
  case EL__SHAPE_U32_U16:
    v[0].u = el_ev_be32(p);
    v[1].u = el_ev_be16(p + 4);
    return;
  case EL__SHAPE_U32_U16_U32:
    v[0].u = el_ev_be32(p);
    v[1].u = el_ev_be16(p + 4);
    v[2].u = el_ev_be32(p + 6);
    return;
  }
  unsigned n = L->nwire;
  for (unsigned i = 0; i < n; i++) {
    switch (L->wire[i]) {
    case EL__W_U8:
      v[i].u = p[0];
      p += 1;
      break;
    case EL__W_U16:
      v[i].u = el_ev_be16(p);
      p += 2;
      break;
    case EL__W_U32:
      v[i].u = el_ev_be32(p);
      p += 4;
      break;
    case EL__W_U64:
      v[i].u = el_ev_be64(p);
      p += 8;
      break;
    default: /* EL__W_LOG2U8 */
      v[i].u = p[0] < 64 ? (uint64_t)1 << p[0] : 0;
      p += 1;
      break;
    }
  }
  for (unsigned i = n; i < L->nfields; i++)
    v[i].u = 0;
}

/* {====== skipping capability bodies without their bytes ======} */

/* Whether an item of type `type` may follow a skipped capability body
 * (EL_EV_OPT_SKIP_CAP_BLOCKS): a block marker or DATA_END (spec §1.5,
 * §1.7). Anything else means the block was cut short, and the body is
 * decoded after all when it lies in the same feed call. */
static inline int el__ev_lands_after_body(uint16_t type) {
  return type == EL_EV_BLOCK_MARKER || type == 0xFFFF;
}

/* The input ends at offset `end` (its length, when the caller knows it:
 * a file or a buffer scanned whole). With EL_EV_OPT_SKIP_CAP_BLOCKS a
 * capability block whose declared end lies past it is decoded, not
 * skipped: it was cut, and what follows the cut (a tee's next connection,
 * its header) lies inside the body it declares (h80: a cut connection
 * followed by a short log lost the log's session). */
void el__ev_decoder_set_input_end(el_ev_decoder_t *d, uint64_t end);

/* While d is skipping a capability block's body (EL_EV_OPT_SKIP_CAP_BLOCKS),
 * or its body ended so near the end of the input fed so far that the item
 * after it is still to be checked (fewer than 2 bytes of it came): 1, and
 * *end = the input offset where the body ends (it may lie beyond the
 * input); else 0. For a caller that
 * reads its input itself (pread) and wants to jump over the body's bytes,
 * having checked the item at *end with el__ev_lands_after_body (ev_scan.c,
 * el_ev_scan_fd). */
int el__ev_decoder_body_end(const el_ev_decoder_t *d, uint64_t *end);

/* Go over the skipped body's bytes up to input offset `to` (at most the
 * body's end) as feeding them would, without them: the decoder's offset
 * and byte count advance; at the body's end the next feed call must start
 * with the item after it, whose type the caller should have checked with
 * el__ev_lands_after_body (the decoder cannot go back into a body it did
 * not get). Does nothing when d is not skipping a body or `to` is behind
 * its offset. */
void el__ev_decoder_skip_to(el_ev_decoder_t *d, uint64_t to);

#endif /* EL_EVENTLOG_INTERNAL_H */
