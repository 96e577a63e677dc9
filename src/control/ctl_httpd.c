/* ctl_httpd.c: a libmicrohttpd server with deadlines, per-address and
 * global connection limits, a 503 reserve and a reserved /health path
 * (httpd.h, docs/security.md).
 *
 * Every connection libmicrohttpd admits gets a slot (NOTIFY_CONNECTION
 * STARTED, on the listening thread) and gives it back when it is closed
 * (NOTIFY_CONNECTION CLOSED, called before libmicrohttpd closes the
 * socket). All slots sit in one array under one mutex; the watchdog
 * thread and the displacement of slow clients only ever shutdown(2) a
 * socket whose slot is still held, so a socket number is never touched
 * after libmicrohttpd has closed (and maybe reused) it. shutdown(2) wakes
 * the connection's thread with end-of-file and libmicrohttpd closes and
 * frees the connection there, through its ordinary path.
 *
 * A slot's class: NORMAL (served by the handler), RESERVE (answered here:
 * /health or 503), GONE (shut down, waiting for libmicrohttpd to close it;
 * it no longer counts against any limit). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "common/el_common.h"
#include "control/httpd.h"

#define TICK_MS 100            /* how often the watchdog looks */
#define SLOT_MARGIN 64         /* slots for GONE connections not yet closed */
#define STACK_BYTES (512 << 10) /* per connection thread */
#define NAME_MAX_LEN 48

typedef enum { SLOT_FREE = 0, SLOT_NORMAL, SLOT_RESERVE, SLOT_GONE } cls_t;

/* A client address as compared for the per-address limits: IPv4 (also
 * when mapped into IPv6) in 4 bytes, IPv6 in 16. */
typedef struct addr_s {
  uint8_t b[16];
  uint8_t len;   /* 4 or 16; 0 = unknown (never equal to another) */
  bool exempt;   /* 127.0.0.1 or ::1: no per-address limit */
} addr_t;

typedef struct slot_s {
  cls_t cls;
  int fd;               /* the connection's socket */
  addr_t addr;          /* client address */
  bool in_request;      /* headers received, answer not finished */
  uint64_t since_ms;    /* connect, or end of the previous answer */
} slot_t;

/* What a new connection gets. */
typedef struct admit_s {
  cls_t cls;            /* NORMAL, RESERVE or FREE (= refuse) */
  slot_t *victim;       /* NORMAL: a slot to shut down first, or NULL */
} admit_t;

enum { EV_REFUSED, EV_EVICTED, EV_CUT_HEADER, EV_CUT_REQUEST, EV_BUSY,
       EV_N };

struct el_ctl_httpd_s {
  struct MHD_Daemon *mhd;
  el_ctl_httpd_conf_t conf;     /* copy; name and option point below */
  char name[NAME_MAX_LEN];
  char option[NAME_MAX_LEN];
  char address[INET6_ADDRSTRLEN];
  int port;
  pthread_mutex_t mu;           /* guards everything below */
  pthread_cond_t cv;            /* wakes the watchdog to stop */
  bool stopping;
  pthread_t watchdog;
  bool watchdog_started;
  slot_t *slots;
  size_t nslots;
  el_ctl_httpd_stats_t stats;
  bool warned[EV_N];            /* first event of each kind logged */
};

/* The value *con_cls takes for requests answered by this layer. */
static char answered_here;

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* {====== addresses ======} */

static void addr_from(const struct sockaddr *sa, addr_t *a) {
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  memset(a, 0, sizeof *a);
  if (sa == NULL) return;
  if (sa->sa_family == AF_INET) {
    memcpy(a->b, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    a->len = 4;
  } else if (sa->sa_family == AF_INET6) {
    const uint8_t *p =
        ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
    if (memcmp(p, mapped, 12) == 0) {
      memcpy(a->b, p + 12, 4);
      a->len = 4;
    } else {
      memcpy(a->b, p, 16);
      a->len = 16;
    }
  }
  static const uint8_t lo4[4] = {127, 0, 0, 1};
  static const uint8_t lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                  0, 0, 0, 0, 0, 0, 0, 1};
  a->exempt = (a->len == 4 && memcmp(a->b, lo4, 4) == 0) ||
              (a->len == 16 && memcmp(a->b, lo6, 16) == 0);
}

