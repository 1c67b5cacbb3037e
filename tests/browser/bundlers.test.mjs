// The bundler recipes of docs/install.md, run as a user would: `npm pack`, the tarball installed
// offline into a new app that imports 'headlab', bundled for the browser with Vite, esbuild and
// webpack 5 (the pinned devDependencies), served, and the worked example checked in headless
// Chromium in the page and in a module Worker. No file is copied by hand: each bundler finds
// the .wasm files itself (Vite, webpack through new URL(…, import.meta.url) in headlab.js;
// esbuild through `import url from 'headlab/wasm/….wasm'` and locateFile), no bundler prints a
// warning, and none emits an unbundled copy of a package file. Then the edges: esbuild without
// the recipe (one request and one Error naming the URL), and threads in a bundle (web/lib/gen/
// served beside it, an isolated page). The recipes of examples/recipes/ are recipes.test.mjs's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, rmSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../../tools/serve.mjs';
import { launch, watch } from './helpers.mjs';
import { installTarball, pack, viteBuild } from './package-apps.mjs';
import { courseInputsSource, expected } from '../fixtures/course.mjs';

// The app: the worked example and the task list (which loads the second module, headlab_train),
// in the page and in a module Worker.
const APP = {
  'src/app.js': `import { createHeadlab } from 'headlab';
import wasmOptions from './wasm-options.js';

export async function workedExample() {
  const lab = await createHeadlab(wasmOptions);
  const r = lab.multiHeadAttention({ ...${courseInputsSource()}, returnWeights: true });
  const tasks = (await lab.tasks()).map((task) => task.name);
  // The multi-core layer: a bundle does not carry the threads build, so it uses its Workers.
  const { query, ...weights } = ${courseInputsSource()};
  const layer = await lab.createParallelLayer({ ...weights, threads: 2 });
  const p = await layer.forward({ query });
  await layer.dispose();
  return { output: Array.from(r.output.slice(8, 12)), weights: Array.from(r.weights.slice(6, 9)), flavour: lab.info().flavour, tasks,
    parallel: { mechanism: layer.mechanism, output: Array.from(p.output.slice(8, 12)), isolated: globalThis.crossOriginIsolated === true } };
}
`,
  'src/main.js': `import { workedExample } from './app.js';

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const inWorker = new Promise((resolve, reject) => {
  worker.onmessage = (e) => resolve(e.data);
  worker.onerror = (e) => reject(new Error(e.message));
});
Promise.all([workedExample(), inWorker]).then(
  ([page, fromWorker]) => { window.result = { page, worker: fromWorker }; },
  (e) => { window.result = { error: String(e) }; });
`,
  'src/worker.js': `import { workedExample } from './app.js';

workedExample().then((r) => postMessage(r));
`,
  // Vite and webpack find the .wasm files on their own.
  'src/wasm-options.js': 'export default {};\n',
  'index.html': '<!doctype html><meta charset="utf-8"><title>app</title><link rel="icon" href="data:,"><script type="module" src="./src/main.js"></script>\n',
};

// esbuild does not follow new URL(…, import.meta.url): the app imports the files it needs as
// URLs (loader "file") and hands them to createHeadlab as locateFile.
const ESBUILD_WASM_OPTIONS = `import core from 'headlab/wasm/headlab_core.wasm';
import coreScalar from 'headlab/wasm/headlab_core_scalar.wasm';
import train from 'headlab/wasm/headlab_train.wasm';
import trainScalar from 'headlab/wasm/headlab_train_scalar.wasm';

const urls = { 'headlab_core.wasm': core, 'headlab_core_scalar.wasm': coreScalar, 'headlab_train.wasm': train, 'headlab_train_scalar.wasm': trainScalar };
export default { locateFile: (file) => new URL(urls[file], import.meta.url).href };
`;

// Each recipe builds `app` into `app/out` and returns the warnings it printed.
const RECIPES = {
  // The vite.config.js of docs/install.md.
  vite: viteBuild,
  async esbuild(app) {
    const { build } = await import('esbuild');
    writeFileSync(path.join(app, 'src/wasm-options.js'), ESBUILD_WASM_OPTIONS);
    const r = await build({
      // createParallelLayer's Worker, as an entry of its own next to the chunks (esbuild does not
      // bundle new Worker(new URL(…)) by itself).
      entryPoints: ['src/main.js', 'src/worker.js', { in: 'node_modules/headlab/web/lib/headlab-parallel-worker.js', out: 'headlab-parallel-worker' }], absWorkingDir: app,
      bundle: true, format: 'esm', splitting: true, platform: 'browser', outdir: 'out/src',
      loader: { '.wasm': 'file' }, logLevel: 'silent',
    });
    cpSync(path.join(app, 'index.html'), path.join(app, 'out/index.html'));  // the page, not a library file
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
    cpSync(path.join(app, 'index.html'), path.join(app, 'out/index.html'));
    return info.warnings.map((w) => w.message);
  },
};

let dir, tgz, browser;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-bundlers-'));
  tgz = await pack(dir);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

