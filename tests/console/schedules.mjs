// Browser test of the web console's Schedules pages, run by
// tests/console_schedules_e2e_test.go against a running baton dev whose
// schedules the test created through the API (and whose clock it moved
// so that some fired): the list from the nav (agent, expression and time
// zone, next fire times in local time with the UTC in a title, paused or
// active, the last run linked); a schedule's page with its trigger
// history (fire time, outcome, run link, reason) and Pause, Resume and
// Delete; a scheduled run's page saying "Scheduled by" its schedule. In
// (stdin, JSON): base, token, chromium, artifacts, fired (a schedule
// with a started trigger and others), weekday (an active cron schedule in
// another zone that never fired), doomed (a schedule to delete). Out
// (stdout, JSON): {"passed": [...]} or exit 1 with the failure on stderr.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Failure, apiOf, checkContrast, checkWidth, fail, launch, readInput, until } from './lib.mjs';

// The browser's time zone is not UTC, so a local time and its UTC
// differ (and Chromium takes it from its environment).
process.env.TZ = 'America/New_York';
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
const utc = (iso) => `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
const row = (id) => page.locator(`table.schedules tr[data-schedule-id="${id}"]`);
const state = () => page.getByRole('status', { name: 'State' });
const openSchedule = async (id) => {
  await page.goto(`${base}/console/#/schedules/${encodeURIComponent(id)}`);
  await page.getByRole('heading', { name: `Schedule ${id}` }).waitFor();
};
// checkTimes: each fire time of the element is the API's, written in
// local time, with its UTC in the title.
const checkTimes = async (loc, isos, where) => {
  const times = loc.locator('time');
  if ((await times.count()) !== isos.length) fail(`${where} shows ${await times.count()} fire times, want ${isos.length}`);
  for (let i = 0; i < isos.length; i++) {
    const t = times.nth(i);
    if ((await t.getAttribute('datetime')) !== isos[i]) fail(`${where}: fire time ${i} is ${await t.getAttribute('datetime')}, want ${isos[i]}`);
    if ((await t.getAttribute('title')) !== utc(isos[i])) fail(`${where}: fire time ${i}'s title is ${await t.getAttribute('title')}, want ${utc(isos[i])}`);
    if ((await t.innerText()).trim() === '') fail(`${where}: fire time ${i} shows no text`);
  }
};

