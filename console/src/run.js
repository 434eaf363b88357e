import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, follow } from './api.js';
import { isTerminal, ms, pretty, usd, waitsOnPerson, when } from './format.js';
import { Pending } from './pending.js';
import { timeline } from './timeline.js';
import { ForkForm, Lineage } from './fork.js';
import { forkPoints, withSeqs } from './forkpoints.js';
import { ScheduledBy } from './schedules.js';

const POLL_MS = 2000;

// RunPage shows one run: its status and reason, what the person
// supervising it can do (pending decisions and client tools, cancel,
// steer, interrupt), the transcript with streamed text as it comes, the
// durable steps, usage, cost and budgets. While the run is in flight it
// follows the run's stream and reads the run view again after each
// committed event; when the stream cannot be read it polls.
export function RunPage({ id }) {
  const [view, setView] = useState(null);
  const [messages, setMessages] = useState(null); // the whole transcript when the view's was truncated
  const [live, setLive] = useState({}); // turn -> text streamed so far
  const [error, setError] = useState('');
  const [generation, setGeneration] = useState(0); // bumped to follow again after an action
  const viewRef = useRef(null);

  const apply = (v) => {
    viewRef.current = v;
    setView(v);
    if (v.result && v.result.messages_truncated) {
      loadAll(v.run_id).then(setMessages, () => setMessages(null));
    } else {
      setMessages(null);
    }
  };

  useEffect(() => {
    const ctl = new AbortController();
    let refresh = null;
    const reload = async () => {
      try {
        apply(await api.getRun(id, ctl.signal));
        setError('');
      } catch (err) {
        if (err.name !== 'AbortError') setError(err.message);
      }
    };
    const soon = () => {
      clearTimeout(refresh);
      refresh = setTimeout(reload, 100);
    };
    // after is the last committed event the page has seen, so a stream
    // opened again (after an action resumed the run) starts past it.
    let after = 0;
    const run = async () => {
      await reload();
      while (!ctl.signal.aborted) {
        const v = viewRef.current;
        if (!v || isTerminal(v.status) || waitsOnPerson(v.status)) return;
        try {
          await follow(id, after, (ev) => {
            if (ev.id && Number(ev.id) > after) after = Number(ev.id);
            if (ev.event === 'token' && ev.data && typeof ev.data.delta === 'string') {
              const t = ev.data.turn;
              setLive((l) => ({ ...l, [t]: (l[t] || '') + ev.data.delta }));
            } else if (ev.event === 'end' && ev.data && ev.data.run_id) {
              clearTimeout(refresh);
              apply(ev.data);
            } else if (ev.event !== 'thinking' && ev.event !== 'id') {
              soon();
            }
          }, ctl.signal);
        } catch (err) {
          if (ctl.signal.aborted) return;
          // No stream (a proxy that buffers it, a network error): poll.
          await new Promise((r) => setTimeout(r, POLL_MS));
          await reload();
        }
      }
    };
    run();
    return () => {
      ctl.abort();
      clearTimeout(refresh);
    };
  }, [id, generation]);

  const acted = (v) => {
    apply(v);
    setGeneration((g) => g + 1);
  };

  if (!view) {
    return html`<h1>Run ${id}</h1>${error ? html`<p class="error" role="alert">${error}</p>` : html`<p>Loading…</p>`}`;
  }
  const r = view.result || {};
  const transcript = withSeqs(messages || r.messages || []);
  return html`
    <p><a href="#/runs">← Runs</a></p>
    <h1>Run <span class="mono">${view.run_id}</span></h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Facts} view=${view} />
    <${Lineage} view=${view} />
    <${ScheduledBy} view=${view} />
    <${Controls} view=${view} onActed=${acted} />
    <${Pending} view=${view} onActed=${acted} />
    <div class="columns">
      <section aria-labelledby="transcript-h" class="transcript">
        <h2 id="transcript-h">Transcript</h2>
        <${Transcript} view=${view} messages=${transcript} result=${r} live=${live} running=${!isTerminal(view.status) && !waitsOnPerson(view.status)} />
      </section>
      <section aria-labelledby="steps-h" class="steps">
        <h2 id="steps-h">Steps</h2>
        <${Steps} events=${r.events || []} deliveries=${view.deliveries || []} />
        ${view.children && view.children.length > 0 && html`
          <h2 id="children-h">Child runs</h2>
          <${Children} children=${view.children} events=${r.events || []} deliveries=${view.deliveries || []} />`}
        <h2>Usage and cost</h2>
        <${Usage} view=${view} />
      </section>
    </div>`;
}

