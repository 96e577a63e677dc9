// The live web view of eventlog-live-otelcol (docs/web.md): polls
// /api/data every second and draws it with uPlot (web/vendor/uplot/,
// embedded in the daemon at build time). Each chart's section carries
// data-times (x values) and data-points (non-null y values) for the
// browser test (tests/web/check.js).
'use strict';

const POLL_MS = 1000;
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79',
  '#637939', '#8c6d31', '#843c39', '#7b4173'];
const charts = {};
const view = { data: null, polls: 0, errors: 0, control: [] };
window.elView = view;
window.elCharts = charts;

// {====== data helpers ======}

// The metric family whose OTLP name ends with `short` (processors may be
// renamed in the configuration; the defaults are ghc_eventlog_<short>),
// its series with equal point attributes of one session merged into one
// (/api/data keys series by every label, resource attributes included;
// the daemon re-keys a session's series when its resource gains
// attributes, so this is a safety net). Series of different sessions stay
// apart: a rate is never spread across two runs; a series of an earlier
// session than the newest one in `data` is `ended`: it ends at its last
// point (docs/web.md "Sessions"), whether or not the daemon marked it
// stale (a new run's pid gives its series other labels: the old ones are
// then not stale, but that run is over all the same).
function family(data, short) {
  const f = data.metrics.find((m) => m.name === short ||
    m.name.endsWith('_' + short));
  if (!f) return null;
  const byAttrs = new Map();
  for (const s of f.series) {
    const k = JSON.stringify(Object.entries(s.attrs).sort()) + '#' + (s.session ?? '');
    if (!byAttrs.has(k)) {
      byAttrs.set(k, { attrs: s.attrs, session: s.session, stale: true, thinned: 0, points: [] });
    }
    const m = byAttrs.get(k);
    m.stale = m.stale && s.stale === true;
    m.thinned = Math.max(m.thinned, s.thinned || 0);
    m.points.push(...s.points);
  }
  const newest = newestSession(data);
  const series = [...byAttrs.values()].map((s) => {
    s.ended = s.stale || (s.session > 0 && s.session < newest);
    s.points.sort((a, b) => a[0] - b[0]);
    // one value per time: the last one given
    s.points = s.points.filter((p, i, a) => i + 1 === a.length || a[i + 1][0] !== p[0]);
    return s;
  });
  return { ...f, series };
}

// The newest eventlog session of any metric series (0: none).
function newestSession(data) {
  let n = 0;
  for (const f of data.metrics) for (const s of f.series) n = Math.max(n, s.session || 0);
  return n;
}

// The times (Unix ms) when no program ran: the holes between the
// sessions' extents, a session's extent running from its first point (a
// cumulative sum's count start, when given) to its last point over every
// metric. Series of session 0 (the daemon's own) are left out. Returns
// [[end of one run, start of the next], ...], sorted.
function sessionGaps(data) {
  const ext = new Map();
  for (const f of data.metrics) {
    for (const s of f.series) {
      if (!s.session || !s.points.length) continue;
      const p0 = s.points[0];
      const lo = f.kind === 'sum' && countStart(p0) !== null ? p0[2] : p0[0];
      const hi = s.points[s.points.length - 1][0];
      const e = ext.get(s.session) || [Infinity, -Infinity];
      ext.set(s.session, [Math.min(e[0], lo), Math.max(e[1], hi)]);
    }
  }
  const gaps = [];
  let end = null;
  for (const [lo, hi] of [...ext.values()].sort((a, b) => a[0] - b[0])) {
    if (end !== null && lo > end) gaps.push([end, lo]);
    end = end === null ? hi : Math.max(end, hi);
  }
  return gaps;
}

// The gaps of the data drawn (sessionGaps), set by render.
let gaps = [];

// Break every line of data ([xs, ...ys], xs in s) where no program ran
// (gaps): a value whose x (its bin [x - before, x + after] when the
// values are per time bin) lies wholly inside a gap becomes null, and a
// gap with no x inside gets one at its middle, null in every series.
// Then a run of absent values (undefined: that series has no value at
// this x, another has) that touches a null becomes null, so that uPlot
// (spanGaps false: a null ends a line, an undefined does not) ends each
// line at its last point before the gap and starts it again after it.
// Returns the new data.
function breakGaps(data, before = 0, after = 0) {
  let rows = data[0].map((x, i) => [x, ...data.slice(1).map((ys) => ys[i])]);
  const inside = (x, [a, b]) => (before || after
    ? (x - before) * 1000 >= a && (x + after) * 1000 <= b
    : x * 1000 > a && x * 1000 < b);
  for (const g of gaps) {
    let hit = false;
    for (const r of rows) {
      if (!inside(r[0], g)) continue;
      hit = true;
      r.fill(null, 1);
    }
    const mid = (g[0] + g[1]) / 2000;
    if (!hit && rows.length && mid > rows[0][0] && mid < rows[rows.length - 1][0])
      rows.push([mid, ...data.slice(1).map(() => null)]);
  }
  rows.sort((p, q) => p[0] - q[0]);
  const out = [rows.map((r) => r[0])];
  for (let k = 1; k < data.length; k++) {
    const ys = rows.map((r) => r[k]);
    for (let i = 0; i < ys.length;) {
      if (ys[i] !== null && ys[i] !== undefined) { i++; continue; }
      let j = i, hasNull = false;
      for (; j < ys.length && (ys[j] === null || ys[j] === undefined); j++)
        hasNull = hasNull || ys[j] === null;
      if (hasNull) ys.fill(null, i, j);
      i = j;
    }
    out.push(ys);
  }
  return out;
}

