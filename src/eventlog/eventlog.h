/* eventlog.h: streaming decoder for the GHC eventlog binary format.
 *
 * Implements ../shared/spec/eventlog-format.md §1-§4 (layout, event table,
 * encodings, edge cases). Pure C, libc only, no I/O.
 *
 * Model: push-style. The caller feeds bytes as they arrive
 * (el_ev_decoder_feed); the decoder calls the sink once per complete event.
 * Results are identical whether the input arrives whole or one byte at a
 * time. Sizes come from the stream's own header, never from a compiled-in
 * table. No allocation per event: string fields are views into the caller's
 * buffer or into the decoder's reassembly buffer.
 *
 * Every decoded event carries a fixed array of typed field values whose
 * names and kinds are described by el_ev_type_info(); consumers (show, the
 * Lua host) read fields generically or by index. */
#ifndef EL_EVENTLOG_H
#define EL_EVENTLOG_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/el_common.h"
#include "ev_type_table.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EL_EV_NO_CAP 0xFFFFu      /* event not in a capability's block */
#define EL_EV_VARIABLE 0xFFFFu    /* declared size meaning "variable" */
#define EL_EV_MAX_FIELDS 12       /* most fields any known layout has */

/* Kinds of field values (see el_ev_value_t). */
typedef enum {
  EL_EV_U64 = 0,  /* unsigned integer (any wire width); in .u */
  EL_EV_I64,      /* signed integer; in .i */
  EL_EV_TEXT,     /* text (UTF-8 by convention, not validated); .s view */
  EL_EV_BYTES,    /* binary payload, never text (USER_BINARY_MSG); .s */
  EL_EV_STRLIST,  /* NUL-separated strings, each NUL-terminated (PROGRAM_ARGS,
                     PROGRAM_ENV); .s views the raw bytes incl. NULs */
  EL_EV_CCS       /* cost-centre stack: .s views depth big-endian u32 ids,
                     innermost first; .u holds depth */
} el_ev_kind_t;

/* One decoded field. Views are valid until the sink callback returns. */
typedef struct el_ev_value_s {
  union {
    uint64_t u;
    int64_t i;
  };
  el_strview_t s;
} el_ev_value_t;

/* Static description of one field of a known event layout. */
typedef struct el_ev_field_info_s {
  const char *name;   /* spec name, e.g. "thread", "size_bytes" */
  el_ev_kind_t kind;
} el_ev_field_info_t;

/* Static description of a known event type (spec §2.1). */
typedef struct el_ev_type_info_s {
  uint16_t id;               /* event type id */
  const char *name;          /* GHC name without EVENT_, e.g. "RUN_THREAD" */
  uint8_t nfields;           /* entries used in fields[] */
  el_ev_field_info_t fields[EL_EV_MAX_FIELDS];
} el_ev_type_info_t;

/* One decoded event. All pointers are borrowed: valid until the sink
 * callback that received the event returns. */
typedef struct el_ev_event_s {
  uint16_t type;             /* event type id */
  uint16_t cap;              /* capability of the enclosing block, or
                                EL_EV_NO_CAP (spec §3.6) */
  el_rts_ns_t t_ns;          /* timestamp: ns since RTS start */
  uint64_t offset;           /* byte offset of the event's first byte in the
                                whole input (across sessions) */
  const uint8_t *payload;    /* raw payload bytes */
  uint32_t payload_len;      /* bytes in payload */
  uint8_t known;             /* 1 if v[] holds the fields of
                                el_ev_type_info(type); 0 if the type is
                                declared but unknown or malformed */
  uint8_t malformed;         /* 1 if the type is known but the payload
                                cannot hold its fields: shorter than the
                                fixed prefix, a string without the NUL
                                the spec requires, a cost-centre stack
                                longer than the payload (spec §3.1, §4.8).
                                Then known = 0 and nfields = 0; the event
                                was reported through on_warning and
                                counted in stats.malformed_events.
                                Consumers must not interpret it (the Lua
                                host does not dispatch it); show prints
                                it as an unknown event. */
  uint8_t layout;            /* layout variant for types with several (e.g.
                                STOP_THREAD 6/10, GC_STATS_GHC 50/58,
                                NONMOVING_HEAP_CENSUS 13/14); 0 = newest.
                                v[] always follows the newest layout's
                                field list; fields an older layout lacks
                                are 0 / empty (docs/eventlog.md) */
  uint8_t nfields;           /* valid entries in v[] */
  el_ev_value_t v[EL_EV_MAX_FIELDS]; /* fields in el_ev_type_info order */
} el_ev_event_t;

/* One declaration from the header's event-type table (spec §1.3). */
typedef struct el_ev_decl_s {
  uint16_t id;
  uint16_t size;             /* payload bytes, or EL_EV_VARIABLE */
  el_strview_t desc;         /* description; valid for the session */
  uint8_t overridden;        /* 1: another declaration of the same id is
                                the one used for decoding (duplicate
                                declarations, docs/eventlog.md) */
  /* known: 1 when a known layout of the type fits the declared size, so
   * the events it frames (if it is the one used) come with known = 1 and
   * their fields, unless malformed; 0 for an unknown type, or a known one
   * declared with a size no layout of it fits (docs/eventlog.md "Unknown
   * types"): its events come with known = 0. Fixed for the session. */
  uint8_t known;
  uint64_t offset;           /* byte offset of its "etb\0" marker */
} el_ev_decl_t;

/* The header of one session (spec §1.2-§1.3). Valid until the next header
 * arrives or the decoder is closed. */
typedef struct el_ev_header_s {
  const el_ev_decl_t *decls; /* in stream order */
  size_t ndecls;
  uint64_t offset;           /* byte offset of "hdrb" in the input */
  unsigned session;          /* 1 for the first header, then 2, 3, ... */
} el_ev_header_t;

