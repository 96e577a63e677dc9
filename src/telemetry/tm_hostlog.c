/* tm_hostlog.c: the host's own log messages as OpenTelemetry log records
 * (the internal_log_message processor, spec/reference-behaviour.md §5.1.4).
 * el_log may be called from any thread (exporter threads log too) while the
 * store belongs to the loop thread: messages are queued under a mutex by
 * the el_log hook and moved into the store on the loop thread. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "telemetry.h"

#define HOSTLOG_MAX 256  /* messages queued between two drains */

struct el_tm_hostlog_s {
  pthread_mutex_t mu;
  struct {
    el_log_level_t level;
    el_unix_ns_t unix_ns;
    char *msg;
  } item[HOSTLOG_MAX];
  size_t n;
  uint64_t dropped;        /* queue full or out of memory, not yet told */
};

static __thread int in_hook;  /* the hook's own allocations must not log */

static el_unix_ns_t now_unix_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (el_unix_ns_t)ts.tv_sec * 1000000000u + (el_unix_ns_t)ts.tv_nsec;
}

el_tm_hostlog_t *el_tm_hostlog_new(void) {
  el_tm_hostlog_t *q = el_calloc(1, sizeof *q);
  if (q) pthread_mutex_init(&q->mu, NULL);
  return q;
}

void el_tm_hostlog_free(el_tm_hostlog_t *q) {
  if (!q) return;
  for (size_t k = 0; k < q->n; k++) el_free(q->item[k].msg);
  pthread_mutex_destroy(&q->mu);
  el_free(q);
}

void el_tm_hostlog_hook(void *ud, el_log_level_t level, const char *msg) {
  el_tm_hostlog_t *q = ud;
  if (in_hook) return;
  in_hook = 1;
  char *copy = el_strdup(msg);
  pthread_mutex_lock(&q->mu);
  if (copy && q->n < HOSTLOG_MAX) {
    q->item[q->n].level = level;
    q->item[q->n].unix_ns = now_unix_ns();
    q->item[q->n].msg = copy;
    q->n++;
    copy = NULL;
  } else {
    q->dropped++;
  }
  pthread_mutex_unlock(&q->mu);
  el_free(copy);
  in_hook = 0;
}

static void put(el_tm_store_t *st, el_log_level_t level, el_unix_ns_t t,
                const char *msg) {
  static const int sev[] = {EL_TM_SEV_DEBUG, EL_TM_SEV_INFO, EL_TM_SEV_WARN,
                            EL_TM_SEV_ERROR, EL_TM_SEV_FATAL};
  el_tm_log_t rec = {
      .time_unix_ns = t,
      .observed_unix_ns = t,
      .severity_number = sev[level <= EL_LOG_QUIET ? level : EL_LOG_ERROR],
      .body = {msg, strlen(msg)},
      .host_log = true,
  };
  el_tm_log(st, &rec);
}

uint64_t el_tm_hostlog_drain(el_tm_hostlog_t *q, el_tm_store_t *st) {
  pthread_mutex_lock(&q->mu);
  size_t n = q->n;
  uint64_t dropped = q->dropped;
  q->n = 0;
  q->dropped = 0;
  __typeof__(q->item[0]) items[HOSTLOG_MAX];
  memcpy(items, q->item, n * sizeof items[0]);
  pthread_mutex_unlock(&q->mu);
  in_hook = 1;  /* the store's own warnings must not re-enter */
  for (size_t k = 0; k < n; k++) {
    if (st) put(st, items[k].level, items[k].unix_ns, items[k].msg);
    el_free(items[k].msg);
  }
  if (st && dropped) {
    char m[160];
    snprintf(m, sizeof m, "%llu log messages were dropped (more than %d "
             "between two exports, or out of memory)",
             (unsigned long long)dropped, HOSTLOG_MAX);
    put(st, EL_LOG_WARN, now_unix_ns(), m);
  }
  in_hook = 0;
  return dropped;
}
