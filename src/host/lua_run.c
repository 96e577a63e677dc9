/* lua_run.c: the Lua handlers' batched events straight from the
 * decoder's runs. An event of a type that only stream-order Lua handlers
 * want, whose events are batched (integer fields only, at most
 * EL__BATCH_FIELDS of them and EL__BATCH_PAYLOAD bytes), is queued by
 * on_event as a batch record (el__batch_add_in) and replayed later
 * (lua_events.c). Those types are direct types of the decoder here
 * (el_ev_decoder_set_direct) and its run handler, el__lua_direct_run,
 * writes the same record from the run's bytes: no el_ev_event_t, no
 * field decode by the decoder and no on_event call per event
 * (docs/eventlog.md "A run handed over whole", docs/performance.md "Lua
 * dispatch"). The analyses' run handler (el__ana_direct_run) takes the
 * decoder's one slot instead while RUN_THREAD or STOP_THREAD are direct
 * for them (el__ana_direct_sync): then no type is direct for Lua. */
#include <string.h>

#include "ana_internal.h"
#include "host_internal.h"

/* The value of a wire field of code w (EL_EV_WIRE_*) at p; *len its
 * bytes. */
static uint64_t wire_value(uint8_t w, const uint8_t *p, unsigned *len) {
  switch (w) {
  case EL_EV_WIRE_U8:
    *len = 1;
    return p[0];
  case EL_EV_WIRE_U16:
    *len = 2;
    return el_ev_be16(p);
  case EL_EV_WIRE_U32:
    *len = 4;
    return el_ev_be32(p);
  case EL_EV_WIRE_U64:
    *len = 8;
    return el_ev_be64(p);
  default: /* EL_EV_WIRE_LOG2U8 */
    *len = 1;
    return p[0] < 64 ? (uint64_t)1 << p[0] : 0;
  }
}

/* The recipe of type t in the session the decoder just read (shape 0:
 * not taken). */
static el__lrun_t lrun_of(const el_host_t *h, int t) {
  el__lrun_t r = {0};
  el_ev_fixed_t fx;
  if (!(h->direct[t] & EL__D_BATCH) ||
      el_ev_decoder_fixed(h->dec, (uint16_t)t, &fx) != 0 ||
      fx.payload_len > EL__BATCH_PAYLOAD || fx.nwire > EL__BATCH_FIELDS ||
      fx.nfields != ((h->direct[t] >> EL__D_NSHIFT) & 7))
    return r;
  static const uint8_t s_u32[] = {EL_EV_WIRE_U32},
                       s_u32_u16[] = {EL_EV_WIRE_U32, EL_EV_WIRE_U16},
                       s_stop[] = {EL_EV_WIRE_U32, EL_EV_WIRE_U16,
                                   EL_EV_WIRE_U32};
  r.w = (uint64_t)fx.payload_len | (uint64_t)1 << 32 |
        (uint64_t)fx.layout << 48 | (uint64_t)fx.nfields << 56;
  r.nwire = fx.nwire;
  memcpy(r.wire, fx.wire, fx.nwire);
  int whole = fx.nwire == fx.nfields; /* no zero fill */
  r.shape = fx.nfields == 0                                        ? EL__LR_NONE
            : whole && fx.nwire == 1 && !memcmp(fx.wire, s_u32, 1) ? EL__LR_U32
            : whole && fx.nwire == 2 && !memcmp(fx.wire, s_u32_u16, 2)
                ? EL__LR_U32_U16
            : whole && fx.nwire == 3 && !memcmp(fx.wire, s_stop, 3)
                ? EL__LR_STOP
                : EL__LR_GEN;
  return r;
}

void el__lrun_session(el_host_t *h) {
  for (int t = 0; t < EL__HOST_NTYPES; t++) {
    el__lrun_t r = lrun_of(h, t);
    r.on = h->lrun[t].on; /* el__direct_sync changes it */
    h->lrun[t] = r;
  }
  el__direct_sync(h, -1);
}

/* Which run handler RUN_THREAD and STOP_THREAD need while they are
 * direct for the analyses (the condition of el__ana_direct_sync): 1 the
 * per-capability mode's (el__ana_direct_run), 2 time order's
 * (el__ana_direct_run_ordered); 0 when they are not. */
static int ana_direct_on(const el_host_t *h) {
  if (!el__ana_direct_wanted(h)) return 0;
  return h->ana->arrival ? 1 : 2;
}

/* Do the C analyses want any event type? Their events are then
 * delivered (or taken by el__ana_direct_run), and with a direct type the
 * decoder's loop costs each delivered event more than the run path saves
 * on the batched ones (with every processor of the daemon on, whose Lua
 * wants a few heap events: 3.6% more instructions on threads.eventlog). */
static int ana_wants(const el_host_t *h) {
  if (!h->ana) return 0;
  for (int t = 0; t < EL__HOST_NTYPES; t++)
    if (h->flags[t] & EL__F_ANA) return 1;
  return 0;
}

/* Type t direct for el__lua_direct_run or not, as its flags and recipe
 * say (off: the analyses want events: none). RUN_THREAD and STOP_THREAD
 * turned off are left as el__ana_direct_sync, called before, set them. */
static void lua_direct_set(el_host_t *h, int t, int off) {
  int on = !off && h->lrun[t].shape && h->flags[t] == EL__F_LUA;
  if (on == h->lrun[t].on) return;
  h->lrun[t].on = (uint8_t)on;
  if (on || (t != EL_EV_RUN_THREAD && t != EL_EV_STOP_THREAD))
    el_ev_decoder_set_direct(h->dec, t, on);
}

