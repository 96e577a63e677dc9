/* el_rng.h: fast random numbers for ids (trace and span ids): a
 * per-thread xoshiro256** generator seeded once from getrandom(2) (from
 * the clock and the state's address, through splitmix64, when the kernel
 * gives no entropy). One system call per id would cost more than the span
 * it names. Unique, not secret: never use it for keys or tokens. Depends
 * on libc (Linux getrandom) only. The step is inline (one per native
 * span); the seeding is in el_rng.c. */
#ifndef EL_RNG_H
#define EL_RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread's xoshiro256** state; all zero until seeded (a
 * seeded state is never all zero, and the step keeps it so). Internal:
 * read and written by el_rng_next only. */
extern _Thread_local uint64_t el__rng_s[4];

/* Seed the calling thread's el__rng_s (getrandom, else the clock). */
void el__rng_seed(void);

static inline uint64_t el__rng_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

/* The next 64 random bits of the calling thread's generator (seeded on
 * its first use). Thread: any; each thread has its own generator. */
static inline uint64_t el_rng_next(void) {
  uint64_t *s = el__rng_s;
  if (!(s[0] | s[1] | s[2] | s[3])) el__rng_seed();
  uint64_t r = el__rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = el__rng_rotl(s[3], 45);
  return r;
}

/* Fill buf[0..n) with random bytes from el_rng_next. Thread: any. */
void el_rng_bytes(void *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* EL_RNG_H */
