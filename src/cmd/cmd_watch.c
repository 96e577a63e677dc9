/* cmd_watch.c: `eventlog-live watch [OPTIONS] -- PROGRAM ARGS...`: run a
 * GHC program and watch it live in the web view, in one command.
 *
 * watch makes a private FIFO (a mkdtemp folder, removed at exit), starts
 * PROGRAM with the RTS options "-l -ol<fifo>" (and the -h<X> given to
 * watch) as its first arguments, "+RTS ... -RTS", when its RTS takes them
 * there (a probe, "the program's RTS options" below), else appended to
 * GHCRTS, and runs the daemon's own pipeline (el_otelcol_main, daemon.c:
 * same options, same configuration file) on that FIFO with local defaults:
 * exports every second, the trace processors on, the heap gauges
 * unaggregated (every GC's value), OTLP off unless asked
 * for, the web view (which also answers /metrics) on a free port, whose
 * URL it prints. With --eventlog-socket PATH it sets GHC_EVENTLOG_UNIX_PATH
 * instead (a program built with eventlog-socket) and connects there.
 *
 * The program must never block on its eventlog because of us: the RTS
 * opens its -ol file read-write, so it never gets EPIPE once the reader
 * goes. If the pipeline ends before the program (an error, a script's
 * stop), watch reads and discards the FIFO until the program exits.
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to watch are
 * forwarded to the program, the other signals that would end watch are
 * ignored ("signals" below); the input then ends when the program exits.
 * With --linger (the default when stdin is a terminal) the web view stays
 * up after that until SIGINT/SIGTERM/SIGHUP/SIGQUIT (daemon.c
 * before_linger hook). A program that never opened the FIFO (or, with
 * --eventlog-socket, never listened) is warned about before the linger or
 * at the end. watch exits with the program's status
 * (128 + N when it died of signal N; 127 when it cannot be found, 126 when
 * it cannot be started, as a shell). README "Watch a program". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common/el_mapguard.h"
#include "common/el_rtsguard.h"
#include "daemon.h"
#include "web/httpd_plugin.h"

extern char **environ;

typedef struct watch_s {
  char **prog_argv;        /* PROGRAM ARGS..., NULL-terminated */
  char dir[256];           /* the private folder, "" if none */
  char fifo[300];          /* the FIFO in it, "" in socket mode */
  const char *socket_path; /* --eventlog-socket PATH, or NULL */
  double flush_s;          /* --eventlog-flush-interval */
  char breakdown[4];       /* -h<X> given to watch, "" if none */
  char rts_buf[700];       /* the RTS options' text, NUL-separated */
  char **spawn_argv;       /* the program's argv with +RTS OPTS -RTS first
                              (malloc'd), or NULL: prog_argv, GHCRTS */
  char *rts_added[8];      /* "+RTS" OPTS "-RTS" as put into spawn_argv,
                              NULL-terminated (empty with GHCRTS): left
                              out of process.command_args (daemon.h
                              args_added) */
  pid_t pid;               /* the program, 0 before it started */
  pthread_t reaper;        /* waits for it */
  int reaper_started;
  /* The guard (start_guard): its pid and the pipe's write end, or 0 and
   * -1 (none: at a terminal, or it could not start). */
  pid_t guard_pid;
  int guard_fd;
  volatile sig_atomic_t exited; /* the program has exited */
  int wstatus;                  /* its waitpid status, once exited */
  el_daemon_opts_t *d;
  /* Test hook (tests/e2e/test_watch_signals.sh): with
   * EL_TEST_WATCH_STOP_PROCESSING_ON_SIGINT=1 a SIGINT is not forwarded
   * but stops the processing at once (no drain), as a crash of the
   * processing would, while the program runs on. */
  int test_stop_processing;
  /* Test hook (tests/e2e/test_watch_children.sh): with
   * EL_TEST_WATCH_OPEN_DELAY_MS=N the pipeline opens the FIFO N ms after
   * the program started, as a loaded machine may (a program that exits
   * at once must not lose its eventlog). */
  unsigned test_open_delay_ms;
  int start_failed; /* 127 not found, 126 not startable */
  int linger;       /* keep serving the web view after the program's end:
                       1 --linger, 0 --no-linger, -1 when stdin is a TTY */
  int linger_asked; /* --linger given: kept however the program ended */
  char url[320];    /* the web view's URL, "" when off */
  /* The program runs in a process group of its own (not at an
   * interactive terminal). */
  int own_group;
  /* The eventlog sessions read (daemon sessions_out). */
  uint64_t sessions;
  /* When the program was started. */
  time_t started;
  /* warn_no_input said its piece (before the linger or at the end). */
  int warned_no_input;
  /* The program's executable (find_program) and whether it is a GHC
   * program watch probes (rts_has_flush_interval >= 0), from
   * set_environment: rts_refused runs it once more. */
  char exe[4096];
  int ghc_rts;
  /* The FIFO held open for reading from before the program starts until
   * the end (daemon.h fifo_hold_fd), -1 if none: a program that exits
   * before the pipeline opened the FIFO leaves its eventlog in the pipe
   * instead of its being discarded. */
  int hold_fd;
} watch_t;

static watch_t *volatile g_watch; /* for the signal handlers */

static void print_help(FILE *f) {
  fputs(
      "Usage: eventlog-live watch [OPTIONS] -- PROGRAM [ARGS...]\n"
      "\n"
      "Run a GHC program (built with -eventlog) and watch it live: its\n"
      "eventlog goes through a private FIFO into the daemon's processors.\n"
      "The program gets its RTS options (-l -ol<fifo>, -h<X>) as\n"
      "arguments, PROGRAM +RTS ... -RTS ARGS, when its RTS takes them\n"
      "there (watch runs PROGRAM +RTS ... --info -RTS once to check, under\n"
      "a seccomp filter that stops it before its main), so its children\n"
      "do not inherit them; otherwise (a script, a wrapper, an RTS that\n"
      "refuses or ignores them, no seccomp) they are appended to GHCRTS;\n"
      "-v info says which. -h<X> needs a program linked with -rtsopts.\n"
      "The web view and /metrics are served on a free port (printed).\n"
      "Exits with the program's status (128+N if it died of signal N).\n"
      "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded\n"
      "to it, once (docs/exit-codes.md).\n"
      "\n"
      "Every eventlog-live-otelcol option is accepted too (see\n"
      "`eventlog-live otelcol --help`); they and --config win over the\n"
      "local defaults below.\n"
      "\n"
      "Options:\n"
      "  --web-port PORT          the web view's port (default: a free "
      "one)\n"
      "  -h<T|c|m|d|y|e|r|b|i>    heap profile breakdown: passed to the\n"
      "                           program's RTS and to the processors\n"
      "  --eventlog-socket PATH   the program uses eventlog-socket: set\n"
      "                           GHC_EVENTLOG_UNIX_PATH=PATH, connect there\n"
      "  --export-interval DURATION  export interval (default here: 1s)\n"
      "  --traces, --no-traces    trace processors (default here: on)\n"
      "                           (without --config the heap gauges keep\n"
      "                           every GC's value: aggregate off)\n"
      "  --linger, --no-linger    after the program exited and its\n"
      "                           eventlog was processed, keep serving the\n"
      "                           web view until Ctrl-C (SIGINT/SIGTERM),\n"
      "                           then exit with the program's status\n"
      "                           (default: --linger when stdin is a\n"
      "                           terminal, else --no-linger; then\n"
      "                           Ctrl-C during the run ends both)\n"
      "  --otelcol-host HOST ...  also send OTLP (default here: off unless\n"
      "                           an OTLP option or OTEL_* variable asks)\n"
      "  -v, --verbosity LEVEL    log level (default warn)\n"
      "  --help                   this text\n"
      "\n"
      "GHC 9.2 or later: the program gets --eventlog-flush-interval and the\n"
      "page updates every second. GHC 9.0: the eventlog arrives only when a\n"
      "capability's 2 MiB buffer fills, and at exit (watch says so).\n",
      f);
}

/* {====== the program ======} */

