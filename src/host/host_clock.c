/* host_clock.c: session time. Two things every consumer of a live stream
 * needs and must never wait for:
 *
 *  - the clock, from eventlog time (ns since RTS start) to Unix time. Exact
 *    from the session's WALL_CLOCK_TIME (spec eventlog-format.md §3.5), or
 *    from a scan of a recorded file ahead of reading it; until then
 *    estimated from when the bytes arrived: the RTS wrote a block before any
 *    of its bytes could be received, and a block marker's end time is when
 *    it was written, so RTS start <= received - end_time. The smallest such
 *    bound wins; it tightens as blocks arrive (GHC 9.0 writes
 *    WALL_CLOCK_TIME into its global buffer, which reaches a reader at exit;
 *    eventlog-socket never repeats it after a reconnection, §5.4);
 *
 *  - the watermark: how far every capability has delivered its events.
 *    Each capability's blocks arrive in time order (§3.6), so no event of
 *    capability c older than the end of its last complete block can still
 *    come. In a recorded file every capability is waited for until the
 *    session ends, however far the other capabilities' blocks run ahead
 *    (bounded in memory only: ana_reorder.c's MAX_HELD): a GHC 9.0
 *    capability writes a block only when its 2 MiB buffer fills, which can
 *    cover many seconds of the others' events. Live, a capability silent
 *    for longer than its wait is not waited for, so an idle one does not
 *    stall the output; its events that then arrive behind the watermark
 *    are late (counted and warned about). Silence is quiet time: time
 *    during which the input had been read up to its writer and waited
 *    for more (el_host_input_waits, from the source's on_wait), never
 *    time spent processing a backlog, nor time this process did not run:
 *    the pump reports a wait again every 250 ms (EL_SRC_WAIT_BEAT_MS),
 *    and a stretch between two reports counts for at most twice that
 *    (MAX_STEP_NS), so a daemon stopped by SIGSTOP (Ctrl-Z, a paused VM)
 *    or blocked in a long callback while it waited does not give up on
 *    capabilities whose blocks the writer wrote meanwhile (they would
 *    all come late). The wait is twice the quiet time
 *    between the capability's last two blocks (the first counted from the
 *    session's start; the session's longest for a capability without
 *    one), at least the horizon (5 s), at most the longest wait (60 s,
 *    $EVENTLOG_LIVE_REORDER_MAX_WAIT_MS) or the
 *    horizon if longer. Live, a capability seen implies the lower-numbered
 *    ones (the RTS numbers them from 0), waited for from time 0, and the
 *    next one is waited for from time 0 during the horizon of quiet time
 *    after the session's first capability block (unless a scan's hint
 *    named the capabilities): a GHC 9.0 program's capability 1 may write
 *    its first block only after capability 0 has written its whole run,
 *    and one whose buffers never fill writes its header at start and
 *    every block at exit. The
 *    reorder buffer of the C analyses (ana_reorder.c) and the windows of
 *    the default processors (el.watermark) use it. The time-order Lua
 *    handlers (lua_order.c) use it lowered, in a recorded file, to the
 *    latest time of the events without a capability while the scan shows
 *    some of a type they want still to come (el__order_watermark): GHC
 *    9.0 writes its global block (heap samples, init events) at exit. The
 *    C analyses take no event without a capability (§5.2.3 of the
 *    reference behaviour), so theirs needs no such wait.
 *
 * docs/lua-api.md §3 ("The session clock"), §6 ("Ordering"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_internal.h"

#define DEFAULT_HORIZON_NS 5000000000ll
/* Live: the longest wait for a capability whose blocks come far apart
 * (unless the horizon is longer); $EVENTLOG_LIVE_REORDER_MAX_WAIT_MS. */
#define DEFAULT_MAX_WAIT_NS 60000000000ull
#define MAX_WAIT_ENV "EVENTLOG_LIVE_REORDER_MAX_WAIT_MS"
#define HORIZON_ENV "EVENTLOG_LIVE_REORDER_HORIZON_MS"

static el_unix_ns_t unix_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (el_unix_ns_t)ts.tv_sec * 1000000000u + (el_unix_ns_t)ts.tv_nsec;
}

static uint64_t mono_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* a - b for unsigned times, as a signed value clamped to int64. */
static int64_t diff_sat(uint64_t a, uint64_t b) {
  if (a >= b) return a - b > (uint64_t)INT64_MAX ? INT64_MAX
                                                  : (int64_t)(a - b);
  return b - a > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)(b - a);
}

