// The page's side of a training session: requests go to the trainer Worker
// (dist/headlab-trainer-worker.js, or the Worker named in the options) when one
// can start, else to a session on the main thread that trains in short chunks
// between frames. Both answer the same requests and emit the same events (see
// trainer-session.js; lm-session.js for the language model).
//
// A Worker that dies (an uncaught error, an abort of its WebAssembly module) or
// stops answering while it trains, or while it handles a request of `watchRequests` (the Worker
// says it is alive every second meanwhile, session-host.js), is reported once as
// { event: 'paused', reason: 'error', fatal: true, message }; the client is then
// `dead` and refuses requests, and the owner starts a new client to train again.

import { getLab } from '../lab/lab.js';
import { TrainerSession } from '../../../lib/teach/trainer-session.js';
import { openWorker, Pending, refusedWorker, runsIn } from './worker-rpc.js';
import { fallbackReason } from './fallback-reasons.js';

const WORKER_FILE = 'headlab-trainer-worker.js';

export class TrainerClient {
  /**
   * @param {(message: object) => void} onEvent receives { event: 'snapshot' | 'paused', ... }
   * @param {{ workerFile?: string, workerName?: string, activity?: string, watchRequests?: string[],
   *   openSession?: (lab: object, emit: Function, options: object) => Promise<object> }} [options]
   *   the Worker script (next to the bundle), what note() says runs ('Training'), the requests that,
   *   unanswered with no message for watchdogMs, mean the Worker stopped (those that never compute
   *   for long in one go: making or loading a model; not `step`, whose n steps may take minutes), and
   *   how the main-thread fallback opens the same session
   */
  constructor(onEvent, { workerFile = WORKER_FILE, workerName = 'headlab-trainer', activity = 'Training', watchRequests = ['tasks', 'create', 'load'], openSession = (lab, emit, o) => TrainerSession.open(lab, emit, o) } = {}) {
    this.watchRequests = watchRequests;
    this._training = false;
    this.activity = activity;
    this.onEvent = onEvent;
    this.workerFile = workerFile;
    this.workerName = workerName;
    this.openSession = openSession;
    this.mode = null;           // 'worker' | 'main', once known
    /** Why 'main': { code, params, reason } (fallback-reasons.js; elements say it by its code), else null. */
    this.fallback = null;
    this._pending = new Pending();
    this._queue = [];           // requests sent before the Worker said it is ready
    this._worker = null;
    this._session = null;
    this.dead = false;
    /** While training in a Worker, or handling a request of watchRequests, this long without a message from it means it has stopped. */
    this.watchdogMs = 10_000;
    this._watchdog = null;
    this._disposed = false;
    this._start();
  }

  async _start() {
    const { worker, refusal } = await openWorker(this.workerFile, this.workerName);
    if (this._disposed) {
      worker?.terminate();
      return;
    }
    if (!worker) {
      this._useMain(refusal);
      return;
    }
    this._worker = worker;
    this._worker.addEventListener('message', (event) => this._onMessage(event.data ?? {}));
    this._worker.addEventListener('error', (event) => {
      event.preventDefault();
      if (this.mode === 'worker') {
        this._crash(`the trainer Worker stopped with an error: ${event.message || 'no message'}`);
        return;
      }
      this._worker.terminate();
      this._worker = null;
      // Refused by the page's policy (worker-src), or not loaded: say which.
      refusedWorker(this.workerFile).then((csp) => { if (!this._disposed) this._useMain(csp ?? fallbackReason('script-load')); });
    });
  }

  /** The Worker is gone or unusable: free it, fail what waits on it, and report it once. */
  _crash(reason) {
    if (this.dead) return;
    this.dead = true;
    this._stopWatchdog();
    this._worker?.terminate();
    this._worker = null;
    this._failAll(new Error(reason), false);
    this.onEvent({ event: 'paused', reason: 'error', fatal: true, message: reason });
  }

