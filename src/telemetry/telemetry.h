/* telemetry.h: the telemetry store that scripts fill and exporters drain.
 *
 * Data model: OpenTelemetry's (resource, instrumentation scope, metric with
 * data points, log record, span, profile sample). Emitting copies every
 * string and attribute: callers keep ownership of what they pass. Copies
 * are valid UTF-8 (each byte that does not start a valid sequence, and each
 * NUL byte, becomes U+FFFD), as OTLP requires and the C-string encoders can
 * carry. Emitting returns EL_ENOMEM, and counts the
 * record in stats.dropped, when memory or a window bound (el_tm_limits_t)
 * runs out. See docs/otlp.md for the mapping to OTLP.
 * Records accumulate in the store until el_tm_store_flush() closes the
 * current export window and hands one batch per signal to the exporters
 * registered with el_tm_store_add_exporter() (src/otlp/ implements them).
 *
 * Time: every timestamp here is Unix ns (el_unix_ns_t). The host converts
 * eventlog time (ns since RTS start) with el_ev_decoder_unix_ns().
 *
 * Thread: all functions run on the loop thread, except that exporters may
 * hand batches to their own threads (see otlp.h). */
#ifndef EL_TELEMETRY_H
#define EL_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../common/el_common.h"
#include "../common/el_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* {====== attributes ======} */

typedef enum {
  EL_TM_STR = 0,
  EL_TM_INT,
  EL_TM_DOUBLE,
  EL_TM_BOOL,
  EL_TM_STRLIST          /* array of strings (process.command_args) */
} el_tm_attr_type_t;

/* One attribute, borrowed from the caller for the duration of a call. */
typedef struct el_tm_attr_s {
  const char *key;       /* NUL-terminated */
  el_tm_attr_type_t type;
  union {
    el_strview_t s;      /* EL_TM_STR */
    int64_t i;           /* EL_TM_INT */
    double d;            /* EL_TM_DOUBLE */
    bool b;              /* EL_TM_BOOL */
    struct {             /* EL_TM_STRLIST */
      const el_strview_t *items;
      size_t n;
    } list;
  } v;
} el_tm_attr_t;

/* {====== the store ======} */

typedef enum {
  EL_TM_SIGNAL_METRICS = 0,
  EL_TM_SIGNAL_LOGS,
  EL_TM_SIGNAL_TRACES,
  EL_TM_SIGNAL_PROFILES,
  EL_TM_NSIGNALS
} el_tm_signal_t;

typedef struct el_tm_store_s el_tm_store_t;
typedef struct el_tm_batch_s el_tm_batch_t;   /* opaque; see batch API */

/* Create an empty store. scope_name/scope_version: the instrumentation
 * scope of every record (copied). Returns NULL when out of memory. */
el_tm_store_t *el_tm_store_new(const char *scope_name,
                               const char *scope_version);
/* Free the store and anything not yet flushed (counted as dropped). NULL
 * is allowed. Exporters are not freed by the store (their owner frees
 * them), except those registered with a release callback. */
void el_tm_store_free(el_tm_store_t *st);

/* Set (replace) one resource attribute for the main resource (the
 * observed program: service.name, process.pid, ...). Copied. Returns 0 or
 * EL_ENOMEM. Records emitted before the change keep the resource they were
 * emitted under. */
int el_tm_store_set_resource(el_tm_store_t *st, const el_tm_attr_t *attr);

/* Remove the main resource's attribute `key` (no-op when absent). Records
 * emitted before keep the resource they were emitted under. Returns 0,
 * EL_EINVAL (st or key NULL) or EL_ENOMEM (nothing changed). */
int el_tm_store_unset_resource(el_tm_store_t *st, const char *key);

/* Begin eventlog session `session` (the host's el.session.number, 1 for
 * the first header): the main resource keeps its attributes and carries
 * the number (el_tm_resource_t.session) from now on; records emitted
 * before keep theirs. The host calls it at each header, before the Lua
 * on_header hooks (which reset the process.* attributes). Returns 0,
 * EL_EINVAL (st NULL) or EL_ENOMEM (nothing changed). */
int el_tm_store_set_session(el_tm_store_t *st, uint64_t session);

/* {====== metrics ======} */

typedef enum { EL_TM_GAUGE = 0, EL_TM_SUM } el_tm_metric_kind_t;
typedef enum {
  EL_TM_TEMP_UNSPECIFIED = 0,
  EL_TM_TEMP_DELTA = 1,
  EL_TM_TEMP_CUMULATIVE = 2
} el_tm_temporality_t;

