// The language-model API's traps of issue 25, each against an answer found independently:
// reserved tokens in user text, string and array sequences alike, generate never emitting the
// start token (checked against the C++ sampler and against the model's own probabilities),
// config() the shape of Trainer.config(), options echoed as given, and "did you mean" for tasks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = await createHeadlab();
const TINY = { numLayers: 1, numHeads: 2, dModel: 8, batchSize: 8 };

async function withModel(options, fn) {
  const lm = await lab.createLanguageModel(options);
  try {
    return await fn(lm);
  } finally {
    lm.dispose();
  }
}

function throwsNaming(call, Type, ...parts) {
  assert.throws(call, (e) => {
    assert.ok(e instanceof Type, `${Type.name} expected, got ${e?.constructor?.name}: ${e?.message}`);
    for (const p of parts) assert.ok(e.message.includes(p), `the message should name ${p}: ${e.message}`);
    return true;
  });
}

test('tokens the model reserves are not taken from text: one start token first, a start token elsewhere or a pad token is a RangeError naming it and where', async () => {
  await withModel({ task: 'induction', seed: 1, ...TINY }, (lm) => {
    assert.deepEqual(lm.tokenize('<s> x q').tokens, ['<s>', 'x', 'q'], 'a leading start token is the one tokenize puts there');
    assert.deepEqual(lm.tokenize('<s> x q'), lm.tokenize('x q'));
    throwsNaming(() => lm.tokenize('x <s> q'), RangeError, 'LanguageModel.tokenize', 'text', '"<s>" at word 2', 'start token');
    throwsNaming(() => lm.tokenize('<s> <s> x'), RangeError, '"<s>" at word 2');
    throwsNaming(() => lm.attention(['x', 'q', '<s>']), RangeError, 'LanguageModel.attention', 'tokensOrText[2]: "<s>" is');
    const s = lm.vocabulary.indexOf('<s>');
    throwsNaming(() => lm.predict([s, 5, s]), RangeError, 'LanguageModel.predict', 'tokensOrText[2]: "<s>" is');
    throwsNaming(() => lm.generate({ prompt: 'a <s>' }), RangeError, 'LanguageModel.generate', 'prompt', '"<s>" at word 2');
  });
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    throwsNaming(() => lm.tokenize('virat <pad> hit'), RangeError, '"<pad>" at word 2', 'pad token');
    throwsNaming(() => lm.tokenize('<pad> virat'), RangeError, '"<pad>" at word 1', 'pad token');
    throwsNaming(() => lm.attention([3, 4, lm.vocabulary.indexOf('<pad>')]), RangeError, 'tokensOrText[2]: "<pad>" is', 'pad token');
    // The stop token is a word of the text: generate's text ends with it and must tokenize back.
    assert.deepEqual(lm.tokenize('virat hit the ball .').tokens, ['<s>', 'virat', 'hit', 'the', 'ball', '.']);
  });
});

test('string and array sequences are alike: the start token is put first unless the sequence begins with it', async () => {
  await withModel({ task: 'cricket', seed: 3, ...TINY }, (lm) => {
    lm.step(20);
    const words = ['virat', 'hit', 'the', 'ball'];
    const ids = words.map((w) => lm.vocabulary.indexOf(w));
    const forms = [words.join(' '), words, ids, Int32Array.from(ids), ['<s>', ...words], [lm.vocabulary.indexOf('<s>'), ...ids], `<s> ${words.join(' ')}`];
    const [first, ...rest] = forms;
    for (const f of rest) {
      assert.deepEqual(lm.attention(f), lm.attention(first), JSON.stringify(f));
      assert.deepEqual(lm.predict(f), lm.predict(first), JSON.stringify(f));
      for (const temperature of [0, 1]) {
        assert.deepEqual(lm.generate({ prompt: f, temperature, seed: 5 }), lm.generate({ prompt: first, temperature, seed: 5 }));
      }
    }
    assert.deepEqual(lm.attention(first).tokens, ['<s>', ...words]);
    assert.deepEqual(lm.attention([]), lm.attention(''), 'no words: the start token alone, either way');
    assert.deepEqual(lm.generate({ prompt: [], seed: 2 }), lm.generate({ seed: 2 }));
    // 17 words fit a sequence of 18 either way; 18 do not, either way; 18 tokens starting with <s> do.
    const w17 = new Array(17).fill('the');
    assert.equal(lm.attention(w17).shape[2], 18);
    assert.equal(lm.attention(w17.join(' ')).shape[2], 18);
    throwsNaming(() => lm.attention([...w17, 'the']), RangeError, 'tokensOrText has 18 tokens', 'more than the sequence length 18');
    throwsNaming(() => lm.attention([...w17, 'the'].join(' ')), RangeError, 'tokensOrText has 18 words', 'more than the sequence length 18');
    assert.equal(lm.attention(['<s>', ...w17]).shape[2], 18);
  });
});

