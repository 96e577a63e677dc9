/* cmd_show.c: `eventlog-live show` prints an eventlog like `ghc-events
 * show` (ghc-events 0.21), byte for byte (spec/eventlog-format.md §6.4).
 *
 * Usage: eventlog-live show [FILE | - | --eventlog-file FILE |
 *                            --eventlog-stdin]
 * Exit status: 0 on success and on a stream cut off cleanly or inside an
 * event (ghc-events prints what it decoded and exits 0, §4.1; we also say
 * so on stderr); 1 on a malformed header, a corrupt stream (after printing
 * what decoded) or an I/O error; 2 on a usage error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "eventlog/eventlog.h"

#define CHUNK (1u << 20)

static void show_usage(FILE *f) {
  fprintf(f, "usage: eventlog-live show [FILE | - | --eventlog-file FILE | "
             "--eventlog-stdin]\n"
             "Print every event like `ghc-events show`.\n");
}

/* Parse the input argument; returns the path ("-" for stdin) or NULL. */
static const char *input_arg(int argc, char **argv, int *err) {
  const char *path = NULL;
  *err = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      *err = 1;
      return NULL;
    }
    const char *p = NULL;
    if (!strcmp(a, "--eventlog-stdin") || !strcmp(a, "-"))
      p = "-";
    else if (!strcmp(a, "--eventlog-file") && i + 1 < argc)
      p = argv[++i];
    else if (!strncmp(a, "--eventlog-file=", 16))
      p = a + 16;
    else if (a[0] != '-')
      p = a;
    if (!p || path) {
      *err = 2;
      return NULL;
    }
    path = p;
  }
  if (!path)
    *err = 2;
  return path;
}

int el_cmd_show(int argc, char **argv) {
  int err;
  const char *path = input_arg(argc, argv, &err);
  if (!path) {
    show_usage(err == 1 ? stdout : stderr);
    return err == 1 ? 0 : 2;
  }
  int fd = strcmp(path, "-") ? open(path, O_RDONLY) : 0;
  if (fd < 0) {
    fprintf(stderr, "eventlog-live: show: %s: %s\n", path, strerror(errno));
    return 1;
  }
  static char obuf[1 << 20];
  setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
  el_ev_show_t *s = el_ev_show_new(stdout);
  uint8_t *buf = malloc(CHUNK);
  if (!s || !buf) {
    fprintf(stderr, "eventlog-live: show: out of memory\n");
    return 1;
  }
  int rc = 0, status = 0;
  for (;;) {
    ssize_t n = read(fd, buf, CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      fprintf(stderr, "eventlog-live: show: %s: %s\n", path,
              strerror(errno));
      status = 1;
      break;
    }
    if (n == 0)
      break;
    rc = el_ev_show_feed(s, buf, (size_t)n);
    if (rc)
      break;
  }
  if (rc) {
    const el_diag_t *d = el_ev_show_diag(s);
    fprintf(stderr, "eventlog-live: show: %s: %s (byte offset %llu)\n", path,
            d->msg, (unsigned long long)d->offset);
    status = 1;
  }
  int frc = el_ev_show_finish(s);
  if (frc && !rc) {
    const el_diag_t *d = el_ev_show_diag(s);
    if (frc == EL_ETRUNC || frc == EL_EBADHDR)
      fprintf(stderr, "eventlog-live: show: %s: %s (byte offset %llu)\n",
              path, d->msg[0] ? d->msg : el_strerror(frc),
              (unsigned long long)d->offset);
    else
      fprintf(stderr, "eventlog-live: show: %s\n", el_strerror(frc));
    /* A stream cut inside an event after a complete header: ghc-events
     * prints what it decoded and exits 0; anything else is a failure. */
    if (frc != EL_ETRUNC)
      status = 1;
  }
  if (fflush(stdout) != 0)
    status = 1;
  el_ev_show_free(s);
  free(buf);
  if (fd > 0)
    close(fd);
  return status;
}
