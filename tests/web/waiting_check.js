// Browser check of what the web view says while it waits for a program's
// data (tests/e2e/test_web_waiting.sh runs it): the daemon reads a FIFO
// that this check writes an eventlog into, in parts, looking at the page
// after each.
//
//   node waiting_check.js --url URL --fifo FIFO --log EVENTLOG
//        --cuts A[,B] --old 0|1 --screenshot PREFIX --user-data-dir DIR
//
// Parts: bytes [0, A) (the header alone), then [A, B) (events, no heap
// census), then the rest (the FIFO is then closed). --old 1: the log's
// header declares no BLOCKS_SIZE (the shell test read it), so the page
// must say that GHC before 9.2 writes its events only when a 2 MiB buffer
// fills or at exit:
//   header:    the status line and every empty chart say it, and no
//              hint that a trace processor is needed is shown (both
//              --old);
//   no census: the heap profile chart says it of its census, the other
//              charts say nothing (the GC pauses chart, whose trace
//              processor is off, "no data yet" and its hint that the
//              processor is needed), the status line is the usual one;
//   rest:      the heap profile chart has points and nothing says it,
//              the FIFO still open (the input has not ended).
// --old 0 (one cut: header, then the rest): the page says it nowhere, the
// waiting status line without the reason. Screenshots PREFIX-<part>.png
// (header, nocensus, rest).
// Every wait is bounded (30 s). Prints one JSON line; exit 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const {launch, watchErrors, exceptionText, finish, run, arg} =
    require('./browser');

const url = arg('--url');
const fifo = arg('--fifo');
const log = fs.readFileSync(arg('--log'));
const cuts = arg('--cuts').split(',').map(Number);
const old = arg('--old') === '1';
const shot = arg('--screenshot');
const udd = arg('--user-data-dir');

// The texts a person reads (web/app.js), written out here on their own.
const REASON = 'GHC before 9.2 writes';
const STATUS_OLD = 'live · waiting for the first events: GHC before 9.2 ' +
    'writes them only when a 2 MiB buffer fills or at exit';
const STATUS_NEW = 'live · waiting for the first events';
const CHART_OLD = 'no data yet: GHC before 9.2 writes events only when a ' +
    '2 MiB buffer fills or at exit';
const HEAP_OLD = 'no heap census received yet: with -h, GHC before 9.2 ' +
    'writes heap profile samples only when its 2 MiB buffer fills or at exit';
const CHARTS = [
  'chart-heap', 'chart-heapprof', 'chart-alloc', 'chart-prod', 'chart-pauses',
  'chart-caps'
];

// What the page shows: the status line, each chart's empty-state text
// (null: it has none) and points, and whether any text says REASON.
function look(page) {
  return page.evaluate(([charts, reason]) => {
    const out = {
      status: document.getElementById('status').textContent,
      charts: {}
    };
    for (const id of charts) {
      const sec = document.getElementById(id);
      const e = sec.querySelector('.empty');
      out.charts[id] = {
        empty: e ? e.textContent : null,
        points: Number(sec.dataset.points || 0)
      };
    }
    out.reason = document.body.innerText.includes(reason);
    // the hints that a trace processor is needed: shown or not
    out.hints = {};
    for (const id of ['pauses-hint', 'threads-hint'])
      out.hints[id] = document.getElementById(id).style.display !== 'none';
    out.data = window.elView.data && {
      ghc_before_9_2: window.elView.data.ghc_before_9_2,
      points: window.elView.data.stats.points,
      ended: window.elView.data.ended,
    };
    return out;
  }, [CHARTS, REASON]);
}

// Wait (30 s at most) until pred(look) holds; the last look either way.
async function until(page, pred) {
  const end = Date.now() + 30000;
  let l = await look(page);
  while (!pred(l) && Date.now() < end) {
    await page.waitForTimeout(250);
    l = await look(page);
  }
  return l;
}

