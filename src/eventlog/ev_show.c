/* ev_show.c: `ghc-events show` output (ghc-events 0.21, RawTime).
 *
 * Implements the text templates of spec/eventlog-format.md §6.4 as the
 * reference files in tests/data/eventlogs/ show them:
 *   "Event Types:\n" "<id>: <desc> (size <n>|variable)\n"... "\n"
 *   "Events:\n" then "<t>: [cap <c>: ]<text>\n" for every event,
 * stable-sorted by timestamp. Each event is formatted into one text arena
 * when it arrives, with a (timestamp, line) record; past the sort memory
 * budget the records are ordered and spilled as a sorted run to a
 * temporary file ("sorting in bounded memory" below); finish merges and
 * writes the lines in large write(2) calls.
 *
 * Deviations (docs/eventlog.md): invalid UTF-8 is printed as is (in
 * Haskell `show` lists it becomes U+FFFD) where ghc-events stops decoding;
 * unknown breakdowns, message tags and stop statuses get a placeholder
 * instead of an error; later sessions' events follow the first session's
 * (only its type table is printed). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/el_arena.h"
#include "../common/el_fmt.h"
#include "../common/el_grow.h"
#include "../common/el_utf8.h"
#include "eventlog_internal.h"

typedef struct {
  uint64_t t;       /* timestamp */
  const char *line; /* in the text arena */
  uint32_t len;     /* line length incl. '\n', without the "<t>: " prefix */
  uint32_t pad;
} rec_t;

typedef struct {
  uint64_t off, len; /* a sorted run: where in the spill file */
} srun_t;

struct el_ev_show_s {
  FILE *out;
  el_ev_decoder_t *dec;
  char *hdr;           /* "Event Types:..." text of the first session */
  size_t hdrlen;
  el_arena_t txt;      /* event lines (chunks never move), each with 64
                          bytes of slack after it in its chunk */
  rec_t *rec;
  size_t nrec, rcap;
  const el_ev_header_t *h;  /* current session header */
  int failed;               /* out of memory */
  /* sorting in bounded memory: */
  size_t budget;      /* bytes of lines and records held at most */
  int spill_fd;       /* the temporary file of sorted runs, or -1 */
  uint64_t spill_end; /* bytes written to it */
  srun_t *runs;       /* the sorted runs in it, in stream order */
  size_t nruns, runcap;
  char *wbuf; /* IOBUF bytes to the spill file */
  size_t wlen;
  int ioerr;                /* a negated errno: the spill file failed */
  char spill_dir[512];      /* its directory, for messages */
  el_diag_t corrupt;        /* first corruption the decoder recovered from */
  el_diag_t diag;
  el_ev_warn_fn warn; /* el_ev_show_set_warn */
  void *warn_ud;
};

/* {====== writing ======} */

static char *put_s(char *w, const char *s) {
  size_t n = strlen(s);
  memcpy(w, s, n);
  return w + n;
}

static char *put_v(char *w, el_strview_t s) {
  if (s.len)
    memcpy(w, s.p, s.len);
  return w + s.len;
}

#define S(lit) (memcpy(w, lit, sizeof(lit) - 1), w += sizeof(lit) - 1)
#define U(x) (w = el_fmt_u64(w, (x)))
#define X(x) (w = el_fmt_x64(w, (x)))
#define V(x) (w = put_v(w, (x)))

/* {====== Haskell `show` of strings (for args/env lists) ======} */

/* Decode one UTF-8 code point at p (n bytes left); *used gets its length.
 * Invalid sequences give U+FFFD and consume one byte. */
static uint32_t utf8_next(const uint8_t *p, size_t n, size_t *used) {
  size_t len = el_utf8_len(p, n);
  *used = len ? len : 1;
  return len ? el_utf8_decode(p, len) : 0xFFFD;
}

static const char *const ascii_names[32] = {
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "a",  "b",  "t",  "n",
    "v",   "f",   "r",   "SO",  "SI",  "DLE", "DC1", "DC2", "DC3", "DC4",
    "NAK", "SYN", "ETB", "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",
    "US"};

/* Append Haskell's `show` of the string s (with quotes). */
static char *put_hs_string(char *w, const uint8_t *s, size_t n) {
  *w++ = '"';
  size_t i = 0;
  while (i < n) {
    size_t used;
    uint32_t c = utf8_next(s + i, n - i, &used);
    i += used;
    if (c > 127) {
      *w++ = '\\';
      w = el_fmt_u64(w, c);
      if (i < n && s[i] >= '0' && s[i] <= '9')
        S("\\&");
    } else if (c == 127) {
      S("\\DEL");
    } else if (c == '\\') {
      S("\\\\");
    } else if (c == '"') {
      S("\\\"");
    } else if (c >= 32) {
      *w++ = (char)c;
    } else {
      *w++ = '\\';
      w = put_s(w, ascii_names[c]);
      if (c == 14 && i < n && s[i] == 'H')
        S("\\&");
    }
  }
  *w++ = '"';
  return w;
}

/* Haskell `show` of the list of NUL-separated strings (§3.1): trailing
 * NULs are dropped, then the rest is split on NUL. */
static char *put_hs_strlist(char *w, el_strview_t v) {
  const uint8_t *p = (const uint8_t *)v.p;
  size_t n = v.len;
  while (n && p[n - 1] == 0)
    n--;
  *w++ = '[';
  size_t start = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || p[i] == 0) {
      if (start)
        *w++ = ',';
      w = put_hs_string(w, p + start, i - start);
      start = i + 1;
    }
  }
  *w++ = ']';
  return w;
}

/* Haskell isPrint, approximated: ASCII graphic and space, and every code
 * point from U+00A0 up except a few format characters. */
static int hs_is_print(uint32_t c) {
  if (c < 0x20 || (c >= 0x7F && c < 0xA0))
    return 0;
  if (c == 0xAD || (c >= 0x200B && c <= 0x200F) || c == 0x2028 ||
      c == 0x2029 || (c >= 0x202A && c <= 0x202E) ||
      (c >= 0x2060 && c <= 0x2064) || c == 0xFEFF ||
      (c >= 0xE000 && c <= 0xF8FF) || c == 0xFFFE || c == 0xFFFF)
    return 0;
  return 1;
}

