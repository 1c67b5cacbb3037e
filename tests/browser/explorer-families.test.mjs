// <headlab-model-explorer> with the model families, in headless Chromium: the picker's buttons
// for SmolLM2, Phi-3 mini and BERT fetch the Llama (grouped-query) and BERT checkpoints of
// tests/golden/families/ from the hub stand-in (tests/js/hub-server.mjs serves them under those
// hub ids). Checked: the picker grouped into decoders and encoders with sizes and phone marks
// from hub-models.js; the key-value bands over the grid and their accessible words; ablation per
// query head; the attention-sink line against headScores through the API in the page; a model too
// large for the engine (a Content-Length of Phi-3 mini's 7.6 GB) refused with its size and the
// limit before its weights are read, the Llama model staying; BERT's fill at [MASK] against the
// float64 reference's top 5, and the hint for a text without a mask. A BertModel (no head) typed by
// its id: the grid and heatmap, no fill table, words saying why. Screenshots at 1280 and 360 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DIST, REPO, SCREENSHOTS, ensureDist, ensureScreenshotDir, launch, watch } from './helpers.mjs';
import { expectText } from './expect.mjs';
import { startHub } from '../js/hub-server.mjs';
import { HUB_MODELS, hubModel, buttonTestId } from '../../web/lib/teach/hub-models.js';
import { sizeText } from '../../web/lib/teach/explorer-controller.js';

const TIMEOUT = 90_000;
const TAG = 'headlab-model-explorer';
const FAMILIES = path.join(REPO, 'tests/golden/families');
const LLAMA = 'HuggingFaceTB/SmolLM2-135M';
const BERT = 'google-bert/bert-base-uncased';
const BIG = 'microsoft/Phi-3-mini-4k-instruct';
const HEAP_MAX = 2 ** 32 - 2 ** 16;  // the pretrained module's heapMax() (tests/js/pretrained-above-2gib.test.mjs)
const HEADLESS = 'headlab-test/minilm-bert-model';  // a repository typed by hand: not in the picker
const problems = [];
let hub, browser;

const folder = (name) => new Map(readdirSync(path.join(FAMILIES, name)).map((f) => [f, readFileSync(path.join(FAMILIES, name, f))]));

before(async () => {
  await ensureDist();
  ensureScreenshotDir();
  const repos = new Map([[LLAMA, new Map([['main', folder('llama-gqa')]])], [BERT, new Map([['main', folder('bert')]])],
    [BIG, new Map([['main', folder('llama-gqa')]])], [HEADLESS, new Map([['main', folder('bert-model')]])]]);
  hub = await startHub({ repos, staticRoot: DIST });
  // Phi-3 mini's weights as the hub announces them: more than the engine's memory.
  hub.faults.set(`${BIG}/model.safetensors`, { lie: hubModel(BIG).weightBytes });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await hub?.close();
});

