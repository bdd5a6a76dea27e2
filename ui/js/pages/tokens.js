// My tokens: the signed-in user's API tokens. Make one with a label (the token is shown once,
// to copy), see when each was made, last used and when it expires, and revoke it.

import { api, currentUser } from '../api.js';
import { confirmDialog, copyButton, errorBox, field, formatDate, formatDateTime, h, mount, select, toast } from '../dom.js';

const KINDS = { personal: 'Made here', login: 'Program sign-in', cli: 'Command line' };
const LIFETIMES = [['', 'Never: until I revoke it'], ['30', 'In 30 days'], ['90', 'In 90 days'], ['365', 'In a year']];

function tokenName(t) {
  return t.label || (t.client ? `Sign-in of ${t.client}` : KINDS[t.kind] || 'Token');
}

function howTo() {
  const origin = location.origin;
  return h('section', { class: 'panel' }, h('h2', {}, 'Using a token'),
    h('p', {}, 'A token lets a program use this catalogue’s API as you, with your rights, without your password. Send it in the ',
      h('code', {}, 'Authorization'), ' header of each request:'),
    h('pre', { class: 'help-text' }, `curl -H "Authorization: Bearer <token>" ${origin}/api/v2/resources/`),
    h('ul', {},
      h('li', {}, h('strong', {}, 'QGIS: '), 'in Settings › Options › Authentication, add a configuration of type “API Header” with the header ',
        h('code', {}, 'Authorization'), ' and the value ', h('code', {}, 'Bearer <token>'), ', and choose it for this catalogue’s WMS, WFS or WCS connection.'),
      h('li', {}, h('strong', {}, 'Python: '), h('code', {}, `httpx.get("${origin}/api/v2/datasets/", headers={"Authorization": "Bearer <token>"})`), '.'),
      h('li', {}, h('strong', {}, 'geonodectl: '), 'it signs in with a user name and password (', h('code', {}, `GEONODE_API_URL=${origin}/api/v2/`),
        ' and ', h('code', {}, 'GEONODE_API_BASIC_AUTH'), '), not with a token.'),
      h('li', {}, h('strong', {}, 'Programs that sign in by themselves '), '(', h('code', {}, 'POST /o/token/'),
        ') get tokens of their own, which expire by themselves: they are listed here too, as “Program sign-in”.')),
    h('p', { class: 'muted' }, 'Keep a token as you would a password. Revoke it here when a program no longer needs it, or if it may have been seen by someone else: every request with it is refused from then on.'));
}

export async function render(main, ctx) {
  const user = currentUser();
  if (!user) { location.hash = `#/login?next=${encodeURIComponent('/me/tokens')}`; return; }
  const announce = h('div', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const fresh = h('div'); // the token just made, shown once
  const listHeading = h('h2', { tabindex: '-1' }, 'Your tokens');
  const list = h('div');
  const message = h('p', { class: 'error', role: 'alert' });
  const label = h('input', { name: 'label', required: true, maxlength: 100, autocomplete: 'off', placeholder: 'QGIS on my laptop' });
  const lifetime = select('expires_in_days', LIFETIMES, '');
  const submit = h('button', { type: 'submit' }, 'Make token');
  const form = h('form', { class: 'inline-form', 'aria-label': 'New token' },
    field('What is it for?', label), field('Expires', lifetime), h('div', { class: 'actions' }, submit));

  const fill = async () => {
    const data = await api('/api/v2/tokens/', { params: { page_size: 500 } });
    const tokens = data.tokens || [];
    listHeading.textContent = `Your tokens (${data.total})`;
    mount(list, tokens.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'stack' },
      h('caption', { class: 'visually-hidden' }, 'Your API tokens'),
      h('thead', {}, h('tr', {}, ['Label', 'Kind', 'Created', 'Last used', 'Expires', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, tokens.map((t) => h('tr', { dataset: { token: t.id } },
        h('td', { 'data-label': 'Label' }, t.label || h('span', { class: 'muted' }, tokenName(t))),
        h('td', { 'data-label': 'Kind' }, KINDS[t.kind] || t.kind),
        h('td', { 'data-label': 'Created', class: 'created' }, formatDate(t.created)),
        h('td', { 'data-label': 'Last used', class: 'last-used' }, t.last_used ? formatDateTime(t.last_used) : h('span', { class: 'muted' }, 'Never')),
        h('td', { 'data-label': 'Expires', class: 'expires' }, t.expires ? formatDate(t.expires) : h('span', { class: 'muted' }, 'Never')),
        h('td', { 'data-label': 'Actions', class: 'row-actions' },
          h('button', { type: 'button', class: 'link danger-link', 'aria-label': `Revoke ${tokenName(t)}`, onclick: () => revoke(t) }, 'Revoke')))))))
      : h('p', { class: 'muted' }, 'You have no tokens yet.'));
  };

  const revoke = async (t) => {
    if (!await confirmDialog(`Revoke the token “${tokenName(t)}”? Programs that use it will be refused from now on.`, 'Revoke')) return;
    try {
      await api(`/api/v2/tokens/${t.id}/`, { method: 'DELETE' });
      if (fresh.dataset.token === String(t.id)) { mount(fresh); delete fresh.dataset.token; }
      toast(`Token “${tokenName(t)}” revoked.`);
      announce.textContent = `Token “${tokenName(t)}” revoked.`;
      await fill();
      listHeading.focus();
    } catch (error) { toast(error.message, 'error'); }
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.textContent = '';
    submit.disabled = true;
    try {
      const days = lifetime.value;
      const made = await api('/api/v2/tokens/', { method: 'POST', json: { label: label.value, expires_in_days: days ? Number(days) : null } });
      const value = h('input', { id: 'new-token', type: 'text', readonly: true, value: made.access_token, spellcheck: 'false', 'aria-describedby': 'new-token-once' });
      fresh.dataset.token = made.token.id;
      mount(fresh, h('section', { class: 'panel new-token', 'aria-labelledby': 'new-token-title' },
        h('h2', { id: 'new-token-title' }, `Your new token “${made.token.label}”`),
        h('p', { id: 'new-token-once' }, h('strong', {}, 'Copy it now: you will not see it again.'),
          ' Only its label and dates are kept here. If you lose it, revoke it and make another.'),
        h('div', { class: 'copy-row' }, h('label', { for: 'new-token', class: 'svc' }, 'Token'), value, copyButton(() => value.value, 'Copy', { 'aria-label': 'Copy the token' })),
        h('p', { class: 'muted small-text' }, made.token.expires ? `It expires on ${formatDate(made.token.expires)}.` : 'It lasts until you revoke it.')));
      form.reset();
      await fill();
      value.focus();
      value.select();
      announce.textContent = `Token “${made.token.label}” made. Copy it now: you will not see it again.`;
    } catch (error) {
      message.textContent = error.message;
      label.focus();
    } finally {
      submit.disabled = false;
    }
  });

  mount(main, h('section', { class: 'page tokens' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/me' }, 'My things'), ' › My tokens'),
    h('h1', {}, 'My tokens'),
    h('p', { class: 'muted' }, 'API tokens let programs such as QGIS or your scripts use the catalogue as you.'),
    announce,
    h('section', { class: 'panel' }, h('h2', {}, 'New token'), form, message),
    fresh,
    h('section', { class: 'panel' }, listHeading, list),
    howTo()));
  try {
    await fill();
  } catch (error) {
    if (!ctx.isCurrent()) return;
    mount(list, errorBox(error));
  }
  main.querySelector('.page').dataset.loaded = 'true';
}
