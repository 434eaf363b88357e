import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { credential, whenSignedOut } from './api.js';
import { SignIn } from './signin.js';
import { RunsPage } from './runs.js';
import { RunPage } from './run.js';
import { VersionsPage } from './versions.js';
import { EvalPage, EvalsPage } from './evals.js';
import { MemoriesPage } from './memories.js';
import { SchedulePage, SchedulesPage } from './schedules.js';

// Routes live in the fragment (#/runs, #/runs/<id>, #/versions, #/evals,
// #/evals/<id>, #/evals/<id>?against=<id>, #/memories,
// #/memories?subject=<subject>, #/schedules, #/schedules/<id>): the
// server serves
// one page, and a run id never leaves the browser in a request path to
// the console.
function route() {
  const h = location.hash.replace(/^#/, '') || '/runs';
  const m = h.match(/^\/runs\/([^/?]+)/);
  if (m) return { page: 'run', id: decodeURIComponent(m[1]) };
  if (h.startsWith('/versions')) return { page: 'versions' };
  const e = h.match(/^\/evals\/([^/?]+)(?:\?(.*))?$/);
  if (e) return { page: 'eval', id: decodeURIComponent(e[1]), against: new URLSearchParams(e[2] || '').get('against') || '' };
  if (h.startsWith('/evals')) return { page: 'evals' };
  const mem = h.match(/^\/memories(?:\?(.*))?$/);
  if (mem) return { page: 'memories', subject: new URLSearchParams(mem[1] || '').get('subject') || '' };
  const sch = h.match(/^\/schedules\/([^/?]+)/);
  if (sch) return { page: 'schedule', id: decodeURIComponent(sch[1]) };
  if (h.startsWith('/schedules')) return { page: 'schedules' };
  return { page: 'runs' };
}

function App() {
  const [signedIn, setSignedIn] = useState(!!credential.get());
  const [where, setWhere] = useState(route());
  const [notice, setNotice] = useState('');
  useEffect(() => {
    const on = () => setWhere(route());
    addEventListener('hashchange', on);
    whenSignedOut(() => {
      credential.clear();
      setNotice('The API refused the credential (401). Sign in again.');
      setSignedIn(false);
    });
    return () => removeEventListener('hashchange', on);
  }, []);
  if (!signedIn) {
    return html`<${SignIn} notice=${notice} onSignedIn=${() => { setNotice(''); setSignedIn(true); }} />`;
  }
  const signOut = () => {
    credential.clear();
    setSignedIn(false);
  };
  const pages = {
    run: () => html`<${RunPage} key=${where.id} id=${where.id} />`,
    versions: () => html`<${VersionsPage} />`,
    evals: () => html`<${EvalsPage} />`,
    eval: () => html`<${EvalPage} key=${`${where.id}|${where.against}`} id=${where.id} against=${where.against} />`,
    memories: () => html`<${MemoriesPage} key=${where.subject} subject=${where.subject} />`,
    schedules: () => html`<${SchedulesPage} />`,
    schedule: () => html`<${SchedulePage} key=${where.id} id=${where.id} />`,
    runs: () => html`<${RunsPage} />`,
  };
  return html`
    <header class="top">
      <a class="brand" href="#/runs">Baton</a>
      <nav aria-label="Main">
        <a href="#/runs" aria-current=${where.page === 'runs' ? 'page' : undefined}>Runs</a>
        <a href="#/evals" aria-current=${where.page === 'evals' || where.page === 'eval' ? 'page' : undefined}>Evals</a>
        <a href="#/versions" aria-current=${where.page === 'versions' ? 'page' : undefined}>Versions</a>
        <a href="#/memories" aria-current=${where.page === 'memories' ? 'page' : undefined}>Memories</a>
        <a href="#/schedules" aria-current=${where.page === 'schedules' || where.page === 'schedule' ? 'page' : undefined}>Schedules</a>
      </nav>
      <button type="button" class="quiet" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main">
      ${pages[where.page]()}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));
