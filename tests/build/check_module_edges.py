#!/usr/bin/env python3
"""Check the module graph of the CMake build against module_edges.txt.

Usage: check_module_edges.py [--source DIR] [--cmake CMAKE] [--dot FILE]

1. Configures the project in a scratch directory with `cmake --graphviz`
   (tests off) unless --dot names a graph already written, and takes the
   edges whose source is a module (el_<folder>) or the executable
   eventlog-live. They must equal the edges of tests/build/module_edges.txt.
   A library linked statically (EL_STATIC_LIBS: the target el_static_<pkg>)
   counts as its pkg-config target PkgConfig::PC_<pkg>: the edge is the
   same whichever way the library is linked.
2. Every `#include` in src/<module>/ of a header of another module must be
   backed by an edge <module> -> <other> in that file (src/cmd/ and
   src/main.c belong to eventlog-live), so that a use the build does not
   declare is caught even when the link happens to succeed.
Exit status: 0 when both hold, 1 otherwise (the differences are printed).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EDGE = re.compile(r'//\s*(\S+)\s*->\s*(\S+)\s*$')
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def read_expected(path):
    edges = set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split('->')]
            if len(parts) != 2 or not all(parts):
                sys.exit(f'{path}:{n}: expected "A -> B", got {line!r}')
            edges.add(tuple(parts))
    return edges


def graph_edges(dot, modules):
    owners = {f'el_{m}' for m in modules} | {'eventlog-live'}
    edges = set()
    with open(dot) as f:
        for line in f:
            m = EDGE.search(line)
            if m and m.group(1) in owners:
                dep = re.sub(r'^el_static_', 'PkgConfig::PC_', m.group(2))
                edges.add((m.group(1), dep))
    return edges


def configure(source, cmake, tmp):
    dot = os.path.join(tmp, 'graph', 'deps.dot')
    os.makedirs(os.path.dirname(dot))
    cmd = [cmake, '-S', source, '-B', os.path.join(tmp, 'build'),
           '-DBUILD_TESTING=OFF', f'--graphviz={dot}']
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        sys.exit('cmake failed:\n' + r.stdout)
    return dot


def include_edges(source, modules):
    """(owner, used module, file, header) for each cross-module include."""
    uses = []
    src = os.path.join(source, 'src')
    folders = [(m, f'el_{m}') for m in modules] + [('cmd', 'eventlog-live')]
    files = [('eventlog-live', os.path.join(src, 'main.c'))]
    for folder, owner in folders:
        d = os.path.join(src, folder)
        if os.path.isdir(d):
            files += [(owner, os.path.join(d, n)) for n in sorted(os.listdir(d))
                      if n.endswith(('.c', '.h'))]
    for owner, path in files:
        here = os.path.basename(os.path.dirname(path))
        with open(path, errors='replace') as f:
            text = f.read()
        for header in INCLUDE.findall(text):
            parts = os.path.normpath(os.path.join(here, header)).split(os.sep)
            if len(parts) >= 2 and parts[0] in modules and parts[0] != here:
                uses.append((owner, f'el_{parts[0]}',
                             os.path.relpath(path, source), header))
    return uses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument('--cmake', default='cmake')
    ap.add_argument('--dot')
    ap.add_argument('--expected', default=os.path.join(HERE,
                                                       'module_edges.txt'))
    a = ap.parse_args()
    src = os.path.join(a.source, 'src')
    modules = sorted(d for d in os.listdir(src)
                     if os.path.isfile(os.path.join(src, d, 'CMakeLists.txt')))
    expected = read_expected(a.expected)
    if a.dot:
        got = graph_edges(a.dot, modules)
    else:
        with tempfile.TemporaryDirectory(prefix='el-graph-') as tmp:
            got = graph_edges(configure(a.source, a.cmake, tmp), modules)
    ok = True
    if not got:
        print('no module edges found in the CMake graph')
        ok = False
    for e in sorted(got - expected):
        print(f'in the CMake graph, not in {a.expected}: {e[0]} -> {e[1]}')
        ok = False
    for e in sorted(expected - got):
        print(f'in {a.expected}, not in the CMake graph: {e[0]} -> {e[1]}')
        ok = False
    for owner, used, path, header in include_edges(a.source, modules):
        if (owner, used) not in expected:
            print(f'{path}: #include "{header}" but no edge '
                  f'{owner} -> {used} (add it to DEPENDS and {a.expected})')
            ok = False
    if ok:
        print(f'module graph: {len(got)} edges as expected')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
