/* web_plugin.c: opening the HTTP server plugin (httpd_plugin.h). */
#include "httpd_plugin.h"

/* Linked into test programs that link the plugin's code; NULL in
 * eventlog-live, which opens the plugin. */
extern const el_httpd_plugin_t el_plugin_httpd __attribute__((weak));

const el_httpd_plugin_t *el_httpd_plugin(char *err, size_t errsz) {
  if (&el_plugin_httpd) return &el_plugin_httpd;
  return el_plugin_load("httpd",
                        "the HTTP servers (--control, --web-port, "
                        "--prometheus-port)",
                        EL_HTTPD_ABI, err, errsz);
}
