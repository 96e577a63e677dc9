/* src_stream.c: reading the current session's uv_stream_t (FIFO, stdin
 * pipe or tty, Unix and TCP sockets). libuv bounds the reads per loop turn
 * (it stops after a fixed number of reads per wake-up), so timers and other
 * handles keep running under a fast peer. One read buffer is reused: the
 * consumer borrows it only for the on_data call. The source waits for its
 * writer (el_src_cb_t.on_wait) once a read finds nothing more (EAGAIN), or
 * reads less than the buffer (libuv then polls before reading again), after
 * the bytes read were delivered: processing them is not waiting. */
#include "source_internal.h"

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *out) {
  el_src_t *s = h->data;
  (void)suggested;
  if (s->buf_busy) {
    /* libuv never nests reads; refuse (UV_ENOBUFS) rather than alias. */
    *out = uv_buf_init(NULL, 0);
    return;
  }
  s->buf_busy = 1;
  *out = uv_buf_init((char *)s->buf, (unsigned)s->buf_size);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *b) {
  el_src_t *s = st->data;
  s->buf_busy = 0;
  if (nread > 0) {
    el__src_deliver(s, (const uint8_t *)b->base, (size_t)nread);
    /* Less than asked for: libuv reads no more until the fd is readable
     * again, so everything written was read (and now processed). */
    if ((size_t)nread < s->buf_size && s->reading)
      el__src_waits(s, 1);
    return;
  }
  if (nread == 0) { /* EAGAIN: nothing more to read */
    el__src_waits(s, 1);
    return;
  }
  el__src_session_ended(s, nread == UV_EOF ? 0 : (int)nread);
}

int el__src_stream_start(el_src_t *s) {
  if (!s->h_open || s->reading)
    return 0;
  int rc = uv_read_start(&s->h.stream, alloc_cb, read_cb);
  if (rc == 0)
    s->reading = 1;
  return rc;
}

void el__src_stream_pause(el_src_t *s) {
  if (s->h_open && s->reading) {
    uv_read_stop(&s->h.stream);
    s->reading = 0;
  }
}

void el__src_stream_resume(el_src_t *s) {
  int rc = el__src_stream_start(s);
  if (rc < 0)
    el__src_session_ended(s, rc);
}
