/* ana_reorder.c: the reorder buffer of the C analyses. The events the
 * state machines use arrive in stream order, each capability's in time
 * order (its blocks are written in order: spec/eventlog-format.md §3.5,
 * §3.6); the analyses need them in time order across capabilities
 * (spec/reference-behaviour.md §5.3.1). They wait in one queue per
 * capability and leave in (time, arrival) order, by a merge of the queue
 * heads, once at or below the host's watermark (host_clock.c): at once
 * when the watermark passes them, all at the end of a session, and the
 * oldest when more than MAX_HELD are held (counted in reorder_forced). An
 * event released behind one already released is late (reorder_late).
 * In the per-capability mode (ana_t.arrival: every output asked for is
 * per capability) the events skip the queues and go through at once.
 * docs/lua-api.md §6 "Ordering", "Per-capability mode". */
#include <string.h>

#include "ana_internal.h"

#define Q_MIN 1024 /* first ring size, records */

static uint32_t rec_seq(uint32_t sk) { return sk & ~3u; }

/* a before b: earlier time, or the same time and arrived first. */
static int qrec_before(const qrec_t *a, const qrec_t *b) {
  return a->t < b->t ||
         (a->t == b->t && (int32_t)(rec_seq(a->sk) - rec_seq(b->sk)) < 0);
}

static int is_stop(const qrec_t *r) { return (r->sk & 3u) == K_STOP - 1; }

/* A queue's block of cap records and cap stops: from el_malloc, or from
 * el_huge_alloc from Q_HUGE bytes up (q_grow). */
#define Q_REC (sizeof(qrec_t) + sizeof(qstop_t))
#define Q_HUGE ((size_t)256 * 1024)

static void q_block_free(qrec_t *v, size_t cap) {
  if (cap * Q_REC >= Q_HUGE)
    el_huge_free(v, cap * Q_REC);
  else
    el_free(v);
}

/* Grow queue q's ring (full, or empty with no memory yet) to twice its
 * size, or to all that fits in the huge pages it then takes: one new block
 * holds the records and, after them, their parallel stops (s), the live
 * slots copied in order from head to slot 0. A ring of Q_HUGE bytes or
 * more is backed by huge pages (el_huge_alloc): a queue holding one
 * capability's block of events while another's is read grows to several
 * MiB, and its first pass through them cost a page fault per 4 KiB.
 * Returns 0 or EL_ENOMEM (queue unchanged). */
static int q_grow(q_t *q) {
  size_t old = q->cap, cap = old ? old * 2 : Q_MIN;
  if (cap > SIZE_MAX / 4 / Q_REC) return EL_ENOMEM;
  int huge = cap * Q_REC >= Q_HUGE;
  if (huge)
    while (cap * 2 * Q_REC <= el_huge_len(cap * Q_REC)) cap *= 2;
  qrec_t *v = huge ? el_huge_alloc(cap * Q_REC) : el_malloc(cap * Q_REC);
  if (!v) return EL_ENOMEM;
  qstop_t *s = (qstop_t *)(v + cap);
  size_t tail = old - q->head; /* slots head..old-1, then 0..head-1 */
  if (old) {
    memcpy(v, q->v + q->head, tail * sizeof *v);
    memcpy(v + tail, q->v, q->head * sizeof *v);
    memcpy(s, q->s + q->head, tail * sizeof *s);
    memcpy(s + tail, q->s, q->head * sizeof *s);
  }
  q_block_free(q->v, old);
  q->v = v;
  q->s = s;
  q->head = 0;
  q->cap = cap;
  return 0;
}

/* q_push's general case: a ring to grow, or r goes back past the tail.
 * Each queue stays in time order: an event earlier than the tail (GC_END
 * carries an explicit, earlier time) goes back into place. A queue's
 * first record comes through here (its ring is empty), which keeps
 * a->max_q. Returns 0 or EL_ENOMEM (nothing queued). */
static __attribute__((noinline)) int q_push_slow(ana_t *a, const rec_t *r) {
  q_t *q = &a->q[r->cap];
  if (q->n == q->cap && q_grow(q) != 0) return EL_ENOMEM;
  if ((int)r->cap > a->max_q) a->max_q = r->cap;
  a->seq = (a->seq + 1) & 0x3fffffffu;
  qrec_t x = {.t = r->t,
              .thread = r->thread,
              .sk = a->seq << 2 | (uint32_t)(r->kind - 1)};
  size_t m = q->cap - 1, i = q->n++;
  while (i > 0 && x.t < q->v[(q->head + i - 1) & m].t) {
    size_t from = (q->head + i - 1) & m, to = (q->head + i) & m;
    q->v[to] = q->v[from];
    if (is_stop(&q->v[to])) q->s[to] = q->s[from];
    i--;
  }
  size_t at = (q->head + i) & m;
  q->v[at] = x;
  if (r->kind == K_STOP)
    q->s[at] = (qstop_t){.info = r->info, .status = r->status};
  if (q->n == 1 || r->t > q->last_t) q->last_t = r->t; /* n == 1: reset */
  if (r->t < a->lo) a->lo = r->t;
  a->held++;
  return 0;
}

/* Append the event of kind (K_*) at t of thread (status and info: a
 * stop's) to q, which has room and no later record. */
static inline __attribute__((always_inline)) void q_append(
    ana_t *a, q_t *q, uint64_t t, uint32_t thread, unsigned kind,
    uint16_t status, uint32_t info) {
  size_t at = (q->head + q->n) & (q->cap - 1);
  uint32_t seq = (a->seq + 1) & 0x3fffffffu;
  a->seq = seq;
  q->v[at] = (qrec_t){.t = t, .thread = thread, .sk = seq << 2 | (kind - 1)};
  if (kind == K_STOP) q->s[at] = (qstop_t){.info = info, .status = status};
  q->n++;
  q->last_t = t;
  if (t < a->lo) a->lo = t;
  a->held++;
}

/* Queue r on its capability: appended when there is room and it is not
 * earlier than the queue's last_t (the common case), else q_push_slow.
 * Returns 0 or EL_ENOMEM (nothing queued). */
static inline __attribute__((always_inline)) int q_push(ana_t *a,
                                                        const rec_t *r) {
  q_t *q = &a->q[r->cap];
  if (q->n == q->cap || r->t < q->last_t) return q_push_slow(a, r);
  q_append(a, q, r->t, r->thread, r->kind, r->status, r->info);
  return 0;
}

/* The capabilities whose queue heads come first (*c) and second (*o) in
 * (time, arrival) order, -1 where there are not as many non-empty
 * queues: one pass over the queues. */
