/* telemetry.c: the telemetry store (telemetry.h).
 *
 * Each signal has a window: an arena holding copies of every string and
 * attribute emitted since the last flush (strings interned, so repeated
 * keys and names cost one copy), a growable array of fixed-size records
 * and, for metrics and profiles, a hash table of "items" (one per OTLP
 * Metric / Profile) the records belong to. Flushing moves the arena into
 * an immutable refcounted batch whose records are reordered, by a stable
 * counting sort, into OTLP nesting order: resource, then item, then
 * emission order. The record arrays of the window are kept for reuse.
 *
 * Spec: reference-behaviour.md §2.1 (resources), §2.2 (scope), §2.5
 * (per-tick composition), §5.2.1 (one Metric per name per request). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "../common/el_grow.h"
#include "../common/el_hash.h"
#include "../common/el_rng.h"
#include "telemetry_internal.h"

#ifndef EL_VERSION
#define EL_VERSION "0.0.0"
#endif

/* An attribute array copied in the current window, found again by the
 * hash of the caller's array (attrs_hash): records with equal attributes
 * (a native span's thread, status and capability) share one copy, so
 * the copy costs neither the per-attribute work nor the arena bytes.
 * Direct-mapped, emptied with the window. */
#define ATTR_MEMO 4096 /* a power of two */
typedef struct attr_memo_s {
  uint64_t h;               /* attrs_hash of the caller's array, or
                               tag_hash of its tag */
  uint64_t tag[2];          /* the caller's attrs_tag, or {0, 0} */
  const el_tm_attr_t *copy; /* in the window's arena */
  const char *const *skeys; /* the caller's key pointers (n, arena) when
                               it promised static keys, else NULL */
  uint32_t n;
  uint32_t gen; /* valid while the window's gen */
} attr_memo_t;

/* One attribute array's lookup, from attrs_bytes to copy_attrs. */
typedef struct memo_look_s {
  attr_memo_t *slot; /* NULL: not memoizable (lists) */
  uint64_t h;
  const uint64_t *tag;     /* the caller's attrs_tag, or NULL */
  const el_tm_attr_t *hit; /* an equal copy, or NULL */
  bool static_keys;        /* the caller's keys are static (el_tm_span_t) */
} memo_look_t;

/* One OTLP Metric or Profile being filled in the current window. */
typedef struct item_s {
  uint32_t res;                       /* index in window.res */
  uint64_t hash;                      /* el_hash of its identity */
  size_t n;                           /* records so far */
  el_tm_metric_desc_t m;              /* metrics: interned strings */
  const char *kind, *type, *unit;     /* profiles: interned strings */
} item_t;

typedef struct window_s {
  el_arena_t arena;
  el__tm_intern_t intern;
  unsigned char *recs;                /* cap records of recsize bytes */
  uint32_t *keys;                     /* per record (kcap of them): item
                                         or resource idx */
  size_t nrecs, cap, kcap;
  item_t *items;
  size_t nitems, items_cap;
  el_map_t index;                     /* item hash -> item idx */
  el__tm_res_t **res;                 /* resources used (one ref each) */
  size_t nres, res_cap;
  const void *last_desc;              /* metrics: caller's desc pointer of */
  int last_item;                      /* the last point and its item, -1 */
  /* Records of the last batch that took recs (capped): admit's first
   * size for the next window. */
  size_t recs_hint;
  /* ATTR_MEMO attribute arrays copied in this window, by attrs_hash;
   * NULL until the first copy. Entries of gen only. */
  attr_memo_t *memo;
  uint32_t gen; /* this window's number (from 1) */
} window_t;

struct el_tm_store_s {
  char *scope_name;
  char *scope_version;
  el__tm_res_t *main_res;             /* the observed program */
  el__tm_res_t *host_res;             /* eventlog-live-otelcol-for-<service> */
  window_t win[EL_TM_NSIGNALS];
  el_tm_exporter_t *ex;
  size_t nex, ex_cap;
  el_tm_limits_t lim;
  el_tm_stats_t stats;
  bool sealed;    /* el_tm_store_seal: records no exporter takes are
                     counted and discarded at once */
  unsigned takes; /* signals some exporter takes (bit 1 << sig) */
};

/* At most this many records are allocated up front for a new window. */
#define RECS_HINT_MAX 16384

static const size_t recsize[EL_TM_NSIGNALS] = {
    sizeof(el_tm_point_t), sizeof(el_tm_log_t), sizeof(el_tm_span_t),
    sizeof(el_tm_profile_sample_t)};

/* {====== resources ======} */

static int copy_attr(el_arena_t *a, el__tm_intern_t *in, el_tm_attr_t *dst,
                     const el_tm_attr_t *src);

/* A new resource holding copies of attrs[0..n) (with attrs[skip]
 * replaced by *repl when repl is given, or repl appended when skip == n).
 */
static el__tm_res_t *res_new(const el_tm_attr_t *attrs, size_t n,
                             const el_tm_attr_t *repl, size_t skip) {
  el__tm_res_t *r = el_calloc(1, sizeof(*r));
  if (!r) return NULL;
  r->refs = 1;
  size_t total = n + (repl && skip == n ? 1 : 0);
  el_tm_attr_t *out =
      el_arena_alloc(&r->arena, (total ? total : 1) * sizeof(*out));
  el__tm_intern_t in = {0};
  if (!out) goto fail;
  for (size_t i = 0; i < total; i++) {
    const el_tm_attr_t *src = (repl && i == skip) ? repl : &attrs[i];
    if (copy_attr(&r->arena, &in, &out[i], src) < 0) goto fail;
  }
  el__tm_intern_free(&in);
  r->pub.attrs = out;
  r->pub.nattrs = total;
  return r;
fail:
  el__tm_intern_free(&in);
  el_arena_free(&r->arena);
  el_free(r);
  return NULL;
}

