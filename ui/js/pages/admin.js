// Administration (staff): people, groups, the list of background jobs with their errors, the
// management commands and their jobs (commands.js), and for superusers harvesting (harvesting.js)
// and the remote catalogues published to (publishing.js).

import { api, currentUser } from '../api.js';
import { copyButton, errorBox, field, formatDate, h, mount, personName, toast } from '../dom.js';

const JOBS_SHOWN = 100;

// A table in a box that scrolls: the box takes the keyboard's focus (so that its rows can be
// scrolled without a mouse) and is named for those who hear the page.
function scroller(label, table, cls = '') {
  return h('div', { class: `table-wrap ${cls}`.trim(), tabindex: 0, role: 'region', 'aria-label': label }, table);
}

// "alice (Alice Field)", or the user name alone when the person gave no name.
function nameAndUser(u) {
  const full = personName(u);
  return full && full !== u.username ? `${u.username} (${full})` : u.username;
}

const TABS = [['users', 'People'], ['groups', 'Groups'], ['executions', 'Jobs'], ['commands', 'Commands'], ['harvesting', 'Harvesting'], ['remotes', 'Remote catalogues'], ['keys', 'Signing key']];

export async function render(main, ctx) {
  const user = currentUser();
  if (!user) { location.hash = `#/login?next=${encodeURIComponent(ctx.path)}`; return; }
  if (!user.is_staff && !user.is_superuser) {
    mount(main, h('section', { class: 'page narrow' }, h('h1', {}, 'Administration'), h('p', { class: 'error' }, 'Only staff may administer this catalogue.')));
    return;
  }
  const tab = ctx.match[1] || 'users';
  const tabs = TABS.filter(([key]) => key !== 'remotes' || user.is_superuser);
  const body = h('div', { class: 'tab-body' });
  mount(main, h('section', { class: 'page admin' }, h('h1', {}, 'Administration'),
    h('nav', { class: 'tabs', 'aria-label': 'Administration' }, tabs.map(([key, label]) => h('a', { href: `#/admin/${key}`, 'aria-current': key === tab ? 'page' : null }, label))),
    body));
  if (tab === 'commands') {
    await (await import('./commands.js')).render(body, ctx);
  } else if (tab === 'harvesting') {
    await (await import('./harvesting.js')).render(body, ctx);
  } else if (tab === 'remotes') {
    if (!user.is_superuser) mount(body, h('section', { class: 'panel' }, h('h2', {}, 'Remote catalogues'), h('p', {}, 'Only superusers manage the remote catalogues resources are published to.')));
    else await (await import('./publishing.js')).remotesTab(body);
  } else {
    await ({ users, groups, executions, keys })[tab](body);
  }
}

