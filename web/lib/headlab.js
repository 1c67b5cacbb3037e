// HeadLab: multi-head attention in WebAssembly SIMD, as an ES module.
// A thin layer over the Embind build: it checks arguments, copies typed arrays
// into one reusable arena in the wasm heap, and copies results out.
// Works in browsers (main thread and Workers) and in Node 20.

import { startThreadedLayer, threadsUnavailable, threadWorkerCount } from './headlab-threads.js';

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null &&
  typeof window === 'undefined' && typeof importScripts !== 'function';

const ALIGN = 16;  // bytes; each array in the arena starts on a SIMD boundary

// Two wasm modules, each in two flavours. `core` is the forward pass and the
// experiments; `train` is the trainer, loaded the first time a page asks for it.
// The scalar flavour is the same C++ compiled without WebAssembly SIMD, for
// engines that lack it. The import() paths and the `new URL(…, import.meta.url)`
// of each .wasm are literal so bundlers (Vite, webpack) see them and emit the files.
const MODULES = {
  core: {
    simd: { file: 'headlab_core', load: () => import('./gen/headlab_core.mjs'), url: () => new URL('./gen/headlab_core.wasm', import.meta.url) },
    scalar: { file: 'headlab_core_scalar', load: () => import('./gen/headlab_core_scalar.mjs'), url: () => new URL('./gen/headlab_core_scalar.wasm', import.meta.url) },
  },
  train: {
    simd: { file: 'headlab_train', load: () => import('./gen/headlab_train.mjs'), url: () => new URL('./gen/headlab_train.wasm', import.meta.url) },
    scalar: { file: 'headlab_train_scalar', load: () => import('./gen/headlab_train_scalar.mjs'), url: () => new URL('./gen/headlab_train_scalar.wasm', import.meta.url) },
  },
};

/**
 * Under Node, reads a file (a path or a file: URL) into bytes. This module names no Node
 * built-in, so browser bundles never meet one: the package's "node" entry (headlab.node.js)
 * registers fs.readFile under a global symbol, and Node ≥ 20.16 also offers it through
 * process.getBuiltinModule when this file is imported by its path.
 */
function nodeReadFile() {
  const registered = globalThis[Symbol.for('headlab.readFile')];
  if (typeof registered === 'function') return registered;
  const fs = globalThis.process?.getBuiltinModule?.('fs/promises');
  if (fs) return fs.readFile;
  throw new Error('HeadLab under Node reads its .wasm files with fs: import it as the package (`headlab`, whose "node" entry provides fs), ' +
    'use Node 20.16 or later, or pass the bytes as wasmBinary (and trainWasmBinary).');
}

/**
 * A Node built-in module, without naming it in an import (so browser bundles never meet one):
 * process.getBuiltinModule, Node 20.16 or later (the package's engines). undefined elsewhere.
 */
function nodeBuiltin(name) {
  return globalThis.process?.getBuiltinModule?.(name);
}

// The smallest module that uses a SIMD instruction: (func (result v128) i32.const 0 i32x4.splat).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 8, 1, 6, 0, 65, 0, 253, 17, 11]);

/**
 * Whether this JavaScript engine runs WebAssembly SIMD (fixed-width, 128-bit).
 * {@link createHeadlab} loads the scalar build when it does not.
 * @returns {boolean}
 */
export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

async function instantiate(module, flavour, options) {
  const { file, load, url } = MODULES[module][flavour];
  const moduleArgs = {};
  const binary = module === 'core' ? options.wasmBinary : options.trainWasmBinary;
  if (binary) moduleArgs.wasmBinary = binary;
  // Where the .wasm is looked for: locateFile's answer, else next to this file in gen/ (in a
  // Vite or webpack bundle, wherever the bundler put the file it emitted).
  const defaultUrl = url();
  const genDir = new URL('.', defaultUrl).href;
  const where = options.locateFile ? String(options.locateFile(`${file}.wasm`, genDir)) : defaultUrl.href;
  // Emscripten's loader asks for the file by name; it gets the one resolved here.
  moduleArgs.locateFile = (name, prefix) => (name === `${file}.wasm` ? where : options.locateFile ? options.locateFile(name, prefix) : prefix + name);
  const advice = `Serve ${file}.wasm next to ${file}.mjs, or tell createHeadlab where it is with locateFile ` +
    '(or pass its bytes as wasmBinary); a web server must send it in full, as application/wasm.';
  if (isNode && !moduleArgs.wasmBinary) {
    // The glue is built for browsers and Workers; under Node the bytes are read here.
    const readFile = nodeReadFile();
    const path = /^[a-z]+:\/\//i.test(where) ? new URL(where) : where;
    try {
      moduleArgs.wasmBinary = await readFile(path);
    } catch (e) {
      throw new Error(`HeadLab could not load its WebAssembly module ${file}.wasm from ${where}: ${e.code ?? e.message}. ${advice}`, { cause: e });
    }
  }
  const factory = (await load()).default;
  try {
    return await factory(moduleArgs);
  } catch (e) {
    // Emscripten wraps the cause as "Aborted(…). Build with -s ASSERTIONS=1 for more info.", twice over at times.
    let reason = String(e?.message ?? e).replace(/\s*Build with -s ASSERTIONS=1 for more info\.?/g, '').trim();
    for (let i = 0; i < 3; i++) reason = reason.replace(/^(RuntimeError: )?Aborted\((.*)\)\.?$/s, '$2');
    // Emscripten's message does not say which URL failed or why: ask the server once more, for the status.
    let status = '';
    if (!isNode && !moduleArgs.wasmBinary && typeof fetch === 'function') {
      status = await fetch(where).then((r) => (r.ok ? `HTTP ${r.status}, ${r.headers.get('content-type') ?? 'no content type'}` : `HTTP ${r.status} ${r.statusText}`.trim()),
        (f) => `the request failed (${f?.message ?? f}; blocked by CORS or the network?)`);
    }
    throw new Error(`HeadLab could not load its WebAssembly module ${file}.wasm from ${where}: ${status ? `${status}; ` : ''}${reason}. ${advice}`, { cause: e });
  }
}

function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (ArrayBuffer.isView(value)) return `${value.constructor.name} of length ${value.length}`;
  if (Array.isArray(value)) return `Array of length ${value.length}`;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return typeof value;
}

/** Edit distance between two short strings (option names), for "did you mean". */
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length];
}

/**
 * An options object whose keys are all in `known` (when given): a misspelt key
 * (`returnWeight`) would otherwise be ignored silently, so it is a TypeError
 * naming it and the closest known key.
 */
function requireObject(fn, options, known) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: expected an options object, got ${describe(options)}`);
  }
  if (!known) return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    // The closest known key by edit distance, or one that contains the given one (`heads` → numHeads).
    const lower = key.toLowerCase();
    const [best] = known.map((k) => [k, k.toLowerCase().includes(lower) && lower.length >= 3 ? 0.5 : distance(key, k)]).sort((a, b) => a[1] - b[1]);
    const hint = best && best[1] <= Math.max(2, Math.floor(key.length / 3)) ? `did you mean ${best[0]}? ` : '';
    throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)}; ${hint}the options are ${known.join(', ')}`);
  }
}

const WEIGHT_KEYS = ['dModel', 'numHeads', 'dK', 'dV', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO'];
const CALL_KEYS = ['query', 'key', 'value', 'causal', 'keyMask', 'headMask', 'returnWeights', 'returnIntermediates'];
const OPTION_KEYS = {
  createHeadlab: ['flavour', 'locateFile', 'wasmBinary', 'trainWasmBinary'],
  multiHeadAttention: [...CALL_KEYS, ...WEIGHT_KEYS],
  'AttentionLayer.forward': CALL_KEYS,
  createLayer: WEIGHT_KEYS,
  createParallelLayer: [...WEIGHT_KEYS, 'threads', 'mechanism'],
  'ParallelLayer.forward': CALL_KEYS,
  parameterCount: ['dModel', 'numHeads', 'dK', 'dV', 'bias'],
  scalingExperiment: ['dK', 'numQueries', 'numKeys', 'seed'],
  createTrainer: ['task', 'numHeads', 'dModel', 'seed', 'learningRate', 'batchSize', 'optimizer', 'causal'],
  createLanguageModel: ['task', 'numLayers', 'numHeads', 'dModel', 'mlp', 'seed', 'learningRate', 'batchSize'],
  'LanguageModel.generate': ['prompt', 'maxTokens', 'temperature', 'seed'],
  'LanguageModel.predict': ['topK'],
};

/** A positive integer below 2^31; `undefined` allowed when optional. */
function requireDim(fn, name, value, optional = false) {
  if (value === undefined && optional) return 0;
  if (typeof value !== 'number') {
    throw new TypeError(`${fn}: ${name} must be a positive integer, got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${fn}: ${name} must be a positive integer, got ${value}`);
  }
  if (value > 0x7fffffff) {
    throw new RangeError(`${fn}: ${name} is too large: it must be a positive integer at most 2147483647, got ${value}`);
  }
  return value;
}

/** The shortest decimal that rounds to the same float32 (C++ holds learning rates as float): 0.003, not 0.003000000026077032. */
function fromFloat32(x) {
  for (let digits = 1; digits < 17; digits++) {
    const y = Number(x.toPrecision(digits));
    if (Math.fround(y) === Math.fround(x)) return y;
  }
  return x;
}

/** A non-negative safe integer (a seed). */
function requireSeed(fn, name, value) {
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a non-negative integer, got ${describe(value)}`);
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${fn}: ${name} must be a non-negative integer, got ${value}`);
  return value;
}

