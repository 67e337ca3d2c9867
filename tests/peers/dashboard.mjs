#!/usr/bin/env node
// Watches taskwire's task dashboard (`task-server --http ADDR --dashboard`, at /tasks) in
// headless Chromium (playwright-core with the system `chromium`) while a client runs tasks, the
// way an operator would, and prints what the page showed as one JSON object on stdout.
//
//   node dashboard.mjs --url URL --shots DIR [--scenario tasks|signin] [--good-token T]
//                      [--bad-token T] [--chromium PATH] [--timeout-ms N]
//
//   --url URL         the dashboard, e.g. http://127.0.0.1:3000/tasks
//   --shots DIR       where the screenshots go (created)
//   --scenario S      what to watch (default tasks):
//                     tasks: the page goes live; every row the page shows is recorded each time
//                       its status, message or progress changes. It waits for a
//                       long_running_task and a progress_task to complete (a screenshot while
//                       the progress bar moves), for a confirm_task to wait for its input, opens
//                       that task's detail (its history shows the question), presses Cancel
//                       (twice: the button asks again) and waits for the row and the detail to
//                       show it cancelled.
//                     signin: the server wants a token: the page asks for one; --bad-token (one
//                       lacking the dashboard's scope) is refused and asked again for; after
//                       --good-token the page goes live.
//   --chromium PATH   the browser (default $CHROMIUM, else /usr/bin/chromium)
//   --timeout-ms N    how long each state may take to appear (default 60000)
//
// Exit 0 with the summary; exit 1 with `dashboard.mjs: <step>: <why>` on stderr (and the
// page's text, and DIR/failure.png) when a step fails; exit 2 on bad arguments.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { dep, fail, log } from './peerlib.mjs';

// ------------------------------------------------------------------ arguments

/** The options from the command line (see the header); exits 2 on a bad one. */
function parseArgs(argv) {
  const opts = {
    scenario: 'tasks',
    chromium: process.env.CHROMIUM || '/usr/bin/chromium',
    timeoutMs: 60000,
  };
  const names = {
    '--url': 'url',
    '--shots': 'shots',
    '--scenario': 'scenario',
    '--good-token': 'goodToken',
    '--bad-token': 'badToken',
    '--chromium': 'chromium',
    '--timeout-ms': 'timeoutMs',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || argv[i + 1] === undefined) fail(`bad argument ${argv[i]} (see the header of this script)`, 2);
    opts[key] = key === 'timeoutMs' ? Number(argv[i + 1]) : argv[i + 1];
  }
  for (const key of ['url', 'shots']) {
    if (!opts[key]) fail(`--${key} is required`, 2);
  }
  if (!['tasks', 'signin'].includes(opts.scenario)) fail('--scenario is tasks or signin', 2);
  if (opts.scenario === 'signin' && !(opts.goodToken && opts.badToken)) {
    fail('--scenario signin needs --good-token and --bad-token', 2);
  }
  if (!(opts.timeoutMs > 0)) fail('--timeout-ms takes a positive number', 2);
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
mkdirSync(opts.shots, { recursive: true });

let chromium;
try {
  ({ chromium } = dep('playwright-core'));
} catch (e) {
  fail(`cannot load playwright-core from the peers' npm folder (run tests/peers/setup.sh): ${e.message}`, 2);
}

// ------------------------------------------------------------------ page helpers

/**
 * Records, in `window.seen` (task id -> views), each row of the table every time what it shows
 * changes: its tool, owner, status, message and progress. Runs in the page.
 */
function recordRows() {
  window.seen = {};
  const record = () => {
    for (const tr of document.querySelectorAll('#rows tr')) {
      const cells = tr.children;
      const view = {
        tool: cells[1].textContent,
        owner: cells[2].textContent,
        status: tr.dataset.status,
        message: cells[4].textContent,
        progress: cells[5].textContent,
      };
      const views = (window.seen[tr.dataset.id] ||= []);
      const last = views[views.length - 1];
      if (!last || ['status', 'message', 'progress'].some((k) => last[k] !== view[k])) views.push(view);
    }
  };
  new MutationObserver(record).observe(document.getElementById('rows'), {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
  });
  record();
}

/**
 * The id of the row of `tool` whose latest view has `want.status` (and, with
 * `want.minProgress`, progress `N/…` with N at least that), or null. Runs in the page.
 */
function rowWhere([tool, want]) {
  for (const [id, views] of Object.entries(window.seen)) {
    const last = views[views.length - 1];
    if (last.tool !== tool || last.status !== want.status) continue;
    if (want.minProgress && !(parseFloat(last.progress) >= want.minProgress)) continue;
    return id;
  }
  return null;
}

// What the page showed, printed at the end; the page and browser; the step under way.
const summary = { screenshots: [], consoleErrors: [] };
let page;
let browser;
let current = 'start';

/** Saves a screenshot of the viewport as DIR/NAME.png and lists it in the summary. */
async function shot(name) {
  const path = join(opts.shots, `${name}.png`);
  await page.screenshot({ path });
  summary.screenshots.push(path);
}

/** Runs one named step; its name heads the failure message. */
async function step(name, body) {
  current = name;
  return body();
}

/** Waits until a row of `tool` shows what `want` asks (see rowWhere); its id. */
async function waitForRow(tool, want) {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const id = await page.evaluate(rowWhere, [tool, want]);
    if (id) return id;
    if (Date.now() > deadline) {
      const seen = await page.evaluate(() => window.seen);
      throw new Error(`no ${tool} row ${JSON.stringify(want)} within ${opts.timeoutMs} ms; seen ${JSON.stringify(seen)}`);
    }
    await page.waitForTimeout(50);
  }
}

