#!/usr/bin/env node
// Drives the MCP Inspector 2.12 web UI in headless Chromium (playwright-core with the system
// `chromium`) against an MCP server over Streamable HTTP, the way a person would click through it,
// and prints what the page showed as one JSON object on stdout.
//
//   node inspector_web.mjs --inspector URL --token TOKEN --server URL --shots DIR
//                          [--oauth-login NAME] [--chromium PATH] [--timeout-ms N]
//
//   --inspector URL   the Inspector's web UI (`inspector --web`), e.g. http://127.0.0.1:6274
//   --token TOKEN     its API token (MCP_INSPECTOR_API_TOKEN); the deep link needs it twice
//   --server URL      the MCP endpoint, e.g. http://127.0.0.1:3000/mcp (a server with
//                     long_running_task, taskSupport "optional", and long_running_task_required,
//                     "required": `task-server --http ADDR --required-tool`)
//   --shots DIR       where the screenshots go (created)
//   --oauth-login NAME  the server wants OAuth: sign in as NAME on the authorization server's
//                     pages (oidc-provider's development login, any password; then its consent)
//   --chromium PATH   the browser (default $CHROMIUM, else /usr/bin/chromium)
//   --timeout-ms N    how long each UI state may take to appear (default 60000)
//
// The flow: open the deep link `/?MCP_INSPECTOR_API_TOKEN=T&serverUrl=URL&transport=http&
// autoConnect=T` (the Inspector adds a server "deep-link" and connects to it); wait for
// "Connected"; open Tools and read the list; select long_running_task_required, read its
// description and its "Run as task" switch, execute it and watch its card in the Tasks panel
// until it shows completed, reading each status message it shows and the result text; then
// select long_running_task, switch "Run as task" on, execute it, and once its card shows its
// first status message press the card's "Cancel Task"; wait for the card to show cancelled; open
// the Protocol panel and read the tasks/cancel response the server sent.
//
// With --oauth-login the server first answers 401, and the Inspector signs in by itself: it
// reads the Protected Resource Metadata and the authorization server's metadata, registers a
// client (DCR) and sends the page to the authorization endpoint. The script signs in there and
// continues on the consent page; the authorization server redirects to the Inspector's
// `/oauth/callback`, which trades the code for a token and connects. Then, before the tools,
// it reads the OAuth details of the Connection Info dialog (and the access token's claims) and
// the Network panel's requests, oldest first.
//
// In 2.12 the browser never talks to the MCP server itself: the page's SDK client sends every
// message to the Inspector's own backend (`/api/mcp/*` on the UI's port), which holds the
// Streamable HTTP transport (Node's fetch, no Origin header) to the server.
//
// Exit 0 with the summary; exit 1 with `inspector_web.mjs: <step>: <why>` on stderr (and the
// page's text, and DIR/failure.png) when a step fails; exit 2 on bad arguments.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { dep, fail, log } from './peerlib.mjs';

const REQUIRED_TOOL = 'long_running_task_required';
const OPTIONAL_TOOL = 'long_running_task';

// ------------------------------------------------------------------ arguments

