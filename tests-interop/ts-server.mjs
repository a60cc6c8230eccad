// A Streamable HTTP MCP server built with the TypeScript SDK, for Junction's client to talk
// to a real peer in both of the SDK's modes:
//
//   $JUNCTION_NODE tests-interop/ts-server.mjs [--stateless] [--port N]
//
// Prints exactly one line on stdout once listening: `listening on http://127.0.0.1:PORT/mcp`
// (port 0, the default, picks a free one). Offers:
//   tools      echo {message} -> text "Echo: <message>"; add {a, b} -> text of the sum and
//              structuredContent {sum} with an outputSchema
//   resource   ts://greeting (text/plain, "Hello from the TypeScript SDK")
//   prompt     greet {name} -> one user message "Please greet <name>."
// Sessions mode keeps one transport per session id (SDK `sessionIdGenerator`); stateless
// mode (`sessionIdGenerator: undefined`) builds a new server and transport for every POST,
// as the SDK's documentation shows, and answers GET and DELETE with 405.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = process.env.JUNCTION_NODE_MODULES || resolve(HERE, '..', '.tools', 'npm', 'node_modules');
const load = (p) => import(pathToFileURL(join(NODE_MODULES, p)).href);

const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
const { isInitializeRequest } = await load('@modelcontextprotocol/sdk/dist/esm/types.js');
const { z } = await load('zod/index.js');

const args = process.argv.slice(2);
const stateless = args.includes('--stateless');
const portAt = args.indexOf('--port');
const port = portAt >= 0 ? Number(args[portAt + 1]) : 0;

function build() {
  const server = new McpServer({ name: 'ts-sdk-server', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Echoes the message back',
    inputSchema: { message: z.string() },
  }, async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }));
  server.registerTool('add', {
    description: 'Adds two numbers',
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
  }, async ({ a, b }) => ({
    content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }],
    structuredContent: { sum: a + b },
  }));
  server.registerResource('greeting', 'ts://greeting', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Hello from the TypeScript SDK' }],
  }));
  server.registerPrompt('greet', {
    description: 'Greets someone',
    argsSchema: { name: z.string() },
  }, ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}.` } }] }));
  return server;
}

function readBody(req) {
  return new Promise((done, fail) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try { done(text ? JSON.parse(text) : undefined); } catch (e) { fail(e); }
    });
    req.on('error', fail);
  });
}

function refuse(res, status, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

const sessions = new Map();

async function handle(req, res) {
  if (new URL(req.url, 'http://x').pathname !== '/mcp') return refuse(res, 404, 'Not found');
  const body = req.method === 'POST' ? await readBody(req) : undefined;
  if (stateless) {
    if (req.method !== 'POST') return refuse(res, 405, 'Method not allowed in stateless mode');
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
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
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    await build().connect(transport);
  }
  return transport.handleRequest(req, res, body);
}

const http = createServer((req, res) => {
  handle(req, res).catch((e) => {
    process.stderr.write(`ts-server: ${e.stack || e}\n`);
    if (!res.headersSent) refuse(res, 500, String(e));
  });
});
http.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
});
