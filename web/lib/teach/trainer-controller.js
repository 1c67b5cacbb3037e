// The run logic of <headlab-trainer>, without the DOM: which model exists, whether
// it trains, and what happens when the settings change, the page is hidden, a run
// diverges or the trainer Worker stops. It holds ONE state, changed only by the
// transitions listed below, and the numbers the element draws (runs, history,
// snapshot, the training clock). Requests go to a client with request(type, payload)
// and `dead` (components/shared/trainer-client.js; a fake one in the Node tests),
// which reports { event: 'snapshot' | 'paused' } messages back (trainer-session.js).
//
// States
//   idle        no model (nothing created yet, or the client was freed)
//   creating    a new model is on its way; it is paused once there
//   restarting  a new model is on its way; it trains once there
//   paused      a model, not training
//   running     training
//   pausing     a pause is on its way (training until it takes effect); then paused
//   hiding      the same, because the page was hidden; then hidden
//   holding     the same, because the settings cannot train any more; then held
//   hidden      paused while the page is hidden; training goes on when it is shown
//   held        paused while the settings cannot train; training goes on once they can
//   loading     a saved model is on its way; paused once there
//   diverged    training stopped at the last good step; lowerRate(), reset() or new settings leave it
//   dead        the trainer Worker stopped; only restart() leaves it
//
// Transitions (TRANSITIONS below is the table go() enforces: any other change throws)
//   idle        configure → creating (restarting with autoplay)
//   creating    created → paused; start() → restarting; create failed → paused (idle without a model)
//   restarting  created → running (held if the settings cannot train by then); pause() → creating;
//               create failed → paused
//   paused      start() → running; new settings → creating; loadModel() → loading
//   running     pause() → pausing; hide() → hiding; settings that cannot train → holding;
//               new settings → restarting; round done ('limit') → paused
//   pausing     paused → paused          hiding   paused → hidden (running if shown meanwhile)
//   holding     paused → held (running if the settings can train again meanwhile)
//   hidden      show() → running (held if the settings cannot train)
//   held        trainable settings → running (restarting if they are new)
//   loading     loaded → paused; refused → the state before (paused, held, hidden or diverged)
//   diverged    lowerRate() → restarting; reset() or new settings → creating
//   any         diverged (a 'diverged' pause) → diverged; Worker lost → dead; reset() → creating;
//               dispose() → idle
//   dead        restart() → restarting

import { MAX_STEP_N, PACES } from './trainer-session.js';
import { specialisation } from './trainer-verdicts.js';
import { describe } from './values.js';
import { fmt } from './format.js';

/** The choices the settings form offers; the settings check suggests from these. */
export const HEADS = [1, 2, 3, 4, 6, 8];
export const D_MODELS = [8, 12, 16, 24, 32, 48, 64];
export const DEFAULT_RATE = 0.003;

/** States in which a run is training (a pause may be on its way). */
const TRAINING = new Set(['running', 'pausing', 'hiding', 'holding']);

/** Every allowed change of state: from → the states it may go to. */
export const TRANSITIONS = {
  idle: ['creating', 'restarting', 'loading'],
  creating: ['paused', 'restarting', 'idle'],
  restarting: ['running', 'held', 'creating', 'paused', 'idle'],
  paused: ['running', 'creating', 'restarting', 'loading'],
  running: ['pausing', 'hiding', 'holding', 'restarting', 'paused'],
  pausing: ['paused', 'restarting', 'loading'],
  hiding: ['hidden', 'running', 'restarting'],
  holding: ['held', 'running', 'restarting'],
  hidden: ['running', 'held', 'creating', 'restarting', 'loading'],
  held: ['running', 'restarting', 'creating', 'loading'],
  loading: ['paused', 'held', 'hidden'],
  diverged: ['restarting', 'creating', 'loading'],
  dead: ['restarting'],
};
// From every state but dead: a diverged run, a lost Worker, reset() and dispose().
for (const [from, to] of Object.entries(TRANSITIONS)) {
  if (from === 'dead') continue;
  for (const s of ['diverged', 'dead', 'creating', 'idle']) if (s !== from && !to.includes(s)) to.push(s);
}

/** A learning rate as people write it (the trainer reports float32 values such as 0.0030000000260770321). */
export const rateText = (rate) => String(+Number(rate).toPrecision(6));

