/* rp_heap.c: the Heap section's reducers (rp_internal.h).
 *
 * Gauges (HeapSize, HeapLive, BlocksSize, MemCurrent/Needed/Returned):
 * the value of a point is summed with the latest value of every other heap
 * capset (GHC has one), then goes into its column (min, max, last) and the
 * exact peak. HeapAllocated is a running total per capability: each
 * point's increase over the capability's previous one is spread evenly
 * over the columns of that interval (the first point's whole value from
 * the count's start, the RTS start), so a column's sum over its width is
 * the allocation rate.
 *
 * Heap censuses: samples are grouped into censuses by the census begins
 * the report's script passes (HEAP_PROF_SAMPLE_BEGIN, at event time): a
 * sample belongs to the latest begin at or before it. The processors'
 * points reach the reducer later than the begins (at export), so begins
 * queue until a sample passes them. A sample with no begin before it
 * starts a census of its own. Each band (label) keeps its peak and sum
 * over censuses exactly; each column keeps the census with the largest
 * total, reduced to its RP_CENSUS_KEEP largest bands plus the rest. */
#include <stdlib.h>
#include <string.h>

#include "../common/el_grow.h"
#include "rp_internal.h"

static void census_drop(void *el) {
  rp_census_t *c = el;
  el_free(c->ent);
}

/* Keep the census with the larger total; count both. */
static void census_merge(void *dst, void *src) {
  rp_census_t *d = dst, *s = src;
  if (s->ncensus == 0) return;
  if (d->ncensus == 0) {
    *d = *s;
    return;
  }
  uint32_t n = d->ncensus + s->ncensus;
  double mn = d->min_total < s->min_total ? d->min_total : s->min_total;
  if (s->total > d->total) {
    el_free(d->ent);
    *d = *s;
  } else {
    el_free(s->ent);
  }
  d->ncensus = n;
  d->min_total = mn;
}

void el__rp_heap_init(rp_heap_t *h, size_t columns) {
  memset(h, 0, sizeof *h);
  el__rp_cols_init(&h->g, columns, sizeof(rp_gauge_t), el__rp_gauge_merge,
                   NULL);
  el__rp_cols_init(&h->c, columns, sizeof(rp_census_t), census_merge,
                   census_drop);
  el__rp_strtab_init(&h->names, RP_MAX_BANDS);
}

void el__rp_heap_close(rp_heap_t *h) {
  el__rp_cols_close(&h->g);
  el__rp_cols_close(&h->c);
  for (size_t i = 0; i < h->names.n; i++) el_free(h->bands[i].detail);
  el__rp_strtab_close(&h->names);
  el_free(h->bands);
  el_free(h->cur);
  el_free(h->begins);
  memset(h, 0, sizeof *h);
}

static rp_gauge_t *gauge_at(rp_heap_t *h, int g, uint64_t t) {
  while (h->g.narr < RP_G_N)
    if (el__rp_cols_add_array(&h->g) < 0) return NULL;
  long i = el__rp_cols_fit(&h->g, t);
  return i < 0 ? NULL : el__rp_cols_el(&h->g, (size_t)g, (size_t)i);
}

void el__rp_heap_gauge(rp_heap_t *h, int g, uint64_t t, int64_t capset,
                       double v) {
  rp_gauge_stat_t *st = &h->st[g];
  size_t k = capset >= 0 && capset < RP_MAX_CAPSETS ? (size_t)capset : 0;
  st->last[k] = v;
  st->has[k] = true;
  double total = 0;
  for (size_t i = 0; i < RP_MAX_CAPSETS; i++)
    if (st->has[i]) total += st->last[i];
  st->points++;
  if (st->points == 1 || total > st->peak) {
    st->peak = total;
    st->peak_t = t;
  }
  rp_gauge_t *b = gauge_at(h, g, t);
  if (b) el__rp_gauge_add(b, t, total);
}

/* The first interval of a capability's count (or after a reset) runs
 * from the count's start (the RTS start) to its first point, unless
 * longer than this: a reader that joined a program running long before
 * (a socket), whose first value is then left out of the rate, as the web
 * view does (docs/web.md). */
