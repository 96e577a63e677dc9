#!/usr/bin/env python3
"""Check the demo's Grafana dashboards.

    check_dashboards.py DIR [--prometheus URL] [--names NAMES.json]

Always: every *.json parses and is a dashboard (unique uid and title,
panels with unique ids), every template variable used is defined, every
datasource is chosen through a datasource variable of the right type,
every control button POSTs service-name=${service_name} to a control
server route of reference-behaviour.md §8.2 under ${control_url}.

With --prometheus URL: every PromQL expression (panel targets, variable
queries, with Grafana variables replaced by sample values) is sent to that
real Prometheus server's /api/v1/query; a parse error fails the check.

With --prometheus URL --data SERVICES.json (Prometheus loaded with the
series our telemetry gives, see otlp_openmetrics.py; SERVICES.json maps
each recorded service to the time of its last sample): every expression
must return data for at least one recorded service, evaluated at that
service's end time with $service_name set to it.

With --names FILE (written by otlp_prom_names.py from our own telemetry):
every metric name and label name in the PromQL expressions and legends,
every Loki label and structured-metadata name, every span name pattern of
the TraceQL queries and every default profile type must be one that our
telemetry produces after the collector's naming.
"""
import argparse
import glob
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promql_names  # noqa: E402

errors = []


def err(msg):
    errors.append(msg)
    print("FAIL: " + msg)


BUILTIN_VARS = {"__range": "15m", "__range_s": "900", "__interval": "15s",
                "__interval_ms": "15000", "__rate_interval": "1m",
                "__to": "1700000000000", "__from": "1699999100000"}
DS_PLUGIN = {"prometheus": "prometheus", "loki": "loki", "tempo": "tempo",
             "grafana-pyroscope-datasource": "grafana-pyroscope-datasource"}
VAR_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}"
                     r"|\$([A-Za-z_][A-Za-z0-9_]*)"
                     r"|\[\[([A-Za-z_][A-Za-z0-9_]*)\]\]")
CONTROL_ROUTE = re.compile(
    r"/control/(eventlog-socket/(start-profiling|stop-profiling|"
    r"start-heap-profiling|stop-heap-profiling|request-heap-census)|"
    r"(?!eventlog-socket/)[^/]+/(25[0-5]|2[0-4]\d|1?\d?\d))")