/* The host resource for the main resource's service.name (§2.1). */
static el__tm_res_t *host_res_for(const el__tm_res_t *main) {
  el_strview_t svc = {"undefined", 9};
  for (size_t i = 0; i < main->pub.nattrs; i++) {
    const el_tm_attr_t *a = &main->pub.attrs[i];
    if (a->type == EL_TM_STR && strcmp(a->key, "service.name") == 0)
      svc = a->v.s;
  }
  static const char prefix[] = "eventlog-live-otelcol-for-";
  size_t plen = sizeof(prefix) - 1;
  char *name = el_malloc(plen + svc.len + 1);
  if (!name) return NULL;
  memcpy(name, prefix, plen);
  if (svc.len) memcpy(name + plen, svc.p, svc.len);
  name[plen + svc.len] = '\0';
  el_tm_attr_t attrs[2] = {
      {.key = "service.name", .type = EL_TM_STR,
       .v.s = {name, plen + svc.len}},
      {.key = "service.version", .type = EL_TM_STR,
       .v.s = {EL_VERSION, strlen(EL_VERSION)}}};
  el__tm_res_t *r = res_new(attrs, 2, NULL, 0);
  el_free(name);
  return r;
}

/* Make nm (NULL: out of memory) the main resource and derive the host's
 * from it. Returns 0, or EL_ENOMEM with both resources unchanged (nm is
 * released). */
static int replace_resources(el_tm_store_t *st, el__tm_res_t *nm) {
  if (!nm) return EL_ENOMEM;
  el__tm_res_t *nh = host_res_for(nm);
  if (!nh) {
    el__tm_res_unref(nm);
    return EL_ENOMEM;
  }
  nm->pub.session = st->main_res ? st->main_res->pub.session : 0;
  el__tm_res_unref(st->main_res);
  el__tm_res_unref(st->host_res);
  st->main_res = nm;
  st->host_res = nh;
  return 0;
}

int el_tm_store_set_resource(el_tm_store_t *st, const el_tm_attr_t *attr) {
  if (!st || !attr || !attr->key) return EL_EINVAL;
  const el_tm_resource_t *cur = &st->main_res->pub;
  size_t skip = cur->nattrs;
  for (size_t i = 0; i < cur->nattrs; i++)
    if (strcmp(cur->attrs[i].key, attr->key) == 0) skip = i;
  el__tm_res_t *nm = res_new(cur->attrs, cur->nattrs, attr, skip);
  return replace_resources(st, nm);
}

int el_tm_store_unset_resource(el_tm_store_t *st, const char *key) {
  if (!st || !key) return EL_EINVAL;
  const el_tm_resource_t *cur = &st->main_res->pub;
  size_t at = cur->nattrs;
  for (size_t i = 0; i < cur->nattrs; i++)
    if (strcmp(cur->attrs[i].key, key) == 0) at = i;
  if (at == cur->nattrs) return 0;
  /* The last attribute moves into the removed one's place. */
  el__tm_res_t *nm =
      res_new(cur->attrs, cur->nattrs - 1,
              at == cur->nattrs - 1 ? NULL : &cur->attrs[cur->nattrs - 1], at);
  return replace_resources(st, nm);
}

int el_tm_store_set_session(el_tm_store_t *st, uint64_t session) {
  if (!st) return EL_EINVAL;
  const el_tm_resource_t *cur = &st->main_res->pub;
  if (cur->session == session) return 0;
  el__tm_res_t *nm = res_new(cur->attrs, cur->nattrs, NULL, cur->nattrs);
  if (!nm) return EL_ENOMEM;
  el__tm_res_t *nh = host_res_for(nm);
  if (!nh) {
    el__tm_res_unref(nm);
    return EL_ENOMEM;
  }
  nm->pub.session = session;
  el__tm_res_unref(st->main_res);
  el__tm_res_unref(st->host_res);
  st->main_res = nm;
  st->host_res = nh;
  return 0;
}

/* {====== store ======} */

el_tm_store_t *el_tm_store_new(const char *scope_name,
                               const char *scope_version) {
  el_tm_store_t *st = el_calloc(1, sizeof(*st));
  if (!st) return NULL;
  st->scope_name = el_strdup(scope_name ? scope_name : "");
  st->scope_version = el_strdup(scope_version ? scope_version : "");
  st->main_res = res_new(NULL, 0, NULL, 0);
  if (st->main_res) st->host_res = host_res_for(st->main_res);
  if (!st->scope_name || !st->scope_version || !st->host_res) {
    el_tm_store_free(st);
    return NULL;
  }
  st->lim.max_records = EL_TM_DEFAULT_MAX_RECORDS;
  st->lim.max_bytes = EL_TM_DEFAULT_MAX_BYTES;
  return st;
}

static void window_reset(window_t *w) {
  for (size_t i = 0; i < w->nres; i++) el__tm_res_unref(w->res[i]);
  w->nres = 0;
  w->nrecs = 0;
  w->nitems = 0;
  w->last_desc = NULL;
  w->last_item = -1;
  if (++w->gen == 0) { /* wrapped: no old entry may match */
    if (w->memo) memset(w->memo, 0, ATTR_MEMO * sizeof *w->memo);
    w->gen = 1;
  }
  el_map_clear(&w->index);
  el__tm_intern_clear(&w->intern);
  el_arena_free(&w->arena);
}

static void window_free(window_t *w) {
  window_reset(w);
  el__tm_intern_free(&w->intern);
  el_free(w->recs);
  el_free(w->keys);
  el_free(w->items);
  el_map_free(&w->index);
  el_free(w->res);
  el_free(w->memo);
  memset(w, 0, sizeof(*w));
}

void el_tm_store_free(el_tm_store_t *st) {
  if (!st) return;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    el_tm_store_count_dropped(st, s, st->win[s].nrecs);
    window_free(&st->win[s]);
  }
  for (size_t i = 0; i < st->nex; i++)
    if (st->ex[i].release) st->ex[i].release(st->ex[i].ud);
  el__tm_res_unref(st->main_res);
  el__tm_res_unref(st->host_res);
  el_free(st->scope_name);
  el_free(st->scope_version);
  el_free(st->ex);
  el_free(st);
}

