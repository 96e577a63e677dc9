/* web_events.c: what the web view keeps from logs and spans: the log
 * tail, user markers, the threads table (labels from ThreadLabel logs,
 * states from the traces processor thread_state), GC pauses and
 * capability usage per time bin (from the traces processor
 * capability_usage), and their part of /api/data. Everything is bounded
 * (web_internal.h, docs/web.md "Limits"). Thread: the loop thread (the
 * consumers) and HTTP threads (web_json_events), under el_web_t.mu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/el_grow.h"
#include "../common/el_hash.h"
#include "telemetry/telemetry_batch.h"
#include "web_internal.h"

/* {====== attributes ======} */

static const el_tm_attr_t *attr_find(const el_tm_attr_t *a, size_t n,
                                     const char *key) {
  for (size_t k = 0; k < n; k++)
    if (!strcmp(a[k].key, key)) return &a[k];
  return NULL;
}

/* The attribute's value as an el_malloc'd string; NULL when absent or out
 * of memory. */
static char *attr_str(const el_tm_attr_t *a) {
  if (!a) return NULL;
  el_buf_t b = EL_BUF_INIT;
  web_attr_value(a, &b);
  return el_buf_take(&b);
}

static bool attr_int(const el_tm_attr_t *a, int64_t *out) {
  if (!a) return false;
  if (a->type == EL_TM_INT) return *out = a->v.i, true;
  if (a->type == EL_TM_STR && a->v.s.len && a->v.s.len < 24) {
    char tmp[24], *end;
    memcpy(tmp, a->v.s.p, a->v.s.len);
    tmp[a->v.s.len] = 0;
    long long v = strtoll(tmp, &end, 10);
    if (*end == 0) return *out = v, true;
  }
  return false;
}

static bool ends_with(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && !memcmp(s + n - k, suffix, k);
}

static void replace(char **dst, char *src) {
  el_free(*dst);
  *dst = src;
}

/* {====== threads ======} */

/* Set the marks of thread id to m (web_thids.c); an id whose marks
 * could not be set is counted (threads_other.unremembered). */
static void id_set_marks(el_web_t *w, int64_t id, unsigned m) {
  if (!web_thids_set(&w->thids, id, m)) w->thother.unremembered++;
}

/* The label store (w->thlab): open addressing with linear probing. The
 * slot holding id, or the empty slot where it would go. */
static size_t label_slot(const el_web_t *w, int64_t id) {
  size_t k = (size_t)(el_hash_u64((uint64_t)id) % WEB_THREAD_LABEL_SLOTS);
  while (w->thlab[k].label && w->thlab[k].id != id)
    k = (k + 1) % WEB_THREAD_LABEL_SLOTS;
  return k;
}

static const char *label_get(const el_web_t *w, int64_t id) {
  return w->thlab[label_slot(w, id)].label;
}

/* Keep a copy of label for thread id; dropped (counted) when the store
 * holds WEB_THREAD_LABELS other threads' labels. */
static void label_put(el_web_t *w, int64_t id, const char *label) {
  size_t k = label_slot(w, id);
  bool fresh = !w->thlab[k].label;
  if (fresh && w->nthlab >= WEB_THREAD_LABELS) {
    w->thother.dropped_labels++;
    return;
  }
  char *c = el_strdup(label);
  if (!c) return;
  replace(&w->thlab[k].label, c);
  w->thlab[k].id = id;
  if (fresh) w->nthlab++;
}

/* Forget thread id's label; the entries after it in its probe run move
 * back (backward-shift deletion), so no lookup stops early. */
static void label_del(el_web_t *w, int64_t id) {
  size_t k = label_slot(w, id);
  if (!w->thlab[k].label) return;
  el_free(w->thlab[k].label);
  w->thlab[k].label = NULL;
  w->nthlab--;
  for (size_t j = (k + 1) % WEB_THREAD_LABEL_SLOTS; w->thlab[j].label;
       j = (j + 1) % WEB_THREAD_LABEL_SLOTS) {
    size_t h = (size_t)(el_hash_u64((uint64_t)w->thlab[j].id) %
                        WEB_THREAD_LABEL_SLOTS);
    /* j stays when its home h lies cyclically in (k, j]. */
    bool stays = k < j ? (h > k && h <= j) : (h > k || h <= j);
    if (stays) continue;
    w->thlab[k] = w->thlab[j];
    w->thlab[j].label = NULL;
    k = j;
  }
}