test('generate never emits the start token, and draws each other token with its renormalised probability', async () => {
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    const start = lm.vocabulary.indexOf('<s>');
    for (const temperature of [0.5, 1, 2, 5]) {
      for (let seed = 1; seed <= 40; seed++) {
        const g = lm.generate({ prompt: 'virat', temperature, seed });
        assert.ok(!g.newTokens.includes('<s>'), `temperature ${temperature}, seed ${seed}: ${g.text}`);
        assert.deepEqual(lm.generate({ prompt: 'virat', temperature, seed }), g, 'seeded: the same tokens again');
      }
    }
    // The first new token after 'virat hit' over many seeds against the model's own predict():
    // p renormalised without the start token (the pad token ends generation: no new token).
    const p = new Float64Array(lm.vocabulary.length);
    for (const { id, probability } of lm.predict('virat hit')) p[id] = probability;
    assert.ok(p[start] > 0.005, `the untrained model gives the start token ${p[start]}: enough to be drawn`);
    const n = 4000, counts = new Float64Array(p.length);
    for (let seed = 1; seed <= n; seed++) {
      const [t] = lm.generate({ prompt: 'virat hit', maxTokens: 1, seed }).newTokens;
      counts[t === undefined ? lm.vocabulary.indexOf('<pad>') : lm.vocabulary.indexOf(t)]++;
    }
    let worst = 0;
    for (let i = 0; i < p.length; i++) {
      const want = i === start ? 0 : p[i] / (1 - p[start]);
      const sd = Math.sqrt(want * (1 - want) / n);
      worst = Math.max(worst, Math.abs(counts[i] / n - want) / (sd + 1e-9));
      assert.ok(Math.abs(counts[i] / n - want) <= 5 * sd + 1e-9, `${lm.vocabulary[i]}: ${counts[i] / n} drawn, ${want} expected`);
    }
    assert.equal(counts[start], 0);
  });
});

test('LanguageModel.config() is a method of the shape of Trainer.config(): the options and step', async () => {
  const t = await lab.createTrainer({ seed: 1 });
  const trainerKeys = Object.keys(t.config());
  t.dispose();
  assert.equal(trainerKeys.at(-1), 'step');
  await withModel({ task: 'induction', seed: 2, ...TINY }, async (lm) => {
    assert.equal(typeof lm.config, 'function');
    const c = lm.config();
    assert.deepEqual(c, { task: 'induction', ...TINY, mlp: false, seed: 2, learningRate: 0.01, batchSize: 8, step: 0 });
    assert.deepEqual(Object.keys(c).at(-1), 'step');
    assert.deepEqual(structuredClone(c), c, 'plain data, as Trainer.config()');
    lm.step(3);
    assert.equal(lm.config().step, 3);
    // 0.2's property, deprecated: its fields are still there, without step, and feed createLanguageModel.
    assert.equal(lm.config.dModel, 8);
    const { step, ...options } = lm.config();
    assert.deepEqual({ ...lm.config }, options);
    assert.equal(step, 3);
    const again = await lab.createLanguageModel({ ...lm.config });
    assert.deepEqual(again.config(), { ...options, step: 0 });
    again.dispose();
  });
});

test('learning rates are echoed as given: config(), divergence() and after save and load, for both models', async () => {
  for (const rate of [0.003, 0.01, 3e-4, 0.0007, 1e-5, 0.9]) {
    const t = await lab.createTrainer({ seed: 1, learningRate: rate });
    const u = await lab.loadTrainer(t.save());
    assert.equal(t.config().learningRate, rate, `Trainer ${rate}`);
    assert.equal(u.config().learningRate, rate, `loaded Trainer ${rate}`);
    t.dispose(); u.dispose();
    await withModel({ task: 'induction', ...TINY, learningRate: rate }, async (lm) => {
      assert.equal(lm.config().learningRate, rate, `LanguageModel ${rate}`);
      const copy = await lab.loadLanguageModel(lm.save());
      assert.equal(copy.config().learningRate, rate, `loaded LanguageModel ${rate}`);
      copy.dispose();
    });
  }
  const d = await lab.createTrainer({ seed: 1, learningRate: 9.7, optimizer: 'sgd' });
  assert.throws(() => d.step(1000), /learningRate 9\.7 \(sgd\)/);
  assert.equal(d.divergence().learningRate, 9.7);
  d.dispose();
  for (const t of await lab.languageTasks()) assert.equal(t.defaults.learningRate, t.name === 'english' ? 0.003 : 0.01);
});

test('an unknown task name gets a "did you mean" when one is close, for both models', async () => {
  const rejects = async (call, pattern) => assert.rejects(call, (e) => e instanceof RangeError && pattern.test(e.message) && /\btask\b/.test(e.message));
  await rejects(() => lab.createLanguageModel({ task: 'inductoin' }), /unknown task "inductoin"; did you mean induction\? \(known: induction, cricket, english\)/);
  await rejects(() => lab.createLanguageModel({ task: 'Cricket' }), /did you mean cricket\?/);
  await rejects(() => lab.createLanguageModel({ task: 'sorting' }), /unknown task "sorting" \(known: induction, cricket, english\)/);
  await rejects(() => lab.createTrainer({ task: 'two-relation' }), /createTrainer: task: unknown task "two-relation"; did you mean two-relations\?/);
  await rejects(() => lab.createTrainer({ task: 'pronouns' }), /did you mean pronoun\?/);
  await rejects(() => lab.createTrainer({ task: 'sorting' }), /unknown task "sorting" \(known: two-relations, /);
});