/* USER_BINARY_MSG: lenient UTF-8 decode, unprintables as '.'. */
static char *put_binary(char *w, el_strview_t v) {
  const uint8_t *p = (const uint8_t *)v.p;
  size_t i = 0;
  while (i < v.len) {
    size_t used;
    uint32_t c = utf8_next(p + i, v.len - i, &used);
    if (c == 0xFFFD && used == 1 && p[i] >= 0x80) {
      *w++ = '.';
    } else if (!hs_is_print(c)) {
      *w++ = '.';
    } else {
      memcpy(w, p + i, used);
      w += used;
    }
    i += used;
  }
  return w;
}

/* {====== event texts ======} */

/* A stop-status text (the hot path: one per STOP_THREAD), copied with a
 * constant size; callers reserve room. */
static char *put_status(char *w, uint64_t s) {
  const char *t = el__ev_stop_status_text(s);
  memcpy(w, t, EL__EV_STATUS_TEXT);
  return w + strlen(t);
}

static const char *msg_tag(uint64_t tag) {
  static const char *const t[] = {"Ready",   "NewPE",  "PETIDS", "Finish",
                                  "FailPE",  "RFork",  "Connect",
                                  "DataMes", "Head",   "Constr", "Part",
                                  "Terminate", "Packet"};
  return tag >= 0x50 && tag - 0x50 < EL_ARRAY_LEN(t) ? t[tag - 0x50]
                                                      : "Unknown";
}

static char *put_stack(char *w, const el_ev_value_t *v) {
  const uint8_t *p = (const uint8_t *)v->s.p;
  for (uint64_t i = 0; i < v->u; i++) {
    if (i)
      S(", ");
    U(el_ev_be32(p + 4 * i));
  }
  return w;
}

/* Format the body of a known event, by groups of types (each returns NULL
 * for a type not in its group). One line per case: the layout is a table
 * of the texts, kept out of clang-format. */
// clang-format off
/* Types: threads, GC, sparks threads, messages, start-up (the most frequent first). */
static char *body_threads(char *w, const el_ev_event_t *e) {
  const el_ev_value_t *v = e->v;
  switch (e->type) {
  case EL_EV_CREATE_THREAD: S("creating thread "); U(v[0].u); break;
  case EL_EV_RUN_THREAD: S("running thread "); U(v[0].u); break;
  case EL_EV_STOP_THREAD:
    S("stopping thread "); U(v[0].u); S(" (");
    if (v[1].u == EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE) {
      S("blocked on black hole owned by thread "); U(v[2].u);
    } else {
      w = put_status(w, v[1].u);
      if (v[1].u == EL_EV_STATUS_STACK_OVERFLOW) { S(", size "); U(v[2].u); }
    }
    S(")");
    break;
  case EL_EV_THREAD_RUNNABLE: S("thread "); U(v[0].u); S(" is runnable"); break;
  case EL_EV_MIGRATE_THREAD: S("migrating thread "); U(v[0].u); S(" to cap "); U(v[1].u); break;
  case EL_EV_SHUTDOWN: S("shutting down"); break;
  case EL_EV_THREAD_WAKEUP: S("waking up thread "); U(v[0].u); S(" on cap "); U(v[1].u); break;
  case EL_EV_GC_START: S("starting GC"); break;
  case EL_EV_GC_END: S("finished GC"); break;
  case EL_EV_REQUEST_SEQ_GC: S("requesting sequential GC"); break;
  case EL_EV_REQUEST_PAR_GC: S("requesting parallel GC"); break;
  case EL_EV_CREATE_SPARK_THREAD: S("creating spark thread "); U(v[0].u); break;
  case EL_EV_LOG_MSG: case EL_EV_USER_MSG: V(v[0].s); break;
  case EL_EV_STARTUP: S("startup: "); U(v[0].u); S(" capabilities"); break;
  case EL_EV_BLOCK_MARKER:
    S("event block: cap "); U(v[2].u); S(", end time: "); U(v[1].u);
    S("\n");
    break;
  case EL_EV_GC_IDLE: S("GC idle"); break;
  case EL_EV_GC_WORK: S("GC working"); break;
  case EL_EV_GC_DONE: S("GC done"); break;
  case EL_EV_VERSION: S("compiler version is "); V(v[0].s); break;
  case EL_EV_PROGRAM_INVOCATION: S("program invocation: "); V(v[0].s); break;
  default:
    return NULL;
  }
  return w;
}

