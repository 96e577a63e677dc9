/* test_telemetry.c: the telemetry store (src/telemetry): grouping of data
 * points into metrics, resources (main and host), copies that survive the
 * caller's buffers, window limits and drop counting, refused batches,
 * batch lifetime, and an out-of-memory sweep. Expected values are the
 * hand-chosen inputs themselves and reference-behaviour.md §2.1, §2.5.
 * ctest-labels: asan */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "telemetry/telemetry.h"
#include "telemetry/telemetry_batch.h"

/* {====== a capturing exporter ======} */

typedef struct cap_s {
  el_tm_batch_t *got[16];
  int n;
  int refuse;                         /* export() result */
  int flushes;
} cap_t;

static int cap_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  cap_t *c = ud;
  assert_int_equal(el_tm_batch_signal(b), sig);
  if (c->refuse) {
    el_tm_batch_free(b);
    return c->refuse;
  }
  assert_true(c->n < 16);
  c->got[c->n++] = b;
  return 0;
}

static int cap_flush(void *ud, int timeout_ms) {
  ((cap_t *)ud)->flushes++;
  return 0;
}

static void cap_clear(cap_t *c) {
  for (int i = 0; i < c->n; i++) el_tm_batch_free(c->got[i]);
  c->n = 0;
}

static el_tm_store_t *store_with(cap_t *c, unsigned signals) {
  el_tm_store_t *st = el_tm_store_new("scope-x", "1.2.3");
  assert_non_null(st);
  el_tm_exporter_t ex = {.name = "cap", .ud = c, .signals = signals,
                         .export = cap_export, .flush = cap_flush};
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  return st;
}

static el_tm_attr_t int_attr(const char *k, int64_t v) {
  return (el_tm_attr_t){.key = k, .type = EL_TM_INT, .v.i = v};
}

static el_tm_attr_t str_attr(const char *k, const char *v) {
  return (el_tm_attr_t){.key = k, .type = EL_TM_STR,
                        .v.s = {v, strlen(v)}};
}

static const el_tm_attr_t *find_attr(const el_tm_attr_t *a, size_t n,
                                     const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(a[i].key, key) == 0) return &a[i];
  return NULL;
}

static const el_tm_metric_desc_t heap_size = {
    "ghc_eventlog_HeapSize", "The current heap size.", "By", EL_TM_GAUGE,
    EL_TM_TEMP_UNSPECIFIED, false};
static const el_tm_metric_desc_t heap_alloc = {
    "ghc_eventlog_HeapAllocated", NULL, "By", EL_TM_SUM,
    EL_TM_TEMP_CUMULATIVE, true};

/* {====== tests ======} */

static void test_points_grouped_by_metric(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_METRICS);
  el_tm_attr_t a0 = int_attr("evCap", 0), a1 = int_attr("evCap", 1);
  assert_int_equal(el_tm_metric_point(st, &heap_size,
                                      &(el_tm_point_t){.attrs = &a0,
                                                       .nattrs = 1,
                                                       .start_unix_ns = 5,
                                                       .time_unix_ns = 10,
                                                       .is_int = true,
                                                       .ival = 100}),
                   0);
  assert_int_equal(el_tm_metric_point(st, &heap_alloc,
                                      &(el_tm_point_t){.attrs = &a0,
                                                       .nattrs = 1,
                                                       .start_unix_ns = 5,
                                                       .time_unix_ns = 11,
                                                       .is_int = true,
                                                       .ival = 7}),
                   0);
  assert_int_equal(el_tm_metric_point(st, &heap_size,
                                      &(el_tm_point_t){.attrs = &a1,
                                                       .nattrs = 1,
                                                       .start_unix_ns = 5,
                                                       .time_unix_ns = 12,
                                                       .is_int = true,
                                                       .ival = 200}),
                   0);
  assert_int_equal(
      el_tm_metric_point(st, &heap_size,
                         &(el_tm_point_t){.time_unix_ns = 13, .dval = 2.5}),
      0);
  /* Same name, different unit: another metric. */
  el_tm_metric_desc_t other_unit = heap_size;
  other_unit.unit = "{mblock}";
  assert_int_equal(
      el_tm_metric_point(
          st, &other_unit,
          &(el_tm_point_t){.time_unix_ns = 14, .is_int = true, .ival = 3}),
      0);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(c.n, 1);
  el_tm_batch_t *b = c.got[0];
  assert_int_equal(el_tm_batch_count(b), 5);
  size_t ng, nm, np;
  const el_tm_rgroup_t *g = el_tm_batch_groups(b, &ng);
  const el_tm_metric_t *m = el_tm_batch_metrics(b, &nm);
  const el_tm_point_t *p = el_tm_batch_points(b, &np);
  assert_int_equal(ng, 1);
  assert_int_equal(g[0].first, 0);
  assert_int_equal(g[0].n, 3);
  assert_int_equal(nm, 3);
  assert_int_equal(np, 5);
  assert_string_equal(m[0].desc.name, "ghc_eventlog_HeapSize");
  assert_string_equal(m[0].desc.description, "The current heap size.");
  assert_string_equal(m[0].desc.unit, "By");
  assert_int_equal(m[0].first, 0);
  assert_int_equal(m[0].n, 3);
  assert_int_equal(p[0].ival, 100);
  assert_int_equal(p[0].start_unix_ns, 5);
  assert_int_equal(p[0].time_unix_ns, 10);
  assert_int_equal(p[1].ival, 200);
  assert_int_equal(p[1].attrs[0].v.i, 1);
  assert_false(p[2].is_int);
  assert_true(p[2].dval == 2.5);
  assert_int_equal(p[2].nattrs, 0);
  assert_string_equal(m[1].desc.name, "ghc_eventlog_HeapAllocated");
  assert_string_equal(m[1].desc.description, "");
  assert_int_equal(m[1].desc.kind, EL_TM_SUM);
  assert_int_equal(m[1].desc.temporality, EL_TM_TEMP_CUMULATIVE);
  assert_true(m[1].desc.monotonic);
  assert_int_equal(m[1].first, 3);
  assert_int_equal(p[3].ival, 7);
  assert_string_equal(m[2].desc.unit, "{mblock}");
  assert_int_equal(p[4].ival, 3);
  /* Scope and signal accessors. */
  assert_string_equal(el_tm_batch_scope_name(b), "scope-x");
  assert_string_equal(el_tm_batch_scope_version(b), "1.2.3");
  assert_null(el_tm_batch_logs(b, &np));
  assert_int_equal(np, 0);
  const el_tm_stats_t *s = el_tm_store_stats(st);
  assert_int_equal(s->emitted[EL_TM_SIGNAL_METRICS], 5);
  assert_int_equal(s->batches[EL_TM_SIGNAL_METRICS], 1);
  assert_int_equal(s->dropped[EL_TM_SIGNAL_METRICS], 0);
  /* An empty window hands out nothing. */
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(c.n, 1);
  cap_clear(&c);
  el_tm_store_free(st);
}