/* Can name be run as a program? 0 when it is an executable regular
 * file, else the errno execve would give: ENOENT (no such file), EACCES
 * (not executable), EISDIR (a folder). */
static int check_exe(const char *name) {
  struct stat st;
  if (stat(name, &st) < 0)
    return errno == ENOENT || errno == ENOTDIR ? ENOENT : errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (!S_ISREG(st.st_mode) || access(name, X_OK) < 0) return EACCES;
  return 0;
}

/* The program's executable, searched in PATH like execvp; into buf.
 * Returns 0, or the errno of the best candidate as execvp would report
 * it: ENOENT when nothing of that name exists, EACCES / EISDIR when one
 * exists but cannot be run (buf then names it). */
static int find_program(const char *name, char *buf, size_t size) {
  if (strchr(name, '/')) {
    snprintf(buf, size, "%s", name);
    return check_exe(buf);
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  int err = ENOENT;
  char first[4096] = "";
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t n = colon ? (size_t)(colon - path) : strlen(path);
    snprintf(buf, size, "%.*s/%s", (int)n, n ? path : ".", name);
    int e = check_exe(buf);
    if (e == 0) return 0;
    if (e != ENOENT && err == ENOENT) {
      err = e;
      snprintf(first, sizeof first, "%s", buf);
    }
    path += n + (colon != NULL);
  }
  snprintf(buf, size, "%s", first[0] ? first : name);
  return err;
}

/* Check PROGRAM before anything starts (web view, FIFO): says why it
 * cannot run and returns the status a shell gives (127 not found, 126
 * found but not runnable), or 0. */
static int check_program(watch_t *w) {
  char exe[4096];
  int e = find_program(w->prog_argv[0], exe, sizeof exe);
  if (e == 0) return 0;
  if (e == ENOENT) {
    el_eprintf("watch: cannot find %s%s\n", w->prog_argv[0],
               strchr(w->prog_argv[0], '/') ? "" : " in PATH");
    return 127;
  }
  el_eprintf("watch: cannot run %s: %s\n", exe, strerror(e));
  return 126;
}

/* find_flush on the mapping m of exe's len bytes, guarded: an executable
 * rewritten in place while read (a build) is no crash (el_mapguard.h). */
static int find_flush_guarded(const char *exe, const void *m, size_t len) {
  static const char flush[] = "eventlog-flush-interval", rts[] = "GHC RTS",
                    shared[] = "libHSrts";
  el_mapguard_t g;
  if (el_mapguard_push(&g, m, len) < 0) return -1;
  if (sigsetjmp(g.env, 1)) {
    el_mapguard_pop(&g);
    el_eprintf(
        "watch: %s shrank while being read (no data at byte %llu "
        "any more)\n",
        exe, (unsigned long long)g.fault_offset);
    return -1;
  }
  int r = -1;
  if (memmem(m, len, flush, sizeof flush - 1))
    r = 1;
  else if (memmem(m, len, rts, sizeof rts - 1))
    r = 0;
  else if (memmem(m, len, shared, sizeof shared - 1))
    r = 2; /* -dynamic: the RTS (and its texts) in a shared library */
  el_mapguard_pop(&g);
  return r;
}

/* 1 when the executable's runtime knows --eventlog-flush-interval (GHC
 * 9.2 and later: the option's name is in the RTS's help text), 0 when it
 * is a GHC program without it (its RTS's "GHC RTS" text is there), 2 when
 * it is a GHC program linked with -dynamic (it needs the shared library
 * libHSrts...: whether that has the option is not looked into), -1 when
 * it cannot be read or is no GHC program (a script, a wrapper: only an
 * ELF file is looked into, so a script whose text names the RTS is not
 * taken for one). */
static int rts_has_flush_interval(const char *exe) {
  int fd = open(exe, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  char magic[4];
  int r = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
      !memcmp(magic, "\177ELF", sizeof magic)) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      r = find_flush_guarded(exe, m, (size_t)st.st_size);
      munmap(m, (size_t)st.st_size);
    }
  }
  close(fd);
  return r;
}

/* {====== the program's RTS options ======}
 * The options (-l, -ol<fifo>, the -h<X>, --eventlog-flush-interval=N) go
 * to the program's RTS as arguments, "PROGRAM +RTS OPTIONS -RTS ARGS...",
 * when its RTS takes them there: GHCRTS, which every child process
 * inherits, then stays as the user set it. Otherwise (a script or
 * wrapper, an RTS that refuses or ignores its command line) they are
 * appended to GHCRTS, as before. Either way the program's own later
 * "+RTS ..." arguments win (the RTS reads GHCRTS, then its arguments in
 * order). A probe (probe_rts_args) decides; it never reaches the
 * program's main: a seccomp filter (el_rtsguard.h) kills it at the RTS's
 * first system call after its flags, and where that filter cannot be
 * installed there is no probe (GHCRTS). */

#define EL_RTS_MAX_OPTS 4 /* -l -ol<fifo> -h<X> --eventlog-flush-interval */
#define EL_PROBE_TIMEOUT_MS 5000
/* Where the probe's GHCRTS sends the eventlog: a path no one can open
 * (/dev/null is no folder), so an RTS that reads GHCRTS but not its
 * command line stops in hs_init, before the program's main. */
#define EL_PROBE_DEAD_OL "-ol/dev/null/eventlog-live-probe"
/* What a GHC 9.0 RTS built without -eventlog says of -l (on stderr; then
 * it goes on with the other flags): "PROG: the flag -l requires the
 * program to be built with -eventlog, -prof or -debug". */
#define EL_PROBE_NO_EVENTLOG "requires the program to be built with -eventlog"
/* What it says of another flag its way lacks, e.g. -hy without -prof
 * ("PROG: the flag -hy requires the program to be built with -prof"),
 * before it goes on to --info and exits 0. */
#define EL_PROBE_NEEDS_WAY "requires the program to be built with -"
/* What a GHC RTS (rts/RtsFlags.c, GHC 9.0 to 9.10) prints when it
 * refuses a flag, then exits with status 1 in hs_init: after its
 * complaints, the first line of its usage text (errorUsage); or only its
 * complaint, for a size out of range (decodeSize) and for an option that
 * needs -rtsopts given in GHCRTS. Not "RTS options are disabled"
 * (-rtsopts=none): the "+RTS -ol<dead> -RTS" rts_refused adds gets that
 * too, and such a program ignores GHCRTS and runs without options. */
#define EL_RTS_USAGE "Usage: <prog> <args> [+RTS"
#define EL_RTS_BAD_SIZE "error in RTS option "
#define EL_RTS_SAFE_ONLY "Most RTS options are disabled."

/* The options for the program's RTS into opts (w->rts_buf holds their
 * text); flush: rts_has_flush_interval's answer. Returns their count. */
static int rts_options(watch_t *w, int flush, char *opts[EL_RTS_MAX_OPTS]) {
  char *b = w->rts_buf, *end = w->rts_buf + sizeof w->rts_buf;
  int n = 0;
  opts[n++] = b;
  b += snprintf(b, (size_t)(end - b), "-l") + 1;
  if (w->fifo[0]) {
    opts[n++] = b;
    b += snprintf(b, (size_t)(end - b), "-ol%s", w->fifo) + 1;
  }
  if (w->breakdown[0]) {
    opts[n++] = b;
    b += snprintf(b, (size_t)(end - b), "%s", w->breakdown) + 1;
  }
  if (flush == 1) {
    opts[n++] = b;
    snprintf(b, (size_t)(end - b), "--eventlog-flush-interval=%g", w->flush_s);
  }
  return n;
}

/* The environment for the probe: environ with GHCRTS replaced by the
 * user's GHCRTS (if any) followed by "-l " EL_PROBE_DEAD_OL. NULL when out
 * of memory; the caller frees the array and its first entry. */
static char **probe_environment(void) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  const char *old = getenv("GHCRTS");
  size_t len = (old ? strlen(old) : 0) + 64;
  char *v = malloc(len);
  if (!env || !v) {
    free(env);
    free(v);
    return NULL;
  }
  snprintf(v, len, "GHCRTS=%s%s-l " EL_PROBE_DEAD_OL, old ? old : "",
           old && *old ? " " : "");
  size_t k = 0;
  env[k++] = v;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "GHCRTS=", 7)) env[k++] = environ[i];
  env[k] = NULL;
  return env;
}

