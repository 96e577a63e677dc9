/* otlp.h: OTLP exporters (gRPC through the grpc C core, HTTP/protobuf
 * through libcurl) behind a bounded queue and a sender thread, and their
 * configuration from the reference tool's flags and the standard OTEL_*
 * environment variables.
 *
 * Life of a batch: el_tm_store_flush() calls the exporter's export() on the
 * loop thread; it appends the batch to the signal's bounded queue
 * (dropping and counting the oldest when full) and returns at once. The
 * signal's sender thread encodes it into Export<Signal>ServiceRequest
 * messages of at most max_message_bytes (otlp_encode.h) and sends each as
 * it is made, retrying retryable failures with exponential backoff and
 * jitter (export_queue.h). el_tm_store_shutdown() waits for the queues to drain,
 * bounded by the shutdown timeout; when it runs out, the exporter abandons
 * (counts, and says by signal with that cause) whatever is left at once
 * (el_otlp_exporter_stop), so exit never hangs on a bad collector.
 *
 * Spec: reference-behaviour.md §1.1, §1.3.1, §1.3.3, §1.4, §2.1, §7 and the
 * OTLP specification (exporter configuration, retryable responses). */
#ifndef EL_OTLP_H
#define EL_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../telemetry/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* {====== configuration ======} */

typedef enum {
  EL_OTLP_EXP_OTLP = 0,       /* OTLP over cfg.protocol (default) */
  EL_OTLP_EXP_CONSOLE,        /* OTLP/JSON lines on stdout */
  EL_OTLP_EXP_NONE            /* signal not exported */
} el_otlp_exporter_kind_t;

typedef enum {
  EL_OTLP_HTTP_PROTOBUF = 0,  /* default, as the OTLP spec and HEAD */
  EL_OTLP_GRPC
} el_otlp_protocol_t;

typedef enum {
  EL_OTLP_COMPRESS_NONE = 0,
  EL_OTLP_COMPRESS_GZIP
} el_otlp_compression_t;

/* One extra request header (HTTP) / metadata entry (gRPC). Owned by the
 * config (el_malloc'd copies, freed by el_otlp_config_free). */
typedef struct el_otlp_header_s {
  char *name;                 /* lower-cased for gRPC metadata */
  char *value;                /* percent-decoded */
} el_otlp_header_t;

/* Resolved settings of one signal. Strings owned by the config. */
typedef struct el_otlp_signal_cfg_s {
  el_otlp_exporter_kind_t exporter;
  el_otlp_protocol_t protocol;
  /* gRPC: "host:port" target for grpc_channel_create; HTTP: the complete
   * URL the requests are POSTed to (path included). */
  char *target;
  bool tls;                   /* https / --otelcol-ssl */
  char *certificate;          /* PEM CA file, NULL = system store */
  char *authority;            /* gRPC :authority override, NULL = none */
  el_otlp_header_t *headers;  /* nheaders extra headers */
  size_t nheaders;
  el_otlp_compression_t compression;
  int timeout_ms;             /* per request; 0 = none; default 10000 */
} el_otlp_signal_cfg_t;

/* Whole exporter configuration. Fill with el_otlp_config_init, then
 * el_otlp_opts_parse per command-line option, then el_otlp_config_resolve
 * (environment + defaults); free with el_otlp_config_free. */
typedef struct el_otlp_config_s {
  el_otlp_signal_cfg_t sig[EL_TM_NSIGNALS];

  /* Program resource (§2.1): service.name and OTEL_RESOURCE_ATTRIBUTES
   * pairs, all strings. service_name NULL = none given. */
  char *service_name;
  el_otlp_header_t *resource; /* nresource key/value pairs, keys unique */
  size_t nresource;

  /* Delivery (export_queue.h), shared by the signals. */
  size_t queue_max_bytes;     /* per signal; default 16 MiB */
  size_t queue_max_items;     /* batches and requests per signal; 1024 */
  size_t max_message_bytes;   /* per request; default 4 MiB */
  int shutdown_timeout_ms;    /* flush bound at exit; default 10000 */
  int retry_initial_ms;       /* first backoff; default 500 */
  int retry_max_ms;           /* backoff cap; default 5000 */
  int retry_max_elapsed_ms;   /* give up on a request after; default 60000 */

  /* Command-line flags, kept apart so they win over the environment.
   * Borrowed from argv (must outlive el_otlp_config_resolve). */
  struct {
    const char *host;         /* --otelcol-host */
    const char *port;         /* --otelcol-port */
    const char *authority;    /* --otelcol-authority */
    bool ssl;                 /* --otelcol-ssl */
    const char *certificate;  /* --otelcol-certificate-store */
    const char *service_name; /* --service-name */
    const char *protocol;     /* --otlp-protocol */
    const char *endpoint;     /* --otlp-endpoint */
    const char *compression;  /* --otlp-compression */
    const char *queue_bytes;  /* --otlp-queue-bytes */
    const char *queue_items;  /* --otlp-queue-items */
    const char *max_message;  /* --otlp-max-message-bytes */
    const char *shutdown_ms;  /* --otlp-shutdown-timeout (ms) */
    bool no_otlp;             /* --no-otlp: signals set to OTLP get none */
  } flag;
  char err[256];              /* message of the last error */
} el_otlp_config_t;

