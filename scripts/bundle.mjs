// Builds the self-contained site in dist/ from web/ and the wasm in web/lib/gen/:
//   dist/headlab-components.js          ES module: registers every element, each loaded on first use (a
//                                       sized "Loading …" skeleton until then), and exports createHeadlab
//   dist/headlab-<name>.js              one element alone (e.g. headlab-worked-example.js), from
//                                       web/components/entries/<name>.js: what the registrar imports
//   dist/headlab-lab.js                 the page's one API instance, which the registrar starts early
//   dist/headlab-worker.js              the compute Worker (module), used when served over http(s)
//   dist/headlab-<name>-worker.js       other Workers, from web/components/shared/worker/<name>-worker.js
//   dist/headlab-parallel-worker.js     createParallelLayer's Worker, for the bundled API
//   dist/headlab-chunk-*.js             code the three share, and each wasm module's JS glue, loaded
//                                       only when needed (the trainer's, the scalar fallback's)
//   dist/headlab-components.classic.js  everything as one classic script with the SIMD wasm modules
//                                       inside (base64): works from file://, where module scripts and
//                                       fetch are blocked; the scalar fallback is fetched next to it.
//                                       The site's pages load it from file:// only (site/page.js)
//   dist/headlab_{core,train,pretrained}{,_scalar}.wasm  found next to the bundle
//   dist/headlab_{core,train}_threads.{mjs,wasm,worker.js}  the threads builds (isolated pages):
//                                       createParallelLayer's and the language models'
//   dist/models/*.hlm                   trained language models (web/models/), the small ones also inside the classic build
//   dist/katex/fonts/*.woff2            KaTeX's fonts
//   dist/lib/headlab.js (+ gen/*.wasm)   the API alone as one ES module, for CDNs and static hosting
//                                       (loadPretrained's engine glue and tokenizer beside it in gen/),
//                                       with headlab-parallel-worker.js (bundled) next to it and the
//                                       threads builds (gen/headlab_*_threads.*) for isolated pages
//   dist/index.html, demos/, examples/, styles/, site/   the site
//   dist/headlab-embed.js               the optional iframe resizer of course pages (docs/embedding.md)
//   dist/**/<file>.br, <file>.gz        precompressed copies of each compressible file over 1 KiB, where
//                                       smaller (brotli quality 11, gzip level 9): tools/serve.mjs sends
//                                       them to clients that accept them (docs/install.md)
// gen/tokenizers.mjs (the tokenizer of loadPretrained, Apache-2.0) is bundled like the glue: a chunk
// of its own (inlined in the classic build; a file in dist/lib/gen/), its licence kept.
// Run after scripts/build.sh: `node scripts/bundle.mjs`.
import { build } from 'esbuild';
import { cp, mkdir, readFile, readdir, rm, stat, rename } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { precompress } from '../tools/precompress.mjs';
import { registrarExternals } from '../tools/registrar.mjs';
import { formulaModules } from '../tools/formulas.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const web = path.join(repo, 'web');
const finalOut = path.join(repo, 'dist');
const out = path.join(repo, `dist.tmp-${process.pid}`);
const gen = path.join(web, 'lib/gen');
const wasmNames = ['headlab_core', 'headlab_core_scalar', 'headlab_train', 'headlab_train_scalar', 'headlab_pretrained', 'headlab_pretrained_scalar'];
const katexDir = path.join(repo, 'node_modules/katex/dist');

async function exists(p) {
  try { await stat(p); return true; } catch { return false; }
}

for (const name of wasmNames) {
  if (!(await exists(path.join(gen, `${name}.wasm`)))) {
    console.error(`bundle: web/lib/gen/${name}.wasm is missing; run \`bash scripts/build.sh\` first`);
    process.exit(1);
  }
}

// KaTeX's stylesheet split in two: rules (for shadow roots) and @font-face
// (for the document), keeping only the woff2 sources.
const katexCss = await readFile(path.join(katexDir, 'katex.min.css'), 'utf8');
const fontFaces = (katexCss.match(/@font-face\{[^}]*\}/g) ?? [])
  .map((rule) => rule.replace(/src:[^;}]*/, (src) => src.split(',').filter((s) => s.includes('woff2')).join(',')));
