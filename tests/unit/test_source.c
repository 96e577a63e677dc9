/* test_source.c: the byte sources (src/source): option parsing, every
 * variant against in-process peers on the same libuv loop, reconnection
 * and give-up, flow control, the control-channel writer, tee, teardown,
 * and the pump's session protocol. Expected bytes come from reading the
 * shared eventlogs with stdio; every loop run has a watchdog.
 * ctest-labels: asan */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "source/source.h"

#define LOG_FILE "ghc-9.0/heapy-hT.eventlog"

static char tmpdir[256];

static void tmp_path(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", tmpdir, name);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n + 1);
  assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return b;
}

static void shared_log_path(char *path, size_t n) {
  const char *dir = getenv("EL_EVENTLOGS");
  snprintf(path, n, "%s/%s", dir ? dir : EL_SOURCE_DIR "/tests/data/eventlogs",
           LOG_FILE);
}

static uint8_t *shared_log(size_t *len) {
  char path[1024];
  shared_log_path(path, sizeof path);
  return slurp(path, len);
}

/* {====== a recording consumer ======} */

typedef struct {
  int connects, disconnects, ends, end_status;
  int last_disconnect_err;
  uint8_t *got;               /* all bytes, all sessions */
  size_t got_len, got_cap;
  size_t session_len[8];      /* bytes per session */
  uint64_t stop_after;        /* el_src_stop once this many bytes came */
  int pause_on_connect;       /* el_src_pause in on_connect */
  int pause_on_data;          /* el_src_pause after every chunk */
  int free_on_end;            /* el_src_free inside on_end */
  uint64_t pool_reads;        /* el_src_stats' at on_end */
  /* el_src_stats' pipe_size at on_end */
  uint64_t pipe_size;
  const char *write_on_connect;
  size_t write_len;
  int write_rc;
  el_src_t *src;
  char trace[64]; /* 'd' data, 'W' on_wait(1), 'w' on_wait(0) */
  size_t ntrace;
} rec_t;

static void r_trace(rec_t *r, char c) {
  if (r->ntrace + 1 < sizeof r->trace) r->trace[r->ntrace++] = c;
}

static void r_connect(void *ud, el_src_t *src) {
  rec_t *r = ud;
  r->connects++;
  if (r->pause_on_connect)
    el_src_pause(src);
  if (r->write_on_connect)
    r->write_rc = el_src_write(src, (const uint8_t *)r->write_on_connect,
                               r->write_len);
}

static void r_data(void *ud, el_src_t *src, const uint8_t *buf, size_t len) {
  rec_t *r = ud;
  assert_true(r->connects > r->disconnects);  /* only inside a session */
  if (r->got_len + len > r->got_cap) {
    r->got_cap = (r->got_len + len) * 2;
    r->got = realloc(r->got, r->got_cap);
  }
  memcpy(r->got + r->got_len, buf, len);
  r->got_len += len;
  r_trace(r, 'd');
  if (r->connects <= 8)
    r->session_len[r->connects - 1] += len;
  if (r->stop_after && r->got_len >= r->stop_after)
    el_src_stop(src);
  if (r->pause_on_data)
    el_src_pause(src);
}

static void r_disconnect(void *ud, el_src_t *src, int err) {
  rec_t *r = ud;
  (void)src;
  r->disconnects++;
  r->last_disconnect_err = err;
}

static void r_wait(void *ud, el_src_t *src, int waiting) {
  (void)src;
  r_trace(ud, waiting ? 'W' : 'w');
}

static void r_end(void *ud, el_src_t *src, int status) {
  rec_t *r = ud;
  r->ends++;
  r->end_status = status;
  r->pool_reads = el_src_stats(src)->pool_reads;
  r->pipe_size = el_src_stats(src)->pipe_size;
  if (r->free_on_end) {
    el_src_free(src);
    r->src = NULL;
  }
}

static el_src_cb_t rec_cb(rec_t *r) {
  el_src_cb_t cb = {.ud = r,
                    .on_connect = r_connect,
                    .on_data = r_data,
                    .on_disconnect = r_disconnect,
                    .on_end = r_end,
                    .on_wait = r_wait};
  return cb;
}

/* {====== loop helpers ======} */

static int watchdog_fired;
static void watchdog_cb(uv_timer_t *t) {
  watchdog_fired = 1;
  uv_stop(t->loop);
}

/* Run until nothing is left or ms passed (then the test fails). */
static void run_for(uv_loop_t *loop, uint64_t ms) {
  uv_timer_t wd;
  uv_timer_init(loop, &wd);
  uv_timer_start(&wd, watchdog_cb, ms, 0);
  uv_unref((uv_handle_t *)&wd);
  watchdog_fired = 0;
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&wd, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  assert_false(watchdog_fired);
}

static void close_walk(uv_handle_t *h, void *arg) {
  (void)arg;
  if (!uv_is_closing(h))
    uv_close(h, NULL);
}

static void loop_done(uv_loop_t *loop) {
  uv_walk(loop, close_walk, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(loop), 0);
}

/* {====== an in-process peer (the program's side of eventlog-socket) ====*/

typedef struct srv_s srv_t;
typedef struct {
  union {
    uv_handle_t h;
    uv_stream_t s;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
  } u;
  uv_write_t w;
  srv_t *srv;
} conn_t;

struct srv_s {
  uv_loop_t *loop;
  int is_tcp;
  union {
    uv_handle_t h;
    uv_stream_t s;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
  } l;
  const uint8_t *payload;  /* sent on every connection */
  size_t plen;
  size_t first_plen;       /* bytes on the first connection (cut) */
  int max_conns;           /* close the listener after this many */
  int empty_conns;         /* first N connections close with no data */
  int keep_open;           /* don't close after writing */
  int no_read;             /* never read what clients send */
  int nconns;
  conn_t conns[8];
  uint8_t rec[4096];       /* bytes received from the client */
  size_t rec_len;
  char port[16];
};

static void s_alloc(uv_handle_t *h, size_t n, uv_buf_t *b) {
  static char buf[4096];
  (void)h;
  (void)n;
  *b = uv_buf_init(buf, sizeof buf);
}

static void s_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b) {
  conn_t *c = st->data;
  srv_t *s = c->srv;
  if (n > 0 && s->rec_len + (size_t)n <= sizeof s->rec) {
    memcpy(s->rec + s->rec_len, b->base, (size_t)n);
    s->rec_len += (size_t)n;
  } else if (n < 0 && !uv_is_closing(&c->u.h)) {
    uv_close(&c->u.h, NULL);
  }
}

static void s_written(uv_write_t *w, int status) {
  conn_t *c = w->data;
  (void)status;
  if (!c->srv->keep_open && !uv_is_closing(&c->u.h))
    uv_close(&c->u.h, NULL);
}

