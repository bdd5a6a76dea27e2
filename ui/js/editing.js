// Editing a vector dataset's features in its page: the attribute table (change a value, delete a
// row) and, for point layers, the preview map (add a point, move points). Every change goes
// through POST /api/v2/datasets/{pk}/edits with `base`, the data version the page read; when
// someone changed the data meanwhile the catalogue refuses it (409), and the page says so and
// shows the data as they are now. Lines and polygons are edited in QGIS over WFS-T.

import { api, can } from './api.js';
import { copyButton, confirmDialog, field, h, mount } from './dom.js';

const WFS = '/geoserver/ows';
const PAGE = 100;          // rows of the attribute table at a time
const MAX_HANDLES = 300;   // points given a handle at once in "Move points"
const MOVE_HINT = 'Drag a point to its new place: it is saved when you let go (or move it with the arrow keys and press Enter). '
  + 'Press “Move points” again or Escape to stop.';

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
      throw new StaleEdit(`Not saved: the data were changed elsewhere (by someone else, or by you in another window) after this page read them: `
        + `they were at version ${base}, they are at version ${now ?? this.version} now. The page now shows the data as they are: check them and make your change again if it is still needed.`);
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
    return h('select', attrs, [['', '(empty)'], ['true', 'true'], ['false', 'false']]
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
  if (input.validity?.badInput) return { error: `${column.name}: ${column.kind === 'int' ? 'enter a whole number' : 'enter a number'}.` };
  if (text === '') return { value: null };
  if (column.kind === 'bool') return { value: text === 'true' };
  if (column.kind === 'int') {
    const n = Number(text);
    return Number.isInteger(n) ? { value: n } : { error: `${column.name}: enter a whole number.` };
  }
  if (column.kind === 'float') {
    const n = Number(text);
    return Number.isFinite(n) ? { value: n } : { error: `${column.name}: enter a number.` };
  }
  if (column.kind === 'datetime') return { value: input.dataset.utc ? `${text}Z` : text };
  return { value: text };
}

