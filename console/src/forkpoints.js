// Where a run may be forked: the transcript's sequence numbers and the
// run's own messages (pure functions, tested by
// tests/console/forkpoints.test.mjs).

// withSeqs gives each message of a run view's transcript its sequence
// number: the messages route carries it (seq); the view's whole
// session transcript is numbered from 1.
export function withSeqs(messages) {
  return messages.map((m, i) => (typeof m.seq === 'number' ? m : { ...m, seq: i + 1 }));
}

// firstOwnSeq is the seq of the run's first message: messages before it
// belong to earlier runs of its session (or, for a fork, to its source).
// The view's first_message_seq says so when it has it; a fork's own
// messages start at its fork point; otherwise the run's first appended
// messages (its first messages_updated) and the user messages it was
// started with just before them.
export function firstOwnSeq(view, messages) {
  if (typeof view.first_message_seq === 'number') return view.first_message_seq;
  if (view.forked_from && typeof view.forked_from.seq === 'number') return view.forked_from.seq;
  const evs = (view.result && view.result.events) || [];
  const updated = evs.find((e) => e.type === 'messages_updated' && e.data && typeof e.data.from_seq === 'number');
  let i = updated ? messages.findIndex((m) => m.seq >= updated.data.from_seq) : messages.length;
  if (i < 0) i = messages.length;
  while (i > 0 && (messages[i - 1].role === 'user' || messages[i - 1].role === 'system')) i--;
  return i < messages.length ? messages[i].seq : Infinity;
}

// canFork says whether a fork may start at message m: a user or
// assistant message of the run itself.
export const canFork = (m, first) => (m.role === 'user' || m.role === 'assistant') && m.seq >= first;
