/* export_queue.c: the OTLP exporter: one bounded queue and one sender
 * thread per signal, retry with exponential backoff and jitter.
 *
 * Queues hold the store's batches (tm_export), which their sender
 * encodes when it takes them, off the loop thread, and serialized
 * requests (copies, el_otlp_exporter_submit). A queue is bounded in items
 * (queue_max_items) and in bytes (queue_max_bytes; a batch counts as its
 * encoder's estimate, el_otlp_encode_estimate, times the signal's
 * est_ratio: about its real size); pushing into a full
 * queue drops the oldest items first, and a request larger than the byte
 * bound on its own is dropped; both are counted (dropped_queue and
 * el_tm_store_count_dropped). The item being sent is out of its queue.
 * With flow control (el_otlp_exporter_set_flow, a recorded file) the
 * producer pauses at half the bounds and the sender wakes it at a quarter
 * (otlp.h); a queue then holds what the chunk of input at hand made
 * beyond its bounds instead of dropping it.
 *
 * Each signal's sender takes its queue's requests in order, so that one
 * signal's failing or slow endpoint (per-signal endpoints:
 * OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT) does not hold back the others,
 * and retries the request at hand until it succeeds, is refused for
 * good, or retry_max_elapsed_ms has passed since its first attempt (then
 * dropped_failed). Backoff: attempt k
 * waits a random time in [d/2, d], d = min(retry_max_ms, initial * 2^k),
 * unless the server asked for a delay (gRPC RetryInfo, HTTP Retry-After),
 * which is honoured as given, within the elapsed bound.
 *
 * Shutdown: el_otlp_exporter_flush waits for the queues to drain, bounded
 * by its timeout; el_otlp_exporter_free then sets the abort flag, which
 * wakes any backoff wait and makes the transport abandon the request in
 * flight within about 100 ms, joins the thread and counts what is left
 * (dropped_shutdown). Spec: reference-behaviour.md §7 (the reference drops
 * every failed batch; we retry), OTLP specification "Retrying". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export_queue.h"
#include "otlp_encode.h"
#include "otlp_plugin.h"

/* A queued item: a serialized request (batch NULL: bytes), or a store
 * batch its sender encodes into requests when it takes it (tm_export),
 * counted in the queue's bytes as its estimate times est_ratio. */
typedef struct xq_item_s {
  struct xq_item_s *next;
  size_t len;                 /* bytes of the request, or its weight */
  size_t nrecords;            /* records inside */
  el_tm_batch_t *batch;       /* owned; NULL: bytes[] is the request */
  size_t est;                 /* a batch: el_otlp_encode_estimate */
  uint8_t bytes[];            /* the serialized request */
} xq_item_t;

/* One request as sent: a queued one's bytes, or one just encoded. */
typedef struct {
  const uint8_t *bytes;
  size_t len;
  size_t nrecords;
} xq_req_t;

typedef struct {
  xq_item_t *head, *tail;
  size_t items;
  size_t bytes;
} xq_fifo_t;

/* The rate limit of one kind of message for one signal (log_limited). */
typedef struct {
  int64_t last_ms;      /* when the last one was said */
  uint64_t suppressed;  /* held back since */
  el_log_level_t level; /* the last held back, said at the end */
  char msg[512];
} xq_limit_t;

struct el_otlp_exporter_s {
  el_otlp_config_t cfg;                      /* copy: delivery settings */
  el_tm_store_t *store;                      /* drop reports; may be NULL */
  unsigned signals;                          /* handled signals bit set */
  el_xq_transport_t tr[EL_TM_NSIGNALS];      /* per handled signal */
  xq_fifo_t q[EL_TM_NSIGNALS];
  int busy;                                  /* requests being sent */
  bool stop;                                 /* sender must exit */
  bool stopped;                              /* el_otlp_exporter_stop ran */
  atomic_int abort;                          /* abandon the send now */
  pthread_mutex_t mu;
  pthread_cond_t wake; /* work, stop, abort (broadcast: every sender) */
  pthread_cond_t idle;                       /* queues empty, not busy */
  /* One sender per handled signal (sender_main), with its argument. */
  pthread_t thread[EL_TM_NSIGNALS];
  struct xq_sender_s {
    struct el_otlp_exporter_s *ex;
    el_tm_signal_t sig;
  } sender[EL_TM_NSIGNALS];
  bool thread_started;                       /* every sender started */
  unsigned seed;                             /* jitter (rand_r) */
  el_otlp_stats_t stats;                     /* under mu */
  /* Rate limit per kind of message and signal (log_limited): when the
   * last one was said, how many were held back since, the last of them. */
  xq_limit_t lim[4][EL_TM_NSIGNALS];
  /* The last failed attempt's message per signal, when no request of the
   * signal was delivered since (said at the end if records are dropped at
   * shutdown: a run shorter than the export timeout sees no other). */
  char last_fail[EL_TM_NSIGNALS][sizeof(((el_xq_result_t *)0)->msg)];
  /* Flow control (el_otlp_exporter_set_flow): the producer can wait. */
  el_otlp_flow_fn flow_fn; /* NULL: off */
  void *flow_ud;
  bool flow_armed; /* call flow_fn once */
  /* Per signal: its last request was dropped after its retries (the
   * endpoint did not answer usefully for RETRY_MAX_ELAPSED), no delivery
   * since. Its queue then neither pauses the producer nor keeps what is
   * over its bounds; the other signals' flow control goes on (h70). A
   * request refused as not retryable (400, INVALID_ARGUMENT) is one bad
   * request from a live endpoint: no failing. */
  bool failing[EL_TM_NSIGNALS];
  /* Per signal: serialized bytes over el_otlp_encode_estimate of the
   * requests last encoded (learn_ratio): a queued batch counts as its
   * estimate times this,
   * about its real size (the estimate is an upper bound, 2-3x; counted as
   * is, a queue held 3x fewer records: h83). EST_RATIO_START until one
   * was encoded. */
  double est_ratio[EL_TM_NSIGNALS];
  /* >= 0: the shutdown's flush ran out of this budget (tm_flush), the
   * cause of dropped_shutdown */
  int budget_ms;
};

