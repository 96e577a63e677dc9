/* test_common.c: the shared primitives of src/common: array growth
 * (el_grow.h), the hash function (el_hash.h), the hash table (el_map.h),
 * integer formatting (el_fmt.h), out of memory included (el_mem_fail_after). Expected values
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
#include "common/el_map.h"
#include "common/el_fmt.h"
#include "common/el_buf.h"
#include "common/el_arena.h"
#include "common/el_rng.h"
#include "common/el_utf8.h"
#include "common/el_mapguard.h"
#include "common/el_rtsguard.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* {====== el_mapguard ======} */

/* A temporary file of two pages, mapped, then truncated to nothing: any
 * read of the mapping raises SIGBUS. */
static volatile uint8_t *shrunk_map(size_t *len) {
  size_t n = 2 * (size_t)sysconf(_SC_PAGESIZE);
  char path[] = "/tmp/el_test_guardXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(ftruncate(fd, (off_t)n), 0);
  void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
  assert_true(m != MAP_FAILED);
  assert_int_equal(ftruncate(fd, 0), 0);
  close(fd);
  *len = n;
  return m;
}

static sigjmp_buf test_env;
static volatile sig_atomic_t test_handler_calls;

/* The test's own SIGBUS handler, the one a guard must chain to. */
static void test_on_bus(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
  test_handler_calls++;
  siglongjmp(test_env, 1);
}

/* A fault inside the guarded range returns to the guard with its offset;
 * nested guards: the inner one gets its own fault. */
static void test_mapguard_fault_returns_offset(void **state) {
  (void)state;
  size_t n;
  volatile uint8_t *m = shrunk_map(&n);
  el_mapguard_t outer, inner;
  volatile int outer_faults = 0, inner_faults = 0;
  assert_int_equal(el_mapguard_push(&outer, (const void *)m, n), 0);
  if (sigsetjmp(outer.env, 1)) {
    el_mapguard_pop(&outer);
    outer_faults++;
  } else {
    assert_int_equal(el_mapguard_push(&inner, (const void *)(m + n / 2), n / 2),
                     0);
    if (sigsetjmp(inner.env, 1)) {
      el_mapguard_pop(&inner);
      inner_faults++;
    } else {
      (void)m[n / 2 + 7]; /* byte 7 of the inner range */
      el_mapguard_pop(&inner);
    }
    assert_int_equal(inner.fault_offset, 7);
    (void)m[100];
    el_mapguard_pop(&outer);
  }
  assert_int_equal(inner_faults, 1);
  assert_int_equal(outer_faults, 1);
  assert_int_equal(outer.fault_offset, 100);
  munmap((void *)m, n);
}

/* A SIGBUS outside the guarded range goes to the handler installed
 * before the guard, and that handler is back once the guard is popped. */
static void test_mapguard_chains_and_restores(void **state) {
  (void)state;
  struct sigaction sa, old, now;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = test_on_bus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGBUS, &sa, &old), 0);
  size_t n, n2;
  volatile uint8_t *m = shrunk_map(&n), *other = shrunk_map(&n2);
  el_mapguard_t g;
  test_handler_calls = 0;
  assert_int_equal(el_mapguard_push(&g, (const void *)m, n), 0);
  if (sigsetjmp(g.env, 1)) {
    el_mapguard_pop(&g);
    fail_msg("the guard took a fault outside its range");
  }
  if (sigsetjmp(test_env, 1) == 0) (void)other[5];
  el_mapguard_pop(&g);
  assert_int_equal(test_handler_calls, 1);
  assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
  assert_true((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == test_on_bus);
  assert_int_equal(sigaction(SIGBUS, &old, NULL), 0);
  munmap((void *)m, n);
  munmap((void *)other, n2);
}

/* {====== el_rtsguard ======} */

/* What a child with the filter does (rtsguard_outcome's op). */
enum {
  RG_NOTHING,
  RG_MMAP_1M,
  RG_MMAP_4G,
  RG_TIMER,
  RG_RLIMIT_STACK,
  RG_RLIMIT_AS,
  RG_SIGTERM,
  RG_SIGINT,
  RG_FORK,
  RG_EXEC_TRUE,
  RG_X32 /* getpid as an x32 call (x86-64): another ABI */
};

/* Fork a child that installs the filter and then does op: returns its
 * wait status; 77 << 8 (exit 77) when the filter could not be installed. */
