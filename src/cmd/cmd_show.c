/* cmd_show.c: `eventlog-live show` prints an eventlog like `ghc-events
 * show` (ghc-events 0.21), byte for byte (spec/eventlog-format.md §6.4).
 *
 * Usage: eventlog-live show [--json] [FILE | - | SOURCE OPTIONS]
 * --json prints one JSON object per event in arrival order instead
 * (src/eventlog/ev_json.c).
 * Exit status: 0 on success and on a stream cut off cleanly or inside an
 * event (ghc-events prints what it decoded and exits 0, §4.1; we also say
 * so on stderr); 1 on a malformed header, a corrupt stream (after printing
 * what decoded) or an I/O error; 2 on a usage error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "eventlog/eventlog.h"
#include "source/source.h"

#define CHUNK (1u << 20)

static void show_usage(FILE *f) {
  fprintf(f,
          "Usage: eventlog-live show [--json] [--sort-memory SIZE] "
          "[FILE | - | SOURCE-OPTIONS]\n\n"
          "Print every event like `ghc-events show`.\n\n"
          "Options:\n"
          "  --json  one JSON object per event (name, time, Unix time, "
          "cap, fields),\n          in arrival order\n"
          "  --sort-memory SIZE  sort in at most about SIZE bytes of "
          "memory (K, M, G or\n          KiB, MiB, GiB, any case; 1K to "
          "1024G; default 64M), the rest in\n          a temporary file in "
          "$TMPDIR or /tmp\n"
          "  -h, --help  this text\n\n"
          "Source options (docs/sources.md):\n%s",
          el_src_opts_help());
}

/* The formatter in use: the ghc-events text (sorted at the end) or JSON
 * lines (as events arrive). */
typedef struct {
  void *ud;
  int (*feed)(void *ud, const uint8_t *buf, size_t len);
  int (*finish)(void *ud);
  void (*reset)(void *ud);
  const el_diag_t *(*diag)(void *ud);
  void (*free)(void *ud);
  void (*set_warn)(void *ud, el_ev_warn_fn fn, void *wud);
} fmt_t;

/* The source's name for warnings, as el_src_opts_describe gives it. */
static char warn_desc[512];
/* A corrupt part (a warning with a code) was said: the status is 1. */
static int corrupt_said;

/* A warning of the decoder (bytes skipped or ignored, a corrupt part...),
 * on stderr as it comes, in byte order: never swallowed. Its message
 * names its byte. A corrupt part is an error here (show exits 1 for it,
 * docs/exit-codes.md), in the words run and report use for it as a
 * warning (src/host/host.c on_warning): "NAME: corrupt stream: ...". */
static void print_warning(void *ud, const el_diag_t *d) {
  (void)ud;
  if (d->code == EL_ETRUNC && d->cut_event) {
    /* A connection's bytes ending inside a later header, said at the
     * next one (el_ev_decoder_reset): a cut, as at the end of input. */
    el_src_warn_cut(warn_desc, d);
    return;
  }
  if (d->code) corrupt_said = 1;
  el_log(d->code ? EL_LOG_ERROR : EL_LOG_WARN, "%s: %s", warn_desc, d->msg);
}

static int json_feed(void *ud, const uint8_t *buf, size_t len) {
  return el_ev_json_feed(ud, buf, len);
}
static int json_finish(void *ud) { return el_ev_json_finish(ud); }
static void json_reset(void *ud) { el_ev_json_reset(ud); }
static const el_diag_t *json_diag(void *ud) { return el_ev_json_diag(ud); }
static void json_free(void *ud) { el_ev_json_free(ud); }
static void json_set_warn(void *ud, el_ev_warn_fn fn, void *wud) {
  el_ev_json_set_warn(ud, fn, wud);
}

/* Remove "--json" from argv (in place); returns 1 if it was there. */
static int take_json_flag(int *argc, char **argv) {
  int found = 0, k = 1;
  for (int i = 1; i < *argc; i++) {
    if (!strcmp(argv[i], "--json"))
      found = 1;
    else
      argv[k++] = argv[i];
  }
  *argc = k;
  argv[k] = NULL;
  return found;
}

/* The largest --sort-memory: 1 TiB (more than any machine sorts in). */
#define SORT_MEMORY_MAX ((uint64_t)1 << 40)

/* "--sort-memory SIZE" / "--sort-memory=SIZE": a size as el_parse_size
 * reads it (bytes, or K, M, G in either case, KiB, MiB, GiB), 1K to
 * SORT_MEMORY_MAX. Removed from argv (in place), noted in *seen (given
 * twice: cmd.h el__cmd_note_option). Returns 0 (*bytes = 0 when absent)
 * or -1 after a message on stderr. */
