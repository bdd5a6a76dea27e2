// The page of one resource: what it is, who made it, where it lies, and what can be done with
// it (preview, attribute table, downloads, service addresses for QGIS, the ISO record), and its
// history. A vector dataset's features are edited here by those who may (editing.js).

import { api, can, currentUser } from '../api.js';
import { copyButton, h, licenceName, mount, personName, richText, toast, TYPE_LABELS, typeImage } from '../dom.js';
import { attributeTable, DatasetData, pointTools, qgisNote } from '../editing.js';
import { historySection } from '../history.js';
import { enableIdentify } from '../identify.js';
import { boundsOf, boxOf, createMap, datasetLayer } from '../map.js';
import { layersTopFirst, legendUrl, MapView, savedView, storeDraft } from '../mapview.js';
import { originDetail, originText } from '../origin.js';
import { formatDate, formatNumber, lang, load, t } from '../i18n.js';

await load('detail');

const EDITING = ['change_resourcebase_metadata', 'change_dataset_style', 'change_resourcebase_permissions', 'delete_resourcebase'];

const ENDPOINTS = { dataset: ['datasets', 'dataset'], document: ['documents', 'document'], map: ['maps', 'map'] };
const SERVICES = [['OGC:WMS', 'WMS'], ['OGC:WFS', 'WFS'], ['OGC:WCS', 'WCS']];
const SUBTYPES = {
  vector: t('detail.subtype_vector'), raster: t('detail.subtype_raster'), remote: t('detail.subtype_remote'), vector_time: t('detail.subtype_vector_time'),
  '3dtiles': t('detail.subtype_3dtiles'), image: t('detail.subtype_image'), text: t('detail.subtype_text'), video: t('detail.subtype_video'),
  audio: t('detail.subtype_audio'), archive: t('detail.subtype_archive'), presentation: t('detail.subtype_presentation'), other: t('detail.subtype_other'),
};
const DATE_TYPES = { creation: t('detail.date_creation'), publication: t('detail.date_publication'), revision: t('detail.date_revision') };

// A resource's date with what kind of date it is: “12 Mar 2024 (publication)”.
function datedAs(resource) {
  if (!resource.date_type) return formatDate(resource.date);
  return t('detail.date_with_type', { date: formatDate(resource.date), type: DATE_TYPES[resource.date_type] || resource.date_type });
}

// A message whose {placeholders} are elements: the text around them stays text.
function rich(message, parts) {
  return message.split(/\{(\w+)\}/).map((piece, i) => (i % 2 ? parts[piece] ?? `{${piece}}` : piece));
}

export async function loadResource(type, pk) {
  const [path, key] = ENDPOINTS[type] || ['geoapps', 'geoapp'];
  // a map's saved view is in its configuration (`data`), which is sent only when asked for
  const data = await api(`/api/v2/${path}/${pk}`, type === 'map' ? { params: { 'include[]': 'data' } } : {});
  return data[key];
}

