#!/usr/bin/env python3
"""Turn OTLP telemetry into the names the demo's backends show.

    otlp_prom_names.py [--defaults DEFAULTS.yaml] OUT.json INPUT.jsonl...

INPUT: JSON lines, each an OTLP/JSON export request (resourceMetrics,
resourceLogs, resourceSpans) or a line of the test receiver
(tests/receiver: {"signal": ..., "request": {...}, "decoded_text": ...}).
Both camelCase and snake_case field names are accepted.

OUT: JSON with
  metrics        Prometheus metric name -> sorted label names
  extra_labels   labels every series carries (resource attributes, job,
                 instance, otel_scope_*)
  loki_labels    Loki stream labels and structured metadata of our logs
  log_services   the service.name values of our logs (programs, and
                 the daemon's own eventlog-live-otelcol-for-<service>)
  services       the service.name values of all our telemetry
  span_names     span names
  profile_types  Pyroscope profile type ids <__name__>:<type>:<unit>::

Metric names follow the OpenTelemetry Collector's Prometheus exporter
(pkg/translator/prometheus, with metric suffixes, as in collector-contrib
0.140): the name is split into tokens at every character outside
[a-zA-Z0-9:]; the unit's Prometheus word is appended unless the unit has a
{annotation} or the word is already a token (per-units add "per_<unit>");
monotonic sums get "_total" (moved to the end), gauges of unit "1" get
"_ratio"; tokens are joined with "_". Label names: every character outside
[a-zA-Z0-9_] becomes "_", a leading digit gets the prefix "key_", a single
leading underscore the prefix "key". With resource_to_telemetry_conversion
(demo/config/otelcol.yaml) every resource attribute becomes a label
(service.name -> service_name), besides job (service.name) and instance.
"""
import json
import re
import sys

UNITS = {
    "d": "days", "h": "hours", "min": "minutes", "s": "seconds",
    "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
    "By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes",
    "GiBy": "gibibytes", "TiBy": "tibibytes", "KBy": "kilobytes",
    "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
    "m": "meters", "V": "volts", "A": "amperes", "J": "joules",
    "W": "watts", "g": "grams", "Cel": "celsius", "Hz": "hertz",
    "%": "percent", "1": "",
}
PER_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day",
             "w": "week", "mo": "month", "y": "year"}
# Added by the collector's Prometheus exporter to every series.
COLLECTOR_LABELS = ["job", "instance", "otel_scope_name",
                    "otel_scope_version", "otel_scope_schema_url",
                    "__name__"]


def get(d, camel):
    """A field by its camelCase or snake_case name."""
    if camel in d:
        return d[camel]
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return d.get(snake)


def clean_unit_word(w):
    return "_".join(t for t in re.split(r"[^a-zA-Z0-9]", w) if t)


def prom_metric_name(name, unit, kind, monotonic):
    tokens = [t for t in re.split(r"[^a-zA-Z0-9:]", name) if t]
    unit = (unit or "").strip()
    main, _, per = unit.partition("/")
    main, per = main.strip(), per.strip()
    if main and "{" not in main and "}" not in main:
        word = clean_unit_word(UNITS.get(main, main))
        if word and word not in tokens:
            tokens.append(word)
    if per and "{" not in per and "}" not in per:
        word = clean_unit_word(PER_UNITS.get(per, per))
        if word and word not in tokens:
            tokens += ["per", word]
    if kind == "sum" and monotonic:
        tokens = [t for t in tokens if t != "total"] + ["total"]
    if unit == "1" and kind == "gauge":
        tokens = [t for t in tokens if t != "ratio"] + ["ratio"]
    out = "_".join(tokens)
    if out and out[0].isdigit():
        out = "_" + out
    return out


def prom_label(key):
    s = re.sub(r"[^a-zA-Z0-9_]", "_", key)
    if s and s[0].isdigit():
        s = "key_" + s
    elif s.startswith("_") and not s.startswith("__"):
        s = "key" + s
    return s


def service_names(resource_x):
    """service.name of a ResourceMetrics/ResourceLogs/... object."""
    out = []
    for a in (get(resource_x, "resource") or {}).get("attributes") or []:
        if a.get("key") == "service.name":
            out += [str(v) for v in (a.get("value") or {}).values()]
    return out


def attr_keys(attrs):
    return [a.get("key") for a in attrs or [] if a.get("key")]


