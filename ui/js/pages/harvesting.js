// Administration › Harvesting (superusers): harvesters bring in what another catalogue offers
// (a GeoNode, a WMS, a CSW). Each lists what its remote offers; the superuser ticks what to
// harvest and starts the work; the page follows it (polling while a harvester is busy).

import { api, currentUser } from '../api.js';
import { checkbox, confirmDialog, errorBox, field, h, keepFocus, mount, select, toast } from '../dom.js';
import { dir, formatDateTime, lang, load, t } from '../i18n.js';

await load('harvesting');

const GEONODE = 'geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker';
const WMS = 'geonode.harvesting.harvesters.wms.OgcWmsHarvester';
const CSW = 'catalogue.harvesting.harvesters.csw.CswHarvester';
// [type, short label (the software's or the standard's name), long label, the legend of its options]
const TYPES = [
  [GEONODE, 'GeoNode', t('harvesting.type_geonode'), t('harvesting.options_geonode')], // i18n: not text
  [WMS, 'WMS', t('harvesting.type_wms'), t('harvesting.options_wms')],
  [CSW, 'CSW', t('harvesting.type_csw'), t('harvesting.options_csw')],
];
const STATUS = {
  ready: t('harvesting.status_ready'),
  'updating-harvestable-resources': t('harvesting.status_refreshing'),
  'aborting-update-harvestable-resources': t('harvesting.status_stopping_refresh'),
  'harvesting-resources': t('harvesting.status_harvesting'),
  'aborting-harvesting-resources': t('harvesting.status_stopping_harvest'),
  'checking-availability': t('harvesting.status_checking'),
};
const ABORT = { 'updating-harvestable-resources': 'aborting-update-harvestable-resources', 'harvesting-resources': 'aborting-harvesting-resources' };
const SESSION_STATUS = {
  pending: t('harvesting.session_waiting'),
  'on-going': t('harvesting.session_running'),
  'finished-all-ok': t('harvesting.session_done'),
  'finished-all-failed': t('harvesting.session_failed'),
  'finished-some-failed': t('harvesting.session_some_failed'),
  aborted: t('harvesting.session_aborted'),
};
const SESSION_TYPE = { 'discover-harvestable-resources': t('harvesting.session_refresh'), harvesting: t('harvesting.session_harvest') };
// A session's start and end, the end's date left out when it is the start's (Intl's ranges)
const SESSION_TIMES = new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const POLL_MS = 1200;

// A name or title someone typed, set into a sentence of the page's language: on a right-to-left
// page it is isolated (FSI…PDI), so that a Latin name and its punctuation keep their order.
const iso = (text) => (dir === 'rtl' ? `\u2068${text}\u2069` : text);

const typeLabel = (type) => TYPES.find(([t]) => t === type)?.[1] || type || '';
const busy = (harvester) => harvester && harvester.status !== 'ready';
const statusLabel = (status) => STATUS[status] || status;