static void labels_clear(el_web_t *w) {
  for (size_t k = 0; k < WEB_THREAD_LABEL_SLOTS; k++) {
    el_free(w->thlab[k].label);
    w->thlab[k].label = NULL;
  }
  w->nthlab = 0;
}

/* Whether thread t finished (a ThreadFinished span came). */
static bool thread_finished(const web_thread_t *t) {
  return t->state && !strcmp(t->state, "Finished");
}

/* Whether thread t is over: finished, or ended with its session. */
static bool thread_over(const web_thread_t *t) {
  return thread_finished(t) || (t->state && !strcmp(t->state, "Ended"));
}

/* Whether marks m (web_thids_get) say the thread left over. */
static bool marks_over(unsigned m) {
  return m == WEB_TH_OUT_ENDED || m == WEB_TH_OUT_FINISHED;
}

/* Row t leaves the table for the "other" row, counted finished, ended
 * (with its session or the input: its finish not known) or neither. A
 * current-session thread is remembered by id (it may come back:
 * thread_get); an over one's label is forgotten (it will not). */
static void thread_release(el_web_t *w, web_thread_t *t) {
  bool over = thread_over(t);
  bool fin = thread_finished(t);
  if (t->session == w->th_session) {
    id_set_marks(w, t->id,
                 fin    ? WEB_TH_OUT_FINISHED
                 : over ? WEB_TH_OUT_ENDED
                        : WEB_TH_OUT);
    if (over) label_del(w, t->id);
  }
  w->thother.threads++;
  if (fin)
    w->thother.finished++;
  else if (over)
    w->thother.ended++;
  w->thother.running_ms += t->running_ms;
  el_free(t->label);
  el_free(t->status);
}

/* Whether thread t goes before u when the table is cut: finished threads
 * first (oldest finish first), then the youngest (latest first span: a
 * stream of short-lived threads does not push out the long-lived ones,
 * which are mostly blocked), then the least active. */
static bool thread_goes_first(const web_thread_t *t, const web_thread_t *u) {
  bool tf = thread_over(t);
  bool uf = thread_over(u);
  if (tf != uf) return tf;
  if (tf) return t->t_ms < u->t_ms;
  if (t->first_ms != u->first_ms) return t->first_ms > u->first_ms;
  return t->running_ms < u->running_ms;
}

static int cmp_thread_cut(const void *a, const void *b) {
  const web_thread_t *t = a, *u = b;
  return thread_goes_first(t, u) ? -1 : thread_goes_first(u, t) ? 1 : 0;
}

/* Index the current session's rows by thread id (an earlier session's
 * rows stay in the table, ended, and are found no more). */
static void threads_reindex(el_web_t *w) {
  el_map_clear(&w->thidx);
  for (size_t k = 0; k < w->nthreads; k++)
    if (w->threads[k].session == w->th_session)
      el_map_put(&w->thidx, (uint64_t)w->threads[k].id, (uint32_t)k);
}

/* Age the table: finished threads leave WEB_THREAD_FINISHED_KEEP_MS after
 * their finish (against the newest span); a full table also loses its
 * first quarter in cmp_thread_cut order. The leavers go to the "other"
 * row. */
static void threads_age(el_web_t *w, bool full) {
  size_t j = 0;
  for (size_t k = 0; k < w->nthreads; k++) {
    web_thread_t *t = &w->threads[k];
    if (thread_over(t) &&
        t->t_ms + WEB_THREAD_FINISHED_KEEP_MS < w->th_newest_ms) {
      thread_release(w, t);
      continue;
    }
    w->threads[j++] = *t;
  }
  w->nthreads = j;
  if (full && w->nthreads >= WEB_THREADS_MAX) {
    qsort(w->threads, w->nthreads, sizeof *w->threads, cmp_thread_cut);
    size_t cut = w->nthreads / 4;
    for (size_t k = 0; k < cut; k++) thread_release(w, &w->threads[k]);
    memmove(w->threads, w->threads + cut,
            (w->nthreads - cut) * sizeof *w->threads);
    w->nthreads -= cut;
  }
  threads_reindex(w);
}