static void q_first2(const ana_t *a, int *c, int *o) {
  int b1 = -1, b2 = -1;
  const qrec_t *h1 = NULL, *h2 = NULL;
  for (int k = 0; k <= a->max_q; k++) {
    const q_t *q = &a->q[k];
    if (!q->n) continue;
    const qrec_t *hd = &q->v[q->head];
    if (!h1 || qrec_before(hd, h1)) {
      b2 = b1;
      h2 = h1;
      b1 = k;
      h1 = hd;
    } else if (!h2 || qrec_before(hd, h2)) {
      b2 = k;
      h2 = hd;
    }
  }
  *c = b1;
  *o = b2;
}

/* Take the head of queue q (not empty) into *r: its time, thread, kind,
 * and a stop's status and info (a run's are left as they were: the
 * state machines read them of stops only). r->cap is the caller's. */
static inline __attribute__((always_inline)) void q_pop(ana_t *a, q_t *q,
                                                        rec_t *r) {
  size_t at = q->head;
  const qrec_t *x = &q->v[at];
  r->t = x->t;
  r->thread = x->thread;
  r->kind = (uint8_t)((x->sk & 3u) + 1);
  if (r->kind == K_STOP) {
    r->status = q->s[at].status;
    r->info = q->s[at].info;
  }
  q->head = (at + 1) & (q->cap - 1);
  q->n--;
  a->held--;
}

/* What ordered_one checks of the host that nothing it does changes, so
 * that a run of events checks it once (ord_ctx), and again after
 * anything that may call Lua (take_now). */
typedef struct {
  uint8_t fast;  /* a->feat asks for usage points and productivity, and
                    at most native spans besides */
  uint8_t cn;    /* el.cap_usage's native spans (F_CAPS_NATIVE) */
  uint8_t to;    /* el.threads' spans (F_THREAD_OUT) */
  uint8_t store; /* the store takes no traces: spans are counted
                    (ana_t.untaken_st) */
  uint8_t thr;   /* el.threads' spans native, without on_span */
} ord_ctx_t;

static inline __attribute__((always_inline)) ord_ctx_t ord_ctx(
    const el_host_t *h) {
  const ana_t *a = h->ana;
  unsigned f = a->feat;
  return (ord_ctx_t){.fast = (f & ~(unsigned)(F_CAPS_NATIVE | F_THREAD_OUT)) ==
                             (F_POINTS | F_PROD),
                     .cn = !!(f & F_CAPS_NATIVE),
                     .to = !!(f & F_THREAD_OUT),
                     .store = h->store && h->store == a->untaken_st,
                     .thr = a->th_names[0] && !a->ncb[TK_THREADS]};
}

static inline __attribute__((always_inline)) int ordered_one(
    el_host_t *h, const rec_t *r, const ord_ctx_t *c);

/* Whether ordered_one, in context c, can take a thread's stop at all: the
 * usage fast path is fed, and the native spans asked for are counted (no
 * exporter takes traces, no on_span). When not (traces exported), it
 * declines every STOP_THREAD, so ordered_merge would stop at once. */
static inline __attribute__((always_inline)) int ordered_may_take(
    const ord_ctx_t *c) {
  return c->fast && (!(c->cn | c->to) || (c->store && (!c->to || c->thr)));
}

/* Pop and process held events in (time, arrival) order while the first
 * is at or below limit; with force, when more than MAX_HELD are held,
 * also past it until FORCE_BATCH fewer are (counted in reorder_forced). The caller checked that there is
 * something to do (release_to). The first queue is popped while its head
 * comes before the head of every other queue (a copy: the heads are found
 * once per run of one capability's events, not per event); a head before
 * `end` (earlier than that other head and at or below limit) needs no
 * closer look. */
static __attribute__((noinline)) void release_loop(el_host_t *h, uint64_t limit,
                                                   int force) {
  ana_t *a = h->ana;
  rec_t r = {0};
  /* forcing: down to FORCE_BATCH below the bound */
  size_t keep = a->held > MAX_HELD ? MAX_HELD - FORCE_BATCH : MAX_HELD;
  while (a->held && !h->stop) {
    int c, o;
    q_first2(a, &c, &o);
    qrec_t other = o >= 0 ? a->q[o].v[a->q[o].head] : (qrec_t){0};
    uint64_t end = limit == UINT64_MAX ? UINT64_MAX : limit + 1;
    if (o >= 0 && other.t < end) end = other.t;
    q_t *q = &a->q[c];
    r.cap = (uint16_t)c;
    do {
      const qrec_t *head = &q->v[q->head];
      if (__builtin_expect(head->t >= end, 0)) {
        if (o >= 0 && !qrec_before(head, &other)) break;
        if (head->t > limit) {
          if (!force || a->held <= keep) {
            a->lo = head->t;
            return;
          }
          h->st.reorder_forced++;
        }
      }
      q_pop(a, q, &r);
      if (r.t < a->released_t)
        h->st.reorder_late++;
      else
        a->released_t = r.t;
      ord_ctx_t oc = ord_ctx(h); /* el__ana_process_in may call Lua */
      if (!ordered_one(h, &r, &oc)) el__ana_process_in(h, &r);
    } while (q->n && !h->stop);
  }
  if (!a->held) a->lo = UINT64_MAX;
}

/* release_loop when there is anything to release: a->lo lets the common
 * case, nothing held at or below limit, return without a call. */
static inline void release_to(el_host_t *h, uint64_t limit, int force) {
  ana_t *a = h->ana;
  if (a->lo > limit && (!force || a->held <= MAX_HELD)) return;
  release_loop(h, limit, force);
}

/* The time up to which events may leave: the host's watermark (no event
 * of a capability still waited for can come before it), or no bound
 * (UINT64_MAX) at the end of a session (all) or when no capability is
 * waited for. The watermark cached by host_clock.c is read without a
 * call while it is current (el__progress_t.wm_dirty clear). */
static inline uint64_t release_limit(el_host_t *h, int all) {
  const el__progress_t *p = &h->prog;
  el_rts_ns_t wm = 0;
  if (all) return UINT64_MAX;
  if (!p->wm_dirty) return p->wm; /* UINT64_MAX when wm_cap < 0 */
  if (el__watermark(h, &wm) < 0) return UINT64_MAX;
  return wm;
}

/* Release events in time order: those at or below the limit, and the
 * oldest when too many are held. */
static void release(el_host_t *h, int all) {
  release_to(h, release_limit(h, all), 1);
}

/* Event r (capability r->cap) in its turn. One at or below the limit
 * needs no queue: the held events before it in (time, arrival) order,
 * those at or before its time (all arrived earlier), go first, then r,
 * then the rest up to the limit, as if r had been queued and released
 * with them (half of a busy program's events take this path: a
 * capability's block is released while the next block of another one is
 * read). Any other goes into its queue. In the per-capability mode
 * (ana_t.arrival) r goes through at once. */