/* Types: capsets, process, capabilities, sparks. */
static char *body_capsets(char *w, const el_ev_event_t *e) {
  const el_ev_value_t *v = e->v;
  switch (e->type) {
  case EL_EV_CAPSET_CREATE:
    S("created capset "); U(v[0].u); S(" of type ");
    w = put_s(w, v[1].u == 1   ? "CapsetCustom"
                 : v[1].u == 2 ? "CapsetOsProcess"
                 : v[1].u == 3 ? "CapsetClockDomain"
                               : "CapsetUnknown");
    break;
  case EL_EV_CAPSET_DELETE: S("deleted capset "); U(v[0].u); break;
  case EL_EV_CAPSET_ASSIGN_CAP: S("assigned cap "); U(v[1].u); S(" to capset "); U(v[0].u); break;
  case EL_EV_CAPSET_REMOVE_CAP: S("removed cap "); U(v[1].u); S(" from capset "); U(v[0].u); break;
  case EL_EV_RTS_IDENTIFIER:
    S("capset "); U(v[0].u); S(": RTS version \""); V(v[1].s); S("\"");
    break;
  case EL_EV_PROGRAM_ARGS:
    S("capset "); U(v[0].u); S(": args: "); w = put_hs_strlist(w, v[1].s);
    break;
  case EL_EV_PROGRAM_ENV:
    S("capset "); U(v[0].u); S(": env: "); w = put_hs_strlist(w, v[1].s);
    break;
  case EL_EV_OSPROCESS_PID: S("capset "); U(v[0].u); S(": pid "); U(v[1].u); break;
  case EL_EV_OSPROCESS_PPID: S("capset "); U(v[0].u); S(": parent pid "); U(v[1].u); break;
  case EL_EV_SPARK_COUNTERS:
    S("spark stats: "); U(v[0].u); S(" created, "); U(v[3].u);
    S(" converted, "); U(v[6].u); S(" remaining ("); U(v[2].u);
    S(" overflowed, "); U(v[1].u); S(" dud, "); U(v[4].u); S(" GC'd, ");
    U(v[5].u); S(" fizzled)");
    break;
  case EL_EV_SPARK_CREATE: S("spark created"); break;
  case EL_EV_SPARK_DUD: S("dud spark discarded"); break;
  case EL_EV_SPARK_OVERFLOW: S("overflowed spark discarded"); break;
  case EL_EV_SPARK_RUN: S("running a local spark"); break;
  case EL_EV_SPARK_STEAL: S("stealing a spark from cap "); U(v[0].u); break;
  case EL_EV_SPARK_FIZZLE: S("spark fizzled"); break;
  case EL_EV_SPARK_GC: S("spark GCed"); break;
  case EL_EV_INTERN_STRING:
    S("Interned string: \""); V(v[0].s); S("\" with id "); U(v[1].u);
    break;
  case EL_EV_WALL_CLOCK_TIME:
    S("capset "); U(v[0].u); S(": wall clock time "); U(v[1].u); S("s ");
    U(v[2].u); S("ns (unix epoch)");
    break;
  case EL_EV_THREAD_LABEL:
    S("thread "); U(v[0].u); S(" has label \""); V(v[1].s); S("\"");
    break;
  case EL_EV_CAP_CREATE: S("created cap "); U(v[0].u); break;
  case EL_EV_CAP_DELETE: S("deleted cap "); U(v[0].u); break;
  case EL_EV_CAP_DISABLE: S("disabled cap "); U(v[0].u); break;
  case EL_EV_CAP_ENABLE: S("enabled cap "); U(v[0].u); break;
  default:
    return NULL;
  }
  return w;
}

/* Types: heap, GC statistics, tasks, markers, Eden. */
static char *body_heap(char *w, const el_ev_event_t *e) {
  const el_ev_value_t *v = e->v;
  switch (e->type) {
  case EL_EV_HEAP_ALLOCATED:
    S("allocated on heap capset "); U(v[0].u); S(": "); U(v[1].u);
    S(" total bytes till now");
    break;
  case EL_EV_HEAP_SIZE:
    S("size of heap capset "); U(v[0].u); S(": "); U(v[1].u); S(" bytes");
    break;
  case EL_EV_HEAP_LIVE:
    S("live data in heap capset "); U(v[0].u); S(": "); U(v[1].u);
    S(" bytes");
    break;
  case EL_EV_HEAP_INFO_GHC:
    S("heap stats for heap capset "); U(v[0].u); S(": generations ");
    U(v[1].u); S(", "); U(v[2].u); S(" bytes max heap size, "); U(v[3].u);
    S(" bytes alloc area size, "); U(v[4].u); S(" bytes mblock size, ");
    U(v[5].u); S(" bytes block size");
    break;
  case EL_EV_GC_STATS_GHC:
    S("GC stats for heap capset "); U(v[0].u); S(": generation "); U(v[1].u);
    S(", "); U(v[2].u); S(" bytes copied, "); U(v[3].u); S(" bytes slop, ");
    U(v[4].u); S(" bytes fragmentation, "); U(v[5].u); S(" par threads, ");
    U(v[6].u); S(" bytes max par copied, "); U(v[7].u);
    S(" bytes total par copied");
    if (e->layout == 0) { S(", "); U(v[8].u); S(" bytes balanced par copied"); }
    break;
  case EL_EV_GC_GLOBAL_SYNC: S("all caps stopped for GC"); break;
  case EL_EV_TASK_CREATE:
    S("task 0x"); X(v[0].u); S(" created on cap "); U(v[1].u);
    S(" with OS kernel thread "); U(v[2].u);
    break;
  case EL_EV_TASK_MIGRATE:
    S("task 0x"); X(v[0].u); S(" migrated from cap "); U(v[1].u);
    S(" to cap "); U(v[2].u);
    break;
  case EL_EV_TASK_DELETE: S("task 0x"); X(v[0].u); S(" deleted"); break;
  case EL_EV_USER_MARKER: S("marker: "); V(v[0].s); break;
  case EL_EV_EDEN_START_RECEIVE: S("starting to receive"); break;
  case EL_EV_EDEN_END_RECEIVE: S("stop receiving"); break;
  case EL_EV_CREATE_PROCESS: S("creating process "); U(v[0].u); break;
  case EL_EV_KILL_PROCESS: S("killing process "); U(v[0].u); break;
  case EL_EV_ASSIGN_THREAD_TO_PROCESS:
    S("assigning thread "); U(v[0].u); S(" to process "); U(v[1].u);
    break;
  case EL_EV_CREATE_MACHINE: S("creating machine "); U(v[0].u); S(" at "); U(v[1].u); break;
  case EL_EV_KILL_MACHINE: S("killing machine "); U(v[0].u); break;
  case EL_EV_SEND_MESSAGE:
    S("sending message with tag "); w = put_s(w, msg_tag(v[0].u));
    S(" from process "); U(v[1].u); S(", thread "); U(v[2].u);
    S(" to machine "); U(v[3].u); S(", process "); U(v[4].u);
    S(" on inport "); U(v[5].u);
    break;
  case EL_EV_RECEIVE_MESSAGE:
    S("receiving message with tag "); w = put_s(w, msg_tag(v[0].u));
    S(" at process "); U(v[1].u); S(", inport "); U(v[2].u);
    S(" from machine "); U(v[3].u); S(", process "); U(v[4].u);
    S(", thread "); U(v[5].u); S(" with size "); U(v[6].u);
    break;
  case EL_EV_SEND_RECEIVE_LOCAL_MESSAGE:
    S("sending/receiving message with tag "); w = put_s(w, msg_tag(v[0].u));
    S(" from process "); U(v[1].u); S(", thread "); U(v[2].u);
    S(" to process "); U(v[3].u); S(" on inport "); U(v[4].u);
    break;
  default:
    return NULL;
  }
  return w;
}

