#!/usr/bin/env python3
"""gen_completion.py BIN OUTDIR: bash and zsh completion for eventlog-live
and eventlog-live-otelcol, generated from the built binary's help texts
(the option table the parsers and did-you-mean use, el_opt_suggest), so
the completions cannot drift from the options:

  OUTDIR/bash/eventlog-live          bash-completion file (both commands;
  OUTDIR/bash/eventlog-live-otelcol  the second sources the first)
  OUTDIR/zsh/_eventlog-live          zsh #compdef file (both commands)

An option followed by an upper-case word (--eventlog-file PATH) takes a
value; FILE, PATH, SOCKET and *.lua values complete file names. Run by
cmake/install.cmake at build time; tests/e2e/test_completion.sh drives
the bash one."""
import os
import re
import subprocess
import sys

OPT = re.compile(r"(?:^|(?<=[\s,(\[|`]))(--[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)"
                 r"(?![-*\w])(?:[ =]([A-Z][A-Za-z_.]*))?")
FILEISH = ("FILE", "PATH", "SOCKET", "DIR")


def help_text(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"gen_completion: {' '.join(argv)} exited {r.returncode}")
    return r.stdout


def options(text):
    """{option: 'file' | 'value' | None}, in order of appearance."""
    out = {}
    for m in OPT.finditer(text):
        opt, meta = m.group(1), m.group(2)
        if len(opt) < 4 or opt == "--":
            continue
        kind = None
        if meta:
            kind = "file" if meta.startswith(FILEISH) or ".lua" in meta else "value"
        if out.get(opt) is None:
            out[opt] = kind
    out.setdefault("--help", None)
    return out


def commands(text):
    return [(m.group(1), m.group(2).strip())
            for m in re.finditer(r"^  ([a-z]+)\s+(.*)$", text, re.M)]


def bash(cmds, table, daemon):
    q = lambda xs: " ".join(sorted(xs))
    lines = [
        "# bash completion for eventlog-live and eventlog-live-otelcol.",
        "# Generated from their --help by cmake/gen_completion.py: do not edit.",
        "",
        "# _eventlog_live_opts OPTS FILEOPTS VALUEOPTS: complete $cur.",
        "_eventlog_live_opts() {",
        '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}',
        '  case " $2 " in *" $prev "*)',
        '    COMPREPLY=($(compgen -f -- "$cur")); return ;; esac',
        '  case " $3 " in *" $prev "*) COMPREPLY=(); return ;; esac',
        '  if [[ $cur == -* ]]; then',
        '    COMPREPLY=($(compgen -W "$1" -- "$cur"))',
        "  else",
        '    COMPREPLY=($(compgen -f -- "$cur"))',
        "  fi",
        "}",
        "",
        "_eventlog_live() {",
        "  if [ \"$COMP_CWORD\" = 1 ]; then",
        f'    COMPREPLY=($(compgen -W "{q(c for c, _ in cmds)} --help --version" -- "${{COMP_WORDS[1]}}"))',
        "    return",
        "  fi",
        '  case ${COMP_WORDS[1]} in',
    ]
    for c, _ in cmds:
        o = table[c]
        lines.append(
            f'    {c}) _eventlog_live_opts "{q(o)}" '
            f'"{q(k for k, v in o.items() if v == "file")}" '
            f'"{q(k for k, v in o.items() if v == "value")}" ;;')
    lines += ["  esac", "}", "",
              "_eventlog_live_otelcol() {",
              f'  _eventlog_live_opts "{q(daemon)}" '
              f'"{q(k for k, v in daemon.items() if v == "file")}" '
              f'"{q(k for k, v in daemon.items() if v == "value")}"',
              "}", "",
              "complete -o filenames -F _eventlog_live eventlog-live",
              "complete -o filenames -F _eventlog_live_otelcol eventlog-live-otelcol",
              ""]
    return "\n".join(lines)


def zsh_specs(o):
    specs = []
    for k, v in sorted(o.items()):
        if v == "file":
            specs.append(f"'{k}:file:_files'")
        elif v == "value":
            specs.append(f"'{k}:value: '")
        else:
            specs.append(f"'{k}'")
    return " ".join(specs)


def zsh(cmds, table, daemon):
    esc = lambda s: s.replace("\\", "\\\\").replace("'", "'\\''").replace(":", "\\:")
    lines = [
        "#compdef eventlog-live eventlog-live-otelcol",
        "# zsh completion for eventlog-live and eventlog-live-otelcol.",
        "# Generated from their --help by cmake/gen_completion.py: do not edit.",
        "",
        "if [[ $service == eventlog-live-otelcol ]]; then",
        f"  _arguments -S {zsh_specs(daemon)} '*:file:_files'",
        "  return",
        "fi",
        "if (( CURRENT == 2 )); then",
        "  local -a cmds",
        "  cmds=(" + " ".join(f"'{c}:{esc(d)}'" for c, d in cmds) + ")",
        "  _describe command cmds",
        "  return",
        "fi",
        "shift words; (( CURRENT-- ))",
        "case $words[1] in",
    ]
    for c, _ in cmds:
        lines.append(f"  {c}) _arguments -S {zsh_specs(table[c])} '*:file:_files' ;;")
    lines += ["esac", ""]
    return "\n".join(lines)


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    daemon_bin = os.path.join(os.path.dirname(binary), "eventlog-live-otelcol")
    cmds = commands(help_text([binary, "--help"]))
    if not cmds:
        sys.exit("gen_completion: no commands in eventlog-live --help")
    table = {c: options(help_text([binary, c, "--help"])) for c, _ in cmds}
    daemon = options(help_text([daemon_bin, "--help"]))
    # watch accepts every daemon option too (its --help says so).
    if "watch" in table:
        for k, v in daemon.items():
            if table["watch"].get(k) is None:
                table["watch"][k] = v
    os.makedirs(f"{outdir}/bash", exist_ok=True)
    os.makedirs(f"{outdir}/zsh", exist_ok=True)
    with open(f"{outdir}/bash/eventlog-live", "w") as f:
        f.write(bash(cmds, table, daemon))
    with open(f"{outdir}/bash/eventlog-live-otelcol", "w") as f:
        f.write("# bash completion for eventlog-live-otelcol: the one of "
                "eventlog-live.\n. \"${BASH_SOURCE[0]%/*}/eventlog-live\"\n")
    with open(f"{outdir}/zsh/_eventlog-live", "w") as f:
        f.write(zsh(cmds, table, daemon))


main()
