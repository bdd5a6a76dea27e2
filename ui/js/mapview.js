// A map of the catalogue: the basemap, then its layers in order, each drawn by the app's WMS
// with its style and opacity, a panel to show, hide, reorder and fade them, and their legends.
// The map page shows a saved map with it; the composer edits the same list of layers.

import { h, mount, WORDS } from './dom.js';
import { load, t } from './i18n.js';
import { enableIdentify } from './identify.js';
import { boundsOf, boxOf, createMap, datasetLayer } from './map.js';

await load('map');

// One layer as the panel holds it: the API's map layer (`maplayers` item) reduced to what
// drawing needs.
export function fromMapLayer(item) {
  return {
    pk: item.pk, name: item.name, title: item.dataset?.title || item.name, dataset: item.dataset || null,
    style: item.current_style || '', visibility: item.visibility !== false,
    opacity: typeof item.opacity === 'number' ? item.opacity : 1, extra_params: item.extra_params || {},
  };
}

// A map's layers as the panel lists them: the top one first (GeoNode's `order` counts from the
// bottom: 0 is drawn first).
export function layersTopFirst(maplayers) {
  return (maplayers || []).slice().sort((a, b) => b.order - a.order).map(fromMapLayer);
}

export function legendUrl(layer) {
  const params = new URLSearchParams({ service: 'WMS', version: '1.1.1', request: 'GetLegendGraphic', format: 'image/png', layer: layer.name });  // i18n: not text
  if (layer.style) params.set('style', layer.style);
  return `/geoserver/ows?${params}`;
}

// The view a map was saved at ({center: [lat, lng], zoom}), from its configuration (`data`), or null.
export function savedView(data) {
  const map = data?.map;
  const x = Number(map?.center?.x), y = Number(map?.center?.y), zoom = Number(map?.zoom);
  const crs = String(map?.center?.crs || 'EPSG:4326');
  if (![x, y, zoom].every(Number.isFinite) || !/4326|CRS:84/.test(crs)) return null;
  return { center: [y, x], zoom };
}

// What the map page hands to the composer for one map: its layers as arranged there and its view.
const DRAFT_KEY = (pk) => `catalogue.composer.${pk}`;

export function storeDraft(pk, view) {
  const centre = view.map.getCenter();
  const layers = view.layers.map((l) => ({ ...l, box: l.box || null }));
  try {
    sessionStorage.setItem(DRAFT_KEY(pk), JSON.stringify({ layers, view: { center: [centre.lat, centre.lng], zoom: view.map.getZoom() } }));
  } catch { /* storage full or refused: the composer starts from the saved map */ }
}

export function takeDraft(pk) {
  try {
    const text = sessionStorage.getItem(DRAFT_KEY(pk));
    sessionStorage.removeItem(DRAFT_KEY(pk));
    const draft = text ? JSON.parse(text) : null;
    return Array.isArray(draft?.layers) ? draft : null;
  } catch { return null; }
}

export class MapView {
  constructor(element, { editable = false, onChange = null, identify = false } = {}) {
    this.layers = [];
    this.editable = editable;
    this.onChange = onChange;
    this.mapEl = h('div', { class: 'map-canvas map-view', id: 'map-view', role: 'region', 'aria-label': t('map.label') });
    this.panel = h('ol', { class: 'layer-list', id: 'map-view-layers', 'aria-label': t('map.layers_top_first') });
    // the map's text alternative: what it draws, in words; the list beside it is its legend
    this.about = h('p', { class: 'visually-hidden', id: 'map-view-about' });
    mount(element, h('div', { class: 'map-layout' }, this.mapEl,
      h('section', { class: 'layer-panel' }, h('h2', {}, t('map.layers')), this.about, this.panel,
        h('button', { type: 'button', class: 'secondary small', onclick: () => this.zoomToLayers() }, t('map.zoom_to_layers')))));
    this.map = createMap(this.mapEl, { describedBy: 'map-view-about' });
    this.drawn = [];
    if (identify) enableIdentify(this.map, () => this.layers.filter((l) => l.visibility));
  }

