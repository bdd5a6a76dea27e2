// The map composer: start from an empty map (or open a saved one), add datasets found by
// search, order them, set their opacity and style, and save the map with its title and abstract,
// through the same API calls a client makes (POST or PATCH /api/v2/maps with maplayers and data).

import { api, can, currentUser } from '../api.js';
import { errorBox, field, h, mount, personName, toast } from '../dom.js';
import { guardLeaving } from '../main.js';
import { layersTopFirst, MapView, savedView, takeDraft } from '../mapview.js';
import { originText } from '../origin.js';
import { load, t } from '../i18n.js';

await load('composer');

const DATASET_FIELDS = ['pk', 'title', 'alternate', 'll_bbox_polygon', 'subtype', 'styles', 'owner', 'source', 'origin'];

// The map configuration stored with the map (`data`): a MapStore-style document whose
// background is the catalogue's own basemap.
function mapConfig(view, layers) {
  const centre = view.map.getCenter();
  return {
    version: 2,
    map: {
      projection: 'EPSG:900913', units: 'm', zoom: view.map.getZoom(),
      center: { x: +centre.lng.toFixed(6), y: +centre.lat.toFixed(6), crs: 'EPSG:4326' },
      layers: [
        { type: 'wms', url: `${location.origin}/geoserver/ows`, name: 'catalogue:basemap', title: 'Basemap (Natural Earth countries)', group: 'background', visibility: true, format: 'image/png' }, // i18n: not text (a stored name)
        ...layers.map((l) => ({ type: 'wms', url: `${location.origin}/geoserver/ows`, name: l.name, title: l.title, visibility: l.visibility, opacity: l.opacity, style: l.style || undefined })),
      ],
    },
  };
}