/** The rate "Lower the rate" moves to: a tenth, and no higher than the default. */
export const lowerRateFrom = (rate) => +Math.min(rate / 10, DEFAULT_RATE).toPrecision(6);

/**
 * The configuration the settings ask for, or why they cannot train.
 * @param {{task: string, heads: number, dModel: number, learningRate: number, batchSize: number, seed: number, compare: boolean}} s
 * @param {{name: string, description: string}[]} tasks   lab.tasks()
 * @param {(numHeads: number, dModel: number) => boolean} divides  whether h heads split d_model (asked of the module)
 * @returns {{c: object, task?: object, error?: string, compareHeads?: number, config?: object}}
 */
export function trainerSettings(s, tasks, divides, extra = { optimizer: 'adam', causal: false }) {
  const c = { task: s.task, heads: s.heads, dModel: s.dModel, learningRate: s.learningRate, batchSize: s.batchSize, seed: s.seed, compare: s.compare };
  const task = tasks.find((t) => t.name === c.task);
  if (!task) return { c, error: `There is no task “${c.task}”. The tasks are: ${tasks.map((t) => t.name).join(', ')}.` };
  if (!divides(c.heads, c.dModel)) {
    const hs = HEADS.filter((h) => divides(h, c.dModel));
    const ds = D_MODELS.filter((d) => divides(c.heads, d));
    return { c, task, error: `h = ${c.heads} does not divide d_model = ${c.dModel}: the heads could not split it evenly (d_k would be ${fmt(c.dModel / c.heads, 2)}). ` +
      `Pick h = ${hs.join(', ')}${ds.length ? `, or d_model = ${ds.join(', ')}` : ''}.` };
  }
  const compareHeads = c.compare ? (c.heads === 1 ? 2 : c.heads) : 0;
  if (compareHeads && !divides(compareHeads, c.dModel)) return { c, task, error: `h = ${compareHeads} does not divide d_model = ${c.dModel}.` };
  return {
    c, task, compareHeads,
    config: { task: c.task, numHeads: c.heads, dModel: c.dModel, seed: c.seed, learningRate: c.learningRate, batchSize: c.batchSize, ...extra },
  };
}

export class TrainerController {
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
  constructor({ createClient, tasks, divides, emit, now = () => performance.now(), intervalMs = () => 50, name = 'headlab-trainer' }) {
    Object.assign(this, { createClient, tasks, divides, emit, now, intervalMs, name });
    this.state = 'idle';
    this.client = null;
    this.settings = { speed: 'learn', maxSteps: 2000 };
    this.problem = '';          // why the settings cannot train ('' when they can)
    this.key = null;            // the settings of the model that exists or is on its way
    this.extra = { optimizer: 'adam', causal: false };  // what a loaded model brings that the form does not set
    this.runs = [];             // per run: { k, numHeads, dModel, config, taskInfo, labels, T, history, specialisedAt, name }
    this.snapshot = null;
    this.currentStep = 0;
    this.roundStart = 0;
    this.marks = [];            // [{ x: step, label }]: head switches, drawn on the curves
    this.divergence = null;     // while diverged: where and why
    this.pageHidden = false;
    this._trainMs = 0;
    this._runStarted = null;
    this._sent = null;          // the { until, pace } of the last run request
    this._job = 0;
  }

  // ---------------------------------------------------------------- state

  get running() { return TRAINING.has(this.state); }
  /** The step where the current round of training stops. */
  get until() { return this.roundStart + this.settings.maxSteps; }

  /** Moves to `to`; a change the table does not allow is a bug, and throws. */
  go(to, reason = '') {
    const from = this.state;
    if (from === to) return;
    if (!TRANSITIONS[from].includes(to)) throw new Error(`trainer controller: no transition from ${from} to ${to}`);
    if (TRAINING.has(from) && !TRAINING.has(to)) this.stopClock();
    if (!TRAINING.has(from) && TRAINING.has(to)) this._runStarted = this.now();
    if (from === 'diverged') this.divergence = null;
    this.state = to;
    this.emit('state', { from, to, reason });
  }

