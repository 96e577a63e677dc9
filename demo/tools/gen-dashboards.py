#!/usr/bin/env python3
"""Generate the demo's Grafana dashboards (demo/config/grafana-dashboards/*.json).

    python3 demo/tools/gen-dashboards.py            # write the JSON files
    python3 demo/tools/gen-dashboards.py --check    # exit 1 if they differ

The dashboards are classic Grafana dashboard JSON (schemaVersion 41, Grafana
11/12): one row per selected service (row repeat), datasources and the
control server URL as dashboard variables, metric and label names as the
OpenTelemetry Collector's Prometheus exporter writes them for the telemetry
of eventlog-live-otelcol (unit suffixes, _total for monotonic sums, label
service_name from the resource attribute service.name).
tests/e2e/test_demo_static.sh and test_demo_names.sh check the result.
"""
import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config",
                   "grafana-dashboards")

PROM = {"type": "prometheus", "uid": "${ds_prometheus}"}
LOKI = {"type": "loki", "uid": "${ds_loki}"}
TEMPO = {"type": "tempo", "uid": "${ds_tempo}"}
PYRO = {"type": "grafana-pyroscope-datasource", "uid": "${ds_pyroscope}"}

# Metric names after the collector's Prometheus translation.
HEAP_SIZE = "ghc_eventlog_HeapSize_bytes"
BLOCKS_SIZE = "ghc_eventlog_BlocksSize_bytes"
HEAP_LIVE = "ghc_eventlog_HeapLive_bytes"
HEAP_PROF = "ghc_eventlog_HeapProfSample_bytes"
HEAP_ALLOC = "ghc_eventlog_HeapAllocated_bytes_total"
CAP_USAGE = "ghc_eventlog_CapabilityUsageDuration_nanoseconds_total"
MEM_CURRENT = "ghc_eventlog_MemCurrent"
MEM_NEEDED = "ghc_eventlog_MemNeeded"
MEM_RETURNED = "ghc_eventlog_MemReturned"
GC_COPIED = "ghc_eventlog_GcCopied_bytes"
GC_SLOP = "ghc_eventlog_GcSlop_bytes"
GC_FRAG = "ghc_eventlog_GcFragmentation_bytes"
PRODUCTIVITY = "ghc_eventlog_Productivity_percent"

CC_PROFILE_TYPES = ["ghc_eventlog_CostCentreStackProfile:cpu:samples::",
                    "ghc_eventlog_CostCentreProfile:cpu:samples::",
                    "process_cpu:stack:samples::"]
CS_PROFILE_TYPES = ["ghc_eventlog_CallStackProfile:cpu:samples::",
                    "ghc_eventlog_StackSampleProfile:cpu:samples::",
                    "process_cpu:stack:samples::"]


class Ids:
    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return self.n


# ---------------------------------------------------------------- variables

def ds_var(name, label, plugin, default):
    # current: the demo's provisioned datasource (name, uid); elsewhere
    # Grafana falls back to the first datasource of the plugin type.
    return {"type": "datasource", "name": name, "label": label,
            "query": plugin, "regex": "", "refresh": 1, "hide": 0,
            "current": {"text": default, "value": default.lower()},
            "description": f"The {label} datasource of the dashboard."}


def text_var(name, label, default, description):
    return {"type": "textbox", "name": name, "label": label,
            "query": default, "hide": 0, "description": description,
            "current": {"text": default, "value": default},
            "options": [{"selected": True, "text": default,
                         "value": default}]}


def custom_var(name, label, values, description):
    return {"type": "custom", "name": name, "label": label,
            "query": ",".join(v.replace(",", "\\,") for v in values),
            "multi": False, "includeAll": False, "hide": 0,
            "description": description,
            "current": {"text": values[0], "value": values[0]},
            "options": [{"selected": i == 0, "text": v, "value": v}
                        for i, v in enumerate(values)]}


def prom_query_var(name, label, query, multi, default, description,
                   refresh=2):
    cur = [default] if multi else default
    return {"type": "query", "name": name, "label": label,
            "datasource": PROM, "definition": query,
            "query": {"qryType": 1, "query": query,
                      "refId": "PrometheusVariableQueryEditor-VariableQuery"},
            "multi": multi, "includeAll": False, "allowCustomValue": True,
            "refresh": refresh, "sort": 1, "regex": "", "hide": 0,
            "description": description, "options": [],
            "current": {"text": cur, "value": cur}}


