/* test_config.c: the YAML configuration (src/config): defaults, enabling
 * semantics, strategy values, window resolution, error positions, unknown
 * key suggestions, and the generated default YAML.
 * Expected values come from spec/reference-behaviour.md §3 (tables and
 * grammar), written out by hand here.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"

/* Collected warnings. */
static char warnings[8][1024];
static int nwarnings;

static void collect(void *ud, const char *msg) {
  (void)ud;
  if (nwarnings < 8) snprintf(warnings[nwarnings], 1024, "%s", msg);
  nwarnings++;
}

static el_cfg_t *load(const char *yaml, int *rc) {
  el_cfg_t *c = el_cfg_new();
  assert_non_null(c);
  nwarnings = 0;
  el_cfg_set_warn(c, collect, NULL);
  *rc = el_cfg_load_string(c, "t.yaml", yaml, strlen(yaml));
  return c;
}

/* Load yaml, which must fail with EL_ECONFIG and the message msg. */
static void expect_load_error(const char *yaml, const char *msg) {
  int rc;
  el_cfg_t *c = load(yaml, &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_string_equal(el_cfg_diag(c)->msg, msg);
  el_cfg_free(c);
}

static void test_defaults_without_file(void **state) {
  (void)state;
  el_cfg_t *c = el_cfg_new();
  assert_non_null(c);
  /* Everything but the two trace processors is on. */
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_allocated"));
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "capability_usage"));
  assert_true(el_cfg_enabled(c, EL_CFG_LOGS, "user_marker"));
  assert_true(el_cfg_enabled(c, EL_CFG_PROFILES, "call_stack_profile"));
  assert_false(el_cfg_enabled(c, EL_CFG_TRACES, "thread_state"));
  assert_false(el_cfg_enabled(c, EL_CFG_TRACES, "capability_usage"));
  const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  assert_string_equal(p->name, "ghc_eventlog_HeapSize");
  assert_string_equal(p->description, "The current heap size, calculated "
                                      "by the allocated number of "
                                      "megablocks.");
  assert_int_equal(el_cfg_resolve(c, 1000), 0);
  assert_int_equal(el_cfg_batch_ms(c), 1000);
  assert_int_equal(p->aggregate_ms, 1000);
  assert_int_equal(p->export_ms, 30000);
  assert_null(el_cfg_proc(c, EL_CFG_METRICS, "no_such"));
  /* The reference's newer metrics (issue 15): on, with its names. */
  static const char *const newer[][2] = {
      {"gc_copied", "ghc_eventlog_GcCopied"},
      {"gc_slop", "ghc_eventlog_GcSlop"},
      {"gc_fragmentation", "ghc_eventlog_GcFragmentation"},
      {"productivity", "ghc_eventlog_Productivity"}};
  for (size_t i = 0; i < 4; i++) {
    assert_true(el_cfg_enabled(c, EL_CFG_METRICS, newer[i][0]));
    assert_string_equal(el_cfg_proc(c, EL_CFG_METRICS, newer[i][0])->name,
                        newer[i][1]);
  }
  /* The self-metrics: known, off by default. */
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "internal_event_count"));
  assert_string_equal(
      el_cfg_proc(c, EL_CFG_METRICS, "internal_rejected_spans")->name,
      "eventlog_live_InternalRejectedSpans");
  assert_int_equal(el_cfg_nprocs(), 30);
  el_cfg_free(c);
}

/* The reference's keys of its newer metrics are known keys: no warning. */
static void test_newer_metric_keys(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load(
      "processors:\n"
      "  metrics:\n"
      "    gc_copied: {}\n"
      "    gc_slop: {aggregate: 2s}\n"
      "    gc_fragmentation:\n"
      "    productivity: {export: 5s}\n",
      &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 0);
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "gc_fragmentation"));
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  el_cfg_free(c);
}

static void test_present_key_enables_with_defaults(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_prof_sample:\n"
                     "    heap_size: {}\n"
                     "    heap_live: {export: 5s}\n"
                     "  traces:\n"
                     "    thread_state: {}\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 0);
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_prof_sample"));
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_live"));
  assert_true(el_cfg_enabled(c, EL_CFG_TRACES, "thread_state"));
  /* Absent processors are off, even those on by default. */
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "blocks_size"));
  assert_false(el_cfg_enabled(c, EL_CFG_LOGS, "user_marker"));
  const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  assert_string_equal(p->name, "ghc_eventlog_HeapSize");
  assert_true(p->description != NULL);
  assert_int_equal(el_cfg_resolve(c, 1000), 0);
  /* gcd(1000, 1000 aggregates, 30000 and 5000 exports) = 1000 */
  assert_int_equal(el_cfg_batch_ms(c), 1000);
  assert_int_equal(p->export_ms, 30000);
  assert_int_equal(el_cfg_proc(c, EL_CFG_METRICS, "heap_live")->export_ms,
                   5000);
  el_cfg_free(c);
}

