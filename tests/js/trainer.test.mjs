// The training API under Node: heads specialise on two-relations, ablation,
// save/load, determinism, the exported model agrees with multiHeadAttention,
// bad inputs, disposal and no leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = await createHeadlab();

test('the task table lists the tasks with their relation positions', async () => {
  const tasks = await lab.tasks();
  const byName = Object.fromEntries(tasks.map((t) => [t.name, t]));
  assert.deepEqual(byName['two-relations'].relationPositions, [6, 0]);
  assert.equal(byName['three-relations'].numRelations, 3);
  assert.equal(byName['two-relations'].queryPosition, 7);
  assert.ok(byName.pronoun.description.length > 0);
  for (const t of tasks) assert.equal(t.tokenNames.length, t.vocab);
});

test('two heads specialise on two-relations: one head per relation, accuracy 1', async () => {
  const t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, seed: 7, batchSize: 64 });
  try {
    const info = t.taskInfo();
    assert.equal(info.seqLen, 8);
    t.step(600);
    const ev = t.evaluate(1000);
    assert.ok(ev.accuracy >= 0.99, `accuracy ${ev.accuracy}`);
    const m = t.headMetrics(256);
    assert.equal(m.length, 2);
    // Each relation position has its own head putting >= 0.7 of its query-row weight there.
    for (let r = 0; r < 2; r++) {
      const best = Math.max(...m.map((h) => h.relationShare[r]));
      assert.ok(best >= 0.7, `relation ${r}: best head share ${best}`);
    }
    const owner = [0, 1].map((r) => m.findIndex((h) => h.relationShare[r] >= 0.7));
    assert.notEqual(owner[0], owner[1], 'the two relations are tracked by different heads');

    // Ablation: switching off the head that carries relation 0 breaks that relation.
    t.setHeadEnabled(owner[0], false);
    assert.equal(t.headEnabled(owner[0]), false);
    const ablated = t.evaluate(1000);
    assert.ok(ablated.accuracy < 0.5, `accuracy with head ${owner[0]} off: ${ablated.accuracy}`);
    assert.ok(ablated.relationAccuracy[0] < 0.5);
    t.setHeadEnabled(owner[0], true);
    assert.ok(t.evaluate(1000).accuracy >= 0.99);

    // The probe's attention maps are row-stochastic [h, T, T].
    const w = t.attentionWeights();
    assert.equal(w.length, 2 * 8 * 8);
    for (let row = 0; row < 16; row++) {
      const s = w.subarray(row * 8, row * 8 + 8).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(s - 1) < 1e-5);
    }
  } finally {
    t.dispose();
  }
});

test('one head blends the two relation positions', async () => {
  const t = await lab.createTrainer({ task: 'two-relations', numHeads: 1, dModel: 16, seed: 7 });
  try {
    t.step(1500);
    const [head] = t.headMetrics(256);
    for (const share of head.relationShare) assert.ok(share >= 0.2, `share ${head.relationShare}`);
  } finally {
    t.dispose();
  }
});

