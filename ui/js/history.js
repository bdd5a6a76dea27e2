// A resource's history on its page: its versions, newest first and paged, each with a sentence
// saying what changed, who made it, through what and when; what a version changed (fields before
// and after; features added, changed and deleted); and "Revert to this version" for those who
// may change what differs since. A revert puts the resource back as it was at that version: its
// fields and, for a dataset, its features, each as a new version (nothing is lost).

import { api, can } from './api.js';
import { confirmDialog, fill, formatDateTime, h, mount, pointText, WORDS } from './dom.js';
import { shown } from './editing.js';
import { formatNumber, lang, load, t } from './i18n.js';

await load('history');

const PAGE_SIZE = 10;

// The fields' names in words, in the order the page names them (others after, as they come).
const FIELD_NAMES = {
  title: t('history.field_title'), abstract: t('history.field_abstract'), keywords: t('history.field_keywords'),
  tkeywords: t('history.field_tkeywords'), category: t('history.field_category'), license: t('history.field_license'),
  regions: t('history.field_regions'), date: t('history.field_date'), date_type: t('history.field_date_type'),
  owner: t('history.field_owner'), group: t('history.field_group'), is_published: t('history.field_is_published'),
  is_approved: t('history.field_is_approved'), featured: t('history.field_featured'), advertised: t('history.field_advertised'),
  attribution: t('history.field_attribution'), constraints_other: t('history.field_constraints_other'),
  data_quality_statement: t('history.field_data_quality_statement'), supplemental_information: t('history.field_supplemental_information'),
  purpose: t('history.field_purpose'), edition: t('history.field_edition'), doi: t('history.field_doi'),
  temporal_extent_start: t('history.field_temporal_extent_start'), temporal_extent_end: t('history.field_temporal_extent_end'),
  language: t('history.field_language'), maintenance_frequency: t('history.field_maintenance_frequency'),
  restriction_code_type: t('history.field_restriction_code_type'), extent: t('history.field_extent'), srid: t('history.field_srid'),
  thumbnail_url: t('history.field_thumbnail_url'), blob: t('history.field_blob'), name: t('history.field_name'),
  attribute_set: t('history.field_attribute_set'), default_style: t('history.field_default_style'), poc: t('history.field_poc'),
  metadata_author: t('history.field_metadata_author'), spatial_representation_type: t('history.field_spatial_representation_type'),
  featureinfo_custom_template: t('history.field_featureinfo_custom_template'),
  use_featureinfo_custom_template: t('history.field_use_featureinfo_custom_template'),
};

function fieldName(name) {
  return FIELD_NAMES[name] || String(name).replace(/_/g, ' ');
}

function capital(text) { return text.charAt(0).toLocaleUpperCase(lang) + text.slice(1); }

// "a, b and c" as the reader's language joins them.
const joined = new Intl.ListFormat(lang, { type: 'conjunction' });
function listed(items) { return joined.format(items.map(String)); }

const FIELD_ORDER = Object.keys(FIELD_NAMES);

function ordered(fields) {
  const rank = (name) => (FIELD_ORDER.includes(name) ? FIELD_ORDER.indexOf(name) : FIELD_ORDER.length);
  return [...(fields || [])].sort((a, b) => rank(a) - rank(b));
}

// "title, abstract and keywords" (the first five; past those, how many more).
function fieldNames(fields) {
  const names = ordered(fields).map(fieldName);
  if (!names.length) return t('history.nothing');
  return listed(names.length > 5 ? [...names.slice(0, 4), t('history.more_fields', { count: names.length - 4 })] : names);
}

// "2 features added, 1 changed and 1 deleted"
function featuresText(summary) {
  const ins = summary?.inserted || 0, upd = summary?.updated || 0, del = summary?.deleted || 0;
  const parts = [];
  if (ins) parts.push(t('history.features_added', { count: ins }));
  if (upd) parts.push(parts.length ? t('history.more_changed', { count: upd }) : t('history.features_changed', { count: upd }));
  if (del) parts.push(parts.length ? t('history.more_deleted', { count: del }) : t('history.features_deleted', { count: del }));
  return parts.length ? listed(parts) : '';
}

