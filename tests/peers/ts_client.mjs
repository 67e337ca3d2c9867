#!/usr/bin/env node
// Drives an MCP server with @modelcontextprotocol/sdk 1.32.2 (Client) and its experimental 2025-11-25 tasks
// API (client.experimental.tasks.*): a stdio server it starts (StdioClientTransport), or a Streamable HTTP
// endpoint (StreamableHTTPClientTransport, --url). One JSON object per line on stdout.
//
//   node ts_client.mjs MODE [OPTIONS] [--] SERVER_CMD [ARGS...]     (stdio: starts the server)
//   node ts_client.mjs MODE [OPTIONS] --url URL                       (Streamable HTTP, e.g. http://127.0.0.1:3000/mcp)
//
// Over HTTP every mode runs the same way; the session the server opens is reported ("session"), the
// server's GET stream is opened by the SDK after notifications/initialized (what arrives on it is reported
// like any other server message), and the session is ended with DELETE before exiting ("terminated").
//
// MODES
//   task               tools/list, then callToolStream(TOOL, ARGS, {task:{ttl}}): a task-augmented call,
//                      polled with tasks/get, result from tasks/result (also on input_required). When the
//                      task ends "failed" the SDK stops; this script then calls tasks/result itself.
//   auto               tools/list, then callToolStream(TOOL, ARGS) with no task option: the SDK makes it a
//                      task only if the server declared tasks.requests.tools.call AND tools/list gave TOOL
//                      execution.taskSupport "optional" or "required"; otherwise it is a plain tools/call.
//   plain              tools/list, then a plain tools/call (no task), sent with client.request so that it
//                      reaches the server even for a taskSupport "required" tool (client.callTool would
//                      refuse that locally with -32600 and send nothing).
//   list               start --start N tasks of TOOL (default 1), then tasks/list, following nextCursor.
//   cancel             task call of TOOL; after the first tasks/get status, tasks/cancel; then the final
//                      tasks/get, and a second tasks/cancel (expected -32602: already terminal).
//   get-unknown        tasks/get, tasks/result and tasks/cancel on a task id that does not exist.
//   input-required     = task --tool simulate-research-query --args '{"topic":"python","ambiguous":true}'
//                      (server-everything: input_required + elicitation/create delivered via tasks/result).
//   sampling-async     plain call of trigger-sampling-request-async {"prompt":"taskwire","maxTokens":16}
//                      (server-everything sends a task-augmented sampling/createMessage to us, then polls
//                      our tasks/get and reads our tasks/result).
//   elicitation-async  plain call of trigger-elicitation-request-async {} (same, with elicitation/create).
//
// OPTIONS
//   --tool NAME        tool to call (default long_running_task)
//   --args JSON        tool arguments (default {})
//   --ttl MS|none      requested task ttl (default 60000); "none" sends "task":{}
//   --start N          list mode: tasks to start first (default 1)
//   --elicit ACTION    accept|decline|cancel: how elicitation/create is answered (default accept)
//   --no-caps          declare no client capabilities (no tasks, elicitation, sampling)
//   --timeout MS       give up after MS (default 60000)
//   --url URL          connect to this Streamable HTTP endpoint instead of starting SERVER_CMD
//   --log FILE         append every message, as sent and as received, to FILE in tap.py's format
//                      ({"dir":"c2s"|"s2c","msg":{...}} per line): for HTTP, where tap.py cannot sit
//
// OUTPUT (JSON lines)
//   {"event":"initialized","protocolVersion":"2025-11-25","serverInfo":{...},"capabilities":{...}}
//   {"event":"session","sessionId":"..."|null}                                  (--url: the Mcp-Session-Id)
//   {"event":"tools","names":[...],"taskSupport":{"long_running_task":"optional",...}}
//   {"event":"auto","tool":"...","task":true,"required":false}                 (auto mode)
//   {"event":"task_created","taskId":"...","status":"working","ttl":60000,"pollInterval":1000}
//   {"event":"status","taskId":"...","status":"working","message":"开始执行..."}   (one per tasks/get)
//   {"event":"notification","method":"notifications/tasks/status","taskId":"...","status":"...","message":"..."}
//   {"event":"server_request","method":"elicitation/create","id":0,"task":{"ttl":600000}|null,"relatedTask":"..."|null}
//   {"event":"elicitation","action":"accept","content":{...}}                   (our answer)
//   {"event":"sampling","task":true}                                           (our answer)
//   {"event":"result","text":"任务完成！","isError":false}
//   {"event":"task","taskId":"...","status":"...","message":"..."}            (list mode, one per task)
//   {"event":"page","count":N,"nextCursor":"..."|null}                        (list mode)
//   {"event":"cancel_result","taskId":"...","status":"cancelled","message":"..."}
//   {"event":"final_status","taskId":"...","status":"cancelled","message":"..."}
//   {"event":"error","method":"tasks/get","code":-32602,"message":"..."}       (method: which request failed;
//                      "callToolStream" = the SDK's own -32603 verdict on a failed/cancelled task;
//                      "DELETE" = ending the HTTP session failed)
//   {"event":"terminated","sessionId":"..."}                                    (--url: DELETE answered)
// Exit 0 when the mode's expected outcome was seen; 1 otherwise (reason on stderr); 2 on usage errors.
import { appendFileSync } from 'node:fs';
import { sdk, emit, fail, log, errorCode, errorMessage, sleep } from './peerlib.mjs';

