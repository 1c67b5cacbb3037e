// The pretrained engine with its memory past 2 GiB (-sMAXIMUM_MEMORY=4gb), where addresses no
// longer fit a signed 32-bit integer: a fixture checkpoint loaded behind 2.2 GB of ballast
// (loadPretrained's test-only [BALLAST]), so its weights, activations, token buffer, key-value
// cache and thread stacks all sit above 2^31, gives exactly the answers of the same checkpoint in
// a fresh module (run with attention, ablation and patched heads, the lens, head scores, patchHeads,
// direct logit attribution, generate with the key-value cache), in the SIMD, scalar and threaded
// (2 threads) builds; heapMax is
// 4 GiB − 64 KiB; one buffer of more than 2 GiB (a TinyLlama-sized file) can be allocated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { BALLAST } from '../../web/lib/api/pretrained.js';
import { endModule, loadThreaded } from '../../web/lib/api/threaded-module.js';
import { instantiate } from '../../web/lib/api/load.js';
import { fixtureObjects } from './pretrained-helpers.mjs';

const BALLAST_BYTES = 2.2e9;  // from the first few MB of the heap to past 2^31
const FIXTURES = ['gpt2-f32', '../families/llama-sp-bf16'];
const ENGINES = [
  { name: 'SIMD', flavour: 'simd', threads: 1 },
  { name: 'scalar', flavour: 'scalar', threads: 1 },
  { name: '2 threads', flavour: 'simd', threads: 2 },
];

/**
 * The lab of `flavour` with a pretrained module of its own (a lab shares one per process): the
 * fresh module's and the ballasted one's answers then come from separate memories.
 */
async function labOfItsOwn(flavour) {
  const lab = await createHeadlab({ flavour });
  const module = await instantiate('pretrained', flavour, {});
  return Object.assign(Object.create(lab), { _pretrainedModule: async () => module });
}

function load(lab, name, threads, ballast) {
  const source = fixtureObjects(name);
  delete source.config.eos_token_id;  // a fixed number of generated tokens
  return lab.loadPretrained(source, { threads, ...(ballast ? { [BALLAST]: BALLAST_BYTES } : {}) });
}

/** Every kind of call the engine answers, on ids derived from the model's vocabulary. */
async function answers(model) {
  const { numLayers: L, numHeads: H, vocabSize: V } = model.info;
  const ids = Array.from({ length: 12 }, (_, i) => (i * 37 + 5) % V);
  const corrupted = ids.slice();
  corrupted[3] = (corrupted[3] + 1) % V;
  const ablate = [{ layer: 0, head: 1 % H }, { layer: L - 1, head: 0 }];
  const full = await model.run(ids, { attention: true, allLogits: true });
  const ablated = await model.run(ids, { attention: true, allLogits: true, ablate });
  const patched = await model.run(corrupted, { allLogits: true, patch: { source: ids, heads: ablate } });
  const dla = await model.directLogitAttribution({ ids, answer: 7 % V, wrong: 11 % V });
  const lens = await model.logitLens(ids, { topK: 3 });
  const scores = await model.headScores({ length: 6, seed: 2 });
  const patch = await model.patchHeads({ clean: ids, corrupted, answer: 7 % V, wrong: 11 % V });
  const greedy = await model.generate(ids.slice(0, 5), { maxTokens: 6, temperature: 0 });
  const sampled = await model.generate(ids.slice(0, 5), { maxTokens: 6, temperature: 0.8, seed: 9, ablate });
  return {
    logits: full.logits, attention: full.attention, next: full.next,
    ablatedLogits: ablated.logits, ablatedAttention: ablated.attention, patchedLogits: patched.logits,
    dlaHeads: dla.heads, dlaMlps: dla.mlps, dla: [dla.scale, dla.logitDiff],
    lens: lens.layers, scores: scores.scores,
    effects: patch.effects, metrics: [patch.metricClean, patch.metricCorrupted],
    greedy: greedy.ids, sampled: sampled.ids,
  };
}

/** Throws at the first key whose values differ, naming it and the element. */
function assertSame(got, want, what) {
  for (const key of Object.keys(want)) {
    const a = got[key], b = want[key];
    if (ArrayBuffer.isView(b)) {
      assert.equal(a.length, b.length, `${what}: ${key} length`);
      for (let i = 0; i < b.length; i++) {
        if (!Object.is(a[i], b[i])) assert.fail(`${what}: ${key}[${i}] is ${a[i]} above 2 GiB, ${b[i]} in a fresh module`);
      }
    } else {
      assert.deepEqual(a, b, `${what}: ${key}`);
    }
  }
}

// First, while every module's memory is fresh (a grown memory keeps the room it grew by).
test('heapMax is 4 GiB − 64 KiB in every pretrained build, and a buffer of more than 2 GiB can be taken', async () => {
  for (const engine of ENGINES) {
    const lab = await createHeadlab({ flavour: engine.flavour });
    const M = engine.threads > 1 ? await loadThreaded(lab, 'pretrained', engine.threads - 1) : await lab._pretrainedModule();
    const core = new M.PretrainedCore();
    try {
      assert.equal(M.heapMax(), 2 ** 32 - 2 ** 16, engine.name);
      assert.equal(core.configure({ architecture: 'gpt2', numLayers: 1, numHeads: 1, dModel: 4, dFF: 16, vocabSize: 8,
        contextLength: 8, layerNormEps: 1e-5, scaleScores: true, windows: [0], activation: 'gelu_new' }), '');
      // TinyLlama's model.safetensors is one file of 2.2 GB; the engine holds each file in one buffer.
      const bytes = 2.2e9;
      const p = core.allocFile(bytes);
      assert.ok(p > 0, `${engine.name}: allocFile(${bytes}) gave no buffer`);
      assert.ok(p + bytes <= M.HEAPU8.length, `${engine.name}: the buffer [${p}, ${p + bytes}) runs past the memory's ${M.HEAPU8.length} bytes`);
    } finally {
      if (engine.threads > 1) endModule(M, core);
      else core.delete();
    }
  }
});

for (const engine of ENGINES) {
  test(`${engine.name}: fixtures above 2 GiB give a fresh module's answers bit for bit`, async () => {
    const fresh = await labOfItsOwn(engine.flavour);
    const high = await labOfItsOwn(engine.flavour);
    for (const name of FIXTURES) {
      const want = await load(fresh, name, engine.threads, false);
      const model = await load(high, name, engine.threads, true);
      try {
        const m = model._module;
        assert.ok(m.HEAPU8.length > 2 ** 31, `${name}: the memory holds ${m.HEAPU8.length} bytes, not more than 2 GiB`);
        // Below the ballast's end no hole of a page is left: what the model allocated came after it.
        const probe = m._malloc(4096) >>> 0;
        m._free(probe);
        assert.ok(probe > 2 ** 31, `${name}: a new allocation is at ${probe}, below 2 GiB`);
        assertSame(await answers(model), await answers(want), `${engine.name} ${name}`);
      } finally {
        model.dispose();
        want.dispose();
      }
    }
  });
}
