/* el_fmt.c: integer formatting (el_fmt.h). */
#include "el_fmt.h"

const char el__fmt_digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343"
    "53637383940414243444546474849505152535455565758596061626364656667686970"
    "71727374757677787980818283848586878889909192939495969798"
    "99";

static const char hexdig[] = "0123456789abcdef";

char *el_fmt_x64(char *w, uint64_t v) {
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = hexdig[v & 15];
    v >>= 4;
  } while (v);
  while (n) *w++ = tmp[--n];
  return w;
}

char *el_fmt_hex(char *w, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    *w++ = hexdig[b[i] >> 4];
    *w++ = hexdig[b[i] & 15];
  }
  return w;
}
