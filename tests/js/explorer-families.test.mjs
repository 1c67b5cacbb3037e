// What the explorer shows per family, without the DOM (web/lib/teach/explorer-families.js and its
// use in explorer-controller.js / explorer-session.js): key-value groups against the repeat_kv
// mapping, attention sinks against a plain count, the mask token and the masked course sentence;
// an encoder through an in-process session (fill at the mask, with and without heads off; a hint
// when the text has none; no logit lens), a model refused for memory said with its size and the
// limit while the model before it stays; then the real BERT and Llama fixtures end to end through
// the controller, the fill checked against the float64 reference's top 5 (expected.json).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import { ExplorerController, COURSE_SENTENCE, explainLoadError } from '../../web/lib/teach/explorer-controller.js';
import { ExplorerSession } from '../../web/lib/teach/explorer-session.js';
import { headImportance } from '../../web/lib/teach/head-importance.js';
import {
  kvGroups, sinkHeads, sinkSentence, hasMask, maskedCourseSentence, maskTokenOf, SINK,
} from '../../web/lib/teach/explorer-families.js';
import { sinkFinding } from '../../web/lib/teach/findings-controller.js';
import { fmt } from '../../web/lib/teach/format.js';
import { translator } from '../../web/lib/i18n/index.js';
import catalogue from '../../web/lib/i18n/catalogues/model-explorer.js';
import { toArrayBuffer } from './pretrained-helpers.mjs';

const settle = () => new Promise((resolve) => setImmediate(resolve));
const ROOT = new URL('../golden/families/', import.meta.url);
const readJson = (name, file) => JSON.parse(readFileSync(new URL(`${name}/${file}`, ROOT), 'utf8'));
const fixture = (name) => ({
  config: readJson(name, 'config.json'), tokenizer: readJson(name, 'tokenizer.json'),
  weights: toArrayBuffer(readFileSync(new URL(`${name}/model.safetensors`, ROOT))),
});

let lab;
before(async () => { lab = await createHeadlab(); });

test('kvGroups: query head h is in the group of key-value head h·KV/H (repeat_kv), every head once; none when nothing is shared', () => {
  for (const [H, KV] of [[9, 3], [14, 2], [32, 8], [8, 1], [4, 2], [6, 6]]) {
    const groups = kvGroups({ numHeads: H, numKeyValueHeads: KV });
    if (KV === H) { assert.deepEqual(groups, [], `${H}/${KV}: no groups`); continue; }
    assert.equal(groups.length, KV);
    const seen = groups.flatMap((g) => g.heads);
    assert.deepEqual(seen, Array.from({ length: H }, (_, h) => h), `${H}/${KV}: every head once, in order`);
    for (const g of groups) for (const h of g.heads) assert.equal(g.kvHead, Math.floor((h * KV) / H), `${H}/${KV}: head ${h}`);
  }
  assert.deepEqual(kvGroups({ numHeads: 4 }), [], 'no numKeyValueHeads: one per query head');
  assert.throws(() => kvGroups({ numHeads: 6, numKeyValueHeads: 4 }), /kvGroups: info\.numKeyValueHeads must be a positive integer that divides numHeads 6, got 4/);
  assert.throws(() => kvGroups({ numHeads: 0 }), /kvGroups: info\.numHeads must be a positive integer/);
});

