// Packages (signed-in users): import a package file (checked first with a dry run when asked),
// with a progress bar and then its report; the packages this user exported or imported, with the
// file of each export; and the open conflicts of imports, each with both versions side by side
// and a choice: keep this catalogue's, keep the incoming one, or keep both.

import { api, currentUser, followExecution, sendWithProgress } from '../api.js';
import { checkbox, errorBox, field, h, keepFocus, mount, toast } from '../dom.js';
import { dir, formatDateTime, formatNumber, load, t } from '../i18n.js';

await load('packages');

// The report's lists, in the order they are shown: [key, heading, what it means, its count's words].
const OUTCOMES = [
  ['created', t('packages.outcome_created'), t('packages.meaning_created'), (n) => t('packages.count_created', { count: n })],
  ['updated', t('packages.outcome_updated'), t('packages.meaning_updated'), (n) => t('packages.count_updated', { count: n })],
  ['unchanged', t('packages.outcome_unchanged'), t('packages.meaning_unchanged'), (n) => t('packages.count_unchanged', { count: n })],
  ['conflicts', t('packages.outcome_conflicts'), t('packages.meaning_conflicts'), (n) => t('packages.count_conflicts', { count: n })],
  ['deleted', t('packages.outcome_deleted'), t('packages.meaning_deleted'), (n) => t('packages.count_deleted', { count: n })],
  ['kept', t('packages.outcome_kept'), t('packages.meaning_kept'), (n) => t('packages.count_kept', { count: n })],
  ['left_out', t('packages.outcome_left_out'), t('packages.meaning_left_out'), (n) => t('packages.count_left_out', { count: n })],
  ['refused', t('packages.outcome_refused'), t('packages.meaning_refused'), (n) => t('packages.count_refused', { count: n })],
  ['failed', t('packages.outcome_failed'), t('packages.meaning_failed'), (n) => t('packages.count_failed', { count: n })],
];

const TYPES = {
  dataset: t('packages.type_dataset'), document: t('packages.type_document'), map: t('packages.type_map'),
  geostory: t('packages.type_geostory'), dashboard: t('packages.type_dashboard'),
};

// A message whose {placeholders} are elements (a link, an identifier in <code>): the pieces of
// text around them stay text.
function rich(message, elements) {
  return message.split(/(\{\w+\})/).filter(Boolean).map((piece) => {
    const name = /^\{(\w+)\}$/.exec(piece)?.[1];
    return name && elements[name] !== undefined ? elements[name] : piece;
  });
}

// A count's sentence with its number in <strong> ("<strong>2</strong> created").
function counted(text, n) {
  const number = formatNumber(n);
  const at = text.indexOf(number);
  if (at < 0) return [h('strong', { class: 'visually-hidden' }, number), text];
  return [text.slice(0, at), h('strong', {}, number), text.slice(at + number.length)];
}

// A file's size in the reader's language ("1.2 MB", "1,2 Mo").
function size(bytes) {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'];
  let value = Number(bytes) || 0;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return formatNumber(value, { style: 'unit', unit: units[unit], unitDisplay: 'short', maximumFractionDigits: unit && value < 10 ? 1 : 0 });
}

// A name or title someone typed, set into a sentence of the page's language: on a right-to-left
// page it is isolated (FSI…PDI), so that a Latin name and its punctuation keep their order.
const iso = (text) => (dir === 'rtl' ? `\u2068${text}\u2069` : text);

// An identifier, an address or a fingerprint: left to right, whatever the page's direction.
const code = (value) => h('code', { dir: 'ltr' }, value);

const percent = (progress) => formatNumber(Math.round(progress) / 100, { style: 'percent' });

// A list of resources as reports name them ({uuid, title, resource_type, pk, message|reason}):
// each a link to its page here when it has one.
export function resourceItems(items, why = 'message') {
  return h('ul', { class: 'report-items' }, items.map((item) => {
    const type = item.resource_type;
    const title = item.title || item.uuid || t('packages.untitled');
    const name = item.pk && type ? h('a', { href: `#/${type}/${item.pk}` }, h('bdi', {}, title)) : h('bdi', {}, title);
    const note = item[why] || item.message || item.reason;
    return h('li', { dataset: { uuid: item.uuid || '' } }, name,
      type ? [' ', h('span', { class: `badge ${type}` }, TYPES[type] || type)] : null,
      note ? h('span', { class: 'muted' }, ' — ', h('bdi', {}, note)) : null);
  }));
}

