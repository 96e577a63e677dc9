/* report.h: the reducer behind `eventlog-live report` (docs/report.md).
 *
 * The report runs the daemon's default processors (lua/eventlog_live/
 * processors) into a telemetry store, as the daemon does. Instead of OTLP
 * exporters, the store has one in-process exporter (el_rp_exporter) that
 * reduces every batch as it arrives to what one HTML page needs:
 *   - gauges (HeapSize, HeapLive, BlocksSize, MemCurrent/Needed/Returned)
 *     and the cumulative HeapAllocated, per pixel column (min, max, last);
 *   - heap censuses (HeapProfSample): per band (heapProfLabel) its peak and
 *     sum over censuses, and per pixel column the census with the largest
 *     total, kept as its 256 largest bands (the rest summed);
 *   - capability usage spans ("<name> GC" / "<name> Mutator"): per
 *     capability and column the ns running and in GC and the threads that
 *     ran longest; stop-the-world collections (overlapping GC spans of all
 *     capabilities) with a log2 histogram of their pauses and the longest;
 *   - user markers and messages (log records), the first and last few
 *     thousand;
 *   - profile samples (cost-centre stacks, ghc-stack-profiler call stacks)
 *     as a call tree and per-symbol self/total counts.
 * A Lua module (el_rp_lua_register: `eventlog_live.report.native`) lets the
 * report's own script add heap censuses the processors do not produce
 * (-hc, -hb), census boundaries, the threads table, the session, and lets
 * user scripts add sections (lua/eventlog_live/report.lua).
 *
 * Columns: every time axis is cut into buckets of 2^k ns anchored at Unix
 * time 0; when the times seen no longer fit in a reducer's column budget,
 * k grows by one and neighbouring buckets merge (two-level downsampling
 * without knowing the range in advance). So memory is bounded by the
 * column budgets, the number of distinct bands, threads, stacks and
 * symbols (each capped), whatever the length of the input.
 *
 * Times: every timestamp here is Unix ns (el_unix_ns_t), as the telemetry
 * store's; the page shows seconds since the first session's RTS start.
 * Thread: everything runs on the loop thread (the store's exporter is
 * called synchronously by el_tm_store_flush). */
#ifndef EL_REPORT_H
#define EL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/el_common.h"
#include "../telemetry/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lua_State;

/* Telemetry names of the processors whose output the report reads (the
 * names the daemon's configuration gives them: ghc_eventlog_HeapSize, ...).
 * Strings are copied. NULL = that signal is not read. */
typedef struct el_rp_names_s {
  const char *heap_size;        /* gauge, By */
  const char *heap_live;        /* gauge, By */
  const char *blocks_size;      /* gauge, By */
  const char *heap_allocated;   /* cumulative sum per capability, By */
  const char *mem_current;      /* gauge, megablocks */
  const char *mem_needed;       /* gauge, megablocks */
  const char *mem_returned;     /* gauge, megablocks */
  const char *heap_prof_sample; /* gauge per heapProfLabel, By */
  const char *cap_usage;        /* span name prefix: "<p> GC", "<p> Mutator" */
  const char *cc_profile;       /* profile kind of cost-centre samples */
  const char *stack_profile;    /* profile kind of ghc-stack-profiler */
} el_rp_names_t;

typedef struct el_rp_opts_s {
  size_t columns;          /* buckets per chart before it coarsens: 1024..
                              65536, default 2048 (the page shows between
                              half and all of them) */
  size_t timeline_columns; /* the same for the capability timeline,
                              divided among the capabilities (at most
                              EL_RP_TIMELINE_CELLS cells); default 8192 */
  size_t top_bands;        /* heap profile bands drawn (the rest is
                              "other"): 1..50, default 15 */
  el_rp_names_t names;
} el_rp_opts_t;

#define EL_RP_TIMELINE_CELLS ((size_t)1 << 17)

typedef struct el_rp_s el_rp_t;

/* Fill o with the defaults (names NULL: set them). */
void el_rp_opts_init(el_rp_opts_t *o);

/* Create a reducer. o: copied (strings too). Returns 0 and *out, or
 * EL_ENOMEM / EL_EINVAL (a value out of range). Free with el_rp_free. */
int el_rp_new(const el_rp_opts_t *o, el_rp_t **out);

/* Free everything. NULL does nothing. Call after the store that holds the
 * exporter is freed (or no longer flushes). */
void el_rp_free(el_rp_t *rp);

/* The exporter to register on the store (el_tm_store_add_exporter): all
 * four signals; it reduces each batch at once and frees it. ud = rp, no
 * release callback. */
void el_rp_exporter(el_rp_t *rp, el_tm_exporter_t *ex);

