#!/usr/bin/env node
// Runs tasks through @modelcontextprotocol/ext-tasks 0.2.2, the official requester of both task
// eras (what MCP Inspector 2.12 is built on), on the TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.3.1): a Streamable HTTP endpoint (--url) or a stdio server it
// starts. One JSON object per line on stdout; reasons on stderr.
//
//   node ext_tasks_client.mjs MODE --era ERA [--tool NAME] [--until STATUS] [--ref JSON]
//                             [--endpoint NAME] {--url URL | [--] SERVER_CMD [ARGS...]}
//
// A serialized reference is scoped to its endpoint id (`createTaskSessionEndpointId`), made from
// NAME, else from the URL or the server command: give the same NAME to `start` and `resume`
// when the command differs between them (e.g. the second runs through tap.py).
//
// ERA      2025-11-25: the SDK's legacy connect (`initialize`), tasks of the 2025-11-25 generation
//          ("v1": `params.task`, `tasks/get`, `tasks/result`, `tasks/cancel`);
//          2026-07-28: `versionNegotiation: {mode: {pin}}` (`server/discover`), tasks of the
//          extension ("v2": `tools/call` answered with a task, `tasks/get` with the outcome
//          inline). ext-tasks sends v2 `tools/call` and `tasks/*` through the host's raw
//          dispatch: here, straight onto the SDK transport (which sets `Mcp-Method`/`Mcp-Name`
//          from the body), its answers taken off the transport before the SDK sees them.
// MODES
//   run      callTool(TOOL) with task preference "require" to its outcome (each task view as
//            it changes), then a second call cancelled (`execution.cancel()`) once it is working.
//   start    callTool(TOOL) as a task, then `execution.handoff()`: prints the serialized
//            reference and exits without settling (the task goes on at the server). With
//            --until STATUS it first polls `session.task(id).snapshot()` until the task has
//            that status (for a stdio server, whose running work ends with this process).
//   resume   --ref JSON (a reference printed by `start`): `session.resumeTask(reference)` in this
//            new process, to its outcome.
//
// OUTPUT
//   {"event":"connected","protocolVersion":"2026-07-28","era":"modern","server":{...},"generation":"v2"}
//   {"event":"created","kind":"task","taskId":"…"}
//   {"event":"task","taskId":"…","status":"working","message":"开始执行..."}     (each task view seen)
//   {"event":"result","text":"任务完成！","isError":false}
//   {"event":"cancelled","taskId":"…"}                                        (run: the cancelled outcome)
//   {"event":"reference","reference":{"endpointId":"…","generation":"v2","taskId":"…","originalOperation":"tools/call"}}
//   {"event":"error","message":"…","code":-32602}                             (then exit 1)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE_DIR, emit, fail, log } from './peerlib.mjs';

/** The ESM entry `subpath` of an npm package in the pinned folder (ext-tasks is ESM only). */
async function esm(name, subpath = '.') {
  const dir = join(NODE_DIR, 'node_modules', name);
  const exported = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).exports[subpath];
  const entry = typeof exported.import === 'string' ? exported.import : exported.import.default;
  return import(pathToFileURL(join(dir, entry)).href);
}

const { Client, StreamableHTTPClientTransport } = await esm('@modelcontextprotocol/client');
const { StdioClientTransport } = await esm('@modelcontextprotocol/client', './stdio');
const ext = await esm('@modelcontextprotocol/ext-tasks', './client');

const argv = process.argv.slice(2);
const mode = argv.shift();
const opts = { tool: 'long_running_task', era: null, url: null, ref: null, until: null, endpoint: null, timeout: 60000 };
let server = [];
while (argv.length) {
  const a = argv.shift();
  if (a === '--tool') opts.tool = argv.shift();
  else if (a === '--era') opts.era = argv.shift();
  else if (a === '--url') opts.url = argv.shift();
  else if (a === '--ref') opts.ref = JSON.parse(argv.shift());
  else if (a === '--until') opts.until = argv.shift();
  else if (a === '--endpoint') opts.endpoint = argv.shift();
  else if (a === '--timeout') opts.timeout = Number(argv.shift());
  else if (a === '--') { server = argv.splice(0); }
  else { server = [a, ...argv.splice(0)]; }
}
if (!['run', 'start', 'resume'].includes(mode)) fail(`unknown mode ${mode} (run|start|resume)`, 2);
if (!['2025-11-25', '2026-07-28'].includes(opts.era)) fail('--era 2025-11-25|2026-07-28 is required', 2);
if (!opts.url && server.length === 0) fail('give --url URL or a server command', 2);
if (mode === 'resume' && !opts.ref) fail('resume needs --ref JSON', 2);
setTimeout(() => fail(`timed out after ${opts.timeout} ms`), opts.timeout).unref();

