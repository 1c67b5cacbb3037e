// <headlab-model-explorer> in headless Chromium, served from dist/ under the strict CSP: the
// real-models page loads HeadLab's induction model in its Worker, draws the layers × heads
// grid with the legend, a head opens (heatmap and lines), switching the induction heads off
// changes the top-5 next tokens exactly as the LanguageModel says (checked in the page through
// the API, not through the element); the grid works by keyboard alone (arrows, Enter, O);
// hostile text stays text; the link keeps model, head and switched-off heads; a Hugging Face
// model named in the link is only offered, with its size, and a blocked download is said in
// plain words; 360 px without horizontal overflow; the classic bundle from file://; axe-core.
// Screenshots at 1280 and 360 px go to tests/browser/screenshots/.
import { beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DIST, REPO, SCREENSHOTS, ensureScreenshotDir, watch, fileUrl, useSite } from './helpers.mjs';
import { eventually, expectText } from './expect.mjs';
import { sizeText } from '../../web/lib/teach/explorer-controller.js';
import { HUB_MODELS } from '../../web/lib/teach/hub-models.js';

const TIMEOUT = 120_000;
const PAGE = 'demos/real-models/index.html';
const TAG = 'headlab-model-explorer';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const problems = [];

const site = useSite({ csp: true }, {
  setup: async () => {
    assert.ok(existsSync(path.join(DIST, 'headlab-explorer-worker.js')), 'dist/headlab-explorer-worker.js is missing: bundle.mjs builds every shared/worker/*-worker.js');
    ensureScreenshotDir();
  },
});

// A test that fails before its own check must not pass its problems on to the next one.
beforeEach(() => { problems.splice(0); });

