// Browser check of `eventlog-live report` pages, driven by playwright-core
// with Debian's Chromium (tests/e2e/test_report.sh runs it).
//
//   node report_check.js --user-data-dir DIR [--shot PAGE:SECTION:OUT.png]...
//        REPORT.html EXPECT.json [REPORT.html EXPECT.json ...]
//
// Each page is opened from file:// with every other request aborted (the
// network is blocked: a page that tried to fetch anything fails), and
// must load without a console error, page error or failed request. The
// numbers it shows (elements data-stat="..." data-value="...") must equal
// EXPECT.json, computed by tests/e2e/report_expect.py from the eventlog's
// ghc-events .reference (null: the eventlog has no such data, so the page
// must show no such number and must show the hint naming the RTS flag
// instead; a key left out: not known, not checked). Charts and canvases must be drawn where there is data.
// EXPECT.json may also list sections added by scripts: {"title", "rows":
// [[cell values]]} for a table (compared with the cells' data-value),
// {"title", "points": N} for a series. Where the timeline has a column in
// which a thread ran, hovering over it must name the thread. Every chart's
// y tick labels must give their tick's value exactly in one unit per axis
// (binary units on binary steps), a zero tick reading "0".
// --shot PAGE:SECTION:OUT.png: a screenshot of section #SECTION (heap,
// time, profiles, logs; "page" for the whole page, "top" for the first
// screenful) of the report whose
// file name is PAGE.
// Prints one JSON line per page; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const path = require('path');
const {launch, watchErrors, exceptionText, run, arg} = require('./browser');

function args(name) {
  const out = [];
  for (let v = arg(name); v !== null; v = arg(name)) out.push(v);
  return out;
}

