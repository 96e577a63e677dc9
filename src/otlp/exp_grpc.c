/* exp_grpc.c: OTLP/gRPC transport through the grpc C core (Debian's
 * libgrpc 1.51): one channel per signal, one unary
 * "/opentelemetry.proto.collector.<signal>.../Export" call per request on
 * a pluck completion queue, with a deadline.
 *
 * Connections: the channel reconnects by itself after GOAWAY or connection
 * loss (with a reconnect backoff capped at 1 s instead of grpc's 120 s, so
 * a collector that comes back is used again quickly). Calls are
 * wait-for-ready: a call made while the channel is down waits for it to
 * reconnect, up to the call's deadline (then DEADLINE_EXCEEDED, retried by
 * the sender). gRPC's own retries are off: the sender retries.
 * Keepalive: a default OpenTelemetry Collector (grpc-go enforcement policy:
 * MinTime 5 min, PermitWithoutStream false) sends GOAWAY ENHANCE_YOUR_CALM
 * "too_many_pings" to clients that ping more often than every 5 minutes or
 * while idle. We ping every 6 minutes, only while a call is active, and
 * turn off BDP probe pings (useless for small unary calls).
 * Compression: GRPC_COMPRESSION_CHANNEL_DEFAULT_ALGORITHM = gzip.
 * Spec: reference-behaviour.md §1.4, §7; OTLP specification "OTLP/gRPC". */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/compression.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "../common/el_grow.h"
#include "export_queue.h"
#include "otlp_plugin.h"
#include "google/rpc/error_details.pb-c.h"
#include "google/rpc/status.pb-c.h"
#include "otlp_encode.h"

static const char *const METHODS[EL_TM_NSIGNALS] = {
  "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
  "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
  "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
  ("/opentelemetry.proto.collector.profiles.v1development.ProfilesService/"
   "Export")};

/* Poll slice while waiting for the channel to connect, or for a probe's
 * socket: bounds the reaction to abort there. */
#define POLL_MS 100
/* The longest wait for a call's completion before its sender looks at the
 * abort flag unwoken: the exporter's stop cancels the call at once
 * (grpc_wake), so this bounds the shutdown only if that failed; it also
 * paces the probe of a channel that cannot connect (wait_call). */
#define CALL_POLL_MS 1000

typedef struct {
  grpc_channel *channel;
  grpc_completion_queue *cq;
  el_tm_signal_t sig;
  int timeout_ms;
  char *target;
  bool tls;
  grpc_metadata *md;          /* extra metadata (headers) */
  size_t nmd;
  /* Why the channel cannot connect, as probed (probe_cause): gRPC core
   * 1.51 keeps the reason of a failed connection attempt to itself (it
   * logs it at INFO level, without telling resolution from refusal in a
   * way its C API exposes). Empty: not probed, or nothing found. */
  char cause[200];
  int64_t cause_ms; /* when probed; 0 never */
  pthread_mutex_t mu;  /* guards inflight: the sender sets it, grpc_wake
                         cancels it from the stopping thread */
  grpc_call *inflight; /* the call being waited for (wait_call), or NULL */
} grpc_tr_t;

/* {====== why the channel cannot connect ======}
 * gRPC's answer to a call on a channel that cannot connect is only
 * DEADLINE_EXCEEDED (the call waits for the channel, wait-for-ready) or
 * UNAVAILABLE, whatever the reason. So when a call fails, or has waited
 * a while, on a channel that is not READY, the transport looks for itself,
 * as the HTTP transport's libcurl does: resolve the host, connect over
 * TCP, and (plaintext) send the HTTP/2 connection preface and read the
 * first bytes of the answer. Each step is bounded and stops on abort; at
 * most one probe every PROBE_EVERY_MS per channel. */

#define PROBE_EVERY_MS 5000
#define PROBE_STEP_MS 2000 /* bound of each step (resolve, connect, read) */

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Split "host:port" / "[v6]:port" into host and port. */
static bool split_target(const char *t, char *host, size_t hsize, char *port,
                         size_t psize) {
  const char *colon;
  if (t[0] == '[') {
    const char *end = strchr(t, ']');
    if (!end || end[1] != ':') return false;
    snprintf(host, hsize, "%.*s", (int)(end - t - 1), t + 1);
    colon = end + 1;
  } else {
    colon = strrchr(t, ':');
    if (!colon) return false;
    snprintf(host, hsize, "%.*s", (int)(colon - t), t);
  }
  snprintf(port, psize, "%s", colon + 1);
  return *host && *port;
}

/* Wait for fd's events in POLL_MS slices, up to PROBE_STEP_MS or abort:
 * >0 ready, 0 timed out, -1 aborted or failed. */