/* Describes a metric; strings borrowed for the call (copied/interned). */
typedef struct el_tm_metric_desc_s {
  const char *name;         /* e.g. "ghc_eventlog_HeapSize" */
  const char *description;  /* may be NULL */
  const char *unit;         /* UCUM, e.g. "By"; may be NULL */
  el_tm_metric_kind_t kind;
  el_tm_temporality_t temporality;  /* sums only */
  bool monotonic;                   /* sums only */
} el_tm_metric_desc_t;

/* One data point: what el_tm_metric_point takes and what a batch stores
 * (el_tm_batch_points). Given to el_tm_metric_point, attrs are borrowed
 * for the call; in a batch they point into the batch. */
typedef struct el_tm_point_s {
  const el_tm_attr_t *attrs; /* nattrs attributes; may be NULL */
  size_t nattrs;
  el_unix_ns_t start_unix_ns; /* 0 = unset */
  el_unix_ns_t time_unix_ns;  /* 0 = unknown */
  bool is_int;                /* ival when true, dval otherwise */
  int64_t ival;
  double dval;
} el_tm_point_t;

/* Add one data point of the metric desc (spec reference-behaviour.md §2).
 * pt: the point, everything copied: of ival and dval only the one is_int
 * selects is kept (the other is stored as 0); attrs NULL counts as none.
 * Returns 0, EL_EINVAL (st, desc, desc->name or pt NULL) or EL_ENOMEM
 * (the point is dropped and counted). */
int el_tm_metric_point(el_tm_store_t *st, const el_tm_metric_desc_t *desc,
                       const el_tm_point_t *pt);

/* Add one integer data point without attributes under the host's own
 * resource (service.name=eventlog-live-otelcol-for-<svc>, as host_log
 * records): the daemon's self-metrics (internal_event_count, ...).
 * Returns 0, EL_EINVAL (no store or name) or EL_ENOMEM (dropped and
 * counted). */
int el_tm_host_metric_point(el_tm_store_t *st, const el_tm_metric_desc_t *desc,
                            el_unix_ns_t start_unix_ns,
                            el_unix_ns_t time_unix_ns, int64_t ival);

/* {====== logs ======} */

/* Severity numbers per the OpenTelemetry logs data model. */
enum {
  EL_TM_SEV_TRACE = 1,
  EL_TM_SEV_DEBUG = 5,
  EL_TM_SEV_INFO = 9,
  EL_TM_SEV_WARN = 13,
  EL_TM_SEV_ERROR = 17,
  EL_TM_SEV_FATAL = 21
};

typedef struct el_tm_log_s {
  el_unix_ns_t time_unix_ns;          /* when it happened; 0 = unknown */
  el_unix_ns_t observed_unix_ns;      /* when we saw it; 0 = now */
  int severity_number;                /* EL_TM_SEV_* (1..24), 0 = unset */
  const char *severity_text;          /* may be NULL */
  el_strview_t body;                  /* string body */
  const el_tm_attr_t *attrs;
  size_t nattrs;
  const uint8_t *trace_id;            /* 16 bytes or NULL */
  const uint8_t *span_id;             /* 8 bytes or NULL */
  bool host_log;                      /* true: the host's own log, exported
                                         under the second resource
                                         service.name=eventlog-live-otelcol-for-<svc> */
} el_tm_log_t;

/* Add one log record (everything copied). Returns 0 or EL_ENOMEM. */
int el_tm_log(el_tm_store_t *st, const el_tm_log_t *rec);

/* {====== traces ======} */

typedef enum {
  EL_TM_SPAN_INTERNAL = 1,
  EL_TM_SPAN_SERVER = 2,
  EL_TM_SPAN_CLIENT = 3,
  EL_TM_SPAN_PRODUCER = 4,
  EL_TM_SPAN_CONSUMER = 5
} el_tm_span_kind_t;

typedef struct el_tm_span_s {
  uint8_t trace_id[16];
  uint8_t span_id[8];
  uint8_t parent_span_id[8];          /* all zero = root */
  const char *name;
  el_tm_span_kind_t kind;
  el_unix_ns_t start_unix_ns;
  el_unix_ns_t end_unix_ns;
  const el_tm_attr_t *attrs;
  size_t nattrs;
  int status_code;                    /* 0 unset, 1 ok, 2 error */
  /* The caller's promise: every attrs[i].key points to a string that
   * never changes and outlives the store (a string literal), so an
   * attribute array equal to one copied earlier is recognised by its
   * keys' addresses instead of their bytes. false: keys are compared byte
   * by byte. Never set in a stored record. */
  bool static_keys;
  /* With static_keys, the caller's name for its attribute array; {0, 0}
   * = none. The caller's promise: within one store, spans with equal
   * non-zero tags have equal attributes (the same key addresses, types
   * and values, in the same order), so a copy made earlier in the window
   * is found by the tag alone, without hashing or comparing the
   * attributes. One caller per store names arrays this way (the host's
   * native spans, src/host/ana_emit.c). With a tag, attrs may be NULL
   * (nattrs > 0): the copy of the tag is taken when the window holds one,
   * else el_tm_span returns -EAGAIN and the caller passes the attributes
   * (so it builds them only for a window's first span of the tag). Never
   * set in a stored record. */
  uint64_t attrs_tag[2];
} el_tm_span_t;

