// <headlab-model-explorer>'s "Across training" section (issue 34), in headless Chromium: the Pythia
// fixture of tests/golden/families/ served by the hub stand-in as EleutherAI/pythia-70m at revisions
// main and step1000 (pythia and pythia-step1000). The section shows for Pythia only; the trend over
// the two revisions (typed in, run with the keyboard) draws one line per head whose values are the
// induction scores the API in the page gives for each revision; a revision the hub lacks is named in
// words and the others kept; the explorer's own model stays. Offline: with both revisions removed from
// the hub, a second run plots the same lines from the browser's cache without asking the hub.
// Screenshots at 1280 and 360 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DIST, REPO, SCREENSHOTS, ensureDist, ensureScreenshotDir, launch, watch } from './helpers.mjs';
import { expectText } from './expect.mjs';
import { startHub } from '../js/hub-server.mjs';
import { hubModel, buttonTestId } from '../../web/lib/teach/hub-models.js';

const TIMEOUT = 60_000;
const TAG = 'headlab-model-explorer';
const FAMILIES = path.join(REPO, 'tests/golden/families');
const PYTHIA = 'EleutherAI/pythia-70m';
const LLAMA = 'HuggingFaceTB/SmolLM2-135M';
const problems = [];
let hub, browser, repos;

const folder = (name) => new Map(readdirSync(path.join(FAMILIES, name)).map((f) => [f, readFileSync(path.join(FAMILIES, name, f))]));

before(async () => {
  await ensureDist();
  ensureScreenshotDir();
  repos = new Map([
    [PYTHIA, new Map([['main', folder('pythia')], ['step1000', folder('pythia-step1000')]])],
    [LLAMA, new Map([['main', folder('llama-gqa')]])],
  ]);
  hub = await startHub({ repos, staticRoot: DIST });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await hub?.close();
});

