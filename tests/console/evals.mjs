// Browser test of evals in the web console, run by
// tests/console_eval_e2e_test.go against a running baton dev: the Evals
// page in the nav (each eval's name, agent, version, status, progress
// bar, pass rate), an eval's page (each case's verdict, failing checks
// with their details, the judge's score and reason, a link to its run,
// the totals), "Show only failed cases", comparing two evals side by
// side per case, a refused comparison, and Cancel on a running eval. In
// (stdin, JSON): base, token, chromium, artifacts, a and b (two completed
// evals of one dataset; b fails some cases), v2 (b's version), running (an eval whose case
// waits, or ""). Out (stdout, JSON): {"passed": [...]} or exit 1 with the
// failure on stderr.
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
const rate = (r) => `${(r * 100).toFixed(1)}%`;
const openEval = async (v, against) => {
  await page.goto(`${base}/console/#/evals/${encodeURIComponent(v.eval_id)}${against ? `?against=${encodeURIComponent(against)}` : ''}`);
  await page.locator('h1', { hasText: v.eval_id }).waitFor();
};

try {
  const A = await api('GET', `/v1/evals/${input.a}`);
  const B = await api('GET', `/v1/evals/${input.b}`);
  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();

  // The list: reached from the nav.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Evals' }).click();
  await page.getByRole('heading', { name: 'Evals', exact: true }).waitFor();
  for (const v of [A, B]) {
    const row = page.locator(`tr[data-eval-id="${v.eval_id}"]`);
    await row.waitFor();
    const t = await text(row);
    for (const want of [v.name, v.agent, v.agent_version, v.status, rate(v.totals.pass_rate), `${v.progress.scored} of ${v.progress.total} scored`]) {
      if (!t.includes(want)) fail(`the list's row of ${v.eval_id} lacks "${want}": ${t}`);
    }
    const bar = row.locator('progress');
    if (Number(await bar.getAttribute('value')) !== v.progress.scored || Number(await bar.getAttribute('max')) !== v.progress.total) fail(`${v.eval_id}'s progress bar is not ${v.progress.scored} of ${v.progress.total}`);
  }
  await checkPage('the evals list');
  await page.screenshot({ path: join(artifacts, 'evals.png'), fullPage: true });
  passed.push('the evals list: name, agent, version, status, progress bar, pass rate');

  // An eval's page: its cases, each linked to its run; the judge; totals.
  await page.locator(`tr[data-eval-id="${A.eval_id}"]`).getByRole('link', { name: A.name }).click();
  await page.locator('h1', { hasText: A.eval_id }).waitFor();
  const rows = page.locator('table.cases tbody tr[data-case-id]');
  await until('the cases', async () => (await rows.count()) === A.cases.length);
  for (const c of A.cases) {
    const row = page.locator(`table.cases tr[data-case-id="${c.id}"]`);
    const t = await text(row);
    if (!t.includes(c.pass ? 'pass' : 'fail')) fail(`case ${c.id}'s row lacks its verdict: ${t}`);
    const href = await row.getByRole('link', { name: c.run_id }).getAttribute('href');
    if (href !== `#/runs/${c.run_id}`) fail(`case ${c.id} links ${href}, want its run ${c.run_id}`);
    if (c.judge && !t.includes(`Judge: ${c.judge.score.toFixed(2)} — ${c.judge.reason}`)) fail(`case ${c.id} lacks its judge's score and reason: ${t}`);
  }
  if (!A.cases.some((c) => c.judge)) fail('no case of the first eval was judged');
  const totals = await text(page.getByLabel(`Totals of ${A.eval_id}`));
  if (!totals.includes(`Pass rate ${rate(A.totals.pass_rate)}`)) fail(`the totals: ${totals}`);
  await checkPage('an eval');
  await page.screenshot({ path: join(artifacts, 'eval.png'), fullPage: true });
  const first = A.cases[0];
  await page.locator(`table.cases tr[data-case-id="${first.id}"]`).getByRole('link', { name: first.run_id }).click();
  await page.getByRole('heading', { name: `Run ${first.run_id}` }).waitFor();
  passed.push('an eval: verdicts, judge, totals, each case linked to its run');

  // The eval with failures: each failing check with its detail; only
  // the failed cases when asked.
  await openEval(B);
  const failedB = B.cases.filter((c) => c.pass === false);
  if (failedB.length === 0) fail('the second eval has no failed case');
  for (const c of failedB) {
    const t = await text(page.locator(`table.cases tr[data-case-id="${c.id}"]`));
    for (const k of c.checks.filter((x) => !x.pass)) {
      if (!t.includes(`${k.name}: ${k.detail}`.replace(/\s+/g, ' '))) fail(`case ${c.id} lacks its failing check ${k.name}: ${t}`);
    }
  }
  await page.getByLabel('Show only failed cases').check();
  await until('only the failed cases', async () => (await rows.count()) === failedB.length);
  await checkPage('an eval with failures');
  await page.screenshot({ path: join(artifacts, 'eval-failed.png'), fullPage: true });
  passed.push('failing checks with their details; only the failed cases');

  // Compare: refused without an id and for an eval that is not there,
  // then the two side by side.
  await openEval(A);
  const compare = page.locator('form.compare');
  await compare.getByRole('button', { name: 'Compare' }).click();
  if (!(await text(compare.getByRole('alert'))).includes('Write the id')) fail('an empty comparison is not refused');
  await compare.getByLabel('Compare with another eval').fill('ev_nosuchevalatall');
  await compare.getByRole('button', { name: 'Compare' }).click();
  await until('the missing eval\'s error', async () => (await page.getByRole('alert').filter({ hasText: 'ev_nosuchevalatall' }).count()) > 0);
  await compare.getByLabel('Compare with another eval').fill(B.eval_id);
  await compare.getByRole('button', { name: 'Compare' }).click();
  await until('the comparison', async () => page.url().endsWith(`?against=${B.eval_id}`));
  await page.locator('table.pair-cases').waitFor();
  const pairRows = page.locator('table.pair-cases tbody tr[data-case-id]');
  await until('the paired cases', async () => (await pairRows.count()) === A.cases.length);
  for (const c of failedB) {
    const t = await text(page.locator(`table.pair-cases tr[data-case-id="${c.id}"]`));
    const was = A.cases.find((x) => x.id === c.id);
    if (was && was.pass && !t.includes('broken')) fail(`case ${c.id} passed on A and failed on B but is not marked broken: ${t}`);
    if (!t.includes(c.run_id)) fail(`case ${c.id}'s B side lacks its run: ${t}`);
  }
  for (const v of [A, B]) {
    const t = await text(page.getByLabel(`Totals of ${v.eval_id}`));
    if (!t.includes(`Pass rate ${rate(v.totals.pass_rate)}`)) fail(`the comparison's totals of ${v.eval_id}: ${t}`);
  }
  await checkPage('two evals side by side');
  await page.screenshot({ path: join(artifacts, 'eval-compare.png'), fullPage: true });
  await page.setViewportSize({ width: 420, height: 800 });
  await checkWidth(page, 'two evals side by side at 420 px');
  await page.screenshot({ path: join(artifacts, 'eval-compare-narrow.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  passed.push('compare: refusals, then two evals side by side per case (1280 and 420 px)');

  // Run the cases again on another version: a version the API refuses
  // shows its error and starts nothing; then the new eval opens beside
  // this one.
  await openEval(A);
  const rerun = page.locator('form.compare').filter({ has: page.getByLabel('Run these cases on another version') });
  const count = async () => (await api('GET', '/v1/evals?limit=100')).evals.length;
  const before = await count();
  await rerun.getByLabel('Run these cases on another version').fill('av_0000000000000000');
  await rerun.getByRole('button', { name: 'Run again' }).click();
  const refused = await until('the refusal', async () => {
    const alert = rerun.getByRole('alert');
    return (await alert.count()) ? text(alert) : null;
  });
  if (!/version/i.test(refused) || (await count()) !== before) fail(`a refused version: ${refused}, ${await count()} evals, were ${before}`);
  await rerun.getByLabel('Run these cases on another version').fill(input.v2);
  await rerun.getByRole('button', { name: 'Run again' }).click();
  const again = await until('the new eval beside this one', async () => {
    const m = /\?against=([^&]+)$/.exec(page.url());
    return m ? decodeURIComponent(m[1]) : null;
  });
  const C = await api('GET', `/v1/evals/${again}`);
  if (C.agent_version !== input.v2 || C.progress.total !== A.cases.length) fail(`the new eval: ${JSON.stringify(C)}`);
  await until('the new eval to end', async () => (await text(page.getByRole('status', { name: `Status of ${again}` }))) === 'completed', 30000);
  await until('its cases beside this one\'s', async () => (await pairRows.count()) === A.cases.length);
  await checkPage('an eval run again beside its source');
  passed.push('run the cases again on another version (a refused version first)');

  // A running eval: Cancel.
  if (input.running) {
    const R = await api('GET', `/v1/evals/${input.running}`);
    await openEval(R);
    const status = page.getByRole('status', { name: `Status of ${R.eval_id}` });
    if ((await text(status)) !== 'running') fail(`the running eval is ${await text(status)}`);
    await checkPage('a running eval');
    await page.screenshot({ path: join(artifacts, 'eval-running.png'), fullPage: true });
    await page.getByRole('button', { name: 'Cancel eval' }).click();
    await until('the eval cancelled', async () => (await text(status)) === 'cancelled', 20000);
    if ((await api('GET', `/v1/evals/${R.eval_id}`)).status !== 'cancelled') fail('the API does not say the eval was cancelled');
    passed.push('Cancel eval');
  }
  const want = ['Compare', 'Run again', 'Newer evals', 'Older evals', ...(input.running ? ['Cancel eval'] : [])];
  for (const label of want) {
    if (!checked.has(label)) fail(`the contrast of button "${label}" was never checked (checked: ${[...checked].join(', ')})`);
  }
  passed.push('every eval button label ≥ 4.5:1');

  if (problems.length) fail(`the page broke its Content Security Policy or threw: ${problems.join(' | ')}`);
  process.stdout.write(JSON.stringify({ passed }));
} catch (err) {
  await page.screenshot({ path: join(artifacts, 'evals-failure.png'), fullPage: true }).catch(() => {});
  process.stderr.write(`${err instanceof Failure ? err.message : err.stack}\npassed before: ${passed.join(', ')}\n`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