void el__direct_sync(el_host_t *h, int type) {
  if (type >= EL__HOST_NTYPES) return;
  int rs = type < 0 || type == EL_EV_RUN_THREAD || type == EL_EV_STOP_THREAD;
  if (rs) {
    /* RUN_THREAD and STOP_THREAD: the analyses' (off unless theirs) */
    el__ana_direct_sync(h);
    if (h->lrun[EL_EV_RUN_THREAD].on)
      el_ev_decoder_set_direct(h->dec, EL_EV_RUN_THREAD, 1);
    if (h->lrun[EL_EV_STOP_THREAD].on)
      el_ev_decoder_set_direct(h->dec, EL_EV_STOP_THREAD, 1);
  }
  int ana = ana_direct_on(h);
  if (ana != h->lrun_ana) { /* only with rs: the analyses changed */
    h->lrun_ana = ana;
    el_ev_decoder_direct_run(h->dec,
                             ana == 1   ? el__ana_direct_run
                             : ana == 2 ? el__ana_direct_run_ordered
                                        : el__lua_direct_run,
                             h);
  }
  int off = ana || ana_wants(h);
  if (off != h->lrun_off) {
    h->lrun_off = off;
    type = -1;
  }
  if (type >= 0) {
    lua_direct_set(h, type, off);
  } else {
    for (int t = 0; t < EL__HOST_NTYPES; t++) lua_direct_set(h, t, off);
  }
}

/* The fields of an EL__LR_GEN event (payload p) into f[]. */
static __attribute__((noinline)) void fields_gen(const el__lrun_t *lr,
                                                 const uint8_t *p,
                                                 uint64_t *f) {
  unsigned i = 0, n = lr->nwire, nf = (unsigned)(lr->w >> 56), len;
  for (; i < n; i++, p += len) f[i] = wire_value(lr->wire[i], p, &len);
  for (; i < nf; i++) f[i] = 0;
}

size_t el__lua_direct_run(void *ud, const el_ev_run_t *run,
                          el_ev_run_taken_t *taken) {
  el_host_t *h = ud;
  const el_ev_run_t r = *run;
  /* on_event's checks that do not change without a delivery: quiet_until
   * is 0 after a stop, while a session's first event is awaited and
   * with a timer due; el__batch_add_in queues nothing inside a
   * dispatch. */
  if (!h->quiet_until || h->interrupted || h->in_dispatch ||
      (!h->batch && el__batch_grow(h) != 0))
    return 0;
  /* an event is taken up to tlim: below quiet_until (a timer's
   * deadline: on_event_rare fires it first), at most the block's end */
  const uint64_t tlim =
      r.tend < h->quiet_until - 1 ? r.tend : h->quiet_until - 1;
  unsigned char *const slots = h->batch;
  const el__lrun_t *const lrun = h->lrun;
  const uint64_t capk = (uint64_t)r.cap << 16;
  int nb = h->nbatch;
  el_rts_ns_t now = h->now, tmax = 0; /* stream time, as on_event keeps it */
  const uint8_t *p = r.p, *last = p;
  uint64_t n = 0;
  for (;;) {
    int kind;
    size_t len = el_ev_run_frame(&r, p, &kind);
    uint64_t t = len ? el_ev_run_time(p) : 0;
    if (!len || t > tlim || kind == EL_EV_RUN_STOP) break;
    if (kind == EL_EV_RUN_DIRECT) {
      unsigned type = el_ev_run_type(p);
      /* the record that fills the queue: on_event's (it replays) */
      if (type >= EL__HOST_NTYPES || !lrun[type].on || nb == EL__BATCH - 1)
        break;
      const el__lrun_t *lr = &lrun[type];
      el__rec_t *rec = (el__rec_t *)(slots + (size_t)nb++ * EL__REC_SMALL);
      const uint8_t *pl = p + 10;
      uint64_t w = lr->w, tc = type | capk; /* strmask, ordered 0 */
      now = t > now ? t : now;
      rec->t = t;
      rec->now = now;
      rec->offset = r.offset + (uint64_t)(p - r.p);
      memcpy(&rec->plen, &w, 8);
      memcpy(&rec->type, &tc, 8);
      switch (lr->shape) {
      case EL__LR_U32:
        rec->f[0] = el_ev_be32(pl);
        break;
      case EL__LR_U32_U16:
        rec->f[0] = el_ev_be32(pl);
        rec->f[1] = el_ev_be16(pl + 4);
        break;
      case EL__LR_STOP:
        rec->f[0] = el_ev_be32(pl);
        rec->f[1] = el_ev_be16(pl + 4);
        rec->f[2] = el_ev_be32(pl + 6);
        break;
      case EL__LR_GEN:
        fields_gen(lr, pl, rec->f);
        break;
      default: /* EL__LR_NONE */
        break;
      }
      el__small_copy((unsigned char *)&rec->f[w >> 56], pl, (uint32_t)w);
    } else {
      now = t > now ? t : now;
    }
    tmax = t > tmax ? t : tmax;
    n++;
    last = p;
    p += len;
  }
  h->nbatch = nb;
  taken->events = n;
  taken->tmax = tmax;
  taken->last = (size_t)(last - r.p);
  return (size_t)(p - r.p);
}
