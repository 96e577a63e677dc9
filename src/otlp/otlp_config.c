/* otlp_config.c: exporter configuration from the reference tool's flags and
 * the standard OTEL_* environment variables.
 *
 * Precedence, per setting: command-line flag, then the signal-specific
 * variable (OTEL_EXPORTER_OTLP_<SIGNAL>_<X>), then the generic one
 * (OTEL_EXPORTER_OTLP_<X>), then the default. An empty variable counts as
 * unset (OpenTelemetry SDK environment variable rules).
 *
 * Differences from the reference (reference-behaviour.md §1.3.1, §1.4,
 * §13): malformed values are errors naming the variable (the reference
 * warns and falls back for INSECURE and TIMEOUT); a scheme-less gRPC
 * endpoint such as "localhost:4317" is accepted (prefixed with http:// or,
 * when OTEL_EXPORTER_OTLP_INSECURE=false, https://); per-signal HTTP
 * endpoints are used as is (the OTLP spec's rule; the reference appends the
 * path to them too); CERTIFICATE and HEADERS apply to both transports.
 * URLs are parsed with libcurl's URL API, in the OTLP/HTTP plugin
 * (otlp_plugin.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "otlp.h"
#include "otlp_plugin.h"

static const char *const SIG_UPPER[EL_TM_NSIGNALS] = {
  "METRICS", "LOGS", "TRACES", "PROFILES"};
static const char *const SIG_PATH[EL_TM_NSIGNALS] = {
  "/v1/metrics", "/v1/logs", "/v1/traces", "/v1development/profiles"};

void el_otlp_config_init(el_otlp_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    cfg->sig[s].exporter = EL_OTLP_EXP_OTLP;
    cfg->sig[s].protocol = EL_OTLP_HTTP_PROTOBUF;
    cfg->sig[s].timeout_ms = 10000;
  }
  cfg->queue_max_bytes = (size_t)16 << 20;
  cfg->queue_max_items = 1024;
  cfg->max_message_bytes = (size_t)4 << 20;
  cfg->shutdown_timeout_ms = 10000;
  cfg->retry_initial_ms = 500;
  cfg->retry_max_ms = 5000;
  cfg->retry_max_elapsed_ms = 60000;
}

void el_otlp_headers_free(el_otlp_header_t *h, size_t n) {
  if (!h) return;
  for (size_t i = 0; i < n; i++) {
    el_free(h[i].name);
    el_free(h[i].value);
  }
  el_free(h);
}

void el_otlp_config_free(el_otlp_config_t *cfg) {
  if (!cfg) return;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    el_otlp_signal_cfg_t *sc = &cfg->sig[s];
    el_free(sc->target);
    el_free(sc->certificate);
    el_free(sc->authority);
    el_otlp_headers_free(sc->headers, sc->nheaders);
  }
  el_free(cfg->service_name);
  el_otlp_headers_free(cfg->resource, cfg->nresource);
  __typeof__(cfg->flag) flag = cfg->flag;
  el_otlp_config_init(cfg);
  cfg->flag = flag;
}

/* {====== command line ======} */

typedef struct {
  const char *name;
  bool has_value;
  size_t offset;              /* of the const char * (or bool) in flag */
} opt_def_t;

#define FLAG_OFF(f) offsetof(el_otlp_config_t, flag.f)
static const opt_def_t OPTS[] = {
    {"--otelcol-host", true, FLAG_OFF(host)},
    {"--otelcol-port", true, FLAG_OFF(port)},
    {"--otelcol-authority", true, FLAG_OFF(authority)},
    {"--otelcol-ssl", false, FLAG_OFF(ssl)},
    {"--otelcol-certificate-store", true, FLAG_OFF(certificate)},
    {"--service-name", true, FLAG_OFF(service_name)},
    {"--otlp-protocol", true, FLAG_OFF(protocol)},
    {"--otlp-endpoint", true, FLAG_OFF(endpoint)},
    {"--otlp-compression", true, FLAG_OFF(compression)},
    {"--otlp-queue-bytes", true, FLAG_OFF(queue_bytes)},
    {"--otlp-queue-items", true, FLAG_OFF(queue_items)},
    {"--otlp-max-message-bytes", true, FLAG_OFF(max_message)},
    {"--otlp-shutdown-timeout", true, FLAG_OFF(shutdown_ms)},
    {"--no-otlp", false, FLAG_OFF(no_otlp)},
};

int el_otlp_opts_parse(el_otlp_config_t *cfg, int argc, char **argv,
                       int *i) {
  const char *arg = argv[*i];
  for (size_t k = 0; k < EL_ARRAY_LEN(OPTS); k++) {
    const opt_def_t *o = &OPTS[k];
    size_t nl = strlen(o->name);
    if (strncmp(arg, o->name, nl) != 0) continue;
    if (arg[nl] != '\0' && arg[nl] != '=') continue;
    char *base = (char *)cfg + o->offset;
    if (!o->has_value) {
      if (arg[nl] == '=') {
        snprintf(cfg->err, sizeof cfg->err, "option %s takes no value",
                 o->name);
        return EL_EUSAGE;
      }
      *(bool *)base = true;
      *i += 1;
      return 1;
    }
    const char *val;
    if (arg[nl] == '=') {
      val = arg + nl + 1;
      *i += 1;
    } else if (*i + 1 < argc) {
      val = argv[*i + 1];
      *i += 2;
    } else {
      snprintf(cfg->err, sizeof cfg->err, "option %s needs a value",
               o->name);
      return EL_EUSAGE;
    }
    *(const char **)base = val;
    return 1;
  }
  return 0;
}

