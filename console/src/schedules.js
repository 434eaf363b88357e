import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { fireTime, pretty, when } from './format.js';

// Schedules (GET /v1/schedules, GET /v1/schedules/{id} and its
// /triggers): each schedule starts a run of an agent at its fire times (a
// cron expression in a time zone, a rate, or one time) and records every
// fire time it reached. The list shows each schedule's agent, expression
// and zone, next fire times (in the browser's time zone, the UTC in a
// title), paused or active, and its last run; a schedule's page shows its
// settings, its trigger history (fire time, outcome, run, reason), and
// Pause, Resume and Delete.

const PAGE = 50;
const POLL_MS = 5000;
const LIST_POLL_MS = 60000;

const runLink = (id) => html`<a class="mono" href=${`#/runs/${encodeURIComponent(id)}`}>${id}</a>`;
export const scheduleLink = (id) => html`<a class="mono" href=${`#/schedules/${encodeURIComponent(id)}`}>${id}</a>`;

// FireTime is a fire time in local time, its UTC in the title.
function FireTime({ iso }) {
  const t = fireTime(iso);
  return html`<time datetime=${iso} title=${t.utc}>${t.local}</time>`;
}

// expression is a schedule's cron expression, or its one time.
const expression = (s) => (s.at ? html`once, at <${FireTime} iso=${s.at} />` : html`<code>${s.cron}</code>`);

const agentOf = (s) => html`${s.agent}${(s.alias || s.agent_version) && html`<div class="dim mono version">${s.alias ? `alias ${s.alias}` : s.agent_version}</div>`}`;

const stateBadge = (s) => html`<span class=${`badge ${s.paused ? 'paused' : 'active'}`}>${s.paused ? 'paused' : 'active'}</span>`;

function NextTimes({ s, max = 5 }) {
  const times = (s.next_fire_times || []).slice(0, max);
  if (s.paused) return html`<span class="dim">none while paused</span>`;
  if (times.length === 0) return html`<span class="dim">none</span>`;
  return html`<ul class="next">${times.map((t) => html`<li key=${t}><${FireTime} iso=${t} /></li>`)}</ul>`;
}

