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

// fireTime writes a fire time (UTC from the API) in the browser's time
// zone, to the minute; utc is the same time in UTC, for a title.
export function fireTime(iso) {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return { local: iso || '', utc: '' };
  const local = d.toLocaleString(undefined, {
    weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short',
  });
  return { local, utc: `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` };
}

export function ms(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '';
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60000) return `${(n / 1000).toFixed(n < 10000 ? 2 : 1)} s`;
  const s = Math.round(n / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

// usd is the one way the console writes an amount of US dollars: four
// decimals (a run's cost is often a fraction of a cent).
export function usd(n) {
  if (typeof n !== 'number') return '';
  return `$${n.toFixed(4)}`;
}

// tokens writes a token count with the locale's digit grouping.
export function tokens(n) {
  return typeof n === 'number' ? n.toLocaleString() : '';
}

// took is how long a run has taken: until it ended, or until now.
export function took(run, now = Date.now()) {
  const start = Date.parse(run.created_at);
  const end = run.ended_at ? Date.parse(run.ended_at) : now;
  return Number.isNaN(start) || Number.isNaN(end) ? '' : ms(Math.max(0, end - start));
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