void el_tm_store_set_limits(el_tm_store_t *st, const el_tm_limits_t *lim) {
  st->lim.max_records = lim && lim->max_records ? lim->max_records
                                                : EL_TM_DEFAULT_MAX_RECORDS;
  st->lim.max_bytes =
      lim && lim->max_bytes ? lim->max_bytes : EL_TM_DEFAULT_MAX_BYTES;
}

const el_tm_stats_t *el_tm_store_stats(const el_tm_store_t *st) {
  return &st->stats;
}

void el_tm_store_count_dropped(el_tm_store_t *st, el_tm_signal_t sig,
                               uint64_t n) {
  if (!st || sig < 0 || sig >= EL_TM_NSIGNALS || n == 0) return;
  __atomic_add_fetch(&st->stats.dropped[sig], n, __ATOMIC_RELAXED);
}

int el_tm_store_add_exporter(el_tm_store_t *st, const el_tm_exporter_t *ex) {
  if (!st || !ex || !ex->export) return EL_EINVAL;
  if (el_grow(&st->ex, &st->ex_cap, st->nex + 1, sizeof *st->ex) < 0)
    return EL_ENOMEM;
  st->ex[st->nex++] = *ex;
  st->takes |= ex->signals;
  return 0;
}

void el_tm_store_seal(el_tm_store_t *st) {
  if (st) st->sealed = true;
}

bool el_tm_store_takes(const el_tm_store_t *st, el_tm_signal_t sig) {
  return !st->sealed || (st->takes >> sig & 1u);
}

void el_tm_store_count_untaken(el_tm_store_t *st, el_tm_signal_t sig,
                               uint64_t n) {
  if (st && sig >= 0 && sig < EL_TM_NSIGNALS) st->stats.emitted[sig] += n;
}

uint64_t *el_tm_store_untaken_counter(el_tm_store_t *st, el_tm_signal_t sig) {
  if (!st || sig < 0 || sig >= EL_TM_NSIGNALS || el_tm_store_takes(st, sig))
    return NULL;
  return &st->stats.emitted[sig];
}

/* {====== emitting ======} */

/* A record of sig no exporter takes (el_tm_store_seal): counted as
 * emitted and discarded. Returns 0. */
static int untaken(el_tm_store_t *st, el_tm_signal_t sig) {
  st->stats.emitted[sig]++;
  return 0;
}

/* Drop one record of sig: count it and return EL_ENOMEM. */
static int drop(el_tm_store_t *st, el_tm_signal_t sig) {
  el_tm_store_count_dropped(st, sig, 1);
  return EL_ENOMEM;
}

static inline uint64_t rotl(uint64_t x, int k) {
  return x << k | x >> (64 - k);
}

/* Up to 16 bytes p[0..len) as two words that, with len, determine them
 * (overlapping loads; nothing read outside p[0..len)). */
static inline void short_words(const char *p, size_t len, uint64_t *w0,
                               uint64_t *w1) {
  const unsigned char *u = (const unsigned char *)p;
  uint32_t x = 0, y = 0;
  if (len >= 8) {
    memcpy(w0, p, 8);
    memcpy(w1, p + len - 8, 8);
    return;
  }
  if (len >= 4) {
    memcpy(&x, p, 4);
    memcpy(&y, p + len - 4, 4);
  } else if (len) {
    x = (uint32_t)u[0] | (uint32_t)u[len / 2] << 8 | (uint32_t)u[len - 1] << 16;
  }
  *w0 = x;
  *w1 = y;
}

/* p[0..len) and q[0..len) hold the same bytes. */
static inline bool bytes_eq(const char *p, const char *q, size_t len) {
  if (len > 16) return memcmp(p, q, len) == 0;
  uint64_t p0, p1, q0, q1;
  short_words(p, len, &p0, &p1);
  short_words(q, len, &q0, &q1);
  return ((p0 ^ q0) | (p1 ^ q1)) == 0;
}

/* The hash of attrs[0..n) for the memo (never stored or sent): keys by
 * address (attrs_eq compares their bytes), values by content, strings up
 * to 16 bytes inline. false for an array with a list (not memoized). */
static bool attrs_hash(const el_tm_attr_t *attrs, size_t n, uint64_t *out) {
  uint64_t h = EL__HASH_INIT ^ n;
  for (size_t i = 0; i < n; i++) {
    const el_tm_attr_t *a = &attrs[i];
    uint64_t v0 = 0, v1 = 0, tag = (uint64_t)a->type << 60;
    switch (a->type) {
    case EL_TM_STR: {
      size_t len = a->v.s.p ? a->v.s.len : 0;
      tag ^= (uint64_t)len << 48;
      if (len <= 16)
        short_words(a->v.s.p, len, &v0, &v1);
      else
        v0 = el_hash_bytes(a->v.s.p, len, 0);
      break;
    }
    case EL_TM_INT:
      v0 = (uint64_t)a->v.i;
      break;
    case EL_TM_DOUBLE:
      memcpy(&v0, &a->v.d, sizeof v0);
      break;
    case EL_TM_BOOL:
      v0 = a->v.b;
      break;
    default:
      return false;
    }
    h = el__hash_word(
        h, (uint64_t)(uintptr_t)a->key ^ tag ^ rotl(v0, 32) ^ rotl(v1, 17));
  }
  *out = el__hash_final(h);
  return true;
}

/* The NUL-terminated caller key s (NULL = "") has the bytes of the
 * stored key c. */
static bool key_eq(const char *c, const char *s) {
  return strcmp(c, s ? s : "") == 0;
}

/* The stored copies c[0..n) are what copying attrs[0..n) would make.
 * Strings compare by their bytes: one the copy changed (invalid UTF-8,
 * NUL) never compares equal, so it is copied again, never shared. Keys
 * compare by address when both the copy's caller and this one promised
 * static keys (skeys: the copy's caller keys, else NULL), else by bytes. */
