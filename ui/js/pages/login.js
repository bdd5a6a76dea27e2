// Sign in: starts a cookie session, then returns to the page the person came from.

import { signIn } from '../api.js';
import { field, h, mount, toast } from '../dom.js';

function safeNext(params) {
  const next = params.get('next') || '/';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/';
}

export async function render(main, ctx) {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const message = h('p', { class: 'error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'card-form', 'aria-label': 'Sign in' },
    field('User name', username), field('Password', password), message, button);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    button.disabled = true;
    button.textContent = 'Signing in…';
    message.hidden = true;
    try {
      const user = await signIn(username.value.trim(), password.value);
      toast(`Signed in as ${user.username}.`);
      location.hash = `#${safeNext(ctx.params)}`;
    } catch (error) {
      message.textContent = error.message;
      message.hidden = false;
      password.value = '';
      password.focus();
    } finally {
      button.disabled = false;
      button.textContent = 'Sign in';
    }
  });
  mount(main, h('section', { class: 'page narrow' }, h('h1', {}, 'Sign in'), form,
    h('p', { class: 'muted' }, 'Accounts are made by the administrators of this catalogue.')));
  username.focus();
}
