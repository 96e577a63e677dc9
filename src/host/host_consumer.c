/* host_consumer.c: the host as the consumer of el_src_pump
 * (src/source/src_consumer.h): the one session protocol every command that
 * runs Lua over a source uses (run, repl, the daemon). A session begins with
 * reset (the previous one ends, the decoder expects a header), its bytes
 * are fed with the time they were received, and it ends with finish; a
 * recorded file is scanned ahead so its sessions are dated exactly from
 * their first event (spec eventlog-format.md §3.5). */
#include <string.h>

#include "host_internal.h"

static void c_reset(void *ud) {
  el_host_t *h = ud;
  el_host_session_end(h);
  el_ev_decoder_reset(h->dec);
  el_host_set_hints(h, NULL, 0);  /* hints belong to one connection */
}

static int c_feed(void *ud, const uint8_t *buf, size_t len) {
  return el_host_feed(ud, buf, len);
}

static int c_finish(void *ud) {
  el_host_t *h = ud;
  /* After SIGINT/SIGTERM (el_host_interrupt) or a --fail-fast error the
   * input was cut by us: its missing end is no news. */
  int rc = h->interrupted || h->stop ? el_ev_decoder_finish_stopped(h->dec)
                                     : el_ev_decoder_finish(h->dec);
  el_host_session_end(h);
  return rc;
}

/* The pump stopped the input (a signal, el_src_pump_stop): its missing
 * end is no news either. */
static int c_finish_stopped(void *ud) {
  el_host_t *h = ud;
  int rc = el_ev_decoder_finish_stopped(h->dec);
  el_host_session_end(h);
  return rc;
}

static const el_diag_t *c_diag(void *ud) {
  return el_ev_decoder_diag(((el_host_t *)ud)->dec);
}

static void c_received(void *ud, uint64_t by_unix_ns, int live) {
  el_host_received(ud, by_unix_ns, live);
}

static void c_input_waits(void *ud, int waiting) {
  el_host_input_waits(ud, waiting);
}

/* {====== scanning a recorded file ======} */

#define MAX_SCAN_SESSIONS 4096

/* A recorded file: el_ev_scan_fd (src/eventlog) reads its headers, block
 * markers and global blocks only (capability blocks' bodies are jumped
 * over unread) and gives each session's WALL_CLOCK_TIME anchor,
 * capabilities, last time and init events (pid, ppid, RTS identifier,
 * arguments). */
static void c_scan(void *ud, int fd, uint64_t from, uint64_t len) {
  el_host_t *h = ud;
  el_ev_scan_t r;
  int rc = el_ev_scan_fd(fd, from, len, &r);
  if (rc == EL_ENOMEM || rc == EL_ESHRUNK || r.nsessions == 0 ||
      r.nsessions > MAX_SCAN_SESSIONS) {
    /* Too many: the hints would not line up. Shrunk (another process
     * truncated the file): read(2) meets the new end and reports it. */
    el_ev_scan_free(&r);
    return;
  }
  el_host_hint_t *v = el_calloc(r.nsessions, sizeof *v);
  uint16_t (*caps)[64] = el_calloc(r.nsessions, sizeof *caps);
  if (v && caps) {
    for (size_t i = 0; i < r.nsessions; i++) {
      const el_ev_scan_session_t *s = &r.sessions[i];
      /* A clamped anchor (an absurd WALL_CLOCK_TIME) is no clock. */
      v[i].has_wall_clock = s->has_wall_clock &&
                            s->anchor_unix_ns != INT64_MAX &&
                            s->anchor_unix_ns != INT64_MIN;
      v[i].start_unix_ns = v[i].has_wall_clock ? s->anchor_unix_ns : 0;
      v[i].max_t = s->max_t_ns;
      for (size_t k = 0; k < s->ncaps && v[i].ncaps < 64; k++)
        if (s->caps[k] < EL__MAX_CAPS) caps[i][v[i].ncaps++] = s->caps[k];
      v[i].caps = caps[i];
      v[i].has_pid = s->has_pid;
      v[i].pid = s->pid;
      v[i].has_ppid = s->has_ppid;
      v[i].ppid = s->ppid;
      v[i].rts_id = (el_strview_t){s->rts_id, s->rts_id_len};
      v[i].args = (el_strview_t){s->args, s->args_len};
      v[i].has_nocap = s->has_nocap;
      v[i].nocap_high = s->nocap_high;
      v[i].nocap_last_offset = s->nocap_last_offset;
      memcpy(v[i].nocap_types, s->nocap_types, sizeof v[i].nocap_types);
    }
    el_host_set_hints(h, v, r.nsessions);
  }
  el_free(v);
  el_free(caps);
  el_ev_scan_free(&r);
}

static uint64_t c_offset(void *ud) {
  return el_ev_decoder_offset(((el_host_t *)ud)->dec);
}

static void c_interrupt(void *ud, int sig) {
  el_host_interrupt_signal(ud, sig);
}

static int c_data_ended(void *ud) {
  return el_ev_decoder_data_ended(((el_host_t *)ud)->dec);
}

static void c_input_name(void *ud, const char *name) {
  el_host_set_input_name(ud, name);
}

void el_host_consumer(el_host_t *h, el_src_consumer_t *c) {
  memset(c, 0, sizeof *c);
  c->ud = h;
  c->reset = c_reset;
  c->feed = c_feed;
  c->finish = c_finish;
  c->finish_stopped = c_finish_stopped;
  c->diag = c_diag;
  c->received = c_received;
  c->input_waits = c_input_waits;
  c->scan = c_scan;
  c->interrupt = c_interrupt;
  c->offset = c_offset;
  c->data_ended = c_data_ended;
  c->input_name = c_input_name;
}
