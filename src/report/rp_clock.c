/* rp_clock.c: every time the page keeps is placed with its session's
 * final clock (report.h el_rp_clock).
 *
 * The records reach the reducer with Unix times, converted from eventlog
 * time with the session's clock as it was when they were emitted
 * (docs/lua-api.md §3 "The session clock"). A live stream (a socket, a
 * FIFO, a pipe) is dated from the arrival of its bytes until its
 * WALL_CLOCK_TIME comes, which GHC 9.0 writes at exit: a recorded file
 * piped in (`cat a.eventlog b.eventlog | eventlog-live report -`) was
 * dated at the time it was read, days after it ran, and its first
 * session's allocation points landed there, far off the axis of its
 * other records. So while the current session's clock may still move,
 * what the reducer is given (store batches, the report script's census
 * and series points) is held, in order, each entry with the clock its
 * times were converted with; when the clock settles (exact, or the
 * session ends with the estimate it has) the entries are reduced in the
 * same order, their times moved by (final start - their start): every
 * record of a session then stands where its eventlog time puts it with
 * the session's last clock, as a recorded file's scan would have put
 * it. A session that ends with its clock still estimated (a GHC 9.0 run
 * killed before its WALL_CLOCK_TIME was written) and is followed by
 * another is placed as a recorded file's scan places it, to end where
 * the next one started: its records stay held, with its largest eventlog
 * time, until a later session's clock settles, and its place on the axis
 * and its threads move with them; at the end of the input, with no later
 * settled clock, it keeps its last estimate. The caller flushes the store
 * before telling a change, so a batch's records were all converted with
 * the clock the reducer knew. */
#include <string.h>

#include "../telemetry/telemetry_batch.h"
#include "rp_internal.h"

/* Records in batch b (its points, logs, spans or samples). */
static size_t batch_records(const el_tm_batch_t *b) {
  size_t n = 0;
  el_tm_batch_points(b, &n);
  if (n) return n;
  el_tm_batch_logs(b, &n);
  if (n) return n;
  el_tm_batch_spans(b, &n);
  if (n) return n;
  el_tm_batch_samples(b, &n);
  return n;
}

static void held_free(rp_held_t *e) {
  if (e->kind == RP_HELD_BATCH) el_tm_batch_free(e->b);
  el_free(e->label);
  el_free(e);
}

static void census_begin(el_rp_t *rp, uint64_t t) {
  el__rp_seen(rp, t);
  el__rp_heap_census_begin(&rp->heap, t);
}

static int census_sample(el_rp_t *rp, uint64_t t, const char *label, size_t len,
                         double bytes) {
  el__rp_seen(rp, t);
  return el__rp_heap_sample(&rp->heap, t, label, len, bytes, NULL);
}

static void point(el_rp_t *rp, size_t section, size_t line, uint64_t t,
                  double v) {
  rp_section_t *s = rp->sections[section];
  long i = el__rp_cols_fit(&s->cols, t);
  if (i < 0) {
    s->dropped++;
    return;
  }
  el__rp_seen(rp, t);
  s->points++;
  el__rp_gauge_add(el__rp_cols_el(&s->cols, line, (size_t)i), t, v);
}

/* Reduce entry e with its times moved by off ns. */
static void held_reduce(el_rp_t *rp, rp_held_t *e, int64_t off) {
  uint64_t t = el__rp_shift(e->t, off);
  switch (e->kind) {
  case RP_HELD_BATCH:
    el__rp_reduce(rp, e->sig, e->b, off);
    break;
  case RP_HELD_CENSUS_BEGIN:
    census_begin(rp, t);
    break;
  case RP_HELD_CENSUS_SAMPLE:
    census_sample(rp, t, e->label, e->len, e->v); /* out of memory: lost */
    break;
  case RP_HELD_POINT:
    point(rp, e->section, e->line, t, e->v);
    break;
  }
}