// Sum of the series at each time of any of them, each series carrying its
// last value forward (an ended one only up to its last point: a series of
// an earlier session, family). Null where none has a value. Returns
// {t: [s], v: []}.
function sumByTime(series) {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))]
    .sort((a, b) => a - b);
  const idx = series.map(() => 0);
  const last = series.map(() => null);
  const v = [];
  for (const t of times) {
    let sum = null;
    series.forEach((s, k) => {
      while (idx[k] < s.points.length && s.points[idx[k]][0] <= t) {
        last[k] = s.points[idx[k]][1];
        idx[k]++;
      }
      // an ended series (its session is over) adds nothing after its end
      if (s.ended && idx[k] === s.points.length && s.points[idx[k] - 1][0] < t) last[k] = null;
      if (last[k] !== null) sum = (sum || 0) + last[k];
    });
    v.push(sum);
  }
  return { t: times.map((x) => x / 1000), v };
}

// Align several {t, v} on the union of their times (undefined where a
// curve has no value at a time another has: its line goes on; a null
// value stays null: its line breaks there).
function align(list) {
  const xs = [...new Set(list.flatMap((c) => c.t))].sort((a, b) => a - b);
  const ys = list.map((c) => {
    const m = new Map(c.t.map((t, i) => [t, c.v[i]]));
    return xs.map((x) => (m.has(x) ? m.get(x) : undefined));
  });
  return [xs, ...ys];
}

function groupBy(fam, key) {
  const out = new Map();
  for (const s of fam ? fam.series : []) {
    const k = s.attrs[key] !== undefined ? s.attrs[key] : '';
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(s);
  }
  return out;
}

// {====== charts ======}

// Axis numbers: one unit for all ticks of an axis (from the largest), and
// as many decimals as the step between ticks needs, so that no two ticks
// read the same and the magnitude shows ("91.3 KiB/s", "1.25 GiB").
const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// The decimals that show step exactly (2 -> 0, 0.5 -> 1, 0.25 -> 2,
// 0.125 -> 3; at most 4): a byte axis steps by powers of two, and a tick
// at 0.25 GiB must not read "0.3 GiB" (h71).
function decimalsFor(step) {
  if (!(step > 0) || !isFinite(step)) return 0;
  for (let d = 0; d < 4; d++) {
    const x = step * 10 ** d;
    if (Math.abs(x - Math.round(x)) <= 1e-9 * Math.max(1, x)) return d;
  }
  return 4;
}

// Format vals (numbers or null) in the unit of the largest, with a
// common number of decimals from the step between them.
function fmtScaled(vals, base, units, suffix) {
  const nums = vals.filter((v) => v !== null && v !== undefined && isFinite(v));
  const big = nums.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  let i = 0;
  while (big >= base ** (i + 1) && i < units.length - 1) i++;
  const div = base ** i;
  const sorted = [...new Set(nums)].sort((x, y) => x - y);
  let step = Infinity;
  for (let k = 1; k < sorted.length; k++) step = Math.min(step, sorted[k] - sorted[k - 1]);
  if (sorted.length < 2) step = big || 1;
  const dec = decimalsFor(step / div);
  return vals.map((v) => (v === null || v === undefined ? '' :
    (v / div).toFixed(dec) + (units[i] ? ' ' + units[i] : '') + suffix));
}

// One value in a legend: 3 significant digits in its own unit.
function fmtBytes(v) {
  if (v === null || v === undefined) return '';
  let i = 0;
  while (Math.abs(v) >= 1024 && i < BYTE_UNITS.length - 1) { v /= 1024; i++; }
  return (i ? v.toPrecision(3) : v.toFixed(0)) + ' ' + BYTE_UNITS[i];
}

function bytesAxis(suffix) {
  return (u, vals) => fmtScaled(vals, 1024, BYTE_UNITS, suffix);
}
// Tick steps of a bytes axis: powers of two, so that ticks fall on round
// KiB / MiB / GiB values.
const BYTE_INCRS = [...Array(50).keys()].map((k) => 2 ** k);
// A duration axis of values in ms: "ms" up to a second, else seconds
// ("1.5 s", never "1.5 k ms").
function msAxis() {
  return (u, vals) => fmtScaled(vals, 1000, ['ms', 's'], '');
}
function plainAxis(suffix, scale) {
  return (u, vals) => fmtScaled(vals.map((v) => (v === null ? null : v * (scale || 1))),
    1000, ['', 'k', 'M', 'G'], suffix);
}

// uPlot axis size from the widest label (uPlot's "axis-autosize" way):
// the labels are never clipped, whatever their magnitude.
function axisSize(u, values, axisIdx, cycleNum) {
  const axis = u.axes[axisIdx];
  if (cycleNum > 1) return axis._size;
  let w = 0;
  u.ctx.save();
  u.ctx.font = axis.font[0];
  for (const v of values || []) w = Math.max(w, u.ctx.measureText(v).width);
  u.ctx.restore();
  return Math.ceil(axis.ticks.size + axis.gap + w / devicePixelRatio + 4);
}

