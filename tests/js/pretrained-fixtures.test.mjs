// Python-free consistency check of the pretrained fixtures: every safetensors header is parsed here
// (independently of make_pretrained.py's writer) and its tensor names, shapes, dtypes and offsets are
// checked against config.json and Hugging Face's layouts; expected.json's arrays have the shapes the
// SPEC gives and its head scores follow from its own sequence's definitions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';

const root = new URL('../golden/pretrained/', import.meta.url);
const folders = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(new URL(`${e.name}/config.json`, root)))
  .map((e) => e.name)
  .sort();
const read = (folder, file) => readFileSync(new URL(`${folder}/${file}`, root));
const readJson = (folder, file) => JSON.parse(read(folder, file).toString('utf8'));
const BYTES = { F32: 4, F16: 2, BF16: 2 };

/** Parses one safetensors file: { header (without __metadata__), metadata, dataBytes }. */
function parseSafetensors(buf, file) {
  assert.ok(buf.length >= 8, `${file}: shorter than the 8-byte header length`);
  const n = Number(buf.readBigUInt64LE(0));
  assert.ok(8 + n <= buf.length, `${file}: header length ${n} beyond the file`);
  assert.equal(n % 8, 0, `${file}: header padded to a multiple of 8`);
  const text = buf.subarray(8, 8 + n).toString('utf8');
  assert.equal(text.trimEnd().length + (n - text.trimEnd().length), n);
  const header = JSON.parse(text);
  const metadata = header.__metadata__;
  delete header.__metadata__;
  const dataBytes = buf.length - 8 - n;
  const spans = [];
  for (const [name, t] of Object.entries(header)) {
    assert.ok(t.dtype in BYTES, `${file}: ${name}: dtype ${t.dtype}`);
    const count = t.shape.reduce((a, b) => a * b, 1);
    const [b, e] = t.data_offsets;
    assert.equal(e - b, count * BYTES[t.dtype], `${file}: ${name}: byte length`);
    assert.ok(b >= 0 && e <= dataBytes, `${file}: ${name}: offsets in range`);
    spans.push([b, e, name]);
  }
  spans.sort((x, y) => x[0] - y[0]);
  let end = 0;
  for (const [b, e, name] of spans) {
    assert.equal(b, end, `${file}: ${name}: no overlap and no gap`);
    end = e;
  }
  assert.equal(end, dataBytes, `${file}: data section fully used`);
  return { header, metadata, buf, base: 8 + n };
}

/** The tensors a checkpoint must hold: name (without `transformer.`) -> shape. */
function expectedShapes(config) {
  const out = {};
  if (config.model_type === 'gpt2') {
    const d = config.n_embd;
    const ff = config.n_inner ?? 4 * d;
    out['wte.weight'] = [config.vocab_size, d];
    out['wpe.weight'] = [config.n_positions, d];
    for (let i = 0; i < config.n_layer; i++) {
      const p = `h.${i}.`;
      Object.assign(out, {
        [`${p}ln_1.weight`]: [d], [`${p}ln_1.bias`]: [d],
        [`${p}attn.c_attn.weight`]: [d, 3 * d], [`${p}attn.c_attn.bias`]: [3 * d],
        [`${p}attn.c_proj.weight`]: [d, d], [`${p}attn.c_proj.bias`]: [d],
        [`${p}ln_2.weight`]: [d], [`${p}ln_2.bias`]: [d],
        [`${p}mlp.c_fc.weight`]: [d, ff], [`${p}mlp.c_fc.bias`]: [ff],
        [`${p}mlp.c_proj.weight`]: [ff, d], [`${p}mlp.c_proj.bias`]: [d],
      });
    }
    out['ln_f.weight'] = [d];
    out['ln_f.bias'] = [d];
  } else {
    assert.equal(config.model_type, 'gpt_neo');
    const d = config.hidden_size;
    const ff = config.intermediate_size ?? 4 * d;
    out['wte.weight'] = [config.vocab_size, d];
    out['wpe.weight'] = [config.max_position_embeddings, d];
    for (let i = 0; i < config.num_layers; i++) {
      const p = `h.${i}.`;
      const a = `${p}attn.attention.`;
      Object.assign(out, {
        [`${p}ln_1.weight`]: [d], [`${p}ln_1.bias`]: [d],
        [`${a}q_proj.weight`]: [d, d], [`${a}k_proj.weight`]: [d, d], [`${a}v_proj.weight`]: [d, d],
        [`${a}out_proj.weight`]: [d, d], [`${a}out_proj.bias`]: [d],
        [`${p}ln_2.weight`]: [d], [`${p}ln_2.bias`]: [d],
        [`${p}mlp.c_fc.weight`]: [ff, d], [`${p}mlp.c_fc.bias`]: [ff],
        [`${p}mlp.c_proj.weight`]: [d, ff], [`${p}mlp.c_proj.bias`]: [d],
      });
    }
    out['ln_f.weight'] = [d];
    out['ln_f.bias'] = [d];
  }
  return out;
}