static void s_connection(uv_stream_t *l, int status) {
  srv_t *s = l->data;
  assert_int_equal(status, 0);
  assert_true(s->nconns < 8);
  conn_t *c = &s->conns[s->nconns++];
  c->srv = s;
  if (s->is_tcp)
    uv_tcp_init(s->loop, &c->u.tcp);
  else
    uv_pipe_init(s->loop, &c->u.pipe, 0);
  c->u.h.data = c;
  assert_int_equal(uv_accept(l, &c->u.s), 0);
  if (s->nconns >= s->max_conns)
    uv_close(&s->l.h, NULL);
  if (s->nconns <= s->empty_conns) {
    uv_close(&c->u.h, NULL);
    return;
  }
  if (!s->no_read)
    uv_read_start(&c->u.s, s_alloc, s_read);
  size_t n = s->nconns == 1 && s->first_plen ? s->first_plen : s->plen;
  uv_buf_t b = uv_buf_init((char *)s->payload, (unsigned)n);
  c->w.data = c;
  uv_write(&c->w, &c->u.s, &b, 1, s_written);
}

static void srv_listen_unix(srv_t *s, uv_loop_t *loop, const char *path) {
  s->loop = loop;
  unlink(path);
  uv_pipe_init(loop, &s->l.pipe, 0);
  s->l.h.data = s;
  assert_int_equal(uv_pipe_bind(&s->l.pipe, path), 0);
  assert_int_equal(uv_listen(&s->l.s, 5, s_connection), 0);
}

static int srv_listen_tcp(srv_t *s, uv_loop_t *loop, const char *ip) {
  s->loop = loop;
  s->is_tcp = 1;
  struct sockaddr_storage ss;
  if (strchr(ip, ':'))
    uv_ip6_addr(ip, 0, (struct sockaddr_in6 *)&ss);
  else
    uv_ip4_addr(ip, 0, (struct sockaddr_in *)&ss);
  uv_tcp_init(loop, &s->l.tcp);
  s->l.h.data = s;
  int rc = uv_tcp_bind(&s->l.tcp, (struct sockaddr *)&ss, 0);
  if (rc == 0)
    rc = uv_listen(&s->l.s, 5, s_connection);
  if (rc) {
    uv_close(&s->l.h, NULL);
    return rc;
  }
  int len = sizeof ss;
  uv_tcp_getsockname(&s->l.tcp, (struct sockaddr *)&ss, &len);
  int port = ss.ss_family == AF_INET6
                 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                 : ntohs(((struct sockaddr_in *)&ss)->sin_port);
  snprintf(s->port, sizeof s->port, "%d", port);
  return 0;
}

/* {====== options ======} */

static int parse_all(el_src_opts_t *o, int argc, char **argv) {
  el_src_opts_init(o);
  for (int i = 1; i < argc;) {
    int rc = el_src_opts_parse(o, argc, argv, &i);
    if (rc < 0)
      return rc;
    if (rc == 0)
      i++;  /* a command's own option */
  }
  return el_src_opts_validate(o);
}

static void test_opts_both_forms(void **state) {
  (void)state;
  el_src_opts_t o;
  char *a[] = {"x", "--eventlog-socket-host", "::1", "--own",
               "--eventlog-socket-port=4040", "--eventlog-socket-timeout=0.5",
               "--eventlog-socket-exponent", "2", "--eventlog-log-file=t.bin",
               "--eventlog-socket-retries", "3", "--eventlog-socket-max-delay",
               "7"};
  assert_int_equal(parse_all(&o, EL_ARRAY_LEN(a), a), 0);
  assert_int_equal(o.kind, EL_SRC_TCP);
  assert_string_equal(o.host, "::1");
  assert_string_equal(o.port, "4040");
  assert_true(o.timeout_s == 0.5 && o.exponent == 2.0);
  assert_true(o.max_delay_s == 7.0 && o.retries == 3);
  assert_string_equal(o.log_file, "t.bin");

  el_src_opts_init(&o);
  assert_true(o.timeout_s == 1.0 && o.exponent == 1.0 && o.retries == -1);
  assert_null(o.log_file);
  char *b[] = {"x", "--eventlog-file", "a.eventlog", "--follow"};
  assert_int_equal(parse_all(&o, EL_ARRAY_LEN(b), b), 0);
  assert_int_equal(o.kind, EL_SRC_FILE);
  assert_string_equal(o.path, "a.eventlog");
  assert_true(o.follow);
  char *c[] = {"x", "--eventlog-socket=/tmp/s"};
  assert_int_equal(parse_all(&o, EL_ARRAY_LEN(c), c), 0);
  assert_int_equal(o.kind, EL_SRC_UNIX);
  char *d[] = {"x", "--eventlog-stdin"};
  assert_int_equal(parse_all(&o, EL_ARRAY_LEN(d), d), 0);
  assert_int_equal(o.kind, EL_SRC_STDIN);
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, "-");
  assert_int_equal(el_src_opts_validate(&o), 0);
  assert_int_equal(o.kind, EL_SRC_STDIN);
}

static void test_opts_errors(void **state) {
  (void)state;
  el_src_opts_t o;
  char *none[] = {"x", "--other"};
  assert_int_equal(parse_all(&o, 2, none), EL_EUSAGE);
  assert_non_null(strstr(o.err, "no eventlog source"));
  char *two[] = {"x", "--eventlog-stdin", "--eventlog-file", "f"};
  assert_int_equal(parse_all(&o, 4, two), EL_EUSAGE);
  char *nop[] = {"x", "--eventlog-socket-host", "h"};
  assert_int_equal(parse_all(&o, 3, nop), EL_EUSAGE);
  assert_non_null(strstr(o.err, "--eventlog-socket-port"));
  char *miss[] = {"x", "--eventlog-file"};
  assert_int_equal(parse_all(&o, 2, miss), EL_EUSAGE);
  assert_non_null(strstr(o.err, "needs a value"));
  char *bad[] = {"x", "--eventlog-stdin", "--eventlog-socket-timeout", "1s"};
  assert_int_equal(parse_all(&o, 4, bad), EL_EUSAGE);
  char *neg[] = {"x", "--eventlog-stdin", "--eventlog-socket-exponent=0.5"};
  assert_int_equal(parse_all(&o, 3, neg), EL_EUSAGE);
  char *val[] = {"x", "--eventlog-stdin=yes"};
  assert_int_equal(parse_all(&o, 2, val), EL_EUSAGE);
  char *emp[] = {"x", "--eventlog-file="};
  assert_int_equal(parse_all(&o, 2, emp), EL_EUSAGE);
  char *fol[] = {"x", "--eventlog-socket", "/s", "--follow"};
  assert_int_equal(parse_all(&o, 4, fol), EL_EUSAGE);
  /* ports: 1-65535 or a service name */
  const char *ports[] = {"99999", "0", "65536", "12x"};
  for (size_t i = 0; i < EL_ARRAY_LEN(ports); i++) {
    char *p[] = {"x", "--eventlog-socket-host", "h", "--eventlog-socket-port",
                 (char *)ports[i]};
    assert_int_equal(parse_all(&o, 5, p), EL_EUSAGE);
    assert_non_null(strstr(o.err, "expected a port 1-65535"));
  }
  const char *good[] = {"1", "65535", "http"};
  for (size_t i = 0; i < EL_ARRAY_LEN(good); i++) {
    char *p[] = {"x", "--eventlog-socket-host", "h", "--eventlog-socket-port",
                 (char *)good[i]};
    assert_int_equal(parse_all(&o, 5, p), 0);
  }
  char longp[200];
  memset(longp, 'a', sizeof longp - 1);
  longp[0] = '/';
  longp[sizeof longp - 1] = '\0';
  char *lng[] = {"x", "--eventlog-socket", longp};
  assert_int_equal(parse_all(&o, 3, lng), EL_EUSAGE);
  assert_non_null(strstr(o.err, "longer than 107"));
  /* A prefix of an option name is not the option. */
  char *pre[] = {"x", "--eventlog-filex", "f"};
  assert_int_equal(parse_all(&o, 3, pre), EL_EUSAGE);
  assert_non_null(strstr(o.err, "no eventlog source"));
}