const x = (page) => page.locator(TAG);
const ready = (page) => page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.results; }, TAG, { timeout: 30_000 });
const trendDone = (page) => page.waitForFunction((tag) => {
  const e = document.querySelector(tag), root = e.shadowRoot ?? e;
  return root.querySelector('[data-testid="trend-run"]')?.dataset.running === 'false' &&
    / revisions scored\.$/.test(root.querySelector('[data-testid="trend-progress-text"]').textContent);
}, TAG, { timeout: 30_000 });
/** The chart's lines: head "layer.head" → its values, and which are drawn strongly. */
const lines = (page) => x(page).locator('[data-testid="trend-chart"] polyline').evaluateAll((els) => els.map((e) => ({
  head: e.dataset.head, scores: e.dataset.scores.split(',').map(Number), top: e.dataset.top,
})));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
async function axe(page) {
  await page.evaluate(AXE);
  return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' > ')).join(' | ')}`));
}
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
const resolves = () => hub.requests.filter((r) => r.path.startsWith(`/${PYTHIA}/resolve/`)).length;

test('Pythia across two training revisions: one line per head with the API\'s scores, offline from the cache', { timeout: TIMEOUT }, async () => {
  const t0 = Date.now();
  const lap = (what) => console.log(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }), 'revisions', problems);
  await page.goto(`${hub.url}/static/demos/real-models/index.html`);
  await page.waitForSelector(`${TAG}[data-drawn]`, { timeout: 30_000 });
  await page.evaluate(({ tag, url }) => document.querySelector(tag).setAttribute('hub-url', url), { tag: TAG, url: hub.url });
  const section = x(page).locator('[data-testid="explorer-trend"]');
  lap('page drawn');

  // Not for a Llama model: no training revisions.
  await x(page).locator(`[data-testid="${buttonTestId(hubModel(LLAMA))}"]`).click();
  await ready(page);
  assert.equal(await section.isHidden(), true, 'no "Across training" for SmolLM2');

  await x(page).locator(`[data-testid="${buttonTestId(hubModel(PYTHIA))}"]`).click();
  await page.waitForFunction((tag) => document.querySelector(tag).info?.architecture === 'GPTNeoXForCausalLM', TAG, { timeout: 30_000 });
  await ready(page);
  assert.equal(await section.isVisible(), true);
  await expectText(section.locator('h3'), 'Across training');
  const info = await page.evaluate((tag) => document.querySelector(tag).info, TAG);
  lap('Llama, then Pythia loaded');

  // The API in the page: each revision's induction scores, loaded directly.
  const api = await page.evaluate(async ({ url, id }) => {
    const { createHeadlab } = await import('/static/lib/headlab.js');
    const lab = await createHeadlab();
    const out = {};
    for (const revision of ['main', 'step1000']) {
      const m = await lab.loadPretrained(id, { hubUrl: url, revision, cache: false });
      const n = Math.max(1, Math.min(20, Math.floor(((m.info.contextLength ?? 41) - 1) / 2)));
      out[revision] = (await m.headScores({ length: n, seed: 1 })).scores.map((s) => ({ head: `${s.layer}.${s.head}`, induction: s.induction }));
      m.dispose();
    }
    return out;
  }, { url: hub.url, id: PYTHIA });
  lap('the API\'s scores');

  // Type the revisions (one the hub lacks among them) and run with Enter.
  const input = x(page).locator('[data-testid="trend-revisions"]');
  assert.equal(await input.inputValue(), 'step0, step1000, step2000, step4000, step8000, step143000', 'the default list');
  await input.fill('main, step1000, step5');
  await input.press('Enter');
  await trendDone(page);
  lap('the trend over three revisions');
  const expected = (revs) => Object.fromEntries(api.main.map(({ head }) =>
    [head, revs.map((r) => api[r].find((s) => s.head === head).induction)]));
  let got = await lines(page);
  assert.equal(got.length, info.numLayers * info.numHeads, 'one line per head');
  // Training order: step1000 before main.
  const want = expected(['step1000', 'main']);
  for (const l of got) {
    assert.equal(l.scores.length, 2, l.head);
    l.scores.forEach((v, i) => assert.ok(Math.abs(v - want[l.head][i]) <= 1e-6, `${l.head} point ${i}: ${v} vs the API's ${want[l.head][i]}`));
  }
  assert.notDeepEqual(got.map((l) => l.scores[0]), got.map((l) => l.scores[1]), 'the two revisions differ');
  // The strongest head of main drawn in colour, named in the summary.
  const best = [...api.main].sort((a, b) => b.induction - a.induction)[0];
  assert.equal(got.find((l) => l.top === '1').head, best.head);
  const [bl, bh] = best.head.split('.').map(Number);
  await expectText(x(page).locator('[data-testid="trend-summary"]'), new RegExp(`at main: L${bl + 1} H${bh + 1} `));
  // The revision the hub lacks: in words, the others kept.
  await expectText(x(page).locator('[data-testid="trend-failures"] li'), /^step5: the hub has no revision step5 of this model/);
  await expectText(x(page).locator('[data-testid="trend-progress-text"]'), '2 of 3 revisions scored.');
  const ticks = await x(page).locator('[data-testid="trend-chart"] text').evaluateAll((els) => els.map((e) => e.textContent));
  assert.deepEqual(ticks.filter((s) => /^(step|main)/.test(s)), ['step1000', 'main']);
  // The explorer's own model is still there and answers.
  assert.equal((await page.evaluate((tag) => document.querySelector(tag).info, TAG)).architecture, 'GPTNeoXForCausalLM');
  await x(page).locator('[data-testid="explorer-text"]').fill('The cat sat. The cat');
  await x(page).locator('[data-action="run"]').click();
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.results?.text === 'The cat sat. The cat'; }, TAG, { timeout: 30_000 });

  assert.deepEqual(await axe(page), [], 'axe with the trend drawn');
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-revisions-1280.png`, fullPage: true });
  await section.screenshot({ path: `${SCREENSHOTS}/explorer-revisions-section-1280.png` });
  await page.setViewportSize({ width: 360, height: 800 });
  assert.ok(await overflow(page) <= 0, 'no horizontal overflow at 360 px');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-revisions-360.png`, fullPage: true });
  await section.screenshot({ path: `${SCREENSHOTS}/explorer-revisions-section-360.png` });
  await page.setViewportSize({ width: 1280, height: 900 });

  // In Spanish: the section is built again in the new language, its points kept.
  await x(page).evaluate((e) => e.setAttribute('lang', 'es'));
  await expectText(section.locator('h3'), 'A lo largo del entrenamiento');
  assert.deepEqual(await lines(page), got, 'the same lines after the change of language');
  await expectText(x(page).locator('[data-testid="trend-run"]'), 'Trazar a lo largo del entrenamiento');
  await x(page).evaluate((e) => e.setAttribute('lang', 'en'));
  await expectText(section.locator('h3'), 'Across training');

  // Offline: the hub no longer has either revision; a second run plots the same lines from the cache.
  const asked = resolves();
  repos.delete(PYTHIA);  // the hub answers 404 for every file of it from now on
  await input.fill('main step1000');
  await x(page).locator('[data-testid="trend-run"]').click();
  await trendDone(page);
  got = await lines(page);
  assert.equal(await x(page).locator('[data-testid="trend-failures"] li').count(), 0, 'no revision failed');
  assert.equal(got.length, info.numLayers * info.numHeads);
  for (const l of got) l.scores.forEach((v, i) => assert.ok(Math.abs(v - want[l.head][i]) <= 1e-6, `offline ${l.head} point ${i}`));
  assert.equal(resolves(), asked, 'the hub was not asked for any file');
  lap('the trend again, offline');
  await page.close();
  // The revision the hub lacks: its 404 is expected.
  const found = problems.splice(0).filter((p) => !/\/resolve\/step5\/config\.json/.test(p));
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
});
