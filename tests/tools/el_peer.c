/* el_peer.c: a test peer playing the instrumented Haskell program's side of
 * eventlog-socket (spec/eventlog-format.md §5.2-§5.5): it listens on a Unix
 * or TCP socket, serves one client at a time (later clients wait in the
 * listen backlog), sends an eventlog file to each, and records every byte
 * the client sends (the control channel, §5.7). Plain POSIX; every wait has
 * a deadline so a test can never hang on it.
 *
 * usage: el_peer (--unix PATH | --tcp HOST --port P) --file EVENTLOG
 *   [--port-file F]      write the bound TCP port (useful with --port 0)
 *   [--ready-file F]     create F once listening
 *   [--listen-delay MS]  wait before listening (a server that starts late)
 *   [--connections K]    serve K connections, then exit (default 1)
 *   [--garbage N]        send N stale bytes before the file, every connection
 *   [--stray-marker]     before the file, on every connection, send the 24
 *                        bytes the real library sends before each header
 *                        (shared/peers/eventlog-socket/README.md): a
 *                        BLOCK_MARKER of the global buffer (cap 0xFFFF)
 *                        whose block wraps the header; its times grow by
 *                        1 s per connection
 *   [--close-after N[,N2...]]  cut connection k after Nk bytes of the file
 *                        (one number: the first connection only)
 *   [--sent-prefix P]    write the bytes sent on connection k to P.k
 *   [--refuse K]         accept and close the first K connections at once
 *   [--chunk N --pace-ms M]  send N bytes, pause M ms, repeat
 *   [--hold-ms MS]       keep each connection open MS ms after sending
 *                        (default 0), reading the client's bytes
 *   [--record F]         append every byte received from clients to F
 *   [--timeout S]        give up after S seconds in all (default 20) */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char *unix_path, *host, *port, *file, *port_file, *ready_file;
  const char *record, *sent_prefix;
  long listen_delay_ms, connections, garbage, refuse, chunk;
  long close_after[16];    /* per connection, -1 = whole file */
  int stray_marker;
  long pace_ms, hold_ms;
  double timeout_s;
} peer_opts_t;

static double deadline;
static int record_fd = -1;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ms_left(void) {
  double left = deadline - now_s();
  if (left <= 0) {
    fprintf(stderr, "el_peer: timeout\n");
    exit(3);
  }
  return (int)(left * 1000) + 1;
}

static void die(const char *what) {
  fprintf(stderr, "el_peer: %s: %s\n", what, strerror(errno));
  exit(2);
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die(path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
    die("read");
  fclose(f);
  *len = (size_t)n;
  return b;
}

static void touch(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    die(path);
  fputs(text, f);
  fclose(f);
}

static int listen_unix(const char *path) {
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof sa.sun_path) {
    errno = ENAMETOOLONG;
    die(path);
  }
  strcpy(sa.sun_path, path);
  unlink(path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    die("bind");
  return fd;
}

static int listen_tcp(const char *host, const char *port,
                      const char *port_file) {
  struct addrinfo hints, *res;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  int rc = getaddrinfo(host, port, &hints, &res);
  if (rc) {
    fprintf(stderr, "el_peer: %s: %s\n", host, gai_strerror(rc));
    exit(2);
  }
  int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
  int one = 1;
  if (fd < 0)
    die("socket");
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, res->ai_addr, res->ai_addrlen) < 0)
    die("bind");
  freeaddrinfo(res);
  if (port_file) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char hbuf[NI_MAXHOST], pbuf[NI_MAXSERV];
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    getnameinfo((struct sockaddr *)&ss, sl, hbuf, sizeof hbuf, pbuf,
                sizeof pbuf, NI_NUMERICHOST | NI_NUMERICSERV);
    touch(port_file, pbuf);
  }
  return fd;
}

