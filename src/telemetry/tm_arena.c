/* tm_arena.c: the store's bump allocator and string interning. Records
 * of one export window share one arena, so emitting costs no malloc per
 * attribute and freeing a batch is one walk over a few chunks. */
#include <string.h>

#include "telemetry_internal.h"

enum { CHUNK_BYTES = 64 * 1024, BIG_BYTES = 16 * 1024 };

static el__tm_chunk_t *chunk_new(size_t cap) {
  el__tm_chunk_t *c = el_malloc(sizeof(*c) + cap);
  if (c) {
    c->next = NULL;
    c->used = 0;
    c->cap = cap;
  }
  return c;
}

void *el__tm_arena_alloc(el__tm_arena_t *a, size_t n) {
  n = (n + 7) & ~(size_t)7;
  if (n == 0) n = 8;
  el__tm_chunk_t *c = a->head;
  if (c && c->cap - c->used >= n) {
    void *p = c->data + c->used;
    c->used += n;
    a->bytes += n;
    return p;
  }
  if (n > BIG_BYTES) {                /* own chunk, behind the current one */
    el__tm_chunk_t *big = chunk_new(n);
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
  el__tm_chunk_t *nc = chunk_new(CHUNK_BYTES);
  if (!nc) return NULL;
  nc->next = c;
  a->head = nc;
  nc->used = n;
  a->bytes += n;
  return nc->data;
}

char *el__tm_arena_strndup(el__tm_arena_t *a, const char *s, size_t len) {
  char *p = el__tm_arena_alloc(a, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

void el__tm_arena_free(el__tm_arena_t *a) {
  el__tm_chunk_t *c = a->head;
  while (c) {
    el__tm_chunk_t *next = c->next;
    el_free(c);
    c = next;
  }
  a->head = NULL;
  a->bytes = 0;
}

/* FNV-1a, 32 bit. */
uint32_t el__tm_hash(const void *p, size_t len, uint32_t seed) {
  const unsigned char *s = p;
  uint32_t h = 2166136261u ^ seed;
  for (size_t i = 0; i < len; i++) {
    h ^= s[i];
    h *= 16777619u;
  }
  return h;
}

static int intern_grow(el__tm_intern_t *t) {
  size_t ncap = t->cap ? t->cap * 2 : 256;
  el__tm_islot_t *ns = el_calloc(ncap, sizeof(*ns));
  if (!ns) return EL_ENOMEM;
  for (size_t i = 0; i < t->cap; i++) {
    el__tm_islot_t *o = &t->slots[i];
    if (!o->s) continue;
    size_t j = o->hash & (ncap - 1);
    while (ns[j].s) j = (j + 1) & (ncap - 1);
    ns[j] = *o;
  }
  el_free(t->slots);
  t->slots = ns;
  t->cap = ncap;
  return 0;
}

const char *el__tm_intern(el__tm_intern_t *t, el__tm_arena_t *a,
                          const char *s, size_t len) {
  if (!s) {
    s = "";
    len = 0;
  }
  if (len > EL__TM_INTERN_MAX) return el__tm_arena_strndup(a, s, len);
  if ((t->n + 1) * 2 > t->cap && intern_grow(t) < 0) return NULL;
  uint32_t h = el__tm_hash(s, len, 0);
  size_t j = h & (t->cap - 1);
  for (;;) {
    el__tm_islot_t *sl = &t->slots[j];
    if (!sl->s) break;
    if (sl->hash == h && sl->len == len && memcmp(sl->s, s, len) == 0)
      return sl->s;
    j = (j + 1) & (t->cap - 1);
  }
  char *copy = el__tm_arena_strndup(a, s, len);
  if (!copy) return NULL;
  t->slots[j].s = copy;
  t->slots[j].len = (uint32_t)len;
  t->slots[j].hash = h;
  t->n++;
  return copy;
}

void el__tm_intern_clear(el__tm_intern_t *t) {
  if (t->slots && t->n) memset(t->slots, 0, t->cap * sizeof(*t->slots));
  t->n = 0;
}

void el__tm_intern_free(el__tm_intern_t *t) {
  el_free(t->slots);
  t->slots = NULL;
  t->cap = t->n = 0;
}
