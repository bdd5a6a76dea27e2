// Building the page. User text only ever goes in as text (textContent, attribute values), never
// as HTML, so a title such as "<img onerror=...>" is shown, not run.

import { formatNumber, load, t } from './i18n.js';

await load('common');

// Dates go through the reader's language (i18n.js); these names stay for the pages that import them here.
export { formatDate, formatDateTime } from './i18n.js';

// The words of buttons every page shares, in the reader's language (the same as t('common.save')...).
export const WORDS = {
  save: t('common.save'), cancel: t('common.cancel'), delete: t('common.delete'), close: t('common.close'),
  edit: t('common.edit'), remove: t('common.remove'), add: t('common.add'), copy: t('common.copy'),
  download: t('common.download'), loading: t('common.loading'), yes: t('common.yes'), no: t('common.no'),
  previous: t('common.previous'), next: t('common.next'),
};

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

// A size in bytes as the reader's language writes it ("1.5 MB", "1,5 Mo", "1.5 ميغابايت").
export function formatBytes(n) {
  const units = ['kilobyte', 'megabyte', 'gigabyte', 'terabyte'];
  if (n < 1024) return formatNumber(n, { style: 'unit', unit: 'byte', unitDisplay: 'short' });
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return formatNumber(v, { style: 'unit', unit: units[i], unitDisplay: 'short', maximumFractionDigits: v < 10 ? 1 : 0 });
}

// A translated message with elements in it: `fill(t('x.y'), { layer: h('code', {}, name) })` gives
// the message's text with each {name} replaced by its element (for h()'s children).
export function fill(message, elements) {
  return String(message).split(/(\{\w+\})/).map((part) => {
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    return name && name in elements ? elements[name] : part;
  }).filter((part) => part !== '');
}

// A latitude or longitude as people read it: "35.00000° N", "10.5° W" (in the reader's language).
export function degrees(value, axis, digits = 5) {
  const text = formatNumber(Math.abs(value), { minimumFractionDigits: digits, maximumFractionDigits: digits });
  if (axis === 'lat') return value >= 0 ? t('common.degrees_north', { value: text }) : t('common.degrees_south', { value: text });
  return value >= 0 ? t('common.degrees_east', { value: text }) : t('common.degrees_west', { value: text });
}

// A point [longitude, latitude] as "35.00000° N, 10.00000° E".
export function pointText([x, y], digits = 5) {
  return t('common.point', { lat: degrees(y, 'lat', digits), lng: degrees(x, 'lng', digits) });
}

export function personName(user) {
  if (!user) return '';
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ');
  return full || user.username;
}

// A short note in the page's bottom corner: good news fades soon (or at the reader's next click or
// key), an error stays longer; the pointer or the keyboard on it keeps it, and its button closes it.
let toastTimer;
export function toast(message, kind = 'info') {
  const el = document.getElementById('toast');
  if (!el.dataset.ready) {  // the text is the page's live region (index.html); the button comes beside it
    el.dataset.ready = '1';
    el.append(h('button', { type: 'button', class: 'toast-close', 'aria-label': t('common.close_note'), onclick: hideToast }, '×'));
    const hold = () => clearTimeout(toastTimer);
    const resume = () => { if (el.classList.contains('show')) toastTimer = setTimeout(hideToast, 1500); };
    el.addEventListener('mouseenter', hold);
    el.addEventListener('mouseleave', resume);
    el.addEventListener('focusin', hold);
    el.addEventListener('focusout', resume);
    // good news goes as soon as the reader does something else
    const elsewhere = (e) => { if (el.classList.contains('show') && !el.classList.contains('error') && !el.contains(e.target)) hideToast(); };
    document.addEventListener('pointerdown', elsewhere, true);
    document.addEventListener('keydown', elsewhere, true);
  }
  el.className = `show ${kind}`;
  el.querySelector('.toast-text').textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(hideToast, kind === 'error' ? 8000 : 2500);
}

function hideToast() {
  clearTimeout(toastTimer);
  const el = document.getElementById('toast');
  if (el.contains(document.activeElement)) document.getElementById('main')?.focus({ preventScroll: true });
  el.className = '';
}

export function errorBox(error) {
  return h('p', { class: 'error', role: 'alert' }, error?.message || String(error));
}

// A confirmation in a modal <dialog>; resolves true when the person confirms.
export function confirmDialog(question, confirmLabel = WORDS.delete) {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm' },
      h('p', {}, question),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('no') }, WORDS.cancel),
        h('button', { type: 'button', class: 'danger', onclick: () => dialog.close('yes') }, confirmLabel)));
    dialog.addEventListener('close', () => { dialog.remove(); resolve(dialog.returnValue === 'yes'); });
    document.body.append(dialog);
    dialog.showModal();
  });
}

export const TYPE_LABELS = {
  dataset: t('common.type_dataset'), document: t('common.type_document'), map: t('common.type_map'),
  geostory: t('common.type_geostory'), dashboard: t('common.type_dashboard'),
};

export function typeImage(type) {
  const name = type === 'dataset' || type === 'document' || type === 'map' ? type : 'app';
  return `/ui/img/${name}.svg`;
}

// The licences a catalogue starts with (the identifiers the API takes), with short names (the
// licences' own names stay as their authors wrote them).
export const LICENCES = [['', '—'], ['not_known', t('common.licence_not_known')], ['varied_original', t('common.licence_varied_original')],
  ['cc-by', 'CC BY 4.0'], ['cc-by-sa', 'CC BY-SA 4.0'], ['cc-by-nd', 'CC BY-ND 4.0'], ['cc-by-nc', 'CC BY-NC 4.0'],
  ['cc-by-nc-sa', 'CC BY-NC-SA 4.0'], ['cc-by-nc-nd', 'CC BY-NC-ND 4.0'], ['cc0', t('common.licence_cc0')], ['odbl', 'ODbL 1.0'],
  ['odc-by', 'ODC-By 1.0'], ['pddl', 'PDDL 1.0'], ['public_domain', t('common.licence_public_domain')]];

export function licenceName(identifier) {
  return LICENCES.find(([id]) => id === identifier)?.[1] || identifier;
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
  if (!source || source === 'None') return out;  // i18n: not text (Python's None, stored as an abstract)
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
export function copyButton(text, label = WORDS.copy, attrs = {}) {
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
    button.textContent = done ? t('common.copied_button') : t('common.press_ctrl_c');
    button.classList.toggle('copied', done);
    toast(done ? t('common.copied') : t('common.selected_press_ctrl_c'));
    clearTimeout(timer);
    timer = setTimeout(() => { button.textContent = label; button.classList.remove('copied'); }, 2000);
  });
  return button;
}
