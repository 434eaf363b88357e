// Browser tests of the web console, run by tests/console_e2e_test.go:
// playwright-core drives Debian's Chromium (headless) against a running
// baton dev. In (stdin, JSON): base (baton dev's URL), token (a tenant's
// API token), chromium (the browser's path), artifacts (a folder for the
// screenshots), redelivered (optional: a run whose first model turn was
// delivered again after baton dev was killed mid-turn). Out (stdout, JSON): {"passed": [...names]} or exit 1 with
// the failure on stderr.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Failure, apiOf, checkContrast, checkWidth as widthAt, fail, launch, readInput, until } from './lib.mjs';

const input = await readInput();
const { base, token, artifacts } = input;
mkdirSync(artifacts, { recursive: true });
const api = apiOf(base, token);

const startRun = (model, extra = {}) =>
  api('POST', '/v1/runs', { agent: 'e2e', messages: [{ role: 'user', content: 'Console test' }], model: { provider: 'scripted', ...model }, ...extra });

async function statusOf(id) {
  return (await api('GET', `/v1/runs/${id}`)).status;
}

const { browser, page, dialogs, problems: cspViolations } = await launch(input.chromium);
const passed = [];

const statusText = () => page.getByRole('status', { name: 'Status' }).textContent();

const contrastChecked = new Set();
async function checkButtons(where) {
  for (const label of await checkContrast(page, where)) contrastChecked.add(label.replace(/^[▸▾] \d+ /, '▸ N '));
}
const checkWidth = (where) => widthAt(page, where);