/* Session `number`, placed to end where the next one starts: its RTS
 * start moved from `from` to `to`: where it lies on the axis, its
 * threads' times and, the first session, the header's RTS start, the
 * axis origin and where its clock came from ("next_session", as the host
 * names a recorded file's session placed so, host_clock.c; no longer the
 * arrival of its bytes). */
static void session_moved(el_rp_t *rp, uint64_t number, uint64_t from,
                          uint64_t to) {
  int64_t off = (int64_t)(to - from); /* two's complement */
  for (size_t i = 0; i < rp->nspans; i++) {
    rp_span_t *sp = &rp->spans[i];
    if (sp->number != number) continue;
    sp->start_unix_ns = el__rp_shift(sp->start_unix_ns, off);
    sp->end_unix_ns = el__rp_shift(sp->end_unix_ns, off);
  }
  for (size_t i = 0; i < rp->nthreads; i++)
    if (rp->threads[i].session == number)
      rp->threads[i].start_unix_ns =
          el__rp_shift(rp->threads[i].start_unix_ns, off);
  if (rp->session.number == number && rp->session.start_unix_ns) {
    rp->session.start_unix_ns = el__rp_shift(rp->session.start_unix_ns, off);
    rp->origin = rp->session.start_unix_ns;
    el_free(rp->session.clock_from);
    rp->session.clock_from = el_strdup("next_session"); /* NULL: none */
  }
}

/* The final start of each pending session: chained, each ends where the
 * next one starts (start = that start - its end_t), the last one where
 * the current session, whose clock is final, starts (docs/lua-api.md §3
 * "The session clock": a recorded file's sessions without
 * WALL_CLOCK_TIME); else each keeps its last clock. */
static void place_pending(el_rp_t *rp, bool chained) {
  uint64_t next = rp->clk_start;
  for (size_t i = rp->npend; i-- > 0;) {
    rp_pending_t *q = &rp->pend[i];
    q->final = q->start;
    if (!chained || !next) continue;
    uint64_t at = next > q->end_t ? next - q->end_t : 1;
    if (q->start) session_moved(rp, q->session, q->start, at);
    if (q->start) q->final = at;
    next = at;
  }
}

/* Reduce everything held, in order, each entry moved to the final clock
 * of its session: the current one's as it is, the pending sessions' from
 * place_pending(chained). */
static void release(el_rp_t *rp, bool chained) {
  place_pending(rp, chained);
  rp_held_t *e = rp->held;
  rp->held = NULL;
  rp->held_tail = &rp->held;
  rp->nheld = 0;
  size_t k = 0; /* the pending session of e, if any (entries in order) */
  while (e) {
    rp_held_t *next = e->next;
    while (k < rp->npend && rp->pend[k].session < e->session) k++;
    uint64_t to = k < rp->npend && rp->pend[k].session == e->session
                      ? rp->pend[k].final
                      : rp->clk_start;
    int64_t off = 0;
    if (e->start && to) off = (int64_t)(to - e->start); /* two's complement */
    rp->held_start = to;
    held_reduce(rp, e, off);
    rp->held_start = 0;
    held_free(e);
    e = next;
  }
  rp->npend = 0;
}

void el__rp_release(el_rp_t *rp) { release(rp, false); }

/* Append e (converted with the current clock) to the held records; n:
 * the records it holds. */
static void hold(el_rp_t *rp, rp_held_t *e, size_t n) {
  e->start = rp->clk_start;
  e->session = rp->clk_session;
  if (!rp->held) rp->held_tail = &rp->held;
  *rp->held_tail = e;
  rp->held_tail = &e->next;
  rp->nheld += n;
  if (rp->nheld > RP_HELD_MAX) {
    rp->held_overflow++;
    el__rp_release(rp);
  }
}

