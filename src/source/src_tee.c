/* src_tee.c: the --eventlog-log-file tee and its rotation at a cut point
 * (src_tee.h says where the cut goes and why).
 *
 * The framing is the decoder's loop at its cheapest (spec §1.6): per event
 * the type id, the variable size when declared variable, and for a
 * BLOCK_MARKER its block_size; the payload is skipped, never read. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src_tee.h"

enum { TEE_PRE = 0, TEE_HDR, TEE_DATA, TEE_LOST };

#define HDR_MAX (1u << 20)    /* a longer header is not believed */
#define BLOCK_MARKER 18       /* spec §1.5 */
#define BLOCK_MAX (64u << 20) /* GHC's blocks are <= 2 MiB */
#define MARKER_LEN 24         /* 2 + 8 + 14 */

/* write(2) that cannot raise SIGPIPE (a FIFO as tee whose reader went
 * away) and leaves the process's signal dispositions alone: SIGPIPE is
 * blocked in this thread for the call, and the one the write raised is
 * taken off the thread's pending set before the old mask returns. */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigemptyset(&pending);
  sigpending(&pending);
  int was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t n = write(fd, buf, len);
  int e = errno;
  if (n < 0 && e == EPIPE && !was_pending) {
    const struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return n;
}

static void put(el__tee_t *t, const uint8_t *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write_nosigpipe(t->fd, buf, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (t->stats->tee_errors == 0)
        el_log(EL_LOG_ERROR,
               "--eventlog-log-file %s: %s; bytes not teed "
               "are counted",
               t->path, n < 0 ? strerror(errno) : "short write");
      t->stats->tee_errors += len;
      return;
    }
    t->stats->tee_bytes += (uint64_t)n;
    buf += n;
    len -= (size_t)n;
  }
}

void el__tee_init(el__tee_t *t, int fd, const char *path,
                  el_src_stats_t *stats) {
  memset(t, 0, sizeof *t);
  t->fd = fd;
  t->next_fd = -1;
  t->path = path;
  t->stats = stats;
}

/* {====== framing ======} */

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static int is_marker(const uint8_t *p, const char *m) {
  return memcmp(p, m, 4) == 0;
}

/* Parse the header in h[0..n) (from "hdrb"): its length through "datb",
 * 0 when more bytes are needed, -1 when malformed (spec §1.2-§1.3). With
 * t: the type table is filled. */
static long parse_header(const uint8_t *h, size_t n, el__tee_t *t) {
  size_t i = 8; /* "hdrb" "hetb" */
  if (n < i)
    return 0;
  if (!is_marker(h + 4, "hetb"))
    return -1;
  for (;;) {
    if (n - i < 4)
      return 0;
    if (is_marker(h + i, "hete"))
      break;
    if (!is_marker(h + i, "etb\0"))
      return -1;
    if (n - i < 12)
      return 0;
    unsigned id = (unsigned)h[i + 4] << 8 | h[i + 5];
    unsigned size = (unsigned)h[i + 6] << 8 | h[i + 7];
    uint64_t desc = be32(h + i + 8);
    if (n - i - 12 < desc + 4)
      return desc > HDR_MAX ? -1 : 0;
    size_t j = i + 12 + (size_t)desc;
    uint64_t extra = be32(h + j);
    if (n - j - 4 < extra + 4)
      return extra > HDR_MAX ? -1 : 0;
    j += 4 + (size_t)extra;
    if (!is_marker(h + j, "ete\0"))
      return -1;
    if (t) {
      t->size[id] = (uint16_t)size;
      t->decl[id >> 3] |= (uint8_t)(1u << (id & 7));
    }
    i = j + 4;
  }
  if (n - i < 12)
    return 0;
  if (!is_marker(h + i + 4, "hdre") || !is_marker(h + i + 8, "datb"))
    return -1;
  return (long)(i + 12);
}

static void lose(el__tee_t *t) { t->state = TEE_LOST; }

/* TEE_PRE: one byte towards "hdrb" ("hdrb" has no border: a mismatch
 * restarts at 'h' or nothing). */
static size_t pre(el__tee_t *t, const uint8_t *p) {
  static const char hdrb[4] = {'h', 'd', 'r', 'b'};
  if (*p == (uint8_t)hdrb[t->match])
    t->match++;
  else
    t->match = *p == 'h';
  if (t->match == 4) {
    t->match = 0;
    t->state = TEE_HDR;
    t->hdr_ok = 0;
    t->hdr_len = 0;
  }
  return 1;
}