/* A caller reusing one desc struct (and one name buffer) for different
 * metrics gets different metrics. */
static void test_reused_desc_struct(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_METRICS);
  char name[8] = "alpha";
  el_tm_metric_desc_t d = {name, NULL, "By", EL_TM_GAUGE, 0, false};
  assert_int_equal(
      el_tm_metric_point(
          st, &d,
          &(el_tm_point_t){.time_unix_ns = 1, .is_int = true, .ival = 1}),
      0);
  assert_int_equal(
      el_tm_metric_point(
          st, &d,
          &(el_tm_point_t){.time_unix_ns = 2, .is_int = true, .ival = 2}),
      0);
  memcpy(name, "beta", 5);
  assert_int_equal(
      el_tm_metric_point(
          st, &d,
          &(el_tm_point_t){.time_unix_ns = 3, .is_int = true, .ival = 3}),
      0);
  d.unit = "ns";
  assert_int_equal(
      el_tm_metric_point(
          st, &d,
          &(el_tm_point_t){.time_unix_ns = 4, .is_int = true, .ival = 4}),
      0);
  d.kind = EL_TM_SUM;
  d.temporality = EL_TM_TEMP_DELTA;
  assert_int_equal(
      el_tm_metric_point(
          st, &d,
          &(el_tm_point_t){.time_unix_ns = 5, .is_int = true, .ival = 5}),
      0);
  memcpy(name, "alpha", 6);
  d.unit = "By";
  d.kind = EL_TM_GAUGE;
  assert_int_equal(
      el_tm_metric_point(
          st, &d,
          &(el_tm_point_t){.time_unix_ns = 6, .is_int = true, .ival = 6}),
      0);
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t nm, np;
  const el_tm_metric_t *m = el_tm_batch_metrics(c.got[0], &nm);
  const el_tm_point_t *p = el_tm_batch_points(c.got[0], &np);
  assert_int_equal(nm, 4);
  assert_string_equal(m[0].desc.name, "alpha");
  assert_int_equal(m[0].n, 3);
  assert_int_equal(p[2].ival, 6);
  assert_string_equal(m[1].desc.name, "beta");
  assert_string_equal(m[1].desc.unit, "By");
  assert_string_equal(m[2].desc.unit, "ns");
  assert_int_equal(m[2].desc.kind, EL_TM_GAUGE);
  assert_int_equal(m[3].desc.kind, EL_TM_SUM);
  assert_int_equal(m[3].desc.temporality, EL_TM_TEMP_DELTA);
  cap_clear(&c);
  el_tm_store_free(st);
}

static void test_resources_main_and_host(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 0xf);
  el_tm_log_t host = {.time_unix_ns = 1, .observed_unix_ns = 2,
                      .severity_number = EL_TM_SEV_WARN,
                      .body = {"hello", 5}, .host_log = true};
  /* Before any service.name: host resource uses "undefined". */
  assert_int_equal(el_tm_log(st, &host), 0);
  el_tm_attr_t svc = str_attr("service.name", "oddball");
  assert_int_equal(el_tm_store_set_resource(st, &svc), 0);
  el_tm_attr_t pid = int_attr("process.pid", 42);
  assert_int_equal(el_tm_store_set_resource(st, &pid), 0);
  el_tm_log_t prog = {.time_unix_ns = 3, .body = {"marker", 6},
                      .severity_number = EL_TM_SEV_TRACE};
  assert_int_equal(el_tm_log(st, &prog), 0);
  assert_int_equal(el_tm_log(st, &host), 0);
  assert_int_equal(el_tm_log(st, &prog), 0);
  /* Replacing an attribute keeps one key. */
  el_tm_attr_t svc2 = str_attr("service.name", "renamed");
  assert_int_equal(el_tm_store_set_resource(st, &svc2), 0);
  assert_int_equal(el_tm_log(st, &prog), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(c.n, 1);
  size_t ng, nl;
  const el_tm_rgroup_t *g = el_tm_batch_groups(c.got[0], &ng);
  const el_tm_log_t *l = el_tm_batch_logs(c.got[0], &nl);
  assert_int_equal(nl, 5);
  assert_int_equal(ng, 4);
  /* Group 0: host resource of "undefined". */
  const el_tm_attr_t *a =
      find_attr(g[0].resource->attrs, g[0].resource->nattrs, "service.name");
  assert_non_null(a);
  assert_string_equal(a->v.s.p, "eventlog-live-otelcol-for-undefined");
  assert_non_null(find_attr(g[0].resource->attrs, g[0].resource->nattrs,
                            "service.version"));
  assert_int_equal(g[0].n, 1);
  assert_true(l[0].host_log);
  assert_int_equal(l[0].observed_unix_ns, 2);
  /* Group 1: the program under oddball, pid 42: two records, in order. */
  assert_int_equal(g[1].resource->nattrs, 2);
  a = find_attr(g[1].resource->attrs, 2, "service.name");
  assert_string_equal(a->v.s.p, "oddball");
  assert_int_equal(find_attr(g[1].resource->attrs, 2, "process.pid")->v.i,
                   42);
  assert_int_equal(g[1].first, 1);
  assert_int_equal(g[1].n, 2);
  assert_string_equal(l[1].body.p, "marker");
  assert_int_equal(l[1].body.len, 6);
  assert_int_equal(l[1].severity_number, EL_TM_SEV_TRACE);
  assert_true(l[1].observed_unix_ns > 0);   /* 0 = now */
  /* Group 2: host resource for oddball. */
  a = find_attr(g[2].resource->attrs, 2, "service.name");
  assert_string_equal(a->v.s.p, "eventlog-live-otelcol-for-oddball");
  /* Group 3: renamed, pid kept. */
  assert_int_equal(g[3].resource->nattrs, 2);
  assert_string_equal(find_attr(g[3].resource->attrs, 2,
                                "service.name")->v.s.p, "renamed");
  cap_clear(&c);
  el_tm_store_free(st);
}

