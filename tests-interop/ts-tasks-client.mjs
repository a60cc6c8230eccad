#!/usr/bin/env node
// The TypeScript SDK's (1.32.2) experimental tasks client against a Junction server over
// Streamable HTTP, used by crates/cli/tests/tasks_sdk.rs. Prints ONE JSON object on stdout:
//
//   node ts-tasks-client.mjs URL TOOL ARGS_JSON
//
//   streamed   the messages of callToolStream(TOOL, ARGS, {task: {ttl: 60000}}): each
//              {type, status?, statusMessage?, taskId?, result?, error?}
//   listed     listTasks() after it: the task ids and statuses
//   got        getTask(id) after it
//   payload    getTaskResult(id) after it
//   cancelled  a second call started with callToolStream and cancelled with cancelTask at
//              its first status: the cancelTask answer
//   afterCancel getTask of that second task
//
// Diagnostics go to stderr; exit 0 on success, 1 on error. The SDK is loaded from
// $JUNCTION_NODE_MODULES as in ts-client.mjs.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = process.env.JUNCTION_NODE_MODULES || resolve(HERE, '..', '.tools', 'npm', 'node_modules');
const SDK = join(NODE_MODULES, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const sdkImport = (p) => import(pathToFileURL(join(SDK, p)).href);

const [url, tool, argsJson] = process.argv.slice(2);
if (!url || !tool) {
  process.stderr.write('usage: ts-tasks-client.mjs URL TOOL [ARGS_JSON]\n');
  process.exit(2);
}
const args = argsJson ? JSON.parse(argsJson) : {};

const { Client } = await sdkImport('client/index.js');
const { StreamableHTTPClientTransport } = await sdkImport('client/streamableHttp.js');
const { CallToolResultSchema } = await sdkImport('types.js');

const client = new Client({ name: 'ts-tasks-client', version: '1.0.0' }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tasks = client.experimental.tasks;
const out = {};
try {
  out.streamed = [];
  let taskId = null;
  for await (const m of tasks.callToolStream({ name: tool, arguments: args }, undefined, { task: { ttl: 60000 } })) {
    const entry = { type: m.type };
    if (m.task) {
      entry.taskId = m.task.taskId;
      entry.status = m.task.status;
      if (m.task.statusMessage !== undefined) entry.statusMessage = m.task.statusMessage;
      taskId = taskId ?? m.task.taskId;
    }
    if (m.result) entry.result = m.result;
    if (m.error) entry.error = { code: m.error.code, message: m.error.message };
    out.streamed.push(entry);
  }
  out.listed = (await tasks.listTasks()).tasks.map((t) => ({ taskId: t.taskId, status: t.status }));
  out.got = await tasks.getTask(taskId);
  out.payload = await tasks.getTaskResult(taskId, CallToolResultSchema);

  for await (const m of tasks.callToolStream({ name: tool, arguments: args }, undefined, { task: { ttl: 60000 } })) {
    if (m.type === 'taskCreated') {
      out.cancelled = await tasks.cancelTask(m.task.taskId);
      out.afterCancel = await tasks.getTask(m.task.taskId);
      break;
    }
  }
} catch (e) {
  out.error = String(e?.stack ?? e);
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(out.error ? 1 : 0);
