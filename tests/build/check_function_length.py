#!/usr/bin/env python3
"""Check that no C function under src/ is longer than 80 lines.

Usage: check_function_length.py [--source DIR] [--max N] [--top N]

A function's length counts its lines from the first line of its signature
to its closing brace (the layout of .clang-format: the body's `{` ends the
signature line, the `}` stands alone in column 0). Functions listed in
tests/build/long_functions.txt ("length file function" lines, while their
folder is being split up) may keep the length recorded there, not more.
--top N prints the N longest functions. Exit status: 0 ok, 1 too long.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ATTR = re.compile(r'__attribute__\s*\(\(.*?\)\)')
NAME = re.compile(r'([A-Za-z_]\w*)\s*\(')
NOT_FUNC = re.compile(r'^(typedef|struct|union|enum|#)')


def functions(path):
    """(name, first line, length) of each function defined in path."""
    with open(path, errors='replace') as f:
        lines = f.read().split('\n')
    out = []
    sig_start = None  # first line of the declaration being read
    i = 0
    while i < len(lines):
        line = lines[i]
        top = line and not line[0].isspace()
        if not top or line.startswith(('/*', ' *', '*/', '//', '#', '}')):
            sig_start = None if (not line.strip() or line.startswith(
                ('#', '}')) or line.rstrip().endswith(('*/', ';'))) \
                else sig_start
            i += 1
            continue
        if sig_start is None:
            sig_start = i
        if line.rstrip().endswith(';'):
            sig_start = None
        elif line.rstrip().endswith('{'):
            sig = ATTR.sub('', ' '.join(lines[sig_start:i + 1]))
            head = sig.split('(', 1)[0]
            end = i + 1
            while end < len(lines) and not lines[end].startswith('}'):
                end += 1
            m = NAME.search(sig)
            if (m and '=' not in head and not NOT_FUNC.match(sig.strip())
                    and ')' in sig):
                out.append((m.group(1), sig_start + 1, end - sig_start + 1))
            sig_start = None
            i = end
        i += 1
    return out


def read_allowed(path):
    allowed = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split('#', 1)[0].split()
                if len(line) == 3:
                    allowed[(line[1], line[2])] = int(line[0])
    return allowed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument('--max', type=int, default=80)
    ap.add_argument('--top', type=int, default=0)
    ap.add_argument('--allowed',
                    default=os.path.join(HERE, 'long_functions.txt'))
    a = ap.parse_args()
    found = []
    src = os.path.join(a.source, 'src')
    for d, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if f.endswith('.c'):
                p = os.path.join(d, f)
                rel = os.path.relpath(p, a.source)
                found += [(n, rel, name, line)
                          for name, line, n in functions(p)]
    if not found:
        print('no functions found under src/')
        return 1
    found.sort(reverse=True)
    for n, rel, name, line in found[:a.top]:
        print(f'{n:4d} {rel}:{line} {name}')
    allowed = read_allowed(a.allowed)
    bad = 0
    for n, rel, name, line in found:
        limit = max(a.max, allowed.get((rel, name), 0))
        if n > limit:
            print(f'{rel}:{line}: {name} is {n} lines, more than {limit}: '
                  f'split it into functions that do one thing each')
            bad += 1
    print(f'{len(found)} functions under src/, longest {found[0][0]} lines; '
          f'{bad} too long')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
