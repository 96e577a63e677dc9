/* src_file.c: --eventlog-file PATH on a regular file (or a character
 * device), read in chunks of 256 KiB. What the page cache holds is read on
 * the loop thread, one chunk per loop turn (read_inline: preadv2 with
 * RWF_NOWAIT, which never waits for the disk); the rest, and every read of
 * a character device, through libuv's thread pool, so the loop never
 * blocks on the disk. Through the thread pool, two buffers alternate so
 * the next chunk is read while the consumer works on the current one; on
 * the loop thread the chunk just read is still in this core's cache when
 * it is decoded, which makes the daemon's whole run 15-20% cheaper in CPU
 * (docs/performance.md). With --follow, end of file is not the end of
 * input: the file is polled every 100 ms for new bytes (like tail -f); if
 * it shrinks it was truncated and is read again from offset 0 as a new
 * session. A path naming a FIFO is handed to src_fifo.c. */
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source_internal.h"

void el__src_file_close_fd(el_src_t *s) {
  if (s->fd >= 0 && s->fd_owned)
    close(s->fd);
  s->fd = -1;
  s->fd_owned = 0;
}

/* At end of file: the end of input, or (--follow) wait for growth. */
static void at_eof(el_src_t *s) {
  if (!s->opts.follow) {
    el__src_session_ended(s, 0);
    return;
  }
  struct stat st;
  if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_size < s->file_off) {
    el_log(EL_LOG_WARN, "%s: file truncated; reading again from the start",
           s->path ? s->path : "stdin");
    if (lseek(s->fd, 0, SEEK_SET) == 0) {
      s->file_off = 0;
      if (s->cb.on_disconnect)
        s->cb.on_disconnect(s->cb.ud, s, 0);
      if (s->state != SRC_OPEN)
        return;
      s->stats.connections++;
      s->session_bytes = 0;
      if (s->cb.on_connect)
        s->cb.on_connect(s->cb.ud, s);
      if (s->state != SRC_OPEN)
        return;
      el__src_file_read_next(s);
      return;
    }
  }
  el__src_waits(s, 1); /* read up to the writer: wait for growth */
  el__src_poll_later(s, s->opts.follow_poll_s);
}

static void issue_read(el_src_t *s);

/* Hand the completed read to the consumer. With a second buffer the next
 * read is issued first, so the thread pool reads while the consumer
 * decodes (the two buffers alternate). */
static void process_ready(el_src_t *s) {
  ssize_t n = s->ready_n;
  uint8_t *b = s->ready_buf;
  s->ready = 0;
  if (n > 0) {
    s->file_off += n;
    int prefetch = s->buf2 != NULL;
    if (prefetch)
      issue_read(s);
    el__src_deliver(s, b, (size_t)n);
    if (!prefetch)
      el__src_file_read_next(s);
  } else if (n == 0) {
    at_eof(s);
  } else {
    el__src_session_ended(s, (int)n);
  }
}

/* A read into the buffer being filled completed with n (bytes, 0 at end
 * of file, or a negative libuv error): deliver it, or keep it while
 * paused. */
static void read_done(el_src_t *s, ssize_t n) {
  s->ready = 1;
  s->ready_n = n;
  s->ready_buf = s->fill ? s->buf2 : s->buf;
  if (s->buf2)
    s->fill ^= 1;
  if (!s->paused)
    process_ready(s);
  /* else kept until el_src_resume */
}

static void fs_read_cb(uv_fs_t *req) {
  el_src_t *s = req->data;
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  s->fs_pending = 0;
  if (s->state != SRC_OPEN) {
    if (s->state == SRC_CLOSING) {
      el__src_file_close_fd(s);  /* deferred until the read finished */
      el__src_check_finish(s);
    }
    return;
  }
  read_done(s, n);
}

static void pool_read(el_src_t *s);