export async function render(main, ctx) {
  const [, type, pk] = ctx.match;
  let resource;
  try {
    resource = await loadResource(type, pk);
  } catch (error) {
    if (!ctx.isCurrent()) return;
    const signIn = !currentUser() && (error.status === 404 || error.status === 401 || error.status === 403);
    mount(main, h('section', { class: 'page narrow' },
      h('h1', {}, error.status === 404 ? t('detail.not_found') : t('detail.cannot_open')),
      h('p', {}, error.message),
      signIn ? h('p', {}, t('detail.may_be_private'), ' ', h('a', { href: `#/login?next=${encodeURIComponent(ctx.path)}` }, t('detail.sign_in_to_see'))) : null,
      h('p', {}, h('a', { href: '#/' }, t('detail.back')))));
    return;
  }
  if (!ctx.isCurrent()) return;
  const preview = h('div', { class: 'preview' });
  const extra = h('div', { class: 'extra' });
  const past = h('div', { class: 'past' });
  mount(main, h('article', { class: 'page detail', dataset: { pk: resource.pk } },
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, t('detail.catalogue')), ' › ', TYPE_LABELS[resource.resource_type] || resource.resource_type),
    header(resource),
    h('div', { class: 'detail-layout' },
      h('div', { class: 'detail-main' }, preview, abstract(resource), extra, past),
      h('aside', { class: 'detail-side' },
        resource.thumbnail_url && (resource.resource_type === 'dataset' || (resource.resource_type === 'document' && !String(resource.mime_type).startsWith('image/')))
          ? h('img', { class: 'thumbnail side-thumb', src: resource.thumbnail_url, alt: t('detail.thumbnail_of', { title: resource.title }) }) : null,
        metadata(resource), resource.resource_type === 'dataset' || resource.resource_type === 'document' ? downloads(resource) : null,
        services(resource), records(resource), h('div', { class: 'publishing' }), h('div', { class: 'linked' })))));
  // a revert shows the resource as it is now: the whole page again, at its history
  const onReverted = async (note) => {
    await render(main, { ...ctx, note });
    main.querySelector('#history-title')?.focus();
  };
  const history = historySection(past, resource, { note: ctx.note, onReverted });
  if (resource.resource_type === 'dataset') {
    const data = new DatasetData(resource);
    datasetPreview(preview, resource, data);
    attributeTable(extra, resource, data);
    data.onChange(() => Promise.all([history.reload(), refreshDetails(main, resource, data)]));
  } else if (resource.resource_type === 'document') {
    documentPreview(preview, resource);
  } else if (resource.resource_type === 'map') {
    const view = new MapView(preview, { identify: true });
    view.setLayers(layersTopFirst(resource.maplayers), savedView(resource.data));
    // the composer opens with the layers as arranged here (order, opacity, shown or hidden)
    main.querySelector('a.compose')?.addEventListener('click', () => storeDraft(resource.pk, view));
  } else {
    preview.append(h('img', { class: 'thumbnail', src: resource.thumbnail_url || typeImage(resource.resource_type), alt: t('detail.thumbnail_of', { title: resource.title }) }));
  }
  linked(main.querySelector('.linked'), resource);
  describeForSearchEngines(resource, ctx);
  if (currentUser()?.is_superuser) {
    import('./publishing.js').then((m) => m.publishPanel(main.querySelector('.publishing'), resource)).catch(() => { /* publishing is a nicety */ });
  }
}

function header(resource) {
  const user = currentUser();
  const actions = h('div', { class: 'actions' });
  if (user) {
    let favorite = Boolean(resource.favorite);
    const button = h('button', { type: 'button', class: 'secondary', 'aria-pressed': String(favorite) });
    const paint = () => { button.textContent = favorite ? t('detail.favorite') : t('detail.add_favorite'); button.setAttribute('aria-pressed', String(favorite)); };
    paint();
    button.addEventListener('click', async () => {
      try {
        await api(`/api/v2/resources/${resource.pk}/favorite`, { method: favorite ? 'DELETE' : 'POST' });
        favorite = !favorite;
        paint();
        toast(favorite ? t('detail.favorite_added') : t('detail.favorite_removed'));
      } catch (error) { toast(error.message, 'error'); }
    });
    actions.append(button);
  }
  if (resource.resource_type === 'map' && can(resource, 'change_resourcebase')) {
    actions.append(h('a', { class: 'button secondary compose', href: `#/map/${resource.pk}/compose` }, t('detail.compose')));
  }
  // the edit page holds a section for each of these (edit.js)
  if (EDITING.some((perm) => can(resource, perm))) {
    actions.append(h('a', { class: 'button', href: `#/${resource.resource_type}/${resource.pk}/edit` }, t('detail.edit')));
  }
  return h('header', { class: 'detail-head' },
    h('div', {},
      h('p', { class: 'meta' }, h('span', { class: `badge ${resource.resource_type}` }, TYPE_LABELS[resource.resource_type] || resource.resource_type),
        resource.subtype ? h('span', { class: 'badge light' }, SUBTYPES[resource.subtype] || resource.subtype) : null,
        resource.is_published === false ? h('span', { class: 'badge warn' }, t('detail.unpublished')) : null),
      h('h1', {}, resource.title || t('detail.untitled')),
      h('p', { class: 'byline' }, rich(t('detail.by'), { name: h('bdi', {}, personName(resource.owner)) }), ' · ', datedAs(resource),
        resource.origin ? h('span', { class: 'origin' }, ' · ', originText(resource)) : null)),
    actions);
}