static inline __attribute__((always_inline)) void ana_take(el_host_t *h,
                                                           rec_t *r) {
  ana_t *a = h->ana;
  if (a->arrival && !a->held) { /* per-capability mode: no queue */
    el__ana_process_in(h, r);
    return;
  }
  uint64_t limit = release_limit(h, 0);
  if (r->t <= limit) {
    release_to(h, r->t, 0);
    if (!h->stop) {
      if (r->t < a->released_t)
        h->st.reorder_late++;
      else
        a->released_t = r->t;
      el__ana_process_in(h, r);
      release_to(h, limit, 1);
      return;
    }
  }
  if (q_push(a, r) != 0) {
    h->st.reorder_forced++;
    el__ana_process(h, r);
  }
  /* live: enough held for the next capability, not seen yet */
  if (__builtin_expect(a->held == EL__NEXT_CAP_HELD, 0) && el__progress_held(h))
    limit = release_limit(h, 0);
  release_to(h, limit, 1);
}

void el__ana_flush(el_host_t *h) {
  if (h->ana) release(h, 1);
}

void el__ana_release(el_host_t *h) {
  if (!h->ana || !h->clock.live) return;
  h->prog.wm_dirty = 1; /* silence moves the watermark */
  release(h, 0);
}

/* The events that only touch the thread table (no order needed). */
static void thread_info_event(ana_t *a, const el_ev_event_t *ev) {
  thread_t *th = el__ana_thread(a, (uint32_t)ev->v[0].u, 1);
  if (!th) return;
  if (ev->type == EL_EV_CREATE_THREAD) {
    if (!th->has_created) {
      th->created_t = ev->t_ns;
      th->has_created = 1;
    }
    return;
  }
  el_free(th->label); /* EL_EV_THREAD_LABEL */
  th->label = el_strndup(ev->v[1].s.p ? ev->v[1].s.p : "", ev->v[1].s.len);
}

/* el__progress_event (host_clock.c) for an event of cap at t, without a
 * call in the common case: a recorded (not live) session's capability
 * already seen, whose latest time moves up. When it was the capability
 * holding the cached watermark, the cache stays current while t is still
 * below every other capability's latest time (el__progress_t.wm_next, a
 * lower bound of it: they only move up): the watermark is t. Otherwise it
 * is recomputed on next use. Anything else takes the call. */
static inline void progress_event(el_host_t *h, unsigned cap, uint64_t t) {
  el__progress_t *p = &h->prog;
  if (h->clock.live || cap >= EL__MAX_CAPS || p->state[cap] != CAP_SEEN) {
    el__progress_event(h, cap, t);
    return;
  }
  if (t > p->last[cap]) {
    p->last[cap] = t;
    if ((int)cap == p->wm_cap) {
      if (t < p->wm_next)
        p->wm = t;
      else
        p->wm_dirty = 1;
    }
  }
}

/* The record of ev, a RUN_THREAD (stop 0) or STOP_THREAD (stop 1) of a
 * capability below MAX_CAPS: its time, thread, capability, kind, and a
 * stop's status and info (0 when the event has no info field). */
static inline __attribute__((always_inline)) rec_t rec_of(
    const el_ev_event_t *ev, unsigned stop) {
  rec_t r = {.t = ev->t_ns,
             .thread = (uint32_t)ev->v[0].u,
             .cap = ev->cap,
             .kind = (uint8_t)(K_RUN + stop)};
  if (stop) {
    r.status = (uint16_t)ev->v[1].u;
    r.info = ev->nfields > 2 ? (uint32_t)ev->v[2].u : 0;
  }
  return r;
}

/* el__ana_event for the types other than RUN_THREAD and STOP_THREAD. */
static __attribute__((noinline)) void ana_event_other(el_host_t *h,
                                                      const el_ev_event_t *ev) {
  rec_t r = {.t = ev->t_ns, .cap = ev->cap};
  switch (ev->type) {
  case EL_EV_CREATE_THREAD:
  case EL_EV_THREAD_LABEL:
    thread_info_event(h->ana, ev);
    return;
  case EL_EV_GC_START:
    r.kind = K_GC_START;
    break;
  case EL_EV_GC_END:
    r.kind = K_GC_END;
    break;
  case EL_EV_BLOCK_MARKER:
    release(h, 0); /* the host's watermark moved (host_clock.c) */
    return;
  default:
    return;
  }
  if (ev->cap >= MAX_CAPS) return; /* §5.2.3: ignored without cap */
  progress_event(h, ev->cap, ev->t_ns);
  ana_take(h, &r);
}

_Static_assert(EL_EV_STOP_THREAD == EL_EV_RUN_THREAD + 1,
               "RUN_THREAD and STOP_THREAD are adjacent ids");

/* el__ana_event's body, inline in its two entries. */
static inline __attribute__((always_inline)) void ana_event(
    el_host_t *h, const el_ev_event_t *ev) {
  if (!h->ana || !ev->known) return;
  unsigned stop = (unsigned)ev->type - EL_EV_RUN_THREAD;
  if (__builtin_expect(stop > 1, 0)) {
    ana_event_other(h, ev);
    return;
  }
  if (ev->cap >= MAX_CAPS) return; /* §5.2.3: ignored without cap */
  rec_t r = rec_of(ev, stop);
  progress_event(h, ev->cap, ev->t_ns);
  ana_take(h, &r);
}

/* Called for the types enabled by the trackers (lua_analysis.c). */
void el__ana_event(el_host_t *h, const el_ev_event_t *ev) { ana_event(h, ev); }

/* el__ana_event_only's general case: el__ana_event with h->cur set. */
static __attribute__((noinline)) int event_only_slow(el_host_t *h,
                                                     const el_ev_event_t *ev) {
  const el_ev_event_t *saved = h->cur;
  h->cur = ev;
  ana_event(h, ev);
  h->cur = saved;
  return h->stop;
}

/* The RUN_THREAD or STOP_THREAD r (its capability's, < MAX_CAPS), the
 * record of the event cur (h->cur meanwhile), in a recorded session,
 * where r->cap holds the cached watermark and r->t is at or after its
 * latest time and below wm_next, at most MAX_HELD events being held and
 * no stop: the watermark moves to r->t; the held events at or before it
 * go first (release_loop), then r, and nothing else is due (ana_take's
 * direct path). Returns h->stop. */
static __attribute__((noinline)) int take_now(el_host_t *h, rec_t *r,
                                              const el_ev_event_t *cur) {
  ana_t *a = h->ana;
  uint64_t t = r->t;
  h->prog.last[r->cap] = t;
  h->prog.wm = t;
  const el_ev_event_t *saved = h->cur;
  h->cur = cur;
  if (t >= a->lo) {
    release_loop(h, t, 0);
    if (h->stop) { /* as ana_take: r waits */
      if (q_push(a, r) != 0) {
        h->st.reorder_forced++;
        el__ana_process(h, r);
      }
      release_to(h, t, 1);
      h->cur = saved;
      return h->stop;
    }
  }
  if (t < a->released_t)
    h->st.reorder_late++;
  else
    a->released_t = t;
  ord_ctx_t oc = ord_ctx(h);
  if (!ordered_one(h, r, &oc)) el__ana_process_in(h, r);
  h->cur = saved;
  return h->stop;
}

