#!/usr/bin/env python3
"""Press every control button of the demo dashboards against a running
eventlog-live-otelcol control server, as Grafana's canvas buttons do from
the browser (POST, form-encoded service-name, Origin of the Grafana page).

    check_buttons.py DASHBOARD_DIR CONTROL_URL SERVICE [--accepted]

Passes when every button reaches a route the server knows (not 404
"no such route", not 405), the answer concerns SERVICE, and it carries
Access-Control-Allow-Origin so the browser may read it. With --accepted
(SERVICE's eventlog socket is connected) every button must be accepted
(2xx); a 503 (connection not registered yet) is retried for 10 s.
Prints the pressed buttons' endpoints in order on the last line as JSON.
"""
import time
import glob
import json
import os
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dashboards import walk  # noqa: E402

ddir, base, service = sys.argv[1:4]
accepted = "--accepted" in sys.argv[4:]
pressed = []
bad = 0
n = 0
for path in sorted(glob.glob(os.path.join(ddir, "*.json"))):
    doc = json.load(open(path, encoding="utf-8"))
    for _, node in walk(doc):
        if node.get("type") != "button":
            continue
        api = (node.get("config") or {}).get("api") or {}
        url = api["endpoint"].replace("${control_url}", base)
        data = api["data"].replace("${service_name}", service).encode()
        req = urllib.request.Request(url, data=data, method=api["method"],
                                     headers={
            "Content-Type": api["contentType"],
            "Origin": "http://localhost:3000"})
        deadline = time.time() + 10
        while True:
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    status, body, hdrs = r.status, r.read().decode(), \
                        r.headers
            except urllib.error.HTTPError as e:
                status, body, hdrs = e.code, e.read().decode(), e.headers
            if not (accepted and status == 503 and time.time() < deadline):
                break
            time.sleep(0.2)
        n += 1
        ok = status != 405 and "no such route" not in body and \
            (status < 400 or service in body) and \
            hdrs.get("Access-Control-Allow-Origin") is not None
        if accepted:
            ok = ok and 200 <= status < 300
            pressed.append(api["endpoint"].replace("${control_url}", ""))
        print(f"{'ok' if ok else 'FAIL'}: {os.path.basename(path)} "
              f"{node.get('name')}: POST {url} -> {status} {body[:80]}")
        bad += not ok
print(f"check_buttons: {n} buttons, {bad} problem(s)")
print(json.dumps(pressed))
sys.exit(1 if bad or n == 0 else 0)