/* Where and what went wrong (or what was skipped). Kept in the decoder. */
typedef struct el_diag_s {
  int code;                  /* EL_E* code, 0 if none */
  uint64_t offset;           /* byte offset in the input */
  int event_type;            /* event type involved, -1 if none */
  /* cut_event: 1 for EL_ETRUNC at the end of the input inside an event
   * (after the header; its type is -1 when fewer than its 2 type bytes
   * came), or inside a later header (after a session of the same input
   * or connection; header is set too): everything before it was
   * delivered. Also 1 in a warning (code
   * 0) for an event cut off inside the input, where a new stream begins
   * (a raw tee, or a cut eventlog and another joined): the event is
   * dropped, and decoding goes on with the new header. 0 otherwise. */
  int cut_event;
  /* header: 1 when the error is about a session's header, before any of
   * its events: none found ("no eventlog header found in N bytes from
   * byte B", "no eventlog header: the input is empty"), a malformed one
   * (EL_EBADHDR, "malformed header: ..."), or one cut short ("eventlog
   * truncated inside the header at byte N"; a later one cut short also
   * sets cut_event). No session's data began
   * there, so callers say the message alone after the input's name (no
   * "session ended early", no "decode error": el_src_pump, show, stats;
   * docs/exit-codes.md). 0 otherwise. */
  int header;
  /* expected: 1 in a warning (code 0) that is part of a normal stream:
   * eventlog-socket's stray pattern, exactly its 24-byte global block
   * marker, skipped before a header at the start of the input or
   * connection (spec §5.4; peers/eventlog-socket/README.md). Callers may
   * say it at info level rather than as a warning. 0 otherwise. */
  int expected;
  /* block_missing: with cut_event at the end of the input (EL_ETRUNC),
   * the bytes the cut event's block still had to hold by its marker's
   * size (spec §1.5): those events are lost, besides the cut one (the
   * message says "..., N bytes short of the end of capability C's
   * block from byte B"). 0 when the input ended outside a block of
   * believable size. */
  uint64_t block_missing;
  /* A human description; it names the byte position(s) itself ("at
   * byte N", "from byte N"), so callers print it as is and never append
   * the offset again. */
  char msg[512];
} el_diag_t;

/* Callbacks. Any may be NULL. A nonzero return from on_event or on_header
 * stops decoding: feed returns EL_ESTOPPED after that event. */
typedef struct el_ev_sink_s {
  void *ud;
  /* A new session's header was read (first header, a header after
   * DATA_END or after el_ev_decoder_reset, or a new connection's header
   * inside an unfinished session: docs/eventlog.md, raw tee). */
  int (*on_header)(void *ud, const el_ev_header_t *hdr);
  /* One event, in stream order. BLOCK_MARKER events are delivered too. */
  int (*on_event)(void *ud, const el_ev_event_t *ev);
  /* DATA_END seen (spec §1.7). */
  void (*on_data_end)(void *ud, uint64_t offset);
  /* A problem decoding went past. Code 0 (information): stale or stray
   * bytes skipped before a header, an event cut by a new connection's
   * stream (a raw tee), a session ending without DATA_END, a header cut by
   * a new one, an identical duplicate declaration, bytes ignored after
   * DATA_END. Code EL_ECORRUPT: a corrupt part skipped up to the next
   * believable block marker or header (once per part, at its first byte,
   * with its length; docs/eventlog.md, Resynchronisation), a malformed
   * event, a skipped capability body that ends off a block. Code
   * EL_EBADHDR: conflicting duplicate declarations. A later error in the
   * same feed call: its code. diag->offset is the byte offset in the
   * input; messages name event types ("RUN_THREAD (type 1)").
   * docs/eventlog.md lists every case. */
  void (*on_warning)(void *ud, const el_diag_t *diag);
} el_ev_sink_t;

typedef struct el_ev_decoder_s el_ev_decoder_t;

/* Create a decoder that reports to *sink (copied).
 * Returns NULL when out of memory. Free with el_ev_decoder_free. */
el_ev_decoder_t *el_ev_decoder_new(const el_ev_sink_t *sink);

/* Free d and its buffers. d may be NULL. */
void el_ev_decoder_free(el_ev_decoder_t *d);

/* Decoder options, a bit set for el_ev_decoder_set_opts. */
#define EL_EV_OPT_SKIP_CAP_BLOCKS \
  0x1u /* capability blocks (cap != 0xFFFF):
  deliver the block marker, then skip the body by the marker's declared
  size without reading it (no events, no per-event work, its pages are
  never touched). Global blocks and events outside blocks are decoded.
  Where a skipped body ends the next item must be a block marker or
  DATA_END; if it is not (a block cut short, e.g. by the next connection
  in a raw tee), the body is decoded after all when it lies in the same
  feed call (el_ev_scan_sessions feeds one buffer), else a warning names
  both offsets and decoding goes on from the body's end. The scans
  (el_ev_scan_*) know where their input ends: there a body declared to
  end past it is decoded too (a cut connection followed by a short log,
  whose header lies inside the declared body). */
/* EL_EV_OPT_LIVE: the input may pause for a long time after
 * any feed call (a socket, FIFO or pipe). Without this option an event
 * whose last bytes could be the start of eventlog-socket's stray block
 * marker + header (a new connection inside a raw tee, docs/eventlog.md
 * "Sessions") or of a header's first 12 bytes (a cut log and another
 * joined) waits for up to 31 more bytes, or finish, before it is
 * delivered, so that results never depend on how the input is chunked.
 * With it, that event is delivered at once and such a cut is only
 * detected when the marker or the 12 bytes lie wholly inside the bytes
 * fed so far (an event completed by a feed looks at up to 31 bytes after
 * it in that feed: a cut at the end of one feed is found in the next).
 * Sources that reset the decoder at every connection lose nothing.
 * Likewise a DATA_END (the end of the data, on_data_end) waits without it
 * for the 292 bytes after it, or finish, which tell whether it is damage
 * (more data follows: a block marker whose type bytes were overwritten,
 * docs/eventlog.md "Behaviour on bad input"); with it, a DATA_END at the
 * end of a feed ends the data at once. */
#define EL_EV_OPT_LIVE 0x2u
/* EL_EV_OPT_NO_FIELDS: the sink reads no field values. Events of known
 * fixed-size integer-only layouts (the decoder's fast path: most events of
 * a GHC eventlog) are delivered with nfields = 0, layout = 0 and v[] not
 * filled, however the input is cut into feeds; known = 1 still says the
 * type is known and the payload holds its fields. Other events
 * (variable-size, text, block markers, WALL_CLOCK_TIME, unknown or
 * malformed ones) are delivered as without it; framing, blocks,
 * capabilities, warnings and el_ev_stats_t are the same. For consumers
 * that read only type, cap, t_ns, offset and payload (`eventlog-live
 * stats`): it saves the field decoding per event. */