static int take_sort_memory(int *argc, char **argv, size_t *bytes,
                            el__cmd_seen_t *seen) {
  int k = 1;
  *bytes = 0;
  for (int i = 1; i < *argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--sort-memory")) {
      if (i + 1 >= *argc) {
        el_eprintf("show: --sort-memory needs a size (e.g. 64M)\n");
        return -1;
      }
      el__cmd_note_option(seen, argv, i, i + 2);
      v = argv[++i];
    } else if (!strncmp(argv[i], "--sort-memory=", 14)) {
      el__cmd_note_option(seen, argv, i, i + 1);
      v = argv[i] + 14;
    } else {
      argv[k++] = argv[i];
      continue;
    }
    char err[192];
    uint64_t n;
    if (el_parse_size(v, 1024, SORT_MEMORY_MAX, &n, err, sizeof err) < 0) {
      el_eprintf("show: --sort-memory: %s\n", err);
      return -1;
    }
    *bytes = (size_t)n;
  }
  *argc = k;
  argv[k] = NULL;
  return 0;
}

/* A negated errno (a system error such as a failed write), as opposed
 * to one of our EL_E* codes. */
static int is_errno(int rc) { return rc < 0 && rc > -4096; }

static int show_feed(void *ud, const uint8_t *buf, size_t len) {
  return el_ev_show_feed(ud, buf, len);
}
static int show_finish(void *ud) { return el_ev_show_finish(ud); }
static void show_reset(void *ud) { el_ev_show_reset(ud); }
static const el_diag_t *show_diag(void *ud) { return el_ev_show_diag(ud); }
static void show_free(void *ud) { el_ev_show_free(ud); }
static void show_set_warn(void *ud, el_ev_warn_fn fn, void *wud) {
  el_ev_show_set_warn(ud, fn, wud);
}

/* Create the formatter writing to stdout, its warnings to stderr naming
 * desc; 0 or -1 when out of memory. */
static int fmt_new(fmt_t *f, int json, size_t sort_memory, const char *desc) {
  if (json) {
    *f = (fmt_t){el_ev_json_new(stdout),
                 json_feed,
                 json_finish,
                 json_reset,
                 json_diag,
                 json_free,
                 json_set_warn};
  } else {
    *f = (fmt_t){el_ev_show_new(stdout),
                 show_feed,
                 show_finish,
                 show_reset,
                 show_diag,
                 show_free,
                 show_set_warn};
  }
  if (!f->ud) {
    el_eprintf("show: out of memory\n");
    return -1;
  }
  snprintf(warn_desc, sizeof warn_desc, "%s", desc);
  f->set_warn(f->ud, print_warning, NULL);
  if (!json && sort_memory)
    el_ev_show_set_sort_memory(f->ud, sort_memory); /* >= 1K: checked */
  return 0;
}

/* Any other source (sockets, --follow, tee): run it through the pump. Each
 * connection resets the formatter's decoder (a fresh header follows); the
 * output is printed once, at the end of input. */
static int show_live(const el_src_opts_t *o, int json, size_t sort_memory) {
  static char obuf[1 << 16];
  setvbuf(stdout, obuf, json ? _IOLBF : _IOFBF, sizeof obuf);
  fmt_t f;
  char desc[512];
  el_src_opts_describe(o, desc, sizeof desc);
  if (fmt_new(&f, json, sort_memory, desc)) return 1;
  /* live: never hold an event back (it may pause); a socket's end in
   * its words */
  unsigned dopts = el_src_opts_decoder_opts(o);
  json ? el_ev_json_set_opts(f.ud, dopts) : el_ev_show_set_opts(f.ud, dopts);
  el_src_consumer_t c = {.ud = f.ud, .reset = f.reset, .feed = f.feed,
                         .finish = f.finish, .diag = f.diag,
                         .one_stream = 1};
  el_src_pump_result_t res;
  int rc = el_src_pump(NULL, o, &c, &res);
  int status = rc == 0 || rc == EL_ESTOPPED || rc == EL_ETRUNC ? 0 : 1;
  if (corrupt_said) status = 1; /* also when the input was cut after it */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    el_eprintf("show: writing the output: %s\n", strerror(errno ? errno : EIO));
    status = 1;
  }
  f.free(f.ud);
  return status;
}

/* Feed fd to the formatter, CHUNK bytes at a time, until its end, a read
 * error (*status = 1; *unread = 1 when it came before the first byte) or
 * SIGINT/SIGTERM (handlers installed for the call, then restored). A
 * decode error (an undeclared type, a bad header: the decoder goes on at
 * the next believable block or header) is printed, naming its byte, sets
 * *status to 1, and reading goes on, as through a pipe (el_src_pump):
 * before, reading stopped, and the rest of the input after the current
 * chunk was lost without a word. Returns the feed result that stopped it
 * (a stop, out of memory, a failed write), else 0. */
