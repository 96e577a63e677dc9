/* src_tee.h: the --eventlog-log-file tee (src_tee.c), with rotation that
 * keeps both files readable eventlogs (docs/sources.md, "Tee").
 *
 * The tee copies the raw bytes it is given, and frames them just enough to
 * know where an event starts (spec/eventlog-format.md §1.2-§1.5): the
 * header of the current session (kept, as received, from `hdrb` to
 * `datb`), the size of every declared event type, each event's length and
 * the extent of the current block (BLOCK_MARKER.block_size, §1.5). A
 * capability's block is passed whole (its body is not framed: it cannot
 * hold DATA_END, and a block that ends inside an event, GHC's
 * --eventlog-flush-interval corruption (§4), still ends where its marker
 * says); the global block (cap 0xFFFF) is framed event by event, as it
 * holds DATA_END since GHC 9.2.
 *
 * Rotation (el__tee_rotate, SIGHUP after logrotate moved the file): the
 * new file is opened at once, but the switch waits for a cut point:
 *   - in the data section: an event boundary outside any block, i.e. the
 *     end of the block in progress (GHC writes a block, at most 2 MiB, in
 *     one piece, so the wait is the arrival of the rest of that write);
 *     the old file then gets DATA_END (0xFFFF) and the new one starts
 *     with the session's header, so each reads as a whole eventlog;
 *   - before a session's header (no byte of `hdrb` seen yet), after its
 *     DATA_END, between sessions or with nothing received yet: at once,
 *     with nothing added (the next session brings its own header);
 *   - inside the header: once the header is complete (the old file then
 *     holds the header alone and DATA_END);
 *   - when the framing is lost (an undeclared event type, a header that is
 *     malformed or over 1 MiB): at once, the new file starting with the
 *     header if one was read (a reader resyncs at the next block);
 *   - when the session ends, or the tee stops (drain, end) first: then,
 *     the old file left as the session left it.
 * No byte is lost: the events of the old file followed by those of the new
 * one (its repeated header aside) are the events received.
 * Thread: the source's loop thread. */
#ifndef EL_SRC_TEE_H
#define EL_SRC_TEE_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"

typedef struct el__tee_s {
  int fd;                  /* the file written, -1: no tee */
  int next_fd;             /* rotation asked: the new file, else -1 */
  const char *path;        /* for messages (borrowed) */
  el_src_stats_t *stats;   /* tee_bytes, tee_errors (borrowed) */
  int state;               /* TEE_PRE, TEE_HDR, TEE_DATA, TEE_LOST */
  int match;               /* TEE_PRE: bytes of "hdrb" matched */
  uint8_t *hdr;            /* the session's header as received */
  size_t hdr_len, hdr_cap; /* its bytes, its buffer's size */
  int hdr_ok;              /* hdr holds a complete header */
  uint16_t *size;          /* [65536] payload size per type, 0xFFFF var */
  uint8_t *decl;           /* [8192] bit per declared type */
  uint8_t head[14];        /* the start of the event being framed */
  unsigned head_len;       /* its bytes gathered */
  uint64_t skip;           /* bytes of the current event still to pass */
  uint64_t pos;            /* bytes of the data section passed */
  uint64_t block_end;      /* data offset where the current block ends */
} el__tee_t;

/* Set up *t on fd (-1: no tee; else owned from now on). path and stats:
 * borrowed, outlive t. */
void el__tee_init(el__tee_t *t, int fd, const char *path,
                  el_src_stats_t *stats);

/* Copy buf[0..len) to the tee, switching files at the first cut point if
 * a rotation is pending. Write errors are counted in stats->tee_errors
 * and reported once; they never stop the caller. */
void el__tee_write(el__tee_t *t, const uint8_t *buf, size_t len);

/* Rotate to new_fd (owned from now on): at once when the stream is at a
 * cut point, else at the next one (see above). A rotation still pending
 * is replaced (its file closed). */
void el__tee_rotate(el__tee_t *t, int new_fd);

/* 1 while a rotation waits for its cut point. */
int el__tee_pending(const el__tee_t *t);

/* A session ended, or bytes are no longer teed (el_src_discard): a
 * pending rotation happens now, the old file left as it is (it may end
 * inside an event: so did the session). Then the framing starts over,
 * waiting for a header. */
void el__tee_session_end(el__tee_t *t);

/* Close the files and free the buffers; when writes failed, warn once
 * more with the number of bytes not teed (stats->tee_errors,
 * docs/sources.md "Tee"). */
void el__tee_close(el__tee_t *t);

#endif /* EL_SRC_TEE_H */