function assertNoProblems(allowed = []) {
  const found = problems.splice(0).filter((p) => !allowed.some((re) => re.test(p)));
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

async function open(label, { width = 1280, hash = '', url = site.url(`${PAGE}${hash}`), colorScheme = 'light' } = {}) {
  const page = watch(await site.browser.newPage({ viewport: { width, height: 900 }, colorScheme }), label, problems);
  await page.goto(url);
  await page.waitForSelector(`${TAG}[data-drawn]`, { timeout: 60_000 });
  return page;
}

const x = (page) => page.locator(TAG);
const cell = (page, l, h) => page.locator(`${TAG} [data-testid="explorer-cell-${l}-${h}"]`);
const ready = (page) => page.waitForFunction((tag) => document.querySelector(tag).state === 'ready' && document.querySelector(tag).results, TAG, { timeout: 60_000 });
const nextTokens = (page) => page.evaluate((tag) => document.querySelector(tag).results.next.map((n) => [n.token, n.probability]), TAG);
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** In the page, through the API alone: the induction model's top 5 with `off` heads switched off. */
function apiTop5(page, text, off) {
  return page.evaluate(async ({ text, off }) => {
    const { createHeadlab } = await import('/lib/headlab.js');
    const lab = await createHeadlab();
    const bytes = new Uint8Array(await (await fetch('/models/induction.hlm')).arrayBuffer());
    const lm = await lab.loadLanguageModel(bytes);
    for (const [l, h] of off) lm.setHeadEnabled(l, h, false);
    const top = lm.predict(text, { topK: 5 }).map((n) => [n.token, n.probability]);
    lm.dispose();
    return top;
  }, { text, off });
}

test('loads HeadLab\'s model in its Worker, draws the grid with its legend, opens a head; switching heads off changes the top 5 as the API says', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer main');
  await ready(page);
  const s = await page.evaluate((tag) => {
    const e = document.querySelector(tag);
    return { info: e.info, mode: e.controller.client.mode, text: e.controller.text };
  }, TAG);
  assert.equal(s.mode, 'worker', 'the model lives in the explorer Worker');
  assert.deepEqual([s.info.numLayers, s.info.numHeads], [2, 4]);
  assert.equal(await x(page).locator('[role="gridcell"]').count(), 8);
  const legend = await x(page).locator('[data-testid="explorer-legend"]').textContent();
  for (const name of ['previous-token', 'duplicate-token', 'induction', 'first-token']) assert.match(legend, new RegExp(name));
  // The trained model's pair: previous-token heads in layer 1, induction heads in layer 2 (marked P and I).
  const marks = await x(page).locator('[role="gridcell"]').allTextContents();
  assert.ok(marks.slice(0, 4).includes('P') && marks.slice(4).every((m) => m === 'I'), `marks: ${marks.join(',')}`);
  // A click opens a head: its heatmap has one row per token.
  await cell(page, 1, 3).click();
  await expectText(x(page).locator('[data-testid="explorer-detail-title"]'), /Layer 1, head 3: a previous-token head/);
  const T = (await page.evaluate((tag) => document.querySelector(tag).results.tokens.length, TAG));
  assert.equal(await x(page).locator('[data-testid="explorer-detail-table"] tbody tr').count(), T);
  assert.equal(await x(page).locator('[data-testid="explorer-lines"] svg').count(), 1, 'the lines view is drawn');
  // Every head on: the API's answer.
  const allOn = await apiTop5(page, s.text, []);
  assert.deepEqual(await nextTokens(page), allOn);
  // Every induction head off, through the opened head's button.
  for (let h = 1; h <= 4; h++) {
    await cell(page, 2, h).click();
    await x(page).locator('[data-action="toggle-head"]').click();
    await eventually(async () => assert.equal(await cell(page, 2, h).getAttribute('data-off'), ''));
  }
  await page.waitForFunction((tag) => document.querySelector(tag).state === 'ready' && document.querySelector(tag).controller.off.size === 4 &&
    document.querySelector(tag).results.baseline, TAG);
  const off = await apiTop5(page, s.text, [[1, 0], [1, 1], [1, 2], [1, 3]]);
  await eventually(async () => assert.deepEqual(await nextTokens(page), off));
  assert.notEqual(off[0][0], allOn[0][0], 'without its induction heads the model no longer copies the repeat');
  await expectText(x(page).locator('[data-testid="explorer-off"]'), /Switched off: L2 H1, L2 H2, L2 H3, L2 H4/);
  const table = await x(page).locator('[data-testid="explorer-next"]').textContent();
  assert.match(table, /With every head on/);
  await page.screenshot({ path: `${SCREENSHOTS}/model-explorer-1280.png`, fullPage: true });
  // All heads on again.
  await x(page).locator('[data-action="all-on"]').click();
  await eventually(async () => assert.deepEqual(await nextTokens(page), allOn));
  await page.close();
  assertNoProblems();
});

test('keyboard only: Tab reaches the grid, arrows move, Enter opens, O switches a head off and on', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer keys');
  await ready(page);
  const active = () => page.evaluate((tag) => {
    const a = document.querySelector(tag).shadowRoot.activeElement;
    return a ? { role: a.getAttribute('role'), testid: a.dataset.testid } : null;
  }, TAG);
  let reached = null;
  for (let i = 0; i < 40 && !(reached?.role === 'gridcell'); i++) {
    await page.keyboard.press('Tab');
    reached = await active();
  }
  assert.equal(reached?.role, 'gridcell', 'Tab reaches the grid');
  const start = reached.testid;
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowUp');
  await eventually(async () => assert.equal((await active()).testid, 'explorer-cell-1-1'), { timeout: 5_000 });
  assert.ok(start);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await expectText(x(page).locator('[data-testid="explorer-detail-title"]'), /Layer 2, head 2/);
  await page.keyboard.press('o');
  await eventually(async () => assert.equal(await cell(page, 2, 2).getAttribute('data-off'), ''));
  await page.waitForFunction((tag) => document.querySelector(tag).state === 'ready' && document.querySelector(tag).results.baseline, TAG);
  await page.keyboard.press('o');
  await eventually(async () => assert.equal(await cell(page, 2, 2).getAttribute('data-off'), null));
  // Picking another model by keyboard: Tab to its button, Enter.
  await x(page).locator('[data-testid="explorer-model-cricket"]').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction((tag) => document.querySelector(tag).info?.task === 'cricket' && document.querySelector(tag).state === 'ready', TAG, { timeout: 60_000 });
  assert.equal(await x(page).locator('[data-testid="explorer-text"]').inputValue(), 'virat hit the ball because it was');
  await page.close();
  assertNoProblems();
});

