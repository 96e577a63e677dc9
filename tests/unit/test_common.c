/* test_common.c: the shared primitives of src/common: array growth
 * (el_grow.h), the hash function (el_hash.h),
 * out of memory included (el_mem_fail_after). Expected values
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
#include "common/el_hash.h"

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

/* {====== el_hash ======} */

static void test_hash_u64_is_bytes_hash(void **state) {
  (void)state;
  uint64_t keys[] = {0, 1, 2, 42, 0xffffffffu, 0x8000000000000000u,
                     UINT64_MAX};
  for (size_t i = 0; i < EL_ARRAY_LEN(keys); i++)
    assert_true(el_hash_u64(keys[i]) == el_hash_bytes(&keys[i], 8, 0));
}

static void test_hash_depends_on_every_byte_and_seed(void **state) {
  (void)state;
  char s[40] = "the quick brown fox jumps over the lazy";
  for (size_t len = 0; len <= 39; len++) {
    uint64_t h = el_hash_bytes(s, len, 0);
    assert_true(h == el_hash_bytes(s, len, 0));        /* deterministic */
    assert_true(h != el_hash_bytes(s, len, 1));        /* seed */
    if (len < 39) assert_true(h != el_hash_bytes(s, len + 1, 0));
    for (size_t i = 0; i < len; i++) {                  /* each byte */
      s[i] ^= 1;
      assert_true(h != el_hash_bytes(s, len, 0));
      s[i] ^= 1;
    }
  }
  assert_true(el_hash_str("abc", 7) == el_hash_bytes("abc", 3, 7));
  assert_true(el_hash_str(NULL, 7) == el_hash_bytes("", 0, 7));
}

static void test_hash_spreads_low_bits(void **state) {
  (void)state;
  /* Sequential integer keys fill a 1024-slot table's low bits evenly: no
   * slot gets more than a handful of 4096 keys. */
  unsigned count[1024] = {0};
  for (uint64_t k = 0; k < 4096; k++) count[el_hash_u64(k) & 1023]++;
  unsigned max = 0;
  for (size_t i = 0; i < 1024; i++)
    if (count[i] > max) max = count[i];
  assert_true(max <= 16);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grow_doubles_from_min),
      cmocka_unit_test(test_grow_refuses_overflow),
      cmocka_unit_test(test_grow_out_of_memory_leaves_array),
      cmocka_unit_test(test_hash_u64_is_bytes_hash),
      cmocka_unit_test(test_hash_depends_on_every_byte_and_seed),
      cmocka_unit_test(test_hash_spreads_low_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
