/* el_console_render: render captured OTLP requests as the console exporter
 * does (el_otlp_json), for comparing renderers byte for byte and for
 * profiling the rendering alone (callgrind).
 * Renders with one arena for all requests, as the exporter does
 * (el_otlp_json_in). Usage: el_console_render [--repeat N] FILE...
 *   FILE: serialized Export<Signal>ServiceRequests, each as a 4-byte
 *     little-endian signal (el_tm_signal_t: 0 metrics, 1 logs, 2 traces,
 *     3 profiles), a 4-byte little-endian length and that many bytes (what
 *     an OTLP/HTTP receiver got, e.g. from eventlog-live-otelcol).
 *   --repeat N: render every request N times (the output once).
 * Writes one line per request to stdout: the OTLP/JSON, or "-" when
 * el_otlp_json returned NULL. Exit status 1 on a malformed file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/el_common.h"
#include "otlp/exp_console.h"

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* Render the requests of the file at path; 0, or -1 (said on stderr). */
static int render_file(el_arena_t *a, const char *path, long repeat) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  unsigned char hdr[8];
  int rc = 0;
  while (fread(hdr, 1, 8, f) == 8) {
    uint32_t sig = le32(hdr), len = le32(hdr + 4);
    uint8_t *b = malloc(len ? len : 1);
    if (!b || fread(b, 1, len, f) != len || sig >= EL_TM_NSIGNALS) {
      fprintf(stderr, "%s: malformed or truncated record\n", path);
      free(b);
      rc = -1;
      break;
    }
    for (long i = 0; i < repeat; i++) {
      char *s = el_otlp_json_in(a, (el_tm_signal_t)sig, b, len);
      if (i == 0) puts(s ? s : "-");
      el_free(s);
    }
    free(b);
  }
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  long repeat = 1;
  int i = 1;
  if (argc > 2 && strcmp(argv[1], "--repeat") == 0) {
    repeat = atol(argv[2]);
    i = 3;
  }
  if (i >= argc || repeat < 1) {
    fprintf(stderr, "usage: el_console_render [--repeat N] FILE...\n");
    return 2;
  }
  int rc = 0;
  el_arena_t a = {0}; /* one for every render, as the console exporter */
  for (; i < argc; i++)
    if (render_file(&a, argv[i], repeat) < 0) rc = 1;
  el_arena_free(&a);
  return rc;
}
