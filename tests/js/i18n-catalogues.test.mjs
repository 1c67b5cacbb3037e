// Every message catalogue in web/lib/i18n/catalogues/ (each `export default { en, es }`) is
// complete in every language HeadLab ships: the same keys, none empty, and the same {placeholders}
// in each language as in English. New catalogue files are picked up without editing this test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { LANGUAGES, translator, formatNumber, fixed, integer, baseLanguage, languageOf } from '../../web/lib/i18n/index.js';

const folder = new URL('../../web/lib/i18n/catalogues/', import.meta.url);
const files = readdirSync(folder).filter((f) => f.endsWith('.js')).sort();
const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('there are catalogues, shared.js among them', () => {
  assert.ok(files.includes('shared.js'), `catalogues found: ${files.join(', ')}`);
});

for (const file of files) {
  test(`catalogue ${file}: every key in every language, none empty, the same placeholders`, async () => {
    const { default: catalogue } = await import(new URL(file, folder));
    assert.deepEqual(Object.keys(catalogue).sort(), [...LANGUAGES].sort(), `${file} has exactly the languages ${LANGUAGES.join(', ')}`);
    const keys = new Set(LANGUAGES.flatMap((lang) => Object.keys(catalogue[lang])));
    const problems = [];
    for (const key of keys) {
      for (const lang of LANGUAGES) {
        const value = catalogue[lang][key];
        if (typeof value !== 'string') problems.push(`${lang} lacks "${key}"`);
        else if (value.trim() === '') problems.push(`${lang} "${key}" is empty`);
      }
      const en = catalogue.en[key];
      for (const lang of LANGUAGES) {
        const value = catalogue[lang][key];
        if (typeof en !== 'string' || typeof value !== 'string') continue;
        const a = placeholders(en).join(','), b = placeholders(value).join(',');
        if (new Set(placeholders(en)).size !== new Set(placeholders(value)).size ||
          [...new Set(placeholders(en))].some((p) => !placeholders(value).includes(p))) {
          problems.push(`"${key}": en has {${a}}, ${lang} has {${b}}`);
        }
      }
    }
    assert.deepEqual(problems, [], `${file}:\n${problems.join('\n')}`);
  });
}

test('catalogues do not define the same key twice (an element\'s key would hide a shared one)', async () => {
  const owner = new Map();
  const clashes = [];
  for (const file of files) {
    const { default: catalogue } = await import(new URL(file, folder));
    for (const key of Object.keys(catalogue.en)) {
      if (owner.has(key)) clashes.push(`"${key}" in ${owner.get(key)} and ${file}`);
      else owner.set(key, file);
    }
  }
  assert.deepEqual(clashes, []);
});

test('translator fills placeholders, throws on a missing key under the test runner, picks plurals', () => {
  const catalogue = { en: { hi: 'Hello {name}', n_one: '{count} head', n_other: '{count} heads', onlyEn: 'x' }, es: { hi: 'Hola {name}', n_one: '{count} cabeza', n_other: '{count} cabezas' } };
  const es = translator(catalogue, 'es-MX');
  assert.equal(es.lang, 'es');
  assert.equal(es('hi', { name: 'Ana' }), 'Hola Ana');
  assert.equal(es.plural('n', 1), '1 cabeza');
  assert.equal(es.plural('n', 12000), '12.000 cabezas');
  assert.equal(translator(catalogue, 'en').plural('n', 12000), '12,000 heads');
  assert.throws(() => es('onlyEn'), /no "es" message for "onlyEn"/);
  assert.throws(() => es('hi'), /needs the parameter \{name\}/);
});

test('outside tests a missing key falls back to English with one warning', (t) => {
  const warn = t.mock.method(console, 'warn', () => {});
  globalThis.HEADLAB_I18N_STRICT = false;
  try {
    const es = translator({ en: { only: 'English {x}' }, es: {} }, 'es');
    assert.equal(es('only', { x: 1 }), 'English 1');
    es('only', { x: 2 });
    assert.equal(warn.mock.callCount(), 1);
  } finally {
    delete globalThis.HEADLAB_I18N_STRICT;
  }
});

test('numbers through Intl.NumberFormat: English keeps toFixed\'s digits, Spanish its comma', () => {
  for (const v of [0, 0.25, -0.125, 1 / 3, 2.5e-5, 1234.56789, -7.00005, 0.125]) {
    for (const d of [0, 1, 2, 3, 4]) {
      const expected = (Math.abs(v) < 0.5 * 10 ** -d ? 0 : v).toFixed(d);
      assert.equal(fixed('en', v, d), expected, `fixed(en, ${v}, ${d})`);
      assert.equal(fixed('es', v, d), expected.replace('.', ','), `fixed(es, ${v}, ${d})`);
    }
  }
  assert.equal(integer('en', 1048576), '1,048,576');
  assert.equal(integer('es', 1048576), '1.048.576');
  assert.equal(formatNumber('es', 0.5, { style: 'percent' }), '50\u00a0%');
  assert.equal(baseLanguage('ES-ar'), 'es');
  assert.equal(baseLanguage('fr'), 'en');
  assert.equal(baseLanguage(''), 'en');
});

test('languageOf: the element\'s lang, else the nearest ancestor\'s, else the page\'s', () => {
  const node = (lang, parentElement = null) => ({ nodeType: 1, parentElement, getAttribute: (name) => (name === 'lang' ? lang : null) });
  const page = node('es-ES');
  const section = node(null, page);
  globalThis.document = { documentElement: node('es') };
  try {
    assert.equal(languageOf(node('en-GB', section)), 'en', 'own lang first');
    assert.equal(languageOf(node(null, section)), 'es', 'then an ancestor\'s');
    assert.equal(languageOf(node('', node('en'))), 'en', 'lang="" (unknown) is skipped');
    assert.equal(languageOf(node(null)), 'es', 'then <html lang>');
    globalThis.document = { documentElement: node('de') };
    assert.equal(languageOf(node(null)), 'en', 'an unsupported language falls back to English');
  } finally {
    delete globalThis.document;
  }
});