static bool addr_eq(const addr_t *x, const addr_t *y) {
  return x->len != 0 && x->len == y->len && memcmp(x->b, y->b, x->len) == 0;
}

/* Resolve host into *ss (port set). Prefers the first IPv4 result, so
 * that "localhost" binds 127.0.0.1 where clients look first. Returns 0 or
 * EL_EINVAL after logging. */
static int resolve(el_ctl_httpd_t *h, const char *host, int port,
                   struct sockaddr_storage *ss, socklen_t *len) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  char service[8], bare[EL_CTL_HOST_MAX + 1];
  snprintf(service, sizeof service, "%d", port);
  size_t n = strlen(host);
  if (n > 2 && host[0] == '[' && host[n - 1] == ']') { /* "[::1]" */
    snprintf(bare, sizeof bare, "%.*s", (int)(n - 2), host + 1);
    host = bare;
  }
  int rc = getaddrinfo(host, service, &hints, &res);
  if (rc != 0 || res == NULL) {
    el_log(EL_LOG_ERROR, "%s: cannot use %s '%s': %s", h->name, h->option,
           host, rc ? gai_strerror(rc) : "no address");
    if (res) freeaddrinfo(res);
    return EL_EINVAL;
  }
  const struct addrinfo *pick = res;
  for (const struct addrinfo *p = res; p; p = p->ai_next)
    if (p->ai_family == AF_INET) {
      pick = p;
      break;
    }
  memcpy(ss, pick->ai_addr, pick->ai_addrlen);
  *len = (socklen_t)pick->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

/* {====== admission ======} */

/* Decide what a connection from a gets, now. No side effects. */
static admit_t decide(el_ctl_httpd_t *h, const addr_t *a, uint64_t now) {
  const el_ctl_httpd_limits_t *l = &h->conf.limits;
  unsigned normal = 0, normal_ip = 0, reserve = 0, reserve_ip = 0;
  slot_t *old_any = NULL, *old_ip = NULL;
  for (size_t k = 0; k < h->nslots; k++) {
    slot_t *s = &h->slots[k];
    bool same = addr_eq(&s->addr, a);
    if (s->cls == SLOT_RESERVE) {
      reserve++;
      reserve_ip += same;
      continue;
    }
    if (s->cls != SLOT_NORMAL) continue;
    normal++;
    normal_ip += same;
    if (s->in_request || now - s->since_ms < l->evict_after_ms) continue;
    if (!old_any || s->since_ms < old_any->since_ms) old_any = s;
    if (same && (!old_ip || s->since_ms < old_ip->since_ms)) old_ip = s;
  }
  bool ip_full = !a->exempt && normal_ip >= l->conns_per_ip;
  bool all_full = normal >= l->conns;
  if (!ip_full && !all_full) return (admit_t){SLOT_NORMAL, NULL};
  /* Displacing one of the same address frees a place in both limits. */
  slot_t *victim = ip_full ? old_ip : old_any;
  if (victim) return (admit_t){SLOT_NORMAL, victim};
  if (reserve < l->reserve && (a->exempt || reserve_ip < l->reserve_per_ip))
    return (admit_t){SLOT_RESERVE, NULL};
  return (admit_t){SLOT_FREE, NULL};
}

static const char *const event_text[EV_N] = {
    "refused a connection: no room, even in the reserve",
    ("closed a connection that waited too long for its headers, to make "
     "room for a new one"),
    "closed a connection whose request headers did not arrive in time",
    "closed a connection whose request did not finish in time",
    "answered 503: too many connections"};

/* Count an event; returns true when it is the first of its kind (the
 * caller logs it after unlocking). Caller holds h->mu. */
static bool note(el_ctl_httpd_t *h, int ev) {
  uint64_t *c[EV_N] = {&h->stats.refused, &h->stats.evicted,
                       &h->stats.cut_header, &h->stats.cut_request,
                       &h->stats.busy};
  (*c[ev])++;
  if (h->warned[ev]) return false;
  h->warned[ev] = true;
  return true;
}

