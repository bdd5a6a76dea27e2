// Where a resource came from, in words, so that a copy, a harvested record or a remote resource
// is told apart from the original it repeats (the API's `source` and `origin` fields).

import { api } from './api.js';
import { h, mount } from './dom.js';

export const SOURCES = [['', 'Any source'], ['local', 'Made here'], ['copy', 'Copies'], ['harvested', 'Harvested'], ['remote', 'Remote']];

function host(url) {
  try { return new URL(url).host; } catch { return ''; }
}

// An address a page may link to: http(s) only.
export function webAddress(url) {
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null;
}

// One line, or '' for what was made here: "Copy of “Roads”", "Copy of “Roads” (deleted)",
// "Copy of “Roads” at other.example.org", "Harvested from Central (central.example.org)",
// "Remote: data.example.org".
export function originText(resource) {
  const o = resource.origin;
  if (!o) return '';
  if (o.kind === 'copy') {
    const what = o.title ? `“${o.title}”` : 'a resource';
    if (o.pk) return `Copy of ${what}`;
    return o.url ? `Copy of ${what} at ${host(o.url) || 'another catalogue'}` : `Copy of ${what} (deleted)`;
  }
  if (o.kind === 'harvested') {
    const where = host(o.remote_url);
    if (o.harvester) return `Harvested from ${o.harvester}${where ? ` (${where})` : ''}`;
    return `Harvested from ${where || 'another catalogue'}`;
  }
  if (o.kind === 'remote') return `Remote: ${host(o.url) || 'its data are elsewhere'}`;
  return '';
}

// Where it came from: the original here is linked when the reader may see it (a list query, which
// answers an empty list rather than a 404 for one they may not), the page elsewhere always.
export function originDetail(resource) {
  const o = resource.origin;
  if (!o) return null;
  const text = originText(resource);
  const elsewhere = webAddress(o.url);
  if (o.kind === 'copy' && o.pk) {
    const el = h('span', { class: 'origin-value' }, text);
    api('/api/v2/resources', { params: { 'filter{pk}': o.pk, 'exclude[]': '*', 'include[]': ['pk', 'resource_type', 'title'] } })
      .then((data) => {
        const original = (data.resources || [])[0];
        mount(el, original ? h('a', { href: `#/${original.resource_type}/${original.pk}` }, text)
          : [text, h('span', { class: 'muted' }, ' (not visible to you)')]);
      })
      .catch(() => { /* the text says it already */ });
    return el;
  }
  if (elsewhere && o.kind !== 'remote') {
    return [text, ': ', h('a', { href: elsewhere, target: '_blank', rel: 'noopener' }, o.kind === 'harvested' ? 'its page there' : 'the original'), ' ↗'];
  }
  return elsewhere ? h('a', { href: elsewhere, target: '_blank', rel: 'noopener' }, text) : text;
}