static int feed_fd(int fd, const char *path, uint8_t *buf, const fmt_t *f,
                   int *status, int *unread) {
  int rc = 0, any = 0;
  el__cmd_stop_t stop;
  el__cmd_stop_begin(&stop);
  for (;;) {
    if (el__cmd_stop_signal) {
      el_eprintf("show: signal %d: stopping\n", (int)el__cmd_stop_signal);
      break;
    }
    ssize_t n = read(fd, buf, CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      el_eprintf("show: %s: %s\n", path, strerror(errno));
      *status = 1;
      *unread = !any;
      break;
    }
    if (n == 0)
      break;
    any = 1;
    rc = f->feed(f->ud, buf, (size_t)n);
    if (rc == EL_EUNDECL || rc == EL_EBADHDR || rc == EL_ECORRUPT) {
      /* "error: NAME: malformed header: ...", as every command says it
       * (src/source/src_pump.c report; docs/exit-codes.md) */
      el_log(EL_LOG_ERROR, "%s: %s", warn_desc, f->diag(f->ud)->msg);
      *status = 1;
      rc = 0;
    } else if (rc) {
      break;
    }
  }
  el__cmd_stop_end(&stop);
  return rc;
}

/* End of input: finish the formatter (which prints) and report what went
 * wrong. rc: feed_fd's result; unread: its read error came before the
 * first byte (said already: the input is not "empty"). Returns the exit
 * status, given status so far. */
static int finish(const char *path, const fmt_t *f, int rc, int status,
                  int unread) {
  int written_bad = 0;
  if (rc) {
    const el_diag_t *d = f->diag(f->ud);
    el_eprintf("show: %s: %s\n", path, d->msg); /* names its byte */
    status = 1;
  }
  int frc = f->finish(f->ud);
  const el_diag_t *fd = f->diag(f->ud);
  if (is_errno(frc) && fd->code == frc && fd->msg[0]) {
    /* the sort's temporary file failed: nothing was printed */
    if (frc != rc) el_eprintf("show: %s\n", fd->msg);
    status = 1;
  } else if (is_errno(frc)) { /* writing the output failed: reported
                                 whatever the input did */
    el_eprintf("show: writing the output: %s\n", el_strerror(frc));
    status = 1;
    written_bad = 1;
  } else if (frc == EL_ECORRUPT) { /* said as it came (print_warning) */
    status = 1;
  } else if (frc && !rc && !unread) { /* unread: no byte, nothing to add */
    const el_diag_t *d = f->diag(f->ud);
    if (frc == EL_ETRUNC && d->cut_event) /* as through a FIFO or pipe */
      el_src_warn_cut(strcmp(path, "-") ? path : "stdin", d);
    /* "error: NAME: no eventlog header found ...", in every command's
     * words (the message names its byte); a warning when show goes on */
    else if (frc == EL_ETRUNC || frc == EL_EBADHDR)
      el_log(frc != EL_ETRUNC ? EL_LOG_ERROR : EL_LOG_WARN, "%s: %s", warn_desc,
             d->msg[0] ? d->msg : el_strerror(frc));
    else
      el_eprintf("show: %s\n", el_strerror(frc));
    /* A stream cut inside an event after a complete header: ghc-events
     * prints what it decoded and exits 0; anything else is a failure. */
    if (frc != EL_ETRUNC)
      status = 1;
  }
  if (corrupt_said) status = 1; /* also when the input was cut after it */
  if ((fflush(stdout) != 0 || ferror(stdout)) && !written_bad) {
    el_eprintf("show: writing the output: %s\n", strerror(errno ? errno : EIO));
    status = 1;
  }
  return status;
}

/* A file or stdin ("-") read directly with read(2). */
static int show_direct(const char *path, int json, size_t sort_memory) {
  int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
  if (fd < 0) {
    el_eprintf("show: %s: %s\n", path, strerror(errno));
    return 1;
  }
  static char obuf[1 << 20];
  setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
  fmt_t f;
  uint8_t *buf = malloc(CHUNK);
  if (!buf ||
      fmt_new(&f, json, sort_memory, strcmp(path, "-") ? path : "stdin")) {
    free(buf);
    if (fd > 0) close(fd);
    return 1;
  }
  int status = 0, unread = 0;
  int rc = feed_fd(fd, path, buf, &f, &status, &unread);
  status = finish(path, &f, rc, status, unread);
  f.free(f.ud);
  free(buf);
  if (fd > 0)
    close(fd);
  return status;
}

int el_cmd_show(int argc, char **argv) {
  int err;
  el_src_opts_t o;
  int json = take_json_flag(&argc, argv);
  size_t sort_memory;
  el__cmd_seen_t seen = {0};
  if (take_sort_memory(&argc, argv, &sort_memory, &seen)) return 2;
  if (el__cmd_check_options("show", argc, argv, show_usage, &seen)) return 2;
  const char *path = el_src_opts_direct_input(&o, argc, argv, "show", &err);
  if (!path && !err) return show_live(&o, json, sort_memory);
  if (!path && err == 1) { /* -h, --help */
    show_usage(stdout);
    return 0;
  }
  if (!path) return 2; /* the message is out, as in the other commands */
  return show_direct(path, json, sort_memory);
}
