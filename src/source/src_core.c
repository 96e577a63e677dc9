/* src_core.c: the life of a source, shared by every variant: open attempts,
 * reconnection with exponential backoff, delivery with tee and counters,
 * flow control, the control-channel writer and two-step teardown.
 *
 * Reconnection (docs/sources.md, spec/reference-behaviour.md §1.5): the
 * first attempt is made at once; after a failed attempt the source waits
 * `delay` (initially --eventlog-socket-timeout) and multiplies it by
 * --eventlog-socket-exponent, capped at --eventlog-socket-max-delay. After a
 * session that delivered bytes ends, the delay and the failure count are
 * reset and a new attempt is made at once; a session that ended before
 * delivering any byte counts as a failed attempt (no busy loop against a
 * peer that accepts and closes). After --eventlog-socket-retries failures
 * in a row (-1 = never) the source gives up: on_end(last error). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "source_internal.h"

#define MIN_DELAY_S 0.01              /* floor of the backoff delay */
#define MAX_DELAY_S 86400.0           /* ceiling whatever the options say */
#define WRITE_QUEUE_MAX (1u << 20)    /* bytes pending on the control chan */
#define STREAM_READ_SIZE (64u << 10)
#define FILE_READ_SIZE \
  (256u << 10) /* fits the L2 cache with the decoder's
                                          state (docs/sources.md) */

static void attempt(el_src_t *s);

const char *el__src_strerror(int err) {
  if (err <= UV_EAI_ADDRFAMILY && err >= -3100)
    return uv_strerror(err);  /* getaddrinfo codes: known to libuv */
  return el_strerror(err);
}

/* {====== creation ======} */

static int dup_opt(const char *in, char **out) {
  *out = NULL;
  if (!in)
    return 0;
  *out = el_strdup(in);
  return *out ? 0 : EL_ENOMEM;
}

static const el__src_vt_t *pick_vt(el_src_kind_t kind) {
  switch (kind) {
  case EL_SRC_FILE:
    return &el__src_file_vt;
  case EL_SRC_STDIN:
    return &el__src_stdin_vt;
  case EL_SRC_UNIX:
    return &el__src_unix_vt;
  case EL_SRC_TCP:
    return &el__src_tcp_vt;
  default:
    return NULL;
  }
}

/* Open the tee file path (created or truncated); on failure say why,
 * naming it (under the source's name it would read as if the input could
 * not be opened), and return -1. */
static int tee_open(const char *path) {
  /* O_NONBLOCK: a FIFO as tee target must never stall the reader. */
  int fd =
      open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    el_log(EL_LOG_ERROR, "--eventlog-log-file %s: cannot open: %s%s", path,
           strerror(e), e == ENXIO ? " (a FIFO nobody reads)" : "");
  }
  return fd;
}

static int open_tee(el_src_t *s) {
  if (!s->log_file)
    return 0;
  if (el_same_file(s->path, s->log_file)) {
    /* Truncating the tee would destroy the input. */
    el_log(EL_LOG_ERROR, "--eventlog-log-file %s is the input itself",
           s->log_file);
    return EL_EINVAL;
  }
  int fd = tee_open(s->log_file);
  if (fd < 0)
    return EL_ETEE;
  el__tee_init(&s->tee, fd, s->log_file, &s->stats);
  return 0;
}

int el_src_tee_check(const char *path) {
  int fd = tee_open(path);
  if (fd < 0)
    return EL_ETEE;
  close(fd);
  return 0;
}