enum { LOG_QUEUE = 0, LOG_FAILED, LOG_REJECTED, LOG_RETRY };
/* A signal's est_ratio before its first batch: a little above what
 * threads-big and oddball-hT make with every processor on (metrics
 * 0.40-0.48, logs 0.33-0.38, spans 0.45). */
#define EST_RATIO_START 0.5
#define LOG_INTERVAL_MS 5000

/* {====== response ======} */

int el__otlp_parse_response(el_tm_signal_t sig, const uint8_t *body, size_t len,
                            el_xq_result_t *res) {
  res->rejected = 0;
  if (len == 0) return 0;
  const ProtobufCMessageDescriptor *d = el_otlp_response_descriptor(sig);
  if (!d) return EL_EINVAL;
  ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, body);
  if (!m) return EL_ECORRUPT;
  /* Every Export<Signal>ServiceResponse has field 1 partial_success, a
   * message whose field 1 is the rejected count (int64) and field 2
   * error_message: read them through the descriptors. */
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field(d, 1);
  ProtobufCMessage *ps = f && f->type == PROTOBUF_C_TYPE_MESSAGE
                             ? *(ProtobufCMessage **)((char *)m + f->offset)
                             : NULL;
  if (ps) {
    const ProtobufCMessageDescriptor *pd = ps->descriptor;
    const ProtobufCFieldDescriptor *rf =
        protobuf_c_message_descriptor_get_field(pd, 1);
    const ProtobufCFieldDescriptor *mf =
        protobuf_c_message_descriptor_get_field(pd, 2);
    if (rf && rf->type == PROTOBUF_C_TYPE_INT64)
      res->rejected = *(int64_t *)((char *)ps + rf->offset);
    if (mf && mf->type == PROTOBUF_C_TYPE_STRING) {
      const char *msg = *(char **)((char *)ps + mf->offset);
      if (msg && *msg) snprintf(res->msg, sizeof res->msg, "%s", msg);
    }
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return 0;
}

