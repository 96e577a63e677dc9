/* exp_http.c: OTLP/HTTP transport with binary protobuf bodies, through
 * libcurl: one easy handle per signal (reused, so the connection is kept
 * alive), POST of the serialized request to the signal's URL with
 * Content-Type: application/x-protobuf, optional gzip body (zlib,
 * Content-Encoding: gzip), extra headers from OTEL_EXPORTER_OTLP_HEADERS,
 * a response timeout, TLS verification against the system store or the
 * configured CA file, and Retry-After (seconds or HTTP date, parsed by
 * libcurl) on 429/502/503/504.
 * Spec: reference-behaviour.md §1.4, §7; OTLP specification "OTLP/HTTP". */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <zlib.h>

#include "../common/el_grow.h"
#include "export_queue.h"
#include "otlp_plugin.h"
#include "google/rpc/status.pb-c.h"
#include "otlp_encode.h"

#define MAX_RESPONSE_BYTES ((size_t)1 << 20)
/* The longest wait of a request in flight for its peer (ms), after which
 * it reads its abort flag unwoken. The exporter's stop wakes it at once
 * (http_wake), so this bounds the shutdown only if that wake-up failed;
 * libcurl's own timers (the call's timeout) cut it shorter. */
#define POLL_MS 1000

typedef struct {
  CURL *curl;
  CURLM *multi; /* runs curl's transfers: its connection cache keeps them */
  struct curl_slist *headers;         /* fixed request headers */
  struct curl_slist *headers_gz;      /* the same + Content-Encoding */
  bool gzip;
  char *url;
  uint8_t *resp;                      /* response body of the last call */
  size_t resp_len, resp_cap;
  uint8_t *gz;                        /* compression buffer, reused */
  size_t gz_cap;
  const atomic_int *abort;            /* of the call in progress */
} http_tr_t;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* The OTLP/HTTP retry predicate (OTLP specification, "Failures" and
 * "Throttling" of OTLP/HTTP):
 *   2xx: success (partial_success in the body).
 *   429 Too Many Requests, 502 Bad Gateway, 503 Service Unavailable,
 *     504 Gateway Timeout: retryable, honouring Retry-After when present.
 *   Any other status (400, 401, 403, 404, 413, 500, ...): not retryable.
 *   Transport errors (connection refused or reset, timeouts, nothing
 *     received) are retryable; TLS verification and malformed URLs are
 *     configuration errors and are not. */
static el_xq_verdict_t http_verdict(CURLcode cc, long status) {
  if (cc != CURLE_OK) {
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return EL_XQ_RETRY;
    default:
      return EL_XQ_DROP;
    }
  }
  if (status >= 200 && status < 300) return EL_XQ_OK;
  if (status == 429 || status == 502 || status == 503 || status == 504)
    return EL_XQ_RETRY;
  return EL_XQ_DROP;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  http_tr_t *h = ud;
  size_t len = size * n;
  size_t keep = len;
  if (h->resp_len + keep > MAX_RESPONSE_BYTES)
    keep = MAX_RESPONSE_BYTES - h->resp_len;
  if (el_grow(&h->resp, &h->resp_cap, h->resp_len + keep, 1) < 0)
    return 0;                                 /* aborts the transfer */
  memcpy(h->resp + h->resp_len, p, keep);
  h->resp_len += keep;
  return len;
}

/* Called by libcurl on transfer progress, and while a transfer stalls
 * only about once a second, but also from every curl_multi_perform, which
 * perform calls when http_wake wakes it: a non-zero return aborts
 * the transfer (CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                       curl_off_t un) {
  http_tr_t *h = ud;
  return h->abort && atomic_load(h->abort) ? 1 : 0;
}

/* gzip bytes into h->gz; returns the compressed length or 0 on failure. */
static size_t gzip_body(http_tr_t *h, const uint8_t *bytes, size_t len) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return 0;
  size_t bound = deflateBound(&z, len) + 32;
  if (el_grow(&h->gz, &h->gz_cap, bound, 1) < 0) {
    deflateEnd(&z);
    return 0;
  }
  z.next_in = (Bytef *)bytes;
  z.avail_in = (uInt)len;
  z.next_out = h->gz;
  z.avail_out = (uInt)bound;
  int zr = deflate(&z, Z_FINISH);
  size_t out = zr == Z_STREAM_END ? z.total_out : 0;
  deflateEnd(&z);
  return out;
}

