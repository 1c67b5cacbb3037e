// The JavaScript API under Node: the course's worked example, bad inputs that
// must throw a typed error naming the argument (and leave the module working),
// masks, intermediates, parameter counts, and no leaks over many calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import { courseInputs, expected } from '../fixtures/course.mjs';

const lab = await createHeadlab();
const F = (a) => new Float32Array(a);

/** The course's worked example: ball, full, it; h = 2, d_k = d_v = 2, W^O = I (tests/fixtures/course.json). */
const workedExample = courseInputs;

function assertClose4(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= 5e-5, `${what}[${i}]: got ${got[i]}, want ${want[i]} (4 decimals)`);
  }
}

/** Runs the worked example and checks the course's numbers for the query "it". */
function checkWorkedExample() {
  const r = lab.multiHeadAttention({ ...workedExample(), returnWeights: true });
  const T = 3, it = 2;
  assertClose4(r.weights.subarray((0 * T + it) * T, (0 * T + it) * T + T), expected.weightsHead1, 'head 1 weights');
  assertClose4(r.weights.subarray((1 * T + it) * T, (1 * T + it) * T + T), expected.weightsHead2, 'head 2 weights');
  assertClose4(r.output.subarray(it * 4, it * 4 + 4), expected.output, 'output');
}

test('the course worked example comes out to 4 decimals', () => {
  checkWorkedExample();
  const r = lab.multiHeadAttention({ ...workedExample(), returnWeights: true, returnIntermediates: true });
  const im = r.intermediates;
  assertClose4(im.headOutputs.subarray(2 * 2, 2 * 2 + 2), expected.headOutput1, 'head 1 output for it');
  assertClose4(im.headOutputs.subarray(3 * 2 + 2 * 2, 3 * 2 + 2 * 2 + 2), expected.headOutput2, 'head 2 output for it');
  assertClose4(im.concat.subarray(8, 12), expected.output, 'concat for it');
  assertClose4(im.scores.subarray(6, 9), expected.rawScores1, 'head 1 raw scores for it');
  assertClose4(im.scaledScores.subarray(6, 9), expected.scaledScores1, 'head 1 scaled scores for it');
  assertClose4(im.q.subarray(4, 6), expected.q1, 'q1 for it');
  assertClose4(im.k.subarray(0, 6), expected.k1, 'K1');
  assertClose4(im.v.subarray(0, 6), expected.v1, 'V1');
  assert.deepEqual(
    Object.fromEntries(Object.entries(im).map(([k, v]) => [k, v.length])),
    { q: 12, k: 12, v: 12, scores: 18, scaledScores: 18, headOutputs: 12, concat: 12 },
  );
  // Every head attends to every token.
  for (const w of r.weights) assert.ok(w > 0);
});

test('outputs are copies owned by JS, not views of the wasm heap', () => {
  const a = lab.multiHeadAttention(workedExample());
  const snapshot = Float32Array.from(a.output);
  lab.multiHeadAttention({ ...workedExample(), query: F([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) });
  assert.deepEqual(a.output, snapshot);
  assert.notEqual(a.output.buffer, new Float32Array(0).buffer);
  assert.equal(a.output.byteOffset, 0);
  assert.equal(a.output.buffer.byteLength, 12 * 4);
});

test('cross-attention, causal and key-padding masks, fully masked rows', () => {
  const dModel = 4, numHeads = 2;
  const ex = workedExample();
  const key = F([1, 0, 0, 1, 0, 1, 0, 1, 2, 2, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1]);  // Tk = 5
  const cross = lab.multiHeadAttention({ ...ex, key, returnWeights: true });
  assert.equal(cross.output.length, 3 * dModel);
  assert.equal(cross.weights.length, numHeads * 3 * 5);

  const causal = lab.multiHeadAttention({ ...ex, causal: true, returnWeights: true });
  for (let h = 0; h < numHeads; h++) {
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const w = causal.weights[(h * 3 + i) * 3 + j];
        if (j > i) assert.equal(w, 0, `head ${h} query ${i} must not see key ${j}`);
        else assert.ok(w > 0);
      }
    }
  }
  // Query "ball" under a causal mask sees only itself: weight 1.
  assert.ok(Math.abs(causal.weights[0] - 1) < 1e-6);

  const masked = lab.multiHeadAttention({ ...ex, keyMask: new Uint8Array([1, 0, 1]), returnWeights: true });
  for (let r = 0; r < numHeads * 3; r++) assert.equal(masked.weights[r * 3 + 1], 0);

  const none = lab.multiHeadAttention({ ...ex, keyMask: new Uint8Array([0, 0, 0]), returnWeights: true, returnIntermediates: true });
  for (const w of none.weights) assert.equal(w, 0);
  for (const x of none.intermediates.headOutputs) assert.equal(x, 0);
  for (const x of none.output) assert.ok(Number.isFinite(x));
});

