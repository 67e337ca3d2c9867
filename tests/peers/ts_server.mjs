#!/usr/bin/env node
// An MCP server on @modelcontextprotocol/sdk 1.32.2 that mirrors the seed's Python server with the SDK's
// experimental 2025-11-25 tasks API (McpServer.experimental.tasks.registerToolTask + InMemoryTaskStore), on
// stdio or, with --http, over Streamable HTTP.
//
//   node ts_server.mjs [--required] [--failing] [--poll-interval MS] [--step-ms MS] [--http PORT]
//
// --http PORT serves http://127.0.0.1:PORT/mcp (PORT 0: any free port) with the SDK's
// StreamableHTTPServerTransport on node's http module, in session mode as the SDK's examples do: an
// `initialize` POST without Mcp-Session-Id opens a session (sessionIdGenerator randomUUID) with its own
// transport and McpServer; the session's POST, GET (its SSE stream) and DELETE go to that transport. Any
// other POST without a session gets 400 {"code":-32000,"message":"Bad Request: No valid session ID
// provided","id":null}; an unknown session id gets 404 {"code":-32001,"message":"Session not found"}. All
// sessions share one InMemoryTaskStore, which keeps each task to the session that created it. Once
// listening it prints {"event":"listening","url":"http://127.0.0.1:PORT/mcp"} on stdout (stdout is not the
// protocol then); it exits on SIGTERM or SIGINT, not at the end of stdin.
//
// Tools:
//   long_running_task           taskSupport "optional", no arguments. As a task: status messages
//                               "开始执行...", "处理步骤 1...", "处理步骤 2..." one step apart, then
//                               completed with text "任务完成！". Called plainly, the SDK runs the same task
//                               internally and answers after ~3 steps.
//   long_running_task_required  (--required) the same with taskSupport "required" (for the Inspector CLI).
//   failing_task                (--failing) taskSupport "optional"; after one step the task ends "failed"
//                               with an isError CallToolResult "任务失败！".
// Requested ttl is kept as given (absent -> null, the SDK's choice); pollInterval defaults to the SDK's 1000.
// On stdio, stdout carries only the protocol; diagnostics go to stderr. Exits when stdin closes.
import { sdk, log } from './peerlib.mjs';
import { serveSessions } from './http_sessions.mjs';

const { McpServer } = sdk('server/mcp.js');
const { StdioServerTransport } = sdk('server/stdio.js');
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = sdk('experimental/tasks/index.js');

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const num = (name, dflt) => {
  const i = argv.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(argv[i + 1]);
  if (!Number.isFinite(v)) {
    log(`${name} needs a number`);
    process.exit(2);
  }
  return v;
};
const pollInterval = num('--poll-interval', undefined);
const stepMs = num('--step-ms', 1000);
const httpPort = num('--http', undefined);

const taskStore = new InMemoryTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t, isError) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });

// Runs the steps in the background; stops quietly when the task was cancelled (updates then throw).
async function work(taskId, store, steps, finish) {
  try {
    for (const message of steps) {
      await store.updateTaskStatus(taskId, 'working', message);
      await sleep(stepMs);
    }
    await finish();
  } catch (err) {
    log(`task ${taskId} stopped: ${err?.message ?? err}`);
  }
}

function taskTool(server, name, taskSupport, description, steps, finalStatus, result) {
  server.experimental.tasks.registerToolTask(
    name,
    { description, inputSchema: {}, execution: { taskSupport } },
    {
      createTask: async (_args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, pollInterval });
        const store = extra.taskStore;
        work(task.taskId, store, steps, () => store.storeTaskResult(task.taskId, finalStatus, result));
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
    }
  );
}

const STEPS = ['开始执行...', '处理步骤 1...', '处理步骤 2...'];
const DESC = '一个需要几秒钟完成的任务，会输出进度状态。支持普通调用和任务调用。';

// One McpServer with the tools (one for stdio; one per session over HTTP), over the shared task store.
function createServer() {
  const server = new McpServer(
    { name: 'taskwire-ts-peer-server', version: '0.1.0' },
    {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore,
      taskMessageQueue,
    }
  );
  taskTool(server, 'long_running_task', 'optional', DESC, STEPS, 'completed', text('任务完成！'));
  if (flag('--required')) {
    taskTool(server, 'long_running_task_required', 'required', DESC + ' (taskSupport required)', STEPS, 'completed', text('任务完成！'));
  }
  if (flag('--failing')) {
    taskTool(server, 'failing_task', 'optional', 'A task that fails after one step.', ['开始执行...'], 'failed', text('任务失败！', true));
  }
  return server;
}

process.on('SIGTERM', () => process.exit(0));
if (httpPort === undefined) {
  process.stdin.on('end', () => process.exit(0));
  await createServer().connect(new StdioServerTransport());
  log('ready');
} else {
  serveSessions({ port: httpPort, createServer, jsonResponse: flag('--json-response'), verbose: true });
}
