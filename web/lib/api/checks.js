// Argument checks shared by every call: each throws a TypeError or RangeError whose message
// starts with the function's name and names the argument, the expected shape and what it got.

export function describe(value) {
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
export function requireObject(fn, options, known) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: expected an options object, got ${describe(options)}`);
  }
  if (!known) return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const best = closest(key, known);
    const hint = best ? `did you mean ${best}? ` : '';
    throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)}; ${hint}the options are ${known.join(', ')}`);
  }
}

/**
 * The name in `known` that `given` most likely misspells (an option, a task), or null: the closest
 * by edit distance (case aside) when within max(2, ⌊length / 3⌋), or one that contains it (`heads` → numHeads).
 * @example
 * closest('inductoin', ['induction', 'cricket']);  // 'induction'
 */
export function closest(given, known) {
  const lower = given.toLowerCase();
  const [best] = known.map((k) => [k, k.toLowerCase().includes(lower) && lower.length >= 3 ? 0.5 : distance(given, k)])
    .sort((a, b) => a[1] - b[1]);
  return best && best[1] <= Math.max(2, Math.floor(given.length / 3)) ? best[0] : null;
}

/** "unknown task 'sortng'; did you mean sorting? (known: …)" (createTrainer, createLanguageModel). */
export function unknownTask(task, names) {
  const best = closest(task, names);
  return `unknown task ${JSON.stringify(task.length > 40 ? task.slice(0, 40) + '…' : task)}${best ? `; did you mean ${best}?` : ''} (known: ${names.join(', ')})`;
}

/**
 * The shortest decimal that rounds to the same float32 as `x`: C++ holds learning rates as float, so
 * 0.003 comes back as 0.003000000026077032; every float option a model reports goes through this, so it
 * reads as given (0.003) in config(), divergence() and after save and load alike.
 */
export function fromFloat32(x) {
  for (let digits = 1; digits < 17; digits++) {
    const y = Number(x.toPrecision(digits));
    if (Math.fround(y) === Math.fround(x)) return y;
  }
  return x;
}

export const WEIGHT_KEYS = ['dModel', 'numHeads', 'dK', 'dV', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO'];
export const CALL_KEYS = ['query', 'key', 'value', 'causal', 'keyMask', 'headMask', 'returnWeights', 'returnIntermediates'];
export const OPTION_KEYS = {
  createHeadlab: ['flavour', 'locateFile', 'wasmBinary', 'trainWasmBinary', 'pretrainedWasmBinary', 'preload'],
  multiHeadAttention: [...CALL_KEYS, ...WEIGHT_KEYS],
  'AttentionLayer.forward': CALL_KEYS,
  createLayer: WEIGHT_KEYS,
  createParallelLayer: [...WEIGHT_KEYS, 'threads', 'mechanism'],
  'ParallelLayer.forward': CALL_KEYS,
  parameterCount: ['dModel', 'numHeads', 'dK', 'dV', 'bias'],
  checkShape: ['dModel', 'numHeads', 'dK', 'dV'],
  scalingExperiment: ['dK', 'numQueries', 'numKeys', 'seed'],
  createTrainer: ['task', 'numHeads', 'dModel', 'seed', 'learningRate', 'batchSize', 'optimizer', 'causal'],
  createLanguageModel: ['task', 'numLayers', 'numHeads', 'dModel', 'mlp', 'seed', 'learningRate', 'batchSize', 'threads', 'replacing'],
  loadLanguageModel: ['threads', 'replacing'],
  'LanguageModel.generate': ['prompt', 'maxTokens', 'temperature', 'seed'],
  'LanguageModel.predict': ['topK'],
  'LanguageModel.run': ['attention', 'ablate', 'allLogits', 'topK'],
  'LanguageModel.headScores': ['examples'],
  loadPretrained: ['hubUrl', 'revision', 'threads', 'cache', 'onProgress', 'signal', 'maxBytes'],
  'PretrainedModel.run': ['attention', 'ablate', 'allLogits', 'topK', 'pair', 'tokenTypes', 'patch'],
  'PretrainedModel.patchHeads': ['clean', 'corrupted', 'answer', 'wrong', 'position', 'tokenTypes', 'onProgress', 'signal'],
  'PretrainedModel.directLogitAttribution': ['ids', 'answer', 'wrong', 'position'],
  'PretrainedModel.fill': ['topK', 'ablate'],
  'PretrainedModel.headScores': ['length', 'seed'],
  'PretrainedModel.logitLens': ['topK', 'ablate'],
  'PretrainedModel.generate': ['maxTokens', 'temperature', 'seed', 'ablate'],
};

/** A positive integer below 2^31; `undefined` allowed when optional. */
export function requireDim(fn, name, value, optional = false) {
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

/** A non-negative safe integer (a seed). */
export function requireSeed(fn, name, value) {
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a non-negative integer, got ${describe(value)}`);
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${fn}: ${name} must be a non-negative integer, got ${value}`);
  return value;
}

export function requireBool(fn, name, value) {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

/**
 * The heads a call switches off, [{ layer, head }] (undefined: none) → Uint8Array [numLayers * numHeads],
 * 1 = listed: the `ablate` option of PretrainedModel and LanguageModel alike.
 */
export function ablationMask(fn, ablate, numLayers, numHeads, name = 'ablate') {
  const mask = new Uint8Array(numLayers * numHeads);
  if (ablate === undefined) return mask;
  if (!Array.isArray(ablate)) throw new TypeError(`${fn}: ${name} must be an array of { layer, head }, got ${describe(ablate)}`);
  ablate.forEach((x, i) => {
    if (x === null || typeof x !== 'object') throw new TypeError(`${fn}: ${name}[${i}] must be { layer, head }, got ${describe(x)}`);
    for (const [key, n] of [['layer', numLayers], ['head', numHeads]]) {
      const v = x[key];
      const msg = `${fn}: ${name}[${i}].${key} must be an integer in 0..${n - 1}, got ${describe(v)}`;
      if (typeof v !== 'number') throw new TypeError(msg);
      if (!Number.isInteger(v) || v < 0 || v >= n) throw new RangeError(msg);
    }
    mask[x.layer * numHeads + x.head] = 1;
  });
  return mask;
}

export function requireFloat32(fn, name, value, length, shape) {
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
export function dimsOf(fn, options) {
  return {
    dModel: requireDim(fn, 'dModel', options.dModel),
    numHeads: requireDim(fn, 'numHeads', options.numHeads),
    dK: requireDim(fn, 'dK', options.dK, true),
    dV: requireDim(fn, 'dV', options.dV, true),
  };
}

/** Rows of a [rows, dModel] input, checking type and divisibility. */
export function rowsOf(fn, name, value, dModel) {
  if (!(value instanceof Float32Array)) {
    throw new TypeError(`${fn}: ${name} must be a Float32Array of shape [T, dModel=${dModel}], got ${describe(value)}`);
  }
  if (value.length === 0 || value.length % dModel !== 0) {
    throw new RangeError(`${fn}: ${name} length must be a positive multiple of dModel=${dModel} ([T, ${dModel}]), got length ${value.length}`);
  }
  return value.length / dModel;
}
