/* lua_order.c: time-ordered dispatch for Lua handlers (el.on(name, fn,
 * {order = "time"}), or every handler after el.order("time")).
 *
 * Events of the types such handlers subscribed to are copied into a
 * reorder buffer and released to
 * the handlers once they lie at or below the host's watermark
 * (host_clock.c: each capability's blocks arrive in time order, so no
 * event of a capability still waited for can come before it;
 * spec/eventlog-format.md §3.5, §3.6), and, in a recorded file whose scan
 * shows events without a capability of a type they want still to come
 * (GHC 9.0 writes its global block at exit), at or below the latest time
 * of those (el__order_watermark). Everything still held is released
 * at the end of each session, before the on_session_end hooks, and the
 * oldest once more than max_held are held (counted in order_forced). An
 * event older than one already released is late: dispatched at once, out
 * of order, counted in order_late. docs/lua-api.md §2 "Order of events".
 * The buffer is one queue per capability, each sorted by (time, arrival)
 * (appending is the rule: a capability's events arrive in time order but
 * for a few with an explicit earlier time); the next event released is
 * the first of the queue heads.
 *
 * Each held event is one record in the layout of the batch queue
 * (el__rec_t, host_internal.h: a header, its fields, the string views of
 * its string fields, a copy of the payload). Records of up to
 * EL__REC_SMALL bytes are recycled through a free list, so a steady
 * stream allocates nothing after warm-up. */
#include <string.h>

#include "host_internal.h"

#define DEFAULT_MAX_HELD (1u << 20) /* events held before forced release */
/* The farthest an event is inserted before the end of its capability's
 * queue; q_push returns FAR_BACK for one that would go farther. */
#define MAX_BACK 1024
#define FAR_BACK 1

typedef el__rec_t orec_t;

typedef struct oent_s {
  el_rts_ns_t t;
  uint64_t seq; /* arrival order: breaks ties */
  orec_t *r;
} oent_t;

/* The held events of one capability (or of none), sorted by (t, seq): a
 * ring, appended to at the back (a capability's events arrive in time
 * order but for the few with an earlier explicit time, which are inserted
 * further in). */
typedef struct oqueue_s {
  oent_t *v;
  size_t head, n, cap; /* cap: a power of two */
} oqueue_t;

#define NQUEUES (EL__MAX_CAPS + 1) /* the last one: events without a cap */

struct el__order_s {
  oqueue_t q[NQUEUES];
  int active[NQUEUES]; /* queues holding events */
  int nactive;
  size_t n;        /* events held */
  size_t max_held; /* forced release beyond this many */
  size_t peak;     /* most events held at once */
  uint64_t seq;
  el_rts_ns_t released_t; /* time of the last released event */
  int released_any;       /* released_t is meaningful */
  orec_t *free;           /* recycled EL__REC_SMALL records (linked
                                     through their first bytes) */
};

/* {====== records ======} */

/* A free small record holds the next free one in its first bytes. */
static orec_t *free_next(const orec_t *r) {
  orec_t *next;
  memcpy(&next, (const unsigned char *)r, sizeof next);
  return next;
}

static orec_t *rec_new(el__order_t *o, size_t size) {
  orec_t *r;
  if (size <= EL__REC_SMALL && o->free) {
    r = o->free;
    o->free = free_next(r);
  } else {
    r = el_malloc(size <= EL__REC_SMALL ? EL__REC_SMALL : size);
    if (!r) return NULL;
  }
  r->small = size <= EL__REC_SMALL;
  return r;
}

static void rec_free(el__order_t *o, orec_t *r) {
  if (!r->small) {
    el_free(r);
    return;
  }
  orec_t *next = o->free;
  memcpy((unsigned char *)r, &next, sizeof next);
  o->free = r;
}

/* A copy of ev, or NULL when out of memory. Integer events of at most
 * EL__BATCH_FIELDS fields take the small-record fill (el__rec_fill_ints). */
