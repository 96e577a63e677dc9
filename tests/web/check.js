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
// heap chart ends at the reference's last heap size; eventlog-live's own
// messages are listed apart from the log tail (--ended: the file's
// "Reading eventlog from" among them). --click-census
// clicks "Request heap census" and waits for the control server's 200.
// Prints one JSON line of findings; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const { launch, watchErrors, exceptionText, finish, run } = require('./browser');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const flag = (name) => process.argv.includes(name);

// The numbers the page shows, read from its charts (uPlot's own state)
// and table, against the expectations the shell test computed from the
// ghc-events .reference (keys absent or null: not checked):
//  - every chart's y-axis tick labels fit in the axis (measured again
//    here with the axis font), are all different, and the top label's
//    value (read back with its unit) is within a factor 2 of the largest
//    value the chart plots;
//  - expect.alloc_total: the allocation-rate chart integrated over time
//    is the reference's total allocated bytes (within 1 %): every byte
//    shows, also those of the first interval, from the program's start
//    (the RTS's count begins there) to the first exported point; and the
//    chart begins at the program's start (expect.start_ms, its
//    WALL_CLOCK_TIME minus that event's time, within 1 ms), no later;
//  - expect.caps: the capability usage chart never shows more busy or
//    idle capabilities than that, and GC + Idle + Mutator = caps;
//  - expect.thread_states: every thread row's state is the one its last
//    RUN_THREAD / STOP_THREAD in the reference leaves it in;
//  - all time charts share one x range; no two marker labels overlap.
async function checkNumbers(page, api, expect, problems) {
  const got = await page.evaluate(() => {
    const out = { axes: {}, ranges: {}, series: {} };
    const ctx = document.createElement('canvas').getContext('2d');
    for (const [id, c] of Object.entries(window.elCharts)) {
      const u = c.plot;
      const ax = u.axes[1];
      ctx.font = ax.font[0];
      const labels = (ax._values || []).map(String);
      const widths = labels.map((l) => ctx.measureText(l).width / devicePixelRatio);
      out.axes[id] = { labels, widths, size: ax._size, tick: ax.ticks.size, gap: ax.gap };
      out.ranges[id] = [u.scales.x.min, u.scales.x.max];
      out.series[id] = { labels: u.series.slice(1).map((s) => s.label), data: u.data };
    }
    out.caps = document.getElementById('chart-caps').dataset.caps;
    out.capsSource = document.getElementById('chart-caps').dataset.source;
    out.threads = [...document.querySelectorAll('#threads tbody tr')]
      .filter((tr) => tr.className !== 'other')
      .map((tr) => [...tr.children].map((td) => td.textContent));
    out.markerBoxes = window.elMarkerBoxes;
    return out;
  });
  const unitOf = { '': 1, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4,
    k: 1e3, M: 1e6, G: 1e9, '%': 0.01, ms: 1, s: 1e3 };
  const parse = (l) => {
    const m = /^(-?[0-9.]+)\s*([A-Za-z%]*)/.exec(l.trim());
    return m && m[2] in unitOf ? Number(m[1]) * unitOf[m[2]] : NaN;
  };
  // The page's axis formatter over 1 B .. 1 PiB: ticks 0, x, 2x, 3x must
  // read back as themselves (within half a step) and never repeat.
  const sweep = await page.evaluate(() => {
    const out = [];
    for (let e = 0; e < 50; e++) {
      const x = Math.round(1.93 ** e * 7) / 4;
      const vals = [0, x, 2 * x, 3 * x];
      out.push({ vals, labels: bytesAxis('/s')(null, vals) });
    }
    return out;
  });
  for (const { vals, labels } of sweep) {
    const back = labels.map((l) => parse(l.replace(/\/s$/, '')));
    if (new Set(labels).size !== labels.length ||
        back.some((v, i) => !(Math.abs(v - vals[i]) <= vals[1] / 2)))
      problems.push(`axis labels ${labels.join(' | ')} do not read back as ${vals.join(', ')}`);
  }
  // A byte axis steps by powers of two (BYTE_INCRS), and the pause chart's
  // by 1, 2, 5 times a power of ten in ms: every tick must read back as
  // itself exactly, not merely within half a step (h71: the 0.25 GiB
  // tick read "0.3 GiB"; pauses read "1.5 k ms").
  const exact = await page.evaluate(() => {
    const out = [];
    for (let k = 0; k < 48; k++) {
      const st = 2 ** k;
      const vals = [0, st, 2 * st, 3 * st, 4 * st, 5 * st];
      out.push({ vals, labels: bytesAxis('')(null, vals) });
    }
    for (const vals of [[0, 250, 500, 750, 1000, 1250], [0, 0.5, 1, 1.5, 2],
      [0, 20, 40, 60, 80]])
      out.push({ vals, labels: msAxis()(null, vals) });
    return out;
  });
  for (const { vals, labels } of exact) {
    const back = labels.map(parse);
    if (back.some((v, i) => !(Math.abs(v - vals[i]) <= 1e-9 * Math.max(1, vals[i]))) ||
        labels.some((l) => /k ms/.test(l)))
      problems.push(`axis labels ${labels.join(' | ')} do not read back exactly as ${vals.join(', ')}`);
  }
  for (const [id, a] of Object.entries(got.axes)) {
    const need = Math.max(0, ...a.widths) + a.tick + a.gap;
    if (need > a.size + 0.5)
      problems.push(`${id}: y labels need ${need.toFixed(1)} px, the axis has ${a.size}`);
    if (new Set(a.labels).size !== a.labels.length)
      problems.push(`${id}: y labels repeat: ${a.labels.join(' | ')}`);
    const vals = a.labels.map(parse);
    if (vals.some((v) => Number.isNaN(v)))
      problems.push(`${id}: unreadable y labels ${a.labels.join(' | ')}`);
    const ys = got.series[id].data.slice(1).flat().filter((v) => v !== null && v !== undefined);
    const maxY = Math.max(...ys);
    const top = Math.max(...vals);
    if (maxY > 0 && !(top <= 2 * maxY && top >= 0.5 * maxY))
      problems.push(`${id}: top y label ${a.labels[a.labels.length - 1]} (${top}) is not the data's magnitude (max ${maxY})`);
  }
  // One x range for every time chart.
  const ranges = Object.entries(got.ranges);
  for (const [id, r] of ranges) {
    if (r[0] !== ranges[0][1][0] || r[1] !== ranges[0][1][1])
      problems.push(`${id}: x range ${r} differs from ${ranges[0][0]}'s ${ranges[0][1]}`);
  }
  // Marker labels: no two boxes of one chart intersect.
  for (const [id, boxes] of Object.entries(got.markerBoxes || {})) {
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const p = boxes[i], q = boxes[j];
        if (p.x0 < q.x1 && q.x0 < p.x1 && p.y0 < q.y1 && q.y0 < p.y1)
          problems.push(`${id}: marker labels '${p.text}' and '${q.text}' overlap`);
      }
    }
  }
  if (expect.alloc_total) {
    const d = got.series['chart-alloc'].data;
    const w = d[0].length > 1 ? d[0][1] - d[0][0] : 0;
    const total = d[1].reduce((s, v) => s + (v || 0) * w, 0);
    if (Math.abs(total - expect.alloc_total) > 0.01 * expect.alloc_total)
      problems.push(`allocation rate integrates to ${total} bytes, the reference allocated ${expect.alloc_total}`);
    // xs are the bins' ends (s): the first bin starts one width earlier.
    const startS = d[0].length ? d[0][0] - w : NaN;
    if (expect.start_ms && !(Math.abs(startS * 1000 - expect.start_ms) <= 1))
      problems.push(`allocation rate begins at ${startS * 1000} ms, the program started at ${expect.start_ms} ms`);
  }
  if (expect.caps) {
    if (got.caps !== String(expect.caps))
      problems.push(`capability usage counts ${got.caps} capabilities, the reference ${expect.caps}`);
    const { labels, data } = got.series['chart-caps'];
    const sum = data[0].map(() => 0);
    data.slice(1).forEach((ys, k) => ys.forEach((v, i) => {
      if (v > expect.caps + 1e-9) problems.push(`${labels[k]} shows ${v} > ${expect.caps} capabilities`);
      sum[i] += v || 0;
    }));
    if (got.capsSource === 'spans' &&
        sum.some((v) => Math.abs(v - expect.caps) > 1e-6))
      problems.push(`GC + Idle + Mutator is not ${expect.caps} capabilities: ${sum.slice(0, 5)}`);
  }
  if (expect.thread_states) {
    for (const [id, , state] of got.threads) {
      const want = expect.thread_states[id];
      if (want && state !== want) problems.push(`thread ${id} shows '${state}', the reference leaves it ${want}`);
    }
    const finished = Object.values(expect.thread_states).filter((s) => s === 'Finished').length;
    const shown = got.threads.filter((r) => r[2] === 'Finished').length;
    if (shown !== finished) problems.push(`${shown} threads shown Finished, the reference finished ${finished}`);
  }
  return { axes: Object.fromEntries(Object.entries(got.axes).map(([k, a]) => [k, a.labels])),
    caps: got.caps, capsSource: got.capsSource, threads: got.threads };
}

