// Browser test of the web console's Memories page, run by
// tests/console_memories_e2e_test.go against the system served in
// process, whose store it seeded: the caller's own memories (more than a
// page) with created date, source, source run linked to its page, and
// text; another subject refused without memories:subject; Delete of one
// memory; "Erase all of this subject" kept, then confirmed; a back
// office naming another subject and deleting one of its memories. In
// (stdin, JSON): base, token (acme's ann), backoffice (acme, with
// memories:subject), chromium, artifacts, run (the memories' source
// run), count (ann's memories). Out (stdout, JSON): {"passed": [...]} or
// exit 1 with the failure on stderr.
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
const text = async (loc) => (await loc.innerText()).replace(/\s+/g, ' ').trim();
const rows = page.locator('table.memories tbody tr[data-memory-id]');
const row = (id) => page.locator(`table.memories tr[data-memory-id="${id}"]`);
const signIn = async (tok) => {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill(tok);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
};
const ownCount = async () => (await api('GET', '/v1/memories?limit=100')).memories.length;

try {
  const own = (await api('GET', '/v1/memories?limit=100')).memories;
  if (own.length !== input.count) fail(`the API lists ${own.length} memories of ann, want ${input.count}`);
  await signIn(token);

  // The caller's own memories, from the nav: a page of 50, then more.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Memories' }).click();
  await page.getByRole('heading', { name: 'Memories', exact: true }).waitFor();
  await page.getByRole('heading', { name: '50+ memories of ann' }).waitFor();
  if ((await rows.count()) !== 50) fail(`the first page shows ${await rows.count()} memories, want 50`);
  if ((await page.getByLabel('Subject').inputValue()) !== '') fail('the subject field is not empty (the caller\'s own) by default');
  for (const m of own.slice(0, 3)) {
    const r = row(m.id);
    const t = await text(r);
    for (const want of [m.id, m.source, m.source_run_id, m.text.replace(/\s+/g, ' ')]) {
      if (!t.includes(want)) fail(`the row of ${m.id} lacks "${want}": ${t}`);
    }
    if ((await r.locator('time').getAttribute('datetime')) !== m.created_at) fail(`the row of ${m.id} is not dated ${m.created_at}`);
    if ((await r.locator('time').innerText()).trim() === '') fail(`the row of ${m.id} shows no created date`);
    const href = await r.getByRole('link', { name: m.source_run_id }).getAttribute('href');
    if (href !== `#/runs/${m.source_run_id}`) fail(`the row of ${m.id} links ${href}, want its run`);
  }
  // A text of two lines keeps its line break.
  const multi = own.find((m) => m.text.includes('\n'));
  if (!(await row(multi.id).locator('td.text').innerText()).includes('\n')) fail('a memory of two lines is shown on one');
  await checkPage('the memories list');
  await page.screenshot({ path: join(artifacts, 'memories.png'), fullPage: false });
  await page.getByRole('button', { name: 'More memories' }).click();
  await page.getByRole('heading', { name: `${input.count} memories of ann` }).waitFor();
  if ((await rows.count()) !== input.count) fail(`after More memories, ${await rows.count()} rows, want ${input.count}`);
  // A narrow window: each memory a block of labelled lines.
  await page.setViewportSize({ width: 420, height: 800 });
  await checkWidth(page, 'the memories list at 420 px');
  await page.screenshot({ path: join(artifacts, 'memories-narrow.png') });
  await page.setViewportSize({ width: 1280, height: 800 });
  passed.push('own memories: created, source, source run, text, in pages, also at 420 px');

  // The source run's link opens the run.
  await row(own[1].id).getByRole('link', { name: input.run }).click();
  await page.getByRole('heading', { name: `Run ${input.run}` }).waitFor();
  await page.goBack();
  await page.getByRole('heading', { name: '50+ memories of ann' }).waitFor();
  passed.push('a memory links its source run');

  // Another subject needs memories:subject.
  await page.getByLabel('Subject').fill('bob');
  await page.getByRole('button', { name: 'Show memories' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const refused = await text(alert);
  if (!refused.includes('memories:subject') || !page.url().endsWith('#/memories?subject=bob')) fail(`naming bob without memories:subject: ${refused} at ${page.url()}`);
  if ((await rows.count()) !== 0) fail('bob\'s memories are shown to ann');
  await checkPage('a refused subject');
  await page.screenshot({ path: join(artifacts, 'memories-refused.png') });
  await page.getByLabel('Subject').fill('');
  await page.getByRole('button', { name: 'Show memories' }).click();
  await page.getByRole('heading', { name: '50+ memories of ann' }).waitFor();
  passed.push('another subject refused without memories:subject');

  // Delete one memory.
  const gone = own[2];
  await page.getByRole('button', { name: `Delete memory ${gone.id}` }).click();
  await until(`${gone.id} to leave the list`, async () => (await row(gone.id).count()) === 0);
  await page.getByText(`Deleted memory ${gone.id}.`).waitFor();
  if ((await ownCount()) !== input.count - 1) fail('the API still lists the deleted memory');
  passed.push('Delete one memory');

  // Erase: the confirmation, kept, then confirmed.
  await page.getByRole('button', { name: 'Erase all of this subject' }).click();
  const confirm = page.getByRole('alertdialog');
  await confirm.waitFor();
  if (!(await text(confirm)).includes('Erase every memory of ann? This cannot be undone.')) fail(`the confirmation: ${await text(confirm)}`);
  await checkPage('the erasure\'s confirmation');
  await confirm.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, 'memories-erase.png') });
  await confirm.getByRole('button', { name: 'Keep them' }).click();
  await until('the confirmation to close', async () => (await confirm.count()) === 0);
  if ((await ownCount()) !== input.count - 1) fail('Keep them erased memories');
  await page.getByRole('button', { name: 'Erase all of this subject' }).click();
  await confirm.getByRole('button', { name: 'Yes, erase them all' }).click();
  await page.getByText(`Erased the memories of ann: ${input.count - 1} deleted.`).waitFor();
  await page.getByText('No memories of your own subject.').waitFor();
  if ((await ownCount()) !== 0) fail('the API still lists memories of ann after the erasure');
  await checkPage('an erased subject');
  await page.screenshot({ path: join(artifacts, 'memories-erased.png') });
  passed.push('Erase all of this subject, after a confirmation');

  // A back office names bob and deletes one of his memories.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(input.backoffice);
  await page.goto(`${base}/console/#/memories?subject=bob`);
  await page.getByRole('heading', { name: '2 memories of bob' }).waitFor();
  if ((await page.getByLabel('Subject').inputValue()) !== 'bob') fail('the subject field does not show the subject of the address');
  const bob = (await apiOf(base, input.backoffice)('GET', '/v1/memories?subject=bob')).memories;
  await page.getByRole('button', { name: `Delete memory ${bob[0].id}` }).click();
  await page.getByRole('heading', { name: '1 memory of bob' }).waitFor();
  await checkPage('another subject\'s memories');
  await page.screenshot({ path: join(artifacts, 'memories-subject.png') });
  passed.push('a back office names another subject and deletes a memory');

  for (const label of ['Show memories', 'Delete', 'More memories', 'Erase all of this subject', 'Yes, erase them all', 'Keep them']) {
    if (!checked.has(label)) fail(`the contrast of button "${label}" was never checked (checked: ${[...checked].join(', ')})`);
  }
  if (problems.length) fail(`the page broke its Content Security Policy or threw: ${problems.join(' | ')}`);
  process.stdout.write(JSON.stringify({ passed }));
} catch (err) {
  await page.screenshot({ path: join(artifacts, 'memories-failure.png'), fullPage: true }).catch(() => {});
  process.stderr.write(`${err instanceof Failure ? err.message : err.stack}\npassed before: ${passed.join(', ')}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
