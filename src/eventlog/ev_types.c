/* ev_types.c: the layouts and type infos of the known event types, built
 * once from the table of ev_type_table.h (spec/eventlog-format.md §2.1),
 * and the decoding of one payload's fields by its layout. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>

#include "eventlog_internal.h"

/* The names are held in the rows, not pointed to: a table of pointers
 * is relocated by the dynamic loader at every start of the (PIE) binary,
 * 25 KiB of pages copied and written for every command, `--version`
 * included (issue 16, start-up); this one stays in read-only pages until
 * build reads it. The longest names (30 and 19 characters) leave room
 * for the terminating NUL; tests/unit/test_eventlog checks every name. */
typedef struct {
  char n[24];
  uint8_t w;
} fdef_t;

typedef struct {
  uint16_t id;
  char name[32];
  uint8_t variant;
  fdef_t f[EL_EV_MAX_FIELDS];
} tdef_t;

/* One row per (id, variant), from the table. Variant 0 rows define the
 * type info; the {"", 0} after the fields ends them. */
#define F(name, wire) {#name, EL__W_##wire},
#define NO_FIELDS
#define ROW(id, name, fields) {id, #name, 0, {fields{"", 0}}},
#define OLDER(id, name, variant, fields) {id, #name, variant, {fields{"", 0}}},
static const tdef_t defs[] = {EL_EV_TYPE_TABLE(ROW, OLDER)};
#undef F
#undef NO_FIELDS
#undef ROW
#undef OLDER

#define NDEFS (sizeof defs / sizeof defs[0])
#define NTYPES 256 /* every known id is below this */

static el__ev_layout_t layouts[NDEFS];
/* Per id: 1 + the index of its variant-0 row in defs (0: unknown). */
static uint16_t info_row[NTYPES];
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* The type infos, each filled at its first el_ev_type_info (info_ready
 * set after, under info_mu): 216 bytes an id, 55 KiB written whole at
 * start-up made `show` fault in 13 pages it never read (issue 16,
 * start-up: a page fault costs ~10 us on a VM). */
static el_ev_type_info_t infos[NTYPES];
static atomic_uchar info_ready[NTYPES];
static pthread_mutex_t info_mu = PTHREAD_MUTEX_INITIALIZER;

static el_ev_kind_t kind_of(uint8_t w) {
  switch (w) {
  case EL__W_TEXT:
  case EL__W_TEXT_M4:
  case EL__W_CSTR:
  case EL__W_OPT_CSTR:
    return EL_EV_TEXT;
  case EL__W_STRLIST:
    return EL_EV_STRLIST;
  case EL__W_STACK:
    return EL_EV_CCS;
  case EL__W_BYTES:
    return EL_EV_BYTES;
  default:
    return EL_EV_U64;
  }
}

static unsigned fixed_size(uint8_t w) {
  switch (w) {
  case EL__W_U8:
  case EL__W_LOG2U8:
  case EL__W_DEPTH:
    return 1;
  case EL__W_U16:
    return 2;
  case EL__W_U32:
    return 4;
  case EL__W_U64:
    return 8;
  case EL__W_TEXT_M4:
    return 0; /* its u32 id is counted separately */
  default:
    return 0;
  }
}

static void build(void) {
  for (size_t i = 0; i < NDEFS; i++) {
    const tdef_t *d = &defs[i];
    el__ev_layout_t *L = &layouts[i];
    L->id = d->id;
    L->variant = d->variant;
    unsigned n = 0, size = 0, var = 0;
    while (n < EL_EV_MAX_FIELDS && d->f[n].n[0]) {
      uint8_t w = d->f[n].w;
      L->wire[n] = w;
      size += fixed_size(w);
      if (!fixed_size(w))
        var = 1;
      n++;
    }
    L->nwire = (uint8_t)n;
    L->nfields = (uint8_t)n;
    L->variable = (uint8_t)var;
    L->min_size = (uint16_t)size;
    L->intonly = 1;
    for (unsigned k = 0; k < n; k++)
      if (L->wire[k] != EL__W_U8 && L->wire[k] != EL__W_U16 &&
          L->wire[k] != EL__W_U32 && L->wire[k] != EL__W_U64 &&
          L->wire[k] != EL__W_LOG2U8)
        L->intonly = 0;
    /* Straight-line shapes (only when no older-variant zero fill). */
    static const uint8_t s_u32[] = {EL__W_U32},
                         s_u32_u16[] = {EL__W_U32, EL__W_U16},
                         s_stop[] = {EL__W_U32, EL__W_U16, EL__W_U32};
    L->shape = EL__SHAPE_GENERIC;
    if (d->variant == 0) {
      if (n == 0)
        L->shape = EL__SHAPE_NONE;
      else if (n == 1 && !memcmp(L->wire, s_u32, 1))
        L->shape = EL__SHAPE_U32;
      else if (n == 2 && !memcmp(L->wire, s_u32_u16, 2))
        L->shape = EL__SHAPE_U32_U16;
      else if (n == 3 && !memcmp(L->wire, s_stop, 3))
        L->shape = EL__SHAPE_U32_U16_U32;
    }
    if (d->variant == 0 && d->id < NTYPES)
      info_row[d->id] = (uint16_t)(i + 1);
  }
  /* Older variants deliver the newest layout's field count. */
  for (size_t i = 0; i < NDEFS; i++)
    if (layouts[i].variant && layouts[i].id < NTYPES && info_row[layouts[i].id])
      layouts[i].nfields = layouts[info_row[layouts[i].id] - 1].nfields;
}

