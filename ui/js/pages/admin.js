// Administration (staff): people, groups, the list of background jobs with their errors, the
// management commands and their jobs (commands.js), and for superusers harvesting (harvesting.js)
// and the remote catalogues published to (publishing.js).

import { api, currentUser } from '../api.js';
import { confirmDialog, copyButton, errorBox, field, h, mount, personName, toast } from '../dom.js';
import { formatDateTime, lang, load, t } from '../i18n.js';

await load('admin');

const JOBS_SHOWN = 100;
// A background job's moment, to the second (several may start within a minute).
const jobTime = new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'medium' });

// A table in a box that scrolls: the box takes the keyboard's focus (so that its rows can be
// scrolled without a mouse) and is named for those who hear the page.
function scroller(label, table, cls = '') {
  return h('div', { class: `table-wrap ${cls}`.trim(), tabindex: 0, role: 'region', 'aria-label': label }, table);
}

// "alice (Alice Field)", or the user name alone when the person gave no name.
function nameAndUser(u) {
  const full = personName(u);
  return full && full !== u.username ? t('admin.name_and_user', { username: u.username, name: full }) : u.username;
}

function tabs() {
  return [['users', t('admin.tab_people')], ['groups', t('admin.tab_groups')], ['executions', t('admin.tab_jobs')],
    ['commands', t('admin.tab_commands')], ['harvesting', t('admin.tab_harvesting')], ['remotes', t('admin.tab_remotes')],
    ['keys', t('admin.tab_signing_key')]];
}

export async function render(main, ctx) {
  const user = currentUser();
  if (!user) { location.hash = `#/login?next=${encodeURIComponent(ctx.path)}`; return; }
  if (!user.is_staff && !user.is_superuser) {
    mount(main, h('section', { class: 'page narrow' }, h('h1', {}, t('admin.title')), h('p', { class: 'error' }, t('admin.staff_only'))));
    return;
  }
  const tab = ctx.match[1] || 'users';
  const shown = tabs().filter(([key]) => key !== 'remotes' || user.is_superuser);
  const body = h('div', { class: 'tab-body' });
  mount(main, h('section', { class: 'page admin' }, h('h1', {}, t('admin.title')),
    h('nav', { class: 'tabs', 'aria-label': t('admin.title') }, shown.map(([key, label]) => h('a', { href: `#/admin/${key}`, 'aria-current': key === tab ? 'page' : null }, label))),
    body));
  if (tab === 'commands') {
    await (await import('./commands.js')).render(body, ctx);
  } else if (tab === 'harvesting') {
    await (await import('./harvesting.js')).render(body, ctx);
  } else if (tab === 'remotes') {
    if (!user.is_superuser) mount(body, h('section', { class: 'panel' }, h('h2', {}, t('admin.tab_remotes')), h('p', {}, t('admin.remotes_superusers_only'))));
    else await (await import('./publishing.js')).remotesTab(body);
  } else {
    await ({ users, groups, executions, keys })[tab](body);
  }
}

