// The run logic of <headlab-trainer>, without the DOM: the shared state machine of
// training-controller.js (its states and transitions, which every training element
// uses) for one-layer models: the settings check (h must divide d_model), a run per
// model of the session (trainer-session.js) with its probe, when each run's heads
// have specialised (and the 'learn' speed goes from slow to normal), divergence and
// the saved-model files.

import { MAX_STEP_N, PACES } from './trainer-session.js';
import { TrainingController, TRANSITIONS, rateText } from './training-controller.js';
import { specialisation } from './trainer-verdicts.js';
import { describe } from './values.js';
import { fmt } from './format.js';

/** The choices the settings form offers; the settings check suggests from these. */
export const HEADS = [1, 2, 3, 4, 6, 8];
export const D_MODELS = [8, 12, 16, 24, 32, 48, 64];
export const DEFAULT_RATE = 0.003;

export { TRANSITIONS, rateText };

/** The rate "Lower the rate" moves to: a tenth, and no higher than the default. */
export const lowerRateFrom = (rate) => +Math.min(rate / 10, DEFAULT_RATE).toPrecision(6);

/**
 * The configuration the settings ask for, or why they cannot train.
 * @param {{task: string, heads: number, dModel: number, learningRate: number, batchSize: number, seed: number, compare: boolean}} s
 * @param {{name: string, description: string}[]} tasks   lab.tasks()
 * @param {(numHeads: number, dModel: number) => boolean} divides  whether h heads split d_model (asked of the module)
 * @returns {{c: object, task?: object, error?: string, problem?: {key: string, params: object}, compareHeads?: number, config?: object}}
 *   `problem` is `error` as a catalogue key (catalogues/trainer.js) with its parameters
 */
export function trainerSettings(s, tasks, divides, extra = { optimizer: 'adam', causal: false }) {
  const c = {
    task: s.task, heads: s.heads, dModel: s.dModel, learningRate: s.learningRate, batchSize: s.batchSize, seed: s.seed, compare: s.compare,
  };
  const task = tasks.find((t) => t.name === c.task);
  if (!task) {
    return { c, error: `There is no task “${c.task}”. The tasks are: ${tasks.map((t) => t.name).join(', ')}.`,
      problem: { key: 'trainer.err.noTask', params: { task: c.task, tasks: tasks.map((t) => t.name).join(', ') } } };
  }
  if (!divides(c.heads, c.dModel)) {
    const hs = HEADS.filter((h) => divides(h, c.dModel));
    const ds = D_MODELS.filter((d) => divides(c.heads, d));
    return { c, task, error: `h = ${c.heads} does not divide d_model = ${c.dModel}: the heads could not split it evenly (d_k would be ${fmt(c.dModel / c.heads, 2)}). ` +
      `Pick h = ${hs.join(', ')}${ds.length ? `, or d_model = ${ds.join(', ')}` : ''}.`,
    problem: { key: ds.length ? 'trainer.err.divideOr' : 'trainer.err.divide', params: { h: c.heads, d: c.dModel, dk: c.dModel / c.heads, hs: hs.join(', '), ds: ds.join(', ') } } };
  }
  const compareHeads = c.compare ? (c.heads === 1 ? 2 : c.heads) : 0;
  if (compareHeads && !divides(compareHeads, c.dModel)) {
    return { c, task, error: `h = ${compareHeads} does not divide d_model = ${c.dModel}.`, problem: { key: 'trainer.err.compare', params: { h: compareHeads, d: c.dModel } } };
  }
  return {
    c, task, compareHeads,
    config: {
      task: c.task, numHeads: c.heads, dModel: c.dModel, seed: c.seed, learningRate: c.learningRate, batchSize: c.batchSize, ...extra,
    },
  };
}

export class TrainerController extends TrainingController {
  /**
   * @param {object} o
   * @param {(onEvent: (m: object) => void) => {request: Function, dead: boolean, dispose: Function, note?: Function}} o.createClient
   * @param {{name: string}[]} o.tasks                    lab.tasks()
   * @param {(numHeads: number, dModel: number) => boolean} o.divides
   * @param {(type: string, detail: object) => void} o.emit  state, created, snapshot, specialised, diverged, dead, error
   * @param {() => number} [o.now]                       milliseconds, for the training clock
   * @param {() => number} [o.intervalMs]                how often the session sends snapshots while training
   * @param {string} [o.name]                            prefixes the errors of the methods
   */
  constructor({ tasks, divides, ...o }) {
    super(o);
    Object.assign(this, { tasks, divides });
    this.settings = { speed: 'learn', maxSteps: 2000 };
    this.extra = { optimizer: 'adam', causal: false };  // what a loaded model brings that the form does not set
    // this.runs: per run { k, numHeads, dModel, config, taskInfo, labels, T, probe, history, specialisedAt, name }
  }

