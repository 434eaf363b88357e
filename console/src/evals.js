import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { ms, tokens, usd, when } from './format.js';
import { change, failingChecks, outcomeChange, pairCases, passRate, plural, progressOf, running, verdict } from './evalrows.js';

// Evaluations (GET /v1/evals, GET /v1/evals/{id}): a dataset's cases run
// on an agent version and scored. The list shows each eval's progress and
// pass rate; an eval's page shows each case's verdict, its failing checks
// with their details, the judge's score and reason, a link to the case's
// run, and the totals; opened as #/evals/A?against=B it shows two evals
// of one dataset side by side, case by case.

const PAGE = 25;
const POLL_MS = 2000;

// usePoll reads load() now and again every two seconds while keep(data)
// says the data may still change; key changes start over.
function usePoll(load, keep, key) {
  const [data, setData] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const ctl = new AbortController();
    let timer;
    setData(null);
    setError('');
    const read = async () => {
      try {
        const d = await load(ctl.signal);
        setData(d);
        setError('');
        if (!keep(d)) return;
      } catch (err) {
        if (err.name === 'AbortError') return;
        setError(err.message);
      }
      timer = setTimeout(read, POLL_MS);
    };
    read();
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [key]);
  return { data, error };
}

function Progress({ view }) {
  const p = progressOf(view);
  return html`<span class="progress"><progress max=${Math.max(p.total, 1)} value=${p.scored} aria-label=${`${view.eval_id}: ${p.label}`}></progress> <span class="dim">${p.label}</span></span>`;
}

const statusBadge = (v) => html`<span class=${`badge s-${v.status}`}>${v.status}</span>`;

// EvalsPage lists the tenant's evals, newest first, a page at a time; it
// reads the page again while an eval on it runs.
export function EvalsPage() {
  const [cursors, setCursors] = useState(['']);
  const cursor = cursors[cursors.length - 1];
  const { data: page, error } = usePoll(
    (signal) => api.listEvals({ limit: PAGE, cursor }, signal),
    (p) => ((p && p.evals) || []).some(running),
    cursor,
  );
  const evals = (page && page.evals) || [];
  return html`
    <h1>Evals</h1>
    <p class="dim">Start an eval with <code>baton eval run DATASET.jsonl --agent A</code> (or <code>POST /v1/evals</code>); open one to see its cases, or compare two.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <table class="evals">
      <caption class="visually-hidden">Evals, newest first</caption>
      <thead><tr>
        <th scope="col">Eval</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Progress</th>
        <th scope="col" class="num">Pass rate</th><th scope="col">Created</th>
      </tr></thead>
      <tbody>
        ${evals.map((v) => html`
          <tr key=${v.eval_id} data-eval-id=${v.eval_id}>
            <td data-label="Eval"><a href=${`#/evals/${encodeURIComponent(v.eval_id)}`}>${v.name || v.eval_id}</a><div class="dim mono id">${v.eval_id}</div></td>
            <td data-label="Agent">${v.agent}${v.agent_version && html`<div class="dim mono version"><span class="visually-hidden">version </span>${v.agent_version}</div>`}</td>
            <td data-label="Status">${statusBadge(v)}</td>
            <td data-label="Progress"><${Progress} view=${v} /></td>
            <td data-label="Pass rate" class="num">${passRate(v)}</td>
            <td data-label="Created"><time datetime=${v.created_at}>${when(v.created_at)}</time></td>
          </tr>`)}
        ${page && evals.length === 0 && html`<tr><td colspan="6">No evals yet.</td></tr>`}
        ${!page && !error && html`<tr><td colspan="6">Loading…</td></tr>`}
      </tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${cursors.length < 2} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer evals</button>
      <button type="button" disabled=${!page || !page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Older evals</button>
    </nav>`;
}

const evalLink = (id) => `#/evals/${encodeURIComponent(id)}`;