async function users(body) {
  const me = currentUser();
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'grid-form compact', 'aria-label': t('admin.new_user') },
    h('div', { class: 'two' }, field(t('admin.username'), h('input', { name: 'username', required: true, autocomplete: 'off' })),
      field(t('admin.email'), h('input', { name: 'email', type: 'email', autocomplete: 'off' }))),
    h('div', { class: 'two' }, field(t('admin.first_name'), h('input', { name: 'first_name' })), field(t('admin.last_name'), h('input', { name: 'last_name' }))),
    field(t('admin.password'), h('input', { name: 'password', type: 'password', required: true, autocomplete: 'new-password', minlength: 8 })),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('admin.create_user')), message));
  const list = h('tbody');
  const summary = h('p', { class: 'muted small-text people-summary', role: 'status' });
  const showing = h('select', { name: 'showing', id: 'people-showing' },
    h('option', { value: 'all' }, t('admin.show_everyone')),
    h('option', { value: 'active' }, t('admin.show_active')),
    h('option', { value: 'inactive' }, t('admin.show_inactive')));
  let everyone = [];
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    try {
      await api('/api/v2/users', { method: 'POST', json: data });
      toast(t('admin.user_created', { username: data.username }));
      form.reset();
      message.textContent = '';
      await fill();
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  const change = async (u, changes, done) => {
    try { await api(`/api/v2/users/${u.pk}`, { method: 'PATCH', json: changes }); toast(done); await fill(); } catch (error) { toast(error.message, 'error'); }
  };
  const setActive = async (u, active) => {
    if (!active && !await confirmDialog(t('admin.deactivate_question', { username: u.username }), t('admin.deactivate'))) return;
    await change(u, { is_active: active }, active ? t('admin.user_reactivated', { username: u.username }) : t('admin.user_deactivated', { username: u.username }));
  };
  const roleOf = (u) => (u.is_superuser ? t('admin.role_superuser') : u.is_staff ? t('admin.role_staff') : t('admin.role_member'));
  const row = (u) => {
    const active = u.is_active !== false;
    // staff change everyone but superusers; nobody deactivates or demotes themselves here
    const mayChange = u.pk !== me.pk && (me.is_superuser || !u.is_superuser);
    const reset = h('button', { type: 'button', class: 'link', onclick: () => {
      const password = h('input', { type: 'password', minlength: 8, required: true, autocomplete: 'new-password', 'aria-label': t('admin.new_password_for', { username: u.username }) });
      const inline = h('form', { class: 'inline-form password-form', onsubmit: async (e) => { e.preventDefault(); await change(u, { password: password.value }, t('admin.password_changed', { username: u.username })); } },
        password, h('button', { type: 'submit', class: 'small' }, t('admin.set_password')), h('button', { type: 'button', class: 'link', onclick: () => inline.replaceWith(reset) }, t('admin.cancel')));
      reset.replaceWith(inline);
      password.focus();
    } }, t('admin.reset_password'), h('span', { class: 'visually-hidden' }, ` (${u.username})`));
    return h('tr', { dataset: { username: u.username, active: String(active) }, class: active ? null : 'inactive' },
      h('td', { 'data-label': t('admin.username') }, u.username),
      h('td', { 'data-label': t('admin.name') }, personName(u) === u.username ? '' : personName(u)),
      h('td', { 'data-label': t('admin.email') }, u.email || ''),
      h('td', { 'data-label': t('admin.role') }, roleOf(u)),
      h('td', { 'data-label': t('admin.account'), class: 'account-state' }, active
        ? h('span', { class: 'badge light' }, t('admin.state_active'))
        : h('span', { class: 'badge warn' }, t('admin.state_inactive'))),
      h('td', { 'data-label': t('admin.actions'), class: 'row-actions' },
        mayChange ? h('button', { type: 'button', class: active ? 'link danger-link' : 'link', dataset: { action: active ? 'deactivate' : 'reactivate' }, onclick: () => setActive(u, !active) },
          active ? t('admin.deactivate') : t('admin.reactivate'), h('span', { class: 'visually-hidden' }, ` (${u.username})`)) : null,
        u.is_superuser || u.pk === me.pk ? null : h('button', { type: 'button', class: 'link', onclick: () => change(u, { is_staff: !u.is_staff },
          u.is_staff ? t('admin.no_longer_staff', { username: u.username }) : t('admin.now_staff', { username: u.username })) },
        u.is_staff ? t('admin.remove_staff') : t('admin.make_staff'), h('span', { class: 'visually-hidden' }, ` (${u.username})`)),
        reset));
  };
  const paint = () => {
    const inactive = everyone.filter((u) => u.is_active === false).length;
    const wanted = everyone.filter((u) => showing.value === 'all' || (u.is_active !== false) === (showing.value === 'active'));
    summary.textContent = [t('admin.people_count', { count: everyone.length }),
      inactive ? t('admin.inactive_count', { count: inactive }) : null].filter(Boolean).join(' ');
    mount(list, wanted.length ? wanted.map(row)
      : h('tr', {}, h('td', { colspan: 6, class: 'muted' }, t('admin.nobody_shown'))));
  };
  const fill = async () => {
    const all = await api('/api/v2/users', { params: { page_size: 500, 'sort[]': 'username' } });
    everyone = all.users || [];
    paint();
  };
  showing.addEventListener('change', paint);
  mount(body, h('section', { class: 'panel' }, h('h2', {}, t('admin.new_user')), form),
    h('section', { class: 'panel people' }, h('h2', {}, t('admin.people')),
      h('div', { class: 'inline-form people-filter' }, h('label', { for: 'people-showing' }, t('admin.show')), showing, summary),
      scroller(t('admin.people'), h('table', { class: 'stack' },
        h('thead', {}, h('tr', {}, [t('admin.username'), t('admin.name'), t('admin.email'), t('admin.role'), t('admin.account'), t('admin.actions')].map((label) => h('th', { scope: 'col' }, label)))), list))));
  await fill();
}

