/* el_arena.h: the one bump allocator of eventlog-live. Allocations come
 * from large chunks and are never freed one by one: everything goes at
 * once (el_arena_free), or is forgotten with the chunks kept for the next
 * round (el_arena_reset). Depends on libc only.
 *
 * Users: the telemetry store's export windows and batches (every string
 * and attribute of a window), the OTLP encoder's per-request protobuf
 * messages, and `show`'s formatted lines (reserve, write, commit).
 *
 * A zeroed el_arena_t is an empty arena with the default chunk size.
 * Thread: an arena is used by one thread at a time. */
#ifndef EL_ARENA_H
#define EL_ARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EL_ARENA_CHUNK ((size_t)64 * 1024) /* default chunk bytes */
#define EL_ARENA_ALIGN \
  8 /* alignment of el_arena_alloc's results: any
                                pointer, integer or double */

/* A chunk of memory; data follows the header. */
typedef struct el_arena_chunk_s {
  struct el_arena_chunk_s *next;
  size_t used; /* bytes handed out from data */
  size_t cap;  /* bytes of data */
  _Alignas(16) unsigned char data[];
} el_arena_chunk_t;

typedef struct el_arena_s {
  el_arena_chunk_t *head;  /* chunk being filled, then the older ones */
  el_arena_chunk_t *spare; /* emptied by el_arena_reset, reused first */
  size_t bytes;            /* bytes handed out since the last reset
                               (rounded up to EL_ARENA_ALIGN), for limits */
  size_t chunk_bytes;      /* size of a chunk; 0 = EL_ARENA_CHUNK. Set
                               before the first allocation */
} el_arena_t;

/* n bytes aligned to EL_ARENA_ALIGN, uninitialised, valid until the next
 * el_arena_reset or el_arena_free; NULL when out of memory (the arena is
 * unchanged). n == 0 gives a distinct non-NULL pointer. A request larger
 * than a quarter of a chunk gets a chunk of its own. */
void *el_arena_alloc(el_arena_t *a, size_t n);
/* As el_arena_alloc, zero-filled. */
void *el_arena_calloc(el_arena_t *a, size_t n);
/* A copy of p[0..n) (p may be NULL when n == 0); NULL when out of
 * memory. */
void *el_arena_memdup(el_arena_t *a, const void *p, size_t n);
/* A NUL-terminated copy of s[0..len); NULL when out of memory. */
char *el_arena_strndup(el_arena_t *a, const char *s, size_t len);

/* The slow path of el_arena_reserve; call el_arena_reserve. */
char *el__arena_reserve(el_arena_t *a, size_t n);

/* At least n contiguous writable bytes at the arena's current position,
 * not handed out yet: write there, then el_arena_commit what was used. A
 * later reserve, alloc or commit invalidates the pointer (its bytes stay
 * where they are once committed). NULL when out of memory. No alignment
 * is promised. Inline: `show` reserves once per event. */
static inline char *el_arena_reserve(el_arena_t *a, size_t n) {
  el_arena_chunk_t *c = a->head;
  if (c && c->cap - c->used >= n) return (char *)c->data + c->used;
  return el__arena_reserve(a, n);
}

/* Hand out the first n bytes (n <= the last reservation) of the last
 * el_arena_reserve. */
static inline void el_arena_commit(el_arena_t *a, size_t n) {
  a->head->used += n;
  a->bytes += n;
}

/* Forget everything handed out: chunks of the standard size are kept for
 * reuse, larger ones freed. Pointers handed out before are invalid. */
void el_arena_reset(el_arena_t *a);

/* Free every chunk; a is left empty (same chunk_bytes) and may be used
 * again. */
void el_arena_free(el_arena_t *a);

#ifdef __cplusplus
}
#endif
#endif /* EL_ARENA_H */
