/* otlp_plugin.h: the interface of the OTLP transport plugins,
 * eventlog-live-otlp-grpc.so (exp_grpc.c, the gRPC C core) and
 * eventlog-live-otlp-http.so (exp_http.c, libcurl). The exporter
 * (export_queue.c) opens the plugin of a signal's protocol when it creates
 * that signal's transport, and the configuration (otlp_config.c) opens the
 * HTTP one to parse an endpoint URL that is not a default one, so only a
 * command that exports over OTLP loads gRPC or libcurl
 * (src/plugin/plugin.h). */
#ifndef EL_OTLP_PLUGIN_H
#define EL_OTLP_PLUGIN_H

#include "../plugin/plugin.h"
#include "export_queue.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raise when the table or anything it passes changes shape
 * (el_otlp_signal_cfg_t, el_xq_transport_t, el_xq_result_t,
 * el_otlp_url_t). */
#define EL_OTLP_TRANSPORT_ABI \
  3u /* 2: el_xq_result_t.msg 384 bytes;
                                    3: el_xq_transport_t.wake */

/* The parts of a URL; each an el_malloc'd string or NULL when absent
 * (port: only when the URL gives one). Free with el__otlp_url_free. */
typedef struct el_otlp_url_s {
  char *scheme, *host, *port, *path, *query, *user;
} el_otlp_url_t;

/* The table of one transport plugin: symbol el_plugin_otlp_grpc or
 * el_plugin_otlp_http. */
typedef struct el_otlp_transport_plugin_s {
  el_plugin_head_t head; /* abi EL_OTLP_TRANSPORT_ABI, name */
  /* Create the transport of one signal: el__otlp_grpc_new or
   * el__otlp_http_new (export_queue.h). */
  int (*transport_new)(const el_otlp_signal_cfg_t *sc, el_tm_signal_t sig,
                       el_xq_transport_t *out);
  /* Split an absolute URL (any scheme) into *out. Returns 0, -1 when the
   * URL is malformed (*out then all NULL), or EL_ENOMEM. NULL in the gRPC
   * plugin. Thread: any. */
  int (*url_split)(const char *url, el_otlp_url_t *out);
} el_otlp_transport_plugin_t;

extern const el_otlp_transport_plugin_t el_plugin_otlp_grpc;
extern const el_otlp_transport_plugin_t el_plugin_otlp_http;

/* The table of the gRPC or HTTP plugin: linked into the program (test
 * programs link the plugins' code), else opened (el_plugin_load). NULL
 * with a one-line reason in err[errsz] when it cannot be loaded.
 * Thread: any. */
const el_otlp_transport_plugin_t *el__otlp_grpc_plugin(char *err, size_t errsz);
const el_otlp_transport_plugin_t *el__otlp_http_plugin(char *err, size_t errsz);

/* Free the parts of *u and zero it. Thread: any. */
void el__otlp_url_free(el_otlp_url_t *u);

#ifdef __cplusplus
}
#endif
#endif /* EL_OTLP_PLUGIN_H */