/* Types: memory, Mercury, perf events. */
static char *body_mercury(char *w, const el_ev_event_t *e) {
  const el_ev_value_t *v = e->v;
  switch (e->type) {
  case EL_EV_MEM_RETURN:
    S("memory returned (mblocks): current("); U(v[1].u); S(") needed(");
    U(v[2].u); S(") returned("); U(v[3].u); S(")");
    break;
  case EL_EV_BLOCKS_SIZE:
    S("blocks size of heap capset "); U(v[0].u); S(": "); U(v[1].u);
    S(" bytes");
    break;
  case EL_EV_MER_START_PAR_CONJUNCTION:
    S("Start a parallel conjunction 0x"); X(v[0].u); S(", static_id: ");
    U(v[1].u);
    break;
  case EL_EV_MER_STOP_PAR_CONJUNCTION: S("End par conjunction: 0x"); X(v[0].u); break;
  case EL_EV_MER_STOP_PAR_CONJUNCT: S("End par conjunct: 0x"); X(v[0].u); break;
  case EL_EV_MER_CREATE_SPARK:
    S("Create spark for conjunction: 0x"); X(v[0].u); S(" spark: 0x");
    X(v[1].u);
    break;
  case EL_EV_MER_FUT_CREATE: S("Create future 0x"); X(v[0].u); S(" named "); U(v[1].u); break;
  case EL_EV_MER_FUT_WAIT_NOSUSPEND: S("Wait didn't suspend for future: 0x"); X(v[0].u); break;
  case EL_EV_MER_FUT_WAIT_SUSPENDED: S("Wait suspended on future: 0x"); X(v[0].u); break;
  case EL_EV_MER_FUT_SIGNAL: S("Signaled future 0x"); X(v[0].u); break;
  case EL_EV_MER_LOOKING_FOR_GLOBAL_CONTEXT: S("Looking for global thread to resume"); break;
  case EL_EV_MER_WORK_STEALING: S("Trying to steal a spark"); break;
  case EL_EV_MER_RELEASE_CONTEXT: S("Releasing thread "); U(v[0].u); S(" to the free pool"); break;
  case EL_EV_MER_ENGINE_SLEEPING: S("Capability going to sleep"); break;
  case EL_EV_MER_LOOKING_FOR_LOCAL_SPARK: S("Looking for a local spark to execute"); break;
  case EL_EV_MER_CALLING_MAIN: S("About to call the program entry point"); break;
  case EL_EV_PERF_NAME:
    S("perf event "); U(v[0].u); S(" named \""); V(v[1].s); S("\"");
    break;
  case EL_EV_PERF_COUNTER:
    S("perf event counter "); U(v[0].u); S(" incremented by ");
    U(v[2].u + 1); S(" in OS thread "); U(v[1].u);
    break;
  case EL_EV_PERF_TRACEPOINT:
    S("perf event tracepoint "); U(v[0].u); S(" reached in OS thread ");
    U(v[1].u);
    break;
  default:
    return NULL;
  }
  return w;
}

/* Types: profiling, IPE, binary messages. */
static char *body_prof(char *w, const el_ev_event_t *e) {
  const el_ev_value_t *v = e->v;
  switch (e->type) {
  case EL_EV_HEAP_PROF_BEGIN: {
    S("start heap profiling "); U(v[0].u); S(" at sampling period ");
    U(v[1].u); S(" broken down by "); w = put_s(w, el__ev_breakdown_text(v[2].u));
    int any = 0;
    for (int i = 3; i < 10; i++)
      if (v[i].s.len) {
        if (!any)
          S(" filtered by ");
        any = 1;
        V(v[i].s);
        S(", ");
      }
    break;
  }
  case EL_EV_HEAP_PROF_COST_CENTRE:
    S("cost centre "); U(v[0].u); S(" "); V(v[1].s); S(" in "); V(v[2].s);
    S(" at "); V(v[3].s);
    if (v[4].u & 1)
      S(" CAF");
    break;
  case EL_EV_HEAP_PROF_SAMPLE_BEGIN: S("start heap prof sample "); U(v[0].u); break;
  case EL_EV_HEAP_PROF_SAMPLE_COST_CENTRE:
    S("heap prof sample "); U(v[0].u); S(", residency "); U(v[1].u);
    S(", cost centre stack "); w = put_stack(w, &v[3]);
    break;
  case EL_EV_HEAP_PROF_SAMPLE_STRING:
    S("heap prof sample "); U(v[0].u); S(", residency "); U(v[1].u);
    S(", label "); V(v[2].s);
    break;
  case EL_EV_HEAP_PROF_SAMPLE_END: S("end prof sample "); U(v[0].u); break;
  case EL_EV_HEAP_BIO_PROF_SAMPLE_BEGIN:
    S("start heap prof sample "); U(v[0].u); S(" at time "); U(v[1].u);
    break;
  case EL_EV_PROF_SAMPLE_COST_CENTRE:
    S("cap no "); U((uint16_t)v[0].u); S(", prof sample "); U(v[1].u);
    S(", cost centre stack "); w = put_stack(w, &v[3]);
    break;
  case EL_EV_PROF_BEGIN:
    S("start time profiling, tick interval "); U(v[0].u); S(" (ns)");
    break;
  case EL_EV_IPE: {
    uint64_t cd = 0;
    for (size_t i = 0; i < v[2].s.len; i++) {
      char c = v[2].s.p[i];
      if (c < '0' || c > '9')
        break;
      cd = cd * 10 + (uint64_t)(c - '0');
    }
    S("Info Table: "); X(v[0].u); S(":"); U(cd); S(":"); V(v[1].s);
    S(" - "); V(v[6].s);
    break;
  }
  case EL_EV_USER_BINARY_MSG: S("binary message "); w = put_binary(w, v[0].s); break;
  default:
    return NULL;
  }
  return w;
}

