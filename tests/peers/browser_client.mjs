#!/usr/bin/env node
// A web page of another origin as the MCP client of a Streamable HTTP server: the TypeScript SDK
// 1.32.2's browser client (browser_client_page.js) runs in headless Chromium (playwright-core with
// the system `chromium`), so every request is the browser's own fetch under CORS. Prints one JSON
// object on stdout: what the page saw, the page's console errors and its failed requests.
//
//   node browser_client.mjs --server URL [--page-port N] [--tool NAME] [--chromium PATH]
//                           [--timeout-ms N]
//
//   --server URL      the MCP endpoint, e.g. http://127.0.0.1:3000/mcp (`task-server --http ADDR
//                     --cors-origin http://127.0.0.1:PAGE_PORT` lets the page call it)
//   --page-port N     the port of the page's own server on 127.0.0.1 (default 0: any free one);
//                     the page's origin is http://127.0.0.1:N
//   --tool NAME       the tool run as a task (default long_running_task)
//   --chromium PATH   the browser (default $CHROMIUM, else /usr/bin/chromium)
//   --timeout-ms N    how long the page may take in all (default 60000)
//
// The page is a real web app's build: browser_client_page.js bundled by vite (already in the
// pinned npm folder, a dependency of the Inspector 2.12.0; no package of its own) into one ES
// module. Bundled because the SDK's client cannot be loaded as it is installed: its import graph
// reaches CommonJS packages (ajv and ajv-formats through validation/ajv-provider.js, content-type
// through shared/mediaType.js) that a browser's module loader cannot import, and bare specifiers
// (zod, eventsource-parser, pkce-challenge) an import map would have to list file by file.
// The script serves the build (index.html and its modules) from a small HTTP server of its own at
// http://127.0.0.1:PAGE_PORT, a different origin from the MCP server's, opens it and calls
// `window.taskwire.runTask(SERVER, TOOL)` in the page.
//
// Exit 0 with the summary whenever the page ran (`error` says which step failed, e.g. a request
// the browser blocked); exit 1 with `browser_client.mjs: <step>: <why>` on stderr when the build,
// the page's server or the browser fails; exit 2 on bad arguments.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_DIR, dep, fail, importDep } from './peerlib.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// ------------------------------------------------------------------ arguments

/** The options from the command line (see the header); exits 2 on a bad one. */
function parseArgs(argv) {
  const opts = {
    pagePort: 0,
    tool: 'long_running_task',
    chromium: process.env.CHROMIUM || '/usr/bin/chromium',
    timeoutMs: 60000,
  };
  const names = {
    '--server': 'server',
    '--page-port': 'pagePort',
    '--tool': 'tool',
    '--chromium': 'chromium',
    '--timeout-ms': 'timeoutMs',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || argv[i + 1] === undefined) fail(`bad argument ${argv[i]} (see the header of this script)`, 2);
    opts[key] = ['pagePort', 'timeoutMs'].includes(key) ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!opts.server) fail('--server is required', 2);
  if (!(opts.timeoutMs > 0)) fail('--timeout-ms takes a positive number', 2);
  if (!Number.isInteger(opts.pagePort) || opts.pagePort < 0) fail('--page-port takes a port number', 2);
  return opts;
}

const opts = parseArgs(process.argv.slice(2));

/** Runs `body`; on failure exits 1 naming `what`. */
async function step(what, body) {
  try {
    return await body();
  } catch (e) {
    fail(`${what}: ${e?.stack ?? e}`);
  }
}

// ------------------------------------------------------------------ the page's build

/** The page's modules, bundled by vite as a web app's build would be: file name -> code. */
async function bundle() {
  const vite = await importDep('vite');
  const scratch = mkdtempSync(join(tmpdir(), 'taskwire-browser-client-'));
  try {
    const built = await vite.build({
      configFile: false,
      envDir: false,
      logLevel: 'warn',
      root: scratch,
      cacheDir: join(scratch, 'cache'),
      publicDir: false,
      resolve: {
        // The page imports the SDK by name; its ES module build is in the pinned npm folder.
        alias: {
          '@modelcontextprotocol/sdk': join(NODE_DIR, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm'),
        },
      },
      build: {
        write: false,
        minify: false,
        target: 'es2022',
        rollupOptions: {
          input: join(here, 'browser_client_page.js'),
          output: { entryFileNames: 'app.js', chunkFileNames: '[name]-[hash].js' },
        },
      },
    });
    const outputs = (Array.isArray(built) ? built : [built]).flatMap((b) => b.output);
    return new Map(outputs.filter((o) => o.type === 'chunk').map((o) => [`/${o.fileName}`, o.code]));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const INDEX = `<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title>
<script type="module" src="/app.js"></script></head>
<body>taskwire: an MCP client in a web page</body></html>
`;

/** Serves the page and its modules at http://127.0.0.1:PORT; resolves to the server. */
function servePage(modules, port) {
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://page').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(INDEX);
    } else if (path === '/favicon.ico') {
      res.writeHead(204).end();
    } else if (modules.has(path)) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(modules.get(path));
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// ------------------------------------------------------------------ the run

const { chromium } = await step('load playwright-core', () => dep('playwright-core'));
const modules = await step('bundle the page with vite', bundle);
const pageServer = await step('serve the page', () => servePage(modules, opts.pagePort));
const pageOrigin = `http://127.0.0.1:${pageServer.address().port}`;
const browser = await step('launch chromium', () =>
  chromium.launch({ executablePath: opts.chromium, headless: true })
);
const consoleErrors = [];
const failedRequests = [];
let summary;
try {
  const page = await browser.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('requestfailed', (r) =>
    failedRequests.push({ method: r.method(), url: r.url(), failure: r.failure()?.errorText ?? null })
  );
  await step('open the page', async () => {
    await page.goto(`${pageOrigin}/`, { timeout: opts.timeoutMs });
    await page.waitForFunction(() => document.title === 'ready', null, { timeout: opts.timeoutMs });
  });
  summary = await step('run the client in the page', () =>
    Promise.race([
      page.evaluate(([server, tool]) => window.taskwire.runTask(server, tool), [opts.server, opts.tool]),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no summary within ${opts.timeoutMs} ms`)), opts.timeoutMs).unref()
      ),
    ])
  );
} finally {
  await browser.close();
  pageServer.close();
}
process.stdout.write(JSON.stringify({ ...summary, consoleErrors, failedRequests }) + '\n');