  /** Throws an Error saying why training cannot go on now: not loaded, the Worker stopped, settings that cannot train, divergence. */
  whyNotReady(what) {
    const where = `${this.name}: ${what}`;
    if (!this.client || !this.runs.length) throw new Error(`${where}: not ready yet (wait for headlab-ready)`);
    if (this.client.dead) throw new Error(`${where}: the trainer Worker has stopped; call restart() first`);
    if (this.problem) throw new Error(`${where}: the settings cannot train: ${this.problem}`);
    if (this.state === 'diverged') {
      throw new RangeError(`${where}: training diverged at step ${this.divergence.step} with learning rate ${rateText(this.divergence.learningRate)}; call lowerRate() or reset() first`);
    }
  }

  /** What the run bar offers: the Start button's label and which actions can be taken. */
  controls() {
    const usable = Boolean(this.client && this.runs.length && !this.client.dead) && !this.problem;
    const ready = usable && this.state !== 'diverged';
    return {
      start: this.running ? 'Pause' : this.currentStep >= this.until && this.currentStep > 0 ? 'Continue' : 'Start',
      canStart: ready, canStep: ready && !this.running, canReset: Boolean(this.client && !this.client.dead), canSave: usable,
    };
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

  // ---------------------------------------------------------------- settings

  /**
   * The element's settings changed (or it was drawn): checks them, starts the client if there is
   * none, and makes, pauses or resumes the model as the state says.
   * @param {object} s  task, heads, dModel, learningRate, batchSize, seed, compare, speed, maxSteps
   * @param {{autoplay?: boolean, connect?: boolean}} [o]  train the first model at once; start a client if there is none
   * @returns the settings check (trainerSettings): { c, task, error } or { c, task, compareHeads, config }
   */
  configure(s, { autoplay = false, connect = true } = {}) {
    this.settings = { ...s };
    const d = trainerSettings(s, this.tasks, this.divides, this.extra);
    this.problem = d.error ?? '';
    if (d.error) {
      if (this.state === 'running') this.pauseFor('holding');
      return d;
    }
    if (!this.client) {
      if (!connect) return d;
      this.client = this.createClient((m) => this.onEvent(m));
      if (this.state === 'idle' && autoplay) this.go('restarting');
    }
    if (this.client.dead) return d;
    const key = this.keyOf(d.c);
    if (key !== this.key && this.state !== 'loading') this.create(d, key);
    else if (this.state === 'held') this.start();
    else if (this.state === 'running') this.sendRun();
    return d;
  }

  /** A new model for the settings `d`; whether it trains once there follows from the state. */
  async create(d, key) {
    this.key = key;
    const job = ++this._job;
    // Settings changed while training (or while held until they can): the new model trains on.
    const trains = ['running', 'holding', 'restarting', 'held'].includes(this.state);
    const to = trains ? 'restarting' : 'creating';
    if (this.state !== to) this.go(to);
    let info;
    try {
      info = await this.client.request('create', { config: d.config, compareHeads: d.compareHeads });
    } catch (e) {
      if (job !== this._job || this.state === 'dead') return;
      this.go(this.runs.length ? 'paused' : 'idle', 'create-failed');
      this.emit('error', { error: e });
      return;
    }
    if (job !== this._job || !['creating', 'restarting'].includes(this.state)) return;
    this.replaceRuns(info, 0);
    if (this.state === 'creating') this.go('paused', 'created');
    else if (this.problem) this.go('held', 'created');
    else this.begin();
  }

  /** A new model (created or loaded) replaces the runs. */
  replaceRuns(info, roundStart) {
    this.snapshot = null;
    this.divergence = null;
    this._trainMs = 0;
    this._runStarted = null;
    this.marks = [];
    this.runs = info.runs.map((r, k) => {
      const { config, taskInfo, probe } = r;
      return {
        k, numHeads: config.numHeads, dModel: config.dModel, config, taskInfo, T: taskInfo.seqLen,
        labels: probe.tokenNames.map((t, i) => `${i}:${t}`), probe,
        name: info.runs.length > 1 ? `h = ${config.numHeads}` : '', history: [], specialisedAt: null,
      };
    });
    this.emit('created', { runs: this.runs, note: this.client.note?.() ?? '' });
    this.roundStart = roundStart;
    this.ingest(info.snapshot);
  }

  // ---------------------------------------------------------------- training

  /** Starts (or continues) training; false when it cannot now (see whyNotReady). */
  start() {
    if (this.state === 'creating') { this.go('restarting'); return true; }
    if (!['paused', 'hidden', 'held'].includes(this.state)) return false;
    return this.begin();
  }

  /** Training starts (from a paused state, or once a model made to train is there). */
  begin() {
    if (this.problem || !this.client || this.client.dead || !this.runs.length) return false;
    // Training goes in rounds of max-steps: Start after a round has ended begins the next one.
    if (this.currentStep >= this.until) this.roundStart = this.currentStep;
    this.go('running', 'start');
    this.client.request('options', { intervalMs: this.intervalMs() }).catch(() => {});
    this._sent = null;
    this.sendRun();
    return true;
  }

  /** Sends the round's end and the pace again when either changed while training. */
  sendRun() {
    const until = this.until, pace = this.pace();
    if (this._sent && this._sent.until === until && this._sent.pace === pace) return;
    this._sent = { until, pace };
    this.client.request('run', { until, pace }).catch((e) => this.emit('error', { error: e }));
  }

  pause() {
    if (this.state === 'restarting') this.go('creating');
    else if (this.state === 'running') this.pauseFor('pausing');
  }

  /**
   * Asks the session to pause; the state `via` says what follows once it has (see onPaused).
   * The session reports the pause before it answers the request; a session that had already
   * stopped reports nothing, and the answer stands for the report.
   */
  pauseFor(via) {
    this.go(via);
    return this.client.request('pause').then(() => {
      if (this.state === via) this.onPaused({ event: 'paused', reason: 'pause' });
    }, (e) => this.emit('error', { error: e }));
  }

  /** The page was hidden: a hidden tab does not need to train. */
  hide() {
    this.pageHidden = true;
    if (this.state === 'running') this.pauseFor('hiding');
  }

  /** The page is shown again: training that hiding paused goes on (once the settings can train). */
  show() {
    this.pageHidden = false;
    if (this.state !== 'hidden') return;
    if (this.problem) this.go('held');
    else this.start();
  }

  async step(n = 1) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_STEP_N) {
      throw new (typeof n === 'number' ? RangeError : TypeError)(`${this.name}: step(n): n must be a whole number from 1 to ${MAX_STEP_N}, got ${describe(n)}`);
    }
    if (this.running) throw new Error(`${this.name}: step(n): training is running; pause() first`);
    this.whyNotReady('step(n)');
    this.ingest(await this.client.request('step', { n }));
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

