/* rp_internal.h: the reducer's parts (report.h), private to src/report.
 *
 * rp_cols.c    columns: buckets of 2^k ns that merge as the range grows
 * rp_strtab.c  interned strings (band names, symbols, thread labels)
 * rp_heap.c    gauges, allocation, heap censuses and bands
 * rp_time.c    capability timeline, GC collections and pauses
 * rp_prof.c    call trees and symbols of profile samples
 * rp_logs.c    markers and messages: the first and last N
 * rp_custom.c  sections added by scripts (series, tables), threads,
 *              session
 * rp_export.c  the store's exporter: batches into the parts above
 * rp_clock.c   records held while their session's clock may still move
 * rp_lua.c     eventlog_live.report.native
 * rp_json.c    the page's data; rp_html.c the page */
#ifndef EL_RP_INTERNAL_H
#define EL_RP_INTERNAL_H

#include <stdbool.h>

#include "../common/el_map.h"
#include "report.h"

/* {====== columns ======} */

/* Merge bucket src into dst (both of the array's element type); src is
 * dropped afterwards (zeroed without its drop hook: merge takes or frees
 * what it owns). */
typedef void (*rp_merge_fn)(void *dst, void *src);
/* Free what an element owns (may be NULL). */
typedef void (*rp_drop_fn)(void *el);

/* Parallel arrays of buckets over one time axis. Bucket i covers Unix ns
 * [(lo + i) << shift, (lo + i + 1) << shift). An all-zero element is an
 * empty bucket. */
typedef struct rp_cols_s {
  unsigned shift; /* bucket width is 2^shift ns */
  int64_t lo;     /* absolute index of bucket 0 */
  size_t n;       /* buckets in use, <= max */
  size_t max;     /* buckets per array before coarsening */
  size_t elsize;  /* bytes per element */
  rp_merge_fn merge;
  rp_drop_fn drop;
  uint8_t **arr; /* narr arrays of max elements each */
  size_t narr, arr_cap;
} rp_cols_t;

/* max: >= 2. Returns 0 (no memory is taken until an array is added). */
void el__rp_cols_init(rp_cols_t *c, size_t max, size_t elsize,
                      rp_merge_fn merge, rp_drop_fn drop);
void el__rp_cols_close(rp_cols_t *c);
/* Add a zeroed array; returns its index or EL_ENOMEM. */
int el__rp_cols_add_array(rp_cols_t *c);
/* Make Unix time t fit (coarsening and extending as needed); returns its
 * bucket index, or -1 for t == 0 (unknown time: ignored). */
long el__rp_cols_fit(rp_cols_t *c, uint64_t t);
/* Make [s, e] fit; *i0, *i1 receive the buckets of s and e. Returns 0,
 * -1 for s == 0. */
int el__rp_cols_fit_span(rp_cols_t *c, uint64_t s, uint64_t e, long *i0,
                         long *i1);
/* Element i of array a (i < n). */
static inline void *el__rp_cols_el(const rp_cols_t *c, size_t a, size_t i) {
  return c->arr[a] + i * c->elsize;
}
static inline uint64_t el__rp_cols_start(const rp_cols_t *c, size_t i) {
  return (uint64_t)(c->lo + (int64_t)i) << c->shift;
}
static inline uint64_t el__rp_cols_width(const rp_cols_t *c) {
  return (uint64_t)1 << c->shift;
}
/* Lower the budget to max buckets (coarsening as needed; arrays shrink).
 * Returns 0 or EL_ENOMEM (the budget is then unchanged). */
int el__rp_cols_set_max(rp_cols_t *c, size_t max);
/* Coarsen by 2^k (k >= 0): merge groups of buckets. */
void el__rp_cols_coarsen(rp_cols_t *c, unsigned k);

/* A gauge bucket: min, max, sum and last of the values that fell in it. */
typedef struct rp_gauge_s {
  uint32_t n; /* values; 0 = empty bucket */
  double min, max, sum;
  double last;
  uint64_t t_last; /* Unix ns of `last` */
  uint64_t t_max;  /* Unix ns of `max` */
} rp_gauge_t;
void el__rp_gauge_add(rp_gauge_t *g, uint64_t t, double v);
void el__rp_gauge_merge(void *dst, void *src);

/* {====== interned strings ======} */

