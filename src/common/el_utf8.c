/* el_utf8.c: UTF-8 validation and decoding (el_utf8.h). */
#include "el_utf8.h"

size_t el_utf8_len(const void *s, size_t n) {
  const unsigned char *u = s;
  if (n == 0) return 0;
  unsigned c = u[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned lo = 0x80, hi = 0xbf; /* range of the second byte */
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0; /* overlong */
    if (c == 0xed) hi = 0x9f; /* surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90; /* overlong */
    if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
  } else {
    return 0;
  }
  if (n < len || u[1] < lo || u[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (u[i] < 0x80 || u[i] > 0xbf) return 0;
  return len;
}

uint32_t el_utf8_decode(const void *s, size_t len) {
  const unsigned char *u = s;
  if (len <= 1) return u[0];
  uint32_t cp = u[0] & (0x7fu >> len);
  for (size_t i = 1; i < len; i++) cp = (cp << 6) | (u[i] & 0x3fu);
  return cp;
}