static int rtsguard_outcome(int op) {
  pid_t pid = fork();
  if (pid == 0) {
    if (el_rtsguard_install() != 0) _exit(77);
    struct rlimit rl;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    timer_t t;
    switch (op) {
    case RG_MMAP_1M:
    case RG_MMAP_4G: {
      size_t len = op == RG_MMAP_1M ? (size_t)1 << 20 : (size_t)1 << 32;
      void *m = mmap(NULL, len, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      _exit(m == MAP_FAILED ? 2 : 0);
    }
    case RG_TIMER:
      _exit(timer_create(CLOCK_MONOTONIC, NULL, &t) ? 2 : 0);
    case RG_RLIMIT_STACK:
      _exit(getrlimit(RLIMIT_STACK, &rl) ? 2 : 0);
    case RG_RLIMIT_AS:
      _exit(getrlimit(RLIMIT_AS, &rl) ? 2 : 0);
    case RG_SIGTERM:
      _exit(sigaction(SIGTERM, &sa, NULL) ? 2 : 0);
    case RG_SIGINT:
      _exit(sigaction(SIGINT, &sa, NULL) ? 2 : 0);
    case RG_FORK:
      _exit(fork() < 0 ? 2 : 0);
    case RG_EXEC_TRUE:
      execl("/bin/true", "true", (char *)NULL);
      _exit(2);
#ifdef __x86_64__
    case RG_X32: /* bit 30: the x32 ABI; ENOSYS where the kernel lacks it */
      _exit(syscall(0x40000000L | SYS_getpid) < 0 ? 2 : 0);
#endif
    default:
      _exit(0);
    }
  }
  int st = 0;
  assert_true(pid > 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return st;
}

/* The filter kills (SIGSYS) at each tripwire of el_rtsguard.h and at an
 * x32 call, and lets the calls the loader, glibc and an RTS's flag
 * parsing make through; an exec'd program inherits it. Built in the
 * parent, as watch does (el_rtsguard_prepare), installed in each child. */
static void test_rtsguard_tripwires(void **state) {
  (void)state;
  int pr = el_rtsguard_prepare();
  if (pr == -ENOTSUP) skip(); /* no filter for this architecture */
  assert_int_equal(pr, 0);
  int st = rtsguard_outcome(RG_NOTHING);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 77) skip(); /* no seccomp here */
  static const int allowed[] = {RG_NOTHING, RG_MMAP_1M, RG_RLIMIT_STACK,
                                RG_SIGTERM, RG_EXEC_TRUE};
  static const int killed[] = {RG_MMAP_4G, RG_TIMER, RG_RLIMIT_AS,
                               RG_SIGINT,  RG_FORK,
#ifdef __x86_64__
                               RG_X32
#endif
  };
  for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
    st = rtsguard_outcome(allowed[i]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fail_msg("op %d: status 0x%x, want exit 0", allowed[i], st);
  }
  for (size_t i = 0; i < sizeof killed / sizeof killed[0]; i++) {
    st = rtsguard_outcome(killed[i]);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
      fail_msg("op %d: status 0x%x, want SIGSYS", killed[i], st);
  }
}

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
  assert_int_equal(cap, EL_GROW_MIN); /* enough already */
  assert_int_equal(el_grow(&a, &cap, EL_GROW_MIN + 1, sizeof *a), 0);
  assert_int_equal(cap, 2 * EL_GROW_MIN);
  assert_int_equal(el_grow(&a, &cap, 5 * EL_GROW_MIN, sizeof *a), 0);
  assert_int_equal(cap, 8 * EL_GROW_MIN); /* 16 -> 32 -> 64 */
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

/* The VmFlags line of the mapping holding p, from /proc/self/smaps (the
 * kernel's own account), into flags; 0 when found. */
static int smaps_flags(const void *p, char *flags, size_t cap) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[480];
  int in = 0, found = -1;
  if (!f) return -1;
  while (found < 0 && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's header */
      in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    else if (in && strncmp(line, "VmFlags:", 8) == 0) {
      snprintf(flags, cap, "%s", line);
      found = 0;
    }
  }
  fclose(f);
  return found;
}

/* el_huge_alloc: a 2 MiB-aligned block of its size rounded up to 2 MiB,
 * zeroed, writable to its last byte, advised for huge pages (the kernel's
 * VmFlags show "hg" where it has THP), counted in el_mem_in_use until el_huge_free; NULL
 * when the size overflows or an allocation is made to fail. */
static void test_huge_alloc(void **state) {
  (void)state;
  const size_t mib = (size_t)1 << 20;
  assert_int_equal(el_huge_len(1), 2 * mib);
  assert_int_equal(el_huge_len(2 * mib), 2 * mib);
  assert_int_equal(el_huge_len(2 * mib + 1), 4 * mib);
  assert_int_equal(el_huge_len(SIZE_MAX), 0);
  assert_null(el_huge_alloc(SIZE_MAX));
  size_t before = el_mem_in_use();
  unsigned char *p = el_huge_alloc(3 * mib);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % (2 * mib), 0);
  assert_int_equal(el_mem_in_use() - before, 4 * mib);
  assert_int_equal(p[0] | p[3 * mib] | p[4 * mib - 1], 0);
  memset(p, 0xab, 4 * mib);
  assert_int_equal(p[4 * mib - 1], 0xab);
  char flags[512];
  assert_int_equal(smaps_flags(p, flags, sizeof flags), 0);
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0)
    assert_non_null(strstr(flags, " hg")); /* a kernel with THP */
  el_huge_free(p, 3 * mib);
  assert_int_equal(el_mem_in_use(), before);
  el_huge_free(NULL, 3 * mib);
  el_mem_fail_after(1);
  assert_null(el_huge_alloc(mib));
  el_mem_fail_after(0);
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
  uint64_t keys[] = {0, 1, 2, 42, 0xffffffffu, 0x8000000000000000u, UINT64_MAX};
  for (size_t i = 0; i < EL_ARRAY_LEN(keys); i++)
    assert_true(el_hash_u64(keys[i]) == el_hash_bytes(&keys[i], 8, 0));
}

