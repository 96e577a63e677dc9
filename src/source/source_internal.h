/* source_internal.h: the el_src_t object and the descriptor each source
 * variant fills (src_file.c, src_fifo.c, src_stdin.c, src_unix.c,
 * src_tcp.c); the shared machinery is in src_core.c (lifecycle, backoff,
 * tee, delivery) and src_stream.c (reading and writing a uv_stream_t). */
#ifndef EL_SOURCE_INTERNAL_H
#define EL_SOURCE_INTERNAL_H

#include "source.h"
#include "src_tee.h"

/* Life of a source. */
typedef enum {
  SRC_IDLE = 0,   /* made, not started */
  SRC_OPENING,    /* opening / connecting */
  SRC_OPEN,       /* a session is open; bytes flow */
  SRC_WAITING,    /* between sessions: backoff timer or follow poll */
  SRC_CLOSING,    /* stopping: waiting for handles to close */
  SRC_ENDED       /* on_end has been called */
} el__src_state_t;

/* What each variant provides. */
typedef struct el__src_vt_s {
  const char *name;                 /* "file", "fifo", "stdin", ... */
  int is_socket;                    /* reconnects; accepts el_src_write */
  /* Begin one open/connect attempt. Success or failure is reported
   * through el__src_opened / el__src_open_failed (possibly synchronously).
   * Returns 0 or an error meaning no attempt was made (it is treated as a
   * failed attempt). */
  int (*open)(el_src_t *s);
  void (*pause)(el_src_t *s);       /* stop reading */
  void (*resume)(el_src_t *s);      /* restart reading */
  /* Release the session's handles; call el__src_handle_closed once per
   * handle passed to uv_close. Returns the number of uv_close calls made. */
  int (*close)(el_src_t *s);
} el__src_vt_t;

/* A queued write on the control channel. */
typedef struct el__src_wreq_s {
  uv_write_t req;
  el_src_t *src;
  size_t len;
  uint8_t data[];                   /* copied bytes */
} el__src_wreq_t;

struct el_src_s {
  uv_loop_t *loop;                  /* borrowed, outlives the source */
  el_src_opts_t opts;               /* own copy; strings below */
  char *path, *host, *port, *log_file; /* owned copies of the strings */
  el_src_cb_t cb;                   /* consumer callbacks */
  const el__src_vt_t *vt;           /* the variant */
  el__src_state_t state;
  int paused;                       /* el_src_pause in force */
  int free_on_close;                /* el_src_free called while running */
  int end_status;                   /* status for on_end */
  int pending_closes;               /* uv_close calls not yet completed */
  int ever_connected;               /* a session has been opened */
  int session_bytes;                /* the current session delivered bytes */
  /* a session delivered bytes */
  int ever_fed;
  int fails;                        /* consecutive failed attempts */
  double delay_s;                   /* next backoff delay, seconds */
  int last_error;                   /* last open/connect/read error */

  /* The stream of the current session (FIFO, stdin pipe/tty, sockets). */
  union {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_pipe_t pipe;
    uv_tcp_t tcp;
    uv_tty_t tty;
  } h;
  int h_open;                       /* h is initialised and not closed */
  int reading;                      /* uv_read_start in force */
  size_t write_queued;              /* bytes in pending uv_write requests */

  uv_timer_t timer;                 /* backoff / follow poll */
  int timer_open;                   /* timer initialised and not closed */
  uv_connect_t connect_req;         /* socket connect */
  uv_getaddrinfo_t gai_req;         /* TCP name resolution */
  int gai_pending;                  /* gai_req in flight */
  struct addrinfo *ai_list;         /* resolved addresses (TCP) */
  struct addrinfo *ai_next;         /* next address to try (TCP) */

  /* Regular files (src_file.c). */
  uv_fs_t fs_req;                   /* the read in flight */
  int fs_pending;                   /* fs_req in flight */
  uv_idle_t idle;                   /* the next read on the loop thread
                                       (src_file.c read_inline) */
  int idle_open;                    /* idle initialised and not closed */
  int nowait;                       /* fd is a regular file read on the
                                       loop thread: NOWAIT_CACHED
                                       (preadv2 RWF_NOWAIT reads what the
                                       page cache holds), NOWAIT_MEMORY (a
                                       memory file system: read(2) never
                                       waits for a disk); 0: thread pool */
  uv_file fd;                       /* open file, -1 if none */
  int fd_owned;                     /* close fd at the end (not stdin) */
  int64_t file_off;                 /* next read offset */
  uint8_t *buf2;                    /* second read buffer (prefetch), or
                                       NULL: then reads wait for delivery */
  int fill;                         /* 0: the read in flight fills buf,
                                       1: buf2 */
  int ready;                        /* a completed read not yet delivered
                                       (paused meanwhile) */
  ssize_t ready_n;                  /* its result: bytes, 0 EOF, error */
  uint8_t *ready_buf;               /* the buffer holding it */

