/* el_arena.c: the bump allocator (el_arena.h). */
#include "el_arena.h"

#include <stdint.h>
#include <string.h>

#include "el_common.h"

static size_t chunk_size(const el_arena_t *a) {
  return a->chunk_bytes ? a->chunk_bytes : EL_ARENA_CHUNK;
}

static el_arena_chunk_t *chunk_new(size_t cap) {
  if (cap > SIZE_MAX - sizeof(el_arena_chunk_t)) return NULL;
  el_arena_chunk_t *c = el_malloc(sizeof(*c) + cap);
  if (c) {
    c->next = NULL;
    c->used = 0;
    c->cap = cap;
  }
  return c;
}

/* A chunk of cap bytes: a spare one when cap is the standard size and
 * there is one, else a new one. Every chunk of the standard size comes
 * through here: el_arena_reset keeps each such chunk as a spare, so one
 * made afresh while spares wait (an allocation of exactly the chunk size,
 * as a jansson hashtable of 4,096 buckets asks for) would add a spare at
 * every reset, without bound (h79: the console exporter's render arena
 * grew by ~4 MB/s with traces exported live). */
static el_arena_chunk_t *chunk_get(el_arena_t *a, size_t cap) {
  if (cap != chunk_size(a) || !a->spare) return chunk_new(cap);
  el_arena_chunk_t *c = a->spare;
  a->spare = c->next;
  c->next = NULL;
  c->used = 0;
  return c;
}

/* A chunk of cap bytes (chunk_get) as the new head. */
static el_arena_chunk_t *push_chunk(el_arena_t *a, size_t cap) {
  el_arena_chunk_t *c = chunk_get(a, cap);
  if (!c) return NULL;
  c->next = a->head;
  a->head = c;
  return c;
}

static size_t align_up(size_t n) {
  return (n + (EL_ARENA_ALIGN - 1)) & ~(size_t)(EL_ARENA_ALIGN - 1);
}

void *el_arena_alloc(el_arena_t *a, size_t n) {
  if (n > SIZE_MAX - EL_ARENA_ALIGN) return NULL;
  n = n ? align_up(n) : EL_ARENA_ALIGN;
  el_arena_chunk_t *c = a->head;
  size_t off = c ? align_up(c->used) : 0;
  if (c && off <= c->cap && c->cap - off >= n) {
    c->used = off + n;
    a->bytes += n;
    return c->data + off;
  }
  if (n > chunk_size(a) / 4) { /* its own chunk, behind the head */
    el_arena_chunk_t *big = chunk_get(a, n);
    if (!big) return NULL;
    big->used = n;
    if (c) {
      big->next = c->next;
      c->next = big;
    } else {
      a->head = big;
    }
    a->bytes += n;
    return big->data;
  }
  if (!(c = push_chunk(a, chunk_size(a)))) return NULL;
  c->used = n;
  a->bytes += n;
  return c->data;
}

void *el_arena_calloc(el_arena_t *a, size_t n) {
  void *p = el_arena_alloc(a, n);
  if (p) memset(p, 0, n);
  return p;
}

void *el_arena_memdup(el_arena_t *a, const void *p, size_t n) {
  void *d = el_arena_alloc(a, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *el_arena_strndup(el_arena_t *a, const char *s, size_t len) {
  if (len == SIZE_MAX) return NULL;
  char *p = el_arena_alloc(a, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

char *el__arena_reserve(el_arena_t *a, size_t n) {
  el_arena_chunk_t *c = a->head;
  if (c && c->cap - c->used >= n) return (char *)c->data + c->used;
  size_t cap = chunk_size(a);
  if (!(c = push_chunk(a, n > cap ? n : cap))) return NULL;
  return (char *)c->data;
}

void el_arena_reset(el_arena_t *a) {
  size_t std = chunk_size(a);
  el_arena_chunk_t *c = a->head;
  while (c) {
    el_arena_chunk_t *next = c->next;
    if (c->cap == std) {
      c->next = a->spare;
      a->spare = c;
    } else {
      el_free(c);
    }
    c = next;
  }
  a->head = NULL;
  a->bytes = 0;
}

static void free_list(el_arena_chunk_t *c) {
  while (c) {
    el_arena_chunk_t *next = c->next;
    el_free(c);
    c = next;
  }
}

void el_arena_free(el_arena_t *a) {
  free_list(a->head);
  free_list(a->spare);
  a->head = a->spare = NULL;
  a->bytes = 0;
}