test('hostile text stays text; a word the model does not know is explained and the model keeps working', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer hostile', { hash: '#explorer.model=cricket' });
  await ready(page);
  const hostile = '<img src=x onerror="window.__pwned=1"> it was';
  await x(page).locator('[data-testid="explorer-text"]').fill(hostile);
  await x(page).locator('[data-action="run"]').click();
  await expectText(x(page).locator('[data-testid="explorer-text-error"]'), /does not know “<img”/);
  const injected = await page.evaluate((tag) => ({ img: document.querySelector(tag).shadowRoot.querySelectorAll('img').length, pwned: window.__pwned ?? null }), TAG);
  assert.deepEqual(injected, { img: 0, pwned: null });
  // The course sentence: this small model does not know "outside", and says so.
  await x(page).locator('[data-testid="explorer-text"]').fill('Virat hit the ball because it was full and outside off.');
  await x(page).locator('[data-testid="explorer-text"]').press('Enter');
  await expectText(x(page).locator('[data-testid="explorer-text-error"]'), /does not know “outside”/);
  await x(page).locator('[data-testid="explorer-text"]').fill('Virat hit the ball because it was');
  await x(page).locator('[data-testid="explorer-text"]').press('Enter');
  await expectText(x(page).locator('[data-testid="explorer-text-error"]'), '');
  const top = (await nextTokens(page)).map((t) => t[0]);
  assert.ok(['full', 'short', 'wide'].includes(top[0]), `after "it was" a ball is full, short or wide: ${top.join(', ')}`);
  await page.close();
  assertNoProblems();
});

test('the link keeps model, text, opened head and switched-off heads', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer link', { hash: '#explorer.model=induction&explorer.head=1.4&explorer.off=2.1,2.3&explorer.text=a%20b%20c%20a%20b' });
  await ready(page);
  await page.waitForFunction((tag) =>
    document.querySelector(tag).controller.off.size === 2 && document.querySelector(tag).results?.baseline, TAG);
  const s = await page.evaluate((tag) => {
    const c = document.querySelector(tag).controller;
    return { open: c.open, off: c.ablate, text: c.text, url: document.querySelector(tag).shareUrl() };
  }, TAG);
  assert.deepEqual(s.open, { layer: 0, head: 3 });
  assert.deepEqual(s.off, [{ layer: 1, head: 0 }, { layer: 1, head: 2 }]);
  assert.equal(s.text, 'a b c a b');
  assert.match(s.url, /explorer\.head=1\.4/);
  assert.match(s.url, /explorer\.off=2\.1,2\.3/);
  await page.close();
  assertNoProblems();
});