async function groups(body) {
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'inline-form', 'aria-label': t('admin.new_group') },
    field(t('admin.group_title'), h('input', { name: 'title', required: true })), field(t('admin.group_description'), h('input', { name: 'description' })),
    h('button', { type: 'submit' }, t('admin.create_group')), message);
  const list = h('div', { class: 'groups' });
  let people = [];
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api('/api/v2/groups', { method: 'POST', json: Object.fromEntries(new FormData(form)) });
      form.reset(); toast(t('admin.group_created')); await fill();
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  const fill = async () => {
    const [data, users] = await Promise.all([api('/api/v2/groups', { params: { page_size: 200 } }), api('/api/v2/users', { params: { page_size: 500 } })]);
    people = users.users || [];
    mount(list, (data.group_profiles || []).map((g) => groupCard(g, people)));
    if (!(data.group_profiles || []).length) list.append(h('p', { class: 'muted' }, t('admin.no_groups')));
  };
  mount(body, h('section', { class: 'panel' }, h('h2', {}, t('admin.new_group')), form), h('section', { class: 'panel' }, h('h2', {}, t('admin.tab_groups')), list));
  await fill();
}

// A group: its members, each with their role (a manager may change the group and its members)
// and buttons to change the role or remove them; a form to add someone not in it yet.
function groupCard(group, people) {
  const members = h('ul', { class: 'plain members' }, h('li', { class: 'muted' }, t('admin.loading')));
  const adding = h('div', { class: 'add-member' });
  const title = group.title;
  const change = async (users, role, done) => {
    try {
      await api(`/api/v2/groups/${group.pk}/members`, { method: role ? 'POST' : 'DELETE', json: role ? { users, role } : { users } });
      toast(done);
      await load();
    } catch (error) { toast(error.message, 'error'); }
  };
  const load = async () => {
    const [all, managers] = await Promise.all([api(`/api/v2/groups/${group.pk}/members`), api(`/api/v2/groups/${group.pk}/managers`)]);
    const managing = new Set((managers || []).map((m) => m.pk));
    const inGroup = new Set((all || []).map((m) => m.pk));
    const sorted = [...(all || [])].sort((a, b) => (managing.has(b.pk) - managing.has(a.pk)) || a.username.localeCompare(b.username, lang));
    mount(members, sorted.map((m) => {
      const manager = managing.has(m.pk);
      const role = manager ? 'manager' : 'member';
      return h('li', { class: 'member', dataset: { username: m.username, role } },
        h('span', { class: 'member-name' }, nameAndUser(m)), ' ',
        h('span', { class: manager ? 'badge role' : 'badge light role' }, manager ? t('admin.group_manager') : t('admin.group_member')), ' ',
        h('span', { class: 'row-actions' },
          h('button', { type: 'button', class: 'link', dataset: { action: manager ? 'demote' : 'promote' },
            onclick: () => change([m.pk], manager ? 'member' : 'manager', manager
              ? t('admin.now_member_of', { username: m.username, group: title })
              : t('admin.now_manager_of', { username: m.username, group: title })) },
          manager ? t('admin.make_member') : t('admin.make_manager'), h('span', { class: 'visually-hidden' }, ` (${m.username})`)),
          h('button', { type: 'button', class: 'link danger-link', dataset: { action: 'remove' },
            onclick: () => change([m.pk], null, t('admin.removed_from', { username: m.username, group: title })) },
          t('admin.remove_member'), h('span', { class: 'visually-hidden' }, ` (${m.username})`))));
    }));
    if (!sorted.length) members.append(h('li', { class: 'muted' }, t('admin.no_members')));
    // only people who may join: active, and not in the group already
    const candidates = people.filter((u) => u.is_active !== false && !inGroup.has(u.pk));
    if (!candidates.length) { mount(adding, h('p', { class: 'muted small-text' }, t('admin.everyone_in_group'))); return; }
    const who = h('select', { name: 'user', 'aria-label': t('admin.person_to_add', { group: title }) }, candidates.map((u) => h('option', { value: u.pk }, u.username)));
    const role = h('select', { name: 'role', 'aria-label': t('admin.role_in', { group: title }) },
      h('option', { value: 'member' }, t('admin.as_member')), h('option', { value: 'manager' }, t('admin.as_manager')));
    mount(adding, h('form', { class: 'inline-form', 'aria-label': t('admin.add_to', { group: title }), onsubmit: async (e) => {
      e.preventDefault();
      const person = candidates.find((u) => String(u.pk) === who.value)?.username;
      await change([Number(who.value)], role.value, role.value === 'manager'
        ? t('admin.added_as_manager', { username: person, group: title })
        : t('admin.added_as_member', { username: person, group: title }));
    } }, who, role, h('button', { type: 'submit', class: 'secondary' }, t('admin.add'))));
  };
  load().catch((error) => mount(members, h('li', {}, errorBox(error))));
  return h('article', { class: 'group-card', dataset: { group: group.pk } }, h('h3', {}, group.title),
    group.description ? h('p', {}, group.description) : null,
    h('p', { class: 'muted small-text' }, t('admin.managers_may')),
    members, adding);
}