static void warn_first(el_ctl_httpd_t *h, int ev) {
  el_log(EL_LOG_WARN, "%s: %s (further ones are counted and summarised "
         "when it stops; docs/security.md)", h->name, event_text[ev]);
}

/* Shut a slot's socket down and retire the slot. Caller holds h->mu. */
static void retire(slot_t *s) {
  shutdown(s->fd, SHUT_RDWR);
  s->cls = SLOT_GONE;
}

/* Accept policy: refuse before a connection (and its thread) exists when
 * there is no room at all. Listening thread. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *sa,
                                 socklen_t len) {
  el_ctl_httpd_t *h = cls;
  (void)len;
  addr_t a;
  addr_from(sa, &a);
  pthread_mutex_lock(&h->mu);
  admit_t d = decide(h, &a, now_ms());
  bool first = d.cls == SLOT_FREE && note(h, EV_REFUSED);
  pthread_mutex_unlock(&h->mu);
  if (first) warn_first(h, EV_REFUSED);
  return d.cls == SLOT_FREE ? MHD_NO : MHD_YES;
}

static void on_started(el_ctl_httpd_t *h, struct MHD_Connection *c,
                       void **sock_ctx) {
  const union MHD_ConnectionInfo *ia =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const union MHD_ConnectionInfo *ifd =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ifd == NULL) return; /* cannot happen in this libmicrohttpd */
  addr_t a;
  addr_from(ia ? ia->client_addr : NULL, &a);
  uint64_t now = now_ms();
  int first_ev = -1;
  pthread_mutex_lock(&h->mu);
  admit_t d = decide(h, &a, now);
  slot_t *s = NULL;
  for (size_t k = 0; k < h->nslots && d.cls != SLOT_FREE; k++)
    if (h->slots[k].cls == SLOT_FREE) {
      s = &h->slots[k];
      break;
    }
  if (s == NULL) {
    /* No room after all (the state changed since the accept policy ran):
     * close it; libmicrohttpd frees it through its ordinary path. */
    shutdown(ifd->connect_fd, SHUT_RDWR);
    if (note(h, EV_REFUSED)) first_ev = EV_REFUSED;
  } else {
    if (d.victim) {
      retire(d.victim);
      if (note(h, EV_EVICTED)) first_ev = EV_EVICTED;
    }
    *s = (slot_t){.cls = d.cls, .fd = ifd->connect_fd, .addr = a,
                  .since_ms = now};
    *sock_ctx = s;
    if (d.cls == SLOT_NORMAL) h->stats.accepted++;
    else h->stats.reserve++;
    if (++h->stats.open > h->stats.open_peak)
      h->stats.open_peak = h->stats.open;
  }
  pthread_mutex_unlock(&h->mu);
  if (first_ev >= 0) warn_first(h, first_ev);
}

static void on_connection(void *cls, struct MHD_Connection *c,
                          void **sock_ctx,
                          enum MHD_ConnectionNotificationCode why) {
  el_ctl_httpd_t *h = cls;
  if (why == MHD_CONNECTION_NOTIFY_STARTED) {
    on_started(h, c, sock_ctx);
    return;
  }
  slot_t *s = *sock_ctx;
  if (s == NULL) return;
  pthread_mutex_lock(&h->mu);
  s->cls = SLOT_FREE; /* before libmicrohttpd closes the socket */
  h->stats.open--;
  pthread_mutex_unlock(&h->mu);
  *sock_ctx = NULL;
}

/* {====== deadlines ======} */

/* The deadline a slot is held to now, and which event missing it is. */
static uint64_t deadline(const el_ctl_httpd_t *h, const slot_t *s, int *ev) {
  const el_ctl_httpd_limits_t *l = &h->conf.limits;
  if (s->cls == SLOT_RESERVE) {
    *ev = EV_CUT_REQUEST;
    return s->since_ms + l->reserve_ms;
  }
  if (!s->in_request && l->header_ms < l->request_ms) {
    *ev = EV_CUT_HEADER;
    return s->since_ms + l->header_ms;
  }
  *ev = EV_CUT_REQUEST;
  return s->since_ms + l->request_ms;
}