function abstract(resource) {
  const text = richText(resource.abstract);
  return h('section', { class: 'abstract' }, h('h2', {}, t('detail.about')), text.childNodes.length ? text : h('p', { class: 'muted' }, t('detail.no_abstract')));
}

function row(label, value) {
  if (value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return null;
  return [h('dt', {}, label), h('dd', {}, value)];
}

// A resource's language (ISO 639 code, as GeoNode stores it: "eng") named in the reader's language.
function languageName(code) {
  if (!code) return null;
  try { return new Intl.DisplayNames([lang], { type: 'language' }).of(code) || code; } catch { return code; }
}

// The extent's corners (west, south, east, north) to a thousandth of a degree, in the language's digits.
function extentText(box) {
  const [west, south, east, north] = box.map((v) => formatNumber(v, { minimumFractionDigits: 3, maximumFractionDigits: 3 }));
  return h('span', { dir: 'ltr' }, t('detail.extent_value', { west, south, east, north }));
}

function metadata(resource) {
  const box = boxOf(resource.ll_bbox_polygon);
  const contacts = (resource.poc || []).map(personName).join(', ');
  return h('section', { class: 'metadata' }, h('h2', {}, t('detail.details')), h('dl', {},
    row(t('detail.owner'), personName(resource.owner)),
    row(t('detail.origin'), originDetail(resource)),
    row(t('detail.contact'), contacts),
    row(t('detail.category'), resource.category?.gn_description || resource.category?.identifier),
    row(t('detail.keywords'), (resource.keywords || []).map((k) => h('a', { class: 'tag', href: `#/?keyword=${encodeURIComponent(k.name)}` }, k.name))),
    row(t('detail.regions'), (resource.regions || []).map((r) => r.name).join(', ')),
    row(t('detail.licence'), resource.license?.identifier ? licenceName(resource.license.identifier) : null),
    row(t('detail.attribution'), resource.attribution),
    row(t('detail.constraints'), resource.raw_constraints_other && resource.raw_constraints_other !== 'None' ? resource.raw_constraints_other : null), // i18n: not text (GeoNode's empty value)
    row(t('detail.date'), datedAs(resource)),
    row(t('detail.time_span'), resource.temporal_extent_start ? t('detail.from_to', { start: formatDate(resource.temporal_extent_start), end: formatDate(resource.temporal_extent_end) }) : null),
    row(t('detail.created'), formatDate(resource.created)),
    row(t('detail.updated'), formatDate(resource.last_updated)),
    // a document or map without an extent has no coordinate system worth naming
    row(t('detail.crs'), box || resource.resource_type === 'dataset' ? resource.srid : null),
    row(t('detail.extent'), box ? extentText(box) : null),
    row(t('detail.language'), languageName(resource.language)),
    row(t('detail.identifier'), h('code', { dir: 'ltr' }, resource.uuid))));
}

// Every download the resource has: a dataset's data in each format its links offer (a Shapefile,
// GeoJSON, GML; a GeoTIFF for a raster), a document's file.
const FORMAT_LABELS = { zip: t('detail.format_shapefile'), json: 'GeoJSON', gml: 'GML', tif: 'GeoTIFF', gpkg: 'GeoPackage', csv: 'CSV', kml: 'KML' };

export function downloadLinks(resource) {
  const links = (resource.links || []).filter((l) => l.link_type === 'data' && l.url);
  if (resource.resource_type === 'dataset' && links.length) {
    const name = (resource.alternate || resource.title || 'data').split(':').pop();
    return links.map((l, i) => ({
      url: l.url, default: i === 0, label: l.name && l.name !== 'Download' ? l.name : FORMAT_LABELS[l.extension] || t('detail.the_data'), // i18n: not text ('Download' is the API's link name)
      file: `${name}${l.extension ? `.${l.extension}` : ''}`,
    }));
  }
  return (resource.download_urls || []).map((u, i) => ({ url: u.url, default: i === 0, label: t('detail.download_file'), file: '' }));
}

function downloads(resource) {
  const allowed = can(resource, 'download_resourcebase');
  const found = allowed ? downloadLinks(resource) : [];
  const several = found.length > 1;
  return h('section', { class: 'downloads' }, h('h2', {}, t('detail.download')),
    several ? h('p', { class: 'muted' }, t('detail.formats')) : null,
    found.length
      ? h('ul', { class: 'plain download-list' }, found.map((d) => h('li', {}, h('a', {
        class: `button${d.default ? '' : ' secondary'}`, href: d.url, download: d.file || '',
      }, several ? d.label : resource.resource_type === 'document' ? t('detail.download_file') : t('detail.download_data')))))
      : h('p', { class: 'muted' }, allowed ? t('detail.nothing_to_download') : t('detail.no_download_right')));
}

// The resource's schema.org description in the page's head (a JSON-LD data block, which no
// browser runs as a script), for search engines that render the page; gone when the page changes.
async function describeForSearchEngines(resource, ctx) {
  document.getElementById('schema-org')?.remove();
  let described;
  try {
    described = await api(`/dcat/resources/${encodeURIComponent(resource.uuid)}`, { params: { f: 'schemaorg' } });
  } catch {
    return; // a nicety: the page is whole without it
  }
  if (!ctx.isCurrent()) return;
  document.getElementById('schema-org')?.remove();
  document.head.append(h('script', { type: 'application/ld+json', id: 'schema-org' }, JSON.stringify(described)));
  window.addEventListener('hashchange', () => document.getElementById('schema-org')?.remove(), { once: true });
}

// The metadata records the catalogue writes for every resource (through its CSW, and DCAT-AP),
// and the ISO document uploaded with it, when there was one.
function records(resource) {
  const links = (resource.links || []).filter((l) => l.link_type === 'metadata');
  const named = [['ISO', t('detail.record_iso')], ['Dublin Core', t('detail.record_dc')], ['DCAT', t('detail.record_dcat')], ['ISO (uploaded)', t('detail.record_uploaded')]]; // i18n: not text (the links' names)
  const items = named.map(([name, label]) => [links.find((l) => l.name === name), label]).filter(([link]) => link);
  if (!items.length) return null;
  return h('section', { class: 'records' }, h('h2', {}, t('detail.records')),
    h('ul', { class: 'plain' }, items.map(([link, label]) => h('li', {}, h('a', { href: link.url, target: '_blank', rel: 'noopener' }, label)))));
}

function services(resource) {
  const links = resource.links || [];
  const rows = [];
  // a map has no alternate, a remote dataset's service is its remote: their service link names the layer
  let layer = resource.subtype === 'remote' ? '' : resource.alternate || '';
  const row = (label, value, name = label) => h('div', { class: 'copy-row' }, h('span', { class: 'svc' }, label),
    h('input', { type: 'text', dir: 'ltr', readonly: true, value, 'aria-label': t('detail.service_address', { name }) }),
    copyButton(value, t('detail.copy'), { 'aria-label': t('detail.copy_address', { name }) }));
  for (const [kind, label] of SERVICES) {
    const link = links.find((l) => l.link_type === kind);
    if (!link) continue;
    layer = layer || link.name || '';
    rows.push(row(label, link.url.split('?')[0]));
  }
  if (!rows.length) return null;
  // the same data through the OGC APIs: features (where the WFS is) and map tiles, of this
  // catalogue's own layers (a remote dataset's service is its remote's)
  const openRows = [];
  if (resource.subtype !== 'remote' && links.some((l) => l.link_type === 'OGC:WMS')) {
    const cid = resource.resource_type === 'map' ? `map-${resource.pk}` : (resource.alternate || '').split(':').pop();
    if (cid && links.some((l) => l.link_type === 'OGC:WFS')) openRows.push(row('OGC API', `${location.origin}/ogcapi/`, 'OGC API – Features')); // i18n: not text
    if (cid) openRows.push(row('XYZ', `${location.origin}/ogcapi/collections/${cid}/map/tiles/WebMercatorQuad/{z}/{y}/{x}`, t('detail.xyz_tiles')));
  }
  // the WFS takes edits (WFS-T) from those who may change the data
  const editable = can(resource, 'change_dataset_data') && links.some((l) => l.link_type === 'OGC:WFS')
    && (resource.subtype === 'vector' || resource.subtype === 'vector_time');
  return h('section', { class: 'services' }, h('h2', {}, t('detail.use_in_gis')),
    h('p', { class: 'muted' }, rich(rows.length > 1 ? t('detail.add_connection_ows') : t('detail.add_connection'), { layer: h('code', { dir: 'ltr' }, layer) })), rows,
    openRows.length ? h('p', { class: 'muted' }, openRows.length > 1 ? t('detail.open_standards') : t('detail.xyz_only')) : null,
    openRows,
    editable ? h('p', { class: 'muted small-text wfst' }, t('detail.wfst')) : null);
}

// After an edit of the data: the details (extent, last update) as they are now, and the map's
// tiles drawn again (their address holds the data version, so no cached tile is shown).
async function refreshDetails(main, resource, data) {
  let fresh;
  try { fresh = await loadResource('dataset', resource.pk); } catch { return; }
  Object.assign(data.resource, { last_updated: fresh.last_updated, ll_bbox_polygon: fresh.ll_bbox_polygon });
  main.querySelector('.detail-side .metadata')?.replaceWith(metadata(fresh));
  data.tiles?.setParams({ v: data.cacheKey });
}

function datasetPreview(el, resource, data) {
  // a dataset that came in a package without its data (the user could not download them there)
  if (resource.metadata_only && !(resource.links || []).some((l) => l.link_type === 'OGC:WMS')) {
    el.append(h('p', { class: 'metadata-only note' }, t('detail.metadata_only')));
    return;
  }
  const mapEl = h('div', { class: 'map-canvas preview-map', id: 'preview-map', role: 'region', 'aria-label': t('detail.map_of', { title: resource.title }) });
  el.append(mapEl);
  const map = createMap(mapEl);
  if (resource.alternate) {
    data.tiles = datasetLayer(resource.alternate, { cacheKey: resource.last_updated }).addTo(map);
    let tools = null;
    enableIdentify(map, () => (tools?.busy() ? [] : [{ name: resource.alternate, title: resource.title }]));
    const editing = h('div', { class: 'map-editing' });
    el.append(editing);
    data.ready.then(() => {
      if (!data.mayEdit) return;
      if (data.isPoints) tools = pointTools(editing, map, resource, data);
      else editing.append(qgisNote(resource));
    });
    el.append(h('div', { class: 'map-foot' },
      h('p', { class: 'muted small-text' }, t('detail.click_map')),
      h('figure', { class: 'legend-box' }, h('figcaption', {}, t('detail.legend')),
        h('img', { class: 'legend', src: legendUrl({ name: resource.alternate }), alt: t('detail.legend_of', { title: resource.title }) }))));
  }
  const box = boxOf(resource.ll_bbox_polygon);
  if (box) map.fitBounds(boundsOf(box), { padding: [12, 12], maxZoom: 14 });
}

function documentPreview(el, resource) {
  const mime = resource.mime_type || '';
  const address = resource.href || `/documents/${resource.pk}/link`;
  if (!can(resource, 'download_resourcebase')) {
    el.append(h('img', { class: 'thumbnail', src: resource.thumbnail_url || typeImage('document'), alt: t('detail.thumbnail_of', { title: resource.title }) }));
  } else if (mime.startsWith('image/')) {
    el.append(h('img', { class: 'document-image', src: address, alt: resource.title }));
  } else if (mime === 'application/pdf') {
    el.append(h('iframe', { class: 'document-pdf', src: address, title: t('detail.pdf_of', { title: resource.title }) }));
  } else {
    el.append(h('img', { class: 'thumbnail', src: resource.thumbnail_url || typeImage('document'), alt: t('detail.thumbnail_of', { title: resource.title }) }));
  }
}

async function linked(el, resource) {
  try {
    const data = await api(`/api/v2/resources/${resource.pk}/linked_resources`);
    const items = [...(data.linked_to || []), ...(data.linked_by || [])];
    if (!items.length) return;
    mount(el, h('section', {}, h('h2', {}, t('detail.linked')), h('ul', { class: 'plain' },
      items.map((item) => h('li', {}, h('a', { href: `#/${item.resource_type}/${item.pk}` }, item.title || `#${item.pk}`), ' ',
        h('span', { class: 'muted' }, TYPE_LABELS[item.resource_type] || item.resource_type))))));
  } catch { /* linked resources are a nicety */ }
}