/* Fill infos[id] from its row (id known), once. */
static void fill_info(uint16_t id) {
  pthread_mutex_lock(&info_mu);
  if (!atomic_load_explicit(&info_ready[id], memory_order_relaxed)) {
    const tdef_t *d = &defs[info_row[id] - 1];
    el_ev_type_info_t *t = &infos[id];
    unsigned n = layouts[info_row[id] - 1].nwire;
    t->id = d->id;
    t->name = d->name;
    t->nfields = (uint8_t)n;
    for (unsigned k = 0; k < n; k++) {
      t->fields[k].name = d->f[k].n;
      t->fields[k].kind = kind_of(d->f[k].w);
    }
    atomic_store_explicit(&info_ready[id], 1, memory_order_release);
  }
  pthread_mutex_unlock(&info_mu);
}

const el__ev_layout_t *el__ev_layouts(size_t *n) {
  pthread_once(&once, build);
  *n = NDEFS;
  return layouts;
}

const el_ev_type_info_t *el_ev_type_info(uint16_t id) {
  pthread_once(&once, build);
  if (id >= NTYPES || !info_row[id])
    return NULL;
  if (!atomic_load_explicit(&info_ready[id], memory_order_acquire))
    fill_info(id);
  return &infos[id];
}

int el_ev_type_by_name(const char *name) {
  if (!name)
    return -1;
  pthread_once(&once, build);
  if (strncasecmp(name, "EVENT_", 6) == 0)
    name += 6;
  for (unsigned i = 0; i < NTYPES; i++)
    if (info_row[i] && strcasecmp(defs[info_row[i] - 1].name, name) == 0)
      return (int)i;
  return -1;
}

/* The known names by id (NULL where none), for el_nearest. */
static const char *type_names[NTYPES];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_names(void) {
  pthread_once(&once, build);
  for (unsigned i = 0; i < NTYPES; i++)
    type_names[i] = info_row[i] ? defs[info_row[i] - 1].name : NULL;
}

const char *el_ev_type_suggest(const char *name) {
  if (!name)
    return NULL;
  pthread_once(&names_once, fill_names);
  if (strncasecmp(name, "EVENT_", 6) == 0)
    name += 6;
  return el_nearest(name, type_names, NTYPES);
}

int el_ev_field_index(uint16_t id, const char *name) {
  const el_ev_type_info_t *t = el_ev_type_info(id);
  if (!t || !name)
    return -1;
  for (unsigned i = 0; i < t->nfields; i++)
    if (strcmp(t->fields[i].name, name) == 0)
      return (int)i;
  return -1;
}

/* {====== field decoding ======} */

static const uint8_t *find_nul(const uint8_t *p, const uint8_t *end) {
  const void *z = memchr(p, 0, (size_t)(end - p));
  return z ? (const uint8_t *)z : NULL;
}

int el__ev_decode_fields(const el__ev_layout_t *L, const uint8_t *p,
                         uint32_t len, el_ev_event_t *ev) {
  const uint8_t *q = p, *end = p + len;
  el_ev_value_t *v = ev->v;
  unsigned n = L->nwire;
  ev->layout = L->variant;
  for (unsigned i = 0; i < n; i++, v++) {
    size_t left = (size_t)(end - q);
    switch (L->wire[i]) {
    case EL__W_U8:
    case EL__W_DEPTH:
      if (left < 1)
        return -1;
      v->u = q[0];
      q += 1;
      break;
    case EL__W_LOG2U8:
      if (left < 1)
        return -1;
      v->u = q[0] < 64 ? (uint64_t)1 << q[0] : 0;
      q += 1;
      break;
    case EL__W_U16:
      if (left < 2)
        return -1;
      v->u = el_ev_be16(q);
      q += 2;
      break;
    case EL__W_U32:
      if (left < 4)
        return -1;
      v->u = el_ev_be32(q);
      q += 4;
      break;
    case EL__W_U64:
      if (left < 8)
        return -1;
      v->u = el_ev_be64(q);
      q += 8;
      break;
    case EL__W_OPT_U64:
      if (left == 0) {
        v->u = 0;
        ev->layout = 2;
        break;
      }
      if (left < 8)
        return -1;
      v->u = el_ev_be64(q);
      q += 8;
      break;
    case EL__W_STRLIST:
      /* Every string is followed by a NUL, the last one too (§3.1). */
      if (left && q[left - 1] != 0)
        return -1;
      /* fall through */
    case EL__W_TEXT:
    case EL__W_BYTES:
      v->s.p = (const char *)q;
      v->s.len = left;
      v->u = left;
      q = end;
      break;
    case EL__W_TEXT_M4:
      if (left < 4)
        return -1;
      v->s.p = (const char *)q;
      v->s.len = left - 4;
      v->u = left - 4;
      q += left - 4;
      break;
    case EL__W_OPT_CSTR:
      if (left == 0) {
        v->s.p = NULL;
        v->s.len = 0;
        v->u = 0;
        if (!ev->layout)
          ev->layout = 1;
        break;
      }
      /* fall through */
    case EL__W_CSTR: {
      const uint8_t *z = find_nul(q, end);
      if (!z)
        return -1;
      v->s.p = (const char *)q;
      v->s.len = (size_t)(z - q);
      v->u = v->s.len;
      q = z + 1;
      break;
    }
    case EL__W_STACK: {
      uint64_t depth = v[-1].u;
      if (left < depth * 4)
        return -1;
      v->s.p = (const char *)q;
      v->s.len = depth * 4;
      v->u = depth;
      q += depth * 4;
      break;
    }
    default:
      return -1;
    }
  }
  for (unsigned i = n; i < L->nfields; i++) {
    ev->v[i].u = 0;
    ev->v[i].s.p = NULL;
    ev->v[i].s.len = 0;
  }
  ev->nfields = L->nfields;
  return 0;
}