static int hdr_room(el__tee_t *t, size_t need) {
  if (need <= t->hdr_cap)
    return 1;
  size_t cap = t->hdr_cap ? t->hdr_cap : 4096;
  while (cap < need)
    cap *= 2;
  uint8_t *h = el_realloc(t->hdr, cap);
  if (!h)
    return 0;
  t->hdr = h;
  t->hdr_cap = cap;
  return 1;
}

/* TEE_HDR: take bytes into the header; returns the bytes consumed (those
 * past its "datb" are left to the data section). */
static size_t hdr(el__tee_t *t, const uint8_t *p, size_t n) {
  if (t->hdr_len == 0) {
    if (!hdr_room(t, 4)) {
      lose(t);
      return 0;
    }
    memcpy(t->hdr, "hdrb", 4);
    t->hdr_len = 4;
  }
  size_t take = n;
  if (take > HDR_MAX - t->hdr_len)
    take = HDR_MAX - t->hdr_len;
  if (!hdr_room(t, t->hdr_len + take) ||
      (!t->size && !(t->size = el_malloc(65536 * sizeof *t->size))) ||
      (!t->decl && !(t->decl = el_malloc(8192)))) {
    lose(t);
    return n;
  }
  memcpy(t->hdr + t->hdr_len, p, take);
  long len = parse_header(t->hdr, t->hdr_len + take, NULL);
  if (len == 0 && t->hdr_len + take < HDR_MAX) {
    t->hdr_len += take;
    return take;
  }
  if (len <= 0) {
    t->hdr_len = 0;
    lose(t);
    return take;
  }
  memset(t->decl, 0, 8192);
  parse_header(t->hdr, (size_t)len, t);
  size_t used = (size_t)len - t->hdr_len;
  t->hdr_len = (size_t)len;
  t->hdr_ok = 1;
  t->state = TEE_DATA;
  t->pos = t->block_end = t->skip = 0;
  t->head_len = 0;
  return used;
}

/* The head bytes the event starting with type id needs before its length
 * is known: 10 (type, time), 12 (variable size), 14 (block_size). */
static unsigned head_need(const el__tee_t *t, unsigned id) {
  if (t->size[id] == 0xFFFF)
    return 12;
  return id == BLOCK_MARKER && t->size[id] >= 4 ? 14 : 10;
}

/* The head is complete: set skip to the rest of the event and, for a
 * block marker, the block's end. */
static void head_done(el__tee_t *t, unsigned id) {
  uint64_t start = t->pos - t->head_len;
  uint64_t len = t->size[id] == 0xFFFF
                     ? 12u + ((unsigned)t->head[10] << 8 | t->head[11])
                     : 10u + t->size[id];
  if (id == BLOCK_MARKER && t->head_len == 14) {
    uint32_t bs = be32(t->head + 10);
    if (bs >= MARKER_LEN && bs <= BLOCK_MAX)
      t->block_end = start + bs;
  }
  t->skip = len - t->head_len;
  t->head_len = 0;
}

/* At an event boundary: pass the events whose head is in p[0..n) (the
 * common case, no copy; a capability's block at once), stopping before a head cut by the end of p,
 * DATA_END or an undeclared type (left to data()); with stop, after one
 * event. An event longer than what is left sets skip. */
static size_t run(el__tee_t *t, const uint8_t *p, size_t n, int stop) {
  size_t i = 0;
  while (n - i >= sizeof t->head) {
    unsigned id = (unsigned)p[i] << 8 | p[i + 1];
    if (id == 0xFFFF || !(t->decl[id >> 3] & (1u << (id & 7))))
      break;
    unsigned sz = t->size[id];
    uint64_t len =
        sz == 0xFFFF ? 12u + ((unsigned)p[i + 10] << 8 | p[i + 11]) : 10u + sz;
    if (id == BLOCK_MARKER && sz >= 4) {
      uint32_t bs = be32(p + i + 10);
      if (bs >= MARKER_LEN && bs <= BLOCK_MAX) {
        t->block_end = t->pos + bs;
        /* A capability's block (not the global one, cap 0xFFFF, which
         * may hold DATA_END, spec §1.5) is passed whole: no cut inside. */
        if (sz >= 14 && n - i >= MARKER_LEN &&
            (p[i + 22] != 0xFF || p[i + 23] != 0xFF))
          len = bs;
      }
    }
    if (len > n - i) {
      t->skip = len - (n - i);
      t->pos += n - i;
      return n;
    }
    i += (size_t)len;
    t->pos += len;
    if (stop)
      break;
  }
  return i;
}

