// A browser A2A client through CORS, run by tests/cors_e2e_test.go:
// playwright-core drives Debian's Chromium (headless) to pages served
// from origins other than the API's, which load the official A2A
// JavaScript SDK (tests/a2a/browser-entry.mjs, bundled). In (stdin,
// JSON): chromium (the browser's path), allowed and refused (the URLs of
// the page on an origin the API allows and on one it does not), api (the
// API's URL), agent, token, message (A2A 1.0 JSON). Out (stdout, JSON):
// {allowed: {card, task | message} | {error}, traced: {status} | {error},
// refused: {…} | {error}}.
import { chromium } from 'playwright-core';

const input = JSON.parse(await new Promise((resolve) => {
  let s = '';
  process.stdin.on('data', (c) => (s += c));
  process.stdin.on('end', () => resolve(s));
}));

const browser = await chromium.launch({
  executablePath: input.chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
});
const out = {};
try {
  const page = await browser.newPage();
  const spec = { agentURL: `${input.api}/a2a/${input.agent}`, token: input.token, message: input.message };
  const send = () => page.evaluate(async (s) => {
    try {
      return await window.a2aSend(s);
    } catch (e) {
      return { error: `${e.name}: ${e.message}` };
    }
  }, spec);
  const load = async (url) => {
    await page.goto(url);
    await page.waitForFunction(() => typeof window.a2aSend === 'function');
  };

  // The allowed origin: discover the agent and send it a message.
  await load(input.allowed);
  out.allowed = await send();
  // A page with OpenTelemetry browser instrumentation adds W3C trace
  // context to every request.
  out.traced = await page.evaluate(async ({ api, token }) => {
    try {
      const res = await fetch(`${api}/v1/runs?limit=1`, {
        headers: { Authorization: `Bearer ${token}`, traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' },
      });
      return { status: res.status };
    } catch (e) {
      return { error: `${e.name}: ${e.message}` };
    }
  }, { api: input.api, token: input.token });

  // Another origin: the browser refuses the API's answers.
  await load(input.refused);
  out.refused = await send();
  process.stdout.write(JSON.stringify(out));
} finally {
  await browser.close();
}