static int poll_step(int fd, short events, const atomic_int *abort) {
  int64_t end = mono_ms() + PROBE_STEP_MS;
  for (;;) {
    if (abort && atomic_load(abort)) return -1;
    int64_t left = end - mono_ms();
    if (left <= 0) return 0;
    struct pollfd p = {fd, events, 0};
    int n = poll(&p, 1, left < POLL_MS ? (int)left : POLL_MS);
    if (n > 0) return n;
    if (n < 0 && errno != EINTR) return -1;
  }
}

/* Resolve host:port (getaddrinfo_a, so that a slow DNS answer is bounded
 * and abort is heard). 0 and *out, or a message in cause. The request is
 * on the heap: one that can be neither waited for nor cancelled is left
 * to the resolver's thread (a few bytes, once per probe at most). */
typedef struct {
  struct gaicb cb;
  struct addrinfo hints;
  char host[256], port[32];
} gai_req_t;

static int probe_resolve(const char *host, const char *port,
                         const atomic_int *abort, struct addrinfo **out,
                         char *cause, size_t size) {
  /* An address (127.0.0.1, ::1) needs no resolver thread */
  struct addrinfo num = {.ai_family = AF_UNSPEC,
                         .ai_socktype = SOCK_STREAM,
                         .ai_flags = AI_NUMERICHOST};
  if (getaddrinfo(host, port, &num, out) == 0) return 0;
  gai_req_t *r = el_calloc(1, sizeof *r);
  if (!r) return -1;
  snprintf(r->host, sizeof r->host, "%s", host);
  snprintf(r->port, sizeof r->port, "%s", port);
  r->hints.ai_family = AF_UNSPEC;
  r->hints.ai_socktype = SOCK_STREAM;
  r->cb.ar_name = r->host;
  r->cb.ar_service = r->port;
  r->cb.ar_request = &r->hints;
  struct gaicb *list[1] = {&r->cb};
  if (getaddrinfo_a(GAI_NOWAIT, list, 1, NULL) != 0) {
    el_free(r);
    return -1;
  }
  int64_t end = mono_ms() + PROBE_STEP_MS;
  int rc;
  while ((rc = gai_error(&r->cb)) == EAI_INPROGRESS) {
    bool aborted = abort && atomic_load(abort);
    if (aborted || mono_ms() >= end) {
      int c = gai_cancel(&r->cb);
      if (c == EAI_NOTCANCELED) { /* running: a moment to finish */
        const struct gaicb *w[1] = {&r->cb};
        struct timespec ts = {0, 200 * 1000000L};
        gai_suspend(w, 1, &ts);
        if (gai_error(&r->cb) != EAI_INPROGRESS) c = EAI_ALLDONE;
      }
      if (c == EAI_ALLDONE && r->cb.ar_result) freeaddrinfo(r->cb.ar_result);
      if (c == EAI_CANCELED || c == EAI_ALLDONE) el_free(r);
      if (!aborted)
        snprintf(cause, size, "resolving host '%.64s' takes more than %d s",
                 host, PROBE_STEP_MS / 1000);
      return -1;
    }
    const struct gaicb *w[1] = {&r->cb};
    struct timespec ts = {0, POLL_MS * 1000000L};
    gai_suspend(w, 1, &ts);
  }
  if (rc != 0) {
    snprintf(cause, size, "cannot resolve host '%.64s': %s", host,
             rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    el_free(r);
    return -1;
  }
  *out = r->cb.ar_result;
  el_free(r);
  return 0;
}

/* What answers the HTTP/2 connection preface on a connected fd: NULL for
 * an HTTP/2 server (a SETTINGS frame first), else why not. */
static const char *probe_h2(int fd, const char *where, const atomic_int *abort,
                            char *cause, size_t size) {
  static const char preface[] =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
      "\0\0\0\4\0\0\0\0\0"; /* empty SETTINGS */
  if (send(fd, preface, sizeof preface - 1, MSG_NOSIGNAL) < 0) {
    snprintf(cause, size, "%s accepts TCP, then the connection fails: %s",
             where, strerror(errno));
    return cause;
  }
  unsigned char buf[64];
  ssize_t n = 0;
  int r = poll_step(fd, POLLIN, abort);
  if (r < 0) return NULL;
  if (r == 0) {
    snprintf(cause, size,
             "%s accepts TCP but does not answer HTTP/2 "
             "within %d s: not a gRPC server?",
             where, PROBE_STEP_MS / 1000);
    return cause;
  }
  n = recv(fd, buf, sizeof buf, 0);
  if (n >= 9 && buf[3] == 0x4) return NULL; /* SETTINGS: HTTP/2 */
  if (n >= 5 && !memcmp(buf, "HTTP/", 5)) {
    snprintf(cause, size,
             "%s answers in HTTP/1.x, not HTTP/2 (gRPC): an "
             "OTLP/HTTP port? (4317 is OTLP/gRPC's; or --otlp-protocol "
             "http/protobuf)",
             where);
  } else if (n < 0) {
    snprintf(cause, size,
             "%s accepts TCP, then the connection fails "
             "without an HTTP/2 answer (%s): not a gRPC server?",
             where, strerror(errno));
  } else if (n == 0) {
    snprintf(cause, size,
             "%s accepts TCP, then closes the connection "
             "without an HTTP/2 answer: not a gRPC server?",
             where);
  } else {
    char shown[24];
    size_t k = 0;
    for (ssize_t i = 0; i < n && k + 1 < sizeof shown; i++)
      shown[k++] = isprint(buf[i]) ? (char)buf[i] : '.';
    shown[k] = '\0';
    snprintf(cause, size,
             "%s answers, but not in HTTP/2 (it begins "
             "'%s'): not a gRPC server?",
             where, shown);
  }
  return cause;
}

/* Probe why g's channel cannot connect into g->cause (empty: nothing
 * found: the host resolves, accepts TCP and speaks HTTP/2, or TLS). */
static void probe_cause(grpc_tr_t *g, const atomic_int *abort) {
  char host[256], port[32], cause[sizeof g->cause] = "";
  g->cause_ms = mono_ms();
  if (!split_target(g->target, host, sizeof host, port, sizeof port)) return;
  struct addrinfo *ai = NULL;
  if (probe_resolve(host, port, abort, &ai, cause, sizeof cause) < 0) {
    if (!(abort && atomic_load(abort)))
      snprintf(g->cause, sizeof g->cause, "%s", cause);
    return;
  }
  int refused = 0, tried = 0, timed_out = 0;
  char where[48];
  const char *found = NULL;
  for (struct addrinfo *a = ai; a && tried < 3 && !found; a = a->ai_next) {
    char ip[64] = "?", ps[16] = "";
    getnameinfo(a->ai_addr, a->ai_addrlen, ip, sizeof ip, ps, sizeof ps,
                NI_NUMERICHOST | NI_NUMERICSERV);
    tried++;
    int fd =
        socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      int r = poll_step(fd, POLLOUT, abort);
      socklen_t l = sizeof err;
      if (r < 0)
        err = -1;
      else if (r == 0)
        err = ETIMEDOUT;
      else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
        err = errno;
    }
    if (err == 0) {
      /* Connected: what speaks there (plaintext only: over TLS the
       * handshake's failure is said by grpc_log). */
      snprintf(where, sizeof where, "%.40s", ip);
      found = g->tls ? NULL : probe_h2(fd, where, abort, cause, sizeof cause);
      if (!found) { /* reachable: nothing to add */
        close(fd);
        freeaddrinfo(ai);
        return;
      }
    } else if (err == ECONNREFUSED) {
      refused++;
    } else if (err == ETIMEDOUT) {
      timed_out++;
    } else if (err > 0 && !cause[0]) {
      snprintf(cause, sizeof cause, "connecting to %.40s failed: %s", ip,
               strerror(err));
    }
    close(fd);
    if (abort && atomic_load(abort)) break;
  }
  freeaddrinfo(ai);
  if (abort && atomic_load(abort)) return;
  if (found) {
    snprintf(g->cause, sizeof g->cause, "%s", found);
  } else if (refused) {
    snprintf(g->cause, sizeof g->cause,
             "connection refused: nothing "
             "listens on port %.16s of %.64s",
             port, host);
  } else if (timed_out) {
    snprintf(g->cause, sizeof g->cause,
             "TCP connect to %.64s gets no answer "
             "within %d s (host down, or a firewall?)",
             g->target, PROBE_STEP_MS / 1000);
  } else {
    snprintf(g->cause, sizeof g->cause, "%s", cause);
  }
}

