// Follows one run's stream with the npm `eventsource` package (a
// standard EventSource), for tests/stream_e2e_test.go. Reads {url, token,
// seconds} as JSON on stdin; prints {ends, requests, statuses,
// closedAfterMs, readyState} as JSON after `seconds`, or as soon as the
// EventSource is closed and a further second brought no request.
import { EventSource } from "eventsource";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const spec = JSON.parse(input);
const started = Date.now();
const statuses = [];
let ends = 0;
let closedAfterMs = null;
const es = new EventSource(spec.url, {
  fetch: async (url, init) => {
    const resp = await fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${spec.token}` } });
    statuses.push(resp.status);
    return resp;
  },
});
es.addEventListener("end", () => { ends++; });
const deadline = started + spec.seconds * 1000;
while (Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
  if (es.readyState === EventSource.CLOSED && closedAfterMs === null) closedAfterMs = Date.now() - started;
  if (closedAfterMs !== null && Date.now() - started > closedAfterMs + 1000) break;
}
const readyState = es.readyState;
es.close();
process.stdout.write(JSON.stringify({ ends, requests: statuses.length, statuses, closedAfterMs, readyState }));
