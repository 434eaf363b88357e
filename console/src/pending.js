import { useState } from 'preact/hooks';
import { Validator } from '@cfworker/json-schema';
import { html } from './html.js';
import { api } from './api.js';
import { pretty, when } from './format.js';

// Pending shows what the run waits on: approval cards (summary, the
// redacted preview, Approve/Reject with a reason) and client-tool
// requests (a JSON result checked against the API's schema of a tool
// result before it is sent).
export function Pending({ view, onActed }) {
  const acts = (view.pending && view.pending.actions) || [];
  const reqs = (view.pending && view.pending.tool_requests) || [];
  if (acts.length === 0 && reqs.length === 0) return null;
  return html`
    <section aria-labelledby="pending-h" class="pending">
      <h2 id="pending-h">Waiting on you</h2>
      ${acts.map((a) => html`<${Approval} key=${a.action_id} runID=${view.run_id} action=${a} onActed=${onActed} />`)}
      ${reqs.map((r) => html`<${ToolRequest} key=${r.request_id} runID=${view.run_id} req=${r} onActed=${onActed} />`)}
    </section>`;
}

function Approval({ runID, action, onActed }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const decide = async (decision) => {
    setBusy(true);
    setError('');
    try {
      onActed(await api.approve(runID, action.action_id, decision, reason.trim()));
    } catch (err) {
      setError(err.message);
      setBusy(false);
    }
  };
  const id = `reason-${action.action_id}`;
  return html`
    <article class="card" aria-labelledby=${`${id}-h`}>
      <h3 id=${`${id}-h`}>Approve <span class="mono">${action.tool_name}</span>?</h3>
      ${action.run_id && html`<p class="dim">of child run <a class="mono" href=${`#/runs/${action.run_id}`}>${action.run_id}</a></p>`}
      <p class="summary">${action.summary}</p>
      <h4>Preview (redacted)</h4>
      <pre>${pretty(action.preview)}</pre>
      <p class="dim">Expires <time datetime=${action.expires_at}>${when(action.expires_at)}</time></p>
      <label for=${id}>Reason (optional)</label>
      <input id=${id} value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
      <div class="row">
        <button type="button" class="good" disabled=${busy} onClick=${() => decide('accept')}>Approve</button>
        <button type="button" class="danger" disabled=${busy} onClick=${() => decide('reject')}>Reject</button>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </article>`;
}

// resultSchema is the API's own schema of a submitted tool result, from
// its OpenAPI document (read once).
let resultSchema = null;
async function validator() {
  if (!resultSchema) {
    const doc = await api.openAPI();
    resultSchema = doc.components.schemas.ToolResult;
  }
  return new Validator(resultSchema, '2020-12', false);
}

function ToolRequest({ runID, req, onActed }) {
  const [text, setText] = useState('{}');
  const [failed, setFailed] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const id = `result-${req.request_id}`;
  const submit = async (e) => {
    e.preventDefault();
    setError('');
    let body;
    if (failed) {
      body = { request_id: req.request_id, success: false, error: text.trim() || 'the client tool failed' };
    } else {
      let value;
      try {
        value = JSON.parse(text);
      } catch (err) {
        setError(`Not valid JSON: ${err.message}`);
        return;
      }
      body = { request_id: req.request_id, success: true, result: value };
    }
    setBusy(true);
    try {
      const v = await validator();
      const out = v.validate(body);
      if (!out.valid) {
        setError(`Does not match the tool result schema: ${out.errors.map((x) => `${x.instanceLocation} ${x.error}`).join('; ')}`);
        setBusy(false);
        return;
      }
      onActed(await api.submitResult(runID, body));
    } catch (err) {
      setError(err.message);
      setBusy(false);
    }
  };
  return html`
    <article class="card" aria-labelledby=${`${id}-h`}>
      <h3 id=${`${id}-h`}>Client tool <span class="mono">${req.tool_name}</span></h3>
      ${req.run_id && html`<p class="dim">of child run <a class="mono" href=${`#/runs/${req.run_id}`}>${req.run_id}</a></p>`}
      <h4>Parameters</h4>
      <pre>${pretty(req.parameters || {})}</pre>
      <p class="dim">Expires <time datetime=${req.expires_at}>${when(req.expires_at)}</time></p>
      <form onSubmit=${submit} noValidate>
        <label for=${id}>${failed ? 'Error message' : 'Result (JSON)'}</label>
        <textarea id=${id} rows="4" spellcheck="false" value=${text} onInput=${(e) => setText(e.currentTarget.value)}
          aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? `${id}-error` : undefined}></textarea>
        <label class="check"><input type="checkbox" checked=${failed} onChange=${(e) => setFailed(e.currentTarget.checked)} /> The tool failed</label>
        <button type="submit" disabled=${busy}>Submit result</button>
        ${error && html`<p id=${`${id}-error`} class="error" role="alert">${error}</p>`}
      </form>
    </article>`;
}