def main():
    args = sys.argv[1:]
    defaults = None
    if args[:1] == ["--defaults"]:
        defaults, args = args[1], args[2:]
    out_path, inputs = args[0], args[1:]
    metrics = {}
    resource_labels = set()
    loki = set()
    log_services = set()
    services = set()
    spans = set()
    ptypes = set()
    for path in inputs:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                doc = json.loads(line)
                req = doc.get("request", doc) or {}
                for rm in get(req, "resourceMetrics") or []:
                    rattrs = attr_keys((get(rm, "resource") or {})
                                       .get("attributes"))
                    services.update(service_names(rm))
                    resource_labels.update(prom_label(k) for k in rattrs)
                    for sm in get(rm, "scopeMetrics") or []:
                        for m in sm.get("metrics") or []:
                            if "gauge" in m:
                                kind, data = "gauge", m["gauge"]
                                mono = False
                            elif "sum" in m:
                                kind, data = "sum", m["sum"]
                                mono = bool(get(data, "isMonotonic"))
                            else:
                                continue   # histograms etc.: none of ours
                            pname = prom_metric_name(m.get("name", ""),
                                                     m.get("unit", ""),
                                                     kind, mono)
                            labs = metrics.setdefault(pname, set())
                            for dp in get(data, "dataPoints") or []:
                                labs.update(prom_label(k) for k in
                                            attr_keys(dp.get("attributes")))
                for rl in get(req, "resourceLogs") or []:
                    rattrs = attr_keys((get(rl, "resource") or {})
                                       .get("attributes"))
                    loki.update(prom_label(k) for k in rattrs)
                    log_services.update(service_names(rl))
                    services.update(service_names(rl))
                    for sl in get(rl, "scopeLogs") or []:
                        for r in get(sl, "logRecords") or []:
                            loki.update(prom_label(k) for k in
                                        attr_keys(r.get("attributes")))
                for rs in get(req, "resourceSpans") or []:
                    for ss in get(rs, "scopeSpans") or []:
                        for s in ss.get("spans") or []:
                            spans.add(s.get("name", ""))
                ptypes.update(profile_types(doc.get("decoded_text") or ""))
    res = {
        "metrics": {k: sorted(v) for k, v in sorted(metrics.items())},
        "extra_labels": sorted(resource_labels | set(COLLECTOR_LABELS)),
        "loki_labels": sorted(loki),
        "log_services": sorted(log_services),
        "services": sorted(services),
        "span_names": sorted(spans),
    }
    if defaults:
        # Profile kinds the recorded eventlogs cannot exercise (e.g. the
        # call stacks of ghc-stack-profiler): the processor names of the
        # daemon's own defaults (--print-defaults) with the sample type and
        # unit seen on the profiles that did arrive.
        import yaml
        with open(defaults, encoding="utf-8") as f:
            conf = yaml.safe_load(f) or {}
        pnames = [(v or {}).get("name") for v in
                  ((conf.get("processors") or {}).get("profiles") or {})
                  .values()]
        seen = {tuple(t.split(":")[1:3]) for t in ptypes}
        ptypes |= {f"{n}:{t}:{u}::" for n in pnames if n for t, u in seen}
    if ptypes:
        res["profile_types"] = sorted(ptypes)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=2, sort_keys=True)
        f.write("\n")


def profile_types(text):
    """Profile type ids from a `protoc --decode` text of an
    ExportProfilesServiceRequest: <__name__ value>:<type>:<unit>::"""
    if not text:
        return set()
    strings = [bytes(s, "utf-8").decode("unicode_escape")
               for s in re.findall(r'^\s*string_table: "((?:[^"\\]|\\.)*)"',
                                   text, re.M)]

    def s(i):
        i = int(i)
        return strings[i] if i < len(strings) else ""
    names = set()
    for m in re.finditer(r'key_strindex: (\d+)\s*value \{\s*string_value: '
                         r'"((?:[^"\\]|\\.)*)"', text):
        if s(m.group(1)) == "__name__":
            names.add(m.group(2))
    types = set()
    for m in re.finditer(r"sample_type \{\s*(?:type_strindex: (\d+)\s*)?"
                         r"(?:unit_strindex: (\d+)\s*)?\}", text):
        types.add((s(m.group(1) or 0), s(m.group(2) or 0)))
    return {f"{n}:{t}:{u}::" for n in names for t, u in types}


if __name__ == "__main__":
    main()
