// The model families through loadPretrained against the float64 references of
// tests/golden/families/ (make_families.py): Llama (grouped-query, llama3 rope scaling, tied
// without lm_head; bfloat16 and sharded), Qwen2, Mistral, Pythia, Phi-3, Gemma. Logits and
// attention within 1e-4 (float32) and 2e-3 (16-bit), ablation included; model.info's kind and
// key-value heads; tokens of each text as the reference's; a config key HeadLab does not run is refused naming it.
// The encoders (BERT with token types and a sentence pair, RoBERTa, DistilBERT): masked-LM logits at
// every position, attention, ablation, and fill against the reference's top 5 at each mask. BertModel
// (no head): the last hidden state and attention; fill and the rest that need logits refused in words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import { assertClose, toArrayBuffer } from './pretrained-helpers.mjs';

const lab = await createHeadlab();
const ROOT = new URL('../golden/families/', import.meta.url);
const DECODERS = ['llama-gqa', 'llama-sp-bf16', 'llama-sp-bf16-sharded', 'qwen2', 'mistral-window', 'pythia', 'phi3', 'gemma'];

const read = (name, file) => readFileSync(new URL(`${name}/${file}`, ROOT));
const readJson = (name, file) => JSON.parse(read(name, file).toString('utf8'));

function objects(name) {
  const config = readJson(name, 'config.json');
  const tokenizer = readJson(name, 'tokenizer.json');
  const weights = existsSync(new URL(`${name}/model.safetensors`, ROOT))
    ? toArrayBuffer(read(name, 'model.safetensors'))
    : [...new Set(Object.values(readJson(name, 'model.safetensors.index.json').weight_map))].map((f) => toArrayBuffer(read(name, f)));
  return { config, tokenizer, weights };
}

for (const name of DECODERS) {
  test(`${name}: logits and attention of every case agree with the float64 reference, ablation included`, async () => {
    const expected = readJson(name, 'expected.json');
    const tol = expected.shapes && readJson(name, 'config.json').torch_dtype === 'float32' ? 1e-4 : 2e-3;
    const model = await lab.loadPretrained(objects(name));
    try {
      const { numLayers: L, numHeads: H, vocabSize: V, kind, numKeyValueHeads } = model.info;
      assert.deepEqual([L, H, V, kind, numKeyValueHeads],
        [expected.shapes.layers, expected.shapes.heads, expected.shapes.vocab, 'decoder', expected.shapes.kvHeads]);
      const worst = { logits: 0, attention: 0 };
      for (const c of expected.cases) {
        const ablate = c.ablate.map(([layer, head]) => ({ layer, head }));
        // The tokenizer (byte-level BPE, or SentencePiece-style with byte fallback and <s> / <bos>
        // from the post-processor) gives the reference's ids.
        assert.deepEqual(Array.from(model.tokenize(c.text).ids), c.ids, `${name} ${c.name}: ids of ${JSON.stringify(c.text)}`);
        const r = await model.run(c.text, { attention: true, allLogits: true, ablate });
        const T = c.ids.length;
        assert.equal(r.attention.length, L * H * T * T);
        worst.logits = Math.max(worst.logits, assertClose(r.logits, c.logits, tol, `${name} ${c.name} logits`));
        worst.attention = Math.max(worst.attention, assertClose(r.attention, c.attention, tol, `${name} ${c.name} attention`));
      }
      console.log(`${name}: largest difference from the float64 reference: logits ${worst.logits.toExponential(2)}, attention ${worst.attention.toExponential(2)} (tolerance ${tol})`);
    } finally {
      model.dispose();
    }
  });
}

test('config keys HeadLab does not run are refused, naming the key', async () => {
  const base = objects('llama-gqa');
  const bad = (patch) => lab.loadPretrained({ ...base, config: { ...base.config, ...patch } });
  await assert.rejects(bad({ rope_scaling: { rope_type: 'yarn', factor: 4 } }), /rope_scaling\.rope_type "yarn" is not supported/);
  await assert.rejects(bad({ final_logit_softcapping: 30 }), /final_logit_softcapping 30 is not supported/);
  await assert.rejects(bad({ use_sliding_window: true }), /use_sliding_window true is not supported/);
  await assert.rejects(bad({ hidden_act: 'relu' }), /hidden_act "relu" is not supported/);
  await assert.rejects(bad({ num_key_value_heads: 3 }), /num_key_value_heads 3 does not divide num_attention_heads 4/);
});

const ENCODERS = ['bert', 'roberta', 'distilbert'];

