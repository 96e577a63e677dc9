/* el_rng.h: fast random numbers for ids (trace and span ids): a
 * per-thread xoshiro256** generator seeded once from getrandom(2) (from
 * the clock and the state's address, through splitmix64, when the kernel
 * gives no entropy). One system call per id would cost more than the span
 * it names. Unique, not secret: never use it for keys or tokens. Depends
 * on libc (Linux getrandom) only. */
#ifndef EL_RNG_H
#define EL_RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The next 64 random bits of the calling thread's generator (seeded on
 * its first use). Thread: any; each thread has its own generator. */
uint64_t el_rng_next(void);

/* Fill buf[0..n) with random bytes from el_rng_next. Thread: any. */
void el_rng_bytes(void *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* EL_RNG_H */
