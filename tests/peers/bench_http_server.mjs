#!/usr/bin/env node
// The TypeScript SDK 1.32.2 peer of taskwire's Streamable HTTP benchmark (tests/src/bin/http-bench.rs):
// the benchmark's `echo` over the SDK's StreamableHTTPServerTransport on node's http module.
//
//   node bench_http_server.mjs --http PORT [--json-response]
//
// It serves http://127.0.0.1:PORT/mcp (PORT 0: any free port) in session mode (http_sessions.mjs), as
// ts_server.mjs --http does. --json-response sets the transport's enableJsonResponse: a request is answered with application/json instead
// of an SSE stream.
//
// The SDK speaks 2025-11-25 at the newest, and has no 2026-07-28 stateless requests: its stateless mode
// (sessionIdGenerator undefined) answers a POST carrying `MCP-Protocol-Version: 2026-07-28` with 400
// "Bad Request: Unsupported protocol version" (validateProtocolVersion in server/webStandardStreamableHttp.js),
// so it is not offered here; the benchmark runs its session workloads only.
//
// Tools:
//   echo  registerTool, so taskSupport "forbidden"; input schema { text: string } (required); returns `text` as
//         one text content block.
// Once listening it prints {"event":"listening","url":"http://127.0.0.1:PORT/mcp"} on stdout; it exits on
// SIGTERM or SIGINT.
import { sdk, dep, fail } from './peerlib.mjs';
import { serveSessions } from './http_sessions.mjs';

const { McpServer } = sdk('server/mcp.js');
const { z } = dep('zod');

const argv = process.argv.slice(2);
const portAt = argv.indexOf('--http');
const port = portAt < 0 ? NaN : Number(argv[portAt + 1]);
if (!Number.isInteger(port) || port < 0) fail('usage: bench_http_server.mjs --http PORT [--json-response]', 2);
const jsonResponse = argv.includes('--json-response');

const textResult = (text) => ({ content: [{ type: 'text', text }] });

// One McpServer with the benchmark's tool, per session.
function createServer() {
  const server = new McpServer({ name: 'taskwire-ts-bench-http-server', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'echo',
    { description: 'Returns its `text` argument as one text block.', inputSchema: { text: z.string() } },
    async ({ text }) => textResult(text)
  );
  return server;
}

serveSessions({ port, createServer, jsonResponse });