static void *watchdog_main(void *arg) {
  el_ctl_httpd_t *h = arg;
  pthread_mutex_lock(&h->mu);
  while (!h->stopping) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += TICK_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&h->cv, &h->mu, &ts);
    uint64_t now = now_ms();
    bool first[EV_N] = {false};
    for (size_t k = 0; k < h->nslots; k++) {
      slot_t *s = &h->slots[k];
      if (s->cls != SLOT_NORMAL && s->cls != SLOT_RESERVE) continue;
      int ev;
      if (now < deadline(h, s, &ev)) continue;
      retire(s);
      if (note(h, ev)) first[ev] = true;
    }
    if (first[EV_CUT_HEADER] || first[EV_CUT_REQUEST]) {
      pthread_mutex_unlock(&h->mu);
      for (int ev = 0; ev < EV_N; ev++)
        if (first[ev]) warn_first(h, ev);
      pthread_mutex_lock(&h->mu);
    }
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

/* {====== requests ======} */

static slot_t *slot_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

/* Answer from this layer: status, JSON body, optional header. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
                             const char *body, bool close, const char *hname,
                             const char *hvalue) {
  struct MHD_Response *r = MHD_create_response_from_buffer(
      strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
  if (r == NULL) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "application/json");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  if (hname) MHD_add_response_header(r, hname, hvalue);
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static bool is_get(const char *method) {
  return strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
         strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

/* Answer /health (reserve: also anything else). */
static enum MHD_Result answer_here(el_ctl_httpd_t *h,
                                   struct MHD_Connection *c, bool reserve,
                                   const char *url, const char *method) {
  bool health = strcmp(url, "/health") == 0;
  if (health && is_get(method)) {
    if (reserve) {
      pthread_mutex_lock(&h->mu);
      h->stats.health++;
      pthread_mutex_unlock(&h->mu);
    }
    return reply(c, MHD_HTTP_OK, "[]", reserve, NULL, NULL);
  }
  if (health && !reserve)
    return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                 "{\"error-message\":\"/health takes GET or HEAD\"}", false,
                 MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  pthread_mutex_lock(&h->mu);
  bool first = note(h, EV_BUSY);
  pthread_mutex_unlock(&h->mu);
  if (first) warn_first(h, EV_BUSY);
  return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
               "{\"error-message\":\"too many connections; try again "
               "later\"}",
               true, MHD_HTTP_HEADER_RETRY_AFTER, "5");
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c,
                                 const char *url, const char *method,
                                 const char *version, const char *data,
                                 size_t *size, void **con_cls) {
  el_ctl_httpd_t *h = cls;
  if (*con_cls == &answered_here) {
    *size = 0; /* a body after our answer: discard */
    return MHD_YES;
  }
  slot_t *s = slot_of(c);
  pthread_mutex_lock(&h->mu);
  cls_t k = s ? s->cls : SLOT_GONE;
  bool first = s && !s->in_request;
  if (first && k != SLOT_GONE) s->in_request = true;
  pthread_mutex_unlock(&h->mu);
  if (k == SLOT_GONE) return MHD_NO; /* cut off: close */
  if (first && (k == SLOT_RESERVE ||
                (h->conf.health && strcmp(url, "/health") == 0))) {
    *con_cls = &answered_here;
    return answer_here(h, c, k == SLOT_RESERVE, url, method);
  }
  return h->conf.handler(h->conf.handler_cls, c, url, method, version, data,
                         size, con_cls);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why) {
  el_ctl_httpd_t *h = cls;
  slot_t *s = slot_of(c);
  if (s) {
    pthread_mutex_lock(&h->mu);
    s->in_request = false;
    if (s->cls == SLOT_NORMAL)
      s->since_ms = now_ms(); /* a kept-alive connection waits anew */
    pthread_mutex_unlock(&h->mu);
  }
  if (*con_cls == &answered_here) {
    *con_cls = NULL;
    return;
  }
  if (h->conf.completed)
    h->conf.completed(h->conf.completed_cls, c, con_cls, why);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  el_ctl_httpd_t *h = cls;
  if (el_log_enabled(EL_LOG_DEBUG)) {
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n') buf[--n] = '\0';
    el_log(EL_LOG_DEBUG, "%s: libmicrohttpd: %s", h->name, buf);
  }
}

/* {====== lifetime ======} */