def service_var_prom(metric):
    return prom_query_var(
        "service_name", "Service", f"label_values({metric}, service_name)",
        True, "oddball",
        "The monitored programs (OTEL service.name, Prometheus label "
        "service_name); one row per selected service.")


CONTROL_VAR = text_var(
    "control_url", "Control server", "http://localhost:30719",
    "Base URL of eventlog-live-otelcol's control server (--control "
    "--control-port=PORT); the buttons POST to it from the browser.")


# ------------------------------------------------------------------- panels

def target(expr, legend, ref, instant=False):
    t = {"refId": ref, "datasource": PROM, "expr": expr,
         "legendFormat": legend, "editorMode": "code",
         "range": not instant, "instant": instant}
    return t


def timeseries(ids, title, grid, targets, unit, stack=None, fill=10,
               description="", transformations=None, minimum=0,
               maximum=None):
    custom = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": fill,
              "showPoints": "never", "spanNulls": False,
              "stacking": {"mode": stack or "none", "group": "A"}}
    defaults = {"unit": unit, "custom": custom,
                "color": {"mode": "palette-classic"}}
    if minimum is not None:
        defaults["min"] = minimum
    if maximum is not None:
        defaults["max"] = maximum
    p = {"type": "timeseries", "id": ids(), "title": title,
         "description": description, "datasource": PROM, "gridPos": grid,
         "targets": targets,
         "fieldConfig": {"defaults": defaults, "overrides": []},
         "options": {"legend": {"displayMode": "list", "placement": "bottom",
                                "showLegend": True, "calcs": []},
                     "tooltip": {"mode": "multi", "sort": "desc",
                                 "hideZeros": True}}}
    if transformations:
        p["transformations"] = transformations
    return p


def gauge(ids, title, grid, targets, unit, description=""):
    return {"type": "gauge", "id": ids(), "title": title,
            "description": description, "datasource": PROM, "gridPos": grid,
            "targets": targets,
            "fieldConfig": {"defaults": {
                "unit": unit, "min": 0, "max": 1,
                "thresholds": {"mode": "absolute", "steps": [
                    {"color": "red", "value": None},
                    {"color": "orange", "value": 0.5},
                    {"color": "green", "value": 0.8}]}},
                "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"],
                                          "fields": "", "values": False},
                        "showThresholdLabels": False,
                        "showThresholdMarkers": True}}


def logs_panel(ids, title, grid, expr, description=""):
    return {"type": "logs", "id": ids(), "title": title,
            "description": description, "datasource": LOKI,
            "gridPos": grid,
            "targets": [{"refId": "A", "datasource": LOKI, "expr": expr,
                         "queryType": "range", "maxLines": 500,
                         "direction": "backward", "editorMode": "code"}],
            "options": {"showTime": True, "showLabels": False,
                        "showCommonLabels": False, "wrapLogMessage": True,
                        "prettifyLogMessage": False,
                        "enableLogDetails": True, "dedupStrategy": "none",
                        "sortOrder": "Descending"}}


def button(name, text, path, toast, left):
    return {"type": "button", "name": name,
            "config": {
                "text": {"mode": "fixed", "fixed": text},
                "align": "center", "size": 14,
                "color": {"fixed": "#F0F4FD"},
                "style": {"variant": "destructive"},
                "api": {"method": "POST",
                        "endpoint": "${control_url}" + path,
                        "contentType": "application/x-www-form-urlencoded",
                        "data": "service-name=${service_name}",
                        "headerParams": [], "queryParams": [],
                        "successMessage": toast}},
            "constraint": {"horizontal": "left", "vertical": "top"},
            "placement": {"left": left, "top": 0, "width": 200,
                          "height": 36, "rotation": 0},
            "background": {"color": {"fixed": "transparent"}},
            "border": {"color": {"fixed": "transparent"}}}


