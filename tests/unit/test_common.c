/* test_common.c: the shared primitives of src/common: array growth
 * (el_grow.h), out of memory included (el_mem_fail_after). Expected values
 * are hand computations from each header's contract.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/el_common.h"
#include "common/el_grow.h"

/* {====== el_grow ======} */

static void test_grow_doubles_from_min(void **state) {
  (void)state;
  int *a = NULL;
  size_t cap = 0;
  assert_int_equal(el_grow(&a, &cap, 1, sizeof *a), 0);
  assert_non_null(a);
  assert_int_equal(cap, EL_GROW_MIN);
  for (int i = 0; i < EL_GROW_MIN; i++) a[i] = i;
  assert_int_equal(el_grow(&a, &cap, EL_GROW_MIN, sizeof *a), 0);
  assert_int_equal(cap, EL_GROW_MIN);            /* enough already */
  assert_int_equal(el_grow(&a, &cap, EL_GROW_MIN + 1, sizeof *a), 0);
  assert_int_equal(cap, 2 * EL_GROW_MIN);
  assert_int_equal(el_grow(&a, &cap, 5 * EL_GROW_MIN, sizeof *a), 0);
  assert_int_equal(cap, 8 * EL_GROW_MIN);        /* 16 -> 32 -> 64 */
  for (int i = 0; i < EL_GROW_MIN; i++) assert_int_equal(a[i], i);
  el_free(a);
}

static void test_grow_refuses_overflow(void **state) {
  (void)state;
  char *a = NULL;
  size_t cap = 0;
  assert_int_equal(el_grow(&a, &cap, SIZE_MAX, 1), EL_ENOMEM);
  assert_null(a);
  assert_int_equal(cap, 0);
  double *d = NULL;
  assert_int_equal(el_grow(&d, &cap, SIZE_MAX / 4, sizeof *d), EL_ENOMEM);
  assert_null(d);
  assert_int_equal(cap, 0);
}

static void test_grow_out_of_memory_leaves_array(void **state) {
  (void)state;
  long *a = NULL;
  size_t cap = 0;
  assert_int_equal(el_grow(&a, &cap, 3, sizeof *a), 0);
  a[0] = 42;
  long *before = a;
  el_mem_fail_after(1);
  assert_int_equal(el_grow(&a, &cap, 100, sizeof *a), EL_ENOMEM);
  el_mem_fail_after(0);
  assert_ptr_equal(a, before);
  assert_int_equal(cap, EL_GROW_MIN);
  assert_int_equal(a[0], 42);
  el_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grow_doubles_from_min),
      cmocka_unit_test(test_grow_refuses_overflow),
      cmocka_unit_test(test_grow_out_of_memory_leaves_array),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