/* el_tm_store_set_session: the main resource carries the session number
 * from then on (kept by later attribute changes), attributes unchanged;
 * records keep the session they were emitted under; the host resource
 * has none. */
static void test_resource_session(void **state) {
  (void)state;
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 0xf);
  el_tm_attr_t svc = str_attr("service.name", "oddball");
  assert_int_equal(el_tm_store_set_resource(st, &svc), 0);
  el_tm_log_t prog = {
      .time_unix_ns = 3, .body = {"m", 1}, .severity_number = EL_TM_SEV_TRACE};
  el_tm_log_t host = {.time_unix_ns = 1, .body = {"h", 1}, .host_log = true};
  assert_int_equal(el_tm_log(st, &prog), 0); /* before any session */
  assert_int_equal(el_tm_store_set_session(st, 1), 0);
  assert_int_equal(el_tm_log(st, &prog), 0);
  el_tm_attr_t pid = int_attr("process.pid", 42);
  assert_int_equal(el_tm_store_set_resource(st, &pid), 0);
  assert_int_equal(el_tm_log(st, &prog), 0);
  assert_int_equal(el_tm_log(st, &host), 0);
  assert_int_equal(el_tm_store_set_session(st, 2), 0);
  assert_int_equal(el_tm_log(st, &prog), 0);
  assert_int_equal(el_tm_store_set_session(NULL, 3), EL_EINVAL);
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t ng;
  const el_tm_rgroup_t *g = el_tm_batch_groups(c.got[0], &ng);
  assert_int_equal(ng, 5);
  assert_int_equal(g[0].resource->session, 0);
  assert_int_equal(g[0].resource->nattrs, 1);
  assert_int_equal(g[1].resource->session, 1);
  assert_int_equal(g[1].resource->nattrs, 1);
  assert_int_equal(g[2].resource->session, 1); /* corrected, same session */
  assert_int_equal(g[2].resource->nattrs, 2);
  assert_int_equal(g[3].resource->session, 0); /* the host's */
  assert_int_equal(g[4].resource->session, 2);
  assert_int_equal(g[4].resource->nattrs, 2); /* attributes kept */
  cap_clear(&c);
  el_tm_store_free(st);
}

static void test_copies_survive_buffer_reuse(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 0xf);
  char key[16], val[16], name[32], body[16], fn[16], file[16];
  el_strview_t items[2];
  for (int i = 0; i < 2; i++) {
    snprintf(key, sizeof key, "key%d", i);
    snprintf(val, sizeof val, "val%d", i);
    snprintf(name, sizeof name, "metric%d", i);
    snprintf(body, sizeof body, "body%d", i);
    snprintf(fn, sizeof fn, "fn%d", i);
    snprintf(file, sizeof file, "file%d.hs", i);
    items[0] = (el_strview_t){val, 4};
    items[1] = (el_strview_t){key, 4};
    el_tm_attr_t at[2] = {str_attr(key, val),
                          {.key = "args", .type = EL_TM_STRLIST,
                           .v.list = {items, 2}}};
    el_tm_metric_desc_t d = {name, NULL, NULL, EL_TM_GAUGE, 0, false};
    assert_int_equal(el_tm_metric_point(st, &d,
                                        &(el_tm_point_t){.attrs = at,
                                                         .nattrs = 2,
                                                         .time_unix_ns = 1,
                                                         .is_int = true,
                                                         .ival = i}),
                     0);
    el_tm_log_t lg = {.body = {body, strlen(body)}, .attrs = at, .nattrs = 1,
                      .severity_text = val};
    assert_int_equal(el_tm_log(st, &lg), 0);
    el_tm_span_t sp = {.name = name, .kind = EL_TM_SPAN_INTERNAL,
                       .attrs = at, .nattrs = 1, .status_code = 1};
    sp.trace_id[0] = (uint8_t)(i + 1);
    sp.span_id[7] = (uint8_t)(i + 1);
    assert_int_equal(el_tm_span(st, &sp), 0);
    el_tm_frame_t fr = {{fn, strlen(fn)}, {file, strlen(file)}, 10 + i, 2};
    el_tm_profile_sample_t ps = {"prof", "cpu", "samples", &fr, 1, 1,
                                 100, at, 1};
    assert_int_equal(el_tm_profile_sample(st, &ps), 0);
  }
  /* Scribble over every caller buffer. */
  memset(key, 'X', sizeof key - 1);
  memset(val, 'X', sizeof val - 1);
  memset(name, 'X', sizeof name - 1);
  memset(body, 'X', sizeof body - 1);
  memset(fn, 'X', sizeof fn - 1);
  memset(file, 'X', sizeof file - 1);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(c.n, 4);
  size_t n;
  const el_tm_metric_t *m = el_tm_batch_metrics(c.got[0], &n);
  assert_int_equal(n, 2);
  assert_string_equal(m[1].desc.name, "metric1");
  assert_string_equal(m[1].desc.unit, "");
  const el_tm_point_t *p = el_tm_batch_points(c.got[0], &n);
  assert_string_equal(p[1].attrs[0].key, "key1");
  assert_string_equal(p[1].attrs[0].v.s.p, "val1");
  assert_int_equal(p[1].attrs[1].type, EL_TM_STRLIST);
  assert_int_equal(p[1].attrs[1].v.list.n, 2);
  assert_string_equal(p[1].attrs[1].v.list.items[0].p, "val1");
  assert_string_equal(p[1].attrs[1].v.list.items[1].p, "key1");
  const el_tm_log_t *l = el_tm_batch_logs(c.got[1], &n);
  assert_string_equal(l[0].body.p, "body0");
  assert_string_equal(l[1].severity_text, "val1");
  assert_null(l[1].trace_id);
  const el_tm_span_t *s = el_tm_batch_spans(c.got[2], &n);
  assert_int_equal(n, 2);
  assert_string_equal(s[1].name, "metric1");
  assert_int_equal(s[1].trace_id[0], 2);
  assert_int_equal(s[1].span_id[7], 2);
  assert_string_equal(s[0].attrs[0].v.s.p, "val0");
  const el_tm_profile_t *pr = el_tm_batch_profiles(c.got[3], &n);
  assert_int_equal(n, 1);
  assert_string_equal(pr[0].sample_type, "cpu");
  assert_int_equal(pr[0].n, 2);
  const el_tm_profile_sample_t *ps = el_tm_batch_samples(c.got[3], &n);
  assert_string_equal(ps[1].frames[0].function.p, "fn1");
  assert_string_equal(ps[1].frames[0].file.p, "file1.hs");
  assert_int_equal(ps[1].frames[0].line, 11);
  /* The batch outlives the store. */
  el_tm_store_free(st);
  assert_string_equal(l[1].body.p, "body1");
  cap_clear(&c);
}