/* The RUN_THREAD or STOP_THREAD ev of a recorded session's capability,
 * at or after its latest time, which does not hold the cached watermark,
 * when ev is above the watermark, its queue has room and no later
 * record, fewer than MAX_HELD events are held and none at or below the
 * watermark: its latest time moves up and ev is appended to its queue,
 * nothing being due (ana_take's queued path). */
static inline __attribute__((always_inline)) int queue_now(
    el_host_t *h, const el_ev_event_t *ev) {
  unsigned stop = (unsigned)ev->type - EL_EV_RUN_THREAD, cap = ev->cap;
  h->prog.last[cap] = ev->t_ns;
  q_append(h->ana, &h->ana->q[cap], ev->t_ns, (uint32_t)ev->v[0].u,
           K_RUN + stop, stop ? (uint16_t)ev->v[1].u : 0,
           stop && ev->nfields > 2 ? (uint32_t)ev->v[2].u : 0);
  return h->stop;
}

/* el__ana_event_only's live case: the RUN_THREAD or STOP_THREAD ev of a
 * live session's capability already seen, at or after its latest time,
 * the watermark cached, while bytes are being fed from a source that
 * reports its waits (the quiet clock then reads without a clock call:
 * el__progress_event's arrival is its waited time). Its arrival noted, it
 * takes the recorded session's two short paths: take_now on the
 * capability holding the watermark below wm_next; on another one, queued
 * when above the watermark with room in its queue and no later record,
 * fewer than MAX_HELD events held (not one short of EL__NEXT_CAP_HELD,
 * whose check ana_take makes) and none at or below the watermark.
 * Anything else takes the general path. */
static inline __attribute__((always_inline)) int queue_live(
    el_host_t *h, const el_ev_event_t *ev) {
  ana_t *a = h->ana;
  el__progress_t *p = &h->prog;
  unsigned cap = ev->cap;
  if (!p->waits_known || p->waiting) return event_only_slow(h, ev);
  if ((int)cap == p->wm_cap) {
    if (ev->t_ns < p->wm_next && a->held <= MAX_HELD && !h->stop) {
      p->arrived[cap] = p->waited_ns;
      rec_t r = rec_of(ev, (unsigned)ev->type - EL_EV_RUN_THREAD);
      return take_now(h, &r, ev);
    }
    return event_only_slow(h, ev);
  }
  if (ev->t_ns <= p->wm || a->lo <= p->wm || a->held >= MAX_HELD ||
      a->held == EL__NEXT_CAP_HELD - 1 || a->q[cap].n >= a->q[cap].cap ||
      ev->t_ns < a->q[cap].last_t)
    return event_only_slow(h, ev);
  p->arrived[cap] = p->waited_ns;
  return queue_now(h, ev);
}

/* el__ana_event_only in the per-capability mode (ana_t.arrival): a
 * RUN_THREAD or STOP_THREAD of a capability below MAX_CAPS, nothing being
 * held, goes through the state machines at once, the host's progress
 * noted as ana_event does; anything else takes the general path (which
 * does the same: ana_take). */
static __attribute__((noinline)) int take_arrival(el_host_t *h,
                                                  const el_ev_event_t *ev) {
  unsigned stop = (unsigned)ev->type - EL_EV_RUN_THREAD;
  if (__builtin_expect(
          stop > 1 || !ev->known || ev->cap >= MAX_CAPS || h->ana->held, 0))
    return event_only_slow(h, ev);
  rec_t r = rec_of(ev, stop);
  progress_event(h, ev->cap, ev->t_ns);
  const el_ev_event_t *saved = h->cur;
  h->cur = ev;
  el__ana_process_in(h, &r);
  h->cur = saved;
  return h->stop;
}

/* el__ana_direct_run for a RUN_THREAD of th on cap at t, no run of it
 * open: what el__ana_thread_run does then, the blocked span (when t is
 * its latest event) without outputs. */
static inline __attribute__((always_inline)) void direct_run(thread_t *th,
                                                             unsigned cap,
                                                             uint64_t t,
                                                             int latest) {
  th->open[0].t = t;
  th->open[0].cap = (uint16_t)cap;
  th->nopen = 1;
  if (!latest) return;
  if (th->prev == K_STOP && t >= th->prev_t) {
    uint64_t d = t - th->prev_t;
    th->blocked_ns += d;
    th->blocked[th->prev_status < NSTATUS ? th->prev_status : NSTATUS] += d;
  }
  th->prev = K_RUN;
  th->prev_t = t;
  th->prev_cap = (uint16_t)cap;
  th->cap = (uint16_t)cap;
  th->state = TS_RUNNING;
}

/* The bookkeeping of every event el__ana_direct_run takes: the thread's
 * first and latest times. (The highest capability and the host's
 * progress are the run's: direct_end.) */
static inline __attribute__((always_inline)) int direct_done(thread_t *th,
                                                             uint64_t t,
                                                             int latest) {
  if (t < th->first_t) th->first_t = t;
  th->has_first = 1;
  if (latest) th->last_t = t;
  return 1;
}

/* The end of a STOP_THREAD the fast paths took (direct_stop,
 * ordered_stop): th's run on cap from start ends at t, and when it is
 * th's latest event (not finishing it), th is blocked from t with the
 * stop's status and info (stop_latest). Returns direct_done's 1. */
static inline __attribute__((always_inline)) int stop_taken(
    thread_t *th, unsigned cap, uint64_t start, uint64_t t, uint16_t status,
    uint32_t info, int latest) {
  th->nopen = 0;
  th->running_ns += t > start ? t - start : 0;
  th->runs++;
  if (latest) { /* stop_latest, not finished */
    th->prev = K_STOP;
    th->prev_t = t;
    th->prev_cap = (uint16_t)cap;
    th->prev_status = status;
    th->prev_info = info;
    th->has_status = 1;
    th->state = TS_BLOCKED;
  }
  return direct_done(th, t, latest);
}

/* The fast paths' native spans (el.cap_usage{spans=}: cap 1, el.threads{
 * spans=} without on_span: thr 1) can be counted inline, as
 * el__ana_native_counted would count them, one each (no flush due): the
 * check made before anything changes, c the host's ord_ctx. */
static inline __attribute__((always_inline)) int ordered_countable(
    const el_host_t *h, const ord_ctx_t *c, unsigned cap, unsigned thr) {
  const ana_t *a = h->ana;
  if (!(cap | thr)) return 1;
  if (!c->store) return 0;
  if (cap && a->nspans[0] + 1 >= SPANS_PER_FLUSH) return 0;
  return !thr || (c->thr && a->nspans[1] + 1 < SPANS_PER_FLUSH);
}