const char *el_otlp_opts_help(void) {
  return "  --otelcol-host HOST          send OTLP over gRPC to HOST (all signals)\n"
         "  --otelcol-port PORT          gRPC port (default 4317)\n"
         "  --otelcol-authority HOST     HTTP/2 :authority override\n"
         "  --otelcol-ssl                use TLS (server certificate verified)\n"
         "  --otelcol-certificate-store FILE  CA certificates (PEM) for TLS\n"
         "  --otlp-protocol P            grpc | http/protobuf (all signals)\n"
         "  --otlp-endpoint URL          as OTEL_EXPORTER_OTLP_ENDPOINT\n"
         "  --otlp-compression C         gzip | none\n"
         "  --otlp-queue-bytes N         export queue bound per signal, bytes\n"
         "                               (default 16777216)\n"
         "  --otlp-queue-items N         export queue bound per signal, batches\n"
         "                               and requests (default 1024)\n"
         "  --otlp-max-message-bytes N   split requests above N bytes (4194304)\n"
         "  --otlp-shutdown-timeout MS   flush bound at exit (default 10000);\n"
         "                               a console into a regular file is\n"
         "                               written to its end regardless\n"
         "  --no-otlp                    no OTLP exporter for any signal (wins\n"
         "                               over OTEL_*_EXPORTER=otlp; console kept)\n"
         "  Environment: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,\n"
         "  OTEL_{METRICS,LOGS,TRACES,PROFILES}_EXPORTER (otlp|console|none),\n"
         "  OTEL_EXPORTER_OTLP_{PROTOCOL,ENDPOINT,INSECURE,CERTIFICATE,HEADERS,\n"
         "  COMPRESSION,TIMEOUT} and OTEL_EXPORTER_OTLP_<SIGNAL>_<X>; flags win\n"
         "  over signal-specific variables, which win over generic ones.\n";
}

/* {====== baggage (W3C, reference-behaviour.md §1.3.3) ======} */

static bool is_token_char(unsigned char c) {
  if (c <= 0x20 || c >= 0x7f) return false;
  return strchr("()<>@,;:\\\"/[]?={}", c) == NULL;
}

/* baggage-octet: 0x21, 0x23-0x2B, 0x2D-0x3A, 0x3C-0x5B, 0x5D-0x7E. */
static bool is_value_char(unsigned char c) {
  return c == 0x21 || (c >= 0x23 && c <= 0x2b) || (c >= 0x2d && c <= 0x3a) ||
         (c >= 0x3c && c <= 0x5b) || (c >= 0x5d && c <= 0x7e);
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = (unsigned char)tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static bool utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
    else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
    else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += len;
  }
  return true;
}

/* Percent-decode s[0..n) into a new string; NULL with *bad set on a
 * malformed escape or invalid UTF-8, NULL with !*bad when out of memory. */
static char *pct_decode(const char *s, size_t n, bool *bad) {
  char *out = el_malloc(n + 1);
  size_t o = 0;
  *bad = false;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '%') { out[o++] = s[i]; continue; }
    if (i + 2 >= n) {
      *bad = true;
      el_free(out);
      return NULL;
    }
    int h = hexval((unsigned char)s[i + 1]);
    int l = hexval((unsigned char)s[i + 2]);
    if (h < 0 || l < 0) {
      *bad = true;
      el_free(out);
      return NULL;
    }
    if (h == 0 && l == 0) {  /* %00 would silently cut the C string */
      *bad = true;
      el_free(out);
      return NULL;
    }
    out[o++] = (char)(h * 16 + l);
    i += 2;
  }
  out[o] = '\0';
  if (!utf8_valid((const unsigned char *)out, o)) {
    *bad = true;
    el_free(out);
    return NULL;
  }
  return out;
}

static int kv_put(el_otlp_header_t **arr, size_t *n, char *key, char *val) {
  for (size_t i = 0; i < *n; i++) {
    if (strcmp((*arr)[i].name, key) == 0) {   /* last duplicate wins */
      el_free((*arr)[i].value);
      el_free(key);
      (*arr)[i].value = val;
      return 0;
    }
  }
  el_otlp_header_t *na = el_realloc(*arr, (*n + 1) * sizeof **arr);
  if (!na) {
    el_free(key);
    el_free(val);
    return EL_ENOMEM;
  }
  *arr = na;
  na[*n].name = key;
  na[*n].value = val;
  *n += 1;
  return 0;
}

