/* web_internal.h: the state shared by the exporter side (web_model.c
 * dispatching to web_store.c and web_events.c) and the HTTP side
 * (web_http.c, rendering with web_prom.c and web_json.c; web_text.c and
 * web_naming.c are their text helpers). Everything below is guarded by
 * el_web_t.mu. */
#ifndef EL_WEB_INTERNAL_H
#define EL_WEB_INTERNAL_H

#include <pthread.h>

#include "../common/el_buf.h"
#include "../common/el_map.h"
#include "../control/httpd.h"
#include "web.h"

/* Bounds (docs/web.md "Limits"): beyond them the oldest entries go (rings;
 * a gauge series' points are thinned instead, keeping the peaks),
 * the least recently updated series of a full metric is forgotten, and
 * the youngest threads leave the table for its "other" row. */
#define WEB_POINTS_PER_SERIES 2000
#define WEB_SERIES_PER_METRIC 2000
#define WEB_FAMILIES_MAX 512
#define WEB_LOGS_MAX 500
/* eventlog-live's own log records (internal_log_message, the host
 * resource), kept apart from the program's: they are dated by the wall
 * clock, the program's by its eventlog (a replayed file's are of the
 * past), and a flood of either does not push the other out. */
#define WEB_HOST_LOGS_MAX 100
#define WEB_MARKERS_MAX 2000
#define WEB_PAUSES_MAX 2000
/* GC pauses that left the ring: the longest ones are kept besides. */
#define WEB_PAUSES_TOP 100
#define WEB_THREADS_MAX 500
/* Thread ids that left the table are remembered (2 bits each: WEB_TH_OUT,
 * _ENDED or _FINISHED), so that one that comes back is not counted twice
 * and a late label of an over one makes no row; for any
 * id of 0..2^32-1 (GHC's are 32-bit, numbered from 1 up), in pages of
 * WEB_THREAD_ID_PAGE ids (web_thids.c). A page whose ids all left
 * finished holds no bits (as the oldest pages of a long run become); at
 * most WEB_THREAD_ID_PAGES pages hold bits, and an id that would need
 * another is not remembered (counted in threads_other.unremembered). */
#define WEB_THREAD_ID_PAGE 65536u
#define WEB_THREAD_ID_PAGES 64
/* Labels kept by thread id, apart from the rows (a label may come before
 * the thread's first span, and a row that leaves the table alive and
 * comes back keeps it); a finished thread's label goes with its row.
 * More are dropped and counted. Open addressing over twice the slots. */
#define WEB_THREAD_LABELS 4096
#define WEB_THREAD_LABEL_SLOTS (2 * WEB_THREAD_LABELS)
/* A finished thread leaves the table this long (eventlog time, ms) after
 * the newest thread-state span seen. */
#define WEB_THREAD_FINISHED_KEEP_MS 30000.0
/* Capability-usage bins (from the CapabilityUsage spans): at most this
 * many, WEB_USAGE_BIN0_MS wide at first, merged pairwise as time goes. */
#define WEB_USAGE_BINS 1024
#define WEB_USAGE_BIN0_MS 50.0
/* Series of one metric in an /api/data answer: the most active ones, the
 * rest summed into "other" series (docs/web.md "Limits"). */
#define WEB_JSON_SERIES 50

typedef struct web_point_s {
  double t_ms; /* Unix ms */
  double v;
} web_point_t;

