// How many cores this thread may use, and how many threads the defaults start: shared by the
// multi-core layer (parallel.js) and the language models' threads (language-model.js).
import { isNode, nodeBuiltin } from './load.js';

export const DEFAULT_MAX_THREADS = 8;  // the default never starts more Workers than this

/** Node's os.availableParallelism(), or 0 outside Node. */
function nodeCoreCount() {
  const os = isNode ? nodeBuiltin('os') : undefined;
  return os ? (os.availableParallelism?.() ?? os.cpus().length) : 0;
}

/** Cores this thread may use: navigator.hardwareConcurrency, or Node's os.availableParallelism(). */
export function availableCores() {
  if (isNode) return Math.max(1, nodeCoreCount() || globalThis.navigator?.hardwareConcurrency || 1);
  return Math.max(1, globalThis.navigator?.hardwareConcurrency || 1);
}
