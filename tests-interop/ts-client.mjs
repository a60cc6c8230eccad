#!/usr/bin/env node
// MCP client built on the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2), used by
// Junction's interop tests as a real peer of our servers. It connects over stdio (a command
// after `--`) or Streamable HTTP (a URL), performs what the flags ask and prints ONE JSON
// object on stdout. Diagnostics go to stderr. Exit 0 on success, 1 on error (2 on bad usage).
//
//   node ts-client.mjs [flags] -- COMMAND ARGS...        # stdio: spawns the server
//   node ts-client.mjs [flags] http://127.0.0.1:PORT/mcp  # Streamable HTTP
//
// Flags:
//   --tool NAME [--args JSON] [--progress]  call a tool (--progress asks for progress
//                                           notifications and records them)
//   --list-resources                        resources/list and resources/templates/list
//   --read URI                              resources/read (repeatable)
//   --list-prompts                          prompts/list
//   --prompt NAME [--prompt-args JSON]      prompts/get
//   --no-list-tools                         skip the tools/list done by default
//   --all-conformance                       run every conformance-suite fixture (tools,
//                                           resources, prompts, completion, logging, ping)
//                                           and print every result keyed by name
//   --answers default|suite                 how to answer sampling/elicitation (below)
//   --capabilities JSON                     replace the declared client capabilities
//   --timeout MS                            per-request timeout (default 30000)
//
// Server->client requests: the client declares sampling, elicitation (form + url) and roots.
//   sampling/createMessage -> {role:"assistant", content:{type:"text",
//                              text:"sampled: <first user text>"}, model:"ts-test-model",
//                              stopReason:"endTurn"}
//   elicitation/create     -> form: {action:"accept", content:<value for every property:
//                              its default, else a plausible value from the schema>};
//                              url: {action:"accept"}
//   roots/list             -> {roots:[{uri:"file:///tmp/ts-client-root", name:"ts-client-root"}]}
// With --answers suite, sampling and elicitation answers are the exact ones the conformance
// suite 0.1.16 gives (see servers/CONFORMANCE.md), so payloads can be compared with what the
// suite would see.
//
// The SDK is loaded from $JUNCTION_NODE_MODULES (written by scripts/install-tools into
// .tools/env.sh), falling back to <repo>/.tools/npm/node_modules.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = process.env.JUNCTION_NODE_MODULES || resolve(HERE, '..', '.tools', 'npm', 'node_modules');
const SDK = join(NODE_MODULES, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const sdkImport = (p) => import(pathToFileURL(join(SDK, p)).href);

function fail(message, code = 1) {
  process.stderr.write(`ts-client: ${message}\n`);
  process.exit(code);
}

// ------------------------------------------------------------------ arguments
function parseArgs(argv) {
  const o = {
    tool: null, args: undefined, progress: false, listResources: false, read: [],
    listPrompts: false, prompt: null, promptArgs: undefined, listTools: true,
    allConformance: false, answers: 'default', capabilities: null, timeout: 30000,
    url: null, command: null,
  };
  const json = (flag, v) => {
    try { return JSON.parse(v); } catch (e) { fail(`${flag} expects JSON, got ${JSON.stringify(v)}: ${e.message}`, 2); }
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`, 2);
      return argv[++i];
    };
    switch (a) {
      case '--': o.command = argv.slice(i + 1); i = argv.length; break;
      case '--tool': o.tool = next(); break;
      case '--args': o.args = json(a, next()); break;
      case '--progress': o.progress = true; break;
      case '--list-resources': o.listResources = true; break;
      case '--read': o.read.push(next()); break;
      case '--list-prompts': o.listPrompts = true; break;
      case '--prompt': o.prompt = next(); break;
      case '--prompt-args': o.promptArgs = json(a, next()); break;
      case '--no-list-tools': o.listTools = false; break;
      case '--all-conformance': o.allConformance = true; break;
      case '--answers': o.answers = next(); break;
      case '--capabilities': o.capabilities = json(a, next()); break;
      case '--timeout': o.timeout = Number(next()); break;
      case '-h': case '--help': {
        process.stdout.write('usage: ts-client.mjs [--tool NAME [--args JSON] [--progress]] [--list-resources] [--read URI]...\n'
          + '       [--list-prompts] [--prompt NAME [--prompt-args JSON]] [--no-list-tools] [--all-conformance]\n'
          + '       [--answers default|suite] [--capabilities JSON] [--timeout MS] (-- COMMAND ARGS... | URL)\n');
        process.exit(0);
      }
      default:
        if (a.startsWith('--')) fail(`unknown flag ${a}`, 2);
        if (/^https?:\/\//.test(a)) o.url = a; else fail(`unexpected argument ${a} (a stdio command goes after --)`, 2);
    }
  }
  if (!o.url && !(o.command && o.command.length)) fail('give a URL or -- COMMAND ARGS...', 2);
  if (o.url && o.command) fail('give either a URL or a command, not both', 2);
  if (!['default', 'suite'].includes(o.answers)) fail('--answers is default or suite', 2);
  if (!Number.isFinite(o.timeout) || o.timeout <= 0) fail('--timeout expects milliseconds', 2);
  return o;
}

// ------------------------------------------------------------------ answers to the server
function firstUserText(params) {
  for (const m of params?.messages ?? []) {
    if (m.role !== 'user') continue;
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    const t = blocks.find((b) => b && b.type === 'text');
    if (t) return t.text;
  }
  return '';
}

function plausibleString(name, s) {
  const n = name.toLowerCase();
  if (s.format === 'email' || n.includes('email')) return 'test@example.com';
  if (s.format === 'uri' || n.includes('url') || n.includes('uri')) return 'https://example.com';
  if (s.format === 'date') return '2025-01-01';
  if (s.format === 'date-time') return '2025-01-01T00:00:00Z';
  let v = n.includes('name') ? 'testuser' : `test-${name}`;
  if (typeof s.minLength === 'number' && v.length < s.minLength) v = v.padEnd(s.minLength, 'x');
  if (typeof s.maxLength === 'number' && v.length > s.maxLength) v = v.slice(0, s.maxLength);
  return v;
}

function plausibleValue(name, s) {
  if (!s || typeof s !== 'object') return 'test';
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (Array.isArray(s.oneOf) && s.oneOf.length && 'const' in s.oneOf[0]) return s.oneOf[0].const;
  if (Array.isArray(s.anyOf) && s.anyOf.length && 'const' in s.anyOf[0]) return s.anyOf[0].const;
  switch (s.type) {
    case 'boolean': return true;
    case 'integer': return typeof s.minimum === 'number' ? Math.ceil(s.minimum) : 1;
    case 'number': return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'array': {
      const it = s.items ?? {};
      const opts = Array.isArray(it.enum) ? it.enum
        : Array.isArray(it.anyOf) ? it.anyOf.map((x) => x.const)
          : Array.isArray(it.oneOf) ? it.oneOf.map((x) => x.const) : ['test'];
      const n = Math.max(1, typeof s.minItems === 'number' ? s.minItems : 1);
      return opts.slice(0, Math.min(n, opts.length));
    }
    default: return plausibleString(name, s);
  }
}

function elicitContent(requestedSchema) {
  const content = {};
  for (const [name, s] of Object.entries(requestedSchema?.properties ?? {})) content[name] = plausibleValue(name, s);
  return content;
}

// Exactly what @modelcontextprotocol/conformance 0.1.16 answers in its server scenarios.
const SUITE_SAMPLING = {
  role: 'assistant', content: { type: 'text', text: 'This is a test response from the client' },
  model: 'test-model', stopReason: 'endTurn',
};
const SUITE_ELICITATION = {
  test_elicitation: { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } },
  test_elicitation_sep1034_defaults: {
    action: 'accept', content: { name: 'Jane Smith', age: 25, score: 88.0, status: 'inactive', verified: false },
  },
  test_elicitation_sep1330_enums: {
    action: 'accept',
    content: {
      untitledSingle: 'option1', titledSingle: 'value1', legacyEnum: 'opt1',
      untitledMulti: ['option1', 'option2'], titledMulti: ['value1', 'value2'],
    },
  },
};

// ------------------------------------------------------------------ conformance fixtures
// The fixtures every 0.1.16 server scenario uses, with the arguments the suite sends.
const CONFORMANCE_TOOLS = [
  { name: 'test_simple_text' }, // the suite sends no `arguments` member at all
  { name: 'test_image_content', args: {} },
  { name: 'test_audio_content', args: {} },
  { name: 'test_embedded_resource', args: {} },
  { name: 'test_multiple_content_types', args: {} },
  { name: 'test_tool_with_logging', args: {}, setLevel: 'debug' },
  { name: 'test_error_handling', args: {} },
  { name: 'test_tool_with_progress', args: {}, progress: true },
  { name: 'test_sampling', args: { prompt: 'Test prompt for sampling' } },
  { name: 'test_elicitation', args: { message: 'Please provide your information' } },
  { name: 'test_elicitation_sep1034_defaults', args: {} },
  { name: 'test_elicitation_sep1330_enums', args: {} },
  { name: 'json_schema_2020_12_tool', args: { name: 'Ada', address: { street: '1 Main St', city: 'Springfield' }, email: 'ada@example.com' } },
  { name: 'test_reconnection', args: {} },
];
const CONFORMANCE_READS = ['test://static-text', 'test://static-binary', 'test://template/123/data', 'test://watched-resource'];
const CONFORMANCE_PROMPTS = [
  { name: 'test_simple_prompt' },
  { name: 'test_prompt_with_arguments', args: { arg1: 'testValue1', arg2: 'testValue2' } },
  { name: 'test_prompt_with_embedded_resource', args: { resourceUri: 'test://example-resource' } },
  { name: 'test_prompt_with_image' },
];

// ------------------------------------------------------------------ main
async function main() {
  const o = parseArgs(process.argv.slice(2));
  let Client, StdioClientTransport, StreamableHTTPClientTransport, types;
  try {
    ({ Client } = await sdkImport('client/index.js'));
    types = await sdkImport('types.js');
    if (o.url) ({ StreamableHTTPClientTransport } = await sdkImport('client/streamableHttp.js'));
    else ({ StdioClientTransport } = await sdkImport('client/stdio.js'));
  } catch (e) {
    fail(`cannot load the TypeScript SDK from ${SDK} (run scripts/install-tools and source .tools/env.sh): ${e.message}`);
  }

  const capabilities = o.capabilities ?? {
    sampling: {},
    elicitation: { form: {}, url: {} },
    roots: { listChanged: true },
  };
  const client = new Client({ name: 'junction-ts-client', version: '1.0.0' }, { capabilities });

  // What the server sends us, attributed to the operation in flight (see `track`).
  const notifications = [];
  const serverRequests = [];
  let sink = null; // { notifications: [], serverRequests: [] } of the current operation
  let currentTool = null;
  const note = (list, key, item) => { list.push(item); if (sink) sink[key].push(item); };

  client.fallbackNotificationHandler = async (n) => note(notifications, 'notifications', {
    method: n.method, ...(n.params !== undefined ? { params: n.params } : {}),
  });
  client.setRequestHandler(types.CreateMessageRequestSchema, async (req) => {
    note(serverRequests, 'serverRequests', { method: req.method, params: req.params });
    if (o.answers === 'suite') return SUITE_SAMPLING;
    return {
      role: 'assistant', content: { type: 'text', text: `sampled: ${firstUserText(req.params)}` },
      model: 'ts-test-model', stopReason: 'endTurn',
    };
  });
  client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    note(serverRequests, 'serverRequests', { method: req.method, params: req.params });
    if (o.answers === 'suite' && SUITE_ELICITATION[currentTool]) return SUITE_ELICITATION[currentTool];
    if ((req.params.mode ?? 'form') === 'url') return { action: 'accept' };
    return { action: 'accept', content: elicitContent(req.params.requestedSchema) };
  });
  client.setRequestHandler(types.ListRootsRequestSchema, async (req) => {
    note(serverRequests, 'serverRequests', { method: req.method, params: req.params });
    return { roots: [{ uri: 'file:///tmp/ts-client-root', name: 'ts-client-root' }] };
  });
  let closing = false; // errors while shutting down (a late server request) are noise
  client.onerror = (e) => {
    if (!closing) process.stderr.write(`ts-client: transport/protocol error: ${e?.message ?? e}\n`);
  };

  let transport;
  if (o.url) {
    transport = new StreamableHTTPClientTransport(new URL(o.url));
  } else {
    transport = new StdioClientTransport({
      command: o.command[0], args: o.command.slice(1), env: { ...process.env }, stderr: 'inherit',
    });
  }
  // The SDK keeps the negotiated version only inside the HTTP transport; catch it on the way.
  let negotiatedProtocolVersion = null;
  const origSet = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => { negotiatedProtocolVersion = v; if (origSet) origSet(v); };

  const opts = { timeout: o.timeout };
  try {
    await client.connect(transport, opts);
  } catch (e) {
    fail(`cannot connect: ${e?.message ?? e}`);
  }

  const out = {
    transport: o.url ? 'streamable-http' : 'stdio',
    negotiatedProtocolVersion,
    serverInfo: client.getServerVersion() ?? null,
    serverCapabilities: client.getServerCapabilities() ?? null,
    instructions: client.getInstructions() ?? null,
  };
  if (o.url) out.sessionId = transport.sessionId ?? null;
  const caps = out.serverCapabilities ?? {};
  const errors = [];

  // Runs one operation, capturing the notifications and server requests it caused.
  async function track(label, fn, { settleMs = 0 } = {}) {
    const rec = { notifications: [], serverRequests: [] };
    sink = rec;
    try {
      rec.result = await fn(rec);
    } catch (e) {
      // McpError prefixes the wire message with "MCP error <code>: "; report the wire message.
      let message = e?.message ?? String(e);
      if (e?.code !== undefined) message = message.replace(`MCP error ${e.code}: `, '');
      rec.error = { message, ...(e?.code !== undefined ? { code: e.code } : {}), ...(e?.data !== undefined ? { data: e.data } : {}) };
      errors.push(`${label}: ${rec.error.message}`);
    }
    if (settleMs) await new Promise((r) => setTimeout(r, settleMs));
    sink = null;
    if (!rec.notifications.length) delete rec.notifications;
    if (!rec.serverRequests.length) delete rec.serverRequests;
    return rec;
  }

  async function listAll(method, key, schema) {
    const items = [];
    let cursor;
    for (let page = 0; page < 1000; page++) {
      const r = await client.request({ method, params: cursor ? { cursor } : {} }, schema, opts);
      items.push(...(r[key] ?? []));
      if (!r.nextCursor) return items;
      cursor = r.nextCursor;
    }
    throw new Error(`${method}: more than 1000 pages`);
  }

  async function callTool(name, args, { progress = false } = {}) {
    currentTool = name;
    try {
      const rec = await track(`tools/call ${name}`, async (r) => {
        const params = args === undefined ? { name } : { name, arguments: args };
        const callOpts = { ...opts };
        if (progress) {
          r.progress = [];
          callOpts.onprogress = (p) => r.progress.push(p);
        }
        return client.callTool(params, types.CallToolResultSchema, callOpts);
      }, { settleMs: progress ? 20 : 0 });
      return { name, ...(args === undefined ? {} : { arguments: args }), ...rec };
    } finally {
      currentTool = null;
    }
  }

  const readResource = (uri) => track(`resources/read ${uri}`, () => client.readResource({ uri }, opts));
  const getPrompt = (name, args) => track(`prompts/get ${name}`, () => client.getPrompt(
    args === undefined ? { name } : { name, arguments: args }, opts));

  if (o.allConformance) {
    const L = await track('tools/list', () => listAll('tools/list', 'tools', types.ListToolsResultSchema));
    out.tools = L.result ?? null;
    out.ping = await track('ping', () => client.ping(opts));
    out.setLevel = await track('logging/setLevel', () => client.setLoggingLevel('info', opts));
    out.complete = await track('completion/complete', () => client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' },
    }, opts));
    out.calls = {};
    for (const t of CONFORMANCE_TOOLS) {
      if (t.setLevel) await track('logging/setLevel', () => client.setLoggingLevel(t.setLevel, opts));
      out.calls[t.name] = await callTool(t.name, t.args, { progress: !!t.progress });
      if (t.name === 'test_tool_with_logging') {
        // Logging notifications may trail the result a little over HTTP.
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const R = await track('resources/list', () => listAll('resources/list', 'resources', types.ListResourcesResultSchema));
    out.resources = R.result ?? null;
    const T = await track('resources/templates/list', () => listAll('resources/templates/list', 'resourceTemplates', types.ListResourceTemplatesResultSchema));
    out.resourceTemplates = T.result ?? null;
    out.reads = {};
    for (const uri of CONFORMANCE_READS) out.reads[uri] = await readResource(uri);
    out.subscribe = await track('resources/subscribe', () => client.subscribeResource({ uri: 'test://watched-resource' }, opts));
    out.unsubscribe = await track('resources/unsubscribe', () => client.unsubscribeResource({ uri: 'test://watched-resource' }, opts));
    const P = await track('prompts/list', () => listAll('prompts/list', 'prompts', types.ListPromptsResultSchema));
    out.prompts = P.result ?? null;
    out.getPrompts = {};
    for (const p of CONFORMANCE_PROMPTS) out.getPrompts[p.name] = { name: p.name, ...(p.args ? { arguments: p.args } : {}), ...(await getPrompt(p.name, p.args)) };
  } else {
    if (o.listTools && caps.tools) {
      const L = await track('tools/list', () => listAll('tools/list', 'tools', types.ListToolsResultSchema));
      out.tools = L.result ?? null;
    }
    if (o.tool) out.called = await callTool(o.tool, o.args, { progress: o.progress });
    if (o.listResources) {
      const R = await track('resources/list', () => listAll('resources/list', 'resources', types.ListResourcesResultSchema));
      out.resources = R.result ?? null;
      const T = await track('resources/templates/list', () => listAll('resources/templates/list', 'resourceTemplates', types.ListResourceTemplatesResultSchema));
      out.resourceTemplates = T.result ?? null;
    }
    if (o.read.length) {
      out.read = {};
      for (const uri of o.read) out.read[uri] = await readResource(uri);
    }
    if (o.listPrompts) {
      const P = await track('prompts/list', () => listAll('prompts/list', 'prompts', types.ListPromptsResultSchema));
      out.prompts = P.result ?? null;
    }
    if (o.prompt) out.prompt = { name: o.prompt, ...(o.promptArgs ? { arguments: o.promptArgs } : {}), ...(await getPrompt(o.prompt, o.promptArgs)) };
  }

  out.notifications = notifications;
  out.serverRequests = serverRequests;
  out.errors = errors;
  process.stdout.write(`${JSON.stringify(out)}\n`);
  closing = true;
  try { await client.close(); } catch { /* closing a dead peer is fine */ }
  if (errors.length) {
    process.stderr.write(`ts-client: ${errors.length} operation(s) failed:\n  ${errors.join('\n  ')}\n`);
    process.exitCode = 1;
  }
}

main().then(() => {
  // A stdio child or an SSE stream can keep the loop alive; we are done.
  setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref();
}, (e) => fail(e?.stack ?? String(e)));
