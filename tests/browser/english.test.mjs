// <headlab-language-model> on the english task (issue 24), in headless Chromium under the
// strict CSP: picking the task loads the shipped model (web/models/english.hlm); the relations
// view shows, for the example sentence, every relation the grammar finds with its true arc and
// the attention row of the best-scoring head at the arc's query, each checked against the API
// called on the page (relations(), attention(), headScores(), baselines() of the same model
// file, loaded there independently of the element); a sentence outside the grammar shows the
// API's error naming the word; typed text stays text. Screenshots at 1280 and 360 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DIST, SCREENSHOTS, ensureScreenshotDir, watch, useSite, fileUrl } from './helpers.mjs';
import { eventually, expectText } from './expect.mjs';

const TIMEOUT = 180_000;
const PAGE = 'demos/language-model/index.html';
const TAG = 'headlab-language-model';
const problems = [];
/** What web/models/models.json says of the shipped english model. */
const SHIPPED = JSON.parse(readFileSync(path.join(DIST, 'models', 'models.json'), 'utf8')).models.find((m) => m.file === 'english.hlm');

const site = useSite({ csp: true }, { setup: async () => ensureScreenshotDir() });

function assertNoProblems() {
  const found = problems.splice(0);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

async function open(label, { width = 1280, hash = '', url = new URL(`${PAGE}${hash}`, site.server.url).href } = {}) {
  assert.ok(existsSync(path.join(DIST, 'models', 'english.hlm')), 'dist/models/english.hlm is missing: run `node scripts/bundle.mjs`');
  const page = watch(await site.browser.newPage({ viewport: { width, height: 900 } }), label, problems);
  await page.goto(url);
  await page.waitForSelector(`${TAG}[data-drawn]`, { timeout: 60_000 });
  return page;
}

const lm = (page) => page.locator(TAG);
const view = (page) => lm(page).locator('[data-testid="lm-relations"]');

/**
 * What the relations view shows: per relation, its arcs (query, target, target word, the marked
 * cell, the row's weights) and its score text.
 */
const shown = (page) => page.evaluate((tag) => {
  const v = document.querySelector(tag).shadowRoot.querySelector('[data-testid="lm-relations"]');
  return {
    state: v.dataset.state, hidden: v.hidden, text: v.dataset.text, intro: v.querySelector('.explain').textContent,
    compareHidden: document.querySelector(tag).shadowRoot.querySelector('.compare').hidden,
    compareBoxHidden: document.querySelector(tag).shadowRoot.querySelector('[data-testid="lm-compare"]').closest('.wide').hidden,
    tags: [...document.querySelector(tag).shadowRoot.querySelectorAll('[data-testid="lm-grid"] .tag')].map((x) => x.textContent),
    relations: [...v.querySelectorAll('.rel')].map((r) => ({
      relation: r.dataset.relation,
      heading: r.querySelector('h4').textContent,
      sentence: r.querySelector('[data-testid="lm-relation-sentence"]')?.dataset.verdict,
      score: r.querySelector('[data-testid="lm-relation-score"]').textContent,
      arcs: [...r.querySelectorAll('[data-testid="lm-arc"]')].map((a) => ({
        caption: a.querySelector('p').textContent,
        query: Number(a.dataset.query), target: Number(a.dataset.target), targetWord: a.dataset.targetWord,
        marked: [...a.querySelectorAll('li.target')].map((li) => ({ position: Number(li.dataset.position), word: li.querySelector('span').textContent })),
        words: [...a.querySelectorAll('li span')].map((s) => s.textContent),
        weights: [...a.querySelectorAll('li')].map((li) => Number(li.dataset.weight)),
      })),
    })),
  };
}, TAG);

/** The same model file through the API on the page: relations, attention, head scores and baselines of `text`. */
const truth = (page, text) => page.evaluate(async (text) => {
  const { createHeadlab } = await import('/lib/headlab.js');
  const lab = await createHeadlab();
  const bytes = new Uint8Array(await (await fetch('/models/english.hlm')).arrayBuffer());
  const m = await lab.loadLanguageModel(bytes);
  try {
    const r = m.relations(text);
    const att = m.attention(text);
    return { ...r, weights: Array.from(att.weights), shape: att.shape, heads: m.headScores(256), baselines: m.baselines(256) };
  } finally {
    m.dispose();
  }
}, text);

/** Per relation: 'beats' | 'partly' | 'notBeats' on this sentence's arcs (self-arcs left out), recomputed from `truth`. */
function verdicts(want) {
  const [, H, T] = want.shape;
  const out = {};
  for (const key of ['agreement', 'selection', 'coreference', 'induction', 'previousToken']) {
    const arcs = want.arcs.filter((a) => a.relation === key && a.query !== a.target);
    if (!arcs.length) continue;
    const best = want.heads.reduce((b, h) => (h[key] > b[key] ? h : b));
    const k = want.baselines[key].offset;
    const w = (q, j) => want.weights[((best.layer * H + best.head) * T + q) * T + j];
    const head = arcs.reduce((s, a) => s + w(a.query, a.target), 0) / arcs.length;
    const position = arcs.filter((a) => Math.max(0, a.query - k) === a.target).length / arcs.length;
    const row = (q) => Array.from({ length: q + 1 }, (_, j) => w(q, j));
    const missed = arcs.filter((a) => row(a.query).some((x) => x > w(a.query, a.target))).length;
    out[key] = head <= position ? 'notBeats' : missed ? 'partly' : 'beats';
  }
  return out;
}

test('english: picking the task loads the shipped model; the relations view shows the true arcs of the example beside the best head\'s attention', { timeout: TIMEOUT }, async () => {
  const page = await open('english pick');
  assert.equal(await view(page).evaluate((v) => v.hidden), true, 'no relations view for the induction task');
  await lm(page).locator('[data-testid="lm-task"]').selectOption('english');
  await eventually(async () => {
    const s = await page.evaluate((tag) => document.querySelector(tag).snapshot?.runs[0], TAG);
    assert.ok(s && s.step === SHIPPED.steps, `the shipped model (${SHIPPED.steps} steps) is loaded: step ${s?.step}`);
    assert.equal(s.shape[0], SHIPPED.config.numLayers, 'with its own layers');
  }, { timeout: 60_000 });
  assert.equal(await lm(page).locator('[data-testid="lm-layers"]').inputValue(), String(SHIPPED.config.numLayers), 'the layers menu says what was loaded');
  const text = await lm(page).locator('[data-testid="lm-text"]').inputValue();
  assert.match(text, /\./, 'the example sentence is in the text box');
  const got = await eventually(async () => {
    const x = await shown(page);
    assert.equal(x.state, 'ready');
    return x;
  }, { timeout: 60_000 });
  const want = await truth(page, text);
  const [, H, T] = want.shape;
  const kinds = ['agreement', 'selection', 'coreference', 'induction', 'previousToken'];
  assert.deepEqual(got.relations.map((r) => r.relation), kinds.filter((k) => want.arcs.some((a) => a.relation === k)), 'one block per relation the grammar finds');
  assert.ok(got.relations.length === 5, `the example holds all five relations: ${got.relations.map((r) => r.relation)}`);
  for (const r of got.relations) {
    const best = want.heads.reduce((b, h) => (h[r.relation] > b[r.relation] ? h : b));
    assert.ok(r.score.includes(`layer ${best.layer + 1}, head ${best.head + 1}`), `${r.relation}: the best head is named: ${r.score}`);
    assert.ok(r.score.includes(want.baselines[r.relation].best.toFixed(2)), `${r.relation}: the best baseline ${want.baselines[r.relation].best} is shown: ${r.score}`);
    for (const a of r.arcs) {
      const arc = want.arcs.find((w) => w.relation === r.relation && w.query === a.query);
      assert.ok(arc, `${r.relation}: an arc at query ${a.query} of relations()`);
      assert.equal(a.target, arc.target);
      assert.equal(a.targetWord, want.tokens[arc.target]);
      assert.deepEqual(a.marked, [{ position: arc.target, word: want.tokens[arc.target] }], `${r.relation}: the target cell is marked`);
      assert.deepEqual(a.words, want.tokens.slice(0, arc.query + 1), `${r.relation}: the row runs over the words up to the query`);
      const base = ((best.layer * H + best.head) * T + arc.query) * T;
      a.weights.forEach((w, k) => assert.ok(Math.abs(w - want.weights[base + k]) <= 1e-6, `${r.relation}: weight ${k}: ${w} vs ${want.weights[base + k]}`));
    }
  }
  // Each verdict is about this sentence: its arcs against position alone on them.
  assert.deepEqual(Object.fromEntries(got.relations.map((r) => [r.relation, r.sentence])), verdicts(want), 'verdicts on this sentence');
  // Arrows point as the arcs do: from the word that looks to the word it looks at.
  const agreementRel = got.relations.find((r) => r.relation === 'agreement');
  assert.match(agreementRel.heading, /^Verb → subject/);
  assert.match(agreementRel.arcs[0].caption, new RegExp(`from “${want.tokens[agreementRel.arcs[0].query]}”.* to “${agreementRel.arcs[0].targetWord}”`));
  // A relation's label on the grid: only on the head that leads it (highest score, at least 0.3).
  const lead = want.heads.reduce((b, h) => (h.selection > b.selection ? h : b));
  assert.equal(got.tags.filter((x) => x.includes('object → verb')).length, 1, `one head labelled object → verb: ${got.tags}`);
  assert.match(got.tags[lead.layer * H + lead.head], /object → verb/);
  assert.ok(!got.tags.some((x) => /subject → verb|verb → object/.test(x)), 'no label points against the arcs');
  // A head that scores over 0.3 but leads nothing says so, not "no score at the threshold".
  const follower = want.heads.find((h) => h.selection >= 0.3 && h.selection < lead.selection && ['agreement', 'coreference', 'induction', 'previousToken']
    .every((k) => want.heads.some((o) => o[k] > h[k]) || h[k] < 0.3));
  await lm(page).locator(`[data-testid="lm-cell-${follower.layer + 1}-${follower.head + 1}"]`).click();
  await expectText(lm(page).locator('[data-testid="lm-detail-text"]'), /^No label: this head leads no relation/);
  // No 1-vs-2-layer panel on the 3-layer page; the page says what the model does not do.
  assert.ok(got.compareHidden && got.compareBoxHidden, 'no side-by-side panel or option for english');
  assert.match(got.intro, /does not do: in a subject relative clause/);
  const agreement = got.relations[0].arcs[0];
  console.log(`# example "${text}": agreement arc ${want.tokens[agreement.query]} → ${agreement.targetWord}, weight on it ${agreement.weights[agreement.target].toFixed(2)}`);
  await lm(page).screenshot({ path: `${SCREENSHOTS}/language-model-english-1280.png` });
  await view(page).screenshot({ path: `${SCREENSHOTS}/language-model-english-relations-1280.png` });

  // A sentence outside the grammar: the API's error (its code and position), in the element's words, as text.
  const bad = 'the dog run .';
  await lm(page).locator('[data-testid="lm-text"]').fill(bad);
  await lm(page).locator('[data-action="show-text"]').click();
  const said = await expectText(lm(page).locator('[data-testid="lm-relations-error"]'), /word 3 \(“run”/);
  const api = await page.evaluate(async (text) => {
    const { createHeadlab } = await import('/lib/headlab.js');
    const m = await (await createHeadlab()).loadLanguageModel(new Uint8Array(await (await fetch('/models/english.hlm')).arrayBuffer()));
    try { m.relations(text); return null; } catch (e) { return { code: e.code, ...e.params }; } finally { m.dispose(); }
  }, bad);
  assert.equal(api.code, 'grammar');
  assert.ok(said.includes(`word ${api.position} (“${api.word}”`), `the view names the API's word ${JSON.stringify(api)}: ${said}`);
  assert.equal((await shown(page)).relations.length, 0, 'no arcs for a text outside the grammar');
  // Text that looks like HTML stays text (an unknown word, refused by the text box first).
  await lm(page).locator('[data-testid="lm-text"]').fill('the <b>dog</b> runs .');
  await lm(page).locator('[data-action="show-text"]').click();
  await expectText(lm(page).locator('[data-testid="lm-text-error"]'), /<b>dog<\/b>/);
  assert.equal(await page.evaluate((tag) => document.querySelector(tag).shadowRoot.querySelectorAll('b').length, TAG), 0);
  // Back to a sentence of the grammar: the view draws it.
  await lm(page).locator('[data-testid="lm-text"]').fill('the kings met the girl and they were proud .');
  await lm(page).locator('[data-action="show-text"]').click();
  await eventually(async () => {
    const x = await shown(page);
    assert.equal(x.state, 'ready');
    assert.equal(x.text, 'the kings met the girl and they were proud .');
    const coref = x.relations.find((r) => r.relation === 'coreference');
    assert.ok(coref, JSON.stringify(x.relations.map((r) => r.relation)));
    assert.equal(coref.arcs[0].targetWord, 'kings');
  });
  // A subject relative: the verdict comes from this sentence (the head misses "that" → "dog"); no self-arcs.
  for (const text of ['the dog that chases the cats runs home .', 'the dog runs home .']) {
    await lm(page).locator('[data-testid="lm-text"]').fill(text);
    await lm(page).locator('[data-action="show-text"]').click();
    const x = await eventually(async () => {
      const y = await shown(page);
      assert.equal(y.state, 'ready');
      assert.equal(y.text, text);
      return y;
    });
    assert.deepEqual(Object.fromEntries(x.relations.map((r) => [r.relation, r.sentence])), verdicts(await truth(page, text)), text);
    for (const r of x.relations) for (const a of r.arcs) assert.notEqual(a.query, a.target, `${text}: ${r.relation} arc from a word to itself`);
    if (text.includes('that')) {
      await view(page).screenshot({ path: `${SCREENSHOTS}/language-model-english-relative-1280.png` });
      assert.notEqual(x.relations.find((r) => r.relation === 'agreement').sentence, 'beats');
    }
  }
  // A sentence the model writes: it goes in the text box, and the view shows the grammar's arcs of it.
  await lm(page).locator('[data-action="sample-sentence"]').click();
  const sampled = await eventually(async () => {
    const value = await lm(page).locator('[data-testid="lm-text"]').inputValue();
    assert.notEqual(value, 'the kings met the girl and they were proud .', 'a sampled sentence replaces the typed one');
    const x = await shown(page);
    assert.equal(x.state, 'ready');
    assert.equal(x.text, value, 'the view shows the sampled text');
    return { value, x };
  }, { timeout: 60_000 });
  const sampledTruth = await truth(page, sampled.value);
  for (const r of sampled.x.relations) {
    for (const a of r.arcs) {
      const arc = sampledTruth.arcs.find((w) => w.relation === r.relation && w.query === a.query);
      assert.ok(arc && arc.target === a.target, `${r.relation} arc at ${a.query} of "${sampled.value}"`);
    }
  }
  console.log(`# sampled: "${sampled.value}": ${sampled.x.relations.map((r) => r.relation).join(', ')}`);
  await page.close();
  assertNoProblems();
});

test('english at 360 px, from a link that names only the task: the shipped model opens; no horizontal overflow; screenshot', { timeout: TIMEOUT }, async () => {
  const page = await open('english 360', { width: 360, hash: '#lm.task=english' });
  await eventually(async () => assert.equal((await shown(page)).state, 'ready'), { timeout: 60_000 });
  // The shipped model, trained ahead of time: not a new one at step 0.
  await eventually(async () => assert.ok(await page.evaluate(() => document.querySelector('headlab-language-model').ctl?.currentStep > 0)), { timeout: 60_000 });
  await eventually(async () => {
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(wide <= 0, `the page is ${wide} px wider than the screen`);
  });
  await lm(page).screenshot({ path: `${SCREENSHOTS}/language-model-english-360.png` });
  await view(page).screenshot({ path: `${SCREENSHOTS}/language-model-english-relations-360.png` });
  await page.close();
  assertNoProblems();
});

test('english from file://: the single-file page does not carry the model and says so plainly; a new model is there instead', { timeout: TIMEOUT }, async () => {
  const page = await open('english file', { url: `${fileUrl(PAGE)}#lm.task=english&lm.pretrained=1` });
  const said = await expectText(lm(page).locator('[data-testid="lm-errors"]'), /opened from disk \(file:\/\/\)/);
  assert.match(said, /open the page over http\(s\)/);
  await eventually(async () => assert.equal(await page.evaluate((tag) => document.querySelector(tag).snapshot?.runs[0]?.step, TAG), 0),
    { timeout: 60_000 });
  await eventually(async () => assert.equal((await shown(page)).state, 'ready'), { timeout: 60_000 });
  await page.close();
  assertNoProblems();
});
