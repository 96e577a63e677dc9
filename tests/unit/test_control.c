/* test_control.c: the control module: message encoding (expected bytes
 * written out by hand from spec/eventlog-format.md §5.7), option parsing,
 * the CORS policy, the HTTP server driven by curl with a recording sender
 * on a real libuv loop thread, and the Lua control() function.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <spawn.h>
#include <stdatomic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <poll.h>
#include <errno.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <uv.h>

#include "control/control.h"
#include "control/ctl_internal.h"
#include "control/httpd.h"
#include "host/host.h"
#include "source/source.h"

/* "eventlog-socket" in hex: 65 76 65 6E 74 6C 6F 67 2D 73 6F 63 6B 65 74 */
#define ES_HEX                                                             \
  0x65, 0x76, 0x65, 0x6E, 0x74, 0x6C, 0x6F, 0x67, 0x2D, 0x73, 0x6F, 0x63,  \
      0x6B, 0x65, 0x74
#define MAGIC 0xF0, 0x9E, 0x97, 0x8C

/* {====== encoding ======} */

static void test_encode_request_heap_census(void **st) {
  /* The spec's own example, 22 bytes. */
  static const uint8_t want[] = {MAGIC, 0x00, 0x0F, ES_HEX, 0x05};
  uint8_t buf[EL_CTL_MSG_MAX];
  int n = el_ctl_encode("eventlog-socket", 15, 5, buf);
  assert_int_equal(n, 22);
  assert_memory_equal(buf, want, sizeof want);
}

static void test_encode_custom_namespace(void **st) {
  /* ghc-stack-profiler = 18 bytes = 0x12. */
  static const uint8_t want[] = {MAGIC, 0x00, 0x12, 'g', 'h', 'c', '-', 's',
                                 't',   'a',  'c',  'k', '-', 'p', 'r', 'o',
                                 'f',   'i',  'l',  'e', 'r', 0x02};
  uint8_t buf[EL_CTL_MSG_MAX];
  int n = el_ctl_encode("ghc-stack-profiler", 18, 2, buf);
  assert_int_equal(n, (int)sizeof want);
  assert_memory_equal(buf, want, sizeof want);
}

static void test_encode_limits(void **st) {
  char ns[300];
  memset(ns, 'n', sizeof ns);
  uint8_t buf[EL_CTL_MSG_MAX];
  memset(buf, 0xAA, sizeof buf);
  assert_int_equal(el_ctl_encode(ns, 255, 255, buf), 262);
  assert_int_equal(buf[5], 0xFF);
  assert_int_equal(buf[6 + 254], 'n');
  assert_int_equal(buf[261], 0xFF);
  assert_int_equal(el_ctl_encode(ns, 256, 1, buf), EL_EINVAL);
  assert_int_equal(el_ctl_encode(ns, 0, 1, buf), EL_EINVAL);
  assert_int_equal(el_ctl_encode(ns, 1, 0, buf), EL_EINVAL);
  assert_int_equal(el_ctl_encode(ns, 1, 256, buf), EL_EINVAL);
  assert_int_equal(el_ctl_encode(ns, 1, -1, buf), EL_EINVAL);
  assert_int_equal(el_ctl_encode(NULL, 1, 1, buf), EL_EINVAL);
  assert_int_equal(el_ctl_encode(ns, 1, 1, buf), 8);
}

static void test_builtin_names(void **st) {
  static const char *names[] = {"start-profiling", "stop-profiling",
                                "start-heap-profiling",
                                "stop-heap-profiling",
                                "request-heap-census"};
  for (int k = 0; k < 5; k++) {
    assert_string_equal(el_ctl_builtin_name(k + 1), names[k]);
    assert_int_equal(el_ctl_builtin_id(names[k], strlen(names[k])), k + 1);
  }
  assert_null(el_ctl_builtin_name(0));
  assert_null(el_ctl_builtin_name(6));
  assert_int_equal(el_ctl_builtin_id("start", 5), 0);
  assert_int_equal(el_ctl_builtin_id("request-heap-census-x", 21), 0);
}

/* {====== a recording sender ======} */

typedef struct {
  pthread_mutex_t mu;
  uint8_t buf[8192];
  size_t len;
  int connected; /* 0: answer EL_ECLOSED */
  int calls;
  pthread_t thread; /* thread of the last call */
  double t[64];     /* CLOCK_MONOTONIC seconds of the first 64 sends */
  int sleep_ms;     /* block the calling (loop) thread this long, once */
} rec_t;

static int rec_send(void *ud, const uint8_t *b, size_t n) {
  rec_t *r = ud;
  if (r->sleep_ms > 0) {
    int ms = r->sleep_ms;
    r->sleep_ms = 0;
    usleep((useconds_t)ms * 1000);
  }
  pthread_mutex_lock(&r->mu);
  if (r->calls < 64) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r->t[r->calls] = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  }
  r->calls++;
  r->thread = pthread_self();
  int rc = EL_ECLOSED;
  if (r->connected && r->len + n <= sizeof r->buf) {
    memcpy(r->buf + r->len, b, n);
    r->len += n;
    rc = 0;
  }
  pthread_mutex_unlock(&r->mu);
  return rc;
}

static void rec_reset(rec_t *r, int connected) {
  pthread_mutex_lock(&r->mu);
  r->len = 0;
  r->calls = 0;
  r->connected = connected;
  pthread_mutex_unlock(&r->mu);
}

static void test_send_paths(void **st) {
  rec_t r = {.mu = PTHREAD_MUTEX_INITIALIZER, .connected = 1};
  el_ctl_sender_t s = {rec_send, &r};
  static const uint8_t want[] = {MAGIC, 0x00, 0x0F, ES_HEX, 0x03};
  assert_int_equal(el_ctl_send(&s, "eventlog-socket", 15, 3), 0);
  assert_int_equal(r.len, sizeof want);
  assert_memory_equal(r.buf, want, sizeof want);
  assert_int_equal(el_ctl_send(&s, "x", 1, 0), EL_EINVAL);
  assert_int_equal(r.calls, 1);
  r.connected = 0;
  assert_int_equal(el_ctl_send(&s, "x", 1, 1), EL_ECLOSED);
  assert_int_equal(el_ctl_send(NULL, "x", 1, 1), EL_ECLOSED);
  el_ctl_sender_t none = {NULL, NULL};
  assert_int_equal(el_ctl_send(&none, "x", 1, 1), EL_ECLOSED);
  /* The host's hook shape goes the same way. */
  r.connected = 1;
  r.len = 0;
  assert_int_equal(el_ctl_host_control(&s, "eventlog-socket", 15, 3), 0);
  assert_memory_equal(r.buf, want, sizeof want);
  assert_int_equal(el_ctl_host_control(&s, "x", 1, 256), EL_EINVAL);
  assert_int_equal(el_ctl_host_control(NULL, "x", 1, 1), EL_ECLOSED);
  assert_int_equal(el_ctl_src_send(NULL, want, sizeof want), EL_ECLOSED);
}

/* {====== options ======} */

static int parse_all(el_ctl_opts_t *o, int argc, char **argv, int *rest) {
  int i = 0, n = 0;
  while (i < argc) {
    int rc = el_ctl_opts_parse(o, argc, argv, &i);
    if (rc < 0) return rc;
    if (rc == 0) {
      n++;
      i++;
    }
  }
  *rest = n;
  return 0;
}