#define EL_EV_OPT_NO_FIELDS 0x4u
/* EL_EV_OPT_CONNECTION: the input is a connection (a Unix or TCP socket;
 * its peer, eventlog-socket, drops what it has not sent when its program
 * exits). Data that stops between two events without its end-of-data
 * marker is said so: "the connection closed before the program's last
 * events were sent: eventlog ends at byte N without its end-of-data
 * marker[, M bytes short of the end of capability C's block from byte
 * B]; everything before it was processed, ... lost (eventlog-socket
 * drops what it has not sent when its program exits)", as el_src_pump
 * says an event cut there; without it, in a file's words ("... the log
 * is incomplete (the program was killed or is still writing)"). Spec:
 * eventlog-format.md §1.7, §5; docs/sources.md. */
#define EL_EV_OPT_CONNECTION 0x8u

/* Set d's options (EL_EV_OPT_* bits; 0 = defaults). Takes effect from the
 * next byte fed; call it before the first feed for whole-input effects.
 * Returns 0, or EL_EINVAL for an unknown bit (nothing changed).
 * Thread: as el_ev_decoder_feed. Additive. */
int el_ev_decoder_set_opts(el_ev_decoder_t *d, unsigned opts);

/* d's options (EL_EV_OPT_* bits). Additive. */
unsigned el_ev_decoder_opts(const el_ev_decoder_t *d);

/* Say whether the sink reads the field values of events of type `type`
 * (an id 0..0xFFFE), or of every type (type = -1): EL_EV_OPT_NO_FIELDS
 * for chosen types. on = 1 is the default for every type. With on = 0
 * the type's events that the decoder's fast path handles (known
 * fixed-size integer-only layouts, whose declared size holds the fields:
 * they can never be malformed) are delivered with nfields = 0,
 * layout = 0 and v[] not filled, however the input is cut into feeds;
 * known = 1 still says the payload holds the fields. Every other event
 * of the type (variable-size, text, block markers, WALL_CLOCK_TIME,
 * unknown types, malformed events) is delivered with its fields, so
 * malformed-event detection and its warnings are the same for every type.
 * Events are counted, framed, timed and delivered as without it; only v[]
 * is left out. Takes effect from the next event delivered, also when
 * called from inside a sink callback (a handler subscribing to a type),
 * and lasts across sessions (headers) and el_ev_decoder_reset. Called
 * from inside on_event with on = 1 for the type of the event being
 * delivered (or type -1), that event's fields are filled in before the
 * call returns, so a sink that comes to want them before it looks at the
 * event (a timer that fires first) finds them (without
 * EL_EV_OPT_NO_FIELDS).
 * Returns 0, EL_EINVAL for a type outside -1..0xFFFE, or EL_ENOMEM (the
 * decoder's masks, 24 KiB allocated by the first el_ev_decoder_set_*
 * call, could not be: every field is then still delivered); nothing
 * changed on error. Thread: as el_ev_decoder_feed. Additive. */
int el_ev_decoder_set_fields(el_ev_decoder_t *d, int type, int on);

/* 1 if the sink gets the field values of events of type `type`
 * (el_ev_decoder_set_fields), else 0. Additive. */
int el_ev_decoder_fields(const el_ev_decoder_t *d, uint16_t type);

/* Where the decoder counts the events it does not deliver (quiet types,
 * el_ev_decoder_set_quiet): the sink's own event count and latest event
 * time, so that they read as if its on_event had seen each event. */
typedef struct el_ev_quiet_s {
  uint64_t *events;      /* incremented once per event not delivered */
  el_rts_ns_t *tmax;     /* raised to the event's time when it is later */
  const uint64_t *until; /* only events with a time below *until are
                            held back (0: every event is delivered); read
                            per event, so the sink moves it at any time */
} el_ev_quiet_t;

/* The sink's counters for quiet types (NULL, or a member NULL: none,
 * every event is delivered: the default). Pointers borrowed until
 * replaced or the decoder is freed. Thread: as el_ev_decoder_feed.
 * Additive. */
void el_ev_decoder_quiet_counters(el_ev_decoder_t *d, const el_ev_quiet_t *qc);

/* Events of type `type` (-1: every type) need not be delivered (on = 1)
 * or are delivered again (on = 0). While quiet counters are given
 * (el_ev_decoder_quiet_counters), an event of a quiet type that the fast
 * path takes (a fixed-size, integer-only type other than BLOCK_MARKER
 * and WALL_CLOCK_TIME, inside one feed) with a time below *until is not
 * passed to on_event: *events is incremented and *tmax raised to its
 * time instead. Every other event, and every event of a quiet type
 * taken by the general path (cut across feeds, after a resync...), is
 * delivered as usual; the decoder's own counts (el_ev_decoder_stats)
 * include both. A sink whose on_event, for the quiet types, only counts
 * the event, raises its stream time and keeps going while the time is
 * below *until, sees the same counts either way. Takes effect from the
 * next event, also from inside a sink callback; lasts across sessions
 * and el_ev_decoder_reset. Returns 0, EL_EINVAL for a type outside
 * -1..0xFFFE, or EL_ENOMEM (as el_ev_decoder_set_fields: every event is
 * then still delivered); nothing changed on error. Thread: as
 * el_ev_decoder_feed. Additive. */
int el_ev_decoder_set_quiet(el_ev_decoder_t *d, int type, int on);

/* A run offered whole to a run handler (el_ev_decoder_direct_run): from
 * p, the events of one block that the decoder's fast path could take,
 * up to end at most. Read them with el_ev_run_frame. */
typedef struct el_ev_run_s {
  const uint8_t *p, *end;
  el_rts_ns_t tend; /* the block's end time: no event of the run after it */
  uint16_t cap;     /* the block's capability, EL_EV_NO_CAP outside one */
  const uint8_t *flen_, *kind_; /* el_ev_run_frame's tables: private */
  uint64_t offset; /* the byte offset of p in the input (el_ev_event_t's
                      offset of the run's first event) */
} el_ev_run_t;

