// Edit and share (owners, managers, administrators): the metadata, the thumbnail, the style of
// a dataset, who may do what, and deleting. Everyone (anonymous, registered members) can be
// given at most view and download: the catalogue refuses more, and the form offers no more.

import { api, can, currentUser, followExecution, sendWithProgress } from '../api.js';
import { confirmDialog, errorBox, field, h, LICENCES, mount, personName, select, toast, TYPE_LABELS } from '../dom.js';
import { boundsOf, boxOf, createMap, datasetLayer } from '../map.js';
import { loadResource } from './detail.js';

const DATE_TYPES = [['publication', 'Publication'], ['creation', 'Creation'], ['revision', 'Revision']];
const EVERYONE = new Set(['anonymous', 'registered-members']);
const LEVEL_ORDER = ['none', 'view', 'download', 'edit', 'manage'];

export async function render(main, ctx) {
  const [, type, pk] = ctx.match;
  if (!currentUser()) { location.hash = `#/login?next=${encodeURIComponent(ctx.path)}`; return; }
  let resource;
  try { resource = await loadResource(type, pk); } catch (error) {
    mount(main, h('section', { class: 'page narrow' }, h('h1', {}, 'Cannot edit'), errorBox(error)));
    return;
  }
  if (!ctx.isCurrent()) return;
  const back = `#/${resource.resource_type}/${resource.pk}`;
  const sections = [];
  if (can(resource, 'change_resourcebase_metadata')) sections.push(metadataForm(resource), thumbnailForm(resource));
  if (resource.resource_type === 'dataset' && can(resource, 'change_dataset_style')) sections.push(styleForm(resource));
  if (can(resource, 'change_resourcebase_permissions')) sections.push(permissionsEditor(resource));
  if (can(resource, 'delete_resourcebase')) sections.push(deleteSection(resource));
  if (!sections.length) sections.push(h('p', {}, 'You may look at this resource, not change it.'));
  mount(main, h('section', { class: 'page edit' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Catalogue'), ' › ', h('a', { href: back }, resource.title), ' › Edit'),
    h('h1', {}, `Edit ${TYPE_LABELS[resource.resource_type]?.toLowerCase() || 'resource'}: `, resource.title), sections));
}

function metadataForm(resource) {
  const text = (name, value, attrs = {}) => h('input', { name, value: value ?? '', ...attrs });
  const area = (name, value) => h('textarea', { name, rows: 5 }, value && value !== 'None' ? value : '');
  const categories = h('select', { name: 'category' }, h('option', { value: '' }, '—'));
  api('/api/v2/categories', { params: { page_size: 100 } }).then((data) => {
    for (const c of data.categories || []) categories.append(h('option', { value: c.identifier, selected: resource.category?.identifier === c.identifier }, c.gn_description || c.identifier));
  }).catch(() => {});
  const date = resource.date ? resource.date.slice(0, 10) : '';
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'grid-form', 'aria-label': 'Metadata' },
    field('Title', text('title', resource.title, { required: true, maxlength: 255 })),
    field('Abstract', area('abstract', resource.abstract),
      'A blank line starts a new paragraph. <b>bold</b>, <i>italic</i>, links and lists are kept; other markup is dropped when shown.'),
    field('Keywords', text('keywords', (resource.keywords || []).map((k) => k.name).join(', ')), 'Separate keywords with commas.'),
    field('Category', categories),
    field('Licence', select('license', LICENCES, resource.license?.identifier)),
    field('Regions', text('regions', (resource.regions || []).map((r) => r.name).join(', ')), 'Region names or codes, separated by commas.'),
    h('div', { class: 'two' }, field('Date', text('date', date, { type: 'date' })), field('Date type', select('date_type', DATE_TYPES, resource.date_type))),
    h('div', { class: 'two' },
      field('Time span from', text('temporal_extent_start', resource.temporal_extent_start?.slice(0, 10), { type: 'date' })),
      field('to', text('temporal_extent_end', resource.temporal_extent_end?.slice(0, 10), { type: 'date' }))),
    field('Attribution', text('attribution', resource.attribution)),
    field('Constraints', area('constraints_other', resource.constraints_other)),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save'), message));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const list = (name) => String(data.get(name) || '').split(',').map((s) => s.trim()).filter(Boolean);
    const body = {
      title: String(data.get('title')).trim(), abstract: String(data.get('abstract')), keywords: list('keywords'),
      regions: list('regions'), attribution: String(data.get('attribution')) || null,
      constraints_other: String(data.get('constraints_other')) || null, date_type: data.get('date_type'),
      category: data.get('category') ? { identifier: data.get('category') } : null,
      license: data.get('license') ? { identifier: data.get('license') } : null,
    };
    if (data.get('date')) body.date = `${data.get('date')}T00:00:00Z`;
    body.temporal_extent_start = data.get('temporal_extent_start') ? `${data.get('temporal_extent_start')}T00:00:00Z` : null;
    body.temporal_extent_end = data.get('temporal_extent_end') ? `${data.get('temporal_extent_end')}T00:00:00Z` : null;
    message.className = '';
    message.textContent = 'Saving…';
    try {
      await api(`/api/v2/resources/${resource.pk}`, { method: 'PATCH', json: body });
      resource.title = body.title;
      const heading = document.querySelector('section.edit h1');
      if (heading) heading.textContent = `Edit ${TYPE_LABELS[resource.resource_type]?.toLowerCase() || 'resource'}: ${body.title}`;
      message.textContent = 'Saved.';
      toast('Metadata saved.');
    } catch (error) {
      message.className = 'error';
      message.textContent = error.message;
    }
  });
  return h('section', { class: 'panel' }, h('h2', {}, 'Metadata'), form);
}