export async function render(body, ctx) {
  if (!currentUser()?.is_superuser) {
    mount(body, h('section', { class: 'panel' }, h('h2', {}, t('harvesting.title')),
      h('p', {}, t('harvesting.superusers_only'))));
    return;
  }
  let harvesters = [];
  let selected = Number(ctx.params.get('harvester')) || null;
  let timer = null;
  let lastStatus = null;
  let stale = false; // work was asked for: the detail is read again at the next poll

  const formPanel = h('section', { class: 'panel', hidden: true, 'aria-label': t('harvesting.form_label') });
  const list = h('tbody');
  const COLUMNS = {
    name: t('harvesting.col_name'), type: t('harvesting.col_type'), remote: t('harvesting.col_remote'), status: t('harvesting.col_status'),
    available: t('harvesting.col_available'), checks: t('harvesting.col_checks'), actions: t('harvesting.col_actions'),
  };
  const listBox = h('div', { class: 'table-wrap harvester-table', tabindex: 0, role: 'region', 'aria-label': t('harvesting.harvesters') }, h('table', { class: 'stack' },
    h('caption', { class: 'visually-hidden' }, t('harvesting.harvesters')),
    h('thead', {}, h('tr', {}, Object.values(COLUMNS).map((label) => h('th', { scope: 'col' }, label)))), list));
  const empty = h('p', { class: 'muted', hidden: true }, t('harvesting.none_yet'));
  const detail = h('div', { class: 'harvester-detail' });
  const offered = h('section', { class: 'panel harvestable', 'aria-label': t('harvesting.offered_title') });
  const sessions = h('section', { class: 'panel sessions', 'aria-label': t('harvesting.sessions_title') });
  const announce = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const choiceMessage = h('p', { role: 'status', class: 'muted small-text' }); // kept across repaints

  const alive = () => ctx.isCurrent() && body.isConnected;
  const current = () => harvesters.find((x) => x.id === selected);

  const openForm = (existing, focus = true) => {
    mount(formPanel, harvesterForm(existing, {
      saved: async (saved) => {
        formPanel.hidden = true;
        toast(existing ? t('harvesting.saved', { name: iso(saved.name) }) : t('harvesting.created', { name: iso(saved.name) }));
        if (!existing) { location.hash = `#/admin/harvesting?harvester=${saved.id}`; return; }
        await reload(true);
        newButton.focus();
      },
      cancel: () => { formPanel.hidden = true; newButton.focus(); },
    }));
    formPanel.hidden = false;
    if (!focus) return;
    formPanel.querySelector('input[name=name]').focus();
    formPanel.scrollIntoView({ block: 'nearest' });
  };

  const act = async (harvester, status, done) => {
    // the row shows the work at once: its other actions are gone before the server answers
    const before = harvester.status;
    harvester.status = status;
    paintList();
    try {
      const data = await api(`/api/v2/harvesters/${harvester.id}/`, { method: 'PATCH', json: { status } });
      Object.assign(harvester, data.harvester);
      stale = stale || harvester.id === selected;
      toast(done);
      paintList();
      schedule(0);
    } catch (error) { harvester.status = before; toast(error.message, 'error'); await reload(false); }
  };

  const remove = async (harvester) => {
    if (!await confirmDialog(t('harvesting.delete_question', { name: iso(harvester.name) }), t('harvesting.delete'))) return;
    try {
      await api(`/api/v2/harvesters/${harvester.id}/`, { method: 'DELETE' });
      toast(t('harvesting.deleted', { name: iso(harvester.name) }));
      if (selected === harvester.id) { location.hash = '#/admin/harvesting'; return; }
      await reload(false);
      newButton.focus();
    } catch (error) { toast(error.message, 'error'); }
  };

  const actions = (x) => {
    const key = (what) => ({ focus: `${what}-${x.id}` });
    const button = (what, label, onclick, cls = 'secondary small') =>
      h('button', { type: 'button', class: cls, dataset: key(what), 'aria-label': t('harvesting.action_on', { action: label, name: x.name }), onclick }, label);
    if (busy(x)) {
      return ABORT[x.status]
        ? [button('abort', t('harvesting.abort'), () => act(x, ABORT[x.status], t('harvesting.stopping', { name: iso(x.name) })), 'danger small')]
        : [h('span', { class: 'muted' }, t('harvesting.please_wait'))];
    }
    return [
      button('check', t('harvesting.check'), () => act(x, 'checking-availability', t('harvesting.checking', { name: iso(x.name) }))),
      button('refresh', t('harvesting.refresh'), () => act(x, 'updating-harvestable-resources', t('harvesting.refreshing', { name: iso(x.name) }))),
      button('harvest', t('harvesting.harvest_now'), () => act(x, 'harvesting-resources', t('harvesting.harvesting_from', { name: iso(x.name) })), 'small'),
      button('edit', t('harvesting.edit'), () => openForm(x), 'link'),
      button('delete', t('harvesting.delete'), () => remove(x), 'link danger-link'),
    ];
  };

  const paintList = () => keepFocus(() => {
    empty.hidden = harvesters.length > 0;
    listBox.hidden = harvesters.length === 0;
    mount(list, harvesters.map((x) => h('tr', { dataset: { harvester: x.id }, class: x.id === selected ? 'selected' : null, 'aria-current': x.id === selected ? 'true' : null },
      h('td', { 'data-label': COLUMNS.name }, h('a', { href: `#/admin/harvesting?harvester=${x.id}`, dataset: { focus: `open-${x.id}` } }, h('bdi', {}, x.name))),
      h('td', { 'data-label': COLUMNS.type }, h('span', { class: 'badge light' }, typeLabel(x.harvester_type))),
      h('td', { 'data-label': COLUMNS.remote, class: 'url' }, h('span', { dir: 'ltr' }, x.remote_url)),
      h('td', { 'data-label': COLUMNS.status }, statusBadge(x.status)),
      h('td', { 'data-label': COLUMNS.available }, availability(x)),
      h('td', { 'data-label': COLUMNS.checks, class: 'checks' },
        h('span', {}, x.last_checked_availability ? t('harvesting.remote_checked', { when: formatDateTime(x.last_checked_availability) })
          : t('harvesting.remote_never_checked')), h('br'),
        h('span', {}, x.last_checked_harvestable_resources ? t('harvesting.list_checked', { when: formatDateTime(x.last_checked_harvestable_resources) })
          : t('harvesting.list_never_checked')), h('br'),
        h('span', { class: 'schedule' }, scheduleText(x)),
        x.last_check_harvestable_resources_message ? h('span', { class: `${x.remote_available ? 'muted' : 'error'} block note` },
          h('bdi', {}, x.last_check_harvestable_resources_message)) : null),
      h('td', { 'data-label': COLUMNS.actions }, h('div', { class: 'harvester-actions' }, actions(x))))));
  }, (key) => { // the button pressed is gone (Harvest now became Abort): the row's first action
    const row = list.querySelector(`tr[data-harvester="${key.split('-').pop()}"]`);
    return row?.querySelector('.harvester-actions button') || row?.querySelector('a');
  });

  const paintDetail = async () => {
    const x = current();
    if (!x) { mount(detail); return; }
    mount(detail, h('h2', { class: 'detail-title' }, h('bdi', {}, x.name), ' ', h('span', { class: 'muted' }, `(${typeLabel(x.harvester_type)})`)), offered, sessions);
    await Promise.all([loadOffered(x), loadSessions(x)]);
  };

  const loadOffered = async (x) => {
    try {
      const data = await api(`/api/v2/harvesters/${x.id}/harvestable-resources/`, { params: { page_size: 500 } });
      if (!alive()) return;
      keepFocus(() => mount(offered, ...harvestable(x, data, () => loadOffered(x), choiceMessage)));
    } catch (error) { mount(offered, h('h3', {}, t('harvesting.offered_title')), errorBox(error)); }
  };

  const loadSessions = async (x) => {
    try {
      const data = await api('/api/v2/harvesting-sessions/', { params: { 'filter{harvester}': x.id, page_size: 10 } });
      if (!alive()) return;
      mount(sessions, ...sessionList(data));
    } catch (error) { mount(sessions, h('h3', {}, t('harvesting.sessions_title')), errorBox(error)); }
  };

  // The list, with each harvester's detail (type, last checks: only in the detail).
  const reload = async (withDetail) => {
    const data = await api('/api/v2/harvesters/', { params: { page_size: 100 } });
    const found = await Promise.all((data.harvesters || []).map((x) =>
      api(`/api/v2/harvesters/${x.id}/`).then((d) => d.harvester).catch(() => x)));
    if (!alive()) return;
    const before = new Map(harvesters.map((x) => [x.id, x.status]));
    harvesters = found.sort((a, b) => a.name.localeCompare(b.name, lang));
    const changed = harvesters.filter((x) => before.has(x.id) && before.get(x.id) !== x.status);
    if (changed.length) announce.textContent = changed.map((x) => t('harvesting.status_changed', { name: iso(x.name), status: statusLabel(x.status) })).join(' ');
    if (!selected || !current()) selected = harvesters[0]?.id ?? null;
    paintList();
    const x = current();
    if (withDetail) await paintDetail();
    else if (x) {
      const statusChanged = lastStatus !== null && lastStatus !== x.status;
      // items change while a harvest runs and once a refresh ends; sessions whenever it is busy
      const again = stale;
      stale = false;
      if (again || statusChanged || busy(x)) await Promise.all([loadSessions(x), again || statusChanged || x.status === 'harvesting-resources' ? loadOffered(x) : null]);
    }
    lastStatus = x?.status ?? null;
    schedule();
  };

  function schedule(delay = POLL_MS) {
    clearTimeout(timer);
    if (!alive()) return;
    if (delay === 0 || harvesters.some(busy)) {
      timer = setTimeout(() => { if (alive()) reload(false).catch(() => schedule()); }, delay || 300);
    }
  }

  const newButton = h('button', { type: 'button', onclick: () => openForm(null) }, t('harvesting.new'));
  mount(body, formPanel,
    h('section', { class: 'panel' }, h('div', { class: 'panel-head' }, h('h2', {}, t('harvesting.harvesters')), newButton),
      h('p', { class: 'muted' }, t('harvesting.intro')),
      empty, listBox),
    detail, announce);
  await reload(true);
  if (!harvesters.length) openForm(null, false);
}

