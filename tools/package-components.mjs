// Builds the elements for the npm package into components/ (buildComponents(): run by `npm pack`
// through scripts/prepack.mjs; also `node scripts/package-components.mjs`):
//   components/index.js              'headlab/components': registers every element, each loaded on
//                                    first use (web/components/headlab-components.js)
//   components/<name>.js             'headlab/components/<name>': one element (web/components/entries/)
//   components/headlab-*-worker.js   'headlab/workers/<name>': the elements' Worker scripts
//   components/headlab-chunk-*.js    code the entries share (the elements' base, KaTeX, the teaching library)
//   components/katex/fonts/*.woff2   KaTeX's fonts; components/models/*.hlm the language models
//   components/index.d.ts            the elements' types (HTMLElementTagNameMap)
//   components/react.js, .d.ts       'headlab/components/react' (and vue, svelte): every element, with that
//                                    framework's typing of the tags (web/components/types/)
// Unlike the site's bundle (scripts/bundle.mjs), the API is not inside: every import of
// web/lib/headlab.js stays an import of the package's own web/lib/headlab.js, so a page that imports
// 'headlab' too runs one API instance and fetches each .wasm once, from where headlab.js names it
// (new URL('./gen/….wasm', import.meta.url), which Vite and webpack follow). The fonts, models and
// Workers are named the same way (literal new URL(…, import.meta.url)), so bundlers emit them.
import { build } from 'esbuild';
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { registrarExternals } from './registrar.mjs';
import { formulaModules } from './formulas.mjs';
import { FRAMEWORK_TYPES, frameworkTypesFile } from './custom-elements.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const web = path.join(repo, 'web');
const OUT = path.join(repo, 'components');
const api = path.join(web, 'lib/headlab.js');
const katexDir = path.join(repo, 'node_modules/katex/dist');

/** The elements: name (entries/<name>.js) → tag and class, from web/components/headlab-<name>.js. */
export async function elementSources() {
  const names = (await readdir(path.join(web, 'components/entries'))).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3)).sort();
  return Promise.all(names.map(async (name) => {
    const source = await readFile(path.join(web, `components/headlab-${name}.js`), 'utf8');
    return { name, tag: `headlab-${name}`, className: /export class (\w+)/.exec(source)[1], file: `web/components/headlab-${name}.js`, source };
  }));
}

const WORKERS = ['compute-worker.js', 'trainer-worker.js', 'lm-worker.js', 'explorer-worker.js'];
// Output names as web/components/shared/worker/worker-files.js names them.
const workerOut = (f) => (f === 'compute-worker.js' ? 'headlab-worker' : `headlab-${f.slice(0, -3)}`);

async function virtualModules() {
  const katexCss = await readFile(path.join(katexDir, 'katex.min.css'), 'utf8');
  const fontFaces = (katexCss.match(/@font-face\{[^}]*\}/g) ?? [])
    .map((rule) => rule.replace(/src:[^;}]*/, (src) => src.split(',').filter((s) => s.includes('woff2')).join(',')));
  // Each font a literal new URL(…, import.meta.url), so a bundler emits the ones the CSS names.
  const fontFacesJs = fontFaces.join('\n').split(/url\(fonts\/([\w-]+\.woff2)\)/)
    .map((part, i) => (i % 2 === 0 ? JSON.stringify(part) : `"url(" + new URL(${JSON.stringify(`./katex/fonts/${part}`)}, import.meta.url).href + ")"`)).join(' + ');
  const katexRules = katexCss.replace(/@font-face\{[^}]*\}/g, '');
  const models = (await readdir(path.join(web, 'models'))).filter((f) => f.endsWith('.hlm')).sort();
  const modelUrls = `{ ${models.map((f) => `${JSON.stringify(f)}: () => new URL(${JSON.stringify(`./models/${f}`)}, import.meta.url)`).join(', ')} }`;
  const contents = {
    'headlab:embedded-wasm': 'export default null;',
    'headlab:embedded-models': 'export default null;',
    // Bundlers (Vite, webpack) name the chunks of an app: the registrar preloads nothing.
    'headlab:preloads': 'export default null;',
    'headlab:layout': `export const wasmNextToBundle = false;\nexport const modelUrls = ${modelUrls};`,
    'headlab:katex-css': `export const css = ${JSON.stringify(katexRules)};`,
    'headlab:katex-fonts': `export const fontFaces = ${fontFacesJs};`,
    ...formulaModules(),
  };
  return {
    name: 'headlab-package',
    setup(b) {
      b.onResolve({ filter: /^headlab:/ }, (args) => ({ path: args.path, namespace: 'headlab' }));
      b.onLoad({ filter: /.*/, namespace: 'headlab' }, (args) => ({ contents: contents[args.path], loader: 'js', resolveDir: web }));
      // The API stays the package's own module, one instance per page.
      b.onResolve({ filter: /headlab\.js$/ }, (args) => {
        if (args.namespace !== 'file' || path.resolve(args.resolveDir, args.path) !== api) return null;
        return { path: '../web/lib/headlab.js', external: true };
      });
    },
  };
}

