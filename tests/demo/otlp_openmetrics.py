#!/usr/bin/env python3
"""Write the series Prometheus would scrape from the demo's collector for
the OTLP metrics our daemon sent, as an OpenMetrics file for
`promtool tsdb create-blocks-from openmetrics`.

    otlp_openmetrics.py OUT.om INPUT.jsonl...

Prints a JSON object: service name -> time (s) just after its last sample.

Emulates demo/config/otelcol.yaml: the transform/ghc processor (drops
heapProfSampleEra, heapProfId, and evCap of gauges), the Prometheus
exporter's naming (otlp_prom_names.py) with
resource_to_telemetry_conversion (resource attributes become labels, job =
service.name), gauges as gauges and cumulative monotonic sums as counters.
Samples keep the data points' own timestamps (eventlog time).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otlp_prom_names import get, prom_label, prom_metric_name  # noqa: E402


def attrs(lst):
    out = {}
    for kv in lst or []:
        v = kv.get("value") or {}
        if not v:
            continue
        (_, val), = v.items()
        out[kv["key"]] = str(val)
    return out


def esc(v):
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def main():
    out_path, inputs = sys.argv[1], sys.argv[2:]
    families = {}   # base name -> (type, {labels tuple: {t: value}})
    t_end = {}   # service -> last sample time (ns)
    for path in inputs:
        for line in open(path, encoding="utf-8"):
            if not line.startswith("{"):
                continue
            doc = json.loads(line)
            req = doc.get("request", doc) or {}
            for rm in get(req, "resourceMetrics") or []:
                res = attrs((get(rm, "resource") or {}).get("attributes"))
                svc = res.get("service.name")
                base = {prom_label(k): v for k, v in res.items()}
                if svc:
                    base["job"] = svc
                for sm in get(rm, "scopeMetrics") or []:
                    for m in sm.get("metrics") or []:
                        if "gauge" in m:
                            kind, data, mono = "gauge", m["gauge"], False
                        elif "sum" in m:
                            kind, data = "sum", m["sum"]
                            mono = bool(get(data, "isMonotonic"))
                        else:
                            continue
                        name = prom_metric_name(m["name"], m.get("unit", ""),
                                                kind, mono)
                        ftype = "counter" if kind == "sum" and mono \
                            else "gauge"
                        fam = name[:-len("_total")] \
                            if ftype == "counter" else name
                        series = families.setdefault(fam, (ftype, {}))[1]
                        for dp in get(data, "dataPoints") or []:
                            a = attrs(dp.get("attributes"))
                            for k in ("heapProfSampleEra", "heapProfId"):
                                a.pop(k, None)
                            if kind == "gauge":
                                a.pop("evCap", None)
                            labels = dict(base)
                            labels.update({prom_label(k): v
                                           for k, v in a.items()})
                            t = int(get(dp, "timeUnixNano") or 0)
                            if t <= 0:
                                continue
                            v = get(dp, "asInt")
                            v = float(v if v is not None
                                      else get(dp, "asDouble") or 0)
                            key = tuple(sorted(labels.items()))
                            series.setdefault(key, {})[t // 1000000] = v
                            t_end[svc] = max(t_end.get(svc, 0), t)
    with open(out_path, "w", encoding="utf-8") as f:
        for fam, (ftype, series) in sorted(families.items()):
            f.write(f"# TYPE {fam} {ftype}\n")
            sname = fam + "_total" if ftype == "counter" else fam
            for key, points in sorted(series.items()):
                lab = ",".join(f'{k}="{esc(v)}"' for k, v in key)
                for t_ms, v in sorted(points.items()):
                    f.write(f"{sname}{{{lab}}} {v!r} {t_ms / 1000:.3f}\n")
        f.write("# EOF\n")
    print(json.dumps({s: t // 1000000000 + 1 for s, t in t_end.items()
                      if s}, sort_keys=True))


if __name__ == "__main__":
    main()
