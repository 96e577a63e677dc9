/* el_paired: wall-time medians of several commands run in turn (paired,
 * interleaved runs), for scripts/bench.d/startup.sh.
 *
 * Usage: el_paired [-n RUNS] [-w WARMUP] [-c CPU] [-q] LABEL CMD [ARGS...]
 *        [:: LABEL CMD [ARGS...]]...
 * Each command runs WARMUP times (default 2, not counted), then RUNS times
 * (default 21) with stdin and stdout on /dev/null (stderr too with -q);
 * run r starts with command r mod ncommands, so
 * no command always runs first. The time is from posix_spawn to waitpid
 * (CLOCK_MONOTONIC), the cost a user sees; the CPU time (user + system,
 * from wait4) is less disturbed by other load, and the minor page faults
 * (wait4's ru_minflt: ~10 us each on a VM, start-up's main cost after
 * the process itself) not at all. Prints one line per command, times in
 * ms:
 *   LABEL wall_median wall_min wall_max cpu_median exit_status
 *   faults_median
 * With -c CPU (or, without -c, the environment variable EL_BENCH_CPU) it
 * first pins itself to that CPU, and so every command it starts: on a VM
 * whose two vCPUs differ in speed (a neighbour on one of them) a command
 * that lands now on one, now on the other, has a bimodal time, and the
 * commands compared do not share the same luck. "none" or an empty value
 * does not pin.
 * Exit status 0, or 2 on bad usage, a CPU it may not or cannot pin to,
 * or a command that cannot be started.
 * A command exiting non-zero is reported (last column), not an error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_CMDS 16
#define MAX_RUNS 1001

typedef struct {
  const char *label;
  char **argv;
  double ms[MAX_RUNS];
  double cpu[MAX_RUNS];    /* user + system ms of each run */
  double faults[MAX_RUNS]; /* minor page faults of each run */
  int status;
} cmd_t;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int quiet; /* -q: stderr to /dev/null too */

/* Run c once; returns its wall time in ms and puts its CPU time in
 * *cpu_ms and its minor page faults in *faults, or returns -1 when it
 * cannot start. */
static double run_once(cmd_t *c, double *cpu_ms, double *faults) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (quiet) posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  double t0 = now_ms();
  int rc = posix_spawnp(&pid, c->argv[0], &fa, NULL, c->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    fprintf(stderr, "el_paired: cannot start %s: %s\n", c->argv[0],
            strerror(rc));
    return -1;
  }
  int st;
  struct rusage ru;
  while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
  }
  double t = now_ms() - t0;
  *cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
            (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  *faults = (double)ru.ru_minflt;
  c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return t;
}

/* Pin this process (and what it starts) to CPU cpu ("none" or "": not
 * at all). Returns 0, or -1 with a message on stderr. */
static int pin_cpu(const char *cpu) {
  if (!cpu || !*cpu || !strcmp(cpu, "none")) return 0;
  char *end;
  errno = 0;
  long n = cpu[0] >= '0' && cpu[0] <= '9' ? strtol(cpu, &end, 10) : -1;
  if (n < 0 || errno || *end || n >= CPU_SETSIZE) {
    fprintf(stderr, "el_paired: CPU '%s' is not a CPU number\n", cpu);
    return -1;
  }
  cpu_set_t set;
  /* sched_setaffinity would widen the mask we were given (taskset) */
  if (sched_getaffinity(0, sizeof set, &set) == 0 && !CPU_ISSET((int)n, &set)) {
    fprintf(stderr, "el_paired: CPU %ld is not one this process may use\n", n);
    return -1;
  }
  CPU_ZERO(&set);
  CPU_SET((int)n, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    fprintf(stderr, "el_paired: cannot pin to CPU %ld: %s\n", n,
            strerror(errno));
    return -1;
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Split argv[i..argc) into commands at "::"; returns their count or -1. */
static int parse_cmds(int argc, char **argv, int i, cmd_t *cmds) {
  int n = 0;
  while (i < argc) {
    if (n == MAX_CMDS || i + 1 >= argc) return -1;
    cmds[n].label = argv[i++];
    cmds[n].argv = &argv[i];
    while (i < argc && strcmp(argv[i], "::") != 0) i++;
    if (i < argc) argv[i++] = NULL; /* ends this command's argv */
    if (!cmds[n].argv[0]) return -1;
    n++;
  }
  return n;
}

int main(int argc, char **argv) {
  int runs = 21, warmup = 2, i = 1;
  const char *cpu = getenv("EL_BENCH_CPU");
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "-q")) {
      quiet = 1;
      i--; /* no value */
    } else if (!strcmp(argv[i], "-n")) {
      runs = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "-w")) {
      warmup = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "-c")) {
      cpu = argv[i + 1];
    } else {
      break;
    }
  }
  static cmd_t cmds[MAX_CMDS];
  int n = parse_cmds(argc, argv, i, cmds);
  if (n <= 0 || runs < 1 || runs > MAX_RUNS || warmup < 0) {
    fprintf(stderr,
            "usage: el_paired [-n RUNS] [-w WARMUP] [-c CPU] [-q] LABEL CMD "
            "[ARGS...] [:: LABEL CMD [ARGS...]]...\n");
    return 2;
  }
  if (pin_cpu(cpu) != 0) return 2;
  double cpu_ms, faults;
  for (int w = 0; w < warmup; w++)
    for (int k = 0; k < n; k++)
      if (run_once(&cmds[k], &cpu_ms, &faults) < 0) return 2;
  for (int r = 0; r < runs; r++)
    for (int j = 0; j < n; j++) {
      cmd_t *c = &cmds[(r + j) % n];
      if ((c->ms[r] = run_once(c, &c->cpu[r], &c->faults[r])) < 0) return 2;
    }
  for (int k = 0; k < n; k++) {
    cmd_t *c = &cmds[k];
    qsort(c->ms, (size_t)runs, sizeof(double), cmp_double);
    qsort(c->cpu, (size_t)runs, sizeof(double), cmp_double);
    qsort(c->faults, (size_t)runs, sizeof(double), cmp_double);
    printf("%s %.3f %.3f %.3f %.3f %d %.0f\n", c->label, c->ms[runs / 2],
           c->ms[0], c->ms[runs - 1], c->cpu[runs / 2], c->status,
           c->faults[runs / 2]);
  }
  return 0;
}