/** Builds the elements into `out` (components/ of the repository unless given). */
export async function buildComponents({ out = OUT } = {}) {
  const elements = await elementSources();
  const tmp = `${out}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  const options = {
    bundle: true, platform: 'browser', format: 'esm', minify: true, legalComments: 'eof',
    target: ['chrome91', 'firefox90', 'safari16'], logLevel: 'warning', absWorkingDir: repo,
  };
  // The registrar alone (tools/registrar.mjs), then everything else with shared chunks.
  await build({
    ...options, entryPoints: [path.join(web, 'components/headlab-components.js')], outfile: path.join(tmp, 'index.js'),
    plugins: [await virtualModules(), registrarExternals((name) => `${name}.js`)],
  });
  await build({
    ...options, splitting: true, outdir: tmp, entryNames: '[name]', chunkNames: 'headlab-chunk-[hash]',
    entryPoints: [
      ...elements.map(({ name }) => ({ in: path.join(web, `components/entries/${name}.js`), out: name })),
      { in: path.join(web, 'components/shared/lab/lab-entry.js'), out: 'headlab-lab' },
      ...WORKERS.map((f) => ({ in: path.join(web, 'components/shared/worker', f), out: workerOut(f) })),
    ],
    plugins: [await virtualModules()],
  });
  await mkdir(path.join(tmp, 'katex/fonts'), { recursive: true });
  for (const font of await readdir(path.join(katexDir, 'fonts'))) {
    if (font.endsWith('.woff2')) await cp(path.join(katexDir, 'fonts', font), path.join(tmp, 'katex/fonts', font));
  }
  await cp(path.join(repo, 'node_modules/katex/LICENSE'), path.join(tmp, 'katex/LICENSE'));
  await mkdir(path.join(tmp, 'models'), { recursive: true });
  for (const f of (await readdir(path.join(web, 'models'))).filter((f) => f.endsWith('.hlm'))) await cp(path.join(web, 'models', f), path.join(tmp, 'models', f));
  // The types, with the API's path as it is in the package.
  const types = await readFile(path.join(web, 'components/headlab-components.d.ts'), 'utf8');
  await writeFile(path.join(tmp, 'index.d.ts'), types.replace("from '../lib/headlab.js';", "from '../web/lib/headlab.js';"));
  for (const { name, className } of elements) {
    await writeFile(path.join(tmp, `${name}.d.ts`), `// Registers <headlab-${name}> (types: index.d.ts, with HTMLElementTagNameMap).\nexport { ${className} } from './index.js';\n`);
  }
  // 'headlab/components/react' (and vue, svelte): every element, as 'headlab/components', plus that framework's typing of the tags.
  for (const framework of Object.keys(FRAMEWORK_TYPES)) {
    const text = await readFile(frameworkTypesFile(framework), 'utf8');
    await writeFile(path.join(tmp, `${framework}.d.ts`), text.replaceAll("'../headlab-components.js'", "'./index.js'"));
    await writeFile(path.join(tmp, `${framework}.js`), `// 'headlab/components/${framework}': every element, as 'headlab/components' (${framework}.d.ts types the tags).\nexport * from './index.js';\n`);
  }
  await rm(out, { recursive: true, force: true });
  await cp(tmp, out, { recursive: true });
  await rm(tmp, { recursive: true, force: true });
  return { elements, files: await readdir(out) };
}