// A value as a cell shows it: a boolean as true or false, whatever the service made of it.
function shownAs(column, value) {
  if (column.kind === 'bool' && (value === 0 || value === 1)) return String(Boolean(value));
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
  const query = new URLSearchParams({ service: 'WFS', version: '2.0.0', request: 'GetFeature', typeNames: resource.alternate,
    outputFormat: 'application/json', ...params });
  const response = await fetch(`${WFS}?${query}`, { credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw new Error(`The features could not be read (${response.status}).`);
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
  const section = h('section', { class: 'attributes', id: 'attributes' }, h('h2', {}, 'Attribute table'), h('p', { class: 'muted' }, 'Loading the first features…'));
  el.append(section);
  if (!can(resource, 'download_resourcebase')) {
    mount(section, h('h2', {}, 'Attribute table'), h('p', { class: 'muted' }, 'The features are shown to those who may download this dataset.'));
    return;
  }
  const messages = h('div', { class: 'edit-feedback', 'aria-live': 'polite' });
  const say = feedback(messages);
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading the first features…'));
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
      editable ? h('p', { class: 'muted small-text' }, 'Click a value to change it: Enter saves, Escape cancels.') : null,
      features.length ? h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Attribute table' },
        h('table', { class: editable ? 'editable' : null },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'ID'), columns.map((c) => h('th', { scope: 'col' }, c.name)),
            editable ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')) : null)),
          h('tbody', {}, features.map((f) => row(f, editable))))) : null,
      pager(total, features.length));
  }

  function countText(n, total, from) {
    if (!n) return 'No features.';
    const all = Number.isFinite(total) ? total.toLocaleString() : 'the';
    if (from === 0 && n === total) return n === 1 ? 'The one feature.' : `All ${n.toLocaleString()} features.`;
    if (from === 0) return `The first ${n.toLocaleString()} of ${all} features.`;
    return `Features ${(from + 1).toLocaleString()} to ${(from + n).toLocaleString()} of ${all}.`;
  }

  function pager(total, n) {
    if (!Number.isFinite(total) || total <= PAGE) return null;
    return h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'secondary small', disabled: start === 0, onclick: () => { start = Math.max(0, start - PAGE); load(); } }, '← Previous'),
      h('button', { type: 'button', class: 'secondary small', disabled: start + n >= total, onclick: () => { start += PAGE; load(); } }, 'Next →'));
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
        type: 'button', class: 'link danger-link', 'aria-label': `Delete feature ${fid}`, dataset: { focus: `delete-${fid}` },
        onclick: () => removeRow(feature, fid),
      }, 'Delete')) : null);
  }

  function valueButton(td, feature, fid, column, value) {
    const text = shownAs(column, value);
    return h('button', {
      type: 'button', class: 'cell-value', dataset: { focus: `cell-${fid}-${column.name}` },
      'aria-label': `${column.name} of feature ${fid}: ${text === '' ? 'empty' : text}. Change it`,
      onclick: () => startEditing(td, feature, fid, column, value),
    }, text);
  }

  function focusCell(fid, name) {
    const found = [...section.querySelectorAll('button.cell-value')].find((b) => b.dataset.focus === `cell-${fid}-${name}`);
    found?.focus();
  }

  function startEditing(td, feature, fid, column, value) {
    const input = inputFor(column, value, { 'aria-label': `New ${column.name} of feature ${fid}`, class: 'cell-input' });
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
        say.ok(`Saved: ${column.name} of feature ${fid} is now ${read.value === null ? 'empty' : `“${shown(read.value)}”`} (version ${answer.version.number}).`);
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
    const name = label ? ` (${shown(feature.properties[label.name])})` : '';
    const yes = await confirmDialog(`Delete feature ${fid}${name}? It stays in the history, where a revert can bring it back.`, 'Delete');
    if (!yes) { section.querySelector(`[data-focus="delete-${fid}"]`)?.focus(); return; }
    try {
      const answer = await data.edit({ delete: [fid] });
      say.ok(`Feature ${fid} deleted (version ${answer.version.number}).`);
    } catch (error) {
      say.fail(error);
    }
    section.querySelector('.table-wrap')?.focus();
  }

  data.onChange(() => load());
  mount(section, h('h2', {}, 'Attribute table'), messages, body);
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
    h('p', {}, h('strong', {}, 'Lines and polygons are edited in QGIS. '),
      'In QGIS, add a WFS connection with this address; editing is then allowed for your account ',
      '(give the connection your user name and password). The layer is ', h('code', {}, resource.alternate || ''),
      '. Its values can also be changed in the attribute table below.'),
    h('div', { class: 'copy-row' }, h('span', { class: 'svc' }, 'WFS'),
      h('input', { type: 'text', readonly: true, value: address, 'aria-label': 'WFS address for editing in QGIS' }),
      copyButton(address, 'Copy', { 'aria-label': 'Copy the WFS address for editing in QGIS' })));
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
  const add = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false', onclick: () => setMode(mode === 'add' ? null : 'add') }, 'Add point');
  const move = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false', onclick: () => setMode(mode === 'move' ? null : 'move') }, 'Move points');
  const hint = h('p', { class: 'muted small-text tool-hint' });
  el.append(h('div', { class: 'edit-tools', role: 'group', 'aria-label': 'Edit the points' }, add, move, hint), messages, form);
  const container = map.getContainer();

  function setMode(next) {
    if (mode === 'add') { map.off('click', place); dropDraft(); }
    if (mode === 'move') { map.off('moveend', showHandles); handles?.remove(); handles = null; }
    mode = next;
    add.setAttribute('aria-pressed', String(mode === 'add'));
    move.setAttribute('aria-pressed', String(mode === 'move'));
    container.classList.toggle('adding', mode === 'add');
    hint.textContent = mode === 'add' ? 'Click the map where the new point goes, then fill in its values. Press “Add point” again or Escape to stop.'
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
    const where = `${Math.abs(at.lat).toFixed(5)}° ${at.lat >= 0 ? 'N' : 'S'}, ${Math.abs(at.lng).toFixed(5)}° ${at.lng >= 0 ? 'E' : 'W'}`;
    const save = h('button', { type: 'submit' }, 'Save the point');
    const box = h('form', { class: 'panel new-point-form', 'aria-label': 'New point' },
      h('h3', {}, 'New point'),
      h('p', { class: 'muted small-text' }, `At ${where}. Click elsewhere on the map, or drag the point, to move it.`),
      h('div', { class: 'two' }, inputs.map(([c, input]) => field(c.name, input))),
      h('div', { class: 'actions' }, save, h('button', { type: 'button', class: 'secondary', onclick: () => { dropDraft(); say.clear(); } }, 'Cancel')));
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
        say.ok(`Point ${answer.inserted[0]} added (version ${answer.version.number}). Click the map to add another.`);
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
      hint.textContent = `${matched.toLocaleString()} points are in view: zoom in to move one (at most ${MAX_HANDLES} can be moved at once).`;
      return;
    }
    hint.textContent = matched ? MOVE_HINT
      : 'No point in view: pan or zoom the map to the point to move.';
    const label = columnsOf(resource, []).find((c) => c.kind === 'text');
    for (const feature of found.features || []) {
      const fid = fidOf(feature);
      const g = feature.geometry;
      const at = g?.type === 'Point' ? g.coordinates : g?.type === 'MultiPoint' && g.coordinates.length === 1 ? g.coordinates[0] : null;
      if (fid === null || !at) continue;
      const name = label && feature.properties?.[label.name] ? ` (${shown(feature.properties[label.name])})` : '';
      const says = `Feature ${fid}${name}: drag it, or move it with the arrow keys and press Enter, to move it`;
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
      say.ok(`Feature ${fid} moved (version ${answer.version.number}).`);
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