async function checkPage(ctx, file, expect, shots) {
  const problems = [];
  const blocked = [];
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  // requests to other hosts are blocked below on purpose: not counted
  watchErrors(page, errors, { requests: (r) => !blocked.includes(r.url()) });
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('file:') || u.startsWith('data:')) return route.continue();
    blocked.push(u);
    return route.abort('blockedbyclient');
  });
  const result = { file: path.basename(file) };
  // Every text drawn on a canvas, with its horizontal extent in canvas
  // pixels (from the context's alignment as it is drawn): the marker
  // labels below.
  await page.addInitScript(() => {
    window.elTexts = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (t, x, y, ...rest) {
      const w = this.measureText(t).width, a = this.textAlign;
      const left = a === 'right' || a === 'end' ? x - w : a === 'center' ? x - w / 2 : x;
      window.elTexts.push({ t: String(t), left, right: left + w, width: this.canvas.width });
      return fill.call(this, t, x, y, ...rest);
    };
  });
  try {
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    // The marker labels a reader sees on the charts: each whole on its
    // canvas, not cut at an edge.
    const cut = await page.evaluate(() => {
      const d = JSON.parse(document.getElementById('el-data').textContent);
      const names = new Set(((d.markers && d.markers.rows) || []).map((r) => String(r[1]).slice(0, 28)));
      return window.elTexts.filter((x) => names.has(x.t.replace(/ \(\+\d+\)$/, '')) &&
        (x.left < 0 || x.right > x.width)).map((x) => x.t);
    });
    if (cut.length) problems.push(`marker labels cut at a chart's edge: ${[...new Set(cut)].join(', ')}`);
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
        heapprofHint: hidden('heapprof-nodata') ? null : document.getElementById('heapprof-nodata').textContent,
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
    const has = (k) => Object.prototype.hasOwnProperty.call(expect, k);
    // Heap
    if (!has('peak_heap_size')) {
      // unknown (no reference): only the checks that need no figure
    } else if (expect.peak_heap_size !== null) {
      want('peak heap size', num('peak_heap_size'), expect.peak_heap_size);
      if (!seen.charts.heap) problems.push('heap chart not drawn');
    } else {
      if (seen.stats.peak_heap_size) problems.push('peak heap size shown for an eventlog without HEAP_SIZE');
      if (!seen.nodata.heap) problems.push('no hint for the missing heap events');
    }
    want('censuses', num('censuses'), expect.censuses);
    if (!has('top_band')) {
      // unknown
    } else if (expect.top_band) {
      const tb = seen.stats.top_band ? seen.stats.top_band.value : null;
      if (!expect.top_band.includes(tb)) problems.push(`top band '${tb}', the reference: ${expect.top_band.join(' | ')}`);
      want('top band peak', num('top_band_peak'), expect.top_band_peak);
      if (!seen.charts.heapprof) problems.push('heap profile chart not drawn');
      if (!seen.bandRows) problems.push('band table empty');
      if (!seen.firstBand || !seen.firstBand.startsWith(tb)) problems.push(`band table starts with '${seen.firstBand}'`);
    } else if (!seen.nodata.heapprof) {
      problems.push('no hint for the missing heap profile');
    }
    // The hint says what the eventlog shows: profiling off, or on with no
    // census (HEAP_PROF_BEGIN alone), never the other's advice.
    if (expect.heapprof_hint) {
      const h = seen.heapprofHint || '';
      if (!h.includes(expect.heapprof_hint)) problems.push(`heap profile hint '${h}' lacks '${expect.heapprof_hint}'`);
      const other = expect.heapprof_hint.startsWith('No heap profile') ? 'no census was taken' : 'run the program with';
      if (h.includes(other)) problems.push(`heap profile hint '${h}' also holds '${other}'`);
    }
    // Time
    want('GC collections', num('gc_collections'), expect.gc_collections);
    if (!has('gc_collections')) {
      // unknown
    } else if (expect.gc_collections) {
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
    want('call-stack samples', num('samples_call-stack'), expect.call_stack_samples);
    want('cost-centre samples', num('samples_cost-centre'), expect.cost_centre_samples);
    if (!has('profile_samples')) {
      // unknown
    } else if (expect.profile_samples) {
      if (!seen.icicleFrames.length || !seen.icicleFrames.every((n) => n > 1)) problems.push('flame graph not drawn');
    } else if (!seen.nodata.profiles) {
      problems.push('no hint for the missing profiles');
    }
    // The y axes as a reader sees them: every tick label states its tick's
    // value exactly in the unit shown (no "95.4 MiB" for a decimal 100 MB
    // step), one unit per axis, and a zero tick reads "0".
    const axes = await page.evaluate(() => Object.entries(window.elReport.charts)
      .filter(([, u]) => u && u.axes && u.axes[1] && u.axes[1]._values)
      .map(([id, u]) => ({ id, labels: u.axes[1]._values.map(String), splits: u.axes[1]._splits })));
    const UNIT = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40, ns: 1, 'µs': 1e3,
      ms: 1e6, s: 1e9, '%': 0.01 };
    result.axes = axes.map((a) => a.id + ': ' + a.labels.join(' | '));
    for (const a of axes) {
      const units = new Set();
      a.labels.forEach((l, i) => {
        const v = a.splits[i];
        if (v === 0) {
          if (l !== '0') problems.push(`${a.id}: the zero tick reads '${l}'`);
          return;
        }
        const m = /^(-?[\d,]*\.?\d+) ?(\S*)$/.exec(l);
        if (!m) { problems.push(`${a.id}: tick label '${l}'`); return; }
        const unit = m[2].replace(/\/s$/, '');
        units.add(m[2]);
        const shown = Number(m[1].replace(/,/g, '')) * (UNIT[unit] || 1);
        if (Math.abs(shown - v) > 1e-9 * Math.max(1, Math.abs(v)))
          problems.push(`${a.id}: tick ${v} reads '${l}' (${shown})`);
      });
      if (units.size > 1) problems.push(`${a.id}: ticks in ${[...units].join(', ')}`);
    }
    if (seen.external.length) problems.push('external references: ' + seen.external.join(' '));
    if (blocked.length) problems.push('tried to fetch: ' + blocked.join(' '));
    // Sections added by scripts.
    for (const want of expect.sections || []) {
      const got = await page.evaluate((title) => {
        const sec = [...document.querySelectorAll('#custom section')]
          .find((x) => x.querySelector('h2').textContent === title);
        if (!sec) return null;
        return { kind: sec.dataset.kind, points: Number(sec.dataset.points || 0),
          chart: !!sec.querySelector('canvas'),
          rows: [...sec.querySelectorAll('tbody tr')].map((tr) =>
            [...tr.querySelectorAll('td')].map((td) => (td.dataset.value === undefined ? null : Number(td.dataset.value)))) };
      }, want.title);
      if (!got) { problems.push(`section '${want.title}' missing`); continue; }
      if (want.rows && JSON.stringify(got.rows) !== JSON.stringify(want.rows))
        problems.push(`section '${want.title}': rows ${JSON.stringify(got.rows)}, want ${JSON.stringify(want.rows)}`);
      if (want.points !== undefined) {
        if (got.points !== want.points) problems.push(`section '${want.title}': ${got.points} points, want ${want.points}`);
        if (!got.chart) problems.push(`section '${want.title}': no chart`);
      }
    }
    // Screenshots before the hover below zooms the timeline in.
    for (const [name, sec, out] of shots) {
      if (name !== path.basename(file)) continue;
      if (sec === 'page') await page.screenshot({ path: out, fullPage: true });
      else if (sec === 'top') {
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: out });
      }
      else await page.locator('#' + sec).screenshot({ path: out });
    }
    // The thread on hover: the middle of a column where a thread ran most.
    const spot = await page.evaluate(() => {
      const tl = window.elReport.data.timeline;
      const c = document.getElementById('timeline-canvas');
      if (!tl.caps.length || !c.dataset.view) return null;
      let best = null;
      tl.caps.forEach((cap, r) => cap.thr.forEach((th, i) => {
        if (th >= 0 && (!best || cap.thr_share[i] > best.share)) best = { r, i, th, share: cap.thr_share[i] };
      }));
      if (!best) return null;
      // Zoom in on that column (20 columns across), then hover its middle.
      const t = tl.t0 + (best.i + 0.5) * tl.width_s;
      window.elReport.timeline.setView([t - 10 * tl.width_s, t + 10 * tl.width_s]);
      c.scrollIntoView({ block: 'center' });
      const box = c.getBoundingClientRect();
      const [a, b] = c.dataset.view.split(',').map(Number);
      return { x: box.left + 56 + (t - a) / (b - a) * (box.width - 56 - 8),
        y: box.top + 22 + best.r * 26 + 13, th: best.th };
    });
    if (spot) {
      await page.mouse.move(spot.x, spot.y);
      const tip = await page.evaluate(() => {
        const t = document.getElementById('timeline-tip');
        return t.hidden ? null : t.textContent;
      });
      result.hover = tip;
      if (!tip || !tip.includes(`thread ${spot.th}`))
        problems.push(`hovering the timeline shows '${tip}', want thread ${spot.th}`);
    }

  } catch (e) {
    problems.push(exceptionText(e));
  }
  await page.close();
  problems.push(...errors.map((e) => 'console: ' + e));
  result.problems = problems;
  return result;
}

async function main() {
  const udd = arg('--user-data-dir');
  const shots = args('--shot').map((x) => x.split(':'));
  const pairs = process.argv.slice(2);
  const ctx = await launch(udd, { height: 1000, offline: true,
    extraArgs: ['--allow-file-access-from-files'] });
  let failed = 0;
  try {
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const expect = JSON.parse(fs.readFileSync(pairs[i + 1], 'utf8'));
      const r = await checkPage(ctx, pairs[i], expect, shots);
      if (r.problems.length) failed++;
      console.log(JSON.stringify({ file: r.file, problems: r.problems, hover: r.hover, axes: r.axes,
        stats: r.seen && Object.fromEntries(Object.entries(r.seen.stats).map(([k, v]) => [k, v.value])) }));
    }
  } finally {
    await ctx.close();
  }
  process.exit(failed ? 1 : 0);
}

run(main);
