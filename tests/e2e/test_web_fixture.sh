#!/usr/bin/env bash
# End-to-end: the daemon's web view in Debian's Chromium against hand-made
# /api/data documents (tests/web/fixture_check.js, playwright-core). The
# daemon serves the page (its embedded files) after replaying a small
# eventlog; every request for api/data is answered by the check with a
# document it built, so the expected values come from that input alone:
# the lines of every time chart break between two sessions 28 s apart
# (docs/web.md "Sessions"), the log tail lists the 200 newest records by
# time, newest first, when they arrive out of order, and the header's
# status says which series were forgotten and why.
# Screenshot: $EL_BUILD_DIR/test_web_fixture.png.
# Exit 0 pass, 1 fail, 77 skip.
set -u
source "$(dirname "$0")/serve_lib.sh" web-fixture
LOG=$EVENTLOGS/ghc-events/hello-ghc-8.2.2.eventlog

[ -x /usr/bin/chromium ] || skip "chromium not installed (apt-get install chromium)"
command -v node >/dev/null || skip "node missing"
[ -d "$SRC/tests/web/node_modules/playwright-core" ] ||
  skip "tests/web: run npm ci (scripts/setup.sh)"
sv_option --web-port
[ -f "$LOG" ] || skip "$LOG missing"

sv_daemon fixture --eventlog-file "$LOG" --service-name fixture --web-port 0
sv_port fixture "web view"
sv_ended fixture
timeout 120 node "$SRC/tests/web/fixture_check.js" --url "http://127.0.0.1:$PORT/" \
  --screenshot "$BUILD/test_web_fixture.png" --user-data-dir "$TMP/udd" \
  > "$TMP/check.json" 2> "$TMP/check.err"
rc=$?
cat "$TMP/check.json"
[ $rc = 0 ] || { cat "$TMP/check.err"; fail "browser check against hand-made data"; }
[ -s "$BUILD/test_web_fixture.png" ] || fail "no screenshot"
echo "PASS: web view: lines break between sessions, log tail in time order, status words"
