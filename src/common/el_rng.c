/* el_rng.c: the per-thread xoshiro256** generator's state and seeding
 * (el_rng.h; the step is inline there). */
#include "el_rng.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

_Thread_local uint64_t el__rng_s[4];

/* splitmix64 from the time and the state's address: when getrandom gives
 * nothing. */
static void seed_weak(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
               (uint64_t)(uintptr_t)&el__rng_s;
  for (int i = 0; i < 4; i++) {
    uint64_t z = (x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    el__rng_s[i] = z ^ (z >> 31);
  }
}

void el__rng_seed(void) {
  uint64_t *s = el__rng_s;
  size_t got = 0;
  uint8_t *b = (uint8_t *)s;
  while (got < sizeof el__rng_s) {
    ssize_t r = getrandom(b + got, sizeof el__rng_s - got, 0);
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got < sizeof el__rng_s) seed_weak();
  if (!(s[0] | s[1] | s[2] | s[3])) s[0] = 1;
}

void el_rng_bytes(void *buf, size_t n) {
  unsigned char *b = buf;
  for (size_t got = 0; got < n; got += 8) {
    uint64_t r = el_rng_next();
    size_t k = n - got < 8 ? n - got : 8;
    memcpy(b + got, &r, k);
  }
}
