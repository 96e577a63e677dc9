/* config_table.c: the one table of processors and properties, and what is
 * generated from it: the default YAML (--print-defaults), the JSON Schema
 * (--print-config-json-schema) and the Markdown key reference.
 *
 * Defaults follow ../shared/spec/reference-behaviour.md §3.2 (HEAD column),
 * except heap_allocated and capability_usage, which we export as cumulative
 * monotonic sums and therefore enable (DESIGN.md), and heap_live's
 * description, which the reference copied from heap_size. */
#include <errno.h>
#include <string.h>

#include "config_internal.h"

const el_cfg_proc_info_t el__cfg_procs[] = {
    /* logs */
    {EL_CFG_LOGS, "thread_label", "ghc_eventlog_ThreadLabel", "A thread label.",
     NULL, "30s",
     "One log record per THREAD_LABEL event: body = the label, attributes "
     "kind=ThreadLabel and thread (int); no severity."},
    {EL_CFG_LOGS, "user_marker", "ghc_eventlog_UserMarker", "A user marker.",
     NULL, "30s",
     "One TRACE (1) log record per USER_MARKER event (traceMarker): body = "
     "the marker, attributes evCap and kind=UserMarker."},
    {EL_CFG_LOGS, "user_message", "ghc_eventlog_UserMessage",
     "A user log message.", NULL, "30s",
     "One DEBUG (5) log record per USER_MSG event (traceEvent): body = the "
     "message, attributes evCap and kind=UserMessage."},
    {EL_CFG_LOGS, "internal_log_message", "eventlog_live_InternalLogMessage",
     "An internal eventlog-live log message.", NULL, "30s",
     "eventlog-live's own log messages (at or above --verbosity), under the "
     "resource service.name=eventlog-live-otelcol-for-<service>."},
    /* metrics */
    {EL_CFG_METRICS, "blocks_size", "ghc_eventlog_BlocksSize",
     "The current heap size, calculated by the allocated number of blocks.",
     "1s", "30s",
     "Gauge (By) from BLOCKS_SIZE; attributes evCap, heapCapset; the last "
     "value per aggregation window."},
    {EL_CFG_METRICS, "capability_usage", "ghc_eventlog_CapabilityUsageDuration",
     "The time each capability spent in GC, running a thread or idle, in "
     "total since the program started.",
     "1s", "30s",
     "Cumulative monotonic sum (ns) of time each capability spent in GC, "
     "running a thread (Mutator) or Idle; attributes cap, category, user. "
     "At most max_threads threads get their own user series (the first "
     "seen; a finished thread's series ends once exported and frees its "
     "place); the others' time goes to user \"other\"."},
    {EL_CFG_METRICS, "gc_copied", "ghc_eventlog_GcCopied",
     "The number of bytes copied in one garbage collection pass.", "1s", "30s",
     "Gauge (By) from GC_STATS_GHC's copied field (bytes copied by one GC); "
     "attributes evCap, heapCapset; the last value per aggregation window."},
    {EL_CFG_METRICS, "gc_fragmentation", "ghc_eventlog_GcFragmentation",
     "The number of bytes of fragmentation found in one garbage collection "
     "pass.",
     "1s", "30s",
     "Gauge (By) from GC_STATS_GHC's fragmentation field; attributes evCap, "
     "heapCapset; the last value per aggregation window."},
    {EL_CFG_METRICS, "gc_slop", "ghc_eventlog_GcSlop",
     "The number of slop bytes found in one garbage collection pass.", "1s",
     "30s",
     "Gauge (By) from GC_STATS_GHC's slop field; attributes evCap, "
     "heapCapset; the last value per aggregation window."},
    {EL_CFG_METRICS, "heap_allocated", "ghc_eventlog_HeapAllocated",
     "The number of bytes allocated on the heap since the program started.",
     "1s", "30s",
     "Cumulative monotonic sum (By) of bytes allocated, from HEAP_ALLOCATED; "
     "attributes evCap, heapCapset."},
    {EL_CFG_METRICS, "heap_live", "ghc_eventlog_HeapLive",
     "The amount of live data in the heap, as measured by the last "
     "garbage collection.",
     "1s", "30s",
     "Gauge (By) from HEAP_LIVE; attributes evCap, heapCapset; the last value "
     "per aggregation window."},
    {EL_CFG_METRICS, "heap_prof_sample", "ghc_eventlog_HeapProfSample",
     "A heap profile sample.", "1s", "30s",
     "Gauge (By) per label of each heap census (HEAP_PROF_SAMPLE_STRING; "
     "for -hc HEAP_PROF_SAMPLE_COST_CENTRE, labelled by the cost-centre "
     "stack, innermost first, joined by '/'); attributes evCap, "
     "heapProfBreakdown, heapProfId, heapProfLabel, heapProfSampleEra (and "
     "ip* for -hi); the last census per window."},
    {EL_CFG_METRICS, "heap_size", "ghc_eventlog_HeapSize",
     "The current heap size, calculated by the allocated number of "
     "megablocks.",
     "1s", "30s",
     "Gauge (By) from HEAP_SIZE; attributes evCap, heapCapset; the last value "
     "per aggregation window."},
    {EL_CFG_METRICS, "mem_current", "ghc_eventlog_MemCurrent",
     "The number of megablocks currently allocated.", "1s", "30s",
     "Gauge ({mblock}) from MEM_RETURN's current field; attributes evCap, "
     "heapCapset."},
    {EL_CFG_METRICS, "mem_needed", "ghc_eventlog_MemNeeded",
     "The number of megablocks currently needed.", "1s", "30s",
     "Gauge ({mblock}) from MEM_RETURN's needed field; attributes evCap, "
     "heapCapset."},
    {EL_CFG_METRICS, "mem_returned", "ghc_eventlog_MemReturned",
     "The number of megablocks currently being returned to the OS.", "1s",
     "30s",
     "Gauge ({mblock}) from MEM_RETURN's returned field; attributes evCap, "
     "heapCapset."},
    {EL_CFG_METRICS, "productivity", "ghc_eventlog_Productivity",
     "The share of capability time spent in the mutator rather than GC, in percent.",
     "1s", "30s",
     "Gauge (%) per capability: 100 x mutator / (mutator + GC), from the "
     "capability's running totals since the program started (RUN/STOP_THREAD "
     "and GC_START/GC_END spans, as capability_usage); attribute cap; one "
     "value per span, the last per aggregation window."},
    {EL_CFG_METRICS, "internal_event_count", "eventlog_live_InternalEventCount",
     "The number of events received over the eventlog socket.", "1s", "false",
     "Self-metric: cumulative monotonic sum ({event}) of the events decoded from the input since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_exported_logs",
     "eventlog_live_InternalExportedLogs", "The number of exported logs.", "1s",
     "false",
     "Self-metric: cumulative monotonic sum ({log_record}) of the log records delivered: in requests the collector answered, its partly rejected ones included (counted by internal_rejected_logs too; the console exporter delivers all) since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_rejected_logs",
     "eventlog_live_InternalRejectedLogs", "The number of rejected logs.", "1s",
     "false",
     "Self-metric: cumulative monotonic sum ({log_record}) of the log records the collector rejected (partial success) since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_exported_metrics",
     "eventlog_live_InternalExportedMetrics", "The number of exported metrics.",
     "1s", "false",
     "Self-metric: cumulative monotonic sum ({data_point}) of the metric data points delivered: in requests the collector answered, its partly rejected ones included (counted by internal_rejected_metrics too) since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_rejected_metrics",
     "eventlog_live_InternalRejectedMetrics", "The number of rejected metrics.",
     "1s", "false",
     "Self-metric: cumulative monotonic sum ({data_point}) of the metric data points the collector rejected since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_exported_samples",
     "eventlog_live_InternalExportedSamples", "The number of exported samples.",
     "1s", "false",
     "Self-metric: cumulative monotonic sum ({sample}) of the profile samples delivered: in requests the collector answered, its partly rejected ones included (counted by internal_rejected_samples too) since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_rejected_samples",
     "eventlog_live_InternalRejectedSamples", "The number of rejected samples.",
     "1s", "false",
     "Self-metric: cumulative monotonic sum ({sample}) of the profile samples the collector rejected since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_exported_spans",
     "eventlog_live_InternalExportedSpans", "The number of exported spans.",
     "1s", "false",
     "Self-metric: cumulative monotonic sum ({span}) of the spans delivered: in requests the collector answered, its partly rejected ones included (counted by internal_rejected_spans too) since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    {EL_CFG_METRICS, "internal_rejected_spans",
     "eventlog_live_InternalRejectedSpans", "The number of rejected spans.",
     "1s", "false",
     "Self-metric: cumulative monotonic sum ({span}) of the spans the collector rejected since the "
     "daemon started, under the resource "
     "service.name=eventlog-live-otelcol-for-<service>; sampled once per "
     "aggregation window (wall clock). Off by default."},
    /* traces */
    {EL_CFG_TRACES, "capability_usage", "ghc_eventlog_CapabilityUsage",
     "A trace of capability usage (either mutator thread or garbage "
     "collection).",
     NULL, "false",
     "One span per GC or mutator interval of each capability, named "
     "'<name> GC' / '<name> Mutator'; attributes capability, user. High "
     "volume (one span per thread switch, tens of thousands a second for a "
     "busy program; what the backend cannot take in time is dropped from "
     "the export queue, --otlp-queue-bytes, and counted): off by default."},
    {EL_CFG_TRACES, "thread_state", "ghc_eventlog_ThreadState",
     "A trace of thread state changes (either running or stopped).", NULL,
     "false",
     "One span per Running or Blocked interval of each thread, named "
     "'<name> Running' / '<name> Blocked'; attributes capability, thread, "
     "status. High volume (two spans per thread switch, see "
     "capability_usage) and, when on, every event waits for time order, so "
     "a live program's first metrics come a few seconds later: off by "
     "default."},
    /* profiles */
    {EL_CFG_PROFILES, "call_stack_profile", "ghc_eventlog_CallStackProfile",
     "A GHC call-stack profile.", NULL, "30s",
     "Call-stack samples sent by ghc-stack-profiler (wire layouts 0.3/0.4 "
     "and 0.5, chosen by its ProtocolVersion message) in USER_BINARY_MSG "
     "events; profile type <name>:cpu:samples."},
    {EL_CFG_PROFILES, "cost_centre_stack_profile",
     "ghc_eventlog_CostCentreStackProfile", "A GHC cost-centre stack profile.",
     NULL, "30s",
     "Cost-centre stack samples (PROF_SAMPLE_COST_CENTRE, RTS -p); profile "
     "type <name>:cpu:samples."},
};