/* Records with equal attributes share one copy (telemetry.c's memo); a
 * caller buffer that holds other bytes at the same address and length,
 * another integer, or a string the copy had to repair never takes it. */
static void test_equal_attrs_shared(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  char key[8] = "kk1", val[8] = "v1";
  el_tm_attr_t at[2] = {{.key = key, .type = EL_TM_STR, .v.s = {val, 2}},
                        int_attr("n", 7)};
  el_tm_span_t sp = {.name = "s",
                     .kind = EL_TM_SPAN_INTERNAL,
                     .attrs = at,
                     .nattrs = 2,
                     .status_code = 1};
  assert_int_equal(el_tm_span(st, &sp), 0); /* 0: kk1=v1 n=7 */
  assert_int_equal(el_tm_span(st, &sp), 0); /* 1: the same */
  memcpy(key, "kk2", 3);
  assert_int_equal(el_tm_span(st, &sp), 0); /* 2: kk2=v1 */
  memcpy(key, "kk1", 3);
  memcpy(val, "v2", 2);
  assert_int_equal(el_tm_span(st, &sp), 0); /* 3: kk1=v2 */
  memcpy(val, "v1", 2);
  at[1].v.i = 8;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 4: n=8 */
  at[1].v.i = 7;
  memcpy(val, "\xff", 2);
  at[0].v.s.len = 1;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 5: repaired */
  assert_int_equal(el_tm_span(st, &sp), 0); /* 6: repaired again */
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t n;
  const el_tm_span_t *s = el_tm_batch_spans(c.got[0], &n);
  assert_int_equal(n, 7);
  assert_ptr_equal(s[0].attrs, s[1].attrs);
  assert_string_equal(s[0].attrs[0].key, "kk1");
  assert_string_equal(s[0].attrs[0].v.s.p, "v1");
  assert_int_equal(s[0].attrs[1].v.i, 7);
  assert_string_equal(s[2].attrs[0].key, "kk2");
  assert_string_equal(s[2].attrs[0].v.s.p, "v1");
  assert_string_equal(s[3].attrs[0].key, "kk1");
  assert_string_equal(s[3].attrs[0].v.s.p, "v2");
  assert_string_equal(s[4].attrs[0].v.s.p, "v1");
  assert_int_equal(s[4].attrs[1].v.i, 8);
  assert_int_equal(s[0].attrs[1].v.i, 7); /* not overwritten */
  for (int i = 5; i < 7; i++) {
    assert_string_equal(s[i].attrs[0].v.s.p, "\xef\xbf\xbd");
    assert_int_equal(s[i].attrs[0].v.s.len, 3);
  }
  cap_clear(&c);
  el_tm_store_free(st);
}

/* Spans whose caller promises static keys (el_tm_span_t.static_keys: the
 * memo compares key addresses) get the same attributes as spans with
 * equal keys at other addresses: the same keys and values, by content. A
 * static-keys span shares the copy of an earlier one with the same key
 * addresses and values; a span without the promise whose key buffer now
 * holds other bytes at the same address never takes that copy. */
static void test_static_keys_same_attrs(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  static const char other_thread[] = "thread"; /* a second literal */
  char kthread[8] = "thread", kstatus[8] = "status";
  el_tm_attr_t lit[2] = {
      {.key = "thread", .type = EL_TM_STR, .v.s = {"42", 2}},
      {.key = "status", .type = EL_TM_STR, .v.s = {"BlockedOnMVar", 13}}};
  el_tm_attr_t buf[2] = {lit[0], lit[1]};
  buf[0].key = kthread;
  buf[1].key = kstatus;
  el_tm_attr_t oth[2] = {lit[0], lit[1]};
  oth[0].key = other_thread;
  el_tm_span_t sp = {
      .name = "s", .kind = EL_TM_SPAN_INTERNAL, .nattrs = 2, .status_code = 1};
  /* Each share is checked for an immediate repeat only: the memo holds
   * one entry per slot, placed by key addresses that change from run to
   * run, so an entry in between may take the slot. */
  sp.attrs = lit, sp.static_keys = true;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 0: literals, static */
  assert_int_equal(el_tm_span(st, &sp), 0); /* 1: as 0 */
  sp.attrs = buf, sp.static_keys = false;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 2: buffers, not static */
  sp.attrs = buf, sp.static_keys = true;    /* buffers kept unchanged */
  assert_int_equal(el_tm_span(st, &sp), 0); /* 3: as 2 */
  sp.attrs = oth;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 4: another "thread" */
  lit[0].v.s = (el_strview_t){"43", 2};
  sp.attrs = lit;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 5: thread 43 */
  char kthread2[8] = "thread";
  el_tm_attr_t buf2[2] = {buf[0], buf[1]};
  buf2[0].key = kthread2;
  sp.attrs = buf2;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 6: static, new addresses */
  memcpy(kthread2, "thrXad", 6);
  sp.static_keys = false;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 7: key bytes changed */
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t n;
  const el_tm_span_t *s = el_tm_batch_spans(c.got[0], &n);
  assert_int_equal(n, 8);
  const char *want_thread[8] = {"42", "42", "42", "42", "42", "43", "42", "42"};
  for (size_t i = 0; i < n; i++) {
    assert_false(s[i].static_keys);
    assert_int_equal(s[i].nattrs, 2);
    assert_string_equal(s[i].attrs[0].key, i == 7 ? "thrXad" : "thread");
    assert_string_equal(s[i].attrs[0].v.s.p, want_thread[i]);
    assert_int_equal(s[i].attrs[0].v.s.len, 2);
    assert_string_equal(s[i].attrs[1].key, "status");
    assert_string_equal(s[i].attrs[1].v.s.p, "BlockedOnMVar");
  }
  assert_ptr_equal(s[1].attrs, s[0].attrs); /* same addresses: shared */
  assert_ptr_equal(s[3].attrs, s[2].attrs); /* bytes compared: shared */
  assert_ptr_not_equal(s[5].attrs, s[0].attrs);
  assert_ptr_not_equal(s[7].attrs, s[6].attrs); /* no promise: bytes */
  cap_clear(&c);
  el_tm_store_free(st);
}