/* CLOCK_MONOTONIC in ms. */
static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Read the probe's stdout (fd) into buf (size bytes, NUL-terminated)
 * until EOF, a full buffer or deadline (CLOCK_MONOTONIC ms). */
static void probe_read(int fd, char *buf, size_t size, long long deadline) {
  size_t got = 0;
  while (got + 1 < size) {
    long long left = deadline - now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (left <= 0) break;
    int pr = poll(&p, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) break;
    ssize_t r = read(fd, buf + got, size - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  buf[got] = 0;
}

/* The probe's child, between fork and exec (async-signal-safe calls
 * only): a process group of its own, every signal default and unblocked,
 * stdin on /dev/null, stdout and stderr on out_fd, the tripwire filter
 * (el_rtsguard.h), then exec. A failure before the exec writes its stage
 * ('g': the filter, 'x': the exec) and errno to err_fd and exits 127. */
static void probe_child(const char *exe, char *const *av, char *const *env,
                        int out_fd, int err_fd) {
  char stage = 'g';
  int e = 0;
  setpgid(0, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &sa, NULL);
  int fd = open("/dev/null", O_RDWR);
  if (fd < 0 || dup2(fd, 0) < 0 || dup2(out_fd, 2) < 0 || dup2(out_fd, 1) < 0)
    stage = 'x', e = errno;
  else if (fd > 2 && close(fd) != 0) /* not the program's to keep */
    stage = 'x', e = errno;
  else if ((e = -el_rtsguard_install()) == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(exe, av, env);
    stage = 'x', e = errno;
  }
  char msg[1 + sizeof e];
  msg[0] = stage;
  memcpy(msg + 1, &e, sizeof e);
  if (write(err_fd, msg, sizeof msg) < 0) _exit(127);
  _exit(127);
}

/* Fork the probe's child (probe_child) with argv av and environment env,
 * every signal blocked across the fork. Returns its pid, or -1 when it
 * did not exec (*guard_err: the filter's negated errno when that was why,
 * else 0). */
static pid_t probe_fork(const char *exe, char *const *av, char *const *env,
                        int out_fd, int *guard_err) {
  int st[2];
  /* The filter is built here, so that the child only installs it. */
  if ((*guard_err = el_rtsguard_prepare()) != 0) return -1;
  if (pipe2(st, O_CLOEXEC) < 0) return -1;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid == 0) probe_child(exe, av, env, out_fd, st[1]);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(st[1]);
  if (pid < 0) {
    close(st[0]);
    return -1;
  }
  setpgid(pid, pid); /* as the child does: kill(-pid) finds it either way */
  char msg[1 + sizeof(int)];
  ssize_t r;
  while ((r = read(st[0], msg, sizeof msg)) < 0 && errno == EINTR)
    ;
  close(st[0]);
  if (r == 0) return pid; /* exec'd: the pipe closed with it */
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (r == (ssize_t)sizeof msg && msg[0] == 'g') {
    memcpy(guard_err, msg + 1, sizeof(int));
    *guard_err = -*guard_err;
  }
  return -1;
}

/* Start the probe "exe +RTS OPTS --info -RTS" (opts: n options, -ol
 * given as EL_PROBE_DEAD_OL: the FIFO is not opened) under the tripwire
 * filter (probe_fork), stdout into out_fd. Returns its pid, or -1
 * (*guard_err as probe_fork's). */
static pid_t probe_spawn(const char *exe, char *const *opts, int n, int out_fd,
                         int *guard_err) {
  char *av[EL_RTS_MAX_OPTS + 5], dead[] = EL_PROBE_DEAD_OL, plus[] = "+RTS",
                                 info[] = "--info", minus[] = "-RTS";
  int k = 0;
  *guard_err = 0;
  av[k++] = (char *)exe;
  av[k++] = plus;
  for (int i = 0; i < n; i++)
    av[k++] = strncmp(opts[i], "-ol", 3) ? opts[i] : dead;
  av[k++] = info;
  av[k++] = minus;
  av[k] = NULL;
  char **env = probe_environment();
  if (!env) return -1;
  pid_t pid = probe_fork(exe, av, env, out_fd, guard_err);
  free(env[0]);
  free(env);
  return pid;
}

/* Wait for the probe pid until deadline (CLOCK_MONOTONIC ms); kill its
 * process group if it still runs then. Returns its wait status, or -1
 * (it was killed). */
static int probe_wait(pid_t pid, long long deadline) {
  int st = 0;
  pid_t r;
  while (((r = waitpid(pid, &st, WNOHANG)) == 0 || (r < 0 && errno == EINTR)) &&
         now_ms() < deadline)
    usleep(5000);
  if (r == pid) return st;
  kill(-pid, SIGKILL);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  return -1;
}

/* The probe's complaint of a flag its RTS's way lacks (EL_PROBE_NEEDS_WAY)
 * in out, from "the flag" to the end of its line, into line (size bytes);
 * returns 1, or 0 when there is none. */
static int probe_needs_way(const char *out, char *line, size_t size) {
  const char *m = strstr(out, EL_PROBE_NEEDS_WAY);
  if (!m) return 0;
  const char *b = m;
  while (b > out && b[-1] != '\n') b--;
  const char *f = strstr(b, "the flag ");
  if (f && f < m) b = f;
  size_t n = strcspn(b, "\n");
  snprintf(line, size, "%.*s", (int)n, b);
  return 1;
}

/* Does exe's RTS take opts (n options) as command-line arguments? Runs
 * "exe +RTS OPTS --info -RTS" once (probe_spawn) under a seccomp filter
 * that kills it at the RTS's first system call after its flags, before
 * main (el_rtsguard.h): an RTS that takes them prints its --info table
 * and exits 0 while it parses them. One that refuses an option (linked
 * without -rtsopts, whose RTS takes only its "safe" options;
 * -rtsopts=none) exits non-zero; one that leaves its command line to the
 * program (-rtsopts=ignore) reads the probe's GHCRTS and stops on its
 * unopenable -ol; one that ignores both (-rtsopts=ignoreAll) goes on and
 * dies of SIGSYS at a tripwire. The program's main never runs. Where the
 * filter cannot be installed (no seccomp, a container that refuses it,
 * another architecture) the program is not run at all. Bounded by
 * EL_PROBE_TIMEOUT_MS (then its process group is killed). Returns 1
 * (take them), 0 (not: why into why), -1 when its RTS has no eventlog
 * support at all (built without -eventlog: EL_PROBE_NO_EVENTLOG), or -2
 * when it refuses one of opts that its way lacks, e.g. -hy without -prof
 * (the RTS's words into why: EL_PROBE_NEEDS_WAY; it printed them, then
 * its --info table, and exited 0; as arguments or in GHCRTS the program
 * would stop at once). */
static int probe_rts_args(const char *exe, char *const *opts, int n,
                          const char **why) {
  static const char info[] = " [(\"GHC RTS\", \"YES\")";
  static char no_guard[160];
  int p[2], guard_err;
  *why = "cannot start the probe";
  if (pipe2(p, O_CLOEXEC) < 0) return 0;
  pid_t pid = probe_spawn(exe, opts, n, p[1], &guard_err);
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    if (guard_err == -ELIBACC && el_rtsguard_error()) {
      /* an installation fault, not this machine's limit: said at once */
      el_log(EL_LOG_WARN,
             "watch's probe of the program's RTS options not run: libseccomp, "
             "which builds the probe's filter, cannot be loaded (%s); the "
             "options go through GHCRTS",
             el_rtsguard_error());
      snprintf(no_guard, sizeof no_guard, "no probe: libseccomp not loaded");
      *why = no_guard;
    } else if (guard_err) {
      snprintf(no_guard, sizeof no_guard,
               "no probe: its seccomp filter cannot be installed here (%s)",
               strerror(-guard_err));
      *why = no_guard;
    }
    return 0;
  }
  long long deadline = now_ms() + EL_PROBE_TIMEOUT_MS;
  char out[4096];
  probe_read(p[0], out, sizeof out, deadline);
  close(p[0]);
  int st = probe_wait(pid, deadline);
  if (strstr(out, EL_PROBE_NO_EVENTLOG)) {
    /* (printed on stderr, then --info still exits 0) */
    *why = "its RTS has no eventlog support";
    return -1;
  }
  static char way[200];
  if (probe_needs_way(out, way, sizeof way)) {
    *why = way;
    return -2;
  }
  if (st == -1)
    *why = "the probe ran on instead of printing --info";
  else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
    *why =
        "its RTS went on past its flags (-rtsopts=ignoreAll?); the probe "
        "stopped it before main";
  else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    *why =
        "its RTS did not take them (an option that needs -rtsopts, "
        "-rtsopts=none or ignore, or no -eventlog?)";
  else if (!strstr(out, info))
    *why = "its output was no --info table";
  else
    return 1;
  return 0;
}

