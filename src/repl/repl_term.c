/* repl_term.c: libedit on a reader thread (repl_term.h). */
#include "repl_term.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include <editline/readline.h>

#include "../common/el_common.h"

struct el_repl_term_s {
  el_repl_term_cfg_t cfg;
  char *history;       /* NULL: none kept */
  int history_said;    /* a failed write of history said (once) */
  mode_t history_mode; /* the file's permissions at start; 0: new file */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char prompt[64];
  int want;                 /* a read was asked for */
  int quit;                 /* the thread must exit */
  int cancel;               /* el_repl_term_cancel: drop the line read */
  /* A terminal only: its fd (-1 otherwise), its settings at start (put
   * back at stop) and the pipe that wakes term_getc for a cancel. */
  int in_fd;
  struct termios saved;
  int wake[2];
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

/* libedit (3.1-20221030, Debian 12) rings the terminal's bell after
 * every completion (filecomplete.c fn_complete), also when the word had
 * one candidate and was completed whole; readline rings it only when the
 * word stays ambiguous. For a unique completion the bell capability is
 * set to a padding of no length, which writes nothing; otherwise back to
 * BEL (^G, terminfo's `bel` on every common terminal). */
static void bell_for(char **m) {
  int unique = m && (!m[1] || (!m[2] && strcmp(m[0], m[1]) == 0));
  rl_parse_and_bind(unique ? "settc bl $<0>" : "settc bl \a");
}

static char **attempted(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1; /* our matches or none: no fallback */
  free_cands();
  if (!g_term || !g_term->cfg.complete) return NULL;
  int files = 0;
  g_cands = g_term->cfg.complete(g_term->cfg.ud, text,
                                 rl_line_buffer ? rl_line_buffer : "",
                                 start, &files);
  char **m = NULL;
  if (files) /* libedit's file names, as its own fallback gives them */
    m = rl_completion_matches(text, rl_filename_completion_function);
  else if (g_cands && g_cands[0])
    m = rl_completion_matches(text, generator);
  free_cands();
  bell_for(m);
  return m;
}

/* libedit's input on a terminal (rl_getc_function): the next character,
 * decoded in the locale as libedit's own reader does (an invalid byte is
 * dropped), or -1 for the end of input or a read cancelled by
 * el_repl_term_cancel (libedit then ends the line; reader() drops it).
 * Waits on the terminal and the wake pipe at once. Reader thread. */
static int term_getc(FILE *unused) {
  el_repl_term_t *t = g_term;
  mbstate_t mb;
  (void)unused;
  memset(&mb, 0, sizeof mb);
  for (;;) {
    struct pollfd p[2] = {{t->in_fd, POLLIN, 0}, {t->wake[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (p[1].revents) {
      char b[16];
      while (read(t->wake[0], b, sizeof b) > 0) continue;
      pthread_mutex_lock(&t->mu);
      int cancel = t->cancel;
      pthread_mutex_unlock(&t->mu);
      if (cancel) return -1;
    }
    if (!p[0].revents) continue;
    char c;
    ssize_t n = read(t->in_fd, &c, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return -1;
    wchar_t wc;
    size_t r = mbrtowc(&wc, &c, 1, &mb);
    if (r == (size_t)-2) continue;
    if (r == (size_t)-1) {
      memset(&mb, 0, sizeof mb);
      continue;
    }
    return (int)wc;
  }
}

/* Write the history file, saying once (a warning) when it cannot be
 * written (a missing folder, no permission): history is then not kept.
 * libedit's write_history makes the file 0600: a file that was there
 * gets its own permissions back. */
static void save_history(el_repl_term_t *t) {
  if (!t->history) return;
  errno = 0;
  int rc = write_history(t->history);
  if (rc == 0) {
    if (t->history_mode && t->history_mode != (S_IRUSR | S_IWUSR))
      chmod(t->history, t->history_mode);
    return;
  }
  if (t->history_said) return;
  t->history_said = 1;
  int e = rc > 0 ? rc : errno;
  el_log(EL_LOG_WARN,
         "repl: cannot write the history file %s: %s; history is not kept "
         "(--history FILE or EVENTLOG_LIVE_HISTORY names it, --no-history "
         "keeps none)",
         t->history, e ? strerror(e) : "write failed");
}

/* Whether the history file t->history may be read and written: a
 * regular file, or none yet (libedit makes it). Anything else (/dev/null
 * as "no history", a device, a FIFO, whose reads may never end, and
 * which libedit would chmod 0600) keeps no history: said as a warning,
 * but for /dev/null. Notes a regular file's permissions. */
static int history_usable(el_repl_term_t *t) {
  struct stat st;
  if (stat(t->history, &st) != 0) return 1; /* made by the first write */
  if (S_ISREG(st.st_mode)) {
    t->history_mode = st.st_mode & 07777;
    return 1;
  }
  if (strcmp(t->history, "/dev/null") != 0)
    el_log(EL_LOG_WARN,
           "repl: the history file %s is not a regular file; history is "
           "not kept",
           t->history);
  return 0;
}

/* One line with `prompt` into *out (malloc'd, NULL at the end of input),
 * history updated. Returns 0, or 1 when the read was cancelled (the line
 * dropped, "^C" said; the caller reads again with t->prompt). */
static int read_line(el_repl_term_t *t, const char *prompt, char **out) {
  char *line = readline(prompt);
  pthread_mutex_lock(&t->mu);
  int cancelled = t->cancel;
  t->cancel = 0;
  if (!cancelled) t->want = 0;
  pthread_mutex_unlock(&t->mu);
  if (cancelled) {
    free(line);
    fputs("^C\n", t->cfg.out);
    fflush(t->cfg.out);
    return 1;
  }
  if (line && line[strspn(line, " \t")] != '\0') {
    add_history(line);
    save_history(t);
  }
  *out = line;
  return 0;
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
    char *line = NULL;
    if (read_line(t, prompt, &line) == 0) t->cfg.on_line(t->cfg.ud, line);
  }
  return NULL;
}

/* On a terminal: keep its settings for term_close, read it through
 * term_getc (so that el_repl_term_cancel can end a read) and make the
 * mode libedit puts it back in between reads echo nothing: a line typed
 * or pasted while the previous one is evaluated would otherwise be
 * echoed by the terminal, then again by libedit at the next prompt.
 * libedit echoes what it reads itself. Call around rl_initialize:
 * before = 1 before it, 0 after. Returns 0, or -1 (no pipe). */
static int term_open(el_repl_term_t *t, int before) {
  if (!before) {
    if (t->in_fd >= 0) rl_parse_and_bind("setty -x -echo");
    return 0;
  }
  int fd = fileno(t->cfg.in);
  t->in_fd = t->wake[0] = t->wake[1] = -1;
  rl_getc_function = NULL;
  if (fd < 0 || !isatty(fd) || tcgetattr(fd, &t->saved) != 0) return 0;
  if (pipe2(t->wake, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  t->in_fd = fd;
  rl_getc_function = term_getc;
  return 0;
}

/* Undo term_open: the terminal's settings as they were at start. */
static void term_close(el_repl_term_t *t) {
  if (t->in_fd < 0) return;
  tcsetattr(t->in_fd, TCSADRAIN, &t->saved);
  close(t->wake[0]);
  close(t->wake[1]);
  t->in_fd = -1;
  rl_getc_function = NULL;
}

el_repl_term_t *el_repl_term_start(const el_repl_term_cfg_t *cfg) {
  el_repl_term_t *t = el_calloc(1, sizeof *t);
  if (!t) return NULL;
  t->cfg = *cfg;
  if (cfg->history && !(t->history = el_strdup(cfg->history))) {
    el_free(t);
    return NULL;
  }
  if (term_open(t, 1) != 0) {
    el_free(t->history);
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
  term_open(t, 0);
  using_history();
  stifle_history(1000);
  if (t->history && !history_usable(t)) {
    el_free(t->history);
    t->history = NULL;
  }
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
    term_close(t);
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

void el_repl_term_cancel(el_repl_term_t *t, const char *prompt) {
  if (t->in_fd < 0) return; /* not a terminal: no term_getc to wake */
  pthread_mutex_lock(&t->mu);
  if (t->want) {
    snprintf(t->prompt, sizeof t->prompt, "%s", prompt);
    t->cancel = 1;
    if (write(t->wake[1], "c", 1) < 0) {
      /* full: a wake-up is pending already */
    }
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
  save_history(t);
  term_close(t);
  g_term = NULL;
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  el_free(t->history);
  el_free(t);
}

/* {====== the plugin's table (repl_term.h) ======} */

const el_repl_term_plugin_t el_plugin_edit = {
    {EL_REPL_TERM_ABI, "edit"}, el_repl_term_start,  el_repl_term_read,
    el_repl_term_stop,          el_repl_term_cancel,
};