test('d_k != d_v and explicit dK/dV when h does not divide d_model', () => {
  const dModel = 4, numHeads = 3, dK = 2, dV = 1;
  const r = lab.multiHeadAttention({
    query: F([3, 0, 0, 1, 0, 3, 0, 1, 1, 1, 0, 1]), dModel, numHeads, dK, dV,
    wQ: new Float32Array(dModel * numHeads * dK).fill(0.1),
    wK: new Float32Array(dModel * numHeads * dK).fill(0.2),
    wV: new Float32Array(dModel * numHeads * dV).fill(0.3),
    wO: new Float32Array(numHeads * dV * dModel).fill(0.4),
    returnIntermediates: true,
  });
  assert.equal(r.dK, 2);
  assert.equal(r.dV, 1);
  assert.equal(r.intermediates.concat.length, 3 * numHeads * dV);
  // All heads identical here: each head output = weighted mean of V rows, then W^O sums 3 heads * 0.4.
  for (let t = 0; t < 3; t++) {
    const head = r.intermediates.headOutputs[t];
    assert.ok(Math.abs(r.output[t * dModel] - 3 * 0.4 * head) < 1e-5);
  }
});

test('parameter count: 4·d_model² whatever h, and an error for h = 3 at d_model = 512', () => {
  for (const numHeads of [1, 2, 4, 8, 16]) {
    const c = lab.parameterCount({ dModel: 512, numHeads });
    assert.deepEqual(c, { wQ: 262144, wK: 262144, wV: 262144, wO: 262144, bias: 0, weights: 1048576, total: 1048576 });
  }
  assert.throws(() => lab.parameterCount({ dModel: 512, numHeads: 3 }), (e) => e instanceof RangeError && /numHeads/.test(e.message));
  const c = lab.parameterCount({ dModel: 512, numHeads: 3, dK: 64, dV: 64, bias: true });
  assert.equal(c.wQ, 512 * 192);
  assert.equal(c.bias, 192 * 3 + 512);
  assert.equal(c.total, c.weights + c.bias);
});

test('scalingExperiment: shapes, rows that sum to 1, saturation without scaling', () => {
  const s = lab.scalingExperiment({ dK: 256, numQueries: 50, numKeys: 20, seed: 3 });
  for (const name of ['dotProducts', 'weightsScaled', 'weightsUnscaled']) assert.equal(s[name].length, 1000, name);
  for (let r = 0; r < 50; r++) {
    let a = 0, b = 0;
    for (let c = 0; c < 20; c++) { a += s.weightsScaled[r * 20 + c]; b += s.weightsUnscaled[r * 20 + c]; }
    assert.ok(Math.abs(a - 1) < 1e-5 && Math.abs(b - 1) < 1e-5, `row ${r} sums ${a}, ${b}`);
  }
  assert.ok(s.varianceRaw > 150 && s.varianceRaw < 400, `variance ${s.varianceRaw}`);
  assert.ok(Math.abs(s.varianceScaled - s.varianceRaw / 256) < 1e-3);
  assert.ok(s.maxWeightUnscaled > s.maxWeightScaled);
  assert.deepEqual(lab.scalingExperiment({ dK: 256, numQueries: 50, numKeys: 20, seed: 3 }).dotProducts, s.dotProducts);
  // The statistics are those of the arrays returned, recomputed here in double:
  // population variance of the dot products (raw and / sqrt(dK) = / 16), and the
  // mean over the 50 query rows of each softmax's entropy (nats) and largest weight.
  const variance = (x, scale) => {
    let mean = 0, sq = 0;
    for (const v of x) mean += v * scale;
    mean /= x.length;
    for (const v of x) sq += (v * scale - mean) ** 2;
    return sq / x.length;
  };
  const rowStats = (w) => {
    let entropy = 0, max = 0;
    for (let r = 0; r < 50; r++) {
      const row = w.subarray(r * 20, r * 20 + 20);
      for (const v of row) if (v > 0) entropy -= v * Math.log(v);
      max += Math.max(...row);
    }
    return { entropy: entropy / 50, max: max / 50 };
  };
  const near = (got, want, what) => assert.ok(Math.abs(got - want) <= 1e-9 * Math.abs(want), `${what}: got ${got}, want ${want}`);
  near(s.varianceRaw, variance(s.dotProducts, 1), 'varianceRaw');
  near(s.varianceScaled, variance(s.dotProducts, 1 / 16), 'varianceScaled');
  const scaled = rowStats(s.weightsScaled), unscaled = rowStats(s.weightsUnscaled);
  near(s.entropyScaled, scaled.entropy, 'entropyScaled');
  near(s.entropyUnscaled, unscaled.entropy, 'entropyUnscaled');
  near(s.maxWeightScaled, scaled.max, 'maxWeightScaled');
  near(s.maxWeightUnscaled, unscaled.max, 'maxWeightUnscaled');
});

