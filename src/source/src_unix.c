/* src_unix.c: --eventlog-socket PATH, a Unix-domain stream socket served by
 * eventlog-socket (spec/eventlog-format.md §5.2-§5.3). One attempt = one
 * uv_pipe_connect; the core retries with backoff. */
#include <sys/stat.h>

#include "source_internal.h"

static void connect_cb(uv_connect_t *req, int status) {
  el_src_t *s = req->data;
  if (status == UV_ECANCELED || s->state != SRC_OPENING)
    return;  /* closing: the handle's close callback finishes the job */
  if (status < 0) {
    struct stat st;
    el__src_close_stream(s);
    /* connect(2) on a path that is not a socket says ECONNREFUSED: say
     * what the path is instead (still retried: a program may yet bind a
     * socket there once the file is gone) */
    if (status == UV_ECONNREFUSED && stat(s->path, &st) == 0 &&
        !S_ISSOCK(st.st_mode))
      status = UV_ENOTSOCK;
    el__src_open_failed(s, status);
    return;
  }
  el__src_opened(s);
}

static int unix_open(el_src_t *s) {
  int rc = uv_pipe_init(s->loop, &s->h.pipe, 0);
  if (rc < 0)
    return rc;
  s->h.handle.data = s;
  s->h_open = 1;
  s->connect_req.data = s;
  uv_pipe_connect(&s->connect_req, &s->h.pipe, s->path, connect_cb);
  return 0;
}

static int unix_close(el_src_t *s) { return el__src_close_stream(s); }

const el__src_vt_t el__src_unix_vt = {
    .name = "unix",
    .is_socket = 1,
    .open = unix_open,
    .pause = el__src_stream_pause,
    .resume = el__src_stream_resume,
    .close = unix_close,
};