def walk(node, path=""):
    """Yield (path, dict) for every dict in a JSON tree."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from walk(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def all_panels(dash):
    for p in dash.get("panels") or []:
        yield p
        for q in p.get("panels") or []:
            yield q


class Dash:
    def __init__(self, path, doc):
        self.path = path
        self.name = os.path.basename(path)
        self.doc = doc
        self.vars = {v.get("name"): v
                     for v in (doc.get("templating") or {}).get("list", [])}

    overrides = {}

    def sample(self, name, fmt=None):
        if name in self.overrides:
            return self.overrides[name]
        if name in BUILTIN_VARS:
            if name == "__to" and fmt == "date:seconds":
                return "1700000000"
            return BUILTIN_VARS[name]
        v = self.vars[name]
        cur = (v.get("current") or {}).get("value")
        if isinstance(cur, list):
            cur = cur[0] if cur else ""
        if cur == "$__all":
            cur = v.get("allValue") or ".*"
        if cur in (None, ""):
            cur = v.get("query") if isinstance(v.get("query"), str) else ""
        return str(cur or "x")

    def substitute(self, text):
        def rep(m):
            name = m.group(1) or m.group(3) or m.group(4)
            return self.sample(name, m.group(2))
        return VAR_REF.sub(rep, text)


def check_structure(dashes):
    uids, titles = {}, {}
    for d in dashes:
        doc = d.doc
        for k in ("uid", "title", "panels", "templating", "schemaVersion"):
            if k not in doc:
                err(f"{d.name}: no {k}")
        if doc.get("uid") in uids:
            err(f"{d.name}: uid {doc.get('uid')} also in {uids[doc['uid']]}")
        uids[doc.get("uid")] = d.name
        if doc.get("title") in titles:
            err(f"{d.name}: title also in {titles[doc['title']]}")
        titles[doc.get("title")] = d.name
        ids = [p.get("id") for p in all_panels(doc)]
        if None in ids or len(set(ids)) != len(ids):
            err(f"{d.name}: panel ids missing or repeated: {ids}")
        # Variables used are defined (or Grafana built-ins).
        for s in strings(doc):
            for m in VAR_REF.finditer(s):
                name = m.group(1) or m.group(3) or m.group(4)
                if name not in d.vars and name not in BUILTIN_VARS and \
                        name != "__all":   # Grafana's "All" selection
                    err(f"{d.name}: undefined variable ${name} in {s[:60]!r}")
        # Datasources through variables of the right type.
        for path, node in walk(doc):
            ds = node.get("datasource")
            if not isinstance(ds, dict) or ds.get("type") in ("grafana",
                                                              "datasource"):
                continue
            uid = ds.get("uid", "")
            m = re.fullmatch(r"\$\{([A-Za-z0-9_]+)\}", uid)
            if not m:
                err(f"{d.name}{path}: datasource uid {uid!r} is not a "
                    f"datasource variable")
                continue
            var = d.vars.get(m.group(1))
            if not var or var.get("type") != "datasource":
                err(f"{d.name}{path}: {uid} is not a datasource variable")
            elif DS_PLUGIN.get(ds.get("type")) != var.get("query"):
                err(f"{d.name}{path}: datasource type {ds.get('type')} but "
                    f"variable {m.group(1)} selects {var.get('query')}")
        # Control buttons.
        for path, node in walk(doc):
            if node.get("type") != "button":
                continue
            api = (node.get("config") or {}).get("api") or {}
            ep = api.get("endpoint", "")
            if not ep.startswith("${control_url}/control/"):
                err(f"{d.name}: button {node.get('name')} endpoint {ep!r} "
                    f"does not use ${{control_url}}")
            elif not CONTROL_ROUTE.fullmatch(ep[len("${control_url}"):]):
                err(f"{d.name}: button {node.get('name')}: {ep} is not a "
                    f"control server route")
            if api.get("method") != "POST" or \
                    api.get("data") != "service-name=${service_name}" or \
                    api.get("contentType") != \
                    "application/x-www-form-urlencoded":
                err(f"{d.name}: button {node.get('name')} must POST "
                    f"service-name=${{service_name}} form-encoded")


def prom_exprs(d):
    """Yield (where, expr, legend) for every PromQL expression."""
    for p in all_panels(d.doc):
        pds = (p.get("datasource") or {}).get("type")
        for t in p.get("targets") or []:
            tds = (t.get("datasource") or {}).get("type", pds)
            if tds == "prometheus" and t.get("expr"):
                yield (f"{d.name} panel {p.get('id')} {t.get('refId')}",
                       t["expr"], t.get("legendFormat", ""))
    for v in d.vars.values():
        if (v.get("datasource") or {}).get("type") == "prometheus":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            yield (f"{d.name} variable {v['name']}", q, "")
    for a in (d.doc.get("annotations") or {}).get("list", []):
        if (a.get("datasource") or {}).get("type") == "prometheus":
            yield (f"{d.name} annotation {a.get('name')}", a.get("expr"), "")


def prom_query(url, expr, t="1700000000"):
    q = urllib.parse.urlencode({"query": expr, "time": str(t)})
    try:
        with urllib.request.urlopen(f"{url}/api/v1/query?{q}",
                                    timeout=10) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        body = json.load(e)
    return body


def check_promql(dashes, url, names):
    metrics = (names or {}).get("metrics", {})
    extra = set((names or {}).get("extra_labels", []))
    count = 0
    for d in dashes:
        for where, expr, legend in prom_exprs(d):
            count += 1
            lv = promql_names.label_values_query(expr)
            if lv is not None:
                sel, lab = lv
                exprs = [sel] if sel else []
                want_labels = {lab}
            else:
                exprs, want_labels = [expr], set()
            for e in exprs:
                sub = d.substitute(e)
                if url:
                    body = prom_query(url, sub)
                    if body.get("status") != "success":
                        err(f"{where}: Prometheus rejects {sub!r}: "
                            f"{body.get('errorType')}: {body.get('error')}")
                if names is None:
                    continue
                try:
                    sels, labels = promql_names.names(sub)
                except promql_names.PromQLError as ex:
                    err(f"{where}: {ex}")
                    continue
                used_metrics = set()
                for metric, sel_labels in sels:
                    if metric is None:
                        err(f"{where}: selector without a metric name")
                        continue
                    if metric not in metrics:
                        err(f"{where}: metric {metric} is not produced by "
                            f"our telemetry")
                        continue
                    used_metrics.add(metric)
                    allowed = set(metrics[metric]) | extra
                    for lab in sel_labels:
                        if lab not in allowed:
                            err(f"{where}: {metric} has no label {lab}")
                want_labels |= labels
            if names is None:
                continue
            scope = set(extra)
            for e in exprs:
                for metric, _ in promql_names.names(d.substitute(e))[0]:
                    scope |= set(metrics.get(metric, []))
            want_labels |= set(re.findall(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}",
                                          legend))
            for lab in want_labels:
                if lab not in scope:
                    err(f"{where}: label {lab} is not produced for the "
                        f"metrics of this query")
    return count


def check_data(dashes, url, services):
    """Every PromQL expression returns data for some recorded service."""
    for d in dashes:
        for where, expr, _ in prom_exprs(d):
            lv = promql_names.label_values_query(expr)
            hits = []
            for svc, t in sorted(services.items()):
                d.overrides = {"service_name": svc, "__to": str(t)}
                e = d.substitute(lv[0] if lv else expr)
                body = prom_query(url, e, t)
                d.overrides = {}
                res = (body.get("data") or {}).get("result") or []
                if lv:
                    res = [r for r in res if lv[1] in r.get("metric", {})]
                if body.get("status") == "success" and res:
                    hits.append(svc)
            if hits:
                print(f"ok: {where}: data for {', '.join(hits)}")
            else:
                err(f"{where}: no data for any recorded service: {expr!r}")


def check_log_services(d, path, expr, services, all_services):
    """Each service_name matcher of a stream selector, with the service
    variable set to one of our programs, selects one of our log streams
    (the program's own, or the daemon's eventlog-live-otelcol-for-<program>)."""
    programs = [s for s in all_services
                if not s.startswith("eventlog-live")]
    for op, val in re.findall(r'service_name\s*(=~|=)\s*"([^"]*)"', expr):
        ok = False
        for p in programs:
            v = re.sub(r"\$\{service_name(:[^}]*)?\}|\$service_name",
                       lambda m: re.escape(p) if op == "=~" else p, val)
            if any((re.fullmatch(v, s) if op == "=~" else v == s)
                   for s in services):
                ok = True
                break
        if not ok:
            err(f"{d.name}{path}: service_name{op}\"{val}\" selects none "
                f"of our log streams {services}")


def check_other(dashes, names):
    """Loki labels/metadata, Tempo span names, Pyroscope profile types."""
    loki = set(names.get("loki_labels", []))
    spans = names.get("span_names", [])
    ptypes = names.get("profile_types")
    for d in dashes:
        for path, node in walk(d.doc):
            ds = (node.get("datasource") or {}).get("type") \
                if isinstance(node.get("datasource"), dict) else None
            if ds == "loki" and isinstance(node.get("expr"), str):
                e = d.substitute(node["expr"])
                sel = re.match(r"\s*\{([^}]*)\}", e)
                if not sel:
                    err(f"{d.name}{path}: LogQL without stream selector")
                    continue
                used = re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)",
                                  sel.group(1))
                used += re.findall(r"\|\s*([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)",
                                   e[sel.end():])
                for lab in used:
                    if lab not in loki:
                        err(f"{d.name}{path}: Loki label {lab} is not "
                            f"produced by our logs")
                check_log_services(d, path, node["expr"],
                                   names.get("log_services", []),
                                   names.get("services", []))
            if ds == "tempo" and isinstance(node.get("query"), str):
                q = d.substitute(node["query"])
                for m in re.finditer(r'(?<![\w.])name\s*(=~|=)\s*"([^"]*)"', q):
                    pat = m.group(2) if m.group(1) == "=~" \
                        else re.escape(m.group(2))
                    if not any(re.fullmatch(pat, s) for s in spans):
                        err(f"{d.name}{path}: no span of ours is named "
                            f"{m.group(2)!r} (we have {spans})")
        if ptypes is None:
            continue
        for v in d.vars.values():
            if v.get("name", "").endswith("_profile_type"):
                cur = (v.get("current") or {}).get("value")
                if cur not in ptypes:
                    err(f"{d.name}: default {v['name']} {cur!r} is not a "
                        f"profile type we produce ({ptypes})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--prometheus")
    ap.add_argument("--names")
    ap.add_argument("--data")
    a = ap.parse_args()
    dashes = []
    files = sorted(glob.glob(os.path.join(a.dir, "*.json")))
    if not files:
        err(f"no dashboards in {a.dir}")
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            err(f"{f}: not JSON: {e}")
            continue
        if not isinstance(doc, dict):
            err(f"{f}: not a JSON object")
            continue
        dashes.append(Dash(f, doc))
    check_structure(dashes)
    names = None
    if a.names:
        with open(a.names, encoding="utf-8") as fh:
            names = json.load(fh)
    n = check_promql(dashes, a.prometheus, names)
    if names is not None:
        check_other(dashes, names)
    if a.data and a.prometheus:
        with open(a.data, encoding="utf-8") as fh:
            check_data(dashes, a.prometheus, json.load(fh))
    print(f"check_dashboards: {len(dashes)} dashboards, {n} PromQL "
          f"expressions, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
