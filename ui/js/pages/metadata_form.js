// The metadata form, drawn from the catalogue's metadata schema (GeoNode 5's
// /api/v2/metadata/schema/, asked in the reader's language) and filled from the resource's
// instance (/api/v2/metadata/instance/{pk}/). Each property of the schema becomes a field by its
// shape: text, long text, date, a code list (oneOf), a choice from a list (an object with id and
// label), a list of words or of choices, or a group of such (contacts by role); a field the
// server adds appears by itself. Labels and help come from the schema; the form's own words from
// the `edit` catalogue. Saving PUTs every editable value; a 422 puts each refused field's message
// beside it and moves the focus to the first.

import { api } from '../api.js';
import { h } from '../dom.js';
import { t, load, lang } from '../i18n.js';

await load('edit');

// The groups the fields are shown in, and which field goes where; a field not named here goes in
// the last group.
const GROUPS = [
  ['identification', ['uuid', 'title', 'abstract', 'date', 'date_type', 'edition', 'doi', 'purpose', 'language']],
  ['classification', ['category', 'hkeywords', 'tkeywords', 'regions', 'spatial_representation_type']],
  ['constraints', ['license', 'restriction_code_type', 'constraints_other', 'attribution']],
  ['quality', ['data_quality_statement', 'maintenance_frequency', 'supplemental_information']],
  ['temporal', ['temporal_extent_start', 'temporal_extent_end']],
  ['contacts', ['contacts']],
  ['other', []],
];

function groupLegend(name) {
  return {
    identification: t('edit.group_identification'),
    classification: t('edit.group_classification'),
    constraints: t('edit.group_constraints'),
    quality: t('edit.group_quality'),
    temporal: t('edit.group_temporal'),
    contacts: t('edit.group_contacts'),
    other: t('edit.group_other'),
  }[name];
}

// Where the choices of a field come from: the list the schema gives (category, licence), else the
// autocomplete address it names (GeoNode's: ?q= the text typed, {"results": [{"id", "label"}]},
// keywords as their names), labelled in the reader's language.
function sourceOf(prop) {
  const option = prop?.['ui:options']?.['geonode-ui:autocomplete'];
  const url = typeof option === 'string' ? option : option?.url;
  const choices = prop?.properties?.id?.oneOf;
  const creatable = Boolean(option?.creatable);
  if (Array.isArray(choices)) {
    const all = async () => choices.map((c) => ({ id: c.const, label: c.title ?? String(c.const) }));
    return { creatable, all, find: async (q) => {
      const needle = q.toLocaleLowerCase(lang);
      return (await all()).filter((c) => c.label.toLocaleLowerCase(lang).includes(needle)).slice(0, 20);
    } };
  }
  if (!url || !url.startsWith('/')) return null;  // only this catalogue's own addresses
  return { creatable, find: (q) => api(url, { params: { q, lang } }).then((data) => (data?.results || [])
    .map((r) => (typeof r === 'object' && r !== null ? { id: r.id, label: r.label ?? String(r.id) } : { id: r, label: String(r) }))) };
}

const types = (prop) => [].concat(prop?.type ?? []);
const isChoice = (prop) => types(prop).includes('object') && prop.properties?.id && prop.properties?.label;
const hidden = (prop) => prop?.['ui:widget'] === 'hidden' || prop?.properties?.id?.['ui:widget'] === 'hidden' && !sourceOf(prop);
const capitalised = (text) => (text ? text.charAt(0).toLocaleUpperCase(lang) + text.slice(1) : text);

let serial = 0;
const nextId = (stem) => `${stem}-${++serial}`;

