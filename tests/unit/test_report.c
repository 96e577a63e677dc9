/* test_report.c: the report's reducer (src/report, docs/report.md).
 * Expected values are worked out by hand in each test from the inputs it
 * feeds: bucket widths and counts, census statistics, collections made of
 * overlapping GC spans, call-tree counts, JSON escapes.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off: cmocka.h needs the headers above first */
#include <cmocka.h>
/* clang-format on */
#include <lauxlib.h>
#include <lua.h>

#include "host/host.h"
#include "report/report.h"
#include "report/rp_internal.h"
#include "telemetry/telemetry.h"

#define T0 UINT64_C(1700000000000000000) /* a Unix time, ns */
#define MS UINT64_C(1000000)

/* {====== columns ======} */

static void test_cols_bounded_and_conserving(void **state) {
  (void)state;
  rp_cols_t c;
  el__rp_cols_init(&c, 64, sizeof(rp_gauge_t), el__rp_gauge_merge, NULL);
  assert_int_equal(el__rp_cols_add_array(&c), 0);
  /* 10000 points, one per ms, value = index: 10 s of range. */
  for (uint64_t i = 0; i < 10000; i++) {
    long b = el__rp_cols_fit(&c, T0 + i * MS);
    assert_true(b >= 0 && (size_t)b < c.n);
    el__rp_gauge_add(el__rp_cols_el(&c, 0, (size_t)b), T0 + i * MS, (double)i);
    assert_true(c.n <= 64);
  }
  /* 10 s in at most 64 buckets of 2^k ns: 2^28 ns (268 ms) gives 38 or
   * 39 buckets, 2^27 would need 75. */
  assert_int_equal(c.shift, 28);
  assert_true(c.n >= 32);
  uint64_t n = 0;
  double mx = -1, mn = 1e18, sum = 0;
  for (size_t i = 0; i < c.n; i++) {
    rp_gauge_t *g = el__rp_cols_el(&c, 0, i);
    n += g->n;
    sum += g->sum;
    if (g->n && g->max > mx) mx = g->max;
    if (g->n && g->min < mn) mn = g->min;
    /* every value in a bucket lies in the bucket's time range */
    if (g->n) {
      assert_true(g->t_last >= el__rp_cols_start(&c, i));
      assert_true(g->t_last < el__rp_cols_start(&c, i) + el__rp_cols_width(&c));
    }
  }
  assert_int_equal(n, 10000);
  assert_true(mx == 9999 && mn == 0);
  assert_true(sum == 9999.0 * 10000 / 2);
  el__rp_cols_close(&c);
}

static void test_cols_extend_left(void **state) {
  (void)state;
  rp_cols_t c;
  el__rp_cols_init(&c, 16, sizeof(rp_gauge_t), el__rp_gauge_merge, NULL);
  el__rp_cols_add_array(&c);
  long late = el__rp_cols_fit(&c, T0 + 100 * MS);
  el__rp_gauge_add(el__rp_cols_el(&c, 0, (size_t)late), T0 + 100 * MS, 7);
  long early = el__rp_cols_fit(&c, T0); /* 100 ms earlier */
  assert_int_equal(early, 0);
  el__rp_gauge_add(el__rp_cols_el(&c, 0, 0), T0, 3);
  /* 100 ms over at most 16 buckets: 2^23 ns = 8.4 ms gives 12 or 13. */
  assert_true(c.n <= 16);
  rp_gauge_t *last = el__rp_cols_el(&c, 0, c.n - 1);
  assert_int_equal(last->n, 1);
  assert_true(last->max == 7);
  rp_gauge_t *first = el__rp_cols_el(&c, 0, 0);
  assert_true(first->n == 1 && first->max == 3);
  assert_int_equal(el__rp_cols_fit(&c, 0), -1); /* unknown time: ignored */
  el__rp_cols_close(&c);
}

/* {====== heap ======} */