// The shared time range of every chart (seconds): the span of all data
// shown, or the zoom the user selected on any chart (double-click or the
// "reset zoom" button to leave it).
const timeRange = { data: null, zoom: null };

function xRange() {
  const r = timeRange.zoom || timeRange.data;
  return r ? [r[0], r[1]] : [0, 1];
}

function applyRange() {
  const [min, max] = xRange();
  for (const c of Object.values(charts)) {
    if (c.plot.scales.x.min !== min || c.plot.scales.x.max !== max)
      c.plot.setScale('x', { min, max });
  }
  document.getElementById('zoom-reset').disabled = !timeRange.zoom;
}

function zoomPlugin() {
  return {
    hooks: {
      setSelect: [(u) => {
        if (u.select.width < 3) return;
        const a = u.posToVal(u.select.left, 'x');
        const b = u.posToVal(u.select.left + u.select.width, 'x');
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        if (b > a) { timeRange.zoom = [a, b]; applyRange(); }
      }],
    },
  };
}

function resetZoom() {
  timeRange.zoom = null;
  applyRange();
}

// A uPlot plugin drawing the user markers as vertical lines, with their
// labels in up to three rows so that no two overlap (a label that fits
// in no row is left out: its line stays; hover the log tail for it).
// Each chart records the label boxes it drew in window.elMarkerBoxes.
window.elMarkerBoxes = {};
function markersPlugin(id) {
  return {
    hooks: {
      draw: [(u) => {
        const ms = (view.data && view.data.markers) || [];
        const boxes = [];
        window.elMarkerBoxes[id] = boxes;
        if (!ms.length || !u.data[0].length) return;
        const ctx = u.ctx;
        const dpr = devicePixelRatio;
        const rowH = 12 * dpr;
        ctx.save();
        ctx.strokeStyle = 'rgba(106, 27, 154, 0.6)';
        ctx.fillStyle = 'rgba(106, 27, 154, 0.9)';
        ctx.lineWidth = 1;
        ctx.font = `${10 * dpr}px sans-serif`;
        ctx.textBaseline = 'top';
        ctx.textAlign = 'left';
        const rowEnd = [-Infinity, -Infinity, -Infinity];
        const right = u.bbox.left + u.bbox.width;
        for (const [t, body] of ms) {
          const x = u.valToPos(t / 1000, 'x', true);
          if (x < u.bbox.left || x > right) continue;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          const text = body.length > 24 ? body.slice(0, 23) + '…' : body;
          const w = ctx.measureText(text).width;
          const x0 = Math.min(x + 2 * dpr, right - w);
          const row = rowEnd.findIndex((e) => x0 > e + 4 * dpr);
          if (row < 0) continue;
          const y = u.bbox.top + 2 * dpr + row * rowH;
          // a light backing, so that the label stays readable over the
          // lines and points drawn before it (h82: "second 4" and
          // "second 5" over a dense heap chart)
          ctx.fillStyle = 'rgba(255, 255, 255, 0.8)';
          ctx.fillRect(x0 - dpr, y - dpr, w + 2 * dpr, rowH - dpr);
          ctx.fillStyle = 'rgba(106, 27, 154, 0.9)';
          ctx.fillText(text, x0, y);
          rowEnd[row] = x0 + w;
          boxes.push({ x0: x0 / dpr, x1: (x0 + w) / dpr, y0: y / dpr,
            y1: (y + rowH) / dpr, text });
        }
        ctx.restore();
      }],
    },
  };
}

// Draw (or update) the chart in section `id` with aligned data
// [xs, ys...] and series descriptions [{label, stroke, fill, points}].
// Every chart shares the time range (timeRange) and the cursor. Without
// data the section says why (opts.empty, else emptyText(view.data)).
function draw(id, data, series, opts) {
  const sec = document.getElementById(id);
  const points = data.slice(1).reduce((n, ys) =>
    n + ys.filter((y) => y !== null && y !== undefined).length, 0);
  // times with a value (not the breaks breakGaps added)
  sec.dataset.times = String(data[0].filter((x, i) =>
    data.slice(1).some((ys) => ys[i] !== null && ys[i] !== undefined)).length);
  sec.dataset.points = String(points);
  sec.dataset.series = String(series.length);
  let empty = sec.querySelector('.empty');
  if (!data[0].length) {
    if (!empty) {
      empty = document.createElement('p');
      empty.className = 'empty';
      sec.appendChild(empty);
    }
    empty.textContent = (opts && opts.empty) || emptyText(view.data);
    return;
  }
  if (empty) empty.remove();
  if (typeof uPlot === 'undefined') {
    sec.dataset.error = 'uPlot missing';
    return;
  }
  const sig = series.map((s) => s.label).join('\u0000');
  const c = charts[id];
  if (c && c.sig === sig) {
    c.plot.setData(data);
    return;
  }
  if (c) c.plot.destroy();
  const width = Math.max(300, sec.clientWidth - 16);
  const o = {
    width, height: 230,
    // Every quantity shown is >= 0: the y axis starts at 0, so that a
    // steady value reads as steady, not as noise around it.
    scales: { x: { time: true, range: () => xRange() },
      y: { range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1] } },
    series: [{}, ...series.map((s, i) => ({
      label: s.label,
      stroke: s.stroke || COLORS[i % COLORS.length],
      fill: s.fill,
      width: 1.5,
      // a null value breaks the line (the gap between two runs, a time
      // no series covers: breakGaps); an undefined one is skipped
      spanGaps: false,
      points: s.points || { show: data[0].length < 60 },
      paths: s.paths,
      value: (opts && opts.value) || undefined,
    }))],
    axes: [{ space: 70, incrs: TIME_INCRS }, { size: axisSize, values: (opts && opts.axis) || undefined,
      incrs: (opts && opts.incrs) || undefined }],
    cursor: { sync: { key: 'el-time' }, drag: { x: true, y: false, setScale: false },
      bind: { dblclick: () => () => { resetZoom(); return null; } } },
    plugins: [zoomPlugin(), markersPlugin(id), ...((opts && opts.plugins) || [])],
    legend: { live: true },
  };
  const plot = new uPlot(o, data, sec);
  charts[id] = { plot, sig };
}

