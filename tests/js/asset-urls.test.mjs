// Vite, webpack and esbuild rewrite an asset URL only when it is written
// `new URL('<literal>', import.meta.url)` (docs/install.md; TOOLCHAIN.md). A URL built from a
// template or a concatenation on a base taken from import.meta.url (BASE_URL, the bundle's folder)
// is left as it is, and a production build asks for a file it did not emit (404), as the model
// explorer's `new URL(\`models/${file}\`, BASE_URL)` did. Scanned: the sources under web/lib and
// web/components, and the package's elements as `npm pack` builds them (components/, minified, the
// code bundlers see), parsed with ESLint's parser (espree) so comments and strings are not code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as espree from 'espree';
import { buildComponents } from '../../tools/package-components.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function scripts(dir, skip = () => false) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (skip(p)) continue;
    if (entry.isDirectory()) out.push(...scripts(p, skip));
    else if (/\.m?js$/.test(entry.name)) out.push(p);
  }
  return out;
}

function walk(node, visit) {
  if (!node || typeof node.type !== 'string') return;
  visit(node);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'parent') continue;
    if (Array.isArray(value)) value.forEach((v) => walk(v, visit));
    else if (value && typeof value === 'object') walk(value, visit);
  }
}

const isMetaUrl = (n) => n?.type === 'MemberExpression' && n.object.type === 'MetaProperty' && n.object.meta.name === 'import' && n.property.name === 'url';
const isLiteral = (n) => (n.type === 'Literal' && typeof n.value === 'string') || (n.type === 'TemplateLiteral' && n.expressions.length === 0);
const isBuilt = (n) => (n.type === 'TemplateLiteral' && n.expressions.length > 0) || (n.type === 'BinaryExpression' && n.operator === '+');

/**
 * Every `new URL(first, base)` in `files` that a bundler cannot rewrite, as "file:line: code":
 * a first argument built from a template or a concatenation on a base that comes from
 * import.meta.url (directly, or through a variable of the same file or one it imports), and any
 * first argument but a literal on import.meta.url itself.
 */
export function unrewritable(files, root) {
  const parsed = files.map((file) => {
    const text = readFileSync(file, 'utf8');
    return { file, text, ast: espree.parse(text, { ecmaVersion: 'latest', sourceType: 'module', loc: true, range: true }) };
  });
  // Names whose value comes from import.meta.url, per file; exported names by file, to follow imports.
  const fromMeta = new Map(parsed.map(({ file }) => [file, new Set()]));
  const exported = new Map(parsed.map(({ file }) => [file, new Map()]));
  for (let changed = true; changed;) {
    changed = false;
    for (const { file, ast } of parsed) {
      const names = fromMeta.get(file);
      const uses = (n) => {
        let found = false;
        walk(n, (m) => { if (isMetaUrl(m) || (m.type === 'Identifier' && names.has(m.name))) found = true; });
        return found;
      };
      walk(ast, (n) => {
        let name = null;
        if (n.type === 'VariableDeclarator' && n.id.type === 'Identifier' && n.init && uses(n.init)) name = n.id.name;
        if (n.type === 'ImportDeclaration') {
          const from = path.resolve(path.dirname(file), n.source.value);
          for (const s of n.specifiers) {
            if (s.type === 'ImportSpecifier' && exported.get(from)?.get(s.imported.name) && !names.has(s.local.name)) {
              names.add(s.local.name);
              changed = true;
            }
          }
        }
        if (n.type === 'ExportSpecifier' && names.has(n.local.name) && !exported.get(file).get(n.exported.name)) {
          exported.get(file).set(n.exported.name, true);
          changed = true;
        }
        if (n.type === 'ExportNamedDeclaration' && n.declaration?.type === 'VariableDeclaration') {
          for (const d of n.declaration.declarations) {
            if (names.has(d.id.name) && !exported.get(file).get(d.id.name)) {
              exported.get(file).set(d.id.name, true);
              changed = true;
            }
          }
        }
        if (name && !names.has(name)) {
          names.add(name);
          changed = true;
        }
      });
    }
  }
  const found = [];
  for (const { file, text, ast } of parsed) {
    const names = fromMeta.get(file);
    walk(ast, (n) => {
      if (n.type !== 'NewExpression' || n.callee.type !== 'Identifier' || n.callee.name !== 'URL' || n.arguments.length < 2) return;
      const [first, base] = n.arguments;
      const derived = isMetaUrl(base) || (base.type === 'Identifier' && names.has(base.name)) ||
        (base.type === 'MemberExpression' && base.object.type === 'Identifier' && names.has(base.object.name));
      if ((isMetaUrl(base) && !isLiteral(first)) || (derived && isBuilt(first))) {
        found.push(`${path.relative(root, file)}:${n.loc.start.line}: ${text.slice(...n.range)}`);
      }
    });
  }
  return found;
}

test('the scan finds a template URL on a base from import.meta.url, across an import, and passes literals', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-asset-urls-'));
  try {
    const write = (name, text) => { const p = path.join(dir, name); writeFileSync(p, text); return p; };
    const files = [
      write('assets.js', 'const here = import.meta.url;\nexport const BASE_URL = new URL(\'./\', here).href;\n'),
      write('bad.js', 'import { BASE_URL as B } from \'./assets.js\';\nexport const u = (f) => new URL(`models/${f}`, B).href;\n' +
        'export const v = (f) => new URL(\'models/\' + f, import.meta.url);\nexport const w = (f) => new URL(f, import.meta.url);\n'),
      write('good.js', 'import { BASE_URL } from \'./assets.js\';\nexport const a = () => new URL(\'./models/a.hlm\', import.meta.url);\n' +
        'export const b = (f) => new URL(f, BASE_URL);\nexport const c = (s) => new URL(`${s}/`, location.href);\n'),
    ];
    assert.deepEqual(unrewritable(files, dir), [
      'bad.js:2: new URL(`models/${f}`, B)', 'bad.js:3: new URL(\'models/\' + f, import.meta.url)', 'bad.js:4: new URL(f, import.meta.url)',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no asset URL in web/lib or web/components is built from a template', () => {
  const files = [...scripts(path.join(REPO, 'web/lib'), (p) => p.endsWith(`${path.sep}gen`)), ...scripts(path.join(REPO, 'web/components'))];
  assert.ok(files.length > 100, `${files.length} files scanned`);
  assert.deepEqual(unrewritable(files, REPO), []);
});

test('the package\'s elements (components/, as npm pack builds them) name every asset with a literal URL', { timeout: 120_000 }, async () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'headlab-components-'));
  try {
    await buildComponents({ out });
    assert.deepEqual(unrewritable(scripts(out), out), []);
    // Each shipped model is one literal new URL('./models/<file>', import.meta.url), which bundlers emit.
    const code = scripts(out).map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const model of readdirSync(path.join(REPO, 'web/models')).filter((f) => f.endsWith('.hlm'))) {
      assert.ok(code.includes(`new URL("./models/${model}",import.meta.url)`), `components/ names models/${model} literally`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