async function users(body) {
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'grid-form compact', 'aria-label': 'New user' },
    h('div', { class: 'two' }, field('User name', h('input', { name: 'username', required: true, autocomplete: 'off' })),
      field('Email', h('input', { name: 'email', type: 'email', autocomplete: 'off' }))),
    h('div', { class: 'two' }, field('First name', h('input', { name: 'first_name' })), field('Last name', h('input', { name: 'last_name' }))),
    field('Password', h('input', { name: 'password', type: 'password', required: true, autocomplete: 'new-password', minlength: 8 })),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create user'), message));
  const list = h('tbody');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    try {
      await api('/api/v2/users', { method: 'POST', json: data });
      toast(`User ${data.username} created.`);
      form.reset();
      message.textContent = '';
      await fill();
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  const change = async (u, changes, done) => {
    try { await api(`/api/v2/users/${u.pk}`, { method: 'PATCH', json: changes }); toast(done); await fill(); } catch (error) { toast(error.message, 'error'); }
  };
  const fill = async () => {
    const all = await api('/api/v2/users', { params: { page_size: 500, 'sort[]': 'username' } });
    mount(list, (all.users || []).map((u) => {
      const active = u.is_active !== false;
      const reset = h('button', { type: 'button', class: 'link', onclick: () => {
        const password = h('input', { type: 'password', minlength: 8, required: true, autocomplete: 'new-password', 'aria-label': `New password for ${u.username}` });
        const form = h('form', { class: 'inline-form password-form', onsubmit: async (e) => { e.preventDefault(); await change(u, { password: password.value }, `Password of ${u.username} changed.`); } },
          password, h('button', { type: 'submit', class: 'small' }, 'Set'), h('button', { type: 'button', class: 'link', onclick: () => form.replaceWith(reset) }, 'Cancel'));
        reset.replaceWith(form);
        password.focus();
      } }, 'Reset password');
      return h('tr', { dataset: { username: u.username } },
        h('td', {}, u.username), h('td', {}, personName(u) === u.username ? '' : personName(u)), h('td', {}, u.email || ''),
        h('td', {}, u.is_superuser ? 'superuser' : u.is_staff ? 'staff' : 'member', active ? '' : ' (inactive)'),
        h('td', { class: 'row-actions' },
          u.pk === currentUser().pk ? null : h('button', { type: 'button', class: 'link', onclick: () => change(u, { is_active: !active }, `${u.username} ${active ? 'deactivated' : 'activated'}.`) }, active ? 'Deactivate' : 'Activate'),
          u.is_superuser || u.pk === currentUser().pk ? null : h('button', { type: 'button', class: 'link', onclick: () => change(u, { is_staff: !u.is_staff }, `${u.username} is ${u.is_staff ? 'no longer' : 'now'} staff.`) }, u.is_staff ? 'Remove staff' : 'Make staff'),
          reset));
    }));
  };
  mount(body, h('section', { class: 'panel' }, h('h2', {}, 'New user'), form),
    h('section', { class: 'panel' }, h('h2', {}, 'People'), scroller('People', h('table', {},
      h('thead', {}, h('tr', {}, ['User name', 'Name', 'Email', 'Role', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), list))));
  await fill();
}

async function groups(body) {
  const message = h('p', { role: 'status' });
  const form = h('form', { class: 'inline-form', 'aria-label': 'New group' },
    field('Title', h('input', { name: 'title', required: true })), field('Description', h('input', { name: 'description' })),
    h('button', { type: 'submit' }, 'Create group'), message);
  const list = h('div', { class: 'groups' });
  let people = [];
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api('/api/v2/groups', { method: 'POST', json: Object.fromEntries(new FormData(form)) });
      form.reset(); toast('Group created.'); await fill();
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
  });
  const fill = async () => {
    const [data, users] = await Promise.all([api('/api/v2/groups', { params: { page_size: 200 } }), api('/api/v2/users', { params: { page_size: 500 } })]);
    people = users.users || [];
    mount(list, (data.group_profiles || []).map((g) => groupCard(g, people)));
    if (!(data.group_profiles || []).length) list.append(h('p', { class: 'muted' }, 'No groups yet.'));
  };
  mount(body, h('section', { class: 'panel' }, h('h2', {}, 'New group'), form), h('section', { class: 'panel' }, h('h2', {}, 'Groups'), list));
  await fill();
}