function bytesValue(u, v) { return fmtBytes(v); }

// The time axis' tick steps, in seconds: uPlot's own go from 1 s to 5 s
// and from 1 to 5 min, which leaves a 10 s chart one tick (h74); these
// have 2 s, 2 min and 2 h between.
const TIME_INCRS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
  21600, 43200, 86400, 172800, 604800, 2592000, 31536000];

// A chart title listing labels: ['heap size', 'live data'] -> 'Heap size
// and live data'.
function titleOf(labels) {
  const s = labels.length > 1 ?
      `${labels.slice(0, -1).join(', ')} and ${labels[labels.length - 1]}` : labels.join('');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// Why a chart is empty. A producer before GHC 9.2 (the daemon knows it
// from the eventlog header: /api/data's ghc_before_9_2) has no
// --eventlog-flush-interval: its events come when a 2 MiB buffer fills
// or at exit, so the page of a running program stays empty until then
// (said while no point came); its heap census samples sit in the global
// buffer, which rarely fills (said until a census came). docs/web.md
// "Waiting for data".
const OLD_GHC = 'GHC before 9.2 writes';
function emptyText(d) {
  if (d && d.ended) return 'no data';
  return d && d.ghc_before_9_2 && !d.stats.points ?
      `no data yet: ${
          OLD_GHC} events only when a 2 MiB buffer fills or at exit` :
      'no data yet';
}

function heapProfEmptyText(d) {
  if (!d || d.ended || !d.ghc_before_9_2) return emptyText(d);
  return `no heap census received yet: with -h, ${OLD_GHC} heap profile ` +
      'samples only when its 2 MiB buffer fills or at exit';
}

function drawHeap(d) {
  const list = [], series = [];
  for (const [short, label] of [['HeapSize', 'heap size'],
    ['HeapLive', 'live data'], ['BlocksSize', 'blocks']]) {
    const f = family(d, short);
    if (!f || !f.series.length) continue;
    list.push(sumByTime(f.series));
    series.push({ label });
  }
  draw('chart-heap', list.length ? breakGaps(align(list)) : [[]], series,
    { axis: bytesAxis(''), value: bytesValue, incrs: BYTE_INCRS });
  // The title names the series drawn: before GHC 9.2 there is no
  // BLOCKS_SIZE event, so no blocks series (h74).
  if (series.length)
    document.getElementById('heap-title').textContent = titleOf(series.map((s) => s.label));
  document.getElementById('heap-note').textContent = heapNote(d);
}

// What a point of the heap chart is: the processors' aggregation window
// (aggregate_ms, 0 = every value) and whether a long run's points were
// thinned (the daemon merges them into time buckets, each keeping its
// largest point: docs/web.md "Limits").
function heapNote(d) {
  const f = family(d, 'HeapSize');
  if (!f || !f.series.length) return '';
  const agg = f.aggregate_ms;
  const thinned = f.series.some((x) => x.thinned);
  let s = agg === 0 ? 'A point is the value after one GC' + (thinned ? '.' : ' (every value kept).') :
      agg > 0 ? `A point is the last value of each ${agg / 1000} s window: ` +
          'peaks in between are not shown (eventlog-live watch keeps every value).' :
                '';
  if (thinned) {
    s += (s ? ' ' : '') + 'This long run is shown in time buckets: each shows its largest ' +
        'point; the first and newest points are shown as they are.';
  }
  return s;
}

function drawHeapProf(d) {
  const f = family(d, 'HeapProfSample');
  const byLabel = groupBy(f, 'heapProfLabel');
  const curves = [...byLabel.entries()].map(([label, ss]) => {
    const c = sumByTime(ss);
    return { label, c, total: c.v.reduce((a, b) => a + (b || 0), 0) };
  });
  if (!curves.length) {
    draw('chart-heapprof', [[]], [], {empty: heapProfEmptyText(d)});
    return;
  }
  const n = Math.max(1, parseInt(document.getElementById('topn').value, 10) || 10);
  curves.sort((a, b) => b.total - a.total);
  const top = curves.slice(0, n);
  const rest = curves.slice(n);
  // Sample times of any label; each label keeps its last value until its
  // next sample (as Prometheus shows the series), 0 before its first.
  const xs = [...new Set(curves.flatMap((c) => c.c.t))].sort((a, b) => a - b);
  const at = (c) => {
    let i = 0, last = 0;
    return xs.map((x) => {
      while (i < c.t.length && c.t[i] <= x) last = c.v[i++] || 0;
      return last;
    });
  };
  const layers = top.map((c) => ({ label: c.label, ys: at(c.c) }));
  if (rest.length) {
    const other = xs.map(() => 0);
    for (const c of rest) at(c.c).forEach((v, i) => { other[i] += v; });
    layers.push({ label: `Other (${rest.length})`, ys: other });
  }
  // Stack: cumulative sums, drawn largest first so each fill shows.
  const cum = [];
  let acc = xs.map(() => 0);
  for (const l of layers) {
    acc = acc.map((a, i) => a + l.ys[i]);
    cum.push({ label: l.label, ys: acc });
  }
  cum.reverse();
  const series = cum.map((l, i) => {
    const col = COLORS[(cum.length - 1 - i) % COLORS.length];
    return { label: l.label, stroke: col, fill: col + '99' };
  });
  draw('chart-heapprof', breakGaps([xs, ...cum.map((l) => l.ys)]), series,
    { axis: bytesAxis(''), value: bytesValue, incrs: BYTE_INCRS });
}

function drawAlloc(d) {
  const f = family(d, 'HeapAllocated');
  const g = f ? grid(f.series) : null;
  const data = g ? breakGaps([g.xs, binnedRate(f.series, g)], g.w / 1000) : [[], []];
  draw('chart-alloc', data, [{ label: 'allocated bytes/s' }],
    { axis: bytesAxis('/s'), incrs: BYTE_INCRS,
      value: (u, v) => (v === null ? '' : fmtBytes(v) + '/s') });
}

// A cumulative sum's count begins at its start time: /api/data gives it
// as a third element of the series' first point ([t, v, start], Unix ms;
// for HeapAllocated the program's start), so the first interval runs
// from there with the point's whole value. A first interval longer than
// FIRST_INTERVAL_MAX_MS (the reader joined a program running long
// before) is left out: the rate then begins at the first sample.
const FIRST_INTERVAL_MAX_MS = 60000;

function countStart(p) {
  return p && p.length > 2 && p[2] < p[0] && p[0] - p[2] <= FIRST_INTERVAL_MAX_MS
    ? p[2] : null;
}

// The intervals [t0, t1, increase] of a cumulative series: between
// consecutive points, and from its count's start to the first point (or
// to the first point after a reset, a value below the previous one).
function increases(s) {
  const out = [];
  s.points.forEach((p, i) => {
    const prev = i > 0 ? s.points[i - 1] : null;
    if (prev && p[0] > prev[0] && p[1] >= prev[1]) {
      out.push([prev[0], p[0], p[1] - prev[1]]);
    } else if (!prev || p[1] < prev[1]) {
      const st = countStart(p);
      if (st !== null) out.push([st, p[0], p[1]]);
    }
  });
  return out;
}

// Rates of cumulative series on a common grid of at most 100 bins over
// the time range of all their intervals (increases): each increase is
// spread evenly over its interval (a series that appears late adds no
// spike), and each bin gets the per-second rate averaged over it (null
// where no series covers it).
function grid(seriesList) {
  let lo = Infinity, hi = -Infinity;
  for (const s of seriesList) {
    for (const [a, b] of increases(s)) { lo = Math.min(lo, a); hi = Math.max(hi, b); }
    for (const p of s.points) { lo = Math.min(lo, p[0]); hi = Math.max(hi, p[0]); }
  }
  if (!(hi > lo)) return null;
  const n = Math.max(1, Math.min(100, Math.ceil((hi - lo) / 10)));
  const w = (hi - lo) / n;
  return { lo, w, n, xs: [...Array(n).keys()].map((k) => (lo + (k + 1) * w) / 1000) };
}

function binnedRate(series, g) {
  const out = Array(g.n).fill(null);
  for (const s of series) {
    for (const [t0, t1, inc] of increases(s)) {
      const r = inc / ((t1 - t0) / 1000);
      const k0 = Math.max(0, Math.floor((t0 - g.lo) / g.w));
      const k1 = Math.min(g.n - 1, Math.floor((t1 - g.lo) / g.w));
      for (let k = k0; k <= k1; k++) {
        const a = Math.max(t0, g.lo + k * g.w), b = Math.min(t1, g.lo + (k + 1) * g.w);
        if (b > a) out[k] = (out[k] || 0) + r * (b - a) / g.w;
        else if (out[k] === null) out[k] = 0;
      }
    }
  }
  return out;
}

// Capability usage in capabilities busy (seconds per second) per
// category. With the traces processor capability_usage (on under
// `watch`), from /api/data's cap_usage: every GC and Mutator span credited
// to the time bins it overlaps, Idle = capabilities - GC - Mutator, so
// no category exceeds the number of capabilities. Without it, from the
// CapabilityUsageDuration counters (whose points credit a whole span at
// its start, so a long span shows as a burst: docs/web.md).
function categoryRates(d) {
  const u = d.cap_usage;
  if (u && u.bins.length) {
    const bins = u.bins.filter(([t]) => t + u.bin_ms > u.lo && t < u.hi);
    const xs = bins.map(([t]) => (t + u.bin_ms / 2) / 1000);
    const cover = bins.map(([t]) =>
      (Math.min(t + u.bin_ms, u.hi) - Math.max(t, u.lo)) / u.bin_ms);
    const gc = bins.map((b) => b[1] / u.bin_ms);
    const mut = bins.map((b) => b[2] / u.bin_ms);
    const idle = bins.map((b, i) => Math.max(0, u.caps * cover[i] - gc[i] - mut[i]) /
      (cover[i] || 1));
    const busy = (a, i) => a[i] / (cover[i] || 1);
    // bins between two runs: no capability existed, none was idle
    const half = u.bin_ms / 2000;
    return { names: ['GC', 'Idle', 'Mutator'], caps: u.caps, source: 'spans',
      data: breakGaps([xs, gc.map((v, i) => busy(gc, i)), idle,
        mut.map((v, i) => busy(mut, i))], half, half) };
  }
  const f = family(d, 'CapabilityUsageDuration');
  const cats = groupBy(f, 'category');
  const names = [...cats.keys()].sort();
  const g = f ? grid(f.series) : null;
  if (!names.length || !g) return { names: [], data: [[]] };
  return { names, source: 'metric', data: breakGaps([g.xs, ...names.map((k) =>
    binnedRate(cats.get(k), g).map((v) => (v === null ? null : v / 1e9)))], g.w / 1000) };
}

function drawProd(d) {
  const { names, data } = categoryRates(d);
  const xs = data[0];
  const col = (name) => {
    const i = names.indexOf(name);
    return i < 0 ? xs.map(() => null) : data[i + 1];
  };
  const mut = col('Mutator'), gc = col('GC');
  // null (the line breaks) where a count is missing (between two runs);
  // undefined (the line goes on) where no capability was busy
  const prod = xs.map((x, i) => (mut[i] === null || gc[i] === null ? null
    : mut[i] + gc[i] > 0 ? mut[i] / (mut[i] + gc[i]) : undefined));
  const gcShare = prod.map((p) => (p === null || p === undefined ? p : 1 - p));
  draw('chart-prod', [xs, prod, gcShare],
    [{ label: 'productivity (mutator / busy)' }, { label: 'GC share' }],
    { value: (u, v) => (v === null ? '' : (100 * v).toFixed(1) + ' %'),
      axis: plainAxis(' %', 100) });
}

// Nothing received yet (the status line says why): a hint that a
// processor is needed would blame the configuration for the wait.
function waiting(d) { return !d.ended && !d.stats.points; }

// Whether the hint that the traces processor `name` is needed shows, its
// spans having given nothing (`none`), once something came (waiting):
// never when /api/data says it is on (d.traces): points of other
// processors come before a live program's spans, which wait for every
// capability's first block (h63), so the lack of spans proves nothing.
function needsTraces(d, name, none) {
  const on = d.traces ? d.traces[name] : null;
  return on !== true && none && !waiting(d);
}

// Which pauses the chart shows: /api/data keeps the 2000 newest and,
// before them, the 100 longest of the older ones; once older ones were
// forgotten (gc_pauses_forgotten) the chart is not every pause, and a
// busy start would look quiet without a word (h82). docs/web.md "Limits".
function pausesNote(d) {
  const kept = (d.gc_pauses || []).length, gone = d.gc_pauses_forgotten || 0;
  if (!gone) return '';
  return `${kept} of ${kept + gone} pauses shown: the newest and, before ` +
      `them, the longest of the older ones (${gone} older pauses not kept).`;
}

function drawPauses(d) {
  const p = d.gc_pauses || [];
  document.getElementById('pauses-hint').style.display =
      needsTraces(d, 'capability_usage', !p.length) ? '' : 'none';
  document.getElementById('pauses-note').textContent = pausesNote(d);
  draw('chart-pauses', [p.map((x) => x[0] / 1000), p.map((x) => x[1])],
    [{ label: 'GC pause (ms)', points: { show: true, size: 4 },
      paths: () => null }],
    { value: (u, v) => (v === null ? '' : v.toFixed(3) + ' ms'),
      axis: msAxis() });
}

function drawCaps(d) {
  const { names, data, caps, source } = categoryRates(d);
  const sec = document.getElementById('chart-caps');
  sec.dataset.source = source || '';
  sec.dataset.caps = caps === undefined ? '' : String(caps);
  draw('chart-caps', data, names.map((n) => ({ label: n + ' (capabilities)' })),
    { value: (u, v) => (v === null ? '' : v.toFixed(2)), axis: plainAxis('') });
}

// The time range of everything the charts show (seconds), for the shared
// x scale. The daemon's own metrics (session 0: internal_* self-metrics,
// dated by its wall clock) are drawn in no chart: while it replays a
// recording they are days after the program's points and would squeeze
// every chart into a sliver at its left edge.
function dataRange(d) {
  let lo = Infinity, hi = -Infinity;
  const see = (t) => { if (t < lo) lo = t; if (t > hi) hi = t; };
  for (const f of d.metrics) {
    for (const s of f.series) {
      if (s.session === 0) continue;
      for (const p of s.points) {
        see(p[0]);
        if (f.kind === 'sum' && countStart(p) !== null) see(p[2]);
      }
    }
  }
  for (const p of d.gc_pauses || []) see(p[0]);
  for (const m of d.markers || []) see(m[0]);
  const u = d.cap_usage;
  if (u) { see(u.lo); see(u.hi); }
  if (!(hi >= lo)) return null;
  if (hi === lo) { lo -= 1000; hi += 1000; }
  return [lo / 1000, hi / 1000];
}

// {====== tables ======}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
}