/* The memo compares string values by their bytes at every length (the
 * store reads short strings a word at a time): a value that differs from
 * an earlier one in any single byte, or only in length, gets its own
 * copy; the same bytes right again share the first copy. (The memo is a
 * cache of one entry per slot: a value met again after others may have
 * lost its slot, by key addresses that change from run to run, so sharing
 * is checked only for a repeat with nothing in between.) */
static void test_equal_attrs_every_byte(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  char val[24];
  el_tm_attr_t at = {.key = "k", .type = EL_TM_STR, .v.s = {val, 0}};
  el_tm_span_t sp = {.name = "s", .attrs = &at, .nattrs = 1};
  size_t nspans = 0;
  for (size_t len = 0; len <= 20; len++) {
    memset(val, 'a', sizeof val);
    at.v.s.len = len;
    assert_int_equal(el_tm_span(st, &sp), 0); /* a^len */
    assert_int_equal(el_tm_span(st, &sp), 0); /* a^len again */
    nspans += 2;
    for (size_t pos = 0; pos < len; pos++) {
      val[pos] = 'b';
      assert_int_equal(el_tm_span(st, &sp), 0); /* b at pos */
      val[pos] = 'a';
      nspans++;
    }
  }
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t n, k = 0;
  const el_tm_span_t *s = el_tm_batch_spans(c.got[0], &n);
  assert_int_equal(n, nspans);
  for (size_t len = 0; len <= 20; len++) {
    char want[24];
    memset(want, 'a', len);
    want[len] = '\0';
    const el_tm_attr_t *first = s[k].attrs;
    assert_int_equal(first[0].v.s.len, len);
    assert_string_equal(first[0].v.s.p, want);
    assert_ptr_equal(s[k + 1].attrs, first); /* shared */
    k += 2;
    for (size_t pos = 0; pos < len; pos++, k++) {
      want[pos] = 'b';
      assert_int_equal(s[k].attrs[0].v.s.len, len);
      assert_string_equal(s[k].attrs[0].v.s.p, want);
      assert_ptr_not_equal(s[k].attrs, first);
      want[pos] = 'a';
    }
  }
  cap_clear(&c);
  el_tm_store_free(st);
}

/* Span names and attribute keys are found again by the caller's pointer
 * only when its bytes are still the same: a buffer that now holds a
 * longer, shorter or other name, or one that needs repair, is copied
 * anew. */
static void test_names_keys_buffer_reuse(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  static const char *const names[] = {"Run",  "Running", "Run", "Ru",
                                      "\xff", "\xff",    "",    "Run"};
  static const char *const want[] = {
      "Run", "Running", "Run", "Ru", "\xef\xbf\xbd", "\xef\xbf\xbd", "", "Run"};
  char name[16], key[16];
  el_tm_attr_t at = int_attr(key, 1);
  el_tm_span_t sp = {.name = name, .attrs = &at, .nattrs = 1};
  for (size_t i = 0; i < 8; i++) {
    strcpy(name, names[i]);
    strcpy(key, names[i]);
    at.v.i = (int64_t)i % 2; /* the memo may share every other array */
    assert_int_equal(el_tm_span(st, &sp), 0);
  }
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t n;
  const el_tm_span_t *s = el_tm_batch_spans(c.got[0], &n);
  assert_int_equal(n, 8);
  for (size_t i = 0; i < 8; i++) {
    assert_string_equal(s[i].name, want[i]);
    assert_string_equal(s[i].attrs[0].key, want[i]);
  }
  cap_clear(&c);
  el_tm_store_free(st);
}

/* OTLP strings are UTF-8: invalid bytes become U+FFFD (EF BF BD), one
 * per byte that does not start a valid sequence; valid text is kept. */
static void test_invalid_utf8_replaced(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 0xf);
  static const char body[] = "a\xff" "b \xc3\xa9 \xc0\xaf \xed\xa0\x80 "
                             "\xf0\x9f\x98\x80 \xe2\x82";
  el_tm_attr_t a = {.key = "k\x80", .type = EL_TM_STR,
                    .v.s = {"v\xfe", 2}};
  el_strview_t item = {"\xc3", 1};
  el_tm_attr_t l = {.key = "l", .type = EL_TM_STRLIST, .v.list = {&item, 1}};
  el_tm_attr_t at[2] = {a, l};
  el_tm_log_t lg = {.body = {body, sizeof body - 1}, .attrs = at,
                    .nattrs = 2};
  assert_int_equal(el_tm_log(st, &lg), 0);
  el_tm_frame_t f = {{"f\x80", 2}, {"ok.hs", 5}, 1, 1};
  el_tm_profile_sample_t ps = {"p", "cpu", "samples", &f, 1, 1, 0, NULL, 0};
  assert_int_equal(el_tm_profile_sample(st, &ps), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t n;
  const el_tm_log_t *r = el_tm_batch_logs(c.got[0], &n);
  static const char want[] =
      "a\xef\xbf\xbd" "b \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd "
      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xf0\x9f\x98\x80 "
      "\xef\xbf\xbd\xef\xbf\xbd";
  assert_int_equal(r[0].body.len, sizeof want - 1);
  assert_string_equal(r[0].body.p, want);
  assert_string_equal(r[0].attrs[0].key, "k\xef\xbf\xbd");
  assert_string_equal(r[0].attrs[0].v.s.p, "v\xef\xbf\xbd");
  assert_int_equal(r[0].attrs[0].v.s.len, 4);
  assert_string_equal(r[0].attrs[1].v.list.items[0].p, "\xef\xbf\xbd");
  assert_int_equal(r[0].attrs[1].v.list.items[0].len, 3);
  const el_tm_profile_sample_t *sp = el_tm_batch_samples(c.got[1], &n);
  assert_string_equal(sp[0].frames[0].function.p, "f\xef\xbf\xbd");
  assert_int_equal(sp[0].frames[0].function.len, 4);
  cap_clear(&c);
  el_tm_store_free(st);
}

/* A NUL inside a string would cut it silently in the C-string encoders
 * (protobuf-c, the console JSON): it becomes U+FFFD, the rest is kept. */