  /** After the Worker stopped: a new client, a new model from step 0, training at once (on the next configure). */
  restart() {
    this.client?.dispose();
    this.client = null;
    this.key = null;
    this._job += 1;
    if (this.state !== 'restarting') this.go('restarting', 'restart');
  }

  /** A new model from step 0, paused (on the next configure). */
  reset() {
    if (this.client?.dead) return;
    this.key = null;
    this._job += 1;
    if (this.state !== 'creating') this.go('creating', 'reset');
  }

  /** The element was removed for good: frees the client. */
  dispose() {
    this.client?.dispose();
    this.client = null;
    this.key = null;
    this._job += 1;
    if (this.state !== 'idle') this.go('idle', 'disposed');
  }

  // ---------------------------------------------------------------- heads and files

  async setHeadEnabled(head, enabled, run = this.runs.length - 1) {
    this.whyNotReady('setHeadEnabled');
    if (!Number.isInteger(run) || !this.runs[run]) {
      throw new RangeError(`${this.name}: setHeadEnabled: run must be ${this.runs.length === 1 ? '0' : `0..${this.runs.length - 1}`}, got ${describe(run)}`);
    }
    const r = this.runs[run];
    const snap = await this.client.request('setHead', { run, head, enabled: Boolean(enabled) });
    this.marks.push({ x: snap.runs[run].step, label: `${this.runs.length > 1 ? `h = ${r.numHeads}: ` : ''}head ${head + 1} ${enabled ? 'on' : 'off'}` });
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
    if (!this.client || this.client.dead) this.whyNotReady('loadModel');
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`${this.name}: loadModel(bytes): bytes must be a Uint8Array or ArrayBuffer (a saved .hlab model), got ${describe(bytes)}`);
    }
    bytes = bytes.slice();  // the copy goes to the Worker; the caller's array stays usable
    if (this.state === 'running') await this.pauseFor('pausing');
    else if (this.running) await this.client.request('pause');  // a pause already on its way: wait for it
    const before = this.state, kept = this.divergence;
    const job = ++this._job;
    if (TRANSITIONS[before].includes('loading')) this.go('loading');
    let info;
    try {
      info = await this.client.request('load', { bytes }, [bytes.buffer]);
    } catch (e) {
      // Refused: the model in use stays, as it was.
      if (this.state === 'loading') {
        this.go(['held', 'hidden', 'diverged'].includes(before) ? before : 'paused', 'load-refused');
        if (before === 'diverged') this.divergence = kept;
      }
      throw e;
    }
    const c = info.runs[0].config;
    this.extra = { optimizer: c.optimizer, causal: c.causal };
    const settings = { task: c.task, heads: c.numHeads, dModel: c.dModel, learningRate: +c.learningRate.toPrecision(6), batchSize: c.batchSize, seed: c.seed, compare: false };
    this.key = this.keyOf(settings);
    if (job === this._job && this.state !== 'dead') {
      this.replaceRuns(info, info.snapshot.runs[0].step);
      if (TRANSITIONS[this.state].includes('paused')) this.go('paused', 'loaded');
    }
    return { config: c, settings };
  }

  async exportModel(run = this.runs.length - 1) {
    return this.client.request('exportModel', { run });
  }

  // ---------------------------------------------------------------- session events

  onEvent(m) {
    if (m.event === 'snapshot') this.ingest(m.snapshot);
    else if (m.event === 'paused') this.onPaused(m);
  }

  onPaused(m) {
    if (m.reason === 'error' && m.fatal) {
      this._job += 1;
      if (this.state !== 'dead') this.go('dead', 'error');
      this.emit('dead', { message: m.message ?? 'the trainer Worker stopped' });
      return;
    }
    if (m.reason === 'diverged') {
      this.divergence = m.divergence;
      if (this.state !== 'diverged') this.go('diverged', 'diverged');
      this.emit('diverged', { divergence: m.divergence });
      return;
    }
    if (m.reason === 'error') this.emit('error', { error: new Error(m.message ?? 'unknown error'), title: 'Training stopped.' });
    const reason = m.reason;
    switch (this.state) {
      case 'running': this.go('paused', reason); break;
      case 'pausing': this.go('paused', reason); break;
      // Shown again, or settings fixed, before the pause took effect: go on.
      case 'hiding': this.go('hidden', reason); if (!this.pageHidden) this.show(); break;
      case 'holding': this.go('held', reason); if (!this.problem) this.start(); break;
      default: break;
    }
  }

  stopClock() {
    if (this._runStarted !== null) {
      this._trainMs += this.now() - this._runStarted;
      this._runStarted = null;
    }
  }

  /** Seconds of training so far (the clock runs only while training). */
  seconds() {
    return (this._trainMs + (this._runStarted !== null ? this.now() - this._runStarted : 0)) / 1000;
  }

  /** A snapshot from the session: history points, the first specialisation of each run. */
  ingest(snap) {
    if (!snap || snap.runs.length !== this.runs.length) return;
    this.snapshot = snap;
    this.currentStep = snap.runs[0].step;
    const seconds = this.seconds();
    const found = [];
    snap.runs.forEach((s, k) => {
      const run = this.runs[k];
      const last = run.history[run.history.length - 1];
      const point = { step: s.step, trainLoss: s.train?.loss ?? null, trainAccuracy: s.train?.accuracy ?? null,
        evalLoss: s.eval.loss, evalAccuracy: s.eval.accuracy, headsOn: s.enabled.filter(Boolean).length, seconds: +seconds.toFixed(3) };
      const same = last && last.step === point.step && last.evalLoss === point.evalLoss && last.headsOn === point.headsOn;
      if (!same) run.history.push(point);
      if (!run.specialisedAt) {
        const tracks = specialisation(s);
        if (tracks) {
          run.specialisedAt = { step: s.step, seconds, tracks };
          found.push(run);
        }
      }
    });
    for (const run of found) {
      this.emit('specialised', { run, ...run.specialisedAt });
      // The slow start has shown what it was for: go on at the normal pace.
      if (this.state === 'running') this.sendRun();
    }
    this.emit('snapshot', { snapshot: snap, seconds });
  }
}
