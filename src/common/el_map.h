/* el_map.h: the one hash table of eventlog-live: open addressing with
 * linear probing over 64-bit keys, each mapped to a 32-bit value (in
 * practice an index into the caller's array of entries). Depends on libc
 * only.
 *
 * Two ways to use it:
 *   - integer keys (thread ids, packed ids): el_map_get / el_map_put; the
 *     key is stored, so a hit needs no further check.
 *   - keys that are not integers (strings, byte strings, structs): store
 *     el_hash_bytes() of the key with el_map_add, and look candidates up
 *     with el_map_first / el_map_next, comparing each candidate entry in
 *     the caller's array (different keys may share a hash).
 * The table is at most half full: it doubles (rehashing the stored keys)
 * before an insertion would pass that. Entries cannot be removed one by
 * one; el_map_clear empties the table and keeps its memory.
 *
 * A zeroed el_map_t is an empty map. Thread: a map is used by one thread
 * at a time; nothing is shared between maps. */
#ifndef EL_MAP_H
#define EL_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "el_hash.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The "no value" result of el_map_first/el_map_next; also the one value
 * that cannot be stored. */
#define EL_MAP_NONE UINT32_MAX

typedef struct el_map_slot_s {
  uint64_t key;
  uint32_t val1; /* value + 1; 0 = empty slot */
} el_map_slot_t;

typedef struct el_map_s {
  el_map_slot_t *slots; /* cap slots (el_malloc'd), or NULL */
  size_t cap;           /* 0 or a power of 2 */
  size_t n;             /* entries stored */
} el_map_t;

/* The value stored under key: returns 1 and sets *val, or 0 when the key
 * is absent (*val untouched). With several entries under key (el_map_add),
 * the first one added. Thread: see above. */
static inline int el_map_get(const el_map_t *m, uint64_t key, uint32_t *val) {
  if (!m->cap) return 0;
  size_t mask = m->cap - 1;
  for (size_t i = (size_t)el_hash_u64(key) & mask; m->slots[i].val1;
       i = (i + 1) & mask)
    if (m->slots[i].key == key) {
      *val = m->slots[i].val1 - 1;
      return 1;
    }
  return 0;
}

/* Iterate over the values stored under key (el_map_add can store several):
 * el_map_first starts, el_map_next continues from *pos (an opaque cursor
 * the caller keeps); both return EL_MAP_NONE when there are no more. The
 * map must not change during an iteration. Typical use, for a string key:
 *   uint64_t h = el_hash_bytes(s, len, 0);
 *   size_t pos;
 *   for (uint32_t i = el_map_first(m, h, &pos); i != EL_MAP_NONE;
 *        i = el_map_next(m, h, &pos))
 *     if (equal(&entries[i], s, len)) return &entries[i]; */
static inline uint32_t el_map_next(const el_map_t *m, uint64_t key,
                                   size_t *pos) {
  size_t mask = m->cap - 1;
  for (size_t i = *pos; m->slots[i].val1; i = (i + 1) & mask)
    if (m->slots[i].key == key) {
      *pos = (i + 1) & mask;
      return m->slots[i].val1 - 1;
    }
  return EL_MAP_NONE;
}

static inline uint32_t el_map_first(const el_map_t *m, uint64_t key,
                                    size_t *pos) {
  if (!m->cap) return EL_MAP_NONE;
  *pos = (size_t)el_hash_u64(key) & (m->cap - 1);
  return el_map_next(m, key, pos);
}

/* Store val (< EL_MAP_NONE) under key, replacing the value of an entry
 * already stored under key (which never allocates). Returns 0, EL_EINVAL
 * (val == EL_MAP_NONE) or EL_ENOMEM (the map is unchanged). */
int el_map_put(el_map_t *m, uint64_t key, uint32_t val);

/* Add an entry (key, val), also when key is stored already: for keys that
 * are hashes. Returns as el_map_put. */
int el_map_add(el_map_t *m, uint64_t key, uint32_t val);

/* Make room for n entries in all, so that adding up to n - el_map_count
 * entries allocates nothing. Returns 0 or EL_ENOMEM (unchanged). */
int el_map_reserve(el_map_t *m, size_t n);

/* Number of entries stored. */
static inline size_t el_map_count(const el_map_t *m) { return m->n; }

/* Remove every entry; the table's memory is kept for reuse. */
void el_map_clear(el_map_t *m);

/* Free the table; m is left empty (and may be used again). */
void el_map_free(el_map_t *m);

#ifdef __cplusplus
}
#endif
#endif /* EL_MAP_H */