const { Client } = sdk('client/index.js');
const { StdioClientTransport } = sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = sdk('client/streamableHttp.js');
const { InMemoryTaskStore } = sdk('experimental/tasks/index.js');
const types = sdk('types.js');

// ------------------------------------------------------------------ arguments
const MODES = ['task', 'auto', 'plain', 'list', 'cancel', 'get-unknown', 'input-required', 'sampling-async', 'elicitation-async'];
const argv = process.argv.slice(2);
const mode = argv.shift();
if (!MODES.includes(mode)) fail(`usage: ts_client.mjs {${MODES.join('|')}} [OPTIONS] {[--] SERVER_CMD...|--url URL}`, 2);

const opt = { tool: 'long_running_task', args: {}, ttl: 60000, start: 1, elicit: 'accept', caps: true, timeout: 60000, url: null, log: null };
while (argv.length && argv[0].startsWith('--')) {
  const name = argv.shift();
  if (name === '--') break;
  const value = () => (argv.length ? argv.shift() : fail(`${name} needs a value`, 2));
  switch (name) {
    case '--tool': opt.tool = value(); break;
    case '--args': try { opt.args = JSON.parse(value()); } catch (e) { fail(`--args: ${e.message}`, 2); } break;
    case '--ttl': { const v = value(); opt.ttl = v === 'none' ? undefined : Number(v); break; }
    case '--start': opt.start = Number(value()); break;
    case '--elicit': opt.elicit = value(); break;
    case '--no-caps': opt.caps = false; break;
    case '--timeout': opt.timeout = Number(value()); break;
    case '--log': opt.log = value(); break;
    case '--url': try { opt.url = new URL(value()); } catch (e) { fail(`--url: ${e.message}`, 2); } break;
    default: fail(`unknown option ${name}`, 2);
  }
}
if (opt.url && argv.length) fail('give either --url URL or SERVER_CMD, not both', 2);
if (!opt.url && !argv.length) fail('missing SERVER_CMD (or --url URL)', 2);
if (mode === 'input-required' && opt.tool === 'long_running_task') {
  opt.tool = 'simulate-research-query';
  if (!Object.keys(opt.args).length) opt.args = { topic: 'python', ambiguous: true };
}
if (mode === 'sampling-async') {
  opt.tool = 'trigger-sampling-request-async';
  if (!Object.keys(opt.args).length) opt.args = { prompt: 'taskwire', maxTokens: 16 };
}
if (mode === 'elicitation-async') opt.tool = 'trigger-elicitation-request-async';
const taskOption = opt.ttl === undefined ? {} : { ttl: opt.ttl };

setTimeout(() => fail(`timed out after ${opt.timeout} ms`), opt.timeout).unref();

// ------------------------------------------------------------------ client
const RELATED = 'io.modelcontextprotocol/related-task';
const capabilities = opt.caps
  ? {
      sampling: {},
      elicitation: { form: {} },
      tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
    }
  : {};
const client = new Client(
  { name: 'taskwire-ts-peer-client', version: '0.1.0' },
  { capabilities, ...(opt.caps ? { taskStore: new InMemoryTaskStore() } : {}) }
);

// Answer for a form elicitation: the first choice of each oneOf/enum, "taskwire" for strings, true, 1.
function fillForm(schema) {
  const content = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop.oneOf?.length) content[key] = prop.oneOf[0].const;
    else if (prop.enum?.length) content[key] = prop.enum[0];
    else if (prop.type === 'boolean') content[key] = true;
    else if (prop.type === 'number' || prop.type === 'integer') content[key] = 1;
    else content[key] = 'taskwire';
  }
  return content;
}