/* Types: the non-moving GC, ticky. */
static char *body_gc_ticky(char *w, const el_ev_event_t *e) {
  const el_ev_value_t *v = e->v;
  switch (e->type) {
  case EL_EV_CONC_MARK_BEGIN: S("concurrent mark began"); break;
  case EL_EV_CONC_MARK_END:
    S("concurrent mark ended: marked "); U(v[0].u); S(" objects");
    break;
  case EL_EV_CONC_SYNC_BEGIN: S("post-mark synchronization began"); break;
  case EL_EV_CONC_SYNC_END: S("post-mark synchronization ended"); break;
  case EL_EV_CONC_SWEEP_BEGIN: S("concurrent sweep began"); break;
  case EL_EV_CONC_SWEEP_END: S("concurrent sweep ended"); break;
  case EL_EV_CONC_UPD_REM_SET_FLUSH: S("update remembered set flushed by "); U(v[0].u); break;
  case EL_EV_NONMOVING_HEAP_CENSUS:
    S("nonmoving heap census "); U(v[0].u); S(": "); U(v[1].u);
    S(" active segments, "); U(v[2].u); S(" filled segments, ");
    U(v[3].u); S(" live blocks");
    break;
  case EL_EV_TICKY_COUNTER_DEF:
    S("ticky counter definition "); U(v[0].u); S(", arity: "); U(v[1].u);
    S(", def kinds: "); V(v[2].s); S(", name: "); V(v[3].s);
    S(", itbl: "); X(v[4].u);
    break;
  case EL_EV_TICKY_COUNTER_SAMPLE:
    S("ticky counter sample "); U(v[0].u); S(": entry count: "); U(v[1].u);
    S(", "); U(v[2].u); S(" allocs, "); U(v[3].u); S(" allocd");
    break;
  case EL_EV_TICKY_COUNTER_BEGIN_SAMPLE: S("ticky begin counter sample"); break;
  default:
    return NULL;
  }
  return w;
}

// clang-format on

/* Format the body of a known event; returns NULL if the type has no
 * template (printed like an unknown event: its description). */
static char *body(char *w, const el_ev_event_t *e) {
  char *r;
  if ((r = body_threads(w, e)) || (r = body_capsets(w, e)) ||
      (r = body_heap(w, e)) || (r = body_mercury(w, e)) ||
      (r = body_prof(w, e)))
    return r;
  return body_gc_ticky(w, e);
}

/* {====== sink ======} */

#define CHUNK_BYTES ((size_t)16 << 20)
#define SORT_MEMORY_DEFAULT ((size_t)64 << 20)
#define LINE_SLACK 64   /* lines are copied 64 bytes at a time */

static int on_header(void *ud, const el_ev_header_t *h) {
  el_ev_show_t *s = ud;
  s->h = h;
  if (s->hdr)
    return 0; /* only the first session's table is printed */
  size_t cap = 32;
  for (size_t i = 0; i < h->ndecls; i++)
    cap += h->decls[i].desc.len + 40;
  s->hdr = el_malloc(cap);
  if (!s->hdr) {
    s->failed = 1;
    return 1;
  }
  char *w = s->hdr;
  S("Event Types:\n");
  for (size_t i = 0; i < h->ndecls; i++) {
    U(h->decls[i].id);
    S(": ");
    V(h->decls[i].desc);
    S(" (size ");
    if (h->decls[i].size == EL_EV_VARIABLE)
      S("variable");
    else
      U(h->decls[i].size);
    S(")\n");
  }
  S("\nEvents:\n");
  s->hdrlen = (size_t)(w - s->hdr);
  return 0;
}

/* Corruption the decoder skipped over (a cut block, §4.6) still makes the
 * command fail at the end, like ghc-events would: the first is kept (the
 * status of finish). Every warning, corruption included, goes to the warn
 * hook as it comes, so that the parts are said in byte order. */
static void on_warning(void *ud, const el_diag_t *d) {
  el_ev_show_t *s = ud;
  if (d->code && !s->corrupt.code)
    s->corrupt = *d;
  if (s->warn)
    s->warn(s->warn_ud, d);
}

static int spill_run(el_ev_show_t *s);

static int on_event(void *ud, const el_ev_event_t *e) {
  el_ev_show_t *s = ud;
  char *start = el_arena_reserve(
      &s->txt, 16 * (size_t)e->payload_len + 256 + LINE_SLACK);
  if (!start || el_grow(&s->rec, &s->rcap, s->nrec + 1, sizeof *s->rec)) {
    s->failed = 1;
    return 1;
  }
  /* The "<t>: " prefix is written at output time from the record. */
  char *w = start;
  if (e->cap != EL_EV_NO_CAP) {
    S("cap ");
    U(e->cap);
    S(": ");
  }
  char *b = e->known ? body(w, e) : NULL;
  if (b)
    w = b;
  else
    V(decl_desc(s->dec, e->type));
  *w++ = '\n';
  rec_t *r = &s->rec[s->nrec++];
  r->t = e->t_ns;
  r->line = start;
  r->len = (uint32_t)(w - start);
  el_arena_commit(&s->txt, r->len);
  if (s->txt.bytes + s->rcap * sizeof *s->rec >= s->budget) {
    int rc = spill_run(s);
    if (rc == EL_ENOMEM)
      s->failed = 1;
    return rc != 0;
  }
  return 0;
}

/* {====== public ======} */

el_ev_show_t *el_ev_show_new(FILE *out) {
  el_ev_show_t *s = el_calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->out = out;
  s->txt.chunk_bytes = CHUNK_BYTES;
  s->budget = SORT_MEMORY_DEFAULT;
  s->spill_fd = -1;
  el_ev_sink_t sink = {.ud = s, .on_header = on_header,
                       .on_event = on_event, .on_warning = on_warning};
  s->dec = el_ev_decoder_new(&sink);
  if (!s->dec) {
    el_ev_show_free(s);
    return NULL;
  }
  s->diag.event_type = -1;
  return s;
}

void el_ev_show_free(el_ev_show_t *s) {
  if (!s)
    return;
  el_ev_decoder_free(s->dec);
  el_free(s->hdr);
  el_arena_free(&s->txt);
  el_free(s->rec);
  el_free(s->runs);
  el_free(s->wbuf);
  if (s->spill_fd >= 0)
    close(s->spill_fd);
  el_free(s);
}

int el_ev_show_set_sort_memory(el_ev_show_t *s, size_t bytes) {
  if (bytes < ((size_t)1 << 10) || s->nrec || s->nruns)
    return EL_EINVAL;
  s->budget = bytes;
  /* Lines are held in chunks: a few per budget, not one far larger. */
  size_t chunk = bytes / 4 < CHUNK_BYTES ? bytes / 4 : CHUNK_BYTES;
  s->txt.chunk_bytes = chunk < ((size_t)64 << 10) ? (size_t)64 << 10 : chunk;
  return 0;
}

