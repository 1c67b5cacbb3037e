// createLayer: weights checked and copied into the wasm heap once; forward()
// must give exactly what multiHeadAttention gives with the same weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { courseInputs, expected } from '../fixtures/course.mjs';

const lab = await createHeadlab();

function filler(seed) {
  let x = seed;
  return (n) => Float32Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648 - 0.5;
  });
}

const cases = [
  ['self-attention', { tQ: 6, dModel: 8, numHeads: 2 }],
  ['causal with biases', { tQ: 9, dModel: 12, numHeads: 3, causal: true, bias: true }],
  ['cross-attention with a key mask', { tQ: 4, tK: 11, dModel: 16, numHeads: 4, mask: true }],
  ['dK != dV', { tQ: 5, tK: 7, dModel: 10, numHeads: 2, dK: 3, dV: 6 }],
];

for (const [name, c] of cases) {
  test(`layer.forward equals multiHeadAttention: ${name}`, () => {
    const fill = filler(c.tQ * 7 + c.dModel);
    const dK = c.dK ?? c.dModel / c.numHeads, dV = c.dV ?? c.dModel / c.numHeads;
    const w = {
      dModel: c.dModel, numHeads: c.numHeads, wQ: fill(c.dModel * c.numHeads * dK), wK: fill(c.dModel * c.numHeads * dK),
      wV: fill(c.dModel * c.numHeads * dV), wO: fill(c.numHeads * dV * c.dModel),
    };
    if (c.dK) Object.assign(w, { dK, dV });
    if (c.bias) Object.assign(w, { bQ: fill(c.numHeads * dK), bK: fill(c.numHeads * dK), bV: fill(c.numHeads * dV), bO: fill(c.dModel) });
    const inputs = { query: fill(c.tQ * c.dModel), causal: Boolean(c.causal) };
    if (c.tK) { inputs.key = fill(c.tK * c.dModel); inputs.value = fill(c.tK * c.dModel); }
    if (c.mask) inputs.keyMask = Uint8Array.from({ length: c.tK }, (_, j) => (j % 3 === 1 ? 0 : 1));
    const layer = lab.createLayer(w);
    try {
      assert.deepEqual(layer.shape, { dModel: c.dModel, numHeads: c.numHeads, dK, dV });
      for (const flags of [{}, { returnWeights: true }, { returnWeights: true, returnIntermediates: true }]) {
        const got = layer.forward({ ...inputs, ...flags });
        const want = lab.multiHeadAttention({ ...w, ...inputs, ...flags });
        assert.deepEqual(got, want);
      }
    } finally {
      layer.dispose();
    }
  });
}

test('the layer keeps its own copy of the weights and gives the course numbers', () => {
  const { query, ...weights } = courseInputs();
  const layer = lab.createLayer(weights);
  weights.wQ.fill(7);  // the caller's arrays change; the layer's copy must not
  weights.wK.fill(7);
  const r = layer.forward({ query, returnWeights: true });
  expected.output.forEach((x, i) => assert.ok(Math.abs(r.output[8 + i] - x) < 5e-5, `output ${r.output}`));
  expected.weightsHead1.forEach((x, i) => assert.ok(Math.abs(r.weights[6 + i] - x) < 5e-5, `weights ${r.weights}`));
  layer.dispose();
});

test('bad layer input names the argument; a disposed layer says so', () => {
  const I = new Float32Array(16);
  assert.throws(() => lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: new Float32Array(12) }),
    (e) => e instanceof RangeError && /^createLayer: wO must have length 16/.test(e.message));
  assert.throws(() => lab.createLayer({ dModel: 4, numHeads: 3, wQ: I, wK: I, wV: I, wO: I }),
    (e) => e instanceof RangeError && /numHeads/.test(e.message));
  assert.throws(() => lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, bO: [0, 0, 0, 0] }),
    (e) => e instanceof TypeError && /bO/.test(e.message));
  const layer = lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I });
  assert.throws(() => layer.forward({ query: new Float32Array(6) }), (e) => e instanceof RangeError && /^AttentionLayer.forward: query/.test(e.message));
  assert.throws(() => layer.forward({ query: new Float32Array(8), keyMask: new Uint8Array(3) }), (e) => e instanceof RangeError && /keyMask/.test(e.message));
  assert.equal(layer.forward({ query: new Float32Array(8) }).output.length, 8);
  layer.dispose();
  layer.dispose();
  assert.throws(() => layer.forward({ query: new Float32Array(8) }), (e) => e instanceof TypeError && /disposed/.test(e.message));
});