int64_t el__otlp_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Log at most one message of a kind per LOG_INTERVAL_MS and signal (so
 * that one signal's messages never hide another's); the next one says how
 * many were suppressed, and so does el_otlp_exporter_stop for the ones
 * held back at the end (say_suppressed). Called with mu held; mu is
 * released while el_log runs, so a log hook may call back into the
 * exporter (e.g. export the host's own logs) without deadlock. */
static void log_limited(el_otlp_exporter_t *ex, int kind, el_tm_signal_t sig,
                        el_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void log_limited(el_otlp_exporter_t *ex, int kind, el_tm_signal_t sig,
                        el_log_level_t level, const char *fmt, ...) {
  if (!el_log_enabled(level)) return;
  int s = (unsigned)sig < EL_TM_NSIGNALS ? (int)sig : 0;
  xq_limit_t *l = &ex->lim[kind][s];
  int64_t now = el__otlp_now_ms();
  char msg[sizeof l->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (l->last_ms && now - l->last_ms < LOG_INTERVAL_MS) {
    l->suppressed++;
    l->level = level;
    memcpy(l->msg, msg, sizeof msg); /* said at the end if none follows */
    return;
  }
  uint64_t suppressed = l->suppressed;
  l->suppressed = 0;
  l->last_ms = now;
  pthread_mutex_unlock(&ex->mu);
  if (suppressed)
    el_log(level, "%s (%llu similar messages suppressed)", msg,
           (unsigned long long)suppressed);
  else
    el_log(level, "%s", msg);
  pthread_mutex_lock(&ex->mu);
}

/* At the end: the last message of each kind and signal that the rate
 * limit held back, with how many were. Called with mu held (released
 * while logging). */
static void say_suppressed(el_otlp_exporter_t *ex) {
  for (int k = 0; k < 4; k++) {
    for (int s = 0; s < EL_TM_NSIGNALS; s++) {
      xq_limit_t *l = &ex->lim[k][s];
      if (!l->suppressed) continue;
      /* a retry of a request that was given up at shutdown: the last
       * failure is said with the records dropped (el_otlp_exporter_stop) */
      if (k == LOG_RETRY && ex->stats.dropped_shutdown[s] &&
          ex->last_fail[s][0]) {
        l->suppressed = 0;
        continue;
      }
      uint64_t n = l->suppressed;
      char msg[sizeof l->msg];
      memcpy(msg, l->msg, sizeof msg);
      el_log_level_t level = l->level;
      l->suppressed = 0;
      pthread_mutex_unlock(&ex->mu);
      el_log(level, "%s (the last of %llu similar messages suppressed)", msg,
             (unsigned long long)n);
      pthread_mutex_lock(&ex->mu);
    }
  }
}

static void count_drop(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                       uint64_t *counter, size_t nrecords) {
  *counter += nrecords;
  if (ex->store && nrecords) el_tm_store_count_dropped(ex->store, sig,
                                                       nrecords);
}

/* {====== queue ======} */

static void item_free(xq_item_t *it) {
  if (!it) return;
  el_tm_batch_free(it->batch);
  el_free(it);
}

static xq_item_t *fifo_pop(xq_fifo_t *f) {
  xq_item_t *it = f->head;
  if (!it) return NULL;
  f->head = it->next;
  if (!f->head) f->tail = NULL;
  f->items--;
  f->bytes -= it->len;
  return it;
}

static void fifo_push(xq_fifo_t *f, xq_item_t *it) {
  it->next = NULL;
  if (f->tail) f->tail->next = it; else f->head = it;
  f->tail = it;
  f->items++;
  f->bytes += it->len;
}

/* Drop and count a queue-full loss of nrecords (mu held). */
static void drop_queued(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                        size_t nrecords) {
  count_drop(ex, sig, &ex->stats.dropped_queue[sig], nrecords);
  log_limited(ex, LOG_QUEUE, sig, EL_LOG_WARN,
              "OTLP %s export queue full (%zu items, %zu bytes): "
              "dropped %zu records",
              el_otlp_signal_name(sig), ex->cfg.queue_max_items,
              ex->cfg.queue_max_bytes, nrecords);
}

/* Queue it (mu held): dropped and counted when stopped, or when a request
 * is larger than the byte bound alone; otherwise the oldest items are
 * dropped and counted until it fits (not with flow control: see below);
 * a batch goes in even then, since its requests are cut to fit. */
static void enqueue(el_otlp_exporter_t *ex, el_tm_signal_t sig, xq_item_t *it) {
  xq_fifo_t *f = &ex->q[sig];
  size_t dropped = 0, len = it->len;
  if (ex->stop) {                              /* stopped: nobody sends */
    count_drop(ex, sig, &ex->stats.dropped_shutdown[sig], it->nrecords);
    item_free(it);
    return;
  }
  if (!it->batch && len > ex->cfg.queue_max_bytes) { /* can never fit */
    dropped = it->nrecords;
    item_free(it);
  } else {
    /* With flow control (and a collector that answers) the producer
     * pauses at half the bounds, after the chunk of input at hand: what
     * that chunk made beyond them is kept. */
    bool keep = ex->flow_fn && !ex->failing[sig];
    while (!keep && f->head &&
           (f->items + 1 > ex->cfg.queue_max_items ||
            f->bytes + len > ex->cfg.queue_max_bytes)) {
      xq_item_t *old = fifo_pop(f);
      dropped += old->nrecords;
      item_free(old);
    }
    fifo_push(f, it);
  }
  if (dropped) drop_queued(ex, sig, dropped);
  pthread_cond_broadcast(&ex->wake);
}

int el_otlp_exporter_submit(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                            const uint8_t *bytes, size_t len, size_t nrecords) {
  if ((unsigned)sig >= EL_TM_NSIGNALS || !(ex->signals & (1u << sig)))
    return EL_EINVAL;
  xq_item_t *it = el_malloc(sizeof *it + len);
  pthread_mutex_lock(&ex->mu);
  if (!it) {
    count_drop(ex, sig, &ex->stats.dropped_queue[sig], nrecords);
    pthread_mutex_unlock(&ex->mu);
    return EL_ENOMEM;
  }
  it->len = len;
  it->nrecords = nrecords;
  it->batch = NULL;
  memcpy(it->bytes, bytes, len);
  enqueue(ex, sig, it);
  pthread_mutex_unlock(&ex->mu);
  return 0;
}

static bool queues_empty(const el_otlp_exporter_t *ex) {
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    if (ex->q[s].head) return false;
  return true;
}

/* {====== flow control ======} */

/* Some queue of a signal not failing holds at least half its bound of
 * requests or bytes; mu held. */
static bool above_high(const el_otlp_exporter_t *ex) {
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    if (!ex->failing[s] && (ex->q[s].items * 2 >= ex->cfg.queue_max_items ||
                            ex->q[s].bytes * 2 >= ex->cfg.queue_max_bytes))
      return true;
  return false;
}

/* Every queue of a signal not failing holds at most a quarter of its
 * bounds; mu held. */
static bool below_low(const el_otlp_exporter_t *ex) {
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    if (!ex->failing[s] && (ex->q[s].items * 4 > ex->cfg.queue_max_items ||
                            ex->q[s].bytes * 4 > ex->cfg.queue_max_bytes))
      return false;
  return true;
}

/* Tell a paused producer it may go on, once; mu held. */
static void flow_check(el_otlp_exporter_t *ex) {
  if (ex->flow_armed && below_low(ex)) {
    ex->flow_armed = false;
    ex->flow_fn(ex->flow_ud);
  }
}

void el_otlp_exporter_set_flow(el_otlp_exporter_t *ex, el_otlp_flow_fn fn,
                               void *ud) {
  pthread_mutex_lock(&ex->mu);
  ex->flow_fn = fn;
  ex->flow_ud = ud;
  ex->flow_armed = false;
  pthread_mutex_unlock(&ex->mu);
}

int el_otlp_exporter_should_pause(el_otlp_exporter_t *ex) {
  pthread_mutex_lock(&ex->mu);
  bool pause = ex->flow_fn && !ex->stop && above_high(ex);
  if (pause) ex->flow_armed = true;
  pthread_mutex_unlock(&ex->mu);
  return pause;
}

int el_otlp_exporter_may_resume(el_otlp_exporter_t *ex) {
  pthread_mutex_lock(&ex->mu);
  bool go = !ex->flow_fn || ex->stop || below_low(ex);
  ex->flow_armed = !go && ex->flow_fn;
  pthread_mutex_unlock(&ex->mu);
  return go;
}

/* {====== sender ======} */

/* Wait ms or until abort; mu held. Returns false when aborted. */
static bool wait_abortable(el_otlp_exporter_t *ex, int64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  while (!atomic_load(&ex->abort)) {
    if (pthread_cond_timedwait(&ex->wake, &ex->mu, &ts) == ETIMEDOUT) break;
  }
  return !atomic_load(&ex->abort);
}

/* Backoff before retry number attempt (1-based), with jitter. */
static int64_t backoff_ms(el_otlp_exporter_t *ex, int attempt) {
  int64_t d = ex->cfg.retry_initial_ms;
  for (int k = 1; k < attempt && d < ex->cfg.retry_max_ms; k++) d *= 2;
  if (d > ex->cfg.retry_max_ms) d = ex->cfg.retry_max_ms;
  int64_t half = d / 2;
  return half + (half > 0 ? rand_r(&ex->seed) % (half + 1) : 0);
}

static void on_ok(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                  const xq_req_t *it, const el_xq_result_t *res) {
  ex->failing[sig] = false;
  ex->last_fail[sig][0] = '\0';
  ex->stats.requests[sig]++;
  ex->stats.records[sig] += it->nrecords;
  ex->stats.bytes[sig] += it->len;
  if (res->rejected > 0) {
    /* A receiver's count past the request's records (h70: 1000000 of 78)
     * is taken as all of them, and its own figure said. */
    char said[64] = "";
    int64_t rej = res->rejected;
    if ((uint64_t)rej > it->nrecords) {
      snprintf(said, sizeof said, " (it said %lld)", (long long)rej);
      rej = (int64_t)it->nrecords;
    }
    ex->stats.rejected[sig] += (uint64_t)rej;
    log_limited(ex, LOG_REJECTED, sig, EL_LOG_WARN,
                "OTLP %s export: the receiver rejected %lld of %zu "
                "records%s: %s",
                el_otlp_signal_name(sig), (long long)rej, it->nrecords, said,
                res->msg);
  } else if (res->msg[0]) {
    /* Delivered, but the answer was not a clean success: a warning in
     * partial_success (OTLP: rejected 0 with a message), or a 2xx body
     * that is no Export response (not an OTLP receiver?). */
    log_limited(ex, LOG_REJECTED, sig, EL_LOG_WARN,
                "OTLP %s export: delivered %zu records, but: %s",
                el_otlp_signal_name(sig), it->nrecords, res->msg);
  }
}

/* Deliver one request (mu held on entry and exit; released while
 * sending). */
static void deliver(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                    const xq_req_t *it) {
  int64_t start = el__otlp_now_ms();
  el_xq_transport_t *tr = &ex->tr[sig];
  const char *sname = el_otlp_signal_name(sig);
  for (int attempt = 1;; attempt++) {
    if (atomic_load(&ex->abort)) break;
    el_xq_result_t res = {EL_XQ_DROP, -1, 0, ""};
    pthread_mutex_unlock(&ex->mu);
    tr->send(tr->ud, sig, it->bytes, it->len, &ex->abort, &res);
    pthread_mutex_lock(&ex->mu);
    if (res.verdict == EL_XQ_OK) {     /* delivered, even if aborting now */
      on_ok(ex, sig, it, &res);
      return;
    }
    /* An attempt cut by the shutdown keeps the failure before it, if
     * any, as the last one (h70: HTTP said "Callback aborted") */
    bool aborted = atomic_load(&ex->abort);
    if (res.msg[0] && !(aborted && ex->last_fail[sig][0]))
      memcpy(ex->last_fail[sig], res.msg, sizeof res.msg);
    if (aborted) break;
    if (res.verdict == EL_XQ_DROP) {
      count_drop(ex, sig, &ex->stats.dropped_failed[sig], it->nrecords);
      log_limited(ex, LOG_FAILED, sig, EL_LOG_ERROR,
                  "OTLP %s export over %s failed (not retryable), dropped "
                  "%zu records: %s",
                  sname, tr->name, it->nrecords, res.msg);
      return;
    }
    int64_t delay = res.retry_after_ms >= 0 ? res.retry_after_ms
                                            : backoff_ms(ex, attempt);
    int64_t now = el__otlp_now_ms();
    if (now + delay - start > ex->cfg.retry_max_elapsed_ms) {
      ex->failing[sig] = true;
      count_drop(ex, sig, &ex->stats.dropped_failed[sig], it->nrecords);
      /* the server's own delay (Retry-After, RetryInfo) past the bound
       * is worth naming: no retry was even tried (h59) */
      char why[160] = "";
      if (res.retry_after_ms >= 0)
        snprintf(why, sizeof why,
                 " (the receiver asked to retry in %lld ms, past the "
                 "retry bound of %d ms, EL_OTLP_RETRY_MAX_ELAPSED)",
                 (long long)res.retry_after_ms, ex->cfg.retry_max_elapsed_ms);
      log_limited(ex, LOG_FAILED, sig, EL_LOG_ERROR,
                  "OTLP %s export over %s failed after %d attempts in %lld "
                  "ms, dropped %zu records: %s%s",
                  sname, tr->name, attempt, (long long)(now - start),
                  it->nrecords, res.msg, why);
      return;
    }
    ex->stats.retries[sig]++;
    log_limited(ex, LOG_RETRY, sig, EL_LOG_WARN,
                "OTLP %s export over %s failed, retrying in %lld ms: %s", sname,
                tr->name, (long long)delay, res.msg);
    if (!wait_abortable(ex, delay)) break;
  }
  count_drop(ex, sig, &ex->stats.dropped_shutdown[sig], it->nrecords);
}

/* el_otlp_encode's emit on the sender thread: the request is delivered
 * at once, retries included (bytes are valid during the call only);
 * encoding stops once the exporter aborts. */
typedef struct {
  el_otlp_exporter_t *ex;
  el_tm_signal_t sig;
  size_t records; /* records emitted so far */
  size_t bytes;   /* and their requests' bytes */
  size_t total;   /* the batch's records */
  size_t est;     /* and its el_otlp_encode_estimate */
} emit_ctx_t;

/* The signal's est_ratio from the requests emitted so far (mu held): their
 * bytes over their share of the batch's estimate. Learnt from a batch's
 * first request, so the batches queued while it is sent weigh right. */
static void learn_ratio(el_otlp_exporter_t *ex, const emit_ctx_t *c) {
  if (!c->est || !c->total || !c->records || !c->bytes) return;
  double e = (double)c->est * (double)c->records / (double)c->total;
  double r = (double)c->bytes / e;
  ex->est_ratio[c->sig] = r < 0.01 ? 0.01 : r > 1.0 ? 1.0 : r;
}

static int emit_request(void *ud, const uint8_t *bytes, size_t len,
                        size_t nrecords) {
  emit_ctx_t *c = ud;
  el_otlp_exporter_t *ex = c->ex;
  if (atomic_load(&ex->abort)) return -ECANCELED;
  c->records += nrecords;
  c->bytes += len;
  xq_req_t rq = {bytes, len, nrecords};
  pthread_mutex_lock(&ex->mu);
  learn_ratio(ex, c);
  /* larger than the queue's byte bound alone: dropped as a submitted one
   * would be (enqueue) */
  if (len > ex->cfg.queue_max_bytes)
    drop_queued(ex, c->sig, nrecords);
  else
    deliver(ex, c->sig, &rq);
  pthread_mutex_unlock(&ex->mu);
  return 0;
}

/* Encode a queued batch into requests of at most max_message_bytes and
 * deliver each in turn (mu held on entry and exit, released meanwhile).
 * Records too large for a request alone are dropped_size; those left
 * unsent when encoding stops are dropped_shutdown (the exporter aborted)
 * or dropped_failed (encoding failed: out of memory). */
static void send_batch(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                       const xq_item_t *it) {
  size_t total = it->nrecords;
  emit_ctx_t c = {ex, sig, 0, 0, total, it->est};
  pthread_mutex_unlock(&ex->mu);
  int rc = el_otlp_encode(sig, it->batch, ex->cfg.max_message_bytes,
                          emit_request, &c);
  pthread_mutex_lock(&ex->mu);
  if (rc > 0) {
    count_drop(ex, sig, &ex->stats.dropped_size[sig], (size_t)rc);
    log_limited(ex, LOG_FAILED, sig, EL_LOG_WARN,
                "OTLP %s export: %d records larger than %zu bytes dropped",
                el_otlp_signal_name(sig), rc, ex->cfg.max_message_bytes);
  } else if (rc == -ECANCELED && total > c.records) {
    count_drop(ex, sig, &ex->stats.dropped_shutdown[sig], total - c.records);
  } else if (rc < 0 && total > c.records) {
    count_drop(ex, sig, &ex->stats.dropped_failed[sig], total - c.records);
    log_limited(ex, LOG_FAILED, sig, EL_LOG_ERROR,
                "OTLP %s export: encoding failed (%s), dropped %zu records",
                el_otlp_signal_name(sig), el_strerror(rc), total - c.records);
  }
}

/* The sender of one signal (arg: its struct xq_sender_s): its queue's
 * items in order, each request delivered or given up before the next; a
 * batch is encoded here, off the loop thread, and its requests delivered
 * as they are made. */
static void *sender_main(void *arg) {
  const struct xq_sender_s *sd = arg;
  el_otlp_exporter_t *ex = sd->ex;
  pthread_mutex_lock(&ex->mu);
  while (!ex->stop) {
    xq_item_t *it = fifo_pop(&ex->q[sd->sig]);
    if (!it) {
      pthread_cond_broadcast(&ex->idle);
      pthread_cond_wait(&ex->wake, &ex->mu);
      continue;
    }
    ex->busy++;
    flow_check(ex);
    if (it->batch) {
      send_batch(ex, sd->sig, it);
    } else {
      xq_req_t rq = {it->bytes, it->len, it->nrecords};
      deliver(ex, sd->sig, &rq);
    }
    ex->busy--;
    pthread_mutex_unlock(&ex->mu);
    item_free(it); /* a batch's memory, off the lock */
    pthread_mutex_lock(&ex->mu);
    flow_check(ex);
  }
  pthread_cond_broadcast(&ex->idle);
  pthread_mutex_unlock(&ex->mu);
  return NULL;
}

/* {====== exporter ======} */

/* el_tm_exporter_t.export: queue the batch for its signal's sender,
 * which encodes it (send_batch), and return. In the queue's byte bound
 * it counts as the encoder's estimate of its requests' size
 * (el_otlp_encode_estimate, an upper bound) times the signal's est_ratio:
 * about the bytes it will make. */
static int tm_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *batch) {
  el_otlp_exporter_t *ex = ud;
  size_t total = el_tm_batch_count(batch);
  if ((unsigned)sig >= EL_TM_NSIGNALS || !(ex->signals & (1u << sig)) ||
      !total) {
    el_tm_batch_free(batch);
    return 0;
  }
  size_t est = el_otlp_encode_estimate(batch);
  xq_item_t *it = el_malloc(sizeof *it);
  pthread_mutex_lock(&ex->mu);
  if (!it) {
    count_drop(ex, sig, &ex->stats.dropped_queue[sig], total);
    pthread_mutex_unlock(&ex->mu);
    el_tm_batch_free(batch);
    return 0;
  }
  *it = (xq_item_t){.len = (size_t)((double)est * ex->est_ratio[sig]) + 1,
                    .nrecords = total,
                    .batch = batch,
                    .est = est};
  enqueue(ex, sig, it);
  pthread_mutex_unlock(&ex->mu);
  return 0;
}

int el_otlp_exporter_flush(el_otlp_exporter_t *ex, int timeout_ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (timeout_ms >= 0) {
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
  }
  pthread_mutex_lock(&ex->mu);
  while ((ex->busy || !queues_empty(ex)) && ex->thread_started &&
         !ex->stop) {
    int rc = timeout_ms >= 0
                 ? pthread_cond_timedwait(&ex->idle, &ex->mu, &ts)
                 : pthread_cond_wait(&ex->idle, &ex->mu);
    if (rc == ETIMEDOUT) break;
  }
  bool left = ex->busy || !queues_empty(ex);
  pthread_mutex_unlock(&ex->mu);
  return left ? EL_EEXPORT : 0;
}

/* The store's flush at shutdown (el_tm_store_shutdown): EL_EEXPORT when
 * records are left in the queues after timeout_ms, and also when any was
 * dropped or rejected before (a collector refusing every request leaves
 * empty queues): the caller says "some telemetry could not be
 * delivered" (docs/exit-codes.md "export losses"). */
static int tm_flush(void *ud, int timeout_ms) {
  el_otlp_exporter_t *ex = ud;
  int rc = el_otlp_exporter_flush(ex, timeout_ms);
  if (rc < 0) { /* the budget ran out: what is left is given up now, and
                   said with its cause (el_otlp_exporter_stop) */
    pthread_mutex_lock(&ex->mu);
    ex->budget_ms = timeout_ms > 0 ? timeout_ms : 0;
    pthread_mutex_unlock(&ex->mu);
    el_otlp_exporter_stop(ex);
  }
  el_otlp_stats_t s;
  el_otlp_exporter_stats(ex, &s);
  for (int i = 0; i < EL_TM_NSIGNALS; i++)
    if (s.dropped_queue[i] || s.dropped_failed[i] || s.dropped_shutdown[i] ||
        s.dropped_size[i] || s.rejected[i])
      rc = EL_EEXPORT;
  return rc;
}

void el_otlp_exporter_stats(el_otlp_exporter_t *ex, el_otlp_stats_t *out) {
  pthread_mutex_lock(&ex->mu);
  *out = ex->stats;
  pthread_mutex_unlock(&ex->mu);
}

void el_otlp_exporter_log_stats(el_otlp_exporter_t *ex) {
  el_otlp_stats_t s;
  el_otlp_exporter_stats(ex, &s);
  for (int i = 0; i < EL_TM_NSIGNALS; i++) {
    uint64_t dropped = s.dropped_queue[i] + s.dropped_failed[i] +
                       s.dropped_shutdown[i] + s.dropped_size[i];
    if (!s.requests[i] && !dropped && !s.retries[i]) continue;
    el_log(dropped || s.rejected[i] ? EL_LOG_WARN : EL_LOG_INFO,
           "OTLP %s export: %llu records in %llu requests (%llu bytes), "
           "%llu retries, %llu rejected by the receiver, dropped: %llu "
           "queue full, %llu failed, %llu at shutdown, %llu too large",
           el_otlp_signal_name((el_tm_signal_t)i),
           (unsigned long long)s.records[i],
           (unsigned long long)s.requests[i], (unsigned long long)s.bytes[i],
           (unsigned long long)s.retries[i],
           (unsigned long long)s.rejected[i],
           (unsigned long long)s.dropped_queue[i],
           (unsigned long long)s.dropped_failed[i],
           (unsigned long long)s.dropped_shutdown[i],
           (unsigned long long)s.dropped_size[i]);
  }
}

void el_otlp_exporter_stop(el_otlp_exporter_t *ex) {
  pthread_mutex_lock(&ex->mu);
  bool join = ex->thread_started && !ex->stop;
  ex->stop = true;
  atomic_store(&ex->abort, 1);
  for (int s = 0; join && s < EL_TM_NSIGNALS; s++) /* a send on its peer */
    if ((ex->signals & (1u << s)) && ex->tr[s].wake)
      ex->tr[s].wake(ex->tr[s].ud); /* once: the first stop */
  if (ex->flow_armed) { /* a paused producer goes on */
    ex->flow_armed = false;
    ex->flow_fn(ex->flow_ud);
  }
  pthread_cond_broadcast(&ex->wake);
  pthread_mutex_unlock(&ex->mu);
  for (int s = 0; join && s < EL_TM_NSIGNALS; s++)
    if (ex->signals & (1u << s)) pthread_join(ex->thread[s], NULL);
  pthread_mutex_lock(&ex->mu);
  bool had_items = false;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    xq_item_t *it;
    while ((it = fifo_pop(&ex->q[s])) != NULL) {
      count_drop(ex, (el_tm_signal_t)s, &ex->stats.dropped_shutdown[s],
                 it->nrecords);
      item_free(it);
      had_items = true;
    }
  }
  bool first = !ex->stopped;
  ex->stopped = true;
  say_suppressed(ex);
  for (int s = 0; first && s < EL_TM_NSIGNALS; s++) {
    if (!ex->stats.dropped_shutdown[s] ||
        (!ex->last_fail[s][0] && ex->budget_ms < 0))
      continue;
    char msg[sizeof ex->last_fail[s]], cause[96] = "";
    memcpy(msg, ex->last_fail[s], sizeof msg);
    if (ex->budget_ms >= 0)
      snprintf(cause, sizeof cause,
               ": the shutdown budget of %d ms (--otlp-shutdown-timeout) "
               "ran out",
               ex->budget_ms);
    uint64_t n = ex->stats.dropped_shutdown[s];
    el_tm_signal_t sig = (el_tm_signal_t)s;
    pthread_mutex_unlock(&ex->mu);
    el_log(EL_LOG_WARN, "OTLP %s export: %llu %s dropped at shutdown%s%s%s",
           el_otlp_signal_name(sig), (unsigned long long)n,
           el_otlp_record_name(sig), cause,
           msg[0] ? "; the last failure: " : "", msg);
    pthread_mutex_lock(&ex->mu);
  }
  pthread_mutex_unlock(&ex->mu);
  if (first || had_items) el_otlp_exporter_log_stats(ex);
}

void el_otlp_exporter_free(el_otlp_exporter_t *ex) {
  if (!ex) return;
  el_otlp_exporter_stop(ex);
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    if (ex->tr[s].free) ex->tr[s].free(ex->tr[s].ud);
  pthread_cond_destroy(&ex->wake);
  pthread_cond_destroy(&ex->idle);
  pthread_mutex_destroy(&ex->mu);
  el_free(ex);
}

static int init_sync(el_otlp_exporter_t *ex) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca)) return EL_ENOMEM;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_mutex_init(&ex->mu, NULL);
  if (!rc) rc = pthread_cond_init(&ex->wake, &ca);
  if (!rc) rc = pthread_cond_init(&ex->idle, &ca);
  pthread_condattr_destroy(&ca);
  return rc ? -rc : 0;
}