/* TEE_DATA: frame bytes; with stop, return at each event boundary. */
static size_t data(el__tee_t *t, const uint8_t *p, size_t n, int stop) {
  size_t i = 0;
  while (i < n) {
    if (t->skip > 0) {
      size_t take = t->skip < n - i ? (size_t)t->skip : n - i;
      t->skip -= take;
      t->pos += take;
      i += take;
      if (stop && t->skip == 0)
        return i;
      continue;
    }
    if (t->head_len == 0) {
      size_t k = run(t, p + i, n - i, stop);
      i += k;
      if ((stop && k > 0) || i == n || t->skip > 0)
        return i;
    }
    t->head[t->head_len++] = p[i++];
    t->pos++;
    if (t->head_len < 2)
      continue;
    unsigned id = (unsigned)t->head[0] << 8 | t->head[1];
    if (id == 0xFFFF) { /* DATA_END: the session's end */
      t->state = TEE_PRE;
      t->match = 0;
      t->head_len = 0;
      return i;
    }
    if (!(t->decl[id >> 3] & (1u << (id & 7)))) {
      lose(t);
      return i;
    }
    if (t->head_len == head_need(t, id)) {
      head_done(t, id);
      if (stop && t->skip == 0)
        return i;
    }
  }
  return i;
}

/* A rotation may switch files here. */
static int at_cut(const el__tee_t *t) {
  switch (t->state) {
  case TEE_PRE:
    return t->match == 0;
  case TEE_DATA:
    return t->head_len == 0 && t->skip == 0 && t->pos >= t->block_end;
  case TEE_LOST:
    return 1;
  default:
    return 0;
  }
}

/* Frame p[0..n); with stop, return as soon as a cut point is reached
 * (possibly at 0 or n). */
static size_t frame(el__tee_t *t, const uint8_t *p, size_t n, int stop) {
  size_t i = 0;
  for (;;) {
    if ((stop && at_cut(t)) || i == n)
      return i;
    switch (t->state) {
    case TEE_PRE:
      i += pre(t, p + i);
      break;
    case TEE_HDR:
      i += hdr(t, p + i, n - i);
      break;
    case TEE_DATA:
      i += data(t, p + i, n - i, stop);
      break;
    default:
      return n;
    }
  }
}

/* {====== rotation ======} */

/* Switch to next_fd: end_old: close the old file's data section with
 * DATA_END; then the new file starts with the session's header if the
 * session goes on in it. */
static void switch_now(el__tee_t *t, int end_old) {
  static const uint8_t data_end[2] = {0xFF, 0xFF};
  if (end_old)
    put(t, data_end, sizeof data_end);
  if (t->fd >= 0)
    close(t->fd);
  t->fd = t->next_fd;
  t->next_fd = -1;
  if (t->state == TEE_DATA || (t->state == TEE_LOST && t->hdr_ok))
    put(t, t->hdr, t->hdr_len);
  if (t->state == TEE_LOST && t->hdr_ok)
    el_log(EL_LOG_WARN,
           "--eventlog-log-file %s: reopened where the "
           "events could not be framed: it starts with the header, then "
           "bytes that may begin inside an event",
           t->path);
}

void el__tee_write(el__tee_t *t, const uint8_t *buf, size_t len) {
  if (t->fd < 0)
    return;
  while (t->next_fd >= 0) {
    size_t k = frame(t, buf, len, 1);
    put(t, buf, k);
    buf += k;
    len -= k;
    if (!at_cut(t))
      return; /* k == len: the cut is in a later write */
    switch_now(t, t->state == TEE_DATA);
  }
  frame(t, buf, len, 0);
  put(t, buf, len);
}

void el__tee_rotate(el__tee_t *t, int new_fd) {
  if (t->fd < 0) {
    close(new_fd);
    return;
  }
  if (t->next_fd >= 0)
    close(t->next_fd);
  t->next_fd = new_fd;
  if (at_cut(t))
    switch_now(t, t->state == TEE_DATA);
}

int el__tee_pending(const el__tee_t *t) { return t->next_fd >= 0; }

void el__tee_session_end(el__tee_t *t) {
  t->state = TEE_PRE; /* the next session brings its own header */
  t->match = 0;
  t->head_len = 0;
  t->skip = 0;
  if (t->next_fd >= 0)
    switch_now(t, 0); /* the old file ends as the session did */
}

void el__tee_close(el__tee_t *t) {
  if (t->path && t->stats && t->stats->tee_errors)
    el_log(EL_LOG_WARN,
           "--eventlog-log-file %s: %llu bytes received were not written "
           "to it (write errors): it is not a complete copy of the input",
           t->path, (unsigned long long)t->stats->tee_errors);
  if (t->fd >= 0)
    close(t->fd);
  if (t->next_fd >= 0)
    close(t->next_fd);
  t->fd = t->next_fd = -1;
  el_free(t->hdr);
  el_free(t->size);
  el_free(t->decl);
  t->hdr = NULL;
  t->size = NULL;
  t->decl = NULL;
}
