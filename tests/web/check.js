// Browser check of the daemon's web view, driven by playwright-core with
// Debian's Chromium (tests/e2e/test_web.sh runs it).
//
//   node check.js --url URL --screenshot FILE --user-data-dir DIR
//                 --expect EXPECT.json [--click-census] [--ended | --live]
//
// EXPECT.json holds counts computed by the shell test from the eventlog's
// .reference (an independent decoder): markers, threads, gc_pauses and the
// last heap size. Checks: the page loads without console errors or page
// errors; every chart the eventlog feeds has data points; the heap
// profile chart has one x value per distinct sample time of
// HeapProfSample in /api/data; the log tail lists the reference's
// markers, the thread table its threads, the pauses chart its GCs; the
// heap chart ends at the reference's last heap size. --click-census
// clicks "Request heap census" and waits for the control server's 200.
// Prints one JSON line of findings; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const flag = (name) => process.argv.includes(name);

async function main() {
  const url = arg('--url');
  const shot = arg('--screenshot');
  const udd = arg('--user-data-dir');
  const expect = JSON.parse(fs.readFileSync(arg('--expect'), 'utf8'));
  const problems = [];
  const consoleErrors = [];
  const ctx = await chromium.launchPersistentContext(udd, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
      '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 1800 },
    timeout: 30000,
  });
  let result = {};
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(20000);
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push('pageerror: ' + e.message));
    page.on('requestfailed', (r) => consoleErrors.push(
      `request failed: ${r.url()} ${r.failure() && r.failure().errorText}`));
    await page.goto(url, { waitUntil: 'load' });
    // Data arrives with the first polls; the heap chart is drawn once the
    // replay has exported something.
    // Rates need two exported points per series: a live stream gets its
    // second window when the wall-clock timer closes it.
    const charts = ['chart-heap', 'chart-heapprof', 'chart-alloc', 'chart-prod',
      'chart-caps'].concat(expect.gc_pauses ? ['chart-pauses'] : []);
    await page.waitForFunction((ids) => window.elView && window.elView.polls >= 2 &&
      ids.every((id) => Number(document.getElementById(id).dataset.points) > 0),
    charts, { timeout: 30000 }).catch(() => {});
    if (flag('--ended')) {
      await page.waitForFunction(() => window.elView.data.ended === true);
      // One more poll after the end, so the page shows everything.
      const p = await page.evaluate(() => window.elView.polls);
      await page.waitForFunction((n) => window.elView.polls > n, p);
    }
    // Ended: a fresh fetch of the data endpoint; live: the document the
    // page drew last (newer data may have arrived since).
    const api = flag('--ended')
      ? await (await page.request.get(new URL('api/data', url).href)).json()
      : await page.evaluate(() => window.elView.data);
    const seen = await page.evaluate(() => {
      const out = {};
      for (const s of document.querySelectorAll('section')) {
        out[s.id] = { times: Number(s.dataset.times || 0),
          points: Number(s.dataset.points || 0),
          rows: Number(s.dataset.rows || 0),
          canvas: !!s.querySelector('canvas') };
      }
      const heap = window.elCharts['chart-heap'];
      out.heapLast = heap ? heap.plot.data[1][heap.plot.data[1].length - 1] : null;
      out.heapLabels = heap ? heap.plot.series.slice(1).map((s) => s.label) : [];
      out.markerRows = [...document.querySelectorAll('#logs td.kind-UserMarker')].length;
      out.service = document.getElementById('service').textContent;
      out.status = document.getElementById('status').textContent;
      return out;
    });
    result.seen = seen;

    // Charts with data, drawn on a canvas.
    for (const id of charts) {
      if (!(seen[id].points > 0)) problems.push(`${id}: no data points`);
      if (!seen[id].canvas) problems.push(`${id}: not drawn`);
    }
    // The heap profile chart against the data endpoint.
    const hp = api.metrics.find((f) => f.name.endsWith('HeapProfSample'));
    const hpTimes = hp ? new Set(hp.series.flatMap((s) => s.points.map((p) => p[0]))).size : 0;
    if (seen['chart-heapprof'].times !== hpTimes)
      problems.push(`heap profile chart has ${seen['chart-heapprof'].times} times, /api/data ${hpTimes}`);
    // Against the reference.
    if (expect.heap_size !== null && seen.heapLast !== expect.heap_size)
      problems.push(`heap chart ends at ${seen.heapLast}, the reference at ${expect.heap_size}`);
    if (expect.markers !== null && seen.markerRows !== expect.markers)
      problems.push(`${seen.markerRows} marker rows, the reference has ${expect.markers}`);
    if (expect.markers !== null && api.markers.length !== expect.markers)
      problems.push(`${api.markers.length} markers in /api/data, the reference has ${expect.markers}`);
    if (expect.threads !== null && seen.threads.rows !== expect.threads)
      problems.push(`${seen.threads.rows} thread rows, the reference created ${expect.threads}`);
    if (expect.gc_pauses && seen['chart-pauses'].points !== expect.gc_pauses)
      problems.push(`${seen['chart-pauses'].points} GC pauses, the reference has ${expect.gc_pauses}`);
    if (seen.service !== expect.service)
      problems.push(`service '${seen.service}', want '${expect.service}'`);
    if (flag('--ended') && !/input ended/.test(seen.status))
      problems.push(`status '${seen.status}' does not say the input ended`);

    if (flag('--click-census')) {
      await page.click('#btn-census');
      await page.waitForFunction(() => window.elView.control.length > 0);
      const c = await page.evaluate(() => window.elView.control[0]);
      result.control = c;
      if (c.status !== 200 || !/request-heap-census/.test(c.body))
        problems.push(`census request answered ${c.status} ${c.body}`);
      const st = await page.textContent('#control-status');
      if (st !== 'sent request-heap-census') problems.push(`control status '${st}'`);
    }
    await page.screenshot({ path: shot, fullPage: true });
  } catch (e) {
    problems.push('exception: ' + (e && e.stack ? e.stack : e));
  } finally {
    await ctx.close();
  }
  if (consoleErrors.length) problems.push(...consoleErrors.map((e) => 'console: ' + e));
  result.problems = problems;
  console.log(JSON.stringify(result));
  process.exit(problems.length ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