static void test_opts_defaults_and_values(void **st) {
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  assert_int_equal(o.enabled, 0);
  assert_int_equal(o.port, 30719);
  assert_string_equal(o.host, ""); /* 127.0.0.1 */
  assert_null(o.allow_origins);
  assert_int_equal(o.cors_wildcard, 0); /* closed */
  assert_int_equal(o.max_age_s, -1);
  char *argv[] = {"--control-port", "1234", "--other",
                  "--control-cors-allow-origin=http://a:3000, http://b",
                  "--control-cors-allow-origin", "http://c",
                  "--control-cors-max-age=600",
                  "--control-cors-require-origin",
                  "--control-cors-ignore-failure", "--control-host=::1"};
  int rest;
  assert_int_equal(parse_all(&o, 10, argv, &rest), 0);
  assert_int_equal(rest, 1);
  assert_int_equal(o.enabled, 1); /* implied */
  assert_int_equal(o.port, 1234);
  assert_string_equal(o.host, "::1");
  assert_int_equal(o.n_allow_origins, 3);
  assert_string_equal(o.allow_origins[0], "http://a:3000");
  assert_string_equal(o.allow_origins[1], "http://b");
  assert_string_equal(o.allow_origins[2], "http://c");
  assert_int_equal(o.max_age_s, 600);
  assert_int_equal(o.require_origin, 1);
  assert_int_equal(o.ignore_failure, 1);
  assert_int_equal(o.cors_wildcard, 0);
  /* The daemon's own page is added once; the wildcard makes lists moot. */
  assert_int_equal(el_ctl_opts_allow_origin(&o, "http://c"), 0);
  assert_int_equal(el_ctl_opts_allow_origin(&o, "http://d:8080"), 0);
  assert_int_equal(o.n_allow_origins, 4);
  el_ctl_opts_close(&o);
  assert_null(o.allow_origins);
  assert_string_equal(o.host, "");
  char *wild[] = {"--control-cors-allow-origin", "http://a, *"};
  int i = 0;
  assert_int_equal(el_ctl_opts_parse(&o, 2, wild, &i), 1);
  assert_int_equal(o.cors_wildcard, 1);
  assert_null(o.allow_origins);
  assert_int_equal(el_ctl_opts_allow_origin(&o, "http://d:8080"), 0);
  assert_null(o.allow_origins);
  el_ctl_opts_close(&o);
  assert_int_equal(o.cors_wildcard, 0);
}

static void test_opts_each_implies_control(void **st) {
  const char *one[][2] = {{"--control-cors-require-origin", NULL},
                          {"--control-cors-ignore-failure", NULL},
                          {"--control-cors-max-age", "1"},
                          {"--control-cors-allow-origin", "*"},
                          {"--control-port", "0"},
                          {"--control-host", "0.0.0.0"},
                          {"--control", NULL}};
  for (size_t k = 0; k < 7; k++) {
    el_ctl_opts_t o;
    el_ctl_opts_init(&o);
    char *argv[2] = {(char *)one[k][0], (char *)one[k][1]};
    int i = 0;
    assert_int_equal(el_ctl_opts_parse(&o, one[k][1] ? 2 : 1, argv, &i), 1);
    assert_int_equal(i, one[k][1] ? 2 : 1);
    assert_int_equal(o.enabled, 1);
    assert_null(o.allow_origins); /* "*" is the wildcard flag */
    assert_int_equal(o.cors_wildcard, k == 3);
    el_ctl_opts_close(&o);
  }
}

static void test_opts_errors(void **st) {
  const char *bad[][2] = {{"--control-port", "65536"},
                          {"--control-port", "x"},
                          {"--control-port", NULL},
                          {"--control-cors-max-age", "-1"},
                          {"--control-cors-allow-origin", " , "},
                          {"--control-host", ""},
                          {"--control-host", "a b"},
                          {"--control-host", NULL}};
  for (size_t k = 0; k < 8; k++) {
    el_ctl_opts_t o;
    el_ctl_opts_init(&o);
    char *argv[2] = {(char *)bad[k][0], (char *)bad[k][1]};
    int i = 0;
    assert_int_equal(el_ctl_opts_parse(&o, bad[k][1] ? 2 : 1, argv, &i),
                     EL_EUSAGE);
    assert_int_equal(i, 0);
    el_ctl_opts_close(&o);
  }
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  char *argv[] = {"--controls", "--control=1", "--control-portx", "-c"};
  for (int k = 0; k < 4; k++) {
    int i = k;
    assert_int_equal(el_ctl_opts_parse(&o, 4, argv, &i), 0);
    assert_int_equal(i, k);
  }
  assert_int_equal(o.enabled, 0);
}

/* {====== CORS policy ======} */

/* By default no origin is allowed (docs/security.md): a browser page
 * elsewhere cannot make the daemon send commands. Requests without an
 * Origin (curl, scripts) pass. */
