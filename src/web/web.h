/* web.h: the daemon's embedded Prometheus endpoint (--prometheus-port) and
 * live web view (--web-port). See docs/web.md.
 *
 * Both are fed by one telemetry exporter (el_tm_exporter_t) registered on
 * the daemon's store: it sees the same batches the OTLP exporters read and
 * keeps, under one mutex,
 *   - the latest value of every Prometheus series, named and labelled the
 *     way an OpenTelemetry Collector's Prometheus exporter (with the demo's
 *     demo/config/otelcol.yaml) would name and label it;
 *   - for the web view, a bounded history of every metric series, the last
 *     log records, user markers, thread labels and states, and GC pauses.
 * Two libmicrohttpd servers (one per port, each with the connection
 * limits, deadlines and reserved GET /health of src/control/httpd.h)
 * serve /metrics and the page + /api/data, on 127.0.0.1 unless
 * --prometheus-host / --web-host say otherwise (docs/security.md). Nothing
 * is created when both ports are unset, so the pipeline pays nothing then.
 *
 * Thread: el_web_new/start/free and the exporter's callbacks run on the
 * loop thread; the HTTP handlers run on libmicrohttpd's threads. */
#ifndef EL_WEB_H
#define EL_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../config/config.h"
#include "../control/control.h"
#include "../telemetry/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Metric processors whose aggregation window /api/data reports. */
#define EL_WEB_AGGS_MAX 64

typedef struct el_web_opts_s {
  int prom_port;              /* --prometheus-port, 0..65535; -1 = off */
  int web_port;               /* --web-port, 0..65535; -1 = off */
  char prom_host[EL_CTL_HOST_MAX + 1]; /* --prometheus-host; "" = the
                                 default, 127.0.0.1 */
  char web_host[EL_CTL_HOST_MAX + 1];  /* --web-host; "" = 127.0.0.1 */
  int control_port;           /* control server port for the page's
                                 buttons; -1 = no control server */
  const char *service_name;   /* shown by the page; borrowed */
  /* The aggregation window of each metric processor, by telemetry name
   * (borrowed: the configuration outlives the web view), so that
   * /api/data can say what a point is; 0 ms = every value. */
  struct {
    const char *name;
    uint64_t aggregate_ms;
  } aggs[EL_WEB_AGGS_MAX];
  size_t naggs;
  /* The traces processors capability_usage and thread_state: 1 on, 0 off,
   * -1 not known (el_web_opts_init). /api/data gives them as "traces"
   * (true, false or null) so that the page names a processor only when it
   * is off, not while its spans are still on their way (h63). */
  int cap_usage_on, thread_state_on;
  char err[160];              /* message of the last parse error */
} el_web_opts_t;

/* Fill o with the defaults (both off; hosts empty: 127.0.0.1). */
void el_web_opts_init(el_web_opts_t *o);

/* Parse one option at argv[*i]: --prometheus-port PORT, --web-port PORT,
 * --prometheus-host HOST, --web-host HOST (also --name=VALUE). PORT is
 * 0..65535 (0: any free port). HOST is an address or name to bind
 * (el_ctl_host_check; resolved when the server starts); a host alone does
 * not turn a server on. Returns 1 and advances *i when consumed, 0 when
 * not ours, EL_EUSAGE with o->err set (naming the option and value). */
int el_web_opts_parse(el_web_opts_t *o, int argc, char **argv, int *i);

/* Take from the configuration file's web: key whatever the command line
 * left unset (ports -1, hosts ""): web.prometheus_port, web.web_port,
 * web.prometheus_host, web.web_host. cfg may be NULL. Thread: any.
 * docs/web.md "Options". */
void el_web_opts_from_config(el_web_opts_t *o, const el_cfg_t *cfg);

/* Print the options' help lines to out. */
void el_web_opts_help(FILE *out);

/* True when either endpoint is requested. */
bool el_web_enabled(const el_web_opts_t *o);

typedef struct el_web_s el_web_t;

/* Create the state and the exporter to register on the store (*ex: its ud
 * is the el_web_t; no release callback: free with el_web_free after the
 * store is freed). Returns 0 or EL_ENOMEM. Thread: loop. */
int el_web_new(const el_web_opts_t *o, el_web_t **out, el_tm_exporter_t *ex);

/* Start the HTTP servers on their hosts (127.0.0.1 by default). Logs
 * "Starting Prometheus endpoint on <port>" / "Starting web view on
 * <port>" at INFO. Returns 0, or a negated errno / EL_EINVAL when a host
 * does not resolve or a port cannot be bound (logged with the option and
 * value; nothing left running). */
