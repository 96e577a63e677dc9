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
// renamed in the configuration; the defaults are ghc_eventlog_<short>).
function family(data, short) {
  return data.metrics.find((f) => f.name === short ||
    f.name.endsWith('_' + short)) || null;
}

// Sum of the series at each time of any of them, each series carrying its
// last value forward. Returns {t: [s], v: []}.
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
      if (last[k] !== null) sum = (sum || 0) + last[k];
    });
    v.push(sum);
  }
  return { t: times.map((x) => x / 1000), v };
}

// Align several {t, v} on the union of their times (null where absent).
function align(list) {
  const xs = [...new Set(list.flatMap((c) => c.t))].sort((a, b) => a - b);
  const ys = list.map((c) => {
    const m = new Map(c.t.map((t, i) => [t, c.v[i]]));
    return xs.map((x) => (m.has(x) ? m.get(x) : null));
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

function fmtBytes(v) {
  if (v === null || v === undefined) return '';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(1) : v.toFixed(0)) + ' ' + u[i];
}

// A uPlot plugin drawing the user markers as vertical lines.
function markersPlugin() {
  return {
    hooks: {
      draw: [(u) => {
        const ms = (view.data && view.data.markers) || [];
        if (!ms.length || !u.data[0].length) return;
        const ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = 'rgba(106, 27, 154, 0.6)';
        ctx.fillStyle = 'rgba(106, 27, 154, 0.9)';
        ctx.lineWidth = 1;
        ctx.font = `${10 * devicePixelRatio}px sans-serif`;
        let lastX = -1e9;
        for (const [t, body] of ms) {
          const x = u.valToPos(t / 1000, 'x', true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          if (x - lastX > 80 * devicePixelRatio) {
            ctx.fillText(body.slice(0, 24), x + 2, u.bbox.top + 10 * devicePixelRatio);
            lastX = x;
          }
        }
        ctx.restore();
      }],
    },
  };
}

// The x range of a chart with markers: its data and every marker.
function markersRange(u, min, max) {
  for (const [t] of (view.data && view.data.markers) || []) {
    min = Math.min(min, t / 1000);
    max = Math.max(max, t / 1000);
  }
  if (min === max) { min -= 1; max += 1; }
  return [min, max];
}

// Draw (or update) the chart in section `id` with aligned data
// [xs, ys...] and series descriptions [{label, stroke, fill, points}].
function draw(id, data, series, opts) {
  const sec = document.getElementById(id);
  const points = data.slice(1).reduce((n, ys) =>
    n + ys.filter((y) => y !== null && y !== undefined).length, 0);
  sec.dataset.times = String(data[0].length);
  sec.dataset.points = String(points);
  sec.dataset.series = String(series.length);
  let empty = sec.querySelector('.empty');
  if (!data[0].length) {
    if (!empty) {
      empty = document.createElement('p');
      empty.className = 'empty';
      empty.textContent = 'no data yet';
      sec.appendChild(empty);
    }
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
    scales: { x: { time: true, range: opts && opts.xRange } },
    series: [{}, ...series.map((s, i) => ({
      label: s.label,
      stroke: s.stroke || COLORS[i % COLORS.length],
      fill: s.fill,
      width: 1.5,
      spanGaps: true,
      points: s.points || { show: data[0].length < 60 },
      paths: s.paths,
      value: (opts && opts.value) || undefined,
    }))],
    axes: [{}, { size: 70, values: (opts && opts.axis) || undefined }],
    plugins: (opts && opts.plugins) || [],
    legend: { live: true },
  };
  const plot = new uPlot(o, data, sec);
  charts[id] = { plot, sig };
}

function bytesAxis(u, vals) { return vals.map(fmtBytes); }
function bytesValue(u, v) { return fmtBytes(v); }

function drawHeap(d) {
  const list = [], series = [];
  for (const [short, label] of [['HeapSize', 'heap size'],
    ['HeapLive', 'live data'], ['BlocksSize', 'blocks']]) {
    const f = family(d, short);
    if (!f || !f.series.length) continue;
    list.push(sumByTime(f.series));
    series.push({ label });
  }
  draw('chart-heap', list.length ? align(list) : [[]], series,
    { axis: bytesAxis, value: bytesValue });
}

function drawHeapProf(d) {
  const f = family(d, 'HeapProfSample');
  const byLabel = groupBy(f, 'heapProfLabel');
  const curves = [...byLabel.entries()].map(([label, ss]) => {
    const c = sumByTime(ss.map((s) => ({ points: s.points })));
    return { label, c, total: c.v.reduce((a, b) => a + (b || 0), 0) };
  });
  if (!curves.length) {
    draw('chart-heapprof', [[]], []);
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
  draw('chart-heapprof', [xs, ...cum.map((l) => l.ys)], series,
    { axis: bytesAxis, value: bytesValue, plugins: [markersPlugin()],
      xRange: markersRange });
}

function drawAlloc(d) {
  const f = family(d, 'HeapAllocated');
  const g = f ? grid(f.series) : null;
  const data = g ? [g.xs, binnedRate(f.series, g)] : [[], []];
  draw('chart-alloc', data, [{ label: 'allocated bytes/s' }],
    { axis: (u, vals) => vals.map((v) => fmtBytes(v) + '/s'),
      value: (u, v) => (v === null ? '' : fmtBytes(v) + '/s') });
}

// Rates of cumulative series on a common grid of at most 100 bins over
// the time range of all their points: each series' increase between two
// consecutive points is spread evenly over that interval (a series that
// appears late adds no spike), and each bin gets the per-second rate
// averaged over it (null where no series covers it).
function grid(seriesList) {
  let lo = Infinity, hi = -Infinity;
  for (const s of seriesList) {
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
    for (let i = 1; i < s.points.length; i++) {
      const [t0, v0] = s.points[i - 1], [t1, v1] = s.points[i];
      if (!(t1 > t0) || v1 < v0) continue;
      const r = (v1 - v0) / ((t1 - t0) / 1000);
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

// Per-category rates of CapabilityUsageDuration in capabilities busy
// (seconds per second), on one grid.
function categoryRates(d) {
  const f = family(d, 'CapabilityUsageDuration');
  const cats = groupBy(f, 'category');
  const names = [...cats.keys()].sort();
  const g = f ? grid(f.series) : null;
  if (!names.length || !g) return { names: [], data: [[]] };
  return { names, data: [g.xs, ...names.map((k) =>
    binnedRate(cats.get(k), g).map((v) => (v === null ? null : v / 1e9)))] };
}

function drawProd(d) {
  const { names, data } = categoryRates(d);
  const xs = data[0];
  const col = (name) => {
    const i = names.indexOf(name);
    return i < 0 ? xs.map(() => null) : data[i + 1];
  };
  const mut = col('Mutator'), gc = col('GC');
  const prod = xs.map((x, i) => (mut[i] !== null && gc[i] !== null &&
    mut[i] + gc[i] > 0 ? mut[i] / (mut[i] + gc[i]) : null));
  const gcShare = prod.map((p) => (p === null ? null : 1 - p));
  draw('chart-prod', [xs, prod, gcShare],
    [{ label: 'productivity (mutator / busy)' }, { label: 'GC share' }],
    { value: (u, v) => (v === null ? '' : (100 * v).toFixed(1) + ' %'),
      axis: (u, vals) => vals.map((v) => (100 * v).toFixed(0) + ' %') });
}

function drawPauses(d) {
  const p = d.gc_pauses || [];
  document.getElementById('pauses-hint').style.display = p.length ? 'none' : '';
  draw('chart-pauses', [p.map((x) => x[0] / 1000), p.map((x) => x[1])],
    [{ label: 'GC pause (ms)', points: { show: true, size: 4 },
      paths: () => null }],
    { value: (u, v) => (v === null ? '' : v.toFixed(3) + ' ms') });
}

function drawCaps(d) {
  const { names, data } = categoryRates(d);
  draw('chart-caps', data, names.map((n) => ({ label: n + ' (capabilities)' })),
    { value: (u, v) => (v === null ? '' : v.toFixed(2)) });
}

// {====== tables ======}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
}

function drawThreads(d) {
  const body = document.querySelector('#threads tbody');
  const rows = [...d.threads].sort((a, b) => a.id - b.id);
  body.replaceChildren(...rows.map((t) => {
    const tr = document.createElement('tr');
    cell(tr, t.id);
    cell(tr, t.label);
    cell(tr, t.state || 'unknown');
    cell(tr, t.status);
    cell(tr, t.cap >= 0 ? t.cap : '');
    return tr;
  }));
  document.getElementById('threads').dataset.rows = String(rows.length);
}

function drawLogs(d) {
  const body = document.querySelector('#logs tbody');
  const rows = d.logs.slice(-200).reverse();
  body.replaceChildren(...rows.map((l) => {
    const tr = document.createElement('tr');
    cell(tr, new Date(l.t).toISOString().replace('T', ' ').slice(0, 23));
    cell(tr, l.kind, 'kind-' + l.kind);
    cell(tr, l.body);
    return tr;
  }));
  document.getElementById('logs').dataset.rows = String(rows.length);
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

function render(d) {
  document.getElementById('service').textContent = d.service;
  document.title = `eventlog-live: ${d.service}`;
  const s = d.stats;
  document.getElementById('status').textContent =
    `${d.ended ? 'input ended (replay finished)' : 'live'} · ` +
    `${s.points} points in ${s.batches} batches` +
    (s.dropped_series ? ` · ${s.dropped_series} series dropped` : '');
  for (const b of document.querySelectorAll('.controls button')) {
    b.title = d.control_port >= 0 ? '' : 'start the daemon with --control-port';
  }
  drawHeap(d);
  drawHeapProf(d);
  drawAlloc(d);
  drawProd(d);
  drawPauses(d);
  drawCaps(d);
  drawThreads(d);
  drawLogs(d);
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

document.getElementById('topn').addEventListener('change', () => {
  if (view.data) render(view.data);
});
poll();
