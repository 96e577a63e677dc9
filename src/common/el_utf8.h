/* el_utf8.h: UTF-8 validation, the one decoder of eventlog-live's text
 * outputs (OTLP strings, JSON, Prometheus labels, `show`). Valid means
 * RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
 * above U+10FFFF, no truncated sequence. NUL is a valid one-byte
 * sequence (callers that cannot carry it check for it). Depends on libc
 * only. */
#ifndef EL_UTF8_H
#define EL_UTF8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The length (1 to 4) of the valid UTF-8 sequence that starts s[0..n),
 * or 0 when the bytes there do not start one (n == 0 included).
 * Thread: any (pure). */
size_t el_utf8_len(const void *s, size_t n);

/* The code point of the valid sequence s[0..len) (len from el_utf8_len).
 * Thread: any (pure). */
uint32_t el_utf8_decode(const void *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* EL_UTF8_H */