// EvalPage shows one eval, or two side by side when against is set.
export function EvalPage({ id, against }) {
  const { data: a, error: errA } = usePoll((signal) => api.getEval(id, signal), running, id);
  const { data: b, error: errB } = usePoll((signal) => (against ? api.getEval(against, signal) : Promise.resolve(null)), running, against || '');
  const [onlyFailed, setOnlyFailed] = useState(false);
  if (!a) {
    return html`<h1>Eval <span class="mono">${id}</span></h1>${errA ? html`<p class="error" role="alert">${errA}</p>` : html`<p>Loading…</p>`}`;
  }
  return html`
    <p><a href="#/evals">← Evals</a></p>
    <h1>Eval ${a.name ? html`${a.name} ` : ''}<span class="mono">${a.eval_id}</span></h1>
    ${errA && html`<p class="error" role="alert">${errA}</p>`}
    <div class=${against ? 'pair evals-pair' : ''}>
      <${Summary} view=${a} side=${against ? 'A' : ''} />
      ${against && (b ? html`<${Summary} view=${b} side="B" />` : html`<section class="card">${errB ? html`<p class="error" role="alert">Eval ${against}: ${errB}</p>` : html`<p>Loading ${against}…</p>`}</section>`)}
    </div>
    <${CompareForm} id=${a.eval_id} against=${against} />
    <${RerunForm} view=${a} />
    <h2 id="cases-h">Cases</h2>
    <label class="check"><input type="checkbox" checked=${onlyFailed} onChange=${(e) => setOnlyFailed(e.currentTarget.checked)} /> Show only failed cases</label>
    ${against ? html`<${PairTable} a=${a} b=${b} onlyFailed=${onlyFailed} />` : html`<${CaseTable} view=${a} onlyFailed=${onlyFailed} />`}`;
}

