// Administration › Commands (staff): the management commands the catalogue offers over HTTP
// (GeoNode's /api/v2/management/), each with its help and a form to run it, and the jobs they
// made, newest first; a job's output is followed as it grows (polling while a job runs); and the
// backups in the data folder, which superusers may download (an archive holds password hashes
// and token digests, so staff see only their names).

import { api, currentUser } from '../api.js';
import { confirmDialog, errorBox, field, formatBytes, formatDateTime, h, keepFocus, mount, toast } from '../dom.js';

const BASE = '/api/v2/management';
const POLL_MS = 1000;
const JOBS_SHOWN = 20;
const RUNNING = new Set(['QUEUED', 'STARTED']);
const BACKUPS_SHOWN = 10;
const ONLY_SUPERUSERS = 'Only superusers may download backups: an archive holds password hashes and token digests.';
// The operator's usual tasks, offered as buttons where their commands are listed:
// [command, button label, question asked first (or null)].
const SHORTCUTS = [
  ['backup', 'Back up now', null],
  ['check', 'Check', null],
  ['repair', 'Repair', 'Run “repair” now? It may change the catalogue: its help says what it does.'],
  ['vacuum', 'Vacuum', null],
];

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
      if (end < 0) throw new SyntaxError('A single quote (\') is not closed.');
      word += line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      for (;;) {
        if (i >= line.length) throw new SyntaxError('A double quote (") is not closed.');
        const d = line[i];
        if (d === '"') { i += 1; break; }
        if (d === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) { word += line[i + 1]; i += 2; continue; }
        word += d;
        i += 1;
      }
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new SyntaxError('The arguments end with a lone backslash (\\).');
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
  if (seconds < 0.1) return '< 0.1 s';
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
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
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : formatDateTime(value);
}

// A command's name with places to break it after its underscores (they are long and unspaced).
function breakable(name) {
  return String(name).split(/(?<=_)/).flatMap((part, i) => (i ? [h('wbr'), part] : [part]));
}

function statusBadge(job) {
  const running = RUNNING.has(job.status);
  const kind = running ? 'status-running' : job.status === 'FINISHED' ? (job.failed ? 'status-failed' : 'status-finished') : 'light';
  return h('span', { class: `badge job-status ${kind}` },
    running ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, String(job.status || '').toLowerCase());
}

// Where a backup is downloaded from (superusers only).
const backupUrl = (name) => `${BASE}/backups/${encodeURIComponent(name)}`;

function downloadLink(name, cls = 'button small secondary') {
  return h('a', { href: backupUrl(name), download: name, class: cls, dataset: { backup: name } },
    'Download', h('span', { class: 'visually-hidden' }, ` ${name}`));
}