static bool attrs_eq(const el_tm_attr_t *c, const char *const *skeys,
                     const el_tm_attr_t *attrs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const el_tm_attr_t *a = &attrs[i];
    if (c[i].type != a->type) return false;
    switch (a->type) {
    case EL_TM_STR: {
      size_t len = a->v.s.p ? a->v.s.len : 0;
      if (c[i].v.s.len != len || !bytes_eq(c[i].v.s.p, a->v.s.p, len))
        return false;
      break;
    }
    case EL_TM_INT:
      if (c[i].v.i != a->v.i) return false;
      break;
    case EL_TM_DOUBLE:
      if (memcmp(&c[i].v.d, &a->v.d, sizeof a->v.d)) return false;
      break;
    case EL_TM_BOOL:
      if (c[i].v.b != a->v.b) return false;
      break;
    default:
      return false;
    }
    if (skeys ? skeys[i] != a->key : !key_eq(c[i].key, a->key)) return false;
  }
  return true;
}

/* The memo hash of a caller's attrs_tag (never stored or sent). */
static inline uint64_t tag_hash(const uint64_t tag[2]) {
  return el__hash_final(
      el__hash_word(el__hash_word(EL__HASH_INIT, tag[0]), tag[1]));
}

/* Look attrs[0..n) up in the window's memo into *m (static_keys and tag,
 * NULL or the caller's attrs_tag: the caller's promises, el_tm_span_t).
 * A tagged array is found by its tag only; an untagged one by its hash
 * and contents, never in a tagged slot. */
static void memo_find(window_t *w, const el_tm_attr_t *attrs, size_t n,
                      bool static_keys, const uint64_t *tag, memo_look_t *m) {
  m->slot = NULL;
  m->hit = NULL;
  m->static_keys = static_keys;
  m->tag = static_keys && tag && (tag[0] | tag[1]) ? tag : NULL;
  if ((!attrs && !m->tag) || n == 0 || n > UINT32_MAX) return;
  if (m->tag)
    m->h = tag_hash(m->tag);
  else if (!attrs_hash(attrs, n, &m->h))
    return;
  if (!w->memo && !(w->memo = el_calloc(ATTR_MEMO, sizeof *w->memo)))
    return; /* out of memory: copied without the memo */
  if (w->gen == 0) w->gen = 1;
  attr_memo_t *sl = m->slot = &w->memo[m->h & (ATTR_MEMO - 1)];
  if (sl->gen != w->gen || sl->h != m->h || sl->n != n) return;
  if (m->tag ? sl->tag[0] == m->tag[0] && sl->tag[1] == m->tag[1]
             : !(sl->tag[0] | sl->tag[1]) &&
                   attrs_eq(sl->copy, static_keys ? sl->skeys : NULL, attrs, n))
    m->hit = sl->copy;
}

/* Bytes the copies of attrs[0..n) need at most (before interning): none
 * when the window holds an equal copy (looked up into *m for
 * copy_attrs; static_keys as memo_find). */
static size_t attrs_bytes(window_t *w, const el_tm_attr_t *attrs, size_t n,
                          bool static_keys, const uint64_t *tag,
                          memo_look_t *m) {
  memo_find(w, attrs, n, static_keys, tag, m);
  if (!attrs || m->hit) return 0;
  size_t b = n * sizeof(el_tm_attr_t);
  if (static_keys) b += n * sizeof(const char *) + 8;
  for (size_t i = 0; i < n; i++) {
    b += (attrs[i].key ? strlen(attrs[i].key) : 0) + 8;
    if (attrs[i].type == EL_TM_STR && attrs[i].v.s.p)
      b += attrs[i].v.s.len + 8;
    else if (attrs[i].type == EL_TM_STRLIST && attrs[i].v.list.items)
      for (size_t k = 0; k < attrs[i].v.list.n; k++)
        b += attrs[i].v.list.items[k].len + 8 + sizeof(el_strview_t);
  }
  return b;
}

/* Check the window limits for one more record whose copies take about
 * need bytes, and make room for it. */
static int admit_grow(el_tm_store_t *st, el_tm_signal_t sig, size_t need);

static inline int admit(el_tm_store_t *st, el_tm_signal_t sig, size_t need) {
  const window_t *w = &st->win[sig];
  size_t max_bytes = st->lim.max_bytes;
  if (w->nrecs < w->cap && w->nrecs < w->kcap && /* room: the common case */
      w->nrecs < st->lim.max_records && w->nrecs < UINT32_MAX / 2 &&
      w->arena.bytes < max_bytes && need <= max_bytes - w->arena.bytes)
    return 0;
  return admit_grow(st, sig, need);
}

/* admit when the record arrays may have to grow. */
static int admit_grow(el_tm_store_t *st, el_tm_signal_t sig, size_t need) {
  window_t *w = &st->win[sig];
  if (w->nrecs >= st->lim.max_records ||
      w->arena.bytes >= st->lim.max_bytes ||
      need > st->lim.max_bytes - w->arena.bytes)
    return EL_ENOMEM;
  if (w->nrecs >= UINT32_MAX / 2) return EL_ENOMEM;
  size_t want = w->nrecs + 1;
  if (w->cap == 0 && w->recs_hint > want) want = w->recs_hint;
  if (el_grow(&w->recs, &w->cap, want, recsize[sig]) < 0 ||
      el_grow(&w->keys, &w->kcap, w->nrecs + 1, sizeof *w->keys) < 0)
    return EL_ENOMEM;
  return 0;
}

/* Index of r in the window's resources, adding it (with a reference). */
static inline int win_res(window_t *w, el__tm_res_t *r) {
  if (w->nres && w->res[w->nres - 1] == r) return (int)w->nres - 1;
  for (size_t i = w->nres; i-- > 0;)
    if (w->res[i] == r) return (int)i;
  if (el_grow(&w->res, &w->res_cap, w->nres + 1, sizeof *w->res) < 0)
    return EL_ENOMEM;
  el__tm_res_ref(r);
  w->res[w->nres] = r;
  return (int)w->nres++;
}

/* Intern *v in place (v->p NULL on failure). */
static void intern_view(window_t *w, el_strview_t *v) {
  v->p = el__tm_intern_n(&w->intern, &w->arena, v->p, v->p ? v->len : 0,
                         &v->len);
}

