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

/* Hash of the intern table only (its slot order is never visible): eight
 * bytes per multiply, where el__tm_hash's FNV-1a takes one. */
static uint32_t intern_hash(const char *s, size_t len) {
  uint64_t h = 0x243f6a8885a308d3u ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
  }
  if (i < len) {
    uint64_t w = 0;
    if (len >= 8) {  /* the last eight bytes, overlapping */
      memcpy(&w, s + len - 8, 8);
    } else {
      for (size_t k = 0; k < len; k++)
        w |= (uint64_t)(unsigned char)s[k] << (8 * k);
    }
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
  }
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93u;
  h ^= h >> 32;
  return (uint32_t)h;
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

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF are invalid).
 * NUL counts as invalid too: the OTLP encoders (protobuf-c, JSON) take C
 * strings, so a NUL would silently cut the value there. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return c ? 1 : 0;
  size_t len;
  unsigned lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return len;
}

/* Number of bytes of s[0..len) that do not start a valid sequence. */
static size_t utf8_bad(const char *s, size_t len) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, bad = 0;
  while (i < len) {
    if (i + 8 <= len) {  /* eight ASCII bytes at a time */
      uint64_t w;
      memcpy(&w, u + i, 8);
      if (!(w & 0x8080808080808080u) &&
          !((w - 0x0101010101010101u) & ~w & 0x8080808080808080u)) {
        i += 8;   /* no byte >= 0x80 and no zero byte */
        continue;
      }
    }
    if (u[i] && u[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = utf8_seq(u + i, len - i);
    if (k) {
      i += k;
    } else {
      bad++;
      i++;
    }
  }
  return bad;
}

/* OTLP strings must be UTF-8: a copy of s[0..len) with each of its `bad`
 * invalid bytes replaced by U+FFFD (el_malloc'd, NUL-terminated, length in
 * *out_len), or NULL when out of memory. */
static char *utf8_fix(const char *s, size_t len, size_t bad,
                      size_t *out_len) {
  const unsigned char *u = (const unsigned char *)s;
  char *d = el_malloc(len + 2 * bad + 1);
  if (!d) return NULL;
  size_t j = 0;
  for (size_t i = 0; i < len;) {
    size_t k = utf8_seq(u + i, len - i);
    if (k) {
      memcpy(d + j, s + i, k);
      j += k;
      i += k;
    } else {
      memcpy(d + j, "\xef\xbf\xbd", 3);
      j += 3;
      i++;
    }
  }
  d[j] = '\0';
  *out_len = j;
  return d;
}

static const char *intern_valid(el__tm_intern_t *t, el__tm_arena_t *a,
                                const char *s, size_t len);

const char *el__tm_intern_n(el__tm_intern_t *t, el__tm_arena_t *a,
                            const char *s, size_t len, size_t *out_len) {
  if (!s) {
    s = "";
    len = 0;
  }
  *out_len = len;
  size_t bad = utf8_bad(s, len);
  if (!bad) return intern_valid(t, a, s, len);
  char *fixed = utf8_fix(s, len, bad, out_len);
  if (!fixed) return NULL;
  const char *r = intern_valid(t, a, fixed, *out_len);
  el_free(fixed);
  return r;
}

const char *el__tm_intern(el__tm_intern_t *t, el__tm_arena_t *a,
                          const char *s, size_t len) {
  size_t n;
  return el__tm_intern_n(t, a, s, len, &n);
}

static const char *intern_valid(el__tm_intern_t *t, el__tm_arena_t *a,
                                const char *s, size_t len) {
  if (len > EL__TM_INTERN_MAX) return el__tm_arena_strndup(a, s, len);
  if ((t->n + 1) * 2 > t->cap && intern_grow(t) < 0) return NULL;
  uint32_t h = intern_hash(s, len);
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