const x = (page) => page.locator(TAG);
const state = (page) => page.evaluate((tag) => document.querySelector(tag).state, TAG);
const ready = (page) => page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.results; }, TAG, { timeout: 30_000 });
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
async function axe(page) {
  await page.evaluate(AXE);
  return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' > ')).join(' | ')}`));
}
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test('Llama (grouped-query) and BERT from the picker: key-value bands, the sink line, a refusal for memory, a fill', { timeout: TIMEOUT }, async () => {
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }), 'families', problems);
  await page.goto(`${hub.url}/static/demos/real-models/index.html`);
  await page.waitForSelector(`${TAG}[data-drawn]`, { timeout: 30_000 });
  await page.evaluate(({ tag, url }) => document.querySelector(tag).setAttribute('hub-url', url), { tag: TAG, url: hub.url });

  // The picker: decoders, then encoders; every row's size and phone mark from the table.
  const kinds = await x(page).locator('[data-testid^="explorer-kind-"]').evaluateAll((els) => els.map((e) => e.dataset.testid));
  assert.deepEqual(kinds, ['explorer-kind-decoder', 'explorer-kind-encoder']);
  for (const m of HUB_MODELS) {
    const b = x(page).locator(`[data-testid="${buttonTestId(m)}"]`);
    assert.equal(await b.locator('.size').textContent(), `download ${sizeText(m.bytes)}`, m.id);
    assert.equal(await b.locator('[data-testid="explorer-phone"]').count(), m.phone ? 1 : 0, `${m.id}: phone mark`);
    assert.equal(await b.locator(`xpath=ancestor::*[@data-testid="explorer-kind-${m.kind}"]`).count(), 1, `${m.id} among the ${m.kind}s`);
  }
  // Keyboard: the buttons are reached by Tab and pressed with Enter.
  const llamaButton = x(page).locator(`[data-testid="${buttonTestId(hubModel(LLAMA))}"]`);
  await llamaButton.focus();
  await page.keyboard.press('Enter');
  await ready(page);
  const info = await page.evaluate((tag) => document.querySelector(tag).info, TAG);
  assert.deepEqual([info.architecture, info.kind, info.numHeads, info.numKeyValueHeads], ['LlamaForCausalLM', 'decoder', 4, 2]);

  // Key-value bands: heads 1–2 share key-value head 1, heads 3–4 head 2.
  const bands = x(page).locator('[data-testid="explorer-kv"] .kv');
  assert.equal(await bands.count(), 2);
  assert.deepEqual(await bands.locator('.sr-only').allTextContents(), ['heads 1–2 share key/value head 1', 'heads 3–4 share key/value head 2']);
  assert.deepEqual(await bands.evaluateAll((els) => els.map((e) => e.getAttribute('aria-colspan'))), ['2', '2']);
  assert.match(await x(page).locator('[data-testid="explorer-cell-2-3"]').getAttribute('aria-label'), /shares key\/value head 2 with heads 3–4/);
  assert.equal(await x(page).locator('[data-testid="explorer-cell-1-3"]').getAttribute('data-kv-start'), '', 'a group mark where a group starts');
  assert.match(await x(page).locator('[data-testid="explorer-kv-note"]').textContent(), /every 2 query heads share one key-value head \(2 in each layer\)/);
  // Ablation stays per query head: switching off head 1 leaves head 2 (same key-value head) on.
  await x(page).locator('[data-testid="explorer-cell-1-1"]').click();
  await x(page).locator('[data-action="toggle-head"]').click();
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.results.baseline; }, TAG);
  assert.deepEqual(await page.evaluate((tag) => document.querySelector(tag).controller.ablate, TAG), [{ layer: 0, head: 0 }]);
  assert.equal(await x(page).locator('[data-testid="explorer-cell-1-2"]').getAttribute('data-off'), null);

  // The sink line: the heads whose first-token score, from the API in the page, is at least 0.5.
  const api = await page.evaluate(async ({ url, id }) => {
    const { createHeadlab } = await import('/static/lib/headlab.js');
    const m = await (await createHeadlab()).loadPretrained(id, { hubUrl: url, cache: false });
    const { scores } = await m.headScores({ length: 20, seed: 1 });
    m.dispose();
    return scores.filter((s) => s.firstToken >= 0.5).map((s) => `L${s.layer + 1} H${s.head + 1}`);
  }, { url: hub.url, id: LLAMA });
  const sink = x(page).locator('[data-testid="explorer-sink"]');
  const card = x(page).locator('[data-testid="findings-sinks-count"]');
  if (api.length) await expectText(sink, new RegExp(`${api.length} of 8 heads .*${api.join('.*')}`));
  else await expectText(sink, /^Attention sinks: None of the 8 heads puts at least 0\.5 of its attention on the first token\.$/);
  // The findings panel's attention-sink card says the same: the same sentence, the same heads.
  const sameFigure = async () => {
    const [lineText, cardText] = [await sink.textContent(), await card.textContent()];
    assert.equal(lineText.replace(/: L\d.*$/, ''), `Attention sinks: ${cardText.replace(/: \d.*$/, '')}`, 'the line and the card: one share, one threshold, one wording');
    assert.equal(await sink.getAttribute('data-heads'), await card.getAttribute('data-heads'), 'the line and the card name the same heads');
  };
  await sameFigure();
  // The line follows the scores, and the card with it: a head given a first-token score of 0.75 is named.
  await page.evaluate((tag) => {
    const e = document.querySelector(tag);
    const scores = e.controller.scores.scores.map((s) => (s.layer === 1 && s.head === 2 ? { ...s, firstToken: 0.75 } : s));
    e.controller.scores = { ...e.controller.scores, scores };
    e.renderGrid();
  }, TAG);
  await expectText(sink, api.length ? new RegExp(`${api.length + 1} of 8 heads`) : /^Attention sinks: 1 of 8 heads \(12\.5 %\) put at least 0\.5 of their attention on the first token: L2 H3\.$/);
  if (!api.length) await expectText(card, /^1 of 8 heads \(12\.5 %\) put at least 0\.5 of their attention on the first token: 1\.2\.$/);
  await sameFigure();
  assert.deepEqual(await axe(page), [], 'axe on the Llama model with its key-value bands');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-llama-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 360, height: 800 });
  assert.ok(await overflow(page) <= 0, 'no horizontal overflow at 360 px');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-llama-360.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });

  // Phi-3 mini: 7.6 GB announced, more than the engine holds: refused, its weights not read, Llama kept.
  const progress = [];
  await page.exposeFunction('__progress', (d) => progress.push(d));
  await page.evaluate((tag) => document.querySelector(tag).addEventListener('headlab-progress', (e) => window.__progress(e.detail)), TAG);
  await x(page).locator(`[data-testid="${buttonTestId(hubModel(BIG))}"]`).click();
  await page.waitForFunction((tag) => document.querySelector(tag).failed, TAG, { timeout: 30_000 });
  assert.equal(await state(page), 'ready');
  const error = await x(page).locator('[data-testid="explorer-error"]').textContent();
  console.log(`# refused: ${error}`);
  assert.match(error, new RegExp(`weights are ${sizeText(hubModel(BIG).weightBytes)}, and this browser tab’s engine holds at most ${sizeText(HEAP_MAX)}`));
  assert.match(error, /You still have SmolLM2-135M/);
  assert.equal((await page.evaluate((tag) => document.querySelector(tag).info, TAG)).architecture, 'LlamaForCausalLM');
  assert.ok(!progress.some((p) => p.file === 'model.safetensors' && p.loaded > 0), `no byte of Phi-3 mini's weights was read: ${JSON.stringify(progress)}`);

  // BERT: the course sentence with [MASK]; the fill table gives the reference's top 5.
  await x(page).locator(`[data-testid="${buttonTestId(hubModel(BERT))}"]`).click();
  await page.waitForFunction((tag) => {
    const e = document.querySelector(tag);
    return e.state === 'ready' && e.info?.kind === 'encoder' && e.results?.fill;
  }, TAG, { timeout: 30_000 });
  const expected = JSON.parse(readFileSync(path.join(FAMILIES, 'bert/expected.json'), 'utf8')).fill[0];
  const got = await page.evaluate((tag) => {
    const e = document.querySelector(tag);
    return { text: e.controller.text, fill: e.results.fill };
  }, TAG);
  assert.equal(got.text, expected.text);
  assert.deepEqual(got.fill.map((m) => m.top.map((n) => n.id)), expected.top);
  assert.equal(await x(page).locator('[data-testid="explorer-text"]').inputValue(), expected.text);
  await expectText(x(page).locator('[data-testid="explorer-next-title"]'), 'The masked word');
  const rows = x(page).locator('[data-testid="explorer-fill"] tbody tr');
  assert.equal(await rows.count(), 5);
  assert.equal((await rows.first().locator('td.tok').textContent()), got.fill[0].top[0].token);
  assert.equal(await x(page).locator('[data-testid="explorer-kv"]').count(), 0, 'no key-value bands for an encoder');
  assert.equal(await sink.textContent(), '', 'no sink line for an encoder');
  assert.deepEqual(await axe(page), [], 'axe on BERT with its fill table');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-bert-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 360, height: 800 });
  assert.ok(await overflow(page) <= 0, 'no horizontal overflow at 360 px');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-bert-360.png`, fullPage: true });
  // A text without a mask: the hint names [MASK].
  await x(page).locator('[data-testid="explorer-text"]').fill('Virat hit the ball.');
  await x(page).locator('[data-action="run"]').click();
  await expectText(x(page).locator('[data-testid="explorer-fill-hint"]'), /write \[MASK\] where a word should be/);
  await page.close();
  // Phi-3 mini's announced length is a lie the refusal cuts short.
  const found = problems.splice(0).filter((p) => !/\/cdn\/\d+ \(net::ERR_ABORTED\)|ERR_CONTENT_LENGTH_MISMATCH/.test(p));
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
});

test('a BertModel (no head) typed by its id opens with its grid and heatmap, no fill table, and says why', { timeout: TIMEOUT }, async () => {
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }), 'bert-model', problems);
  await page.goto(`${hub.url}/static/demos/real-models/index.html`);
  await page.waitForSelector(`${TAG}[data-drawn]`, { timeout: 30_000 });
  await page.evaluate(({ tag, url }) => document.querySelector(tag).setAttribute('hub-url', url), { tag: TAG, url: hub.url });
  await x(page).locator('[data-testid="explorer-other"]').fill(HEADLESS);
  await x(page).locator('[data-testid="explorer-other"]').press('Enter');
  await x(page).locator('[data-action="download"]').click();
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.info?.head === 'none' && e.results; }, TAG, { timeout: 30_000 });
  const info = await page.evaluate((tag) => document.querySelector(tag).info, TAG);
  assert.deepEqual([info.architecture, info.kind, info.head, info.numLayers, info.numHeads], ['BertModel', 'encoder', 'none', 2, 4]);
  // The grid: every head, labelled from its scores; the heatmap of the selected head against the reference.
  assert.equal(await x(page).locator('[role="gridcell"]').count(), 8);
  const expected = JSON.parse(readFileSync(path.join(FAMILIES, 'bert-model/expected.json'), 'utf8'));
  const course = expected.cases.find((c) => c.name === 'course');
  const got = await page.evaluate((tag) => {
    const e = document.querySelector(tag);
    return { ids: e.results.ids, attention: Array.from(e.results.attention), text: e.controller.text };
  }, TAG);
  assert.equal(got.text, course.text, 'the course sentence, no [MASK] put in: this model guesses nothing');
  assert.deepEqual(got.ids, course.ids);
  const worst = got.attention.reduce((m, v, i) => Math.max(m, Math.abs(v - course.attention[i])), 0);
  assert.ok(worst <= 1e-4, `attention against the float64 reference: largest difference ${worst}`);
  // No fill table, no hint to write [MASK]; words saying why; the IOI check switched off, saying why.
  assert.equal(await x(page).locator('[data-testid="explorer-fill"]').count(), 0);
  assert.equal(await x(page).locator('[data-testid="explorer-fill-hint"]').count(), 0);
  await expectText(x(page).locator('[data-testid="explorer-next-title"]'), 'No guessed words');
  await expectText(x(page).locator('[data-testid="explorer-no-head"]'), /This checkpoint \(BertModel\) stops at its last layer’s vectors/);
  assert.equal(await x(page).locator('[data-testid="findings-ioi-run"]').isDisabled(), true);
  // Switching a head off still works: the attention of later layers changes.
  await x(page).locator('[data-testid="explorer-cell-1-1"]').click();
  await x(page).locator('[data-action="toggle-head"]').click();
  await page.waitForFunction((tag) => { const e = document.querySelector(tag); return e.state === 'ready' && e.controller.ablate.length === 1; }, TAG);
  const ablated = await page.evaluate((tag) => Array.from(document.querySelector(tag).results.attention), TAG);
  assert.ok(ablated.some((v, i) => Math.abs(v - got.attention[i]) > 1e-3), 'layer 2 attends differently with head 1.1 off');
  assert.deepEqual(await axe(page), [], 'axe on BertModel');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-bert-model-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 360, height: 800 });
  assert.ok(await overflow(page) <= 0, 'no horizontal overflow at 360 px');
  await page.screenshot({ path: `${SCREENSHOTS}/explorer-bert-model-360.png`, fullPage: true });
  await page.close();
  // Chromium reports the size check's HEAD requests (answered 200 with `Connection: close` by the
  // stand-in, as in model-explorer.test.mjs) as "net::ERR_ABORTED".
  const found = problems.splice(0).filter((p) => !/\/cdn\/\d+ \(net::ERR_ABORTED\)|resolve\/main\/tokenizer\.json \(net::ERR_ABORTED\)/.test(p));
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
});
