// The explorer-facing methods a LanguageModel shares with a PretrainedModel (info, tokenize, run,
// headScores, generate), each against an answer found another way: run's log-probabilities at
// every position, from one forward pass, against predict() on each prefix (one pass per prefix,
// the probabilities of the cross-entropy kernel's softmax); ablation per call against switching
// the heads off with setHeadEnabled, and the switches left as they were; headScores against
// headScores(n); generate(prompt) against generate({ prompt }); every bad option named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lab = await createHeadlab();
const shipped = (name) => lab.loadLanguageModel(readFileSync(path.join(REPO, `web/models/${name}.hlm`)));

/** max |run's row t − log predict(first t + 1 tokens)| over every position and token. */
function worstAgainstPredict(lm, ids, logits) {
  const V = lm.vocabulary.length;
  let worst = 0;
  for (let t = 1; t <= ids.length; t++) {
    for (const { id, probability } of lm.predict(ids.subarray(0, t))) {
      worst = Math.max(worst, Math.abs(logits[(t - 1) * V + id] - Math.log(probability)));
    }
  }
  return worst;
}

const switches = (lm) => {
  const { numLayers: L, numHeads: H } = lm.info;
  return Array.from({ length: L * H }, (_, k) => lm.headEnabled(Math.floor(k / H), k % H));
};

test('info has the PretrainedModel fields; tokenize reads text case-insensitively with sentence marks as words', async () => {
  const lm = await shipped('cricket');
  const c = lm.config();
  const info = lm.info;
  const keys = ['architecture', 'kind', 'task', 'numLayers', 'numHeads', 'numKeyValueHeads', 'dModel', 'vocabSize', 'contextLength', 'dtype'];
  assert.deepEqual(keys.map((k) => info[k]),
    ['headlab', 'decoder', 'cricket', c.numLayers, c.numHeads, c.numHeads, c.dModel, lm.vocabulary.length, lm.task.seqLen, 'F32']);
  // The weights counted from the layout in cpp/include/headlab/lm.hpp.
  const d = c.dModel, V = lm.vocabulary.length, T = lm.task.seqLen;
  const perLayer = 2 * d + 4 * d * d + 4 * d + (c.mlp ? 2 * d + 8 * d * d + 4 * d + d : 0);
  assert.equal(info.parameters, V * d + T * d + c.numLayers * perLayer + 2 * d + d * V + V);
  assert.equal(info.bytes, 4 * info.parameters);
  assert.deepEqual(lm.tokenize('Virat hit the ball because it was FULL.').tokens,
    ['<s>', 'virat', 'hit', 'the', 'ball', 'because', 'it', 'was', 'full', '.'], 'the cricket vocabulary holds "."');
  assert.throws(() => lm.tokenize('Virat hits'), /unknown word "hits" at word 2/);
  lm.dispose();
});

test('run: every position\'s log-probabilities from one forward equal predict() on each prefix', async () => {
  for (const name of ['induction', 'cricket']) {
    const lm = await shipped(name);
    const text = name === 'induction' ? 'j 4 e p x 2 m q b k r p x 2 m q' : 'virat hit the ball because it was';
    const r = await lm.run(text, { allLogits: true, attention: true, topK: 5 });
    const V = lm.vocabulary.length, T = r.ids.length;
    assert.deepEqual(r.ids, lm.tokenize(text).ids);
    assert.deepEqual(r.tokens, lm.tokenize(text).tokens);
    assert.equal(r.logits.length, T * V);
    const worst = worstAgainstPredict(lm, r.ids, r.logits);
    assert.ok(worst <= 1e-5, `${name}: max |run − log predict| ${worst}`);
    // next is predict's answer, attention attention()'s, the last row what run gives without allLogits.
    assert.deepEqual(r.next, lm.predict(text, { topK: 5 }));
    assert.deepEqual(r.attention, lm.attention(text).weights);
    const last = await lm.run(text);
    assert.deepEqual(last.logits, r.logits.slice((T - 1) * V));
    assert.equal(last.next.length, Math.min(10, V));
    assert.equal(last.attention, undefined);
    lm.dispose();
  }
});

test('run: ablation per call equals setHeadEnabled + predict, and leaves every switch as it was', async () => {
  const lm = await shipped('cricket');
  const text = 'virat hit the ball because it was';
  lm.setHeadEnabled(0, 3, false);  // a head the user switched off stays off in the run
  const before = switches(lm);
  const ablate = [{ layer: 1, head: 0 }, { layer: 0, head: 1 }];
  const r = await lm.run(text, { allLogits: true, attention: true, ablate, topK: 8 });
  assert.deepEqual(switches(lm), before, 'the switches are as they were');
  const all = await lm.run(text, { allLogits: true });
  for (const { layer, head } of ablate) lm.setHeadEnabled(layer, head, false);
  const worst = worstAgainstPredict(lm, r.ids, r.logits);
  assert.ok(worst <= 1e-5, `max |run(ablate) − log predict(heads off)| ${worst}`);
  assert.deepEqual(r.next, lm.predict(text, { topK: 8 }));
  assert.deepEqual(r.attention, lm.attention(text).weights);
  const changed = r.logits.some((x, i) => Math.abs(x - all.logits[i]) > 1e-3);
  assert.ok(changed, 'switching two heads off changes the log-probabilities');
  lm.dispose();
});