// An import's report: where the package came from and who signed it, a count of each outcome,
// then each non-empty list and the notes.
export function reportView(report) {
  const source = report.maker && report.maker_url ? t('packages.report_source_maker_url')
    : report.maker ? t('packages.report_source_maker') : t('packages.report_source');
  return h('div', { class: 'report', dataset: { dryRun: String(Boolean(report.dry_run)) } },
    report.dry_run ? h('p', { class: 'ok-note' }, t('packages.dry_run_note')) : null,
    h('p', { class: 'small-text' },
      rich(source, { package: code(report.package || '?'), maker: code(report.maker), url: h('span', { dir: 'ltr' }, report.maker_url) }), ' ',
      report.signed_by ? rich(t('packages.signed_by'), { signer: code(report.signed_by) }) : t('packages.not_signed'),
      report.base ? [' ', rich(t('packages.follows'), { base: code(report.base) })] : null),
    h('ul', { class: 'report-counts', 'aria-label': t('packages.outcome_counts') }, OUTCOMES.map(([key, , , words]) => {
      const n = (report[key] || []).length;
      return h('li', { class: n ? `count ${key}` : 'count none', dataset: { outcome: key } }, counted(words(n), n));
    })),
    OUTCOMES.filter(([key]) => (report[key] || []).length).map(([key, label, meaning]) => h('section', { class: `report-list ${key}`, dataset: { outcome: key } },
      h('h3', {}, t('packages.heading_count', { label, count: report[key].length })), h('p', { class: 'muted small-text' }, meaning), resourceItems(report[key]))),
    (report.notes || []).length ? h('section', { class: 'report-list notes' }, h('h3', {}, t('packages.notes')),
      h('ul', {}, report.notes.map((n) => h('li', {}, h('bdi', {}, typeof n === 'string' ? n : n.message || JSON.stringify(n)))))) : null);
}

export async function render(main, ctx) {
  if (!currentUser()) { location.hash = `#/login?next=${encodeURIComponent('/packages')}`; return; }
  const list = h('div', { class: 'package-list' }, h('p', { class: 'muted' }, t('packages.loading')));
  const conflicts = h('div', { class: 'conflict-list' }, h('p', { class: 'muted' }, t('packages.loading')));
  const refresh = () => Promise.all([fillPackages(list), fillConflicts(conflicts)]);
  mount(main, h('section', { class: 'page packages' }, h('h1', {}, t('packages.title')),
    h('p', { class: 'muted' }, t('packages.intro'), ' ',
      rich(t('packages.intro_make'), { search_page: h('a', { href: '#/' }, t('packages.search_page')) })),
    importPanel(refresh),
    h('section', { class: 'panel', 'aria-labelledby': 'conflicts-title' }, h('h2', { id: 'conflicts-title' }, t('packages.conflicts_title')), conflicts),
    h('section', { class: 'panel', 'aria-labelledby': 'packages-title' }, h('h2', { id: 'packages-title' }, t('packages.yours')), list)));
  await refresh();
  if (ctx.isCurrent()) main.querySelector('.packages').dataset.loaded = 'true';
}

function importPanel(refresh) {
  const input = h('input', { type: 'file', name: 'file', accept: '.zip,application/zip', required: true });
  const dry = checkbox('dry_run', t('packages.dry_run_choice'), true);
  const submit = h('button', { type: 'submit' }, t('packages.import'));
  const out = h('div', { class: 'import-out', 'aria-live': 'polite' });
  const form = h('form', { class: 'import-form', 'aria-label': t('packages.import_title') },
    field(t('packages.file'), input, t('packages.file_hint')), dry,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const file = input.files[0];
    if (!file) { input.focus(); return; }
    submit.disabled = true;
    try { await importFile(file, form.elements.dry_run.checked, out, refresh); } finally { submit.disabled = false; }
  });
  return h('section', { class: 'panel', 'aria-labelledby': 'import-title' }, h('h2', { id: 'import-title' }, t('packages.import_title')), form, out);
}

