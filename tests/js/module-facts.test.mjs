// What the API reads from the WebAssembly modules instead of keeping its own copy: the heap's
// cap (linked with -sMAXIMUM_MEMORY in CMakeLists.txt), the trainer's defaults (TrainerConfig in
// trainer.hpp), the shape check (mha_resolve_shape) and the training results, which come over as
// copies, never as views of the wasm heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';

const read = (p) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

/** -sMAXIMUM_MEMORY of the modules' link step, in bytes (Emscripten reads 1gb, 512mb, … as powers of 1024). */
function linkedMaximum() {
  const flags = [...read('CMakeLists.txt').matchAll(/-sMAXIMUM_MEMORY=(\d+)(kb|mb|gb)?\b/gi)];
  assert.equal(flags.length, 1, 'one -sMAXIMUM_MEMORY in CMakeLists.txt');
  const [, n, unit = ''] = flags[0];
  return Number(n) * { '': 1, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30 }[unit.toLowerCase()];
}

/** Whether `a` owns its buffer (a copy) rather than viewing a larger one, such as the wasm heap. */
const ownsBuffer = (a) => a.byteOffset === 0 && a.buffer.byteLength === a.byteLength;

for (const flavour of ['simd', 'scalar']) {
  test(`${flavour}: the heap cap in info() and in the errors is the one both modules were linked with`, async () => {
    const lab = await createHeadlab({ flavour });
    const linked = linkedMaximum();
    assert.equal(lab.info().maxMemoryBytes, linked, 'info().maxMemoryBytes against CMakeLists.txt');
    // The training module is linked with the same flags (read through the private loader: no public field has it).
    assert.equal((await lab._trainModule()).heapMax(), linked, 'the training module');
    const I = new Float32Array(16);
    assert.throws(
      () => lab.multiHeadAttention({
        query: new Float32Array(20000 * 4), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, returnWeights: true,
      }),
      (e) => e instanceof RangeError && e.message.includes(`capped at ${linked / 2 ** 20} MiB`), 'the forward pass names the linked cap');
  });
}

test('no copy of the heap cap or of the trainer defaults is left in web/lib', () => {
  const sources = ['memory', 'forward', 'lab', 'trainer'].map((m) => [m, read(`web/lib/api/${m}.js`)]);
  for (const [name, text] of sources) {
    assert.doesNotMatch(text, /1024 \* 2 \*\* 20|2 \*\* 30|1073741824/, `${name}.js spells the heap cap`);
  }
  const trainer = read('web/lib/api/trainer.js');
  assert.doesNotMatch(trainer, /'two-relations'|0\.003|\? 64\b|\? 16\b|\? 2\b|'adam'\s*[,}]/, 'trainer.js spells a default of TrainerConfig');
});

test('createTrainer starts from TrainerConfig\'s defaults; options given replace them one by one', async () => {
  const lab = await createHeadlab();
  const t = await lab.createTrainer();
  try {
    assert.deepEqual(t.config(), { task: 'two-relations', numHeads: 2, dModel: 16, seed: 1, learningRate: 0.003,
      batchSize: 64, optimizer: 'adam', causal: false, step: 0 });
    assert.deepEqual(Object.keys(t.config()), ['task', 'numHeads', 'dModel', 'seed', 'learningRate', 'batchSize', 'optimizer', 'causal', 'step']);
  } finally {
    t.dispose();
  }
  const u = await lab.createTrainer({ numHeads: 4, optimizer: 'sgd', learningRate: null, causal: true });
  try {
    assert.deepEqual(u.config(), { task: 'two-relations', numHeads: 4, dModel: 16, seed: 1, learningRate: 0.003,
      batchSize: 64, optimizer: 'sgd', causal: true, step: 0 });
    u.step(3);
    assert.equal(u.config().step, 3);
  } finally {
    u.dispose();
  }
});

