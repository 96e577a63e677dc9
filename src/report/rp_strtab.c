/* rp_strtab.c: interned strings with dense ids (rp_internal.h): band
 * names, profile symbols. The index is an el_map from el_hash_bytes of a
 * string to its id; candidates are compared byte for byte. */
#include <string.h>

#include "../common/el_grow.h"
#include "rp_internal.h"

void el__rp_strtab_init(rp_strtab_t *t, size_t max) {
  memset(t, 0, sizeof *t);
  t->max = max;
}

void el__rp_strtab_close(rp_strtab_t *t) {
  for (size_t i = 0; i < t->n; i++) el_free(t->s[i]);
  el_free(t->s);
  el_free(t->len);
  el_map_free(&t->index);
  memset(t, 0, sizeof *t);
}

static long find_hashed(const rp_strtab_t *t, uint64_t h, const char *p,
                        size_t len) {
  size_t pos;
  for (uint32_t id = el_map_first(&t->index, h, &pos); id != EL_MAP_NONE;
       id = el_map_next(&t->index, h, &pos))
    if (t->len[id] == len && memcmp(t->s[id], p, len) == 0) return id;
  return -1;
}

long el__rp_strtab_find(const rp_strtab_t *t, const char *p, size_t len) {
  return find_hashed(t, el_hash_bytes(p, len, 0), p, len);
}

long el__rp_strtab_intern(rp_strtab_t *t, const char *p, size_t len) {
  uint64_t h = el_hash_bytes(p, len, 0);
  long id = find_hashed(t, h, p, len);
  if (id >= 0) return id;
  if (t->n >= t->max) return -1;
  if (len > UINT32_MAX) return EL_EINVAL;
  size_t cap = t->cap, lcap = t->cap;
  if (el_grow(&t->s, &cap, t->n + 1, sizeof *t->s) < 0 ||
      el_grow(&t->len, &lcap, t->n + 1, sizeof *t->len) < 0) {
    /* t->s may have grown alone: its capacity is the smaller one. */
    t->cap = cap < lcap ? cap : lcap;
    return EL_ENOMEM;
  }
  t->cap = cap;
  if (el_map_reserve(&t->index, t->n + 1) < 0) return EL_ENOMEM;
  char *copy = el_strndup(p, len);
  if (!copy) return EL_ENOMEM;
  t->s[t->n] = copy;
  t->len[t->n] = (uint32_t)len;
  (void)el_map_add(&t->index, h, (uint32_t)t->n); /* reserved: no failure */
  return (long)t->n++;
}
