// Shared wording and formatting.

export const STATUSES = [
  'queued', 'running', 'runtime_tool_pending', 'approval_required', 'completed', 'max_turns_reached',
  'budget_exceeded', 'failed', 'cancelled', 'interrupted', 'stalled', 'transcript_lock_contention',
];

const TERMINAL = new Set(['completed', 'max_turns_reached', 'budget_exceeded', 'failed', 'cancelled', 'interrupted', 'stalled', 'transcript_lock_contention']);

export const isTerminal = (s) => TERMINAL.has(s);

// waitsOnPerson: the run is paused on a decision or a client tool's result.
export const waitsOnPerson = (s) => s === 'approval_required' || s === 'runtime_tool_pending';

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function ms(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '';
  if (n < 1000) return `${Math.round(n)} ms`;
  return `${(n / 1000).toFixed(n < 10000 ? 2 : 1)} s`;
}

export function usd(n) {
  if (typeof n !== 'number') return '';
  return `$${n < 0.01 ? n.toFixed(6) : n.toFixed(4)}`;
}

// pretty renders a JSON value for a <pre>, as text.
export function pretty(v) {
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}
