// eventlog-live report (docs/report.md): draws the page from the data
// document in <script id="el-data"> (src/report/rp_out.c writes it).
// Charts with uPlot (inlined); the capability timeline and the flame
// graphs are drawn on canvases here. Every number the tests read sits in
// an element with data-stat="<name>" data-value="<exact value>".
'use strict';

const D = JSON.parse(document.getElementById('el-data').textContent);
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
  '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f', '#393b79',
  '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd', '#e6550d',
  '#31a354', '#756bb1', '#636363', '#6baed6', '#fd8d3c', '#74c476',
  '#9e9ac8', '#969696', '#9ecae1', '#fdae6b', '#a1d99b', '#bcbddc',
  '#bdbdbd'];
const OTHER_COLOR = '#cfd8dc';
const hasPlot = typeof uPlot !== 'undefined';
const charts = {};
window.elReport = { data: D, charts, ready: false };

// {====== formatting ======}

function fmtInt(v) {
  if (v === null || v === undefined) return '';
  return Math.round(v).toLocaleString('en-US');
}
function fmtBytes(v) {
  if (v === null || v === undefined || !isFinite(v)) return '';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let x = Math.abs(v);
  while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
  return (v < 0 ? '-' : '') + (i ? x.toFixed(x < 10 ? 2 : 1) : x.toFixed(0)) + ' ' + u[i];
}
function fmtNs(ns) {
  if (ns === null || ns === undefined || !isFinite(ns)) return '';
  const a = Math.abs(ns);
  if (a < 1e3) return ns.toFixed(0) + ' ns';
  if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : 1) + ' µs';
  if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + ' ms';
  return (ns / 1e9).toFixed(a < 1e10 ? 3 : 2) + ' s';
}
function fmtSecs(s) {
  if (s === null || s === undefined || !isFinite(s)) return '';
  const a = Math.abs(s);
  if (a < 0.9995) return (s * 1e3).toFixed(a < 0.01 ? 3 : 1) + ' ms';
  if (a < 120) return s.toFixed(3) + ' s';
  const m = Math.floor(s / 60);
  return m + ' min ' + (s - m * 60).toFixed(1) + ' s';
}
function fmtPct(x) { return x !== null && isFinite(x) ? (x * 100).toFixed(1) + ' %' : ''; }

// {====== axes ======}
// One unit per axis, ticks round in it, and a zero tick reads "0" (so no
// "0 ns" under ticks in ms).

// Decimals that write x (a tick step in the unit shown) exactly.
function decimals(x) {
  let d = 0;
  while (d < 6 && Math.abs(x * 10 ** d - Math.round(x * 10 ** d)) > 1e-6) d++;
  return d;
}
const zeroOr = (f) => (v) => (v === null || v === undefined ? '' : v === 0 ? '0' : f(v));

// Axis labels: seconds with as many decimals as the tick spacing needs
// (ms below 10 ms spacing; minutes:seconds above 10 min spacing).
function axisSecs(u, vals, ax, space, incr) {
  if (incr >= 600) return vals.map(zeroOr((v) => `${Math.floor(v / 60)}:${String(Math.round(v % 60)).padStart(2, '0')}`));
  if (incr < 0.01) {
    const d = Math.max(0, Math.ceil(-Math.log10(incr * 1e3) - 1e-9));
    return vals.map(zeroOr((v) => (v * 1e3).toFixed(d) + ' ms'));
  }
  const d = Math.max(0, Math.ceil(-Math.log10(incr) - 1e-9));
  return vals.map(zeroOr((v) => v.toFixed(d) + ' s'));
}

// Tick steps of a byte axis: 1, 2, 5, 10, 20, 50, 100, 200, 500 times
// 1024^k, shown in the unit 1024^k (B, KiB, MiB...): 20/40/60 MiB, never
// the 95.4 MiB of a decimal step.
const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
const BYTE_INCRS = BYTE_UNITS.flatMap((_, k) => [1, 2, 5, 10, 20, 50, 100, 200, 500].map((m) => m * 1024 ** k));
function axisBytes(suffix) {
  return (u, vals, ax, space, incr) => {
    let k = 0;
    while (k < BYTE_UNITS.length - 1 && incr >= 1024 ** (k + 1)) k++;
    const d = decimals(incr / 1024 ** k);
    return vals.map(zeroOr((v) => (v / 1024 ** k).toFixed(d) + ' ' + BYTE_UNITS[k] + suffix));
  };
}
// A duration axis (values in ns times scale): decimal steps, shown in the
// unit of the largest tick (ns, µs, ms, s).
function axisNs(scale) {
  return (u, vals, ax, space, incr) => {
    const top = Math.max(0, ...vals.filter((v) => v !== null).map((v) => Math.abs(v * scale)));
    const [f, unit] = top >= 1e9 ? [1e9, 's'] : top >= 1e6 ? [1e6, 'ms'] : top >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
    const d = decimals(incr * scale / f);
    return vals.map(zeroOr((v) => (v * scale / f).toFixed(d) + ' ' + unit));
  };
}
// Tick steps of a count of whole things (megablocks): 1, 2, 5 x 10^k.
const COUNT_INCRS = [...Array(16).keys()].flatMap((k) => [1, 2, 5].map((m) => m * 10 ** k));
// The y axis of a chart whose values are in unit (UCUM, as fmtUnit):
// {values, incrs} for uPlot, labels by fmt for any other unit.
function yAxis(unit, fmt) {
  if (unit === 'By') return { values: axisBytes(''), incrs: BYTE_INCRS };
  if (unit === 'By/s') return { values: axisBytes('/s'), incrs: BYTE_INCRS };
  if (unit === 'ns') return { values: axisNs(1) };
  if (unit === 's') return { values: axisNs(1e9) };
  if (unit === '{mblock}') return { values: (u, vs) => vs.map(zeroOr(fmt)), incrs: COUNT_INCRS };
  return { values: (u, vs) => vs.map(zeroOr(fmt || fmtUnit(unit))) };
}
const orEmpty = (f) => (v) => (v === null || v === undefined ? '' : f(v));
function fmtUnit(unit) {
  if (unit === 'By') return fmtBytes;
  if (unit === 'By/s') return (v) => fmtBytes(v) + '/s';
  if (unit === 'ns') return fmtNs;
  if (unit === 's') return fmtSecs;
  return (v) => (v === null || v === undefined ? '' :
    Math.abs(v) >= 1000 || Number.isInteger(v) ? fmtInt(v) : v.toPrecision(4));
}

// {====== DOM helpers ======}

const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

// A statistic box: its exact value in data-value for the tests.
function stat(parent, key, label, value, text, title) {
  parent.append(el('div', { class: 'stat', 'data-stat': key,
    'data-value': String(value), title },
  el('span', { class: 'k', text: label }),
  el('span', { class: 'v', text: text === undefined ? String(value) : text })));
}

function show(id, on) { $(id).hidden = !on; }