// text(v), or 'unknown' when /api/data sends v null (not seen).
function known(v, text) {
  return v === null || v === undefined ? 'unknown' : text(v);
}

// The threads table: the daemon keeps at most 500 threads (finished ones
// leave 30 s after they finish, the youngest when it is full) and
// sums those that left into the "other" row (docs/web.md "Limits"). A
// reconnection ends the previous session's threads ("Ended", status
// "session N ended"), which then leave as finished ones do; the end of
// input ends the rest ("Ended", status "input ended (was ...)"), and so
// does a closed connection the daemon waits to see reopened ("connection
// closed (was ...)", /api/data's reconnecting). A row no thread-state
// span came for (only its label is known: the traces processor
// thread_state is off) has state and running_ms null: both read
// "unknown", also once it is over (its status says why).
// The "other" row's state cell: how many of the threads that left were
// seen to finish and how many ended with their session or the input
// (/api/data's threads_other.finished and .ended). Without thread-state
// spans no finish is ever seen: the cell says so rather than "0
// finished".
function otherOver(o, traced) {
  const ended = o.ended ? `${o.ended} ended with their session` : '';
  if (!traced) return ended ? `${ended}, finish not known` : 'finish not known';
  return ended ? `${o.finished} finished, ${ended}` : `${o.finished} finished`;
}