/* The row of thread id: found, or new with its kept label. A thread that
 * had left the table comes back out of the "other" row (its running time
 * there stays: the row counts from now). NULL when out of memory. */
static web_thread_t *thread_get(el_web_t *w, int64_t id) {
  uint32_t i;
  if (el_map_get(&w->thidx, (uint64_t)id, &i)) return &w->threads[i];
  if (w->nthreads >= WEB_THREADS_MAX) threads_age(w, true);
  if (el_grow(&w->threads, &w->capthreads, w->nthreads + 1,
              sizeof *w->threads) < 0 ||
      el_map_put(&w->thidx, (uint64_t)id, (uint32_t)w->nthreads) < 0)
    return NULL;
  web_thread_t *t = &w->threads[w->nthreads++];
  memset(t, 0, sizeof *t);
  t->id = id;
  t->cap = -1;
  t->session = w->th_session;
  const char *label = label_get(w, id);
  if (label) t->label = el_strdup(label);
  unsigned m = web_thids_get(&w->thids, id);
  if (m) {
    w->thother.threads--;
    if (m == WEB_TH_OUT_FINISHED) w->thother.finished--;
    if (m == WEB_TH_OUT_ENDED) w->thother.ended--;
    id_set_marks(w, id, 0);
  }
  return t;
}

/* End every row not over: state "Ended" as of the newest span (it then
 * ages out as finished rows do), status "session N ended" when why is
 * NULL (a newer session began), else "<why> (was <state>[: <status>])",
 * keeping the state the thread was last seen in; just "<why>" for a row
 * no span came for (its state was never known: /api/data sends it
 * null, json_threads). */
static void threads_end(el_web_t *w, const char *why) {
  char status[128];
  for (size_t k = 0; k < w->nthreads; k++) {
    web_thread_t *t = &w->threads[k];
    if (thread_over(t)) continue;
    if (!why)
      snprintf(status, sizeof status, "session %llu ended",
               (unsigned long long)t->session);
    else if (!t->spans)
      snprintf(status, sizeof status, "%s", why);
    else
      snprintf(status, sizeof status, "%s (was %s%s%s)", why,
               t->state ? t->state : "unknown", t->status ? ": " : "",
               t->status ? t->status : "");
    t->state = "Ended";
    replace(&t->status, el_strdup(status));
    if (t->t_ms < w->th_newest_ms) t->t_ms = w->th_newest_ms;
  }
}

/* Records of session sess came (0: the host's own, no session). A newer
 * session (a reconnection: another program, whose thread ids mean other
 * threads) ends the previous session's threads: a row not finished
 * becomes "Ended" (status "session N ended") as of the newest span and
 * ages out as finished ones do; the labels kept and the memory of the
 * ids that left are forgotten. Returns false for records of an earlier
 * session than the current one (counted, not applied). */
static bool threads_session(el_web_t *w, uint64_t sess) {
  if (sess == 0 || sess == w->th_session) return true;
  if (sess < w->th_session) {
    w->thother.late_session++;
    return false;
  }
  threads_end(w, NULL);
  w->th_session = sess;
  threads_reindex(w);
  web_thids_clear(&w->thids);
  labels_clear(w);
  return true;
}

/* A thread's label: kept by id (label_put) and onto its row; before any
 * thread-state span (the traces processor thread_state may be off) it
 * makes a row, else the thread's next span does (thread_get). The label
 * of a finished thread that has left the table is only counted
 * (late_labels): it will not come back. */
static void thread_label(el_web_t *w, int64_t id, const char *label) {
  uint32_t i;
  web_thread_t *th = NULL;
  if (!el_map_get(&w->thidx, (uint64_t)id, &i) &&
      marks_over(web_thids_get(&w->thids, id))) {
    w->thother.late_labels++;
    return;
  }
  label_put(w, id, label);
  if (el_map_get(&w->thidx, (uint64_t)id, &i))
    th = &w->threads[i];
  else if (w->th_newest_ms == 0)
    th = thread_get(w, id);
  if (th) replace(&th->label, el_strdup(label));
}

