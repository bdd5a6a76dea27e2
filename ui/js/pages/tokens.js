// My tokens: the signed-in user's API tokens. Make one with a label (the token is shown once,
// to copy), see when each was made, last used and when it expires, and revoke it.

import { api, currentUser } from '../api.js';
import { confirmDialog, copyButton, errorBox, field, h, mount, select, toast } from '../dom.js';
import { formatDate, formatDateTime, load, t } from '../i18n.js';

await load('tokens');

const KINDS = { personal: t('tokens.kind_personal'), login: t('tokens.kind_login'), cli: t('tokens.kind_cli') };
const LIFETIMES = [['', t('tokens.never_expires')], ['30', t('tokens.in_30_days')], ['90', t('tokens.in_90_days')], ['365', t('tokens.in_a_year')]];

function tokenName(token) {
  return token.label || (token.client ? t('tokens.client_name', { client: token.client }) : KINDS[token.kind] || t('tokens.token'));
}

// A message whose {placeholders} are elements (code, strong): the text around them stays text.
function rich(message, parts) {
  return message.split(/\{(\w+)\}/).map((piece, i) => (i % 2 ? parts[piece] ?? `{${piece}}` : piece));
}

function howTo() {
  const origin = location.origin;
  // addresses and commands read left to right, in a right-to-left page too
  const code = (text) => h('code', { dir: 'ltr' }, text);
  return h('section', { class: 'panel' }, h('h2', {}, t('tokens.using')),
    h('p', {}, rich(t('tokens.using_intro'), { header: code('Authorization') })),
    h('pre', { class: 'help-text', dir: 'ltr' }, `curl -H "Authorization: Bearer <token>" ${origin}/api/v2/resources/`), // i18n: not text
    h('ul', {},
      h('li', {}, rich(t('tokens.qgis'), { name: h('strong', {}, 'QGIS'), header: code('Authorization'), value: code('Bearer <token>') })), // i18n: not text
      h('li', {}, rich(t('tokens.python'), { name: h('strong', {}, 'Python'), example: code(`httpx.get("${origin}/api/v2/datasets/", headers={"Authorization": "Bearer <token>"})`) })), // i18n: not text
      h('li', {}, rich(t('tokens.geonodectl'), { name: h('strong', {}, 'geonodectl'), url: code(`GEONODE_API_URL=${origin}/api/v2/`), auth: code('GEONODE_API_BASIC_AUTH') })),
      h('li', {}, rich(t('tokens.programs'), { address: code('POST /o/token/') }))),
    h('p', { class: 'muted' }, t('tokens.keep_safe')));
}

export async function render(main, ctx) {
  const user = currentUser();
  if (!user) { location.hash = `#/login?next=${encodeURIComponent('/me/tokens')}`; return; }
  const announce = h('div', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const fresh = h('div'); // the token just made, shown once
  const listHeading = h('h2', { tabindex: '-1' }, t('tokens.yours'));
  const list = h('div');
  const message = h('p', { class: 'error', role: 'alert' });
  const label = h('input', { name: 'label', required: true, maxlength: 100, autocomplete: 'off', placeholder: t('tokens.label_example') });
  const lifetime = select('expires_in_days', LIFETIMES, '');
  const submit = h('button', { type: 'submit' }, t('tokens.make'));
  const form = h('form', { class: 'inline-form', 'aria-label': t('tokens.new') },
    field(t('tokens.what_for'), label), field(t('tokens.expires'), lifetime), h('div', { class: 'actions' }, submit));

  const never = () => h('span', { class: 'muted' }, t('tokens.never'));
  const fill = async () => {
    const data = await api('/api/v2/tokens/', { params: { page_size: 500 } });
    const tokens = data.tokens || [];
    listHeading.textContent = t('tokens.yours_count', { count: data.total });
    const heads = { label: t('tokens.col_label'), kind: t('tokens.col_kind'), created: t('tokens.col_created'), used: t('tokens.col_last_used'), expires: t('tokens.col_expires'), actions: t('tokens.col_actions') };
    mount(list, tokens.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'stack' },
      h('caption', { class: 'visually-hidden' }, t('tokens.caption')),
      h('thead', {}, h('tr', {}, Object.values(heads).map((text) => h('th', { scope: 'col' }, text)))),
      h('tbody', {}, tokens.map((token) => h('tr', { dataset: { token: token.id } },
        h('td', { 'data-label': heads.label }, token.label || h('span', { class: 'muted' }, tokenName(token))),
        h('td', { 'data-label': heads.kind }, KINDS[token.kind] || token.kind),
        h('td', { 'data-label': heads.created, class: 'created' }, formatDate(token.created)),
        h('td', { 'data-label': heads.used, class: 'last-used' }, token.last_used ? formatDateTime(token.last_used) : never()),
        h('td', { 'data-label': heads.expires, class: 'expires' }, token.expires ? formatDate(token.expires) : never()),
        h('td', { 'data-label': heads.actions, class: 'row-actions' },
          h('button', { type: 'button', class: 'link danger-link', 'aria-label': t('tokens.revoke_named', { name: tokenName(token) }), onclick: () => revoke(token) }, t('tokens.revoke'))))))))
      : h('p', { class: 'muted' }, t('tokens.none')));
  };

  const revoke = async (token) => {
    if (!await confirmDialog(t('tokens.revoke_question', { name: tokenName(token) }), t('tokens.revoke'))) return;
    try {
      await api(`/api/v2/tokens/${token.id}/`, { method: 'DELETE' });
      if (fresh.dataset.token === String(token.id)) { mount(fresh); delete fresh.dataset.token; }
      toast(t('tokens.revoked', { name: tokenName(token) }));
      announce.textContent = t('tokens.revoked', { name: tokenName(token) });
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
      const value = h('input', { id: 'new-token', type: 'text', dir: 'ltr', readonly: true, value: made.access_token, spellcheck: 'false', 'aria-describedby': 'new-token-once' });
      fresh.dataset.token = made.token.id;
      mount(fresh, h('section', { class: 'panel new-token', 'aria-labelledby': 'new-token-title' },
        h('h2', { id: 'new-token-title' }, t('tokens.new_title', { name: made.token.label })),
        h('p', { id: 'new-token-once' }, h('strong', {}, t('tokens.copy_now')), ' ', t('tokens.only_label_kept')),
        h('div', { class: 'copy-row' }, h('label', { for: 'new-token', class: 'svc' }, t('tokens.token')), value,
          copyButton(() => value.value, t('tokens.copy'), { 'aria-label': t('tokens.copy_token') })),
        h('p', { class: 'muted small-text' }, made.token.expires ? t('tokens.expires_on', { date: formatDate(made.token.expires) }) : t('tokens.lasts'))));
      form.reset();
      await fill();
      value.focus();
      value.select();
      announce.textContent = t('tokens.made', { name: made.token.label });
    } catch (error) {
      message.textContent = error.message;
      label.focus();
    } finally {
      submit.disabled = false;
    }
  });

  mount(main, h('section', { class: 'page tokens' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/me' }, t('tokens.my_things')), ' › ', t('tokens.title')),
    h('h1', {}, t('tokens.title')),
    h('p', { class: 'muted' }, t('tokens.intro')),
    announce,
    h('section', { class: 'panel' }, h('h2', {}, t('tokens.new')), form, message),
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
