// Packages (signed-in users): import a package file (checked first with a dry run when asked),
// with a progress bar and then its report; the packages this user exported or imported, with the
// file of each export; and the open conflicts of imports, each with both versions side by side
// and a choice: keep this catalogue's, keep the incoming one, or keep both.

import { api, currentUser, followExecution, sendWithProgress } from '../api.js';
import { checkbox, errorBox, field, formatBytes, formatDateTime, h, keepFocus, mount, toast, TYPE_LABELS } from '../dom.js';

// The report's lists, in the order they are shown, with what each means.
const OUTCOMES = [
  ['created', 'Created', 'New here.'],
  ['updated', 'Updated', 'Changed only on the other side: brought up to date, with their history.'],
  ['unchanged', 'Unchanged', 'Nothing new, or changed only here.'],
  ['conflicts', 'Conflicts', 'Changed on both sides: this catalogue’s copy is kept, the incoming one is set aside for you to choose (below).'],
  ['deleted', 'Deleted', 'Deleted on the other side and not changed here.'],
  ['kept', 'Kept', 'Deleted on the other side but changed here since: kept.'],
  ['left_out', 'Left out', 'Not in the package, or metadata only.'],
  ['refused', 'Refused', 'You may not change these here.'],
  ['failed', 'Failed', 'Left as they were.'],
];

// A list of resources as reports name them ({uuid, title, resource_type, pk, message|reason}):
// each a link to its page here when it has one.
export function resourceItems(items, why = 'message') {
  return h('ul', { class: 'report-items' }, items.map((item) => {
    const type = item.resource_type;
    const title = item.title || item.uuid || '(untitled)';
    const name = item.pk && type ? h('a', { href: `#/${type}/${item.pk}` }, title) : h('span', {}, title);
    const note = item[why] || item.message || item.reason;
    return h('li', { dataset: { uuid: item.uuid || '' } }, name,
      type ? [' ', h('span', { class: `badge ${type}` }, TYPE_LABELS[type] || type)] : null,
      note ? h('span', { class: 'muted' }, ` — ${note}`) : null);
  }));
}

// An import's report: where the package came from and who signed it, a count of each outcome,
// then each non-empty list and the notes.
export function reportView(report) {
  const counts = OUTCOMES.map(([key, label]) => [key, label, (report[key] || []).length]);
  const signed = report.signed_by ? ['Signed by ', h('code', {}, report.signed_by), '.'] : ['Not signed.'];
  return h('div', { class: 'report', dataset: { dryRun: String(Boolean(report.dry_run)) } },
    report.dry_run ? h('p', { class: 'ok-note' }, 'A dry run: this is what importing it would do. Nothing was changed.') : null,
    h('p', { class: 'small-text' }, 'Package ', h('code', {}, report.package || '?'),
      report.maker ? [' from the catalogue ', report.maker_url ? [h('span', {}, report.maker_url), ' ('] : null,
        h('code', {}, report.maker), report.maker_url ? ')' : null] : null, '. ', signed,
      report.base ? [' It follows the package ', h('code', {}, report.base), '.'] : null),
    h('ul', { class: 'report-counts', 'aria-label': 'Outcome counts' }, counts.map(([key, label, n]) => h('li', { class: n ? `count ${key}` : 'count none', dataset: { outcome: key } },
      h('strong', {}, String(n)), ` ${key === 'conflicts' && n === 1 ? 'conflict' : label.toLowerCase()}`))),
    OUTCOMES.filter(([key]) => (report[key] || []).length).map(([key, label, meaning]) => h('section', { class: `report-list ${key}`, dataset: { outcome: key } },
      h('h3', {}, `${label} (${report[key].length})`), h('p', { class: 'muted small-text' }, meaning), resourceItems(report[key]))),
    (report.notes || []).length ? h('section', { class: 'report-list notes' }, h('h3', {}, 'Notes'),
      h('ul', {}, report.notes.map((n) => h('li', {}, typeof n === 'string' ? n : n.message || JSON.stringify(n))))) : null);
}

