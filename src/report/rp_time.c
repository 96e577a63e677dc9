/* rp_time.c: the Time section's reducers (rp_internal.h), fed by the
 * capability usage spans of the traces processor `capability_usage`
 * (el.cap_usage{spans=}, spec reference-behaviour.md §5.2.3): one span per
 * Mutator interval (a thread running on a capability) and per GC interval
 * of each capability, released in time order by the host's reorder
 * buffer.
 *
 * Timeline: per capability and column, the ns spent running threads and
 * in GC (the rest of the column is idle) and the RP_TL_THREADS threads
 * that ran longest in it. A span covering several columns is split
 * between them. All capabilities share one column axis; its budget is
 * divided among them (at most EL_RP_TIMELINE_CELLS cells).
 *
 * Collections: GC spans of different capabilities that overlap belong to
 * one stop-the-world collection (every capability stops for it); its pause
 * runs from the first GC_START to the last GC_END. Spans reach us in the
 * order of their ends (within a session), so a span that starts before
 * the open collection ends, and does not end before it starts, joins
 * it. */
#include <string.h>

#include "rp_internal.h"

static void tl_add_thread(rp_tl_t *b, uint32_t id1, uint64_t ns) {
  size_t min = 0;
  for (size_t k = 0; k < RP_TL_THREADS; k++) {
    if (b->thr[k] == id1) {
      b->thr_ns[k] += ns;
      return;
    }
    if (b->thr[k] == 0) {
      b->thr[k] = id1;
      b->thr_ns[k] = ns;
      return;
    }
    if (b->thr_ns[k] < b->thr_ns[min]) min = k;
  }
  /* Full: the newcomer replaces the least busy if it ran longer. */
  if (ns > b->thr_ns[min]) {
    b->thr[min] = id1;
    b->thr_ns[min] = ns;
  }
}

static void tl_merge(void *dst, void *src) {
  rp_tl_t *d = dst, *s = src;
  d->mut_ns += s->mut_ns;
  d->gc_ns += s->gc_ns;
  for (size_t k = 0; k < RP_TL_THREADS; k++)
    if (s->thr[k]) tl_add_thread(d, s->thr[k], s->thr_ns[k]);
}

void el__rp_time_init(rp_time_t *tm, size_t columns, size_t timeline_columns) {
  memset(tm, 0, sizeof *tm);
  el__rp_cols_init(&tm->c, timeline_columns, sizeof(rp_tl_t), tl_merge, NULL);
  tm->budget = EL_RP_TIMELINE_CELLS;
  for (size_t i = 0; i < RP_MAX_CAPS; i++) tm->arr_of_cap[i] = -1;
  el__rp_cols_init(&tm->gcc, columns, sizeof(rp_gauge_t), el__rp_gauge_merge,
                   NULL);
}

void el__rp_time_close(rp_time_t *tm) {
  el__rp_cols_close(&tm->c);
  el__rp_cols_close(&tm->gcc);
}

/* The array of capability cap, added on first use (the budget is shared:
 * more capabilities, fewer columns each). -1 when out of memory. */
static int cap_array(rp_time_t *tm, size_t cap) {
  if (tm->arr_of_cap[cap] >= 0) return tm->arr_of_cap[cap];
  size_t n = tm->c.narr + 1, per = tm->c.max;
  while (per > 64 && per * n > tm->budget) per /= 2;
  if (per < tm->c.max && el__rp_cols_set_max(&tm->c, per) < 0) return -1;
  int a = el__rp_cols_add_array(&tm->c);
  if (a < 0) return -1;
  tm->arr_of_cap[cap] = a;
  tm->cap_of_arr[a] = (int)cap;
  return a;
}

/* Add [s, e) of one span to the columns it covers. */
static void tl_span(rp_time_t *tm, int a, bool gc, uint32_t thread, uint64_t s,
                    uint64_t e) {
  long i0, i1;
  if (el__rp_cols_fit_span(&tm->c, s, e, &i0, &i1) < 0) return;
  for (long i = i0; i <= i1; i++) {
    uint64_t cs = el__rp_cols_start(&tm->c, (size_t)i);
    uint64_t ce = cs + el__rp_cols_width(&tm->c);
    uint64_t a0 = s > cs ? s : cs, a1 = e < ce ? e : ce;
    uint64_t ns = a1 > a0 ? a1 - a0 : 0;
    rp_tl_t *b = el__rp_cols_el(&tm->c, (size_t)a, (size_t)i);
    if (gc) {
      b->gc_ns += ns;
    } else {
      b->mut_ns += ns;
      if (ns) tl_add_thread(b, thread + 1, ns);
    }
  }
}

static void longest_add(rp_time_t *tm, const rp_pause_t *p) {
  uint64_t d = p->end - p->start;
  size_t n = tm->nlongest;
  if (n == RP_LONGEST && d <= tm->longest[n - 1].end - tm->longest[n - 1].start)
    return;
  size_t i = n < RP_LONGEST ? n : RP_LONGEST - 1;
  while (i > 0 && tm->longest[i - 1].end - tm->longest[i - 1].start < d) {
    tm->longest[i] = tm->longest[i - 1];
    i--;
  }
  tm->longest[i] = *p;
  if (n < RP_LONGEST) tm->nlongest++;
}

static void collection_close(rp_time_t *tm) {
  if (!tm->in_gc) return;
  tm->in_gc = false;
  rp_pause_t *p = &tm->cur;
  uint64_t d = p->end - p->start;
  tm->collections++;
  tm->pause_total_ns += d;
  if (d > tm->pause_max_ns) tm->pause_max_ns = d;
  unsigned k = 0;
  while (k < 63 && (d >> (k + 1))) k++;
  tm->hist[d ? k : 0]++;
  longest_add(tm, p);
  if (tm->gcc.narr == 0 && el__rp_cols_add_array(&tm->gcc) < 0) return;
  long i = el__rp_cols_fit(&tm->gcc, p->start);
  if (i >= 0)
    el__rp_gauge_add(el__rp_cols_el(&tm->gcc, 0, (size_t)i), p->start,
                     (double)d);
}

static void gc_span(rp_time_t *tm, uint64_t s, uint64_t e) {
  /* Overlapping, not only starting before its end: a file's next session
   * may lie earlier on the axis (logs concatenated out of time order), and
   * every one of its spans starts before the last collection's end. */
  if (tm->in_gc && s <= tm->cur.end && e >= tm->cur.start) {
    if (s < tm->cur.start) tm->cur.start = s;
    if (e > tm->cur.end) tm->cur.end = e;
    tm->cur.ncaps++;
    return;
  }
  collection_close(tm);
  tm->in_gc = true;
  tm->cur = (rp_pause_t){.start = s, .end = e, .ncaps = 1};
}

void el__rp_time_span(rp_time_t *tm, int64_t cap, bool gc, uint32_t thread,
                      uint64_t s, uint64_t e) {
  if (cap < 0 || cap >= RP_MAX_CAPS || s == 0) return;
  if (e < s) e = s;
  size_t c = (size_t)cap;
  if (!tm->cap_first[c] || s < tm->cap_first[c]) tm->cap_first[c] = s;
  if (e > tm->cap_last[c]) tm->cap_last[c] = e;
  if (gc) {
    tm->gc_spans++;
    tm->gc_ns += e - s;
    gc_span(tm, s, e);
  } else {
    tm->mut_spans++;
    tm->mut_ns += e - s;
  }
  int a = cap_array(tm, c);
  if (a >= 0) tl_span(tm, a, gc, thread, s, e);
}

void el__rp_time_finish(rp_time_t *tm) { collection_close(tm); }
