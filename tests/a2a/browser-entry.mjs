// The official A2A JavaScript SDK's client in a web page: bundled for the
// browser with esbuild (pinned in package.json) by tests/cors_e2e_test.go,
// loaded by tests/console/a2a-browser.mjs's page. window.a2aSend(spec)
// discovers the agent at spec.agentURL (its card, fetched as the SDK
// fetches it, with A2A-Version) and sends spec.message (A2A 1.0 JSON)
// with the bearer token; it resolves to {card, task | message} in wire
// form, or rejects with the error the browser gave.
import { AgentCard, Message, SendMessageRequest, Task } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from "@a2a-js/sdk/client";

// The page's own fetch: a browser refuses fetch called on another object.
const pageFetch = (...args) => window.fetch(...args);

window.a2aSend = async ({ agentURL, token, message }) => {
  const resolver = new DefaultAgentCardResolver({ fetchImpl: pageFetch });
  const card = await resolver.resolve(`${agentURL}/`);
  const authed = createAuthenticatingFetchWithRetry(pageFetch, {
    headers: async () => ({ Authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
      cardResolver: resolver,
    }),
  );
  const client = await factory.createFromAgentCard(card);
  const r = await client.sendMessage(SendMessageRequest.fromJSON({ message }));
  const out = { card: AgentCard.toJSON(card) };
  if ("status" in r || "artifacts" in r) out.task = Task.toJSON(r);
  else out.message = Message.toJSON(r);
  return out;
};
