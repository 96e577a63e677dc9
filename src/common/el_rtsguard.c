/* el_rtsguard.c: the seccomp-BPF filter that stops a GHC program after
 * its RTS flags, before main (el_rtsguard.h). The program is a list of
 * independent blocks, each "load the call number; not ours: skip the
 * block; [check an argument word]; kill", then "allow". */
#include "common/el_rtsguard.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define EL_RG_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EL_RG_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef EL_RG_ARCH

#define EL_RG_MAX 64 /* instructions; the filter below has fewer */

typedef struct rg_prog_s {
  struct sock_filter ins[EL_RG_MAX];
  unsigned short n;
  uint32_t kill; /* the return action that kills */
} rg_prog_t;

static void emit(rg_prog_t *p, struct sock_filter f) {
  if (p->n < EL_RG_MAX) p->ins[p->n++] = f;
}

/* Offset in struct seccomp_data of argument arg's 32-bit word (0 low,
 * 1 high; little-endian). */
#define ARG_WORD(arg, hi) \
  (uint32_t)(offsetof(struct seccomp_data, args) + 8 * (arg) + 4 * (hi))

/* Kill at system call nr. */
static void kill_call(rg_prog_t *p, long nr) {
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       offsetof(struct seccomp_data, nr)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr,
                                       0, 1));
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->kill));
}

/* Kill at system call nr when the 32-bit word (arg, hi) equals v (eq 1)
 * or differs from it (eq 0). */
static void kill_call_if(rg_prog_t *p, long nr, int arg, int hi, uint32_t v,
                         int eq) {
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       offsetof(struct seccomp_data, nr)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr,
                                       0, 3));
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       ARG_WORD(arg, hi)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v, eq ? 0 : 1,
                                       eq ? 1 : 0));
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->kill));
}

/* The architecture check: a call of another ABI kills. */
static void check_arch(rg_prog_t *p) {
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       offsetof(struct seccomp_data, arch)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, EL_RG_ARCH, 1,
                                       0));
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->kill));
#ifdef __x86_64__ /* x32 calls: the x86-64 arch with bit 30 set */
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       offsetof(struct seccomp_data, nr)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u,
                                       0, 1));
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, p->kill));
#endif
}

/* The tripwires (el_rtsguard.h). */
static void tripwires(rg_prog_t *p) {
  kill_call(p, __NR_clone);
#ifdef __NR_clone3
  kill_call(p, __NR_clone3);
#endif
#ifdef __NR_fork
  kill_call(p, __NR_fork);
#endif
#ifdef __NR_vfork
  kill_call(p, __NR_vfork);
#endif
  kill_call(p, __NR_timer_create);
  kill_call(p, __NR_timerfd_create);
  kill_call_if(p, __NR_prlimit64, 1, 0, RLIMIT_AS, 1);
#ifdef __NR_getrlimit
  kill_call_if(p, __NR_getrlimit, 0, 0, RLIMIT_AS, 1);
#endif
#ifdef __NR_setrlimit
  kill_call_if(p, __NR_setrlimit, 0, 0, RLIMIT_AS, 1);
#endif
  kill_call_if(p, __NR_mmap, 1, 1, 0, 0); /* length >= 4 GiB */
  kill_call_if(p, __NR_rt_sigaction, 0, 0, SIGINT, 1);
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

int el_rtsguard_install(void) {
  rg_prog_t p = {.n = 0, .kill = SECCOMP_RET_KILL_PROCESS};
  uint32_t action = SECCOMP_RET_KILL_PROCESS;
  if (syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0)
    p.kill = SECCOMP_RET_KILL_THREAD; /* before Linux 4.14 */
  check_arch(&p);
  tripwires(&p);
  if (p.n >= EL_RG_MAX) return -ENOMEM; /* cannot happen: EL_RG_MAX */
  struct sock_fprog fp = {.len = p.n, .filter = p.ins};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) != 0) return -errno;
  return 0;
}

#else /* no filter for this architecture */

int el_rtsguard_install(void) { return -ENOTSUP; }

#endif
