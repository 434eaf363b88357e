// One AG-UI run through the official @ag-ui/client HttpAgent, for
// tests/agui_e2e_test.go. Reads {url, token, threadId, messages, tools,
// forwardedProps, resume} as JSON on stdin; prints {events, messages,
// error} as JSON. Every event is validated against @ag-ui/core's zod
// EventSchemas; a failure is reported in error.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const spec = JSON.parse(input);
const agent = new HttpAgent({
  url: spec.url,
  headers: { Authorization: `Bearer ${spec.token}` },
  threadId: spec.threadId,
  initialMessages: spec.messages ?? [],
});
const events = [];
const invalid = [];
let error = null;
try {
  await agent.runAgent(
    { tools: spec.tools ?? [], forwardedProps: spec.forwardedProps, resume: spec.resume },
    {
      onEvent({ event }) {
        const r = EventSchemas.safeParse(event);
        if (!r.success) invalid.push({ event, issues: r.error.issues });
        events.push(event);
      },
    },
  );
} catch (e) {
  error = String(e?.message ?? e);
}
if (invalid.length) error = `invalid events: ${JSON.stringify(invalid)}`;
process.stdout.write(JSON.stringify({ events, messages: agent.messages, error }));
