// Browse and search: text, filters, sort and pages, with a map of the results' extents. The
// address holds the whole state (#/?q=...&type=...&page=2&extent=w,s,e,n); the page updates in
// place when only the query changes, so the map keeps its view.
//
// What comes first is the first page of results: it is asked for as soon as the page's code runs
// (search_query.js, beside the messages), and the map (its tiles) is made only once the results are
// drawn. The filters show how many results each choice would give, from the facets API
// (/api/v2/facets/{name}) with the page's whole query but the filter's own choice: the type's
// counts once the results are shown, the others (categories, keywords, regions, owners, groups)
// only when their part of the filters is opened. The list of results is the map's legend: the
// map is described by it, and each outline on the map is one entry of the list.

import { apiParams, FACETS, FILTER_KEYS, hashParams, KEYS, PAGE_SIZE, resourcesFor } from './search_query.js';
import { api, currentUser, query } from '../api.js';
import { field, h, mount, personName, plainText, select, typeImage } from '../dom.js';
import { formatDate, formatNumber, load, t } from '../i18n.js';
import { go } from '../main.js';
import { boundsOf, boxOf, createMap, drawBox, viewExtent } from '../map.js';
import { originText, SOURCES } from '../origin.js';

export { apiParams };

const FACET_PAGE = 10;

await load('search');

const TYPE_NAMES = { dataset: t('search.type_dataset'), document: t('search.type_document'), map: t('search.type_map'),
  geostory: t('search.type_geostory'), dashboard: t('search.type_dashboard'), geoapp: t('search.type_geoapp') };
const SUBTYPE_NAMES = { vector: t('search.subtype_vector'), vector_time: t('search.subtype_vector_time'), raster: t('search.subtype_raster'),
  remote: t('search.subtype_remote') };
const TYPES = [['', t('search.all_types')], ['dataset', t('search.types_dataset')], ['document', t('search.types_document')],
  ['map', t('search.types_map')], ['app', t('search.types_app')]];
const SUBTYPES = [['', t('search.vector_and_raster')], ['vector', t('search.subtype_vector')], ['raster', t('search.subtype_raster')]];
const SORTS = [['-date', t('search.sort_newest')], ['date', t('search.sort_oldest')], ['title', t('search.sort_title')],
  ['-title', t('search.sort_title_desc')], ['-last_updated', t('search.sort_updated')], ['-popular_count', t('search.sort_popular')]];
const FACET_TEXT = {
  category: { title: t('search.facet_category'), any: t('search.any_category') },
  keyword: { title: t('search.facet_keyword'), any: t('search.any_keyword'), find: t('search.find_keyword') },
  region: { title: t('search.facet_region'), any: t('search.any_region'), find: t('search.find_region') },
  owner: { title: t('search.facet_owner'), any: t('search.any_owner'), find: t('search.find_owner') },
  group: { title: t('search.facet_group'), any: t('search.any_group'), find: t('search.find_group') },
};
const CHIP_NAMES = { q: t('search.chip_text'), type: t('search.chip_type'), subtype: t('search.chip_kind'), category: t('search.chip_category'),
  keyword: t('search.chip_keyword'), owner: t('search.chip_owner'), group: t('search.chip_group'), source: t('search.chip_source'),
  region: t('search.chip_region'), from: t('search.chip_from'), to: t('search.chip_to'), extent: t('search.chip_area') };

let view = null;    // the mounted page: its elements and map
let opened = null;  // the result last opened from the list: it has the focus again on the way back
const facetLabels = Object.fromEntries(Object.keys(FACETS).map((key) => [key, new Map()]));  // key → label, as the facets said
const openFacets = new Set();  // the parts of the filters opened, kept open on the way back
const answers = new Map();     // facet answers by address, during one visit of the page

