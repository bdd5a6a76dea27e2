// A resource's history on its page: its versions, newest first and paged, each with a sentence
// saying what changed, who made it, through what and when; what a version changed (fields before
// and after; features added, changed and deleted); and "Revert to this version" for those who
// may change what differs since. A revert puts the resource back as it was at that version: its
// fields and, for a dataset, its features, each as a new version (nothing is lost).

import { api, can } from './api.js';
import { confirmDialog, formatDateTime, h, mount } from './dom.js';
import { shown } from './editing.js';

const PAGE_SIZE = 10;

// The fields' names in words, in the order the page names them (others after, as they come).
const FIELD_NAMES = {
  title: 'title', abstract: 'abstract', keywords: 'keywords', tkeywords: 'thesaurus keywords', category: 'category',
  license: 'licence', regions: 'regions', date: 'date', date_type: 'date type', owner: 'owner', group: 'group',
  is_published: 'published', is_approved: 'approved', featured: 'featured', advertised: 'advertised',
  attribution: 'attribution', constraints_other: 'other constraints', data_quality_statement: 'data quality statement',
  supplemental_information: 'supplemental information', purpose: 'purpose', edition: 'edition', doi: 'DOI',
  temporal_extent_start: 'start of the time span', temporal_extent_end: 'end of the time span', language: 'language',
  maintenance_frequency: 'maintenance frequency', restriction_code_type: 'restrictions', extent: 'extent', srid: 'coordinate system',
  thumbnail_url: 'thumbnail', blob: 'content', name: 'name', attribute_set: 'attributes', default_style: 'default style',
  poc: 'point of contact', metadata_author: 'metadata author', spatial_representation_type: 'spatial representation',
  featureinfo_custom_template: 'feature info template', use_featureinfo_custom_template: 'feature info template in use',
};

function fieldName(name) {
  return FIELD_NAMES[name] || String(name).replace(/_/g, ' ');
}

function capital(text) { return text.charAt(0).toUpperCase() + text.slice(1); }