run(async () => {
  const problems = [];
  const errors = [];
  const result = {looks: {}};
  const want = (ok, what) => {
    if (!ok) problems.push(what);
  };
  // The daemon opened the FIFO for reading: this open does not block long.
  const fd = fs.openSync(fifo, 'w');
  fs.writeSync(fd, log, 0, cuts[0]);
  const ctx = await launch(udd, {height: 1100});
  try {
    const page = await ctx.newPage();
    watchErrors(page, errors);
    await page.goto(url);
    // 1. The header alone: nothing to draw yet.
    let l = await until(page, (x) => x.data && x.data.ghc_before_9_2 === old);
    result.looks.header = l;
    await page.screenshot({path: `${shot}-header.png`, fullPage: true});
    want(
        l.data && l.data.ghc_before_9_2 === old,
        `header: ghc_before_9_2 is not ${old}`);
    want(
        l.status === (old ? STATUS_OLD : STATUS_NEW),
        `header: status "${l.status}"`);
    // nothing came yet: no hint blames the configuration for the wait
    want(
        !l.hints['pauses-hint'] && !l.hints['threads-hint'],
        `header: a trace processor hint is shown: ${JSON.stringify(l.hints)}`);
    for (const id of CHARTS) {
      const e = l.charts[id].empty;
      const w = !old              ? 'no data yet' :
          id === 'chart-heapprof' ? HEAP_OLD :
                                    CHART_OLD;
      want(e === w, `header: ${id} says "${e}", not "${w}"`);
    }
    if (old) {
      // 2. Events, no census: only the heap profile chart waits.
      fs.writeSync(fd, log, cuts[0], cuts[1] - cuts[0]);
      l = await until(
          page,
          (x) => x.charts['chart-heap'].points > 0 &&
              x.charts['chart-alloc'].points > 0);
      result.looks.nocensus = l;
      await page.screenshot({path: `${shot}-nocensus.png`, fullPage: true});
      want(
          l.charts['chart-heap'].points > 0,
          'no census: the heap chart has no points');
      want(
          l.charts['chart-heap'].empty === null,
          'no census: the heap chart says it is empty');
      // the GC pauses need a trace processor (off here): no buffer to blame
      want(
          l.hints['pauses-hint'],
          'no census: the pauses chart does not say it needs a trace ' +
              'processor (off here)');
      want(
          l.charts['chart-pauses'].empty === 'no data yet',
          `no census: the pauses chart says "${
              l.charts['chart-pauses'].empty}"`);
      want(
          l.charts['chart-heapprof'].empty === HEAP_OLD,
          `no census: the heap profile chart says "${
              l.charts['chart-heapprof'].empty}"`);
      want(
          l.status.startsWith('live · ') && !l.status.includes('waiting'),
          `no census: status "${l.status}"`);
    }
    // 3. The rest (the census, for --old 1), the FIFO still open: the
    // input has not ended, so the page stops saying why it waits because
    // the data came, not because nothing more can come.
    const from = cuts[cuts.length - 1];
    fs.writeSync(fd, log, from, log.length - from);
    l = await until(
        page,
        (x) =>
            (old ? x.charts['chart-heapprof'].points > 0 :
                   x.data && x.data.points > 0));
    result.looks.rest = l;
    await page.screenshot({path: `${shot}-rest.png`, fullPage: true});
    want(
        l.data && !l.data.ended,
        'rest: the input ended before the FIFO was closed');
    if (old) {
      want(
          l.charts['chart-heapprof'].points > 0,
          'rest: the heap profile chart has no points');
      want(
          l.charts['chart-heapprof'].empty === null,
          'rest: the heap profile chart says it is empty');
    }
    want(!l.reason, 'rest: the page says why it waits');
    want(!l.status.includes('waiting'), `rest: status "${l.status}"`);
    fs.closeSync(fd);
  } catch (e) {
    problems.push(exceptionText(e));
  }
  await finish(ctx, result, problems, errors);
});
