/* ctl_server.c: the control server's HTTP side (libmicrohttpd, through
 * the limits and deadlines of httpd.h) and its hand-over to the libuv
 * loop thread. spec/reference-behaviour.md §8, docs/security.md.
 *
 * Threads: libmicrohttpd runs a listening thread and one thread per
 * connection (bounded by httpd.h's limits). A connection thread that has
 * a command to send queues a job, wakes the loop thread with
 * uv_async_send and waits on a condition variable (at most WAIT_MS) for
 * the result of the send callback, which runs on the loop thread. The
 * loop thread never waits for HTTP threads, so a slow or hostile client
 * cannot block the daemon; a busy loop at worst makes the request time
 * out with 503. The loop thread sends queued messages at least GAP_MS
 * apart (see pump).
 *
 * Request life: the first call of the access handler applies CORS, routes
 * and sets up the body parser (libmicrohttpd's post processor for
 * urlencoded and multipart forms, jansson for JSON); the next calls feed
 * body bytes (at most BODY_MAX); the last one checks the service name and
 * sends. The request state is freed by the completion callback. */
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <uv.h>

#include "control/ctl_internal.h"
#include "control/httpd.h"

#define BODY_MAX 8192  /* bytes of request body accepted */
#define QUEUE_MAX 64   /* commands waiting for the loop thread */
#define WAIT_MS 2000   /* how long a request waits for the loop thread */
#define GAP_MS 5       /* minimum time between two messages sent */
#define DISCARD_MAX (1 << 20) /* oversized body bytes read before closing */

/* One command handed from an HTTP thread to the loop thread. */
typedef struct job_s {
  struct job_s *next;     /* queue link */
  char ns[EL_CTL_NS_MAX]; /* namespace bytes */
  size_t ns_len;          /* 1..255 */
  int cmd;                /* command id 1..255 */
  int rc;                 /* result of el_ctl_send, valid when done */
  int done;               /* set by the loop thread under mu */
  int abandoned;          /* set by the HTTP thread under mu: the loop
                             thread frees the job */
} job_t;

struct el_ctl_server_s {
  el_ctl_httpd_t *http;      /* NULL once stopped */
  uv_async_t async;          /* wakes the loop thread; unreferenced */
  uv_timer_t pace;           /* spaces sends GAP_MS apart; unreferenced */
  uint64_t next_send_ms;     /* loop time before which nothing is sent */
  int open_handles;          /* handles not yet closed (async, pace) */
  int has_loop;              /* 0: send on the HTTP thread */
  pthread_mutex_t mu;        /* guards the fields below down to stopping */
  pthread_cond_t cv;         /* signalled when a job is done */
  job_t *head, *tail;        /* jobs waiting for the loop thread */
  size_t queued;             /* jobs in the queue */
  int stopping;              /* set by el_ctl_server_free */
  el_ctl_sender_t sender;    /* where the messages go */
  el_ctl_opts_t opts;        /* deep copy of the options */
  char *service;             /* the daemon's service name, el_malloc'd */
  int port;                  /* bound TCP port */
  atomic_uint_fast64_t counts[3]; /* answers: 2xx, 4xx, 5xx */
};

/* Per-request state, freed by on_completed. */
typedef struct req_s {
  el__ctl_cors_t cors;             /* CORS outcome */
  int answered;                    /* a response is queued */
  char ns[EL_CTL_NS_MAX];          /* routed namespace */
  size_t ns_len;                   /* its length */
  int cmd;                         /* routed command id */
  struct MHD_PostProcessor *pp;    /* form parser, or NULL */
  int json;                        /* body is JSON (buffered in body) */
  char *body;                      /* JSON body bytes, el_malloc'd */
  size_t body_len;                 /* bytes received so far */
  char *svc;                       /* first service-name value */
  size_t svc_len;                  /* its length */
  int svc_seen;                    /* the field was present */
  int svc_done;                    /* the first value is complete */
  int malformed;                   /* the form parser failed */
  int too_large;                   /* the body exceeded BODY_MAX */
  size_t discarded;                /* body bytes dropped since then */
} req_t;