static void test_opts_help_fits_80_columns(void **state) {
  (void)state;
  const char *h = el_src_opts_help();
  const char *names[] = {"--eventlog-file", "--eventlog-stdin",
                         "--eventlog-socket ", "--eventlog-socket-host",
                         "--eventlog-socket-port", "--eventlog-socket-timeout",
                         "--eventlog-socket-exponent", "--eventlog-log-file",
                         "--follow", "--eventlog-socket-retries"};
  for (size_t k = 0; k < EL_ARRAY_LEN(names); k++)
    assert_non_null(strstr(h, names[k]));
  for (const char *l = h; *l;) {
    const char *e = strchr(l, '\n');
    assert_non_null(e);
    assert_true(e - l <= 79);
    l = e + 1;
  }
}

/* {====== files ======} */

static el_src_t *make(uv_loop_t *loop, el_src_opts_t *o, rec_t *r) {
  el_src_cb_t cb = rec_cb(r);
  el_src_t *src = NULL;
  assert_int_equal(el_src_new(loop, o, &cb, &src), 0);
  r->src = src;
  assert_int_equal(el_src_start(src), 0);
  return src;
}

/* Read the file at path to its end (read_size 0: the default; tee: the
 * --eventlog-log-file or NULL) on a loop of its own, the source freed in
 * on_end. Returns what the consumer saw; the caller frees got. */
static rec_t read_file(const char *path, const char *tee, size_t read_size) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, path);
  o.log_file = tee;
  o.read_size = read_size;
  rec_t r = {0};
  r.free_on_end = 1;
  make(&loop, &o, &r);
  run_for(&loop, 10000);
  loop_done(&loop);
  return r;
}

static void test_file_reads_every_byte(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[1024], tee[512];
  snprintf(path, sizeof path, "%s/%s",
           getenv("EL_EVENTLOGS") ? getenv("EL_EVENTLOGS")
                                  : EL_SOURCE_DIR "/tests/data/eventlogs",
           LOG_FILE);
  tmp_path(tee, sizeof tee, "tee.bin");
  rec_t r = read_file(path, tee, 4093); /* many reads, odd size */
  assert_int_equal(r.connects, 1);
  assert_int_equal(r.disconnects, 1);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  /* The file was just read (shared_log): the page cache holds it, so
   * every read is done on the loop thread, none on the thread pool. */
  assert_int_equal(r.pool_reads, 0);
  size_t tlen;
  uint8_t *t = slurp(tee, &tlen);
  assert_int_equal(tlen, len);
  assert_memory_equal(t, want, len);
  free(t);
  free(want);
  free(r.got);
  assert_int_equal(el_mem_in_use(), mem0);
}

/* A file whose pages the page cache does not hold is read through the
 * thread pool (preadv2 with RWF_NOWAIT says EAGAIN rather than wait for
 * the disk), and its bytes still arrive whole and in order, also when the
 * reads switch between the thread pool and the loop thread (readahead
 * brings later chunks into the cache). The pages are dropped with
 * posix_fadvise(POSIX_FADV_DONTNEED) after an fsync; on a file system
 * that keeps them anyway (tmpfs: mincore still sees them) the test is
 * skipped. */
static void test_file_uncached_read_on_thread_pool(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "uncached.bin");
  size_t len = (3u << 20) + 12345; /* 12+ chunks of 256 KiB, a short one */
  uint8_t *want = malloc(len);
  uint32_t x = 12345;
  for (size_t i = 0; i < len; i++) {
    x = x * 1103515245u +
        12345u; /* a byte pattern that never repeats a chunk */
    want[i] = (uint8_t)(x >> 24);
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, want, len), (ssize_t)len);
  assert_int_equal(fsync(fd), 0);
  close(fd);
  fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  long page = sysconf(_SC_PAGESIZE);
  size_t npages = (len + (size_t)page - 1) / (size_t)page, resident = 0;
  void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  assert_true(m != MAP_FAILED);
  unsigned char *vec = malloc(npages);
  assert_int_equal(mincore(m, len, vec), 0);
  for (size_t i = 0; i < npages; i++) resident += vec[i] & 1;
  munmap(m, len);
  free(vec);
  close(fd);
  if (resident == npages) {
    unlink(path);
    free(want);
    skip(); /* the page cache keeps the file: nothing to read from disk */
  }
  rec_t r = read_file(path, NULL, 0);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  assert_true(r.pool_reads >= 1);
  free(want);
  free(r.got);
  unlink(path);
}

/* A file on tmpfs (/dev/shm), which refuses RWF_NOWAIT, is read on the
 * loop thread too (read(2): its pages are in memory), none of it through
 * the thread pool. Skipped where /dev/shm is not tmpfs. */
static void test_file_on_tmpfs_read_on_loop_thread(void **state) {
  (void)state;
  struct statfs fs;
  if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) skip();
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[128];
  snprintf(path, sizeof path, "/dev/shm/el-test-source-%ld.eventlog",
           (long)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, want, len), (ssize_t)len);
  close(fd);
  rec_t r = read_file(path, NULL, 4093); /* many reads, odd size */
  unlink(path);
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  assert_int_equal(r.pool_reads, 0);
  free(want);
  free(r.got);
}

static void test_file_missing_ends_with_enoent(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, "/nonexistent/x.eventlog");
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 5000);
  assert_int_equal(r.connects, 0);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, -ENOENT);
  assert_int_equal(el_src_stats(src)->failures, 1);
  el_src_free(src);
  loop_done(&loop);
}

/* --follow: bytes appended later are read; stopped when all arrived. */
typedef struct {
  int fd;
  const uint8_t *data;
  size_t len, off;
} appender_t;

