/* otlp_plugin.c: finding the OTLP transport plugins (otlp_plugin.h). */
#include "otlp_plugin.h"

#include <string.h>

/* The transports linked into this program: test programs link the
 * plugins' code; in eventlog-live these weak references stay NULL and the
 * plugin is opened instead. */
extern const el_otlp_transport_plugin_t el_plugin_otlp_grpc
    __attribute__((weak));
extern const el_otlp_transport_plugin_t el_plugin_otlp_http
    __attribute__((weak));

const el_otlp_transport_plugin_t *el__otlp_grpc_plugin(char *err,
                                                       size_t errsz) {
  if (&el_plugin_otlp_grpc) return &el_plugin_otlp_grpc;
  return el_plugin_load("otlp-grpc", "the OTLP/gRPC exporter",
                        EL_OTLP_TRANSPORT_ABI, err, errsz);
}

const el_otlp_transport_plugin_t *el__otlp_http_plugin(char *err,
                                                       size_t errsz) {
  if (&el_plugin_otlp_http) return &el_plugin_otlp_http;
  return el_plugin_load("otlp-http", "the OTLP/HTTP exporter",
                        EL_OTLP_TRANSPORT_ABI, err, errsz);
}

void el__otlp_url_free(el_otlp_url_t *u) {
  el_free(u->scheme);
  el_free(u->host);
  el_free(u->port);
  el_free(u->path);
  el_free(u->query);
  el_free(u->user);
  memset(u, 0, sizeof *u);
}
