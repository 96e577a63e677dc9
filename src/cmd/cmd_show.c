/* cmd_show.c: placeholder until the owning module lands. */
#include <stdio.h>

#include "cmd.h"

int el_cmd_show(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "eventlog-live: 'show' is not built yet\n");
  return 1;
}