static void test_export_false_disables(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size: {export: false}\n"
                     "    heap_live: {export: 0s}\n"
                     "    blocks_size: {export: 0x}\n"
                     "    mem_current: {export: true}\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_live"));
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "blocks_size"));
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "mem_current"));
  el_cfg_free(c);
}

/* Spec §3.3: "Ns => on iff N > 0", and `round(N*1000) div batch` = 0
 * ticks means every tick. So `export: 0.0001s` enables the processor (it
 * exports every batch interval) and leaves the batch interval alone; a
 * positive value under 1 ms is a warning (a likely typo). "0.0000s" is 0:
 * off, no warning. Columns counted by hand in the YAML below. */
static void test_sub_millisecond_export_enables(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size: {export: 0.0001s, aggregate: 0.0004s}\n"
                     "    heap_live: {export: 0.0000s}\n",
                     &rc);
  assert_int_equal(rc, 0);
  /* Not silent: each sub-millisecond value is a warning at its place. */
  assert_int_equal(nwarnings, 2);
  assert_string_equal(warnings[0],
                      "t.yaml:3:25: processors.metrics.heap_size.export: "
                      "'0.0001s' is under 1 ms, the resolution: taken as "
                      "every batch interval");
  assert_string_equal(warnings[1],
                      "t.yaml:3:45: processors.metrics.heap_size.aggregate: "
                      "'0.0004s' is under 1 ms, the resolution: taken as no "
                      "aggregation");
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_live"));
  assert_int_equal(el_cfg_resolve(c, 1000), 0);
  assert_int_equal(el_cfg_batch_ms(c), 1000);
  const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  assert_int_equal(p->export_ms, 1000);   /* every batch interval */
  assert_int_equal(p->aggregate_ms, 0);   /* 0 ticks: no aggregation */
  el_cfg_free(c);
}

/* An empty telemetry name is no name: OTLP receivers refuse metrics
 * without one. The error names the position and key. */