/* Add one finished span (copied; static_keys, attrs_tag: see the
 * fields). Returns 0, EL_ENOMEM (dropped and counted) or -EAGAIN (attrs
 * NULL under a tag the window holds no copy of: nothing kept or counted,
 * call again with the attributes). */
int el_tm_span(el_tm_store_t *st, const el_tm_span_t *span);

/* Fill buf with n random bytes for trace/span ids (never all zero). */
void el_tm_random_id(uint8_t *buf, size_t n);

/* el_tm_random_id(id, 8) inline (the same draws from el_rng, so the same
 * ids): one per native span. */
static inline void el_tm_random_span_id(uint8_t id[8]) {
  uint64_t r;
  do r = el_rng_next();
  while (r == 0);
  memcpy(id, &r, 8);
}

/* {====== profiles ======} */

/* One stack frame; strings borrowed for the call. */
typedef struct el_tm_frame_s {
  el_strview_t function;              /* function / cost-centre label */
  el_strview_t file;                  /* source file or module; may be empty */
  int64_t line;                       /* 0 = unknown */
  int64_t column;                     /* 0 = unknown */
} el_tm_frame_t;

typedef struct el_tm_profile_sample_s {
  const char *profile_kind;           /* groups samples into one profile,
                                         e.g. "cost_centre_stack_profile" */
  const char *sample_type;            /* e.g. "samples" / "cpu" */
  const char *sample_unit;            /* e.g. "count" / "nanoseconds" */
  const el_tm_frame_t *frames;        /* innermost first */
  size_t nframes;
  int64_t value;
  el_unix_ns_t time_unix_ns;
  const el_tm_attr_t *attrs;
  size_t nattrs;
} el_tm_profile_sample_t;

/* Add one profile sample (copied). Returns 0 or EL_ENOMEM. */
int el_tm_profile_sample(el_tm_store_t *st, const el_tm_profile_sample_t *s);

/* {====== export windows and exporters ======} */

/* An exporter consumes batches. export() takes ownership of the batch
 * (freed with el_tm_batch_free, possibly later on another thread) and must
 * not block the caller on the network. It returns 0 when it accepted the
 * batch (later losses are the exporter's to count with
 * el_tm_store_count_dropped), or a negative EL_E* code when it refused the
 * batch as a whole: the store then counts the batch's records as dropped.
 * flush() (may be NULL) waits up to timeout_ms for everything queued to be
 * sent and returns 0, or a negative code if something remained. */
typedef struct el_tm_exporter_s {
  const char *name;                   /* "otlp-grpc", "console", ... */
  void *ud;
  /* Signals this exporter wants (bit 1<<el_tm_signal_t). */
  unsigned signals;
  int (*export)(void *ud, el_tm_signal_t sig, el_tm_batch_t *batch);
  int (*flush)(void *ud, int timeout_ms);
  /* Optional: when set, el_tm_store_free calls release(ud) after its last
   * use of the exporter, handing ownership of ud to the store. */
  void (*release)(void *ud);
} el_tm_exporter_t;

/* Register an exporter (the struct is copied; ud stays the caller's).
 * A batch is given to every exporter that wants its signal (each gets its
 * own reference). Returns 0 or EL_ENOMEM. */
int el_tm_store_add_exporter(el_tm_store_t *st, const el_tm_exporter_t *ex);

/* Declare the exporter set complete (the daemon, once it registered its
 * exporters): from now on a record of a signal that no exporter takes is
 * counted in stats.emitted and discarded at once, as a flush with no
 * exporter for it would discard it, instead of being copied into a window
 * nothing reads. Such a record holds no memory, so no window bound
 * (el_tm_limits_t) drops it; one that is invalid (EL_EINVAL) is refused
 * as before. An exporter added later takes the records emitted after it.
 * Without this call every record is kept until the flush (tests add
 * exporters after emitting). st NULL: nothing. */
void el_tm_store_seal(el_tm_store_t *st);

/* Whether a record of sig emitted now would be kept for an exporter
 * (st not NULL): false only after el_tm_store_seal(), when no exporter
 * takes sig. A
 * caller may then skip building the record and count it with
 * el_tm_store_count_untaken() (the host's native spans do). */
bool el_tm_store_takes(const el_tm_store_t *st, el_tm_signal_t sig);

/* Count n records of sig that the caller did not build because
 * el_tm_store_takes(st, sig) was false: stats.emitted grows by n, as when
 * each is emitted and discarded. st NULL or sig out of range: nothing. */
