// A course page on another origin embedding HeadLab, as an author would paste it
// (docs/embedding.md, "Embedding from another origin"): the page is served from
// http://localhost:<port>, the bundle from test servers on http://127.0.0.1:<port>
// (another origin), with and without CORS headers.
//   module build, CORS on every file  → the demo computes the course's numbers
//   module build, no CORS             → the author's fallback text stays in each element's place
//   module build, CORS but not on .wasm → each element says what failed and how the author fixes it
//   classic build, no CORS            → the demo computes (classic scripts need no CORS)
//   module build, CORS, a CSP without 'wasm-unsafe-eval' or without HeadLab's origin in connect-src
//                                     → each element names the directive to add (English, Spanish)
import { test, before, after } from 'node:test';
import http from 'node:http';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { DIST, ensureDist, launch, watch, numbers, assertClose, SCREENSHOTS, ensureScreenshotDir } from './helpers.mjs';
import { eventually, expectText } from './expect.mjs';
import { expected } from '../fixtures/course.mjs';

const TIMEOUT = 60_000;
let course;  // the course site: serves the page the current test sets
let lesson = '';
let lessonCsp = null;  // the course page's Content-Security-Policy header, if any
const FALLBACK = 'The interactive demo appears here once HeadLab has loaded. If this text stays, HeadLab could not load.';
const TAGS = ['headlab-worked-example', 'headlab-params'];

let browser;
const servers = {};
const problems = [];

before(async () => {
  await ensureDist();
  ensureScreenshotDir();
  servers.none = await serve({ port: 0, root: DIST });
  servers.all = await serve({ port: 0, root: DIST, cors: true });
  servers.noWasm = await serve({ port: 0, root: DIST, cors: (pathname) => !pathname.endsWith('.wasm') });
  course = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...(lessonCsp ? { 'Content-Security-Policy': lessonCsp } : {}) });
    res.end(lesson);
  });
  await new Promise((resolve) => course.listen(0, '127.0.0.1', resolve));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  for (const s of Object.values(servers)) await s.close();
  course?.closeAllConnections();
  await new Promise((resolve) => (course ? course.close(resolve) : resolve()));
});

/** The course page: light, its own styles, the snippet of docs/embedding.md pointing at `bundleUrl`. */
function coursePage(bundleUrl, { module = true, spanish = false } = {}) {
  const script = module ? `<script type="module" src="${bundleUrl}headlab-components.js"></script>`
    : `<script src="${bundleUrl}headlab-components.classic.js" defer></script>`;
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson 4: multi-head attention</title>' +
    '<style>body { font: 16px Georgia, serif; max-width: 46rem; margin: 2rem auto; background: #fffdf7; color: #222; }</style>' +
    `${script}</head><body><h1>Lesson 4</h1><p>Work through the example below.</p>` +
    TAGS.map((t, i) => `<${t}${spanish && i === 1 ? ' lang="es"' : ''}><p class="fallback">${FALLBACK}</p></${t}>`).join('\n') + '</body></html>';
}

async function openCourse(label, bundleUrl, options = {}) {
  const page = watch(await browser.newPage({ viewport: { width: 1000, height: 900 } }), label, problems);
  lesson = coursePage(bundleUrl, options);
  lessonCsp = options.csp ?? null;
  await page.goto(`http://localhost:${course.address().port}/lesson.html`);
  return page;
}

// The browser's console line for a blocked request names no URL; the request itself is
// recorded with its URL, and only the expected ones are let through.
const BLOCKED = /console error: Failed to load resource: net::ERR_FAILED$/;
/**
 * What the browser reports when CORS blocks `file` (a RegExp source): the failed request and its console line
 * (one per request: the registrar's preload of the .wasm is a "link element resource").
 */
const blocked = (file) => [BLOCKED, new RegExp(`request failed: http://127\\.0\\.0\\.1:\\d+/${file} \\(net::ERR_FAILED\\)$`),
  new RegExp(`console error: Access to (\\w+|link element resource) at 'http://127\\.0\\.0\\.1:\\d+/${file}' from origin 'http://localhost:\\d+' has been blocked by CORS policy`)];

