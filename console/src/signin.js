import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api, ApiError, credential } from './api.js';

// SignIn asks for the credential (an API token, or a bearer JWT where the
// deployment accepts them), checks it with one list request and keeps it
// in sessionStorage for this tab.
export function SignIn({ notice, onSignedIn }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) {
      setError('Enter an API token.');
      return;
    }
    setBusy(true);
    setError('');
    credential.set(t);
    try {
      await api.listRuns({ limit: 1 });
      onSignedIn();
    } catch (err) {
      credential.clear();
      setError(err instanceof ApiError && err.status === 401 ? 'The API does not accept this token.' : `Sign-in failed: ${err.message}`);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main id="main" class="signin">
      <h1>Baton console</h1>
      <p>Sign in with an API token (or a bearer JWT where your deployment accepts them). It is kept in this tab only.</p>
      ${notice && html`<p class="notice" role="status">${notice}</p>`}
      <form onSubmit=${submit} noValidate>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" value=${token}
          onInput=${(e) => setToken(e.currentTarget.value)} aria-describedby=${error ? 'token-error' : undefined} aria-invalid=${error ? 'true' : undefined} />
        ${error && html`<p id="token-error" class="error" role="alert">${error}</p>`}
        <button type="submit" disabled=${busy}>Sign in</button>
      </form>
    </main>`;
}