static struct MHD_Daemon *start_mhd(el_ctl_httpd_t *h,
                                    const struct sockaddr_storage *ss) {
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
                   MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
                   MHD_USE_ERROR_LOG; /* poll: no FD_SETSIZE limit */
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
    flags |= IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr) ? MHD_USE_DUAL_STACK
                                                     : MHD_USE_IPv6;
  }
  const el_ctl_httpd_limits_t *l = &h->conf.limits;
  unsigned idle_s = (l->header_ms + 999) / 1000;
  return MHD_start_daemon(
      flags, 0, on_accept, h, on_access, h,
      MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
      MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
      MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)h->nslots,
      MHD_OPTION_CONNECTION_TIMEOUT, idle_s ? idle_s : 1u,
      MHD_OPTION_THREAD_STACK_SIZE, (size_t)STACK_BYTES, MHD_OPTION_END);
}

/* Make room for this server's connections in the process's file
 * descriptor limit: raise the soft limit by nslots, up to the hard limit
 * (Debian's default soft limit, 1024, would not hold three full servers).
 * Warns when it cannot. */
static void ensure_fds(el_ctl_httpd_t *h) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return;
  rlim_t want = rl.rlim_cur + (rlim_t)h->nslots;
  if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) want = rl.rlim_max;
  if (want > rl.rlim_cur) {
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur < 2 * (rlim_t)h->nslots)
    el_log(EL_LOG_WARN, "%s: only %llu file descriptors (ulimit -n); under "
           "load some connections may be refused", h->name,
           (unsigned long long)rl.rlim_cur);
}

static void free_h(el_ctl_httpd_t *h) {
  pthread_cond_destroy(&h->cv);
  pthread_mutex_destroy(&h->mu);
  el_free(h->slots);
  el_free(h);
}

static void set_address(el_ctl_httpd_t *h, const struct sockaddr_storage *ss) {
  const void *p = ss->ss_family == AF_INET6
                      ? (const void *)&((const struct sockaddr_in6 *)ss)
                            ->sin6_addr
                      : (const void *)&((const struct sockaddr_in *)ss)
                            ->sin_addr;
  if (!inet_ntop(ss->ss_family, p, h->address, sizeof h->address))
    snprintf(h->address, sizeof h->address, "?");
}

/* The option to blame for a listen error into buf: the host option
 * ("--web-host") as is, or when port is set its port twin ("--web-port";
 * the host option unchanged when its name does not end in "-host"). */
static void port_option(const char *host_opt, int port, char *buf,
                        size_t size) {
  size_t n = strlen(host_opt);
  if (port && n >= 5 && !strcmp(host_opt + n - 5, "-host"))
    snprintf(buf, size, "%.*s-port", (int)(n - 5), host_opt);
  else
    snprintf(buf, size, "%s", host_opt);
}

/* Bind and start; with "::" on a host without IPv6, fall back to
 * 0.0.0.0. Returns 0 or a negated errno (logged). */
static int bind_and_start(el_ctl_httpd_t *h, struct sockaddr_storage *ss) {
  errno = 0;
  h->mhd = start_mhd(h, ss);
  if (h->mhd == NULL && ss->ss_family == AF_INET6 && errno != EADDRINUSE &&
      IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)ss)->sin6_addr)) {
    int port = ntohs(((struct sockaddr_in6 *)ss)->sin6_port);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    memset(ss, 0, sizeof *ss);
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    a4->sin_addr.s_addr = htonl(INADDR_ANY);
    el_log(EL_LOG_INFO, "%s: no IPv6 here; listening on IPv4 only",
           h->name);
    errno = 0;
    h->mhd = start_mhd(h, ss);
  }
  set_address(h, ss);
  if (h->mhd != NULL) return 0;
  int rc = errno ? -errno : EL_EINVAL;
  /* A port in use or privileged is the port option's problem, anything
   * else (an address not on this host) the host option's. */
  char opt[NAME_MAX_LEN + 8];
  port_option(h->option, rc == -EADDRINUSE || rc == -EACCES, opt, sizeof opt);
  el_log(EL_LOG_ERROR, "%s: cannot listen on %s port %d (%s): %s", h->name,
         h->address, h->conf.port, opt, el_strerror(rc));
  return rc;
}