static void test_nul_replaced_not_cut(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 0xf);
  static const char body[] = "nul \0 inside, and 8 more: 12345678\0";
  el_tm_attr_t a = {.key = "k", .type = EL_TM_STR, .v.s = {"x\0y", 3}};
  el_tm_log_t lg = {.body = {body, sizeof body - 1}, .attrs = &a,
                    .nattrs = 1};
  assert_int_equal(el_tm_log(st, &lg), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  size_t n;
  const el_tm_log_t *r = el_tm_batch_logs(c.got[0], &n);
  static const char want[] =
      "nul \xef\xbf\xbd inside, and 8 more: 12345678\xef\xbf\xbd";
  assert_int_equal(r[0].body.len, sizeof want - 1);
  assert_string_equal(r[0].body.p, want);
  assert_string_equal(r[0].attrs[0].v.s.p, "x\xef\xbf\xbdy");
  assert_int_equal(r[0].attrs[0].v.s.len, 5);
  cap_clear(&c);
  el_tm_store_free(st);
}

static void test_record_cap_drops_and_counts(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 0xf);
  el_tm_limits_t lim = {.max_records = 3};
  el_tm_store_set_limits(st, &lim);
  el_tm_attr_t a = int_attr("k", 1);
  for (int i = 0; i < 5; i++) {
    int rc = el_tm_metric_point(st, &heap_size,
                                &(el_tm_point_t){.attrs = &a,
                                                 .nattrs = 1,
                                                 .time_unix_ns = i,
                                                 .is_int = true,
                                                 .ival = i});
    assert_int_equal(rc, i < 3 ? 0 : EL_ENOMEM);
  }
  el_tm_log_t lg = {.body = {"x", 1}};
  for (int i = 0; i < 4; i++) el_tm_log(st, &lg);
  const el_tm_stats_t *s = el_tm_store_stats(st);
  assert_int_equal(s->emitted[EL_TM_SIGNAL_METRICS], 3);
  assert_int_equal(s->dropped[EL_TM_SIGNAL_METRICS], 2);
  assert_int_equal(s->dropped[EL_TM_SIGNAL_LOGS], 1);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(c.n, 2);
  assert_int_equal(el_tm_batch_count(c.got[0]), 3);
  size_t n;
  const el_tm_point_t *p = el_tm_batch_points(c.got[0], &n);
  assert_int_equal(p[2].ival, 2);   /* the first three were kept */
  /* The next window starts empty. */
  assert_int_equal(
      el_tm_metric_point(
          st, &heap_size,
          &(el_tm_point_t){.time_unix_ns = 9, .is_int = true, .ival = 9}),
      0);
  /* A record larger than the byte cap by itself is refused up front. */
  lim = (el_tm_limits_t){.max_records = 100, .max_bytes = 4096};
  el_tm_store_set_limits(st, &lim);
  static char big[8192];
  memset(big, 'b', sizeof big - 1);
  el_tm_log_t bigl = {.body = {big, sizeof big - 1}};
  assert_int_equal(el_tm_log(st, &bigl), EL_ENOMEM);
  assert_int_equal(s->dropped[EL_TM_SIGNAL_LOGS], 2);
  /* A byte cap works the same way. */
  lim = (el_tm_limits_t){.max_records = 100, .max_bytes = 1};
  el_tm_store_set_limits(st, &lim);
  assert_int_equal(el_tm_metric_point(st, &heap_size,
                                      &(el_tm_point_t){.attrs = &a,
                                                       .nattrs = 1,
                                                       .time_unix_ns = 9,
                                                       .is_int = true,
                                                       .ival = 9}),
                   EL_ENOMEM);
  assert_int_equal(s->dropped[EL_TM_SIGNAL_METRICS], 3);
  /* Records still in the window when the store is freed count as dropped. */
  cap_clear(&c);
  el_tm_store_free(st);
}

