/* el_src_cat.c: copy what a source (src/source) receives into files, one
 * per session, so end-to-end tests can compare the bytes with `cmp`
 * independently of the decoder.
 *
 * usage: el_src_cat [source options] (--out-prefix P | --discard)
 *          [--stop-after-ms MS] [--stop-after-bytes N]
 *          [--send-on-connect TEXT]
 * Session k's bytes go to P.k (k = 1, 2, ...): the one stream of a file,
 * FIFO or stdin (even empty), or each socket connection that delivered at
 * least one byte (a connection closed before sending anything, e.g.
 * accepted from the backlog of a program that was exiting, is not a
 * session). At the end one line
 * goes to
 * stdout: "status=<name> sessions=K bytes=N connections=C attempts=A
 * failures=F reconnects=R tee_bytes=T sent=S". Exit 0 when the source ended
 * with status 0, was stopped by the options above, or is a socket that
 * delivered bytes before reconnection gave up; else 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/source.h"

typedef struct {
  const char *prefix;
  FILE *out;
  unsigned sessions;
  int socket;          /* a Unix or TCP source */
  int fresh;           /* connected, no byte yet: the session opens on data */
  uint64_t bytes;
  uint64_t stop_after_bytes;
  const char *send;
  int discard;         /* --discard: count bytes, write nothing (bench) */
  uv_timer_t timer;
  int status;
} cat_t;

/* The first byte of a connection: a new session and its file. */
static void open_session(cat_t *c) {
  char path[4096];
  c->fresh = 0;
  ++c->sessions;
  if (c->discard)
    return;
  snprintf(path, sizeof path, "%s.%u", c->prefix, c->sessions);
  c->out = fopen(path, "wb");
  if (!c->out) {
    perror(path);
    exit(2);
  }
  if (!getenv("EL_SRC_CAT_QUIET"))
    fprintf(stderr, "el_src_cat: session %u\n", c->sessions);
}

static void on_connect(void *ud, el_src_t *src) {
  cat_t *c = ud;
  if (c->out)
    fclose(c->out);
  c->out = NULL;
  c->fresh = 1;
  if (!c->socket) open_session(c);
  if (c->send) {
    int rc = el_src_write(src, (const uint8_t *)c->send, strlen(c->send));
    if (rc < 0)
      fprintf(stderr, "el_src_cat: write: %s\n", el_strerror(rc));
  }
}

static void on_data(void *ud, el_src_t *src, const uint8_t *buf,
                    size_t len) {
  cat_t *c = ud;
  if (c->fresh && len)
    open_session(c);
  if (c->out)
    fwrite(buf, 1, len, c->out);
  c->bytes += len;
  if (c->stop_after_bytes && c->bytes >= c->stop_after_bytes)
    el_src_stop(src);
}

static void on_disconnect(void *ud, el_src_t *src, int err) {
  cat_t *c = ud;
  (void)src;
  if (!getenv("EL_SRC_CAT_QUIET"))
    fprintf(stderr, "el_src_cat: disconnect (%s)\n", el_err_name(err));
  if (c->out) {
    fclose(c->out);
    c->out = NULL;
  }
}

static void on_end(void *ud, el_src_t *src, int status) {
  cat_t *c = ud;
  const el_src_stats_t *st = el_src_stats(src);
  c->status = status;
  printf("status=%s sessions=%u bytes=%llu connections=%llu attempts=%llu "
         "failures=%llu reconnects=%llu tee_bytes=%llu sent=%llu\n",
         el_err_name(status), c->sessions, (unsigned long long)st->bytes,
         (unsigned long long)st->connections,
         (unsigned long long)st->attempts, (unsigned long long)st->failures,
         (unsigned long long)st->reconnects,
         (unsigned long long)st->tee_bytes,
         (unsigned long long)st->sent_bytes);
  if (uv_is_active((uv_handle_t *)&c->timer))
    uv_timer_stop(&c->timer);
  uv_close((uv_handle_t *)&c->timer, NULL);
}

static void on_timer(uv_timer_t *t) { el_src_stop(t->data); }

int main(int argc, char **argv) {
  el_src_opts_t o;
  el_src_opts_init(&o);
  cat_t c;
  memset(&c, 0, sizeof c);
  c.status = 1;
  long stop_ms = 0;
  el_log_threshold = EL_LOG_DEBUG;
  if (getenv("EL_SRC_CAT_QUIET"))
    el_log_threshold = EL_LOG_WARN;
  for (int i = 1; i < argc;) {
    int rc = el_src_opts_parse(&o, argc, argv, &i);
    if (rc < 0) {
      fprintf(stderr, "el_src_cat: %s\n", o.err);
      return 2;
    }
    if (rc > 0)
      continue;
    if (i + 1 >= argc && strcmp(argv[i], "--discard")) {
      fprintf(stderr, "el_src_cat: bad option %s\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "--discard")) {
      c.discard = 1;
      c.prefix = "";
      i++;
      continue;
    }
    if (!strcmp(argv[i], "--out-prefix"))
      c.prefix = argv[i + 1];
    else if (!strcmp(argv[i], "--stop-after-ms"))
      stop_ms = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--stop-after-bytes"))
      c.stop_after_bytes = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--send-on-connect"))
      c.send = argv[i + 1];
    else {
      fprintf(stderr, "el_src_cat: unknown option %s\n", argv[i]);
      return 2;
    }
    i += 2;
  }
  if (!c.prefix || el_src_opts_validate(&o) < 0) {
    fprintf(stderr, "el_src_cat: %s\n", c.prefix ? o.err : "no --out-prefix");
    return 2;
  }
  c.socket = o.kind == EL_SRC_UNIX || o.kind == EL_SRC_TCP;
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_cb_t cb = {.ud = &c,
                    .on_connect = on_connect,
                    .on_data = on_data,
                    .on_disconnect = on_disconnect,
                    .on_end = on_end};
  el_src_t *src;
  int rc = el_src_new(&loop, &o, &cb, &src);
  if (rc < 0) {
    fprintf(stderr, "el_src_cat: %s\n", el_strerror(rc));
    return 1;
  }
  uv_timer_init(&loop, &c.timer);
  c.timer.data = src;
  if (stop_ms > 0)
    uv_timer_start(&c.timer, on_timer, (uint64_t)stop_ms, 0);
  el_src_start(src);
  uv_run(&loop, UV_RUN_DEFAULT);
  el_src_free(src);
  uv_run(&loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&loop) != 0)
    fprintf(stderr, "el_src_cat: loop not empty at exit\n");
  if (c.out)
    fclose(c.out);
  fflush(stdout);
  /* A socket that gave up after delivering sessions ended normally. */
  int sock = o.kind == EL_SRC_UNIX || o.kind == EL_SRC_TCP;
  return c.status == 0 || c.status == EL_ESTOPPED || (sock && c.bytes > 0)
             ? 0
             : 1;
}
