// Golden test: multiHeadAttention (SIMD and scalar builds) against PyTorch references in tests/golden/fixtures/.
// Regenerate the fixtures with `/usr/bin/python3 tests/golden/make_golden.py`.
// Run with `node --test tests/js/`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';

const fixtureDir = new URL('../golden/fixtures/', import.meta.url);
const MIN_CASES = 20;
const ATOL = 1e-5;
const RTOL = 1e-4;

function loadCases() {
  let files;
  try {
    files = readdirSync(fixtureDir).filter((f) => f.endsWith('.json')).sort();
  } catch {
    return [];
  }
  const cases = [];
  for (const f of files) {
    const doc = JSON.parse(readFileSync(new URL(f, fixtureDir), 'utf8'));
    for (const c of Array.isArray(doc) ? doc : doc.cases ?? [doc]) cases.push(c);
  }
  return cases;
}

const cases = loadCases();

test(`golden fixtures hold at least ${MIN_CASES} cases`, () => {
  assert.ok(cases.length >= MIN_CASES,
    `expected at least ${MIN_CASES} cases in tests/golden/fixtures/*.json, found ${cases.length}; ` +
    'run /usr/bin/python3 tests/golden/make_golden.py');
  assert.equal(new Set(cases.map((c) => c.name)).size, cases.length, 'case names must be unique');
});

/** Checks |got - want| <= ATOL + RTOL*|want| everywhere; reports the worst element. */
function assertClose(name, what, got, want) {
  assert.equal(got.length, want.length, `${name}: ${what} has length ${got.length}, want ${want.length}`);
  let worst = -1, worstExcess = 0;
  for (let i = 0; i < want.length; i++) {
    const excess = Math.abs(got[i] - want[i]) - (ATOL + RTOL * Math.abs(want[i]));
    if (!(excess <= 0) && (worst < 0 || !(excess <= worstExcess))) {  // NaN counts as a failure
      worst = i;
      worstExcess = excess;
      if (Number.isNaN(excess)) break;
    }
  }
  if (worst >= 0) {
    assert.fail(`${name}: ${what}[${worst}] got ${got[worst]}, want ${want[worst]} ` +
      `(|diff| ${Math.abs(got[worst] - want[worst])} > ${ATOL} + ${RTOL}*|want|)`);
  }
}

const f32 = (a) => Float32Array.from(a);

// Both builds (SIMD and the scalar fallback), and both paths: with weights asked
// for (scores materialised) and output only (fused online softmax).
for (const flavour of ['simd', 'scalar']) for (const c of cases) {
  test(`${c.name} (${flavour})`, async () => {
    const lab = await createHeadlab({ flavour });
    const opts = {
      query: f32(c.query),
      dModel: c.dModel,
      numHeads: c.numHeads,
      wQ: f32(c.wQ), wK: f32(c.wK), wV: f32(c.wV), wO: f32(c.wO),
      causal: c.causal,
      returnWeights: true,
    };
    if (!c.self) {
      opts.key = f32(c.key);
      opts.value = f32(c.value);
    }
    if (c.explicitDims) {
      opts.dK = c.dK;
      opts.dV = c.dV;
    }
    for (const b of ['bQ', 'bK', 'bV', 'bO']) if (c[b] != null) opts[b] = f32(c[b]);
    if (c.keyMask != null) opts.keyMask = Uint8Array.from(c.keyMask);

    const r = lab.multiHeadAttention(opts);
    const tQ = c.query.length / c.dModel;
    const tK = c.self ? tQ : c.key.length / c.dModel;
    assert.equal(r.output.length, tQ * c.dModel, `${c.name}: output length`);
    assert.equal(r.weights.length, c.numHeads * tQ * tK, `${c.name}: weights length`);
    assertClose(c.name, 'output', r.output, c.output);
    assertClose(c.name, 'weights', r.weights, c.weights);
    const fused = lab.multiHeadAttention({ ...opts, returnWeights: false });
    assert.equal(fused.weights, undefined);
    assertClose(c.name, 'output (fused path)', fused.output, c.output);
  });
}