/* The stop statuses after which a thread waits on its capability's run
 * queue rather than for something: it was preempted (its heap block or
 * stack filled, its time slice ran out) or is moving to another
 * capability (spec/eventlog-format.md, STOP_THREAD). The traces keep the
 * reference's "Blocked" span for them (spec/reference-behaviour.md
 * §5.3); the web view says "Runnable", as ThreadScope does. */
static bool status_runnable(const char *status) {
  static const char *const runnable[] = {"HeapOverflow", "StackOverflow",
                                         "ThreadYielding", "ThreadMigrating"};
  for (size_t i = 0; status && i < sizeof runnable / sizeof *runnable; i++)
    if (!strcmp(status, runnable[i])) return true;
  return false;
}

/* A "<prefix>ThreadState Running|Blocked" span [start, end]: the state it
 * leaves the thread in at end. A Running span ends with a stop (its
 * status says why: "ThreadFinished" marks the thread finished, a
 * preemption leaves it Runnable: status_runnable); a Blocked span ends
 * when the thread runs again. */
static void thread_span(el_web_t *w, const el_tm_span_t *s, bool running) {
  int64_t tid;
  if (!attr_int(attr_find(s->attrs, s->nattrs, "thread"), &tid)) return;
  double start_ms = (double)s->start_unix_ns / 1e6;
  double end_ms = (double)s->end_unix_ns / 1e6;
  if (end_ms > w->th_newest_ms) w->th_newest_ms = end_ms;
  w->th_spans++;
  web_thread_t *th = thread_get(w, tid);
  if (!th) return;
  th->spans = true;
  if (th->first_ms == 0 || start_ms < th->first_ms) th->first_ms = start_ms;
  if (running && end_ms >= start_ms) th->running_ms += end_ms - start_ms;
  if (end_ms < th->t_ms) return; /* an older span, late */
  th->t_ms = end_ms;
  char *status = attr_str(attr_find(s->attrs, s->nattrs, "status"));
  int64_t cap;
  if (attr_int(attr_find(s->attrs, s->nattrs, "capability"), &cap))
    th->cap = cap;
  if (running) {
    th->state = status && !strcmp(status, "ThreadFinished") ? "Finished"
                : status_runnable(status)                   ? "Runnable"
                                                            : "Blocked";
    replace(&th->status, status);
  } else {
    th->state = "Running";
    el_free(status); /* why it had stopped: over now */
    replace(&th->status, NULL);
  }
}

/* {====== capability usage bins ======} */

/* Halve the resolution: bins 2k and 2k+1 become bin k. */
static void usage_coarsen(web_usage_t *u) {
  for (size_t k = 0; k < WEB_USAGE_BINS / 2; k++) {
    u->gc_ms[k] = u->gc_ms[2 * k] + u->gc_ms[2 * k + 1];
    u->mut_ms[k] = u->mut_ms[2 * k] + u->mut_ms[2 * k + 1];
  }
  memset(u->gc_ms + WEB_USAGE_BINS / 2, 0,
         WEB_USAGE_BINS / 2 * sizeof u->gc_ms[0]);
  memset(u->mut_ms + WEB_USAGE_BINS / 2, 0,
         WEB_USAGE_BINS / 2 * sizeof u->mut_ms[0]);
  u->bin_ms *= 2;
  u->nbins = (u->nbins + 1) / 2;
}

/* A GC or Mutator span [a, b] (Unix ms) of capability cap: each bin gets
 * the part of the span that overlaps it. */