static void append_cb(uv_timer_t *t) {
  appender_t *a = t->data;
  size_t n = a->len - a->off < 5000 ? a->len - a->off : 5000;
  assert_int_equal(write(a->fd, a->data + a->off, n), (ssize_t)n);
  a->off += n;
  if (a->off == a->len)
    uv_timer_stop(t);
}

static void test_follow_reads_growing_file(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  tmp_path(path, sizeof path, "growing.eventlog");
  appender_t a = {.data = want, .len = len};
  a.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(a.fd >= 0);
  assert_int_equal(write(a.fd, want, 100), 100);
  a.off = 100;
  uv_loop_t loop;
  uv_loop_init(&loop);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &a;
  uv_timer_start(&t, append_cb, 20, 5);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, path);
  o.follow = 1;
  o.follow_poll_s = 0.01;
  rec_t r = {0};
  r.stop_after = len;
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 20000);
  assert_int_equal(r.end_status, EL_ESTOPPED);
  assert_int_equal(r.connects, 1);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  close(a.fd);
  el_src_free(src);
  free(want);
  free(r.got);
  loop_done(&loop);
}

/* A FIFO at tmpdir/name (made afresh) read by a new source on loop,
 * recording into r; the FIFO's path in path. */
static el_src_t *fifo_source(const char *name, char *path, size_t n,
                             uv_loop_t *loop, rec_t *r) {
  tmp_path(path, n, name);
  unlink(path);
  assert_int_equal(mkfifo(path, 0600), 0);
  uv_loop_init(loop);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, path);
  return make(loop, &o, r);
}

/* A FIFO: the source opens it before any writer; a writer (a child
 * process) sends the log and closes: EOF = end of input. */
static void test_fifo_until_writer_closes(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  uv_loop_t loop;
  rec_t r = {0};
  el_src_t *src = fifo_source("log.fifo", path, sizeof path, &loop, &r);
  pid_t pid = fork();
  if (pid == 0) {
    usleep(50000);  /* the reader waits for a writer meanwhile */
    int fd = open(path, O_WRONLY);
    size_t off = 0;
    while (fd >= 0 && off < len) {
      ssize_t n = write(fd, want + off, len - off);
      if (n <= 0)
        _exit(1);
      off += (size_t)n;
    }
    _exit(0);
  }
  run_for(&loop, 10000);
  int st;
  waitpid(pid, &st, 0);
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  el_src_free(src);
  free(want);
  free(r.got);
  unlink(path);
  loop_done(&loop);
}

/* Whether this process may grow a pipe to 1 MiB (F_SETPIPE_SZ), as the
 * source asks (a lowered /proc/sys/fs/pipe-max-size or a used-up
 * pipe-user-pages-soft refuse it). */
static int can_grow_pipes(void) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  int ok = fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= 1 << 20;
  close(p[0]);
  close(p[1]);
  return ok;
}

/* The writer's side of a grown pipe (a child process): open path for
 * writing (or use fd when path is NULL), wait up to 5 s until the pipe
 * holds 1 MiB as seen from this end (F_GETPIPE_SZ: the kernel's figure,
 * not the source's), then write len bytes of want and exit 0; exit 3 if
 * the pipe never grew, 1 on a failed write. */
static void write_when_grown(const char *path, int fd, const uint8_t *want,
                             size_t len) {
  if (path) fd = open(path, O_WRONLY);
  int grown = 0;
  for (int i = 0; i < 500 && fd >= 0 && !grown; i++) {
    grown = fcntl(fd, F_GETPIPE_SZ) == 1 << 20;
    if (!grown) usleep(10000);
  }
  for (size_t off = 0; fd >= 0 && off < len;) {
    ssize_t n = write(fd, want + off, len - off);
    if (n <= 0) _exit(1);
    off += (size_t)n;
  }
  _exit(grown ? 0 : 3);
}

/* A FIFO's pipe is grown to 1 MiB once the source opened it, before any
 * byte is read (docs/sources.md "Pipes"): the writer sees the new size on
 * its end, every byte arrives, and el_src_stats reports the size. */
static void test_fifo_pipe_grown(void **state) {
  (void)state;
  if (!can_grow_pipes()) skip();
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  uv_loop_t loop;
  rec_t r = {0};
  el_src_t *src = fifo_source("grow.fifo", path, sizeof path, &loop, &r);
  pid_t pid = fork();
  if (pid == 0) write_when_grown(path, -1, want, len);
  run_for(&loop, 10000);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0); /* 3: the pipe stayed 64 KiB */
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  assert_int_equal(r.pipe_size, 1 << 20);
  el_src_free(src);
  free(want);
  free(r.got);
  unlink(path);
  loop_done(&loop);
}

/* The same for a pipe on stdin (`prog | eventlog-live --eventlog-stdin`):
 * grown to 1 MiB, every byte read. A regular file on stdin has no pipe
 * (pipe_size 0). fd 0 is the test's pipe meanwhile, then restored. */
static void test_stdin_pipe_grown(void **state) {
  (void)state;
  if (!can_grow_pipes()) skip();
  size_t len;
  uint8_t *want = shared_log(&len);
  int p[2], saved = dup(0);
  assert_true(saved >= 0);
  assert_int_equal(pipe(p), 0);
  assert_int_equal(fcntl(p[0], F_GETPIPE_SZ), 65536);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    write_when_grown(NULL, p[1], want, len);
  }
  close(p[1]);
  assert_int_equal(dup2(p[0], 0), 0);
  close(p[0]);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, "-"); /* --eventlog-stdin */
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  assert_int_equal(r.pipe_size, 1 << 20);
  el_src_free(src);
  loop_done(&loop);
  /* a regular file on stdin: no pipe to grow */
  char fpath[1024];
  shared_log_path(fpath, sizeof fpath);
  int f = open(fpath, O_RDONLY);
  assert_true(f >= 0);
  assert_int_equal(dup2(f, 0), 0);
  close(f);
  uv_loop_init(&loop);
  free(r.got);
  memset(&r, 0, sizeof r);
  r.pipe_size = 7;
  src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  assert_int_equal(r.got_len, len);
  assert_int_equal(r.pipe_size, 0);
  el_src_free(src);
  loop_done(&loop);
  assert_int_equal(dup2(saved, 0), 0);
  close(saved);
  free(want);
  free(r.got);
}

/* A FIFO source reports that it waits for its writer (on_wait 1) only
 * after the bytes it read were delivered, and stops waiting (on_wait 0)
 * before the next bytes are delivered and when the session ends. The
 * writer (a child process) writes 3 chunks of 1000 bytes (short reads:
 * the 64 KiB buffer is not filled), 100 ms apart, and closes. Whether two
 * chunks are read as one depends on timing, so the trace is checked by
 * rule: each 'd' is followed by 'W', each 'W' by 'w', and it ends in
 * 'w'. */