test('weights beyond the heap cap are a RangeError, and the module keeps working', () => {
  const big = 8192;  // 4 · 8192² floats = 1 GiB of weights
  const w = new Float32Array(1);
  assert.throws(() => lab.createLayer({ dModel: big, numHeads: 8, wQ: w, wK: w, wV: w, wO: w }), (e) => e instanceof RangeError && /wQ/.test(e.message));
  const d = 4096;  // 256 MiB: four arrays of 64 MiB fit the heap once
  const W = new Float32Array(d * d);
  const layers = [];
  let error = null;
  try {
    for (let i = 0; i < 5; i++) layers.push(lab.createLayer({ dModel: d, numHeads: 8, wQ: W, wK: W, wV: W, wO: W }));
  } catch (e) {
    error = e;
  } finally {
    for (const l of layers) l.dispose();
  }
  assert.ok(error instanceof RangeError && /do not fit/.test(error.message), `got ${error}`);
  assert.ok(layers.length >= 1 && layers.length < 5, `${layers.length} layers of 256 MiB fitted under the 1 GiB cap`);
  const I = new Float32Array([1, 0, 0, 1]);
  const r = lab.multiHeadAttention({ query: new Float32Array([1, 2]), dModel: 2, numHeads: 1, wQ: I, wK: I, wV: I, wO: I });
  assert.deepEqual(Array.from(r.output), [1, 2]);
});

test('creating and disposing layers and calling forward leaves the heap as it was', () => {
  const fill = filler(3);
  const w = { dModel: 32, numHeads: 4, wQ: fill(1024), wK: fill(1024), wV: fill(1024), wO: fill(1024) };
  const query = fill(10 * 32);
  const warm = lab.createLayer(w);
  warm.forward({ query, returnWeights: true });
  warm.dispose();
  const before = lab.info().heapInUseBytes;
  for (let i = 0; i < 200; i++) {
    const layer = lab.createLayer(w);
    for (let j = 0; j < 5; j++) layer.forward({ query, returnWeights: j % 2 === 0 });
    layer.dispose();
  }
  assert.equal(lab.info().heapInUseBytes, before);
  assert.equal(lab.liveHandleCount(), 0);
});

test('headMask: a head switched off gives what W^O with its rows zeroed gives, in multiHeadAttention and layer.forward', () => {
  const fill = filler(99);
  const dModel = 12, numHeads = 3, dK = 3, dV = 5, tQ = 6;
  const w = { dModel, numHeads, dK, dV, wQ: fill(dModel * numHeads * dK), wK: fill(dModel * numHeads * dK),
    wV: fill(dModel * numHeads * dV), wO: fill(numHeads * dV * dModel), bO: fill(dModel) };
  const query = fill(tQ * dModel);
  const layer = lab.createLayer(w);
  try {
    for (const headMask of [[1, 1, 1], [0, 1, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0]].map((m) => Uint8Array.from(m))) {
      const wO = w.wO.slice();
      headMask.forEach((on, i) => { if (!on) wO.fill(0, i * dV * dModel, (i + 1) * dV * dModel); });
      for (const flags of [{}, { returnWeights: true }]) {
        const want = lab.multiHeadAttention({ ...w, wO, query, ...flags });
        const got = lab.multiHeadAttention({ ...w, query, headMask, ...flags });
        const viaLayer = layer.forward({ query, headMask, ...flags });
        for (const [what, r] of [['multiHeadAttention', got], ['layer.forward', viaLayer]]) {
          r.output.forEach((x, i) => assert.ok(Math.abs(x - want.output[i]) <= 1e-6 + 1e-5 * Math.abs(want.output[i]),
            `${what} with headMask [${headMask}] ${JSON.stringify(flags)}: output[${i}] ${x} vs ${want.output[i]}`));
        }
        if (flags.returnWeights) assert.deepEqual(got.weights, lab.multiHeadAttention({ ...w, query, returnWeights: true }).weights, 'weights as computed');
      }
    }
    // The caller's mask is not kept or changed.
    const mask = Uint8Array.from([0, 1, 1]);
    lab.multiHeadAttention({ ...w, query, headMask: mask });
    assert.deepEqual([...mask], [0, 1, 1]);
  } finally {
    layer.dispose();
  }
});
