// The recipes of examples/recipes/ (docs/install.md, "Recipes"), each run as its README-less user
// would: the package packed once (`npm pack`), each recipe copied to a new folder, the tarball
// installed there offline with the recipe's other dependencies (React from npm's cache: they are
// this repository's devDependencies too), built with the recipe's own `npm run build` (its build
// tools, also devDependencies here, linked from this repository's node_modules), served, and
// loaded in headless Chromium: the worked example's numbers as the page prints them against the
// course's (tests/fixtures/course.json), no console error or failed request, and each .wasm
// answered (200, or 304 from the HTTP cache: the elements' Workers load their own). Each recipe's page
// holds all nine elements: on the production build each must reach its ready state, the
// explorer and the language model with HeadLab's shipped models loaded (their layers and steps
// as web/models/models.json gives them), and no request may get a 4xx or 5xx (a bundler that
// did not emit a file the elements name by URL).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../../tools/serve.mjs';
import { REPO, launch, watch } from './helpers.mjs';
import { installTarball, limit, npm, pack } from './package-apps.mjs';
import { expected } from '../fixtures/course.mjs';
import { packageReadme } from '../../tools/package-readme.mjs';

const RECIPES = path.join(REPO, 'examples/recipes');
const CDN_PLACEHOLDER = 'https://cdn.example.org/npm/';
const HEADLAB_PLACEHOLDER = 'https://headlab.example.org';
const TIMEOUT = 300_000;  // installs and builds wait for each other on a busy machine
const ELEMENTS = ['headlab-worked-example', 'headlab-heads', 'headlab-params', 'headlab-scaling', 'headlab-misconceptions',
  'headlab-choosing-h', 'headlab-trainer', 'headlab-language-model', 'headlab-model-explorer'];
// The shipped models the page's explorer (its default, induction) and language model (pretrained, task induction) load.
const INDUCTION = JSON.parse(readFileSync(path.join(REPO, 'web/models/models.json'), 'utf8')).models.find((m) => m.file === 'induction.hlm');

// How each recipe is served once built: the folder its page is in.
const PAGES = {
  vite: { root: 'dist' },
  react: { root: 'dist' },
  esbuild: { root: '.' },
  // Another classic script after the bundle's tag: a classic webpack bundle loaded as a module would
  // take that script's folder for its own (ChunkLoadError); the recipe's ES module bundle does not.
  webpack: { root: '.', scriptAfter: true },
  mdx: { root: '.' },
};

let dir, tgz, browser;
const prepared = {};
// npm install mostly waits (all at once); builds use the cores (two at a time).
const building = limit(2);

/**
 * Copies recipe `name` into the temporary folder, installs the tarball (and its other dependencies)
 * offline, links its build tools from this repository and runs its `npm run build`.
 */
