// Publishing to other catalogues (superusers): the remote catalogues (Administration › Remote
// catalogues), and on a dataset's or document's page "Publish to …" with where it was published.
// A catalogue without the publishing API (404) shows none of it.

import { api, currentUser, followExecution } from '../api.js';
import { confirmDialog, errorBox, field, formatDate, formatDateTime, h, mount, toast } from '../dom.js';

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

const TOKEN_HINT = 'A token of a user of the remote catalogue, who will own what is published there (in a catalogue like this one: My things › My tokens; in GeoNode: an access token from its administration pages). It is checked with the remote before it is saved, kept here and never shown again.';

// A dialog to give a remote a new token; resolves true once the remote took it and it is saved.
function changeToken(remote) {
  return new Promise((resolve) => {
    const input = h('input', { name: 'token', type: 'password', required: true, autocomplete: 'off' });
    const error = h('p', { class: 'error', role: 'alert' });
    const save = h('button', { type: 'submit' }, 'Check and save');
    const form = h('form', { method: 'dialog', class: 'grid-form compact', 'aria-label': `New token for ${remote.name}` },
      h('h2', {}, `New token for ${remote.name}`),
      field('Access token', input, 'Make a new token on the remote catalogue, then paste it here.'), error,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('no') }, 'Cancel'), save));
    const dialog = h('dialog', { class: 'confirm' }, form);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      error.textContent = '';
      save.disabled = true;
      save.textContent = 'Checking…';
      try {
        await api(`/api/v2/remotes/${remote.id}/`, { method: 'PATCH', json: { token: input.value } });
        dialog.close('yes');
      } catch (failure) {
        error.textContent = failure.message;
        input.focus();
      } finally {
        save.disabled = false;
        save.textContent = 'Check and save';
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
  const submit = h('button', { type: 'submit' }, 'Add remote catalogue');
  const list = h('div');
  const form = h('form', { class: 'grid-form compact', 'aria-label': 'New remote catalogue' },
    h('div', { class: 'two' },
      field('Name', h('input', { name: 'name', required: true, autocomplete: 'off', maxlength: 255 })),
      field('Address', h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://geonode.example.org' }), 'The site of a GeoNode, or of another catalogue like this one.')),
    field('Access token', h('input', { name: 'token', type: 'password', required: true, autocomplete: 'off' }), TOKEN_HINT),
    h('div', { class: 'actions' }, submit), message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.textContent = '';
    const data = Object.fromEntries(new FormData(form));
    submit.disabled = true;
    submit.textContent = 'Checking the remote catalogue…';
    try {
      await api('/api/v2/remotes/', { method: 'POST', json: data });
      toast(`Remote catalogue ${data.name} added.`);
      form.reset();
      await fill();
    } catch (error) {
      message.textContent = error.message;
    } finally {
      submit.disabled = false;
      submit.textContent = 'Add remote catalogue';
    }
  });
  const fill = async () => {
    const found = await remotes({ fresh: true });
    if (!found.available) {
      mount(body, h('section', { class: 'panel' }, h('h2', {}, 'Remote catalogues'), h('p', {}, 'Publishing to other catalogues is not available in this version of the catalogue.')));
      return false;
    }
    mount(list, found.remotes.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'stack' }, h('caption', { class: 'visually-hidden' }, 'Remote catalogues'),
      h('thead', {}, h('tr', {}, ['Name', 'Address', 'Token', 'Added', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, found.remotes.map((r) => h('tr', { dataset: { remote: r.id } },
        h('td', { 'data-label': 'Name' }, r.name),
        h('td', { 'data-label': 'Address', class: 'url' }, h('a', { href: r.url, target: '_blank', rel: 'noopener' }, r.url)),
        h('td', { 'data-label': 'Token' }, r.has_token ? 'Saved' : h('span', { class: 'muted' }, 'None')),
        h('td', { 'data-label': 'Added' }, formatDate(r.created)),
        h('td', { 'data-label': 'Actions', class: 'row-actions' }, h('button', { type: 'button', class: 'link', 'aria-label': `Change the token of ${r.name}`, onclick: async () => {
          if (await changeToken(r)) { toast(`${r.name}: new token saved.`); await fill(); }
        } }, 'Change token'), ' ', h('button', { type: 'button', class: 'link danger-link', 'aria-label': `Delete ${r.name}`, onclick: async () => {
          if (!await confirmDialog(`Remove the remote catalogue "${r.name}"? What was published there stays there; only this catalogue’s record of it goes.`, 'Remove')) return;
          try { await api(`/api/v2/remotes/${r.id}/`, { method: 'DELETE' }); toast(`${r.name} removed.`); await fill(); } catch (error) { toast(error.message, 'error'); }
        } }, 'Delete')))))))
      : h('p', { class: 'muted' }, 'No remote catalogues yet.'));
    return true;
  };
  mount(body, h('section', { class: 'panel' }, h('h2', {}, 'New remote catalogue'),
    h('p', { class: 'muted' }, 'Datasets and documents of this catalogue can be published to other catalogues: add them here, then use “Publish to” on a resource’s page.'), form),
  h('section', { class: 'panel' }, h('h2', {}, 'Remote catalogues'), list));
  await fill();
}