/* {====== answers ======} */

static void count(el_ctl_server_t *s, unsigned status) {
  int k = status < 400 ? 0 : status < 500 ? 1 : 2;
  atomic_fetch_add(&s->counts[k], 1);
}

static void add_cors_headers(struct MHD_Response *resp, const req_t *r) {
  const el__ctl_cors_t *c = &r->cors;
  char buf[32];
  if (c->allow_origin == NULL) return;
  MHD_add_response_header(resp, "Access-Control-Allow-Origin",
                          c->allow_origin);
  if (c->vary_origin) MHD_add_response_header(resp, "Vary", "Origin");
  if (c->allow_methods)
    MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                            EL__CORS_METHODS);
  if (c->allow_headers)
    MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                            EL__CORS_HEADERS);
  if (c->max_age_s >= 0) {
    snprintf(buf, sizeof buf, "%d", c->max_age_s);
    MHD_add_response_header(resp, "Access-Control-Max-Age", buf);
  }
}

/* Queue a response: status, body (len bytes, copied; may be empty),
 * optional extra header pair, and the request's CORS headers. */
static enum MHD_Result answer_ex(el_ctl_server_t *s, struct MHD_Connection *c,
                                 req_t *r, unsigned status, const char *body,
                                 const char *hname, const char *hvalue) {
  size_t len = body ? strlen(body) : 0;
  struct MHD_Response *resp = MHD_create_response_from_buffer(
      len, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
  if (resp == NULL) return MHD_NO;
  if (len > 0)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "application/json");
  if (hname) MHD_add_response_header(resp, hname, hvalue);
  add_cors_headers(resp, r);
  enum MHD_Result rc = MHD_queue_response(c, status, resp);
  MHD_destroy_response(resp);
  if (rc == MHD_YES) {
    r->answered = 1;
    count(s, status);
  }
  return rc;
}

static enum MHD_Result answer(el_ctl_server_t *s, struct MHD_Connection *c,
                              req_t *r, unsigned status, const char *body) {
  return answer_ex(s, c, r, status, body, NULL, NULL);
}

/* Free what jansson allocated, with whatever allocator it was given. */
static void jfree(void *p) {
  json_free_t f = NULL;
  json_get_alloc_funcs(NULL, &f);
  if (p) (f ? f : free)(p);
}

/* A JSON string from bytes that may not be UTF-8. */
static json_t *jstr(const char *p, size_t len) {
  json_t *j = json_stringn(p, len);
  return j ? j : json_string("(not UTF-8)");
}

/* Answer {"error-message": msg [+ detail]} with status. */
static enum MHD_Result answer_error(el_ctl_server_t *s,
                                    struct MHD_Connection *c, req_t *r,
                                    unsigned status, const char *msg,
                                    const char *detail, size_t detail_len) {
  char text[512];
  size_t n = (size_t)snprintf(text, sizeof text, "%s", msg);
  if (n >= sizeof text) n = sizeof text - 1;
  if (detail) {
    size_t room = sizeof text - 1 - n;
    if (detail_len > room) detail_len = room;
    memcpy(text + n, detail, detail_len);
    n += detail_len;
  }
  json_t *o = json_object();
  json_object_set_new(o, "error-message", jstr(text, n));
  char *body = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  enum MHD_Result rc = answer(s, c, r, status,
                              body ? body : "{\"error-message\":\"error\"}");
  jfree(body);
  el_log(EL_LOG_DEBUG, "control: %u %.*s", status, (int)n, text);
  return rc;
}

