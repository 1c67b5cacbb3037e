// The language-model API under Node: defaults from the task table, determinism,
// save/load, head switches, attention checked against an independent
// double-precision forward pass computed here from the saved bytes, prediction,
// generation, training, plain-data results and no leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = await createHeadlab();
const TINY = { numLayers: 2, numHeads: 2, dModel: 8, batchSize: 8 };

async function withModel(options, fn) {
  const lm = await lab.createLanguageModel(options);
  try {
    return await fn(lm);
  } finally {
    lm.dispose();
  }
}

test('languageTasks lists induction, cricket and english; createLanguageModel defaults to the task defaults', async () => {
  const tasks = await lab.languageTasks();
  assert.deepEqual(tasks.map((t) => t.name), ['induction', 'cricket', 'english']);
  for (const t of tasks) {
    assert.equal(typeof t.description, 'string');
    assert.equal(typeof t.metric, 'string');
    assert.ok(t.vocabulary.includes(t.startToken));
    assert.ok(t.defaults.steps > 0);
    await withModel({ task: t.name }, (lm) => {
      const { numLayers, numHeads, dModel, mlp, learningRate, batchSize, seed } = t.defaults;
      assert.ok(Number.isInteger(seed) && seed >= 0, `${t.name}: defaults.seed ${seed}`);
      assert.deepEqual(lm.config(), { task: t.name, numLayers, numHeads, dModel, mlp, seed, learningRate, batchSize, step: 0 });
      assert.deepEqual(lm.vocabulary, t.vocabulary);
      assert.deepEqual(lm.task, t);
      assert.equal(lm.steps, 0);
    });
  }
  const [induction, cricket] = tasks;
  assert.equal(induction.padToken, null);
  assert.equal(cricket.padToken, '<pad>');
  assert.equal(cricket.stopToken, '.');
  const size = induction.vocabulary.length;
  induction.vocabulary.push('mutated');  // a copy: the next call is unaffected
  assert.equal((await lab.languageTasks())[0].vocabulary.length, size);
});

test('the same seed gives the same losses step for step; another seed does not', async () => {
  const run = (seed) => withModel({ task: 'cricket', seed, ...TINY }, (lm) => Array.from({ length: 6 }, () => lm.step().loss));
  const a = await run(4), b = await run(4), c = await run(5);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

test('save → loadLanguageModel gives the same attention, evaluation, head switches and steps; training continues', async () => {
  await withModel({ task: 'induction', seed: 2, ...TINY, mlp: true }, async (lm) => {
    lm.step(20);
    lm.setHeadEnabled(0, 1, false);
    const bytes = lm.save();
    assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'HLLM');
    const copy = await lab.loadLanguageModel(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    try {
      assert.equal(copy.steps, 20);
      assert.deepEqual(copy.config(), lm.config());
      assert.equal(copy.headEnabled(0, 1), false);
      const text = 'a b c d a b c d e';
      assert.deepEqual(copy.attention(text), lm.attention(text));
      assert.deepEqual(copy.evaluate(200), lm.evaluate(200));
      assert.deepEqual(copy.save(), bytes);
      assert.equal(copy.step(2).step, 22);
    } finally {
      copy.dispose();
    }
  });
});

test('switching a head off changes the loss; switching it back on restores it bit for bit', async () => {
  await withModel({ task: 'induction', seed: 1, ...TINY }, (lm) => {
    lm.step(30);
    const before = lm.evaluate(200);
    lm.setHeadEnabled(1, 0, false);
    assert.equal(lm.headEnabled(1, 0), false);
    const off = lm.evaluate(200);
    assert.notEqual(off.loss, before.loss);
    lm.setHeadEnabled(1, 0, true);
    assert.deepEqual(lm.evaluate(200), before);
  });
});

test('attention: rows sum to 1, zeros above the diagonal; a prefix is the top-left block of the longer sequence', async () => {
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    lm.step(10);
    const long = lm.attention('now virat hit the ball because it was full .');
    const [L, H, T, T2] = long.shape;
    assert.deepEqual([L, H, T, T2], [2, 2, 11, 11]);
    assert.equal(long.weights.length, L * H * T * T);
    assert.equal(long.tokens[0], '<s>');
    for (let m = 0; m < L * H; m++) {
      for (let i = 0; i < T; i++) {
        let sum = 0;
        for (let j = 0; j < T; j++) {
          const w = long.weights[(m * T + i) * T + j];
          if (j > i) assert.equal(w, 0, `map ${m} row ${i} col ${j}`);
          sum += w;
        }
        assert.ok(Math.abs(sum - 1) < 1e-5, `map ${m} row ${i} sums to ${sum}`);
      }
    }
    const short = lm.attention(['<s>', 'now', 'virat', 'hit']);  // words, taken as the whole sequence
    const t = 4;
    for (let m = 0; m < L * H; m++) {
      for (let i = 0; i < t; i++) {
        for (let j = 0; j < t; j++) {
          assert.ok(Math.abs(short.weights[(m * t + i) * t + j] - long.weights[(m * T + i) * T + j]) <= 1e-6);
        }
      }
    }
    // ids give the same as words
    assert.deepEqual(lm.attention(Array.from(lm.tokenize('now virat hit').tokens)), short);
  });
});

