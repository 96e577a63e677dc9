// Browser check of the daemon's web view against hand-made /api/data
// documents (tests/e2e/test_web_fixture.sh runs it): the page and its
// assets come from the daemon (the embedded files), but every request for
// api/data is answered with a document built here, so each expected value
// below follows from this file's own input, not from the page's code.
//
//   node fixture_check.js --url URL --screenshot FILE --user-data-dir DIR
//
// 1. Two sessions 28 s apart (docs/web.md "Sessions"): session 1 from T0
//    to T0 + 10 s, session 2 from T0 + 38 s (count starts 0.5 s before
//    its first point) to T0 + 48 s. Session 1's series are stale for
//    HeapSize and HeapLive, not stale for the others (a new run's pid
//    gives its series other labels). Every line of every time chart must
//    break between the sessions: in the chart's data a null between its
//    last value of session 1 and its first of session 2, no value wholly
//    inside the gap, and uPlot's drawn path clipped over the gap; within
//    a session the heap lines are unbroken (HeapLive is sampled half a
//    second after HeapSize). Session 1's last values are not carried
//    into session 2: the heap chart's blocks at session 2's first point
//    is session 2's value.
// 2. Log tail: 250 records whose blocks of 10 arrive out of time order
//    (as whole capability buffers do with -N2 on GHC 9.0): the table must
//    list the 200 newest by time, newest first. With them, three of
//    eventlog-live's own messages dated 400 days later (its wall clock
//    while replaying a recording): the tail must not list them; their own
//    table lists them newest first with their level, and is hidden when
//    there are none.
// Also: a 9.5 s view's time axis has at least 4 ticks (checkTicks).
// 3. The header's status line for three hand-made stats: evicted series
//    (none stale), then some stale, some dropped points and merged
//    series: the words must say what each counter counts. And while the
//    daemon waits for a reconnection ("reconnecting": true, not ended):
//    the words say so in place of "input ended".
// 4. The note under the GC pauses chart: empty while every pause is kept;
//    once older ones were forgotten, how many of how many are shown.
// 5. The daemon's self-metrics (session 0) dated 400 days after the
//    recording do not widen the charts' time range.
// Prints one JSON line of findings; exit 0 pass, 1 fail.
'use strict';
const { launch, watchErrors, exceptionText, finish, run } = require('./browser');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

// {====== the hand-made input ======}

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const MIB = 1024 * 1024;
const S1 = { session: 1, from: T0, to: T0 + 10000 };
const S2 = { session: 2, from: T0 + 38000, to: T0 + 48000 };
const START_BEFORE = 500; // a cumulative count starts 0.5 s before its first point
// The gap no program ran in: from session 1's last point to session 2's
// count start.
const GAP = [S1.to, S2.from - START_BEFORE];

// Points every `step` ms over a session, value f(k, t), offset `off` ms.
function pts(s, step, f, off = 0) {
  const out = [];
  for (let t = s.from + off, k = 0; t <= s.to; t += step, k++) out.push([t, f(k, t)]);
  return out;
}

// A cumulative series of a steady rate: its first point carries the
// count's start (0.5 s of the rate counted by then), then 1 s per point.
function cumulative(s, perSecond) {
  const p = pts(s, 1000, (k) => perSecond * (0.5 + k));
  p[0].push(p[0][0] - START_BEFORE);
  return p;
}

function series(attrs, s, stale, points) {
  return { attrs, session: s.session, stale, points };
}

function gauge(name, perSession) {
  return { name: 'ghc_eventlog_' + name, prom: 'ghc_eventlog_' + name + '_bytes', unit: 'By',
    kind: 'gauge', monotonic: false, nseries: perSession.length, series: perSession };
}
function sum(name, unit, perSession) {
  return { name: 'ghc_eventlog_' + name, prom: 'x', unit, kind: 'sum', monotonic: true,
    nseries: perSession.length, series: perSession };
}

// Session values: HeapSize 10 MiB + k MiB in session 1, 40 MiB + k MiB in
// session 2; BlocksSize 3 MiB and 5 MiB.
const heapSize = (base) => (k) => (base + k) * MIB;
const BLOCKS1 = 3 * MIB, BLOCKS2 = 5 * MIB;

