/* httpd.h: one libmicrohttpd server with the daemon's protections, shared
 * by the control server (ctl_server.c) and the Prometheus endpoint and web
 * view (src/web/web_http.c). docs/security.md describes the behaviour;
 * this header is the contract.
 *
 * What it adds to a plain MHD_start_daemon:
 *   - it binds one address, 127.0.0.1 unless told otherwise (a numeric
 *     IPv4 or IPv6 address, or a name resolved once at start);
 *   - it tracks every connection (MHD_OPTION_NOTIFY_CONNECTION) and
 *     closes it when it misses a deadline: the request line and headers
 *     must arrive within header_ms, and the whole exchange (headers, body,
 *     answer) must end within request_ms, both counted from the connect or
 *     from the end of the previous answer on a kept-alive connection. A
 *     client that trickles a byte every few seconds is cut off; libmicro-
 *     httpd's own idle timeout (MHD_OPTION_CONNECTION_TIMEOUT) is kept too;
 *   - it admits at most `conns` connections for normal service, at most
 *     `conns_per_ip` of them from one client address (the host's own
 *     127.0.0.1 and ::1 are exempt: every local client shares them);
 *   - when those are taken, a new connection first displaces the oldest
 *     one that has been waiting for its headers for evict_after_ms or more
 *     (a slow or idle client; of the same address when the per-address
 *     limit is the one reached); otherwise it lands in a small reserve
 *     (`reserve` connections, `reserve_per_ip` per address, reserve_ms to
 *     finish) where GET /health is answered 200 and anything else 503 with
 *     Retry-After; past the reserve it is closed at once (the accept
 *     policy callback refuses it, so no thread is started for it);
 *   - GET or HEAD /health answers 200 `[]` on every connection when
 *     `health` is set (servers that have no /health route of their own),
 *     and always in the reserve.
 * Everything dropped is counted (el_ctl_httpd_stats), the first event of
 * each kind is logged at WARN and a summary when the server stops.
 *
 * Threads: libmicrohttpd's listening thread, one thread per connection,
 * and one watchdog thread per server that enforces the deadlines (it
 * shuts the socket down; libmicrohttpd then closes and frees the
 * connection on its own thread). */
#ifndef EL_CTL_HTTPD_H
#define EL_CTL_HTTPD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "control/control.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The address every server binds when no host is given: loopback only. */
#define EL_CTL_HTTPD_DEFAULT_HOST "127.0.0.1"

/* Limits of one server (docs/security.md "Limits"). Times in ms. */
typedef struct el_ctl_httpd_limits_s {
  unsigned conns;          /* connections served normally at once */
  unsigned conns_per_ip;   /* of those, from one client address; 127.0.0.1
                              and ::1 are exempt */
  unsigned reserve;        /* more connections, answered 503 (or GET
                              /health 200) only */
  unsigned reserve_per_ip; /* of those, from one client address */
  unsigned header_ms;      /* request line and headers within this, from
                              the connect or the end of the last answer */
  unsigned request_ms;     /* the whole exchange within this, same start */
  unsigned reserve_ms;     /* a reserve connection's whole life */
  unsigned evict_after_ms; /* a connection still waiting for its headers
                              after this long may be closed to make room */
} el_ctl_httpd_limits_t;

/* Fill l with the defaults: 256 connections, 64 per address, reserve 32
 * (4 per address), headers within 5 s, the whole exchange within 10 s,
 * reserve connections 2 s, displaceable after 1 s. Cannot fail.
 * Thread: any. */
void el_ctl_httpd_limits_default(el_ctl_httpd_limits_t *l);