const DATA_VIA = { 'wfs-t': t('history.via_wfs_t'), ui: t('history.via_ui'), api: t('history.via_api'), ogcapi: t('history.via_ogcapi') };
const FIELDS_VIA = { iso: t('history.via_iso'), harvest: t('history.via_harvest'), owner: t('history.via_owner'), upload: t('history.via_upload') };

// A sentence and the words that follow it ("by alice", "in the web UI"), each there or not.
function sentence(...parts) { return capital(parts.filter(Boolean).join(' ')); }

// A version as one sentence: "3 features changed by alice through QGIS or another GIS (WFS-T)".
export function describe(version) {
  const who = version.user?.username ? t('history.by_user', { user: version.user.username }) : '';
  const s = version.summary || {};
  if (version.kind === 'data') return sentence(featuresText(s) || t('history.no_feature_changed'), who, DATA_VIA[version.via]);
  if (version.kind === 'replace') {
    const what = Number.isFinite(s.feature_count) ? t('history.replaced_count', { count: s.feature_count }) : t('history.replaced');
    return sentence(what, who);
  }
  if (version.kind === 'revert') {
    const to = version.reverts_to_number ?? s.reverts_to;
    const what = Array.isArray(s.fields) ? t('history.fields_put_back', { fields: fieldNames(s.fields) }) : featuresText(s) || t('history.no_feature_changed_inline');
    return t('history.reverted_sentence', { head: sentence(t('history.reverted_to', { number: to ?? '?' }), who), what });
  }
  if (version.kind === 'incoming') return incomingText(version, who);
  return sentence(t('history.fields_changed', { fields: fieldNames(s.fields) }), who, FIELDS_VIA[version.via]);
}

// What became of a copy brought by a package and kept aside as a conflict (summary.state).
const INCOMING_STATE = {
  aside: t('history.state_aside'),
  dismissed: t('history.state_dismissed'),
  applied: t('history.state_applied'),
  copied: t('history.state_copied'),
};

// A version of kind "incoming": the copy changed in another catalogue, which changed nothing here.
function incomingText(version, who) {
  const s = version.summary || {};
  const brought = s.made_by ? t('history.brought_made_by', { name: s.made_by }) : t('history.brought');
  const differs = Array.isArray(s.fields) && s.fields.length ? t('history.differing_in', { fields: fieldNames(s.fields) }) : '';
  const state = s.state === 'copied' && s.copy ? t('history.state_copied_as', { copy: s.copy }) : INCOMING_STATE[s.state] || t('history.state_aside_short');
  return t('history.incoming_sentence', { head: sentence(t('history.changed_elsewhere'), who), brought: [brought, differs].filter(Boolean).join(''), state });
}

// "2 minutes ago", "yesterday", "3 days ago"; the date itself after a month.
export function ago(value, now = Date.now()) {
  const time = new Date(value).getTime();
  if (!Number.isFinite(time)) return String(value || '');
  const seconds = Math.round((time - now) / 1000);
  const format = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' });
  const steps = [[60, 'second'], [3600, 'minute', 60], [86400, 'hour', 3600], [86400 * 30, 'day', 86400]];
  if (Math.abs(seconds) < 45) return t('history.just_now');
  for (const [limit, unit, size = 1] of steps) {
    if (Math.abs(seconds) < limit) return format.format(Math.round(seconds / size), unit);
  }
  return formatDateTime(value);
}

function whereText(geometry) {
  if (!geometry) return '';
  const point = geometry.type === 'Point' ? geometry.coordinates
    : geometry.type === 'MultiPoint' && geometry.coordinates.length === 1 ? geometry.coordinates[0] : null;
  if (point) return pointText(point);
  return t('history.a_geometry', { type: geometry.type });
}

function valueCell(value) {
  const text = shown(value);
  return h('td', { class: 'value' }, text === '' ? h('span', { class: 'muted' }, t('history.empty')) : text);
}