test('a Hugging Face model in the link is only offered with its size; a download the page blocks is said in plain words', { timeout: TIMEOUT }, async () => {
  const requests = [];
  const page = await open('explorer hub', { hash: '#explorer.model=openai-community/gpt2' });
  page.on('request', (r) => requests.push(r.url()));
  await expectText(x(page).locator('[data-testid="explorer-pending"]'), /openai-community\/gpt2, a download of 549 MB/);
  assert.equal(await page.evaluate((tag) => document.querySelector(tag).state, TAG), 'empty', 'nothing loads before the reader asks');
  assert.ok(!requests.some((u) => /huggingface/.test(u)), 'nothing was fetched from the hub');
  // Every hub button says its size before anything is fetched.
  const sizes = await x(page).locator('[data-testid^="explorer-hub-"] .size').allTextContents();
  assert.deepEqual(sizes, HUB_MODELS.map((m) => `download ${sizeText(m.bytes)}`));
  assert.ok(sizes.includes('download 549 MB'), 'GPT-2 small\'s model.safetensors and tokenizer.json');
  // This page's strict CSP allows no other origin: the download is refused, and the element says why.
  await x(page).locator('[data-action="download"]').click();
  await page.waitForFunction((tag) => document.querySelector(tag).state === 'error', TAG, { timeout: 30_000 });
  const error = await x(page).locator('[data-testid="explorer-error"]').textContent();
  assert.match(error, /No model\./);
  assert.match(error, /does not allow downloads from the Hugging Face hub \(its Content-Security-Policy blocks them\)/, error);
  console.log(`# blocked download: ${error}`);
  // HeadLab's own models still load afterwards.
  await x(page).locator('[data-testid="explorer-model-induction"]').click();
  await ready(page);
  await page.close();
  // The refused request and the CSP report are what this test provokes.
  assertNoProblems([/huggingface\.co/, /Content Security Policy/i, /connect-src/]);
});

test('360 px: no horizontal overflow with a head open; light and dark screenshots', { timeout: TIMEOUT }, async () => {
  for (const colorScheme of ['light', 'dark']) {
    const page = await open(`explorer 360 ${colorScheme}`, { width: 360, colorScheme, hash: '#explorer.head=2.2' });
    await ready(page);
    await page.evaluate((tag) => { document.querySelector(tag).setAttribute('theme', 'auto'); }, TAG);
    await x(page).locator('[data-testid="explorer-heatmap"] svg').first().waitFor();
    assert.ok(await overflow(page) <= 0, `no horizontal overflow at 360 px (${colorScheme}): ${await overflow(page)} px`);
    await page.screenshot({ path: `${SCREENSHOTS}/model-explorer-360-${colorScheme}.png`, fullPage: true });
    await page.close();
  }
  assertNoProblems();
});

test('the classic bundle from file:// loads HeadLab\'s model on the page (no Worker there) and runs it', { timeout: TIMEOUT }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'explorer file', problems);
  await page.goto(fileUrl(PAGE));
  await page.waitForFunction((tag) => document.querySelector(tag)?.state === 'ready' && document.querySelector(tag).results, TAG, { timeout: 60_000 });
  assert.equal(await page.evaluate((tag) => document.querySelector(tag).controller.client.mode, TAG), 'main');
  assert.equal(await x(page).locator('[role="gridcell"]').count(), 8);
  await page.close();
  assertNoProblems();
});