#define BAGGAGE_MAX_BYTES 8192
#define BAGGAGE_MAX_MEMBERS 180

static int bag_fail(char *err, size_t errsz, const char *why, size_t at,
                    el_otlp_header_t *arr, size_t n) {
  snprintf(err, errsz, "%s at offset %zu", why, at);
  el_otlp_headers_free(arr, n);
  return EL_EINVAL;
}

int el_otlp_baggage_parse(const char *text, el_otlp_header_t **out,
                          size_t *nout, char *err, size_t errsz) {
  el_otlp_header_t *arr = NULL;
  size_t n = 0, members = 0;
  size_t len = strlen(text);
  *out = NULL;
  *nout = 0;
  if (len > BAGGAGE_MAX_BYTES)
    return bag_fail(err, errsz, "longer than 8192 bytes", 0, NULL, 0);
  size_t b = 0, e = len;
  while (b < e && (text[b] == ' ' || text[b] == '\t')) b++;
  while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t')) e--;
  if (b == e) return bag_fail(err, errsz, "empty baggage", b, NULL, 0);
  size_t i = b;
  for (;;) {
    if (++members > BAGGAGE_MAX_MEMBERS)
      return bag_fail(err, errsz, "more than 180 members", i, arr, n);
    while (i < e && (text[i] == ' ' || text[i] == '\t')) i++;
    size_t k0 = i;
    while (i < e && is_token_char((unsigned char)text[i])) i++;
    if (i == k0) return bag_fail(err, errsz, "expected a key", i, arr, n);
    size_t k1 = i;
    while (i < e && (text[i] == ' ' || text[i] == '\t')) i++;
    if (i >= e || text[i] != '=')
      return bag_fail(err, errsz, "expected '='", i, arr, n);
    i++;
    while (i < e && (text[i] == ' ' || text[i] == '\t')) i++;
    size_t v0 = i;
    while (i < e && is_value_char((unsigned char)text[i])) i++;
    size_t v1 = i;
    /* Optional properties ";key[=value]" are ignored. */
    while (i < e && (text[i] == ' ' || text[i] == '\t')) i++;
    if (i < e && text[i] == ';') {
      while (i < e && text[i] != ',') i++;
    }
    if (i < e && text[i] != ',')
      return bag_fail(err, errsz, "unexpected character", i, arr, n);
    bool bad;
    char *key = el_strndup(text + k0, k1 - k0);
    char *val = pct_decode(text + v0, v1 - v0, &bad);
    if (!key || !val) {
      el_free(key);
      el_free(val);
      if (bad)
        return bag_fail(err, errsz, "bad percent-encoding or UTF-8", v0,
                        arr, n);
      el_otlp_headers_free(arr, n);
      return EL_ENOMEM;
    }
    int rc = kv_put(&arr, &n, key, val);
    if (rc < 0) {
      el_otlp_headers_free(arr, n);
      return rc;
    }
    if (i >= e) break;
    i++;                                       /* past ',' */
  }
  *out = arr;
  *nout = n;
  return 0;
}

/* {====== resolution ======} */

typedef struct {
  el_otlp_config_t *cfg;
  el_otlp_getenv_fn getenv;
  void *ud;
} env_t;

static const char *std_getenv(void *ud, const char *name) {
  (void)ud;
  return getenv(name);
}

/* The variable's value, NULL when unset or empty. */
static const char *env_get(env_t *env, const char *name) {
  const char *v = env->getenv(env->ud, name);
  return v && *v ? v : NULL;
}

/* Signal-specific variable, then the generic one. *used: the name found. */
static const char *env_sig(env_t *env, int s, const char *what,
                           char *used, size_t usedsz) {
  snprintf(used, usedsz, "OTEL_EXPORTER_OTLP_%s_%s", SIG_UPPER[s], what);
  const char *v = env_get(env, used);
  if (v) return v;
  snprintf(used, usedsz, "OTEL_EXPORTER_OTLP_%s", what);
  return env_get(env, used);
}

/* A user value for a message: long values are cut to their first 48
 * bytes and their length, so the reason that follows still fits in
 * cfg->err. */
typedef struct { char s[80]; } shortv_t;
static const char *shortv(const char *v, shortv_t *b) {
  size_t n = strlen(v);
  if (n <= 64) return v;
  snprintf(b->s, sizeof b->s, "%.48s... (%zu bytes)", v, n);
  return b->s;
}
/* The buffer is a compound literal: it lives until the enclosing block
 * ends, i.e. through the cfg_fail call. */
#define SHORTV(v) shortv((v), &(shortv_t){{0}})

static int cfg_fail(el_otlp_config_t *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int cfg_fail(el_otlp_config_t *cfg, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cfg->err, sizeof cfg->err, fmt, ap);
  va_end(ap);
  return EL_ECONFIG;
}

/* Did-you-mean for an unknown value v among the n choices: " Did you
 * mean 'X'?" (el_nearest), else "". DYM(v, choices) is the call with a
 * compound-literal buffer that lives through the enclosing cfg_fail. */
