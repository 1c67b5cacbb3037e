// PretrainedModel against the float64 references of tests/golden/pretrained/ (make_pretrained.py,
// an independent forward in PyTorch): logits and attention within 1e-4 (float32 weights) and 2e-3
// (float16/bfloat16), with and without ablation; head scores against their definitions recomputed
// here from run()'s attention and against the reference; the logit lens; seeded generation; and
// the errors of a disposed model and of a text longer than the context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { COURSE, assertClose, expectedOf, fixtureObjects, scoresFromAttention, softmax, toleranceOf } from './pretrained-helpers.mjs';

const lab = await createHeadlab();
const NAMES = ['gpt2-f32', 'gpt2-noprefix-f32', 'gpt2-sharded', 'gpt2-f16', 'gpt2-bf16', 'neo-f32', 'neo-bf16'];

async function withModel(name, fn) {
  const model = await lab.loadPretrained(fixtureObjects(name));
  try {
    return await fn(model);
  } finally {
    model.dispose();
  }
}

for (const name of NAMES) {
  test(`${name}: logits and attention of every case agree with the float64 reference, ablation included`, async () => {
    const expected = expectedOf(name);
    const tol = toleranceOf(name);
    const worst = { logits: 0, attention: 0 };
    await withModel(name, async (model) => {
      const { numLayers: L, numHeads: H, vocabSize: V } = model.info;
      assert.deepEqual([L, H, V], [expected.shapes.layers, expected.shapes.heads, expected.shapes.vocab]);
      assert.equal(model.info.dtype, /bf16/.test(name) ? 'BF16' : /f16/.test(name) ? 'F16' : 'F32');
      for (const c of expected.cases) {
        const ablate = c.ablate.map(([layer, head]) => ({ layer, head }));
        const r = await model.run(c.text, { attention: true, allLogits: true, ablate, topK: 3 });
        assert.deepEqual(Array.from(r.ids), c.ids, `${c.name}: ids`);
        const T = c.ids.length;
        assert.equal(r.logits.length, T * V);
        assert.equal(r.attention.length, L * H * T * T);
        worst.logits = Math.max(worst.logits, assertClose(r.logits, c.logits, tol, `${name} ${c.name} logits`));
        worst.attention = Math.max(worst.attention, assertClose(r.attention, c.attention, tol, `${name} ${c.name} attention`));
        // next: the reference's last row, softmaxed here, its three most probable tokens.
        const p = softmax(c.logits.slice((T - 1) * V));
        const order = p.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0]).slice(0, 3);
        assert.deepEqual(r.next.map((n) => n.id), order.map(([, i]) => i), `${c.name}: next ids`);
        r.next.forEach((n, k) => assert.ok(Math.abs(n.probability - order[k][0]) <= tol, `${c.name}: next[${k}].probability ${n.probability} vs ${order[k][0]}`));
        // Without allLogits: the last row only, the same numbers up to float rounding (the GEMMs run over other row counts).
        const last = await model.run(c.ids, { ablate });
        assert.equal(last.logits.length, V);
        assertClose(last.logits, r.logits.subarray((T - 1) * V), 1e-5, `${c.name}: the last row alone`);
        assert.equal(last.attention, undefined);
      }
    });
    console.log(`${name}: largest difference from the float64 reference: logits ${worst.logits.toExponential(2)}, attention ${worst.attention.toExponential(2)} (tolerance ${tol})`);
  });
}

// Issue 32: asking for the attention as well changed the logits by 4.5e-6 (the output came from the
// materialised scores instead of the fused kernel). What is also returned must not change the numbers.
test('the logits are the same numbers whether or not the attention is also returned, ablation and windows too', async () => {
  for (const name of ['gpt2-f32', 'neo-f32']) {
    await withModel(name, async (model) => {
      for (const ablate of [[], [{ layer: 1, head: 2 }]]) {
        const plain = await model.run(COURSE, { allLogits: true, ablate });
        const withAttention = await model.run(COURSE, { allLogits: true, ablate, attention: true });
        assert.deepEqual(Array.from(withAttention.logits), Array.from(plain.logits), `${name}, ${ablate.length} heads off`);
      }
    });
  }
});

