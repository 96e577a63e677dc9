/* el_common.h: types, error codes, the counting allocator and logging shared
 * by every module of eventlog-live. Depends on libc only.
 *
 * Conventions (see ../shared/STYLE.md, Part 2): functions return 0 or a
 * negative EL_E* code; system errors are negated errno values. Memory goes
 * through el_malloc/el_realloc/el_free, which count bytes in use. */
#ifndef EL_COMMON_H
#define EL_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nanoseconds since the RTS started (the eventlog's own clock). */
typedef uint64_t el_rts_ns_t;
/* Nanoseconds since the Unix epoch. */
typedef uint64_t el_unix_ns_t;

/* A borrowed byte range; not NUL-terminated. The owner documents how long
 * it stays valid. */
typedef struct el_strview_s {
  const char *p; /* first byte, may be NULL when len == 0 */
  size_t len;    /* length in bytes */
} el_strview_t;

/* Our own error codes; values are negative and below -4095 so they never
 * collide with negated errno values. X(name, value, message). */
#define EL_ERRNO_MAP(X)                                         \
  X(EL_EBADHDR, -5001, "malformed eventlog header")             \
  X(EL_ECORRUPT, -5002, "corrupt eventlog data")                \
  X(EL_ETRUNC, -5003, "eventlog truncated")                     \
  X(EL_EUNDECL, -5004, "event type not declared in the header") \
  X(EL_ENOMEM, -5005, "out of memory")                          \
  X(EL_EINVAL, -5006, "invalid argument")                       \
  X(EL_ECONFIG, -5007, "invalid configuration")                 \
  X(EL_ELUA, -5008, "Lua error")                                \
  X(EL_EEXPORT, -5009, "export failed")                         \
  X(EL_ECLOSED, -5010, "connection closed")                     \
  X(EL_EUSAGE, -5011, "invalid command line")                   \
  X(EL_ESTOPPED, -5012, "stopped by a handler")                 \
  X(EL_ESHRUNK, -5013, "file shrank while being read")          \
  X(EL_ETEE, -5014,                                             \
    "the eventlog tee (--eventlog-log-file) could not be opened")

enum {
#define EL__ERR_ENUM(name, value, msg) name = value,
  EL_ERRNO_MAP(EL__ERR_ENUM)
#undef EL__ERR_ENUM
      EL_OK = 0
};

/* The symbolic name of an error code ("EL_ETRUNC", "ENOENT"), or "UNKNOWN".
 * Returns a static string. Thread: any. */
const char *el_err_name(int err);

/* A human message for an error code: ours from EL_ERRNO_MAP, system ones
 * from strerror. Returns a static (or thread-local) string. Thread: any. */
const char *el_strerror(int err);

/* {====== allocator ======} */

/* malloc/realloc/free that keep a running count of bytes in use and of the
 * peak. Return NULL on failure (never abort). el_free(NULL) does nothing.
 * Thread: any (the counters are atomic). */
void *el_malloc(size_t size);
void *el_calloc(size_t n, size_t size);
void *el_realloc(void *ptr, size_t size);
void el_free(void *ptr);
/* Copies s (len bytes) into a new NUL-terminated el_malloc'd string;
 * NULL on failure. */
char *el_strndup(const char *s, size_t len);
char *el_strdup(const char *s);

/* A large buffer backed by transparent huge pages where the kernel has
 * them (Linux THP in "madvise" or "always" mode; Debian's default is
 * "madvise"): an anonymous mapping, 2 MiB-aligned, of el_huge_len(size)
 * bytes (size rounded up to 2 MiB: the caller may use all of them), advised
 * MADV_HUGEPAGE, so touching it faults in one 2 MiB page at a time
 * instead of 512 small ones (a reorder queue's first pass through its ring
 * cost ~1,700 page faults, 10% of the daemon's CPU on a 120 MB eventlog;
 * issue 16). For blocks of a few hundred KiB and more that are filled
 * soon: a small one still takes a whole 2 MiB page. Contents are zero
 * (fresh pages). Counted in el_mem_in_use (the mapped length). Returns
 * NULL on failure (size 0 or too large, no memory); without THP the block
 * is an ordinary mapping. Free with el_huge_free, giving the same size.
 * Thread: any. */
void *el_huge_alloc(size_t size);
/* The bytes el_huge_alloc(size) maps: size rounded up to 2 MiB; 0 when
 * that overflows. */
size_t el_huge_len(size_t size);
/* Unmap p (NULL: nothing), a block from el_huge_alloc(size). */
void el_huge_free(void *p, size_t size);

/* Bytes currently allocated through el_malloc and friends. */
size_t el_mem_in_use(void);
/* Largest value el_mem_in_use has had. */
size_t el_mem_peak(void);
/* Number of successful allocations so far (for "no allocation per event"
 * tests). */
uint64_t el_mem_alloc_count(void);

#ifdef EL_TESTING
/* Test hook: make allocation number n (1-based, counted from this call)
 * fail; 0 disables. */
void el_mem_fail_after(uint64_t n);
#endif

/* {====== logging ======} */

typedef enum {
  EL_LOG_DEBUG = 0,
  EL_LOG_INFO = 1,
  EL_LOG_WARN = 2,
  EL_LOG_ERROR = 3,
  EL_LOG_QUIET = 4
} el_log_level_t;

/* Current threshold; messages below it are not formatted. Default WARN. */
extern el_log_level_t el_log_threshold;

/* Optional hook: called with every message that passes the threshold
 * (e.g. to export the host's own logs as OTLP log records). msg is valid
 * during the call only. */
typedef void (*el_log_hook_fn)(void *ud, el_log_level_t level, const char *msg);
void el_log_set_hook(el_log_hook_fn fn, void *ud);

