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
#include "source/source.h"

#define CHUNK (1u << 20)

static void show_usage(FILE *f) {
  fprintf(f, "usage: eventlog-live show [FILE | - | SOURCE OPTIONS]\n"
             "Print every event like `ghc-events show`.\n\n"
             "source options (docs/sources.md):\n%s", el_src_opts_help());
}

/* The input: a path ("-" = stdin) for a plain file read here with
 * read(2), or NULL with *err = 0 for any other source (src/source). */
static const char *input_arg(int argc, char **argv, int *err,
                             el_src_opts_t *o) {
  el_src_opts_init(o);
  int rc = el_src_opts_parse_all(o, argc, argv);
  *err = rc == 1 ? 1 : 0;
  if (rc == 0 && el_src_opts_validate(o) < 0)
    rc = EL_EUSAGE;
  if (rc < 0) {
    fprintf(stderr, "eventlog-live: show: %s\n", o->err);
    *err = 2;
  }
  if (*err || !el_src_opts_is_plain(o))
    return NULL;
  return o->kind == EL_SRC_STDIN ? "-" : o->path;
}

static int show_feed(void *ud, const uint8_t *buf, size_t len) {
  return el_ev_show_feed(ud, buf, len);
}
static int show_finish(void *ud) { return el_ev_show_finish(ud); }
static void show_reset(void *ud) { el_ev_show_reset(ud); }
static const el_diag_t *show_diag(void *ud) { return el_ev_show_diag(ud); }

/* Any other source (sockets, --follow, tee): run it through the pump. Each
 * connection resets the formatter's decoder (a fresh header follows); the
 * output is printed once, at the end of input. */
static int show_live(const el_src_opts_t *o) {
  static char obuf[1 << 16];
  setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
  el_ev_show_t *s = el_ev_show_new(stdout);
  if (!s) {
    fprintf(stderr, "eventlog-live: show: out of memory\n");
    return 1;
  }
  el_src_consumer_t c = {.ud = s, .reset = show_reset, .feed = show_feed,
                         .finish = show_finish, .diag = show_diag,
                         .one_stream = 1};
  el_src_pump_result_t res;
  int rc = el_src_pump(NULL, o, &c, &res);
  int status = rc == 0 || rc == EL_ESTOPPED || rc == EL_ETRUNC ? 0 : 1;
  if (fflush(stdout) != 0)
    status = 1;
  el_ev_show_free(s);
  return status;
}

int el_cmd_show(int argc, char **argv) {
  int err;
  el_src_opts_t o;
  const char *path = input_arg(argc, argv, &err, &o);
  if (!path && !err)
    return show_live(&o);
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