typedef struct {
  char s[64];
} dym_t;
static const char *dym(const char *v, const char *const *choices, size_t n,
                       dym_t *b) {
  const char *near = el_nearest(v, choices, n);
  if (!near) return "";
  snprintf(b->s, sizeof b->s, " Did you mean '%s'?", near);
  return b->s;
}
#define DYM(v, ...)                                                      \
  dym((v), (const char *const[]){__VA_ARGS__},                           \
      sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *), \
      &(dym_t){{0}})

/* "Environment variable X" or "Option --x" for messages. */
static void src_name(char *buf, size_t sz, bool is_flag, const char *name) {
  snprintf(buf, sz, "%s %s", is_flag ? "Option" : "Environment variable",
           name);
}

bool el_otlp_config_err_is_usage(const el_otlp_config_t *cfg) {
  return strncmp(cfg->err, "Option ", 7) == 0; /* src_name's words */
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out) {
  if (!s || !*s) return -1;
  for (const char *p = s; *p; p++)
    if (!isdigit((unsigned char)*p)) return -1;
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  if (errno || v > max) return -1;
  *out = v;
  return 0;
}

static int resolve_exporter(env_t *env, int s) {
  char name[64];
  snprintf(name, sizeof name, "OTEL_%s_EXPORTER", SIG_UPPER[s]);
  const char *v = env_get(env, name);
  el_otlp_signal_cfg_t *sc = &env->cfg->sig[s];
  if (!v) return 0;
  if (!strcasecmp(v, "otlp")) sc->exporter = EL_OTLP_EXP_OTLP;
  else if (!strcasecmp(v, "console")) sc->exporter = EL_OTLP_EXP_CONSOLE;
  else if (!strcasecmp(v, "none")) sc->exporter = EL_OTLP_EXP_NONE;
  else if (!strcasecmp(v, "prometheus") && s == EL_TM_SIGNAL_METRICS)
    return cfg_fail(env->cfg,
                    "Environment variable %s specifies "
                    "unsupported exporter 'prometheus': the daemon serves "
                    "Prometheus itself, pull-style: use --prometheus-port "
                    "PORT (or web: {prometheus_port: PORT} in --config). "
                    "Here use 'otlp', 'console' or 'none'.",
                    name);
  else if (!strcasecmp(v, "zipkin") || !strcasecmp(v, "prometheus") ||
           !strcasecmp(v, "logging"))
    return cfg_fail(env->cfg, "Environment variable %s specifies "
                    "unsupported exporter '%s'. Use 'otlp', 'console' or "
                    "'none'.", name, SHORTV(v));
  else
    return cfg_fail(env->cfg,
                    "Environment variable %s specifies unknown "
                    "exporter '%s'.%s Use 'otlp', 'console' or 'none'.",
                    name, SHORTV(v), DYM(v, "otlp", "console", "none"));
  return 0;
}

static int resolve_protocol(env_t *env, int s) {
  el_otlp_config_t *cfg = env->cfg;
  char name[64], who[96];
  const char *v;
  bool is_flag = true;
  if (cfg->flag.protocol) {
    v = cfg->flag.protocol;
    snprintf(name, sizeof name, "--otlp-protocol");
  } else if (cfg->flag.host || cfg->flag.port) {
    cfg->sig[s].protocol = EL_OTLP_GRPC;     /* the reference's flags */
    return 0;
  } else {
    is_flag = false;
    v = env_sig(env, s, "PROTOCOL", name, sizeof name);
    if (!v) return 0;
  }
  src_name(who, sizeof who, is_flag, name);
  if (!strcasecmp(v, "grpc")) cfg->sig[s].protocol = EL_OTLP_GRPC;
  else if (!strcasecmp(v, "http/protobuf"))
    cfg->sig[s].protocol = EL_OTLP_HTTP_PROTOBUF;
  else if (!strcasecmp(v, "http/json"))
    return cfg_fail(cfg, "%s specifies unsupported protocol '%s'. Use "
                    "'grpc' or 'http/protobuf'.", who, SHORTV(v));
  else
    return cfg_fail(cfg,
                    "%s specifies unknown protocol '%s'.%s Use 'grpc' "
                    "or 'http/protobuf'.",
                    who, SHORTV(v), DYM(v, "grpc", "http/protobuf"));
  return 0;
}

static int parse_bool(env_t *env, const char *name, const char *v,
                      bool *out) {
  if (!strcasecmp(v, "true")) *out = true;
  else if (!strcasecmp(v, "false")) *out = false;
  else
    return cfg_fail(env->cfg,
                    "Environment variable %s has non-boolean "
                    "value '%s'.%s Use 'true' or 'false'.",
                    name, SHORTV(v), DYM(v, "true", "false"));
  return 0;
}

/* The parts of the two default endpoints, known without a parser. */
static bool url_default(const char *url, el_otlp_url_t *u) {
  const char *port = !strcmp(url, "http://localhost:4317")   ? "4317"
                     : !strcmp(url, "http://localhost:4318") ? "4318"
                                                             : NULL;
  if (!port) return false;
  memset(u, 0, sizeof *u);
  u->scheme = el_strdup("http");
  u->host = el_strdup("localhost");
  u->port = el_strdup(port);
  return true;
}