/* What a run handler took (el_ev_run_fn): events, the last of them at
 * run->p + last, the latest time (ns since RTS start) tmax; stop set
 * (with events > 0): the sink asks to stop after them, as its on_event
 * returning nonzero after the last one would. */
typedef struct el_ev_run_taken_s {
  uint64_t events;
  size_t last;
  el_rts_ns_t tmax;
  int stop;
} el_ev_run_taken_t;

/* Kinds of events in a run (el_ev_run_frame): one the run handler may
 * count as quiet (el_ev_decoder_set_quiet), one it may take as a direct
 * type's (el_ev_decoder_set_direct), or one it must stop at. */
enum { EL_EV_RUN_STOP = 0, EL_EV_RUN_QUIET = 1, EL_EV_RUN_DIRECT = 2 };

/* The event at p (p < run->end, reached from run->p event by event) in
 * run: its length in bytes (type, time and payload; 0: no whole event of
 * the run there, stop) and in *kind its EL_EV_RUN_* kind. Its type is
 * the big-endian u16 at p, its time the u64 at p + 2 (ns since RTS
 * start), its payload at p + 10 (spec §2.1). */
static inline size_t el_ev_run_frame(const el_ev_run_t *run, const uint8_t *p,
                                     int *kind) {
  if (run->end - p < 10)
    return 0;
  uint16_t key; /* the type's wire bytes as one native load */
  memcpy(&key, p, 2);
  size_t n = run->flen_[key];
  *kind = run->kind_[key];
  return n <= (size_t)(run->end - p) ? n : 0;
}

/* Big-endian unsigned integers at p (an event's fields, spec §2.1:
 * its payload at p + 10), unaligned-safe. The decoder's own loads too.
 * el_ev_be16 is written with shifts, not a 2-byte load and
 * __builtin_bswap16: both compile to the same two instructions, but
 * with GCC 12 the 2-byte form costs the host's run handlers 1.2% more
 * instructions (daemon, default processors) and, here, makes GCC
 * vectorise the tally loop's two counter additions (33 instructions an
 * event against 29: `stats` 12% more), docs/performance.md "One way
 * in". */