/* Fill *cfg with the defaults (nothing allocated). Thread: any. */
void el_otlp_config_init(el_otlp_config_t *cfg);

/* Free what el_otlp_config_resolve allocated; *cfg is then back to the
 * state of el_otlp_config_init, flags kept. NULL is allowed. */
void el_otlp_config_free(el_otlp_config_t *cfg);

/* Try to consume one exporter option at argv[*i] ("--opt value" or
 * "--opt=value"): --otelcol-host, --otelcol-port, --otelcol-authority,
 * --otelcol-ssl, --otelcol-certificate-store, --service-name and our
 * --otlp-* options (see el_otlp_opts_help). Values are kept as pointers
 * into argv (borrowed).
 * Returns 1 and advances *i past the option and its value; 0 and leaves *i
 * when argv[*i] is not an exporter option; EL_EUSAGE with cfg->err set
 * (missing value). Thread: any. Spec: reference-behaviour.md §1.1. */
int el_otlp_opts_parse(el_otlp_config_t *cfg, int argc, char **argv, int *i);

/* Help lines for the exporter options and the environment variables:
 * static NUL-terminated text, lines end in '\n', indented by two spaces. */
const char *el_otlp_opts_help(void);

/* Lookup function for environment variables (getenv by default; tests pass
 * their own). Returns NULL when unset; the string is borrowed. */
typedef const char *(*el_otlp_getenv_fn)(void *ud, const char *name);

/* Resolve the configuration: for each setting, a flag wins over the
 * signal-specific variable (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT...), which
 * wins over the generic one (OTEL_EXPORTER_OTLP_ENDPOINT...), which wins
 * over the default. Reads OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
 * (W3C baggage, percent-decoded), OTEL_{METRICS,LOGS,TRACES,PROFILES}_
 * EXPORTER, OTEL_EXPORTER_OTLP_{PROTOCOL,ENDPOINT,INSECURE,CERTIFICATE,
 * HEADERS,COMPRESSION,TIMEOUT} and their per-signal variants, and
 * EL_OTLP_{QUEUE_MAX_BYTES,QUEUE_MAX_ITEMS,MAX_MESSAGE_BYTES,
 * SHUTDOWN_TIMEOUT,RETRY_INITIAL,RETRY_MAX,RETRY_MAX_ELAPSED}.
 * Endpoints: a per-signal HTTP endpoint is used as is; the generic one gets
 * /v1/<signal> (/v1development/profiles) appended; default
 * http://localhost:4318 (HTTP) or http://localhost:4317 (gRPC).
 * getenv: NULL = the process environment. May be called once per config
 * (call el_otlp_config_free first to resolve again).
 * Returns 0, EL_ECONFIG with cfg->err naming the variable (or flag) and the
 * bad value, or EL_ENOMEM. Thread: any (reads no global state besides the
 * environment). Spec: reference-behaviour.md §1.3.1, §1.3.3, §1.4. */
int el_otlp_config_resolve(el_otlp_config_t *cfg, el_otlp_getenv_fn getenv,
                           void *ud);

/* Resolve only the program resource of el_otlp_config_resolve:
 * OTEL_RESOURCE_ATTRIBUTES and service.name (--service-name, then
 * OTEL_SERVICE_NAME), for a command that exports nothing over OTLP
 * (`eventlog-live run`'s console) and must not fail on the exporter
 * variables. getenv: NULL = the process environment. Call once per
 * config, instead of el_otlp_config_resolve; free with
 * el_otlp_config_free. Returns 0, EL_ECONFIG with cfg->err naming the
 * malformed variable, or EL_ENOMEM. Thread: any. Spec:
 * reference-behaviour.md §1.3.3, §2.1. */