export async function render(main, ctx) {
  if (!currentUser()) { location.hash = `#/login?next=${encodeURIComponent('/packages')}`; return; }
  const list = h('div', { class: 'package-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const conflicts = h('div', { class: 'conflict-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const refresh = () => Promise.all([fillPackages(list), fillConflicts(conflicts)]);
  mount(main, h('section', { class: 'page packages' }, h('h1', {}, 'Packages'),
    h('p', { class: 'muted' }, 'A package is one file that carries resources to a catalogue with no network between them, and their changes back. ',
      'Make one with “Take offline” on the ', h('a', { href: '#/' }, 'search page'), '.'),
    importPanel(refresh),
    h('section', { class: 'panel', 'aria-labelledby': 'conflicts-title' }, h('h2', { id: 'conflicts-title' }, 'Conflicts to resolve'), conflicts),
    h('section', { class: 'panel', 'aria-labelledby': 'packages-title' }, h('h2', { id: 'packages-title' }, 'Your packages'), list)));
  await refresh();
  if (ctx.isCurrent()) main.querySelector('.packages').dataset.loaded = 'true';
}

function importPanel(refresh) {
  const input = h('input', { type: 'file', name: 'file', accept: '.zip,application/zip', required: true });
  const dry = checkbox('dry_run', 'Check first (dry run): show what importing it would do, and change nothing', true);
  const submit = h('button', { type: 'submit' }, 'Import');
  const out = h('div', { class: 'import-out', 'aria-live': 'polite' });
  const form = h('form', { class: 'import-form', 'aria-label': 'Import a package' },
    field('Package file', input, 'A .zip made by “Take offline” here or in another catalogue.'), dry,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const file = input.files[0];
    if (!file) { input.focus(); return; }
    submit.disabled = true;
    try { await importFile(file, form.elements.dry_run.checked, out, refresh); } finally { submit.disabled = false; }
  });
  return h('section', { class: 'panel', 'aria-labelledby': 'import-title' }, h('h2', { id: 'import-title' }, 'Import a package'), form, out);
}

// Sends the file, follows the import, shows its report; after a dry run, offers the import itself.
async function importFile(file, dryRun, out, refresh) {
  const bar = h('progress', { max: 100, value: 0, 'aria-label': `Progress of ${file.name}` });
  const status = h('p', { class: 'status' }, `Sending ${formatBytes(file.size)}…`);
  mount(out, h('div', { class: 'upload' }, h('strong', {}, file.name, dryRun ? ' (dry run)' : ''), bar, status));
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('dry_run', dryRun ? 'true' : 'false');
  try {
    const receipt = await sendWithProgress('/api/v2/packages/imports', form, (sent, total) => {
      bar.value = Math.round((sent / total) * 50);
      status.textContent = `Sending: ${formatBytes(sent)} of ${formatBytes(total)}`;
    });
    status.textContent = dryRun ? 'Received. Checking…' : 'Received. Importing…';
    const state = await followExecution(receipt.execution_id, (s) => {
      if (s.status === 'finished' || s.status === 'failed') return;
      bar.value = 50 + Math.round((s.progress || 0) / 2);
      status.textContent = s.status === 'ready' ? 'Waiting for its turn…' : `${dryRun ? 'Checking' : 'Importing'}${s.progress ? ` (${Math.round(s.progress)}%)` : ''}…`;
    });
    if (state.status === 'failed') throw new Error(state.log || 'The import failed.');
    bar.value = 100;
    const report = state.output_params?.report || {};
    status.textContent = dryRun ? 'Checked.' : 'Imported.';
    const again = dryRun ? h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => {
      const dry = out.parentElement?.querySelector('input[name=dry_run]');
      if (dry) dry.checked = false;  // the form says what is done now
      importFile(file, false, out, refresh);
    } }, `Import ${file.name} now`)) : null;
    out.append(h('h3', { class: 'report-title', tabindex: '-1' }, dryRun ? 'What importing it would do' : 'Report'), reportView(report));
    if (again) out.append(again);
    out.querySelector('.report-title').focus();
    if (!dryRun) await refresh();
  } catch (error) {
    bar.value = 0;
    out.querySelector('.upload')?.classList.add('failed');
    status.replaceWith(errorBox(new Error(`${file.name} was not imported: ${error.message}`)));
  }
}