function listed(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

const FIELD_ORDER = Object.keys(FIELD_NAMES);

function ordered(fields) {
  const rank = (name) => (FIELD_ORDER.includes(name) ? FIELD_ORDER.indexOf(name) : FIELD_ORDER.length);
  return [...(fields || [])].sort((a, b) => rank(a) - rank(b));
}

// "title, abstract and keywords" (the first five; past those, how many more).
function fieldNames(fields) {
  const names = ordered(fields).map(fieldName);
  if (!names.length) return 'nothing';
  return listed(names.length > 5 ? [...names.slice(0, 4), `${names.length - 4} more fields`] : names);
}

function fieldsText(fields) { return capital(fieldNames(fields)); }

function plural(n, one, many) { return `${n.toLocaleString()} ${n === 1 ? one : many}`; }

function featuresText(summary) {
  const ins = summary?.inserted || 0, upd = summary?.updated || 0, del = summary?.deleted || 0;
  const parts = [];
  if (ins) parts.push(['added', ins]);
  if (upd) parts.push(['changed', upd]);
  if (del) parts.push(['deleted', del]);
  if (!parts.length) return 'No feature changed';
  if (parts.length === 1) return `${plural(parts[0][1], 'feature', 'features')} ${parts[0][0]}`;
  const [first, ...rest] = parts;  // "2 features added, 1 changed and 1 deleted"
  return listed([`${plural(first[1], 'feature', 'features')} ${first[0]}`, ...rest.map(([verb, n]) => `${n.toLocaleString()} ${verb}`)]);
}

const DATA_VIA = { 'wfs-t': ' through QGIS or another GIS (WFS-T)', ui: ' in the web UI', api: ' through the API', ogcapi: ' through OGC API – Features' };
const FIELDS_VIA = { iso: ' from an ISO metadata document', harvest: ' by harvesting', owner: ' (a change of owner)', upload: ' with new data uploaded' };

// A version as one sentence: "3 features changed by alice through QGIS or another GIS (WFS-T)".
export function describe(version) {
  const who = version.user?.username ? ` by ${version.user.username}` : '';
  const s = version.summary || {};
  if (version.kind === 'data') return `${featuresText(s)}${who}${DATA_VIA[version.via] || ''}`;
  if (version.kind === 'replace') {
    const count = Number.isFinite(s.feature_count) ? ` (${plural(s.feature_count, 'feature', 'features')})` : '';
    return `Data replaced by a new upload${count}${who}`;
  }
  if (version.kind === 'revert') {
    const to = version.reverts_to_number ?? s.reverts_to;
    const what = Array.isArray(s.fields) ? `${fieldNames(s.fields)} put back` : featuresText(s).replace(/^No/, 'no');
    return `Reverted to version ${to ?? '?'}${who}: ${what}`;
  }
  if (version.kind === 'incoming') return incomingText(version, who);
  return `${fieldsText(s.fields)} changed${who}${FIELDS_VIA[version.via] || ''}`;
}

// What became of a copy brought by a package and kept aside as a conflict (summary.state).
const INCOMING_STATE = {
  aside: 'kept aside until someone chooses which copy to keep',
  dismissed: 'not kept: the copy here was kept',
  applied: 'kept in place of the copy here (the next version)',
  copied: 'kept as a resource of its own',
};

// A version of kind "incoming": the copy changed in another catalogue, which changed nothing here.
function incomingText(version, who) {
  const s = version.summary || {};
  const from = s.made_by ? ` made by ${s.made_by}` : '';
  const differs = Array.isArray(s.fields) && s.fields.length ? `, differing in the ${fieldNames(s.fields)}` : '';
  const copy = s.state === 'copied' && s.copy ? ` (resource ${s.copy})` : '';
  return `Changed elsewhere too${who}, brought in a package${from}${differs}; ${INCOMING_STATE[s.state] || 'kept aside'}${copy}`;
}

// "2 minutes ago", "yesterday", "3 days ago"; the date itself after a month.
export function ago(value, now = Date.now()) {
  const t = new Date(value).getTime();
  if (!Number.isFinite(t)) return String(value || '');
  const seconds = Math.round((t - now) / 1000);
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  const steps = [[60, 'second'], [3600, 'minute', 60], [86400, 'hour', 3600], [86400 * 30, 'day', 86400]];
  if (Math.abs(seconds) < 45) return 'just now';
  for (const [limit, unit, size = 1] of steps) {
    if (Math.abs(seconds) < limit) return format.format(Math.round(seconds / size), unit);
  }
  return formatDateTime(value);
}

function whereText(geometry) {
  if (!geometry) return '';
  const point = geometry.type === 'Point' ? geometry.coordinates
    : geometry.type === 'MultiPoint' && geometry.coordinates.length === 1 ? geometry.coordinates[0] : null;
  if (point) {
    const [x, y] = point;
    return `${Math.abs(y).toFixed(5)}° ${y >= 0 ? 'N' : 'S'}, ${Math.abs(x).toFixed(5)}° ${x >= 0 ? 'E' : 'W'}`;
  }
  return `a ${geometry.type}`;
}

function valueCell(value) {
  const text = shown(value);
  return h('td', { class: 'value' }, text === '' ? h('span', { class: 'muted' }, 'empty') : text);
}

// The features a version added or deleted: their ids and values.
function featureList(title, features) {
  if (!features.length) return null;
  const names = [...new Set(features.flatMap((f) => Object.keys(f.properties || {})))];
  return h('div', { class: 'change-block' }, h('h4', {}, `${title} (${features.length.toLocaleString()})`),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'ID'), names.map((n) => h('th', { scope: 'col' }, n)), h('th', { scope: 'col' }, 'Where'))),
      h('tbody', {}, features.map((f) => h('tr', {}, h('th', { scope: 'row' }, f.id ?? ''), names.map((n) => valueCell(f.properties?.[n])),
        h('td', {}, whereText(f.geometry))))))));
}

// The features a version changed: each field changed, before and after.
function updatedList(updates) {
  if (!updates.length) return null;
  const rows = [];
  for (const u of updates) {
    const before = u.before || {}, after = u.after || {};
    const names = [...new Set([...Object.keys(before.properties || {}), ...Object.keys(after.properties || {})])];
    for (const n of names) rows.push([u.id, n, valueCell(before.properties?.[n]), valueCell(after.properties?.[n])]);
    if ('geometry' in before || 'geometry' in after) {
      rows.push([u.id, 'location', h('td', {}, whereText(before.geometry) || 'none'), h('td', {}, whereText(after.geometry) || 'none')]);
    }
  }
  return h('div', { class: 'change-block' }, h('h4', {}, `Changed (${updates.length.toLocaleString()})`),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, ['Feature', 'Field', 'Before', 'After'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map(([id, name, b, a]) => h('tr', {}, h('th', { scope: 'row' }, id), h('td', {}, name), b, a))))));
}

