/* export_queue.h: module-private interface between the OTLP exporter's
 * bounded queues and sender thread (export_queue.c) and its transports
 * (exp_grpc.c, exp_http.c).
 *
 * Each transport sends one serialized Export<Signal>ServiceRequest and
 * classifies the outcome with its own predicate (OK / RETRY / DROP,
 * commented there with the OTLP specification's rules). The sender thread
 * retries RETRY with exponential backoff and jitter, or after the delay the
 * server asked for, bounded by retry_max_elapsed_ms. */
#ifndef EL_EXPORT_QUEUE_H
#define EL_EXPORT_QUEUE_H

#include <stdatomic.h>
#include <stdint.h>

#include "otlp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  EL_XQ_OK = 0,       /* delivered (possibly with partial_success) */
  EL_XQ_RETRY,        /* transient: send again later */
  EL_XQ_DROP          /* permanent: drop and count */
} el_xq_verdict_t;

/* The outcome of one send. */
typedef struct el_xq_result_s {
  el_xq_verdict_t verdict;
  int retry_after_ms;         /* server-requested delay (RetryInfo,
                                 Retry-After); -1 = none */
  int64_t rejected;           /* partial_success rejected records (OK) */
  char msg[384];              /* error or partial_success message; on OK
                                 a non-empty msg is a warning (server
                                 message, undecodable response): logged */
} el_xq_result_t;

/* One transport instance (one signal's channel or curl handle). */
typedef struct el_xq_transport_s {
  void *ud;
  const char *name;           /* "grpc" / "http" */
  /* Send bytes[0..len) of signal sig and fill *res. Must return within
   * the configured timeout, and within about 100 ms once *abort is
   * non-zero (the result is then ignored). Thread: the sender. */
  void (*send)(void *ud, el_tm_signal_t sig, const uint8_t *bytes,
               size_t len, const atomic_int *abort, el_xq_result_t *res);
  void (*free)(void *ud);
  /* Optional (NULL: none). Called once *abort was set, so that a send in
   * progress reads it now instead of at its next poll; a wake while no
   * send runs may make the next one's first wait return early. Thread:
   * any (the one stopping the exporter). */
  void (*wake)(void *ud);
} el_xq_transport_t;

/* Create the transports (exp_grpc.c / exp_http.c). sc: borrowed for the
 * call (copied). Returns 0, EL_ENOMEM or EL_ECONFIG (logged). */
int el__otlp_grpc_new(const el_otlp_signal_cfg_t *sc, el_tm_signal_t sig,
                      el_xq_transport_t *out);
int el__otlp_http_new(const el_otlp_signal_cfg_t *sc, el_tm_signal_t sig,
                      el_xq_transport_t *out);

/* Decode an Export<Signal>ServiceResponse body and put its partial_success
 * (rejected count, message) into res. An empty body is a full success.
 * Returns 0 or EL_ECORRUPT (undecodable body). exp_grpc.c, used by both. */
int el__otlp_parse_response(el_tm_signal_t sig, const uint8_t *body,
                            size_t len, el_xq_result_t *res);

/* el_otlp_exporter_new with caller-made transports (tests): tr[s] is used
 * for each signal s in `signals` (ownership taken: tr[s].free is called by
 * el_otlp_exporter_free, also on failure). cfg: delivery settings only. */
int el__otlp_exporter_new_with(const el_otlp_config_t *cfg,
                               const el_xq_transport_t *tr, unsigned signals,
                               el_tm_store_t *st, el_otlp_exporter_t **out,
                               el_tm_exporter_t *tm);

/* Milliseconds on the monotonic clock. */
int64_t el__otlp_now_ms(void);

#ifdef __cplusplus
}
#endif
#endif /* EL_EXPORT_QUEUE_H */
