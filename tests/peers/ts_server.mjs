#!/usr/bin/env node
// A stdio MCP server on @modelcontextprotocol/sdk 1.32.2 that mirrors the seed's Python server with the
// SDK's experimental 2025-11-25 tasks API (McpServer.experimental.tasks.registerToolTask + InMemoryTaskStore).
//
//   node ts_server.mjs [--required] [--failing] [--poll-interval MS] [--step-ms MS]
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
// stdout carries only the protocol; diagnostics go to stderr. Exits when stdin closes.
import { sdk, log } from './peerlib.mjs';

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

const server = new McpServer(
  { name: 'taskwire-ts-peer-server', version: '0.1.0' },
  {
    capabilities: {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  }
);

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

function taskTool(name, taskSupport, description, steps, finalStatus, result) {
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
taskTool('long_running_task', 'optional', DESC, STEPS, 'completed', text('任务完成！'));
if (flag('--required')) {
  taskTool('long_running_task_required', 'required', DESC + ' (taskSupport required)', STEPS, 'completed', text('任务完成！'));
}
if (flag('--failing')) {
  taskTool('failing_task', 'optional', 'A task that fails after one step.', ['开始执行...'], 'failed', text('任务失败！', true));
}

process.stdin.on('end', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
await server.connect(new StdioServerTransport());
log('ready');
