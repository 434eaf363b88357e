// Calls Baton's A2A server with the official A2A JavaScript SDK
// (@a2a-js/sdk), for tests/a2a_server_e2e_test.go. Reads
// {base, agent, token, steps} as JSON on stdin and prints {card, results}
// as JSON: the agent card the SDK's resolver fetched (without a
// credential: the card is public) and, for each step, {result} or
// {error: {code, name, message}} (code: the JSON-RPC error code, when the
// server answered with one). The client is the SDK's ClientFactory over
// the card, with the JSON-RPC transport; the bearer token rides on every
// call through the SDK's authenticating fetch wrapper.
//
// Steps are in the A2A 1.0 JSON form (ProtoJSON: camelCase fields,
// "ROLE_USER", parts {"text"} / {"data"}), converted with the SDK's own
// fromJSON/toJSON, so the results are the wire form too:
//   {op: "send", request: SendMessageRequest}            → Task or Message
//   {op: "stream", request: SendMessageRequest, abortAfter?: n}
//                                                         → [StreamResponse]
//   {op: "subscribe", request: {id}, abortAfter?: n}     → [StreamResponse]
//   {op: "get", request: {id, historyLength?}}           → Task
//   {op: "cancel", request: {id}}                        → Task
//   {op: "list", request: ListTasksRequest}              → ListTasksResponse
//   {op: "pushCreate" | "pushGet" | "pushList" | "pushDelete", request}
//   {op: "extendedCard"}                                  → AgentCard
// A step may carry its own token (another tenant's). abortAfter ends the
// stream after that many events (the client disconnects: the request's
// signal is aborted).
import {
  AgentCard,
  GetTaskPushNotificationConfigRequest,
  DeleteTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  CancelTaskRequest,
  GetTaskRequest,
  SubscribeToTaskRequest,
} from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from "@a2a-js/sdk/client";
import { isJsonRpcError } from "@a2a-js/sdk/errors";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const spec = JSON.parse(input);
const agentURL = `${spec.base}/a2a/${spec.agent}`;

// The card, as any A2A client discovers it: no credential. The SDK
// resolves its card path (".well-known/agent-card.json") against the
// base URL, so the agent's URL is given as a directory (trailing slash).
const resolver = new DefaultAgentCardResolver({ fetchImpl: fetch });
const out = { card: null, cardError: null, results: [] };
let card;
try {
  card = await resolver.resolve(`${agentURL}/`);
  out.card = AgentCard.toJSON(card);
} catch (e) {
  out.cardError = describe(e);
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

const clients = new Map();
async function clientFor(token) {
  if (!clients.has(token)) {
    const authed = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => (token ? { Authorization: `Bearer ${token}` } : {}),
      shouldRetryWithHeaders: async () => undefined,
    });
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
        cardResolver: resolver,
      }),
    );
    clients.set(token, await factory.createFromAgentCard(card));
  }
  return clients.get(token);
}

function describe(e) {
  const err = { name: e?.name ?? "Error", message: String(e?.message ?? e) };
  if (isJsonRpcError(e)) err.code = e.envelopeCode;
  else if (typeof e?.code === "number") err.code = e.code;
  if (e?.reason) err.reason = e.reason;
  return err;
}

// sendResult is a SendMessage result (a Task or a Message) in wire form.
function sendResult(r) {
  return "status" in r || "artifacts" in r ? { task: Task.toJSON(r) } : { message: Message.toJSON(r) };
}

async function drain(iter, controller, abortAfter) {
  const events = [];
  try {
    for await (const ev of iter) {
      events.push(StreamResponse.toJSON(ev));
      if (abortAfter && events.length >= abortAfter) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    if (!(abortAfter && events.length >= abortAfter)) return { result: events, error: describe(e) };
  }
  return { result: events };
}

for (const step of spec.steps ?? []) {
  const client = await clientFor(step.token ?? spec.token);
  const req = step.request ?? {};
  const controller = new AbortController();
  const opts = { signal: controller.signal };
  try {
    switch (step.op) {
      case "send":
        out.results.push({ result: sendResult(await client.sendMessage(SendMessageRequest.fromJSON(req), opts)) });
        break;
      case "stream":
        out.results.push(await drain(client.sendMessageStream(SendMessageRequest.fromJSON(req), opts), controller, step.abortAfter));
        break;
      case "subscribe":
        out.results.push(await drain(client.resubscribeTask(SubscribeToTaskRequest.fromJSON(req), opts), controller, step.abortAfter));
        break;
      case "get":
        out.results.push({ result: Task.toJSON(await client.getTask(GetTaskRequest.fromJSON(req), opts)) });
        break;
      case "cancel":
        out.results.push({ result: Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON(req), opts)) });
        break;
      case "list":
        out.results.push({ result: ListTasksResponse.toJSON(await client.listTasks(ListTasksRequest.fromJSON(req), opts)) });
        break;
      case "pushCreate":
        out.results.push({ result: TaskPushNotificationConfig.toJSON(await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON(req), opts)) });
        break;
      case "pushGet":
        out.results.push({ result: TaskPushNotificationConfig.toJSON(await client.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON(req), opts)) });
        break;
      case "pushList":
        out.results.push({ result: ListTaskPushNotificationConfigsResponse.toJSON(await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON(req), opts)) });
        break;
      case "pushDelete":
        await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON(req), opts);
        out.results.push({ result: null });
        break;
      case "extendedCard":
        out.results.push({ result: AgentCard.toJSON(await client.transport.getExtendedAgentCard({ tenant: "" }, opts)) });
        break;
      default:
        out.results.push({ error: { name: "BadStep", message: `unknown op ${step.op}` } });
    }
  } catch (e) {
    out.results.push({ error: describe(e) });
  }
}
process.stdout.write(JSON.stringify(out));