#define RP_FIRST_INTERVAL_MAX_NS (60ull * 1000000000ull)

/* Where the interval ending at point (t, v) of capability k starts: the
 * previous point, or the count's start for a first point (or one after a
 * reset, when the count began after the previous point); 0 when there is
 * none to spread over. Sets *d to the bytes.
 * A count whose start (its session's RTS start) is at or after the
 * previous point is a new session's, even with a total above the
 * previous one (the next program allocated more before its first
 * sample): its bytes are its total, spread from its own start, not the
 * difference spread over the time between the programs. Within a
 * session the start only moves earlier (the clock's estimate tightens
 * towards the exact start, docs/lua-api.md §3), so it stays before the
 * session's points. */
static uint64_t alloc_interval(const rp_heap_t *h, size_t k, uint64_t t,
                               uint64_t start, double v, double *d) {
  bool new_count = start && h->alloc_t[k] && start >= h->alloc_t[k];
  if (h->alloc_has[k] && v >= h->alloc_last[k] && !new_count) {
    *d = v - h->alloc_last[k];
    return h->alloc_t[k] && h->alloc_t[k] < t ? h->alloc_t[k] : t;
  }
  /* A first point, or a total lower than before: a new count (a new
   * session), which began after the previous count's last point; a start
   * before that is not this count's (a log repeated with shifted times). */
  uint64_t after = h->alloc_has[k] ? h->alloc_t[k] : 0;
  *d = v;
  return start && start < t && start >= after &&
                 t - start <= RP_FIRST_INTERVAL_MAX_NS
             ? start
             : 0;
}

uint64_t el__rp_heap_alloc(rp_heap_t *h, uint64_t t, uint64_t start,
                           int64_t cap, double v) {
  size_t k = cap >= 0 && cap < RP_MAX_CAPS ? (size_t)cap : 0;
  double d;
  uint64_t t0 = alloc_interval(h, k, t, start, v, &d);
  h->alloc_last[k] = v;
  h->alloc_t[k] = t;
  h->alloc_has[k] = true;
  h->alloc_total += d;
  h->st[RP_G_ALLOC].points++;
  if (!t0 || !gauge_at(h, RP_G_ALLOC, t)) return 0;
  long i0, i1;
  if (el__rp_cols_fit_span(&h->g, t0, t, &i0, &i1) < 0) return 0;
  double span = (double)(t - t0);
  for (long i = i0; i <= i1; i++) {
    uint64_t cs = el__rp_cols_start(&h->g, (size_t)i);
    uint64_t ce = cs + el__rp_cols_width(&h->g);
    uint64_t a = t0 > cs ? t0 : cs, b = t < ce ? t : ce;
    double part = span > 0 ? d * (double)(b > a ? b - a : 0) / span : d;
    el__rp_gauge_add(el__rp_cols_el(&h->g, RP_G_ALLOC, (size_t)i), b, part);
  }
  return t0;
}

void el__rp_heap_census_begin(rp_heap_t *h, uint64_t t) {
  h->censuses_begun++;
  if (!t) return;
  if (h->bhead + h->bn == h->bcap) {
    if (h->bhead) {
      memmove(h->begins, h->begins + h->bhead, h->bn * sizeof *h->begins);
      h->bhead = 0;
    }
    if (h->bn == h->bcap) {
      if (h->bn >= 65536) { /* never matched: forget the oldest */
        h->bhead++;
        h->bn--;
      } else if (el_grow(&h->begins, &h->bcap, h->bn + 1, sizeof *h->begins) <
                 0) {
        return;
      }
    }
  }
  h->begins[h->bhead + h->bn++] = t;
}

static int cmp_entry_bytes(const void *a, const void *b) {
  const rp_entry_t *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
  return x->band < y->band ? -1 : x->band > y->band;
}

static int cmp_entry_band(const void *a, const void *b) {
  const rp_entry_t *x = a, *y = b;
  return x->band < y->band ? -1 : x->band > y->band;
}

