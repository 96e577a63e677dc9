/* web_text.c: the text helpers of the Prometheus and JSON renderers:
 * escaping (with invalid UTF-8 replaced), numbers, attribute values as
 * the OpenTelemetry Collector stringifies them. Thread: any (pure, but
 * for web_now_ms). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/el_utf8.h"
#include "web_internal.h"

void web_put_esc(el_buf_t *b, const char *s, size_t n, int mode) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    unsigned char c = u[i];
    size_t k = el_utf8_len(u + i, n - i);
    const char *rep = NULL;
    char tmp[8];
    if (k == 0)
      rep = "\xEF\xBF\xBD";
    else if (c == '\\')
      rep = "\\\\";
    else if (c == '\n')
      rep = "\\n";
    else if (c == '"' && mode != WEB_ESC_HELP)
      rep = "\\\"";
    else if (c < 0x20 && mode == WEB_ESC_JSON) {
      snprintf(tmp, sizeof tmp, "\\u%04x", c);
      rep = tmp;
    }
    if (rep) {
      el_buf_put(b, s + run, i - run);
      el_buf_puts(b, rep);
      i += k ? k : 1;
      run = i;
    } else {
      i += k;
    }
  }
  el_buf_put(b, s + run, n - run);
}

void web_put_json_str(el_buf_t *b, const char *s, size_t n) {
  if (!s) {
    el_buf_puts(b, "null");
    return;
  }
  el_buf_put(b, "\"", 1);
  web_put_esc(b, s, n, WEB_ESC_JSON);
  el_buf_put(b, "\"", 1);
}

void web_put_json_cstr(el_buf_t *b, const char *s) {
  web_put_json_str(b, s, s ? strlen(s) : 0);
}

void web_fmt_double(double v, char *out, size_t size, bool json) {
  if (isnan(v)) {
    snprintf(out, size, json ? "null" : "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(out, size, json ? "null" : (v > 0 ? "+Inf" : "-Inf"));
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, size, "%.*g", prec, v);
    if (strtod(out, NULL) == v) return;
  }
}

void web_put_num(el_buf_t *b, double v) {
  char num[64];
  web_fmt_double(v, num, sizeof num, true);
  el_buf_puts(b, num);
}

void web_attr_value(const el_tm_attr_t *a, el_buf_t *b) {
  char tmp[64];
  switch (a->type) {
  case EL_TM_STR:
    el_buf_put(b, a->v.s.p, a->v.s.p ? a->v.s.len : 0);
    break;
  case EL_TM_INT:
    el_buf_put_i64(b, a->v.i);
    break;
  case EL_TM_DOUBLE:
    web_fmt_double(a->v.d, tmp, sizeof tmp, false);
    el_buf_puts(b, tmp);
    break;
  case EL_TM_BOOL:
    el_buf_puts(b, a->v.b ? "true" : "false");
    break;
  case EL_TM_STRLIST:
    el_buf_puts(b, "[");
    for (size_t k = 0; k < a->v.list.n; k++) {
      if (k) el_buf_puts(b, ",");
      const el_strview_t *it = &a->v.list.items[k];
      web_put_json_str(b, it->p ? it->p : "", it->p ? it->len : 0);
    }
    el_buf_puts(b, "]");
    break;
  }
}

double web_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
