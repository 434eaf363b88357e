import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { when } from './format.js';

// VersionsPage shows the deployment's agent versions and aliases
// (GET /v1/agent-versions, which needs the agents:manage scope): each
// alias with the versions it routes new runs to and their weights, its
// tenant pins; each version with who published it, its agents, the
// aliases on it, and how many of the tenant's latest runs ran on it.
export function VersionsPage() {
  const [data, setData] = useState(null);
  const [runs, setRuns] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    const ctl = new AbortController();
    (async () => {
      try {
        const [v, r] = await Promise.all([api.versions(ctl.signal), api.listRuns({ limit: 100 }, ctl.signal)]);
        setData(v);
        setRuns(r.runs || []);
      } catch (err) {
        if (err.name === 'AbortError') return;
        setError(err.status === 403
          ? 'Agent versions need a credential with the agents:manage scope; this one lacks it.'
          : err.message);
      }
    })();
    return () => ctl.abort();
  }, []);
  if (error) return html`<h1>Agent versions</h1><p class="error" role="alert">${error}</p>`;
  if (!data) return html`<h1>Agent versions</h1><p>Loading…</p>`;
  const counts = {};
  for (const r of runs || []) if (r.agent_version) counts[r.agent_version] = (counts[r.agent_version] || 0) + 1;
  const on = {};
  for (const a of data.aliases) {
    for (const r of a.routes) (on[r.version] = on[r.version] || []).push(r.weight < 100 ? `${a.name} ${r.weight}%` : a.name);
    for (const [t, v] of Object.entries(a.tenants || {})) (on[v] = on[v] || []).push(`${a.name} (tenant ${t})`);
  }
  return html`
    <h1>Agent versions</h1>
    <h2>Aliases</h2>
    <table class="versions">
      <caption class="visually-hidden">Aliases and the versions their new runs start on</caption>
      <thead><tr><th scope="col">Alias</th><th scope="col">New runs go to</th><th scope="col">Tenant pins</th><th scope="col">Changed</th></tr></thead>
      <tbody>
        ${data.aliases.map((a) => html`
          <tr data-alias=${a.name}>
            <td data-label="Alias"><strong>${a.name}</strong><div class="dim">revision ${a.revision}</div></td>
            <td data-label="New runs go to">${a.routes.map((r) => html`<div><span class="mono">${r.version}</span> <span class="weight">${r.weight}%</span></div>`)}</td>
            <td data-label="Tenant pins">${Object.entries(a.tenants || {}).map(([t, v]) => html`<div>${t}: <span class="mono">${v}</span></div>`)}</td>
            <td data-label="Changed"><time datetime=${a.updated_at}>${when(a.updated_at)}</time><div class="dim">${a.updated_by}</div></td>
          </tr>`)}
        ${data.aliases.length === 0 && html`<tr><td colspan="4">No aliases yet.</td></tr>`}
      </tbody>
    </table>
    <h2>Versions</h2>
    <table class="versions">
      <caption class="visually-hidden">Published versions, newest first</caption>
      <thead><tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col">Agents</th><th scope="col">Aliases</th><th scope="col" class="num">Your latest runs</th></tr></thead>
      <tbody>
        ${data.versions.map((v) => html`
          <tr data-version=${v.id}>
            <td data-label="Version" class="mono">${v.id}</td>
            <td data-label="Published"><time datetime=${v.published_at}>${when(v.published_at)}</time><div class="dim">${v.published_by}</div></td>
            <td data-label="Agents">${v.agents.join(', ')}</td>
            <td data-label="Aliases">${(on[v.id] || []).join(', ')}</td>
            <td data-label="Your latest runs" class="num">${counts[v.id] || 0}</td>
          </tr>`)}
      </tbody>
    </table>
    <p class="dim">Runs counted among your tenant's latest ${(runs || []).length} runs. Publish and move aliases with <code>baton agents</code>.</p>`;
}
