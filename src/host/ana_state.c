/* ana_state.c: the state machines of the C analyses on events in time
 * order (spec/reference-behaviour.md §5.2.3): per thread (RUN_THREAD,
 * STOP_THREAD: running and blocked spans) and per capability (GC_START,
 * GC_END: GC spans). Threads live in a flat table, found by direct index
 * for the small ids GHC gives (below DIRECT_IDS) and through an el_map
 * otherwise; finished threads beyond keep_finished are forgotten. Spans go
 * to ana_emit.c. docs/lua-api.md §6. */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "../common/el_grow.h"

/* Point id at table index j (< EL_MAP_NONE - 1). */
static int index_put(ana_t *a, uint32_t id, size_t j) {
  if (id < DIRECT_IDS) {
    if (id >= a->ndirect) {
      size_t old = a->ndirect, want = (size_t)id + 1;
      if (el_grow(&a->direct, &a->ndirect, want, sizeof *a->direct) < 0)
        return EL_ENOMEM;
      memset(a->direct + old, 0, (a->ndirect - old) * sizeof *a->direct);
    }
    a->direct[id] = (uint32_t)j + 1;
    return 0;
  }
  return el_map_put(&a->tmap, id, (uint32_t)j);
}

static thread_t *thread_find(ana_t *a, uint32_t id) {
  uint32_t j;
  if (id < DIRECT_IDS) {
    if (id >= a->ndirect || !a->direct[id]) return NULL;
    return &a->threads[a->direct[id] - 1];
  }
  return el_map_get(&a->tmap, id, &j) ? &a->threads[j] : NULL;
}

thread_t *el__ana_thread(ana_t *a, uint32_t id, int create) {
  thread_t *t = thread_find(a, id);
  if (t || !create) return t;
  if (el_grow(&a->threads, &a->threads_cap, a->nthreads + 1,
              sizeof *a->threads) < 0 ||
      index_put(a, id, a->nthreads) != 0)
    return NULL;
  t = &a->threads[a->nthreads++];
  memset(t, 0, sizeof *t);
  t->id = id;
  t->first_t = UINT64_MAX; /* no event yet: any is the first */
  uint32_t g;
  if (a->ngone && el_map_get(&a->gone, id, &g)) {
    /* forgotten before it settled: finished, as it was (its earlier
     * events still count; threads_evict forgets it again) */
    t->state = TS_FINISHED;
    t->finished_t = t->last_t =
        a->gone_v[g].t; /* no earlier event is the latest */
    t->has_finished = 1;
    a->nfinished++;
  }
  return t;
}

/* Per-capability mode: remember that thread t, forgotten before it
 * settled, finished (ana_t.gone). Out of memory, it is not remembered: a
 * late event of it would make it anew, unfinished. */
static void gone_put(ana_t *a, const thread_t *t) {
  if (el_grow(&a->gone_v, &a->gone_cap, a->ngone + 1, sizeof *a->gone_v) < 0 ||
      el_map_put(&a->gone, t->id, (uint32_t)a->ngone) != 0)
    return;
  a->gone_v[a->ngone].t = t->finished_t;
  a->gone_v[a->ngone++].id = t->id;
}

/* Forget the records of ana_t.gone that the watermark (settled) passed. */
static void gone_prune(ana_t *a, uint64_t settled) {
  if (!a->ngone) return;
  size_t w = 0;
  el_map_clear(&a->gone);
  for (size_t j = 0; j < a->ngone; j++)
    if (a->gone_v[j].t > settled &&
        el_map_put(&a->gone, a->gone_v[j].id, (uint32_t)w) == 0)
      a->gone_v[w++] = a->gone_v[j];
  a->ngone = w;
}

void el__ana_threads_reindex(ana_t *a) {
  if (a->ndirect) memset(a->direct, 0, a->ndirect * sizeof *a->direct);
  el_map_clear(&a->tmap);
  for (size_t j = 0; j < a->nthreads; j++)
    if (index_put(a, a->threads[j].id, j) != 0) /* only the map grows */
      el_log(EL_LOG_ERROR, "analysis: out of memory indexing threads");
}

static void thread_free(ana_t *a, thread_t *t) {
  if (t->has_trace && a->ntrace) a->ntrace--;
  el_free(t->label);
  t->label = NULL;
}

