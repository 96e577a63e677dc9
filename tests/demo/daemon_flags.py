#!/usr/bin/env python3
"""Print every eventlog-live-otelcol option the demo and the example run
scripts pass to the daemon, one per line (for test_demo_names.sh, which
checks them against the daemon's --help).

    daemon_flags.py REPO_DIR
"""
import glob
import os
import re
import sys

import yaml

repo = sys.argv[1]
flags = set()
compose = yaml.safe_load(open(os.path.join(repo, "demo/docker-compose.yml")))
for name, svc in compose["services"].items():
    b = svc.get("build")
    if isinstance(b, dict) and b.get("dockerfile") == "demo/Dockerfile":
        for arg in svc.get("command") or []:
            if str(arg).startswith("-"):
                flags.add(str(arg).split("=")[0])
for path in glob.glob(os.path.join(repo, "examples/haskell/*/*.sh")):
    text = open(path).read()
    blocks = re.findall(r"daemon=\((.*?)\)\n", text, re.S)
    blocks += re.findall(r'show_run "\$EL_OTELCOL"(.*?[^\\])\n', text, re.S)
    if not blocks:
        print(f"{path}: no daemon command line found", file=sys.stderr)
        sys.exit(1)
    for b in blocks:
        flags.update(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", b))
for f in sorted(flags):
    print(f)