// Runs a server->client request as a task of ours when params.task is present (client-side task store).
async function maybeAsTask(request, extra, result, viaInputRequired) {
  if (!request.params.task) return result;
  const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval: 500 });
  (async () => {
    if (viaInputRequired) await extra.taskStore.updateTaskStatus(task.taskId, 'input_required', 'waiting for the user');
    await sleep(1500); // so that a peer polling every second sees it non-terminal once
    await extra.taskStore.storeTaskResult(task.taskId, 'completed', result);
  })().catch((e) => log(`client task ${task.taskId}: ${e.message}`));
  return { task };
}

if (opt.caps) {
  client.setRequestHandler(types.ElicitRequestSchema, async (request, extra) => {
    const result = { action: opt.elicit };
    if (opt.elicit === 'accept') result.content = fillForm(request.params.requestedSchema);
    emit('elicitation', { ...result, task: Boolean(request.params.task) });
    return maybeAsTask(request, extra, result, true);
  });
  client.setRequestHandler(types.CreateMessageRequestSchema, async (request, extra) => {
    const result = {
      role: 'assistant',
      content: { type: 'text', text: `taskwire fake completion of ${request.params.messages.length} message(s)` },
      model: 'taskwire-fake-model',
      stopReason: 'endTurn',
    };
    emit('sampling', { task: Boolean(request.params.task) });
    return maybeAsTask(request, extra, result, false);
  });
}

// Report what the server sends us besides responses: its requests and notifications.
let negotiatedVersion = null;
function observe(msg) {
  if (msg?.result?.protocolVersion && msg.result.serverInfo) negotiatedVersion = msg.result.protocolVersion;
  if (msg?.method === undefined) return;
  const related = msg.params?._meta?.[RELATED]?.taskId ?? null;
  if (msg.id !== undefined) {
    emit('server_request', { method: msg.method, id: msg.id, task: msg.params?.task ?? null, relatedTask: related });
  } else if (msg.method === 'notifications/tasks/status') {
    const p = msg.params ?? {};
    emit('notification', { method: msg.method, taskId: p.taskId, status: p.status, message: p.statusMessage ?? '' });
  } else {
    emit('notification', { method: msg.method, relatedTask: related });
  }
}

const transport = opt.url
  ? new StreamableHTTPClientTransport(opt.url)
  : new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: process.env, stderr: 'inherit' });
const record = (dir, msg) => {
  if (opt.log) appendFileSync(opt.log, JSON.stringify({ dir, msg }) + '\n');
};
const start = transport.start.bind(transport);
transport.start = async () => {
  const inner = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    record('s2c', msg);
    observe(msg);
    inner?.(msg, extra);
  };
  return start();
};
const send = transport.send.bind(transport);
transport.send = async (msg, options) => {
  record('c2s', msg);
  return send(msg, options);
};

let exitCode = 1;
const done = (ok, reason) => {
  exitCode = ok ? 0 : 1;
  if (!ok) log(reason);
};
const reportError = (method, err) => emit('error', { method, code: errorCode(err), message: errorMessage(err) });
const resultText = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
const statusFields = (t) => ({ taskId: t.taskId, status: t.status, message: t.statusMessage ?? '' });

async function listTools() {
  const { tools } = await client.listTools();
  const taskSupport = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
  emit('tools', { names: tools.map((t) => t.name), taskSupport });
  return tools;
}

// Consumes a callToolStream; returns 'result', 'error' or the last status seen.
async function consume(stream, onStatus) {
  for await (const m of stream) {
    if (m.type === 'taskCreated') {
      const t = m.task;
      emit('task_created', { taskId: t.taskId, status: t.status, ttl: t.ttl ?? null, pollInterval: t.pollInterval ?? null });
    } else if (m.type === 'taskStatus') {
      emit('status', statusFields(m.task));
      if (onStatus) await onStatus(m.task);
    } else if (m.type === 'result') {
      emit('result', { text: resultText(m.result), isError: Boolean(m.result.isError) });
      return m.result.isError ? 'error' : 'result';
    } else if (m.type === 'error') {
      // For a failed/cancelled task the SDK makes up -32603 "Task <id> failed|was cancelled" itself.
      reportError('callToolStream', m.error);
      return 'error';
    }
  }
  return 'error';
}

const callParams = () => ({ name: opt.tool, arguments: opt.args });