function fieldsTable(fields, columns = ['Before', 'After']) {
  const entries = ordered(Object.keys(fields || {})).map((name) => [name, fields[name]]);
  if (!entries.length) return null;
  return h('div', { class: 'change-block' }, h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, ['Field', ...columns].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, entries.map(([name, change]) => h('tr', {}, h('th', { scope: 'row' }, capital(fieldName(name))),
      valueCell(change.before), valueCell(change.after)))))));
}

// What one version changed (GET .../versions/{n}), as the page shows it.
function changesOf(resource, version) {
  const changes = version.changes || {};
  // a copy kept aside (kind "incoming") compares ours with theirs; nothing of the resource changed
  const parts = [fieldsTable(changes.fields, version.kind === 'incoming' ? ['Here', 'Brought by the package'] : undefined)];
  const f = changes.features;
  const ofData = version.kind === 'data' || version.kind === 'replace' || (version.kind === 'revert' && !Object.keys(changes.fields || {}).length);
  if (f) {
    parts.push(featureList('Added', f.inserted || []), updatedList(f.updated || []), featureList('Deleted', f.deleted || []));
  } else if (version.kind === 'replace') {
    const files = (version.summary?.files || []).join(', ');
    parts.push(h('p', {}, 'New data were uploaded in place of the old', files ? `: ${files}.` : '.'));
  } else if (ofData) {
    parts.push(h('p', { class: 'muted' }, 'The features changed are shown to those who may download this dataset.'));
  }
  if (resource.resource_type === 'dataset' && ofData && can(resource, 'download_resourcebase') && resource.subtype !== 'raster') {
    parts.push(h('p', { class: 'small-text' }, h('a', { href: `/api/v2/datasets/${resource.pk}/versions/${version.number}/features`, download: '' },
      `Download the features as at version ${version.number} (GeoJSON)`)));
  }
  const found = parts.filter(Boolean);
  return found.length ? found : [h('p', { class: 'muted' }, 'Nothing to show.')];
}

// What a revert to `number` would do: the parts to revert, what they put back ("puts back the
// title"), and what cannot be put back, with why.
async function revertPlan(resource, number) {
  const { diff } = await api(`/api/v2/resources/${resource.pk}/versions/${number}/diff`);
  const parts = [], puts = [], blocked = [];
  const fields = ordered(Object.keys(diff.fields || {}));
  if (fields.length) {
    const names = listed(fields.map(fieldName));
    if (can(resource, 'change_resourcebase_metadata')) { parts.push('metadata'); puts.push(`puts back the ${names}`); }
    else blocked.push(`the ${names} cannot be put back: you may not change ${fields.length > 1 ? 'them' : 'it'}`);
  }
  const f = diff.features;
  const count = f ? (f.inserted?.length || 0) + (f.updated?.length || 0) + (f.deleted?.length || 0) : 0;
  if (diff.data_replaced) blocked.push('the features cannot be put back: new data were uploaded since');
  else if (count) {
    if (can(resource, 'change_dataset_data')) { parts.push('data'); puts.push(`puts back ${plural(count, 'feature', 'features')} as ${count > 1 ? 'they were' : 'it was'}`); }
    else blocked.push('the features cannot be put back: you may not change them');
  }
  return { parts, puts, blocked };
}