/* Split url with libcurl's URL API, which lives in the OTLP/HTTP plugin
 * (otlp_plugin.h) so that libcurl is loaded only when an endpoint is
 * given; the defaults need no parser. 0, -1 (malformed), EL_ENOMEM, or
 * EL_ECONFIG (the plugin cannot be loaded; cfg->err says why). */
static int url_split(el_otlp_config_t *cfg, const char *url, el_otlp_url_t *u) {
  if (url_default(url, u)) {
    if (u->scheme && u->host && u->port) return 0;
    el__otlp_url_free(u);
    return EL_ENOMEM;
  }
  const el_otlp_transport_plugin_t *p =
      el__otlp_http_plugin(cfg->err, sizeof cfg->err);
  if (!p) return EL_ECONFIG;
  return p->url_split(url, u);
}

/* The port of URL value when its authority ends in ":DIGITS" (after the
 * "://", before any "/", outside an IPv6 literal's brackets), else -1:
 * for a message when the URL parser refused it. */
static long url_port_text(const char *value) {
  const char *a = strstr(value, "://");
  a = a ? a + 3 : value;
  size_t n = strcspn(a, "/?#");
  const char *colon = NULL;
  for (size_t i = 0; i < n; i++)
    if (a[i] == ':')
      colon = a + i;
    else if (a[i] == ']')
      colon = NULL;
  if (!colon || colon + 1 == a + n || (size_t)(a + n - colon - 1) > 18)
    return -1;
  long port = 0;
  for (const char *p = colon + 1; p < a + n; p++) {
    if (!isdigit((unsigned char)*p)) return -1;
    port = port * 10 + (*p - '0');
  }
  return port;
}

/* Build sc->target/tls from an endpoint URL. per_signal: the value came
 * from a per-signal variable (HTTP: used as is). host: when value was
 * built from --otelcol-host (and --otelcol-port), the host as given, which
 * a message names instead of the URI the user never typed. */
static int endpoint_apply(env_t *env, int s, const char *who, const char *value,
                          bool per_signal, bool insecure_set, bool insecure,
                          const char *host) {
  el_otlp_config_t *cfg = env->cfg;
  el_otlp_signal_cfg_t *sc = &cfg->sig[s];
  bool grpc = sc->protocol == EL_OTLP_GRPC;
  el_otlp_url_t u;
  if (strlen(value) > 1000)
    return cfg_fail(cfg, "%s specifies a URI longer than 1000 bytes "
                    "'%.40s...'.", who, value);
  int rc = url_split(cfg, value, &u);
  if (rc == EL_ENOMEM || rc == EL_ECONFIG) return rc;
  if (rc < 0 && grpc && !strstr(value, "://")) {
    /* Scheme-less gRPC endpoint: infer from INSECURE (§1.4). */
    char buf[1024];
    bool tls = insecure_set && !insecure;
    snprintf(buf, sizeof buf, "%s://%s", tls ? "https" : "http", value);
    rc = url_split(cfg, buf, &u);
  }
  if (rc < 0 || !u.scheme || !u.host) {
    el__otlp_url_free(&u);
    if (host)
      return cfg_fail(cfg,
                      "%s specifies malformed host '%s': give a host "
                      "name or an IP address.",
                      who, SHORTV(host));
    long port = url_port_text(value);
    if (port == 0 || port > 65535)
      return cfg_fail(cfg,
                      "%s specifies port %ld in '%s': a port is 1 to "
                      "65535.",
                      who, port, SHORTV(value));
    if (!strstr(value, "://")) {
      /* A scheme-less endpoint (host:port), which only gRPC takes: say
       * what would be right when that parses. */
      char buf[1024];
      snprintf(buf, sizeof buf, "http://%s", value);
      el_otlp_url_t v;
      memset(&v, 0, sizeof v);
      int vrc = url_split(cfg, buf, &v);
      bool ok = vrc == 0 && v.scheme && v.host;
      el__otlp_url_free(&v);
      if (vrc == EL_ENOMEM || vrc == EL_ECONFIG) return vrc;
      if (ok)
        return cfg_fail(cfg,
                        "%s specifies malformed URI '%s': a URI "
                        "begins with its scheme; did you mean 'http://%s' "
                        "(or 'https://%s')?",
                        who, SHORTV(value), SHORTV(value), SHORTV(value));
    }
    return cfg_fail(cfg, "%s specifies malformed URI '%s'.", who,
                    SHORTV(value));
  }
  if (strcasecmp(u.scheme, "http") && strcasecmp(u.scheme, "https")) {
    el__otlp_url_free(&u);
    return cfg_fail(cfg, "%s specifies URI with unsupported scheme '%s'. "
                    "Use 'http' or 'https'.", who, SHORTV(value));
  }
  if (u.user || u.query)
    el_log(EL_LOG_WARN, "%s specifies URI with %s '%s' (ignored).", who,
           u.user ? "user info" : "query", value);
  sc->tls = !strcasecmp(u.scheme, "https");
  char buf[2048];
  if (grpc) {
    snprintf(buf, sizeof buf, "%s:%s", u.host, u.port ? u.port : "4317");
  } else {
    const char *path = u.path ? u.path : "/";
    size_t pl = strlen(path);
    if (!per_signal) {
      while (pl > 0 && path[pl - 1] == '/') pl--;
    }
    snprintf(buf, sizeof buf, "%s://%s%s%s%.*s%s", sc->tls ? "https" : "http",
             u.host, u.port ? ":" : "", u.port ? u.port : "", (int)pl, path,
             per_signal ? "" : SIG_PATH[s]);
  }
  el__otlp_url_free(&u);
  el_free(sc->target);
  sc->target = el_strdup(buf);
  return sc->target ? 0 : EL_ENOMEM;
}

