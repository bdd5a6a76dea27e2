// "Take offline": the search page's dialog that puts what the current search finds (text, type,
// keyword, and an area of the map) into one package file for a catalogue with no network. It
// shows the search and the area, a size estimate before anything starts, the export's progress,
// then the file and what was left out of it and why.

import { api } from './api.js';
import { checkbox, degrees, formatBytes, h, WORDS } from './dom.js';
import { load, t } from './i18n.js';
import { runExport } from './pages/packages.js';

await load('offline');

const TYPE_NAMES = { dataset: t('offline.type_datasets'), document: t('offline.type_documents'), map: t('offline.type_maps'), app: t('offline.type_apps') };
// the search page's filters that the package's cut has no field of its own for: they travel in "query"
const OTHER_FILTERS = {
  subtype: t('offline.filter_subtype'), category: t('offline.filter_category'), owner: t('offline.filter_owner'),
  source: t('offline.filter_source'), region: t('offline.filter_region'), from: t('offline.filter_from'), to: t('offline.filter_to'),
};

// [w, s, e, n] as a person reads it: 10.0° W to 30.0° E, 35.0° N to 60.0° N.
const fixed = (box) => t('offline.box', {
  west: degrees(box[0], 'lng', 1), east: degrees(box[2], 'lng', 1), south: degrees(box[1], 'lat', 1), north: degrees(box[3], 'lat', 1),
});

// The export's body (the same names as GET /api/v2/packages/estimate's query) for a search's
// address parameters, an area [w, s, e, n] or null, and whether data is cut to the area.
export function cutOf(params, area, clip, listQuery) {
  const type = params.get('type');
  const keyword = params.get('keyword');
  return {
    q: params.get('q') || null,
    types: type === 'app' ? ['geostory', 'dashboard'] : type ? [type] : [],
    keywords: keyword ? [keyword] : [],
    bbox: area || null,
    ids: [],
    clip: Boolean(area && clip),
    since: null,
    query: listQuery || null,
  };
}

function estimateQuery(cut) {
  const q = new URLSearchParams();
  if (cut.q) q.set('q', cut.q);
  for (const t of cut.types) q.append('types', t);
  for (const k of cut.keywords) q.append('keywords', k);
  if (cut.bbox) q.set('bbox', cut.bbox.join(','));
  q.set('clip', String(cut.clip));
  if (cut.query) q.set('query', cut.query);
  return `?${q}`;
}

// Opens the dialog. `drawn`: the area drawn for the search ([w, s, e, n]) or null; `visible`:
// the map's visible area; `listQuery`: the search's other filters as the resources list takes them.
export function takeOffline({ params, drawn, visible, listQuery, opener }) {
  const titleId = 'offline-title';
  const areaChoices = [];
  if (drawn) areaChoices.push(['drawn', t('offline.area_drawn', { box: fixed(drawn) }), drawn]);
  areaChoices.push(['visible', t('offline.area_visible', { box: fixed(visible) }), visible]);
  areaChoices.push(['none', t('offline.area_none'), null]);
  const startWith = drawn ? 'drawn' : 'none';
  const area = h('fieldset', { class: 'offline-area' }, h('legend', {}, t('offline.area')),
    areaChoices.map(([value, label]) => h('label', { class: 'check' },
      h('input', { type: 'radio', name: 'area', value, checked: value === startWith }), ' ', label)));
  const clipBox = checkbox('clip', t('offline.clip'), false);
  const clipInput = clipBox.querySelector('input');
  const clipHint = h('small', { class: 'block muted', id: 'offline-clip-hint' }, t('offline.clip_hint'));
  clipInput.setAttribute('aria-describedby', 'offline-clip-hint');
  const estimate = h('p', { class: 'offline-estimate', role: 'status', 'aria-live': 'polite' }, t('offline.estimating'));
  const download = h('button', { type: 'submit', class: 'start' }, t('offline.download'));
  const cancel = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, WORDS.cancel);
  const progressBox = h('div', { class: 'offline-progress', 'aria-live': 'polite' });
  const searchItems = [];
  if (params.get('q')) searchItems.push([t('offline.text'), params.get('q')]);
  searchItems.push([t('offline.type'), TYPE_NAMES[params.get('type')] || t('offline.all_types')]);
  if (params.get('keyword')) searchItems.push([t('offline.keyword'), params.get('keyword')]);
  for (const [key, label] of Object.entries(OTHER_FILTERS)) if (params.get(key)) searchItems.push([label, params.get(key)]);
  const form = h('form', { class: 'offline-form', method: 'dialog' },
    h('p', { class: 'muted small-text' }, t('offline.intro')),
    h('h3', {}, t('offline.the_search')),
    h('dl', { class: 'offline-search' }, searchItems.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    area, clipBox, clipHint, estimate,
    h('div', { class: 'actions' }, download, cancel));
  const dialog = h('dialog', { class: 'offline', 'aria-labelledby': titleId },
    h('div', { class: 'dialog-head' }, h('h2', { id: titleId }, t('offline.title')),
      h('button', { type: 'button', class: 'link close', 'aria-label': WORDS.close, onclick: () => dialog.close() }, '×')),
    form, progressBox);

  let turn = 0;
  const current = () => {
    const chosen = form.elements.area.value;
    const box = areaChoices.find(([value]) => value === chosen)?.[2] || null;
    clipInput.disabled = !box;
    return cutOf(params, box, clipInput.checked, listQuery);
  };
  const refresh = async () => {
    const mine = ++turn;
    const cut = current();
    estimate.className = 'offline-estimate';
    estimate.textContent = t('offline.estimating');
    try {
      const found = await api(`/api/v2/packages/estimate${estimateQuery(cut)}`);
      if (mine !== turn) return;
      const n = found.resources ?? 0;
      const parts = [t('offline.estimate', { count: n, size: formatBytes(found.bytes ?? 0) })];
      if (found.left_out) parts.push(t('offline.left_out', { count: found.left_out }));
      estimate.textContent = parts.join(' ');
      download.disabled = n === 0;
      if (n === 0) estimate.textContent = t('offline.nothing');
    } catch (error) {
      if (mine !== turn) return;
      estimate.className = 'offline-estimate error';
      estimate.textContent = t('offline.no_estimate', { message: error.message });
    }
  };
  form.addEventListener('change', refresh);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const cut = current();
    form.hidden = true;
    await runExport(cut, progressBox, () => dialog.close());
  });
  dialog.addEventListener('close', () => { dialog.remove(); opener?.focus(); });
  document.body.append(dialog);
  dialog.showModal();
  form.elements.area[0]?.focus();
  refresh();
  return dialog;
}