function sessionsDoc() {
  const metrics = [
    gauge('HeapSize', [series({}, S1, true, pts(S1, 1000, heapSize(10))),
      series({}, S2, false, pts(S2, 1000, heapSize(40)))]),
    gauge('HeapLive', [series({}, S1, true, pts(S1, 1000, () => 4 * MIB, 500)),
      series({}, S2, false, pts(S2, 1000, () => 6 * MIB, 500))]),
    gauge('BlocksSize', [series({}, S1, false, pts(S1, 1000, () => BLOCKS1)),
      series({}, S2, false, pts(S2, 1000, () => BLOCKS2))]),
    gauge('HeapProfSample', ['A', 'B'].flatMap((l, i) => [S1, S2].map((s) =>
      series({ heapProfLabel: l }, s, false, pts(s, 2000, (k) => (i + 1 + k) * MIB))))),
    sum('HeapAllocated', 'By', ['0', '1'].flatMap((c) => [S1, S2].map((s) =>
      series({ evCap: c }, s, false, cumulative(s, 20 * MIB))))),
    sum('CapabilityUsageDuration', 'ns', [['GC', 1e8], ['Mutator', 8e8]].flatMap(
      ([cat, rate]) => [S1, S2].map((s) =>
        series({ category: cat, user: 'x' }, s, false, cumulative(s, rate))))),
  ];
  // Capability usage bins of 1 s: busy in the sessions, nothing in between.
  const bins = [];
  for (let t = S1.from - START_BEFORE; t < S2.to; t += 1000) {
    const busy = (t >= S1.from - START_BEFORE && t < S1.to) || (t >= GAP[1] && t < S2.to);
    bins.push([t, busy ? 100 : 0, busy ? 700 : 0]);
  }
  return {
    service: 'fixture',
    control_port: -1,
    ended: true,
    now_ms: S2.to + 1000,
    stats: {
      batches: 12,
      points: 34567,
      dropped_series: 0,
      evicted_series: 0,
      evicted_stale_series: 0,
      merged_series: 0,
      rekeyed_series: 0,
      series_limit: 2000
    },
    metrics,
    logs: [],
    internal_logs: [],
    markers: [],
    gc_pauses: [[S1.from + 2000, 1.5], [S2.from + 2000, 2.5]],
    gc_pauses_forgotten: 0,
    threads: [],
    threads_other: {
      threads: 0,
      finished: 0,
      ended: 0,
      late_labels: 0,
      dropped_labels: 0,
      unremembered: 0,
      late_session: 0,
      running_ms: 0
    },
    // hi: the end of the last bin (T0 + 48.5 s)
    cap_usage: {
      caps: 2,
      bin_ms: 1000,
      lo: S1.from - START_BEFORE,
      hi: S2.to + 500,
      clipped: 0,
      bins
    },
  };
}

// 250 records at T0 + 100 ms * i, i = 0..249, arriving in blocks of 10
// whose order swaps every pair (block 1, block 0, block 3, block 2, ...,
// block 23, block 22, then block 24).
function logsDoc() {
  const d = sessionsDoc();
  const logs = [];
  for (let b = 0; b < 25; b++) {
    const block = b < 24 ? b ^ 1 : b;
    for (let j = 0; j < 10; j++) {
      const i = block * 10 + j;
      logs.push({ t: T0 + 100 * i, kind: 'UserMessage', body: `record ${i}`,
        severity: 9, thread: -1 });
    }
  }
  d.logs = logs;
  // eventlog-live's own, in arrival order, at T0 + 400 days (2027-02-05
  // 12:00:00 UTC) + 0, 10 and 5 ms
  const NOW = T0 + 400 * 86400000;
  d.internal_logs = [
    {
      t: NOW,
      kind: 'internal',
      body: 'Reading eventlog from rec.eventlog',
      severity: 9,
      thread: -1
    },
    {t: NOW + 10, kind: 'internal', body: 'an error', severity: 17, thread: -1},
    {t: NOW + 5, kind: 'internal', body: 'a warning', severity: 13, thread: -1},
  ];
  return d;
}
// The 200 newest by time, newest first: records 249 down to 50.
const WANT_LOG_BODIES = [...Array(200).keys()].map((k) => `record ${249 - k}`);
// eventlog-live's own, newest first: time, level, message.
const WANT_INTERNAL = [
  ['2027-02-05 12:00:00.010', 'error', 'an error'],
  ['2027-02-05 12:00:00.005', 'warn', 'a warning'],
  ['2027-02-05 12:00:00.000', 'info', 'Reading eventlog from rec.eventlog'],
];