function requireBool(fn, name, value) {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

function requireFloat32(fn, name, value, length, shape) {
  if (!(value instanceof Float32Array)) {
    throw new TypeError(`${fn}: ${name} must be a Float32Array of length ${length} (${shape}), got ${describe(value)}`);
  }
  if (value.length !== length) {
    throw new RangeError(`${fn}: ${name} must have length ${length} (${shape}), got length ${value.length}`);
  }
  for (let i = 0; i < value.length; i++) {
    if (!Number.isFinite(value[i])) {
      throw new RangeError(`${fn}: ${name}[${i}] is ${value[i]}; every element must be a finite number`);
    }
  }
  return value;
}

/** dModel and numHeads, and dK / dV (0 when not given: dModel / numHeads). */
function dimsOf(fn, options) {
  return {
    dModel: requireDim(fn, 'dModel', options.dModel),
    numHeads: requireDim(fn, 'numHeads', options.numHeads),
    dK: requireDim(fn, 'dK', options.dK, true),
    dV: requireDim(fn, 'dV', options.dV, true),
  };
}

/** Rows of a [rows, dModel] input, checking type and divisibility. */
function rowsOf(fn, name, value, dModel) {
  if (!(value instanceof Float32Array)) {
    throw new TypeError(`${fn}: ${name} must be a Float32Array of shape [T, dModel=${dModel}], got ${describe(value)}`);
  }
  if (value.length === 0 || value.length % dModel !== 0) {
    throw new RangeError(`${fn}: ${name} length must be a positive multiple of dModel=${dModel} ([T, ${dModel}]), got length ${value.length}`);
  }
  return value.length / dModel;
}

class Arena {
  constructor() { this.parts = []; this.bytes = 0; }
  /** Adds a part of `count` elements of `bytesPer` bytes; returns its index. */
  add(count, bytesPer) {
    const offset = this.bytes;
    this.bytes = offset + Math.ceil((count * bytesPer) / ALIGN) * ALIGN;
    this.parts.push(offset);
    return this.parts.length - 1;
  }
}

/**
 * The loaded module. Get one with {@link createHeadlab}. The forward pass and the
 * experiments are synchronous; the training calls return promises because the
 * first of them loads the training module.
 */
export class Headlab {
  /**
   * @param {any} core the Emscripten module (private)
   * @param {'simd'|'scalar'} flavour which build it is
   * @param {object} options what createHeadlab was given, for loading the training module
   */
  constructor(core, flavour, options) {
    this._core = core;
    this._flavour = flavour;
    this._options = options;
    this._train = null;  // the training module once loaded
    this._trainPending = null;
    this._lmTasks = null;  // the language-model task table once read
  }

  /** @private The training module, loaded on first use. */
  async _trainModule() {
    if (!this._trainPending) {
      this._trainPending = instantiate('train', this._flavour, this._options).then((m) => { this._train = m; return m; });
      this._trainPending.catch(() => { this._trainPending = null; });  // a failed load can be retried
    }
    return this._trainPending;
  }

  /**
   * Multi-head attention forward pass:
   * `Concat(head_1..head_h) W^O`, `head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V`.
   *
   * Layouts are row-major. `wQ`, `wK` are `[dModel, numHeads*dK]` with head i in
   * columns `i*dK .. (i+1)*dK-1`; `wV` is `[dModel, numHeads*dV]`; `wO` is
   * `[numHeads*dV, dModel]`. `key` defaults to `query`, `value` to `key`.
   * A query row that can attend to no key (masked out) gets all-zero weights and
   * a zero head output, never NaN.
   *
   * @param {import('./headlab').MultiHeadAttentionOptions} options
   * @returns {import('./headlab').MultiHeadAttentionResult}
   * @throws {TypeError|RangeError} naming the argument, the expected shape and what it got
   * @example
   * const lab = await createHeadlab();
   * const dModel = 4, numHeads = 2, I = new Float32Array([1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]);
   * const r = lab.multiHeadAttention({
   *   query: new Float32Array([3,0,0,1, 0,3,0,1, 1,1,0,1]), dModel, numHeads,
   *   wQ: I, wK: I, wV: I, wO: I, returnWeights: true,
   * });
   * r.output;   // Float32Array(12)
   * r.weights;  // Float32Array(2*3*3), rows sum to 1
   */
  multiHeadAttention(options) {
    return this._forward('multiHeadAttention', options, null);
  }

  /**
   * A multi-head attention layer whose weights are checked and copied into the
   * wasm heap once: `layer.forward({ query, key?, value?, keyMask?, headMask?, causal?,
   * returnWeights?, returnIntermediates? })` then only moves the inputs, which is
   * what repeated calls with the same weights (a demo redrawing, a benchmark)
   * want. Same options and layouts as {@link Headlab#multiHeadAttention}.
   * Call `dispose()` when done (it is also freed when garbage-collected).
   * @param {import('./headlab').AttentionLayerOptions} options
   * @returns {AttentionLayer}
   * @throws {TypeError|RangeError} naming the argument, the expected shape and what it got
   * @example
   * const layer = lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I });
   * layer.forward({ query: x }).output;
   * layer.dispose();
   */
  createLayer(options) {
    const fn = 'createLayer';
    requireObject(fn, options, OPTION_KEYS[fn]);
    const { shape, specs } = this._checkLayer(fn, options);
    const arena = new Arena();
    const parts = specs.map(([, arr]) => arena.add(arr.length, 4));
    const base = arena.bytes <= MAX_REQUEST_BYTES ? this._core.allocate(arena.bytes) : 0;
    if (!base) throw new RangeError(`${fn}: the weights (${Math.ceil(arena.bytes / 2 ** 20)} MiB) do not fit in the wasm heap, capped at ${MAX_MEMORY_BYTES / 2 ** 20} MiB`);
    const heap = this._core.HEAPF32;
    const addresses = {};
    specs.forEach(([name, arr], i) => {
      addresses[name] = base + arena.parts[parts[i]];
      heap.set(arr, addresses[name] >> 2);
    });
    return new AttentionLayer(this, { ...shape, base, addresses });
  }

  /** @private The shape and weights of createLayer's options, checked: { shape: { dModel, numHeads, dK, dV }, specs: [name, array][] }. */
  _checkLayer(fn, options) {
    const { dModel, numHeads, dK: dKIn, dV: dVIn } = dimsOf(fn, options);
    const resolved = this._core.resolveShape({ tQ: 1, tK: 1, dModel, numHeads, dK: dKIn, dV: dVIn, causal: false }, true);
    if (resolved.error) throw new RangeError(`${fn}: ${resolved.error}`);
    const shape = { dModel, numHeads, dK: resolved.dK, dV: resolved.dV };
    return { shape, specs: this._checkWeights(fn, options, shape) };
  }

  /** @private Checks wQ..wO (and bQ..bO when given) against the shape; returns [name, array] of those present. */
  _checkWeights(fn, options, { dModel, numHeads, dK, dV }) {
    const hk = numHeads * dK, hv = numHeads * dV;
    const specs = [
      ['wQ', dModel * hk, `[dModel=${dModel}, numHeads*dK=${hk}]`, true],
      ['wK', dModel * hk, `[dModel=${dModel}, numHeads*dK=${hk}]`, true],
      ['wV', dModel * hv, `[dModel=${dModel}, numHeads*dV=${hv}]`, true],
      ['wO', hv * dModel, `[numHeads*dV=${hv}, dModel=${dModel}]`, true],
      ['bQ', hk, `[numHeads*dK=${hk}]`, false],
      ['bK', hk, `[numHeads*dK=${hk}]`, false],
      ['bV', hv, `[numHeads*dV=${hv}]`, false],
      ['bO', dModel, `[dModel=${dModel}]`, false],
    ];
    const present = [];
    for (const [name, length, shape, required] of specs) {
      if (!required && options[name] === undefined) continue;
      present.push([name, requireFloat32(fn, name, options[name], length, shape)]);
    }
    return present;
  }

  /**
   * @private Checks the options of a forward call (multiHeadAttention's when layer = null,
   * a layer's otherwise: `layer` holds its shape) and returns them resolved; runs nothing.
   */
  _checkCall(fn, options, layer) {
    requireObject(fn, options, OPTION_KEYS[fn]);
    const { dModel, numHeads, dK: dKIn, dV: dVIn } = layer ?? dimsOf(fn, options);
    const causal = requireBool(fn, 'causal', options.causal);
    const returnWeights = requireBool(fn, 'returnWeights', options.returnWeights);
    const returnIntermediates = requireBool(fn, 'returnIntermediates', options.returnIntermediates);

    const query = options.query;
    const tQ = rowsOf(fn, 'query', query, dModel);
    const key = options.key === undefined ? query : options.key;
    const tK = options.key === undefined ? tQ : rowsOf(fn, 'key', key, dModel);
    const value = options.value === undefined ? key : options.value;
    if (options.value !== undefined) {
      const tV = rowsOf(fn, 'value', value, dModel);
      if (tV !== tK) {
        throw new RangeError(`${fn}: value must have as many rows as key (Tk=${tK}), got ${tV} rows`);
      }
    }

    const outputOnly = !returnWeights && !returnIntermediates;
    const resolved = this._core.resolveShape({ tQ, tK, dModel, numHeads, dK: dKIn, dV: dVIn, causal }, outputOnly);
    if (resolved.error) throw new RangeError(`${fn}: ${resolved.error}`);
    const dK = resolved.dK, dV = resolved.dV, hv = numHeads * dV;

    requireFloat32(fn, 'query', query, tQ * dModel, `[Tq=${tQ}, dModel=${dModel}]`);
    if (key !== query) requireFloat32(fn, 'key', key, tK * dModel, `[Tk=${tK}, dModel=${dModel}]`);
    if (value !== key && value !== query) requireFloat32(fn, 'value', value, tK * dModel, `[Tk=${tK}, dModel=${dModel}]`);
    const weights = layer ? [] : this._checkWeights(fn, options, { dModel, numHeads, dK, dV });
    let keyMask = options.keyMask;
    if (keyMask !== undefined) {
      if (!(keyMask instanceof Uint8Array)) {
        throw new TypeError(`${fn}: keyMask must be a Uint8Array of length Tk=${tK} (0 = padding), got ${describe(keyMask)}`);
      }
      if (keyMask.length !== tK) {
        throw new RangeError(`${fn}: keyMask must have length Tk=${tK} (0 = padding), got length ${keyMask.length}`);
      }
    }

    const headMask = options.headMask;
    if (headMask !== undefined) {
      if (!(headMask instanceof Uint8Array)) {
        throw new TypeError(`${fn}: headMask must be a Uint8Array of length numHeads=${numHeads} (0 = that head switched off), got ${describe(headMask)}`);
      }
      if (headMask.length !== numHeads) {
        throw new RangeError(`${fn}: headMask must have length numHeads=${numHeads} (0 = that head switched off), got length ${headMask.length}`);
      }
    }
    return { query, key, value, tQ, tK, dModel, numHeads, dK, dV, hv, causal, keyMask, headMask, returnWeights, returnIntermediates, resolved, weights };
  }

  /**
   * @private The forward pass behind multiHeadAttention (layer = null: weights
   * come with the options) and AttentionLayer.forward (weights already in the heap).
   */
  _forward(fn, options, layer) {
    const { query, key, value, tQ, tK, dModel, numHeads, dK, dV, hv, causal, keyMask, headMask, returnWeights, returnIntermediates, resolved, weights } =
      this._checkCall(fn, options, layer);

    // Lay out every array in one arena.
    const arena = new Arena();
    const F = 4;
    const inputs = [['query', query]];
    if (key !== query) inputs.push(['key', key]);
    if (value !== key && value !== query) inputs.push(['value', value]);
    inputs.push(...weights);
    const inputIdx = inputs.map(([, arr]) => arena.add(arr.length, F));
    const maskIdx = keyMask ? arena.add(keyMask.length, 1) : -1;
    const headMaskIdx = headMask ? arena.add(headMask.length, 1) : -1;
    const outputs = [['output', tQ * dModel]];
    if (returnWeights) outputs.push(['weights', numHeads * tQ * tK]);
    if (returnIntermediates) {
      outputs.push(['q', numHeads * tQ * dK], ['k', numHeads * tK * dK], ['v', numHeads * tK * dV],
        ['scores', numHeads * tQ * tK], ['scaledScores', numHeads * tQ * tK],
        ['headOutputs', numHeads * tQ * dV], ['concat', tQ * hv]);
    }
    const outputIdx = outputs.map(([, n]) => arena.add(n, F));

    const core = this._core;
    const needed = arena.bytes + resolved.workspaceBytes;
    const base = needed <= MAX_REQUEST_BYTES ? core.reserveArena(arena.bytes) : 0;
    if (!base) {
      throw new RangeError(`${fn}: request too large: needs about ${Math.ceil(needed / 2 ** 20)} MiB of wasm memory ` +
        `(Tq=${tQ}, Tk=${tK}, dModel=${dModel}, numHeads=${numHeads}); the heap is capped at ${MAX_MEMORY_BYTES / 2 ** 20} MiB`);
    }
    const call = {
      shape: { tQ, tK, dModel, numHeads, dK, dV, causal },
      query: 0, key: 0, value: 0, keyMask: 0, headMask: 0, wQ: 0, wK: 0, wV: 0, wO: 0, bQ: 0, bK: 0, bV: 0, bO: 0,
      output: 0, weights: 0, q: 0, k: 0, v: 0, scores: 0, scaledScores: 0, headOutputs: 0, concat: 0,
      ...(layer ? layer.addresses : {}),
    };
    let heap = core.HEAPF32;  // views are re-read after any call that may grow memory
    inputs.forEach(([name, arr], j) => {
      const addr = base + arena.parts[inputIdx[j]];
      heap.set(arr, addr >> 2);
      call[name] = addr;
    });
    if (key === query) call.key = call.query;
    if (value === query) call.value = call.query;
    else if (value === key) call.value = call.key;
    if (keyMask) {
      call.keyMask = base + arena.parts[maskIdx];
      core.HEAPU8.set(keyMask, call.keyMask);
    }
    if (headMask) {
      call.headMask = base + arena.parts[headMaskIdx];
      core.HEAPU8.set(headMask, call.headMask);
    }
    outputs.forEach(([name], j) => { call[name] = base + arena.parts[outputIdx[j]]; });

    const error = core.forward(call);
    if (error) throw new RangeError(`${fn}: ${error}`);
    heap = core.HEAPF32;
    const copy = (name, n) => heap.slice(call[name] >> 2, (call[name] >> 2) + n);
    const result = { output: copy('output', tQ * dModel), tQ, tK, dK, dV };
    if (returnWeights) result.weights = copy('weights', numHeads * tQ * tK);
    if (returnIntermediates) {
      result.intermediates = {};
      for (const [name, n] of outputs.slice(returnWeights ? 2 : 1)) result.intermediates[name] = copy(name, n);
    }
    return result;
  }

  /**
   * Parameter counts of multi-head attention. With dK = dV = dModel/numHeads the
   * weights total 4·dModel² whatever numHeads is.
   * @param {{dModel: number, numHeads: number, dK?: number, dV?: number, bias?: boolean}} options
   * @returns {{wQ: number, wK: number, wV: number, wO: number, bias: number, weights: number, total: number}}
   * @throws {RangeError} when numHeads does not divide dModel and dK/dV are not given
   * @example
   * lab.parameterCount({ dModel: 512, numHeads: 8 }).total;  // 1048576 = 4 * 512**2
   */
  parameterCount(options) {
    const fn = 'parameterCount';
    requireObject(fn, options, OPTION_KEYS[fn]);
    const { dModel, numHeads, dK, dV } = dimsOf(fn, options);
    const bias = requireBool(fn, 'bias', options.bias);
    const r = this._core.parameterCount(dModel, numHeads, dK, dV, bias);
    if (r.error) throw new RangeError(`${fn}: ${r.error}`);
    return { wQ: r.wQ, wK: r.wK, wV: r.wV, wO: r.wO, bias: r.bias, weights: r.weights, total: r.total };
  }

  /**
   * Why scores are divided by √dK: draws queries and keys with i.i.d. N(0, 1)
   * entries (seeded, in wasm) and returns their dot products and the row
   * softmax with and without the scaling, plus summary statistics.
   * @param {{dK: number, numQueries?: number, numKeys?: number, seed?: number}} options
   *   numQueries defaults to 256, numKeys to 64, seed to 1
   * @returns {import('./headlab').ScalingExperimentResult}
   * @example
   * const s = lab.scalingExperiment({ dK: 512 });
   * s.varianceRaw;        // ≈ 512
   * s.varianceScaled;     // ≈ 1
   * s.maxWeightUnscaled;  // close to 1: softmax saturates without the scaling
   */
  scalingExperiment(options) {
    const fn = 'scalingExperiment';
    requireObject(fn, options, OPTION_KEYS[fn]);
    const dK = requireDim(fn, 'dK', options.dK);
    const numQueries = options.numQueries === undefined ? 256 : requireDim(fn, 'numQueries', options.numQueries);
    const numKeys = options.numKeys === undefined ? 64 : requireDim(fn, 'numKeys', options.numKeys);
    const seed = options.seed === undefined ? 1 : options.seed;
    if (typeof seed !== 'number') throw new TypeError(`${fn}: seed must be a non-negative integer, got ${describe(seed)}`);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`${fn}: seed must be a non-negative integer, got ${seed}`);
    const n = numQueries * numKeys;
    if (dK > 65536 || n > 2 ** 22 || (numQueries + numKeys) * dK > 2 ** 24) {
      throw new RangeError(`${fn}: request too large: dK ≤ 65536, numQueries·numKeys ≤ 4194304 and ` +
        `(numQueries+numKeys)·dK ≤ 16777216, got dK=${dK}, numQueries=${numQueries}, numKeys=${numKeys}`);
    }
    const arena = new Arena();
    const parts = [arena.add(n, 4), arena.add(n, 4), arena.add(n, 4)];
    const base = this._core.reserveArena(arena.bytes);
    if (!base) throw new RangeError(`${fn}: request too large for the wasm heap`);
    const [dot, scaled, unscaled] = parts.map((p) => base + arena.parts[p]);
    const s = this._core.scalingExperiment(dK, numQueries, numKeys, seed, dot, scaled, unscaled);
    if (s.error) throw new RangeError(`${fn}: ${s.error}`);
    const heap = this._core.HEAPF32;
    const copy = (addr) => heap.slice(addr >> 2, (addr >> 2) + n);
    return {
      dK, numQueries, numKeys,
      dotProducts: copy(dot), weightsScaled: copy(scaled), weightsUnscaled: copy(unscaled),
      varianceRaw: s.varianceRaw, varianceScaled: s.varianceScaled,
      entropyScaled: s.entropyScaled, entropyUnscaled: s.entropyUnscaled,
      maxWeightScaled: s.maxWeightScaled, maxWeightUnscaled: s.maxWeightUnscaled,
    };
  }

  /**
   * The training tasks, as a table: name, description, seqLen, vocab,
   * numRelations, queryPosition, relationPositions (-1 = varies per example),
   * relationNames, tokenNames. Loads the training module on first use.
   * @returns {Promise<import('./headlab').TaskDescription[]>}
   * @example
   * (await lab.tasks()).map((t) => t.name);  // ['two-relations', 'three-relations', 'four-relations', 'pronoun']
   */
  async tasks() {
    return (await this._trainModule()).taskTable();
  }

  /**
   * A training session: a synthetic task, a one-layer multi-head attention model
   * (token + position embedding → MHA with residual → one read-out per relation)
   * and its optimizer. Call `dispose()` when done. The first call loads the
   * training module (headlab_train.wasm); the trainer's own methods are synchronous.
   * @param {import('./headlab').TrainerOptions} [options]
   * @returns {Promise<Trainer>} rejects with a TypeError or RangeError naming the bad option
   * @example
   * const t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, seed: 7 });
   * t.step(500);                 // { step: 500, loss, accuracy }
   * t.evaluate(1000).accuracy;   // close to 1 once both heads have specialised
   * t.dispose();
   */
  async createTrainer(options = {}) {
    const fn = 'createTrainer';
    requireObject(fn, options, OPTION_KEYS[fn]);
    const config = {
      task: options.task ?? 'two-relations',
      numHeads: options.numHeads === undefined ? 2 : requireDim(fn, 'numHeads', options.numHeads),
      dModel: options.dModel === undefined ? 16 : requireDim(fn, 'dModel', options.dModel),
      seed: options.seed === undefined ? 1 : options.seed,
      learningRate: options.learningRate ?? 0.003,
      batchSize: options.batchSize === undefined ? 64 : requireDim(fn, 'batchSize', options.batchSize),
      optimizer: options.optimizer ?? 'adam',
      causal: requireBool(fn, 'causal', options.causal),
    };
    if (typeof config.task !== 'string') throw new TypeError(`${fn}: task must be a string (one of ${(await this.tasks()).map((t) => t.name).join(', ')}), got ${describe(config.task)}`);
    if (typeof config.seed !== 'number') throw new TypeError(`${fn}: seed must be a non-negative integer, got ${describe(config.seed)}`);
    if (!Number.isSafeInteger(config.seed) || config.seed < 0) throw new RangeError(`${fn}: seed must be a non-negative integer, got ${config.seed}`);
    if (typeof config.learningRate !== 'number') throw new TypeError(`${fn}: learningRate must be a number, got ${describe(config.learningRate)}`);
    if (!(Number.isFinite(config.learningRate) && config.learningRate > 0 && config.learningRate <= 10)) {
      throw new RangeError(`${fn}: learningRate must be a finite number in (0, 10], got ${config.learningRate}`);
    }
    if (config.optimizer !== 'adam' && config.optimizer !== 'sgd') {
      throw new RangeError(`${fn}: optimizer must be 'adam' or 'sgd', got ${describe(config.optimizer)}`);
    }
    const core = new (await this._trainModule()).TrainerCore();
    const error = core.init(config);
    if (error) {
      core.delete();
      throw new RangeError(`${fn}: ${error}`);
    }
    return new Trainer(this, core);
  }

  /**
   * Restores a trainer from the bytes of `trainer.save()` (format documented in
   * cpp/include/headlab/trainer.hpp). Adam's moments are not saved.
   * @param {Uint8Array} bytes
   * @returns {Promise<Trainer>} rejects with a TypeError or RangeError when the bytes are not a valid HeadLab model file
   */
  async loadTrainer(bytes) {
    const fn = 'loadTrainer';
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw new TypeError(`${fn}: bytes must be a Uint8Array (a saved model), got ${describe(bytes)}`);
    if (bytes.length > 64 * 2 ** 20) throw new RangeError(`${fn}: bytes: a saved model is at most 64 MiB, got ${bytes.length} bytes`);
    const train = await this._trainModule();
    const base = train.reserveFile(Math.max(bytes.length, 1));
    if (!base) throw new RangeError(`${fn}: bytes: too large for the wasm heap`);
    train.HEAPU8.set(bytes, base);
    const core = new train.TrainerCore();
    const error = core.load(base, bytes.length);
    if (error) {
      core.delete();
      throw new RangeError(`${fn}: bytes: ${error}`);
    }
    return new Trainer(this, core);
  }

  /**
   * One trial of the choosing-h experiment: at a fixed `dModel`, trains the
   * one-layer trainer with `numHeads` heads (dK = dModel / numHeads) on `task`
   * for `steps` Adam steps, then measures it on `evalExamples` held-out
   * examples. `relationsWithOwnHead` counts the relations some head gives at
   * least half its attention (the benefit of more heads); on the `lookup` task
   * `relationAccuracy[0]` needs query–key matching by content, which a tiny dK
   * cannot do (the cost). Deterministic for given options in a given build.
   * Loads the training module on first use; the trial itself is synchronous
   * inside the promise (seconds at the defaults), so call it from a Worker.
   * @param {import('./headlab').HeadsTrialOptions} options
   * @returns {Promise<import('./headlab').HeadsTrialResult>}
   * @example
   * const r = await lab.headsTrial({ numHeads: 4 });   // lookup, dModel 16, seed 1, 4000 steps
   * r.dK;                    // 4
   * r.relationsWithOwnHead;  // up to 4: one head per relation
   */
  async headsTrial(options) {
    const fn = 'headsTrial';
    requireObject(fn, options, ['task', 'dModel', 'numHeads', 'seed', 'steps', 'evalExamples']);
    const config = {
      task: options.task ?? 'lookup',
      dModel: options.dModel === undefined ? 16 : requireDim(fn, 'dModel', options.dModel),
      numHeads: requireDim(fn, 'numHeads', options.numHeads),
      seed: options.seed === undefined ? 1 : requireSeed(fn, 'seed', options.seed),
      steps: options.steps === undefined ? 4000 : options.steps,
      evalExamples: options.evalExamples === undefined ? 1000 : requireDim(fn, 'evalExamples', options.evalExamples),
    };
    if (typeof config.task !== 'string') throw new TypeError(`${fn}: task must be a string (one of ${(await this.tasks()).map((t) => t.name).join(', ')}), got ${describe(config.task)}`);
    if (typeof config.steps !== 'number') throw new TypeError(`${fn}: steps must be a non-negative integer, got ${describe(config.steps)}`);
    if (!Number.isSafeInteger(config.steps) || config.steps < 0) throw new RangeError(`${fn}: steps must be a non-negative integer, got ${config.steps}`);
    const r = (await this._trainModule()).headsTrial(config);
    if (r.error) throw new RangeError(`${fn}: ${r.error}`);
    return {
      task: config.task, dModel: config.dModel, numHeads: config.numHeads, dK: r.dK, seed: config.seed, steps: config.steps,
      loss: r.loss, accuracy: r.accuracy, relationAccuracy: r.relationAccuracy, bestShare: r.bestShare,
      relationsWithOwnHead: r.relationsWithOwnHead, diverged: r.diverged,
    };
  }

  /**
   * The language-model tasks, as a table: name, description, metric (what
   * `evaluate().accuracy` measures), seqLen, vocabulary (token names; a token's
   * id is its index), startToken (at position 0 of every sequence), padToken
   * (or null), stopToken (generation stops after it, or null) and the defaults
   * {@link Headlab#createLanguageModel} starts from (with `steps`, a run long
   * enough for the task's heads to form). Loads the training module on first use.
   * @returns {Promise<import('./headlab').LanguageTask[]>} a fresh copy on every call
   * @example
   * const [induction] = await lab.languageTasks();
   * induction.seqLen;             // 24
   * induction.defaults.numLayers; // 2
   */
  async languageTasks() {
    return structuredClone(await this._languageTaskTable());
  }

  /** @private The task table, read once from the training module. */
  async _languageTaskTable() {
    if (!this._lmTasks) {
      this._lmTasks = (await this._trainModule()).languageTaskTable();
      for (const t of this._lmTasks) t.defaults.learningRate = fromFloat32(t.defaults.learningRate);
    }
    return this._lmTasks;
  }

  /**
   * A small causal transformer language model (token + position embedding,
   * `numLayers` pre-LayerNorm blocks of causal multi-head attention, an MLP when
   * `mlp`, an unembedding) trained with Adam on a task of
   * {@link Headlab#languageTasks}. `task` is required; every other option
   * defaults to the task's `defaults` (seed too: one on which the task's heads
   * form in browsers). The same options give the same
   * losses, step for step. Call `dispose()` when done.
   * @param {import('./headlab').LanguageModelOptions} options
   * @returns {Promise<LanguageModel>} rejects with a TypeError or RangeError naming the bad option
   * @example
   * const lm = await lab.createLanguageModel({ task: 'induction', seed: 3 });
   * lm.step(300);                 // { step: 300, loss }
   * lm.evaluate().accuracy;       // next-token accuracy on the repeated segment
   * lm.attention('a b c a b c');  // { tokens, weights, shape: [2, 4, 7, 7] }
   * lm.dispose();
   */
  async createLanguageModel(options) {
    const fn = 'createLanguageModel';
    requireObject(fn, options, OPTION_KEYS[fn]);
    const tasks = await this._languageTaskTable();
    const names = tasks.map((t) => t.name).join(', ');
    if (options.task === undefined) throw new TypeError(`${fn}: task is required: one of ${names}`);
    if (typeof options.task !== 'string') throw new TypeError(`${fn}: task must be a string (one of ${names}), got ${describe(options.task)}`);
    const spec = tasks.find((t) => t.name === options.task);
    if (!spec) throw new RangeError(`${fn}: task: unknown task ${describe(options.task)} (known: ${names})`);
    const d = spec.defaults;
    const dim = (name) => (options[name] === undefined ? d[name] : requireDim(fn, name, options[name]));
    const config = {
      task: spec.name, numLayers: dim('numLayers'), numHeads: dim('numHeads'), dModel: dim('dModel'),
      mlp: options.mlp === undefined ? d.mlp : requireBool(fn, 'mlp', options.mlp),
      seed: options.seed === undefined ? d.seed : options.seed,
      learningRate: options.learningRate === undefined ? d.learningRate : options.learningRate,
      batchSize: dim('batchSize'),
    };
    requireSeed(fn, 'seed', config.seed);
    if (typeof config.learningRate !== 'number') throw new TypeError(`${fn}: learningRate must be a number, got ${describe(config.learningRate)}`);
    if (!(Number.isFinite(config.learningRate) && config.learningRate > 0 && config.learningRate <= 1)) {
      throw new RangeError(`${fn}: learningRate must be a finite number in (0, 1], got ${config.learningRate}`);
    }
    const train = await this._trainModule();
    const core = new train.LanguageModelCore();
    const error = core.init(config);
    if (error) {
      core.delete();
      throw new RangeError(`${fn}: ${error}`);
    }
    return new LanguageModel(this, core, spec);
  }

  /**
   * Restores a language model from the bytes of `model.save()` (format
   * documented in cpp/include/headlab/lm_file.hpp): same task, config, seed,
   * weights, head switches and step count. Adam's moments are not saved: further
   * training restarts them from zero.
   * @param {Uint8Array|ArrayBuffer} bytes
   * @returns {Promise<LanguageModel>} rejects with a TypeError when bytes is not a Uint8Array or ArrayBuffer,
   *   a RangeError (an Error) whose message names what is wrong when the file is not a valid language model
   * @example
   * const copy = await lab.loadLanguageModel(lm.save());
   */
  async loadLanguageModel(bytes) {
    const fn = 'loadLanguageModel';
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw new TypeError(`${fn}: bytes must be a Uint8Array or ArrayBuffer (a saved language model), got ${describe(bytes)}`);
    if (bytes.length > 64 * 2 ** 20) throw new RangeError(`${fn}: bytes: a saved language model is at most 64 MiB, got ${bytes.length} bytes`);
    const tasks = await this._languageTaskTable();
    const train = await this._trainModule();
    const base = train.reserveFile(Math.max(bytes.length, 1));
    if (!base) throw new RangeError(`${fn}: bytes: too large for the wasm heap`);
    train.HEAPU8.set(bytes, base);
    const core = new train.LanguageModelCore();
    const error = core.load(base, bytes.length);
    if (error) {
      core.delete();
      throw new RangeError(`${fn}: bytes: ${error}`);
    }
    const name = core.taskName();
    return new LanguageModel(this, core, tasks.find((t) => t.name === name));
  }

  /**
   * What is running: `flavour` is 'simd' or 'scalar' (the fallback for engines
   * without WebAssembly SIMD). `memoryBytes` is the size of the forward-pass
   * module's wasm heap, `heapInUseBytes` what malloc has handed out there; the
   * `training*` fields are the same for the training module (0 until it loads).
   * `parallel` says what {@link Headlab#createParallelLayer} would use: `mechanism`
   * ('workers') and `defaultThreads` (the cores available, at most 8; a layer also
   * uses at most numHeads), with `cores`.
   * @returns {import('./headlab').HeadlabInfo}
   * @example
   * lab.info().simd;  // true on the SIMD build
   */
  info() {
    const i = this._core.info();
    return {
      version: i.version, flavour: this._flavour, simd: i.simd, isa: i.isa,
      memoryBytes: this._core.HEAPU8.length, heapInUseBytes: i.heapInUse, maxMemoryBytes: MAX_MEMORY_BYTES,
      trainingLoaded: this._train !== null,
      trainingMemoryBytes: this._train ? this._train.HEAPU8.length : 0,
      trainingHeapInUseBytes: this._train ? this._train.heapInUse() : 0,
      parallel: { mechanism: this._threadsUnavailable() ? 'workers' : 'pthreads', defaultThreads: Math.min(availableCores(), DEFAULT_MAX_THREADS), cores: availableCores() },
    };
  }

  /** Live Embind handles in both modules; 0 when nothing leaked (for tests). */
  liveHandleCount() {
    return this._core.count_emval_handles() + (this._train ? this._train.count_emval_handles() : 0);
  }

  /**
   * A multi-head attention layer whose forward pass runs on several cores: each
   * of `threads` Workers (module Workers in browsers, worker_threads in Node)
   * loads the module and holds a contiguous slice of the heads (their columns of
   * W^Q, W^K, W^V, their rows of W^O; b^O in the first one), and the calling
   * thread sums the partial outputs. `forward` takes {@link AttentionLayer#forward}'s
   * options and resolves to the same result, within float rounding (the output
   * is summed in a different order). The options are checked here, before
   * anything is posted, with the same errors as createLayer and forward.
   *
   * `threads` defaults to the cores available (navigator.hardwareConcurrency,
   * os.availableParallelism() in Node), at most 8 and at most numHeads; a larger
   * value is lowered to numHeads (`layer.threads` says what runs). `threads: 1`
   * still runs in one Worker, so the calling thread stays free. No
   * cross-origin isolation is needed. The Worker script is
   * headlab-parallel-worker.js, loaded from next to headlab.js (same origin, so a
   * strict Content-Security-Policy allows it). Call `dispose()` when done: it ends
   * the Workers (they are not ended by garbage collection; in Node they do not keep
   * the process alive while idle).
   * @param {import('./headlab').ParallelLayerOptions} options createLayer's options and `threads`
   * @returns {Promise<ParallelLayer>} rejects with a TypeError or RangeError naming the bad option,
   *   or an Error when a Worker cannot start (no Worker is left running then)
   * @example
   * const layer = await lab.createParallelLayer({ dModel: 512, numHeads: 8, wQ, wK, wV, wO, threads: 2 });
   * const { output } = await layer.forward({ query: x, causal: true });
   * layer.mechanism;  // 'workers'
   * await layer.dispose();
   */
  async createParallelLayer(options) {
    const fn = 'createParallelLayer';
    requireObject(fn, options, OPTION_KEYS[fn]);
    const { threads: threadsIn, mechanism = 'auto', ...weightOptions } = options;
    if (!['auto', 'pthreads', 'workers'].includes(mechanism)) throw new TypeError(`${fn}: mechanism must be 'auto', 'pthreads' or 'workers', got ${describe(mechanism)}`);
    const { shape, specs } = this._checkLayer(fn, weightOptions);
    let threads;
    if (threadsIn === undefined) {
      threads = Math.min(await defaultThreads(), shape.numHeads);
    } else {
      requireDim(fn, 'threads', threadsIn);
      if (threadsIn > MAX_PARALLEL_THREADS) throw new RangeError(`${fn}: threads must be at most ${MAX_PARALLEL_THREADS}, got ${threadsIn}`);
      threads = Math.min(threadsIn, shape.numHeads);
    }
    const weights = Object.fromEntries(specs);
    const unavailable = mechanism === 'workers' ? 'asked for workers' : this._threadsUnavailable();
    if (mechanism === 'pthreads' && unavailable) throw new Error(`${fn}: the pthreads mechanism cannot run here: ${unavailable}`);
    if (!unavailable) {
      try {
        return await startThreadedLayer({ Headlab, ParallelLayer }, this, fn, shape, weights, threads, MODULES.core.simd.url());
      } catch (e) {
        if (mechanism === 'pthreads' || e instanceof RangeError) throw e;
        this._threadsFailure = `the threads build did not load (${e?.message ?? e})`;  // Workers from now on
      }
    }
    return ParallelLayer._start(this, fn, shape, weights, threads);
  }

  /** @private Why createParallelLayer cannot use pthreads here, or '' (see headlab-threads.js). */
  _threadsUnavailable() {
    return this._threadsFailure ?? threadsUnavailable(this._flavour, MODULES.core.simd.url(), this._options);
  }

  /** Workers started by {@link Headlab#createParallelLayer} that have not ended yet (for tests). */
  liveWorkerCount() {
    return liveWorkers + threadWorkerCount();
  }
}