// The features a version added or deleted: their ids and values.
function featureList(title, features) {
  if (!features.length) return null;
  const names = [...new Set(features.flatMap((f) => Object.keys(f.properties || {})))];
  return h('div', { class: 'change-block' }, h('h4', {}, title),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('history.id')), names.map((n) => h('th', { scope: 'col' }, n)), h('th', { scope: 'col' }, t('history.where')))),
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
      rows.push([u.id, t('history.location'), h('td', {}, whereText(before.geometry) || t('history.none')), h('td', {}, whereText(after.geometry) || t('history.none'))]);
    }
  }
  return h('div', { class: 'change-block' }, h('h4', {}, t('history.changed_count', { count: updates.length })),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {}, [t('history.feature'), t('history.field'), t('history.before'), t('history.after')].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map(([id, name, b, a]) => h('tr', {}, h('th', { scope: 'row' }, id), h('td', {}, name), b, a))))));
}

function fieldsTable(fields, columns = [t('history.before'), t('history.after')]) {
  const entries = ordered(Object.keys(fields || {})).map((name) => [name, fields[name]]);
  if (!entries.length) return null;
  return h('div', { class: 'change-block' }, h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, [t('history.field'), ...columns].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, entries.map(([name, change]) => h('tr', {}, h('th', { scope: 'row' }, capital(fieldName(name))),
      valueCell(change.before), valueCell(change.after)))))));
}

// What one version changed (GET .../versions/{n}), as the page shows it.
function changesOf(resource, version) {
  const changes = version.changes || {};
  // a copy kept aside (kind "incoming") compares ours with theirs; nothing of the resource changed
  const parts = [fieldsTable(changes.fields, version.kind === 'incoming' ? [t('history.here'), t('history.brought_by_package')] : undefined)];
  const f = changes.features;
  const ofData = version.kind === 'data' || version.kind === 'replace' || (version.kind === 'revert' && !Object.keys(changes.fields || {}).length);
  if (f) {
    const inserted = f.inserted || [], deleted = f.deleted || [];
    parts.push(featureList(t('history.added_count', { count: inserted.length }), inserted), updatedList(f.updated || []),
      featureList(t('history.deleted_count', { count: deleted.length }), deleted));
  } else if (version.kind === 'replace') {
    const files = (version.summary?.files || []).join(', ');
    parts.push(h('p', {}, files ? t('history.replaced_files', { files }) : t('history.replaced_no_files')));
  } else if (ofData) {
    parts.push(h('p', { class: 'muted' }, t('history.features_for_downloaders')));
  }
  if (resource.resource_type === 'dataset' && ofData && can(resource, 'download_resourcebase') && resource.subtype !== 'raster') {
    parts.push(h('p', { class: 'small-text' }, h('a', { href: `/api/v2/datasets/${resource.pk}/versions/${version.number}/features`, download: '' },
      t('history.download_version', { number: version.number }))));
  }
  const found = parts.filter(Boolean);
  return found.length ? found : [h('p', { class: 'muted' }, t('history.nothing_to_show'))];
}

// What a revert to `number` would do: the parts to revert, what they put back ("puts back the
// title"), and what cannot be put back, with why.
async function revertPlan(resource, number) {
  const { diff } = await api(`/api/v2/resources/${resource.pk}/versions/${number}/diff`);
  const parts = [], puts = [], blocked = [];
  const fields = ordered(Object.keys(diff.fields || {}));
  if (fields.length) {
    const names = listed(fields.map(fieldName));
    if (can(resource, 'change_resourcebase_metadata')) { parts.push('metadata'); puts.push(t('history.puts_back_fields', { fields: names })); }
    else blocked.push(t('history.fields_blocked', { fields: names, count: fields.length }));
  }
  const f = diff.features;
  const count = f ? (f.inserted?.length || 0) + (f.updated?.length || 0) + (f.deleted?.length || 0) : 0;
  if (diff.data_replaced) blocked.push(t('history.features_blocked_replaced'));
  else if (count) {
    if (can(resource, 'change_dataset_data')) { parts.push('data'); puts.push(t('history.puts_back_features', { count })); }
    else blocked.push(t('history.features_blocked_forbidden'));
  }
  return { parts, puts, blocked };
}

