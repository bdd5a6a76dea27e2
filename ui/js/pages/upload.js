// Upload: drop files (a Shapefile with its parts, a zip, GeoPackage, GeoJSON, CSV, KML,
// GeoTIFF, with optional .sld and .xml side files; or any document), watch the bytes go, then
// the import until it is finished or failed. Files the catalogue would refuse are named before
// anything is sent.

import { api, currentUser, followExecution, sendWithProgress } from '../api.js';
import { formatBytes, h, mount } from '../dom.js';
import { formatNumber, load, t } from '../i18n.js';

await load('upload');

const DATA_BASES = ['shp', 'zip', 'gpkg', 'geojson', 'json', 'csv', 'kml', 'kmz', 'tif', 'tiff'];
const SHAPE_PARTS = { dbf: 'dbf_file', shx: 'shx_file', prj: 'prj_file', cpg: 'cpg_file', cst: 'cst_file' };
const DOCUMENTS = ['pdf', 'png', 'jpg', 'jpeg', 'gif', 'svg', 'txt', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf', 'zip', 'xml', 'json', 'md', 'tif', 'tiff'];

const ext = (file) => (file.name.includes('.') ? file.name.split('.').pop().toLowerCase() : '');
const stem = (file) => file.name.replace(/\.[^.]*$/, '');

let limits = null;
async function sizeLimits() {
  if (!limits) {
    try {
      const data = await api('/api/v2/upload-size-limits', { params: { page_size: 50 } });
      limits = Object.fromEntries((data['upload-size-limits'] || []).map((l) => [l.slug, l]));
    } catch { limits = {}; }
  }
  return limits;
}

// Group dropped files into uploads: each data file with its side files; the rest as documents.
export function plan(files, asDocuments) {
  const jobs = [], problems = [];
  if (asDocuments) {
    for (const file of files) {
      if (DOCUMENTS.includes(ext(file))) jobs.push({ kind: 'document', name: file.name, files: { doc_file: file }, size: file.size });
      else problems.push(t('upload.document_refused', { file: file.name, ext: ext(file) || '?' }));
    }
    return { jobs, problems };
  }
  const used = new Set();
  for (const base of files.filter((f) => DATA_BASES.includes(ext(f)))) {
    const job = { kind: 'dataset', name: base.name, files: {}, size: 0 };
    const key = ext(base) === 'zip' ? 'zip_file' : ext(base) === 'kmz' ? 'kmz_file' : 'base_file';
    job.files[key] = base;
    used.add(base);
    const siblings = files.filter((f) => f !== base && stem(f) === stem(base));
    if (ext(base) === 'shp') {
      for (const [part, field] of Object.entries(SHAPE_PARTS)) {
        const found = siblings.find((f) => ext(f) === part);
        if (found) { job.files[field] = found; used.add(found); }
      }
      const missing = ['dbf', 'shx'].filter((needed) => !siblings.some((f) => ext(f) === needed));
      for (const needed of missing) problems.push(t('upload.part_missing', { file: base.name, ext: needed }));
      if (missing.length) continue;
    }
    for (const [side, field] of [['sld', 'sld_file'], ['xml', 'xml_file']]) {
      const found = siblings.find((f) => ext(f) === side) || (files.filter((f) => ext(f) === side && !used.has(f)).length === 1 && files.filter((f) => DATA_BASES.includes(ext(f))).length === 1 ? files.find((f) => ext(f) === side) : null);
      if (found) { job.files[field] = found; used.add(found); }
    }
    job.size = Object.values(job.files).reduce((n, f) => n + f.size, 0);
    jobs.push(job);
  }
  // Files that are not data (a README, a licence) dropped with data are left aside, and said so;
  // dropped alone they are a mistake worth a warning.
  const aside = [];
  for (const file of files) {
    if (used.has(file)) continue;
    const e = ext(file);
    if (Object.keys(SHAPE_PARTS).includes(e) || e === 'sld' || e === 'xml') problems.push(t('upload.side_alone', { file: file.name }));
    else if (jobs.length) aside.push(file.name);
    else problems.push(t('upload.not_data', { file: file.name, ext: e || '?' }));
  }
  return { jobs, problems, aside };
}

// What an import's state means to a person.
export function describeState(state) {
  if (state.status === 'ready') return t('upload.state_ready');
  if (state.status === 'finished') return t('upload.state_finished');
  if (state.status === 'failed') return t('upload.state_failed');
  return state.progress ? t('upload.state_running_percent', { percent: formatNumber(Math.round(state.progress) / 100, { style: 'percent' }) })
    : t('upload.state_running');
}


export async function render(main, ctx) {
  if (!currentUser()) { location.hash = `#/login?next=${encodeURIComponent('/upload')}`; return; }
  const hints = { dataset: t('upload.hint_dataset'), document: t('upload.hint_document') };
  // The file input is reached through the drop zone (a button for the keyboard: Enter or Space
  // opens the file chooser), so it is no second, invisible stop of the Tab key.
  const input = h('input', { type: 'file', multiple: true, id: 'upload-files', class: 'visually-hidden', tabindex: '-1', 'aria-hidden': 'true' });
  const kind = h('fieldset', { class: 'kind' }, h('legend', {}, t('upload.what')),
    h('label', {}, h('input', { type: 'radio', name: 'kind', value: 'dataset', checked: ctx.params.get('kind') !== 'document' }), ' ', t('upload.kind_dataset')),
    h('label', {}, h('input', { type: 'radio', name: 'kind', value: 'document', checked: ctx.params.get('kind') === 'document' }), ' ', t('upload.kind_document')));
  const hint = h('span', { id: 'upload-hint' });
  const drop = h('div', { class: 'dropzone', tabindex: '0', role: 'button', 'aria-describedby': 'upload-hint', onclick: () => input.click() },
    h('strong', {}, t('upload.drop_here')), hint);
  const paintHint = () => { hint.textContent = hints[kind.querySelector('input:checked').value]; };
  kind.addEventListener('change', paintHint);
  paintHint();
  const queue = h('ol', { class: 'uploads', 'aria-live': 'polite', 'aria-label': t('upload.queue') });
  mount(main, h('section', { class: 'page' }, h('h1', {}, t('upload.title')), kind, drop, input, queue));
  const limitsReady = sizeLimits();

  const start = async (fileList) => {
    const files = [...fileList];
    if (!files.length) return;
    const asDocuments = kind.querySelector('input:checked').value === 'document';
    const { jobs, problems, aside = [] } = plan(files, asDocuments);
    const found = await limitsReady;
    for (const problem of problems) queue.prepend(h('li', { class: 'upload failed' }, h('p', { class: 'error' }, problem)));
    if (aside.length) {
      queue.prepend(h('li', { class: 'upload aside' }, h('p', { class: 'muted' }, t('upload.aside', { files: aside.join(', ') }))));
    }
    for (const job of jobs) {
      const limit = found[job.kind === 'document' ? 'document_upload_size' : 'dataset_upload_size'];
      if (limit && job.size > limit.max_size) {
        queue.prepend(h('li', { class: 'upload failed' }, h('p', { class: 'error' },
          t('upload.too_large', { file: job.name, size: formatBytes(job.size), limit: limit.max_size_label }))));
        continue;
      }
      send(job, queue);
    }
    // the keyboard's place moves to what the files became (their progress, a refusal), unless
    // the person has gone elsewhere meanwhile
    const first = queue.firstElementChild;
    if (first && (document.activeElement === drop || document.activeElement === document.body || document.activeElement === input)) {
      first.tabIndex = -1;
      first.focus();
    }
  };
  input.addEventListener('change', () => { start(input.files); input.value = ''; });
  drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); input.click(); } });
  for (const name of ['dragenter', 'dragover']) drop.addEventListener(name, (e) => { e.preventDefault(); drop.classList.add('over'); });
  for (const name of ['dragleave', 'drop']) drop.addEventListener(name, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => { e.preventDefault(); start(e.dataTransfer.files); });
}

