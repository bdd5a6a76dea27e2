// Where a resource came from, in words, so that a copy, a harvested record or a remote resource
// is told apart from the original it repeats (the API's `source` and `origin` fields).

import { api } from './api.js';
import { h, mount } from './dom.js';
import { load, t } from './i18n.js';

await load('origin');

export const SOURCES = [['', t('origin.any_source')], ['local', t('origin.made_here')], ['copy', t('origin.copies')],
  ['harvested', t('origin.harvested')], ['remote', t('origin.remote')]];

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
    if (o.pk) return o.title ? t('origin.copy_of', { title: o.title }) : t('origin.copy_of_resource');
    if (o.url) {
      const where = host(o.url) || t('origin.another_catalogue');
      return o.title ? t('origin.copy_of_at', { title: o.title, where }) : t('origin.copy_of_resource_at', { where });
    }
    return o.title ? t('origin.copy_of_deleted', { title: o.title }) : t('origin.copy_of_resource_deleted');
  }
  if (o.kind === 'harvested') {
    const where = host(o.remote_url);
    if (o.harvester) return where ? t('origin.harvested_from_at', { harvester: o.harvester, where }) : t('origin.harvested_from', { where: o.harvester });
    return t('origin.harvested_from', { where: where || t('origin.another_catalogue') });
  }
  if (o.kind === 'remote') return host(o.url) ? t('origin.remote_at', { where: host(o.url) }) : t('origin.remote_elsewhere');
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
          : [text, ' ', h('span', { class: 'muted' }, t('origin.not_visible'))]);
      })
      .catch(() => { /* the text says it already */ });
    return el;
  }
  if (elsewhere && o.kind !== 'remote') {
    const link = h('a', { href: elsewhere, target: '_blank', rel: 'noopener' }, o.kind === 'harvested' ? t('origin.its_page_there') : t('origin.the_original'));
    return [t('origin.text_and_link', { text }), ' ', link, ' ↗'];
  }
  return elsewhere ? h('a', { href: elsewhere, target: '_blank', rel: 'noopener' }, text) : text;
}
