// Where a run may be forked: the transcript's sequence numbers and the
// run's own messages (pure functions, tested by
// tests/console/forkpoints.test.mjs).

// withSeqs gives each message of a run view's transcript its sequence
// number: the messages route carries it (seq); the view's whole
// session transcript is numbered from 1.
export function withSeqs(messages) {
  return messages.map((m, i) => (typeof m.seq === 'number' ? m : { ...m, seq: i + 1 }));
}

// forkPoints is the seqs of the messages a fork of the run may start at:
// its own user and assistant messages (from the view's first_seq on;
// those before belong to earlier runs of its session or, for a fork, to
// its source), never a tool call, tool result or system message.
export function forkPoints(view, messages) {
  const first = typeof view.first_seq === 'number' && view.first_seq > 0 ? view.first_seq : Infinity;
  return new Set(messages.filter((m) => (m.role === 'user' || m.role === 'assistant') && m.seq >= first).map((m) => m.seq));
}
