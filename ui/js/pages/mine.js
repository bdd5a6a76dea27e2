// My things: what I own, what I marked as favorite, and my uploads still being imported.

import { api, currentUser } from '../api.js';
import { formatDate, h, mount, TYPE_LABELS, typeImage } from '../dom.js';

const FIELDS = ['pk', 'title', 'resource_type', 'thumbnail_url', 'date'];

function list(resources, empty) {
  if (!resources.length) return h('p', { class: 'muted' }, empty);
  return h('ul', { class: 'mini-cards' }, resources.map((r) => h('li', {},
    h('img', { src: r.thumbnail_url || typeImage(r.resource_type), alt: '', width: 64, height: 40 }),
    h('a', { href: `#/${r.resource_type}/${r.pk}` }, r.title || '(untitled)'),
    h('span', { class: 'muted' }, TYPE_LABELS[r.resource_type] || r.resource_type, ' · ', formatDate(r.date)))));
}

export async function render(main, ctx) {
  const user = currentUser();
  if (!user) { location.hash = `#/login?next=${encodeURIComponent('/me')}`; return; }
  const params = { page_size: 50, 'exclude[]': '*', 'include[]': FIELDS, 'sort[]': '-last_updated' };
  const [mine, favorites, running] = await Promise.all([
    api('/api/v2/resources', { params: { ...params, 'filter{owner.username}': user.username } }),
    api('/api/v2/resources/favorites', { params }),
    api('/api/v2/executionrequest', { params: { page_size: 50, 'filter{status.in}': ['ready', 'running'] } }).catch(() => ({ requests: [] })),
  ]);
  if (!ctx.isCurrent()) return;
  const jobs = (running.requests || []).filter((r) => r.user === user.pk || r.user === user.username);
  mount(main, h('section', { class: 'page mine' }, h('h1', {}, 'My things'),
    h('p', {}, h('a', { href: '#/me/tokens' }, 'My tokens'), h('span', { class: 'muted' }, ' (API tokens for QGIS and scripts)')),
    h('section', { class: 'panel' }, h('h2', {}, `My resources (${mine.total})`), list(mine.resources || [], 'You have no resources yet.'),
      h('p', {}, h('a', { href: `#/?owner=${encodeURIComponent(user.username)}` }, 'Search among them'), ' · ', h('a', { href: '#/upload' }, 'Upload more'))),
    h('section', { class: 'panel' }, h('h2', {}, `My favorites (${favorites.total})`), list(favorites.favorites || favorites.resources || [], 'Mark resources with ☆ on their page to find them here.')),
    h('section', { class: 'panel' }, h('h2', {}, 'My uploads in progress'),
      jobs.length ? h('ul', { class: 'plain' }, jobs.map((j) => h('li', {}, j.name || j.func_name, ': ', j.status, j.progress ? ` (${Math.round(j.progress)}%)` : '')))
        : h('p', { class: 'muted' }, 'Nothing is being imported.'))));
}
