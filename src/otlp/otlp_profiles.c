/* otlp_profiles.c: ExportProfilesServiceRequest messages
 * (collector.profiles.v1development, OTLP v1.11.0; otlp-profiles.md).
 *
 * Each request carries its own ProfilesDictionary: every table starts
 * with its zero value at index 0 and deduplicates entries by structural
 * equality (a tagged byte key per entry, looked up through an el_map of
 * its hash), in the order of reference-behaviour.md §5.4.2 (per frame:
 * file string, function string, Function, Location; then the Stack; then
 * per attribute its key string and KeyValueAndUnit; after all samples of
 * a profile the sample type and unit strings). */
#include <string.h>

#include "../common/el_buf.h"
#include "../common/el_grow.h"
#include "../common/el_map.h"
#include "otlp_encode_internal.h"

typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles
    ResourceProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles
    ScopeProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile Profile;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary
    Dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType ValueType;
typedef Opentelemetry__Proto__Profiles__V1development__Sample Sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping Mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Link PLink;
typedef Opentelemetry__Proto__Profiles__V1development__Stack Stack;
typedef Opentelemetry__Proto__Profiles__V1development__Location Location;
typedef Opentelemetry__Proto__Profiles__V1development__Line Line;
typedef Opentelemetry__Proto__Profiles__V1development__Function Function;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit
    KeyValueAndUnit;
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
    ProfilesRequest;

/* {====== the dictionary ======} */

/* One entry of any table, under its tagged key (bytes in scratch). */
typedef struct dkey_s {
  const void *key;
  size_t len;
  int32_t idx; /* index in its table */
} dkey_t;

struct el__otlp_dict_s {
  el_map_t map; /* hash of a tagged key -> index in keys */
  dkey_t *keys;
  size_t nkeys, capkeys;
  char **strings; /* the tables (el_grow'd, reused per request) */
  Function **functions;
  Location **locations;
  Stack **stacks;
  KeyValueAndUnit **attrs;
  size_t nstr, nfun, nloc, nstack, nattr;
  size_t capstr, capfun, caploc, capstack, capattr;
};

/* The index stored under the key in k (freed here), or -1 after adding
 * an entry for it (*entry, its idx to be set by the caller); EL_ENOMEM
 * (< -1) on failure. */
static int32_t dict_find(el__otlp_enc_t *e, el_buf_t *k, size_t *entry) {
  el__otlp_dict_t *d = e->dict;
  int32_t rc = EL_ENOMEM;
  if (k->oom) goto done;
  uint64_t h = el_hash_bytes(k->p, k->len, 0);
  size_t pos;
  for (uint32_t i = el_map_first(&d->map, h, &pos); i != EL_MAP_NONE;
       i = el_map_next(&d->map, h, &pos))
    if (d->keys[i].len == k->len && !memcmp(d->keys[i].key, k->p, k->len)) {
      rc = d->keys[i].idx;
      goto done;
    }
  void *copy = el_arena_memdup(&e->sc, k->p, k->len);
  if (!copy ||
      el_grow(&d->keys, &d->capkeys, d->nkeys + 1, sizeof *d->keys) < 0 ||
      el_map_add(&d->map, h, (uint32_t)d->nkeys) < 0)
    goto done;
  d->keys[d->nkeys] = (dkey_t){copy, k->len, -1};
  *entry = d->nkeys++;
  rc = -1;
done:
  el_buf_free(k);
  return rc;
}

/* Append the pointer msg to the table *tabp (a T **, n of cap entries)
 * as the value of key entry `entry`; its index, or EL_ENOMEM. */
static int32_t dict_add(el__otlp_enc_t *e, size_t entry, void *tabp, size_t *n,
                        size_t *cap, const void *msg) {
  if (el_grow(tabp, cap, *n + 1, sizeof msg) < 0) return EL_ENOMEM;
  char *tab;
  memcpy(&tab, tabp, sizeof tab);
  memcpy(tab + *n * sizeof msg, &msg, sizeof msg);
  e->dict->keys[entry].idx = (int32_t)*n;
  return (int32_t)(*n)++;
}

/* Index of s[0..len) in the string table; < 0 when out of memory. */
static int32_t dict_str(el__otlp_enc_t *e, const char *s, size_t len) {
  if (len == 0) return 0;
  char stack[128];
  el_buf_t k;
  el_buf_init_on(&k, stack, sizeof stack);
  el_buf_put(&k, "S", 1);
  el_buf_put(&k, s, len);
  size_t entry;
  int32_t idx = dict_find(e, &k, &entry);
  if (idx != -1) return idx;
  char *copy = el_arena_strndup(&e->sc, s, len);
  if (!copy) return EL_ENOMEM;
  return dict_add(e, entry, &e->dict->strings, &e->dict->nstr, &e->dict->capstr,
                  copy);
}

