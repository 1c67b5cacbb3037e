// The raw headlab_pretrained module (PretrainedCore, cpp/bindings/pretrained_bindings.cpp) under
// Node, on the PyTorch-made fixtures of tests/golden/pretrained/: the seam the JavaScript API
// (web/lib/api/pretrained.js) builds on. Logits and attention against the float64 answers,
// ablation, lens, head scores, greedy generation, errors as strings naming the file and tensor,
// and no heap growth over repeated runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';

const gen = new URL('../../web/lib/gen/', import.meta.url);
const fixtures = new URL('../golden/pretrained/', import.meta.url);
const { default: createHeadlabPretrained } = await import(new URL('headlab_pretrained.mjs', gen));
const M = await createHeadlabPretrained({ wasmBinary: readFileSync(new URL('headlab_pretrained.wasm', gen)) });

const json = (folder, file) => JSON.parse(readFileSync(new URL(`${folder}/${file}`, fixtures), 'utf8'));

/** config.json → the core's cfg (what the API does). */
function coreConfig(c) {
  if (c.model_type === 'gpt_neo') {
    const windows = c.attention_types.flatMap(([kinds, n]) => Array.from({ length: n }, () => kinds).flat())
      .map((k) => (k === 'local' ? c.window_size : 0));
    return { architecture: 'gpt_neo', numLayers: c.num_layers, numHeads: c.num_heads, dModel: c.hidden_size,
      dFF: c.intermediate_size ?? 4 * c.hidden_size, vocabSize: c.vocab_size, contextLength: c.max_position_embeddings,
      layerNormEps: c.layer_norm_epsilon, scaleScores: false, windows, activation: c.activation_function };
  }
  return { architecture: 'gpt2', numLayers: c.n_layer, numHeads: c.n_head, dModel: c.n_embd, dFF: c.n_inner ?? 4 * c.n_embd,
    vocabSize: c.vocab_size, contextLength: c.n_positions, layerNormEps: c.layer_norm_epsilon, scaleScores: true,
    windows: new Array(c.n_layer).fill(0), activation: c.activation_function };
}

function addFile(core, name, bytes, mod = M) {
  const p = core.allocFile(bytes.length);
  assert.ok(p > 0, 'allocFile');
  mod.HEAPU8.set(bytes, p);
  return core.addSafetensors(name, p, bytes.length);
}

function load(folder, mod = M) {
  const cfg = coreConfig(json(folder, 'config.json'));
  const core = new mod.PretrainedCore();
  assert.equal(core.configure(cfg), '');
  const files = existsSync(new URL(`${folder}/model.safetensors.index.json`, fixtures))
    ? [...new Set(Object.values(json(folder, 'model.safetensors.index.json').weight_map))] : ['model.safetensors'];
  for (const f of files) assert.equal(addFile(core, f, readFileSync(new URL(`${folder}/${f}`, fixtures)), mod), '');
  assert.equal(core.finish(), '');
  return { core, cfg };
}

function maxAbs(got, want) {
  assert.equal(got.length, want.length);
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]));
  return m;
}

function withTokens(core, ids) {
  core.tokenBuffer(ids.length).set(ids);
  return ids.length;
}

for (const folder of ['gpt2-f32', 'gpt2-noprefix-f32', 'gpt2-f16', 'gpt2-bf16', 'gpt2-sharded', 'neo-f32', 'neo-bf16']) {
  test(`${folder}: logits, attention, ablation, lens, head scores and greedy ids agree with the float64 answers`, () => {
    const tol = folder.includes('16') ? 2e-3 : 1e-4;
    const expected = json(folder, 'expected.json');
    const { core, cfg } = load(folder);
    try {
      const info = core.info();
      assert.equal(info.dtype, folder.includes('bf16') ? 'bfloat16' : folder.includes('f16') ? 'float16' : 'float32');
      assert.ok(info.parameters > 0 && info.bytes > 0);
      const lh = cfg.numLayers * cfg.numHeads, V = cfg.vocabSize;
      for (const c of expected.cases) {
        const ablate = new Uint8Array(lh);
        for (const [l, h] of c.ablate) ablate[l * cfg.numHeads + h] = 1;
        const T = withTokens(core, c.ids);
        const r = core.run(T, { attention: true, allLogits: true, ablate, lens: !!c.lens, lensTopK: 3 });
        assert.notEqual(typeof r, 'string', r);
        assert.ok(r.logits instanceof Float32Array && r.logits.length === T * V);
        assert.ok(maxAbs(r.logits, c.logits) <= tol, `${c.name}: logits off by ${maxAbs(r.logits, c.logits)}`);
        assert.ok(maxAbs(r.attention, c.attention) <= tol, `${c.name}: attention off by ${maxAbs(r.attention, c.attention)}`);
        // Last position only, fused attention (no weights): the same numbers.
        const last = core.run(T, { ablate });
        assert.equal(last.attention, undefined);
        assert.ok(maxAbs(last.logits, c.logits.slice((T - 1) * V)) <= tol);
        if (c.lens) {
          assert.equal(r.lensIds.length, cfg.numLayers * T * 3);
          for (let i = 0; i < cfg.numLayers * T; i++) {
            const row = c.lens.slice(i * V, (i + 1) * V), mx = Math.max(...row);
            const z = row.reduce((s, x) => s + Math.exp(x - mx), 0);
            const best = row.indexOf(mx);
            assert.equal(row[r.lensIds[i * 3]], mx, `lens row ${i}: top id ${r.lensIds[i * 3]} vs ${best}`);
            assert.ok(Math.abs(r.lensProbs[i * 3] - 1 / z) <= tol);
          }
        }
      }
      const hs = expected.headScores;
      const scores = core.headScores(withTokens(core, hs.sequence), hs.n);
      assert.ok(scores instanceof Float32Array && scores.length === lh * 4);
      for (const s of hs.scores) {
        const i = (s.layer * cfg.numHeads + s.head) * 4;
        assert.ok(Math.abs(scores[i] - s.previousToken) <= tol);
        assert.ok(Math.abs(scores[i + 1] - s.duplicateToken) <= tol);
        assert.ok(Math.abs(scores[i + 2] - s.induction) <= tol);
        assert.ok(Math.abs(scores[i + 3] - s.firstToken) <= tol);
      }
      const g = expected.greedy;
      const ids = core.generate(withTokens(core, g.prompt), g.next.length, 0, 1, -1, {});
      assert.deepEqual([...ids], g.next);
    } finally {
      core.delete();
    }
  });
}