// Whether the remote answered when last asked; nothing is known before it has been asked.
function availability(x) {
  if (!x.last_checked_availability) return h('span', { class: 'muted' }, t('harvesting.not_checked_yet'));
  return x.remote_available ? t('harvesting.available_yes') : h('span', { class: 'error' }, t('harvesting.available_no'));
}

// Whether the harvester works by itself, and how often it harvests then.
function scheduleText(x) {
  return x.scheduling_enabled ? t('harvesting.scheduled', { count: x.harvesting_session_update_frequency }) : t('harvesting.when_asked');
}

function statusBadge(status) {
  const working = status !== 'ready';
  return h('span', { class: `badge ${working ? 'status-running' : 'status-finished'}` },
    working ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, statusLabel(status), working ? '…' : '');
}

function harvestable(harvester, data, refresh, message) {
  const COLUMNS = {
    pick: t('harvesting.col_pick'), title: t('harvesting.col_title'), type: t('harvesting.col_type'),
    harvested: t('harvesting.col_last_harvested'), here: t('harvesting.col_here'),
  };
  const RESOURCE_TYPES = { dataset: t('harvesting.resource_dataset'), document: t('harvesting.resource_document'), map: t('harvesting.resource_map') };
  const items = data.harvestable_resources || [];
  const total = data.total ?? items.length;
  const choose = async (choices, done) => {
    try {
      await api(`/api/v2/harvesters/${harvester.id}/harvestable-resources/`, { method: 'PATCH', json: choices });
      message.className = 'muted small-text';
      message.textContent = done;
    } catch (error) { message.className = 'error'; message.textContent = error.message; }
    await refresh();
  };
  const head = [h('h3', {}, t('harvesting.offered_title')),
    harvester.last_checked_harvestable_resources ? null
      : h('p', { class: 'muted' }, busy(harvester) ? t('harvesting.list_being_made') : t('harvesting.not_listed_yet'))];
  if (!items.length) {
    return [...head, !harvester.last_checked_harvestable_resources ? null
      : harvester.remote_available ? h('p', { class: 'muted' }, t('harvesting.offers_nothing'))
        : h('p', { class: 'error' }, t('harvesting.unreachable'))];
  }
  const chosen = items.filter((i) => i.should_be_harvested).length;
  const rows = items.map((item) => {
    const box = h('input', { type: 'checkbox', checked: item.should_be_harvested, dataset: { focus: `pick-${item.unique_identifier}` },
      'aria-label': t('harvesting.pick', { title: item.title || item.unique_identifier }) });
    box.addEventListener('change', () => choose([{ unique_identifier: item.unique_identifier, should_be_harvested: box.checked }],
      box.checked ? t('harvesting.will_harvest', { title: iso(item.title || item.unique_identifier) })
        : t('harvesting.will_not_harvest', { title: iso(item.title || item.unique_identifier) })));
    const type = item.remote_resource_type || '';
    const local = item.resource ? `#/${type === 'document' ? 'document' : 'dataset'}/${item.resource}` : null;
    const failed = item.last_harvesting_succeeded === false;
    return h('tr', { dataset: { identifier: item.unique_identifier }, class: failed ? 'failed' : null },
      h('td', { class: 'pick', 'data-label': COLUMNS.pick }, box),
      h('td', { 'data-label': COLUMNS.title }, h('bdi', {}, item.title || item.unique_identifier),
        failed && item.last_harvesting_message ? h('span', { class: 'error block' }, h('bdi', {}, item.last_harvesting_message)) : null),
      h('td', { 'data-label': COLUMNS.type }, RESOURCE_TYPES[type] || type),
      h('td', { 'data-label': COLUMNS.harvested },
        item.last_harvested ? [formatDateTime(item.last_harvested), failed ? h('span', { class: 'badge status-failed' }, t('harvesting.item_failed')) : null]
          : h('span', { class: 'muted' }, t('harvesting.not_yet'))),
      h('td', { 'data-label': COLUMNS.here }, local ? h('a', { href: local, class: 'local-link' }, t('harvesting.open'),
        h('span', { class: 'visually-hidden' }, ' ', h('bdi', {}, item.title || item.unique_identifier))) : ''));
  });
  const all = (value) => choose(items.filter((i) => i.should_be_harvested !== value).map((i) => ({ unique_identifier: i.unique_identifier, should_be_harvested: value })),
    value ? t('harvesting.all_chosen') : t('harvesting.none_chosen'));
  return [...head,
    h('div', { class: 'actions' },
      h('span', {}, t('harvesting.chosen_count', { count: chosen, total })),
      h('button', { type: 'button', class: 'secondary small', dataset: { focus: 'select-all' }, disabled: chosen === items.length, onclick: () => all(true) }, t('harvesting.select_all')),
      h('button', { type: 'button', class: 'secondary small', dataset: { focus: 'select-none' }, disabled: chosen === 0, onclick: () => all(false) }, t('harvesting.select_none')),
      message),
    total > items.length ? h('p', { class: 'muted' }, t('harvesting.first_shown', { count: items.length, total })) : null,
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': t('harvesting.offered_by', { name: harvester.name }) }, h('table', { class: 'stack' },
      h('caption', { class: 'visually-hidden' }, t('harvesting.offered_by', { name: harvester.name })),
      h('thead', {}, h('tr', {}, Object.values(COLUMNS).map((label) => h('th', { scope: 'col' }, label)))), h('tbody', {}, rows)))];
}