typedef struct web_series_s {
  char *key;        /* rendered Prometheus labels "{a="b"}" */
  char *attrs_json; /* point attributes as a JSON object */
  char *group_json; /* the same without user, thread and
                                 heapProfLabel: its "other" group */
  uint64_t hash;    /* el_hash_bytes of key */
  bool has;         /* a value was stored */
  bool is_int;
  int64_t ival;
  double dval;
  el_unix_ns_t t;   /* time of the stored value */
  uint64_t touched; /* w->tick when last updated (eviction) */
  web_point_t *pts; /* ring of npts of cap (view only) */
  size_t npts, head, cap;
  uint64_t pushed;  /* points ever put in the ring */
  uint32_t thinned; /* times a full gauge ring's time buckets doubled
                       (web_store.c; a sum's ring drops its oldest) */
  double bucket_ms; /* a gauge's bucket width; 0 until its ring fills */
  double origin_ms; /* where its buckets start, Unix ms */
  bool tail_raw;    /* its newest point is in no bucket yet */
  double start_ms;  /* a cumulative sum's first point: when its count
                       began (the point's start time: the program's
                       start), Unix ms; 0 = unknown or not a sum */
  char *plab;       /* its point labels, serialized (web_store.c) */
  size_t nplab;
  uint64_t session; /* eventlog session of its points (resource's) */
  bool stale;       /* a newer session has a series of this key: left
                       out of /metrics, the page ends it here */
} web_series_t;

typedef struct web_family_s {
  char *name; /* OTLP name */
  char *prom; /* Prometheus name (with _total) */
  char *help;
  char *unit;
  bool sum, monotonic, delta;
  web_series_t **s;
  size_t n, cap;
  el_map_t idx; /* el_hash_bytes(key) -> index in s */
} web_family_t;

typedef struct web_log_s {
  double t_ms;
  char *kind; /* attribute "kind" or "" */
  char *body;
  int severity;
  int64_t thread; /* -1 when absent */
} web_log_t;

/* The fill of a ring of log records: n of them from slot h (the
 * oldest). */
typedef struct web_logring_s {
  size_t n, h;
} web_logring_t;

typedef struct web_marker_s {
  double t_ms;
  char *body;
} web_marker_t;

/* The marks of a thread id that left the table (2 bits, one value): it
 * left alive, it left ended with its session or the input (its finish
 * not known), or it left finished (ThreadFinished). */
enum { WEB_TH_OUT = 1, WEB_TH_OUT_ENDED = 2, WEB_TH_OUT_FINISHED = 3 };

/* A page of marks: 2 bits for each of WEB_THREAD_ID_PAGE ids. */
typedef struct web_idpage_s {
  uint32_t marked;   /* ids with marks */
  uint32_t finished; /* ids marked WEB_TH_OUT_FINISHED */
  uint8_t bits[WEB_THREAD_ID_PAGE / 4];
} web_idpage_t;

/* The marks of the current session's thread ids (web_thids.c). dir has a
 * value per page number (id / WEB_THREAD_ID_PAGE), grown as ids come: 0
 * no marks, WEB_IDPAGE_FULL every id left finished, else 1 + the index
 * in pool. A zeroed one has no marks. */
#define WEB_IDPAGE_FULL UINT16_MAX
typedef struct web_thids_s {
  uint16_t *dir;
  size_t capdir;
  web_idpage_t *pool[WEB_THREAD_ID_PAGES]; /* NULL = free */
} web_thids_t;

typedef struct web_thread_s {
  int64_t id;
  char *label;       /* NULL until a ThreadLabel */
  const char *state; /* static: "Running", "Runnable", "Blocked",
                        "Finished", "Ended"; NULL = unknown */
  char *status;      /* why it last stopped, NULL = unknown */
  int64_t cap;       /* -1 = unknown */
  double t_ms;       /* when it entered state (span end) */
  double running_ms; /* Running span time seen (activity) */
  double first_ms;   /* start of its first span seen (0 = none): the
                        table keeps long-lived threads */
  uint64_t session;  /* eventlog session of the thread (its spans') */
  bool spans;        /* a thread-state span came for it; false: only its
                        label made the row (the traces processor
                        thread_state off), state and running time are
                        unknown (/api/data: null) */
} web_thread_t;

/* Threads that left the table (finished and aged, or the youngest when
 * it was full) and are not back in it: the page's summary row. */
