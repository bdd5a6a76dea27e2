// Edit and share (owners, managers, administrators): the metadata (drawn from the metadata
// schema, see metadata_form.js), the thumbnail, the style of a dataset, who may do what, and
// deleting. Everyone (anonymous, registered members) can be given at most view and download: the
// catalogue refuses more, and the form offers no more.

import { api, can, currentUser, followExecution, sendWithProgress } from '../api.js';
import { confirmDialog, errorBox, field, h, mount, personName, select, toast } from '../dom.js';
import { t, load } from '../i18n.js';
import { boundsOf, boxOf, createMap, datasetLayer } from '../map.js';
import { loadResource } from './detail.js';
import { combobox, metadataForm } from './metadata_form.js';

await load('edit');

const EVERYONE = new Set(['anonymous', 'registered-members']);
const LEVEL_ORDER = ['none', 'view', 'download', 'edit', 'manage'];

function headingOf(resource) {
  const title = resource.title;
  return {
    dataset: t('edit.heading_dataset', { title }),
    document: t('edit.heading_document', { title }),
    map: t('edit.heading_map', { title }),
    geostory: t('edit.heading_geostory', { title }),
    dashboard: t('edit.heading_dashboard', { title }),
  }[resource.resource_type] || t('edit.heading_resource', { title });
}

// The levels of access in the reader's language; a level the catalogue adds keeps its own name.
function levelName(name, label) {
  return {
    none: t('edit.level_none'),
    view: t('edit.level_view'),
    download: t('edit.level_download'),
    edit: t('edit.level_edit'),
    manage: t('edit.level_manage'),
  }[name] || label || name;
}

export async function render(main, ctx) {
  const [, type, pk] = ctx.match;
  if (!currentUser()) { location.hash = `#/login?next=${encodeURIComponent(ctx.path)}`; return; }
  let resource;
  try { resource = await loadResource(type, pk); } catch (error) {
    mount(main, h('section', { class: 'page narrow' }, h('h1', {}, t('edit.cannot_edit')), errorBox(error)));
    return;
  }
  if (!ctx.isCurrent()) return;
  const back = `#/${resource.resource_type}/${resource.pk}`;
  const sections = [];
  if (can(resource, 'change_resourcebase_metadata')) sections.push(metadataSection(resource), thumbnailForm(resource));
  if (resource.resource_type === 'dataset' && can(resource, 'change_dataset_style')) sections.push(styleForm(resource));
  if (can(resource, 'change_resourcebase_permissions')) sections.push(permissionsEditor(resource));
  if (can(resource, 'delete_resourcebase')) sections.push(deleteSection(resource));
  if (!sections.length) sections.push(h('p', {}, t('edit.look_only')));
  mount(main, h('section', { class: 'page edit' },
    h('nav', { class: 'crumbs', 'aria-label': t('edit.crumbs') }, h('a', { href: '#/' }, t('edit.crumb_catalogue')), ' › ',  // i18n: not text
      h('a', { href: back }, resource.title), ' › ', t('edit.crumb_edit')),  // i18n: not text
    h('h1', {}, headingOf(resource)), sections));
}

function metadataSection(resource) {
  const form = metadataForm(resource.pk, { onSaved: (values) => {
    if (typeof values.title === 'string') {
      resource.title = values.title;
      const heading = document.querySelector('section.edit h1');
      if (heading) heading.textContent = headingOf(resource);
    }
    toast(t('edit.metadata_saved'));
  } });
  return h('section', { class: 'panel' }, h('h2', {}, t('edit.metadata_heading')), form);
}

function thumbnailForm(resource) {
  const img = h('img', { class: 'thumbnail', src: resource.thumbnail_url || '/ui/img/dataset.svg', alt: t('edit.thumbnail_current') });
  const input = h('input', { type: 'file', accept: 'image/png,image/jpeg', name: 'file' });
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'inline-form', 'aria-label': t('edit.thumbnail_form') }, field(t('edit.thumbnail_new', { size: 1 }), input),
    h('button', { type: 'submit' }, t('edit.thumbnail_upload')), message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!input.files.length) { message.className = 'error'; message.textContent = t('edit.thumbnail_choose'); return; }
    const data = new FormData();
    data.append('file', input.files[0]);
    message.className = '';
    message.textContent = t('edit.thumbnail_sending');
    try {
      const answer = await sendWithProgress(`/api/v2/resources/${resource.pk}/set_thumbnail`, data, () => {}, 'PUT');
      img.src = `${answer.thumbnail_url}${answer.thumbnail_url.includes('?') ? '&' : '?'}t=${Date.now()}`;
      message.textContent = t('edit.thumbnail_changed');
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  return h('section', { class: 'panel' }, h('h2', {}, t('edit.thumbnail_heading')), h('div', { class: 'row' }, img, form));
}