static void usage_span(web_usage_t *u, bool gc, int64_t cap, double a,
                       double b) {
  if (!(b > a)) return;
  if (cap > u->max_cap) u->max_cap = cap;
  if (u->bin_ms == 0) {
    u->bin_ms = WEB_USAGE_BIN0_MS;
    u->t0_ms = a;
    u->lo_ms = a;
    u->hi_ms = b;
  }
  if (a < u->t0_ms) { /* before the first bin: not credited */
    u->clipped++;
    if (b <= u->t0_ms) return;
    a = u->t0_ms;
  }
  if (a < u->lo_ms) u->lo_ms = a;
  if (b > u->hi_ms) u->hi_ms = b;
  while (b > u->t0_ms + WEB_USAGE_BINS * u->bin_ms) usage_coarsen(u);
  double *bins = gc ? u->gc_ms : u->mut_ms;
  size_t k0 = (size_t)((a - u->t0_ms) / u->bin_ms);
  size_t k1 = (size_t)((b - u->t0_ms) / u->bin_ms);
  if (k1 >= WEB_USAGE_BINS) k1 = WEB_USAGE_BINS - 1;
  for (size_t k = k0; k <= k1; k++) {
    double lo = u->t0_ms + (double)k * u->bin_ms, hi = lo + u->bin_ms;
    double o = (b < hi ? b : hi) - (a > lo ? a : lo);
    if (o > 0) bins[k] += o;
  }
  if (k1 + 1 > u->nbins) u->nbins = k1 + 1;
}

/* {====== consumers ======} */

static void marker_add(el_web_t *w, double t, const char *body) {
  web_marker_t *m;
  if (w->nmarkers < WEB_MARKERS_MAX) {
    m = &w->markers[(w->hmarkers + w->nmarkers++) % WEB_MARKERS_MAX];
  } else {
    m = &w->markers[w->hmarkers];
    el_free(m->body);
    w->hmarkers = (w->hmarkers + 1) % WEB_MARKERS_MAX;
  }
  m->t_ms = t;
  m->body = el_strdup(body);
}

/* The next slot of the ring e[cap] filled as r says: a free one, else
 * the oldest, emptied. */
static web_log_t *log_slot(web_log_t *e, size_t cap, web_logring_t *r) {
  if (r->n < cap) return &e[(r->h + r->n++) % cap];
  web_log_t *l = &e[r->h];
  el_free(l->kind);
  el_free(l->body);
  r->h = (r->h + 1) % cap;
  return l;
}

static void logs_free(web_log_t *e, size_t cap, web_logring_t *r) {
  for (size_t k = 0; k < r->n; k++) {
    web_log_t *l = &e[(r->h + k) % cap];
    el_free(l->kind);
    el_free(l->body);
  }
  r->n = r->h = 0;
}

/* The log records [first, first + n) of a group of session sess. */
static void logs_group(el_web_t *w, const el_tm_log_t *l, size_t first,
                       size_t n, uint64_t sess) {
  bool current = threads_session(w, sess);
  for (size_t k = first; k < first + n; k++) {
    const el_tm_log_t *r = &l[k];
    double t =
        (double)(r->time_unix_ns ? r->time_unix_ns : r->observed_unix_ns) / 1e6;
    char *kind = attr_str(attr_find(r->attrs, r->nattrs, "kind"));
    char *body = el_strndup(r->body.p ? r->body.p : "", r->body.len);
    int64_t tid = -1;
    attr_int(attr_find(r->attrs, r->nattrs, "thread"), &tid);
    if (!body) {
      el_free(kind);
      continue;
    }
    if (kind && !strcmp(kind, "ThreadLabel") && tid >= 0 && current)
      thread_label(w, tid, body);
    if (kind && !strcmp(kind, "UserMarker")) marker_add(w, t, body);
    web_log_t *e =
        r->host_log ? log_slot(w->host_logs, WEB_HOST_LOGS_MAX, &w->rhost_logs)
                    : log_slot(w->logs, WEB_LOGS_MAX, &w->rlogs);
    e->t_ms = t;
    e->kind = kind ? kind : el_strdup(r->host_log ? "internal" : "");
    e->body = body;
    e->severity = r->severity_number;
    e->thread = tid;
  }
}

/* The records [*first, *first + *n) of group g, clipped to nrec; its
 * session (0 for the host resource). */
static uint64_t group_range(const el_tm_rgroup_t *g, size_t nrec, size_t *first,
                            size_t *n) {
  *first = g->first < nrec ? g->first : nrec;
  *n = g->n < nrec - *first ? g->n : nrec - *first;
  return g->resource ? g->resource->session : 0;
}