/* Count what ordered_countable allowed. */
static inline __attribute__((always_inline)) void ordered_count(el_host_t *h,
                                                                unsigned cap,
                                                                unsigned thr) {
  ana_t *a = h->ana;
  *a->untaken += cap + thr;
  a->nspans[0] += cap;
  a->nspans[1] += thr;
}

/* direct_stop when el.cap_usage{spans=} asks for its Mutator spans too
 * (the default processors and capability_usage's traces): taken as
 * direct_stop takes it when the span is counted (no exporter takes
 * traces, ordered_countable); else nothing (0). Out of line: the default
 * processors' path stays as short as it was. */
static __attribute__((noinline)) int direct_stop_native(
    el_host_t *h, thread_t *th, unsigned cap, uint64_t t, uint16_t status,
    uint32_t info, int latest) {
  ord_ctx_t oc = ord_ctx(h);
  if (h->ana->feat != (F_POINTS | F_PROD | F_CAPS_NATIVE) ||
      !ordered_countable(h, &oc, 1, 0))
    return 0;
  uint64_t start = th->open[0].t;
  if (!el__ana_run_span_fast(h, th, cap, start, t, 1)) return 0;
  ordered_count(h, 1, 0); /* the Mutator span */
  return stop_taken(th, cap, start, t, status, info, latest);
}

/* el__ana_direct_run for a STOP_THREAD of th (payload: its 10 bytes), whose
 * run on cap is open: what el__ana_thread_stop and stop_latest do then
 * when the usage fast path takes the span (and the native Mutator span,
 * if asked for, is counted: direct_stop_native); else nothing (0). */
static inline __attribute__((always_inline)) int direct_stop(
    el_host_t *h, thread_t *th, unsigned cap, uint64_t t,
    const uint8_t *payload, int latest) {
  ana_t *a = h->ana;
  uint16_t status = el_ev_be16(payload + 4);
  if (latest && status == EL_EV_STATUS_THREAD_FINISHED) return 0;
  if (a->feat != (F_POINTS | F_PROD))
    return direct_stop_native(h, th, cap, t, status, el_ev_be32(payload + 6),
                              latest);
  uint64_t start = th->open[0].t;
  /* changes nothing when it does not take the span (then neither do
   * we): checked first, as everything before */
  if (!el__ana_run_span_fast(h, th, cap, start, t, 1)) return 0;
  return stop_taken(th, cap, start, t, status, el_ev_be32(payload + 6), latest);
}

/* el__ana_direct_run: 1 when it may take the run's events of capability
 * cap: the per-capability mode, nothing held, batched, stopping or
 * interrupted, the session's RUN_THREAD and STOP_THREAD sizes GHC's, a
 * capability cap (< MAX_CAPS) seen before in the session (else its events
 * are delivered, and the first one marks it seen). */
static int direct_begin(el_host_t *h, uint16_t cap) {
  const ana_t *a = h->ana; /* set: the types are EL__F_ANA's (host.c) */
  /* What take_arrival and on_event would not take at once; none of it
   * changes without a delivery. A capability not seen yet takes
   * el__progress_event's first-event path: delivered. */
  return !(h->interrupted | h->stop | (int)h->nbatch) && a->arrival &&
         !a->held && cap < MAX_CAPS && h->prog.state[cap] == CAP_SEEN &&
         h->direct_sizes;
}

/* el__ana_direct_run: the run's direct events taken (the latest at
 * tmax, ns since RTS start) raise the highest capability and the host's
 * progress as each would have in el__ana_event_only. */
static void direct_end(el_host_t *h, uint16_t cap, el_rts_ns_t tmax) {
  ana_t *a = h->ana;
  /* What each event taken did in on_event's path (take_arrival), once
   * for the run: its latest time is the capability's progress (the
   * watermark's cache as progress_event keeps it event by event; live,
   * the run's bytes arrived together: el__progress_event). */
  if ((int)cap > a->max_cap) a->max_cap = (int)cap;
  progress_event(h, cap, tmax);
}

/* The thread table as el__ana_direct_run reads it: nothing it does adds a
 * thread, so these stay valid through a run. */
typedef struct {
  const uint32_t *direct; /* ana_t's */
  size_t ndirect;
  thread_t *threads;
} direct_tab_t;

/* el__ana_direct_run's work for one event, the thread table tb of the host
 * h's analyses (set: the types are EL__F_ANA's, host.c), in a run
 * direct_begin took: 1 taken, 0 declined (nothing changed). */
static inline __attribute__((always_inline)) int direct_one(
    el_host_t *h, direct_tab_t tb, uint16_t type, uint16_t cap, el_rts_ns_t t,
    const uint8_t *payload) {
  unsigned stop = (unsigned)type - EL_EV_RUN_THREAD;
  /* direct_begin took the run: cap < MAX_CAPS, and the session
   * frames RUN_THREAD in 4 bytes and STOP_THREAD in 10; the decoder
   * offers direct types only, which are these two. */
  if (__builtin_expect(stop > 1, 0)) return 0;
  uint32_t id = el_ev_be32(payload);
  if (id >= tb.ndirect || !tb.direct[id]) return 0;
  thread_t *th = &tb.threads[tb.direct[id] - 1];
  /* el__ana_thread_event's common cases: an event of a finished thread
   * after it finished (its first and latest times only); for its latest
   * event, no outputs of a blocked span, and not the stop that finishes
   * it (eviction) */
  int latest = t >= th->last_t;
  if (th->state == TS_FINISHED && t >= th->finished_t)
    return direct_done(th, t, latest);
  if (stop) {
    if (th->nopen != 1 || th->open[0].cap != cap) return 0;
    return direct_stop(h, th, cap, t, payload, latest);
  }
  if (th->nopen || (latest && th->prev == K_STOP && t >= th->prev_t &&
                    (h->ana->feat & F_THREAD_OUT)))
    return 0;
  direct_run(th, cap, t, latest);
  return direct_done(th, t, latest);
}

static direct_tab_t direct_tab(const ana_t *a) {
  return (direct_tab_t){a->direct, a->ndirect, a->threads};
}

/* el__ana_thread_event for the STOP_THREAD r of th, in time order, when
 * its run on r->cap is the one open, it does not finish the thread (as
 * its latest event), the usage fast path takes the span and the native
 * spans asked for are counted (no exporter takes traces, no on_span):
 * 1; else 0 and nothing changed. latest: r is th's latest by time. */
static inline __attribute__((always_inline)) int ordered_stop(
    el_host_t *h, thread_t *th, const rec_t *r, int latest,
    const ord_ctx_t *c) {
  unsigned cn = c->cn, to = c->to;
  if (th->nopen != 1 || th->open[0].cap != r->cap ||
      (latest && r->status == EL_EV_STATUS_THREAD_FINISHED) ||
      !ordered_countable(h, c, cn, to))
    return 0;
  uint64_t start = th->open[0].t, t = r->t;
  if (!el__ana_run_span_fast(h, th, r->cap, start, t, 1)) return 0;
  ordered_count(h, cn, to); /* the Mutator span, the Running span */
  return stop_taken(th, r->cap, start, t, r->status, r->info, latest);
}