test('axe finds no violation with a head open and one switched off', { timeout: TIMEOUT }, async () => {
  for (const colorScheme of ['light', 'dark']) {
    const page = await open(`explorer axe ${colorScheme}`, { colorScheme, hash: '#explorer.off=2.2' });
    await ready(page);
    await page.waitForFunction((tag) => document.querySelector(tag).results?.baseline, TAG);
    await page.evaluate(AXE);
    const found = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' > ')).join(' | ')}`);
    });
    assert.deepEqual(found, [], `axe violations (${colorScheme}):\n${found.join('\n')}`);
    await page.close();
  }
  assertNoProblems();
});

test('a download shows its progress bar and Cancel stops it (a fake client in the page stands in for the hub)', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer progress');
  await ready(page);
  // The element's controller gets a client that answers load only when told, and records requests.
  await page.evaluate((tag) => {
    const c = document.querySelector(tag).controller;
    c.client?.dispose();
    c.client = null;
    const fake = (window.__fake = { requests: [], onEvent: null, pending: null });
    c.createClient = (onEvent) => {
      fake.onEvent = onEvent;
      return {
        dead: false, mode: 'worker', dispose() {},
        request(type, payload) {
          fake.requests.push({ type, payload: type === 'load' ? { ...payload } : payload });
          if (type === 'load') return new Promise((resolve, reject) => { fake.pending = { resolve, reject }; });
          return Promise.resolve(null);
        },
      };
    };
  }, TAG);
  await x(page).locator('[data-testid="explorer-hub-tinystories-1m"]').click();
  await page.waitForFunction((tag) => document.querySelector(tag).state === 'loading', TAG);
  const sent = await page.evaluate(() => window.__fake.requests.find((r) => r.type === 'load').payload);
  assert.deepEqual(sent, { kind: 'hub', id: 'roneneldan/TinyStories-1M', revision: 'refs/pr/1', hubUrl: 'https://huggingface.co' });
  await expectText(x(page).locator('[data-testid="explorer-progress-text"]'), /Loading TinyStories-1M/);
  await page.evaluate(() => window.__fake.onEvent({ event: 'progress', file: 'model.safetensors', loaded: 12_150_000, total: 48_600_000 }));
  await expectText(x(page).locator('[data-testid="explorer-progress-text"]'), 'Downloading model.safetensors: 12.2 MB of 48.6 MB (25 %)');
  const bar = await x(page).locator('[data-testid="explorer-progress"]').evaluate((p) => [p.value, p.max]);
  assert.deepEqual(bar, [12_150_000, 48_600_000]);
  await page.screenshot({ path: `${SCREENSHOTS}/model-explorer-progress-1280.png` });
  await x(page).locator('[data-action="cancel"]').click();
  await page.waitForFunction((tag) => document.querySelector(tag).state === 'cancelled', TAG);
  assert.ok(await page.evaluate(() => window.__fake.requests.some((r) => r.type === 'cancel')), 'cancel reached the Worker');
  await expectText(x(page).locator('[data-testid="explorer-status"]'), /Download cancelled/);
  assert.equal(await x(page).locator('[data-testid="explorer-progress"]').isVisible(), false);
  // A load that fails offline says so in plain words.
  await x(page).locator('[data-testid="explorer-hub-gpt-2-small"]').click();
  await page.waitForFunction((tag) => document.querySelector(tag).state === 'loading', TAG);
  await page.context().setOffline(true);
  await page.evaluate(() => window.__fake.pending.reject(new TypeError('Failed to fetch')));
  await expectText(x(page).locator('[data-testid="explorer-error"]'), /You are offline/);
  await page.context().setOffline(false);
  await page.close();
  assertNoProblems();
});

test('offline after the page loaded: HeadLab\'s own models still open (Cache API); a hub model that cannot come says so and keeps the model', { timeout: TIMEOUT }, async () => {
  for (const width of [1280, 360]) {
    const page = await open(`explorer offline ${width}`, { width });
    await ready(page);
    // Every shipped model is put in the cache once the page has loaded.
    await page.waitForFunction(async () => {
      const cache = await caches.open('headlab-shipped-models-v1');
      return (await cache.keys()).length === 3;
    }, null, { timeout: 30_000 });
    await page.context().setOffline(true);
    await x(page).locator('[data-model="cricket"]').click();
    await page.waitForFunction((tag) => {
      const e = document.querySelector(tag);
      return e.state === 'ready' && e.results && e.info.vocabSize > 40;
    }, TAG, { timeout: 60_000 });
    assert.equal(await page.evaluate((tag) => document.querySelector(tag).failed, TAG), null, 'the cricket model opened offline');
    await x(page).locator('[data-testid="explorer-hub-tinystories-1m"]').click();
    await page.waitForFunction((tag) => document.querySelector(tag).failed, TAG, { timeout: 60_000 });
    const s = await page.evaluate((tag) => ({ state: document.querySelector(tag).state, failed: document.querySelector(tag).failed }), TAG);
    assert.equal(s.state, 'ready', 'the cricket model stays');
    assert.equal(s.failed.source.id, 'roneneldan/TinyStories-1M');
    // This site's CSP blocks the hub too: that is said first (it stays true once back online).
    await expectText(x(page).locator('[data-testid="explorer-error"]'), /did not load\. This page does not allow downloads.*You still have HeadLab’s model “Cricket commentary”/s);
    await expectText(x(page).locator('[data-testid="explorer-status"]'), /did not load.*You still have/);
    assert.doesNotMatch(await x(page).locator('[data-testid="explorer-status"]').textContent(), /Loading/);
    assert.ok(await overflow(page) <= 0, 'no horizontal overflow');
    await page.screenshot({ path: `${SCREENSHOTS}/model-explorer-offline-${width}.png`, fullPage: true });
    await page.context().setOffline(false);
    await page.close();
  }
  assertNoProblems([/Failed to fetch|ERR_INTERNET_DISCONNECTED|net::/]);
});

// ---------------------------------------------------------------- a real checkpoint through the hub stand-in

/**
 * The hub stand-in (tests/js/hub-server.mjs) with the checkpoints of tests/golden/pretrained/; it
 * also serves dist/ at /static/, a site without the CSP (as a course page that allows the hub).
 */
async function withHub(fn) {
  const { startHub, reposFromFolder } = await import('../js/hub-server.mjs');
  const hub = await startHub({ repos: reposFromFolder(path.join(REPO, 'tests/golden/pretrained')), staticRoot: DIST });
  try {
    await fn(hub, { url: `${hub.url}/static/` });
  } finally {
    await hub.close();
  }
}

test('a GPT-2 checkpoint from the hub stand-in: offered, downloaded with progress, grid drawn, ablation changes the top 5 as the API says; Cancel; a cut file is named', { timeout: TIMEOUT }, async () => {
  await withHub(async (hub, plain) => {
    const id = 'headlab-test/gpt2-f32';
    const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'explorer hub', problems);
    await page.goto(new URL(PAGE, plain.url).href);
    await page.waitForSelector(`${TAG}[data-drawn]`, { timeout: 60_000 });
    const bytes = statSync(path.join(REPO, 'tests/golden/pretrained/gpt2-f32/model.safetensors')).size + statSync(path.join(REPO, 'tests/golden/pretrained/gpt2-f32/tokenizer.json')).size;
    const offered = new RegExp(`${id}, a download of ${sizeText(bytes)}`);
    // A repository typed in: its size is asked of the hub (HEAD requests) before anything else.
    await page.evaluate(({ tag, url }) => document.querySelector(tag).setAttribute('hub-url', url), { tag: TAG, url: hub.url });
    await x(page).locator('[data-testid="explorer-other"]').fill(id);
    await x(page).locator('[data-action="check-size"]').click();
    await expectText(x(page).locator('[data-testid="explorer-pending"]'), offered);
    // Named in the model attribute (or the link): offered the same way, nothing loads yet.
    await x(page).locator('[data-testid="explorer-model-cricket"]').click();
    await ready(page);
    await page.evaluate(({ tag, id }) => { document.querySelector(tag).model = id; }, { tag: TAG, id });
    await expectText(x(page).locator('[data-testid="explorer-pending"]'), offered);
    assert.deepEqual(hub.requests.filter((r) => !r.path.startsWith('/static/') && r.method !== 'HEAD'), [], 'only HEAD requests so far');
    const progress = [];
    await page.exposeFunction('__progress', (d) => progress.push(d));
    await page.evaluate((tag) => document.querySelector(tag).addEventListener('headlab-progress', (e) => window.__progress(e.detail)), TAG);
    await x(page).locator('[data-action="download"]').click();
    await ready(page);
    assert.ok(progress.some((p) => p.file === 'model.safetensors' && p.loaded > 0), `progress events arrived: ${JSON.stringify(progress.slice(0, 5))}`);
    const s = await page.evaluate((tag) => {
      const e = document.querySelector(tag);
      return { info: e.info, tokens: e.results.tokens, next: e.results.next.map((n) => [n.token, n.probability]) };
    }, TAG);
    assert.deepEqual([s.info.numLayers, s.info.numHeads], [2, 4]);
    assert.equal(await x(page).locator('[role="gridcell"]').count(), 8);
    assert.equal(s.tokens.join(''), 'Virat hit the ball because it was full and outside off.', 'the course sentence, as the model\'s tokens');
    // The same model through the API in the page, with head 1.2 off: the element's top 5 must match.
    const api = (off) => page.evaluate(async ({ url, id, off }) => {
      const { createHeadlab } = await import('/static/lib/headlab.js');
      const lab = await createHeadlab();
      const m = await lab.loadPretrained(id, { hubUrl: url, cache: false });
      const r = await m.run('Virat hit the ball because it was full and outside off.', { ablate: off.map(([layer, head]) => ({ layer, head })), topK: 5 });
      m.dispose();
      return r.next.map((n) => [n.token, n.probability]);
    }, { url: hub.url, id, off });
    // Same tokens; probabilities within float32 rounding (the element's run also returns attention, another code path).
    const close = (a, b, what) => {
      assert.deepEqual(a.map((n) => n[0]), b.map((n) => n[0]), what);
      a.forEach((n, i) => assert.ok(Math.abs(n[1] - b[i][1]) <= 1e-5, `${what}: ${n[0]} ${n[1]} vs ${b[i][1]}`));
    };
    close(s.next, await api([]), 'every head on');
    await cell(page, 2, 3).click();
    await x(page).locator('[data-action="toggle-head"]').click();
    await page.waitForFunction((tag) => document.querySelector(tag).state === 'ready' && document.querySelector(tag).results.baseline, TAG);
    const off = await api([[1, 2]]);
    await eventually(async () => close(await nextTokens(page), off, 'layer 2 head 3 off'));
    assert.ok(off.some((n, i) => n[0] !== s.next[i][0] || Math.abs(n[1] - s.next[i][1]) > 1e-3), 'switching layer 2 head 3 off changes the top 5');
    await page.waitForFunction((tag) => document.querySelector(tag).results.lens, TAG);
    const lens = await page.evaluate((tag) => document.querySelector(tag).results.lens.map((l) => l.positions.at(-1)[0]), TAG);
    assert.equal(lens.length, 2, 'the logit lens: one entry per layer');
    // The lens ran with the same head off: its last layer is the table's first row.
    assert.equal(lens[1].token, off[0][0], 'the lens after the last layer names the table\'s top token');
    assert.ok(Math.abs(lens[1].probability - off[0][1]) <= 1e-5, `lens ${lens[1].probability} vs table ${off[0][1]}`);
    await expectText(x(page).locator('[data-testid="explorer-lens"]'), /after layer 1.*after layer 2/s);
    await page.screenshot({ path: `${SCREENSHOTS}/model-explorer-hub-1280.png`, fullPage: true });
    // A download that stalls: Cancel stops it.
    hub.faults.set('headlab-test/neo-f32/model.safetensors', { stall: 4096 });
    await page.evaluate(({ tag, url }) => { document.querySelector(tag).load({ kind: 'hub', id: 'headlab-test/neo-f32', hubUrl: url }); }, { tag: TAG, url: hub.url });
    await page.waitForFunction((tag) => document.querySelector(tag).progress?.loaded > 0, TAG, { timeout: 30_000 });
    await x(page).locator('[data-action="cancel"]').click();
    await page.waitForFunction((tag) => document.querySelector(tag).state === 'cancelled', TAG);
    // A file cut mid-way: an error naming it.
    hub.faults.set('headlab-test/gpt2-f16/model.safetensors', { cut: 2048 });
    await page.evaluate(({ tag, url }) => document.querySelector(tag).load({ kind: 'hub', id: 'headlab-test/gpt2-f16', hubUrl: url }), { tag: TAG, url: hub.url });
    await page.waitForFunction((tag) => document.querySelector(tag).state === 'error', TAG, { timeout: 30_000 });
    console.log(`# cut download: ${await expectText(x(page).locator('[data-testid="explorer-error"]'), /download of model\.safetensors stopped before the end\. Try again/)}`);
    await page.close();
    // The cut and the stalled download are what this test provokes (Cancel aborts the stalled one,
    // which Chromium reports as "net::ERR_ABORTED" in some runs, not all: seen once in a fresh
    // clone's run); and Chromium reports the HEAD requests of the size check (answered 200 with
    // `Connection: close` by the stand-in, and read by fetch) as "net::ERR_ABORTED" too.
    assertNoProblems([/\/cdn\/\d+/, /resolve\/main\/tokenizer\.json \(net::ERR_ABORTED\)/,
      /neo-f32\/resolve\/main\/model\.safetensors \(net::ERR_ABORTED\)/]);
  });
});

