/* cmd.h: subcommands of the eventlog-live executable. Each returns the
 * process exit status: 0 success, 1 runtime failure, 2 usage or script
 * error. argv[0] is the subcommand name. */
#ifndef EL_CMD_H
#define EL_CMD_H

int el_cmd_show(int argc, char **argv);    /* cmd_show.c: ghc-events show */
int el_cmd_stats(int argc, char **argv);   /* cmd_stats.c: decode, count */
int el_cmd_run(int argc, char **argv);     /* cmd_run.c: run a Lua script */
int el_cmd_repl(int argc, char **argv);    /* cmd_repl.c: interactive */
int el_cmd_report(int argc, char **argv);  /* cmd_report.c: HTML report */
int el_cmd_otelcol(int argc, char **argv); /* cmd_otelcol.c: the daemon */

#endif
