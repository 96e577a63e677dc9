#!/usr/bin/env bash
# gen_copyright.sh OUTDIR LICENSE NAME VERSION [ARCHIVE...]: the package's
# copyright file and its Built-Using value, for the static libraries the
# binary embeds (EL_STATIC_LIBS, CMakeLists.txt: Debian's lib*.a archives):
#   OUTDIR/copyright    the project's LICENSE, then for each ARCHIVE the
#                       /usr/share/doc/<package>/copyright of the Debian
#                       package that installed it (Debian policy 12.5:
#                       the package carries the notices of what it embeds)
#   OUTDIR/built-using  the Built-Using field's value (Debian policy 7.8):
#                       "src (= version), ..." of those packages' sources,
#                       sorted, or empty without archives
# The owner of an archive and its source package come from dpkg-query, so
# both follow the installed -dev packages. An archive no package owns fails
# the build (its licence is unknown; configure with -DEL_STATIC_LIBS=OFF);
# without dpkg-query (not a Debian system) each archive is named in the
# copyright file as of unknown licence, with a warning, and Built-Using is
# empty. Run by cmake/install.cmake at build time.
set -euo pipefail
OUT=$1 LICENSE=$2 NAME=$3 VERSION=$4
shift 4
mkdir -p "$OUT"
rule='======================================================================'
have_dpkg=1
command -v dpkg-query >/dev/null || have_dpkg=0
{
  printf '%s %s\n\n' "$NAME" "$VERSION"
  if [ $# -gt 0 ]; then
    printf 'The program embeds the static libraries below (linked from\n'
    printf "Debian's packages, named in the package's Built-Using field);\n"
    printf 'their copyright notices follow the project'"'"'s own.\n\n'
  fi
  printf '%s\n%s\n%s\n\n' "$rule" "$NAME" "$rule"
  cat "$LICENSE"
} >"$OUT/copyright.tmp"
: >"$OUT/built-using.tmp"
for a in "$@"; do
  if [ $have_dpkg = 0 ]; then
    echo "gen_copyright.sh: warning: no dpkg-query: the licence of $a is not in the copyright file" >&2
    printf '\n%s\n%s: not from a known package; licence unknown\n%s\n' \
      "$rule" "$a" "$rule" >>"$OUT/copyright.tmp"
    continue
  fi
  # The owner of the file, or of the path as linked (a symlink's).
  pkg=$({ dpkg-query -S "$(realpath "$a")" || dpkg-query -S "$a"; } 2>/dev/null |
    head -1 | cut -d: -f1) || true
  if [ -z "$pkg" ]; then
    echo "gen_copyright.sh: $a: no Debian package owns it, so its licence is unknown (configure with -DEL_STATIC_LIBS=OFF)" >&2
    exit 1
  fi
  src=$(dpkg-query -W -f='${source:Package} (= ${source:Version})' "$pkg")
  text=/usr/share/doc/$pkg/copyright
  [ -r "$text" ] || {
    echo "gen_copyright.sh: $a: $pkg has no $text" >&2
    exit 1
  }
  printf '\n%s\n%s, from %s (%s)\n%s\n\n' "$rule" "$src" "$pkg" "$a" \
    "$rule" >>"$OUT/copyright.tmp"
  cat "$text" >>"$OUT/copyright.tmp"
  echo "$src" >>"$OUT/built-using.tmp"
done
sort -u "$OUT/built-using.tmp" | paste -sd, | sed 's/,/, /g' >"$OUT/built-using"
rm "$OUT/built-using.tmp"
mv "$OUT/copyright.tmp" "$OUT/copyright"
