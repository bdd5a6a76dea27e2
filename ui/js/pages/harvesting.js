// Administration › Harvesting (superusers): harvesters bring in what another catalogue offers
// (a GeoNode, a WMS, a CSW). Each lists what its remote offers; the superuser ticks what to
// harvest and starts the work; the page follows it (polling while a harvester is busy).

import { api, currentUser } from '../api.js';
import { checkbox, confirmDialog, errorBox, field, formatDateTime, h, keepFocus, mount, select, toast } from '../dom.js';

const GEONODE = 'geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker';
const WMS = 'geonode.harvesting.harvesters.wms.OgcWmsHarvester';
const CSW = 'catalogue.harvesting.harvesters.csw.CswHarvester';
// [type, short label, long label]
const TYPES = [[GEONODE, 'GeoNode', 'GeoNode catalogue'], [WMS, 'WMS', 'OGC WMS'], [CSW, 'CSW', 'CSW catalogue']];
const STATUS = {
  ready: 'Ready',
  'updating-harvestable-resources': 'Refreshing the list',
  'aborting-update-harvestable-resources': 'Stopping the refresh',
  'harvesting-resources': 'Harvesting',
  'aborting-harvesting-resources': 'Stopping the harvest',
  'checking-availability': 'Checking the remote',
};
const ABORT = { 'updating-harvestable-resources': 'aborting-update-harvestable-resources', 'harvesting-resources': 'aborting-harvesting-resources' };
const SESSION_STATUS = { pending: 'Waiting', 'on-going': 'Running', 'finished-all-ok': 'Done', 'finished-all-failed': 'Failed',
  'finished-some-failed': 'Done, some failed', aborted: 'Aborted' };
const SESSION_TYPE = { 'discover-harvestable-resources': 'Refresh of the list', harvesting: 'Harvest' };
const POLL_MS = 1200;

const typeLabel = (type) => TYPES.find(([t]) => t === type)?.[1] || type || '';
const busy = (harvester) => harvester && harvester.status !== 'ready';
const statusLabel = (status) => STATUS[status] || status;