/* Index of Function{name, file, start_line} in the function table; all
 * zero (a frame with no name, file or line: `frames = {""}`) is the zero
 * Function at index 0. < 0 when out of memory. */
static int32_t dict_function(el__otlp_enc_t *e, int32_t name, int32_t file,
                             int64_t start_line) {
  if (name == 0 && file == 0 && start_line == 0) return 0;
  char stack[32];
  el_buf_t k;
  el_buf_init_on(&k, stack, sizeof stack);
  el_buf_put(&k, "F", 1);
  el_buf_put(&k, &name, 4);
  el_buf_put(&k, &file, 4);
  el_buf_put(&k, &start_line, 8);
  size_t entry;
  int32_t idx = dict_find(e, &k, &entry);
  if (idx != -1) return idx;
  Function *m = NEW(&e->sc, Function);
  if (!m) return EL_ENOMEM;
  *m = (Function)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
  m->name_strindex = name;
  m->filename_strindex = file;
  m->start_line = start_line;
  return dict_add(e, entry, &e->dict->functions, &e->dict->nfun,
                  &e->dict->capfun, m);
}

static int32_t dict_location(el__otlp_enc_t *e, int32_t fun, int64_t line,
                             int64_t col) {
  char stack[32];
  el_buf_t k;
  el_buf_init_on(&k, stack, sizeof stack);
  el_buf_put(&k, "L", 1);
  el_buf_put(&k, &fun, 4);
  el_buf_put(&k, &line, 8);
  el_buf_put(&k, &col, 8);
  size_t entry;
  int32_t idx = dict_find(e, &k, &entry);
  if (idx != -1) return idx;
  Location *m = NEW(&e->sc, Location);
  Line *ln = NEW(&e->sc, Line);
  Line **lines = NEWN(&e->sc, Line *, 1);
  if (!m || !ln || !lines) return EL_ENOMEM;
  *m = (Location)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
  *ln = (Line)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT;
  ln->function_index = fun;
  ln->line = line;
  ln->column = col;
  lines[0] = ln;
  m->n_lines = 1;
  m->lines = lines;
  return dict_add(e, entry, &e->dict->locations, &e->dict->nloc,
                  &e->dict->caploc, m);
}

/* Index of the stack locs[0..n) in the stack table; the empty stack (a
 * sample of GHC's empty cost-centre stack, or `frames = {}`) is the zero
 * Stack at index 0, as the empty string is (profiles.proto: index 0 of
 * every table is the zero value). < 0 when out of memory. */
static int32_t dict_stack(el__otlp_enc_t *e, const int32_t *locs, size_t n) {
  if (n == 0) return 0;
  char stack[256];
  el_buf_t k;
  el_buf_init_on(&k, stack, sizeof stack);
  el_buf_put(&k, "K", 1);
  el_buf_put(&k, locs, n * sizeof(*locs));
  size_t entry;
  int32_t idx = dict_find(e, &k, &entry);
  if (idx != -1) return idx;
  Stack *m = NEW(&e->sc, Stack);
  int32_t *copy = NEWN(&e->sc, int32_t, n);
  if (!m || !copy) return EL_ENOMEM;
  *m = (Stack)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;
  if (n) memcpy(copy, locs, n * sizeof(*locs));
  m->n_location_indices = n;
  m->location_indices = copy;
  return dict_add(e, entry, &e->dict->stacks, &e->dict->nstack,
                  &e->dict->capstack, m);
}

/* The key of attribute a (key string index `key`) into k. */
static void attr_key(el_buf_t *k, const el_tm_attr_t *a, int32_t key) {
  unsigned char type = (unsigned char)a->type;
  el_buf_put(k, "A", 1);
  el_buf_put(k, &key, 4);
  el_buf_put(k, &type, 1);
  switch (a->type) {
  case EL_TM_STR:
    el_buf_put(k, a->v.s.p, a->v.s.len);
    break;
  case EL_TM_INT:
    el_buf_put(k, &a->v.i, 8);
    break;
  case EL_TM_DOUBLE:
    el_buf_put(k, &a->v.d, 8);
    break;
  case EL_TM_BOOL:
    type = a->v.b ? 1 : 0;
    el_buf_put(k, &type, 1);
    break;
  case EL_TM_STRLIST:
    for (size_t i = 0; i < a->v.list.n; i++) {
      uint64_t len = a->v.list.items[i].len;
      el_buf_put(k, &len, 8);
      el_buf_put(k, a->v.list.items[i].p, len);
    }
    break;
  }
}

