/* test_otlp_config.c: exporter configuration from flags and OTEL_*
 * variables (precedence, endpoint rules, baggage syntax, error messages).
 * Expected values are written from the OTLP exporter specification and
 * reference-behaviour.md §1.3.1, §1.3.3, §1.4.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "otlp/otlp.h"

/* {====== fake environment ======} */

typedef struct {
  const char *kv[32][2];
  int n;
} fenv_t;

static const char *fenv_get(void *ud, const char *name) {
  fenv_t *e = ud;
  for (int i = 0; i < e->n; i++)
    if (!strcmp(e->kv[i][0], name)) return e->kv[i][1];
  return NULL;
}

static void fenv_set(fenv_t *e, const char *k, const char *v) {
  e->kv[e->n][0] = k;
  e->kv[e->n][1] = v;
  e->n++;
}

/* Resolve with flags argv (NULL-terminated) and env; returns the code. */
static int resolve(el_otlp_config_t *cfg, fenv_t *env, const char **args) {
  el_otlp_config_init(cfg);
  int argc = 0;
  while (args && args[argc]) argc++;
  for (int i = 0; i < argc;) {
    int rc = el_otlp_opts_parse(cfg, argc, (char **)args, &i);
    assert_int_equal(rc, 1);
  }
  return el_otlp_config_resolve(cfg, fenv_get, env);
}

#define M EL_TM_SIGNAL_METRICS
#define L EL_TM_SIGNAL_LOGS
#define T EL_TM_SIGNAL_TRACES
#define P EL_TM_SIGNAL_PROFILES

/* {====== tests ======} */

static void test_defaults_are_http_protobuf_on_4318(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_int_equal(c.sig[M].exporter, EL_OTLP_EXP_OTLP);
  assert_int_equal(c.sig[M].protocol, EL_OTLP_HTTP_PROTOBUF);
  assert_string_equal(c.sig[M].target, "http://localhost:4318/v1/metrics");
  assert_string_equal(c.sig[L].target, "http://localhost:4318/v1/logs");
  assert_string_equal(c.sig[T].target, "http://localhost:4318/v1/traces");
  assert_string_equal(c.sig[P].target,
                      "http://localhost:4318/v1development/profiles");
  assert_false(c.sig[M].tls);
  assert_int_equal(c.sig[M].timeout_ms, 10000);
  assert_int_equal(c.sig[M].compression, EL_OTLP_COMPRESS_NONE);
  assert_null(c.service_name);
  assert_int_equal(c.nresource, 0);
  assert_int_equal(c.max_message_bytes, 4 * 1024 * 1024);
  el_otlp_config_free(&c);
}

static void test_generic_endpoint_gets_signal_path(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:9999/base/");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_string_equal(c.sig[M].target,
                      "https://collector:9999/base/v1/metrics");
  assert_string_equal(c.sig[P].target,
                      "https://collector:9999/base/v1development/profiles");
  assert_true(c.sig[M].tls);
  el_otlp_config_free(&c);
}

static void test_per_signal_http_endpoint_used_as_is(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:1234/custom");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_string_equal(c.sig[M].target, "http://m:1234/custom");
  assert_string_equal(c.sig[L].target, "http://generic:4318/v1/logs");
  el_otlp_config_free(&c);
}

static void test_grpc_endpoint_forms(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_PROTOCOL", "GRPC");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:5555");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t.example");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://[::1]:7/ignored");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_int_equal(c.sig[M].protocol, EL_OTLP_GRPC);
  assert_string_equal(c.sig[M].target, "localhost:5555");
  assert_false(c.sig[M].tls);
  assert_string_equal(c.sig[T].target, "t.example:4317");
  assert_true(c.sig[T].tls);
  assert_string_equal(c.sig[L].target, "[::1]:7");
  el_otlp_config_free(&c);
}

static void test_grpc_default_and_insecure_false_means_tls(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_string_equal(c.sig[M].target, "localhost:4317");
  el_otlp_config_free(&c);
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_INSECURE", "false");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_true(c.sig[M].tls);
  assert_string_equal(c.sig[M].target, "collector:4317");
  el_otlp_config_free(&c);
}

static void test_per_signal_protocol_overrides_generic(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_TIMEOUT", "2500");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "0");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_int_equal(c.sig[T].protocol, EL_OTLP_GRPC);
  assert_string_equal(c.sig[T].target, "localhost:4317");
  assert_int_equal(c.sig[M].protocol, EL_OTLP_HTTP_PROTOBUF);
  assert_int_equal(c.sig[M].timeout_ms, 2500);
  assert_int_equal(c.sig[L].timeout_ms, 0);
  el_otlp_config_free(&c);
}