void web_events_logs(el_web_t *w, const el_tm_batch_t *b) {
  size_t nrec;
  const el_tm_log_t *l = el_tm_batch_logs(b, &nrec);
  size_t ng, first, n;
  const el_tm_rgroup_t *g = el_tm_batch_groups(b, &ng);
  for (size_t gi = 0; gi < ng; gi++) {
    uint64_t sess = group_range(&g[gi], nrec, &first, &n);
    logs_group(w, l, first, n, sess);
  }
}

/* Span names of the trace processors (lua/eventlog_live/processors/
 * capability.lua, src/host/lua_analysis.c): "<prefix>ThreadState
 * Running|Blocked" with attributes thread, capability, status;
 * "<prefix>CapabilityUsage GC|Mutator" with capability, user. */
/* A GC pause (Unix ms, duration ms) into the ring; one that leaves the
 * ring stays among the WEB_PAUSES_TOP longest (a min-heap) when it is
 * one of them, else it is counted in pauses_forgotten. */
static void pause_add(el_web_t *w, web_point_t p) {
  if (w->npauses < WEB_PAUSES_MAX) {
    w->pauses[(w->hpauses + w->npauses++) % WEB_PAUSES_MAX] = p;
    return;
  }
  web_point_t out = w->pauses[w->hpauses];
  w->pauses[w->hpauses] = p;
  w->hpauses = (w->hpauses + 1) % WEB_PAUSES_MAX;
  web_point_t *h = w->pauses_top;
  size_t n = w->npauses_top, k;
  if (n < WEB_PAUSES_TOP) { /* sift up */
    for (k = w->npauses_top++; k > 0 && h[(k - 1) / 2].v > out.v;
         k = (k - 1) / 2)
      h[k] = h[(k - 1) / 2];
    h[k] = out;
    return;
  }
  w->pauses_forgotten++;
  if (!(out.v > h[0].v)) return;
  for (k = 0;;) { /* replace the shortest, sift down */
    size_t c = 2 * k + 1;
    if (c >= n) break;
    if (c + 1 < n && h[c + 1].v < h[c].v) c++;
    if (h[c].v >= out.v) break;
    h[k] = h[c];
    k = c;
  }
  h[k] = out;
}

/* The spans [first, first + n) of a group of session sess. */
static void spans_group(el_web_t *w, const el_tm_span_t *sp, size_t first,
                        size_t n, uint64_t sess) {
  bool current = threads_session(w, sess);
  for (size_t k = first; k < first + n; k++) {
    const el_tm_span_t *s = &sp[k];
    const char *name = s->name ? s->name : "";
    size_t len = strlen(name);
    double a = (double)s->start_unix_ns / 1e6, e = (double)s->end_unix_ns / 1e6;
    bool gc = ends_with(name, len, "CapabilityUsage GC");
    bool mut = ends_with(name, len, "CapabilityUsage Mutator");
    if (gc || mut) {
      int64_t cap = 0;
      attr_int(attr_find(s->attrs, s->nattrs, "capability"), &cap);
      usage_span(&w->usage, gc, cap, a, e);
    }
    if (gc) pause_add(w, (web_point_t){e, e >= a ? e - a : 0});
    if (!current) continue;
    if (ends_with(name, len, "ThreadState Running"))
      thread_span(w, s, true);
    else if (ends_with(name, len, "ThreadState Blocked"))
      thread_span(w, s, false);
  }
}

void web_events_spans(el_web_t *w, const el_tm_batch_t *b) {
  size_t nrec, ng, first, n;
  const el_tm_span_t *sp = el_tm_batch_spans(b, &nrec);
  const el_tm_rgroup_t *g = el_tm_batch_groups(b, &ng);
  for (size_t gi = 0; gi < ng; gi++) {
    uint64_t sess = group_range(&g[gi], nrec, &first, &n);
    spans_group(w, sp, first, n, sess);
  }
  threads_age(w, false);
}

void web_events_end(el_web_t *w) { threads_end(w, "input ended"); }

