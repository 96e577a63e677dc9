/* src_consumer.h: what el_src_pump (source.h) drives: a decoder-like
 * consumer of one or more sessions of eventlog bytes. Separate from
 * source.h so that consumers (the Lua host, src/host/host.h) need not see
 * libuv. */
#ifndef EL_SRC_CONSUMER_H
#define EL_SRC_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct el_src_s;
struct el_diag_s; /* src/eventlog/eventlog.h */

/* While the input waits for its writer, el_src_pump reports so again this
 * often (el_src_consumer_t.input_waits), in ms. */
#define EL_SRC_WAIT_BEAT_MS 250

/* A decoder-like consumer. feed/finish return 0 or a negative EL_E* code;
 * diag (may be NULL) describes the last error, which el_src_pump logs
 * naming the input, except EL_ECORRUPT from finish: a corrupt part the
 * consumer went on after and said itself as it came (el_ev_show_t), only
 * counted. Any hook may be NULL. */
typedef struct el_src_consumer_s {
  void *ud;
  /* May be NULL. Called once, before any other hook, with the input's
   * name as el_src_pump's own messages give it (el_src_opts_describe: the
   * path, "stdin", "Unix socket PATH"; borrowed for the call), for the
   * consumer's own messages about the input (the decoder's warnings:
   * "NAME: corrupt stream: ...", as show says them). */
  void (*input_name)(void *ud, const char *name);
  void (*reset)(void *ud);                      /* a new session begins */
  int (*feed)(void *ud, const uint8_t *buf, size_t len);
  int (*finish)(void *ud);                      /* a session ended */
  /* May be NULL (then finish is called). The session ends because the
   * reader stopped (a signal, el_src_pump_stop, EL_ESTOPPED from feed),
   * not because its input ended: nothing is to be said about where the
   * bytes stop (a cut event, a missing end-of-data marker), which is the
   * stop's doing (e.g. el_ev_decoder_finish_stopped). Returns as finish. */
  int (*finish_stopped)(void *ud);
  const struct el_diag_s *(*diag)(void *ud);
  /* May be NULL. Called from the SIGINT/SIGTERM handler (so it must be
   * async-signal-safe): abandon what feed is computing now (e.g. a Lua
   * handler that loops) and make the next feed return EL_ESTOPPED. The
   * source is then stopped on the loop, and finish and the caller's end of
   * input still run. sig: the signal's number (SIGINT, SIGTERM), for the
   * consumer to name it (host.h el_host_interrupt_signal). */
  void (*interrupt)(void *ud, int sig);
  int own_signals;  /* 1: the caller handles SIGINT and SIGTERM itself
                       (e.g. an interactive prompt); the pump installs no
                       handler for them */
  int one_stream;   /* 1: finish is called once, at the end of input,
                       not at the end of each session (e.g. el_ev_show_t,
                       which prints everything at finish); reset is still
                       called for each session */
  /* May be NULL. Before each feed: by_unix_ns, the Unix time by which the
   * bytes existed, and live (see el_src_received). */
  void (*received)(void *ud, uint64_t by_unix_ns, int live);
  /* May be NULL. The input waits for its writer (waiting = 1: everything
   * it had was fed) or no longer does (0: more bytes come, or reading was
   * paused); see el_src_cb_t.on_wait. Also called with 0 after reset when
   * a session begins, which tells the consumer that its pump reports
   * waits. While a wait lasts the pump calls it again with 1 every
   * EL_SRC_WAIT_BEAT_MS, from a timer: each call shows that the process
   * ran then. A consumer that measures the wait (the host's quiet clock,
   * src/host/host_clock.c) must not count a longer stretch between two
   * calls in full: the process was stopped (SIGSTOP, a paused VM) or the
   * loop blocked, and the writer may have written meanwhile. */
  void (*input_waits)(void *ud, int waiting);
  /* May be NULL. After reset, when the session is a regular file read once
   * (el_src_recorded_fd): the file's descriptor (borrowed for the call)
   * and the len bytes from byte `from` that the session reads (from: the
   * descriptor's position when reading began, 0 for --eventlog-file, any
   * for a file on stdin), so the consumer can scan them ahead (e.g. for
   * each session's WALL_CLOCK_TIME: el_ev_scan_fd). The source reads fd
   * from its file position: read it with pread(2) or map it, never move
   * the position. Another process may truncate the file meanwhile: reads
   * may come short, and reads of a mapping must be guarded
   * (src/common/el_mapguard.h); the pump warns afterwards when the file
   * shrank. */
  void (*scan)(void *ud, int fd, uint64_t from, uint64_t len);
  /* May be NULL. Called with the pump's source (borrowed) right after it
   * was created, before any other hook, and with NULL just before it is
   * freed, so the caller can el_src_write to it (e.g. control commands,
   * src/control/control.h el_ctl_src_send) while the pump runs. The
   * pointer must not be used after the NULL call. Loop thread. */
  void (*on_source)(void *ud, struct el_src_s *src);
  /* May be NULL. The session's input bytes processed so far: where a
   * stop leaves a file unread (the pump's warning; without it, the bytes
   * fed). */
  uint64_t (*offset)(void *ud);
  /* May be NULL. 1 when the current session's data ended with its
   * end-of-data marker and nothing was fed after it (e.g.
   * el_ev_decoder_data_ended): a stop then leaves nothing of the log
   * unread, and the pump says so as news, not as a warning. Loop
   * thread. */
  int (*data_ended)(void *ud);
} el_src_consumer_t;

#ifdef __cplusplus
}
#endif
#endif /* EL_SRC_CONSUMER_H */