function failedCell(job) {
  if (job.status !== 'FINISHED') return h('span', { class: 'muted', title: 'Not finished' }, '—');
  return job.failed ? h('strong', { class: 'error' }, 'Yes') : 'No';
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

  mount(body, h('p', { class: 'loading' }, 'Loading the commands…'));
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
  const output = h('pre', { class: 'job-output', tabindex: 0 });
  const noOutput = h('p', { class: 'muted small-text', hidden: true });
  const detailMessage = h('p', { class: 'error', role: 'alert' });
  const detail = h('section', { class: 'panel job-detail', 'aria-labelledby': 'job-title', hidden: true },
    h('div', { class: 'panel-head' }, detailTitle, detailBadge), detailMeta, detailActions, detailMessage,
    h('h3', { class: 'output-title' }, 'Output'), noOutput, output);
  let shown = null; // the job painted in the detail (its id and status)

  const act = async (job, what) => {
    detailMessage.textContent = '';
    try {
      const data = await api(`${BASE}/jobs/${job.id}/${what}/`, { method: 'PATCH' });
      if (data?.data?.id === job.id) details.set(job.id, data.data);
      toast(what === 'stop' ? `Stopping job ${job.id}…` : `Job ${job.id} started.`);
    } catch (error) { detailMessage.textContent = error.message; }
    await refresh();
  };

  const paintDetail = () => {
    const job = selected && details.get(selected);
    detail.hidden = !job;
    if (!job) return;
    if (shown && shown.id === job.id && shown.status !== job.status) {
      announce.textContent = job.status === 'FINISHED'
        ? `Job ${job.id} ${job.failed ? 'failed' : 'finished'}.` : `Job ${job.id}: ${job.status.toLowerCase()}.`;
    }
    const first = !shown || shown.id !== job.id;
    shown = { id: job.id, status: job.status };
    mount(detailTitle, `Job ${job.id}: `, h('code', {}, breakable(job.command)));
    mount(detailBadge, statusBadge(job));
    const line = commandLine(job);
    mount(detailMeta,
      h('dt', {}, 'Arguments'), h('dd', {}, line ? h('code', {}, line) : h('span', { class: 'muted' }, 'none')),
      h('dt', {}, 'By'), h('dd', {}, who(job.user)),
      h('dt', {}, 'Created'), h('dd', {}, formatDateTime(job.created_at)),
      job.start_time ? [h('dt', {}, 'Ran'), h('dd', {}, new Date(job.start_time).toLocaleTimeString(),
        job.end_time ? ` – ${new Date(job.end_time).toLocaleTimeString()}` : ' – …', ` (${duration(job)})`)] : null,
      job.status === 'FINISHED' ? [h('dt', {}, 'Failed'), h('dd', {}, failedCell(job))] : null,
      job.archive ? [h('dt', {}, 'Archive'), h('dd', { class: 'job-archive' }, h('code', {}, job.archive), ' ',
        mayDownload ? downloadLink(job.archive, 'button small') : h('span', { class: 'muted small-text' }, ONLY_SUPERUSERS))] : null);
    // The output follows its end, unless the reader scrolled up to read something.
    const text = job.output_message || '';
    const atEnd = output.scrollHeight - output.scrollTop - output.clientHeight < 8;
    output.setAttribute('aria-label', `Output of job ${job.id}`);
    const appeared = output.hidden && Boolean(text);
    output.hidden = !text;
    noOutput.hidden = Boolean(text);
    if (first || output.textContent !== text) {
      output.textContent = text;
      if (first || atEnd || appeared) output.scrollTop = output.scrollHeight;
    }
    noOutput.textContent = RUNNING.has(job.status) || job.status === 'CREATED' ? 'No output yet.' : 'The job wrote nothing.';
    keepFocus(() => mount(detailActions,
      RUNNING.has(job.status) ? h('button', { type: 'button', class: 'danger small', dataset: { focus: 'stop' }, onclick: () => act(job, 'stop') },
        'Stop', h('span', { class: 'visually-hidden' }, ` job ${job.id}`)) : null,
      job.status === 'CREATED' ? h('button', { type: 'button', class: 'small', dataset: { focus: 'start' }, onclick: () => act(job, 'start') },
        'Start', h('span', { class: 'visually-hidden' }, ` job ${job.id}`)) : null,
      RUNNING.has(job.status) ? h('span', { class: 'muted small-text' }, 'The output below follows the job as it runs.') : null), () => (output.hidden ? detailTitle : output));
  };

  // --- the newest jobs
  const list = h('tbody');
  const jobsNote = h('p', { class: 'muted small-text' });
  const jobsTable = h('div', { class: 'table-wrap jobs-table', tabindex: 0, role: 'region', 'aria-label': 'The newest jobs' }, h('table', { class: 'stack' },
    h('caption', { class: 'visually-hidden' }, 'The newest jobs'),
    h('thead', {}, h('tr', {}, ['Job', 'Command', 'Arguments', 'Status', 'Created', 'By', 'Took', 'Failed'].map((t) => h('th', { scope: 'col' }, t)))),
    list));
  const jobsMessage = h('div');

  const choose = (id, push) => {
    selected = id;
    const address = `#/admin/commands?job=${id}`;
    if (location.hash !== address) history[push ? 'pushState' : 'replaceState'](null, '', address);
  };

  const paintJobs = () => keepFocus(() => {
    jobsTable.hidden = !jobs.length;
    jobsNote.textContent = !jobs.length ? 'No jobs yet: run a command to make one.'
      : total > jobs.length ? `The newest ${jobs.length} of ${total}.` : '';
    mount(list, jobs.map((job) => h('tr', { dataset: { job: job.id }, class: job.id === selected ? 'selected' : null, 'aria-current': job.id === selected ? 'true' : null },
      h('td', { 'data-label': 'Job' }, h('a', {
        href: `#/admin/commands?job=${job.id}`, dataset: { focus: `job-${job.id}` }, 'aria-label': `Job ${job.id}: ${job.command}`,
        onclick: (e) => {
          if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          choose(job.id, true);
          paintJobs();
          refresh().then(() => { if (alive()) { detail.scrollIntoView({ block: 'nearest' }); detailTitle.focus({ preventScroll: true }); } });
        },
      }, `#${job.id}`)),
      h('td', { 'data-label': 'Command', class: 'command-name' }, breakable(job.command)),
      h('td', { 'data-label': 'Arguments', class: 'args' }, commandLine(job) ? h('code', {}, commandLine(job)) : ''),
      h('td', { 'data-label': 'Status' }, statusBadge(job)),
      h('td', { 'data-label': 'Created', class: 'when', title: formatDateTime(job.created_at) }, when(job.created_at)),
      h('td', { 'data-label': 'By' }, who(job.user)),
      h('td', { 'data-label': 'Took', class: 'when' }, duration(job)),
      h('td', { 'data-label': 'Failed' }, failedCell(job)))));
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
          h('ul', { class: 'plain backup-list', 'aria-label': 'Backups, newest first' }, shown.map((b) => h('li', { dataset: { backup: b.name } },
            h('div', { class: 'backup-name' }, h('code', {}, b.name),
              h('span', { class: 'muted small-text block' }, `${formatBytes(b.size)}, written ${when(b.created)}`)),
            mayDownload ? downloadLink(b.name) : null))),
          found.length > shown.length ? h('p', { class: 'muted small-text' }, `The newest ${shown.length} of ${found.length}; the others are in the data folder’s backups/ folder.`) : null,
          mayDownload ? h('p', { class: 'muted small-text' }, 'An archive holds password hashes and token digests: keep it as safe as the server. ',
            h('code', {}, 'catalogue restore ARCHIVE'), ' puts it back (on the command line).')
            : h('p', { class: 'muted small-text only-superusers' }, ONLY_SUPERUSERS)]
          : h('p', { class: 'muted' }, 'No backups yet: “Back up now” makes one.'));
    } catch (error) {
      backupsSeen = null;
      if (alive()) mount(backupsBody, errorBox(error));
    }
  };
  const backupsPanel = h('section', { class: 'panel backups', 'aria-labelledby': 'backups-title' },
    h('h2', { id: 'backups-title' }, 'Backups'), backupsBody);

  const refresh = async () => {
    try {
      await loadJobs();
      await loadBackups();
      mount(jobsMessage);
      if (selected && !jobs.some((j) => j.id === selected && details.get(j.id) === j)) {
        try { details.set(selected, await api(`${BASE}/jobs/${selected}/`)); } catch (error) {
          if (!alive()) return;
          detailMessage.textContent = '';
          mount(jobsMessage, errorBox(new Error(`Job ${selected}: ${error.message}`)));
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
      toast(`Job ${job.id} made: ${name}.`);
      await refresh();
      if (alive()) detail.scrollIntoView({ block: 'nearest' });
    } catch (error) {
      message.textContent = error.message;
    } finally { button.disabled = false; }
  };

  const commandItem = (name, help) => {
    const input = h('input', { name: 'args', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', placeholder: 'e.g. --option value' });
    const previewId = `args-of-${name.replace(/[^\w-]/g, '_')}`;
    input.setAttribute('aria-describedby', previewId);
    const preview = h('p', { class: 'args-preview small-text', id: previewId });
    const message = h('p', { class: 'error', role: 'alert' });
    const button = h('button', { type: 'submit' }, 'Run', h('span', { class: 'visually-hidden' }, ` ${name}`));
    const paintPreview = () => {
      try {
        const words = splitArgs(input.value);
        preview.className = 'args-preview small-text muted';
        mount(preview, words.length ? [`Sends ${words.length} argument${words.length === 1 ? '' : 's'}: `,
          words.map((w) => [h('code', { class: 'arg' }, w === '' ? '(empty)' : w), ' '])] : null);
      } catch (error) {
        preview.className = 'args-preview small-text warn';
        preview.textContent = error.message;
      }
    };
    input.addEventListener('input', () => { message.textContent = ''; paintPreview(); });
    paintPreview();
    const form = h('form', { class: 'command-form', 'aria-label': `Run ${name}` },
      h('div', { class: 'command-row' }, field(h('span', {}, 'Arguments', h('span', { class: 'visually-hidden' }, ` for ${name}`)), input), button),
      preview, message);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      let args;
      try { args = splitArgs(input.value); } catch (error) { message.textContent = `${error.message} Nothing was sent.`; input.focus(); return; }
      await run(name, args, message, button);
    });
    const failed = help instanceof Error;
    const about = describe(help);
    return h('li', { class: 'command', dataset: { command: name } },
      h('h3', {}, h('code', {}, breakable(name))),
      about ? h('p', { class: 'muted small-text about' }, about) : null,
      h('details', { class: 'help' }, h('summary', {}, 'Help', h('span', { class: 'visually-hidden' }, ` for ${name}`)),
        failed ? errorBox(help) : h('pre', { class: 'help-text', tabindex: 0, 'aria-label': `Help of ${name}` }, help || '(no help)')),
      form);
  };

  const shortcutMessage = h('p', { class: 'error', role: 'alert' });
  const shortcuts = SHORTCUTS.filter(([name]) => names.includes(name));
  const shortcutPanel = shortcuts.length ? h('section', { class: 'panel shortcuts', 'aria-labelledby': 'shortcuts-title' },
    h('h2', { id: 'shortcuts-title' }, 'Common tasks'),
    h('div', { class: 'actions' }, shortcuts.map(([name, label, question]) => {
      const button = h('button', { type: 'button', class: 'secondary', dataset: { command: name }, title: describe(helps[names.indexOf(name)]) || null,
        onclick: async () => {
          if (question && !await confirmDialog(question, label)) return;
          await run(name, [], shortcutMessage, button);
        } }, label);
      return button;
    })),
    h('p', { class: 'muted small-text' }, 'Each runs its command with no arguments and shows its job.'),
    shortcutMessage) : null;

  const commandsPanel = h('section', { class: 'panel commands', 'aria-labelledby': 'commands-title' },
    h('h2', { id: 'commands-title' }, 'Commands'),
    h('p', { class: 'muted small-text' }, 'Arguments are split as a shell would: quote a value that has spaces ("like this"). Options go as they do on the command line: --option value.'),
    names.length ? h('ul', { class: 'plain command-list' }, names.map((name, i) => commandItem(name, helps[i])))
      : h('p', { class: 'muted' }, 'This catalogue offers no commands over HTTP.'));

  const jobsPanel = h('section', { class: 'panel jobs', 'aria-labelledby': 'jobs-title' },
    h('h2', { id: 'jobs-title' }, 'Jobs'), jobsMessage, jobsNote, jobsTable);

  mount(body, h('div', { class: 'commands-layout' },
    h('div', { class: 'commands-col' }, shortcutPanel, names.includes('backup') ? backupsPanel : null, commandsPanel),
    h('div', { class: 'jobs-col' }, detail, jobsPanel)), announce);
  await refresh();
}