// A searchable table: rows are arrays of cells; render(row) gives the <tr>.
// At most `limit` matching rows are drawn.
function searchTable(tbody, input, count, rows, render, text, limit) {
  limit = limit || 1000;
  const draw = () => {
    const q = input.value.trim().toLowerCase();
    const hit = q ? rows.filter((r) => text(r).toLowerCase().includes(q)) : rows;
    tbody.replaceChildren(...hit.slice(0, limit).map((r, i) => render(r, i)));
    if (hit.length > limit)
      tbody.append(el('tr', { class: 'more' }, el('td', { colSpan: 20,
        text: `${hit.length - limit} more rows: refine the search` })));
    if (count) count.textContent = q ? `${hit.length} of ${rows.length}` : `${rows.length} rows`;
  };
  input.addEventListener('input', draw);
  draw();
}
function td(text, cls, title) { return el('td', { class: cls, text, title }); }

// {====== charts ======}

function markerLines() {
  const rows = (D.markers && D.markers.rows) || [];
  return {
    hooks: {
      draw: [(u) => {
        if (!rows.length) return;
        const c = u.ctx, dpr = devicePixelRatio || 1;
        c.save();
        c.strokeStyle = 'rgba(106, 27, 154, 0.55)';
        c.fillStyle = 'rgba(106, 27, 154, 0.95)';
        c.lineWidth = 1;
        c.font = `${10 * dpr}px sans-serif`;
        // uPlot leaves the axes' alignment on the context: a label is
        // placed by its left end.
        c.textAlign = 'left';
        c.textBaseline = 'alphabetic';
        // One line per column with markers (the data keeps the first
        // marker of each column and how many fell in it); a label where
        // there is room for it.
        // Too many to tell apart: short ticks along the top instead of
        // lines across the chart.
        let visible = 0;
        for (const [t] of rows) {
          const x = u.valToPos(t, 'x', true);
          if (x >= u.bbox.left && x <= u.bbox.left + u.bbox.width) visible++;
        }
        const dense = visible > u.bbox.width / (12 * dpr);
        const bottom = dense ? u.bbox.top + 6 * dpr : u.bbox.top + u.bbox.height;
        let free = -1e9;
        for (const [t, text, n] of rows) {
          const x = u.valToPos(t, 'x', true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          c.beginPath();
          c.moveTo(x, u.bbox.top);
          c.lineTo(x, bottom);
          c.stroke();
          if (dense) continue;
          const label = text.slice(0, 28) + (n > 1 ? ` (+${n - 1})` : '');
          // Right of its line, or left of it when the chart ends first.
          const w = c.measureText(label).width;
          let lx = x + 2 * dpr;
          if (lx + w > u.bbox.left + u.bbox.width) lx = x - 2 * dpr - w;
          if (lx >= free && lx >= u.bbox.left) {
            c.fillText(label, lx, u.bbox.top + 10 * dpr);
            free = lx + w + 8 * dpr;
          }
        }
        c.restore();
      }],
    },
  };
}

// The report's time range, a little wider than the records (seconds).
function fullRange(u, min, max) {
  const [a, b] = D.range;
  if (!(b > a)) return [min, max === min ? min + 1 : max];
  return [a, b];
}

// {====== sessions ======}

// A file of several eventlog sessions (a program run more than once) has
// them one after another on the page's axis: D.spans, {number, start,
// end, args, pid, breakdown, estimated} in time order (seconds; end null
// when unknown). A line is not
// drawn from one session's last point to the next one's first (the
// program did not run in between), the gap between them is shaded, and
// each later session's start is a dashed line named "session N".
const SPANS = D.spans || [];
// Where lines break: midway between a session's end and the next one's
// start, or at that start when they touch.
const BREAKS = SPANS.slice(1).map((s, k) => {
  const end = SPANS[k].end;
  return end !== null && end < s.start ? (end + s.start) / 2 : s.start;
});

// The number of the session at time t (the last one started by then),
// or null before the first.
function sessionAt(t) {
  let n = null;
  for (const s of SPANS) if (s.start <= t) n = s.number;
  return n;
}

// data ([xs, ys...], xs ascending) with a row of nulls at each session
// break that has points on both sides; orig maps a row to its index in
// data (-1 for a break row), null when nothing was inserted.
function breakRows(data) {
  const xs = data[0];
  const cuts = BREAKS.filter((b) => xs.length && xs[0] < b && b <= xs[xs.length - 1]);
  if (!cuts.length) return { data, orig: null };
  const out = data.map(() => []), orig = [];
  let k = 0;
  for (let i = 0; i < xs.length; i++) {
    for (; k < cuts.length && cuts[k] <= xs[i]; k++) {
      if (i === 0 || xs[i - 1] >= cuts[k]) continue;
      out[0].push(cuts[k]);
      for (let a = 1; a < data.length; a++) out[a].push(null);
      orig.push(-1);
    }
    for (let a = 0; a < data.length; a++) out[a].push(data[a][i]);
    orig.push(i);
  }
  return { data: out, orig };
}

// A uPlot plugin: the gaps between sessions shaded (under the series),
// each later session's start a dashed line with its name (above them).
function sessionMarks() {
  const xOf = (u, t) => u.valToPos(t, 'x', true);
  return {
    hooks: {
      drawClear: [(u) => {
        const c = u.ctx, { left, top, width, height } = u.bbox;
        c.save();
        c.fillStyle = 'rgba(96, 125, 139, 0.10)';
        for (let k = 1; k < SPANS.length; k++) {
          const end = SPANS[k - 1].end, start = SPANS[k].start;
          if (end === null || end >= start) continue;
          const a = Math.max(left, xOf(u, end)), b = Math.min(left + width, xOf(u, start));
          if (b > a) c.fillRect(a, top, b - a, height);
        }
        c.restore();
      }],
      draw: [(u) => {
        const c = u.ctx, dpr = devicePixelRatio || 1, { left, top, width, height } = u.bbox;
        c.save();
        c.strokeStyle = 'rgba(55, 71, 79, 0.7)';
        c.fillStyle = 'rgba(55, 71, 79, 0.95)';
        c.setLineDash([4 * dpr, 3 * dpr]);
        c.lineWidth = dpr;
        c.font = `${10 * dpr}px sans-serif`;
        c.textAlign = 'left';
        c.textBaseline = 'alphabetic';
        for (const { number: n, start: t } of SPANS.slice(1)) {
          const x = xOf(u, t);
          if (x < left || x > left + width) continue;
          c.beginPath(); c.moveTo(x, top); c.lineTo(x, top + height); c.stroke();
          const label = `session ${n}`, w = c.measureText(label).width;
          const lx = x + 3 * dpr + w > left + width ? x - 3 * dpr - w : x + 3 * dpr;
          c.fillText(label, lx, top + height - 4 * dpr);
        }
        c.restore();
      }],
    },
  };
}

// Room for the widest label of a y axis (CSS px: uPlot's ctx is scaled).
function axisSize(u, values) {
  if (!values) return 50;
  u.ctx.save();
  u.ctx.font = '12px system-ui, sans-serif';
  const w = Math.max(0, ...values.map((v) => u.ctx.measureText(String(v)).width));
  u.ctx.restore();
  // At least 96 px, so that charts above one another line up.
  return Math.max(96, Math.ceil(w) + 24);
}

function chartWidth(host) {
  return Math.max(320, host.clientWidth || host.parentNode.clientWidth || 900);
}

// Draw a uPlot chart into host. data: [xs, ys...]; series: [{label,
// stroke, fill, value, paths, points}]; opts: {axis, height, plugins,
// range, stacked, unit (the y axis': 'By', 'By/s', 'ns', 's'), fmt (the
// y axis' labels for another unit)}.
function chart(id, data, series, opts) {
  opts = opts || {};
  const host = $(id);
  host.dataset.times = String(data[0].length);
  host.dataset.series = String(series.length);
  if (!data[0].length) return null;
  if (!hasPlot) {
    host.textContent = 'charts unavailable (uPlot was not embedded)';
    return null;
  }
  const fmt = opts.fmt || (opts.unit !== undefined ? fmtUnit(opts.unit) : null);
  const npoints = data[0].length;
  // Between sessions every line breaks: a row of nulls there, and a null
  // within a session (a column without this series' point) becomes
  // undefined, which uPlot joins over, where the series spans gaps.
  // uPlot clips a gap from the point before its nulls to the point after
  // them, so the nulls of a break reach out to the series' own points.
  const { data: rows, orig } = breakRows(data);
  if (orig)
    series.forEach((s, i) => {
      if (s.spanGaps === false) return;
      const ys = rows[i + 1] = rows[i + 1].map((v, r) => (v === null && orig[r] >= 0 ? undefined : v));
      orig.forEach((o, r) => {
        if (o >= 0) return;
        for (let j = r - 1; j >= 0 && ys[j] === undefined; j--) ys[j] = null;
        for (let j = r + 1; j < ys.length && ys[j] === undefined; j++) ys[j] = null;
      });
    });
  const valueOf = (s) => {
    const f = s.value || ((u, v) => (v === null || v === undefined ? '' : fmt ? fmt(v) : v));
    if (!orig) return f;
    // the series' own formatter sees the index into its data
    return (u, v, si, idx) => (idx === null || idx === undefined ? f(u, v, si, idx)
      : orig[idx] < 0 ? '' : f(u, v, si, orig[idx]));
  };
  const o = {
    width: chartWidth(host),
    height: opts.height || 240,
    // Every time chart spans the whole report, so they line up.
    scales: { x: { time: false, range: opts.range || fullRange }, y: opts.y || {} },
    series: [{ label: 'time', value: (u, v) => fmtSecs(v) },
      ...series.map((s, i) => ({
        label: s.label,
        stroke: s.stroke || COLORS[i % COLORS.length],
        fill: s.fill,
        width: s.width || 1.5,
        dash: s.dash,
        spanGaps: !orig && s.spanGaps !== false,
        points: s.points || { show: npoints < 80, size: 4 },
        paths: s.paths,
        value: valueOf(s),
      }))],
    axes: [{ values: axisSecs, label: 'time since the RTS started' },
      Object.assign({ size: axisSize }, yAxis(opts.unit, fmt))],
    plugins: [...(SPANS.length > 1 ? [sessionMarks()] : []), ...(opts.plugins || [])],
    cursor: { drag: { x: true, y: false } },
    legend: { live: true },
  };
  const plot = new uPlot(o, rows, host);
  charts[id] = plot;
  return plot;
}

// {====== header ======}

// What an estimated start time was estimated from (el.session.clock_from),
// in the words the REPL's summary() uses.
const CLOCK_FROM = {
  arrival: 'arrival: no WALL_CLOCK_TIME',
  file_mtime: "the file's time: no WALL_CLOCK_TIME",
  next_session: 'the next session',
};

function header() {
  const s = D.session || {};
  $('program').textContent = s.args || '';
  const f = $('facts');
  const fact = (k, v) => { if (v !== null && v !== undefined && v !== '') f.append(el('div', {}, el('dt', { text: k }), el('dd', { text: v }))); };
  fact('GHC', s.rts_version || s.ghc_version);
  if (s.start_unix_ms) fact('started', new Date(s.start_unix_ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') +
    (s.clock === 'estimated' ? ` (estimated from ${CLOCK_FROM[s.clock_from] || s.clock_from})` : ''));
  fact('duration', fmtSecs(D.range[1]));
  if (s.caps) {
    const caps = s.caps.split(', ');
    fact('capabilities', caps.length > 1 ? `${caps.length} (${s.caps})` : '1');
  }
  fact('pid', s.pid);
  fact('input', `${D.input} · ${fmtBytes(D.stats.bytes)} · ${fmtInt(D.stats.events)} events` +
    (D.stats.sessions > 1 ? ` · ${D.stats.sessions} sessions` : ''));
  sessionList();
  if (D.errors_total) {
    const e = $('errors');
    e.hidden = false;
    e.append(el('strong', { text: `The input could not be read completely (${D.errors_total} error${D.errors_total > 1 ? 's' : ''}); the report shows what was decoded:` }));
    const ul = el('ul');
    for (const x of D.errors) ul.append(el('li', { text: `byte offset ${x.offset}: ${x.msg}` }));
    e.append(ul);
  }
  // A session whose bytes end inside an event (the program was stopped
  // mid-write): said on stderr, and here where a reader sees it.
  if (D.cuts && D.cuts.length) {
    const w = $('warnings');
    w.hidden = false;
    const said =
        'Everything before it is shown (the program was stopped mid-write).';
    for (const c of D.cuts) {
      // Inside the input: a new stream (a joined eventlog) begins there.
      const text = c.inside ?
          `Session ${c.session} ends mid-event at byte ${c.offset}: ${
              c.msg}. Everything before it is shown; the next session is read from the header there.` :
          `The eventlog ends mid-event at byte ${c.offset}: ${c.msg}. ${said}`;
      w.append(el('p', {class: 'cut', 'data-offset': c.offset, text}));
    }
    if (D.cuts_total > D.cuts.length)
      w.append(el('p', {
        text: `${D.cuts_total - D.cuts.length} more sessions end mid-event.`
      }));
  }
  $('footer').textContent = `${D.generator} · ${fmtInt(D.stats.events)} events in ${D.stats.elapsed_s.toFixed(2)} s · ` +
    `peak memory ${fmtBytes(D.stats.peak_mem_bytes)}`;
  for (const sec of D.sections || [])
    $('nav').append(el('a', { href: '#custom-' + (D.sections.indexOf(sec) + 1), text: sec.title }));
}

// Several sessions: one line each under the header (the facts above are
// the first one's): where it lies on the page's axis, its program.
function sessionList() {
  if (SPANS.length < 2) return;
  const ol = $('sessions'), shown = 20;
  ol.hidden = false;
  for (const s of SPANS.slice(0, shown))
    ol.append(el('li', { 'data-session': s.number },
      el('span', { class: 'n', text: `session ${s.number}` }),
      el('span', { class: 'when', text: `${s.start === 0 ? '0 s' : fmtSecs(s.start)} – ${s.end === null ? '' : fmtSecs(s.end)}` +
        (s.estimated ? ' (estimated)' : '') }),
      el('span', { text: [s.pid !== null ? 'pid ' + s.pid : '', s.breakdown || ''].filter((x) => x).join(' · ') }),
      el('span', { class: 'args', text: s.args || '' })));
  if (SPANS.length > shown)
    ol.append(el('li', { text: `and ${fmtInt(SPANS.length - shown)} more sessions` }));
}

// {====== heap ======}

function heapSection() {
  const h = D.heap;
  const by = {};
  for (const s of h.series) by[s.key] = s;
  const st = $('heap-stats');
  const peak = (key, name, label) => {
    const s = by[key];
    if (s) stat(st, name, label, s.peak, fmtBytes(s.peak), `at ${fmtSecs(s.peak_t)} (${fmtInt(s.peak)} bytes)`);
  };
  peak('HeapSize', 'peak_heap_size', 'peak heap size');
  peak('HeapLive', 'peak_heap_live', 'peak live data');
  peak('BlocksSize', 'peak_blocks_size', 'peak blocks size');
  if (by.HeapAllocated) stat(st, 'allocated', 'allocated', by.HeapAllocated.total, fmtBytes(by.HeapAllocated.total));
  show('heap-nodata', !by.HeapSize && !by.HeapLive);
  const lines = [['HeapSize', 'heap size'], ['HeapLive', 'live data'], ['BlocksSize', 'blocks']]
    .filter(([k]) => by[k]);
  show('block-heap', lines.length > 0);
  // The title names the series drawn: before GHC 9.2 there is no
  // BLOCKS_SIZE event, so no blocks series (h74).
  if (lines.length) {
    const ls = lines.map(([, label]) => label);
    const t = ls.length > 1 ? `${ls.slice(0, -1).join(', ')} and ${ls[ls.length - 1]}` : ls[0];
    document.getElementById('heap-title').textContent = t.charAt(0).toUpperCase() + t.slice(1);
  }
  if (lines.length)
    chart('chart-heap', [h.t, ...lines.map(([k]) => by[k].max)],
      lines.map(([k, label]) => ({ label, value: (u, v) => fmtBytes(v) })),
      { unit: 'By', plugins: [markerLines()] });
  show('block-alloc', !!by.HeapAllocated);
  if (by.HeapAllocated)
    chart('chart-alloc', [h.t, by.HeapAllocated.rate],
      [{ label: 'allocation rate', stroke: '#00897b', fill: 'rgba(0,137,123,.12)', value: (u, v) => orEmpty(fmtUnit('By/s'))(v) }],
      { unit: 'By/s', plugins: [markerLines()], y: { range: (u, mn, mx) => [0, mx * 1.05 || 1] } });
  const mem = [['MemCurrent', 'allocated'], ['MemNeeded', 'needed'], ['MemReturned', 'returned']].filter(([k]) => by[k]);
  show('block-mem', mem.length > 0);
  if (mem.length)
    // A megablock is 1 MiB (GHC's MBLOCK_SIZE): drawn in bytes, so that
    // the axis and the values read as sizes.
    chart('chart-mem', [h.t, ...mem.map(([k]) => by[k].max.map((v) => (v === null ? null : v * 1048576)))],
      mem.map(([k, label]) => ({ label, value: (u, v) => orEmpty(fmtBytes)(v) })), { unit: 'By', plugins: [markerLines()] });
  heapProfile();
}

const BREAKDOWNS = { '-hT': 'by closure type', '-hc': 'by cost-centre stack', '-hC': 'by cost-centre stack',
  '-hm': 'by module', '-hd': 'by closure description', '-hy': 'by type', '-hr': 'by retainer set',
  '-he': 'by era', '-hb': 'by biography', '-hi': 'by info table' };

// Heap profiling was on (HEAP_PROF_BEGIN) but no census came. Measured
// with GHC 9.0.2 (docs/report.md "Sections without data"): the RTS counts
// -i only in clock ticks that land while a Haskell thread runs, so a
// program that mostly waits gets no census however long it runs or how
// often it collects; -i0 takes one at every collection.
function noCensus(p, bd) {
  // Censuses came (HEAP_PROF_SAMPLE_BEGIN) with no sample in any: the
  // interval is not the cause; a filter (+RTS -hy<type>, -hc<name>, ...)
  // that matched nothing is the usual one.
  const n = p.censuses_begun;
  if (n)
    return `${fmtInt(n)} ${
               n === 1 ? 'census was' :
                         'censuses were'} taken (<code>${bd || '-h'}</code>) ` +
        `but ${
               n === 1 ?
                   'it held' :
                   'none held'} a sample: a filter given with the breakdown ` +
        '(<code>-hy&lt;type&gt;</code>, <code>-hc&lt;name&gt;</code>, ...) matched nothing, or the heap held ' +
        'nothing of that kind.';
  const mut = D.timeline.mutator_ns;
  const iv = p.interval_ns;
  const flags = `<code>${bd || '-h'}</code>, <code>-i${iv ? iv / 1e9 : 0}</code>`;
  return `Heap profiling was on (${flags}) but no census was taken. ` + (iv
    ? 'The RTS counts the interval only while Haskell code runs' +
      (mut && mut < iv ? ` (here ${fmtNs(mut)} in all)` : '') +
      ': a program that mostly waits gets no census. Run it with a smaller <code>-i</code>, or ' +
      '<code>-i0</code> for a census at every collection.'
    : 'With <code>-i0</code> a census is taken at every collection: none came.');
}

// The start of the "no heap profile" hint. An eventlog without the RTS's
// start-up events (no RTS_IDENTIFIER, PROGRAM_ARGS) may have lost the heap
// profile's with them: on GHC 9.0 they, HEAP_PROF_BEGIN and the census
// samples go through the RTS's global buffer, written when it fills or at
// exit, and eventlog-socket does not repeat them to a client that
// connects later (spec: peers/eventlog-socket README).
function noStartup() {
  const s = D.session || {};
  if (s.rts_version || s.ghc_version || s.args) return 'No heap profile: ';
  return 'No heap profile, and no start-up events either (RTS_IDENTIFIER, PROGRAM_ARGS): ' +
    'on GHC 9.0 they, HEAP_PROF_BEGIN and the census samples are written in the RTS\'s global buffer, ' +
    'which reaches the eventlog only when it fills or at exit: a program killed before, or an ' +
    'eventlog-socket client that connected after start-up, has none. Else ';
}

function heapProfile() {
  const p = D.heapprof;
  const st = $('heap-stats');
  stat(st, 'censuses', 'heap censuses', p.censuses_begun, fmtInt(p.censuses_begun));
  const bd = p.breakdown || '';
  // Sessions profiled by different breakdowns: their bands share the chart.
  const bds = [...new Set(SPANS.map((s) => s.breakdown).filter((b) => b))];
  $('heapprof-breakdown').textContent = bds.length > 1
    ? `${SPANS.filter((s) => s.breakdown).map((s) => `${s.breakdown} (session ${s.number})`).join(', ')}: ` +
      `${fmtInt(p.censuses)} censuses, ${fmtInt(p.bands_total)} bands`
    : bd ? `${bd}: ${BREAKDOWNS[bd] || ''}, ${fmtInt(p.censuses)} censuses, ${fmtInt(p.bands_total)} bands` +
    (p.interval_ns ? `, every ${fmtNs(p.interval_ns)}` : '') : '';
  const top = p.top;
  if (top.length) {
    const b = top[0].band;
    stat(st, 'top_band', 'top band', b[0], b[0], 'the band with the most bytes over all censuses');
    stat(st, 'top_band_peak', 'its peak', b[1], fmtBytes(b[1]), `${fmtInt(b[1])} bytes at ${fmtSecs(b[5])}`);
  }
  const nd = $('heapprof-nodata');
  if (!p.censuses) {
    nd.hidden = false;
    nd.innerHTML = bd === '-hb' || bd === '-hr'
      ? `This heap profile (<code>${bd}</code>) has no samples the report could read.`
      : p.begun ? noCensus(p, bd)
      : noStartup() + 'run the program with <code>+RTS -hT -l</code> (any build: by closure type), or with a profiled build ' +
        '(<code>-prof</code>) <code>-hc</code>, <code>-hy</code>, <code>-hd</code>, <code>-hm</code>, <code>-hr</code>, <code>-he</code>; ' +
        '<code>-hi</code> with <code>-finfo-table-map</code>. <code>-i&lt;seconds&gt;</code> sets how often a census is taken.';
    $('chart-heapprof').hidden = true;
    $('bands-search').parentNode.hidden = true;
    $('bands-table').parentNode.hidden = true;
    $('heapprof-top').parentNode.hidden = true;
    return;
  }
  const sel = $('heapprof-top');
  for (let n = 1; n <= top.length; n++) sel.append(el('option', { value: n, text: n, selected: n === top.length }));
  const drawProf = () => {
    const n = Number(sel.value);
    const shown = top.slice(0, n);
    // Stacked: each band's line is the sum of the bands below it; drawn
    // from the top down, each filled to zero over the ones drawn before.
    const xs = p.t;
    const cum = [];
    let acc = xs.map(() => 0);
    for (const b of shown) {
      acc = acc.map((a, i) => a + b.v[i]);
      cum.push(acc);
    }
    const total = p.total;
    const series = [], ys = [];
    const raw = [];
    if (p.bands_total > n) {
      ys.push(total);
      raw.push(xs.map((x, i) => total[i] - cum[cum.length - 1][i]));
      series.push({ label: `other (${p.bands_total - n} bands)`, stroke: '#90a4ae', fill: OTHER_COLOR });
    }
    for (let k = shown.length - 1; k >= 0; k--) {
      ys.push(cum[k]);
      raw.push(shown[k].v);
      const c = COLORS[k % COLORS.length];
      series.push({ label: shown[k].band[0].slice(0, 60), stroke: c, fill: c });
    }
    series.forEach((s, i) => { s.value = (u, v, si, idx) => (idx === null || idx === undefined ? '' : fmtBytes(raw[i][idx])); s.width = 1; });
    // Where a column holds several censuses it shows the largest; the
    // dashed line is the smallest census total of the column.
    const several = p.ncensus.some((c) => c > 1);
    $('heapprof-envelope').hidden = !several;
    if (several) {
      ys.push(p.min_total);
      raw.push(p.min_total);
      series.push({ label: 'smallest census in the column', stroke: '#263238', dash: [4, 3], width: 1,
        value: (u, v) => orEmpty(fmtBytes)(v) });
    }
    if (charts['chart-heapprof']) { charts['chart-heapprof'].destroy(); $('chart-heapprof').replaceChildren(); }
    chart('chart-heapprof', [xs, ...ys], series, { unit: 'By', height: 340, plugins: [markerLines()],
      y: { range: (u, mn, mx) => [0, mx * 1.05 || 1] } });
  };
  sel.addEventListener('change', drawProf);
  drawProf();
  const colorOf = new Map(top.map((b, i) => [b.band[0], COLORS[i % COLORS.length]]));
  const rows = p.bands.map((b, i) => [i + 1, ...b]);
  $('bands-table').dataset.rows = String(rows.length);
  searchTable($('bands-table').tBodies[0], $('bands-search'), $('bands-count'), rows,
    (r) => el('tr', {}, td(String(r[0]), 'num'),
      el('td', { class: 'name', title: r[5] || '' }, colorOf.has(r[1]) ? el('span', { class: 'swatch', style: `background:${colorOf.get(r[1])}` }) : null,
        r[1] + (r[5] ? ' — ' + r[5] : '')),
      td(fmtBytes(r[2]), 'num', fmtInt(r[2]) + ' bytes'), td(fmtBytes(r[3]), 'num', fmtInt(r[3]) + ' bytes'),
      td(fmtInt(r[4]), 'num'), td(fmtSecs(r[6]), 'num')),
    (r) => r[1] + ' ' + (r[5] || ''), 500);
  if (p.bands_total > p.bands.length)
    $('bands-count').textContent += ` (the ${p.bands.length} largest of ${p.bands_total})`;
}

// {====== time ======}

function timeSection() {
  const tl = D.timeline, g = D.gc;
  const st = $('time-stats');
  const busy = tl.mutator_ns + tl.gc_ns;
  stat(st, 'gc_collections', 'GC collections', g.collections, fmtInt(g.collections), `${fmtInt(g.spans)} GC spans over all capabilities`);
  if (g.collections) {
    stat(st, 'gc_longest_pause_ns', 'longest pause', g.pause_max_ns, fmtNs(g.pause_max_ns), `${fmtInt(g.pause_max_ns)} ns`);
    stat(st, 'gc_pause_total_ns', 'total pause time', g.pause_total_ns, fmtNs(g.pause_total_ns));
    stat(st, 'gc_mean_pause_ns', 'mean pause', Math.round(g.pause_total_ns / g.collections), fmtNs(g.pause_total_ns / g.collections));
  }
  if (busy) stat(st, 'productivity', 'productivity', tl.mutator_ns / busy, fmtPct(tl.mutator_ns / busy), 'mutator / (mutator + GC) capability time');
  stat(st, 'threads', 'threads', D.threads.total, fmtInt(D.threads.total));
  show('timeline-nodata', !tl.caps.length);
  show('timeline', tl.caps.length > 0);
  $('tl-reset').hidden = !tl.caps.length;
  if (tl.caps.length) timeline();
  productivity();
  gcSection();
  threadsTable();
}

// Per capability: mutator and GC permille per column, from the timeline.
const TL = { view: null, canvas: null };

function timeline() {
  const tl = D.timeline;
  const canvas = $('timeline-canvas'), tip = $('timeline-tip');
  // A thread id names another thread in each session.
  const labels = new Map(D.threads.rows.map((r) => [r[10] + ':' + r[0], r[1]]));
  const rowH = 26, axisH = 22, labelW = 56;
  const t0 = tl.t0, w = tl.width_s, n = tl.n;
  const full = [t0, t0 + n * w];
  let view = full.slice();
  TL.view = view;
  const caps = tl.caps;
  const H = axisH + caps.length * rowH + 4;
  function size() {
    const dpr = devicePixelRatio || 1;
    const W = canvas.parentNode.clientWidth || 900;
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    canvas.style.height = H + 'px';
    return { W, dpr };
  }
  function draw() {
    const { W, dpr } = size();
    const c = canvas.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, W, H);
    const plotW = W - labelW - 8;
    const span = view[1] - view[0];
    const xOf = (t) => labelW + (t - view[0]) / span * plotW;
    // axis
    c.fillStyle = '#555';
    c.font = '11px sans-serif';
    c.strokeStyle = '#e0e0e0';
    const step = niceStep(span / 8);
    for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      const x = xOf(t);
      c.beginPath(); c.moveTo(x, axisH - 4); c.lineTo(x, H); c.stroke();
      c.fillText(axisSecs(null, [t], 0, 0, step)[0], x + 2, 12);
    }
    // rows: per pixel, the mean of the columns that fall in it
    caps.forEach((cap, r) => {
      const y0 = axisH + r * rowH;
      c.fillStyle = '#37474f';
      c.fillText('cap ' + cap.cap, 4, y0 + rowH / 2 + 4);
      c.fillStyle = '#fafafa';
      c.fillRect(labelW, y0 + 1, plotW, rowH - 2);
      const i0 = Math.max(0, Math.floor((view[0] - t0) / w));
      const i1 = Math.min(n - 1, Math.ceil((view[1] - t0) / w));
      const px = new Map();
      for (let i = i0; i <= i1; i++) {
        const xa = Math.max(labelW, Math.floor(xOf(t0 + i * w)));
        const xb = Math.min(labelW + plotW, Math.max(xa + 1, Math.floor(xOf(t0 + (i + 1) * w))));
        for (let x = xa; x < xb; x++) {
          let a = px.get(x);
          if (!a) { a = [0, 0, 0]; px.set(x, a); }
          a[0] += cap.mut[i]; a[1] += cap.gc[i]; a[2]++;
        }
      }
      const h = rowH - 4;
      for (const [x, a] of px) {
        const m = a[0] / a[2] / 1000, g = a[1] / a[2] / 1000;
        if (m > 0) { c.fillStyle = '#43a047'; c.fillRect(x, y0 + 2 + h * (1 - m), 1, h * m); }
        if (g > 0) { c.fillStyle = '#fb8c00'; c.fillRect(x, y0 + 2 + h * (1 - m - g), 1, h * g); }
      }
    });
    // Sessions as on the charts: the gaps between them shaded, each later
    // one's start a dashed line.
    const rowsH = caps.length * rowH;
    c.save();
    c.beginPath(); c.rect(labelW, axisH, plotW, rowsH); c.clip();
    c.fillStyle = 'rgba(96, 125, 139, 0.10)';
    for (let k = 1; k < SPANS.length; k++) {
      const end = SPANS[k - 1].end, start = SPANS[k].start;
      if (end !== null && end < start) c.fillRect(xOf(end), axisH, xOf(start) - xOf(end), rowsH);
    }
    c.strokeStyle = 'rgba(55, 71, 79, 0.7)';
    c.setLineDash([4, 3]);
    for (const { start: t } of SPANS.slice(1)) {
      c.beginPath(); c.moveTo(Math.round(xOf(t)) + 0.5, axisH); c.lineTo(Math.round(xOf(t)) + 0.5, axisH + rowsH); c.stroke();
    }
    c.restore();
    canvas.dataset.view = `${view[0]},${view[1]}`;
  }
  function colAt(clientX) {
    const rect = canvas.getBoundingClientRect();
    const plotW = rect.width - labelW - 8;
    const t = view[0] + (clientX - rect.left - labelW) / plotW * (view[1] - view[0]);
    return { t, i: Math.floor((t - t0) / w) };
  }
  let drag = null;
  canvas.addEventListener('mousedown', (e) => { drag = { x: e.clientX, v: view.slice() }; });
  window.addEventListener('mouseup', () => { drag = null; });
  canvas.addEventListener('mousemove', (e) => {
    const rect = canvas.getBoundingClientRect();
    if (drag) {
      const plotW = rect.width - labelW - 8;
      const dt = (e.clientX - drag.x) / plotW * (drag.v[1] - drag.v[0]);
      setView([drag.v[0] - dt, drag.v[1] - dt]);
      return;
    }
    const r = Math.floor((e.clientY - rect.top - axisH) / rowH);
    // The columns under this pixel (one, or several when zoomed out).
    const a = colAt(e.clientX), b = colAt(e.clientX + 1);
    const i0 = Math.max(0, a.i), i1 = Math.min(n - 1, Math.max(a.i, b.i - 1));
    if (r < 0 || r >= caps.length || i1 < 0 || i0 >= n || e.clientX - rect.left < labelW) { tip.hidden = true; return; }
    const cap = caps[r];
    let m = 0, g = 0;
    const ran = new Map();
    for (let i = i0; i <= i1; i++) {
      m += cap.mut[i]; g += cap.gc[i];
      if (cap.thr[i] >= 0) ran.set(cap.thr[i], (ran.get(cap.thr[i]) || 0) + cap.thr_share[i]);
    }
    const k = i1 - i0 + 1;
    let th = -1, share = 0;
    for (const [x, v] of ran) if (v > share) { th = x; share = v; }
    let text = `cap ${cap.cap} at ${fmtSecs(t0 + (i0 + k / 2) * w)} (${k > 1 ? k + ' columns' : 'column'} of ${fmtNs(w * 1e9)})\n` +
      `running ${(m / k / 10).toFixed(1)} %, GC ${(g / k / 10).toFixed(1)} %, idle ${Math.max(0, 100 - (m + g) / k / 10).toFixed(1)} %`;
    const tm = t0 + (i0 + k / 2) * w, sn = sessionAt(tm), label = labels.get(sn + ':' + th);
    if (th >= 0) text += `\nthread ${th}${SPANS.length > 1 && sn !== null ? ' of session ' + sn : ''}` +
      `${label ? ' "' + label + '"' : ''} ran ${(share / k / 10).toFixed(1)} %`;
    tip.textContent = text;
    tip.hidden = false;
    const x = e.clientX - rect.left + 12;
    tip.style.left = Math.min(x, rect.width - tip.offsetWidth - 4) + 'px';
    tip.style.top = (e.clientY - rect.top + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const { t } = colAt(e.clientX);
    const k = e.deltaY < 0 ? 0.8 : 1.25;
    setView([t - (t - view[0]) * k, t + (view[1] - t) * k]);
  }, { passive: false });
  function setView(v) {
    const minSpan = w * 4;
    let [a, b] = v;
    if (b - a < minSpan) { const m = (a + b) / 2; a = m - minSpan / 2; b = m + minSpan / 2; }
    if (b - a > full[1] - full[0]) { a = full[0]; b = full[1]; }
    if (a < full[0]) { b += full[0] - a; a = full[0]; }
    if (b > full[1]) { a -= b - full[1]; b = full[1]; }
    view = [a, b];
    TL.view = view;
    draw();
    const p = charts['chart-prod'];
    if (p) p.setScale('x', { min: a, max: b });
  }
  TL.setView = setView;
  window.elReport.timeline = TL;
  $('tl-reset').addEventListener('click', () => setView(full));
  window.addEventListener('resize', draw);
  draw();
}

function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  const m = x / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

// Productivity per column over all capabilities, merged to at most 1200
// points.
function productivity() {
  const tl = D.timeline;
  if (!tl.caps.length) { show('block-prod', false); return; }
  const n = tl.n, k = Math.max(1, Math.ceil(n / 400));
  const xs = [], prod = [], gc = [];
  for (let i = 0; i < n; i += k) {
    let m = 0, g = 0;
    for (let j = i; j < Math.min(n, i + k); j++)
      for (const cap of tl.caps) { m += cap.mut[j]; g += cap.gc[j]; }
    xs.push(tl.t0 + (i + Math.min(k, n - i) / 2) * tl.width_s);
    prod.push(m + g ? m / (m + g) : null);
    gc.push(m + g ? g / (tl.caps.length * Math.min(k, n - i) * 1000) : null);
  }
  chart('chart-prod', [xs, prod, gc], [
    { label: 'productivity: mutator / (mutator + GC)', stroke: '#43a047', fill: 'rgba(67,160,71,.15)', value: (u, v) => fmtPct(v), spanGaps: false },
    { label: 'GC share of capability time', stroke: '#fb8c00', fill: 'rgba(251,140,0,.25)', value: (u, v) => fmtPct(v), spanGaps: false }],
  { fmt: fmtPct, height: 200, y: { range: [0, 1] }, plugins: [markerLines()] });
}

function gcSection() {
  const g = D.gc;
  show('gc-nodata', !g.collections);
  if (!g.collections) { $('gc-body').hidden = true; return; }
  const max = Math.max(...g.hist.map((h) => h[2]));
  const hist = $('gc-hist');
  hist.dataset.buckets = String(g.hist.length);
  for (const [lo, hi, n] of g.hist) {
    hist.append(el('span', { text: `${fmtNs(lo)} – ${fmtNs(hi)}` }),
      el('div', { class: 'bar', style: `width:${(n / max * 100).toFixed(1)}%`, title: `${n} pauses` }),
      el('span', { class: 'num', text: fmtInt(n) }));
  }
  const tb = $('gc-longest').tBodies[0];
  for (const [t, d, ncaps] of g.longest)
    tb.append(el('tr', {}, td(fmtSecs(t), 'num'), td(fmtNs(d), 'num', fmtInt(d) + ' ns'), td(String(ncaps), 'num')));
  chart('chart-pauses', [g.t, g.max_ns], [{ label: 'longest pause', stroke: '#fb8c00',
    paths: hasPlot ? uPlot.paths.bars({ size: [0.9, 6] }) : undefined, fill: 'rgba(251,140,0,.5)', value: (u, v) => orEmpty(fmtNs)(v), points: { show: false } }],
  { unit: 'ns', height: 180, plugins: [markerLines()], y: { range: (u, mn, mx) => [0, mx * 1.05 || 1] } });
}

// Rows [id, label, created, finished, running_ns, blocked_ns, runs,
// state, status, finished?, session]: every session's threads, times on
// the page's axis; with several sessions a column names each thread's.
function threadsTable() {
  const t = D.threads;
  const several = SPANS.length > 1 || t.rows.some((r) => r[10] !== t.rows[0][10]);
  show('threads-nodata', !t.rows.length);
  $('threads-table').dataset.rows = String(t.rows.length);
  if (!t.rows.length) { $('threads-search').parentNode.hidden = true; $('threads-table').parentNode.hidden = true; return; }
  $('threads-session').hidden = !several;
  searchTable($('threads-table').tBodies[0], $('threads-search'), $('threads-count'), t.rows,
    (r) => el('tr', {}, several ? td(String(r[10]), 'num') : null, td(String(r[0]), 'num'), td(r[1] || '', 'name'),
      el('td', { class: 'num', text: fmtSecs(r[2]), 'data-value': r[2] === null ? null : String(r[2]) }),
      td(r[9] ? fmtSecs(r[3]) : '', 'num', r[9] ? '' : 'still alive at the end (last seen ' + fmtSecs(r[3]) + ')'),
      td(r[2] !== null && r[3] !== null ? fmtSecs(r[3] - r[2]) : '', 'num'),
      td(fmtNs(r[4]), 'num', fmtInt(r[4]) + ' ns'), td(fmtNs(r[5]), 'num'), td(fmtInt(r[6]), 'num'),
      td(r[8] || r[7] || '')),
    (r) => `${several ? 'session ' + r[10] + ' ' : ''}${r[0]} ${r[1] || ''} ${r[8] || ''}`, 500);
  if (t.total > t.rows.length) $('threads-count').textContent += ` (the ${t.rows.length} that ran longest of ${t.total})`;
}

// {====== profiles ======}

function profilesSection() {
  const ps = D.profiles;
  show('profiles-nodata', !ps.length);
  const list = $('profiles-list');
  let total = 0;
  ps.forEach((p, k) => { total += p.samples; list.append(profile(p, k)); });
  const st = el('div', { class: 'stats' });
  stat(st, 'profile_samples', 'profile samples', total, fmtInt(total));
  list.prepend(st);
}

function profile(p, k) {
  const title = p.source === 'cost-centre' ? 'Cost-centre profile (PROF_SAMPLE_COST_CENTRE)'
    : p.source === 'call-stack' ? 'Call stacks (ghc-stack-profiler)' : p.kind;
  const box = el('div', { class: 'profile', id: 'profile-' + k, 'data-kind': p.kind });
  const st = el('div', { class: 'stats' });
  stat(st, 'samples_' + p.source, 'samples', p.samples, fmtInt(p.samples));
  stat(st, 'symbols_' + p.source, 'symbols', p.symbols_total, fmtInt(p.symbols_total));
  box.append(el('h3', { text: title }), st);
  if (p.truncated) box.append(el('p', { class: 'hint', text: `${fmtInt(p.truncated)} samples were cut short: the call tree reached its size limit.` }));
  box.append(el('p', { class: 'hint', text: 'Flame graph (icicle): callers above callees, width = samples. Click a frame to zoom into it, click the top bar to zoom out.' }));
  const crumbs = el('div', { class: 'crumbs' });
  const wrap = el('div', { class: 'icicle' });
  const canvas = el('canvas');
  const tip = el('div', { class: 'tip', hidden: true });
  wrap.append(canvas, tip);
  box.append(crumbs, wrap);
  // symbols table
  const search = el('input', { type: 'search', placeholder: 'search symbols' });
  const count = el('span', { class: 'hint' });
  const table = el('table', { class: 'data symbols' },
    el('thead', {}, el('tr', {}, el('th', { text: 'symbol' }), el('th', { text: 'location' }),
      el('th', { class: 'num', text: 'self' }), el('th', { class: 'num', text: 'self %' }),
      el('th', { class: 'num', text: 'total' }), el('th', { class: 'num', text: 'total %' }))),
    el('tbody'));
  table.dataset.rows = String(p.symbols.length);
  box.append(el('div', { class: 'table-tools' }, search, count), el('div', { class: 'scroll' }, table));
  const all = p.samples || 1;
  searchTable(table.tBodies[0], search, count, p.symbols,
    (r) => el('tr', {}, td(p.names[r[0]], 'name'), td(p.locs[r[0]] || '', 'name'),
      td(fmtInt(r[1]), 'num'), td(fmtPct(r[1] / all), 'num'), td(fmtInt(r[2]), 'num'), td(fmtPct(r[2] / all), 'num')),
    (r) => p.names[r[0]] + ' ' + (p.locs[r[0]] || ''), 300);
  requestAnimationFrame(() => icicle(p, canvas, tip, crumbs, search));
  return box;
}

function icicle(p, canvas, tip, crumbs, search) {
  const nodes = p.nodes;
  const kids = nodes.map(() => []);
  nodes.forEach((n, i) => { if (n[0] >= 0) kids[n[0]].push(i); });
  for (const k of kids) k.sort((a, b) => nodes[b][3] - nodes[a][3]);
  const depthOf = new Int32Array(nodes.length);
  let maxDepth = 0;
  nodes.forEach((n, i) => { if (n[0] >= 0) { depthOf[i] = depthOf[n[0]] + 1; maxDepth = Math.max(maxDepth, depthOf[i]); } });
  const rowH = 17;
  let focus = 0;
  let boxes = [];
  const nameOf = (i) => (i === 0 ? 'all samples' : p.names[nodes[i][1]]);
  function draw() {
    const dpr = devicePixelRatio || 1;
    const W = canvas.parentNode.clientWidth || 900;
    const path = [];
    for (let i = focus; i >= 0; i = nodes[i][0]) { path.unshift(i); if (nodes[i][0] < 0) break; }
    const depthF = depthOf[focus];
    let deepest = depthF;
    const H = (Math.min(maxDepth, 60) + 2) * rowH;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr); canvas.style.height = H + 'px';
    const c = canvas.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, W, H);
    c.font = '11px sans-serif';
    boxes = [];
    const q = search.value.trim().toLowerCase();
    const rect = (i, x, w, d) => {
      const y = d * rowH;
      if (y + rowH > H) return;
      const name = nameOf(i);
      const hit = q && name.toLowerCase().includes(q);
      c.fillStyle = i === 0 ? '#90a4ae' : hit ? '#e040fb' : hue(name);
      c.fillRect(x, y, Math.max(w - 1, 0.5), rowH - 1);
      if (w > 30) {
        c.fillStyle = '#111';
        c.save(); c.beginPath(); c.rect(x, y, w - 2, rowH); c.clip();
        c.fillText(name, x + 3, y + 12);
        c.restore();
      }
      boxes.push([x, y, w, i]);
    };
    // ancestors of the focus: full width
    path.forEach((i, d) => rect(i, 0, W, d));
    const lay = (i, x, w, d) => {
      if (w < 0.3 || d > 60) return;
      deepest = Math.max(deepest, d);
      let cx = x;
      for (const k of kids[i]) {
        const kw = w * nodes[k][3] / nodes[i][3];
        rect(k, cx, kw, d + 1);
        lay(k, cx, kw, d + 1);
        cx += kw;
      }
    };
    lay(focus, 0, W, depthF);
    canvas.dataset.frames = String(boxes.length);
    crumbs.replaceChildren(...path.map((i, k) => {
      const a = el('a', { text: nameOf(i) });
      a.addEventListener('click', () => { focus = i; draw(); });
      return k ? [' › ', a] : [a];
    }).flat());
  }
  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const b = boxes.find((bx) => x >= bx[0] && x < bx[0] + bx[2] && y >= bx[1] && y < bx[1] + rowH);
    if (!b) { tip.hidden = true; return; }
    const n = nodes[b[3]];
    const loc = b[3] ? p.locs[n[1]] : '';
    tip.textContent = `${nameOf(b[3])}${loc ? '\n' + loc : ''}\ntotal ${fmtInt(n[3])} (${fmtPct(n[3] / (p.samples || 1))}), self ${fmtInt(n[2])}`;
    tip.hidden = false;
    tip.style.left = Math.min(x + 12, r.width - tip.offsetWidth - 4) + 'px';
    tip.style.top = (y + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('click', (e) => {
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const b = boxes.find((bx) => x >= bx[0] && x < bx[0] + bx[2] && y >= bx[1] && y < bx[1] + rowH);
    if (!b) return;
    focus = b[3] === focus && focus !== 0 ? Math.max(0, nodes[focus][0]) : b[3];
    draw();
  });
  search.addEventListener('input', draw);
  window.addEventListener('resize', draw);
  draw();
}