/* The cause when the channel is not connected, probed again when older
 * than PROBE_EVERY_MS. */
static const char *channel_cause(grpc_tr_t *g, const atomic_int *abort) {
  if (!g->cause_ms || mono_ms() - g->cause_ms >= PROBE_EVERY_MS) {
    g->cause[0] = '\0';
    probe_cause(g, abort);
  }
  return g->cause;
}

/* {====== status classification ======} */

/* Find google.rpc.RetryInfo in a grpc-status-details-bin trailer value;
 * returns its delay in ms, or -1. */
static int retry_info_ms(grpc_slice details_bin) {
  Google__Rpc__Status *st = google__rpc__status__unpack(
      NULL, GRPC_SLICE_LENGTH(details_bin),
      GRPC_SLICE_START_PTR(details_bin));
  int ms = -1;
  if (!st) return -1;
  for (size_t i = 0; i < st->n_details && ms < 0; i++) {
    Google__Protobuf__Any *any = st->details[i];
    const char *suffix = "/google.rpc.RetryInfo";
    size_t tl = any->type_url ? strlen(any->type_url) : 0;
    size_t sl = strlen(suffix);
    if (tl < sl || strcmp(any->type_url + tl - sl, suffix) != 0) continue;
    Google__Rpc__RetryInfo *ri = google__rpc__retry_info__unpack(
        NULL, any->value.len, any->value.data);
    if (!ri) continue;
    if (ri->retry_delay) {
      int64_t v = ri->retry_delay->seconds * 1000 +
                  ri->retry_delay->nanos / 1000000;
      ms = v < 0 ? 0 : v > INT_MAX ? INT_MAX : (int)v;
    } else {
      ms = 0;
    }
    google__rpc__retry_info__free_unpacked(ri, NULL);
  }
  google__rpc__status__free_unpacked(st, NULL);
  return ms;
}

