/* web_opts.c: the web view's and /metrics' command-line options (web.h).
 * In the binary; the servers are in the httpd plugin (httpd_plugin.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web_internal.h"

/* {====== options ======} */

void el_web_opts_init(el_web_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->prom_port = -1;
  o->web_port = -1;
  o->control_port = -1;
  o->cap_usage_on = o->thread_state_on = -1;
}

static int parse_port(el_web_opts_t *o, const char *name, const char *v,
                      int *out) {
  char *end;
  long p = v ? strtol(v, &end, 10) : -1;
  if (!v || !*v || *end || p < 0 || p > 65535) {
    snprintf(o->err, sizeof o->err, "%s: expected a port 0..65535, got '%s'",
             name, v ? v : "");
    return EL_EUSAGE;
  }
  *out = (int)p;
  return 1;
}

static int parse_host(el_web_opts_t *o, const char *name, const char *v,
                      char out[EL_CTL_HOST_MAX + 1]) {
  if (el_ctl_host_check(v) < 0) {
    snprintf(o->err, sizeof o->err,
             "%s: expected an address or host name to listen on (1..255 "
             "bytes, no spaces), got '%.64s'",
             name, v ? v : "");
    return EL_EUSAGE;
  }
  snprintf(out, EL_CTL_HOST_MAX + 1, "%s", v);
  return 1;
}

int el_web_opts_parse(el_web_opts_t *o, int argc, char **argv, int *i) {
  const char *v = NULL;
  if (el_opt_value(argc, argv, i, "--prometheus-port", &v))
    return parse_port(o, "--prometheus-port", v, &o->prom_port);
  if (el_opt_value(argc, argv, i, "--web-port", &v))
    return parse_port(o, "--web-port", v, &o->web_port);
  if (el_opt_value(argc, argv, i, "--prometheus-host", &v))
    return parse_host(o, "--prometheus-host", v, o->prom_host);
  if (el_opt_value(argc, argv, i, "--web-host", &v))
    return parse_host(o, "--web-host", v, o->web_host);
  return 0;
}

void el_web_opts_from_config(el_web_opts_t *o, const el_cfg_t *cfg) {
  const char *h;
  if (o->prom_port < 0) o->prom_port = el_cfg_web_port(cfg, true);
  if (o->web_port < 0) o->web_port = el_cfg_web_port(cfg, false);
  if (!o->prom_host[0] && (h = el_cfg_web_host(cfg, true)))
    snprintf(o->prom_host, sizeof o->prom_host, "%s", h);
  if (!o->web_host[0] && (h = el_cfg_web_host(cfg, false)))
    snprintf(o->web_host, sizeof o->web_host, "%s", h);
}

void el_web_opts_help(FILE *out) {
  fputs(
      "  --prometheus-port PORT   serve /metrics (Prometheus text format,\n"
      "                           OpenMetrics on request) on PORT\n"
      "  --prometheus-host HOST   the address it listens on (default\n"
      "                           127.0.0.1: this host only; 0.0.0.0 or\n"
      "                           :: for every interface)\n"
      "  --web-port PORT          serve a live web view on PORT\n"
      "  --web-host HOST          the address it listens on (default\n"
      "                           127.0.0.1; docs/security.md)\n"
      "  With either port, when the input (a file, FIFO or stdin) ends,\n"
      "  the daemon keeps serving until SIGINT or SIGTERM (docs/web.md).\n",
      out);
}

bool el_web_enabled(const el_web_opts_t *o) {
  return o->prom_port >= 0 || o->web_port >= 0;
}