/* The message of a google.rpc.Status body (OTLP/HTTP: a failed request's
 * body, Content-Type application/x-protobuf), or NULL: not one, or no
 * printable message. *st is to be freed with
 * google__rpc__status__free_unpacked. */
static const char *status_message(const uint8_t *b, size_t n,
                                  Google__Rpc__Status **st) {
  *st = b && n ? google__rpc__status__unpack(NULL, n, b) : NULL;
  const char *m = *st ? (*st)->message : NULL;
  if (!m || !*m) return NULL;
  for (const unsigned char *p = (const unsigned char *)m; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return NULL;
  return m;
}

/* res->msg for a failed request: "HTTP <status> from <url>: " and the
 * Status message of a protobuf body (h70: its raw bytes were printed,
 * control bytes included), else the body's first 200 bytes with control
 * bytes shown as spaces. */
static void error_body(const http_tr_t *h, long status, el_xq_result_t *res) {
  Google__Rpc__Status *st;
  const char *m = status_message(h->resp, h->resp_len, &st);
  if (m) {
    snprintf(res->msg, sizeof res->msg, "HTTP %ld from %s: %s (status %d)",
             status, h->url, m, (int)st->code);
  } else {
    int shown = (int)(h->resp_len < 200 ? h->resp_len : 200);
    snprintf(res->msg, sizeof res->msg, "HTTP %ld from %s: %.*s", status,
             h->url, shown, h->resp ? (const char *)h->resp : "");
    for (unsigned char *p = (unsigned char *)res->msg; *p; p++)
      if (*p < 0x20 || *p == 0x7f) *p = ' ';
  }
  if (st) google__rpc__status__free_unpacked(st, NULL);
}

/* curl_easy_perform of h->curl, run through h->multi so that the abort
 * flag of the call is read as soon as http_wake wakes curl_multi_poll
 * (on_progress, in curl_multi_perform), and at least every POLL_MS: a
 * collector that accepts and never answers kept the exporter's shutdown
 * past its budget by up to a second (h83), since libcurl calls the
 * progress callback about once a second while a transfer stalls; and a
 * stalled request woke its sender 20 times a second to look (h87), when
 * the flag was polled every 50 ms. Returns the transfer's code (CURLE_ABORTED_BY_CALLBACK when the
 * flag was set), or CURLE_RECV_ERROR with *local set and errbuf saying
 * why when libcurl's multi interface itself failed (then retried, as a
 * transport error). Without the multi handle (curl_multi_add_handle
 * failed: out of memory) it runs curl_easy_perform, with a warning. */
static CURLcode perform(http_tr_t *h, char *errbuf, bool *local) {
  CURLMcode mc = curl_multi_add_handle(h->multi, h->curl);
  *local = false;
  if (mc != CURLM_OK) {
    el_log(EL_LOG_WARN,
           "OTLP/HTTP: %s (%s): this request runs without it, and is "
           "abandoned at shutdown only at libcurl's next progress call",
           curl_multi_strerror(mc), h->url);
    return curl_easy_perform(h->curl);
  }
  CURLcode cc = CURLE_OK;
  for (;;) {
    int running = 0, left;
    mc = curl_multi_perform(h->multi, &running);
    CURLMsg *m;
    bool done = false;
    while ((m = curl_multi_info_read(h->multi, &left)) != NULL)
      if (m->msg == CURLMSG_DONE && m->easy_handle == h->curl) {
        cc = m->data.result;
        done = true;
      }
    if (done) break;
    if (mc == CURLM_OK && running && h->abort && atomic_load(h->abort)) {
      cc = CURLE_ABORTED_BY_CALLBACK; /* (on_progress sees it first) */
      break;
    }
    if (mc == CURLM_OK && running)
      mc = curl_multi_poll(h->multi, NULL, 0, POLL_MS, NULL);
    if (mc != CURLM_OK || !running) { /* no result: not expected */
      cc = CURLE_RECV_ERROR;
      *local = true;
      snprintf(errbuf, CURL_ERROR_SIZE, "%s",
               mc != CURLM_OK ? curl_multi_strerror(mc)
                              : "the transfer ended without a result");
      break;
    }
  }
  curl_multi_remove_handle(h->multi, h->curl);
  return cc;
}

static void http_send(void *ud, el_tm_signal_t sig, const uint8_t *bytes,
                      size_t len, const atomic_int *abort,
                      el_xq_result_t *res) {
  http_tr_t *h = ud;
  const uint8_t *body = bytes;
  size_t body_len = len;
  bool gz = false;
  if (h->gzip && len <= UINT_MAX) {
    size_t n = gzip_body(h, bytes, len);
    if (n) {
      body = h->gz;
      body_len = n;
      gz = true;
    }
  }
  h->resp_len = 0;
  h->abort = abort;
  curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER,
                   gz ? h->headers_gz : h->headers);
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, (const char *)body);
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   (curl_off_t)body_len);
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, errbuf);
  bool local;
  CURLcode cc = perform(h, errbuf, &local);
  long status = 0;
  curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
  h->abort = NULL;
  res->verdict = http_verdict(cc, status);
  res->retry_after_ms = -1;
  if (cc == CURLE_ABORTED_BY_CALLBACK && abort && atomic_load(abort)) {
    /* (not libcurl's "Callback aborted": the exporter stopped it) */
    snprintf(res->msg, sizeof res->msg, "given up at shutdown (%s)", h->url);
    return;
  }
  if (local) {
    snprintf(res->msg, sizeof res->msg, "libcurl's multi interface: %s (%s)",
             errbuf, h->url);
    return;
  }
  if (cc != CURLE_OK) {
    /* An HTTP/2-only peer (a gRPC port) answers HTTP/1.1 with bytes curl
     * reads as HTTP/0.9: name the likely mix-up. */
    const char *hint = strstr(errbuf, "HTTP/0.9")
                           ? "; is this a gRPC port? OTLP/HTTP is usually "
                             "on 4318, OTLP/gRPC on 4317 "
                             "(OTEL_EXPORTER_OTLP_PROTOCOL=grpc)"
                           : "";
    snprintf(res->msg, sizeof res->msg, "%s: %s (%s)%s", curl_easy_strerror(cc),
             errbuf, h->url, hint);
    return;
  }
  if (res->verdict == EL_XQ_OK) {
    if (el__otlp_parse_response(sig, h->resp, h->resp_len, res) < 0)
      snprintf(res->msg, sizeof res->msg, "malformed HTTP response body "
               "(%zu bytes) from %s", h->resp_len, h->url);
    return;
  }
  if (res->verdict == EL_XQ_RETRY) {
    curl_off_t ra = -1;
    if (curl_easy_getinfo(h->curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
        ra > 0)
      res->retry_after_ms = ra > INT_MAX / 1000 ? INT_MAX : (int)ra * 1000;
  }
  error_body(h, status, res);
}

