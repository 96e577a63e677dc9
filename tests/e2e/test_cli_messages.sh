#!/usr/bin/env bash
# One message prefix per binary (issue 14 item 7, docs/exit-codes.md
# "Messages"): every line a command writes on stderr that names a program
# names the binary it was started as, `eventlog-live:` or
# `eventlog-live-otelcol:` (the same executable under its two names), never
# the other one nor a "eventlog-live run:"-style variant; and the
# did-you-mean hints for commands, flags, event names (Lua el.on) and
# OTEL_* values, through the real binaries. The error paths are the
# usual mistakes: missing, empty, foreign and cut inputs, unknown options
# and commands, bad environment values, script errors, watch misuse.
# ctest-labels: e2e
set -uo pipefail
: "${EL_BIN:?}" "${EL_EVENTLOGS:?}"
E=$EL_BIN
D=$(dirname "$EL_BIN")/eventlog-live-otelcol
EV=$EL_EVENTLOGS/ghc-9.0/heapy-hT.eventlog
W=$(mktemp -d /tmp/el-msg-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
export OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  OTEL_TRACES_EXPORTER=none OTEL_PROFILES_EXPORTER=none
sz=$(stat -c %s "$EV")
head -c $((sz - 37)) "$EV" >"$W/cut"
head -c 1000 "$EV" >"$W/header"
: >"$W/empty"
printf 'local el = require("eventlog_live")\nel.on("USER_MARKERS", print)\n' >"$W/um.lua"
printf 'local el = require("eventlog_live")\nerror("boom")\n' >"$W/err.lua"
printf 'processors: [\n' >"$W/bad.yaml"

# check PREFIX NAME CMD...: run CMD (stdin closed); its stderr must not be
# empty, its first line must begin with "PREFIX: ", and no line may begin
# with another program prefix.
n=0
check() {
  local pre=$1 name=$2
  shift 2
  n=$((n + 1))
  "$@" </dev/null >/dev/null 2>"$W/err.$n"
  local first other
  first=$(head -n 1 "$W/err.$n")
  other=$(grep -E '^eventlog-live[-a-z ]*:' "$W/err.$n" | grep -v "^$pre: ")
  if [ -z "$first" ]; then
    bad "$name: nothing on stderr"
  elif [ "${first#"$pre: "}" = "$first" ]; then
    bad "$name: first line is not prefixed '$pre: ': $first"
  elif [ -n "$other" ]; then
    bad "$name: another prefix than '$pre:': $other"
  else
    ok "$name"
  fi
}

# The same situations for the daemon under both names and for the other
# commands.
for f in "$W/missing" "$W/empty" /bin/ls "$W/cut" "$W/header"; do
  b=$(basename "$f")
  check eventlog-live-otelcol "otelcol binary, $b" "$D" --eventlog-file "$f"
  check eventlog-live "eventlog-live otelcol, $b" "$E" otelcol --eventlog-file "$f"
  for c in show stats; do
    check eventlog-live "$c, $b" "$E" "$c" --eventlog-file "$f"
  done
  check eventlog-live "run, $b" "$E" run "$W/um.lua" --eventlog-file "$f"
  check eventlog-live "report, $b" "$E" report --eventlog-file "$f" -o "$W/r.html"
done
for c in show stats report otelcol watch; do
  check eventlog-live "$c --bogus" "$E" $c --bogus
done
check eventlog-live "run --bogus" "$E" run "$W/err.lua" --bogus
check eventlog-live-otelcol "otelcol binary --bogus" "$D" --bogus
check eventlog-live-otelcol "otelcol binary, bad config" \
  "$D" --config "$W/bad.yaml" --eventlog-file "$EV"
check eventlog-live "eventlog-live otelcol, bad config" \
  "$E" otelcol --config "$W/bad.yaml" --eventlog-file "$EV"
check eventlog-live-otelcol "otelcol binary, bad OTEL_LOG_LEVEL" \
  env OTEL_LOG_LEVEL=loud "$D" --eventlog-file "$EV"
check eventlog-live-otelcol "otelcol binary, bad exporter" \
  env OTEL_TRACES_EXPORTER=otlpp "$D" --eventlog-file "$EV"
check eventlog-live-otelcol "otelcol binary, no source" "$D"
check eventlog-live "unknown command" "$E" shwo
check eventlog-live "run, script error" "$E" run "$W/err.lua" "$EV"
check eventlog-live "run, unknown event name" "$E" run "$W/um.lua" "$EV"
check eventlog-live "repl, no input" "$E" repl --bogus
check eventlog-live "watch, no program" "$E" watch --
check eventlog-live "watch, missing program" "$E" watch -- "$W/no-such-program"
check eventlog-live "watch, program without --" "$E" watch ./app 1
check eventlog-live "watch, source option" "$E" watch --eventlog-file "$EV" -- true
# The daemon's own warnings (the host's log) under its name: -v debug
# logs through el_log.
check eventlog-live-otelcol "otelcol binary, log lines" \
  "$D" -v debug --no-otlp --eventlog-file "$W/cut"

# hint NAME WANT CMD...: stderr of CMD holds WANT (a fixed string).
hint() {
  local name=$1 want=$2
  shift 2
  "$@" </dev/null >/dev/null 2>"$W/hint"
  if grep -qF -- "$want" "$W/hint"; then ok "$name"; else
    bad "$name: no \"$want\" in: $(head -c 400 "$W/hint")"
  fi
}
hint "did you mean: command" "unknown command 'shwo' (did you mean 'show'?)" "$E" shwo
hint "did you mean: flag" "did you mean --eventlog-file?" "$D" --eventlog-fil "$EV"
hint "did you mean: event name in el.on" \
  "unknown event type 'USER_MARKERS' (did you mean 'USER_MARKER'?)" \
  "$E" run "$W/um.lua" "$EV"
# The arguments swapped (`run app.eventlog script.lua`): the eventlog is
# said to be one, with the order to use (exit 2, a usage error), not as
# Lua's "syntax error" at its line 1.
"$E" run "$EV" "$W/um.lua" </dev/null >/dev/null 2>"$W/swap"
st=$?
if [ "$st" = 2 ] && ! grep -q "syntax error" "$W/swap" &&
   grep -qF "run: $EV is an eventlog, not a Lua script: the script comes first" "$W/swap"; then
  ok "run with the eventlog first: said so, exit 2"
else
  bad "run with the eventlog first: status $st: $(head -c 400 "$W/swap")"
fi
hint "did you mean: OTEL_TRACES_EXPORTER" \
  "OTEL_TRACES_EXPORTER specifies unknown exporter 'otlpp'. Did you mean 'otlp'?" \
  env OTEL_TRACES_EXPORTER=otlpp "$D" --eventlog-file "$EV"
hint "OTEL_METRICS_EXPORTER=prometheus points at --prometheus-port" \
  "use --prometheus-port PORT" \
  env OTEL_METRICS_EXPORTER=prometheus "$D" --eventlog-file "$EV"
hint "run: an OTLP exporter variable is said to be ignored" \
  "run: OTEL_METRICS_EXPORTER=otlp ignored: run writes its script's telemetry to --output" \
  env OTEL_METRICS_EXPORTER=otlp "$E" run "$W/um.lua" "$EV"
hint "did you mean: OTEL_LOG_LEVEL" "'debgu' (did you mean 'debug'?)" \
  env OTEL_LOG_LEVEL=debgu "$D" --eventlog-file "$EV"
hint "did you mean: OTEL_EXPORTER_OTLP_PROTOCOL" "Did you mean 'grpc'?" \
  env OTEL_METRICS_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=gprc \
  "$D" --eventlog-file "$EV"

# The same did-you-mean for an unknown long option in every command (one
# helper, el_opt_unknown): "CMD: unknown option 'X'; did you mean Y? (see
# --help)", the candidates from the command's own --help (show's --json,
# watch's --no-linger), or without the question when nothing is near.
for c in "show --jsn|--json" "show --sort-memroy=1M|--sort-memory" \
         "stats --eventlog-stdn|--eventlog-stdin" \
         "run $W/um.lua --fial-fast|--fail-fast" "repl --hisory=x|--history" \
         "report --colums=64|--columns" "watch --no-lingr|--no-linger" \
         "otelcol --eventlog-fil|--eventlog-file"; do
  args=${c%|*} want=${c#*|}
  cmd=${args%% *} bad_opt=${args##* }
  [ "$cmd" = otelcol ] && pre="" || pre="$cmd: "
  [ "$cmd" = watch ] && extra="-- true" || extra=""
  hint "did you mean: $cmd ${bad_opt%%=*}" \
    "${pre}unknown option '$bad_opt'; did you mean $want? (see --help)" \
    "$E" $args $extra
done
hint "unknown option with nothing near: stats" \
  "stats: unknown option '--bogus-ish' (see --help)" "$E" stats --bogus-ish "$EV"

# -v / --log-level: a misspelt level gets a did-you-mean in every command.
for c in "run $W/um.lua -v infoo $EV" "repl -v infoo $EV" \
         "report --log-level=infoo $EV -o $W/r.html" "otelcol -v infoo"; do
  hint "did you mean: ${c%% *} log level" "did you mean info?" "$E" $c
done

# The daemon's level names work in every command: trace as debug (run
# logs at debug each library module it loads), fatal as error.
echo 'require("eventlog_live.fmt")' >"$W/empty.lua"
for lv in trace TRACE; do
  if [ "$lv" = trace ] && "$E" run -v $lv "$W/empty.lua" "$EV" >/dev/null 2>"$W/lv" &&
     grep -q "debug: Lua: .*fmt.lua loaded" "$W/lv"; then ok "run -v trace logs debug"
  elif [ "$lv" = TRACE ] && ! "$E" run -v $lv "$W/empty.lua" "$EV" >/dev/null 2>"$W/lv" &&
     grep -q "unknown log level 'TRACE'" "$W/lv"; then ok "run -v: levels are lower case"
  else bad "run -v $lv: $(head -c 300 "$W/lv")"; fi
done
if "$E" report -v fatal "$EV" -o "$W/lv.html" >/dev/null 2>"$W/lv" &&
   ! grep -q "unknown log level" "$W/lv"; then ok "report -v fatal accepted"
else bad "report -v fatal: $(head -c 300 "$W/lv")"; fi

# --set keys: an empty part, or a key both a value and a table, is a usage
# error (the second --set silently replaced the first).
for bad in "a..b=1:--set a..b: a key part is empty" \
           ".a=1:--set .a: a key part is empty" \
           "a.=1:--set a.: a key part is empty"; do
  hint "--set ${bad%%:*}" "${bad#*:}" "$E" run "$W/empty.lua" --set "${bad%%:*}" "$EV"
done
hint "--set a=1 --set a.b=2" "--set a and --set a.b: a cannot be both a value and a table" \
  "$E" run "$W/empty.lua" --set a=1 --set a.b=2 "$EV"

# Sizes: lower-case units and KiB/MiB/GiB are sizes (the same output as
# the default's, which fits in 64M); a huge one names the maximum; the
# minimum is named too.
"$E" show "$EV" >"$W/show.ref" 2>/dev/null
for sz in 1k 64m 64M 64MiB 1KiB 1g; do
  if "$E" show --sort-memory "$sz" "$EV" >"$W/show.out" 2>"$W/show.err" &&
    cmp -s "$W/show.ref" "$W/show.out"; then ok "--sort-memory $sz"; else
    bad "--sort-memory $sz refused or changed the output: $(head -c 300 "$W/show.err")"
  fi
done
hint "--sort-memory too large" \
  "show: --sort-memory: '99999999999G' is too large: at most 1024G" \
  "$E" show --sort-memory 99999999999G "$EV"
hint "--sort-memory below 1K" "show: --sort-memory: '1023' is less than 1K" \
  "$E" show --sort-memory 1023 "$EV"

# A transport plugin that is not there: its line, and no second,
# misleading "cannot create the exporters: invalid configuration".
EL_PLUGIN_DIR=$W/noplugins OTEL_METRICS_EXPORTER=otlp "$D" \
  --eventlog-file "$EV" </dev/null >/dev/null 2>"$W/plug.err"
st=$?
if [ $st = 1 ] && grep -qF "plugin eventlog-live-otlp-http.so not found in $W/noplugins" "$W/plug.err" &&
  ! grep -q "cannot create the exporters" "$W/plug.err" &&
  [ "$(grep -c 'error:' "$W/plug.err")" = 1 ]; then
  ok "missing plugin: one error line naming it"
else
  bad "missing plugin (status $st): $(cat "$W/plug.err")"
fi

# Decoder errors name their position once, in the decoder's words: no
# "(byte offset N)" or "input offset N:" appended by show, stats, run,
# the daemon or report; "1 byte", not "1 bytes".
printf 'x' >"$W/one"
printf 'local el = require("eventlog_live")\n' >"$W/ok.lua"
cp "$EV" "$W/corrupt"
printf '\000\115\000\000\000\000\106\212\203\226zzzz\377\377' |
  dd of="$W/corrupt" bs=1 seek=$(($(stat -c %s "$EV") - 2)) conv=notrunc 2>/dev/null
for f in "$W/one" "$W/cut" "$W/header" "$W/corrupt"; do
  b=$(basename "$f")
  for c in show stats "run $W/ok.lua" otelcol report; do
    o=""
    [ "$c" = report ] && o="-o $W/r.html"
    [ "$c" = otelcol ] && f2="--eventlog-file $f" || f2=$f
    $E $c $f2 $o </dev/null >/dev/null 2>"$W/pos.err"
    if grep -qE 'byte offset|input offset| 1 bytes' "$W/pos.err"; then
      bad "$c, $b: position stated twice or '1 bytes': $(grep -E 'byte offset|input offset| 1 bytes' "$W/pos.err" | head -2)"
    elif ! grep -qE 'at byte [0-9]+|from byte [0-9]+' "$W/pos.err"; then
      bad "$c, $b: no position: $(head -3 "$W/pos.err")"
    else
      ok "$c, $b: the position once"
    fi
  done
done
# A header error: "error: NAME: ...", as every command says it
# (test_header_error_messages.sh).
hint "no header in 1 byte" \
  "eventlog-live: error: $W/one: no eventlog header found in 1 byte from byte 0" \
  "$E" show "$W/one"
hint "empty input" "eventlog-live: error: $W/empty: no eventlog header: the input is empty" \
  "$E" stats "$W/empty"

# watch with the program but no "--" (h25's F3): the message shows where
# it goes, with the words given (quoted for a shell where needed), not
# "no program"; status 2. Options first: where the program goes.
hint "watch: program without --" \
  "eventlog-live: watch: put the program and its arguments after --: eventlog-live watch [OPTIONS] -- ./app 1" \
  "$E" watch ./app 1
hint "watch: program without --, quoted" \
  "-- './my app' 'it'\\''s'" "$E" watch "./my app" "it's"
hint "watch: options, then the program without --" \
  "watch: put the program and its arguments after --: eventlog-live watch [OPTIONS] -- PROGRAM [ARGS...] (see --help)" \
  "$E" watch --web-port 0 ./app
hint "watch: nothing" "watch: no program: " "$E" watch
"$E" watch ./app 1 </dev/null >/dev/null 2>&1
st=$?
if [ $st = 2 ]; then ok "watch: program without --: status 2"; else
  bad "watch: program without --: status $st, not 2"
fi

# stats' corrupt-parts line is a sentence and keeps its numbers: the 16
# bytes appended above (an undeclared event type 77: 2 + 8 bytes of
# header, 4 of payload, then the 2-byte end marker) are one corrupt part.
"$E" stats "$W/corrupt" >"$W/stats.out" 2>/dev/null
want="corrupt parts:    1 (16 bytes in them; a part runs from an event that did not frame to the next believable block, or is damage decoded through)"
if grep -qxF "$want" "$W/stats.out"; then ok "stats: corrupt parts line"; else
  bad "stats: corrupt parts line: $(grep '^corrupt' "$W/stats.out")"
fi
exit $fail