/* The OTLP/gRPC retry predicate (OTLP specification, "Failures" of
 * OTLP/gRPC): the server's status decides.
 *   Retryable: CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE,
 *     UNAVAILABLE, DATA_LOSS; RESOURCE_EXHAUSTED only when the server sent
 *     google.rpc.RetryInfo ("the server may recover"), after its delay.
 *   Not retryable: UNKNOWN, INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
 *     PERMISSION_DENIED, UNAUTHENTICATED, FAILED_PRECONDITION,
 *     UNIMPLEMENTED, INTERNAL, and RESOURCE_EXHAUSTED without RetryInfo.
 *   OK is success (partial_success is read by the caller). */
static el_xq_verdict_t grpc_verdict(grpc_status_code code, int retry_ms) {
  switch (code) {
  case GRPC_STATUS_OK:
    return EL_XQ_OK;
  case GRPC_STATUS_CANCELLED:
  case GRPC_STATUS_DEADLINE_EXCEEDED:
  case GRPC_STATUS_ABORTED:
  case GRPC_STATUS_OUT_OF_RANGE:
  case GRPC_STATUS_UNAVAILABLE:
  case GRPC_STATUS_DATA_LOSS:
    return EL_XQ_RETRY;
  case GRPC_STATUS_RESOURCE_EXHAUSTED:
    return retry_ms >= 0 ? EL_XQ_RETRY : EL_XQ_DROP;
  default:
    return EL_XQ_DROP;
  }
}