// listStatuses records the status of every read of the run list.
const listStatuses = [];
page.on('response', (r) => {
  if (/\/v1\/runs(\?|$)/.test(new URL(r.url()).pathname + new URL(r.url()).search.slice(0, 1))) listStatuses.push(r.status());
});
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
  await page.locator(`tr[data-run-id="${tool.run_id}"]`).getByRole('link', { name: 'Console test' }).click();
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
  const row = page.locator(`tr[data-run-id="${approval.run_id}"]`);
  await until('the waiting marker', async () => (await row.textContent()).includes('waiting on you'));
  await page.screenshot({ path: join(artifacts, 'runs.png'), fullPage: true });
  await row.getByRole('link', { name: 'Console test' }).click();
  await page.getByRole('heading', { name: `Run ${approval.run_id}` }).waitFor();
  await until('status approval_required', async () => (await statusText()) === 'approval_required');
  const card = page.locator('article.card', { hasText: 'ability/send_email' });
  await card.waitFor();
  if (!(await card.textContent()).includes('ann@example.com')) fail('the approval card lacks the preview');
  await checkButtons('a run waiting for approval');
  await card.screenshot({ path: join(artifacts, 'approval-card.png') });
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
  await form.getByRole('button', { name: 'Submit result' }).waitFor();
  await checkButtons('a run waiting for a client tool');
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

  // An operator's runs list. A planner fans out to two researchers in
  // parallel: alpha ends at once, beta waits for an approval a while.
  const fan = await api('POST', '/v1/runs', {
    agent: 'planner', parallel_tool_calls: true,
    messages: [{ role: 'user', content: 'Research alpha and beta for the quarterly review, then compare what the two researchers found in a short table.' }],
    model: {
      provider: 'scripted', model: 'demo',
      turns: [
        { content: 'Asking two researchers.', usage: { prompt_tokens: 1200, completion_tokens: 300 },
          tool_calls: [{ id: 'fast', name: 'agent/researcher', parameters: { task: 'Research alpha.' } }, { id: 'slow', name: 'agent/researcher', parameters: { task: 'Research beta.' } }] },
        { content: 'Alpha and beta are both researched.', usage: { prompt_tokens: 1500, completion_tokens: 200 } },
      ],
    },
  });
  const waiting = await until('the beta child to wait for its approval', async () => {
    const v = await api('GET', `/v1/runs/${fan.run_id}`);
    const acts = (v.pending && v.pending.actions) || [];
    const alpha = (v.children || []).find((c) => c.tool_call_id === 'fast');
    return acts.length === 1 && alpha && alpha.status === 'completed' ? acts[0] : null;
  });
  await new Promise((r) => setTimeout(r, 1500));
  await api('POST', `/v1/runs/${waiting.run_id}/approvals/${waiting.action_id}`, { decision: 'accept' });
  await until('the planner to complete', async () => (await statusOf(fan.run_id)) === 'completed');
  const fanned = await api('GET', `/v1/runs?parent=${fan.run_id}`);
  if (fanned.runs.length !== 2) fail(`the planner's children: ${JSON.stringify(fanned)}`);

  await page.goto(`${base}/console/#/runs`);
  const fanRow = page.locator(`tr[data-run-id="${fan.run_id}"]`);
  await fanRow.waitFor();
  await until('the planner completed on the list', async () => (await fanRow.textContent()).includes('completed'));
  const headers = await page.locator('table.runs thead th').allTextContents();
  for (const h of ['Run', 'Agent', 'Status', 'Started', 'Duration', 'Turns', 'Tokens', 'Cost']) {
    if (!headers.includes(h)) fail(`the runs list has no ${h} column: ${headers.join('|')}`);
  }
  const cell = async (row, name) => (await row.locator('td').nth(headers.indexOf(name)).textContent()).trim();
  if (!(await cell(fanRow, 'Run')).startsWith('Research alpha and beta')) fail(`the planner's row shows ${await cell(fanRow, 'Run')}`);
  const fanView = await api('GET', `/v1/runs/${fan.run_id}`);
  if ((await cell(fanRow, 'Agent')) !== `plannerversion ${fanView.agent_version}` || !fanView.agent_version || (await cell(fanRow, 'Turns')) !== '2') {
    fail(`the planner's row (agent version ${fanView.agent_version}): ${await fanRow.textContent()}`);
  }
  if (!/^\d+(\.\d+)? (ms|s)$/.test(await cell(fanRow, 'Duration'))) fail(`the planner's duration ${await cell(fanRow, 'Duration')}`);
  if (!/^\$\d+\.\d{4}$/.test(await cell(fanRow, 'Cost')) || (await cell(fanRow, 'Cost')) === '$0.0000') fail(`the planner's cost ${await cell(fanRow, 'Cost')}`);
  if ((await cell(fanRow, 'Tokens')).replace(/\D/g, '') !== String(fanned.runs.reduce((n, r) => n + r.total_tokens, 3200))) fail(`the planner's tokens ${await cell(fanRow, 'Tokens')}`);
  // The children are nested under their parent, collapsed: no row of
  // their own until the parent's button opens them.
  for (const c of fanned.runs) {
    if (await page.locator(`tr[data-run-id="${c.run_id}"]`).count()) fail(`child run ${c.run_id} is a row of the list before its parent is opened`);
  }
  const toggle = fanRow.getByRole('button', { name: '2 child runs' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'false') fail('the children are not collapsed');
  await checkButtons('the runs list');
  await checkWidth('the runs list');
  await toggle.click();
  const kids = page.locator('tr.child');
  await until('the child rows', async () => (await kids.count()) === 2);
  const rowIDs = await page.locator('table.runs tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.runId));
  const at = rowIDs.indexOf(fan.run_id);
  const under = rowIDs.slice(at + 1, at + 3).sort().join(' ');
  if (under !== fanned.runs.map((r) => r.run_id).sort().join(' ')) fail(`the children are not under their parent: ${rowIDs.join(' ')}`);
  for (let i = 0; i < 2; i++) {
    const k = kids.nth(i);
    const text = await k.textContent();
    if (!text.includes('child run') || !text.includes('researcher')) fail(`a child row lacks its marker or agent: ${text}`);
  }
  const [alphaRow, betaRow] = [kids.filter({ hasText: 'Research alpha.' }), kids.filter({ hasText: 'Research beta.' })];
  if (!(await cell(alphaRow, 'Run')).startsWith('↳ child run Research alpha.') || !(await cell(betaRow, 'Run')).startsWith('↳ child run Research beta.')) {
    fail(`child rows ${await cell(alphaRow, 'Run')} / ${await cell(betaRow, 'Run')}`);
  }
  const seconds = (t) => (t.endsWith(' ms') ? parseFloat(t) / 1000 : parseFloat(t));
  if (!(seconds(await cell(alphaRow, 'Duration')) < 1.2 && seconds(await cell(betaRow, 'Duration')) >= 1.5)) {
    fail(`child durations alpha ${await cell(alphaRow, 'Duration')}, beta ${await cell(betaRow, 'Duration')}`);
  }
  await checkButtons('the runs list with children open');
  await checkWidth('the runs list with children open');
  await page.screenshot({ path: join(artifacts, 'runs-children.png'), fullPage: true });
  passed.push('runs list: entries, children nested and collapsed');

  // Filters: agent (the planner's runs only), status, time.
  await page.getByLabel('Agent').selectOption('planner');
  await until('only planner runs', async () => {
    const agents = await page.locator('table.runs tbody tr:not(.child)').evaluateAll((rows) => rows.map((r) => r.children[1] && r.children[1].firstChild.textContent));
    return agents.length >= 2 && agents.every((a) => a === 'planner');
  });
  await page.getByLabel('Status').selectOption('approval_required');
  await page.getByText('No runs match these filters.').waitFor();
  await page.getByLabel('Status').selectOption('');
  await page.getByLabel('Agent').selectOption('');
  await page.getByLabel('Started').selectOption({ label: 'last hour' });
  await fanRow.waitFor();
  await page.getByLabel('Started').selectOption({ label: 'any time' });
  passed.push('runs list filters');

  // The list is read again with its ETag: unchanged, the API answers 304
  // without a body; a new run comes in with a 200.
  await page.reload();
  await fanRow.waitFor();
  await until('the list read again unchanged', async () => listStatuses.at(-1) === 304);
  listStatuses.length = 0;
  await page.waitForTimeout(4500);
  if (listStatuses.length < 2 || listStatuses.some((st) => st !== 304)) fail(`an unchanged list was read with statuses ${listStatuses.join(', ')}`);
  const fresh = await startRun({ turns: [{ content: 'New.' }] });
  await page.locator(`tr[data-run-id="${fresh.run_id}"]`).waitFor();
  if (!listStatuses.includes(200)) fail(`the new run came without a 200: ${listStatuses.join(', ')}`);
  passed.push('runs list updates by conditional reads');

  // A narrow window: the list is a column of runs, no sideways scroll.
  await page.setViewportSize({ width: 420, height: 800 });
  await checkWidth('the runs list at 420 px');
  await page.screenshot({ path: join(artifacts, 'runs-narrow.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  // The planner's page: each child's call took its own time (alpha's is
  // not beta's), the children are listed with theirs, and the page fits.
  await openRun(fan.run_id);
  await until('status completed', async () => (await statusText()) === 'completed');
  const stepHeaders = await page.locator('table.timeline thead th').allTextContents();
  const took = async (id) => (await page.locator(`table.timeline tr[data-call-id="${id}"] td`).nth(stepHeaders.indexOf('Took')).textContent()).trim();
  if (!(seconds(await took('fast')) < 1.2 && seconds(await took('slow')) >= 1.5)) fail(`the calls took: fast ${await took('fast')}, slow ${await took('slow')}`);
  const kidsList = page.getByRole('list', { name: 'Child runs' });
  if (!(await kidsList.locator('li').first().textContent()).includes('took')) fail('the child runs list has no durations');
  await checkButtons('a run with children');
  await checkWidth('a run with children');
  await page.screenshot({ path: join(artifacts, 'run-children.png'), fullPage: true });
  passed.push('a run with parallel children');

  // The step timeline shows a model turn the queue delivered again after
  // baton dev was killed while it ran (given only on the emulators).
  if (input.redelivered) {
    await openRun(input.redelivered);
    const row = page.locator('table.timeline tbody tr', { hasText: 'turn 1' }).first();
    await row.waitFor();
    const headers = await page.locator('table.timeline thead th').allTextContents();
    const cells = await row.locator('td').allTextContents();
    const col = (name) => cells[headers.indexOf(name)];
    if (!/delivered again [1-9]/.test(col('Deliveries'))) fail(`the redelivered turn's row shows no redelivery: ${headers.join('|')} / ${cells.join('|')}`);
    if (col('Outcome') !== 'replied') fail(`the redelivered turn's outcome is ${col('Outcome')}`);
    await checkWidth('a run with deliveries');
    await page.screenshot({ path: join(artifacts, 'redelivered.png'), fullPage: true });
    passed.push('redelivery in the step timeline');
  }

  // The run page names the run's agent version; the versions page (a
  // credential with agents:manage) shows the default alias at 100 % on
  // that version, and the runs of this test counted on it.
  const version = (await api('GET', `/v1/runs/${fan.run_id}`)).agent_version;
  if (!/^av_[0-9a-f]{16}$/.test(version || '')) fail(`the run has no agent version: ${version}`);
  const versionFact = page.locator('dl.facts div', { hasText: 'Version' }).locator('dd');
  if ((await versionFact.textContent()).trim() !== version) fail(`the run page's version is ${await versionFact.textContent()}, want ${version}`);
  await page.evaluate((t) => sessionStorage.setItem('baton.console.token', t), input.adminToken);
  await page.goto(`${base}/console/#/versions`);
  const aliasRow = page.locator('tr[data-alias="default"]');
  await aliasRow.waitFor();
  const aliasText = await aliasRow.textContent();
  if (!aliasText.includes(version) || !aliasText.includes('100%')) fail(`the default alias row: ${aliasText}`);
  const versionRow = page.locator(`tr[data-version="${version}"]`);
  const counted = Number((await versionRow.locator('td').last().textContent()).trim());
  if (!(counted >= 1) || !(await versionRow.textContent()).includes('default')) fail(`the version row: ${await versionRow.textContent()}`);
  await checkButtons('the versions page');
  await checkWidth('the versions page');
  await page.screenshot({ path: join(artifacts, 'versions.png'), fullPage: true });
  await page.evaluate((t) => sessionStorage.setItem('baton.console.token', t), token);
  passed.push('agent versions');

  for (const label of ['Sign out', 'Approve', 'Reject', 'Send message', 'Cancel run', 'Interrupt', 'Submit result', 'Newer runs', 'Older runs', '▸ N child runs']) {
    if (!contrastChecked.has(label)) fail(`the contrast of button "${label}" was never checked (checked: ${[...contrastChecked].join(', ')})`);
  }
  passed.push('every button label ≥ 4.5:1');

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
