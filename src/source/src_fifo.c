/* src_fifo.c: --eventlog-file PATH when PATH is a named FIFO (e.g. the
 * program runs with +RTS -ol<fifo>). The FIFO is opened non-blocking, so
 * the open never waits for a writer; libuv reads it as a pipe stream. The
 * session ends when the last writer closes (EOF). With --follow the FIFO is
 * opened again after EOF and each new writer is a new session. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "source_internal.h"

static int fifo_open(el_src_t *s) {
  int fd = open(s->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = uv_pipe_init(s->loop, &s->h.pipe, 0);
  if (rc < 0) {
    close(fd);
    return rc;
  }
  s->h.handle.data = s;
  s->h_open = 1;
  rc = uv_pipe_open(&s->h.pipe, fd);
  if (rc < 0) {
    close(fd);
    el__src_close_stream(s);
    return rc;
  }
  el__src_opened(s);
  return 0;
}

static int fifo_close(el_src_t *s) { return el__src_close_stream(s); }

const el__src_vt_t el__src_fifo_vt = {
    .name = "fifo",
    .is_socket = 0,
    .open = fifo_open,
    .pause = el__src_stream_pause,
    .resume = el__src_stream_resume,
    .close = fifo_close,
};