for (const [name, recipe] of Object.entries(RECIPES)) {
  test(`${name}: an app that imports the installed package runs the worked example in a page and in a Worker`, { timeout: 180_000 }, async () => {
    const app = path.join(dir, name);
    for (const [file, text] of Object.entries(APP)) {
      mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
      writeFileSync(path.join(app, file), text);
    }
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: `app-${name}`, version: '1.0.0', type: 'module', private: true }));
    await installTarball(app, tgz);

    // Vite 8 reports slow plugins ("[PLUGIN_TIMINGS]") when the machine is busy: a timing, not a problem.
    const warnings = (await recipe(app)).filter((w) => !/PLUGIN_TIMINGS/.test(w));
    // Not one warning (Vite's 'Module "fs" has been externalized', esbuild's 'Could not resolve "node:fs/promises"', …).
    assert.deepEqual(warnings, [], `${name} warned:\n${warnings.join('\n')}`);
    const out = path.join(app, 'out');
    const emitted = readdirSync(out, { recursive: true }).map(String);
    // The bundler emitted the package's .wasm files (named as it likes): compare the bytes.
    const bytes = (f) => readFileSync(f).toString('base64');
    const wasmOut = new Set(emitted.filter((f) => f.endsWith('.wasm')).map((f) => bytes(path.join(out, f))));
    for (const m of ['headlab_core', 'headlab_train']) {
      assert.ok(wasmOut.has(bytes(path.join(app, 'node_modules/headlab/web/lib/gen', `${m}.wasm`))), `${name} emitted ${m}.wasm: ${emitted.join(', ')}`);
    }
    for (const f of emitted.filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(path.join(out, f), 'utf8');
      assert.doesNotMatch(code, /require\(\s*["'](node:)?(fs|path)["']\)|from\s*["']node:/, `${name}: ${f} names a Node built-in`);
      // No stray unbundled copy of a package file (headlab-parallel-worker.js imports './headlab.js').
      assert.doesNotMatch(code, /from\s*["']\.\/headlab\.js["']/, `${name}: ${f} is an unbundled copy of a package file`);
    }

    // Served plain, then cross-origin isolated: there too the bundle falls back to its Workers
    // without a request for files it does not have.
    for (const isolate of [false, true]) {
      const server = await serve({ port: 0, root: out, isolate });
      const problems = [];
      const page = watch(await browser.newPage(), `${name}${isolate ? ', isolated' : ''}`, problems);
      try {
        await page.goto(`${server.url}index.html`);
        await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
        const result = await page.evaluate(() => window.result);
        assert.equal(result.error, undefined, `${name}: ${result.error}`);
        for (const [where, r] of Object.entries(result)) {
          expected.output.forEach((w, i) => assert.ok(Math.abs(r.output[i] - w) < 5e-5, `${name} ${where}: output[${i}] = ${r.output[i]}, want ${w}`));
          expected.weightsHead1.forEach((w, i) => assert.ok(Math.abs(r.weights[i] - w) < 5e-5, `${name} ${where}: weight ${i} = ${r.weights[i]}, want ${w}`));
          assert.equal(r.flavour, 'simd');
          assert.ok(r.tasks.includes('two-relations'), `${name} ${where}: tasks ${r.tasks}`);
          expected.output.forEach((w, i) => assert.ok(Math.abs(r.parallel.output[i] - w) < 5e-5, `${name} ${where}: parallel output[${i}] = ${r.parallel.output[i]}, want ${w}`));
          assert.equal(r.parallel.mechanism, 'workers', `${name} ${where}${isolate ? ', isolated' : ''}`);
          assert.equal(r.parallel.isolated, isolate);
        }
        assert.deepEqual(problems, []);
      } finally {
        await page.close();
        await server.close();
      }
    }
  });
}