/* Format Unix ns as an ISO 8601 UTC time with milliseconds. */
static const char *iso(int64_t unix_ns, char *buf, size_t size) {
  time_t s = (time_t)(unix_ns / 1000000000);
  struct tm tm;
  if (unix_ns < 0 || !gmtime_r(&s, &tm)) {
    snprintf(buf, size, "%lld ns", (long long)unix_ns);
    return buf;
  }
  size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, size - n, ".%03dZ",
           (int)(unix_ns % 1000000000 / 1000000));
  return buf;
}

/* A positive number of ms from environment variable name, in ns; dflt
 * when unset or empty, and when anything else (reported and ignored). */
static uint64_t env_ms(const char *name, uint64_t dflt, const char *what) {
  const char *env = getenv(name);
  if (!env || !*env) return dflt;
  char *end;
  errno = 0;
  long long ms = strtoll(env, &end, 10);
  if (errno || *end || ms <= 0 || ms > INT64_MAX / 1000000) {
    el_log(EL_LOG_WARN,
           "%s=\"%s\" is not a positive number of milliseconds; the %s "
           "stays at its default, %llu ms",
           name, env, what, (unsigned long long)(dflt / 1000000u));
    return dflt;
  }
  return (uint64_t)ms * 1000000u;
}

/* The live horizon: el_host_opts_t.horizon_ns, else
 * $EVENTLOG_LIVE_REORDER_HORIZON_MS, else 5 s. */
static el_rts_ns_t horizon_of(const el_host_t *h) {
  if (h->opts.horizon_ns > 0) return (el_rts_ns_t)h->opts.horizon_ns;
  return env_ms(HORIZON_ENV, DEFAULT_HORIZON_NS, "reorder horizon");
}

void el__clock_init(el_host_t *h) {
  memset(&h->clock, 0, sizeof h->clock);
  memset(&h->prog, 0, sizeof h->prog);
  h->prog.max_cap = h->prog.block_cap = h->prog.wm_cap = -1;
  h->prog.wm_dirty = 1;
  h->prog.horizon = horizon_of(h);
  h->prog.max_wait = env_ms(MAX_WAIT_ENV, DEFAULT_MAX_WAIT_NS, "longest wait");
}

/* One count of out-of-order events since the last report: a warning that
 * says what it means and what to change. */
static void warn_count(const el_host_t *h, uint64_t n, const char *what,
                       const char *stat, const char *effect) {
  if (!n) return;
  el_log(EL_LOG_WARN, "session %u: %llu %s (el.stats().%s); %s", h->sess.number,
         (unsigned long long)n, what, stat, effect);
}

void el__order_report(el_host_t *h) {
  el__progress_t *p = &h->prog;
  const el_host_stats_t *st = &h->st;
  char raise[256];
  snprintf(raise, sizeof raise,
           "raise the reorder horizon (now %llu ms: $%s) or the longest "
           "wait (now %llu ms: $%s) if a capability writes its blocks less "
           "often",
           (unsigned long long)(p->horizon / 1000000u), HORIZON_ENV,
           (unsigned long long)(p->max_wait / 1000000u), MAX_WAIT_ENV);
  char late[512], olate[384];
  snprintf(late, sizeof late,
           "thread blocked times, GC and capability usage spans may be off "
           "(running times and run counts are paired per capability; "
           "before 9.2, GHC writes a capability's events only when its "
           "2 MiB buffer fills, so a quieter capability's come late); %s",
           raise);
  snprintf(olate, sizeof olate, "time-order handlers saw them out of order; %s",
           raise);
  char oforced[160];
  snprintf(oforced, sizeof oforced,
           "raise max_held (now %zu: el.order(\"time\", {max_held = N}))",
           el__order_max(h));
  /* One row per count, in the order of p->told. */
  const struct {
    uint64_t now;       /* the count in el_host_stats_t */
    const char *what;   /* what was counted */
    const char *stat;   /* its name in el.stats() */
    const char *effect; /* what it means and what to change */
  } counts[] = {
      {st->reorder_late,
       "thread/GC events arrived after the reorder horizon (their "
       "capability silent past it, or first seen late)",
       "reorder_late", late},
      {st->reorder_forced,
       "thread/GC events were released before their turn (more than "
       "1M held while a capability's events were awaited)",
       "reorder_forced",
       "a capability wrote nothing for long while another wrote many "
       "events (GHC before 9.2 sends each capability's events in 2 MiB "
       "blocks, an idle one's seconds or minutes apart): thread blocked "
       "times and spans across the two may be off"},
      {st->order_late,
       "events arrived after the reorder horizon (their capability "
       "silent past it, or first seen late; or without a capability, in "
       "a global block read late: live, GHC 9.0 writes it at exit; or "
       "behind events released early, order_forced)",
       "order_late", olate},
      {st->order_forced,
       "events for time-order handlers were released before their turn",
       "order_forced", oforced},
  };
  _Static_assert(
      sizeof counts / sizeof counts[0] == sizeof p->told / sizeof p->told[0],
      "one row per el__progress_t.told");
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    warn_count(h, counts[i].now - p->told[i], counts[i].what, counts[i].stat,
               counts[i].effect);
    p->told[i] = counts[i].now;
  }
}

