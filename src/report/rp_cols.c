/* rp_cols.c: columns of buckets over a time axis that merge as the range
 * grows (rp_internal.h), and the gauge bucket.
 *
 * Bucket indexes are absolute: the bucket of Unix time t is t >> shift.
 * When a new time does not fit in `max` buckets beside those in use, the
 * width doubles (shift + k) until it does and buckets whose indexes agree
 * on all but the k low bits merge. So every array holds at most `max`
 * buckets and, once the range is wide enough, at least max/2 - 1: the
 * page keeps a resolution of one bucket per pixel column or better. */
#include <string.h>

#include "../common/el_grow.h"
#include "rp_internal.h"

void el__rp_cols_init(rp_cols_t *c, size_t max, size_t elsize,
                      rp_merge_fn merge, rp_drop_fn drop) {
  memset(c, 0, sizeof *c);
  c->max = max < 2 ? 2 : max;
  c->elsize = elsize;
  c->merge = merge;
  c->drop = drop;
  c->shift = 10; /* 1.024 us: grows with the range */
}

void el__rp_cols_close(rp_cols_t *c) {
  for (size_t a = 0; a < c->narr; a++) {
    if (c->drop)
      for (size_t i = 0; i < c->n; i++) c->drop(el__rp_cols_el(c, a, i));
    el_free(c->arr[a]);
  }
  el_free(c->arr);
  memset(c, 0, sizeof *c);
}

int el__rp_cols_add_array(rp_cols_t *c) {
  if (el_grow(&c->arr, &c->arr_cap, c->narr + 1, sizeof *c->arr) < 0)
    return EL_ENOMEM;
  uint8_t *p = el_calloc(c->max, c->elsize);
  if (!p) return EL_ENOMEM;
  c->arr[c->narr] = p;
  return (int)c->narr++;
}

/* Merge buckets into groups of 2^k, in place. */
void el__rp_cols_coarsen(rp_cols_t *c, unsigned k) {
  if (k == 0) return;
  if (k > 62) k = 62;
  int64_t nlo = c->lo >> k;
  size_t nn = 0;
  for (size_t a = 0; a < c->narr; a++) {
    long last = -1;
    for (size_t i = 0; i < c->n; i++) {
      long j = (long)(((c->lo + (int64_t)i) >> k) - nlo);
      void *src = el__rp_cols_el(c, a, i);
      void *dst = el__rp_cols_el(c, a, (size_t)j);
      if (j == last) {
        c->merge(dst, src);
      } else {
        /* j <= i: moving down never overwrites an unread bucket */
        if (dst != src) memcpy(dst, src, c->elsize);
        last = j;
      }
      if ((size_t)j != i) memset(src, 0, c->elsize);
    }
    nn = (size_t)last + 1;
  }
  if (c->narr == 0 && c->n)
    nn = (size_t)(((c->lo + (int64_t)c->n - 1) >> k) - nlo) + 1;
  c->lo = nlo;
  c->n = nn;
  c->shift += k;
}

long el__rp_cols_fit(rp_cols_t *c, uint64_t t) {
  long i0, i1;
  if (el__rp_cols_fit_span(c, t, t, &i0, &i1) < 0) return -1;
  return i0;
}

int el__rp_cols_fit_span(rp_cols_t *c, uint64_t s, uint64_t e, long *i0,
                         long *i1) {
  if (s == 0) return -1;
  if (e < s) e = s;
  if (c->n == 0) {
    /* Start as fine as the span allows. */
    while (((e >> c->shift) - (s >> c->shift)) + 1 > c->max) c->shift++;
    c->lo = (int64_t)(s >> c->shift);
    c->n = 1;
  }
  int64_t lo = c->lo, hi = c->lo + (int64_t)c->n - 1;
  int64_t a = (int64_t)(s >> c->shift), b = (int64_t)(e >> c->shift);
  if (a < lo) lo = a;
  if (b > hi) hi = b;
  unsigned k = 0;
  while (((hi >> k) - (lo >> k)) + 1 > (int64_t)c->max) k++;
  if (k) {
    el__rp_cols_coarsen(c, k);
    a = (int64_t)(s >> c->shift);
    b = (int64_t)(e >> c->shift);
  }
  if (a < c->lo) {
    size_t d = (size_t)(c->lo - a);
    for (size_t x = 0; x < c->narr; x++) {
      memmove(c->arr[x] + d * c->elsize, c->arr[x], c->n * c->elsize);
      memset(c->arr[x], 0, d * c->elsize);
    }
    c->lo = a;
    c->n += d;
  }
  if (b >= c->lo + (int64_t)c->n) c->n = (size_t)(b - c->lo) + 1;
  *i0 = (long)(a - c->lo);
  *i1 = (long)(b - c->lo);
  return 0;
}

int el__rp_cols_set_max(rp_cols_t *c, size_t max) {
  if (max < 2) max = 2;
  if (max >= c->max) return 0;
  unsigned k = 0;
  if (c->n) {
    int64_t lo = c->lo, hi = c->lo + (int64_t)c->n - 1;
    while (((hi >> k) - (lo >> k)) + 1 > (int64_t)max) k++;
  }
  el__rp_cols_coarsen(c, k);
  for (size_t a = 0; a < c->narr; a++) {
    uint8_t *p = el_realloc(c->arr[a], max * c->elsize);
    if (p) c->arr[a] = p; /* shrinking: the old block is fine too */
  }
  c->max = max;
  return 0;
}

/* {====== gauge buckets ======} */

void el__rp_gauge_add(rp_gauge_t *g, uint64_t t, double v) {
  if (g->n == 0) {
    g->min = g->max = v;
    g->t_max = t;
    g->sum = 0;
  } else {
    if (v < g->min) g->min = v;
    if (v > g->max) {
      g->max = v;
      g->t_max = t;
    }
  }
  g->sum += v;
  if (g->n == 0 || t >= g->t_last) {
    g->last = v;
    g->t_last = t;
  }
  g->n++;
}

void el__rp_gauge_merge(void *dst, void *src) {
  rp_gauge_t *d = dst, *s = src;
  if (s->n == 0) return;
  if (d->n == 0) {
    *d = *s;
    return;
  }
  if (s->min < d->min) d->min = s->min;
  if (s->max > d->max) {
    d->max = s->max;
    d->t_max = s->t_max;
  }
  d->sum += s->sum;
  if (s->t_last >= d->t_last) {
    d->last = s->last;
    d->t_last = s->t_last;
  }
  d->n += s->n;
}