int el_src_new(uv_loop_t *loop, const el_src_opts_t *o,
               const el_src_cb_t *cb, el_src_t **out) {
  *out = NULL;
  el_src_opts_t chk = *o;
  if (!loop || el_src_opts_validate(&chk) != 0)
    return EL_EINVAL;
  if (o->kind == EL_SRC_UNIX &&
      strlen(o->path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return -ENAMETOOLONG;
  el_src_t *s = el_calloc(1, sizeof *s);
  if (!s)
    return EL_ENOMEM;
  s->loop = loop;
  s->opts = chk;
  s->fd = -1;
  el__tee_init(&s->tee, -1, NULL, &s->stats);
  if (cb)
    s->cb = *cb;
  s->vt = pick_vt(o->kind);
  s->delay_s = o->timeout_s;
  int rc = dup_opt(o->path, &s->path);
  if (!rc)
    rc = dup_opt(o->host, &s->host);
  if (!rc)
    rc = dup_opt(o->port, &s->port);
  if (!rc)
    rc = dup_opt(o->log_file, &s->log_file);
  if (!rc)
    rc = open_tee(s);
  if (rc)
    goto fail;
  s->opts.path = s->path;
  s->opts.host = s->host;
  s->opts.port = s->port;
  s->opts.log_file = s->log_file;
  *out = s;
  return 0;
fail:
  el_src_free(s);
  return rc;
}

/* {====== lifecycle ======} */

static void timer_cb(uv_timer_t *t) {
  el_src_t *s = t->data;
  if (s->state == SRC_WAITING)
    attempt(s);
  else if (s->state == SRC_OPEN && s->vt->resume)
    s->vt->resume(s);  /* --follow poll */
}

int el_src_start(el_src_t *s) {
  if (s->state != SRC_IDLE)
    return EL_EINVAL;
  size_t size = s->opts.read_size;
  struct stat st;
  /* stdin redirected from a file is read as a file; a pipe on stdin, grown
   * to 1 MiB (el__src_grow_pipe), in reads as large as a FIFO's */
  if (!size)
    size = s->opts.kind == EL_SRC_FILE ||
                   (s->opts.kind == EL_SRC_STDIN && fstat(0, &st) == 0 &&
                    (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)))
               ? FILE_READ_SIZE
               : STREAM_READ_SIZE;
  s->buf = el_malloc(size);
  if (!s->buf)
    return EL_ENOMEM;
  s->buf_size = size;
  if (s->opts.kind == EL_SRC_FILE || s->opts.kind == EL_SRC_STDIN)
    s->buf2 = el_malloc(size);  /* optional: no prefetch without it */
  int rc = uv_timer_init(s->loop, &s->timer);
  if (rc)
    return rc;
  s->timer.data = s;
  s->timer_open = 1;
  if (s->opts.kind == EL_SRC_FILE || s->opts.kind == EL_SRC_STDIN) {
    if ((rc = uv_idle_init(s->loop, &s->idle)))
      return rc;
    s->idle.data = s;
    s->idle_open = 1;
  }
  if (s->vt->is_socket) {
    char d[160];
    el_src_opts_describe(&s->opts, d, sizeof d);
    el_log(EL_LOG_INFO, "Waiting to connect on %s", d);
  }
  s->state = SRC_OPENING;
  attempt(s);
  return 0;
}

void el__src_poll_later(el_src_t *s, double seconds) {
  if (seconds > MAX_DELAY_S)
    seconds = MAX_DELAY_S;
  uv_timer_start(&s->timer, timer_cb, (uint64_t)(seconds * 1e3 + 0.5), 0);
}

static void really_free(el_src_t *s) {
  el__tee_session_end(&s->tee); /* a pending rotation: now */
  el__tee_close(&s->tee);
  el_free(s->buf);
  el_free(s->buf2);
  el_free(s->path);
  el_free(s->host);
  el_free(s->port);
  el_free(s->log_file);
  el_free(s);
}

/* Everything closed: report the end (or free, if el_src_free asked). */
static void maybe_finish(el_src_t *s) {
  if (s->state != SRC_CLOSING || s->pending_closes > 0 || s->fs_pending ||
      s->gai_pending)
    return;
  s->state = SRC_ENDED;
  if (s->free_on_close) {
    really_free(s);
    return;
  }
  if (s->cb.on_end)
    s->cb.on_end(s->cb.ud, s, s->end_status);  /* may free s: last use */
}

/* Begin the end: close the session and the timer, then on_end(status). */
static void begin_end(el_src_t *s, int status) {
  if (s->state == SRC_CLOSING || s->state == SRC_ENDED)
    return;
  int was_open = s->state == SRC_OPEN;
  s->state = SRC_CLOSING;
  s->end_status = status;
  if (s->vt && s->vt->close)
    s->vt->close(s);
  if (s->timer_open) {
    uv_timer_stop(&s->timer);
    s->timer_open = 0;
    s->pending_closes++;
    uv_close((uv_handle_t *)&s->timer, el__src_handle_closed);
  }
  if (s->idle_open) {
    uv_idle_stop(&s->idle);
    s->idle_open = 0;
    s->pending_closes++;
    uv_close((uv_handle_t *)&s->idle, el__src_handle_closed);
  }
  if (was_open && s->cb.on_disconnect)
    s->cb.on_disconnect(s->cb.ud, s, status == EL_ESTOPPED ? 0 : status);
  maybe_finish(s);
}

void el__src_check_finish(el_src_t *s) { maybe_finish(s); }

void el_src_stop(el_src_t *s) {
  if (!s)
    return;
  if (s->state == SRC_IDLE) {
    s->state = SRC_CLOSING;
    s->end_status = EL_ESTOPPED;
    maybe_finish(s);
    return;
  }
  begin_end(s, EL_ESTOPPED);
}

void el_src_free(el_src_t *s) {
  if (!s)
    return;
  if (s->state == SRC_IDLE || s->state == SRC_ENDED) {
    really_free(s);
    return;
  }
  s->free_on_close = 1;
  memset(&s->cb, 0, sizeof s->cb);  /* the consumer may be gone: no calls */
  if (s->state != SRC_CLOSING)
    begin_end(s, EL_ESTOPPED);
  else
    maybe_finish(s);
}

void el__src_handle_closed(uv_handle_t *h) {
  el_src_t *s = h->data;
  el_assert(s->pending_closes > 0 && "close count underflow");
  s->pending_closes--;
  if (s->state == SRC_CLOSING)
    maybe_finish(s);
  else if (s->state == SRC_WAITING && s->pending_closes == 0 &&
           !uv_is_active((uv_handle_t *)&s->timer))
    attempt(s);  /* immediate reconnect after the old handle closed */
}

int el__src_close_stream(el_src_t *s) {
  if (!s->h_open)
    return 0;
  s->h_open = 0;
  s->reading = 0;
  s->pending_closes++;
  uv_close(&s->h.handle, el__src_handle_closed);
  return 1;
}

/* {====== attempts and backoff ======} */

/* Sockets, and with --follow files and FIFOs (a FIFO with fifo_reopen
 * too): a failed open is retried (a file not created yet is waited for)
 * and an ended session reopened. */
static int reconnects(const el_src_t *s) {
  return s->vt->is_socket || s->opts.follow ||
         (s->opts.fifo_reopen && s->vt == &el__src_fifo_vt);
}

static void attempt(el_src_t *s) {
  s->state = SRC_OPENING;
  s->stats.attempts++;
  if (s->ever_connected || s->fails > 0)
    s->stats.reconnects++;
  if (s->vt->is_socket) {
    char d[160];
    el_src_opts_describe(&s->opts, d, sizeof d);
    el_log(EL_LOG_DEBUG, "Trying to connect on %s", d);
  }
  int rc = s->vt->open(s);
  if (rc < 0 && s->state == SRC_OPENING)
    el__src_open_failed(s, rc);
}

/* The delay before the next attempt, seconds (s->delay_s within the
 * bounds). */
static double next_delay(const el_src_t *s) {
  double d = s->delay_s;
  if (d > s->opts.max_delay_s)
    d = s->opts.max_delay_s;
  if (d > MAX_DELAY_S)
    d = MAX_DELAY_S;  /* keeps the millisecond count in range */
  if (d < MIN_DELAY_S)
    d = MIN_DELAY_S;
  return d;
}

static void schedule_retry(el_src_t *s) {
  double d = next_delay(s);
  s->delay_s = d * s->opts.exponent;
  if (s->delay_s > s->opts.max_delay_s)
    s->delay_s = s->opts.max_delay_s;
  el_log(EL_LOG_DEBUG, "Waiting %.2f milliseconds to retry...", d * 1e3);
  s->state = SRC_WAITING;
  uv_timer_start(&s->timer, timer_cb, (uint64_t)(d * 1e3 + 0.5), 0);
}

/* A failed open of a followed file (or FIFO), which is retried: said in
 * a file's words, not a socket's ("Failed to connect"). A missing file is
 * waited for (docs/sources.md "End of input"); giving_up: this was the
 * last attempt (--eventlog-socket-retries). */
static void log_file_failure(const el_src_t *s, const char *d, int err,
                             int giving_up) {
  int level = s->ever_connected ? EL_LOG_INFO : EL_LOG_ERROR;
  if (err == -ENOENT && giving_up && s->fails == 1)
    el_log(level,
           "%s: the file does not exist (not waited for: "
           "--eventlog-socket-retries 0)",
           d);
  else if (err == -ENOENT && giving_up)
    el_log(level,
           "%s: the file still does not exist after %d attempt%s: giving "
           "up (--eventlog-socket-retries %ld)",
           d, s->fails, s->fails == 1 ? "" : "s", s->opts.retries);
  else if (err == -ENOENT && s->fails == 1)
    el_log(EL_LOG_WARN,
           "%s: the file does not exist: waiting for it to be created "
           "(--follow; trying again in %g s)",
           d, next_delay(s));
  else if (giving_up)
    el_log(level, "cannot open %s: %s: giving up after %d attempt%s", d,
           el__src_strerror(err), s->fails, s->fails == 1 ? "" : "s");
  else
    el_log(s->fails == 1 ? EL_LOG_WARN : EL_LOG_DEBUG,
           "cannot open %s: %s (trying again in %g s)", d,
           el__src_strerror(err), next_delay(s));
}

/* The log level of a failed connect on a socket: the first of a series
 * is a warning (info once a session delivered bytes), the rest debug.
 * With opts.peer_exited (the caller started the program that listens),
 * failing is expected while that program starts or ends: debug, unless
 * the series has lasted opts.peer_grace_s while the program runs (a
 * warning, once: *late is set, for the message); after the program
 * exited, debug. */
static int socket_fail_level(el_src_t *s, int *late) {
  uint64_t now = uv_now(s->loop);
  *late = 0;
  if (s->fails == 1) {
    s->fail_since_ms = now;
    s->fail_warned = 0;
  }
  /* After a session, the first failure is most likely the program going
   * away (or the reconnect meeting it while it exits): said, not warned
   * about (h74: "closed before any data" read as lost data). */
  if (!s->opts.peer_exited)
    return s->fails != 1 ? EL_LOG_DEBUG
           : s->ever_fed ? EL_LOG_INFO
                         : EL_LOG_WARN;
  if (*s->opts.peer_exited || s->fail_warned ||
      (double)(now - s->fail_since_ms) < s->opts.peer_grace_s * 1e3)
    return EL_LOG_DEBUG;
  s->fail_warned = 1;
  *late = 1;
  return EL_LOG_WARN;
}

void el__src_open_failed(el_src_t *s, int err) {
  if (s->state == SRC_CLOSING || s->state == SRC_ENDED)
    return;
  s->last_error = err;
  s->stats.failures++;
  s->fails++;
  char d[160];
  el_src_opts_describe(&s->opts, d, sizeof d);
  if (!reconnects(s)) {
    el_log(EL_LOG_ERROR, "cannot open %s: %s", d, el__src_strerror(err));
    begin_end(s, err);
    return;
  }
  int giving_up = s->opts.retries >= 0 && s->fails > s->opts.retries;
  if (!s->vt->is_socket) {
    log_file_failure(s, d, err, giving_up);
  } else {
    /* The first failure of a series is worth a warning; the rest is
     * noise. A connection that was accepted and closed before any data (a
     * server going away with us in its queue) is not a failure to
     * connect. */
    int late;
    int level = socket_fail_level(s, &late);
    if (late)
      el_log(level,
             "Failed to connect on %s: %s, for %.1f s (%d attempts) while "
             "the program runs (retrying)",
             d, el__src_strerror(err),
             (uv_now(s->loop) - s->fail_since_ms) / 1e3, s->fails);
    else
      el_log(level,
             s->closed_empty ? "Connection on %s closed before any data: %s%s%s"
                             : "Failed to connect on %s: %s%s%s",
             d, el__src_strerror(err),
             /* a file or folder there (h59): eventlog-socket unlinks the
              * path before it binds, so a retry can still succeed */
             err == UV_ENOTSOCK ? " (the path exists but is not a socket; "
                                  "a program using eventlog-socket "
                                  "replaces it when it starts)"
                                : "",
             s->fails == 1 && s->opts.retries != 0 ? " (retrying)" : "");
    /* After sessions this is the normal end (the program went away). */
    if (giving_up)
      el_log(s->ever_connected ? EL_LOG_INFO : EL_LOG_ERROR,
             "giving up on %s after %d failed attempts: %s", d, s->fails,
             el__src_strerror(err));
  }
  if (giving_up) {
    begin_end(s, err);
    return;
  }
  schedule_retry(s);
}

static uint64_t unix_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Remember what a regular file was when opened: its bytes up to that size
 * existed by its modification time. */
static void note_file(el_src_t *s) {
  struct stat st;
  s->file_regular = 0;
  if (s->fd < 0 || fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode))
    return;
  s->file_regular = 1;
  /* On the loop thread (src_file.c): tmpfs and ramfs hold the file in
   * memory (and refuse RWF_NOWAIT); elsewhere only what the page cache
   * holds, until preadv2 says it cannot. */
  struct statfs fs;
  s->nowait = fstatfs(s->fd, &fs) == 0 &&
                      (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)
                  ? NOWAIT_MEMORY
                  : NOWAIT_CACHED;
  s->file_size0 = st.st_size;
  s->file_mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
                     (uint64_t)st.st_mtim.tv_nsec;
}