void el__clock_free(el_host_t *h) {
  el_free(h->clock.hints);
  el_free(h->clock.hint_caps);
  el_free(h->clock.hint_strs);
  h->clock.hints = NULL;
  h->clock.hint_caps = NULL;
  h->clock.hint_strs = NULL;
  h->clock.nhints = h->clock.next_hint = 0;
}

void el_host_received(el_host_t *h, el_unix_ns_t by_unix_ns, int live) {
  h->clock.received = by_unix_ns;
  if (h->clock.live == (live != 0)) return;
  h->clock.live = live != 0;
  /* live, time order offers no runs (lua_run.c, ana_direct_on) */
  if (h->dec) el__direct_sync(h, -1);
}

/* Copy the strings of v[0..n) into one block, *out, and point v at it.
 * Returns 0 or EL_ENOMEM. */
static int copy_hint_strs(el_host_hint_t *v, size_t n, char **out) {
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += v[i].rts_id.len + v[i].args.len;
  char *p = len ? el_malloc(len) : NULL;
  if (len && !p) return EL_ENOMEM;
  *out = p;
  for (size_t i = 0; i < n; i++) {
    el_strview_t *sv[2] = {&v[i].rts_id, &v[i].args};
    for (int k = 0; k < 2; k++) {
      if (!sv[k]->p) continue;
      if (!sv[k]->len) {
        sv[k]->p = ""; /* present, empty */
        continue;
      }
      memcpy(p, sv[k]->p, sv[k]->len);
      sv[k]->p = p;
      p += sv[k]->len;
    }
  }
  return 0;
}

int el_host_set_hints(el_host_t *h, const el_host_hint_t *hints, size_t n) {
  el__clock_free(h);
  if (n == 0) return 0;
  size_t ncaps = 0;
  for (size_t i = 0; i < n; i++) ncaps += hints[i].ncaps;
  el_host_hint_t *v = el_calloc(n, sizeof *v);
  uint16_t *caps = ncaps ? el_calloc(ncaps, sizeof *caps) : NULL;
  if (!v || (ncaps && !caps)) {
    el_free(v);
    el_free(caps);
    return EL_ENOMEM;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    v[i] = hints[i];
    if (hints[i].ncaps) {
      memcpy(caps + k, hints[i].caps, hints[i].ncaps * sizeof *caps);
      v[i].caps = caps + k;
      k += hints[i].ncaps;
    } else {
      v[i].caps = NULL;
    }
  }
  if (copy_hint_strs(v, n, &h->clock.hint_strs) < 0) {
    el_free(v);
    el_free(caps);
    return EL_ENOMEM;
  }
  h->clock.hints = v;
  h->clock.hint_caps = caps;
  h->clock.nhints = n;
  h->clock.next_hint = 0;
  return 0;
}

el_host_clock_t el_host_clock(const el_host_t *h) { return h->clock.state; }

/* {====== capability progress ======} */

/* The most a stretch of a wait between two reports of it counts (quiet
 * time): twice the pump's beat. The rest of a longer one the process did
 * not run (SIGSTOP, a paused VM) or its loop was blocked, while the writer
 * may have written: had it been running, the beat would have come. */
#define MAX_STEP_NS (2 * (uint64_t)EL_SRC_WAIT_BEAT_MS * 1000000u)

/* The quiet time of a stretch of a wait from its last report, since_ns,
 * to now_ns (monotonic). */
static uint64_t step_of(uint64_t since_ns, uint64_t now_ns) {
  uint64_t d = now_ns > since_ns ? now_ns - since_ns : 0;
  return d < MAX_STEP_NS ? d : MAX_STEP_NS;
}

/* The quiet clock, which measures a live capability's silence: the time
 * the input has spent waiting for its writer while this process ran
 * (el_host_input_waits), in monotonic ns; or, from a source that does not
 * report its waits, the wall clock (Unix ns). Without a clock read while
 * bytes are being fed. */
