// timeline derives a run's durable steps from its committed events (each
// says whether it was chained: run in the invocation that committed the
// step before it, or delivered by the queue): a
// model turn from its turn_started to the event its reply committed
// (with its model_retry attempts), a tool step from tool_call_start to
// its tool_result (with its tool_retry attempts, each shown as it comes;
// in_doubt when a crash left a non-retry-safe call's
// outcome unknown), and a wait for a person from approval_required or
// runtime_tool_pending to the decision or the submitted result; an agent
// tool's call (a child run) ends at its child_run_finished. The run
// view's deliveries (steps the queue delivered again, or whose delivery
// was dropped as stale) are added to their model turn (by turn) or tool
// call (by call id); one that matches no step (a stale delivery of a
// model step, whose turn is not known) is a row of its own.
export function timeline(events, deliveries = []) {
  const steps = [];
  let model = null;
  const tools = new Map();
  const waits = new Map();
  const closeModel = (at, outcome) => {
    if (model && !model.end) {
      model.end = at;
      model.outcome = outcome;
    }
  };
  for (const e of events) {
    const d = e.data || {};
    switch (e.type) {
      case 'turn_started':
        closeModel(e.at, 'replied');
        // chained: the turn ran in the invocation that committed the
        // step before it, without a queue message of its own.
        model = { kind: 'model turn', detail: `turn ${e.turn}`, turn: e.turn, start: e.at, end: null, retries: 0, outcome: 'in flight', chained: !!d.chained };
        steps.push(model);
        break;
      case 'model_retry':
        if (model) model.retries++;
        break;
      case 'tool_call':
      case 'messages_updated':
      case 'completed':
        closeModel(e.at, 'replied');
        break;
      case 'failed':
      case 'cancelled':
      case 'budget_exceeded':
      case 'max_turns_reached':
      case 'interrupt_received':
        closeModel(e.at, e.type);
        break;
      case 'tool_call_start': {
        const s = { kind: 'tool call', detail: d.tool_name || d.name || '', callId: d.tool_call_id, start: e.at, end: null, retries: 0, outcome: 'in flight' };
        tools.set(d.tool_call_id, s);
        steps.push(s);
        break;
      }
      case 'tool_retry': {
        // A delivery of the call failed (a remote agent out of reach):
        // the queue delivers it again after the wait.
        const s = tools.get(d.tool_call_id);
        if (s) {
          s.retries++;
          if (!s.end) s.outcome = `retrying: attempt ${d.attempt} of ${d.attempts} failed (${d.reason})${d.wait ? `, again in ${d.wait}` : ''}`;
        }
        break;
      }
      case 'approval_required':
      case 'runtime_tool_pending': {
        const s = { kind: e.type === 'approval_required' ? 'waiting for approval' : 'waiting for client tool', detail: d.tool_name || '', start: e.at, end: null, retries: 0, outcome: 'waiting' };
        waits.set(d.tool_call_id, s);
        steps.push(s);
        break;
      }
      case 'approval_decided':
      case 'runtime_tool_result_submitted': {
        const w = waits.get(d.tool_call_id);
        if (w && !w.end) {
          w.end = e.at;
          w.outcome = e.type === 'approval_decided' ? d.decision || 'decided' : 'submitted';
        }
        break;
      }
      case 'child_run_finished': {
        // An agent tool's call ends when its child run does: its
        // tool_result comes once every call of the turn is in, at the
        // slowest sibling's end.
        const s = tools.get(d.tool_call_id);
        if (s && !s.end) {
          s.end = e.at;
          s.outcome = d.status === 'completed' ? 'succeeded' : `failed (child ${d.status})`;
        }
        break;
      }
      case 'tool_result': {
        const s = tools.get(d.tool_call_id);
        if (s && !s.end) {
          s.end = e.at;
          s.outcome = d.success ? 'succeeded' : `failed${d.error_type ? ` (${d.error_type})` : ''}`;
          // A fork's call answered from its source's record ran nothing.
          if (d.replayed) s.outcome += ', replayed';
          s.chained = !!d.chained;
          s.inDoubt = d.error_type === 'in_doubt';
        }
        const w = waits.get(d.tool_call_id);
        if (w && !w.end) {
          w.end = e.at;
          w.outcome = d.success ? 'answered' : 'ended';
        }
        break;
      }
      default:
    }
  }
  for (const d of deliveries) {
    const s = d.kind === 'tool_call'
      ? steps.find((x) => x.callId && x.callId === d.tool_call_id)
      : d.turn && steps.find((x) => x.turn === d.turn);
    if (s) {
      s.redeliveries = (s.redeliveries || 0) + d.redeliveries;
      s.stale = (s.stale || 0) + d.stale;
    } else {
      steps.push({
        kind: d.kind === 'tool_call' ? 'tool call' : 'model turn', detail: `step ${d.step_seq}`, start: d.last_at, end: d.last_at,
        retries: 0, redeliveries: d.redeliveries, stale: d.stale, outcome: d.stale ? 'delivery dropped (stale)' : 'delivered again',
      });
    }
  }
  return steps;
}
