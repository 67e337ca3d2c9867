// Shared bits of the Node peer scripts: where the pinned SDK lives, JSON-lines output, errors.
//
// The npm packages are installed by setup.sh outside the source tree, in
// $TASKWIRE_PEERS_NODE, else $TARGET/peers/node, else <repo>/target/peers/node. The scripts load the
// SDK's CommonJS build from there with createRequire, so they run from tests/peers unchanged.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join, resolve, basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const NODE_DIR = resolve(
  process.env.TASKWIRE_PEERS_NODE ||
    (process.env.TARGET ? join(process.env.TARGET, 'peers', 'node') : join(here, '..', '..', 'target', 'peers', 'node'))
);

const script = basename(process.argv[1] || 'peer');

export function fail(message, code = 1) {
  process.stderr.write(`${script}: ${message}\n`);
  process.exit(code);
}

if (!existsSync(join(NODE_DIR, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'))) {
  fail(`no @modelcontextprotocol/sdk under ${NODE_DIR}; run tests/peers/setup.sh (or set TASKWIRE_PEERS_NODE)`, 2);
}

const req = createRequire(join(NODE_DIR, 'package.json'));

/** Loads a module of the pinned TypeScript SDK, e.g. sdk('client/index.js'). */
export function sdk(subpath) {
  return req(`@modelcontextprotocol/sdk/${subpath}`);
}

/** Loads another package of the pinned npm folder, e.g. dep('zod') (the SDK's schema library). */
export function dep(name) {
  return req(name);
}

/** Imports an ES-module-only package of the pinned npm folder, e.g. importDep('oidc-provider'). */
export async function importDep(name) {
  return import(pathToFileURL(req.resolve(name)).href);
}

/** Prints one JSON line on stdout. */
export function emit(event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ...fields }) + '\n');
}

/** Log line on stderr (stdout is reserved for JSON lines or, in a server, for the protocol). */
export function log(message) {
  process.stderr.write(`${script}: ${message}\n`);
}

/** The JSON-RPC error code of an exception from the SDK (McpError.code), or null. */
export function errorCode(err) {
  return typeof err?.code === 'number' ? err.code : null;
}

/** The SDK prefixes McpError messages with "MCP error <code>: "; report the peer's own text. */
export function errorMessage(err) {
  const m = String(err?.message ?? err);
  return m.replace(/^MCP error -?\d+: /, '');
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