/** Reads a tensor's values as numbers (F16 and BF16 widened exactly). */
function values(file, name) {
  const t = file.header[name];
  const [b, e] = t.data_offsets;
  const bytes = file.buf.subarray(file.base + b, file.base + e);
  const n = (e - b) / BYTES[t.dtype];
  const out = new Float64Array(n);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let i = 0; i < n; i++) {
    if (t.dtype === 'F32') out[i] = bytes.readFloatLE(4 * i);
    else if (t.dtype === 'BF16') {
      u32[0] = bytes.readUInt16LE(2 * i) << 16;
      out[i] = f32[0];
    } else {
      const h = bytes.readUInt16LE(2 * i);
      const s = h >> 15 ? -1 : 1;
      const ex = (h >> 10) & 31;
      const m = h & 1023;
      out[i] = ex === 0 ? s * m * 2 ** -24 : ex === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (ex - 15);
    }
  }
  return out;
}

function loadCheckpoint(folder) {
  const files = {};
  const where = {};
  if (existsSync(new URL(`${folder}/model.safetensors.index.json`, root))) {
    const index = readJson(folder, 'model.safetensors.index.json');
    let total = 0;
    for (const f of new Set(Object.values(index.weight_map))) {
      files[f] = parseSafetensors(read(folder, f), f);
      for (const [name, t] of Object.entries(files[f].header)) {
        assert.equal(index.weight_map[name], f, `${name} listed in the index under its shard`);
        assert.ok(!(name in where), `${name} in one shard only`);
        where[name] = f;
        total += t.data_offsets[1] - t.data_offsets[0];
      }
    }
    assert.equal(Object.keys(where).length, Object.keys(index.weight_map).length);
    assert.equal(index.metadata.total_size, total, 'index total_size');
  } else {
    files['model.safetensors'] = parseSafetensors(read(folder, 'model.safetensors'), 'model.safetensors');
    for (const name of Object.keys(files['model.safetensors'].header)) where[name] = 'model.safetensors';
  }
  return { files, where };
}

const DTYPE = { float32: 'F32', float16: 'F16', bfloat16: 'BF16' };