static void test_cors_closed_by_default(void **st) {
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  el__ctl_cors_t c;
  el__ctl_cors_decide(&o, "POST", NULL, NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_PASS);
  assert_null(c.allow_origin);
  el__ctl_cors_decide(&o, "POST", "http://grafana:3000", NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  assert_null(c.allow_origin);
  assert_non_null(strstr(c.error, "--control-cors-allow-origin"));
  el__ctl_cors_decide(&o, "OPTIONS", "http://grafana:3000", "POST",
                      "content-type", &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  el__ctl_cors_decide(&o, "GET", "http://localhost:8080", NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  /* The reference's workaround flag still lets failures through. */
  o.ignore_failure = 1;
  el__ctl_cors_decide(&o, "POST", "http://grafana:3000", NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_PASS);
  assert_null(c.allow_origin);
}

static void test_cors_wildcard(void **st) {
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  char *argv[] = {"--control-cors-allow-origin", "*"};
  int i = 0;
  assert_int_equal(el_ctl_opts_parse(&o, 2, argv, &i), 1);
  el__ctl_cors_t c;
  el__ctl_cors_decide(&o, "POST", NULL, NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_PASS);
  assert_null(c.allow_origin);
  el__ctl_cors_decide(&o, "POST", "http://grafana:3000", NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_PASS);
  assert_string_equal(c.allow_origin, "*");
  assert_int_equal(c.vary_origin, 0);
  el__ctl_cors_decide(&o, "OPTIONS", "http://grafana:3000", "POST",
                      "content-type", &c);
  assert_int_equal(c.action, EL__CORS_PREFLIGHT);
  assert_string_equal(c.allow_origin, "*");
  assert_int_equal(c.allow_methods, 1);
  assert_int_equal(c.allow_headers, 1);
  assert_int_equal(c.max_age_s, -1);
  el__ctl_cors_decide(&o, "OPTIONS", "http://g", "PUT", NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  el__ctl_cors_decide(&o, "OPTIONS", "http://g", NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  el__ctl_cors_decide(&o, "OPTIONS", "http://g", "POST",
                      "Content-Type, X-Grafana-Org-Id", &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  o.ignore_failure = 1;
  el__ctl_cors_decide(&o, "OPTIONS", "http://g", "POST",
                      "Content-Type, X-Grafana-Org-Id", &c);
  assert_int_equal(c.action, EL__CORS_PASS);
  assert_null(c.allow_origin);
}

static void test_cors_allow_list(void **st) {
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  char *argv[] = {"--control-cors-allow-origin", "http://a, http://b",
                  "--control-cors-max-age", "60"};
  int i = 0;
  assert_int_equal(el_ctl_opts_parse(&o, 4, argv, &i), 1);
  assert_int_equal(el_ctl_opts_parse(&o, 4, argv, &i), 1);
  el__ctl_cors_t c;
  el__ctl_cors_decide(&o, "OPTIONS", "http://b", "POST", NULL, &c);
  assert_int_equal(c.action, EL__CORS_PREFLIGHT);
  assert_string_equal(c.allow_origin, "http://b");
  assert_int_equal(c.vary_origin, 1);
  assert_int_equal(c.allow_headers, 0);
  assert_int_equal(c.max_age_s, 60);
  el__ctl_cors_decide(&o, "OPTIONS", "http://evil", "POST", NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  el__ctl_cors_decide(&o, "POST", "http://evil", NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  el__ctl_cors_decide(&o, "POST", NULL, NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_PASS);
  o.require_origin = 1;
  el__ctl_cors_decide(&o, "POST", NULL, NULL, NULL, &c);
  assert_int_equal(c.action, EL__CORS_FAIL);
  el_ctl_opts_close(&o);
}

/* {====== the server, on a loop thread, driven by curl ======} */

typedef struct {
  uv_loop_t loop;
  uv_async_t stop;       /* keeps the loop alive; closes everything */
  pthread_t thread;      /* runs the loop */
  el_ctl_server_t *srv;
  rec_t rec;
  char base[64];         /* http://127.0.0.1:PORT */
  size_t mem_base;       /* el_mem_in_use before the server */
} fix_t;

static void on_stop(uv_async_t *a) {
  fix_t *f = a->data;
  el_ctl_server_free(f->srv);
  f->srv = NULL;
  uv_close((uv_handle_t *)a, NULL);
}

static void *loop_main(void *arg) {
  fix_t *f = arg;
  uv_run(&f->loop, UV_RUN_DEFAULT);
  return NULL;
}

static int have_curl(void) {
  return system("curl --version >/dev/null 2>&1") == 0;
}

/* Start a server with the given extra options on an ephemeral port. */
static fix_t *fix_start(int argc, char **argv) {
  fix_t *f = calloc(1, sizeof *f);
  f->mem_base = el_mem_in_use();
  pthread_mutex_init(&f->rec.mu, NULL);
  f->rec.connected = 1;
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  o.port = 0;
  for (int i = 0; i < argc;) assert_int_equal(el_ctl_opts_parse(&o, argc,
                                                                argv, &i), 1);
  assert_int_equal(uv_loop_init(&f->loop), 0);
  assert_int_equal(uv_async_init(&f->loop, &f->stop, on_stop), 0);
  f->stop.data = f;
  el_ctl_sender_t s = {rec_send, &f->rec};
  assert_int_equal(el_ctl_server_start(&f->loop, &o, "svc", s, &f->srv), 0);
  el_ctl_opts_close(&o);
  snprintf(f->base, sizeof f->base, "http://127.0.0.1:%d",
           el_ctl_server_port(f->srv));
  assert_true(el_ctl_server_port(f->srv) > 0);
  pthread_create(&f->thread, NULL, loop_main, f);
  return f;
}

static void fix_stop(fix_t *f) {
  uv_async_send(&f->stop);
  pthread_join(f->thread, NULL);
  assert_int_equal(uv_loop_close(&f->loop), 0);
  size_t base = f->mem_base;
  free(f);
  /* Every request's state, job and the server itself were freed. */
  assert_int_equal(el_mem_in_use(), base);
}

/* Run curl with args (a shell fragment; URL paths start with "^" meaning
 * the server's base). Returns the final HTTP status; out gets headers and
 * body (-i), lower-cased header names left as sent. */
static int curl(fix_t *f, const char *args, char *out, size_t cap) {
  static char cmd[65536];
  snprintf(cmd, sizeof cmd, "curl -s -i -m 10 %s", args);
  /* Replace each "^/" with the base URL. */
  static char full[70000];
  size_t n = 0;
  for (const char *p = cmd; *p && n + 80 < sizeof full; p++) {
    if (p[0] == '^' && p[1] == '/') {
      n += (size_t)snprintf(full + n, sizeof full - n, "%s", f->base);
    } else {
      full[n++] = *p;
    }
  }
  full[n] = '\0';
  FILE *p = popen(full, "r");
  assert_non_null(p);
  size_t got = fread(out, 1, cap - 1, p);
  out[got] = '\0';
  pclose(p);
  /* The last final status line wins (1xx are skipped); 0 if none. */
  int status = 0;
  for (char *q = out; (q = strstr(q, "HTTP/1.")) != NULL; q++)
    if ((q == out || q[-1] == '\n') && atoi(q + 9) >= 200)
      status = atoi(q + 9);
  return status;
}

#define FORM "-X POST -d service-name=svc"

static void expect_sent(fix_t *f, const uint8_t *want, size_t len) {
  pthread_mutex_lock(&f->rec.mu);
  assert_int_equal(f->rec.len, len);
  assert_memory_equal(f->rec.buf, want, len);
  /* The send ran on the loop thread, not an HTTP thread. */
  assert_true(pthread_equal(f->rec.thread, f->thread));
  pthread_mutex_unlock(&f->rec.mu);
}

static void test_server_builtin_routes(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  static const char *routes[] = {"start-profiling", "stop-profiling",
                                 "start-heap-profiling",
                                 "stop-heap-profiling",
                                 "request-heap-census"};
  char out[8192], args[512];
  for (int k = 0; k < 5; k++) {
    rec_reset(&f->rec, 1);
    snprintf(args, sizeof args, FORM " ^/control/eventlog-socket/%s",
             routes[k]);
    assert_int_equal(curl(f, args, out, sizeof out), 200);
    uint8_t want[] = {MAGIC, 0x00, 0x0F, ES_HEX, (uint8_t)(k + 1)};
    expect_sent(f, want, sizeof want);
    assert_non_null(strstr(out, "\"command-id\":"));
    assert_non_null(strstr(out, routes[k]));
    assert_non_null(strstr(out, "application/json"));
  }
  fix_stop(f);
}

static void test_server_custom_routes(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[8192];
  static const uint8_t want1[] = {
      MAGIC, 0x00, 0x12, 'g', 'h', 'c', '-', 's', 't', 'a', 'c', 'k',
      '-',   'p',  'r',  'o', 'f', 'i', 'l', 'e', 'r', 0x01};
  assert_int_equal(curl(f, FORM " ^/control/ghc-stack-profiler/1", out,
                        sizeof out),
                   200);
  expect_sent(f, want1, sizeof want1);
  rec_reset(&f->rec, 1);
  static const uint8_t want2[] = {MAGIC, 0x00, 0x01, 'x', 0xFF};
  assert_int_equal(curl(f, FORM " ^/control/x/255", out, sizeof out), 200);
  expect_sent(f, want2, sizeof want2);
  /* A 255-byte namespace is the longest accepted. */
  char args[1024], ns[300];
  memset(ns, 'a', 255);
  ns[255] = '\0';
  rec_reset(&f->rec, 1);
  snprintf(args, sizeof args, FORM " ^/control/%s/7", ns);
  assert_int_equal(curl(f, args, out, sizeof out), 200);
  assert_int_equal(f->rec.len, 262);
  assert_int_equal(f->rec.buf[5], 0xFF);
  assert_int_equal(f->rec.buf[261], 7);
  /* Percent-encoded namespace bytes are sent decoded, even if not UTF-8. */
  rec_reset(&f->rec, 1);
  static const uint8_t want3[] = {MAGIC, 0x00, 0x03, 0xC3, 0xA9, 0xFF, 0x03};
  assert_int_equal(curl(f, FORM " ^/control/%C3%A9%FF/3", out, sizeof out),
                   200);
  expect_sent(f, want3, sizeof want3);
  fix_stop(f);
}

static void test_server_bodies(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[8192];
  const char *url = " ^/control/eventlog-socket/request-heap-census";
  char args[1024];
  struct {
    const char *body;
    int status;
  } cases[] = {
      /* Grafana's button: urlencoded form, other fields around it. */
      {"-X POST -H 'Content-Type: application/x-www-form-urlencoded; "
       "charset=UTF-8' -d 'a=1&service-name=svc&b=2'", 200},
      {"-X POST -F service-name=svc", 200},        /* multipart */
      {"-X POST -H 'Content-Type: application/json' "
       "-d '{\"service-name\": \"svc\"}'", 200},    /* JSON */
      {"-X POST -d service-name=%73vc", 200},       /* percent-encoded */
      {"-X POST -d service-name=other", 404},       /* not ours */
      {"-X POST -d service-name=", 404},
      {"-X POST -d service-name=svcx", 404},
      {"-X POST -d 'service-name=other&service-name=svc'", 404}, /* first */
      {"-X POST -d 'service-name=svc&service-name=other'", 200},
      {"-X POST -d service-name=svc%00", 404},
      {"-X POST -d service-name=sv -d x=c", 404},
      {"-X POST -d other=svc", 400},                /* field missing */
      {"-X POST", 400},                             /* no body */
      {"-X POST -H 'Content-Type: application/json' -d '{\"service-name'",
       400},                                        /* bad JSON */
      {"-X POST -H 'Content-Type: application/json' -d '[1]'", 400},
      {"-X POST -H 'Content-Type: multipart/form-data' -d 'garbage'", 400},
      {"-X POST -H 'Content-Type: text/plain' -d service-name=svc", 415},
  };
  for (size_t k = 0; k < EL_ARRAY_LEN(cases); k++) {
    rec_reset(&f->rec, 1);
    snprintf(args, sizeof args, "%s%s", cases[k].body, url);
    int code = curl(f, args, out, sizeof out);
    if (code != cases[k].status)
      fail_msg("case %zu (%s): got %d, want %d\n%s", k, cases[k].body, code,
               cases[k].status, out);
    assert_int_equal(f->rec.len, cases[k].status == 200 ? 22 : 0);
  }
  fix_stop(f);
}

static void test_server_bad_routes(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[8192], args[1024], ns[300];
  struct {
    const char *args;
    int status;
  } cases[] = {
      {FORM " ^/control/eventlog-socket/start", 404},
      {FORM " ^/control/eventlog-socket/5", 404},
      {FORM " ^/control/eventlog-socket", 404},
      {FORM " ^/control/a/b/1", 404},
      {FORM " ^/nothing", 404},
      {FORM " ^/", 404},
      {FORM " ^/control/x/0", 400},
      {FORM " ^/control/x/256", 400},
      {FORM " ^/control/x/99999999999999999999", 400},
      {FORM " ^/control/x/-1", 400},
      {FORM " ^/control/x/abc", 400},
      {FORM " ^/control/x/", 400},
      {FORM " ^/control//1", 400},
      {"^/control/eventlog-socket/request-heap-census", 405}, /* GET */
      {"-X PUT -d service-name=svc ^/control/x/1", 405},
      {"^/health", 200},
      {"-X POST ^/health", 405},
  };
  for (size_t k = 0; k < EL_ARRAY_LEN(cases); k++) {
    int code = curl(f, cases[k].args, out, sizeof out);
    if (code != cases[k].status)
      fail_msg("case %s: got %d, want %d\n%s", cases[k].args, code,
               cases[k].status, out);
  }
  memset(ns, 'a', 256);
  ns[256] = '\0';
  snprintf(args, sizeof args, FORM " ^/control/%s/1", ns);
  assert_int_equal(curl(f, args, out, sizeof out), 400);
  /* A 40 KB URL: refused by libmicrohttpd itself, no crash. */
  char *big = malloc(41000);
  strcpy(big, FORM " ^/control/");
  size_t bl = strlen(big);
  memset(big + bl, 'b', 40000);
  strcpy(big + bl + 40000, "/1");
  int code = curl(f, big, out, sizeof out);
  free(big);
  assert_true(code >= 400 && code < 500);
  /* A NUL in the path. */
  assert_int_equal(curl(f, FORM " ^/control/%00x/1", out, sizeof out), 404);
  assert_int_equal(f->rec.len, 0);
  assert_int_equal(f->rec.calls, 0);
  fix_stop(f);
}

static void test_server_no_connection(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[8192];
  rec_reset(&f->rec, 0);
  assert_int_equal(
      curl(f, FORM " ^/control/eventlog-socket/request-heap-census", out,
           sizeof out),
      503);
  assert_non_null(strstr(out, "error-message"));
  assert_int_equal(f->rec.calls, 1);
  assert_int_equal(curl(f, FORM " ^/control/ghc-stack-profiler/2", out,
                        sizeof out),
                   503);
  rec_reset(&f->rec, 1);
  assert_int_equal(curl(f, FORM " ^/control/ghc-stack-profiler/2", out,
                        sizeof out),
                   200);
  uint64_t c[3];
  el_ctl_server_counts(f->srv, c);
  assert_int_equal(c[0], 1);
  assert_int_equal(c[2], 2);
  fix_stop(f);
}

static void test_server_oversized_body(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char path[] = "/tmp/el_ctl_bodyXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *fp = fdopen(fd, "w");
  fputs("service-name=svc&pad=", fp);
  for (int k = 0; k < 100000; k++) fputc('x', fp);
  fclose(fp);
  char out[8192], args[512];
  snprintf(args, sizeof args,
           "-X POST --data-binary @%s ^/control/x/1", path);
  assert_int_equal(curl(f, args, out, sizeof out), 413);
  /* Chunked, so no Content-Length to refuse up front. */
  snprintf(args, sizeof args,
           "-X POST -H 'Transfer-Encoding: chunked' --data-binary @%s "
           "^/control/x/1", path);
  int code = curl(f, args, out, sizeof out);
  assert_int_equal(code, 413);
  /* A chunked flood past 1 MiB: the connection is closed. */
  fp = fopen(path, "w");
  for (int k = 0; k < 3 << 20; k++) fputc('x', fp);
  fclose(fp);
  assert_int_equal(curl(f, args, out, sizeof out), 0);
  unlink(path);
  assert_int_equal(f->rec.calls, 0);
  /* The server still answers. */
  assert_int_equal(curl(f, FORM " ^/control/x/1", out, sizeof out), 200);
  fix_stop(f);
}

/* Clients that stall mid-request hold only their own connection: other
 * requests are answered, and stopping the server does not wait for them. */
static void test_server_stalled_clients(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  int fds[4];
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons(el_ctl_server_port(f->srv)),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  static const char *partial[] = {
      ("POST /control/x/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n"
       "Content-Type: application/x-www-form-urlencoded\r\n\r\nservice-na"),
      "POST /control/x/1 HTTP/1.1\r\nHost: x\r\n", "GET /heal", ""};
  for (int k = 0; k < 4; k++) {
    fds[k] = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(fds[k], (struct sockaddr *)&a, sizeof a), 0);
    size_t n = strlen(partial[k]);
    if (n) assert_int_equal(write(fds[k], partial[k], n), (ssize_t)n);
  }
  /* Garbage instead of HTTP, on two more connections. */
  int junk[2];
  uint8_t noise[4096];
  srand(7);
  for (size_t k = 0; k < sizeof noise; k++) noise[k] = (uint8_t)rand();
  for (int k = 0; k < 2; k++) {
    junk[k] = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(junk[k], (struct sockaddr *)&a, sizeof a), 0);
    if (k == 1) memcpy(noise, "POST /control/x/1 HTTP/1.1\r\n", 28);
    ssize_t w = send(junk[k], noise, sizeof noise, MSG_NOSIGNAL);
    (void)w; /* the server may close first */
  }
  char out[4096];
  assert_int_equal(curl(f, FORM " ^/control/x/2", out, sizeof out), 200);
  assert_int_equal(curl(f, "^/health", out, sizeof out), 200);
  assert_int_equal(f->rec.len, 8); /* only the curl request sent */
  fix_stop(f);
  for (int k = 0; k < 4; k++) close(fds[k]);
  for (int k = 0; k < 2; k++) close(junk[k]);
}

/* Concurrent requests are all answered, and the messages reach the
 * program one at a time, at least ~5 ms apart (spec §5.7: the program's
 * parser must not see a backlog). */
static void test_server_concurrent_paced(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[16384], args[4096];
  size_t n = (size_t)snprintf(args, sizeof args,
                              "--parallel --parallel-max 16 " FORM);
  for (int k = 0; k < 16; k++)
    n += (size_t)snprintf(args + n, sizeof args - n, " ^/control/x/%d",
                          k + 1);
  curl(f, args, out, sizeof out);
  int ok = 0;
  for (char *q = out; (q = strstr(q, "HTTP/1.1 200")) != NULL; q++) ok++;
  assert_int_equal(ok, 16);
  pthread_mutex_lock(&f->rec.mu);
  assert_int_equal(f->rec.calls, 16);
  assert_int_equal(f->rec.len, 16 * 8);
  for (int k = 1; k < 16; k++)
    if (f->rec.t[k] - f->rec.t[k - 1] < 0.004)
      fail_msg("messages %d and %d only %.3f ms apart", k - 1, k,
               1000 * (f->rec.t[k] - f->rec.t[k - 1]));
  pthread_mutex_unlock(&f->rec.mu);
  fix_stop(f);
}

/* By default the server listens on 127.0.0.1 only; --control-host ::1
 * (or ::, every interface) puts it on IPv6. */
static void test_server_ipv6(void **st) {
  if (!have_curl()) skip();
  int probe = socket(AF_INET6, SOCK_STREAM, 0);
  struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
                            .sin6_addr = IN6ADDR_LOOPBACK_INIT};
  int v6 = probe >= 0 && bind(probe, (struct sockaddr *)&a6, sizeof a6) == 0;
  if (probe >= 0) close(probe);
  if (!v6) skip();
  fix_t *f = fix_start(0, NULL);
  char out[4096];
  snprintf(f->base, sizeof f->base, "http://[::1]:%d",
           el_ctl_server_port(f->srv));
  assert_int_equal(curl(f, "-g " FORM " ^/control/x/1", out, sizeof out), 0);
  fix_stop(f);
  char *argv[] = {"--control-host", "::1"};
  f = fix_start(2, argv);
  snprintf(f->base, sizeof f->base, "http://[::1]:%d",
           el_ctl_server_port(f->srv));
  assert_int_equal(curl(f, "-g " FORM " ^/control/x/1", out, sizeof out),
                   200);
  assert_int_equal(f->rec.len, 8);
  fix_stop(f);
}

/* A loop thread stuck for 3 s (a slow Lua handler, say): the request
 * gives up after 2 s with 503 instead of hanging; the daemon carries on. */
static void test_server_loop_busy(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[4096];
  f->rec.sleep_ms = 3000;
  assert_int_equal(curl(f, FORM " ^/control/x/1", out, sizeof out), 503);
  assert_non_null(strstr(out, "busy"));
  /* Once the loop is free again, requests go through. */
  usleep(1500 * 1000);
  rec_reset(&f->rec, 1);
  assert_int_equal(curl(f, FORM " ^/control/x/2", out, sizeof out), 200);
  assert_int_equal(f->rec.len, 8);
  fix_stop(f);
}

/* Closed by default: a page elsewhere cannot use the server; a request
 * without Origin can. */
static void test_server_cors_closed(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  char out[8192];
  assert_int_equal(curl(f,
                        "-H 'Origin: http://localhost:3000' " FORM
                        " ^/control/x/1",
                        out, sizeof out),
                   400);
  assert_null(strstr(out, "Access-Control-Allow-Origin"));
  assert_non_null(strstr(out, "--control-cors-allow-origin"));
  assert_int_equal(
      curl(f,
           "-X OPTIONS -H 'Origin: http://localhost:3000' "
           "-H 'Access-Control-Request-Method: POST' "
           "^/control/eventlog-socket/request-heap-census",
           out, sizeof out),
      400);
  assert_null(strstr(out, "Access-Control-Allow-Origin"));
  assert_int_equal(f->rec.calls, 0); /* nothing sent */
  assert_int_equal(curl(f, FORM " ^/control/x/1", out, sizeof out), 200);
  assert_int_equal(f->rec.calls, 1);
  fix_stop(f);
}

static void test_server_cors_wildcard(void **st) {
  if (!have_curl()) skip();
  char *argv[] = {"--control-cors-allow-origin", "*"};
  fix_t *f = fix_start(2, argv);
  char out[8192];
  assert_int_equal(
      curl(f,
           "-X OPTIONS -H 'Origin: http://localhost:3000' "
           "-H 'Access-Control-Request-Method: POST' "
           "-H 'Access-Control-Request-Headers: content-type' "
           "^/control/eventlog-socket/request-heap-census",
           out, sizeof out),
      200);
  assert_non_null(strstr(out, "Access-Control-Allow-Origin: *"));
  assert_non_null(strstr(out, "Access-Control-Allow-Methods: GET, POST"));
  assert_non_null(strstr(out, "Access-Control-Allow-Headers: Content-Type"));
  assert_int_equal(f->rec.calls, 0);
  /* The actual request carries the header too. */
  assert_int_equal(curl(f,
                        "-H 'Origin: http://localhost:3000' " FORM
                        " ^/control/x/1",
                        out, sizeof out),
                   200);
  assert_non_null(strstr(out, "Access-Control-Allow-Origin: *"));
  /* A malformed preflight (no request method) is refused... */
  assert_int_equal(curl(f,
                        "-X OPTIONS -H 'Origin: http://localhost:3000' "
                        "^/control/x/1",
                        out, sizeof out),
                   400);
  /* ... and so is OPTIONS without Origin (the reference's handler). */
  assert_int_equal(curl(f, "-X OPTIONS ^/control/x/1", out, sizeof out),
                   400);
  fix_stop(f);
}

static void test_server_cors_allow_list(void **st) {
  if (!have_curl()) skip();
  char *argv[] = {"--control-cors-allow-origin",
                  "http://grafana:3000,http://localhost:3000",
                  "--control-cors-max-age", "600"};
  fix_t *f = fix_start(4, argv);
  char out[8192];
  const char *pre = "-X OPTIONS -H 'Access-Control-Request-Method: POST' "
                    "-H 'Access-Control-Request-Headers: Content-Type' ";
  char args[1024];
  snprintf(args, sizeof args,
           "%s -H 'Origin: http://localhost:3000' ^/control/x/1", pre);
  assert_int_equal(curl(f, args, out, sizeof out), 200);
  assert_non_null(
      strstr(out, "Access-Control-Allow-Origin: http://localhost:3000"));
  assert_non_null(strstr(out, "Access-Control-Max-Age: 600"));
  assert_non_null(strstr(out, "Vary: Origin"));
  snprintf(args, sizeof args,
           "%s -H 'Origin: http://evil.example' ^/control/x/1", pre);
  assert_int_equal(curl(f, args, out, sizeof out), 400);
  assert_null(strstr(out, "Access-Control-Allow-Origin"));
  /* An actual request from elsewhere is refused and sends nothing. */
  assert_int_equal(curl(f, "-H 'Origin: http://evil.example' " FORM
                           " ^/control/x/1",
                        out, sizeof out),
                   400);
  assert_int_equal(f->rec.calls, 0);
  /* Without Origin (curl, scripts) the request goes through. */
  assert_int_equal(curl(f, FORM " ^/control/x/1", out, sizeof out), 200);
  assert_null(strstr(out, "Access-Control-Allow-Origin"));
  fix_stop(f);
}

static void test_server_cors_flags(void **st) {
  if (!have_curl()) skip();
  char *argv[] = {"--control-cors-allow-origin", "http://a",
                  "--control-cors-require-origin",
                  "--control-cors-ignore-failure"};
  fix_t *f = fix_start(4, argv);
  char out[8192];
  /* require-origin + ignore-failure: passes, without CORS headers. */
  assert_int_equal(curl(f, FORM " ^/control/x/1", out, sizeof out), 200);
  /* A malformed preflight gets the permissive 204 answer. */
  assert_int_equal(curl(f, "-X OPTIONS -H 'Origin: http://b' "
                           "^/control/x/1", out, sizeof out),
                   204);
  assert_non_null(strstr(out, "Access-Control-Allow-Origin: *"));
  assert_non_null(strstr(out, "Access-Control-Allow-Headers: *"));
  fix_stop(f);
  char *argv2[] = {"--control-cors-require-origin",
                   "--control-cors-allow-origin=http://a"};
  f = fix_start(2, argv2);
  assert_int_equal(curl(f, FORM " ^/control/x/1", out, sizeof out), 400);
  assert_int_equal(curl(f, "-H 'Origin: http://a' " FORM " ^/control/x/1",
                        out, sizeof out),
                   200);
  fix_stop(f);
}

static void test_server_port_in_use(void **st) {
  if (!have_curl()) skip();
  fix_t *f = fix_start(0, NULL);
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  o.port = el_ctl_server_port(f->srv);
  el_ctl_server_t *s2 = NULL;
  el_ctl_sender_t none = {NULL, NULL};
  assert_true(el_ctl_server_start(NULL, &o, "svc", none, &s2) < 0);
  assert_null(s2);
  fix_stop(f);
}

static void test_server_without_loop(void **st) {
  if (!have_curl()) skip();
  rec_t r = {.mu = PTHREAD_MUTEX_INITIALIZER, .connected = 1};
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  o.port = 0;
  el_ctl_server_t *s = NULL;
  el_ctl_sender_t snd = {rec_send, &r};
  assert_int_equal(el_ctl_server_start(NULL, &o, "svc", snd, &s), 0);
  fix_t f = {.srv = s};
  snprintf(f.base, sizeof f.base, "http://127.0.0.1:%d",
           el_ctl_server_port(s));
  char out[4096];
  assert_int_equal(curl(&f, FORM " ^/control/eventlog-socket/stop-profiling",
                        out, sizeof out),
                   200);
  static const uint8_t want[] = {MAGIC, 0x00, 0x0F, ES_HEX, 0x02};
  assert_int_equal(r.len, sizeof want);
  assert_memory_equal(r.buf, want, sizeof want);
  el_ctl_server_free(s);
  el_ctl_server_free(NULL);
}

/* {====== through a real source to a test peer ======} */

typedef struct {
  fix_t f;             /* loop, server (sender = the source) */
  el_src_t *src;       /* Unix socket source */
  atomic_int sessions; /* on_connect calls */
  atomic_int ended;    /* on_disconnect calls */
} peerfix_t;

static void pf_connect(void *ud, el_src_t *src) {
  atomic_fetch_add(&((peerfix_t *)ud)->sessions, 1);
}
static void pf_disconnect(void *ud, el_src_t *src, int err) {
  atomic_fetch_add(&((peerfix_t *)ud)->ended, 1);
}

static void pf_on_stop(uv_async_t *a) {
  peerfix_t *p = a->data;
  el_ctl_server_free(p->f.srv);
  p->f.srv = NULL;
  el_src_free(p->src);
  uv_close((uv_handle_t *)a, NULL);
}

static int wait_for(atomic_int *v, int at_least, int ms) {
  for (int k = 0; k < ms / 10 && atomic_load(v) < at_least; k++)
    usleep(10000);
  return atomic_load(v) >= at_least;
}

/* el_peer serves an eventlog on a Unix socket and records what we send:
 * each route's bytes must arrive in order, exactly; once the peer has
 * gone, the same request gives 503. */
static void test_server_source_peer(void **st) {
  const char *bd = getenv("EL_BUILD_DIR"), *logs = getenv("EL_EVENTLOGS");
  if (!have_curl() || bd == NULL || logs == NULL) skip();
  char peer[512], file[512], dir[] = "/tmp/el_ctl_peerXXXXXX";
  snprintf(peer, sizeof peer, "%s/tests/el_peer", bd);
  snprintf(file, sizeof file, "%s/ghc-9.0/heapy-hT.eventlog", logs);
  if (access(peer, X_OK) != 0) skip();
  assert_non_null(mkdtemp(dir));
  char sock[600], rec[600], ready[600];
  snprintf(sock, sizeof sock, "%s/el.sock", dir);
  snprintf(rec, sizeof rec, "%s/rec", dir);
  snprintf(ready, sizeof ready, "%s/ready", dir);
  char *pargv[] = {peer, "--unix", sock, "--file", file, "--record", rec,
                   "--ready-file", ready, "--hold-ms", "3000",
                   "--timeout", "30", NULL};
  pid_t pid;
  extern char **environ;
  assert_int_equal(posix_spawn(&pid, peer, NULL, NULL, pargv, environ), 0);
  struct stat sb;
  for (int k = 0; k < 500 && stat(ready, &sb) != 0; k++) usleep(10000);

  peerfix_t *p = calloc(1, sizeof *p);
  fix_t *f = &p->f;
  assert_int_equal(uv_loop_init(&f->loop), 0);
  assert_int_equal(uv_async_init(&f->loop, &f->stop, pf_on_stop), 0);
  f->stop.data = p;
  el_src_opts_t so;
  el_src_opts_init(&so);
  char *sargv[] = {"--eventlog-socket", sock};
  int i = 0;
  assert_int_equal(el_src_opts_parse(&so, 2, sargv, &i), 1);
  assert_int_equal(el_src_opts_validate(&so), 0);
  el_src_cb_t cb = {.ud = p, .on_connect = pf_connect,
                    .on_disconnect = pf_disconnect};
  assert_int_equal(el_src_new(&f->loop, &so, &cb, &p->src), 0);
  assert_int_equal(el_src_start(p->src), 0);
  el_ctl_opts_t o;
  el_ctl_opts_init(&o);
  o.port = 0;
  el_ctl_sender_t snd = {el_ctl_src_send, p->src};
  assert_int_equal(el_ctl_server_start(&f->loop, &o, "svc", snd, &f->srv),
                   0);
  snprintf(f->base, sizeof f->base, "http://127.0.0.1:%d",
           el_ctl_server_port(f->srv));
  pthread_create(&f->thread, NULL, loop_main, f);
  assert_true(wait_for(&p->sessions, 1, 5000));

  char out[8192];
  static const char *urls[] = {
      FORM " ^/control/eventlog-socket/start-profiling",
      FORM " ^/control/eventlog-socket/stop-profiling",
      FORM " ^/control/eventlog-socket/start-heap-profiling",
      FORM " ^/control/eventlog-socket/stop-heap-profiling",
      FORM " ^/control/eventlog-socket/request-heap-census",
      FORM " ^/control/ghc-stack-profiler/1",
      FORM " ^/control/ghc-stack-profiler/2"};
  for (size_t k = 0; k < EL_ARRAY_LEN(urls); k++)
    assert_int_equal(curl(f, urls[k], out, sizeof out), 200);
  /* Bad requests send nothing. */
  assert_int_equal(curl(f, FORM " ^/control/x/0", out, sizeof out), 400);
  assert_int_equal(curl(f, "-X POST -d service-name=no ^/control/x/1", out,
                        sizeof out), 404);

  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_true(wait_for(&p->ended, 1, 5000));
  assert_int_equal(curl(f, FORM " ^/control/eventlog-socket/"
                           "request-heap-census", out, sizeof out), 503);

  static const uint8_t gsp[] = {'g', 'h', 'c', '-', 's', 't', 'a', 'c', 'k',
                                '-', 'p', 'r', 'o', 'f', 'i', 'l', 'e', 'r'};
  uint8_t want[7 * 22 + 8], got[sizeof want + 64];
  size_t n = 0;
  for (int k = 1; k <= 7; k++) {
    static const uint8_t head[] = {MAGIC, 0x00};
    memcpy(want + n, head, sizeof head);
    n += sizeof head;
    if (k <= 5) {
      static const uint8_t es[] = {0x0F, ES_HEX};
      memcpy(want + n, es, sizeof es);
      n += sizeof es;
      want[n++] = (uint8_t)k;
    } else {
      want[n++] = 0x12;
      memcpy(want + n, gsp, sizeof gsp);
      n += sizeof gsp;
      want[n++] = (uint8_t)(k - 5);
    }
  }
  FILE *rf = fopen(rec, "rb");
  assert_non_null(rf);
  size_t got_n = fread(got, 1, sizeof got, rf);
  fclose(rf);
  assert_int_equal(got_n, n);
  assert_memory_equal(got, want, n);

  uv_async_send(&f->stop);
  pthread_join(f->thread, NULL);
  assert_int_equal(uv_loop_close(&f->loop), 0);
  free(p);
  unlink(rec);
  unlink(ready);
  unlink(sock);
  rmdir(dir);
}

/* {====== httpd.h: deadlines, limits, reserve ======} */

/* A server's routes for these tests: GET answers "ok" at once; POST reads
 * its whole body first. */
static enum MHD_Result hd_handler(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *data,
                                  size_t *size, void **con_cls) {
  static int marker;
  if (*con_cls == NULL) {
    *con_cls = &marker;
    if (strcmp(method, "POST") == 0) return MHD_YES;
  }
  if (*size) {
    *size = 0;
    return MHD_YES;
  }
  struct MHD_Response *r =
      MHD_create_response_from_buffer(3, "ok\n", MHD_RESPMEM_PERSISTENT);
  enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return rc;
}

/* Limits for tests: nothing displaced and no deadline within a test's
 * run (even on a loaded machine) unless the test says so. */
static el_ctl_httpd_limits_t hd_limits(void) {
  el_ctl_httpd_limits_t l;
  el_ctl_httpd_limits_default(&l);
  l.evict_after_ms = 600000;
  l.header_ms = 60000;
  l.request_ms = 120000;
  l.reserve_ms = 60000;
  return l;
}

static el_ctl_httpd_t *hd_start(const el_ctl_httpd_limits_t *l, bool health,
                                fix_t *f) {
  el_ctl_httpd_conf_t hc = {.name = "test server", .option = "--test-host",
                            .port = 0, .handler = hd_handler,
                            .health = health, .limits = *l};
  el_ctl_httpd_t *h = NULL;
  assert_int_equal(el_ctl_httpd_start(&hc, &h), 0);
  assert_string_equal(el_ctl_httpd_address(h), "127.0.0.1");
  memset(f, 0, sizeof *f);
  snprintf(f->base, sizeof f->base, "http://127.0.0.1:%d",
           el_ctl_httpd_port(h));
  return h;
}

static double ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A TCP connection to 127.0.0.1:port from the local address src (any
 * 127.x.y.z: Linux routes all of 127/8 to lo), with text sent. */
static int raw_connect(const char *src, int port, const char *text) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  assert_int_equal(inet_pton(AF_INET, src, &a.sin_addr), 1);
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  a.sin_port = htons((uint16_t)port);
  assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &a.sin_addr), 1);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  size_t n = strlen(text);
  if (n) assert_int_equal(send(fd, text, n, MSG_NOSIGNAL), (ssize_t)n);
  return fd;
}

/* Has the server closed fd (end of file or reset) within ms? Reads and
 * drops whatever else arrives. */
static int closed_within(int fd, int ms) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int left = ms - (int)ms_since(&t0);
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, left) <= 0) continue;
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return 1;
  }
}

