/* cmd_run.c: placeholder until the owning module lands. */
#include <stdio.h>

#include "cmd.h"

int el_cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "eventlog-live: 'run' is not built yet\n");
  return 1;
}