int el_otlp_config_resolve_resource(el_otlp_config_t *cfg,
                                    el_otlp_getenv_fn getenv, void *ud);

/* After el_otlp_config_resolve failed: true when cfg->err names a
 * command-line option (its value is a usage error: exit status 2,
 * docs/exit-codes.md), false when it names an environment variable. */
bool el_otlp_config_err_is_usage(const el_otlp_config_t *cfg);

/* Did the user ask for OTLP delivery: a collector flag (--otelcol-host,
 * -port, -authority, -ssl, -certificate-store, --otlp-protocol,
 * -endpoint, -compression), or a non-empty OTEL_<SIGNAL>_EXPORTER,
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT?
 * (`eventlog-live watch` turns OTLP off otherwise.) getenv NULL = the
 * process environment. Thread: any. */
bool el_otlp_config_requested(const el_otlp_config_t *cfg,
                              el_otlp_getenv_fn getenv, void *ud);

/* Set the program resource of st from cfg: every OTEL_RESOURCE_ATTRIBUTES
 * pair, then service.name (flag, then OTEL_SERVICE_NAME) when given.
 * Returns 0 or EL_ENOMEM. Thread: loop. Spec: reference-behaviour.md §2.1.
 */
int el_otlp_config_apply_resource(const el_otlp_config_t *cfg,
                                  el_tm_store_t *st);

/* Parse W3C baggage text (reference-behaviour.md §1.3.3) into key/value
 * pairs (percent-decoded values, last duplicate wins). *out and *n: a new
 * el_malloc'd array, free with el_otlp_headers_free. Returns 0, EL_EINVAL
 * with a reason in err[errsz], or EL_ENOMEM. */
int el_otlp_baggage_parse(const char *text, el_otlp_header_t **out,
                          size_t *n, char *err, size_t errsz);
void el_otlp_headers_free(el_otlp_header_t *h, size_t n);

/* {====== exporter ======} */

typedef struct el_otlp_exporter_s el_otlp_exporter_t;

/* Delivery counters, per signal. Records are data points, log records,
 * spans or profile samples. */
typedef struct el_otlp_stats_s {
  uint64_t requests[EL_TM_NSIGNALS];        /* requests accepted (2xx/OK) */
  uint64_t records[EL_TM_NSIGNALS];         /* records in those requests */
  uint64_t bytes[EL_TM_NSIGNALS];           /* serialized bytes sent OK */
  uint64_t rejected[EL_TM_NSIGNALS];        /* partial_success rejections */
  uint64_t retries[EL_TM_NSIGNALS];         /* retried attempts */
  uint64_t dropped_queue[EL_TM_NSIGNALS];   /* records: queue overflow */
  uint64_t dropped_failed[EL_TM_NSIGNALS];  /* records: non-retryable
                                               failure or retries exhausted */
  uint64_t dropped_shutdown[EL_TM_NSIGNALS];/* records: left at shutdown */
  uint64_t dropped_size[EL_TM_NSIGNALS];    /* records too big for one
                                               request (encoder) */
} el_otlp_stats_t;

/* Create an OTLP exporter for the signals in the bit set `signals`
 * (1u << el_tm_signal_t) whose cfg->sig[s].exporter is EL_OTLP_EXP_OTLP
 * (others are ignored), and start its sender thread. Each signal uses its
 * own protocol, target and options (one gRPC channel per signal; one curl
 * handle shared). Drops are reported to st with el_tm_store_count_dropped
 * (st may be NULL in tests).
 * cfg: resolved config, copied (may be freed afterwards).
 * *tm: filled with the el_tm_exporter_t to give el_tm_store_add_exporter;
 *   its ud is *out. *out: free with el_otlp_exporter_free after the store
 *   stopped calling it.
 * Returns 0, EL_ENOMEM, EL_ECONFIG (cfg->err untouched; logged), or a
 * negated errno (thread creation). Thread: loop. */
int el_otlp_exporter_new(const el_otlp_config_t *cfg, unsigned signals,
                         el_tm_store_t *st, el_otlp_exporter_t **out,
                         el_tm_exporter_t *tm);