/** Takes the problems recorded so far, leaving out those that `expected` matches. */
function assertNoProblems(expected = []) {
  const found = problems.splice(0).filter((p) => !expected.some((re) => re.test(p)));
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

const computesCourseNumbers = async (page) => {
  await page.waitForFunction((tags) => tags.every((t) => document.querySelector(t)?.dataset.state === 'ready'), TAGS, { timeout: 30_000 });
  await page.locator('headlab-worked-example').evaluate((e) => { e.step = 'all'; });
  await eventually(async () => assertClose(assert, await numbers(page, 'output'), expected.output, 'output for "it"'));
  await expectText(page.locator('[data-testid="params-total"]'), '1,048,576');
};

test('module build from another origin with CORS: the demos compute', { timeout: TIMEOUT }, async () => {
  const page = await openCourse('cors all', servers.all.url);
  await computesCourseNumbers(page);
  await page.close();
  assertNoProblems();
});

test('module build from another origin without CORS: the author’s fallback text stays in place', { timeout: TIMEOUT }, async () => {
  const page = await openCourse('cors none', servers.none.url);
  // The browser refuses the module (a CORS error in the console): nothing of HeadLab runs.
  await page.waitForFunction(() => performance.getEntriesByType('resource').some((r) => r.name.endsWith('headlab-components.js')), null, { timeout: 10_000 });
  await page.waitForLoadState('load');
  for (const tag of TAGS) {
    assert.equal(await page.evaluate((t) => Boolean(customElements.get(t)), tag), false, `${tag} is not defined`);
    await expectText(page.locator(`${tag} p.fallback`), FALLBACK);
    assert.ok(await page.locator(`${tag} p.fallback`).isVisible(), `${tag}: the fallback text is visible`);
  }
  await page.screenshot({ path: `${SCREENSHOTS}/embed-cross-origin-no-cors.png` });
  await page.close();
  assertNoProblems(blocked('headlab-components\\.js'));
});

test('module build from another origin with CORS on the code but not on the wasm: each element says what failed and what the author does', { timeout: TIMEOUT }, async () => {
  const page = await openCourse('cors no wasm', servers.noWasm.url);
  await page.waitForFunction((tags) => tags.every((t) => document.querySelector(t)?.dataset.state === 'failed'), TAGS, { timeout: 30_000 });
  const origin = new URL(servers.noWasm.url).origin;
  for (const tag of TAGS) {
    const text = await expectText(page.locator(`${tag} [data-testid="fatal"]`), /This demo could not start: its WebAssembly module \(headlab_core\.wasm\) did not load\./);
    assert.ok(text.includes(`HeadLab is served from ${origin}, another origin than this page`), `${tag} names the origin: ${text}`);
    assert.match(text, /Access-Control-Allow-Origin.*headlab-components\.classic\.js/s, `${tag} says how to fix it: ${text}`);
    assert.doesNotMatch(text, /Content-Security-Policy refused|got no answer/, `${tag} blames CORS alone: ${text}`);
    assert.ok(await page.locator(`${tag} [data-testid="fatal"]`).isVisible());
  }
  await page.screenshot({ path: `${SCREENSHOTS}/embed-cross-origin-no-wasm-cors.png` });
  await page.close();
  assertNoProblems(blocked('headlab_core\\.wasm'));
});

// What Chromium reports of a CSP refusal: its console line and the refused request. Nothing else
// (no uncaught error, no unhandled rejection) may reach the page.
const REFUSED = [/console error: .*(Content Security Policy|Content Security policy)/, /request failed: .* \(csp\)$/];

test('module build from another origin with CORS, under a CSP that refuses it: each element names the directive to add, in its language', { timeout: TIMEOUT }, async () => {
  const cdn = new URL(servers.all.url).origin;
  const common = "default-src 'self'; style-src 'self' 'unsafe-inline'";
  for (const [label, csp, directive, source] of [
    ['csp without wasm-unsafe-eval', `${common}; script-src 'self' ${cdn}; connect-src ${cdn}; font-src ${cdn}`, 'script-src', "'wasm-unsafe-eval'"],
    ['csp without connect-src', `${common}; script-src 'self' 'wasm-unsafe-eval' ${cdn}; font-src ${cdn}`, 'connect-src', cdn],
  ]) {
    const page = await openCourse(label, servers.all.url, { csp, spanish: true });
    await page.waitForFunction((tags) => tags.every((t) => document.querySelector(t)?.dataset.state === 'failed'), TAGS, { timeout: 30_000 });
    const english = await expectText(page.locator(`${TAGS[0]} [data-testid="fatal"]`), /did not load\./);
    assert.ok(english.includes(`this page’s Content-Security-Policy refused it. Add ${source} to the page’s ${directive} directive`), `${label}: ${english}`);
    const spanish = await expectText(page.locator(`${TAGS[1]} [data-testid="fatal"]`), /no se cargó/);
    assert.ok(spanish.includes(`la Content-Security-Policy de esta página lo rechazó. Añada ${source} a la directiva ${directive} de la página`), `${label}: ${spanish}`);
    for (const text of [english, spanish]) assert.doesNotMatch(text, /Access-Control-Allow-Origin/, `${label}: CORS is not blamed: ${text}`);
    await page.close();
    assertNoProblems(REFUSED);
  }
});

test('classic build from another origin without CORS: the demos compute', { timeout: TIMEOUT }, async () => {
  const page = await openCourse('classic no cors', servers.none.url, { module: false });
  await computesCourseNumbers(page);
  await page.close();
  // KaTeX's fonts are fetched with CORS (as every web font is): without it the maths falls back to local fonts.
  assertNoProblems(blocked('katex/fonts/KaTeX_[\\w-]+\\.woff2'));
});

test('every demo page with ?embed shows its element alone, at the top of a course page’s iframe, light on a dark system', { timeout: 120_000 }, async () => {
  const demos = [['worked-example', 'headlab-worked-example'], ['heads', 'headlab-heads'], ['params', 'headlab-params'], ['scaling', 'headlab-scaling'],
    ['misconceptions', 'headlab-misconceptions'], ['choosing-h', 'headlab-choosing-h'], ['trainer', 'headlab-trainer']];
  const context = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1000, height: 900 } });
  for (const [name, tag] of demos) {
    const page = watch(await context.newPage(), `embed iframe ${name}`, problems);
    lesson = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson</title></head><body style="margin:0">' +
      `<h1 style="margin:8px">Lesson</h1><iframe title="HeadLab ${name}" src="${servers.none.url}demos/${name}/index.html?embed" style="width:760px;height:600px;border:0"></iframe></body></html>`;
    await page.goto(`http://localhost:${course.address().port}/lesson.html`);
    const frame = page.frameLocator('iframe');
    await frame.locator(`${tag}[data-state="ready"]`).first().waitFor({ timeout: 30_000 });
    const where = await frame.locator(tag).first().evaluate((e) => {
      const box = e.getBoundingClientRect();
      const visible = (sel) => [...document.querySelectorAll(sel)].some((n) => n.getBoundingClientRect().height > 0);
      const bg = getComputedStyle(e).backgroundColor.match(/\d+/g).map(Number);
      return { top: box.top, height: box.height, header: visible('.site-header'), title: visible('.page > h1'), prose: visible('.prose, .lead'),
        light: (bg[0] + bg[1] + bg[2]) / 3 > 128 };
    });
    assert.ok(where.top >= 0 && where.top < 40 && where.height > 200, `${name}: the element starts at the top of the iframe (top ${where.top}, height ${where.height})`);
    assert.deepEqual([where.header, where.title, where.prose], [false, false, false], `${name}: header, title and prose are hidden`);
    assert.ok(where.light, `${name}: light, as elements in a course page are, on a dark system`);
    if (name === 'worked-example') await page.screenshot({ path: `${SCREENSHOTS}/embed-iframe-worked-example.png` });
    await page.close();
  }
  await context.close();
  assertNoProblems();
});