test('your own files: config.json, model.safetensors and tokenizer.json chosen in the file input load in the Worker', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer files');
  await ready(page);
  const dir = path.join(REPO, 'tests/golden/pretrained/neo-f32');
  await x(page).locator('[data-testid="explorer-files"]').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(dir, f)));
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.info?.architecture !== 'headlab' && e.results; }, TAG, { timeout: 60_000 });
  const s = await page.evaluate((tag) => {
    const e = document.querySelector(tag);
    return { info: e.info, mode: e.controller.client.mode, text: e.controller.text, lens: e.results.lens.length };
  }, TAG);
  assert.equal(s.mode, 'worker');
  assert.deepEqual([s.info.numLayers, s.info.numHeads], [2, 4]);
  assert.equal(s.text, 'Virat hit the ball because it was full and outside off.', 'a real model starts with the course sentence');
  assert.equal(s.lens, 2);
  // A new text attribute runs at once.
  await page.evaluate((tag) => document.querySelector(tag).setAttribute('text', 'The cat sat on the mat. The cat sat on the'), TAG);
  await page.waitForFunction((tag) => document.querySelector(tag).results.tokens.join('') === 'The cat sat on the mat. The cat sat on the', TAG);
  await expectText(x(page).locator('[data-testid="explorer-info"]'), /^Your model: 2 layers × 4 heads/);
  await page.close();
  assertNoProblems();
});

