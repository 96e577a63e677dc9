/* daemon_stats.c: what the daemon tells about itself while it runs: the
 * `--stats` table on stderr (spec/reference-behaviour.md §1.1, with the
 * differences of docs/differences.md) and the reference's progress log
 * messages. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_internal.h"

el_unix_ns_t el__daemon_now_unix_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (el_unix_ns_t)ts.tv_sec * 1000000000u + (el_unix_ns_t)ts.tv_nsec;
}



void el__daemon_totals(el__daemon_t *d, el__totals_t *t) {
  memset(t, 0, sizeof *t);
  t->events = el_ev_decoder_stats(d->dec)->events;
  const el_tm_stats_t *ts = el_tm_store_stats(d->store);
  el_otlp_stats_t os = d->otlp_final;
  if (d->otlp) el_otlp_exporter_stats(d->otlp, &os);
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    t->emitted[s] = ts->emitted[s];
    if (s == EL_TM_SIGNAL_METRICS) /* not exported: the web's alone */
      t->emitted[s] -=
          d->self_aside < t->emitted[s] ? d->self_aside : t->emitted[s];
    /* the console's records handed over, less those it dropped (a
     * failed write, a full queue: counted in the store's drops too) */
    uint64_t cdrop = d->console ? el_otlp_console_dropped(d->console, s) : 0;
    uint64_t con = d->console_records[s];
    t->exported[s] = os.records[s] + (con > cdrop ? con - cdrop : 0);
    t->rejected[s] = os.rejected[s];
    /* The exporter reports its drops to the store as well. */
    t->dropped[s] = ts->dropped[s];
  }
}

/* Fold the increase of every counter since the last call into the peaks
 * (the `Peak` column of --stats: the largest count of one batch interval,
 * as the reference's, spec §10). Called once per batch interval and once
 * more for the final table. */
static void note_peaks(el__daemon_t *d, const el__totals_t *t) {
  el__totals_t *p = &d->peak, *b = &d->peak_prev;
#define PEAK(field)                                               \
  do {                                                            \
    uint64_t inc = t->field > b->field ? t->field - b->field : 0; \
    if (inc > p->field) p->field = inc;                           \
  } while (0)
  PEAK(events);
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    PEAK(exported[s]);
    PEAK(rejected[s]);
    PEAK(dropped[s]);
  }
#undef PEAK
  *b = *t;
}

/* How far the processed stream is behind the wall clock, in seconds
 * (negative: unknown). */
static double stream_lag_s(el__daemon_t *d) {
  /* A recorded file's stream time is when it was recorded: no lag. */
  if (!el_src_opts_live(&d->o->src)) return -1;
  el_unix_ns_t u = el_host_stream_unix_ns(d->host);
  return u ? ((double)el__daemon_now_unix_ns() - (double)u) / 1e9 : -1;
}

static const char *const sig_names[EL_TM_NSIGNALS] = {"Metrics", "Logs",
                                                      "Traces", "Profiles"};

/* The flow control of a recorded file (daemon.c): how long reading waited
 * for the OTLP export queues. Returns the lines printed. */
static int print_flow(el__daemon_t *d, FILE *f) {
  if (!d->flow.pauses) return 0;
  uint64_t ms = d->flow.total_ms;
  if (d->flow.paused) ms += uv_now(&d->loop) - d->flow.since_ms;
  fprintf(f, "Reading paused for the collector: %.1f s in %llu pauses%s",
          (double)ms / 1000.0, (unsigned long long)d->flow.pauses,
          d->flow.paused ? " (paused now)" : "");
  if (d->flow.timeouts)
    fprintf(f, ", %llu given up after %.1f s",
            (unsigned long long)d->flow.timeouts,
            (double)d->flow.bound_ms / 1000.0);
  fputc('\n', f);
  return 1;
}

/* The corrupt parts of the input so far and their bytes (as `stats`
 * counts them: a part decoded through, such as a damaged size, included),
 * with prefix before them; nothing when none (each was said as a warning
 * when it ended: decode errors count only what stopped a feed). */
