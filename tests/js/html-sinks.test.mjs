// No HTML parsing of strings: the built bundles and every source under web/
// are scanned for the DOM's HTML sinks (innerHTML, outerHTML,
// insertAdjacentHTML, document.write, DOMParser, …). Each file's count of each
// sink must equal the allow-list below, where every entry gives its reason, so
// a new use fails this test until someone has checked it and written down why
// it is safe. Text goes in with textContent / text nodes (shared/render/dom.js).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { REPO, DIST, ensureDist } from '../browser/helpers.mjs';

const SINKS = {
  innerHTML: /innerHTML/g,
  outerHTML: /outerHTML/g,
  insertAdjacentHTML: /insertAdjacentHTML/g,
  'document.write': /document\s*\.\s*write(?:ln)?\b/g,
  DOMParser: /DOMParser/g,
  createContextualFragment: /createContextualFragment/g,
  setHTMLUnsafe: /setHTMLUnsafe|parseHTMLUnsafe/g,
  srcdoc: /srcdoc/g,
};

/**
 * Occurrences allowed per file (paths relative to the repository), with the reason.
 * Any file or sink not listed here must have none. KaTeX, bundled into both
 * builds, builds its formulas with createElement (katex.render), so the bundles
 * have none either.
 */
const ALLOWED = {
  'web/components/shared/render/dom.js': { innerHTML: 1, reason: 'its header comment, which says that nothing built there goes through innerHTML' },
};

/** The bundles that must be there; every other script and page in dist/ is scanned too. */
const BUNDLES = ['headlab-components.js', 'headlab-components.classic.js'];

function sources(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(p));
    else if (/\.(m?js|html|ts)$/.test(entry.name)) out.push(p);
  }
  return out;
}

/** { sink: count } of the sinks found in `text` (only non-zero counts). */
export function countSinks(text) {
  const counts = {};
  for (const [name, re] of Object.entries(SINKS)) {
    const n = (text.match(re) ?? []).length;
    if (n) counts[name] = n;
  }
  return counts;
}

/** Every difference between what a file has and what the allow-list says, as sentences. */
function problems(relative, text) {
  const found = countSinks(text);
  const allowed = ALLOWED[relative] ?? {};
  const out = [];
  for (const name of Object.keys(SINKS)) {
    const n = found[name] ?? 0, want = allowed[name] ?? 0;
    if (n !== want) {
      out.push(`${relative}: ${n} use${n === 1 ? '' : 's'} of ${name}, the allow-list says ${want}` +
        (n > want ? ' (a new HTML sink: use textContent or shared/render/dom.js el(), or allow-list it with a reason)' : ' (update the allow-list)'));
    }
  }
  return out;
}

before(async () => {
  await ensureDist();
});

test('the scanner finds each HTML sink (so this test can fail)', () => {
  const sample = 'a.innerHTML=b;c.outerHTML;d.insertAdjacentHTML("x",y);document.write(z);document .writeln(1);new DOMParser;' +
    'r.createContextualFragment(s);e.setHTMLUnsafe(f);i.srcdoc=g';
  assert.deepEqual(countSinks(sample), {
    innerHTML: 1, outerHTML: 1, insertAdjacentHTML: 1, 'document.write': 2, DOMParser: 1, createContextualFragment: 1, setHTMLUnsafe: 1, srcdoc: 1,
  });
  assert.deepEqual(problems('web/components/x.js', 'el.innerHTML = label;'),
    ['web/components/x.js: 1 use of innerHTML, the allow-list says 0 (a new HTML sink: use textContent or shared/render/dom.js el(), or allow-list it with a reason)']);
  assert.deepEqual(problems('web/components/shared/render/dom.js', '// no innerHTML here'), []);
});

test('every allow-list entry gives its reason', () => {
  for (const [file, entry] of Object.entries(ALLOWED)) {
    assert.ok(typeof entry.reason === 'string' && entry.reason.length > 10, `${file}: a reason`);
    for (const key of Object.keys(entry)) assert.ok(key === 'reason' || key in SINKS, `${file}: unknown sink ${key}`);
  }
});

test('the built bundles and pages in dist/ use no HTML sink beyond the allow-list', () => {
  for (const file of BUNDLES) assert.ok(existsSync(path.join(DIST, file)), `dist/${file} is missing: run npm run build`);
  const files = sources(DIST);
  const found = [];
  for (const p of files) found.push(...problems(`dist/${path.relative(DIST, p).split(path.sep).join('/')}`, readFileSync(p, 'utf8')));
  assert.deepEqual(found, []);
  console.log(`# scanned ${files.length} files in dist/, among them ${BUNDLES.join(' and ')}`);
});

test('the sources under web/ use no HTML sink beyond the allow-list', () => {
  const files = sources(path.join(REPO, 'web'));
  assert.ok(files.length > 30, `${files.length} source files found`);
  const found = [];
  for (const p of files) found.push(...problems(path.relative(REPO, p).split(path.sep).join('/'), readFileSync(p, 'utf8')));
  // Allow-list entries must point at files that exist.
  for (const file of Object.keys(ALLOWED)) {
    if (file.startsWith('web/')) assert.ok(existsSync(path.join(REPO, file)), `allow-listed ${file} exists`);
  }
  assert.deepEqual(found, []);
});
