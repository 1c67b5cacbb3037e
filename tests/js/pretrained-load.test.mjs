// lab.loadPretrained from every kind of source, through a local stand-in for the Hugging Face hub
// (tests/js/hub-server.mjs): progress, cancellation, cut downloads, maxBytes, models too large for
// memory, missing files, pytorch_model.bin-only repositories, unsupported architectures and a
// malformed tokenizer.json. Every source kind must give the logits the hub id gives.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { reposFromFolder, startHub } from './hub-server.mjs';
import { COURSE, FIXTURES, expectedOf, fixtureFiles, fixtureObjects } from './pretrained-helpers.mjs';

const lab = await createHeadlab();
let hub;
const repos = reposFromFolder(FIXTURES);

function repo(name, files) {
  repos.set(`headlab-test/${name}`, new Map([['main', new Map(Object.entries(files))]]));
}
const gpt2 = fixtureFiles('gpt2-f32');
const json = (o) => Buffer.from(JSON.stringify(o));

before(async () => {
  // Repositories made from the fixtures for the failure cases.
  repo('pt-only', { 'config.json': gpt2.get('config.json'), 'tokenizer.json': gpt2.get('tokenizer.json'), 'pytorch_model.bin': Buffer.alloc(1000) });
  repo('no-weights', { 'config.json': gpt2.get('config.json'), 'tokenizer.json': gpt2.get('tokenizer.json') });
  repo('t5', { 'config.json': json({ ...JSON.parse(gpt2.get('config.json')), architectures: ['T5ForConditionalGeneration'], model_type: 't5' }),
    'tokenizer.json': gpt2.get('tokenizer.json'), 'model.safetensors': gpt2.get('model.safetensors') });
  // GPT-2 XL's shapes (1.5 billion parameters, 6 GB in float32), announced by Content-Length.
  repo('xl', { 'config.json': json({ ...JSON.parse(gpt2.get('config.json')), n_layer: 48, n_head: 25, n_embd: 1600, n_positions: 1024, n_ctx: 1024, vocab_size: 50257 }),
    'tokenizer.json': gpt2.get('tokenizer.json'), 'model.safetensors': gpt2.get('model.safetensors') });
  repo('bad-tokenizer', { 'config.json': gpt2.get('config.json'), 'tokenizer.json': json({ ...JSON.parse(gpt2.get('tokenizer.json')), pre_tokenizer: { type: 'NoSuchPreTokenizer' } }),
    'model.safetensors': gpt2.get('model.safetensors') });
  hub = await startHub({ repos });
});
after(async () => { await hub.close(); });

const hubOptions = (over = {}) => ({ hubUrl: hub.url, ...over });
const courseIds = expectedOf('gpt2-f32').cases[0].ids;

/** The last position's logits on the course sentence. */
async function courseLogits(model) {
  return Array.from((await model.run(courseIds)).logits);
}

let reference;  // logits of gpt2-f32 loaded by hub id

test('a hub id loads: progress for every file reaches its total, the weights through the CDN redirect', async () => {
  const events = [];
  const from = hub.requests.length;
  const model = await lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ onProgress: (p) => events.push(p) }));
  try {
    for (const file of ['config.json', 'tokenizer.json', 'model.safetensors']) {
      const mine = events.filter((e) => e.file === file);
      assert.ok(mine.length >= 2, `${file}: ${mine.length} progress events`);
      const size = gpt2.get(file).length;
      for (let i = 1; i < mine.length; i++) assert.ok(mine[i].loaded >= mine[i - 1].loaded, `${file}: loaded never goes back`);
      assert.ok(mine.every((e) => e.total === size), `${file}: total is the Content-Length ${size}`);
      assert.equal(mine.at(-1).loaded, size, `${file}: the last event reaches total`);
    }
    const paths = hub.requests.slice(from).map((r) => r.path);
    assert.deepEqual(paths.slice(0, 3), ['config.json', 'tokenizer.json', 'model.safetensors'].map((f) => `/headlab-test/gpt2-f32/resolve/main/${f}`));
    assert.match(paths[3], /^\/cdn\/\d+$/, 'the safetensors file came from the redirect');
    assert.equal(model.info.architecture, 'GPT2LMHeadModel');
    assert.equal(model.info.dtype, 'F32');
    assert.equal(model.threads, 1);
    assert.deepEqual(Object.keys(model.info).sort(), ['architecture', 'bytes', 'contextLength', 'dModel', 'dtype', 'head', 'kind', 'numHeads', 'numKeyValueHeads', 'numLayers', 'parameters', 'vocabSize']);
    // GPT-2's parameters: embeddings, per layer 12 d² + 13 d (d_ff = 4d), the final LayerNorm.
    const d = 32, L = 2;
    assert.equal(model.info.parameters, 353 * d + 32 * d + L * (12 * d * d + 13 * d) + 2 * d);
    assert.equal(model.decode(courseIds), COURSE);
    reference = await courseLogits(model);
  } finally {
    model.dispose();
  }
});

