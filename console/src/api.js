// The console's only way to Baton: the public HTTP API, with the
// credential the user signed in with (an API token or a bearer JWT, kept
// in sessionStorage for this tab; never in a URL).

const KEY = 'baton.console.token';

export const credential = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

// The API is the console's parent path: the console is served at
// <api>/console/, whatever stage or base path <api> carries.
const apiBase = new URL('../', new URL('.', location.href.split('#')[0]));

export function apiURL(path, query) {
  const u = new URL(path, apiBase);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, String(v));
  }
  return u;
}

// ApiError is a failed request: the API's error code and message.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onSignedOut = () => {};
export function whenSignedOut(f) {
  onSignedOut = f;
}

async function request(method, path, { query, body, signal, etag, meta, key } = {}) {
  const headers = { Authorization: `Bearer ${credential.get()}`, Accept: 'application/json' };
  if (etag) headers['If-None-Match'] = etag;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    // A retried click is the same request, never a second decision.
    headers['Idempotency-Key'] = key || crypto.randomUUID();
  }
  let res;
  try {
    res = await fetch(apiURL(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', `The API did not answer: ${err.message}`);
  }
  if (res.status === 304) return { notModified: true, etag };
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: reported below
  }
  if (!res.ok) {
    const e = (data && data.error) || {};
    if (res.status === 401) onSignedOut();
    throw new ApiError(res.status, e.code || `http_${res.status}`, e.message || `${method} ${path}: HTTP ${res.status}`);
  }
  return meta ? { data, etag: res.headers.get('ETag') || '' } : data;
}

export const api = {
  listRuns: (query, signal) => request('GET', 'v1/runs', { query, signal }),
  // listRunsSince reads a page of runs again only when it changed since
  // the read whose ETag is etag: {notModified: true} or {data, etag}.
  listRunsSince: (query, etag, signal) => request('GET', 'v1/runs', { query, signal, etag, meta: true }),
  getRun: (id, signal) => request('GET', `v1/runs/${encodeURIComponent(id)}`, { signal }),
  messages: (id, after, signal) => request('GET', `v1/runs/${encodeURIComponent(id)}/messages`, { query: { after, limit: 1000 }, signal }),
  approve: (id, actionID, decision, reason) =>
    request('POST', `v1/runs/${encodeURIComponent(id)}/approvals/${encodeURIComponent(actionID)}`, { body: reason ? { decision, reason } : { decision } }),
  submitResult: (id, body) => request('POST', `v1/runs/${encodeURIComponent(id)}/tool-results`, { body }),
  cancel: (id, reason) => request('POST', `v1/runs/${encodeURIComponent(id)}/cancel`, { body: reason ? { reason } : {} }),
  steer: (id, content) => request('POST', `v1/runs/${encodeURIComponent(id)}/messages`, { body: { content } }),
  interrupt: (id, reason) => request('POST', `v1/runs/${encodeURIComponent(id)}/interrupt`, { body: reason ? { reason } : {} }),
  // fork starts a run from a message of run id; key is the form's
  // Idempotency-Key, so a second click of one form is one fork.
  fork: (id, body, key) => request('POST', `v1/runs/${encodeURIComponent(id)}/fork`, { body, key }),
  openAPI: () => request('GET', 'v1/openapi.json'),
  versions: (signal) => request('GET', 'v1/agent-versions', { signal }),
  listEvals: (query, signal) => request('GET', 'v1/evals', { query, signal }),
  getEval: (id, signal) => request('GET', `v1/evals/${encodeURIComponent(id)}`, { signal }),
  // startEval starts an eval; key is the form's Idempotency-Key.
  startEval: (body, key) => request('POST', 'v1/evals', { body, key }),
  cancelEval: (id) => request('POST', `v1/evals/${encodeURIComponent(id)}/cancel`, { body: {} }),
  // The memories of a subject ('' or undefined: the caller's own).
  listMemories: (query, signal) => request('GET', 'v1/memories', { query, signal }),
  deleteMemory: (id, subject) => request('DELETE', `v1/memories/${encodeURIComponent(id)}`, { query: { subject } }),
  eraseMemories: (subject) => request('DELETE', 'v1/memories', { query: { subject } }),
  // Schedules (docs/schedules.md) and their trigger history.
  listSchedules: (query, signal) => request('GET', 'v1/schedules', { query, signal }),
  getSchedule: (id, signal) => request('GET', `v1/schedules/${encodeURIComponent(id)}`, { signal }),
  pauseSchedule: (id, paused) => request('PATCH', `v1/schedules/${encodeURIComponent(id)}`, { body: { paused } }),
  deleteSchedule: (id) => request('DELETE', `v1/schedules/${encodeURIComponent(id)}`),
  triggers: (id, query, signal) => request('GET', `v1/schedules/${encodeURIComponent(id)}/triggers`, { query, signal }),
};

// follow reads GET /v1/runs/{id}/stream (fetch, so the credential goes
// in a header, which EventSource cannot send) and hands each server-sent
// event to on({event, data, id}) (an id alone as event "id") until the
// stream ends, the signal
// aborts, or it fails (the error is thrown). after resumes after that
// event seq (Last-Event-ID).
export async function follow(id, after, on, signal) {
  const headers = { Authorization: `Bearer ${credential.get()}`, Accept: 'text/event-stream' };
  if (after > 0) headers['Last-Event-ID'] = String(after);
  const res = await fetch(apiURL(`v1/runs/${encodeURIComponent(id)}/stream`), { headers, signal, credentials: 'omit', cache: 'no-store' });
  if (!res.ok || !res.body) {
    if (res.status === 401) onSignedOut();
    throw new ApiError(res.status, `http_${res.status}`, `stream: HTTP ${res.status}`);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let ev = { event: 'message', data: [], id: '' };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (ev.data.length) {
          let data = ev.data.join('\n');
          try {
            data = JSON.parse(data);
          } catch {
            // a data line that is not JSON is handed over as text
          }
          on({ event: ev.event, data, id: ev.id });
        } else if (ev.id) {
          on({ event: 'id', data: null, id: ev.id }); // only moves the cursor
        }
        ev = { event: 'message', data: [], id: '' };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'event') ev.event = val;
      else if (field === 'data') ev.data.push(val);
      else if (field === 'id') ev.id = val;
    }
  }
}