static const char *intern_cstr(window_t *w, const char *s) {
  size_t len;
  return el__tm_intern_cstr(&w->intern, &w->arena, s, &len);
}

static int copy_attr(el_arena_t *a, el__tm_intern_t *in, el_tm_attr_t *dst,
                     const el_tm_attr_t *src) {
  *dst = *src;
  size_t klen;
  dst->key = el__tm_intern_cstr(in, a, src->key, &klen);
  if (!dst->key) return EL_ENOMEM;
  switch (src->type) {
  case EL_TM_STR: {
    size_t len = src->v.s.p ? src->v.s.len : 0;
    dst->v.s.p = el__tm_intern_n(in, a, src->v.s.p, len, &dst->v.s.len);
    return dst->v.s.p ? 0 : EL_ENOMEM;
  }
  case EL_TM_STRLIST: {
    size_t n = src->v.list.items ? src->v.list.n : 0;
    el_strview_t *items = el_arena_alloc(a, (n ? n : 1) * sizeof(*items));
    if (!items) return EL_ENOMEM;
    for (size_t i = 0; i < n; i++) {
      el_strview_t s = src->v.list.items[i];
      items[i].p = el__tm_intern_n(in, a, s.p, s.p ? s.len : 0,
                                   &items[i].len);
      if (!items[i].p) return EL_ENOMEM;
    }
    dst->v.list.items = items;
    dst->v.list.n = n;
    return 0;
  }
  case EL_TM_INT:
  case EL_TM_DOUBLE:
  case EL_TM_BOOL:
    return 0;
  }
  return EL_EINVAL;
}

/* Copies of attrs[0..n) in the window's arena (*out NULL when n == 0):
 * the equal copy m found (attrs_bytes), else new ones, remembered in
 * m's slot. Copies are immutable, so records share them. */
static int copy_attrs_new(window_t *w, const el_tm_attr_t *attrs, size_t n,
                          const memo_look_t *m, const el_tm_attr_t **out);

static inline int copy_attrs(window_t *w, const el_tm_attr_t *attrs, size_t n,
                             const memo_look_t *m, const el_tm_attr_t **out) {
  *out = m->hit; /* set only for attributes (attrs_bytes) */
  if (m->hit || !attrs || n == 0) return 0;
  return copy_attrs_new(w, attrs, n, m, out);
}

/* copy_attrs without an equal copy: new ones. */
static int copy_attrs_new(window_t *w, const el_tm_attr_t *attrs, size_t n,
                          const memo_look_t *m, const el_tm_attr_t **out) {
  el_tm_attr_t *dst = el_arena_alloc(&w->arena, n * sizeof(*dst));
  if (!dst) return EL_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    int rc = copy_attr(&w->arena, &w->intern, &dst[i], &attrs[i]);
    if (rc < 0) return rc;
  }
  const char **skeys = NULL;
  if (m->slot && m->static_keys &&
      (skeys = el_arena_alloc(&w->arena, n * sizeof *skeys)))
    for (size_t i = 0; i < n; i++) skeys[i] = attrs[i].key;
  if (m->slot)
    *m->slot =
        (attr_memo_t){.h = m->h,
                      .tag = {m->tag ? m->tag[0] : 0, m->tag ? m->tag[1] : 0},
                      .copy = dst,
                      .skeys = skeys,
                      .n = (uint32_t)n,
                      .gen = w->gen};
  *out = dst;
  return 0;
}

static bool item_eq(const item_t *a, const item_t *b, el_tm_signal_t sig) {
  if (a->res != b->res || a->hash != b->hash) return false;
  if (sig == EL_TM_SIGNAL_METRICS)
    return a->m.kind == b->m.kind && a->m.temporality == b->m.temporality &&
           a->m.monotonic == b->m.monotonic &&
           strcmp(a->m.name, b->m.name) == 0 &&
           strcmp(a->m.unit, b->m.unit) == 0;
  return strcmp(a->kind, b->kind) == 0 && strcmp(a->type, b->type) == 0 &&
         strcmp(a->unit, b->unit) == 0;
}

/* Index of the item equal to *key, creating it from *key when new. */
static int find_item(window_t *w, el_tm_signal_t sig, const item_t *key) {
  size_t pos;
  for (uint32_t i = el_map_first(&w->index, key->hash, &pos); i != EL_MAP_NONE;
       i = el_map_next(&w->index, key->hash, &pos))
    if (item_eq(&w->items[i], key, sig)) return (int)i;
  if (el_grow(&w->items, &w->items_cap, w->nitems + 1, sizeof *w->items) < 0 ||
      el_map_add(&w->index, key->hash, (uint32_t)w->nitems) < 0)
    return EL_ENOMEM;
  w->items[w->nitems] = *key;
  w->items[w->nitems].n = 0;
  return (int)w->nitems++;
}

/* Append the record at rec (recsize[sig] bytes) under key. admit() has
 * made room, so this cannot fail. */
static void push(el_tm_store_t *st, el_tm_signal_t sig, const void *rec,
                 uint32_t key) {
  window_t *w = &st->win[sig];
  memcpy(w->recs + w->nrecs * recsize[sig], rec, recsize[sig]);
  w->keys[w->nrecs++] = key;
  st->stats.emitted[sig]++;
}

static int same_metric(const window_t *w, const el_tm_metric_desc_t *desc,
                       int ri);
static int metric_item(window_t *w, const el_tm_metric_desc_t *desc,
                       int ri);

/* One data point under the main resource, or (host) under the host's own
 * resource (eventlog-live-otelcol-for-<service>). */
