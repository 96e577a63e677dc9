/* el_rtsguard.h: stop a GHC program in RTS start-up, after its RTS flags
 * and before its main.
 *
 * `watch` probes a program once with "+RTS ... --info -RTS" (cmd_watch.c,
 * "the program's RTS options"): an RTS that reads those arguments prints
 * its --info table and exits while it parses them, in hs_init. One that
 * ignores them (linked with -rtsopts=ignoreAll) would go on into the
 * program's main, and running a user's program an extra time is not
 * acceptable. el_rtsguard_install, called in the probe's child between
 * fork and exec, installs a seccomp filter (written by libseccomp) that
 * kills the process (SIGSYS) at the first system call the RTS makes after
 * its flags and glibc, the dynamic loader and the flag parsing (--info
 * included) never make. Its tripwires, in the order GHC 9.0's hs_init
 * reaches them (strace of every link mode, docs/testing.md):
 *   - clone, clone3, fork, vfork: the threaded RTS's ticker thread
 *     (initTimer); nothing before main starts a thread or a process;
 *   - timer_create, timerfd_create: the ticker (absent with -V0);
 *   - prlimit64 / getrlimit / setrlimit on RLIMIT_AS: initStorage asks it
 *     before it reserves the heap, whatever the flags;
 *   - mmap of 4 GiB or more: that reservation (1 TiB unless -xr);
 *   - rt_sigaction(SIGINT, ...): the RTS's handlers (absent with
 *     --install-signal-handlers=no).
 * A call of a foreign architecture (a 32-bit or x32 program) kills too
 * (libseccomp's architecture check, SCMP_FLTATR_ACT_BADARCH).
 * A tripwire that fires early (a C constructor that starts a thread) only
 * makes the probe fail, never run main. Linux only; x86-64 and
 * little-endian AArch64 (elsewhere el_rtsguard_install returns
 * -ENOTSUP). Sets PR_SET_NO_NEW_PRIVS (a setuid program runs unprivileged
 * in the probe). */
#ifndef EL_RTSGUARD_H
#define EL_RTSGUARD_H

#ifdef __cplusplus
extern "C" {
#endif

/* Build the filter, once per process (later calls return the first
 * one's result; thread-safe): libseccomp's rules for the tripwires,
 * exported as BPF into a static buffer. Call it before fork, so that
 * el_rtsguard_install in the child allocates nothing. The action is
 * SCMP_ACT_KILL_PROCESS (libseccomp API level 3, Linux 4.14), else
 * SCMP_ACT_KILL (the thread). Installs nothing: it also succeeds where
 * the kernel would refuse the filter. Returns 0, or a negated errno:
 * -ENOTSUP (no filter for this architecture), -ENOMEM, or what libseccomp
 * or the export (memfd_create) reported. */
int el_rtsguard_prepare(void);

/* After el_rtsguard_prepare returned -ELIBACC: why libseccomp (opened
 * with dlopen, libseccomp.so.2) could not be used, as a sentence naming
 * it (the dynamic loader's message, e.g. "libseccomp.so.2: cannot open
 * shared object file: No such file or directory", or the function it
 * lacks); NULL otherwise. Static storage; thread-safe once prepared. */
const char *el_rtsguard_error(void);

/* Install the filter on the calling thread and its future children,
 * irrevocably: call it only in a child about to exec the program to probe.
 * After el_rtsguard_prepare it is async-signal-safe (no
 * allocation, two prctl calls), so it may run after fork in a
 * multithreaded process; without one it builds the filter first (then
 * only in a single-threaded process). Returns 0, or a negated errno:
 * el_rtsguard_prepare's, or what prctl reported (-EINVAL: no seccomp in
 * the kernel; -EACCES, -EPERM: refused, as in some containers). */
int el_rtsguard_install(void);

#ifdef __cplusplus
}
#endif

#endif
