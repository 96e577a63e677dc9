/* el_mapguard.c: SIGBUS on a shrunk file's mapping returns to the guarded
 * region's start (el_mapguard.h). One process-wide handler, installed
 * while any thread holds a guard; each thread's guards are a stack in
 * thread-local storage (initial-exec: reading it from the handler never
 * allocates). Everything the handler calls is async-signal-safe
 * (sigaction, raise, siglongjmp; POSIX.1-2017 §2.4.3). */
#include "el_mapguard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

static __thread el_mapguard_t *tl_top
    __attribute__((tls_model("initial-exec")));

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t g_users;         /* guards pushed, all threads */
static struct sigaction g_old; /* the handler before ours */

/* A SIGBUS that is not ours: as the previous handler would have had it. */
static void chain(int sig, siginfo_t *si, void *uc) {
  if ((g_old.sa_flags & SA_SIGINFO) && g_old.sa_sigaction) {
    g_old.sa_sigaction(sig, si, uc);
    return;
  }
  if (g_old.sa_handler != SIG_DFL && g_old.sa_handler != SIG_IGN) {
    g_old.sa_handler(sig);
    return;
  }
  /* Default (an ignored fault would only fault again): die of it. A
   * fault re-runs the instruction on return; a sent signal is raised
   * again, delivered when the handler returns (SIGBUS is blocked now). */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGBUS, &dfl, NULL);
  if (si->si_code <= 0) raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  el_mapguard_t *g = tl_top;
  uintptr_t a = (uintptr_t)si->si_addr, b = g ? (uintptr_t)g->base : 0;
  if (g && si->si_code > 0 && a >= b && a - b < g->len) {
    g->fault_offset = (uint64_t)(a - b);
    siglongjmp(g->env, 1);
  }
  chain(sig, si, uc);
}

int el_mapguard_push(el_mapguard_t *g, const void *base, size_t len) {
  g->base = base;
  g->len = len;
  g->fault_offset = 0;
  pthread_mutex_lock(&g_lock);
  if (g_users == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &g_old) != 0) {
      int e = errno;
      pthread_mutex_unlock(&g_lock);
      return -e;
    }
  }
  g_users++;
  pthread_mutex_unlock(&g_lock);
  g->prev = tl_top;
  tl_top = g;
  return 0;
}

void el_mapguard_pop(el_mapguard_t *g) {
  if (tl_top == g) tl_top = g->prev;
  pthread_mutex_lock(&g_lock);
  if (g_users > 0 && --g_users == 0) sigaction(SIGBUS, &g_old, NULL);
  pthread_mutex_unlock(&g_lock);
}