/* Print "<program>: <level>: <message>" on stderr when level passes the
 * threshold (<program>: el_prog_name()). Thread: any. */
void el_log(el_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void el_logv(el_log_level_t level, const char *fmt, va_list ap);

/* Parse "debug", "info", "warn"/"warning", "error", "quiet", and the
 * daemon's (the reference's, spec/reference-behaviour.md §1.1) "trace" (as
 * debug: there is no finer level) and "fatal" (as error); case-sensitive.
 * Returns 0 and sets *out, or EL_EINVAL. */
int el_log_parse_level(const char *s, el_log_level_t *out);

/* {====== command-line helpers ======} */

/* The one prefix of every message this process prints on stderr:
 * "eventlog-live-otelcol" when the executable was started under that name
 * (argv[0]'s file name), else "eventlog-live" (docs/exit-codes.md
 * "Messages"). Set once by main() before any thread starts; the default
 * is "eventlog-live". Thread: any (read-only after main() set it). */
const char *el_prog_name(void);
void el_set_prog_name(const char *argv0);

/* A message on stderr: el_prog_name(), ": ", then fmt formatted as by
 * fprintf (fmt carries its own newline). Thread: any. */
void el_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Did-you-mean for a word from the user (an event name, an environment
 * variable's value): the candidate nearest to `word`, compared
 * case-insensitively, if its edit distance is <= 1 + strlen(word) / 5 or
 * `word` (3 bytes at least) is a prefix of it; else NULL. cands holds n
 * strings (NULL entries are skipped); the first of equally near ones
 * wins. Thread: any. */
const char *el_nearest(const char *word, const char *const *cands, size_t n);

/* Match the option `name` (e.g. "--web-port") at argv[*i], in either form
 * "--name VALUE" or "--name=VALUE". On a match: sets *val to the value
 * (borrowed from argv; NULL when "--name" is the last argument), advances
 * *i past what was consumed, and returns 1. Returns 0, changing nothing,
 * when argv[*i] is another option (including a longer name with the same
 * prefix). Thread: any. */
int el_opt_value(int argc, char **argv, int *i, const char *name,
                 const char **val);

/* Edit distance between a and b: insertions, deletions, substitutions
 * and swaps of two neighbouring bytes count 1 each (optimal string
 * alignment), so "shwo" is 1 from "show"; strings over 64 bytes count as
 * the longer length. Thread: any. */
size_t el_edit_distance(const char *a, const char *b);

/* Did-you-mean for an unknown long option: help(f) prints the command's
 * help text, whose "--name" words are the candidates (so the list cannot
 * drift from the parser). Into out (NUL-terminated, "" when nothing is
 * near): an option arg (up to any '=') is a prefix of, else the nearest at
 * edit distance <= 1 + length / 5. Thread: any (uses a memory stream). */
void el_opt_suggest(const char *arg, void (*help)(FILE *f), char *out,
                    size_t size);

/* An unknown option `arg` on the command line of command `cmd` ("show";
 * NULL for the daemon itself): prints on stderr
 *   "<prog>: [cmd: ]unknown option 'ARG'[; did you mean --X?] (see --help)"
 * with the suggestion from el_opt_suggest(arg, help), so every command's
 * parser gives the same did-you-mean (issue 14). help prints the
 * command's --help text (its "--name" words are the candidates). Returns
 * EL_EUSAGE. Thread: any. */
int el_opt_unknown(const char *cmd, const char *arg, void (*help)(FILE *f));

/* A log level given as the value of option `opt` ("--log-level", "-v") of
 * command `cmd`: parsed as el_log_parse_level; when it is not a level,
 * prints "<prog>: [cmd: ]OPT: unknown log level 'V'[; did you mean X?]
 * (use trace, debug, info, warn, error, fatal or quiet)" and returns
 * EL_EINVAL (v NULL:
 * "OPT needs a value"). Returns 0 and sets *out otherwise. Thread: any. */
int el_opt_log_level(const char *cmd, const char *opt, const char *v,
                     el_log_level_t *out);

/* A size in bytes from the command line: decimal digits, optionally
 * followed by a unit K, M or G (powers of 1024), in either case and with
 * or without "iB" ("64M", "64m", "64MiB", "1k", "1KiB"). Accepts min <= n
 * <= max and sets *out. Else returns EL_EINVAL with a sentence in err
 * (NUL-terminated, size bytes): "'X' is not a size (...)", "'X' is less
 * than 1K" or "'X' is too large: at most 1024G", the bounds written as
 * el_fmt_size_unit does. Thread: any. */
int el_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
                  char *err, size_t size);

/* n bytes as the shortest exact "<N>G", "<N>M", "<N>K" or "<N>" (bytes),
 * the form el_parse_size reads back. Into buf (NUL-terminated); returns
 * buf. Thread: any. */
char *el_fmt_size_unit(uint64_t n, char *buf, size_t size);

/* 1 when paths a and b name the same existing file (same device and
 * inode, so also through a symlink or a hard link), 0 otherwise (either
 * missing or unreadable by stat, or two files). For refusing to write
 * over an input: `--eventlog-log-file`, `report -o`. Thread: any. */
int el_same_file(const char *a, const char *b);

#define el_log_enabled(level) ((level) >= el_log_threshold)

/* Internal invariants: on in debug and test builds. */
#if defined(NDEBUG) && !defined(EL_TESTING)
#define el_assert(cond) ((void)0)
#else
#include <assert.h>
#define el_assert(cond) assert(cond)
#endif

#define EL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#ifdef __cplusplus
}
#endif
#endif /* EL_COMMON_H */