// Sends the file, follows the import, shows its report; after a dry run, offers the import itself.
async function importFile(file, dryRun, out, refresh) {
  const bar = h('progress', { max: 100, value: 0, 'aria-label': t('packages.progress_of', { file: file.name }) });
  const status = h('p', { class: 'status' }, t('packages.sending', { size: size(file.size) }));
  mount(out, h('div', { class: 'upload' }, h('strong', {}, h('bdi', {}, file.name), dryRun ? ` ${t('packages.dry_run_mark')}` : ''), bar, status));
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('dry_run', dryRun ? 'true' : 'false');
  try {
    const receipt = await sendWithProgress('/api/v2/packages/imports', form, (sent, total) => {
      bar.value = Math.round((sent / total) * 50);
      status.textContent = t('packages.sending_progress', { sent: size(sent), total: size(total) });
    });
    status.textContent = dryRun ? t('packages.received_checking') : t('packages.received_importing');
    const state = await followExecution(receipt.execution_id, (s) => {
      if (s.status === 'finished' || s.status === 'failed') return;
      bar.value = 50 + Math.round((s.progress || 0) / 2);
      status.textContent = s.status === 'ready' ? t('packages.waiting_turn')
        : dryRun ? (s.progress ? t('packages.checking_percent', { percent: percent(s.progress) }) : t('packages.checking'))
          : (s.progress ? t('packages.importing_percent', { percent: percent(s.progress) }) : t('packages.importing'));
    });
    if (state.status === 'failed') throw new Error(state.log || t('packages.import_failed'));
    bar.value = 100;
    const report = state.output_params?.report || {};
    status.textContent = dryRun ? t('packages.checked') : t('packages.imported_done');
    const again = dryRun ? h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => {
      const dry = out.parentElement?.querySelector('input[name=dry_run]');
      if (dry) dry.checked = false;  // the form says what is done now
      importFile(file, false, out, refresh);
    } }, t('packages.import_now', { file: iso(file.name) }))) : null;
    out.append(h('h3', { class: 'report-title', tabindex: '-1' }, dryRun ? t('packages.dry_run_title') : t('packages.report_title')), reportView(report));
    if (again) out.append(again);
    out.querySelector('.report-title').focus();
    if (!dryRun) await refresh();
  } catch (error) {
    bar.value = 0;
    out.querySelector('.upload')?.classList.add('failed');
    status.replaceWith(errorBox(new Error(t('packages.not_imported', { file: iso(file.name), message: error.message }))));
  }
}