// The header for three sets of stats.
const STATUS_CASES = [
  [
    {evicted_series: 10250},
    'input ended · 34567 points in 12 batches · ' +
        '10250 series forgotten over the limit of 2000 per metric'
  ],
  [
    {evicted_series: 10250, evicted_stale_series: 3},
    'input ended · 34567 points in 12 batches · ' +
        '10250 series forgotten over the limit of 2000 per metric (3 of them stale)'
  ],
  [
    {dropped_series: 7, merged_series: 2},
    'input ended · 34567 points in 12 batches · 7 points dropped (too many metrics) · ' +
        '2 duplicate series forgotten after a resource correction'
  ],
  // the daemon waits for a reconnection (its input has not ended)
  [
    {}, 'input closed: waiting for a reconnection · 34567 points in 12 batches',
    {ended: false, reconnecting: true}
  ],
  // live, no metric point exported yet but threads, GC pauses and markers
  // shown (h49: the header said "waiting for the first events")
  [{points: 0, batches: 3}, 'live · 0 points in 3 batches', {ended: false}],
];

// The heap chart's note for HeapSize with aggregate_ms 0: not thinned,
// and one series thinned 3 times.
const HEAP_NOTE_CASES = [
  [0, 'A point is the value after one GC (every value kept).'],
  [3, 'A point is the value after one GC. This long run is shown in time buckets: ' +
      'each shows its largest point; the first and newest points are shown as they are.'],
];

// The note under the GC pauses chart: [pauses kept, pauses forgotten,
// the words]. /api/data keeps the newest pauses and the longest older
// ones; once some are forgotten the chart is not every pause (h82: 2100
// of 9149 shown, a busy start looked quiet).
const PAUSES_NOTE_CASES = [
  [2, 0, ''],
  [
    2100, 7049,
    '2100 of 9149 pauses shown: the newest and, before them, ' +
        'the longest of the older ones (7049 older pauses not kept).'
  ],
];

// The traces processors as /api/data gives them, and whether the pauses
// and threads hints must show (live, points shown, no span yet).
const TRACE_HINT_CASES = [
  [{capability_usage: true, thread_state: true}, [false, false]],
  [{capability_usage: false, thread_state: true}, [true, false]],
  [{capability_usage: true, thread_state: false}, [false, true]],
  [{capability_usage: null, thread_state: null}, [true, true]],
  [undefined, [true, true]],  // an older daemon: as before
];

// {====== checks ======}

// The time axis of a 9.5 s view (session 1 zoomed to T0 .. T0 + 9.5 s)
// has at least 4 labelled ticks: 2 s apart on a chart ~550 px wide (h74:
// uPlot's own steps jump from 1 s to 5 s, which left one tick). The heap
// chart is zoomed back afterwards.
async function checkTicks(page, problems) {
  // Drag over session 1 on the heap chart, as a person zooms.
  const at = await page.evaluate(([lo, hi]) => {
    const u = window.elCharts['chart-heap'].plot;
    const r = u.over.getBoundingClientRect();
    return { y: r.top + r.height / 2,
      x0: r.left + u.valToPos(lo / 1000, 'x'), x1: r.left + u.valToPos(hi / 1000, 'x') };
  }, [T0, T0 + 9500]);
  await page.mouse.move(at.x0, at.y);
  await page.mouse.down();
  await page.mouse.move((at.x0 + at.x1) / 2, at.y);
  await page.mouse.move(at.x1, at.y);
  await page.mouse.up();
  await page.waitForTimeout(200);
  const got = await page.evaluate(() => {
    const u = window.elCharts['chart-heap'].plot;
    const { min, max } = u.scales.x;
    const splits = u.axes[0]._splits.filter((v) => v >= min && v <= max);
    return { n: splits.length, span_s: Math.round((max - min) * 10) / 10,
      width: Math.round(u.bbox.width / devicePixelRatio) };
  });
  await page.mouse.dblclick(at.x0, at.y); /* zoom reset */
  if (got.n < 4 || got.span_s < 8 || got.span_s > 11)
    problems.push(`a ${got.span_s} s view has ${got.n} time ticks (${got.width} px wide), want 4 or more`);
  return got;
}

