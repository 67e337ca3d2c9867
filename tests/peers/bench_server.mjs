#!/usr/bin/env node
// The TypeScript SDK 1.32.2 peer of taskwire's end-to-end benchmark (tests/src/bin/bench.rs): a stdio
// MCP server with the same two tools as `task-server --bench-tools`.
//
//   node bench_server.mjs
//
// Tools:
//   echo          registerTool, so taskSupport "forbidden"; input schema { text: string } (required);
//                 returns `text` as one text content block.
//   instant_task  the experimental tasks API (registerToolTask + InMemoryTaskStore), taskSupport
//                 "optional": createTask stores the result "done" at once, so the task is completed
//                 before its CreateTaskResult goes out. The requested ttl is kept as given.
// `tasks/list` and `tasks/cancel` are declared. stdout carries only the protocol; diagnostics go to
// stderr. Exits when stdin closes.
import { sdk, dep, log } from './peerlib.mjs';

const { McpServer } = sdk('server/mcp.js');
const { StdioServerTransport } = sdk('server/stdio.js');
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = sdk('experimental/tasks/index.js');
const { z } = dep('zod');

const server = new McpServer(
  { name: 'taskwire-ts-bench-server', version: '0.1.0' },
  {
    capabilities: {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  }
);

const textResult = (text) => ({ content: [{ type: 'text', text }] });

server.registerTool(
  'echo',
  { description: 'Returns its `text` argument as one text block.', inputSchema: { text: z.string() } },
  async ({ text }) => textResult(text)
);

server.experimental.tasks.registerToolTask(
  'instant_task',
  {
    description: 'Completes at once with the text "done".',
    inputSchema: {},
    execution: { taskSupport: 'optional' },
  },
  {
    createTask: async (_args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl });
      await extra.taskStore.storeTaskResult(task.taskId, 'completed', textResult('done'));
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  }
);

process.stdin.on('end', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
await server.connect(new StdioServerTransport());
log('ready');