async function prepare(name) {
  const app = path.join(dir, name);
  cpSync(path.join(RECIPES, name), app, { recursive: true, filter: (src) => !/[/\\](node_modules|dist)$/.test(src) });
  const pkg = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
  // Build tools and the recipe's other dependencies (React) are linked from this repository's
  // node_modules: an offline install would need npm's cache to hold their registry documents, which a
  // fresh machine's does not (npm ci fetches tarballs only).
  const others = Object.keys(pkg.dependencies ?? {}).filter((d) => d !== 'headlab');
  for (const d of others) delete pkg.dependencies[d];
  const tools = [...Object.keys(pkg.devDependencies ?? {}), ...others];
  delete pkg.devDependencies;
  writeFileSync(path.join(app, 'package.json'), JSON.stringify(pkg, null, 2));
  if (pkg.dependencies) await installTarball(app, tgz);
  for (const tool of tools) {
    mkdirSync(path.dirname(path.join(app, 'node_modules', tool)), { recursive: true });
    symlinkSync(path.join(REPO, 'node_modules', tool), path.join(app, 'node_modules', tool), 'dir');
  }
  if (pkg.scripts?.build) {
    const out = await building(() => npm(['run', 'build'], app, { PATH: `${path.join(REPO, 'node_modules/.bin')}${path.delimiter}${process.env.PATH}` }));
    // Not one warning from the build (the bundlers print theirs as "warning" or "WARNING").
    assert.doesNotMatch(out, /\bwarn(ing)?\b/i, `${name}: npm run build printed a warning:\n${out}`);
  }
  return app;
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-recipes-'));
  tgz = await pack(dir);
  browser = await launch();
  for (const name of readdirSync(RECIPES)) {
    prepared[name] = prepare(name);
    prepared[name].catch(() => {});  // reported by the recipe's test
  }
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('every recipe under examples/recipes/ is run by this test', () => {
  assert.deepEqual(readdirSync(RECIPES).sort(), [...Object.keys(PAGES), 'cdn', 'lms'].sort());
});

test('the tarball\'s README.md is the package\'s (docs/package-readme.md); the repository\'s is back in place', () => {
  const readme = execFileSync('tar', ['xzfO', tgz, 'package/README.md'], { encoding: 'utf8' });
  assert.equal(readme, packageReadme());
  assert.notEqual(readFileSync(path.join(REPO, 'README.md'), 'utf8'), readme, 'postpack put the repository\'s README.md back');
  assert.deepEqual(readdirSync(path.join(REPO, 'build/readme-swap')), [], 'no swap left behind');
  // Written for someone who installed the package: no building from source, no root.
  assert.doesNotMatch(readme, /apt-get|sudo|Debian|as root|npm start|npm test|npm run build/);
  for (const section of ['## Install', 'import { createHeadlab } from \'headlab\'', 'headlab/components', 'Vite', 'webpack', 'esbuild', 'Worker']) {
    assert.ok(readme.includes(section), `the README speaks of ${section}`);
  }
  // A relative link points into the tarball.
  const files = new Set(execFileSync('tar', ['tzf', tgz], { encoding: 'utf8' }).split('\n').map((f) => f.replace(/^package\//, '')));
  for (const [, target] of readme.matchAll(/\]\((?!https?:|#)([^)#\s]+)/g)) assert.ok(files.has(target), `the README links to ${target}, which the tarball lacks`);
});

/** A server on `root` that records what it answered into `log` ("200 /path"). */
function recordingServer(root, log, options = {}) {
  return serve({ port: 0, root, ...options, onResponse: ({ url, status }) => log.push({ status, path: new URL(url, 'http://x').pathname, root }) });
}

/**
 * Opens `url` in a new browser context (an empty cache), waits for the worked example in
 * `frameOf(page)` (the page itself unless given) and checks its numbers, that nothing went wrong,
 * and that each .wasm the servers answered was answered (200 or 304), headlab_core.wasm among them.
 */
async function checkPage(label, url, log, { frameOf = (page) => page.mainFrame(), route } = {}) {
  const problems = [];
  const context = await browser.newContext();
  const page = watch(await context.newPage(), label, problems);
  try {
    if (route) await page.route(...route);
    await page.goto(url);
    const frame = await frameOf(page);
    await frame.waitForFunction(() => document.querySelector('[role="alert"]') ||
      ['#output', '#weights'].every((s) => /\d/.test(document.querySelector(s)?.textContent ?? '')), null, { timeout: 60_000 });
    const shown = await frame.evaluate(() => ({
      alert: document.querySelector('[role="alert"]')?.textContent,
      output: document.querySelector('#output')?.textContent, weights: document.querySelector('#weights')?.textContent,
    }));
    assert.equal(shown.alert, undefined, `${label}: the page shows an error`);
    const near = (text, want, what) => {
      const got = text.trim().split(/\s+/).map(Number);
      assert.equal(got.length, want.length, `${label}: ${what} "${text}"`);
      want.forEach((w, i) => assert.ok(Math.abs(got[i] - w) <= 1e-4, `${label}: ${what}[${i}] = ${got[i]}, want ${w} (course)`));
    };
    near(shown.output, expected.output, 'output of "it"');
    near(shown.weights, expected.weightsHead1, 'head 1 weights of "it"');
    // The element's own table of head 1's weights (its shadow DOM), from the same instance.
    await frame.waitForSelector('headlab-worked-example[data-drawn]', { timeout: 60_000 });
    near((await frame.locator('[data-testid="weights-head-1"] td.num').allTextContents()).join(' '), expected.weightsHead1, 'the element\'s head 1 weights');
    const state = await frame.evaluate(() => document.querySelector('#element-state')?.textContent);
    if (state !== undefined) assert.equal(state, 'ready', `${label}: the headlab-ready event reached the app`);
    await allElementsReady(label, frame, problems);
    assert.deepEqual(problems, [], `${label}: problems`);
    const failed = log.filter((r) => r.status >= 400).map((r) => `${r.status} ${r.path}`);
    assert.deepEqual(failed, [], `${label}: requests answered with an error`);
    // The shipped model, named as the bundler likes (a hash): compare the bytes.
    const models = log.filter((r) => r.path.endsWith('.hlm'));
    const induction = readFileSync(path.join(REPO, 'web/models/induction.hlm')).toString('base64');
    assert.ok(models.some((r) => r.status === 200 && readFileSync(path.join(r.root, r.path)).toString('base64') === induction),
      `${label}: models/induction.hlm was fetched: ${models.map((r) => `${r.status} ${r.path}`).join(', ')}`);

    // The server logs a response when Node has handed its last byte to the socket ('finish'), which
    // on a busy machine can come after the browser has compiled the module and drawn the numbers.
    for (const t0 = Date.now(); !log.some((r) => r.path.endsWith('.wasm')) && Date.now() - t0 < 10_000;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const wasm = log.filter((r) => r.path.endsWith('.wasm'));
    const counts = {};
    for (const r of wasm) (counts[r.path] ??= []).push(r);
    // Each answered in full or from the HTTP cache: the page and each element's Worker load their own
    // instance (requests made at once may each download it).
    for (const [p, rs] of Object.entries(counts)) {
      assert.ok(rs.every((r) => r.status === 200 || r.status === 304), `${label}: ${p} answered ${rs.map((r) => r.status)}`);
    }
    const core = readFileSync(path.join(REPO, 'web/lib/gen/headlab_core.wasm')).toString('base64');
    assert.ok(wasm.some((r) => readFileSync(path.join(r.root, r.path)).toString('base64') === core),
      `${label}: headlab_core.wasm is among the fetched .wasm files (${Object.keys(counts).join(', ')})`);
  } finally {
    await context.close();
  }
}

/**
 * Waits for the nine elements on `frame`: each defined, ready and idle, the explorer's model and the
 * language model's shipped model loaded. On a timeout, the assertion says where each one is.
 */
async function allElementsReady(label, frame, problems) {
  const where = () => frame.evaluate(({ tags, layers, steps }) => tags.map((tag) => {
    const e = document.querySelector(tag);
    if (!e) return `${tag}: not on the page`;
    const ready = customElements.get(tag) && e.dataset.state === 'ready' && !e.hasAttribute('data-busy');
    const model = tag === 'headlab-model-explorer' ? e.state === 'ready' && e.info?.numLayers === layers
      : tag === 'headlab-language-model' ? e.snapshot?.runs?.[0]?.step === steps : true;
    return ready && model ? null : `${tag}: state ${e.dataset.state}, busy ${e.hasAttribute('data-busy')}, model ${model}` +
      ` (${tag === 'headlab-model-explorer' ? `explorer ${e.state}` : `step ${e.snapshot?.runs?.[0]?.step}`})`;
  }).filter(Boolean), { tags: ELEMENTS, layers: INDUCTION.config.numLayers, steps: INDUCTION.steps });
  const t0 = Date.now();
  let waiting = await where();
  while (waiting.length > 0 && Date.now() - t0 < 120_000 && problems.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    waiting = await where();
  }
  assert.deepEqual(waiting, [], `${label}: every element ready, with the shipped models loaded (problems: ${problems.join('; ')})`);
  console.log(`# ${label}: nine elements ready ${((Date.now() - t0) / 1000).toFixed(1)} s after the worked example`);
}

for (const [name, { root, scriptAfter }] of Object.entries(PAGES)) {
  test(`${name}: the recipe, installed from the tarball and built, runs the worked example`, { timeout: TIMEOUT }, async () => {
    const app = await prepared[name];
    if (scriptAfter) {
      assert.match(readFileSync(path.join(app, root, 'index.html'), 'utf8'), /<script type="module" src="\.\/dist\/main\.js">/);
      writeFileSync(path.join(app, root, 'other.js'), '// another script of the page\n');
    }
    const log = [];
    const server = await recordingServer(path.join(app, root), log);
    try {
      const route = scriptAfter && ['**/index.html', async (r) => {
        const response = await r.fetch();
        await r.fulfill({ response, body: (await response.text()).replace('</body>', '<script src="./other.js"></script>\n</body>') });
      }];
      await checkPage(name, `${server.url}index.html`, log, { route });
    } finally {
      await server.close();
    }
  });
}

test('cdn: the plain HTML page imports the package from a CDN that mirrors npm', { timeout: TIMEOUT }, async () => {
  const app = await prepared.cdn;
  // The mirror: the tarball's files under /npm/headlab@<version>/, with CORS, as such CDNs serve them.
  const { version } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  const mirror = path.join(dir, 'cdn-mirror');
  mkdirSync(path.join(mirror, 'npm'), { recursive: true });
  execFileSync('tar', ['xzf', tgz, '-C', path.join(mirror, 'npm')]);
  renameSync(path.join(mirror, 'npm/package'), path.join(mirror, `npm/headlab@${version}`));
  const log = [];
  const cdn = await recordingServer(mirror, log, { cors: true });
  const site = await recordingServer(app, log);
  try {
    const html = readFileSync(path.join(app, 'index.html'), 'utf8');
    assert.ok(html.includes(`${CDN_PLACEHOLDER}headlab@${version}/web/lib/headlab.js`), 'the page names this version');
    writeFileSync(path.join(app, 'index.html'), html.replaceAll(CDN_PLACEHOLDER, `${cdn.url}npm/`));
    await checkPage('cdn', `${site.url}index.html`, log);
    assert.ok(log.every((r) => r.status === 200 || r.status === 304), `every request answered: ${log.map((r) => `${r.status} ${r.path}`).join(', ')}`);
  } finally {
    await cdn.close();
    await site.close();
  }
});

test('lms: a page whose policy allows only frames shows the lesson served from HeadLab\'s origin', { timeout: TIMEOUT }, async () => {
  const app = await prepared.lms;
  const log = [];
  const headlab = await recordingServer(app, log, { csp: false });
  const origin = headlab.url.replace(/\/$/, '');
  // The platform: host.html with its policy sent as a header, as a platform's server does.
  const hostHtml = readFileSync(path.join(app, 'host.html'), 'utf8').replaceAll(HEADLAB_PLACEHOLDER, origin);
  const policy = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(hostHtml)[1];
  assert.match(policy, /default-src 'none'/);
  assert.doesNotMatch(policy, /script-src/, 'the platform page runs no script');
  const host = http.createServer((req, res) => {
    const ok = req.url === '/host.html';
    res.writeHead(ok ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': policy, Connection: 'close' });
    res.end(ok ? hostHtml : '');
  });
  await new Promise((resolve) => host.listen(0, 'localhost', resolve));
  try {
    const frameOf = async (page) => {
      const iframe = await page.waitForSelector('iframe');
      return iframe.contentFrame();
    };
    await checkPage('lms', `http://localhost:${host.address().port}/host.html`, log, { frameOf });
  } finally {
    host.closeAllConnections();
    await new Promise((resolve) => host.close(resolve));
    await headlab.close();
  }
});
