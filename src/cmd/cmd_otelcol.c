/* cmd_otelcol.c: placeholder until the owning module lands. */
#include <stdio.h>

#include "cmd.h"

int el_cmd_otelcol(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "eventlog-live: 'otelcol' is not built yet\n");
  return 1;
}