typedef struct rp_strtab_s {
  char **s; /* id -> NUL-terminated copy */
  uint32_t *len;
  size_t n, cap;  /* ids in use, allocated (s and len) */
  el_map_t index; /* el_hash_bytes of a string -> its id */
  size_t max;     /* ids at most */
} rp_strtab_t;

void el__rp_strtab_init(rp_strtab_t *t, size_t max);
void el__rp_strtab_close(rp_strtab_t *t);
/* The id of p[0..len), added if new. Returns the id, -1 when full (max
 * strings), EL_EINVAL (len over 2^32 - 1) or EL_ENOMEM. */
long el__rp_strtab_intern(rp_strtab_t *t, const char *p, size_t len);
/* The id or -1 when absent. */
long el__rp_strtab_find(const rp_strtab_t *t, const char *p, size_t len);

/* {====== heap ======} */

enum {
  RP_G_HEAP_SIZE = 0,
  RP_G_HEAP_LIVE,
  RP_G_BLOCKS_SIZE,
  RP_G_MEM_CURRENT,
  RP_G_MEM_NEEDED,
  RP_G_MEM_RETURNED,
  RP_G_ALLOC, /* bytes allocated in the bucket (sum) */
  RP_G_N
};
#define RP_MAX_CAPSETS 16
#define RP_MAX_CAPS 1024

typedef struct rp_gauge_stat_s {
  uint64_t points;
  double peak;
  uint64_t peak_t;
  double last[RP_MAX_CAPSETS]; /* latest value per capset */
  bool has[RP_MAX_CAPSETS];
} rp_gauge_stat_t;

typedef struct rp_entry_s {
  uint32_t band;
  double bytes;
} rp_entry_t;

/* One census bucket: the census with the largest total of the bucket. */
typedef struct rp_census_s {
  uint64_t t;       /* Unix ns of the census (its first sample) */
  double total;     /* bytes of every band */
  double rest;      /* bytes of bands not in ent */
  double min_total; /* smallest total of the bucket's censuses */
  uint32_t ncensus; /* censuses that fell in the bucket; 0 = empty */
  uint32_t nent;
  rp_entry_t *ent; /* the largest bands, by band id (owned) */
} rp_census_t;

#define RP_CENSUS_KEEP 256 /* bands kept per census bucket */
#define RP_MAX_BANDS 65536 /* distinct band names */

typedef struct rp_band_s {
  double peak, sum;
  uint64_t peak_t;
  uint64_t n;   /* censuses in which it appeared */
  char *detail; /* -hi: the info table, else NULL (owned) */
  uint64_t seq; /* census it was last seen in */
  uint32_t cur; /* its index in the open census */
} rp_band_t;

typedef struct rp_heap_s {
  rp_cols_t g; /* gauges: one array per RP_G_* */
  rp_gauge_stat_t st[RP_G_N];
  double alloc_last[RP_MAX_CAPS]; /* HeapAllocated per capability */
  uint64_t alloc_t[RP_MAX_CAPS];  /* time of alloc_last */
  bool alloc_has[RP_MAX_CAPS];
  double alloc_total;
  rp_cols_t c;       /* censuses: one array of rp_census_t */
  rp_strtab_t names; /* band names */
  rp_band_t *bands;
  size_t bands_cap;
  uint64_t dropped_bands; /* samples of bands beyond RP_MAX_BANDS */
  /* the census being collected */
  bool open;
  uint64_t open_begin; /* its HEAP_PROF_SAMPLE_BEGIN (Unix ns), or
                          the first sample's time */
  uint64_t open_t;     /* time of its first sample */
  uint64_t seq;        /* census sequence number */
  rp_entry_t *cur;
  size_t ncur, cur_cap;
  /* census begins reported by the script, not yet matched */
  uint64_t *begins;
  size_t bhead, bn, bcap;
  uint64_t censuses_begun; /* HEAP_PROF_SAMPLE_BEGIN seen */
  uint64_t censuses;       /* censuses with samples */
  uint64_t samples;
  char breakdown[16]; /* "-hT", ... ("" unknown) */
  uint64_t interval_ns;
  bool begun; /* a session had HEAP_PROF_BEGIN (profiling on, even with
                 no census) */
} rp_heap_t;