def controls(ids, grid, buttons, description):
    """A transparent canvas panel of buttons that POST to the control
    server (reference-behaviour §8.2) with service-name=<row's service>."""
    elements = [button(n, t, p, s, i * 210)
                for i, (n, t, p, s) in enumerate(buttons)]
    return {"type": "canvas", "id": ids(), "title": "",
            "description": description, "transparent": True,
            "gridPos": grid, "targets": [{"refId": "A"}],
            "fieldConfig": {"defaults": {}, "overrides": []},
            "options": {"inlineEditing": False, "showAdvancedTypes": True,
                        "panZoom": False, "infinitePan": False,
                        "root": {"type": "frame", "name": "Controls",
                                 "elements": elements,
                                 "background": {"color": {
                                     "fixed": "transparent"}},
                                 "border": {"color": {
                                     "fixed": "transparent"}},
                                 "constraint": {"horizontal": "left",
                                                "vertical": "top"},
                                 "placement": {"left": 0, "top": 0,
                                               "width": 100,
                                               "height": 100}}}}


def row(ids, title, y, repeat=None, collapsed=False, panels=None):
    r = {"type": "row", "id": ids(), "title": title, "collapsed": collapsed,
         "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
         "panels": panels or []}
    if repeat:
        r["repeat"] = repeat
    return r


def grid(x, y, w, h):
    return {"x": x, "y": y, "w": w, "h": h}


