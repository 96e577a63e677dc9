/* cmd_stop.c: SIGINT/SIGTERM noted while a command reads a regular file
 * with its own loop (show, stats; cmd.h el__cmd_stop_begin): the loop
 * checks el__cmd_stop_signal between chunks, stops and prints what it
 * has (docs/sources.md, "End of input"). */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../host/host.h"
#include "cmd.h"

volatile sig_atomic_t el__cmd_stop_signal;

static void on_stop_signal(int sig) { el__cmd_stop_signal = sig; }

void el__cmd_stop_begin(el__cmd_stop_t *s) {
  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigaction(SIGINT, &sa, &s->old_int);
  sigaction(SIGTERM, &sa, &s->old_term);
}

void el__cmd_stop_end(const el__cmd_stop_t *s) {
  sigaction(SIGINT, &s->old_int, NULL);
  sigaction(SIGTERM, &s->old_term, NULL);
}

static struct el_host_s *volatile g_end_host;
static volatile sig_atomic_t *g_end_flag;

static void on_end_signal(int sig) {
  struct el_host_s *h = g_end_host;
  if (g_end_flag) *g_end_flag = 1;
  if (h) el_host_interrupt_signal(h, sig);
}

void el__cmd_end_set_flag(volatile sig_atomic_t *flag) { g_end_flag = flag; }

int el__cmd_stdout_is_file(void) {
  struct stat st;
  if (fstat(STDOUT_FILENO, &st) != 0) return 0;
  return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ||
         (S_ISCHR(st.st_mode) && !isatty(STDOUT_FILENO));
}

void el__cmd_end_begin(el__cmd_stop_t *s, struct el_host_s *h) {
  g_end_host = h;
  struct sigaction sa = {.sa_handler = on_end_signal,
                         .sa_flags = SA_RESETHAND | SA_RESTART};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &s->old_int);
  sigaction(SIGTERM, &sa, &s->old_term);
}

void el__cmd_end_end(const el__cmd_stop_t *s) {
  sigaction(SIGINT, &s->old_int, NULL);
  sigaction(SIGTERM, &s->old_term, NULL);
  g_end_host = NULL;
}
