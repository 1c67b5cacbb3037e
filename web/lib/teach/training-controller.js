// The run logic every training element shares, without the DOM: which model exists,
// whether it trains, and what happens when the settings change, the page is hidden,
// a run diverges or the training Worker stops. It holds ONE state, changed only by
// the transitions listed below, and the numbers the element draws (runs, history,
// snapshot, the training clock). Requests go to a client with request(type, payload)
// and `dead` (components/shared/worker/trainer-client.js; a fake one in the Node tests),
// which reports { event: 'snapshot' | 'paused' } messages back (trainer-session.js,
// lm-session.js). What a model is, how its settings are checked and made and what a
// snapshot adds to the curves, a subclass says: TrainerController (<headlab-trainer>,
// trainer-controller.js) and LmController (<headlab-language-model>, lm-controller.js).
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
//   dead        the training Worker stopped; only restart() leaves it
//
// Transitions (TRANSITIONS below is the table go() enforces: any other change throws)
//   idle        configure → creating (restarting with autoplay, or after a start() before it)
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

import { describe } from './values.js';

/** States in which a run is training (a pause may be on its way). */
export const TRAINING = new Set(['running', 'pausing', 'hiding', 'holding']);

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

/**
 * The shared state machine. A subclass implements:
 *   check(s)              the settings s checked: { error } when they cannot train, else what makeModel needs
 *   modelKey(d)           a string that changes exactly when the checked settings d need a new model
 *   makeModel(d, current) → Promise of the session's { runs, snapshot } for d (current() is false once overtaken)
 *   runOf(info, k, n)     the controller's record of run k of n ({ history: [] } and what the element draws)
 *   pointOf(s, seconds)   the history point a snapshot's run adds to the curves ({ step, evalLoss, headsOn, ... })
 *   track(run, s, k, seconds)  → [type, detail] to emit once the snapshot is taken in (a run specialised, a phase change), or null
 *   pace()                steps per second to ask the session for
 * and may override trainsNewModel(d) and roundStartOf(info).
 */
