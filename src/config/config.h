/* config.h: the daemon's YAML configuration (processors, their names,
 * aggregation and export windows), its defaults, and the generated
 * `--print-defaults` YAML and `--print-config-json-schema` JSON Schema.
 *
 * Implements ../shared/spec/reference-behaviour.md §3 with the documented
 * semantics (DESIGN.md "Decisions already taken"):
 *  - a processor key present in the file enables it (also `key:` with no
 *    value), unless its own entry says `export: false` (or `0s`, `0x`);
 *  - every property the entry omits takes the default file's value;
 *  - a processor missing from a given file is disabled;
 *  - without a file the default configuration is used as is.
 * Every processor and property comes from one table (config_table.c) that
 * also generates the default YAML, the JSON schema and docs/config.md.
 *
 * Thread: any, but one thread at a time per el_cfg_t. */
#ifndef EL_CONFIG_H
#define EL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/el_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Processor groups, in the order of the YAML file. */
typedef enum {
  EL_CFG_LOGS = 0,
  EL_CFG_METRICS,
  EL_CFG_TRACES,
  EL_CFG_PROFILES,
  EL_CFG_NGROUPS
} el_cfg_group_t;

/* An `export` or `aggregate` value (spec §3.3). */
typedef enum {
  EL_CFG_UNSET = 0,  /* null or absent */
  EL_CFG_BOOL,       /* true = one flush interval, false = off */
  EL_CFG_TIMES,      /* "<N>x": N eventlog flush intervals */
  EL_CFG_SECONDS     /* "<N>[.<M>]s": seconds */
} el_cfg_strategy_kind_t;

typedef struct el_cfg_strategy_s {
  el_cfg_strategy_kind_t kind;
  bool b;                /* EL_CFG_BOOL */
  uint64_t times;        /* EL_CFG_TIMES: N */
  uint64_t ms;           /* EL_CFG_SECONDS: round(N * 1000) */
  bool positive;         /* EL_CFG_SECONDS: N > 0, even if ms rounds to 0
                            (spec §3.3: on iff N > 0) */
} el_cfg_strategy_t;

/* Static description of one processor (a row of the table). */
typedef struct el_cfg_proc_info_s {
  el_cfg_group_t group;
  const char *key;          /* YAML key, e.g. "heap_size" */
  const char *name;         /* default telemetry name */
  const char *description;  /* default description */
  const char *aggregate;    /* default aggregate value text, NULL: none
                               (only metrics have one) */
  const char *export_;      /* default export value text */
  const char *doc;          /* what it emits, for comments and docs */
} el_cfg_proc_info_t;

/* The default of the max_threads key of a processor whose telemetry has a
 * per-thread attribute (metrics.capability_usage: 1000); 0 when the
 * processor has no such key. */
unsigned el_cfg_max_threads_default(const el_cfg_proc_info_t *info);

/* The resolved settings of one processor. Strings are owned by the
 * el_cfg_t and valid until it is freed or reloaded. */
typedef struct el_cfg_proc_s {
  const el_cfg_proc_info_t *info;
  bool present;                 /* key present in the loaded file */
  bool enabled;                 /* run this processor */
  char *name;                   /* telemetry name */
  char *description;            /* NULL: none */
  el_cfg_strategy_t aggregate;  /* metrics only */
  el_cfg_strategy_t export_;
  uint64_t max_threads; /* info->max_threads unless set; threads
                                   past it share the series of user
                                   "other" (docs/config.md) */
  /* Filled by el_cfg_resolve: window lengths in eventlog time. */
  uint64_t aggregate_ms;        /* 0: no aggregation */
  uint64_t export_ms;           /* >= batch interval */
  int line, column;             /* of the key in the file; 0 if absent */
} el_cfg_proc_t;

/* Where a configuration error is (1-based line and column). */
typedef struct el_cfg_diag_s {
  int code;               /* EL_ECONFIG, EL_ENOMEM or -errno; 0 if none */
  char file[256];
  int line, column;       /* 0 when unknown (e.g. file not readable) */
  char key[128];          /* dotted path, e.g. "processors.metrics" */
  char msg[1024];         /* full message "file:line:col: key: text" */
} el_cfg_diag_t;

/* Receives each warning (unknown key with suggestion, deprecated alias).
 * msg: "file:line:col: text", valid during the call. */
typedef void (*el_cfg_warn_fn)(void *ud, const char *msg);

typedef struct el_cfg_s el_cfg_t;

/* A configuration holding the built-in defaults. Warnings go to el_log
 * (WARN) until el_cfg_set_warn replaces that. NULL when out of memory.
 * Free with el_cfg_free. */
el_cfg_t *el_cfg_new(void);
void el_cfg_free(el_cfg_t *c);   /* c may be NULL */

/* Replace the warning sink (fn NULL: discard warnings). */
void el_cfg_set_warn(el_cfg_t *c, el_cfg_warn_fn fn, void *ud);

/* Read and apply a YAML file (spec §3.1, §3.5). path: borrowed.
 * Returns 0; EL_ECONFIG (syntax or type error) or -errno (unreadable),
 *   with el_cfg_diag(c) naming file, line, column and key. On error c
 *   keeps its previous settings. */
int el_cfg_load_file(el_cfg_t *c, const char *path);

/* The same from memory. name: shown in messages (e.g. "<string>"). */
int el_cfg_load_string(el_cfg_t *c, const char *name, const char *text,
                       size_t len);