function setParams(changes, { keepPage = false } = {}) {
  const params = hashParams();
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
  answers.clear();  // counts are asked for again on each visit: the data may have changed meanwhile
  const form = h('form', { class: 'filters', 'aria-label': t('search.filters') });
  const q = h('input', { type: 'search', name: 'q', placeholder: t('search.placeholder'), 'aria-label': t('search.text_label'), autocomplete: 'off' });
  const searchForm = h('form', { class: 'searchbar', role: 'search', onsubmit: (e) => { e.preventDefault(); setParams({ q: q.value.trim() }); } },
    q, h('button', { type: 'submit' }, t('search.submit')));
  const summary = h('p', { class: 'summary', id: 'search-summary', 'aria-live': 'polite' });
  const chips = h('div', { class: 'chips' });
  const list = h('ol', { class: 'cards', id: 'search-results', 'aria-label': t('search.results') });
  const pager = h('nav', { class: 'pager', 'aria-label': t('search.pages') });
  // the map's legend: a sentence on what it draws, and the list itself (aria-details)
  const legend = h('p', { class: 'visually-hidden', id: 'search-map-legend' }, t('search.map_legend'));
  const mapEl = h('div', { class: 'map-canvas', id: 'search-map', role: 'region', 'aria-label': t('search.map_label'),
    'aria-describedby': 'search-map-legend search-summary', 'aria-details': 'search-results' });
  const areaButtons = h('div', { class: 'map-actions' },
    h('button', { type: 'button', class: 'secondary', onclick: () => view.map && setParams({ extent: viewExtent(view.map).join(',') }) }, t('search.this_area')),
    h('button', { type: 'button', class: 'secondary', id: 'draw-area', onclick: async (e) => {
      if (!view.map) return;
      const button = e.currentTarget;
      button.setAttribute('aria-pressed', 'true');
      const box = await drawBox(view.map);
      button.removeAttribute('aria-pressed');
      if (box) setParams({ extent: box.join(',') });
    } }, t('search.draw_area')),
    h('button', { type: 'button', class: 'secondary', id: 'take-offline', 'aria-haspopup': 'dialog', hidden: !currentUser(), onclick: (e) => offline(e.currentTarget) }, t('search.take_offline')));
  const root = h('section', { class: 'search' },
    h('h1', { class: 'visually-hidden' }, t('search.heading')),
    searchForm,
    h('div', { class: 'search-layout' },
      h('details', { class: 'filter-panel', open: window.matchMedia('(min-width: 900px)').matches },
        h('summary', {}, t('search.filters')), form),
      h('div', { class: 'results' }, summary, chips, list, pager),
      h('div', { class: 'mapcol' }, legend, mapEl, areaButtons)));
  mount(main, root);
  const state = { root, form, q, summary, chips, list, pager, mapEl, map: null, extents: null, footprints: new Map(), fitted: false, facets: {} };
  // the footprint of the card under the pointer, or holding the keyboard's focus, stands out
  const cardOf = (e) => e.target.closest?.('.card');
  for (const [name, on] of [['mouseover', true], ['focusin', true], ['mouseout', false], ['focusout', false]]) {
    list.addEventListener(name, (e) => {
      const item = cardOf(e);
      if (!item || (e.relatedTarget && item.contains(e.relatedTarget))) return;
      highlight(item.dataset.pk, on);
    });
  }
  list.addEventListener('click', (e) => { const item = e.target.closest?.('.card a[href]') && cardOf(e); if (item) opened = item.dataset.pk; });
  form.addEventListener('change', (e) => {
    if (e.target.classList.contains('facet-find')) return;  // a facet's own search box
    const data = new FormData(form);
    const changes = {};
    const now = hashParams();
    for (const key of FILTER_KEYS) {
      // a facet whose choices were never shown keeps the address's choice
      changes[key] = key in FACETS && !form.elements[key] ? now.get(key) : (data.get(key) || '').trim();
    }
    if (changes.type && changes.type !== 'dataset') changes.subtype = '';  // documents and maps are neither vector nor raster
    setParams(changes);
  });
  form.addEventListener('submit', (e) => e.preventDefault());
  buildFilters(state);
  return state;
}

// The map, once the first results are drawn: Leaflet's work and the basemap's tiles come after them.
function ensureMap() {
  if (view.map) return;
  const map = createMap(view.mapEl, { describedBy: 'search-map-legend search-summary' });
  view.map = map;
  view.extents = L.layerGroup().addTo(map);
}