test('same seed, same loss curve; save/load restores an equivalent trainer', async () => {
  const a = await lab.createTrainer({ seed: 3 }), b = await lab.createTrainer({ seed: 3 });
  try {
    for (let i = 0; i < 5; i++) assert.deepEqual(a.step(20), b.step(20));
    const bytes = a.save();
    assert.ok(bytes instanceof Uint8Array);
    assert.equal(String.fromCharCode(...bytes.subarray(0, 4)), 'HLAB');
    const c = await lab.loadTrainer(bytes);
    try {
      assert.deepEqual(c.evaluate(500), a.evaluate(500));
      assert.deepEqual(c.attentionWeights(), a.attentionWeights());
      assert.equal(c.config().step, 100);
      assert.deepEqual(c.save(), bytes);
    } finally {
      c.dispose();
    }
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('exportModel feeds multiHeadAttention and gives the trainer\'s attention maps', async () => {
  const t = await lab.createTrainer({ task: 'three-relations', numHeads: 3, dModel: 24, seed: 2 });
  try {
    t.step(50);
    const m = t.exportModel();
    assert.equal(m.tokens.length, 8);
    assert.equal(m.X.length, 8 * 24);
    const r = lab.multiHeadAttention({ query: m.X, dModel: m.dModel, numHeads: m.numHeads, wQ: m.wQ, wK: m.wK, wV: m.wV,
      wO: m.wO, bQ: m.bQ, bK: m.bK, bV: m.bV, bO: m.bO, returnWeights: true });
    const w = t.attentionWeights();
    for (let i = 0; i < w.length; i++) assert.ok(Math.abs(w[i] - r.weights[i]) < 1e-6, `weight ${i}`);
  } finally {
    t.dispose();
  }
});

const badTrainerCases = [
  ['unknown task', () => lab.createTrainer({ task: 'sorting' }), RangeError, 'task'],
  ['task not a string', () => lab.createTrainer({ task: 3 }), TypeError, 'task'],
  ['numHeads not dividing dModel', () => lab.createTrainer({ numHeads: 3, dModel: 16 }), RangeError, 'numHeads'],
  ['dModel zero', () => lab.createTrainer({ dModel: 0 }), RangeError, 'dModel'],
  ['learningRate NaN', () => lab.createTrainer({ learningRate: NaN }), RangeError, 'learningRate'],
  ['learningRate a string', () => lab.createTrainer({ learningRate: '0.01' }), TypeError, 'learningRate'],
  ['batchSize fractional', () => lab.createTrainer({ batchSize: 3.5 }), RangeError, 'batchSize'],
  ['optimizer unknown', () => lab.createTrainer({ optimizer: 'rmsprop' }), RangeError, 'optimizer'],
  ['seed negative', () => lab.createTrainer({ seed: -1 }), RangeError, 'seed'],
  ['loadTrainer with a string', () => lab.loadTrainer('model'), TypeError, 'bytes'],
  ['loadTrainer with garbage', () => lab.loadTrainer(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), RangeError, 'bytes'],
];

for (const [name, call, type, arg] of badTrainerCases) {
  test(`bad trainer input: ${name} -> ${type.name} naming ${arg}`, async () => {
    await assert.rejects(call, (e) => e instanceof type && e.message.includes(arg) || assert.fail(`${e?.constructor?.name}: ${e?.message}`));
    const t = await lab.createTrainer({ seed: 1 });
    assert.ok(Number.isFinite(t.step(1).loss));
    t.dispose();
  });
}

test('trainer method arguments and disposal', async () => {
  const t = await lab.createTrainer();
  assert.throws(() => t.step(0), (e) => e instanceof RangeError && /n/.test(e.message));
  assert.throws(() => t.step(2e6), RangeError);
  assert.throws(() => t.setHeadEnabled(5, false), (e) => e instanceof RangeError && /head/.test(e.message));
  assert.throws(() => t.setHeadEnabled(0, 'no'), (e) => e instanceof TypeError && /enabled/.test(e.message));
  assert.ok(Number.isFinite(t.step(1).loss));
  t.dispose();
  t.dispose();
  assert.throws(() => t.step(1), (e) => e instanceof TypeError && /disposed/.test(e.message));
  assert.throws(() => t.save(), /disposed/);
});

test('no heap growth and no live handles over many trainers and steps', async () => {
  const warm = await lab.createTrainer({ batchSize: 32 });
  warm.step(10); warm.evaluate(100); warm.headMetrics(10); warm.attentionWeights(); warm.save(); warm.exportModel();
  warm.dispose();
  const before = lab.info();
  for (let i = 0; i < 30; i++) {
    const t = await lab.createTrainer({ batchSize: 32, seed: i });
    t.step(20); t.evaluate(100); t.headMetrics(10); t.attentionWeights(); t.probe(); t.save(); t.exportModel();
    t.dispose();
  }
  const after = lab.info();
  assert.equal(after.trainingMemoryBytes, before.trainingMemoryBytes);
  assert.equal(after.trainingHeapInUseBytes, before.trainingHeapInUseBytes);
  assert.ok(after.trainingHeapInUseBytes > 0);
  assert.equal(lab.liveHandleCount(), 0);
});