const katexRules = katexCss.replace(/@font-face\{[^}]*\}/g, '');
// Formulas typeset ahead (headlab:formulas/<element>, web/components/shared/render/prerendered.js).
const formulas = formulaModules();
// The classic build carries the SIMD modules; engines without SIMD fetch the scalar ones.
const embedded = {
  core: (await readFile(path.join(gen, 'headlab_core.wasm'))).toString('base64'),
  train: (await readFile(path.join(gen, 'headlab_train.wasm'))).toString('base64'),
};

// Trained language models shipped with the site (`npm run train:models` writes them); the classic
// build carries the small ones too, as file:// pages cannot fetch them. A larger one (the english
// model, ~0.5 MB) would grow every page's classic bundle by a third of its size for one demo: it
// is fetched over http(s) only.
const EMBED_MODEL_MAX_BYTES = 256 * 1024;
const modelsDir = path.join(web, 'models');
const shippedModels = {};
if (await exists(modelsDir)) {
  for (const f of (await readdir(modelsDir)).filter((f) => f.endsWith('.hlm')).sort()) {
    const bytes = await readFile(path.join(modelsDir, f));
    if (bytes.length <= EMBED_MODEL_MAX_BYTES) shippedModels[f] = bytes.toString('base64');
  }
}

/**
 * What the registrar asks for beside an entry (esbuild's metafile of the split build, written to
 * `outdir`): for each entry `headlab-<name>` (its tag; `headlab-lab` too), the chunks it imports
 * statically, transitively, which a browser otherwise finds only after the entry has arrived, one
 * round trip later per level; for each wasm module's glue (`headlab_core`, …: web/lib/gen/<name>.mjs,
 * imported dynamically by the API), its chunk and what that imports.
 */
function preloadTable(metafile, outdir, entries) {
  const rel = (p) => path.relative(outdir, path.resolve(repo, p)).split(path.sep).join('/');
  const imports = new Map(Object.entries(metafile.outputs).map(([file, o]) => [rel(file),
    o.imports.filter((i) => i.kind === 'import-statement' && !i.external).map((i) => rel(i.path))]));
  const closure = (file, seen = new Set()) => {
    for (const f of imports.get(file) ?? []) if (!seen.has(f)) { seen.add(f); closure(f, seen); }
    return seen;
  };
  const table = Object.fromEntries(entries.map((name) => [name, [...closure(`${name}.js`)].sort()]));
  for (const [file, o] of Object.entries(metafile.outputs)) {
    const glue = /^web\/lib\/gen\/(headlab_\w+)\.mjs$/.exec(o.entryPoint ?? '');
    if (glue) table[glue[1]] = [rel(file), ...[...closure(rel(file))].sort()];
  }
  return table;
}

function virtualModules({ embedWasm, preloads = null }) {
  return {
    name: 'headlab-virtual',
    setup(b) {
      b.onResolve({ filter: /^headlab:/ }, (args) => ({ path: args.path, namespace: 'headlab' }));
      b.onLoad({ filter: /.*/, namespace: 'headlab' }, (args) => {
        if (args.path === 'headlab:embedded-wasm') {
          return { contents: `export default ${embedWasm ? JSON.stringify(embedded) : 'null'};`, loader: 'js' };
        }
        if (args.path === 'headlab:embedded-models') {
          return { contents: `export default ${embedWasm ? JSON.stringify(shippedModels) : 'null'};`, loader: 'js' };
        }
        if (formulas[args.path]) return { contents: formulas[args.path], loader: 'js' };
        if (args.path === 'headlab:preloads') return { contents: `export default ${JSON.stringify(preloads)};`, loader: 'js' };
        if (args.path === 'headlab:layout') {
          // The site's bundles find the .wasm files and models next to themselves (the npm package's
          // components differ: scripts/package-components.mjs).
          return { contents: 'export const wasmNextToBundle = true;\nexport const modelUrls = null;', loader: 'js' };
        }
        // Two modules, as esbuild places whole modules in chunks: the rules (typeset.js, elements with
        // formulas) and the @font-face rules (fonts.js, which every element's base imports).
        if (args.path === 'headlab:katex-css') return { contents: `export const css = ${JSON.stringify(katexRules)};`, loader: 'js' };
        if (args.path === 'headlab:katex-fonts') return { contents: `export const fontFaces = ${JSON.stringify(fontFaces.join('\n'))};`, loader: 'js' };
        return null;
      });
    },
  };
}

const common = {
  bundle: true,
  platform: 'browser',
  target: ['chrome91', 'firefox90', 'safari16'],
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
  absWorkingDir: repo,
};

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