/* Answer 200 naming what was sent. */
static enum MHD_Result answer_sent(el_ctl_server_t *s,
                                   struct MHD_Connection *c, req_t *r) {
  uint8_t msg[EL_CTL_MSG_MAX];
  char hex[2 * EL_CTL_MSG_MAX + 1];
  int n = el_ctl_encode(r->ns, r->ns_len, r->cmd, msg);
  for (int k = 0; k < n; k++) sprintf(hex + 2 * k, "%02X", msg[k]);
  hex[n > 0 ? 2 * n : 0] = '\0';
  json_t *o = json_object();
  json_object_set_new(o, "namespace", jstr(r->ns, r->ns_len));
  json_object_set_new(o, "command-id", json_integer(r->cmd));
  const char *name = NULL;
  if (r->ns_len == strlen(EL_CTL_NS_EVENTLOG_SOCKET) &&
      memcmp(r->ns, EL_CTL_NS_EVENTLOG_SOCKET, r->ns_len) == 0)
    name = el_ctl_builtin_name(r->cmd);
  if (name) json_object_set_new(o, "command", json_string(name));
  json_object_set_new(o, "bytes", json_string(hex));
  json_t *top = json_pack("{s:o}", "sent", o);
  char *body = top ? json_dumps(top, JSON_COMPACT) : NULL;
  json_decref(top);
  enum MHD_Result rc = answer(s, c, r, MHD_HTTP_OK, body ? body : "{}");
  jfree(body);
  el_log(EL_LOG_DEBUG, "control: sent %s", hex);
  return rc;
}

/* {====== hand-over to the loop thread ======} */

