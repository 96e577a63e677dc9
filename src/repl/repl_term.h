/* repl_term.h: the REPL's line editor: libedit's readline-compatible API
 * run on a thread of its own, so that the caller's libuv loop keeps
 * reading a live source while the user types (docs/repl.md).
 *
 * Protocol: the caller asks for one line with el_repl_term_read(prompt);
 * the reader thread shows the prompt, edits the line (history, tab
 * completion through cfg.complete) and hands it to cfg.on_line (on the
 * reader thread: post it to the loop, e.g. with uv_async_send); then it
 * waits for the next el_repl_term_read. Every non-blank line goes into the
 * history and the history file. On a terminal, el_repl_term_cancel
 * (Ctrl-C) drops the line being edited and starts a new read, and the
 * terminal echoes nothing between reads (libedit echoes what it reads:
 * typed-ahead input would show twice); its settings are put back at
 * el_repl_term_stop. libedit state is only touched by the
 * reader thread (and by start/stop while it is idle).
 *
 * The editor is the plugin eventlog-live-edit.so (src/plugin/plugin.h),
 * so that only `repl` on a terminal loads libedit: the binary calls it
 * through el_repl_term_plugin()'s table; test programs link repl_term.c
 * and call the functions directly. */
#ifndef EL_REPL_TERM_H
#define EL_REPL_TERM_H

#include <stddef.h>
#include <stdio.h>

#include "../plugin/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct el_repl_term_cfg_s {
  FILE *in;                 /* terminal input (borrowed) */
  FILE *out;                /* prompt and echo output (borrowed) */
  const char *history;      /* history file, NULL = none; copied */
  void *ud;
  /* Completions of the word `text` (at byte `start` of the whole input
   * line `line`), on the reader thread: a malloc'd NULL-terminated array
   * of malloc'd strings (libc malloc: libedit frees them), or NULL. Set
   * *files to 1 (and return NULL) to complete file names instead. */
  char **(*complete)(void *ud, const char *text, const char *line,
                     int start, int *files);
  /* A line was read (malloc'd, without the newline; the callee owns it),
   * or NULL at end of input (Ctrl-D, EOF). Called on the reader thread. */
  void (*on_line)(void *ud, char *line);
} el_repl_term_cfg_t;

typedef struct el_repl_term_s el_repl_term_t;

/* Set up libedit (history loaded from cfg->history) and start the reader
 * thread, idle until the first el_repl_term_read. cfg: copied.
 * Returns NULL when out of memory or the thread cannot start. */
el_repl_term_t *el_repl_term_start(const el_repl_term_cfg_t *cfg);

/* Ask for the next line with `prompt` (copied). Thread: the caller's.
 * Ignored while a read is pending. */
void el_repl_term_read(el_repl_term_t *t, const char *prompt);

/* Ctrl-C at the prompt: end the pending read now, dropping the line
 * being edited (not in the history; on_line is not called for it),
 * print "^C" and a newline on cfg.out, and read again with `prompt`
 * (copied). A line the reader had already finished before the cancel
 * reached it is dropped too. Does nothing when no read is pending, or
 * when cfg.in is not a terminal. Thread: the caller's (not a signal
 * handler: it takes a mutex). */
void el_repl_term_cancel(el_repl_term_t *t, const char *prompt);

/* Stop the reader (it must be idle: no read pending, e.g. after on_line
 * delivered EOF or before the next el_repl_term_read), save the history
 * and free t. NULL does nothing. */
void el_repl_term_stop(el_repl_term_t *t);

/* {====== the plugin ======} */

/* Raise when the table or el_repl_term_cfg_t changes shape. */
#define EL_REPL_TERM_ABI 2u

/* The table of eventlog-live-edit.so: symbol el_plugin_edit. Each entry
 * is the function above of the same name after el_repl_term_. */
typedef struct el_repl_term_plugin_s {
  el_plugin_head_t head; /* abi EL_REPL_TERM_ABI, name "edit" */
  el_repl_term_t *(*start)(const el_repl_term_cfg_t *cfg);
  void (*read)(el_repl_term_t *t, const char *prompt);
  void (*stop)(el_repl_term_t *t);
  void (*cancel)(el_repl_term_t *t, const char *prompt);
} el_repl_term_plugin_t;

extern const el_repl_term_plugin_t el_plugin_edit;

/* The line editor's table, opened on the first call (el_plugin_load), or
 * NULL with a one-line reason (the plugin file and dlerror()) in
 * err[errsz]. Thread: any. */
const el_repl_term_plugin_t *el_repl_term_plugin(char *err, size_t errsz);

#ifdef __cplusplus
}
#endif
#endif /* EL_REPL_TERM_H */