function drawThreads(d) {
  const body = document.querySelector('#threads tbody');
  // the current session's rows first, then those a reconnection ended
  const rows = [...d.threads].sort((a, b) =>
    (b.session || 0) - (a.session || 0) || a.id - b.id);
  const trs = rows.map((t) => {
    const tr = document.createElement('tr');
    tr.className = 'state-' + (t.state || 'unknown');
    cell(tr, t.id);
    cell(tr, t.label);
    cell(tr, t.state || 'unknown', 'state');
    cell(tr, t.status);
    cell(tr, t.cap >= 0 ? t.cap : '');
    cell(tr, known(t.running_ms, (v) => v.toFixed(1)));
    return tr;
  });
  const o = d.threads_other;
  if (o && o.threads) {
    const tr = document.createElement('tr');
    tr.className = 'other';
    cell(tr, 'other');
    // unremembered: ids the daemon had no room to remember (it keeps
    // 64 pages of 65536 ids): a thread among them that came back is
    // counted here and in its row.
    const unrem = o.unremembered ?
        ` (${o.unremembered} not remembered: may be counted twice)` :
        '';
    cell(
        tr,
        `${o.threads} ${
            o.threads === 1 ? 'thread' : 'threads'} no longer listed${unrem}`);
    cell(tr, otherOver(o, d.thread_spans > 0));
    cell(tr, '');
    cell(tr, '');
    cell(tr, known(o.running_ms, (v) => v.toFixed(1)));
    trs.push(tr);
  }
  body.replaceChildren(...trs);
  const t = document.getElementById('threads');
  t.dataset.rows = String(rows.length);
  t.dataset.other = String(o ? o.threads : 0);
  // States come from the traces processor thread_state: the hint shows
  // when it is off (needsTraces), whatever the rows say.
  document.getElementById('threads-hint').style.display =
      needsTraces(d, 'thread_state', !(d.thread_spans > 0)) ? '' : 'none';
}

