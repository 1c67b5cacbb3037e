// The bad-input catalogue of the whole JavaScript API, one table: every
// malformed call must raise a TypeError (wrong type) or a RangeError (wrong
// length, value or size; also requests too large for the wasm heap, never an
// abort) whose message names the argument and what was expected. After every
// case the same instance must still compute the course's worked example and
// hold no more live Embind handles than before.
//
// Requests too large for the heap (a trainer whose batches cannot fit, a model
// file that asks for one) are refused before anything is allocated, so they run
// in this same instance like every other case.
//
// createTrainer and loadTrainer are called with `await`: they may return a
// Trainer or a Promise of one, and `expectError` accepts a throw or a rejection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { expected } from '../fixtures/course.mjs';
import { workedModel } from '../../web/lib/teach/examples.js';
import { validateModel } from '../../web/lib/teach/model.js';
import { fixtureObjects } from './pretrained-helpers.mjs';

const lab = await createHeadlab();
const F = (a) => new Float32Array(a);

// The course's worked example (ball, full, it; h = 2, d_k = d_v = 2, W^O = I), from the
// components' own copy, and the course's numbers for the query "it" (tests/fixtures/course.json).
const WORKED = validateModel(workedModel()).model;
const EXPECTED = { head1: expected.weightsHead1, head2: expected.weightsHead2, output: expected.output };

function worked() {
  return { query: WORKED.query, dModel: 4, numHeads: 2, wQ: WORKED.wQ, wK: WORKED.wK, wV: WORKED.wV, wO: WORKED.wO };
}

/** The worked example through the given instance; throws naming the first number off by more than 5e-5. */
function checkWorkedExample(instance) {
  const r = instance.multiHeadAttention({ ...worked(), returnWeights: true });
  const T = 3, it = 2;
  const got = {
    head1: Array.from(r.weights.subarray(it * T, it * T + T)),
    head2: Array.from(r.weights.subarray((T + it) * T, (T + it) * T + T)),
    output: Array.from(r.output.subarray(it * 4, it * 4 + 4)),
  };
  for (const [name, want] of Object.entries(EXPECTED)) {
    want.forEach((w, i) => {
      if (!(Math.abs(got[name][i] - w) <= 5e-5)) throw new Error(`worked example ${name}[${i}] = ${got[name][i]}, want ${w}`);
    });
  }
}

/** Calls fn (sync or async) and returns what it threw or rejected with, or null. */
async function caught(fn) {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  return null;
}

/** Asserts that fn throws or rejects with `Type` and a message containing `arg` and matching `expected`. */
async function expectError(fn, Type, arg, expected) {
  const err = await caught(fn);
  assert.ok(err, `expected a ${Type.name} naming ${arg}, but the call succeeded`);
  assert.ok(err instanceof Type, `expected a ${Type.name}, got ${err?.constructor?.name}: ${err?.message}`);
  assert.ok(err.message.includes(arg), `the message should name "${arg}": ${err.message}`);
  assert.match(err.message, expected, `the message should say what was expected: ${err.message}`);
}

async function withTrainer(fn, options = { seed: 1 }) {
  const t = await lab.createTrainer(options);
  try {
    return await fn(t);
  } finally {
    t.dispose();
  }
}

async function disposedTrainer() {
  const t = await lab.createTrainer({ seed: 1 });
  t.dispose();
  return t;
}

async function savedModel(options = { seed: 1 }) {
  return withTrainer((t) => t.save(), options);
}

/** CRC-32 (IEEE 802.3, as zlib), written here independently of the C++ one. */
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A saved model with `edit(fields, dataView, taskNameLength)` applied to its fields (every
 * byte before the CRC-32 that ends a version-2 file) and the CRC-32 then made to match:
 * what load() checks behind the checksum, as in a file written by hand.
 */
async function editedModel(edit, options) {
  const saved = await savedModel(options);
  const fields = saved.slice(0, saved.length - 4);
  edit(fields, new DataView(fields.buffer), fields[8]);
  const bytes = new Uint8Array(fields.length + 4);
  bytes.set(fields);
  new DataView(bytes.buffer).setUint32(fields.length, crc32(fields), true);
  return bytes;
}

const LM = { task: 'cricket', numLayers: 1, numHeads: 2, dModel: 4, batchSize: 4, seed: 1 };
async function withLm(fn, options = LM) {
  const lm = await lab.createLanguageModel(options);
  try {
    return await fn(lm);
  } finally {
    lm.dispose();
  }
}
async function disposedLm() {
  const lm = await lab.createLanguageModel(LM);
  lm.dispose();
  return lm;
}
/** A saved language model with `edit(fields, dataView, taskNameLength)` applied and its CRC-32 made to match. */
async function editedLm(edit, options = LM) {
  const saved = await withLm((lm) => lm.save(), options);
  const fields = saved.slice(0, saved.length - 4);
  edit(fields, new DataView(fields.buffer), fields[8]);
  const bytes = new Uint8Array(fields.length + 4);
  bytes.set(fields);
  new DataView(bytes.buffer).setUint32(fields.length, crc32(fields), true);
  return bytes;
}

// Pretrained checkpoints: gpt2-f32 and neo-f32 of tests/golden/pretrained/ as { config, weights, tokenizer }.
const pre = (name = 'gpt2-f32') => fixtureObjects(name);
const preConfig = (over) => ({ ...pre(), config: { ...pre().config, ...over } });
async function withPre(fn) {
  const model = await lab.loadPretrained(pre());
  try {
    return await fn(model);
  } finally {
    model.dispose();
  }
}
async function disposedPre() {
  const model = await lab.loadPretrained(pre());
  model.dispose();
  return model;
}
/** gpt2-f32's model.safetensors with `edit(header, data)` applied to its JSON header and its data bytes. */
function editedWeights(edit) {
  const bytes = new Uint8Array(pre().weights);
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const data = bytes.slice(8 + n);
  const newData = edit(header, data) ?? data;
  const text = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + newData.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(newData, 8 + text.length);
  return { ...pre(), weights: out };
}
const preWeights = (weights) => ({ ...pre(), weights });

const ex = () => worked();
/** The worked example's weights alone: what createLayer takes (its options are strict). */
const weightsOf = () => { const { query: _query, ...w } = ex(); return w; };
function withLayer(fn) {
  const layer = lab.createLayer(weightsOf());
  try { return fn(layer); } finally { layer.dispose(); }
}
/**
 * Calls fn with a 2-thread layer of the worked example's weights, once per mechanism (pthreads,
 * then Workers), ending each; both must answer with the same error (or none), which is thrown.
 */
async function withParallel(fn) {
  const errors = [];
  for (const mechanism of ['pthreads', 'workers']) {
    const layer = await lab.createParallelLayer({ ...weightsOf(), threads: 2, mechanism });
    try { await fn(layer); errors.push(null); } catch (e) { errors.push(e); } finally { await layer.dispose(); }
  }
  const [a, b] = errors;
  if (a?.constructor !== b?.constructor || a?.message !== b?.message) throw new Error(`the mechanisms answer differently: pthreads ${a}, workers ${b}`);
  if (a) throw a;
}
const mha = (over) => () => lab.multiHeadAttention({ ...ex(), ...over });
const withNaN = (a, i, v = NaN) => { const b = Float32Array.from(a); b[i] = v; return b; };