/* Send one job; returns 1 when el_ctl_send was called. */
static int job_run(el_ctl_server_t *s, job_t *j) {
  pthread_mutex_lock(&s->mu);
  int skip = j->abandoned;
  pthread_mutex_unlock(&s->mu);
  int rc = skip ? EL_ECLOSED
                : el_ctl_send(&s->sender, j->ns, j->ns_len, j->cmd);
  pthread_mutex_lock(&s->mu);
  if (j->abandoned) {
    el_free(j);
  } else {
    j->rc = rc;
    j->done = 1;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return !skip;
}

static void on_pace(uv_timer_t *t);

/* Loop thread: send the next queued job, at most one per GAP_MS, so that
 * messages reach the program one at a time: its control parser can abort
 * when a 256-byte read starts inside a namespace, which takes a backlog of
 * pipelined messages (spec/eventlog-format.md §5.7). */
static void pump(el_ctl_server_t *s) {
  /* The loop's cached time may be a long iteration old: the gap is
   * measured from now, as the program sees it. */
  uv_update_time(s->async.loop);
  uint64_t now = uv_now(s->async.loop);
  if (now < s->next_send_ms) {
    uv_timer_start(&s->pace, on_pace, s->next_send_ms - now, 0);
    return;
  }
  pthread_mutex_lock(&s->mu);
  job_t *j = s->head;
  if (j) {
    s->head = j->next;
    if (s->head == NULL) s->tail = NULL;
    s->queued--;
  }
  int more = s->head != NULL;
  pthread_mutex_unlock(&s->mu);
  if (j == NULL) return;
  if (job_run(s, j)) s->next_send_ms = now + GAP_MS;
  if (more) uv_timer_start(&s->pace, on_pace, GAP_MS, 0);
}

static void on_pace(uv_timer_t *t) { pump(t->data); }

static void on_async(uv_async_t *a) { pump(a->data); }

static void deadline_after(struct timespec *ts, long ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* HTTP thread: have the loop thread send (ns, cmd) and wait for the
 * result. Returns el_ctl_send's result, -EBUSY when the queue is full,
 * -ETIMEDOUT when the loop did not answer in time, -ESHUTDOWN when the
 * server is stopping. */
static int dispatch(el_ctl_server_t *s, const req_t *r) {
  if (!s->has_loop) return el_ctl_send(&s->sender, r->ns, r->ns_len, r->cmd);
  job_t *j = el_calloc(1, sizeof *j);
  if (j == NULL) return EL_ENOMEM;
  memcpy(j->ns, r->ns, r->ns_len);
  j->ns_len = r->ns_len;
  j->cmd = r->cmd;
  pthread_mutex_lock(&s->mu);
  if (s->stopping || s->queued >= QUEUE_MAX) {
    int rc = s->stopping ? -ESHUTDOWN : -EBUSY;
    pthread_mutex_unlock(&s->mu);
    el_free(j);
    return rc;
  }
  if (s->tail) s->tail->next = j;
  else s->head = j;
  s->tail = j;
  s->queued++;
  pthread_mutex_unlock(&s->mu);
  uv_async_send(&s->async);

  struct timespec dl;
  deadline_after(&dl, WAIT_MS);
  pthread_mutex_lock(&s->mu);
  while (!j->done && !s->stopping)
    if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT) break;
  int rc;
  if (j->done) {
    rc = j->rc;
    el_free(j);
  } else {
    rc = s->stopping ? -ESHUTDOWN : -ETIMEDOUT;
    j->abandoned = 1; /* still queued or running: the loop frees it */
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

/* {====== routing ======} */

/* Parse a decimal command id (digits only); -1 when not a number. */
static int parse_id(const char *p) {
  int v = 0;
  if (*p == '\0') return -1;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    if (v < 1000) v = v * 10 + (*p - '0');
  }
  return v;
}

/* Route the request. Returns 0 when it is a control POST to go on with
 * (r->ns, r->cmd set); otherwise the answer has been queued (or failed)
 * and *rc holds the handler's return value. */
static int route(el_ctl_server_t *s, struct MHD_Connection *c, req_t *r,
                 const char *url, const char *method, enum MHD_Result *rc) {
  if (strcmp(url, "/health") == 0) {
    if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
      *rc = answer(s, c, r, MHD_HTTP_OK, "[]");
    else
      *rc = answer_ex(s, c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
                      "{\"error-message\":\"method not allowed: use GET\"}",
                      "Allow", "GET, HEAD");
    return 1;
  }
  const char *rest = strncmp(url, "/control/", 9) == 0 ? url + 9 : NULL;
  const char *slash = rest ? strchr(rest, '/') : NULL;
  if (slash == NULL || strchr(slash + 1, '/') != NULL) {
    *rc = answer_error(s, c, r, MHD_HTTP_NOT_FOUND, "no such route: ", url,
                       strlen(url));
    return 1;
  }
  size_t ns_len = (size_t)(slash - rest);
  const char *tail = slash + 1;
  int builtin = ns_len == strlen(EL_CTL_NS_EVENTLOG_SOCKET) &&
                memcmp(rest, EL_CTL_NS_EVENTLOG_SOCKET, ns_len) == 0;
  int id = builtin ? el_ctl_builtin_id(tail, strlen(tail)) : parse_id(tail);
  if (builtin && id == 0) {
    *rc = answer_error(s, c, r, MHD_HTTP_NOT_FOUND,
                       "unknown eventlog-socket command: ", tail,
                       strlen(tail));
    return 1;
  }
  if (strcmp(method, "OPTIONS") == 0) {
    /* Reached only when CORS did not answer: the reference's handler for
     * malformed preflights. */
    if (s->opts.ignore_failure) {
      r->cors.allow_origin = NULL;
      struct MHD_Response *resp =
          MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
      if (resp == NULL) return (*rc = MHD_NO), 1;
      MHD_add_response_header(resp, "Access-Control-Allow-Origin", "*");
      MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                              "GET, POST");
      MHD_add_response_header(resp, "Access-Control-Allow-Headers", "*");
      *rc = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, resp);
      MHD_destroy_response(resp);
      r->answered = 1;
      count(s, MHD_HTTP_NO_CONTENT);
    } else {
      *rc = answer_error(s, c, r, MHD_HTTP_BAD_REQUEST,
                         "bad CORS preflight request", NULL, 0);
    }
    return 1;
  }
  if (strcmp(method, "POST") != 0) {
    *rc = answer_ex(s, c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
                    "{\"error-message\":\"method not allowed: use POST\"}",
                    "Allow", "POST, OPTIONS");
    return 1;
  }
  if (ns_len == 0 || ns_len > EL_CTL_NS_MAX) {
    *rc = answer_error(s, c, r, MHD_HTTP_BAD_REQUEST,
                       "the namespace must be 1..255 bytes", NULL, 0);
    return 1;
  }
  if (id < 1 || id > 255) {
    *rc = answer_error(s, c, r, MHD_HTTP_BAD_REQUEST,
                       "the command id must be an integer 1..255, not ",
                       tail, strlen(tail));
    return 1;
  }
  memcpy(r->ns, rest, ns_len);
  r->ns_len = ns_len;
  r->cmd = id;
  return 0;
}