/* el_xq_transport_t.wake: the exporter set the abort flag; a perform
 * waiting in curl_multi_poll returns now (curl_multi_wakeup: thread-safe,
 * and it wakes the next poll when none waits). */
static void http_wake(void *ud) {
  http_tr_t *h = ud;
  if (h && h->multi) curl_multi_wakeup(h->multi);
}

static void http_tr_free(void *ud) {
  http_tr_t *h = ud;
  if (!h) return;
  if (h->curl) curl_easy_cleanup(h->curl);
  if (h->multi) curl_multi_cleanup(h->multi);
  curl_slist_free_all(h->headers);
  curl_slist_free_all(h->headers_gz);
  el_free(h->url);
  el_free(h->resp);
  el_free(h->gz);
  el_free(h);
}

static int build_headers(http_tr_t *h, const el_otlp_signal_cfg_t *sc) {
  const char *fixed[] = {"Content-Type: application/x-protobuf",
                         "Accept: application/x-protobuf", "Expect:"};
  for (int pass = 0; pass < 2; pass++) {
    struct curl_slist *l = NULL, *t;
    for (size_t i = 0; i < EL_ARRAY_LEN(fixed); i++) {
      if (!(t = curl_slist_append(l, fixed[i]))) goto fail;
      l = t;
    }
    for (size_t i = 0; i < sc->nheaders; i++) {
      size_t n = strlen(sc->headers[i].name) + strlen(sc->headers[i].value);
      char *line = el_malloc(n + 3);
      if (!line) goto fail;
      snprintf(line, n + 3, "%s: %s", sc->headers[i].name,
               sc->headers[i].value);
      t = curl_slist_append(l, line);             /* copies line */
      el_free(line);
      if (!t) goto fail;
      l = t;
    }
    if (pass == 1) {
      if (!(t = curl_slist_append(l, "Content-Encoding: gzip"))) goto fail;
      l = t;
      h->headers_gz = l;
    } else {
      h->headers = l;
    }
    continue;
  fail:
    curl_slist_free_all(l);
    return EL_ENOMEM;
  }
  return 0;
}

