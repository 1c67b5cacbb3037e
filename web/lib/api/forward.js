// The forward pass: argument checks, the arena of one call in the wasm heap, and
// AttentionLayer (weights copied into the heap once). Headlab's forward methods call these.
import { OPTION_KEYS, describe, dimsOf, requireBool, requireFloat32, requireObject, rowsOf } from './checks.js';
import { Arena } from './memory.js';

/** Headlab#createLayer: the weights checked and copied into the heap once. */
export function createLayer(lab, options) {
  const fn = 'createLayer';
  requireObject(fn, options, OPTION_KEYS[fn]);
  const { shape, specs } = checkLayer(lab, fn, options);
  const arena = new Arena();
  const parts = specs.map(([, arr]) => arena.add(arr.length, 4));
  const { maxMemoryBytes, maxRequestBytes } = lab._heap;
  const base = arena.bytes <= maxRequestBytes ? lab._core.allocate(arena.bytes) : 0;
  if (!base) throw new RangeError(`${fn}: the weights (${Math.ceil(arena.bytes / 2 ** 20)} MiB) do not fit in the wasm heap, capped at ${maxMemoryBytes / 2 ** 20} MiB`);
  const heap = lab._core.HEAPF32;
  const addresses = {};
  specs.forEach(([name, arr], i) => {
    addresses[name] = base + arena.parts[parts[i]];
    heap.set(arr, addresses[name] >> 2);
  });
  return new AttentionLayer(lab, { ...shape, base, addresses });
}

/** The shape and weights of createLayer's options, checked: { shape: { dModel, numHeads, dK, dV }, specs: [name, array][] }. */
export function checkLayer(lab, fn, options) {
  const shape = layerShape(lab, fn, options);
  return { shape, specs: checkWeights(fn, options, shape) };
}

/** dModel, numHeads, dK and dV of a layer, checked by the module and resolved (dK, dV default to dModel / numHeads). */
function layerShape(lab, fn, options) {
  const { dModel, numHeads, dK: dKIn, dV: dVIn } = dimsOf(fn, options);
  const resolved = lab._core.resolveShape({ tQ: 1, tK: 1, dModel, numHeads, dK: dKIn, dV: dVIn, causal: false }, true);
  if (resolved.error) throw new RangeError(`${fn}: ${resolved.error}`);
  return { dModel, numHeads, dK: resolved.dK, dV: resolved.dV };
}

/** Headlab#checkShape: null, or why createLayer would refuse the shape (its message without "createLayer: "). */
export function checkShape(lab, options) {
  requireObject('checkShape', options, OPTION_KEYS.checkShape);
  try {
    layerShape(lab, 'createLayer', options);
    return null;
  } catch (e) {
    if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
    return e.message.replace(/^createLayer: /, '');
  }
}

/** Checks wQ..wO (and bQ..bO when given) against the shape; returns [name, array] of those present. */
function checkWeights(fn, options, { dModel, numHeads, dK, dV }) {
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
 * Checks the options of a forward call (multiHeadAttention's when layer = null,
 * a layer's otherwise: `layer` holds its shape) and returns them resolved; runs nothing.
 */
export function checkCall(lab, fn, options, layer) {
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
  const resolved = lab._core.resolveShape({ tQ, tK, dModel, numHeads, dK: dKIn, dV: dVIn, causal }, outputOnly);
  if (resolved.error) throw new RangeError(`${fn}: ${resolved.error}`);
  const dK = resolved.dK, dV = resolved.dV, hv = numHeads * dV;

  requireFloat32(fn, 'query', query, tQ * dModel, `[Tq=${tQ}, dModel=${dModel}]`);
  if (key !== query) requireFloat32(fn, 'key', key, tK * dModel, `[Tk=${tK}, dModel=${dModel}]`);
  if (value !== key && value !== query) requireFloat32(fn, 'value', value, tK * dModel, `[Tk=${tK}, dModel=${dModel}]`);
  const weights = layer ? [] : checkWeights(fn, options, { dModel, numHeads, dK, dV });
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
  return {
    query, key, value, tQ, tK, dModel, numHeads, dK, dV, hv, causal, keyMask, headMask,
    returnWeights, returnIntermediates, resolved, weights,
  };
}

/**
 * The forward pass behind multiHeadAttention (layer = null: weights
 * come with the options) and AttentionLayer.forward (weights already in the heap).
 */
export function forward(lab, fn, options, layer) {
  const { call, collect } = prepareForward(lab, fn, options, layer);
  const error = lab._core.forward(call);
  if (error) throw new RangeError(`${fn}: ${error}`);
  return collect();
}

/**
 * The forward pass up to the run: checks the call, lays it out in the arena and copies the
 * inputs in. Returns the call for the module's forward (or the threads' start) and `collect()`,
 * which copies the result out once the run is done.
 */
export function prepareForward(lab, fn, options, layer) {
  const {
    query, key, value, tQ, tK, dModel, numHeads, dK, dV, hv, causal, keyMask, headMask,
    returnWeights, returnIntermediates, resolved, weights,
  } = checkCall(lab, fn, options, layer);

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

  const core = lab._core;
  const needed = arena.bytes + resolved.workspaceBytes;
  const { maxMemoryBytes, maxRequestBytes } = lab._heap;
  const base = needed <= maxRequestBytes ? core.reserveArena(arena.bytes) : 0;
  if (!base) {
    throw new RangeError(`${fn}: request too large: needs about ${Math.ceil(needed / 2 ** 20)} MiB of wasm memory ` +
      `(Tq=${tQ}, Tk=${tK}, dModel=${dModel}, numHeads=${numHeads}); the heap is capped at ${maxMemoryBytes / 2 ** 20} MiB`);
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

  const collect = () => {
    heap = core.HEAPF32;
    const copy = (name, n) => heap.slice(call[name] >> 2, (call[name] >> 2) + n);
    const result = { output: copy('output', tQ * dModel), tQ, tK, dK, dV };
    if (returnWeights) result.weights = copy('weights', numHeads * tQ * tK);
    if (returnIntermediates) {
      result.intermediates = {};
      for (const [name, n] of outputs.slice(returnWeights ? 2 : 1)) result.intermediates[name] = copy(name, n);
    }
    return result;
  };
  return { call, collect };
}

/** Headlab#parameterCount. */
export function parameterCount(lab, options) {
  const fn = 'parameterCount';
  requireObject(fn, options, OPTION_KEYS[fn]);
  const { dModel, numHeads, dK, dV } = dimsOf(fn, options);
  const bias = requireBool(fn, 'bias', options.bias);
  const r = lab._core.parameterCount(dModel, numHeads, dK, dV, bias);
  if (r.error) throw new RangeError(`${fn}: ${r.error}`);
  return { wQ: r.wQ, wK: r.wK, wV: r.wV, wO: r.wO, bias: r.bias, weights: r.weights, total: r.total };
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
   * @param {import('../headlab').LayerForwardOptions} options
   * @returns {import('../headlab').MultiHeadAttentionResult}
   */
  forward(options) {
    return forward(this._lab, 'AttentionLayer.forward', options, this._live('forward'));
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
