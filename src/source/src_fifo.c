/* src_fifo.c: --eventlog-file PATH when PATH is a named FIFO (e.g. the
 * program runs with +RTS -ol<fifo>).
 *
 * The FIFO is opened for reading with a *blocking* open(2) on libuv's
 * thread pool, which returns once a writer has the FIFO open: whichever of
 * the program and the daemon starts first, the session begins when both
 * ends are attached. (A non-blocking open would see EOF at once when the
 * program has not opened its end yet, and closing and reopening the read
 * end under a writer would kill the program with SIGPIPE.) The open fd is
 * then read as a libuv pipe stream. The session ends when the last writer
 * closes (EOF). With --follow the FIFO is opened again after EOF and each
 * new writer is a new session.
 *
 * Stopping while the open still waits for a writer: we open the FIFO for
 * writing ourselves (non-blocking, which succeeds because our reader is
 * registered) and close it at once; the blocked open returns, and the
 * callback closes the fd it got. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "source_internal.h"

static void fifo_opened(uv_fs_t *req) {
  el_src_t *s = req->data;
  int fd = (int)req->result;
  uv_fs_req_cleanup(req);
  s->fs_pending = 0;
  if (s->state != SRC_OPENING && s->state != SRC_WAITING) {
    if (fd >= 0)
      close(fd);
    el__src_check_finish(s);
    return;
  }
  if (fd < 0) {
    el__src_open_failed(s, fd);
    return;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  el__src_grow_pipe(s, fd); /* before the writer fills 64 KiB and waits */
  int rc = uv_pipe_init(s->loop, &s->h.pipe, 0);
  if (rc < 0) {
    close(fd);
    el__src_open_failed(s, rc);
    return;
  }
  s->h.handle.data = s;
  s->h_open = 1;
  rc = uv_pipe_open(&s->h.pipe, fd);
  if (rc < 0) {
    close(fd);
    el__src_close_stream(s);
    el__src_open_failed(s, rc);
    return;
  }
  el__src_opened(s);
}

static int fifo_open(el_src_t *s) {
  s->fs_req.data = s;
  int rc = uv_fs_open(s->loop, &s->fs_req, s->path, O_RDONLY | O_CLOEXEC, 0,
                      fifo_opened);
  if (rc < 0)
    return rc;
  s->fs_pending = 1;
  return 0;
}

static int fifo_close(el_src_t *s) {
  if (s->fs_pending) {
    /* Release the open blocked waiting for a writer (see the top). */
    if (uv_cancel((uv_req_t *)&s->fs_req) != 0) {
      /* The worker may not have entered open(2) yet (ENXIO: no reader):
       * retry briefly so the teardown never waits for a writer. */
      for (int i = 0; i < 100; i++) {
        int w = open(s->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (w >= 0) {
          close(w);
          break;
        }
        if (errno != ENXIO)
          break;
        usleep(2000);
      }
    }
  }
  return el__src_close_stream(s);
}

const el__src_vt_t el__src_fifo_vt = {
    .name = "fifo",
    .is_socket = 0,
    .open = fifo_open,
    .pause = el__src_stream_pause,
    .resume = el__src_stream_resume,
    .close = fifo_close,
};
