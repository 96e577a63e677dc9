/* plugin.h: the loader of eventlog-live's plugins.
 *
 * A plugin is a shared object, eventlog-live-<name>.so, that holds code
 * whose libraries are costly to load (gRPC, libcurl, libmicrohttpd,
 * libedit). The binary opens it with dlopen on first use, so commands that
 * never use it (`show`, `stats`, `--version`...) do not load those
 * libraries. Each plugin defines one symbol, el_plugin_<name> ('-' in the
 * name becomes '_'), a constant table of function pointers that starts
 * with el_plugin_head_t; the table's type is declared in the header of the
 * module the plugin serves:
 *   otlp-grpc, otlp-http  src/otlp/otlp_plugin.h (OTLP transports)
 *   httpd                 src/web/httpd_plugin.h (control server, web view,
 *                         /metrics)
 *   edit                  src/repl/repl_term.h (the REPL's line editor)
 * A plugin's code calls back into the binary (el_log, el_malloc...): the
 * binary exports its el_* symbols (CMakeLists.txt, EL_EXPORTS) and a
 * plugin binds to them when opened.
 *
 * Where plugins are looked for, in order (the first file that exists is
 * opened; docs/architecture.md "Plugins"):
 *   1. $EL_PLUGIN_DIR, when set and not empty (and then only there);
 *   2. <folder of the running binary>/../lib/eventlog-live (installed);
 *   3. <folder of the running binary> (the build tree).
 * The running binary is found through /proc/self/exe. */
#ifndef EL_PLUGIN_H
#define EL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The start of every plugin's table. */
typedef struct el_plugin_head_s {
  uint32_t abi;     /* the interface version the plugin was built for */
  const char *name; /* the plugin's name, e.g. "otlp-grpc" */
} el_plugin_head_t;

/* Open plugin `name` (e.g. "otlp-grpc") and return its table, whose
 * interface version must equal `abi`. A plugin is opened once per process
 * (RTLD_NOW | RTLD_LOCAL: every symbol it needs is bound then) and stays
 * open; later calls return the same table.
 * what: what the plugin provides, for the error message (e.g. "the gRPC
 *   exporter").
 * On failure returns NULL and writes into err[errsz] one line naming the
 * plugin file(s) tried and dlerror()'s reason (missing file, missing
 * symbol, unresolved dependency) or the interface versions that differ,
 * and how to point EL_PLUGIN_DIR at the right folder. Nothing is logged.
 * Thread: any (serialised by a lock). */
const void *el_plugin_load(const char *name, const char *what, uint32_t abi,
                           char *err, size_t errsz);

#ifdef __cplusplus
}
#endif
#endif /* EL_PLUGIN_H */
