// A training session for <headlab-trainer>: one run, or two runs side by side
// (same task, seed and data, different h), stepped in time-boxed chunks so that
// a pause takes effect within one chunk and snapshots flow several times a
// second. Every number comes from the HeadLab API (web/lib/headlab.js); nothing
// here touches the DOM, so the same code runs in the trainer Worker and, where
// no Worker can start, on the main thread.
//
// Requests (handle(type, payload) → Promise<{ result, transfer }>, answered in order):
//   create  { config, compareHeads? }  new run(s); compareHeads = h of the second run
//   load    { bytes }                  one run from a saved model
//   run     { until, pace }            train until step `until` at `pace` steps/s (0 = flat out)
//   pause                              stop after the current chunk
//   step    { n }                      n steps now (1..MAX_STEP_N), then a snapshot
//   setHead { run, head, enabled }     ablation; a snapshot follows
//   options { intervalMs }             minimum time between snapshots while running
//   snapshot                           a snapshot now
//   save    { run }                    Uint8Array of trainer.save()
//   exportModel { run }                trainer.exportModel()
//   dispose
// Events (emit(message, transfer)):
//   { event: 'snapshot', snapshot }    see snapshot() below
//   { event: 'paused', reason }        'pause' | 'limit' | 'error' (with message, and fatal when the module aborted)
//                                      | 'diverged' (with divergence: { run, numHeads, step, learningRate, optimizer,
//                                      reason, message }; a snapshot of the kept state comes first)
// A run that diverges (Trainer.step throws; see headlab.js) stops the session: `run` and `step` are refused
// until a new `create` or `load`. Its kept state still answers snapshot, save and exportModel.

import { describe } from './values.js';

/** Steps per second of each pace; 0 = as fast as the machine goes. */
export const PACES = { slow: 40, normal: 200, fast: 0 };

/** Held-out examples per evaluation (the same ones every call) and examples for head metrics. */
export const EVAL_EXAMPLES = 1000;
export const METRIC_EXAMPLES = 256;

/** Most steps one `step` request may take: it runs in one go, so longer runs go through `run`. */
export const MAX_STEP_N = 10000;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

export class TrainerSession {
  /**
   * @param {import('../../lib/headlab.js').Headlab} lab
   * @param {(message: object, transfer?: Transferable[]) => void} emit
   * @param {{ chunkMs?: number, schedule?: (fn: () => void) => void }} [options]
   *   chunkMs: compute time per chunk; schedule: how the next chunk is queued
   */
  constructor(lab, emit, { chunkMs = 25, schedule } = {}) {
    this.lab = lab;
    this.emit = emit;
    this.chunkMs = chunkMs;
    this.schedule = schedule ?? ((fn) => setTimeout(fn, 0));
    this.trainers = [];
    this.running = false;
    this.intervalMs = 50;
    this.until = 0;
    this.currentStep = 0;
    this.pace = 0;
    this._acc = [];
    this.diverged = null;
    this._generation = 0;
    this._tail = Promise.resolve();
  }

  /** A session with the training module already loaded, so that no request waits for it later. */
  static async open(lab, emit, options) {
    await lab.tasks();
    return new TrainerSession(lab, emit, options);
  }

  /** Answers requests one after another, even when one of them has to wait (create, load). */
  handle(type, payload = {}) {
    const reply = this._tail.then(() => this._handle(type, payload));
    this._tail = reply.catch(() => {});
    return reply;
  }

