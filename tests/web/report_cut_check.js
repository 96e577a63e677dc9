// Browser check of a report of an eventlog cut inside an event
// (tests/e2e/test_report_cut.sh runs it), driven by playwright-core with
// Debian's Chromium:
//
//   node report_cut_check.js --user-data-dir DIR [--shot OUT.png]
//        [--session N] REPORT.html OFFSET
//
// The page, opened from file:// with every other request aborted, must
// load without a console error and show, where a reader sees it (visible,
// inside the first screen), a warning that the eventlog ends mid-event at
// byte OFFSET (the cut event's first byte, worked out by the test from
// the file's block markers); with --session N, that session N ends
// mid-event there (eventlogs joined: a new header begins inside the
// event). --shot OUT.png: a screenshot of the first screen. Prints one JSON line; exit 0 pass, 1 fail.
'use strict';
const path = require('path');
const {launch, watchErrors, exceptionText, finish, run, arg} =
    require('./browser');

async function main() {
  const udd = arg('--user-data-dir');
  const shot = arg('--shot');
  const session = arg('--session');
  const [file, offset] = process.argv.slice(2);
  const ctx = await launch(udd, {
    height: 900,
    offline: true,
    extraArgs: ['--allow-file-access-from-files']
  });
  const problems = [], errors = [];
  const result = {file: path.basename(file)};
  try {
    const page = await ctx.newPage();
    page.setDefaultTimeout(20000);
    watchErrors(page, errors, {requests: true});
    await page.route('**/*', (route) => {
      const u = route.request().url();
      return u.startsWith('file:') || u.startsWith('data:') ?
          route.continue() :
          route.abort('blockedbyclient');
    });
    await page.goto('file://' + path.resolve(file), {waitUntil: 'load'});
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    const w = await page.evaluate(() => {
      const e = document.getElementById('warnings');
      if (!e) return null;
      const r = e.getBoundingClientRect();
      return {
        hidden: e.hidden,
        text: e.innerText,
        top: r.top,
        height: r.height,
        visible: e.checkVisibility ? e.checkVisibility() : r.height > 0
      };
    });
    result.warning = w && w.text;
    const want = session ?
        `Session ${session} ends mid-event at byte ${offset}:` :
        `The eventlog ends mid-event at byte ${offset}:`;
    if (!w)
      problems.push('no #warnings element on the page');
    else {
      if (w.hidden || !w.visible || !(w.height > 0))
        problems.push('the warning is not shown');
      if (!(w.top >= 0 && w.top < 900))
        problems.push(`the warning is at ${w.top} px, not on the first screen`);
      if (!w.text.includes(want))
        problems.push(`the warning says "${w.text}", want "${want} ..."`);
    }
    // The start time of a log cut before its WALL_CLOCK_TIME is an
    // estimate from the file's time, said in words, not as the session
    // field's token (h67: "(estimated from file_mtime)"). The joined log's
    // first session is estimated from the next session's clock.
    const started = await page.evaluate(() => {
      for (const dt of document.querySelectorAll('#facts dt'))
        if (dt.textContent === 'started') return dt.nextSibling.textContent;
      return null;
    });
    result.started = started;
    const est = session ? '(estimated from the next session)' :
        "(estimated from the file's time: no WALL_CLOCK_TIME)";
    if (!started || !started.endsWith(est))
      problems.push(`started reads "${started}", want "... ${est}"`);
    if (shot) await page.screenshot({path: shot});
  } catch (e) {
    problems.push(exceptionText(e));
  }
  await finish(ctx, result, problems, errors);
}

run(main);
