// The web UI's entry: a router over the address's hash (#/path?query), so that the whole state
// of a page is in the URL: back, forward, bookmarks and shared links all work. GeoNode's own
// addresses (/catalogue/#/dataset/12) open the same pages.

import { currentUser, loadSession, onSessionChange, signOut } from './api.js';
import { confirmDialog, h, mount, toast } from './dom.js';
import { lang, LANGUAGES, load, setLanguage, t } from './i18n.js';

await load('common', 'nav');

const ROUTES = [
  [/^\/?$/, () => import('./pages/search.js')],
  [/^\/search$/, () => import('./pages/search.js')],
  [/^\/map\/new$/, () => import('./pages/composer.js')],
  [/^\/map\/(\d+)\/compose$/, () => import('./pages/composer.js')],
  [/^\/(dataset|document|map|geostory|dashboard|geoapp)\/(\d+)$/, () => import('./pages/detail.js')],
  [/^\/(dataset|document|map|geostory|dashboard|geoapp)\/(\d+)\/edit$/, () => import('./pages/edit.js')],
  [/^\/login$/, () => import('./pages/login.js')],
  [/^\/upload$/, () => import('./pages/upload.js')],
  [/^\/packages$/, () => import('./pages/packages.js')],
  [/^\/me$/, () => import('./pages/mine.js')],
  [/^\/me\/tokens$/, () => import('./pages/tokens.js')],
  [/^\/admin(?:\/(users|groups|executions|commands|harvesting|remotes|keys))?$/, () => import('./pages/admin.js')],
];

export function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = raw.split('?');
  return { path: path || '/', params: new URLSearchParams(qs || '') };
}

export function go(path, params) {
  const qs = params && [...params].length ? `?${params}` : '';
  location.hash = `#${path}${qs}`;
}

function renderNav(user) {
  const links = [h('a', { href: '#/' }, t('nav.browse'))];
  if (user) {
    links.push(h('a', { href: '#/upload' }, t('nav.upload')), h('a', { href: '#/packages' }, t('nav.packages')),
      h('a', { href: '#/map/new' }, t('nav.new_map')), h('a', { href: '#/me' }, t('nav.my_things')));
    if (user.is_staff || user.is_superuser) links.push(h('a', { href: '#/admin' }, t('nav.admin')));
    links.push(h('span', { class: 'who' }, user.username),
      h('button', { type: 'button', class: 'link', onclick: async () => { await signOut(); toast(t('nav.signed_out')); go('/'); } }, t('nav.sign_out')));
  } else {
    links.push(h('a', { href: signInHref(), class: 'button', id: 'sign-in' }, t('nav.sign_in')));
  }
  mount(document.getElementById('nav'), links);
}

// The header's "Sign in" returns to the page shown now: its address follows every change of page.
function signInHref() {
  const here = location.hash.slice(1) || '/';
  return here.startsWith('/login') ? `#${here}` : `#/login?next=${encodeURIComponent(here)}`;
}

// The page's own words (index.html holds English until this runs), and the footer's choice of
// language: each language in its own name, the one in use marked; a choice reloads the page in it.
function fillPage() {
  document.title = t('nav.catalogue');
  document.querySelector('.skip').textContent = t('nav.skip');
  document.querySelector('.brand span').textContent = t('nav.catalogue');
  document.getElementById('menu-toggle').lastChild.textContent = t('nav.menu');
  document.getElementById('nav').setAttribute('aria-label', t('nav.main'));
  const loading = document.querySelector('#main > .loading');
  if (loading) loading.textContent = t('common.loading');
  const footer = document.querySelector('.site-footer');
  footer.querySelector('nav').setAttribute('aria-label', t('nav.open_standards'));
  footer.querySelector('a[href^="/dcat/"]').textContent = t('nav.dcat_catalogue');
  const label = h('span', { class: 'label', id: 'language-label' }, t('nav.language'));
  footer.append(h('div', { class: 'languages', role: 'group', 'aria-labelledby': 'language-label' }, label,
    LANGUAGES.map(([code, name]) => h('button', {
      type: 'button', class: 'link', lang: code, dir: 'auto', 'aria-current': code === lang ? 'true' : null, onclick: () => setLanguage(code),
    }, name))));
}
fillPage();

// "Skip to content" goes to the page without changing the address (its #main would be a route).
document.querySelector('.skip').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main').focus();
});

