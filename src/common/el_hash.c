/* el_hash.c: the hash function (el_hash.h). */
#include "el_hash.h"

#include <string.h>

uint64_t el_hash_bytes(const void *p, size_t len, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = EL__HASH_INIT ^ seed ^ (uint64_t)len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = el__hash_word(h, w);
  }
  if (i < len) {
    uint64_t w = 0;
    if (len >= 8) { /* the last eight bytes, overlapping */
      memcpy(&w, s + len - 8, 8);
    } else {
      for (size_t k = 0; k < len; k++) w |= (uint64_t)s[k] << (8 * k);
    }
    h = (h ^ w) * EL__HASH_MUL;
  }
  return el__hash_final(h);
}

uint64_t el_hash_str(const char *s, uint64_t seed) {
  return s ? el_hash_bytes(s, strlen(s), seed) : el_hash_bytes(NULL, 0, seed);
}
