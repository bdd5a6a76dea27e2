// Building the page. User text only ever goes in as text (textContent, attribute values), never
// as HTML, so a title such as "<img onerror=...>" is shown, not run.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value') el.value = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function mount(target, ...children) {
  target.replaceChildren();
  append(target, children);
  return target;
}

export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('small', {}, hint) : null);
}

export function select(name, options, current) {
  return h('select', { name },
    options.map(([value, label]) => h('option', { value, selected: String(value) === String(current ?? '') }, label)));
}

export function formatDate(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function personName(user) {
  if (!user) return '';
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ');
  return full || user.username;
}

let toastTimer;
export function toast(message, kind = 'info') {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.className = `show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.className = ''; }, 4000);
}

export function errorBox(error) {
  return h('p', { class: 'error', role: 'alert' }, error?.message || String(error));
}

// A confirmation in a modal <dialog>; resolves true when the person confirms.
export function confirmDialog(question, confirmLabel = 'Delete') {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm' },
      h('p', {}, question),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('no') }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => dialog.close('yes') }, confirmLabel)));
    dialog.addEventListener('close', () => { dialog.remove(); resolve(dialog.returnValue === 'yes'); });
    document.body.append(dialog);
    dialog.showModal();
  });
}

export const TYPE_LABELS = { dataset: 'Dataset', document: 'Document', map: 'Map', geostory: 'Story', dashboard: 'Dashboard' };

export function typeImage(type) {
  const name = type === 'dataset' || type === 'document' || type === 'map' ? type : 'app';
  return `/ui/img/${name}.svg`;
}

// The licences a catalogue starts with (the identifiers the API takes), with short names.
export const LICENCES = [['', '—'], ['not_known', 'Not specified'], ['varied_original', 'Varied / original'], ['cc-by', 'CC BY 4.0'],
  ['cc-by-sa', 'CC BY-SA 4.0'], ['cc-by-nd', 'CC BY-ND 4.0'], ['cc-by-nc', 'CC BY-NC 4.0'], ['cc-by-nc-sa', 'CC BY-NC-SA 4.0'],
  ['cc-by-nc-nd', 'CC BY-NC-ND 4.0'], ['cc0', 'CC0 (public domain dedication)'], ['odbl', 'ODbL 1.0'], ['odc-by', 'ODC-By 1.0'],
  ['pddl', 'PDDL 1.0'], ['public_domain', 'Public domain']];

export function licenceName(identifier) {
  return LICENCES.find(([id]) => id === identifier)?.[1] || identifier;
}

// A date with its time of day (minutes), for things that happen several times a day.
export function formatDateTime(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value)
    : `${formatDate(value)} ${d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}`;
}

// Re-renders part of a page without losing the keyboard's place: the focused element's
// data-focus key is looked for again afterwards, else `fallback(key)` says where to go.
export function keepFocus(fn, fallback) {
  const key = document.activeElement?.dataset?.focus;
  fn();
  if (!key || document.activeElement?.dataset?.focus === key) return;
  (document.querySelector(`[data-focus="${CSS.escape(key)}"]`) || fallback?.(key))?.focus();
}

// A checkbox with its label after it.
export function checkbox(name, label, checked, attrs = {}) {
  return h('label', { class: 'check' }, h('input', { type: 'checkbox', name, checked: Boolean(checked), ...attrs }), ' ', label);
}
