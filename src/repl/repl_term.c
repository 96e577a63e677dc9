/* repl_term.c: libedit on a reader thread (repl_term.h). */
#include "repl_term.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <editline/readline.h>

#include "../common/el_common.h"

struct el_repl_term_s {
  el_repl_term_cfg_t cfg;
  char *history;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char prompt[64];
  int want;                 /* a read was asked for */
  int quit;                 /* the thread must exit */
};

/* libedit's completion hooks are globals: one terminal per process. */
static el_repl_term_t *g_term;
static char **g_cands;      /* candidates of the current completion */
static size_t g_next;

static char *generator(const char *text, int state) {
  (void)text;
  if (state == 0) g_next = 0;
  if (!g_cands || !g_cands[g_next]) return NULL;
  /* libedit frees what we return: give it libc memory */
  return strdup(g_cands[g_next++]);
}

static void free_cands(void) {
  if (!g_cands) return;
  for (size_t i = 0; g_cands[i]; i++) free(g_cands[i]);
  free(g_cands);
  g_cands = NULL;
}

static char **attempted(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1;  /* no file names unless asked */
  free_cands();
  if (!g_term || !g_term->cfg.complete) return NULL;
  int files = 0;
  g_cands = g_term->cfg.complete(g_term->cfg.ud, text,
                                 rl_line_buffer ? rl_line_buffer : "",
                                 start, &files);
  if (files) {
    free_cands();
    rl_attempted_completion_over = 0;  /* libedit completes file names */
    return NULL;
  }
  if (!g_cands || !g_cands[0]) {
    free_cands();
    return NULL;
  }
  char **m = rl_completion_matches(text, generator);
  free_cands();
  return m;
}

static void *reader(void *arg) {
  el_repl_term_t *t = arg;
  for (;;) {
    pthread_mutex_lock(&t->mu);
    while (!t->want && !t->quit) pthread_cond_wait(&t->cv, &t->mu);
    if (t->quit) {
      pthread_mutex_unlock(&t->mu);
      break;
    }
    char prompt[sizeof t->prompt];
    memcpy(prompt, t->prompt, sizeof prompt);
    pthread_mutex_unlock(&t->mu);
    fflush(t->cfg.out);
    char *line = readline(prompt);
    if (line && line[strspn(line, " \t")] != '\0') {
      add_history(line);
      if (t->history) write_history(t->history);
    }
    pthread_mutex_lock(&t->mu);
    t->want = 0;
    pthread_mutex_unlock(&t->mu);
    t->cfg.on_line(t->cfg.ud, line);
  }
  return NULL;
}

el_repl_term_t *el_repl_term_start(const el_repl_term_cfg_t *cfg) {
  el_repl_term_t *t = el_calloc(1, sizeof *t);
  if (!t) return NULL;
  t->cfg = *cfg;
  if (cfg->history && !(t->history = el_strdup(cfg->history))) {
    el_free(t);
    return NULL;
  }
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  g_term = t;
  rl_instream = cfg->in;
  rl_outstream = cfg->out;
  rl_catch_signals = 0;     /* SIGINT is the command's (main thread) */
  rl_readline_name = "eventlog-live";
  rl_attempted_completion_function = attempted;
  rl_completion_append_character = '\0';
  /* '.' and ':' stay inside words: "el.on", ":load" */
  rl_completer_word_break_characters = " \t\n\"\\'`@$><=;|&{(),[]+-*/%^~#";
  rl_initialize();
  using_history();
  stifle_history(1000);
  if (t->history) read_history(t->history);
  /* The reader thread never takes SIGINT/SIGTERM: they go to the loop. */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGQUIT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int rc = pthread_create(&t->thread, NULL, reader, t);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    g_term = NULL;
    el_free(t->history);
    el_free(t);
    return NULL;
  }
  return t;
}

void el_repl_term_read(el_repl_term_t *t, const char *prompt) {
  pthread_mutex_lock(&t->mu);
  if (!t->want) {
    snprintf(t->prompt, sizeof t->prompt, "%s", prompt);
    t->want = 1;
    pthread_cond_signal(&t->cv);
  }
  pthread_mutex_unlock(&t->mu);
}

void el_repl_term_stop(el_repl_term_t *t) {
  if (!t) return;
  pthread_mutex_lock(&t->mu);
  t->quit = 1;
  pthread_cond_signal(&t->cv);
  pthread_mutex_unlock(&t->mu);
  pthread_join(t->thread, NULL);
  if (t->history) write_history(t->history);
  g_term = NULL;
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  el_free(t->history);
  el_free(t);
}

/* {====== the plugin's table (repl_term.h) ======} */

const el_repl_term_plugin_t el_plugin_edit = {
    {EL_REPL_TERM_ABI, "edit"},
    el_repl_term_start,
    el_repl_term_read,
    el_repl_term_stop,
};