// Narrow screens: the navigation folds behind a menu button (CSS shows the button and hides the
// closed menu). A disclosure: the button says whether it is open; Escape, a change of page, or the
// focus or a click going elsewhere closes it.
const header = document.querySelector('.top');
const menuButton = document.getElementById('menu-toggle');
function setMenu(open) {
  menuButton.setAttribute('aria-expanded', String(open));
  header.classList.toggle('menu-open', open);
}
menuButton.addEventListener('click', () => setMenu(menuButton.getAttribute('aria-expanded') !== 'true'));
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || !header.classList.contains('menu-open')) return;
  const inside = header.contains(document.activeElement);
  setMenu(false);
  if (inside) menuButton.focus();
});
header.addEventListener('focusout', (e) => { if (e.relatedTarget && !header.contains(e.relatedTarget)) setMenu(false); });
document.addEventListener('click', (e) => { if (!header.contains(e.target)) setMenu(false); });

// After a change of page (not of its query alone: the search page redraws in place as its filters
// change), the keyboard and the screen reader start at the new page's heading, unless the page
// put the focus somewhere itself.
let renderedPath = null;
function focusNewPage(main, path) {
  const first = renderedPath === null;
  const moved = renderedPath !== path;
  renderedPath = path;
  if (first || !moved) return;
  const active = document.activeElement;
  if (active && active !== main && main.contains(active)) return;
  const heading = main.querySelector('h1');
  if (heading) {
    if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  } else main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

let rendering = 0;
async function route() {
  const turn = ++rendering;
  const { path, params } = parseHash();
  const main = document.getElementById('main');
  const found = ROUTES.find(([pattern]) => pattern.test(path));
  for (const a of document.querySelectorAll('#nav a')) {
    a.toggleAttribute('aria-current', a.getAttribute('href') === `#${path}` || (path === '/' && a.getAttribute('href') === '#/'));
  }
  if (!found) {
    mount(main, h('section', { class: 'page narrow' }, h('h1', {}, t('nav.not_found')), h('p', {}, h('a', { href: '#/' }, t('nav.back_to_catalogue')))));
    focusNewPage(main, path);
    return;
  }
  const match = path.match(found[0]);
  const page = await found[1]();
  if (turn !== rendering) return;
  try {
    await page.render(main, { match, params, path, isCurrent: () => turn === rendering });
  } catch (error) {
    if (turn !== rendering) return;
    mount(main, h('section', { class: 'page narrow' }, h('h1', {}, t('nav.went_wrong')), h('p', { class: 'error' }, error.message || String(error))));
  }
  if (turn === rendering) focusNewPage(main, path);
}

// A page with unsaved work (the composer) sets a guard: a function that returns the question to
// ask before leaving, or null when there is nothing to lose. Going to another address then asks
// first (the address is put back while the question is shown); closing or reloading the tab gets
// the browser's own question. The guard is dropped once another page is shown.
let leaveGuard = null;
let shownHash = location.hash;
export function guardLeaving(guard) { leaveGuard = guard; }

async function leave() {
  const question = leaveGuard?.();
  if (question && location.hash !== shownHash) {
    const target = location.hash;
    history.replaceState(null, '', shownHash || '#/');
    if (!(await confirmDialog(question, t('nav.leave_without_saving')))) return;
    leaveGuard = null;
    location.hash = target;
    return;
  }
  leaveGuard = null;
  shownHash = location.hash;
  route();
}

// Pages re-render on hash changes. A page that changes only its own query (the search page)
// may set `window.__softNavigation` to update in place instead.
window.addEventListener('hashchange', () => {
  // a link of the open menu was followed: the menu closes, the keyboard goes on from the new page
  if (header.classList.contains('menu-open') && header.contains(document.activeElement)) document.getElementById('main').focus({ preventScroll: true });
  setMenu(false);
  document.getElementById('sign-in')?.setAttribute('href', signInHref());
  leave();
});
window.addEventListener('beforeunload', (e) => { if (leaveGuard?.()) { e.preventDefault(); e.returnValue = ''; } });
onSessionChange((user) => renderNav(user));
renderNav(null);
// The session and the first page's code load side by side; the page renders once both are in.
const firstPage = ROUTES.find(([pattern]) => pattern.test(parseHash().path));
Promise.all([loadSession(), firstPage ? firstPage[1]() : null]).then(() => route());
export { currentUser };