/* The last error. Valid until the next load on c. */
const el_cfg_diag_t *el_cfg_diag(const el_cfg_t *c);

/* Longest window, in ms (31.7 years): windows are handed on in ns as
 * int64, so longer ones are capped (to a multiple of the batch interval). */
#define EL_CFG_MAX_WINDOW_MS UINT64_C(1000000000000)

/* Compute window lengths (spec §3.3-§3.4): the batch interval is the gcd of
 * flush_ms and every seconds-valued strategy of a present processor (of
 * every processor without a file); Nx = N * flush_ms, true = flush_ms,
 * false/unset = 0. export_ms is raised to at least the batch interval;
 * both are capped at EL_CFG_MAX_WINDOW_MS.
 * flush_ms: --eventlog-flush-interval in ms, > 0. Returns 0 or EL_EINVAL. */
int el_cfg_resolve(el_cfg_t *c, uint64_t flush_ms);

/* Command-line overrides (docs/config.md "Command-line overrides"),
 * applied after the file is loaded and before el_cfg_resolve, so they win
 * over the file, which wins over the defaults. */

/* --export-interval: every enabled processor exports every ms
 * milliseconds of eventlog time (its `export` becomes "<ms/1000>s"); an
 * aggregation window given in seconds that is longer is shortened to ms
 * ("<N>x" windows are left alone). ms = 0 does nothing. */
void el_cfg_override_export(el_cfg_t *c, uint64_t ms);

/* Turn aggregation off for processor `key` of `group` (`aggregate:
 * false`: every measurement is exported). Unknown keys do nothing. */
void el_cfg_override_aggregate_off(el_cfg_t *c, el_cfg_group_t g,
                                   const char *key);

/* --traces / --no-traces (group g, on or off): every processor of the
 * group is enabled (an `export: false` becomes `true`: every flush
 * interval) or disabled, whatever the file says. */
void el_cfg_override_group(el_cfg_t *c, el_cfg_group_t g, bool on);

/* A duration alone, in the grammar of `export` and `aggregate` (spec
 * §3.3, docs/config.md "Durations"): "<N>s" (seconds, decimals allowed,
 * rounded to whole ms) or "<N>x" (N whole flush intervals); plain digits,
 * no sign, exponent, space or other unit; no boolean or null. Any number
 * of digits: values past EL_CFG_MAX_WINDOW_MS saturate and are capped by
 * el_cfg_resolve. The file's values and --export-interval both go through
 * it. Returns 0 and *out (kind EL_CFG_SECONDS or EL_CFG_TIMES), or
 * EL_EINVAL (*out unchanged). */
int el_cfg_parse_duration(const char *text, el_cfg_strategy_t *out);

/* For a text el_cfg_parse_duration rejects, a hint that spells the
 * accepted form of a common mistake ("500ms": "write 0.5s: durations
 * are in seconds ..."; "30": "no unit: write 30s (seconds) or 30x ...";
 * "1e3s": "write 1000s ..."); "" when there is none. buf: len bytes,
 * always NUL-terminated when len > 0. Returns buf. */
const char *el_cfg_duration_hint(const char *text, char *buf, size_t len);

/* The batch interval from the last el_cfg_resolve, in ms. */
uint64_t el_cfg_batch_ms(const el_cfg_t *c);

/* Number of processors and the i-th (table order). */
size_t el_cfg_nprocs(void);
const el_cfg_proc_t *el_cfg_proc_at(const el_cfg_t *c, size_t i);

/* The processor `key` of `group`, or NULL if no such processor. */
const el_cfg_proc_t *el_cfg_proc(const el_cfg_t *c, el_cfg_group_t group,
                                 const char *key);

/* True when the processor exists and is enabled. */
bool el_cfg_enabled(const el_cfg_t *c, el_cfg_group_t group,
                    const char *key);

/* "logs", "metrics", "traces", "profiles". */
const char *el_cfg_group_name(el_cfg_group_t g);

/* Parse a strategy text ("true", "false", "5s", "0.5s", "2x"; "" or
 * "null" = unset). Returns 0 or EL_EINVAL. */
int el_cfg_parse_strategy(const char *text, el_cfg_strategy_t *out);

/* Whether a strategy enables (spec §3.3: true, N>0). */
bool el_cfg_strategy_on(const el_cfg_strategy_t *s);

/* The ports of the top-level key web: {prometheus_port, web_port} (the
 * daemon's --prometheus-port / --web-port, which take precedence), or -1
 * when not given. docs/web.md. */
int el_cfg_web_port(const el_cfg_t *c, bool prometheus);

/* The addresses of the same key, web: {prometheus_host, web_host}
 * (--prometheus-host / --web-host take precedence), or NULL when not
 * given. Valid while c lives. docs/web.md, docs/security.md. */
const char *el_cfg_web_host(const el_cfg_t *c, bool prometheus);

/* Write the default configuration as commented YAML (--print-defaults).
 * Parsing this text gives el_cfg_new()'s settings. Returns 0 or -errno. */
int el_cfg_print_defaults(FILE *out);

/* Write the Draft-07 JSON Schema of the file (--print-config-json-schema).
 * Returns 0 or -errno. */
int el_cfg_print_schema(FILE *out);

/* Write a Markdown table of every key (docs/config.md). */
int el_cfg_print_markdown(FILE *out);

/* Levenshtein distance between a and b (for key suggestions). */
size_t el_cfg_edit_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif /* EL_CONFIG_H */
