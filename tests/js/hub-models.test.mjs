// The explorer's table of Hugging Face models (web/lib/teach/hub-models.js): every row well formed,
// ids and button ids unique, sizes positive and at least the parameters' bytes in the row's dtype,
// the phone mark derived from the size, every family one the engine's config reader runs (its
// architecture in SUPPORTED_ARCHITECTURES, and readConfig on a fixture config.json of that
// architecture gives the row's kind), the picker's groups holding every row once, and the words
// of every row in English (the table's own) and Spanish. Each row's sizes agree with each other: weightBytes
// is its parameters in its dtype (plus the causal-mask buffers some families' files hold) within 2 %, and
// where a row has its shape the parameters are the count from it (GPT-2 small's against the repository's
// 124,439,808).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  HUB_MODELS, FAMILIES, KINDS, PHONE_BYTES, hubModel, pickerGroups, whyKey, buttonTestId,
} from '../../web/lib/teach/hub-models.js';
import { SUPPORTED_ARCHITECTURES, readConfig } from '../../web/lib/api/pretrained-config.js';
import catalogue from '../../web/lib/i18n/catalogues/model-explorer.js';

const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../golden');
const BYTES_PER = { F32: 4, F16: 2, BF16: 2 };

/** architecture → a config.json of that architecture from the fixtures (families and pretrained). */
function fixtureConfigs() {
  const out = new Map();
  for (const set of ['families', 'pretrained']) {
    for (const name of readdirSync(path.join(GOLDEN, set))) {
      const file = path.join(GOLDEN, set, name, 'config.json');
      if (!existsSync(file)) continue;
      const config = JSON.parse(readFileSync(file, 'utf8'));
      for (const a of config.architectures ?? []) if (!out.has(a)) out.set(a, config);
    }
  }
  return out;
}

test('every row is well formed: id, title, family, shape, parameters, dtype, sizes, marks, words', () => {
  assert.ok(HUB_MODELS.length >= 12, `${HUB_MODELS.length} rows`);
  for (const m of HUB_MODELS) {
    const what = m.id;
    assert.match(m.id, /^[\w.-]+\/[\w.-]+$/, `${what}: id is owner/name`);
    assert.ok(m.revision === undefined || (typeof m.revision === 'string' && m.revision.length > 0), `${what}: revision`);
    assert.ok(typeof m.title === 'string' && m.title.trim().length > 0, `${what}: title`);
    const family = FAMILIES.find((f) => f.family === m.family);
    assert.ok(family, `${what}: family ${m.family} is one of FAMILIES`);
    assert.equal(m.kind, family.kind, `${what}: kind`);
    assert.equal(m.architecture, family.architecture, `${what}: architecture`);
    for (const k of ['layers', 'heads', 'kvHeads']) assert.ok(Number.isInteger(m[k]) && m[k] > 0, `${what}: ${k} ${m[k]}`);
    assert.equal(m.heads % m.kvHeads, 0, `${what}: kvHeads ${m.kvHeads} divides heads ${m.heads}`);
    if (m.kind === 'encoder') assert.equal(m.kvHeads, m.heads, `${what}: an encoder has no grouped-query attention`);
    assert.ok(Number.isFinite(m.parameters) && m.parameters > 0, `${what}: parameters`);
    assert.ok(m.dtype in BYTES_PER, `${what}: dtype ${m.dtype}`);
    for (const k of ['weightBytes', 'tokenizerBytes', 'bytes']) assert.ok(Number.isFinite(m[k]) && m[k] > 0, `${what}: ${k} ${m[k]}`);
    assert.equal(m.bytes, m.weightBytes + m.tokenizerBytes, `${what}: bytes is what is downloaded`);
    // A file holds at least its parameters in its dtype (some carry buffers too: Pythia's, TinyStories').
    const least = m.parameters * BYTES_PER[m.dtype];
    assert.ok(m.weightBytes >= 0.97 * least, `${what}: ${m.weightBytes} bytes of weights for ${m.parameters} ${m.dtype} parameters (at least ${least})`);
    assert.equal(m.phone, m.bytes < PHONE_BYTES, `${what}: phone mark`);
    assert.equal(typeof m.gated, 'boolean', `${what}: gated`);
    assert.ok(typeof m.why === 'string' && m.why.length > 10, `${what}: why`);
    assert.ok(Object.isFrozen(m), `${what}: rows are frozen`);
  }
});