/* el__ana_process_in's common cases for a RUN_THREAD or STOP_THREAD r
 * (r->cap < MAX_CAPS) of a thread found by direct index, in time order,
 * with no Lua call and no span built: the thread state machine's as
 * direct_one takes them, and also with the native spans of
 * el.cap_usage{spans=} and el.threads{spans=} (without on_span) counted
 * when no exporter takes traces (every processor on, exporters none).
 * c: ord_ctx(h), current. 1 when taken, else 0 and nothing changed: the
 * caller calls el__ana_process_in. */
static inline __attribute__((always_inline)) int ordered_one(
    el_host_t *h, const rec_t *r, const ord_ctx_t *c) {
  ana_t *a = h->ana;
  uint32_t id = r->thread;
  if (r->kind > K_STOP || id >= a->ndirect || !a->direct[id]) return 0;
  thread_t *th = &a->threads[a->direct[id] - 1];
  if ((int)r->cap > a->max_cap) a->max_cap = r->cap;
  uint64_t t = r->t;
  int latest = t >= th->last_t;
  if (th->state == TS_FINISHED && t >= th->finished_t)
    return direct_done(th, t, latest);
  if (!c->fast) return 0;
  if (r->kind == K_STOP) return ordered_stop(h, th, r, latest, c);
  if (th->nopen) return 0;
  if (latest && th->prev == K_STOP && t >= th->prev_t &&
      c->to) { /* the Blocked span ends */
    if (!ordered_countable(h, c, 0, 1)) return 0;
    ordered_count(h, 0, 1);
  }
  direct_run(th, r->cap, t, latest);
  return direct_done(th, t, latest);
}

/* The event on_event would have been given for the RUN_THREAD or
 * STOP_THREAD (stop: which) at p (GHC's 4 or 10 payload bytes, direct
 * sizes) of run, with its record r: h->ev_direct, what h->cur points to
 * while r goes through (a handler called meanwhile reads it, el.event(),
 * an emit without a time). */
static const el_ev_event_t *direct_cur(el_host_t *h, const el_ev_run_t *run,
                                       const uint8_t *p, const rec_t *r,
                                       unsigned stop) {
  el_ev_event_t *ev = &h->ev_direct;
  ev->type = (uint16_t)(EL_EV_RUN_THREAD + stop);
  ev->cap = r->cap;
  ev->t_ns = r->t;
  ev->offset = run->offset + (uint64_t)(p - run->p);
  ev->payload = p + 10;
  ev->payload_len = stop ? 10 : 4;
  ev->known = 1;
  ev->malformed = 0;
  ev->layout = 0;
  ev->nfields = stop ? 3 : 1;
  ev->v[0].u = r->thread;
  ev->v[1].u = r->status;
  ev->v[2].u = r->info;
  return ev;
}

/* take_now's release of the held events at or before t (at least one:
 * t >= a->lo) without a call, when they are all in one queue and
 * ordered_one takes each: 1 when none at or before t is left, else 0
 * (those before the one declined are released, as release_loop would
 * have: take_now does the rest). */
static inline __attribute__((always_inline)) int release_fast(
    el_host_t *h, uint64_t t, const ord_ctx_t *oc) {
  ana_t *a = h->ana;
  int c, o;
  q_first2(a, &c, &o);
  if (o >= 0 || c < 0) return 0;
  q_t *q = &a->q[c];
  rec_t r = {.cap = (uint16_t)c};
  while (q->n) {
    size_t at = q->head;
    const qrec_t *x = &q->v[at];
    a->lo = x->t; /* the least held time while this one is */
    if (x->t > t) return 1;
    r.t = x->t;
    r.thread = x->thread;
    r.kind = (uint8_t)((x->sk & 3u) + 1);
    if (r.kind == K_STOP) {
      r.status = q->s[at].status;
      r.info = q->s[at].info;
    }
    if (!ordered_one(h, &r, oc)) return 0;
    q->head = (at + 1) & (q->cap - 1); /* q_pop */
    q->n--;
    a->held--;
    if (r.t < a->released_t)
      h->st.reorder_late++;
    else
      a->released_t = r.t;
  }
  a->lo = UINT64_MAX; /* the only queue holding any is empty */
  return 1;
}

/* el__ana_direct_run_ordered for a run of a capability cap that does
 * not hold the watermark: its RUN_THREAD and STOP_THREAD events go to
 * cap's queue (nothing is due: the held events all stay above the
 * watermark), as the general loop's append branch takes them, up to
 * the first event it would not take (then it stops there, as that loop
 * does). Appending moves neither the watermark nor its capability, so
 * what that branch checks per event is checked here once (wm_dirty, the
 * watermark, the least held time) or kept in registers (the room in the
 * queue and under MAX_HELD, the latest time appended). Returns the bytes
 * taken; *taken as el__ana_direct_run_ordered's. */
static size_t ordered_append(el_host_t *h, const el_ev_run_t *run,
                             uint64_t tlim, el_ev_run_taken_t *taken) {
  const el_ev_run_t r = *run;
  ana_t *const a = h->ana;
  el__progress_t *const pg = &h->prog;
  q_t *const q = &a->q[r.cap];
  const uint64_t wm = pg->wm;
  const int ok = !pg->wm_dirty && a->lo > wm;
  /* the append branch's held < MAX_HELD and n < cap, as a count */
  size_t room = q->cap - q->n, k = 0;
  size_t under = a->held < MAX_HELD ? MAX_HELD - a->held : 0;
  if (room > under) room = under;
  uint64_t floor = pg->last[r.cap] > q->last_t ? pg->last[r.cap] : q->last_t;
  uint64_t lo = a->lo, n = 0, tmax = 0;
  uint32_t seq = a->seq;
  size_t at = q->cap ? (q->head + q->n) & (q->cap - 1) : 0;
  const uint8_t *p = r.p, *last = p;
  for (;;) {
    int kind;
    size_t len = el_ev_run_frame(&r, p, &kind);
    uint64_t t = len ? el_ev_run_time(p) : 0;
    if (!len || t > tlim || kind == EL_EV_RUN_STOP) break;
    if (kind == EL_EV_RUN_DIRECT) {
      if (!ok || t < floor || t <= wm || k == room) break;
      unsigned stop = (unsigned)el_ev_run_type(p) - EL_EV_RUN_THREAD;
      seq = (seq + 1) & 0x3fffffffu;
      q->v[at] = (qrec_t){.t = t,
                          .thread = el_ev_be32(p + 10),
                          .sk = seq << 2 | (K_RUN + stop - 1)};
      if (stop)
        q->s[at] =
            (qstop_t){.info = el_ev_be32(p + 16), .status = el_ev_be16(p + 14)};
      at = (at + 1) & (q->cap - 1);
      k++;
      floor = t;
      lo = t < lo ? t : lo;
    }
    n++;
    tmax = t > tmax ? t : tmax;
    last = p;
    p += len;
  }
  if (k) { /* q_append's, for the k appended */
    q->n += k;
    q->last_t = pg->last[r.cap] = floor;
    a->held += k;
    a->seq = seq;
    a->lo = lo;
  }
  taken->events = n;
  taken->tmax = tmax;
  taken->last = (size_t)(last - r.p);
  taken->stop = 0;
  return (size_t)(p - r.p);
}

