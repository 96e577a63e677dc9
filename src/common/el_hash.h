/* el_hash.h: the one hash function of eventlog-live, for hash tables
 * (el_map.h) and anything else that needs to spread keys. Not
 * cryptographic and not stable across versions: never store or send a
 * hash, and never let an output order depend on one. Depends on libc only.
 *
 * It reads eight bytes per multiply (a multiply-xorshift per 64-bit word,
 * then a final avalanche), so short keys cost a few cycles. */
#ifndef EL_HASH_H
#define EL_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EL__HASH_INIT 0x243f6a8885a308d3u /* digits of pi */
#define EL__HASH_MUL 0x9e3779b97f4a7c15u  /* 2^64 / golden ratio */
#define EL__HASH_FIN 0xd6e8feb86659fd93u

static inline uint64_t el__hash_word(uint64_t h, uint64_t w) {
  h = (h ^ w) * EL__HASH_MUL;
  return h ^ (h >> 29);
}

static inline uint64_t el__hash_final(uint64_t h) {
  h ^= h >> 32;
  h *= EL__HASH_FIN;
  return h ^ (h >> 32);
}

/* Hash of the bytes p[0..len) (p may be NULL when len == 0), varied by
 * seed: hashes of several parts chain through it, e.g.
 * el_hash_bytes(a, na, el_hash_bytes(b, nb, 0)). Every bit of the result
 * depends on every input bit; take the low bits for a table slot.
 * Thread: any (pure). */
uint64_t el_hash_bytes(const void *p, size_t len, uint64_t seed);

/* Hash of a NUL-terminated string (el_hash_bytes of its bytes, without the
 * NUL). s may be NULL: hashed as "". Thread: any (pure). */
uint64_t el_hash_str(const char *s, uint64_t seed);

/* Hash of one 64-bit integer key: the same value as
 * el_hash_bytes(&k, 8, 0), computed inline (integer-keyed tables on hot
 * paths). Thread: any (pure). */
static inline uint64_t el_hash_u64(uint64_t k) {
  return el__hash_final(el__hash_word(EL__HASH_INIT ^ 8u, k));
}

#ifdef __cplusplus
}
#endif
#endif /* EL_HASH_H */