void el_ev_show_set_warn(el_ev_show_t *s, el_ev_warn_fn fn, void *ud) {
  s->warn = fn;
  s->warn_ud = ud;
}

void el_ev_show_reset(el_ev_show_t *s) { el_ev_decoder_reset(s->dec); }

int el_ev_show_set_opts(el_ev_show_t *s, unsigned opts) {
  return el_ev_decoder_set_opts(s->dec, opts);
}

int el_ev_show_feed(el_ev_show_t *s, const uint8_t *buf, size_t len) {
  int rc = el_ev_decoder_feed(s->dec, buf, len);
  if (s->failed) {
    s->diag.code = EL_ENOMEM;
    snprintf(s->diag.msg, sizeof s->diag.msg, "out of memory");
    return EL_ENOMEM;
  }
  if (s->ioerr)
    return s->ioerr; /* the diag was set by spill_fail */
  if (rc)
    s->diag = *el_ev_decoder_diag(s->dec);
  return rc;
}

/* {====== sorting in bounded memory ======}
 *
 * Output order: the records stable-sorted by timestamp. The records held
 * in memory are ordered by a stable k-way merge of their natural runs
 * (maximal stretches with non-decreasing timestamps, in stream order):
 * the events of a capability block are in time order, so real logs have
 * few runs (e.g. 220 for 727k events) and one heap pass replaces a full
 * sort. When the lines and records held reach the sort memory budget
 * (el_ev_show_set_sort_memory), they are written out in that order as a
 * sorted run to an unlinked temporary file, and memory is reused. At the
 * end the runs are merged (at most FANIN at a time; more make extra
 * passes into longer runs), ties going to the earlier run. Each run is a
 * stretch of the stream, so this is the same stable sort: the output is
 * identical whatever the budget. */

#define FANIN 64     /* runs merged at once */
#define SPILL_REC 12 /* a spilled record: t (8 bytes), len (4), the line */
#define IOBUF ((size_t)1 << 20)

/* A min-heap of source indexes on (key[i], i): ties to the lower index. */
typedef struct {
  uint32_t *h;
  size_t n;
  const uint64_t *key;
} heap_t;

static int heap_less(const heap_t *q, uint32_t a, uint32_t b) {
  uint64_t ta = q->key[a], tb = q->key[b];
  return ta < tb || (ta == tb && a < b);
}

static void heap_down(heap_t *q, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, best = i;
    if (l < q->n && heap_less(q, q->h[l], q->h[best]))
      best = l;
    if (l + 1 < q->n && heap_less(q, q->h[l + 1], q->h[best]))
      best = l + 1;
    if (best == i)
      return;
    uint32_t t = q->h[i];
    q->h[i] = q->h[best];
    q->h[best] = t;
    i = best;
  }
}

/* Heap over sources 0..n-1 whose keys are set. */
static void heap_build(heap_t *q, size_t n) {
  q->n = n;
  for (size_t i = 0; i < n; i++)
    q->h[i] = (uint32_t)i;
  for (size_t i = n / 2; i-- > 0;)
    heap_down(q, i);
}

/* The top source advanced (its key changed) or, gone, is dropped. */
static void heap_next(heap_t *q, int gone) {
  if (gone)
    q->h[0] = q->h[--q->n];
  heap_down(q, 0);
}

/* The natural runs of the records in memory, merged. */
typedef struct {
  const rec_t *rec;
  size_t *cur, *end; /* per run: next record, one past its last */
  uint64_t *key;     /* per run: t of its next record */
  heap_t q;
} merge_t;

static void merge_free(merge_t *m) {
  el_free(m->cur);
  el_free(m->end);
  el_free(m->key);
  el_free(m->q.h);
}

/* Set up the merge of a[0..n); returns 0 or EL_ENOMEM. */
static int merge_init(merge_t *m, const rec_t *a, size_t n) {
  size_t nruns = n ? 1 : 0;
  for (size_t i = 1; i < n; i++)
    nruns += a[i].t < a[i - 1].t;
  size_t k = nruns ? nruns : 1;
  memset(m, 0, sizeof *m);
  m->rec = a;
  m->cur = el_malloc(k * sizeof *m->cur);
  m->end = el_malloc(k * sizeof *m->end);
  m->key = el_malloc(k * sizeof *m->key);
  m->q.h = el_malloc(k * sizeof *m->q.h);
  if (!m->cur || !m->end || !m->key || !m->q.h) {
    merge_free(m);
    return EL_ENOMEM;
  }
  size_t start = 0, r = 0;
  for (size_t i = 1; i <= n; i++)
    if (i == n || a[i].t < a[i - 1].t) {
      m->cur[r] = start;
      m->end[r] = i;
      m->key[r++] = a[start].t;
      start = i;
    }
  m->q.key = m->key;
  heap_build(&m->q, r);
  return 0;
}

/* The next record in output order, or NULL at the end. */
static const rec_t *merge_next(merge_t *m) {
  if (!m->q.n)
    return NULL;
  uint32_t r = m->q.h[0];
  const rec_t *out = &m->rec[m->cur[r]++];
  int gone = m->cur[r] == m->end[r];
  if (!gone)
    m->key[r] = m->rec[m->cur[r]].t;
  heap_next(&m->q, gone);
  return out;
}

/* {====== the spill file ======} */

/* The first failure of the spill file: kept as the result (a negated
 * errno) with a message naming the directory. */
static int spill_fail(el_ev_show_t *s, const char *what, const char *dir) {
  int e = errno ? errno : EIO;
  if (dir)
    snprintf(s->spill_dir, sizeof s->spill_dir, "%s", dir);
  if (!s->ioerr) {
    s->ioerr = -e;
    s->diag.code = -e;
    s->diag.offset = el_ev_decoder_offset(s->dec);
    s->diag.event_type = -1;
    snprintf(s->diag.msg, sizeof s->diag.msg,
             "sorting the events: %s %.150s: %s", what, s->spill_dir,
             strerror(e));
  }
  return s->ioerr;
}

/* Open the unlinked temporary file in $TMPDIR (else /tmp). Returns 0 or
 * a negated errno, with the diag naming the directory. */
