// Browse and search: text, filters, sort and pages, with a map of the results' extents. The
// address holds the whole state (#/?q=...&type=...&page=2&extent=w,s,e,n); the page updates in
// place when only the query changes, so the map keeps its view.

import { api, currentUser, query } from '../api.js';
import { field, formatDate, h, mount, personName, plainText, select, TYPE_LABELS, typeImage } from '../dom.js';
import { go } from '../main.js';
import { boundsOf, boxOf, createMap, drawBox, viewExtent } from '../map.js';
import { originText, SOURCES } from '../origin.js';

const PAGE_SIZE = 20;
const FIELDS = ['pk', 'title', 'resource_type', 'subtype', 'thumbnail_url', 'owner', 'date', 'abstract', 'll_bbox_polygon', 'detail_url', 'source', 'origin'];
const TYPES = [['', 'All types'], ['dataset', 'Datasets'], ['document', 'Documents'], ['map', 'Maps'], ['app', 'Apps']];
const SUBTYPES = [['', 'Vector and raster'], ['vector', 'Vector'], ['raster', 'Raster']];
const SORTS = [['-date', 'Newest first'], ['date', 'Oldest first'], ['title', 'Title A–Z'], ['-title', 'Title Z–A'],
  ['-last_updated', 'Recently updated'], ['-popular_count', 'Most viewed']];
const KEYS = ['q', 'type', 'subtype', 'category', 'keyword', 'owner', 'source', 'region', 'from', 'to', 'sort', 'page', 'extent'];

let view = null;   // the mounted page: its elements, map and the lookups it loaded

export function apiParams(params, extra = {}) {
  const p = { page_size: PAGE_SIZE, page: params.get('page') || 1, 'exclude[]': '*', 'include[]': FIELDS, ...extra };
  const q = params.get('q');
  if (q) { p.search = q; p.search_fields = ['title', 'abstract']; }
  const type = params.get('type');
  if (type === 'app') p['filter{resource_type.in}'] = ['geostory', 'dashboard'];
  else if (type) p['filter{resource_type}'] = type;
  // the kind of data (vector, raster) applies to datasets only: with another type it is left out
  const subtype = type && type !== 'dataset' ? '' : params.get('subtype');
  if (subtype === 'vector') p['filter{subtype.in}'] = ['vector', 'vector_time'];
  else if (subtype) p['filter{subtype}'] = subtype;
  if (params.get('category')) p['filter{category.identifier}'] = params.get('category');
  if (params.get('keyword')) p['filter{keywords.name}'] = params.get('keyword');
  if (params.get('owner')) p['filter{owner.username}'] = params.get('owner');
  if (params.get('source')) p['filter{source}'] = params.get('source');
  if (params.get('region')) p['filter{regions.name}'] = params.get('region');
  if (params.get('from')) p['filter{date.gte}'] = `${params.get('from')}T00:00:00Z`;
  if (params.get('to')) p['filter{date.lte}'] = `${params.get('to')}T23:59:59Z`;
  if (params.get('extent')) p.extent = params.get('extent');
  p['sort[]'] = params.get('sort') || '-date';
  return p;
}

function setParams(changes, { keepPage = false } = {}) {
  const params = new URLSearchParams(location.hash.split('?')[1] || '');
  for (const [key, value] of Object.entries(changes)) {
    if (value === '' || value === null || value === undefined) params.delete(key); else params.set(key, value);
  }
  if (!keepPage) params.delete('page');
  const ordered = new URLSearchParams();
  for (const key of KEYS) if (params.has(key)) ordered.set(key, params.get(key));
  go('/', ordered);
}

export async function render(main, ctx) {
  if (!view || !main.contains(view.root)) view = build(main);
  await update(ctx.params, ctx);
}

