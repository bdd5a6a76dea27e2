// "Take offline": the search page's dialog that puts what the current search finds (text, type,
// keyword, and an area of the map) into one package file for a catalogue with no network. It
// shows the search and the area, a size estimate before anything starts, the export's progress,
// then the file and what was left out of it and why.

import { api } from './api.js';
import { checkbox, errorBox, formatBytes, h, mount } from './dom.js';
import { runExport } from './pages/packages.js';

const TYPE_NAMES = { dataset: 'Datasets', document: 'Documents', map: 'Maps', app: 'Apps (stories and dashboards)' };
// the search page's filters that the package's cut has no field of its own for: they travel in "query"
const OTHER_FILTERS = { subtype: 'Kind of data', category: 'Category', owner: 'Owner', source: 'Source', region: 'Region', from: 'From', to: 'To' };

// [w, s, e, n] as a person reads it: 10.0° W to 30.0° E, 35.0° N to 60.0° N.
const degrees = (v, pos, neg) => `${Math.abs(v).toFixed(1)}° ${v < 0 ? neg : pos}`;
const fixed = (box) => `${degrees(box[0], 'E', 'W')} to ${degrees(box[2], 'E', 'W')}, ${degrees(box[1], 'N', 'S')} to ${degrees(box[3], 'N', 'S')}`;

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
  if (drawn) areaChoices.push(['drawn', `The area drawn for this search (${fixed(drawn)})`, drawn]);
  areaChoices.push(['visible', `The map’s visible area (${fixed(visible)})`, visible]);
  areaChoices.push(['none', 'No area: everything the search finds', null]);
  const startWith = drawn ? 'drawn' : 'none';
  const area = h('fieldset', { class: 'offline-area' }, h('legend', {}, 'Area'),
    areaChoices.map(([value, label]) => h('label', { class: 'check' },
      h('input', { type: 'radio', name: 'area', value, checked: value === startWith }), ' ', label)));
  const clipBox = checkbox('clip', 'Cut data to this area', false);
  const clipInput = clipBox.querySelector('input');
  const clipHint = h('small', { class: 'block muted', id: 'offline-clip-hint' },
    'Vector data keeps only the features that touch the area, rasters are cut to it. Unticked, each dataset travels whole.');
  clipInput.setAttribute('aria-describedby', 'offline-clip-hint');
  const estimate = h('p', { class: 'offline-estimate', role: 'status', 'aria-live': 'polite' }, 'Estimating the size…');
  const download = h('button', { type: 'submit', class: 'start' }, 'Download package');
  const cancel = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel');
  const progressBox = h('div', { class: 'offline-progress', 'aria-live': 'polite' });
  const searchItems = [];
  if (params.get('q')) searchItems.push(['Text', params.get('q')]);
  searchItems.push(['Type', TYPE_NAMES[params.get('type')] || 'All types']);
  if (params.get('keyword')) searchItems.push(['Keyword', params.get('keyword')]);
  for (const [key, label] of Object.entries(OTHER_FILTERS)) if (params.get(key)) searchItems.push([label, params.get(key)]);
  const form = h('form', { class: 'offline-form', method: 'dialog' },
    h('p', { class: 'muted small-text' }, 'Everything this search finds that you may see goes into one file (a zip) that a catalogue with no network imports: ',
      'data, documents, maps, metadata, styles and history. Data you may not download travels as metadata only.'),
    h('h3', {}, 'The search'),
    h('dl', { class: 'offline-search' }, searchItems.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    area, clipBox, clipHint, estimate,
    h('div', { class: 'actions' }, download, cancel));
  const dialog = h('dialog', { class: 'offline', 'aria-labelledby': titleId },
    h('div', { class: 'dialog-head' }, h('h2', { id: titleId }, 'Take offline'),
      h('button', { type: 'button', class: 'link close', 'aria-label': 'Close', onclick: () => dialog.close() }, '×')),
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
    estimate.textContent = 'Estimating the size…';
    try {
      const found = await api(`/api/v2/packages/estimate${estimateQuery(cut)}`);
      if (mine !== turn) return;
      const n = found.resources ?? 0;
      const parts = [`${n} resource${n === 1 ? '' : 's'}, about ${formatBytes(found.bytes ?? 0)}.`];
      if (found.left_out) parts.push(` ${found.left_out} will be left out or travel as metadata only (the package’s report says why).`);
      estimate.textContent = parts.join('');
      download.disabled = n === 0;
      if (n === 0) estimate.textContent = 'This search finds nothing you may take offline.';
    } catch (error) {
      if (mine !== turn) return;
      estimate.className = 'offline-estimate error';
      estimate.textContent = `No estimate: ${error.message}`;
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