/* {====== request body ======} */

/* Keep the first value of the form field "service-name". */
static enum MHD_Result on_field(void *cls, enum MHD_ValueKind kind,
                                const char *key, const char *filename,
                                const char *ctype, const char *enc,
                                const char *data, uint64_t off, size_t size) {
  req_t *r = cls;
  if (strcmp(key, "service-name") != 0) {
    if (r->svc_seen) r->svc_done = 1;
    return MHD_YES;
  }
  if (off == 0 && r->svc_seen) r->svc_done = 1; /* a second occurrence */
  r->svc_seen = 1;
  if (r->svc_done || size == 0) return MHD_YES;
  if (r->svc_len + size > BODY_MAX) return MHD_NO;
  char *p = el_realloc(r->svc, r->svc_len + size + 1);
  if (p == NULL) return MHD_NO;
  memcpy(p + r->svc_len, data, size);
  r->svc = p;
  r->svc_len += size;
  p[r->svc_len] = '\0';
  return MHD_YES;
}

/* Does Content-Type ct name the media type mt (ignoring parameters)? */
static int is_type(const char *ct, const char *mt) {
  size_t n = strlen(mt);
  return strncasecmp(ct, mt, n) == 0 &&
         (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Set up the body parser; returns 0, or 1 after queueing an error. */
static int body_begin(el_ctl_server_t *s, struct MHD_Connection *c,
                      req_t *r, enum MHD_Result *rc) {
  const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                               "Content-Length");
  if (cl && strtoull(cl, NULL, 10) > BODY_MAX) {
    *rc = answer_error(s, c, r, MHD_HTTP_CONTENT_TOO_LARGE,
                       "request body too large", NULL, 0);
    return 1;
  }
  const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                               "Content-Type");
  if (ct == NULL) return 0; /* no body expected: service-name missing */
  if (is_type(ct, "application/json")) {
    r->json = 1;
    return 0;
  }
  if (is_type(ct, MHD_HTTP_POST_ENCODING_FORM_URLENCODED) ||
      is_type(ct, MHD_HTTP_POST_ENCODING_MULTIPART_FORMDATA)) {
    r->pp = MHD_create_post_processor(c, 1024, on_field, r);
    if (r->pp == NULL) r->malformed = 1; /* e.g. multipart, no boundary */
    return 0;
  }
  *rc = answer_error(s, c, r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                     "unsupported Content-Type: ", ct, strlen(ct));
  return 1;
}

static enum MHD_Result body_feed(el_ctl_server_t *s, struct MHD_Connection *c,
                                 req_t *r, const char *data, size_t *size) {
  size_t n = *size;
  *size = 0;
  if (r->body_len + n > BODY_MAX) {
    /* A chunked body (no Content-Length to refuse up front): discard up
     * to DISCARD_MAX bytes, answer 413 at the end; close beyond that. */
    r->too_large = 1;
    r->body_len = BODY_MAX + 1;
    r->discarded += n;
    return r->discarded > DISCARD_MAX ? MHD_NO : MHD_YES;
  }
  if (r->json) {
    char *p = el_realloc(r->body, r->body_len + n);
    if (p == NULL) return MHD_NO;
    memcpy(p + r->body_len, data, n);
    r->body = p;
  } else if (r->pp && !r->malformed) {
    if (MHD_post_process(r->pp, data, n) != MHD_YES) r->malformed = 1;
  }
  r->body_len += n;
  return MHD_YES;
}

/* Take service-name from the JSON body {"service-name": "..."}. */
static int json_service(req_t *r) {
  json_error_t err;
  json_t *root = json_loadb(r->body ? r->body : "", r->body_len, 0, &err);
  if (root == NULL) return EL_EINVAL;
  json_t *v = json_object_get(root, "service-name");
  int rc = 0;
  if (json_is_string(v)) {
    size_t len = json_string_length(v);
    r->svc = el_strndup(json_string_value(v), len);
    if (r->svc == NULL) rc = EL_ENOMEM;
    r->svc_len = len;
    r->svc_seen = 1;
  }
  json_decref(root);
  return rc;
}

