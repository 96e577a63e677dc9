/* src_opts.c: the source options every command shares, parsed one at a time
 * from argv. Names and defaults follow the reference tool
 * (spec/reference-behaviour.md §1.1, §1.3, §1.5); docs/sources.md documents
 * each one. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <sys/stat.h>
#include <unistd.h>

#include "eventlog/eventlog.h"
#include "source_internal.h"

void el_src_opts_init(el_src_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->kind = EL_SRC_NONE;
  o->timeout_s = 1.0;
  o->exponent = 1.0;
  o->max_delay_s = 60.0;
  o->retries = -1;
  o->follow_poll_s = 0.1;
  o->drain_s = 10.0;
  o->peer_grace_s = 5.0;
}

typedef enum {
  OPT_FILE,
  OPT_STDIN,
  OPT_SOCKET,
  OPT_HOST,
  OPT_PORT,
  OPT_TIMEOUT,
  OPT_EXPONENT,
  OPT_MAX_DELAY,
  OPT_RETRIES,
  OPT_LOG_FILE,
  OPT_FOLLOW,
  OPT_DRAIN
} opt_id_t;

typedef struct {
  const char *name;  /* with the leading "--" */
  opt_id_t id;
  int has_arg;
} opt_def_t;

static const opt_def_t opt_defs[] = {
    {"--eventlog-file", OPT_FILE, 1},
    {"--eventlog-stdin", OPT_STDIN, 0},
    {"--eventlog-socket", OPT_SOCKET, 1},
    {"--eventlog-socket-host", OPT_HOST, 1},
    {"--eventlog-socket-port", OPT_PORT, 1},
    {"--eventlog-socket-timeout", OPT_TIMEOUT, 1},
    {"--eventlog-socket-exponent", OPT_EXPONENT, 1},
    {"--eventlog-socket-max-delay", OPT_MAX_DELAY, 1},
    {"--eventlog-socket-retries", OPT_RETRIES, 1},
    {"--eventlog-log-file", OPT_LOG_FILE, 1},
    {"--follow", OPT_FOLLOW, 0},
    {"--eventlog-drain-timeout", OPT_DRAIN, 1},
};

static int usage_err(el_src_opts_t *o, const char *fmt, const char *a,
                     const char *b) {
  snprintf(o->err, sizeof o->err, fmt, a, b);
  return EL_EUSAGE;
}

/* A finite double, whole string consumed. */
static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
    return EL_EINVAL;
  *out = v;
  return 0;
}

static int parse_long(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0)
    return EL_EINVAL;
  *out = v;
  return 0;
}

/* Find the definition matching arg ("--name" or "--name=value"); *value
 * is set to the text after '=' or NULL. */
static const opt_def_t *lookup(const char *arg, const char **value) {
  for (size_t k = 0; k < EL_ARRAY_LEN(opt_defs); k++) {
    size_t n = strlen(opt_defs[k].name);
    if (strncmp(arg, opt_defs[k].name, n) != 0)
      continue;
    if (arg[n] == '\0') {
      *value = NULL;
      return &opt_defs[k];
    }
    if (arg[n] == '=') {
      *value = arg + n + 1;
      return &opt_defs[k];
    }
  }
  return NULL;
}

static void choose(el_src_opts_t *o, el_src_kind_t kind) {
  /* Host and port together make one TCP source. */
  if (kind == EL_SRC_TCP && o->kind == EL_SRC_TCP)
    return;
  o->kind = kind;
  o->nsources++;
}

static int apply(el_src_opts_t *o, const opt_def_t *d, const char *v) {
  switch (d->id) {
  case OPT_FILE:
    choose(o, EL_SRC_FILE);
    o->path = v;
    return 0;
  case OPT_STDIN:
    choose(o, EL_SRC_STDIN);
    return 0;
  case OPT_SOCKET:
    choose(o, EL_SRC_UNIX);
    o->path = v;
    return 0;
  case OPT_HOST:
    choose(o, EL_SRC_TCP);
    o->host = v;
    return 0;
  case OPT_PORT:
    choose(o, EL_SRC_TCP);
    o->port = v;
    /* a service name ("http") is looked up later; a number must be a
     * port */
    if (v[0] >= '0' && v[0] <= '9') {
      char *end;
      errno = 0;
      unsigned long p = strtoul(v, &end, 10);
      if (*end || errno || p < 1 || p > 65535)
        return usage_err(o,
                         "%s: expected a port 1-65535 or a service "
                         "name, got '%s'",
                         d->name, v);
    }
    return 0;
  case OPT_TIMEOUT:
    if (parse_double(v, &o->timeout_s) || o->timeout_s < 0)
      return usage_err(o, "%s: expected seconds >= 0, got '%s'", d->name, v);
    return 0;
  case OPT_EXPONENT:
    if (parse_double(v, &o->exponent) || o->exponent < 1)
      return usage_err(o, "%s: expected a number >= 1, got '%s'", d->name, v);
    return 0;
  case OPT_MAX_DELAY:
    if (parse_double(v, &o->max_delay_s) || o->max_delay_s < 0)
      return usage_err(o, "%s: expected seconds >= 0, got '%s'", d->name, v);
    return 0;
  case OPT_RETRIES:
    if (parse_long(v, &o->retries) || o->retries < -1)
      return usage_err(o, "%s: expected a count >= -1, got '%s'", d->name, v);
    return 0;
  case OPT_LOG_FILE:
    o->log_file = v;
    return 0;
  case OPT_FOLLOW:
    o->follow = 1;
    return 0;
  case OPT_DRAIN:
    if (parse_double(v, &o->drain_s) || o->drain_s < 0 || o->drain_s > 86400)
      return usage_err(o,
                       "%s: expected seconds between 0 and 86400, got "
                       "'%s'",
                       d->name, v);
    return 0;
  }
  return EL_EINVAL;
}