/* The RTS's first complaint in text (what the diagnosis probe printed)
 * into reason (size bytes, NUL-terminated), without the "BASE: " prefix
 * the RTS puts before each line: the first line that is not the --info
 * table (indented), a warning ("Warning: Ignoring GHCRTS ...") or the
 * usage text, its final full stop left out; "" when there is none. Returns 1 when text says the RTS
 * refused a flag (EL_RTS_USAGE, EL_RTS_BAD_SIZE, EL_RTS_SAFE_ONLY), else
 * 0. */
static int rts_complaint(const char *text, const char *base, char *reason,
                         size_t size) {
  reason[0] = 0;
  if (!strstr(text, EL_RTS_USAGE) && !strstr(text, EL_RTS_BAD_SIZE) &&
      !strstr(text, EL_RTS_SAFE_ONLY))
    return 0;
  size_t bl = strlen(base);
  for (const char *l = text; *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    const char *p = l;
    size_t m = n;
    if (m > bl + 1 && !strncmp(p, base, bl) && p[bl] == ':' && p[bl + 1] == ' ')
      p += bl + 2, m -= bl + 2;
    if (m && p[0] != ' ' && p[0] != '\t' && strncmp(p, "Warning:", 8) &&
        strncmp(p, "Usage:", 6)) {
      if (p[m - 1] == '.') m--; /* the message goes on after it */
      snprintf(reason, size, "%.*s", (int)m, p);
      break;
    }
    l += n + (nl != NULL);
  }
  return 1;
}

/* Did the program end (non-zero, having never opened its eventlog)
 * because its RTS refused its options, e.g. its own "+RTS -hy -RTS"
 * without -prof? The RTS then printed its complaint and its usage text
 * (its stderr, which watch does not read) and exited 1 in hs_init. Runs
 * it once more as the probe does (probe_fork: under the tripwire filter,
 * output into a pipe, GHCRTS as it had plus the probe's dead -ol) with
 * the argv it was started with followed by "+RTS -ol<dead> -RTS": an RTS
 * that refuses a flag prints the same complaint and usage text again; one
 * that takes them all stops at the dead -ol (or a tripwire), before main
 * and before it opens any eventlog. Not when its arguments hold --RTS
 * (the -ol<dead> would be the program's). Only for a GHC program watch
 * probed. Returns 1 with the complaint in reason (rts_complaint), else 0. */
static int rts_refused(watch_t *w, char *reason, size_t size) {
  if (!w->ghc_rts || !WIFEXITED(w->wstatus) || WEXITSTATUS(w->wstatus) == 0)
    return 0;
  char **src = w->spawn_argv ? w->spawn_argv : w->prog_argv;
  static char plus[] = "+RTS", dead[] = EL_PROBE_DEAD_OL, minus[] = "-RTS";
  size_t n = 0;
  for (; src[n]; n++)
    if (!strcmp(src[n], "--RTS")) return 0;
  char **av = calloc(n + 4, sizeof *av), **env = probe_environment();
  size_t out_size = 32768; /* the usage text is about 9 KiB */
  char *out = malloc(out_size);
  int p[2] = {-1, -1}, guard_err, r = 0;
  if (av && env && out && pipe2(p, O_CLOEXEC) == 0) {
    memcpy(av, src, n * sizeof *av);
    av[n] = plus, av[n + 1] = dead, av[n + 2] = minus;
    pid_t pid = probe_fork(w->exe, av, env, p[1], &guard_err);
    close(p[1]);
    if (pid >= 0) {
      long long deadline = now_ms() + EL_PROBE_TIMEOUT_MS;
      probe_read(p[0], out, out_size, deadline);
      probe_wait(pid, deadline);
      const char *base = strrchr(w->prog_argv[0], '/');
      r = rts_complaint(out, base ? base + 1 : w->prog_argv[0], reason, size);
    }
    close(p[0]);
  }
  if (env) free(env[0]);
  free(env);
  free(av);
  free(out);
  return r;
}

/* The program's argv with the RTS options first: argv[0] +RTS OPTS -RTS
 * ARGS... into w->spawn_argv (malloc'd). Returns 0 or -1 (no memory). */
static int args_with_rts(watch_t *w, char *const *opts, int n) {
  size_t na = 0;
  while (w->prog_argv[na]) na++;
  char **av = calloc(na + (size_t)n + 3, sizeof *av);
  if (!av) return -1;
  static char plus[] = "+RTS", minus[] = "-RTS";
  size_t k = 0;
  av[k++] = w->prog_argv[0];
  av[k++] = plus;
  for (int i = 0; i < n; i++) av[k++] = opts[i];
  av[k++] = minus;
  for (size_t i = 1; i < k && i < sizeof w->rts_added / sizeof *w->rts_added;
       i++)
    w->rts_added[i - 1] = av[i];
  for (size_t i = 1; i < na; i++) av[k++] = w->prog_argv[i];
  av[k] = NULL;
  w->spawn_argv = av;
  return 0;
}

/* Append opts (n options) to GHCRTS (kept: what the user set); the text
 * added into add (size bytes). Returns 0 or -1 (out of memory). */
static int append_ghcrts(char *const *opts, int n, char *add, size_t size) {
  size_t k = 0;
  add[0] = 0;
  for (int i = 0; i < n && k < size; i++)
    k += (size_t)snprintf(add + k, size - k, "%s%s", i ? " " : "", opts[i]);
  const char *old = getenv("GHCRTS");
  size_t len = (old ? strlen(old) + 1 : 0) + strlen(add) + 1;
  char *v = malloc(len);
  if (!v) return -1;
  snprintf(v, len, "%s%s%s", old ? old : "", old && *old ? " " : "", add);
  int rc = setenv("GHCRTS", v, 1);
  free(v);
  return rc;
}

/* Give the program its RTS options: as arguments when it is a GHC
 * program whose RTS takes them there (probe_rts_args), else appended to
 * GHCRTS; -v info says which. In socket mode, set GHC_EVENTLOG_UNIX_PATH.
 * flush: rts_has_flush_interval's answer. Returns 0 or -1 (no memory). */
static int pass_rts_options(watch_t *w, const char *exe, int flush) {
  char *opts[EL_RTS_MAX_OPTS], add[700];
  int n = rts_options(w, flush, opts);
  const char *why = "not a GHC executable watch can read";
  int pr = flush >= 0 ? probe_rts_args(exe, opts, n, &why) : 0;
  if (pr == -1) {
    el_eprintf(
        "watch: %s was built without eventlog support (its RTS "
        "says the flag -l \"%s, -prof or -debug\"): rebuild it with "
        "ghc -eventlog; not started\n",
        w->prog_argv[0], EL_PROBE_NO_EVENTLOG);
    w->start_failed = 1;
    return -1;
  }
  if (pr == -2) {
    el_eprintf("watch: %s's RTS refuses its options: %s%s; not started\n",
               w->prog_argv[0], why,
               strstr(why, " -prof") ? " (-hT needs no profiling build; "
                                       "the other -h breakdowns need "
                                       "ghc -prof)"
                                     : "");
    w->start_failed = 1;
    return -1;
  }
  if (pr > 0) {
    if (args_with_rts(w, opts, n) < 0) return -1;
    size_t k = 0;
    for (int i = 0; i < n && k < sizeof add; i++)
      k += (size_t)snprintf(add + k, sizeof add - k, " %s", opts[i]);
    el_log(EL_LOG_INFO,
           "RTS options as arguments: %s +RTS%s -RTS ... (GHCRTS left as "
           "it was)",
           w->prog_argv[0], add);
  } else {
    if (append_ghcrts(opts, n, add, sizeof add) < 0) return -1;
    el_log(EL_LOG_INFO, "RTS options appended to GHCRTS: %s (%s: %s)", add,
           w->prog_argv[0], why);
  }
  if (w->socket_path && setenv("GHC_EVENTLOG_UNIX_PATH", w->socket_path, 1))
    return -1;
  return 0;
}