// SchedulesPage lists the tenant's schedules, in id order, a page at a
// time (More schedules).
export function SchedulesPage() {
  const [schedules, setSchedules] = useState(null);
  const [next, setNext] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [extended, setExtended] = useState(false); // pages after the first are shown
  // The first page is read again every minute (fire times pass) until
  // more pages are shown.
  useEffect(() => {
    if (extended) return undefined;
    const ctl = new AbortController();
    let timer;
    const read = () => api.listSchedules({ limit: PAGE }, ctl.signal).then((p) => {
      setSchedules(p.schedules || []);
      setNext(p.next_cursor || '');
      setError('');
      timer = setTimeout(read, LIST_POLL_MS);
    }, (err) => {
      if (err.name !== 'AbortError') setError(err.message);
    });
    read();
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [extended]);
  const more = async () => {
    setBusy(true);
    setExtended(true);
    try {
      const p = await api.listSchedules({ limit: PAGE, cursor: next });
      setSchedules([...schedules, ...(p.schedules || [])]);
      setNext(p.next_cursor || '');
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  return html`
    <h1>Schedules</h1>
    <p class="dim">Create a schedule with <code>baton schedules create --agent A --cron EXPR --input TEXT</code> (or <code>POST /v1/schedules</code>); open one for its history. Times are in your time zone; hover one for UTC.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${!schedules && !error && html`<p>Loading…</p>`}
    ${schedules && html`
      <table class="schedules">
        <caption class="visually-hidden">Schedules</caption>
        <thead><tr>
          <th scope="col">Schedule</th><th scope="col">Agent</th><th scope="col">When</th><th scope="col">Next fire times</th>
          <th scope="col">State</th><th scope="col">Last run</th>
        </tr></thead>
        <tbody>
          ${schedules.map((s) => html`
            <tr key=${s.schedule_id} data-schedule-id=${s.schedule_id}>
              <td data-label="Schedule" class="id-cell">${scheduleLink(s.schedule_id)}</td>
              <td data-label="Agent">${agentOf(s)}</td>
              <td data-label="When">${expression(s)}<div class="dim">${s.timezone}</div></td>
              <td data-label="Next fire times"><${NextTimes} s=${s} max=${3} /></td>
              <td data-label="State">${stateBadge(s)}</td>
              <td data-label="Last run" class="id-cell">${s.last_run_id ? runLink(s.last_run_id) : html`<span class="dim">none yet</span>`}</td>
            </tr>`)}
          ${schedules.length === 0 && html`<tr><td colspan="6">No schedules.</td></tr>`}
        </tbody>
      </table>
      ${next && html`<nav class="pager" aria-label="Pages"><button type="button" disabled=${busy} onClick=${more}>More schedules</button></nav>`}`}`;
}

const outcomeBadge = (t) => html`<span class=${`badge o-${t.outcome}`}>${t.outcome}</span>`;

// SchedulePage shows one schedule, its next fire times and its trigger
// history, latest first; it reads them again every five seconds (a fire
// time may come at any minute) until older pages are shown.
export function SchedulePage({ id }) {
  const [s, setS] = useState(null);
  const [triggers, setTriggers] = useState(null);
  const [next, setNext] = useState('');
  const [older, setOlder] = useState(false);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [deleted, setDeleted] = useState(false);
  useEffect(() => {
    if (deleted) return undefined;
    const ctl = new AbortController();
    let timer;
    const read = async () => {
      try {
        const [sc, page] = await Promise.all([api.getSchedule(id, ctl.signal), older ? null : api.triggers(id, { limit: PAGE }, ctl.signal)]);
        setS(sc);
        if (page) {
          setTriggers(page.triggers || []);
          setNext(page.next_cursor || '');
        }
        setError('');
      } catch (err) {
        if (err.name === 'AbortError') return;
        setError(err.message);
        if (err.status === 404) return;
      }
      timer = setTimeout(read, POLL_MS);
    };
    read();
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [id, older, deleted]);

  const more = async () => {
    setBusy(true);
    try {
      const page = await api.triggers(id, { limit: PAGE, cursor: next });
      setOlder(true);
      setTriggers([...triggers, ...(page.triggers || [])]);
      setNext(page.next_cursor || '');
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  const pause = async (paused) => {
    setBusy(true);
    setError('');
    try {
      setS(await api.pauseSchedule(id, paused));
      setStatus(paused ? 'Paused: it starts no runs until resumed.' : 'Resumed.');
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };
  const remove = async () => {
    setBusy(true);
    setError('');
    try {
      await api.deleteSchedule(id);
      setDeleted(true);
      setConfirming(false);
      setStatus(`Deleted schedule ${id}. The runs it started are not affected.`);
    } catch (err) {
      setError(err.message);
    }
    setBusy(false);
  };

  if (!s) {
    return html`<p><a href="#/schedules">← Schedules</a></p><h1>Schedule <span class="mono">${id}</span></h1>${error ? html`<p class="error" role="alert">${error}</p>` : html`<p>Loading…</p>`}`;
  }
  return html`
    <p><a href="#/schedules">← Schedules</a></p>
    <h1>Schedule <span class="mono">${s.schedule_id}</span></h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <p class="count" aria-live="polite">${status}</p>
    <dl class="facts">
      <div><dt id="state-label">State</dt><dd><span role="status" aria-labelledby="state-label">${deleted ? html`<span class="badge deleted">deleted</span>` : stateBadge(s)}</span></dd></div>
      <div><dt>Agent</dt><dd>${s.agent}${s.alias ? ` (alias ${s.alias})` : ''}${s.agent_version ? html` <span class="mono">${s.agent_version}</span>` : ''}</dd></div>
      <div><dt>When</dt><dd>${expression(s)} <span class="dim">(${s.timezone})</span></dd></div>
      ${s.start && html`<div><dt>From</dt><dd><${FireTime} iso=${s.start} /></dd></div>`}
      ${s.end && html`<div><dt>Until</dt><dd><${FireTime} iso=${s.end} /></dd></div>`}
      <div><dt>Overlap</dt><dd>${s.overlap}</dd></div>
      <div><dt>Missed</dt><dd>${s.missed}</dd></div>
      <div><dt>Last run</dt><dd>${s.last_run_id ? runLink(s.last_run_id) : html`<span class="dim">none yet</span>`}</dd></div>
      <div><dt>Created</dt><dd><time datetime=${s.created_at}>${when(s.created_at)}</time></dd></div>
      <div><dt>Updated</dt><dd><time datetime=${s.updated_at}>${when(s.updated_at)}</time></dd></div>
    </dl>
    ${!deleted && html`
      <div class="controls schedule-controls">
        <div class="row">
          ${s.paused
            ? html`<button type="button" class="good" disabled=${busy} onClick=${() => pause(false)}>Resume</button>`
            : html`<button type="button" disabled=${busy} onClick=${() => pause(true)}>Pause</button>`}
          ${!confirming && html`<button type="button" class="danger" disabled=${busy} onClick=${() => setConfirming(true)}>Delete</button>`}
        </div>
        ${confirming && html`
          <div class="confirm" role="alertdialog" aria-labelledby="delete-question">
            <p id="delete-question"><strong>Delete schedule ${s.schedule_id}?</strong> It fires no more; its history stays until it expires.</p>
            <div class="row">
              <button type="button" class="danger" disabled=${busy} onClick=${remove}>Yes, delete it</button>
              <button type="button" class="secondary" disabled=${busy} onClick=${() => setConfirming(false)}>Keep it</button>
            </div>
          </div>`}
      </div>`}
    <div class="columns schedule-columns">
      <section aria-labelledby="history-h">
        <h2 id="history-h">Trigger history</h2>
        <table class="triggers">
          <caption class="visually-hidden">Fire times of ${s.schedule_id}, latest first</caption>
          <thead><tr><th scope="col">Fire time</th><th scope="col">Outcome</th><th scope="col">Run</th><th scope="col">Reason</th></tr></thead>
          <tbody>
            ${(triggers || []).map((t) => html`
              <tr key=${t.fire_time} data-fire-time=${t.fire_time}>
                <td data-label="Fire time"><${FireTime} iso=${t.fire_time} /></td>
                <td data-label="Outcome">${outcomeBadge(t)}</td>
                <td data-label="Run" class="id-cell">${t.run_id ? runLink(t.run_id) : html`<span class="dim">none</span>`}</td>
                <td data-label="Reason" class="reason">${t.reason || ''}</td>
              </tr>`)}
            ${triggers && triggers.length === 0 && html`<tr><td colspan="4">No fire time reached yet.</td></tr>`}
          </tbody>
        </table>
        ${next && html`<nav class="pager" aria-label="Pages"><button type="button" disabled=${busy} onClick=${more}>Older fire times</button></nav>`}
      </section>
      <section aria-labelledby="next-h">
        <h2 id="next-h">Next fire times</h2>
        <${NextTimes} s=${s} />
        <h2>Each run is asked</h2>
        <pre>${pretty(s.request)}</pre>
      </section>
    </div>`;
}

// ScheduledBy is the line of a run a schedule started: the schedule
// (linked) and the fire time it started for.
export function ScheduledBy({ view }) {
  if (!view.schedule_id) return null;
  return html`
    <div class="lineage" data-testid="scheduled-by">
      <p>Scheduled by ${scheduleLink(view.schedule_id)}${view.scheduled_for && html`, for the fire time <${FireTime} iso=${view.scheduled_for} />`}</p>
    </div>`;
}
