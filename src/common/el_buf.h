/* el_buf.h: the byte buffer of eventlog-live, for building strings and
 * byte keys: append bytes, strings, formatted text and decimal integers;
 * the content stays NUL-terminated. Depends on libc only.
 *
 * Out of memory is sticky: the failing append and every later one do
 * nothing and set `oom`, so a renderer appends freely and checks once at
 * the end (el_buf_take returns NULL then). A buffer may start on caller
 * storage (e.g. a stack array, el_buf_init_on) and moves to the heap
 * (el_malloc) only when that is too small.
 *
 * A zeroed el_buf_t (EL_BUF_INIT) is an empty buffer that owns nothing.
 * Thread: a buffer is used by one thread at a time. */
#ifndef EL_BUF_H
#define EL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct el_buf_s {
  char *p;       /* content (len bytes + NUL), NULL when
                                 nothing was ever appended */
  size_t len;    /* content bytes, without the NUL */
  size_t cap;    /* bytes at p */
  bool oom;      /* an append failed: the content is short */
  bool borrowed; /* p is the caller's storage (not freed) */
} el_buf_t;

#define EL_BUF_INIT \
  { 0 }

/* Start b empty on the caller's storage[0..size) (size >= 1), used until
 * an append needs more; storage must outlive b's use of it. Thread: any. */
void el_buf_init_on(el_buf_t *b, char *storage, size_t size);

/* Append s[0..n) (bytes; s may be NULL when n == 0). */
void el_buf_put(el_buf_t *b, const void *s, size_t n);
/* Append the NUL-terminated string s. */
void el_buf_puts(el_buf_t *b, const char *s);
/* Append printf-formatted text (vsnprintf: the C locale's formatting). */
void el_buf_printf(el_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append the decimal digits of v (el_fmt.h). */
void el_buf_put_u64(el_buf_t *b, uint64_t v);
void el_buf_put_i64(el_buf_t *b, int64_t v);

/* Make room for n more bytes (plus the NUL) and return where they go, or
 * NULL (oom set). Write at most n bytes there, then el_buf_commit them. */
char *el_buf_reserve(el_buf_t *b, size_t n);
/* Add n bytes written at el_buf_reserve's pointer to the content. */
void el_buf_commit(el_buf_t *b, size_t n);

/* Cut the content to its first len bytes (len <= b->len). */
void el_buf_truncate(el_buf_t *b, size_t len);
/* Empty the content and clear oom; the memory is kept for reuse. */
void el_buf_reset(el_buf_t *b);

/* The content as a NUL-terminated el_malloc'd string ("" when empty) that
 * the caller frees with el_free; b is left empty (owning nothing). NULL
 * when an append failed or memory runs out now (b is freed either way). */
char *el_buf_take(el_buf_t *b);

/* Free what b owns; b is left empty. */
void el_buf_free(el_buf_t *b);

#ifdef __cplusplus
}
#endif
#endif /* EL_BUF_H */