typedef struct web_thread_other_s {
  /* distinct threads (but unremembered): all, those seen to finish
   * (ThreadFinished), those ended with their session or the input (their
   * finish not known: every one without thread_state) */
  uint64_t threads, finished, ended;
  uint64_t late_labels;    /* labels of over threads that had left */
  uint64_t dropped_labels; /* labels not kept: WEB_THREAD_LABELS full */
  /* times an id could not be remembered (WEB_THREAD_ID_PAGES in use, or
   * out of memory): each time, a thread that comes back may be counted
   * twice (or as finished) */
  uint64_t unremembered;
  /* thread records of a session after the next one began (not applied) */
  uint64_t late_session;
  double running_ms;
} web_thread_other_t;

/* Busy time per bin from the CapabilityUsage GC / Mutator spans, each
 * span credited to the bins it overlaps. */
typedef struct web_usage_s {
  double t0_ms, bin_ms; /* bin k covers t0 + [k, k+1) * bin_ms */
  size_t nbins;         /* bins in use (from t0) */
  double gc_ms[WEB_USAGE_BINS], mut_ms[WEB_USAGE_BINS];
  int64_t max_cap;     /* highest capability seen (0 at first) */
  double lo_ms, hi_ms; /* time covered by the spans */
  uint64_t clipped;    /* spans (parts) before t0, not credited */
} web_usage_t;

struct el_web_s {
  pthread_mutex_t mu;
  el_web_opts_t opts;
  char *service;
  bool view; /* keep the history for the page */
  int control_port;
  bool ended;
  /* the last session's input closed and the source waits for the next:
   * how, in a person's words ("" = not waiting); el_web_set_reconnecting */
  char closed_why[64];
  /* the newest header's producer: GHC before 9.2 (1), 9.2 or later (0),
   * no header yet (-1); el_web_set_producer */
  int ghc_before_9_2;
  el_ctl_httpd_t *prom_d, *view_d; /* the servers, NULL when off */
  int prom_port, view_port;
  /* metrics */
  web_family_t **fam;
  size_t nfam, capfam;
  uint64_t tick; /* points stored so far (series LRU clock) */
  /* the newest session whose metrics came, its resource labels
   * (serialized, web_store.c) */
  uint64_t key_session;
  char *key_rlab;
  size_t key_nrlab;
  /* logs, markers, threads, pauses (rings: head = oldest) */
  web_log_t logs[WEB_LOGS_MAX]; /* the program's records */
  web_logring_t rlogs;
  web_log_t host_logs[WEB_HOST_LOGS_MAX]; /* eventlog-live's own */
  web_logring_t rhost_logs;
  web_marker_t markers[WEB_MARKERS_MAX];
  size_t nmarkers, hmarkers;
  web_point_t pauses[WEB_PAUSES_MAX]; /* t_ms, duration ms */
  size_t npauses, hpauses;
  web_point_t pauses_top[WEB_PAUSES_TOP]; /* min-heap by duration of the
                                             longest that left the ring */
  size_t npauses_top;
  uint64_t pauses_forgotten; /* left the ring, not among the longest */
  web_thread_t *threads;
  size_t nthreads, capthreads;
  el_map_t thidx; /* thread id -> index in threads */
  web_thread_other_t thother;
  web_thids_t thids; /* ids of threads that left the table */
  struct {
    int64_t id;
    char *label;                   /* NULL = empty slot */
  } thlab[WEB_THREAD_LABEL_SLOTS]; /* the current session's labels */
  size_t nthlab;                   /* labels in thlab */
  double th_newest_ms;             /* newest thread-state span end */
  uint64_t th_spans;               /* thread-state spans received */
  uint64_t th_session; /* session of the indexed (current) threads */
  web_usage_t usage;
  /* counters */
  uint64_t batches, scrapes;
  uint64_t points; /* points received */
  /* points not stored: no family (over the limit of families) or out of
   * memory */
  uint64_t dropped_series;
  uint64_t evicted_series;       /* series a full family forgot */
  uint64_t evicted_stale_series; /* of those, the stale ones */
  /* series forgotten when re-keyed onto the key of another series of
   * their session */
  uint64_t merged_series;
  uint64_t rekeyed_series; /* series moved to a corrected resource */
};

