/* el_rtsguard.c: the seccomp filter that stops a GHC program after its
 * RTS flags, before main (el_rtsguard.h). libseccomp writes the BPF: the
 * rules, the architecture check and the action once, in
 * el_rtsguard_prepare, exported into a buffer that el_rtsguard_install
 * hands to the kernel with two system calls (no allocation after fork).
 * libseccomp is opened there (dlopen), not linked: only `watch` uses it,
 * and every other command would pay the loader's mapping of it at
 * start-up (issue 16, docs/performance.md "Start-up"). */
#include "common/el_rtsguard.h"

#include <errno.h>

#if defined(__x86_64__) || \
    (defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

#include <dlfcn.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define EL_RG_MAX 256 /* instructions; libseccomp's filter has ~40 */

/* libseccomp's shared object (its soname since 2.0) and the functions
 * used, each declared in seccomp.h with this type. */
#define EL_RG_LIB "libseccomp.so.2"
static struct {
  unsigned int (*api_get)(void);
  scmp_filter_ctx (*init)(uint32_t def_action);
  void (*release)(scmp_filter_ctx ctx);
  int (*attr_set)(scmp_filter_ctx ctx, enum scmp_filter_attr attr,
                  uint32_t value);
  int (*rule_add_array)(scmp_filter_ctx ctx, uint32_t action, int syscall,
                        unsigned int arg_cnt,
                        const struct scmp_arg_cmp *arg_array);
  int (*export_bpf)(const scmp_filter_ctx ctx, int fd);
} sc;

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
  const struct scmp_arg_cmp as0 = LOW32_EQ(0, RLIMIT_AS),
                            as1 = LOW32_EQ(1, RLIMIT_AS),
                            sigint = LOW32_EQ(0, SIGINT);
  static const int plain[] = {SCMP_SYS(clone),        SCMP_SYS(clone3),
                              SCMP_SYS(fork),         SCMP_SYS(vfork),
                              SCMP_SYS(timer_create), SCMP_SYS(timerfd_create)};
  int r = 0;
  /* A call this architecture lacks (fork, vfork on AArch64) is one of
   * libseccomp's negative pseudo numbers: skipped, nothing can make it. */
  for (size_t i = 0; i < sizeof plain / sizeof plain[0] && !r; i++)
    if (plain[i] >= 0) r = sc.rule_add_array(ctx, kill, plain[i], 0, NULL);
  if (!r) r = sc.rule_add_array(ctx, kill, SCMP_SYS(prlimit64), 1, &as1);
  if (!r && SCMP_SYS(getrlimit) >= 0)
    r = sc.rule_add_array(ctx, kill, SCMP_SYS(getrlimit), 1, &as0);
  if (!r && SCMP_SYS(setrlimit) >= 0)
    r = sc.rule_add_array(ctx, kill, SCMP_SYS(setrlimit), 1, &as0);
  /* the heap's reservation: a length of 4 GiB or more (every field given:
   * SCMP_A1_64's leaves datum_b out, which clang's
   * -Wmissing-field-initializers rejects) */
  const struct scmp_arg_cmp big = {
      .arg = 1, .op = SCMP_CMP_GE, .datum_a = (uint64_t)1 << 32, .datum_b = 0};
  if (!r) r = sc.rule_add_array(ctx, kill, SCMP_SYS(mmap), 1, &big);
  if (!r) r = sc.rule_add_array(ctx, kill, SCMP_SYS(rt_sigaction), 1, &sigint);
  return r;
}

/* The filter as BPF into rg.ins (rg.n instructions): libseccomp's export
 * through a memory file. Returns 0 or a negated errno. */
static int export_filter(scmp_filter_ctx ctx) {
  int fd = memfd_create("el_rtsguard", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  int r = sc.export_bpf(ctx, fd);
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

/* Why libseccomp could not be used (el_rtsguard_error): the loader's
 * message, or the function it lacks. */
static char lib_err[256];

/* Open libseccomp into sc. Returns 0, or -ELIBACC when the library or
 * one of its functions is missing, said in lib_err (the handle stays
 * open: the filter is built once per process). */
static int open_libseccomp(void) {
  void *h = dlopen(EL_RG_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(lib_err, sizeof lib_err, "%s", e ? e : EL_RG_LIB ": not found");
    return -ELIBACC;
  }
  /* dlsym's object pointer into a function pointer: POSIX guarantees
   * it (memcpy keeps ISO C's -Wpedantic quiet). */
#define SYM(field, name)                                                  \
  do {                                                                    \
    void *f = dlsym(h, name);                                             \
    if (!f) {                                                             \
      snprintf(lib_err, sizeof lib_err, "%s has no %s", EL_RG_LIB, name); \
      return -ELIBACC;                                                    \
    }                                                                     \
    memcpy(&sc.field, &f, sizeof sc.field);                               \
  } while (0)
  SYM(api_get, "seccomp_api_get");
  SYM(init, "seccomp_init");
  SYM(release, "seccomp_release");
  SYM(attr_set, "seccomp_attr_set");
  SYM(rule_add_array, "seccomp_rule_add_array");
  SYM(export_bpf, "seccomp_export_bpf");
#undef SYM
  return 0;
}

/* pthread_once's routine: build the filter, rg.err its outcome. */
static void build(void) {
  int r = open_libseccomp();
  if (r) {
    rg.err = r;
    atomic_store_explicit(&rg.built, 1, memory_order_release);
    return;
  }
  /* SCMP_ACT_KILL_PROCESS needs Linux 4.14 (API level 3); before it
   * SCMP_ACT_KILL ends the calling thread only. */
  uint32_t kill = sc.api_get() >= 3 ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_KILL;
  scmp_filter_ctx ctx = sc.init(SCMP_ACT_ALLOW);
  if (!ctx) {
    rg.err = -ENOMEM;
    return;
  }
  /* A call of another ABI (a 32-bit or x32 program) kills as well:
   * libseccomp's architecture check, with the native one only. */
  r = sc.attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill);
  if (!r) r = add_tripwires(ctx, kill);
  if (!r) r = export_filter(ctx);
  sc.release(ctx);
  rg.err = r;
  atomic_store_explicit(&rg.built, 1, memory_order_release);
}

int el_rtsguard_prepare(void) {
  pthread_once(&rg.once, build);
  return rg.err;
}

const char *el_rtsguard_error(void) {
  return atomic_load_explicit(&rg.built, memory_order_acquire) && lib_err[0]
             ? lib_err
             : NULL;
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

const char *el_rtsguard_error(void) { return NULL; }

int el_rtsguard_install(void) { return -ENOTSUP; }

#endif