function thumbnailForm(resource) {
  const img = h('img', { class: 'thumbnail', src: resource.thumbnail_url || '/ui/img/dataset.svg', alt: 'Current thumbnail' });
  const input = h('input', { type: 'file', accept: 'image/png,image/jpeg', name: 'file' });
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'inline-form', 'aria-label': 'Thumbnail' }, field('New thumbnail (PNG or JPEG, up to 1 MB)', input),
    h('button', { type: 'submit' }, 'Upload thumbnail'), message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!input.files.length) { message.textContent = 'Choose an image first.'; return; }
    const data = new FormData();
    data.append('file', input.files[0]);
    try {
      const answer = await sendWithProgress(`/api/v2/resources/${resource.pk}/set_thumbnail`, data, () => {}, 'PUT');
      img.src = `${answer.thumbnail_url}${answer.thumbnail_url.includes('?') ? '&' : '?'}t=${Date.now()}`;
      message.className = '';
      message.textContent = 'Thumbnail changed.';
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  return h('section', { class: 'panel' }, h('h2', {}, 'Thumbnail'), h('div', { class: 'row' }, img, form));
}

function styleForm(resource) {
  const mapEl = h('div', { class: 'map-canvas small-map', id: 'style-map', role: 'region', 'aria-label': 'Preview of the style' });
  const input = h('input', { type: 'file', accept: '.sld,.xml', name: 'sld_file' });
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'inline-form', 'aria-label': 'Style' }, field('A style (SLD file)', input), h('button', { type: 'submit' }, 'Upload style'), message);
  let map, layer;
  requestAnimationFrame(() => {
    map = createMap(mapEl);
    layer = datasetLayer(resource.alternate, { cacheKey: resource.last_updated }).addTo(map);
    const box = boxOf(resource.ll_bbox_polygon);
    if (box) map.fitBounds(boundsOf(box), { maxZoom: 14 });
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!input.files.length) { message.textContent = 'Choose an SLD file first.'; return; }
    const data = new FormData();
    data.append('base_file', input.files[0]);
    data.append('sld_file', input.files[0]);
    data.append('action', 'resource_style_upload');
    data.append('resource_pk', resource.pk);
    message.className = '';
    message.textContent = 'Uploading the style…';
    try {
      const answer = await sendWithProgress('/api/v2/uploads/upload', data, () => {});
      const state = await followExecution(answer.execution_id);
      if (state.status === 'failed') throw new Error(state.log || 'The style was refused.');
      message.textContent = 'Style applied.';
      layer.setParams({ v: Date.now() });
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  return h('section', { class: 'panel' }, h('h2', {}, 'Style'), h('div', { class: 'row' }, mapEl, form));
}

function permissionsEditor(resource) {
  const section = h('section', { class: 'panel', id: 'sharing' }, h('h2', {}, 'Sharing'), h('p', { class: 'muted' }, 'Loading…'));
  loadPermissions(section, resource);
  return section;
}

async function loadPermissions(section, resource) {
  let current, types;
  try {
    [current, types] = await Promise.all([api(`/api/v2/resources/${resource.pk}/permissions`), api('/api/v2/resources/resource_types')]);
  } catch (error) { mount(section, h('h2', {}, 'Sharing'), errorBox(error)); return; }
  const allowed = (types.resource_types || []).find((t) => t.name === resource.resource_type)?.allowed_perms?.compact || {};
  const levels = (name) => (allowed[EVERYONE.has(name) ? name : 'default'] || []).filter((l) => l.name !== 'owner').map((l) => [l.name, l.label]);
  const rows = [];
  const table = h('tbody');
  const addRow = (kind, entry) => {
    if (entry.permissions === 'owner') return;
    const choices = EVERYONE.has(entry.name) ? levels(entry.name) : [['none', 'None'], ...levels(entry.name)];
    const level = select('level', choices, entry.permissions || 'none');
    level.setAttribute('aria-label', `Access for ${entry.label}`);
    const item = { kind, id: entry.id, level };
    rows.push(item);
    const remove = EVERYONE.has(entry.name) ? null : h('button', { type: 'button', class: 'link', onclick: () => { level.value = 'none'; tr.hidden = true; } }, 'Remove');
    const note = entry.name === 'registered-members' ? h('small', { class: 'effective block muted', 'aria-live': 'polite' }) : null;
    if (EVERYONE.has(entry.name)) everyone[entry.name] = { level, note };
    level.addEventListener('change', explain);
    const tr = h('tr', {}, h('td', {}, entry.label, note), h('td', {}, kind === 'users' ? 'User' : 'Group'), h('td', {}, level), h('td', {}, remove));
    table.append(tr);
  };
  // Signed-in users are part of everyone: they may do at least what everyone may.
  const everyone = {};
  function explain() {
    const registered = everyone['registered-members'], anonymous = everyone.anonymous;
    if (!registered?.note) return;
    const rank = (select) => LEVEL_ORDER.indexOf(select?.value || 'none');
    const best = rank(anonymous?.level) > rank(registered.level) ? anonymous.level : registered.level;
    const name = best.selectedOptions[0]?.textContent || 'None';
    registered.note.textContent = best === registered.level ? `In effect: ${name}.` : `In effect: ${name}, as everyone may.`;
  }
  const label = (g) => (g.name === 'anonymous' ? 'Everyone, signed in or not' : g.name === 'registered-members' ? 'Every signed-in user' : g.title || g.name);
  for (const g of current.groups || []) addRow('groups', { id: g.id, name: g.name, label: label(g), permissions: g.permissions });
  for (const u of current.users || []) addRow('users', { id: u.id, name: u.username, label: personName(u), permissions: u.permissions });
  explain();
  const owner = (current.users || []).find((u) => u.permissions === 'owner');
  const who = h('input', { name: 'who', list: 'share-candidates', placeholder: 'User or group name', autocomplete: 'off' });
  const candidates = h('datalist', { id: 'share-candidates' });
  const known = new Map();
  Promise.all([api('/api/v2/users', { params: { page_size: 200 } }).catch(() => null), api('/api/v2/groups', { params: { page_size: 200 } }).catch(() => null)])
    .then(([users, groups]) => {
      for (const u of users?.users || []) { known.set(u.username, { kind: 'users', id: u.pk, name: u.username, label: personName(u) }); candidates.append(h('option', { value: u.username }, personName(u))); }
      for (const g of groups?.group_profiles || []) {
        const name = g.group?.name || g.slug;
        if (EVERYONE.has(name) || !g.group) continue;
        known.set(name, { kind: 'groups', id: g.group.pk, name, label: g.title });
        candidates.append(h('option', { value: name }, `${g.title} (group)`));
      }
    });
  const message = h('p', { role: 'status' });
  const add = h('button', { type: 'button', class: 'secondary', onclick: () => {
    const found = known.get(who.value.trim());
    if (!found) { message.className = 'error'; message.textContent = `No user or group called “${who.value}”.`; return; }
    if (rows.some((r) => r.kind === found.kind && String(r.id) === String(found.id))) { message.textContent = `${found.label} is already in the list.`; return; }
    addRow(found.kind, { ...found, permissions: 'view' });
    who.value = '';
    message.textContent = '';
  } }, 'Add');
  const save = h('button', { type: 'submit' }, 'Save sharing');
  const form = h('form', { 'aria-label': 'Sharing' },
    owner ? h('p', {}, 'Owner: ', personName(owner)) : null,
    h('table', { class: 'perms' }, h('thead', {}, h('tr', {}, h('th', {}, 'Who'), h('th', {}, 'Kind'), h('th', {}, 'May'), h('th', {}, h('span', { class: 'visually-hidden' }, 'Remove')))), table),
    h('div', { class: 'inline-form' }, field('Share with', who), candidates, add),
    h('p', { class: 'muted levels' }, 'View: see it and its metadata. Download: also get its data. Edit: also change it. Manage: also share and delete it. ',
      'Every signed-in user may do at least what everyone may; both can be given at most View or Download.'),
    h('div', { class: 'actions' }, save, message));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { users: [], groups: [], organizations: [] };
    for (const row of rows) body[row.kind].push({ id: row.id, permissions: row.level.value });
    if (owner) body.users.push({ id: owner.id, permissions: 'owner' });
    save.disabled = true;
    message.className = '';
    message.textContent = 'Saving…';
    try {
      const answer = await api(`/api/v2/resources/${resource.pk}/permissions`, { method: 'PUT', json: body });
      const id = answer?.execution_id;
      if (id) {
        const state = await followExecution(id);
        if (state.status === 'failed') throw new Error(state.log || 'The change was refused.');
      }
      message.textContent = 'Sharing saved.';
      toast('Sharing saved.');
    } catch (error) { message.className = 'error'; message.textContent = error.message; } finally { save.disabled = false; }
  });
  mount(section, h('h2', {}, 'Sharing'), form);
}

function deleteSection(resource) {
  const button = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!(await confirmDialog(`Delete “${resource.title}” for good? This cannot be undone.`))) return;
    try {
      await api(`/api/v2/resources/${resource.pk}`, { method: 'DELETE' });
      toast('Deleted.');
      location.hash = '#/';
    } catch (error) { toast(error.message, 'error'); }
  } }, 'Delete this resource');
  return h('section', { class: 'panel danger-zone' }, h('h2', {}, 'Delete'), h('p', {}, 'Deleting removes the resource and its files.'), button);
}