int el__otlp_http_new(const el_otlp_signal_cfg_t *sc, el_tm_signal_t sig,
                      el_xq_transport_t *out) {
  pthread_once(&curl_once, curl_init_once);
  http_tr_t *h = el_calloc(1, sizeof *h);
  if (!h) return EL_ENOMEM;
  h->gzip = sc->compression == EL_OTLP_COMPRESS_GZIP;
  h->url = el_strdup(sc->target ? sc->target : "http://localhost:4318");
  h->curl = curl_easy_init();
  h->multi = curl_multi_init();
  int rc = h->url && h->curl && h->multi ? build_headers(h, sc) : EL_ENOMEM;
  if (rc < 0) {
    http_tr_free(h);
    return rc;
  }
  CURL *c = h->curl;
  curl_easy_setopt(c, CURLOPT_URL, h->url);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)sc->timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   (long)(sc->timeout_ms > 0 && sc->timeout_ms < 10000
                              ? sc->timeout_ms : 10000));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "eventlog-live/" EL_VERSION);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
#if LIBCURL_VERSION_NUM >= 0x075700
  /* A transfer removed while its name is being resolved does not wait for
   * the resolver's thread (getaddrinfo, which may take 10 s and more):
   * the shutdown budget and the call timeout hold then too (h87). The
   * thread is left to end by itself. */
  curl_easy_setopt(c, CURLOPT_QUICK_EXIT, 1L);
#endif
  if (sc->certificate) curl_easy_setopt(c, CURLOPT_CAINFO, sc->certificate);
  el_log(EL_LOG_DEBUG, "OTLP HTTP/protobuf exporter (%s): %s",
         el_otlp_signal_name(sig), h->url);
  out->ud = h;
  out->name = "http";
  out->send = http_send;
  out->free = http_tr_free;
  out->wake = http_wake;
  return 0;
}

/* {====== plugin ======} */

/* curl's string as an el_malloc'd copy (NULL stays NULL); frees it. */
static char *url_part(char *c, bool *oom) {
  char *r = c ? el_strdup(c) : NULL;
  if (c && !r) *oom = true;
  curl_free(c);
  return r;
}

/* url_split of the table (otlp_plugin.h), with libcurl's URL API. */
static int url_split(const char *url, el_otlp_url_t *u) {
  memset(u, 0, sizeof *u);
  CURLU *h = curl_url();
  if (!h) return EL_ENOMEM;
  if (curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) !=
      CURLUE_OK) {
    curl_url_cleanup(h);
    return -1;
  }
  char *p[6] = {NULL};
  static const CURLUPart part[6] = {CURLUPART_SCHEME, CURLUPART_HOST,
                                    CURLUPART_PORT,   CURLUPART_PATH,
                                    CURLUPART_QUERY,  CURLUPART_USER};
  for (int i = 0; i < 6; i++) curl_url_get(h, part[i], &p[i], 0);
  curl_url_cleanup(h);
  bool oom = false;
  u->scheme = url_part(p[0], &oom);
  u->host = url_part(p[1], &oom);
  u->port = url_part(p[2], &oom);
  u->path = url_part(p[3], &oom);
  u->query = url_part(p[4], &oom);
  u->user = url_part(p[5], &oom);
  if (!oom) return 0;
  el__otlp_url_free(u);
  return EL_ENOMEM;
}

const el_otlp_transport_plugin_t el_plugin_otlp_http = {
    {EL_OTLP_TRANSPORT_ABI, "otlp-http"}, el__otlp_http_new, url_split};