static void print_corrupt(el__daemon_t *d, FILE *f, const char *prefix) {
  const el_ev_stats_t *es = el_ev_decoder_stats(d->dec);
  if (es->corrupt_parts)
    fprintf(f, "%scorrupt parts %llu (%llu bytes in them)", prefix,
            (unsigned long long)es->corrupt_parts,
            (unsigned long long)es->corrupt_bytes);
}

/* The table's line of errors and memory. */
static void print_errors(el__daemon_t *d, FILE *f, const el_host_stats_t *hs) {
  fprintf(f, "Script errors %llu, decode errors %llu, ",
          (unsigned long long)hs->handler_errors,
          (unsigned long long)d->decode_errors);
  print_corrupt(d, f, "");
  fprintf(f, "%smemory %zu bytes (peak %zu)\n",
          el_ev_decoder_stats(d->dec)->corrupt_parts ? ", " : "",
          el_mem_in_use(), el_mem_peak());
}

/* The periodic --stats report on a file or pipe: one line of totals
 * (rates over the last interval), not a table that cannot be redrawn in
 * place. */
static void print_stats_line(el__daemon_t *d, FILE *f, const el__totals_t *t,
                             double dt) {
  uint64_t now = uv_now(&d->loop);
  fprintf(f, "stats: %.0f s: events %llu (%.0f/s)",
          (double)(now - d->started_ms) / 1000.0, (unsigned long long)t->events,
          (double)(t->events - d->stats_prev.events) / dt);
  uint64_t pending = 0, rejected = 0, dropped = 0;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    uint64_t gone = t->exported[s] + t->rejected[s] + t->dropped[s];
    if (t->emitted[s] > gone) pending += t->emitted[s] - gone;
    rejected += t->rejected[s];
    dropped += t->dropped[s];
    fprintf(f, "%s %s %llu", s ? "," : "; exported", sig_names[s],
            (unsigned long long)t->exported[s]);
  }
  fprintf(f, "; rejected %llu, dropped %llu, pending %llu",
          (unsigned long long)rejected, (unsigned long long)dropped,
          (unsigned long long)(d->otlp || d->console ? pending : 0));
  double lag = stream_lag_s(d);
  if (lag >= 0) fprintf(f, "; lag %.1f s", lag);
  const el_host_stats_t *hs = el_host_stats(d->host);
  if (hs->handler_errors || d->decode_errors)
    fprintf(f, "; script errors %llu, decode errors %llu",
            (unsigned long long)hs->handler_errors,
            (unsigned long long)d->decode_errors);
  print_corrupt(d, f, "; ");
  fputc('\n', f);
  fflush(f);
}

/* The table: totals, rates over the last interval (or the whole run when
 * final), what is still pending (in windows or export queues). Before
 * the final one, on a file or pipe: one line (print_stats_line). */
void el__daemon_print_stats(el__daemon_t *d, FILE *f, int final) {
  el__totals_t t;
  el__daemon_totals(d, &t);
  uint64_t now = uv_now(&d->loop);
  if (!final && !isatty(fileno(f))) {
    double since = (double)(now - d->stats_last_ms) / 1000.0;
    print_stats_line(d, f, &t, since > 0 ? since : 1e-3);
    d->stats_last_ms = now;
    d->stats_prev = t;
    return;
  }
  double dt = final ? (now - d->started_ms) / 1000.0
                    : (now - d->stats_last_ms) / 1000.0;
  const el__totals_t *p = final ? NULL : &d->stats_prev;
  if (dt <= 0) dt = 1e-3;
  if (final) note_peaks(d, &t);
#define RATE(field) ((double)(t.field - (p ? p->field : 0)) / dt)
  if (!final && d->stats_lines && isatty(fileno(f)))
    fprintf(f, "\033[%dA\033[J", d->stats_lines);
  int lines = 0;
  const el__totals_t *pk = &d->peak;
  fprintf(f, "%-9s %-9s %14s %12s %14s\n", "Item", "Action", "Total",
          "Rate (/s)", "Peak (/batch)");
  fprintf(f, "%-9s %-9s %14llu %12.0f %14llu\n", "Events", "Received",
          (unsigned long long)t.events, RATE(events),
          (unsigned long long)pk->events);
  lines += 2;
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    uint64_t gone = t.exported[s] + t.rejected[s] + t.dropped[s];
    uint64_t pending = t.emitted[s] > gone ? t.emitted[s] - gone : 0;
    fprintf(f, "%-9s %-9s %14llu %12.0f %14llu\n", sig_names[s], "Exported",
            (unsigned long long)t.exported[s], RATE(exported[s]),
            (unsigned long long)pk->exported[s]);
    fprintf(f, "%-9s %-9s %14llu %12.0f %14llu\n", "", "Rejected",
            (unsigned long long)t.rejected[s], RATE(rejected[s]),
            (unsigned long long)pk->rejected[s]);
    fprintf(f, "%-9s %-9s %14llu %12.0f %14llu\n", "", "Dropped",
            (unsigned long long)t.dropped[s], RATE(dropped[s]),
            (unsigned long long)pk->dropped[s]);
    fprintf(f, "%-9s %-9s %14llu\n", "", "Pending",
            (unsigned long long)(d->otlp || d->console ? pending : 0));
    lines += 4;
  }