// ---- An independent forward pass in doubles, from the saved bytes (layout in lm_file.hpp / lm.hpp).

function parseModel(bytes) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const L = bytes[8];
  let at = 9 + L;
  const u32 = () => { const x = v.getUint32(at, true); at += 4; return x; };
  const vocab = u32(), seqLen = u32(), numLayers = u32(), numHeads = u32(), d = u32();
  const mlp = bytes[at] === 1;
  at += 1 + 4 + 4 + 8 + 8 + 8;  // learning rate, batch size, seed, steps, generator state
  const flags = Array.from(bytes.subarray(at, at + numLayers * numHeads));
  at += numLayers * numHeads;
  const count = u32();
  const p = Float64Array.from({ length: count }, (_, i) => v.getFloat32(at + 4 * i, true));
  let o = 0;
  const take = (n) => { const a = p.subarray(o, o + n); o += n; return a; };
  const f = 4 * d;
  const model = { vocab, seqLen, numLayers, numHeads, d, mlp, flags, tokEmb: take(vocab * d), posEmb: take(seqLen * d), layers: [] };
  for (let l = 0; l < numLayers; l++) {
    const y = { ln1g: take(d), ln1b: take(d), wq: take(d * d), wk: take(d * d), wv: take(d * d), wo: take(d * d),
      bq: take(d), bk: take(d), bv: take(d), bo: take(d) };
    if (mlp) Object.assign(y, { ln2g: take(d), ln2b: take(d), wfc: take(d * f), bfc: take(f), wproj: take(f * d), bproj: take(d) });
    model.layers.push(y);
  }
  Object.assign(model, { lnfg: take(d), lnfb: take(d), wu: take(d * vocab), bu: take(vocab) });
  assert.equal(o, count, 'the layout accounts for every parameter');
  return model;
}

const layerNorm = (x, g, b) => x.map((row) => {
  const mean = row.reduce((s, a) => s + a, 0) / row.length;
  const variance = row.reduce((s, a) => s + (a - mean) ** 2, 0) / row.length;
  const r = 1 / Math.sqrt(variance + 1e-5);
  return row.map((a, i) => (a - mean) * r * g[i] + b[i]);
});
const linear = (x, w, b, n) => x.map((row) => Array.from({ length: n }, (_, j) => row.reduce((s, a, i) => s + a * w[i * n + j], b[j])));
const gelu = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

