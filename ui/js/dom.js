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

// An abstract as the pages show it. Paragraphs (blank lines) and line breaks are kept, and so is
// a small set of markup, as GeoNode keeps HTML abstracts: bold, italic, underline, links (http,
// https and mailto only), lists, paragraphs, line breaks, quotes and code. The text is parsed
// into an inert document (nothing in it runs or loads) and rebuilt element by element from that
// list; any other tag is dropped with its text kept, and scripts and styles with their text.
const KEPT_TAGS = new Set(['p', 'br', 'b', 'strong', 'i', 'em', 'u', 'ul', 'ol', 'li', 'a', 'blockquote', 'code', 'pre']);
const BLOCK_TAGS = /<\s*\/?\s*(p|br|div|ul|ol|li|h[1-6]|blockquote|pre|table|tr|td|th)\b/i;
const SKIPPED_TAGS = new Set(['script', 'style', 'template', 'iframe', 'object', 'embed', 'noscript', 'title', 'head', 'svg', 'math']);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

function rebuilt(from, to) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) { to.append(document.createTextNode(node.data)); continue; }
    if (node.nodeType !== Node.ELEMENT_NODE) continue;
    const tag = node.localName;
    if (SKIPPED_TAGS.has(tag)) continue;
    let el = null;
    if (KEPT_TAGS.has(tag)) {
      el = document.createElement(tag);
      if (tag === 'a') {
        const href = node.getAttribute('href') || '';
        if (/^(https?:|mailto:)/i.test(href.trim())) { el.href = href.trim(); el.rel = 'noopener noreferrer nofollow'; }
      }
    } else if (tag === 'div' || HEADINGS.has(tag)) {
      el = document.createElement('p');  // a heading inside an abstract would break the page's outline
    }
    if (HEADINGS.has(tag)) { const strong = document.createElement('strong'); el.append(strong); rebuilt(node, strong); } else rebuilt(node, el || to);
    if (el) to.append(el);
  }
}

// Parsing is inert, but Chromium reports every event handler attribute it meets against the
// page's CSP: they are taken out of the text first (the rebuilding keeps none anyway).
const HANDLERS = /[\s/]on[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]*)/gi;
function parsed(source) {
  return new DOMParser().parseFromString(`<body>${source.replace(HANDLERS, ' ')}</body>`, 'text/html');
}

function inline(source) {
  const doc = parsed(source);
  const out = document.createDocumentFragment();
  rebuilt(doc.body, out);
  return out;
}

export function richText(text) {
  const source = String(text ?? '').replace(/\r\n?/g, '\n').trim();
  const out = document.createDocumentFragment();
  if (!source || source === 'None') return out;
  if (BLOCK_TAGS.test(source)) {  // written as HTML: its own paragraphs, whitespace as HTML has it
    const doc = parsed(source);
    const holder = h('div', { class: 'rich html' });
    rebuilt(doc.body, holder);
    out.append(holder);
    return out;
  }
  // text, perhaps with inline markup: a blank line starts a paragraph, a newline breaks the line
  const holder = h('div', { class: 'rich' });
  for (const paragraph of source.split(/\n[ \t]*\n+/)) {
    const p = document.createElement('p');
    p.append(inline(paragraph.trim()));
    holder.append(p);
  }
  out.append(holder);
  return out;
}

// An abstract as one line of text (for a card): its markup and what scripts and styles hold left out.
export function plainText(text) {
  return String(text ?? '').replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ').replace(/\s+/g, ' ').trim();
}

// A button that copies a text and says so itself for a moment (a toast alone goes unnoticed).
export function copyButton(text, label = 'Copy', attrs = {}) {
  const button = h('button', { type: 'button', class: 'secondary small copy', ...attrs }, label);
  let timer;
  button.addEventListener('click', async () => {
    const value = typeof text === 'function' ? text() : text;
    let done = false;
    try { await navigator.clipboard.writeText(value); done = true; } catch { /* not allowed here: select it instead */ }
    if (!done) {
      const input = button.parentElement?.querySelector('input, textarea');
      input?.select();
      done = Boolean(input) && document.execCommand?.('copy');
    }
    button.textContent = done ? 'Copied ✓' : 'Press Ctrl+C';
    button.classList.toggle('copied', done);
    toast(done ? 'Copied.' : 'Selected: press Ctrl+C to copy.');
    clearTimeout(timer);
    timer = setTimeout(() => { button.textContent = label; button.classList.remove('copied'); }, 2000);
  });
  return button;
}