/* Give the program its RTS options (pass_rts_options) and, in socket
 * mode, GHC_EVENTLOG_UNIX_PATH. Says, once, how the data will arrive.
 * Returns 0 or -1 (out of memory; or the program is gone: start_failed
 * set). */
static int set_environment(watch_t *w) {
  char exe[4096];
  if (find_program(w->prog_argv[0], exe, sizeof exe) != 0) {
    w->start_failed = check_program(w); /* gone since the first check */
    return -1;
  }
  int flush = rts_has_flush_interval(exe);
  snprintf(w->exe, sizeof w->exe, "%s", exe);
  w->ghc_rts = flush >= 0;
  if (pass_rts_options(w, exe, flush) < 0) return -1;
  if (w->socket_path) {
    /* eventlog-socket's flush does nothing before GHC 9.2 (peers'
     * README): the same wait as through a FIFO */
    if (flush == 0)
      el_eprintf(
          "watch: %s's runtime has no --eventlog-flush-interval "
          "(GHC 9.0 or older): eventlog-socket sends its eventlog when "
          "a capability's 2 MiB buffer fills, when watch connects, and "
          "at exit; the page stays empty until then\n",
          w->prog_argv[0]);
    return 0;
  }
  if (flush == 0)
    el_eprintf(
        "watch: %s's runtime has no --eventlog-flush-interval "
        "(GHC 9.0 or older): its eventlog arrives when a "
        "capability's 2 MiB buffer fills, and at exit; the page "
        "stays empty until then\n",
        w->prog_argv[0]);
  else if (flush == 2)
    el_eprintf(
        "watch: %s's runtime is a shared library (-dynamic): no "
        "--eventlog-flush-interval given; with GHC 9.0 the eventlog "
        "arrives when a 2 MiB buffer fills, and at exit\n",
        w->prog_argv[0]);
  else if (flush < 0)
    el_eprintf(
        "watch: %s is not a GHC executable watch can read "
        "(a script?): no --eventlog-flush-interval given; with "
        "GHC 9.0 the eventlog arrives when a 2 MiB buffer "
        "fills, and at exit\n",
        w->prog_argv[0]);
  return 0;
}

/* The program's own process group outlives a SIGKILL or a crash of
 * watch: a wrapper (a shell script, cabal run, stack exec) that is
 * killed with watch (PR_SET_PDEATHSIG, program_child) leaves its GHC
 * program running, blocked for ever on the full FIFO it holds open (h76).
 * The guard is a process of its own that waits on a pipe only watch
 * writes: a byte (the program exited: guard_release) and it ends; the
 * pipe's end without one (watch died) and it kills the program's group
 * (SIGKILL). Between fork and _exit it makes async-signal-safe calls
 * only: every catchable signal ignored (a signal to watch's group is not
 * for it), every descriptor but the pipe's closed. Only when the program
 * has a group of its own (w->own_group: not at a terminal, where the
 * group is watch's and the terminal's). Without one (no pipe, no fork)
 * only the direct child is killed with watch. */
static void start_guard(watch_t *w) {
  int p[2];
  w->guard_fd = -1;
  if (!w->own_group || pipe2(p, O_CLOEXEC) < 0) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t g = fork();
  if (g == 0) {
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    for (int s = 1; s < NSIG; s++)
      if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
        sigaction(s, &ign, NULL);
    for (int fd = 0; fd < 1024; fd++)
      if (fd != p[0]) close(fd);
    char c;
    ssize_t r;
    while ((r = read(p[0], &c, 1)) < 0 && errno == EINTR)
      ;
    if (r == 0) kill(-w->pid, SIGKILL); /* watch died */
    _exit(0);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(p[0]);
  if (g < 0) {
    close(p[1]);
    return;
  }
  w->guard_pid = g;
  w->guard_fd = p[1];
}

/* The program exited: the guard ends without killing, and is waited for.
 * Nothing when there is none. */
static void guard_release(watch_t *w) {
  if (w->guard_fd < 0) return;
  ssize_t r;
  while ((r = write(w->guard_fd, "x", 1)) < 0 && errno == EINTR)
    ;
  close(w->guard_fd);
  w->guard_fd = -1;
  while (waitpid(w->guard_pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* The reaper thread: waits for the program's exit and takes its status,
 * but leaves it a zombie (WNOWAIT) until el_cmd_watch reaps it at the end,
 * so that its pid, its process group's id, is not reused meanwhile: a
 * signal forwarded to the group (forward_target) can reach no other
 * process (h78). */
static void *reap(void *ud) {
  watch_t *w = ud;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  while (waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOWAIT) < 0 &&
         errno == EINTR)
    ;
  int st = si.si_status & 0xff;
  w->wstatus = si.si_code == CLD_EXITED   ? st << 8
               : si.si_code == CLD_DUMPED ? (st & 0x7f) | 0x80
                                          : st & 0x7f;
  w->exited = 1;
  guard_release(w);
  return NULL;
}

/* The program's exit as a shell would give it. */
static int exit_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 1;
}

/* {====== signals ======}
 * watch must never die of a signal while its program runs: the program
 * would then block for ever writing a FIFO nobody reads, and the private
 * folder would stay. So every signal whose default action ends a process
 * (but SIGKILL and the faults of watch itself) is either forwarded to the
 * program or ignored (docs/exit-codes.md "watch and signals"):
 *  - forwarded: SIGINT SIGTERM SIGHUP SIGQUIT SIGUSR1 SIGUSR2, as sent; the
 *    input then ends when the program exits. SIGINT SIGTERM SIGHUP SIGQUIT
 *    while the program runs also cancel the terminal's default linger
 *    (watch ends with the program; an explicit --linger stays); after the program's end they end watch (no linger, or the
 *    linger);
 *  - ignored: SIGPIPE SIGALRM SIGVTALRM SIGPROF SIGXCPU SIGXFSZ SIGIO
 *    SIGPWR and the real-time signals (default again in the program).
 * Where the program runs: at an interactive terminal (stdin a terminal
 * and watch in its foreground process group) it shares watch's process
 * group, so ^C reaches it directly and watch forwards only what a process
 * sent (si_code <= 0), not the terminal's (SI_KERNEL). Otherwise (a script,
 * timeout(1), CI) it gets its own process group, so that a signal to the
 * group reaches only watch, which forwards it: the program gets it once
 * (GHC takes a second SIGINT as "exit now", skipping its cleanup). A
 * repeat of a signal within 1 s of its forward is the same signal sent
 * twice (timeout(1) signals the child and then its group) and is not
 * forwarded again. ^Z in that case stops the program too (SIGTSTP
 * forwarded, then watch stops), SIGCONT continues it. */

static const int forwarded_sigs[] = {SIGINT,  SIGTERM, SIGHUP,
                                     SIGQUIT, SIGUSR1, SIGUSR2};
static const int ending_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static const int ignored_sigs[] = {SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF,
                                   SIGXCPU, SIGXFSZ, SIGIO,     SIGPWR};
#define NFWD (sizeof forwarded_sigs / sizeof forwarded_sigs[0])

static struct timespec g_last_forward[NFWD]; /* monotonic, 0: never */

static int is_in(int sig, const int *set, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (set[k] == sig) return 1;
  return 0;
}

/* Was sig (forwarded_sigs[k]) forwarded less than 1 s ago? Notes now as
 * its last forward when not. Async-signal-safe (clock_gettime). */
static int repeat_within_1s(size_t k) {
  struct timespec now, *last = &g_last_forward[k];
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (last->tv_sec || last->tv_nsec) {
    double d = (double)(now.tv_sec - last->tv_sec) +
               (double)(now.tv_nsec - last->tv_nsec) / 1e9;
    if (d < 1.0) return 1;
  }
  *last = now;
  return 0;
}

/* The program has ended (or never started): a signal that ends a process
 * ends watch's linger, or keeps it from starting. SIGTERM is what the
 * linger waits for (web_serve_until_signal): the others are turned into
 * it. */
static void end_linger(watch_t *w, int sig) {
  if (!is_in(sig, ending_sigs, sizeof ending_sigs / sizeof ending_sigs[0]))
    return;
  el_daemon_opts_t *d = w->d;
  if (d) d->no_linger = 1;
  if (sig != SIGTERM) kill(getpid(), SIGTERM);
}

/* Where a forwarded signal goes: the program's process group when it has
 * one of its own (h77: a wrapper that does not exec, a shell script or
 * `cabal run`, would otherwise get it alone, and its GHC program would
 * run on, blocked on its FIFO once watch is gone), as a terminal sends
 * its signals to the whole foreground group; else the program. */
static pid_t forward_target(const watch_t *w) {
  return w->own_group ? -w->pid : w->pid;
}

static void forward(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  int saved = errno;
  watch_t *w = g_watch;
  if (!w) goto out;
  if (w->pid <= 0 || w->exited) {
    end_linger(w, sig);
    goto out;
  }
  if (sig == SIGCONT) {
    if (w->own_group) kill(-w->pid, SIGCONT);
    goto out;
  }
  if (sig == SIGTSTP) { /* own group only: stop the program, then us */
    kill(-w->pid, SIGTSTP);
    kill(getpid(), SIGSTOP);
    goto out;
  }
  /* A signal that ends a process, while the program runs (^C at the
   * terminal among them): watch ends with the program, without the
   * terminal's default linger (it used to linger until a second ^C). An
   * explicit --linger stays: the view after the end was asked for. */
  if (is_in(sig, ending_sigs, sizeof ending_sigs / sizeof ending_sigs[0]) &&
      w->d && !w->linger_asked)
    w->d->no_linger = 1;
  /* At a terminal the program got the terminal's signal itself. */
  if (!w->own_group && !(si && si->si_code <= 0)) goto out;
  for (size_t k = 0; k < NFWD; k++)
    if (forwarded_sigs[k] == sig && !repeat_within_1s(k))
      kill(forward_target(w), sig);
out:
  errno = saved;
}

/* Install watch's dispositions (above); own_group: where the program
 * runs. */
static void install_forwarding(watch_t *w) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < NFWD; k++) sigaction(forwarded_sigs[k], &sa, NULL);
  if (w->own_group) {
    sigaction(SIGTSTP, &sa, NULL);
    sigaction(SIGCONT, &sa, NULL);
  }
  for (size_t k = 0; k < sizeof ignored_sigs / sizeof ignored_sigs[0]; k++)
    signal(ignored_sigs[k], SIG_IGN);
  for (int r = SIGRTMIN; r <= SIGRTMAX; r++) signal(r, SIG_IGN);
}