int el_src_opts_parse(el_src_opts_t *o, int argc, char **argv, int *i) {
  if (*i >= argc || !argv[*i])
    return 0;
  const char *arg = argv[*i];
  const char *value = NULL;
  const opt_def_t *d = lookup(arg, &value);
  if (!d)
    return 0;
  int used = 1;
  if (d->has_arg && !value) {
    if (*i + 1 >= argc || !argv[*i + 1])
      return usage_err(o, "%s needs a value%s", d->name, "");
    value = argv[*i + 1];
    used = 2;
  } else if (!d->has_arg && value) {
    return usage_err(o, "%s takes no value%s", d->name, "");
  }
  if (d->has_arg && value[0] == '\0')
    return usage_err(o, "%s: empty value%s", d->name, "");
  int rc = apply(o, d, value);
  if (rc)
    return rc;
  *i += used;
  return 1;
}

void el_src_opts_set_path(el_src_opts_t *o, const char *path) {
  if (strcmp(path, "-") == 0) {
    choose(o, EL_SRC_STDIN);
    return;
  }
  choose(o, EL_SRC_FILE);
  o->path = path;
}

static void help_to(FILE *f) { fputs(el_src_opts_help(), f); }

int el_src_opts_parse_all(el_src_opts_t *o, int argc, char **argv) {
  int positional = 0;
  for (int i = 1; i < argc;) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help"))
      return 1;
    int rc = el_src_opts_parse(o, argc, argv, &i);
    if (rc < 0)
      return rc;
    if (rc > 0)
      continue;
    if (a[0] == '-' && a[1] != '\0') {
      char near[64], more[96] = "";
      el_opt_suggest(a, help_to, near, sizeof near);
      if (near[0])
        snprintf(more, sizeof more, "; did you mean %s?", near);
      return usage_err(o, "unknown option %s%s", a, more);
    }
    if (positional++)
      return usage_err(o, "unexpected argument %s%s", a, "");
    el_src_opts_set_path(o, a);
    i++;
  }
  return 0;
}

int el_src_opts_is_plain(const el_src_opts_t *o) {
  return (o->kind == EL_SRC_FILE || o->kind == EL_SRC_STDIN) &&
         !o->follow && !o->log_file;
}