  async _handle(type, payload) {
    switch (type) {
      case 'create': return { result: await this.create(payload.config, payload.compareHeads) };
      case 'load': return { result: await this.load(payload.bytes) };
      case 'run': this.run(payload); return { result: true };
      case 'pause': this.pause('pause'); return { result: true };
      case 'step': return this.snapshotReply(this.stepNow(payload.n ?? 1));
      case 'setHead': {
        this.trainer(payload.run).setHeadEnabled(payload.head, payload.enabled);
        return this.snapshotReply();
      }
      case 'options':
        if (Number.isFinite(payload.intervalMs) && payload.intervalMs > 0) this.intervalMs = payload.intervalMs;
        return { result: true };
      case 'snapshot': return this.snapshotReply();
      case 'save': {
        const bytes = this.trainer(payload.run).save();
        return { result: bytes, transfer: [bytes.buffer] };
      }
      case 'exportModel': {
        const model = this.trainer(payload.run).exportModel();
        return { result: model, transfer: Object.values(model).filter(ArrayBuffer.isView).map((a) => a.buffer) };
      }
      case 'dispose': this.dispose(); return { result: true };
      default: throw new TypeError(`trainer session: unknown request "${type}"`);
    }
  }

  trainer(run = 0) {
    const t = this.trainers[run];
    if (!t) throw new RangeError(`trainer session: no run ${run} (there ${this.trainers.length === 1 ? 'is 1 run' : `are ${this.trainers.length} runs`})`);
    return t;
  }

  /** Disposes the current runs and creates new ones; returns what the UI needs to lay them out. */
  async create(config, compareHeads = 0) {
    const fresh = [];
    try {
      if (compareHeads) {
        fresh.push(await this.lab.createTrainer({ ...config, numHeads: 1 }));
        fresh.push(await this.lab.createTrainer({ ...config, numHeads: compareHeads }));
      } else {
        fresh.push(await this.lab.createTrainer(config));
      }
    } catch (e) {
      disposeAll(fresh);
      throw e;
    }
    return this.replace(fresh);
  }

  async load(bytes) {
    const t = await this.lab.loadTrainer(bytes);
    return this.replace([t]);
  }

  replace(trainers) {
    if (this._disposed) {
      disposeAll(trainers);
      throw new Error('trainer session: disposed while a run was being created');
    }
    this.pause(null);
    disposeAll(this.trainers);
    this.trainers = trainers;
    this.diverged = null;
    this._acc = trainers.map(() => ({ loss: 0, accuracy: 0, steps: 0 }));
    this.currentStep = trainers.length ? trainers[0].config().step : 0;
    return {
      runs: trainers.map((t) => ({ config: t.config(), taskInfo: t.taskInfo(), probe: { tokenNames: t.probe().tokenNames } })),
      snapshot: this.snapshot(),
    };
  }