/* Read what the client sent (non-blocking); returns 0 on EOF. */
static int drain_client(int c) {
  uint8_t b[4096];
  for (;;) {
    ssize_t n = recv(c, b, sizeof b, MSG_DONTWAIT);
    if (n > 0) {
      if (record_fd >= 0 && write(record_fd, b, (size_t)n) != n)
        die("record");
      continue;
    }
    if (n == 0)
      return 0;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
}

/* Send buf fully, recording client bytes meanwhile; 0 ok, -1 peer gone. */
static int send_all(int c, const uint8_t *buf, size_t len) {
  while (len > 0) {
    struct pollfd p = {.fd = c, .events = POLLOUT | POLLIN};
    if (poll(&p, 1, ms_left()) < 0 && errno != EINTR)
      die("poll");
    if (p.revents & POLLIN)
      drain_client(c);
    if (p.revents & (POLLERR | POLLHUP))
      return -1;
    if (!(p.revents & POLLOUT))
      continue;
    ssize_t n = send(c, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR)
        continue;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Keep the connection open hold_ms, recording; stop early at EOF. */
static void hold(int c, long hold_ms) {
  double end = now_s() + (double)hold_ms / 1000.0;
  while (now_s() < end) {
    struct pollfd p = {.fd = c, .events = POLLIN};
    int left = (int)((end - now_s()) * 1000) + 1;
    if (poll(&p, 1, left < ms_left() ? left : ms_left()) <= 0)
      continue;
    if (!drain_client(c))
      return;
  }
}

/* Send and, with --sent-prefix, append to that connection's file. */
static int send_logged(int c, const peer_opts_t *o, long conn_no,
                       const uint8_t *buf, size_t len) {
  if (o->sent_prefix) {
    char path[1024];
    snprintf(path, sizeof path, "%s.%ld", o->sent_prefix, conn_no);
    FILE *f = fopen(path, "ab");
    if (!f || fwrite(buf, 1, len, f) != len)
      die(path);
    fclose(f);
  }
  return send_all(c, buf, len);
}

static void put_be(uint8_t *p, uint64_t v, int n) {
  for (int k = n - 1; k >= 0; k--, v >>= 8)
    p[k] = (uint8_t)v;
}

/* The 24 bytes eventlog-socket sends before each connection's header:
 * BLOCK_MARKER (18), t, block_size (24 + header), end_time, cap 0xFFFF
 * (spec/eventlog-format.md §1.5). */
static void stray_marker(uint8_t out[24], const uint8_t *data, size_t len,
                         long conn_no) {
  static const char end[] = "hetehdredatb";
  size_t hdr = 0;
  for (size_t i = 0; i + 12 <= len; i++)
    if (!memcmp(data + i, end, 12)) {
      hdr = i + 12;
      break;
    }
  uint64_t t = (uint64_t)conn_no * 1000000000u;
  put_be(out, 18, 2);
  put_be(out + 2, t, 8);
  put_be(out + 10, 24 + hdr, 4);
  put_be(out + 14, t + 1000, 8);
  put_be(out + 22, 0xFFFF, 2);
}

static void serve(int c, const peer_opts_t *o, const uint8_t *data,
                  size_t len, long conn_no) {
  if (o->sent_prefix) {  /* start this connection's file afresh */
    char path[1024];
    snprintf(path, sizeof path, "%s.%ld", o->sent_prefix, conn_no);
    unlink(path);
  }
  if (o->garbage > 0) {
    uint8_t *g = malloc((size_t)o->garbage);
    for (long k = 0; k < o->garbage; k++)  /* never contains "hdrb" */
      g[k] = (uint8_t)(0x20 + (k * 7) % 64);
    if (send_logged(c, o, conn_no, g, (size_t)o->garbage) < 0) {
      free(g);
      return;
    }
    free(g);
  }
  if (o->stray_marker) {
    uint8_t m[24];
    stray_marker(m, data, len, conn_no);
    if (send_logged(c, o, conn_no, m, sizeof m) < 0)
      return;
  }
  size_t n = len;
  long cut = conn_no <= 16 ? o->close_after[conn_no - 1] : -1;
  if (cut >= 0 && (size_t)cut < len)
    n = (size_t)cut;
  size_t step = o->chunk > 0 ? (size_t)o->chunk : n;
  for (size_t off = 0; off < n; off += step) {
    size_t k = n - off < step ? n - off : step;
    if (send_logged(c, o, conn_no, data + off, k) < 0) {
      fprintf(stderr, "el_peer: client left after %zu bytes\n", off);
      return;
    }
    if (o->pace_ms > 0 && off + k < n)
      sleep_ms(o->pace_ms);
  }
  if (o->hold_ms > 0)
    hold(c, o->hold_ms);
  drain_client(c);
}

static long num(const char *s) {
  char *e;
  long v = strtol(s, &e, 10);
  if (*s == '\0' || *e != '\0') {
    fprintf(stderr, "el_peer: bad number '%s'\n", s);
    exit(2);
  }
  return v;
}

/* "N1,N2,...": connection k is cut after Nk bytes of the file. */
static void close_list(peer_opts_t *o, const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  int k = 0;
  for (char *s = strtok(buf, ","); s && k < 16; s = strtok(NULL, ","))
    o->close_after[k++] = num(s);
}

static void parse(peer_opts_t *o, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->connections = 1;
  for (int k = 0; k < 16; k++)
    o->close_after[k] = -1;
  o->timeout_s = 20;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--stray-marker")) {
      o->stray_marker = 1;
      continue;
    }
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "el_peer: %s needs a value\n", a);
      exit(2);
    }
    i++;
    if (!strcmp(a, "--unix")) o->unix_path = v;
    else if (!strcmp(a, "--tcp")) o->host = v;
    else if (!strcmp(a, "--port")) o->port = v;
    else if (!strcmp(a, "--file")) o->file = v;
    else if (!strcmp(a, "--port-file")) o->port_file = v;
    else if (!strcmp(a, "--ready-file")) o->ready_file = v;
    else if (!strcmp(a, "--record")) o->record = v;
    else if (!strcmp(a, "--listen-delay")) o->listen_delay_ms = num(v);
    else if (!strcmp(a, "--connections")) o->connections = num(v);
    else if (!strcmp(a, "--garbage")) o->garbage = num(v);
    else if (!strcmp(a, "--close-after")) close_list(o, v);
    else if (!strcmp(a, "--sent-prefix")) o->sent_prefix = v;
    else if (!strcmp(a, "--refuse")) o->refuse = num(v);
    else if (!strcmp(a, "--chunk")) o->chunk = num(v);
    else if (!strcmp(a, "--pace-ms")) o->pace_ms = num(v);
    else if (!strcmp(a, "--hold-ms")) o->hold_ms = num(v);
    else if (!strcmp(a, "--timeout")) o->timeout_s = (double)num(v);
    else {
      fprintf(stderr, "el_peer: unknown option %s\n", a);
      exit(2);
    }
  }
  if (!o->file || (!o->unix_path && !(o->host && o->port))) {
    fprintf(stderr, "usage: el_peer (--unix PATH | --tcp HOST --port P) "
                    "--file EVENTLOG [options]\n");
    exit(2);
  }
}

