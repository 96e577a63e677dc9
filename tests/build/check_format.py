#!/usr/bin/env python3
"""Check that the C sources do not drift from .clang-format.

Usage: check_format.py [--source DIR] [--update] [-j N]

Runs `clang-format --dry-run` (version 14, Debian 12) on every .c and .h file
under src/ and tests/ and counts the places it would change. Much of the code
was wrapped by hand before .clang-format described it, so each file may keep
the count recorded in tests/build/format_baseline.txt ("count path" lines; a
file not listed must be clean). The check fails when a file goes above its
count: format the lines you changed (`git clang-format`, or
`clang-format -i FILE` for a new file). --update rewrites the baseline from
the tree as it is (after a reformat, or to take a lower count).
Exit status: 0 ok, 1 drift, 77 no clang-format 14 (counts depend on it).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = 14
HEADER = """\
# Places where clang-format (version 14) would change a file: the layout the
# file had before .clang-format described the code. tests/build/check_format.py
# fails when a file goes above its count; a file not listed must be clean.
# Rewrite with `tests/build/check_format.py --update` after formatting.
"""


def sources(root):
    out = []
    for top in ('src', 'tests'):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs
                             if x != 'node_modules' and not x.startswith('.'))
            out += [os.path.relpath(os.path.join(d, f), root)
                    for f in sorted(files) if f.endswith(('.c', '.h'))]
    return out


def count(args):
    exe, root, path = args
    r = subprocess.run([exe, '--dry-run', path], cwd=root, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0 and 'warning:' not in r.stderr:
        sys.exit(f'{exe} failed on {path}:\n{r.stderr}')
    return path, r.stderr.count('warning: code should be clang-formatted')


def read_baseline(path):
    base = {}
    if not os.path.exists(path):
        return base
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if line:
                c, p = line.split(None, 1)
                base[p] = int(c)
    return base


def find_clang_format():
    for exe in (f'clang-format-{VERSION}', 'clang-format'):
        path = shutil.which(exe)
        if not path:
            continue
        out = subprocess.run([path, '--version'], text=True,
                             stdout=subprocess.PIPE).stdout
        m = re.search(r'version (\d+)', out)
        if m and int(m.group(1)) == VERSION:
            return path
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument('--baseline',
                    default=os.path.join(HERE, 'format_baseline.txt'))
    ap.add_argument('--update', action='store_true')
    ap.add_argument('-j', type=int, default=2)
    a = ap.parse_args()
    exe = find_clang_format()
    if not exe:
        print(f'skip: clang-format {VERSION} not found (apt install '
              'clang-format on Debian 12)')
        return 77
    files = sources(a.source)
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        counts = dict(pool.map(count, [(exe, a.source, f) for f in files]))
    if a.update:
        with open(a.baseline, 'w') as f:
            f.write(HEADER)
            for p in sorted(counts):
                if counts[p]:
                    f.write(f'{counts[p]} {p}\n')
        print(f'{a.baseline}: {sum(counts.values())} places in '
              f'{sum(1 for c in counts.values() if c)} files')
        return 0
    base = read_baseline(a.baseline)
    bad = [(p, c, base.get(p, 0)) for p, c in sorted(counts.items())
           if c > base.get(p, 0)]
    for p, c, b in bad:
        print(f'{p}: clang-format would change {c} places, {b} allowed '
              f'(see `clang-format --dry-run {p}`; format what you changed '
              f'with `git clang-format`, a new file with `clang-format -i`)')
    better = [(p, c, b) for p, b in sorted(base.items())
              for c in [counts.get(p, 0)] if c < b]
    if better:
        print(f'{len(better)} files are closer to .clang-format than '
              f'{os.path.basename(a.baseline)} records; lower it with '
              f'`{os.path.relpath(__file__, a.source)} --update`')
    total = sum(counts.values())
    print(f'{len(files)} files, {total} places off .clang-format '
          f'(baseline {sum(base.values())}); {len(bad)} files drifted')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
