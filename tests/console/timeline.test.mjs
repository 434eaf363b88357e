// Unit tests of the console's step timeline (console/src/timeline.js),
// run with Node's test runner by tests/console_e2e_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timeline } from '../../console/src/timeline.js';

const at = (s) => `2026-11-27T12:00:${String(s).padStart(2, '0')}Z`;

test('a tool call shows each failed delivery as it comes, then its result', () => {
  const events = [
    { type: 'turn_started', turn: 1, at: at(0) },
    { type: 'tool_call', at: at(1), data: { tool_call_id: 'c1', tool_name: 'a2a/remote' } },
    { type: 'tool_call_start', at: at(1), data: { tool_call_id: 'c1', tool_name: 'a2a/remote' } },
    { type: 'tool_retry', at: at(2), data: { tool_call_id: 'c1', tool_name: 'a2a/remote', attempt: 1, attempts: 5, reason: 'connection refused', wait: '20s' } },
  ];
  let [, call] = timeline(events);
  assert.equal(call.retries, 1);
  assert.equal(call.outcome, 'retrying: attempt 1 of 5 failed (connection refused), again in 20s');
  events.push({ type: 'tool_retry', at: at(22), data: { tool_call_id: 'c1', attempt: 2, attempts: 5, reason: 'connection refused' } });
  events.push({ type: 'tool_result', at: at(40), data: { tool_call_id: 'c1', success: false, error_type: 'executor_exception' } });
  [, call] = timeline(events);
  assert.equal(call.retries, 2);
  assert.equal(call.outcome, 'failed (executor_exception)');
  assert.equal(call.end, at(40));
});

test('a retry of another call leaves a call alone', () => {
  const events = [
    { type: 'tool_call_start', at: at(1), data: { tool_call_id: 'c1', tool_name: 'ops/a' } },
    { type: 'tool_retry', at: at(2), data: { tool_call_id: 'c2', attempt: 1, attempts: 5, reason: 'x' } },
  ];
  const [call] = timeline(events);
  assert.equal(call.retries, 0);
  assert.equal(call.outcome, 'in flight');
});

test('a fork\'s call answered from its source\'s record says it was replayed', () => {
  const [call, other] = timeline([
    { type: 'tool_call_start', at: at(1), data: { tool_call_id: 'c1', tool_name: 'mail/send' } },
    { type: 'tool_call_start', at: at(1), data: { tool_call_id: 'c2', tool_name: 'mail/send' } },
    { type: 'tool_result', at: at(1), data: { tool_call_id: 'c1', success: true, replayed: true } },
    { type: 'tool_result', at: at(2), data: { tool_call_id: 'c2', success: false, error_type: 'not_recorded' } },
  ]);
  assert.equal(call.outcome, 'succeeded, replayed');
  assert.equal(other.outcome, 'failed (not_recorded)');
});

test('a step run in the invocation of the step before it says it was chained', () => {
  const [first, call, last] = timeline([
    { type: 'turn_started', turn: 1, at: at(1), data: { turn: 1 } },
    { type: 'tool_call_start', at: at(2), data: { tool_call_id: 'c1', tool_name: 'ops/a' } },
    { type: 'turn_started', turn: 2, at: at(3), data: { turn: 2, chained: true } },
    { type: 'tool_result', at: at(3), data: { tool_call_id: 'c1', success: true, chained: true } },
  ]);
  assert.equal(first.chained, false);
  assert.equal(call.chained, true);
  assert.equal(last.chained, true);
});