static void test_fifo_reports_waits(void **state) {
  (void)state;
  char path[512];
  uv_loop_t loop;
  rec_t r = {0};
  el_src_t *src = fifo_source("wait.fifo", path, sizeof path, &loop, &r);
  pid_t pid = fork();
  if (pid == 0) {
    static uint8_t chunk[1000];
    int fd = open(path, O_WRONLY);
    for (int i = 0; i < 3 && fd >= 0; i++) {
      if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk) _exit(1);
      usleep(100000);
    }
    _exit(0);
  }
  run_for(&loop, 10000);
  int st;
  waitpid(pid, &st, 0);
  assert_int_equal(r.got_len, 3000);
  r.trace[r.ntrace] = 0;
  assert_true(r.ntrace >= 3);
  for (size_t i = 0; i < r.ntrace; i++) {
    if (r.trace[i] == 'd') assert_true(r.trace[i + 1] == 'W');
    if (r.trace[i] == 'W') assert_true(r.trace[i + 1] == 'w');
  }
  assert_int_equal(r.trace[r.ntrace - 1], 'w');
  assert_true(strchr(r.trace, 'd') != NULL);
  el_src_free(src);
  free(r.got);
  unlink(path);
  loop_done(&loop);
}

/* A consumer that pauses after every chunk and resumes from a timer gets
 * every byte once, in order (a read completed while paused is held). */
static void resume_tick(uv_timer_t *t) {
  rec_t *r = t->data;
  if (r->ends) {
    uv_timer_stop(t);
    return;
  }
  el_src_resume(r->src);
}

static void test_file_pause_after_every_chunk(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", getenv("EL_EVENTLOGS") ?
           getenv("EL_EVENTLOGS") : EL_SOURCE_DIR "/tests/data/eventlogs",
           LOG_FILE);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, path);
  o.read_size = 1000;
  rec_t r = {0};
  r.pause_on_data = 1;
  el_src_t *src = make(&loop, &o, &r);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &r;
  uv_timer_start(&t, resume_tick, 1, 1);
  run_for(&loop, 20000);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  el_src_free(src);
  free(want);
  free(r.got);
  loop_done(&loop);
}

/* {====== sockets ======} */

static void unix_opts(el_src_opts_t *o, const char *path) {
  el_src_opts_init(o);
  char *a[] = {"x", "--eventlog-socket", (char *)path};
  int i = 1;
  assert_int_equal(el_src_opts_parse(o, 3, a, &i), 1);
  o->timeout_s = 0.01;
}

static void test_unix_two_sessions(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  tmp_path(path, sizeof path, "two.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = want;
  s.plen = len;
  s.first_plen = 777;  /* the first connection is cut mid-stream */
  s.max_conns = 2;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 2;
  rec_t r = {0};
  r.free_on_end = 1;
  make(&loop, &o, &r);
  run_for(&loop, 10000);
  /* Two sessions, then the listener is gone: ENOENT after 3 attempts. */
  assert_int_equal(r.connects, 2);
  assert_int_equal(r.disconnects, 2);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, UV_ENOENT);
  assert_int_equal(r.session_len[0], 777);
  assert_int_equal(r.session_len[1], len);
  assert_memory_equal(r.got, want, 777);
  assert_memory_equal(r.got + 777, want, len);
  free(want);
  free(r.got);
  loop_done(&loop);
  assert_int_equal(el_mem_in_use(), mem0);
}

static void listen_later_cb(uv_timer_t *t) {
  srv_t *s = t->data;
  char *path = (char *)s->rec;  /* path stashed in rec for this test */
  char p[sizeof s->rec];
  snprintf(p, sizeof p, "%s", path);
  memset(s->rec, 0, sizeof s->rec);
  srv_listen_unix(s, t->loop, p);
}

static void test_reconnect_when_server_starts_late(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "late.sock");
  unlink(path);
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = (const uint8_t *)"hdrbhetb";
  s.plen = 8;
  s.max_conns = 1;
  snprintf((char *)s.rec, sizeof s.rec, "%s", path);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &s;
  uv_timer_start(&t, listen_later_cb, 150, 0);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 3;
  o.exponent = 2;  /* 10 + 20 + 40 + 80 ms covers the 150 ms */
  o.timeout_s = 0.01;
  o.retries = 6;
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  assert_int_equal(r.connects, 1);
  assert_int_equal(r.got_len, 8);
  const el_src_stats_t *st = el_src_stats(src);
  assert_true(st->failures >= 2);
  assert_int_equal(st->connections, 1);
  assert_true(st->attempts >= 3);
  el_src_free(src);
  free(r.got);
  loop_done(&loop);
}

static void test_gives_up_after_retries(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "nobody.sock");
  unlink(path);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.timeout_s = 0.01;
  o.exponent = 2;
  o.retries = 3;
  rec_t r = {0};
  uint64_t t0 = uv_hrtime();
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  uint64_t ms = (uv_hrtime() - t0) / 1000000;
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, UV_ENOENT);
  assert_int_equal(r.connects, 0);
  const el_src_stats_t *st = el_src_stats(src);
  assert_int_equal(st->attempts, 4);   /* the first + 3 retries */
  assert_int_equal(st->failures, 4);
  assert_true(ms >= 10 + 20 + 40 - 5);  /* it waited between attempts */
  el_src_free(src);
  loop_done(&loop);
}

/* Warnings logged (run_warned), one per line. */
static char warned[2048];

static void warn_hook(void *ud, el_log_level_t level, const char *msg) {
  (void)ud;
  if (level == EL_LOG_WARN &&
      strlen(warned) + strlen(msg) + 2 < sizeof warned) {
    strcat(warned, msg);
    strcat(warned, "\n");
  }
}

/* Make a source on loop with o, recording into r, and run the loop until
 * it ends (10 s at most); the warnings it logged are left in warned (the
 * log threshold WARN meanwhile, then restored). Returns the source, for
 * the caller to check and free. */
static el_src_t *run_warned(uv_loop_t *loop, el_src_opts_t *o, rec_t *r) {
  warned[0] = 0;
  el_log_level_t saved = el_log_threshold;
  el_log_threshold = EL_LOG_WARN; /* the hook sees what passes it */
  el_log_set_hook(warn_hook, NULL);
  el_src_t *src = make(loop, o, r);
  run_for(loop, 10000);
  el_log_set_hook(NULL, NULL);
  el_log_threshold = saved;
  return src;
}

/* A peer that accepts and closes at once counts as a failed attempt; the
 * warning says the connection closed before any data, not that it could
 * not connect. Once a session delivered bytes, the next failure is no
 * warning. */