static int metric_point(el_tm_store_t *st, const el_tm_metric_desc_t *desc,
                        const el_tm_point_t *pt, bool host) {
  const el_tm_signal_t sig = EL_TM_SIGNAL_METRICS;
  if (!st || !desc || !desc->name || !pt) return EL_EINVAL;
  if (!el_tm_store_takes(st, sig)) return untaken(st, sig);
  window_t *w = &st->win[sig];
  memo_look_t m;
  if (admit(st, sig, attrs_bytes(w, pt->attrs, pt->nattrs, false, NULL, &m)) <
      0)
    return drop(st, sig);
  int ri = win_res(w, host ? st->host_res : st->main_res);
  if (ri < 0) return drop(st, sig);
  int it = same_metric(w, desc, ri);
  if (it < 0 && (it = metric_item(w, desc, ri)) < 0) return drop(st, sig);
  el_tm_point_t p = {.start_unix_ns = pt->start_unix_ns,
                     .time_unix_ns = pt->time_unix_ns,
                     .is_int = pt->is_int,
                     .ival = pt->is_int ? pt->ival : 0,
                     .dval = pt->is_int ? 0.0 : pt->dval,
                     .nattrs = pt->attrs ? pt->nattrs : 0};
  if (copy_attrs(w, pt->attrs, pt->nattrs, &m, &p.attrs) < 0)
    return drop(st, sig);
  w->last_desc = desc;
  w->last_item = it;
  w->items[it].n++;
  push(st, sig, &p, (uint32_t)it);
  return 0;
}

int el_tm_metric_point(el_tm_store_t *st, const el_tm_metric_desc_t *desc,
                       const el_tm_point_t *pt) {
  return metric_point(st, desc, pt, false);
}

int el_tm_host_metric_point(el_tm_store_t *st, const el_tm_metric_desc_t *desc,
                            el_unix_ns_t start_unix_ns,
                            el_unix_ns_t time_unix_ns, int64_t ival) {
  el_tm_point_t pt = {.start_unix_ns = start_unix_ns,
                      .time_unix_ns = time_unix_ns,
                      .is_int = true,
                      .ival = ival};
  return metric_point(st, desc, &pt, true);
}

/* The item of the metric of the previous point when desc describes the
 * same metric again (the common case: one instrument emitting in a loop),
 * else -1. Checks the contents, not just the pointer: callers may reuse
 * their desc struct for another metric. */
static int same_metric(const window_t *w, const el_tm_metric_desc_t *desc,
                       int ri) {
  if (desc != w->last_desc || w->last_item < 0) return -1;
  const item_t *it = &w->items[w->last_item];
  el_tm_temporality_t temp =
      desc->kind == EL_TM_SUM ? desc->temporality : EL_TM_TEMP_UNSPECIFIED;
  bool mono = desc->kind == EL_TM_SUM && desc->monotonic;
  if (it->res != (uint32_t)ri || it->m.kind != desc->kind ||
      it->m.temporality != temp || it->m.monotonic != mono ||
      strcmp(it->m.name, desc->name) != 0 ||
      strcmp(it->m.unit, desc->unit ? desc->unit : "") != 0)
    return -1;
  return w->last_item;
}

/* Find or create the item of desc under resource index ri. */
static int metric_item(window_t *w, const el_tm_metric_desc_t *desc,
                       int ri) {
  const el_tm_signal_t sig = EL_TM_SIGNAL_METRICS;
  item_t key = {.res = (uint32_t)ri, .m = *desc};
  key.m.name = intern_cstr(w, desc->name);
  key.m.unit = intern_cstr(w, desc->unit);
  key.m.description = intern_cstr(w, desc->description);
  if (!key.m.name || !key.m.unit || !key.m.description) return EL_ENOMEM;
  if (desc->kind != EL_TM_SUM) {
    key.m.temporality = EL_TM_TEMP_UNSPECIFIED;
    key.m.monotonic = false;
  }
  key.hash = el_hash_str(key.m.name, el_hash_str(key.m.unit, 0)) ^
             ((uint64_t)key.m.kind << 1 | (uint64_t)key.m.temporality << 3 |
              (uint64_t)key.m.monotonic << 5 | (uint64_t)ri << 8);
  return find_item(w, sig, &key);
}

static el_unix_ns_t now_unix_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (el_unix_ns_t)ts.tv_sec * 1000000000u + (el_unix_ns_t)ts.tv_nsec;
}

static const uint8_t *copy_bytes(window_t *w, const uint8_t *p, size_t n) {
  if (!p) return NULL;
  uint8_t *d = el_arena_alloc(&w->arena, n);
  if (d) memcpy(d, p, n);
  return d;
}

int el_tm_log(el_tm_store_t *st, const el_tm_log_t *rec) {
  const el_tm_signal_t sig = EL_TM_SIGNAL_LOGS;
  if (!st || !rec) return EL_EINVAL;
  if (!el_tm_store_takes(st, sig)) return untaken(st, sig);
  window_t *w = &st->win[sig];
  memo_look_t m;
  size_t need = attrs_bytes(w, rec->attrs, rec->nattrs, false, NULL, &m) + 32 +
                (rec->body.p ? rec->body.len : 0);
  if (admit(st, sig, need) < 0) return drop(st, sig);
  int ri = win_res(w, rec->host_log ? st->host_res : st->main_res);
  if (ri < 0) return drop(st, sig);
  el_tm_log_t r = *rec;
  if (r.observed_unix_ns == 0) r.observed_unix_ns = now_unix_ns();
  r.severity_text = rec->severity_text ? intern_cstr(w, rec->severity_text)
                                       : NULL;
  intern_view(w, &r.body);
  r.trace_id = copy_bytes(w, rec->trace_id, 16);
  r.span_id = copy_bytes(w, rec->span_id, 8);
  r.nattrs = rec->attrs ? rec->nattrs : 0;
  if ((rec->severity_text && !r.severity_text) || !r.body.p ||
      (rec->trace_id && !r.trace_id) || (rec->span_id && !r.span_id) ||
      copy_attrs(w, rec->attrs, rec->nattrs, &m, &r.attrs) < 0)
    return drop(st, sig);
  push(st, sig, &r, (uint32_t)ri);
  return 0;
}

