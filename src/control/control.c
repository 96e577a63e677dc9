/* control.c: the eventlog-socket control message encoder, the send path
 * shared by HTTP and Lua, and the control server's command-line options.
 *
 * Wire format (spec/eventlog-format.md §5.7, protocol version 0), all
 * single bytes, no framing:
 *   F0 9E 97 8C   magic, the UTF-8 encoding of U+1E5CC
 *   00            protocol version
 *   LL            namespace length, 1..255
 *   LL bytes      namespace ("eventlog-socket" is 15 bytes: LL = 0x0F)
 *   CC            command id, 1..255 */
#include "control/control.h"
#include "control/httpd.h"
#include "source/source.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* {====== wire format ======} */

static const uint8_t magic[4] = {0xF0, 0x9E, 0x97, 0x8C};

int el_ctl_encode(const char *ns, size_t ns_len, int command_id,
                  uint8_t buf[EL_CTL_MSG_MAX]) {
  if (ns == NULL || ns_len == 0 || ns_len > EL_CTL_NS_MAX) return EL_EINVAL;
  if (command_id < 1 || command_id > 255) return EL_EINVAL;
  memcpy(buf, magic, sizeof magic);
  buf[4] = 0x00;
  buf[5] = (uint8_t)ns_len;
  memcpy(buf + 6, ns, ns_len);
  buf[6 + ns_len] = (uint8_t)command_id;
  return (int)(7 + ns_len);
}

/* Route names of the builtin commands, indexed by command id - 1. */
static const char *const builtin_names[] = {
    "start-profiling", "stop-profiling", "start-heap-profiling",
    "stop-heap-profiling", "request-heap-census"};

const char *el_ctl_builtin_name(int command_id) {
  if (command_id < 1 || command_id > (int)EL_ARRAY_LEN(builtin_names))
    return NULL;
  return builtin_names[command_id - 1];
}

int el_ctl_builtin_id(const char *name, size_t len) {
  for (size_t k = 0; k < EL_ARRAY_LEN(builtin_names); k++)
    if (strlen(builtin_names[k]) == len && memcmp(builtin_names[k], name,
                                                  len) == 0)
      return (int)k + 1;
  return 0;
}

/* {====== sending ======} */

int el_ctl_send(const el_ctl_sender_t *s, const char *ns, size_t ns_len,
                int command_id) {
  uint8_t buf[EL_CTL_MSG_MAX];
  int n = el_ctl_encode(ns, ns_len, command_id, buf);
  if (n < 0) return n;
  if (s == NULL || s->send == NULL) return EL_ECLOSED;
  int rc = s->send(s->ud, buf, (size_t)n);
  return rc > 0 ? 0 : rc;
}

int el_ctl_host_control(void *ud, const char *ns, size_t ns_len,
                        uint32_t command_id) {
  if (command_id > 255) return EL_EINVAL;
  if (command_id == 0) { /* a builtin command name */
    int id = el_ctl_builtin_id(ns, ns_len);
    if (id == 0) return EL_EINVAL;
    return el_ctl_send(ud, EL_CTL_NS_EVENTLOG_SOCKET,
                       sizeof EL_CTL_NS_EVENTLOG_SOCKET - 1, id);
  }
  return el_ctl_send(ud, ns, ns_len, (int)command_id);
}

int el_ctl_src_send(void *ud, const uint8_t *buf, size_t len) {
  if (ud == NULL) return EL_ECLOSED;
  return el_src_write(ud, buf, len);
}

/* {====== options ======} */

void el_ctl_opts_init(el_ctl_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->port = EL_CTL_DEFAULT_PORT;
  o->max_age_s = -1;
}

static void free_origins(el_ctl_opts_t *o) {
  for (size_t k = 0; k < o->n_allow_origins; k++) el_free(o->allow_origins[k]);
  el_free(o->allow_origins);
  o->allow_origins = NULL;
  o->n_allow_origins = 0;
}

void el_ctl_opts_close(el_ctl_opts_t *o) {
  free_origins(o);
  el_ctl_opts_init(o);
}

/* Append one origin (len bytes) to the allow-list. */
static int add_origin(el_ctl_opts_t *o, const char *p, size_t len) {
  char **v = el_realloc(o->allow_origins,
                        (o->n_allow_origins + 1) * sizeof *v);
  if (v == NULL) return EL_ENOMEM;
  o->allow_origins = v;
  v[o->n_allow_origins] = el_strndup(p, len);
  if (v[o->n_allow_origins] == NULL) return EL_ENOMEM;
  o->n_allow_origins++;
  return 0;
}

int el_ctl_opts_allow_origin(el_ctl_opts_t *o, const char *origin) {
  if (o->cors_wildcard) return 0;
  for (size_t k = 0; k < o->n_allow_origins; k++)
    if (strcmp(o->allow_origins[k], origin) == 0) return 0;
  return add_origin(o, origin, strlen(origin));
}

/* Parse "*" or "a, b,c" into the allow-list. "*" anywhere opens the
 * policy to every origin (the reference's default; ours is closed). */
static int parse_origins(el_ctl_opts_t *o, const char *s) {
  const char *p = s;
  int any = 0;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
    if (len == 1 && p[0] == '*') {
      free_origins(o);
      o->cors_wildcard = 1;
      return 1;
    }
    if (len > 0) {
      if (!o->cors_wildcard && add_origin(o, p, len) < 0) return EL_ENOMEM;
      any = 1;
    }
    if (e == NULL) break;
    p = e + 1;
  }
  return any ? 0 : EL_EINVAL;
}