// Layers not disposed by their owner are freed when garbage-collected.
const layerFinalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ core, base }) => core.release(base))
  : null;

/**
 * Multi-head attention with its weights held in the wasm heap; made by
 * {@link Headlab#createLayer}. `forward` takes the per-call options of
 * {@link Headlab#multiHeadAttention} (query, key, value, keyMask, causal,
 * returnWeights, returnIntermediates) and returns the same result.
 */
export class AttentionLayer {
  /** @private */
  constructor(lab, weights) {
    this._lab = lab;
    this._weights = weights;
    layerFinalizer?.register(this, { core: lab._core, base: weights.base }, this);
  }

  /** The layer's shape: { dModel, numHeads, dK, dV }. */
  get shape() {
    const w = this._live('shape');
    return { dModel: w.dModel, numHeads: w.numHeads, dK: w.dK, dV: w.dV };
  }

  /** @private */
  _live(fn) {
    if (!this._weights) throw new TypeError(`AttentionLayer.${fn}: this layer has been disposed`);
    return this._weights;
  }

  /**
   * @param {import('./headlab').LayerForwardOptions} options
   * @returns {import('./headlab').MultiHeadAttentionResult}
   */
  forward(options) {
    return this._lab._forward('AttentionLayer.forward', options, this._live('forward'));
  }

