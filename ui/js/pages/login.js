// Sign in: starts a cookie session, then returns to the page the person came from.

import { signIn } from '../api.js';
import { field, h, mount, toast } from '../dom.js';
import { load, t } from '../i18n.js';

await load('login');

function safeNext(params) {
  const next = params.get('next') || '/';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/';
}

export async function render(main, ctx) {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const message = h('p', { class: 'error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit' }, t('login.submit'));
  const form = h('form', { class: 'card-form', 'aria-label': t('login.form') },
    field(t('login.username'), username), field(t('login.password'), password), message, button);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    button.disabled = true;
    button.textContent = t('login.signing_in');
    message.hidden = true;
    try {
      const user = await signIn(username.value.trim(), password.value);
      toast(t('login.signed_in', { name: user.username }));
      location.hash = `#${safeNext(ctx.params)}`;
    } catch (error) {
      // the catalogue refuses the pair with a 400 (GeoNode's); other errors say what went wrong
      message.textContent = error.status === 400 || error.status === 401 ? t('login.refused') : error.message;
      message.hidden = false;
      password.value = '';
      password.focus();
    } finally {
      button.disabled = false;
      button.textContent = t('login.submit');
    }
  });
  mount(main, h('section', { class: 'page narrow' }, h('h1', {}, t('login.title')), form,
    h('p', { class: 'muted' }, t('login.accounts'))));
  username.focus();
}