// "Take offline" (offline.js): the current search and area into a package file. The filters the
// package has no field of its own for travel as the resources list's query.
async function offline(opener) {
  const params = hashParams();
  const box = (params.get('extent') || '').split(',').map(Number);
  const drawn = box.length === 4 && box.every(Number.isFinite) ? box : null;
  const all = apiParams(params);
  const rest = Object.fromEntries(Object.entries(all).filter(([key]) => /^filter\{(subtype|category|owner|group|source|regions|keywords|date)/.test(key)));
  const { takeOffline } = await import('../offline.js');
  takeOffline({ params, drawn, visible: view.map ? viewExtent(view.map) : [-180, -90, 180, 90], listQuery: query(rest).slice(1), opener });
}

// The filter form, built once; later searches only set its values, so that the control a person
// just changed keeps the focus.
function buildFilters(state) {
  const facetParts = Object.keys(FACETS).map((key) => facetPart(state, key));
  mount(state.form, [
    field(t('search.type'), select('type', TYPES, '')),
    field(t('search.kind'), select('subtype', SUBTYPES, '')),
    ...facetParts,
    field(t('search.source'), select('source', SOURCES, '')),
    h('fieldset', { class: 'dates' }, h('legend', {}, t('search.date')),
      field(t('search.from'), h('input', { type: 'date', name: 'from' })),
      field(t('search.to'), h('input', { type: 'date', name: 'to' }))),
    field(t('search.sort'), select('sort', SORTS, '-date')),
    h('p', {}, h('a', { href: '#/' }, t('search.clear_all'))),
  ]);
}

// One facet's part of the filters: a disclosure whose choices (with their counts) are asked for
// when it is opened, then again as the search changes while it stays open. Its choices are radio
// buttons of the form (the address's key as name); "Any ..." takes the filter off.
function facetPart(state, key) {
  const text = FACET_TEXT[key];
  const chosen = h('span', { class: 'facet-chosen' });
  const status = h('p', { class: 'facet-status', role: 'status' });
  const choices = h('div', { class: 'facet-choices' });
  const more = h('button', { type: 'button', class: 'link facet-more', hidden: true }, t('search.show_more'));
  const find = FACETS[key].find
    ? h('input', { type: 'search', class: 'facet-find', autocomplete: 'off', placeholder: text.find, 'aria-label': text.find })
    : null;
  const part = h('details', { class: 'facet', dataset: { facet: key } },
    h('summary', {}, h('span', { class: 'facet-title' }, text.title), chosen),
    h('fieldset', { class: 'facet-body' }, h('legend', { class: 'visually-hidden' }, text.title), find, choices, status, more));
  const facet = { key, part, chosen, status, choices, more, find, size: FACET_PAGE, asked: null, turn: 0 };
  state.facets[key] = facet;
  part.addEventListener('toggle', () => {
    if (part.open) { openFacets.add(key); loadFacet(facet, hashParams()); } else openFacets.delete(key);
  });
  more.addEventListener('click', () => { facet.size += FACET_PAGE * 2; loadFacet(facet, hashParams(), { keepFocus: true }); });
  if (find) {
    let timer;
    find.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => { facet.size = FACET_PAGE; loadFacet(facet, hashParams()); }, 250); });
    find.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); clearTimeout(timer); loadFacet(facet, hashParams()); } });
  }
  if (openFacets.has(key)) part.open = true;  // reopened on the way back (its toggle loads it)
  return part;
}

// The facet's address for this search: the resources list's filters but the facet's own (`key`
// asks for the topics of these keys alone).
function facetAddress(name, params, without, extra = {}) {
  const p = apiParams(params, {}, without);
  for (const drop of ['page', 'page_size', 'exclude[]', 'include[]', 'sort[]']) delete p[drop];
  return `/api/v2/facets/${name}${query({ ...p, page: 0, ...extra })}`;
}

function askFacet(address) {
  if (!answers.has(address)) {
    const answer = api(address);
    answers.set(address, answer);
    answer.catch(() => answers.delete(address));
  }
  return answers.get(address);
}

async function loadFacet(facet, params, { keepFocus = false } = {}) {
  const { key } = facet;
  const value = params.get(key) || '';
  const address = facetAddress(FACETS[key].name, params, [key],
    { page_size: facet.size, topic_contains: facet.find?.value.trim() || undefined });
  if (address === facet.asked) return;
  const turn = ++facet.turn;
  facet.status.textContent = t('search.facet_loading');
  let found;
  try {
    found = await askFacet(address);
    // the current choice is shown even when it is not among the first: asked for by its key
    const items = found?.topics?.items || [];
    if (value && !items.some((item) => String(item.key) === value)) {
      const chosen = await askFacet(facetAddress(FACETS[key].name, params, [key], { key: value }));
      found = { ...found, topics: { ...found.topics, items: [...items, ...(chosen?.topics?.items || [])] } };
    }
  } catch (error) {
    if (turn !== facet.turn) return;
    facet.status.textContent = t('search.facet_failed', { message: error.message });
    return;
  }
  if (turn !== facet.turn || !view || !view.root.contains(facet.part)) return;
  facet.asked = address;
  const topics = found?.topics || { items: [], total: 0 };
  const items = topics.items || [];
  for (const item of items) facetLabels[key].set(String(item.key), item.label ?? String(item.key));
  drawChoices(facet, items, hashParams().get(key) || '', keepFocus);
  facet.more.hidden = !(topics.total > items.length);
  facet.status.textContent = items.length ? '' : t('search.facet_none');
  renderChips(hashParams());
}