static void test_reference_flags_win_over_environment(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318");
  fenv_set(&e, "OTEL_SERVICE_NAME", "from-env");
  const char *args[] = {"--otelcol-host", "otel.local", "--otelcol-port=1234",
                        "--otelcol-ssl", "--otelcol-authority", "auth.x",
                        "--service-name", "from-flag", NULL};
  assert_int_equal(resolve(&c, &e, args), 0);
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    assert_int_equal(c.sig[s].protocol, EL_OTLP_GRPC);
    assert_string_equal(c.sig[s].target, "otel.local:1234");
    assert_true(c.sig[s].tls);
    assert_string_equal(c.sig[s].authority, "auth.x");
  }
  assert_string_equal(c.service_name, "from-flag");
  el_otlp_config_free(&c);
}

static void test_otelcol_port_default_4317(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  const char *args[] = {"--otelcol-host", "h", NULL};
  assert_int_equal(resolve(&c, &e, args), 0);
  assert_string_equal(c.sig[M].target, "h:4317");
  assert_false(c.sig[M].tls);
  el_otlp_config_free(&c);
}

static void test_service_name_and_resource_attributes(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_RESOURCE_ATTRIBUTES",
           " service.name=x, deployment.environment = prod%20eu ;p=1,"
           "k=%E2%82%AC");
  fenv_set(&e, "OTEL_SERVICE_NAME", "svc");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_string_equal(c.service_name, "svc");
  assert_int_equal(c.nresource, 3);
  assert_string_equal(c.resource[0].name, "service.name");
  assert_string_equal(c.resource[1].name, "deployment.environment");
  assert_string_equal(c.resource[1].value, "prod eu");
  assert_string_equal(c.resource[2].value, "\xe2\x82\xac");
  el_otlp_config_free(&c);
}

/* Without --service-name or OTEL_SERVICE_NAME, the service.name pair of
 * OTEL_RESOURCE_ATTRIBUTES names the service (h45: the daemon exported
 * "undefined" over it); the other pairs stay as they are. */
static void test_service_name_from_resource_attributes(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_RESOURCE_ATTRIBUTES", "foo=bar,service.name=res%20name");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_non_null(c.service_name);
  assert_string_equal(c.service_name, "res name");
  assert_int_equal(c.nresource, 2);
  el_otlp_config_free(&c);
  fenv_t e2 = {0};
  fenv_set(&e2, "OTEL_RESOURCE_ATTRIBUTES", "foo=bar");
  assert_int_equal(resolve(&c, &e2, NULL), 0);
  assert_null(c.service_name);
  el_otlp_config_free(&c);
}

static void test_exporter_kinds(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_METRICS_EXPORTER", "Console");
  fenv_set(&e, "OTEL_LOGS_EXPORTER", "none");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_int_equal(c.sig[M].exporter, EL_OTLP_EXP_CONSOLE);
  assert_int_equal(c.sig[L].exporter, EL_OTLP_EXP_NONE);
  assert_int_equal(c.sig[T].exporter, EL_OTLP_EXP_OTLP);
  el_otlp_config_free(&c);
}

static void test_headers_and_compression(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_HEADERS", "api-key=secret,x-a=b%2Cc");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "only=logs");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_COMPRESSION", "GZIP");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "none");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_int_equal(c.sig[T].nheaders, 2);
  assert_string_equal(c.sig[T].headers[0].name, "api-key");
  assert_string_equal(c.sig[T].headers[1].value, "b,c");
  assert_int_equal(c.sig[L].nheaders, 1);
  assert_string_equal(c.sig[L].headers[0].value, "logs");
  assert_int_equal(c.sig[T].compression, EL_OTLP_COMPRESS_GZIP);
  assert_int_equal(c.sig[M].compression, EL_OTLP_COMPRESS_NONE);
  el_otlp_config_free(&c);
}

static void test_empty_variable_counts_as_unset(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_PROTOCOL", "");
  fenv_set(&e, "OTEL_RESOURCE_ATTRIBUTES", "");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_TIMEOUT", "");
  assert_int_equal(resolve(&c, &e, NULL), 0);
  assert_int_equal(c.sig[M].protocol, EL_OTLP_HTTP_PROTOBUF);
  assert_int_equal(c.nresource, 0);
  el_otlp_config_free(&c);
}