// [name, call, Type, argument named, what the message must say was expected, flags?]
const CASES = [
  // multiHeadAttention: the options object
  ['mha: no options', () => lab.multiHeadAttention(), TypeError, 'options', /options object/],
  ['mha: options is an Array', () => lab.multiHeadAttention([1, 2]), TypeError, 'options', /options object/],
  // dimensions: wrong types, zero, negative, fractional, NaN, Infinity, huge
  ['mha: dModel missing', mha({ dModel: undefined }), TypeError, 'dModel', /positive integer/],
  ['mha: dModel a string', mha({ dModel: '4' }), TypeError, 'dModel', /positive integer/],
  ['mha: dModel zero', mha({ dModel: 0 }), RangeError, 'dModel', /positive integer/],
  ['mha: dModel negative', mha({ dModel: -4 }), RangeError, 'dModel', /positive integer/],
  ['mha: dModel fractional', mha({ dModel: 2.5 }), RangeError, 'dModel', /positive integer/],
  ['mha: dModel NaN', mha({ dModel: NaN }), RangeError, 'dModel', /positive integer/],
  ['mha: dModel Infinity', mha({ dModel: Infinity }), RangeError, 'dModel', /positive integer/],
  ['mha: dModel beyond 2^31', mha({ dModel: 2 ** 31 }), RangeError, 'dModel', /2147483647|at most|too large/],
  ['mha: numHeads zero', mha({ numHeads: 0 }), RangeError, 'numHeads', /positive integer/],
  ['mha: numHeads a BigInt', mha({ numHeads: 2n }), TypeError, 'numHeads', /positive integer/],
  ['mha: numHeads does not divide dModel', mha({ numHeads: 3 }), RangeError, 'numHeads', /divide dModel/],
  ['mha: numHeads huge', mha({ numHeads: 2 ** 31 - 1 }), RangeError, 'numHeads', /divide dModel/],
  ['mha: dK zero', mha({ dK: 0 }), RangeError, 'dK', /positive integer/],
  ['mha: dK fractional', mha({ dK: 1.5 }), RangeError, 'dK', /positive integer/],
  ['mha: dV -Infinity', mha({ dV: -Infinity }), RangeError, 'dV', /positive integer/],
  // arrays: wrong types, wrong lengths, non-finite values
  ['mha: query missing', mha({ query: undefined }), TypeError, 'query', /Float32Array/],
  ['mha: query a plain Array', mha({ query: [3, 0, 0, 1] }), TypeError, 'query', /Float32Array/],
  ['mha: query a Float64Array', mha({ query: new Float64Array(12) }), TypeError, 'query', /Float32Array/],
  ['mha: query empty', mha({ query: F([]) }), RangeError, 'query', /positive multiple of dModel=4/],
  ['mha: query length not a multiple of dModel', mha({ query: F(5) }), RangeError, 'query', /positive multiple of dModel=4/],
  ['mha: query contains NaN', mha({ query: withNaN(WORKED.query, 3) }), RangeError, 'query', /finite/],
  ['mha: query contains Infinity', mha({ query: withNaN(WORKED.query, 9, Infinity) }), RangeError, 'query', /finite/],
  ['mha: key an Int32Array', mha({ key: new Int32Array(12) }), TypeError, 'key', /Float32Array/],
  ['mha: key rows of the wrong width', mha({ key: F(6) }), RangeError, 'key', /multiple of dModel=4/],
  ['mha: value rows differ from key rows', mha({ key: F(8), value: F(12) }), RangeError, 'value', /as many rows as key \(Tk=2\)/],
  ['mha: wQ missing', mha({ wQ: undefined }), TypeError, 'wQ', /Float32Array of length 16/],
  ['mha: wQ too short', mha({ wQ: F(12) }), RangeError, 'wQ', /length 16/],
  ['mha: wO too long', mha({ wO: F(17) }), RangeError, 'wO', /length 16/],
  ['mha: wV a Float64Array', mha({ wV: new Float64Array(16) }), TypeError, 'wV', /Float32Array/],
  ['mha: wK contains NaN', mha({ wK: withNaN(WORKED.wK, 0) }), RangeError, 'wK', /finite/],
  ['mha: bQ of the wrong length', mha({ bQ: F(3) }), RangeError, 'bQ', /length 4/],
  ['mha: bV contains -Infinity', mha({ bV: F([0, 0, 0, -Infinity]) }), RangeError, 'bV', /finite/],
  ['mha: bO a string', mha({ bO: 'zeros' }), TypeError, 'bO', /Float32Array/],
  // flags and masks
  ['mha: causal a string', mha({ causal: 'yes' }), TypeError, 'causal', /boolean/],
  ['mha: causal with Tq != Tk', mha({ key: F(8), causal: true }), RangeError, 'causal', /Tq|Tk|square/],
  ['mha: keyMask of the wrong length', mha({ keyMask: new Uint8Array(2) }), RangeError, 'keyMask', /length Tk=3/],
  ['mha: keyMask a plain Array', mha({ keyMask: [1, 1, 1] }), TypeError, 'keyMask', /Uint8Array/],
  ['mha: keyMask an Int8Array', mha({ keyMask: new Int8Array(3) }), TypeError, 'keyMask', /Uint8Array/],
  ['mha: a misspelt option (returnWeight)', mha({ returnWeight: true }), TypeError, 'returnWeight', /unknown option "returnWeight"; did you mean returnWeights\?/],
  ['mha: an option of another function (bias)', mha({ bias: true }), TypeError, 'bias', /unknown option "bias"; .*the options are query, key/],
  ['createLayer: heads instead of numHeads', () => lab.createLayer({ ...weightsOf(), heads: 2 }), TypeError, 'heads', /did you mean numHeads\?/],
  ['parameterCount: d_model', () => lab.parameterCount({ d_model: 512, numHeads: 8 }), TypeError, 'd_model', /did you mean dModel\?/],
  ['mha: headMask of the wrong length', mha({ headMask: new Uint8Array(3) }), RangeError, 'headMask', /length numHeads=2/],
  ['mha: headMask a plain Array', mha({ headMask: [1, 0] }), TypeError, 'headMask', /Uint8Array/],
  ['mha: returnWeights a number', mha({ returnWeights: 1 }), TypeError, 'returnWeights', /boolean/],
  ['mha: returnIntermediates a string', mha({ returnIntermediates: 'yes' }), TypeError, 'returnIntermediates', /boolean/],
  // too large for the 1 GiB heap: a RangeError, never an abort
  ['mha: weights of T = 20000 beyond the heap', mha({ query: F(20000 * 4), returnWeights: true }), RangeError, 'Tq=20000', /too large/],
  ['mha: T = 200000, a buffer beyond 2^30 elements', mha({ query: F(200000 * 4) }), RangeError, 'query', /too large/],
  ['mha: numHeads 2^30 with dK = dV = 1', mha({ numHeads: 2 ** 30, dK: 1, dV: 1 }), RangeError, 'numHeads', /too large/],

  // createLayer and AttentionLayer.forward
  ['createLayer: wO of the wrong length', () => lab.createLayer({ ...weightsOf(), wO: F(12) }), RangeError, 'wO', /length 16/],
  ['createLayer: numHeads does not divide dModel', () => lab.createLayer({ ...weightsOf(), numHeads: 3 }), RangeError, 'numHeads', /divide dModel/],
  ['createLayer: bK a plain Array', () => lab.createLayer({ ...weightsOf(), bK: [0, 0, 0, 0] }), TypeError, 'bK', /Float32Array/],
  ['AttentionLayer.forward: query of the wrong width', () => withLayer((l) => l.forward({ query: F(6) })), RangeError, 'query', /multiple of dModel=4/],
  ['AttentionLayer.forward: headMask of the wrong length', () => withLayer((l) => l.forward({ query: ex().query, headMask: new Uint8Array(1) })), RangeError, 'headMask', /length numHeads=2/],
  ['AttentionLayer.forward: keyMask of the wrong length', () => withLayer((l) => l.forward({ query: ex().query, keyMask: new Uint8Array(5) })), RangeError, 'keyMask', /length Tk=3/],
  // createParallelLayer and ParallelLayer.forward: the same checks, on the calling side, before any Worker starts
  ['createParallelLayer: no options', () => lab.createParallelLayer(), TypeError, 'options', /options object/],
  ['createParallelLayer: thread instead of threads', () => lab.createParallelLayer({ ...weightsOf(), thread: 2 }), TypeError, 'thread', /did you mean threads\?/],
  ['createParallelLayer: threads zero', () => lab.createParallelLayer({ ...weightsOf(), threads: 0 }), RangeError, 'threads', /positive integer/],
  ['createParallelLayer: threads a string', () => lab.createParallelLayer({ ...weightsOf(), threads: '2' }), TypeError, 'threads', /positive integer/],
  ['createParallelLayer: threads 1000', () => lab.createParallelLayer({ ...weightsOf(), threads: 1000 }), RangeError, 'threads', /at most 64/],
  ['createParallelLayer: wO of the wrong length', () => lab.createParallelLayer({ ...weightsOf(), wO: F(12) }), RangeError, 'wO', /length 16/],
  ['createParallelLayer: numHeads does not divide dModel', () => lab.createParallelLayer({ ...weightsOf(), numHeads: 3 }), RangeError, 'numHeads', /divide dModel/],
  ['createParallelLayer: mechanism unknown', () => lab.createParallelLayer({ ...weightsOf(), mechanism: 'gpu' }), TypeError, 'mechanism', /'auto', 'pthreads' or 'workers'/],
  ['createParallelLayer: wQ holding NaN', () => lab.createParallelLayer({ ...weightsOf(), wQ: withNaN(ex().wQ, 5) }), RangeError, 'wQ[5]', /finite/],
  ['ParallelLayer.forward: query of the wrong width', () => withParallel((l) => l.forward({ query: F(6) })), RangeError, 'query', /multiple of dModel=4/],
  ['ParallelLayer.forward: query a plain Array', () => withParallel((l) => l.forward({ query: [1, 2, 3, 4] })), TypeError, 'query', /Float32Array/],
  ['ParallelLayer.forward: headMask of the wrong length', () => withParallel((l) => l.forward({ query: ex().query, headMask: new Uint8Array(1) })), RangeError, 'headMask', /length numHeads=2/],
  ['ParallelLayer.forward: keyMask of the wrong length', () => withParallel((l) => l.forward({ query: ex().query, keyMask: new Uint8Array(5) })), RangeError, 'keyMask', /length Tk=3/],
  ['ParallelLayer.forward: causal with Tq ≠ Tk', () => withParallel((l) => l.forward({ query: ex().query, key: F(8), causal: true })), RangeError, 'causal', /Tq/],
  ['ParallelLayer.forward: returnWeights a string', () => withParallel((l) => l.forward({ query: ex().query, returnWeights: 'yes' })), TypeError, 'returnWeights', /boolean/],
  ['ParallelLayer.forward: a misspelt option', () => withParallel((l) => l.forward({ query: ex().query, returnWeight: true })), TypeError, 'returnWeight', /did you mean returnWeights\?/],
  ['ParallelLayer.forward on a disposed layer', async () => { const l = await lab.createParallelLayer(weightsOf()); await l.dispose(); return l.forward({ query: ex().query }); }, TypeError, 'ParallelLayer.forward', /disposed/],
  ['AttentionLayer.forward on a disposed layer', () => { const l = lab.createLayer(weightsOf()); l.dispose(); return l.forward({ query: ex().query }); }, TypeError, 'AttentionLayer.forward', /disposed/],

  // parameterCount
  ['parameterCount: no options', () => lab.parameterCount(), TypeError, 'options', /options object/],
  ['parameterCount: numHeads a string', () => lab.parameterCount({ dModel: 512, numHeads: '8' }), TypeError, 'numHeads', /positive integer/],
  ['parameterCount: numHeads does not divide dModel', () => lab.parameterCount({ dModel: 512, numHeads: 3 }), RangeError, 'numHeads', /divide dModel/],
  ['parameterCount: dModel Infinity', () => lab.parameterCount({ dModel: Infinity, numHeads: 1 }), RangeError, 'dModel', /positive integer/],
  ['parameterCount: dK zero', () => lab.parameterCount({ dModel: 8, numHeads: 2, dK: 0, dV: 4 }), RangeError, 'dK', /positive integer/],
  ['parameterCount: bias a string', () => lab.parameterCount({ dModel: 8, numHeads: 2, bias: 'yes' }), TypeError, 'bias', /boolean/],
  ['parameterCount: dModel 2^31 - 1, a count beyond 2^53', () => lab.parameterCount({ dModel: 2 ** 31 - 1, numHeads: 1 }), RangeError, 'dModel', /too large/],

  // scalingExperiment
  ['scalingExperiment: options null', () => lab.scalingExperiment(null), TypeError, 'options', /options object/],
  ['scalingExperiment: dK NaN', () => lab.scalingExperiment({ dK: NaN }), RangeError, 'dK', /positive integer/],
  ['scalingExperiment: dK zero', () => lab.scalingExperiment({ dK: 0 }), RangeError, 'dK', /positive integer/],
  ['scalingExperiment: numKeys a string', () => lab.scalingExperiment({ dK: 8, numKeys: '8' }), TypeError, 'numKeys', /positive integer/],
  ['scalingExperiment: numQueries zero', () => lab.scalingExperiment({ dK: 8, numQueries: 0 }), RangeError, 'numQueries', /positive integer/],
  ['scalingExperiment: seed negative', () => lab.scalingExperiment({ dK: 8, seed: -1 }), RangeError, 'seed', /non-negative integer/],
  ['scalingExperiment: seed Infinity', () => lab.scalingExperiment({ dK: 8, seed: Infinity }), RangeError, 'seed', /non-negative integer/],
  ['scalingExperiment: seed a string', () => lab.scalingExperiment({ dK: 8, seed: '1' }), TypeError, 'seed', /non-negative integer/],
  ['scalingExperiment: dK 2^20 too large', () => lab.scalingExperiment({ dK: 2 ** 20 }), RangeError, 'dK', /too large: dK ≤ 65536/],
  ['scalingExperiment: 10^5 × 10^5 scores too large', () => lab.scalingExperiment({ dK: 8, numQueries: 1e5, numKeys: 1e5 }), RangeError, 'numQueries', /too large/],

  // headsTrial
  ['headsTrial: options missing', () => lab.headsTrial(), TypeError, 'options', /options object/],
  ['headsTrial: numHeads missing', () => lab.headsTrial({}), TypeError, 'numHeads', /positive integer/],
  ['headsTrial: numHeads misspelt', () => lab.headsTrial({ heads: 4 }), TypeError, 'heads', /did you mean numHeads/],
  ['headsTrial: numHeads does not divide dModel', () => lab.headsTrial({ numHeads: 3 }), RangeError, 'numHeads', /divide dModel/],
  ['headsTrial: numHeads above 64', () => lab.headsTrial({ numHeads: 128, dModel: 128 }), RangeError, 'numHeads', /1\.\.64/],
  ['headsTrial: task unknown', () => lab.headsTrial({ numHeads: 4, task: 'sorting' }), RangeError, 'task', /known: two-relations/],
  ['headsTrial: task a number', () => lab.headsTrial({ numHeads: 4, task: 5 }), TypeError, 'task', /string/],
  ['headsTrial: steps negative', () => lab.headsTrial({ numHeads: 4, steps: -1 }), RangeError, 'steps', /non-negative integer/],
  ['headsTrial: steps a string', () => lab.headsTrial({ numHeads: 4, steps: '10' }), TypeError, 'steps', /non-negative integer/],
  ['headsTrial: steps beyond 20000', () => lab.headsTrial({ numHeads: 4, steps: 1e6 }), RangeError, 'steps', /at most 20000/],
  ['headsTrial: evalExamples zero', () => lab.headsTrial({ numHeads: 4, evalExamples: 0 }), RangeError, 'evalExamples', /positive integer/],
  ['headsTrial: evalExamples beyond 20000', () => lab.headsTrial({ numHeads: 4, steps: 0, evalExamples: 1e6 }), RangeError, 'evalExamples', /between 1 and 20000/],
  ['headsTrial: seed NaN', () => lab.headsTrial({ numHeads: 4, seed: NaN }), RangeError, 'seed', /non-negative integer/],

  // createTrainer
  ['createTrainer: options null', () => lab.createTrainer(null), TypeError, 'options', /options object/],
  ['createTrainer: task a number', () => lab.createTrainer({ task: 3 }), TypeError, 'task', /string/],
  ['createTrainer: task unknown', () => lab.createTrainer({ task: 'sorting' }), RangeError, 'task', /known: two-relations/],
  ['createTrainer: task misspelt', () => lab.createTrainer({ task: 'two-relation' }), RangeError, 'task', /unknown task "two-relation"; did you mean two-relations\? \(known: two-relations/],
  ['createTrainer: task that looks like HTML', () => lab.createTrainer({ task: '<img src=x onerror=alert(1)>' }), RangeError, 'task', /known: two-relations/],
  ['createTrainer: numHeads zero', () => lab.createTrainer({ numHeads: 0 }), RangeError, 'numHeads', /positive integer/],
  ['createTrainer: numHeads does not divide dModel', () => lab.createTrainer({ numHeads: 3, dModel: 16 }), RangeError, 'numHeads', /divide dModel/],
  ['createTrainer: numHeads above 64', () => lab.createTrainer({ numHeads: 128, dModel: 128 }), RangeError, 'numHeads', /1\.\.64/],
  ['createTrainer: dModel fractional', () => lab.createTrainer({ dModel: 2.5 }), RangeError, 'dModel', /positive integer/],
  ['createTrainer: dModel 2^20', () => lab.createTrainer({ dModel: 2 ** 20, numHeads: 1 }), RangeError, 'dModel', /1\.\.1024/],
  ['createTrainer: learningRate NaN', () => lab.createTrainer({ learningRate: NaN }), RangeError, 'learningRate', /finite number in \(0, 10\]/],
  ['createTrainer: learningRate negative', () => lab.createTrainer({ learningRate: -1 }), RangeError, 'learningRate', /finite number in \(0, 10\]/],
  ['createTrainer: learningRate a string', () => lab.createTrainer({ learningRate: '0.01' }), TypeError, 'learningRate', /number/],
  ['createTrainer: batchSize zero', () => lab.createTrainer({ batchSize: 0 }), RangeError, 'batchSize', /positive integer/],
  ['createTrainer: batchSize 10^6', () => lab.createTrainer({ batchSize: 1e6 }), RangeError, 'batchSize', /1\.\.4096/],
  ['createTrainer: optimizer unknown', () => lab.createTrainer({ optimizer: 'rmsprop' }), RangeError, 'optimizer', /'adam' or 'sgd'/],
  ['createTrainer: seed fractional', () => lab.createTrainer({ seed: 1.5 }), RangeError, 'seed', /non-negative integer/],
  ['createTrainer: causal a string', () => lab.createTrainer({ causal: 'yes' }), TypeError, 'causal', /boolean/],
  ['createTrainer: d_model 1024 with batches of 4096, beyond the heap', () => lab.createTrainer({ dModel: 1024, numHeads: 1, batchSize: 4096 }),
    RangeError, 'batchSize', /too large|memory/],

  // loadTrainer
  ['loadTrainer: a string', () => lab.loadTrainer('model'), TypeError, 'bytes', /Uint8Array/],
  ['loadTrainer: a Float32Array', () => lab.loadTrainer(F(4)), TypeError, 'bytes', /Uint8Array/],
  ['loadTrainer: no bytes', () => lab.loadTrainer(new Uint8Array(0)), RangeError, 'bytes', /magic 'HLAB'/],
  ['loadTrainer: garbage', () => lab.loadTrainer(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), RangeError, 'bytes', /magic 'HLAB'/],
  ['loadTrainer: cut short', async () => lab.loadTrainer((await savedModel()).subarray(0, 100)), RangeError, 'bytes', /expected \d+ bytes of parameters, found 30/],
  ['loadTrainer: one byte too many', async () => { const b = await savedModel(); const x = new Uint8Array(b.length + 1); x.set(b); return lab.loadTrainer(x); },
    RangeError, 'bytes', /expected \d+ bytes of parameters/],
  ['loadTrainer: format version 3', async () => lab.loadTrainer(await editedModel((b) => { b[4] = 3; })), RangeError, 'bytes', /version 3 \(expected 1 or 2\)/],
  ['loadTrainer: a damaged byte', async () => { const b = (await savedModel()).slice(); b[200] ^= 4; return lab.loadTrainer(b); },
    RangeError, 'bytes', /the file is damaged \(checksum mismatch\) — save it again or download it again/],
  ['loadTrainer: a weight of 3e38 (one flipped exponent bit)', async () => lab.loadTrainer(await editedModel((b, v) => v.setFloat32(b.length - 4, 3e38, true))),
    RangeError, 'bytes', /parameter \d+ is 3e\+38, beyond the ±1e4/],
  ['loadTrainer: a NaN parameter', async () => lab.loadTrainer(await editedModel((b, v) => v.setFloat32(b.length - 4, NaN, true))), RangeError, 'bytes', /not finite/],
  ['loadTrainer: numHeads that does not divide dModel', async () => lab.loadTrainer(await editedModel((b, v, L) => v.setUint32(9 + L, 3, true))),
    RangeError, 'bytes', /numHeads must divide dModel/],
  ['loadTrainer: more than 64 MiB', () => lab.loadTrainer(new Uint8Array(64 * 2 ** 20 + 1)), RangeError, 'bytes', /at most 64 MiB/],
  ['loadTrainer: a well-formed file whose batch size does not fit the heap', async () => lab.loadTrainer(await editedModel(
    (b, v, L) => v.setUint32(29 + L, 4096, true), { dModel: 1024, numHeads: 1, batchSize: 64, seed: 1 })),
  RangeError, 'bytes', /too large|memory/],

  // Trainer methods
  ['Trainer.step(0)', () => withTrainer((t) => t.step(0)), RangeError, 'n', /positive integer/],
  ['Trainer.step("5")', () => withTrainer((t) => t.step('5')), TypeError, 'n', /positive integer/],
  ['Trainer.step(NaN)', () => withTrainer((t) => t.step(NaN)), RangeError, 'n', /positive integer/],
  ['Trainer.step(2e6)', () => withTrainer((t) => t.step(2e6)), RangeError, 'n', /at most 1000000/],
  ['Trainer.evaluate(-1)', () => withTrainer((t) => t.evaluate(-1)), RangeError, 'n', /positive integer/],
  ['Trainer.evaluate(1e9)', () => withTrainer((t) => t.evaluate(1e9)), RangeError, 'n', /at most 100000/],
  ['Trainer.headMetrics(2.5)', () => withTrainer((t) => t.headMetrics(2.5)), RangeError, 'n', /positive integer/],
  ['Trainer.setHeadEnabled(5, false) with 2 heads', () => withTrainer((t) => t.setHeadEnabled(5, false)), RangeError, 'head', /0\.\.1/],
  ['Trainer.setHeadEnabled(-1, true)', () => withTrainer((t) => t.setHeadEnabled(-1, true)), RangeError, 'head', /0\.\.1/],
  ['Trainer.setHeadEnabled(0, "no")', () => withTrainer((t) => t.setHeadEnabled(0, 'no')), TypeError, 'enabled', /boolean/],
  ['Trainer.setHeadEnabled("0", true)', () => withTrainer((t) => t.setHeadEnabled('0', true)), TypeError, 'head', /integer in 0\.\.1/],
  ['Trainer.headEnabled(2.5)', () => withTrainer((t) => t.headEnabled(2.5)), RangeError, 'head', /integer in 0\.\.1/],
  ['Trainer.step diverging (sgd, learningRate 10)', () => withTrainer((t) => t.step(1000), { learningRate: 10, optimizer: 'sgd', seed: 1 }),
    RangeError, 'learningRate 10', /training diverged at step \d+ .*kept its state from step \d+/],
  // disposed trainers
  ['a disposed Trainer: step', async () => (await disposedTrainer()).step(1), TypeError, 'Trainer.step', /disposed/],
  ['a disposed Trainer: evaluate', async () => (await disposedTrainer()).evaluate(), TypeError, 'Trainer.evaluate', /disposed/],
  ['a disposed Trainer: attentionWeights', async () => (await disposedTrainer()).attentionWeights(), TypeError, 'Trainer.attentionWeights', /disposed/],
  ['a disposed Trainer: probe', async () => (await disposedTrainer()).probe(), TypeError, 'Trainer.probe', /disposed/],
  ['a disposed Trainer: setHeadEnabled', async () => (await disposedTrainer()).setHeadEnabled(0, false), TypeError, 'Trainer.setHeadEnabled', /disposed/],
  ['a disposed Trainer: headMetrics', async () => (await disposedTrainer()).headMetrics(), TypeError, 'Trainer.headMetrics', /disposed/],
  ['a disposed Trainer: save', async () => (await disposedTrainer()).save(), TypeError, 'Trainer.save', /disposed/],
  ['a disposed Trainer: exportModel', async () => (await disposedTrainer()).exportModel(), TypeError, 'Trainer.exportModel', /disposed/],

  // languageTasks / createLanguageModel
  ['createLanguageModel: no options', () => lab.createLanguageModel(), TypeError, 'options', /options object/],
  ['createLanguageModel: task missing', () => lab.createLanguageModel({}), TypeError, 'task', /required: one of induction, cricket, english/],
  ['createLanguageModel: task a number', () => lab.createLanguageModel({ task: 1 }), TypeError, 'task', /string \(one of induction, cricket, english\)/],
  ['createLanguageModel: task unknown', () => lab.createLanguageModel({ task: 'two-relations' }), RangeError, 'task', /known: induction, cricket, english/],
  ['createLanguageModel: task misspelt', () => lab.createLanguageModel({ task: 'inductoin' }), RangeError, 'task', /unknown task "inductoin"; did you mean induction\? \(known: induction, cricket, english\)/],
  ['createLanguageModel: a misspelt option (numLayer)', () => lab.createLanguageModel({ task: 'induction', numLayer: 2 }), TypeError, 'numLayer', /did you mean numLayers\?/],
  ['createLanguageModel: numLayers 5', () => lab.createLanguageModel({ task: 'induction', numLayers: 5 }), RangeError, 'numLayers', /1\.\.4, got 5/],
  ['createLanguageModel: numLayers zero', () => lab.createLanguageModel({ task: 'induction', numLayers: 0 }), RangeError, 'numLayers', /positive integer/],
  ['createLanguageModel: numHeads does not divide dModel', () => lab.createLanguageModel({ task: 'induction', numHeads: 3 }), RangeError, 'numHeads', /divide dModel/],
  ['createLanguageModel: numHeads above 64', () => lab.createLanguageModel({ task: 'induction', numHeads: 128, dModel: 128 }), RangeError, 'numHeads', /1\.\.64/],
  ['createLanguageModel: dModel a string', () => lab.createLanguageModel({ task: 'induction', dModel: '32' }), TypeError, 'dModel', /positive integer/],
  ['createLanguageModel: dModel 2048', () => lab.createLanguageModel({ task: 'induction', dModel: 2048, numHeads: 1 }), RangeError, 'dModel', /1\.\.1024/],
  ['createLanguageModel: mlp a number', () => lab.createLanguageModel({ task: 'induction', mlp: 1 }), TypeError, 'mlp', /boolean/],
  ['createLanguageModel: seed negative', () => lab.createLanguageModel({ task: 'induction', seed: -1 }), RangeError, 'seed', /non-negative integer/],
  ['createLanguageModel: seed a string', () => lab.createLanguageModel({ task: 'induction', seed: '1' }), TypeError, 'seed', /non-negative integer/],
  ['createLanguageModel: learningRate 2', () => lab.createLanguageModel({ task: 'induction', learningRate: 2 }), RangeError, 'learningRate', /\(0, 1\]/],
  ['createLanguageModel: learningRate NaN', () => lab.createLanguageModel({ task: 'induction', learningRate: NaN }), RangeError, 'learningRate', /\(0, 1\]/],
  ['createLanguageModel: learningRate a string', () => lab.createLanguageModel({ task: 'induction', learningRate: '0.01' }), TypeError, 'learningRate', /number/],
  ['createLanguageModel: batchSize 10^5', () => lab.createLanguageModel({ task: 'induction', batchSize: 1e5 }), RangeError, 'batchSize', /1\.\.4096/],
  ['createLanguageModel: 4 layers of dModel 1024 with batches of 4096, beyond the heap', () => lab.createLanguageModel({ task: 'induction', numLayers: 4, numHeads: 1, dModel: 1024, batchSize: 4096 }),
    RangeError, 'batchSize', /too large.*384 MiB/],
  ['createLanguageModel: threads zero', () => lab.createLanguageModel({ task: 'induction', threads: 0 }), RangeError, 'threads', /positive integer/],
  ['createLanguageModel: threads 1.5', () => lab.createLanguageModel({ task: 'induction', threads: 1.5 }), RangeError, 'threads', /positive integer/],
  ['createLanguageModel: threads a string', () => lab.createLanguageModel({ task: 'induction', threads: 'two' }), TypeError, 'threads', /positive integer or 'auto'/],
  ['createLanguageModel: more threads than sequences in a batch', () => lab.createLanguageModel({ task: 'induction', batchSize: 4, threads: 5 }),
    RangeError, 'threads', /at most 4 \(the batch size: every thread runs at least one sequence\), got 5/],

  // loadLanguageModel
  ['loadLanguageModel: a string', () => lab.loadLanguageModel('model'), TypeError, 'bytes', /Uint8Array or ArrayBuffer/],
  ['loadLanguageModel: an Int8Array', () => lab.loadLanguageModel(new Int8Array(8)), TypeError, 'bytes', /Uint8Array or ArrayBuffer/],
  ['loadLanguageModel: no bytes', () => lab.loadLanguageModel(new Uint8Array(0)), RangeError, 'bytes', /no data/],
  ['loadLanguageModel: garbage', () => lab.loadLanguageModel(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), RangeError, 'bytes', /magic: not a HeadLab language-model file/],
  ['loadLanguageModel: a one-layer trainer file', async () => lab.loadLanguageModel(await savedModel()), RangeError, 'bytes', /magic: .*loadTrainer/],
  ['loadLanguageModel: format version 2', async () => lab.loadLanguageModel(await editedLm((b) => { b[4] = 2; })), RangeError, 'bytes', /version 2 \(expected 1\)/],
  ['loadLanguageModel: unknown task', async () => lab.loadLanguageModel(await editedLm((b) => { b[9] = 'X'.charCodeAt(0); })), RangeError, 'bytes', /task: unknown task 'Xricket'/],
  ['loadLanguageModel: seqLen not the task\'s', async () => lab.loadLanguageModel(await editedLm((b, v, L) => v.setUint32(13 + L, 19, true))), RangeError, 'bytes', /seqLen: 19 does not match task cricket \(18\)/],
  ['loadLanguageModel: numLayers 9', async () => lab.loadLanguageModel(await editedLm((b, v, L) => v.setUint32(17 + L, 9, true))), RangeError, 'bytes', /numLayers must be in 1\.\.4/],
  ['loadLanguageModel: cut short', async () => lab.loadLanguageModel((await withLm((lm) => lm.save())).subarray(0, 200)), RangeError, 'bytes', /damaged \(checksum mismatch; length: .* \(cut short\)\)/],
  ['loadLanguageModel: a damaged byte', async () => { const b = await withLm((lm) => lm.save()); b[100] ^= 8; return lab.loadLanguageModel(b); },
    RangeError, 'bytes', /the file is damaged \(checksum mismatch\) — save it again/],
  ['loadLanguageModel: a weight of 3e38', async () => lab.loadLanguageModel(await editedLm((b, v) => v.setFloat32(b.length - 4, 3e38, true))), RangeError, 'bytes', /parameter \d+ is 3e\+38, beyond the ±1e4/],
  ['loadLanguageModel: a NaN weight', async () => lab.loadLanguageModel(await editedLm((b, v) => v.setFloat32(b.length - 8, NaN, true))), RangeError, 'bytes', /parameter \d+ is not finite/],
  ['loadLanguageModel: more than 64 MiB', () => lab.loadLanguageModel(new Uint8Array(64 * 2 ** 20 + 1)), RangeError, 'bytes', /at most 64 MiB/],
  ['loadLanguageModel: options a number', async () => lab.loadLanguageModel(await withLm((lm) => lm.save()), 2), TypeError, 'options', /options object/],
  ['loadLanguageModel: a misspelt option (thread)', async () => lab.loadLanguageModel(await withLm((lm) => lm.save()), { thread: 2 }), TypeError, 'thread', /did you mean threads\?/],
  ['loadLanguageModel: threads zero', async () => lab.loadLanguageModel(await withLm((lm) => lm.save()), { threads: 0 }), RangeError, 'threads', /positive integer/],
  ['loadLanguageModel: more threads than the file\'s batch', async () => lab.loadLanguageModel(await withLm((lm) => lm.save()), { threads: 4096 }),
    RangeError, 'threads', /at most \d+ \(the batch size/],

  // LanguageModel methods
  ['LanguageModel.step(0)', () => withLm((lm) => lm.step(0)), RangeError, 'n', /positive integer/],
  ['LanguageModel.step("3")', () => withLm((lm) => lm.step('3')), TypeError, 'n', /positive integer/],
  ['LanguageModel.step(2e6)', () => withLm((lm) => lm.step(2e6)), RangeError, 'n', /at most 1000000/],
  ['LanguageModel.evaluate(1e9)', () => withLm((lm) => lm.evaluate(1e9)), RangeError, 'n', /at most 100000/],
  ['LanguageModel.headScores(-2)', () => withLm((lm) => lm.headScores(-2)), RangeError, 'n', /positive integer/],
  ['LanguageModel.headReport(1.5)', () => withLm((lm) => lm.headReport(1.5)), RangeError, 'n', /positive integer/],
  ['LanguageModel.tokenize(42)', () => withLm((lm) => lm.tokenize(42)), TypeError, 'text', /string of words/],
  ['LanguageModel.tokenize: an unknown word', () => withLm((lm) => lm.tokenize('virat hits the ball')), RangeError, 'hits', /unknown word "hits" at word 2; .*model\.vocabulary and lab\.languageTasks\(\)/],
  ['LanguageModel.tokenize: text longer than the sequence', () => withLm((lm) => lm.tokenize('the '.repeat(18))), RangeError, 'text', /18 words.*19 tokens, more than the sequence length 18/],
  ['LanguageModel.tokenize: the start token inside the text', () => withLm((lm) => lm.tokenize('virat <s> hit')), RangeError, '"<s>" at word 2', /start token, which the model puts at position 0 only; the model reserves it/],
  ['LanguageModel.tokenize: the pad token in the text', () => withLm((lm) => lm.tokenize('virat hit <pad>')), RangeError, '"<pad>" at word 3', /pad token.*the model reserves it/],
  ['LanguageModel.attention: the start token inside an array', () => withLm((lm) => lm.attention(['<s>', 'virat', '<s>'])), RangeError, 'tokensOrText[2]', /start token.*reserves it/],
  ['LanguageModel.attention: 18 words in an array (the start token makes 19)', () => withLm((lm) => lm.attention(new Array(18).fill('the'))), RangeError, 'tokensOrText', /18 tokens; with the start token <s> that is 19 tokens, more than the sequence length 18/],
  ['LanguageModel.attention(null)', () => withLm((lm) => lm.attention(null)), TypeError, 'tokensOrText', /string of words, an Int32Array/],
  ['LanguageModel.attention: 19 token ids', () => withLm((lm) => lm.attention(new Int32Array(19))), RangeError, 'tokensOrText', /at most 18 tokens \(the sequence length of task cricket, the start token included\), got 19/],
  ['LanguageModel.attention: a token id beyond the vocabulary', () => withLm((lm) => lm.attention([0, 42])), RangeError, 'tokensOrText[1]', /token id in 0\.\.41, got 42/],
  ['LanguageModel.attention: an unknown word in an array', () => withLm((lm) => lm.attention(['<s>', 'sachin'])), RangeError, 'tokensOrText[1]', /unknown word "sachin"/],
  ['LanguageModel.attention: a boolean in the array', () => withLm((lm) => lm.attention([0, true])), TypeError, 'tokensOrText[1]', /token id or a word/],
  ['LanguageModel.attention: a Float32Array', () => withLm((lm) => lm.attention(new Float32Array(3))), TypeError, 'tokensOrText', /Int32Array/],
  ['LanguageModel.predict: topK 0', () => withLm((lm) => lm.predict('virat', { topK: 0 })), RangeError, 'topK', /positive integer/],
  ['LanguageModel.predict: topK above the vocabulary', () => withLm((lm) => lm.predict('virat', { topK: 50 })), RangeError, 'topK', /at most 42/],
  ['LanguageModel.predict: a misspelt option (k)', () => withLm((lm) => lm.predict('virat', { top: 3 })), TypeError, 'top', /did you mean topK\?/],
  ['LanguageModel.generate: options a number', () => withLm((lm) => lm.generate(5)), TypeError, 'options', /options object/],
  ['LanguageModel.generate(prompt): a misspelt option (max)', () => withLm((lm) => lm.generate('virat', { maxToken: 2 })), TypeError, 'maxToken', /did you mean maxTokens\?/],
  ['LanguageModel.generate(prompt): maxTokens the sequence length', () => withLm((lm) => lm.generate('virat', { maxTokens: 18 })), RangeError, 'maxTokens', /at most 17/],
  ['LanguageModel.run: a misspelt option (allLogit)', () => withLm((lm) => lm.run('virat', { allLogit: true })), TypeError, 'allLogit', /did you mean allLogits\?/],
  ['LanguageModel.run: ablate not an array', () => withLm((lm) => lm.run('virat', { ablate: 3 })), TypeError, 'ablate', /array of \{ layer, head \}/],
  ['LanguageModel.run: ablate a head beyond the model', () => withLm((lm) => lm.run('virat', { ablate: [{ layer: 0, head: 2 }] })), RangeError, 'ablate[0].head', /integer in 0\.\.1/],
  ['LanguageModel.run: topK above the vocabulary', () => withLm((lm) => lm.run('virat', { topK: 43 })), RangeError, 'topK', /at most 42/],
  ['LanguageModel.run: an unknown word', () => withLm((lm) => lm.run('virat smashed')), RangeError, 'textOrIds', /unknown word "smashed" at word 2/],
  ['LanguageModel.headScores({ length })', () => withLm((lm) => lm.headScores({ length: 20 })), TypeError, 'length', /the options are examples/],
  ['LanguageModel.generate: a misspelt option (temp)', () => withLm((lm) => lm.generate({ temp: 0 })), TypeError, 'temp', /did you mean temperature\?/],
  ['LanguageModel.generate: temperature -1', () => withLm((lm) => lm.generate({ temperature: -1 })), RangeError, 'temperature', /\[0, 100\]/],
  ['LanguageModel.generate: temperature a string', () => withLm((lm) => lm.generate({ temperature: 'hot' })), TypeError, 'temperature', /number/],
  ['LanguageModel.generate: maxTokens zero', () => withLm((lm) => lm.generate({ maxTokens: 0 })), RangeError, 'maxTokens', /positive integer/],
  ['LanguageModel.generate: seed fractional', () => withLm((lm) => lm.generate({ seed: 0.5 })), RangeError, 'seed', /non-negative integer/],
  ['LanguageModel.generate: a prompt with an unknown word', () => withLm((lm) => lm.generate({ prompt: 'virat smashed' })), RangeError, 'prompt', /unknown word "smashed" at word 2/],
  ['LanguageModel.generate: a prompt holding the pad token id', () => withLm((lm) => lm.generate({ prompt: [lm.vocabulary.indexOf('virat'), lm.vocabulary.indexOf('<pad>')] })), RangeError, 'prompt[1]', /prompt\[1\]: "<pad>" is task cricket's pad token/],
  ['LanguageModel.generate: a prompt that is a number', () => withLm((lm) => lm.generate({ prompt: 5 })), TypeError, 'prompt', /string of words/],
  ['LanguageModel.setHeadEnabled(1, 0, false) with 1 layer', () => withLm((lm) => lm.setHeadEnabled(1, 0, false)), RangeError, 'layer', /integer in 0\.\.0/],
  ['LanguageModel.setHeadEnabled(0, 2, false) with 2 heads', () => withLm((lm) => lm.setHeadEnabled(0, 2, false)), RangeError, 'head', /integer in 0\.\.1/],
  ['LanguageModel.setHeadEnabled(0, 0, "off")', () => withLm((lm) => lm.setHeadEnabled(0, 0, 'off')), TypeError, 'on', /boolean/],
  ['LanguageModel.headEnabled("0", 0)', () => withLm((lm) => lm.headEnabled('0', 0)), TypeError, 'layer', /integer in 0\.\.0/],
  ['a disposed LanguageModel: step', async () => (await disposedLm()).step(), TypeError, 'LanguageModel.step', /disposed/],
  ['a disposed LanguageModel: attention', async () => (await disposedLm()).attention('virat'), TypeError, 'LanguageModel.attention', /disposed/],
  ['a disposed LanguageModel: generate', async () => (await disposedLm()).generate(), TypeError, 'LanguageModel.generate', /disposed/],
  ['a disposed LanguageModel: save', async () => (await disposedLm()).save(), TypeError, 'LanguageModel.save', /disposed/],
  ['a disposed LanguageModel: config', async () => (await disposedLm()).config(), TypeError, 'LanguageModel.config', /disposed/],
  ['a disposed LanguageModel: config, the deprecated property', async () => (await disposedLm()).config.dModel, TypeError, 'LanguageModel.config', /disposed/],

  // loadPretrained: the arguments
  ['loadPretrained: source a number', () => lab.loadPretrained(42), TypeError, 'source', /repository id .*the URL of a folder, File objects .*\{ config, weights, tokenizer \}/],
  ['loadPretrained: source null', () => lab.loadPretrained(null), TypeError, 'source', /repository id/],
  ['loadPretrained: a file: URL', () => lab.loadPretrained('file:///models/gpt2/'), TypeError, 'source', /only http\(s\) folders .*File objects/],
  ['loadPretrained: source.tokenizer missing', () => lab.loadPretrained({ config: {}, weights: new ArrayBuffer(8) }), TypeError, 'source.tokenizer', /needs all three/],
  ['loadPretrained: source.weights a number', () => lab.loadPretrained({ ...pre(), weights: 7 }), TypeError, 'source.weights', /ArrayBuffer, a Uint8Array or a Blob/],
  ['loadPretrained: source with an unknown key', () => lab.loadPretrained({ ...pre(), vocab: {} }), TypeError, 'vocab', /the keys are config, weights, tokenizer/],
  ['loadPretrained: options a string', () => lab.loadPretrained(pre(), 'gpt2'), TypeError, 'options', /options object/],
  ['loadPretrained: a misspelt option (maxByte)', () => lab.loadPretrained(pre(), { maxByte: 10 }), TypeError, 'maxByte', /did you mean maxBytes\?/],
  ['loadPretrained: threads 65', () => lab.loadPretrained(pre(), { threads: 65 }), RangeError, 'threads', /at most 64, got 65/],
  ['loadPretrained: threads zero', () => lab.loadPretrained(pre(), { threads: 0 }), RangeError, 'threads', /positive integer/],
  ['loadPretrained: threads a string', () => lab.loadPretrained(pre(), { threads: 'many' }), TypeError, 'threads', /positive integer or 'auto'/],
  ['loadPretrained: maxBytes negative', () => lab.loadPretrained(pre(), { maxBytes: -1 }), RangeError, 'maxBytes', /positive number of bytes/],
  ['loadPretrained: maxBytes a string', () => lab.loadPretrained(pre(), { maxBytes: '1e9' }), TypeError, 'maxBytes', /positive number of bytes/],
  ['loadPretrained: maxBytes below the weights', () => lab.loadPretrained(pre(), { maxBytes: 10000 }), RangeError, 'maxBytes', /config\.json is \d+ bytes|model\.safetensors is \d+ bytes/],
  ['loadPretrained: hubUrl not http(s)', () => lab.loadPretrained('openai-community/gpt2', { hubUrl: 'ftp://hub' }), TypeError, 'hubUrl', /http\(s\) URL/],
  ['loadPretrained: revision empty', () => lab.loadPretrained('openai-community/gpt2', { revision: '' }), TypeError, 'revision', /branch, tag, commit or 'refs\/pr\/N'/],
  ['loadPretrained: signal not an AbortSignal', () => lab.loadPretrained(pre(), { signal: {} }), TypeError, 'signal', /AbortSignal/],
  ['loadPretrained: onProgress a string', () => lab.loadPretrained(pre(), { onProgress: 'log' }), TypeError, 'onProgress', /function/],
  ['loadPretrained: cache a string', () => lab.loadPretrained(pre(), { cache: 'yes' }), TypeError, 'cache', /boolean/],
  // loadPretrained: damaged or unsupported files, each an Error naming the file and the field or tensor
  ['loadPretrained: an unsupported architecture', () => lab.loadPretrained(preConfig({ architectures: ['T5ForConditionalGeneration'] })), Error, 'T5ForConditionalGeneration',
    /config\.json: architectures .* is not supported; HeadLab runs GPT2LMHeadModel, GPTNeoForCausalLM/],
  ['loadPretrained: config.json without n_layer', () => lab.loadPretrained(preConfig({ n_layer: undefined })), Error, 'n_layer', /config\.json: n_layer is missing/],
  ['loadPretrained: config.json n_head not dividing n_embd', () => lab.loadPretrained(preConfig({ n_head: 5 })), Error, 'n_head', /config\.json: n_head 5 does not divide n_embd 32/],
  ['loadPretrained: config.json activation relu', () => lab.loadPretrained(preConfig({ activation_function: 'relu' })), Error, 'activation_function', /config\.json: .*not supported; HeadLab runs gelu_new/],
  ['loadPretrained: GPT-Neo attention_types for 3 layers', () => lab.loadPretrained({ ...pre('neo-f32'), config: { ...pre('neo-f32').config, attention_types: [[['global', 'local', 'global'], 1]] } }),
    Error, 'attention_types', /config\.json: attention_types describes 3 layers but num_layers is 2/],
  ['loadPretrained: config.json not JSON', () => lab.loadPretrained({ ...pre(), config: '{"n_layer": 2,' }), Error, 'config.json', /config\.json is not valid JSON/],
  ['loadPretrained: tokenizer.json not JSON', () => lab.loadPretrained({ ...pre(), tokenizer: 'not json' }), Error, 'tokenizer.json', /tokenizer\.json is not valid JSON/],
  ['loadPretrained: tokenizer.json without a model', () => lab.loadPretrained({ ...pre(), tokenizer: { version: '1.0' } }), Error, 'tokenizer.json', /tokenizer\.json: model is missing/],
  ['loadPretrained: tokenizer.json with an unknown pre-tokenizer', () => lab.loadPretrained({ ...pre(), tokenizer: { ...pre().tokenizer, pre_tokenizer: { type: 'Nope' } } }), Error, 'tokenizer.json', /Nope/],
  ['loadPretrained: tokenizer ids beyond vocab_size', () => lab.loadPretrained(preConfig({ vocab_size: 300, bos_token_id: null, eos_token_id: null })), Error, 'tokenizer.json', /token id 352, beyond config\.json's vocab_size 300/],
  ['loadPretrained: safetensors of 4 bytes', () => lab.loadPretrained(preWeights(new Uint8Array(4))), Error, 'model.safetensors', /truncated: 4 bytes/],
  ['loadPretrained: safetensors cut in half', () => lab.loadPretrained(preWeights(new Uint8Array(pre().weights).slice(0, 100000))), Error, 'model.safetensors', /beyond the data|runs past the end/],
  ['loadPretrained: a header length beyond the file', () => { const w = new Uint8Array(pre().weights); new DataView(w.buffer).setBigUint64(0, 1n << 40n, true); return lab.loadPretrained(preWeights(w)); },
    Error, 'model.safetensors', /header length \d+ runs past the end of the file/],
  ['loadPretrained: overlapping offsets', () => lab.loadPretrained(editedWeights((h) => { h['transformer.wpe.weight'].data_offsets = h['transformer.wte.weight'].data_offsets.map((x, i) => x + (i ? 0 : 0)); h['transformer.wpe.weight'].shape = h['transformer.wte.weight'].shape; })),
    Error, 'model.safetensors', /overlap/],
  ['loadPretrained: offsets beyond the data', () => lab.loadPretrained(editedWeights((h, d) => { h['transformer.ln_f.bias'].data_offsets = [d.length, d.length + 128]; })),
    Error, 'transformer.ln_f.bias', /model\.safetensors: transformer\.ln_f\.bias: data_offsets .* beyond the data/],
  ['loadPretrained: a dtype that disagrees with torch_dtype', () => lab.loadPretrained(preConfig({ torch_dtype: 'bfloat16' })), Error, 'model.safetensors', /dtype F32 disagrees with config\.json's torch_dtype/],
  ['loadPretrained: a shape that disagrees with config.json', () => lab.loadPretrained(preConfig({ n_positions: 64, n_ctx: 64 })), Error, 'wpe.weight', /model\.safetensors: .*wpe\.weight: shape \[32, 32\] disagrees with config\.json/],
  ['loadPretrained: a NaN weight', () => lab.loadPretrained(editedWeights((h, d) => { new DataView(d.buffer).setFloat32(h['transformer.h.1.mlp.c_fc.weight'].data_offsets[0] + 4 * 7, NaN, true); })),
    Error, 'transformer.h.1.mlp.c_fc.weight', /model\.safetensors: .*h\.1\.mlp\.c_fc\.weight: element 7 is NaN/],
  ['loadPretrained: a missing tensor', () => lab.loadPretrained(editedWeights((h) => { delete h['transformer.h.0.ln_2.weight']; })), Error, 'h.0.ln_2.weight', /missing tensor/],

  // PretrainedModel methods
  ['PretrainedModel.tokenize(5)', () => withPre((m) => m.tokenize(5)), TypeError, 'text', /must be a string/],
  ['PretrainedModel.run(42)', () => withPre((m) => m.run(42)), TypeError, 'textOrIds', /a string, or token ids as an Int32Array or number\[\]/],
  ['PretrainedModel.run: text with no tokens', () => withPre((m) => m.run('')), RangeError, 'textOrIds', /gives no tokens/],
  ['PretrainedModel.run: text longer than the context', () => withPre((m) => m.run('Virat hit the ball. '.repeat(10))), RangeError, 'textOrIds', /is \d+ tokens long, more than the 32 the model's context length allows/],
  ['PretrainedModel.run: a token id beyond the vocabulary', () => withPre((m) => m.run([1, 353])), RangeError, 'textOrIds[1]', /token id in 0\.\.352, got 353/],
  ['PretrainedModel.run: a Float32Array', () => withPre((m) => m.run(new Float32Array(3))), TypeError, 'textOrIds', /Int32Array/],
  ['PretrainedModel.run: ablate layer 2 of 2', () => withPre((m) => m.run('Virat', { ablate: [{ layer: 2, head: 0 }] })), RangeError, 'ablate[0].layer', /integer in 0\.\.1, got 2/],
  ['PretrainedModel.run: ablate head a string', () => withPre((m) => m.run('Virat', { ablate: [{ layer: 0, head: '1' }] })), TypeError, 'ablate[0].head', /integer in 0\.\.3/],
  ['PretrainedModel.run: ablate not an array', () => withPre((m) => m.run('Virat', { ablate: { layer: 0, head: 0 } })), TypeError, 'ablate', /array of \{ layer, head \}/],
  ['PretrainedModel.run: topK 0', () => withPre((m) => m.run('Virat', { topK: 0 })), RangeError, 'topK', /positive integer/],
  ['PretrainedModel.run: topK above the vocabulary', () => withPre((m) => m.run('Virat', { topK: 1000 })), RangeError, 'topK', /at most 353/],
  ['PretrainedModel.run: a misspelt option (attentions)', () => withPre((m) => m.run('Virat', { attentions: true })), TypeError, 'attentions', /did you mean attention\?/],
  ['PretrainedModel.run: attention a string', () => withPre((m) => m.run('Virat', { attention: 'yes' })), TypeError, 'attention', /boolean/],
  ['PretrainedModel.headScores: length beyond the context', () => withPre((m) => m.headScores({ length: 16 })), RangeError, 'length', /at most 15/],
  ['PretrainedModel.headScores: seed negative', () => withPre((m) => m.headScores({ seed: -1 })), RangeError, 'seed', /non-negative integer/],
  ['PretrainedModel.logitLens: topK 0', () => withPre((m) => m.logitLens('Virat', { topK: 0 })), RangeError, 'topK', /positive integer/],
  ['PretrainedModel.generate: temperature -1', () => withPre((m) => m.generate('Virat', { temperature: -1 })), RangeError, 'temperature', /\[0, 100\]/],
  ['PretrainedModel.generate: maxTokens 0', () => withPre((m) => m.generate('Virat', { maxTokens: 0 })), RangeError, 'maxTokens', /positive integer/],
  ['PretrainedModel.generate: a prompt filling the context', () => withPre((m) => m.generate(new Array(32).fill(40))), RangeError, 'prompt', /1\.\.31 token ids/],
  ['a disposed PretrainedModel: run', async () => (await disposedPre()).run('Virat'), TypeError, 'PretrainedModel.run', /disposed/],
  ['a disposed PretrainedModel: info', async () => (await disposedPre()).info, TypeError, 'PretrainedModel.info', /disposed/],
  ['a disposed PretrainedModel: headScores', async () => (await disposedPre()).headScores(), TypeError, 'PretrainedModel.headScores', /disposed/],
];

for (const [name, call, Type, arg, expected] of CASES) {
  test(`catalogue: ${name} → ${Type.name} naming ${arg}; the instance still computes the worked example`, async () => {
    const before = lab.liveHandleCount();
    await expectError(call, Type, arg, expected);
    checkWorkedExample(lab);
    assert.equal(lab.liveHandleCount(), before, 'live Embind handles after the case');
    assert.equal(lab.liveWorkerCount(), 0, 'Workers left running after the case');
  });
}

test('the catalogue has at least 30 distinct cases across the API', () => {
  const names = new Set(CASES.map(([n]) => n));
  assert.equal(names.size, CASES.length, 'case names are distinct');
  assert.ok(CASES.length >= 30, `${CASES.length} cases`);
  const areas = new Set(CASES.map(([n]) => n.split(/[:.(]/)[0]));
  for (const area of ['mha', 'createLayer', 'AttentionLayer', 'createParallelLayer', 'ParallelLayer', 'parameterCount', 'scalingExperiment', 'headsTrial', 'createTrainer', 'loadTrainer', 'Trainer', 'a disposed Trainer',
    'createLanguageModel', 'loadLanguageModel', 'LanguageModel', 'a disposed LanguageModel', 'loadPretrained', 'PretrainedModel', 'a disposed PretrainedModel']) {
    assert.ok(areas.has(area), `cases for ${area}`);
  }
});
