// The web page of browser_client.mjs: an MCP client in the page itself, the TypeScript SDK 1.32.2's
// Client on its StreamableHTTPClientTransport (the browser's fetch, so CORS applies), bundled by
// browser_client.mjs. It puts `window.taskwire.runTask(serverUrl, tool)` on the page, which
// connects, lists the tools, runs TOOL as a task to its result with the SDK's experimental tasks
// API (callToolStream), ends the session with DELETE, and resolves to a summary; a step that
// throws (a request the browser blocked) ends it with `error` set.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const text = (result) =>
  (result?.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('');

async function runTask(serverUrl, tool) {
  const summary = { pageOrigin: window.location.origin, server: serverUrl, steps: [], error: null };
  const step = async (name, body) => {
    try {
      const value = await body();
      summary.steps.push(name);
      return value;
    } catch (e) {
      summary.error = { step: name, name: e?.name ?? null, message: String(e?.message ?? e) };
      throw e;
    }
  };
  const client = new Client({ name: 'taskwire-browser-page', version: '0.1.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl));
  try {
    await step('connect', () => client.connect(transport));
    summary.connected = {
      protocolVersion: transport.protocolVersion ?? null,
      sessionId: transport.sessionId ?? null,
      serverName: client.getServerVersion()?.name ?? null,
      tasks: Boolean(client.getServerCapabilities()?.tasks?.requests?.tools?.call),
    };
    const { tools } = await step('tools/list', () => client.listTools());
    summary.tools = tools.map((t) => ({ name: t.name, taskSupport: t.execution?.taskSupport ?? null }));
    const task = { taskId: null, statuses: [], messages: [], result: null, isError: null };
    summary.task = task;
    await step('callToolStream', async () => {
      const stream = client.experimental.tasks.callToolStream(
        { name: tool, arguments: {} },
        undefined,
        { task: { ttl: 60000 } }
      );
      for await (const m of stream) {
        if (m.type === 'taskCreated') {
          task.taskId = m.task.taskId;
          task.statuses.push(m.task.status);
        } else if (m.type === 'taskStatus') {
          task.statuses.push(m.task.status);
          if (m.task.statusMessage) task.messages.push(m.task.statusMessage);
        } else if (m.type === 'result') {
          task.result = text(m.result);
          task.isError = Boolean(m.result.isError);
        } else if (m.type === 'error') {
          throw m.error;
        }
      }
    });
    await step('DELETE', () => transport.terminateSession());
    summary.terminated = transport.sessionId === undefined;
  } catch {
    // summary.error says where.
  } finally {
    await client.close().catch(() => {});
  }
  return summary;
}

window.taskwire = { runTask };
document.title = 'ready';