static int cmp_finished(const void *x, const void *y) {
  const thread_t *a = *(thread_t *const *)x, *b = *(thread_t *const *)y;
  if (a->finished_t != b->finished_t)
    return a->finished_t < b->finished_t ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

uint64_t el__ana_settled(el_host_t *h) {
  el_rts_ns_t wm;
  if (!h->ana || !h->ana->arrival || el__watermark(h, &wm) < 0)
    return UINT64_MAX;
  return wm;
}

/* Forget the finished threads that finished longest ago, keeping
 * keep_finished of them, and none that finished after el__ana_settled (a
 * capability's earlier events of it may still come); counted in
 * threads_evicted. Runs when twice as many have finished as it kept
 * (keep_finished and the unsettled ones: nfin_unsettled), so its cost per
 * thread is constant even while the watermark holds them all. */
static void threads_evict(el_host_t *h) {
  ana_t *a = h->ana;
  thread_t **fin = el_malloc(a->nfinished * sizeof *fin);
  if (!fin) return; /* try again at the next finished thread */
  size_t n = 0;
  for (size_t j = 0; j < a->nthreads; j++)
    if (a->threads[j].state == TS_FINISHED && n < a->nfinished)
      fin[n++] = &a->threads[j];
  size_t drop = n > a->keep_finished ? n - a->keep_finished : 0;
  if (drop) qsort(fin, n, sizeof *fin, cmp_finished);
  /* per capability: keep those not settled, up to MAX_UNSETTLED */
  uint64_t settled = el__ana_settled(h);
  size_t must = drop > MAX_UNSETTLED ? drop - MAX_UNSETTLED : 0;
  while (drop > must && fin[drop - 1]->finished_t > settled) drop--;
  gone_prune(a, settled);
  size_t evicted = 0;
  for (size_t k = 0; k < drop; k++) {
    if (fin[k]->finished_t > settled) {
      /* a run of it open on a capability whose next block is still to
       * come ends there: it stays (only a lost stop keeps it for ever) */
      if (fin[k]->nopen) continue;
      gone_put(a, fin[k]);
    }
    fin[k]->state = -1; /* marked */
    evicted++;
  }
  el_free(fin);
  size_t w = 0;
  for (size_t j = 0; j < a->nthreads; j++) {
    thread_t *t = &a->threads[j];
    if (t->state == -1)
      thread_free(a, t);
    else if (w++ != j)
      a->threads[w - 1] = *t;
  }
  a->nthreads = w;
  a->nfinished = n - evicted;
  a->nfin_unsettled =
      a->nfinished > a->keep_finished ? a->nfinished - a->keep_finished : 0;
  h->st.threads_evicted += evicted;
  el__ana_threads_reindex(a);
}

/* The open run of th on cap, or -1. */
static int open_find(const thread_t *th, uint16_t cap) {
  for (int k = 0; k < th->nopen; k++)
    if (th->open[k].cap == cap) return k;
  return -1;
}

static void open_remove(thread_t *th, int k) {
  for (int j = k + 1; j < th->nopen; j++) th->open[j - 1] = th->open[j];
  th->nopen--;
}

/* A run of th began on r->cap at r->t (none is open there). */
static void open_add(ana_t *a, thread_t *th, const rec_t *r) {
  if (th->nopen == OPEN_RUNS) { /* never stopped: forget the oldest */
    int old = 0;
    for (int k = 1; k < th->nopen; k++)
      if (th->open[k].t < th->open[old].t) old = k;
    open_remove(th, old);
    a->unexpected++;
  }
  th->open[th->nopen].t = r->t;
  th->open[th->nopen].cap = r->cap;
  th->nopen++;
}

/* The running span of th from start to its stop r: the thread's totals,
 * then the capability usage and outputs (ana_emit.c). */
static inline void run_span(el_host_t *h, thread_t *th, const rec_t *r,
                            uint64_t start) {
  th->running_ns += r->t > start ? r->t - start : 0;
  th->runs++;
  unsigned f = h->ana->feat; /* the default processors', native spans */
  if ((f & ~(F_CAPS_NATIVE | F_THREAD_OUT)) != (F_POINTS | F_PROD) ||
      !el__ana_run_span_fast(h, th, r->cap, start, r->t, 0)) {
    el__ana_run_span(h, th, r, start);
    return;
  }
  /* el__ana_run_span's outputs after the usage, counted inline when no
   * exporter takes traces */
  if ((f & F_CAPS_NATIVE) && !el__ana_native_counted(h, 0))
    el__ana_cap_mut_span(h, r->cap, th->id, start, r->t);
  if ((f & F_THREAD_OUT) && !el__ana_thread_out_counted(h))
    el__ana_thread_out(h, th, 1, r, start, r->t);
}

/* The blocked span of th from its last stop (th->prev_t, with its status,
 * info and capability) to end: the thread's totals, then the outputs. */
static inline void blocked_span(el_host_t *h, thread_t *th, uint64_t end) {
  uint64_t start = th->prev_t, d = end > start ? end - start : 0;
  th->blocked_ns += d;
  th->blocked[th->prev_status < NSTATUS ? th->prev_status : NSTATUS] += d;
  if ((h->ana->feat & F_THREAD_OUT) && !el__ana_thread_out_counted(h)) {
    rec_t stop = {.t = start,
                  .info = th->prev_info,
                  .cap = th->prev_cap,
                  .status = th->prev_status,
                  .kind = K_STOP};
    el__ana_thread_out(h, th, 0, &stop, start, end);
  }
}

/* The run open on r->cap (open[k]) ends at r->t: a running span on that
 * capability, named by the stop that ends it. Runs of th open on other
 * capabilities that began before it can no longer end (a thread runs on
 * one capability at a time): dropped, counted in unexpected; not in the
 * per-capability mode, where another capability's earlier events may
 * still be to come (there a run whose stop was lost is dropped by the
 * thread's next run on its capability: run_general). An older (late) pair
 * leaves the thread's current state as it was. */
static void run_end(el_host_t *h, thread_t *th, int k, const rec_t *r) {
  uint64_t start = th->open[k].t;
  open_remove(th, k);
  for (int j = th->nopen - 1; j >= 0 && !h->ana->arrival; j--)
    if (th->open[j].t < start) {
      open_remove(th, j);
      h->ana->unexpected++;
    }
  run_span(h, th, r, start);
}

/* The latest stop r of th (its run ended, or a blocked span): finished
 * or blocked from now. */
static inline void stop_latest(el_host_t *h, thread_t *th, const rec_t *r) {
  th->prev = K_STOP;
  th->prev_t = r->t;
  th->prev_cap = r->cap;
  th->prev_status = r->status;
  th->prev_info = r->info;
  th->has_status = 1;
  if (r->status == EL_EV_STATUS_THREAD_FINISHED) {
    ana_t *a = h->ana;
    th->state = TS_FINISHED;
    th->finished_t = r->t;
    th->has_finished = 1;
    if (++a->nfinished > 2 * (a->keep_finished + a->nfin_unsettled) + 64)
      threads_evict(h);
  } else {
    th->state = TS_BLOCKED;
  }
}

/* el__ana_thread_stop but for its common case (one run open, on r->cap):
 * the run on r->cap ends, or with none open there a stop after a stop
 * (latest) ends a blocked span; else r is unexpected (counted). */
static __attribute__((noinline)) void stop_general(el_host_t *h, thread_t *th,
                                                   const rec_t *r, int latest) {
  int k = open_find(th, r->cap);
  if (k >= 0) {
    run_end(h, th, k, r);
  } else if (latest && th->prev == K_STOP) {
    blocked_span(h, th, r->t);
  } else {
    h->ana->unexpected++;
    return;
  }
  if (latest) stop_latest(h, th, r);
}

/* The thread's STOP_THREAD: the run on its capability ends; when it is
 * the thread's latest event, finished or blocked from now. */
void el__ana_thread_stop(el_host_t *h, thread_t *th, const rec_t *r,
                         int latest) {
  if (th->nopen != 1 || th->open[0].cap != r->cap) {
    stop_general(h, th, r, latest);
    return;
  }
  th->nopen = 0;
  run_span(h, th, r, th->open[0].t);
  if (latest) stop_latest(h, th, r);
}

/* th runs from r (its latest RUN_THREAD) on. */
static inline void run_state(thread_t *th, const rec_t *r) {
  th->prev = K_RUN;
  th->prev_t = r->t;
  th->prev_cap = r->cap;
  th->cap = r->cap;
  th->state = TS_RUNNING;
}

/* The latest RUN_THREAD r of th: the blocked span since its last stop
 * ends (when r is not before it), the thread is running. */
static void run_latest(el_host_t *h, thread_t *th, const rec_t *r) {
  if (th->prev == K_STOP && r->t >= th->prev_t) blocked_span(h, th, r->t);
  run_state(th, r);
}

/* el__ana_thread_run with a run open already. A second RUN_THREAD of
 * the thread on a capability where its run is open keeps the earlier run;
 * but in the per-capability mode, where a run whose STOP_THREAD was lost
 * is not dropped by the thread's runs elsewhere (run_end), a run that a
 * later span of the capability has passed (another thread ran there, or
 * a GC, since it began) is stale: replaced by the new one, counted in
 * unexpected. */
static __attribute__((noinline)) void run_general(el_host_t *h, thread_t *th,
                                                  const rec_t *r, int latest) {
  ana_t *a = h->ana;
  int k = open_find(th, r->cap);
  if (k >= 0) {
    const cap_t *c = &a->caps[r->cap];
    if (!a->arrival || !c->used_prev || c->prev_end <= th->open[k].t) return;
    open_remove(th, k);
    a->unexpected++;
  }
  open_add(a, th, r);
  if (latest) run_latest(h, th, r);
}

/* run_latest when the blocked span ends and has outputs (F_THREAD_OUT). */
static __attribute__((noinline)) void run_latest_out(el_host_t *h, thread_t *th,
                                                     const rec_t *r) {
  blocked_span(h, th, r->t);
  run_state(th, r);
}

/* The thread's RUN_THREAD: a run opens on its capability; when it is the
 * thread's latest event, the blocked span since its last stop ends and
 * the thread is running. */
void el__ana_thread_run(el_host_t *h, thread_t *th, const rec_t *r,
                        int latest) {
  if (th->nopen) {
    run_general(h, th, r, latest);
    return;
  }
  th->open[0].t = r->t; /* the common case: no run open */
  th->open[0].cap = r->cap;
  th->nopen = 1;
  if (!latest) return;
  if (th->prev == K_STOP && r->t >= th->prev_t) {
    if (h->ana->feat & F_THREAD_OUT) {
      run_latest_out(h, th, r);
      return;
    }
    uint64_t d = r->t - th->prev_t; /* blocked_span without outputs */
    th->blocked_ns += d;
    th->blocked[th->prev_status < NSTATUS ? th->prev_status : NSTATUS] += d;
  }
  run_state(th, r);
}

void el__ana_thread_lookup(el_host_t *h, const rec_t *r) {
  thread_t *th = el__ana_thread(h->ana, r->thread, 1);
  if (th) el__ana_thread_event(h, th, r);
}

void el__ana_gc(el_host_t *h, const rec_t *r) {
  ana_t *a = h->ana;
  if (r->cap >= MAX_CAPS) return;
  cap_t *c = &a->caps[r->cap];
  if (r->kind == K_GC_START) {
    if (c->state == K_GC_START && c->t < r->t) return; /* keep earlier */
    c->state = K_GC_START;
    c->t = r->t;
    return;
  }
  if (c->state == 0) {
    a->unexpected++;
    return;
  }
  if (c->state == K_GC_END) {
    if (r->t < c->t) c->t = r->t;
    return;
  }
  uint64_t start = c->t, d = r->t > start ? r->t - start : 0;
  c->state = K_GC_END;
  c->t = r->t;
  c->count++;
  c->total_ns += d;
  if (d > c->max_ns) c->max_ns = d;
  el__ana_gc_span(h, r->cap, start, r->t);
}

void el__ana_process(el_host_t *h, const rec_t *r) { el__ana_process_in(h, r); }

void el__ana_session(el_host_t *h) {
  ana_t *a = h->ana;
  if (!a) return;
  for (size_t i = 0; i < a->nthreads; i++) thread_free(a, &a->threads[i]);
  a->nthreads = 0;
  a->nfinished = a->nfin_unsettled = a->ngone = 0;
  el_map_clear(&a->gone);
  a->ntrace = 0;
  el__ana_threads_reindex(a);
  /* Only capabilities up to max_cap were written this session (every
   * event raises it before its capability's state changes), and the
   * previous session's were cleared here: the pages of the others, zero
   * since the table was allocated, are not touched. */
  size_t ncaps = (size_t)(a->max_cap + 1);
  memset(a->caps, 0, ncaps * sizeof a->caps[0]);
  memset(a->cap_has_trace, 0, ncaps * sizeof a->cap_has_trace[0]);
  a->max_cap = -1;
  a->nus = a->nufree = a->nusers = a->nudirty = 0;
  el__ana_users_changed(a);
  el_map_clear(&a->umap);
  a->released_t = 0;
}

void el__ana_free(el_host_t *h) {
  ana_t *a = h->ana;
  if (!a) return;
  for (size_t i = 0; i < a->nthreads; i++) el_free(a->threads[i].label);
  el_free(a->threads);
  el_free(a->direct);
  el_map_free(&a->tmap);
  el_map_free(&a->gone);
  el_free(a->gone_v);
  el__ana_queues_free(a);
  el_free(a->us);
  el_free(a->ufree);
  el_map_free(&a->umap);
  el_free(a->udirty);
  for (int i = 0; i < 2; i++) {
    el_free(a->cap_names[i]);
    el_free(a->th_names[i]);
  }
  el_free(a);
  h->ana = NULL;
}
