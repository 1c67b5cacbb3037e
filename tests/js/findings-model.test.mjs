// The trained IOI model of tests/golden/findings/ioi-model/ (make_findings.py) as today's engine reads it:
// its tokenizer gives the ids make_findings.py encoded, and the logit difference (answer − wrong) at the last
// position agrees with the script's float64 forward within 1e-4 of the largest, for every stored case.
// patchHeads and directLogitAttribution then single out the heads PyTorch's own patching does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import { NAIVE } from '../../web/lib/api/pretrained.js';
import { fixtureObjects } from './pretrained-helpers.mjs';

const dir = new URL('../golden/findings/ioi-model/', import.meta.url);
const read = (f) => readFileSync(new URL(f, dir));
const expected = JSON.parse(read('expected.json'));

test('the engine reads the IOI model; tokens and logit differences agree with make_findings.py', async () => {
  const lab = await createHeadlab();
  const bytes = read('model.safetensors');
  const model = await lab.loadPretrained({
    config: JSON.parse(read('config.json')),
    tokenizer: JSON.parse(read('tokenizer.json')),
    weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  });
  try {
    assert.deepEqual([model.info.numLayers, model.info.numHeads], [2, 4]);
    const largest = Math.max(...expected.cases.map((c) => Math.abs(c.metricClean)));
    let worst = 0;
    for (const c of expected.cases) {
      assert.deepEqual(Array.from(model.tokenize(c.clean).ids), c.ids, c.clean);
      assert.deepEqual(Array.from(model.tokenize(c.corrupted).ids), c.corruptedIds, c.corrupted);
      const { logits } = await model.run(c.ids);
      const diff = logits[c.answerId] - logits[c.wrongId];
      worst = Math.max(worst, Math.abs(diff - c.metricClean));
      assert.ok(Math.abs(diff - c.metricClean) <= 1e-4 * largest, `${c.clean}: ${diff} vs ${c.metricClean}`);
    }
    console.log(`# IOI model: logit difference max |HeadLab − float64| ${worst.toExponential(2)} (largest ${largest.toFixed(3)})`);
  } finally {
    model.dispose();
  }
});

// The causal tools through the module (wasm), one and two threads, against make_findings.py's float64
// answers on the random GPT-2 / GPT-Neo checkpoints, and the trained IOI model's strings as a page passes them.

const causal = (name) => JSON.parse(readFileSync(new URL(`../golden/findings/causal-${name}.json`, import.meta.url)));
const largestOf = (a) => a.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
const worstOf = (got, want) => want.reduce((m, x, i) => Math.max(m, Math.abs(got[i] - x)), 0);