static int32_t dict_attr(el__otlp_enc_t *e, const el_tm_attr_t *a) {
  int32_t key = dict_str(e, a->key, strlen(a->key));
  if (key < 0) return key;
  char stack[128];
  el_buf_t k;
  el_buf_init_on(&k, stack, sizeof stack);
  attr_key(&k, a, key);
  size_t entry;
  int32_t idx = dict_find(e, &k, &entry);
  if (idx != -1) return idx;
  KeyValueAndUnit *m = NEW(&e->sc, KeyValueAndUnit);
  AnyValue *v = el__otlp_any_value(e, a);
  if (!m || !v) return EL_ENOMEM;
  *m = (KeyValueAndUnit)
      OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT;
  m->key_strindex = key;
  m->value = v;
  return dict_add(e, entry, &e->dict->attrs, &e->dict->nattr, &e->dict->capattr,
                  m);
}

/* Empty the dictionary (its memory is kept) and add the zero entries at
 * index 0 of every table. */
static int dict_init(el__otlp_enc_t *e) {
  if (!e->dict && !(e->dict = el_calloc(1, sizeof *e->dict))) return EL_ENOMEM;
  el__otlp_dict_t *d = e->dict;
  el_map_clear(&d->map);
  d->nkeys = d->nstr = d->nfun = d->nloc = d->nstack = d->nattr = 0;
  static char empty[] = "";
  Function *f = NEW(&e->sc, Function);
  Location *l = NEW(&e->sc, Location);
  Stack *s = NEW(&e->sc, Stack);
  KeyValueAndUnit *a = NEW(&e->sc, KeyValueAndUnit);
  if (!f || !l || !s || !a ||
      el_grow(&d->strings, &d->capstr, 1, sizeof *d->strings) < 0 ||
      el_grow(&d->functions, &d->capfun, 1, sizeof *d->functions) < 0 ||
      el_grow(&d->locations, &d->caploc, 1, sizeof *d->locations) < 0 ||
      el_grow(&d->stacks, &d->capstack, 1, sizeof *d->stacks) < 0 ||
      el_grow(&d->attrs, &d->capattr, 1, sizeof *d->attrs) < 0)
    return EL_ENOMEM;
  *f = (Function)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
  *l = (Location)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
  *s = (Stack)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;
  *a = (KeyValueAndUnit)
      OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT;
  d->strings[d->nstr++] = empty;
  d->functions[d->nfun++] = f;
  d->locations[d->nloc++] = l;
  d->stacks[d->nstack++] = s;
  d->attrs[d->nattr++] = a;
  return 0;
}

void el__otlp_dict_free(el__otlp_enc_t *e) {
  el__otlp_dict_t *d = e->dict;
  if (!d) return;
  el_map_free(&d->map);
  el_free(d->keys);
  el_free(d->strings);
  el_free(d->functions);
  el_free(d->locations);
  el_free(d->stacks);
  el_free(d->attrs);
  el_free(d);
  e->dict = NULL;
}

/* {====== profiles ======} */

static Sample *sample(el__otlp_enc_t *e, const el_tm_profile_sample_t *s) {
  Sample *m = NEW(&e->sc, Sample);
  int32_t *locs = NEWN(&e->sc, int32_t, s->nframes);
  int32_t *attrs = NEWN(&e->sc, int32_t, s->nattrs);
  int64_t *vals = NEWN(&e->sc, int64_t, 1);
  uint64_t *ts = NEWN(&e->sc, uint64_t, 1);
  if (!m || !locs || !attrs || !vals || !ts) return NULL;
  *m = (Sample)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT;
  for (size_t i = 0; i < s->nframes; i++) {
    const el_tm_frame_t *f = &s->frames[i];
    int32_t file = dict_str(e, f->file.p, f->file.len);
    int32_t name =
        file < 0 ? file : dict_str(e, f->function.p, f->function.len);
    int32_t fun = name < 0 ? name : dict_function(e, name, file, f->line);
    int32_t loc = fun < 0 ? fun : dict_location(e, fun, f->line, f->column);
    if (loc < 0) return NULL;
    locs[i] = loc;
  }
  int32_t st = dict_stack(e, locs, s->nframes);
  if (st < 0) return NULL;
  for (size_t i = 0; i < s->nattrs; i++)
    if ((attrs[i] = dict_attr(e, &s->attrs[i])) < 0) return NULL;
  m->stack_index = st;
  m->n_attribute_indices = s->nattrs;
  m->attribute_indices = s->nattrs ? attrs : NULL;
  vals[0] = s->value;
  m->n_values = 1;
  m->values = vals;
  if (s->time_unix_ns) {
    ts[0] = s->time_unix_ns;
    m->n_timestamps_unix_nano = 1;
    m->timestamps_unix_nano = ts;
  }
  return m;
}

