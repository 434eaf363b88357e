// Browser tests of the web console, run by tests/console_e2e_test.go:
// playwright-core drives Debian's Chromium (headless) against a running
// baton dev. In (stdin, JSON): base (baton dev's URL), token (a tenant's
// API token), chromium (the browser's path), artifacts (a folder for the
// screenshots), redelivered (optional: a run whose first model turn was
// delivered again after baton dev was killed mid-turn). Out (stdout, JSON): {"passed": [...names]} or exit 1 with
// the failure on stderr.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const input = JSON.parse(await new Promise((resolve) => {
  let s = '';
  process.stdin.on('data', (c) => (s += c));
  process.stdin.on('end', () => resolve(s));
}));
const { base, token, artifacts } = input;
mkdirSync(artifacts, { recursive: true });

class Failure extends Error {}
const fail = (msg) => {
  throw new Failure(msg);
};

// until polls f until it returns a truthy value or timeout ms pass.
async function until(what, f, timeout = 15000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await f();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  fail(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// api calls baton dev's public API directly, to set runs up.
async function api(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json();
  if (!res.ok) fail(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

const startRun = (model, extra = {}) =>
  api('POST', '/v1/runs', { agent: 'e2e', messages: [{ role: 'user', content: 'Console test' }], model: { provider: 'scripted', ...model }, ...extra });

async function statusOf(id) {
  return (await api('GET', `/v1/runs/${id}`)).status;
}

const browser = await chromium.launch({
  executablePath: input.chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
});
const passed = [];
const dialogs = [];
const cspViolations = [];
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const page = await context.newPage();
page.on('dialog', async (d) => {
  dialogs.push(d.message());
  await d.dismiss();
});
page.on('console', (m) => {
  if (/Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
});
page.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`));

const statusText = () => page.getByRole('status', { name: 'Status' }).textContent();
const openRun = async (id) => {
  await page.goto(`${base}/console/#/runs/${encodeURIComponent(id)}`);
  await page.getByRole('heading', { name: `Run ${id}` }).waitFor();
};

try {
  // Sign in: a wrong token is refused, the right one opens the runs.
  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill('not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'does not accept' }).waitFor();
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
  if (page.url().includes(token)) fail('the token is in the URL');
  passed.push('sign in');

  // A scripted run's transcript shows its tool call with the result and
  // the result's audit hash.
  const tool = await startRun({
    turns: [
      { content: 'Echoing.', tool_calls: [{ id: 'call_echo', name: 'ability/echo', parameters: { text: 'hello console' } }] },
      { content: 'Echoed it.' },
    ],
  });
  await until('the tool run to complete', async () => (await statusOf(tool.run_id)) === 'completed');
  await page.goto(`${base}/console/#/runs`);
  await page.getByRole('link', { name: tool.run_id }).click();
  await page.getByRole('heading', { name: `Run ${tool.run_id}` }).waitFor();
  await until('status completed', async () => (await statusText()) === 'completed');
  const call = page.locator('li.msg.tool[data-tool-call-id="call_echo"]');
  await call.waitFor();
  const callText = await call.textContent();
  for (const want of ['ability/echo', 'hello console', 'succeeded', 'sha256']) {
    if (!callText.includes(want)) fail(`the tool call card lacks ${want}: ${callText}`);
  }
  await page.screenshot({ path: join(artifacts, 'run.png'), fullPage: true });
  passed.push('tool call with its result');

  // Streamed text appears before the turn completes.
  const words = 'Streaming arrives a few characters at a time, well before the turn is committed.';
  const streamed = await startRun({ options: { chunk_chars: 4, chunk_delay: '120ms' }, turns: [{ content: words }] });
  await openRun(streamed.run_id);
  const live = page.getByTestId('streaming-text');
  const seen = await until('streamed text', async () => {
    const t = (await live.count()) ? await live.textContent() : '';
    return t.length >= 8 ? { text: t, status: await statusText() } : null;
  });
  if (!words.startsWith(seen.text) || seen.text.length >= words.length) fail(`streamed text ${JSON.stringify(seen.text)} is not a proper prefix of the reply`);
  if (seen.status === 'completed') fail('the run had completed when its streamed text first appeared');
  await until('the streamed run to complete on screen', async () => (await statusText()) === 'completed');
  await page.getByText(words, { exact: true }).waitFor();
  passed.push('streamed text before the turn completes');

  // A paused run is marked on the runs list and has an approval card;
  // Approve completes it and the page follows without a reload.
  const approval = await startRun({
    turns: [
      { content: 'Sending.', tool_calls: [{ id: 'call_mail', name: 'ability/send_email', parameters: { to: 'ann@example.com' } }] },
      { content: 'Sent.' },
    ],
  });
  await until('the run to wait for approval', async () => (await statusOf(approval.run_id)) === 'approval_required');
  await page.goto(`${base}/console/#/runs`);
  const row = page.locator('tr', { has: page.getByRole('link', { name: approval.run_id }) });
  await until('the waiting marker', async () => (await row.textContent()).includes('waiting on you'));
  await page.screenshot({ path: join(artifacts, 'runs.png'), fullPage: true });
  await row.getByRole('link', { name: approval.run_id }).click();
  await page.getByRole('heading', { name: `Run ${approval.run_id}` }).waitFor();
  await until('status approval_required', async () => (await statusText()) === 'approval_required');
  const card = page.locator('article.card', { hasText: 'ability/send_email' });
  await card.waitFor();
  if (!(await card.textContent()).includes('ann@example.com')) fail('the approval card lacks the preview');
  await page.evaluate(() => {
    window.__notReloaded = true;
  });
  await card.getByRole('button', { name: 'Approve' }).click();
  await until('status completed after Approve', async () => (await statusText()) === 'completed');
  if (!(await page.evaluate(() => window.__notReloaded === true))) fail('the page reloaded');
  await page.getByText('Sent.', { exact: true }).waitFor();
  passed.push('approve from the card');

  // A client tool's form refuses invalid JSON and submits a valid result.
  const client = await startRun(
    { turns: [{ content: 'Asking.', tool_calls: [{ id: 'call_cal', name: 'client/get_calendar', parameters: { day: 'monday' } }] }, { content: 'Monday is free.' }] },
    { tools: [{ name: 'client/get_calendar', description: 'Read the calendar.', parameters: { type: 'object', properties: { day: { type: 'string' } } } }] },
  );
  await until('the run to wait for its client tool', async () => (await statusOf(client.run_id)) === 'runtime_tool_pending');
  await openRun(client.run_id);
  const form = page.locator('article.card', { hasText: 'client/get_calendar' });
  await form.getByLabel('Result (JSON)').fill('{"free": tru');
  await form.getByRole('button', { name: 'Submit result' }).click();
  await form.getByRole('alert').filter({ hasText: 'Not valid JSON' }).waitFor();
  if ((await statusOf(client.run_id)) !== 'runtime_tool_pending') fail('invalid JSON reached the API');
  await form.getByLabel('Result (JSON)').fill('{"free": true}');
  await form.getByRole('button', { name: 'Submit result' }).click();
  await until('status completed after the result', async () => (await statusText()) === 'completed');
  await page.getByText('Monday is free.', { exact: true }).waitFor();
  passed.push('client tool form');

  // Markup in model output is text: no element, no script, no dialog.
  const evil = '<img src=x onerror=alert(1)>';
  const xss = await startRun({ turns: [{ content: evil }] });
  await until('the markup run to complete', async () => (await statusOf(xss.run_id)) === 'completed');
  await openRun(xss.run_id);
  await page.getByText(evil, { exact: true }).waitFor();
  await page.waitForTimeout(300);
  if ((await page.locator('main img').count()) > 0) fail('model output became an <img> element');
  if (dialogs.length) fail(`a dialog opened: ${dialogs.join(', ')}`);
  passed.push('markup is text');

  // A planner's child run (sub-agents) waits for an approval: its card
  // shows on the planner's page, marked with the child, and Approve there
  // completes the child and then the planner; the child is listed and
  // linked.
  const planner = await api('POST', '/v1/runs', {
    agent: 'planner', messages: [{ role: 'user', content: 'Research beta.' }],
    model: { provider: 'scripted', turns: [{ tool_calls: [{ id: 'c1', name: 'agent/researcher', parameters: { task: 'Research beta.' } }] }, { content: 'Beta is researched.' }] },
  });
  await openRun(planner.run_id);
  const childCard = page.locator('article.card', { hasText: 'of child run' });
  await childCard.waitFor();
  const childID = (await childCard.locator('a').textContent()).trim();
  await childCard.getByRole('button', { name: 'Approve' }).click();
  await until('the planner to complete after its child', async () => (await statusText()) === 'completed');
  await page.getByText('Beta is researched.', { exact: true }).waitFor();
  const childLink = page.getByRole('list', { name: 'Child runs' }).getByRole('link', { name: childID });
  await childLink.click();
  await page.getByRole('heading', { name: `Run ${childID}` }).waitFor();
  await until('the child shown completed', async () => (await statusText()) === 'completed');
  passed.push('child run approved on its parent');

  // The step timeline shows a model turn the queue delivered again after
  // baton dev was killed while it ran (given only on the emulators).
  if (input.redelivered) {
    await openRun(input.redelivered);
    const row = page.locator('table.timeline tbody tr', { hasText: 'turn 1' }).first();
    await row.waitFor();
    const headers = await page.locator('table.timeline thead th').allTextContents();
    const cells = await row.locator('td').allTextContents();
    const col = (name) => cells[headers.indexOf(name)];
    if (!(Number(col('Redeliveries')) >= 1)) fail(`the redelivered turn's row shows no redelivery: ${headers.join('|')} / ${cells.join('|')}`);
    if (col('Outcome') !== 'replied') fail(`the redelivered turn's outcome is ${col('Outcome')}`);
    await page.screenshot({ path: join(artifacts, 'redelivered.png'), fullPage: true });
    passed.push('redelivery in the step timeline');
  }

  if (cspViolations.length) fail(`the page broke its Content Security Policy or threw: ${cspViolations.join(' | ')}`);
  passed.push('no CSP violation');
  process.stdout.write(JSON.stringify({ passed }));
} catch (err) {
  await page.screenshot({ path: join(artifacts, 'failure.png'), fullPage: true }).catch(() => {});
  process.stderr.write(`${err instanceof Failure ? err.message : err.stack}\npassed before: ${passed.join(', ')}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