test('info() reports the SIMD build and the package version', () => {
  const info = lab.info();
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(info.simd, true);
  assert.equal(info.version, pkg.version);
  assert.ok(info.memoryBytes >= 16 * 2 ** 20);
});

// Each case: a call that must throw `type` with a message naming `arg`.
const bad = () => workedExample();
const badCases = [
  ['options is null', () => lab.multiHeadAttention(null), TypeError, 'options'],
  ['dModel missing', () => lab.multiHeadAttention({ ...bad(), dModel: undefined }), TypeError, 'dModel'],
  ['dModel zero', () => lab.multiHeadAttention({ ...bad(), dModel: 0 }), RangeError, 'dModel'],
  ['dModel fractional', () => lab.multiHeadAttention({ ...bad(), dModel: 2.5 }), RangeError, 'dModel'],
  ['dModel as a string', () => lab.multiHeadAttention({ ...bad(), dModel: '4' }), TypeError, 'dModel'],
  ['numHeads negative', () => lab.multiHeadAttention({ ...bad(), numHeads: -2 }), RangeError, 'numHeads'],
  ['numHeads does not divide dModel', () => lab.multiHeadAttention({ ...bad(), numHeads: 3 }), RangeError, 'numHeads'],
  ['numHeads NaN', () => lab.multiHeadAttention({ ...bad(), numHeads: NaN }), RangeError, 'numHeads'],
  ['dK fractional', () => lab.multiHeadAttention({ ...bad(), dK: 1.5 }), RangeError, 'dK'],
  ['dV huge', () => lab.multiHeadAttention({ ...bad(), dV: 2 ** 40 }), RangeError, 'dV'],
  ['query a plain Array', () => lab.multiHeadAttention({ ...bad(), query: [3, 0, 0, 1] }), TypeError, 'query'],
  ['query missing', () => lab.multiHeadAttention({ ...bad(), query: undefined }), TypeError, 'query'],
  ['query length not a multiple of dModel', () => lab.multiHeadAttention({ ...bad(), query: F([1, 2, 3, 4, 5]) }), RangeError, 'query'],
  ['query empty', () => lab.multiHeadAttention({ ...bad(), query: F([]) }), RangeError, 'query'],
  ['query contains Infinity', () => lab.multiHeadAttention({ ...bad(), query: F([3, 0, 0, 1, 0, 3, 0, 1, 1, Infinity, 0, 1]) }), RangeError, 'query'],
  ['key rows of the wrong width', () => lab.multiHeadAttention({ ...bad(), key: F([1, 2, 3]) }), RangeError, 'key'],
  ['value with a different row count than key', () => lab.multiHeadAttention({ ...bad(), key: F(8), value: F(12) }), RangeError, 'value'],
  ['wQ of the wrong length', () => lab.multiHeadAttention({ ...bad(), wQ: F(12) }), RangeError, 'wQ'],
  ['wO a Float64Array', () => lab.multiHeadAttention({ ...bad(), wO: new Float64Array(16) }), TypeError, 'wO'],
  ['wK contains NaN', () => lab.multiHeadAttention({ ...bad(), wK: F([NaN, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1]) }), RangeError, 'wK'],
  ['wV missing', () => lab.multiHeadAttention({ ...bad(), wV: undefined }), TypeError, 'wV'],
  ['bQ of the wrong length', () => lab.multiHeadAttention({ ...bad(), bQ: F(3) }), RangeError, 'bQ'],
  ['bO not a typed array', () => lab.multiHeadAttention({ ...bad(), bO: 'zeros' }), TypeError, 'bO'],
  ['causal with Tq != Tk', () => lab.multiHeadAttention({ ...bad(), key: F(8), causal: true }), RangeError, 'causal'],
  ['causal not a boolean', () => lab.multiHeadAttention({ ...bad(), causal: 'yes' }), TypeError, 'causal'],
  ['keyMask of the wrong length', () => lab.multiHeadAttention({ ...bad(), keyMask: new Uint8Array(2) }), RangeError, 'keyMask'],
  ['keyMask a plain Array', () => lab.multiHeadAttention({ ...bad(), keyMask: [1, 1, 1] }), TypeError, 'keyMask'],
  ['returnWeights a number', () => lab.multiHeadAttention({ ...bad(), returnWeights: 1 }), TypeError, 'returnWeights'],
  ['weights beyond the memory cap', () => lab.multiHeadAttention({ ...bad(), query: F(20000 * 4), returnWeights: true }), RangeError, 'too large'],
  ['request beyond any buffer size', () => lab.multiHeadAttention({ ...bad(), query: F(200000 * 4) }), RangeError, 'too large'],
  ['parameterCount with a string', () => lab.parameterCount({ dModel: 512, numHeads: '8' }), TypeError, 'numHeads'],
  ['parameterCount without options', () => lab.parameterCount(), TypeError, 'options'],
  ['scalingExperiment dK zero', () => lab.scalingExperiment({ dK: 0 }), RangeError, 'dK'],
  ['scalingExperiment seed negative', () => lab.scalingExperiment({ dK: 8, seed: -1 }), RangeError, 'seed'],
  ['scalingExperiment too large', () => lab.scalingExperiment({ dK: 8, numQueries: 1e5, numKeys: 1e5 }), RangeError, 'too large'],
];