#undef RATE
  double lag = final ? -1 : stream_lag_s(d);
  const el_host_stats_t *hs = el_host_stats(d->host);
  if (lag >= 0)
    fprintf(f, "Lag behind the stream: %.1f s. ", lag);
  print_errors(d, f, hs);
  lines++;
  if (hs->reorder_late || hs->reorder_forced || hs->order_late ||
      hs->order_forced) { /* docs/lua-api.md §6 "Ordering" */
    fprintf(f,
            "Out of order: %llu thread/GC events late, %llu forced; "
            "%llu time-order events late, %llu forced (thread times may "
            "be off; see the warning)\n",
            (unsigned long long)hs->reorder_late,
            (unsigned long long)hs->reorder_forced,
            (unsigned long long)hs->order_late,
            (unsigned long long)hs->order_forced);
    lines++;
  }
  lines += print_flow(d, f);
  if (final && d->pump.drained) {
    fprintf(f, "Drained after the stop: %llu bytes discarded%s\n",
            (unsigned long long)d->pump.drained_bytes,
            d->pump.drain_timed_out ? " (the writer still had the input "
                                      "open at the drain timeout)"
                                    : "");
    lines++;
  }
  fflush(f);
  d->stats_lines = lines;
  d->stats_last_ms = now;
  d->stats_prev = t;
}

/* {====== self-metrics ======} */

const char *const el__self_keys[9] = {
    "internal_event_count",      "internal_exported_logs",
    "internal_rejected_logs",    "internal_exported_metrics",
    "internal_rejected_metrics", "internal_exported_samples",
    "internal_rejected_samples", "internal_exported_spans",
    "internal_rejected_spans"};
static const char *const self_units[9] = {
    "{event}",  "{log_record}", "{log_record}", "{data_point}", "{data_point}",
    "{sample}", "{sample}",     "{span}",       "{span}"};

void el__daemon_self_init(el__daemon_t *d, const el_cfg_t *cfg) {
  for (int i = 0; i < 9; i++) {
    memset(&d->self[i], 0, sizeof d->self[i]);
    d->self[i].win = -1;
    const el_cfg_proc_t *p = el_cfg_proc(cfg, EL_CFG_METRICS, el__self_keys[i]);
    if (!p || !p->enabled) continue;
    d->self[i].desc.name = p->name;
    d->self[i].desc.description = p->description;
    d->self[i].desc.unit = self_units[i];
    d->self[i].desc.kind = EL_TM_SUM;
    d->self[i].desc.temporality = EL_TM_TEMP_CUMULATIVE;
    d->self[i].desc.monotonic = true;
    d->self[i].agg_ms = p->aggregate_ms;
  }
  d->self_start_unix_ns = el__daemon_now_unix_ns();
}