void web_events_closed(el_web_t *w) {
  if (w->closed_why[0]) threads_end(w, w->closed_why);
}

void web_events_clear(el_web_t *w) {
  logs_free(w->logs, WEB_LOGS_MAX, &w->rlogs);
  logs_free(w->host_logs, WEB_HOST_LOGS_MAX, &w->rhost_logs);
  for (size_t k = 0; k < w->nmarkers; k++)
    el_free(w->markers[(w->hmarkers + k) % WEB_MARKERS_MAX].body);
  w->nmarkers = w->hmarkers = 0;
  for (size_t k = 0; k < w->nthreads; k++) {
    el_free(w->threads[k].label);
    el_free(w->threads[k].status);
  }
  el_free(w->threads);
  w->threads = NULL;
  w->nthreads = w->capthreads = 0;
  el_map_free(&w->thidx);
  memset(&w->thother, 0, sizeof w->thother);
  w->th_session = 0;
  w->th_spans = 0;
  w->npauses = w->hpauses = w->npauses_top = 0;
  w->pauses_forgotten = 0;
  web_thids_clear(&w->thids);
  labels_clear(w);
  memset(&w->usage, 0, sizeof w->usage);
}

/* {====== /api/data ======} */

static int cmp_pause_t(const void *a, const void *b) {
  const web_point_t *x = a, *y = b;
  return (x->t_ms > y->t_ms) - (x->t_ms < y->t_ms);
}

/* "gc_pauses": the longest of those that left the ring (older than the
 * ring's), then the ring, in time order; "gc_pauses_forgotten". */
static void json_pauses(const el_web_t *w, el_buf_t *b) {
  web_point_t top[WEB_PAUSES_TOP];
  memcpy(top, w->pauses_top, w->npauses_top * sizeof top[0]);
  qsort(top, w->npauses_top, sizeof top[0], cmp_pause_t);
  el_buf_puts(b, ",\"gc_pauses\":[");
  for (size_t k = 0; k < w->npauses_top + w->npauses; k++) {
    const web_point_t *p =
        k < w->npauses_top
            ? &top[k]
            : &w->pauses[(w->hpauses + k - w->npauses_top) % WEB_PAUSES_MAX];
    el_buf_puts(b, k ? ",[" : "[");
    web_put_num(b, p->t_ms);
    el_buf_puts(b, ",");
    web_put_num(b, p->v);
    el_buf_puts(b, "]");
  }
  el_buf_printf(b, "],\"gc_pauses_forgotten\":%llu",
                (unsigned long long)w->pauses_forgotten);
}

/* ,"<name>":[records of the ring e[cap] filled as r says, oldest
 * first] */
static void json_ring(const char *name, const web_log_t *e, size_t cap,
                      const web_logring_t *r, el_buf_t *b) {
  el_buf_printf(b, ",\"%s\":[", name);
  for (size_t k = 0; k < r->n; k++) {
    const web_log_t *l = &e[(r->h + k) % cap];
    el_buf_puts(b, k ? ",{\"t\":" : "{\"t\":");
    web_put_num(b, l->t_ms);
    el_buf_puts(b, ",\"kind\":");
    web_put_json_cstr(b, l->kind ? l->kind : "");
    el_buf_puts(b, ",\"body\":");
    web_put_json_cstr(b, l->body);
    el_buf_printf(b, ",\"severity\":%d,\"thread\":%lld}", l->severity,
                  (long long)l->thread);
  }
  el_buf_puts(b, "]");
}

static void json_logs(const el_web_t *w, el_buf_t *b) {
  json_ring("logs", w->logs, WEB_LOGS_MAX, &w->rlogs, b);
  json_ring("internal_logs", w->host_logs, WEB_HOST_LOGS_MAX, &w->rhost_logs,
            b);
  el_buf_puts(b, ",\"markers\":[");
  for (size_t k = 0; k < w->nmarkers; k++) {
    const web_marker_t *m = &w->markers[(w->hmarkers + k) % WEB_MARKERS_MAX];
    el_buf_puts(b, k ? ",[" : "[");
    web_put_num(b, m->t_ms);
    el_buf_puts(b, ",");
    web_put_json_cstr(b, m->body ? m->body : "");
    el_buf_puts(b, "]");
  }
  el_buf_puts(b, "]");
  json_pauses(w, b);
}