const size_t el__cfg_nprocs = EL_ARRAY_LEN(el__cfg_procs);

unsigned el_cfg_max_threads_default(const el_cfg_proc_info_t *info) {
  return info && info->group == EL_CFG_METRICS &&
                 !strcmp(info->key, "capability_usage")
             ? 1000
             : 0;
}

const el_cfg_prop_info_t el__cfg_props[] = {
    {"name", EL_CFG_PROP_STRING, false,
     "The telemetry name: the metric name, the span name prefix, or the "
     "profile's __name__. Default: the processor's own name."},
    {"description", EL_CFG_PROP_STRING, false,
     "The metric description. Default: the processor's own description."},
    {"aggregate", EL_CFG_PROP_STRATEGY, true,
     "Metrics only. Window over which data points are combined (each "
     "attribute set keeps its last value; the cumulative sums their "
     "latest total; heap_prof_sample its last census): true = one flush "
     "interval, false = keep every point, \"<N>x\" = N flush intervals, "
     "\"<N>s\" = N seconds of eventlog time."},
    {"export", EL_CFG_PROP_STRATEGY, false,
     "How often the processor's output is exported: true = every flush "
     "interval, \"<N>x\" = every N flush intervals, \"<N>s\" = every N "
     "seconds of eventlog time, false = disable the processor. Traces are "
     "exported every batch interval; there only on/off matters."},
};