// The choices drawn again only when they are others: otherwise their counts change in place, so
// that the radio button holding the focus keeps it.
function drawChoices(facet, items, value, keepFocus) {
  const keys = ['', ...items.map((item) => String(item.key))];
  const shown = [...facet.choices.querySelectorAll('input[type=radio]')].map((input) => input.value);
  if (shown.join('\u0000') === keys.join('\u0000')) {
    facet.choices.querySelectorAll('.count').forEach((el, i) => { el.textContent = formatNumber(items[i].count ?? 0); });
  } else {
    const focused = facet.choices.contains(document.activeElement) ? document.activeElement.value : null;
    const choice = (key, label, count) => h('label', { class: 'choice' },
      h('input', { type: 'radio', name: facet.key, value: key }),
      h('span', { class: 'choice-label' }, label),
      count === null ? null : h('span', { class: 'count' }, formatNumber(count)));
    mount(facet.choices, choice('', FACET_TEXT[facet.key].any, null),
      items.map((item) => choice(String(item.key), item.label ?? String(item.key), item.count ?? 0)));
    if (focused !== null || keepFocus) {
      const again = facet.choices.querySelector(`input[value="${CSS.escape(focused ?? value)}"]`);
      if (again) again.focus(); else if (keepFocus) facet.more.focus();
    }
  }
  for (const input of facet.choices.querySelectorAll('input[type=radio]')) input.checked = input.value === value;
}

// The type's counts, in its own list of choices ("Datasets (1,234)"): once the results are shown.
async function loadTypeCounts(params) {
  const address = facetAddress('resourcetype', params, ['type', 'subtype'], { page_size: 50 });
  let found;
  try { found = await askFacet(address); } catch { return; }
  if (!view) return;
  const counts = {};
  for (const item of found?.topics?.items || []) counts[item.key] = item.count ?? 0;
  const sum = (keys) => keys.reduce((n, k) => n + (counts[k] || 0), 0);
  const app = ['geostory', 'dashboard', 'geoapp'];
  const of = { '': sum(Object.keys(counts)), dataset: sum(['dataset']), document: sum(['document']), map: sum(['map']), app: sum(app) };
  for (const option of view.form.elements.type.options) {
    const name = TYPES.find(([value]) => value === option.value)?.[1];
    option.textContent = t('search.choice_count', { label: name, count: of[option.value] ?? 0 });
  }
}

function renderFilters(params) {
  const controls = view.form.elements;
  for (const key of ['type', 'subtype', 'source', 'from', 'to']) controls[key].value = params.get(key) || '';
  controls.sort.value = params.get('sort') || '-date';
  const type = params.get('type') || '';
  controls.subtype.closest('.field').hidden = !(type === '' || type === 'dataset');
  for (const facet of Object.values(view.facets)) {
    const value = params.get(facet.key) || '';
    for (const input of facet.choices.querySelectorAll('input[type=radio]')) input.checked = input.value === value;
    facet.chosen.textContent = value ? facetLabels[facet.key].get(value) || value : '';
  }
}

function chipValue(key, value) {
  if (key === 'extent') return t('search.drawn_on_map');
  if (key === 'source') return SOURCES.find(([v]) => v === value)?.[1] || value;
  if (key === 'type') return TYPES.find(([v]) => v === value)?.[1] || value;
  if (key === 'subtype') return SUBTYPES.find(([v]) => v === value)?.[1] || value;
  if (key in FACETS) return facetLabels[key].get(value) || value;
  if (key === 'from' || key === 'to') return formatDate(`${value}T12:00:00`);
  return value;
}