function sessionList(data) {
  const items = data.asynchronous_harvesting_sessions || [];
  if (!items.length) return [h('h3', {}, t('harvesting.sessions_title')), h('p', { class: 'muted' }, t('harvesting.no_sessions'))];
  return [h('h3', {}, t('harvesting.sessions_title')), h('ol', { class: 'plain session-list' }, items.map((s) => {
    const total = s.total_records_to_process || 0;
    const ended = Boolean(s.ended) || /^(finished|aborted)/.test(s.status);
    const kind = s.status === 'finished-all-ok' ? 'finished' : /failed|aborted/.test(s.status) ? 'failed' : 'running';
    const counts = !total ? (ended ? '' : t('harvesting.starting'))
      : s.records_failed ? t('harvesting.progress_failed', { done: s.records_done, count: total, failed: s.records_failed })
        : t('harvesting.progress', { done: s.records_done, count: total });
    const idle = ended && !total && !s.details && s.session_type === 'harvesting' && kind === 'finished';
    return h('li', { class: `session ${kind}`, dataset: { session: s.id } },
      h('div', { class: 'session-head' },
        h('strong', {}, SESSION_TYPE[s.session_type] || s.session_type),
        h('span', { class: `badge status-${kind}` }, SESSION_STATUS[s.status] || s.status),
        h('span', { class: 'muted' }, span(s.started, s.ended))),
      idle ? h('p', { class: 'muted small-text idle' }, t('harvesting.idle')) : null,
      total || !ended ? h('div', { class: 'progress-row' },
        h('progress', { max: total || 1, value: total ? s.records_done : null, 'aria-label': t('harvesting.session_progress', { id: s.id }) }),
        h('span', { class: 'muted' }, counts)) : null,
      s.details ? h('pre', { class: 'session-details', dir: 'auto' }, s.details) : null);
  }))];
}

