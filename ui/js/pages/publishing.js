// Publishing to other catalogues (superusers): the remote catalogues (Administration › Remote
// catalogues), and on a dataset's or document's page "Publish to …" with where it was published.
// A catalogue without the publishing API (404) shows none of it.

import { api, currentUser, followExecution } from '../api.js';
import { confirmDialog, errorBox, field, h, mount, toast } from '../dom.js';
import { formatDate, formatDateTime, lang, load, t } from '../i18n.js';

await load('publishing');

let known = null; // the answer of GET /api/v2/remotes/ for this session: {available, remotes}

// Whether publishing exists here, and the remotes; null for those who may not publish.
export async function remotes({ fresh = false } = {}) {
  if (!currentUser()?.is_superuser) return null;
  if (known && !fresh && known.user === currentUser().pk) return known;
  try {
    const data = await api('/api/v2/remotes/', { params: { page_size: 100 } });
    known = { user: currentUser().pk, available: true, remotes: data.remotes || [] };
  } catch (error) {
    if (error.status !== 404 && error.status !== 405) throw error;
    known = { user: currentUser().pk, available: false, remotes: [] };
  }
  return known;
}


// A dialog to give a remote a new token; resolves true once the remote took it and it is saved.
function changeToken(remote) {
  return new Promise((resolve) => {
    const input = h('input', { name: 'token', type: 'password', required: true, autocomplete: 'off' });
    const error = h('p', { class: 'error', role: 'alert' });
    const save = h('button', { type: 'submit' }, t('publishing.check_and_save'));
    const form = h('form', { method: 'dialog', class: 'grid-form compact', 'aria-label': t('publishing.new_token_for', { name: remote.name }) },
      h('h2', {}, t('publishing.new_token_for', { name: remote.name })),
      field(t('publishing.access_token'), input, t('publishing.new_token_hint')), error,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('no') }, t('publishing.cancel')), save));
    const dialog = h('dialog', { class: 'confirm' }, form);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      error.textContent = '';
      save.disabled = true;
      save.textContent = t('publishing.checking');
      try {
        await api(`/api/v2/remotes/${remote.id}/`, { method: 'PATCH', json: { token: input.value } });
        dialog.close('yes');
      } catch (failure) {
        error.textContent = failure.message;
        input.focus();
      } finally {
        save.disabled = false;
        save.textContent = t('publishing.check_and_save');
      }
    });
    dialog.addEventListener('close', () => { dialog.remove(); resolve(dialog.returnValue === 'yes'); });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
}

