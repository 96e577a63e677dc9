/* rp_prof.c: the Profiles section's reducer (rp_internal.h): profile
 * samples of the processors cost_centre_stack_profile (PROF_SAMPLE_COST_
 * CENTRE, frames from HEAP_PROF_COST_CENTRE) and call_stack_profile
 * (ghc-stack-profiler), one profile per profile kind.
 *
 * A call tree: the root, then one node per distinct path from the
 * outermost frame inwards; each node counts the samples that end there
 * (self) and that pass through it (total). A symbol is a frame's function
 * with its source location; its self counts samples whose innermost frame
 * it is, its total samples it appears in at least once (recursion counted
 * once). Nodes and symbols are capped (RP_MAX_NODES, RP_MAX_SYMS): a
 * sample that needs more stops at the deepest node it has, counted in
 * `truncated`. */
#include <stdio.h>
#include <string.h>

#include "../common/el_grow.h"
#include "rp_internal.h"

rp_prof_t *el__rp_prof_get(rp_prof_t **profs, size_t *n, const char *kind,
                           const char *type, const char *unit) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp(profs[i]->kind, kind) == 0) return profs[i];
  if (*n >= RP_MAX_PROFILES) return NULL;
  rp_prof_t *p = el_calloc(1, sizeof *p);
  if (!p) return NULL;
  p->kind = el_strdup(kind);
  p->sample_type = el_strdup(type ? type : "");
  p->sample_unit = el_strdup(unit ? unit : "");
  p->nodes = el_calloc(64, sizeof *p->nodes);
  if (!p->kind || !p->sample_type || !p->sample_unit || !p->nodes) {
    el__rp_prof_free(p);
    return NULL;
  }
  p->nodes_cap = 64;
  p->nnodes = 1; /* the root */
  el__rp_strtab_init(&p->names, RP_MAX_SYMS);
  profs[(*n)++] = p;
  return p;
}

void el__rp_prof_free(rp_prof_t *p) {
  if (!p) return;
  for (size_t i = 0; i < p->names.n; i++) el_free(p->syms[i].loc);
  el__rp_strtab_close(&p->names);
  el_free(p->syms);
  el_free(p->nodes);
  el_map_free(&p->children);
  el_free(p->kind);
  el_free(p->sample_type);
  el_free(p->sample_unit);
  el_free(p);
}

/* The child of parent for sym, added if new; -1 when capped or out of
 * memory. */
static long child(rp_prof_t *p, uint32_t parent, uint32_t sym) {
  uint64_t key = (uint64_t)parent << 32 | sym;
  uint32_t found;
  if (el_map_get(&p->children, key, &found)) return found;
  if (p->nnodes >= RP_MAX_NODES) return -1;
  if (el_grow(&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof *p->nodes) < 0)
    return -1;
  if (el_map_put(&p->children, key, (uint32_t)p->nnodes) < 0) return -1;
  uint32_t id = (uint32_t)p->nnodes++;
  p->nodes[id] = (rp_node_t){.parent = parent, .sym = sym};
  return id;
}

/* The symbol of a frame: key "function\x1f" "file:line:col". */
static long symbol(rp_prof_t *p, const el_tm_frame_t *f) {
  char buf[1024];
  int loc = 0;
  if (f->file.len) {
    loc = snprintf(buf, sizeof buf, "%.*s", (int)f->file.len, f->file.p);
    if (f->line > 0 && loc < (int)sizeof buf)
      loc += snprintf(buf + loc, sizeof buf - (size_t)loc, ":%lld",
                      (long long)f->line);
    if (f->column > 0 && loc < (int)sizeof buf)
      loc += snprintf(buf + loc, sizeof buf - (size_t)loc, ":%lld",
                      (long long)f->column);
    if (loc >= (int)sizeof buf) loc = (int)sizeof buf - 1;
  }
  size_t fl = f->function.len;
  char key[2048];
  if (fl > sizeof key - 2 - (size_t)loc) fl = sizeof key - 2 - (size_t)loc;
  memcpy(key, f->function.p ? f->function.p : "", fl);
  key[fl] = '\x1f';
  memcpy(key + fl + 1, buf, (size_t)loc);
  size_t klen = fl + 1 + (size_t)loc;
  long id = el__rp_strtab_intern(&p->names, key, klen);
  if (id < 0) return -1;
  size_t old = p->syms_cap;
  if (el_grow(&p->syms, &p->syms_cap, (size_t)id + 1, sizeof *p->syms) < 0)
    return -1;
  memset(p->syms + old, 0, (p->syms_cap - old) * sizeof *p->syms);
  return id;
}

void el__rp_prof_sample(rp_prof_t *p, const el_tm_frame_t *frames, size_t n,
                        int64_t value) {
  uint64_t v = value > 0 ? (uint64_t)value : 1;
  p->nsamples++;
  p->samples += v;
  p->seq++;
  p->nodes[0].total += v;
  uint32_t node = 0;
  long leaf_sym = -1;
  for (size_t k = n; k-- > 0;) { /* outermost first */
    long s = symbol(p, &frames[k]);
    long c = s < 0 ? -1 : child(p, node, (uint32_t)s);
    if (c < 0) {
      p->truncated++;
      break;
    }
    node = (uint32_t)c;
    p->nodes[node].total += v;
    rp_sym_t *sy = &p->syms[s];
    if (sy->seq != p->seq) {
      sy->seq = p->seq;
      sy->total += v;
    }
    if (k == 0) leaf_sym = s;
    if (!sy->loc && frames[k].file.len) {
      const char *key = p->names.s[s];
      const char *sep = strchr(key, '\x1f');
      if (sep && sep[1]) sy->loc = el_strdup(sep + 1);
    }
  }
  p->nodes[node].self += v;
  if (leaf_sym >= 0) p->syms[leaf_sym].self += v;
}
