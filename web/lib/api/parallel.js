// The multi-core forward pass, createParallelLayer: pthreads of one threaded module where they can
// run (parallel-pthreads.js), else Workers that each hold a slice of the heads (parallel-workers.js),
// started from any origin (worker-start.js). Where no Worker can start (a page on another origin
// than HeadLab whose Content-Security-Policy refuses blob: Workers), 'auto' falls back to one
// thread, the calling one (CallingThreadLayer), and info().parallel says so and why.
import { OPTION_KEYS, describe, requireDim, requireObject } from './checks.js';
import { DEFAULT_MAX_THREADS, availableCores } from './cores.js';
import { checkLayer } from './forward.js';
import { startThreadedLayer } from './parallel-pthreads.js';
import { ParallelLayer, WorkersRefused, workerCount } from './parallel-workers.js';
import { isNode } from './load.js';
import { probeBlobWorkers, workerPlanHere } from './worker-start.js';
import { parallelWorkerUrl } from '../headlab-files.js';
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
  if (!workersUnavailable(lab)) {
    try {
      return await ParallelLayer._start(lab, fn, shape, weights, threads);
    } catch (e) {
      if (!(e instanceof WorkersRefused)) throw e;
      workerFailures.set(lab, { code: e.code, reason: e.message });
    }
  }
  const refused = workersUnavailable(lab);
  if (mechanism === 'workers') throw new Error(`${fn}: the workers mechanism cannot run here: ${refused.reason}`);
  return new CallingThreadLayer(lab.createLayer(weightOptions), refused);
}

// Why each lab's Workers could not start, once they failed (a policy, a missing script): { code, reason }.
const workerFailures = new WeakMap();

/**
 * Why createParallelLayer's Workers cannot start here, as { code, reason } (worker-start.js's
 * WORKER_REASONS), or null when they can be tried: a failure seen before, or (in a browser) the
 * worker script on another origin while this page refuses blob: Workers (worker-start.js's probe,
 * which createHeadlab runs on such pages).
 */
export function workersUnavailable(lab) {
  const failure = workerFailures.get(lab);
  if (failure) return failure;
  if (isNode) return null;
  let url;
  try { url = parallelWorkerUrl(); } catch { return null; }  // reported when a layer is created
  const plan = workerPlanHere(url);
  return plan.how === 'none' ? { code: plan.code, reason: plan.reason } : null;
}

/**
 * Where createParallelLayer's Worker script is on another origin than this page (HeadLab from a
 * CDN), finds out once whether the page allows the blob: Workers that start it, so that
 * info().parallel tells the truth from the start. createHeadlab awaits it beside the wasm load.
 */
export function checkWorkers() {
  if (isNode || typeof Worker !== 'function') return Promise.resolve();
  let url;
  try { url = parallelWorkerUrl(); } catch { return Promise.resolve(); }
  return workerPlanHere(url).how === 'blob' ? probeBlobWorkers() : Promise.resolve();
}

/** Headlab#info().parallel.mechanism: what createParallelLayer would use. */
export function defaultMechanism(lab) {
  if (!threadsUnavailable(lab)) return 'pthreads';
  return workersUnavailable(lab) ? 'calling-thread' : 'workers';
}

// `await using` calls this key (as in parallel-workers.js).
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

/**
 * What createParallelLayer returns where no Worker can start: the forward pass of one
 * AttentionLayer on the calling thread, with ParallelLayer's interface (forward resolves to
 * what AttentionLayer.forward returns); `mechanism` is 'calling-thread', `threads` 1, and
 * `reason` says why no Worker could start, in English, `reasonCode` by its code.
 */
class CallingThreadLayer {
  constructor(layer, { code, reason }) {
    this._layer = layer;
    this._disposed = false;
    /** Why the forward pass runs on the calling thread, in English. */
    this.reason = reason;
    /** The same as a code (worker-start.js's WORKER_REASONS): stable where the words may change. */
    this.reasonCode = code;
  }

  get mechanism() { return 'calling-thread'; }

  get threads() { return this._disposed ? 0 : 1; }

  get shape() { return this._layer.shape; }

  forward(options) {
    try {
      if (this._disposed) throw new TypeError('ParallelLayer.forward: this layer has been disposed');
      return Promise.resolve(this._layer.forward(options));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  dispose() {
    if (!this._disposed) {
      this._disposed = true;
      this._layer.dispose();
    }
    return Promise.resolve();
  }

  [ASYNC_DISPOSE]() { return this.dispose(); }

  [Symbol.dispose]() { this.dispose(); }
}

/** Headlab#liveWorkerCount: Workers (and the threads' Workers) started and not yet ended. */
export function liveWorkerCount() {
  return workerCount() + threadWorkerCount();
}