/* What one server is: where it listens, who answers, its limits. */
typedef struct el_ctl_httpd_conf_s {
  const char *name;      /* for logs, e.g. "control server"; borrowed for
                            the call (copied) */
  const char *option;    /* the option that sets host, for error messages,
                            e.g. "--control-host"; copied. A port in use
                            is blamed on its "-port" twin (--control-port) */
  const char *host;      /* address or name to bind; NULL or "" means
                            EL_CTL_HTTPD_DEFAULT_HOST; "::" means every
                            interface, IPv6 and IPv4 (IPv4 only when the
                            host has no IPv6), "0.0.0.0" every IPv4 one */
  int port;              /* 0..65535; 0 picks a free port */
  MHD_AccessHandlerCallback handler; /* the server's routes */
  void *handler_cls;
  MHD_RequestCompletedCallback completed; /* may be NULL; not called for
                            requests this layer answered itself */
  void *completed_cls;
  bool health;           /* answer GET/HEAD /health 200 [] on every
                            connection (other methods: 405) */
  el_ctl_httpd_limits_t limits;
} el_ctl_httpd_conf_t;

/* Counters of one server since it started (all connections, not
 * requests, except busy and health). */
typedef struct el_ctl_httpd_stats_s {
  uint64_t accepted;    /* admitted for normal service */
  uint64_t reserve;     /* admitted to the reserve */
  uint64_t busy;        /* requests answered 503 from the reserve */
  uint64_t health;      /* GET /health answered from the reserve */
  uint64_t refused;     /* closed at once: no room, even in the reserve */
  uint64_t evicted;     /* closed to make room: waited >= evict_after_ms
                           for headers */
  uint64_t cut_header;  /* closed: headers not complete by header_ms */
  uint64_t cut_request; /* closed: exchange not over by request_ms (or a
                           reserve connection by reserve_ms) */
  unsigned open;        /* connections open now */
  unsigned open_peak;   /* most open at once */
} el_ctl_httpd_stats_t;

typedef struct el_ctl_httpd_s el_ctl_httpd_t;

/* Resolve conf->host and start the server and its watchdog.
 * conf: read during the call only (strings copied; handler_cls and
 *   completed_cls are borrowed until el_ctl_httpd_stop returns).
 * Returns 0 and *out, or (nothing started, *out untouched):
 *   EL_EINVAL for a NULL argument, bad limits (conns or a deadline 0), or
 *     a host that does not resolve (logged at ERROR, naming conf->option,
 *     the value and the resolver's message);
 *   a negated errno when the address cannot be bound (-EADDRINUSE,
 *     -EADDRNOTAVAIL for an address this host does not have; logged at
 *     ERROR with the address, the port and the option to change: the
 *     "-port" twin of conf->option for -EADDRINUSE / -EACCES, else
 *     conf->option);
 *   EL_ENOMEM.
 * Logs "<name>: listening on <address> port <port>" at INFO. Raises the
 * process's soft RLIMIT_NOFILE by the server's connection capacity (up to
 * the hard limit; a warning when that is too low). An IPv6 address may be
 * written in brackets ("[::1]").
 * Thread: any. Spec: docs/security.md. */
int el_ctl_httpd_start(const el_ctl_httpd_conf_t *conf, el_ctl_httpd_t **out);

/* The bound TCP port (useful after port 0). Thread: any. */
int el_ctl_httpd_port(const el_ctl_httpd_t *h);

/* The bound address in text ("127.0.0.1", "::"). Static for the server's
 * life. Thread: any. */
const char *el_ctl_httpd_address(const el_ctl_httpd_t *h);

/* Copy the counters into *out. Thread: any (takes the server's lock). */
void el_ctl_httpd_stats(el_ctl_httpd_t *h, el_ctl_httpd_stats_t *out);

/* Stop the watchdog and the server (libmicrohttpd closes every connection
 * and joins their threads; completed callbacks run during this call), log
 * the summary of what was dropped, and free h. NULL is allowed.
 * Thread: any but the server's own threads (not from a handler). */
void el_ctl_httpd_stop(el_ctl_httpd_t *h);

/* Check a host option value without resolving it: 1..EL_CTL_HOST_MAX
 * bytes, no spaces or control characters. Returns 0 or EL_EINVAL.
 * Thread: any. */
int el_ctl_host_check(const char *host);

#ifdef __cplusplus
}
#endif
#endif /* EL_CTL_HTTPD_H */