  /** Frees the weights. Calling forward afterwards throws; dispose() twice is fine. */
  dispose() {
    if (!this._weights) return;
    layerFinalizer?.unregister(this);
    this._lab._core.release(this._weights.base);
    this._weights = null;
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}

// The multi-core forward pass: Workers that each hold a slice of the heads.
const DEFAULT_MAX_THREADS = 8;   // the default never starts more Workers than this
const MAX_PARALLEL_THREADS = 64; // nor can `threads` ask for more
let liveWorkers = 0;             // Workers started and not yet ended, over every layer
/** Node's os.availableParallelism(), or 0 outside Node. */
function nodeCoreCount() {
  const os = isNode ? nodeBuiltin('os') : undefined;
  return os ? (os.availableParallelism?.() ?? os.cpus().length) : 0;
}

/** Cores this thread may use: navigator.hardwareConcurrency, or Node's os.availableParallelism(). */
function availableCores() {
  if (isNode) return Math.max(1, nodeCoreCount() || globalThis.navigator?.hardwareConcurrency || 1);
  return Math.max(1, globalThis.navigator?.hardwareConcurrency || 1);
}

async function defaultThreads() {
  return Math.min(availableCores(), DEFAULT_MAX_THREADS);
}

/** Rebuilds an error a Worker reported, keeping its type (TypeError, RangeError) and message. */
function workerError(data) {
  const Type = { TypeError, RangeError }[data.name] ?? Error;
  return new Type(data.message);
}

/**
 * One Worker running headlab-parallel-worker.js, module Worker or worker_threads
 * alike: `post`, `end`, and `onMessage` / `onFail` set by its owner.
 */
class HeadWorker {
  constructor(worker) {
    this.worker = worker;
    this.ended = false;
    this.onMessage = () => {};
    this.onFail = () => {};
    liveWorkers++;
    this.exited = Promise.resolve();  // settles once the Worker has ended
    if (isNode) {
      this.exited = new Promise((resolve) => worker.once('exit', resolve)).then(() => {});
      worker.on('message', (m) => this.onMessage(m));
      worker.on('error', (e) => this.onFail(e?.message ?? String(e)));
      worker.on('messageerror', () => this.onFail('a message could not be read'));
      worker.on('exit', (code) => {
        liveWorkers--;
        if (!this.ended) this.onFail(`it exited with code ${code}`);
        this.ended = true;
      });
      worker.unref();  // an idle layer does not keep Node running; busy() refs it while a call is out
    } else {
      worker.onmessage = (e) => this.onMessage(e.data);
      worker.onerror = (e) => { e.preventDefault?.(); this.onFail(e.message || 'its script failed to load or threw'); };
      worker.onmessageerror = () => this.onFail('a message could not be read');
    }
  }

