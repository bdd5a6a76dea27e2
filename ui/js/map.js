// Maps with Leaflet (vendored in ui/vendor/leaflet). The background is the catalogue's own
// basemap, drawn from Natural Earth countries shipped with the app: no tiles come from the
// internet.
//
// The basemap and the catalogue's own datasets come as OGC API tiles (/ogcapi/...): the same
// drawing as the WMS, but the server keeps drawn tiles (a repeated tile costs under a
// millisecond where a WMS GetMap is drawn again) and the browser revalidates them by ETag.
// Datasets of other services (`remote:` layers) are still asked of the WMS, which forwards
// them: they have no tiles here.
//
// A map has a text alternative: its container is named (the caller's aria-label, else "Map") and
// described by the list that says what it shows (`describedBy`, the ids of the results or layers
// list, or of a sentence naming them), and a "Skip the map" link before it takes the keyboard past
// its controls. The map itself stays left to right in every language.

import { h } from './dom.js';
import { load, t } from './i18n.js';

await load('map');

const WMS = '/geoserver/ows';
const TILES = '/ogcapi';
const GRID = 'WebMercatorQuad/{z}/{y}/{x}';  // i18n: not text

export function createMap(element, { interactive = true, describedBy = null } = {}) {
  element.setAttribute('dir', 'ltr');
  if (!element.hasAttribute('aria-label') && !element.hasAttribute('aria-labelledby')) element.setAttribute('aria-label', t('map.label'));
  if (!element.hasAttribute('role')) element.setAttribute('role', 'region');
  if (describedBy) element.setAttribute('aria-describedby', describedBy);
  const map = L.map(element, {
    worldCopyJump: true, minZoom: 1, maxZoom: 18, zoomControl: false,
    scrollWheelZoom: interactive, attributionControl: true,
  });
  L.control.zoom({ zoomInTitle: t('map.zoom_in'), zoomOutTitle: t('map.zoom_out') }).addTo(map);
  map.attributionControl.setPrefix(false);
  L.tileLayer(`${TILES}/map/tiles/${GRID}`, {
    attribution: t('map.basemap_attribution'), className: 'basemap-tiles', maxZoom: 18,
  }).addTo(map);
  skipLink(element);
  map.fitBounds([[-55, -170], [75, 175]]);
  element.leafletMap = map;  // for scripts and tests that need the map an element shows
  return map;
}

// A link before the map, shown when it has the keyboard's focus, that goes on to what follows the
// map (its own controls are many tab stops).
function skipLink(element) {
  if (!element.parentNode) return;
  const link = h('a', { href: '', class: 'skip-map', onclick: (e) => {
    e.preventDefault();
    const after = [...document.querySelectorAll('a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])')]
      .find((el) => !element.contains(el) && el !== link && el.offsetParent !== null
        && (element.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING));
    if (after) after.focus();
    else { document.getElementById('main')?.focus(); }
  } }, t('map.skip'));
  element.before(link);
}

// The tile address of a dataset of this catalogue (alternate `catalogue:<name>`), with a style
// of its own when named; null for any other layer.
export function tileUrl(alternate, style = '') {
  const [workspace, name] = alternate.includes(':') ? alternate.split(':', 2) : ['catalogue', alternate];
  if (workspace !== 'catalogue' || !/^[A-Za-z0-9_]+$/.test(name)) return null;
  const styleName = style ? style.split(':').pop() : '';
  const path = styleName ? `styles/${encodeURIComponent(styleName)}/map/tiles` : 'map/tiles';
  return `${TILES}/collections/${name}/${path}/${GRID}`;
}

// A dataset's layer: OGC API tiles for the catalogue's own datasets, WMS for the others.
// `setParams({ v })` changes the address's version, so that tiles are asked for again (as the
// WMS layer's own setParams does).
export function datasetLayer(alternate, { style = '', cacheKey = '' } = {}) {
  const base = tileUrl(alternate, style);
  if (!base) {
    const options = { layers: alternate, format: 'image/png', transparent: true, version: '1.1.1', className: 'dataset-tiles', maxZoom: 18 };
    if (style) options.styles = style;
    if (cacheKey) options.v = cacheKey;
    return L.tileLayer.wms(WMS, options);
  }
  const url = (v) => (v ? `${base}?v=${encodeURIComponent(v)}` : base);
  const layer = L.tileLayer(url(cacheKey), { className: 'dataset-tiles', maxZoom: 18 });
  layer.setParams = (params) => {
    if (params && 'v' in params) layer.setUrl(url(params.v));
    return layer;
  };
  return layer;
}

// [west, south, east, north] of a GeoJSON polygon (the API's ll_bbox_polygon), or null.
export function boxOf(polygon) {
  const ring = polygon?.coordinates?.[0];
  if (!Array.isArray(ring) || ring.length < 4) return null;
  const xs = ring.map((p) => p[0]), ys = ring.map((p) => p[1]);
  const box = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  return box.every(Number.isFinite) ? box : null;
}

export function boundsOf(box) {
  return L.latLngBounds([box[1], box[0]], [box[3], box[2]]);
}

// The map's view as the API's extent (west,south,east,north), clamped to the world.
export function viewExtent(map) {
  const b = map.getBounds();
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  let west = b.getWest(), east = b.getEast();
  if (east - west >= 360) { west = -180; east = 180; }
  west = clamp(west, -180, 180); east = clamp(east, -180, 180);
  return [west, clamp(b.getSouth(), -90, 90), east, clamp(b.getNorth(), -90, 90)].map((v) => +v.toFixed(5));
}

// Lets a person draw a box with the mouse (or a finger); resolves with [w, s, e, n], or null
// when cancelled with Escape.
export function drawBox(map) {
  return new Promise((resolve) => {
    const container = map.getContainer();
    container.classList.add('drawing');
    map.dragging.disable();
    let start = null, rect = null;
    const finish = (result) => {
      container.classList.remove('drawing');
      map.dragging.enable();
      map.off('mousedown', down); map.off('mousemove', move); map.off('mouseup', up);
      document.removeEventListener('keydown', key);
      if (rect) rect.remove();
      resolve(result);
    };
    const down = (e) => { start = e.latlng; rect = L.rectangle([start, start], { color: '#c0392b', weight: 2, fillOpacity: 0.1 }).addTo(map); };
    const move = (e) => { if (start) rect.setBounds([start, e.latlng]); };
    const up = (e) => {
      if (!start) return;
      const b = L.latLngBounds(start, e.latlng);
      if (b.getNorth() === b.getSouth() || b.getEast() === b.getWest()) { finish(null); return; }
      finish([b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].map((v) => +v.toFixed(5)));
    };
    const key = (e) => { if (e.key === 'Escape') finish(null); };
    map.on('mousedown', down); map.on('mousemove', move); map.on('mouseup', up);
    document.addEventListener('keydown', key);
  });
}
