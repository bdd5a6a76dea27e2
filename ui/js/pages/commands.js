// Administration › Commands (staff): the management commands the catalogue offers over HTTP
// (GeoNode's /api/v2/management/), each with its help and a form to run it, and the jobs they
// made, newest first; a job's output is followed as it grows (polling while a job runs); and the
// backups in the data folder, which superusers may download (an archive holds password hashes
// and token digests, so staff see only their names).

import { api, currentUser } from '../api.js';
import { confirmDialog, errorBox, field, h, keepFocus, mount, toast } from '../dom.js';
import { formatDateTime, formatNumber, lang, load, t } from '../i18n.js';

await load('commands');

const BASE = '/api/v2/management';
const POLL_MS = 1000;
const JOBS_SHOWN = 20;
const RUNNING = new Set(['QUEUED', 'STARTED']);
const BACKUPS_SHOWN = 10;
const ONLY_SUPERUSERS = t('commands.only_superusers');
// The operator's usual tasks, offered as buttons where their commands are listed:
// [command, button label, question asked first (or null)].
const SHORTCUTS = [
  ['backup', t('commands.shortcut_backup'), null],
  ['check', t('commands.shortcut_check'), null],
  ['repair', t('commands.shortcut_repair'), t('commands.repair_question')],
  ['vacuum', t('commands.shortcut_vacuum'), null],
];
// A time of day to the second, for what happened today.
const timeOfDay = new Intl.DateTimeFormat(lang, { timeStyle: 'medium' });