static void test_refused_batch_counted_as_dropped(void **state) {
  cap_t c = {.refuse = EL_EEXPORT};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  el_tm_span_t sp = {.name = "s", .kind = EL_TM_SPAN_INTERNAL};
  el_tm_random_id(sp.trace_id, 16);
  el_tm_random_id(sp.span_id, 8);
  assert_int_equal(el_tm_span(st, &sp), 0);
  assert_int_equal(el_tm_span(st, &sp), 0);
  assert_int_equal(el_tm_store_shutdown(st, 100), 0);
  assert_int_equal(c.flushes, 1);
  const el_tm_stats_t *s = el_tm_store_stats(st);
  assert_int_equal(s->dropped[EL_TM_SIGNAL_TRACES], 2);
  assert_int_equal(s->batches[EL_TM_SIGNAL_TRACES], 1);
  /* A signal nobody wants is not handed out. */
  el_tm_log_t lg = {.body = {"x", 1}};
  assert_int_equal(el_tm_log(st, &lg), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(s->batches[EL_TM_SIGNAL_LOGS], 0);
  el_tm_store_free(st);
}

/* el_tm_store_flush_to hands the window to the one exporter registered
 * with the ud given, after the shutdown too (the daemon's last
 * self-metric sample for /metrics); the other never sees it, and the
 * batch count does not grow. */
static void test_flush_to_one_exporter(void **state) {
  cap_t a = {0}, b = {0};
  el_tm_store_t *st = store_with(&a, 1u << EL_TM_SIGNAL_METRICS);
  el_tm_exporter_t ex = {.name = "other",
                         .ud = &b,
                         .signals = 1u << EL_TM_SIGNAL_METRICS,
                         .export = cap_export,
                         .flush = cap_flush};
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  el_tm_metric_desc_t d = {
      .name = "n", .kind = EL_TM_SUM, .temporality = EL_TM_TEMP_CUMULATIVE};
  el_tm_point_t p = {.time_unix_ns = 1, .is_int = true, .ival = 1};
  assert_int_equal(el_tm_metric_point(st, &d, &p), 0);
  assert_int_equal(el_tm_store_shutdown(st, 100), 0);
  assert_int_equal(a.n, 1);
  assert_int_equal(b.n, 1);
  p.ival = 2;
  assert_int_equal(el_tm_metric_point(st, &d, &p), 0);
  assert_int_equal(el_tm_store_flush_to(st, &b), 0);
  assert_int_equal(a.n, 1);
  assert_int_equal(b.n, 2);
  assert_int_equal(el_tm_batch_count(b.got[1]), 1);
  const el_tm_stats_t *s = el_tm_store_stats(st);
  assert_int_equal(s->batches[EL_TM_SIGNAL_METRICS], 1);
  assert_int_equal(s->emitted[EL_TM_SIGNAL_METRICS], 2);
  assert_int_equal(el_tm_store_flush_to(NULL, &b), EL_EINVAL);
  cap_clear(&a);
  cap_clear(&b);
  el_tm_store_free(st);
}

/* A sealed store (el_tm_store_seal) counts a record of a signal no
 * exporter takes as emitted and keeps nothing of it: no window bound
 * drops it, no batch is built; a taken signal is kept and bounded as
 * before; an exporter added after the seal takes what follows. Before
 * the seal every record waits for the flush. */
static void test_sealed_store_counts_untaken(void **state) {
  cap_t c = {0}, late = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  el_tm_log_t lg = {.body = {"x", 1}};
  assert_true(el_tm_store_takes(st, EL_TM_SIGNAL_LOGS)); /* not sealed */
  assert_int_equal(el_tm_log(st, &lg), 0); /* kept until the flush */
  el_tm_exporter_t ex = {.name = "late",
                         .ud = &late,
                         .signals = 1u << EL_TM_SIGNAL_LOGS,
                         .export = cap_export,
                         .flush = cap_flush};
  assert_int_equal(el_tm_store_add_exporter(st, &ex), 0);
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(late.n, 1); /* the log emitted before */
  assert_int_equal(el_tm_batch_count(late.got[0]), 1);
  cap_clear(&late);
  el_tm_store_t *s2 = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  el_tm_store_seal(s2);
  el_tm_limits_t lim = {.max_records = 2};
  el_tm_store_set_limits(s2, &lim);
  assert_true(el_tm_store_takes(s2, EL_TM_SIGNAL_TRACES));
  assert_false(el_tm_store_takes(s2, EL_TM_SIGNAL_LOGS));
  assert_false(el_tm_store_takes(s2, EL_TM_SIGNAL_METRICS));
  for (int i = 0; i < 5; i++) assert_int_equal(el_tm_log(s2, &lg), 0);
  el_tm_attr_t a = int_attr("k", 1);
  el_tm_point_t pt = {.attrs = &a, .nattrs = 1, .is_int = true, .ival = 1};
  for (int i = 0; i < 3; i++)
    assert_int_equal(el_tm_metric_point(s2, &heap_size, &pt), 0);
  assert_int_equal(el_tm_metric_point(s2, NULL, &pt), EL_EINVAL);
  el_tm_store_count_untaken(s2, EL_TM_SIGNAL_LOGS, 4);
  el_tm_span_t sp = {.name = "s", .kind = EL_TM_SPAN_INTERNAL};
  for (int i = 0; i < 3; i++)
    assert_int_equal(el_tm_span(s2, &sp), i < 2 ? 0 : EL_ENOMEM);
  const el_tm_stats_t *t = el_tm_store_stats(s2);
  assert_int_equal(t->emitted[EL_TM_SIGNAL_LOGS], 9); /* 5 + 4 */
  assert_int_equal(t->dropped[EL_TM_SIGNAL_LOGS], 0); /* past the cap */
  assert_int_equal(t->emitted[EL_TM_SIGNAL_METRICS], 3);
  assert_int_equal(t->dropped[EL_TM_SIGNAL_METRICS], 0);
  assert_int_equal(t->emitted[EL_TM_SIGNAL_TRACES], 2); /* taken: capped */
  assert_int_equal(t->dropped[EL_TM_SIGNAL_TRACES], 1);
  assert_int_equal(el_tm_store_flush(s2), 0);
  assert_int_equal(c.n, 1); /* the spans only */
  assert_int_equal(el_tm_batch_signal(c.got[0]), EL_TM_SIGNAL_TRACES);
  ex.ud = &late;
  assert_int_equal(el_tm_store_add_exporter(s2, &ex), 0);
  assert_true(el_tm_store_takes(s2, EL_TM_SIGNAL_LOGS));
  assert_int_equal(el_tm_log(s2, &lg), 0);
  assert_int_equal(el_tm_store_flush(s2), 0);
  assert_int_equal(late.n, 1);
  assert_int_equal(el_tm_batch_count(late.got[0]), 1);
  assert_int_equal(t->emitted[EL_TM_SIGNAL_LOGS], 10);
  cap_clear(&late);
  cap_clear(&c);
  el_tm_store_free(st);
  el_tm_store_free(s2);
}

/* el_tm_span_t.attrs_tag: with static keys, a span whose tag equals an
 * earlier one's in the window shares that copy without its attributes
 * being read (the caller's promise: the test breaks it once to show the
 * lookup is by tag); another tag gets its own copy; without static keys
 * the tag is ignored; a new window copies anew. Without attrs the tag's
 * copy is taken, or -EAGAIN tells that there is none (nothing counted). */
static void test_attrs_tag_names_copy(void **state) {
  cap_t c = {0};
  el_tm_store_t *st = store_with(&c, 1u << EL_TM_SIGNAL_TRACES);
  el_tm_attr_t x[2] = {str_attr("thread", "42"), int_attr("capability", 3)};
  el_tm_attr_t y[2] = {str_attr("thread", "7"), int_attr("capability", 1)};
  el_tm_span_t sp = {.name = "s",
                     .kind = EL_TM_SPAN_INTERNAL,
                     .nattrs = 2,
                     .static_keys = true,
                     .attrs_tag = {42, 3}};
  sp.attrs = x;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 0: x, tag A */
  assert_int_equal(el_tm_span(st, &sp), 0); /* 1: x, tag A */
  sp.attrs_tag[0] = 43;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 2: x, tag B */
  sp.attrs = y, sp.attrs_tag[0] = 42;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 3: y under tag A */
  sp.static_keys = false;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 4: y, no promise */
  const el_tm_stats_t *t = el_tm_store_stats(st);
  sp.static_keys = true, sp.attrs = NULL;   /* the window's copy of tag A */
  assert_int_equal(el_tm_span(st, &sp), 0); /* 5: x */
  sp.attrs_tag[0] = 44;                     /* tag C: no copy */
  assert_int_equal(el_tm_span(st, &sp), -EAGAIN);
  assert_int_equal(t->emitted[EL_TM_SIGNAL_TRACES], 6);
  assert_int_equal(t->dropped[EL_TM_SIGNAL_TRACES], 0);
  sp.attrs = y;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 6: y, tag C */
  sp.attrs = NULL;
  assert_int_equal(el_tm_span(st, &sp), 0); /* 7: y, tag C's copy */
  assert_int_equal(el_tm_store_flush(st), 0);
  sp.attrs_tag[0] = 42;
  assert_int_equal(el_tm_span(st, &sp), -EAGAIN); /* a new window */
  sp.attrs = y;
  assert_int_equal(el_tm_span(st, &sp), 0); /* next window: y, tag A */
  assert_int_equal(el_tm_store_flush(st), 0);
  assert_int_equal(c.n, 2);
  size_t n;
  const el_tm_span_t *s = el_tm_batch_spans(c.got[0], &n);
  assert_int_equal(n, 8);
  const char *want[8] = {"42", "42", "42", "42", "7", "42", "7", "7"};
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(s[i].attrs[0].v.s.p, want[i]);
    assert_int_equal(s[i].nattrs, 2);
    assert_int_equal(s[i].attrs[1].v.i, want[i][0] == '7' ? 1 : 3);
    assert_int_equal(s[i].attrs_tag[0] | s[i].attrs_tag[1], 0);
  }
  assert_ptr_equal(s[5].attrs, s[0].attrs);
  assert_ptr_equal(s[7].attrs, s[6].attrs);
  assert_ptr_equal(s[1].attrs, s[0].attrs);
  assert_ptr_not_equal(s[2].attrs, s[0].attrs); /* by tag, not content */
  assert_ptr_equal(s[3].attrs, s[0].attrs);
  s = el_tm_batch_spans(c.got[1], &n);
  assert_int_equal(n, 1);
  assert_string_equal(s[0].attrs[0].v.s.p, "7");
  cap_clear(&c);
  el_tm_store_free(st);
}