static int resolve_endpoint(env_t *env, int s) {
  el_otlp_config_t *cfg = env->cfg;
  el_otlp_signal_cfg_t *sc = &cfg->sig[s];
  char name[64], iname[64], who[96];
  bool insecure = false, insecure_set = false;
  const char *iv = env_sig(env, s, "INSECURE", iname, sizeof iname);
  if (iv) {
    int rc = parse_bool(env, iname, iv, &insecure);
    if (rc < 0) return rc;
    insecure_set = true;
  }
  if (cfg->flag.host || cfg->flag.port) {
    const char *host = cfg->flag.host ? cfg->flag.host : "localhost";
    const char *port = cfg->flag.port ? cfg->flag.port : "4317";
    uint64_t pv;
    if (parse_uint(port, 65535, &pv) < 0 || pv == 0)
      return cfg_fail(cfg, "Option --otelcol-port specifies malformed port "
                      "'%s'.", SHORTV(port));
    char url[1024];
    src_name(who, sizeof who, true, "--otelcol-host");
    if (strstr(host, "://"))
      return cfg_fail(cfg,
                      "%s specifies '%s', a URI: give a host name or "
                      "an IP address (the port in --otelcol-port), or the "
                      "URI with --otlp-endpoint.",
                      who, SHORTV(host));
    bool v6 = strchr(host, ':') && host[0] != '[';
    snprintf(url, sizeof url, "%s://%s%s%s:%s",
             cfg->flag.ssl ? "https" : "http", v6 ? "[" : "", host,
             v6 ? "]" : "", port);
    return endpoint_apply(env, s, who, url, false, false, false, host);
  }
  if (cfg->flag.endpoint) {
    src_name(who, sizeof who, true, "--otlp-endpoint");
    return endpoint_apply(env, s, who, cfg->flag.endpoint, false, insecure_set,
                          insecure, NULL);
  }
  snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_ENDPOINT", SIG_UPPER[s]);
  const char *v = env_get(env, name);
  bool per_signal = v != NULL;
  if (!v) {
    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_ENDPOINT");
    v = env_get(env, name);
  }
  if (v) {
    src_name(who, sizeof who, false, name);
    return endpoint_apply(env, s, who, v, per_signal, insecure_set, insecure,
                          NULL);
  }
  const char *def = sc->protocol == EL_OTLP_GRPC ? "http://localhost:4317"
                                                 : "http://localhost:4318";
  return endpoint_apply(env, s, "default endpoint", def, false, false, false,
                        NULL);
}

static int resolve_certificate(env_t *env, int s) {
  el_otlp_config_t *cfg = env->cfg;
  char name[64], who[96];
  const char *v = cfg->flag.certificate;
  if (v) {
    src_name(who, sizeof who, true, "--otelcol-certificate-store");
  } else {
    v = env_sig(env, s, "CERTIFICATE", name, sizeof name);
    if (!v) return 0;
    src_name(who, sizeof who, false, name);
  }
  if (access(v, R_OK) != 0)
    return cfg_fail(cfg, "%s specifies certificate file '%s' that cannot "
                    "be read: %s.", who, SHORTV(v), strerror(errno));
  cfg->sig[s].certificate = el_strdup(v);
  return cfg->sig[s].certificate ? 0 : EL_ENOMEM;
}

static int resolve_headers(env_t *env, int s) {
  el_otlp_config_t *cfg = env->cfg;
  el_otlp_signal_cfg_t *sc = &cfg->sig[s];
  char name[64], why[128];
  const char *v = env_sig(env, s, "HEADERS", name, sizeof name);
  if (!v) return 0;
  int rc = el_otlp_baggage_parse(v, &sc->headers, &sc->nheaders, why,
                                 sizeof why);
  if (rc == EL_EINVAL)
    return cfg_fail(cfg, "Environment variable %s specifies malformed "
                    "headers '%s': %s.", name, SHORTV(v), why);
  /* Percent-decoding can produce control characters, which would split
   * an HTTP header line or make gRPC refuse the metadata. */
  for (size_t i = 0; rc == 0 && i < sc->nheaders; i++)
    for (const unsigned char *p = (const unsigned char *)sc->headers[i].value;
         *p; p++)
      if (*p < 0x20 || *p == 0x7f)
        return cfg_fail(cfg, "Environment variable %s specifies malformed "
                        "headers '%s': control character in the value of "
                        "'%s'.", name, SHORTV(v), sc->headers[i].name);
  return rc;
}