static uint64_t quiet_now(const el_host_t *h) {
  const el__progress_t *p = &h->prog;
  if (!p->waits_known) return unix_now_ns();
  if (!p->waiting) return p->waited_ns;
  return p->waited_ns + step_of(p->wait_since_ns, mono_now_ns());
}

/* When the bytes being fed arrived, on the quiet clock: the source's
 * arrival time when it gave one (wall clock) and does not report waits. */
static uint64_t arrival_now(const el_host_t *h) {
  if (!h->prog.waits_known && h->clock.received) return h->clock.received;
  return quiet_now(h);
}

void el_host_input_waits(el_host_t *h, int waiting) {
  el__progress_t *p = &h->prog;
  if (!p->waits_known) {
    /* From the wall clock to the quiet clock: what arrived so far
     * arrived now. */
    p->waits_known = 1;
    p->waiting = 0;
    p->waited_ns = 0;
    p->session_at = p->first_block_at = 0;
    memset(p->arrived, 0, sizeof p->arrived);
  }
  waiting = waiting != 0;
  if (!waiting && !p->waiting) return;
  /* A report during a wait (the pump's beat, or its end) closes a stretch
   * of it: counted up to MAX_STEP_NS. */
  uint64_t now = mono_now_ns();
  if (p->waiting) p->waited_ns += step_of(p->wait_since_ns, now);
  p->wait_since_ns = now;
  p->waiting = waiting;
}

/* Live: cap delivered something now. */
static void arrived(el_host_t *h, unsigned cap) {
  if (!h->clock.live) return;
  h->prog.arrived[cap] = arrival_now(h);
}

static void expect(el_host_t *h, unsigned cap, el_rts_ns_t t);

static void progress(el_host_t *h, unsigned cap, el_rts_ns_t t) {
  el__progress_t *p = &h->prog;
  if (cap >= EL__MAX_CAPS) return;
  if (p->state[cap] == CAP_UNKNOWN && h->clock.live) {
    /* The RTS numbers its capabilities from 0 without gaps: the lower
     * ones exist too, and may have written since the start (GHC 9.0
     * writes CAP_CREATE into its global block, which comes at exit). */
    for (unsigned c = 0; c < cap; c++) expect(h, c, 0);
  }
  if (p->state[cap] != CAP_SEEN) {
    arrived(h, cap);
    if (p->state[cap] == CAP_UNKNOWN) {
      p->last[cap] = t;
      if ((int)cap > p->max_cap) p->max_cap = (int)cap;
    }
    p->state[cap] = CAP_SEEN;
    p->wm_dirty = 1;
  }
  if (t > p->last[cap]) {
    p->last[cap] = t;
    if ((int)cap == p->wm_cap) p->wm_dirty = 1;
  }
}

void el__progress_event(el_host_t *h, unsigned cap, el_rts_ns_t t) {
  progress(h, cap, t);
  /* Its event arrived now (cheap: no clock read while bytes are fed from
   * a source that reports its waits, or that told their arrival). */
  if (cap < EL__MAX_CAPS && h->clock.live &&
      (h->prog.waits_known || h->clock.received))
    h->prog.arrived[cap] = arrival_now(h);
}

/* A capability that exists but has delivered nothing yet (a hint, or
 * CAP_CREATE): waited for from time t on. */
static void expect(el_host_t *h, unsigned cap, el_rts_ns_t t) {
  el__progress_t *p = &h->prog;
  if (cap >= EL__MAX_CAPS || p->state[cap] != CAP_UNKNOWN) return;
  p->state[cap] = CAP_EXPECTED;
  p->last[cap] = t;
  arrived(h, cap);
  if ((int)cap > p->max_cap) p->max_cap = (int)cap;
  p->wm_dirty = 1;
}

/* Live: how long capability c may stay silent (quiet time) and still be
 * waited for: twice the gap between its last two blocks (for one without
 * two blocks yet, the longest gap of the session's capabilities, the first
 * block's counted from the session's start), at least the horizon, at
 * most p->max_wait or the horizon if longer. A GHC 9.0 capability writes
 * a block when its 2 MiB buffer fills, so a quiet one's blocks come
 * minutes apart while a busy one's come every few ms. */
static uint64_t wait_of(const el__progress_t *p, int c) {
  uint64_t g = p->gap[c] ? p->gap[c] : p->gap_max;
  uint64_t w = g > UINT64_MAX / 2 ? UINT64_MAX : 2 * g;
  uint64_t max = p->horizon > p->max_wait ? p->horizon : p->max_wait;
  if (w < p->horizon) return p->horizon;
  return w > max ? max : w;
}