static void test_empty_sessions_back_off(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "empty.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = (const uint8_t *)"hdrbhetb";
  s.plen = 8;
  s.max_conns = 3;
  s.empty_conns = 2;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 3;
  rec_t r = {0};
  el_src_t *src = run_warned(&loop, &o, &r);
  /* the only warning: the first empty session's; the socket gone
   * (ENOENT) after the session that delivered bytes is the program going
   * away, said at info level (h74) */
  assert_true(strncmp(warned, "Connection on Unix socket ", 26) == 0);
  assert_non_null(strstr(warned, "closed before any data"));
  assert_null(strstr(warned, "Failed to connect"));
  assert_int_equal(r.connects, 3);
  assert_int_equal(r.session_len[2], 8);
  const el_src_stats_t *st = el_src_stats(src);
  /* Two empty sessions + ENOENT after the third: 2 + 4 failures. */
  assert_int_equal(st->failures, 6);
  assert_int_equal(r.end_status, UV_ENOENT);
  el_src_free(src);
  free(r.got);
  loop_done(&loop);
}

/* Fail to connect on a socket nobody listens on, attempts (1 +
 * retries) times 50 ms apart, with peer_exited (NULL: no started
 * program) and a 0.2 s grace: the warnings logged are left in warned. */
static void fail_with_peer(const volatile sig_atomic_t *peer_exited,
                           long retries) {
  char path[512];
  tmp_path(path, sizeof path, "peer.sock");
  unlink(path);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.timeout_s = 0.05;
  o.retries = retries;
  o.peer_exited = peer_exited;
  o.peer_grace_s = 0.2;
  rec_t r = {0};
  el_src_t *src = run_warned(&loop, &o, &r);
  assert_int_equal(r.ends, 1);
  assert_int_equal(el_src_stats(src)->failures, retries + 1);
  el_src_free(src);
  loop_done(&loop);
}

/* Lines in warned. */
static int warned_lines(void) {
  int n = 0;
  for (const char *p = warned; *p; p++) n += *p == '\n';
  return n;
}

/* A program the caller started (watch) is expected to refuse connections
 * while it starts and once it ended: with peer_exited, failing to connect
 * is not a warning until the failures have lasted peer_grace_s while it
 * runs (then one warning saying how long), and never after it exited.
 * Without peer_exited the first failure is a warning, as before. The
 * 50 ms retry timer makes the 12 attempts span at least 0.55 s of loop
 * time whatever the machine's load; 2 attempts span 0.05 s. */
static void test_started_peer_failures(void **state) {
  (void)state;
  volatile sig_atomic_t exited = 0;
  fail_with_peer(&exited, 1); /* 0.05 s: within the grace */
  assert_string_equal(warned, "");
  fail_with_peer(&exited, 11); /* past the grace: one warning */
  assert_int_equal(warned_lines(), 1);
  assert_true(strncmp(warned, "Failed to connect on Unix socket ", 33) == 0);
  assert_non_null(strstr(warned, " while the program runs (retrying)"));
  exited = 1;
  fail_with_peer(&exited, 11); /* the program is gone: nothing */
  assert_string_equal(warned, "");
  fail_with_peer(NULL, 11); /* no started program: the first failure */
  assert_int_equal(warned_lines(), 1);
  assert_non_null(strstr(warned, "No such file or directory (retrying)"));
}

/* A regular file where the Unix socket should be: the source ends with
 * ENOTSOCK after its retries, and the failure to connect says the path is
 * not a socket (h59: only "Socket operation on non-socket"); retried, as
 * eventlog-socket replaces the path when its program starts. */
static void test_not_a_socket_said(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "plain.file");
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.timeout_s = 0.05;
  o.retries = 1;
  rec_t r = {0};
  el_src_t *src = run_warned(&loop, &o, &r);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.connects, 0);
  assert_int_equal(r.end_status, UV_ENOTSOCK);
  assert_int_equal(el_src_stats(src)->failures, 2);
  assert_non_null(strstr(warned, "the path exists but is not a socket"));
  assert_non_null(strstr(warned, "(retrying)"));
  el_src_free(src);
  loop_done(&loop);
  unlink(path);
}

static void tcp_case(const char *ip) {
  size_t len;
  uint8_t *want = shared_log(&len);
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = want;
  s.plen = len;
  s.max_conns = 1;
  if (srv_listen_tcp(&s, &loop, ip) != 0) {
    free(want);
    loop_done(&loop);
    print_message("no %s on this machine: skipped\n", ip);
    return;
  }
  el_src_opts_t o;
  char *a[] = {"x", "--eventlog-socket-host", (char *)ip,
               "--eventlog-socket-port", s.port, "--eventlog-socket-retries",
               "0"};
  assert_int_equal(parse_all(&o, EL_ARRAY_LEN(a), a), 0);
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  assert_int_equal(r.connects, 1);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  assert_int_equal(r.end_status, UV_ECONNREFUSED);
  el_src_free(src);
  free(want);
  free(r.got);
  loop_done(&loop);
}

static void test_tcp_ipv4(void **state) {
  (void)state;
  tcp_case("127.0.0.1");
}

static void test_tcp_ipv6(void **state) {
  (void)state;
  tcp_case("::1");
}


/* A host name goes through getaddrinfo; every address it gives is tried
 * in turn until one accepts. */
static void test_tcp_by_host_name(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = (const uint8_t *)"hdrbhetb";
  s.plen = 8;
  s.max_conns = 1;
  assert_int_equal(srv_listen_tcp(&s, &loop, "127.0.0.1"), 0);
  el_src_opts_t o;
  char *a[] = {"x", "--eventlog-socket-host", "localhost",
               "--eventlog-socket-port", s.port, "--eventlog-socket-retries",
               "0"};
  assert_int_equal(parse_all(&o, EL_ARRAY_LEN(a), a), 0);
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  assert_int_equal(r.connects, 1);
  assert_int_equal(r.got_len, 8);
  el_src_free(src);
  free(r.got);
  loop_done(&loop);
}

/* A peer that never reads: the control queue is bounded (1 MiB), excess
 * is refused with EL_ENOMEM and counted; queued bytes are dropped and
 * counted when the connection closes. */
static void write_flood_cb(uv_timer_t *t) {
  rec_t *r = t->data;
  static uint8_t chunk[64 << 10];
  int rc = 0;
  for (int k = 0; k < 64 && rc == 0; k++) {
    rc = el_src_write(r->src, chunk, sizeof chunk);
    r->write_len += sizeof chunk;  /* bytes offered */
  }
  r->write_rc = rc;
  el_src_stop(r->src);
}

static void test_write_queue_is_bounded(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "flood.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = (const uint8_t *)"hdrbhetb";
  s.plen = 8;
  s.max_conns = 1;
  s.keep_open = 1;
  s.no_read = 1;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 0;
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &r;
  uv_timer_start(&t, write_flood_cb, 100, 0);
  run_for(&loop, 10000);
  assert_int_equal(r.write_rc, EL_ENOMEM);
  const el_src_stats_t *st = el_src_stats(src);
  assert_true(st->send_dropped > 0);
  /* Everything offered is accounted for: sent or dropped. */
  assert_true(r.write_len > (1u << 20));
  assert_int_equal(st->sent_bytes + st->send_dropped, r.write_len);
  assert_int_equal(el_src_write(src, (const uint8_t *)"x", 1), EL_ECLOSED);
  el_src_free(src);
  free(r.got);
  loop_done(&loop);
}