  static async spawn() {
    let url;
    try {
      url = new URL('./headlab-parallel-worker.js', import.meta.url);
    } catch (e) {
      throw new Error('createParallelLayer needs headlab.js loaded as an ES module (its Worker, ' +
        'headlab-parallel-worker.js, is found next to it)', { cause: e });
    }
    if (isNode) {
      const threads = nodeBuiltin('worker_threads');
      if (!threads) throw new Error('createParallelLayer under Node needs worker_threads through process.getBuiltinModule: use Node 20.16 or later');
      return new HeadWorker(new threads.Worker(url));
    }
    return new HeadWorker(new Worker(url, { type: 'module', name: 'headlab-parallel' }));
  }

  post(message, transfer = []) {
    this.worker.postMessage(message, transfer);
  }

  busy(on) {
    if (isNode && !this.ended) (on ? this.worker.ref() : this.worker.unref());
  }

  /** Ends the Worker; resolves once it is gone. */
  end() {
    if (!this.ended) {
      this.ended = true;
      this.worker.terminate();
      if (!isNode) liveWorkers--;  // Node counts it down on 'exit'
    }
    return this.exited;
  }
}

/** The first `count` heads of `numHeads` split into `threads` contiguous runs, sizes differing by at most 1. */
function splitHeads(numHeads, threads) {
  const runs = [];
  for (let i = 0, start = 0; i < threads; i++) {
    const n = Math.floor(numHeads / threads) + (i < numHeads % threads ? 1 : 0);
    runs.push([start, start + n]);
    start += n;
  }
  return runs;
}

/** Columns [from, from+count) of a row-major [rows, width] matrix, as a new [rows, count] matrix. */
function columns(m, rows, width, from, count) {
  const out = new Float32Array(rows * count);
  for (let r = 0; r < rows; r++) out.set(m.subarray(r * width + from, r * width + from + count), r * count);
  return out;
}

/**
 * The weights of heads [h0, h1) as createLayer options: their columns of W^Q,
 * W^K, W^V and entries of b^Q, b^K, b^V, their rows of W^O; b^O only in the
 * first slice, so it is added once when the partial outputs are summed.
 */
function headSlice({ dModel, numHeads, dK, dV }, w, [h0, h1], first) {
  const n = h1 - h0;
  const slice = {
    dModel, numHeads: n, dK, dV,
    wQ: columns(w.wQ, dModel, numHeads * dK, h0 * dK, n * dK),
    wK: columns(w.wK, dModel, numHeads * dK, h0 * dK, n * dK),
    wV: columns(w.wV, dModel, numHeads * dV, h0 * dV, n * dV),
    wO: w.wO.slice(h0 * dV * dModel, h1 * dV * dModel),
  };
  if (w.bQ) slice.bQ = w.bQ.slice(h0 * dK, h1 * dK);
  if (w.bK) slice.bK = w.bK.slice(h0 * dK, h1 * dK);
  if (w.bV) slice.bV = w.bV.slice(h0 * dV, h1 * dV);
  if (w.bO && first) slice.bO = w.bO.slice();
  return slice;
}

const HEAD_MAJOR = ['q', 'k', 'v', 'scores', 'scaledScores', 'headOutputs'];

/**
 * Multi-head attention on several cores; made by {@link Headlab#createParallelLayer}.
 * `forward` resolves to what {@link AttentionLayer#forward} returns.
 *
 * Why heads, not query rows: split by heads, each Worker does 1/threads of every
 * step (its heads' projections, attention and slice of W^O) and the partial
 * outputs are summed (T·dModel additions). Split by query rows, every Worker
 * must also project all of K and V (2·T·dModel² each, repeated per Worker) and
 * hold all the weights, and `causal` would need the rows' offset. Measured with
 * bench/parallel-split.mjs (Node 20, 2-core EPYC, idle, dModel 512, h 8, two
 * Workers, medians of 9): heads 8.1 ms / rows 11.2 ms / one thread 13.1 ms at
 * T = 256; heads 45.8 ms / rows 59.0 ms / one thread 84.0 ms at T = 1024.
 * Inputs in one SharedArrayBuffer against copied per Worker by postMessage:
 * 8.1 / 8.4 ms and 45.8 / 50.3 ms (a second run: even), so shared where it
 * exists (one copy, however many Workers). Summing the two partial outputs on
 * the calling thread costs 0.21 ms at T = 256 and 0.81 ms at T = 1024.
 */
export class ParallelLayer {
  /** @private */
  constructor(lab, shape, workers, runs) {
    this._lab = lab;
    this._shape = shape;
    this._workers = workers;  // HeadWorker[], one per run of heads
    this._runs = runs;
    this._pending = new Map();  // call id → { parts, left, resolve, reject, call }
    this._nextId = 0;
    this._failure = null;  // the Error every call gets once a Worker has died
    this._disposed = false;
    // Inputs go to the Workers once, in one SharedArrayBuffer, where it exists (Node, isolated pages);
    // elsewhere postMessage copies them per Worker.
    this._shareInputs = typeof SharedArrayBuffer === 'function';
    workers.forEach((w, i) => {
      w.onMessage = (m) => this._receive(i, m);
      w.onFail = (reason) => this._fail(i, reason);
    });
  }

