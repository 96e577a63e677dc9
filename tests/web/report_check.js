// Browser check of `eventlog-live report` pages, driven by playwright-core
// with Debian's Chromium (tests/e2e/test_report.sh runs it).
//
//   node report_check.js --user-data-dir DIR [--shots PREFIX]
//        REPORT.html EXPECT.json [REPORT.html EXPECT.json ...]
//
// Each page is opened from file:// with every other request aborted (the
// network is blocked: a page that tried to fetch anything fails), and
// must load without a console error, page error or failed request. The
// numbers it shows (elements data-stat="..." data-value="...") must equal
// EXPECT.json, computed by tests/e2e/report_expect.py from the eventlog's
// ghc-events .reference (null: the eventlog has no such data, so the page
// must show no such number and must show the hint naming the RTS flag
// instead). Charts and canvases must be drawn where there is data.
// --shots PREFIX: screenshots PREFIX-<section>.png of the first page's
// sections (heap, time, profiles, logs) and PREFIX-page.png.
// Prints one JSON line per page; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0) return null;
  const v = process.argv[i + 1];
  process.argv.splice(i, 2);
  return v;
}

async function checkPage(ctx, file, expect, shots) {
  const problems = [];
  const blocked = [];
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('pageerror: ' + e.message));
  page.on('requestfailed', (r) => {
    if (!blocked.includes(r.url())) problems.push(`request failed: ${r.url()}`);
  });
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('file:') || u.startsWith('data:')) return route.continue();
    blocked.push(u);
    return route.abort('blockedbyclient');
  });
  const result = { file: path.basename(file) };
  try {
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    const seen = await page.evaluate(() => {
      const stats = {};
      for (const e of document.querySelectorAll('[data-stat]')) {
        const k = e.dataset.stat;
        if (k in stats) continue;
        const box = e.getBoundingClientRect();
        stats[k] = { value: e.dataset.value, text: e.querySelector('.v').textContent,
          visible: box.width > 0 && box.height > 0 };
      }
      const canvas = (sel) => { const c = document.querySelector(sel + ' canvas'); return !!c && c.width > 0; };
      const hidden = (id) => document.getElementById(id).hidden;
      return {
        stats,
        charts: { heap: canvas('#chart-heap'), heapprof: canvas('#chart-heapprof'),
          prod: canvas('#chart-prod'), pauses: canvas('#chart-pauses') },
        timelineView: document.getElementById('timeline-canvas').dataset.view || null,
        icicleFrames: [...document.querySelectorAll('.icicle canvas')].map((c) => Number(c.dataset.frames || 0)),
        bandRows: document.querySelectorAll('#bands-table tbody tr').length,
        firstBand: (document.querySelector('#bands-table tbody tr td.name') || {}).textContent || null,
        logRows: document.querySelectorAll('#logs-table tbody tr').length,
        markerRows: document.querySelectorAll('#logs-table td.kind-marker').length,
        nodata: { heap: !hidden('heap-nodata'), heapprof: !hidden('heapprof-nodata'),
          timeline: !hidden('timeline-nodata'), gc: !hidden('gc-nodata'),
          profiles: !hidden('profiles-nodata'), logs: !hidden('logs-nodata') },
        external: [...document.querySelectorAll('script[src], link[href], img[src], iframe[src]')]
          .map((e) => e.src || e.href).filter((u) => !/^(data:|file:|#)/.test(u) && u !== ''),
      };
    });
    result.seen = seen;
    const num = (k) => (seen.stats[k] ? Number(seen.stats[k].value) : null);
    const want = (k, got, exp) => {
      if (exp === null || exp === undefined) return;
      if (got !== exp) problems.push(`${k}: page shows ${got}, the reference gives ${exp}`);
    };
    for (const [k, s] of Object.entries(seen.stats))
      if (!s.visible || !s.text) problems.push(`stat ${k} is not shown`);
    // Heap
    if (expect.peak_heap_size !== null) {
      want('peak heap size', num('peak_heap_size'), expect.peak_heap_size);
      if (!seen.charts.heap) problems.push('heap chart not drawn');
    } else {
      if (seen.stats.peak_heap_size) problems.push('peak heap size shown for an eventlog without HEAP_SIZE');
      if (!seen.nodata.heap) problems.push('no hint for the missing heap events');
    }
    want('censuses', num('censuses'), expect.censuses);
    if (expect.top_band) {
      const tb = seen.stats.top_band ? seen.stats.top_band.value : null;
      if (!expect.top_band.includes(tb)) problems.push(`top band '${tb}', the reference: ${expect.top_band.join(' | ')}`);
      want('top band peak', num('top_band_peak'), expect.top_band_peak);
      if (!seen.charts.heapprof) problems.push('heap profile chart not drawn');
      if (!seen.bandRows) problems.push('band table empty');
      if (!seen.firstBand || !seen.firstBand.startsWith(tb)) problems.push(`band table starts with '${seen.firstBand}'`);
    } else if (!seen.nodata.heapprof) {
      problems.push('no hint for the missing heap profile');
    }
    // Time
    want('GC collections', num('gc_collections'), expect.gc_collections);
    if (expect.gc_collections) {
      want('longest pause', num('gc_longest_pause_ns'), expect.gc_longest_pause_ns);
      if (!seen.timelineView) problems.push('timeline not drawn');
      if (!seen.charts.prod) problems.push('productivity chart not drawn');
      if (!seen.charts.pauses) problems.push('pause chart not drawn');
    } else if (!seen.nodata.gc) {
      problems.push('no hint for the missing GC events');
    }
    // Logs
    want('markers', num('markers'), expect.markers);
    if (expect.markers && seen.markerRows !== expect.markers)
      problems.push(`${seen.markerRows} marker rows in the log table, the reference has ${expect.markers}`);
    // Profiles
    want('profile samples', num('profile_samples'), expect.profile_samples);
    if (expect.profile_samples) {
      if (!seen.icicleFrames.length || !seen.icicleFrames.every((n) => n > 1)) problems.push('flame graph not drawn');
    } else if (!seen.nodata.profiles) {
      problems.push('no hint for the missing profiles');
    }
    if (seen.external.length) problems.push('external references: ' + seen.external.join(' '));
    if (blocked.length) problems.push('tried to fetch: ' + blocked.join(' '));
    if (shots) {
      for (const id of ['heap', 'time', 'profiles', 'logs']) {
        await page.locator('#' + id).screenshot({ path: `${shots}-${id}.png` });
      }
      await page.screenshot({ path: `${shots}-page.png`, fullPage: true });
    }
  } catch (e) {
    problems.push('exception: ' + (e && e.stack ? e.stack : e));
  }
  await page.close();
  result.problems = problems;
  return result;
}

async function main() {
  const udd = arg('--user-data-dir');
  const shots = arg('--shots');
  const pairs = process.argv.slice(2);
  const ctx = await chromium.launchPersistentContext(udd, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--allow-file-access-from-files'],
    viewport: { width: 1400, height: 1000 },
    offline: true,
    timeout: 30000,
  });
  let failed = 0;
  try {
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const expect = JSON.parse(fs.readFileSync(pairs[i + 1], 'utf8'));
      const r = await checkPage(ctx, pairs[i], expect, i === 0 ? shots : null);
      if (r.problems.length) failed++;
      console.log(JSON.stringify({ file: r.file, problems: r.problems,
        stats: r.seen && Object.fromEntries(Object.entries(r.seen.stats).map(([k, v]) => [k, v.value])) }));
    }
  } finally {
    await ctx.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
