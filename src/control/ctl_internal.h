/* ctl_internal.h: declarations private to src/control/. */
#ifndef EL_CTL_INTERNAL_H
#define EL_CTL_INTERNAL_H

#include "control/control.h"

/* What the CORS layer does with a request (the policy of the reference,
 * which uses Haskell's wai-cors: spec/reference-behaviour.md §8.1). */
typedef enum {
  EL__CORS_PASS = 0,  /* hand the request to the router */
  EL__CORS_PREFLIGHT, /* answer 200 now: a successful preflight */
  EL__CORS_FAIL       /* answer 400 now with 'error' */
} el__ctl_cors_action_t;

typedef struct el__ctl_cors_s {
  el__ctl_cors_action_t action;
  const char *allow_origin; /* Access-Control-Allow-Origin value ("*" or
                               the request's Origin, borrowed from it), or
                               NULL: add no CORS headers */
  int vary_origin;          /* add "Vary: Origin" */
  int allow_methods;        /* preflight: add Access-Control-Allow-Methods */
  int allow_headers;        /* preflight: add Access-Control-Allow-Headers */
  int max_age_s;            /* preflight: Access-Control-Max-Age, -1 none */
  const char *error;        /* EL__CORS_FAIL: static message */
} el__ctl_cors_t;

/* Allowed methods and request headers of the policy, as sent in preflight
 * answers: the reference's lists united with wai-cors' simple ones. */
#define EL__CORS_METHODS "GET, POST, HEAD"
#define EL__CORS_HEADERS \
  "Content-Type, Origin, Accept, Accept-Language, Content-Language"

/* Decide the CORS outcome of one request.
 * method: the HTTP method. origin, acrm, acrh: the values of the Origin,
 *   Access-Control-Request-Method and Access-Control-Request-Headers
 *   headers, or NULL when absent. All borrowed; out->allow_origin may
 *   point into origin. Cannot fail. Thread: any.
 * Rules: no Origin passes unless require_origin (then fails); an Origin
 * fails unless the wildcard is on or it is in the allow-list (empty by
 * default: closed); OPTIONS with an Origin is a preflight and
 * fails when Access-Control-Request-Method is missing or not a listed
 * method, or a requested header is not listed. A failure passes the
 * request on without CORS headers when ignore_failure is set. */
void el__ctl_cors_decide(const el_ctl_opts_t *o, const char *method,
                         const char *origin, const char *acrm,
                         const char *acrh, el__ctl_cors_t *out);

#endif /* EL_CTL_INTERNAL_H */
