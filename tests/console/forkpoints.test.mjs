// Unit tests of where the console offers "Fork from here"
// (console/src/forkpoints.js), run with Node's test runner by
// tests/console_fork_e2e_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forkPoints, withSeqs } from '../../console/src/forkpoints.js';

const msgs = (...roles) => withSeqs(roles.map((role) => ({ role, content: role })));
const points = (view, messages) => [...forkPoints(view, messages)];

test('the view\'s transcript is numbered from 1; a page\'s seq is kept', () => {
  assert.deepEqual(msgs('user', 'assistant').map((m) => m.seq), [1, 2]);
  assert.deepEqual(withSeqs([{ role: 'user', seq: 7 }]).map((m) => m.seq), [7]);
});

test('a later run of a session: its own user and assistant messages, not the earlier run\'s', () => {
  // Run 1: user 1, assistant 2. This run: user 3, assistant 4 with a
  // call (5, 6), system 7, assistant 8.
  const m = msgs('user', 'assistant', 'user', 'assistant', 'tool_call', 'tool_result', 'system', 'assistant');
  assert.deepEqual(points({ first_seq: 3 }, m), [3, 4, 8]);
  assert.deepEqual(points({ first_seq: 1 }, m), [1, 2, 3, 4, 8]);
});

test('a view without first_seq offers none', () => {
  assert.deepEqual(points({}, msgs('user', 'assistant')), []);
});
