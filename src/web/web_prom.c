/* web_prom.c: GET /metrics: the latest value of every series in the
 * Prometheus text format 0.0.4 or OpenMetrics 1.0 (docs/web.md
 * "/metrics"). Thread: HTTP threads, under el_web_t.mu. */
#include <stdio.h>
#include <string.h>

#include "web_internal.h"

void web_model_prom(el_web_t *w, bool om, el_buf_t *out) {
  char num[64];
  w->scrapes++;
  for (size_t k = 0; k < w->nfam; k++) {
    web_family_t *f = w->fam[k];
    if (f->n == 0) continue;
    bool counter = f->sum && f->monotonic;
    /* OpenMetrics names a counter family without its _total suffix. */
    size_t plen = strlen(f->prom);
    size_t flen =
        om && counter && plen > 6 && !strcmp(f->prom + plen - 6, "_total")
            ? plen - 6
            : plen;
    if (f->help[0]) {
      el_buf_printf(out, "# HELP %.*s ", (int)flen, f->prom);
      web_put_esc(out, f->help, strlen(f->help),
                  om ? WEB_ESC_PROM : WEB_ESC_HELP);
      el_buf_puts(out, "\n");
    }
    el_buf_printf(out, "# TYPE %.*s %s\n", (int)flen, f->prom,
                  counter ? "counter" : "gauge");
    for (size_t i = 0; i < f->n; i++) {
      web_series_t *s = f->s[i];
      if (!s->has || s->stale) continue;
      if (s->is_int)
        snprintf(num, sizeof num, "%lld", (long long)s->ival);
      else
        web_fmt_double(s->dval, num, sizeof num, false);
      el_buf_printf(out, "%s%s %s\n", f->prom, s->key, num);
    }
  }
  if (om) el_buf_puts(out, "# EOF\n");
}
