// Unit tests of where the console offers "Fork from here"
// (console/src/forkpoints.js), run with Node's test runner by
// tests/console_fork_e2e_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canFork, firstOwnSeq, withSeqs } from '../../console/src/forkpoints.js';

const msgs = (...roles) => withSeqs(roles.map((role) => ({ role, content: role })));
const updated = (from) => ({ type: 'messages_updated', data: { reason: 'model_reply', from_seq: from, to_seq: from } });
const points = (view, messages) => {
  const first = firstOwnSeq(view, messages);
  return messages.filter((m) => canFork(m, first)).map((m) => m.seq);
};

test('the view\'s transcript is numbered from 1; a page\'s seq is kept', () => {
  assert.deepEqual(msgs('user', 'assistant').map((m) => m.seq), [1, 2]);
  assert.deepEqual(withSeqs([{ role: 'user', seq: 7 }]).map((m) => m.seq), [7]);
});

test('a later run of a session: its own user message and replies, not the earlier run\'s', () => {
  // Run 1: user 1, assistant 2. This run: user 3, assistant 4 with a
  // call (5, 6), assistant 7; its first committed reply starts at 4.
  const m = msgs('user', 'assistant', 'user', 'assistant', 'tool_call', 'tool_result', 'assistant');
  const view = { result: { events: [{ type: 'run_started', data: {} }, updated(4), updated(5), updated(7)] } };
  assert.equal(firstOwnSeq(view, m), 3);
  assert.deepEqual(points(view, m), [3, 4, 7]);
});

test('a run that has not replied yet: the user messages it started with', () => {
  const m = msgs('user', 'assistant', 'system', 'user', 'user');
  assert.deepEqual(points({ result: { events: [] } }, m), [4, 5]);
});

test('a fork\'s own messages start at its fork point', () => {
  const m = msgs('user', 'assistant', 'user', 'assistant');
  assert.deepEqual(points({ forked_from: { run_id: 'r-1', seq: 3, tools: 'reuse' }, result: { events: [updated(4)] } }, m), [3, 4]);
});

test('the view\'s first_message_seq wins', () => {
  const m = msgs('user', 'assistant', 'user', 'assistant');
  assert.deepEqual(points({ first_message_seq: 2, forked_from: { seq: 3 }, result: { events: [] } }, m), [2, 3, 4]);
});

test('tool calls, tool results and system messages are never fork points', () => {
  for (const role of ['tool_call', 'tool_result', 'system']) assert.equal(canFork({ role, seq: 9 }, 1), false);
  assert.equal(canFork({ role: 'user', seq: 9 }, 1), true);
  assert.equal(canFork({ role: 'assistant', seq: 9 }, 10), false);
});
