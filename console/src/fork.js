import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';

// Forks (POST /v1/runs/{id}/fork): a run started from a message of
// another run, on a new session, whose transcript up to that message is
// the source's. The run page offers "Fork from here" on each message a
// fork can start at, and names a run's origin and its forks.

const MODES = [
  ['reuse', 'reuse: a call the run made gets its recorded result; others run'],
  ['replay', 'replay: nothing runs; a call the run never made fails'],
  ['live', 'live: every call runs again'],
];

// ForkForm starts a fork at message m of run runID and then shows the
// new run. The text is the message's, to edit; an assistant message left
// as it was is asked of the model again. One form sends one
// Idempotency-Key per body, so a second click is the same fork. A refused
// fork shows the API's message (a refused point's names the points the
// run has).
export function ForkForm({ runID, message: m, version, onClose }) {
  const original = m.content || '';
  const [content, setContent] = useState(original);
  const [tools, setTools] = useState('reuse');
  const [agentVersion, setAgentVersion] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const keys = useRef(new Map());
  const id = `fork-${m.seq}`;
  const submit = async (e) => {
    e.preventDefault();
    const body = { seq: m.seq, tools };
    if (content !== original) {
      if (!content.trim()) {
        setError('Write the message, or put back the original text.');
        return;
      }
      body.content = content;
    }
    if (agentVersion.trim()) body.agent_version = agentVersion.trim();
    const sig = JSON.stringify(body);
    if (!keys.current.has(sig)) keys.current.set(sig, crypto.randomUUID());
    setBusy(true);
    setError('');
    try {
      const v = await api.fork(runID, body, keys.current.get(sig));
      location.hash = `#/runs/${encodeURIComponent(v.run_id)}`;
    } catch (err) {
      setError(err.message);
      setBusy(false);
    }
  };
  const user = m.role === 'user';
  return html`
    <form class="fork-form" onSubmit=${submit} aria-labelledby=${`${id}-h`}>
      <h3 id=${`${id}-h`}>Fork from message ${m.seq}</h3>
      <label for=${`${id}-content`}>${user ? 'Message' : 'Answer'}</label>
      <p class="hint" id=${`${id}-hint`}>${user
        ? 'The fork keeps the messages before this one and asks this instead.'
        : 'Left as it is, the model is asked again; an edited answer ends the fork with it.'}</p>
      <textarea id=${`${id}-content`} rows="3" aria-describedby=${`${id}-hint`} value=${content} onInput=${(e) => setContent(e.currentTarget.value)}></textarea>
      <div class="row">
        <label for=${`${id}-tools`}>Tool calls</label>
        <select id=${`${id}-tools`} value=${tools} onChange=${(e) => setTools(e.currentTarget.value)}>
          ${MODES.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
        </select>
      </div>
      <div class="row">
        <label for=${`${id}-version`}>Agent version (optional)</label>
        <input id=${`${id}-version`} class="mono" aria-describedby=${`${id}-version-hint`} value=${agentVersion} onInput=${(e) => setAgentVersion(e.currentTarget.value)} />
      </div>
      <p class="hint" id=${`${id}-version-hint`}>Empty: this run's version${version ? html`, <span class="mono">${version}</span>` : ''}.</p>
      <div class="row">
        <button type="submit" disabled=${busy}>Start fork</button>
        <button type="button" class="secondary" onClick=${onClose}>Close</button>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>`;
}

// Lineage names the run a fork was made from and the forks of this run
// (GET /v1/runs?forked_from=), each linked to its page.
export function Lineage({ view }) {
  const [forks, setForks] = useState([]);
  const [more, setMore] = useState(false);
  useEffect(() => {
    const ctl = new AbortController();
    api.listRuns({ forked_from: view.run_id, limit: 100 }, ctl.signal).then((p) => {
      // Each entry names its origin: a server that does not know the
      // filter answers other runs, which are not forks of this one.
      const runs = (p && p.runs) || [];
      const own = runs.filter((r) => r.forked_from && r.forked_from.run_id === view.run_id);
      setForks(own);
      setMore(!!(p && p.next_cursor) && own.length === runs.length);
    }, () => setForks([]));
    return () => ctl.abort();
  }, [view.run_id]);
  const from = view.forked_from;
  if (!from && forks.length === 0) return null;
  const link = (id) => html`<a class="mono" href=${`#/runs/${encodeURIComponent(id)}`}>${id}</a>`;
  return html`
    <div class="lineage" data-testid="lineage">
      ${from && html`<p>Forked from ${link(from.run_id)} at message ${from.seq}${from.tools ? ` (tools: ${from.tools})` : ''}</p>`}
      ${forks.length > 0 && html`<p>Forks: ${forks.map((f, i) => html`${i ? ', ' : ''}${link(f.run_id)}`)}${more ? ', and more' : ''}</p>`}
    </div>`;
}