/* {====== the handler ======} */

static enum MHD_Result finish(el_ctl_server_t *s, struct MHD_Connection *c,
                              req_t *r) {
  if (r->pp && !r->malformed && MHD_destroy_post_processor(r->pp) != MHD_YES)
    r->malformed = 1;
  else if (r->pp && r->malformed)
    MHD_destroy_post_processor(r->pp);
  r->pp = NULL;
  if (r->too_large)
    return answer_error(s, c, r, MHD_HTTP_CONTENT_TOO_LARGE,
                        "request body too large", NULL, 0);
  if (r->json && json_service(r) < 0) r->malformed = 1;
  if (r->malformed)
    return answer_error(s, c, r, MHD_HTTP_BAD_REQUEST, "malformed body",
                        NULL, 0);
  if (!r->svc_seen)
    return answer_error(s, c, r, MHD_HTTP_BAD_REQUEST,
                        "missing form field service-name", NULL, 0);
  const char *svc = r->svc ? r->svc : "";
  if (r->svc_len != strlen(s->service) ||
      memcmp(svc, s->service, r->svc_len) != 0)
    return answer_error(s, c, r, MHD_HTTP_NOT_FOUND,
                        "Could not find eventlog socket for service ", svc,
                        r->svc_len);
  el_log(EL_LOG_DEBUG, "Received request on /control/%.*s with command ID "
         "%d for %s.", (int)r->ns_len, r->ns, r->cmd, s->service);
  int rc = dispatch(s, r);
  if (rc == 0) return answer_sent(s, c, r);
  if (rc == EL_ECLOSED)
    return answer_error(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                        "no eventlog socket connection is open for service ",
                        svc, r->svc_len);
  if (rc == -ETIMEDOUT || rc == -EBUSY || rc == -ESHUTDOWN ||
      rc == EL_ENOMEM) /* EL_ENOMEM: the source's send queue is full */
    return answer_error(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
                        rc == -ESHUTDOWN ? "the server is stopping"
                                         : "the daemon is busy; try again",
                        NULL, 0);
  const char *why = el_strerror(rc);
  return answer_error(s, c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                      "sending failed: ", why, strlen(why));
}

