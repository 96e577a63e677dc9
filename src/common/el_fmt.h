/* el_fmt.h: the one integer formatter of eventlog-live: decimal and
 * hexadecimal digits written straight into a caller's buffer, with no
 * locale, no NUL and no length limit checks (the caller reserves room).
 * The decimal form writes two digits per division and is inline: `show`
 * formats several numbers per event with it. Depends on libc only.
 *
 * Each function writes at w and returns the end of what it wrote. */
#ifndef EL_FMT_H
#define EL_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes the callers must have at w: el_fmt_u64 stores a full 20 bytes
 * (the digits of UINT64_MAX) whatever the value, so that its copy has a
 * constant size; el_fmt_i64 one more for the sign; el_fmt_x64 16. */
#define EL_FMT_U64_ROOM 20
#define EL_FMT_I64_ROOM 21
#define EL_FMT_X64_ROOM 16

extern const char el__fmt_digits2[201]; /* "00" "01" ... "99" */

/* The decimal digits of v. w: EL_FMT_U64_ROOM writable bytes; those past
 * the returned end are scratch (overwritten with junk). Thread: any. */
static inline char *el_fmt_u64(char *w, uint64_t v) {
  char tmp[40];
  char *e = tmp + 20, *p = e;
  while (v >= 100) {
    unsigned r = (unsigned)(v % 100);
    v /= 100;
    p -= 2;
    memcpy(p, el__fmt_digits2 + 2 * r, 2);
  }
  if (v >= 10) {
    p -= 2;
    memcpy(p, el__fmt_digits2 + 2 * v, 2);
  } else {
    *--p = (char)('0' + v);
  }
  memcpy(w, p, 20); /* p >= tmp and p + 20 <= tmp + 40 */
  return w + (e - p);
}

/* The decimal digits of v, with a '-' when negative (INT64_MIN
 * included). w: EL_FMT_I64_ROOM writable bytes. Thread: any. */
static inline char *el_fmt_i64(char *w, int64_t v) {
  if (v >= 0) return el_fmt_u64(w, (uint64_t)v);
  *w++ = '-';
  return el_fmt_u64(w, (uint64_t)0 - (uint64_t)v);
}

/* The lowercase hexadecimal digits of v, no prefix, no leading zeros
 * ("0" for 0). w: EL_FMT_X64_ROOM writable bytes. Thread: any. */
char *el_fmt_x64(char *w, uint64_t v);

/* Each byte of p[0..n) as two lowercase hexadecimal digits (trace and
 * span ids, binary payloads). w: 2 * n writable bytes. Thread: any. */
char *el_fmt_hex(char *w, const void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* EL_FMT_H */