for (const [name, call, type, arg] of badCases) {
  test(`bad input: ${name} -> ${type.name} naming ${arg}, then the module still works`, () => {
    assert.throws(call, (e) => {
      assert.ok(e instanceof type, `expected ${type.name}, got ${e?.constructor?.name}: ${e?.message}`);
      assert.ok(e.message.includes(arg), `message should name "${arg}": ${e.message}`);
      return true;
    });
    checkWorkedExample();
  });
}

test('at least 15 distinct bad-input cases are covered', () => {
  assert.ok(badCases.length >= 15, `${badCases.length} cases`);
});

test('no heap growth and no live Embind handles over many calls', () => {
  const dModel = 32, numHeads = 4, T = 37;
  const rnd = (n, seed) => {
    const a = new Float32Array(n);
    let s = seed;
    for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; a[i] = (s / 2 ** 32 - 0.5) * 0.5; }
    return a;
  };
  const args = {
    query: rnd(T * dModel, 1), dModel, numHeads, causal: true,
    wQ: rnd(dModel * dModel, 2), wK: rnd(dModel * dModel, 3), wV: rnd(dModel * dModel, 4), wO: rnd(dModel * dModel, 5),
    bQ: rnd(dModel, 6), bO: rnd(dModel, 7), keyMask: new Uint8Array(T).fill(1),
    returnWeights: true, returnIntermediates: true,
  };
  for (let i = 0; i < 50; i++) lab.multiHeadAttention(args);
  const before = lab.info();
  const first = lab.multiHeadAttention(args).output;
  for (let i = 0; i < 2000; i++) {
    lab.multiHeadAttention(args);
    if (i % 100 === 0) { try { lab.multiHeadAttention({ ...args, wQ: F(3) }); } catch { /* expected */ } }
  }
  const after = lab.info();
  assert.equal(after.memoryBytes, before.memoryBytes, 'wasm memory grew');
  assert.equal(after.heapInUseBytes, before.heapInUseBytes, 'malloc in-use bytes grew');
  assert.equal(lab.liveHandleCount(), 0, 'Embind handles left alive');
  assert.deepEqual(lab.multiHeadAttention(args).output, first, 'same input, same output');
});

