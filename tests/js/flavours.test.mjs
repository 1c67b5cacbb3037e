// The scalar fallback build (the same C++ without WebAssembly SIMD) against the
// SIMD build: equal results within float tolerance on shapes that exercise
// every tile remainder, masks, cross-attention and d_k != d_v; equal training;
// the load-time choice between them; and that each build is what it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHeadlab, simdSupported } from '../../web/lib/headlab.js';

const simd = await createHeadlab({ flavour: 'simd' });
const scalar = await createHeadlab({ flavour: 'scalar' });

// splitmix-style generator, so every run draws the same inputs.
function random(seed) {
  let s = BigInt(seed) + 0x9e3779b97f4a7c15n;
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    return Number((z ^ (z >> 31n)) >> 11n) / 2 ** 53 * 2 - 1;
  };
}

function assertClose(what, got, want, tol = 1e-5) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i] - want[i]) / (1 + Math.abs(want[i]));
    if (!(err <= worst)) { worst = err; at = i; }
  }
  assert.ok(worst <= tol, `${what}: [${at}] scalar ${got[at]} vs SIMD ${want[at]} (relative error ${worst})`);
}

const shapes = [
  // [tQ, tK (0 = self), dModel, numHeads, dK, dV, extras]
  [1, 0, 4, 2, 0, 0, {}],
  [7, 0, 12, 3, 0, 0, { causal: true }],
  [33, 0, 16, 4, 0, 0, {}],
  [65, 0, 24, 2, 0, 0, { bias: true }],
  [130, 0, 32, 4, 0, 0, { causal: true, bias: true }],
  [9, 70, 16, 2, 0, 0, { mask: true }],        // cross-attention with padding
  [17, 5, 20, 4, 3, 7, {}],                      // d_k != d_v, both given
  [300, 0, 64, 8, 0, 0, {}],                     // several key tiles and a remainder
];

for (const [tQ, tKIn, dModel, numHeads, dKIn, dVIn, x] of shapes) {
  const name = `${tQ}x${tKIn || tQ}, d ${dModel}, h ${numHeads}${dKIn ? `, dK ${dKIn} dV ${dVIn}` : ''}${x.causal ? ', causal' : ''}${x.mask ? ', key mask' : ''}`;
  test(`scalar build equals SIMD build: ${name}`, () => {
    const rnd = random(tQ * 131 + dModel);
    const fill = (n) => Float32Array.from({ length: n }, rnd);
    const tK = tKIn || tQ;
    const dK = dKIn || dModel / numHeads, dV = dVIn || dModel / numHeads;
    const opts = {
      query: fill(tQ * dModel), dModel, numHeads, causal: Boolean(x.causal),
      wQ: fill(dModel * numHeads * dK), wK: fill(dModel * numHeads * dK), wV: fill(dModel * numHeads * dV),
      wO: fill(numHeads * dV * dModel),
    };
    if (dKIn) Object.assign(opts, { dK, dV });
    if (tKIn) opts.key = fill(tK * dModel);
    if (x.bias) Object.assign(opts, { bQ: fill(numHeads * dK), bK: fill(numHeads * dK), bV: fill(numHeads * dV), bO: fill(dModel) });
    if (x.mask) opts.keyMask = Uint8Array.from({ length: tK }, (_, j) => (j % 5 === 3 ? 0 : 1));
    for (const returnWeights of [false, true]) {
      const a = scalar.multiHeadAttention({ ...opts, returnWeights, returnIntermediates: returnWeights });
      const b = simd.multiHeadAttention({ ...opts, returnWeights, returnIntermediates: returnWeights });
      assertClose(`output (${returnWeights ? 'materialised' : 'fused'})`, a.output, b.output);
      if (returnWeights) {
        assertClose('weights', a.weights, b.weights);
        assertClose('concat', a.intermediates.concat, b.intermediates.concat);
      }
    }
  });
}

test('scalar build equals SIMD build: the scaling experiment', () => {
  const a = scalar.scalingExperiment({ dK: 64, numQueries: 16, numKeys: 40, seed: 3 });
  const b = simd.scalingExperiment({ dK: 64, numQueries: 16, numKeys: 40, seed: 3 });
  assertClose('dot products', a.dotProducts, b.dotProducts);
  assertClose('scaled weights', a.weightsScaled, b.weightsScaled);
  assert.ok(Math.abs(a.varianceRaw - b.varianceRaw) < 1e-3 * b.varianceRaw);
});

test('scalar build trains like the SIMD build: same losses, both specialise', async () => {
  const a = await scalar.createTrainer({ seed: 11, batchSize: 32 });
  const b = await simd.createTrainer({ seed: 11, batchSize: 32 });
  try {
    for (let i = 0; i < 10; i++) {
      const ra = a.step(40), rb = b.step(40);
      assert.ok(Math.abs(ra.loss - rb.loss) <= 1e-3 * (1 + rb.loss), `step ${ra.step}: loss ${ra.loss} vs ${rb.loss}`);
    }
    assertClose('attention maps', a.attentionWeights(), b.attentionWeights(), 1e-3);
    assert.ok(a.evaluate(500).accuracy >= 0.95, `scalar accuracy ${a.evaluate(500).accuracy}`);
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('each build reports what it is, and only the SIMD build holds SIMD instructions', () => {
  assert.equal(simd.info().flavour, 'simd');
  assert.equal(simd.info().simd, true);
  assert.equal(scalar.info().flavour, 'scalar');
  assert.equal(scalar.info().simd, false);
  const simdOps = (file) => {
    const text = execFileSync('wasm-objdump', ['-d', new URL(`../../web/lib/gen/${file}`, import.meta.url).pathname],
      { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
    return (text.match(/\b(?:f32x4|i32x4|v128)\.\w+/g) ?? []).length;
  };
  for (const m of ['headlab_core', 'headlab_train']) {
    assert.ok(simdOps(`${m}.wasm`) > 100, `${m}.wasm should use SIMD`);
    assert.equal(simdOps(`${m}_scalar.wasm`), 0, `${m}_scalar.wasm must run on engines without SIMD`);
  }
});

test('createHeadlab picks the scalar build where WebAssembly SIMD is missing', () => {
  assert.equal(simdSupported(), true, 'Node 20 runs WebAssembly SIMD');
  // A fresh process whose engine claims not to validate SIMD modules.
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  const script = `
    const validate = WebAssembly.validate;
    WebAssembly.validate = (bytes) => (new Uint8Array(bytes).includes(253) ? false : validate(bytes));
    const { createHeadlab, simdSupported } = await import(${JSON.stringify(lib)});
    const lab = await createHeadlab();
    let refused = '';
    await createHeadlab({ flavour: 'simd' }).catch((e) => { refused = e.message; });
    console.log(JSON.stringify({ supported: simdSupported(), flavour: lab.info().flavour, refused,
      out: Array.from(lab.parameterCount({ dModel: 512, numHeads: 8 }).total.toString()) }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.equal(out.supported, false);
  assert.equal(out.flavour, 'scalar');
  assert.match(out.refused, /does not run WebAssembly SIMD/);
  assert.equal(out.out.join(''), String(4 * 512 * 512));
});

test('createHeadlab rejects an unknown flavour, naming it', async () => {
  await assert.rejects(createHeadlab({ flavour: 'avx' }), (e) => e instanceof RangeError && /flavour/.test(e.message));
  await assert.rejects(createHeadlab(null), (e) => e instanceof TypeError && /options/.test(e.message));
});