int main(int argc, char **argv) {
  peer_opts_t o;
  parse(&o, argc, argv);
  signal(SIGPIPE, SIG_IGN);
  deadline = now_s() + o.timeout_s;
  size_t len;
  uint8_t *data = slurp(o.file, &len);
  if (o.record) {
    record_fd = open(o.record, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (record_fd < 0)
      die(o.record);
  }
  if (o.listen_delay_ms > 0)
    sleep_ms(o.listen_delay_ms);
  int l = o.unix_path ? listen_unix(o.unix_path)
                      : listen_tcp(o.host, o.port, o.port_file);
  if (listen(l, 5) < 0)
    die("listen");
  if (o.ready_file)
    touch(o.ready_file, "ready\n");
  long refused = 0;
  for (long conn = 1; conn <= o.connections;) {
    struct pollfd p = {.fd = l, .events = POLLIN};
    if (poll(&p, 1, ms_left()) <= 0)
      continue;
    int c = accept(l, NULL, NULL);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      die("accept");
    }
    if (refused < o.refuse) {
      refused++;
      close(c);
      continue;
    }
    serve(c, &o, data, len, conn);
    close(c);
    fprintf(stderr, "el_peer: connection %ld done\n", conn);
    conn++;
  }
  close(l);
  if (o.unix_path)
    unlink(o.unix_path);
  free(data);
  return 0;
}