/* The record of the direct event at p of capability cap at t: a
 * RUN_THREAD or STOP_THREAD in GHC's payload sizes (the session's sizes
 * framed it), as ordered_one takes it. */
static inline __attribute__((always_inline)) rec_t direct_rec(const uint8_t *p,
                                                              unsigned cap,
                                                              uint64_t t) {
  unsigned stop = (unsigned)el_ev_run_type(p) - EL_EV_RUN_THREAD;
  rec_t rr = {.t = t,
              .thread = el_ev_be32(p + 10),
              .cap = (uint16_t)cap,
              .kind = (uint8_t)(K_RUN + stop)};
  if (stop) {
    rr.status = el_ev_be16(p + 14);
    rr.info = el_ev_be32(p + 16);
  }
  return rr;
}

/* The held event at the head of q (capability c) as ordered_one takes
 * it: q_pop's record, without popping. */
static inline __attribute__((always_inline)) rec_t q_head_rec(const q_t *q,
                                                              unsigned c,
                                                              size_t at) {
  const qrec_t *x = &q->v[at];
  rec_t hr = {.t = x->t,
              .thread = x->thread,
              .cap = (uint16_t)c,
              .kind = (uint8_t)((x->sk & 3u) + 1)};
  if (hr.kind == K_STOP) {
    hr.status = q->s[at].status;
    hr.info = q->s[at].info;
  }
  return hr;
}

/* el__ana_direct_run_ordered's loop on the capability r->cap holding the
 * watermark, for its common case: at most one queue holds events, and
 * ordered_one (its context oc) takes every event. It merges the run's
 * direct events (at or after the capability's latest time, below wm_next)
 * with that queue's held ones: before each, the held events at or before
 * its time, as release_fast then the loop's first branch take them one by
 * one. The queue's head and count, the capability's latest time, the
 * watermark and the latest time released stay in registers and are
 * written once at the end: nothing ordered_one does reads them, queues or
 * releases anything, or changes what the caller checked (the watermark
 * cached, r->cap holding it, at most MAX_HELD held). Stops before the
 * first own event it does not take (the loop's general case takes it,
 * and any held event left before it); returns 1 instead where the loop
 * would end the run there (its end, past tlim, a stop kind). *pp, *lastp,
 * *n and *tmax move over the run's events taken as the loop's. */
static inline __attribute__((always_inline)) int ordered_merge(
    el_host_t *h, const el_ev_run_t *r, uint64_t tlim, const ord_ctx_t *oc,
    const uint8_t **pp, const uint8_t **lastp, uint64_t *n, uint64_t *tmax) {
  ana_t *const a = h->ana;
  el__progress_t *const pg = &h->prog;
  const unsigned cap = r->cap;
  int c, o;
  q_first2(a, &c, &o);
  if (o >= 0) return 0; /* two queues hold events: release_loop's merge */
  q_t *const q = &a->q[c >= 0 ? c : 0];
  size_t at = q->head, left = c >= 0 ? q->n : 0, mask = q->cap - 1;
  const uint64_t wm_next = pg->wm_next;
  uint64_t latest = pg->last[cap], rel = a->released_t, k = 0;
  const uint8_t *p = *pp, *last = *lastp;
  uint64_t m = *n, tm = *tmax;
  int end = 0;
  for (;;) {
    int kind;
    size_t len = el_ev_run_frame(r, p, &kind);
    uint64_t t = len ? el_ev_run_time(p) : 0;
    if (!len || t > tlim || kind == EL_EV_RUN_STOP) {
      end = 1;
      break;
    }
    if (kind == EL_EV_RUN_DIRECT) {
      if (t < latest || t >= wm_next) break;
      while (left && q->v[at].t <= t) { /* held first: they arrived first */
        rec_t hr = q_head_rec(q, (unsigned)c, at);
        if (!ordered_one(h, &hr, oc)) goto out;
        at = (at + 1) & mask;
        left--;
        if (hr.t < rel)
          h->st.reorder_late++;
        else
          rel = hr.t;
      }
      rec_t rr = direct_rec(p, cap, t);
      if (!ordered_one(h, &rr, oc)) break;
      latest = t;
      k++;
      if (t < rel)
        h->st.reorder_late++;
      else
        rel = t;
    }
    m++;
    tm = t > tm ? t : tm;
    last = p;
    p += len;
  }
out:
  if (c >= 0 && left != q->n) { /* q_pop's, for those popped */
    a->held -= q->n - left;
    q->n = left;
    q->head = at;
    a->lo = left ? q->v[at].t : UINT64_MAX; /* the only queue holding any */
  }
  if (k) pg->last[cap] = pg->wm = latest;
  a->released_t = rel;
  *pp = p;
  *lastp = last;
  *n = m;
  *tmax = tm;
  return end;
}

