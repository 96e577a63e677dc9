/* rp_custom.c: sections that scripts add (a time series or a table,
 * lua/eventlog_live/report.lua), and the owned strings of the threads
 * table and the session (rp_internal.h). */
#include <string.h>

#include "rp_internal.h"

static rp_section_t *section_new(el_rp_t *rp, int kind, const char *title,
                                 const char *unit, const char *description) {
  if (rp->nsections >= RP_MAX_SECTIONS) return NULL;
  rp_section_t *s = el_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->kind = kind;
  s->title = el_strdup(title ? title : "");
  s->unit = unit ? el_strdup(unit) : NULL;
  s->description = description ? el_strdup(description) : NULL;
  if (!s->title || (unit && !s->unit) || (description && !s->description)) {
    el__rp_section_free(s);
    return NULL;
  }
  el__rp_cols_init(&s->cols, rp->o.columns, sizeof(rp_gauge_t),
                   el__rp_gauge_merge, NULL);
  rp->sections[rp->nsections++] = s;
  return s;
}

int el__rp_section_series(el_rp_t *rp, const char *title, const char *unit,
                          const char *description) {
  rp_section_t *s = section_new(rp, 0, title, unit, description);
  return s ? (int)rp->nsections - 1 : EL_ENOMEM;
}

int el__rp_section_table(el_rp_t *rp, const char *title,
                         const char *description) {
  rp_section_t *s = section_new(rp, 1, title, NULL, description);
  return s ? (int)rp->nsections - 1 : EL_ENOMEM;
}

void el__rp_section_free(rp_section_t *s) {
  if (!s) return;
  el__rp_cols_close(&s->cols);
  for (size_t i = 0; i < s->nlines; i++) el_free(s->lines[i]);
  for (size_t i = 0; i < s->ncolumns; i++) el_free(s->columns[i]);
  for (size_t i = 0; i < s->nrows * s->ncolumns; i++) el_free(s->cells[i].str);
  el_free(s->cells);
  el_free(s->title);
  el_free(s->unit);
  el_free(s->description);
  el_free(s);
}

void el__rp_thread_clear(rp_thread_t *t) {
  el_free(t->label);
  el_free(t->state);
  el_free(t->status);
  memset(t, 0, sizeof *t);
}

void el__rp_session_clear(rp_session_t *s) {
  el_free(s->rts_version);
  el_free(s->ghc_version);
  el_free(s->args);
  el_free(s->clock);
  el_free(s->clock_from);
  memset(s, 0, sizeof *s);
}