/* {====== text (web_text.c) ======} */

enum { WEB_ESC_PROM, WEB_ESC_JSON, WEB_ESC_HELP };

/* Append s[0..n) escaped for a Prometheus label value (\\ \" \n), a
 * HELP text (\\ \n) or a JSON string body (mode WEB_ESC_*). Invalid
 * UTF-8 becomes U+FFFD (Prometheus refuses a scrape with invalid label
 * values). */
void web_put_esc(el_buf_t *b, const char *s, size_t n, int mode);
/* Append s[0..n) as a JSON string; s NULL appends null. */
void web_put_json_str(el_buf_t *b, const char *s, size_t n);
/* The NUL-terminated s as a JSON string, null when s is NULL. */
void web_put_json_cstr(el_buf_t *b, const char *s);
/* The shortest decimal that reads back as v into out (NaN, +Inf, -Inf
 * for Prometheus; null for JSON). */
void web_fmt_double(double v, char *out, size_t size, bool json);
/* Append v as a JSON number (null when not finite). */
void web_put_num(el_buf_t *b, double v);
/* Append the attribute's value as the collector stringifies it. */
void web_attr_value(const el_tm_attr_t *a, el_buf_t *b);
/* The wall clock in Unix ms. */
double web_now_ms(void);

/* {====== the store (web_store.c, web_events.c) ======} */

/* Consume one batch (exporter callback body). Locks w->mu. */
void web_model_consume(el_web_t *w, el_tm_signal_t sig, const el_tm_batch_t *b);
/* The metrics of one batch into the series store (web_store.c). Caller
 * holds w->mu. */
void web_store_metrics(el_web_t *w, const el_tm_batch_t *b);
/* Free the series store. */
void web_store_clear(el_web_t *w);
/* Logs (markers, thread labels) and spans (thread states, GC pauses,
 * capability usage) of one batch (web_events.c). Caller holds w->mu. */
void web_events_logs(el_web_t *w, const el_tm_batch_t *b);
void web_events_spans(el_web_t *w, const el_tm_batch_t *b);
/* The marks of thread id (0 if none); set them to m (0 forgets id):
 * false when they could not be (no page free, out of memory, or an id
 * out of 0..2^32-1), the marks then unchanged (web_thids.c). */
unsigned web_thids_get(const web_thids_t *s, int64_t id);
bool web_thids_set(web_thids_t *s, int64_t id, unsigned m);
/* Forget every mark and free the memory. */
void web_thids_clear(web_thids_t *s);
/* Pages of the pool in use (tests). */
size_t web_thids_pages(const web_thids_t *s);
/* The input ended (el_web_set_ended): every row not over becomes
 * "Ended", status "input ended (was <state>[: <status>])", as a newer
 * session ends the rows of the one before (docs/web.md "Sessions").
 * Caller holds w->mu. */
void web_events_end(el_web_t *w);
/* While the input waits for a reconnection (w->closed_why not ""):
 * every row not over becomes "Ended", status "<closed_why> (was
 * <state>[: <status>])" (el_web_set_reconnecting). Nothing otherwise.
 * Caller holds w->mu. */
void web_events_closed(el_web_t *w);
/* Free the logs, markers and threads. */
void web_events_clear(el_web_t *w);
/* Free every stored record (not the struct). */
void web_model_clear(el_web_t *w);
/* Render /metrics into out; openmetrics selects the OpenMetrics 1.0
 * format. Caller holds w->mu. */
void web_model_prom(el_web_t *w, bool openmetrics, el_buf_t *out);
/* Render /api/data (JSON, docs/web.md "/api/data") into out
 * (web_json.c). Caller holds w->mu. */
void web_model_json(el_web_t *w, el_buf_t *out);
/* The parts of /api/data after "metrics" (web_events.c): logs,
 * internal_logs, markers, gc_pauses, threads, threads_other, cap_usage. */
void web_json_events(const el_web_t *w, el_buf_t *b);

#endif /* EL_WEB_INTERNAL_H */