// A stable warm colour per name (flame graph convention).
function hue(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  const x = Math.abs(h);
  return `hsl(${15 + x % 40}, ${65 + (x >> 8) % 25}%, ${60 + (x >> 16) % 15}%)`;
}

// {====== logs ======}

function logsSection() {
  const l = D.logs;
  const st = $('logs-stats');
  stat(st, 'markers', 'markers', D.markers.total, fmtInt(D.markers.total));
  const msgs = l.rows.filter((r) => r[1] === 'message').length;
  stat(st, 'log_records', 'messages and markers', l.total, fmtInt(l.total));
  show('logs-nodata', !l.total);
  show('logs-tools', l.total > 0);
  show('logs-scroll', l.total > 0);
  $('logs-table').dataset.rows = String(l.rows.length);
  const rows = l.rows.slice().sort((a, b) => a[0] - b[0]);
  searchTable($('logs-table').tBodies[0], $('logs-search'), $('logs-count'), rows,
    (r) => el('tr', {}, td(fmtSecs(r[0]), 'num fit', r[0] + ' s'), td(r[1], 'fit kind-' + r[1]), td(r[2] === null ? '' : String(r[2]), 'num fit'), td(r[3])),
    (r) => r[3], 2000);
  if (l.total > l.rows.length)
    $('logs-count').textContent += ` (the first and last ${fmtInt(l.rows.length / 2)} of ${fmtInt(l.total)}; ${fmtInt(msgs)} messages shown)`;
}