function renderChips(params) {
  if (!view) return;
  const chips = [];
  const type = params.get('type');
  for (const [key, name] of Object.entries(CHIP_NAMES)) {
    const value = params.get(key);
    if (!value || (key === 'subtype' && type && type !== 'dataset')) continue;
    const shown = t('search.chip', { name, value: chipValue(key, value) });
    chips.push(h('button', { type: 'button', class: 'chip', dataset: { key }, 'aria-label': t('search.chip_remove', { chip: shown }), onclick: removeChip },
      shown, h('span', { 'aria-hidden': 'true' }, ' ×')));
  }
  const focused = view.chips.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  mount(view.chips, chips);
  if (focused) view.chips.querySelector(`[data-key="${focused}"]`)?.focus();
}

// A chip takes its filter off; the keyboard's focus goes to the chip beside it, else to the search box.
function removeChip(e) {
  const chip = e.currentTarget;
  const key = chip.dataset.key;
  if (chip === document.activeElement) (chip.nextElementSibling || chip.previousElementSibling || view.q).focus();
  setParams({ [key]: '' });
}

// The labels of the facet choices in the address that no facet has named yet (an address shared
// or bookmarked): the facet is asked for that key alone.
async function nameChosen(params) {
  for (const key of Object.keys(FACETS)) {
    const value = params.get(key);
    if (!value || facetLabels[key].has(value)) continue;
    try {
      const found = await askFacet(facetAddress(FACETS[key].name, params, [key], { key: value }));
      const item = (found?.topics?.items || []).find((i) => String(i.key) === value);
      if (item) facetLabels[key].set(value, item.label ?? value);
    } catch { continue; }
  }
  if (!view) return;
  renderChips(hashParams());
  renderFilters(hashParams());
}

function card(resource, onMap) {
  const type = resource.resource_type;
  const href = `#/${type}/${resource.pk}`;
  const abstract = plainText(resource.abstract);
  const titleId = `result-${resource.pk}`;
  return h('li', { class: 'card', dataset: { pk: resource.pk } },
    h('a', { href, class: 'thumb', tabindex: '-1', 'aria-hidden': 'true' },
      h('img', { src: resource.thumbnail_url || typeImage(type), alt: '', loading: 'lazy', width: 160, height: 100 })),
    h('div', { class: 'card-body' },
      h('h2', { id: titleId }, h('a', { href }, resource.title || t('search.untitled'))),
      h('p', { class: 'meta' },
        h('span', { class: `badge ${type}` }, TYPE_NAMES[type] || type),
        resource.subtype && type === 'dataset' ? h('span', { class: 'badge light' }, SUBTYPE_NAMES[resource.subtype] || resource.subtype) : null,
        h('span', {}, personName(resource.owner)), h('span', {}, formatDate(resource.date)),
        onMap ? null : h('span', { class: 'not-on-map' }, t('search.not_on_map'))),
      resource.origin ? h('p', { class: 'meta origin' }, originText(resource)) : null,
      abstract ? h('p', { class: 'snippet' }, abstract.length > 220 ? `${abstract.slice(0, 220)}…` : abstract) : null));
}

function renderPager(params, total, page) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (pages <= 1) { mount(view.pager); return; }
  const link = (n, label, attrs = {}) => h('button', { type: 'button', class: 'page', ...attrs, onclick: () => setParams({ page: n === 1 ? '' : String(n) }, { keepPage: true }) }, label);
  const items = [link(page - 1, t('search.previous'), { disabled: page <= 1 })];
  const shown = new Set([1, pages, page - 1, page, page + 1].filter((n) => n >= 1 && n <= pages));
  let last = 0;
  for (const n of [...shown].sort((a, b) => a - b)) {
    if (n - last > 1) items.push(h('span', { class: 'gap' }, '…'));
    items.push(link(n, formatNumber(n), { 'aria-label': t('search.page_n', { n }), ...(n === page ? { 'aria-current': 'page' } : {}) }));
    last = n;
  }
  items.push(link(page + 1, t('search.next'), { disabled: page >= pages }));
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