// A text box that suggests choices as one types (ARIA 1.2 combobox with a list box): the arrows
// move through them, Enter takes one (or, where new values are allowed, the text typed), Escape
// closes the list. Where new values are allowed, Enter takes the text typed unless a suggestion
// was moved to (or autoSelect says the first suggestion is meant).
export function combobox({ find, creatable, onPick, attrs, autoSelect = !creatable }) {
  const id = nextId('combo');
  const list = h('ul', { role: 'listbox', id: `${id}-list`, class: 'combo-list', hidden: true });
  const input = h('input', { type: 'text', role: 'combobox', 'aria-autocomplete': 'list', 'aria-expanded': 'false',
    'aria-controls': list.id, autocomplete: 'off', ...attrs });
  let items = [], active = -1, timer, asked = 0;
  const draw = () => {
    list.replaceChildren(...items.map((item, i) => h('li', { role: 'option', id: `${id}-${i}`, 'aria-selected': String(i === active),
      onmousedown: (e) => { e.preventDefault(); take(i); } }, item.label)));
    const open = items.length > 0;
    list.hidden = !open;
    input.setAttribute('aria-expanded', String(open));
    if (open && active >= 0) input.setAttribute('aria-activedescendant', `${id}-${active}`);
    else input.removeAttribute('aria-activedescendant');
  };
  const close = () => { items = []; active = -1; draw(); };
  const take = (i) => { const item = items[i]; close(); input.value = ''; onPick(item); };
  const ask = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const n = ++asked;
      const found = await find(input.value.trim()).catch(() => []);
      if (n !== asked || document.activeElement !== input) return;
      items = found;
      active = items.length && autoSelect ? 0 : -1;
      draw();
    }, 120);
  };
  input.addEventListener('input', ask);
  input.addEventListener('blur', () => { clearTimeout(timer); asked++; close(); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (list.hidden) { ask(); return; }
      const n = items.length;
      active = e.key === 'ArrowDown' ? (active + 1) % n : (active <= 0 ? n - 1 : active - 1);
      draw();
    } else if (e.key === 'Escape' && !list.hidden) {
      e.preventDefault();
      close();
    } else if (e.key === 'Enter') {
      e.preventDefault();  // Enter picks here; it does not send the form
      const text = input.value.trim();
      if (active >= 0 && items[active]) take(active);
      else if (creatable && text) { close(); input.value = ''; onPick({ id: text, label: text }); }
    }
  });
  return { input, node: h('div', { class: 'combo' }, input, list) };
}

// A list of chosen values, each with a button that takes it out, and a box to add more.
function tokens({ values, source, label, inputAttrs }) {
  let current = [...values];
  const list = h('ul', { class: 'tokens', 'aria-label': t('edit.chosen', { field: label }) });
  const draw = (focusAt) => {
    list.replaceChildren(...current.map((item, i) => h('li', {},
      h('span', {}, item.label ?? item.id),
      h('button', { type: 'button', class: 'link remove', 'aria-label': t('edit.remove_value', { value: item.label ?? item.id }),
        onclick: () => {
          current.splice(i, 1);
          draw(i);
        } }, '×'))));  // i18n: not text
    list.hidden = current.length === 0;
    if (focusAt !== undefined) (list.querySelectorAll('button')[Math.min(focusAt, current.length - 1)] || combo.input).focus();
  };
  const combo = combobox({ find: source.find, creatable: source.creatable, attrs: inputAttrs, onPick: (item) => {
    if (!current.some((c) => String(c.id) === String(item.id))) current.push(item);
    draw();
    status.textContent = t('edit.added', { value: item.label });
  } });
  const status = h('span', { class: 'visually-hidden', role: 'status' });
  draw();
  return { focusable: combo.input, node: h('div', { class: 'token-field' }, list, combo.node, status), value: () => current };
}