export async function remotesTab(body) {
  const message = h('p', { class: 'error', role: 'alert' });
  const submit = h('button', { type: 'submit' }, t('publishing.add_remote'));
  const list = h('div');
  const form = h('form', { class: 'grid-form compact', 'aria-label': t('publishing.new_remote') },
    h('div', { class: 'two' },
      field(t('publishing.name'), h('input', { name: 'name', required: true, autocomplete: 'off', maxlength: 255 })),
      field(t('publishing.address'), h('input', { name: 'url', type: 'url', required: true, dir: 'ltr', placeholder: 'https://geonode.example.org' }), t('publishing.address_hint'))),
    field(t('publishing.access_token'), h('input', { name: 'token', type: 'password', required: true, autocomplete: 'off' }), t('publishing.token_hint')),
    h('div', { class: 'actions' }, submit), message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.textContent = '';
    const data = Object.fromEntries(new FormData(form));
    submit.disabled = true;
    submit.textContent = t('publishing.checking_remote');
    try {
      await api('/api/v2/remotes/', { method: 'POST', json: data });
      toast(t('publishing.remote_added', { name: data.name }));
      form.reset();
      await fill();
    } catch (error) {
      message.textContent = error.message;
    } finally {
      submit.disabled = false;
      submit.textContent = t('publishing.add_remote');
    }
  });
  const fill = async () => {
    const found = await remotes({ fresh: true });
    if (!found.available) {
      mount(body, h('section', { class: 'panel' }, h('h2', {}, t('publishing.remotes')), h('p', {}, t('publishing.not_available'))));
      return false;
    }
    const columns = { name: t('publishing.name'), url: t('publishing.address'), token: t('publishing.token'), added: t('publishing.added'), actions: t('publishing.actions') };
    mount(list, found.remotes.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'stack' }, h('caption', { class: 'visually-hidden' }, t('publishing.remotes')),
      h('thead', {}, h('tr', {}, Object.values(columns).map((label) => h('th', { scope: 'col' }, label)))),
      h('tbody', {}, found.remotes.map((r) => h('tr', { dataset: { remote: r.id } },
        h('td', { 'data-label': columns.name }, r.name),
        h('td', { 'data-label': columns.url, class: 'url' }, h('a', { href: r.url, target: '_blank', rel: 'noopener', dir: 'ltr' }, r.url)),
        h('td', { 'data-label': columns.token }, r.has_token ? t('publishing.token_saved') : h('span', { class: 'muted' }, t('publishing.token_none'))),
        h('td', { 'data-label': columns.added }, formatDate(r.created)),
        h('td', { 'data-label': columns.actions, class: 'row-actions' }, h('button', { type: 'button', class: 'link', 'aria-label': t('publishing.change_token_of', { name: r.name }), onclick: async () => {
          if (await changeToken(r)) { toast(t('publishing.token_changed', { name: r.name })); await fill(); }
        } }, t('publishing.change_token')), ' ', h('button', { type: 'button', class: 'link danger-link', 'aria-label': t('publishing.delete_named', { name: r.name }), onclick: async () => {
          if (!await confirmDialog(t('publishing.remove_question', { name: r.name }), t('publishing.remove'))) return;
          try { await api(`/api/v2/remotes/${r.id}/`, { method: 'DELETE' }); toast(t('publishing.removed', { name: r.name })); await fill(); } catch (error) { toast(error.message, 'error'); }
        } }, t('publishing.delete'))))))))
      : h('p', { class: 'muted' }, t('publishing.no_remotes')));
    return true;
  };
  mount(body, h('section', { class: 'panel' }, h('h2', {}, t('publishing.new_remote')),
    h('p', { class: 'muted' }, t('publishing.remotes_about')), form),
  h('section', { class: 'panel' }, h('h2', {}, t('publishing.remotes')), list));
  await fill();
}

// What a publication's stage means to a person: a badge, and (unless it is published) what
// happened and what to do.
function publicationState(p) {
  if (!p.stage || ['done', 'published', 'finished'].includes(p.stage)) return [t('publishing.state_published'), null];
  if (p.stage === 'new') return [t('publishing.state_not_published'), p.message ? t('publishing.last_attempt_failed') : t('publishing.nothing_there_yet')];
  if (p.stage === 'sending') return [t('publishing.state_interrupted'), t('publishing.interrupted_what')];
  if (p.stage === 'uploading') return [t('publishing.state_importing'), t('publishing.importing_what')];
  return [t('publishing.state_partly'), t('publishing.partly_what')];
}

// Names joined as the language lists them ("a, b and c").
function list(names) {
  return new Intl.ListFormat(lang, { type: 'conjunction' }).format(names);
}

// A failed publish: the plain message, and where to renew the token when the remote refused it.
function failure(state, remoteName) {
  const out = state.output_params || {};
  const text = state.log || out.error || t('publishing.failed');
  if (out.fix !== 'token') return errorBox(new Error(text));
  return h('div', { role: 'alert', class: 'publish-failure' }, h('p', { class: 'error' }, text),
    h('p', {}, h('a', { href: '#/admin/remotes' }, t('publishing.renew_token', { name: remoteName }))));
}

