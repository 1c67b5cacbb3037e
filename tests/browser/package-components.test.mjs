// The elements from the npm package, as an app would use them: `npm pack`, the tarball installed
// offline into a new project, and a page that imports 'headlab/components/worked-example' (and
// 'headlab' itself) unbundled through an import map, then bundled by Vite and by webpack 5 (the
// pinned devDependencies). In headless Chromium the element shows the course's numbers (the
// attention weights of "it", 0.7337 on "ball" for head 1, against the course fixture), with no
// console error, one API instance (the page's createHeadlab() and the element's are the same), and
// each .wasm fetched exactly once. Unbundled, no other element's code is requested.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readdirSync, rmSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../../tools/serve.mjs';
import { launch, watch, assertClose } from './helpers.mjs';
import { expected } from '../fixtures/course.mjs';
import { pack, viteBuild } from './package-apps.mjs';

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });

// The app's script: one element, and the API (same instance), in a page with step="all".
const MAIN = `import 'headlab/components/worked-example';
import { createHeadlab } from 'headlab';

const element = document.querySelector('headlab-worked-example');
element.addEventListener('headlab-ready', async () => {
  const lab = await createHeadlab();
  const { createHeadlab: fromComponents } = await import('headlab/components');
  window.result = { sameInstance: lab === (await fromComponents()), version: lab.info().version };
});
`;
const BODY = '<headlab-worked-example step="all"></headlab-worked-example>';
const page = (head, script) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>app</title><link rel="icon" href="data:,">${head}</head>` +
  `<body><h1>A course page</h1>${BODY}<p>Text below the demo.</p>${script}</body></html>\n`;

let dir, tgz, browser;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-components-'));
  tgz = await pack(dir);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function newApp(name) {
  const app = path.join(dir, name);
  mkdirSync(path.join(app, 'src'), { recursive: true });
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: `app-${name}`, version: '1.0.0', type: 'module', private: true }));
  npm(['install', '--offline', '--no-package-lock', tgz], app);
  writeFileSync(path.join(app, 'src/main.js'), MAIN);
  return app;
}

/** Loads `url`, waits for the element and the app's result; returns what the page requested and showed. */
async function check(label, url) {
  const problems = [];
  const p = watch(await browser.newPage(), label, problems);
  const requests = [];
  p.on('request', (r) => requests.push(r.url()));
  try {
    await p.goto(url);
    await p.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
    await p.waitForSelector('headlab-worked-example[data-drawn]', { timeout: 20_000 });
    const weights = (await p.locator('[data-testid="weights-head-1"] td.num').allTextContents()).map(Number);
    assertClose(assert, weights, expected.weightsHead1, `${label}: attention weights of "it", head 1`);
    assert.match(await p.locator('[data-testid="weights-why"] li[data-head="1"]').textContent(), /scores highest with “ball”.*0\.7337/s);
    const result = await p.evaluate(() => window.result);
    assert.equal(result.sameInstance, true, `${label}: the element and the page share one API instance`);
    const wasm = requests.filter((u) => new URL(u).pathname.endsWith('.wasm'));
    assert.equal(wasm.length, 1, `${label}: one .wasm request (headlab_core), got ${wasm.join(', ')}`);
    assert.deepEqual(problems, []);
    return requests;
  } finally {
    await p.close();
  }
}

test('unbundled through an import map: the worked example from the package, its code alone, one fetch per .wasm', { timeout: 120_000 }, async () => {
  const app = newApp('importmap');
  const map = {
    imports: {
      headlab: '/node_modules/headlab/web/lib/headlab.js',
      'headlab/components': '/node_modules/headlab/components/index.js',
      'headlab/components/worked-example': '/node_modules/headlab/components/worked-example.js',
    },
  };
  writeFileSync(path.join(app, 'index.html'), page(`<script type="importmap">${JSON.stringify(map)}</script>`, '<script type="module" src="/src/main.js"></script>'));
  const server = await serve({ port: 0, root: app });
  try {
    const requests = await check('import map', `${server.url}index.html`);
    const pkg = requests.map((u) => new URL(u).pathname).filter((p) => p.startsWith('/node_modules/headlab/components/'));
    const others = readdirSync(path.join(app, 'node_modules/headlab/components')).filter((f) => f.endsWith('.js') && !f.startsWith('headlab-') && !['worked-example.js', 'index.js'].includes(f));
    assert.ok(others.length >= 8, `the package holds the other elements: ${others.join(', ')}`);
    for (const f of others) assert.ok(!pkg.includes(`/node_modules/headlab/components/${f}`), `${f} (another element) was not requested: ${pkg.join(', ')}`);
    assert.ok(!requests.some((u) => /worker\.js$/.test(u)), 'the worked example starts no Worker');
  } finally {
    await server.close();
  }
});

const BUILDS = {
  async vite(app) {
    writeFileSync(path.join(app, 'index.html'), page('', '<script type="module" src="./src/main.js"></script>'));
    return viteBuild(app);
  },
  // esbuild follows no new URL(…, import.meta.url): the recipe of docs/install.md adds the Workers as
  // entries and copies the files the package names that way next to the output.
  async esbuild(app) {
    const { build } = await import('esbuild');
    const pkg = path.join(app, 'node_modules/headlab');
    const workers = ['headlab-worker', 'headlab-trainer-worker', 'headlab-lm-worker', 'headlab-explorer-worker'];
    const r = await build({
      entryPoints: ['src/main.js', ...workers.map((w) => ({ in: `node_modules/headlab/components/${w}.js`, out: w }))], absWorkingDir: app,
      bundle: true, format: 'esm', splitting: true, platform: 'browser', outdir: 'out/src', logLevel: 'silent',
    });
    for (const dir of ['katex', 'models']) cpSync(path.join(pkg, 'components', dir), path.join(app, 'out/src', dir), { recursive: true });
    mkdirSync(path.join(app, 'out/src/gen'));
    for (const f of readdirSync(path.join(pkg, 'web/lib/gen')).filter((f) => f.endsWith('.wasm'))) cpSync(path.join(pkg, 'web/lib/gen', f), path.join(app, 'out/src/gen', f));
    writeFileSync(path.join(app, 'out/index.html'), page('', '<script type="module" src="./src/main.js"></script>'));
    return r.warnings.map((w) => w.text);
  },
  async webpack(app) {
    const { default: webpack } = await import('webpack');
    const stats = await new Promise((resolve, reject) => webpack({
      mode: 'production', context: app, entry: './src/main.js',
      output: { path: path.join(app, 'out/src'), filename: 'main.js', clean: true },
      performance: { hints: false },
    }, (err, s) => (err ? reject(err) : resolve(s))));
    const info = stats.toJson({ all: false, warnings: true, errors: true });
    if (info.errors.length) throw new Error(info.errors.map((e) => e.message).join('\n'));
    // webpack's public path is the script's own folder: the page loads it as a module script.
    writeFileSync(path.join(app, 'out/index.html'), page('', '<script type="module" src="./src/main.js"></script>'));
    return info.warnings.map((w) => w.message);
  },
};

for (const [name, build] of Object.entries(BUILDS)) {
  test(`${name}: an app bundling 'headlab/components/worked-example' shows the course's numbers, one fetch per .wasm`, { timeout: 300_000 }, async () => {
    const app = newApp(name);
    // Rolldown's PLUGIN_TIMINGS notes say how long plugins ran on this busy machine, not a problem.
    const warnings = (await build(app)).filter((w) => !/PLUGIN_TIMINGS/.test(w));
    assert.deepEqual(warnings, [], `${name} warned:\n${warnings.join('\n')}`);
    const out = path.join(app, 'out');
    const emitted = readdirSync(out, { recursive: true }).map(String);
    // KaTeX's fonts and the elements' Workers are there (emitted by Vite and webpack, as the package names them).
    assert.ok(emitted.some((f) => f.endsWith('.woff2')), `${name}: KaTeX's fonts: ${emitted.join(', ')}`);
    assert.ok(emitted.filter((f) => f.endsWith('.js')).length >= 5, `${name}: the page's code and the elements' Workers: ${emitted.join(', ')}`);
    const server = await serve({ port: 0, root: out });
    try {
      await check(name, `${server.url}index.html`);
    } finally {
      await server.close();
    }
  });
}
