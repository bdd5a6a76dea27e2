// Editing a vector dataset's features in its page: the attribute table (change a value, delete a
// row) and, for point layers, the preview map (add a point, move points). Every change goes
// through POST /api/v2/datasets/{pk}/edits with `base`, the data version the page read; when
// someone changed the data meanwhile the catalogue refuses it (409), and the page says so and
// shows the data as they are now. Lines and polygons are edited in QGIS over WFS-T.

import { api, can } from './api.js';
import { copyButton, confirmDialog, field, fill, h, mount, pointText, WORDS } from './dom.js';
import { formatNumber, load, t } from './i18n.js';

await load('editing');

const WFS = '/geoserver/ows';
const PAGE = 100;          // rows of the attribute table at a time
const MAX_HANDLES = 300;   // points given a handle at once in "Move points"
const MOVE_HINT = t('editing.move_hint');

// A feature's id in a sentence: the reader's digits, no thousands separator.
const idText = (fid) => formatNumber(fid, { useGrouping: false });

// --- the data's state and its changes ---------------------------------------------------------

// A refusal because the data changed since the page read them.
export class StaleEdit extends Error {}

// One dataset's data as the page knows them: its state (data version, feature count, geometry
// type) and the edits made from the page; the parts of the page listen for changes.
export class DatasetData {
  constructor(resource) {
    this.resource = resource;
    this.state = null;
    this.listeners = [];
    this.ready = this.load().catch(() => null);  // the page's parts wait for it before they show
  }

  async load() {
    this.state = (await api(`/api/v2/datasets/${this.resource.pk}/data_state`)).data_state;
    return this.state;
  }

  // Whether the viewer may edit the features here (a vector dataset with data of its own).
  get mayEdit() { return Boolean(this.state?.features_editable) && can(this.resource, 'change_dataset_data'); }
  get isPoints() { return /^(multi)?point/i.test(this.state?.geometry_type || ''); }
  get isMultiPoint() { return /^multipoint/i.test(this.state?.geometry_type || ''); }
  get version() { return this.state?.data_version ?? 0; }

  // A key that changes with the data, for the map's tiles.
  get cacheKey() { return `${this.resource.last_updated || ''}.${this.version}`; }

  // `fn(event)` after every change: {answer} after an edit, {stale: true} after a refusal as stale.
  onChange(fn) { this.listeners.push(fn); }

  async changed(event) {
    await Promise.all(this.listeners.map((fn) => Promise.resolve(fn(event)).catch(() => {})));
  }

  // One edit: {insert, update, delete} as the endpoint takes them. Resolves with its answer once
  // the page shows the new state; StaleEdit when the data changed meanwhile (the page then shows
  // them as they are); an ApiError for any other refusal.
  async edit(changes) {
    const base = this.version;
    let answer;
    try {
      answer = await api(`/api/v2/datasets/${this.resource.pk}/edits`, { method: 'POST', json: { base, ...changes } });
    } catch (error) {
      if (error.status !== 409) throw error;
      const now = error.body?.data_version;
      await this.load().catch(() => {});
      await this.changed({ stale: true });
      throw new StaleEdit(t('editing.stale', { base, now: now ?? this.version }));
    }
    await this.load().catch(() => {});
    await this.changed({ answer });
    return answer;
  }
}

// --- values and their inputs ------------------------------------------------------------------

// The kind of input for a field of the attribute set (its xsd type).
function kindOf(type) {
  const t = String(type || '').replace(/^xsd:/, '').toLowerCase();
  if (['int', 'integer', 'long', 'short', 'byte', 'unsignedint', 'unsignedlong', 'unsignedshort', 'unsignedbyte',
    'nonnegativeinteger', 'positiveinteger', 'negativeinteger', 'nonpositiveinteger'].includes(t)) return 'int';
  if (['double', 'float', 'decimal', 'real'].includes(t)) return 'float';
  if (t === 'boolean') return 'bool';
  if (t === 'date') return 'date';
  if (t === 'datetime') return 'datetime';
  return 'text';
}