// esbuild without the recipe: the .wasm files and the Worker script are not emitted. Each load then
// fails with one request and one Error that names the URL it asked for (Emscripten's loader, left
// alone, asks three times and prints its "Aborted(…)" warnings).
test('esbuild without the recipe: one request and one clear Error naming the URL, for the .wasm and for the Worker', { timeout: 180_000 }, async () => {
  const app = path.join(dir, 'esbuild-bare');
  mkdirSync(path.join(app, 'src'), { recursive: true });
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app-esbuild-bare', version: '1.0.0', type: 'module', private: true }));
  await installTarball(app, tgz);
  writeFileSync(path.join(app, 'src/main.js'), `import { createHeadlab } from 'headlab';
import core from 'headlab/wasm/headlab_core.wasm';

const run = async (options) => {
  try {
    const lab = await createHeadlab(options);
    const { query, ...weights } = ${courseInputsSource()};
    const layer = await lab.createParallelLayer({ ...weights, threads: 2 });
    await layer.dispose();
    return 'no error';
  } catch (e) {
    return e.message;
  }
};
// Without locateFile: the .wasm is asked for next to the chunk, where esbuild did not put it.
// With it (the recipe's wasm-files.js) but without the Worker entry: the Worker script is missing.
window.result = await run(location.hash === '#locate' ? { locateFile: () => new URL(core, import.meta.url).href } : {});
`);
  const { build } = await import('esbuild');
  await build({ entryPoints: ['src/main.js'], absWorkingDir: app, bundle: true, format: 'esm', splitting: true, platform: 'browser', outdir: 'out/src', loader: { '.wasm': 'file' }, logLevel: 'silent' });
  writeFileSync(path.join(app, 'out/index.html'), APP['index.html']);
  const answered = [];
  const server = await serve({ port: 0, root: path.join(app, 'out'), onResponse: ({ url, status }) => answered.push(`${status} ${url}`) });
  try {
    for (const [hash, missing, error] of [
      ['', 'src/gen/headlab_core.wasm', (url) => `HeadLab could not load its WebAssembly module headlab_core.wasm from ${url}: HTTP 404 Not Found. Serve headlab_core.wasm next to `],
      // Whichever of the two Workers fails first.
      ['#locate', 'src/headlab-parallel-worker.js', (url) => `could not start: its script failed to load or threw (${url}). `],
    ]) {
      answered.length = 0;
      const messages = [];
      const page = await (await browser.newContext()).newPage();
      page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
      await page.goto(`${server.url}index.html${hash}`);
      await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60_000 });
      const message = await page.evaluate(() => window.result);
      const url = `${server.url}${missing}`;
      assert.ok(message.startsWith(error(url)) || message.replace(/^createParallelLayer: Worker [12] of 2 /, '').startsWith(error(url)), `esbuild, no recipe${hash}: ${message}`);
      // The browser's own line for each 404, and nothing from Emscripten.
      const notFound = answered.filter((r) => r.startsWith('404 '));
      assert.ok(notFound.length >= 1 && notFound.every((r) => r === `404 /${missing}`), `esbuild, no recipe${hash}: ${answered.join(', ')}`);
      if (!hash) assert.equal(notFound.length, 1, 'the missing .wasm is asked for once');
      assert.deepEqual(messages.filter((m) => !/Failed to load resource: .* 404/.test(m)), [], `esbuild, no recipe${hash}: console`);
      await page.context().close();
    }
  } finally {
    await server.close();
  }
});

// Threads in a bundle (docs/api.md, the package README): the bundler renamed the .wasm files it
// emitted and left out the threads builds, so the app serves the package's web/lib/gen/ as it is
// and points locateFile there. On a cross-origin isolated page the parallel layer then runs on
// pthreads, and a language model in a Worker on 2 threads (headlab_train_threads).
test('vite, isolated, with web/lib/gen/ served beside the bundle: pthreads for the layer and for a language model in a Worker', { timeout: 180_000 }, async () => {
  const app = path.join(dir, 'vite-threads');
  mkdirSync(path.join(app, 'src'), { recursive: true });
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app-vite-threads', version: '1.0.0', type: 'module', private: true }));
  await installTarball(app, tgz);
  const common = `import { createHeadlab } from 'headlab';
const locateFile = (file) => new URL('/headlab-gen/' + file, location.href).href;
`;
  writeFileSync(path.join(app, 'src/main.js'), `${common}
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const inWorker = new Promise((resolve, reject) => { worker.onmessage = (e) => resolve(e.data); worker.onerror = (e) => reject(new Error(e.message)); });
try {
  const lab = await createHeadlab({ locateFile });
  const { query, ...weights } = ${courseInputsSource()};
  const layer = await lab.createParallelLayer({ ...weights, threads: 2 });
  const { output } = await layer.forward({ query });
  const page = { mechanism: layer.mechanism, output: Array.from(output.slice(8, 12)) };
  await layer.dispose();
  window.result = { page, worker: await inWorker };
} catch (e) {
  window.result = { error: String(e) };
}
`);
  writeFileSync(path.join(app, 'src/worker.js'), `${common}
const lab = await createHeadlab({ locateFile });
const lm = await lab.createLanguageModel({ task: 'induction', threads: 2 });
const threads = lm.threads;
lm.step(2);
lm.dispose();
postMessage({ threads });
`);
  writeFileSync(path.join(app, 'index.html'), APP['index.html']);
  const warnings = (await RECIPES.vite(app)).filter((w) => !/PLUGIN_TIMINGS/.test(w));
  assert.deepEqual(warnings, []);
  cpSync(path.join(app, 'node_modules/headlab/web/lib/gen'), path.join(app, 'out/headlab-gen'), { recursive: true });
  const server = await serve({ port: 0, root: path.join(app, 'out'), isolate: true });
  const problems = [];
  const page = watch(await browser.newPage(), 'vite threads', problems);
  try {
    await page.goto(`${server.url}index.html`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 90_000 });
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.page.mechanism, 'pthreads');
    expected.output.forEach((w, i) => assert.ok(Math.abs(result.page.output[i] - w) < 5e-5, `output[${i}] = ${result.page.output[i]}, want ${w}`));
    assert.equal(result.worker.threads, 2, 'the language model in the Worker runs on 2 threads');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
    await server.close();
  }
});