/** Attention maps [layer][head][i][j] and the last position's next-token probabilities. */
function referenceForward(m, ids) {
  const T = ids.length, d = m.d, h = m.numHeads, dk = d / h;
  let x = ids.map((t, i) => Array.from({ length: d }, (_, c) => m.tokEmb[t * d + c] + m.posEmb[i * d + c]));
  const maps = [];
  m.layers.forEach((y, l) => {
    const ln = layerNorm(x, y.ln1g, y.ln1b);
    const q = linear(ln, y.wq, y.bq, d), k = linear(ln, y.wk, y.bk, d), v = linear(ln, y.wv, y.bv, d);
    const concat = x.map(() => new Array(d).fill(0));
    maps.push([]);
    for (let head = 0; head < h; head++) {
      const w = [];
      for (let i = 0; i < T; i++) {
        const s = [];
        for (let j = 0; j <= i; j++) {
          let dot = 0;
          for (let c = head * dk; c < (head + 1) * dk; c++) dot += q[i][c] * k[j][c];
          s.push(dot / Math.sqrt(dk));
        }
        const max = Math.max(...s), e = s.map((a) => Math.exp(a - max)), z = e.reduce((a, b) => a + b, 0);
        w.push(Array.from({ length: T }, (_, j) => (j <= i ? e[j] / z : 0)));
        if (m.flags[l * h + head]) {
          for (let c = head * dk; c < (head + 1) * dk; c++) concat[i][c] = w[i].reduce((sum, a, j) => sum + a * v[j][c], 0);
        }
      }
      maps[l].push(w);
    }
    const attn = linear(concat, y.wo, y.bo, d);
    x = x.map((row, i) => row.map((a, c) => a + attn[i][c]));
    if (m.mlp) {
      const fc = linear(layerNorm(x, y.ln2g, y.ln2b), y.wfc, y.bfc, 4 * d).map((row) => row.map(gelu));
      const proj = linear(fc, y.wproj, y.bproj, d);
      x = x.map((row, i) => row.map((a, c) => a + proj[i][c]));
    }
  });
  const logits = linear(layerNorm([x[T - 1]], m.lnfg, m.lnfb), m.wu, m.bu, m.vocab)[0];
  const max = Math.max(...logits), e = logits.map((a) => Math.exp(a - max)), z = e.reduce((a, b) => a + b, 0);
  return { maps, probs: e.map((a) => a / z) };
}

test('attention and predict agree with a double-precision forward pass computed in JS from the saved bytes', async () => {
  for (const mlp of [false, true]) {
    await withModel({ task: 'cricket', seed: 6, numLayers: 2, numHeads: 2, dModel: 8, batchSize: 8, mlp }, (lm) => {
      lm.step(40);  // biases and LayerNorm parameters move away from their initial values
      lm.setHeadEnabled(0, 0, false);  // a switched-off head changes layer 2's input
      const model = parseModel(lm.save());
      const text = 'and then virat hit the ball with the bat because it was';
      const ids = Array.from(lm.tokenize(text).ids);
      const ref = referenceForward(model, ids);
      const got = lm.attention(text);
      const T = ids.length;
      let worst = 0;
      for (let l = 0; l < 2; l++) {
        for (let head = 0; head < 2; head++) {
          for (let i = 0; i < T; i++) {
            for (let j = 0; j < T; j++) {
              worst = Math.max(worst, Math.abs(got.weights[((l * 2 + head) * T + i) * T + j] - ref.maps[l][head][i][j]));
            }
          }
        }
      }
      assert.ok(worst <= 1e-4, `mlp ${mlp}: max |attention - reference| = ${worst}`);
      let worstP = 0;
      for (const { id, probability } of lm.predict(text)) worstP = Math.max(worstP, Math.abs(probability - ref.probs[id]));
      assert.ok(worstP <= 1e-4, `mlp ${mlp}: max |probability - reference| = ${worstP}`);
    });
  }
});

test('tokenize and predict: the start token first, probabilities that sum to 1, most probable first', async () => {
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    const { ids, tokens, words } = lm.tokenize('  virat hit\tthe   ball ');
    assert.ok(ids instanceof Int32Array);
    assert.deepEqual(tokens, ['<s>', 'virat', 'hit', 'the', 'ball']);
    assert.deepEqual(words, tokens, 'words: the former name of tokens');
    assert.deepEqual(Array.from(ids), tokens.map((w) => lm.vocabulary.indexOf(w)));
    assert.deepEqual(Array.from(lm.tokenize('').ids), [0]);
    assert.deepEqual(lm.attention(tokens), lm.attention(ids), 'either array is a sequence');
    const all = lm.predict('virat hit the ball because it was');
    assert.equal(all.length, lm.vocabulary.length);
    assert.ok(Math.abs(all.reduce((s, p) => s + p.probability, 0) - 1) < 1e-4);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].probability >= all[i].probability);
    assert.deepEqual(lm.predict('virat hit', { topK: 3 }), lm.predict('virat hit').slice(0, 3));
  });
});