// The attribute columns, in the order of the attribute set, with their kinds; properties the set
// does not name come after, as text.
function columnsOf(resource, features) {
  const set = (resource.attribute_set || []).filter((a) => !String(a.attribute_type || '').startsWith('gml:'))
    .slice().sort((a, b) => (a.display_order ?? 0) - (b.display_order ?? 0));
  const columns = set.map((a) => ({ name: a.attribute, kind: kindOf(a.attribute_type) }));
  const known = new Set(columns.map((c) => c.name));
  for (const f of features) {
    for (const key of Object.keys(f.properties || {})) {
      if (!known.has(key)) { known.add(key); columns.push({ name: key, kind: 'text' }); }
    }
  }
  return columns;
}

export function shown(value) {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

// An input for a value of a column, holding `value`.
function inputFor(column, value, attrs = {}) {
  const v = value === null || value === undefined ? '' : value;
  if (column.kind === 'bool') {
    const current = v === '' ? '' : String(Boolean(v) && v !== 'false');
    return h('select', attrs, [['', t('editing.empty_choice')], ['true', t('editing.value_true')], ['false', t('editing.value_false')]]
      .map(([val, label]) => h('option', { value: val, selected: val === current }, label)));
  }
  if (column.kind === 'int') return h('input', { type: 'number', step: '1', value: v, ...attrs });
  if (column.kind === 'float') return h('input', { type: 'number', step: 'any', value: v, ...attrs });
  if (column.kind === 'date') return h('input', { type: 'date', value: String(v).slice(0, 10), ...attrs });
  if (column.kind === 'datetime') {
    const local = String(v).replace(/Z$/, '').replace(/\.\d+$/, '').replace(' ', 'T');
    return h('input', { type: 'datetime-local', step: '1', value: local, ...attrs, dataset: { utc: /Z$/.test(String(v)) ? '1' : '' } });
  }
  return h('input', { type: 'text', value: v, ...attrs });
}

// The value an input holds, as the endpoint takes it ({value} or {error}); an empty input is null.
function valueOf(column, input) {
  const text = input.value;
  if (input.validity?.badInput) {
    return { error: column.kind === 'int' ? t('editing.enter_whole_number', { column: column.name }) : t('editing.enter_number', { column: column.name }) };
  }
  if (text === '') return { value: null };
  if (column.kind === 'bool') return { value: text === 'true' };
  if (column.kind === 'int') {
    const n = Number(text);
    return Number.isInteger(n) ? { value: n } : { error: t('editing.enter_whole_number', { column: column.name }) };
  }
  if (column.kind === 'float') {
    const n = Number(text);
    return Number.isFinite(n) ? { value: n } : { error: t('editing.enter_number', { column: column.name }) };
  }
  if (column.kind === 'datetime') return { value: input.dataset.utc ? `${text}Z` : text };
  return { value: text };
}

// A value as a cell shows it: a boolean as true or false (in words), whatever the service made of it.
function shownAs(column, value) {
  if (column.kind === 'bool' && [true, 1, 'true'].includes(value)) return t('editing.value_true');
  if (column.kind === 'bool' && [false, 0, 'false'].includes(value)) return t('editing.value_false');
  return shown(value);
}

function same(column, before, after) {
  if (before === undefined) before = null;
  if (column.kind === 'bool' && before !== null) before = Boolean(before) && before !== 'false';
  if (column.kind === 'date' && before !== null) before = String(before).slice(0, 10);
  if (column.kind === 'datetime' && before !== null && after !== null) {
    const norm = (s) => String(s).replace(/Z$/, '').replace(/\.0+$/, '').replace(' ', 'T').replace(/^(.{16})$/, '$1:00');
    return norm(before) === norm(after);
  }
  return before === after;
}

function fidOf(feature) {
  const id = String(feature.id ?? '');
  const n = Number(id.slice(id.lastIndexOf('.') + 1));
  return Number.isInteger(n) ? n : null;
}

async function getFeatures(resource, params) {
  const query = new URLSearchParams({ service: 'WFS', version: '2.0.0', request: 'GetFeature', typeNames: resource.alternate,  // i18n: not text
    outputFormat: 'application/json', ...params });
  const response = await fetch(`${WFS}?${query}`, { credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw new Error(t('editing.features_unreadable', { status: response.status }));
  return response.json();
}

// A message beside what it is about: a sentence that things went well, or an error.
function feedback(el) {
  return {
    ok(text) { mount(el, h('p', { class: 'ok-note' }, text)); },
    fail(error) { mount(el, h('p', { class: 'error', role: 'alert' }, error?.message || String(error))); },
    clear() { mount(el); },
  };
}

// --- the attribute table ----------------------------------------------------------------------

export function attributeTable(el, resource, data) {
  // a raster has no features, a remote dataset has them on its remote service only
  if (resource.subtype === 'raster' || resource.subtype === 'remote' || !resource.alternate) return;
  const section = h('section', { class: 'attributes', id: 'attributes' }, h('h2', {}, t('editing.attribute_table')), h('p', { class: 'muted' }, t('editing.loading_features')));
  el.append(section);
  if (!can(resource, 'download_resourcebase')) {
    mount(section, h('h2', {}, t('editing.attribute_table')), h('p', { class: 'muted' }, t('editing.features_for_downloaders')));
    return;
  }
  const messages = h('div', { class: 'edit-feedback', 'aria-live': 'polite' });
  const say = feedback(messages);
  const body = h('div', {}, h('p', { class: 'muted' }, t('editing.loading_features')));
  let start = 0;
  let columns = [];
  let loaded = 0;

  async function load() {
    const turn = ++loaded;
    let found;
    try {
      await data.ready;
      found = await getFeatures(resource, { count: String(PAGE), startIndex: String(start) });
    } catch (error) {
      if (turn === loaded) mount(body, h('p', { class: 'error' }, error.message));
      return;
    }
    if (turn !== loaded) return;
    const features = found.features || [];
    const total = found.numberMatched ?? found.totalFeatures;
    if (!features.length && start > 0 && Number.isFinite(total) && total > 0) {  // the last page emptied
      start = Math.max(0, Math.floor((total - 1) / PAGE) * PAGE);
      await load();
      return;
    }
    columns = columnsOf(resource, features);
    const editable = data.mayEdit;
    mount(body,
      h('p', { class: 'muted count' }, countText(features.length, total, start)),
      editable ? h('p', { class: 'muted small-text' }, t('editing.click_to_change')) : null,
      features.length ? h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': t('editing.attribute_table') },
        h('table', { class: editable ? 'editable' : null },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('editing.id')), columns.map((c) => h('th', { scope: 'col' }, c.name)),
            editable ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('editing.actions'))) : null)),
          h('tbody', {}, features.map((f) => row(f, editable))))) : null,
      pager(total, features.length));
  }

  function countText(n, total, from) {
    if (!n) return t('editing.no_features');
    const known = Number.isFinite(total);
    if (from === 0 && n === total) return t('editing.all_features', { count: n });
    if (from === 0) return known ? t('editing.first_features', { count: n, total }) : t('editing.first_features_of_unknown', { count: n });
    return known ? t('editing.features_range', { from: from + 1, to: from + n, total }) : t('editing.features_range_of_unknown', { from: from + 1, to: from + n });
  }

  function pager(total, n) {
    if (!Number.isFinite(total) || total <= PAGE) return null;
    return h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'secondary small', disabled: start === 0, onclick: () => { start = Math.max(0, start - PAGE); load(); } }, WORDS.previous),
      h('button', { type: 'button', class: 'secondary small', disabled: start + n >= total, onclick: () => { start += PAGE; load(); } }, WORDS.next));
  }

  function row(feature, editable) {
    const fid = fidOf(feature);
    const canEdit = editable && fid !== null;
    return h('tr', { dataset: { fid: fid ?? '' } },
      h('th', { scope: 'row', class: 'fid' }, fid ?? ''),
      columns.map((c) => {
        const value = feature.properties?.[c.name];
        const td = h('td', { dataset: { column: c.name } });
        if (canEdit) td.append(valueButton(td, feature, fid, c, value));
        else td.append(shownAs(c, value));
        return td;
      }),
      canEdit ? h('td', { class: 'row-actions' }, h('button', {
        type: 'button', class: 'link danger-link', 'aria-label': t('editing.delete_feature', { fid: idText(fid) }), dataset: { focus: `delete-${fid}` },
        onclick: () => removeRow(feature, fid),
      }, WORDS.delete)) : null);
  }

  function valueButton(td, feature, fid, column, value) {
    const text = shownAs(column, value);
    return h('button', {
      type: 'button', class: 'cell-value', dataset: { focus: `cell-${fid}-${column.name}` },
      'aria-label': text === '' ? t('editing.change_empty_value', { column: column.name, fid: idText(fid) })
        : t('editing.change_value', { column: column.name, fid: idText(fid), value: text }),
      onclick: () => startEditing(td, feature, fid, column, value),
    }, text);
  }

  function focusCell(fid, name) {
    const found = [...section.querySelectorAll('button.cell-value')].find((b) => b.dataset.focus === `cell-${fid}-${name}`);
    found?.focus();
  }

  function startEditing(td, feature, fid, column, value) {
    const input = inputFor(column, value, { 'aria-label': t('editing.new_value', { column: column.name, fid: idText(fid) }), class: 'cell-input' });
    let finished = false;
    const cancel = (leaving = false) => {
      if (finished) return;
      finished = true;
      mount(td, valueButton(td, feature, fid, column, value));
      if (!leaving) td.querySelector('button')?.focus();
    };
    // Enter saves; leaving the input saves too, once (a refused value then waits there, the
    // focus going where the person went)
    let refused = null;
    const commit = async (leaving = false) => {
      if (finished || (leaving && refused === input.value)) return;
      const read = valueOf(column, input);
      if (read.error) { refused = input.value; say.fail(read.error); if (!leaving) input.focus(); return; }
      if (same(column, value, read.value)) { cancel(leaving); return; }
      finished = true;
      input.disabled = true;
      td.setAttribute('aria-busy', 'true');
      try {
        const answer = await data.edit({ update: [{ id: fid, properties: { [column.name]: read.value } }] });
        const saved = { column: column.name, fid: idText(fid), version: answer.version.number };
        say.ok(read.value === null ? t('editing.saved_empty', saved) : t('editing.saved_value', { ...saved, value: shownAs(column, read.value) }));
        if (!leaving) focusCell(fid, column.name);
      } catch (error) {
        if (error instanceof StaleEdit) { say.fail(error); if (!leaving) focusCell(fid, column.name); return; }
        // refused: the value stays in the input, to be corrected or given up with Escape
        say.fail(error);
        refused = input.value;
        finished = false;
        input.disabled = false;
        td.removeAttribute('aria-busy');
        if (!leaving) input.focus();
      }
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); commit(); }
      else if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); say.clear(); cancel(); }
    });
    input.addEventListener('blur', () => { if (!finished && !input.disabled) commit(true); });
    mount(td, input);
    input.focus();
    input.select?.();
  }

  async function removeRow(feature, fid) {
    const label = columns.find((c) => c.kind === 'text' && feature.properties?.[c.name]);
    const question = label ? t('editing.delete_question_named', { fid: idText(fid), name: shown(feature.properties[label.name]) })
      : t('editing.delete_question', { fid: idText(fid) });
    const yes = await confirmDialog(question, WORDS.delete);
    if (!yes) { section.querySelector(`[data-focus="delete-${fid}"]`)?.focus(); return; }
    try {
      const answer = await data.edit({ delete: [fid] });
      say.ok(t('editing.deleted', { fid: idText(fid), version: answer.version.number }));
    } catch (error) {
      say.fail(error);
    }
    section.querySelector('.table-wrap')?.focus();
  }

  data.onChange(() => load());
  mount(section, h('h2', {}, t('editing.attribute_table')), messages, body);
  load();
}