/* The current session's clock changed (the host's clock hook,
 * el_host_set_clock_hook, has the arguments): the records given to the
 * reducer from now on (store batches, the Lua module's census and series
 * points) have Unix times converted with start_unix_ns (0: no clock);
 * end_t is the session's largest eventlog time so far (ns). While a
 * session's clock is not settled its records are held (up to
 * RP_HELD_MAX, ~1 M records; then reduced as they are); when it settles
 * they are reduced with their times moved to the session's final clock
 * (eventlog time + its final RTS start), so a live stream dated from the
 * arrival of its bytes until its WALL_CLOCK_TIME came (GHC 9.0 writes it
 * at exit) gets the same times as the recorded file. A session that ends
 * unsettled (no WALL_CLOCK_TIME: a killed GHC 9.0 run) and is followed by
 * another stays held until a later session's clock settles; it is then
 * taken to have ended where the next one started (start = the next
 * one's start - its end_t), as a recorded file's sessions are; so are its
 * place on the axis (spans), its threads' and the header's RTS start, and
 * the header's clock_from becomes "next_session" (as the host names such
 * a session of a recorded file).
 * Only at the end of the input (el_rp_settle) with no later settled
 * clock does it keep its last estimate. Flush the store before each call: the batches it
 * then exports hold the records converted with the previous clock. A
 * reducer never told (unit tests) reduces everything at once. Thread: the
 * loop's. Spec: docs/lua-api.md §3 "The session clock". */
void el_rp_clock(el_rp_t *rp, uint64_t session, el_unix_ns_t start_unix_ns,
                 uint64_t end_t, int settled);

/* The input has ended: reduce what is held with the last session's clock
 * as final. Call after the store's last flush (el_rp_write_html and
 * el_rp_write_json call it too). */
void el_rp_settle(el_rp_t *rp);

/* Make `require("eventlog_live.report.native")` return the reducer's Lua
 * functions in L (package.preload), for lua/eventlog_live/report/main.lua
 * and lua/eventlog_live/report.lua. rp must outlive L's use of them.
 * docs/report.md "Lua API". Returns 0 or EL_ENOMEM. */
int el_rp_lua_register(el_rp_t *rp, struct lua_State *L);

/* What the command read, for the page's header. Strings copied. */
typedef struct el_rp_input_s {
  const char *title;       /* page title; NULL = the input's name */
  const char *input;       /* what was read: a path, "stdin", a socket */
  uint64_t bytes;          /* bytes read and given to the decoder (not
                              those a drain after a stop discarded) */
  uint64_t events;         /* events decoded */
  uint64_t sessions;       /* eventlog headers read */
  uint64_t truncated;      /* sessions cut inside an event */
  uint64_t handler_errors; /* Lua handler errors (counted by the host) */
  double elapsed_s;        /* wall time of the run so far */
} el_rp_input_t;

/* Record the input's description (replaces the previous one). Returns 0
 * or EL_ENOMEM. */
int el_rp_set_input(el_rp_t *rp, const el_rp_input_t *in);

/* Record an input error (e.g. corrupt data at a byte offset: the page
 * shows every error at the top). msg: copied. At most 20 are kept; the
 * rest are counted. */
void el_rp_add_error(el_rp_t *rp, uint64_t offset, const char *msg);

/* Record that a session's bytes end inside an event: at the end of the
 * input (inside = 0: the decoder's EL_ETRUNC with el_diag_t.cut_event, a
 * program stopped mid-write) or where a new stream begins in it (inside
 * = 1: the decoder's warning with cut_event, a cut eventlog and another
 * joined, or a raw tee of connections; the cut event is dropped and the
 * next session read). offset, the byte where the cut event starts; msg,
 * the decoder's diagnostic (copied). The session is the one current
 * (the last told to el_rp_clock; 0 if never told). The page shows a
 * warning for each ("The eventlog ends mid-event at byte N: ...",
 * "Session N ends mid-event at byte B: ..."; everything before was
 * processed; docs/report.md). At most 20 are kept; the rest are
 * counted. */
void el_rp_add_cut(el_rp_t *rp, uint64_t offset, int inside, const char *msg);

/* The scan hook of el_src_consumer_t (src/source/src_consumer.h) for a
 * report: like the host's own scan (el_host_consumer), it finds each
 * session's WALL_CLOCK_TIME, largest time and capabilities in the mapped
 * recorded file buf[0..len) and hands them to h (el_host_set_hints), so
 * the file is dated exactly from its first event; but it decodes the
 * mapping in 8 MiB windows and drops each window's pages after use
 * (madvise MADV_DONTNEED), so a file of any size adds a bounded amount to
 * the peak RSS. buf: the pump's read-only private mapping, borrowed for
 * the call (dropped pages read back from the file if touched again).
 * A file truncated under the mapping gives no hints (the SIGBUS is caught,
 * src/common/el_mapguard.h).
 * Thread: the loop's. Spec: eventlog-format.md §3.5. */
struct el_host_s;
void el_rp_scan(struct el_host_s *h, const uint8_t *buf, size_t len);

/* Write the page: one self-contained HTML document (styles, scripts and
 * data inline, nothing fetched when viewed) to out. Call after the store
 * was flushed for the last time. Returns 0 or a negated errno (write
 * error). */
int el_rp_write_html(el_rp_t *rp, FILE *out);

/* Write only the page's data (the JSON document the page reads;
 * docs/report.md "Data"), e.g. for tests. Returns 0 or a negated errno. */
int el_rp_write_json(el_rp_t *rp, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* EL_REPORT_H */