  _startWatchdog() {
    if (this.mode !== 'worker' || this._watchdog) return;
    const every = 500;
    this._lastMessage = this._lastCheck = performance.now();
    this._watchdog = setInterval(() => {
      const now = performance.now();
      // A page that was itself blocked has not read its messages yet: start counting again.
      if (now - this._lastCheck > 4 * every) this._lastMessage = now;
      this._lastCheck = now;
      if (!this._training && !this._pending.waitsFor(this.watchRequests)) {
        this._stopWatchdog();  // nothing is waited for
        return;
      }
      if (now - this._lastMessage > this.watchdogMs) {
        this._crash(`the trainer Worker stopped answering (no message for ${Math.round((now - this._lastMessage) / 1000)} s)`);
      }
    }, every);
  }

  _stopWatchdog() {
    clearInterval(this._watchdog);
    this._watchdog = null;
  }

  /** Trains on the main thread from now on; `fallback` says why ({ code, params, reason }). */
  _useMain(fallback) {
    this.mode = 'main';
    this.fallback = fallback;
    // Short chunks, each its own task, so input and painting happen in between.
    this._session = getLab().then((lab) => this.openSession(lab, (m) => this.onEvent(m), { chunkMs: 8 }));
    this._session.catch(() => {});  // reported by each request that awaits it (none may come)
    const queued = this._queue.splice(0);
    for (const job of queued) this._runMain(job);
  }

  _onMessage(data) {
    if (this.dead) return;
    this._lastMessage = performance.now();
    if (data.alive) return;
    if (data.ready) {
      this.mode = 'worker';
      const queued = this._queue.splice(0);
      for (const job of queued) this._post(job);
      return;
    }
    if (data.failed) {
      this._worker.terminate();
      this._worker = null;
      this._useMain(fallbackReason('wasm-load', { detail: String(data.failed) }));
      return;
    }
    if (data.event) {
      if (data.event === 'paused') this._training = false;  // the watchdog stops once no request waits either
      if (data.fatal) this._crash(`the WebAssembly module in the trainer Worker stopped (${data.message})`);
      else this.onEvent(data);
      return;
    }
    this._pending.settle(data);
    if (data.fatal) this._crash(`the WebAssembly module in the trainer Worker stopped (${data.error?.message ?? 'no message'})`);
  }

  _post(job) {
    if (this.dead || !this._worker) {
      job.reject(new Error('the trainer Worker has stopped; restart training'));
      return;
    }
    if (!this._pending.post(this._worker, job)) return;
    if (job.type === 'run') this._training = true;
    else if (job.type === 'pause' || job.type === 'create' || job.type === 'load') this._training = false;
    if (this._training || this.watchRequests.includes(job.type)) this._startWatchdog();
  }

  async _runMain(job) {
    try {
      const session = await this._session;
      job.resolve((await session.handle(job.type, job.payload)).result);
    } catch (e) {
      job.reject(e);
    }
  }

  _failAll(error, notify = true) {
    this._pending.failAll(error);
    if (notify) this.onEvent({ event: 'paused', reason: 'error', message: error.message });
  }

  /** Sends a request (see trainer-session.js); resolves to its result. */
  request(type, payload = {}, transfer = []) {
    return new Promise((resolve, reject) => {
      const job = this._pending.job(type, payload, transfer, resolve, reject);
      if (this.dead) reject(new Error('the trainer Worker has stopped; restart training'));
      else if (this.mode === 'main') this._runMain(job);
      else if (this.mode === 'worker') this._post(job);
      else this._queue.push(job);
    });
  }

  /** 'worker' or 'main-thread' once known (the elements' runsIn), else null. */
  get runsIn() {
    return runsIn(this.mode);
  }

  /** Why training runs on the main thread, in English ('' while it does not). */
  get fallbackReason() {
    return this.fallback?.reason ?? '';
  }

  /** Where training runs, for a status line, in English (the elements use modeText, in their language). */
  note() {
    if (this.mode === 'worker') return `${this.activity} runs in a Web Worker, so the page stays responsive.`;
    if (this.mode === 'main') return `${this.activity} runs on the page itself (its main thread), in short bursts between frames: ${this.fallbackReason}. The page may feel slower while it works.`;
    return '';
  }

  dispose() {
    this._disposed = true;
    this._stopWatchdog();
    if (this._worker) {
      this._worker.terminate();
      this._worker = null;
    }
    this._session?.then((s) => s.dispose());
    this._failAll(new Error('the trainer was disposed'), false);
  }
}
