/* el_slow_dns.c: an LD_PRELOAD library for tests that makes the name
 * lookup of one host name hang, as a resolver that gets no answer does
 * (getaddrinfo then waits out its timeouts, 10 s and more).
 *
 * EL_SLOW_DNS_NAME=NAME EL_SLOW_DNS_MS=N: getaddrinfo of a name that
 * contains NAME sleeps N ms (default 8000), then fails with EAI_AGAIN;
 * every other name is resolved as usual. Used by
 * tests/e2e/test_otlp_limits.sh (the OTLP/HTTP exporter's shutdown while
 * the collector's name is being resolved, h87). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*gai_fn)(const char *, const char *, const struct addrinfo *,
                      struct addrinfo **);

int getaddrinfo(const char *node, const char *service,
                const struct addrinfo *hints, struct addrinfo **res) {
  static gai_fn real;
  if (!real) real = (gai_fn)dlsym(RTLD_NEXT, "getaddrinfo");
  const char *name = getenv("EL_SLOW_DNS_NAME"), *ms = getenv("EL_SLOW_DNS_MS");
  if (node && name && *name && strstr(node, name)) {
    long n = ms ? atol(ms) : 8000;
    struct timespec ts = {n / 1000, (n % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
      ;
    return EAI_AGAIN;
  }
  return real ? real(node, service, hints, res) : EAI_FAIL;
}
