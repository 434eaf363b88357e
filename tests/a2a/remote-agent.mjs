// A remote A2A agent for Baton's end-to-end tests (tests/a2a_client_e2e_test.go),
// served by the official A2A JavaScript SDK (protocol 1.0, JSON-RPC) on
// 127.0.0.1 at a free port. It prints {"url": "http://127.0.0.1:<port>"} on
// its first line of stdout, then serves until it is killed:
//
//   /slow/.well-known/agent-card.json  an agent that works ~3 s (WORK_MS),
//                                      then answers with an artifact
//   /ask/.well-known/agent-card.json   an agent that first asks for a city
//                                      (input-required), then answers with it
//   GET /counts                        the SendMessage requests received
//                                      and the executions started, by
//                                      messageId, and the slow agent's
//                                      tasks cancelled, by task id:
//                                      {"received": {...}, "executed":
//                                      {...}, "cancelled": {...}}
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const workMs = Number(process.env.WORK_MS || 3000);
const received = {};
const executed = {};
const cancelled = {};
const contexts = {};

const text = (value) => ({ content: { $case: 'text', value }, filename: '', mediaType: '', metadata: undefined });
const data = (value) => ({ content: { $case: 'data', value }, filename: '', mediaType: '', metadata: undefined });
const message = (ctx, parts) => ({
  messageId: `${ctx.taskId}-${Math.random().toString(16).slice(2)}`,
  contextId: ctx.contextId,
  taskId: ctx.taskId,
  role: Role.ROLE_AGENT,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const status = (ctx, state, msg) => ({
  taskId: ctx.taskId,
  contextId: ctx.contextId,
  status: { state, message: msg, timestamp: new Date().toISOString() },
  metadata: undefined,
});
const artifact = (ctx, parts) => ({
  taskId: ctx.taskId,
  contextId: ctx.contextId,
  artifact: { artifactId: `${ctx.taskId}-answer`, name: 'answer', description: '', parts, metadata: undefined, extensions: [] },
  append: false,
  lastChunk: true,
  metadata: undefined,
});
// task is the first event of every execution: the stored task, or a new
// one holding the message.
const task = (ctx) =>
  ctx.task ?? {
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [ctx.userMessage],
    metadata: undefined,
  };
const words = (m) =>
  (m.parts || [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? JSON.stringify(p.content.value) : ''))
    .join(' ')
    .trim();
const count = (ctx) => {
  const id = ctx.userMessage.messageId;
  executed[id] = (executed[id] || 0) + 1;
};

const slow = {
  async execute(ctx, bus) {
    count(ctx);
    contexts[ctx.taskId] = ctx.contextId;
    bus.publish({ kind: 'task', data: task(ctx) });
    bus.publish({ kind: 'statusUpdate', data: status(ctx, TaskState.TASK_STATE_WORKING, undefined) });
    await new Promise((r) => setTimeout(r, workMs));
    if (cancelled[ctx.taskId]) return;
    bus.publish({ kind: 'artifactUpdate', data: artifact(ctx, [text(`Researched: ${words(ctx.userMessage)}`)]) });
    bus.publish({ kind: 'statusUpdate', data: status(ctx, TaskState.TASK_STATE_COMPLETED, undefined) });
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    cancelled[taskId] = (cancelled[taskId] || 0) + 1;
    bus.publish({ kind: 'statusUpdate', data: status({ taskId, contextId: contexts[taskId] }, TaskState.TASK_STATE_CANCELED, undefined) });
    bus.finished();
  },
};

const ask = {
  async execute(ctx, bus) {
    count(ctx);
    bus.publish({ kind: 'task', data: task(ctx) });
    if (!ctx.task) {
      const q = message(ctx, [text('Which city?'), data({ choices: ['Paris', 'Rome'] })]);
      bus.publish({ kind: 'statusUpdate', data: status(ctx, TaskState.TASK_STATE_INPUT_REQUIRED, q) });
      bus.finished();
      return;
    }
    bus.publish({ kind: 'statusUpdate', data: status(ctx, TaskState.TASK_STATE_WORKING, undefined) });
    bus.publish({ kind: 'artifactUpdate', data: artifact(ctx, [text(`Sunny in ${words(ctx.userMessage)}`)]) });
    bus.publish({ kind: 'statusUpdate', data: status(ctx, TaskState.TASK_STATE_COMPLETED, undefined) });
    bus.finished();
  },
  async cancelTask() {},
};

const app = express();
app.get('/counts', (_req, res) => res.json({ received, executed, cancelled }));

const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  for (const [name, executor, description] of [
    ['slow', slow, 'Researches a topic (slowly).'],
    ['ask', ask, 'Tells the weather of a city it asks for.'],
  ]) {
    const card = {
      name,
      description,
      supportedInterfaces: [{ url: `${base}/${name}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
      provider: undefined,
      version: '1.0.0',
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: name, name, description, tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
      signatures: [],
    };
    const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
    // Count every SendMessage request by its messageId before the SDK
    // handles it (its JSON-RPC router parses the body again as needed).
    app.use(`/${name}/a2a`, express.json(), (req, _res, next) => {
      const id = req.body?.method === 'SendMessage' ? req.body?.params?.message?.messageId : undefined;
      if (id) received[id] = (received[id] || 0) + 1;
      next();
    });
    app.use(`/${name}/a2a`, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    app.use(`/${name}/.well-known/agent-card.json`, agentCardHandler({ agentCardProvider: { getAgentCard: async () => card } }));
  }
  process.stdout.write(JSON.stringify({ url: base }) + '\n');
});