// What a publication's stage means to a person: a badge, and (unless it is published) what
// happened and what to do.
function publicationState(p) {
  if (!p.stage || ['done', 'published', 'finished'].includes(p.stage)) return ['Published', null];
  if (p.stage === 'new') return ['Not published', p.message ? 'The last attempt failed (see below); nothing is on the remote catalogue.' : 'Nothing is on the remote catalogue yet.'];
  if (p.stage === 'sending') return ['Interrupted', 'Stopped while the data were being sent: publish again to resume (nothing is sent twice).'];
  if (p.stage === 'uploading') return ['Being imported', 'The remote catalogue was still importing the data: publish again to check and finish.'];
  return ['Partly published', 'The copy is on the remote catalogue, but not all of its details are: publish again to finish.'];
}

// A failed publish: the plain message, and where to renew the token when the remote refused it.
function failure(state, remoteName) {
  const out = state.output_params || {};
  const text = state.log || out.error || 'Publishing failed.';
  if (out.fix !== 'token') return errorBox(new Error(text));
  return h('div', { role: 'alert', class: 'publish-failure' }, h('p', { class: 'error' }, text),
    h('p', {}, h('a', { href: '#/admin/remotes' }, `Renew the token of ${remoteName} in Administration › Remote catalogues`)));
}

// The "Publish to …" section of a resource's page, filled in when there is somewhere to publish.
export async function publishPanel(el, resource) {
  if (resource.resource_type !== 'dataset' && resource.resource_type !== 'document') return;
  let found;
  try { found = await remotes({ fresh: known?.available !== false }); } catch { return; }
  if (!found?.available || !found.remotes.length) return;
  const choice = h('select', { name: 'remote', 'aria-label': 'Remote catalogue to publish to' }, found.remotes.map((r) => h('option', { value: r.id }, r.name)));
  const button = h('button', { type: 'submit' }, 'Publish');
  const status = h('div', { class: 'publish-status', role: 'status', 'aria-live': 'polite' });
  const where = h('div', { class: 'publications' });
  const nameOf = (id) => found.remotes.find((r) => String(r.id) === String(id))?.name;
  const showPublications = async () => {
    try {
      const data = await api(`/api/v2/resources/${resource.pk}/publications`);
      const items = data.publications || [];
      mount(where, items.length ? [h('h3', {}, 'Published to'), h('ul', { class: 'plain' }, items.map((p) => {
        const name = p.remote_name || (typeof p.remote === 'string' ? p.remote : null) || nameOf(p.remote_id ?? p.remote) || `remote ${p.remote_id ?? p.remote}`;
        const [badge, what] = publicationState(p);
        const done = !what;
        return h('li', {}, p.remote_url ? h('a', { href: p.remote_url, target: '_blank', rel: 'noopener' }, name) : h('strong', {}, name),
          p.remote_pk ? h('span', { class: 'muted' }, ` (#${p.remote_pk})`) : null, ' ',
          h('span', { class: `badge ${done ? 'light' : 'warn'}` }, badge),
          what ? h('span', { class: 'block small-text' }, what) : null,
          p.last_published ? h('span', { class: 'muted block small-text' }, `Last published ${formatDateTime(p.last_published)}`) : null,
          p.message ? h('span', { class: `${done ? 'muted' : 'error'} block small-text` }, p.message) : null);
      }))] : []);
    } catch { mount(where); }
  };
  const form = h('form', { class: 'publish-form', 'aria-label': 'Publish to another catalogue' }, choice, button);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    button.disabled = true;
    const remoteName = choice.selectedOptions[0]?.textContent;
    mount(status, h('p', {}, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ` Publishing to ${remoteName}…`));
    try {
      const receipt = await api(`/api/v2/resources/${resource.pk}/publish`, { method: 'POST', json: { remote: Number(choice.value) } });
      const progress = h('progress', { max: 100, 'aria-label': 'Publishing progress' });
      const step = h('span', { class: 'muted' });
      mount(status, h('p', {}, `Publishing to ${remoteName}…`), progress, step);
      const state = await followExecution(receipt.execution_id, (s) => {
        if (Number.isFinite(s.progress) && s.progress > 0) progress.value = s.progress;
        step.textContent = s.step ? ` ${s.step}` : '';
      }, 700);
      if (state.status === 'finished') {
        const out = state.output_params || {};
        const first = (out.resources || [])[0] || {};
        const skipped = [...(out.skipped_users || []), ...(out.skipped_groups || [])];
        mount(status, h('p', { class: 'ok' }, `Published to ${remoteName}. `,
          first.remote_url ? h('a', { href: first.remote_url, target: '_blank', rel: 'noopener' }, 'Open it there') : null),
        skipped.length ? h('p', { class: 'muted small-text' }, `Not on ${remoteName}, so not given rights there: ${skipped.join(', ')}.`) : null);
        toast(`Published to ${remoteName}.`);
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
  mount(el, h('section', { class: 'publish' }, h('h2', {}, 'Publish to another catalogue'), form, status, where));
  await showPublications();
}