test('ablation changes what it should: the ablated case differs from the plain one, and [] is no ablation', async () => {
  await withModel('gpt2-f32', async (model) => {
    const plain = await model.run(COURSE);
    const none = await model.run(COURSE, { ablate: [] });
    const off = await model.run(COURSE, { ablate: [{ layer: 0, head: 1 }, { layer: 1, head: 2 }] });
    assert.deepEqual(Array.from(none.logits), Array.from(plain.logits));
    assert.notDeepEqual(Array.from(off.logits), Array.from(plain.logits));
  });
});

for (const name of ['gpt2-f32', 'neo-f32', 'gpt2-bf16']) {
  test(`${name}: headScores follow their definitions on the sequence returned, and agree with the reference on its sequence`, async () => {
    const expected = expectedOf(name);
    const tol = toleranceOf(name);
    await withModel(name, async (model) => {
      const { numLayers: L, numHeads: H, contextLength } = model.info;
      for (const [length, seed] of [[6, 1], [9, 42], [undefined, undefined]]) {
        const { sequence, scores } = await model.headScores({ length, seed });
        const n = length ?? Math.min(20, Math.floor((contextLength - 1) / 2));
        assert.equal(sequence.length, 2 * n + 1);
        assert.equal(sequence[0], 352, 'BOS first');
        assert.deepEqual(Array.from(sequence.subarray(1, n + 1)), Array.from(sequence.subarray(n + 1)), 'the random tokens repeat');
        assert.ok(!sequence.subarray(1).includes(352), 'no special token among the random ones');
        const { attention } = await model.run(sequence, { attention: true });
        const want = scoresFromAttention(attention, L, H, n);
        assert.equal(scores.length, L * H);
        scores.forEach((s, i) => {
          assert.deepEqual([s.layer, s.head], [want[i].layer, want[i].head]);
          for (const k of ['previousToken', 'duplicateToken', 'induction', 'firstToken']) {
            assert.ok(Math.abs(s[k] - want[i][k]) <= 1e-5, `${name} n=${n} L${s.layer}H${s.head} ${k}: ${s[k]} vs ${want[i][k]} from run()`);
          }
        });
      }
      const again = await model.headScores({ length: 6, seed: 1 });
      assert.deepEqual(again, await model.headScores({ length: 6, seed: 1 }), 'the same seed gives the same sequence and scores');
      // The reference's own sequence, scored by the definitions over this engine's attention.
      const hs = expected.headScores;
      const { attention } = await model.run(hs.sequence, { attention: true });
      const mine = scoresFromAttention(attention, L, H, hs.n);
      hs.scores.forEach((want, i) => {
        for (const k of ['previousToken', 'duplicateToken', 'induction', 'firstToken']) {
          assert.ok(Math.abs(mine[i][k] - want[k]) <= tol, `${name} reference L${want.layer}H${want.head} ${k}: ${mine[i][k]} vs ${want[k]}`);
        }
      });
    });
  });
}