int el_web_start(el_web_t *w);

/* Let the web view's own page call the control server: add its origins
 * to ctl's CORS allow-list (el_ctl_opts_allow_origin) - http://localhost,
 * http://127.0.0.1 and http://[::1] with the view's bound port, and
 * http://<--web-host>:<port> when that is a specific address or name
 * (not 0.0.0.0 or ::, whose names the daemon cannot know: list them with
 * --control-cors-allow-origin). Nothing when the view is off. Call after
 * el_web_start and before el_ctl_server_start. Returns 0 or EL_ENOMEM.
 * Thread: any. docs/security.md "CORS". */
int el_web_allow_page_origins(const el_web_t *w, el_ctl_opts_t *ctl);

/* The bound ports (useful after port 0), -1 when off. Thread: any. */
int el_web_prom_port(const el_web_t *w);
int el_web_view_port(const el_web_t *w);

/* Tell the page the control server's port (-1: none) and whether the
 * input has ended (the page shows "input ended"; the threads not
 * finished are shown "Ended", with the state they were last seen in:
 * docs/web.md "Sessions"). Call after the last batch was exported.
 * Thread: any. */
void el_web_set_control_port(el_web_t *w, int port);
void el_web_set_ended(el_web_t *w, bool ended);

/* The input of the last session closed and the source waits for the
 * next (a Unix or TCP socket reconnects; a FIFO under --follow is opened
 * again): why says how, in a person's words ("connection closed": the
 * program using eventlog-socket exited or was killed; at most 63 bytes
 * kept, NUL-terminated). Every thread row not finished becomes "Ended",
 * status "<why> (was <state>[: <status>])", as the end of input ends
 * them ("input ended (was ...)"), and so does any row a late record of
 * that session makes while the wait lasts: no thread is shown Running or
 * Blocked after its program is gone. /api/data says "reconnecting": true
 * (the page: "waiting for a reconnection"). why NULL: a new session
 * began, "reconnecting" is false again (its rows are made as before; the
 * ended ones stay ended). el_web_set_ended(w, true) ends the wait too.
 * Call after the session's last batch was exported (the host flushes at
 * the end of a session). Thread: any. docs/web.md "Sessions". */
void el_web_set_reconnecting(el_web_t *w, const char *why);

/* Tell the page what the newest eventlog header says of its producer:
 * before_9_2 1 when it declares no BLOCKS_SIZE event (type 91, added in
 * GHC 9.2 with --eventlog-flush-interval: spec §2.1), so the program's
 * events arrive only when a 2 MiB buffer fills and at its exit (its heap
 * census samples in the global buffer, which rarely fills); 0 when it
 * declares it; -1 unknown (no header yet, the initial value). /api/data
 * gives it as "ghc_before_9_2" (true, false or null) and the page says
 * why a panel is still empty (docs/web.md "Waiting for data"). Call at
 * each header. Thread: any. */
void el_web_set_producer(el_web_t *w, int before_9_2);

/* After the input ended: mark the page "ended" and block until SIGINT or
 * SIGTERM while the servers keep answering (a file source is replayed at
 * full speed, then browsed). Returns at once (0) when no server runs,
 * else the signal number. Installs its own handlers for the wait and
 * restores the previous ones. Thread: loop (the main thread). */
int el_web_serve_until_signal(el_web_t *w);

/* Stop the servers and free everything. NULL is allowed. */
void el_web_free(el_web_t *w);

/* {====== naming (exposed for the unit tests) ======} */

/* The Prometheus metric name the collector's exporter gives an OTLP
 * metric (docs/web.md "Metric names"): tokens of name split at every
 * character outside [a-zA-Z0-9:], the unit's word appended unless already
 * a token or the unit holds {annotations}, "_total" for monotonic sums,
 * "_ratio" for gauges of unit "1". unit may be NULL. Writes a
 * NUL-terminated name into buf (truncated to size-1). Returns its length. */
size_t el_web_prom_name(const char *name, const char *unit, bool sum,
                        bool monotonic, char *buf, size_t size);

/* A label name from an attribute key: characters outside [a-zA-Z0-9_]
 * become '_', a leading digit gets "key_", a single leading '_' gets
 * "key". Returns the length written into buf (NUL-terminated). */
size_t el_web_prom_label(const char *key, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* EL_WEB_H */
