// Languages: which language an element speaks, its messages, and numbers written
// the way that language writes them. One message catalogue per part of HeadLab
// (web/lib/i18n/catalogues/<part>.js, each `export default { en: {...}, es: {...} }`);
// messages use `{name}` placeholders. DOM-light: languageOf reads attributes only,
// the rest runs in Node (tests, Workers) as well.

/** The languages HeadLab ships, the first being the fallback. */
export const LANGUAGES = Object.freeze(['en', 'es']);
export const FALLBACK = LANGUAGES[0];

/** A language tag ("es-MX", "EN") reduced to a supported base language, else the fallback. */
export function baseLanguage(tag) {
  const base = String(tag ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return LANGUAGES.includes(base) ? base : FALLBACK;
}

/**
 * The language of `element`: its own `lang` attribute, else the nearest
 * ancestor's, else the page's (<html lang>), reduced to a supported base
 * language ('en' | 'es'; 'en' when none is set or it is not supported).
 * An empty `lang=""` ("unknown") is skipped, so the search goes on upward.
 * @example languageOf(document.querySelector('headlab-heads')) // 'es' under <html lang="es-ES">
 */
export function languageOf(element) {
  for (let node = element; node && node.nodeType === 1; node = node.parentElement) {
    const lang = node.getAttribute('lang');
    if (lang) return baseLanguage(lang);
  }
  const root = typeof document === 'undefined' ? null : document.documentElement;
  return baseLanguage(root?.getAttribute('lang'));
}

/**
 * Whether a missing message throws (tests) instead of falling back to English
 * with a console warning (pages). Tests turn it on with
 * `globalThis.HEADLAB_I18N_STRICT = true`, or Node's test runner does.
 */
function strict() {
  if (globalThis.HEADLAB_I18N_STRICT !== undefined) return Boolean(globalThis.HEADLAB_I18N_STRICT);
  return typeof process !== 'undefined' && Boolean(process.env?.NODE_TEST_CONTEXT);
}

const warned = new Set();

/** Fills `{name}` placeholders from `params`; a placeholder without a value is an error. */
function fill(template, params, key) {
  return template.replace(/\{(\w+)\}/g, (_, name) => {
    if (params && Object.hasOwn(params, name)) return String(params[name]);
    throw new Error(`i18n: message "${key}" needs the parameter {${name}}`);
  });
}

/**
 * A message function for `lang` over one catalogue or several (looked up in
 * order, so an element's catalogue can come before the shared one).
 * `t(key, params)` returns the message with its `{placeholders}` filled;
 * `t.plural(key, count, params)` picks `key_one` / `key_other` (by
 * Intl.PluralRules) and passes `{count}` formatted for the language;
 * `t.lang` is the language. A key missing in `lang` throws in tests and
 * otherwise falls back to English with a console warning.
 * @example
 * const t = translator(catalogue, 'es');
 * t('heads.title'); t('heads.count', { n: 4 });
 */
export function translator(catalogue, lang) {
  const language = baseLanguage(lang);
  const list = Array.isArray(catalogue) ? catalogue : [catalogue];
  const lookup = (l, key) => {
    for (const c of list) {
      const value = c?.[l]?.[key];
      if (typeof value === 'string') return value;
    }
    return undefined;
  };
  const template = (key) => {
    let found = lookup(language, key);
    if (found === undefined) {
      const message = `i18n: no "${language}" message for "${key}"`;
      if (strict()) throw new Error(message);
      found = lookup(FALLBACK, key);
      if (!warned.has(`${language}:${key}`)) {
        warned.add(`${language}:${key}`);
        console.warn(found === undefined ? `${message}, nor an English one` : `${message}; using English`);
      }
    }
    return found;
  };
  const t = (key, params) => {
    const found = template(key);
    return found === undefined ? key : fill(found, params, key);
  };
  // The message as a list of its text pieces and the values of its placeholders, unchanged:
  // for messages that hold elements (a token in <q>, a subscript), put in the page as nodes.
  t.parts = (key, params = {}) => {
    const found = template(key);
    if (found === undefined) return [key];
    const out = [];
    let last = 0;
    for (const m of found.matchAll(/\{(\w+)\}/g)) {
      if (!Object.hasOwn(params, m[1])) throw new Error(`i18n: message "${key}" needs the parameter {${m[1]}}`);
      if (m.index > last) out.push(found.slice(last, m.index));
      const value = params[m[1]];
      out.push(typeof value === 'function' ? value() : value);  // a function makes a fresh node per use
      last = m.index + m[0].length;
    }
    if (last < found.length) out.push(found.slice(last));
    return out;
  };
  t.lang = language;
  t.has = (key) => lookup(language, key) !== undefined;
  t.plural = (key, count, params = {}) => {
    const category = pluralRules(language).select(count);
    const chosen = lookup(language, `${key}_${category}`) !== undefined ? `${key}_${category}` : `${key}_other`;
    return t(chosen, { count: formatNumber(language, count), ...params });
  };
  return t;
}

const pluralCache = new Map();
function pluralRules(lang) {
  if (!pluralCache.has(lang)) pluralCache.set(lang, new Intl.PluralRules(lang));
  return pluralCache.get(lang);
}

const numberCache = new Map();
/**
 * `x` written for `lang` through a cached Intl.NumberFormat (`options` as
 * Intl.NumberFormat's). English groups thousands with commas, Spanish with
 * points (from 10 000) and writes decimals with a comma.
 * @example formatNumber('es', 1048576) // "1.048.576"
 */
export function formatNumber(lang, x, options = {}) {
  const language = baseLanguage(lang);
  const id = `${language}|${JSON.stringify(options)}`;
  let format = numberCache.get(id);
  if (!format) {
    format = new Intl.NumberFormat(language, options);
    numberCache.set(id, format);
  }
  return format.format(x);
}

/** The decimal sign and minus sign `lang` writes, from Intl.NumberFormat. */
function signs(lang) {
  const parts = new Intl.NumberFormat(baseLanguage(lang), { minimumFractionDigits: 1 }).formatToParts(-1.5);
  return { decimal: parts.find((p) => p.type === 'decimal')?.value ?? '.', minus: parts.find((p) => p.type === 'minusSign')?.value ?? '-' };
}
const signCache = new Map();

/**
 * Fixed decimals as teach/format.js's fmt writes them (no grouping; values
 * that round to zero print as 0, never -0; ∞ and — for what is not finite),
 * with the decimal and minus signs Intl.NumberFormat gives the language:
 * fixed('es', 0.25, 2) → "0,25". The digits are toFixed's in every language
 * (Intl rounds a tie like 7.00005 by its shortest decimal form, toFixed by the
 * exact binary value), so a number reads the same whatever the language.
 */
export function fixed(lang, value, digits = 4) {
  if (!Number.isFinite(value)) return value > 0 ? '∞' : value < 0 ? '−∞' : '—';
  const v = Math.abs(value) < 0.5 * 10 ** -digits ? 0 : value;
  const text = v.toFixed(digits);
  const language = baseLanguage(lang);
  if (!signCache.has(language)) signCache.set(language, signs(language));
  const { decimal, minus } = signCache.get(language);
  return text.replace('.', decimal).replace('-', minus);
}

/** A whole number with the language's thousands separator: integer('en', 1048576) → "1,048,576". */
export function integer(lang, n) {
  return formatNumber(lang, Math.round(n), { maximumFractionDigits: 0 });
}

/**
 * A list joined the language's way: list('es', ['a', 'b', 'c']) → "a, b y c".
 */
export function list(lang, items, type = 'conjunction') {
  return new Intl.ListFormat(baseLanguage(lang), { style: 'long', type }).format(items.map(String));
}
