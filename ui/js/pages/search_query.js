// The search page's query: the resources list's parameters for the page's address, and the first
// page of results, asked for as soon as this module runs. search.js imports it before anything
// else, so that the request leaves before the modules that wait for their messages (map.js,
// origin.js...) have them, and travels beside them.

import { api, query } from '../api.js';

export const PAGE_SIZE = 20;
const FIELDS = ['pk', 'title', 'resource_type', 'subtype', 'thumbnail_url', 'owner', 'date', 'abstract', 'll_bbox_polygon', 'detail_url', 'source', 'origin'];
export const KEYS = ['q', 'type', 'subtype', 'category', 'keyword', 'owner', 'group', 'source', 'region', 'from', 'to', 'sort', 'page', 'extent'];
export const FILTER_KEYS = ['type', 'subtype', 'category', 'keyword', 'owner', 'group', 'source', 'region', 'from', 'to', 'sort'];

// The facets the filters offer, by the address's key: the facet's name in the API and the filter
// that selects one of its choices (GeoNode's, as /api/v2/facets/ lists them).
export const FACETS = {
  category: { name: 'category', filter: 'filter{category.identifier.in}' },
  keyword: { name: 'keyword', filter: 'filter{keywords.slug.in}', find: true },
  region: { name: 'region', filter: 'filter{regions.code.in}', find: true },
  owner: { name: 'owner', filter: 'filter{owner.pk.in}', find: true },
  group: { name: 'group', filter: 'filter{group.in}', find: true },
};

// The resources list's parameters for the page's address. `without` leaves out the filters of
// these keys (a facet's counts are those of the query without its own choice).
export function apiParams(params, extra = {}, without = []) {
  const p = { page_size: PAGE_SIZE, page: params.get('page') || 1, 'exclude[]': '*', 'include[]': FIELDS, ...extra };
  const get = (key) => (without.includes(key) ? '' : params.get(key));
  const q = params.get('q');
  if (q) { p.search = q; p.search_fields = ['title', 'abstract']; }
  const type = get('type');
  if (type === 'app') p['filter{resource_type.in}'] = ['geostory', 'dashboard'];
  else if (type) p['filter{resource_type}'] = type;
  // the kind of data (vector, raster) applies to datasets only: with another type it is left out
  const subtype = params.get('type') && params.get('type') !== 'dataset' ? '' : get('subtype');
  if (subtype === 'vector') p['filter{subtype.in}'] = ['vector', 'vector_time'];
  else if (subtype) p['filter{subtype}'] = subtype;
  for (const [key, facet] of Object.entries(FACETS)) if (get(key)) p[facet.filter] = get(key);
  if (get('source')) p['filter{source}'] = get('source');
  if (get('from')) p['filter{date.gte}'] = `${get('from')}T00:00:00Z`;
  if (get('to')) p['filter{date.lte}'] = `${get('to')}T23:59:59Z`;
  if (params.get('extent')) p.extent = params.get('extent');
  p['sort[]'] = params.get('sort') || '-date';
  return p;
}

export function hashParams() {
  return new URLSearchParams(location.hash.split('?')[1] || '');
}

// The first page of results, asked for now when the address is the search page's.
let early = null;
if (/^#?\/?(search)?(\?|$)/.test(location.hash.replace(/^#/, '') || '/')) {
  const params = apiParams(hashParams());
  early = { key: query(params), answer: api('/api/v2/resources', { params }) };
  early.answer.catch(() => {});  // the render reports a failure
}

// The answer for this query: the one asked for as the module loaded when it is the same.
export function resourcesFor(params) {
  const wanted = apiParams(params);
  if (early && early.key === query(wanted)) {
    const { answer } = early;
    early = null;
    return answer;
  }
  early = null;
  return api('/api/v2/resources', { params: wanted });
}