export async function render(body, ctx) {
  if (!currentUser()?.is_superuser) {
    mount(body, h('section', { class: 'panel' }, h('h2', {}, 'Harvesting'),
      h('p', {}, 'Only superusers manage harvesters.')));
    return;
  }
  let harvesters = [];
  let selected = Number(ctx.params.get('harvester')) || null;
  let timer = null;
  let lastStatus = null;
  let stale = false; // work was asked for: the detail is read again at the next poll

  const formPanel = h('section', { class: 'panel', hidden: true, 'aria-label': 'Harvester form' });
  const list = h('tbody');
  const listBox = h('div', { class: 'table-wrap harvester-table', tabindex: 0, role: 'region', 'aria-label': 'Harvesters' }, h('table', { class: 'stack' },
    h('caption', { class: 'visually-hidden' }, 'Harvesters'),
    h('thead', {}, h('tr', {}, ['Name', 'Type', 'Remote', 'Status', 'Available', 'Checks and schedule', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), list));
  const empty = h('p', { class: 'muted', hidden: true }, 'No harvesters yet. Add one to bring in what another catalogue offers.');
  const detail = h('div', { class: 'harvester-detail' });
  const offered = h('section', { class: 'panel harvestable', 'aria-label': 'What the remote offers' });
  const sessions = h('section', { class: 'panel sessions', 'aria-label': 'Sessions' });
  const announce = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const choiceMessage = h('p', { role: 'status', class: 'muted small-text' }); // kept across repaints

  const alive = () => ctx.isCurrent() && body.isConnected;
  const current = () => harvesters.find((x) => x.id === selected);

  const openForm = (existing, focus = true) => {
    mount(formPanel, harvesterForm(existing, {
      saved: async (saved) => {
        formPanel.hidden = true;
        toast(existing ? `Harvester ${saved.name} saved.` : `Harvester ${saved.name} created: refresh its list to see what the remote offers.`);
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
    if (!await confirmDialog(`Delete the harvester "${harvester.name}"? What it has harvested stays in this catalogue.`)) return;
    try {
      await api(`/api/v2/harvesters/${harvester.id}/`, { method: 'DELETE' });
      toast(`Harvester ${harvester.name} deleted.`);
      if (selected === harvester.id) { location.hash = '#/admin/harvesting'; return; }
      await reload(false);
      newButton.focus();
    } catch (error) { toast(error.message, 'error'); }
  };

  const actions = (x) => {
    const key = (what) => ({ focus: `${what}-${x.id}` });
    const button = (what, label, onclick, cls = 'secondary small') =>
      h('button', { type: 'button', class: cls, dataset: key(what), 'aria-label': `${label}: ${x.name}`, onclick }, label);
    if (busy(x)) {
      return ABORT[x.status]
        ? [button('abort', 'Abort', () => act(x, ABORT[x.status], `Stopping ${x.name}…`), 'danger small')]
        : [h('span', { class: 'muted' }, 'Please wait…')];
    }
    return [
      button('check', 'Check remote', () => act(x, 'checking-availability', `Checking ${x.name}…`)),
      button('refresh', 'Refresh list', () => act(x, 'updating-harvestable-resources', `Refreshing what ${x.name} offers…`)),
      button('harvest', 'Harvest now', () => act(x, 'harvesting-resources', `Harvesting from ${x.name}…`), 'small'),
      button('edit', 'Edit', () => openForm(x), 'link'),
      button('delete', 'Delete', () => remove(x), 'link danger-link'),
    ];
  };

  const paintList = () => keepFocus(() => {
    empty.hidden = harvesters.length > 0;
    listBox.hidden = harvesters.length === 0;
    mount(list, harvesters.map((x) => h('tr', { dataset: { harvester: x.id }, class: x.id === selected ? 'selected' : null, 'aria-current': x.id === selected ? 'true' : null },
      h('td', { 'data-label': 'Name' }, h('a', { href: `#/admin/harvesting?harvester=${x.id}`, dataset: { focus: `open-${x.id}` } }, x.name)),
      h('td', { 'data-label': 'Type' }, h('span', { class: 'badge light' }, typeLabel(x.harvester_type))),
      h('td', { 'data-label': 'Remote', class: 'url' }, x.remote_url),
      h('td', { 'data-label': 'Status' }, statusBadge(x.status)),
      h('td', { 'data-label': 'Available' }, availability(x)),
      h('td', { 'data-label': 'Checks and schedule', class: 'checks' },
        h('span', {}, 'Remote: ', x.last_checked_availability ? formatDateTime(x.last_checked_availability) : 'never'), h('br'),
        h('span', {}, 'List: ', x.last_checked_harvestable_resources ? formatDateTime(x.last_checked_harvestable_resources) : 'never'), h('br'),
        h('span', { class: 'schedule' }, scheduleText(x)),
        x.last_check_harvestable_resources_message ? h('span', { class: `${x.remote_available ? 'muted' : 'error'} block note` }, x.last_check_harvestable_resources_message) : null),
      h('td', { 'data-label': 'Actions' }, h('div', { class: 'harvester-actions' }, actions(x))))));
  }, (key) => { // the button pressed is gone (Harvest now became Abort): the row's first action
    const row = list.querySelector(`tr[data-harvester="${key.split('-').pop()}"]`);
    return row?.querySelector('.harvester-actions button') || row?.querySelector('a');
  });

  const paintDetail = async () => {
    const x = current();
    if (!x) { mount(detail); return; }
    mount(detail, h('h2', { class: 'detail-title' }, `${x.name}`, ' ', h('span', { class: 'muted' }, `(${typeLabel(x.harvester_type)})`)), offered, sessions);
    await Promise.all([loadOffered(x), loadSessions(x)]);
  };

  const loadOffered = async (x) => {
    try {
      const data = await api(`/api/v2/harvesters/${x.id}/harvestable-resources/`, { params: { page_size: 500 } });
      if (!alive()) return;
      keepFocus(() => mount(offered, ...harvestable(x, data, () => loadOffered(x), choiceMessage)));
    } catch (error) { mount(offered, h('h3', {}, 'What the remote offers'), errorBox(error)); }
  };

  const loadSessions = async (x) => {
    try {
      const data = await api('/api/v2/harvesting-sessions/', { params: { 'filter{harvester}': x.id, page_size: 10 } });
      if (!alive()) return;
      mount(sessions, ...sessionList(data));
    } catch (error) { mount(sessions, h('h3', {}, 'Sessions'), errorBox(error)); }
  };

  // The list, with each harvester's detail (type, last checks: only in the detail).
  const reload = async (withDetail) => {
    const data = await api('/api/v2/harvesters/', { params: { page_size: 100 } });
    const found = await Promise.all((data.harvesters || []).map((x) =>
      api(`/api/v2/harvesters/${x.id}/`).then((d) => d.harvester).catch(() => x)));
    if (!alive()) return;
    const before = new Map(harvesters.map((x) => [x.id, x.status]));
    harvesters = found.sort((a, b) => a.name.localeCompare(b.name));
    const changed = harvesters.filter((x) => before.has(x.id) && before.get(x.id) !== x.status);
    if (changed.length) announce.textContent = changed.map((x) => `${x.name}: ${statusLabel(x.status)}.`).join(' ');
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

  const newButton = h('button', { type: 'button', onclick: () => openForm(null) }, 'New harvester');
  mount(body, formPanel,
    h('section', { class: 'panel' }, h('div', { class: 'panel-head' }, h('h2', {}, 'Harvesters'), newButton),
      h('p', { class: 'muted' }, 'A harvester brings in the datasets and documents another catalogue offers. Refresh its list, tick what to harvest, then harvest.'),
      empty, listBox),
    detail, announce);
  await reload(true);
  if (!harvesters.length) openForm(null, false);
}

// Whether the remote answered when last asked; nothing is known before it has been asked.
function availability(x) {
  if (!x.last_checked_availability) return h('span', { class: 'muted' }, 'not checked yet');
  return x.remote_available ? 'Yes' : h('span', { class: 'error' }, 'No');
}

// Whether the harvester works by itself, and how often it harvests then.
function scheduleText(x) {
  return x.scheduling_enabled ? `Harvests by itself every ${x.harvesting_session_update_frequency} min` : 'Harvests when asked';
}

function statusBadge(status) {
  const working = status !== 'ready';
  return h('span', { class: `badge ${working ? 'status-running' : 'status-finished'}` },
    working ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, statusLabel(status), working ? '…' : '');
}

function harvestable(harvester, data, refresh, message) {
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
  const head = [h('h3', {}, 'What the remote offers'),
    harvester.last_checked_harvestable_resources ? null
      : h('p', { class: 'muted' }, busy(harvester) ? 'The list is being made…' : 'Not listed yet: use “Refresh list” to ask the remote what it offers.')];
  if (!items.length) {
    return [...head, !harvester.last_checked_harvestable_resources ? null
      : harvester.remote_available ? h('p', { class: 'muted' }, 'The remote offers nothing (with this harvester’s options).')
        : h('p', { class: 'error' }, 'The remote could not be reached, so nothing is listed. The sessions below say what went wrong.')];
  }
  const chosen = items.filter((i) => i.should_be_harvested).length;
  const rows = items.map((item) => {
    const box = h('input', { type: 'checkbox', checked: item.should_be_harvested, dataset: { focus: `pick-${item.unique_identifier}` },
      'aria-label': `Harvest ${item.title || item.unique_identifier}` });
    box.addEventListener('change', () => choose([{ unique_identifier: item.unique_identifier, should_be_harvested: box.checked }],
      `${item.title}: ${box.checked ? 'will be harvested' : 'will not be harvested'}.`));
    const type = item.remote_resource_type || '';
    const local = item.resource ? `#/${type === 'document' ? 'document' : 'dataset'}/${item.resource}` : null;
    const failed = item.last_harvesting_succeeded === false;
    return h('tr', { dataset: { identifier: item.unique_identifier }, class: failed ? 'failed' : null },
      h('td', { class: 'pick', 'data-label': 'Harvest' }, box),
      h('td', { 'data-label': 'Title' }, item.title || item.unique_identifier,
        failed && item.last_harvesting_message ? h('span', { class: 'error block' }, item.last_harvesting_message) : null),
      h('td', { 'data-label': 'Type' }, type),
      h('td', { 'data-label': 'Harvested' },
        item.last_harvested ? [formatDateTime(item.last_harvested), failed ? h('span', { class: 'badge status-failed' }, 'failed') : null]
          : h('span', { class: 'muted' }, 'not yet')),
      h('td', { 'data-label': 'Here' }, local ? h('a', { href: local, class: 'local-link' }, 'Open', h('span', { class: 'visually-hidden' }, ` ${item.title}`)) : ''));
  });
  const all = (value) => choose(items.filter((i) => i.should_be_harvested !== value).map((i) => ({ unique_identifier: i.unique_identifier, should_be_harvested: value })),
    value ? 'All will be harvested.' : 'None will be harvested.');
  return [...head,
    h('div', { class: 'actions' },
      h('span', {}, `${chosen} of ${total} chosen`),
      h('button', { type: 'button', class: 'secondary small', dataset: { focus: 'select-all' }, disabled: chosen === items.length, onclick: () => all(true) }, 'Select all'),
      h('button', { type: 'button', class: 'secondary small', dataset: { focus: 'select-none' }, disabled: chosen === 0, onclick: () => all(false) }, 'Select none'),
      message),
    total > items.length ? h('p', { class: 'muted' }, `The first ${items.length} of ${total} are shown.`) : null,
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': `What ${harvester.name} offers` }, h('table', { class: 'stack' }, h('caption', { class: 'visually-hidden' }, `What ${harvester.name} offers`),
      h('thead', {}, h('tr', {}, ['Harvest', 'Title', 'Type', 'Last harvested', 'Here'].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, rows)))];
}

function sessionList(data) {
  const items = data.asynchronous_harvesting_sessions || [];
  if (!items.length) return [h('h3', {}, 'Sessions'), h('p', { class: 'muted' }, 'No sessions yet.')];
  return [h('h3', {}, 'Sessions'), h('ol', { class: 'plain session-list' }, items.map((s) => {
    const total = s.total_records_to_process || 0;
    const ended = Boolean(s.ended) || /^(finished|aborted)/.test(s.status);
    const kind = s.status === 'finished-all-ok' ? 'finished' : /failed|aborted/.test(s.status) ? 'failed' : 'running';
    const counts = total ? `${s.records_done} of ${total} done${s.records_failed ? `, ${s.records_failed} failed` : ''}` : (ended ? '' : 'Starting…');
    const idle = ended && !total && !s.details && s.session_type === 'harvesting' && kind === 'finished';
    return h('li', { class: `session ${kind}`, dataset: { session: s.id } },
      h('div', { class: 'session-head' },
        h('strong', {}, SESSION_TYPE[s.session_type] || s.session_type),
        h('span', { class: `badge status-${kind}` }, SESSION_STATUS[s.status] || s.status),
        h('span', { class: 'muted' }, span(s.started, s.ended))),
      idle ? h('p', { class: 'muted small-text idle' }, 'Nothing was ticked to harvest, so nothing was done.') : null,
      total || !ended ? h('div', { class: 'progress-row' },
        h('progress', { max: total || 1, value: total ? s.records_done : null, 'aria-label': `Progress of session ${s.id}` }),
        h('span', { class: 'muted' }, counts)) : null,
      s.details ? h('pre', { class: 'session-details' }, s.details) : null);
  }))];
}

// When a session ran: its start, and its end (the time alone on the same day).
function span(started, ended) {
  if (!ended) return `started ${formatDateTime(started)}`;
  const sameDay = new Date(started).toDateString() === new Date(ended).toDateString();
  return `${formatDateTime(started)} – ${sameDay ? new Date(ended).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) : formatDateTime(ended)}`;
}

// The form to create or edit a harvester; `existing` is the harvester's detail.
function harvesterForm(existing, { saved, cancel }) {
  const message = h('p', { class: 'error', role: 'alert' });
  const config = existing?.harvester_type_specific_configuration || {};
  const type = select('harvester_type', TYPES.map(([t, , long]) => [t, long]), existing?.harvester_type || GEONODE);
  const specific = h('fieldset', { class: 'specific' });
  const same = () => existing && type.value === existing.harvester_type;
  const paintSpecific = () => {
    const c = same() ? config : {};
    const text = (name, label, hint) => field(label, h('input', { name, dataset: { cfg: 'text' }, value: c[name] ?? '' }), hint);
    const flag = (name, label, fallback) => checkbox(name, label, c[name] ?? fallback, { dataset: { cfg: 'flag' } });
    let fields;
    if (type.value === GEONODE) {
      fields = [flag('harvest_datasets', 'Harvest datasets', true), flag('harvest_documents', 'Harvest documents', true),
        text('resource_title_filter', 'Only titles containing', 'Leave empty for all.'),
        flag('copy_data', 'Copy the data here (when the remote allows downloads)', false),
        h('small', { class: 'muted block' }, 'Otherwise datasets are shown from the remote’s own map service.'),
        field('Access token of the remote', h('input', { name: 'token', type: 'password', autocomplete: 'off', dataset: { cfg: 'token' }, value: c.token ?? '' }),
          c.token ? 'A token is saved: leave this as it is to keep it, empty it to remove it.' : 'Optional: to harvest what the remote shows its signed-in users only.')];
    } else if (type.value === WMS) {
      fields = [text('dataset_title_filter', 'Only layer titles containing', 'Leave empty for all.')];
    } else {
      const schema = select('output_schema', [['iso', 'ISO 19139'], ['dc', 'Dublin Core']], c.output_schema || 'iso');
      schema.dataset.cfg = 'text';
      fields = [text('title_filter', 'Only titles containing', 'Leave empty for all.'), field('Record format', schema)];
    }
    mount(specific, h('legend', {}, `${TYPES.find(([t]) => t === type.value)[2]} options`), fields);
  };
  type.addEventListener('change', paintSpecific);
  paintSpecific();
  const number = (name, label, fallback) => field(label, h('input', { name, type: 'number', min: 1, step: 1, required: true, value: existing?.[name] ?? fallback }));
  const form = h('form', { class: 'grid-form compact harvester-form', 'aria-label': existing ? `Edit harvester ${existing.name}` : 'New harvester', novalidate: false },
    h('div', { class: 'two' },
      field('Name', h('input', { name: 'name', required: true, maxlength: 255, autocomplete: 'off', value: existing?.name ?? '' })),
      field('Type', type)),
    field('Remote address', h('input', { name: 'remote_url', type: 'url', required: true, placeholder: 'https://catalogue.example.org', value: existing?.remote_url ?? '' }),
      existing ? 'Changing the address or the options below makes the list of what the remote offers anew.' : 'The remote catalogue’s site address (or its service address for WMS and CSW).'),
    specific,
    h('fieldset', {}, h('legend', {}, 'What to do with what the remote offers'),
      checkbox('harvest_new_resources_by_default', 'Harvest what the remote newly offers without asking', existing?.harvest_new_resources_by_default ?? false),
      checkbox('delete_orphan_resources_automatically', 'Delete here what the remote no longer offers', existing?.delete_orphan_resources_automatically ?? false)),
    h('fieldset', {}, h('legend', {}, 'Schedule'),
      checkbox('scheduling_enabled', 'Run by itself on this schedule', existing?.scheduling_enabled ?? false),
      h('div', { class: 'three' },
        number('harvesting_session_update_frequency', 'Harvest every (minutes)', 60),
        number('refresh_harvestable_resources_update_frequency', 'Refresh the list every (minutes)', 30),
        number('check_availability_frequency', 'Check the remote every (minutes)', 10))),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, existing ? 'Save' : 'Create harvester'),
      h('button', { type: 'button', class: 'secondary', onclick: cancel }, 'Cancel')),
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
  return [h('h2', {}, existing ? `Edit ${existing.name}` : 'New harvester'), form];
}