  // The layers (top first), and the view to show them at: a saved one, or all of them.
  setLayers(layers, view = null) {
    this.layers = layers;
    this.redraw();
    if (view) this.map.setView(view.center, view.zoom);
    else this.zoomToLayers();
  }

  zoomToLayers() {
    let bounds = null;
    for (const layer of this.layers) {
      const box = boxOf(layer.dataset?.ll_bbox_polygon) || layer.box;
      if (!box) continue;
      bounds = bounds ? bounds.extend(boundsOf(box)) : boundsOf(box);
    }
    if (bounds) this.map.fitBounds(bounds, { padding: [12, 12], maxZoom: 14 });
  }

  redraw() {
    for (const tiles of this.drawn) tiles.remove();
    this.drawn = [];
    // the list holds the top layer first: draw from the bottom up
    [...this.layers].reverse().forEach((layer, index) => {
      if (!layer.visibility || !layer.name) return;
      const tiles = datasetLayer(layer.name, { style: layer.style }).setOpacity(layer.opacity).setZIndex(10 + index).addTo(this.map);
      this.drawn.push(tiles);
    });
    this.renderPanel();
    this.onChange?.(this.layers);
  }

  move(index, by) {
    const to = index + by;
    if (to < 0 || to >= this.layers.length) return;
    const [layer] = this.layers.splice(index, 1);
    this.layers.splice(to, 0, layer);
    this.redraw();
  }

  renderPanel() {
    mount(this.panel, this.layers.map((layer, index) => {
      const id = `layer-${index}`;
      const shown = h('input', { type: 'checkbox', id, checked: layer.visibility, onchange: (e) => { layer.visibility = e.target.checked; this.redraw(); } });
      const opacity = h('input', { type: 'range', min: 0, max: 1, step: 0.05, value: layer.opacity, 'aria-label': t('map.opacity_of', { title: layer.title }),
        onchange: (e) => { layer.opacity = Number(e.target.value); this.redraw(); } });
      const styles = layer.dataset?.styles || [];
      const style = this.editable && styles.length > 1 ? h('select', { 'aria-label': t('map.style_of', { title: layer.title }), onchange: (e) => { layer.style = e.target.value; this.redraw(); } },
        styles.map((s) => h('option', { value: s.name, selected: s.name === layer.style || `${s.workspace}:${s.name}` === layer.style }, s.sld_title || s.name))) : null;
      return h('li', { class: 'layer-item', dataset: { name: layer.name } },
        h('div', { class: 'layer-head' }, shown, h('label', { for: id }, layer.title),
          layer.dataset ? h('a', { href: `#/dataset/${layer.dataset.pk}`, class: 'small-link', 'aria-label': t('map.open_layer', { title: layer.title }) }, '↗') : null),
        h('div', { class: 'layer-tools' }, opacity,
          h('button', { type: 'button', class: 'link', 'aria-label': t('map.move_up', { title: layer.title }), disabled: index === 0, onclick: () => this.move(index, -1) }, '▲'),
          h('button', { type: 'button', class: 'link', 'aria-label': t('map.move_down', { title: layer.title }), disabled: index === this.layers.length - 1, onclick: () => this.move(index, 1) }, '▼'),
          this.editable ? h('button', { type: 'button', class: 'link', 'aria-label': t('map.remove_layer', { title: layer.title }), onclick: () => { this.layers.splice(index, 1); this.redraw(); } }, WORDS.remove) : null),
        style,
        layer.name ? h('img', { class: 'legend', src: legendUrl(layer), alt: t('map.legend_of', { title: layer.title }), loading: 'lazy' }) : null);
    }));
    if (!this.layers.length) this.panel.append(h('li', { class: 'muted' }, this.editable ? t('map.no_layers_yet') : t('map.no_layers')));
    const shown = this.layers.filter((l) => l.visibility).map((l) => l.title);
    this.about.textContent = shown.length
      ? t('map.draws_layers', { count: shown.length, names: new Intl.ListFormat(document.documentElement.lang, { type: 'conjunction' }).format(shown) })
      : t('map.basemap_only');
  }
}
