/* el_trickle.c: a slowloris client for the tests (tests/e2e/
 * test_http_slowloris.sh). It keeps N connections open to each given port
 * of 127.0.0.1 and sends an HTTP request one byte every INTERVAL ms, never
 * finishing it (after the request line and a Host header, an endless
 * "X-Slow: aaaa..." header). When the server closes a connection, it
 * opens another after RECONNECT ms, so the pressure stays at N per port.
 * Plain POSIX, one thread, poll(2); it never waits longer than 100 ms.
 *
 * usage: el_trickle --port P [--port P ...] [--conns N] [--from A,B,...]
 *                   [--interval-ms MS] [--reconnect-ms MS] [--seconds S]
 *   --conns N          connections per port (default 200)
 *   --from A,B         local source addresses, used in turn (default
 *                      127.0.0.1); any 127.x.y.z works on Linux
 *   --interval-ms MS   one byte every MS ms (default 5000)
 *   --reconnect-ms MS  wait before replacing a closed connection (250)
 *   --seconds S        run S seconds, then exit (default 20); SIGTERM and
 *                      SIGINT also end it
 * At the end it prints one "key=value" line per counter on stdout:
 * connects (attempted), open_peak (most connections open at once),
 * open_end (open when it stopped), closed (ended by the server: end of
 * file or reset),
 * refused (connect failed), answered (connections that received bytes,
 * e.g. a 503), life_max_ms (longest-lived connection). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 8
#define MAX_FROM 16
#define MAX_CONNS 4096

static const char head[] = "GET /health HTTP/1.1\r\nHost: localhost\r\n"
                           "X-Slow: ";

typedef struct {
  int fd;               /* -1 when not connected */
  int port;
  int from;             /* index into the source addresses */
  int connecting;       /* connect in progress */
  size_t sent;          /* bytes of the request sent */
  double next_ms;       /* next send, or next connect when fd < 0 */
  double opened_ms;
  int answered;         /* bytes came back on this connection */
} conn_t;

static volatile sig_atomic_t stop;
static void on_signal(int sig) { stop = sig; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct {
  long connects, closed, refused, answered;
  long open, open_peak, open_end;
  double life_max_ms;
} st;

static struct in_addr from[MAX_FROM];
static int nfrom = 1;
static double reconnect_ms = 250, interval_ms = 5000;

static void drop(conn_t *c, double now, int by_server) {
  if (c->fd < 0) return;
  close(c->fd);
  c->fd = -1;
  if (!c->connecting) {
    st.open--;
    if (now - c->opened_ms > st.life_max_ms)
      st.life_max_ms = now - c->opened_ms;
  }
  if (by_server) st.closed++;
  c->connecting = 0;
  c->next_ms = now + reconnect_ms;
}

static void start(conn_t *c, double now) {
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  c->next_ms = now + reconnect_ms;
  if (c->fd < 0) return;
  fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = from[c->from]};
  st.connects++;
  if (bind(c->fd, (struct sockaddr *)&a, sizeof a) < 0) {
    close(c->fd);
    c->fd = -1;
    st.refused++;
    return;
  }
  a.sin_port = htons((uint16_t)c->port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  c->sent = 0;
  c->answered = 0;
  int rc = connect(c->fd, (struct sockaddr *)&a, sizeof a);
  if (rc < 0 && errno != EINPROGRESS) {
    close(c->fd);
    c->fd = -1;
    st.refused++;
    return;
  }
  c->connecting = 1;
  c->next_ms = now;
}

static void connected(conn_t *c, double now) {
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err) {
    close(c->fd);
    c->fd = -1;
    c->connecting = 0;
    st.refused++;
    c->next_ms = now + reconnect_ms;
    return;
  }
  c->connecting = 0;
  c->opened_ms = now;
  c->next_ms = now; /* the first byte at once */
  if (++st.open > st.open_peak) st.open_peak = st.open;
}