/* Live: a block of cap arrives: note the quiet time since its previous
 * one (or since the session began) in p->gap. */
static void block_gap(el_host_t *h, unsigned cap) {
  el__progress_t *p = &h->prog;
  uint64_t now = arrival_now(h);
  uint64_t prev = p->state[cap] == CAP_SEEN ? p->arrived[cap] : p->session_at;
  uint64_t g = now > prev ? now - prev : 0;
  if (g < p->gap[cap] / 2) g = p->gap[cap] / 2;
  p->gap[cap] = g ? g : 1;
  if (g > p->gap_max) p->gap_max = g;
}

/* Live: whether quiet time now lies within the horizon from the session's
 * first capability block (before one, from its start). */
static int quiet_within(const el__progress_t *p, uint64_t now) {
  uint64_t from = p->any_block ? p->first_block_at : p->session_at;
  return now <= from || now - from <= p->horizon;
}

int el__watermark(el_host_t *h, el_rts_ns_t *wm) {
  el__progress_t *p = &h->prog;
  if (p->wm_dirty) {
    /* Live: silence is quiet time since the last delivery. A recorded
     * file's capabilities are never given up on by time. */
    uint64_t now = h->clock.live ? quiet_now(h) : 0;
    el_rts_ns_t best = UINT64_MAX, next = UINT64_MAX;
    int bc = -1;
    for (int c = 0; c <= p->max_cap; c++) {
      if (p->state[c] == CAP_UNKNOWN) continue;
      el_rts_ns_t last = p->last[c];
      if (h->clock.live && now > p->arrived[c] &&
          now - p->arrived[c] > wait_of(p, c))
        continue; /* silent */
      if (last < best) {
        next = best;
        best = last;
        bc = c;
      } else if (last < next) {
        next = last;
      }
    }
    if (h->clock.live && !h->clock.hinted && p->max_cap + 1 < EL__MAX_CAPS &&
        !p->next_given_up && quiet_within(p, now)) {
      /* The next capability may exist and not have written yet (a GHC
       * 9.0 capability's first block can come after another's whole
       * run): waited for from time 0 for the horizon of quiet time from
       * the session's first capability block. Not from its header: a GHC
       * 9.0 program whose buffers never fill writes its header at start
       * and all its blocks at exit, back to back, so the quiet time
       * before the first block says nothing about the next one. */
      next = best;
      best = 0;
      bc = p->max_cap + 1;
    }
    p->wm = best;
    /* Live too: silence only takes capabilities out of the minimum, so
     * the watermark it gives is never below this one (a capability
     * coming back after its silence is late either way). */
    p->wm_next = next;
    p->wm_cap = bc;
    p->wm_dirty = 0;
  }
  if (p->wm_cap < 0) return -1;
  *wm = p->wm;
  return 0;
}

int el__progress_held(el_host_t *h) {
  el__progress_t *p = &h->prog;
  el_rts_ns_t wm;
  if (!h->clock.live || p->next_given_up || el__watermark(h, &wm) < 0 ||
      p->wm_cap != p->max_cap + 1 || p->wm_cap >= EL__MAX_CAPS ||
      p->state[p->wm_cap] != CAP_UNKNOWN)
    return 0;
  p->next_given_up = 1;
  p->wm_dirty = 1;
  el_log(EL_LOG_DEBUG,
         "session %u: capability %d not waited for any more: %u events "
         "held while it had written nothing (a fast program; its events, "
         "if it comes, are late)",
         h->sess.number, p->wm_cap, EL__NEXT_CAP_HELD);
  return 1;
}

/* {====== events without a capability ======} */

/* A hinted session: its events without a capability, if any, are still to
 * come (from time 0 on). */
static void nocap_expect(el__progress_t *p, const el_host_hint_t *hint) {
  if (!hint->has_nocap) return;
  p->nocap_wait = 1;
  p->nocap_high = hint->nocap_high != 0;
  p->nocap_until = hint->nocap_last_offset;
  memcpy(p->nocap_types, hint->nocap_types, sizeof p->nocap_types);
}

static void nocap_seen(el__progress_t *p, el_rts_ns_t t) {
  if (t > p->nocap_last) p->nocap_last = t;
}

/* A block marker ev at its byte offset: the global block before it, if
 * any, is complete (its events reach its end time); past the last event
 * without a capability nothing more of them comes; the block it opens is
 * a global one (global) ending at end. */
