/* repl_plugin.c: opening the line editor's plugin (repl_term.h). */
#include "repl_term.h"

/* Linked into test programs that link repl_term.c; NULL in
 * eventlog-live, which opens the plugin. */
extern const el_repl_term_plugin_t el_plugin_edit __attribute__((weak));

const el_repl_term_plugin_t *el_repl_term_plugin(char *err, size_t errsz) {
  if (&el_plugin_edit) return &el_plugin_edit;
  return el_plugin_load("edit", "the REPL's line editor (libedit)",
                        EL_REPL_TERM_ABI, err, errsz);
}