static el_rp_t *new_rp(void) {
  el_rp_opts_t o;
  el_rp_opts_init(&o);
  o.names.heap_size = "ghc_eventlog_HeapSize";
  o.names.heap_prof_sample = "ghc_eventlog_HeapProfSample";
  o.names.heap_allocated = "ghc_eventlog_HeapAllocated";
  o.names.cap_usage = "ghc_eventlog_CapabilityUsage";
  o.names.cc_profile = "ghc_eventlog_CostCentreStackProfile";
  el_rp_t *rp;
  assert_int_equal(el_rp_new(&o, &rp), 0);
  return rp;
}

static const rp_band_t *band(el_rp_t *rp, const char *name) {
  long id = el__rp_strtab_find(&rp->heap.names, name, strlen(name));
  assert_true(id >= 0);
  return &rp->heap.bands[id];
}

static void test_censuses_grouped_by_begins(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_heap_t *h = &rp->heap;
  /* Begins come first (the script sees them at event time), the samples
   * later (at export), as in the report. */
  el__rp_heap_census_begin(h, T0);
  el__rp_heap_census_begin(h, T0 + 50 * MS);
  el__rp_heap_census_begin(h, T0 + 100 * MS);
  el__rp_heap_sample(h, T0 + 1, "A", 1, 100, NULL);
  el__rp_heap_sample(h, T0 + 2, "B", 1, 10, NULL);
  el__rp_heap_sample(h, T0 + 50 * MS + 1, "A", 1, 300, NULL);
  el__rp_heap_sample(h, T0 + 100 * MS + 1, "B", 1, 40, NULL);
  el__rp_heap_sample(h, T0 + 100 * MS + 2, "A", 1, 200, NULL);
  el__rp_heap_finish(h);
  assert_int_equal(h->censuses_begun, 3);
  assert_int_equal(h->censuses, 3);
  /* A: 100, 300, 200 -> peak 300 at the second census, sum 600. */
  assert_true(band(rp, "A")->peak == 300 && band(rp, "A")->sum == 600);
  assert_int_equal(band(rp, "A")->peak_t, T0 + 50 * MS + 1);
  /* B: 10, -, 40 -> peak 40, sum 50, in 2 censuses. */
  assert_true(band(rp, "B")->peak == 40 && band(rp, "B")->sum == 50);
  assert_int_equal(band(rp, "B")->n, 2);
  /* Three buckets, totals 110, 300, 240. */
  double totals[3];
  size_t k = 0;
  for (size_t i = 0; i < h->c.n; i++) {
    rp_census_t *c = el__rp_cols_el(&h->c, 0, i);
    if (c->ncensus) totals[k++] = c->total;
  }
  assert_int_equal(k, 3);
  assert_true(totals[0] == 110 && totals[1] == 300 && totals[2] == 240);
  el_rp_free(rp);
}

static void test_census_without_begins_splits_on_repeat(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_heap_t *h = &rp->heap;
  el__rp_heap_sample(h, T0 + 1, "A", 1, 1, NULL);
  el__rp_heap_sample(h, T0 + 2, "B", 1, 2, NULL);
  el__rp_heap_sample(h, T0 + 3, "A", 1, 4, NULL); /* A again: a new census */
  el__rp_heap_finish(h);
  assert_int_equal(h->censuses, 2);
  assert_true(band(rp, "A")->sum == 5 && band(rp, "A")->peak == 4);
  el_rp_free(rp);
}

static void test_census_keeps_largest_bands(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_heap_t *h = &rp->heap;
  el__rp_heap_census_begin(h, T0);
  /* 300 bands of 1..300 bytes: the 256 largest (45..300) are kept, the
   * rest (1..44) summed: 44 * 45 / 2 = 990. */
  for (int i = 1; i <= 300; i++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", i);
    el__rp_heap_sample(h, T0 + (uint64_t)i, name, strlen(name), i, NULL);
  }
  el__rp_heap_finish(h);
  rp_census_t *c = NULL;
  for (size_t i = 0; i < h->c.n; i++)
    if (((rp_census_t *)el__rp_cols_el(&h->c, 0, i))->ncensus)
      c = el__rp_cols_el(&h->c, 0, i);
  assert_non_null(c);
  assert_int_equal(c->nent, RP_CENSUS_KEEP);
  assert_true(c->rest == 990);
  assert_true(c->total == 300.0 * 301 / 2);
  for (uint32_t i = 1; i < c->nent; i++)
    assert_true(c->ent[i - 1].band < c->ent[i].band); /* by band id */
  el_rp_free(rp);
}