// Each footprint is one entry of the list (it carries the result's id, data-pk, as the card does):
// the list, not the drawing, is what a screen reader reads.
function renderExtents(resources, params) {
  view.extents.clearLayers();
  view.footprints = new Map();
  for (const r of [...resources].reverse()) {
    const box = boxOf(r.ll_bbox_polygon);
    if (!box) continue;
    const wide = isWide(box);
    const base = wide ? WIDE_FOOTPRINT : FOOTPRINT;
    const rect = L.rectangle(boundsOf(box), { ...base, base, wide, className: `footprint footprint-${r.pk}${wide ? ' wide' : ''}` });
    rect.bindTooltip(r.title || t('search.untitled'), { sticky: true });
    rect.on('click', () => { opened = String(r.pk); go(`/${r.resource_type}/${r.pk}`); });
    rect.on('mouseover', () => { view.list.querySelector(`[data-pk="${r.pk}"]`)?.classList.add('hover'); highlight(r.pk, true); });
    rect.on('mouseout', () => { view.list.querySelector(`[data-pk="${r.pk}"]`)?.classList.remove('hover'); highlight(r.pk, false); });
    rect.on('add', () => { if (rect.getElement()) rect.getElement().dataset.pk = String(r.pk); });
    view.extents.addLayer(rect);
    if (wide) rect.bringToBack();
    view.footprints.set(String(r.pk), rect);
  }
  const extent = params.get('extent');
  const box = extent ? extent.split(',').map(Number) : null;
  const valid = box && box.length === 4 && box.every(Number.isFinite);
  if (valid && !view.fitted) view.map.fitBounds(boundsOf(box));
  if (extent) view.fitted = true;
  if (valid) view.extents.addLayer(L.rectangle(boundsOf(box), { color: '#c0392b', weight: 2, dashArray: '6 4', fill: false, interactive: false }));
}

// What an empty list says: with filters set, how to widen the search; with none, that the
// catalogue is empty, what it is for, and (to those who may) where to add something.
function emptyState(filtered) {
  if (filtered) {
    return h('li', { class: 'empty' }, t('search.none_match'), ' ', h('a', { href: '#/' }, t('search.clear_filters')));
  }
  const user = currentUser();
  return h('li', { class: 'empty welcome' },
    h('h2', {}, user ? t('search.empty_title_member') : t('search.empty_title')),
    h('p', {}, t('search.empty_about')),
    user
      ? h('p', { class: 'actions' }, h('a', { class: 'button', href: '#/upload' }, t('search.upload_data')), h('a', { class: 'button secondary', href: '#/upload?kind=document' }, t('search.upload_documents')))
      : h('p', {}, h('a', { href: `#/login?next=${encodeURIComponent('/')}` }, t('search.sign_in')), ' ', t('search.sign_in_why')));
}

async function update(params, ctx) {
  view.q.value = params.get('q') || '';
  view.root.querySelector('#take-offline').hidden = !currentUser();  // signed-in users only
  delete view.root.dataset.loaded;  // set again once these results are shown
  renderChips(params);
  renderFilters(params);
  const page = Math.max(1, parseInt(params.get('page') || '1', 10) || 1);
  view.summary.textContent = t('search.searching');
  view.root.setAttribute('aria-busy', 'true');
  let data;
  try {
    data = await resourcesFor(params);
  } catch (error) {
    if (!ctx.isCurrent()) return;
    view.summary.textContent = '';
    mount(view.list, h('li', { class: 'error', role: 'alert' }, t('search.failed'), ' ', error.message));
    mount(view.pager);
    view.root.removeAttribute('aria-busy');
    return;
  }
  if (!ctx.isCurrent()) return;
  const resources = data.resources || [];
  const first = (page - 1) * PAGE_SIZE + 1;
  const filtered = KEYS.some((key) => key !== 'sort' && key !== 'page' && params.get(key));
  view.summary.textContent = data.total === 0 ? (filtered ? t('search.nothing_found') : t('search.no_resources'))
    : t('search.summary', { first, last: first + resources.length - 1, total: data.total, count: data.total });
  mount(view.list, resources.map((r) => card(r, Boolean(boxOf(r.ll_bbox_polygon)))));
  if (data.total === 0) view.list.append(emptyState(filtered));
  renderPager(params, data.total, page);
  performance.mark('results-shown');  // read by the browser benchmark (bench/ui.py)
  // back from a result opened here: its link has the focus again
  if (opened !== null) {
    view.list.querySelector(`.card[data-pk="${CSS.escape(opened)}"] h2 a`)?.focus();
    opened = null;
  }
  // once the results are painted: the map and its footprints, then the counts of the filters
  await new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve)); setTimeout(resolve, 100); });
  if (!ctx.isCurrent() || !view) return;
  ensureMap();
  renderExtents(resources, params);
  view.root.removeAttribute('aria-busy');
  view.root.dataset.loaded = 'true';  // what tests and the benchmark wait for
  loadTypeCounts(params);
  for (const facet of Object.values(view.facets)) if (facet.part.open) loadFacet(facet, params);
  nameChosen(params);
}