static orec_t *rec_copy(el_host_t *h, el__order_t *o, const el_ev_event_t *ev) {
  unsigned d = ev->type < EL__HOST_NTYPES ? h->direct[ev->type] : 0;
  if ((d & EL__D_BATCH) && ev->known &&
      ev->nfields == ((d >> EL__D_NSHIFT) & 7) &&
      ev->payload_len <= EL__BATCH_PAYLOAD) {
    orec_t *r = rec_new(o, EL__REC_SMALL);
    if (r) el__rec_fill_ints(r, ev, h->now);
    return r;
  }
  orec_t *r = rec_new(o, el__rec_size(ev));
  if (r) el__rec_fill(r, ev, h->now); /* leaves r->small */
  return r;
}

/* {====== the queues ======} */

static int before(const oent_t *a, const oent_t *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static oent_t *q_at(oqueue_t *q, size_t i) {
  return &q->v[(q->head + i) & (q->cap - 1)];
}

static int q_grow(oqueue_t *q) {
  size_t ncap = q->cap ? q->cap * 2 : 256;
  oent_t *nv = el_malloc(ncap * sizeof *nv);
  if (!nv) return EL_ENOMEM;
  for (size_t i = 0; i < q->n; i++) nv[i] = *q_at(q, i);
  el_free(q->v);
  q->v = nv;
  q->cap = ncap;
  q->head = 0;
  return 0;
}

/* Hold e in the queue of its capability, in (t, seq) order. Returns 0,
 * EL_ENOMEM, or FAR_BACK (nothing held) when e would go more than
 * MAX_BACK places before the queue's end: a capability's events are in
 * time order but for a few, and inserting far back in a long queue would
 * cost time in proportion to its length. */
static int q_push(el__order_t *o, unsigned cap, oent_t e) {
  int qi = cap < EL__MAX_CAPS ? (int)cap : NQUEUES - 1;
  oqueue_t *q = &o->q[qi];
  size_t i = q->n, stop = q->n > MAX_BACK ? q->n - MAX_BACK : 0;
  while (i > stop && before(&e, q_at(q, i - 1))) i--;
  if (i == stop && stop > 0 && before(&e, q_at(q, i - 1))) return FAR_BACK;
  if (q->n == q->cap && q_grow(q) != 0) return EL_ENOMEM;
  for (size_t k = q->n++; k > i; k--) *q_at(q, k) = *q_at(q, k - 1);
  *q_at(q, i) = e;
  if (q->n == 1) o->active[o->nactive++] = qi;
  if (++o->n > o->peak) o->peak = o->n;
  return 0;
}

/* The index in o->active of the queue whose head comes first. */
static int q_first(el__order_t *o) {
  int best = 0;
  for (int i = 1; i < o->nactive; i++)
    if (before(q_at(&o->q[o->active[i]], 0), q_at(&o->q[o->active[best]], 0)))
      best = i;
  return best;
}

static orec_t *q_pop(el__order_t *o, int ai) {
  oqueue_t *q = &o->q[o->active[ai]];
  orec_t *r = q_at(q, 0)->r;
  q->head = (q->head + 1) & (q->cap - 1);
  o->n--;
  if (--q->n == 0) o->active[ai] = o->active[--o->nactive];
  return r;
}

/* {====== hold and release ======} */

static el__order_t *order_get(el_host_t *h) {
  if (!h->order) {
    h->order = el_calloc(1, sizeof *h->order);
    if (h->order) h->order->max_held = DEFAULT_MAX_HELD;
  }
  return h->order;
}

/* Dispatch a released record to the time-order handlers and recycle it:
 * integer-only records join the batch queue (replayed in their turn with
 * the stream-order events, under one protected call per batch), any other
 * goes through el__events_dispatch_ordered once the queue is empty. */
static void deliver(el_host_t *h, el__order_t *o, orec_t *r) {
  if (!o->released_any || r->t > o->released_t) o->released_t = r->t;
  o->released_any = 1;
  if (!el__rec_replayable(h, r) || el__batch_add_ordered(h, r) != 0) {
    el__batch_flush(h); /* what was queued before it first */
    if (!h->stop && !h->interrupted) {
      el_ev_event_t ev;
      el__rec_event(r, &ev);
      el__events_dispatch_ordered(h, &ev);
    }
  }
  rec_free(o, r);
}

/* Dispatch ev to the time-order handlers at once (late, or not held),
 * after what the batch queue holds. */
static void dispatch_now(el_host_t *h, const el_ev_event_t *ev) {
  el__batch_flush(h);
  el__events_dispatch_ordered(h, ev);
}

void el__order_release(el_host_t *h, int all) {
  el__order_t *o = h->order;
  if (!o || h->in_dispatch) return;
  el_rts_ns_t wm = 0;
  /* The common case, nothing without a capability waited for (none to
   * come, or of no type wanted: nocap_ord 0 once known), without a call
   * more. */
  int rc = all ? -1
           : h->prog.nocap_wait && h->prog.nocap_ord != 0
               ? el__order_watermark(h, &wm)
               : el__watermark(h, &wm);
  int none = rc < 0;
  while (o->n && !h->stop && !h->interrupted) {
    int ai = q_first(o);
    if (!none && q_at(&o->q[o->active[ai]], 0)->t > wm) {
      if (o->n <= o->max_held) break;
      h->st.order_forced++;
    }
    deliver(h, o, q_pop(o, ai));
  }
  if (all) el__batch_flush(h); /* the session's last, before its hooks */
  if (all && !o->n) o->released_any = 0; /* the next session's times */
}

void el__order_event(el_host_t *h, const el_ev_event_t *ev) {
  el__order_t *o = order_get(h);
  if (!o) { /* out of memory: dispatched now, out of order */
    h->st.order_forced++;
    dispatch_now(h, ev);
    return;
  }
  if (ev->cap != EL_EV_NO_CAP)
    el__progress_event(h, ev->cap, ev->t_ns);
  else
    el__progress_nocap(h, ev);
  if (o->released_any && ev->t_ns < o->released_t) {
    h->st.order_late++; /* behind what was released: at once */
    dispatch_now(h, ev);
    return;
  }
  orec_t *r = rec_copy(h, o, ev);
  int rc = r ? q_push(o, ev->cap, (oent_t){ev->t_ns, ++o->seq, r}) : 0;
  if (!r || rc != 0) { /* out of memory, or far behind its capability */
    if (r) rec_free(o, r);
    if (rc == FAR_BACK)
      h->st.order_late++;
    else
      h->st.order_forced++;
    dispatch_now(h, ev);
    return;
  }
  if (o->n == EL__NEXT_CAP_HELD) /* live: enough held for the next cap */
    el__progress_held(h);
  el__order_release(h, 0);
}

size_t el__order_held(const el_host_t *h, size_t *peak) {
  if (peak) *peak = h->order ? h->order->peak : 0;
  return h->order ? h->order->n : 0;
}

size_t el__order_max(const el_host_t *h) {
  return h->order ? h->order->max_held : DEFAULT_MAX_HELD;
}

void el__order_set_max(el_host_t *h, size_t max_held) {
  el__order_t *o = order_get(h);
  if (o) o->max_held = max_held;
}

void el__order_free(el_host_t *h) {
  el__order_t *o = h->order;
  if (!o) return;
  for (int i = 0; i < NQUEUES; i++) {
    oqueue_t *q = &o->q[i];
    for (size_t k = 0; k < q->n; k++) rec_free(o, q_at(q, k)->r);
    el_free(q->v);
  }
  while (o->free) {
    orec_t *r = o->free;
    o->free = free_next(r);
    el_free(r);
  }
  el_free(o);
  h->order = NULL;
}