// An execution request's status as GeoNode names it, in words.
function executionStatus(status) {
  const words = { ready: t('admin.exec_ready'), running: t('admin.exec_running'), failed: t('admin.exec_failed'), finished: t('admin.exec_finished') };
  return words[status] || status;
}

// The background jobs of everyone (uploads, copies, permission changes...), newest first, with
// the name of whoever asked for each.
async function executions(body) {
  const [data, users] = await Promise.all([
    api('/api/v2/executionrequest', { params: { page_size: JOBS_SHOWN, 'sort[]': '-created' } }),
    api('/api/v2/users', { params: { page_size: 500 } }).catch(() => null),
  ]);
  const people = new Map((users?.users || []).map((u) => [u.pk, u.username]));
  const who = (id) => (id === null || id === undefined ? '—' : people.get(id) || `#${id}`);
  const when = (value) => { const d = new Date(value); return Number.isNaN(d.getTime()) ? formatDateTime(value) : jobTime.format(d); };
  const requests = data.requests || [];
  const total = data.total ?? requests.length;
  const rows = requests.map((r) => h('tr', { class: r.status, dataset: { exec: r.exec_id } },
    h('td', { class: 'when' }, when(r.created)), h('td', {}, r.func_name || r.action),
    h('td', {}, r.name || (r.geonode_resource ? t('admin.exec_resource', { pk: String(r.geonode_resource) }) : '')),
    h('td', {}, h('span', { class: `badge status-${r.status}` }, executionStatus(r.status))), h('td', { class: 'by' }, who(r.user)),
    h('td', { class: 'log', dir: 'auto' }, r.log || '')));
  mount(body, h('section', { class: 'panel' }, h('h2', {}, t('admin.background_jobs')),
    rows.length ? [
      h('p', { class: 'muted small-text' }, total > rows.length ? t('admin.jobs_newest_of', { count: rows.length, total }) : t('admin.jobs_newest_first')),
      scroller(t('admin.jobs_label'), h('table', {}, h('thead', {}, h('tr', {},
        [t('admin.exec_when'), t('admin.exec_job'), t('admin.exec_input'), t('admin.exec_status'), t('admin.exec_by'), t('admin.exec_message')].map((label) => h('th', { scope: 'col' }, label)))),
      h('tbody', {}, rows)), 'executions-table')]
      : h('p', { class: 'muted' }, t('admin.no_jobs'))));
}

// The key this catalogue signs its packages with (its fingerprint is what another catalogue puts
// in its trusted keys), and the fingerprints this one trusts: both settings of the environment.
async function keys(body) {
  let key;
  try { key = await api('/api/v2/admin/signing-key'); } catch (error) {
    mount(body, h('section', { class: 'panel' }, h('h2', {}, t('admin.tab_signing_key')), errorBox(error)));
    return;
  }
  const fingerprint = h('input', { id: 'key-fingerprint', readonly: true, value: key.fingerprint, spellcheck: 'false', dir: 'ltr' });
  const trusted = key.trusted_keys || [];
  const code = (text) => h('code', { dir: 'ltr' }, text);
  mount(body, h('section', { class: 'panel signing-key' }, h('h2', {}, t('admin.tab_signing_key')),
    h('p', {}, t('admin.key_about')),
    h('div', { class: 'field' }, h('label', { for: 'key-fingerprint' }, t('admin.fingerprint')),
      h('div', { class: 'copy-row key-row' }, fingerprint, copyButton(() => key.fingerprint, t('admin.copy'), { 'aria-label': t('admin.copy_fingerprint') }))),
    h('p', { class: 'small-text' }, key.signs_packages ? t('admin.packages_signed')
      : [t('admin.packages_not_signed'), ' ', h('span', { class: 'muted' }, t('admin.setting_off', { setting: 'CATALOGUE_SIGN_PACKAGES' }))]),
    key.public_key ? h('details', {}, h('summary', {}, t('admin.public_key')), h('pre', { class: 'session-details', dir: 'ltr' }, key.public_key)) : null),
  h('section', { class: 'panel trusted-keys' }, h('h2', {}, t('admin.trusted_keys')),
    trusted.length
      ? [h('p', {}, t('admin.trusted_only')), h('ul', {}, trusted.map((f) => h('li', {}, code(f))))]
      : h('p', {}, t('admin.trusted_none')),
    h('p', { class: 'muted small-text' }, t('admin.trusted_setting'), ' ', code('CATALOGUE_TRUSTED_KEYS'), ' ', t('admin.trusted_setting_how'))));
}