function styleForm(resource) {
  const mapEl = h('div', { class: 'map-canvas small-map', id: 'style-map', role: 'region', 'aria-label': t('edit.style_preview') });
  const input = h('input', { type: 'file', accept: '.sld,.xml', name: 'sld_file' });
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'inline-form', 'aria-label': t('edit.style_form') }, field(t('edit.style_file'), input),
    h('button', { type: 'submit' }, t('edit.style_upload')), message);
  let map, layer;
  requestAnimationFrame(() => {
    map = createMap(mapEl);
    layer = datasetLayer(resource.alternate, { cacheKey: resource.last_updated }).addTo(map);
    const box = boxOf(resource.ll_bbox_polygon);
    if (box) map.fitBounds(boundsOf(box), { maxZoom: 14 });
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!input.files.length) { message.className = 'error'; message.textContent = t('edit.style_choose'); return; }
    const data = new FormData();
    data.append('base_file', input.files[0]);
    data.append('sld_file', input.files[0]);
    data.append('action', 'resource_style_upload');
    data.append('resource_pk', resource.pk);
    message.className = '';
    message.textContent = t('edit.style_sending');
    try {
      const answer = await sendWithProgress('/api/v2/uploads/upload', data, () => {});
      const state = await followExecution(answer.execution_id);
      if (state.status === 'failed') throw new Error(state.log || t('edit.style_refused'));
      message.textContent = t('edit.style_applied');
      layer.setParams({ v: Date.now() });
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  return h('section', { class: 'panel' }, h('h2', {}, t('edit.style_heading')), h('div', { class: 'row' }, mapEl, form));
}

function permissionsEditor(resource) {
  const section = h('section', { class: 'panel', id: 'sharing' }, h('h2', {}, t('edit.sharing_heading')), h('p', { class: 'muted' }, t('edit.sharing_loading')));
  loadPermissions(section, resource);
  return section;
}

async function loadPermissions(section, resource) {
  let current, types;
  try {
    [current, types] = await Promise.all([api(`/api/v2/resources/${resource.pk}/permissions`), api('/api/v2/resources/resource_types')]);
  } catch (error) { mount(section, h('h2', {}, t('edit.sharing_heading')), errorBox(error)); return; }
  const allowed = (types.resource_types || []).find((t) => t.name === resource.resource_type)?.allowed_perms?.compact || {};
  const levels = (name) => (allowed[EVERYONE.has(name) ? name : 'default'] || []).filter((l) => l.name !== 'owner').map((l) => [l.name, levelName(l.name, l.label)]);
  const rows = [];
  const table = h('tbody');
  const addRow = (kind, entry) => {
    if (entry.permissions === 'owner') return;
    const choices = EVERYONE.has(entry.name) ? levels(entry.name) : [['none', levelName('none')], ...levels(entry.name)];
    const level = select('level', choices, entry.permissions || 'none');
    level.setAttribute('aria-label', t('edit.access_for', { who: entry.label }));
    const item = { kind, id: entry.id, level };
    rows.push(item);
    const remove = EVERYONE.has(entry.name) ? null : h('button', { type: 'button', class: 'link', 'aria-label': t('edit.remove_who', { who: entry.label }),
      onclick: () => { level.value = 'none'; tr.hidden = true; message.textContent = t('edit.removed_who', { who: entry.label }); who.focus(); } }, t('edit.remove'));
    const note = entry.name === 'registered-members' ? h('small', { class: 'effective block muted', 'aria-live': 'polite' }) : null;
    if (EVERYONE.has(entry.name)) everyone[entry.name] = { level, note };
    level.addEventListener('change', explain);
    const tr = h('tr', {}, h('td', {}, entry.label, note), h('td', {}, kind === 'users' ? t('edit.kind_user') : t('edit.kind_group')), h('td', {}, level), h('td', {}, remove));
    table.append(tr);
  };
  // Signed-in users are part of everyone: they may do at least what everyone may.
  const everyone = {};
  function explain() {
    const registered = everyone['registered-members'], anonymous = everyone.anonymous;
    if (!registered?.note) return;
    const rank = (select) => LEVEL_ORDER.indexOf(select?.value || 'none');
    const best = rank(anonymous?.level) > rank(registered.level) ? anonymous.level : registered.level;
    const level = best.selectedOptions[0]?.textContent || levelName('none');
    registered.note.textContent = best === registered.level ? t('edit.in_effect', { level }) : t('edit.in_effect_everyone', { level });
  }
  const label = (g) => (g.name === 'anonymous' ? t('edit.everyone') : g.name === 'registered-members' ? t('edit.signed_in_users') : g.title || g.name);
  for (const g of current.groups || []) addRow('groups', { id: g.id, name: g.name, label: label(g), permissions: g.permissions });
  // A group with a profile (every group made through the API) is listed as an organization, as GeoNode lists it.
  for (const g of current.organizations || []) addRow('organizations', { id: g.id, name: g.name, label: g.title || g.name, permissions: g.permissions });
  for (const u of current.users || []) addRow('users', { id: u.id, name: u.username, label: personName(u), permissions: u.permissions });
  explain();
  const owner = (current.users || []).find((u) => u.permissions === 'owner');
  // Whom to share with: users and groups, suggested as one types their name.
  const known = new Map();
  Promise.all([api('/api/v2/users', { params: { page_size: 200 } }).catch(() => null), api('/api/v2/groups', { params: { page_size: 200 } }).catch(() => null)])
    .then(([users, groups]) => {
      for (const u of users?.users || []) known.set(`users:${u.username}`, { kind: 'users', id: u.pk, name: u.username, label: personName(u) });
      for (const g of groups?.group_profiles || []) {
        const name = g.group?.name || g.slug;
        if (EVERYONE.has(name) || !g.group) continue;
        known.set(`groups:${name}`, { kind: 'organizations', id: g.group.pk, name, label: g.title || name });
      }
    });
  const suggestion = (c) => (c.kind !== 'users' ? t('edit.group_option', { name: c.label }) : c.label === c.name ? c.name : `${c.label} (${c.name})`);
  const message = h('p', { role: 'status' });
  const shareWith = (text) => {
    const found = known.get(text) || known.get(`users:${text}`) || known.get(`groups:${text}`)
      || [...known.values()].find((c) => c.label.toLocaleLowerCase() === text.toLocaleLowerCase());
    if (!found) { message.className = 'error'; message.textContent = t('edit.share_unknown', { name: text }); return; }
    message.className = '';
    if (rows.some((r) => r.kind === found.kind && String(r.id) === String(found.id))) { message.textContent = t('edit.share_already', { who: found.label }); return; }
    addRow(found.kind, { ...found, permissions: 'view' });
    message.textContent = t('edit.share_added', { who: found.label });
    rows.at(-1).level.focus();
  };
  const whoId = 'share-with';  // i18n: not text
  const combo = combobox({
    creatable: true,
    autoSelect: true,
    attrs: { id: whoId, name: 'who', placeholder: t('edit.share_placeholder') },
    find: async (q) => {
      const needle = q.toLocaleLowerCase();
      const exact = ([, c]) => (c.name.toLocaleLowerCase() === needle ? 0 : 1);
      return [...known.entries()].filter(([, c]) => `${c.name} ${c.label}`.toLocaleLowerCase().includes(needle))
        .sort((a, b) => exact(a) - exact(b)).slice(0, 12).map(([key, c]) => ({ id: key, label: suggestion(c) }));
    },
    onPick: (item) => shareWith(item.id),
  });
  const who = combo.input;
  const add = h('button', { type: 'button', class: 'secondary', onclick: () => {
    if (!who.value.trim()) { who.focus(); return; }
    shareWith(who.value.trim());
    if (message.className !== 'error') who.value = '';
  } }, t('edit.share_add'));
  const save = h('button', { type: 'submit' }, t('edit.sharing_save'));
  const form = h('form', { 'aria-label': t('edit.sharing_form') },
    owner ? h('p', {}, t('edit.owner', { name: personName(owner) })) : null,
    h('table', { class: 'perms' }, h('thead', {}, h('tr', {}, h('th', {}, t('edit.col_who')), h('th', {}, t('edit.col_kind')), h('th', {}, t('edit.col_may')),
      h('th', {}, h('span', { class: 'visually-hidden' }, t('edit.remove'))))), table),
    h('div', { class: 'inline-form' }, h('div', { class: 'field' }, h('label', { for: whoId }, t('edit.share_with')), combo.node), add),
    h('p', { class: 'muted levels' }, t('edit.levels_explained'), ' ', t('edit.levels_everyone')),
    h('div', { class: 'actions' }, save, message));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { users: [], groups: [], organizations: [] };
    for (const row of rows) body[row.kind].push({ id: row.id, permissions: row.level.value });
    if (owner) body.users.push({ id: owner.id, permissions: 'owner' });
    save.disabled = true;
    message.className = '';
    message.textContent = t('edit.saving');
    try {
      const answer = await api(`/api/v2/resources/${resource.pk}/permissions`, { method: 'PUT', json: body });
      const id = answer?.execution_id;
      if (id) {
        const state = await followExecution(id);
        if (state.status === 'failed') throw new Error(state.log || t('edit.sharing_refused'));
      }
      message.textContent = t('edit.sharing_saved');
      toast(t('edit.sharing_saved'));
    } catch (error) { message.className = 'error'; message.textContent = error.message; } finally { save.disabled = false; }
  });
  mount(section, h('h2', {}, t('edit.sharing_heading')), form);
}

function deleteSection(resource) {
  const button = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!(await confirmDialog(t('edit.delete_confirm', { title: resource.title }), t('edit.delete_button_short')))) return;
    try {
      await api(`/api/v2/resources/${resource.pk}`, { method: 'DELETE' });
      toast(t('edit.deleted'));
      location.hash = '#/';
    } catch (error) { toast(error.message, 'error'); }
  } }, t('edit.delete_button'));
  return h('section', { class: 'panel danger-zone' }, h('h2', {}, t('edit.delete_heading')), h('p', {}, t('edit.delete_explained')), button);
}