static int spill_open(el_ev_show_t *s) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) { /* a file system without O_TMPFILE */
    char path[4096];
    snprintf(path, sizeof path, "%s/eventlog-live-show-XXXXXX", dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
      unlink(path);
  }
  if (fd < 0)
    return spill_fail(s, "creating a temporary file in", dir);
  s->spill_fd = fd;
  return 0;
}

/* Write the spill buffer at the end of the file. 0 or a negated errno. */
static int spill_flush(el_ev_show_t *s) {
  const char *p = s->wbuf;
  size_t n = s->wlen;
  while (n && !s->ioerr) {
    ssize_t k = pwrite(s->spill_fd, p, n, (off_t)s->spill_end);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (k == 0)
        errno = EIO;
      return spill_fail(s, "writing the temporary file in", NULL);
    }
    p += k;
    n -= (size_t)k;
    s->spill_end += (uint64_t)k;
  }
  s->wlen = 0;
  return s->ioerr;
}

/* Append one record to the spill file (through the buffer). */
static int spill_put(el_ev_show_t *s, uint64_t t, const char *line,
                     uint32_t len) {
  if (s->wlen + SPILL_REC + len > IOBUF && spill_flush(s))
    return s->ioerr;
  memcpy(s->wbuf + s->wlen, &t, 8);
  memcpy(s->wbuf + s->wlen + 8, &len, 4);
  s->wlen += SPILL_REC;
  for (uint32_t done = 0; done < len;) { /* in pieces if over IOBUF */
    size_t room = IOBUF - s->wlen;
    uint32_t n = len - done < room ? len - done : (uint32_t)room;
    memcpy(s->wbuf + s->wlen, line + done, n);
    s->wlen += n;
    done += n;
    if (done < len && spill_flush(s))
      return s->ioerr;
  }
  return 0;
}

/* Write the records in memory to the spill file as one sorted run and
 * forget them (their memory is reused). 0, EL_ENOMEM or a negated errno. */
static int spill_run(el_ev_show_t *s) {
  if (s->spill_fd < 0 && spill_open(s))
    return s->ioerr;
  if (!s->wbuf && !(s->wbuf = el_malloc(IOBUF + LINE_SLACK)))
    return EL_ENOMEM;
  if (el_grow(&s->runs, &s->runcap, s->nruns + 1, sizeof *s->runs))
    return EL_ENOMEM;
  merge_t m;
  if (merge_init(&m, s->rec, s->nrec))
    return EL_ENOMEM;
  uint64_t from = s->spill_end;
  const rec_t *r;
  while ((r = merge_next(&m)) && !spill_put(s, r->t, r->line, r->len))
    ;
  merge_free(&m);
  if (spill_flush(s))
    return s->ioerr;
  s->runs[s->nruns].off = from;
  s->runs[s->nruns++].len = s->spill_end - from;
  s->nrec = 0;
  el_arena_reset(&s->txt);
  return 0;
}

/* Reading one run back. */
typedef struct {
  uint64_t pos, end;  /* file offsets: next byte to read, end of the run */
  char *buf;          /* cap bytes, then LINE_SLACK */
  size_t cap, lo, hi; /* bytes [lo, hi) of buf are read, not yet used */
  uint64_t t;         /* the current record: */
  const char *line;
  uint32_t len;
} reader_t;

/* At least n unread bytes in r->buf (fewer at the run's end). */
static int reader_fill(el_ev_show_t *s, reader_t *r, size_t n) {
  if (r->hi - r->lo >= n)
    return 0;
  memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
  r->hi -= r->lo;
  r->lo = 0;
  if (n > r->cap) {
    char *b = el_realloc(r->buf, n + LINE_SLACK);
    if (!b)
      return EL_ENOMEM;
    r->buf = b;
    r->cap = n;
  }
  while (r->hi < n && r->pos < r->end) {
    size_t want = r->cap - r->hi;
    if (want > r->end - r->pos)
      want = (size_t)(r->end - r->pos);
    ssize_t k = pread(s->spill_fd, r->buf + r->hi, want, (off_t)r->pos);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      if (k == 0)
        errno = EIO; /* the file is shorter than what was written */
      return spill_fail(s, "reading the temporary file in", NULL);
    }
    r->hi += (size_t)k;
    r->pos += (uint64_t)k;
  }
  return 0;
}

/* Read r's next record; *more = 0 at the run's end. */
static int reader_next(el_ev_show_t *s, reader_t *r, int *more) {
  int rc = reader_fill(s, r, SPILL_REC);
  *more = 0;
  if (rc || r->hi == r->lo)
    return rc;
  if (r->hi - r->lo < SPILL_REC) {
    errno = EIO;
    return spill_fail(s, "reading a cut record from the temporary file in",
                      NULL);
  }
  memcpy(&r->t, r->buf + r->lo, 8);
  memcpy(&r->len, r->buf + r->lo + 8, 4);
  if ((rc = reader_fill(s, r, SPILL_REC + (size_t)r->len)))
    return rc;
  if (r->hi - r->lo < SPILL_REC + (size_t)r->len) {
    errno = EIO;
    return spill_fail(s, "reading a cut record from the temporary file in",
                      NULL);
  }
  r->line = r->buf + r->lo + SPILL_REC;
  r->lo += SPILL_REC + (size_t)r->len;
  *more = 1;
  return 0;
}

/* {====== output ======} */

/* Write p[0..n) to f's file descriptor (f already flushed); falls back
 * to fwrite for streams without one. 0, or the negated errno of the
 * failed write (EIO if none). */