/* A client trickling its request headers, a byte every 200 ms (so that
 * libmicrohttpd's idle timeout never fires), is cut off at the header
 * deadline. Timing bound generous; the figure is printed. */
static void test_httpd_header_deadline(void **st) {
  el_ctl_httpd_limits_t l = hd_limits();
  l.header_ms = 1000;
  l.request_ms = 3000;
  fix_t f;
  el_ctl_httpd_t *h = hd_start(&l, false, &f);
  int fd = raw_connect("127.0.0.1", el_ctl_httpd_port(h),
                       "GET / HTTP/1.1\r\nX-Slow: ");
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int cut = 0;
  while (!cut && ms_since(&t0) < 10000) {
    cut = closed_within(fd, 200);
    if (!cut) send(fd, "a", 1, MSG_NOSIGNAL);
  }
  double t = ms_since(&t0);
  printf("# trickling client cut off after %.0f ms (header deadline "
         "1000 ms)\n", t);
  assert_true(cut);
  assert_true(t >= 900 && t < 8000);
  close(fd);
  el_ctl_httpd_stats_t s;
  el_ctl_httpd_stats(h, &s);
  assert_int_equal(s.cut_header, 1);
  assert_int_equal(s.cut_request, 0);
  el_ctl_httpd_stop(h);
}