/* el_tm_random_span_id draws as el_tm_random_id(id, 8) does: from the
 * xoshiro256** state {1, 2, 3, 4} the first output is
 * rotl(2 * 5, 7) * 9 = 1280 * 9 = 11520 = 0x2d00 (little-endian bytes). */
static void test_random_span_id_inline(void **state) {
  static const uint8_t want[8] = {0x00, 0x2d, 0, 0, 0, 0, 0, 0};
  uint8_t a[8], b[8];
  const uint64_t s0[4] = {1, 2, 3, 4};
  memcpy(el__rng_s, s0, sizeof s0);
  el_tm_random_span_id(a);
  memcpy(el__rng_s, s0, sizeof s0);
  el_tm_random_id(b, 8);
  assert_memory_equal(a, want, 8);
  assert_memory_equal(b, want, 8);
}

static void test_random_ids_not_zero(void **state) {
  uint8_t a[16], b[16];
  el_tm_random_id(a, 16);
  el_tm_random_id(b, 16);
  assert_memory_not_equal(a, b, 16);
  static const uint8_t zero[8];
  el_tm_random_id(a, 8);
  assert_memory_not_equal(a, zero, 8);
}

/* One pass of everything the store does; returns the first error. */
static int exercise(cap_t *c) {
  el_tm_store_t *st = el_tm_store_new("s", "v");
  if (!st) return EL_ENOMEM;
  el_tm_exporter_t ex = {.name = "cap", .ud = c, .signals = 0xf,
                         .export = cap_export};
  int rc = el_tm_store_add_exporter(st, &ex);
  el_tm_attr_t svc = str_attr("service.name", "svc");
  if (!rc) rc = el_tm_store_set_resource(st, &svc);
  el_tm_attr_t at[2] = {int_attr("a", 1), str_attr("b", "bee")};
  for (int i = 0; i < 40 && !rc; i++) {
    char name[16];
    snprintf(name, sizeof name, "m%d", i % 7);
    el_tm_metric_desc_t d = {name, "d", "u", EL_TM_SUM, 1, true};
    rc = el_tm_metric_point(st, &d,
                            &(el_tm_point_t){.attrs = at,
                                             .nattrs = 2,
                                             .time_unix_ns = i,
                                             .is_int = true,
                                             .ival = i});
    el_tm_log_t lg = {.body = {name, strlen(name)}, .attrs = at,
                      .nattrs = 2, .host_log = i & 1};
    if (!rc) rc = el_tm_log(st, &lg);
    el_tm_span_t sp = {.name = name, .attrs = at, .nattrs = 2};
    if (!rc) rc = el_tm_span(st, &sp);
    el_tm_frame_t fr = {{name, 2}, {"f", 1}, 1, 1};
    el_tm_profile_sample_t ps = {"k", "cpu", "samples", &fr, 1, 1, 0, at, 2};
    if (!rc) rc = el_tm_profile_sample(st, &ps);
  }
  if (!rc) rc = el_tm_store_flush(st);
  el_tm_store_free(st);
  cap_clear(c);
  return rc;
}

static void test_out_of_memory_sweep(void **state) {
  cap_t c = {0};
  size_t base = el_mem_in_use();
  uint64_t before = el_mem_alloc_count();
  assert_int_equal(exercise(&c), 0);
  uint64_t total = el_mem_alloc_count() - before;
  assert_int_equal(el_mem_in_use(), base);
  el_log_threshold = EL_LOG_QUIET;    /* the store logs failed flushes */
  for (uint64_t n = 1; n <= total + 1; n++) {
    el_mem_fail_after(n);
    int rc = exercise(&c);
    el_mem_fail_after(0);
    assert_true(rc == 0 || rc == EL_ENOMEM);
    assert_int_equal(el_mem_in_use(), base);
  }
  el_log_threshold = EL_LOG_WARN;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_points_grouped_by_metric),
      cmocka_unit_test(test_reused_desc_struct),
      cmocka_unit_test(test_resources_main_and_host),
      cmocka_unit_test(test_copies_survive_buffer_reuse),
      cmocka_unit_test(test_equal_attrs_shared),
      cmocka_unit_test(test_static_keys_same_attrs),
      cmocka_unit_test(test_equal_attrs_every_byte),
      cmocka_unit_test(test_names_keys_buffer_reuse),
      cmocka_unit_test(test_invalid_utf8_replaced),
      cmocka_unit_test(test_nul_replaced_not_cut),
      cmocka_unit_test(test_record_cap_drops_and_counts),
      cmocka_unit_test(test_refused_batch_counted_as_dropped),
      cmocka_unit_test(test_flush_to_one_exporter),
      cmocka_unit_test(test_random_ids_not_zero),
      cmocka_unit_test(test_sealed_store_counts_untaken),
      cmocka_unit_test(test_attrs_tag_names_copy),
      cmocka_unit_test(test_random_span_id_inline),
      cmocka_unit_test(test_out_of_memory_sweep),
      cmocka_unit_test(test_resource_session),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
