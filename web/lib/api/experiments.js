// The experiments that explain attention: the √dK scaling experiment (forward-pass module)
// and one trial of choosing h (training module).
import { OPTION_KEYS, describe, requireDim, requireObject, requireSeed } from './checks.js';
import { Arena } from './memory.js';

/** Headlab#scalingExperiment. */
export function scalingExperiment(lab, options) {
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
  const base = lab._core.reserveArena(arena.bytes);
  if (!base) throw new RangeError(`${fn}: request too large for the wasm heap`);
  const [dot, scaled, unscaled] = parts.map((p) => base + arena.parts[p]);
  const s = lab._core.scalingExperiment(dK, numQueries, numKeys, seed, dot, scaled, unscaled);
  if (s.error) throw new RangeError(`${fn}: ${s.error}`);
  const heap = lab._core.HEAPF32;
  const copy = (addr) => heap.slice(addr >> 2, (addr >> 2) + n);
  return {
    dK, numQueries, numKeys,
    dotProducts: copy(dot), weightsScaled: copy(scaled), weightsUnscaled: copy(unscaled),
    varianceRaw: s.varianceRaw, varianceScaled: s.varianceScaled,
    entropyScaled: s.entropyScaled, entropyUnscaled: s.entropyUnscaled,
    maxWeightScaled: s.maxWeightScaled, maxWeightUnscaled: s.maxWeightUnscaled,
  };
}

/** Headlab#headsTrial. */
export async function headsTrial(lab, options) {
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
  if (typeof config.task !== 'string') throw new TypeError(`${fn}: task must be a string (one of ${(await lab.tasks()).map((t) => t.name).join(', ')}), got ${describe(config.task)}`);
  if (typeof config.steps !== 'number') throw new TypeError(`${fn}: steps must be a non-negative integer, got ${describe(config.steps)}`);
  if (!Number.isSafeInteger(config.steps) || config.steps < 0) throw new RangeError(`${fn}: steps must be a non-negative integer, got ${config.steps}`);
  const r = (await lab._trainModule()).headsTrial(config);
  if (r.error) throw new RangeError(`${fn}: ${r.error}`);
  return {
    task: config.task, dModel: config.dModel, numHeads: config.numHeads, dK: r.dK, seed: config.seed, steps: config.steps,
    loss: r.loss, accuracy: r.accuracy, relationAccuracy: r.relationAccuracy, bestShare: r.bestShare,
    relationsWithOwnHead: r.relationsWithOwnHead, diverged: r.diverged,
  };
}
