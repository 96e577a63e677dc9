/* control.h: the control server of eventlog-live. HTTP requests (from the
 * Grafana dashboards' buttons, curl, or Lua scripts) become eventlog-socket
 * control messages written back on the eventlog socket connection.
 *
 * Three layers, each usable alone:
 *   1. el_ctl_encode: the wire format, protocol version 0
 *      (spec/eventlog-format.md §5.7, spec/reference-behaviour.md §8.3).
 *   2. el_ctl_send + el_ctl_sender_t: encode and hand the bytes to a send
 *      callback (the daemon's calls el_src_write). The HTTP server and the
 *      Lua binding (el.control, through el_ctl_host_control) both go
 *      through el_ctl_send.
 *   3. el_ctl_server_t: the HTTP server (libmicrohttpd, its own threads)
 *      with the routes and CORS policy of spec/reference-behaviour.md §8;
 *      each command is handed to the libuv loop thread, where the send
 *      callback runs, so the socket is only ever touched by that thread.
 * The command-line options live in el_ctl_opts_t (el_ctl_opts_parse).
 * See docs/control.md. */
#ifndef EL_CONTROL_H
#define EL_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/el_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default TCP port of the control server: the one every dashboard and
 * example uses (the reference's code default, 30179, is a typo). */
#define EL_CTL_DEFAULT_PORT 30719
/* Longest control message: magic 4, version 1, length 1, namespace 255,
 * command 1. */
#define EL_CTL_MSG_MAX 262
/* Longest namespace, in bytes. */
#define EL_CTL_NS_MAX 255
/* Longest --control-host (and --prometheus-host, --web-host) value: a DNS
 * name is at most 253 bytes. */
#define EL_CTL_HOST_MAX 255
/* The builtin namespace of eventlog-socket (15 bytes, length byte 0x0F). */
#define EL_CTL_NS_EVENTLOG_SOCKET "eventlog-socket"

/* Builtin eventlog-socket commands (spec/eventlog-format.md §5.7). */
enum {
  EL_CTL_START_PROFILING = 1,      /* startProfTimer() */
  EL_CTL_STOP_PROFILING = 2,       /* stopProfTimer() */
  EL_CTL_START_HEAP_PROFILING = 3, /* startHeapProfTimer() */
  EL_CTL_STOP_HEAP_PROFILING = 4,  /* stopHeapProfTimer() */
  EL_CTL_REQUEST_HEAP_CENSUS = 5   /* requestHeapCensus() */
};

/* {====== wire format ======} */

/* Write the control message for (namespace, command_id) into buf:
 * F0 9E 97 8C, 00, namespace length, namespace bytes, command id.
 * ns: ns_len bytes, borrowed for the call; 1..255 bytes, any content (the
 *   program expects UTF-8 without NUL; we do not check).
 * command_id: 1..255. buf: at least EL_CTL_MSG_MAX bytes, caller-owned.
 * Returns the message length (7 + ns_len), or EL_EINVAL (buf untouched)
 * for an empty or over-long namespace or a command id outside 1..255.
 * Thread: any. Spec: spec/eventlog-format.md §5.7. */
int el_ctl_encode(const char *ns, size_t ns_len, int command_id,
                  uint8_t buf[EL_CTL_MSG_MAX]);

/* The route name of a builtin command ("request-heap-census" for 5), or
 * NULL for ids outside 1..5. Static string. Thread: any. */
const char *el_ctl_builtin_name(int command_id);

/* The builtin command id for a route name (e.g. "start-profiling" -> 1),
 * or 0 when name (len bytes) is not one. Thread: any. */
int el_ctl_builtin_id(const char *name, size_t len);

/* {====== sending ======} */

/* Write len bytes of one control message on the eventlog connection.
 * buf is borrowed for the call only: an asynchronous writer must copy it.
 * Returns 0 when the bytes were written or queued, EL_ECLOSED when no
 * eventlog connection is open (or the source is not a socket), another
 * negative code on failure. Called on the thread that owns the source
 * (the loop thread in the daemon). */
typedef int (*el_ctl_send_fn)(void *ud, const uint8_t *buf, size_t len);

/* Where control messages go. A NULL send means "no eventlog socket":
 * every el_ctl_send gives EL_ECLOSED. */
typedef struct el_ctl_sender_s {
  el_ctl_send_fn send; /* the writer, or NULL */
  void *ud;            /* its context, borrowed */
} el_ctl_sender_t;

/* Encode (ns, command_id) and pass the message to s->send: the one code
 * path of HTTP requests and Lua's control(). s may be NULL (no socket).
 * Returns 0, EL_EINVAL (bad namespace or id; nothing sent), EL_ECLOSED
 * (no connection; nothing sent) or the sender's error.
 * Thread: the one s->send expects (the loop thread in the daemon).
 * Spec: spec/eventlog-format.md §5.7. */
int el_ctl_send(const el_ctl_sender_t *s, const char *ns, size_t ns_len,
                int command_id);

/* el_ctl_send in the shape of the host's control hook
 * (el_host_control_fn in src/host/host.h), so that Lua's el.control uses
 * the same path: el_host_set_control(h, el_ctl_host_control, &sender).
 * ud: an el_ctl_sender_t *, borrowed (may be NULL). command_id values
 * above 255 give EL_EINVAL; command_id 0 sends the builtin command named
 * by ns (el_ctl_builtin_id; EL_EINVAL when there is none). Thread: as
 * el_ctl_send. */
int el_ctl_host_control(void *ud, const char *ns, size_t ns_len,
                        uint32_t command_id);

/* A send callback over a byte source: ud is an el_src_t * (src/source/
 * source.h), and the bytes go to el_src_write (copied; never blocks;
 * EL_ECLOSED when no socket connection is open or the source is a file,
 * FIFO or stdin). Use: el_ctl_sender_t s = {el_ctl_src_send, src}.
 * Thread: the source's loop thread. */
int el_ctl_src_send(void *ud, const uint8_t *buf, size_t len);

/* {====== options ======} */

/* The control server's command-line options (reference-behaviour.md
 * §1.1, group "Control Server Options", plus --control-host). CORS is
 * closed unless configured: a request that carries an Origin header is
 * refused unless the origin is listed or the wildcard is asked for
 * (docs/security.md; the reference allows every origin). */
typedef struct el_ctl_opts_s {
  int enabled;            /* --control, or implied by any other option */
  char host[EL_CTL_HOST_MAX + 1]; /* --control-host; "" = 127.0.0.1 */
  int port;               /* --control-port, 0..65535 (0: any free port) */
  int cors_wildcard;      /* --control-cors-allow-origin '*' */
  char **allow_origins;   /* --control-cors-allow-origin list; el_malloc'd;
                             NULL = none (closed, the default) */
  size_t n_allow_origins; /* entries in allow_origins */
  int max_age_s;          /* --control-cors-max-age seconds, -1 = none */
  int require_origin;     /* --control-cors-require-origin */
  int ignore_failure;     /* --control-cors-ignore-failure */
} el_ctl_opts_t;

/* Fill o with the defaults (disabled, 127.0.0.1 port 30719, no origin
 * allowed, no max-age, flags off). Cannot fail. Thread: any. */
void el_ctl_opts_init(el_ctl_opts_t *o);

/* Release what el_ctl_opts_parse allocated; o is then as after init.
 * Thread: any. */
void el_ctl_opts_close(el_ctl_opts_t *o);

/* Consume the option at argv[*i] if it is one of ours: --control,
 * --control-host HOST (an address or name to bind, checked by
 * el_ctl_host_check, resolved at start), --control-port N,
 * --control-cors-allow-origin ORIGINS (repeatable; each value is "*" or a
 * comma-separated list, spaces after commas allowed; lists add up, "*"
 * allows every origin),
 * --control-cors-max-age SECONDS, --control-cors-require-origin,
 * --control-cors-ignore-failure. Values may also be given as --opt=value.
 * Any of them sets o->enabled.
 * Returns 1 and advances *i past the option (and its value) when consumed;
 * 0 when argv[*i] is not ours (*i unchanged); EL_EUSAGE after printing a
 * message on stderr for a missing or bad value (o keeps earlier values).
 * argv: borrowed; values are copied. Thread: any. */
int el_ctl_opts_parse(el_ctl_opts_t *o, int argc, char **argv, int *i);

/* Print the help lines of these options, without a heading (two-space
 * indent, descriptions at column 32, 80 columns). Thread: any. */
void el_ctl_opts_help(FILE *out);

/* Allow one more CORS origin (e.g. the daemon's own web view, see
 * el_web_allow_page_origins), unless the wildcard is on or the origin is
 * already listed. origin: copied. Does not set o->enabled.
 * Returns 0 or EL_ENOMEM (o unchanged). Thread: any. */
int el_ctl_opts_allow_origin(el_ctl_opts_t *o, const char *origin);

/* {====== server ======} */

typedef struct el_ctl_server_s el_ctl_server_t;

/* Start the control server on opts->host (127.0.0.1 when empty) and
 * opts->port, with the connection limits and deadlines of httpd.h
 * (el_ctl_httpd_limits_default; docs/security.md). Routes, answers and
 * CORS: spec/reference-behaviour.md §8 and docs/control.md.
 * loop: the libuv loop (uv_loop_t *, passed as void * so this header does
 *   not pull in uv.h) whose thread runs sender.send; the server adds one
 *   unreferenced uv_async_t to it, so it never keeps the loop alive. NULL:
 *   sender.send is called on the HTTP threads and must be thread-safe.
 * opts: copied. service_name: copied; requests must carry it in the form
 *   field "service-name". sender: copied (sender.ud is borrowed until
 *   el_ctl_server_free).
 * Returns 0 and *out, or EL_EINVAL / EL_ENOMEM / a negated errno (port in
 *   use: -EADDRINUSE) with nothing started. Logs "Starting control server
 *   on <port>" at INFO.
 * Thread: the loop thread. */
int el_ctl_server_start(void *loop, const el_ctl_opts_t *opts,
                        const char *service_name, el_ctl_sender_t sender,
                        el_ctl_server_t **out);

/* The TCP port the server listens on (useful after port 0). Thread: any. */
int el_ctl_server_port(const el_ctl_server_t *s);

/* The connection counters of the server's HTTP layer (httpd.h).
 * Thread: any. */
struct el_ctl_httpd_stats_s;
void el_ctl_server_http_stats(const el_ctl_server_t *s,
                              struct el_ctl_httpd_stats_s *out);

/* Requests answered so far, by class: [0] 2xx, [1] 4xx, [2] 5xx.
 * Thread: any (atomic reads). */
void el_ctl_server_counts(const el_ctl_server_t *s, uint64_t out[3]);

/* Stop the server and release it. Requests in flight are answered 503.
 * With a loop, the memory is released by the uv_async_t's close callback:
 * run the loop (e.g. uv_run(loop, UV_RUN_NOWAIT)) before uv_loop_close.
 * s may be NULL. Thread: the loop thread; never while its uv_run is inside
 * a send callback of this server. */
void el_ctl_server_free(el_ctl_server_t *s);

/* {====== Lua ======} */


#ifdef __cplusplus
}
#endif
#endif /* EL_CONTROL_H */