export function historySection(el, resource, { note = null, onReverted = null } = {}) {
  const list = h('ol', { class: 'versions plain', 'aria-label': t('history.versions_label') });
  const status = h('div', { class: 'history-status', 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  const section = h('section', { class: 'history', id: 'history', 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title', tabindex: '-1' }, t('history.title')), status, list, pager);
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
    if (!data.total) items.push(h('li', { class: 'muted' }, resource.resource_type === 'dataset' ? t('history.no_changes_uploaded') : t('history.no_changes_saved')));
    mount(list, items);
    const pages = Math.max(1, Math.ceil(data.total / PAGE_SIZE));
    mount(pager, pages > 1 ? [
      h('button', { type: 'button', class: 'secondary small', disabled: page === 1, onclick: () => { page -= 1; load(); } }, t('history.newer')),
      h('span', { class: 'muted' }, t('history.page_of', { page, pages, count: data.total })),
      h('button', { type: 'button', class: 'secondary small', disabled: page >= pages, onclick: () => { page += 1; load(); } }, t('history.older')),
    ] : []);
    list.dataset.loaded = '1';
  }

  function head(label, sentence, created) {
    return h('div', { class: 'version-head' },
      h('span', { class: 'badge light' }, label),
      h('p', { class: 'version-summary' }, created
        ? fill(t('history.sentence_when', { sentence }), { when: h('time', { datetime: created, title: formatDateTime(created) }, ago(created)) })
        : sentence));
  }

  function item(version, newest) {
    const box = h('div', { class: 'version-changes', hidden: true });
    const toggle = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false', onclick: () => showChanges(version, toggle, box) }, t('history.show_changes'));
    return h('li', { class: 'version', dataset: { number: version.number } },
      head(t('history.version', { number: version.number }), describe(version), version.created),
      h('div', { class: 'version-actions' }, toggle,
        mayRevert && !newest && version.kind !== 'incoming' ? revertButton(version.number) : null,
        mayRevert && version.kind === 'incoming' && version.summary?.state === 'aside'
          ? h('a', { href: '#/packages', class: 'small-text' }, t('history.choose_copy')) : null,
        newest ? h('span', { class: 'muted small-text' }, t('history.as_it_is_now')) : null),
      box);
  }

  function original() {
    return h('li', { class: 'version original', dataset: { number: 0 } },
      head(t('history.version', { number: 0 }), resource.resource_type === 'dataset' ? t('history.original_dataset') : t('history.original_resource'), null),
      mayRevert ? h('div', { class: 'version-actions' }, revertButton(0)) : null);
  }

  async function showChanges(version, toggle, box) {
    const open = toggle.getAttribute('aria-expanded') === 'true';
    toggle.setAttribute('aria-expanded', String(!open));
    toggle.textContent = open ? t('history.show_changes') : t('history.hide_changes');
    box.hidden = open;
    if (open || box.dataset.loaded) return;
    mount(box, h('p', { class: 'muted' }, WORDS.loading));
    try {
      const detail = (await api(`/api/v2/resources/${resource.pk}/versions/${version.number}`)).version;
      mount(box, changesOf(resource, detail));
      box.dataset.loaded = '1';
    } catch (error) {
      mount(box, h('p', { class: 'error' }, error.message));
    }
  }

  function revertButton(number) {
    const button = h('button', { type: 'button', class: 'secondary small', dataset: { focus: `revert-${number}` } }, t('history.revert_to_this'));
    button.addEventListener('click', () => revert(number, button));
    return button;
  }

  async function revert(number, button) {
    button.disabled = true;
    try {
      const { parts, puts, blocked } = await revertPlan(resource, number);
      if (!parts.length) {
        mount(status, h('p', { class: 'error', role: 'alert' }, blocked.length
          ? t('history.nothing_reverted', { reasons: listed(blocked) })
          : t('history.nothing_to_revert', { number })));
        return;
      }
      const question = [t('history.revert_question', { number, puts: listed(puts) }),
        blocked.length ? t('history.revert_but', { reasons: listed(blocked) }) : '', t('history.revert_kept')].filter(Boolean).join(' ');
      if (!(await confirmDialog(question, t('history.revert')))) return;
      const made = [];
      for (const part of parts) {
        const answer = await api(`/api/v2/resources/${resource.pk}/versions/${number}/revert`, { method: 'POST', params: { part } });
        made.push(answer.version.number);
      }
      const note = t('history.reverted_note', { number, count: made.length, versions: listed(made.map((n) => formatNumber(n))) });
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
