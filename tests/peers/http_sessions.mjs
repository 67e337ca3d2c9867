// Streamable HTTP in session mode for the TypeScript SDK peers (ts_server.mjs --http, bench_http_server.mjs),
// as the SDK's examples do it: an `initialize` POST without Mcp-Session-Id opens a 2025-11-25 session with its
// own StreamableHTTPServerTransport and McpServer (sessionIdGenerator randomUUID); the session's POST, GET and
// DELETE go to that transport. Any other POST without a session gets 400 {"code":-32000,"message":"Bad Request:
// No valid session ID provided","id":null}; an unknown session id gets 404 {"code":-32001,"message":"Session
// not found"}; a path other than /mcp gets 404.
import { createServer as createHttpServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { sdk, emit, log } from './peerlib.mjs';

const { StreamableHTTPServerTransport } = sdk('server/streamableHttp.js');
const { isInitializeRequest } = sdk('types.js');

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// Serves http://127.0.0.1:PORT/mcp (PORT 0: any free port): a session per `initialize`, each with the McpServer
// `createServer()` makes; `jsonResponse` answers requests with application/json instead of SSE; `verbose` logs
// sessions opened and closed on stderr. Prints {"event":"listening","url":...} on stdout once listening; exits
// on SIGTERM or SIGINT.
export function serveSessions({ port, createServer, jsonResponse = false, verbose = false }) {
  const sessions = new Map(); // Mcp-Session-Id -> its StreamableHTTPServerTransport

  // The transport of a new session: registered once the SDK has given it its id, forgotten when it closes.
  async function openSession() {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: jsonResponse,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        if (verbose) log(`session ${id} opened`);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId && sessions.delete(transport.sessionId) && verbose) log(`session ${transport.sessionId} closed`);
    };
    await createServer().connect(transport);
    return transport;
  }

  async function serve(req, res) {
    if (new URL(req.url, 'http://localhost').pathname !== '/mcp') return jsonError(res, 404, -32601, 'Not found: the endpoint is /mcp');
    const id = req.headers['mcp-session-id'];
    const session = typeof id === 'string' ? sessions.get(id) : undefined;
    if (req.method === 'POST') {
      let body;
      try {
        body = JSON.parse(await readBody(req));
      } catch (e) {
        return jsonError(res, 400, -32700, `Parse error: ${e.message}`);
      }
      if (session) return session.handleRequest(req, res, body);
      if (id !== undefined) return jsonError(res, 404, -32001, 'Session not found');
      if (!isInitializeRequest(body)) return jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
      return (await openSession()).handleRequest(req, res, body);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (id === undefined) return jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
      if (!session) return jsonError(res, 404, -32001, 'Session not found');
      return session.handleRequest(req, res);
    }
    res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
  }

  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
  const http = createHttpServer((req, res) => {
    serve(req, res).catch((e) => {
      log(`${req.method} ${req.url}: ${e?.stack ?? e}`);
      if (!res.headersSent) jsonError(res, 500, -32603, 'Internal server error');
    });
  });
  http.listen(port, '127.0.0.1', () => {
    const url = `http://127.0.0.1:${http.address().port}/mcp`;
    emit('listening', { url });
    if (verbose) log(`ready on ${url}`);
  });
}