// Every line of every time chart breaks over GAP (ms), within the width
// of the chart's bins (0 for charts of points).
async function checkGap(page, problems) {
  const got = await page.evaluate(() => {
    const out = {};
    for (const [id, c] of Object.entries(window.elCharts)) {
      const u = c.plot;
      out[id] = u.series.slice(1).map((s, k) => ({
        label: s.label, spanGaps: s.spanGaps,
        xs: u.data[0], ys: u.data[k + 1].map((v) => (v === undefined ? 'u' : v)),
        gaps: s._paths && s._paths.gaps ? s._paths.gaps.map((g) => g.slice()) : null,
      }));
    }
    return out;
  });
  const px = await page.evaluate((ms) => {
    const out = {};
    for (const [id, c] of Object.entries(window.elCharts))
      out[id] = ms.map((t) => c.plot.valToPos(t / 1000, 'x', true));
    return out;
  }, GAP);
  // Bins: 100 over the alloc/prod grid (from session 1's count start to
  // session 2's end), 1 s for the spans' capability usage.
  const gridW = (S2.to - (S1.from - START_BEFORE)) / 100;
  const binOf = { 'chart-alloc': gridW, 'chart-prod': gridW, 'chart-caps': 1000 };
  for (const id of ['chart-heap', 'chart-heapprof', 'chart-alloc', 'chart-prod', 'chart-caps']) {
    if (!got[id]) { problems.push(`${id}: not drawn`); continue; }
    const w = binOf[id] || 0;
    for (const s of got[id]) {
      const name = `${id} '${s.label}'`;
      if (s.spanGaps) problems.push(`${name}: spanGaps is on (a null does not break it)`);
      const val = (i) => s.ys[i] !== null && s.ys[i] !== 'u';
      const xsMs = s.xs.map((x) => x * 1000);
      let before = -1, after = -1, inGap = null;
      xsMs.forEach((x, i) => {
        if (!val(i)) return;
        if (x <= GAP[0] + w) before = i;
        if (x >= GAP[1] - w && after < 0) after = i;
        // a bin [x - w, x] (or a point) wholly inside the gap has no value
        const lo = id === 'chart-caps' ? x - w / 2 : x - w;
        const hi = id === 'chart-caps' ? x + w / 2 : x;
        if (inGap === null && lo >= GAP[0] && hi <= GAP[1] && (w || (x > GAP[0] && x < GAP[1])))
          inGap = x;
      });
      if (inGap !== null)
        problems.push(`${name}: a value at ${inGap - T0} ms, inside the gap ${GAP.map((g) => g - T0).join('..')} ms`);
      if (before < 0 || after < 0) {
        problems.push(`${name}: no values on both sides of the gap`);
        continue;
      }
      if (!s.ys.slice(before + 1, after).includes(null))
        problems.push(`${name}: no null between ${xsMs[before] - T0} ms and ${xsMs[after] - T0} ms: the line joins the sessions`);
      // What uPlot drew: a clip over the gap (its pixels, within a bin).
      const [p0, p1] = px[id];
      const tol = w ? (px[id][1] - px[id][0]) / (GAP[1] - GAP[0]) * w + 1 : 1;
      if (!s.gaps || !s.gaps.some(([a, b]) => a <= p0 + tol && b >= p1 - tol))
        problems.push(`${name}: the drawn path has no gap over ${p0.toFixed(1)}..${p1.toFixed(1)} px (gaps ${JSON.stringify(s.gaps)})`);
    }
  }
  // Within a session the heap lines go on: no null between two values.
  for (const s of got['chart-heap'] || []) {
    for (const [a, b] of [[S1.from, S1.to], [S2.from, S2.to + 1000]]) {
      const ys = s.ys.filter((y, i) => s.xs[i] * 1000 >= a && s.xs[i] * 1000 <= b);
      const first = ys.findIndex((y) => y !== null && y !== 'u');
      const last = ys.length - 1 - [...ys].reverse().findIndex((y) => y !== null && y !== 'u');
      if (ys.slice(first, last).includes(null))
        problems.push(`chart-heap '${s.label}': broken within the session ${a - T0}..${b - T0} ms`);
    }
  }
  // Session 1's values are not carried into session 2.
  const blocks = (got['chart-heap'] || []).find((s) => s.label === 'blocks');
  if (blocks) {
    const i = blocks.xs.findIndex((x) => x * 1000 === S2.from);
    if (blocks.ys[i] !== BLOCKS2)
      problems.push(`heap chart: blocks at session 2's first point is ${blocks.ys[i]}, session 2's value is ${BLOCKS2}`);
  } else {
    problems.push('heap chart: no blocks series');
  }
  return Object.fromEntries(Object.entries(got).map(([id, ss]) =>
    [id, ss.map((s) => ({ label: s.label, gaps: s.gaps }))]));
}

