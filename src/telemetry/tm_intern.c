/* tm_intern.c: string interning for the store's windows: equal strings
 * share one copy in the window's arena (el_arena.h), found through an
 * el_map from their hash; copies are made valid UTF-8 first. */
#include <string.h>

#include "../common/el_grow.h"
#include "../common/el_utf8.h"
#include "telemetry_internal.h"

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. NUL
 * counts as invalid too: the OTLP encoders (protobuf-c, JSON) take C
 * strings, so a NUL would silently cut the value there. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  return s[0] ? el_utf8_len(s, n) : 0;
}

/* Number of bytes of s[0..len) that do not start a valid sequence. */
static size_t utf8_bad(const char *s, size_t len) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, bad = 0;
  while (i < len) {
    if (i + 8 <= len) { /* eight ASCII bytes at a time */
      uint64_t w;
      memcpy(&w, u + i, 8);
      if (!(w & 0x8080808080808080u) &&
          !((w - 0x0101010101010101u) & ~w & 0x8080808080808080u)) {
        i += 8; /* no byte >= 0x80 and no zero byte */
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
static char *utf8_fix(const char *s, size_t len, size_t bad, size_t *out_len) {
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

static const char *intern_valid(el__tm_intern_t *t, el_arena_t *a,
                                const char *s, size_t len);

/* The recent-lookup slot of the caller's string at s. */
static el__tm_recent_t *recent_slot(el__tm_intern_t *t, const char *s,
                                    size_t len) {
  uint64_t h = ((uint64_t)(uintptr_t)s ^ len) * 0x9e3779b97f4a7c15u;
  return &t->recent[h >> 58 & (EL__TM_RECENT - 1)];
}

const char *el__tm_intern_n(el__tm_intern_t *t, el_arena_t *a, const char *s,
                            size_t len, size_t *out_len) {
  if (!s) {
    s = "";
    len = 0;
  }
  *out_len = len;
  el__tm_recent_t *rc = recent_slot(t, s, len);
  if (rc->src == s && rc->len == len && memcmp(rc->copy, s, len) == 0)
    return rc->copy; /* equal bytes: s is valid UTF-8 like its copy */
  size_t bad = utf8_bad(s, len);
  if (!bad) {
    const char *c = intern_valid(t, a, s, len);
    if (c && len <= EL__TM_INTERN_MAX) *rc = (el__tm_recent_t){s, c, len};
    return c;
  }
  char *fixed = utf8_fix(s, len, bad, out_len);
  if (!fixed) return NULL;
  const char *c = intern_valid(t, a, fixed, *out_len);
  el_free(fixed);
  return c;
}

const char *el__tm_intern_cstr(el__tm_intern_t *t, el_arena_t *a, const char *s,
                               size_t *out_len) {
  if (!s) s = "";
  const char *c = el__tm_recent_cstr(t, s, out_len);
  if (c) return c;
  size_t len = strlen(s);
  c = el__tm_intern_n(t, a, s, len, out_len);
  /* Only an unrepaired copy (repairs lengthen) has s's bytes. */
  if (c && *out_len == len && len <= EL__TM_INTERN_MAX)
    *el__tm_recent_cstr_slot(t, s) = (el__tm_recent_t){s, c, len};
  return c;
}

const char *el__tm_intern(el__tm_intern_t *t, el_arena_t *a, const char *s,
                          size_t len) {
  size_t n;
  return el__tm_intern_n(t, a, s, len, &n);
}

static const char *intern_valid(el__tm_intern_t *t, el_arena_t *a,
                                const char *s, size_t len) {
  if (len > EL__TM_INTERN_MAX) return el_arena_strndup(a, s, len);
  uint64_t h = el_hash_bytes(s, len, 0);
  size_t pos;
  for (uint32_t i = el_map_first(&t->map, h, &pos); i != EL_MAP_NONE;
       i = el_map_next(&t->map, h, &pos))
    if (t->strs[i].len == len && memcmp(t->strs[i].s, s, len) == 0)
      return t->strs[i].s;
  if (el_grow(&t->strs, &t->cap, t->n + 1, sizeof *t->strs) < 0 ||
      el_map_reserve(&t->map, t->n + 1) < 0)
    return NULL;
  char *copy = el_arena_strndup(a, s, len);
  if (!copy) return NULL;
  t->strs[t->n].s = copy;
  t->strs[t->n].len = (uint32_t)len;
  el_map_add(&t->map, h, (uint32_t)t->n++); /* reserved: cannot fail */
  return copy;
}

void el__tm_intern_clear(el__tm_intern_t *t) {
  el_map_clear(&t->map);
  t->n = 0;
  memset(t->recent, 0, sizeof t->recent);
}

void el__tm_intern_free(el__tm_intern_t *t) {
  el_map_free(&t->map);
  el_free(t->strs);
  t->strs = NULL;
  t->n = t->cap = 0;
  memset(t->recent, 0, sizeof t->recent);
}
