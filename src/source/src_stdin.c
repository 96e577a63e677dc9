/* src_stdin.c: --eventlog-stdin. What fd 0 is decides how it is read: a
 * pipe, FIFO or Unix socket is a libuv pipe stream, a terminal a tty
 * stream, a TCP socket a TCP stream, and a regular file (`< file`) or a
 * character device is read like --eventlog-file (src_file.c: cached bytes
 * on the loop thread, the rest through the thread pool).
 * The end of input is EOF. libuv makes fd 0 non-blocking; its flags are
 * restored when the source closes. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "source_internal.h"

static int open_stream(el_src_t *s, uv_handle_type t) {
  int rc;
  if (t == UV_TTY)
    rc = uv_tty_init(s->loop, &s->h.tty, 0, 1);
  else if (t == UV_TCP)
    rc = uv_tcp_init(s->loop, &s->h.tcp);
  else
    rc = uv_pipe_init(s->loop, &s->h.pipe, 0);
  if (rc < 0)
    return rc;
  s->h.handle.data = s;
  s->h_open = 1;
  if (t == UV_TCP)
    rc = uv_tcp_open(&s->h.tcp, 0);
  else if (t != UV_TTY)
    rc = uv_pipe_open(&s->h.pipe, 0);
  if (rc < 0) {
    el__src_close_stream(s);
    return rc;
  }
  return 0;
}

static int stdin_open(el_src_t *s) {
  uv_handle_type t = uv_guess_handle(0);
  s->stdin_flags = fcntl(0, F_GETFL);
  if (t == UV_UNKNOWN_HANDLE || s->stdin_flags < 0)
    return -EBADF;
  if (t == UV_FILE) {
    s->fd = 0;
    s->fd_owned = 0;
    s->file_off = 0;
  } else {
    int rc = open_stream(s, t);
    if (rc < 0)
      return rc;
    el__src_grow_pipe(s, 0); /* a pipe or FIFO: `prog | eventlog-live` */
  }
  el__src_opened(s);
  return 0;
}

static void stdin_pause(el_src_t *s) {
  if (s->h_open)
    el__src_stream_pause(s);
}

static void stdin_resume(el_src_t *s) {
  if (s->h_open)
    el__src_stream_resume(s);
  else
    el__src_file_read_next(s);
}

static int stdin_close(el_src_t *s) {
  if (s->h_open) {
    if (s->stdin_flags >= 0)
      fcntl(0, F_SETFL, s->stdin_flags);
    return el__src_close_stream(s);
  }
  return el__src_file_close(s);
}

const el__src_vt_t el__src_stdin_vt = {
    .name = "stdin",
    .is_socket = 0,
    .open = stdin_open,
    .pause = stdin_pause,
    .resume = stdin_resume,
    .close = stdin_close,
};