static int resolve_compression(env_t *env, int s) {
  el_otlp_config_t *cfg = env->cfg;
  char name[64], who[96];
  const char *v = cfg->flag.compression;
  if (v) {
    src_name(who, sizeof who, true, "--otlp-compression");
  } else {
    v = env_sig(env, s, "COMPRESSION", name, sizeof name);
    if (!v) return 0;
    src_name(who, sizeof who, false, name);
  }
  if (!strcasecmp(v, "gzip")) cfg->sig[s].compression = EL_OTLP_COMPRESS_GZIP;
  else if (!strcasecmp(v, "none"))
    cfg->sig[s].compression = EL_OTLP_COMPRESS_NONE;
  else
    return cfg_fail(cfg,
                    "%s specifies unknown compression '%s'.%s Use "
                    "'none' or 'gzip'.",
                    who, SHORTV(v), DYM(v, "none", "gzip"));
  return 0;
}

static int resolve_timeout(env_t *env, int s) {
  char name[64];
  const char *v = env_sig(env, s, "TIMEOUT", name, sizeof name);
  uint64_t ms;
  if (!v) return 0;
  if (parse_uint(v, INT_MAX, &ms) < 0)
    return cfg_fail(env->cfg, "Environment variable %s specifies malformed "
                    "timeout '%s'. Use a number of milliseconds.", name,
                    SHORTV(v));
  env->cfg->sig[s].timeout_ms = (int)ms;
  return 0;
}

static int resolve_signal(env_t *env, int s) {
  el_otlp_config_t *cfg = env->cfg;
  int rc;
  if ((rc = resolve_exporter(env, s)) < 0) return rc;
  if ((rc = resolve_protocol(env, s)) < 0) return rc;
  if ((rc = resolve_endpoint(env, s)) < 0) return rc;
  if ((rc = resolve_certificate(env, s)) < 0) return rc;
  if ((rc = resolve_headers(env, s)) < 0) return rc;
  if ((rc = resolve_compression(env, s)) < 0) return rc;
  if ((rc = resolve_timeout(env, s)) < 0) return rc;
  if (cfg->flag.authority) {
    cfg->sig[s].authority = el_strdup(cfg->flag.authority);
    if (!cfg->sig[s].authority) return EL_ENOMEM;
  }
  return 0;
}

/* A numeric delivery setting: flag, then EL_OTLP_<name>, then default. */
static int resolve_number(env_t *env, const char *flagval,
                          const char *flagname, const char *var,
                          uint64_t max, uint64_t min, uint64_t *out) {
  char who[96];
  const char *v = flagval;
  if (v) {
    src_name(who, sizeof who, true, flagname);
  } else {
    v = env_get(env, var);
    if (!v) return 0;
    src_name(who, sizeof who, false, var);
  }
  uint64_t n;
  if (parse_uint(v, UINT64_MAX, &n) < 0)
    return cfg_fail(env->cfg, "%s specifies malformed number '%s'.", who,
                      SHORTV(v));
  if (n < min && max == UINT64_MAX)
    return cfg_fail(env->cfg, "%s specifies %llu: it must be at least %llu.",
                    who, (unsigned long long)n, (unsigned long long)min);
  if (n < min || n > max)
    return cfg_fail(env->cfg,
                    "%s specifies %llu, out of range: from %llu to %llu.", who,
                    (unsigned long long)n, (unsigned long long)min,
                    (unsigned long long)max);
  *out = n;
  return 0;
}

static int resolve_delivery(env_t *env) {
  el_otlp_config_t *cfg = env->cfg;
  uint64_t v;
  int rc;
#define NUM(flagval, flagname, var, max, min, field, type)                 \
  v = (uint64_t)cfg->field;                                                \
  rc = resolve_number(env, flagval, flagname, var, max, min, &v);          \
  if (rc < 0) return rc;                                                   \
  cfg->field = (type)v;
  NUM(cfg->flag.queue_bytes, "--otlp-queue-bytes", "EL_OTLP_QUEUE_MAX_BYTES",
      SIZE_MAX, 1, queue_max_bytes, size_t)
  NUM(cfg->flag.queue_items, "--otlp-queue-items", "EL_OTLP_QUEUE_MAX_ITEMS",
      SIZE_MAX, 1, queue_max_items, size_t)
  NUM(cfg->flag.max_message, "--otlp-max-message-bytes",
      "EL_OTLP_MAX_MESSAGE_BYTES", SIZE_MAX, 1024, max_message_bytes, size_t)
  NUM(cfg->flag.shutdown_ms, "--otlp-shutdown-timeout",
      "EL_OTLP_SHUTDOWN_TIMEOUT", INT_MAX, 0, shutdown_timeout_ms, int)
  NUM(NULL, NULL, "EL_OTLP_RETRY_INITIAL", INT_MAX, 1, retry_initial_ms, int)
  NUM(NULL, NULL, "EL_OTLP_RETRY_MAX", INT_MAX, 1, retry_max_ms, int)
  NUM(NULL, NULL, "EL_OTLP_RETRY_MAX_ELAPSED", INT_MAX, 0,
      retry_max_elapsed_ms, int)
#undef NUM
  if (cfg->retry_max_ms < cfg->retry_initial_ms)
    cfg->retry_max_ms = cfg->retry_initial_ms;
  return 0;
}

