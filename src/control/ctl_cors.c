/* ctl_cors.c: the CORS policy of the control server, as a pure function of
 * the request's method and CORS headers (spec/reference-behaviour.md §8.1,
 * except that no origin is allowed unless listed or "*" is given: the
 * reference allows every origin by default; docs/security.md), no
 * credentials, methods GET and
 * POST, request headers Content-Type and Origin, no exposed headers,
 * optional max-age, "Vary: Origin" when two or more origins are listed,
 * require-origin and ignore-failures from the flags). */
#include <string.h>
#include <strings.h>

#include "control/ctl_internal.h"

static const char *const methods[] = {"GET", "POST", "HEAD"};
static const char *const headers[] = {"Content-Type", "Origin", "Accept",
                                      "Accept-Language", "Content-Language"};

static int method_ok(const char *m) {
  for (size_t k = 0; k < EL_ARRAY_LEN(methods); k++)
    if (strcmp(m, methods[k]) == 0) return 1;
  return 0;
}

static int header_ok(const char *h, size_t len) {
  for (size_t k = 0; k < EL_ARRAY_LEN(headers); k++)
    if (strlen(headers[k]) == len && strncasecmp(h, headers[k], len) == 0)
      return 1;
  return 0;
}

/* Every name in the comma-separated list s is an allowed header. */
static int headers_ok(const char *s) {
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == ',') s++;
    size_t len = strcspn(s, ", \t");
    if (len > 0 && !header_ok(s, len)) return 0;
    s += len;
  }
  return 1;
}

static int origin_listed(const el_ctl_opts_t *o, const char *origin) {
  for (size_t k = 0; k < o->n_allow_origins; k++)
    if (strcmp(o->allow_origins[k], origin) == 0) return 1;
  return 0;
}

static void fail(const el_ctl_opts_t *o, el__ctl_cors_t *out,
                 const char *why) {
  memset(out, 0, sizeof *out);
  out->max_age_s = -1;
  if (o->ignore_failure) return; /* pass on, without CORS headers */
  out->action = EL__CORS_FAIL;
  out->error = why;
}

void el__ctl_cors_decide(const el_ctl_opts_t *o, const char *method,
                         const char *origin, const char *acrm,
                         const char *acrh, el__ctl_cors_t *out) {
  memset(out, 0, sizeof *out);
  out->max_age_s = -1;
  if (origin == NULL) {
    if (o->require_origin)
      fail(o, out, "CORS: the Origin header is missing");
    return;
  }
  if (!o->cors_wildcard && !origin_listed(o, origin)) {
    fail(o, out, o->n_allow_origins
                     ? "CORS: unsupported origin"
                     : "CORS: no origin is allowed (see "
                       "--control-cors-allow-origin)");
    return;
  }
  out->allow_origin = o->cors_wildcard ? "*" : origin;
  out->vary_origin = o->n_allow_origins >= 2;
  if (strcmp(method, "OPTIONS") != 0) return;
  if (acrm == NULL) {
    fail(o, out, "CORS: Access-Control-Request-Method is missing in the "
                 "preflight request");
    return;
  }
  if (!method_ok(acrm)) {
    fail(o, out, "CORS: the method in Access-Control-Request-Method is not "
                 "supported");
    return;
  }
  if (acrh != NULL && !headers_ok(acrh)) {
    fail(o, out, "CORS: a header in Access-Control-Request-Headers is not "
                 "supported");
    return;
  }
  out->action = EL__CORS_PREFLIGHT;
  out->allow_methods = 1;
  out->allow_headers = acrh != NULL;
  out->max_age_s = o->max_age_s;
}