int el_ctl_httpd_start(const el_ctl_httpd_conf_t *conf,
                       el_ctl_httpd_t **out) {
  if (conf == NULL || out == NULL || conf->handler == NULL) return EL_EINVAL;
  const el_ctl_httpd_limits_t *l = &conf->limits;
  if (l->conns == 0 || l->conns_per_ip == 0 || l->header_ms == 0 ||
      l->request_ms == 0 || l->reserve_ms == 0 || conf->port < 0 ||
      conf->port > 65535)
    return EL_EINVAL;
  el_ctl_httpd_t *h = el_calloc(1, sizeof *h);
  if (h == NULL) return EL_ENOMEM;
  h->conf = *conf;
  snprintf(h->name, sizeof h->name, "%s", conf->name ? conf->name : "http");
  snprintf(h->option, sizeof h->option, "%s",
           conf->option ? conf->option : "host");
  h->conf.name = h->name;
  h->conf.option = h->option;
  h->conf.host = NULL; /* not kept */
  h->nslots = (size_t)l->conns + l->reserve + SLOT_MARGIN;
  h->slots = el_calloc(h->nslots, sizeof *h->slots);
  if (h->slots == NULL) {
    el_free(h);
    return EL_ENOMEM;
  }
  pthread_mutex_init(&h->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&h->cv, &ca);
  pthread_condattr_destroy(&ca);

  ensure_fds(h);
  const char *host = conf->host && *conf->host ? conf->host
                                               : EL_CTL_HTTPD_DEFAULT_HOST;
  struct sockaddr_storage ss;
  socklen_t sslen = 0;
  int rc = resolve(h, host, conf->port, &ss, &sslen);
  if (rc == 0) rc = bind_and_start(h, &ss);
  if (rc < 0) {
    free_h(h);
    return rc;
  }
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
  h->port = info ? info->port : conf->port;
  if (pthread_create(&h->watchdog, NULL, watchdog_main, h) != 0) {
    MHD_stop_daemon(h->mhd);
    free_h(h);
    return EL_ENOMEM;
  }
  h->watchdog_started = true;
  el_log(EL_LOG_INFO, "%s: listening on %s port %d", h->name, h->address,
         h->port);
  *out = h;
  return 0;
}

int el_ctl_httpd_port(const el_ctl_httpd_t *h) { return h->port; }

const char *el_ctl_httpd_address(const el_ctl_httpd_t *h) {
  return h->address;
}

void el_ctl_httpd_stats(el_ctl_httpd_t *h, el_ctl_httpd_stats_t *out) {
  pthread_mutex_lock(&h->mu);
  *out = h->stats;
  pthread_mutex_unlock(&h->mu);
}

void el_ctl_httpd_stop(el_ctl_httpd_t *h) {
  if (h == NULL) return;
  pthread_mutex_lock(&h->mu);
  h->stopping = true;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
  if (h->watchdog_started) pthread_join(h->watchdog, NULL);
  MHD_stop_daemon(h->mhd); /* closes and joins every connection */
  const el_ctl_httpd_stats_t *s = &h->stats;
  bool dropped = s->refused || s->evicted || s->cut_header ||
                 s->cut_request || s->busy;
  /* One count of connections, as "at most N open at once" counts them
   * (normal and reserve alike): the admitted, split into normal service
   * and reserve; the refused were never admitted. */
  el_log(dropped ? EL_LOG_WARN : EL_LOG_DEBUG,
         "%s: %llu connections admitted, at most %u open at once: %llu "
         "for normal service, %llu in the reserve (%llu requests answered "
         "503, %llu /health); %llu refused (no room, even in the reserve), "
         "%llu displaced, %llu cut off (%llu headers late, %llu requests "
         "late)",
         h->name, (unsigned long long)(s->accepted + s->reserve), s->open_peak,
         (unsigned long long)s->accepted, (unsigned long long)s->reserve,
         (unsigned long long)s->busy, (unsigned long long)s->health,
         (unsigned long long)s->refused, (unsigned long long)s->evicted,
         (unsigned long long)(s->cut_header + s->cut_request),
         (unsigned long long)s->cut_header, (unsigned long long)s->cut_request);
  free_h(h);
}
