/* httpd_plugin.h: the interface of the HTTP server plugin,
 * eventlog-live-httpd.so: the control server (src/control/ctl_server.c),
 * the web view and the Prometheus endpoint (web_http.c, web_model.c), and
 * the libmicrohttpd layer under them (src/control/ctl_httpd.c). The
 * daemon opens it (src/plugin/plugin.h) only when --control, --web-port or
 * --prometheus-port asks for a server, so other commands never load
 * libmicrohttpd. Each entry is the function of control.h or web.h with
 * the same name after el_ (e.g. web_new is el_web_new), with the same
 * arguments, results and threads. Test programs call those functions
 * directly (they link the plugin's code). */
#ifndef EL_HTTPD_PLUGIN_H
#define EL_HTTPD_PLUGIN_H

#include <stddef.h>

#include "../control/control.h"
#include "../plugin/plugin.h"
#include "web.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raise when the table or anything it passes changes shape (el_ctl_opts_t,
 * el_web_opts_t, el_ctl_sender_t, el_tm_exporter_t...). */
#define EL_HTTPD_ABI 4u /* 4: el_web_opts_t's traces processors */

/* The plugin's table: symbol el_plugin_httpd. */
typedef struct el_httpd_plugin_s {
  el_plugin_head_t head; /* abi EL_HTTPD_ABI, name "httpd" */
  /* control server (control.h) */
  int (*ctl_server_start)(void *loop, const el_ctl_opts_t *opts,
                          const char *service_name, el_ctl_sender_t sender,
                          el_ctl_server_t **out);
  int (*ctl_server_port)(const el_ctl_server_t *s);
  void (*ctl_server_counts)(const el_ctl_server_t *s, uint64_t out[3]);
  void (*ctl_server_free)(el_ctl_server_t *s);
  /* web view and /metrics (web.h) */
  int (*web_new)(const el_web_opts_t *o, el_web_t **out, el_tm_exporter_t *ex);
  int (*web_start)(el_web_t *w);
  int (*web_allow_page_origins)(const el_web_t *w, el_ctl_opts_t *ctl);
  int (*web_prom_port)(const el_web_t *w);
  int (*web_view_port)(const el_web_t *w);
  void (*web_set_control_port)(el_web_t *w, int port);
  void (*web_set_ended)(el_web_t *w, bool ended);
  void (*web_set_producer)(el_web_t *w, int before_9_2);
  void (*web_set_reconnecting)(el_web_t *w, const char *why);
  int (*web_serve_until_signal)(el_web_t *w);
  void (*web_free)(el_web_t *w);
} el_httpd_plugin_t;

extern const el_httpd_plugin_t el_plugin_httpd;

/* The plugin's table, opened on the first call (el_plugin_load), or NULL
 * with a one-line reason (the plugin file and dlerror()) in err[errsz].
 * Thread: any. */
const el_httpd_plugin_t *el_httpd_plugin(char *err, size_t errsz);

#ifdef __cplusplus
}
#endif
#endif /* EL_HTTPD_PLUGIN_H */