/* Headers on time, then a body trickled a byte every 200 ms: cut off at
 * the whole-request deadline. */
static void test_httpd_request_deadline(void **st) {
  el_ctl_httpd_limits_t l = hd_limits();
  l.header_ms = 1000;
  l.request_ms = 2000;
  fix_t f;
  el_ctl_httpd_t *h = hd_start(&l, false, &f);
  int fd = raw_connect("127.0.0.1", el_ctl_httpd_port(h),
                       "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: "
                       "1000\r\n\r\n");
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int cut = 0;
  while (!cut && ms_since(&t0) < 10000) {
    cut = closed_within(fd, 200);
    if (!cut) send(fd, "a", 1, MSG_NOSIGNAL);
  }
  double t = ms_since(&t0);
  printf("# slow body cut off after %.0f ms (request deadline 2000 ms)\n",
         t);
  assert_true(cut);
  assert_true(t >= 1900 && t < 9000);
  close(fd);
  el_ctl_httpd_stats_t s;
  el_ctl_httpd_stats(h, &s);
  assert_int_equal(s.cut_header, 0);
  assert_int_equal(s.cut_request, 1);
  el_ctl_httpd_stop(h);
}

/* An el_log hook keeping the last message in ud (char[1024]). */
static void keep_line(void *ud, el_log_level_t level, const char *msg) {
  (void)level;
  snprintf(ud, 1024, "%s", msg);
}