async function main() {
  const url = arg('--url');
  const problems = [];
  const consoleErrors = [];
  let doc = sessionsDoc();
  const ctx = await launch(arg('--user-data-dir'), { extraArgs: ['--disable-quic'] });
  const result = {};
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(20000);
    watchErrors(page, consoleErrors);
    await page.route(/\/api\/data$/, (r) => r.fulfill({
      status: 200, contentType: 'application/json', body: JSON.stringify(doc) }));
    // Serve doc and wait until the page has drawn it (two polls after).
    const show = async (d) => {
      doc = d;
      const n = await page.evaluate(() => (window.elView ? window.elView.polls : 0));
      await page.waitForFunction((k) => window.elView && window.elView.polls >= k + 2, n);
    };
    await page.goto(url, { waitUntil: 'load' });
    await show(sessionsDoc());
    if (await page.isVisible('#internal-logs'))
      problems.push('eventlog-live\'s messages shown with none in the data');
    result.gap = GAP.map((g) => g - T0);
    result.charts = await checkGap(page, problems);
    result.ticks = await checkTicks(page, problems);

    await show(logsDoc());
    const bodies = await page.$$eval('#logs tbody tr', (trs) =>
      trs.map((tr) => tr.children[2].textContent));
    const times = await page.$$eval('#logs tbody tr', (trs) =>
      trs.map((tr) => tr.children[0].textContent));
    result.logs = { rows: bodies.length, first: bodies.slice(0, 3), last: bodies.slice(-2) };
    if (JSON.stringify(bodies) !== JSON.stringify(WANT_LOG_BODIES))
      problems.push(`log tail lists ${bodies.length} rows ${bodies.slice(0, 5).join(', ')} ..., ` +
        `want the 200 newest by time, newest first: ${WANT_LOG_BODIES.slice(0, 5).join(', ')} ...`);
    if (times.some((t, i) => i > 0 && t > times[i - 1]))
      problems.push(`log tail times are not newest first: ${times.slice(0, 12).join(', ')}`);
    const internal = await page.$$eval(
        '#internal-logs tbody tr',
        (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    result.internal = internal;
    if (!await page.isVisible('#internal-logs'))
      problems.push('eventlog-live\'s messages are not shown');
    if (JSON.stringify(internal) !== JSON.stringify(WANT_INTERNAL))
      problems.push(
          `eventlog-live's messages: ${JSON.stringify(internal)}, ` +
          `want ${JSON.stringify(WANT_INTERNAL)}`);
    // the screenshot: the two sessions, the sorted log tail and
    // eventlog-live's own messages
    await page.screenshot({ path: arg('--screenshot'), fullPage: true });

    result.status = [];
    for (const [stats, want, doc] of STATUS_CASES) {
      const d = sessionsDoc();
      Object.assign(d.stats, stats);
      Object.assign(d, doc || {});
      await show(d);
      const text = await page.textContent('#status');
      result.status.push(text);
      if (text !== want) problems.push(`status '${text}', want '${want}'`);
    }

    // The note under the heap chart says what a point is, and that a
    // thinned series shows buckets (h42: the page lost `thinned` and
    // said "every value kept"; docs/web.md "Limits").
    result.heapNote = [];
    for (const [thinned, want] of HEAP_NOTE_CASES) {
      const d = sessionsDoc();
      const f = d.metrics.find((m) => m.name === 'ghc_eventlog_HeapSize');
      f.aggregate_ms = 0;
      if (thinned) f.series[1].thinned = thinned;
      await show(d);
      const text = await page.textContent('#heap-note');
      result.heapNote.push(text);
      if (text !== want) problems.push(`heap note '${text}', want '${want}'`);
    }

    // The daemon's self-metrics (session 0), dated by its wall clock 400
    // days after a replayed recording, widen no chart's time range: the
    // x scale still ends at session 2's last point (every processor on,
    // a recorded file: the charts were a sliver at their left edge).
    {
      const d = sessionsDoc();
      const late = S2.to + 400 * 86400000;
      d.metrics.push({
        name: 'eventlog_live_InternalEventCount',
        prom: 'eventlog_live_InternalEventCount_total',
        unit: '{event}',
        kind: 'sum',
        monotonic: true,
        nseries: 1,
        series: [{
          attrs: {},
          session: 0,
          stale: false,
          points: [[late, 100, late - 1000], [late + 1000, 200, late - 1000]]
        }]
      });
      await show(d);
      const x = await page.evaluate(() => {
        const u = window.elCharts['chart-heap'].plot;
        return [u.scales.x.min, u.scales.x.max];
      });
      result.selfMetricsRange = x;
      if (!(x[1] <= S2.to / 1000 + 60 && x[0] >= S1.from / 1000 - 60))
        problems.push(
            `with self-metrics 400 days later the heap chart spans ` +
            `${x[0]} .. ${x[1]} s, want ${S1.from / 1000} .. ${
                S2.to / 1000} (within a minute)`);
    }

    result.pausesNote = [];
    for (const [kept, forgotten, want] of PAUSES_NOTE_CASES) {
      const d = sessionsDoc();
      d.gc_pauses = [];
      for (let k = 0; k < kept; k++)
        d.gc_pauses.push(
            [S1.from + (k * (S1.to - S1.from)) / kept, 1 + (k % 7)]);
      d.gc_pauses_forgotten = forgotten;
      await show(d);
      const text = await page.textContent('#pauses-note');
      result.pausesNote.push(text);
      if (text !== want) problems.push(`pauses note '${text}', want '${want}'`);
    }

    // The hints that a traces processor is needed (GC pauses: capability
    // _usage; thread states: thread_state) show only when /api/data says
    // it is off: live, with points already shown but no span yet (a live
    // program's spans wait for every capability's first block), a page
    // whose processors are on must not ask for them (h63).
    result.traceHints = [];
    for (const [traces, want] of TRACE_HINT_CASES) {
      const d = sessionsDoc();
      Object.assign(d, {ended: false, gc_pauses: [], thread_spans: 0});
      if (traces === undefined)
        delete d.traces;
      else
        d.traces = traces;
      await show(d);
      const got = await page.evaluate(
          () => ['pauses-hint', 'threads-hint'].map(
              (id) => document.getElementById(id).style.display !== 'none'));
      result.traceHints.push(got);
      if (JSON.stringify(got) !== JSON.stringify(want))
        problems.push(
            `traces ${JSON.stringify(traces)}: hints shown ` +
            `${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
  } catch (e) {
    problems.push(exceptionText(e));
  }
  await finish(ctx, result, problems, consoleErrors);
}

run(main);