static inline uint16_t el_ev_be16(const uint8_t *p) {
  return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t el_ev_be32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
static inline uint64_t el_ev_be64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

/* The type id and the time (ns since RTS start) of an event
 * el_ev_run_frame framed at p (big-endian, spec §2.1). */
static inline uint16_t el_ev_run_type(const uint8_t *p) {
  return el_ev_be16(p);
}
static inline el_rts_ns_t el_ev_run_time(const uint8_t *p) {
  return el_ev_be64(p + 2);
}

/* A sink's run handler (el_ev_decoder_direct_run), asked once per run,
 * not per event: at the first
 * event of a direct type the fast path could take, and again at the
 * first such event after each delivery (the quiet events before it are
 * counted by the decoder itself, and are in the quiet counters when it is
 * called; run->p is a direct event).
 * It takes the run's events from run->p in order, stopping at the first
 * one it does not take: it may take an event only when el_ev_run_frame
 * frames it, its time is at most run->tend and below the quiet counters'
 * *until, and its kind is EL_EV_RUN_QUIET (counted only: as a quiet
 * event) or EL_EV_RUN_DIRECT (with the effect its on_event would have).
 * Fills *taken and returns the bytes taken (0 and taken->events 0: none).
 * The decoder adds them to the quiet counters (*events, *tmax) and goes
 * on at run->p + the bytes taken: that event is delivered as usual (one
 * of a direct type too, not offered again). It must not call the
 * decoder. */
typedef size_t (*el_ev_run_fn)(void *ud, const el_ev_run_t *run,
                               el_ev_run_taken_t *taken);

/* The sink's run handler fn with its ud (NULL fn: none, the default).
 * Only used while quiet counters are given and some type is direct.
 * Thread: as el_ev_decoder_feed. Additive. */
void el_ev_decoder_direct_run(el_ev_decoder_t *d, el_ev_run_fn fn, void *ud);

/* How a field of a fixed-size integer-only layout lies on the wire
 * (el_ev_fixed_t.wire): a big-endian unsigned integer of 1, 2, 4 or 8
 * bytes, or a byte holding the base-2 logarithm of the value (the value
 * is 1 << b, 0 for b >= 64). */
enum {
  EL_EV_WIRE_U8 = 1,
  EL_EV_WIRE_U16 = 2,
  EL_EV_WIRE_U32 = 3,
  EL_EV_WIRE_U64 = 4,
  EL_EV_WIRE_LOG2U8 = 5
};

/* How the decoder's fast path decodes the events of one type in the
 * current session (el_ev_decoder_fixed). */
typedef struct el_ev_fixed_s {
  uint32_t payload_len; /* the declared size: every event's payload_len */
  uint8_t layout;       /* el_ev_event_t.layout of its events */
  uint8_t nfields;      /* el_ev_event_t.nfields of its events (with
                           fields wanted) */
  uint8_t nwire;        /* fields on the wire, from the payload's first
                           byte on, v[0] to v[nwire - 1]; v[nwire] to
                           v[nfields - 1] are 0 (an older layout) */
  uint8_t wire[EL_EV_MAX_FIELDS]; /* EL_EV_WIRE_* of each */
} el_ev_fixed_t;

/* The layout of events of type `type` as the fast path takes them in the
 * current session: declared with a fixed size (at most 245 payload
 * bytes) and a known integer-only layout, not BLOCK_MARKER nor
 * WALL_CLOCK_TIME; el_ev_run_frame frames exactly these. Fills *out
 * (fields as el_ev_event_t.v[] gets them, spec §2.1) and returns 0;
 * returns -1 for any other type or before a header (out unchanged). Valid
 * until the next header (a sink's on_header may call it). Thread: as
 * el_ev_decoder_feed. Additive. */
int el_ev_decoder_fixed(const el_ev_decoder_t *d, uint16_t type,
                        el_ev_fixed_t *out);

/* Events of type `type` (-1: every type) are offered to the run
 * handler first (on = 1) or not (on = 0, the default). While a run
 * handler (el_ev_decoder_direct_run) and quiet counters are given, an
 * event of a direct type that the fast path takes (as for quiet types)
 * starts a run that is passed to the handler; an event the handler
 * takes is counted as a quiet event, the first one it does not take is
 * delivered. Every other event of the type is delivered as usual. A
 * type both quiet and direct is quiet. A sink whose run handler has, for
 * an event it takes, the effect its on_event would have had sees the
 * same results whichever events the fast path took. Takes effect from the
 * next event; lasts across sessions and el_ev_decoder_reset. Returns 0,
 * EL_EINVAL for a type outside -1..0xFFFE, or EL_ENOMEM (as
 * el_ev_decoder_set_fields: no run is then offered); nothing changed on
 * error. Thread: as el_ev_decoder_feed. Additive. */
int el_ev_decoder_set_direct(el_ev_decoder_t *d, int type, int on);

/* Per event type, what a tally holds (el_ev_tally_t.type[id]). */
typedef struct el_ev_tally_type_s {
  uint64_t events;        /* events of the type */
  uint64_t payload_bytes; /* the sum of their payload_len (the 10- or
                             12-byte event headers not included) */
} el_ev_tally_type_t;

/* The sink's tallies (el_ev_decoder_tally), all owned by the sink. */
typedef struct el_ev_tally_s {
  el_ev_tally_type_t *type; /* 65,536 entries, indexed by type id */
  uint64_t *capbits;        /* 1,024 words: bit c % 64 of word c / 64 set
                               for the capability c of each event tallied
                               (EL_EV_NO_CAP: bit 63 of word 1023) */
  el_rts_ns_t tmin, tmax;   /* least and greatest t_ns of the events
                               tallied: lowered / raised, never reset (the
                               sink starts tmin at UINT64_MAX) */
} el_ev_tally_t;

/* Tally instead of delivering (t non-NULL; NULL: deliver every event,
 * the default). Every event the decoder's fast path takes (a known
 * fixed-size integer-only type other than BLOCK_MARKER and
 * WALL_CLOCK_TIME, wholly inside one feed, outside a resynchronisation;
 * spec §2.1) is not passed to on_event: t->type[id].events is
 * incremented, t->type[id].payload_bytes raised by its payload_len, the
 * bit of its cap set in t->capbits, and t->tmin / t->tmax lowered /
 * raised to its t_ns. Every other event is delivered as usual, and
 * el_ev_decoder_stats counts both. A sink whose on_event does the same
 * to the same tally for every event sees the same tally, whichever
 * events the fast path took and however the input is cut into feeds:
 * `eventlog-live stats` (a call per event saved). While a tally is
 * given, quiet types (el_ev_decoder_set_quiet) and the fields wanted
 * (el_ev_decoder_set_fields) do not matter on the fast path: nothing
 * there is delivered. t is borrowed until replaced or the decoder is
 * freed; t->tmin and t->tmax may be read and written between feed calls.
 * Thread: as el_ev_decoder_feed. Additive. */
void el_ev_decoder_tally(el_ev_decoder_t *d, el_ev_tally_t *t);

/* Decode every complete event in buf[0..len) and pass each to the sink.
 * buf: borrowed for this call only. Views handed to the sink point into
 *   buf or into d's reassembly buffer and are valid until the callback
 *   returns; copy to keep. A partial event at the end is kept internally
 *   and completed by the next feed; so is, without EL_EV_OPT_LIVE, a
 *   complete last event whose final bytes may begin eventlog-socket's
 *   stray marker or a header (up to 31 more bytes decide whether a new
 *   connection's stream or a joined log begins inside it;
 *   docs/eventlog.md), and a DATA_END with fewer than 292 bytes after it
 *   (EL_EV_OPT_LIVE).
 * Returns 0; EL_ESTOPPED if a callback asked to stop (bytes after that
 *   event are not consumed: see el_ev_decoder_offset); EL_ENOMEM (nothing
 *   past el_ev_decoder_offset consumed; feed the rest again); or
 *   EL_EBADHDR / EL_EUNDECL (undeclared type in a session without
 *   blocks; between blocks it is a corrupt part, a warning) with
 *   el_ev_decoder_diag(d) giving the byte offset and event type. Events
 *   before that offset have been delivered. An event that does not fit its
 *   block (a cut flush, spec §4.6) is not an error return: on_warning gets
 *   diag.code = EL_ECORRUPT with its offset and type, and decoding resumes
 *   at the block's end.
 *   After an error the decoder looks for a new header ("hdrbhetb") from
 *   the offending byte on, in the rest of buf and in later feeds; a later
 *   error within the same call goes to on_warning (the first is returned),
 *   so results do not depend on how the input is chunked.
 * Thread: one thread at a time per decoder.
 * Spec: §1.4, §1.6, §1.7, §4.7, §5.4. */
int el_ev_decoder_feed(el_ev_decoder_t *d, const uint8_t *buf, size_t len);

/* Bytes of input consumed so far (across sessions): the offset the next
 * fed byte will have. After EL_ESTOPPED the bytes of the last buffer past
 * this point were not decoded; feed them again to continue. Additive. */
uint64_t el_ev_decoder_offset(const el_ev_decoder_t *d);

/* Declare end of input. Returns 0 after a clean end (DATA_END, or between
 * events of a data section: ghc-events accepts that), or EL_ETRUNC with the
 * diag naming the offset and the event type cut off (spec §4.1). Events
 * held back for lookahead are delivered first; if those last bytes do not
 * frame, their error (e.g. EL_EUNDECL) is returned here instead. */
int el_ev_decoder_finish(el_ev_decoder_t *d);

/* End of input because the reader stopped (SIGINT, SIGTERM), not because
 * the input ended: the session ends with nothing said about where the
 * bytes stop, since a cut event or a missing end-of-data marker there is
 * the stop's doing, not the log's (docs/exit-codes.md "signal"). Bytes of
 * an event cut by the stop, or held back for lookahead, are dropped
 * undecoded. A corrupt part being skipped is counted and said to
 * on_warning (EL_ECORRUPT, "... skipped N bytes (A to B) up to the stop
 * (not read further)"), as el_ev_decoder_finish says it at the end of
 * input (docs/eventlog.md "Behaviour on bad input"); so are bytes in
 * which no header was found ("no eventlog header found in N bytes from
 * byte B", a warning here). Returns 0. */
int el_ev_decoder_finish_stopped(el_ev_decoder_t *d);

/* Forget any partial input and expect a fresh header: used when a socket
 * source reconnects (each connection is a new session, spec §4.7, §5.4).
 * Complete events held back for lookahead (see el_ev_decoder_feed) are
 * delivered first; a partial event is dropped without a report. Bytes
 * since the last reset (or finish) in which no header was found, with no
 * header read before, are reported to on_warning with the diagnostic
 * el_ev_decoder_finish would give (EL_ETRUNC, header = 1: "no eventlog
 * header found in N bytes from byte B"), for a caller that finishes once
 * at the end of input (el_ev_show_t); a finish after that with no new
 * byte then returns 0. */
void el_ev_decoder_reset(el_ev_decoder_t *d);

/* 1 when the current session's data ended with its end-of-data marker
 * (DATA_END, 0xFFFF: spec §1.7) and no byte was fed after it; else 0
 * (events still coming, a corrupt part, bytes after the marker). */
int el_ev_decoder_data_ended(const el_ev_decoder_t *d);

/* The last error or warning. Valid until the next call on d. */
const el_diag_t *el_ev_decoder_diag(const el_ev_decoder_t *d);

/* The current session's header, or NULL before one was read. */
const el_ev_header_t *el_ev_decoder_header(const el_ev_decoder_t *d);

/* Absolute time of t_ns in the current session: Unix ns =
 * WALL_CLOCK_TIME sec*1e9 + nsec + (t_ns - t of the WALL_CLOCK_TIME event)
 * (spec §3.5; the most recent WALL_CLOCK_TIME wins). Returns 0 when the
 * session has not yet seen WALL_CLOCK_TIME. */
el_unix_ns_t el_ev_decoder_unix_ns(const el_ev_decoder_t *d, el_rts_ns_t t_ns);

/* Counters for stats: events, bytes, skipped bytes, warnings. */
typedef struct el_ev_stats_s {
  uint64_t events;           /* events delivered (incl. block markers and
                                malformed events) */
  uint64_t bytes;            /* bytes fed */
  uint64_t skipped_bytes;    /* stale/stray/corrupt bytes skipped, and the
                                bytes of events cut by a new connection */
  uint64_t unknown_events;   /* declared but unknown types delivered */
  uint64_t malformed_events; /* known types too short for their fields:
                                delivered with malformed = 1 */
  uint64_t sessions;         /* headers seen */
  uint64_t stray_bytes;      /* of skipped_bytes: bytes before a header
                                (eventlog-socket's 24-byte block marker,
                                stale bytes; spec §4.7, §5.4), or looked
                                through for one that never came */
  uint64_t cut_events;       /* events dropped because a new connection's
                                stream or a new header began inside them
                                (a raw tee of several connections, a cut
                                log and another joined) */
  uint64_t dup_decls;        /* duplicate event-type declarations */
  uint64_t skipped_blocks;   /* capability blocks whose bodies were not
                                read (EL_EV_OPT_SKIP_CAP_BLOCKS) */
  uint64_t skipped_block_bytes; /* bytes in those bodies */
  uint64_t corrupt_parts;       /* corrupt parts skipped: from an event that
                                does not fit its block (or of an undeclared
                                type in a session with blocks) to the next
                                believable block marker or header, or the
                                end; and damage read past without skipping:
                                a block marker's damaged field (size, end
                                time, capability), a block marker found
                                inside the event before it (docs/eventlog.md,
                                Resynchronisation) */
  uint64_t corrupt_bytes;       /* the bytes of those parts: those skipped
                                (also in skipped_bytes), a damaged field's,
                                the marker's bytes read as the event's */
} el_ev_stats_t;
const el_ev_stats_t *el_ev_decoder_stats(const el_ev_decoder_t *d);

/* {====== fast session scan (whole buffer) ======} */

/* What el_ev_scan_sessions found about one session (one header). */
typedef struct el_ev_scan_session_s {
  uint64_t header_offset;    /* byte offset of its "hdrb" in the buffer */
  uint64_t end_offset;       /* offset just past its last byte decoded
                                (DATA_END, the last event, or where a
                                problem stopped it) */
  uint8_t data_end;          /* 1 if it ended with DATA_END */
  uint8_t has_wall_clock;    /* 1 if a WALL_CLOCK_TIME was decoded */
  int64_t anchor_unix_ns;    /* with has_wall_clock: Unix ns of RTS time 0
                                = unix_sec*1e9 + nsec - t of that event,
                                of the last WALL_CLOCK_TIME (spec §3.5);
                                computed in 128 bits, clamped to
                                [INT64_MIN, INT64_MAX] (never wraps) */
  el_rts_ns_t wall_t_ns;     /* timestamp of that WALL_CLOCK_TIME event */
  el_rts_ns_t max_t_ns;      /* largest timestamp seen: events decoded and
                                block markers' start and end times; 0 if
                                none */
  uint16_t *caps;            /* capabilities with a block (BLOCK_MARKER
                                cap != 0xFFFF) or a CAP_CREATE, ascending,
                                each once */
  size_t ncaps;
  /* The session's init events (spec §2.4), the first of each type found
   * where the scan decodes (global blocks, events outside blocks; GHC 9.0
   * writes them in its global block, at the end of the file): */
  uint8_t has_pid, has_ppid; /* an OSPROCESS_PID / OSPROCESS_PPID */
  uint64_t pid, ppid;        /* their pid field */
  char *rts_id;              /* RTS_IDENTIFIER's name ("GHC-9.0.2
                                rts_thr_l"), NUL-terminated copy; NULL if
                                none */
  size_t rts_id_len;         /* its length in bytes */
  char *args;                /* PROGRAM_ARGS's argument list as in the
                                event: arguments each ended by NUL; a copy,
                                NULL if none */
  size_t args_len;           /* its length in bytes */
  /* Events without a capability (global blocks, events outside blocks;
   * block markers aside: spec §3.6). GHC 9.0 writes its global block at
   * exit, after the capability blocks, so these tell a time-order reader
   * that such events are still to come. Additive. */
  uint8_t has_nocap;          /* 1 if the session has any */
  uint8_t nocap_high;         /* 1 if one of them has a type id >= 256 */
  uint64_t nocap_last_offset; /* byte offset of the last one */
  uint64_t nocap_types[4];    /* their type ids below 256, a bitmap: bit
                                 id & 63 of word id >> 6 */
} el_ev_scan_session_t;

/* The result of el_ev_scan_sessions. Free with el_ev_scan_free. */
typedef struct el_ev_scan_s {
  el_ev_scan_session_t *sessions; /* in buffer order */
  size_t nsessions;
  int status;                /* 0, or the first problem: EL_ETRUNC (cut
                                inside an event or header), EL_EBADHDR,
                                EL_EUNDECL, EL_ECORRUPT (a corrupt block
                                skipped); what precedes it is complete */
  el_diag_t diag;            /* offset, event type and message of status */
  uint64_t warnings;         /* decoder warnings (stray bytes, cut
                                sessions, duplicate declarations, ...) */
  el_ev_stats_t stats;       /* the decoder's counters */
} el_ev_scan_t;

/* el_ev_scan_sessions for buf that is a read-only private mapping of a
 * file (MAP_PRIVATE, PROT_READ): the buffer is fed in 16 MiB windows and
 * the pages of each window the decoder is done with are given back to the
 * kernel (madvise MADV_DONTNEED; they read back from the file if touched
 * again), so the scan's resident memory stays near one window whatever
 * the file's size (144.9 MB, 12 sessions: 2.4 MB peak RSS against 16.9 MB;
 * `el_scan -m`). Results are those of el_ev_scan_sessions: the decoder
 * keeps its place across windows, and a file that shrank under the
 * mapping gives EL_ESHRUNK. Additive. */
int el_ev_scan_mapped(const uint8_t *buf, size_t len, el_ev_scan_t *out);

/* el_ev_scan_sessions for the len bytes of a regular file from byte
 * `from` (offsets in out are counted from there: where a reader of fd
 * starts, its file position), read with pread(2) (the descriptor's file
 * position does not move, so another reader of fd is not disturbed): headers, global blocks and events
 * outside blocks are read in windows of 16 KiB to 1 MiB, and each capability block's
 * body is jumped over once the 2 bytes where it ends show a block marker
 * or DATA_END. A 120 MB GHC 9.0 eventlog of 61 blocks costs ~0.2 ms, not
 * the 3-6 ms of mapping it and faulting in a page per block (measured in
 * the daemon, docs/performance.md "The scan ahead of a recorded file").
 * A body that ends on anything else (a block cut short) is decoded after
 * all, by el_ev_scan_mapped over a mapping of fd. Results are those of
 * el_ev_scan_sessions; a file that shrank below len gives EL_ESHRUNK with
 * out->diag.offset = the first byte missing; a read error gives -errno
 * (out->diag says where), the sessions found before it kept.
 * fd: borrowed, open for reading. out: as el_ev_scan_sessions.
 * Thread: any; no shared state. Spec: as el_ev_scan_sessions. */
int el_ev_scan_fd(int fd, uint64_t from, uint64_t len, el_ev_scan_t *out);

/* Scan a whole eventlog held in memory (e.g. an mmap'd file) for what is
 * needed to place it in time, without decoding capability blocks: per
 * session (header) its offset, WALL_CLOCK_TIME anchor, capabilities and
 * largest timestamp. Uses the decoder with EL_EV_OPT_SKIP_CAP_BLOCKS fed
 * buf in one call: only headers, block markers, global blocks and events
 * outside blocks are decoded, so the cost grows with the number of blocks,
 * not bytes. Sessions begin at every header: the first, one after DATA_END,
 * one after stray bytes or a cut connection (docs/eventlog.md, Sessions).
 * buf: borrowed for the call; len bytes, any length (0 gives no session).
 * out: filled; caller frees with el_ev_scan_free (also after an error).
 * Returns 0 (the buffer decoded cleanly, also when it simply ends between
 *   events), EL_ENOMEM (out holds what was found before), or out->status
 *   when the input has a problem: everything before out->diag.offset is
 *   reported; never reads outside buf. EL_ESHRUNK: buf is a file mapping
 *   and the file was truncated under it; out->diag.offset is the byte
 *   whose read raised SIGBUS, caught (src/common/el_mapguard.h); the
 *   sessions found before it are in out, the last one's capabilities
 *   not listed.
 * Thread: any; no shared state. Spec: §1.2-§1.7, §3.5, §3.6, §4.7. */
int el_ev_scan_sessions(const uint8_t *buf, size_t len, el_ev_scan_t *out);

/* Free what el_ev_scan_sessions allocated in s (not s itself); s is left
 * empty. s may be NULL. */
void el_ev_scan_free(el_ev_scan_t *s);

/* {====== event type table ======} */

/* EL_EV_<NAME> = id for every known event type (EL_EV_RUN_THREAD = 1,
 * ...), from the type table (ev_type_table.h, spec §2.1). */
enum {
#define EL__EV_ID(id, name, fields) EL_EV_##name = id,
#define EL__EV_OLDER(id, name, variant, fields)
  EL_EV_TYPE_TABLE(EL__EV_ID, EL__EV_OLDER)
#undef EL__EV_ID
#undef EL__EV_OLDER
};

/* Description of a known event type id, or NULL if unknown (spec §2.1).
 * Returns a static object. Thread: any. */
const el_ev_type_info_t *el_ev_type_info(uint16_t id);

/* The id of the known type with GHC name `name` (e.g. "RUN_THREAD";
 * "EVENT_RUN_THREAD" is accepted too), or -1. Thread: any. */
int el_ev_type_by_name(const char *name);

/* Did-you-mean for an unknown event type name: the known GHC name nearest
 * to `name` (case-insensitive, a leading "EVENT_" ignored; el_nearest's
 * rule), e.g. "USER_MARKERS" -> "USER_MARKER", or NULL when none is near.
 * A static string. Thread: any. */
const char *el_ev_type_suggest(const char *name);

/* Index of field `name` in el_ev_type_info(id)->fields, or -1. */
int el_ev_field_index(uint16_t id, const char *name);

/* {====== codes inside payloads ======} */

/* STOP_THREAD status codes that need special treatment (spec §2.2). */
enum {
  EL_EV_STATUS_STACK_OVERFLOW = 2,       /* show prints info as a size */
  EL_EV_STATUS_THREAD_FINISHED = 5,      /* the thread's last stop */
  EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE = 8 /* info: the owning thread */
};

/* The name of STOP_THREAD status `code` as ghc-events and the reference
 * tool give it ("ThreadYielding", "BlockedOnMVar"; "NoStatus" for an
 * unknown code), with the owner `info` for a black hole:
 * "BlockedOnBlackHoleOwnedBy 42"; info 0 means the owner is unknown
 * (spec §2.2), named "BlockedOnBlackHole" (ghc-events' constructor
 * without an owner), not "...OwnedBy 0". Written NUL-terminated into buf
 * (size bytes, truncated; buf may be NULL when size is 0). Returns the
 * length of the whole name, as snprintf does: a result >= size means it
 * was cut (64 bytes always suffice). Thread: any. Spec: §2.2. */
size_t el_ev_stop_status_name(uint64_t code, uint64_t info, char *buf,
                              size_t size);

/* The RTS flag ("-hT", "-hc", ...) of HEAP_PROF_BEGIN breakdown `code`,
 * or NULL when unknown. Returns a static string. Thread: any. Spec:
 * §2.5. */
const char *el_ev_breakdown_flag(uint64_t code);

/* {====== ghc-events show formatting ======} */

/* Writes the output of `ghc-events show` (ghc-events 0.21) for a whole
 * stream, byte for byte. Create, feed bytes, finish. The formatter owns a
 * decoder internally. out: borrowed, must outlive the object. */
typedef struct el_ev_show_s el_ev_show_t;
/* Returns NULL when out of memory. Thread: one thread at a time. */
el_ev_show_t *el_ev_show_new(FILE *out);
/* As el_ev_decoder_feed (buf borrowed for the call); nothing is printed
 * yet. Returns 0, or the decoder's error (EL_ENOMEM if formatting ran out
 * of memory), with el_ev_show_diag giving offset and message. */
int el_ev_show_feed(el_ev_show_t *s, const uint8_t *buf, size_t len);
/* End of input: prints the type list and every event (stable by
 * timestamp, spec §6.4) to out, written with write(2) on fileno(out)
 * after a flush. Returns 0; EL_ETRUNC (cut inside an event: everything
 * before is printed); EL_ECORRUPT (a corrupt part was skipped, or another
 * problem the decoder went on after: the rest is printed; el_ev_show_diag
 * is the first, which el_ev_show_set_warn's hook was given as it came;
 * also when no header came at all and a connection's bytes without one
 * were said so at a reset, el_ev_decoder_reset); EL_EBADHDR (no complete
 * header: nothing printed); EL_ENOMEM;
 * a negated errno when writing failed (it wins over the decode status):
 * the output, or the temporary file of the sort (then nothing is printed
 * and el_ev_show_diag's message names the file's directory and the
 * error). el_ev_show_diag has offset and message. */
int el_ev_show_finish(el_ev_show_t *s);
/* Forget any partial input and expect a fresh header: a live source
 * reconnected (el_ev_decoder_reset on the formatter's decoder). Events
 * already buffered are kept and printed by el_ev_show_finish. Additive. */
void el_ev_show_reset(el_ev_show_t *s);
/* Hold at most about `bytes` of formatted lines and their sort records in
 * memory (default 64 MiB). Beyond that, the lines held are sorted and
 * written as a run to an unlinked temporary file in $TMPDIR (else /tmp),
 * and the runs are merged at the end (up to 64 at a time, reading each
 * through a buffer of bytes/128 clamped to 16-256 KiB): peak memory stays
 * near `bytes` plus 2 MiB of I/O buffers whatever the input's length,
 * and the output is byte for byte that of an in-memory sort. The file
 * takes about the output's size on disk. Call before the first feed.
 * Returns 0, or EL_EINVAL for fewer than 1024 bytes or after events
 * were fed (nothing changed). Additive. */
int el_ev_show_set_sort_memory(el_ev_show_t *s, size_t bytes);
/* el_ev_decoder_set_opts on the formatter's decoder (e.g. EL_EV_OPT_LIVE
 * for a source that can pause). Returns as that. Additive. */
int el_ev_show_set_opts(el_ev_show_t *s, unsigned opts);
const el_diag_t *el_ev_show_diag(const el_ev_show_t *s);
void el_ev_show_free(el_ev_show_t *s);
/* Called with each warning of the formatter's decoder as it comes (bytes
 * skipped or ignored, a missing end-of-data marker, a corrupt part...),
 * in byte order, corrupt parts included (d->code set). The first of those
 * is also el_ev_show_finish's status (EL_ECORRUPT, el_ev_show_diag): with
 * a hook it has been said here already; without one (NULL, the default)
 * the status is all that is left of it. Additive. */
typedef void (*el_ev_warn_fn)(void *ud, const el_diag_t *d);
void el_ev_show_set_warn(el_ev_show_t *s, el_ev_warn_fn fn, void *ud);

/* {====== JSON lines (show --json) ======} */

/* Writes one JSON object per event, one per line, in stream order:
 * {"offset","type","name","t_ns","unix_ns","cap","fields":{...}}; unknown
 * types get "name":null, "desc" and "payload_hex" (ev_json.c documents
 * the encoding). Same life cycle as el_ev_show_t; output is written as
 * events arrive. out: borrowed, must outlive the object. Additive. */
typedef struct el_ev_json_s el_ev_json_t;
el_ev_json_t *el_ev_json_new(FILE *out);
int el_ev_json_feed(el_ev_json_t *j, const uint8_t *buf, size_t len);
/* Returns as el_ev_decoder_finish, EL_ECORRUPT as el_ev_show_finish, or
 * EL_EBADHDR if no header was read (its diag the decoder's: "no eventlog
 * header found ...", "eventlog truncated inside the header ..."). */
int el_ev_json_finish(el_ev_json_t *j);
void el_ev_json_reset(el_ev_json_t *j);
/* As el_ev_show_set_opts. Additive. */
int el_ev_json_set_opts(el_ev_json_t *j, unsigned opts);
const el_diag_t *el_ev_json_diag(const el_ev_json_t *j);
void el_ev_json_free(el_ev_json_t *j);
/* As el_ev_show_set_warn. Additive. */
void el_ev_json_set_warn(el_ev_json_t *j, el_ev_warn_fn fn, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* EL_EVENTLOG_H */