static double alloc_sum(rp_heap_t *h) {
  double sum = 0;
  for (size_t i = 0; i < h->g.n; i++)
    sum += ((rp_gauge_t *)el__rp_cols_el(&h->g, RP_G_ALLOC, i))->sum;
  return sum;
}

static void test_allocation_spread_over_interval(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_heap_t *h = &rp->heap;
  /* Capability 0 allocates 1000 bytes between two points 1 s apart: the
   * columns of that second hold 1000 bytes in all. The first point's 100
   * bytes have no start to spread from: in the total only. */
  assert_true(el__rp_heap_alloc(h, T0, 0, 0, 100) == 0);
  assert_true(el__rp_heap_alloc(h, T0 + 1000 * MS, 0, 0, 1100) == T0);
  double sum = alloc_sum(h);
  assert_true(sum > 999.999 && sum < 1000.001);
  assert_true(h->alloc_total == 1100);
  el_rp_free(rp);
}

static void test_allocation_first_interval_from_start(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_heap_t *h = &rp->heap;
  /* 1000 bytes counted from T0 (the RTS start) to the first point at
   * 100 ms: 10000 bytes/s in every column wholly inside [T0, T0+100 ms);
   * then 3000 bytes to 200 ms: 30000 bytes/s. */
  assert_true(el__rp_heap_alloc(h, T0 + 100 * MS, T0, 0, 1000) == T0);
  assert_true(el__rp_heap_alloc(h, T0 + 200 * MS, T0, 0, 4000) ==
              T0 + 100 * MS);
  double sum = alloc_sum(h);
  assert_true(sum > 3999.999 && sum < 4000.001);
  uint64_t w = el__rp_cols_width(&h->g);
  size_t first = 0, second = 0;
  for (size_t i = 0; i < h->g.n; i++) {
    uint64_t cs = el__rp_cols_start(&h->g, i), ce = cs + w;
    double rate = ((rp_gauge_t *)el__rp_cols_el(&h->g, RP_G_ALLOC, i))->sum /
                  ((double)w / 1e9);
    if (cs >= T0 && ce <= T0 + 100 * MS) {
      assert_true(rate > 9999.99 && rate < 10000.01);
      first++;
    } else if (cs >= T0 + 100 * MS && ce <= T0 + 200 * MS) {
      assert_true(rate > 29999.99 && rate < 30000.01);
      second++;
    }
  }
  assert_true(first > 0 && second > 0);
  /* A total below the previous one: a new count. Its start T0, before the
   * previous point, is not its own: in the total only. Another new count
   * whose start (a new session's) follows the previous point: spread from
   * there (400 bytes over 100 ms). */
  assert_true(el__rp_heap_alloc(h, T0 + 300 * MS, T0, 0, 500) == 0);
  assert_true(el__rp_heap_alloc(h, T0 + 500 * MS, T0 + 400 * MS, 0, 400) ==
              T0 + 400 * MS);
  sum = alloc_sum(h);
  assert_true(sum > 4399.999 && sum < 4400.001);
  assert_true(h->alloc_total == 4900);
  /* A count started more than 60 s before its first point (a reader that
   * joined late): not spread, in the total only. */
  assert_true(el__rp_heap_alloc(h, T0 + 70000 * MS, T0, 1, 5000) == 0);
  sum = alloc_sum(h);
  assert_true(sum > 4399.999 && sum < 4400.001);
  assert_true(h->alloc_total == 9900);
  /* A new session's count whose first total (600) is above the previous
   * session's last (400): its own 600 bytes, spread from its start at
   * 2 s, not 200 bytes over the time between the programs. */
  assert_true(el__rp_heap_alloc(h, T0 + 2100 * MS, T0 + 2000 * MS, 0, 600) ==
              T0 + 2000 * MS);
  sum = alloc_sum(h);
  assert_true(sum > 4999.999 && sum < 5000.001);
  assert_true(h->alloc_total == 10500);
  uint64_t w2 = el__rp_cols_width(&h->g);
  for (size_t i = 0; i < h->g.n; i++) {
    uint64_t cs = el__rp_cols_start(&h->g, i);
    if (cs >= T0 + 600 * MS && cs + w2 <= T0 + 2000 * MS)
      assert_true(((rp_gauge_t *)el__rp_cols_el(&h->g, RP_G_ALLOC, i))->sum ==
                  0);
  }
  el_rp_free(rp);
}