// The log tail: the program's records, the 200 newest by time, newest
// first. The daemon keeps them in arrival order, which is not time order:
// GHC writes each capability's buffer out as a block (with -N2 on GHC 9.0
// a block of earlier times can come after a later one). Records of one
// time keep their arrival order (the later one first).
const LOG_ROWS = 200;
function newestFirst(logs, n) {
  return logs.map((l, i) => [l, i])
      .sort((p, q) => q[0].t - p[0].t || q[1] - p[1])
      .slice(0, n)
      .map(([l]) => l);
}

function logTime(t) {
  return new Date(t).toISOString().replace('T', ' ').slice(0, 23);
}

function drawLogs(d) {
  const body = document.querySelector('#logs tbody');
  const rows = newestFirst(d.logs, LOG_ROWS);
  body.replaceChildren(...rows.map((l) => {
    const tr = document.createElement('tr');
    cell(tr, logTime(l.t));
    cell(tr, l.kind, 'kind-' + l.kind);
    cell(tr, l.body);
    return tr;
  }));
  document.getElementById('logs').dataset.rows = String(rows.length);
}

// eventlog-live's own messages (internal_log_message), apart from the
// log tail: they are dated by the wall clock when eventlog-live logged
// them (as its OTLP output dates them), the tail's records by the
// program's eventlog, so while a recorded eventlog is replayed the two
// clocks are years apart and one time order cannot hold both. Newest
// first; the section shows once there is one.
const SEVERITY = [
  [21, 'fatal'], [17, 'error'], [13, 'warn'], [9, 'info'], [5, 'debug'],
  [1, 'trace']
];
function severityName(n) {
  const s = SEVERITY.find(([lo]) => n >= lo);
  return s ? s[1] : '';
}