void el__rp_heap_init(rp_heap_t *h, size_t columns);
void el__rp_heap_close(rp_heap_t *h);
/* A gauge point (g: RP_G_*) of capset at t. */
void el__rp_heap_gauge(rp_heap_t *h, int g, uint64_t t, int64_t capset,
                       double v);
/* A HeapAllocated point at t (Unix ns): v cumulative bytes of capability
 * cap, counted since start (Unix ns, the RTS start; 0 unknown). Spreads
 * the increase since the capability's previous point over that interval,
 * a first point's (or one after a reset, a new session's) from start when
 * at most 60 s before and not before the previous point. Returns the interval's start (0: none, the bytes counted in the
 * total only). */
uint64_t el__rp_heap_alloc(rp_heap_t *h, uint64_t t, uint64_t start,
                           int64_t cap, double v);
/* A census began at t (HEAP_PROF_SAMPLE_BEGIN). */
void el__rp_heap_census_begin(rp_heap_t *h, uint64_t t);
/* One sample of a census: band label, its bytes at t. detail: -hi info
 * table description or NULL. Returns 0 or EL_ENOMEM. */
int el__rp_heap_sample(rp_heap_t *h, uint64_t t, const char *label, size_t len,
                       double bytes, const char *detail);
/* Close the open census (end of input). */
void el__rp_heap_finish(rp_heap_t *h);

/* {====== time ======} */

#define RP_TL_THREADS 3 /* threads remembered per timeline bucket */
typedef struct rp_tl_s {
  uint64_t mut_ns, gc_ns;
  uint32_t thr[RP_TL_THREADS]; /* thread id + 1, 0 = none */
  uint64_t thr_ns[RP_TL_THREADS];
} rp_tl_t;

#define RP_LONGEST 20 /* longest pauses kept */
typedef struct rp_pause_s {
  uint64_t start, end; /* Unix ns */
  uint32_t ncaps;      /* GC spans (capabilities) taking part */
} rp_pause_t;

typedef struct rp_time_s {
  rp_cols_t c;                 /* one array of rp_tl_t per capability */
  int arr_of_cap[RP_MAX_CAPS]; /* -1 = none yet */
  int cap_of_arr[RP_MAX_CAPS];
  size_t budget; /* cells in all arrays */
  uint64_t cap_first[RP_MAX_CAPS], cap_last[RP_MAX_CAPS];
  uint64_t mut_spans, gc_spans;
  uint64_t mut_ns, gc_ns;
  /* collections: GC spans of all capabilities that overlap */
  bool in_gc;
  rp_pause_t cur;
  uint64_t collections;
  uint64_t pause_total_ns, pause_max_ns;
  uint64_t hist[64];              /* pauses by floor(log2(ns)) */
  rp_pause_t longest[RP_LONGEST]; /* longest first */
  size_t nlongest;
  rp_cols_t gcc; /* pauses per column: rp_gauge_t of ns */
} rp_time_t;

void el__rp_time_init(rp_time_t *tm, size_t columns, size_t timeline_columns);
void el__rp_time_close(rp_time_t *tm);
/* A Mutator span of thread on cap, or a GC span (thread ignored). */
void el__rp_time_span(rp_time_t *tm, int64_t cap, bool gc, uint32_t thread,
                      uint64_t s, uint64_t e);
/* Close the open collection (end of input). */
void el__rp_time_finish(rp_time_t *tm);

/* {====== profiles ======} */

#define RP_MAX_NODES 262144 /* call tree nodes per profile */
#define RP_MAX_SYMS 131072  /* symbols per profile */
#define RP_MAX_PROFILES 8

typedef struct rp_node_s {
  uint32_t parent;      /* node index; the root is 0 */
  uint32_t sym;         /* symbol id (root: unused) */
  uint64_t self, total; /* samples ending here / passing through */
} rp_node_t;

typedef struct rp_sym_s {
  uint64_t self, total;
  uint64_t seq; /* last sample that counted it in total */
  char *loc;    /* "file:line:col" or NULL (owned) */
} rp_sym_t;

typedef struct rp_prof_s {
  char *kind; /* profile kind (processor name) */
  char *sample_type, *sample_unit;
  rp_node_t *nodes;
  size_t nnodes, nodes_cap;
  el_map_t children; /* parent << 32 | sym -> node index */
  rp_strtab_t names; /* symbol keys: "func\x1f" "loc" */
  rp_sym_t *syms;
  size_t syms_cap;
  uint64_t samples;   /* sum of sample values */
  uint64_t nsamples;  /* samples */
  uint64_t truncated; /* samples cut short by the node/symbol caps */
  uint64_t seq;
} rp_prof_t;

