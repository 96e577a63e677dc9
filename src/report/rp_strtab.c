/* rp_strtab.c: interned strings with dense ids (rp_internal.h): band
 * names, profile symbols. Open addressing with linear probing over a
 * power-of-two table kept at most half full; FNV-1a hashes. */
#include <string.h>

#include "rp_internal.h"

void el__rp_strtab_init(rp_strtab_t *t, size_t max) {
  memset(t, 0, sizeof *t);
  t->max = max;
}

void el__rp_strtab_close(rp_strtab_t *t) {
  for (size_t i = 0; i < t->n; i++) el_free(t->s[i]);
  el_free(t->s);
  el_free(t->len);
  el_free(t->slots);
  memset(t, 0, sizeof *t);
}

static uint64_t hash(const char *p, size_t len) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < len; i++) {
    h ^= (uint8_t)p[i];
    h *= 1099511628211u;
  }
  return h ^ (h >> 29);
}

long el__rp_strtab_find(const rp_strtab_t *t, const char *p, size_t len) {
  if (!t->nslots) return -1;
  size_t m = t->nslots - 1, i = (size_t)hash(p, len) & m;
  while (t->slots[i]) {
    uint32_t id = t->slots[i] - 1;
    if (t->len[id] == len && memcmp(t->s[id], p, len) == 0) return id;
    i = (i + 1) & m;
  }
  return -1;
}

static int grow(rp_strtab_t *t) {
  size_t ns = t->nslots ? t->nslots * 2 : 64;
  uint32_t *slots = el_calloc(ns, sizeof *slots);
  if (!slots) return EL_ENOMEM;
  for (size_t id = 0; id < t->n; id++) {
    size_t i = (size_t)hash(t->s[id], t->len[id]) & (ns - 1);
    while (slots[i]) i = (i + 1) & (ns - 1);
    slots[i] = (uint32_t)id + 1;
  }
  el_free(t->slots);
  t->slots = slots;
  t->nslots = ns;
  return 0;
}

long el__rp_strtab_intern(rp_strtab_t *t, const char *p, size_t len) {
  long id = el__rp_strtab_find(t, p, len);
  if (id >= 0) return id;
  if (t->n >= t->max) return -1;
  if ((t->n + 1) * 2 > t->nslots && grow(t) < 0) return EL_ENOMEM;
  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 32;
    char **ns = el_realloc(t->s, ncap * sizeof *ns);
    if (!ns) return EL_ENOMEM;
    t->s = ns;
    uint32_t *nl = el_realloc(t->len, ncap * sizeof *nl);
    if (!nl) return EL_ENOMEM;
    t->len = nl;
    t->cap = ncap;
  }
  char *copy = el_strndup(p, len);
  if (!copy) return EL_ENOMEM;
  t->s[t->n] = copy;
  t->len[t->n] = (uint32_t)len;
  size_t m = t->nslots - 1, i = (size_t)hash(p, len) & m;
  while (t->slots[i]) i = (i + 1) & m;
  t->slots[i] = (uint32_t)t->n + 1;
  return (long)t->n++;
}
