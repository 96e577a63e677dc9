/* exp_console.h: the console exporter: one OTLP/JSON line per
 * Export<Signal>ServiceRequest, written to stdout or another FILE*.
 *
 * Each batch is encoded exactly as the network exporters encode it
 * (el_otlp_encode, split at max_message_bytes), and each request is
 * rendered from its serialized bytes, so the console shows what a
 * collector would receive. JSON follows the OTLP/JSON encoding of the OTLP
 * specification (proto3 JSON mapping with OTLP's exceptions):
 *   - field names in lowerCamelCase ("timeUnixNano", "resourceMetrics");
 *   - traceId, spanId and parentSpanId as lower-case hex strings; other
 *     bytes fields as base64;
 *   - 64-bit integers (int64, uint64, fixed64, sfixed64) as decimal
 *     strings; 32-bit integers as numbers; enums as integers;
 *   - fields at their default value (0, "", false, empty list, unset
 *     message) omitted, except members of a oneof, which are written
 *     whenever set (e.g. "asInt":"0", "intValue":"0");
 *   - doubles as numbers, NaN/Infinity as the strings "NaN", "Infinity",
 *     "-Infinity".
 * Spec: OTLP specification, "JSON Protobuf Encoding"; docs/otlp.md. */
#ifndef EL_EXP_CONSOLE_H
#define EL_EXP_CONSOLE_H

#include <signal.h>
#include <stdio.h>

#include "../common/el_arena.h"
#include "../telemetry/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct el_otlp_console_s el_otlp_console_t;

/* Create a console exporter for the signals in the bit set `signals`
 * (1u << el_tm_signal_t).
 * out: where lines go (NULL = stdout); borrowed, must outlive the
 *   exporter; written and flushed on the loop thread inside export().
 * max_message_bytes: request size bound as for the network exporters
 *   (0 = EL_OTLP_DEFAULT_MAX_BYTES).
 * st: store to report drops to (records too large for one request, write
 *   errors); may be NULL.
 * *out_c: free with el_otlp_console_free after the store stopped calling
 *   it. *tm: filled with the el_tm_exporter_t ("console") to give
 *   el_tm_store_add_exporter.
 * Returns 0 or EL_ENOMEM. Thread: loop. */
int el_otlp_console_new(FILE *out, unsigned signals, size_t max_message_bytes,
                        el_tm_store_t *st, el_otlp_console_t **out_c,
                        el_tm_exporter_t *tm);

/* Create a console exporter for every signal on out (NULL = stdout) with
 * the default request bound, register it on st, and hand it to st (freed
 * by el_tm_store_free). *out_c (out_c may be NULL): the exporter,
 * borrowed until st is freed, for el_otlp_console_dropped*. Returns 0 or
 * EL_ENOMEM (nothing registered, *out_c untouched). Thread: loop. Used by
 * `eventlog-live run --output console` and the REPL. */
int el_otlp_console_add(el_tm_store_t *st, FILE *out,
                        el_otlp_console_t **out_c);

/* Render and write from now on on a writer thread, through a queue of at
 * most max_queued bytes of serialized requests, so that neither the
 * rendering nor a reader of out that is slow or has stopped blocks the
 * loop (the daemon on a live source: the observed program must never wait
 * for a reader of our output; docs/otlp.md §5 "Who waits for stdout").
 * to_file says where out goes:
 *  - 0 (a pipe, socket or terminal, whose reader can stop): a request
 *    that does not fit is dropped and counted in the store, with a
 *    warning at most every 10 s; the shutdown waits for the queue at most
 *    its budget (el_otlp_console_shutdown);
 *  - 1 (a regular file or /dev/null, always writable): a request that
 *    does not fit makes the loop wait until it fits, so nothing is dropped
 *    and the input goes at the pace of the rendering (a request larger
 *    than max_queued waits for an empty queue); the shutdown waits for
 *    every line, whatever its budget, unless a signal comes;
 *  - EL_OTLP_CONSOLE_WAIT_READER (2: a recorded file's replay into a pipe,
 *    socket or terminal): as 1, nothing dropped, the replay at the
 *    reader's pace (a slow `| less`), but a signal (*stop, set with
 *    el_otlp_console_set_stop) ends the waits: a request that does not
 *    fit is then dropped and counted, and the shutdown waits at most its
 *    budget; so SIGINT and SIGTERM work however slow the reader.
 * The writer writes fileno(out) with write(2), not through stdio (out is
 * flushed first; nothing else may write out meanwhile), so that the
 * exit's flush of stdout never blocks on a reader that stopped. Into a
 * pipe (a FIFO, whatever to_file) it never blocks in a write and leaves no line
 * cut: a line starts only when the pipe can take all of it (the pipe
 * grown for it, to 1 MiB, when allowed), waiting for the reader
 * meanwhile; a line larger still starts on an empty pipe and goes in
 * pieces, and only it can be cut (docs/otlp.md §5).
 * After a failed write (a closed pipe) every request is dropped and
 * counted, with one warning naming the error. Returns 0, EL_EINVAL (out
 * has no file descriptor) or EL_ENOMEM (c unchanged: it writes
 * synchronously, on the loop thread). Thread: loop, once. */
int el_otlp_console_start_writer(el_otlp_console_t *c, size_t max_queued,
                                 int to_file);