const size_t el__cfg_nprops = EL_ARRAY_LEN(el__cfg_props);

static const char *const group_names[EL_CFG_NGROUPS] = {"logs", "metrics",
                                                        "traces", "profiles"};

const char *el_cfg_group_name(el_cfg_group_t g) {
  return (unsigned)g < EL_CFG_NGROUPS ? group_names[g] : "?";
}

size_t el_cfg_nprocs(void) { return el__cfg_nprocs; }

/* {====== --print-defaults ======} */

/* Writes text as comment lines wrapped at 78 columns: the first line
 * starts with `first`, the others with `cont` (e.g. "# ", "#   "). */
static void comment2(FILE *out, const char *first, const char *cont,
                     const char *text) {
  const char *prefix = first;
  while (*text) {
    const size_t width = 78 - strlen(prefix);
    size_t n = strlen(text);
    if (n > width) {
      n = width;
      while (n > 0 && text[n] != ' ') n--;
      if (n == 0) n = width;
    }
    fprintf(out, "%s%.*s\n", prefix, (int)n, text);
    text += n;
    while (*text == ' ') text++;
    prefix = cont;
  }
}

/* "# "-prefixed lines after indent. */
static void comment(FILE *out, const char *indent, const char *text) {
  char p[32];
  snprintf(p, sizeof p, "%s# ", indent);
  comment2(out, p, p, text);
}

/* Quotes s for YAML (double-quoted style; our strings are plain ASCII).
 * col: the column where the value starts. Long strings are folded onto
 * continuation lines (a line break in a double-quoted scalar reads as a
 * space), so that every line fits in 80 columns. */