/** The options from the command line (see the header); exits 2 on a bad one. */
function parseArgs(argv) {
  const opts = {
    chromium: process.env.CHROMIUM || '/usr/bin/chromium',
    timeoutMs: 60000,
  };
  const names = {
    '--inspector': 'inspector',
    '--token': 'token',
    '--server': 'server',
    '--shots': 'shots',
    '--oauth-login': 'oauthLogin',
    '--chromium': 'chromium',
    '--timeout-ms': 'timeoutMs',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || argv[i + 1] === undefined) fail(`bad argument ${argv[i]} (see the header of this script)`, 2);
    opts[key] = key === 'timeoutMs' ? Number(argv[i + 1]) : argv[i + 1];
  }
  for (const key of ['inspector', 'token', 'server', 'shots']) {
    if (!opts[key]) fail(`--${key} is required`, 2);
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
 * Every task card of the Tasks panel (a card holding "Task Details"): its task id, its status
 * badge (lowercase), the status message line it shows (null when none) and whether it offers
 * "Cancel Task". Runs in the page.
 */
function readTaskCards() {
  const cards = [...document.querySelectorAll('.mantine-Card-root')].filter((card) =>
    [...card.querySelectorAll('p')].some((p) => p.textContent.trim() === 'Task Details'),
  );
  return cards.map((card) => {
    // The card's own lines: "ID: …", then (when the task has one) its status message.
    const lines = [...card.querySelectorAll(':scope > .mantine-Stack-root > p')].map((p) =>
      p.textContent.trim(),
    );
    const idLine = lines.find((l) => l.startsWith('ID: '));
    return {
      id: idLine ? idLine.slice(4) : null,
      status: card.querySelector('.mantine-Badge-label')?.textContent.trim().toLowerCase() ?? null,
      message: lines.find((l) => !l.startsWith('ID: ')) ?? null,
      cancellable: [...card.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Cancel Task'),
    };
  });
}

/** The titles of the notifications (toasts) the page shows now. Runs in the page. */
function readToasts() {
  return [...document.querySelectorAll('.mantine-Notification-title')].map((t) => t.textContent.trim());
}

/**
 * The Network panel's requests as it lists them (newest first): method, URL, status code and
 * the kinds it tags them with (transport, auth, discovery, token). Runs in the page.
 */
function readNetwork() {
  // Each request is a stack holding its badges (method, kinds, "SSE" for a stream, status)
  // and its URL.
  const statuses = document.querySelectorAll('.mantine-Badge-root[data-variant="status"]');
  const rows = new Set([...statuses].map((badge) => badge.closest('.mantine-Stack-root')));
  return [...rows].map((row) => {
    const [method, ...badges] = [...row.querySelectorAll('.mantine-Badge-label')].map((b) => b.textContent.trim());
    const status = badges.find((b) => /^\d{3}\b/.test(b));
    return {
      method,
      url: row.querySelector('p[data-variant="nowrap"]')?.textContent.trim() ?? null,
      status: status ? Number(status.slice(0, 3)) : null,
      kinds: badges.filter((b) => b !== status).map((b) => b.toLowerCase()),
    };
  });
}

// What the page showed, printed at the end; the page and browser; the step under way.
const summary = { screenshots: [] };
let page;
let browser;
let current = 'start';

/** Saves a full-page screenshot as DIR/NAME.png and lists it in the summary. */
async function shot(name) {
  const path = join(opts.shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  summary.screenshots.push(path);
}

/** Runs one named step; its name heads the failure message. */
async function step(name, body) {
  current = name;
  return body();
}

/**
 * Watches the task cards until `done(card)` holds for the card `pick(cards)` chooses, and
 * returns that card with the status messages it showed meanwhile (in order, each once).
 */
async function watchCard(pick, done, what) {
  const deadline = Date.now() + opts.timeoutMs;
  const messages = [];
  let card;
  for (;;) {
    card = pick(await page.evaluate(readTaskCards));
    if (card?.message && messages[messages.length - 1] !== card.message) messages.push(card.message);
    if (card && done(card)) return { ...card, messages };
    if (Date.now() > deadline) {
      throw new Error(
        `${what} within ${opts.timeoutMs} ms; the card showed ${JSON.stringify(card ?? null)} ` +
          `(messages seen: ${JSON.stringify(messages)})`,
      );
    }
    await page.waitForTimeout(100);
  }
}

/** Shows the side panel `name` (Tasks, Protocol, Network). */
function sidePanel(name) {
  return page.locator('label.mantine-SegmentedControl-label', { hasText: new RegExp(`^${name}$`) }).click();
}

/** The tool panel (the card titled with the tool's name; tool names here are plain words). */
function toolPanel(tool) {
  return page
    .locator('.mantine-Card-root[data-variant="preview"]')
    .filter({ has: page.locator('p[data-size="lg"]', { hasText: new RegExp(`^${tool}$`) }) });
}

/** Selects `tool` in the Tools list; returns its description and its "Run as task" switch. */
async function selectTool(tool) {
  await page.getByRole('button', { name: tool, exact: true }).click();
  const panel = toolPanel(tool);
  const toggle = panel.getByRole('button', { name: 'Hide description' });
  await toggle.waitFor();
  const described = await toggle.getAttribute('aria-controls');
  const description = (await panel.locator(`[id="${described}"]`).innerText()).trim();
  const runAsTask = panel.getByRole('switch', { name: 'Run as task' });
  return {
    tool,
    description,
    runAsTask: { checked: await runAsTask.isChecked(), disabled: await runAsTask.isDisabled() },
  };
}

// ------------------------------------------------------------------ OAuth

/** The main frame's navigations so far (their URLs), from the deep link on. */
const navigations = [];

/**
 * Signs in on the authorization server's pages once the Inspector sends the page there, and
 * returns when the page is back on the Inspector. Records the authorization request and the
 * callback's URL (with the names, not the values, of its query).
 */
async function signIn() {
  const inspector = new URL(opts.inspector).origin;
  // 'commit': the AS's pages import a web font, which a machine offline may wait for.
  await page.waitForURL((url) => url.origin !== inspector, { waitUntil: 'commit' });
  const login = page.locator('input[name="login"]');
  await login.fill(opts.oauthLogin);
  // The development login takes any password.
  await page.locator('input[name="password"]').fill('any');
  await shot('login');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.getByRole('button', { name: 'Continue' });
  await consent.waitFor();
  await shot('consent');
  await consent.click();
  await page.waitForURL((url) => url.origin === inspector, { waitUntil: 'commit' });

  const away = navigations.findIndex((u) => new URL(u).origin !== inspector);
  const authorize = new URL(navigations[away]);
  const back = new URL(navigations.slice(away).find((u) => new URL(u).origin === inspector));
  summary.oauth = {
    login: opts.oauthLogin,
    authorize: { endpoint: authorize.origin + authorize.pathname, ...Object.fromEntries(authorize.searchParams) },
    callback: { url: back.origin + back.pathname, params: [...back.searchParams.keys()] },
  };
}

/**
 * Reads the Connection Info dialog's OAuth details (each label's value on the line after it)
 * and the claims of the access token it shows.
 */
async function readOAuthDetails() {
  await page.getByRole('button', { name: 'Connection Info' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('OAuth Details', { exact: true }).waitFor();
  await dialog.getByText('Access Token', { exact: true }).scrollIntoViewIfNeeded();
  await shot('connection-info');
  const lines = (await dialog.innerText()).split('\n').map((l) => l.trim()).filter(Boolean);
  const details = lines.slice(lines.indexOf('OAuth Details'));
  const after = (label) => {
    const at = details.indexOf(label);
    return at < 0 ? null : details[at + 1];
  };
  const token = details.find((l) => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(l));
  summary.oauth.details = {
    status: after('Status'),
    registration: after('Client registration'),
    scopes: after('Scopes'),
    clientId: after('Client ID'),
  };
  summary.oauth.claims = token ? JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) : null;
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
}

/** Reads the Network panel's requests, oldest first, then shows the Tasks panel again. */
async function readNetworkPanel() {
  await sidePanel('Network');
  await page.locator('.mantine-Badge-root[data-variant="status"]').first().waitFor();
  await shot('network');
  summary.oauth.network = (await page.evaluate(readNetwork)).reverse();
  await sidePanel('Tasks');
}

// ------------------------------------------------------------------ the flow

async function main() {
  browser = await step('launch chromium', () =>
    chromium.launch({ executablePath: opts.chromium, headless: true }),
  );
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(opts.timeoutMs);
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigations.push(request.url());
  });

  await step('open the deep link', () => {
    const link = new URL(opts.inspector);
    link.search = new URLSearchParams({
      MCP_INSPECTOR_API_TOKEN: opts.token,
      serverUrl: opts.server,
      transport: 'http',
      autoConnect: opts.token,
    }).toString();
    return page.goto(link.href);
  });
  if (opts.oauthLogin) await step('sign in at the authorization server', signIn);

  await step('connect', async () => {
    // The server's card: the innermost card or paper that holds its URL (and its state).
    const card = page.locator('.mantine-Card-root, .mantine-Paper-root').filter({ hasText: opts.server }).last();
    await card.getByText('Connected', { exact: true }).waitFor();
    const text = await card.innerText();
    summary.connection = {
      server: 'deep-link',
      url: opts.server,
      status: 'Connected',
      transport: /Streamable HTTP/.test(text) ? 'Streamable HTTP' : null,
      protocol: text.match(/MCP (\d{4}-\d{2}-\d{2})/)?.[1] ?? null,
    };
    summary.inspectorVersion = (await page.getByText(/^v\d+\.\d+\.\d+$/).first().innerText()).slice(1);
    await shot('connected');
  });

  if (opts.oauthLogin) {
    await step('read the OAuth details', readOAuthDetails);
    await step('read the Network panel', readNetworkPanel);
  }

  await step('list tools', async () => {
    await page.locator('label.mantine-SegmentedControl-label', { hasText: /^Tools$/ }).click();
    const items = page.locator('button.list-item');
    await items.first().waitFor();
    await page.getByRole('button', { name: REQUIRED_TOOL, exact: true }).waitFor();
    summary.tools = (await items.allInnerTexts()).map((t) => t.trim());
  });

  const first = await step(`run ${REQUIRED_TOOL} as a task`, async () => {
    summary.required = await selectTool(REQUIRED_TOOL);
    await shot('required-tool');
    // Behind `taskwire proxy` the tool is listed optional (a plain call of it runs as a task
    // behind): switch "Run as task" on, as the Inspector does by itself for a required tool.
    const { checked, disabled } = summary.required.runAsTask;
    if (!checked && !disabled) {
      await toolPanel(REQUIRED_TOOL).getByRole('switch', { name: 'Run as task' }).check();
    }
    await toolPanel(REQUIRED_TOOL).getByRole('button', { name: 'Execute Tool' }).click();
    return watchCard((cards) => cards[0], (c) => c.status !== 'working' && c.status !== 'input_required', 'the task did not end');
  });

  await step(`see ${REQUIRED_TOOL} completed`, async () => {
    const result = page.locator('xpath=//h3[normalize-space()="Results"]/ancestor::div[.//pre][1]//pre').first();
    await result.waitFor();
    summary.completed = {
      taskId: first.id,
      status: first.status,
      message: first.message,
      messages: first.messages,
      result: (await result.innerText()).trim(),
    };
    await shot('completed');
    if (first.status !== 'completed') throw new Error(`the task ended ${first.status}, not completed`);
  });

  const second = await step(`start ${OPTIONAL_TOOL} as a task`, async () => {
    summary.optional = await selectTool(OPTIONAL_TOOL);
    const panel = toolPanel(OPTIONAL_TOOL);
    await panel.getByRole('switch', { name: 'Run as task' }).check();
    await panel.getByRole('button', { name: 'Execute Tool' }).click();
    // Working, with its first status message shown: the work is under way.
    return watchCard(
      (cards) => cards.find((c) => c.id && c.id !== first.id),
      (c) => c.status === 'working' && c.message !== null && c.cancellable,
      'the second task did not show working with a status message',
    );
  });

  await step(`cancel ${OPTIONAL_TOOL}`, async () => {
    await shot('working');
    const card = page.locator('.mantine-Card-root').filter({ hasText: `ID: ${second.id}` });
    await card.getByRole('button', { name: 'Cancel Task' }).click();
    const cancelled = await watchCard(
      (cards) => cards.find((c) => c.id === second.id),
      (c) => c.status !== 'working',
      'the second task did not leave working after Cancel Task',
    );
    summary.cancelled = {
      taskId: second.id,
      status: cancelled.status,
      message: cancelled.message,
      messages: [...second.messages, ...cancelled.messages.filter((m) => !second.messages.includes(m))],
      toasts: await page.evaluate(readToasts),
    };
    await shot('cancelled');
    if (cancelled.status !== 'cancelled') throw new Error(`the task ended ${cancelled.status}, not cancelled`);
  });

  await step('read the tasks/cancel response in the Protocol panel', async () => {
    await page.getByText('Protocol', { exact: true }).click();
    // Each message is a card headed by its method's badge.
    const entry = page
      .locator('.mantine-Card-root')
      .filter({ has: page.locator('.mantine-Badge-label', { hasText: /^tasks\/cancel$/ }) })
      .first();
    await entry.getByRole('button', { name: 'Expand' }).click();
    const response = entry.getByText('Response:');
    await response.waitFor();
    await response.scrollIntoViewIfNeeded();
    const text = await entry.innerText();
    const answer = text.slice(text.indexOf('Response:'));
    summary.cancelled.response = {
      status: answer.match(/"status":\s*"([^"]*)"/)?.[1] ?? null,
      statusMessage: answer.match(/"statusMessage":\s*"([^"]*)"/)?.[1] ?? null,
    };
    await shot('protocol-cancel');
  });
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