static const char *status_name(grpc_status_code c) {
  static const char *const names[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
    "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return (unsigned)c < EL_ARRAY_LEN(names) ? names[c] : "UNKNOWN";
}

/* {====== the call ======} */

static gpr_timespec ms_from_now(int64_t ms) {
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                      gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* Wait for the batch tag, cancelling the call on abort. A call that
 * waits 1 s for a channel that cannot connect has the cause probed (if
 * not known from the last PROBE_EVERY_MS), so that it is known even when
 * the run ends before the call's deadline. */
static void wait_call(grpc_tr_t *g, grpc_call *call, void *tag,
                      const atomic_int *abort) {
  bool cancelled = false;
  int64_t start = mono_ms();
  for (;;) {
    grpc_event ev = grpc_completion_queue_pluck(
        g->cq, tag, ms_from_now(CALL_POLL_MS), NULL);
    if (ev.type == GRPC_OP_COMPLETE) return;
    if (ev.type == GRPC_QUEUE_SHUTDOWN) return;
    if (!cancelled && atomic_load(abort)) {
      grpc_call_cancel(call, NULL);
      cancelled = true;
    }
    if (!cancelled && mono_ms() - start >= 1000 &&
        (!g->cause_ms || mono_ms() - g->cause_ms >= PROBE_EVERY_MS)) {
      grpc_connectivity_state cs =
          grpc_channel_check_connectivity_state(g->channel, 0);
      if (cs == GRPC_CHANNEL_TRANSIENT_FAILURE || cs == GRPC_CHANNEL_CONNECTING)
        channel_cause(g, abort);
    }
  }
}

static const char *find_trailer(const grpc_metadata_array *md,
                                const char *key, grpc_slice *out) {
  for (size_t i = 0; i < md->count; i++) {
    if (grpc_slice_str_cmp(md->metadata[i].key, key) == 0) {
      *out = md->metadata[i].value;
      return key;
    }
  }
  return NULL;
}

/* Copy a received message into one contiguous buffer (el_malloc). */
static uint8_t *read_message(grpc_byte_buffer *bb, size_t *len) {
  grpc_byte_buffer_reader rd;
  *len = 0;
  if (!bb || !grpc_byte_buffer_reader_init(&rd, bb)) return NULL;
  grpc_slice all = grpc_byte_buffer_reader_readall(&rd);
  grpc_byte_buffer_reader_destroy(&rd);
  size_t n = GRPC_SLICE_LENGTH(all);
  uint8_t *out = el_malloc(n ? n : 1);
  if (out) {
    memcpy(out, GRPC_SLICE_START_PTR(all), n);
    *len = n;
  }
  grpc_slice_unref(all);
  return out;
}

/* One unary call: its six operations and what they receive. */
typedef struct {
  grpc_op ops[6];
  grpc_byte_buffer *send_bb, *recv_bb;
  grpc_metadata_array init_md, trail_md;
  grpc_status_code status;
  grpc_slice details;
  const char *error_string;
} ucall_t;

/* Fill u to send bytes[0..len) (copied) with g's metadata. */
static void ucall_init(ucall_t *u, const grpc_tr_t *g, const uint8_t *bytes,
                       size_t len) {
  memset(u, 0, sizeof *u);
  grpc_slice payload = grpc_slice_from_copied_buffer((const char *)bytes,
                                                     len);
  u->send_bb = grpc_raw_byte_buffer_create(&payload, 1);
  grpc_slice_unref(payload);
  grpc_metadata_array_init(&u->init_md);
  grpc_metadata_array_init(&u->trail_md);
  u->status = GRPC_STATUS_UNKNOWN;
  u->details = grpc_empty_slice();
  grpc_op *ops = u->ops;
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = g->nmd;
  ops[0].data.send_initial_metadata.metadata = g->md;
  /* Wait for the channel to (re)connect, up to the deadline, instead of
   * failing at once while it is in TRANSIENT_FAILURE. */
  ops[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY |
                 GRPC_INITIAL_METADATA_WAIT_FOR_READY_EXPLICITLY_SET;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = u->send_bb;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &u->init_md;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &u->recv_bb;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &u->trail_md;
  ops[5].data.recv_status_on_client.status = &u->status;
  ops[5].data.recv_status_on_client.status_details = &u->details;
  ops[5].data.recv_status_on_client.error_string = &u->error_string;
}

static void ucall_free(ucall_t *u) {
  gpr_free((void *)u->error_string);
  grpc_slice_unref(u->details);
  grpc_metadata_array_destroy(&u->init_md);
  grpc_metadata_array_destroy(&u->trail_md);
  if (u->recv_bb) grpc_byte_buffer_destroy(u->recv_bb);
  grpc_byte_buffer_destroy(u->send_bb);
}

/* A successful call: partial_success from the response, if any. */
static void ucall_ok(const ucall_t *u, el_tm_signal_t sig,
                     el_xq_result_t *res) {
  size_t n;
  uint8_t *body = read_message(u->recv_bb, &n);
  if (u->recv_bb && !body) {
    res->verdict = EL_XQ_OK;  /* delivered; no memory to read
                                 partial_success */
  } else if (el__otlp_parse_response(sig, body, n, res) < 0) {
    snprintf(res->msg, sizeof res->msg,
             "undecodable Export response (%zu bytes)", n);
  }
  el_free(body);
}

/* A failed call: its status and message, and the channel's state; when
 * the channel is not connected, why (channel_cause; after abort only
 * what is known already). */
static void ucall_failed(grpc_tr_t *g, const ucall_t *u,
                         const atomic_int *abort, el_xq_result_t *res) {
  /* details is the server's (or the channel's) message; the error_string
   * adds grpc's file/line context, kept for debugging. */
  char *d = grpc_slice_to_c_string(u->details);
  bool has_d = d && *d;
  const char *es = u->error_string;
  grpc_connectivity_state cs =
      grpc_channel_check_connectivity_state(g->channel, 0);
  bool aborted = atomic_load(abort) && u->status == GRPC_STATUS_CANCELLED;
  const char *why = "";
  if ((cs == GRPC_CHANNEL_TRANSIENT_FAILURE || cs == GRPC_CHANNEL_CONNECTING) &&
      (u->status == GRPC_STATUS_DEADLINE_EXCEEDED ||
       u->status == GRPC_STATUS_UNAVAILABLE || aborted))
    why = aborted ? g->cause : channel_cause(g, abort);
  snprintf(res->msg, sizeof res->msg, "%s: %s (%s%s%s%s)",
           status_name(u->status),
           aborted ? "given up at shutdown"
           : has_d ? d
           : es    ? es
                   : "",
           g->target,
           cs == GRPC_CHANNEL_TRANSIENT_FAILURE ? ", cannot connect"
           : cs == GRPC_CHANNEL_CONNECTING      ? ", connecting"
                                                : "",
           *why ? ": " : "", why);
  if (es && has_d) el_log(EL_LOG_DEBUG, "OTLP gRPC: %s", es);
  gpr_free(d);
}

/* The verdict of a finished call (retryable statuses wait for the
 * server's RetryInfo when it gives one). */
static void ucall_verdict(grpc_tr_t *g, const ucall_t *u, el_tm_signal_t sig,
                          const atomic_int *abort, el_xq_result_t *res) {
  if (u->status != GRPC_STATUS_OK && el_log_enabled(EL_LOG_DEBUG)) {
    for (size_t i = 0; i < u->trail_md.count; i++) {
      char *k = grpc_slice_to_c_string(u->trail_md.metadata[i].key);
      el_log(EL_LOG_DEBUG, "OTLP gRPC: trailer %s (%zu bytes)", k,
             GRPC_SLICE_LENGTH(u->trail_md.metadata[i].value));
      gpr_free(k);
    }
  }
  grpc_slice bin;
  int retry_ms = -1;
  if (find_trailer(&u->trail_md, "grpc-status-details-bin", &bin))
    retry_ms = retry_info_ms(bin);
  res->verdict = grpc_verdict(u->status, retry_ms);
  res->retry_after_ms = res->verdict == EL_XQ_RETRY ? retry_ms : -1;
  if (u->status == GRPC_STATUS_OK)
    ucall_ok(u, sig, res);
  else
    ucall_failed(g, u, abort, res);
}

/* Wait, up to ms (0: no bound) and abortable, for the channel to be
 * READY, asking it to connect. 1 when ready; else 0 with res filled (no
 * call made: retryable, or CANCELLED on abort), in the words of a failed
 * call. A call is started on a ready channel only, so that its deadline
 * is spent on the collector's answer, not on the reconnection: a
 * wait-for-ready call whose deadline ran out while the collector, just
 * back, was still reading it was retried and delivered twice (h70). */
static int wait_ready(grpc_tr_t *g, int64_t ms, const atomic_int *abort,
                      el_xq_result_t *res) {
  int64_t start = mono_ms();
  grpc_connectivity_state cs =
      grpc_channel_check_connectivity_state(g->channel, 1);
  int tagv;
  while (cs != GRPC_CHANNEL_READY && cs != GRPC_CHANNEL_SHUTDOWN) {
    bool aborted = atomic_load(abort);
    if (aborted || (ms > 0 && mono_ms() - start >= ms)) {
      const char *why = aborted ? g->cause : channel_cause(g, abort);
      res->verdict = aborted ? EL_XQ_DROP : EL_XQ_RETRY;
      snprintf(res->msg, sizeof res->msg, "%s (%s%s%s%s)",
               aborted ? "CANCELLED: given up at shutdown"
                       : "UNAVAILABLE: not connected within the timeout, "
                         "nothing sent",
               g->target,
               cs == GRPC_CHANNEL_TRANSIENT_FAILURE ? ", cannot connect"
               : cs == GRPC_CHANNEL_CONNECTING      ? ", connecting"
                                                    : "",
               *why ? ": " : "", why);
      return 0;
    }
    grpc_channel_watch_connectivity_state(g->channel, cs, ms_from_now(POLL_MS),
                                          g->cq, &tagv);
    grpc_completion_queue_pluck(g->cq, &tagv,
                                gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (mono_ms() - start >= 1000 &&
        (!g->cause_ms || mono_ms() - g->cause_ms >= PROBE_EVERY_MS))
      channel_cause(g, abort);
    cs = grpc_channel_check_connectivity_state(g->channel, 1);
  }
  return 1;
}

static void grpc_send(void *ud, el_tm_signal_t sig, const uint8_t *bytes,
                      size_t len, const atomic_int *abort,
                      el_xq_result_t *res) {
  grpc_tr_t *g = ud;
  if (!wait_ready(g, g->timeout_ms, abort, res)) return;
  gpr_timespec deadline = g->timeout_ms > 0
                              ? ms_from_now(g->timeout_ms)
                              : gpr_inf_future(GPR_CLOCK_MONOTONIC);
  grpc_call *call = grpc_channel_create_call(
      g->channel, NULL, GRPC_PROPAGATE_DEFAULTS, g->cq,
      grpc_slice_from_static_string(METHODS[sig]), NULL, deadline, NULL);
  if (!call) {
    res->verdict = EL_XQ_RETRY;
    snprintf(res->msg, sizeof res->msg, "cannot create gRPC call to %s",
             g->target);
    return;
  }
  ucall_t u;
  ucall_init(&u, g, bytes, len);
  void *tag = (void *)u.ops;
  grpc_call_error ce = grpc_call_start_batch(call, u.ops, 6, tag, NULL);
  if (ce != GRPC_CALL_OK) {
    res->verdict = EL_XQ_DROP;
    snprintf(res->msg, sizeof res->msg, "grpc_call_start_batch: error %d",
             (int)ce);
  } else {
    /* published for grpc_wake; an abort set before it is seen here (the
     * exporter sets the flag before it calls grpc_wake) */
    pthread_mutex_lock(&g->mu);
    g->inflight = call;
    if (atomic_load(abort)) grpc_call_cancel(call, NULL);
    pthread_mutex_unlock(&g->mu);
    wait_call(g, call, tag, abort);
    pthread_mutex_lock(&g->mu);
    g->inflight = NULL;
    pthread_mutex_unlock(&g->mu);
    ucall_verdict(g, &u, sig, abort, res);
  }
  ucall_free(&u);
  grpc_call_unref(call);
}

/* {====== setup ======} */

/* el_xq_transport_t.wake: the exporter set the abort flag; the call in
 * flight, if any, is cancelled now (grpc_call_cancel: thread-safe until
 * the call is unreferenced, which grpc_send does only after clearing
 * inflight under mu), so wait_call returns at once instead of at its
 * next CALL_POLL_MS. A wait for the channel to connect (wait_ready)
 * still sees the flag within POLL_MS. */
static void grpc_wake(void *ud) {
  grpc_tr_t *g = ud;
  if (!g) return;
  pthread_mutex_lock(&g->mu);
  if (g->inflight) grpc_call_cancel(g->inflight, NULL);
  pthread_mutex_unlock(&g->mu);
}

static void grpc_tr_free(void *ud) {
  grpc_tr_t *g = ud;
  if (!g) return;
  if (g->channel) grpc_channel_destroy(g->channel);
  if (g->cq) {
    grpc_completion_queue_shutdown(g->cq);
    while (grpc_completion_queue_pluck(g->cq, NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME),
                                       NULL).type != GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(g->cq);
  }
  for (size_t i = 0; i < g->nmd; i++) {
    grpc_slice_unref(g->md[i].key);
    grpc_slice_unref(g->md[i].value);
  }
  el_free(g->md);
  el_free(g->target);
  pthread_mutex_destroy(&g->mu);
  el_free(g);
  /* The last reference shuts grpc down; wait for it, so that nothing of
   * grpc (TLS sessions, threads) outlives the exporter. Calls and channel
   * are gone by now, so this is quick. */
  grpc_shutdown_blocking();
}

/* Read a whole PEM file into a NUL-terminated el_malloc'd string. */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "rbe");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (el_grow(&buf, &cap, len + 4096 + 1, 1) < 0) {
      el_free(buf);
      fclose(f);
      return NULL;
    }
    size_t n = fread(buf + len, 1, 4096, f);
    len += n;
    if (n < 4096) break;
  }
  fclose(f);
  buf[len] = '\0';
  return buf;
}

static grpc_channel_credentials *make_creds(const el_otlp_signal_cfg_t *sc) {
  if (!sc->tls) return grpc_insecure_credentials_create();
  char *pem = NULL;
  if (sc->certificate) {
    pem = read_file(sc->certificate);
    if (!pem) {
      el_log(EL_LOG_ERROR, "OTLP gRPC exporter: cannot read certificate "
             "file '%s'", sc->certificate);
      return NULL;
    }
  }
  grpc_channel_credentials *c = grpc_ssl_credentials_create(pem, NULL, NULL,
                                                            NULL);
  el_free(pem);
  return c;
}

static int add_metadata(grpc_tr_t *g, const el_otlp_signal_cfg_t *sc) {
  if (!sc->nheaders) return 0;
  g->md = el_calloc(sc->nheaders, sizeof *g->md);
  if (!g->md) return EL_ENOMEM;
  for (size_t i = 0; i < sc->nheaders; i++) {
    char key[256];
    size_t k = 0;
    for (; sc->headers[i].name[k] && k + 1 < sizeof key; k++)
      key[k] = (char)tolower((unsigned char)sc->headers[i].name[k]);
    key[k] = '\0';
    g->md[i].key = grpc_slice_from_copied_string(key);
    g->md[i].value = grpc_slice_from_copied_string(sc->headers[i].value);
    g->nmd++;
  }
  return 0;
}

/* gRPC core's own log lines (gpr_log; by default printed straight to
 * stderr, unthrottled: a TLS channel to a plaintext port logs a failed
 * handshake on every reconnect, about once a second) go through el_log at
 * debug level (-v debug shows them); a failed TLS handshake is also said
 * once a minute as a warning that names the likely cause, next to the
 * exporter's own "cannot connect" errors. GRPC_VERBOSITY or GRPC_TRACE in
 * the environment keep gRPC's own logging (el__otlp_grpc_new). */
static void grpc_log(gpr_log_func_args *a) {
  static volatile time_t last_tls; /* a benign race: one more warning */
  const char *msg = a->message ? a->message : "";
  if (strstr(msg, "Handshake failed")) {
    time_t now = time(NULL);
    if (now - last_tls >= 60) {
      last_tls = now;
      el_log(EL_LOG_WARN,
             "OTLP gRPC: TLS handshake failed (%s): does the collector serve "
             "TLS on that port? (--otelcol-ssl or an https:// endpoint asks "
             "for TLS; at most one such warning a minute)",
             msg);
    }
  }
  if (el_log_enabled(EL_LOG_DEBUG))
    el_log(EL_LOG_DEBUG, "gRPC %s:%d: %s", a->file ? a->file : "?", a->line,
           msg);
}

int el__otlp_grpc_new(const el_otlp_signal_cfg_t *sc, el_tm_signal_t sig,
                      el_xq_transport_t *out) {
  grpc_tr_t *g = el_calloc(1, sizeof *g);
  if (!g) return EL_ENOMEM;
  pthread_mutex_init(&g->mu, NULL);
  grpc_init();
  if (!getenv("GRPC_VERBOSITY") && !getenv("GRPC_TRACE"))
    gpr_set_log_function(grpc_log);
  g->sig = sig;
  g->timeout_ms = sc->timeout_ms;
  g->tls = sc->tls;
  g->target = el_strdup(sc->target ? sc->target : "localhost:4317");
  g->cq = grpc_completion_queue_create_for_pluck(NULL);
  int rc = g->target && g->cq ? add_metadata(g, sc) : EL_ENOMEM;
  if (rc < 0) {
    grpc_tr_free(g);
    return rc;
  }
  grpc_arg args[16];
  size_t n = 0;
#define INT_ARG(k, v)                                                       \
  args[n].type = GRPC_ARG_INTEGER;                                          \
  args[n].key = (char *)(k);                                                \
  args[n++].value.integer = (v)
  INT_ARG(GRPC_ARG_KEEPALIVE_TIME_MS, 6 * 60 * 1000);
  INT_ARG(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
  INT_ARG(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  INT_ARG(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  INT_ARG(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 2);
  INT_ARG(GRPC_ARG_ENABLE_RETRIES, 0);
  INT_ARG(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  INT_ARG(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  INT_ARG(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  INT_ARG(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, -1);
  /* A connection of its own per signal (each has its sender thread,
   * export_queue.c): not shared through gRPC's global subchannel pool,
   * so that a connection closed under one signal's call (GOAWAY, reset)
   * does not cut another signal's answer (retried: received twice). */
  INT_ARG(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (sc->compression == EL_OTLP_COMPRESS_GZIP) {
    INT_ARG(GRPC_COMPRESSION_CHANNEL_DEFAULT_ALGORITHM, GRPC_COMPRESS_GZIP);
  }
#undef INT_ARG
  if (sc->authority) {
    args[n].type = GRPC_ARG_STRING;
    args[n].key = (char *)GRPC_ARG_DEFAULT_AUTHORITY;
    args[n++].value.string = sc->authority;
  }
  grpc_channel_args ca = {n, args};
  grpc_channel_credentials *creds = make_creds(sc);
  if (!creds) {
    grpc_tr_free(g);
    return EL_ECONFIG;
  }
  g->channel = grpc_channel_create(g->target, creds, &ca);
  grpc_channel_credentials_release(creds);
  if (!g->channel) {
    grpc_tr_free(g);
    return EL_ENOMEM;
  }
  el_log(EL_LOG_DEBUG, "OTLP gRPC exporter (%s): %s%s",
         el_otlp_signal_name(sig), sc->tls ? "https://" : "http://",
         g->target);
  out->ud = g;
  out->name = "grpc";
  out->send = grpc_send;
  out->free = grpc_tr_free;
  out->wake = grpc_wake;
  return 0;
}

/* {====== plugin ======} */

const el_otlp_transport_plugin_t el_plugin_otlp_grpc = {
    {EL_OTLP_TRANSPORT_ABI, "otlp-grpc"}, el__otlp_grpc_new, NULL};
