// Talking to the catalogue's own API. The browser signs in with a cookie session; every unsafe
// request carries the session's CSRF token in X-CSRFToken. Every request says the reader's
// language (Accept-Language), so that the text the server supplies comes back in it.

import { lang, load, t } from './i18n.js';

// The messages are needed only to describe a failure: this module does not wait for them, so that
// the first requests (the search page's results) leave as soon as the page's code is parsed.
const messages = load('common');

let session = { user: null, csrf_token: null };
const listeners = new Set();

// `message` is the sentence a page shows: the UI's own, in the reader's language, with the
// server's (English, as GeoNode's) beside it; `detail` is the server's alone.
export class ApiError extends Error {
  constructor(status, message, body, detail = '') {
    super(message);
    this.status = status;
    this.body = body;
    this.detail = detail;
  }
}

export function currentUser() { return session.user; }
export function onSessionChange(fn) { listeners.add(fn); }
function changed() { for (const fn of listeners) fn(session.user); }

// Who is signed in is asked as soon as this module runs, beside the first page's own requests; the
// first loadSession() takes that answer.
let firstSession = api('/account/session/');
firstSession.catch(() => {});

export async function loadSession() {
  const asked = firstSession || api('/account/session/');
  firstSession = null;
  try {
    session = await asked;
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

// The server's own message out of any of the API's error shapes ('' when it gave none).
export function detailOf(body) {
  if (body && typeof body === 'object') {
    if (typeof body.detail === 'string') return body.detail;
    if (Array.isArray(body.errors) && body.errors.length) return body.errors.map(String).join(' ');
    if (typeof body.error === 'string') return body.error;
    if (typeof body.message === 'string') return body.message;
    const parts = Object.entries(body).filter(([, v]) => Array.isArray(v) || typeof v === 'string')
      .map(([k, v]) => `${k}: ${[].concat(v).join(' ')}`);
    if (parts.length) return parts.join('; ');
  }
  if (typeof body === 'string' && body.length < 300 && !/^\s*</.test(body)) return body.trim();
  return '';
}

// The UI's sentence for an error's status, in the reader's language.
export function statusSentence(status) {
  if (status === 0) return t('common.error_connection');
  if (status === 400 || status === 422) return t('common.error_refused');
  if (status === 401) return t('common.error_sign_in');
  if (status === 403) return t('common.error_forbidden');
  if (status === 404) return t('common.error_not_found');
  if (status === 409) return t('common.error_conflict');
  if (status === 413) return t('common.error_too_large');
  return t('common.error_other', { status });
}

// A readable sentence for any of the API's errors: the UI's own for the status, and the
// server's message (GeoNode's, in English) beside it.
export function messageOf(body, status) {
  const detail = detailOf(body);
  const sentence = statusSentence(status);
  return detail ? t('common.error_with_detail', { sentence, detail }) : sentence;
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
  const headers = { Accept: 'application/json', 'Accept-Language': lang };
  let body;
  if (json !== undefined) { headers['Content-Type'] = 'application/json'; body = JSON.stringify(json); }
  else if (form !== undefined) body = form;
  if (method !== 'GET' && method !== 'HEAD' && session.csrf_token) headers['X-CSRFToken'] = session.csrf_token;
  const response = await fetch(path + (params ? query(params) : ''), { method, headers, body, credentials: 'same-origin' });
  const text = await response.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch { data = text; } }
  if (!response.ok) {
    await messages;
    throw new ApiError(response.status, messageOf(data, response.status), data, detailOf(data));
  }
  return data;
}

// A multipart POST/PUT with the progress of the bytes sent (fetch cannot report it).
export function sendWithProgress(path, formData, onProgress, method = 'POST') {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Accept-Language', lang);
    if (session.csrf_token) xhr.setRequestHeader('X-CSRFToken', session.csrf_token);
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total); });
    xhr.addEventListener('load', () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch { data = xhr.responseText; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, messageOf(data, xhr.status), data, detailOf(data)));
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, t('common.error_upload_lost'))));
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
