/* cmd_stats.c: placeholder until the owning module lands. */
#include <stdio.h>

#include "cmd.h"

int el_cmd_stats(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "eventlog-live: 'stats' is not built yet\n");
  return 1;
}