for (const name of ['gpt2-f32', 'neo-f32']) {
  test(`${name}: the logit lens gives each layer's top tokens as the reference's lens logits rank them`, async () => {
    const c = expectedOf(name).cases.find((x) => x.lens);
    const tol = toleranceOf(name);
    await withModel(name, async (model) => {
      const { numLayers: L, vocabSize: V } = model.info;
      const lens = await model.logitLens(c.text, { topK: 4 });
      const T = c.ids.length;
      assert.deepEqual(Array.from(lens.ids), c.ids);
      assert.equal(lens.layers.length, L);
      for (let l = 0; l < L; l++) {
        assert.equal(lens.layers[l].layer, l);
        assert.equal(lens.layers[l].positions.length, T);
        for (let t = 0; t < T; t++) {
          const p = softmax(c.lens.slice((l * T + t) * V, (l * T + t + 1) * V));
          const order = p.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0]).slice(0, 4);
          const got = lens.layers[l].positions[t];
          assert.deepEqual(got.map((x) => x.id), order.map(([, i]) => i), `layer ${l} position ${t}`);
          got.forEach((x, k) => assert.ok(Math.abs(x.probability - order[k][0]) <= tol, `layer ${l} position ${t} #${k}: ${x.probability} vs ${order[k][0]}`));
          assert.equal(typeof got[0].token, 'string');
        }
      }
      // The last layer's lens is the model's own prediction.
      const r = await model.run(c.ids, { topK: 4 });
      assert.deepEqual(lens.layers[L - 1].positions[T - 1].map((x) => x.id), r.next.map((x) => x.id));
    });
  });
}

for (const name of ['gpt2-f32', 'neo-f32']) {
  test(`${name}: with heads off, the lens's last layer at every position ranks as the reference's ablated logits, and as run() with them off`, async () => {
    const c = expectedOf(name).cases.find((x) => x.ablate.length);
    const tol = toleranceOf(name);
    const ablate = c.ablate.map(([layer, head]) => ({ layer, head }));
    await withModel(name, async (model) => {
      const { numLayers: L, vocabSize: V } = model.info;
      const T = c.ids.length;
      const lens = await model.logitLens(c.ids, { topK: 5, ablate });
      for (let t = 0; t < T; t++) {
        const p = softmax(c.logits.slice(t * V, (t + 1) * V));
        const order = p.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0]).slice(0, 5);
        const got = lens.layers[L - 1].positions[t];
        assert.deepEqual(got.map((x) => x.id), order.map(([, i]) => i), `position ${t}`);
        got.forEach((x, k) => assert.ok(Math.abs(x.probability - order[k][0]) <= tol, `position ${t} #${k}: ${x.probability} vs ${order[k][0]}`));
      }
      const r = await model.run(c.ids, { topK: 5, ablate });
      assert.deepEqual(lens.layers[L - 1].positions[T - 1].map((x) => x.id), r.next.map((x) => x.id));
      lens.layers[L - 1].positions[T - 1].forEach((x, k) => assert.ok(Math.abs(x.probability - r.next[k].probability) <= 1e-5));
      const plain = await model.logitLens(c.ids, { topK: 5 });
      assert.notDeepEqual(plain.layers[L - 1].positions.map((row) => row[0].probability), lens.layers[L - 1].positions.map((row) => row[0].probability), 'the heads off change the lens');
    });
  });
}

for (const name of NAMES) {
  test(`${name}: greedy generation continues the course sentence as the float64 reference does`, async () => {
    const { greedy } = expectedOf(name);
    await withModel(name, async (model) => {
      const g = await model.generate(greedy.prompt, { maxTokens: greedy.next.length, temperature: 0 });
      assert.deepEqual(Array.from(g.ids.subarray(g.promptLength)), greedy.next);
      assert.equal(g.text, model.decode(greedy.next));
    });
  });
}

