/* cmd.h: subcommands of the eventlog-live executable. Each returns the
 * process exit status: 0 success, 1 runtime failure, 2 usage or script
 * error. argv[0] is the subcommand name. */
#ifndef EL_CMD_H
#define EL_CMD_H

#include <signal.h>
#include <stdio.h>

int el_cmd_show(int argc, char **argv);    /* cmd_show.c: ghc-events show */
int el_cmd_stats(int argc, char **argv);   /* cmd_stats.c: decode, count */
int el_cmd_run(int argc, char **argv);     /* cmd_run.c: run a Lua script */
int el_cmd_repl(int argc, char **argv);    /* cmd_repl.c: interactive */
int el_cmd_report(int argc, char **argv);  /* cmd_report.c: HTML report */
int el_cmd_otelcol(int argc, char **argv); /* cmd_otelcol.c: the daemon */
int el_cmd_watch(int argc, char **argv);   /* cmd_watch.c: run a program
                                              and watch it live */

/* For a command that embeds the daemon (cmd_watch.c): el_otelcol_main
 * parses argv[1..argc) as the daemon's options and runs the daemon's
 * pipeline (daemon.h), with these changes. */
struct el_daemon_opts_s;
typedef struct el_otelcol_embed_s {
  const char *prog;      /* its name in messages, after the binary's prefix,
                         e.g. "watch" -> "eventlog-live: watch: ..." */
  void (*help)(FILE *f); /* prints the command's --help to f, or NULL;
                            its options are suggested for unknown ones */
  int local;             /* local defaults under every option and the config
                         (cmd_otelcol.c apply_local_defaults): export every
                         1 s and traces on unless --config or
                         --export-interval/--traces say otherwise, OTLP off
                         unless an OTLP option or OTEL_* variable asks for
                         it, the web view on a free port, log level warn
                         unless -v or OTEL_LOG_LEVEL */
  /* After the options and the configuration file, before the source is
   * validated: choose the source and set the pipeline's hooks (o->on_ready,
   * o->own_signals, ...). Returns 0, or the exit status to end with. */
  int (*prepare)(void *ud, struct el_daemon_opts_s *o);
  void *ud;
} el_otelcol_embed_t;

/* The daemon's command line and pipeline; e NULL = the daemon itself.
 * Returns the exit status (0, 1 runtime, 2 usage). */
int el_otelcol_main(int argc, char **argv, const el_otelcol_embed_t *e);

/* Options given twice with different values (h45 for the daemon, h50 for
 * run and report): the last one is used, as before (a script may append
 * an option to override one), with one warning per option naming its
 * values. Values are compared by what they mean where the option has
 * units or is a number (sizes in bytes, durations, seconds, counts and
 * ports by value: "1G" and "1024M" are the same, h60), else as text.
 * A command zero-initialises an el__cmd_seen_t, sets its two
 * lists, calls el__cmd_note_option after each option its parsers
 * consumed, and el__cmd_warn_repeated once the log level is known.
 * cmd_opts.c. */
#define EL__CMD_MAX_SEEN 64 /* options with a value; more are not followed */
typedef struct el__cmd_seen_s {
  /* Short options that take a value, as pairs {"-v", "--log-level"} of
   * the short spelling (its first two characters) and the name it is
   * counted and warned under ("-h" for -h<X>), NULL-terminated. Other
   * short options are not followed. */
  const char *const *shorts;
  /* Long options whose values add up ("--script"), NULL-terminated or
   * NULL: not followed. "--set" (KEY=VALUE) is followed per key. */
  const char *const *repeatable;
  struct el__cmd_seen_opt_s {
    char name[64];     /* "--service-name", "-h", "--set key" */
    const char *first; /* its first value, borrowed from argv */
    const char *last;  /* its last value, the one used */
    int count;         /* times given */
    int differs;       /* some value differs from the first */
  } opt[EL__CMD_MAX_SEEN];
  int n;
} el__cmd_seen_t;