test('sampling is seeded, stops before the stop id and at the context; errors are strings', () => {
  const { core, cfg } = load('gpt2-f32');
  try {
    const prompt = [281, 275, 261];
    const a = core.generate(withTokens(core, prompt), 50, 1, 7, -1, {});
    const b = core.generate(withTokens(core, prompt), 50, 1, 7, -1, {});
    assert.deepEqual([...a], [...b]);
    assert.equal(a.length, cfg.contextLength - prompt.length);
    const stopped = core.generate(withTokens(core, prompt), 50, 1, 7, a[3], {});
    assert.ok(stopped.length <= 3);
    assert.match(core.run(0, {}), /length 0 is outside/);
    withTokens(core, [1, 2, 400]);
    assert.match(core.run(3, {}), /token 400 at position 2 is outside 0..352/);
    withTokens(core, [1, 2, 3]);
    assert.match(core.run(3, { ablate: new Uint8Array(3) }), /ablate must have numLayers \* numHeads = 8 entries/);
    assert.match(core.headScores(3, 2), /2n \+ 1 tokens/);
  } finally {
    core.delete();
  }
});

test('damaged files and configs: errors name the file and the tensor or field, nothing aborts', () => {
  const cfg = coreConfig(json('gpt2-f32', 'config.json'));
  const good = readFileSync(new URL('gpt2-f32/model.safetensors', fixtures));
  const attempt = (bytes, c = cfg) => {
    const core = new M.PretrainedCore();
    try {
      const e = core.configure(c);
      if (e) return e;
      return addFile(core, 'model.safetensors', bytes) || core.finish();
    } finally {
      core.delete();
    }
  };
  assert.equal(attempt(good), '');
  assert.match(attempt(good.subarray(0, 6)), /^model\.safetensors: truncated/);
  assert.match(attempt(good.subarray(0, good.length - 10)), /^model\.safetensors: [\w.]+: data_offsets .* beyond the data/);
  const long = Uint8Array.from(good);
  long[6] = 1;
  assert.match(attempt(long), /^model\.safetensors: header length \d+ runs past the end of the file/);
  assert.match(attempt(good, { ...cfg, dModel: 64 }), /^model\.safetensors: [\w.]+: shape \[\d+(, \d+)*\] disagrees with config\.json/);
  assert.match(attempt(good, { ...cfg, dtype: 'BF16' }), /^model\.safetensors: [\w.]+: dtype F32 disagrees with config\.json/);
  assert.match(attempt(good, { ...cfg, architecture: 'llama' }), /architecture must be 'gpt2' or 'gpt_neo'/);
  assert.match(attempt(good, { ...cfg, windows: [0] }), /windows must have one entry per layer/);
  assert.match(attempt(good, { ...cfg, numHeads: 5 }), /dModel must be a positive multiple of numHeads/);
  assert.match(attempt(good, { ...cfg, activation: 'relu' }), /activation must be 'gelu_new'/);
});

test('repeated runs do not grow the heap; memoryBytes counts weights and activations', () => {
  const { core } = load('gpt2-f16');
  try {
    const ids = json('gpt2-f16', 'expected.json').cases[0].ids;
    core.run(withTokens(core, ids), { attention: true, lens: true });
    const heap = M.HEAPU8.length, mem = core.memoryBytes();
    for (let i = 0; i < 50; i++) core.run(withTokens(core, ids), { attention: true, lens: true, allLogits: true });
    assert.equal(M.HEAPU8.length, heap);
    assert.ok(core.memoryBytes() >= core.info().bytes);
    assert.ok(core.memoryBytes() - mem < 200000, 'activations stay as sized');
  } finally {
    core.delete();
  }
});

test('the scalar flavour (engines without WebAssembly SIMD) gives the same answers', async () => {
  const { default: create } = await import(new URL('headlab_pretrained_scalar.mjs', gen));
  const S = await create({ wasmBinary: readFileSync(new URL('headlab_pretrained_scalar.wasm', gen)) });
  for (const folder of ['gpt2-f16', 'neo-f32']) {
    const tol = folder.includes('16') ? 2e-3 : 1e-4;
    const { core, cfg } = load(folder, S);
    try {
      for (const c of json(folder, 'expected.json').cases) {
        const ablate = new Uint8Array(cfg.numLayers * cfg.numHeads);
        for (const [l, h] of c.ablate) ablate[l * cfg.numHeads + h] = 1;
        const r = core.run(withTokens(core, c.ids), { attention: true, allLogits: true, ablate });
        assert.ok(maxAbs(r.logits, c.logits) <= tol, `${folder} ${c.name}: logits`);
        assert.ok(maxAbs(r.attention, c.attention) <= tol, `${folder} ${c.name}: attention`);
      }
    } finally {
      core.delete();
    }
  }
});

test('the module reports the heap cap it was linked with (4 GB less a 64 KiB page: room for TinyLlama and Llama 3.2 1B)', () => {
  assert.equal(M.heapMax(), 2 ** 32 - 2 ** 16);
});