const clientInfo = { name: 'taskwire-ext-tasks-peer', version: '0.2.2' };
const capabilities = {};
const client = new Client(clientInfo, {
  capabilities,
  versionNegotiation: { mode: opts.era === '2025-11-25' ? 'legacy' : { pin: opts.era } },
});
const transport = opts.url
  ? new StreamableHTTPClientTransport(new URL(opts.url))
  : new StdioClientTransport({ command: server[0], args: server.slice(1), env: process.env, stderr: 'inherit' });

/**
 * The raw request path ext-tasks needs for v2 task traffic (the SDK's codecs reject its shapes):
 * each request goes out on the SDK's transport under an id of its own, and its answer is taken off
 * the transport before the SDK's Protocol sees it.
 */
function rawDispatch(transport) {
  const pending = new Map();
  let next = 0;
  const sdkOnMessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const waiting = typeof message?.id === 'string' && !('method' in message) && pending.get(message.id);
    if (waiting) {
      pending.delete(message.id);
      waiting(message);
    } else {
      sdkOnMessage?.call(transport, message, extra);
    }
  };
  return async (request, options = {}) => {
    const id = `ext-tasks-${(next += 1)}`;
    const answered = new Promise((resolve) => pending.set(id, resolve));
    const headers = options.context?.headers;
    await transport.send({ jsonrpc: '2.0', id, ...request }, headers ? { headers } : undefined);
    const answer = await answered;
    return 'error' in answer ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result };
  };
}

function taskLine(view) {
  emit('task', { taskId: view.taskId, status: view.status, message: view.statusMessage ?? null });
}

function resultLine(result) {
  const text = (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  emit('result', { text, isError: result?.isError === true });
}

/** Settles `execution`, printing each task view and the outcome; returns the outcome. */
async function settle(execution) {
  const { outcome } = await execution.settle({
    onEvent: (event) => {
      if (event.type === 'task') taskLine(event.task);
    },
  });
  if (outcome.status === 'completed') resultLine(outcome.result);
  else if (outcome.status === 'cancelled') emit('cancelled', { taskId: execution.handle?.taskId ?? null });
  else emit('failed', { message: outcome.error.message, code: outcome.error.code ?? null });
  return outcome;
}

async function callAsTask(session) {
  const execution = await session.callTool(opts.tool, {}, { task: { preference: 'require' } });
  emit('created', { kind: execution.kind, taskId: execution.handle?.taskId ?? null });
  if (execution.kind !== 'task') throw new Error(`${opts.tool} was not run as a task`);
  return execution;
}

let exitCode = 0;
try {
  await client.connect(transport);
  const endpointId = await ext.createTaskSessionEndpointId('taskwire-interop', opts.endpoint ?? opts.url ?? server);
  const protocolVersion = client.getNegotiatedProtocolVersion();
  const session = ext.createTaskSessionFromClient(client, {
    endpointId,
    ...(client.getProtocolEra() === 'modern'
      ? { rawDispatch: rawDispatch(transport), v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities: capabilities } }
      : {}),
    onError: (error) => log(`ext-tasks: ${error.message}`),
  });
  emit('connected', {
    protocolVersion,
    era: client.getProtocolEra(),
    server: client.getServerVersion() ?? null,
    generation: session.capabilities.execution ? (client.getProtocolEra() === 'modern' ? 'v2' : 'v1') : 'none',
  });

  if (mode === 'run') {
    const done = await settle(await callAsTask(session));
    if (done.status !== 'completed') exitCode = 1;
    const doomed = await callAsTask(session);
    const updates = doomed.updates()[Symbol.asyncIterator]();
    const first = await updates.next();
    if (!first.done && first.value.type === 'task') taskLine(first.value.task);
    await doomed.cancel();
    const outcome = await doomed.result();
    if (outcome.status === 'cancelled') emit('cancelled', { taskId: doomed.handle.taskId });
    else {
      emit('error', { message: `the cancelled task ended ${outcome.status}` });
      exitCode = 1;
    }
  } else if (mode === 'start') {
    const execution = await callAsTask(session);
    if (opts.until) {
      const controller = session.task(execution.handle.taskId);
      for (;;) {
        const view = await controller.snapshot();
        taskLine(view);
        if (view.status === opts.until) break;
        await new Promise((r) => setTimeout(r, view.suggestedPollIntervalMs ?? 100));
      }
    }
    await execution.handoff((reference) => emit('reference', { reference }));
  } else {
    const execution = await session.resumeTask(opts.ref);
    emit('created', { kind: execution.kind, taskId: execution.handle?.taskId ?? null });
    const done = await settle(execution);
    if (done.status !== 'completed') exitCode = 1;
  }
} catch (error) {
  const code = typeof error?.code === 'number' ? error.code : null;
  emit('error', { message: String(error?.message ?? error), code });
  log(error?.stack ?? String(error));
  exitCode = 1;
}
// A process that goes away, as a restarted client does: no session close, no cancel.
process.exit(exitCode);
