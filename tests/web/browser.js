// The browser the web-view and report checks drive: Debian's Chromium
// (/usr/bin/chromium, installed by scripts/setup.sh), headless, through
// playwright-core, in a persistent profile folder of the test's own.
'use strict';
const { chromium } = require('playwright-core');

// The flags every check passes: no sandbox (tests may run as root), no GPU,
// no background traffic or first-run pages.
const BASE_ARGS = ['--headless', '--no-sandbox', '--disable-gpu',
  '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

// launch(userDataDir, { height, extraArgs, offline }): a browser context
// 1400 px wide (height px tall, default 1800) with BASE_ARGS plus
// extraArgs; offline: no network at all (report pages are files). Rejects
// when Chromium cannot start within 30 s.
function launch(userDataDir, { height = 1800, extraArgs = [], offline } = {}) {
  const opts = {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: BASE_ARGS.concat(extraArgs),
    viewport: { width: 1400, height },
    timeout: 30000,
  };
  if (offline) opts.offline = true;
  return chromium.launchPersistentContext(userDataDir, opts);
}

// watchErrors(page, errors, { requests }): push onto errors what the page
// reports wrong: console errors (their text), uncaught exceptions
// ('pageerror: message') and, with requests (true, or a function of the
// request saying which count), failed requests ('request failed: URL
// reason').
function watchErrors(page, errors, { requests = false } = {}) {
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  if (!requests) return;
  page.on('requestfailed', (r) => {
    if (requests === true || requests(r))
      errors.push(`request failed: ${r.url()} ${r.failure() && r.failure().errorText}`);
  });
}

// The text of an exception thrown by a check, as a problem.
function exceptionText(e) {
  return 'exception: ' + (e && e.stack ? e.stack : e);
}

// finish(ctx, result, problems, errors): the end of a check: close the
// browser, add the page's errors (watchErrors) to problems as
// 'console: ...', print result with its problems as one JSON line, and
// exit 1 when there is a problem, else 0.
async function finish(ctx, result, problems, errors) {
  try {
    await ctx.close();
  } catch (e) {
    problems.push(exceptionText(e));
  }
  problems.push(...errors.map((e) => 'console: ' + e));
  result.problems = problems;
  console.log(JSON.stringify(result));
  process.exit(problems.length ? 1 : 0);
}

// run(main): run a check's async main; a failure outside its own
// try (Chromium does not start) is printed and exits 1.
function run(main) {
  main().catch((e) => { console.error(e); process.exit(1); });
}

// arg(name): the value after option name in process.argv, both taken
// out of it (so the rest are positional); null when absent.
function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0) return null;
  const v = process.argv[i + 1];
  process.argv.splice(i, 2);
  return v;
}

module.exports = {
  launch,
  watchErrors,
  exceptionText,
  finish,
  run,
  arg
};
