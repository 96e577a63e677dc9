#!/usr/bin/env python3
"""Static checks of the demo's Docker Compose files and configurations.

    check_configs.py REPO_DIR

Checks (no Docker engine needed):
  * every YAML file under demo/ and examples/ parses;
  * both compose files have services, every image is pinned to an exact
    version (a tag with a digit, never latest, or a digest), every service
    has an image or a build whose Dockerfile exists, every bind-mounted host
    path exists, named volumes are declared;
  * the backend services of docker-compose-external.yml are the same as
    those of docker-compose.yml;
  * the collector config wires receivers/processors/exporters that exist,
    raises max_recv_msg_size_mib, has a profiles pipeline, and the compose
    file turns on the service.profilesSupport feature gate;
  * Grafana provisioning: datasources have unique uids of the types the
    dashboards use; the dashboards provider points at the mounted folder;
  * Dockerfiles: every FROM image pinned; demo/Dockerfile runs
    scripts/setup.sh.
Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import sys

import yaml

errors = []


def err(msg):
    errors.append(msg)
    print("FAIL: " + msg)


def pinned(image):
    if "@sha256:" in image:
        return True
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return False
    return tag != "latest" and re.search(r"\d", tag) is not None


def load_yaml(path):
    try:
        with open(path, encoding="utf-8") as f:
            docs = list(yaml.safe_load_all(f))
    except (OSError, yaml.YAMLError) as e:
        err(f"{path}: does not parse: {e}")
        return None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        err(f"{path}: expected one YAML mapping, got {len(docs)} documents")
        return None
    return docs[0]


def check_compose(repo, rel):
    path = os.path.join(repo, rel)
    base = os.path.dirname(path)
    doc = load_yaml(path)
    if doc is None:
        return {}
    services = doc.get("services")
    if not isinstance(services, dict) or not services:
        err(f"{rel}: no services")
        return {}
    declared = set((doc.get("volumes") or {}).keys())
    for name, svc in services.items():
        where = f"{rel}: service {name}"
        if not isinstance(svc, dict):
            err(f"{where}: not a mapping")
            continue
        if "image" in svc:
            if not pinned(str(svc["image"])):
                err(f"{where}: image {svc['image']} is not pinned")
        elif "build" in svc:
            b = svc["build"]
            ctx = b if isinstance(b, str) else b.get("context", ".")
            df = "Dockerfile" if isinstance(b, str) else \
                b.get("dockerfile", "Dockerfile")
            dpath = os.path.normpath(os.path.join(base, ctx, df))
            if not os.path.isfile(dpath):
                err(f"{where}: Dockerfile {dpath} missing")
        else:
            err(f"{where}: neither image nor build")
        for v in svc.get("volumes") or []:
            if not isinstance(v, str):
                err(f"{where}: long volume syntax not checked: {v}")
                continue
            src = v.split(":")[0]
            if src.startswith(".") or src.startswith("/"):
                hp = os.path.normpath(os.path.join(base, src))
                if not os.path.exists(hp):
                    err(f"{where}: bind mount source {src} missing")
            elif src not in declared:
                err(f"{where}: named volume {src} not declared")
        for p in svc.get("ports") or []:
            if not re.fullmatch(r"(\d+\.\d+\.\d+\.\d+:)?(\d+:)?\d+", str(p)):
                err(f"{where}: odd port mapping {p}")
        deps = svc.get("depends_on") or []
        for d in (deps if isinstance(deps, list) else deps.keys()):
            if d not in services:
                err(f"{where}: depends on unknown service {d}")
    return services


def check_collector(repo, services):
    rel = "demo/config/otelcol.yaml"
    doc = load_yaml(os.path.join(repo, rel))
    if doc is None:
        return
    kinds = {k: set((doc.get(k) or {}).keys())
             for k in ("receivers", "processors", "exporters", "extensions")}
    grpc = (((doc.get("receivers") or {}).get("otlp") or {})
            .get("protocols") or {}).get("grpc") or {}
    if (grpc.get("max_recv_msg_size_mib") or 0) <= 4:
        err(f"{rel}: otlp gRPC max_recv_msg_size_mib not raised above 4")
    svc = doc.get("service") or {}
    for e in svc.get("extensions") or []:
        if e not in kinds["extensions"]:
            err(f"{rel}: service uses undefined extension {e}")
    pipes = svc.get("pipelines") or {}
    for sig in ("metrics", "logs", "traces", "profiles"):
        if sig not in pipes:
            err(f"{rel}: no {sig} pipeline")
    for pname, p in pipes.items():
        for k in ("receivers", "processors", "exporters"):
            for comp in p.get(k) or []:
                if comp not in kinds[k]:
                    err(f"{rel}: pipeline {pname} uses undefined {k[:-1]} "
                        f"{comp}")
        if not p.get("receivers") or not p.get("exporters"):
            err(f"{rel}: pipeline {pname} lacks receivers or exporters")
    used = set()
    for p in pipes.values():
        for k in ("receivers", "processors", "exporters"):
            used.update(p.get(k) or [])
    for k in ("receivers", "processors", "exporters"):
        for comp in kinds[k] - used:
            err(f"{rel}: {k[:-1]} {comp} defined but unused")
    # Exporter endpoints name services of the compose file.
    for name, cfg in (doc.get("exporters") or {}).items():
        ep = str((cfg or {}).get("endpoint", ""))
        host = re.sub(r"^[a-z]+://", "", ep).split(":")[0].split("/")[0]
        if host not in ("0.0.0.0", "localhost", "") and host not in services:
            err(f"{rel}: exporter {name} sends to {host}, not a service")
    cmd = " ".join(services.get("otelcol", {}).get("command") or [])
    if "service.profilesSupport" not in cmd:
        err("otelcol service: --feature-gates=service.profilesSupport "
            "missing")
    prom = load_yaml(os.path.join(repo, "demo/config/prometheus.yaml"))
    ep = str(((doc.get("exporters") or {}).get("prometheus") or {})
             .get("endpoint", ""))
    port = ep.rsplit(":", 1)[-1]
    targets = []
    for sc in (prom or {}).get("scrape_configs") or []:
        for st in sc.get("static_configs") or []:
            targets += st.get("targets") or []
    if f"otelcol:{port}" not in targets:
        err(f"prometheus.yaml does not scrape the collector's exporter "
            f"otelcol:{port} (targets {targets})")


def check_grafana(repo):
    ds = load_yaml(os.path.join(repo,
                                "demo/config/grafana-datasources.yaml"))
    types = set()
    uids = []
    for d in (ds or {}).get("datasources") or []:
        for k in d:
            if k not in ("name", "type", "uid", "access", "url",
                         "isDefault", "jsonData", "editable", "orgId"):
                err(f"grafana-datasources.yaml: unknown key {k} in "
                    f"{d.get('name')}")
        types.add(d.get("type"))
        uids.append(d.get("uid"))
    if len(set(uids)) != len(uids) or None in uids:
        err(f"grafana-datasources.yaml: datasource uids missing or not "
            f"unique: {uids}")
    want = {"prometheus", "loki", "tempo", "grafana-pyroscope-datasource"}
    if not want <= types:
        err(f"grafana-datasources.yaml: missing types {want - types}")
    prov = load_yaml(os.path.join(repo, "demo/config/grafana-dashboards.yaml"))
    paths = [(p.get("options") or {}).get("path")
             for p in (prov or {}).get("providers") or []]
    if "/var/lib/grafana/dashboards" not in paths:
        err("grafana-dashboards.yaml: no provider for "
            "/var/lib/grafana/dashboards")


def check_dockerfiles(repo):
    for name in ("Dockerfile", "Dockerfile.example"):
        path = os.path.join(repo, "demo", name)
        try:
            text = open(path, encoding="utf-8").read()
        except OSError:
            err(f"demo/{name} missing")
            continue
        froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
        if not froms:
            err(f"demo/{name}: no FROM")
        for f in froms:
            if not pinned(f):
                err(f"demo/{name}: base image {f} not pinned")
        for src in re.findall(r"^COPY\s+(?!--from)(\S+)\s", text, re.M):
            if src != "." and not os.path.exists(os.path.join(repo, src)):
                err(f"demo/{name}: COPY source {src} missing")
    text = open(os.path.join(repo, "demo/Dockerfile"), encoding="utf-8").read()
    if "scripts/setup.sh" not in text:
        err("demo/Dockerfile does not use scripts/setup.sh")


def main():
    repo = sys.argv[1]
    for top in ("demo", "examples"):
        for d, _, files in os.walk(os.path.join(repo, top)):
            for f in files:
                if f.endswith((".yaml", ".yml")):
                    load_yaml(os.path.join(d, f))
    full = check_compose(repo, "demo/docker-compose.yml")
    ext = check_compose(repo, "demo/docker-compose-external.yml")
    for name, svc in ext.items():
        if full.get(name) != svc:
            err(f"service {name} differs between docker-compose.yml and "
                f"docker-compose-external.yml")
    for name, svc in full.items():
        if "build" not in svc and name not in ext:
            err(f"backend service {name} missing from "
                f"docker-compose-external.yml")
    check_collector(repo, full)
    check_grafana(repo)
    check_dockerfiles(repo)
    print(f"check_configs: {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