/* Past the per-address limit a client gets the reserve: 503 with
 * Retry-After, or 200 for GET /health; past the reserve, its connections
 * are closed at once. Other addresses (and 127.0.0.1, exempt) are served
 * normally all along. */
static void test_httpd_per_address_and_reserve(void **st) {
  if (!have_curl()) skip();
  el_ctl_httpd_limits_t l = hd_limits();
  l.conns = 8;
  l.conns_per_ip = 2;
  l.reserve = 4;
  l.reserve_per_ip = 2;
  fix_t f;
  el_ctl_httpd_t *h = hd_start(&l, false, &f);
  int port = el_ctl_httpd_port(h);
  const char *part = "GET / HTTP/1.1\r\n";
  int held[2] = {raw_connect("127.0.0.2", port, part),
                 raw_connect("127.0.0.2", port, part)};
  char out[4096];
  assert_int_equal(curl(&f, "--interface 127.0.0.2 ^/x", out, sizeof out),
                   503);
  assert_non_null(strstr(out, "Retry-After: 5"));
  assert_non_null(strstr(out, "too many connections"));
  assert_int_equal(curl(&f, "--interface 127.0.0.2 ^/health", out,
                        sizeof out),
                   200);
  assert_non_null(strstr(out, "\r\n\r\n[]"));
  assert_int_equal(curl(&f, "--interface 127.0.0.3 ^/x", out, sizeof out),
                   200);
  assert_int_equal(curl(&f, "^/x", out, sizeof out), 200);
  /* Fill the address's reserve; the next one is refused. */
  usleep(300 * 1000); /* the curl connections have gone */
  int res[2] = {raw_connect("127.0.0.2", port, part),
                raw_connect("127.0.0.2", port, part)};
  int extra = raw_connect("127.0.0.2", port, part);
  assert_true(closed_within(extra, 5000));
  close(extra);
  for (int k = 0; k < 2; k++) {
    assert_false(closed_within(held[k], 100)); /* still served */
    close(held[k]);
    close(res[k]);
  }
  el_ctl_httpd_stats_t s;
  el_ctl_httpd_stats(h, &s);
  printf("# accepted %llu, reserve %llu, busy %llu, health %llu, refused "
         "%llu\n", (unsigned long long)s.accepted,
         (unsigned long long)s.reserve, (unsigned long long)s.busy,
         (unsigned long long)s.health, (unsigned long long)s.refused);
  assert_int_equal(s.busy, 1);
  assert_int_equal(s.health, 1);
  assert_true(s.reserve >= 4);
  assert_true(s.refused >= 1);
  assert_int_equal(s.accepted, 4);
  /* The summary at stop counts the connections "at most N open at once"
   * counts: 4 for normal service and the reserve's (the held 2 and the 2
   * reserve ones were open together: N >= 4), the refused apart. Before,
   * "K connections served" left the reserve out while "at most N at
   * once" counted it. */
  char line[1024] = "";
  el_log_set_hook(keep_line, line);
  el_ctl_httpd_stop(h);
  el_log_set_hook(NULL, NULL);
  printf("# %s\n", line);
  unsigned long long admitted = 0, normal = 0, reserve = 0, refused = 0;
  unsigned peak = 0;
#define SUMMARY                                                            \
  "test server: %llu connections admitted, at most %u open at once: %llu " \
  "for normal service, %llu in the reserve (1 requests answered 503, 1 "   \
  "/health); %llu refused (no room, even in the reserve), 0 displaced, 0 " \
  "cut off (0 headers late, 0 requests late)"
  assert_int_equal(
      sscanf(line, SUMMARY, &admitted, &peak, &normal, &reserve, &refused), 5);
  char want[1024];
  snprintf(want, sizeof want, SUMMARY, admitted, peak, normal, reserve,
           refused);
#undef SUMMARY
  assert_string_equal(line, want); /* the words between the numbers too */
  assert_int_equal(normal, 4);
  assert_int_equal(reserve, s.reserve);
  assert_int_equal(admitted, normal + reserve);
  assert_true(peak >= 4 && peak <= admitted);
  assert_int_equal(refused, s.refused);
}

