// The web UI in the reader's language. Every sentence of the UI is a key of a message catalogue:
// ui/i18n/<language>/<area>.json, where <area> is the key's first part ("search.title" lives in
// search.json). A module loads the areas it uses before it is evaluated (`await load('search')`
// at its top), so `t()` is synchronous everywhere. Keys are written literally in the code
// (t('search.title')), never built, so that tests/ui/test_i18n_catalogues.py can check that every
// key used exists in every language and that every key in a catalogue is used.
//
// A message is a string with {name} placeholders, or, where a number changes the sentence, an
// object of plural forms chosen by Intl.PluralRules ("one", "other", and for Arabic "zero", "two",
// "few", "many"); "other" is always present. Numbers given as placeholders are formatted for the
// language. Dates and numbers elsewhere go through formatNumber/formatDate/formatDateTime here.

export const LANGUAGES = [['en', 'English'], ['fr', 'Français'], ['es', 'Español'], ['pt', 'Português'], ['ar', 'العربية']];
const CODES = LANGUAGES.map(([code]) => code);
const RIGHT_TO_LEFT = new Set(['ar']);
const STORAGE_KEY = 'catalogue.language';

function chosen() {
  try {
    const kept = localStorage.getItem(STORAGE_KEY);
    if (CODES.includes(kept)) return kept;
  } catch { /* storage refused: the browser's languages decide */ }
  for (const tag of navigator.languages || [navigator.language || 'en']) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (CODES.includes(base)) return base;
  }
  return 'en';
}

export const lang = chosen();
export const dir = RIGHT_TO_LEFT.has(lang) ? 'rtl' : 'ltr';
document.documentElement.lang = lang;
document.documentElement.dir = dir;

// The reader picks another language: it is remembered in this browser, and the page is drawn again.
export function setLanguage(code) {
  if (!CODES.includes(code) || code === lang) return;
  try { localStorage.setItem(STORAGE_KEY, code); } catch { /* not remembered, but still switched */ }
  location.reload();
}

const messages = Object.create(null);
const loading = new Map();

// Loads the catalogue areas named (once each; concurrent callers share the request).
export function load(...areas) {
  return Promise.all(areas.map((area) => {
    if (!loading.has(area)) {
      loading.set(area, fetch(`/ui/i18n/${lang}/${area}.json`)
        .then((r) => (r.ok ? r.json() : {}))
        .catch(() => ({}))
        .then((found) => { Object.assign(messages, found); }));
    }
    return loading.get(area);
  }));
}

// The catalogues of the shell, and those of the page the address opens, are asked for at once, side
// by side, rather than one after another as the modules that use them are evaluated.
load('common', 'nav');
if (/^#?\/?(search)?(\?|$)/.test(location.hash)) load('search', 'map', 'origin');

const plurals = new Intl.PluralRules(lang);
const numbers = new Intl.NumberFormat(lang);

// The message for `key` with its {placeholders} filled; the key itself when it is missing (the
// catalogue test keeps that from reaching a reader).
export function t(key, params) {
  let message = messages[key];
  if (message === undefined) return key;
  if (typeof message === 'object') {
    const count = params?.count ?? 0;
    message = (count === 0 && message.zero) || message[plurals.select(count)] || message.other;
  }
  if (!params) return message;
  return message.replace(/\{(\w+)\}/g, (whole, name) => {
    const value = params[name];
    if (value === undefined || value === null) return whole;
    return typeof value === 'number' ? numbers.format(value) : String(value);
  });
}

export function formatNumber(n, options) {
  return options ? new Intl.NumberFormat(lang, options).format(n) : numbers.format(n);
}

const dates = new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimes = new Intl.DateTimeFormat(lang, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

export function formatDate(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : dates.format(d);
}

export function formatDateTime(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : dateTimes.format(d);
}