/* Allocate the exporter with its delivery settings (no transports). */
static int exporter_alloc(const el_otlp_config_t *cfg, el_tm_store_t *st,
                          el_otlp_exporter_t **out) {
  el_otlp_exporter_t *ex = el_calloc(1, sizeof *ex);
  *out = NULL;
  if (!ex) return EL_ENOMEM;
  /* Only the scalar delivery settings are used from the copy. */
  ex->cfg = *cfg;
  memset(ex->cfg.sig, 0, sizeof ex->cfg.sig);
  ex->cfg.service_name = NULL;
  ex->cfg.resource = NULL;
  ex->cfg.nresource = 0;
  ex->store = st;
  ex->budget_ms = -1;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) ex->est_ratio[s] = EST_RATIO_START;
  ex->seed = (unsigned)el__otlp_now_ms() ^ (unsigned)(uintptr_t)ex;
  atomic_init(&ex->abort, 0);
  int rc = init_sync(ex);
  if (rc < 0) {
    el_free(ex);
    return rc;
  }
  *out = ex;
  return 0;
}

/* Start the senders (one per handled signal) and fill *tm; frees ex on
 * failure (the senders started are stopped and joined). */
static int exporter_start(el_otlp_exporter_t *ex, el_otlp_exporter_t **out,
                          el_tm_exporter_t *tm) {
  int rc = 0;
  unsigned started = 0;
  for (int s = 0; s < EL_TM_NSIGNALS && rc == 0; s++) {
    if (!(ex->signals & (1u << s))) continue;
    ex->sender[s] = (struct xq_sender_s){ex, (el_tm_signal_t)s};
    rc = -pthread_create(&ex->thread[s], NULL, sender_main, &ex->sender[s]);
    if (rc == 0) {
      started |= 1u << s;
      /* "otlp-metrics" ...: what top -H and /proc/PID/task/TID/comm show
       * (at most 15 bytes; a failure only leaves the program's name) */
      char name[16];
      snprintf(name, sizeof name, "otlp-%s",
               el_otlp_signal_name((el_tm_signal_t)s));
      pthread_setname_np(ex->thread[s], name);
    }
  }
  if (rc < 0) {
    ex->signals = started; /* el_otlp_exporter_stop joins these */
    ex->thread_started = started != 0;
    el_otlp_exporter_free(ex);
    return rc;
  }
  ex->thread_started = true;
  *out = ex;
  if (tm) {
    memset(tm, 0, sizeof *tm);
    tm->name = "otlp";
    tm->ud = ex;
    tm->signals = ex->signals;
    tm->export = tm_export;
    tm->flush = tm_flush;
  }
  return 0;
}