try {
  const all = (await api('GET', '/v1/schedules?limit=100')).schedules;
  const byID = Object.fromEntries(all.map((s) => [s.schedule_id, s]));
  for (const id of [input.fired, input.weekday, input.doomed]) {
    if (!byID[id]) fail(`the API does not list schedule ${id}`);
  }
  const history = (await api('GET', `/v1/schedules/${input.fired}/triggers`)).triggers;
  const started = history.find((t) => t.outcome === 'started');
  const skipped = history.find((t) => t.outcome !== 'started');
  if (!started || !skipped) fail(`schedule ${input.fired} wants a started trigger and another: ${JSON.stringify(history)}`);

  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();

  // The list, from the nav.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
  await page.getByRole('heading', { name: 'Schedules', exact: true }).waitFor();
  // More than a page (50): the rest after More schedules.
  const rows = page.locator('table.schedules tbody tr[data-schedule-id]');
  await until('the first page of schedules', async () => (await rows.count()) === 50);
  if (all.length <= 50) fail(`the test wants more than a page of schedules, has ${all.length}`);
  await checkPage('the first page of schedules');
  await page.getByRole('button', { name: 'More schedules' }).click();
  await until('every schedule', async () => (await rows.count()) === all.length);
  if ((await page.getByRole('button', { name: 'More schedules' }).count()) !== 0) fail('More schedules is offered after the last page');
  const order = await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.scheduleId));
  if (order.join() !== all.map((s) => s.schedule_id).join()) fail('the list is not in the API\'s order');
  for (const s of all.filter((x) => [input.fired, input.weekday, input.doomed].includes(x.schedule_id) || x === all[all.length - 1])) {
    const r = row(s.schedule_id);
    const t = await text(r);
    for (const want of [s.schedule_id, s.agent, s.cron || '', s.timezone, s.paused ? 'paused' : 'active', s.paused ? 'none while paused' : '']) {
      if (!t.includes(want)) fail(`the row of ${s.schedule_id} lacks "${want}": ${t}`);
    }
    await checkTimes(r.locator('td[data-label="Next fire times"]'), s.next_fire_times.slice(0, 3), `the row of ${s.schedule_id}`);
    if (s.last_run_id) {
      const href = await r.getByRole('link', { name: s.last_run_id }).getAttribute('href');
      if (href !== `#/runs/${s.last_run_id}`) fail(`the row of ${s.schedule_id} links its last run as ${href}`);
    } else if (!t.includes('none yet')) {
      fail(`the row of ${s.schedule_id}, which never started a run, says ${t}`);
    }
  }
  if (byID[input.weekday].next_fire_times.length < 3) fail(`schedule ${input.weekday} has fewer than 3 next fire times`);
  await checkPage('the schedules list');
  await page.screenshot({ path: join(artifacts, 'schedules.png') });
  await page.setViewportSize({ width: 420, height: 800 });
  await checkWidth(page, 'the schedules list at 420 px');
  await page.screenshot({ path: join(artifacts, 'schedules-narrow.png') });
  await page.setViewportSize({ width: 1280, height: 800 });
  passed.push('the list in pages: agent, expression and zone, next fire times local with UTC titles, state, last run; also at 420 px');

  // A schedule that fired: its history, latest first.
  await row(input.fired).getByRole('link', { name: input.fired }).click();
  await page.getByRole('heading', { name: `Schedule ${input.fired}` }).waitFor();
  // The history read from the API before (a fire time the clock reaches
  // meanwhile comes first, above them), latest first.
  const trs = page.locator('table.triggers tbody tr[data-fire-time]');
  await until('the trigger history', async () => (await trs.count()) >= history.length);
  const times = await trs.evaluateAll((rows) => rows.map((tr) => tr.dataset.fireTime));
  if (times.some((t, i) => i > 0 && !(Date.parse(times[i - 1]) > Date.parse(t)))) fail(`the history is not latest first: ${times.join(', ')}`);
  for (const [i, h] of history.entries()) {
    const tr = page.locator(`table.triggers tr[data-fire-time="${h.fire_time}"]`);
    const t = await text(tr);
    for (const want of [h.outcome, h.run_id || 'none', h.reason || '']) {
      if (!t.includes(want)) fail(`history row ${i} lacks "${want}": ${t}`);
    }
    await checkTimes(tr.locator('td[data-label="Fire time"]'), [h.fire_time], `history row ${i}`);
  }
  await checkPage('a schedule with its history');
  await page.screenshot({ path: join(artifacts, 'schedule-history.png'), fullPage: true });
  await page.setViewportSize({ width: 420, height: 800 });
  await checkWidth(page, 'a schedule at 420 px');
  await page.screenshot({ path: join(artifacts, 'schedule-narrow.png') });
  await page.setViewportSize({ width: 1280, height: 800 });
  passed.push('a schedule\'s trigger history: fire time, outcome, run, reason, latest first');

  // The started trigger's run says which schedule started it.
  await page.locator(`table.triggers tr[data-fire-time="${started.fire_time}"]`).getByRole('link', { name: started.run_id }).click();
  await page.getByRole('heading', { name: `Run ${started.run_id}` }).waitFor();
  const by = page.getByTestId('scheduled-by');
  await by.waitFor();
  if (!(await text(by)).startsWith(`Scheduled by ${input.fired}, for the fire time`)) fail(`the run's page says: ${await text(by)}`);
  await checkTimes(by, [started.fire_time], 'the run\'s schedule line');
  await page.screenshot({ path: join(artifacts, 'schedule-run.png') });
  await by.getByRole('link', { name: input.fired }).click();
  await page.getByRole('heading', { name: `Schedule ${input.fired}` }).waitFor();
  // The runs list marks it too.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
  const listed = page.locator(`table.runs tr[data-run-id="${started.run_id}"] .scheduled`);
  await listed.waitFor();
  if ((await text(listed)) !== `scheduled by ${input.fired}` || (await listed.getByRole('link').getAttribute('href')) !== `#/schedules/${input.fired}`) {
    fail(`the runs list says of the scheduled run: ${await text(listed)}`);
  }
  await checkWidth(page, 'the runs list with scheduled runs');
  await page.screenshot({ path: join(artifacts, 'schedule-runs.png') });
  passed.push('a scheduled run links its schedule and fire time, on its page and in the runs list');

  // Pause and Resume, through the buttons.
  await openSchedule(input.weekday);
  if ((await text(state())) !== 'active') fail(`a new schedule's state is ${await text(state())}`);
  await checkTimes(page.locator('ul.next').last(), byID[input.weekday].next_fire_times, 'the next fire times');
  await page.getByText('No fire time reached yet.').waitFor();
  await page.getByRole('button', { name: 'Pause' }).click();
  await until('the state paused', async () => (await text(state())) === 'paused');
  if (!(await text(page.locator('#next-h + *'))).includes('none while paused')) fail('a paused schedule shows next fire times');
  await page.getByText('Paused: it starts no runs until resumed.').waitFor();
  if (!(await api('GET', `/v1/schedules/${input.weekday}`)).paused) fail('Pause did not pause the schedule in the API');
  await checkPage('a paused schedule');
  await page.screenshot({ path: join(artifacts, 'schedule-paused.png') });
  await page.getByRole('button', { name: 'Resume' }).click();
  await until('the state active', async () => (await text(state())) === 'active');
  if ((await api('GET', `/v1/schedules/${input.weekday}`)).paused) fail('Resume did not resume the schedule in the API');
  await checkPage('a resumed schedule');
  passed.push('Pause and Resume');

  // Delete: asked first, kept, then confirmed.
  await openSchedule(input.doomed);
  await page.getByRole('button', { name: 'Delete' }).click();
  const confirm = page.getByRole('alertdialog');
  await confirm.waitFor();
  if (!(await text(confirm)).includes(`Delete schedule ${input.doomed}?`)) fail(`the confirmation: ${await text(confirm)}`);
  await checkPage('the deletion\'s confirmation');
  await page.screenshot({ path: join(artifacts, 'schedule-delete.png') });
  await confirm.getByRole('button', { name: 'Keep it' }).click();
  await until('the confirmation to close', async () => (await confirm.count()) === 0);
  await api('GET', `/v1/schedules/${input.doomed}`);
  await page.getByRole('button', { name: 'Delete' }).click();
  await confirm.getByRole('button', { name: 'Yes, delete it' }).click();
  await page.getByText(`Deleted schedule ${input.doomed}.`).waitFor();
  if ((await text(state())) !== 'deleted') fail(`a deleted schedule's state is ${await text(state())}`);
  const gone = await fetch(`${base}/v1/schedules/${input.doomed}`, { headers: { Authorization: `Bearer ${token}` } });
  if (gone.status !== 404) fail(`the deleted schedule answers ${gone.status}`);
  await page.getByRole('link', { name: '← Schedules' }).click();
  await until('the list', async () => (await rows.count()) > 0);
  if ((await row(input.doomed).count()) !== 0) fail('the deleted schedule is still listed');
  passed.push('Delete, after a confirmation');

  for (const label of ['More schedules', 'Pause', 'Resume', 'Delete', 'Yes, delete it', 'Keep it']) {
    if (!checked.has(label)) fail(`the contrast of button "${label}" was never checked (checked: ${[...checked].join(', ')})`);
  }
  if (problems.length) fail(`the page broke its Content Security Policy or threw: ${problems.join(' | ')}`);
  process.stdout.write(JSON.stringify({ passed }));
} catch (err) {
  await page.screenshot({ path: join(artifacts, 'schedules-failure.png'), fullPage: true }).catch(() => {});
  process.stderr.write(`${err instanceof Failure ? err.message : err.stack}\npassed before: ${passed.join(', ')}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