test('ids, catalogue keys and button test ids are unique; hubModel finds each row', () => {
  for (const key of [(m) => m.id, whyKey, buttonTestId]) {
    const seen = HUB_MODELS.map(key);
    assert.equal(new Set(seen).size, seen.length, `duplicates among ${seen.join(', ')}`);
  }
  for (const m of HUB_MODELS) assert.equal(hubModel(m.id), m);
  assert.equal(hubModel('nobody/nothing'), undefined);
  // The ids the browser tests and engine checks click.
  assert.equal(buttonTestId(hubModel('openai-community/gpt2')), 'explorer-hub-gpt-2-small');
  assert.equal(buttonTestId(hubModel('roneneldan/TinyStories-1M')), 'explorer-hub-tinystories-1m');
});

test('every family is one the engine\'s config reader runs, and reads as the row\'s kind', () => {
  const configs = fixtureConfigs();
  for (const f of FAMILIES) {
    assert.ok(SUPPORTED_ARCHITECTURES.includes(f.architecture), `${f.family}: ${f.architecture} is in SUPPORTED_ARCHITECTURES`);
    const config = configs.get(f.architecture);
    assert.ok(config, `a fixture config.json of ${f.architecture}`);
    const { info } = readConfig('test', config);
    assert.equal(info.architecture, f.architecture);
    assert.equal(info.kind, f.kind, `${f.family}: readConfig says ${info.kind}`);
  }
});

test('the table says the phone and gated marks the issue asks for', () => {
  // A few rows whose marks follow from their published sizes and licences.
  assert.equal(hubModel('HuggingFaceTB/SmolLM2-135M').phone, true);
  assert.equal(hubModel('distilbert/distilbert-base-uncased').phone, true);
  assert.equal(hubModel('openai-community/gpt2').phone, false);
  assert.equal(hubModel('meta-llama/Llama-3.2-1B').gated, true);
  assert.equal(hubModel('google/gemma-2b').gated, true);
  assert.ok(HUB_MODELS.some((m) => m.kvHeads < m.heads), 'some rows have grouped-query attention');
  for (const kind of KINDS) assert.ok(HUB_MODELS.some((m) => m.kind === kind), `a ${kind}`);
});

test('the picker groups hold every row once, decoders before encoders, families in order', () => {
  const groups = pickerGroups();
  assert.deepEqual(groups.map((g) => g.kind), ['decoder', 'encoder']);
  const listed = groups.flatMap((g) => g.families.flatMap((f) => f.models));
  assert.equal(listed.length, HUB_MODELS.length);
  assert.deepEqual(new Set(listed), new Set(HUB_MODELS));
  for (const g of groups) {
    for (const f of g.families) {
      assert.ok(f.models.length > 0);
      for (const m of f.models) assert.deepEqual([m.kind, m.family], [g.kind, f.family]);
    }
    const order = g.families.map((f) => FAMILIES.findIndex((x) => x.family === f.family));
    assert.deepEqual(order, [...order].sort((a, b) => a - b), 'families in FAMILIES\' order');
  }
  // Only the families with rows, and a table of encoders alone gives one group.
  assert.deepEqual(pickerGroups(HUB_MODELS.filter((m) => m.kind === 'encoder')).map((g) => g.kind), ['encoder']);
  assert.throws(() => pickerGroups('all'), /pickerGroups: models must be an array/);
});

test('every row\'s words are in the catalogue: English as in the table, Spanish too', () => {
  for (const m of HUB_MODELS) {
    assert.equal(catalogue.en[whyKey(m)], m.why, `${m.id}: English words`);
    assert.ok(typeof catalogue.es[whyKey(m)] === 'string' && catalogue.es[whyKey(m)] !== m.why, `${m.id}: Spanish words`);
  }
});

