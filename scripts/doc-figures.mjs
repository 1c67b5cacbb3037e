// The size tables in docs/ come from the built files, and the benchmark tables in docs/ are quotes of
// bench/results/*.md. Sizes live between marker comments that this script rewrites:
//
//   <!-- doc-figures:NAME -->            (generated: do not edit by hand)
//   <!-- /doc-figures:NAME -->
//
// Benchmark tables are typed, but each sits between
//
//   <!-- bench-quote: bench/results/FILE.md -->
//   <!-- /bench-quote -->
//
// and every number in it must be a number of FILE.md (or one rounded to the digits shown).
//
//   node scripts/doc-figures.mjs                 rewrite the size tables from the build
//   node scripts/doc-figures.mjs --check         exit 1, naming each stale figure and unquoted number
//   node scripts/doc-figures.mjs --check --docs DIR   check a copy of docs/ (the test's stale copy)
//
// Needs the build: web/lib/gen/ (npm run build) and dist/ (node scripts/bundle.mjs).
//
// Stale rule (independent of rebuilds): a stated byte count is stale when it differs from the built
// one by more than 2 % or 1 KiB, whichever is larger; the number of files in the package must match
// exactly, and so must the set of rows (a file added to or gone from the package is a new or missing row).
// Rebuilding the same sources moves no figure by that much; a change a reader would notice does.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TOLERANCE = { relative: 0.02, bytes: 1024 };
const MODULES = ['headlab_core', 'headlab_core_scalar', 'headlab_core_threads',
  'headlab_train', 'headlab_train_scalar', 'headlab_train_threads', 'headlab_pretrained', 'headlab_pretrained_scalar',
  'headlab_pretrained_threads'];

const fmt = (n) => n.toLocaleString('en-US');
const size = (file) => readFileSync(path.join(repo, file)).length;
const gzip = (file) => gzipSync(readFileSync(path.join(repo, file)), { level: 9 }).length;