void el__src_grow_pipe(el_src_t *s, int fd) {
  struct stat st;
  s->stats.pipe_size = 0;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
    return;
  int have = fcntl(fd, F_GETPIPE_SZ);
  if (have < 0)
    return;
  /* EPERM: above /proc/sys/fs/pipe-max-size, or the user's pipe memory
   * (pipe-user-pages-soft) used up; EBUSY: never when growing */
  for (int want = (int)PIPE_GROW_SIZE; want > have; want /= 2) {
    int got = fcntl(fd, F_SETPIPE_SZ, want);
    if (got >= 0) {
      have = got;
      break;
    }
  }
  s->stats.pipe_size = (uint64_t)have;
}

void el__src_opened(el_src_t *s) {
  if (s->state == SRC_CLOSING || s->state == SRC_ENDED)
    return;
  note_file(s);
  s->state = SRC_OPEN;
  s->ever_connected = 1;
  s->session_bytes = 0;
  s->stats.connections++;
  if (s->vt->is_socket) {
    char d[160];
    el_src_opts_describe(&s->opts, d, sizeof d);
    el_log(EL_LOG_DEBUG, "Connected on %s", d);
  }
  if (s->cb.on_connect)
    s->cb.on_connect(s->cb.ud, s);
  if (s->state == SRC_OPEN && !s->paused && s->vt->resume)
    s->vt->resume(s);
}