static enum MHD_Result begin(el_ctl_server_t *s, struct MHD_Connection *c,
                             req_t *r, const char *url, const char *method) {
  el__ctl_cors_decide(
      &s->opts, method,
      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"),
      MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                  "Access-Control-Request-Method"),
      MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                  "Access-Control-Request-Headers"),
      &r->cors);
  el_log(EL_LOG_DEBUG, "control: %s %s", method, url);
  if (r->cors.action == EL__CORS_FAIL) {
    r->cors.allow_origin = NULL;
    return answer_error(s, c, r, MHD_HTTP_BAD_REQUEST, r->cors.error, NULL,
                        0);
  }
  if (r->cors.action == EL__CORS_PREFLIGHT)
    return answer(s, c, r, MHD_HTTP_OK, NULL);
  enum MHD_Result rc = MHD_YES;
  if (route(s, c, r, url, method, &rc)) return rc;
  if (body_begin(s, c, r, &rc)) return rc;
  return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *data,
                                  size_t *size, void **con_cls) {
  el_ctl_server_t *s = cls;
  req_t *r = *con_cls;
  if (r == NULL) {
    r = el_calloc(1, sizeof *r);
    if (r == NULL) return MHD_NO;
    *con_cls = r;
    return begin(s, c, r, url, method);
  }
  if (r->answered) {
    *size = 0;
    return MHD_YES;
  }
  if (*size > 0) return body_feed(s, c, r, data, size);
  return finish(s, c, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why) {
  req_t *r = *con_cls;
  if (r == NULL) return;
  if (r->pp) MHD_destroy_post_processor(r->pp);
  el_free(r->body);
  el_free(r->svc);
  el_free(r);
  *con_cls = NULL;
}

/* {====== lifetime ======} */

static int copy_opts(el_ctl_opts_t *dst, const el_ctl_opts_t *src) {
  *dst = *src;
  dst->allow_origins = NULL;
  dst->n_allow_origins = 0;
  if (src->allow_origins == NULL) return 0;
  dst->allow_origins = el_calloc(src->n_allow_origins + 1, sizeof(char *));
  if (dst->allow_origins == NULL) return EL_ENOMEM;
  for (size_t k = 0; k < src->n_allow_origins; k++) {
    dst->allow_origins[k] = el_strdup(src->allow_origins[k]);
    if (dst->allow_origins[k] == NULL) return EL_ENOMEM;
    dst->n_allow_origins++;
  }
  return 0;
}

static int start_http(el_ctl_server_t *s) {
  el_ctl_httpd_conf_t hc = {
      .name = "control server", .option = "--control-host",
      .host = s->opts.host, .port = s->opts.port,
      .handler = on_request, .handler_cls = s,
      .completed = on_completed, .completed_cls = s,
      .health = false}; /* GET /health is a route of ours (with CORS) */
  el_ctl_httpd_limits_default(&hc.limits);
  return el_ctl_httpd_start(&hc, &s->http);
}

static void release(el_ctl_server_t *s) {
  while (s->head) {
    job_t *j = s->head;
    s->head = j->next;
    el_free(j);
  }
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  el_ctl_opts_close(&s->opts);
  el_free(s->service);
  el_free(s);
}

static void on_closed(uv_handle_t *h) {
  el_ctl_server_t *s = h->data;
  if (--s->open_handles == 0) release(s);
}

int el_ctl_server_start(void *loop, const el_ctl_opts_t *opts,
                        const char *service_name, el_ctl_sender_t sender,
                        el_ctl_server_t **out) {
  if (opts == NULL || service_name == NULL || out == NULL) return EL_EINVAL;
  el_ctl_server_t *s = el_calloc(1, sizeof *s);
  if (s == NULL) return EL_ENOMEM;
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  s->sender = sender;
  int rc = copy_opts(&s->opts, opts);
  s->service = el_strdup(service_name);
  if (rc < 0 || s->service == NULL) {
    release(s);
    return EL_ENOMEM;
  }
  rc = start_http(s); /* logs what failed, with the address */
  if (rc < 0) {
    release(s);
    return rc;
  }
  s->port = el_ctl_httpd_port(s->http);
  if (loop) {
    /* Loop thread: uv_async_init is safe here, and the HTTP threads only
     * call uv_async_send, which is thread-safe. */
    rc = uv_async_init(loop, &s->async, on_async);
    if (rc < 0) {
      el_ctl_httpd_stop(s->http);
      release(s);
      return rc;
    }
    uv_timer_init(loop, &s->pace); /* cannot fail */
    s->async.data = s->pace.data = s;
    uv_unref((uv_handle_t *)&s->async);
    uv_unref((uv_handle_t *)&s->pace);
    s->open_handles = 2;
    s->has_loop = 1;
  }
  el_log(EL_LOG_INFO, "Starting control server on %d", s->port);
  *out = s;
  return 0;
}

int el_ctl_server_port(const el_ctl_server_t *s) { return s->port; }

void el_ctl_server_http_stats(const el_ctl_server_t *s,
                              el_ctl_httpd_stats_t *out) {
  el_ctl_httpd_stats(s->http, out);
}

void el_ctl_server_counts(const el_ctl_server_t *s, uint64_t out[3]) {
  for (int k = 0; k < 3; k++)
    out[k] = atomic_load(&((el_ctl_server_t *)s)->counts[k]);
}

void el_ctl_server_free(el_ctl_server_t *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&s->mu);
  s->stopping = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  el_ctl_httpd_stop(s->http); /* joins every HTTP thread */
  s->http = NULL;
  if (s->has_loop) {
    uv_close((uv_handle_t *)&s->async, on_closed);
    uv_close((uv_handle_t *)&s->pace, on_closed);
  }
  else
    release(s);
}
