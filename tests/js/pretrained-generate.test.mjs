// PretrainedModel.generate on every decoder fixture (tests/golden/families/ and GPT-2 / GPT-Neo of
// tests/golden/pretrained/): greedy continuations against the arg-max of run over each prefix (run
// keeps no cache), with and without heads switched off, for ten tokens after a six-token prompt
// (past the four-token windows of GPT-Neo's local layer and Mistral); sampled continuations with
// and without the key-value cache; switched-off heads change the continuation's logits; a bad
// ablate is refused naming it; no heap growth over repeated calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { UNCACHED } from '../../web/lib/api/pretrained.js';
import { fixtureObjects } from './pretrained-helpers.mjs';

const lab = await createHeadlab();
const DECODERS = ['../families/llama-gqa', '../families/llama-sp-bf16', '../families/qwen2', '../families/mistral-window',
  '../families/pythia', '../families/phi3', '../families/gemma', 'gpt2-f32', 'gpt2-bf16', 'neo-f32', 'neo-bf16'];
const PROMPT = 6, STEPS = 10;

async function load(name) {
  const source = fixtureObjects(name);
  delete source.config.eos_token_id;  // a fixed number of tokens: no stop at a random model's eos
  return lab.loadPretrained(source);
}

function promptOf(V, seed) {
  let s = seed;
  return Array.from({ length: PROMPT }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s >>> 8) % V;
  });
}

/** The greedy continuation by run alone: the arg-max of the last position's logits, each prefix afresh. */
async function greedyByRun(model, prompt, ablate) {
  const seq = [...prompt];
  for (let s = 0; s < STEPS; s++) {
    const { logits } = await model.run(seq, { ablate });
    let best = 0;
    for (let j = 1; j < logits.length; j++) if (logits[j] > logits[best]) best = j;
    seq.push(best);
  }
  return seq.slice(PROMPT);
}

for (const name of DECODERS) {
  test(`${name}: greedy generate gives run's arg-max at every step, heads switched off or not`, async () => {
    const model = await load(name);
    try {
      const { numLayers: L, numHeads: H, vocabSize: V } = model.info;
      const prompt = promptOf(V, 21);
      const ablate = [{ layer: 0, head: 1 % H }, { layer: L - 1, head: 0 }];
      for (const options of [{}, { ablate }]) {
        const g = await model.generate(prompt, { maxTokens: STEPS, temperature: 0, ...options });
        assert.equal(g.promptLength, PROMPT);
        assert.deepEqual(Array.from(g.ids.subarray(PROMPT)), await greedyByRun(model, prompt, options.ablate),
          `${name} ${options.ablate ? 'with heads off' : 'every head'}`);
      }
      // Sampling draws the same tokens with the cache as without it (each token by a whole run).
      for (const seed of [1, 2, 3]) {
        const options = { maxTokens: STEPS, temperature: 0.8, seed, ablate: seed === 3 ? ablate : undefined };
        const cached = await model.generate(prompt, options);
        const uncached = await model.generate(prompt, { ...options, [UNCACHED]: true });
        assert.deepEqual(cached.ids, uncached.ids, `${name} seed ${seed}`);
      }
      // Switching heads off reaches the generated positions: their logits move.
      const g = await model.generate(prompt, { maxTokens: STEPS, temperature: 0, ablate });
      const on = await model.run(g.ids), off = await model.run(g.ids, { ablate });
      assert.ok(on.logits.some((x, j) => Math.abs(x - off.logits[j]) > 1e-3));
    } finally {
      model.dispose();
    }
  });
}

test('generate: seeded sampling with heads off repeats; a bad ablate is refused naming it; the heap stays put', async () => {
  const model = await load('../families/llama-gqa');
  try {
    const prompt = promptOf(model.info.vocabSize, 22);
    const ablate = [{ layer: 1, head: 3 }];
    const a = await model.generate(prompt, { maxTokens: STEPS, temperature: 0.8, seed: 4, ablate });
    const b = await model.generate(prompt, { maxTokens: STEPS, temperature: 0.8, seed: 4, ablate });
    assert.deepEqual(a.ids, b.ids);
    await assert.rejects(model.generate(prompt, { ablate: [{ layer: 2, head: 0 }] }),
      (e) => e instanceof RangeError && /PretrainedModel\.generate: ablate\[0\]\.layer must be an integer in 0\.\.1/.test(e.message));
    await assert.rejects(model.generate(prompt, { ablate: 'all' }), (e) => e instanceof TypeError && /ablate must be an array/.test(e.message));
    const heap = lab._pretrained.HEAPU8.length;
    const handles = lab.liveHandleCount();
    for (let i = 0; i < 20; i++) {
      await model.generate(prompt, { maxTokens: STEPS, temperature: 0, ablate: [{ layer: i % 2, head: i % 4 }] });
    }
    assert.equal(lab._pretrained.HEAPU8.length, heap);
    assert.equal(lab.liveHandleCount(), handles);
  } finally {
    model.dispose();
  }
});