test('every source kind loads the same model: hub id, folder URL, File objects, objects, shards by hub and by objects', async () => {
  const files = fixtureFiles('gpt2-f32');
  const asFiles = [...files].filter(([n]) => n !== 'expected.json').reverse().map(([n, b]) => new File([b], n));
  const sources = {
    'folder URL': `${hub.url}/headlab-test/gpt2-f32/resolve/main/`,
    'folder URL object without the slash': new URL(`${hub.url}/headlab-test/gpt2-f32/resolve/main`),
    'File[]': asFiles,
    '{ config, weights, tokenizer } objects': fixtureObjects('gpt2-f32'),
    '{ config, weights, tokenizer } as strings and Uint8Array': { config: files.get('config.json').toString(), tokenizer: files.get('tokenizer.json').toString(), weights: new Uint8Array(files.get('model.safetensors')) },
    'sharded, by hub id': 'headlab-test/gpt2-sharded',
    'sharded, as objects (weights: [shard, shard])': fixtureObjects('gpt2-sharded'),
    'without the transformer. prefix': 'headlab-test/gpt2-noprefix-f32',
  };
  for (const [kind, source] of Object.entries(sources)) {
    const events = [];
    const model = await lab.loadPretrained(source, hubOptions({ onProgress: (p) => events.push(p) }));
    try {
      assert.deepEqual(await courseLogits(model), reference, `${kind}: the same logits as the hub id`);
      assert.ok(events.some((e) => e.file === 'tokenizer.json' && e.loaded === e.total), `${kind}: progress reaches total`);
    } finally {
      model.dispose();
    }
  }
});

test('cancelling through signal rejects with an AbortError and leaves nothing allocated', async () => {
  hub.faults.set('headlab-test/gpt2-f32/model.safetensors', { stall: 50000 });
  try {
    const handles = lab.liveHandleCount();
    let heap = 0;
    for (let round = 0; round < 4; round++) {
      const controller = new AbortController();
      const seen = [];
      const pending = lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({
        signal: controller.signal,
        onProgress: (p) => { seen.push(p); if (p.file === 'model.safetensors' && p.loaded > 0) controller.abort(); },
      }));
      await assert.rejects(pending, (e) => e instanceof DOMException && e.name === 'AbortError' && /cancelled while reading model\.safetensors/.test(e.message));
      assert.ok(seen.some((p) => p.file === 'model.safetensors' && p.loaded > 0 && p.loaded < p.total), 'cancelled mid-file');
      assert.equal(lab.liveHandleCount(), handles, 'no Embind handle left');
      const now = lab._pretrained.HEAPU8.length;
      if (round === 1) heap = now;
      if (round > 1) assert.equal(now, heap, 'the heap does not grow from one cancelled load to the next');
    }
  } finally {
    hub.faults.delete('headlab-test/gpt2-f32/model.safetensors');
  }
  // Files are read in chunks too, and cancelled between them.
  const files = [...fixtureFiles('gpt2-f32')].map(([n, b]) => new File([b], n));
  const handles = lab.liveHandleCount();
  const stop = new AbortController();
  await assert.rejects(lab.loadPretrained(files, { signal: stop.signal, onProgress: (p) => { if (p.file === 'model.safetensors' && p.loaded > 0) stop.abort(); } }),
    (e) => e.name === 'AbortError' && /model\.safetensors/.test(e.message));
  assert.equal(lab.liveHandleCount(), handles);
  const controller = new AbortController();
  controller.abort();
  const from = hub.requests.length;
  await assert.rejects(lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ signal: controller.signal })), { name: 'AbortError' });
  assert.equal(hub.requests.length, from, 'an aborted signal makes no request');
});

