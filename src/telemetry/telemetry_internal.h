/* telemetry_internal.h: private layout of the telemetry store and batches,
 * shared by telemetry.c (store), tm_intern.c (string copies) and
 * tm_batch.c (batch accessors). Not for use outside src/telemetry/. */
#ifndef EL_TELEMETRY_INTERNAL_H
#define EL_TELEMETRY_INTERNAL_H

#include <string.h>

#include "../common/el_arena.h"
#include "../common/el_map.h"
#include "telemetry.h"
#include "telemetry_batch.h"

/* {====== interning (tm_intern.c) ======} */

/* String interning into an arena: equal strings (up to
 * EL__TM_INTERN_MAX bytes) share one copy. The table memory is reused
 * across windows (el__tm_intern_clear); the strings live in the arena. */
#define EL__TM_INTERN_MAX 256
typedef struct el__tm_istr_s {
  const char *s;                      /* the copy in the arena */
  uint32_t len;
} el__tm_istr_t;
/* A recent lookup by the caller's pointer: a hit needs the same pointer,
 * length and bytes (a caller's buffer may hold another string now), and
 * costs no UTF-8 check, hash or table probe. Names and attribute keys
 * (string literals, the host's copies) come from the same address on
 * every record. */
#define EL__TM_RECENT 64 /* a power of two */
typedef struct el__tm_recent_s {
  const char *src;  /* the caller's pointer, or NULL */
  const char *copy; /* its interned copy (valid UTF-8) */
  size_t len;
} el__tm_recent_t;
typedef struct el__tm_intern_s {
  el_map_t map;                       /* el_hash_bytes of a string ->
                                         index in strs */
  el__tm_istr_t *strs;                /* the strings interned, n of cap */
  size_t n, cap;
  el__tm_recent_t recent[EL__TM_RECENT]; /* by caller pointer, direct-
                                         mapped; emptied with the map */
} el__tm_intern_t;

/* An interned (or, when longer than EL__TM_INTERN_MAX, copied) NUL-
 * terminated copy of s[0..len) in a; NULL when out of memory. */
const char *el__tm_intern(el__tm_intern_t *t, el_arena_t *a,
                          const char *s, size_t len);
/* The same, also giving the copy's length: bytes of s that are not valid
 * UTF-8 are replaced by U+FFFD (OTLP strings must be UTF-8), so it may
 * differ from len. */
const char *el__tm_intern_n(el__tm_intern_t *t, el_arena_t *a,
                            const char *s, size_t len, size_t *out_len);
/* The same for the NUL-terminated s (NULL = ""), its length in *out_len:
 * a recent lookup of the same pointer and bytes costs one strcmp, no
 * strlen. */
const char *el__tm_intern_cstr(el__tm_intern_t *t, el_arena_t *a, const char *s,
                               size_t *out_len);
/* The recent-lookup slot of the caller's NUL-terminated string at s (by
 * its pointer only: the length is what a hit tells). */
static inline el__tm_recent_t *el__tm_recent_cstr_slot(el__tm_intern_t *t,
                                                       const char *s) {
  uint64_t h = ((uint64_t)(uintptr_t)s ^ 0x5bd1e995u) * 0x9e3779b97f4a7c15u;
  return &t->recent[h >> 58 & (EL__TM_RECENT - 1)];
}
/* Only the recent lookup of el__tm_intern_cstr (s not NULL): the copy and
 * its length, or NULL when s is not a recent string (nothing is
 * allocated: for a record's size before it is admitted). */
static inline const char *el__tm_recent_cstr(el__tm_intern_t *t, const char *s,
                                             size_t *out_len) {
  const el__tm_recent_t *rc = el__tm_recent_cstr_slot(t, s);
  if (rc->src != s || strcmp(rc->copy, s) != 0) return NULL;
  *out_len = rc->len; /* equal bytes up to the NUL: s's length */
  return rc->copy;
}
void el__tm_intern_clear(el__tm_intern_t *t);
void el__tm_intern_free(el__tm_intern_t *t);

/* {====== resources ======} */

/* A refcounted immutable resource: pub's arrays live in arena. */
typedef struct el__tm_res_s {
  el_tm_resource_t pub;
  int refs;                           /* atomic */
  el_arena_t arena;
} el__tm_res_t;

void el__tm_res_ref(el__tm_res_t *r);
void el__tm_res_unref(el__tm_res_t *r);

/* {====== batches ======} */

struct el_tm_batch_s {
  int refs;                           /* atomic */
  el_tm_signal_t sig;
  const char *scope_name;             /* in arena */
  const char *scope_version;          /* in arena */
  el_arena_t arena;               /* strings, attributes, frames */
  el_tm_rgroup_t *groups;
  el__tm_res_t **res;                 /* one reference per group */
  size_t ngroups;
  void *items;                        /* el_tm_metric_t / el_tm_profile_t */
  size_t nitems;
  void *recs;                         /* points / logs / spans / samples */
  size_t nrecs;
};

#endif /* EL_TELEMETRY_INTERNAL_H */
