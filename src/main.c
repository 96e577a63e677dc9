/* main.c: the eventlog-live executable. Dispatches to a subcommand; when
 * started as `eventlog-live-otelcol` it is the daemon. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/el_common.h"

typedef struct {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *help;
} cmd_t;

static const cmd_t cmds[] = {
    {"show", el_cmd_show, "print events like `ghc-events show`"},
    {"stats", el_cmd_stats, "decode a stream and print counts and speed"},
    {"run", el_cmd_run, "run a Lua script over an eventlog"},
    {"repl", el_cmd_repl, "explore an eventlog interactively in Lua"},
    {"report", el_cmd_report, "write an eventlog's report as one HTML page"},
    {"watch", el_cmd_watch,
     "run a GHC program and watch it live "
     "(web view, /metrics)"},
    {"otelcol", el_cmd_otelcol,
     "the OpenTelemetry daemon "
     "(same as eventlog-live-otelcol)"},
};

static void usage(FILE *f) {
  fprintf(f,
          "Usage: eventlog-live COMMAND [OPTIONS]\n"
          "  or:  eventlog-live --help | --version\n\n"
          "Read GHC eventlogs: print, analyse, report, or export them live "
          "to\nOpenTelemetry.\n\nCommands:\n");
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
  fprintf(f,
          "\nOptions:\n"
          "  -h, --help  this text\n"
          "  --version   print the version and exit\n"
          "\nRun `eventlog-live COMMAND --help` for a command's options."
          "\n");
}

int main(int argc, char **argv) {
  el_set_prog_name(argv[0]); /* the one prefix of every message */
  if (strcmp(el_prog_name(), "eventlog-live-otelcol") == 0)
    return el_cmd_otelcol(argc, argv);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("eventlog-live %s\n", EL_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (strcmp(argv[1], cmds[i].name) == 0)
      return cmds[i].fn(argc - 1, argv + 1);
  const char *names[EL_ARRAY_LEN(cmds)];
  for (size_t i = 0; i < EL_ARRAY_LEN(cmds); i++) names[i] = cmds[i].name;
  const char *near = el_nearest(argv[1], names, EL_ARRAY_LEN(cmds));
  el_eprintf("unknown command '%s'%s%s%s\n", argv[1],
             near ? " (did you mean '" : "", near ? near : "",
             near ? "'?)" : "");
  usage(stderr);
  return 2;
}