  /** Steps per second to ask the session for: 'learn' is slow until every run has specialised, then normal. */
  pace() {
    if (this.settings.speed !== 'learn') return PACES[this.settings.speed];
    return this.runs.length && this.runs.every((r) => r.specialisedAt) ? PACES.normal : PACES.slow;
  }

  keyOf(c) {
    return [c.task, c.heads, c.dModel, +Number(c.learningRate).toPrecision(6), c.batchSize, c.seed, c.compare ? 1 : 0,
      this.extra.optimizer, this.extra.causal ? 1 : 0].join('|');
  }

  // ---------------------------------------------------------------- the model (see TrainingController)

  /**
   * @param {object} s  task, heads, dModel, learningRate, batchSize, seed, compare, speed, maxSteps
   * @returns the settings check (trainerSettings): { c, task, error } or { c, task, compareHeads, config }
   */
  check(s) { return trainerSettings(s, this.tasks, this.divides, this.extra); }

  modelKey(d) { return this.keyOf(d.c); }

  makeModel(d) { return this.client.request('create', { config: d.config, compareHeads: d.compareHeads }); }

  runOf({ config, taskInfo, probe }, k, n) {
    return {
      k, numHeads: config.numHeads, dModel: config.dModel, config, taskInfo, T: taskInfo.seqLen,
      labels: probe.tokenNames.map((t, i) => `${i}:${t}`), probe,
      name: n > 1 ? `h = ${config.numHeads}` : '', history: [], specialisedAt: null,
    };
  }

  pointOf(s, seconds) {
    return { step: s.step, trainLoss: s.train?.loss ?? null, trainAccuracy: s.train?.accuracy ?? null,
      evalLoss: s.eval.loss, evalAccuracy: s.eval.accuracy, headsOn: s.enabled.filter(Boolean).length, seconds: +seconds.toFixed(3) };
  }

  /** The first specialisation of each run (the slow start of 'learn' has then shown what it was for). */
  track(run, s, k, seconds) {
    if (run.specialisedAt) return null;
    const tracks = specialisation(s);
    if (!tracks) return null;
    run.specialisedAt = { step: s.step, seconds, tracks };
    return ['specialised', { run, ...run.specialisedAt }];
  }

  // ---------------------------------------------------------------- training

  async step(n = 1) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_STEP_N) {
      throw new (typeof n === 'number' ? RangeError : TypeError)(`${this.name}: step(n): n must be a whole number from 1 to ${MAX_STEP_N}, got ${describe(n)}`);
    }
    if (this.running) throw new Error(`${this.name}: step(n): training is running; pause() first`);
    this.whyNotReady('step(n)');
    return super.step(n);
  }

  /** After training diverged: a new model from step 0 that trains at once. Returns the rate to train with. */
  lowerRate(current) {
    const rate = this.state === 'diverged' ? this.divergence.learningRate : current;
    if (this.state !== 'dead') {
      this.key = null;
      this.go('restarting', 'lower-rate');
    }
    return lowerRateFrom(rate);
  }

  // ---------------------------------------------------------------- heads and files

  async setHeadEnabled(head, enabled, run = this.runs.length - 1) {
    this.whyNotReady('setHeadEnabled');
    if (!Number.isInteger(run) || !this.runs[run]) {
      throw new RangeError(`${this.name}: setHeadEnabled: run must be ${this.runs.length === 1 ? '0' : `0..${this.runs.length - 1}`}, got ${describe(run)}`);
    }
    const r = this.runs[run];
    const snap = await this.client.request('setHead', { run, head, enabled: Boolean(enabled) });
    this.marks.push({ x: snap.runs[run].step, label: `${this.runs.length > 1 ? `h = ${r.numHeads}: ` : ''}head ${head + 1} ${enabled ? 'on' : 'off'}`,
      head, enabled: Boolean(enabled), numHeads: this.runs.length > 1 ? r.numHeads : null });
    this.ingest(snap);
    return snap.runs[run];
  }

  async saveModel(run = this.runs.length - 1) {
    if (!this.client || this.client.dead) this.whyNotReady('saveModel');
    return this.client.request('save', { run });
  }

  /**
   * Loads a saved model (pausing first); it replaces the runs and is paused.
   * @returns {Promise<{config: object, settings: object}>} the file's config, and the element settings it implies
   */
  async loadModel(bytes) {
    return this.loadSaved(bytes, '.hlab', (b) => ({ bytes: b }), (info) => {
      const c = info.runs[0].config;
      this.extra = { optimizer: c.optimizer, causal: c.causal };
      const settings = {
        task: c.task, heads: c.numHeads, dModel: c.dModel, learningRate: +c.learningRate.toPrecision(6), batchSize: c.batchSize,
        seed: c.seed, compare: false,
      };
      this.key = this.keyOf(settings);
      return { result: { config: c, settings }, roundStart: info.snapshot.runs[0].step };
    });
  }

  async exportModel(run = this.runs.length - 1) {
    return this.client.request('exportModel', { run });
  }
}