async function fillPackages(list) {
  let data;
  try { data = await api('/api/v2/packages/'); } catch (error) { mount(list, errorBox(error)); return; }
  const packages = data.packages || data.results || [];
  if (!packages.length) { mount(list, h('p', { class: 'muted' }, 'No packages yet.')); return; }
  const count = (p) => p.resources ?? p.report?.resources?.length ?? p.manifest?.resources?.length ?? '';
  mount(list, h('div', { class: 'table-wrap', role: 'region', 'aria-label': 'Your packages', tabindex: 0 }, h('table', {},
    h('thead', {}, h('tr', {}, ['When', 'What', 'Resources', 'Size', 'Package', 'File'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, packages.map((p) => {
      const exported = p.direction === 'export';
      const back = exported ? null : h('button', { type: 'button', class: 'secondary small', dataset: { sendBack: p.id },
        onclick: () => sendBack(p, list) }, 'Send changes back', h('span', { class: 'visually-hidden' }, ` (what changed here since the package of ${formatDateTime(p.created)})`));
      const url = p.download_url || (exported && p.file_name !== null ? `/api/v2/packages/${p.id}/download` : null);
      return h('tr', { dataset: { package: p.id, direction: p.direction } },
        h('td', {}, formatDateTime(p.created)),
        h('td', {}, exported ? 'Exported' : 'Imported', p.base ? h('span', { class: 'muted' }, ' (changes since an earlier package)') : null),
        h('td', {}, String(count(p))), h('td', {}, p.size ? formatBytes(p.size) : ''),
        h('td', {}, h('code', {}, String(p.id).slice(0, 8))),
        h('td', {}, exported && url ? h('a', { href: url, download: '' }, 'Download', h('span', { class: 'visually-hidden' }, ` the package of ${formatDateTime(p.created)}`)) : back || ''));
    })))), list.querySelector('.send-back') || h('div', { class: 'send-back', 'aria-live': 'polite' }));
}

// "Send changes back": a package of what changed here since the imported package ``p`` (new
// resources, changes with their history, deletions), made and offered below the list.
async function sendBack(p, list) {
  const box = list.querySelector('.send-back');
  box.replaceChildren();
  await runExport({ since: p.id }, box, () => box.replaceChildren(), () => fillPackages(list));
}

// One value of a summary as text (times as dates with their time of day).
function shown(value) {
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) return formatDateTime(value);
  if (value === null || value === undefined || value === '') return '—';
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ') || '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const KINDS = { changed_both: 'Changed on both sides', deleted_here: 'Deleted here, changed there', deleted_there: 'Deleted there, changed here' };

async function fillConflicts(box) {
  let data;
  try { data = await api('/api/v2/packages/conflicts'); } catch (error) { mount(box, errorBox(error)); return; }
  const open = data.conflicts || [];
  if (!open.length) { mount(box, h('p', { class: 'muted' }, 'No conflicts: nothing waits for your choice.')); return; }
  // the list names a resource by its id; its type (for the link to its page) is looked up
  await Promise.all(open.filter((c) => c.pk && !c.resource_type).map((c) => api(`/api/v2/resources/${c.pk}`, { params: { 'exclude[]': '*', 'include[]': ['pk', 'resource_type'] } })
    .then((found) => { c.resource_type = found.resource?.resource_type; }).catch(() => null)));
  keepFocus(() => mount(box, open.map((c) => conflictCard(c, () => fillConflicts(box)))),
    () => box.querySelector('button') || box.closest('section').querySelector('h2'));
}

// A field's name in words ("data_quality_statement": "Data quality statement").
function fieldLabel(name) {
  const text = String(name).replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// A conflict: the fields in which the two copies differ, side by side, then each copy's version,
// when it was last changed and by whom; and the three choices.
function conflictCard(c, refill) {
  const local = c.local;
  const incoming = c.incoming || {};
  const titleId = `conflict-${c.id}`;
  const value = (v) => {
    const text = shown(v);
    return h('td', { class: 'value' }, text === '—' ? h('span', { class: 'muted' }, 'empty') : text);
  };
  const rows = (c.differences || []).map((d) => h('tr', { class: 'differs', dataset: { field: d.field } },
    h('th', { scope: 'row' }, fieldLabel(d.field)), value(d.local), value(d.incoming)));
  const facts = [['Version (in its own catalogue)', (s) => (s.version ? `${s.version}` : '—')], ['Last changed', (s) => shown(s.last_updated)],
    ['Changed by', (s) => s.changed_by || '—']];
  for (const [label, of] of facts) {
    rows.push(h('tr', { class: 'fact' }, h('th', { scope: 'row' }, label),
      h('td', {}, local ? of(local) : h('em', {}, 'Deleted here')), h('td', {}, of(incoming))));
  }
  const choose = async (keep, label) => {
    try {
      await api(`/api/v2/packages/conflicts/${c.id}`, { method: 'POST', json: { keep } });
      toast(`${c.title}: ${label}.`);
      await refill();
    } catch (error) { toast(error.message, 'error'); }
  };
  const type = c.resource_type;
  const name = c.pk && type ? h('a', { href: `#/${type}/${c.pk}` }, c.title || c.uuid) : (c.title || c.uuid);
  const button = (keep, text, done) => h('button', { type: 'button', class: 'secondary', dataset: { keep, focus: `${c.id}-${keep}` },
    'aria-describedby': titleId, onclick: () => choose(keep, done) }, text);
  return h('article', { class: 'conflict', dataset: { conflict: c.id } },
    h('h3', { id: titleId }, name),
    h('p', { class: 'meta' }, h('span', { class: 'badge warn' }, KINDS[c.kind] || c.kind), h('span', {}, formatDateTime(c.created)),
      c.package ? h('span', {}, 'from package ', h('code', {}, String(c.package).slice(0, 8))) : null),
    (c.differences || []).length ? null : h('p', { class: 'muted small-text' }, 'Their fields are the same; their data or history differ.'),
    h('div', { class: 'table-wrap', role: 'region', 'aria-label': `Both copies of ${c.title}`, tabindex: 0 }, h('table', { class: 'side-by-side' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'This catalogue'), h('th', { scope: 'col' }, 'Incoming'))),
      h('tbody', {}, rows))),
    h('div', { class: 'actions' },
      button('local', c.kind === 'deleted_here' ? 'Keep it deleted' : 'Keep this catalogue’s', 'kept this catalogue’s copy'),
      button('incoming', c.kind === 'deleted_there' ? 'Delete it, as the other side did' : 'Keep the incoming', 'kept the incoming copy'),
      c.kind === 'deleted_there' ? null : button('both', 'Keep both', 'kept both (the incoming one as a new resource)')));
}

// Make the package of ``cut`` in ``box`` (its progress, then its link and what was left out);
// ``done`` closes what holds the box (its Close button, and leaving for the Packages page);
// ``made``, on the Packages page, lists the new package there.
export async function runExport(cut, box, done, made = null) {
  const bar = h('progress', { max: 100, value: 0, 'aria-label': 'Progress of the package' });
  const status = h('p', { class: 'status' }, 'Starting…');
  const close = h('button', { type: 'button', class: 'secondary', onclick: done }, 'Close');
  mount(box, h('h3', {}, 'Making the package'), bar, status, h('div', { class: 'actions' }, close));
  close.focus();
  try {
    const receipt = await api('/api/v2/packages/exports', { method: 'POST', json: cut });
    const state = await followExecution(receipt.execution_id, (s) => {
      if (s.status === 'finished' || s.status === 'failed') return;
      if (s.progress) bar.value = Math.round(s.progress); else bar.removeAttribute('value');
      status.textContent = s.status === 'ready' ? 'Waiting for its turn…' : `Writing the package${s.progress ? ` (${Math.round(s.progress)}%)` : ''}…`;
    });
    if (state.status === 'failed') throw new Error(state.log || 'The export failed.');
    bar.value = 100;
    const out = state.output_params || {};
    const report = out.report || {};
    const count = report.resources?.length ?? report.resources;
    const leftOut = report.left_out || [];
    const link = h('a', { class: 'button', href: out.download_url, download: '' }, `Download the package${out.size ? ` (${formatBytes(out.size)})` : ''}`);
    mount(box, h('h3', {}, 'The package is ready'),
      h('p', { class: 'ok-note' }, typeof count === 'number' ? `${count} resource${count === 1 ? '' : 's'} in one file.` : 'Done.'),
      h('div', { class: 'actions' }, link, close),
      leftOut.length ? h('div', { class: 'left-out' }, h('h4', {}, `Left out, or metadata only (${leftOut.length})`),
        h('p', { class: 'muted small-text' }, 'The search found these, but their data could not travel; each says why.'),
        resourceItems(leftOut, 'reason')) : h('p', { class: 'muted small-text' }, 'Nothing was left out.'),
      made ? null : h('p', { class: 'small-text' }, 'Your packages stay listed on the ', h('a', { href: '#/packages', onclick: done }, 'Packages page'), '.'));
    if (made) await made();
    link.focus();
  } catch (error) {
    bar.value = 0;
    mount(box, h('h3', {}, 'The package was not made'), errorBox(error), h('div', { class: 'actions' }, close));
    close.focus();
  }
}
