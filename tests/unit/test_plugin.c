/* test_plugin.c: the plugin loader (src/plugin/plugin.h) on two fake
 * plugins (fake_plugin.c, built into FAKE_PLUGIN_DIR): a table is found by
 * its name ('-' becomes '_' in the symbol), opened once, refused when its
 * interface version differs; a missing file and a file that is no shared
 * object are errors naming the file and the folder or dlerror()'s reason.
 * The real plugins are checked through the binary (e2e/test_plugins).
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/plugin.h"

typedef struct {
  el_plugin_head_t head;
  int (*answer)(void);
} fake_table_t;

static void use_dir(const char *dir) {
  assert_int_equal(setenv("EL_PLUGIN_DIR", dir, 1), 0);
}

static void test_opens_checks_version_and_caches(void **state) {
  char err[1024] = "";
  use_dir(FAKE_PLUGIN_DIR);
  /* Version 8 asked, the plugin has 7: refused, naming both. */
  assert_null(el_plugin_load("fake", "the fake", 8, err, sizeof err));
  assert_non_null(strstr(err, "cannot load the fake: plugin " FAKE_PLUGIN_DIR
                              "/eventlog-live-fake.so has interface version "
                              "7, this eventlog-live needs 8"));
  const fake_table_t *t =
      el_plugin_load("fake", "the fake", 7, err, sizeof err);
  assert_non_null(t);
  assert_string_equal(t->head.name, "fake");
  assert_int_equal(t->head.abi, 7);
  assert_int_equal(t->answer(), 42);
  /* Opened once: the same table, even from another folder now. */
  use_dir("/nonexistent");
  assert_ptr_equal(el_plugin_load("fake", "the fake", 7, err, sizeof err), t);
}

static void test_dash_in_name(void **state) {
  char err[1024] = "";
  use_dir(FAKE_PLUGIN_DIR);
  const fake_table_t *t =
      el_plugin_load("fake-dash", "the other fake", 7, err, sizeof err);
  assert_non_null(t);
  assert_string_equal(t->head.name, "fake-dash");
  assert_int_equal(t->answer(), 43);
}

static void test_missing_file(void **state) {
  char err[1024] = "";
  use_dir(FAKE_PLUGIN_DIR);
  assert_null(el_plugin_load("absent", "the absent part", 1, err, sizeof err));
  assert_string_equal(err,
                      "cannot load the absent part: plugin "
                      "eventlog-live-absent.so not found in " FAKE_PLUGIN_DIR
                      " (install it there, or set EL_PLUGIN_DIR to its "
                      "folder)");
}

static void test_not_a_shared_object(void **state) {
  char dir[] = "/tmp/el_plugin_XXXXXX", path[256], err[1024] = "";
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/eventlog-live-junk.so", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("not an ELF file\n", f);
  fclose(f);
  use_dir(dir);
  assert_null(el_plugin_load("junk", "the junk", 1, err, sizeof err));
  char want[512];
  snprintf(want, sizeof want, "cannot load the junk: %s: ", path);
  assert_int_equal(strncmp(err, want, strlen(want)), 0);
  assert_true(strlen(err) > strlen(want)); /* dlerror()'s reason follows */
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opens_checks_version_and_caches),
      cmocka_unit_test(test_dash_in_name),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_not_a_shared_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
