// Talking to the catalogue's own API. The browser signs in with a cookie session; every unsafe
// request carries the session's CSRF token in X-CSRFToken.

let session = { user: null, csrf_token: null };
const listeners = new Set();

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export function currentUser() { return session.user; }
export function onSessionChange(fn) { listeners.add(fn); }
function changed() { for (const fn of listeners) fn(session.user); }

export async function loadSession() {
  try {
    session = await api('/account/session/');
  } catch {
    session = { user: null, csrf_token: null };
  }
  changed();
  return session.user;
}

export async function signIn(username, password) {
  session = await api('/account/login/', { method: 'POST', json: { username, password } });
  changed();
  return session.user;
}

export async function signOut() {
  try { await api('/account/logout/', { method: 'POST' }); } finally {
    session = { user: null, csrf_token: null };
    changed();
  }
}

// A readable sentence out of any of the API's error shapes.
export function messageOf(body, status) {
  if (body && typeof body === 'object') {
    if (typeof body.detail === 'string') return body.detail;
    if (Array.isArray(body.errors) && body.errors.length) return body.errors.map(String).join(' ');
    if (typeof body.error === 'string') return body.error;
    if (typeof body.message === 'string') return body.message;
    const parts = Object.entries(body).filter(([, v]) => Array.isArray(v) || typeof v === 'string')
      .map(([k, v]) => `${k}: ${[].concat(v).join(' ')}`);
    if (parts.length) return parts.join('; ');
  }
  if (status === 401) return 'Please sign in first.';
  if (status === 403) return 'You are not allowed to do that.';
  if (status === 404) return 'Not found: it may have been deleted, or you may not see it.';
  if (status === 413) return 'That is too large for this catalogue.';
  return `The catalogue answered with an error (${status}).`;
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    for (const v of [].concat(value)) q.append(key, v);
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

export async function api(path, { method = 'GET', json, form, params } = {}) {
  const headers = { Accept: 'application/json' };
  let body;
  if (json !== undefined) { headers['Content-Type'] = 'application/json'; body = JSON.stringify(json); }
  else if (form !== undefined) body = form;
  if (method !== 'GET' && method !== 'HEAD' && session.csrf_token) headers['X-CSRFToken'] = session.csrf_token;
  const response = await fetch(path + (params ? query(params) : ''), { method, headers, body, credentials: 'same-origin' });
  const text = await response.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch { data = text; } }
  if (!response.ok) throw new ApiError(response.status, messageOf(data, response.status), data);
  return data;
}

// A multipart POST/PUT with the progress of the bytes sent (fetch cannot report it).
export function sendWithProgress(path, formData, onProgress, method = 'POST') {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    xhr.setRequestHeader('Accept', 'application/json');
    if (session.csrf_token) xhr.setRequestHeader('X-CSRFToken', session.csrf_token);
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total); });
    xhr.addEventListener('load', () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch { data = xhr.responseText; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, messageOf(data, xhr.status), data));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'The connection to the catalogue was lost during the upload.')));
    xhr.send(formData);
  });
}

// Waits for an execution request to finish; calls onStatus with each state seen.
export async function followExecution(id, onStatus, interval = 500) {
  for (;;) {
    const state = await api(`/api/v2/resource-service/execution-status/${encodeURIComponent(id)}`);
    onStatus?.(state);
    if (state.status === 'finished' || state.status === 'failed') return state;
    await new Promise((r) => setTimeout(r, interval));
  }
}

export function can(resource, perm) {
  return Array.isArray(resource?.perms) && resource.perms.includes(perm);
}