static void test_delivery_settings_flag_over_env(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "EL_OTLP_QUEUE_MAX_ITEMS", "5");
  fenv_set(&e, "EL_OTLP_QUEUE_MAX_BYTES", "1000");
  fenv_set(&e, "EL_OTLP_SHUTDOWN_TIMEOUT", "250");
  const char *args[] = {"--otlp-queue-items", "7", NULL};
  assert_int_equal(resolve(&c, &e, args), 0);
  assert_int_equal(c.queue_max_items, 7);
  assert_int_equal(c.queue_max_bytes, 1000);
  assert_int_equal(c.shutdown_timeout_ms, 250);
  el_otlp_config_free(&c);
}

/* Each bad value: the error names the variable and the value. */
static void expect_error(const char *var, const char *val,
                         const char *words) {
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, var, val);
  assert_int_equal(resolve(&c, &e, NULL), EL_ECONFIG);
  assert_non_null(strstr(c.err, var));
  char quoted[300];
  snprintf(quoted, sizeof quoted, "'%s'", val);
  assert_non_null(strstr(c.err, quoted));
  assert_non_null(strstr(c.err, words));
  el_otlp_config_free(&c);
}

static void test_errors_name_variable_and_value(void **state) {
  expect_error("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "unsupported");
  expect_error("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "udp", "unknown protocol");
  expect_error("OTEL_TRACES_EXPORTER", "zipkin", "unsupported exporter");
  expect_error("OTEL_PROFILES_EXPORTER", "pyro", "unknown exporter");
  expect_error("OTEL_EXPORTER_OTLP_COMPRESSION", "brotli", "compression");
  expect_error("OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "timeout");
  expect_error("OTEL_EXPORTER_OTLP_INSECURE", "maybe", "non-boolean");
  expect_error("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x", "scheme");
  expect_error("OTEL_EXPORTER_OTLP_ENDPOINT", "not a url", "malformed");
  expect_error("OTEL_RESOURCE_ATTRIBUTES", "a=b c", "malformed baggage");
  expect_error("OTEL_EXPORTER_OTLP_HEADERS", "novalue", "malformed headers");
  expect_error("OTEL_EXPORTER_OTLP_HEADERS", "a=b%0D%0AX-Injected:1",
               "control character");
  expect_error("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem",
               "cannot be read");
  expect_error("EL_OTLP_QUEUE_MAX_ITEMS", "-3", "malformed number");
}

/* Did-you-mean for OTEL_* values: a near miss names the value meant; a
 * Prometheus exporter for metrics points at the daemon's own endpoint. */
static void test_errors_suggest_the_value_meant(void **state) {
  expect_error("OTEL_TRACES_EXPORTER", "otlpp", "Did you mean 'otlp'?");
  expect_error("OTEL_LOGS_EXPORTER", "Consol", "Did you mean 'console'?");
  expect_error("OTEL_EXPORTER_OTLP_PROTOCOL", "gprc", "Did you mean 'grpc'?");
  expect_error("OTEL_EXPORTER_OTLP_COMPRESSION", "gzp", "Did you mean 'gzip'?");
  expect_error("OTEL_EXPORTER_OTLP_INSECURE", "ture", "Did you mean 'true'?");
  expect_error("OTEL_METRICS_EXPORTER", "prometheus", "--prometheus-port");
  expect_error("OTEL_TRACES_EXPORTER", "prometheus", "unsupported exporter");
  /* a port out of range is named, not "malformed URI" */
  expect_error("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:99999",
               "specifies port 99999 in 'http://127.0.0.1:99999': a port is "
               "1 to 65535.");
  expect_error("OTEL_EXPORTER_OTLP_ENDPOINT", "http://[::1]:70000/x",
               "specifies port 70000");
  expect_error("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:12ab", "malformed URI");
  fenv_t env = {0};
  el_otlp_config_t cfg;
  fenv_set(&env, "OTEL_PROFILES_EXPORTER", "pyroscope");
  assert_int_equal(resolve(&cfg, &env, NULL), EL_ECONFIG);
  assert_null(strstr(cfg.err, "Did you mean")); /* nothing near */
  el_otlp_config_free(&cfg);
}

/* An endpoint without its scheme (host:port, which only gRPC takes)
 * gets the URI meant; one that would still be malformed gets none. */
static void test_schemeless_endpoint_suggests_http(void **state) {
  expect_error("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318",
               "did you mean 'http://localhost:4318'");
  el_otlp_config_t c;
  fenv_t e = {0};
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", "not a url");
  assert_int_equal(resolve(&c, &e, NULL), EL_ECONFIG);
  assert_non_null(strstr(c.err, "malformed URI 'not a url'"));
  assert_null(strstr(c.err, "did you mean"));
  el_otlp_config_free(&c);
  const char *args[] = {"--otlp-endpoint", "localhost:4318", NULL};
  fenv_t e2 = {0};
  assert_int_equal(resolve(&c, &e2, args), EL_ECONFIG);
  assert_non_null(strstr(c.err, "Option --otlp-endpoint"));
  assert_non_null(strstr(c.err, "did you mean 'http://localhost:4318'"));
  el_otlp_config_free(&c);
}

/* A bad --otelcol-host is named as given, not as the URI built from it
 * (http://no such host:4317, which the user never typed). */
static void test_bad_otelcol_host_named_as_given(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  const char *args[] = {"--otelcol-host", "no such host", NULL};
  assert_int_equal(resolve(&c, &e, args), EL_ECONFIG);
  assert_non_null(strstr(c.err,
                         "Option --otelcol-host specifies malformed "
                         "host 'no such host'"));
  assert_null(strstr(c.err, "http://"));
  el_otlp_config_free(&c);
  const char *args2[] = {"--otelcol-host", "http://h:4317", NULL};
  assert_int_equal(resolve(&c, &e, args2), EL_ECONFIG);
  assert_non_null(strstr(c.err, "'http://h:4317', a URI"));
  assert_non_null(strstr(c.err, "--otlp-endpoint"));
  el_otlp_config_free(&c);
}

static void test_overlong_endpoint_refused(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  static char url[1200];
  memset(url, 'a', sizeof url - 1);
  memcpy(url, "http://", 7);
  fenv_set(&e, "OTEL_EXPORTER_OTLP_ENDPOINT", url);
  assert_int_equal(resolve(&c, &e, NULL), EL_ECONFIG);
  assert_non_null(strstr(c.err, "OTEL_EXPORTER_OTLP_ENDPOINT"));
  assert_non_null(strstr(c.err, "longer than"));
  el_otlp_config_free(&c);
}

/* A huge malformed value does not push the reason out of the message. */
static void test_long_value_keeps_reason(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  static char big[20000];
  memset(big, 'v', sizeof big - 1);
  memcpy(big, "k=", 2);
  fenv_set(&e, "OTEL_RESOURCE_ATTRIBUTES", big);
  assert_int_equal(resolve(&c, &e, NULL), EL_ECONFIG);
  assert_non_null(strstr(c.err, "OTEL_RESOURCE_ATTRIBUTES"));
  assert_non_null(strstr(c.err, "'k=vvv"));
  assert_non_null(strstr(c.err, "(19999 bytes)"));
  assert_non_null(strstr(c.err, "longer than 8192 bytes"));
  el_otlp_config_free(&c);
  e.n = 0;
  big[100] = ' ';                     /* a syntax error in a long value */
  big[200] = '\0';
  fenv_set(&e, "OTEL_EXPORTER_OTLP_HEADERS", big);
  assert_int_equal(resolve(&c, &e, NULL), EL_ECONFIG);
  assert_non_null(strstr(c.err, "malformed headers"));
  assert_non_null(strstr(c.err, "(200 bytes)': "));
  assert_non_null(strstr(c.err, "unexpected character at offset 101"));
  el_otlp_config_free(&c);
}

static void test_bad_flag_port(void **state) {
  el_otlp_config_t c;
  fenv_t e = {0};
  const char *args[] = {"--otelcol-host", "h", "--otelcol-port", "70000",
                        NULL};
  assert_int_equal(resolve(&c, &e, args), EL_ECONFIG);
  assert_non_null(strstr(c.err, "--otelcol-port"));
  assert_non_null(strstr(c.err, "'70000'"));
  el_otlp_config_free(&c);
}

static void test_opts_parse_shapes(void **state) {
  el_otlp_config_t c;
  el_otlp_config_init(&c);
  char *a1[] = {"--otelcol-port"};
  int i = 0;
  assert_int_equal(el_otlp_opts_parse(&c, 1, a1, &i), EL_EUSAGE);
  char *a2[] = {"--otelcol-ssl=yes"};
  i = 0;
  assert_int_equal(el_otlp_opts_parse(&c, 1, a2, &i), EL_EUSAGE);
  char *a3[] = {"--otelcol-hostname", "x"};
  i = 0;
  assert_int_equal(el_otlp_opts_parse(&c, 2, a3, &i), 0);
  assert_int_equal(i, 0);
  char *a4[] = {"--eventlog-file", "x"};
  assert_int_equal(el_otlp_opts_parse(&c, 2, a4, &i), 0);
  char *a5[] = {"--otelcol-certificate-store=/ca.pem", "--otelcol-ssl"};
  assert_int_equal(el_otlp_opts_parse(&c, 2, a5, &i), 1);
  assert_int_equal(i, 1);
  assert_string_equal(c.flag.certificate, "/ca.pem");
  assert_int_equal(el_otlp_opts_parse(&c, 2, a5, &i), 1);
  assert_true(c.flag.ssl);
  assert_non_null(strstr(el_otlp_opts_help(), "--otelcol-host"));
}

static void test_baggage_syntax(void **state) {
  el_otlp_header_t *h;
  size_t n;
  char err[128];
  assert_int_equal(el_otlp_baggage_parse("a=1,b=2,a=3", &h, &n, err,
                                         sizeof err), 0);
  assert_int_equal(n, 2);                       /* last duplicate wins */
  assert_string_equal(h[0].name, "a");
  assert_string_equal(h[0].value, "3");
  el_otlp_headers_free(h, n);
  assert_int_equal(el_otlp_baggage_parse("k=", &h, &n, err, sizeof err), 0);
  assert_string_equal(h[0].value, "");
  el_otlp_headers_free(h, n);
  const char *bad[] = {"", "  ", "=v", "k", "k=v v", "k=%zz", "k=%4",
                       "k=%C3", "k=\"q\"", "a=1,,b=2", "a=1,", "ke y=v",
                       "k=v%00x" /* a NUL would silently cut the value */};
  for (size_t i = 0; i < EL_ARRAY_LEN(bad); i++) {
    assert_int_equal(el_otlp_baggage_parse(bad[i], &h, &n, err, sizeof err),
                     EL_EINVAL);
    assert_null(h);
  }
  char many[181 * 4 + 1];
  size_t o = 0;
  for (int i = 0; i < 181; i++) o += (size_t)sprintf(many + o, "k=%d,", i % 10);
  many[o - 1] = '\0';
  assert_int_equal(el_otlp_baggage_parse(many, &h, &n, err, sizeof err),
                   EL_EINVAL);
}

/* Every allocation failure ends in EL_ENOMEM without leaking. */
static void test_resolve_out_of_memory_sweep(void **state) {
  fenv_t e = {0};
  fenv_set(&e, "OTEL_RESOURCE_ATTRIBUTES", "a=1,b=2");
  fenv_set(&e, "OTEL_SERVICE_NAME", "svc");
  fenv_set(&e, "OTEL_EXPORTER_OTLP_HEADERS", "h=1,i=2");
  size_t base = el_mem_in_use();
  bool ok = false;
  for (uint64_t k = 1; k < 500 && !ok; k++) {
    el_otlp_config_t c;
    el_otlp_config_init(&c);
    el_mem_fail_after(k);
    int rc = el_otlp_config_resolve(&c, fenv_get, &e);
    el_mem_fail_after(0);
    assert_true(rc == 0 || rc == EL_ENOMEM);
    ok = rc == 0;
    el_otlp_config_free(&c);
    assert_int_equal(el_mem_in_use(), base);
  }
  assert_true(ok);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults_are_http_protobuf_on_4318),
      cmocka_unit_test(test_generic_endpoint_gets_signal_path),
      cmocka_unit_test(test_per_signal_http_endpoint_used_as_is),
      cmocka_unit_test(test_grpc_endpoint_forms),
      cmocka_unit_test(test_grpc_default_and_insecure_false_means_tls),
      cmocka_unit_test(test_per_signal_protocol_overrides_generic),
      cmocka_unit_test(test_reference_flags_win_over_environment),
      cmocka_unit_test(test_otelcol_port_default_4317),
      cmocka_unit_test(test_service_name_and_resource_attributes),
      cmocka_unit_test(test_service_name_from_resource_attributes),
      cmocka_unit_test(test_exporter_kinds),
      cmocka_unit_test(test_headers_and_compression),
      cmocka_unit_test(test_empty_variable_counts_as_unset),
      cmocka_unit_test(test_delivery_settings_flag_over_env),
      cmocka_unit_test(test_errors_name_variable_and_value),
      cmocka_unit_test(test_errors_suggest_the_value_meant),
      cmocka_unit_test(test_schemeless_endpoint_suggests_http),
      cmocka_unit_test(test_bad_otelcol_host_named_as_given),
      cmocka_unit_test(test_overlong_endpoint_refused),
      cmocka_unit_test(test_long_value_keeps_reason),
      cmocka_unit_test(test_bad_flag_port),
      cmocka_unit_test(test_opts_parse_shapes),
      cmocka_unit_test(test_baggage_syntax),
      cmocka_unit_test(test_resolve_out_of_memory_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
