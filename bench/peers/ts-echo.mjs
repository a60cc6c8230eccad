// The TypeScript SDK's side of junction-bench: one `echo {message}` tool answering
// `Echo: <message>`, as the SDK's documentation writes a server.
//
//   node ts-echo.mjs NODE_MODULES stdio
//   node ts-echo.mjs NODE_MODULES http PORT [--sessionless] [--sse]
//
// Over HTTP, sessions keep one transport per session id; --sessionless builds a server and a
// transport per POST (the SDK's stateless example); JSON answers unless --sse. The socket
// has TCP_NODELAY (noDelay), as every other subject's.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, transportName, portText, ...flags] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(modules, p)).href);

const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { z } = await load('zod/index.js');

function build() {
  const server = new McpServer({ name: 'bench-ts-echo', version: '0.0.0' });
  server.registerTool('echo', {
    description: 'Echoes the message back',
    inputSchema: { message: z.string() },
  }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
  return server;
}

if (transportName === 'stdio') {
  const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
  await build().connect(new StdioServerTransport());
} else {
  const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
  const { isInitializeRequest } = await load('@modelcontextprotocol/sdk/dist/esm/types.js');
  const sessionless = flags.includes('--sessionless');
  const enableJsonResponse = !flags.includes('--sse');
  const sessions = new Map();

  const readBody = (req) => new Promise((done, fail) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try { done(text ? JSON.parse(text) : undefined); } catch (e) { fail(e); }
    });
    req.on('error', fail);
  });
  const refuse = (res, status, message) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
  };

  async function handle(req, res) {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (sessionless) {
      const server = build();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse });
      res.on('close', () => { transport.close(); server.close(); });
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }
    const id = req.headers['mcp-session-id'];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id) return refuse(res, 404, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) return refuse(res, 400, 'No session');
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse,
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      await build().connect(transport);
    }
    return transport.handleRequest(req, res, body);
  }

  createServer({ noDelay: true }, (req, res) => {
    handle(req, res).catch((e) => {
      process.stderr.write(`ts-echo: ${e.stack || e}\n`);
      if (!res.headersSent) refuse(res, 500, String(e));
    });
  }).listen(Number(portText), '127.0.0.1');
}