/* The idle callback armed by issue_read: the next chunk read on the loop
 * thread if the page cache holds its first bytes (a short read when it
 * holds only some), else through the thread pool. preadv2 at offset -1
 * reads from the file position and moves it, as read(2) and the thread
 * pool's reads do. A file system without RWF_NOWAIT (EOPNOTSUPP) is read
 * through the thread pool from then on, except tmpfs and ramfs (which
 * refuse it too), read with read(2): their files are in memory
 * (NOWAIT_MEMORY, src_core.c note_file). */
static void read_inline(uv_idle_t *idle) {
  el_src_t *s = idle->data;
  uv_idle_stop(idle);
  if (s->fs_pending || s->ready || s->state != SRC_OPEN || s->fd < 0)
    return;
  uint8_t *into = s->fill ? s->buf2 : s->buf;
  struct iovec v = {.iov_base = into, .iov_len = s->buf_size};
  ssize_t n;
  do
    n = s->nowait == NOWAIT_MEMORY ? read(s->fd, into, s->buf_size)
                                   : preadv2(s->fd, &v, 1, -1, RWF_NOWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno != EAGAIN) {
    if (errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS) {
      read_done(s, -errno); /* a read error, as the thread pool's */
      return;
    }
    s->nowait = 0;
  }
  if (n < 0)
    pool_read(s); /* not cached: the thread pool waits for the disk */
  else
    read_done(s, n);
}

/* Start reading the next chunk: on the loop thread at its next turn
 * (read_inline), so that each chunk is a turn of its own and timers,
 * signals and servers run between chunks; through the thread pool for a
 * file without RWF_NOWAIT. */
static void issue_read(el_src_t *s) {
  if (s->fs_pending || s->state != SRC_OPEN || s->fd < 0)
    return;
  if (s->nowait && s->idle_open) {
    uv_idle_start(&s->idle, read_inline);
    return;
  }
  pool_read(s);
}

static void pool_read(el_src_t *s) {
  s->stats.pool_reads++;
  uint8_t *into = s->fill ? s->buf2 : s->buf;
  uv_buf_t b = uv_buf_init((char *)into, (unsigned)s->buf_size);
  s->fs_req.data = s;
  int rc = uv_fs_read(s->loop, &s->fs_req, s->fd, &b, 1, -1, fs_read_cb);
  if (rc < 0) {
    el__src_session_ended(s, rc);
    return;
  }
  s->fs_pending = 1;
}

void el__src_file_read_next(el_src_t *s) {
  if (s->state != SRC_OPEN || s->paused || s->fd < 0)
    return;
  uv_timer_stop(&s->timer);
  if (s->ready)
    process_ready(s);  /* a read completed while paused */
  else
    issue_read(s);
}

static void file_pause(el_src_t *s) {
  (void)s;  /* el__src_file_read_next checks s->paused */
}

int el__src_file_close(el_src_t *s) {
  if (s->fs_pending)
    uv_cancel((uv_req_t *)&s->fs_req);  /* fd closed in fs_read_cb */
  else
    el__src_file_close_fd(s);
  return 0;
}

static int file_open(el_src_t *s) {
  struct stat st;
  if (stat(s->path, &st) < 0)
    return -errno;
  if (S_ISFIFO(st.st_mode)) {
    s->vt = &el__src_fifo_vt;
    return s->vt->open(s);
  }
  if (S_ISDIR(st.st_mode))
    return -EISDIR;
  if (S_ISSOCK(st.st_mode)) {
    el_log(EL_LOG_ERROR, "%s is a socket: use --eventlog-socket", s->path);
    return -ENXIO;
  }
  int fd = open(s->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  s->fd = fd;
  s->fd_owned = 1;
  s->file_off = 0;
  el__src_opened(s);
  return 0;
}

const el__src_vt_t el__src_file_vt = {
    .name = "file",
    .is_socket = 0,
    .open = file_open,
    .pause = file_pause,
    .resume = el__src_file_read_next,
    .close = el__src_file_close,
};