/** The tarball's groups of files, in the order of the table, and what each is. */
const PACKAGE_GROUPS = [
  [/^web\/lib\/(headlab\.js|headlab-files\.js|api\/.*\.js)$/, '`web/lib/headlab.js`, `headlab-files.js`, `api/*.js`',
    'the API (browsers, Workers, Node; `headlab.js` is the `"browser"` and `"default"` entry, its code is in `api/`, one module per job)'],
  [/^web\/lib\/headlab\.node\.js$/, '`web/lib/headlab.node.js`', 'the `"node"` entry: the same API, with `fs` to read the `.wasm` files'],
  [/^web\/lib\/headlab-parallel-worker\.js$/, '`web/lib/headlab-parallel-worker.js`',
    'the Worker of the multi-core layer where pthreads cannot run'],
  [/^web\/lib\/(headlab|ts5\.6\/headlab|wasm)\.d\.ts$/, '`web/lib/headlab.d.ts`, `ts5.6/headlab.d.ts`, `wasm.d.ts`',
    'types (TypeScript < 5.7 reads `ts5.6/`, written by `npm pack`; `wasm.d.ts`: the `.wasm` exports)'],
  [/^web\/lib\/gen\/headlab_core\.(mjs|wasm)$/, '`web/lib/gen/headlab_core.mjs` / `.wasm`',
    'forward pass and experiments, WebAssembly SIMD'],
  [/^web\/lib\/gen\/headlab_core_scalar\.(mjs|wasm)$/, '`web/lib/gen/headlab_core_scalar.mjs` / `.wasm`',
    'the same without SIMD (older engines)'],
  [/^web\/lib\/gen\/headlab_core_threads\.(mjs|wasm|worker\.js)$/, '`web/lib/gen/headlab_core_threads.mjs` / `.wasm` / `.worker.js`',
    'the multi-core forward pass on pthreads, loaded only by `createParallelLayer` where SharedArrayBuffer exists'],
  [/^web\/lib\/gen\/headlab_train\.(mjs|wasm)$/, '`web/lib/gen/headlab_train.mjs` / `.wasm`',
    'trainer and language models, loaded on first use'],
  [/^web\/lib\/gen\/headlab_train_scalar\.(mjs|wasm)$/, '`web/lib/gen/headlab_train_scalar.mjs` / `.wasm`', 'the same without SIMD'],
  [/^web\/lib\/gen\/headlab_train_threads\.(mjs|wasm|worker\.js)$/, '`web/lib/gen/headlab_train_threads.mjs` / `.wasm` / `.worker.js`',
    'language models on several threads, loaded only for `threads` > 1'],
  [/^web\/lib\/gen\/headlab_pretrained\.(mjs|wasm)$/, '`web/lib/gen/headlab_pretrained.mjs` / `.wasm`',
    'pretrained GPT-2 and GPT-Neo checkpoints, loaded only by `loadPretrained`'],
  [/^web\/lib\/gen\/headlab_pretrained_scalar\.(mjs|wasm)$/, '`web/lib/gen/headlab_pretrained_scalar.mjs` / `.wasm`', 'the same without SIMD'],
  [/^web\/lib\/gen\/headlab_pretrained_threads\.(mjs|wasm|worker\.js)$/, '`web/lib/gen/headlab_pretrained_threads.mjs` / `.wasm` / `.worker.js`',
    'pretrained models on several threads, loaded only for `threads` > 1'],
  [/^web\/lib\/gen\/tokenizers\.mjs$/, '`web/lib/gen/tokenizers.mjs`',
    '`@huggingface/tokenizers` (Apache-2.0), vendored: reads `tokenizer.json` for `loadPretrained`'],
  [/^web\/lib\/gen\/package\.json$/, '`web/lib/gen/package.json`', 'marks the thread Worker scripts as CommonJS for Node'],
  [/^components\/[\w-]+\.(js|d\.ts)$/, '`components/*.js`, `*.d.ts`',
    'the elements (`headlab/components`, `headlab/components/<name>`), their Workers and types, built by `npm pack` (without the API: they import `web/lib/headlab.js`)'],
  [/^components\/katex\//, '`components/katex/`', 'KaTeX\'s fonts (woff2) and licence, for the elements\' formulas'],
  [/^components\/models\/.*\.hlm$/, '`components/models/*.hlm`', 'the trained language models `<headlab-language-model pretrained>` loads'],
  [/^custom-elements\.json$/, '`custom-elements.json`', 'the elements\' Custom Elements Manifest'],
  [/^docs\/[\w-]+\.md$/, '`docs/*.md`', 'the user\'s documentation the package README links to'],
];
const PACKAGE_DOCS = /^(README\.md|CHANGELOG\.md|LICENSE|package\.json)$/;
const order = (p) => ['.mjs', '.wasm', '.worker.js', '.js', '.ts', '.json'].findIndex((e) => p.endsWith(e));

function packageTable() {
  const json = execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [pack] = JSON.parse(json);
  const rows = PACKAGE_GROUPS.map(([re, label, what]) => {
    const files = pack.files.filter((f) => re.test(f.path)).sort((a, b) => order(a.path) - order(b.path));
    if (!files.length) throw new Error(`doc-figures: the package has no file for the row ${label}`);
    // One number per file for the modules (glue / wasm / worker), one sum for the API's many files.
    const bytes = label.includes(' / ') ? files.map((f) => fmt(f.size)).join(' / ') : fmt(files.reduce((s, f) => s + f.size, 0));
    return `| ${label} | ${bytes} | ${what} |`;
  });
  const unknown = pack.files.filter((f) => !PACKAGE_DOCS.test(f.path) && !PACKAGE_GROUPS.some(([re]) => re.test(f.path)));
  if (unknown.length) throw new Error(`doc-figures: the package holds files no row describes: ${unknown.map((f) => f.path).join(', ')}`);
  return [
    '| file | bytes | what |', '| --- | ---: | --- |',
    `| the tarball, packed (\`npm pack\`) | ${fmt(pack.size)} | |`,
    `| the tarball, unpacked | ${fmt(pack.unpackedSize)} | |`,
    `| files | ${pack.entryCount} | |`,
    ...rows,
    '| `README.md`, `CHANGELOG.md`, `LICENSE`, `package.json` | | |',
  ].join('\n');
}

function distLibTable() {
  // The precompressed copies (.br, .gz) are another way of sending these files, not more files.
  const gen = readdirSync(path.join(repo, 'dist/lib/gen')).filter((f) => !/\.(br|gz)$/.test(f));
  const wasm = gen.filter((f) => f.endsWith('.wasm')).reduce((s, f) => s + size(`dist/lib/gen/${f}`), 0);
  const all = gen.reduce((s, f) => s + size(`dist/lib/gen/${f}`), 0);
  const row = (label, file) => `| ${label} | ${fmt(size(file))} | ${fmt(gzip(file))} |`;
  return [
    '| file | bytes | gzip -9 |', '| --- | ---: | ---: |',
    row('`dist/lib/headlab.js`: the whole API and the glue of its modules, one minified ES module', 'dist/lib/headlab.js'),
    row('`dist/lib/gen/headlab_core.wasm`: all else a page that only runs attention fetches', 'dist/lib/gen/headlab_core.wasm'),
    `| \`dist/lib/gen/*.wasm\`, every module | ${fmt(wasm)} | |`,
    `| \`dist/lib/gen/\`, everything (with the threads builds' glue and Worker scripts) | ${fmt(all)} | |`,
    row('`dist/headlab-components.js`, for comparison: registers every element, each loaded (with KaTeX and the API) on first use', 'dist/headlab-components.js'),
  ].join('\n');
}

function shippedTable() {
  const rows = MODULES.map((m) => {
    const w = `web/lib/gen/${m}.wasm`, g = `web/lib/gen/${m}.mjs`;
    return `| \`${m}\` | ${fmt(size(w))} | ${fmt(size(g))} | ${fmt(size(w) + size(g))} | ${fmt(gzip(w) + gzip(g))} |`;
  });
  const head = '| module (`web/lib/gen/`) | `.wasm` bytes | glue `.mjs` bytes | together | together, gzip -9 |';
  return [head, '| --- | ---: | ---: | ---: | ---: |', ...rows].join('\n');
}

/** Every generated block: doc file → block name → Markdown. */
export function generate() {
  return {
    'docs/install.md': { package: packageTable(), 'dist-lib': distLibTable() },
    'docs/performance.md': { shipped: shippedTable() },
  };
}

const blockRe = (name) => new RegExp(`(<!-- doc-figures:${name} -->\\n)([\\s\\S]*?)(<!-- /doc-figures:${name} -->)`);
const numbers = (text) => (text.match(/\d[\d,]*(?:\.\d+)?/g) ?? []).map((n) => n.replaceAll(',', ''));

/** Table rows: first cell → the numbers of the other cells. */
function rows(table) {
  const out = new Map();
  for (const line of table.split('\n')) {
    if (!line.startsWith('|') || /^\|\s*-/.test(line) || /^\| (file|module \(.*\)) \|/.test(line)) continue;
    const [, label, ...cells] = line.split('|').map((c) => c.trim());
    // Figures are the cells that hold only digits, commas and slashes (not the descriptions).
    out.set(label, cells.filter((c) => /^[\d,\s/]+$/.test(c)).flatMap(numbers).map(Number));
  }
  return out;
}

/** Problems of a stated table against the built one. */
function compareSizes(file, name, stated, built) {
  const problems = [];
  const s = rows(stated), b = rows(built);
  for (const label of b.keys()) if (!s.has(label)) problems.push(`${file} ${name}: no row "${label}"`);
  for (const [label, got] of s) {
    const want = b.get(label);
    if (!want) { problems.push(`${file} ${name}: row "${label}" is not in the build`); continue; }
    if (got.length !== want.length) {
      problems.push(`${file} ${name}: row "${label}" states ${got.length} numbers, the build has ${want.length}`);
      continue;
    }
    got.forEach((g, i) => {
      const w = want[i];
      const ok = label === 'files' ? g === w : Math.abs(g - w) <= Math.max(TOLERANCE.relative * w, TOLERANCE.bytes);
      if (!ok) problems.push(`${file} ${name}: "${label}" says ${fmt(g)}, the build has ${fmt(w)} (run node scripts/doc-figures.mjs)`);
    });
  }
  return problems;
}

/** Problems of every bench-quote block of a doc: numbers that are not (rounded) numbers of the quoted file. */
function checkQuotes(file, text) {
  const problems = [];
  for (const m of text.matchAll(/<!-- bench-quote: (\S+) -->\n([\s\S]*?)<!-- \/bench-quote -->/g)) {
    const source = readFileSync(path.join(repo, m[1]), 'utf8');
    const have = new Set();
    for (const n of numbers(source)) {
      have.add(n);
      // Rounded to the digits a doc shows; a printed 25.15 may be quoted as 25.2 (half up) or 25.1.
      for (let k = 0; k <= 3; k++) for (const x of [Number(n), Number(n) + 1e-9]) have.add(x.toFixed(k));
    }
    for (const line of m[2].split('\n').filter((l) => l.startsWith('|') && !/^\|\s*-/.test(l))) {
      for (const n of numbers(line.replace(/^\|[^|]*\|/, ''))) {
        if (!have.has(n)) problems.push(`${file}: ${n} in "${line.slice(0, 60)}…" is not a number of ${m[1]}`);
      }
    }
  }
  return problems;
}

/** Every stale size and unquoted benchmark number in the docs under `docsDir` (default: docs/). */
export function check(docsDir = path.join(repo, 'docs')) {
  const problems = [];
  for (const [file, blocks] of Object.entries(generate())) {
    const text = readFileSync(path.join(docsDir, path.basename(file)), 'utf8');
    for (const [name, table] of Object.entries(blocks)) {
      const m = blockRe(name).exec(text);
      if (!m) problems.push(`${file}: no <!-- doc-figures:${name} --> block`);
      else problems.push(...compareSizes(file, name, m[2], table));
    }
  }
  for (const f of readdirSync(docsDir).filter((f) => f.endsWith('.md'))) {
    problems.push(...checkQuotes(`docs/${f}`, readFileSync(path.join(docsDir, f), 'utf8')));
  }
  return problems;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes('--check')) {
    const i = args.indexOf('--docs');
    const problems = check(i >= 0 ? path.resolve(args[i + 1]) : undefined);
    for (const p of problems) console.error(p);
    console.log(problems.length ? `doc-figures: ${problems.length} stale or unquoted`
      : 'doc-figures: every figure matches the build and bench/results/');
    process.exit(problems.length ? 1 : 0);
  }
  for (const [file, blocks] of Object.entries(generate())) {
    let text = readFileSync(path.join(repo, file), 'utf8');
    for (const [name, table] of Object.entries(blocks)) {
      if (!blockRe(name).test(text)) throw new Error(`doc-figures: ${file} has no <!-- doc-figures:${name} --> block`);
      text = text.replace(blockRe(name), (_, open, _old, close) => `${open}${table}\n${close}`);
    }
    writeFileSync(path.join(repo, file), text);
    console.log(`doc-figures: ${file} written`);
  }
}