  int file_regular;                 /* fd is a regular file */
  uint64_t file_mtime_ns;           /* its modification time at open (Unix
                                       ns) */
  int64_t file_size0;               /* its size at open */
  uint64_t recv_by;                 /* the bytes being delivered existed by
                                       this Unix ns (el_src_received) */
  int recv_live;                    /* they arrive as they are written */
  /* Read up to what the writer wrote: waits for more (on_wait). */
  int waiting;

  int stdin_flags;                  /* fcntl flags of fd 0 to restore */
  uint8_t *buf;                     /* read buffer */
  size_t buf_size;                  /* its size in bytes */
  int buf_busy;                     /* handed to libuv for a read */

  el__tee_t tee;                    /* --eventlog-log-file (fd -1: none) */
  int discarding;                   /* el_src_discard: tee no more */
  el_src_stats_t stats;
  /* Set during el__src_open_failed when the connection was accepted,
   * then closed before any data. */
  int closed_empty;
  /* The loop time (uv_now, ms) of the first failure of the current
   * series, and whether the series was warned about
   * (opts.peer_exited: socket_fail_level). */
  uint64_t fail_since_ms;
  int fail_warned;
};

/* Variants. */
extern const el__src_vt_t el__src_file_vt;
extern const el__src_vt_t el__src_fifo_vt;
extern const el__src_vt_t el__src_stdin_vt;
extern const el__src_vt_t el__src_unix_vt;
extern const el__src_vt_t el__src_tcp_vt;

/* Message for an error code: ours (EL_E*), errno values and libuv's
 * getaddrinfo codes (UV_EAI_*). Static string. */
const char *el__src_strerror(int err);

/* src_core.c: a variant reports that the session is open (on_connect). */
void el__src_opened(el_src_t *s);
/* The pipe size el__src_grow_pipe asks for, in bytes: Linux's default
 * /proc/sys/fs/pipe-max-size, the most an unprivileged process may set. */
#define PIPE_GROW_SIZE (1u << 20)
/* Grow the pipe or FIFO that fd reads (F_SETPIPE_SZ) to PIPE_GROW_SIZE
 * bytes, or the most the system allows below it (halving on refusal down
 * to its current size): the program writing it blocks less often, and
 * each wake-up of the loop reads more (docs/sources.md "Pipes").
 * stats.pipe_size gets the size the pipe then has (0: fd is not a pipe
 * or FIFO; the size it had when every attempt was refused). Errors are
 * not reported: a smaller pipe only costs time. */
void el__src_grow_pipe(el_src_t *s, int fd);
/* An open/connect attempt failed with err; the variant has released what
 * it held (or will, through el__src_handle_closed). */
void el__src_open_failed(el_src_t *s, int err);
/* Deliver bytes of the current session (tee, counters, on_data). */
void el__src_deliver(el_src_t *s, const uint8_t *buf, size_t len);
/* The session's input was read up to what its writer wrote (waiting = 1)
 * or no longer is (0); reports changes through cb.on_wait. Only an open,
 * unpaused session waits. */
void el__src_waits(el_src_t *s, int waiting);
/* The session ended with err (0 = EOF). The variant must not read more. */
void el__src_session_ended(el_src_t *s, int err);
/* A handle given to uv_close has closed. */
void el__src_handle_closed(uv_handle_t *h);
/* A request the teardown waits for (fs read, getaddrinfo) completed. */
void el__src_check_finish(el_src_t *s);
/* Close s->h if open (counts a pending close). */
int el__src_close_stream(el_src_t *s);

/* Run the timer (follow poll) once after `seconds`; its expiry calls
 * vt->resume while the session is open. */
void el__src_poll_later(el_src_t *s, double seconds);

/* src_file.c: reading s->fd (files, stdin files): page-cached bytes on the
 * loop thread, the rest through the thread pool. el_src_t.nowait: */
#define NOWAIT_CACHED 1
#define NOWAIT_MEMORY 2
void el__src_file_read_next(el_src_t *s);
void el__src_file_close_fd(el_src_t *s);
int el__src_file_close(el_src_t *s);

/* src_stream.c: read s->h as a stream (sets up alloc/read callbacks). */
int el__src_stream_start(el_src_t *s);
void el__src_stream_pause(el_src_t *s);
void el__src_stream_resume(el_src_t *s);

#endif /* EL_SOURCE_INTERNAL_H */