async function send(job, queue) {
  const bar = h('progress', { max: 100, value: 0, 'aria-label': t('upload.progress', { file: job.name }) });
  const status = h('p', { class: 'status' }, t('upload.sending', { size: formatBytes(job.size) }));
  const item = h('li', { class: 'upload' }, h('strong', {}, job.name), bar, status);
  queue.prepend(item);
  const form = new FormData();
  for (const [key, file] of Object.entries(job.files)) form.append(key, file, file.name);
  if (job.kind === 'document') form.append('title', job.name.replace(/\.[^.]*$/, ''));
  try {
    const answer = await sendWithProgress(job.kind === 'document' ? '/api/v2/documents' : '/api/v2/uploads/upload', form, (sent, total) => {
      bar.value = Math.round((sent / total) * 100);
      status.textContent = t('upload.sent', { sent: formatBytes(sent), total: formatBytes(total) });
    });
    bar.value = 100;
    if (job.kind === 'document') {
      const doc = answer.document;
      finished(item, status, [[`/document/${doc.pk}`, doc.title]]);
      return;
    }
    status.textContent = t('upload.received');
    bar.removeAttribute('value');
    const state = await followExecution(answer.execution_id, (s) => {
      if (s.status === 'running' || s.status === 'ready') status.textContent = describeState(s);
    });
    if (state.status === 'failed') throw new Error(state.log || t('upload.state_failed'));
    const made = state.output_params?.resources || [];
    if (!made.length) { finished(item, status, null, job.name); return; }
    // name what was made: the title of each new dataset (a zip may hold several)
    const titles = await Promise.all(made.map((r) => api(`/api/v2/resources/${r.id}`, { params: { 'exclude[]': '*', 'include[]': ['pk', 'title'] } })
      .then((d) => d.resource?.title).catch(() => null)));
    finished(item, status, made.map((r, i) => [`/dataset/${r.id}`, titles[i] || job.name]));
  } catch (error) {
    item.classList.add('failed');
    bar.value = 0;
    status.className = 'error';
    status.textContent = t('upload.failed', { file: job.name, reason: error.message });
  }
}

// The item of a finished upload, with a link to each resource made: [[path, title], …].
function finished(item, status, made) {
  item.classList.add('done');
  const bar = item.querySelector('progress');
  bar.value = 100;
  mount(status, t('upload.done'), ' ', (made || []).map(([path, title], i) => [i ? ' · ' : '', h('a', { href: `#${path}` }, t('upload.open', { title }))]));
}