/* {====== time ======} */

static void test_collections_from_overlapping_spans(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_time_t *tm = &rp->time;
  /* Collection 1: cap 1 [20, 30] ms ends first, cap 0 [10, 31] ms.
   * Collection 2: cap 0 [50, 52] ms alone. Spans arrive by end time. */
  el__rp_time_span(tm, 1, true, 0, T0 + 20 * MS, T0 + 30 * MS);
  el__rp_time_span(tm, 0, true, 0, T0 + 10 * MS, T0 + 31 * MS);
  el__rp_time_span(tm, 0, true, 0, T0 + 50 * MS, T0 + 52 * MS);
  el__rp_time_finish(tm);
  assert_int_equal(tm->collections, 2);
  assert_int_equal(tm->gc_spans, 3);
  assert_int_equal(tm->pause_max_ns, 21 * MS);
  assert_int_equal(tm->pause_total_ns, 23 * MS);
  assert_int_equal(tm->longest[0].ncaps, 2);
  assert_int_equal(tm->longest[1].end - tm->longest[1].start, 2 * MS);
  /* 21 ms: 2^24 <= 21e6 < 2^25; 2 ms: 2^20 <= 2e6 < 2^21. */
  assert_int_equal(tm->hist[24], 1);
  assert_int_equal(tm->hist[20], 1);
  el_rp_free(rp);
}

/* A file's second session earlier on the axis than the first (logs
 * concatenated out of time order): its collections are its own, not
 * joined to the first session's last one (before: every span of it
 * started before that collection's end and joined it, making one pause
 * from its first GC to 1000 ms). */
static void test_collections_of_an_earlier_session(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_time_t *tm = &rp->time;
  el__rp_time_span(tm, 0, true, 0, T0 + 990 * MS, T0 + 1000 * MS);
  el__rp_time_span(tm, 0, true, 0, T0 + 100 * MS, T0 + 103 * MS);
  el__rp_time_span(tm, 1, true, 0, T0 + 101 * MS, T0 + 104 * MS);
  el__rp_time_span(tm, 0, true, 0, T0 + 200 * MS, T0 + 201 * MS);
  el__rp_time_finish(tm);
  assert_int_equal(tm->collections, 3);
  assert_int_equal(tm->pause_max_ns, 10 * MS);
  assert_int_equal(tm->pause_total_ns, (10 + 4 + 1) * MS);
  el_rp_free(rp);
}