export class TrainingController {
  /**
   * @param {object} o
   * @param {(onEvent: (m: object) => void) => {request: Function, dead: boolean, dispose: Function, note?: Function}} o.createClient
   * @param {(type: string, detail: object) => void} o.emit  state, created, snapshot, diverged, dead, error and the subclass's own
   * @param {() => number} [o.now]                       milliseconds, for the training clock
   * @param {() => number} [o.intervalMs]                how often the session sends snapshots while training
   * @param {string} [o.name]                            prefixes the errors of the methods
   * @param {string} [o.deadText]                        what whyNotReady says once the Worker stopped
   */
  constructor({ createClient, emit, now = () => performance.now(), intervalMs = () => 50, name = 'headlab-trainer',
    deadText = 'the trainer Worker has stopped; call restart() first' }) {
    Object.assign(this, { createClient, emit, now, intervalMs, name, deadText });
    this.state = 'idle';
    this.client = null;
    this.startAsked = false;    // start() came before the first settings
    this.settings = { maxSteps: 2000 };
    this.problem = '';          // why the settings cannot train ('' when they can)
    this.key = null;            // the settings of the model that exists or is on its way
    this.runs = [];
    this.snapshot = null;
    this.currentStep = 0;
    this.roundStart = 0;
    this.marks = [];            // [{ x: step, label }]: drawn on the curves
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
    if (this.client.dead) throw new Error(`${where}: ${this.deadText}`);
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

  // ---------------------------------------------------------------- settings

  /**
   * The element's settings changed (or it was drawn): checks them, starts the client if there is
   * none, and makes, pauses or resumes the model as the state says.
   * @param {object} s  the element's settings, with maxSteps (the length of a round) and speed
   * @param {{autoplay?: boolean, connect?: boolean}} [o]  train the first model at once; start a client if there is none
   * @returns the settings check (the subclass's check(s))
   */
  configure(s, { autoplay = false, connect = true } = {}) {
    this.settings = { ...s };
    const d = this.check(s);
    this.problem = d.error ?? '';
    if (d.error) {
      if (this.state === 'running') this.pauseFor('holding');
      return d;
    }
    if (!this.client) {
      if (!connect) return d;
      this.connect();
    }
    // The first settings (the client may have started before them, see connect); start() asked
    // for before them trains the first model at once, as autoplay does.
    if (this.state === 'idle' && (autoplay || this.startAsked)) this.go('restarting');
    this.startAsked = false;
    if (this.client.dead) return d;
    const key = this.modelKey(d);
    if (key !== this.key && this.state !== 'loading') this.create(d, key);
    else if (this.state === 'held') this.start();
    else if (this.state === 'running') this.sendRun();
    return d;
  }

  /**
   * Starts the client now if there is none (configure() would, at the first settings): an element
   * calls it as soon as it is on the page, so its Worker loads while the element's own code and the
   * page's WebAssembly do. Returns the client.
   */
  connect() {
    this.client ??= this.createClient((m) => this.onEvent(m));
    return this.client;
  }

  /**
   * Whether a new model (for the checked settings d) trains once there: when the settings changed
   * while training (or while held until they can).
   */
  trainsNewModel() {
    return ['running', 'holding', 'restarting', 'held'].includes(this.state);
  }

  /** The step a new model's (info's) first round of training starts from. */
  roundStartOf() {
    return 0;
  }

  /** A new model for the checked settings `d`; whether it trains once there follows from the state. */
  async create(d, key) {
    this.key = key;
    const job = ++this._job;
    const to = this.trainsNewModel(d) ? 'restarting' : 'creating';
    if (this.state !== to) this.go(to);
    let info;
    try {
      info = await this.makeModel(d, () => job === this._job);
    } catch (e) {
      if (job !== this._job || this.state === 'dead') return;
      this.go(this.runs.length ? 'paused' : 'idle', 'create-failed');
      this.emit('error', { error: e });
      return;
    }
    if (job !== this._job || !['creating', 'restarting'].includes(this.state)) return;
    this.replaceRuns(info, this.roundStartOf(info), d);
    if (this.state === 'creating') this.go('paused', 'created');
    else if (this.problem) this.go('held', 'created');
    else this.begin();
  }

  /** A new model (created or loaded) replaces the runs; `d` is the settings check it was made for. */
  replaceRuns(info, roundStart, d) {
    this.snapshot = null;
    this.divergence = null;
    this._trainMs = 0;
    this._runStarted = null;
    this.marks = [];
    this.runs = info.runs.map((r, k) => this.runOf(r, k, info.runs.length));
    this.emit('created', { runs: this.runs, note: this.client.note?.() ?? '', info, settings: d });
    this.roundStart = roundStart;
    this.ingest(info.snapshot);
  }

  /**
   * Loads a saved model through the Worker's 'load' request, pausing first; it replaces the runs and is paused.
   * A file the Worker refuses leaves the model in use as it was, and rejects with the Worker's error.
   * @param {Uint8Array | ArrayBuffer} bytes  the file; copied, so the caller's array stays usable
   * @param {string} kind  the file's kind for the TypeError (".hlm", ".hlab")
   * @param {(bytes: Uint8Array) => object} request  the 'load' request's payload
   * @param {(info: object) => {result: *, roundStart: number, settings?: object}} adopt  takes the file's settings
   *   from the Worker's answer; its runs then replace the current ones unless another load or a stop came first
   * @returns {Promise<*>} adopt's result
   */
  async loadSaved(bytes, kind, request, adopt) {
    if (!this.client || this.client.dead) this.whyNotReady('loadModel');
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`${this.name}: loadModel(bytes): bytes must be a Uint8Array or ArrayBuffer (a saved ${kind} model), got ${describe(bytes)}`);
    }
    bytes = bytes.slice();  // the copy goes to the Worker
    if (this.state === 'running') await this.pauseFor('pausing');
    else if (this.running) await this.client.request('pause');  // a pause already on its way: wait for it
    const before = this.state, kept = this.divergence;
    const job = ++this._job;
    if (TRANSITIONS[before].includes('loading')) this.go('loading');
    let info;
    try {
      info = await this.client.request('load', request(bytes), [bytes.buffer]);
    } catch (e) {
      if (this.state === 'loading') {
        this.go(['held', 'hidden', 'diverged'].includes(before) ? before : 'paused', 'load-refused');
        if (before === 'diverged') this.divergence = kept;
      }
      throw e;
    }
    const { result, roundStart, settings } = adopt(info);
    if (job === this._job && this.state !== 'dead') {
      this.replaceRuns(info, roundStart, settings);
      if (TRANSITIONS[this.state].includes('paused')) this.go('paused', 'loaded');
    }
    return result;
  }

  // ---------------------------------------------------------------- training

  /** Starts (or continues) training; false when it cannot now (see whyNotReady). */
  start() {
    if (this.state === 'creating') { this.go('restarting'); return true; }
    // Before the first settings (an element starts its client early, see connect): remembered.
    if (this.state === 'idle') { this.startAsked = true; return true; }
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
    this.startAsked = false;
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

  /** n steps now, while paused; the snapshot they end with is taken in. */
  async step(n) {
    this.ingest(await this.client.request('step', { n }));
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

  /** A snapshot from the session: a history point per run, and what the subclass tracks (see track). */
  ingest(snap) {
    if (!snap || snap.runs.length !== this.runs.length) return;
    this.snapshot = snap;
    this.currentStep = snap.runs[0].step;
    const seconds = this.seconds();
    const found = [];
    snap.runs.forEach((s, k) => {
      const run = this.runs[k];
      const last = run.history[run.history.length - 1];
      const point = this.pointOf(s, seconds);
      const same = last && last.step === point.step && last.evalLoss === point.evalLoss && last.headsOn === point.headsOn;
      if (!same) run.history.push(point);
      const event = this.track(run, s, k, seconds);
      if (event) found.push(event);
    });
    for (const [type, detail] of found) this.emit(type, detail);
    // What was found may change the pace (the trainer's 'learn' speed): send it.
    if (found.length && this.state === 'running') this.sendRun();
    this.emit('snapshot', { snapshot: snap, seconds });
  }
}

/** A learning rate as people write it (the trainer reports float32 values such as 0.0030000000260770321). */
export const rateText = (rate) => String(+Number(rate).toPrecision(6));
