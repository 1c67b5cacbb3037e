// The findings panel of <headlab-model-explorer> in headless Chromium, served from dist/ under the strict
// CSP. With HeadLab's own model the IOI check is off and says why, while the induction and attention-sink
// cards read the head scores; a checkpoint whose tokenizer splits the names measures nothing and
// says so. Then the small IOI model that tests/golden/findings/make_findings.py trained
// is chosen as files; the IOI card runs on ioiPrompts({ n: 16, seed: 3 }) in the explorer's Worker, and its
// top-3 heads by patching and by direct logit attribution must be PyTorch's (expected.json's means over the
// same 16 prompts, margins 0.17 and 0.93), its logit difference and answer-wins share the mean of PyTorch's
// per-prompt metrics; both heatmaps have layers × heads cells; the syntax card's table shows what its
// controller scored. Stop ends a longer run between prompts.
// 360 px without horizontal overflow and without axe violations; screenshots at 1280 and 360 px (light and dark) go to
// tests/browser/screenshots/.
import { beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { REPO, SCREENSHOTS, ensureScreenshotDir, watch, useSite } from './helpers.mjs';
import { expectText } from './expect.mjs';

const TIMEOUT = 60_000;
const PAGE = 'demos/real-models/index.html';
const TAG = 'headlab-model-explorer';
const IOI = path.join(REPO, 'tests/golden/findings/ioi-model');
const expected = JSON.parse(readFileSync(path.join(IOI, 'expected.json'), 'utf8'));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const problems = [];

const site = useSite({ csp: true }, { setup: () => ensureScreenshotDir() });
beforeEach(() => { problems.splice(0); });

const x = (page) => page.locator(TAG);
const f = (page, id) => x(page).locator(`[data-testid="${id}"]`);
const panelState = (page) => page.evaluate((tag) => document.querySelector(tag)._findings.c.state, TAG);
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

async function open({ width = 1280, colorScheme = 'light' } = {}) {
  const page = watch(await site.browser.newPage({ viewport: { width, height: 900 }, colorScheme }), 'findings', problems);
  await page.goto(site.url(PAGE));
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e?.state === 'ready' && e.results; }, TAG, { timeout: 40_000 });
  return page;
}

async function loadIoiModel(page) {
  // A text the IOI model can read (the course sentence is longer than its 32 positions): kept for the new model.
  await f(page, 'explorer-text').fill('When Mary and John went to the store, John gave a drink to');
  await f(page, 'explorer-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((name) => path.join(IOI, name)));
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.info?.architecture !== 'headlab' && e.results; }, TAG, { timeout: 40_000 });
}

async function runIoi(page, n, seed) {
  await f(page, 'findings-ioi-n').fill(String(n));
  await f(page, 'findings-ioi-seed').fill(String(seed));
  await f(page, 'findings-ioi-run').click();
}

const topOf = (page, id) => f(page, id).locator('li').evaluateAll((lis) => lis.map((li) => li.dataset.head));

test('HeadLab\'s own model: the IOI check is off and says why; induction and sink cards read the head scores', { timeout: TIMEOUT }, async () => {
  const page = await open();
  await expectText(f(page, 'findings-ioi-note'), /HeadLab’s own models know no names/);
  assert.equal(await f(page, 'findings-ioi-run').isDisabled(), true);
  // The induction model's scores, ranked here from the element's own scores.
  const want = await page.evaluate((tag) => document.querySelector(tag).scores.scores.slice()
    .sort((a, b) => b.induction - a.induction || a.layer - b.layer || a.head - b.head).slice(0, 4).map((s) => `${s.layer}.${s.head}`), TAG);
  assert.deepEqual(await topOf(page, 'findings-induction-top'), want);
  const sinks = await page.evaluate((tag) => document.querySelector(tag).scores.scores.filter((s) => s.firstToken >= 0.5).length, TAG);
  await expectText(f(page, 'findings-sinks-count'), sinks ? new RegExp(`^${sinks} of 8 heads`) : /^None of the 8 heads/);
  assert.equal(await f(page, 'findings-sinks-map').locator('rect[data-r]').count(), 8);
  // A checkpoint whose tokenizer splits the names (the random GPT-2 fixture): every prompt is skipped, and the card says why.
  await f(page, 'explorer-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((name) => path.join(REPO, 'tests/golden/pretrained/gpt2-f32', name)));
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.info?.architecture !== 'headlab'; }, TAG, { timeout: 40_000 });
  await runIoi(page, 3, 0);
  await expectText(f(page, 'findings-ioi-none'), /No prompt could be measured: in this model’s tokenizer the names are more than one token/);
  await page.close();
  assert.deepEqual(problems, []);
});

