/* el_rng.c: the per-thread xoshiro256** generator (el_rng.h). */
#include "el_rng.h"

#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static _Thread_local uint64_t rng_s[4];
static _Thread_local bool rng_seeded;

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* splitmix64 from the time and the state's address: when getrandom gives
 * nothing. */
static void seed_weak(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
               (uint64_t)(uintptr_t)&rng_s;
  for (int i = 0; i < 4; i++) {
    uint64_t z = (x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    rng_s[i] = z ^ (z >> 31);
  }
}

static void seed(void) {
  size_t got = 0;
  uint8_t *b = (uint8_t *)rng_s;
  while (got < sizeof rng_s) {
    ssize_t r = getrandom(b + got, sizeof rng_s - got, 0);
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got < sizeof rng_s) seed_weak();
  if (!(rng_s[0] | rng_s[1] | rng_s[2] | rng_s[3])) rng_s[0] = 1;
  rng_seeded = true;
}

uint64_t el_rng_next(void) {
  if (!rng_seeded) seed();
  uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
  rng_s[2] ^= rng_s[0];
  rng_s[3] ^= rng_s[1];
  rng_s[1] ^= rng_s[2];
  rng_s[0] ^= rng_s[3];
  rng_s[2] ^= t;
  rng_s[3] = rotl(rng_s[3], 45);
  return r;
}

void el_rng_bytes(void *buf, size_t n) {
  unsigned char *b = buf;
  for (size_t got = 0; got < n; got += 8) {
    uint64_t r = el_rng_next();
    size_t k = n - got < 8 ? n - got : 8;
    memcpy(b + got, &r, k);
  }
}
