// Identify: a click on a map asks the catalogue's WMS what lies under that point
// (GetFeatureInfo, as JSON) in the layers shown, and opens a popup with their attributes.

import { h } from './dom.js';
import { dir, load, t } from './i18n.js';

await load('identify');

const WMS = '/geoserver/ows';
const MAX_FEATURES = 5;
const MAX_COLUMNS = 15;

// The GetFeatureInfo address for a click at `point` (container pixels) on `map`, asking the
// layers named in `layers` (bottom first, as drawn), in the map's own projection.
export function featureInfoUrl(map, layers, point) {
  const size = map.getSize();
  const bounds = map.getBounds();
  const crs = map.options.crs;
  const sw = crs.project(bounds.getSouthWest());
  const ne = crs.project(bounds.getNorthEast());
  const names = layers.join(',');
  const params = new URLSearchParams({
    service: 'WMS', version: '1.1.1', request: 'GetFeatureInfo', layers: names, query_layers: names, styles: '',  // i18n: not text
    srs: crs.code, bbox: [sw.x, sw.y, ne.x, ne.y].join(','), width: String(size.x), height: String(size.y),
    x: String(Math.round(point.x)), y: String(Math.round(point.y)),
    info_format: 'application/json', feature_count: String(MAX_FEATURES),
  });
  return `${WMS}?${params}`;
}

function value(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

// The popup's content: each feature's attributes as a small table under its layer's title.
export function featureTable(features, titleOf) {
  if (!features.length) return h('p', { class: 'muted identify-none', dir }, t('identify.nothing_here'));
  return h('div', { class: 'identify', dir }, features.map((f) => {
    const layer = String(f.id ?? '').split('.')[0];
    const entries = Object.entries(f.properties || {}).slice(0, MAX_COLUMNS);
    return h('section', { class: 'identify-feature' },
      h('h3', {}, titleOf(layer) || layer || t('identify.feature')),
      entries.length ? h('table', {}, h('tbody', {}, entries.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, value(v))))))
        : h('p', { class: 'muted' }, t('identify.no_attributes')));
  }));
}

// Clicks on `map` identify what `visibleLayers()` returns: [{name, title}], top first.
export function enableIdentify(map, visibleLayers) {
  let asked = 0;
  map.getContainer().classList.add('identifiable');
  map.on('click', async (e) => {
    const layers = visibleLayers().filter((l) => l.name);
    if (!layers.length) return;
    const turn = ++asked;
    const popup = L.popup({ maxWidth: 360, maxHeight: 300, className: 'identify-popup' }).setLatLng(e.latlng)
      .setContent(h('p', { class: 'muted', dir }, t('identify.looking'))).openOn(map);
    const titles = new Map(layers.map((l) => [l.name.split(':').pop(), l.title]));
    try {
      const response = await fetch(featureInfoUrl(map, layers.map((l) => l.name).reverse(), e.containerPoint), { credentials: 'same-origin' });
      if (!response.ok) throw new Error(t('identify.service_error', { status: response.status }));
      const data = await response.json();
      if (turn !== asked) return;
      popup.setContent(featureTable(data.features || [], (layer) => titles.get(layer)));
    } catch (error) {
      if (turn === asked) popup.setContent(h('p', { class: 'error', dir }, error.message || String(error)));
    }
  });
}