export function historySection(el, resource, { note = null, onReverted = null } = {}) {
  const list = h('ol', { class: 'versions plain', 'aria-label': 'Versions, newest first' });
  const status = h('div', { class: 'history-status', 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  const section = h('section', { class: 'history', id: 'history', 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title', tabindex: '-1' }, 'History'), status, list, pager);
  el.append(section);
  const mayRevert = can(resource, 'change_resourcebase_metadata') || can(resource, 'change_dataset_data');
  let page = 1;
  let loaded = 0;

  if (note) {
    mount(status, h('p', { class: 'ok-note' }, note));
  }

  async function load() {
    const turn = ++loaded;
    let data;
    try {
      data = await api(`/api/v2/resources/${resource.pk}/versions`, { params: { page, page_size: PAGE_SIZE } });
    } catch (error) {
      if (turn === loaded) mount(list, h('li', { class: 'error' }, error.message));
      return;
    }
    if (turn !== loaded) return;
    const versions = data.versions || [];
    // the newest version that made the resource what it is (a copy kept aside changed nothing)
    const newest = page === 1 ? versions.find((v) => v.kind !== 'incoming')?.number : null;
    const items = versions.map((v) => item(v, v.number === newest));
    const last = page * PAGE_SIZE >= data.total;
    if (last && data.total > 0 && versions[versions.length - 1]?.number === 1) items.push(original());
    if (!data.total) items.push(h('li', { class: 'muted' }, 'No changes yet: this is the resource as it was ',
      resource.resource_type === 'dataset' ? 'uploaded.' : 'first saved.'));
    mount(list, items);
    const pages = Math.max(1, Math.ceil(data.total / PAGE_SIZE));
    mount(pager, pages > 1 ? [
      h('button', { type: 'button', class: 'secondary small', disabled: page === 1, onclick: () => { page -= 1; load(); } }, '← Newer'),
      h('span', { class: 'muted' }, `Page ${page} of ${pages} (${plural(data.total, 'version', 'versions')})`),
      h('button', { type: 'button', class: 'secondary small', disabled: page >= pages, onclick: () => { page += 1; load(); } }, 'Older →'),
    ] : []);
    list.dataset.loaded = '1';
  }

  function head(label, sentence, created) {
    return h('div', { class: 'version-head' },
      h('span', { class: 'badge light' }, label),
      h('p', { class: 'version-summary' }, sentence,
        created ? [', ', h('time', { datetime: created, title: formatDateTime(created) }, ago(created))] : null));
  }

  function item(version, newest) {
    const box = h('div', { class: 'version-changes', hidden: true });
    const toggle = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false', onclick: () => showChanges(version, toggle, box) }, 'Show changes');
    return h('li', { class: 'version', dataset: { number: version.number } },
      head(`Version ${version.number}`, describe(version), version.created),
      h('div', { class: 'version-actions' }, toggle,
        mayRevert && !newest && version.kind !== 'incoming' ? revertButton(version.number) : null,
        mayRevert && version.kind === 'incoming' && version.summary?.state === 'aside'
          ? h('a', { href: '#/packages', class: 'small-text' }, 'Choose which copy to keep') : null,
        newest ? h('span', { class: 'muted small-text' }, 'This is the resource as it is now.') : null),
      box);
  }

  function original() {
    return h('li', { class: 'version original', dataset: { number: 0 } },
      head('Version 0', resource.resource_type === 'dataset' ? 'The dataset as it was uploaded' : 'The resource as it was first saved', null),
      mayRevert ? h('div', { class: 'version-actions' }, revertButton(0)) : null);
  }

  async function showChanges(version, toggle, box) {
    const open = toggle.getAttribute('aria-expanded') === 'true';
    toggle.setAttribute('aria-expanded', String(!open));
    toggle.textContent = open ? 'Show changes' : 'Hide changes';
    box.hidden = open;
    if (open || box.dataset.loaded) return;
    mount(box, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const detail = (await api(`/api/v2/resources/${resource.pk}/versions/${version.number}`)).version;
      mount(box, changesOf(resource, detail));
      box.dataset.loaded = '1';
    } catch (error) {
      mount(box, h('p', { class: 'error' }, error.message));
    }
  }

  function revertButton(number) {
    const button = h('button', { type: 'button', class: 'secondary small', dataset: { focus: `revert-${number}` } }, 'Revert to this version');
    button.addEventListener('click', () => revert(number, button));
    return button;
  }

  async function revert(number, button) {
    button.disabled = true;
    try {
      const { parts, puts, blocked } = await revertPlan(resource, number);
      if (!parts.length) {
        mount(status, h('p', { class: 'error', role: 'alert' }, blocked.length
          ? `Nothing was reverted: ${listed(blocked)}.`
          : `Nothing to revert: the resource is as it was at version ${number}.`));
        return;
      }
      const question = `Revert to version ${number}? This ${listed(puts)}.${blocked.length ? ` But ${listed(blocked)}.` : ''}`
        + ' The revert is kept as a new version, so it can be undone too.';
      if (!(await confirmDialog(question, 'Revert'))) return;
      const made = [];
      for (const part of parts) {
        const answer = await api(`/api/v2/resources/${resource.pk}/versions/${number}/revert`, { method: 'POST', params: { part } });
        made.push(answer.version.number);
      }
      const note = `Reverted to version ${number} (as ${made.length > 1 ? 'versions' : 'version'} ${listed(made.map(String))}): the page shows the resource as it is now.`;
      if (onReverted) await onReverted(note);
      else { mount(status, h('p', { class: 'ok-note' }, note)); page = 1; await load(); }
    } catch (error) {
      mount(status, h('p', { class: 'error', role: 'alert' }, error.message));
      page = 1;
      await load();
    } finally {
      button.disabled = false;
    }
  }

  load();
  return {
    reload: () => { page = 1; return load(); },
    focus: () => section.querySelector('#history-title').focus(),
  };
}