static int resolve_resource(env_t *env) {
  el_otlp_config_t *cfg = env->cfg;
  const char *v = env_get(env, "OTEL_RESOURCE_ATTRIBUTES");
  char why[128];
  if (v) {
    int rc = el_otlp_baggage_parse(v, &cfg->resource, &cfg->nresource, why,
                                   sizeof why);
    if (rc == EL_EINVAL)
      return cfg_fail(cfg, "Environment variable OTEL_RESOURCE_ATTRIBUTES "
                      "specifies malformed baggage '%s': %s.", SHORTV(v),
                      why);
    if (rc < 0) return rc;
  }
  /* --service-name, else OTEL_SERVICE_NAME, else the service.name pair
   * of OTEL_RESOURCE_ATTRIBUTES (the SDK's order): the resource's, the
   * web view's and the control server's name (reference-behaviour.md
   * §3, "Connection registry": service.name from the environment). */
  const char *svc = cfg->flag.service_name;
  if (!svc) svc = env_get(env, "OTEL_SERVICE_NAME");
  for (size_t i = 0; !svc && i < cfg->nresource; i++)
    if (!strcmp(cfg->resource[i].name, "service.name"))
      svc = cfg->resource[i].value;
  if (svc) {
    cfg->service_name = el_strdup(svc);
    if (!cfg->service_name) return EL_ENOMEM;
  }
  return 0;
}

int el_otlp_config_resolve(el_otlp_config_t *cfg, el_otlp_getenv_fn getenv,
                           void *ud) {
  env_t env = {cfg, getenv ? getenv : std_getenv, ud};
  int rc = resolve_resource(&env);
  for (int s = 0; rc == 0 && s < EL_TM_NSIGNALS; s++)
    rc = resolve_signal(&env, s);
  if (rc == 0) rc = resolve_delivery(&env);
  if (rc == 0 && cfg->flag.no_otlp) /* --no-otlp wins over everything */
    for (int s = 0; s < EL_TM_NSIGNALS; s++)
      if (cfg->sig[s].exporter == EL_OTLP_EXP_OTLP)
        cfg->sig[s].exporter = EL_OTLP_EXP_NONE;
  if (rc == EL_ENOMEM)
    snprintf(cfg->err, sizeof cfg->err, "out of memory");
  return rc;
}

int el_otlp_config_resolve_resource(el_otlp_config_t *cfg,
                                    el_otlp_getenv_fn getenv, void *ud) {
  env_t env = {cfg, getenv ? getenv : std_getenv, ud};
  int rc = resolve_resource(&env);
  if (rc == EL_ENOMEM) snprintf(cfg->err, sizeof cfg->err, "out of memory");
  return rc;
}

bool el_otlp_config_requested(const el_otlp_config_t *cfg,
                              el_otlp_getenv_fn getenv, void *ud) {
  const __typeof__(cfg->flag) *f = &cfg->flag;
  if (f->host || f->port || f->authority || f->ssl || f->certificate ||
      f->protocol || f->endpoint || f->compression)
    return true;
  env_t env = {(el_otlp_config_t *)cfg, getenv ? getenv : std_getenv, ud};
  char name[64];
  if (env_get(&env, "OTEL_EXPORTER_OTLP_ENDPOINT")) return true;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    snprintf(name, sizeof name, "OTEL_%s_EXPORTER", SIG_UPPER[s]);
    if (env_get(&env, name)) return true;
    snprintf(name, sizeof name, "OTEL_EXPORTER_OTLP_%s_ENDPOINT", SIG_UPPER[s]);
    if (env_get(&env, name)) return true;
  }
  return false;
}

int el_otlp_config_apply_resource(const el_otlp_config_t *cfg,
                                  el_tm_store_t *st) {
  for (size_t i = 0; i < cfg->nresource; i++) {
    const el_otlp_header_t *h = &cfg->resource[i];
    if (cfg->service_name && !strcmp(h->name, "service.name")) continue;
    el_tm_attr_t a = {.key = h->name, .type = EL_TM_STR,
                      .v.s = {h->value, strlen(h->value)}};
    int rc = el_tm_store_set_resource(st, &a);
    if (rc < 0) return rc;
  }
  if (cfg->service_name) {
    el_tm_attr_t a = {.key = "service.name", .type = EL_TM_STR,
                      .v.s = {cfg->service_name, strlen(cfg->service_name)}};
    return el_tm_store_set_resource(st, &a);
  }
  return 0;
}