static void test_hash_depends_on_every_byte_and_seed(void **state) {
  (void)state;
  char s[40] = "the quick brown fox jumps over the lazy";
  for (size_t len = 0; len <= 39; len++) {
    uint64_t h = el_hash_bytes(s, len, 0);
    assert_true(h == el_hash_bytes(s, len, 0)); /* deterministic */
    assert_true(h != el_hash_bytes(s, len, 1)); /* seed */
    if (len < 39) assert_true(h != el_hash_bytes(s, len + 1, 0));
    for (size_t i = 0; i < len; i++) { /* each byte */
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

/* {====== el_map ======} */

static void test_map_integer_keys(void **state) {
  (void)state;
  el_map_t m = {0};
  uint32_t v = 7;
  assert_int_equal(el_map_get(&m, 1, &v), 0); /* empty map */
  assert_int_equal(v, 7);
  for (uint32_t i = 0; i < 1000; i++)
    assert_int_equal(el_map_put(&m, (uint64_t)i * 1000003u, i), 0);
  assert_int_equal(el_map_count(&m), 1000);
  assert_true(m.cap >= 2000); /* at most half full */
  for (uint32_t i = 0; i < 1000; i++) {
    assert_int_equal(el_map_get(&m, (uint64_t)i * 1000003u, &v), 1);
    assert_int_equal(v, i);
  }
  assert_int_equal(el_map_get(&m, 5, &v), 0);
  assert_int_equal(el_map_put(&m, 0, 99), 0); /* replace */
  assert_int_equal(el_map_count(&m), 1000);
  assert_int_equal(el_map_get(&m, 0, &v), 1);
  assert_int_equal(v, 99);
  assert_int_equal(el_map_put(&m, 3, EL_MAP_NONE), EL_EINVAL);
  size_t cap = m.cap;
  el_map_clear(&m);
  assert_int_equal(el_map_count(&m), 0);
  assert_int_equal(m.cap, cap); /* memory kept */
  assert_int_equal(el_map_get(&m, 0, &v), 0);
  el_map_free(&m);
  assert_null(m.slots);
}

static void test_map_several_values_per_key(void **state) {
  (void)state;
  el_map_t m = {0};
  /* Three entries under one (hash) key, one under another. */
  assert_int_equal(el_map_add(&m, 77, 1), 0);
  assert_int_equal(el_map_add(&m, 78, 2), 0);
  assert_int_equal(el_map_add(&m, 77, 3), 0);
  assert_int_equal(el_map_add(&m, 77, 4), 0);
  size_t pos;
  unsigned seen = 0, n = 0;
  for (uint32_t v = el_map_first(&m, 77, &pos); v != EL_MAP_NONE;
       v = el_map_next(&m, 77, &pos)) {
    seen |= 1u << v;
    n++;
  }
  assert_int_equal(n, 3);
  assert_int_equal(seen, (1u << 1) | (1u << 3) | (1u << 4));
  assert_int_equal(el_map_first(&m, 79, &pos), EL_MAP_NONE);
  el_map_free(&m);
  assert_int_equal(el_map_first(&m, 77, &pos), EL_MAP_NONE);
}

static void test_map_reserve_then_add_does_not_allocate(void **state) {
  (void)state;
  el_map_t m = {0};
  assert_int_equal(el_map_reserve(&m, 100), 0);
  uint64_t before = el_mem_alloc_count();
  for (uint32_t i = 0; i < 100; i++) assert_int_equal(el_map_add(&m, i, i), 0);
  assert_int_equal(el_mem_alloc_count(), before);
  el_map_free(&m);
}

static void test_map_out_of_memory_leaves_map(void **state) {
  (void)state;
  el_map_t m = {0};
  uint32_t i = 0, v;
  el_mem_fail_after(1);
  assert_int_equal(el_map_put(&m, 1, 1), EL_ENOMEM); /* first table */
  el_mem_fail_after(0);
  assert_int_equal(el_map_count(&m), 0);
  size_t cap;
  do { /* fill up to the next growth */
    assert_int_equal(el_map_put(&m, i, i), 0);
    i++;
    cap = m.cap;
  } while ((el_map_count(&m) + 1) * 2 <= cap);
  el_mem_fail_after(1);
  assert_int_equal(el_map_put(&m, 100000, 5), EL_ENOMEM);
  el_mem_fail_after(0);
  assert_int_equal(m.cap, cap);
  assert_int_equal(el_map_count(&m), i);
  assert_int_equal(el_map_get(&m, 100000, &v), 0);
  el_mem_fail_after(1);                       /* replacing: no */
  assert_int_equal(el_map_put(&m, 0, 12), 0); /* allocation */
  el_mem_fail_after(0);
  for (uint32_t k = 1; k < i; k++) {
    assert_int_equal(el_map_get(&m, k, &v), 1);
    assert_int_equal(v, k);
  }
  el_map_free(&m);
}

/* {====== el_fmt ======} */

static void test_fmt_decimal(void **state) {
  (void)state;
  char buf[64];
  struct {
    uint64_t v;
    const char *s;
  } u[] = {{0, "0"},
           {7, "7"},
           {10, "10"},
           {99, "99"},
           {100, "100"},
           {12345, "12345"},
           {1000000007u, "1000000007"},
           {UINT64_MAX, "18446744073709551615"}};
  for (size_t i = 0; i < EL_ARRAY_LEN(u); i++) {
    char *e = el_fmt_u64(buf, u[i].v);
    assert_int_equal(e - buf, strlen(u[i].s));
    assert_memory_equal(buf, u[i].s, strlen(u[i].s));
  }
  struct {
    int64_t v;
    const char *s;
  } i64[] = {{0, "0"},
             {-1, "-1"},
             {-100, "-100"},
             {42, "42"},
             {INT64_MAX, "9223372036854775807"},
             {INT64_MIN, "-9223372036854775808"}};
  for (size_t i = 0; i < EL_ARRAY_LEN(i64); i++) {
    char *e = el_fmt_i64(buf, i64[i].v);
    *e = '\0';
    assert_string_equal(buf, i64[i].s);
  }
}

static void test_fmt_stays_in_its_room(void **state) {
  (void)state;
  char buf[EL_FMT_I64_ROOM + 8];
  memset(buf, 'z', sizeof buf);
  el_fmt_i64(buf, INT64_MIN);
  for (size_t i = EL_FMT_I64_ROOM; i < sizeof buf; i++)
    assert_int_equal(buf[i], 'z');
  memset(buf, 'z', sizeof buf);
  el_fmt_x64(buf, UINT64_MAX);
  for (size_t i = EL_FMT_X64_ROOM; i < sizeof buf; i++)
    assert_int_equal(buf[i], 'z');
}

static void test_fmt_hex(void **state) {
  (void)state;
  char buf[64];
  *el_fmt_x64(buf, 0) = '\0';
  assert_string_equal(buf, "0");
  *el_fmt_x64(buf, 0xdeadbeef01u) = '\0';
  assert_string_equal(buf, "deadbeef01");
  *el_fmt_x64(buf, UINT64_MAX) = '\0';
  assert_string_equal(buf, "ffffffffffffffff");
  const uint8_t id[4] = {0x00, 0x0f, 0xa5, 0xff};
  char *e = el_fmt_hex(buf, id, 4);
  *e = '\0';
  assert_string_equal(buf, "000fa5ff");
  assert_ptr_equal(el_fmt_hex(buf, id, 0), buf);
}

/* {====== el_buf ======} */

static void test_buf_appends_and_stays_terminated(void **state) {
  (void)state;
  el_buf_t b = EL_BUF_INIT;
  el_buf_put(&b, NULL, 0);
  assert_non_null(b.p);
  assert_string_equal(b.p, "");
  el_buf_puts(&b, "abc");
  el_buf_put(&b, "defgh", 2);
  el_buf_printf(&b, "[%d|%s]", 42, "x");
  el_buf_put_u64(&b, UINT64_MAX);
  el_buf_puts(&b, " ");
  el_buf_put_i64(&b, INT64_MIN);
  assert_false(b.oom);
  const char *want = "abcde[42|x]18446744073709551615 -9223372036854775808";
  assert_string_equal(b.p, want);
  assert_int_equal(b.len, strlen(want));
  el_buf_truncate(&b, 3);
  assert_string_equal(b.p, "abc");
  el_buf_reset(&b);
  assert_int_equal(b.len, 0);
  assert_string_equal(b.p, "");
  el_buf_free(&b);
  assert_null(b.p);
}

static void test_buf_long_printf_and_reserve(void **state) {
  (void)state;
  el_buf_t b = EL_BUF_INIT;
  char big[1000];
  memset(big, 'q', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  el_buf_printf(&b, "<%s>", big); /* past printf's 256 */
  assert_int_equal(b.len, 1001);
  assert_int_equal(b.p[0], '<');
  assert_int_equal(b.p[1000], '>');
  assert_int_equal(b.p[1001], '\0');
  char *w = el_buf_reserve(&b, 10);
  assert_non_null(w);
  memcpy(w, "0123", 4);
  el_buf_commit(&b, 4);
  assert_int_equal(b.len, 1005);
  assert_string_equal(b.p + 1001, "0123");
  el_buf_free(&b);
}

static void test_buf_moves_off_caller_storage(void **state) {
  (void)state;
  char stack[8];
  el_buf_t b;
  el_buf_init_on(&b, stack, sizeof stack);
  el_buf_puts(&b, "1234567"); /* fits with its NUL */
  assert_ptr_equal(b.p, stack);
  el_buf_puts(&b, "89"); /* does not */
  assert_ptr_not_equal(b.p, stack);
  assert_string_equal(b.p, "123456789");
  assert_memory_equal(stack, "1234567", 8);
  char *s = el_buf_take(&b);
  assert_string_equal(s, "123456789");
  assert_null(b.p);
  el_free(s);
  el_buf_init_on(&b, stack, sizeof stack); /* take from storage */
  el_buf_puts(&b, "ab");
  s = el_buf_take(&b);
  assert_ptr_not_equal(s, stack);
  assert_string_equal(s, "ab");
  el_free(s);
  el_buf_t e = EL_BUF_INIT; /* take of nothing */
  s = el_buf_take(&e);
  assert_string_equal(s, "");
  el_free(s);
}

static void test_buf_out_of_memory_is_sticky(void **state) {
  (void)state;
  el_buf_t b = EL_BUF_INIT;
  el_buf_puts(&b, "kept");
  char big[300];
  memset(big, 'x', sizeof big);
  el_mem_fail_after(1);
  el_buf_put(&b, big, sizeof big); /* needs a growth */
  el_mem_fail_after(0);
  assert_true(b.oom);
  el_buf_puts(&b, "!"); /* ignored from now */
  assert_string_equal(b.p, "kept");
  assert_null(el_buf_reserve(&b, 1));
  assert_null(el_buf_take(&b)); /* and freed */
  assert_null(b.p);
  char stack[4];
  el_buf_init_on(&b, stack, sizeof stack);
  el_mem_fail_after(1);
  el_buf_puts(&b, "too long");
  el_mem_fail_after(0);
  assert_true(b.oom);
  assert_ptr_equal(b.p, stack);
  el_buf_reset(&b); /* clears oom */
  assert_false(b.oom);
  el_buf_puts(&b, "ok");
  assert_string_equal(b.p, "ok");
  el_buf_free(&b);
}

/* {====== el_arena ======} */

static void test_arena_aligns_and_counts(void **state) {
  (void)state;
  el_arena_t a = {0};
  char *p1 = el_arena_alloc(&a, 1);
  char *p2 = el_arena_alloc(&a, 13);
  char *p3 = el_arena_alloc(&a, 0);
  assert_non_null(p1);
  assert_true((uintptr_t)p1 % EL_ARENA_ALIGN == 0);
  assert_true((uintptr_t)p2 % EL_ARENA_ALIGN == 0);
  assert_true((uintptr_t)p3 % EL_ARENA_ALIGN == 0);
  assert_true(p2 >= p1 + 1 && p3 >= p2 + 13);
  assert_int_equal(a.bytes, 8 + 16 + 8);
  memset(p2, 0x5a, 13);
  uint64_t *z = el_arena_calloc(&a, 64);
  for (int i = 0; i < 8; i++) assert_true(z[i] == 0);
  char *s = el_arena_strndup(&a, "hello world", 5);
  assert_string_equal(s, "hello");
  int src[3] = {1, 2, 3};
  int *d = el_arena_memdup(&a, src, sizeof src);
  assert_memory_equal(d, src, sizeof src);
  el_arena_free(&a);
  assert_null(a.head);
  assert_int_equal(a.bytes, 0);
}

static void test_arena_many_chunks_and_big_requests(void **state) {
  (void)state;
  el_arena_t a = {.chunk_bytes = 1024};
  char *ptrs[600];
  for (int i = 0; i < 600; i++) { /* ~19 chunks of 1 KiB */
    ptrs[i] = el_arena_alloc(&a, 30);
    memset(ptrs[i], i & 0xff, 30);
  }
  char *big = el_arena_alloc(&a, 5000); /* a chunk of its own */
  memset(big, 0xee, 5000);
  char *after = el_arena_alloc(&a, 8); /* still the same chunk */
  assert_ptr_equal(after, ptrs[599] + 32);
  for (int i = 0; i < 600; i++)
    for (int k = 0; k < 30; k++)
      assert_int_equal((uint8_t)ptrs[i][k], i & 0xff);
  el_arena_free(&a);
}

static void test_arena_reset_reuses_chunks(void **state) {
  (void)state;
  el_arena_t a = {.chunk_bytes = 512};
  for (int i = 0; i < 10; i++) assert_non_null(el_arena_alloc(&a, 100));
  assert_non_null(el_arena_alloc(&a, 1000)); /* big: freed at reset */
  el_arena_reset(&a);
  assert_null(a.head);
  assert_int_equal(a.bytes, 0);
  uint64_t before = el_mem_alloc_count();
  for (int i = 0; i < 10; i++) assert_non_null(el_arena_alloc(&a, 100));
  assert_int_equal(el_mem_alloc_count(), before); /* spare chunks only */
  el_arena_free(&a);
  assert_null(a.spare);
}

/* A request of exactly the chunk size takes a spare chunk as any other
 * chunk of that size does: rounds of the same allocations, each ended by
 * a reset, keep the same memory (h79: a render arena whose every round
 * asked for chunk-sized blocks gained a spare chunk per such block per
 * round, ~4 MB/s with live traces on the console). The memory after the
 * first round is the bound: nothing more is allocated after it. */
static void test_arena_rounds_of_chunk_sized_requests(void **state) {
  (void)state;
  el_arena_t a = {.chunk_bytes = 512};
  size_t after_first = 0;
  uint64_t allocs = 0;
  for (int round = 0; round < 50; round++) {
    for (int i = 0; i < 4; i++) {
      assert_non_null(el_arena_alloc(&a, 100));
      assert_non_null(el_arena_alloc(&a, 512)); /* the chunk size */
    }
    el_arena_reset(&a);
    if (round == 0) {
      after_first = el_mem_in_use();
      allocs = el_mem_alloc_count();
    }
  }
  assert_int_equal(el_mem_in_use(), after_first);
  assert_int_equal(el_mem_alloc_count(), allocs);
  el_arena_free(&a);
}

static void test_arena_reserve_commit(void **state) {
  (void)state;
  el_arena_t a = {.chunk_bytes = 64};
  char *w = el_arena_reserve(&a, 10);
  memcpy(w, "abc", 3);
  el_arena_commit(&a, 3);
  char *w2 = el_arena_reserve(&a, 10);
  assert_ptr_equal(w2, w + 3); /* no alignment */
  memcpy(w2, "defg", 4);
  el_arena_commit(&a, 4);
  assert_memory_equal(w, "abcdefg", 7);
  char *w3 = el_arena_reserve(&a, 100); /* more than a chunk */
  assert_non_null(w3);
  memset(w3, 'x', 100);
  el_arena_commit(&a, 100);
  assert_memory_equal(w, "abcdefg", 7); /* earlier bytes stay */
  char *p = el_arena_alloc(&a, 8);      /* aligned again */
  assert_true((uintptr_t)p % EL_ARENA_ALIGN == 0);
  assert_int_equal(a.bytes, 3 + 4 + 100 + 8);
  el_arena_free(&a);
}

static void test_arena_out_of_memory(void **state) {
  (void)state;
  el_arena_t a = {0};
  el_mem_fail_after(1);
  assert_null(el_arena_alloc(&a, 10));
  assert_null(a.head);
  el_mem_fail_after(1);
  assert_null(el_arena_reserve(&a, 10));
  el_mem_fail_after(0);
  char *p = el_arena_alloc(&a, 10);
  assert_non_null(p);
  el_mem_fail_after(1);
  assert_null(el_arena_alloc(&a, EL_ARENA_CHUNK)); /* its own chunk */
  el_mem_fail_after(0);
  assert_int_equal(a.bytes, 16);
  assert_non_null(el_arena_alloc(&a, EL_ARENA_CHUNK));
  el_arena_free(&a);
}

/* {====== el_rng ======} */

static void test_rng_bytes_vary(void **state) {
  (void)state;
  uint8_t a[37], b[37];
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  el_rng_bytes(a, sizeof a);
  el_rng_bytes(b, sizeof b);
  assert_memory_not_equal(a, b, sizeof a);
  /* Each bit position is set in some of 64 draws and clear in others. */
  uint64_t or = 0, and = UINT64_MAX;
  for (int i = 0; i < 64; i++) {
    uint64_t r = el_rng_next();
    or |= r;
    and &= r;
  }
  assert_true(or == UINT64_MAX);
  assert_true(and == 0);
  uint8_t guard[4] = {1, 2, 3, 4};
  el_rng_bytes(guard, 0); /* n = 0 writes nothing */
  assert_int_equal(guard[0], 1);
}

/* el_rng_next is xoshiro256** (Blackman and Vigna): from the state
 * {1, 2, 3, 4} the reference implementation (xoshiro256starstar.c) gives
 * these ten outputs (the test vectors of the Rust crate rand_xoshiro,
 * recomputed here with a separate Python transcription of the reference).
 * The state is set directly (el_rng.h exposes it for the inline step),
 * then the thread's generator is seeded afresh. */
static void test_rng_is_xoshiro256starstar(void **state) {
  (void)state;
  static const uint64_t want[10] = {11520u,
                                    0u,
                                    1509978240u,
                                    1215971899390074240u,
                                    1216172134540287360u,
                                    607988272756665600u,
                                    16172922978634559625u,
                                    8476171486693032832u,
                                    10595114339597558777u,
                                    2904607092377533576u};
  uint64_t saved[4];
  memcpy(saved, el__rng_s, sizeof saved);
  const uint64_t seed[4] = {1, 2, 3, 4};
  memcpy(el__rng_s, seed, sizeof seed);
  for (int i = 0; i < 10; i++) assert_true(el_rng_next() == want[i]);
  memset(el__rng_s, 0, sizeof el__rng_s); /* all zero: seeded on use */
  uint64_t r = el_rng_next();
  (void)r;
  assert_true(el__rng_s[0] | el__rng_s[1] | el__rng_s[2] | el__rng_s[3]);
  memcpy(el__rng_s, saved, sizeof saved);
}

/* {====== el_utf8 ======} */

static void test_utf8_valid_sequences(void **state) {
  (void)state;
  struct {
    const char *s;
    size_t len;
    uint32_t cp;
  } ok[] = {{"a", 1, 'a'},
            {"\0", 1, 0},
            {"\xC2\x80", 2, 0x80},
            {"\xDF\xBF", 2, 0x7FF},
            {"\xE0\xA0\x80", 3, 0x800},
            {"\xED\x9F\xBF", 3, 0xD7FF},
            {"\xEE\x80\x80", 3, 0xE000},
            {"\xEF\xBF\xBD", 3, 0xFFFD},
            {"\xF0\x90\x80\x80", 4, 0x10000},
            {"\xF4\x8F\xBF\xBF", 4, 0x10FFFF}};
  for (size_t i = 0; i < EL_ARRAY_LEN(ok); i++) {
    assert_int_equal(el_utf8_len(ok[i].s, ok[i].len + 1), ok[i].len);
    assert_int_equal(el_utf8_decode(ok[i].s, ok[i].len), ok[i].cp);
  }
}

static void test_utf8_invalid_sequences(void **state) {
  (void)state;
  const char *bad[] = {"\x80",             /* continuation alone */
                       "\xC0\xAF",         /* overlong '/' */
                       "\xC1\xBF",         /* overlong */
                       "\xE0\x9F\xBF",     /* overlong 3 bytes */
                       "\xED\xA0\x80",     /* surrogate U+D800 */
                       "\xF0\x8F\xBF\xBF", /* overlong 4 bytes */
                       "\xF4\x90\x80\x80", /* above U+10FFFF */
                       "\xF5\x80\x80\x80", /* lead byte out of range */
                       "\xE2\x28\xA1",     /* bad second byte */
                       "\xE2\x82\x28",     /* bad third byte */
                       "\xFF"};
  for (size_t i = 0; i < EL_ARRAY_LEN(bad); i++)
    assert_int_equal(el_utf8_len(bad[i], strlen(bad[i])), 0);
  assert_int_equal(el_utf8_len("\xE2\x82\xAC", 2), 0); /* truncated */
  assert_int_equal(el_utf8_len("\xE2\x82\xAC", 3), 3);
  assert_int_equal(el_utf8_len("x", 0), 0);
}

/* Distances computed by hand: one edit each, a swap of neighbours
 * counted once (optimal string alignment). */
static void test_edit_distance_counts_swaps_once(void **state) {
  (void)state;
  assert_int_equal(el_edit_distance("show", "show"), 0);
  assert_int_equal(el_edit_distance("shwo", "show"), 1);  /* swap */
  assert_int_equal(el_edit_distance("otlpp", "otlp"), 1); /* deletion */
  assert_int_equal(el_edit_distance("", "abc"), 3);
  assert_int_equal(el_edit_distance("kitten", "sitting"), 3);
  assert_int_equal(el_edit_distance("ca", "abc"), 3); /* OSA, not 2 */
}

static void test_nearest_picks_close_candidates_only(void **state) {
  (void)state;
  static const char *const exp[] = {"otlp", "console", "none"};
  assert_string_equal(el_nearest("otlpp", exp, 3), "otlp");
  assert_string_equal(el_nearest("OTLP2", exp, 3), "otlp");   /* any case */
  assert_string_equal(el_nearest("cons", exp, 3), "console"); /* prefix */
  assert_null(el_nearest("zipkin", exp, 3));
  assert_null(el_nearest("", exp, 3));
  static const char *const gaps[] = {NULL, "USER_MARKER", NULL};
  assert_string_equal(el_nearest("user_markers", gaps, 3), "USER_MARKER");
  char longw[100];
  memset(longw, 'a', sizeof longw - 1);
  longw[sizeof longw - 1] = 0;
  assert_null(el_nearest(longw, gaps, 3)); /* over 64 bytes: none */
}

/* el_parse_size: the units by hand (1K = 1024, 1M = 1048576, 1G =
 * 1073741824), either case, with or without "iB"; the bounds named. */
static void test_parse_size_units_and_bounds(void **state) {
  (void)state;
  static const struct {
    const char *s;
    uint64_t want;
  } good[] = {
      {"1024", 1024},      {"1k", 1024},          {"1K", 1024},
      {"1KiB", 1024},      {"1kib", 1024},        {"64m", 67108864},
      {"64MiB", 67108864}, {"2g", 2147483648ull}, {"1024G", 1099511627776ull}};
  char err[192];
  uint64_t n;
  for (size_t i = 0; i < EL_ARRAY_LEN(good); i++) {
    assert_int_equal(
        el_parse_size(good[i].s, 1024, (uint64_t)1 << 40, &n, err, sizeof err),
        0);
    assert_int_equal(n, good[i].want);
  }
  static const char *const not_sizes[] = {"",    "k",    "-1",  "1x",  "1KB",
                                          "1 K", "1.5M", "1Ki", "0x10"};
  for (size_t i = 0; i < EL_ARRAY_LEN(not_sizes); i++) {
    assert_int_equal(el_parse_size(not_sizes[i], 1024, (uint64_t)1 << 40, &n,
                                   err, sizeof err),
                     EL_EINVAL);
    assert_non_null(strstr(err, "is not a size"));
  }
  assert_int_equal(el_parse_size("99999999999G", 1024, (uint64_t)1 << 40, &n,
                                 err, sizeof err),
                   EL_EINVAL);
  assert_string_equal(err, "'99999999999G' is too large: at most 1024G");
  assert_int_equal(
      el_parse_size("1025G", 1024, (uint64_t)1 << 40, &n, err, sizeof err),
      EL_EINVAL);
  assert_string_equal(err, "'1025G' is too large: at most 1024G");
  assert_int_equal(
      el_parse_size("99999999999999999999", 0, UINT64_MAX, &n, err, sizeof err),
      EL_EINVAL); /* past 2^64: strtoull's ERANGE */
  assert_non_null(strstr(err, "too large"));
  assert_int_equal(
      el_parse_size("1023", 1024, (uint64_t)1 << 40, &n, err, sizeof err),
      EL_EINVAL);
  assert_string_equal(err, "'1023' is less than 1K");
  char buf[32];
  assert_string_equal(el_fmt_size_unit(1536, buf, sizeof buf), "1536");
  assert_string_equal(el_fmt_size_unit(3072, buf, sizeof buf), "3K");
  assert_string_equal(el_fmt_size_unit(0, buf, sizeof buf), "0");
}

static void test_prog_name_is_one_of_two(void **state) {
  (void)state;
  el_set_prog_name("/usr/bin/eventlog-live-otelcol");
  assert_string_equal(el_prog_name(), "eventlog-live-otelcol");
  el_set_prog_name("./my-copy");
  assert_string_equal(el_prog_name(), "eventlog-live");
  el_set_prog_name("eventlog-live");
  assert_string_equal(el_prog_name(), "eventlog-live");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grow_doubles_from_min),
      cmocka_unit_test(test_grow_refuses_overflow),
      cmocka_unit_test(test_grow_out_of_memory_leaves_array),
      cmocka_unit_test(test_huge_alloc),
      cmocka_unit_test(test_hash_u64_is_bytes_hash),
      cmocka_unit_test(test_hash_depends_on_every_byte_and_seed),
      cmocka_unit_test(test_hash_spreads_low_bits),
      cmocka_unit_test(test_map_integer_keys),
      cmocka_unit_test(test_map_several_values_per_key),
      cmocka_unit_test(test_map_reserve_then_add_does_not_allocate),
      cmocka_unit_test(test_map_out_of_memory_leaves_map),
      cmocka_unit_test(test_fmt_decimal),
      cmocka_unit_test(test_fmt_stays_in_its_room),
      cmocka_unit_test(test_fmt_hex),
      cmocka_unit_test(test_buf_appends_and_stays_terminated),
      cmocka_unit_test(test_buf_long_printf_and_reserve),
      cmocka_unit_test(test_buf_moves_off_caller_storage),
      cmocka_unit_test(test_buf_out_of_memory_is_sticky),
      cmocka_unit_test(test_arena_aligns_and_counts),
      cmocka_unit_test(test_arena_many_chunks_and_big_requests),
      cmocka_unit_test(test_arena_reset_reuses_chunks),
      cmocka_unit_test(test_arena_rounds_of_chunk_sized_requests),
      cmocka_unit_test(test_edit_distance_counts_swaps_once),
      cmocka_unit_test(test_nearest_picks_close_candidates_only),
      cmocka_unit_test(test_prog_name_is_one_of_two),
      cmocka_unit_test(test_arena_reserve_commit),
      cmocka_unit_test(test_arena_out_of_memory),
      cmocka_unit_test(test_rng_bytes_vary),
      cmocka_unit_test(test_rng_is_xoshiro256starstar),
      cmocka_unit_test(test_utf8_valid_sequences),
      cmocka_unit_test(test_utf8_invalid_sequences),
      cmocka_unit_test(test_parse_size_units_and_bounds),
      cmocka_unit_test(test_mapguard_fault_returns_offset),
      cmocka_unit_test(test_mapguard_chains_and_restores),
      cmocka_unit_test(test_rtsguard_tripwires),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