/* Parse a decimal integer in lo..hi; 0 or EL_EINVAL. */
static int parse_int(const char *s, long lo, long hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < lo || v > hi) return EL_EINVAL;
  *out = (int)v;
  return 0;
}

/* If argv[*i] is "--name" or "--name=value", return 1 and set *value to
 * the inline value (or NULL). */
static int match(const char *arg, const char *name, const char **value) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '\0') {
    *value = NULL;
    return 1;
  }
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  return 0;
}

/* Fetch the value of option name: inline, or argv[*i + 1]. */
static const char *take_value(const char *name, const char *inl, int argc,
                              char **argv, int *i) {
  if (inl) return inl;
  if (*i + 1 >= argc) {
    el_eprintf("%s needs a value\n", name);
    return NULL;
  }
  (*i)++;
  return argv[*i];
}

static int usage_error(const char *name, const char *v, const char *want) {
  el_eprintf("bad value '%s' for %s: %s\n", v, name, want);
  return EL_EUSAGE;
}

int el_ctl_opts_parse(el_ctl_opts_t *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v;
  int start = *i;
  if (strncmp(a, "--control", 9) != 0) return 0;
  if (match(a, "--control", &v) && v == NULL) {
    o->enabled = 1;
  } else if (match(a, "--control-cors-require-origin", &v) && v == NULL) {
    o->require_origin = o->enabled = 1;
  } else if (match(a, "--control-cors-ignore-failure", &v) && v == NULL) {
    o->ignore_failure = o->enabled = 1;
  } else if (match(a, "--control-host", &v)) {
    const char *s = take_value("--control-host", v, argc, argv, i);
    if (s == NULL) goto fail;
    if (el_ctl_host_check(s) < 0) {
      usage_error("--control-host", s,
                  "an address or host name to listen on (1..255 bytes, no "
                  "spaces), e.g. 127.0.0.1, ::1, 0.0.0.0 or ::");
      goto fail;
    }
    snprintf(o->host, sizeof o->host, "%s", s);
    o->enabled = 1;
  } else if (match(a, "--control-port", &v)) {
    const char *s = take_value("--control-port", v, argc, argv, i);
    if (s == NULL) goto fail;
    if (parse_int(s, 0, 65535, &o->port) < 0) {
      usage_error("--control-port", s, "a port number 0..65535");
      goto fail;
    }
    o->enabled = 1;
  } else if (match(a, "--control-cors-max-age", &v)) {
    const char *s = take_value("--control-cors-max-age", v, argc, argv, i);
    if (s == NULL) goto fail;
    if (parse_int(s, 0, INT_MAX, &o->max_age_s) < 0) {
      usage_error("--control-cors-max-age", s, "seconds, 0 or more");
      goto fail;
    }
    o->enabled = 1;
  } else if (match(a, "--control-cors-allow-origin", &v)) {
    const char *s =
        take_value("--control-cors-allow-origin", v, argc, argv, i);
    if (s == NULL) goto fail;
    if (parse_origins(o, s) < 0) {
      usage_error("--control-cors-allow-origin", s,
                  "'*' or a comma-separated list of origins");
      goto fail;
    }
    o->enabled = 1;
  } else {
    return 0;
  }
  (*i)++;
  return 1;
fail:
  *i = start;
  return EL_EUSAGE;
}

void el_ctl_opts_help(FILE *out) {
  fputs(
      "  --control                    start the control server: HTTP commands"
      "\n                               relayed to the program over the"
      "\n                               eventlog socket (docs/control.md)\n"
      "  --control-host HOST          the address it listens on (default"
      "\n                               127.0.0.1: this host only; 0.0.0.0 or"
      "\n                               :: for every interface, see"
      "\n                               docs/security.md)\n"
      "  --control-port PORT          its TCP port (default 30719)\n"
      "  --control-cors-allow-origin ORIGINS\n"
      "                               comma-separated origins that browsers"
      "\n                               may call it from, or '*' for any;"
      "\n                               repeatable (default: none)\n"
      "  --control-cors-max-age SECONDS\n"
      "                               Access-Control-Max-Age of preflights\n"
      "  --control-cors-require-origin\n"
      "                               refuse requests without an Origin"
      "\n                               header\n"
      "  --control-cors-ignore-failure\n"
      "                               let CORS failures through; answer"
      "\n                               malformed preflights permissively"
      "\n                               (Safari on localhost)\n"
      "  Any --control-* option implies --control.\n",
      out);
}

/* {====== server settings (httpd.h) ======} */

/* These two need no HTTP server, so they live here, in the binary, not in
 * the httpd plugin with the server (src/web/httpd_plugin.h). */

void el_ctl_httpd_limits_default(el_ctl_httpd_limits_t *l) {
  l->conns = 256;
  l->conns_per_ip = 64;
  l->reserve = 32;
  l->reserve_per_ip = 4;
  l->header_ms = 5000;
  l->request_ms = 10000;
  l->reserve_ms = 2000;
  l->evict_after_ms = 1000;
}

int el_ctl_host_check(const char *host) {
  size_t n = host ? strlen(host) : 0;
  if (n == 0 || n > EL_CTL_HOST_MAX) return EL_EINVAL;
  for (size_t k = 0; k < n; k++)
    if ((unsigned char)host[k] <= ' ' || host[k] == 0x7f) return EL_EINVAL;
  return 0;
}
