// Browser check of what the web view's threads table says once a replay
// ended, with the traces processor thread_state off or on
// (tests/e2e/test_web_threads.sh runs it against a daemon of each).
//
//   node threads_check.js --url URL --expect FILE --screenshot FILE
//        --user-data-dir DIR
//
// FILE (JSON, written by the shell test from the eventlog's .reference,
// not from the daemon): {"traced": bool, "threads": {id: {"label": text
// or null, "running_ms": ms}}}: every thread that ran, with its label
// and its running time (the sum of its run..stop intervals).
// traced false (thread_state off: only ThreadLabel logs reach the table):
//   the hint "States and running times need the traces processor
//   thread_state" is shown, in sight (not scrolled out of the panel);
//   the rows are the labelled threads, each with its label, state
//   "unknown", status "input ended", running time "unknown": no made-up
//   state ("Ended") or running time ("0.0") is shown as a fact.
// traced true: the hint is hidden; one row per thread, its label, state
//   "Finished" (every thread of the reference finished), its running
//   time within 0.06 ms of the reference's (the page shows 0.1 ms).
// FILE may instead hold {"traced": bool, "other": {"threads": T,
// "finished": F}} (tests/tools/ended_threads.lua: two sessions, more
// threads than the table keeps): T threads in all, F of them finished
// (ThreadFinished), every other one still live when its session or the
// input ended; none leaves the table alive, as the over rows go first.
// Then the last row is "other", "N threads no longer listed" with N = T
// minus the rows, and its state cell says, of those N:
//   traced: "<F - rows Finished> finished" and, when some ended, ", <the
//     rest> ended with their session";
//   not traced: "<N> ended with their session, finish not known" (no
//     finish is seen without thread_state: the old page said "N finished").
// Every wait is bounded (30 s). Prints one JSON line; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const {launch, watchErrors, exceptionText, finish, run, arg} =
    require('./browser');

const url = arg('--url');
const expect = JSON.parse(fs.readFileSync(arg('--expect'), 'utf8'));
const shot = arg('--screenshot');
const udd = arg('--user-data-dir');

// What a person reads in the threads panel: the hint (shown or not) and
// each row's cells, by column.
function look(page) {
  return page.evaluate(() => {
    const sec = document.getElementById('threads');
    const hint = document.getElementById('threads-hint');
    const rows = [...sec.querySelectorAll('tbody tr')].map((tr) => {
      const c = [...tr.querySelectorAll('td')].map((td) => td.textContent);
      return {
        id: c[0],
        label: c[1],
        state: c[2],
        status: c[3],
        cap: c[4],
        running: c[5]
      };
    });
    return {
      status: document.getElementById('status').textContent,
      // shown, and within the panel's visible part (the panel scrolls:
      // a hint below 20 rows is out of sight)
      hint: getComputedStyle(hint).display !== 'none' &&
          hint.offsetParent !== null &&
          hint.getBoundingClientRect().bottom <=
              sec.getBoundingClientRect().bottom,
      hintText: hint.textContent,
      rows,
    };
  });
}

function checkUntraced(l, want) {
  const labelled =
      Object.entries(expect.threads).filter(([, t]) => t.label !== null);
  want(l.hint, 'the thread_state hint is hidden or out of sight');
  want(
      l.rows.length === labelled.length,
      `${l.rows.length} rows, not the ${labelled.length} labelled threads`);
  for (const [id, t] of labelled) {
    const r = l.rows.find((x) => x.id === id);
    if (!r) {
      want(false, `no row for thread ${id} (${t.label})`);
      continue;
    }
    const what = `thread ${id} (${t.label})`;
    want(r.label === t.label, `${what}: label "${r.label}"`);
    want(r.state === 'unknown', `${what}: state "${r.state}", not unknown`);
    want(r.status === 'input ended', `${what}: status "${r.status}"`);
    want(
        r.running === 'unknown',
        `${what}: running "${r.running}" (the reference: ` +
            `${t.running_ms.toFixed(3)} ms), not unknown`);
  }
}

function checkTraced(l, want) {
  const all = Object.entries(expect.threads);
  want(!l.hint, 'the thread_state hint is shown with thread states');
  want(
      l.rows.length === all.length,
      `${l.rows.length} rows, not the ${all.length} threads`);
  for (const [id, t] of all) {
    const r = l.rows.find((x) => x.id === id);
    if (!r) {
      want(false, `no row for thread ${id}`);
      continue;
    }
    want(r.label === (t.label || ''), `thread ${id}: label "${r.label}"`);
    want(r.state === 'Finished', `thread ${id}: state "${r.state}"`);
    const ms = Number(r.running);
    want(
        Math.abs(ms - t.running_ms) <= 0.06,
        `thread ${id}: running "${r.running}", the reference ` +
            `${t.running_ms.toFixed(3)} ms`);
  }
}

function checkOther(l, want) {
  want(l.hint === !expect.traced, `the thread_state hint shown: ${l.hint}`);
  const o = l.rows[l.rows.length - 1];
  if (!o || o.id !== 'other') {
    want(false, 'no "other" row at the end');
    return;
  }
  const rows = l.rows.length - 1;
  const left = expect.other.threads - rows;
  want(
      o.label === `${left} threads no longer listed`,
      `other: "${o.label}", not ${left} threads no longer listed`);
  const fin = expect.other.finished -
      l.rows.filter((r) => r.id !== 'other' && r.state === 'Finished').length;
  const ended = left - fin;
  const text = expect.traced ?
      `${fin} finished` + (ended ? `, ${ended} ended with their session` : '') :
                                   `${left} ended with their session, finish not known`;
  want(o.state === text, `other: "${o.state}", not "${text}"`);
}

run(async () => {
  const problems = [];
  const errors = [];
  const result = {traced: expect.traced};
  const want = (ok, what) => {
    if (!ok) problems.push(what);
  };
  const ctx = await launch(udd, {height: 1400});
  try {
    const page = await ctx.newPage();
    watchErrors(page, errors);
    await page.goto(url);
    const end = Date.now() + 30000;
    let l = await look(page);
    while (!(l.status.includes('input ended') && l.rows.length) &&
           Date.now() < end) {
      await page.waitForTimeout(250);
      l = await look(page);
    }
    result.look = expect.other ? {
      status: l.status,
      hint: l.hint,
      rows: l.rows.length,
      other: l.rows.at(-1)
    } :
                                 l;
    // the other row in sight: the panel scrolled to its end
    if (expect.other)
      await page.evaluate(() => {
        const p = document.querySelector('#threads tbody tr:last-child');
        if (p) p.scrollIntoView({block: 'end'});
      });
    await page.screenshot({path: shot, fullPage: true});
    want(l.status.includes('input ended'), `status "${l.status}"`);
    if (expect.other)
      checkOther(l, want);
    else if (expect.traced)
      checkTraced(l, want);
    else
      checkUntraced(l, want);
  } catch (e) {
    problems.push(exceptionText(e));
  }
  await finish(ctx, result, problems, errors);
});