const entry = path.join(web, 'components/headlab-components.js');
// One entry per element (dist/headlab-<name>.js), which headlab-components.js imports on first use.
const elementEntries = (await readdir(path.join(web, 'components/entries'))).filter((f) => f.endsWith('.js')).sort()
  .map((f) => ({ in: path.join(web, 'components/entries', f), out: `headlab-${f.slice(0, -3)}` }));
// Workers (module scripts next to the bundle): shared/worker/compute-worker.js → headlab-worker.js,
// and every other shared/worker/<name>-worker.js → headlab-<name>-worker.js (e.g. the trainer's).
const workers = [['compute-worker.js', 'headlab-worker.js']];
for (const f of await readdir(path.join(web, 'components/shared/worker'))) {
  if (f.endsWith('-worker.js') && f !== 'compute-worker.js') workers.push([f, `headlab-${f}`]);
}
// One build with code splitting: the glue of each wasm module (core, train, and their scalar
// fallbacks) becomes a chunk that a page or Worker fetches only when it loads that module.
// Chunks sit next to the entries, so import.meta.url-relative paths mean the same in both.
const split = await build({
  ...common, format: 'esm', splitting: true, outdir: out, entryNames: '[name]', chunkNames: 'headlab-chunk-[hash]', metafile: true,
  entryPoints: [
    ...elementEntries,
    { in: path.join(web, 'components/shared/lab/lab-entry.js'), out: 'headlab-lab' },
    ...workers.map(([source, target]) => ({ in: path.join(web, 'components/shared/worker', source), out: target.replace(/\.js$/, '') })),
    // createParallelLayer's Worker, found next to whichever file holds headlab.js's code.
    { in: path.join(web, 'lib/headlab-parallel-worker.js'), out: 'headlab-parallel-worker' },
  ],
  plugins: [virtualModules({ embedWasm: false })],
});
// The registrar alone (tools/registrar.mjs): no chunk between it and an element's code, whose
// chunks it names for the browser to fetch beside it (modulepreload), as it does the API's.
const preloads = preloadTable(split.metafile, out, [...elementEntries.map((e) => e.out), 'headlab-lab']);
await build({
  ...common, entryPoints: [entry], format: 'esm', outfile: path.join(out, 'headlab-components.js'),
  plugins: [virtualModules({ embedWasm: false, preloads }), registrarExternals((name) => `headlab-${name}.js`)],
});
await build({
  ...common, entryPoints: [path.join(web, 'components/headlab-components-all.js')], format: 'iife', globalName: 'HeadLab',
  outfile: path.join(out, 'headlab-components.classic.js'),
  plugins: [virtualModules({ embedWasm: true })],
  define: { 'import.meta.url': '__headlabScriptUrl' },
  banner: {
    js: '/* HeadLab components, classic-script build with the WebAssembly module embedded (works from file://). */\n' +
      'var __headlabScriptUrl=(typeof document!=="undefined"&&document.currentScript&&document.currentScript.src)||(typeof location!=="undefined"?location.href:"");',
  },
});

