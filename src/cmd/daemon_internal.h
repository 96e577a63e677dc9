/* daemon_internal.h: the state of the daemon's pipeline, shared by
 * daemon.c (the pipeline) and daemon_stats.c (--stats and the progress
 * log). */
#ifndef EL_DAEMON_INTERNAL_H
#define EL_DAEMON_INTERNAL_H

#include <uv.h>

#include "control/control.h"
#include "daemon.h"
#include "host/host.h"
#include "otlp/exp_console.h"
#include "otlp/otlp.h"
#include "telemetry/telemetry.h"
#include "web/httpd_plugin.h"
#include "web/web.h"

/* Totals for --stats. */
typedef struct el__totals_s {
  uint64_t events;
  uint64_t emitted[EL_TM_NSIGNALS];   /* accepted by the store */
  uint64_t exported[EL_TM_NSIGNALS];  /* delivered to the collector */
  uint64_t rejected[EL_TM_NSIGNALS];  /* partial_success rejections */
  uint64_t dropped[EL_TM_NSIGNALS];   /* store + exporter drops */
} el__totals_t;

typedef struct el__daemon_s {
  el_daemon_opts_t *o;
  uv_loop_t loop;
  uv_timer_t timer;
  el_src_t *src;
  el_host_t *host;
  el_ev_decoder_t *dec;
  el_tm_store_t *store;
  el_otlp_exporter_t *otlp;
  el_otlp_console_t *console;
  el_otlp_stats_t otlp_final;  /* exporter counters when it was freed */
  el_ctl_server_t *ctl;
  el_web_t *web;               /* --prometheus-port / --web-port, or NULL */
  /* the session whose header the web view was last told of
   * (on_session_clock) */
  uint64_t web_session;
  const el_httpd_plugin_t *httpd; /* the servers' plugin, once opened
                                     (ctl or web set) */
  int internal_logs;           /* internal_log_message enabled */
  el_tm_hostlog_t *hostlog;    /* the host's own log messages */
  int session_open;
  int handles;                 /* timer and signal handles initialised */
  int end_status;              /* el_src_pump's status */
  el_src_pump_result_t pump;   /* and its details (the drain) */
  el_src_consumer_t host_c;    /* the host's consumer (el_host_consumer) */
  uint64_t decode_errors;
  uint64_t started_ms;
  uint64_t stats_last_ms;
  /* stderr is a terminal: --stats redraws its table */
  int stats_tty;
  el__totals_t stats_prev;         /* totals at the last --stats display */
  int stats_lines;             /* lines of the last display */
  el_tm_exporter_t console_tm; /* the console exporter, wrapped to count */
  uint64_t console_records[EL_TM_NSIGNALS]; /* records it printed */
  uint64_t batch_ms;           /* batch interval (spec §3.4) */
  uint64_t log_last_ms;        /* last "Received <n> events." check */
  el__totals_t log_prev;           /* totals at that check */
  el__totals_t peak_prev;          /* totals when the peaks were updated */
  el__totals_t peak;               /* largest increase in one batch interval */
  /* The self-metrics internal_event_count, internal_{exported,rejected}_
   * {logs,metrics,samples,spans} (docs/config.md), in el__self_keys order;
   * desc.name NULL: off. win: the aggregation window last sampled. */
  struct {
    el_tm_metric_desc_t desc;
    uint64_t agg_ms;
    int64_t win;
  } self[9];
  el_unix_ns_t self_start_unix_ns; /* start time of the sums */
  /* The web endpoints' exporter (el_tm_exporter_t.ud), and the points of
   * the last self-metric sample, handed to them alone after the final
   * export (finish): not pending in the stats. */
  const void *web_ex_ud;
  uint64_t self_aside;
  uint64_t connected_ms;       /* when the current session began */
  int input_warned;            /* "No input after 10 ticks" given */
  /* Time the current session's input was awaited, which "No input after
   * 10 ticks" measures (summed by on_timer): before its first bytes and
   * while the source waits for its writer (input_waits); not while bytes
   * are read and processed, reading is paused (flow control), after a
   * stop signal (the drain) nor once the input ended (input_over). */
  uint64_t awaited_ms;
  uint64_t tick_ms;                  /* on_timer's last run */
  int waiting;                       /* input_waits(1): the source waits */
  int session_fed;                   /* the current session delivered bytes */
  volatile sig_atomic_t stop_signal; /* a SIGINT/SIGTERM stopped the input */
  int input_over;              /* finish began: no more input is awaited */
  int idle_ticks;              /* ticks with end_when_idle set and no
                                  session open */
  /* Ticks with end_when_idle set, a session open and its input read
   * empty (waiting): someone else holds the FIFO. */
  int held_ticks;
  /* fifo_kick: the FIFO opened for writing (-1: not), the ticks it has
   * waited for the source's open, and whether it was done. */
  int kick_fd, kick_ticks, kicked;
  /* The input was stopped by end_when_idle: a clean end of input, not a
   * signal. */
  int idle_ended;
  /* Flow control of a recorded file (docs/otlp.md §8.2): reading pauses
   * while the OTLP export queues are full (el_otlp_exporter_should_pause).
   * Times on the loop's clock, ms. */
  struct {
    int on;            /* a recorded file with OTLP export */
    int open;          /* async initialised */
    uv_async_t async;  /* the sender thread wakes the loop */
    int paused;        /* reading paused now */
    int hold_wall;     /* wall timers held: paused, or resumed
                                  and nothing fed since */
    uint64_t since_ms; /* the current pause began */
    uint64_t bound_ms; /* a pause longer than this gives up */
    uint64_t total_ms; /* time paused, all pauses */
    uint64_t pauses;   /* pauses begun */
    uint64_t timeouts; /* pauses ended by bound_ms */
  } flow;
} el__daemon_t;

/* daemon_stats.c */
/* Totals now: events decoded, records emitted, exported, rejected,
 * dropped per signal. */
void el__daemon_totals(el__daemon_t *d, el__totals_t *t);
/* The --stats table on f (final: rates over the whole run); before the
 * final one, on a file or pipe, one line of totals instead. */
void el__daemon_print_stats(el__daemon_t *d, FILE *f, int final);
/* Once per batch interval (or when forced): the reference's progress
 * messages (spec reference-behaviour.md §9, §6.1). */
void el__daemon_log_progress(el__daemon_t *d, int force);
/* The config keys of the self-metrics, in the order of el__daemon_t.self. */
extern const char *const el__self_keys[9];
/* Set up d->self from the resolved configuration (enabled ones only). */
void el__daemon_self_init(el__daemon_t *d, const el_cfg_t *cfg);
/* Sample the self-metrics into the store under the host's resource: each
 * enabled one once per aggregation window of the wall clock (every call
 * when its aggregate is 0), every one when force (the end of input).
 * Returns the number of points sampled. */
int el__daemon_self_metrics(el__daemon_t *d, int force);
/* Unix ns now (CLOCK_REALTIME). */
el_unix_ns_t el__daemon_now_unix_ns(void);

#endif /* EL_DAEMON_INTERNAL_H */