/* When every place is taken, a new client displaces the connection that
 * has waited longest for its headers (past evict_after_ms), and only it. */
static void test_httpd_displaces_oldest_waiting(void **st) {
  if (!have_curl()) skip();
  el_ctl_httpd_limits_t l = hd_limits();
  l.conns = 3;
  l.reserve = 1;
  l.evict_after_ms = 300;
  fix_t f;
  el_ctl_httpd_t *h = hd_start(&l, false, &f);
  int port = el_ctl_httpd_port(h);
  int fds[3];
  for (int k = 0; k < 3; k++) {
    fds[k] = raw_connect("127.0.0.1", port, "GET / HTTP/1.1\r\n");
    usleep(20 * 1000);
  }
  usleep(500 * 1000);
  char out[4096];
  assert_int_equal(curl(&f, "^/x", out, sizeof out), 200);
  assert_true(closed_within(fds[0], 5000));
  assert_false(closed_within(fds[1], 100));
  assert_false(closed_within(fds[2], 100));
  for (int k = 0; k < 3; k++) close(fds[k]);
  el_ctl_httpd_stats_t s;
  el_ctl_httpd_stats(h, &s);
  assert_int_equal(s.evicted, 1);
  assert_int_equal(s.reserve, 0);
  el_ctl_httpd_stop(h);
}

