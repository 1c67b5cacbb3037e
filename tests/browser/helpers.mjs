// Shared setup of the browser tests that run against dist/ (what `npm run build` writes).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmdirSync, statSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { before, after } from 'node:test';
import { serve } from '../../tools/serve.mjs';
import { WINDOW_ERROR, launch } from '../../tools/chromium.mjs';

// Chromium's launch() is tools/chromium.mjs's (scripts/make-previews.mjs uses it too).
export { WINDOW_ERROR, launch };

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = path.join(REPO, 'dist');
export const SCREENSHOTS = path.join(REPO, 'tests/browser/screenshots');

function newestMtime(p) {
  let st;
  try { st = statSync(p); } catch { return 0; }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const name of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, name)));
  return newest;
}

function distIsStale() {
  const built = newestMtime(path.join(DIST, 'headlab-components.classic.js'));
  if (!built) return true;
  const sources = ['web/components', 'web/demos', 'web/examples', 'web/styles', 'web/index.html', 'web/lib/headlab.js', 'web/lib/headlab-files.js', 'web/lib/api', 'web/lib/teach', 'web/lib/i18n', 'web/lib/headlab-parallel-worker.js', 'web/lib/headlab-embed.js', 'tools/precompress.mjs', 'tools/formulas.mjs',
    'web/lib/gen/headlab_core.wasm', 'web/models', 'web/site', 'scripts/bundle.mjs'].map((p) => newestMtime(path.join(REPO, p)));
  return Math.max(...sources) > built;
}

/**
 * Makes sure dist/ matches the sources (npm test builds it; this covers running
 * `node --test tests/browser/` by hand). Test files run in parallel, so a lock
 * directory keeps two bundlers from writing at once.
 */
export async function ensureDist() {
  const lock = path.join(REPO, 'build/.bundle-lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (!distIsStale()) return;
    try {
      mkdirSync(lock);
    } catch {
      try { if (Date.now() - statSync(lock).mtimeMs > 120_000) rmdirSync(lock); } catch { /* gone already */ }
      if (Date.now() > deadline) throw new Error('timed out waiting for another test file to bundle dist/');
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      if (distIsStale()) {
        const r = spawnSync(process.execPath, ['scripts/bundle.mjs'], { cwd: REPO, encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`node scripts/bundle.mjs failed:\n${r.stdout}${r.stderr}`);
      }
    } finally {
      rmdirSync(lock);
    }
  }
}

/** A file:// URL of a page in dist/. */
export function fileUrl(relative) {
  return pathToFileURL(path.join(DIST, relative)).href;
}

/**
 * Records console errors/warnings, page errors, window error events and unhandled rejections
 * (pages of launch()), failed requests and HTTP errors of `page` into `problems`.
 */
export function watch(page, label, problems) {
  page.on(WINDOW_ERROR, (text) => problems.push(`${label}: ${text}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`${label}: console ${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`${label}: page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`${label}: request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${label}: HTTP ${res.status()} for ${res.url()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`${label}: a dialog opened: ${dialog.type()} "${dialog.message()}"`);
    dialog.dismiss().catch(() => {});
  });
  return page;
}

/**
 * Waits until every HeadLab element on the page is ready and idle:
 * data-state="ready", no data-busy attribute, and its formulas (if any) shown.
 */
export async function waitForElements(page, timeout = 20_000) {
  await page.waitForFunction(() => {
    const els = [...document.querySelectorAll('*')].filter((e) => e.localName.startsWith('headlab-') && e.localName !== 'headlab-theme-toggle');
    return els.length > 0 && els.every((e) => customElements.get(e.localName) && e.dataset.state === 'ready' && !e.hasAttribute('data-busy') && e.dataset.formulas !== 'loading');
  }, null, { timeout });
}

/** The numbers in `td.num` cells of `[data-testid=testid]` (shadow DOM pierced). */
export async function numbers(page, testid) {
  const texts = await page.locator(`[data-testid="${testid}"] td.num`).allTextContents();
  return texts.map((t) => Number(t.trim()));
}

export function assertClose(assert, actual, expected, what, tol = 1e-4 + 1e-9) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  actual.forEach((a, i) => {
    assert.ok(Number.isFinite(a) && Math.abs(a - expected[i]) <= tol,
      `${what}[${i}] = ${a}, expected ${expected[i]} (±${tol}); all: [${actual.join(', ')}]`);
  });
}

export function ensureScreenshotDir() {
  mkdirSync(SCREENSHOTS, { recursive: true });
}

/**
 * The set-up the browser test files share: before their tests, dist/ made current, a static
 * server on it (serve()'s options: csp, inject, …) and Chromium (launch()); after them, both
 * closed. Returns { server, browser, url(path) }, filled in once `before` has run; `setup(site)`
 * runs after both are up (checks of dist/, a page the tests share).
 * @example
 * const site = useSite({ csp: true });
 * test('…', async () => { const page = await site.browser.newPage(); await page.goto(site.url('demos/')); });
 */
export function useSite(serveOptions = {}, { setup } = {}) {
  const site = { server: null, browser: null, url: (relative) => new URL(relative, site.server.url).href };
  before(async () => {
    await ensureDist();
    site.server = await serve({ port: 0, root: DIST, ...serveOptions });
    site.browser = await launch();
    await setup?.(site);
  });
  after(async () => {
    await site.browser?.close();
    await site.server?.close();
  });
  return site;
}