void el__src_session_ended(el_src_t *s, int err) {
  if (s->state != SRC_OPEN)
    return;
  el__tee_session_end(&s->tee);
  el__src_waits(s, 0);
  if (!reconnects(s)) {
    begin_end(s, err);
    return;
  }
  int had_bytes = s->session_bytes;
  s->state = SRC_WAITING;
  s->vt->close(s);
  if (s->cb.on_disconnect)
    s->cb.on_disconnect(s->cb.ud, s, err);
  if (s->state != SRC_WAITING)
    return;  /* stopped from on_disconnect */
  if (!had_bytes) {
    /* Accepted and closed without data: back off like a failure. */
    s->closed_empty = 1;
    el__src_open_failed(s, err ? err : EL_ECLOSED);
    s->closed_empty = 0;
    return;
  }
  s->fails = 0;
  s->delay_s = s->opts.timeout_s;
  if (s->pending_closes == 0)
    attempt(s);
  /* else el__src_handle_closed makes the attempt */
}

/* {====== delivery ======} */

void el__src_waits(el_src_t *s, int waiting) {
  waiting = waiting && s->state == SRC_OPEN && !s->paused;
  if (s->waiting == waiting)
    return;
  s->waiting = waiting;
  if (s->cb.on_wait)
    s->cb.on_wait(s->cb.ud, s, waiting);
}