void el_tm_store_count_untaken(el_tm_store_t *st, el_tm_signal_t sig,
                               uint64_t n);

/* The counter el_tm_store_count_untaken(st, sig, n) adds n to, for a
 * caller that counts many records without a call each: non-NULL only
 * when st is sealed and no exporter takes sig (el_tm_store_takes false,
 * which then stays so), valid while st lives; adding n to it is
 * el_tm_store_count_untaken(st, sig, n). NULL otherwise (st NULL, sig out
 * of range, not sealed, or taken). Thread: the emitting thread's, as
 * el_tm_store_count_untaken. */
uint64_t *el_tm_store_untaken_counter(el_tm_store_t *st, el_tm_signal_t sig);

/* Close the current window: for each signal with records, build one batch
 * and pass it to the exporters. Returns 0. */
int el_tm_store_flush(el_tm_store_t *st);

/* Close the current window as el_tm_store_flush does, but hand its
 * batches only to the exporter registered with ud (el_tm_exporter_t.ud):
 * the others never see them. The records count in stats.emitted as any
 * others; stats.batches does not grow. For a last sample after
 * el_tm_store_shutdown, meant for an exporter that still serves it (the
 * daemon's self-metrics on the web endpoints, which it goes on serving).
 * Returns 0, or EL_EINVAL (st NULL). */
int el_tm_store_flush_to(el_tm_store_t *st, const void *ud);

/* Flush, then ask every exporter to deliver what it holds within
 * timeout_ms. Used at end of input. Returns 0 or EL_EEXPORT if something
 * remained undelivered (counted as dropped). */
int el_tm_store_shutdown(el_tm_store_t *st, int timeout_ms);

/* Bounds on one export window, per signal. Records beyond either bound
 * are dropped (counted in stats.dropped) until the next flush. */
typedef struct el_tm_limits_s {
  size_t max_records;                 /* records per signal per window;
                                         default 1048576 */
  size_t max_bytes;                   /* bytes of copied strings and
                                         attributes per signal per window;
                                         default 256 MiB */
} el_tm_limits_t;
#define EL_TM_DEFAULT_MAX_RECORDS ((size_t)1 << 20)
#define EL_TM_DEFAULT_MAX_BYTES ((size_t)256 << 20)

/* Replace the window limits (0 in a field = keep the default). Takes
 * effect for the records emitted afterwards. Thread: loop. */
void el_tm_store_set_limits(el_tm_store_t *st, const el_tm_limits_t *lim);

/* Counters for --stats and tests. */
typedef struct el_tm_stats_s {
  uint64_t emitted[EL_TM_NSIGNALS];   /* records accepted */
  uint64_t dropped[EL_TM_NSIGNALS];   /* records dropped (memory, queues) */
  uint64_t batches[EL_TM_NSIGNALS];   /* batches handed to exporters */
} el_tm_stats_t;
const el_tm_stats_t *el_tm_store_stats(const el_tm_store_t *st);
/* Exporters report drops here (thread-safe). */
void el_tm_store_count_dropped(el_tm_store_t *st, el_tm_signal_t sig,
                               uint64_t n);

/* Batches are reference-counted and immutable once built; exporters read
 * them with the accessors declared in telemetry_batch.h. */
void el_tm_batch_ref(el_tm_batch_t *b);
void el_tm_batch_free(el_tm_batch_t *b);   /* drops one reference */
size_t el_tm_batch_count(const el_tm_batch_t *b);  /* records inside */

/* {====== the host's own logs ======} */

/* A queue of the host's own log messages (internal_log_message, spec
 * reference-behaviour.md §5.1.4): el_tm_hostlog_hook is an el_log hook
 * (el_log_set_hook(el_tm_hostlog_hook, q)) that may run on any thread;
 * el_tm_hostlog_drain moves what was queued into a store on the store's
 * thread as log records under the store's host resource. At most 256
 * messages wait between two drains; more are dropped, counted and told in
 * a WARN record at the next drain. */
typedef struct el_tm_hostlog_s el_tm_hostlog_t;

/* NULL when out of memory. Free with el_tm_hostlog_free (after removing
 * the hook). */
el_tm_hostlog_t *el_tm_hostlog_new(void);
void el_tm_hostlog_free(el_tm_hostlog_t *q);  /* q may be NULL */
/* The el_log hook: ud is the queue. msg copied. Thread: any. */
void el_tm_hostlog_hook(void *ud, el_log_level_t level, const char *msg);
/* Move the queued messages into st as records (st NULL: discard them).
 * Returns the number dropped since the last drain. Thread: st's. */
uint64_t el_tm_hostlog_drain(el_tm_hostlog_t *q, el_tm_store_t *st);

#ifdef __cplusplus
}
#endif
#endif /* EL_TELEMETRY_H */
