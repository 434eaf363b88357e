// Browser test of forks in the web console, run by
// tests/console_fork_e2e_test.go against a running baton dev: "Fork from
// here" on a run's own user and assistant messages (never on tool
// messages), its form (the message's text to edit, the tools mode, an
// optional agent version) starting the fork and showing the new run, the
// fork's replayed tool result marked, the lineage on both pages, and a
// replay fork's unrecorded call shown as not_recorded. In (stdin, JSON):
// base, token, chromium, artifacts; baton dev serves the agent echoer.
// Out (stdout, JSON): {"passed": [...]} or exit 1 with the failure on
// stderr.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Failure, apiOf, checkContrast, checkWidth, fail, launch, readInput, until } from './lib.mjs';

const input = await readInput();
const { base, token, artifacts } = input;
mkdirSync(artifacts, { recursive: true });
const api = apiOf(base, token);
const { browser, page, problems } = await launch(input.chromium);
const passed = [];
const checked = new Set();
const checkPage = async (where) => {
  for (const label of await checkContrast(page, where)) checked.add(label);
  await checkWidth(page, where);
};
const statusText = () => page.getByRole('status', { name: 'Status' }).textContent();
const openRun = async (id) => {
  await page.goto(`${base}/console/#/runs/${encodeURIComponent(id)}`);
  await page.getByRole('heading', { name: `Run ${id}` }).waitFor();
};