static void test_timeline_splits_spans(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  rp_time_t *tm = &rp->time;
  /* A thread runs 1 s on cap 0, then GC for 0.5 s, then thread 9 runs
   * 0.25 s: the columns add up to exactly those durations. */
  el__rp_time_span(tm, 0, false, 7, T0, T0 + 1000 * MS);
  el__rp_time_span(tm, 0, true, 0, T0 + 1000 * MS, T0 + 1500 * MS);
  el__rp_time_span(tm, 0, false, 9, T0 + 1500 * MS, T0 + 1750 * MS);
  uint64_t mut = 0, gc = 0, t7 = 0;
  int a = tm->arr_of_cap[0];
  assert_true(a >= 0);
  for (size_t i = 0; i < tm->c.n; i++) {
    rp_tl_t *b = el__rp_cols_el(&tm->c, (size_t)a, i);
    mut += b->mut_ns;
    gc += b->gc_ns;
    for (int k = 0; k < RP_TL_THREADS; k++)
      if (b->thr[k] == 7 + 1) t7 += b->thr_ns[k];
    assert_true(b->mut_ns + b->gc_ns <= el__rp_cols_width(&tm->c));
  }
  assert_int_equal(mut, 1250 * MS);
  assert_int_equal(gc, 500 * MS);
  assert_int_equal(t7, 1000 * MS);
  el_rp_free(rp);
}

/* {====== profiles ======} */

static el_tm_frame_t fr(const char *name) {
  el_tm_frame_t f = {.function = {name, strlen(name)}};
  return f;
}

static void test_profile_tree_and_symbols(void **state) {
  (void)state;
  rp_prof_t *ps[RP_MAX_PROFILES];
  size_t n = 0;
  rp_prof_t *p = el__rp_prof_get(ps, &n, "k", "cpu", "samples");
  assert_non_null(p);
  /* innermost first: go <- go <- main (recursion), leaf <- main */
  el_tm_frame_t s1[] = {fr("go"), fr("go"), fr("main")};
  el_tm_frame_t s2[] = {fr("leaf"), fr("main")};
  el__rp_prof_sample(p, s1, 3, 1);
  el__rp_prof_sample(p, s1, 3, 1);
  el__rp_prof_sample(p, s2, 2, 1);
  assert_int_equal(p->samples, 3);
  /* nodes: root, main, main>go, main>go>go, main>leaf */
  assert_int_equal(p->nnodes, 5);
  assert_int_equal(p->nodes[0].total, 3);
  long go = el__rp_strtab_find(&p->names, "go\x1f", 3);
  long main_ = el__rp_strtab_find(&p->names, "main\x1f", 5);
  assert_true(go >= 0 && main_ >= 0);
  assert_int_equal(p->syms[go].total, 2); /* recursion counted once */
  assert_int_equal(p->syms[go].self, 2);
  assert_int_equal(p->syms[main_].total, 3);
  assert_int_equal(p->syms[main_].self, 0);
  el__rp_prof_free(p);
}

/* {====== JSON ======} */

static void test_json_escapes(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  el__rp_json_escape(f, "</script>\"\\\n\x01&", 14);
  el__rp_json_escape(f, "\xff\xc3\xa9", 3); /* invalid byte, then e-acute */
  fclose(f);
  assert_string_equal(buf,
                      "\\u003c/script\\u003e\\\"\\\\\\n\\u0001\\u0026"
                      "\\ufffd\xc3\xa9");
  free(buf);
}

/* {====== the exporter and the Lua module, end to end ======} */

