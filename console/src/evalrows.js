// What the eval pages show of an eval view (GET /v1/evals/{id}), without
// markup: a case's verdict and failing checks, the rows of two evals
// side by side, rates and changes. Unit-tested with Node
// (tests/console/evalrows.test.mjs).

// verdict is a case's outcome: 'pass' or 'fail' once scored, else its
// status ('pending', 'running').
export function verdict(c) {
  if (!c) return 'none';
  if (c.pass === true) return 'pass';
  if (c.pass === false) return 'fail';
  return c.status || 'pending';
}

// failingChecks are a case's checks that did not pass, in order.
export const failingChecks = (c) => ((c && c.checks) || []).filter((k) => !k.pass);

// running says whether an eval may still change (the page polls it).
export const running = (v) => !!v && (v.status === 'running' || v.status === 'queued' || v.status === 'pending');

// pairCases matches the cases of two evals of one dataset by id: the
// first eval's order, then the cases only the second has.
export function pairCases(a, b) {
  const inB = new Map(((b && b.cases) || []).map((c) => [c.id, c]));
  const rows = ((a && a.cases) || []).map((c) => ({ id: c.id, a: c, b: inB.get(c.id) || null }));
  const inA = new Set(rows.map((r) => r.id));
  for (const c of (b && b.cases) || []) if (!inA.has(c.id)) rows.push({ id: c.id, a: null, b: c });
  return rows;
}

// outcomeChange says how a case moved from A to B: 'fixed' (failed,
// passes), 'broken' (passed, fails), or '' (the same, or not both scored).
export function outcomeChange(row) {
  const [x, y] = [verdict(row.a), verdict(row.b)];
  if (x === 'fail' && y === 'pass') return 'fixed';
  if (x === 'pass' && y === 'fail') return 'broken';
  return '';
}

// rate writes a pass rate of 0 to 1 as a percentage ('' for none).
export function rate(r) {
  return typeof r === 'number' ? `${(r * 100).toFixed(1)}%` : '';
}

// passRate is an eval's pass rate, '' until a case is scored (the API's
// 0 then is no rate yet).
export function passRate(v) {
  const scored = (v && v.progress && v.progress.scored) || 0;
  return scored > 0 ? rate(v.totals && v.totals.pass_rate) : '';
}

// plural is "1 turn", "2 turns".
export const plural = (n, noun) => `${n} ${noun}${n === 1 || n === -1 ? '' : 's'}`;

// progressOf is an eval's progress as {scored, total, label}.
export function progressOf(v) {
  const p = (v && v.progress) || {};
  const total = p.total || 0;
  const scored = p.scored || 0;
  return { scored, total, label: `${scored} of ${total} scored${p.failed ? `, ${p.failed} failed` : ''}` };
}

// change writes the change from a to b with its sign, through fmt
// ('' when either is missing, or the change is written as no change:
// $0.0000 of a cost whose change is a fraction of the fourth decimal).
export function change(a, b, fmt = String) {
  if (typeof a !== 'number' || typeof b !== 'number' || a === b) return '';
  const d = b - a;
  if (fmt(Math.abs(d)) === fmt(0)) return '';
  return `${d > 0 ? '+' : '−'}${fmt(Math.abs(d))}`;
}