try {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();

  // A finished run whose tool ran: its own messages may be forked.
  // The agent echoer's own script: a call of ability/echo, then an answer.
  const src = await api('POST', '/v1/runs', { agent: 'echoer', messages: [{ role: 'user', content: 'Echo hello fork' }] });
  await until('the source run to complete', async () => (await api('GET', `/v1/runs/${src.run_id}`)).status === 'completed');
  const msgs = (await api('GET', `/v1/runs/${src.run_id}/messages?limit=1000`)).messages;
  const userMsg = msgs.find((m) => m.role === 'user');
  await openRun(src.run_id);
  await until('status completed', async () => (await statusText()) === 'completed');
  for (const m of msgs) {
    const n = await page.locator(`li.msg[data-seq="${m.seq}"]`).getByRole('button', { name: 'Fork from here' }).count();
    const want = m.role === 'user' || m.role === 'assistant' ? 1 : 0;
    if (n !== want) fail(`message ${m.seq} (${m.role}) has ${n} "Fork from here" buttons, want ${want}`);
  }
  if (await page.locator('li.msg.tool').getByRole('button', { name: 'Fork from here' }).count()) fail('a tool call offers "Fork from here"');
  passed.push('fork points: the run\'s user and assistant messages only');

  // The form: the message's text to edit, the tools mode, a version.
  const li = page.locator(`li.msg[data-seq="${userMsg.seq}"]`);
  const open = li.getByRole('button', { name: 'Fork from here' });
  await open.click();
  if ((await open.getAttribute('aria-expanded')) !== 'true') fail('the fork form\'s button is not expanded');
  const form = li.locator('form.fork-form');
  const text = form.getByLabel('Message');
  if ((await text.inputValue()) !== userMsg.content) fail(`the form's message is ${await text.inputValue()}, want ${userMsg.content}`);
  if ((await form.getByLabel('Tool calls').inputValue()) !== 'reuse') fail('the tools mode is not reuse by default');
  await text.fill('Echo hello fork, please');
  // A version the API refuses: its error shows in the form, nothing
  // starts; the form then sends the corrected body.
  await form.getByLabel('Agent version (optional)').fill('av_0000000000000000');
  await form.getByRole('button', { name: 'Start fork' }).click();
  const refused = await until('the refusal', async () => {
    const alert = form.getByRole('alert');
    return (await alert.count()) ? alert.textContent() : null;
  });
  if (!/version/i.test(refused) || !page.url().includes(src.run_id)) fail(`a refused fork: ${refused} at ${page.url()}`);
  if ((await api('GET', `/v1/runs?forked_from=${src.run_id}`)).runs.length) fail('a refused fork started a run');
  await form.getByLabel('Agent version (optional)').fill('');
  await checkPage('a run with the fork form open');
  await li.screenshot({ path: join(artifacts, 'fork-form.png') });
  await form.getByRole('button', { name: 'Start fork' }).click();
  const forkID = await until('the fork\'s page', async () => {
    const m = /#\/runs\/([^/?]+)$/.exec(page.url());
    return m && decodeURIComponent(m[1]) !== src.run_id ? decodeURIComponent(m[1]) : null;
  });
  await page.getByRole('heading', { name: `Run ${forkID}` }).waitFor();
  const forks = (await api('GET', `/v1/runs?forked_from=${src.run_id}`)).runs;
  if (forks.length !== 1 || forks[0].run_id !== forkID) fail(`the source's forks: ${JSON.stringify(forks)}`);
  passed.push('fork from the form (a refusal shown in it), then its page');

  // The fork: its lineage, its edited message, its reused call marked.
  await until('the fork to complete', async () => (await statusText()) === 'completed', 30000);
  const lineage = page.getByTestId('lineage');
  const line = (await lineage.textContent()).replace(/\s+/g, ' ');
  if (!line.includes(`Forked from ${src.run_id} at message ${userMsg.seq} (tools: reuse)`)) fail(`the fork's lineage: ${line}`);
  await page.getByText('Echo hello fork, please', { exact: true }).waitFor();
  const call = page.locator('li.msg.tool[data-tool-call-id]').last();
  await call.waitFor();
  const callText = (await call.textContent()).replace(/\s+/g, ' ');
  if (!callText.includes('replayed') || !callText.includes(src.run_id)) fail(`the fork's call is not marked replayed from ${src.run_id}: ${callText}`);
  const step = (await page.locator(`table.timeline tr[data-call-id="${await call.getAttribute('data-tool-call-id')}"]`).textContent()).replace(/\s+/g, ' ');
  if (!step.includes('succeeded, replayed')) fail(`the fork's call's step: ${step}`);
  const fv = await api('GET', `/v1/runs/${forkID}`);
  const rm = (fv.result.messages.filter((m) => m.role === 'tool_result').at(-1) || {}).metadata || {};
  if (rm.replayed !== true) fail(`the fork's tool result is not replayed: ${JSON.stringify(rm)}`);
  await checkPage('a fork');
  await page.screenshot({ path: join(artifacts, 'fork.png'), fullPage: true });
  passed.push('the fork: lineage and a replayed result');

  // The source's page names its fork, linked.
  await lineage.getByRole('link', { name: src.run_id }).click();
  await page.getByRole('heading', { name: `Run ${src.run_id}` }).waitFor();
  const srcLine = page.getByTestId('lineage');
  await until('the source\'s forks', async () => (await srcLine.textContent()).replace(/\s+/g, ' ').includes(`Forks: ${forkID}`));
  await checkPage('a run with forks');
  await page.screenshot({ path: join(artifacts, 'fork-source.png'), fullPage: true });
  await srcLine.getByRole('link', { name: forkID }).click();
  await page.getByRole('heading', { name: `Run ${forkID}` }).waitFor();
  passed.push('lineage on the source');

  // A replay fork whose model makes a call the source never made: the
  // call fails not_recorded, and the page says so.
  const replay = await api('POST', `/v1/runs/${src.run_id}/fork`, {
    seq: userMsg.seq, tools: 'replay',
    model: { provider: 'scripted', turns: [{ content: 'Trying.', tool_calls: [{ id: 'call_new', name: 'ability/echo', parameters: { text: 'never sent' } }] }, { content: 'Could not.' }] },
  });
  await openRun(replay.run_id);
  await until('the replay fork to complete', async () => (await statusText()) === 'completed', 30000);
  const unrecorded = page.locator('li.msg.tool[data-tool-call-id="call_new"]');
  await unrecorded.waitFor();
  const unText = (await unrecorded.textContent()).replace(/\s+/g, ' ');
  if (!unText.includes('not recorded') || !unText.includes('Not executed')) fail(`the unrecorded call: ${unText}`);
  await checkPage('a replay fork');
  await unrecorded.screenshot({ path: join(artifacts, 'fork-not-recorded.png') });
  passed.push('a replay fork\'s unrecorded call');

  // An assistant message's form holds its answer (left as it is, the
  // model is asked again); Close hides it; at 420 px the page with the
  // form open does not scroll sideways.
  await openRun(src.run_id);
  const answer = msgs.filter((m) => m.role === 'assistant').at(-1);
  const again = page.locator(`li.msg[data-seq="${answer.seq}"]`);
  await again.getByRole('button', { name: 'Fork from here' }).click();
  if ((await again.getByLabel('Answer').inputValue()) !== answer.content) fail('the assistant message\'s form lacks its answer');
  if (!(await again.locator('form.fork-form').textContent()).includes('the model is asked again')) fail('the answer form does not say what an unedited answer does');
  await page.setViewportSize({ width: 420, height: 800 });
  await checkWidth(page, 'a run with the fork form open at 420 px', { tablesMayScroll: true });
  await page.screenshot({ path: join(artifacts, 'fork-narrow.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await again.getByRole('button', { name: 'Close' }).click();
  if (await again.locator('form.fork-form').count()) fail('Close left the fork form open');
  for (const label of ['Fork from here', 'Start fork', 'Close']) {
    if (!checked.has(label)) fail(`the contrast of button "${label}" was never checked (checked: ${[...checked].join(', ')})`);
  }
  passed.push('an answer\'s form, Close, 420 px, every fork button label ≥ 4.5:1');

  if (problems.length) fail(`the page broke its Content Security Policy or threw: ${problems.join(' | ')}`);
  process.stdout.write(JSON.stringify({ passed }));
} catch (err) {
  await page.screenshot({ path: join(artifacts, 'fork-failure.png'), fullPage: true }).catch(() => {});
  process.stderr.write(`${err instanceof Failure ? err.message : err.stack}\npassed before: ${passed.join(', ')}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