/* Create the transport of signal sig with the plugin of its protocol.
 * Returns what the transport's constructor returns, or EL_ECONFIG (logged,
 * naming the plugin file) when the plugin cannot be loaded. */
static int transport_new(const el_otlp_signal_cfg_t *sc, el_tm_signal_t sig,
                         el_xq_transport_t *out) {
  char err[1024];
  const el_otlp_transport_plugin_t *p =
      sc->protocol == EL_OTLP_GRPC ? el__otlp_grpc_plugin(err, sizeof err)
                                   : el__otlp_http_plugin(err, sizeof err);
  if (!p) {
    el_log(EL_LOG_ERROR, "%s", err);
    return EL_ECONFIG;
  }
  return p->transport_new(sc, sig, out);
}

int el_otlp_exporter_new(const el_otlp_config_t *cfg, unsigned signals,
                         el_tm_store_t *st, el_otlp_exporter_t **out,
                         el_tm_exporter_t *tm) {
  el_otlp_exporter_t *ex;
  *out = NULL;
  int rc = exporter_alloc(cfg, st, &ex);
  if (rc < 0) return rc;
  for (int s = 0; s < EL_TM_NSIGNALS && rc == 0; s++) {
    const el_otlp_signal_cfg_t *sc = &cfg->sig[s];
    if (!(signals & (1u << s)) || sc->exporter != EL_OTLP_EXP_OTLP) continue;
    rc = transport_new(sc, (el_tm_signal_t)s, &ex->tr[s]);
    if (rc == 0) ex->signals |= 1u << s;
  }
  if (rc < 0) {
    el_otlp_exporter_free(ex);
    return rc;
  }
  return exporter_start(ex, out, tm);
}

int el__otlp_exporter_new_with(const el_otlp_config_t *cfg,
                               const el_xq_transport_t *tr, unsigned signals,
                               el_tm_store_t *st, el_otlp_exporter_t **out,
                               el_tm_exporter_t *tm) {
  el_otlp_exporter_t *ex;
  *out = NULL;
  int rc = exporter_alloc(cfg, st, &ex);
  if (rc < 0) {
    for (int s = 0; s < EL_TM_NSIGNALS; s++)
      if ((signals & (1u << s)) && tr[s].free) tr[s].free(tr[s].ud);
    return rc;
  }
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    if (!(signals & (1u << s))) continue;
    ex->tr[s] = tr[s];
    ex->signals |= 1u << s;
  }
  return exporter_start(ex, out, tm);
}