int el_src_opts_validate(el_src_opts_t *o) {
  if (o->nsources == 0 || o->kind == EL_SRC_NONE)
    return usage_err(o, "no eventlog source: give one of --eventlog-file, "
                        "--eventlog-stdin, --eventlog-socket or "
                        "--eventlog-socket-host/--eventlog-socket-port%s%s",
                     "", "");
  if (o->nsources > 1)
    return usage_err(o, "give exactly one eventlog source (%s%s)",
                     "--eventlog-file, --eventlog-stdin, --eventlog-socket, "
                     "--eventlog-socket-host/port",
                     "");
  if (o->kind == EL_SRC_TCP && (!o->host || !o->port))
    return usage_err(o, "%s needs %s", o->host ? "--eventlog-socket-host"
                                               : "--eventlog-socket-port",
                     o->host ? "--eventlog-socket-port"
                             : "--eventlog-socket-host");
  if (o->kind == EL_SRC_UNIX &&
      strlen(o->path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return usage_err(o, "--eventlog-socket: path longer than %s bytes: %s",
                     "107", o->path);
  /* Truncating the tee would destroy the input (checked again when the
   * source opens: the input may not exist yet). */
  if (o->log_file && o->kind == EL_SRC_FILE &&
      el_same_file(o->path, o->log_file))
    return usage_err(o, "--eventlog-log-file %s is the input itself%s",
                     o->log_file, ": it would be overwritten");
  if (o->follow && o->kind != EL_SRC_FILE)
    return usage_err(o, "--follow needs --eventlog-file%s%s", "", "");
  if (o->timeout_s < 0 || o->exponent < 1 || o->max_delay_s < 0 ||
      o->retries < -1 || o->follow_poll_s <= 0)
    return usage_err(o, "invalid reconnection settings%s%s", "", "");
  o->err[0] = '\0';
  return 0;
}

const char *el_src_opts_help(void) {
  return "  --eventlog-file PATH         read an eventlog"
         " file or a named FIFO\n"
         "  --follow                     with"
         " --eventlog-file: keep reading as the\n"
         "                               file grows (like tail -f)\n"
         "  --eventlog-stdin             read the eventlog from stdin\n"
         "  --eventlog-socket PATH       connect to"
         " eventlog-socket (Unix socket)\n"
         "  --eventlog-socket-host HOST  connect to"
         " eventlog-socket over TCP\n"
         "  --eventlog-socket-port PORT  (IPv4 or IPv6;"
         " PORT may be a service name)\n"
         "  --eventlog-socket-timeout SECONDS\n"
         "                               first delay"
         " between connection attempts\n"
         "                               (default 1)\n"
         "  --eventlog-socket-exponent NUMBER\n"
         "                               delay multiplier"
         " after each failed attempt\n"
         "                               (default 1: constant delay)\n"
         "  --eventlog-socket-max-delay SECONDS\n"
         "                               longest delay"
         " between attempts (default 60)\n"
         "  --eventlog-socket-retries N  failed attempts in"
         " a row before giving up\n"
         "                               (default -1: retry forever)\n"
         "  --eventlog-log-file PATH     also write every"
         " byte received to PATH\n"
         "                               (created or truncated)\n"
         "  --eventlog-drain-timeout SECONDS\n"
         "                               on SIGINT/SIGTERM, read on (and"
         " discard) a FIFO\n"
         "                               or stdin pipe until its writer"
         " closes it, at\n"
         "                               most SECONDS (default 10; 0:"
         " stop at once)\n";
}

void el_src_opts_describe(const el_src_opts_t *o, char *buf, size_t size) {
  switch (o->kind) {
  case EL_SRC_FILE:
    snprintf(buf, size, "%s%s", o->path ? o->path : "?",
             o->follow ? " (following)" : "");
    break;
  case EL_SRC_STDIN:
    snprintf(buf, size, "stdin");
    break;
  case EL_SRC_UNIX:
    snprintf(buf, size, "Unix socket %s", o->path ? o->path : "?");
    break;
  case EL_SRC_TCP:
    snprintf(buf, size, "Inet socket %s:%s", o->host ? o->host : "?",
             o->port ? o->port : "?");
    break;
  default:
    snprintf(buf, size, "no source");
  }
}

int el_src_fd_recorded(int fd) {
  struct stat sb;
  if (fstat(fd, &sb) != 0)
    return 0;
  return S_ISREG(sb.st_mode) || (S_ISCHR(sb.st_mode) && !isatty(fd));
}

/* 1 for what el_src_fd_recorded takes for a recorded file (stdin when path
 * is NULL), or a path that does not exist or cannot be opened (the
 * caller's open reports it); 0 for a FIFO, pipe, socket or terminal. */
static int recorded_or_missing(const char *path) {
  struct stat sb;
  int rc = path ? stat(path, &sb) : fstat(0, &sb);
  if (rc != 0 || S_ISREG(sb.st_mode))
    return 1;
  if (!S_ISCHR(sb.st_mode))
    return 0;
  if (!path)
    return !isatty(0);
  /* Only an open device tells whether it is a terminal. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return 1;
  int tty = isatty(fd);
  close(fd);
  return !tty;
}

int el_src_opts_live(const el_src_opts_t *o) {
  if (o->kind != EL_SRC_FILE && o->kind != EL_SRC_STDIN)
    return 1;
  return o->follow ||
         !recorded_or_missing(o->kind == EL_SRC_STDIN ? NULL : o->path);
}

unsigned el_src_opts_decoder_opts(const el_src_opts_t *o) {
  unsigned opts = el_src_opts_live(o) ? EL_EV_OPT_LIVE : 0;
  if (o->kind == EL_SRC_UNIX || o->kind == EL_SRC_TCP)
    opts |= EL_EV_OPT_CONNECTION;
  return opts;
}

const char *el_src_opts_direct_input(el_src_opts_t *o, int argc, char **argv,
                                     const char *cmd, int *err) {
  el_src_opts_init(o);
  int rc = el_src_opts_parse_all(o, argc, argv);
  *err = rc == 1 ? 1 : 0;
  if (rc == 0 && el_src_opts_validate(o) < 0)
    rc = EL_EUSAGE;
  if (rc < 0) {
    el_eprintf("%s: %s\n", cmd, o->err);
    *err = 2;
  }
  if (*err || !el_src_opts_is_plain(o))
    return NULL;
  const char *path = o->kind == EL_SRC_STDIN ? NULL : o->path;
  if (!recorded_or_missing(path))
    return NULL;
  return path ? path : "-";
}