/* Queue one serialized Export<Signal>ServiceRequest (bytes copied; nrecords
 * records inside) as export() does for each encoded request. Used by
 * export() and by tests that build requests themselves. Never blocks on
 * the network. Returns 0, EL_ENOMEM (counted as dropped) or EL_EINVAL
 * (signal not handled by this exporter). Thread: any. */
int el_otlp_exporter_submit(el_otlp_exporter_t *ex, el_tm_signal_t sig,
                            const uint8_t *bytes, size_t len,
                            size_t nrecords);

/* {------ flow control: a producer that can wait (a recorded file) ------}
 * docs/otlp.md §8.2 "Flow control". Without it the queues drop their
 * oldest requests when full and the loop never waits. With it:
 *   - el_otlp_exporter_should_pause after each chunk of input: 1 when some
 *     queue holds at least half its bound of requests or bytes (and the
 *     collector is not failing): the producer should stop reading; the
 *     exporter then calls fn once, from its sender thread, when every
 *     queue is down to a quarter of its bounds, or a request was dropped
 *     as failed (dead collector: do not wait for it), or the exporter
 *     stopped;
 *   - el_otlp_exporter_may_resume (loop thread, e.g. from the uv_async fn
 *     sends): 1 when reading may go on; 0 re-arms the call of fn;
 *   - a queue then drops no request for being full: the producer pauses
 *     after the chunk of input at hand, so a queue exceeds its bounds by
 *     at most what one chunk made (records the store held already); while
 *     the collector is failing (a request dropped as failed, until the
 *     next delivery) the oldest are dropped as without flow control. */

/* Called from the sender thread with the exporter's lock held: must only
 * wake the producer (uv_async_send), never call back into the exporter. */
typedef void (*el_otlp_flow_fn)(void *ud);

/* Turn flow control on (fn non-NULL) or off (NULL). ud: passed to fn.
 * Thread: any. */
void el_otlp_exporter_set_flow(el_otlp_exporter_t *ex, el_otlp_flow_fn fn,
                               void *ud);

/* 1 when the producer should pause (see above; arms the call of fn), 0
 * otherwise (flow control off, below the high-water mark, failing or
 * stopped). Thread: any but the sender. */
int el_otlp_exporter_should_pause(el_otlp_exporter_t *ex);

/* 1 when a paused producer may go on (every queue at most a quarter of its
 * bounds, failing, stopped or flow control off); 0 arms the call of fn.
 * Thread: any but the sender. */
int el_otlp_exporter_may_resume(el_otlp_exporter_t *ex);

/* Wait up to timeout_ms (< 0: wait forever) for every queued request to be
 * delivered or dropped. Returns 0 when nothing is left, EL_EEXPORT
 * otherwise (what is left stays queued). Thread: any but the sender. */
int el_otlp_exporter_flush(el_otlp_exporter_t *ex, int timeout_ms);

/* Stop the sender thread: abort the request in flight (at once: the
 * transports' wake, exp_grpc.c grpc_wake and exp_http.c http_wake; a gRPC
 * wait for the channel to connect within 100 ms), join
 * the thread, count everything still queued as dropped (dropped_shutdown, and in the
 * store) and log the summary (el_otlp_exporter_log_stats). A signal with
 * records dropped so is also said with its cause: the shutdown budget
 * that ran out (the store's flush, el_tm_store_shutdown) and the last
 * failure ("OTLP logs export: 25 log records dropped at shutdown: the
 * shutdown budget of 2500 ms (--otlp-shutdown-timeout) ran out; the last
 * failure: ..."). Later submits are dropped and counted. Idempotent.
 * Thread: loop. */
void el_otlp_exporter_stop(el_otlp_exporter_t *ex);

/* el_otlp_exporter_stop, then free the exporter. NULL allowed. */
void el_otlp_exporter_free(el_otlp_exporter_t *ex);

/* Copy the counters into *out. Thread: any. */
void el_otlp_exporter_stats(el_otlp_exporter_t *ex, el_otlp_stats_t *out);

/* Log one summary line per signal with traffic (INFO, WARN when something
 * was dropped or rejected). Thread: any. */
void el_otlp_exporter_log_stats(el_otlp_exporter_t *ex);

#ifdef __cplusplus
}
#endif
#endif /* EL_OTLP_H */
