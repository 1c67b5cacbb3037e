// The multi-core forward pass, createParallelLayer: pthreads of one threaded module where they can
// run (parallel-pthreads.js), else Workers that each hold a slice of the heads (parallel-workers.js).
import { OPTION_KEYS, describe, requireDim, requireObject } from './checks.js';
import { DEFAULT_MAX_THREADS, availableCores } from './cores.js';
import { checkLayer } from './forward.js';
import { startThreadedLayer } from './parallel-pthreads.js';
import { ParallelLayer, workerCount } from './parallel-workers.js';
import { doWithoutThreads, threadWorkerCount, threadsUnavailable } from './threaded-module.js';

const MAX_PARALLEL_THREADS = 64;  // `threads` cannot ask for more

async function defaultThreads() {
  return Math.min(availableCores(), DEFAULT_MAX_THREADS);
}

/** Headlab#createParallelLayer. */
export async function createParallelLayer(lab, options) {
  const fn = 'createParallelLayer';
  requireObject(fn, options, OPTION_KEYS[fn]);
  const { threads: threadsIn, mechanism = 'auto', ...weightOptions } = options;
  if (!['auto', 'pthreads', 'workers'].includes(mechanism)) throw new TypeError(`${fn}: mechanism must be 'auto', 'pthreads' or 'workers', got ${describe(mechanism)}`);
  const { shape, specs } = checkLayer(lab, fn, weightOptions);
  let threads;
  if (threadsIn === undefined) {
    threads = Math.min(await defaultThreads(), shape.numHeads);
  } else {
    requireDim(fn, 'threads', threadsIn);
    if (threadsIn > MAX_PARALLEL_THREADS) throw new RangeError(`${fn}: threads must be at most ${MAX_PARALLEL_THREADS}, got ${threadsIn}`);
    threads = Math.min(threadsIn, shape.numHeads);
  }
  const weights = Object.fromEntries(specs);
  // pthreads first where they can run: measured 3–12 % faster than these Workers (Node, 2 threads,
  // d_model 512, h 8: 6.72 against 7.50 ms at T = 256, 44.0 against 47.4 ms at T = 1024; an isolated
  // Chromium page: 6.27 / 6.93 and 43.0 / 43.3 ms; bench/results/parallel.md). Same computation;
  // they save the copies of the input and of the partial results between threads, and the summing.
  const unavailable = mechanism === 'workers' ? 'Workers asked for' : threadsUnavailable(lab);
  if (mechanism === 'pthreads' && unavailable) throw new Error(`${fn}: the pthreads mechanism cannot run here: ${unavailable}`);
  if (!unavailable) {
    try {
      return await startThreadedLayer(lab, fn, shape, weights, threads);
    } catch (e) {
      if (mechanism === 'pthreads' || e instanceof RangeError) throw e;
      doWithoutThreads(lab, e);  // Workers from now on
    }
  }
  return ParallelLayer._start(lab, fn, shape, weights, threads);
}

/** Headlab#info().parallel.mechanism: what createParallelLayer would try first. */
export function defaultMechanism(lab) {
  return threadsUnavailable(lab) ? 'workers' : 'pthreads';
}

/** Headlab#liveWorkerCount: Workers (and the threads' Workers) started and not yet ended. */
export function liveWorkerCount() {
  return workerCount() + threadWorkerCount();
}
