import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { STATUSES, isTerminal, tokens, took, usd, waitsOnPerson, when } from './format.js';

const PAGE = 25;
const REFRESH_MS = 2000;

// WINDOWS are the time filter's choices: runs created in the last …
const WINDOWS = [
  ['', 'any time'],
  ['3600000', 'last hour'],
  ['86400000', 'last 24 hours'],
  ['604800000', 'last 7 days'],
];

// usePolled reads a page of runs with query, then again every two seconds
// with the page's ETag (If-None-Match): the API answers 304 without a
// body while nothing on the page changed, so the page is downloaded and
// drawn again only when a run on it did. query() is called for each read
// (a time window moves with the clock); key changes start over.
function usePolled(query, key) {
  const [page, setPage] = useState(null);
  const [error, setError] = useState('');
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const ctl = new AbortController();
    let timer;
    let etag = '';
    setPage(null);
    const load = async () => {
      try {
        const res = await api.listRunsSince(query(), etag, ctl.signal);
        if (!res.notModified) {
          etag = res.etag;
          setPage(res.data);
        }
        setError('');
      } catch (err) {
        if (err.name === 'AbortError') return;
        setError(err.message);
      }
      setNow(Date.now());
      timer = setTimeout(load, REFRESH_MS);
    };
    load();
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [key]);
  return { page, error, now };
}

// RunsPage is an operator's list of the tenant's runs, newest first, a
// page at a time: what each run was asked, its agent, status and why,
// when it started, how long it took, its turns, tokens and cost. Child
// runs are not rows of their own: a run that started some has a button
// that shows them under it. Filters: status, agent and time.
export function RunsPage() {
  const [status, setStatus] = useState('');
  const [agent, setAgent] = useState('');
  const [age, setAge] = useState('');
  const [agents, setAgents] = useState([]); // every agent seen on a page
  const [cursors, setCursors] = useState(['']); // the cursor of each page seen, the current one last
  const cursor = cursors[cursors.length - 1];
  const { page, error, now } = usePolled(
    () => ({ status, agent, top_level: 'true', limit: PAGE, cursor, since: age ? new Date(Date.now() - Number(age)).toISOString() : '' }),
    `${status}|${agent}|${age}|${cursor}`,
  );
  const runs = (page && page.runs) || [];
  useEffect(() => {
    const seen = new Set(agents);
    for (const r of runs) seen.add(r.agent);
    if (seen.size !== agents.length) setAgents([...seen].sort());
  }, [page]);
  const filter = (set) => (e) => {
    set(e.currentTarget.value);
    setCursors(['']);
  };
  const waiting = runs.filter((r) => waitsOnPerson(r.status)).length;
  const filtered = status || agent || age;
  return html`
    <h1>Runs</h1>
    <div class="toolbar" role="group" aria-label="Filters">
      <span class="field">
        <label for="status-filter">Status</label>
        <select id="status-filter" value=${status} onChange=${filter(setStatus)}>
          <option value="">all</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </span>
      <span class="field">
        <label for="agent-filter">Agent</label>
        <select id="agent-filter" value=${agent} onChange=${filter(setAgent)}>
          <option value="">all</option>
          ${(agent && !agents.includes(agent) ? [agent, ...agents] : agents).map((a) => html`<option value=${a}>${a}</option>`)}
        </select>
      </span>
      <span class="field">
        <label for="time-filter">Started</label>
        <select id="time-filter" value=${age} onChange=${filter(setAge)}>
          ${WINDOWS.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
        </select>
      </span>
      <span class="count" aria-live="polite">${page ? `${runs.length} shown${waiting ? `, ${waiting} waiting on you` : ''}` : 'Loading…'}</span>
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <table class="runs">
      <caption class="visually-hidden">Runs, newest first; child runs under their parent</caption>
      <thead><tr>
        <th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Started</th>
        <th scope="col" class="num">Duration</th><th scope="col" class="num">Turns</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th>
      </tr></thead>
      <tbody>
        ${runs.map((r) => html`<${RunRows} key=${r.run_id} run=${r} now=${now} />`)}
        ${page && runs.length === 0 && html`<tr><td colspan="8">No runs${filtered ? ' match these filters' : ''}.</td></tr>`}
      </tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer runs</button>
      <button type="button" disabled=${!page || !page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Older runs</button>
    </nav>`;
}

// RunRows is a run's row and, once expanded, its children's.
function RunRows({ run, now }) {
  const [open, setOpen] = useState(false);
  return html`
    <${RunRow} run=${run} now=${now} open=${open} onToggle=${run.children ? () => setOpen(!open) : null} />
    ${open && html`<${Children} parent=${run.run_id} />`}`;
}

// Children lists a run's child runs (GET /v1/runs?parent=), read again
// like the page while they are shown.
function Children({ parent }) {
  const { page, error, now } = usePolled(() => ({ parent, limit: 100 }), parent);
  if (error) return html`<tr class="child"><td colspan="8"><p class="error" role="alert">${error}</p></td></tr>`;
  if (!page) return html`<tr class="child"><td colspan="8">Loading child runs…</td></tr>`;
  // Oldest first: the order their parent started them.
  return [...page.runs].reverse().map((r) => html`<${RunRows} key=${r.run_id} run=${r} now=${now} />`);
}

function RunRow({ run: r, now, open, onToggle }) {
  const child = !!r.parent;
  const waits = waitsOnPerson(r.status);
  const label = r.title || r.run_id;
  return html`
    <tr class=${[waits ? 'waiting' : '', child ? 'child' : ''].join(' ').trim() || undefined} data-run-id=${r.run_id}>
      <td class="run" data-label="Run">
        <div class="title">
          ${child && html`<span class="marker child-marker" title=${`child run of ${r.parent.run_id}, answering call ${r.parent.tool_call_id}`}>↳ child run</span> `}
          <a href=${`#/runs/${encodeURIComponent(r.run_id)}`} title=${r.title || undefined}>${label}</a>
        </div>
        <div class="dim mono id">${r.run_id}</div>
        ${r.schedule_id && html`<div class="scheduled dim">scheduled by <a class="mono" href=${`#/schedules/${encodeURIComponent(r.schedule_id)}`}>${r.schedule_id}</a></div>`}
        ${onToggle && html`
          <button type="button" class="link" aria-expanded=${open ? 'true' : 'false'} onClick=${onToggle}>
            ${open ? '▾' : '▸'} ${r.children} child run${r.children === 1 ? '' : 's'}
          </button>`}
      </td>
      <td data-label="Agent">${r.agent}${r.agent_version && html`<div class="dim mono version" title="agent version"><span class="visually-hidden">version </span>${r.agent_version}</div>`}</td>
      <td data-label="Status">
        <span class=${`badge s-${r.status}`}>${r.status}</span>${waits && html` <span class="marker">waiting on you</span>`}
        ${r.reason && html`<div class="reason">${r.reason}</div>`}
      </td>
      <td data-label="Started"><time datetime=${r.created_at}>${when(r.created_at)}</time></td>
      <td data-label="Duration" class="num">${took(r, now)}${!isTerminal(r.status) && html` <span class="dim">so far</span>`}</td>
      <td data-label="Turns" class="num">${r.turns}</td>
      <td data-label="Tokens" class="num">${tokens(r.total_tokens)}</td>
      <td data-label="Cost" class="num">${usd(r.cost_usd)}</td>
    </tr>`;
}
