// createParallelLayer's pthreads mechanism: headlab_core_threads (the forward pass shared by pthreads
// inside one wasm module, which take its heads, then blocks of query rows, one at a time;
// cpp/src/threads/) driven from the calling thread.
// Used only where threaded-module.js says the threaded module can run; elsewhere the Workers of
// parallel-workers.js split the heads instead.
import { checkCall, prepareForward } from './forward.js';
import { isNode } from './load.js';
import { heapLimits } from './memory.js';
import { ParallelLayer, deathError } from './parallel-workers.js';
import { endModule, killModule, loadThreaded, threadWorkers } from './threaded-module.js';

// A ParallelLayer's calling thread awaits Atomics.waitAsync on the word its threads wake (Node 20,
// browsers' pages and Workers): it stays free to see a thread Worker die, and a page is not
// frozen. Where waitAsync is missing a call blocks in core.wait() instead, and dispose() polls.
const canAwait = typeof Atomics.waitAsync === 'function';
const never = new Promise(() => {});

/**
 * Resolves once `done(value)` holds for the int32 at `address` in the module's memory, waking when
 * a thread changes it (Atomics.notify; emscripten_futex_wake in C++). Rejects when `died` rejects
 * first: a thread Worker that died will never change it.
 */
async function until(module, address, done, died) {
  const word = address >> 2;
  // HEAP32 is re-read every time: a call into the module may have grown the heap.
  for (let value; !done(value = Atomics.load(module.HEAP32, word));) {
    if (canAwait) {
      const wait = Atomics.waitAsync(module.HEAP32, word, value);
      if (wait.async) await Promise.race([wait.value, died]);
    } else {
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 1)), died]);
    }
  }
}

/**
 * {@link endModule} without blocking the calling thread (on a page's main thread Emscripten warns
 * at every pthread_join): `core`'s threads (when there is one) are asked to leave their loops and
 * awaited on the word the last one wakes, then joined with tryJoin (a thread that has left its loop
 * ends moments later), so that core.delete() has nothing left to join; then their Workers are
 * ended. Rejects, ending nothing, when `died` rejects first (a thread whose Worker died never
 * leaves its loop).
 */
async function stopModule(module, core, died = never) {
  if (core && !core.isDeleted()) {
    core.requestStop();
    const threads = core.threads();
    await until(module, core.exitedAddress(), (v) => v === threads, died);
    while (!core.tryJoin()) await Promise.race([new Promise((resolve) => setTimeout(resolve, 0)), died]);
    core.delete();
  }
  endModule(module, null);
}

/**
 * A ParallelLayer whose heads are split across pthreads of one wasm module: inputs and outputs
 * are in the module's shared memory, read and written by every thread in place (no copies
 * between threads, no messages per call). The calling thread lays out the call, wakes the
 * threads and awaits them (Atomics.waitAsync on the word the last one to finish wakes). A thread
 * Worker that dies rejects the pending and later calls, and the others are ended.
 */
class ThreadedLayer extends ParallelLayer {
  /** @private */
  constructor(lab, shape, module, core, threads) {
    super(lab, shape, [], []);
    this._module = module;
    this._core = core;
    this._threadCount = threads;
    this._threadWorkers = threadWorkers(module);
    this._queue = Promise.resolve();  // calls run one at a time: the threads share one layout
    this._runner = { _core: module, _heap: heapLimits(module) };  // forward.js lays calls out in this module's heap
    this._weights = { ...shape, addresses: {} };  // the weights live in the threads' slices
    this._ended = null;        // dispose()'s promise
    this._terminating = false; // set as we end the Workers ourselves: their 'exit' is no death
    // Rejects with this._failure when a thread Worker dies: every wait on the threads races it.
    this._died = new Promise((_, reject) => { this._reportDeath = reject; });
    this._died.catch(() => {});
    this._watch();
  }

  /** @private Loads the threaded module, gives it the weights, starts `threads` threads. */
  static async _start(lab, fn, shape, weights, threads) {
    const module = await loadThreaded(lab, 'core', threads);
    let core = null;
    try {
      const names = Object.keys(weights);
      const sizes = names.map((n) => (weights[n].length * 4 + 15) & ~15);
      const block = module.allocate(sizes.reduce((a, b) => a + b, 0));
      if (!block) throw new RangeError(`${fn}: the weights do not fit in the threads' wasm heap`);
      const call = { shape: { tQ: 1, tK: 1, ...shape, causal: false } };
      for (const k of ['query', 'key', 'value', 'keyMask', 'headMask', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO', 'output',
        'weights', 'q', 'k', 'v', 'scores', 'scaledScores', 'headOutputs', 'concat']) call[k] = 0;
      let at = block;
      names.forEach((n, i) => {
        module.HEAPF32.set(weights[n], at >> 2);
        call[n] = at;
        at += sizes[i];
      });
      core = new module.ParallelLayerCore(call, threads);
      module.release(block);  // copied into the threads' slices
      return new ThreadedLayer(lab, shape, module, core, threads);
    } catch (e) {
      await stopModule(module, core);
      throw e;
    }
  }