static void nocap_block(el__progress_t *p, const el_ev_event_t *ev, int global,
                        el_rts_ns_t end) {
  if (p->nocap_block) nocap_seen(p, p->nocap_block_end);
  p->nocap_block = 0;
  if (!p->nocap_wait) return;
  if (ev->offset > p->nocap_until) {
    p->nocap_wait = 0;
    return;
  }
  if (global) {
    nocap_seen(p, ev->t_ns); /* its events are at or after its start */
    p->nocap_block = 1;
    p->nocap_block_end = end;
  }
}

void el__progress_nocap(el_host_t *h, const el_ev_event_t *ev) {
  el__progress_t *p = &h->prog;
  if (!p->nocap_wait) return;
  nocap_seen(p, ev->t_ns);
  if (ev->offset >= p->nocap_until) p->nocap_wait = 0; /* the last one */
}

/* Whether the time-order handlers want a type that comes without a
 * capability in this session (cached in p->nocap_ord). */
static int nocap_wanted(const el_host_t *h, el__progress_t *p) {
  if (p->nocap_ord >= 0) return p->nocap_ord;
  int want = p->nocap_high && (h->star_flag & EL__F_ORD);
  for (int w = 0; w < 4 && !want; w++)
    for (uint64_t b = p->nocap_types[w]; b && !want; b &= b - 1) {
      int type = w * 64 + __builtin_ctzll(b);
      want = type < EL__HOST_NTYPES ? (h->flags[type] & EL__F_ORD) != 0
                                    : (h->star_flag & EL__F_ORD) != 0;
    }
  p->nocap_ord = want;
  return want;
}

int el__order_watermark(el_host_t *h, el_rts_ns_t *wm) {
  el__progress_t *p = &h->prog;
  int rc = el__watermark(h, wm);
  if (!p->nocap_wait || !nocap_wanted(h, p)) return rc;
  if (rc < 0 || p->nocap_last < *wm) *wm = p->nocap_last;
  return 0;
}

/* {====== the clock ======} */

int el__clock_wall_t(el_host_t *h, el_rts_ns_t *t) {
  const el__clock_t *c = &h->clock;
  if (!c->live || c->state == EL_HOST_CLOCK_NONE) return -1;
  int64_t d = diff_sat(unix_now_ns(), (uint64_t)(c->anchor < 0 ? 0
                                                              : c->anchor));
  if (c->anchor < 0 || d < 0) return -1;
  *t = (el_rts_ns_t)d;
  return 0;
}

el_unix_ns_t el__host_unix(el_host_t *h, el_rts_ns_t t) {
  const el__clock_t *c = &h->clock;
  int64_t anchor;
  if (c->state != EL_HOST_CLOCK_NONE) {
    anchor = c->anchor;
  } else if (c->received) {
    /* A stream without block markers: bound by its latest event. */
    anchor = diff_sat(c->received, h->now > t ? h->now : t);
  } else {
    return 0;
  }
  /* anchor + t, clamped to [0, INT64_MAX] (Lua integers are signed). */
  if (anchor < 0) {
    uint64_t back = (uint64_t)(-(anchor + 1)) + 1;
    return t > back ? (t - back > (uint64_t)INT64_MAX ? (el_unix_ns_t)INT64_MAX
                                                      : t - back)
                    : 0;
  }
  uint64_t r = (uint64_t)anchor + t;
  if (r < t || r > (uint64_t)INT64_MAX) return (el_unix_ns_t)INT64_MAX;
  return r;
}

el_unix_ns_t el_host_stream_unix_ns(el_host_t *h) {
  if (h->clock.state == EL_HOST_CLOCK_NONE) return 0;
  return el__host_unix(h, h->now);
}

/* el.session.clock_from (docs/lua-api.md §3 "The session clock"). */
static const char *clock_from(const el__clock_t *c) {
  if (c->state == EL_HOST_CLOCK_EXACT) return "WALL_CLOCK_TIME";
  if (c->from_next) return "next_session";
  return c->from_file ? "file_mtime" : "arrival";
}

/* A tighter (smaller) estimate of the anchor from a bound. Returns 1 if
 * the clock changed. */
static int estimate(el_host_t *h, el_rts_ns_t t) {
  el__clock_t *c = &h->clock;
  if (c->state == EL_HOST_CLOCK_EXACT || !c->received) return 0;
  int64_t cand = diff_sat(c->received, t);
  if (c->state == EL_HOST_CLOCK_ESTIMATED && cand >= c->anchor) return 0;
  int first = c->state == EL_HOST_CLOCK_NONE;
  c->state = EL_HOST_CLOCK_ESTIMATED;
  c->anchor = cand;
  c->from_file = !c->live;
  c->from_next = 0;
  if (first && el_log_enabled(EL_LOG_DEBUG)) {
    char b[40];
    el_log(EL_LOG_DEBUG,
           "session %u: no WALL_CLOCK_TIME yet; clock estimated from the %s "
           "(RTS start at or before %s); times are marked "
           "eventlog_live.clock=%s until it arrives",
           h->sess.number, c->live ? "arrival of its bytes"
                                   : "file's modification time",
           iso(cand, b, sizeof b), clock_from(c));
  }
  return 1;
}

