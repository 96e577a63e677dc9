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

module.exports = { launch };