// --- points on the map ------------------------------------------------------------------------

function wfsAddress(resource) {
  const link = (resource.links || []).find((l) => l.link_type === 'OGC:WFS');
  return link ? link.url.split('?')[0] : `${location.origin}${WFS}`;
}

// What the page says to those who may edit a line or polygon layer: QGIS over WFS-T.
export function qgisNote(resource) {
  const address = wfsAddress(resource);
  return h('div', { class: 'edit-note' },
    h('p', {}, h('strong', {}, t('editing.qgis_title')), ' ', t('editing.qgis_how'), ' ',
      fill(t('editing.qgis_layer'), { layer: h('code', {}, resource.alternate || '') }), ' ', t('editing.qgis_table')),
    h('div', { class: 'copy-row' }, h('span', { class: 'svc' }, 'WFS'),
      h('input', { type: 'text', readonly: true, value: address, 'aria-label': t('editing.wfs_address') }),
      copyButton(address, WORDS.copy, { 'aria-label': t('editing.copy_wfs_address') })));
}

// The tools of a point layer's preview map: "Add point" and "Move points". Returns
// {busy(): whether a tool is on (clicks then do not identify)}.
export function pointTools(el, map, resource, data) {
  let mode = null;
  let draft = null;      // the new point's marker
  let handles = null;    // the layer of draggable points
  const messages = h('div', { class: 'edit-feedback', 'aria-live': 'polite' });
  const say = feedback(messages);
  const form = h('div', { class: 'new-point' });
  const add = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false', onclick: () => setMode(mode === 'add' ? null : 'add') }, t('editing.add_point'));
  const move = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false', onclick: () => setMode(mode === 'move' ? null : 'move') }, t('editing.move_points'));
  const hint = h('p', { class: 'muted small-text tool-hint' });
  el.append(h('div', { class: 'edit-tools', role: 'group', 'aria-label': t('editing.edit_points') }, add, move, hint), messages, form);
  const container = map.getContainer();

  function setMode(next) {
    if (mode === 'add') { map.off('click', place); dropDraft(); }
    if (mode === 'move') { map.off('moveend', showHandles); handles?.remove(); handles = null; }
    mode = next;
    add.setAttribute('aria-pressed', String(mode === 'add'));
    move.setAttribute('aria-pressed', String(mode === 'move'));
    container.classList.toggle('adding', mode === 'add');
    hint.textContent = mode === 'add' ? t('editing.add_hint')
      : mode === 'move' ? MOVE_HINT : '';
    if (mode === 'add') map.on('click', place);
    if (mode === 'move') { map.on('moveend', showHandles); showHandles(); }
  }

  function dropDraft() {
    draft?.remove();
    draft = null;
    mount(form);
  }

  function place(e) {
    const at = e.latlng.wrap();
    if (draft) draft.setLatLng(at);
    else {
      draft = L.marker(at, { icon: handleIcon('new'), draggable: true, keyboard: false }).addTo(map);
      draft.on('dragend', () => renderForm(draft.getLatLng().wrap()));
    }
    renderForm(at);
  }

  function renderForm(at) {
    const columns = columnsOf(resource, []);
    const inputs = columns.map((c) => [c, inputFor(c, null, { name: c.name })]);
    const where = pointText([at.lng, at.lat]);
    const save = h('button', { type: 'submit' }, t('editing.save_point'));
    const box = h('form', { class: 'panel new-point-form', 'aria-label': t('editing.new_point') },
      h('h3', {}, t('editing.new_point')),
      h('p', { class: 'muted small-text' }, t('editing.new_point_at', { where })),
      h('div', { class: 'two' }, inputs.map(([c, input]) => field(c.name, input))),
      h('div', { class: 'actions' }, save, h('button', { type: 'button', class: 'secondary', onclick: () => { dropDraft(); say.clear(); } }, WORDS.cancel)));
    box.addEventListener('submit', async (e) => {
      e.preventDefault();
      const properties = {};
      for (const [c, input] of inputs) {
        const read = valueOf(c, input);
        if (read.error) { say.fail(read.error); input.focus(); return; }
        if (read.value !== null) properties[c.name] = read.value;
      }
      const point = draft.getLatLng().wrap();
      const coordinates = [point.lng, point.lat];
      const geometry = data.isMultiPoint ? { type: 'MultiPoint', coordinates: [coordinates] } : { type: 'Point', coordinates };
      save.disabled = true;
      try {
        const answer = await data.edit({ insert: [{ type: 'Feature', geometry, properties }] });
        dropDraft();
        say.ok(t('editing.point_added', { fid: idText(answer.inserted[0]), version: answer.version.number }));
        add.focus();
      } catch (error) {
        save.disabled = false;
        say.fail(error);
      }
    });
    mount(form, box);
    box.querySelector('input, select')?.focus();
  }

  let asked = 0;
  let dragging = false;
  async function showHandles() {
    if (dragging) return;  // the map pans while a point is dragged to its edge
    const turn = ++asked;
    const b = map.getBounds();
    const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
    const box = [clamp(b.getWest(), -180, 180), clamp(b.getSouth(), -90, 90), clamp(b.getEast(), -180, 180), clamp(b.getNorth(), -90, 90)];
    let found;
    try {
      found = await getFeatures(resource, { bbox: `${box.join(',')},EPSG:4326`, srsName: 'EPSG:4326', count: String(MAX_HANDLES) });
    } catch (error) {
      if (turn === asked) say.fail(error);
      return;
    }
    if (turn !== asked || mode !== 'move') return;
    handles?.remove();
    handles = L.layerGroup().addTo(map);
    const matched = found.numberMatched ?? found.totalFeatures ?? 0;
    if (matched > MAX_HANDLES) {
      hint.textContent = t('editing.too_many_points', { count: matched, max: MAX_HANDLES });
      return;
    }
    hint.textContent = matched ? MOVE_HINT : t('editing.no_point_in_view');
    const label = columnsOf(resource, []).find((c) => c.kind === 'text');
    for (const feature of found.features || []) {
      const fid = fidOf(feature);
      const g = feature.geometry;
      const at = g?.type === 'Point' ? g.coordinates : g?.type === 'MultiPoint' && g.coordinates.length === 1 ? g.coordinates[0] : null;
      if (fid === null || !at) continue;
      const says = label && feature.properties?.[label.name]
        ? t('editing.move_handle_named', { fid: idText(fid), name: shown(feature.properties[label.name]) })
        : t('editing.move_handle', { fid: idText(fid) });
      const marker = L.marker([at[1], at[0]], { icon: handleIcon('move'), draggable: true, keyboard: true, title: says, autoPan: true });
      marker.on('add', () => {
        const icon = marker.getElement();
        if (!icon) return;
        icon.setAttribute('aria-label', says);
        icon.dataset.fid = String(fid);
        icon.addEventListener('keydown', (e) => nudge(e, marker, fid, at));
      });
      marker.on('dragstart', () => { dragging = true; });
      marker.on('dragend', () => { dragging = false; moved(marker, fid, at); });
      marker.addTo(handles);
    }
  }

  // The keyboard's way: each arrow moves the point a few pixels (one with Shift), Enter saves
  // where it is, Escape puts it back.
  const STEPS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  function nudge(e, marker, fid, from) {
    if (STEPS[e.key]) {
      const [dx, dy] = STEPS[e.key];
      const step = e.shiftKey ? 1 : 5;
      const p = map.latLngToContainerPoint(marker.getLatLng());
      marker.setLatLng(map.containerPointToLatLng([p.x + dx * step, p.y + dy * step]));
      marker.pending = true;
    } else if (e.key === 'Enter' && marker.pending) {
      marker.pending = false;
      moved(marker, fid, from);
    } else if (e.key === 'Escape' && marker.pending) {
      marker.pending = false;
      marker.setLatLng([from[1], from[0]]);
    } else return;
    e.preventDefault();
    e.stopPropagation();
  }

  async function moved(marker, fid, from) {
    const to = marker.getLatLng().wrap();
    const coordinates = [to.lng, to.lat];
    const geometry = data.isMultiPoint ? { type: 'MultiPoint', coordinates: [coordinates] } : { type: 'Point', coordinates };
    try {
      const answer = await data.edit({ update: [{ id: fid, properties: {}, geometry }] });
      from.splice(0, 2, to.lng, to.lat);
      say.ok(t('editing.moved', { fid: idText(fid), version: answer.version.number }));
    } catch (error) {
      marker.setLatLng([from[1], from[0]]);
      say.fail(error);
    }
  }

  const stop = (e) => {
    if (e.key !== 'Escape' || !mode || e.defaultPrevented) return;
    const wasAdd = mode === 'add';
    setMode(null);
    (wasAdd ? add : move).focus();
  };
  el.addEventListener('keydown', stop);
  container.addEventListener('keydown', stop);
  data.onChange(() => { if (mode === 'move') return showHandles(); return null; });
  return { busy: () => mode !== null };
}

function handleIcon(kind) {
  return L.divIcon({ className: `point-handle ${kind}`, iconSize: [24, 24], iconAnchor: [12, 12] });
}