/* Reading allocates nothing per chunk: el_malloc's allocation count does
 * not move between the first and the last byte of a long session. */
typedef struct {
  rec_t r;
  uint64_t allocs_at_first, allocs_at_last;
} alloc_rec_t;

static void a_data(void *ud, el_src_t *src, const uint8_t *buf, size_t len) {
  alloc_rec_t *a = ud;
  if (a->r.got_len == 0)
    a->allocs_at_first = el_mem_alloc_count();
  a->r.got_len += len;
  a->allocs_at_last = el_mem_alloc_count();
  (void)src;
  (void)buf;
}

static void test_no_allocation_per_read(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  tmp_path(path, sizeof path, "alloc.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = want;
  s.plen = len;
  s.max_conns = 1;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 0;
  o.read_size = 512;  /* many reads */
  o.log_file = NULL;
  alloc_rec_t a = {0};
  el_src_cb_t cb = {.ud = &a, .on_data = a_data};
  el_src_t *src;
  assert_int_equal(el_src_new(&loop, &o, &cb, &src), 0);
  assert_int_equal(el_src_start(src), 0);
  run_for(&loop, 10000);
  assert_int_equal(a.r.got_len, len);
  assert_true(len / 512 > 50);
  assert_int_equal(a.allocs_at_last, a.allocs_at_first);
  el_src_free(src);
  free(want);
  loop_done(&loop);
}

/* {====== control channel, flow control, teardown ======} */

static void test_write_reaches_peer(void **state) {
  (void)state;
  char path[512];
  tmp_path(path, sizeof path, "ctl.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = (const uint8_t *)"hdrbhetb";
  s.plen = 8;
  s.max_conns = 1;
  s.keep_open = 1;  /* the source stops after 8 bytes; then EOF closes */
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 0;
  rec_t r = {0};
  r.stop_after = 8;
  r.write_on_connect = "\xF0\x9E\x97\x8C\x00\x0F" "eventlog-socket\x05";
  r.write_len = 22;  /* requestHeapCensus, spec §5.7 */
  el_src_cb_t cb = rec_cb(&r);
  el_src_t *src;
  assert_int_equal(el_src_new(&loop, &o, &cb, &src), 0);
  assert_int_equal(el_src_write(src, (const uint8_t *)"x", 1), EL_ECLOSED);
  el_src_start(src);
  run_for(&loop, 10000);
  assert_int_equal(r.write_rc, 0);
  assert_int_equal(s.rec_len, 22);
  assert_memory_equal(s.rec, r.write_on_connect, 22);
  assert_int_equal(el_src_stats(src)->sent_bytes, 22);
  assert_int_equal(el_src_stats(src)->send_dropped, 1);
  el_src_free(src);
  free(r.got);
  loop_done(&loop);
}

static void resume_cb(uv_timer_t *t) {
  rec_t *r = t->data;
  assert_int_equal(r->got_len, 0);  /* nothing read while paused */
  assert_true(el_src_paused(r->src));
  el_src_resume(r->src);
}

static void test_pause_holds_bytes(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  tmp_path(path, sizeof path, "pause.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = want;
  s.plen = len;
  s.max_conns = 1;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 0;
  rec_t r = {0};
  r.pause_on_connect = 1;
  el_src_t *src = make(&loop, &o, &r);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &r;
  uv_timer_start(&t, resume_cb, 100, 0);
  run_for(&loop, 10000);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  el_src_free(src);
  free(want);
  free(r.got);
  loop_done(&loop);
}

static void test_stop_inside_on_data(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  tmp_path(path, sizeof path, "stop.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = want;
  s.plen = len;
  s.max_conns = 1;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.read_size = 1000;
  rec_t r = {0};
  r.stop_after = 1;
  el_src_t *src = make(&loop, &o, &r);
  run_for(&loop, 10000);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, EL_ESTOPPED);
  assert_int_equal(r.disconnects, 1);
  assert_true(r.got_len <= 1000);
  el_src_stop(src);  /* after the end: nothing happens */
  assert_int_equal(r.ends, 1);
  el_src_free(src);
  free(want);
  free(r.got);
  loop_done(&loop);
}

static void test_free_while_running(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  char path[512];
  tmp_path(path, sizeof path, "nobody2.sock");
  unlink(path);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.timeout_s = 5;  /* waiting in backoff when freed */
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  uv_run(&loop, UV_RUN_NOWAIT);
  el_src_free(src);
  run_for(&loop, 5000);
  assert_int_equal(r.ends, 0);  /* freed: no callback */
  assert_int_equal(r.disconnects, 0);
  loop_done(&loop);
  assert_int_equal(el_mem_in_use(), mem0);
}

static void free_cb(uv_timer_t *t) {
  rec_t *r = t->data;
  assert_int_equal(r->connects, 1);
  el_src_free(r->src);
  r->src = NULL;
}

static void test_free_while_connected(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  char path[512];
  tmp_path(path, sizeof path, "freeconn.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = (const uint8_t *)"hdrbhetb";
  s.plen = 8;
  s.max_conns = 1;
  s.keep_open = 1;
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  rec_t r = {0};
  make(&loop, &o, &r);
  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &r;
  uv_timer_start(&t, free_cb, 100, 0);
  run_for(&loop, 5000);
  assert_int_equal(r.got_len, 8);
  assert_int_equal(r.disconnects, 0);
  assert_int_equal(r.ends, 0);
  free(r.got);
  loop_done(&loop);
  assert_int_equal(el_mem_in_use(), mem0);
}

static void test_new_fails_cleanly_without_memory(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  el_src_opts_t o;
  unix_opts(&o, "/tmp/x.sock");
  o.log_file = "/dev/null";
  uv_loop_t loop;
  uv_loop_init(&loop);
  for (uint64_t n = 1;; n++) {
    el_mem_fail_after(n);
    el_src_t *src = NULL;
    int rc = el_src_new(&loop, &o, NULL, &src);
    el_mem_fail_after(0);
    if (rc == 0) {
      el_src_free(src);
      break;
    }
    assert_int_equal(rc, EL_ENOMEM);
    assert_null(src);
    assert_int_equal(el_mem_in_use(), mem0);
    assert_true(n < 50);
  }
  loop_done(&loop);
  assert_int_equal(el_mem_in_use(), mem0);
}

/* {====== pump ======} */

typedef struct {
  char log[256];
  size_t len;
  uint64_t fed;
} fake_t;

static void f_log(fake_t *f, const char *s) {
  size_t n = strlen(s);
  if (f->len + n < sizeof f->log) {
    memcpy(f->log + f->len, s, n + 1);
    f->len += n;
  }
}
static void f_reset(void *ud) { f_log(ud, "R"); }
static int f_feed(void *ud, const uint8_t *b, size_t n) {
  fake_t *f = ud;
  (void)b;
  if (f->len == 0 || f->log[f->len - 1] != 'F')
    f_log(f, "F");
  f->fed += n;
  return 0;
}
static int f_finish(void *ud) {
  f_log(ud, "E");
  return 0;
}

static void test_pump_session_protocol(void **state) {
  (void)state;
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[512];
  tmp_path(path, sizeof path, "pump.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_t s = {0};
  s.payload = want;
  s.plen = len;
  s.first_plen = 1000;
  s.max_conns = 3;
  s.empty_conns = 1;  /* an empty session is not finished */
  srv_listen_unix(&s, &loop, path);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 1;
  fake_t f = {0};
  el_src_consumer_t c = {.ud = &f, .reset = f_reset, .feed = f_feed,
                         .finish = f_finish};
  el_src_pump_result_t res;
  int rc = el_src_pump(&loop, &o, &c, &res);
  assert_int_equal(rc, 0);  /* gave up after the peer left: a clean end */
  assert_int_equal(res.status, UV_ENOENT);
  assert_string_equal(f.log, "RRFERFE");
  assert_int_equal(f.fed, 2 * len);  /* the first connection was empty */
  assert_int_equal(res.sessions, 3);
  assert_int_equal(res.errors, 0);
  fake_t g = {0};
  c.ud = &g;
  c.one_stream = 1;
  el_src_opts_init(&o);
  char p2[4200];
  snprintf(p2, sizeof p2, "%s/%s", getenv("EL_EVENTLOGS") ?
           getenv("EL_EVENTLOGS") : EL_SOURCE_DIR "/tests/data/eventlogs",
           LOG_FILE);
  el_src_opts_set_path(&o, p2);
  assert_int_equal(el_src_pump(NULL, &o, &c, &res), 0);
  assert_string_equal(g.log, "RFE");
  assert_int_equal(g.fed, len);
  free(want);
  loop_done(&loop);
}

/* {====== signals (source.h, "Signals") ======} */

/* SIGPIPE gets its default action (death) for the test; *old keeps what
 * main set. */
static void sigpipe_default(struct sigaction *old) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  assert_int_equal(sigaction(SIGPIPE, &dfl, old), 0);
}

/* Starting a socket source leaves SIGPIPE's disposition alone. */
static void test_socket_leaves_sigpipe_alone(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  struct sigaction old, now;
  sigpipe_default(&old);
  char path[512];
  tmp_path(path, sizeof path, "sigpipe.sock");
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  unix_opts(&o, path);
  o.retries = 1;
  rec_t r = {0};
  r.free_on_end = 1;
  make(&loop, &o, &r);
  run_for(&loop, 10000);
  sigaction(SIGPIPE, &old, &now);
  assert_true(now.sa_handler == SIG_DFL);
  assert_int_equal(r.ends, 1);
  assert_int_equal(r.end_status, UV_ENOENT);
  loop_done(&loop);
  assert_int_equal(el_mem_in_use(), mem0);
}

/* A FIFO as tee whose reader went away: every byte is still delivered,
 * the bytes not teed are counted, and no SIGPIPE is raised (with its
 * default action it would kill the test) or left pending. */
static void test_tee_fifo_without_reader(void **state) {
  (void)state;
  size_t mem0 = el_mem_in_use();
  size_t len;
  uint8_t *want = shared_log(&len);
  char path[1024], fifo[512];
  shared_log_path(path, sizeof path);
  tmp_path(fifo, sizeof fifo, "tee.fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  int reader = open(fifo, O_RDONLY | O_NONBLOCK); /* lets the tee open */
  assert_true(reader >= 0);
  struct sigaction old;
  sigpipe_default(&old);
  uv_loop_t loop;
  uv_loop_init(&loop);
  el_src_opts_t o;
  el_src_opts_init(&o);
  el_src_opts_set_path(&o, path);
  o.log_file = fifo;
  rec_t r = {0};
  el_src_t *src = make(&loop, &o, &r);
  close(reader); /* before the first byte arrives (a later loop turn) */
  run_for(&loop, 10000);
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  sigaction(SIGPIPE, &old, NULL);
  assert_false(sigismember(&pending, SIGPIPE));
  assert_int_equal(r.end_status, 0);
  assert_int_equal(r.got_len, len);
  assert_memory_equal(r.got, want, len);
  assert_int_equal(el_src_stats(src)->tee_bytes, 0);
  assert_int_equal(el_src_stats(src)->tee_errors, len);
  el_src_free(src);
  free(want);
  free(r.got);
  loop_done(&loop);
  assert_int_equal(el_mem_in_use(), mem0);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/el_test_source.XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  el_log_threshold = getenv("EL_TEST_DEBUG") ? EL_LOG_DEBUG : EL_LOG_QUIET;
  /* The tests write on sockets whose peer may close: as source.h asks of
   * such a program, SIGPIPE is ignored (the signal tests set it back). */
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opts_both_forms),
      cmocka_unit_test(test_opts_errors),
      cmocka_unit_test(test_opts_help_fits_80_columns),
      cmocka_unit_test(test_file_reads_every_byte),
      cmocka_unit_test(test_file_uncached_read_on_thread_pool),
      cmocka_unit_test(test_file_on_tmpfs_read_on_loop_thread),
      cmocka_unit_test(test_file_missing_ends_with_enoent),
      cmocka_unit_test(test_follow_reads_growing_file),
      cmocka_unit_test(test_fifo_until_writer_closes),
      cmocka_unit_test(test_fifo_pipe_grown),
      cmocka_unit_test(test_stdin_pipe_grown),
      cmocka_unit_test(test_file_pause_after_every_chunk),
      cmocka_unit_test(test_unix_two_sessions),
      cmocka_unit_test(test_reconnect_when_server_starts_late),
      cmocka_unit_test(test_gives_up_after_retries),
      cmocka_unit_test(test_empty_sessions_back_off),
      cmocka_unit_test(test_started_peer_failures),
      cmocka_unit_test(test_not_a_socket_said),
      cmocka_unit_test(test_tcp_ipv4),
      cmocka_unit_test(test_tcp_ipv6),
      cmocka_unit_test(test_tcp_by_host_name),
      cmocka_unit_test(test_no_allocation_per_read),
      cmocka_unit_test(test_write_queue_is_bounded),
      cmocka_unit_test(test_write_reaches_peer),
      cmocka_unit_test(test_pause_holds_bytes),
      cmocka_unit_test(test_stop_inside_on_data),
      cmocka_unit_test(test_fifo_reports_waits),
      cmocka_unit_test(test_free_while_running),
      cmocka_unit_test(test_free_while_connected),
      cmocka_unit_test(test_new_fails_cleanly_without_memory),
      cmocka_unit_test(test_pump_session_protocol),
      cmocka_unit_test(test_socket_leaves_sigpipe_alone),
      cmocka_unit_test(test_tee_fifo_without_reader),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