// {====== sections added by scripts ======}

function customSections() {
  const host = $('custom');
  (D.sections || []).forEach((s, k) => {
    const id = 'custom-' + (k + 1);
    const sec = el('section', { class: 'part', id, 'data-kind': s.kind },
      el('h2', { text: s.title }));
    if (s.description) sec.append(el('p', { class: 'hint', text: s.description }));
    host.append(sec);
    if (s.kind === 'series') {
      const c = el('div', { class: 'chart', id: id + '-chart' });
      sec.append(c);
      sec.dataset.points = String(s.points);
      if (!s.t.length) { sec.append(el('p', { class: 'nodata', text: 'No points.' })); return; }
      const f = fmtUnit(s.unit);
      chart(id + '-chart', [s.t, ...s.lines.map((l) => l.mean)],
        s.lines.map((l) => ({ label: l.name, value: (u, v, si, i) => (i === null || i === undefined ? '' :
          `${f(v)} (min ${f(l.min[i])}, max ${f(l.max[i])})`) })), { unit: s.unit, plugins: [markerLines()] });
    } else {
      const search = el('input', { type: 'search', placeholder: 'search' });
      const count = el('span', { class: 'hint' });
      const table = el('table', { class: 'data' },
        el('thead', {}, el('tr', {}, ...s.columns.map((c) => el('th', { text: c })))), el('tbody'));
      table.dataset.rows = String(s.rows.length);
      sec.append(el('div', { class: 'table-tools' }, search, count), el('div', { class: 'scroll' }, table));
      searchTable(table.tBodies[0], search, count, s.rows,
        (r) => el('tr', {}, ...r.map((v) => el('td', { class: typeof v === 'number' ? 'num' : '',
          'data-value': v === null ? null : String(v),
          text: v === null ? '' : typeof v === 'number' ? fmtUnit('')(v) : v }))),
        (r) => r.join(' '), 1000);
      if (s.omitted) count.textContent += ` (${fmtInt(s.omitted)} more rows were not kept)`;
    }
  });
}

function main() {
  header();
  heapSection();
  timeSection();
  profilesSection();
  logsSection();
  customSections();
  // Ready once drawn: the flame graphs draw in an animation frame asked
  // for above (after layout), whose callbacks run before this one. A
  // check or screenshot taken at ready saw no flame graph under load.
  requestAnimationFrame(() => {
    window.elReport.ready = true;
    document.body.dataset.ready = '1';
  });
}

main();
