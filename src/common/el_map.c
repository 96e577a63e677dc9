/* el_map.c: the open-addressing hash table (el_map.h). */
#include "el_map.h"

#include <string.h>

#include "el_common.h"

#define MAP_MIN 16 /* slots of a new table */

static void insert(el_map_slot_t *slots, size_t cap, uint64_t key,
                   uint32_t val1) {
  size_t mask = cap - 1, i = (size_t)el_hash_u64(key) & mask;
  while (slots[i].val1) i = (i + 1) & mask;
  slots[i].key = key;
  slots[i].val1 = val1;
}

int el_map_reserve(el_map_t *m, size_t n) {
  if (n > SIZE_MAX / 4) return EL_ENOMEM;
  size_t ncap = m->cap ? m->cap : MAP_MIN;
  while (n * 2 > ncap) ncap *= 2;
  if (ncap == m->cap) return 0;
  el_map_slot_t *ns = el_calloc(ncap, sizeof *ns);
  if (!ns) return EL_ENOMEM;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].val1) insert(ns, ncap, m->slots[i].key, m->slots[i].val1);
  el_free(m->slots);
  m->slots = ns;
  m->cap = ncap;
  return 0;
}

int el_map_add(el_map_t *m, uint64_t key, uint32_t val) {
  if (val == EL_MAP_NONE) return EL_EINVAL;
  if (el_map_reserve(m, m->n + 1) < 0) return EL_ENOMEM;
  insert(m->slots, m->cap, key, val + 1);
  m->n++;
  return 0;
}

int el_map_put(el_map_t *m, uint64_t key, uint32_t val) {
  if (val == EL_MAP_NONE) return EL_EINVAL;
  if (m->cap) {
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)el_hash_u64(key) & mask; m->slots[i].val1;
         i = (i + 1) & mask)
      if (m->slots[i].key == key) {
        m->slots[i].val1 = val + 1;
        return 0;
      }
  }
  return el_map_add(m, key, val);
}

void el_map_clear(el_map_t *m) {
  if (m->n) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->n = 0;
}

void el_map_free(el_map_t *m) {
  el_free(m->slots);
  m->slots = NULL;
  m->cap = m->n = 0;
}