int el_tm_span(el_tm_store_t *st, const el_tm_span_t *span) {
  const el_tm_signal_t sig = EL_TM_SIGNAL_TRACES;
  if (!st || !span) return EL_EINVAL;
  if (!el_tm_store_takes(st, sig)) return untaken(st, sig);
  window_t *w = &st->win[sig];
  memo_look_t m;
  size_t nlen = 0;
  const char *name =
      span->name ? el__tm_recent_cstr(&w->intern, span->name, &nlen) : NULL;
  if (!name && span->name) nlen = strlen(span->name);
  size_t need = attrs_bytes(w, span->attrs, span->nattrs, span->static_keys,
                            span->attrs_tag, &m) +
                nlen;
  if (!span->attrs && m.tag && span->nattrs && !m.hit)
    return -EAGAIN; /* the caller's attributes are needed */
  if (admit(st, sig, need) < 0) return drop(st, sig);
  int ri = win_res(w, st->main_res);
  if (ri < 0) return drop(st, sig);
  /* Filled in place: admit made room; kept only when complete. */
  el_tm_span_t *s = (el_tm_span_t *)(void *)w->recs + w->nrecs;
  *s = *span;
  if (!name) /* a miss: the lookup again, and remembered */
    name = el__tm_intern_cstr(&w->intern, &w->arena, span->name, &nlen);
  s->name = name;
  s->static_keys = false; /* the copies are interned */
  s->attrs_tag[0] = s->attrs_tag[1] = 0;
  s->nattrs = span->attrs || m.hit ? span->nattrs : 0;
  if (!name || copy_attrs(w, span->attrs, span->nattrs, &m, &s->attrs) < 0)
    return drop(st, sig);
  w->keys[w->nrecs++] = (uint32_t)ri;
  st->stats.emitted[sig]++;
  return 0;
}

/* Ids come from el_rng (src/common/el_rng.h): unique, not secret (W3C
 * trace context); an all-zero id is invalid, so it is drawn again. */
void el_tm_random_id(uint8_t *buf, size_t n) {
  if (n == 0) return;
  if (n == 8) { /* a span id: one draw */
    el_tm_random_span_id(buf);
    return;
  }
  bool zero = true;
  do {
    el_rng_bytes(buf, n);
    for (size_t i = 0; i < n; i++)
      if (buf[i]) zero = false;
  } while (zero);
}

int el_tm_profile_sample(el_tm_store_t *st, const el_tm_profile_sample_t *s) {
  const el_tm_signal_t sig = EL_TM_SIGNAL_PROFILES;
  if (!st || !s) return EL_EINVAL;
  if (!el_tm_store_takes(st, sig)) return untaken(st, sig);
  window_t *w = &st->win[sig];
  memo_look_t m;
  size_t need = attrs_bytes(w, s->attrs, s->nattrs, false, NULL, &m);
  for (size_t i = 0; s->frames && i < s->nframes; i++)
    need += sizeof(el_tm_frame_t) + s->frames[i].function.len +
            s->frames[i].file.len + 16;
  if (admit(st, sig, need) < 0) return drop(st, sig);
  int ri = win_res(w, st->main_res);
  if (ri < 0) return drop(st, sig);
  item_t key = {.res = (uint32_t)ri};
  key.kind = intern_cstr(w, s->profile_kind);
  key.type = intern_cstr(w, s->sample_type);
  key.unit = intern_cstr(w, s->sample_unit);
  if (!key.kind || !key.type || !key.unit) return drop(st, sig);
  key.hash =
      el_hash_str(key.kind, el_hash_str(key.type, el_hash_str(key.unit, 0))) ^
      (uint64_t)ri << 8;
  el_tm_profile_sample_t r = *s;
  r.profile_kind = key.kind;
  r.sample_type = key.type;
  r.sample_unit = key.unit;
  r.nframes = s->frames ? s->nframes : 0;
  r.nattrs = s->attrs ? s->nattrs : 0;
  el_tm_frame_t *fr = NULL;
  if (r.nframes) {
    fr = el_arena_alloc(&w->arena, r.nframes * sizeof(*fr));
    if (!fr) return drop(st, sig);
    for (size_t i = 0; i < r.nframes; i++) {
      fr[i] = s->frames[i];
      intern_view(w, &fr[i].function);
      intern_view(w, &fr[i].file);
      if (!fr[i].function.p || !fr[i].file.p) return drop(st, sig);
    }
  }
  r.frames = fr;
  if (copy_attrs(w, s->attrs, s->nattrs, &m, &r.attrs) < 0)
    return drop(st, sig);
  int it = find_item(w, sig, &key);
  if (it < 0) return drop(st, sig);
  w->items[it].n++;
  push(st, sig, &r, (uint32_t)it);
  return 0;
}

/* {====== flushing ======} */

/* Fill b's items/groups in OTLP order and return, per window item, its
 * new index (el_malloc'd, nitems entries). */
static uint32_t *order_items(window_t *w, el_tm_signal_t sig,
                             el_tm_batch_t *b, size_t *group_n) {
  uint32_t *map = el_malloc((w->nitems ? w->nitems : 1) * sizeof(*map));
  size_t isz = sig == EL_TM_SIGNAL_METRICS ? sizeof(el_tm_metric_t)
                                           : sizeof(el_tm_profile_t);
  b->items = el_malloc((w->nitems ? w->nitems : 1) * isz);
  if (!map || !b->items) {
    el_free(map);
    return NULL;
  }
  size_t k = 0, first = 0;
  for (size_t r = 0; r < w->nres; r++) {
    group_n[r] = 0;
    for (size_t i = 0; i < w->nitems; i++) {
      const item_t *it = &w->items[i];
      if (it->res != r || it->n == 0) continue;
      map[i] = (uint32_t)k;
      if (sig == EL_TM_SIGNAL_METRICS) {
        el_tm_metric_t *m = (el_tm_metric_t *)b->items + k;
        *m = (el_tm_metric_t){it->m, first, it->n};
      } else {
        el_tm_profile_t *p = (el_tm_profile_t *)b->items + k;
        *p = (el_tm_profile_t){it->kind, it->type, it->unit, first, it->n};
      }
      first += it->n;
      group_n[r]++;
      k++;
    }
  }
  b->nitems = k;
  return map;
}

/* Move the window's records into b in (key order, emission order). When
 * they are in that order already (one resource, one metric...), the
 * window's array itself moves to the batch: no copy. */