test('trainer and language-model results are copies that own their memory, and leave no Embind handle behind', async () => {
  const lab = await createHeadlab();
  const before = lab.liveHandleCount();
  const t = await lab.createTrainer({ seed: 3 });
  try {
    t.step(5);
    assert.equal(t.divergence(), null);
    const { seqLen } = t.taskInfo();
    const w = t.attentionWeights();
    assert.ok(w instanceof Float32Array && w.length === 2 * seqLen * seqLen && ownsBuffer(w), 'attentionWeights');
    const { tokens } = t.probe();
    assert.ok(tokens instanceof Int32Array && tokens.length === seqLen && ownsBuffer(tokens), 'probe().tokens');
    const m = t.exportModel();
    for (const name of ['X', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO']) {
      assert.ok(m[name] instanceof Float32Array && ownsBuffer(m[name]), `exportModel().${name}`);
    }
    // Each block has the length its place in the parameter layout gives it.
    assert.deepEqual([m.X.length, m.wQ.length, m.wO.length, m.bQ.length, m.bO.length], [seqLen * 16, 256, 256, 16, 16]);
    const bytes = t.save();
    assert.ok(bytes instanceof Uint8Array && ownsBuffer(bytes), 'save()');
    // A copy stays as it was when the trainer moves on.
    const kept = w.slice();
    t.step(5);
    assert.deepEqual(w, kept);
    const e = t.evaluate(100);
    assert.ok(Array.isArray(e.relationAccuracy) && e.relationAccuracy.length === 2, 'relationAccuracy is a number[]');
    const h = t.headMetrics(50);
    assert.ok(h.length === 2 && Array.isArray(h[0].relationShare), 'relationShare is a number[]');
  } finally {
    t.dispose();
  }
  const lm = await lab.createLanguageModel({ task: 'induction', seed: 1 });
  try {
    lm.step(2);
    assert.equal(lm.divergence(), null);
    const a = lm.attention('a b c a b c');
    assert.ok(a.weights instanceof Float32Array && ownsBuffer(a.weights), 'attention().weights');
    const bytes = lm.save();
    assert.ok(bytes instanceof Uint8Array && ownsBuffer(bytes), 'LanguageModel.save()');
    const report = lm.headReport(20);
    assert.equal('bestFixedPosition' in report, false, 'no cricket baseline on induction');
    assert.equal('coreference' in report.heads[0], false, 'no coreference score on induction');
    lm.predict('a b', { topK: 2 });
    lm.generate({ prompt: 'a b', maxTokens: 2, temperature: 0 });
  } finally {
    lm.dispose();
  }
  const cricket = await lab.createLanguageModel({ task: 'cricket', seed: 1 });
  try {
    const report = cricket.headReport(20);
    assert.equal(typeof report.bestFixedPosition, 'number');
    assert.equal(typeof report.heads[0].coreference, 'number');
    assert.equal(typeof report.heads[0].positionPeak, 'number');
  } finally {
    cricket.dispose();
  }
  // Below the API, the training module itself hands over copies (so no caller has to remember .slice()).
  const train = await lab._trainModule();
  const core = new train.TrainerCore();
  try {
    assert.equal(core.init(train.trainerDefaults()), '');
    const arrays = { attentionWeights: core.attentionWeights(), probeTokens: core.probeTokens(), probeInputs: core.probeInputs(),
      'parameters(tokEmb)': core.parameters('tokEmb'), 'parameters(bRead)': core.parameters('bRead'), save: core.save() };
    for (const [name, a] of Object.entries(arrays)) assert.ok(ownsBuffer(a) && a.buffer !== train.HEAPU8.buffer, `TrainerCore.${name}`);
    assert.equal(core.parameters('wq'), null, 'a name the layout does not have');
  } finally {
    core.delete();
  }
  assert.equal(lab.liveHandleCount(), before, 'live Embind handles');
});

test('checkShape answers what createLayer would say about a shape, without the "createLayer: " prefix', async () => {
  const lab = await createHeadlab();
  const I = (n) => new Float32Array(n);
  const cases = [
    { dModel: 512, numHeads: 8 },
    { dModel: 16, numHeads: 3 },
    { dModel: 16, numHeads: 3, dK: 4, dV: 4 },
    { dModel: 12, numHeads: 5, dK: 2 },
    { dModel: 0, numHeads: 2 },
    { dModel: 4, numHeads: 2.5 },
    { dModel: '16', numHeads: 2 },
    { dModel: 2 ** 31, numHeads: 1 },
    { dModel: 2 ** 20, numHeads: 2 ** 12, dK: 2 ** 10, dV: 1 },
  ];
  for (const shape of cases) {
    const answer = lab.checkShape(shape);
    // createLayer checks the shape before the weights: those of the right lengths where the shape is
    // valid (and small), empty ones elsewhere.
    const dK = shape.dK ?? shape.dModel / shape.numHeads, dV = shape.dV ?? shape.dModel / shape.numHeads;
    const size = (n) => (Number.isSafeInteger(n) && n >= 0 && n < 2 ** 22 ? n : 0);
    const hk = size(shape.numHeads * dK * shape.dModel), hv = size(shape.numHeads * dV * shape.dModel);
    let thrown = null;
    try {
      lab.createLayer({ ...shape, wQ: I(hk), wK: I(hk), wV: I(hv), wO: I(hv) }).dispose();
    } catch (e) {
      thrown = e.message;
    }
    assert.equal(answer === null ? null : `createLayer: ${answer}`, thrown, JSON.stringify(shape));
  }
  assert.deepEqual(cases.map((s) => lab.checkShape(s) === null), [true, false, true, false, false, false, false, false, false]);
  assert.match(lab.checkShape({ dModel: 16, numHeads: 3 }), /^numHeads must divide dModel when dK\/dV are not given: dModel 16 \/ numHeads 3/);
  assert.equal(lab.checkShape({ dModel: 16, numHeads: 3, dK: 4, dV: 4 }), null);
  assert.throws(() => lab.checkShape({ dModel: 16, heads: 2 }), (e) => e instanceof TypeError && /checkShape: unknown option "heads"; did you mean numHeads/.test(e.message));
  assert.throws(() => lab.checkShape(null), (e) => e instanceof TypeError && /^checkShape: expected an options object, got null/.test(e.message));
});