test('one sink figure: the card (sinkFinding) counts the heads, total and share the line (sinkHeads) counts, in the same words', () => {
  // 3 layers × 4 heads; head 2.3 has no finite score (not a sink, still one of the grid's 12 heads).
  const firsts = [[0.1, 0.5, 0.49, 0.95], [0.75, 0.2, 0.3, 0.4], [0, 0, 0.6, NaN]];
  const scores = firsts.flatMap((row, layer) => row.map((firstToken, head) => ({ layer, head, firstToken })));
  const shape = { numLayers: 3, numHeads: 4 };
  const line = sinkHeads(scores);
  const card = sinkFinding(scores, shape);
  // A plain count: 0.5, 0.95, 0.75 and 0.6 reach SINK = 0.5, of 12 heads.
  assert.deepEqual(line.heads.map((h) => `${h.layer}.${h.head}`), ['0.3', '1.0', '2.2', '0.1']);
  for (const f of [line, card]) {
    assert.deepEqual([f.heads.length, f.total, f.share, f.threshold], [4, 12, 4 / 12, SINK]);
  }
  assert.deepEqual(card.heads, line.heads);
  assert.equal(card.count, 4);
  const t = translator(catalogue, 'en');
  const words = (sinks, headName) => sinkSentence(sinks, { t, fmt, headName });
  const fromOne = (l, h) => `L${l + 1} H${h + 1}`;
  assert.equal(words(line, fromOne), '4 of 12 heads (33.3 %) put at least 0.5 of their attention on the first token: L1 H4, L2 H1, L3 H3, L1 H2.');
  assert.equal(words(card, (l, h) => `${l}.${h}`), '4 of 12 heads (33.3 %) put at least 0.5 of their attention on the first token: 0.3, 1.0, 2.2, 0.1.');
  // The explorer test's case: one sink of 8 heads is 12.5 % in both places (the line said "13 %").
  const one = Array.from({ length: 8 }, (_, i) => ({ layer: i >> 2, head: i & 3, firstToken: i === 6 ? 0.75 : 0.1 }));
  assert.equal(words(sinkHeads(one), fromOne), '1 of 8 heads (12.5 %) put at least 0.5 of their attention on the first token: L2 H3.');
  assert.equal(words(sinkFinding(one, { numLayers: 2, numHeads: 4 }), fromOne), words(sinkHeads(one), fromOne));
  assert.equal(words(sinkHeads(one.map((q) => ({ ...q, firstToken: 0.1 }))), fromOne), 'None of the 8 heads puts at least 0.5 of its attention on the first token.');
  const es = translator(catalogue, 'es');
  assert.equal(sinkSentence(sinkHeads(one), { t: es, fmt: (v, d) => fmt(v, d).replace('.', ','), headName: fromOne }),
    '1 de 8 cabezas (12,5 %) ponen al menos 0,5 de su atención en el primer token: L2 H3.');
});

test('sinkHeads: the heads at or above the threshold, strongest first, as a plain count says', () => {
  let s = 7;
  const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
  const scores = [];
  for (let layer = 0; layer < 5; layer++) for (let head = 0; head < 6; head++) scores.push({ layer, head, firstToken: rand() });
  scores.push({ layer: 5, head: 0, firstToken: SINK }, { layer: 5, head: 1, firstToken: NaN });
  const r = sinkHeads(scores);
  let count = 0;
  for (const q of scores) if (q.firstToken >= 0.5) count += 1;
  assert.equal(r.heads.length, count);
  assert.equal(r.total, scores.length);
  assert.equal(r.share, count / scores.length);
  assert.ok(r.heads.some((h) => h.layer === 5 && h.head === 0), 'a score of exactly the threshold counts');
  for (let i = 1; i < r.heads.length; i++) assert.ok(r.heads[i - 1].firstToken >= r.heads[i].firstToken, 'strongest first');
  assert.equal(sinkHeads(scores, 0.99).heads.length, scores.filter((q) => q.firstToken >= 0.99).length);
  assert.deepEqual(sinkHeads([]), { heads: [], total: 0, share: 0, threshold: SINK });
  assert.throws(() => sinkHeads(null), /sinkHeads: scores must be headScores\(\)\.scores/);
  assert.throws(() => sinkHeads(scores, 2), /sinkHeads: threshold must be in 0\.\.1, got 2/);
});

test('the mask token: found by the tokenizer, in the text or not, and the course sentence masked', () => {
  const tokenizer = (vocab) => ({ tokenize: (t) => ({ tokens: vocab.includes(t) ? ['<s>', t, '</s>'] : t.split('') }) });
  assert.equal(maskTokenOf(tokenizer(['[MASK]'])), '[MASK]');
  assert.equal(maskTokenOf(tokenizer(['<mask>'])), '<mask>');
  assert.equal(maskTokenOf(tokenizer([])), null);
  assert.equal(maskTokenOf({ tokenize: () => { throw new Error('no'); } }), null);
  assert.equal(maskedCourseSentence('[MASK]'), 'Virat hit the [MASK] because it was full and outside off.');
  assert.ok(hasMask(maskedCourseSentence('<mask>'), '<mask>'));
  assert.ok(!hasMask(COURSE_SENTENCE, '[MASK]'));
  assert.ok(!hasMask('a [MASK] b', null));
  assert.throws(() => maskedCourseSentence(''), /maskedCourseSentence: maskToken must be a string/);
});