def dashboard(uid, title, description, variables, panels, refresh="5s",
              time_from="now-15m", annotations=None, tags=None):
    ann = [{"builtIn": 1, "datasource": {"type": "grafana",
                                          "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]
    ann += annotations or []
    return {"uid": uid, "title": title, "description": description,
            "tags": ["eventlog-live"] + (tags or []),
            "editable": True, "graphTooltip": 1, "schemaVersion": 41,
            "version": 1, "refresh": refresh, "timezone": "browser",
            "time": {"from": time_from, "to": "now"}, "timepicker": {},
            "fiscalYearStartMonth": 0, "liveNow": False,
            "links": [{"title": "eventlog-live", "type": "dashboards",
                       "tags": ["eventlog-live"], "asDropdown": True,
                       "includeVars": True, "keepTime": True}],
            "annotations": {"list": ann},
            "templating": {"list": variables},
            "panels": panels}


# --------------------------------------------------------------- dashboards

def heap():
    ids = Ids()
    sel = 'service_name="${service_name}"'
    prof = (f'{HEAP_PROF}{{{sel},'
            'heapProfBreakdown=~"${heap_prof_breakdown:regex}"}')
    # Sum away everything but the label (the collector config already drops
    # the per-census attributes heapProfSampleEra, heapProfId and evCap).
    cur = f"sum by(service_name, heapProfLabel) ({prof})"
    top = ("topk(${heap_prof_sample_limit}, "
           "sum by(service_name, heapProfLabel) (sum_over_time(" + prof +
           "[${__range}] @ ${__to:date:seconds})))")
    heap_expr = (f"({cur} and {top})\nor\n"
                 f"label_replace(sum by(service_name) ({cur} unless {top}),"
                 ' "heapProfLabel", "Other", "", "")')
    variables = [
        ds_var("ds_prometheus", "Prometheus", "prometheus", "Prometheus"),
        ds_var("ds_loki", "Loki", "loki", "Loki"),
        service_var_prom(HEAP_SIZE),
        dict(prom_query_var(
            "heap_prof_breakdown", "Heap profile breakdown",
            f'label_values({HEAP_PROF}{{service_name=~"${{service_name}}"}}'
            ", heapProfBreakdown)", True, "$__all",
            "The heap profile breakdowns to show (+RTS -hT, -hy, ...; the "
            "daemon must be given the same -h option). A program has one, "
            "so All shows each program's own.", refresh=2),
            includeAll=True, allValue=".*",
            current={"text": ["All"], "value": ["$__all"]}),
        text_var("heap_prof_sample_limit", "Heap profile top N", "10",
                 "How many heap profile series to show; the rest is "
                 "summed into one series named Other."),
        text_var("user_marker_filter", "User marker filter", ".*",
                 "A regular expression (RE2) selecting the user markers "
                 "drawn as annotations (enable UserMarker above)."),
        CONTROL_VAR,
    ]
    annotations = [{
        "name": "UserMarker", "enable": True, "hide": False,
        "iconColor": "red", "datasource": LOKI,
        "expr": ('{service_name=~"${service_name:regex}"} '
                 '| kind = `UserMarker` |~ `${user_marker_filter}`'),
        "queryType": "range", "instant": False,
        "textFormat": "{{service_name}}: {{__line__}}",
        "titleFormat": "UserMarker"}]
    panels = [
        row(ids, "Overview", 0, collapsed=True, panels=[
            timeseries(ids, "Heap size of every selected service",
                       grid(0, 1, 24, 8),
                       [target(f'max by(service_name) ({HEAP_SIZE}'
                               '{service_name=~"${service_name:regex}"})',
                               "{{service_name}}", "A")], "bytes")]),
        row(ids, "${service_name}", 1, repeat="service_name"),
        timeseries(
            ids, "Heap profile for ${service_name}", grid(0, 2, 12, 27),
            [target(heap_expr, "{{heapProfLabel}}", "A")], "bytes",
            stack="normal", fill=100,
            description="Residency by heap profile label (closure type for "
                        "-hT, type for -hy, ...). The top N labels over the "
                        "visible range are shown as they are, all others "
                        "summed into Other. Needs +RTS -l -h<x> in the "
                        "program and the same -h<x> for the daemon."),
        timeseries(
            ids, "Heap size for ${service_name}", grid(12, 2, 12, 9),
            [target(f'avg({HEAP_SIZE}{{{sel}}})', "HeapSize", "A"),
             target(f'avg({BLOCKS_SIZE}{{{sel}}})', "BlocksSize", "B"),
             target(f'avg({HEAP_LIVE}{{{sel}}})', "HeapLive", "C")],
            "bytes",
            description="Heap size (megablocks), blocks size (blocks in "
                        "use) and live data after the last major GC."),
        timeseries(
            ids, "Memory management (MemReturn) for ${service_name}",
            grid(12, 11, 12, 9),
            [target(f'avg({MEM_CURRENT}{{{sel}}})', "Current", "A"),
             target(f'avg({MEM_NEEDED}{{{sel}}})', "Needed", "B"),
             target(f'avg({MEM_RETURNED}{{{sel}}})', "Returned", "C")],
            "short",
            description="Megablocks (1 MiB) currently allocated, needed, "
                        "and being returned to the operating system "
                        "(MemReturn events, GHC 9.2 and later)."),
        timeseries(
            ids, "Allocation rate for ${service_name}", grid(12, 20, 12, 9),
            [target(f'sum by(service_name) (rate({HEAP_ALLOC}{{{sel}}}'
                    '[$__rate_interval]))', "allocated", "A")],
            "Bps",
            description="Bytes allocated per second, from the cumulative "
                        "HeapAllocated counter."),
        timeseries(
            ids, "GC statistics for ${service_name}", grid(0, 29, 24, 9),
            [target(f'max by(service_name) ({GC_COPIED}{{{sel}}})',
                    "Copied", "A"),
             target(f'max by(service_name) ({GC_SLOP}{{{sel}}})',
                    "Slop", "B"),
             target(f'max by(service_name) ({GC_FRAG}{{{sel}}})',
                    "Fragmentation", "C")],
            "bytes",
            description="Bytes copied by the last garbage collection, and "
                        "the slop and fragmentation it found (GC stats "
                        "events; the largest over the capabilities)."),
        controls(ids, grid(0, 38, 24, 2), [
            ("StartHeapProfiling", "Start heap profiling",
             "/control/eventlog-socket/start-heap-profiling",
             "Requested heap profiling start"),
            ("StopHeapProfiling", "Stop heap profiling",
             "/control/eventlog-socket/stop-heap-profiling",
             "Requested heap profiling stop"),
            ("RequestHeapCensus", "Request heap census",
             "/control/eventlog-socket/request-heap-census",
             "Requested heap census")],
            "Sent by eventlog-live-otelcol's control server to the "
            "program over eventlog-socket (program built with "
            "eventlog-socket +control)."),
    ]
    return dashboard(
        "a1d17d5b-a204-49b7-83a5-8d56afc7424b", "Heap",
        "Heap profile, heap size, memory management, allocation rate and "
        "GC statistics of Haskell programs monitored by "
        "eventlog-live-otelcol.",
        variables, panels, refresh="5s", time_from="now-5m",
        annotations=annotations, tags=["heap"])


def logs():
    ids = Ids()
    svc = {"type": "query", "name": "service_name", "label": "Service",
           "datasource": LOKI,
           "definition": "label_values(service_name)",
           "query": {"type": 1, "label": "service_name", "stream": "",
                     "refId": "LokiVariableQueryEditor-VariableQuery"},
           "regex": "/^(?!eventlog-live).*/",
           "multi": True, "includeAll": False, "allowCustomValue": True,
           "refresh": 2, "sort": 1, "hide": 0, "options": [],
           "description": "The monitored programs (Loki stream label "
                          "service_name). The daemon's own logs are shown "
                          "next to each program's.",
           "current": {"text": ["oddball"], "value": ["oddball"]}}
    variables = [ds_var("ds_loki", "Loki", "loki", "Loki"), svc,
                 text_var("log_filter", "Line filter", ".*",
                          "A regular expression (RE2) the log lines must "
                          "match.")]
    panels = [
        row(ids, "${service_name}", 0, repeat="service_name"),
        logs_panel(ids, "Logs of ${service_name}", grid(0, 1, 12, 20),
                   '{service_name="${service_name}"} |~ `${log_filter}`',
                   "User markers (traceMarker), user messages (traceEvent) "
                   "and thread labels (labelThread) of the program; the "
                   "attribute kind tells them apart."),
        logs_panel(ids, "Daemon logs for ${service_name}",
                   grid(12, 1, 12, 20),
                   '{service_name=~"eventlog-live-otelcol-for-${service_name}"} '
                   '|~ `${log_filter}`',
                   "eventlog-live-otelcol's own log (internal_log_message) "
                   "while it monitors the program: service "
                   "eventlog-live-otelcol-for-<service>."),
    ]
    return dashboard("ad5ltk7", "Logs",
                     "Log records of Haskell programs (user markers, user "
                     "messages, thread labels) and of eventlog-live-otelcol.",
                     variables, panels, refresh="", time_from="now-1h",
                     tags=["logs"])


def profiles():
    ids = Ids()
    variables = [
        ds_var("ds_prometheus", "Prometheus", "prometheus", "Prometheus"),
        ds_var("ds_pyroscope", "Pyroscope", "grafana-pyroscope-datasource",
               "Pyroscope"),
        service_var_prom(HEAP_SIZE),
        custom_var("cost_centre_profile_type", "Cost-centre profile type",
                   CC_PROFILE_TYPES,
                   "Pyroscope profile type of the cost-centre stack "
                   "samples (+RTS -p with a profiled build)."),
        custom_var("call_stack_profile_type", "Call-stack profile type",
                   CS_PROFILE_TYPES,
                   "Pyroscope profile type of the ghc-stack-profiler "
                   "call-stack samples."),
        text_var("control_url", "Control server", "http://localhost:30720",
                 CONTROL_VAR["description"]),
    ]

    def flame(title, ptype, y, description):
        return {"type": "flamegraph", "id": ids(), "title": title,
                "description": description, "datasource": PYRO,
                "gridPos": grid(0, y, 24, 20),
                "targets": [{"refId": "A", "datasource": PYRO,
                             "queryType": "profile",
                             "profileTypeId": "${" + ptype + "}",
                             "labelSelector":
                                 '{service_name="${service_name}"}',
                             "groupBy": [], "spanSelector": []}],
                "options": {}}

    panels = [
        row(ids, "${service_name}", 0, repeat="service_name"),
        flame("Cost-centre stacks of ${service_name}",
              "cost_centre_profile_type", 1,
              "GHC cost-centre profiler samples (build with -prof "
              "-fprof-auto, run with +RTS -p -l)."),
        controls(ids, grid(0, 21, 24, 2), [
            ("StartProfiling", "Start cost-centre profiling",
             "/control/eventlog-socket/start-profiling",
             "Requested cost-centre profiling start"),
            ("StopProfiling", "Stop cost-centre profiling",
             "/control/eventlog-socket/stop-profiling",
             "Requested cost-centre profiling stop")],
            "Starts and stops the profiler's timer in the program."),
        flame("Call stacks of ${service_name}", "call_stack_profile_type",
              23,
              "ghc-stack-profiler samples (program linked with "
              "ghc-stack-profiler)."),
        controls(ids, grid(0, 43, 24, 2), [
            ("StartCallStackProfiling", "Start call-stack profiling",
             "/control/ghc-stack-profiler/1",
             "Requested call-stack profiling start"),
            ("StopCallStackProfiling", "Stop call-stack profiling",
             "/control/ghc-stack-profiler/2",
             "Requested call-stack profiling stop")],
            "ghc-stack-profiler's control commands (namespace "
            "ghc-stack-profiler, 1 = start, 2 = stop)."),
    ]
    return dashboard("ad7v28q", "Profiles",
                     "Flame graphs of GHC cost-centre stack samples and "
                     "call-stack samples, stored in Pyroscope.",
                     variables, panels, refresh="", time_from="now-15m",
                     tags=["profiles"])


def threads():
    ids = Ids()
    sel = 'service_name="${service_name}"'
    mut = f'{CAP_USAGE}{{{sel},category="Mutator"}}'
    busy = f'{CAP_USAGE}{{{sel},category!="Idle"}}'
    variables = [
        ds_var("ds_prometheus", "Prometheus", "prometheus", "Prometheus"),
        ds_var("ds_tempo", "Tempo", "tempo", "Tempo"),
        service_var_prom(CAP_USAGE),
    ]
    panels = [
        row(ids, "${service_name}", 0, repeat="service_name"),
        gauge(ids, "Productivity of ${service_name}", grid(0, 1, 5, 9),
              [target(f"sum(rate({mut}[1m])) / sum(rate({busy}[1m]))",
                      "Productivity", "A", instant=True)],
              "percentunit",
              description="Mutator time / (mutator + GC time) over the "
                          "last minute, from capability usage."),
        timeseries(
            ids, "Productivity of ${service_name} over time",
            grid(5, 1, 19, 9),
            [target(f"sum(rate({mut}[$__rate_interval])) / "
                    f"sum(rate({busy}[$__rate_interval]))",
                    "Productivity", "A")],
            "percentunit", maximum=1,
            description="Mutator time / (mutator + GC time)."),
        timeseries(
            ids, "Capability usage of ${service_name}", grid(0, 10, 24, 9),
            [target(f"sum by(category) (rate({CAP_USAGE}{{{sel}}}"
                    "[$__rate_interval])) / 1e9", "{{category}}", "A")],
            "short", stack="normal", fill=60,
            description="Capabilities busy with the mutator, with GC, or "
                        "idle (capability-seconds per second)."),
        timeseries(
            ids, "Productivity per capability of ${service_name}",
            grid(0, 28, 24, 9),
            [target(f'avg by(cap) ({PRODUCTIVITY}{{{sel}}})',
                    "cap {{cap}}", "A")],
            "percent", maximum=100,
            description="Each capability's mutator time as a percentage of "
                        "its mutator and GC time since the program "
                        "started (the productivity metric)."),
        {"type": "table", "id": ids(), "title": "Thread traces of "
                                                 "${service_name}",
         "description": "Thread state spans (running, blocked) in Tempo; "
                        "enable traces.thread_state in the daemon's "
                        "configuration. Click a trace ID to open it.",
         "datasource": TEMPO, "gridPos": grid(0, 19, 24, 9),
         "targets": [{"refId": "A", "datasource": TEMPO,
                      "queryType": "traceql", "tableType": "traces",
                      "limit": 20,
                      "query": '{resource.service.name="${service_name}" '
                               '&& name=~"ghc_eventlog_ThreadState '
                               '(Running|Blocked)"}'}],
         "fieldConfig": {"defaults": {}, "overrides": []}, "options": {}},
    ]
    return dashboard("aa8c5f9f-b641-493d-bbe2-31e1b4ea71ed", "Threads",
                     "Productivity and capability usage (mutator, GC, idle) "
                     "of Haskell programs, and their thread traces.",
                     variables, panels, refresh="5s", time_from="now-15m",
                     tags=["threads"])


DASHBOARDS = {"heap.json": heap, "logs.json": logs,
              "profiles.json": profiles, "threads.json": threads}


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name, build in DASHBOARDS.items():
        text = json.dumps(build(), indent=2, sort_keys=True) + "\n"
        path = os.path.join(OUT, name)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name)
            except OSError:
                stale.append(name)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if stale:
        print("out of date (run demo/tools/gen-dashboards.py): "
              + " ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