/* The program's child, between fork and exec (async-signal-safe calls
 * only): a process group of its own when own_group, the signals watch
 * handles or ignores back to their defaults (ignored ones would be
 * inherited through exec), none blocked; and killed (SIGKILL) if watch
 * dies first (PR_SET_PDEATHSIG; watch forks from its main thread, whose
 * end is the process's): nobody reads the program's FIFO then, and a GHC
 * program opens its eventlog for reading too ("wb+"), so it would block
 * for ever on the full pipe, never told (h74: `kill -9` of watch). A
 * text file the kernel cannot execute (ENOEXEC: a script without a #!
 * line) runs under /bin/sh with sh_av ("sh", exe, av[1]...; NULL: not,
 * sh_runs), as a shell and execvp run it (h76). A failed exec writes its
 * errno to err_fd and exits 127. */
static void program_child(const char *exe, char *const *av, char *const *sh_av,
                          int own_group, pid_t parent, int err_fd) {
  if (own_group) setpgid(0, 0);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (size_t k = 0; k < NFWD; k++) sigaction(forwarded_sigs[k], &dfl, NULL);
  for (size_t k = 0; k < sizeof ignored_sigs / sizeof ignored_sigs[0]; k++)
    sigaction(ignored_sigs[k], &dfl, NULL);
  for (int r = SIGRTMIN; r <= SIGRTMAX; r++) sigaction(r, &dfl, NULL);
  sigaction(SIGTSTP, &dfl, NULL);
  sigaction(SIGCONT, &dfl, NULL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127); /* watch died before the prctl */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execve(exe, av, environ);
  int e = errno;
  if (e == ENOEXEC && sh_av) {
    execve("/bin/sh", sh_av, environ);
    e = ENOEXEC; /* the exec error a user can act on */
  }
  if (write(err_fd, &e, sizeof e) < 0) _exit(127);
  _exit(127);
}

/* May exe, which the kernel refused (ENOEXEC), run under /bin/sh? As
 * bash decides: a text file, with no NUL byte before its first newline
 * in its first 80 bytes (an ELF for another machine, a binary: not; h77:
 * it ran under sh, "Syntax error"). 0 when it cannot be read. */
