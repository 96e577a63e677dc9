// Browser check of a report of a file holding several eventlog sessions
// (tests/e2e/test_report_sessions.sh runs it), driven by playwright-core
// with Debian's Chromium:
//
//   node report_sessions_check.js --user-data-dir DIR [--shot OUT.png]
//        REPORT.html EXPECT.json
//
// EXPECT.json (tests/e2e/report_sessions_expect.py, from the inputs'
// ghc-events references): sessions [{number, start, end}] and threads
// [[session, id, created]] in seconds on the page's axis, allocated
// bytes. The page, opened from file:// with every other request aborted,
// must load without a console error and show what a reader would check:
//   * the threads table: one row per thread of every session, its session
//     and id in the first two columns, its creation time (the cell's
//     data-value) on the page's axis, within 2 µs (the page keeps µs);
//   * the figures: threads (both sessions' count), allocated (bytes);
//   * the heap profile, heap size and allocation rate charts: nothing drawn
//     (no coloured pixel) in the middle of the time between the sessions,
//     where no program ran, while the same probe finds the chart's colour
//     in the middle of the first session (so the probe sees the drawing).
// --shot OUT.png: a screenshot of the whole page.
// Prints one JSON line; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const path = require('path');
const {launch, watchErrors, exceptionText, finish, run, arg} =
    require('./browser');

// In the page: the coloured pixels (max - min channel > 60) of chart id's
// plot area in the canvas column at time t (s), below the top 16 CSS px
// (marker labels); markers' purple lines are not counted.
function colouredAt([id, t]) {
  const u = window.elReport.charts[id];
  if (!u) return null;
  const dpr = devicePixelRatio || 1;
  const x = Math.round(u.valToPos(t, 'x', true));
  // down to the bottom edge (a line at zero), one pixel below
  const top = Math.round(u.bbox.top + 16 * dpr), h = Math.round(u.bbox.height - 16 * dpr) + 2;
  const px = u.ctx.getImageData(x - 1, top, 3, h).data;
  const hits = [];
  for (let i = 0; i < px.length; i += 4) {
    const [r, g, b, a] = [px[i], px[i + 1], px[i + 2], px[i + 3]];
    if (!a || Math.max(r, g, b) - Math.min(r, g, b) <= 60) continue;
    if (b > g + 40 && r > g + 20) continue; // a marker line (purple)
    hits.push(`rgb(${r},${g},${b})`);
  }
  return hits;
}

async function main() {
  const udd = arg('--user-data-dir');
  const shot = arg('--shot');
  const [file, expectFile] = process.argv.slice(2);
  const expect = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
  const ctx = await launch(udd, { height: 1000, offline: true,
    extraArgs: ['--allow-file-access-from-files'] });
  const problems = [], errors = [];
  const result = { file: path.basename(file) };
  try {
    const page = await ctx.newPage();
    page.setDefaultTimeout(20000);
    watchErrors(page, errors, { requests: true });
    await page.route('**/*', (route) => {
      const u = route.request().url();
      return u.startsWith('file:') || u.startsWith('data:') ? route.continue() : route.abort('blockedbyclient');
    });
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    // The threads table as shown (its search box empty).
    const table = await page.evaluate(() => ({
      head: [...document.querySelectorAll('#threads-table thead th')].filter((th) => !th.hidden).map((th) => th.textContent),
      rows: [...document.querySelectorAll('#threads-table tbody tr')].map((tr) => {
        const td = [...tr.querySelectorAll('td')];
        return [Number(td[0].textContent), Number(td[1].textContent), Number(td[3].dataset.value)];
      }),
    }));
    result.threads = table.rows.length;
    if (table.head[0] !== 'session' || table.head[1] !== 'thread')
      problems.push(`threads table columns ${table.head.join(', ')}: want session, thread first`);
    const key = (r) => `${r[0]}:${r[1]}`;
    const got = new Map(table.rows.map((r) => [key(r), r]));
    for (const w of expect.threads) {
      const g = got.get(key(w));
      if (!g) problems.push(`thread ${w[1]} of session ${w[0]} missing from the threads table`);
      else if (!(Math.abs(g[2] - w[2]) <= 2e-6))
        problems.push(`thread ${w[1]} of session ${w[0]}: created at ${g[2]} s, the reference gives ${w[2]} s`);
      got.delete(key(w));
    }
    for (const k of got.keys()) problems.push(`threads table row ${k} (session:thread) is not in the references`);
    const stats = await page.evaluate(() => Object.fromEntries(
      [...document.querySelectorAll('[data-stat]')].map((e) => [e.dataset.stat, Number(e.dataset.value)])));
    if (stats.threads !== expect.threads.length)
      problems.push(`threads figure ${stats.threads}, the references have ${expect.threads.length}`);
    if (stats.allocated !== expect.allocated)
      problems.push(`allocated ${stats.allocated} bytes, the references give ${expect.allocated}`);
    // The charts between the sessions, and in the first one.
    const [s1, s2] = expect.sessions;
    const gap = (s1.end + s2.start) / 2, inside = (s1.start + s1.end) / 2;
    result.charts = {};
    for (const id of ['chart-heapprof', 'chart-heap', 'chart-alloc']) {
      const between = await page.evaluate(colouredAt, [id, gap]);
      const within = await page.evaluate(colouredAt, [id, inside]);
      result.charts[id] = { between: between && between.length, within: within && within.length };
      if (between === null) { problems.push(`${id} not drawn`); continue; }
      if (between.length)
        problems.push(`${id}: drawn at ${gap.toFixed(3)} s, between the sessions (${between.slice(0, 3).join(' ')}): a line joins them`);
      if (!within.length) problems.push(`${id}: nothing found at ${inside.toFixed(3)} s, in the first session: the probe sees no drawing`);
    }
    if (shot) await page.screenshot({ path: shot, fullPage: true });
  } catch (e) {
    problems.push(exceptionText(e));
  }
  await finish(ctx, result, problems, errors);
}

run(main);