// Summary is an eval's facts, progress and totals, and Cancel while it
// runs.
function Summary({ view: v, side }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const t = v.totals || {};
  const cancel = async () => {
    setBusy(true);
    setError('');
    try {
      await api.cancelEval(v.eval_id);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  const label = `summary-${v.eval_id}`;
  return html`
    <section class="eval-summary" aria-labelledby=${label} data-eval-id=${v.eval_id}>
      <h2 id=${label}>${side ? `${side}: ` : 'Summary '}${side && html`<a class="mono" href=${evalLink(v.eval_id)}>${v.eval_id}</a>`}</h2>
      <dl class="facts">
        <div><dt>Status</dt><dd><span role="status" aria-label=${`Status of ${v.eval_id}`} class=${`badge s-${v.status}`}>${v.status}</span></dd></div>
        <div><dt>Agent</dt><dd>${v.agent}</dd></div>
        <div><dt>Version</dt><dd class="mono">${v.agent_version}${v.alias ? html` <span class="dim">(alias ${v.alias})</span>` : ''}</dd></div>
        ${v.tools && html`<div><dt>Tools</dt><dd>${v.tools}</dd></div>`}
        <div><dt>Created</dt><dd><time datetime=${v.created_at}>${when(v.created_at)}</time></dd></div>
        ${v.ended_at && html`<div><dt>Ended</dt><dd><time datetime=${v.ended_at}>${when(v.ended_at)}</time></dd></div>`}
        <div><dt>Progress</dt><dd><${Progress} view=${v} /></dd></div>
      </dl>
      <dl class="facts totals" aria-label=${`Totals of ${v.eval_id}`}>
        <div><dt>Pass rate</dt><dd><strong>${passRate(v) || 'none scored yet'}</strong></dd></div>
        <div><dt>Mean turns</dt><dd>${typeof t.mean_turns === 'number' ? t.mean_turns.toFixed(1) : ''}</dd></div>
        <div><dt>Tokens</dt><dd>${tokens(t.total_tokens)}</dd></div>
        <div><dt>Cost</dt><dd>${typeof t.cost_usd === 'number' ? usd(t.cost_usd) : 'not priced'}</dd></div>
        <div><dt>Mean duration</dt><dd>${ms(t.mean_duration_ms)}</dd></div>
      </dl>
      ${running(v) && html`<div class="row"><button type="button" class="danger" disabled=${busy} onClick=${cancel}>Cancel eval</button>
        <span class="dim">Running cases are cancelled; no new case starts.</span></div>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </section>`;
}

// CompareForm opens this eval beside another one, by id.
function CompareForm({ id, against }) {
  const [other, setOther] = useState(against || '');
  const [error, setError] = useState('');
  const submit = (e) => {
    e.preventDefault();
    const o = other.trim();
    if (!o) {
      setError('Write the id of the eval to compare with.');
      return;
    }
    if (o === id) {
      setError('That is this eval: name another one.');
      return;
    }
    setError('');
    location.hash = `${evalLink(id)}?against=${encodeURIComponent(o)}`;
  };
  return html`
    <form class="compare" onSubmit=${submit}>
      <label for="against">Compare with another eval</label>
      <input id="against" class="mono" placeholder="eval id" value=${other} onInput=${(e) => setOther(e.currentTarget.value)} />
      <button type="submit">Compare</button>
      ${against && html`<a href=${evalLink(id)}>Show this eval alone</a>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>`;
}

// RerunForm runs this eval's cases again on another agent version
// (POST /v1/evals with dataset_from) and opens the two side by side. One
// Idempotency-Key per version, so a second click is the same eval.
function RerunForm({ view: v }) {
  const [version, setVersion] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const keys = useRef(new Map());
  const submit = async (e) => {
    e.preventDefault();
    const ver = version.trim();
    if (!ver) {
      setError('Write the agent version to run the cases on.');
      return;
    }
    const body = { agent: v.agent, agent_version: ver, dataset_from: v.eval_id };
    if (v.name) body.name = v.name;
    if (v.judge) body.judge = v.judge;
    if (v.tools) body.tools = v.tools;
    if (v.concurrency) body.concurrency = v.concurrency;
    if (!keys.current.has(ver)) keys.current.set(ver, crypto.randomUUID());
    setBusy(true);
    setError('');
    try {
      const next = await api.startEval(body, keys.current.get(ver));
      location.hash = `${evalLink(v.eval_id)}?against=${encodeURIComponent(next.eval_id)}`;
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <form class="compare" onSubmit=${submit}>
      <label for="rerun">Run these cases on another version</label>
      <input id="rerun" class="mono" placeholder="agent version" value=${version} onInput=${(e) => setVersion(e.currentTarget.value)} />
      <button type="submit" disabled=${busy}>Run again</button>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </form>`;
}

const runLink = (c) => c && c.run_id && html`<a class="mono" href=${`#/runs/${encodeURIComponent(c.run_id)}`}>${c.run_id}</a>`;

// Verdict is a case's badge: pass, fail, or its status.
function Verdict({ c }) {
  const v = verdict(c);
  const text = v === 'none' ? 'not in this eval' : v;
  return html`<span class=${`badge v-${v}`}>${text}</span>`;
}

// Checks lists a case's failing checks with their details (or says all
// passed), the judge's score and reason, and where a replay diverged.
function Checks({ c }) {
  if (!c) return null;
  const failing = failingChecks(c);
  const n = (c.checks || []).length;
  return html`
    ${failing.length > 0
      ? html`<ul class="checks">${failing.map((k) => html`<li><strong>${k.name}</strong>${k.detail ? html`: ${k.detail}` : ''}</li>`)}</ul>`
      : verdict(c) === 'pass' && n > 0 && html`<div class="dim">${n === 1 ? 'its check passed' : `all ${n} checks passed`}</div>`}
    ${c.judge && html`<div class="judge">Judge: <strong>${c.judge.score.toFixed(2)}</strong>${c.judge.reason ? html` — ${c.judge.reason}` : ''}${c.judge.run_id && html` <a class="dim" href=${`#/runs/${encodeURIComponent(c.judge.run_id)}`}>(judge's run)</a>`}</div>`}
    ${c.diverged_at && html`<div class="dim">Diverged from the recorded run at message ${c.diverged_at.seq}</div>`}`;
}

const shown = (rows, onlyFailed, failed) => (onlyFailed ? rows.filter(failed) : rows);

function CaseTable({ view, onlyFailed }) {
  const cases = shown(view.cases || [], onlyFailed, (c) => verdict(c) === 'fail');
  return html`
    <table class="cases" aria-labelledby="cases-h">
      <thead><tr>
        <th scope="col">Case</th><th scope="col">Result</th><th scope="col">Failing checks, judge</th>
        <th scope="col" class="num">Turns</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th><th scope="col">Run</th>
      </tr></thead>
      <tbody>
        ${cases.map((c) => html`
          <tr key=${c.id} data-case-id=${c.id} class=${verdict(c) === 'fail' ? 'failed' : undefined}>
            <td data-label="Case" class="mono">${c.id}</td>
            <td data-label="Result"><${Verdict} c=${c} /></td>
            <td data-label="Checks"><${Checks} c=${c} /></td>
            <td data-label="Turns" class="num">${c.turns}</td>
            <td data-label="Tokens" class="num">${tokens(c.total_tokens)}</td>
            <td data-label="Cost" class="num">${typeof c.cost_usd === 'number' ? usd(c.cost_usd) : ''}</td>
            <td data-label="Run">${runLink(c)}</td>
          </tr>`)}
        ${cases.length === 0 && html`<tr><td colspan="7">${onlyFailed ? 'No case failed.' : 'No cases.'}</td></tr>`}
      </tbody>
    </table>`;
}

// Side is one eval's cell of a case: verdict, failing checks, judge, the
// numbers and the run.
function Side({ c }) {
  if (!c) return html`<${Verdict} c=${null} />`;
  return html`
    <${Verdict} c=${c} />
    <${Checks} c=${c} />
    <div class="dim nums">${plural(c.turns ?? 0, 'turn')} · ${tokens(c.total_tokens)} tokens${typeof c.cost_usd === 'number' ? ` · ${usd(c.cost_usd)}` : ''}</div>
    <div>${runLink(c)}</div>`;
}

function PairTable({ a, b, onlyFailed }) {
  if (!b) return html`<p>Loading the other eval…</p>`;
  const rows = shown(pairCases(a, b), onlyFailed, (r) => verdict(r.a) === 'fail' || verdict(r.b) === 'fail');
  return html`
    <table class="cases pair-cases" aria-labelledby="cases-h">
      <thead><tr>
        <th scope="col">Case</th><th scope="col">A <span class="mono">${a.agent_version || a.eval_id}</span></th>
        <th scope="col">B <span class="mono">${b.agent_version || b.eval_id}</span></th><th scope="col">B − A</th>
      </tr></thead>
      <tbody>
        ${rows.map((r) => {
          const moved = outcomeChange(r);
          const d = r.a && r.b ? [
            change(r.a.turns, r.b.turns) && `${change(r.a.turns, r.b.turns)} turn${Math.abs(r.b.turns - r.a.turns) === 1 ? '' : 's'}`,
            change(r.a.total_tokens, r.b.total_tokens, tokens) && `${change(r.a.total_tokens, r.b.total_tokens, tokens)} tokens`,
            change(r.a.cost_usd, r.b.cost_usd, usd),
          ].filter(Boolean) : [];
          return html`
          <tr key=${r.id} data-case-id=${r.id}>
            <td data-label="Case" class="mono">${r.id}</td>
            <td data-label="A"><${Side} c=${r.a} /></td>
            <td data-label="B"><${Side} c=${r.b} /></td>
            <td data-label="B − A">${moved && html`<span class=${`badge moved-${moved}`}>${moved}</span>`}${d.map((x) => html`<div>${x}</div>`)}${!moved && d.length === 0 && r.a && r.b && r.a.pass !== undefined && r.b.pass !== undefined && html`<span class="dim">same</span>`}</td>
          </tr>`;
        })}
        ${rows.length === 0 && html`<tr><td colspan="4">${onlyFailed ? 'No case failed on either side.' : 'No cases.'}</td></tr>`}
      </tbody>
    </table>`;
}
