/* cmd_opts.c: the unknown-option check of the commands whose options are
 * the source options plus a few of their own taken out of argv first
 * (show, stats; cmd.h el__cmd_check_options). */
#include <string.h>

#include "cmd.h"
#include "common/el_common.h"
#include "source/source.h"

int el__cmd_check_options(const char *cmd, int argc, char **argv,
                          void (*help)(FILE *f)) {
  el_src_opts_t o;
  el_src_opts_init(&o);
  for (int i = 1; i < argc;) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 0;
    int rc = el_src_opts_parse(&o, argc, argv, &i);
    if (rc < 0) return 0; /* a bad value: the real parse says so */
    if (rc > 0) continue;
    if (a[0] == '-' && a[1] != '\0') {
      el_opt_unknown(cmd, a, help);
      return 2;
    }
    i++;
  }
  return 0;
}