test('run, headScores and generate refuse bad options by name; a disposed model rejects', async () => {
  const lm = await shipped('induction');
  const { numLayers: L, numHeads: H } = lm.info;
  const rejects = (p, Type, ...parts) => assert.rejects(p, (e) => {
    assert.ok(e instanceof Type, `${Type.name} expected, got ${e?.constructor?.name}: ${e?.message}`);
    for (const part of parts) assert.ok(e.message.includes(part), `the message should name ${part}: ${e.message}`);
    return true;
  });
  await rejects(lm.run('a b', { alllogits: true }), TypeError, 'LanguageModel.run', '"alllogits"', 'did you mean allLogits');
  await rejects(lm.run('a b', { attention: 1 }), TypeError, 'LanguageModel.run', 'attention must be a boolean');
  await rejects(lm.run('a b', { topK: 0 }), RangeError, 'LanguageModel.run', 'topK');
  await rejects(lm.run('a b', { topK: lm.vocabulary.length + 1 }), RangeError, 'topK must be at most');
  await rejects(lm.run('a b', { ablate: { layer: 0, head: 0 } }), TypeError, 'LanguageModel.run: ablate must be an array');
  await rejects(lm.run('a b', { ablate: [{ layer: L, head: 0 }] }), RangeError, `ablate[0].layer must be an integer in 0..${L - 1}`);
  await rejects(lm.run('a b', { ablate: [{ layer: 0, head: -1 }] }), RangeError, `ablate[0].head must be an integer in 0..${H - 1}`);
  await rejects(lm.run('a B zz'), RangeError, 'LanguageModel.run', 'textOrIds', 'unknown word "zz" at word 3');
  await rejects(lm.run([0, 99999]), RangeError, 'textOrIds[1] must be a token id');
  await rejects(lm.headScores({ length: 20 }), TypeError, 'LanguageModel.headScores', '"length"', 'the options are examples');
  await rejects(lm.headScores({ examples: 0 }), RangeError, 'LanguageModel.headScores', 'examples');
  await rejects(lm.generate('a b', { maxTokens: lm.task.seqLen }), RangeError, 'LanguageModel.generate', 'maxTokens must be at most');
  await rejects(lm.generate('a b', { prompt: 'a' }), TypeError, 'LanguageModel.generate', '"prompt"');
  await rejects(lm.generate('a b', { temperature: -1 }), RangeError, 'temperature');
  lm.dispose();
  await rejects(lm.run('a b'), TypeError, 'LanguageModel.run', 'disposed');
  assert.throws(() => lm.info, /LanguageModel.info: this model has been disposed/);
});

test('headScores({ examples }) is headScores(n) in the PretrainedModel shape; generate(prompt) is generate({ prompt })', async () => {
  const lm = await shipped('induction');
  const s = await lm.headScores({ examples: 200 });
  assert.deepEqual([s.sequence, s.basis, s.examples], [null, 'task', 200]);
  assert.deepEqual(s.scores, lm.headScores(200));
  assert.equal((await lm.headScores({})).examples, 500);
  assert.ok(Array.isArray(lm.headScores()), 'headScores() and headScores(n) answer as before');
  for (const temperature of [0, 1]) {
    const g = await lm.generate('j 4 e p j 4', { maxTokens: 3, temperature, seed: 7 });
    const old = lm.generate({ prompt: 'j 4 e p j 4', maxTokens: 3, temperature, seed: 7 });
    assert.deepEqual(g.tokens, old.tokens);
    assert.deepEqual(g.ids, Int32Array.from(old.tokens, (w) => lm.vocabulary.indexOf(w)));
    assert.equal(g.promptLength, 7);
    assert.equal(g.text, old.newTokens.join(' '));
  }
  assert.deepEqual((await lm.generate('j 4 e p j 4', { temperature: 0, maxTokens: 1 })).text, 'e', 'the induction model copies the repeat');
  lm.dispose();
});

test('run keeps no memory: the training module\'s heap in use is the same after 200 calls', async () => {
  const lm = await shipped('cricket');
  const call = () => lm.run('virat hit the ball because it was', { allLogits: true, attention: true, ablate: [{ layer: 0, head: 0 }] });
  await call();
  const before = lab.info().trainingHeapInUseBytes;
  for (let i = 0; i < 200; i++) await call();
  assert.equal(lab.info().trainingHeapInUseBytes, before);
  lm.dispose();
});