const run = {
  async task() {
    await listTools();
    let last = null;
    const end = await consume(
      client.experimental.tasks.callToolStream(callParams(), undefined, { task: taskOption }),
      async (t) => { last = t; }
    );
    if (end === 'error' && last?.status === 'failed') {
      // The SDK stream stops at "failed" without tasks/result; fetch the stored outcome ourselves.
      try {
        const r = await client.experimental.tasks.getTaskResult(last.taskId, types.CallToolResultSchema);
        emit('result', { text: resultText(r), isError: Boolean(r.isError) });
      } catch (e) {
        reportError('tasks/result', e);
      }
    }
    done(end === 'result', `task call ended with ${end}${last ? ` (status ${last.status})` : ''}`);
  },
  async 'input-required'() {
    return run.task();
  },
  async auto() {
    await listTools();
    emit('auto', { tool: opt.tool, task: client.isToolTask(opt.tool), required: client.isToolTaskRequired(opt.tool) });
    const end = await consume(client.experimental.tasks.callToolStream(callParams()));
    done(end === 'result', `auto call ended with ${end}`);
  },
  async plain() {
    await listTools();
    try {
      // client.request, not client.callTool: callTool refuses a taskSupport "required" tool locally (-32600)
      // without sending anything; this puts the plain tools/call on the wire so the server answers it.
      const r = await client.request({ method: 'tools/call', params: callParams() }, types.CallToolResultSchema);
      emit('result', { text: resultText(r), isError: Boolean(r.isError) });
      done(!r.isError, 'tool returned isError');
    } catch (e) {
      reportError('tools/call', e);
      done(false, `tools/call failed: ${e.message}`);
    }
  },
  async 'sampling-async'() {
    return run.plain();
  },
  async 'elicitation-async'() {
    return run.plain();
  },
  async list() {
    for (let i = 0; i < opt.start; i++) {
      const r = await client.request(
        { method: 'tools/call', params: callParams() },
        types.CreateTaskResultSchema,
        { task: taskOption }
      );
      emit('task_created', { taskId: r.task.taskId, status: r.task.status, ttl: r.task.ttl ?? null, pollInterval: r.task.pollInterval ?? null });
    }
    let cursor;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      for (const t of page.tasks) emit('task', statusFields(t));
      emit('page', { count: page.tasks.length, nextCursor: page.nextCursor ?? null });
      cursor = page.nextCursor;
    } while (cursor);
    done(true);
  },
  async cancel() {
    let cancelled = null;
    const end = await consume(
      client.experimental.tasks.callToolStream(callParams(), undefined, { task: taskOption }),
      async (task) => {
        if (cancelled) return;
        cancelled = task.taskId;
        try {
          const r = await client.experimental.tasks.cancelTask(task.taskId);
          emit('cancel_result', statusFields(r));
        } catch (e) {
          reportError('tasks/cancel', e);
        }
      }
    );
    if (!cancelled) return done(false, `stream ended (${end}) before any status`);
    let final = null;
    try {
      final = await client.experimental.tasks.getTask(cancelled);
      emit('final_status', statusFields(final));
    } catch (e) {
      reportError('tasks/get', e); // a receiver may delete cancelled tasks at once
    }
    try {
      const again = await client.experimental.tasks.cancelTask(cancelled);
      emit('cancel_result', statusFields(again));
    } catch (e) {
      reportError('tasks/cancel', e);
    }
    done(final === null || final.status === 'cancelled', `final status ${final?.status}`);
  },
  async 'get-unknown'() {
    const id = 'taskwire-no-such-task';
    const calls = [
      ['tasks/get', () => client.experimental.tasks.getTask(id)],
      ['tasks/result', () => client.experimental.tasks.getTaskResult(id, types.CallToolResultSchema)],
      ['tasks/cancel', () => client.experimental.tasks.cancelTask(id)],
    ];
    let errors = 0;
    for (const [method, call] of calls) {
      try {
        emit('unexpected_result', { method, result: await call() });
      } catch (e) {
        reportError(method, e);
        errors++;
      }
    }
    done(errors === calls.length, 'an unknown task id was accepted');
  },
};

try {
  await client.connect(transport);
  emit('initialized', {
    protocolVersion: negotiatedVersion,
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
  });
  if (opt.url) emit('session', { sessionId: transport.sessionId ?? null });
  await run[mode]();
} catch (e) {
  reportError(null, e);
  done(false, e.stack ?? String(e));
}
if (opt.url && transport.sessionId) {
  const sessionId = transport.sessionId;
  try {
    await transport.terminateSession();
    emit('terminated', { sessionId });
  } catch (e) {
    reportError('DELETE', e);
  }
}
await client.close().catch(() => {});
process.exit(exitCode);