  /** @private Starts the Workers, gives each its heads, and resolves once all hold them. */
  static async _start(lab, fn, shape, weights, threads) {
    const runs = splitHeads(shape.numHeads, threads);
    const load = { flavour: lab._flavour };
    const given = lab._options;
    if (given.wasmBinary) load.wasmBinary = given.wasmBinary;
    else if (given.locateFile) {
      const { file, url } = MODULES.core[lab._flavour];
      // The prefix as instantiate() gives it (no new URL('./gen/', …), which bundlers warn about).
      load.wasmUrl = String(given.locateFile(`${file}.wasm`, new URL('.', url()).href));
    }
    const workers = [];
    try {
      for (let i = 0; i < runs.length; i++) workers.push(await HeadWorker.spawn());
      await Promise.all(workers.map((w, i) => new Promise((resolve, reject) => {
        w.onMessage = (m) => (m.type === 'ready' ? resolve() : reject(workerError(m.error)));
        w.onFail = (reason) => reject(new Error(`${fn}: Worker ${i + 1} of ${runs.length} could not start: ${reason}. ` +
          'headlab-parallel-worker.js must be served next to headlab.js, from the same origin'));
        const slice = headSlice(shape, weights, runs[i], i === 0);
        w.post({ type: 'init', load, layer: slice }, [slice.wQ.buffer, slice.wK.buffer, slice.wV.buffer, slice.wO.buffer]);
        w.busy(true);
      })));
    } catch (e) {
      await Promise.all(workers.map((w) => w.end()));
      throw e;
    }
    workers.forEach((w) => w.busy(false));
    return new ParallelLayer(lab, shape, workers, runs);
  }

  /** 'workers': the forward pass runs in Workers that split the heads. */
  get mechanism() {
    return 'workers';
  }

  /** How many Workers run the forward pass (0 once disposed). */
  get threads() {
    return this._disposed ? 0 : this._workers.length;
  }

  /** The layer's shape: { dModel, numHeads, dK, dV }. */
  get shape() {
    const { dModel, numHeads, dK, dV } = this._shape;
    return { dModel, numHeads, dK, dV };
  }

  /**
   * @param {import('./headlab').LayerForwardOptions} options
   * @returns {Promise<import('./headlab').MultiHeadAttentionResult>} rejects with a TypeError or
   *   RangeError naming the argument (checked before anything is posted), or an Error once a
   *   Worker has died (the layer must then be created again)
   */
  forward(options) {
    const fn = 'ParallelLayer.forward';
    let c;
    try {
      if (this._disposed) throw new TypeError(`${fn}: this layer has been disposed`);
      if (this._failure) throw new Error(`${fn}: ${this._failure.message}`, { cause: this._failure });
      c = this._lab._checkCall(fn, options, this._shape);
    } catch (e) {
      return Promise.reject(e);
    }
    const id = ++this._nextId;
    const { query, key, value } = this._inputs(c);
    return new Promise((resolve, reject) => {
      this._pending.set(id, { parts: new Array(this._workers.length), left: this._workers.length, resolve, reject, c });
      this._workers.forEach((w, i) => {
        const [h0, h1] = this._runs[i];
        w.busy(true);
        w.post({
          type: 'forward', id,
          call: {
            query, key, value, causal: c.causal, keyMask: c.keyMask, headMask: c.headMask?.slice(h0, h1),
            returnWeights: c.returnWeights, returnIntermediates: c.returnIntermediates,
          },
        });
      });
    });
  }

  /** @private query, key and value as posted: in one SharedArrayBuffer when sharing; key/value undefined when they default. */
  _inputs({ query, key, value }) {
    const parts = [query];
    if (key !== query) parts.push(key);
    if (value !== key && value !== query) parts.push(value);
    let posted = parts;
    if (this._shareInputs) {
      const shared = new Float32Array(new SharedArrayBuffer(parts.reduce((n, p) => n + p.length, 0) * 4));
      let at = 0;
      posted = parts.map((p) => { const view = shared.subarray(at, at + p.length); view.set(p); at += p.length; return view; });
    }
    const byArray = new Map(parts.map((p, i) => [p, posted[i]]));
    return {
      query: posted[0],
      key: key === query ? undefined : byArray.get(key),
      value: value === key ? undefined : byArray.get(value),
    };
  }

  /** @private A Worker's answer to call `m.id`. */
  _receive(i, m) {
    const call = this._pending.get(m.id);
    if (!call) return;  // the call failed already (another Worker reported an error)
    if (m.type === 'error') {
      this._settle(m.id);
      call.reject(workerError(m.error));
      return;
    }
    call.parts[i] = m.result;
    if (--call.left > 0) return;
    this._settle(m.id);
    call.resolve(this._assemble(call.c, call.parts));
  }

  /** @private Forgets call `id`; Workers with nothing left to do stop keeping Node alive. */
  _settle(id) {
    this._pending.delete(id);
    if (this._pending.size === 0) this._workers.forEach((w) => w.busy(false));
  }

  /** @private The whole result from the Workers' partial ones, heads in order. */
  _assemble(c, parts) {
    const { tQ, tK, dModel, numHeads, dK, dV } = c;
    const output = parts[0].output;
    for (let p = 1; p < parts.length; p++) {
      const o = parts[p].output;
      for (let j = 0; j < output.length; j++) output[j] += o[j];
    }
    const result = { output, tQ, tK, dK, dV };
    // Head-major arrays ([numHeads, …]) are the Workers' ones end to end.
    const joined = (get, length) => {
      const all = new Float32Array(length);
      let at = 0;
      for (const p of parts) { const a = get(p); all.set(a, at); at += a.length; }
      return all;
    };
    if (c.returnWeights) result.weights = joined((p) => p.weights, numHeads * tQ * tK);
    if (c.returnIntermediates) {
      const sizes = { q: tQ * dK, k: tK * dK, v: tK * dV, scores: tQ * tK, scaledScores: tQ * tK, headOutputs: tQ * dV };
      result.intermediates = {};
      for (const name of HEAD_MAJOR) result.intermediates[name] = joined((p) => p.intermediates[name], numHeads * sizes[name]);
      // concat is [Tq, numHeads*dV]: each Worker's heads are a band of columns.
      const hv = numHeads * dV, concat = new Float32Array(tQ * hv);
      parts.forEach((p, k) => {
        const [h0, h1] = this._runs[k], w = (h1 - h0) * dV, src = p.intermediates.concat;
        for (let r = 0; r < tQ; r++) concat.set(src.subarray(r * w, r * w + w), r * hv + h0 * dV);
      });
      result.intermediates.concat = concat;
    }
    return result;
  }

  /** @private Worker i died: every pending and later call rejects; the other Workers are ended. */
  _fail(i, reason) {
    if (this._failure || this._disposed) return;
    this._failure = new Error(`Worker ${i + 1} of ${this._workers.length} ended unexpectedly (${reason}); ` +
      'this layer cannot run any more: dispose() it and create a new one with lab.createParallelLayer()');
    for (const [id, call] of this._pending) {
      this._settle(id);
      call.reject(new Error(`ParallelLayer.forward: ${this._failure.message}`, { cause: this._failure }));
    }
    this._workers.forEach((w) => w.end());
  }

  /**
   * Ends every Worker. Pending calls reject; forward afterwards rejects with a
   * TypeError; dispose() twice is fine.
   * @returns {Promise<void>} resolves once every Worker has ended
   */
  dispose() {
    if (this._disposed) return Promise.resolve();
    this._disposed = true;
    for (const [id, call] of this._pending) {
      this._settle(id);
      call.reject(new Error('ParallelLayer.forward: the layer was disposed before this call finished'));
    }
    return Promise.all(this._workers.map((w) => w.end())).then(() => {});
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}

// Trainers not disposed by their owner are freed when garbage-collected.
const trainerFinalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((core) => { if (!core.isDeleted()) core.delete(); })
  : null;

/**
 * @private What Trainer and LanguageModel share: the Embind object they drive, freed by
 * dispose() (or by the finalizer when one is dropped undisposed), and their argument checks.
 */
class TrainingSession {
  constructor(lab, core, name, noun) {
    this._lab = lab;
    this._core = core;
    this._name = name;  // 'Trainer', 'LanguageModel': how errors name the method
    this._noun = noun;  // 'trainer', 'model'
    trainerFinalizer?.register(this, core, this);
  }

  /** @private */
  _live(fn) {
    if (!this._core) throw new TypeError(`${this._name}.${fn}: this ${this._noun} has been disposed`);
    return this._core;
  }

  /** @private A count in 1..max, or the default when undefined. */
  _count(fn, name, n, fallback, max) {
    if (n === undefined) return fallback;
    const v = requireDim(`${this._name}.${fn}`, name, n);
    if (v > max) throw new RangeError(`${this._name}.${fn}: ${name} must be at most ${max}, got ${v}`);
    return v;
  }

  /** Frees the wasm memory. Calling any method afterwards throws; dispose() twice is fine. */
  dispose() {
    if (!this._core) return;
    trainerFinalizer?.unregister(this);
    this._core.delete();
    this._core = null;
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}

/**
 * A training session created by {@link Headlab#createTrainer} or
 * {@link Headlab#loadTrainer}. Every method is synchronous; run it in a Worker
 * to keep a page responsive.
 */
export class Trainer extends TrainingSession {
  /** @private */
  constructor(lab, core) {
    super(lab, core, 'Trainer', 'trainer');
    const info = core.taskInfo();
    const config = core.config();
    /** @private */
    this._shape = { seqLen: info.seqLen, numHeads: config.numHeads, dModel: config.dModel };
  }

  /** @private A head index in 0..numHeads-1. */
  _head(fn, head) {
    if (typeof head !== 'number') {
      throw new TypeError(`Trainer.${fn}: head must be an integer in 0..${this._shape.numHeads - 1}, got ${describe(head)}`);
    }
    if (!Number.isInteger(head) || head < 0 || head >= this._shape.numHeads) {
      throw new RangeError(`Trainer.${fn}: head must be an integer in 0..${this._shape.numHeads - 1}, got ${describe(head)}`);
    }
  }

  /**
   * Runs `n` optimizer steps now (default 1).
   *
   * A step whose loss, or whose update of the parameters (or of Adam's moments),
   * would be non-finite — or would push a parameter past ±1e4 — is not taken: the
   * trainer keeps its state from the step before and `step()` throws a RangeError
   * naming the step and the learning rate. It throws the same error on every later
   * call; everything else (evaluate, save, …) works on the kept state. To go on,
   * create a trainer with a lower learningRate. {@link Trainer#divergence} says
   * whether and where it happened.
   * @returns {{step: number, loss: number, accuracy: number}} accuracy on the last training batch
   * @throws {RangeError} when training diverges
   * @example
   * t.step(100).loss;
   * @example
   * const t = await lab.createTrainer({ learningRate: 10, optimizer: 'sgd' });
   * try { t.step(1000); } catch (e) {
   *   e.message;              // 'Trainer.step: training diverged at step 3 with learningRate 10 (sgd): …'
   *   t.evaluate().loss;      // finite: the state from step 2
   * }
   */
  step(n) {
    const core = this._live('step');
    const { step, loss, accuracy, diverged } = core.step(this._count('step', 'n', n, 1, 1e6));
    if (diverged) throw new RangeError(`Trainer.step: ${diverged}`);
    return { step, loss, accuracy };
  }