async function main() {
  const url = arg('--url');
  const shot = arg('--screenshot');
  const udd = arg('--user-data-dir');
  const expect = JSON.parse(fs.readFileSync(arg('--expect'), 'utf8'));
  const problems = [];
  const consoleErrors = [];
  const ctx = await launch(udd, { extraArgs: ['--disable-quic'] });
  let result = {};
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(20000);
    watchErrors(page, consoleErrors, { requests: true });
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
      out.heapTitle = document.getElementById('heap-title').textContent;
      out.markerRows = [...document.querySelectorAll('#logs td.kind-UserMarker')].length;
      out.tailKinds =
          [...new Set([...document.querySelectorAll('#logs tbody tr')].map(
              (tr) => tr.children[1].textContent))];
      out.internal =
          [...document.querySelectorAll('#internal-logs tbody tr')].map(
              (tr) => tr.children[2].textContent);
      out.service = document.getElementById('service').textContent;
      out.status = document.getElementById('status').textContent;
      return out;
    });
    result.seen = seen;

    // The heap chart's title names its series: 'blocks' only when drawn
    // (GHC 9.2 and later write BLOCKS_SIZE).
    if (/blocks/.test(seen.heapTitle) !== seen.heapLabels.includes('blocks') ||
        !/^Heap size/.test(seen.heapTitle))
      problems.push(`heap chart title '${seen.heapTitle}' for series ${seen.heapLabels.join(', ')}`);
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
    // eventlog-live's own messages (dated by its clock, not the
    // recording's) are listed apart from the program's log tail.
    if (seen.tailKinds.includes('internal'))
      problems.push(
          'eventlog-live\'s own messages are in the program\'s log tail');
    if (flag('--ended') &&
        !seen.internal.some((b) => /^Reading eventlog from /.test(b)))
      problems.push(`eventlog-live's messages do not say it read the file: ${
          JSON.stringify(seen.internal)}`);
    if (seen.service !== expect.service)
      problems.push(`service '${seen.service}', want '${expect.service}'`);
    if (flag('--ended') && !/input ended/.test(seen.status))
      problems.push(`status '${seen.status}' does not say the input ended`);

    result.numbers = await checkNumbers(page, api, expect, problems);

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
    problems.push(exceptionText(e));
  }
  await finish(ctx, result, problems, consoleErrors);
}

run(main);
