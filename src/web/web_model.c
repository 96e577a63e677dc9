/* web_model.c: what the Prometheus endpoint and the web view keep from the
 * telemetry batches: the exporter callback's body, dispatching each batch
 * to the series store (web_store.c) or the logs, threads and spans
 * (web_events.c). The renderers are web_prom.c and web_json.c, the names
 * web_naming.c. Thread: web_model_consume on the loop thread, under
 * el_web_t.mu. */
#include "web_internal.h"

void web_model_consume(el_web_t *w, el_tm_signal_t sig,
                       const el_tm_batch_t *b) {
  pthread_mutex_lock(&w->mu);
  w->batches++;
  if (sig == EL_TM_SIGNAL_METRICS)
    web_store_metrics(w, b);
  else if (w->view && sig == EL_TM_SIGNAL_LOGS)
    web_events_logs(w, b);
  else if (w->view && sig == EL_TM_SIGNAL_TRACES)
    web_events_spans(w, b);
  /* A late record of a closed session makes no row alive again. */
  if (w->view && sig != EL_TM_SIGNAL_METRICS) web_events_closed(w);
  pthread_mutex_unlock(&w->mu);
}

void web_model_clear(el_web_t *w) {
  web_store_clear(w);
  web_events_clear(w);
}
