/* el_rtsguard.c: the seccomp filter that stops a GHC program after its
 * RTS flags, before main (el_rtsguard.h). libseccomp writes the BPF: the
 * rules, the architecture check and the action once, in
 * el_rtsguard_prepare, exported into a buffer that el_rtsguard_install
 * hands to the kernel with two system calls (no allocation after fork). */
#include "common/el_rtsguard.h"

#include <errno.h>

#if defined(__x86_64__) || \
    (defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define EL_RG_MAX 256 /* instructions; libseccomp's filter has ~40 */

static struct {
  pthread_once_t once;
  atomic_int built; /* 1 once build ran: err, n and ins are final */
  int err;          /* build's outcome: 0 or a negated errno */
  unsigned short n;
  struct sock_filter ins[EL_RG_MAX];
} rg = {.once = PTHREAD_ONCE_INIT};

/* The kernel reads an int argument's low 32 bits only: compare those
 * (a0 for arg 0...), whatever the high word holds. */
#define LOW32_EQ(arg, v) \
  SCMP_CMP((arg), SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint64_t)(v))

/* The tripwires of el_rtsguard.h into ctx, each with the action kill.
 * Returns 0 or libseccomp's negated errno. */
static int add_tripwires(scmp_filter_ctx ctx, uint32_t kill) {
  static const int plain[] = {SCMP_SYS(clone),        SCMP_SYS(clone3),
                              SCMP_SYS(fork),         SCMP_SYS(vfork),
                              SCMP_SYS(timer_create), SCMP_SYS(timerfd_create)};
  int r = 0;
  /* A call this architecture lacks (fork, vfork on AArch64) is one of
   * libseccomp's negative pseudo numbers: skipped, nothing can make it. */
  for (size_t i = 0; i < sizeof plain / sizeof plain[0] && !r; i++)
    if (plain[i] >= 0) r = seccomp_rule_add(ctx, kill, plain[i], 0);
  if (!r)
    r = seccomp_rule_add(ctx, kill, SCMP_SYS(prlimit64), 1,
                         LOW32_EQ(1, RLIMIT_AS));
  if (!r && SCMP_SYS(getrlimit) >= 0)
    r = seccomp_rule_add(ctx, kill, SCMP_SYS(getrlimit), 1,
                         LOW32_EQ(0, RLIMIT_AS));
  if (!r && SCMP_SYS(setrlimit) >= 0)
    r = seccomp_rule_add(ctx, kill, SCMP_SYS(setrlimit), 1,
                         LOW32_EQ(0, RLIMIT_AS));
  /* the heap's reservation: a length of 4 GiB or more (every field given:
   * SCMP_A1_64's leaves datum_b out, which clang's
   * -Wmissing-field-initializers rejects) */
  const struct scmp_arg_cmp big = {
      .arg = 1, .op = SCMP_CMP_GE, .datum_a = (uint64_t)1 << 32, .datum_b = 0};
  if (!r) r = seccomp_rule_add(ctx, kill, SCMP_SYS(mmap), 1, big);
  if (!r)
    r = seccomp_rule_add(ctx, kill, SCMP_SYS(rt_sigaction), 1,
                         LOW32_EQ(0, SIGINT));
  return r;
}

/* The filter as BPF into rg.ins (rg.n instructions): libseccomp's export
 * through a memory file. Returns 0 or a negated errno. */
static int export_filter(scmp_filter_ctx ctx) {
  int fd = memfd_create("el_rtsguard", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  int r = seccomp_export_bpf(ctx, fd);
  off_t len = r ? 0 : lseek(fd, 0, SEEK_END);
  if (!r &&
      (len <= 0 || len % (off_t)sizeof rg.ins[0] || len > (off_t)sizeof rg.ins))
    r = -E2BIG; /* more than EL_RG_MAX: cannot happen with these rules */
  ssize_t got = r ? 0 : pread(fd, rg.ins, (size_t)len, 0);
  if (!r && got != len) r = got < 0 ? -errno : -EIO;
  if (!r) rg.n = (unsigned short)(len / (off_t)sizeof rg.ins[0]);
  close(fd);
  return r;
}

/* pthread_once's routine: build the filter, rg.err its outcome. */
static void build(void) {
  /* SCMP_ACT_KILL_PROCESS needs Linux 4.14 (API level 3); before it
   * SCMP_ACT_KILL ends the calling thread only. */
  uint32_t kill =
      seccomp_api_get() >= 3 ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_KILL;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    rg.err = -ENOMEM;
    return;
  }
  /* A call of another ABI (a 32-bit or x32 program) kills as well:
   * libseccomp's architecture check, with the native one only. */
  int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill);
  if (!r) r = add_tripwires(ctx, kill);
  if (!r) r = export_filter(ctx);
  seccomp_release(ctx);
  rg.err = r;
  atomic_store_explicit(&rg.built, 1, memory_order_release);
}

int el_rtsguard_prepare(void) {
  pthread_once(&rg.once, build);
  return rg.err;
}

int el_rtsguard_install(void) {
  /* Built (before a fork): reads and two prctl calls only. */
  int r = atomic_load_explicit(&rg.built, memory_order_acquire)
              ? rg.err
              : el_rtsguard_prepare();
  if (r) return r;
  struct sock_fprog fp = {.len = rg.n, .filter = rg.ins};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) != 0) return -errno;
  return 0;
}

#else /* no tripwires checked for this architecture */

int el_rtsguard_prepare(void) { return -ENOTSUP; }

int el_rtsguard_install(void) { return -ENOTSUP; }

#endif
