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
 * it. The caller flushes the store before telling a change, so a batch's
 * records were all converted with the clock the reducer knew. */
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

void el__rp_release(el_rp_t *rp) {
  rp_held_t *e = rp->held;
  rp->held = NULL;
  rp->held_tail = &rp->held;
  rp->nheld = 0;
  while (e) {
    rp_held_t *next = e->next;
    int64_t off = 0;
    if (e->start && rp->clk_start)
      off = (int64_t)(rp->clk_start - e->start); /* two's complement */
    held_reduce(rp, e, off);
    held_free(e);
    e = next;
  }
}

/* Append e (converted with the current clock) to the held records; n:
 * the records it holds. */
static void hold(el_rp_t *rp, rp_held_t *e, size_t n) {
  e->start = rp->clk_start;
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

void el_rp_clock(el_rp_t *rp, uint64_t session, el_unix_ns_t start_unix_ns,
                 int settled) {
  /* A new session: the previous one's last clock is its final one. */
  if (session != rp->clk_session) el__rp_release(rp);
  rp->clk_session = session;
  rp->clk_start = start_unix_ns;
  rp->clk_moves = !settled;
  if (settled) el__rp_release(rp);
}

void el_rp_settle(el_rp_t *rp) {
  el__rp_release(rp);
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
}
