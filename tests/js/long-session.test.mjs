// A course page stays open for hours: 100,000 forward calls and 10,000 training
// steps in one instance, with the heap sampled, must not grow after warm-up or
// leave Embind handles alive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = await createHeadlab();

function sample() {
  const i = lab.info();
  return {
    memory: i.memoryBytes, inUse: i.heapInUseBytes, handles: lab.liveHandleCount(),
    trainingMemory: i.trainingMemoryBytes, trainingInUse: i.trainingHeapInUseBytes,
  };
}

test('100,000 forward calls: heap flat after warm-up, no handles', () => {
  const dModel = 8, numHeads = 2, T = 5;
  const fill = (n, k) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * k) * 0.5);
  const args = { query: fill(T * dModel, 1.3), dModel, numHeads, wQ: fill(64, 0.7), wK: fill(64, 1.1), wV: fill(64, 0.3),
    wO: fill(64, 0.9), returnWeights: true };
  const shapes = [args, { ...args, returnIntermediates: true }, { ...args, key: fill(3 * dModel, 2.1), causal: false }];
  for (let i = 0; i < 300; i++) lab.multiHeadAttention(shapes[i % 3]);
  const base = sample();
  const samples = [];
  const reference = lab.multiHeadAttention(args).output;
  for (let i = 0; i < 100_000; i++) {
    lab.multiHeadAttention(shapes[i % 3]);
    if (i % 10_000 === 0) samples.push(sample());
  }
  for (const s of samples) assert.deepEqual(s, base, `heap sample ${JSON.stringify(s)} vs ${JSON.stringify(base)}`);
  assert.deepEqual(sample(), base);
  assert.deepEqual(lab.multiHeadAttention(args).output, reference);
});

test('10,000 training steps with evaluation and snapshots: heap flat, no handles', async () => {
  const t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, seed: 5, batchSize: 32 });
  try {
    const snapshot = () => { t.evaluate(200); t.headMetrics(64); t.attentionWeights(); t.exportModel(); t.save(); };
    t.step(100);
    snapshot();
    const base = sample();
    for (let i = 0; i < 100; i++) {
      t.step(100);
      snapshot();
      if (i % 10 === 0) assert.deepEqual(sample(), base, `after ${(i + 2) * 100} steps`);
    }
    assert.equal(t.config().step, 10_100);
    assert.deepEqual(sample(), base);
    assert.ok(t.evaluate(1000).accuracy >= 0.99);
  } finally {
    t.dispose();
  }
});