async function loadAll(id) {
  const all = [];
  let after = 0;
  for (;;) {
    const page = await api.messages(id, after);
    all.push(...page.messages);
    if (page.messages.length === 0 || page.next === after) return all;
    after = page.next;
  }
}

// reasonOf says why a run is where it is, from its envelope and events.
function reasonOf(view) {
  const r = view.result || {};
  if (r.error && r.error.message) return r.error.message;
  if (view.status === 'budget_exceeded' && r.budget) return `budget ${r.budget} reached`;
  if (r.interrupted && r.interrupted.reason) return r.interrupted.reason;
  const evs = r.events || [];
  for (let i = evs.length - 1; i >= 0; i--) {
    const e = evs[i];
    if (e.type === 'cancelled' && e.data && e.data.reason) return e.data.reason;
    if (e.type === 'approval_required' && view.status === 'approval_required') return 'an action waits for approval';
    if (e.type === 'runtime_tool_pending' && view.status === 'runtime_tool_pending') return 'a client tool waits for its result';
  }
  return '';
}

function Facts({ view }) {
  const reason = reasonOf(view);
  return html`
    <dl class="facts">
      <div><dt id="status-label">Status</dt><dd><span role="status" aria-labelledby="status-label" class=${`badge s-${view.status}`}>${view.status}</span>${waitsOnPerson(view.status) && html` <span class="marker">waiting on you</span>`}</dd></div>
      ${reason && html`<div><dt>Reason</dt><dd>${reason}</dd></div>`}
      <div><dt>Agent</dt><dd>${view.agent}</dd></div>
      ${view.agent_version && html`<div><dt>Version</dt><dd class="mono">${view.agent_version}</dd></div>`}
      <div><dt>Session</dt><dd class="mono">${view.session_id}</dd></div>
      <div><dt>Started</dt><dd><time datetime=${view.created_at}>${when(view.created_at)}</time></dd></div>
      <div><dt>Updated</dt><dd><time datetime=${view.updated_at}>${when(view.updated_at)}</time></dd></div>
      <div><dt>Turns</dt><dd>${view.result ? view.result.turn_count : 0}</dd></div>
    </dl>`;
}

