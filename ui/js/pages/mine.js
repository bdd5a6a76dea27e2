// My things: what I own, what I marked as favorite, and my uploads still being imported.

import { api, currentUser } from '../api.js';
import { h, mount, TYPE_LABELS, typeImage } from '../dom.js';
import { formatDate, formatNumber, load, t } from '../i18n.js';

await load('mine');

const FIELDS = ['pk', 'title', 'resource_type', 'thumbnail_url', 'date'];

function list(resources, empty) {
  if (!resources.length) return h('p', { class: 'muted' }, empty);
  return h('ul', { class: 'mini-cards' }, resources.map((r) => h('li', {},
    h('img', { src: r.thumbnail_url || typeImage(r.resource_type), alt: '', width: 64, height: 40 }),
    h('a', { href: `#/${r.resource_type}/${r.pk}` }, r.title || t('mine.untitled')),
    h('span', { class: 'muted' }, TYPE_LABELS[r.resource_type] || r.resource_type, ' · ', formatDate(r.date)))));
}

function job(j) {
  const states = { ready: t('mine.job_ready'), running: t('mine.job_running') };
  const state = states[j.status] || j.status;
  const line = j.progress ? t('mine.job_progress', { name: j.name || j.func_name, state, percent: formatNumber(j.progress / 100, { style: 'percent' }) })
    : t('mine.job', { name: j.name || j.func_name, state });
  return h('li', {}, line);
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
  mount(main, h('section', { class: 'page mine' }, h('h1', {}, t('mine.title')),
    h('p', {}, h('a', { href: '#/me/tokens' }, t('mine.tokens')), ' ', h('span', { class: 'muted' }, t('mine.tokens_note'))),
    h('section', { class: 'panel' }, h('h2', {}, t('mine.resources', { count: mine.total })), list(mine.resources || [], t('mine.no_resources')),
      h('p', {}, h('a', { href: `#/?owner=${encodeURIComponent(user.username)}` }, t('mine.search_them')), ' · ', h('a', { href: '#/upload' }, t('mine.upload_more')))),
    h('section', { class: 'panel' }, h('h2', {}, t('mine.favorites', { count: favorites.total })), list(favorites.favorites || favorites.resources || [], t('mine.no_favorites'))),
    h('section', { class: 'panel' }, h('h2', {}, t('mine.uploads')),
      jobs.length ? h('ul', { class: 'plain' }, jobs.map(job))
        : h('p', { class: 'muted' }, t('mine.no_uploads')))));
}