/* Note the option argv[start..end), which one of the command's parsers
 * has just consumed (end - start is 2 when its value was the next
 * argument): its name and value, as "--name VALUE", "--name=VALUE",
 * "-v VALUE" or "-hX". Positional arguments, flags (no value), options
 * listed as repeatable and names over 63 bytes are not noted; neither
 * is anything once EL__CMD_MAX_SEEN options are followed. Cannot fail. */
void el__cmd_note_option(el__cmd_seen_t *s, char **argv, int start, int end);

/* One el_log warning per option given more than once with different
 * values: "<cmd>: --x given twice ('a', then 'b'): the last one is used"
 * (or "given N times (first 'a', last 'c')"); cmd NULL: no prefix (the
 * daemon). docs/config.md "An option given twice". */
void el__cmd_warn_repeated(const el__cmd_seen_t *s, const char *cmd);

/* Before el_src_opts_direct_input, for a command whose options are the
 * source options plus its own, already taken out of argv (show, stats):
 * an argument that looks like an option and is no source option is
 * reported by el_opt_unknown(cmd, arg, help), with help the command's
 * --help text so its own options are suggested too. Returns 0 (nothing
 * unknown; also for -h/--help and malformed values, which the real parse
 * reports) or 2, the usage exit status, after the message. With seen
 * (or NULL), which may hold the command's own options already noted, the
 * source options are noted too and, when nothing is unknown, an option
 * given twice with different values is warned about
 * (el__cmd_warn_repeated). cmd_opts.c. */
int el__cmd_check_options(const char *cmd, int argc, char **argv,
                          void (*help)(FILE *f), el__cmd_seen_t *seen);

/* SIGINT/SIGTERM while a command reads its input with its own loop (show
 * and stats on a regular file; cmd_stop.c). el__cmd_stop_begin installs
 * handlers that store the signal's number in el__cmd_stop_signal (0 until
 * one arrives; never reset) and keeps the previous handlers in *s;
 * el__cmd_stop_end puts them back. The loop checks the flag between
 * chunks. Main thread. */
typedef struct el__cmd_stop_s {
  struct sigaction old_int, old_term;
} el__cmd_stop_t;
extern volatile sig_atomic_t el__cmd_stop_signal;
void el__cmd_stop_begin(el__cmd_stop_t *s);
void el__cmd_stop_end(const el__cmd_stop_t *s);

/* SIGINT/SIGTERM after the input, while a script's session-end and on_end
 * hooks run and telemetry is flushed (run, report: the source's handlers
 * are gone by then). el__cmd_end_begin installs handlers that stop the
 * Lua call running (el_host_interrupt_signal: "stopped by signal", not an
 * error; the hooks after it still run, the flush goes on, bounded by its
 * own timeout) and then step aside (SA_RESETHAND: a second one of the
 * same signal ends the process as by default); el__cmd_end_end puts the
 * previous handlers back. Before, the first signal killed the process at
 * once, telemetry not flushed. Main thread; one host at a time. */
struct el_host_s;
void el__cmd_end_begin(el__cmd_stop_t *s, struct el_host_s *h);

/* The flag el__cmd_end_begin's handlers set too (besides interrupting
 * the Lua call): NULL (the default) for none; `run` gives its console's
 * stop flag (el_otlp_console_set_stop), so that the first signal after
 * the input also ends the wait for a reader that does not read. Main
 * thread, before el__cmd_end_begin. */
void el__cmd_end_set_flag(volatile sig_atomic_t *flag);

/* Whether stdout is a regular file, a block device or a character
 * device other than a terminal (/dev/null): written without a reader
 * that could stop reading (the console exporter's writer mode,
 * el_otlp_console_start_writer). cmd_stop.c. */
int el__cmd_stdout_is_file(void);
void el__cmd_end_end(const el__cmd_stop_t *s);

#endif