static void yaml_string(FILE *out, const char *s, size_t col) {
  fputc('"', out);
  col++;
  while (*s) {
    size_t n = strcspn(s, " ");
    if (col + n + 1 > 79 && col > 8) {
      fputs("\n        ", out);
      col = 8;
    }
    for (size_t i = 0; i < n; i++) {
      if (s[i] == '"' || s[i] == '\\') fputc('\\', out);
      fputc(s[i], out);
    }
    col += n;
    s += n;
    if (*s == ' ') {
      s++;
      if (*s && col + strcspn(s, " ") + 2 > 79) {
        fputs("\n        ", out);
        col = 8;
      } else {
        fputc(' ', out);
        col++;
      }
    }
  }
  fputc('"', out);
}

int el_cfg_print_defaults(FILE *out) {
  fputs("# eventlog-live-otelcol configuration (printed by --print-defaults)."
        "\n#\n",
        out);
  comment(out, "",
          "Every processor listed under processors.<group> is enabled; a "
          "processor left out of a configuration file is disabled. A "
          "listed processor with no properties (`heap_size: {}` or "
          "`heap_size:`) takes every property from these defaults, and so "
          "does any property it omits.");
  fputs("#\n# Properties of each processor:\n", out);
  for (size_t i = 0; i < el__cfg_nprops; i++) {
    char buf[600];
    snprintf(buf, sizeof buf, "%s: %s", el__cfg_props[i].key,
             el__cfg_props[i].doc);
    comment2(out, "#   ", "#     ", buf);
  }
  fputs("#\n", out);
  comment(out, "",
          "Durations are YAML strings: \"<N>s\" (seconds, decimals allowed, "
          "e.g. \"0.5s\") or \"<N>x\" (a whole number of "
          "--eventlog-flush-interval periods). Windows are measured in "
          "eventlog time, so replaying a recorded eventlog gives the "
          "telemetry of the live run.");
  fputs("processors:\n", out);
  for (int g = 0; g < EL_CFG_NGROUPS; g++) {
    fprintf(out, "  %s:\n", group_names[g]);
    for (size_t i = 0; i < el__cfg_nprocs; i++) {
      const el_cfg_proc_info_t *p = &el__cfg_procs[i];
      if ((int)p->group != g) continue;
      comment(out, "    ", p->doc);
      fprintf(out, "    %s:\n      name: ", p->key);
      yaml_string(out, p->name, 12);
      fputs("\n      description: ", out);
      yaml_string(out, p->description, 19);
      fputc('\n', out);
      if (p->aggregate) fprintf(out, "      aggregate: %s\n", p->aggregate);
      fprintf(out, "      export: %s\n", p->export_);
      if (el_cfg_max_threads_default(p))
        fprintf(out, "      max_threads: %u\n", el_cfg_max_threads_default(p));
    }
  }
  return ferror(out) ? -EIO : 0;
}

/* {====== --print-config-json-schema ======} */

static void schema_proc_def(FILE *out, const char *def, bool metric) {
  fprintf(out,
          "    \"%s\": {\n"
          "      \"type\": [\"object\", \"null\"],\n"
          "      \"additionalProperties\": false,\n"
          "      \"properties\": {\n"
          "        \"name\": {\"type\": [\"string\", \"null\"]},\n"
          "        \"description\": {\"type\": [\"string\", \"null\"]},\n",
          def);
  if (metric)
    fputs(
        "        \"aggregate\": {\"$ref\": \"#/definitions/strategy\"},\n"
        "        \"max_threads\": {\"type\": \"integer\", \"minimum\": 0, "
        "\"description\": \"capability_usage only\"},\n",
        out);
  fputs("        \"export\": {\"$ref\": \"#/definitions/strategy\"}\n"
        "      }\n"
        "    },\n",
        out);
}