  /** Runs n steps on every run; losses are accumulated for the next snapshot's training point. */
  stepNow(n) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_STEP_N) {
      throw new (typeof n === 'number' ? RangeError : TypeError)(`step: n must be a whole number from 1 to ${MAX_STEP_N}, got ${describe(n)}`);
    }
    if (!this.trainers.length) throw new RangeError('trainer session: create a run first');
    this.refuseIfDiverged();
    try {
      for (let i = 0; i < n; i++) this.oneStep();
    } catch (e) {
      if (this.diverged) this.reportDivergence();
      throw e;
    }
    return null;
  }

  oneStep() {
    this.trainers.forEach((t, k) => {
      let r;
      try {
        r = t.step(1);
      } catch (e) {
        const d = t.divergence();
        if (d) this.diverged = { run: k, numHeads: t.config().numHeads, ...d };
        throw e;
      }
      const a = this._acc[k];
      a.loss += r.loss;
      a.accuracy += r.accuracy;
      a.steps += 1;
    });
    this.currentStep += 1;
  }

  refuseIfDiverged() {
    if (this.diverged) throw new RangeError(`trainer session: ${this.diverged.message}; create a new run`);
  }

  /** Training stopped because a run diverged: a snapshot of the kept state, then the reason. */
  reportDivergence() {
    this.running = false;
    this._generation += 1;
    const snap = this.snapshot();
    this.emit({ event: 'snapshot', snapshot: snap }, transfers(snap));
    this.emit({ event: 'paused', reason: 'diverged', divergence: { ...this.diverged } });
  }

  run({ until, pace = 0 }) {
    if (!this.trainers.length) throw new RangeError('trainer session: create a run first');
    this.refuseIfDiverged();
    this.until = Number.isFinite(until) ? until : Infinity;
    this.pace = pace > 0 ? pace : 0;
    if (this.running) return;
    this.running = true;
    const generation = ++this._generation;
    this._paceStart = now();
    this._paceSteps = 0;
    this._lastSnapshot = now();
    this.schedule(() => this.tick(generation));
  }

  pause(reason) {
    const was = this.running;
    this.running = false;
    this._generation += 1;
    if (was && reason) {
      const snap = this.snapshot();
      this.emit({ event: 'snapshot', snapshot: snap }, transfers(snap));
      this.emit({ event: 'paused', reason });
    }
  }

  tick(generation) {
    if (!this.running || generation !== this._generation) return;
    try {
      const t0 = now();
      let stepped = 0;
      let limit = Infinity;
      if (this.pace > 0) limit = Math.floor((this.pace * (t0 - this._paceStart)) / 1000) - this._paceSteps;
      while (stepped < limit && this.currentStep < this.until && now() - t0 < this.chunkMs) {
        this.oneStep();
        stepped += 1;
      }
      this._paceSteps += stepped;
      const done = this.currentStep >= this.until;
      if (done) {
        this.pause('limit');
        return;
      }
      if (now() - this._lastSnapshot >= this.intervalMs && this._acc[0].steps > 0) {
        this._lastSnapshot = now();
        const snap = this.snapshot();
        this.emit({ event: 'snapshot', snapshot: snap }, transfers(snap));
      }
      if (this.pace > 0 && stepped === 0) setTimeout(() => this.tick(generation), 8);
      else this.schedule(() => this.tick(generation));
    } catch (e) {
      if (this.diverged) {
        this.reportDivergence();
        return;
      }
      this.running = false;
      // fatal: the WebAssembly module aborted (e.g. out of memory) and cannot be used again.
      this.emit({ event: 'paused', reason: 'error', message: e?.message ?? String(e), fatal: e instanceof WebAssembly.RuntimeError });
    }
  }

  snapshotReply() {
    const snapshot = this.snapshot();
    return { result: snapshot, transfer: transfers(snapshot) };
  }

  /**
   * Everything the UI draws, for every run: step, mean training-batch loss and
   * accuracy since the previous snapshot (null when no step was taken), held-out
   * loss and accuracy, the same with every head on (only while a head is off),
   * per-head metrics, attention weights on the probe, which heads are on.
   */
  snapshot() {
    const runs = this.trainers.map((t, k) => {
      const a = this._acc[k];
      const train = a.steps ? { loss: a.loss / a.steps, accuracy: a.accuracy / a.steps, steps: a.steps } : null;
      this._acc[k] = { loss: 0, accuracy: 0, steps: 0 };
      const numHeads = t.config().numHeads;
      const enabled = Array.from({ length: numHeads }, (_, h) => t.headEnabled(h));
      const evaluation = t.evaluate(EVAL_EXAMPLES);
      let allOn = null;
      if (enabled.includes(false)) {
        enabled.forEach((on, h) => { if (!on) t.setHeadEnabled(h, true); });
        allOn = t.evaluate(EVAL_EXAMPLES);
        enabled.forEach((on, h) => { if (!on) t.setHeadEnabled(h, false); });
      }
      return {
        step: t.config().step, numHeads, train, eval: evaluation, allOn, enabled,
        metrics: t.headMetrics(METRIC_EXAMPLES), weights: t.attentionWeights(),
      };
    });
    return { running: this.running, runs };
  }

  dispose() {
    this._disposed = true;
    this.pause(null);
    disposeAll(this.trainers);
    this.trainers = [];
  }
}

function disposeAll(trainers) {
  for (const t of trainers) t.dispose();
}

function transfers(snapshot) {
  return snapshot.runs.map((r) => r.weights.buffer);
}
