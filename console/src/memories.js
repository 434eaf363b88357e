import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { when } from './format.js';

const PAGE = 50;

// whose names a subject in sentences: the one named, or the caller's own.
const whose = (subject) => (subject ? `of ${subject}` : 'of your own subject');

// explain words a failed request, a 403 with the scopes it needs.
const explain = (err) => (err.status === 403 ? `Forbidden: ${err.message}.` : err.message);

// MemoriesPage shows the long-term memories of one subject (an end user)
// of the caller's tenant (GET /v1/memories): the caller's own when the
// subject field is empty, another's with the memories:subject scope.
// Each memory shows when it was written, by what (a tool call, an
// extraction, a summary), the run that wrote it (linked), and its text,
// with a Delete button (DELETE /v1/memories/{id}); "Erase all of this
// subject" asks for a confirmation, then erases the subject (DELETE
// /v1/memories?subject=), which also refuses what runs that already
// began would write later.
export function MemoriesPage({ subject }) {
  const [field, setField] = useState(subject);
  const [memories, setMemories] = useState(null);
  const [next, setNext] = useState('');
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setMemories(null);
    setNext('');
    setError('');
    setConfirming(false);
    api.listMemories({ subject, limit: PAGE }, ctl.signal).then((page) => {
      setMemories(page.memories || []);
      setNext(page.next_cursor || '');
    }, (err) => {
      if (err.name !== 'AbortError') setError(explain(err));
    });
    return () => ctl.abort();
  }, [subject, generation]);

  const show = (e) => {
    e.preventDefault();
    const s = field.trim();
    const hash = s ? `#/memories?subject=${encodeURIComponent(s)}` : '#/memories';
    setStatus('');
    // Another subject is another page (the route remounts it).
    if (location.hash === hash || (!s && !subject)) setGeneration(generation + 1);
    else location.hash = hash;
  };
  const more = async () => {
    setBusy(true);
    try {
      const page = await api.listMemories({ subject, limit: PAGE, cursor: next });
      setMemories([...memories, ...(page.memories || [])]);
      setNext(page.next_cursor || '');
    } catch (err) {
      setError(explain(err));
    }
    setBusy(false);
  };
  const remove = async (m) => {
    setBusy(true);
    setError('');
    try {
      await api.deleteMemory(m.id, subject);
      setMemories(memories.filter((x) => x.id !== m.id));
      setStatus(`Deleted memory ${m.id}.`);
    } catch (err) {
      setError(explain(err));
    }
    setBusy(false);
  };
  const erase = async () => {
    setBusy(true);
    setError('');
    try {
      const res = await api.eraseMemories(subject);
      setStatus(`Erased the memories of ${res.subject}: ${res.deleted} deleted. Runs that began before ${when(res.erased_at)} will not write any more.`);
      setConfirming(false);
      setGeneration(generation + 1);
    } catch (err) {
      setError(explain(err));
    }
    setBusy(false);
  };

  const named = memories && memories.length ? memories[0].subject : subject;
  return html`
    <h1>Memories</h1>
    <form class="toolbar memory-subject" onSubmit=${show}>
      <span class="field">
        <label for="memory-subject">Subject</label>
        <input id="memory-subject" value=${field} placeholder="your own" aria-describedby="memory-subject-hint"
          onInput=${(e) => setField(e.currentTarget.value)} />
      </span>
      <button type="submit">Show memories</button>
      <p id="memory-subject-hint" class="note">
        The end user whose memories to show. Empty: your own (your credential's identity); another subject needs the memories:subject scope.
      </p>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <p class="count" aria-live="polite">${status}</p>
    ${!memories && !error && html`<p>Loading…</p>`}
    ${memories && html`
      <h2>${memories.length}${next ? '+' : ''} memor${memories.length === 1 && !next ? 'y' : 'ies'} ${whose(named)}</h2>
      <table class="memories">
        <caption class="visually-hidden">Memories ${whose(named)}</caption>
        <thead><tr>
          <th scope="col">Created</th><th scope="col">Source</th><th scope="col">Source run</th><th scope="col">Text</th><th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr></thead>
        <tbody>
          ${memories.map((m) => html`
            <tr key=${m.id} data-memory-id=${m.id}>
              <td data-label="Created"><time datetime=${m.created_at}>${when(m.created_at)}</time><div class="dim mono id">${m.id}</div></td>
              <td data-label="Source">${m.source || html`<span class="dim">unknown</span>`}</td>
              <td data-label="Source run" class="run">${m.source_run_id
                ? html`<a class="mono" href=${`#/runs/${encodeURIComponent(m.source_run_id)}`}>${m.source_run_id}</a>`
                : html`<span class="dim">none</span>`}</td>
              <td data-label="Text" class="text">${m.text}</td>
              <td class="actions">
                <button type="button" class="secondary" disabled=${busy} aria-label=${`Delete memory ${m.id}`} onClick=${() => remove(m)}>Delete</button>
              </td>
            </tr>`)}
          ${memories.length === 0 && html`<tr><td colspan="5">No memories ${whose(named)}.</td></tr>`}
        </tbody>
      </table>
      ${next && html`<nav class="pager" aria-label="Pages"><button type="button" disabled=${busy} onClick=${more}>More memories</button></nav>`}
      <section class="erase" aria-labelledby="erase-title">
        <h2 id="erase-title">Erase</h2>
        ${!confirming && html`
          <p class="note">Deletes every memory ${whose(named)}, and refuses what runs that already began would remember later.</p>
          <button type="button" class="danger" disabled=${busy} onClick=${() => setConfirming(true)}>Erase all of this subject</button>`}
        ${confirming && html`
          <div class="confirm" role="alertdialog" aria-labelledby="erase-question">
            <p id="erase-question"><strong>Erase every memory ${whose(named)}?</strong> This cannot be undone.</p>
            <div class="row">
              <button type="button" class="danger" disabled=${busy} onClick=${erase}>Yes, erase them all</button>
              <button type="button" class="secondary" disabled=${busy} onClick=${() => setConfirming(false)}>Keep them</button>
            </div>
          </div>`}
      </section>`}`;
}