for (const folder of folders) {
  test(`${folder}: safetensors names, shapes and dtypes match config.json`, () => {
    const config = readJson(folder, 'config.json');
    const { files, where } = loadCheckpoint(folder);
    const want = expectedShapes(config);
    const dtype = DTYPE[config.torch_dtype];
    const prefixed = Object.keys(where).some((n) => n.startsWith('transformer.'));
    const strip = (n) => (n.startsWith('transformer.') ? n.slice('transformer.'.length) : n);
    const seen = new Set();
    for (const [name, file] of Object.entries(where)) {
      const t = files[file].header[name];
      assert.equal(t.dtype, dtype, `${name}: dtype ${t.dtype}, config says ${config.torch_dtype}`);
      if (name === 'lm_head.weight') {
        assert.deepEqual(t.shape, want['wte.weight']);
        const wte = prefixed ? 'transformer.wte.weight' : 'wte.weight';
        assert.deepEqual(values(files[file], name), values(files[where[wte]], wte), 'lm_head tied to wte');
        continue;
      }
      assert.equal(name.startsWith('transformer.'), prefixed, `${name}: every key or none has the prefix`);
      const short = strip(name);
      if (/^h\.\d+\.attn\.(bias|masked_bias)$/.test(short)) {
        assert.equal(config.model_type, 'gpt2');
        continue;
      }
      assert.ok(short in want, `${name}: not a ${config.architectures[0]} tensor`);
      assert.deepEqual(t.shape, want[short], `${name}: shape`);
      const v = values(files[file], name);
      assert.ok(v.every(Number.isFinite), `${name}: finite`);
      seen.add(short);
    }
    for (const short of Object.keys(want)) assert.ok(seen.has(short), `${short} missing`);
  });

  test(`${folder}: expected.json has the SPEC's shapes and its head scores follow their definitions`, () => {
    const config = readJson(folder, 'config.json');
    const e = readJson(folder, 'expected.json');
    const L = config.n_layer ?? config.num_layers;
    const H = config.n_head ?? config.num_heads;
    const V = config.vocab_size;
    const windows = config.model_type === 'gpt_neo'
      ? config.attention_types.flatMap(([kinds, repeat]) => Array.from({ length: repeat }, () => kinds).flat())
        .map((k) => (k === 'local' ? config.window_size : 0))
      : new Array(L).fill(0);
    assert.ok(e.cases.some((c) => c.ablate.length === 0 && c.text === 'Virat hit the ball because it was full and outside off.'));
    assert.ok(e.cases.some((c) => c.ablate.length >= 2));
    for (const c of e.cases) {
      const T = c.ids.length;
      if (config.model_type === 'gpt_neo') assert.ok(T > config.window_size, `${c.name}: longer than the window`);
      assert.equal(c.logits.length, T * V, `${c.name}: logits`);
      assert.equal(c.attention.length, L * H * T * T, `${c.name}: attention`);
      if (c.lens) {
        assert.equal(c.lens.length, L * T * V, `${c.name}: lens`);
        assert.deepEqual(c.lens.slice((L - 1) * T * V), c.logits, `${c.name}: the last lens layer is the logits`);
      }
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          for (let i = 0; i < T; i++) {
            const row = c.attention.slice(((l * H + h) * T + i) * T, ((l * H + h) * T + i + 1) * T);
            const sum = row.reduce((a, b) => a + b, 0);
            assert.ok(Math.abs(sum - 1) < 1e-7, `${c.name}: attention row sums to 1`);
            row.forEach((a, j) => {
              const allowed = j <= i && (windows[l] === 0 || j > i - windows[l]);
              if (!allowed) assert.equal(a, 0, `${c.name}: layer ${l} head ${h} query ${i} key ${j} masked`);
            });
          }
        }
      }
    }
    const course = e.cases.find((c) => c.name === 'course');
    assert.deepEqual(e.greedy.prompt, course.ids, 'greedy continues the course sentence');
    // The first greedy id is the argmax of the course case's last-position logits.
    const last = course.logits.slice((course.ids.length - 1) * V);
    assert.equal(e.greedy.next[0], last.indexOf(Math.max(...last)));
    assert.ok(e.greedy.next.length >= 4 &&
      e.greedy.prompt.length + e.greedy.next.length <= (config.n_positions ?? config.max_position_embeddings));
    assert.ok(e.greedy.minMargin > 1e-3);
    const { n, sequence, scores } = e.headScores;
    assert.equal(sequence.length, 2 * n + 1);
    assert.equal(sequence[0], config.bos_token_id);
    assert.deepEqual(sequence.slice(1, n + 1), sequence.slice(n + 1));
    assert.ok(sequence.slice(1).every((id) => id !== config.bos_token_id && id >= 0 && id < V));
    assert.equal(scores.length, L * H);
    const T = 2 * n + 1;
    assert.equal(e.headScores.attention.length, L * H * T * T);
    const mean = (l, h, from, to, key) => {
      let sum = 0;
      for (let t = from; t <= to; t++) sum += e.headScores.attention[((l * H + h) * T + t) * T + key(t)];
      return sum / (to - from + 1);
    };
    scores.forEach((s, k) => {
      assert.deepEqual([s.layer, s.head], [Math.floor(k / H), k % H]);
      const { layer: l, head: h } = s;
      const want = {
        previousToken: mean(l, h, 2, 2 * n, (t) => t - 1),
        duplicateToken: mean(l, h, n + 1, 2 * n, (t) => t - n),
        induction: mean(l, h, n + 1, 2 * n, (t) => t - n + 1),
        firstToken: mean(l, h, 1, 2 * n, () => 0),
      };
      for (const [key, v] of Object.entries(want)) {
        assert.ok(Math.abs(s[key] - v) < 1e-7, `layer ${l} head ${h} ${key}: ${s[key]} vs ${v} from the attention`);
      }
      for (const key of ['previousToken', 'duplicateToken', 'induction', 'firstToken']) {
        assert.ok(s[key] >= 0 && s[key] <= 1, `${key} in [0, 1]`);
      }
      // A local layer whose window is shorter than n cannot see t - n or t - n + 1.
      if (windows[s.layer] && windows[s.layer] < n) {
        assert.equal(s.duplicateToken, 0);
        assert.equal(s.induction, 0);
      }
    });
  });
}