test('a download cut mid-file is an Error naming the file and the bytes', async () => {
  for (const file of ['model.safetensors', 'tokenizer.json']) {
    hub.faults.set(`headlab-test/gpt2-f32/${file}`, { cut: 1000 });
    try {
      const handles = lab.liveHandleCount();
      await assert.rejects(lab.loadPretrained('headlab-test/gpt2-f32', hubOptions()),
        (e) => e.constructor === Error && e.message.includes(`the download of ${file} was cut after 1000 of ${gpt2.get(file).length} bytes`));
      assert.equal(lab.liveHandleCount(), handles);
    } finally {
      hub.faults.delete(`headlab-test/gpt2-f32/${file}`);
    }
  }
});

test('maxBytes refuses before the weights are downloaded, with the numbers', async () => {
  const events = [];
  const size = gpt2.get('model.safetensors').length;
  await assert.rejects(lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ maxBytes: 100000, onProgress: (p) => events.push(p) })),
    (e) => e instanceof RangeError && e.message.includes(`model.safetensors is ${size} bytes`) && /more than maxBytes 100000/.test(e.message));
  assert.ok(!events.some((p) => p.file === 'model.safetensors'), 'no byte of model.safetensors was read');
  await assert.rejects(lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ maxBytes: 100 })), /maxBytes: config\.json is \d+ bytes/);
});

test('a file sent without Content-Length: progress with total null, then the size once read; maxBytes stops it while it streams', async () => {
  hub.faults.set('headlab-test/gpt2-f32/model.safetensors', { chunked: true });
  try {
    const events = [];
    const model = await lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ onProgress: (p) => events.push(p) }));
    try {
      assert.deepEqual(await courseLogits(model), reference);
    } finally {
      model.dispose();
    }
    const mine = events.filter((e) => e.file === 'model.safetensors');
    const size = gpt2.get('model.safetensors').length;
    assert.ok(mine.slice(0, -1).every((e) => e.total === null), 'total is null while the size is unknown');
    assert.deepEqual(mine.at(-1), { file: 'model.safetensors', loaded: size, total: size });
    await assert.rejects(lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ maxBytes: 100000 })),
      (e) => e instanceof RangeError && /maxBytes: reading model\.safetensors passed maxBytes 100000 .*the download was stopped/.test(e.message));
  } finally {
    hub.faults.delete('headlab-test/gpt2-f32/model.safetensors');
  }
});

test('a server that cannot be reached: an Error naming the file, the URL and the likely causes', async () => {
  await assert.rejects(lab.loadPretrained('openai-community/gpt2', { hubUrl: 'http://127.0.0.1:9' }),
    (e) => e.constructor === Error && /could not download config\.json from http:\/\/127\.0\.0\.1:9\/openai-community\/gpt2\/resolve\/main\/config\.json: .*offline.*CORS/.test(e.message));
});