  /**
   * null while training is fine; once a step has diverged (see {@link Trainer#step}),
   * where and why: `step` is the step that was not taken, `reason` 'loss' (the loss
   * was not finite) or 'update' (the update would have been), `message` the text
   * step() throws.
   * @returns {import('./headlab').TrainerDivergence | null}
   */
  divergence() {
    return this._live('divergence').divergence();
  }

  /**
   * Loss and accuracy on the first `n` held-out examples (default 1000; the same
   * examples every call). Accuracy counts an example right when every relation's
   * answer is right.
   * @returns {{loss: number, accuracy: number, relationAccuracy: number[]}}
   */
  evaluate(n) {
    const core = this._live('evaluate');
    return core.evaluate(this._count('evaluate', 'n', n, 1000, 1e5));
  }

  /**
   * Each head's attention from the query position, averaged over `n` held-out
   * examples (default 256): entropy (nats), mean attention distance, and the
   * share of weight on each relation's position.
   * @returns {{entropy: number, meanDistance: number, relationShare: number[]}[]}
   */
  headMetrics(n) {
    const core = this._live('headMetrics');
    return core.headMetrics(this._count('headMetrics', 'n', n, 256, 1e5));
  }

  /** Every head's attention on the fixed probe sequence: Float32Array [numHeads * T * T]. */
  attentionWeights() {
    return this._live('attentionWeights').attentionWeights().slice();
  }

  /** The fixed probe sequence: token ids and their names. */
  probe() {
    const core = this._live('probe');
    const tokens = core.probeTokens().slice();
    const names = core.taskInfo().tokenNames;
    return { tokens, tokenNames: Array.from(tokens, (t) => names[t]) };
  }

  /** @returns {{name: string, seqLen: number, queryPosition: number, relationPositions: number[], relationNames: string[], tokenNames: string[], numRelations: number, vocab: number, description: string}} */
  taskInfo() {
    return this._live('taskInfo').taskInfo();
  }

  /** The configuration and the number of steps taken so far. */
  config() {
    return this._live('config').config();
  }

  /**
   * Switches a head off (its output is zeroed before W^O) or back on, in
   * training and evaluation alike.
   * @example
   * t.setHeadEnabled(0, false); t.evaluate(1000).accuracy;  // drops when head 0 carried a relation
   */
  setHeadEnabled(head, enabled) {
    const core = this._live('setHeadEnabled');
    this._head('setHeadEnabled', head);
    if (typeof enabled !== 'boolean') throw new TypeError(`Trainer.setHeadEnabled: enabled must be a boolean, got ${describe(enabled)}`);
    core.setHeadEnabled(head, enabled);
  }

  /** Whether a head is on. */
  headEnabled(head) {
    const core = this._live('headEnabled');
    this._head('headEnabled', head);
    return core.headEnabled(head);
  }

  /**
   * The attention layer and the probe sequence in the shape
   * {@link Headlab#multiHeadAttention} takes: the heads view shows a trained model from this.
   * @returns {{tokens: string[], X: Float32Array, dModel: number, numHeads: number, wQ: Float32Array, wK: Float32Array, wV: Float32Array, wO: Float32Array, bQ: Float32Array, bK: Float32Array, bV: Float32Array, bO: Float32Array}}
   */
  exportModel() {
    const core = this._live('exportModel');
    const p = (name) => core.parameters(name).slice();
    return {
      tokens: this.probe().tokenNames, X: core.probeInputs().slice(),
      dModel: this._shape.dModel, numHeads: this._shape.numHeads,
      wQ: p('wQ'), wK: p('wK'), wV: p('wV'), wO: p('wO'), bQ: p('bQ'), bK: p('bK'), bV: p('bV'), bO: p('bO'),
    };
  }

  /** The trained parameters as bytes; {@link Headlab#loadTrainer} restores an equivalent trainer. */
  save() {
    return this._live('save').save().slice();
  }
}

/**
 * A causal transformer language model, made by {@link Headlab#createLanguageModel}
 * or {@link Headlab#loadLanguageModel}. Every method is synchronous; run it in a
 * Worker to keep a page responsive. Results are plain objects and typed arrays
 * (copies), so they can be posted between threads.
 *
 * Sequences: methods that take `tokensOrText` accept a string of
 * whitespace-separated vocabulary words (the start token is prepended, see
 * {@link LanguageModel#tokenize}), or the whole sequence as token ids (an
 * Int32Array or number[]) or as words (string[]), taken as given. A sequence
 * holds 1..seqLen tokens; because the model is causal, a shorter one gives
 * exactly what the first positions of a longer one would.
 */
export class LanguageModel extends TrainingSession {
  /** @private */
  constructor(lab, core, spec) {
    super(lab, core, 'LanguageModel', 'model');
    /** @private */
    this._spec = spec;
    /** @private */
    this._config = core.config();
    this._config.learningRate = fromFloat32(this._config.learningRate);
    /** @private word → id */
    this._ids = new Map(spec.vocabulary.map((w, i) => [w, i]));
  }

  /** @private An integer in 0..count-1. */
  _index(fn, name, value, count) {
    const msg = `LanguageModel.${fn}: ${name} must be an integer in 0..${count - 1}, got ${describe(value)}`;
    if (typeof value !== 'number') throw new TypeError(msg);
    if (!Number.isInteger(value) || value < 0 || value >= count) throw new RangeError(msg);
  }

  /** @private Where to see the vocabulary, for error messages. */
  _vocabularyHint() {
    return `the words of task ${this._spec.name} are in model.vocabulary and lab.languageTasks()`;
  }

  /** @private Text → ids, naming `name` in errors. */
  _tokenize(fn, name, text) {
    if (typeof text !== 'string') {
      throw new TypeError(`LanguageModel.${fn}: ${name} must be a string of words separated by spaces, got ${describe(text)}`);
    }
    const words = text.split(/\s+/).filter((w) => w.length > 0);
    const { seqLen, startToken } = this._spec;
    if (words.length + 1 > seqLen) {
      throw new RangeError(`LanguageModel.${fn}: ${name} has ${words.length} words; with the start token ${startToken} that is ` +
        `${words.length + 1} tokens, more than the sequence length ${seqLen} of task ${this._spec.name} (at most ${seqLen - 1} words)`);
    }
    const tokens = new Int32Array(words.length + 1);
    tokens[0] = this._ids.get(startToken);
    words.forEach((w, i) => {
      const id = this._ids.get(w);
      if (id === undefined) {
        throw new RangeError(`LanguageModel.${fn}: ${name}: unknown word ${JSON.stringify(w.length > 40 ? w.slice(0, 40) + '…' : w)} ` +
          `at word ${i + 1}; ${this._vocabularyHint()}`);
      }
      tokens[i + 1] = id;
    });
    return { tokens, words: [startToken, ...words] };
  }

  /** @private tokensOrText → Int32Array of ids, 1..seqLen long. */
  _sequence(fn, value, name = 'tokensOrText') {
    if (typeof value === 'string') return this._tokenize(fn, name, value).tokens;
    const { seqLen, vocabulary } = this._spec;
    const what = `a string of words, an Int32Array or number[] of token ids (0..${vocabulary.length - 1}), or a string[] of words`;
    if (!(value instanceof Int32Array) && !Array.isArray(value)) {
      throw new TypeError(`LanguageModel.${fn}: ${name} must be ${what}, got ${describe(value)}`);
    }
    if (value.length < 1 || value.length > seqLen) {
      throw new RangeError(`LanguageModel.${fn}: ${name} must hold 1..${seqLen} tokens (the sequence length of task ${this._spec.name}), got ${value.length}`);
    }
    const ids = new Int32Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const x = value[i];
      if (typeof x === 'string') {
        const id = this._ids.get(x);
        if (id === undefined) throw new RangeError(`LanguageModel.${fn}: ${name}[${i}]: unknown word ${JSON.stringify(x.slice(0, 40))}; ${this._vocabularyHint()}`);
        ids[i] = id;
      } else if (typeof x === 'number') {
        if (!Number.isInteger(x) || x < 0 || x >= vocabulary.length) {
          throw new RangeError(`LanguageModel.${fn}: ${name}[${i}] must be a token id in 0..${vocabulary.length - 1}, got ${x}`);
        }
        ids[i] = x;
      } else {
        throw new TypeError(`LanguageModel.${fn}: ${name}[${i}] must be a token id or a word, got ${describe(x)}`);
      }
    }
    return ids;
  }

  /** @private Copies ids into the model's token buffer. */
  _put(core, ids) {
    core.tokenBuffer().set(ids);
  }

  /** The task this model learns: the entry of {@link Headlab#languageTasks} (a copy). */
  get task() {
    this._live('task');
    return structuredClone(this._spec);
  }

  /** { task, numLayers, numHeads, dModel, mlp, seed, learningRate, batchSize } (a copy). */
  get config() {
    this._live('config');
    return { ...this._config };
  }

  /** The task's token names; a token's id is its index (a copy). */
  get vocabulary() {
    this._live('vocabulary');
    return this._spec.vocabulary.slice();
  }

  /** Training steps taken in all, including those of a loaded file. */
  get steps() {
    return this._live('steps').steps();
  }

  /**
   * Runs `n` Adam steps (default 1), each on a fresh batch of the task.
   * @param {number} [n] 1..1000000
   * @returns {{step: number, loss: number}} `step` is the total so far, `loss` the last batch's
   * @throws {RangeError} `LanguageModel.step: training diverged at step N with learningRate X (adam): …`
   *   when a step's loss is not finite or its update would make a weight non-finite or larger than 1e4
   *   (the one-layer Trainer's rule): that step is not taken, the model keeps its state from step N − 1
   *   (evaluate, attention, save … go on working) and every later step() throws the same; see divergence()
   * @example
   * lm.step(100);  // { step: 100, loss: 3.1 }
   */
  step(n) {
    const core = this._live('step');
    const { step, loss, diverged } = core.step(this._count('step', 'n', n, 1, 1e6));
    if (diverged) throw new RangeError(`LanguageModel.step: ${diverged}`);
    return { step, loss };
  }

  /**
   * null while training is fine; once a step has diverged (see {@link LanguageModel#step}),
   * where and why: `step` is the step that was not taken, `reason` 'loss' or 'update',
   * `message` the text step() throws.
   * @returns {import('./headlab').LanguageModelDivergence | null}
   */
  divergence() {
    return this._live('divergence').divergence();
  }


  /**
   * Loss and the task's metric on `n` held-out sequences (default 500), the same
   * sequences on every call and never trained on. `accuracy` is the task's
   * metric (induction: next-token accuracy on the repeated segment's second
   * copy; cricket: the adjective predicted after "it was" belongs to the noun
   * "it" refers to); `nextTokenAccuracy` counts every position with a target.
   * @param {number} [n] 1..100000
   * @returns {{loss: number, accuracy: number, nextTokenAccuracy: number, examples: number}}
   */
  evaluate(n) {
    const core = this._live('evaluate');
    return core.evaluate(this._count('evaluate', 'n', n, 500, 1e5));
  }