for (const name of ENCODERS) {
  test(`${name}: masked-LM logits, attention, ablation, ids and token types agree with the float64 reference; fill gives its top 5`, async () => {
    const expected = readJson(name, 'expected.json');
    const tol = readJson(name, 'config.json').torch_dtype === 'float32' ? 1e-4 : 2e-3;
    const model = await lab.loadPretrained(objects(name));
    try {
      const { numLayers: L, numHeads: H, vocabSize: V, kind } = model.info;
      assert.deepEqual([L, H, V, kind], [expected.shapes.layers, expected.shapes.heads, expected.shapes.vocab, 'encoder']);
      const worst = { logits: 0, attention: 0 };
      for (const c of expected.cases) {
        const ablate = c.ablate.map(([layer, head]) => ({ layer, head }));
        const r = await model.run(c.text, { attention: true, ablate, ...(c.pair === undefined ? {} : { pair: c.pair }) });
        assert.deepEqual(Array.from(r.ids), c.ids, `${name} ${c.name}: ids`);
        assert.deepEqual(Array.from(r.tokenTypes ?? new Array(c.ids.length).fill(0)), c.tokenTypes, `${name} ${c.name}: token types`);
        const T = c.ids.length;
        assert.equal(r.logits.length, T * V, 'the masked-LM logits at every position');
        worst.logits = Math.max(worst.logits, assertClose(r.logits, c.logits, tol, `${name} ${c.name} logits`));
        worst.attention = Math.max(worst.attention, assertClose(r.attention, c.attention, tol, `${name} ${c.name} attention`));
      }
      for (const f of expected.fill) {
        const got = await model.fill(f.text);
        assert.deepEqual(Array.from(got.ids), f.ids, `${name} fill ids of ${JSON.stringify(f.text)}`);
        assert.deepEqual(got.masks.map((m) => m.position), f.positions);
        assert.deepEqual(got.masks.map((m) => m.top.map((t) => t.id)), f.top, `${name} fill: the reference's top 5 at each mask`);
      }
      console.log(`${name}: largest difference from the float64 reference: logits ${worst.logits.toExponential(2)}, attention ${worst.attention.toExponential(2)} (tolerance ${tol})`);
      if (name === 'bert') {
        // Token types given as ids: the pair case's, and then all 0, which must move the logits.
        const pair = expected.cases.find((c) => c.pair !== undefined);
        const typed = await model.run(pair.ids, { tokenTypes: pair.tokenTypes });
        assertClose(typed.logits, pair.logits, tol, 'bert pair from ids and tokenTypes');
        const untyped = await model.run(pair.ids);
        assert.ok(untyped.logits.some((x, i) => Math.abs(x - pair.logits[i]) > 100 * tol), 'token types change the logits');
        await assert.rejects(model.run(pair.ids, { tokenTypes: [0, 1] }), /tokenTypes must have one entry per token \(19\), got 2/);
        await assert.rejects(model.run(pair.ids, { tokenTypes: pair.ids.map(() => 2) }), /token type 2 at position 0 is outside 0\.\.1/);
        await assert.rejects(model.run(pair.ids, { pair: 'x' }), /pair needs textOrIds to be a string/);
        await assert.rejects(model.fill('no mask here'), /text has no mask token; write \[MASK\]/);
      }
      await assert.rejects(model.generate('the'), /generate: this model is an encoder .*use fill/);
      await assert.rejects(model.logitLens('the'), /logitLens: this model is an encoder/);
    } finally {
      model.dispose();
    }
  });
}

test('decoders refuse fill, pair and tokenTypes, naming them', async () => {
  const model = await lab.loadPretrained(objects('llama-gqa'));
  try {
    await assert.rejects(model.fill('the [MASK]'), /fill needs an encoder/);
    await assert.rejects(model.run('the', { pair: 'ball' }), /pair is for encoders/);
    await assert.rejects(model.run('the', { tokenTypes: [0] }), /tokenTypes is for encoders/);
  } finally {
    model.dispose();
  }
});

test('bert-model (BertModel, no head): the last hidden state and attention agree with the float64 reference; what needs logits is refused', async () => {
  const name = 'bert-model';
  const expected = readJson(name, 'expected.json');
  const model = await lab.loadPretrained(objects(name));
  try {
    const { numLayers: L, numHeads: H, dModel: d, kind, head, architecture } = model.info;
    assert.deepEqual([architecture, kind, head, L, H, d], ['BertModel', 'encoder', 'none', expected.shapes.layers, expected.shapes.heads, expected.shapes.hidden]);
    const worst = { hidden: 0, attention: 0 };
    for (const c of expected.cases) {
      const ablate = c.ablate.map(([layer, h]) => ({ layer, head: h }));
      const r = await model.run(c.text, { attention: true, ablate, ...(c.pair === undefined ? {} : { pair: c.pair }) });
      assert.deepEqual(Array.from(r.ids), c.ids, `${c.name}: ids`);
      const T = c.ids.length;
      assert.equal(r.hidden.length, T * d, 'the last hidden state, [T, dModel]');
      assert.equal(r.logits.length, 0, 'no logits');
      assert.deepEqual(r.next, []);
      worst.hidden = Math.max(worst.hidden, assertClose(r.hidden, c.hidden, 1e-4, `${c.name} hidden`));
      worst.attention = Math.max(worst.attention, assertClose(r.attention, c.attention, 1e-4, `${c.name} attention`));
    }
    console.log(`${name}: largest difference from the float64 reference: hidden ${worst.hidden.toExponential(2)}, attention ${worst.attention.toExponential(2)} (tolerance 1e-4)`);
    // The head-score sequence's bidirectional attention, as the reference's; headScores works on it.
    const hs = expected.headScores;
    assertClose((await model.run(hs.sequence, { attention: true })).attention, hs.attention, 1e-4, 'head-score sequence attention');
    const { scores } = await model.headScores({ length: 6 });
    assert.equal(scores.length, L * H);
    await assert.rejects(model.run('the ball', { allLogits: true }), /run: allLogits: this model \(BertModel\) has no head, so it has no logits; run gives its last hidden state as hidden/);
    await assert.rejects(model.fill('the [MASK] was full.'), /fill: this model \(BertModel\) is an encoder without a head: .*BertForMaskedLM/);
    await assert.rejects(model.logitLens('the'), /logitLens: this model \(BertModel\) is an encoder without a head/);
    await assert.rejects(model.generate('the'), /generate: this model \(BertModel\) is an encoder without a head/);
    await assert.rejects(model.patchHeads({ clean: 'the ball', corrupted: 'the bat', answer: 5, wrong: 6, position: 1 }), /patchHeads: this model \(BertModel\) is an encoder without a head/);
    await assert.rejects(model.directLogitAttribution({ ids: 'the ball', answer: 5, wrong: 6 }), /directLogitAttribution: this model \(BertModel\) is an encoder without a head/);
  } finally {
    model.dispose();
  }
});