void el__src_deliver(el_src_t *s, const uint8_t *buf, size_t len) {
  if (len == 0)
    return;
  el__src_waits(s, 0);
  /* A regular file's bytes present when it was opened: recorded; the rest
   * (a followed file's growth, streams): received now, live. */
  if (s->file_regular && s->file_off - (int64_t)len < s->file_size0) {
    s->recv_by = s->file_mtime_ns;
    s->recv_live = s->opts.follow;
  } else {
    s->recv_by = unix_now_ns();
    s->recv_live = 1;
  }
  s->stats.bytes += len;
  s->session_bytes = 1;
  s->ever_fed = 1;
  if (!s->discarding)
    el__tee_write(&s->tee, buf, len);
  if (s->cb.on_data)
    s->cb.on_data(s->cb.ud, s, buf, len);
}

int el_src_reopen_tee(el_src_t *s) {
  if (!s->log_file || s->tee.fd < 0)
    return 0;
  int fd = open(s->log_file,
                O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    el_log(EL_LOG_ERROR, "--eventlog-log-file %s: cannot reopen: %s; "
           "writing on to the file already open", s->log_file, strerror(e));
    return -e;
  }
  struct stat a, b;
  if (fstat(fd, &a) == 0 && fstat(s->tee.fd, &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino) {
    /* Not moved away: rotating would split the file in two sessions. */
    close(fd);
    el_log(EL_LOG_INFO,
           "--eventlog-log-file %s reopened: the same file, "
           "writing on",
           s->log_file);
    return 0;
  }
  el__tee_rotate(&s->tee, fd);
  if (el__tee_pending(&s->tee))
    el_log(EL_LOG_INFO,
           "--eventlog-log-file %s reopened: the old file "
           "takes the bytes up to the end of the block or event in "
           "progress",
           s->log_file);
  else
    el_log(EL_LOG_INFO, "--eventlog-log-file %s reopened", s->log_file);
  return 0;
}

/* {====== flow control, control channel, accessors ======} */

void el_src_received(const el_src_t *s, uint64_t *by_unix_ns, int *live) {
  *by_unix_ns = s->recv_by;
  *live = s->recv_live;
}

int el_src_recorded_fd(const el_src_t *s) {
  if (s->state != SRC_OPEN || !s->file_regular || s->opts.follow)
    return -1;
  return s->fd;
}

void el_src_pause(el_src_t *s) {
  if (s->paused)
    return;
  el__src_waits(s, 0); /* bytes may pile up unread: no longer waiting */
  s->paused = 1;
  if (s->state == SRC_OPEN && s->vt->pause)
    s->vt->pause(s);
}

void el_src_resume(el_src_t *s) {
  if (!s->paused)
    return;
  s->paused = 0;
  if (s->state == SRC_OPEN && s->vt->resume)
    s->vt->resume(s);
}

int el_src_paused(const el_src_t *s) { return s->paused; }

int el_src_connected(const el_src_t *s) { return s->state == SRC_OPEN; }

void el_src_discard(el_src_t *s) {
  s->discarding = 1;
  el__tee_session_end(&s->tee); /* a pending rotation: now */
}

int el_src_drainable(const el_src_t *s) {
  if (s->state != SRC_OPEN || !s->h_open)
    return 0;
  if (s->vt == &el__src_fifo_vt)
    return 1;
  return s->vt == &el__src_stdin_vt && s->h.handle.type == UV_NAMED_PIPE;
}

const el_src_stats_t *el_src_stats(const el_src_t *s) { return &s->stats; }

const el_src_opts_t *el_src_options(const el_src_t *s) { return &s->opts; }

static void write_cb(uv_write_t *req, int status) {
  el__src_wreq_t *w = (el__src_wreq_t *)req;
  el_src_t *s = w->src;
  s->write_queued -= w->len;
  if (status < 0) {
    s->stats.send_dropped += w->len;
    s->stats.sent_bytes -= w->len;
    el_log(EL_LOG_DEBUG, "control write failed: %s",
           el__src_strerror(status));
  }
  el_free(w);
}

int el_src_write(el_src_t *s, const uint8_t *buf, size_t len) {
  if (!s->vt->is_socket || s->state != SRC_OPEN || !s->h_open) {
    s->stats.send_dropped += len;
    return EL_ECLOSED;
  }
  if (len == 0)
    return 0;
  size_t done = 0;
  if (s->write_queued == 0) {
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int n = uv_try_write(&s->h.stream, &b, 1);
    if (n > 0)
      done = (size_t)n;
    else if (n < 0 && n != UV_EAGAIN) {
      s->stats.send_dropped += len;
      return n;
    }
  }
  size_t rest = len - done;
  if (rest == 0) {
    s->stats.sent_bytes += len;
    return 0;
  }
  if (s->write_queued + rest > WRITE_QUEUE_MAX) {
    /* Nothing of a partly written message may be dropped silently. */
    s->stats.sent_bytes += done;
    s->stats.send_dropped += rest;
    return EL_ENOMEM;
  }
  el__src_wreq_t *w = el_malloc(sizeof *w + rest);
  if (!w) {
    s->stats.sent_bytes += done;
    s->stats.send_dropped += rest;
    return EL_ENOMEM;
  }
  w->src = s;
  w->len = rest;
  memcpy(w->data, buf + done, rest);
  uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)rest);
  int rc = uv_write(&w->req, &s->h.stream, &b, 1, write_cb);
  if (rc < 0) {
    el_free(w);
    s->stats.sent_bytes += done;
    s->stats.send_dropped += rest;
    return rc;
  }
  s->write_queued += rest;
  s->stats.sent_bytes += len;
  return 0;
}