  /**
   * Every head's detector scores on `n` held-out sequences (default 500),
   * layer-major: mean attention on the previous token, on the token after an
   * earlier occurrence of the current one (induction), on earlier occurrences
   * (duplicateToken), on position 0 (firstToken) and, for cricket, from the
   * pronoun onto its referent (coreference). `label` names the highest score
   * at or above 0.5, or is null. For cricket each head also has `positionPeak`:
   * see {@link LanguageModel#headReport}, which returns these with the baselines.
   * @param {number} [n] 1..100000
   * @returns {import('./headlab').LanguageHeadScore[]}
   * @example
   * lm.headScores().filter((h) => h.label === 'induction');
   */
  headScores(n) {
    return this._headReport('headScores', n).heads;
  }

  /**
   * {@link LanguageModel#headScores} plus what it takes to judge them:
   * `threshold` (0.5, the score a label needs) and, for cricket,
   * `bestFixedPosition`: the coreference score of an ideal head that looks at one
   * fixed absolute position, or one fixed offset back, whichever is best — the
   * baseline a real coreference head must beat; `bestCoreference`, the best
   * head's coreference score; and per head `positionPeak`, its highest mean
   * weight on one fixed position or offset from the pronoun (a head with
   * coreference near positionPeak and near bestFixedPosition may attend by
   * position rather than by referent).
   * @param {number} [n] 1..100000, default 500
   * @returns {import('./headlab').LanguageHeadReport}
   */
  headReport(n) {
    return this._headReport('headReport', n);
  }

  /** @private */
  _headReport(fn, n) {
    const core = this._live(fn);
    return core.headReport(this._count(fn, 'n', n, 500, 1e5));
  }

  /**
   * Words → token ids: `text` is split on whitespace, every word must be in the
   * vocabulary, and the start token is prepended.
   * @param {string} text at most seqLen − 1 words
   * @returns {{tokens: Int32Array, words: string[]}} `words` starts with the start token
   * @throws {TypeError} when text is not a string
   * @throws {RangeError} naming an unknown word and its position, or when the text is longer than the sequence
   * @example
   * lm.tokenize('virat hit the ball');  // { tokens: Int32Array [0, 3, 9, 13, 14], words: ['<s>', 'virat', …] }
   */
  tokenize(text) {
    this._live('tokenize');
    return this._tokenize('tokenize', 'text', text);
  }

  /**
   * The attention weights of every layer and head on a sequence of T tokens.
   * Rows are queries, columns keys; every row sums to 1 and is 0 above the
   * diagonal (causal). Heads switched off still show their weights (only their
   * output is dropped), but heads switched off in earlier layers change later ones.
   * @param {string|Int32Array|number[]|string[]} tokensOrText
   * @returns {{tokens: string[], weights: Float32Array, shape: [number, number, number, number]}}
   *   weights `[numLayers, numHeads, T, T]` row-major, as `shape` says
   * @example
   * const { weights, shape: [L, H, T] } = lm.attention('a b c a b c');
   * weights[((1 * H + 0) * T + 5) * T + 3];  // layer 1, head 0, query 5 on key 3
   */
  attention(tokensOrText) {
    const core = this._live('attention');
    const ids = this._sequence('attention', tokensOrText);
    this._put(core, ids);
    const t = ids.length;
    const weights = core.attention(t).slice();
    return { tokens: Array.from(ids, (i) => this._spec.vocabulary[i]), weights, shape: [this._config.numLayers, this._config.numHeads, t, t] };
  }

  /**
   * The model's next-token distribution after the last token of the sequence:
   * every vocabulary word with its probability, most probable first (ties by
   * id), or only the first `topK`.
   * @param {string|Int32Array|number[]|string[]} tokensOrText
   * @param {{topK?: number}} [options] topK defaults to the vocabulary size
   * @returns {{token: string, id: number, probability: number}[]}
   * @example
   * lm.predict('virat hit the ball because it was', { topK: 3 });
   * // [{ token: 'full', id: 27, probability: 0.41 }, …]
   */
  predict(tokensOrText, options = {}) {
    const fn = 'LanguageModel.predict';
    const core = this._live('predict');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('predict', tokensOrText);
    const v = this._spec.vocabulary.length;
    const topK = this._count('predict', 'topK', options.topK, v, v);
    this._put(core, ids);
    const p = core.predict(ids.length);
    const order = Array.from({ length: v }, (_, i) => i).sort((a, b) => p[b] - p[a] || a - b);
    return order.slice(0, topK).map((i) => ({ token: this._spec.vocabulary[i], id: i, probability: p[i] }));
  }

  /**
   * Continues a prompt token by token. Each token is drawn from the model's
   * next-token distribution sharpened by `temperature` (p^(1/temperature),
   * renormalised; 0 takes the most probable token), with HeadLab's seeded
   * SplitMix64 generator in C++ (`Rng(seed, 7)`): the same model, prompt and
   * options give the same tokens. Stops after `maxTokens` new tokens, at the
   * sequence length, after the task's stop token (cricket's ".") or before its
   * pad token (never emitted).
   * @param {import('./headlab').GenerateOptions} [options] prompt defaults to '' (the start token alone),
   *   maxTokens to seqLen, temperature to 1, seed to 1
   * @returns {{tokens: string[], text: string, newTokens: string[]}} `tokens` is the whole sequence
   *   (start token first), `text` its words after the start token (tokenize(text) gives `tokens` back),
   *   `newTokens` the generated ones
   * @example
   * lm.generate({ prompt: 'virat hit the', temperature: 0 }).text;  // 'virat hit the ball because it was full .'
   */
  generate(options = {}) {
    const fn = 'LanguageModel.generate';
    const core = this._live('generate');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('generate', options.prompt ?? '', 'prompt');
    const { seqLen, vocabulary, startToken } = this._spec;
    const maxTokens = this._count('generate', 'maxTokens', options.maxTokens, seqLen, 1e6);
    const temperature = options.temperature ?? 1;
    if (typeof temperature !== 'number') throw new TypeError(`${fn}: temperature must be a number ≥ 0, got ${describe(temperature)}`);
    if (!(Number.isFinite(temperature) && temperature >= 0 && temperature <= 100)) {
      throw new RangeError(`${fn}: temperature must be a finite number in [0, 100], got ${temperature}`);
    }
    const seed = options.seed ?? 1;
    requireSeed(fn, 'seed', seed);
    this._put(core, ids);
    const n = core.generate(ids.length, Math.min(maxTokens, seqLen), temperature, seed);
    const tokens = Array.from(core.tokenBuffer().subarray(0, n), (i) => vocabulary[i]);
    const words = tokens[0] === startToken ? tokens.slice(1) : tokens;
    return { tokens, text: words.join(' '), newTokens: tokens.slice(ids.length) };
  }

  /**
   * Switches a head off (its output is zeroed before W^O, in training and in
   * every later result) or back on.
   * @param {number} layer 0..numLayers-1
   * @param {number} head 0..numHeads-1
   * @param {boolean} on
   * @example
   * lm.setHeadEnabled(1, 2, false); lm.evaluate().accuracy;  // drops when layer 1 head 2 is the induction head
   */
  setHeadEnabled(layer, head, on) {
    const core = this._live('setHeadEnabled');
    this._index('setHeadEnabled', 'layer', layer, this._config.numLayers);
    this._index('setHeadEnabled', 'head', head, this._config.numHeads);
    if (typeof on !== 'boolean') throw new TypeError(`LanguageModel.setHeadEnabled: on must be a boolean, got ${describe(on)}`);
    core.setHeadEnabled(layer, head, on);
  }

  /** Whether a head is on. */
  headEnabled(layer, head) {
    const core = this._live('headEnabled');
    this._index('headEnabled', 'layer', layer, this._config.numLayers);
    this._index('headEnabled', 'head', head, this._config.numHeads);
    return core.headEnabled(layer, head);
  }

  /**
   * The model as bytes (format in cpp/include/headlab/lm_file.hpp, magic "HLLM",
   * CRC-32 at the end); {@link Headlab#loadLanguageModel} restores it.
   * @returns {Uint8Array}
   * @throws {RangeError} when a weight is not finite or beyond ±1e4 (training keeps its last good state
   *   instead, see step(), so this guards against weights changed some other way)
   */
  save() {
    const r = this._live('save').save();
    if (typeof r === 'string') throw new RangeError(`LanguageModel.save: ${r}`);
    return r.slice();
  }
}

/** Must match -sMAXIMUM_MEMORY in CMakeLists.txt. */
const MAX_MEMORY_BYTES = 1024 * 2 ** 20;
const MAX_REQUEST_BYTES = MAX_MEMORY_BYTES - 32 * 2 ** 20;

const cached = new Map();  // flavour → Promise<Headlab>

/**
 * Loads the WebAssembly module once per flavour and returns the shared {@link Headlab}.
 * By default the SIMD build is loaded where the engine runs WebAssembly SIMD
 * and the scalar build elsewhere; `lab.info().flavour` says which one runs.
 * @param {import('./headlab').CreateHeadlabOptions} [options]
 * @returns {Promise<Headlab>}
 * @example
 * import { createHeadlab } from './web/lib/headlab.js';
 * const lab = await createHeadlab();
 * console.log(lab.info().flavour);  // 'simd' in every current browser and in Node
 */
export function createHeadlab(options = {}) {
  try {
    requireObject('createHeadlab', options, OPTION_KEYS.createHeadlab);
  } catch (e) {
    return withAwaitHint(Promise.reject(e));
  }
  const wanted = options.flavour ?? 'auto';
  if (wanted !== 'auto' && wanted !== 'simd' && wanted !== 'scalar') {
    return Promise.reject(new RangeError(`createHeadlab: flavour must be 'auto', 'simd' or 'scalar', got ${describe(wanted)}`));
  }
  const flavour = wanted === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : wanted;
  if (flavour === 'simd' && !simdSupported()) {
    return Promise.reject(new Error("createHeadlab: this engine does not run WebAssembly SIMD; use flavour 'auto' or 'scalar'"));
  }
  if (!cached.has(flavour)) {
    const pending = withAwaitHint(instantiate('core', flavour, options).then((core) => new Headlab(core, flavour, options)));
    pending.catch(() => { cached.delete(flavour); });  // a failed load can be retried
    cached.set(flavour, pending);
  }
  return cached.get(flavour);
}

/**
 * createHeadlab() returns a Promise. Calling a Headlab method on it (a forgotten
 * `await`) would fail with "… is not a function"; instead the Promise answers
 * with what to write.
 */
function withAwaitHint(promise) {
  for (const name of Object.getOwnPropertyNames(Headlab.prototype)) {
    if (name === 'constructor' || name.startsWith('_')) continue;
    Object.defineProperty(promise, name, {
      get() {
        throw new TypeError(`createHeadlab() returns a Promise, not the instance: write \`const lab = await createHeadlab()\`, then lab.${name}(…)`);
      },
    });
  }
  return promise;
}

export default createHeadlab;
