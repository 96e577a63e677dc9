/* repl_store.h: the REPL's bounded in-memory event store.
 *
 * The REPL decodes its input a second time into this store (its own
 * decoder, so the Lua host is untouched) to answer head/tail/filter
 * queries (docs/repl.md). Events are kept as compact variable-length
 * records (time, type, capability, session, then the decoded fields:
 * integers as 8 bytes, text as length + bytes) in chunks of 1/8 of the
 * bound (64 KiB..1 MiB). When the chunks would exceed the byte bound the
 * oldest chunk is dropped whole and its events are counted in `dropped`.
 * Counters (events per type, first/last time) cover every event seen,
 * dropped or not, in all and per session (the first 10000 sessions, in
 * the order of their headers). Spec: eventlog-format.md §2.1 (field names and kinds).
 *
 * Thread: one thread at a time (the REPL's loop thread, under its Lua
 * lock). */
#ifndef EL_REPL_STORE_H
#define EL_REPL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/el_common.h"

struct lua_State;

#ifdef __cplusplus
extern "C" {
#endif

typedef struct el_repl_store_s el_repl_store_t;

/* Create a store that keeps at most max_bytes of records (at least one
 * chunk is always kept; 0 = the default, 64 MiB).
 * Returns NULL when out of memory. Free with el_repl_store_free. */
el_repl_store_t *el_repl_store_new(size_t max_bytes);

/* Free s and every record. NULL does nothing. */
void el_repl_store_free(el_repl_store_t *s);

/* Decode buf[0..len) (borrowed for the call) into the store. Decode
 * errors are not reported here (the host's decoder reports the same
 * bytes); the decoder resyncs at the next header.
 * Returns 0 or the decoder's error code. */
int el_repl_store_feed(el_repl_store_t *s, const uint8_t *buf, size_t len);

/* A new session begins (a socket reconnected): forget any partial event
 * and expect a header. */
void el_repl_store_reset(el_repl_store_t *s);

/* The input may pause after any byte: decode with EL_EV_OPT_LIVE
 * (src/eventlog/eventlog.h) so that no event is held back. */
void el_repl_store_set_live(el_repl_store_t *s);

/* Counters. */
typedef struct el_repl_store_stats_s {
  uint64_t events;          /* events decoded (every type, incl. block
                               markers) */
  uint64_t stored;          /* events held now */
  uint64_t dropped;         /* events dropped to respect the bound */
  uint64_t truncated;       /* text fields cut to 64 KiB */
  uint64_t bytes;           /* bytes of records held now */
  uint64_t max_bytes;       /* the bound */
  uint64_t sessions;        /* headers seen */
  uint64_t first_seq;       /* sequence number of the oldest held event
                               (the first event ever is 1) */
  uint64_t min_t, max_t;    /* smallest / largest event time, ns (0 when
                               no event yet) */
} el_repl_store_stats_t;

/* Fill *out with the counters. */
void el_repl_store_stats(const el_repl_store_t *s,
                         el_repl_store_stats_t *out);

/* Events of type id seen so far (dropped included). */
uint64_t el_repl_store_count(const el_repl_store_t *s, uint16_t type);

/* Push onto L the Lua module table of s (functions stats, counts,
 * sessions, query;
 * docs/repl.md "Lua access to the store"). s is borrowed and must outlive
 * every use of the table. [-0, +1, m] */
void el_repl_store_push_lua(struct lua_State *L, el_repl_store_t *s);

#ifdef __cplusplus
}
#endif
#endif /* EL_REPL_STORE_H */
