import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { STATUSES, waitsOnPerson, when } from './format.js';

const PAGE = 25;
const REFRESH_MS = 2000;

// RunsPage lists the tenant's runs, newest first, a page at a time, with
// a status filter; it reads the page again every two seconds, so a
// status changes on screen while the user watches.
export function RunsPage() {
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState(['']); // the cursor of each page seen, the current one last
  const [page, setPage] = useState(null);
  const [error, setError] = useState('');
  const cursor = cursors[cursors.length - 1];
  useEffect(() => {
    const ctl = new AbortController();
    let timer;
    const load = async () => {
      try {
        const p = await api.listRuns({ status, limit: PAGE, cursor }, ctl.signal);
        setPage(p);
        setError('');
      } catch (err) {
        if (err.name === 'AbortError') return;
        setError(err.message);
      }
      timer = setTimeout(load, REFRESH_MS);
    };
    load();
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [status, cursor]);
  const runs = (page && page.runs) || [];
  const waiting = runs.filter((r) => waitsOnPerson(r.status)).length;
  return html`
    <h1>Runs</h1>
    <div class="toolbar">
      <label for="status-filter">Status filter</label>
      <select id="status-filter" value=${status} onChange=${(e) => { setStatus(e.currentTarget.value); setCursors(['']); }}>
        <option value="">all</option>
        ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
      <span class="count" aria-live="polite">${page ? `${runs.length} shown${waiting ? `, ${waiting} waiting on you` : ''}` : 'Loading…'}</span>
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <table class="runs">
      <caption class="visually-hidden">Runs, newest first</caption>
      <thead><tr><th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Started</th></tr></thead>
      <tbody>
        ${runs.map((r) => html`
          <tr key=${r.run_id} class=${waitsOnPerson(r.status) ? 'waiting' : ''}>
            <td><a href=${`#/runs/${encodeURIComponent(r.run_id)}`}>${r.run_id}</a></td>
            <td>${r.agent}</td>
            <td><span class=${`badge s-${r.status}`}>${r.status}</span>${waitsOnPerson(r.status) && html` <span class="marker">waiting on you</span>`}</td>
            <td><time datetime=${r.created_at}>${when(r.created_at)}</time></td>
          </tr>`)}
        ${page && runs.length === 0 && html`<tr><td colspan="4">No runs${status ? ` with status ${status}` : ''}.</td></tr>`}
      </tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer runs</button>
      <button type="button" disabled=${!page || !page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Older runs</button>
    </nav>`;
}