static void test_exporter_and_lua_sections(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  el_tm_store_t *st = el_tm_store_new("t", "1");
  el_tm_exporter_t ex;
  el_rp_exporter(rp, &ex);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_tm_metric_desc_t d = {.name = "ghc_eventlog_HeapSize", .unit = "By"};
  el_tm_attr_t cs = {.key = "heapCapset", .type = EL_TM_INT, .v.i = 0};
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &cs,
                                      .nattrs = 1,
                                      .time_unix_ns = T0 + 1,
                                      .is_int = true,
                                      .ival = 4096});
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &cs,
                                      .nattrs = 1,
                                      .time_unix_ns = T0 + 2,
                                      .is_int = true,
                                      .ival = 8192});
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &cs,
                                      .nattrs = 1,
                                      .time_unix_ns = T0 + 3,
                                      .is_int = true,
                                      .ival = 2048});
  el_tm_attr_t kind = {
      .key = "kind", .type = EL_TM_STR, .v.s = {"UserMarker", 10}};
  el_tm_log_t lg = {
      .time_unix_ns = T0 + 5, .body = {"mark", 4}, .attrs = &kind, .nattrs = 1};
  el_tm_log(st, &lg);
  el_tm_store_flush(st);
  assert_true(rp->heap.st[RP_G_HEAP_SIZE].peak == 8192);
  assert_int_equal(rp->markers_total, 1);

  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_rp_lua_register(rp, el_host_lua(h)), 0);
  int rc =
      el_host_load_string(h,
                          "local n = require('eventlog_live.report.native')\n"
                          "assert(n.active)\n"
                          "local s = n.series('Queue', 'By', 'queue length')\n"
                          "n.point(s, 'q', 1700000000000000001, 5)\n"
                          "n.point(s, 'q', 1700000000000000002, 9)\n"
                          "n.table('T', nil, {'a', 'b'}, {{1, 'x'}, {2}})\n",
                          "=t");
  assert_int_equal(rc, 0);
  assert_int_equal(rp->nsections, 2);
  rp_section_t *s = rp->sections[0];
  assert_int_equal(s->points, 2);
  assert_string_equal(s->lines[0], "q");
  rp_section_t *t = rp->sections[1];
  assert_int_equal(t->nrows, 2);
  assert_int_equal(t->ncolumns, 2);
  assert_true(t->cells[0].is_num && t->cells[0].num == 1);
  assert_string_equal(t->cells[1].str, "x");
  assert_true(!t->cells[3].is_num && t->cells[3].str == NULL);

  /* The page's data is one JSON document with those sections. */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_int_equal(el_rp_write_json(rp, f), 0);
  fclose(f);
  assert_non_null(strstr(buf, "\"title\":\"Queue\""));
  assert_non_null(strstr(buf, "\"peak\":8192"));
  assert_non_null(strstr(buf, "\"rows\":[[1,\"x\"],[2,null]]"));
  free(buf);
  el_host_free(h);
  el_tm_store_free(st);
  el_rp_free(rp);
}

/* A HeapSize point of v bytes at Unix time t into st. */
static void heap_point(el_tm_store_t *st, uint64_t t, int64_t v) {
  el_tm_metric_desc_t d = {.name = "ghc_eventlog_HeapSize", .unit = "By"};
  el_tm_attr_t cs = {.key = "heapCapset", .type = EL_TM_INT, .v.i = 0};
  el_tm_metric_point(st, &d,
                     &(el_tm_point_t){.attrs = &cs,
                                      .nattrs = 1,
                                      .time_unix_ns = t,
                                      .is_int = true,
                                      .ival = v});
}

/* While a session's clock may still move (a live stream dated from the
 * arrival of its bytes), its records are held; when it settles they are
 * reduced at their eventlog time + the final RTS start: a point converted
 * with the estimate E1 at eventlog time 5 ms, the report script's series
 * point and census begin at 6 and 7 ms, a point at 8 ms converted with a
 * tightened estimate E2, all land at T0 + 5..8 ms once the exact start T0
 * is known. A session that ends unsettled, with no later settled clock,
 * keeps its last estimate at the end of the input. */
