import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { credential, whenSignedOut } from './api.js';
import { SignIn } from './signin.js';
import { RunsPage } from './runs.js';
import { RunPage } from './run.js';
import { VersionsPage } from './versions.js';

// Routes live in the fragment (#/runs, #/runs/<id>, #/versions): the server serves
// one page, and a run id never leaves the browser in a request path to
// the console.
function route() {
  const h = location.hash.replace(/^#/, '') || '/runs';
  const m = h.match(/^\/runs\/([^/?]+)/);
  if (m) return { page: 'run', id: decodeURIComponent(m[1]) };
  if (h.startsWith('/versions')) return { page: 'versions' };
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
  return html`
    <header class="top">
      <a class="brand" href="#/runs">Baton</a>
      <nav aria-label="Main">
        <a href="#/runs" aria-current=${where.page === 'runs' ? 'page' : undefined}>Runs</a>
        <a href="#/versions" aria-current=${where.page === 'versions' ? 'page' : undefined}>Versions</a>
      </nav>
      <button type="button" class="quiet" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main">
      ${where.page === 'run' ? html`<${RunPage} key=${where.id} id=${where.id} />` : where.page === 'versions' ? html`<${VersionsPage} />` : html`<${RunsPage} />`}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));