function Controls({ view, onActed }) {
  const [steer, setSteer] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  if (isTerminal(view.status)) return null;
  const act = async (f) => {
    setBusy(true);
    setError('');
    try {
      onActed(await f());
      return true;
    } catch (err) {
      setError(err.message);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const send = async (e) => {
    e.preventDefault();
    if (!steer.trim()) {
      setError('Write a message first.');
      return;
    }
    if (await act(() => api.steer(view.run_id, steer))) setSteer('');
  };
  return html`
    <section aria-labelledby="controls-h" class="controls">
      <h2 id="controls-h">Control</h2>
      <form onSubmit=${send} class="steer">
        <label for="steer">Message to the agent</label>
        <textarea id="steer" rows="2" value=${steer} onInput=${(e) => setSteer(e.currentTarget.value)}></textarea>
        <button type="submit" disabled=${busy}>Send message</button>
      </form>
      <div class="row">
        <label for="stop-reason">Reason to stop</label>
        <input id="stop-reason" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
        <button type="button" class="danger" disabled=${busy} onClick=${() => act(() => api.cancel(view.run_id, reason))}>Cancel run</button>
        <button type="button" disabled=${busy} onClick=${() => act(() => api.interrupt(view.run_id, reason))}>Interrupt</button>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </section>`;
}

// Transcript pairs each tool call with its result (and the result's
// audit hash) and shows the text of the turn in flight as it streams.
// Each user and assistant message of the run itself has "Fork from
// here", which opens the fork's form under it.
function Transcript({ view, messages, result, live, running }) {
  const [forkAt, setForkAt] = useState(0);
  const points = forkPoints(view, messages);
  const results = new Map();
  for (const m of messages) {
    if (m.role === 'tool_result' && m.metadata && m.metadata.tool_call_id) results.set(m.metadata.tool_call_id, m);
  }
  const audit = new Map();
  for (const a of result.tool_audit_events || []) audit.set(a.tool_call_id, a);
  const answeredTurns = new Set(messages.filter((m) => m.role === 'assistant' && m.metadata).map((m) => m.metadata.turn));
  const items = [];
  messages.forEach((m, i) => {
    const md = m.metadata || {};
    if (m.role === 'tool_result' && md.tool_call_id && messages.some((c) => c.role === 'tool_call' && c.metadata && c.metadata.tool_call_id === md.tool_call_id)) {
      return; // shown with its call
    }
    if (m.role === 'tool_call') {
      items.push(html`<${ToolCall} key=${`c${i}`} call=${m} result=${results.get(md.tool_call_id)} audit=${audit.get(md.tool_call_id)} />`);
      return;
    }
    const forkable = points.has(m.seq);
    const open = forkable && forkAt === m.seq;
    items.push(html`
      <li key=${`m${i}`} class=${`msg role-${m.role}`} data-seq=${m.seq}>
        <div class="who head">
          <span>${md.source === 'memory' ? html`recalled memories <span class="dim">in the model's system prompt</span>` : m.role}${md.turn ? html` <span class="dim">turn ${md.turn}</span>` : ''}</span>
          ${forkable && html`<button type="button" class="link fork" aria-expanded=${open ? 'true' : 'false'} onClick=${() => setForkAt(open ? 0 : m.seq)}>Fork from here</button>`}
        </div>
        <div class="text">${m.content}</div>
        ${open && html`<${ForkForm} runID=${view.run_id} message=${m} version=${view.agent_version} onClose=${() => setForkAt(0)} />`}
      </li>`);
  });
  for (const [turn, text] of Object.entries(live)) {
    if (answeredTurns.has(Number(turn)) || !text) continue;
    items.push(html`
      <li key=${`live${turn}`} class="msg role-assistant streaming" aria-live="polite" aria-busy=${running ? 'true' : 'false'}>
        <div class="who">assistant <span class="dim">turn ${turn}, streaming</span></div>
        <div class="text" data-testid="streaming-text">${text}</div>
      </li>`);
  }
  if (items.length === 0) return html`<p>No messages yet.</p>`;
  return html`<ol class="messages">${items}</ol>`;
}

function ToolCall({ call, result, audit }) {
  const md = call.metadata || {};
  const rm = (result && result.metadata) || {};
  return html`
    <li class="msg tool" data-tool-call-id=${md.tool_call_id}>
      <div class="who">tool call <strong>${md.tool_name}</strong> <span class="dim mono">${md.tool_call_id}</span>${md.turn ? html` <span class="dim">turn ${md.turn}</span>` : ''}</div>
      <div class="pair">
        <div>
          <h3>Parameters</h3>
          <pre>${pretty(md.parameters === undefined ? {} : md.parameters)}</pre>
        </div>
        <div>
          <h3>Result ${result ? html`<span class=${rm.success === false ? 'bad' : 'good'}>${rm.success === false ? `failed${rm.error_type && rm.error_type !== 'not_recorded' ? ` (${rm.error_type})` : ''}` : 'succeeded'}</span>` : html`<span class="dim">pending</span>`}
            ${rm.replayed && html` <span class="badge replayed">replayed</span>`}
            ${rm.error_type === 'not_recorded' && html` <span class="badge not-recorded">not recorded</span>`}</h3>
          ${rm.replayed && html`<p class="note">Answered from the record of ${replayedFrom(rm.replayed_from)}: nothing ran again.</p>`}
          ${result && html`<pre>${pretty(result.content)}</pre>`}
          ${audit && html`<p class="audit">audit: result <span class="mono">${audit.result_sha256}</span>, parameters <span class="mono">${audit.parameters_sha256}</span>, executor ${audit.executor}</p>`}
        </div>
      </div>
    </li>`;
}

// replayedFrom names the source run's message a replayed result came
// from, linked to that run.
function replayedFrom(src) {
  if (!src || !src.run_id) return 'the source run';
  return html`run <a class="mono" href=${`#/runs/${encodeURIComponent(src.run_id)}`}>${src.run_id}</a>${src.seq ? ` (message ${src.seq})` : ''}`;
}

// deliveriesOf says how a step was delivered: chained (in the invocation
// of the step before it) or queued, once it ran; then its model retries,
// deliveries by the queue again, stale deliveries dropped.
function deliveriesOf(s) {
  const ran = s.end && (s.kind === 'model turn' || s.kind === 'tool call');
  const parts = ran ? [s.chained ? 'chained' : 'queued'] : [];
  if (s.retries) parts.push(`${s.retries} ${s.retries === 1 ? 'retry' : 'retries'}`);
  if (s.redeliveries) parts.push(`delivered again ${s.redeliveries}×`);
  if (s.stale) parts.push(`${s.stale} stale`);
  return parts.join(', ');
}

function Steps({ events, deliveries }) {
  const steps = timeline(events, deliveries);
  if (steps.length === 0) return html`<p>No steps yet.</p>`;
  return html`
    <div class="scroll">
    <table class="timeline">
      <caption class="visually-hidden">Durable steps of the run</caption>
      <thead><tr><th scope="col">Step</th><th scope="col">Started</th><th scope="col">Took</th><th scope="col">Deliveries</th><th scope="col">Outcome</th></tr></thead>
      <tbody>
        ${steps.map((s, i) => html`
          <tr key=${i} class=${s.inDoubt ? 'in-doubt' : ''} data-call-id=${s.callId}>
            <td>${s.kind}${s.detail ? html` <span class="dim">${s.detail}</span>` : ''}</td>
            <td><time datetime=${s.start}>${new Date(s.start).toLocaleTimeString()}</time></td>
            <td>${s.end ? ms(new Date(s.end) - new Date(s.start)) : 'in flight'}</td>
            <td>${deliveriesOf(s)}</td>
            <td>${s.outcome}${s.inDoubt ? html` <strong>in_doubt</strong>` : ''}</td>
          </tr>`)}
      </tbody>
    </table>
    </div>`;
}

// Children lists the child runs the run's agent tools started (sub-agents),
// each linked to its own page, with how long its call took (until the
// child ended, not its slowest sibling) and what it cost once it ended.
function Children({ children, events, deliveries }) {
  const steps = timeline(events, deliveries);
  return html`
    <ul class="children" aria-labelledby="children-h">
      ${children.map((c) => {
        // The call's own step: from its start to its child's end.
        const t = steps.find((s) => s.callId === c.tool_call_id) || {};
        const took = t.start && t.end ? ms(new Date(t.end) - new Date(t.start)) : '';
        return html`
        <li key=${c.run_id} data-run-id=${c.run_id}>
          <a class="mono" href=${`#/runs/${c.run_id}`}>${c.run_id}</a>
          <span class=${`badge s-${c.status}`}>${c.status}</span>
          <span class="dim">${c.agent}, call ${c.tool_call_id}${took ? `, took ${took}` : ''}${c.cost ? `, ${usd(c.cost.total_usd)}` : ''}</span>
        </li>`;
      })}
    </ul>`;
}

function Usage({ view }) {
  const r = view.result || {};
  const u = r.usage || {};
  const c = r.cost;
  const budgets = view.budgets || [];
  const rows = Object.entries(u).filter(([, v]) => typeof v === 'number');
  return html`
    <dl class="facts">
      ${rows.map(([k, v]) => html`<div key=${k}><dt>${k.replaceAll('_', ' ')}</dt><dd>${v.toLocaleString()}</dd></div>`)}
      ${c && html`<div><dt>cost</dt><dd><strong>${usd(c.total_usd)}</strong> <span class="dim">(model ${usd(c.model_usd)}, AWS ${usd(c.aws_usd)})</span></dd></div>`}
    </dl>
    ${budgets.length > 0 && html`
      <h3>Budgets</h3>
      <ul class="budgets">
        ${budgets.map((b) => {
          const usdBudget = b.name === 'cost_usd';
          const cur = usdBudget ? b.current_usd || 0 : b.current;
          const max = usdBudget ? b.ceiling_usd : b.ceiling;
          const id = `budget-${b.name}`;
          return html`<li key=${b.name}><span id=${id}>${b.name}</span>: ${usdBudget ? `${usd(cur)} of ${usd(max)}` : `${cur} of ${max}`}
            <meter aria-labelledby=${id} min="0" max=${max} value=${Math.min(cur, max)} high=${max * 0.8}></meter></li>`;
        })}
      </ul>`}`;
}