test('the trained IOI model as files: the IOI card\'s top-3 heads are PyTorch\'s, its heatmaps layers × heads', { timeout: TIMEOUT }, async () => {
  const page = await open();
  await loadIoiModel(page);
  await expectText(f(page, 'findings-ioi-note'), /this model has 2 × 4/);
  const started = Date.now();
  await runIoi(page, expected.mean.prompts, 3);
  await page.waitForFunction((tag) => document.querySelector(tag)._findings.c.state === 'done', TAG, { timeout: 30_000 });
  console.log(`# IOI card on 16 prompts in the Worker: ${Date.now() - started} ms`);
  const heads = (list) => list.map(([l, h]) => `${l}.${h}`);
  assert.deepEqual(await topOf(page, 'findings-ioi-top-patch'), heads(expected.mean.top3Patch));
  assert.deepEqual(await topOf(page, 'findings-ioi-top-dla'), heads(expected.mean.top3Dla));
  // The logit difference and the answer-wins share against PyTorch's per-prompt metrics.
  const r = await page.evaluate((tag) => {
    const c = document.querySelector(tag)._findings.c.result;
    return { prompts: c.prompts, diff: c.logitDiff, wins: c.answerWins };
  }, TAG);
  const diff = expected.cases.reduce((s, c) => s + c.metricClean, 0) / expected.cases.length;
  const wins = expected.cases.filter((c) => c.metricClean > 0).length / expected.cases.length;
  assert.equal(r.prompts, expected.cases.length);
  assert.ok(Math.abs(r.diff - diff) <= 1e-3 * Math.abs(diff), `logit difference ${r.diff} vs PyTorch ${diff}`);
  assert.equal(r.wins, wins);
  await expectText(f(page, 'findings-ioi-compare'), new RegExp(`${diff.toFixed(2)}.*3\\.56`));
  // Both heatmaps: 2 × 4 cells, and their data tables 2 rows of 4.
  for (const id of ['findings-ioi-patch', 'findings-ioi-dla']) {
    assert.equal(await f(page, id).locator('rect[data-r]').count(), 8, id);
    assert.equal(await f(page, `${id}-table`).locator('tbody td').count(), 8, id);
    // Of the paper's GPT-2 small heads only 0.1 (duplicate-token) exists in 2 × 4: framed once, at row 0, column 1.
    const frames = await f(page, id).locator('rect[stroke="#cc79a7"]').evaluateAll((rs) => rs.map((r) => [r.getAttribute('x'), r.getAttribute('y')]));
    const cell = await f(page, id).locator('rect[data-r="0"][data-c="1"]').evaluate((r) => [Number(r.getAttribute('x')), Number(r.getAttribute('y'))]);
    assert.equal(frames.length, 1, id);
    assert.ok(Number(frames[0][0]) > cell[0] && Number(frames[0][1]) > cell[1], `${id}: the frame sits inside cell 0.1`);
  }
  // The syntax card on the same model, in its Worker: the table shows each relation's best head as the controller has it.
  await f(page, 'findings-syntax-n').fill('5');
  await f(page, 'findings-syntax-run').click();
  await page.waitForFunction((tag) => document.querySelector(tag)._findings.sc.state === 'done', TAG, { timeout: 30_000 });
  const syntax = await page.evaluate((tag) => document.querySelector(tag)._findings.sc.result.relations.map((r) => [r.relation, `${r.best.layer}.${r.best.head}`]), TAG);
  assert.ok(syntax.length > 0, 'some relations were scored');
  const shown = await f(page, 'findings-syntax-table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.relation, tr.querySelector('td').dataset.head]));
  assert.deepEqual(shown, syntax);
  await expectText(f(page, 'findings-syntax-result'), /In a decoder a word attends only to earlier words/);
  await page.screenshot({ path: `${SCREENSHOTS}/findings-panel-1280.png`, fullPage: true });
  // Stop: a longer run ends between prompts, with the means so far.
  await runIoi(page, 200, 4);
  await page.waitForFunction((tag) => (document.querySelector(tag)._findings.c.progress?.done ?? 0) >= 1, TAG);
  await f(page, 'findings-ioi-stop').click();
  assert.equal(await panelState(page), 'cancelled');
  const done = await page.evaluate((tag) => document.querySelector(tag)._findings.c.progress.done, TAG);
  assert.ok(done < 200, `stopped after ${done} prompts`);
  await expectText(f(page, 'findings-ioi-progress-text'), new RegExp(`Stopped after ${done} of 200`));
  // Another model on its way stops a run under way; the card starts again from nothing.
  await runIoi(page, 200, 5);
  await page.waitForFunction((tag) => (document.querySelector(tag)._findings.c.progress?.done ?? 0) >= 1, TAG);
  await page.evaluate((tag) => { document.querySelector(tag).load({ kind: 'shipped', name: 'induction' }); }, TAG);
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.info?.architecture === 'headlab'; }, TAG);
  assert.equal(await panelState(page), 'idle');
  assert.equal(await f(page, 'findings-ioi-result').locator('*').count(), 0, 'no result of the model before');
  await page.close();
  assert.deepEqual(problems, []);
});

test('360 px, light and dark: no horizontal overflow, the run is reachable by keyboard, axe finds no violation in the results', { timeout: TIMEOUT }, async () => {
  for (const colorScheme of ['light', 'dark']) {
    const page = await open({ width: 360, colorScheme });
    await loadIoiModel(page);
    await f(page, 'findings-ioi-run').focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((tag) => document.querySelector(tag)._findings.c.state === 'done', TAG, { timeout: 30_000 });
    assert.equal(await overflow(page), 0, `${colorScheme}: the page scrolls sideways`);
    await f(page, 'explorer-findings').screenshot({ path: `${SCREENSHOTS}/findings-panel-360-${colorScheme}.png` });
    await page.evaluate(AXE);
    const found = await page.evaluate(async (tag) => {
      const r = await window.axe.run(document.querySelector(tag), { resultTypes: ['violations'] });
      return r.violations.map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' > ')).join(' | ')}`);
    }, TAG);
    assert.deepEqual(found, [], `axe violations (${colorScheme}):\n${found.join('\n')}`);
    await page.close();
  }
  assert.deepEqual(problems, []);
});