int el_cfg_print_schema(FILE *out) {
  fputs("{\n"
        "  \"$schema\": \"http://json-schema.org/draft-07/schema#\",\n"
        "  \"$id\": \"https://github.com/eventlog-live/config.schema.json\",\n"
        "  \"title\": \"Config\",\n"
        "  \"description\": \"Configuration of eventlog-live-otelcol.\",\n"
        "  \"definitions\": {\n"
        "    \"duration_by_batches\": {\"type\": \"string\", "
        "\"pattern\": \"^([0-9]+)(x)$\"},\n"
        "    \"duration_by_seconds\": {\"type\": \"string\", "
        "\"pattern\": \"^([0-9]+(\\\\.[0-9]+)?)(s)$\"},\n"
        "    \"strategy\": {\"oneOf\": [\n"
        "      {\"type\": \"null\"},\n"
        "      {\"type\": \"boolean\"},\n"
        "      {\"$ref\": \"#/definitions/duration_by_batches\"},\n"
        "      {\"$ref\": \"#/definitions/duration_by_seconds\"}\n"
        "    ]},\n",
        out);
  schema_proc_def(out, "processor", false);
  schema_proc_def(out, "metric_processor", true);
  fputs("    \"defaults\": {\"description\": \"Free-form block for YAML "
        "anchors; ignored.\"}\n"
        "  },\n"
        "  \"type\": \"object\",\n"
        "  \"additionalProperties\": false,\n"
        "  \"properties\": {\n"
        "    \"defaults\": {\"$ref\": \"#/definitions/defaults\"},\n"
        "    \"web\": {\n"
        "      \"description\": \"Embedded Prometheus endpoint and web view "
        "(docs/web.md); the command line takes precedence.\",\n"
        "      \"type\": [\"object\", \"null\"],\n"
        "      \"additionalProperties\": false,\n"
        "      \"properties\": {\n"
        "        \"prometheus_port\": {\"type\": \"integer\", "
        "\"minimum\": 0, \"maximum\": 65535},\n"
        "        \"web_port\": {\"type\": \"integer\", \"minimum\": 0, "
        "\"maximum\": 65535},\n"
        "        \"prometheus_host\": {\"type\": \"string\", "
        "\"minLength\": 1, \"maxLength\": 255, \"pattern\": "
        "\"^[^\\\\s]+$\", \"description\": \"Address to listen on "
        "(default 127.0.0.1; docs/security.md).\"},\n"
        "        \"web_host\": {\"type\": \"string\", \"minLength\": 1, "
        "\"maxLength\": 255, \"pattern\": \"^[^\\\\s]+$\", "
        "\"description\": \"Address to listen on (default 127.0.0.1; "
        "docs/security.md).\"}\n"
        "      }\n"
        "    },\n"
        "    \"processors\": {\n"
        "      \"type\": [\"object\", \"null\"],\n"
        "      \"additionalProperties\": false,\n"
        "      \"properties\": {\n",
        out);
  for (int g = 0; g < EL_CFG_NGROUPS; g++) {
    fprintf(out,
            "        \"%s\": {\n"
            "          \"type\": [\"object\", \"null\"],\n"
            "          \"additionalProperties\": false,\n"
            "          \"properties\": {\n"
            "            \"defaults\": {\"$ref\": \"#/definitions/defaults\"}",
            group_names[g]);
    for (size_t i = 0; i < el__cfg_nprocs; i++) {
      const el_cfg_proc_info_t *p = &el__cfg_procs[i];
      if ((int)p->group != g) continue;
      fprintf(out, ",\n            \"%s\": {\"$ref\": \"#/definitions/%s\"}",
              p->key, g == EL_CFG_METRICS ? "metric_processor" : "processor");
    }
    fprintf(out, "\n          }\n        }%s\n",
            g + 1 < EL_CFG_NGROUPS ? "," : "");
  }
  fputs("      }\n"
        "    }\n"
        "  }\n"
        "}\n",
        out);
  return ferror(out) ? -EIO : 0;
}

/* {====== Markdown reference ======} */

int el_cfg_print_markdown(FILE *out) {
  fputs("| key | type | default | meaning |\n|---|---|---|---|\n", out);
  for (size_t i = 0; i < el__cfg_nprocs; i++) {
    const el_cfg_proc_info_t *p = &el__cfg_procs[i];
    const char *g = group_names[p->group];
    fprintf(out, "| `processors.%s.%s` | mapping or null | present | %s |\n",
            g, p->key, p->doc);
    fprintf(out, "| `processors.%s.%s.name` | string | `%s` | "
                 "telemetry name |\n", g, p->key, p->name);
    fprintf(out, "| `processors.%s.%s.description` | string | `%s` | "
                 "description |\n", g, p->key, p->description);
    if (p->aggregate)
      fprintf(out, "| `processors.%s.%s.aggregate` | strategy | `%s` | "
                   "aggregation window |\n", g, p->key, p->aggregate);
    fprintf(out, "| `processors.%s.%s.export` | strategy | `%s` | "
                 "export window; `false` disables |\n", g, p->key,
            p->export_);
    if (el_cfg_max_threads_default(p))
      fprintf(out,
              "| `processors.%s.%s.max_threads` | integer | `%u` | "
              "threads with their own series; the rest share user "
              "`other` |\n",
              g, p->key, el_cfg_max_threads_default(p));
  }
  return ferror(out) ? -EIO : 0;
}