async function fillPackages(list) {
  let data;
  try { data = await api('/api/v2/packages/'); } catch (error) { mount(list, errorBox(error)); return; }
  const packages = data.packages || data.results || [];
  if (!packages.length) { mount(list, h('p', { class: 'muted' }, t('packages.none_yet'))); return; }
  const count = (p) => p.resources ?? p.report?.resources?.length ?? p.manifest?.resources?.length ?? '';
  const columns = [t('packages.col_when'), t('packages.col_what'), t('packages.col_resources'), t('packages.col_size'),
    t('packages.col_package'), t('packages.col_file')];
  mount(list, h('div', { class: 'table-wrap', role: 'region', 'aria-label': t('packages.yours'), tabindex: 0 }, h('table', {},
    h('thead', {}, h('tr', {}, columns.map((label) => h('th', { scope: 'col' }, label)))),
    h('tbody', {}, packages.map((p) => {
      const exported = p.direction === 'export';
      const when = formatDateTime(p.created);
      const back = exported ? null : h('button', { type: 'button', class: 'secondary small', dataset: { sendBack: p.id },
        onclick: () => sendBack(p, list) }, t('packages.send_back'), h('span', { class: 'visually-hidden' }, ` ${t('packages.send_back_of', { date: when })}`));
      const url = p.download_url || (exported && p.file_name !== null ? `/api/v2/packages/${p.id}/download` : null);
      const n = count(p);
      return h('tr', { dataset: { package: p.id, direction: p.direction } },
        h('td', {}, when),
        h('td', {}, exported ? t('packages.exported') : t('packages.imported'), p.base ? h('span', { class: 'muted' }, ` ${t('packages.since_earlier')}`) : null),
        h('td', {}, typeof n === 'number' ? formatNumber(n) : String(n)), h('td', {}, p.size ? size(p.size) : ''),
        h('td', {}, code(String(p.id).slice(0, 8))),
        h('td', {}, exported && url ? h('a', { href: url, download: '' }, t('packages.download'),
          h('span', { class: 'visually-hidden' }, ` ${t('packages.download_of', { date: when })}`)) : back || ''));
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
  if (typeof value === 'boolean') return value ? t('packages.yes') : t('packages.no');
  if (typeof value === 'number') return formatNumber(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ') || '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const KINDS = { changed_both: t('packages.kind_changed_both'), deleted_here: t('packages.kind_deleted_here'), deleted_there: t('packages.kind_deleted_there') };

async function fillConflicts(box) {
  let data;
  try { data = await api('/api/v2/packages/conflicts'); } catch (error) { mount(box, errorBox(error)); return; }
  const open = data.conflicts || [];
  if (!open.length) { mount(box, h('p', { class: 'muted' }, t('packages.no_conflicts'))); return; }
  // the list names a resource by its id; its type (for the link to its page) is looked up
  await Promise.all(open.filter((c) => c.pk && !c.resource_type).map((c) => api(`/api/v2/resources/${c.pk}`, { params: { 'exclude[]': '*', 'include[]': ['pk', 'resource_type'] } })
    .then((found) => { c.resource_type = found.resource?.resource_type; }).catch(() => null)));
  keepFocus(() => mount(box, open.map((c) => conflictCard(c, () => fillConflicts(box)))),
    () => box.querySelector('button') || box.closest('section').querySelector('h2'));
}

// The fields a conflict can name (as the API names them), in words.
const FIELDS = {
  title: t('packages.field_title'), abstract: t('packages.field_abstract'), attribution: t('packages.field_attribution'),
  doi: t('packages.field_doi'), edition: t('packages.field_edition'), purpose: t('packages.field_purpose'),
  maintenance_frequency: t('packages.field_maintenance_frequency'), constraints_other: t('packages.field_constraints_other'),
  supplemental_information: t('packages.field_supplemental_information'), data_quality_statement: t('packages.field_data_quality_statement'),
  language: t('packages.field_language'), date: t('packages.field_date'), date_type: t('packages.field_date_type'),
  temporal_extent_start: t('packages.field_temporal_extent_start'), temporal_extent_end: t('packages.field_temporal_extent_end'),
  restriction_code_type: t('packages.field_restriction_code_type'), spatial_representation_type: t('packages.field_spatial_representation_type'),
  subtype: t('packages.field_subtype'), featured: t('packages.field_featured'), advertised: t('packages.field_advertised'),
  is_published: t('packages.field_is_published'), is_approved: t('packages.field_is_approved'), metadata_only: t('packages.field_metadata_only'),
  metadata_uploaded_preserve: t('packages.field_metadata_uploaded_preserve'), owner: t('packages.field_owner'),
  category: t('packages.field_category'), license: t('packages.field_license'), group: t('packages.field_group'),
  extent: t('packages.field_extent'), blob: t('packages.field_blob'), keywords: t('packages.field_keywords'),
  tkeywords: t('packages.field_tkeywords'), regions: t('packages.field_regions'), poc: t('packages.field_poc'),
  metadata_author: t('packages.field_metadata_author'), processor: t('packages.field_processor'), publisher: t('packages.field_publisher'),
  custodian: t('packages.field_custodian'), distributor: t('packages.field_distributor'), resource_user: t('packages.field_resource_user'),
  resource_provider: t('packages.field_resource_provider'), originator: t('packages.field_originator'),
  principal_investigator: t('packages.field_principal_investigator'), attribute_set: t('packages.field_attribute_set'),
  name: t('packages.field_name'), thumbnail_url: t('packages.field_thumbnail_url'),
};

// A field's name in words ("data_quality_statement": "Data quality statement"); a field this page
// does not know yet keeps the API's name, its underscores as spaces.
function fieldLabel(name) {
  if (Object.hasOwn(FIELDS, name)) return FIELDS[name];
  const text = String(name).replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// A conflict: the fields in which the two copies differ, side by side, then each copy's version,
// when it was last changed and by whom; and the three choices.
function conflictCard(c, refill) {
  const local = c.local;
  const incoming = c.incoming || {};
  const titleId = `conflict-${c.id}`;
  const title = c.title || c.uuid;
  const value = (v) => {
    const text = shown(v);
    return h('td', { class: 'value' }, text === '—' ? h('span', { class: 'muted' }, t('packages.empty')) : h('bdi', {}, text));
  };
  const rows = (c.differences || []).map((d) => h('tr', { class: 'differs', dataset: { field: d.field } },
    h('th', { scope: 'row' }, fieldLabel(d.field)), value(d.local), value(d.incoming)));
  const facts = [[t('packages.fact_version'), (s) => (s.version ? formatNumber(s.version) : '—')], [t('packages.fact_last_changed'), (s) => shown(s.last_updated)],
    [t('packages.fact_changed_by'), (s) => (s.changed_by ? h('bdi', {}, s.changed_by) : '—')]];
  for (const [label, of] of facts) {
    rows.push(h('tr', { class: 'fact' }, h('th', { scope: 'row' }, label),
      h('td', {}, local ? of(local) : h('em', {}, t('packages.deleted_here'))), h('td', {}, of(incoming))));
  }
  const choose = async (keep, done) => {
    try {
      await api(`/api/v2/packages/conflicts/${c.id}`, { method: 'POST', json: { keep } });
      toast(done);
      await refill();
    } catch (error) { toast(error.message, 'error'); }
  };
  const type = c.resource_type;
  const name = c.pk && type ? h('a', { href: `#/${type}/${c.pk}` }, h('bdi', {}, title)) : h('bdi', {}, title);
  const button = (keep, text, done) => h('button', { type: 'button', class: 'secondary', dataset: { keep, focus: `${c.id}-${keep}` },
    'aria-describedby': titleId, onclick: () => choose(keep, done) }, text);
  return h('article', { class: 'conflict', dataset: { conflict: c.id } },
    h('h3', { id: titleId }, name),
    h('p', { class: 'meta' }, h('span', { class: 'badge warn' }, KINDS[c.kind] || c.kind), h('span', {}, formatDateTime(c.created)),
      c.package ? h('span', {}, rich(t('packages.from_package'), { package: code(String(c.package).slice(0, 8)) })) : null),
    (c.differences || []).length ? null : h('p', { class: 'muted small-text' }, t('packages.same_fields')),
    h('div', { class: 'table-wrap', role: 'region', 'aria-label': t('packages.both_copies', { title }), tabindex: 0 }, h('table', { class: 'side-by-side' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('packages.col_field')), h('th', { scope: 'col' }, t('packages.col_here')),
        h('th', { scope: 'col' }, t('packages.col_incoming')))),
      h('tbody', {}, rows))),
    h('div', { class: 'actions' },
      button('local', c.kind === 'deleted_here' ? t('packages.keep_deleted') : t('packages.keep_local'), t('packages.kept_local', { title: iso(title) })),
      button('incoming', c.kind === 'deleted_there' ? t('packages.delete_as_there') : t('packages.keep_incoming'), t('packages.kept_incoming', { title: iso(title) })),
      c.kind === 'deleted_there' ? null : button('both', t('packages.keep_both'), t('packages.kept_both', { title: iso(title) }))));
}

// Make the package of ``cut`` in ``box`` (its progress, then its link and what was left out);
// ``done`` closes what holds the box (its Close button, and leaving for the Packages page);
// ``made``, on the Packages page, lists the new package there.
export async function runExport(cut, box, done, made = null) {
  const bar = h('progress', { max: 100, value: 0, 'aria-label': t('packages.export_progress') });
  const status = h('p', { class: 'status' }, t('packages.starting'));
  const close = h('button', { type: 'button', class: 'secondary', onclick: done }, t('packages.close'));
  mount(box, h('h3', {}, t('packages.making')), bar, status, h('div', { class: 'actions' }, close));
  close.focus();
  try {
    const receipt = await api('/api/v2/packages/exports', { method: 'POST', json: cut });
    const state = await followExecution(receipt.execution_id, (s) => {
      if (s.status === 'finished' || s.status === 'failed') return;
      if (s.progress) bar.value = Math.round(s.progress); else bar.removeAttribute('value');
      status.textContent = s.status === 'ready' ? t('packages.waiting_turn')
        : s.progress ? t('packages.writing_percent', { percent: percent(s.progress) }) : t('packages.writing');
    });
    if (state.status === 'failed') throw new Error(state.log || t('packages.export_failed'));
    bar.value = 100;
    const out = state.output_params || {};
    const report = out.report || {};
    const count = report.resources?.length ?? report.resources;
    const leftOut = report.left_out || [];
    const link = h('a', { class: 'button', href: out.download_url, download: '' },
      out.size ? t('packages.download_package_size', { size: size(out.size) }) : t('packages.download_package'));
    mount(box, h('h3', {}, t('packages.ready')),
      h('p', { class: 'ok-note' }, typeof count === 'number' ? t('packages.resources_in_file', { count }) : t('packages.done')),
      h('div', { class: 'actions' }, link, close),
      leftOut.length ? h('div', { class: 'left-out' }, h('h4', {}, t('packages.left_out_title', { count: leftOut.length })),
        h('p', { class: 'muted small-text' }, t('packages.left_out_why')),
        resourceItems(leftOut, 'reason')) : h('p', { class: 'muted small-text' }, t('packages.nothing_left_out')),
      made ? null : h('p', { class: 'small-text' },
        rich(t('packages.listed_on'), { packages_page: h('a', { href: '#/packages', onclick: done }, t('packages.packages_page')) })));
    if (made) await made();
    link.focus();
  } catch (error) {
    bar.value = 0;
    mount(box, h('h3', {}, t('packages.not_made')), errorBox(error), h('div', { class: 'actions' }, close));
    close.focus();
  }
}