static int out_write(FILE *f, const char *p, size_t n) {
  int fd = fileno(f);
  if (fd < 0)
    return fwrite(p, 1, n, f) == n ? 0 : (errno ? -errno : -EIO);
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k < 0 && errno ? -errno : -EIO;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* The event lines, written in large write(2) calls. */
typedef struct {
  FILE *f;
  char *b; /* IOBUF bytes, then LINE_SLACK */
  size_t len;
  int err; /* the first output error: wins over a decode status, since
              the caller would otherwise report success */
} out_t;

/* "<t>: " and the line (len bytes, LINE_SLACK readable after it). */
static void out_line(out_t *o, uint64_t t, const char *line, uint32_t len) {
  if (o->err)
    return;
  if (o->len + len + 32 >= IOBUF) {
    o->err = out_write(o->f, o->b, o->len);
    o->len = 0;
  }
  char *w = el_fmt_u64(o->b + o->len, t);
  memcpy(w, ": ", 2);
  o->len = (size_t)(w + 2 - o->b);
  if (len > IOBUF) {
    if (!o->err)
      o->err = out_write(o->f, o->b, o->len);
    if (!o->err)
      o->err = out_write(o->f, line, len);
    o->len = 0;
    return;
  }
  if (len <= 64)
    memcpy(o->b + o->len, line, 64); /* constant size: inlined; both sides
                                        have 64 bytes of slack */
  else
    memcpy(o->b + o->len, line, len);
  o->len += len;
}

/* Merge runs [first, first + k) of the spill file into o, or (o NULL)
 * into one new run at the file's end that takes their place. Returns 0,
 * EL_ENOMEM, or a negated errno (o->err for the output). */
static int merge_runs(el_ev_show_t *s, size_t first, size_t k, out_t *o) {
  reader_t *rd = el_calloc(k, sizeof *rd);
  uint64_t *key = el_malloc(k * sizeof *key);
  heap_t q = {.h = el_malloc(k * sizeof *q.h), .key = key};
  size_t bsz = s->budget / (2 * k);
  bsz = bsz < (16u << 10) ? 16u << 10 : bsz > (256u << 10) ? 256u << 10 : bsz;
  int rc = rd && key && q.h ? 0 : EL_ENOMEM, more = 0;
  for (size_t i = 0; i < k && !rc; i++) {
    rd[i].pos = s->runs[first + i].off;
    rd[i].end = rd[i].pos + s->runs[first + i].len;
    rd[i].cap = bsz;
    if (!(rd[i].buf = el_malloc(bsz + LINE_SLACK)))
      rc = EL_ENOMEM;
    else if (!(rc = reader_next(s, &rd[i], &more)))
      key[i] = rd[i].t; /* runs are never empty */
  }
  uint64_t from = s->spill_end;
  if (!rc)
    heap_build(&q, k);
  while (!rc && q.n) {
    reader_t *r = &rd[q.h[0]];
    if (o)
      rc = (out_line(o, r->t, r->line, r->len), o->err);
    else
      rc = spill_put(s, r->t, r->line, r->len);
    if (!rc && !(rc = reader_next(s, r, &more)) && more)
      key[q.h[0]] = r->t;
    heap_next(&q, !more);
  }
  if (!o && !rc && !(rc = spill_flush(s))) {
    for (size_t i = 0; i < k; i++) /* give the merged runs' disk back */
      fallocate(s->spill_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                (off_t)s->runs[first + i].off, (off_t)s->runs[first + i].len);
    s->runs[first].off = from;
    s->runs[first].len = s->spill_end - from;
    memmove(s->runs + first + 1, s->runs + first + k,
            (s->nruns - first - k) * sizeof *s->runs);
    s->nruns -= k - 1;
  }
  for (size_t i = 0; rd && i < k; i++)
    el_free(rd[i].buf);
  el_free(rd);
  el_free(key);
  el_free(q.h);
  return rc;
}

/* The records in memory, in order, to o. 0 or EL_ENOMEM. */
static int finish_memory(el_ev_show_t *s, out_t *o) {
  merge_t m;
  if (merge_init(&m, s->rec, s->nrec))
    return EL_ENOMEM;
  const rec_t *r;
  while ((r = merge_next(&m)) && !o->err)
    out_line(o, r->t, r->line, r->len);
  merge_free(&m);
  return 0;
}

/* Spill what is left in memory, free that memory, merge the runs down to
 * FANIN: nothing is printed if this fails. 0, EL_ENOMEM or a negated
 * errno. */
static int finish_spill(el_ev_show_t *s) {
  int rc = s->nrec ? spill_run(s) : 0;
  el_arena_free(&s->txt);
  el_free(s->rec);
  s->rec = NULL;
  s->nrec = s->rcap = 0;
  while (!rc && s->nruns > FANIN)
    for (size_t i = 0; !rc && i + 1 < s->nruns; i++)
      rc = merge_runs(s, i, s->nruns - i < FANIN ? s->nruns - i : FANIN, NULL);
  return rc;
}

/* The decode status at the end of input (the header's absence aside). */
static int decode_status(el_ev_show_t *s) {
  int rc = el_ev_decoder_finish(s->dec);
  if (rc) {
    s->diag = *el_ev_decoder_diag(s->dec);
  } else if (s->corrupt.code) { /* a warning: said by the warn hook */
    rc = EL_ECORRUPT;
    s->diag = s->corrupt;
  }
  return rc;
}

int el_ev_show_finish(el_ev_show_t *s) {
  int rc = decode_status(s);
  if (!s->hdr) {
    /* A connection's bytes without a header, said as it came (a warning
     * with its code, el_ev_decoder_reset) and nothing since: not again. */
    if (rc == EL_ECORRUPT)
      return rc;
    if (!rc)
      s->diag = *el_ev_decoder_diag(s->dec);
    return EL_EBADHDR; /* no complete header: nothing to print */
  }
  int err = s->ioerr;
  if (!err && s->nruns)
    err = finish_spill(s);
  out_t o = {.f = s->out};
  if (!err && !(o.b = el_malloc(IOBUF + LINE_SLACK)))
    err = EL_ENOMEM;
  if (err) {
    el_free(o.b);
    return err;
  }
  fwrite(s->hdr, 1, s->hdrlen, s->out);
  fflush(s->out); /* then write(2) the big buffers: no stdio copy */
  err = s->nruns ? merge_runs(s, 0, s->nruns, &o) : finish_memory(s, &o);
  if (!err && !o.err) {
    o.b[o.len++] = '\n'; /* ghc-events show ends with an empty line */
    o.err = out_write(s->out, o.b, o.len);
  }
  el_free(o.b);
  if (!o.err && ferror(s->out))
    o.err = -EIO;
  return o.err ? o.err : err ? err : rc;
}

const el_diag_t *el_ev_show_diag(const el_ev_show_t *s) {
  return &s->diag;
}