/* A number, or null when it is not known. */
static void put_known_num(el_buf_t *b, bool known, double v) {
  if (known)
    web_put_num(b, v);
  else
    el_buf_puts(b, "null");
}

/* "threads", "threads_other", "thread_spans". A row no thread-state span
 * came for (its label made it: the traces processor thread_state off)
 * has state, t and running_ms null, not "Ended" and 0 once it is over: its
 * state and running time were never seen; its status still says why it
 * is over. The other row's running_ms is null while no thread-state span
 * came at all. */
static void json_threads(const el_web_t *w, el_buf_t *b) {
  el_buf_puts(b, ",\"threads\":[");
  for (size_t k = 0; k < w->nthreads; k++) {
    const web_thread_t *t = &w->threads[k];
    el_buf_printf(b, "%s{\"id\":%lld,\"label\":", k ? "," : "",
                  (long long)t->id);
    web_put_json_cstr(b, t->label);
    el_buf_puts(b, ",\"state\":");
    web_put_json_cstr(b, t->spans ? t->state : NULL);
    el_buf_puts(b, ",\"status\":");
    web_put_json_cstr(b, t->status);
    el_buf_printf(b, ",\"cap\":%lld,\"session\":%llu,\"t\":", (long long)t->cap,
                  (unsigned long long)t->session);
    put_known_num(b, t->spans, t->t_ms);
    el_buf_puts(b, ",\"running_ms\":");
    put_known_num(b, t->spans, t->running_ms);
    el_buf_puts(b, "}");
  }
  el_buf_printf(b,
                "],\"threads_other\":{\"threads\":%llu,\"finished\":%llu,"
                "\"ended\":%llu,\"late_labels\":%llu,\"dropped_labels\":%llu,"
                "\"unremembered\":%llu,\"late_session\":%llu,"
                "\"running_ms\":",
                (unsigned long long)w->thother.threads,
                (unsigned long long)w->thother.finished,
                (unsigned long long)w->thother.ended,
                (unsigned long long)w->thother.late_labels,
                (unsigned long long)w->thother.dropped_labels,
                (unsigned long long)w->thother.unremembered,
                (unsigned long long)w->thother.late_session);
  put_known_num(b, w->th_spans > 0, w->thother.running_ms);
  el_buf_printf(b, "},\"thread_spans\":%llu", (unsigned long long)w->th_spans);
}

/* "cap_usage": {"caps": highest capability + 1, "bin_ms", "lo", "hi",
 * "bins": [[bin start ms, GC ms, Mutator ms], ...]} or null. */
static void json_usage(const web_usage_t *u, el_buf_t *b) {
  el_buf_puts(b, ",\"cap_usage\":");
  if (!u->nbins) {
    el_buf_puts(b, "null");
    return;
  }
  el_buf_printf(b, "{\"caps\":%lld,\"bin_ms\":", (long long)u->max_cap + 1);
  web_put_num(b, u->bin_ms);
  el_buf_puts(b, ",\"lo\":");
  web_put_num(b, u->lo_ms);
  el_buf_puts(b, ",\"hi\":");
  web_put_num(b, u->hi_ms);
  el_buf_printf(b, ",\"clipped\":%llu,\"bins\":[",
                (unsigned long long)u->clipped);
  for (size_t k = 0; k < u->nbins; k++) {
    el_buf_puts(b, k ? ",[" : "[");
    web_put_num(b, u->t0_ms + (double)k * u->bin_ms);
    el_buf_puts(b, ",");
    web_put_num(b, u->gc_ms[k]);
    el_buf_puts(b, ",");
    web_put_num(b, u->mut_ms[k]);
    el_buf_puts(b, "]");
  }
  el_buf_puts(b, "]}");
}

void web_json_events(const el_web_t *w, el_buf_t *b) {
  json_logs(w, b);
  json_threads(w, b);
  json_usage(&w->usage, b);
}