// The excess over the parameters of the rows whose files also hold a causal-mask buffer per layer
// ([1, 1, P, P], P the context: GPT-2's h.N.attn.bias, GPT-Neo's h.N.attn.attention.bias, GPT-NeoX's
// layers.N.attention.bias; cpp/src/pretrained/pretrained_arch.cpp ignores them). Element bytes as the sizes
// fit them: 4 for GPT-2's float mask (as tests/golden/pretrained/README.md's gpt2 fixture stores it), 1 for a bool.
const MASK_BUFFERS = {
  'openai-community/gpt2': 12 * 1024 ** 2 * 4,
  'distilbert/distilgpt2': 6 * 1024 ** 2 * 4,
  'EleutherAI/pythia-70m': 6 * 2048 ** 2,
  'EleutherAI/pythia-160m': 12 * 2048 ** 2,
  'roneneldan/TinyStories-1M': 8 * 2048 ** 2,
  'roneneldan/TinyStories-33M': 4 * 2048 ** 2,
};
// Rows whose weightBytes no count above explains, with why; the test fails when this list is not exactly
// the rows that fail, so a new inconsistency (or a fixed one) is seen.
const UNEXPLAINED = {
  // 125.2 M float32 parameters are 500.8 MB; the file is 25.4 MB more, where a bool mask on each of its 12
  // layers (as TinyStories', also GPT-Neo, have) would be 50.3 MB. Which number is off is not known here.
  'EleutherAI/gpt-neo-125m': 'weightBytes is 25.4 MB over its parameters, half of 12 layers of 2048² masks',
};

test('every row\'s weight bytes are its parameters in its dtype (and its mask buffers) within 2 %', () => {
  const off = [];
  for (const m of HUB_MODELS) {
    const expected = m.parameters * BYTES_PER[m.dtype] + (MASK_BUFFERS[m.id] ?? 0);
    const ratio = m.weightBytes / expected;
    if (Math.abs(ratio - 1) > 0.02) off.push(`${m.id}: ${m.weightBytes} bytes for ${expected} (${m.parameters} ${m.dtype} parameters + ${MASK_BUFFERS[m.id] ?? 0} of masks), ${(100 * (ratio - 1)).toFixed(1)} %`);
  }
  assert.deepEqual(off.map((line) => line.split(':')[0]), Object.keys(UNEXPLAINED), off.join('\n'));
  // A row that fits without its buffers does not need them.
  for (const id of Object.keys(MASK_BUFFERS)) {
    const m = hubModel(id);
    assert.ok(m.weightBytes > 1.02 * m.parameters * BYTES_PER[m.dtype], `${id}: no masks needed`);
  }
});

/**
 * Parameters from a row's shape, as each family's checkpoint stores them: Llama (no biases, key-value heads
 * of d / heads each, RMSNorm weights, SwiGLU), GPT-2 (fused QKV, biases, learned positions, tied head), BERT
 * as bert-base-uncased's own file holds it (token types 2, pooler, the masked-LM transform with its bias,
 * the next-sentence head: pretrained_arch.cpp's kBert lists them).
 */
function countParameters(m) {
  const { dModel: d, dFF: f, vocab: V, positions: P = 0, tied } = m.shape;
  const L = m.layers;
  const embed = V * d * (tied ? 1 : 2);
  switch (m.family) {
    case 'Llama': {
      const kv = m.kvHeads * (d / m.heads);
      return embed + L * (2 * d * d + 2 * d * kv + 3 * d * f + 2 * d) + d;
    }
    case 'GPT-2':
      return embed + P * d + L * (2 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * d + (d * f + f) + (f * d + d)) + 2 * d;
    case 'BERT':
      return embed + P * d + 2 * d + 2 * d + L * (4 * (d * d + d) + 2 * d + (d * f + f) + (f * d + d) + 2 * d) +
        (d * d + d) + (d * d + d) + 2 * d + V + (2 * d + 2);
    default:
      throw new Error(`countParameters: no count for the family ${m.family}`);
  }
}

test('parameters agree with the count from the row\'s shape, where the row has one, within 1 % (the table rounds)', () => {
  const shaped = HUB_MODELS.filter((m) => m.shape);
  assert.deepEqual(shaped.map((m) => m.id), ['HuggingFaceTB/SmolLM2-135M', 'openai-community/gpt2', 'google-bert/bert-base-uncased']);
  // Independent answers: the repository's own counts of these shapes.
  assert.equal(countParameters(hubModel('openai-community/gpt2')), 124_439_808, 'bench/pretrained/README.md: 124,439,808');
  for (const m of shaped) {
    const n = countParameters(m);
    assert.ok(Math.abs(m.parameters / n - 1) <= 0.01, `${m.id}: the table says ${m.parameters}, the shape gives ${n}`);
    assert.ok(Math.abs(m.weightBytes / (n * BYTES_PER[m.dtype] + (MASK_BUFFERS[m.id] ?? 0)) - 1) <= 0.001, `${m.id}: weightBytes against the count`);
  }
});