static void test_empty_name_is_an_error(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size: {name: \"\"}\n",
                     &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_int_equal(el_cfg_diag(c)->line, 3);
  assert_int_equal(el_cfg_diag(c)->column, 23);
  assert_string_equal(el_cfg_diag(c)->key, "processors.metrics.heap_size.name");
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size")); /* unchanged */
  el_cfg_free(c);
}

/* A YAML "merge bomb": 8 levels of `<<: [*prev x 10]` would walk 10^8
 * mappings (about a minute of CPU for 400 bytes). The merges a file may
 * expand are bounded: an error, at once. */
static void test_merge_key_bomb_is_refused(void **state) {
  (void)state;
  char yaml[2048];
  size_t n = (size_t)snprintf(yaml, sizeof yaml,
                              "defaults:\n  l0: &l0 {export: 1s}\n");
  for (int i = 1; i <= 8; i++) {
    n += (size_t)snprintf(yaml + n, sizeof yaml - n, "  l%d: &l%d {<<: [", i,
                          i);
    for (int k = 0; k < 10; k++)
      n += (size_t)snprintf(yaml + n, sizeof yaml - n, "%s*l%d",
                            k ? ", " : "", i - 1);
    n += (size_t)snprintf(yaml + n, sizeof yaml - n, "]}\n");
  }
  snprintf(yaml + n, sizeof yaml - n,
           "processors:\n  metrics:\n    heap_size: *l8\n");
  int rc;
  el_cfg_t *c = load(yaml, &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_non_null(strstr(el_cfg_diag(c)->msg, "merge"));
  el_cfg_free(c);
}

/* libyaml's scanner is quadratic in the nesting depth (200 000 nested
 * `[` took over a minute) and the key walk in a mapping's size: both are
 * bounded, with an error at once. Warnings stop after 20 (plus one line
 * that counts the rest). */
static void test_deep_nesting_and_huge_mappings_are_refused(void **state) {
  (void)state;
  size_t depth = 20000;
  char *yaml = malloc(2 * depth + 64);
  assert_non_null(yaml);
  size_t n = (size_t)sprintf(yaml, "processors: {logs: {user_marker: "
                                   "{name: ");
  for (size_t i = 0; i < depth; i++) yaml[n++] = '[';
  for (size_t i = 0; i < depth; i++) yaml[n++] = ']';
  strcpy(yaml + n, "}}}\n");
  int rc;
  el_cfg_t *c = load(yaml, &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_non_null(strstr(el_cfg_diag(c)->msg, "nested"));
  el_cfg_free(c);
  free(yaml);

  size_t keys = 20000;
  yaml = malloc(keys * 16 + 64);
  assert_non_null(yaml);
  n = (size_t)sprintf(yaml, "processors:\n  metrics:\n");
  for (size_t i = 0; i < keys; i++)
    n += (size_t)sprintf(yaml + n, "    k%zu: {}\n", i);
  c = load(yaml, &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_non_null(strstr(el_cfg_diag(c)->msg, "keys"));
  el_cfg_free(c);

  n = (size_t)sprintf(yaml, "processors:\n  metrics:\n");
  for (size_t i = 0; i < 30; i++)
    n += (size_t)sprintf(yaml + n, "    k%zu: {}\n", i);
  c = load(yaml, &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 21);
  assert_non_null(strstr(warnings[7], "unknown key"));
  el_cfg_free(c);
  free(yaml);
}

/* Encoding errors (libyaml's reader) are placed where they are, not at
 * 1:1. */
static void test_encoding_error_position(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n  metrics:\n"
                     "    heap_size: {name: \"a\xff\"}\n",
                     &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_int_equal(el_cfg_diag(c)->line, 3);
  assert_int_equal(el_cfg_diag(c)->column, 25);   /* the 0xff byte */
  assert_non_null(strstr(el_cfg_diag(c)->msg, "UTF-8"));
  el_cfg_free(c);
}

/* Window lengths are handed on in ns (int64): "1000000000x" with a flush
 * interval of a day (8.64e16 ms) overflowed in the processors. Windows
 * are capped at EL_CFG_MAX_WINDOW_MS (31.7 years, effectively never). */
static void test_huge_windows_are_capped(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size: {export: 1000000000x, "
                     "aggregate: 1000000000x}\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(el_cfg_resolve(c, 86400000), 0);
  const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  assert_true(p->export_ms <= EL_CFG_MAX_WINDOW_MS);
  assert_true(p->aggregate_ms <= EL_CFG_MAX_WINDOW_MS);
  assert_true(p->export_ms >= el_cfg_batch_ms(c));
  assert_true(EL_CFG_MAX_WINDOW_MS <= INT64_MAX / 1000000);
  el_cfg_free(c);
}

static void test_properties_override(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size:\n"
                     "      name: my_heap\n"
                     "      description: mine\n"
                     "      aggregate: 2x\n"
                     "      export: \"0.5s\"\n",
                     &rc);
  assert_int_equal(rc, 0);
  const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  assert_string_equal(p->name, "my_heap");
  assert_string_equal(p->description, "mine");
  assert_int_equal(p->aggregate.kind, EL_CFG_TIMES);
  assert_int_equal(p->aggregate.times, 2);
  assert_int_equal(p->export_.kind, EL_CFG_SECONDS);
  assert_int_equal(p->export_.ms, 500);
  /* flush 1 s, export 0.5 s: batch 500 ms (spec §3.4 example). */
  assert_int_equal(el_cfg_resolve(c, 1000), 0);
  assert_int_equal(el_cfg_batch_ms(c), 500);
  assert_int_equal(p->aggregate_ms, 2000);
  assert_int_equal(p->export_ms, 500);
  el_cfg_free(c);
}

/* Spec §3.3-§3.4: Nx and true count flush intervals; the batch interval
 * is the gcd of the flush interval and the seconds values. */
static void test_flush_interval_units(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size: {aggregate: true, export: 3x}\n"
                     "    heap_live: {aggregate: 0.75s, export: 6s}\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(el_cfg_resolve(c, 500), 0);
  assert_int_equal(el_cfg_batch_ms(c), 250);   /* gcd(500, 750, 6000) */
  const el_cfg_proc_t *hs = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  const el_cfg_proc_t *hl = el_cfg_proc(c, EL_CFG_METRICS, "heap_live");
  assert_int_equal(hs->aggregate_ms, 500);
  assert_int_equal(hs->export_ms, 1500);
  assert_int_equal(hl->aggregate_ms, 750);
  assert_int_equal(hl->export_ms, 6000);
  assert_int_equal(el_cfg_resolve(c, 0), EL_EINVAL);
  el_cfg_free(c);
}

static void test_strategy_grammar(void **state) {
  (void)state;
  el_cfg_strategy_t s;
  assert_int_equal(el_cfg_parse_strategy("30s", &s), 0);
  assert_int_equal(s.kind, EL_CFG_SECONDS);
  assert_int_equal(s.ms, 30000);
  assert_int_equal(el_cfg_parse_strategy("0.5s", &s), 0);
  assert_int_equal(s.ms, 500);
  assert_int_equal(el_cfg_parse_strategy("1.0005s", &s), 0);
  assert_int_equal(s.ms, 1001);  /* round(1000.5) */
  assert_int_equal(el_cfg_parse_strategy("3x", &s), 0);
  assert_int_equal(s.kind, EL_CFG_TIMES);
  assert_int_equal(s.times, 3);
  assert_int_equal(el_cfg_parse_strategy("true", &s), 0);
  assert_int_equal(s.kind, EL_CFG_BOOL);
  assert_true(s.b);
  assert_int_equal(el_cfg_parse_strategy("", &s), 0);
  assert_int_equal(s.kind, EL_CFG_UNSET);
  const char *bad[] = {"30", "30m", "1.5x", "-1s", "+1s", "1e3s", " 1s",
                       "1s ", "s", "x", ".5s", "1.s", "yes"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(el_cfg_parse_strategy(bad[i], &s), EL_EINVAL);
}

static void test_type_error_names_line_column_key(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_size:\n"
                     "      export: 30m\n",
                     &rc);
  assert_int_equal(rc, EL_ECONFIG);
  const el_cfg_diag_t *d = el_cfg_diag(c);
  assert_int_equal(d->line, 4);
  assert_int_equal(d->column, 15);
  assert_string_equal(d->key, "processors.metrics.heap_size.export");
  assert_string_equal(d->msg,
                      "t.yaml:4:15: processors.metrics.heap_size.export: "
                      "expected true, false, \"<N>x\" (N whole flush "
                      "intervals) or \"<N>s\" (seconds), found '30m' "
                      "(write 1800s: durations are in seconds (\"<N>s\") "
                      "or flush intervals (\"<N>x\"))");
  /* On error the previous settings stay. */
  assert_true(el_cfg_enabled(c, EL_CFG_LOGS, "user_marker"));
  el_cfg_free(c);
}

static void test_quoted_bool_is_a_string(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors: {logs: {user_marker: {export: \"true\"}}}",
                     &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_int_equal(el_cfg_diag(c)->line, 1);
  assert_int_equal(el_cfg_diag(c)->column, 43);
  el_cfg_free(c);
  /* The message says why, not "expected true, ..., found 'true'" (h45). */
  expect_load_error(
      "processors:\n"
      "  metrics:\n"
      "    heap_size:\n"
      "      export: \"true\"\n",
      "t.yaml:4:15: processors.metrics.heap_size.export: "
      "'true' in quotes is a string, not a boolean: drop the "
      "quotes (export: true)");
  expect_load_error("processors: {metrics: {heap_size: {aggregate: 'False'}}}",
                    "t.yaml:1:47: processors.metrics.heap_size.aggregate: "
                    "'False' in quotes is a string, not a boolean: drop the "
                    "quotes (aggregate: False)");
}

static void test_wrong_shapes(void **state) {
  (void)state;
  expect_load_error("processors:\n  - logs\n",
                    "t.yaml:2:3: processors: expected processor groups "
                    "(a mapping), found a sequence");
  expect_load_error("processors:\n  logs:\n    user_marker: [1]\n",
                    "t.yaml:3:18: processors.logs.user_marker: expected "
                    "processor settings (a mapping), found a sequence");
  expect_load_error("processors:\n  logs:\n    user_marker:\n      name: [a]\n",
                    "t.yaml:4:13: processors.logs.user_marker.name: "
                    "expected a string, found a sequence");
  expect_load_error("- 1\n",
                    "t.yaml:1:1: expected a mapping with key "
                    "'processors', found a sequence");
}

static void test_syntax_error_position(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n  logs: {user_marker: {}\n", &rc);
  assert_int_equal(rc, EL_ECONFIG);
  const el_cfg_diag_t *d = el_cfg_diag(c);
  assert_int_equal(d->line, 3);
  assert_non_null(strstr(d->msg, "YAML syntax error"));
  assert_memory_equal(d->msg, "t.yaml:3:", 9);
  el_cfg_free(c);
}

/* Messages a tester found unclear: a tab where YAML wants spaces says
 * so; a "\u0000" escape in a name is refused (it cut the name, silently);
 * a web key is named once, with its path. Expected texts written out. */
static void test_tab_nul_and_web_key_messages(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n\tmetrics:\n", &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_non_null(
      strstr(el_cfg_diag(c)->msg, "(a tab: YAML indents with spaces only)"));
  assert_memory_equal(el_cfg_diag(c)->msg, "t.yaml:2:1:", 11);
  el_cfg_free(c);
  expect_load_error(
      "processors:\n  metrics:\n    heap_size: {name: \"a\\u0000b\"}\n",
      "t.yaml:3:23: processors.metrics.heap_size.name: the "
      "string holds a NUL character (\\0), which no name "
      "or description may");
  expect_load_error("web: {prometheus_port: abc}\n",
                    "t.yaml:1:24: web.prometheus_port: expected a port "
                    "number 0..65535, got 'abc'");
  c = load("web: {web_host: \"a b\"}\n", &rc);
  assert_int_equal(rc, EL_ECONFIG);
  assert_non_null(strstr(el_cfg_diag(c)->msg,
                         ": web.web_host: expected an address or host name"));
  el_cfg_free(c);
}

static void test_duplicate_key(void **state) {
  (void)state;
  expect_load_error(
      "processors:\n  logs:\n    user_marker: {}\n"
      "    user_marker: {}\n",
      "t.yaml:4:5: processors.logs: duplicate key "
      "'user_marker'");
}

static void test_unknown_key_suggests(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n"
                     "  metrics:\n"
                     "    heap_sise: {}\n"
                     "    heap_live: {exprot: 5s}\n"
                     "  trace: {}\n"
                     "procesors: {}\n"
                     "zzzzzzzzzzzzzzzz: 1\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 5);
  assert_string_equal(warnings[0],
                      "t.yaml:3:5: unknown key 'heap_sise' in "
                      "processors.metrics (ignored); did you mean "
                      "'heap_size'?");
  assert_string_equal(warnings[1],
                      "t.yaml:4:17: unknown key 'exprot' in "
                      "processors.metrics.heap_live (ignored); did you mean "
                      "'export'?");
  assert_string_equal(warnings[2],
                      "t.yaml:5:3: unknown key 'trace' in processors "
                      "(ignored); did you mean 'traces'?");
  assert_string_equal(warnings[3],
                      "t.yaml:6:1: unknown key 'procesors' in the top level "
                      "(ignored); did you mean 'processors'?");
  assert_string_equal(warnings[4],
                      "t.yaml:7:1: unknown key 'zzzzzzzzzzzzzzzz' in the top "
                      "level (ignored)");
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  assert_true(el_cfg_enabled(c, EL_CFG_METRICS, "heap_live"));
  el_cfg_free(c);
}

static void test_aggregate_outside_metrics_warns(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors: {logs: {user_marker: {aggregate: 1s}}}\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 1);
  assert_non_null(strstr(warnings[0], "metric processors only"));
  el_cfg_free(c);
}

static void test_old_profile_keys_are_aliases(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors: {profiles: {stack_sample: {}}}\n", &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 1);
  assert_true(el_cfg_enabled(c, EL_CFG_PROFILES, "call_stack_profile"));
  assert_false(el_cfg_enabled(c, EL_CFG_PROFILES,
                              "cost_centre_stack_profile"));
  el_cfg_free(c);
}

static void test_anchors_and_merge_keys(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("defaults:\n"
                     "  m: &m {aggregate: 2s, export: 10s}\n"
                     "processors:\n"
                     "  metrics:\n"
                     "    heap_size: {<<: *m, export: 4s}\n"
                     "    heap_live: *m\n",
                     &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 0);
  const el_cfg_proc_t *hs = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  const el_cfg_proc_t *hl = el_cfg_proc(c, EL_CFG_METRICS, "heap_live");
  assert_int_equal(hs->aggregate.ms, 2000);
  assert_int_equal(hs->export_.ms, 4000);
  assert_int_equal(hl->export_.ms, 10000);
  el_cfg_free(c);
}

static void test_empty_file_disables_everything(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("", &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 1);
  for (size_t i = 0; i < el_cfg_nprocs(); i++)
    assert_false(el_cfg_proc_at(c, i)->enabled);
  el_cfg_free(c);
}

/* A file whose one processor key is misspelt enables nothing: besides the
 * unknown key, one warning says that every processor is disabled (a
 * tester's config gave 0 telemetry after the first warning alone). */
static void test_no_processor_listed_says_all_disabled(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load("processors:\n  metrics:\n    heap_sise:\n", &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 2);
  assert_non_null(strstr(warnings[0], "unknown key 'heap_sise'"));
  assert_string_equal(warnings[1],
                      "t.yaml:1:1: no processor is listed under 'processors': "
                      "every processor is disabled (--print-defaults lists "
                      "them)");
  for (size_t i = 0; i < el_cfg_nprocs(); i++)
    assert_false(el_cfg_proc_at(c, i)->enabled);
  el_cfg_free(c);
  c = load("web: {prometheus_port: 9100}\n", &rc); /* no processors key */
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 1);
  assert_non_null(strstr(warnings[0], "every processor is disabled"));
  el_cfg_free(c);
  c = load("processors: {metrics: {heap_size: {}}}\n", &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 0);
  el_cfg_free(c);
}

static void test_missing_file(void **state) {
  (void)state;
  el_cfg_t *c = el_cfg_new();
  assert_int_equal(el_cfg_load_file(c, "/nonexistent/x.yaml"), -2);
  assert_string_equal(el_cfg_diag(c)->msg,
                      "/nonexistent/x.yaml: cannot read configuration file: "
                      "No such file or directory");
  el_cfg_free(c);
}

/* --print-defaults parses back to exactly the built-in defaults. */
static void test_print_defaults_round_trips(void **state) {
  (void)state;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_int_equal(el_cfg_print_defaults(f), 0);
  fclose(f);
  int rc;
  el_cfg_t *c = load(text, &rc);
  el_cfg_t *d = el_cfg_new();
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 0);
  for (size_t i = 0; i < el_cfg_nprocs(); i++) {
    const el_cfg_proc_t *a = el_cfg_proc_at(c, i), *b = el_cfg_proc_at(d, i);
    assert_true(a->present);
    assert_int_equal(a->enabled, b->enabled);
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->description, b->description);
    assert_memory_equal(&a->export_, &b->export_, sizeof a->export_);
    assert_memory_equal(&a->aggregate, &b->aggregate, sizeof a->aggregate);
  }
  /* Every line fits in 80 columns. */
  for (char *line = text; *line;) {
    char *nl = strchr(line, '\n');
    assert_non_null(nl);
    assert_true(nl - line <= 80);
    line = nl + 1;
  }
  free(text);
  el_cfg_free(c);
  el_cfg_free(d);
}

static void test_out_of_memory_sweep(void **state) {
  (void)state;
  const char *y = "processors: {metrics: {heap_size: {name: a}}}\n";
  size_t before = el_mem_in_use();
  for (uint64_t n = 1; n < 200; n++) {
    el_cfg_t *c = NULL;
    el_mem_fail_after(n);
    c = el_cfg_new();
    if (c) {
      int rc = el_cfg_load_string(c, "t", y, strlen(y));
      assert_true(rc == 0 || rc == EL_ENOMEM);
    }
    el_mem_fail_after(0);
    el_cfg_free(c);
  }
  assert_int_equal(el_mem_in_use(), before);
}

static void test_edit_distance(void **state) {
  (void)state;
  assert_int_equal(el_cfg_edit_distance("kitten", "sitting"), 3);
  assert_int_equal(el_cfg_edit_distance("", "abc"), 3);
  assert_int_equal(el_cfg_edit_distance("same", "same"), 0);
}

/* Command-line overrides (--export-interval, --traces/--no-traces): CLI
 * over the file over the defaults. Expected windows by hand: 500 ms export
 * with a 1 s flush interval gives batch gcd(1000, 500) = 500 ms; heap_size's
 * file aggregate 2s is shortened to the 500 ms interval. */
static void test_cli_overrides(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load(
      "processors:\n"
      "  metrics:\n"
      "    heap_size: {aggregate: 2s, export: 10s}\n"
      "  traces:\n"
      "    thread_state: {export: false}\n",
      &rc);
  assert_int_equal(rc, 0);
  assert_false(el_cfg_enabled(c, EL_CFG_TRACES, "thread_state"));
  el_cfg_override_group(c, EL_CFG_TRACES, true);
  el_cfg_override_export(c, 500);
  assert_int_equal(el_cfg_resolve(c, 1000), 0);
  assert_int_equal(el_cfg_batch_ms(c), 500);
  const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
  assert_true(p->enabled);
  assert_int_equal(p->export_ms, 500);
  assert_int_equal(p->aggregate_ms, 500);
  assert_true(el_cfg_enabled(c, EL_CFG_TRACES, "thread_state"));
  assert_true(el_cfg_enabled(c, EL_CFG_TRACES, "capability_usage"));
  /* A processor the file left out stays off: the interval does not
   * enable anything. */
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_live"));
  el_cfg_override_group(c, EL_CFG_TRACES, false);
  assert_false(el_cfg_enabled(c, EL_CFG_TRACES, "thread_state"));
  el_cfg_free(c);

  /* Without a file: traces are off by default, on when asked; the export
   * interval applies to every enabled processor (default 30s). */
  c = el_cfg_new();
  assert_non_null(c);
  el_cfg_override_group(c, EL_CFG_TRACES, true);
  el_cfg_override_export(c, 1000);
  assert_int_equal(el_cfg_resolve(c, 1000), 0);
  assert_int_equal(el_cfg_batch_ms(c), 1000);
  for (size_t i = 0; i < el_cfg_nprocs(); i++) {
    const el_cfg_proc_t *q = el_cfg_proc_at(c, i);
    /* The self-metrics are off by default; the interval does not enable
     * them either. */
    if (!strncmp(q->info->key, "internal_", 9) &&
        q->info->group == EL_CFG_METRICS) {
      assert_false(q->enabled);
      continue;
    }
    assert_true(q->enabled);
    assert_int_equal(q->export_ms, 1000);
  }
  el_cfg_free(c);
}

/* One grammar for the file and the command line (h45: --export-interval
 * took "1e3s" and a bare "5", the file neither). Values by hand. */
static void test_parse_duration(void **state) {
  (void)state;
  el_cfg_strategy_t s;
  assert_int_equal(el_cfg_parse_duration("1s", &s), 0);
  assert_int_equal(s.kind, EL_CFG_SECONDS);
  assert_int_equal(s.ms, 1000);
  assert_int_equal(el_cfg_parse_duration("0.5s", &s), 0);
  assert_int_equal(s.ms, 500);
  assert_int_equal(el_cfg_parse_duration("2x", &s), 0);
  assert_int_equal(s.kind, EL_CFG_TIMES);
  assert_int_equal(s.times, 2);
  /* Any number of digits: past the longest window the value saturates
   * (capped by el_cfg_resolve), rather than some lengths rejected. */
  assert_int_equal(el_cfg_parse_duration("99999999999999999999s", &s), 0);
  assert_true(s.ms > EL_CFG_MAX_WINDOW_MS);
  assert_int_equal(el_cfg_parse_duration("1000000000000x", &s), 0);
  assert_true(s.times >= UINT64_C(1000000000000));
  const char *bad[] = {"",    "true", "5",   "0.5", "500ms", "2m",   "1e3s",
                       "+1s", "-1s",  "1 s", "nan", "inf",   "1.5x", "x"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    assert_int_equal(el_cfg_parse_duration(bad[k], &s), EL_EINVAL);
}

/* The hint spells the accepted form of a common mistake. */
static void test_duration_hint(void **state) {
  (void)state;
  char h[160];
  static const struct {
    const char *text, *hint;
  } t[] = {
      {"5", "no unit: write 5s (seconds) or 5x (flush intervals)"},
      {"0.5", "no unit: write 0.5s (seconds)"},
      {"1e3s", "write 1000s: plain digits only"},
      {"+1s", "write 1s: plain digits only"},
      {"500ms",
       "write 0.5s: durations are in seconds (\"<N>s\") or flush "
       "intervals (\"<N>x\")"},
      {"2m",
       "write 120s: durations are in seconds (\"<N>s\") or flush "
       "intervals (\"<N>x\")"},
      {"1e9x", "write 1000000000x: plain digits only"},
      {"1.5x", "\"<N>x\" takes a whole number; write seconds"},
      {"-1s", "a duration cannot be negative"},
      {"abc", ""},
      {"1 s", ""},
  };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
    assert_string_equal(el_cfg_duration_hint(t[k].text, h, sizeof h),
                        t[k].hint);
}

/* Windows past 31.7 years are capped, whatever the number of digits
 * (h45: 10000000000s was capped, 99999999999999999999s and
 * 1000000000000x rejected). */
static void test_huge_windows_capped(void **state) {
  (void)state;
  const char *vals[] = {"10000000000s", "99999999999999999999s",
                        "1000000000000x", "99999999999999999999x"};
  for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
    char yaml[200];
    int rc;
    snprintf(yaml, sizeof yaml,
             "processors: {metrics: {heap_size: {export: %s}}}", vals[k]);
    el_cfg_t *c = load(yaml, &rc);
    assert_int_equal(rc, 0);
    const el_cfg_proc_t *p = el_cfg_proc(c, EL_CFG_METRICS, "heap_size");
    assert_true(p->enabled);
    assert_int_equal(p->export_ms, EL_CFG_MAX_WINDOW_MS);
    el_cfg_free(c);
  }
}

/* A file whose every listed processor is off by its own export is said
 * (h45: export: 0x on the only processor disabled everything without a
 * word, while an empty file got a warning). */
static void test_all_listed_disabled_warns(void **state) {
  (void)state;
  int rc;
  el_cfg_t *c = load(
      "processors:\n"
      "  metrics:\n"
      "    heap_size:\n"
      "      aggregate: 0s\n"
      "      export: 0x\n",
      &rc);
  assert_int_equal(rc, 0);
  assert_false(el_cfg_enabled(c, EL_CFG_METRICS, "heap_size"));
  assert_int_equal(nwarnings, 1);
  assert_string_equal(warnings[0],
                      "t.yaml:3:5: export: 0x disables "
                      "processors.metrics.heap_size, the only processor "
                      "listed: the file turns every processor off");
  el_cfg_free(c);
  c = load(
      "processors:\n"
      "  logs: {user_marker: {export: false}}\n"
      "  metrics: {heap_size: {export: 0s}}\n",
      &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 1);
  assert_string_equal(warnings[0],
                      "t.yaml:2:10: every processor listed is disabled by "
                      "its own export (false, 0s or 0x): the file turns "
                      "every processor off");
  el_cfg_free(c);
  /* One left on: nothing to say. */
  c = load(
      "processors:\n"
      "  logs: {user_marker: {export: false}}\n"
      "  metrics: {heap_size: {export: 2s}}\n",
      &rc);
  assert_int_equal(rc, 0);
  assert_int_equal(nwarnings, 0);
  el_cfg_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cli_overrides),
      cmocka_unit_test(test_parse_duration),
      cmocka_unit_test(test_duration_hint),
      cmocka_unit_test(test_huge_windows_capped),
      cmocka_unit_test(test_all_listed_disabled_warns),
      cmocka_unit_test(test_defaults_without_file),
      cmocka_unit_test(test_present_key_enables_with_defaults),
      cmocka_unit_test(test_newer_metric_keys),
      cmocka_unit_test(test_export_false_disables),
      cmocka_unit_test(test_properties_override),
      cmocka_unit_test(test_sub_millisecond_export_enables),
      cmocka_unit_test(test_empty_name_is_an_error),
      cmocka_unit_test(test_merge_key_bomb_is_refused),
      cmocka_unit_test(test_huge_windows_are_capped),
      cmocka_unit_test(test_encoding_error_position),
      cmocka_unit_test(test_deep_nesting_and_huge_mappings_are_refused),
      cmocka_unit_test(test_strategy_grammar),
      cmocka_unit_test(test_flush_interval_units),
      cmocka_unit_test(test_type_error_names_line_column_key),
      cmocka_unit_test(test_quoted_bool_is_a_string),
      cmocka_unit_test(test_wrong_shapes),
      cmocka_unit_test(test_syntax_error_position),
      cmocka_unit_test(test_tab_nul_and_web_key_messages),
      cmocka_unit_test(test_duplicate_key),
      cmocka_unit_test(test_unknown_key_suggests),
      cmocka_unit_test(test_aggregate_outside_metrics_warns),
      cmocka_unit_test(test_old_profile_keys_are_aliases),
      cmocka_unit_test(test_anchors_and_merge_keys),
      cmocka_unit_test(test_empty_file_disables_everything),
      cmocka_unit_test(test_no_processor_listed_says_all_disabled),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_print_defaults_round_trips),
      cmocka_unit_test(test_out_of_memory_sweep),
      cmocka_unit_test(test_edit_distance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