// One field: its label (with the required mark), the control, its help and the place of its error.
function fieldBox(path, prop, required, build) {
  const id = nextId('md');
  const label = capitalised(prop.title || path.split('.').pop());
  const helpId = prop.description ? `${id}-help` : null;
  const errorId = `${id}-error`;
  const control = build({ id, label, attrs: { id, 'aria-describedby': helpId || undefined, 'aria-required': required ? 'true' : undefined } });
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const box = h('div', { class: 'field', dataset: { path } },
    h('label', { for: id }, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    control.node,
    helpId ? h('small', { id: helpId }, prop.description) : null,
    error);
  return { path, box, error, errorId, helpId, required, ...control };
}

const asDate = (value) => (typeof value === 'string' ? value.slice(0, 10) : '');

// The control of one property, by its shape; null for one that is not shown.
function controlFor(name, path, prop, value, required) {
  if (!prop || hidden(prop)) return null;
  const nullable = types(prop).includes('null');
  // The owner is shown, not changed here: the catalogue changes it by a transfer of resources.
  if (prop.readOnly || path === 'contacts.owner') {
    return fieldBox(path, prop, false, ({ attrs }) => {
      const input = h('input', { ...attrs, value: (typeof value === 'object' ? value?.label ?? value?.id : value) ?? '', readonly: true });
      return { node: input, focusable: input, value: () => undefined, readOnly: true };
    });
  }
  if (Array.isArray(prop.oneOf) && prop.oneOf.some((o) => 'const' in o)) {
    return fieldBox(path, prop, required, ({ attrs }) => {
      const choices = prop.oneOf.filter((o) => 'const' in o);
      const hasEmpty = choices.some((o) => o.const === null || o.const === '');
      const select = h('select', { ...attrs, name },
        hasEmpty ? null : h('option', { value: '' }, t('edit.none_chosen')),
        choices.map((o) => h('option', { value: o.const ?? '', selected: (o.const ?? '') === (value ?? '') },
          o.const === null ? t('edit.none_chosen') : capitalised(o.title ?? String(o.const)))),
        // a value stored that the list no longer holds is kept, not changed unseen
        value != null && value !== '' && !choices.some((o) => o.const === value) ? h('option', { value, selected: true }, String(value)) : null);
      return { node: select, focusable: select, value: () => (select.value === '' ? (nullable || !required ? null : '') : select.value) };
    });
  }
  if (types(prop).includes('string') && (prop.format === 'date-time' || prop.format === 'date')) {
    return fieldBox(path, prop, required, ({ attrs }) => {
      const input = h('input', { ...attrs, name, type: 'date', value: asDate(value) });
      return { node: input, focusable: input, value: () => {
        if (!input.value) return null;
        if (input.value === asDate(value)) return value;  // unchanged: the time of day kept
        return prop.format === 'date' ? input.value : `${input.value}T00:00:00Z`;
      } };
    });
  }
  if (types(prop).includes('string')) {
    return fieldBox(path, prop, required, ({ attrs }) => {
      const long = prop['ui:options']?.widget === 'textarea' || prop.maxLength > 255;
      const control = long
        ? h('textarea', { ...attrs, name, rows: prop['ui:options']?.rows || 5, maxlength: prop.maxLength }, value ?? '')
        : h('input', { ...attrs, name, type: prop.format === 'email' ? 'email' : prop.format === 'uri' ? 'url' : 'text',
          value: value ?? '', maxlength: prop.maxLength });
      return { node: control, focusable: control, value: () => (control.value === '' && (nullable || value == null) ? null : control.value) };
    });
  }
  if (types(prop).includes('integer') || types(prop).includes('number')) {
    return fieldBox(path, prop, required, ({ attrs }) => {
      const input = h('input', { ...attrs, name, type: 'number', value: value ?? '', step: types(prop).includes('integer') ? 1 : 'any' });
      return { node: input, focusable: input, value: () => (input.value === '' ? null : Number(input.value)) };
    });
  }
  if (types(prop).includes('boolean')) {
    return fieldBox(path, prop, required, ({ attrs }) => {
      const input = h('input', { ...attrs, name, type: 'checkbox', checked: Boolean(value), class: 'check-input' });
      return { node: input, focusable: input, value: () => input.checked };
    });
  }
  if (isChoice(prop)) return sourceOf(prop) ? choiceField(name, path, prop, value, required) : identifierField(name, path, prop, value, required);
  if (types(prop).includes('array')) return listField(name, path, prop, value, required);
  if (types(prop).includes('object') && prop.properties && Object.keys(prop.properties).length) return groupField(name, path, prop, value, required);
  return null;
}

// One choice from a list (category, licence, owner): a select where the list is short and known,
// else a box with suggestions.
function choiceField(name, path, prop, value, required) {
  const source = sourceOf(prop);
  if (source.all) {
    return fieldBox(path, prop, required, ({ attrs }) => {
      const select = h('select', { ...attrs, name }, h('option', { value: '' }, t('edit.none_chosen')),
        value ? h('option', { value: value.id, selected: true }, value.label ?? value.id) : null);
      source.all().then((choices) => {
        const chosen = select.value;
        select.replaceChildren(h('option', { value: '' }, t('edit.none_chosen')),
          ...choices.map((c) => h('option', { value: c.id, selected: String(c.id) === String(chosen) }, c.label)));
        if (chosen && !choices.some((c) => String(c.id) === String(chosen))) select.append(h('option', { value: chosen, selected: true }, value?.label ?? chosen));
      });
      return { node: select, focusable: select, value: () => (select.value ? { id: select.value, label: select.selectedOptions[0]?.textContent } : null) };
    });
  }
  return fieldBox(path, prop, required, ({ label, attrs }) => {
    const field = tokens({ values: value ? [value] : [], source, label, inputAttrs: attrs });
    return { ...field, value: () => field.value().at(-1) ?? null };
  });
}

// A choice from no known list: its identifier, typed.
function identifierField(name, path, prop, value, required) {
  return fieldBox(path, prop, required, ({ attrs }) => {
    const input = h('input', { ...attrs, name, type: 'text', value: value?.id ?? '' });
    return { node: input, focusable: input, value: () => (input.value.trim() ? { id: input.value.trim() } : null) };
  });
}

// A list: words (keywords) or choices (regions, users), or records with fields of their own
// (a contact given by name, organisation and e-mail).
function listField(name, path, prop, value, required) {
  const items = prop.items || {};
  const values = Array.isArray(value) ? value : [];
  const mandatory = required || (prop.minItems || 0) > 0;
  const source = sourceOf(prop) || sourceOf(items);
  const extra = Object.keys(items.properties || {}).filter((k) => k !== 'id' && k !== 'label');
  if (types(items).includes('string')) {
    return fieldBox(path, prop, mandatory, ({ label, attrs }) => {
      const field = tokens({ values: values.map((v) => ({ id: v, label: v })), label, inputAttrs: attrs,
        source: source ? { ...source, creatable: true } : { creatable: true, find: async () => [] } });
      return { ...field, value: () => field.value().map((v) => v.id) };
    });
  }
  if (!extra.length && source) {
    return fieldBox(path, prop, mandatory, ({ label, attrs }) => tokens({ values, source, label, inputAttrs: attrs }));
  }
  return recordsField(path, prop, values, mandatory, source, extra);
}

// Records, one fieldset each: either one picked from the suggestions (a user of the catalogue),
// or one described by its own fields (a contact given by name, organisation and e-mail).
function recordsField(path, prop, values, required, source, extra) {
  const items = prop.items || {};
  const id = nextId('md');
  const label = capitalised(prop.title || path.split('.').pop());
  const rows = h('div', { class: 'records' });
  const kept = [];
  const renumber = () => kept.forEach((k, i) => { k.legend.textContent = t('edit.record', { field: label, number: i + 1 }); });
  const addRecord = (record, focus, asUser = record.id !== undefined && record.id !== null) => {
    const entry = { record: { ...record }, inputs: {} };
    const legend = h('legend', {}, t('edit.record', { field: label, number: kept.length + 1 }));
    const parts = [];
    const picked = source && (asUser || !extra.length);
    if (picked) {
      const who = h('p', { class: 'record-choice' }, record.label ?? '');
      const comboId = nextId('md');
      const combo = combobox({ find: source.find, creatable: false, attrs: { id: comboId },
        onPick: (item) => { entry.record = { id: item.id, label: item.label }; who.textContent = item.label; } });
      entry.focusable = combo.input;
      parts.push(who, h('div', { class: 'field' }, h('label', { for: comboId }, t('edit.pick_for', { field: label })), combo.node));
    } else {
      for (const key of extra) {
        const sub = items.properties[key];
        const inputId = nextId('md');
        const input = h('input', { id: inputId, type: sub.format === 'email' ? 'email' : 'text', value: record[key] ?? '', maxlength: sub.maxLength });
        entry.inputs[key] = input;
        entry.focusable ||= input;
        parts.push(h('div', { class: 'field' }, h('label', { for: inputId }, capitalised(sub.title || key)), input));
      }
    }
    const box = h('fieldset', { class: 'record' }, legend, parts,
      h('button', { type: 'button', class: 'link', onclick: () => {
        kept.splice(kept.indexOf(entry), 1);
        box.remove();
        renumber();
        (source ? addUser : addNamed).focus();
      } }, t('edit.remove_record')));
    entry.legend = legend;
    kept.push(entry);
    rows.append(box);
    if (focus) entry.focusable?.focus();
  };
  const addUser = source ? h('button', { type: 'button', class: 'secondary', id, 'aria-label': t('edit.add_user', { field: label }),
    onclick: () => addRecord({}, true, true) }, t('edit.add_user_short')) : null;
  const addNamed = extra.length ? h('button', { type: 'button', class: 'secondary', id: source ? undefined : id, 'aria-label': t('edit.add_named', { field: label }),
    onclick: () => addRecord({}, true, false) }, t('edit.add_named_short')) : null;
  values.forEach((v) => addRecord(v, false));
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  const box = h('fieldset', { class: 'field records-field', dataset: { path } },
    h('legend', {}, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null,
      required ? h('span', { class: 'visually-hidden' }, t('edit.required_hint')) : null),
    prop.description ? h('small', {}, prop.description) : null, rows, h('div', { class: 'actions' }, addUser, addNamed), error);
  return { path, box, error, errorId: error.id, required, get focusable() { return kept[0]?.focusable || addUser || addNamed; },
    value: () => kept.map((k) => {
      if (!Object.keys(k.inputs).length) return k.record.id == null ? null : { id: k.record.id, label: k.record.label };
      const out = {};
      for (const [key, input] of Object.entries(k.inputs)) out[key] = input.value.trim();
      return out;
    }).filter(Boolean) };
}

// A group of fields (the contacts by role), drawn in a fieldset.
function groupField(name, path, prop, value, required) {
  const children = [];
  const inner = prop.required || [];
  for (const [key, sub] of Object.entries(prop.properties)) {
    const child = controlFor(key, `${path}.${key}`, sub, value?.[key], inner.includes(key) || Boolean(sub['geonode:required']));
    if (child) children.push({ key, ...child });
  }
  if (!children.length) return null;
  const error = h('p', { class: 'field-error', id: nextId('md-error'), hidden: true });
  const box = h('fieldset', { class: 'subgroup', dataset: { path } }, h('legend', {}, capitalised(prop.title || name)),
    prop.description ? h('small', {}, prop.description) : null, error, children.map((c) => c.box));
  return { path, box, children, error, errorId: error.id, required, get focusable() { return children[0].focusable; },
    value: () => {
      const out = { ...(value || {}) };
      for (const c of children) if (!c.readOnly) out[c.key] = c.value();
      return out;
    } };
}

function allFields(fields) {
  return fields.flatMap((f) => [f, ...allFields(f.children || [])]);
}

// The form of the resource `pk`; onSaved(values) is told of each save.
export function metadataForm(pk, { onSaved } = {}) {
  const status = h('p', { role: 'status' });
  const summary = h('div', { class: 'form-errors', role: 'alert', tabindex: -1 });
  const body = h('div', { class: 'metadata-fields' }, h('p', { class: 'muted' }, t('edit.loading_form')));
  const save = h('button', { type: 'submit', disabled: true }, t('edit.save'));
  const form = h('form', { class: 'metadata-form', 'aria-label': t('edit.metadata_form'), novalidate: true },
    summary, body, h('div', { class: 'actions' }, save, status));
  let fields = [];

  Promise.all([api('/api/v2/metadata/schema/', { params: { lang } }), api(`/api/v2/metadata/instance/${encodeURIComponent(pk)}/`)])
    .then(([schema, instance]) => {
      const required = new Set(schema.required || []);
      const built = new Map();
      for (const [name, prop] of Object.entries(schema.properties || {})) {
        const control = controlFor(name, name, prop, instance?.[name], required.has(name) || Boolean(prop['geonode:required']));
        if (control) built.set(name, control);
      }
      fields = [...built.values()];
      const placed = new Set(GROUPS.flatMap(([, names]) => names));
      const groups = GROUPS.map(([group, names]) => {
        const inGroup = (group === 'other' ? [...built.keys()].filter((n) => !placed.has(n)) : names).filter((n) => built.has(n));
        if (!inGroup.length) return null;
        // a group of one group (the contacts) says its name once
        if (inGroup.length === 1 && built.get(inGroup[0]).children) built.get(inGroup[0]).box.querySelector('legend').classList.add('visually-hidden');
        return h('fieldset', { class: `group group-${group}` }, h('legend', {}, groupLegend(group)), inGroup.map((n) => built.get(n).box));
      });
      const anyRequired = allFields(fields).some((f) => f.required);
      body.replaceChildren(anyRequired ? h('p', { class: 'muted required-note' }, h('span', { class: 'required', 'aria-hidden': 'true' }, '* '), t('edit.required_note')) : '', ...groups.filter(Boolean));
      save.disabled = false;
      form.dataset.ready = '';
    })
    .catch((error) => {
      body.replaceChildren(h('p', { class: 'error', role: 'alert' }, t('edit.form_failed'), ' ', h('span', { lang: 'en' }, error.message)));
    });

  const clearErrors = () => {
    summary.replaceChildren();
    for (const f of allFields(fields)) {
      if (!f.error) continue;
      f.error.hidden = true;
      f.error.replaceChildren();
      const control = f.focusable;
      if (!control) continue;
      control.removeAttribute('aria-invalid');
      if (f.helpId) control.setAttribute('aria-describedby', f.helpId);
      else control.removeAttribute('aria-describedby');
    }
  };

  // Each refused field's messages beside it (the deepest field shown that holds the path).
  const showErrors = (extraErrors) => {
    const byPath = new Map(allFields(fields).filter((f) => f.error).map((f) => [f.path, f]));
    const refused = [];
    const loose = [];
    const walk = (node, path) => {
      if (!node || typeof node !== 'object') return;
      for (const [key, inner] of Object.entries(node)) {
        if (key === '__errors') {
          const messages = [].concat(inner).map(String);
          let target = null;
          for (let i = path.length; i > 0 && !target; i--) target = byPath.get(path.slice(0, i).join('.'));
          if (target) refused.push([target, messages]);
          else loose.push(...messages);
        } else walk(inner, [...path, key]);
      }
    };
    walk(extraErrors, []);
    const order = allFields(fields);
    refused.sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    for (const [f, messages] of refused) {
      const empty = (() => { const v = f.value(); return v === null || v === '' || (Array.isArray(v) && !v.length); })();
      const missing = f.required && empty;
      if (f.error.hidden) f.error.replaceChildren(missing ? t('edit.error_required') : t('edit.error_refused'));
      // the server's own words (English, as GeoNode's), without the field's name they may start
      // with; left out where they would only repeat, in English, that the field is required
      const prefix = `${f.path.split('.').pop()}: `;
      if (!(missing && lang === 'en')) {
        for (const m of messages) f.error.append(' ', h('span', { class: 'server-message', lang: 'en', dir: 'ltr' }, m.startsWith(prefix) ? m.slice(prefix.length) : m));
      }
      f.error.hidden = false;
      const control = f.focusable;
      if (control) {
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', [f.errorId, f.helpId].filter(Boolean).join(' '));
      }
    }
    const count = new Set(refused.map(([f]) => f)).size;
    summary.replaceChildren(...[
      count ? h('p', { class: 'error' }, t('edit.errors_summary', { count })) : null,
      loose.length ? h('p', { class: 'error' }, t('edit.error_refused'), ' ', h('span', { lang: 'en', dir: 'ltr' }, loose.join(' '))) : null,
    ].filter(Boolean));
    (refused[0]?.[0].focusable || summary).focus();
    return count + loose.length;
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (save.disabled) return;
    const values = {};
    for (const f of fields) {
      if (f.readOnly) continue;
      values[f.path] = f.value();
    }
    clearErrors();
    status.className = '';
    status.textContent = t('edit.saving');
    save.disabled = true;
    try {
      await api(`/api/v2/metadata/instance/${encodeURIComponent(pk)}/`, { method: 'PUT', json: values });
      status.textContent = t('edit.saved');
      onSaved?.(values);
    } catch (error) {
      status.className = 'error';
      if (error.status === 422 && error.body?.extraErrors && Object.keys(error.body.extraErrors).length) {
        status.textContent = t('edit.not_saved');
        if (!showErrors(error.body.extraErrors)) status.append(' ', h('span', { lang: 'en' }, error.message));
      } else {
        status.replaceChildren(t('edit.not_saved'), ' ', h('span', { lang: 'en' }, error.message));
      }
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