// When a session ran: its start, and its end (the time alone on the same day).
function span(started, ended) {
  if (!ended) return t('harvesting.started_at', { when: formatDateTime(started) });
  const from = new Date(started);
  const to = new Date(ended);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || to < from) return `${formatDateTime(started)} – ${formatDateTime(ended)}`;
  return SESSION_TIMES.formatRange(from, to);
}

// The form to create or edit a harvester; `existing` is the harvester's detail.
function harvesterForm(existing, { saved, cancel }) {
  const message = h('p', { class: 'error', role: 'alert' });
  const config = existing?.harvester_type_specific_configuration || {};
  const type = select('harvester_type', TYPES.map(([code, , long]) => [code, long]), existing?.harvester_type || GEONODE);
  const specific = h('fieldset', { class: 'specific' });
  const same = () => existing && type.value === existing.harvester_type;
  const paintSpecific = () => {
    const c = same() ? config : {};
    const text = (name, label, hint) => field(label, h('input', { name, dataset: { cfg: 'text' }, value: c[name] ?? '' }), hint);
    const flag = (name, label, fallback) => checkbox(name, label, c[name] ?? fallback, { dataset: { cfg: 'flag' } });
    let fields;
    if (type.value === GEONODE) {
      fields = [flag('harvest_datasets', t('harvesting.harvest_datasets'), true), flag('harvest_documents', t('harvesting.harvest_documents'), true),
        text('resource_title_filter', t('harvesting.title_filter'), t('harvesting.filter_hint')),
        flag('copy_data', t('harvesting.copy_data'), false),
        h('small', { class: 'muted block' }, t('harvesting.copy_data_hint')),
        field(t('harvesting.token'), h('input', { name: 'token', type: 'password', autocomplete: 'off', dataset: { cfg: 'token' }, value: c.token ?? '' }),
          c.token ? t('harvesting.token_saved') : t('harvesting.token_hint'))];
    } else if (type.value === WMS) {
      fields = [text('dataset_title_filter', t('harvesting.layer_title_filter'), t('harvesting.filter_hint'))];
    } else {
      const schema = select('output_schema', [['iso', 'ISO 19139'], ['dc', t('harvesting.schema_dublin_core')]], c.output_schema || 'iso');
      schema.dataset.cfg = 'text';
      fields = [text('title_filter', t('harvesting.title_filter'), t('harvesting.filter_hint')), field(t('harvesting.record_format'), schema)];
    }
    mount(specific, h('legend', {}, TYPES.find(([code]) => code === type.value)[3]), fields);
  };
  type.addEventListener('change', paintSpecific);
  paintSpecific();
  const number = (name, label, fallback) => field(label, h('input', { name, type: 'number', min: 1, step: 1, required: true, value: existing?.[name] ?? fallback }));
  const form = h('form', { class: 'grid-form compact harvester-form', 'aria-label': existing ? t('harvesting.edit_form', { name: existing.name }) : t('harvesting.new'), novalidate: false },
    h('div', { class: 'two' },
      field(t('harvesting.field_name'), h('input', { name: 'name', required: true, maxlength: 255, autocomplete: 'off', value: existing?.name ?? '' })),
      field(t('harvesting.field_type'), type)),
    field(t('harvesting.field_remote_url'), h('input', { name: 'remote_url', type: 'url', required: true, placeholder: 'https://catalogue.example.org', value: existing?.remote_url ?? '' }),
      existing ? t('harvesting.remote_url_changed_hint') : t('harvesting.remote_url_hint')),
    specific,
    h('fieldset', {}, h('legend', {}, t('harvesting.what_to_do')),
      checkbox('harvest_new_resources_by_default', t('harvesting.harvest_new'), existing?.harvest_new_resources_by_default ?? false),
      checkbox('delete_orphan_resources_automatically', t('harvesting.delete_orphans'), existing?.delete_orphan_resources_automatically ?? false)),
    h('fieldset', {}, h('legend', {}, t('harvesting.schedule')),
      checkbox('scheduling_enabled', t('harvesting.scheduling_enabled'), existing?.scheduling_enabled ?? false),
      h('div', { class: 'three' },
        number('harvesting_session_update_frequency', t('harvesting.harvest_every'), 60),
        number('refresh_harvestable_resources_update_frequency', t('harvesting.refresh_every'), 30),
        number('check_availability_frequency', t('harvesting.check_every'), 10))),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, existing ? t('harvesting.save') : t('harvesting.create')),
      h('button', { type: 'button', class: 'secondary', onclick: cancel }, t('harvesting.cancel'))),
    message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.textContent = '';
    const el = form.elements;
    const specificValues = {};
    for (const input of specific.querySelectorAll('[data-cfg]')) {
      const kind = input.dataset.cfg;
      specificValues[input.name] = kind === 'flag' ? input.checked : kind === 'token' ? (input.value || null) : (input.value.trim() || null);
    }
    const values = {
      name: el.name.value.trim(), remote_url: el.remote_url.value.trim(), harvester_type: type.value,
      scheduling_enabled: el.scheduling_enabled.checked,
      harvesting_session_update_frequency: Number(el.harvesting_session_update_frequency.value),
      refresh_harvestable_resources_update_frequency: Number(el.refresh_harvestable_resources_update_frequency.value),
      check_availability_frequency: Number(el.check_availability_frequency.value),
      harvest_new_resources_by_default: el.harvest_new_resources_by_default.checked,
      delete_orphan_resources_automatically: el.delete_orphan_resources_automatically.checked,
      harvester_type_specific_configuration: same() ? { ...config, ...specificValues } : specificValues,
    };
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const data = existing
        ? await api(`/api/v2/harvesters/${existing.id}/`, { method: 'PATCH', json: values })
        : await api('/api/v2/harvesters/', { method: 'POST', json: values });
      await saved(data.harvester);
    } catch (error) {
      message.textContent = error.message;
    } finally { button.disabled = false; }
  });
  return [h('h2', {}, existing ? t('harvesting.edit_title', { name: iso(existing.name) }) : t('harvesting.new')), form];
}