test('a model that cannot fit in memory is refused from its Content-Length, with the numbers', async () => {
  hub.faults.set('headlab-test/xl/model.safetensors', { lie: 6_230_000_000 });
  const limit = (await lab._pretrainedModule()).heapMax();  // the limit every refusal names
  try {
    const events = [];
    await assert.rejects(lab.loadPretrained('headlab-test/xl', hubOptions({ onProgress: (p) => events.push(p) })),
      (e) => e instanceof RangeError && /cannot fit: model\.safetensors is 5941 MiB .* more than the (\d+) MiB/.exec(e.message)?.[1] === (limit / 2 ** 20).toFixed(0) &&
        // The numbers as numbers too, for a page to say in its own words (the explorer does).
        e.code === 'too-large' && e.params.file === 'model.safetensors' && e.params.bytes === 6_230_000_000 && e.params.limit === limit &&
        e.params.activations > 0);
    assert.ok(!events.some((p) => p.file === 'model.safetensors'), 'no byte of model.safetensors was read');
  } finally {
    hub.faults.delete('headlab-test/xl/model.safetensors');
  }
  // Sharded: the index's total_size says so before any shard is asked for.
  const sharded = fixtureFiles('gpt2-sharded');
  const index = JSON.parse(sharded.get('model.safetensors.index.json'));
  repo('xl-sharded', { 'config.json': repos.get('headlab-test/xl').get('main').get('config.json'), 'tokenizer.json': gpt2.get('tokenizer.json'),
    'model.safetensors.index.json': json({ ...index, metadata: { total_size: 6_230_000_000 } }),
    ...Object.fromEntries([...sharded].filter(([n]) => n.endsWith('.safetensors'))) });
  const from = hub.requests.length;
  await assert.rejects(lab.loadPretrained('headlab-test/xl-sharded', hubOptions()),
    (e) => e instanceof RangeError && /cannot fit: its shards hold 5941 MiB \(model\.safetensors\.index\.json\)/.test(e.message) &&
      e.params.bytes === 6_230_000_000 && e.params.limit === limit);
  assert.ok(!hub.requests.slice(from).some((r) => /model-0000/.test(r.path)), 'no shard was requested');
});

test('missing files, pytorch_model.bin only, an unsupported architecture, a malformed tokenizer.json: Errors that say so', async () => {
  await assert.rejects(lab.loadPretrained('headlab-test/nothing-here', hubOptions()), /headlab-test\/nothing-here \(revision main on .*\) has no config\.json/);
  await assert.rejects(lab.loadPretrained('headlab-test/no-weights', hubOptions()), /has no model\.safetensors \(nor model\.safetensors\.index\.json\)/);
  await assert.rejects(lab.loadPretrained('headlab-test/pt-only', hubOptions()),
    /has only pytorch_model\.bin.*needs model\.safetensors.*\/headlab-test\/pt-only\/discussions.*revision: 'refs\/pr\/1'/);
  await assert.rejects(lab.loadPretrained('headlab-test/t5', hubOptions()),
    /config\.json: architectures \["T5ForConditionalGeneration"\] is not supported; HeadLab runs GPT2LMHeadModel, GPTNeoForCausalLM, LlamaForCausalLM/);
  await assert.rejects(lab.loadPretrained('headlab-test/bad-tokenizer', hubOptions()), /tokenizer\.json: .*NoSuchPreTokenizer/);
  await assert.rejects(lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ revision: 'v9' })), /revision v9 .* has no config\.json/);
  // A revision with a slash goes into the URL encoded, as the hub expects it.
  repos.get('headlab-test/gpt2-f32').set('refs/pr/1', repos.get('headlab-test/gpt2-f32').get('main'));
  const from = hub.requests.length;
  const model = await lab.loadPretrained('headlab-test/gpt2-f32', hubOptions({ revision: 'refs/pr/1' }));
  model.dispose();
  assert.equal(hub.requests[from].path, '/headlab-test/gpt2-f32/resolve/refs%2Fpr%2F1/config.json');
});

test('threads: 1 loads on one thread; model.threads is 0 once disposed (more threads: pretrained-threads.test.mjs)', async () => {
  const model = await lab.loadPretrained(fixtureObjects('gpt2-f32'), { threads: 1 });
  assert.equal(model.threads, 1);
  assert.equal(model.threadsNote, '');
  model.dispose();
  assert.equal(model.threads, 0);
});

test('the npm tokenizer gives the ids make_pretrained.py wrote for every case', async () => {
  for (const name of ['gpt2-f32', 'neo-f32']) {
    const model = await lab.loadPretrained(fixtureObjects(name));
    try {
      for (const c of expectedOf(name).cases) {
        const { ids, tokens } = model.tokenize(c.text);
        assert.ok(ids instanceof Int32Array);
        assert.deepEqual(Array.from(ids), c.ids, `${name} ${c.name}`);
        assert.equal(tokens.join(''), c.text, 'the tokens put back together give the text');
      }
      assert.equal(model.tokenize(COURSE).tokens[2], ' the', 'a token keeps its leading space');
    } finally {
      model.dispose();
    }
  }
});