/* health: GET /health is answered by the layer; other paths go to the
 * server's handler. */
static void test_httpd_health_route(void **st) {
  if (!have_curl()) skip();
  el_ctl_httpd_limits_t l = hd_limits();
  fix_t f;
  el_ctl_httpd_t *h = hd_start(&l, true, &f);
  char out[4096];
  assert_int_equal(curl(&f, "^/health", out, sizeof out), 200);
  assert_non_null(strstr(out, "application/json"));
  assert_int_equal(curl(&f, "-X POST -d x=1 ^/health", out, sizeof out),
                   405);
  assert_non_null(strstr(out, "Allow: GET, HEAD"));
  assert_int_equal(curl(&f, "^/other", out, sizeof out), 200);
  assert_non_null(strstr(out, "ok"));
  el_ctl_httpd_stop(h);
}

/* Hosts: a name that does not resolve and an address this machine does
 * not have are errors that name the option; nothing is left running. */
static void test_httpd_bad_hosts(void **st) {
  size_t base = el_mem_in_use();
  el_ctl_httpd_conf_t hc = {.name = "test server", .option = "--test-host",
                            .port = 0, .handler = hd_handler};
  el_ctl_httpd_limits_default(&hc.limits);
  el_ctl_httpd_t *h = NULL;
  hc.host = "no-such-host.invalid";
  assert_int_equal(el_ctl_httpd_start(&hc, &h), EL_EINVAL);
  hc.host = "192.0.2.1"; /* TEST-NET-1: not an address of this host */
  assert_int_equal(el_ctl_httpd_start(&hc, &h), -EADDRNOTAVAIL);
  hc.limits.conns = 0;
  hc.host = NULL;
  assert_int_equal(el_ctl_httpd_start(&hc, &h), EL_EINVAL);
  assert_null(h);
  assert_int_equal(el_mem_in_use(), base);
  assert_int_equal(el_ctl_host_check("0.0.0.0"), 0);
  assert_int_equal(el_ctl_host_check("::"), 0);
  assert_int_equal(el_ctl_host_check(""), EL_EINVAL);
  assert_int_equal(el_ctl_host_check("a\tb"), EL_EINVAL);
  assert_int_equal(el_ctl_host_check(NULL), EL_EINVAL);
}

/* {====== out of memory ======} */

static void test_oom_sweep(void **st) {
  size_t base = el_mem_in_use();
  int ok = 0, failures = 0;
  for (uint64_t n = 1; n < 50 && !ok; n++) {
    el_ctl_opts_t o;
    el_ctl_opts_init(&o);
    o.port = 0;
    char *argv[] = {"--control-cors-allow-origin", "http://a, http://b"};
    int i = 0;
    el_mem_fail_after(n);
    int rc = el_ctl_opts_parse(&o, 2, argv, &i);
    el_ctl_server_t *s = NULL;
    el_ctl_sender_t none = {NULL, NULL};
    if (rc == 1) rc = el_ctl_server_start(NULL, &o, "svc", none, &s);
    el_mem_fail_after(0);
    if (rc == 0) {
      ok = 1;
      el_ctl_server_free(s);
    } else {
      assert_true(rc == EL_ENOMEM || rc == EL_EUSAGE);
      assert_null(s);
      failures++;
    }
    el_ctl_opts_close(&o);
    assert_int_equal(el_mem_in_use(), base);
  }
  assert_true(ok);
  assert_true(failures >= 5); /* 3 in the options, 2+ in the server */
}

/* {====== Lua ======} */

/* el.control, the one Lua binding: the host's hook el_ctl_host_control
 * sends through the same el_ctl_send as the HTTP routes. */
static void test_lua_control(void **st) {
  rec_t r = {.mu = PTHREAD_MUTEX_INITIALIZER, .connected = 1};
  el_ctl_sender_t s = {rec_send, &r};
  el_host_opts_t o;
  memset(&o, 0, sizeof o);
  o.lua_dir = EL_SOURCE_DIR "/lua";
  el_host_t *h = el_host_new(&o);
  assert_non_null(h);
  el_host_set_control(h, el_ctl_host_control, &s);
  const char *ok =
      "local control = require('eventlog_live').control\n"
      "assert(control('eventlog-socket', 5) == true)\n"
      "assert(control('request-heap-census') == true)\n"
      "assert(control('ghc-stack-profiler', 1) == true)\n"
      "for _, bad in ipairs{{'x', 0}, {'x', 256}, {'', 1}, "
      "{string.rep('a', 256), 1}, {'nope'}} do\n"
      "  local ok, msg = control(bad[1], bad[2])\n"
      "  assert(ok == nil and type(msg) == 'string')\n"
      "end\n"
      "assert(not pcall(control, 'x', 1.5))\n";
  if (el_host_load_string(h, ok, "=test") != 0)
    fail_msg("%s", el_host_error(h));
  static const uint8_t want[] = {
      MAGIC, 0x00, 0x0F, ES_HEX, 0x05, MAGIC, 0x00, 0x0F, ES_HEX, 0x05,
      MAGIC, 0x00, 0x12, 'g',    'h',  'c',   '-',  's',  't',    'a',
      'c',   'k',  '-',  'p',    'r',  'o',   'f',  'i',  'l',    'e',
      'r',   0x01};
  assert_int_equal(r.len, sizeof want);
  assert_memory_equal(r.buf, want, sizeof want);
  r.connected = 0;
  if (el_host_load_string(h,
                          "local ok, msg = require('eventlog_live')"
                          ".control('x', 1)\n"
                          "assert(ok == nil and msg == 'not connected', msg)",
                          "=test2") != 0)
    fail_msg("%s", el_host_error(h));
  el_host_free(h);
  (void)st;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_encode_request_heap_census),
      cmocka_unit_test(test_encode_custom_namespace),
      cmocka_unit_test(test_encode_limits),
      cmocka_unit_test(test_builtin_names),
      cmocka_unit_test(test_send_paths),
      cmocka_unit_test(test_opts_defaults_and_values),
      cmocka_unit_test(test_opts_each_implies_control),
      cmocka_unit_test(test_opts_errors),
      cmocka_unit_test(test_cors_closed_by_default),
      cmocka_unit_test(test_cors_wildcard),
      cmocka_unit_test(test_cors_allow_list),
      cmocka_unit_test(test_server_builtin_routes),
      cmocka_unit_test(test_server_custom_routes),
      cmocka_unit_test(test_server_bodies),
      cmocka_unit_test(test_server_bad_routes),
      cmocka_unit_test(test_server_no_connection),
      cmocka_unit_test(test_server_oversized_body),
      cmocka_unit_test(test_server_stalled_clients),
      cmocka_unit_test(test_server_concurrent_paced),
      cmocka_unit_test(test_server_ipv6),
      cmocka_unit_test(test_server_loop_busy),
      cmocka_unit_test(test_server_cors_closed),
      cmocka_unit_test(test_server_cors_wildcard),
      cmocka_unit_test(test_server_cors_allow_list),
      cmocka_unit_test(test_server_cors_flags),
      cmocka_unit_test(test_server_port_in_use),
      cmocka_unit_test(test_server_without_loop),
      cmocka_unit_test(test_server_source_peer),
      cmocka_unit_test(test_httpd_header_deadline),
      cmocka_unit_test(test_httpd_request_deadline),
      cmocka_unit_test(test_httpd_per_address_and_reserve),
      cmocka_unit_test(test_httpd_displaces_oldest_waiting),
      cmocka_unit_test(test_httpd_health_route),
      cmocka_unit_test(test_httpd_bad_hosts),
      cmocka_unit_test(test_lua_control),
      cmocka_unit_test(test_oom_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
