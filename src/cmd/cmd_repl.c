/* cmd_repl.c: placeholder until the owning module lands. */
#include <stdio.h>

#include "cmd.h"

int el_cmd_repl(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "eventlog-live: 'repl' is not built yet\n");
  return 1;
}
