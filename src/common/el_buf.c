/* el_buf.c: the byte buffer (el_buf.h). */
#include "el_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "el_common.h"
#include "el_fmt.h"
#include "el_grow.h"

#define BUF_MIN 256 /* bytes of a first heap buffer */

void el_buf_init_on(el_buf_t *b, char *storage, size_t size) {
  *b = (el_buf_t){.p = storage, .cap = size, .borrowed = true};
  storage[0] = '\0';
}

/* Room for n more bytes and the NUL; false (oom set) when out of memory. */
static bool room(el_buf_t *b, size_t n) {
  if (b->oom) return false;
  if (n > SIZE_MAX - b->len - 1) {
    b->oom = true;
    return false;
  }
  size_t need = b->len + n + 1;
  if (need <= b->cap) return true;
  if (need < BUF_MIN) need = BUF_MIN;
  char *np = b->borrowed ? NULL : b->p;
  size_t ncap = b->borrowed ? 0 : b->cap;
  if (el_grow(&np, &ncap, need, 1) < 0) {
    b->oom = true;
    return false;
  }
  if (b->borrowed) memcpy(np, b->p, b->len + 1);
  b->p = np;
  b->cap = ncap;
  b->borrowed = false;
  return true;
}

char *el_buf_reserve(el_buf_t *b, size_t n) {
  return room(b, n) ? b->p + b->len : NULL;
}

void el_buf_commit(el_buf_t *b, size_t n) {
  el_assert(b->len + n < b->cap);
  b->len += n;
  b->p[b->len] = '\0';
}

void el_buf_put(el_buf_t *b, const void *s, size_t n) {
  if (!room(b, n)) return;
  if (n) memcpy(b->p + b->len, s, n);
  el_buf_commit(b, n);
}

void el_buf_puts(el_buf_t *b, const char *s) { el_buf_put(b, s, strlen(s)); }

void el_buf_printf(el_buf_t *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    el_buf_put(b, tmp, (size_t)n);
    return;
  }
  if (!room(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void el_buf_put_u64(el_buf_t *b, uint64_t v) {
  char tmp[EL_FMT_U64_ROOM];
  el_buf_put(b, tmp, (size_t)(el_fmt_u64(tmp, v) - tmp));
}

void el_buf_put_i64(el_buf_t *b, int64_t v) {
  char tmp[EL_FMT_I64_ROOM];
  el_buf_put(b, tmp, (size_t)(el_fmt_i64(tmp, v) - tmp));
}

void el_buf_truncate(el_buf_t *b, size_t len) {
  el_assert(len <= b->len);
  b->len = len;
  if (b->p) b->p[len] = '\0';
}

void el_buf_reset(el_buf_t *b) {
  b->len = 0;
  b->oom = false;
  if (b->p) b->p[0] = '\0';
}

char *el_buf_take(el_buf_t *b) {
  char *p = NULL;
  if (!b->oom)
    p = b->borrowed || !b->p ? el_strndup(b->p ? b->p : "", b->len) : b->p;
  if (p != b->p) el_buf_free(b); /* else the memory is handed out */
  *b = (el_buf_t)EL_BUF_INIT;
  return p;
}

void el_buf_free(el_buf_t *b) {
  if (!b->borrowed) el_free(b->p);
  *b = (el_buf_t)EL_BUF_INIT;
}