static void test_records_moved_to_settled_clock(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  el_tm_store_t *st = el_tm_store_new("t", "1");
  el_tm_exporter_t ex;
  el_rp_exporter(rp, &ex);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_rp_lua_register(rp, el_host_lua(h)), 0);
  assert_int_equal(
      el_host_load_string(h,
                          "native = require('eventlog_live.report.native')\n"
                          "sec = native.series('Queue', 'By', nil)\n",
                          "=t"),
      0);
  const uint64_t E1 = T0 + 400000 * 1000 * MS, E2 = E1 - 3 * MS;
  el_rp_clock(rp, 1, E1, 0, 0);
  heap_point(st, E1 + 5 * MS, 4096);
  el_tm_store_flush(st);
  char lua[256];
  snprintf(lua, sizeof lua,
           "native.point(sec, 'q', %llu, 9)\nnative.census_begin(%llu)\n",
           (unsigned long long)(E1 + 6 * MS),
           (unsigned long long)(E1 + 7 * MS));
  assert_int_equal(el_host_load_string(h, lua, "=t"), 0);
  el_tm_store_flush(st);
  el_rp_clock(rp, 1, E2, 8 * MS, 0); /* tightened: still held */
  heap_point(st, E2 + 8 * MS, 2048);
  el_tm_store_flush(st);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 0);
  assert_int_equal(rp->sections[0]->points, 0);
  assert_int_equal(rp->heap.censuses_begun, 0);
  assert_int_equal(rp->t_min, 0);

  el_rp_clock(rp, 1, T0, 8 * MS, 1); /* WALL_CLOCK_TIME: exact */
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 2);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].peak_t, T0 + 5 * MS);
  assert_int_equal(rp->sections[0]->points, 1);
  assert_int_equal(rp->heap.censuses_begun, 1);
  assert_int_equal(rp->t_min, T0 + 5 * MS);
  assert_int_equal(rp->t_max, T0 + 8 * MS);
  heap_point(st, T0 + 9 * MS, 1024); /* settled: at once */
  el_tm_store_flush(st);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 3);
  assert_int_equal(rp->t_max, T0 + 9 * MS);

  /* Session 2 never gets an exact clock: its last estimate stands. */
  el_rp_clock(rp, 2, T0 + 5000 * MS, 0, 0);
  heap_point(st, T0 + 5001 * MS, 1);
  el_tm_store_flush(st);
  el_rp_clock(rp, 2, T0 + 4000 * MS, 1 * MS, 0);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 3);
  /* The next header (no clock yet): session 2 waits for a later settled
   * clock to place it; none comes, so it keeps its last estimate. */
  el_rp_clock(rp, 3, 0, 0, 0);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 3);
  heap_point(st, 0, 1); /* no clock: time unknown, ignored by the charts */
  el_tm_store_flush(st);
  el_rp_settle(rp);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 5);
  assert_int_equal(rp->t_max, T0 + 4001 * MS);
  el_host_free(h);
  el_tm_store_free(st);
  el_rp_free(rp);
}

/* A session that ends with its clock estimated (a killed GHC 9.0 run,
 * no WALL_CLOCK_TIME) followed by others is placed as a recorded file's
 * sessions are (docs/lua-api.md §3): it ends where the next one starts.
 * Session 1 (estimate E, largest time 100 ms, a point at 40 ms, its span
 * and a thread told at its end) and session 2 (estimate, largest time
 * 30 ms, a point at 10 ms) stay held through session 3's header; when
 * session 3's clock becomes exact at T0, session 2 starts at T0 - 30 ms
 * and session 1 at T0 - 130 ms, by hand: its point at T0 - 90 ms, its
 * span [T0 - 130, T0 - 30] ms, the header's RTS start and the axis
 * origin T0 - 130 ms; the header's clock, estimated from the arrival of
 * its bytes until then, is from the next session's start now
 * ("next_session"). */
