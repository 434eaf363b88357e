// Unit tests of what the eval pages show of eval views
// (console/src/evalrows.js), run with Node's test runner by
// tests/console_eval_e2e_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { change, failingChecks, outcomeChange, pairCases, passRate, plural, progressOf, rate, running, verdict } from '../../console/src/evalrows.js';

const c = (id, pass, extra = {}) => ({ id, status: pass === undefined ? 'running' : 'scored', ...(pass === undefined ? {} : { pass }), ...extra });

test('a case\'s verdict: pass or fail once scored, else its status', () => {
  assert.equal(verdict(c('a', true)), 'pass');
  assert.equal(verdict(c('a', false)), 'fail');
  assert.equal(verdict(c('a')), 'running');
  assert.equal(verdict({ id: 'a' }), 'pending');
  assert.equal(verdict(null), 'none');
});

test('failing checks keep their order; a case without checks has none', () => {
  const k = [{ name: 'final.equals', pass: true }, { name: 'trajectory', pass: false, detail: 'x' }, { name: 'judge', pass: false, detail: 'y' }];
  assert.deepEqual(failingChecks({ checks: k }).map((x) => x.name), ['trajectory', 'judge']);
  assert.deepEqual(failingChecks({}), []);
  assert.deepEqual(failingChecks(null), []);
});

test('two evals pair by case id: the first\'s order, then the second\'s own cases', () => {
  const a = { cases: [c('c2', true), c('c1', false), c('only-a', true)] };
  const b = { cases: [c('c1', true), c('only-b', false), c('c2', false)] };
  const rows = pairCases(a, b);
  assert.deepEqual(rows.map((r) => [r.id, verdict(r.a), verdict(r.b)]), [
    ['c2', 'pass', 'fail'], ['c1', 'fail', 'pass'], ['only-a', 'pass', 'none'], ['only-b', 'none', 'fail'],
  ]);
  assert.deepEqual(rows.map(outcomeChange), ['broken', 'fixed', '', '']);
  assert.deepEqual(pairCases({ cases: [c('x', true)] }, null).map((r) => r.b), [null]);
});

test('rates, progress, changes and whether an eval still runs', () => {
  assert.equal(rate(0.9), '90.0%');
  assert.equal(rate(1), '100.0%');
  assert.equal(rate(null), '');
  assert.equal(passRate({ progress: { scored: 0 }, totals: { pass_rate: 0 } }), '');
  assert.equal(passRate({ progress: { scored: 2 }, totals: { pass_rate: 0 } }), '0.0%');
  assert.equal(plural(1, 'turn'), '1 turn');
  assert.equal(plural(0, 'turn'), '0 turns');
  assert.deepEqual(progressOf({ progress: { total: 10, scored: 4, failed: 1 } }), { scored: 4, total: 10, label: '4 of 10 scored, 1 failed' });
  assert.equal(progressOf({}).label, '0 of 0 scored');
  assert.equal(change(2, 5), '+3');
  assert.equal(change(5, 2), '−3');
  assert.equal(change(2, 2), '');
  assert.equal(change(undefined, 2), '');
  assert.equal(change(0.004, 0.001, (x) => x.toFixed(3)), '−0.003');
  assert.equal(change(0.00004, 0.00001, (x) => `$${x.toFixed(4)}`), '', 'a change that rounds to nothing is none');
  assert.equal(running({ status: 'running' }), true);
  assert.equal(running({ status: 'completed' }), false);
  assert.equal(running({ status: 'cancelled' }), false);
  assert.equal(running(null), false);
});