/* A zeroed entry of kind k, or NULL when out of memory. */
static rp_held_t *held_new(int k) {
  rp_held_t *e = el_calloc(1, sizeof *e);
  if (e) e->kind = k;
  return e;
}

void el__rp_take_batch(el_rp_t *rp, el_tm_signal_t sig, el_tm_batch_t *b) {
  rp_held_t *e = rp->clk_moves ? held_new(RP_HELD_BATCH) : NULL;
  if (!e) { /* settled (or out of memory: the times as they are) */
    el__rp_reduce(rp, sig, b, 0);
    el_tm_batch_free(b);
    return;
  }
  e->sig = sig;
  e->b = b;
  hold(rp, e, batch_records(b));
}

int el__rp_take_census_begin(el_rp_t *rp, uint64_t t) {
  if (!rp->clk_moves) {
    census_begin(rp, t);
    return 0;
  }
  rp_held_t *e = held_new(RP_HELD_CENSUS_BEGIN);
  if (!e) return EL_ENOMEM;
  e->t = t;
  hold(rp, e, 1);
  return 0;
}

int el__rp_take_census_sample(el_rp_t *rp, uint64_t t, const char *label,
                              size_t len, double bytes) {
  if (!rp->clk_moves) return census_sample(rp, t, label, len, bytes);
  rp_held_t *e = held_new(RP_HELD_CENSUS_SAMPLE);
  char *copy = e ? el_malloc(len + 1) : NULL;
  if (!copy) {
    el_free(e);
    return EL_ENOMEM;
  }
  memcpy(copy, label, len);
  copy[len] = '\0';
  e->t = t;
  e->label = copy;
  e->len = len;
  e->v = bytes;
  hold(rp, e, 1);
  return 0;
}

int el__rp_take_point(el_rp_t *rp, size_t section, size_t line, uint64_t t,
                      double v) {
  if (!rp->clk_moves) {
    point(rp, section, line, t, v);
    return 0;
  }
  rp_held_t *e = held_new(RP_HELD_POINT);
  if (!e) return EL_ENOMEM;
  e->t = t;
  e->v = v;
  e->section = section;
  e->line = line;
  hold(rp, e, 1);
  return 0;
}

/* The session that just ended, its clock not settled, is kept held for a
 * later session's settled clock to place (false: out of memory). */
static bool pend(el_rp_t *rp) {
  if (rp->npend == rp->pend_cap) {
    size_t cap = rp->pend_cap ? 2 * rp->pend_cap : 4;
    rp_pending_t *v = el_realloc(rp->pend, cap * sizeof *v);
    if (!v) return false;
    rp->pend = v;
    rp->pend_cap = cap;
  }
  rp->pend[rp->npend++] = (rp_pending_t){.session = rp->clk_session,
                                         .start = rp->clk_start,
                                         .end_t = rp->clk_end_t};
  return true;
}

void el_rp_clock(el_rp_t *rp, uint64_t session, el_unix_ns_t start_unix_ns,
                 uint64_t end_t, int settled) {
  /* A new session: the previous one's last clock is its final one when
   * settled; else it waits, held, for a later settled clock to place it
   * (at the end of input, its last clock stands). */
  if (session != rp->clk_session &&
      !(rp->clk_moves && rp->clk_session && pend(rp)))
    release(rp, false);
  rp->clk_session = session;
  rp->clk_start = start_unix_ns;
  rp->clk_end_t = end_t;
  rp->clk_moves = !settled;
  if (settled) release(rp, true);
}

void el_rp_settle(el_rp_t *rp) {
  release(rp, false);
  rp->clk_moves = false;
}

void el__rp_held_free(el_rp_t *rp) {
  rp_held_t *e = rp->held;
  while (e) {
    rp_held_t *next = e->next;
    held_free(e);
    e = next;
  }
  rp->held = NULL;
  rp->nheld = 0;
  el_free(rp->pend);
  rp->pend = NULL;
  rp->npend = rp->pend_cap = 0;
}