function drawInternalLogs(d) {
  const logs = d.internal_logs || [];
  const rows = newestFirst(logs, logs.length);
  const sec = document.getElementById('internal-logs');
  sec.hidden = rows.length === 0;
  sec.querySelector('tbody').replaceChildren(...rows.map((l) => {
    const tr = document.createElement('tr');
    const sev = severityName(l.severity);
    cell(tr, logTime(l.t));
    cell(tr, sev, 'sev-' + sev);
    cell(tr, l.body);
    return tr;
  }));
  sec.dataset.rows = String(rows.length);
}

// {====== control ======}

async function control(route, button) {
  const d = view.data;
  const st = document.getElementById('control-status');
  if (!d || d.control_port < 0) {
    st.textContent = 'no control server (start the daemon with --control-port)';
    return;
  }
  const url = `${location.protocol}//${location.hostname}:${d.control_port}` +
    `/control/eventlog-socket/${route}`;
  button.disabled = true;
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'service-name=' + encodeURIComponent(d.service),
    });
    const text = await r.text();
    view.control.push({ route, status: r.status, body: text });
    st.textContent = r.ok ? `sent ${route}` : `${route}: ${r.status} ${text}`;
  } catch (e) {
    view.control.push({ route, status: 0, body: String(e) });
    st.textContent = `${route}: control server unreachable`;
  } finally {
    button.disabled = false;
  }
}

for (const b of document.querySelectorAll('.controls button')) {
  b.addEventListener('click', () => control(b.dataset.route, b));
}

// {====== polling ======}

// The header's status line from /api/data's stats (docs/web.md
// "/api/data"): points the store could not keep (a metric over the
// limit of metrics), series a full metric forgot (its least recently
// updated ones, over the per-metric limit; some may be stale: replaced by
// a newer run's series), and series forgotten as duplicates when a
// resource correction gave them the labels of another. While the
// daemon waits for a reconnection (the program's connection closed:
// /api/data's reconnecting) it says so in place of "live".
// Whether anything of the program has arrived: metric points, or thread
// rows, GC pauses, markers or log records (spans and logs come before
// the first metric export: h49 saw threads and GC pauses under "waiting
// for the first events").
function anyData(d) {
  const some = (a) => Array.isArray(a) && a.length > 0;
  return d.stats.points > 0 || some(d.threads) || some(d.gc_pauses) ||
      some(d.markers) || some(d.logs);
}

function statusText(d) {
  const s = d.stats;
  if (!d.ended && !d.reconnecting && !anyData(d)) {
    return 'live · waiting for the first events' +
        (d.ghc_before_9_2 ?
             `: ${OLD_GHC} them only when a 2 MiB buffer fills or at exit` :
             '');
  }
  const input = d.ended ? 'input ended' :
      d.reconnecting    ? 'input closed: waiting for a reconnection' :
                          'live';
  let t = `${input} · ` +
      `${s.points} points in ${s.batches} batches`;
  if (s.dropped_series)
    t += ` · ${s.dropped_series} ${s.dropped_series === 1 ? 'point' : 'points'} ` +
      'dropped (too many metrics)';
  if (s.evicted_series) {
    t += ` · ${s.evicted_series} series forgotten over the limit of ` +
      `${s.series_limit} per metric`;
    if (s.evicted_stale_series) t += ` (${s.evicted_stale_series} of them stale)`;
  }
  if (s.merged_series)
    t += ` · ${s.merged_series} duplicate series forgotten after a resource correction`;
  return t;
}

function render(d) {
  document.getElementById('service').textContent = d.service;
  document.title = `eventlog-live: ${d.service}`;
  document.getElementById('status').textContent = statusText(d);
  for (const b of document.querySelectorAll('.controls button')) {
    b.title = d.control_port >= 0 ? '' : 'start the daemon with --control-port';
  }
  timeRange.data = dataRange(d);
  gaps = sessionGaps(d);
  drawHeap(d);
  drawHeapProf(d);
  drawAlloc(d);
  drawProd(d);
  drawPauses(d);
  drawCaps(d);
  applyRange();
  drawThreads(d);
  drawLogs(d);
  drawInternalLogs(d);
}

async function poll() {
  let d = null;
  try {
    const r = await fetch('api/data', { cache: 'no-store' });
    if (r.ok) d = await r.json();
    else view.errors++;
  } catch (e) {
    view.errors++;
    document.getElementById('status').textContent = 'daemon unreachable';
  }
  setTimeout(poll, POLL_MS);
  if (d) {
    view.data = d;
    view.polls++;
    render(d);   // a bug here shows as a page error (the test fails)
  }
}

document.getElementById('zoom-reset').addEventListener('click', resetZoom);
document.getElementById('topn').addEventListener('change', () => {
  if (view.data) render(view.data);
});
poll();