/* The count self-metric i reports from totals t. */
static uint64_t self_value(const el__totals_t *t, int i) {
  static const el_tm_signal_t sig[4] = {EL_TM_SIGNAL_LOGS, EL_TM_SIGNAL_METRICS,
                                        EL_TM_SIGNAL_PROFILES,
                                        EL_TM_SIGNAL_TRACES};
  if (i == 0) return t->events;
  el_tm_signal_t s = sig[(i - 1) / 2];
  return (i - 1) % 2 ? t->rejected[s] : t->exported[s];
}

int el__daemon_self_metrics(el__daemon_t *d, int force) {
  el__totals_t t;
  int have = 0, n = 0;
  uint64_t now_ms = uv_now(&d->loop);
  for (int i = 0; i < 9; i++) {
    if (!d->self[i].desc.name) continue;
    uint64_t agg = d->self[i].agg_ms;
    int64_t w = (int64_t)(agg ? now_ms / agg : now_ms);
    if (!force && w == d->self[i].win) continue;
    d->self[i].win = w;
    if (!have) {
      el__daemon_totals(d, &t);
      have = 1;
    }
    el_tm_host_metric_point(d->store, &d->self[i].desc, d->self_start_unix_ns,
                            el__daemon_now_unix_ns(),
                            (int64_t)self_value(&t, i));
    n++;
  }
  return n;
}

/* Once per batch interval, what the reference logs per tick (spec §9,
 * §6.1): DEBUG "Received <n> events.", DEBUG "Exported <n> <signal>.",
 * ERROR "Rejected <n> <signal>.", and once WARN "No input after 10
 * ticks..." when a session delivered no event while its input was awaited
 * for 10 batch intervals (d_input_waits; never once the input ended). */
void el__daemon_log_progress(el__daemon_t *d, int force) {
  static const char *const what[EL_TM_NSIGNALS] = {"metrics", "logs",
                                                   "spans", "profiles"};
  uv_update_time(&d->loop);
  uint64_t now = uv_now(&d->loop);
  if (!force && now - d->log_last_ms < d->batch_ms) return;
  d->log_last_ms = now;
  el__totals_t t;
  el__daemon_totals(d, &t);
  note_peaks(d, &t);
  if (t.events > d->log_prev.events)
    el_log(EL_LOG_DEBUG, "Received %llu events.",
           (unsigned long long)(t.events - d->log_prev.events));
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    if (t.exported[s] > d->log_prev.exported[s])
      el_log(EL_LOG_DEBUG, "Exported %llu %s.",
             (unsigned long long)(t.exported[s] - d->log_prev.exported[s]),
             what[s]);
    if (t.rejected[s] > d->log_prev.rejected[s])
      el_log(EL_LOG_ERROR, "Rejected %llu %s.",
             (unsigned long long)(t.rejected[s] - d->log_prev.rejected[s]),
             what[s]);
  }
  if (!d->input_warned && !d->input_over && d->session_open && t.events == 0 &&
      d->awaited_ms >= 10 * d->batch_ms) {
    d->input_warned = 1;
    /* The reference's words first (a tick is one batch interval), then
     * what a tick is here (h63: "10 ticks" named no unit). */
    char unit[96];
    snprintf(unit, sizeof unit, " (a tick is one batch interval: %g s in all)",
             10 * (double)d->batch_ms / 1000);
    if (d->o->no_input_hint)
      el_log(EL_LOG_WARN, "No input after 10 ticks. %s%s", d->o->no_input_hint,
             unit);
    else if (el_ev_decoder_header(d->dec)) /* -l was given (h74) */
      el_log(EL_LOG_WARN,
             "No input after 10 ticks. The eventlog's header came, but no "
             "event yet: without --eventlog-flush-interval (GHC before "
             "9.2) events arrive only when a capability's 2 MiB buffer "
             "fills, and at exit.%s",
             unit);
    else
      el_log(EL_LOG_WARN,
             "No input after 10 ticks. Did you pass -l to the GHC RTS? "
             "(Without --eventlog-flush-interval, as with GHC 9.0, the "
             "eventlog arrives only when a capability's 2 MiB buffer "
             "fills, and at exit.)%s",
             unit);
  }
  d->log_prev = t;
}