/** A fake encoder with the PretrainedModel methods it needs: 1 layer × 2 heads, '[MASK]' in its vocabulary. */
class FakeEncoder {
  constructor() {
    this.info = { architecture: 'BertForMaskedLM', kind: 'encoder', numLayers: 1, numHeads: 2, numKeyValueHeads: 2, dModel: 8, vocabSize: 20, contextLength: 32 };
    this.fills = [];
  }

  tokenize(text) {
    const tokens = ['[CLS]', ...text.split(/\s+/).filter(Boolean), '[SEP]'];
    return { ids: Int32Array.from(tokens, (_, i) => i), tokens };
  }

  async run(text, { attention } = {}) {
    const { ids, tokens } = this.tokenize(text);
    const T = ids.length;
    return { ids, tokens, next: [], attention: attention ? new Float32Array(2 * T * T).fill(1 / T) : undefined };
  }

  async fill(text, { ablate = [] } = {}) {
    this.fills.push(ablate.length);
    const { ids, tokens } = this.tokenize(text);
    const position = tokens.indexOf('[MASK]');
    return { ids, tokens, masks: [{ position, top: [{ id: 3, token: ablate.length ? 'bat' : 'ball', probability: 0.6 }] }] };
  }

  async headScores() {
    const score = (head, firstToken) => ({ layer: 0, head, previousToken: 0, duplicateToken: 0, induction: 0, firstToken });
    return { sequence: [0], scores: [score(0, 0.9), score(1, 0.1)] };
  }

  async logitLens() { throw new Error('an encoder has no logit lens'); }
  dispose() {}
}

function inProcess(loadPretrained) {
  return (onEvent) => {
    const session = new ExplorerSession(lab, onEvent, { loadPretrained });
    return {
      dead: false, request: (type, payload) => session.handle(type, payload).then((r) => r.result), dispose: () => session.dispose(),
    };
  };
}

function controller(createClient) {
  return new ExplorerController({ createClient, readShipped: async () => new Uint8Array(), emit: () => {} });
}

test('an encoder: its mask token in info, the course sentence masked, fill at the mask with heads off beside every head on, no lens', async () => {
  const model = new FakeEncoder();
  const c = controller(inProcess(async () => model));
  await c.load({ kind: 'hub', id: 'google-bert/bert-base-uncased' });
  assert.equal(c.info.maskToken, '[MASK]');
  assert.equal(c.text, maskedCourseSentence('[MASK]'), 'the course sentence with its mask');
  assert.deepEqual(c.results.next, []);
  assert.equal(c.results.fill.length, 1);
  assert.equal(c.results.fill[0].position, 4);
  assert.equal(c.results.fill[0].top[0].token, 'ball');
  // What each head costs is a next-token loss: an encoder is refused in words.
  await assert.rejects(headImportance(model, c.text), /an encoder guesses masked words/);
  assert.equal(c.results.fillBaseline, null, 'no baseline while every head is on');
  assert.equal(c.results.lens, null);
  assert.equal(c.results.lensNoteKey, 'explorer.lensEncoder');
  await c.setHeadEnabled(0, 1, false);
  assert.equal(c.results.fill[0].top[0].token, 'bat');
  assert.equal(c.results.fillBaseline[0].top[0].token, 'ball', 'every head on, beside');
  assert.deepEqual(model.fills, [0, 1], 'the all-on fill is kept for the text, not run again');
  // A text without the mask: no fill, and the model is not asked.
  await c.setText('Virat hit the ball');
  assert.equal(c.textProblem, '');
  assert.equal(c.results.fill, null);
  assert.deepEqual(model.fills, [0, 1]);
  // A reader's own text is never replaced by the masked sentence.
  const c2 = controller(inProcess(async () => new FakeEncoder()));
  await c2.setText('my own words');
  await c2.load({ kind: 'hub', id: 'x/y' });
  assert.equal(c2.text, 'my own words');
});