/* Close the open census: band statistics, then its column. */
static void census_close(rp_heap_t *h) {
  if (!h->open) return;
  h->open = false;
  if (h->ncur == 0) return;
  h->censuses++;
  double total = 0;
  for (size_t i = 0; i < h->ncur; i++) {
    rp_band_t *b = &h->bands[h->cur[i].band];
    double v = h->cur[i].bytes;
    total += v;
    b->sum += v;
    b->n++;
    if (v > b->peak || b->n == 1) {
      b->peak = v;
      b->peak_t = h->open_t;
    }
  }
  rp_census_t c = {
      .t = h->open_t, .total = total, .min_total = total, .ncensus = 1};
  size_t keep = h->ncur;
  if (keep > RP_CENSUS_KEEP) {
    qsort(h->cur, h->ncur, sizeof *h->cur, cmp_entry_bytes);
    keep = RP_CENSUS_KEEP;
    for (size_t i = keep; i < h->ncur; i++) c.rest += h->cur[i].bytes;
  }
  c.ent = el_malloc(keep * sizeof *c.ent);
  if (!c.ent) {
    h->ncur = 0;
    return;
  }
  memcpy(c.ent, h->cur, keep * sizeof *c.ent);
  qsort(c.ent, keep, sizeof *c.ent, cmp_entry_band);
  c.nent = (uint32_t)keep;
  h->ncur = 0;
  if (h->c.narr == 0 && el__rp_cols_add_array(&h->c) < 0) {
    el_free(c.ent);
    return;
  }
  long i = el__rp_cols_fit(&h->c, c.t);
  if (i < 0) {
    el_free(c.ent);
    return;
  }
  census_merge(el__rp_cols_el(&h->c, 0, (size_t)i), &c);
}

/* The census begin a sample at t belongs to: the latest queued begin at
 * or before t (older ones are dropped), 0 when none. */
static uint64_t begin_of(rp_heap_t *h, uint64_t t) {
  while (h->bn >= 2 && h->begins[h->bhead + 1] <= t) {
    h->bhead++;
    h->bn--;
  }
  if (h->bn && h->begins[h->bhead] <= t) return h->begins[h->bhead];
  return 0;
}

static long band_id(rp_heap_t *h, const char *label, size_t len,
                    const char *detail) {
  long id = el__rp_strtab_intern(&h->names, label, len);
  if (id < 0) return id;
  size_t old = h->bands_cap;
  if (el_grow(&h->bands, &h->bands_cap, (size_t)id + 1, sizeof *h->bands) < 0)
    return EL_ENOMEM;
  memset(h->bands + old, 0, (h->bands_cap - old) * sizeof *h->bands);
  if (detail && !h->bands[id].detail) h->bands[id].detail = el_strdup(detail);
  return id;
}

int el__rp_heap_sample(rp_heap_t *h, uint64_t t, const char *label, size_t len,
                       double bytes, const char *detail) {
  if (!t) return 0;
  uint64_t b = begin_of(h, t);
  long id = band_id(h, label, len, detail);
  if (id < 0) {
    h->dropped_bands++;
    return id == -1 ? 0 : (int)id;
  }
  rp_band_t *bd = &h->bands[id];
  /* A later begin, or (with no begin) a band seen again, starts the next
   * census. */
  if (h->open && (b ? b > h->open_begin : bd->seq == h->seq)) census_close(h);
  if (!h->open) {
    h->open = true;
    h->open_begin = b ? b : t;
    h->open_t = t;
    h->seq++;
  }
  h->samples++;
  if (bd->seq == h->seq) { /* the same band twice in a census: summed */
    h->cur[bd->cur].bytes += bytes;
    return 0;
  }
  if (el_grow(&h->cur, &h->cur_cap, h->ncur + 1, sizeof *h->cur) < 0)
    return EL_ENOMEM;
  bd->seq = h->seq;
  bd->cur = (uint32_t)h->ncur;
  h->cur[h->ncur++] = (rp_entry_t){.band = (uint32_t)id, .bytes = bytes};
  return 0;
}

void el__rp_heap_finish(rp_heap_t *h) { census_close(h); }
