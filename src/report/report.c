/* report.c: creating and freeing the reducer, the input's description and
 * its errors (report.h). */
#include <string.h>

#include "rp_internal.h"

void el_rp_opts_init(el_rp_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->columns = 2048;
  o->timeline_columns = 8192;
  o->top_bands = 15;
}

static char *dup_or_null(const char *s) { return s ? el_strdup(s) : NULL; }

/* Copy the names into rp->names (same order as el_rp_names_t). */
static int copy_names(el_rp_t *rp) {
  const el_rp_names_t *n = &rp->o.names;
  const char *v[] = {n->heap_size,      n->heap_live,        n->blocks_size,
                     n->heap_allocated, n->mem_current,      n->mem_needed,
                     n->mem_returned,   n->heap_prof_sample, n->cap_usage,
                     n->cc_profile,     n->stack_profile};
  for (size_t i = 0; i < EL_ARRAY_LEN(v); i++) {
    rp->names[i] = dup_or_null(v[i]);
    if (v[i] && !rp->names[i]) return EL_ENOMEM;
  }
  memset(&rp->o.names, 0, sizeof rp->o.names); /* use rp->names */
  return 0;
}

int el_rp_new(const el_rp_opts_t *o, el_rp_t **out) {
  *out = NULL;
  el_rp_opts_t d;
  if (!o) {
    el_rp_opts_init(&d);
    o = &d;
  }
  if (o->columns < 64 || o->columns > 65536 || o->timeline_columns < 64 ||
      o->timeline_columns > EL_RP_TIMELINE_CELLS || o->top_bands < 1 ||
      o->top_bands > 50)
    return EL_EINVAL;
  el_rp_t *rp = el_calloc(1, sizeof *rp);
  if (!rp) return EL_ENOMEM;
  rp->o = *o;
  el__rp_heap_init(&rp->heap, o->columns);
  el__rp_time_init(&rp->time, o->columns, o->timeline_columns);
  el__rp_marks_init(&rp->markers, o->columns);
  if (copy_names(rp) < 0 || el__rp_logs_init(&rp->logs, RP_LOGS_KEEP) < 0) {
    el_rp_free(rp);
    return EL_ENOMEM;
  }
  *out = rp;
  return 0;
}

static void clear_input(el_rp_t *rp) {
  el_free((char *)rp->in.title);
  el_free((char *)rp->in.input);
  memset(&rp->in, 0, sizeof rp->in);
}

void el_rp_free(el_rp_t *rp) {
  if (!rp) return;
  el__rp_held_free(rp);
  el__rp_heap_close(&rp->heap);
  el__rp_time_close(&rp->time);
  for (size_t i = 0; i < rp->nprofs; i++) el__rp_prof_free(rp->profs[i]);
  el__rp_logs_close(&rp->logs);
  el__rp_cols_close(&rp->markers);
  for (size_t i = 0; i < rp->nsections; i++)
    el__rp_section_free(rp->sections[i]);
  for (size_t i = 0; i < rp->nthreads; i++)
    el__rp_thread_clear(&rp->threads[i]);
  el_free(rp->threads);
  el__rp_session_clear(&rp->session);
  for (size_t i = 0; i < rp->nspans; i++) el_free(rp->spans[i].args);
  for (size_t i = 0; i < EL_ARRAY_LEN(rp->names); i++) el_free(rp->names[i]);
  for (size_t i = 0; i < rp->nerrors; i++) el_free(rp->errors[i].msg);
  for (size_t i = 0; i < rp->ncuts; i++) el_free(rp->cuts[i].msg);
  clear_input(rp);
  el_free(rp);
}

int el_rp_set_input(el_rp_t *rp, const el_rp_input_t *in) {
  clear_input(rp);
  rp->in = *in;
  rp->in.title = dup_or_null(in->title);
  rp->in.input = dup_or_null(in->input);
  if ((in->title && !rp->in.title) || (in->input && !rp->in.input))
    return EL_ENOMEM;
  return 0;
}

void el_rp_add_error(el_rp_t *rp, uint64_t offset, const char *msg) {
  rp->errors_total++;
  if (rp->nerrors >= RP_MAX_ERRORS) return;
  char *m = el_strdup(msg ? msg : "");
  if (!m) return;
  rp->errors[rp->nerrors].offset = offset;
  rp->errors[rp->nerrors].msg = m;
  rp->nerrors++;
}

void el_rp_add_cut(el_rp_t *rp, uint64_t offset, int inside, const char *msg) {
  rp->cuts_total++;
  if (rp->ncuts >= RP_MAX_ERRORS) return;
  char *m = el_strdup(msg ? msg : "");
  if (!m) return;
  rp->cuts[rp->ncuts].offset = offset;
  rp->cuts[rp->ncuts].session = rp->clk_session;
  rp->cuts[rp->ncuts].inside = inside != 0;
  rp->cuts[rp->ncuts].msg = m;
  rp->ncuts++;
}