// A group: its members, each with their role (a manager may change the group and its members)
// and buttons to change the role or remove them; a form to add someone not in it yet.
function groupCard(group, people) {
  const members = h('ul', { class: 'plain members' }, h('li', { class: 'muted' }, 'Loading…'));
  const adding = h('div', { class: 'add-member' });
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
    const sorted = [...(all || [])].sort((a, b) => (managing.has(b.pk) - managing.has(a.pk)) || a.username.localeCompare(b.username));
    mount(members, sorted.map((m) => {
      const manager = managing.has(m.pk);
      const role = manager ? 'manager' : 'member';
      return h('li', { class: 'member', dataset: { username: m.username, role } },
        h('span', { class: 'member-name' }, nameAndUser(m)), ' ',
        h('span', { class: manager ? 'badge role' : 'badge light role' }, role), ' ',
        h('span', { class: 'row-actions' },
          h('button', { type: 'button', class: 'link', dataset: { action: manager ? 'demote' : 'promote' },
            onclick: () => change([m.pk], manager ? 'member' : 'manager', `${m.username} is now a ${manager ? 'member' : 'manager'} of ${group.title}.`) },
          manager ? 'Make member' : 'Make manager', h('span', { class: 'visually-hidden' }, ` (${m.username})`)),
          h('button', { type: 'button', class: 'link danger-link', dataset: { action: 'remove' },
            onclick: () => change([m.pk], null, `${m.username} removed from ${group.title}.`) },
          'Remove', h('span', { class: 'visually-hidden' }, ` ${m.username} from ${group.title}`))));
    }));
    if (!sorted.length) members.append(h('li', { class: 'muted' }, 'No members yet.'));
    // only people who may join: active, and not in the group already
    const candidates = people.filter((u) => u.is_active !== false && !inGroup.has(u.pk));
    if (!candidates.length) { mount(adding, h('p', { class: 'muted small-text' }, 'Every active user is in this group already.')); return; }
    const who = h('select', { name: 'user', 'aria-label': `Person to add to ${group.title}` }, candidates.map((u) => h('option', { value: u.pk }, u.username)));
    const role = h('select', { name: 'role', 'aria-label': `Role in ${group.title}` },
      h('option', { value: 'member' }, 'as member'), h('option', { value: 'manager' }, 'as manager'));
    mount(adding, h('form', { class: 'inline-form', 'aria-label': `Add someone to ${group.title}`, onsubmit: async (e) => {
      e.preventDefault();
      const person = candidates.find((u) => String(u.pk) === who.value);
      await change([Number(who.value)], role.value, `${person?.username} added to ${group.title} as ${role.value}.`);
    } }, who, role, h('button', { type: 'submit', class: 'secondary' }, 'Add')));
  };
  load().catch((error) => mount(members, h('li', {}, errorBox(error))));
  return h('article', { class: 'group-card', dataset: { group: group.pk } }, h('h3', {}, group.title),
    group.description ? h('p', {}, group.description) : null,
    h('p', { class: 'muted small-text' }, 'Managers may change the group and who is in it.'),
    members, adding);
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
  const requests = data.requests || [];
  const total = data.total ?? requests.length;
  const rows = requests.map((r) => h('tr', { class: r.status, dataset: { exec: r.exec_id } },
    h('td', { class: 'when' }, formatDate(r.created), ' ', new Date(r.created).toLocaleTimeString()), h('td', {}, r.func_name || r.action),
    h('td', {}, r.name || (r.geonode_resource ? `resource ${r.geonode_resource}` : '')),
    h('td', {}, h('span', { class: `badge status-${r.status}` }, r.status)), h('td', { class: 'by' }, who(r.user)),
    h('td', { class: 'log' }, r.log || '')));
  mount(body, h('section', { class: 'panel' }, h('h2', {}, 'Background jobs'),
    rows.length ? [
      h('p', { class: 'muted small-text' }, total > rows.length ? `The newest ${rows.length} of ${total}, newest first.` : 'Newest first.'),
      scroller('Background jobs, newest first', h('table', {}, h('thead', {}, h('tr', {}, ['When', 'Job', 'Input', 'Status', 'By', 'Message'].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, rows)), 'executions-table')]
      : h('p', { class: 'muted' }, 'No jobs yet.')));
}

// The key this catalogue signs its packages with (its fingerprint is what another catalogue puts
// in its trusted keys), and the fingerprints this one trusts: both settings of the environment.
async function keys(body) {
  let key;
  try { key = await api('/api/v2/admin/signing-key'); } catch (error) {
    mount(body, h('section', { class: 'panel' }, h('h2', {}, 'Signing key'), errorBox(error)));
    return;
  }
  const fingerprint = h('input', { id: 'key-fingerprint', readonly: true, value: key.fingerprint, spellcheck: 'false' });
  const trusted = key.trusted_keys || [];
  mount(body, h('section', { class: 'panel signing-key' }, h('h2', {}, 'Signing key'),
    h('p', {}, 'This catalogue signs the packages it exports with its own key. Another catalogue that should trust its packages ',
      'adds this fingerprint to its trusted keys.'),
    h('div', { class: 'field' }, h('label', { for: 'key-fingerprint' }, 'Fingerprint'),
      h('div', { class: 'copy-row key-row' }, fingerprint, copyButton(() => key.fingerprint, 'Copy', { 'aria-label': 'Copy the fingerprint' }))),
    h('p', { class: 'small-text' }, key.signs_packages ? 'Packages exported here are signed.' : 'Packages exported here are not signed ',
      key.signs_packages ? null : h('span', {}, '(', h('code', {}, 'CATALOGUE_SIGN_PACKAGES'), ' is off).')),
    key.public_key ? h('details', {}, h('summary', {}, 'Public key (PEM)'), h('pre', { class: 'session-details' }, key.public_key)) : null),
  h('section', { class: 'panel trusted-keys' }, h('h2', {}, 'Trusted keys'),
    trusted.length
      ? [h('p', {}, 'Packages are imported only when signed by one of these keys:'), h('ul', {}, trusted.map((f) => h('li', {}, h('code', {}, f))))]
      : h('p', {}, 'None set: packages signed by any key, and unsigned ones, are imported; each import’s report says who signed it.'),
    h('p', { class: 'muted small-text' }, 'A setting of the server’s environment, read when it starts: ', h('code', {}, 'CATALOGUE_TRUSTED_KEYS'),
      ' (fingerprints separated by commas). Change it where the catalogue is started, then restart it.')));
}
