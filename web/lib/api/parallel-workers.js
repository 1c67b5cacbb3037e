// createParallelLayer's Workers mechanism, and the ParallelLayer class both mechanisms share:
// Workers (headlab-parallel-worker.js) that each hold a slice of the heads.
import { parallelWorkerUrl, startParallelWorker, MODULES } from '../headlab-files.js';
import { checkCall } from './forward.js';
import { isNode, nodeBuiltin } from './load.js';
import { startWorker, workerPlanHere } from './worker-start.js';

let liveWorkers = 0;  // Workers started and not yet ended, over every layer

// `await using` calls this key. Engines without Symbol.asyncDispose get the key Babel's helper
// falls back to, rather than a method named "undefined".
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

/** Workers started by layers that have not ended yet (for lab.liveWorkerCount()). */
export function workerCount() {
  return liveWorkers;
}

/**
 * No Worker can start here: createParallelLayer falls back to the calling thread. The message is
 * the reason in English, `code` its code (worker-start.js's WORKER_REASONS).
 */
export class WorkersRefused extends Error {
  constructor({ code, reason }) {
    super(reason);
    this.name = 'WorkersRefused';
    this.code = code;
  }
}

/**
 * The URL a browser's Worker script is asked for when headlab.js is not bundled or is bundled
 * by esbuild (Vite and webpack rename it): for the Error when it did not start.
 */
function workerScriptUrl() {
  try {
    return parallelWorkerUrl().href;
  } catch {
    return 'headlab-parallel-worker.js next to headlab.js';
  }
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
      url = parallelWorkerUrl();
    } catch (e) {
      throw new Error('createParallelLayer needs headlab.js loaded as an ES module (its Worker, ' +
        'headlab-parallel-worker.js, is found next to it)', { cause: e });
    }
    if (isNode) {
      const threads = nodeBuiltin('worker_threads');
      if (!threads) throw new Error('createParallelLayer under Node needs worker_threads through process.getBuiltinModule: use Node 20.16 or later');
      return new HeadWorker(new threads.Worker(url));
    }
    // From another origin than the page (a CDN), through a same-origin blob: bootstrap.
    if (workerPlanHere(url).how === 'direct') return new HeadWorker(startParallelWorker());
    const started = await startWorker(url.href, { type: 'module', name: 'headlab-parallel' });
    if (!started.worker) throw new WorkersRefused(started);
    return new HeadWorker(started.worker);
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

/**
 * The Error a layer keeps once one of its Workers died (`who`: 'Worker 2 of 2', 'thread Worker 1 of 3');
 * every pending and later call rejects with it, through {@link ParallelLayer#_failed}.
 */
export function deathError(who, reason) {
  return new Error(`${who} ended unexpectedly (${reason}); ` +
    'this layer cannot run any more: dispose() it and create a new one with lab.createParallelLayer()');
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
      // Absolute: a Worker from a blob: bootstrap would resolve a relative one against blob:.
      if (globalThis.location?.href && !isNode) load.wasmUrl = new URL(load.wasmUrl, globalThis.location.href).href;
    }
    const workers = [];
    try {
      for (let i = 0; i < runs.length; i++) workers.push(await HeadWorker.spawn());
      await Promise.all(workers.map((w, i) => new Promise((resolve, reject) => {
        w.onMessage = (m) => (m.type === 'ready' ? resolve() : reject(workerError(m.error)));
        w.onFail = (reason) => reject(new Error(`${fn}: Worker ${i + 1} of ${runs.length} could not start: ${reason}` +
          `${isNode ? '' : ` (${workerScriptUrl()})`}. headlab-parallel-worker.js must be served next to headlab.js, ` +
          'from the same origin; a bundler that does not bundle new Worker(new URL(…, import.meta.url)) (esbuild) must ' +
          'build it as an entry of its own, named headlab-parallel-worker.js, beside the code of headlab.js'));
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
   * @param {import('../headlab').LayerForwardOptions} options
   * @returns {Promise<import('../headlab').MultiHeadAttentionResult>} rejects with a TypeError or
   *   RangeError naming the argument (checked before anything is posted), or an Error once a
   *   Worker has died (the layer must then be created again)
   */
  forward(options) {
    const fn = 'ParallelLayer.forward';
    let c;
    try {
      if (this._disposed) throw new TypeError(`${fn}: this layer has been disposed`);
      if (this._failure) throw this._failed(fn);
      c = checkCall(this._lab, fn, options, this._shape);
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
    const { tQ, tK, numHeads, dK, dV } = c;
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
    this._failure = deathError(`Worker ${i + 1} of ${this._workers.length}`, reason);
    for (const [id, call] of this._pending) {
      this._settle(id);
      call.reject(this._failed('ParallelLayer.forward'));
    }
    this._workers.forEach((w) => w.end());
  }

  /** @private The Error a call of `fn` gets once a Worker has died. */
  _failed(fn) {
    return new Error(`${fn}: ${this._failure.message}`, { cause: this._failure });
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

  /** `await using layer = …`: dispose(), awaited at the end of the block. */
  [ASYNC_DISPOSE]() {
    return this.dispose();
  }

  /** `using layer = …`: starts dispose() (which is asynchronous) without waiting for it. */
  [Symbol.dispose]() {
    this.dispose();
  }
}