test('a model refused for memory: its size and the limit in words, nothing else kept but the model before it', async () => {
  const en = translator(catalogue, 'en');
  const es = translator(catalogue, 'es');
  const params = { file: 'model.safetensors', bytes: 7_642_160_000, limit: 2 ** 32 - 2 ** 16, activations: 50e6 };
  const words = explainLoadError('PretrainedModel: cannot fit', { code: 'too-large', params, t: en });
  assert.match(words, /weights are 7\.64 GB, and this browser tab’s engine holds at most 4\.29 GB/);
  assert.match(words, /not downloaded/);
  assert.match(explainLoadError('x', { code: 'too-large', params, t: es }), /ocupan 7\.64 GB.*como mucho 4\.29 GB/);
  assert.match(explainLoadError('x', { code: 'too-large', t: en }), /too large for this browser tab/, 'without numbers: the plain words');
  // Through the controller: the model loaded before stays.
  let refuse = false;
  const load = async () => {
    if (refuse) throw Object.assign(new RangeError('loadPretrained: cannot fit'), { code: 'too-large', params });
    return new FakeEncoder();
  };
  const c = controller(inProcess(load));
  await c.load({ kind: 'hub', id: 'google-bert/bert-base-uncased' });
  const before = c.info;
  refuse = true;
  await c.load({ kind: 'hub', id: 'microsoft/Phi-3-mini-4k-instruct' });
  assert.equal(c.state, 'ready');
  assert.equal(c.info, before, 'the model before it is kept');
  assert.equal(c.source.id, 'google-bert/bert-base-uncased');
  assert.equal(c.failed.code, 'too-large');
  assert.match(c.failed.message, /7\.64 GB.*4\.29 GB/);
});

test('the real BERT fixture through the controller: the mask token from its tokenizer, fill as the float64 reference\'s top 5', async () => {
  const expected = readJson('bert', 'expected.json').fill[0];
  assert.equal(expected.text, maskedCourseSentence('[MASK]'), 'the reference filled the masked course sentence');
  const c = controller(inProcess((source) => lab.loadPretrained(source)));
  await c.load({ kind: 'files', files: fixture('bert') });
  await settle();
  assert.equal(c.info.kind, 'encoder');
  assert.equal(c.info.maskToken, '[MASK]');
  assert.equal(c.text, expected.text);
  assert.deepEqual(c.results.fill.map((m) => m.position), expected.positions);
  assert.deepEqual(c.results.fill.map((m) => m.top.map((n) => n.id)), expected.top);
  c.dispose();
});

test('the real RoBERTa fixture: <mask> from its tokenizer; the Llama fixture: key-value groups of 2, sinks as its scores say', async () => {
  if (!existsSync(new URL('roberta/model.safetensors', ROOT))) return;
  const r = controller(inProcess((source) => lab.loadPretrained(source)));
  await r.load({ kind: 'files', files: fixture('roberta') });
  assert.equal(r.info.maskToken, '<mask>');
  const expected = readJson('roberta', 'expected.json').fill[0];
  assert.deepEqual(r.results.fill.map((m) => m.top.map((n) => n.id)), expected.top);
  r.dispose();
  const l = controller(inProcess((source) => lab.loadPretrained(source)));
  await l.load({ kind: 'files', files: fixture('llama-gqa') });
  assert.equal(l.info.kind, 'decoder');
  assert.equal(l.info.maskToken, undefined);
  assert.equal(l.text, COURSE_SENTENCE, 'a decoder keeps the course sentence');
  assert.deepEqual(kvGroups(l.info).map((g) => g.heads), [[0, 1], [2, 3]]);
  const sinks = sinkHeads(l.scores.scores);
  assert.equal(sinks.total, 8);
  assert.deepEqual(sinks.heads.map((h) => `${h.layer}.${h.head}`).sort(), l.scores.scores.filter((q) => q.firstToken >= 0.5).map((q) => `${q.layer}.${q.head}`).sort());
  assert.deepEqual(sinkFinding(l.scores.scores, l.info).heads, sinks.heads, 'the findings card counts the same heads');
  l.dispose();
});