export async function render(main, ctx) {
  if (!currentUser()) { location.hash = `#/login?next=${encodeURIComponent(ctx.path)}`; return; }
  const pk = ctx.match[1];
  let saved = null;
  if (pk) {
    try { saved = (await api(`/api/v2/maps/${pk}`, { params: { 'include[]': 'data' } })).map; } catch (error) { mount(main, h('section', { class: 'page narrow' }, h('h1', {}, t('composer.cannot_open')), errorBox(error))); return; }
    if (!can(saved, 'change_resourcebase')) { mount(main, h('section', { class: 'page narrow' }, h('h1', {}, saved.title), h('p', { class: 'error' }, t('composer.read_only')))); return; }
  }
  if (!ctx.isCurrent()) return;
  const title = h('input', { name: 'title', required: true, value: saved?.title || '', maxlength: 255 });
  const abstract = h('textarea', { name: 'abstract', rows: 3 }, saved?.abstract && saved.abstract !== 'None' ? saved.abstract : ''); // i18n: not text (GeoNode's empty abstract)
  const saving = h('p', { role: 'status' });
  const mapHolder = h('div');
  const query = h('input', { type: 'search', name: 'q', placeholder: t('composer.find_placeholder'), 'aria-label': t('composer.find_label') });
  const found = h('ul', { class: 'plain found', 'aria-label': t('composer.found') });
  const foundCount = h('p', { class: 'visually-hidden', role: 'status' }); // how many a search found, said to screen readers
  const form = h('form', { class: 'grid-form', 'aria-label': t('composer.form') }, field(t('composer.title'), title), field(t('composer.abstract'), abstract),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, saved ? t('composer.save') : t('composer.save_new')), saving));
  mount(main, h('section', { class: 'page composer' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, t('composer.catalogue')), ' › ', saved ? h('a', { href: `#/map/${saved.pk}` }, saved.title) : t('composer.new_map')),
    h('h1', {}, saved ? t('composer.compose_title', { title: saved.title }) : t('composer.a_new_map')),
    mapHolder,
    h('section', { class: 'panel' }, h('h2', {}, t('composer.add_datasets')),
      h('form', { class: 'searchbar', role: 'search', onsubmit: (e) => { e.preventDefault(); search(); } }, query, h('button', { type: 'submit' }, t('composer.find'))), foundCount, found),
    h('section', { class: 'panel' }, h('h2', {}, t('composer.save_heading')), form)));
  // Unsaved work: any change of the layers, the title or the abstract since the last save. The
  // map page hands over its layers as arranged there (order, opacity, shown or hidden): a change
  // not yet saved.
  let dirty = false;
  const draft = pk ? takeDraft(pk) : null;
  const view = new MapView(mapHolder, { editable: true, onChange: () => { dirty = true; markAdded(); } });
  view.setLayers(draft ? draft.layers : layersTopFirst(saved?.maplayers), draft?.view || savedView(saved?.data));
  dirty = Boolean(draft && JSON.stringify(draft.layers.map(arranged)) !== JSON.stringify(layersTopFirst(saved?.maplayers).map(arranged)));
  for (const input of [title, abstract]) input.addEventListener('input', () => { dirty = true; });
  guardLeaving(() => (dirty ? t('composer.leave') : null));
  const status = h('p', { role: 'status', class: 'muted' });
  if (draft && dirty) status.textContent = t('composer.draft');
  mapHolder.before(status);

  // A dataset is on the map once at most: its Add button says so.
  function onMap(dataset) { return view.layers.some((l) => l.name === dataset.alternate); }
  function markAdded() {
    for (const button of found.querySelectorAll('button[data-alternate]')) {
      const there = view.layers.some((l) => l.name === button.dataset.alternate);
      button.disabled = there;
      button.textContent = there ? t('composer.on_map') : t('composer.add');
      button.setAttribute('aria-label', there ? t('composer.on_map_named', { title: button.dataset.title }) : t('composer.add_named', { title: button.dataset.title }));
    }
  }
  function addLayer(d) {
    if (onMap(d)) { toast(t('composer.already', { title: d.title })); return; }
    view.layers.unshift({ pk: null, name: d.alternate, title: d.title, dataset: d, style: '', visibility: true, opacity: 1, extra_params: {} });
    view.redraw();
    view.zoomToLayers();
    toast(t('composer.added', { title: d.title }));
  }

  async function search() {
    const subtypes = { dataset: t('composer.subtype_dataset'), vector: t('composer.subtype_vector'), raster: t('composer.subtype_raster'), remote: t('composer.subtype_remote'), vector_time: t('composer.subtype_vector_time') };
    const params = { page_size: 10, 'exclude[]': '*', 'include[]': DATASET_FIELDS };
    if (query.value.trim()) { params.search = query.value.trim(); params.search_fields = ['title', 'abstract']; }
    try {
      const data = await api('/api/v2/datasets', { params });
      // owner and origin tell apart datasets of one title (an original, its copies, harvested ones)
      const who = (d) => [personName(d.owner), originText(d)].filter(Boolean).join(' · ');
      mount(found, (data.datasets || []).map((d) => h('li', { class: 'found-item', dataset: { pk: d.pk } }, h('span', {}, d.title), ' ',
        h('span', { class: 'badge light' }, subtypes[d.subtype] || d.subtype || subtypes.dataset), ' ', h('span', { class: 'muted origin', id: `found-${d.pk}` }, who(d)), ' ',
        h('button', { type: 'button', class: 'secondary small', 'aria-label': t('composer.add_named', { title: d.title }), 'aria-describedby': `found-${d.pk}`, dataset: { alternate: d.alternate, title: d.title }, onclick: () => addLayer(d) }, t('composer.add')))));
      if (!(data.datasets || []).length) found.append(h('li', { class: 'muted' }, t('composer.none_found')));
      foundCount.textContent = t('composer.found_count', { count: data.total ?? (data.datasets || []).length });
      markAdded();
    } catch (error) { mount(found, h('li', {}, errorBox(error))); }
  }
  search();

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const maplayers = view.layers.map((l, index) => {
      const order = view.layers.length - 1 - index;  // GeoNode's order: 0 is drawn first, at the bottom
      const item = { name: l.name, order, visibility: l.visibility, opacity: l.opacity, current_style: l.style || null, extra_params: { msId: l.extra_params?.msId || `${l.name}__${order}` } };
      if (l.pk) item.pk = l.pk;
      if (l.dataset?.pk) item.dataset = Number(l.dataset.pk);
      return item;
    });
    const body = { title: title.value.trim(), abstract: abstract.value, maplayers, data: mapConfig(view, view.layers) };
    saving.className = '';
    saving.textContent = t('composer.saving');
    try {
      const answer = saved
        ? await api(`/api/v2/maps/${saved.pk}`, { method: 'PATCH', json: body })
        : await api('/api/v2/maps', { method: 'POST', json: { resource_type: 'map', ...body } });
      const map = answer.map;
      dirty = false;
      toast(t('composer.saved'));
      location.hash = `#/map/${map.pk}`;
    } catch (error) {
      // the refusal is said where the keyboard is taken
      saving.className = 'error';
      saving.textContent = error.message;
      saving.tabIndex = -1;
      saving.focus();
    }
  });
}

// What the composer compares to tell whether the map page changed a map's layers.
function arranged(layer) {
  return [layer.name, layer.visibility, layer.opacity, layer.style || ''];
}
