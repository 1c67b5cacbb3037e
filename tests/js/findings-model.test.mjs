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

// The grouped-query Llama and BERT fixtures of causal_families.py (make_families.py's float64 forward with
// a patch point on each head's output; patchHeads by one whole patched forward per head), through the
// module on one and two threads. The metric is read at the fixture's position (`at`: a decoder's last or
// an earlier one, BERT's [MASK]); BERT's pair cases carry token types 1 for the second sentence.

const FAMILIES = new URL('../golden/families/', import.meta.url);
function familyObjects(name) {
  const file = (f) => readFileSync(new URL(`${name}/${f}`, FAMILIES));
  const bytes = file('model.safetensors');
  return {
    config: JSON.parse(file('config.json')),
    tokenizer: JSON.parse(file('tokenizer.json')),
    weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  };
}
const headsOf = (c) => c.heads.map(([layer, head]) => ({ layer, head }));
const patchArgs = (c) => ({
  clean: c.clean, corrupted: c.corrupted, answer: c.answer, wrong: c.wrong, position: c.at,
  ...(c.tokenTypes ? { tokenTypes: c.tokenTypes } : {}),
});

async function checkPatchHeads(model, name, c, worst) {
  const scale = largestOf(c.effects);
  for (const naive of [false, true]) {
    const r = await model.patchHeads({ ...patchArgs(c), ...(naive ? { [NAIVE]: true } : {}) });
    const err = worstOf(r.effects, c.effects) / scale;
    const what = `${name} ${naive ? 'naive' : 'shared'} patchHeads at ${c.at}${c.tokenTypes ? ' with token types' : ''}`;
    assert.ok(err <= 1e-4, `${what}: ${err}`);
    assert.equal(r.position, c.at);
    assert.ok(Math.abs(r.metricClean - c.metricClean) <= 1e-4 * scale, `${what}: metricClean`);
    assert.ok(Math.abs(r.metricCorrupted - c.metricCorrupted) <= 1e-4 * scale, `${what}: metricCorrupted`);
    worst.patchHeads = Math.max(worst.patchHeads, err);
  }
}

for (const threads of [1, 2]) {
  test(`causal tools on the grouped-query Llama and BERT, ${threads} thread${threads > 1 ? 's' : ''}: against float64`, { timeout: 120_000 }, async () => {
    const lab = await createHeadlab();
    for (const name of ['llama-gqa', 'bert']) {
      const fx = causal(name);
      const model = await lab.loadPretrained(familyObjects(name), { threads });
      const worst = { patch: 0, patchHeads: 0, dla: 0 };
      try {
        const { numLayers, numHeads, numKeyValueHeads, kind } = model.info;
        const { layers, heads, kvHeads } = fx.shapes;
        assert.deepEqual([numLayers, numHeads, numKeyValueHeads, kind], [layers, heads, kvHeads, fx.shapes.kind]);
        for (const c of fx.patch) {
          const types = c.tokenTypes ? { tokenTypes: c.tokenTypes } : {};
          const { logits } = await model.run(c.ids, { allLogits: true, patch: { source: c.source, heads: headsOf(c) }, ...types });
          const err = worstOf(logits, c.logits) / largestOf(c.logits);
          assert.ok(err <= 1e-4, `${name} patch${c.tokenTypes ? ' with token types' : ''}: ${err}`);
          worst.patch = Math.max(worst.patch, err);
        }
        // The pair's patchHeads case is the next test's (its token types need a module built after they came).
        for (const c of fx.patchHeads.filter((x) => !x.tokenTypes)) await checkPatchHeads(model, name, c, worst);
        for (const c of fx.dla) {
          const d = await model.directLogitAttribution({ ids: c.ids, answer: c.answer, wrong: c.wrong, position: c.at });
          const scale = Math.max(largestOf(c.heads), largestOf(c.mlps));
          const err = Math.max(worstOf(d.heads, c.heads), worstOf(d.mlps, c.mlps)) / scale;
          assert.ok(err <= 1e-4, `${name} dla at ${c.at}: ${err}`);
          assert.ok(Math.abs(d.scale - c.scale) <= 1e-4 * c.scale, `${name} dla scale`);
          assert.ok(Math.abs(d.logitDiff - c.logitDiff) <= 1e-4 * Math.max(1, Math.abs(c.logitDiff)), `${name} dla logitDiff`);
          worst.dla = Math.max(worst.dla, err);
        }
        if (kind === 'encoder') {
          assert.equal(fx.dla.length, 0);
          const c = fx.patchHeads[0];
          await assert.rejects(model.directLogitAttribution({ ids: c.clean, answer: c.answer, wrong: c.wrong }),
            (e) => /normalises the residual after every layer/.test(e.message));
        } else {
          assert.ok(fx.dla.length > 0);
          await assert.rejects(model.patchHeads({ ...patchArgs(fx.patchHeads[0]), tokenTypes: fx.patchHeads[0].clean.map(() => 0) }),
            (e) => e instanceof TypeError && /tokenTypes is for encoders/.test(e.message));
        }
        console.log(`# ${name}, ${threads} thread${threads > 1 ? 's' : ''}: worst |HeadLab − float64| / largest: ` +
          `patch ${worst.patch.toExponential(2)}, patchHeads ${worst.patchHeads.toExponential(2)}, ` +
          `dla ${fx.dla.length ? worst.dla.toExponential(2) : 'refused'}`);
      } finally {
        model.dispose();
      }
    }
  });
}

test('patchHeads on a BERT pair: both runs with the token types, against float64', { timeout: 60_000 }, async () => {
  const lab = await createHeadlab();
  const fx = causal('bert');
  const model = await lab.loadPretrained(familyObjects('bert'));
  try {
    const cases = fx.patchHeads.filter((x) => x.tokenTypes);
    assert.ok(cases.length > 0);
    const worst = { patchHeads: 0 };
    for (const c of cases) await checkPatchHeads(model, 'bert', c, worst);
    // Without the types the answer is another one (the fixture is chosen so).
    const plain = await model.patchHeads({ ...patchArgs(cases[0]), tokenTypes: undefined });
    assert.ok(worstOf(plain.effects, cases[0].effects) / largestOf(cases[0].effects) > 1e-2);
    await assert.rejects(model.patchHeads({ ...patchArgs(cases[0]), tokenTypes: cases[0].tokenTypes.slice(1) }),
      (e) => e instanceof RangeError && /tokenTypes must have one entry per token/.test(e.message));
    await assert.rejects(model.patchHeads({ ...patchArgs(cases[0]), tokenTypes: cases[0].tokenTypes.map(() => 2) }),
      (e) => e instanceof RangeError && /token type 2 at position 0 is outside 0\.\.1/.test(e.message));
    console.log(`# bert pair: worst |HeadLab − float64| / largest: patchHeads ${worst.patchHeads.toExponential(2)}`);
  } finally {
    model.dispose();
  }
});