// Splits a line of arguments as a POSIX shell does, without its expansions: blanks separate
// words; inside '…' everything is kept as it is; inside "…" too, except that \" \\ \$ \` stand
// for the character after the backslash; elsewhere a backslash keeps the next character as it
// is. '' or "" is an empty word. A quote left open throws a SyntaxError saying so.
export function splitArgs(line) {
  const words = [];
  let word = null; // null: between two words
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (/\s/.test(c)) {
      if (word !== null) { words.push(word); word = null; }
      i += 1;
      continue;
    }
    word ??= '';
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new SyntaxError(t('commands.single_quote_open'));
      word += line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      for (;;) {
        if (i >= line.length) throw new SyntaxError(t('commands.double_quote_open'));
        const d = line[i];
        if (d === '"') { i += 1; break; }
        if (d === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) { word += line[i + 1]; i += 2; continue; }
        word += d;
        i += 1;
      }
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new SyntaxError(t('commands.lone_backslash'));
      word += line[i + 1];
      i += 2;
    } else {
      word += c;
      i += 1;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

// One word as a shell would need it written (quoted only when it has to be).
export function quoteArg(word) {
  if (word === '') return "''";
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

// What the command reads: its args, then its kwargs as options (as the catalogue's runner does:
// x_y=v is --x-y v; true the flag alone; false or null left out; a list the option once).
function commandLine(job) {
  const out = (job.args || []).map(String);
  for (const [key, value] of Object.entries(job.kwargs || {})) {
    const flag = `--${key.replace(/_/g, '-')}`;
    if (value === true) out.push(flag);
    else if (value === false || value === null || value === undefined) continue;
    else if (Array.isArray(value)) out.push(flag, ...value.map(String));
    else out.push(flag, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return out.map(quoteArg).join(' ');
}

// How long a job ran (or has been running).
function duration(job) {
  if (!job.start_time) return '';
  const end = job.end_time ? new Date(job.end_time) : RUNNING.has(job.status) ? new Date() : null;
  if (!end) return '';
  const seconds = Math.max(0, (end - new Date(job.start_time)) / 1000);
  const tenths = (n) => formatNumber(n, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  if (seconds < 0.1) return t('commands.under_seconds', { seconds: tenths(0.1) });
  if (seconds < 10) return t('commands.seconds', { seconds: tenths(seconds) });
  if (seconds < 60) return t('commands.seconds', { seconds: Math.round(seconds) });
  if (seconds < 3600) return t('commands.minutes_seconds', { minutes: Math.floor(seconds / 60), seconds: Math.round(seconds % 60) });
  return t('commands.hours_minutes', { hours: Math.floor(seconds / 3600), minutes: Math.round((seconds % 3600) / 60) });
}

// The description in an argparse help: the first paragraph after "usage: …" that is not a
// section ("options:").
function describe(help) {
  if (typeof help !== 'string') return '';
  const parts = help.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
  const found = parts.find((p) => !/^usage:/i.test(p) && !/:$/.test(p.split('\n')[0]));
  return found ? found.replace(/\s+/g, ' ') : '';
}

// A moment, short: its time of day (with seconds) when it is today, else its date and time.
function when(value) {
  if (!value) return '';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toDateString() === new Date().toDateString() ? timeOfDay.format(d) : formatDateTime(value);
}

// A file's size in the reader's language ("1.5 MB", "1,5 Mo").
function fileSize(bytes) {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'];
  let value = Number(bytes) || 0;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) { value /= 1024; i += 1; }
  return formatNumber(value, { style: 'unit', unit: units[i], unitDisplay: i ? 'short' : 'long', maximumFractionDigits: value < 10 && i ? 1 : 0 });
}

// A command's name with places to break it after its underscores (they are long and unspaced).
function breakable(name) {
  return String(name).split(/(?<=_)/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));
}

// A job's status as the API names it (CREATED, QUEUED, STARTED, FINISHED), in words.
function statusWord(status) {
  const words = { CREATED: t('commands.status_created'), QUEUED: t('commands.status_queued'),
    STARTED: t('commands.status_started'), FINISHED: t('commands.status_finished') };
  return words[status] || String(status || '').toLowerCase();
}

function statusBadge(job) {
  const running = RUNNING.has(job.status);
  const kind = running ? 'status-running' : job.status === 'FINISHED' ? (job.failed ? 'status-failed' : 'status-finished') : 'light';
  return h('span', { class: `badge job-status ${kind}`, dataset: { status: job.status } },
    running ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, statusWord(job.status));
}

// Where a backup is downloaded from (superusers only).
const backupUrl = (name) => `${BASE}/backups/${encodeURIComponent(name)}`;

function downloadLink(name, cls = 'button small secondary') {
  return h('a', { href: backupUrl(name), download: name, class: cls, dataset: { backup: name } },
    t('commands.download'), h('span', { class: 'visually-hidden' }, ` ${name}`));
}

function failedCell(job) {
  if (job.status !== 'FINISHED') return h('span', { class: 'muted', title: t('commands.not_finished') }, '—');
  return job.failed ? h('strong', { class: 'error' }, t('commands.yes')) : t('commands.no');
}

export async function render(body, ctx) {
  let selected = Number(ctx.params.get('job')) || null;
  let jobs = [];        // the newest jobs, each with its detail
  let total = 0;
  let timer = null;
  const details = new Map(); // id → the job's detail (a finished one does not change)
  const people = new Map();  // user id → user name
  const mayDownload = Boolean(currentUser()?.is_superuser);
  const alive = () => ctx.isCurrent() && body.isConnected;
  const who = (id) => (id === null || id === undefined ? '—' : people.get(id) || `#${id}`);

  mount(body, h('p', { class: 'loading' }, t('commands.loading')));
  const [names, users] = await Promise.all([
    api(`${BASE}/commands/`).then((d) => d.data || []),
    api('/api/v2/users', { params: { page_size: 500 } }).catch(() => null),
  ]);
  for (const u of users?.users || []) people.set(u.pk, u.username);
  const helps = await Promise.all(names.map((name) =>
    api(`${BASE}/commands/${encodeURIComponent(name)}/`).then((d) => d.data).catch((error) => error)));
  if (!alive()) return;

  // --- the selected job: its detail and live output
  const announce = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const detailTitle = h('h2', { tabindex: -1, id: 'job-title' });
  const detailBadge = h('span');
  const detailActions = h('div', { class: 'actions job-actions' });
  const detailMeta = h('dl', { class: 'job-meta' });
  const output = h('pre', { class: 'job-output', tabindex: 0, dir: 'auto' });
  const noOutput = h('p', { class: 'muted small-text', hidden: true });
  const detailMessage = h('p', { class: 'error', role: 'alert' });
  const detail = h('section', { class: 'panel job-detail', 'aria-labelledby': 'job-title', hidden: true },
    h('div', { class: 'panel-head' }, detailTitle, detailBadge), detailMeta, detailActions, detailMessage,
    h('h3', { class: 'output-title' }, t('commands.output')), noOutput, output);
  let shown = null; // the job painted in the detail (its id and status)

  const act = async (job, what) => {
    detailMessage.textContent = '';
    try {
      const data = await api(`${BASE}/jobs/${job.id}/${what}/`, { method: 'PATCH' });
      if (data?.data?.id === job.id) details.set(job.id, data.data);
      toast(what === 'stop' ? t('commands.stopping', { id: String(job.id) }) : t('commands.started', { id: String(job.id) }));
    } catch (error) { detailMessage.textContent = error.message; }
    await refresh();
  };

  const paintDetail = () => {
    const job = selected && details.get(selected);
    detail.hidden = !job;
    if (!job) return;
    if (shown && shown.id === job.id && shown.status !== job.status) {
      const id = String(job.id);
      announce.textContent = job.status !== 'FINISHED' ? t('commands.job_now', { id, status: statusWord(job.status) })
        : job.failed ? t('commands.job_failed', { id }) : t('commands.job_finished', { id });
    }
    const first = !shown || shown.id !== job.id;
    shown = { id: job.id, status: job.status };
    mount(detailTitle, t('commands.job_title', { id: String(job.id) }), ' ', h('code', {}, breakable(job.command)));
    mount(detailBadge, statusBadge(job));
    const line = commandLine(job);
    mount(detailMeta,
      h('dt', {}, t('commands.arguments')), h('dd', {}, line ? h('code', { dir: 'ltr' }, line) : h('span', { class: 'muted' }, t('commands.no_arguments'))),
      h('dt', {}, t('commands.by')), h('dd', {}, who(job.user)),
      h('dt', {}, t('commands.created')), h('dd', {}, formatDateTime(job.created_at)),
      job.start_time ? [h('dt', {}, t('commands.ran')), h('dd', {}, job.end_time
        ? t('commands.ran_from_to', { start: timeOfDay.format(new Date(job.start_time)), end: timeOfDay.format(new Date(job.end_time)), took: duration(job) })
        : t('commands.ran_since', { start: timeOfDay.format(new Date(job.start_time)), took: duration(job) }))] : null,
      job.status === 'FINISHED' ? [h('dt', {}, t('commands.failed')), h('dd', {}, failedCell(job))] : null,
      job.archive ? [h('dt', {}, t('commands.archive')), h('dd', { class: 'job-archive' }, h('code', {}, job.archive), ' ',
        mayDownload ? downloadLink(job.archive, 'button small') : h('span', { class: 'muted small-text' }, ONLY_SUPERUSERS))] : null);
    // The output follows its end, unless the reader scrolled up to read something.
    const text = job.output_message || '';
    const atEnd = output.scrollHeight - output.scrollTop - output.clientHeight < 8;
    output.setAttribute('aria-label', t('commands.output_of', { id: String(job.id) }));
    const appeared = output.hidden && Boolean(text);
    output.hidden = !text;
    noOutput.hidden = Boolean(text);
    if (first || output.textContent !== text) {
      output.textContent = text;
      if (first || atEnd || appeared) output.scrollTop = output.scrollHeight;
    }
    noOutput.textContent = RUNNING.has(job.status) || job.status === 'CREATED' ? t('commands.no_output_yet') : t('commands.wrote_nothing');
    keepFocus(() => mount(detailActions,
      RUNNING.has(job.status) ? h('button', { type: 'button', class: 'danger small', dataset: { focus: 'stop' }, onclick: () => act(job, 'stop') },
        t('commands.stop'), h('span', { class: 'visually-hidden' }, ` (#${job.id})`)) : null,
      job.status === 'CREATED' ? h('button', { type: 'button', class: 'small', dataset: { focus: 'start' }, onclick: () => act(job, 'start') },
        t('commands.start'), h('span', { class: 'visually-hidden' }, ` (#${job.id})`)) : null,
      RUNNING.has(job.status) ? h('span', { class: 'muted small-text' }, t('commands.output_follows')) : null), () => (output.hidden ? detailTitle : output));
  };

  // --- the newest jobs
  const list = h('tbody');
  const jobsNote = h('p', { class: 'muted small-text' });
  const columns = { job: t('commands.job'), command: t('commands.command'), args: t('commands.arguments'), status: t('commands.status'),
    created: t('commands.created'), by: t('commands.by'), took: t('commands.took'), failed: t('commands.failed') };
  const jobsTable = h('div', { class: 'table-wrap jobs-table', tabindex: 0, role: 'region', 'aria-label': t('commands.newest_jobs') }, h('table', { class: 'stack' },
    h('caption', { class: 'visually-hidden' }, t('commands.newest_jobs')),
    h('thead', {}, h('tr', {}, Object.values(columns).map((label) => h('th', { scope: 'col' }, label)))),
    list));
  const jobsMessage = h('div');

  const choose = (id, push) => {
    selected = id;
    const address = `#/admin/commands?job=${id}`;
    if (location.hash !== address) history[push ? 'pushState' : 'replaceState'](null, '', address);
  };

  const paintJobs = () => keepFocus(() => {
    jobsTable.hidden = !jobs.length;
    jobsNote.textContent = !jobs.length ? t('commands.no_jobs')
      : total > jobs.length ? t('commands.newest_of', { count: jobs.length, total }) : '';
    mount(list, jobs.map((job) => h('tr', { dataset: { job: job.id }, class: job.id === selected ? 'selected' : null, 'aria-current': job.id === selected ? 'true' : null },
      h('td', { 'data-label': columns.job, 'data-column': 'job' }, h('a', {
        href: `#/admin/commands?job=${job.id}`, dataset: { focus: `job-${job.id}` }, 'aria-label': t('commands.job_link', { id: String(job.id), command: job.command }),
        onclick: (e) => {
          if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          choose(job.id, true);
          paintJobs();
          refresh().then(() => { if (alive()) { detail.scrollIntoView({ block: 'nearest' }); detailTitle.focus({ preventScroll: true }); } });
        },
      }, `#${job.id}`)),
      h('td', { 'data-label': columns.command, 'data-column': 'command', class: 'command-name' }, breakable(job.command)),
      h('td', { 'data-label': columns.args, 'data-column': 'args', class: 'args' }, commandLine(job) ? h('code', { dir: 'ltr' }, commandLine(job)) : ''),
      h('td', { 'data-label': columns.status, 'data-column': 'status' }, statusBadge(job)),
      h('td', { 'data-label': columns.created, 'data-column': 'created', class: 'when', title: formatDateTime(job.created_at) }, when(job.created_at)),
      h('td', { 'data-label': columns.by, 'data-column': 'by' }, who(job.user)),
      h('td', { 'data-label': columns.took, 'data-column': 'took', class: 'when' }, duration(job)),
      h('td', { 'data-label': columns.failed, 'data-column': 'failed' }, failedCell(job)))));
  });

  // The list, with the detail of each job not known to be finished (a finished one does not change).
  const loadJobs = async () => {
    const data = await api(`${BASE}/jobs/`, { params: { page_size: JOBS_SHOWN } });
    const found = await Promise.all((data.data || []).map((brief) => {
      const known = details.get(brief.id);
      if (known && known.status === 'FINISHED') return known;
      return api(`${BASE}/jobs/${brief.id}/`).then((job) => { details.set(job.id, job); return job; })
        .catch(() => ({ ...brief, args: [], kwargs: {}, failed: false }));
    }));
    total = data.total ?? found.length;
    jobs = found;
  };

  // --- the backups in the data folder (read again when a backup job has finished since)
  const backupsBody = h('div');
  let backupsSeen = null; // the finished backup jobs when the list was last read
  const loadBackups = async () => {
    const seen = jobs.filter((j) => j.command === 'backup' && j.status === 'FINISHED').map((j) => j.id).join(',');
    if (seen === backupsSeen) return;
    backupsSeen = seen;
    try {
      const found = (await api(`${BASE}/backups/`)).backups || [];
      if (!alive()) return;
      const shown = found.slice(0, BACKUPS_SHOWN);
      mount(backupsBody,
        found.length ? [
          h('ul', { class: 'plain backup-list', 'aria-label': t('commands.backups_newest_first') }, shown.map((b) => h('li', { dataset: { backup: b.name } },
            h('div', { class: 'backup-name' }, h('code', {}, b.name),
              h('span', { class: 'muted small-text block' }, t('commands.backup_size_written', { size: fileSize(b.size), when: formatDateTime(b.created) }))),
            mayDownload ? downloadLink(b.name) : null))),
          found.length > shown.length ? h('p', { class: 'muted small-text' }, t('commands.backups_newest_of', { count: shown.length, total: found.length })) : null,
          mayDownload ? h('p', { class: 'muted small-text' }, t('commands.archive_keep_safe'), ' ',
            t('commands.restore_with'), ' ', h('code', { dir: 'ltr' }, 'catalogue restore ARCHIVE'))
            : h('p', { class: 'muted small-text only-superusers' }, ONLY_SUPERUSERS)]
          : h('p', { class: 'muted' }, t('commands.no_backups')));
    } catch (error) {
      backupsSeen = null;
      if (alive()) mount(backupsBody, errorBox(error));
    }
  };
  const backupsPanel = h('section', { class: 'panel backups', 'aria-labelledby': 'backups-title' },
    h('h2', { id: 'backups-title' }, t('commands.backups')), backupsBody);

  const refresh = async () => {
    try {
      await loadJobs();
      await loadBackups();
      mount(jobsMessage);
      if (selected && !jobs.some((j) => j.id === selected && details.get(j.id) === j)) {
        try { details.set(selected, await api(`${BASE}/jobs/${selected}/`)); } catch (error) {
          if (!alive()) return;
          detailMessage.textContent = '';
          mount(jobsMessage, errorBox(new Error(t('commands.job_error', { id: String(selected), message: error.message }))));
          selected = null;
        }
      }
      if (!alive()) return;
      if (!selected && jobs.length) selected = jobs[0].id;
      paintJobs();
      paintDetail();
    } catch (error) {
      if (alive()) mount(jobsMessage, errorBox(error));
    }
    schedule();
  };

  function schedule() {
    clearTimeout(timer);
    if (!alive()) return;
    const working = jobs.some((j) => RUNNING.has(j.status)) || RUNNING.has(details.get(selected)?.status);
    if (working) timer = setTimeout(() => { if (alive()) refresh(); }, POLL_MS);
  }

  // --- running a command
  const run = async (name, args, message, button) => {
    message.textContent = '';
    button.disabled = true;
    try {
      const data = await api(`${BASE}/commands/${encodeURIComponent(name)}/`, { method: 'POST', json: { args, kwargs: {}, autostart: true } });
      const job = data.data;
      details.set(job.id, job);
      choose(job.id, false);
      toast(t('commands.job_made', { id: String(job.id), command: name }));
      await refresh();
      if (alive()) detail.scrollIntoView({ block: 'nearest' });
    } catch (error) {
      message.textContent = error.message;
    } finally { button.disabled = false; }
  };

  const commandItem = (name, help) => {
    const input = h('input', { name: 'args', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', dir: 'ltr', placeholder: t('commands.args_example') });
    const previewId = `args-of-${name.replace(/[^\w-]/g, '_')}`;
    input.setAttribute('aria-describedby', previewId);
    const preview = h('p', { class: 'args-preview small-text', id: previewId });
    const message = h('p', { class: 'error', role: 'alert' });
    const button = h('button', { type: 'submit' }, t('commands.run'), h('span', { class: 'visually-hidden' }, ` ${name}`));
    const paintPreview = () => {
      try {
        const words = splitArgs(input.value);
        preview.className = 'args-preview small-text muted';
        mount(preview, words.length ? [t('commands.sends_arguments', { count: words.length }), ' ',
          h('span', { dir: 'ltr' }, words.map((w) => [h('code', { class: 'arg' }, w === '' ? t('commands.empty_argument') : w), ' ']))] : null);
      } catch (error) {
        preview.className = 'args-preview small-text warn';
        preview.textContent = error.message;
      }
    };
    input.addEventListener('input', () => { message.textContent = ''; paintPreview(); });
    paintPreview();
    const form = h('form', { class: 'command-form', 'aria-label': t('commands.run_named', { command: name }) },
      h('div', { class: 'command-row' }, field(h('span', {}, t('commands.arguments'), h('span', { class: 'visually-hidden' }, ` (${name})`)), input), button),
      preview, message);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      let args;
      try { args = splitArgs(input.value); } catch (error) { message.textContent = t('commands.not_sent', { problem: error.message }); input.focus(); return; }
      await run(name, args, message, button);
    });
    const failed = help instanceof Error;
    const about = describe(help);
    return h('li', { class: 'command', dataset: { command: name } },
      h('h3', {}, h('code', {}, breakable(name))),
      about ? h('p', { class: 'muted small-text about', dir: 'auto' }, about) : null,
      h('details', { class: 'help' }, h('summary', {}, t('commands.help'), h('span', { class: 'visually-hidden' }, ` (${name})`)),
        failed ? errorBox(help) : h('pre', { class: 'help-text', tabindex: 0, dir: 'ltr', 'aria-label': t('commands.help_of', { command: name }) }, help || t('commands.no_help'))),
      form);
  };

  const shortcutMessage = h('p', { class: 'error', role: 'alert' });
  const shortcuts = SHORTCUTS.filter(([name]) => names.includes(name));
  const shortcutPanel = shortcuts.length ? h('section', { class: 'panel shortcuts', 'aria-labelledby': 'shortcuts-title' },
    h('h2', { id: 'shortcuts-title' }, t('commands.common_tasks')),
    h('div', { class: 'actions' }, shortcuts.map(([name, label, question]) => {
      const button = h('button', { type: 'button', class: 'secondary', dataset: { command: name }, title: describe(helps[names.indexOf(name)]) || null,
        onclick: async () => {
          if (question && !await confirmDialog(question, label)) return;
          await run(name, [], shortcutMessage, button);
        } }, label);
      return button;
    })),
    h('p', { class: 'muted small-text' }, t('commands.shortcuts_about')),
    shortcutMessage) : null;

  const commandsPanel = h('section', { class: 'panel commands', 'aria-labelledby': 'commands-title' },
    h('h2', { id: 'commands-title' }, t('commands.commands')),
    h('p', { class: 'muted small-text' }, t('commands.arguments_about')),
    names.length ? h('ul', { class: 'plain command-list' }, names.map((name, i) => commandItem(name, helps[i])))
      : h('p', { class: 'muted' }, t('commands.no_commands')));

  const jobsPanel = h('section', { class: 'panel jobs', 'aria-labelledby': 'jobs-title' },
    h('h2', { id: 'jobs-title' }, t('commands.jobs')), jobsMessage, jobsNote, jobsTable);

  mount(body, h('div', { class: 'commands-layout' },
    h('div', { class: 'commands-col' }, shortcutPanel, names.includes('backup') ? backupsPanel : null, commandsPanel),
    h('div', { class: 'jobs-col' }, detail, jobsPanel)), announce);
  await refresh();
}
