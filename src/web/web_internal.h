/* web_internal.h: the state shared by web_model.c (exporter side) and
 * web_http.c (HTTP side). Everything below is guarded by el_web_t.mu. */
#ifndef EL_WEB_INTERNAL_H
#define EL_WEB_INTERNAL_H

#include <pthread.h>

#include "../control/httpd.h"
#include "web.h"

/* Bounds (docs/web.md "Limits"): beyond them the oldest entries go (rings)
 * or new series are refused and counted in dropped_series. */
#define WEB_POINTS_PER_SERIES 2000
#define WEB_SERIES_PER_METRIC 20000
#define WEB_FAMILIES_MAX 512
#define WEB_LOGS_MAX 500
#define WEB_MARKERS_MAX 2000
#define WEB_PAUSES_MAX 2000
#define WEB_THREADS_MAX 100000

/* A growable byte buffer (el_malloc'd). */
typedef struct web_buf_s {
  char *p;
  size_t len, cap;
  bool oom;                   /* an append failed: the content is short */
} web_buf_t;

void web_buf_put(web_buf_t *b, const char *s, size_t n);
void web_buf_puts(web_buf_t *b, const char *s);
void web_buf_printf(web_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

typedef struct web_point_s {
  double t_ms;                /* Unix ms */
  double v;
} web_point_t;

typedef struct web_series_s {
  char *key;                  /* rendered Prometheus labels "{a="b"}" */
  char *attrs_json;           /* point attributes as a JSON object */
  uint32_t hash;
  bool has;                   /* a value was stored */
  bool is_int;
  int64_t ival;
  double dval;
  el_unix_ns_t t;             /* time of the stored value */
  web_point_t *pts;           /* ring of npts of cap (view only) */
  size_t npts, head, cap;
} web_series_t;

typedef struct web_family_s {
  char *name;                 /* OTLP name */
  char *prom;                 /* Prometheus name (with _total) */
  char *help;
  char *unit;
  bool sum, monotonic, delta;
  web_series_t **s;
  size_t n, cap;
  uint32_t *tab;              /* open addressing: index + 1, 0 empty */
  size_t tabcap;
} web_family_t;

typedef struct web_log_s {
  double t_ms;
  char *kind;                 /* attribute "kind" or "" */
  char *body;
  int severity;
  int64_t thread;             /* -1 when absent */
} web_log_t;

typedef struct web_marker_s {
  double t_ms;
  char *body;
} web_marker_t;

typedef struct web_thread_s {
  int64_t id;
  char *label;                /* NULL until a ThreadLabel */
  char *state;                /* "Running", "Blocked", NULL = unknown */
  char *status;               /* why it stopped, NULL = none */
  int64_t cap;                /* -1 = unknown */
  double t_ms;                /* end of the last state span */
} web_thread_t;

struct el_web_s {
  pthread_mutex_t mu;
  el_web_opts_t opts;
  char *service;
  bool view;                  /* keep the history for the page */
  int control_port;
  bool ended;
  el_ctl_httpd_t *prom_d, *view_d; /* the servers, NULL when off */
  int prom_port, view_port;
  /* metrics */
  web_family_t **fam;
  size_t nfam, capfam;
  /* logs, markers, threads, pauses (rings: head = oldest) */
  web_log_t logs[WEB_LOGS_MAX];
  size_t nlogs, hlogs;
  web_marker_t markers[WEB_MARKERS_MAX];
  size_t nmarkers, hmarkers;
  web_point_t pauses[WEB_PAUSES_MAX];   /* t_ms, duration ms */
  size_t npauses, hpauses;
  web_thread_t *threads;
  size_t nthreads, capthreads;
  uint32_t *thtab;            /* open addressing on id: index + 1 */
  size_t thtabcap;
  /* counters */
  uint64_t batches, points, dropped_series, scrapes;
};

/* Consume one batch (exporter callback body). Locks w->mu. */
void web_model_consume(el_web_t *w, el_tm_signal_t sig,
                       const el_tm_batch_t *b);
/* Free every stored record (not the struct). */
void web_model_clear(el_web_t *w);
/* Render /metrics into out; openmetrics selects the OpenMetrics 1.0
 * format. Caller holds w->mu. */
void web_model_prom(el_web_t *w, bool openmetrics, web_buf_t *out);
/* Render /api/data (JSON) into out. Caller holds w->mu. */
void web_model_json(el_web_t *w, web_buf_t *out);

#endif /* EL_WEB_INTERNAL_H */