test('hostile tokens from a dropped tokenizer.json stay text in the token list, the heatmap table and the lens positions', { timeout: TIMEOUT }, async () => {
  const page = await open('explorer hostile tokens');
  await ready(page);
  const dir = path.join(REPO, 'tests/golden/pretrained/gpt2-f32');
  // The fixture's tokenizer with its one added token renamed to markup.
  const evil = '<img src=x onerror="window.__pwned=1">';
  const tokenizer = JSON.parse(readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
  tokenizer.added_tokens[0].content = evil;
  const file = (name, buffer) => ({ name, mimeType: 'application/octet-stream', buffer });
  await x(page).locator('[data-testid="explorer-files"]').setInputFiles([
    file('config.json', readFileSync(path.join(dir, 'config.json'))), file('model.safetensors', readFileSync(path.join(dir, 'model.safetensors'))),
    file('tokenizer.json', Buffer.from(JSON.stringify(tokenizer))),
  ]);
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.info?.architecture !== 'headlab' && e.results; }, TAG, { timeout: 60_000 });
  await x(page).locator('[data-testid="explorer-text"]').fill(`it was ${evil} full`);
  await x(page).locator('[data-action="run"]').click();
  await page.waitForFunction(({ tag, evil }) => document.querySelector(tag).results?.tokens.includes(evil), { tag: TAG, evil });
  const seen = await page.evaluate(({ tag, evil }) => {
    const root = document.querySelector(tag).shadowRoot;
    return {
      img: root.querySelectorAll('img').length, pwned: window.__pwned ?? null,
      inList: [...root.querySelectorAll('[data-testid="explorer-tokens"] li')].some((li) => li.textContent === evil),
      inTable: root.querySelector('[data-testid="explorer-detail-table"]')?.textContent.includes(evil),
      inLens: [...root.querySelectorAll('[data-testid="explorer-lens-position"] option')].some((o) => o.textContent.endsWith(evil)),
    };
  }, { tag: TAG, evil });
  assert.deepEqual(seen, { img: 0, pwned: null, inList: true, inTable: true, inLens: true });
  await page.close();
  assertNoProblems();
});