/* The clock of hinted session k of a recorded file without
 * WALL_CLOCK_TIME (docs/lua-api.md §3 "The session clock"): the sessions
 * of a file ran one after another, so each ends when the next one's RTS
 * started (exact from its WALL_CLOCK_TIME, else found the same way), and
 * the last one when the file was last modified (c->received): RTS start =
 * that end - the session's largest time. Without this every such session
 * of a multi-session file (a tee of eventlog-socket connections; GHC 9.0's
 * eventlog-socket never sends WALL_CLOCK_TIME) would end at the
 * modification time, their times laid over each other. Later bounds
 * (estimate) are all later than it, so it holds for the session. Its
 * clock_from: "next_session" when the end it was given rests on a later
 * session's WALL_CLOCK_TIME (the modification time played no part), else
 * "file_mtime". */
static void from_file_end(el_host_t *h, size_t k) {
  el__clock_t *c = &h->clock;
  int64_t end = c->received;
  int next = 0; /* end rests on a later session's exact start */
  for (size_t j = c->nhints; j-- > k;) {
    const el_host_hint_t *x = &c->hints[j];
    int wall = x->has_wall_clock && j > k;
    int64_t start =
        wall ? x->start_unix_ns : diff_sat((el_unix_ns_t)end, x->max_t);
    if (start < end) { /* never after the next one's end */
      end = start;
      if (wall) next = 1;
    }
  }
  int first = c->state == EL_HOST_CLOCK_NONE;
  c->state = EL_HOST_CLOCK_ESTIMATED;
  c->anchor = end;
  c->from_file = 1;
  c->from_next = next;
  if (first && el_log_enabled(EL_LOG_DEBUG)) {
    char b[40];
    el_log(EL_LOG_DEBUG,
           "session %u: no WALL_CLOCK_TIME in the file; RTS start estimated "
           "at %s from %s, the sessions after it taken to have run one "
           "after another; times are marked eventlog_live.clock=%s",
           h->sess.number, iso(end, b, sizeof b),
           next ? "a later session's WALL_CLOCK_TIME"
                : "the file's modification time",
           clock_from(c));
  }
}

/* Tell the clock hook (el_host_set_clock_hook) the session's clock as it
 * now is, with the session's largest time so far: of its events (the
 * stream time) and its block markers' end times, as a scan's hint max_t
 * (rp_scan.c). */
static void clock_told(el_host_t *h) {
  const el__clock_t *c = &h->clock;
  if (!h->clock_fn) return;
  int known = c->state != EL_HOST_CLOCK_NONE;
  el_unix_ns_t start = known && c->anchor > 0 ? (el_unix_ns_t)c->anchor : 0;
  int settled =
      c->state == EL_HOST_CLOCK_EXACT || (known && c->hinted && !c->live);
  el_rts_ns_t end_t = h->now > c->block_end ? h->now : c->block_end;
  h->clock_fn(h->clock_ud, h->sess.number, start, end_t, settled);
}

const el_host_hint_t *el__clock_session(el_host_t *h) {
  el__clock_t *c = &h->clock;
  el__progress_t *p = &h->prog;
  c->state = EL_HOST_CLOCK_NONE;
  c->anchor = 0;
  c->from_file = 0;
  c->from_next = 0;
  c->hinted = 0;
  c->block_end = 0;
  for (int i = 0; i <= p->max_cap; i++) {
    p->state[i] = CAP_UNKNOWN;
    p->gap[i] = 0;
  }
  p->session_at = c->live ? arrival_now(h) : 0;
  p->any_block = p->next_given_up = 0;
  p->gap_max = 0;
  p->max_cap = p->block_cap = p->wm_cap = -1;
  p->wm_dirty = 1;
  p->nocap_wait = p->nocap_block = 0;
  p->nocap_ord = -1;
  p->nocap_last = 0;
  if (c->next_hint >= c->nhints) {
    clock_told(h);
    return NULL;
  }
  const el_host_hint_t *hint = &c->hints[c->next_hint++];
  c->hinted = 1;
  for (size_t i = 0; i < hint->ncaps; i++) expect(h, hint->caps[i], 0);
  nocap_expect(p, hint);
  if (hint->has_wall_clock) {
    c->state = EL_HOST_CLOCK_EXACT;
    c->anchor = hint->start_unix_ns;
  } else if (!c->live && c->received) {
    from_file_end(h, (size_t)(hint - c->hints));
  } else {
    estimate(h, hint->max_t);
  }
  clock_told(h);
  return hint;
}

