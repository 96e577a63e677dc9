/* rp_json.c: a streaming JSON writer for the page's data (rp_internal.h).
 * Strings are escaped so that the document can sit inside an HTML
 * <script type="application/json"> element: '<', '>' and '&' become \u
 * escapes, so no "</script" or "<!--" can appear. Invalid UTF-8 becomes
 * U+FFFD (JSON text must be UTF-8: RFC 8259 §8.1). */
#include <math.h>
#include <string.h>

#include "rp_internal.h"

void el__rp_json_init(rp_json_t *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->first[0] = true;
}

/* Before a value: the comma that separates it from the previous one (not
 * after a key, which wrote its own). */
static void sep(rp_json_t *j) {
  if (!j->first[j->depth]) fputc(',', j->f);
  j->first[j->depth] = false;
}

static void open_(rp_json_t *j, int c) {
  sep(j);
  fputc(c, j->f);
  if (j->depth < 63) j->depth++;
  j->first[j->depth] = true;
}

void el__rp_json_obj(rp_json_t *j) { open_(j, '{'); }
void el__rp_json_arr(rp_json_t *j) { open_(j, '['); }

static void close_(rp_json_t *j, int c) {
  if (j->depth > 0) j->depth--;
  fputc(c, j->f);
}

void el__rp_json_end_obj(rp_json_t *j) { close_(j, '}'); }
void el__rp_json_end_arr(rp_json_t *j) { close_(j, ']'); }

void el__rp_json_key(rp_json_t *j, const char *k) {
  sep(j);
  fputc('"', j->f);
  el__rp_json_escape(j->f, k, strlen(k));
  fputs("\":", j->f);
  j->first[j->depth] = true; /* the value needs no comma */
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t utf8_len(const uint8_t *p, size_t n) {
  uint8_t c = p[0];
  size_t len;
  uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (len > n) return 0;
  uint32_t cp = c & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

void el__rp_json_escape(FILE *f, const char *s, size_t n) {
  const uint8_t *p = (const uint8_t *)s;
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c >= 0x80) {
      size_t len = utf8_len(p + i, n - i);
      if (len == 0) {
        fputs("\\ufffd", f);
        i++;
      } else {
        fwrite(p + i, 1, len, f);
        i += len;
      }
      continue;
    }
    switch (c) {
    case '"':
      fputs("\\\"", f);
      break;
    case '\\':
      fputs("\\\\", f);
      break;
    case '\n':
      fputs("\\n", f);
      break;
    case '\r':
      fputs("\\r", f);
      break;
    case '\t':
      fputs("\\t", f);
      break;
    case '<':
      fputs("\\u003c", f);
      break;
    case '>':
      fputs("\\u003e", f);
      break;
    case '&':
      fputs("\\u0026", f);
      break;
    default:
      if (c < 0x20 || c == 0x7f)
        fprintf(f, "\\u%04x", c);
      else
        fputc(c, f);
    }
    i++;
  }
}

void el__rp_json_strn(rp_json_t *j, const char *s, size_t n) {
  sep(j);
  fputc('"', j->f);
  el__rp_json_escape(j->f, s, n);
  fputc('"', j->f);
}

void el__rp_json_str(rp_json_t *j, const char *s) {
  if (!s) {
    el__rp_json_null(j);
    return;
  }
  el__rp_json_strn(j, s, strlen(s));
}

void el__rp_json_num(rp_json_t *j, double v) {
  sep(j);
  if (!isfinite(v))
    fputs("null", j->f);
  else if (v == floor(v) && fabs(v) < 9007199254740992.0)
    fprintf(j->f, "%.0f", v);
  else
    fprintf(j->f, "%.6g", v);
}

void el__rp_json_int(rp_json_t *j, int64_t v) {
  sep(j);
  fprintf(j->f, "%lld", (long long)v);
}

void el__rp_json_uint(rp_json_t *j, uint64_t v) {
  sep(j);
  fprintf(j->f, "%llu", (unsigned long long)v);
}

void el__rp_json_null(rp_json_t *j) {
  sep(j);
  fputs("null", j->f);
}

void el__rp_json_bool(rp_json_t *j, bool b) {
  sep(j);
  fputs(b ? "true" : "false", j->f);
}

void el__rp_json_secs(rp_json_t *j, double s) {
  sep(j);
  if (!isfinite(s)) {
    fputs("null", j->f);
    return;
  }
  char buf[64];
  int n = snprintf(buf, sizeof buf, "%.6f", s);
  while (n > 0 && buf[n - 1] == '0') n--;
  if (n > 0 && buf[n - 1] == '.') n--;
  if (n == 2 && buf[0] == '-' && buf[1] == '0') n = 1, buf[0] = '0';
  fwrite(buf, 1, (size_t)n, j->f);
}