/* Send the next byte of the never-ending request. */
static void trickle(conn_t *c, double now) {
  char b = c->sent < sizeof head - 1 ? head[c->sent] : 'a';
  ssize_t n = send(c->fd, &b, 1, MSG_NOSIGNAL);
  if (n == 1) {
    c->sent++;
    c->next_ms = now + interval_ms;
  } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
    drop(c, now, 1);
  }
}

static int parse_from(char *s) {
  nfrom = 0;
  for (char *t = strtok(s, ","); t && nfrom < MAX_FROM; t = strtok(NULL, ","))
    if (inet_pton(AF_INET, t, &from[nfrom++]) != 1) {
      fprintf(stderr, "el_trickle: --from: bad address '%s'\n", t);
      return -1;
    }
  return nfrom > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  int ports[MAX_PORTS], nports = 0;
  long conns = 200;
  double seconds = 20;
  inet_pton(AF_INET, "127.0.0.1", &from[0]);
  for (int i = 1; i < argc; i += 2) { /* options come with a value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) goto usage;
    if (!strcmp(a, "--port") && nports < MAX_PORTS) ports[nports++] = atoi(v);
    else if (!strcmp(a, "--conns")) conns = atol(v);
    else if (!strcmp(a, "--from")) {
      if (parse_from(argv[i + 1]) < 0) return 2;
    } else if (!strcmp(a, "--interval-ms")) interval_ms = atof(v);
    else if (!strcmp(a, "--reconnect-ms")) reconnect_ms = atof(v);
    else if (!strcmp(a, "--seconds")) seconds = atof(v);
    else
      goto usage;
  }
  if (nports == 0 || conns < 1 || conns * nports > MAX_CONNS) goto usage;
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGPIPE, SIG_IGN);

  long n = conns * nports;
  conn_t *cs = calloc((size_t)n, sizeof *cs);
  struct pollfd *pf = calloc((size_t)n, sizeof *pf);
  if (!cs || !pf) return 1;
  double t0 = now_ms();
  for (long k = 0; k < n; k++)
    cs[k] = (conn_t){.fd = -1, .port = ports[k % nports],
                     .from = (int)((k / nports) % nfrom), .next_ms = t0};
  while (!stop && now_ms() - t0 < seconds * 1e3) {
    double now = now_ms();
    for (long k = 0; k < n; k++)
      if (cs[k].fd < 0 && now >= cs[k].next_ms) start(&cs[k], now);
    for (long k = 0; k < n; k++) {
      pf[k].fd = cs[k].fd;
      pf[k].events = cs[k].connecting ? POLLOUT : POLLIN;
      pf[k].revents = 0;
    }
    poll(pf, (nfds_t)n, 100);
    now = now_ms();
    for (long k = 0; k < n; k++) {
      conn_t *c = &cs[k];
      if (c->fd < 0) continue;
      if (c->connecting) {
        if (pf[k].revents) connected(c, now);
        continue;
      }
      if (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[1024];
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r > 0) {
          if (!c->answered) st.answered++;
          c->answered = 1;
        } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
          drop(c, now, 1);
          continue;
        }
      }
      if (now >= c->next_ms) trickle(c, now);
    }
  }
  st.open_end = st.open;
  double now = now_ms();
  for (long k = 0; k < n; k++) drop(&cs[k], now, 0);
  printf("connects=%ld\nopen_peak=%ld\nopen_end=%ld\nclosed=%ld\n"
         "refused=%ld\nanswered=%ld\nlife_max_ms=%.0f\n",
         st.connects, st.open_peak, st.open_end, st.closed, st.refused,
         st.answered, st.life_max_ms);
  free(cs);
  free(pf);
  return 0;
usage:
  fprintf(stderr, "usage: el_trickle --port P [--port P ...] [--conns N] "
                  "[--from A,B] [--interval-ms MS] [--reconnect-ms MS] "
                  "[--seconds S]\n");
  return 2;
}