/* el_otlp_console_start_writer's to_file for a recorded file's replay
 * into a reader that can be slow or stop (a pipe, socket or terminal). */
#define EL_OTLP_CONSOLE_WAIT_READER 2

/* The flag that ends the waits of EL_OTLP_CONSOLE_WAIT_READER: nonzero
 * once a SIGINT or SIGTERM came (set by a signal handler; read every
 * 100 ms while the loop waits for room, and by the shutdown). stop lives
 * as long as c. Thread: loop, before the first export. */
void el_otlp_console_set_stop(el_otlp_console_t *c,
                              const volatile sig_atomic_t *stop);

/* The end of the output (the exporter's flush, el_tm_store_shutdown):
 * wait for the writer thread to write what is queued. The wait is
 * bounded by budget_ms (--otlp-shutdown-timeout; < 0 as 0) for a reader
 * that can stop (to_file 0), and not bounded for a file (to_file 1: the
 * budget bounds waiting for a reader or a peer, not CPU work into a file)
 * until *interrupt (NULL: never; the daemon's count of SIGINT/SIGTERM
 * during its final flush) is non-zero: the budget, counted from the call,
 * then applies too. What is left when the wait ends (queued, or in the
 * writer's hands: being rendered, waiting for room in a pipe, or a write
 * that does not return) is given up: counted as dropped, in the store and
 * in
 * el_otlp_console_dropped, with one warning per signal naming the count
 * and the cause ("console: N spans (traces) not written: the shutdown
 * budget of B ms (--otlp-shutdown-timeout) ran out; ..."); nothing is
 * written after it. Without a writer thread: fflush(out). Returns 0, or
 * EL_EEXPORT when something was given up or a write failed. Thread:
 * loop. */
int el_otlp_console_shutdown(el_otlp_console_t *c, int budget_ms,
                             const volatile sig_atomic_t *interrupt);

/* Free the exporter (NULL allowed), first warning of the records it
 * dropped in all, by signal, when any. In async mode the writer thread is
 * joined; when it is busy with a line (rendering it, waiting for room in
 * a pipe, or blocked in a write), that line is given up, the lines still
 * queued are dropped, and the thread is left to the process's exit (c is
 * then not freed).
 * Thread: loop. */
void el_otlp_console_free(el_otlp_console_t *c);

/* Lines written so far (requests rendered). In async mode the writer
 * thread updates it: read it after the flush. */
uint64_t el_otlp_console_lines(const el_otlp_console_t *c);

/* Records of signal sig (el_tm_signal_t) counted as dropped so far: too
 * large, not rendered, a failed write, a full queue, given up at the
 * shutdown. Thread: loop. */
uint64_t el_otlp_console_dropped(const el_otlp_console_t *c, int sig);

/* Of the records counted by el_otlp_console_dropped (every signal), those
 * dropped once a write had failed with EPIPE (the output's reader had
 * gone: `run ... | head`), the failed write's included. `run` does not
 * count them as a loss (docs/exit-codes.md "export losses"). Thread:
 * loop. */
uint64_t el_otlp_console_dropped_closed(const el_otlp_console_t *c);

/* Of the records counted by el_otlp_console_dropped (every signal), those
 * a SIGINT/SIGTERM gave up in mode EL_OTLP_CONSOLE_WAIT_READER (*stop
 * set: dropped for want of room, or left at the shutdown): the user
 * stopped the run, as a closed output's reader did; `run` does not count
 * them as a loss (docs/exit-codes.md). Thread: loop. */
uint64_t el_otlp_console_dropped_stopped(const el_otlp_console_t *c);

/* Before something else writes out on the loop thread (Lua's print() and
 * io.write() into the same stdout): wait until the writer thread has
 * written every line queued so far, so that the output keeps the order of
 * the calls, as when the loop wrote each line itself. Returns at once
 * without a writer thread, in mode 0 (which never waits: the order is
 * then not kept), after a failed write or the shutdown's end,
 * and, in mode EL_OTLP_CONSOLE_WAIT_READER, once *stop is set (checked
 * every 100 ms), so a signal still ends a wait for a reader that does not
 * read. Bytes the other writer leaves in out's stdio buffer are flushed
 * before the next line is queued. c: NULL allowed. Thread: loop. */
void el_otlp_console_sync(el_otlp_console_t *c);

/* Render one serialized Export<Signal>ServiceRequest of signal sig as one
 * line of OTLP/JSON (no trailing newline). bytes: borrowed.
 * Returns a NUL-terminated string to free with el_free, or NULL when the
 * bytes do not decode as that request or memory runs out. Thread: any. */
char *el_otlp_json(el_tm_signal_t sig, const uint8_t *bytes, size_t len);

/* As el_otlp_json, with the memory of the render (the unpacked request,
 * the JSON tree) taken from arena a, which is reset before returning: a
 * renderer of many requests passes the same arena each time, whose chunks
 * are then reused instead of being allocated and paged in afresh for
 * every request (el_otlp_json's own arena is freed each call). The
 * returned string is not in a. Thread: any; a is used by one thread at a
 * time. */
char *el_otlp_json_in(el_arena_t *a, el_tm_signal_t sig, const uint8_t *bytes,
                      size_t len);

#ifdef __cplusplus
}
#endif
#endif /* EL_EXP_CONSOLE_H */