/* The profile of kind, created on first use (NULL when RP_MAX_PROFILES
 * are taken or out of memory). */
rp_prof_t *el__rp_prof_get(rp_prof_t **profs, size_t *n, const char *kind,
                           const char *type, const char *unit);
void el__rp_prof_free(rp_prof_t *p);
/* One sample: frames innermost first. */
void el__rp_prof_sample(rp_prof_t *p, const el_tm_frame_t *frames, size_t n,
                        int64_t value);

/* {====== logs ======} */

#define RP_LOGS_KEEP 5000 /* first and last records kept */
#define RP_MARKERS_KEEP 1000
#define RP_BODY_MAX 2000 /* bytes of a body kept */

typedef struct rp_log_s {
  uint64_t t;
  int64_t cap; /* -1 = none */
  int kind;    /* 0 message, 1 marker */
  char *body;
} rp_log_t;

typedef struct rp_logs_s {
  size_t keep;
  rp_log_t *head; /* the first `keep` */
  size_t nhead;
  rp_log_t *ring; /* the last `keep` after those */
  size_t nring, pos;
  uint64_t total;
} rp_logs_t;

int el__rp_logs_init(rp_logs_t *l, size_t keep);
void el__rp_logs_close(rp_logs_t *l);
void el__rp_logs_add(rp_logs_t *l, uint64_t t, int64_t cap, int kind,
                     const char *body, size_t len);
/* Records in order: the head, then the ring oldest first. */
size_t el__rp_logs_count(const rp_logs_t *l);
const rp_log_t *el__rp_logs_at(const rp_logs_t *l, size_t i);

/* A column of markers: how many fell in it and the first one. */
typedef struct rp_mark_s {
  uint32_t n; /* 0 = empty bucket */
  uint64_t t; /* Unix ns of the first */
  char *text; /* its text (owned) */
} rp_mark_t;

void el__rp_marks_init(rp_cols_t *c, size_t columns);
void el__rp_marks_add(rp_cols_t *c, uint64_t t, const char *text, size_t len);

/* {====== sections added by scripts, threads, session ======} */

#define RP_MAX_SECTIONS 64
#define RP_MAX_LINES 16   /* lines per series section */
#define RP_MAX_ROWS 10000 /* rows per table (and threads shown) */
#define RP_MAX_COLUMNS 32
#define RP_MAX_SESSIONS 1024 /* sessions placed on the page's axis */

typedef struct rp_cell_s {
  bool is_num;
  double num;
  char *str; /* owned; NULL with is_num false = empty */
} rp_cell_t;

typedef struct rp_section_s {
  int kind; /* 0 series, 1 table */
  char *title, *unit, *description;
  /* series */
  rp_cols_t cols; /* one array of rp_gauge_t per line */
  char *lines[RP_MAX_LINES];
  size_t nlines;
  uint64_t points, dropped;
  /* table */
  char *columns[RP_MAX_COLUMNS];
  size_t ncolumns;
  rp_cell_t *cells; /* nrows * ncolumns */
  size_t nrows;
  uint64_t omitted;
} rp_section_t;

typedef struct rp_thread_s {
  uint64_t id;
  char *label;
  char *state, *status;
  int64_t created_t, finished_t, first_t, last_t; /* RTS ns, -1 none */
  uint64_t running_ns, blocked_ns, runs;
  int64_t cap;
  uint64_t session;       /* el.session.number of the thread's program */
  uint64_t start_unix_ns; /* that session's RTS start, 0 unknown */
} rp_thread_t;

typedef struct rp_session_s {
  uint64_t number;
  char *rts_version, *ghc_version, *args, *clock, *clock_from;
  int64_t pid;
  uint64_t start_unix_ns;
  char caps[256]; /* "0, 1" */
} rp_session_t;

/* Where a session lies on the page's axis: a chart's line must not join
 * the last point of one session to the first of the next. */