// The "Publish to …" section of a resource's page, filled in when there is somewhere to publish.
export async function publishPanel(el, resource) {
  if (resource.resource_type !== 'dataset' && resource.resource_type !== 'document') return;
  let found;
  try { found = await remotes({ fresh: known?.available !== false }); } catch { return; }
  if (!found?.available || !found.remotes.length) return;
  const choice = h('select', { name: 'remote', 'aria-label': t('publishing.remote_to_publish_to') }, found.remotes.map((r) => h('option', { value: r.id }, r.name)));
  const button = h('button', { type: 'submit' }, t('publishing.publish'));
  const status = h('div', { class: 'publish-status', role: 'status', 'aria-live': 'polite' });
  const where = h('div', { class: 'publications' });
  const nameOf = (id) => found.remotes.find((r) => String(r.id) === String(id))?.name;
  const showPublications = async () => {
    try {
      const data = await api(`/api/v2/resources/${resource.pk}/publications`);
      const items = data.publications || [];
      mount(where, items.length ? [h('h3', {}, t('publishing.published_to')), h('ul', { class: 'plain' }, items.map((p) => {
        const name = p.remote_name || (typeof p.remote === 'string' ? p.remote : null) || nameOf(p.remote_id ?? p.remote)
          || t('publishing.remote_number', { id: String(p.remote_id ?? p.remote) });
        const [badge, what] = publicationState(p);
        const done = !what;
        return h('li', {}, p.remote_url ? h('a', { href: p.remote_url, target: '_blank', rel: 'noopener' }, name) : h('strong', {}, name),
          p.remote_pk ? h('span', { class: 'muted' }, ` (#${p.remote_pk})`) : null, ' ',
          h('span', { class: `badge ${done ? 'light' : 'warn'}` }, badge),
          what ? h('span', { class: 'block small-text' }, what) : null,
          p.last_published ? h('span', { class: 'muted block small-text' }, t('publishing.last_published', { when: formatDateTime(p.last_published) })) : null,
          p.message ? h('span', { class: `${done ? 'muted' : 'error'} block small-text`, dir: 'auto' }, p.message) : null);
      }))] : []);
    } catch { mount(where); }
  };
  const form = h('form', { class: 'publish-form', 'aria-label': t('publishing.publish_elsewhere') }, choice, button);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    button.disabled = true;
    const remoteName = choice.selectedOptions[0]?.textContent;
    mount(status, h('p', {}, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ' ', t('publishing.publishing_to', { name: remoteName })));
    try {
      const receipt = await api(`/api/v2/resources/${resource.pk}/publish`, { method: 'POST', json: { remote: Number(choice.value) } });
      const progress = h('progress', { max: 100, 'aria-label': t('publishing.progress') });
      const step = h('span', { class: 'muted' });
      mount(status, h('p', {}, t('publishing.publishing_to', { name: remoteName })), progress, step);
      const state = await followExecution(receipt.execution_id, (s) => {
        if (Number.isFinite(s.progress) && s.progress > 0) progress.value = s.progress;
        step.textContent = s.step ? ` ${s.step}` : '';
      }, 700);
      if (state.status === 'finished') {
        const out = state.output_params || {};
        const first = (out.resources || [])[0] || {};
        const skipped = [...(out.skipped_users || []), ...(out.skipped_groups || [])];
        mount(status, h('p', { class: 'ok' }, t('publishing.published_on', { name: remoteName }), ' ',
          first.remote_url ? h('a', { href: first.remote_url, target: '_blank', rel: 'noopener' }, t('publishing.open_there')) : null),
        skipped.length ? h('p', { class: 'muted small-text' }, t('publishing.skipped', { name: remoteName, who: list(skipped) })) : null);
        toast(t('publishing.published_on', { name: remoteName }));
      } else {
        mount(status, failure(state, remoteName));
      }
    } catch (error) {
      mount(status, errorBox(error));
    } finally {
      button.disabled = false;
      await showPublications();
    }
  });
  mount(el, h('section', { class: 'publish' }, h('h2', {}, t('publishing.publish_elsewhere')), form, status, where));
  await showPublications();
}
