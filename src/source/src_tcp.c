/* src_tcp.c: --eventlog-socket-host H --eventlog-socket-port P, TCP to
 * eventlog-socket (spec/eventlog-format.md §5.2). The host and port
 * (a number or a service name) are resolved with getaddrinfo (AF_UNSPEC,
 * so IPv4 and IPv6) at every attempt; the addresses are tried in order and
 * the attempt fails when none accepts. */
#include <string.h>

#include "source_internal.h"

static void try_next(el_src_t *s);

static void drop_addrs(el_src_t *s) {
  if (s->ai_list)
    uv_freeaddrinfo(s->ai_list);
  s->ai_list = s->ai_next = NULL;
}

/* The handle of a failed address has closed: try the next address. */
static void closed_then_next(uv_handle_t *h) {
  el_src_t *s = h->data;
  int go_on = s->state == SRC_OPENING;  /* s may be freed when closing */
  el__src_handle_closed(h);
  if (go_on)
    try_next(s);
}

static void connect_cb(uv_connect_t *req, int status) {
  el_src_t *s = req->data;
  if (status == UV_ECANCELED || s->state != SRC_OPENING)
    return;
  if (status < 0) {
    s->last_error = status;
    s->h_open = 0;
    s->pending_closes++;
    uv_close(&s->h.handle, closed_then_next);
    return;
  }
  drop_addrs(s);
  uv_tcp_nodelay(&s->h.tcp, 1);
  el__src_opened(s);
}

static void try_next(el_src_t *s) {
  struct addrinfo *ai = s->ai_next;
  if (!ai) {
    drop_addrs(s);
    el__src_open_failed(s, s->last_error ? s->last_error : UV_ECONNREFUSED);
    return;
  }
  s->ai_next = ai->ai_next;
  int rc = uv_tcp_init(s->loop, &s->h.tcp);
  if (rc < 0) {
    drop_addrs(s);
    el__src_open_failed(s, rc);
    return;
  }
  s->h.handle.data = s;
  s->h_open = 1;
  s->connect_req.data = s;
  rc = uv_tcp_connect(&s->connect_req, &s->h.tcp, ai->ai_addr, connect_cb);
  if (rc < 0) {
    s->last_error = rc;
    s->h_open = 0;
    s->pending_closes++;
    uv_close(&s->h.handle, closed_then_next);
  }
}

static void gai_cb(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  el_src_t *s = req->data;
  s->gai_pending = 0;
  if (s->state != SRC_OPENING) {
    if (res)
      uv_freeaddrinfo(res);
    if (s->state == SRC_CLOSING)
      el__src_check_finish(s);
    return;
  }
  if (status < 0) {
    el__src_open_failed(s, status);
    return;
  }
  s->ai_list = s->ai_next = res;
  s->last_error = 0;
  try_next(s);
}

static int tcp_open(el_src_t *s) {
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  s->gai_req.data = s;
  int rc = uv_getaddrinfo(s->loop, &s->gai_req, gai_cb, s->host, s->port,
                          &hints);
  if (rc == 0)
    s->gai_pending = 1;
  return rc;
}

static int tcp_close(el_src_t *s) {
  if (s->gai_pending)
    uv_cancel((uv_req_t *)&s->gai_req);
  drop_addrs(s);
  return el__src_close_stream(s);
}

const el__src_vt_t el__src_tcp_vt = {
    .name = "tcp",
    .is_socket = 1,
    .open = tcp_open,
    .pause = el__src_stream_pause,
    .resume = el__src_stream_resume,
    .close = tcp_close,
};