// Neither eval nor new Function may appear: the strict CSP has no 'unsafe-eval'.
const chunks = (await readdir(out)).filter((f) => f.startsWith('headlab-chunk-'));
for (const file of ['headlab-components.js', 'headlab-components.classic.js', 'headlab-parallel-worker.js', 'headlab-lab.js', ...elementEntries.map((e) => `${e.out}.js`), ...workers.map(([, target]) => target), ...chunks]) {
  const text = await readFile(path.join(out, file), 'utf8');
  const bad = /\bnew Function\s*\(|[^.\w$]eval\s*\(/.exec(text);
  if (bad) {
    console.error(`bundle: ${file} contains "${bad[0]}", which the strict CSP forbids`);
    process.exit(1);
  }
}

for (const name of wasmNames) await cp(path.join(gen, `${name}.wasm`), path.join(out, `${name}.wasm`));
await mkdir(path.join(out, 'katex/fonts'), { recursive: true });
for (const font of await readdir(path.join(katexDir, 'fonts'))) {
  if (font.endsWith('.woff2')) await cp(path.join(katexDir, 'fonts', font), path.join(out, 'katex/fonts', font));
}
await cp(path.join(repo, 'node_modules/katex/LICENSE'), path.join(out, 'katex/LICENSE'));

// The site: pages and styles (sources of the bundle stay out of dist/).
await cp(path.join(web, 'index.html'), path.join(out, 'index.html'));
for (const dir of ['styles', 'site', 'demos', 'examples', 'models']) {
  if (await exists(path.join(web, dir))) await cp(path.join(web, dir), path.join(out, dir), { recursive: true });
}
await cp(path.join(repo, 'LICENSE'), path.join(out, 'LICENSE'));
// The iframe resizer of course pages, a classic script with no dependencies (docs/embedding.md).
await cp(path.join(web, 'lib/headlab-embed.js'), path.join(out, 'headlab-embed.js'));
// The API alone, for pages and CDNs that want it without the elements and KaTeX: one ES module
// (the glue of all four wasm modules inside), the .wasm files in gen/ next to it (where
// headlab.js looks for them), and the types.
// The pretrained-model engine's glue and the tokenizer stay files of their own next to it in gen/,
// fetched by the first loadPretrained() only (pages that never load a pretrained model skip them).
const lazyGen = ['tokenizers.mjs', 'headlab_pretrained.mjs', 'headlab_pretrained_scalar.mjs'];
const keepLazy = {
  name: 'headlab-lazy-gen',
  setup(b) {
    b.onResolve({ filter: /^\.\/gen\/(tokenizers|headlab_pretrained(_scalar)?)\.mjs$/ }, (args) => ({ path: args.path, external: true }));
  },
};
await build({
  ...common, entryPoints: [path.join(web, 'lib/headlab.js')], format: 'esm', splitting: false,
  outfile: path.join(out, 'lib/headlab.js'), plugins: [keepLazy],
  banner: { js: `/* HeadLab ${JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8')).version}: the JavaScript API as one ES module; the .wasm files are looked for in ./gen/ (or set locateFile). MIT License. */` },
});
await mkdir(path.join(out, 'lib/gen'), { recursive: true });
await cp(path.join(web, 'lib/headlab.d.ts'), path.join(out, 'lib/headlab.d.ts'));
// createParallelLayer's Worker, next to the API it imports as ./headlab.js.
await cp(path.join(web, 'lib/headlab-parallel-worker.js'), path.join(out, 'lib/headlab-parallel-worker.js'));
for (const name of wasmNames) await cp(path.join(gen, `${name}.wasm`), path.join(out, 'lib/gen', `${name}.wasm`));
for (const file of lazyGen) await cp(path.join(gen, file), path.join(out, 'lib/gen', file));
// The threads builds (createParallelLayer's, the language models', the pretrained models'), loaded (never bundled) where
// cross-origin isolation allows: glue, wasm and thread Worker script, where each API looks for
// headlab_core.wasm and headlab_train.wasm (the site's
// bundle next to itself; lib/headlab.js in gen/, with the package.json that makes Node run the
// Worker script as CommonJS).
const threadsFiles = ['headlab_core_threads', 'headlab_train_threads', 'headlab_pretrained_threads'].flatMap((m) => [`${m}.mjs`, `${m}.wasm`, `${m}.worker.js`]);
for (const file of [...threadsFiles, 'package.json']) {
  if (await exists(path.join(gen, file))) await cp(path.join(gen, file), path.join(out, 'lib/gen', file));
}
for (const file of threadsFiles) {
  if (await exists(path.join(gen, file))) await cp(path.join(gen, file), path.join(out, file));
}

// Precompressed copies (.br, .gz) of every compressible file, for servers that send them as they are.
const compressed = await precompress(out);

// Swap in the new dist/ in one step, so a reader never sees a half-written one.
const old = `${finalOut}.old-${process.pid}`;
if (await exists(finalOut)) await rename(finalOut, old);
await rename(out, finalOut);
await rm(old, { recursive: true, force: true });

const size = async (f) => `${((await stat(path.join(finalOut, f))).size / 1024).toFixed(0)} KiB`;
console.log(`bundle: dist/ written: headlab-components.js ${await size('headlab-components.js')}, ` +
  `headlab-components.classic.js ${await size('headlab-components.classic.js')}, headlab-worker.js ${await size('headlab-worker.js')}, ` +
  `lib/headlab.js ${await size('lib/headlab.js')} (${(gzipSync(await readFile(path.join(finalOut, 'lib/headlab.js'))).length / 1024).toFixed(0)} KiB gzip); ` +
  `precompressed ${compressed.files} files, ${(compressed.bytes / 1024).toFixed(0)} KiB: ${(compressed.br / 1024).toFixed(0)} KiB .br, ${(compressed.gz / 1024).toFixed(0)} KiB .gz`);