size_t el__ana_direct_run_ordered(void *ud, const el_ev_run_t *run,
                                  el_ev_run_taken_t *taken) {
  el_host_t *h = ud;
  const el_ev_run_t r = *run;
  ana_t *const a = h->ana;
  el__progress_t *const pg = &h->prog;
  const unsigned cap = r.cap;
  if (!h->quiet_until || a->arrival ||
      (h->interrupted | h->stop | (int)h->nbatch) || h->clock.live ||
      cap >= MAX_CAPS || pg->state[cap] != CAP_SEEN || !h->direct_sizes)
    return 0;
  const uint64_t tlim =
      r.tend < h->quiet_until - 1 ? r.tend : h->quiet_until - 1;
  if ((int)cap != pg->wm_cap) return ordered_append(h, run, tlim, taken);
  const uint64_t events0 = h->st.events;
  ord_ctx_t oc = ord_ctx(h);
  int merge = ordered_may_take(&oc);
  q_t *const q = &a->q[cap];
  const uint8_t *p = r.p, *last = p;
  uint64_t n = 0, tmax = 0;
  int stopped = 0;
  for (;;) {
    if (merge && !pg->wm_dirty && (int)cap == pg->wm_cap &&
        a->held <= MAX_HELD &&
        ordered_merge(h, &r, tlim, &oc, &p, &last, &n, &tmax))
      break;
    int kind;
    size_t len = el_ev_run_frame(&r, p, &kind);
    uint64_t t = len ? el_ev_run_time(p) : 0;
    if (!len || t > tlim || kind == EL_EV_RUN_STOP) break;
    if (kind == EL_EV_RUN_DIRECT) {
      /* el__ana_event_only's conditions (the session's sizes framed the
       * event: a direct type is RUN_THREAD or STOP_THREAD) */
      if (pg->wm_dirty || t < pg->last[cap]) break;
      rec_t rr = direct_rec(p, cap, t);
      unsigned stop = rr.kind - K_RUN;
      if ((int)cap == pg->wm_cap) {
        if (t >= pg->wm_next || a->held > MAX_HELD) break;
        if ((t < a->lo || release_fast(h, t, &oc)) &&
            ordered_one(h, &rr, &oc)) {
          /* take_now with nothing held due before it and nothing called
           * (no h->cur, no count or stream time needed: the decoder
           * adds the run's after it) */
          pg->last[cap] = t;
          pg->wm = t;
          if (t < a->released_t)
            h->st.reorder_late++;
          else
            a->released_t = t;
        } else {
          /* as on_event before it: this event counted, the stream time */
          h->st.events = events0 + n + 1;
          if (t > h->now) h->now = t;
          stopped = take_now(h, &rr, direct_cur(h, &r, p, &rr, stop));
          oc = ord_ctx(h); /* take_now may have called Lua */
          merge = ordered_may_take(&oc);
        }
      } else if (t > pg->wm && a->lo > pg->wm && a->held < MAX_HELD &&
                 q->n < q->cap && t >= q->last_t) {
        pg->last[cap] = t;
        q_append(a, q, t, rr.thread, rr.kind, rr.status, rr.info);
      } else {
        break;
      }
    }
    n++;
    tmax = t > tmax ? t : tmax;
    last = p;
    p += len;
    if (stopped) break;
  }
  /* the decoder adds the events taken to the count (quiet counters) */
  h->st.events = events0;
  taken->events = n;
  taken->tmax = tmax;
  taken->last = (size_t)(last - r.p);
  taken->stop = stopped;
  return (size_t)(p - r.p);
}

size_t el__ana_direct_run(void *ud, const el_ev_run_t *run,
                          el_ev_run_taken_t *taken) {
  el_host_t *h = ud;
  /* quiet_until does not change without a delivery (host.c) */
  const el_ev_run_t r = *run; /* in registers: the loop calls out */
  /* quiet_until does not change without a delivery (host.c); an event
   * is taken up to tlim, below it and at most the block's end time */
  if (!h->quiet_until || !direct_begin(h, r.cap)) return 0;
  const uint64_t tlim =
      r.tend < h->quiet_until - 1 ? r.tend : h->quiet_until - 1;
  const direct_tab_t tb = direct_tab(h->ana);
  const uint8_t *p = r.p, *last = p;
  uint64_t n = 0, tmax = 0, dmax = 0, nd = 0;
  for (;;) {
    int kind;
    size_t len = el_ev_run_frame(&r, p, &kind);
    uint64_t t = len ? el_ev_run_time(p) : 0;
    if (!len || t > tlim || kind == EL_EV_RUN_STOP) break;
    if (kind == EL_EV_RUN_DIRECT) {
      if (!direct_one(h, tb, el_ev_run_type(p), r.cap, t, p + 10)) break;
      nd++;
      dmax = t > dmax ? t : dmax;
    }
    n++;
    tmax = t > tmax ? t : tmax;
    last = p;
    p += len;
  }
  if (nd) direct_end(h, r.cap, dmax);
  taken->events = n;
  taken->tmax = tmax;
  taken->last = (size_t)(last - r.p);
  return (size_t)(p - r.p);
}

int el__ana_direct_wanted(const el_host_t *h) {
  /* live, el__ana_direct_run_ordered would decline every run */
  if (!h->ana || (h->clock.live && !h->ana->arrival)) return 0;
  return h->flags[EL_EV_RUN_THREAD] == EL__F_ANA ||
         h->flags[EL_EV_STOP_THREAD] == EL__F_ANA;
}

void el__ana_direct_sync(el_host_t *h) {
  int ana = el__ana_direct_wanted(h);
  el_ev_decoder_set_direct(h->dec, EL_EV_RUN_THREAD,
                           ana && h->flags[EL_EV_RUN_THREAD] == EL__F_ANA);
  el_ev_decoder_set_direct(h->dec, EL_EV_STOP_THREAD,
                           ana && h->flags[EL_EV_STOP_THREAD] == EL__F_ANA);
}

/* The sink's entry (host.c on_event) for an event only the analyses
 * take. In the per-capability mode it goes through at once
 * (take_arrival). In time order, a recorded session's RUN_THREAD or
 * STOP_THREAD, in its capability's time order, with the watermark cached
 * (the common case), takes one of two short paths: on the capability
 * holding the watermark, below every other capability's latest time
 * (wm_next), it goes through at once after the held events before it
 * (take_now); on another one, above the watermark, it is appended to its
 * queue, nothing being due (the held events all stay above the
 * watermark and at most MAX_HELD). Live, the same two, while the quiet
 * clock reads without a call (queue_live). Anything else takes the
 * general path, whose effect these paths have. h->ana is set: host.c
 * calls this only for types flagged EL__F_ANA, which lua_analysis.c sets
 * once it made h->ana (freed only with the host). */
int el__ana_event_only(el_host_t *h, const el_ev_event_t *ev) {
  if (h->ana->arrival) return take_arrival(h, ev);
  ana_t *a = h->ana;
  el__progress_t *p = &h->prog;
  unsigned stop = (unsigned)ev->type - EL_EV_RUN_THREAD, cap = ev->cap;
  uint64_t t = ev->t_ns;
  if (__builtin_expect(stop > 1 || !ev->known || cap >= MAX_CAPS ||
                           p->wm_dirty || p->state[cap] != CAP_SEEN ||
                           t < p->last[cap],
                       0))
    return event_only_slow(h, ev);
  if (h->clock.live) return queue_live(h, ev);
  if ((int)cap == p->wm_cap) {
    if (t < p->wm_next && a->held <= MAX_HELD && !h->stop) {
      rec_t r = rec_of(ev, stop);
      return take_now(h, &r, ev);
    }
  } else if (t > p->wm && a->lo > p->wm && a->held < MAX_HELD &&
             a->q[cap].n < a->q[cap].cap && t >= a->q[cap].last_t) {
    return queue_now(h, ev);
  }
  return event_only_slow(h, ev);
}

/* Free the queues' memory (el__ana_free). */
void el__ana_queues_free(ana_t *a) {
  /* Only queues up to max_q ever had memory (q_push_slow): the others'
   * zeroed pages are not touched. */
  for (int c = 0; c <= a->max_q; c++) q_block_free(a->q[c].v, a->q[c].cap);
}
