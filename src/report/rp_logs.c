/* rp_logs.c: the first and the last `keep` log records (rp_internal.h).
 * Bodies longer than RP_BODY_MAX bytes are cut (at a character
 * boundary). Memory: at most 2 * keep records. */
#include <string.h>

#include "rp_internal.h"

int el__rp_logs_init(rp_logs_t *l, size_t keep) {
  memset(l, 0, sizeof *l);
  l->keep = keep;
  l->head = el_calloc(keep, sizeof *l->head);
  l->ring = el_calloc(keep, sizeof *l->ring);
  if (!l->head || !l->ring) {
    el__rp_logs_close(l);
    return EL_ENOMEM;
  }
  return 0;
}

void el__rp_logs_close(rp_logs_t *l) {
  for (size_t i = 0; l->head && i < l->nhead; i++) el_free(l->head[i].body);
  for (size_t i = 0; l->ring && i < l->nring; i++) el_free(l->ring[i].body);
  el_free(l->head);
  el_free(l->ring);
  memset(l, 0, sizeof *l);
}

void el__rp_logs_add(rp_logs_t *l, uint64_t t, int64_t cap, int kind,
                     const char *body, size_t len) {
  if (!l->keep) return;
  l->total++;
  if (len > RP_BODY_MAX) {
    len = RP_BODY_MAX;
    while (len > 0 && ((uint8_t)body[len] & 0xc0) == 0x80) len--;
  }
  char *copy = el_strndup(body, len);
  if (!copy) return;
  rp_log_t r = {.t = t, .cap = cap, .kind = kind, .body = copy};
  if (l->nhead < l->keep) {
    l->head[l->nhead++] = r;
    return;
  }
  if (l->nring < l->keep) {
    l->ring[l->nring++] = r;
    return;
  }
  el_free(l->ring[l->pos].body);
  l->ring[l->pos] = r;
  l->pos = (l->pos + 1) % l->keep;
}

size_t el__rp_logs_count(const rp_logs_t *l) { return l->nhead + l->nring; }

const rp_log_t *el__rp_logs_at(const rp_logs_t *l, size_t i) {
  if (i < l->nhead) return &l->head[i];
  i -= l->nhead;
  if (l->nring < l->keep) return &l->ring[i];
  return &l->ring[(l->pos + i) % l->keep];
}

/* {====== markers per column ======} */

static void mark_drop(void *el) {
  rp_mark_t *m = el;
  el_free(m->text);
}

/* Keep the earlier marker's text; count both. */
static void mark_merge(void *dst, void *src) {
  rp_mark_t *d = dst, *s = src;
  if (!s->n) return;
  if (!d->n) {
    *d = *s;
    return;
  }
  uint32_t n = d->n + s->n;
  if (s->t < d->t) {
    el_free(d->text);
    *d = *s;
  } else {
    el_free(s->text);
  }
  d->n = n;
}

void el__rp_marks_init(rp_cols_t *c, size_t columns) {
  el__rp_cols_init(c, columns, sizeof(rp_mark_t), mark_merge, mark_drop);
}

void el__rp_marks_add(rp_cols_t *c, uint64_t t, const char *text, size_t len) {
  if (c->narr == 0 && el__rp_cols_add_array(c) < 0) return;
  long i = el__rp_cols_fit(c, t);
  if (i < 0) return;
  if (len > 200) { /* cut at a character boundary */
    len = 200;
    while (len > 0 && ((uint8_t)text[len] & 0xc0) == 0x80) len--;
  }
  char *copy = el_strndup(text, len);
  if (!copy) return;
  rp_mark_t m = {.n = 1, .t = t, .text = copy};
  mark_merge(el__rp_cols_el(c, 0, (size_t)i), &m);
}