test('generate: deterministic by seed, only vocabulary words, stops at the stop token or the sequence length', async () => {
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    lm.step(50);
    const { seqLen } = lm.task;
    for (const temperature of [0, 0.5, 1, 2]) {
      for (const seed of [1, 2, 3]) {
        const a = lm.generate({ prompt: 'virat', temperature, seed });
        assert.deepEqual(lm.generate({ prompt: 'virat', temperature, seed }), a);
        assert.equal(a.tokens[0], '<s>');
        assert.equal(a.tokens[1], 'virat');
        assert.ok(a.tokens.length <= seqLen);
        for (const w of a.tokens) assert.ok(lm.vocabulary.includes(w) && w !== '<pad>', w);
        assert.ok(a.tokens.length === seqLen || a.tokens.at(-1) === '.' || a.newTokens.length < seqLen, JSON.stringify(a));
        assert.deepEqual(a.newTokens, a.tokens.slice(2));
        assert.deepEqual(lm.tokenize(a.text).words, a.tokens);
      }
    }
    const greedy = (seed) => lm.generate({ temperature: 0, seed }).tokens;
    assert.deepEqual(greedy(1), greedy(99));
    assert.ok(lm.generate({ maxTokens: 2, seed: 4 }).newTokens.length <= 2);
    const samples = new Set([1, 2, 3, 4, 5, 6].map((seed) => lm.generate({ seed, temperature: 2 }).text));
    assert.ok(samples.size > 1, 'different seeds sample different sentences');
  });
  await withModel({ task: 'induction', seed: 1, ...TINY }, (lm) => {
    const g = lm.generate({ prompt: 'a b c', seed: 3 });
    assert.equal(g.tokens.length, lm.task.seqLen, 'induction has no stop token: it fills the sequence');
  });
});

test('300 steps of induction training lower the held-out loss', async () => {
  await withModel({ task: 'induction', seed: 1 }, (lm) => {
    const before = lm.evaluate(256);
    const r = lm.step(300);
    assert.equal(r.step, 300);
    assert.equal(lm.steps, 300);
    const after = lm.evaluate(256);
    assert.equal(after.examples, 256);
    assert.ok(after.loss < before.loss - 0.1, `loss ${before.loss} → ${after.loss}`);
    assert.ok(after.nextTokenAccuracy > before.nextTokenAccuracy);
  });
});

test('head scores: one entry per head, layer-major, with labels; cricket adds coreference and the fixed-position baseline', async () => {
  await withModel({ task: 'induction', seed: 1, ...TINY }, (lm) => {
    const s = lm.headScores(64);
    assert.deepEqual(s.map((h) => [h.layer, h.head]), [[0, 0], [0, 1], [1, 0], [1, 1]]);
    for (const h of s) {
      for (const k of ['previousToken', 'induction', 'duplicateToken', 'firstToken']) assert.ok(h[k] >= 0 && h[k] <= 1 + 1e-6, k);
      assert.ok(h.label === null || typeof h.label === 'string');
      assert.equal('coreference' in h, false);
    }
    assert.deepEqual(lm.headReport(64).heads, s);
    assert.equal(lm.headReport(64).bestFixedPosition, undefined);
  });
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    const r = lm.headReport(64);
    assert.equal(r.threshold, 0.5);
    assert.ok(r.bestFixedPosition > 0 && r.bestFixedPosition <= 1);
    assert.equal(r.bestCoreference, Math.max(...r.heads.map((h) => h.coreference)));
    for (const h of r.heads) assert.ok(h.positionPeak >= 0 && h.coreference >= 0);
  });
});

test('results are plain data (structured-cloneable); no Embind handles leak and repeated calls do not grow the heap', async () => {
  const handles = lab.liveHandleCount();
  await withModel({ task: 'cricket', seed: 1, ...TINY }, (lm) => {
    const call = () => [lm.step(2), lm.evaluate(16), lm.headScores(16), lm.headReport(16), lm.tokenize('virat hit'),
      lm.attention('virat hit the ball'), lm.predict('virat'), lm.generate({ seed: 2 }), lm.save(), lm.config(), lm.task];
    const first = call();
    for (const r of first) assert.deepEqual(structuredClone(r), r);
    const heap = lab.info().trainingHeapInUseBytes;
    for (let i = 0; i < 20; i++) call();
    assert.equal(lab.info().trainingHeapInUseBytes, heap);
  });
  assert.equal(lab.liveHandleCount(), handles);
});

test('a disposed model throws a TypeError naming the method; dispose twice and Symbol.dispose are fine', async () => {
  const lm = await lab.createLanguageModel({ task: 'induction', ...TINY });
  lm[Symbol.dispose]();
  lm.dispose();
  for (const call of [() => lm.step(), () => lm.attention('a'), () => lm.generate(), () => lm.save(), () => lm.steps, () => lm.headScores()]) {
    assert.throws(call, (e) => e instanceof TypeError && /LanguageModel\.\w+: this model has been disposed/.test(e.message));
  }
});