for (const threads of [1, 2]) {
  test(`causal tools on ${threads} thread${threads > 1 ? 's' : ''}: patch, patchHeads and attribution against float64`, { timeout: 120_000 }, async () => {
    const lab = await createHeadlab();
    for (const name of ['gpt2-f32', 'neo-f32']) {
      const fx = causal(name);
      const model = await lab.loadPretrained(fixtureObjects(name), { threads });
      try {
        for (const c of fx.patch) {
          const heads = c.heads.map(([layer, head]) => ({ layer, head }));
          const { logits } = await model.run(c.ids, { allLogits: true, patch: { source: c.source, heads } });
          const err = worstOf(logits, c.logits) / largestOf(c.logits);
          assert.ok(err <= 1e-4, `${name} patch: ${err}`);
        }
        const args = ({ clean, corrupted, answer, wrong }) => ({ clean, corrupted, answer, wrong });
        for (const c of fx.patchHeads) {
          const progress = [];
          const r = await model.patchHeads({ ...args(c), onProgress: (p) => progress.push(p.done) });
          const err = worstOf(r.effects, c.effects) / largestOf(c.effects);
          assert.ok(err <= 1e-4, `${name} patchHeads: ${err}`);
          assert.ok(Math.abs(r.metricClean - c.metricClean) <= 1e-4 * Math.abs(c.metricClean) + 1e-5, `${name} metricClean`);
          assert.ok(Math.abs(r.metricCorrupted - c.metricCorrupted) <= 1e-4 * Math.abs(c.metricCorrupted) + 1e-5, `${name} metricCorrupted`);
          assert.deepEqual(progress, [...Array(fx.shapes.layers).keys()].map((l) => l + 1));
          const naive = await model.patchHeads({ ...args(c), [NAIVE]: true });
          assert.ok(worstOf(naive.effects, c.effects) / largestOf(c.effects) <= 1e-4, `${name} naive patchHeads`);
        }
        for (const c of fx.dla) {
          const d = await model.directLogitAttribution({ ids: c.ids, answer: c.answer, wrong: c.wrong });
          assert.ok(Math.abs(d.logitDiff - c.logitDiff) <= 1e-4 * Math.max(1, Math.abs(c.logitDiff)), `${name} dla logitDiff`);
          assert.ok(Math.abs(d.scale - c.scale) <= 1e-4 * c.scale, `${name} dla scale`);
          const scale = Math.max(largestOf(c.heads), largestOf(c.mlps));
          assert.ok(worstOf(d.heads, c.heads) / scale <= 1e-4, `${name} dla heads`);
          assert.ok(worstOf(d.mlps, c.mlps) / scale <= 1e-4, `${name} dla mlps`);
        }
        // Refusals in words, and the model keeps working.
        const c = fx.patch[0];
        await assert.rejects(model.run(c.ids, { patch: { source: c.source.slice(1), heads: [{ layer: 0, head: 0 }] } }),
          (e) => e instanceof RangeError && /patch\.source is \d+ tokens long and the run \d+/.test(e.message));
        await assert.rejects(model.run(c.ids, { patch: { source: c.source, heads: [{ layer: 9, head: 0 }] } }),
          (e) => e instanceof RangeError && /patch\.heads\[0\]\.layer must be an integer in 0\.\.1/.test(e.message));
        await assert.rejects(model.patchHeads({ clean: c.ids, corrupted: c.ids.slice(1), answer: 1, wrong: 2 }),
          (e) => e instanceof RangeError && /clean is \d+ tokens and corrupted \d+/.test(e.message));
        await assert.rejects(model.directLogitAttribution({ ids: c.ids, answer: 1e6, wrong: 2 }),
          (e) => e instanceof RangeError && /answer must be a token id in 0\.\.352/.test(e.message));
        const ac = new AbortController();
        const stopped = model.patchHeads({ ...args(fx.patchHeads[0]), signal: ac.signal, onProgress: () => ac.abort() });
        await assert.rejects(stopped, (e) => e.name === 'AbortError');
        assert.ok((await model.run(c.ids)).logits.length > 0);
      } finally {
        model.dispose();
      }
    }
  });
}

test('the IOI model through the page-level API: prompts as text, names as one-token texts, PyTorch\'s top 3', { timeout: 120_000 }, async () => {
  const lab = await createHeadlab();
  const bytes = read('model.safetensors');
  const model = await lab.loadPretrained({
    config: JSON.parse(read('config.json')),
    tokenizer: JSON.parse(read('tokenizer.json')),
    weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  });
  try {
    const H = model.info.numHeads;
    const sum = { patch: new Float64Array(8), dla: new Float64Array(8) };
    for (const c of expected.cases) {
      const p = await model.patchHeads({ clean: c.clean, corrupted: c.corrupted, answer: c.answer, wrong: c.wrong });
      const d = await model.directLogitAttribution({ ids: c.clean, answer: c.answer, wrong: c.wrong });
      assert.equal(p.answer, c.answerId);
      p.effects.forEach((x, i) => { sum.patch[i] += x; });
      d.heads.forEach((x, i) => { sum.dla[i] += x; });
    }
    const top = (g) => Array.from(g, (v, i) => ({ v, i })).sort((a, b) => b.v - a.v).slice(0, 3).map(({ i }) => [Math.floor(i / H), i % H]);
    assert.deepEqual(top(sum.patch), expected.mean.top3Patch);
    assert.deepEqual(top(sum.dla), expected.mean.top3Dla);
    await assert.rejects(model.patchHeads({ clean: expected.cases[0].clean, corrupted: expected.cases[0].corrupted, answer: ' Mary and', wrong: ' John' }),
      (e) => e instanceof RangeError && /answer " Mary and" is 2 tokens/.test(e.message));
  } finally {
    model.dispose();
  }
});