static int sort_records(window_t *w, el_tm_signal_t sig, el_tm_batch_t *b,
                        const uint32_t *map, size_t nkeys) {
  size_t i = 1;
  for (; i < w->nrecs; i++)
    if ((map ? map[w->keys[i]] : w->keys[i]) <
        (map ? map[w->keys[i - 1]] : w->keys[i - 1]))
      break;
  if (i >= w->nrecs) {
    b->recs = w->recs;
    b->nrecs = w->nrecs;
    w->recs = NULL;
    w->cap = 0; /* admit() allocates anew, at the size of this batch */
    w->recs_hint = w->nrecs < RECS_HINT_MAX ? w->nrecs : RECS_HINT_MAX;
    return 0;
  }
  size_t *pos = el_calloc(nkeys ? nkeys : 1, sizeof(*pos));
  b->recs = el_malloc(w->nrecs * recsize[sig]);
  if (!pos || !b->recs) {
    el_free(pos);
    return EL_ENOMEM;
  }
  for (i = 0; i < w->nrecs; i++)
    pos[map ? map[w->keys[i]] : w->keys[i]]++;
  size_t acc = 0;
  for (size_t k = 0; k < nkeys; k++) {
    size_t c = pos[k];
    pos[k] = acc;
    acc += c;
  }
  for (i = 0; i < w->nrecs; i++) {
    size_t k = map ? map[w->keys[i]] : w->keys[i];
    memcpy((unsigned char *)b->recs + pos[k]++ * recsize[sig],
           w->recs + i * recsize[sig], recsize[sig]);
  }
  b->nrecs = w->nrecs;
  el_free(pos);
  return 0;
}

/* Fill groups: one per resource with records. */
static int make_groups(window_t *w, el_tm_signal_t sig, el_tm_batch_t *b,
                       const size_t *group_n) {
  b->groups = el_malloc(w->nres * sizeof(*b->groups));
  b->res = el_malloc(w->nres * sizeof(*b->res));
  if (!b->groups || !b->res) return EL_ENOMEM;
  size_t first = 0;
  for (size_t r = 0; r < w->nres; r++) {
    if (group_n[r] == 0) continue;
    el__tm_res_ref(w->res[r]);
    b->res[b->ngroups] = w->res[r];
    b->groups[b->ngroups++] =
        (el_tm_rgroup_t){&w->res[r]->pub, first, group_n[r]};
    first += group_n[r];
  }
  return 0;
}

static el_tm_batch_t *build_batch(el_tm_store_t *st, el_tm_signal_t sig) {
  window_t *w = &st->win[sig];
  el_tm_batch_t *b = el_calloc(1, sizeof(*b));
  size_t *group_n = el_calloc(w->nres, sizeof(*group_n));
  uint32_t *map = NULL;
  if (b) b->refs = 1;
  if (!b || !group_n) goto fail;
  b->sig = sig;
  bool has_items = sig == EL_TM_SIGNAL_METRICS || sig == EL_TM_SIGNAL_PROFILES;
  if (has_items) {
    map = order_items(w, sig, b, group_n);
    if (!map || sort_records(w, sig, b, map, b->nitems) < 0) goto fail;
  } else {
    for (size_t i = 0; i < w->nrecs; i++) group_n[w->keys[i]]++;
    if (sort_records(w, sig, b, NULL, w->nres) < 0) goto fail;
  }
  if (make_groups(w, sig, b, group_n) < 0) goto fail;
  b->scope_name =
      el_arena_strndup(&w->arena, st->scope_name, strlen(st->scope_name));
  b->scope_version =
      el_arena_strndup(&w->arena, st->scope_version, strlen(st->scope_version));
  if (!b->scope_name || !b->scope_version) goto fail;
  b->arena = w->arena;                /* the batch takes the arena */
  w->arena = (el_arena_t){0};
  el_free(map);
  el_free(group_n);
  return b;
fail:
  el_free(map);
  el_free(group_n);
  el_tm_batch_free(b);
  return NULL;
}

/* el_tm_store_flush and el_tm_store_flush_to: the exporters taking the
 * batches are those registered with ud, or all when every. */
static int flush_window(el_tm_store_t *st, const void *ud, bool every) {
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    window_t *w = &st->win[s];
    if (w->nrecs == 0) {
      window_reset(w);
      continue;
    }
    el_tm_batch_t *b = build_batch(st, s);
    if (!b) {
      el_log(EL_LOG_WARN, "telemetry: out of memory building a %s batch; "
             "%zu records dropped", s == 0 ? "metrics" : s == 1 ? "logs"
             : s == 2 ? "traces" : "profiles", w->nrecs);
      el_tm_store_count_dropped(st, s, w->nrecs);
      window_reset(w);
      continue;
    }
    window_reset(w);
    bool handed = false;
    for (size_t i = 0; i < st->nex; i++) {
      const el_tm_exporter_t *ex = &st->ex[i];
      if (!(ex->signals & (1u << s)) || (!every && ex->ud != ud)) continue;
      el_tm_batch_ref(b);
      handed = true;
      if (ex->export(ex->ud, s, b) < 0)
        el_tm_store_count_dropped(st, s, b->nrecs);
    }
    if (handed && every) st->stats.batches[s]++;
    el_tm_batch_free(b);
  }
  return 0;
}

int el_tm_store_flush(el_tm_store_t *st) {
  if (!st) return EL_EINVAL;
  return flush_window(st, NULL, true);
}

int el_tm_store_flush_to(el_tm_store_t *st, const void *ud) {
  if (!st) return EL_EINVAL;
  return flush_window(st, ud, false);
}

int el_tm_store_shutdown(el_tm_store_t *st, int timeout_ms) {
  if (!st) return EL_EINVAL;
  el_tm_store_flush(st);
  int rc = 0;
  for (size_t i = 0; i < st->nex; i++)
    if (st->ex[i].flush && st->ex[i].flush(st->ex[i].ud, timeout_ms) != 0)
      rc = EL_EEXPORT;
  return rc;
}