typedef struct rp_span_s {
  uint64_t number;        /* el.session.number */
  uint64_t start_unix_ns; /* its RTS start, 0 unknown */
  uint64_t end_unix_ns;   /* its last event's time, 0 not ended yet */
  char *args;             /* its program's arguments, or NULL (owned) */
  int64_t pid;            /* -1 unknown */
  char breakdown[4];      /* heap profile breakdown ("-hT"), or "" */
  bool estimated;         /* its clock is estimated, not exact */
} rp_span_t;

/* {====== records held for their session's clock (rp_clock.c) ======} */

enum {
  RP_HELD_BATCH = 0,    /* a store batch */
  RP_HELD_CENSUS_BEGIN, /* native.census_begin */
  RP_HELD_CENSUS_SAMPLE,
  RP_HELD_POINT /* native.point */
};

/* A record whose Unix times were converted with a clock that may still
 * move: reduced once the clock has settled, its times moved by
 * (settled start - start). */
typedef struct rp_held_s {
  struct rp_held_s *next;
  int kind;           /* RP_HELD_* */
  uint64_t start;     /* the session's RTS start (Unix ns) its times were
                        converted with; 0 = no clock (never moved) */
  uint64_t session;   /* its session (el.session.number) */
  el_tm_signal_t sig; /* batch: its signal */
  el_tm_batch_t *b;   /* batch (owned) */
  uint64_t t;         /* the others: Unix ns */
  double v;           /* census sample bytes, point value */
  char *label;        /* census sample band (owned) */
  size_t len;
  size_t section, line; /* point: rp->sections index, line array */
} rp_held_t;

/* A session that ended with an estimated clock, followed by another
 * (rp_clock.c): its records are held until a later session's clock
 * settles, then moved to start = (the next session's start) - end_t. */
typedef struct rp_pending_s {
  uint64_t session;
  uint64_t start; /* its last clock, Unix ns; 0 = none */
  uint64_t end_t; /* its largest eventlog time, ns */
  uint64_t final; /* its start once placed (el__rp_release) */
} rp_pending_t;

/* Records held at most (points, logs, spans, samples and direct calls):
 * beyond, everything held is reduced with the clock as known (a live
 * session that never gets its WALL_CLOCK_TIME must not grow memory
 * without bound). */
#define RP_HELD_MAX ((size_t)1 << 20)

/* {====== the reducer ======} */

#define RP_MAX_ERRORS 20

struct el_rp_s {
  el_rp_opts_t o;
  char *names[11]; /* copies of o.names, same order */
  rp_heap_t heap;
  rp_time_t time;
  rp_prof_t *profs[RP_MAX_PROFILES];
  size_t nprofs;
  rp_logs_t logs;    /* messages and markers */
  rp_cols_t markers; /* markers per column: the charts' lines */
  uint64_t markers_total;
  rp_section_t *sections[RP_MAX_SECTIONS];
  size_t nsections;
  rp_thread_t *threads;
  size_t nthreads;
  uint64_t threads_total;
  rp_session_t session; /* the first session */
  uint64_t sessions;
  rp_span_t spans[RP_MAX_SESSIONS]; /* every session, by number */
  size_t nspans;
  uint64_t origin;       /* Unix ns of the first session's RTS start */
  uint64_t t_min, t_max; /* Unix ns of the records seen */
  el_rp_input_t in;      /* strings owned */
  struct {
    uint64_t offset;
    char *msg;
  } errors[RP_MAX_ERRORS];
  size_t nerrors;
  uint64_t errors_total;
  struct {
    uint64_t offset;  /* where the cut event starts */
    uint64_t session; /* the session cut (el.session.number; 0 unknown) */
    bool inside;      /* a new stream begins there: the input goes on */
    char *msg;
  } cuts[RP_MAX_ERRORS]; /* sessions ending inside an event */
  size_t ncuts;
  uint64_t cuts_total;
  uint64_t records[EL_TM_NSIGNALS]; /* records reduced, per signal */
  /* The current session's clock (el_rp_clock): the times records get
   * now are converted with it. Settled (or never told: the times are
   * final), records are reduced at once, else held. */
  uint64_t clk_session;
  uint64_t clk_start; /* its RTS start, Unix ns; 0 = no clock */
  bool clk_moves;     /* it may still move: hold */
  uint64_t clk_end_t; /* the session's largest eventlog time so far */
  rp_held_t *held, **held_tail;
  size_t nheld; /* records held */
  /* Earlier sessions that ended with a clock that was not settled, in
   * order, their records still held: each is placed to end where the
   * next one starts once a later session's clock settles (rp_clock.c). */
  rp_pending_t *pend;
  size_t npend, pend_cap;
  uint64_t held_overflow; /* times RP_HELD_MAX forced them out early */
  /* While a held entry is reduced (rp_clock.c release): the final RTS
   * start of its session, Unix ns (0: none, or nothing held is being
   * reduced). A cumulative point's start is that start, whatever the
   * clock it was emitted with: the processors keep a live session's first
   * estimate as the start of its sums while its times follow the
   * refined estimate (processors/init.lua ctx.start_unix), so moving the
   * start by the entry's offset, as its times are, would leave it where
   * an earlier estimate put it. */
  uint64_t held_start;
};

