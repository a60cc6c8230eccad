#!/usr/bin/env node
// An MCP client built on the official TypeScript SDK with the SDK's own OAuth support (an
// OAuthClientProvider given to StreamableHTTPClientTransport), for Junction's interop tests
// of `junction serve ... --auth-issuer`: the SDK, not Junction, discovers the authorization
// server, registers, sends the user to authorize and exchanges the code.
//
//   node ts-oauth-client.mjs URL TOOL [ARGS_JSON]
//
// The "user" is a browser without a person (as tests-interop/auto-browser.mjs): it follows
// the authorization server's redirects with cookies, which works with
// tests-interop/oidc-provider.mjs (login and consent complete at once), up to this script's
// loopback redirect listener. Prints ONE JSON object on stdout:
//   {"authorized": true, "scope": "...", "tools": [names], "result": <tools/call result>}
// Diagnostics go to stderr. Exit 0 on success, 1 on error, 2 on bad usage.
//
// The SDK is loaded from $JUNCTION_NODE_MODULES (scripts/install-tools).

import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = process.env.JUNCTION_NODE_MODULES || resolve(HERE, '..', '.tools', 'npm', 'node_modules');
const SDK = join(NODE_MODULES, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const sdkImport = (p) => import(pathToFileURL(join(SDK, p)).href);

function fail(message, code = 1) {
  process.stderr.write(`ts-oauth-client: ${message}\n`);
  process.exit(code);
}

const [url, toolName, argsText] = process.argv.slice(2);
if (!url || !toolName) fail('usage: ts-oauth-client.mjs URL TOOL [ARGS_JSON]', 2);
let toolArgs = {};
if (argsText) {
  try { toolArgs = JSON.parse(argsText); } catch (e) { fail(`ARGS_JSON is not JSON: ${e.message}`, 2); }
}

const { Client } = await sdkImport('client/index.js');
const { StreamableHTTPClientTransport } = await sdkImport('client/streamableHttp.js');
const { UnauthorizedError } = await sdkImport('client/auth.js');

// The loopback redirect listener: resolves `code` with the authorization response's query.
let received;
const code = new Promise((done) => { received = done; });
const listener = http.createServer((req, res) => {
  const query = new URL(req.url, 'http://127.0.0.1').searchParams;
  res.end('You may close this window.');
  received(query);
});
await new Promise((done) => listener.listen(0, '127.0.0.1', done));
const redirectUrl = `http://127.0.0.1:${listener.address().port}/callback`;

// A browser with no person at it: follows redirects with a cookie jar.
async function browse(start) {
  const jar = new Map();
  let at = start;
  for (let hop = 0; hop < 20; hop += 1) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(at, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      at = new URL(location, at).href;
      continue;
    }
    await res.text();
    if (res.status !== 200) throw new Error(`${at} answered ${res.status}`);
    return;
  }
  throw new Error('too many redirects');
}

// The SDK's OAuthClientProvider, everything kept in memory.
const saved = { client: undefined, tokens: undefined, verifier: undefined };
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'ts-oauth-client',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  },
  clientInformation: () => saved.client,
  saveClientInformation: (info) => { saved.client = info; },
  tokens: () => saved.tokens,
  saveTokens: (tokens) => { saved.tokens = tokens; },
  saveCodeVerifier: (verifier) => { saved.verifier = verifier; },
  codeVerifier: () => saved.verifier,
  redirectToAuthorization: (authorizationUrl) => {
    browse(authorizationUrl.href).catch((e) => fail(`the authorization page failed: ${e.message}`));
  },
};

const transportOf = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
let client = new Client({ name: 'ts-oauth-client', version: '1.0.0' });
try {
  await client.connect(transportOf());
} catch (e) {
  if (!(e instanceof UnauthorizedError)) fail(`connect: ${e.message}`);
  const query = await code;
  if (query.get('error')) fail(`authorization refused: ${query.get('error')}`);
  const transport = transportOf();
  await transport.finishAuth(query.get('code'));
  client = new Client({ name: 'ts-oauth-client', version: '1.0.0' });
  await client.connect(transport);
}
try {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const result = await client.callTool({ name: toolName, arguments: toolArgs });
  process.stdout.write(`${JSON.stringify({
    authorized: saved.tokens !== undefined,
    scope: saved.tokens?.scope,
    tools,
    result,
  })}\n`);
  await client.close();
  listener.close();
  process.exit(0);
} catch (e) {
  fail(`${e.message}`);
}