void el__clock_end(el_host_t *h) {
  el__progress_t *p = &h->prog;
  if (p->block_cap >= 0) progress(h, (unsigned)p->block_cap, p->block_end);
  p->block_cap = -1;
  p->nocap_wait = p->nocap_block = 0; /* everything has come */
  clock_told(h); /* its largest time is final: where it ends */
}

int el__clock_event(el_host_t *h, const el_ev_event_t *ev) {
  el__progress_t *p = &h->prog;
  el__clock_t *c = &h->clock;
  if (!ev->known) return 0;
  if (ev->type == EL_EV_BLOCK_MARKER && ev->nfields >= 3) {
    /* The previous block is complete: its capability has delivered
     * everything up to its end time. */
    if (p->block_cap >= 0) progress(h, (unsigned)p->block_cap, p->block_end);
    p->block_cap = -1;
    uint64_t cap = ev->v[2].u, end = ev->v[1].u;
    if (end > c->block_end) c->block_end = end;
    nocap_block(p, ev, cap == EL_EV_NO_CAP, end);
    if (cap != EL_EV_NO_CAP && cap < EL__MAX_CAPS) {
      if (c->live && !p->any_block) {
        p->any_block = 1;
        p->first_block_at = arrival_now(h);
      }
      p->block_cap = (int)cap;
      p->block_end = end;
      if (c->live) block_gap(h, (unsigned)cap);
      progress(h, (unsigned)cap, ev->t_ns);
      arrived(h, (unsigned)cap); /* its block arrived now */
    }
    p->wm_dirty = 1;  /* the stream time moved: silent caps may drop */
    if (!estimate(h, end > ev->t_ns ? end : ev->t_ns)) return 0;
    clock_told(h);
    return 1;
  }
  if (ev->type == EL_EV_WALL_CLOCK_TIME && ev->nfields >= 3) {
    uint64_t sec = ev->v[1].u, nsec = ev->v[2].u;
    uint64_t wall = sec > (uint64_t)INT64_MAX / 1000000000u
                        ? (uint64_t)INT64_MAX
                        : sec * 1000000000u + nsec;
    int64_t exact = diff_sat(wall, ev->t_ns);
    if (c->state == EL_HOST_CLOCK_EXACT && c->anchor == exact) return 0;
    if (el_log_enabled(EL_LOG_DEBUG)) {
      char b[40];
      if (c->state == EL_HOST_CLOCK_ESTIMATED)
        el_log(EL_LOG_DEBUG,
               "session %u: WALL_CLOCK_TIME: exact clock (RTS start %s); the "
               "estimate from the %s was %.3f ms late",
               h->sess.number, iso(exact, b, sizeof b),
               c->from_next   ? "next session's start"
               : c->from_file ? "file's modification time"
                              : "arrival",
               (double)(c->anchor - exact) / 1e6);
      else
        el_log(EL_LOG_DEBUG, "session %u: WALL_CLOCK_TIME: RTS start %s",
               h->sess.number, iso(exact, b, sizeof b));
    }
    c->state = EL_HOST_CLOCK_EXACT;
    c->anchor = exact;
    clock_told(h);
    return 1;
  }
  if (ev->type == EL_EV_CAP_CREATE && ev->nfields >= 1) {
    expect(h, (unsigned)ev->v[0].u, ev->t_ns);
    return 0;
  }
  return 0;
}

void el__clock_push_fields(el_host_t *h, lua_State *L, int tbl) {
  const el__clock_t *c = &h->clock;
  tbl = lua_absindex(L, tbl);
  if (c->state == EL_HOST_CLOCK_NONE) {
    lua_pushnil(L);
    lua_setfield(L, tbl, "start_unix_ns");
    lua_pushnil(L);
    lua_setfield(L, tbl, "clock");
    lua_pushnil(L);
    lua_setfield(L, tbl, "clock_from");
    return;
  }
  lua_pushinteger(L, c->anchor);
  lua_setfield(L, tbl, "start_unix_ns");
  lua_pushstring(L, c->state == EL_HOST_CLOCK_EXACT ? "exact" : "estimated");
  lua_setfield(L, tbl, "clock");
  lua_pushstring(L, clock_from(c));
  lua_setfield(L, tbl, "clock_from");
}