/** The counts by status, as the cards show them. */
function readCounts() {
  return Object.fromEntries(
    [...document.querySelectorAll('#counts .count')].map((c) => [c.dataset.status, Number(c.querySelector('.n').textContent)]),
  );
}

// ------------------------------------------------------------------ scenarios

async function tasks() {
  await step('open the dashboard and go live', async () => {
    await page.goto(opts.url, { timeout: opts.timeoutMs });
    await page.waitForSelector('body[data-conn="live"]', { timeout: opts.timeoutMs });
    await page.evaluate(recordRows);
    summary.live = true;
  });

  const progressed = await step('watch a progress_task move', () =>
    waitForRow('progress_task', { status: 'working', minProgress: 3 }),
  );
  await shot('01-running');

  const ran = await step('watch a long_running_task complete', () =>
    waitForRow('long_running_task', { status: 'completed' }),
  );
  await step('watch the progress_task complete', () =>
    waitForRow('progress_task', { status: 'completed' }),
  );

  const asking = await step('watch a confirm_task wait for its input', () =>
    waitForRow('confirm_task', { status: 'input_required' }),
  );

  await step('open its detail', async () => {
    await page.click(`#rows tr[data-id="${asking}"]`);
    await page.waitForSelector('#detail:not([hidden]) #d-history li[data-kind="asked"]', { timeout: opts.timeoutMs });
    await page.waitForSelector('#d-cancel:not([hidden])', { timeout: opts.timeoutMs });
    summary.detail = await page.evaluate(() => ({
      id: document.getElementById('d-id').textContent,
      status: document.getElementById('d-status').textContent,
      history: [...document.querySelectorAll('#d-history li')].map((li) => ({
        kind: li.dataset.kind ?? null,
        status: li.dataset.status ?? null,
        text: li.querySelector('.what')?.textContent ?? li.textContent,
      })),
    }));
  });
  await shot('02-detail');

  await step('cancel it from the detail', async () => {
    await page.click('#d-cancel');
    await page.waitForSelector('#d-cancel.confirm', { timeout: opts.timeoutMs });
    await page.click('#d-cancel');
    await page.waitForSelector(`#rows tr[data-id="${asking}"][data-status="cancelled"]`, { timeout: opts.timeoutMs });
    await page.waitForSelector('#d-history li[data-status="cancelled"]', { timeout: opts.timeoutMs });
    await page.waitForSelector('#d-cancel[hidden]', { state: 'attached', timeout: opts.timeoutMs });
  });
  await shot('03-cancelled');

  summary.cancelled = await page.evaluate((id) => {
    const row = document.querySelector(`#rows tr[data-id="${id}"]`);
    return {
      id,
      status: row.dataset.status,
      message: row.children[4].textContent,
      detailStatus: document.getElementById('d-status').textContent,
      notice: document.getElementById('notice').textContent,
    };
  }, asking);
  summary.ids = { longRunning: ran, progress: progressed, confirm: asking };
  summary.seen = await page.evaluate(() => window.seen);
  summary.counts = await page.evaluate(readCounts);
  summary.chartBars = await page.evaluate(() => document.querySelectorAll('#chart rect').length);
  summary.title = await page.title();
}

async function signin() {
  const form = '#signin:not([hidden])';
  await step('open the dashboard: it asks for a token', async () => {
    await page.goto(opts.url, { timeout: opts.timeoutMs });
    await page.waitForSelector(form, { timeout: opts.timeoutMs });
    summary.asked = await page.evaluate(() => ({
      conn: document.body.dataset.conn,
      why: document.getElementById('signin-why').textContent,
    }));
  });
  await shot('01-signin');

  await step('give a token without the scope: refused, asked again', async () => {
    await page.fill('#token', opts.badToken);
    await page.click('#signin button[type="submit"]');
    await page.waitForSelector('#signin-why:text-matches("^The server refused")', { timeout: opts.timeoutMs });
    await page.waitForSelector(form, { timeout: opts.timeoutMs });
    summary.refused = await page.evaluate(() => document.getElementById('signin-why').textContent);
  });

  await step('give a token with the scope: live', async () => {
    await page.fill('#token', opts.goodToken);
    await page.click('#signin button[type="submit"]');
    await page.waitForSelector('body[data-conn="live"]', { timeout: opts.timeoutMs });
    summary.live = true;
    summary.stored = await page.evaluate(() => sessionStorage.getItem('taskwire.dashboard.token') !== null);
    summary.signoutShown = await page.isVisible('#signout');
  });
  await shot('02-live');
}

// ------------------------------------------------------------------ the run

async function main() {
  browser = await step('launch chromium', () => chromium.launch({ executablePath: opts.chromium, headless: true }));
  page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') summary.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => summary.consoleErrors.push(String(e)));
  if (opts.scenario === 'tasks') await tasks();
  else await signin();
}

try {
  await main();
  await browser.close();
  process.stdout.write(JSON.stringify(summary) + '\n');
} catch (e) {
  let context = '';
  if (page) {
    try {
      await page.screenshot({ path: join(opts.shots, 'failure.png'), fullPage: true });
      context = `\n--- screenshot: ${join(opts.shots, 'failure.png')}\n--- page text:\n${await page.locator('body').innerText()}`;
    } catch {
      // The page is gone: the message alone.
    }
  }
  await browser?.close().catch(() => {});
  log(`so far: ${JSON.stringify(summary)}`);
  fail(`${current}: ${e.message}${context}`);
}