  /** 'pthreads': the forward pass runs on threads of one wasm module sharing its memory. */
  get mechanism() {
    return 'pthreads';
  }

  /** How many threads run the forward pass (0 once disposed). */
  get threads() {
    return this._disposed ? 0 : this._threadCount;
  }

  /**
   * @param {import('../headlab').LayerForwardOptions} options
   * @returns {Promise<import('../headlab').MultiHeadAttentionResult>}
   */
  forward(options) {
    const fn = 'ParallelLayer.forward';
    try {
      if (this._disposed) throw new TypeError(`${fn}: this layer has been disposed`);
      if (this._failure) throw this._failed(fn);
      checkCall(this._lab, fn, options, this._shape);
    } catch (e) {
      return Promise.reject(e);
    }
    const run = this._queue.then(async () => {
      if (this._disposed) throw new Error(`${fn}: the layer was disposed before this call finished`);
      if (this._failure) throw this._failed(fn);
      const { call, collect } = prepareForward(this._runner, fn, options, this._weights);
      const core = this._core, address = core.finishedAddress();
      const before = Atomics.load(this._module.HEAP32, address >> 2);
      const error = core.start(call);
      if (error) throw new RangeError(`${fn}: ${error}`);
      if (canAwait) {
        this._busy(true);
        try {
          await until(this._module, address, (v) => v !== before, this._died);
        } catch (e) {
          throw e === this._failure ? this._failed(fn) : e;
        } finally {
          this._busy(false);
        }
      } else {
        core.wait();
      }
      return collect();
    });
    this._queue = run.catch(() => {});
    return run;
  }

  /**
   * Ends every thread and its Worker without blocking the calling thread: the threads are asked
   * to stop and awaited, then joined and their Workers ended. A call that is running finishes
   * first; calls not started yet reject; forward afterwards rejects with a TypeError; dispose()
   * twice is fine. After a thread Worker died, the others were ended already.
   * @returns {Promise<void>}
   */
  dispose() {
    if (this._disposed) return this._ended;
    this._disposed = true;
    this._ended = this._queue.then(async () => {
      if (this._failure) return;  // _fail ended every Worker
      this._busy(true);
      try {
        await stopModule(this._module, this._core, this._died);
        this._terminating = true;  // before any 'exit' event of the Workers it ended (those come later)
        this._forget();
      } catch {
        this._kill();  // a thread Worker died while the threads were stopping
      }
    });
    return this._ended;
  }

  /** @private Listens for each thread Worker ending or failing while this layer runs. */
  _watch() {
    const n = this._threadWorkers.length;
    this._threadWorkers.forEach((w, i) => {
      const fail = (reason) => this._fail(i, n, reason);
      // Replaces the glue's onerror, which logs and rethrows (in Node the glue's 'error' listener calls it).
      w.onerror = (e) => {
        e?.preventDefault?.();
        fail(e?.message || 'its script failed or threw');
      };
      if (isNode) w.on('exit', (code) => fail(`it exited with code ${code}`));
    });
  }

  /** @private Thread Worker i of n died: every pending and later call rejects; the others are ended. */
  _fail(i, n, reason) {
    if (this._failure || this._terminating) return;
    this._failure = deathError(`thread Worker ${i + 1} of ${n}`, reason);
    this._reportDeath(this._failure);
    this._kill();
  }

  /**
   * @private Ends every thread Worker at once, calling nothing in the module (a thread that died
   * may have left a lock held): the module is not used again.
   */
  _kill() {
    if (this._terminating) return;
    this._terminating = true;
    killModule(this._module);
    this._forget();
  }

  /** @private Every thread Worker has ended: the module is let go. */
  _forget() {
    this._module = this._core = this._runner = null;
  }

  /** @private While the calling thread awaits the threads, their Workers keep Node running (waitAsync does not). */
  _busy(on) {
    if (!isNode || this._terminating) return;
    for (const w of this._threadWorkers) (on ? w.ref() : w.unref());
  }
}

/**
 * Starts a pthreads layer: loads the threaded module with `threads` threads and gives them the
 * weights ({ wQ, …, bO? } as checked by createLayer). Rejects when the module cannot load;
 * nothing is left running then.
 */
export function startThreadedLayer(lab, fn, shape, weights, threads) {
  return ThreadedLayer._start(lab, fn, shape, weights, threads);
}