function build(main) {
  const form = h('form', { class: 'filters', 'aria-label': 'Filters' });
  const q = h('input', { type: 'search', name: 'q', placeholder: 'Search titles and abstracts', 'aria-label': 'Search text', autocomplete: 'off' });
  const searchForm = h('form', { class: 'searchbar', role: 'search', onsubmit: (e) => { e.preventDefault(); setParams({ q: q.value.trim() }); } },
    q, h('button', { type: 'submit' }, 'Search'));
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const chips = h('div', { class: 'chips' });
  const list = h('ol', { class: 'cards', 'aria-label': 'Results' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const mapEl = h('div', { class: 'map-canvas', id: 'search-map', role: 'region', 'aria-label': 'Map of the results' });
  const areaButtons = h('div', { class: 'map-actions' },
    h('button', { type: 'button', class: 'secondary', onclick: () => setParams({ extent: viewExtent(view.map).join(',') }) }, 'Search this area'),
    h('button', { type: 'button', class: 'secondary', id: 'draw-area', onclick: async (e) => {
      const button = e.currentTarget;
      button.setAttribute('aria-pressed', 'true');
      const box = await drawBox(view.map);
      button.removeAttribute('aria-pressed');
      if (box) setParams({ extent: box.join(',') });
    } }, 'Draw an area'),
    h('button', { type: 'button', class: 'secondary', id: 'take-offline', 'aria-haspopup': 'dialog', hidden: !currentUser(), onclick: (e) => offline(e.currentTarget) }, 'Take offline'));
  const root = h('section', { class: 'search' },
    h('h1', { class: 'visually-hidden' }, 'Browse the catalogue'),
    searchForm,
    h('div', { class: 'search-layout' },
      h('details', { class: 'filter-panel', open: window.matchMedia('(min-width: 900px)').matches },
        h('summary', {}, 'Filters'), form),
      h('div', { class: 'results' }, summary, chips, list, pager),
      h('div', { class: 'mapcol' }, mapEl, areaButtons)));
  mount(main, root);
  const map = createMap(mapEl);
  const extents = L.layerGroup().addTo(map);
  const state = { root, form, q, summary, chips, list, pager, map, extents, footprints: new Map(), lookups: null, fitted: false };
  // the footprint of the card under the pointer, or holding the keyboard's focus, stands out
  const cardOf = (e) => e.target.closest?.('.card');
  for (const [name, on] of [['mouseover', true], ['focusin', true], ['mouseout', false], ['focusout', false]]) {
    list.addEventListener(name, (e) => {
      const item = cardOf(e);
      if (!item || (e.relatedTarget && item.contains(e.relatedTarget))) return;
      highlight(item.dataset.pk, on);
    });
  }
  form.addEventListener('change', () => {
    const data = new FormData(form);
    const changes = {};
    for (const key of ['type', 'subtype', 'category', 'keyword', 'owner', 'source', 'region', 'from', 'to', 'sort']) changes[key] = (data.get(key) || '').trim();
    if (changes.type && changes.type !== 'dataset') changes.subtype = '';  // documents and maps are neither vector nor raster
    setParams(changes);
  });
  form.addEventListener('submit', (e) => e.preventDefault());
  return state;
}

// "Take offline" (offline.js): the current search and area into a package file. The filters the
// package has no field of its own for travel as the resources list's query.
async function offline(opener) {
  const params = new URLSearchParams(location.hash.split('?')[1] || '');
  const box = (params.get('extent') || '').split(',').map(Number);
  const drawn = box.length === 4 && box.every(Number.isFinite) ? box : null;
  const all = apiParams(params);
  const rest = Object.fromEntries(Object.entries(all).filter(([key]) => /^filter\{(subtype|category|owner|source|regions|date)/.test(key)));
  const { takeOffline } = await import('../offline.js');
  takeOffline({ params, drawn, visible: viewExtent(view.map), listQuery: query(rest).slice(1), opener });
}

async function lookups() {
  if (view.lookups) return view.lookups;
  const get = (path, params) => api(path, { params }).catch(() => null);
  const [categories, owners, keywords, regions] = await Promise.all([
    get('/api/v2/categories', { page_size: 100 }),
    get('/api/v2/owners', { page_size: 200 }),
    get('/api/v2/keywords', { page_size: 300 }),
    get('/api/v2/regions', { page_size: 500 }),
  ]);
  view.lookups = {
    categories: categories?.categories || [], owners: owners?.owners || [],
    keywords: keywords?.keywords || [], regions: regions?.regions || [],
  };
  return view.lookups;
}

// The filter form is built once; later searches only set its values, so that the control a
// person just changed keeps the focus.
function renderFilters(params, found) {
  if (!view.form.elements.type) {
    mount(view.form, [
      field('Type', select('type', TYPES, '')),
      field('Kind of data', select('subtype', SUBTYPES, '')),
      field('Category', select('category', [['', 'Any category'], ...found.categories.map((c) => [c.identifier, `${c.gn_description || c.identifier}${c.count ? ` (${c.count})` : ''}`])], '')),
      withList(field('Keyword', h('input', { name: 'keyword', list: 'keyword-list', autocomplete: 'off' })), 'keyword-list', found.keywords.map((k) => k.name)),
      field('Owner', select('owner', [['', 'Anyone'], ...found.owners.map((o) => [o.username, personName(o)])], '')),
      field('Source', select('source', SOURCES, '')),
      withList(field('Region', h('input', { name: 'region', list: 'region-list', autocomplete: 'off' })), 'region-list', found.regions.map((r) => r.name)),
      h('fieldset', { class: 'dates' }, h('legend', {}, 'Date'),
        field('From', h('input', { type: 'date', name: 'from' })),
        field('To', h('input', { type: 'date', name: 'to' }))),
      field('Sort by', select('sort', SORTS, '-date')),
      h('p', {}, h('a', { href: '#/' }, 'Clear all filters')),
    ]);
  }
  const controls = view.form.elements;
  for (const key of ['type', 'subtype', 'category', 'keyword', 'owner', 'source', 'region', 'from', 'to']) controls[key].value = params.get(key) || '';
  controls.sort.value = params.get('sort') || '-date';
  const type = params.get('type') || '';
  controls.subtype.closest('.field').hidden = !(type === '' || type === 'dataset');
}

// A field whose input offers these values (the label names the input itself, not a wrapper).
function withList(fieldEl, id, values) {
  fieldEl.append(h('datalist', { id }, values.map((v) => h('option', { value: v }))));
  return fieldEl;
}

function renderChips(params) {
  const chips = [];
  const labels = { q: 'Text', type: 'Type', subtype: 'Kind', category: 'Category', keyword: 'Keyword', owner: 'Owner', source: 'Source', region: 'Region', from: 'From', to: 'To', extent: 'Area' };
  const type = params.get('type');
  for (const [key, label] of Object.entries(labels)) {
    const value = params.get(key);
    if (!value || (key === 'subtype' && type && type !== 'dataset')) continue;
    const shown = key === 'extent' ? 'drawn on the map' : key === 'source' ? SOURCES.find(([v]) => v === value)?.[1] || value : value;
    chips.push(h('button', { type: 'button', class: 'chip', 'aria-label': `Remove filter ${label}: ${shown}`, onclick: () => setParams({ [key]: '' }) },
      `${label}: ${shown}`, h('span', { 'aria-hidden': 'true' }, ' ×')));
  }
  mount(view.chips, chips);
}

function card(resource) {
  const type = resource.resource_type;
  const href = `#/${type}/${resource.pk}`;
  const abstract = plainText(resource.abstract);
  return h('li', { class: 'card', dataset: { pk: resource.pk } },
    h('a', { href, class: 'thumb', tabindex: '-1', 'aria-hidden': 'true' },
      h('img', { src: resource.thumbnail_url || typeImage(type), alt: '', loading: 'lazy', width: 160, height: 100 })),
    h('div', { class: 'card-body' },
      h('h2', {}, h('a', { href }, resource.title || '(untitled)')),
      h('p', { class: 'meta' },
        h('span', { class: `badge ${type}` }, TYPE_LABELS[type] || type),
        resource.subtype && type === 'dataset' ? h('span', { class: 'badge light' }, resource.subtype.replace('_', ' ')) : null,
        h('span', {}, personName(resource.owner)), h('span', {}, formatDate(resource.date))),
      resource.origin ? h('p', { class: 'meta origin' }, originText(resource)) : null,
      abstract ? h('p', { class: 'snippet' }, abstract.length > 220 ? `${abstract.slice(0, 220)}…` : abstract) : null));
}

function renderPager(params, total, page) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (pages <= 1) { mount(view.pager); return; }
  const link = (n, label, attrs = {}) => h('button', { type: 'button', class: 'page', ...attrs, onclick: () => setParams({ page: n === 1 ? '' : String(n) }, { keepPage: true }) }, label);
  const items = [link(page - 1, '← Previous', { disabled: page <= 1 })];
  const shown = new Set([1, pages, page - 1, page, page + 1].filter((n) => n >= 1 && n <= pages));
  let last = 0;
  for (const n of [...shown].sort((a, b) => a - b)) {
    if (n - last > 1) items.push(h('span', { class: 'gap' }, '…'));
    items.push(link(n, String(n), n === page ? { 'aria-current': 'page' } : {}));
    last = n;
  }
  items.push(link(page + 1, 'Next →', { disabled: page >= pages }));
  mount(view.pager, items);
}

// The footprint of each result. One that covers (nearly) the whole world is drawn as an outline
// only, under the others, so that it hides nothing; the footprint of the card under the pointer
// or the keyboard's focus stands out.
const FOOTPRINT = { color: '#1f6f5c', weight: 1.5, fillOpacity: 0.08 };
const WIDE_FOOTPRINT = { color: '#1f6f5c', weight: 1.5, dashArray: '5 4', fill: false };
const HIGHLIGHT = { color: '#c2410c', weight: 3, fillOpacity: 0.18 };

function isWide(box) {
  return box[2] - box[0] >= 300 || box[3] - box[1] >= 150;
}

export function highlight(pk, on) {
  const rect = view?.footprints.get(String(pk));
  if (!rect) return;
  rect.setStyle(on ? { ...HIGHLIGHT, fill: true } : rect.options.base);
  if (on) rect.bringToFront(); else if (rect.options.wide) rect.bringToBack();
  rect.getElement()?.classList.toggle('highlighted', on);
}

function renderExtents(resources, params) {
  view.extents.clearLayers();
  view.footprints = new Map();
  const all = [];
  for (const r of [...resources].reverse()) {
    const box = boxOf(r.ll_bbox_polygon);
    if (!box) continue;
    const wide = isWide(box);
    const base = wide ? WIDE_FOOTPRINT : FOOTPRINT;
    const rect = L.rectangle(boundsOf(box), { ...base, base, wide, className: `footprint footprint-${r.pk}${wide ? ' wide' : ''}` });
    rect.bindTooltip(r.title || '', { sticky: true });
    rect.on('click', () => go(`/${r.resource_type}/${r.pk}`));
    rect.on('mouseover', () => { view.list.querySelector(`[data-pk="${r.pk}"]`)?.classList.add('hover'); highlight(r.pk, true); });
    rect.on('mouseout', () => { view.list.querySelector(`[data-pk="${r.pk}"]`)?.classList.remove('hover'); highlight(r.pk, false); });
    view.extents.addLayer(rect);
    if (wide) rect.bringToBack();
    view.footprints.set(String(r.pk), rect);
    all.push(boundsOf(box));
  }
  const extent = params.get('extent');
  if (extent && !view.fitted) {
    const box = extent.split(',').map(Number);
    if (box.length === 4 && box.every(Number.isFinite)) view.map.fitBounds(boundsOf(box));
    view.fitted = true;
  }
  if (extent) {
    const box = extent.split(',').map(Number);
    if (box.length === 4 && box.every(Number.isFinite)) {
      view.extents.addLayer(L.rectangle(boundsOf(box), { color: '#c0392b', weight: 2, dashArray: '6 4', fill: false, interactive: false }));
    }
  }
}

// What an empty list says: with filters set, how to widen the search; with none, that the
// catalogue is empty, what it is for, and (to those who may) where to add something.
function emptyState(filtered) {
  if (filtered) {
    return h('li', { class: 'empty' }, 'No resource matches. Try fewer words, another area, or ', h('a', { href: '#/' }, 'clear the filters'), '.');
  }
  const user = currentUser();
  return h('li', { class: 'empty welcome' },
    h('h2', {}, user ? 'Nothing here yet' : 'Nothing is shared with everyone yet'),
    h('p', {}, 'This catalogue lists datasets (Shapefiles, GeoPackages, GeoTIFFs and more), documents and maps, each with ',
      'its metadata, a preview, downloads and the addresses to use it in QGIS or another GIS.'),
    user
      ? h('p', { class: 'actions' }, h('a', { class: 'button', href: '#/upload' }, 'Upload data'), h('a', { class: 'button secondary', href: '#/upload?kind=document' }, 'Upload documents'))
      : h('p', {}, h('a', { href: `#/login?next=${encodeURIComponent('/')}` }, 'Sign in'), ' to see what is shared with you, or to add data.'));
}

async function update(params, ctx) {
  view.q.value = params.get('q') || '';
  view.root.querySelector('#take-offline').hidden = !currentUser();  // signed-in users only
  delete view.root.dataset.loaded;  // set again once these results are shown
  renderChips(params);
  const page = Math.max(1, parseInt(params.get('page') || '1', 10) || 1);
  view.summary.textContent = 'Searching…';
  view.root.setAttribute('aria-busy', 'true');
  const lookupsReady = lookups().then((found) => { if (ctx.isCurrent()) renderFilters(params, found); });
  let data;
  try {
    data = await api('/api/v2/resources', { params: apiParams(params) });
  } catch (error) {
    if (!ctx.isCurrent()) return;
    view.summary.textContent = '';
    mount(view.list, h('li', { class: 'error', role: 'alert' }, error.message));
    mount(view.pager);
    view.root.removeAttribute('aria-busy');
    return;
  }
  if (!ctx.isCurrent()) return;
  const resources = data.resources || [];
  const first = (page - 1) * PAGE_SIZE + 1;
  const filtered = KEYS.some((key) => key !== 'sort' && key !== 'page' && params.get(key));
  view.summary.textContent = data.total === 0 ? (filtered ? 'Nothing found.' : 'No resources yet.')
    : `${first.toLocaleString()}–${(first + resources.length - 1).toLocaleString()} of ${data.total.toLocaleString()} result${data.total === 1 ? '' : 's'}`;
  mount(view.list, resources.map(card));
  if (data.total === 0) view.list.append(emptyState(filtered));
  renderPager(params, data.total, page);
  renderExtents(resources, params);
  view.root.removeAttribute('aria-busy');
  view.root.dataset.loaded = 'true';
  performance.mark('results-shown');  // read by the browser benchmark (bench/ui.py)
  await lookupsReady;
}