static Profile *profile(el__otlp_enc_t *e, const el_tm_profile_t *p,
                        el__otlp_range_t r) {
  size_t n;
  const el_tm_profile_sample_t *ss = el_tm_batch_samples(e->b, &n);
  Profile *m = NEW(&e->sc, Profile);
  ValueType *vt = NEW(&e->sc, ValueType);
  Sample **samples = NEWN(&e->sc, Sample *, r.hi - r.lo);
  if (!m || !vt || !samples) return NULL;
  *m = (Profile)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
  *vt = (ValueType)
      OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT;
  for (size_t i = r.lo; i < r.hi; i++)
    if (!(samples[i - r.lo] = sample(e, &ss[i]))) return NULL;
  vt->type_strindex = dict_str(e, p->sample_type, strlen(p->sample_type));
  vt->unit_strindex = dict_str(e, p->sample_unit, strlen(p->sample_unit));
  if (vt->type_strindex < 0 || vt->unit_strindex < 0) return NULL;
  m->sample_type = vt;
  m->n_samples = r.hi - r.lo;
  m->samples = samples;
  return m;
}

static Dictionary *dictionary(el__otlp_enc_t *e) {
  Dictionary *d = NEW(&e->sc, Dictionary);
  Mapping *mp = NEW(&e->sc, Mapping);
  PLink *lk = NEW(&e->sc, PLink);
  Mapping **mps = NEWN(&e->sc, Mapping *, 1);
  PLink **lks = NEWN(&e->sc, PLink *, 1);
  if (!d || !mp || !lk || !mps || !lks) return NULL;
  *d = (Dictionary)
      OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
  *mp = (Mapping)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT;
  *lk = (PLink)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;
  mps[0] = mp;
  lks[0] = lk;
  d->n_mapping_table = 1;
  d->mapping_table = mps;
  d->n_link_table = 1;
  d->link_table = lks;
  d->n_string_table = e->dict->nstr;
  d->string_table = e->dict->strings;
  d->n_function_table = e->dict->nfun;
  d->function_table = e->dict->functions;
  d->n_location_table = e->dict->nloc;
  d->location_table = e->dict->locations;
  d->n_stack_table = e->dict->nstack;
  d->stack_table = e->dict->stacks;
  d->n_attribute_table = e->dict->nattr;
  d->attribute_table = e->dict->attrs;
  return d;
}

ProtobufCMessage *el__otlp_profiles_request(el__otlp_enc_t *e, size_t lo,
                                            size_t hi) {
  size_t ng, np, g0;
  const el_tm_rgroup_t *gs = el_tm_batch_groups(e->b, &ng);
  const el_tm_profile_t *ps = el_tm_batch_profiles(e->b, &np);
  size_t k = el__otlp_groups_in(e, lo, hi, &g0);
  if (dict_init(e) < 0) return NULL;
  ProfilesRequest *req = NEW(&e->sc, ProfilesRequest);
  ResourceProfiles **rps = NEWN(&e->sc, ResourceProfiles *, k);
  if (!req || !rps) return NULL;
  *req = (ProfilesRequest)
      OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
  for (size_t gi = 0; gi < k; gi++) {
    const el_tm_rgroup_t *g = &gs[g0 + gi];
    ResourceProfiles *rp = NEW(&e->sc, ResourceProfiles);
    ScopeProfiles *sp = NEW(&e->sc, ScopeProfiles);
    ScopeProfiles **sps = NEWN(&e->sc, ScopeProfiles *, 1);
    Profile **profs = NEWN(&e->sc, Profile *, g->n);
    if (!rp || !sp || !sps || !profs) return NULL;
    *rp = (ResourceProfiles)
        OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
    *sp = (ScopeProfiles)
        OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
    if (el__otlp_group_head(e, g, &rp->resource, &sp->scope) < 0) return NULL;
    for (size_t i = g->first; i < g->first + g->n; i++) {
      el__otlp_range_t r = el__otlp_clip(ps[i].first, ps[i].n, lo, hi);
      if (r.hi == r.lo) continue;
      if (!(profs[sp->n_profiles++] = profile(e, &ps[i], r))) return NULL;
    }
    sp->profiles = profs;
    sps[0] = sp;
    rp->n_scope_profiles = 1;
    rp->scope_profiles = sps;
    rps[gi] = rp;
  }
  req->n_resource_profiles = k;
  req->resource_profiles = rps;
  if (!(req->dictionary = dictionary(e))) return NULL;
  return &req->base;
}