test('without weights, T = 20,000 fits: the fused path keeps no T x T buffer', () => {
  const T = 20000, ex = workedExample();
  const query = new Float32Array(T * 4);
  for (let t = 0; t < T; t++) query.set(ex.query.subarray((t % 3) * 4, (t % 3) * 4 + 4), t * 4);
  const before = lab.info().memoryBytes;
  const r = lab.multiHeadAttention({ ...ex, query });
  assert.equal(r.output.length, T * 4);
  for (const x of r.output) assert.ok(Number.isFinite(x));
  assert.ok(lab.info().memoryBytes - before < 64 * 2 ** 20, 'heap grew by more than 64 MiB');
  // The values: the sequence is ball, full, it repeated, so a query of token a puts
  // weight e^(s_ab) / Z on each of the n_b keys of token b, with
  // Z = sum_b n_b e^(s_ab), and every row of one token has the same output:
  // sum_b n_b e^(s_ab) v_b / Z per head, then W^O. Computed here in double.
  const counts = [0, 1, 2].map((b) => Math.ceil((T - b) / 3));  // 6667, 6667, 6666
  const project = (x, w) => [0, 1, 2, 3].map((c) => [0, 1, 2, 3].reduce((s, m) => s + x[m] * w[m * 4 + c], 0));
  const tokens = [0, 1, 2].map((a) => ex.query.subarray(a * 4, a * 4 + 4));
  const q = tokens.map((x) => project(x, ex.wQ)), k = tokens.map((x) => project(x, ex.wK));
  const v = tokens.map((x) => project(x, ex.wV));
  const want = [0, 1, 2].map((a) => {
    const concat = [0, 0, 0, 0];
    for (let h = 0; h < 2; h++) {
      const e = [0, 1, 2].map((b) => Math.exp((q[a][2 * h] * k[b][2 * h] + q[a][2 * h + 1] * k[b][2 * h + 1]) / Math.SQRT2));
      const z = [0, 1, 2].reduce((s, b) => s + counts[b] * e[b], 0);
      for (let c = 0; c < 2; c++) concat[2 * h + c] = [0, 1, 2].reduce((s, b) => s + counts[b] * e[b] * v[b][2 * h + c], 0) / z;
    }
    return project(concat, ex.wO);
  });
  let worst = 0;
  for (let t = 0; t < T; t++)
    for (let c = 0; c < 4; c++) worst = Math.max(worst, Math.abs(r.output[t * 4 + c] - want[t % 3][c]));
  // float sums over 20,000 keys: 1.2e-7 at T = 3, 1.3e-5 at 3,000, 5.5e-5 here (measured).
  assert.ok(worst <= 2e-4, `largest difference from the double answer ${worst}`);
  checkWorkedExample();
});

test('createHeadlab returns the same cached instance', async () => {
  assert.equal(await createHeadlab(), lab);
});

test('a forgotten await: a Headlab method called on the Promise says to await createHeadlab()', async () => {
  const pending = createHeadlab();
  assert.throws(() => pending.multiHeadAttention({}), (e) => e instanceof TypeError &&
    /createHeadlab\(\) returns a Promise, not the instance: write `const lab = await createHeadlab\(\)`, then lab\.multiHeadAttention/.test(e.message), 'the message says what to write');
  assert.throws(() => pending.createLayer, /await createHeadlab\(\)/);
  // The Promise itself is untouched: awaiting it gives the instance.
  const lab = await pending;
  assert.equal(typeof lab.multiHeadAttention, 'function');
});

test('createHeadlab: an unknown option is a TypeError naming it and the closest one', async () => {
  await assert.rejects(createHeadlab({ flavor: 'simd' }), (e) => e instanceof TypeError && /unknown option "flavor"; did you mean flavour\?/.test(e.message));
});

test('createHeadlab: preload loads the training module beside the forward pass; a bad value is a TypeError naming it', async () => {
  for (const bad of ['train', ['train', 'gpt2'], [null]]) {
    await assert.rejects(createHeadlab({ preload: bad }), (e) => e instanceof TypeError && /^createHeadlab: preload must be an array of 'train' and 'pretrained'/.test(e.message),
      `preload ${JSON.stringify(bad)}`);
  }
  // A flavour not loaded yet in this process: its training module is on its way before any training call.
  const scalar = await createHeadlab({ flavour: 'scalar', preload: ['train'] });
  assert.ok(scalar._trainPending, 'the training module started loading with the instance');
  const tasks = await scalar.tasks();
  assert.deepEqual(tasks.map((t) => t.name), (await lab.tasks()).map((t) => t.name), 'the preloaded module is the one tasks() uses');
  // Given to a later call: the cached instance, which then starts the module.
  const fresh = await createHeadlab({ flavour: 'scalar', preload: ['pretrained'] });
  assert.equal(fresh, scalar);
  assert.ok(scalar._pretrainedPending, 'the pretrained-model module started loading');
  await scalar._pretrainedPending;
});