static void test_unsettled_session_ends_at_next(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  el_tm_store_t *st = el_tm_store_new("t", "1");
  el_tm_exporter_t ex;
  el_rp_exporter(rp, &ex);
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_host_t *h = el_host_new(NULL);
  assert_int_equal(el_rp_lua_register(rp, el_host_lua(h)), 0);
  const uint64_t E = T0 + 400000 * 1000 * MS;
  el_rp_clock(rp, 1, E, 0, 0);
  heap_point(st, E + 40 * MS, 4096);
  el_tm_store_flush(st);
  char lua[512];
  snprintf(lua, sizeof lua,
           "native = require('eventlog_live.report.native')\n"
           "native.session({number = 1, start_unix_ns = %llu, clock = "
           "'estimated', clock_from = 'arrival'}, %llu)\n"
           "native.threads({{thread = 1, first_t = 0, last_t = 40000000}}, "
           "1, %llu)\n",
           (unsigned long long)E, (unsigned long long)(E + 100 * MS),
           (unsigned long long)E);
  assert_int_equal(el_host_load_string(h, lua, "=t"), 0);
  el_rp_clock(rp, 1, E, 100 * MS, 0); /* its end */
  el_rp_clock(rp, 2, E + 9000 * MS, 0, 0);
  heap_point(st, E + 9010 * MS, 2048);
  el_tm_store_flush(st);
  el_rp_clock(rp, 2, E + 9000 * MS, 30 * MS, 0);
  el_rp_clock(rp, 3, 0, 0, 0);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 0);
  assert_string_equal(rp->session.clock_from, "arrival");
  el_rp_clock(rp, 3, T0, 0, 1); /* WALL_CLOCK_TIME */
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 2);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].peak_t, T0 - 90 * MS);
  assert_int_equal(rp->t_min, T0 - 90 * MS);
  assert_int_equal(rp->t_max, T0 - 20 * MS);
  assert_int_equal(rp->nspans, 1);
  assert_int_equal(rp->spans[0].start_unix_ns, T0 - 130 * MS);
  assert_int_equal(rp->spans[0].end_unix_ns, T0 - 30 * MS);
  assert_int_equal(rp->nthreads, 1);
  assert_int_equal(rp->threads[0].start_unix_ns, T0 - 130 * MS);
  assert_int_equal(rp->session.start_unix_ns, T0 - 130 * MS);
  assert_int_equal(rp->origin, T0 - 130 * MS);
  assert_string_equal(rp->session.clock_from, "next_session");
  assert_string_equal(rp->session.clock, "estimated");
  el_rp_settle(rp);
  assert_int_equal(rp->heap.st[RP_G_HEAP_SIZE].points, 2);
  el_host_free(h);
  el_tm_store_free(st);
  el_rp_free(rp);
}

/* Memory does not grow with the number of points: 2 million gauge points
 * and 2 million spans over a long range. */
static void test_memory_bounded(void **state) {
  (void)state;
  el_rp_t *rp = new_rp();
  el__rp_heap_gauge(&rp->heap, RP_G_HEAP_SIZE, T0, 0, 1);
  el__rp_time_span(&rp->time, 0, false, 1, T0, T0 + 1);
  size_t base = el_mem_in_use();
  for (uint64_t i = 1; i <= 2000000; i++) {
    uint64_t t = T0 + i * 7 * MS;
    el__rp_heap_gauge(&rp->heap, RP_G_HEAP_SIZE, t, 0, (double)i);
    el__rp_time_span(&rp->time, (int64_t)(i & 1), (i % 10) == 0, (uint32_t)i, t,
                     t + 3 * MS);
  }
  /* Two timeline arrays (caps 0 and 1) of 8192 buckets and the heap
   * gauges' 7 arrays of 2048: about 1.2 MB on top of the first. */
  assert_true(el_mem_in_use() - base < 2 * 1024 * 1024);
  assert_true(rp->heap.st[RP_G_HEAP_SIZE].peak == 2000000);
  el_rp_free(rp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cols_bounded_and_conserving),
      cmocka_unit_test(test_cols_extend_left),
      cmocka_unit_test(test_censuses_grouped_by_begins),
      cmocka_unit_test(test_census_without_begins_splits_on_repeat),
      cmocka_unit_test(test_census_keeps_largest_bands),
      cmocka_unit_test(test_allocation_spread_over_interval),
      cmocka_unit_test(test_allocation_first_interval_from_start),
      cmocka_unit_test(test_collections_from_overlapping_spans),
      cmocka_unit_test(test_collections_of_an_earlier_session),
      cmocka_unit_test(test_timeline_splits_spans),
      cmocka_unit_test(test_profile_tree_and_symbols),
      cmocka_unit_test(test_json_escapes),
      cmocka_unit_test(test_exporter_and_lua_sections),
      cmocka_unit_test(test_records_moved_to_settled_clock),
      cmocka_unit_test(test_unsettled_session_ends_at_next),
      cmocka_unit_test(test_memory_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