static int sh_runs(const char *exe) {
  int fd = open(exe, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char b[80];
  ssize_t n = read(fd, b, sizeof b);
  close(fd);
  for (ssize_t i = 0; i < n; i++) {
    if (b[i] == '\n') return 1;
    if (b[i] == '\0') return 0;
  }
  return n >= 0;
}

/* Start the program: fork program_child with the executable w->exe and
 * argv av, every signal blocked across the fork. Returns 0 and *pid, or
 * the errno of the fork or of the exec (as posix_spawnp would). */
static int spawn_program(watch_t *w, char *const *av, pid_t *pid) {
  int st[2];
  if (pipe2(st, O_CLOEXEC) < 0) return errno;
  size_t n = 0;
  while (av[n]) n++;
  char **sh_av = sh_runs(w->exe) ? malloc((n + 2) * sizeof *sh_av) : NULL;
  if (sh_av) {
    sh_av[0] = "sh";
    sh_av[1] = w->exe;
    for (size_t i = 1; i <= n; i++) sh_av[i + 1] = av[i];
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid(), p = fork();
  if (p == 0) program_child(w->exe, av, sh_av, w->own_group, parent, st[1]);
  int fork_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  free(sh_av);
  close(st[1]);
  if (p < 0) {
    close(st[0]);
    return fork_err;
  }
  if (w->own_group) setpgid(p, p); /* as the child does: no race */
  int e = 0;
  ssize_t r;
  while ((r = read(st[0], &e, sizeof e)) < 0 && errno == EINTR)
    ;
  close(st[0]);
  if (r == (ssize_t)sizeof e) { /* the exec failed */
    while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
      ;
    return e ? e : ENOEXEC;
  }
  *pid = p;
  return 0;
}

/* Does watch run at an interactive terminal: stdin a terminal whose
 * foreground process group is watch's? */
static int at_terminal(void) {
  return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* Start the program (the pipeline is ready). */
static int start_program(watch_t *w) {
  if (set_environment(w) < 0) {
    if (!w->start_failed) el_eprintf("watch: out of memory\n");
    return -1;
  }
  w->own_group = !at_terminal(); /* else the terminal's group */
  g_watch = w;
  if (!w->test_stop_processing) install_forwarding(w);
  w->started = time(NULL);
  char **av = w->spawn_argv ? w->spawn_argv : w->prog_argv;
  int rc = spawn_program(w, av, &w->pid);
  if (rc != 0) {
    el_eprintf("watch: cannot start %s: %s\n", w->prog_argv[0], strerror(rc));
    w->pid = 0;
    w->start_failed = rc == ENOENT ? 127 : 126; /* as a shell */
    return -1;
  }
  start_guard(w);
  if (pthread_create(&w->reaper, NULL, reap, w) != 0) {
    el_eprintf("watch: cannot wait for %s: out of threads\n", w->prog_argv[0]);
    kill(w->pid, SIGTERM);
    waitpid(w->pid, &w->wstatus, 0);
    w->exited = 1;
    guard_release(w);
    return -1;
  }
  w->reaper_started = 1;
  return 0;
}

/* {====== the pipeline's hooks ======} */

static int on_ready(void *ud, el_web_t *web) {
  watch_t *w = ud;
  if (start_program(w) < 0) return -1;
  if (w->test_open_delay_ms > 0) usleep(w->test_open_delay_ms * 1000u);
  char err[1024];
  const el_httpd_plugin_t *hp = web ? el_httpd_plugin(err, sizeof err) : NULL;
  int port = hp ? hp->web_view_port(web) : -1; /* opened: web runs */
  /* The --web-host given, unless it is a wildcard or an IPv6 literal. */
  const char *h = w->d->web.web_host;
  if (!h[0] || strchr(h, ':') || !strcmp(h, "0.0.0.0")) h = "127.0.0.1";
  if (port > 0) snprintf(w->url, sizeof w->url, "http://%s:%d/", h, port);
  if (port > 0)
    el_eprintf(
        "watch: web view http://%s:%d/ "
        "(Prometheus: http://%s:%d/metrics)\n",
        h, port, h, port);
  return 0;
}

/* Whether OTEL_RESOURCE_ATTRIBUTES has a service.name pair, read as the
 * daemon reads it (el_otlp_baggage_parse: spaces around keys, percent
 * escapes; h49: a substring test missed "service.name = foo" and took
 * "my.service.name=foo"). A malformed value says no: the daemon reports
 * it. */
static bool env_names_service(void) {
  const char *ra = getenv("OTEL_RESOURCE_ATTRIBUTES");
  el_otlp_header_t *kv = NULL;
  size_t n = 0;
  char why[128];
  if (!ra || el_otlp_baggage_parse(ra, &kv, &n, why, sizeof why) < 0)
    return false;
  bool found = false;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(kv[i].name, "service.name")) found = true;
  el_otlp_headers_free(kv, n);
  return found;
}

/* The program's eventlog was processed and --linger (or a TTY) keeps the
 * web view: wait for the program (its eventlog ended, so it is exiting)
 * and say where the page stays. */
static void warn_no_input(watch_t *w);

static void before_linger(void *ud, el_web_t *web) {
  watch_t *w = ud;
  (void)web;
  if (w->reaper_started) {
    pthread_join(w->reaper, NULL);
    w->reaper_started = 0;
  }
  if (w->exited) {
    warn_no_input(w);
    el_eprintf(
        "watch: %s exited with status %d; the web view stays at %s "
        "until Ctrl-C\n",
        w->prog_argv[0], exit_status(w->wstatus), w->url);
  }
}

static int prepare(void *ud, el_daemon_opts_t *o) {
  watch_t *w = ud;
  w->d = o;
  /* a tee that cannot be opened is a setup failure: said before the
   * program is started, not after (h42) */
  if (o->src.log_file && el_src_tee_check(o->src.log_file) < 0) return 1;
  w->flush_s = o->flush_s;
  snprintf(w->breakdown, sizeof w->breakdown, "%s", o->breakdown);
  if (o->src.kind == EL_SRC_UNIX && o->src.nsources == 1) {
    w->socket_path = o->src.path;
    /* Failing to connect while the program starts or ends is normal. */
    o->src.peer_exited = &w->exited;
  } else if (o->src.kind != EL_SRC_NONE) {
    el_eprintf(
        "watch: it reads the program's eventlog itself: of "
        "the source options only --eventlog-socket PATH (an "
        "eventlog-socket program) is accepted\n");
    return 2;
  } else {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    /* The RTS splits GHCRTS at white space, with no quoting: an -ol path
     * with a space would reach it as two arguments. */
    if (tmp[strcspn(tmp, " \t\n\v\f\r")]) {
      el_eprintf(
          "watch: TMPDIR (%s) contains white space, which GHCRTS cannot "
          "carry: the FIFO goes in /tmp instead\n",
          tmp);
      tmp = "/tmp";
    }
    snprintf(w->dir, sizeof w->dir, "%s/eventlog-live-watch.XXXXXX", tmp);
    if (!mkdtemp(w->dir)) {
      el_eprintf("watch: cannot create a private folder %s: %s\n", w->dir,
                 strerror(errno));
      w->dir[0] = 0;
      return 1;
    }
    snprintf(w->fifo, sizeof w->fifo, "%s/eventlog.fifo", w->dir);
    if (mkfifo(w->fifo, 0600) < 0) {
      el_eprintf("watch: cannot create the FIFO %s: %s\n", w->fifo,
                 strerror(errno));
      w->fifo[0] = 0;
      return 1;
    }
    w->hold_fd = open(w->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (w->hold_fd < 0) {
      el_eprintf("watch: cannot open the FIFO %s: %s\n", w->fifo,
                 strerror(errno));
      return 1;
    }
    o->fifo_hold_fd = &w->hold_fd;
    el_src_opts_set_path(&o->src, w->fifo);
    o->src.fifo_reopen = 1; /* each GHC program a wrapper runs */
  }
  /* service.name: the program's name unless --service-name,
   * OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES gives one. */
  if (!o->otlp.flag.service_name && !getenv("OTEL_SERVICE_NAME") &&
      !env_names_service()) {
    const char *base = strrchr(w->prog_argv[0], '/');
    o->otlp.flag.service_name = base ? base + 1 : w->prog_argv[0];
  }
  o->own_signals = !w->test_stop_processing;
  if (w->test_stop_processing) o->src.drain_s = 0;
  o->no_linger = !w->linger;
  o->before_linger = before_linger;
  o->no_input_hint =
      "watch passed -l to the program; it may not have written "
      "its eventlog yet: without --eventlog-flush-interval (GHC 9.0) "
      "the eventlog arrives only when a capability's 2 MiB buffer "
      "fills, and at exit.";
  o->on_ready = on_ready;
  o->ready_ud = w;
  o->args_added = w->rts_added;
  o->end_when_idle = &w->exited;
  o->sessions_out = &w->sessions;
  return 0;
}

/* The program never delivered an eventlog (no session): with
 * --eventlog-socket it never listened there; with the FIFO it never
 * opened it (not a GHC program, linked with -rtsopts=none or ignoreAll so
 * that its RTS ignored the options watch gave it, or its own -ol sent
 * the eventlog elsewhere). Say so
 * once, before the linger or at the end, and name the eventlog file its
 * RTS wrote instead: its own -ol<FILE>, or <program>.eventlog in the
 * current folder, if one appeared. When its RTS refused its options
 * (rts_refused: it said why and exited 1), say that instead. */
static void warn_no_input(watch_t *w) {
  if (w->warned_no_input || w->sessions > 0) return;
  w->warned_no_input = 1;
  char reason[300];
  if (rts_refused(w, reason, sizeof reason)) {
    el_eprintf(
        "watch: %s's RTS refused its options (see its message above)%s%s; "
        "it exited before it opened its eventlog\n",
        w->prog_argv[0], reason[0] ? ": " : "", reason);
    return;
  }
  const char *base = strrchr(w->prog_argv[0], '/');
  base = base ? base + 1 : w->prog_argv[0];
  if (w->socket_path)
    el_eprintf(
        "watch: warning: %s never listened on %s: no eventlog was read. "
        "Is it linked with eventlog-socket, and does it start it (e.g. "
        "GHC.Eventlog.Socket.startFromEnv, which reads "
        "GHC_EVENTLOG_UNIX_PATH)?\n",
        w->prog_argv[0], w->socket_path);
  else
    el_eprintf(
        "watch: warning: %s never opened the eventlog FIFO watch named "
        "in its RTS options: no eventlog was read. Is it a GHC program built "
        "with -eventlog whose RTS reads its options (not linked with "
        "-rtsopts=none or -rtsopts=ignoreAll), and do its own RTS options "
        "(+RTS -ol<file>) not send the eventlog elsewhere?\n",
        w->prog_argv[0]);
  for (char **a = w->prog_argv + 1; *a; a++)
    if (!strncmp(*a, "-ol", 3) && (*a)[3]) {
      el_eprintf("watch: %s's arguments give %s\n", w->prog_argv[0], *a);
      return;
    }
  char file[4200];
  snprintf(file, sizeof file, "%s.eventlog", base);
  struct stat st;
  if (stat(file, &st) == 0 && st.st_mtime >= w->started)
    el_eprintf("watch: %s wrote its eventlog to %s instead\n", w->prog_argv[0],
               file);
}

/* After the program's exit, how long watch goes on reading and discarding
 * its FIFO while another process still holds it open for writing
 * (drain_until_exit), in ms. */
#define HELD_DRAIN_MS 5000

/* The pipeline ended: read and discard the FIFO until the program exits,
 * and after that while what it left behind still holds the FIFO open for
 * writing (a wrapper's GHC program finishing after the wrapper died of a
 * forwarded signal, h78; a child that inherited the descriptor), at most
 * HELD_DRAIN_MS, so that none of them blocks for ever on a full pipe.
 * Returns at once when the program has exited and nobody holds the FIFO
 * (the usual end: everything was read). */
static void drain_until_exit(watch_t *w) {
  if (!w->fifo[0]) { /* a socket: the program sees the reader go */
    while (!w->exited) usleep(100000);
    return;
  }
  int fd = open(w->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    el_eprintf("watch: cannot reopen %s to drain it: %s\n", w->fifo,
               strerror(errno));
    while (!w->exited) usleep(100000);
    return;
  }
  /* Said only once bytes come after the processing ended: the usual end
   * (its eventlog closed, the input ended, it exits) comes here too. */
  static char buf[65536];
  unsigned long long drained = 0;
  long long exit_ms = 0;
  int held = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (drained == 0)
        el_eprintf(w->exited
                       ? "watch: %s has exited, but a process it left still "
                         "writes its eventlog: reading and discarding it "
                         "until that one closes it\n"
                       : "watch: the processing ended before %s: reading and "
                         "discarding its eventlog until it exits\n",
                   w->prog_argv[0]);
      drained += (unsigned long long)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (w->exited) {
      if (n == 0) break; /* no writer left, everything read */
      if (!exit_ms) exit_ms = now_ms();
      if (now_ms() - exit_ms >= HELD_DRAIN_MS) {
        held = 1;
        break;
      }
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (n == 0 || poll(&p, 1, 200) < 0 || (p.revents & POLLHUP))
      usleep(100000); /* no writer now: EOF or POLLHUP at once */
  }
  close(fd);
  if (drained > 0)
    el_eprintf(
        "watch: discarded %llu bytes of eventlog after the "
        "processing ended\n",
        drained);
  if (held)
    el_eprintf(
        "watch: warning: %d s after %s exited, another process still holds "
        "its eventlog FIFO open for writing (a child that inherited it): it "
        "will block if it writes more than the pipe holds\n",
        HELD_DRAIN_MS / 1000, w->prog_argv[0]);
}

static void cleanup(watch_t *w) {
  if (w->hold_fd >= 0) close(w->hold_fd);
  w->hold_fd = -1;
  free(w->spawn_argv);
  w->spawn_argv = NULL;
  if (w->fifo[0]) unlink(w->fifo);
  if (w->dir[0]) rmdir(w->dir);
}

/* Print a as one shell word: as is when it holds only characters no
 * shell treats specially, else in single quotes. */
static void print_word(FILE *f, const char *a) {
  if (*a && !a[strspn(a,
                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789_-+=./,:@%")]) {
    fputs(a, f);
    return;
  }
  fputc('\'', f);
  for (; *a; a++)
    if (*a == '\'')
      fputs("'\\''", f);
    else
      fputc(*a, f);
  fputc('\'', f);
}

/* watch's arguments hold no "--": --help, or a usage error (2). When the
 * first argument is not an option, they are all the program and its
 * arguments (watch takes no operand), given without the "--": the message
 * shows the command with it. Any other argument that is not an option may
 * be the program or an option's value: the message says where the
 * program goes. No argument that is not an option: no program. */
static int no_separator(int argc, char **argv) {
  int operand = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help")) {
      print_help(stdout);
      return 0;
    }
    operand |= argv[i][0] != '-';
  }
  if (argc > 1 && argv[1][0] != '-') {
    el_eprintf("watch: put the program and its arguments after --: ");
    fputs("eventlog-live watch [OPTIONS] --", stderr);
    for (int i = 1; i < argc; i++) {
      fputc(' ', stderr);
      print_word(stderr, argv[i]);
    }
    fputc('\n', stderr);
  } else if (operand) {
    el_eprintf(
        "watch: put the program and its arguments after --: eventlog-live "
        "watch [OPTIONS] -- PROGRAM [ARGS...] (see --help)\n");
  } else {
    el_eprintf(
        "watch: no program: eventlog-live watch [OPTIONS] -- "
        "PROGRAM [ARGS...] (see --help)\n");
  }
  return 2;
}

int el_cmd_watch(int argc, char **argv) {
  watch_t w;
  memset(&w, 0, sizeof w);
  w.hold_fd = -1;
  w.guard_fd = -1;
  int sep = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--")) {
      sep = i;
      break;
    }
  if (!sep) return no_separator(argc, argv);
  if (sep + 1 >= argc) {
    el_eprintf("watch: no program after --\n");
    return 2;
  }
  w.prog_argv = argv + sep + 1; /* argv[argc] is NULL */
  int help = 0;
  for (int i = 1; i < sep; i++) help |= !strcmp(argv[i], "--help");
  int st0 = help ? 0 : check_program(&w);
  if (st0) return st0;
  /* --linger / --no-linger are watch's own: taken out of the options
   * the pipeline parses (argv is ours to reorder up to sep). */
  w.linger = -1;
  int kept = 1;
  for (int i = 1; i < sep; i++) {
    if (!strcmp(argv[i], "--linger"))
      w.linger = w.linger_asked = 1;
    else if (!strcmp(argv[i], "--no-linger"))
      w.linger = w.linger_asked = 0;
    else
      argv[kept++] = argv[i];
  }
  if (w.linger < 0) w.linger = isatty(STDIN_FILENO);
  argv[kept] = NULL; /* a copy of it is at kept - 1 or it was "--" */
  sep = kept;
  const char *hook = getenv("EL_TEST_WATCH_STOP_PROCESSING_ON_SIGINT");
  w.test_stop_processing = hook && !strcmp(hook, "1");
  const char *delay = getenv("EL_TEST_WATCH_OPEN_DELAY_MS");
  if (delay) w.test_open_delay_ms = (unsigned)strtoul(delay, NULL, 10);
  el_otelcol_embed_t e = {.prog = "watch",
                          .help = print_help,
                          .local = 1,
                          .prepare = prepare,
                          .ud = &w};
  int ds = el_otelcol_main(sep, argv, &e);
  w.d = NULL;   /* it was el_otelcol_main's */
  if (!w.pid) { /* never started: setup or usage failed, or --help */
    cleanup(&w);
    return w.start_failed ? w.start_failed : ds;
  }
  drain_until_exit(&w); /* returns at once when nothing holds the FIFO */
  if (w.reaper_started) pthread_join(w.reaper, NULL);
  g_watch = NULL; /* the handlers stay, doing nothing, until exit */
  while (waitpid(w.pid, NULL, 0) < 0 && errno == EINTR)
    ;                             /* the zombie the reaper left (reap) */
  if (ds == 0) warn_no_input(&w); /* before cleanup: spawn_argv */
  cleanup(&w);
  int st = exit_status(w.wstatus);
  if (ds != 0)
    el_eprintf(
        "watch: the processing failed (status %d); %s exited "
        "with status %d\n",
        ds, w.prog_argv[0], st);
  else
    el_log(EL_LOG_INFO, "%s exited with status %d", w.prog_argv[0], st);
  return st;
}