test('generate: seeded and reproducible; temperature 0 takes the most probable token at every step', async () => {
  await withModel('gpt2-f32', async (model) => {
    const a = await model.generate('Virat hit the', { maxTokens: 8, seed: 5 });
    const b = await model.generate('Virat hit the', { maxTokens: 8, seed: 5 });
    assert.deepEqual(a, b, 'same seed, same tokens');
    const prompt = model.tokenize('Virat hit the').ids;
    assert.equal(a.promptLength, prompt.length);
    assert.deepEqual(Array.from(a.ids.subarray(0, prompt.length)), Array.from(prompt));
    assert.ok(a.ids.length > prompt.length && a.ids.length <= prompt.length + 8);
    assert.equal(a.tokens.length, a.ids.length);
    assert.equal(typeof a.text, 'string');
    const seeds = await Promise.all([1, 2, 3, 4].map((seed) => model.generate('Virat hit the', { maxTokens: 8, seed })));
    assert.ok(new Set(seeds.map((g) => g.text)).size > 1, 'different seeds draw different tokens');
    const greedy = await model.generate('Virat hit the', { maxTokens: 10, temperature: 0 });
    for (let t = prompt.length; t < greedy.ids.length; t++) {
      const r = await model.run(greedy.ids.subarray(0, t), { topK: 1 });
      assert.equal(greedy.ids[t], r.next[0].id, `step ${t}: the argmax of run()`);
    }
    assert.ok(!greedy.ids.subarray(prompt.length).includes(352), 'the stop token is never emitted');
    // Generated tokens' attention: run the whole sequence.
    const { attention } = await model.run(greedy.ids, { attention: true });
    assert.equal(attention.length, 2 * 4 * greedy.ids.length ** 2);
    // The context bounds the continuation.
    const long = await model.generate(Array.from({ length: 30 }, (_, i) => 40 + i), { maxTokens: 20, temperature: 0.5 });
    assert.ok(long.ids.length <= 32);
    const empty = await model.generate('', { maxTokens: 3 });
    assert.equal(empty.ids[0], 352, "'' starts from bos_token_id");
  });
});

test('a text longer than the context is a RangeError naming both lengths; a disposed model a TypeError', async () => {
  const model = await lab.loadPretrained(fixtureObjects('gpt2-f32'));
  const long = `${COURSE} ${COURSE} ${COURSE}`;
  const n = model.tokenize(long).ids.length;
  await assert.rejects(model.run(long), (e) => e instanceof RangeError && e.message.includes(`textOrIds is ${n} tokens long, more than the 32 the model's context length allows`));
  await assert.rejects(model.logitLens(new Int32Array(33)), (e) => e instanceof RangeError && /must hold 1\.\.32 token ids.*got 33/.test(e.message));
  await assert.rejects(model.generate(long), (e) => e instanceof RangeError && e.message.includes(`prompt is ${n} tokens long, more than the 31 left for it`));
  const handles = lab.liveHandleCount();
  model.dispose();
  model.dispose();
  assert.ok(lab.liveHandleCount() <= handles);
  for (const call of [() => model.run(COURSE), () => model.headScores(), () => model.logitLens(COURSE), () => model.generate('a'), () => model.tokenize('a'), () => model.info]) {
    await assert.rejects(async () => call(), (e) => e instanceof TypeError && /PretrainedModel\.\w+: this model has been disposed/.test(e.message));
  }
});

test('many runs leave the heap and the handle count where they were', async () => {
  await withModel('gpt2-f32', async (model) => {
    await model.run(COURSE, { attention: true, allLogits: true });
    await model.logitLens(COURSE);
    const heap = lab._pretrained.HEAPU8.length;
    const handles = lab.liveHandleCount();
    for (let i = 0; i < 50; i++) {
      await model.run(COURSE, { attention: true, allLogits: true, ablate: [{ layer: i % 2, head: i % 4 }] });
      await model.logitLens(COURSE);
      await model.headScores({ length: 6, seed: i });
    }
    assert.equal(lab._pretrained.HEAPU8.length, heap);
    assert.equal(lab.liveHandleCount(), handles);
  });
});

test('tokens that are bytes, not whole characters, read as <0xE2>, and whole characters as themselves', async () => {
  await withModel('gpt2-f32', async (model) => {
    const text = 'a—é';
    const { tokens } = model.tokenize(text);
    // The fixture's tokenizer has no merges over these bytes: one token per UTF-8 byte of — and é.
    const bytes = [...new TextEncoder().encode('—é')].map((b) => `<0x${b.toString(16).toUpperCase()}>`);
    assert.deepEqual(tokens, ['a', ...bytes]);
    assert.ok(!tokens.some((t) => t.includes('\uFFFD')), 'no replacement character');
    assert.equal(model.decode(model.tokenize(text).ids), text, 'decoding the ids still gives the text');
  });
});