/* Unix time t moved by off ns (0 stays 0, unknown; never below 1). */
static inline uint64_t el__rp_shift(uint64_t t, int64_t off) {
  if (!t || !off) return t;
  if (off < 0 && (uint64_t)(-(off + 1)) + 1 >= t) return 1;
  return t + (uint64_t)off;
}

/* Reduce batch b (not freed), its times moved by off ns (rp_export.c). */
void el__rp_reduce(el_rp_t *rp, el_tm_signal_t sig, el_tm_batch_t *b,
                   int64_t off);
/* The exporter's entry: reduce b and free it, or hold it (ownership
 * taken either way). */
void el__rp_take_batch(el_rp_t *rp, el_tm_signal_t sig, el_tm_batch_t *b);
/* The report script's direct calls: reduced at once or held like a
 * batch (rp_lua.c). label: copied. point: line is the section's array.
 * Return 0 or EL_ENOMEM. */
int el__rp_take_census_begin(el_rp_t *rp, uint64_t t);
int el__rp_take_census_sample(el_rp_t *rp, uint64_t t, const char *label,
                              size_t len, double bytes);
int el__rp_take_point(el_rp_t *rp, size_t section, size_t line, uint64_t t,
                      double v);
/* Reduce everything held with the current clock (as final) and free it. */
void el__rp_release(el_rp_t *rp);
/* Free everything held, unreduced (el_rp_free). */
void el__rp_held_free(el_rp_t *rp);

/* Note t as a time seen (the page's range). */
static inline void el__rp_seen(el_rp_t *rp, uint64_t t) {
  if (!t) return;
  if (!rp->t_min || t < rp->t_min) rp->t_min = t;
  if (t > rp->t_max) rp->t_max = t;
}

/* Sections (rp_custom.c). */
int el__rp_section_series(el_rp_t *rp, const char *title, const char *unit,
                          const char *description);
int el__rp_section_table(el_rp_t *rp, const char *title,
                         const char *description);
void el__rp_section_free(rp_section_t *s);
void el__rp_thread_clear(rp_thread_t *t);
void el__rp_session_clear(rp_session_t *s);

/* {====== JSON ======} */

typedef struct rp_json_s {
  FILE *f;
  int depth;
  bool first[64]; /* no element written yet at this depth */
} rp_json_t;

void el__rp_json_init(rp_json_t *j, FILE *f);
void el__rp_json_obj(rp_json_t *j);     /* { */
void el__rp_json_arr(rp_json_t *j);     /* [ */
void el__rp_json_end_obj(rp_json_t *j); /* } */
void el__rp_json_end_arr(rp_json_t *j); /* ] */
void el__rp_json_key(rp_json_t *j, const char *k);
void el__rp_json_str(rp_json_t *j, const char *s);
void el__rp_json_strn(rp_json_t *j, const char *s, size_t n);
void el__rp_json_num(rp_json_t *j, double v); /* NaN, inf: null */
void el__rp_json_int(rp_json_t *j, int64_t v);
void el__rp_json_uint(rp_json_t *j, uint64_t v);
void el__rp_json_null(rp_json_t *j);
void el__rp_json_bool(rp_json_t *j, bool b);
/* Seconds with microsecond precision, fewest digits. */
void el__rp_json_secs(rp_json_t *j, double s);
/* Write s escaped for a JSON string, '<', '>' and '&' as \u escapes (so
 * the document can sit inside an HTML <script> element); invalid UTF-8
 * bytes become U+FFFD. */
void el__rp_json_escape(FILE *f, const char *s, size_t n);

#endif /* EL_RP_INTERNAL_H */
