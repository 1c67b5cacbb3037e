/**
 * <headlab-trainer>: trains a one-layer multi-head attention model on a
 * synthetic task in the browser and shows the heads specialise: live loss and
 * accuracy curves (training batch and held-out), every head's attention on a
 * fixed probe sequence, per-head metrics (entropy, mean attention distance,
 * share of weight on each relation's position) and a verdict per head. Side by
 * side, h = 1 and h = N train on the same data: the single head can only blend
 * the relations. Heads can be switched off during and after training. Training
 * runs in a Web Worker (main thread in short bursts where none can start);
 * every number comes from the HeadLab API, none is computed here.
 *
 * @attr {string} task           a task name from lab.tasks(); default two-relations
 * @attr {number} heads          h (1–64); default 2. Must divide d-model
 * @attr {number} d-model        d_model (1–128); default 16
 * @attr {number} learning-rate  Adam's learning rate (up to 10); default 0.003
 * @attr {number} batch-size     examples per step (1–4096); default 64
 * @attr {number} seed           seeds initialisation, data and probe; default 7
 * @attr {string} speed          learn | slow | normal | fast (as fast as the machine goes); default learn:
 *                                slow until the heads have specialised, so a learner sees it happen, then normal
 * @attr {number} max-steps      training pauses every this many steps; default 2000
 * @attr {boolean} compare       trains h = 1 and h = heads side by side on the same data
 * @attr {boolean} autoplay      starts training once loaded
 * @attr {boolean} hide-controls hides the settings and the file tools (start, pause, step, reset and head switches stay)
 * @attr {string} heads-view     id of a <headlab-heads> on the page: "Show in the heads view" hands the trained layer to it
 * @attr {string} theme          light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * Numbers outside these ranges are clamped and values that are not numbers fall
 * back to the default; a note under the title says which. Settings that cannot
 * train (h not dividing d_model, an unknown task) are explained, and training
 * pauses until they can.
 *
 * Methods: start(), pause(), step(n) (n from 1 to 10000, while paused), reset(), restart(),
 * setHeadEnabled(head, on, run?) (head and run from 0), saveModel() → Promise<Uint8Array>,
 * loadModel(bytes, name?) → Promise. They reject with a TypeError or RangeError naming a bad argument.
 * If the trainer Worker stops (crash, or no answer for 10 s), the element says so and offers
 * "Restart training", which starts a new Worker and trains a new model from step 0 (restart()).
 * If training diverges (the learning rate is too high: the loss or the weights blow up), training
 * stops at the last good step and the element says so, with "Lower the rate and train again"
 * (lowerRate(): a tenth of the rate, at most the default, then a new model from step 0) and
 * "Reset"; Start and Step stay off until then, while saving and the views work on the kept model.
 * Properties: running, snapshot (the latest numbers), history (the curves), computeMode ('worker' | 'main').
 *
 * @fires headlab-ready
 * @fires headlab-step         detail: { step, seconds, runs: [{ heads, step, loss, accuracy, evalLoss, evalAccuracy }] } on every update
 * @fires headlab-run          detail: { running, reason } when training starts or pauses
 * @fires headlab-specialised  detail: { heads, step, seconds, tracks: [{ relation, head }] } when every relation has its own head and accuracy ≥ 0.99
 * @fires headlab-ablate       detail: { run, head, enabled }
 * @fires headlab-export       detail: { format, filename }
 * @fires headlab-load         detail: { name, config }
 * @fires headlab-error        detail: { message }
 * @fires headlab-diverged     detail: { heads, step, learningRate, optimizer, reason: 'loss' | 'update' } when training diverges
 * @fires headlab-link         detail: { url }
 *
 * @csspart heatmap   each head's heatmap
 * @csspart chart     the loss and accuracy charts
 * @csspart export    download menus
 * @csspart copy-link the copy-link button
 */

import { HeadlabElement } from './shared/base.js';
import { el, uid, announce, onWidthChange, setText } from './shared/dom.js';
import { fmt } from '../lib/teach/format.js';
import { createHeatmap } from './shared/heatmap.js';
import { exportMenu, download, slug } from './shared/export.js';
import { SERIES } from './shared/charts.js';
import { curvesFigure, curvesToSVG, forExport } from './shared/trainer-curves.js';
import { asImage } from './shared/figure.js';
import { liveHeatmap } from './shared/trainer-heatmap.js';
import { TrainerClient } from './shared/trainer-client.js';
import { PACES, METRIC_EXAMPLES, EVAL_EXAMPLES, MAX_STEP_N } from '../lib/teach/trainer-session.js';
import { headVerdict, specialisation, SPECIALISED_ACCURACY } from '../lib/teach/trainer-verdicts.js';
import { rows, describe } from '../lib/teach/values.js';

const HEADS = [1, 2, 3, 4, 6, 8];
const DEFAULT_RATE = 0.003;
const D_MODELS = [8, 12, 16, 24, 32, 48, 64];
const RATES = [0.0003, 0.001, 0.003, 0.01, 0.03];
const BATCHES = [8, 16, 32, 64, 128, 256];
const SPEEDS = { learn: `Slow (${PACES.slow}) until the heads specialise, then ${PACES.normal}`, slow: `Slow: ${PACES.slow}`, normal: `Normal: ${PACES.normal}`, fast: 'Fastest' };
const MAX_FILE_BYTES = 64 * 2 ** 20;

const CSS = `
.settings { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 8rem), 1fr)); gap: 0.2rem 0.9rem; align-items: end; }
.settings .field { flex-direction: column; align-items: stretch; gap: 0.15rem; margin: 0.25rem 0; }
.settings .field > label { min-width: 0; }
.settings select, .settings input[type="number"] { width: 100%; }
.settings .wide { grid-column: 1 / -1; }
.dk { font-variant-numeric: tabular-nums; }
.dk.bad { color: var(--hl-error); font-weight: 600; }
.task-desc { margin: 0.1rem 0 0.3rem; }
.runbar .progress { font-variant-numeric: tabular-nums; color: var(--hl-muted); font-size: 0.9rem; }
.btn--start { min-width: 6.5rem; }
.btn--primary:hover { background: var(--hl-accent); color: var(--hl-bg); filter: brightness(1.12); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 21rem), 1fr)); gap: 0.9rem; margin: 0.5rem 0; }
.chart { min-width: 0; }
.chart h3 { margin: 0 0 0.2rem; font-size: 0.98rem; }
.chart svg { max-width: 100%; height: auto; }
.runs { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 26rem), 1fr)); gap: 0.9rem; margin-top: 0.6rem; }
.run > h3 { margin: 0 0 0.3rem; }
.maps { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 14rem), 21rem)); gap: 0.7rem 1rem; }
.head { min-width: 0; }
.head .verdict { margin: 0 0 0.2rem; font-size: 0.88rem; min-height: 2.6em; }
.verdict .tag { font-weight: 700; }
.verdict[data-kind="tracks"] .tag { color: var(--hl-ok); }
.verdict[data-kind="blends"] .tag { color: var(--hl-query); }
.verdict[data-kind="off"] .tag { color: var(--hl-error); }
.switch { margin: 0.1rem 0 0.3rem; font-size: 0.9rem; }
.summary-line { margin: 0.2rem 0 0.5rem; }
table.matrix td.num { min-width: 3.6em; }
table.metrics tbody th, table.readout tbody th { white-space: nowrap; }
table.metrics thead th { white-space: normal; min-width: 4.5em; }
.files { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; }
input[type="file"] { font: inherit; font-size: 0.88rem; max-width: 100%; }
@container (max-width: 30rem) {
  .runs, .charts { grid-template-columns: 1fr; }
}
`;

function divides(h, d) { return d % h === 0; }

function option(value, label) {
  return el('option', { value: String(value) }, label ?? String(value));
}

/** Ensures `select` has an option for `value` (attribute values outside the list stay selectable). */
function selectValue(select, value, label) {
  const v = String(value);
  if (![...select.options].some((o) => o.value === v)) select.append(option(v, label ?? v));
  select.value = v;
}

/** A learning rate as people write it (the trainer reports float32 values such as 0.0030000000260770321). */
const rateText = (rate) => String(+Number(rate).toPrecision(6));

/** The rate "Lower the rate" moves to: a tenth, and no higher than the default. */
const lowerRateFrom = (rate) => +Math.min(rate / 10, DEFAULT_RATE).toPrecision(6);

export class HeadlabTrainer extends HeadlabElement {
  static tag = 'headlab-trainer';
  static stateKey = 'train';
  static css = CSS;
  static props = {
    task: { type: 'string', default: 'two-relations', state: true },
    heads: { type: 'int', default: 2, min: 1, max: 64, state: true },
    // Kept small so a trainer, and a second one side by side, stay well inside the 384 MiB a trainer may use (createTrainer refuses larger ones).
    dModel: { attr: 'd-model', type: 'int', default: 16, min: 1, max: 128, state: true },
    learningRate: { attr: 'learning-rate', type: 'number', default: DEFAULT_RATE, min: 1e-6, max: 10, state: true },
    batchSize: { attr: 'batch-size', type: 'int', default: 64, min: 1, max: 4096, state: true },
    seed: { type: 'int', default: 7, min: 0, max: 2 ** 31 - 1, state: true },
    speed: { type: 'enum', values: ['slow', 'normal', 'fast', 'learn'], default: 'learn', state: true },
    maxSteps: { attr: 'max-steps', type: 'int', default: 2000, min: 1, max: 1e6 },
    compare: { type: 'bool', default: false, state: true },
    autoplay: { type: 'bool', default: false },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
    headsView: { attr: 'heads-view', type: 'string', default: '' },
  };

  // ---------------------------------------------------------------- public

  get running() { return Boolean(this._running); }
  /** The step where the current round of training stops. */
  get _until() { return (this._roundStart ?? 0) + this.maxSteps; }
  get snapshot() { return this._snapshot ?? null; }
  get history() { return (this._runs ?? []).map((r) => ({ heads: r.numHeads, points: r.history.slice() })); }
  get computeMode() { return this._client?.mode ?? null; }

  /** Steps per second to ask the session for: 'learn' is slow until every run has specialised, then normal. */
  pace() {
    if (this.speed !== 'learn') return PACES[this.speed];
    return this._runs?.length && this._runs.every((r) => r.specialisedAt) ? PACES.normal : PACES.slow;
  }

  start() {
    if (!this._client || this._client.dead || !this._runs?.length || this._running || this._invalid || this._diverged) return;
    const step = this._step ?? 0;
    // Training goes in rounds of max-steps: Start after a round has ended begins the next one.
    if (step >= this._roundStart + this.maxSteps) this._roundStart = step;
    this._running = true;
    this._runStarted = performance.now();
    this._client.request('options', { intervalMs: this.intervalMs() });
    this._sentUntil = this._until;
    this._client.request('run', { until: this._until, pace: this.pace() }).catch((e) => this.fail(e));
    this.setAttribute('data-running', '');
    this.renderButtons();
    this.say(`Training started${this._runs.length > 1 ? ' (both runs)' : ''}.`);
    this.emit('run', { running: true, reason: 'start' });
  }

  pause() {
    if (!this._running) return;
    this._client.request('pause').catch((e) => this.fail(e));
  }

  async step(n = 1) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_STEP_N) {
      throw new (typeof n === 'number' ? RangeError : TypeError)(`headlab-trainer: step(n): n must be a whole number from 1 to ${MAX_STEP_N}, got ${describe(n)}`);
    }
    if (this._running) throw new Error('headlab-trainer: step(n): training is running; pause() first');
    this.whyNotReady('step(n)');
    const snap = await this._client.request('step', { n });
    this.ingest(snap);
  }

  /** Throws an Error saying why the element cannot train now (not loaded, settings that cannot train, Worker stopped). */
  whyNotReady(what) {
    if (!this._client || !this._runs?.length) throw new Error(`headlab-trainer: ${what}: not ready yet (wait for headlab-ready)`);
    if (this._client.dead) throw new Error(`headlab-trainer: ${what}: the trainer Worker has stopped; call restart() first`);
    if (this._invalid) throw new Error(`headlab-trainer: ${what}: the settings cannot train: ${this.dkOut.textContent}`);
    if (this._diverged) {
      throw new RangeError(`headlab-trainer: ${what}: training diverged at step ${this._diverged.step} with learning rate ${rateText(this._diverged.learningRate)}; call lowerRate() or reset() first`);
    }
  }

  /** After training diverged: a tenth of the learning rate (at most the default), a new model from step 0, and training again. */
  lowerRate() {
    const rate = this._diverged ? this._diverged.learningRate : this.learningRate;
    this._diverged = null;
    this.errorBox.replaceChildren();
    this._resumeAfterCreate = true;
    this.learningRate = lowerRateFrom(rate);
    this._configKey = null;
    this.requestUpdate();
  }

  /** After the trainer Worker stopped: a new Worker, a new model from step 0, and training again. */
  restart() {
    this._client?.dispose();
    this._client = null;
    this._configKey = null;
    this._running = false;
    this.removeAttribute('data-running');
    this.stopClock();
    this.errorBox.replaceChildren();
    this._resumeAfterCreate = true;
    this.say('Restarting: a new trainer Worker trains a new model from step 0.');
    this.requestUpdate();
  }

  reset() {
    this._diverged = null;
    this._configKey = null;
    this._resumeAfterCreate = false;
    this._resumeWhenValid = false;
    this.stopClock();
    this._running = false;
    this.removeAttribute('data-running');
    this.requestUpdate();
  }

  async setHeadEnabled(head, enabled, run = (this._runs?.length ?? 1) - 1) {
    this.whyNotReady('setHeadEnabled');
    if (!Number.isInteger(run) || !this._runs[run]) {
      throw new RangeError(`headlab-trainer: setHeadEnabled: run must be ${this._runs.length === 1 ? '0' : `0..${this._runs.length - 1}`}, got ${typeof run === 'number' ? run : typeof run}`);
    }
    const r = this._runs[run];
    const x = r.heads[head];
    // Updates already on their way still have the old state: the switch keeps the new one until the reply.
    if (x) x.pending = Boolean(enabled);
    let snap;
    try {
      snap = await this._client.request('setHead', { run, head, enabled: Boolean(enabled) });
    } finally {
      if (x) x.pending = undefined;
    }
    const label = `${this._runs.length > 1 ? `h = ${r.numHeads}: ` : ''}head ${head + 1} ${enabled ? 'on' : 'off'}`;
    this._marks.push({ x: snap.runs[run].step, label });
    this.ingest(snap);
    const s = snap.runs[run];
    this.say(`Head ${head + 1}${this._runs.length > 1 ? ` of the h = ${r.numHeads} model` : ''} switched ${enabled ? 'on' : 'off'}: held-out accuracy ${fmt(s.eval.accuracy, 3)}, loss ${fmt(s.eval.loss, 3)}.`);
    this.emit('ablate', { run, head, enabled: Boolean(enabled) });
  }

  async saveModel(run = (this._runs?.length ?? 1) - 1) {
    if (!this._client || this._client.dead) this.whyNotReady('saveModel');
    return this._client.request('save', { run });
  }

  async loadModel(bytes, name = 'the model') {
    if (!this._client || this._client.dead) this.whyNotReady('loadModel');
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError(`headlab-trainer: loadModel(bytes): bytes must be a Uint8Array or ArrayBuffer (a saved .hlab model), got ${describe(bytes)}`);
    }
    bytes = bytes.slice();  // the copy goes to the Worker; the caller's array stays usable
    const was = this._running;
    if (was) await this._client.request('pause');
    const info = await this._client.request('load', { bytes }, [bytes.buffer]);
    const c = info.runs[0].config;
    this._extra = { optimizer: c.optimizer, causal: c.causal };
    const lr = +c.learningRate.toPrecision(6);
    const cfg = { task: c.task, heads: c.numHeads, dModel: c.dModel, learningRate: lr, batchSize: c.batchSize, seed: c.seed, compare: false };
    this._configKey = this.keyOf(cfg);
    this._loading = true;
    Object.assign(this, cfg);
    this._trainMs = 0;
    this._marks = [];
    this.layout(info.runs);
    this._roundStart = info.snapshot.runs[0].step;
    this.ingest(info.snapshot);
    this._loading = false;
    this.say(`Loaded ${name}: ${c.task}, h = ${c.numHeads}, d_model = ${c.dModel}, trained for ${info.snapshot.runs[0].step} steps; held-out accuracy ${fmt(info.snapshot.runs[0].eval.accuracy, 3)}.`);
    this.emit('load', { name, config: c });
    return c;
  }

  // ---------------------------------------------------------------- build

  build() {
    this._running = false;
    this._runs = [];
    this._marks = [];
    this._trainMs = 0;
    this._roundStart = 0;
    this._extra = { optimizer: 'adam', causal: false };
    this._reduced = typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;
    this._reduced?.addEventListener?.('change', () => {
      if (this._client && this._running) this._client.request('options', { intervalMs: this.intervalMs() });
    });

    const field = (label, control, ...extra) => {
      if (!control.id) control.id = uid('f');
      return el('div', { class: 'field' }, el('label', { for: control.id }, label), control, ...extra);
    };
    this.taskSelect = el('select', { dataset: { testid: 'trainer-task' } });
    this.taskSelect.addEventListener('change', () => { this.task = this.taskSelect.value; });
    this.taskDesc = el('p', { class: 'small muted task-desc', dataset: { testid: 'trainer-task-desc' } });
    this.headsSelect = el('select', { dataset: { testid: 'trainer-heads' } }, HEADS.map((h) => option(h)));
    this.headsSelect.addEventListener('change', () => { this.heads = Number(this.headsSelect.value); });
    this.dModelSelect = el('select', { dataset: { testid: 'trainer-dmodel' } }, D_MODELS.map((d) => option(d)));
    this.dModelSelect.addEventListener('change', () => { this.dModel = Number(this.dModelSelect.value); });
    this.dkOut = el('p', { class: 'dk small', 'aria-live': 'polite', dataset: { testid: 'trainer-dk' } });
    this.lrSelect = el('select', { dataset: { testid: 'trainer-lr' } }, RATES.map((r) => option(r)));
    this.lrSelect.addEventListener('change', () => { this.learningRate = Number(this.lrSelect.value); });
    this.batchSelect = el('select', { dataset: { testid: 'trainer-batch' } }, BATCHES.map((b) => option(b)));
    this.batchSelect.addEventListener('change', () => { this.batchSize = Number(this.batchSelect.value); });
    this.seedInput = el('input', { type: 'number', min: 0, max: 2 ** 31 - 1, step: 1, inputmode: 'numeric', dataset: { testid: 'trainer-seed' } });
    this.seedInput.addEventListener('change', () => {
      const v = this.seedInput.valueAsNumber;
      if (Number.isInteger(v) && v >= 0) this.seed = v;
      else this.seedInput.value = String(this.seed);
    });
    this.speedSelect = el('select', { dataset: { testid: 'trainer-speed' } }, Object.entries(SPEEDS).map(([v, l]) => option(v, l)));
    this.speedSelect.addEventListener('change', () => {
      this.speed = this.speedSelect.value;
      if (this._running) {
        this._sentUntil = this._until;
        this._client.request('run', { until: this._until, pace: this.pace() });
      }
    });
    this.compareBox = el('input', { type: 'checkbox', id: uid('cmp'), dataset: { testid: 'trainer-compare' } });
    this.compareBox.addEventListener('change', () => { this.compare = this.compareBox.checked; });
    this.compareText = el('span', {}, 'Side by side: h = 1 and h = 2, same data');

    this.settings = el('fieldset', { class: 'settings-box' },
      el('legend', {}, 'Task, model and training'),
      el('div', { class: 'settings' },
        el('div', { class: 'wide' }, field('Task', this.taskSelect), this.taskDesc),
        field(el('span', {}, 'Heads ', el('i', {}, 'h')), this.headsSelect),
        field(el('span', {}, el('i', {}, 'd'), el('sub', {}, 'model')), this.dModelSelect),
        field('Learning rate (Adam)', this.lrSelect),
        field('Batch size', this.batchSelect),
        field('Seed', this.seedInput),
        field('Speed (steps/s)', this.speedSelect),
        el('div', { class: 'wide' }, this.dkOut,
          el('label', { class: 'check', for: this.compareBox.id }, this.compareBox, this.compareText))));

    this.startButton = el('button', { type: 'button', class: 'btn btn--primary btn--start', dataset: { action: 'start' },
      on: { click: () => (this._running ? this.pause() : this.start()) } }, 'Start');
    this.stepButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'step' },
      on: { click: () => this.step(1).catch((e) => { if (!this._diverged) this.fail(e); }) } }, 'Step');
    this.resetButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'reset' },
      on: { click: () => this.reset() } }, 'Reset');
    this.progress = el('span', { class: 'progress', dataset: { testid: 'trainer-progress' } });
    this.runBar = el('div', { class: 'toolbar runbar' }, this.startButton, this.stepButton, this.resetButton, this.progress);

    this.saveButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'save-model' },
      on: { click: () => this.downloadModel() } }, 'Save model (.hlab)');
    this.fileInput = el('input', { type: 'file', accept: '.hlab,application/octet-stream', id: uid('file'), dataset: { testid: 'trainer-model-file' } });
    this.fileInput.addEventListener('change', () => this.loadFile());
    this.headsViewButton = el('button', { type: 'button', class: 'btn', hidden: true, dataset: { action: 'heads-view' },
      on: { click: () => this.showInHeadsView() } }, 'Show in the heads view');
    this.fileBar = el('div', { class: 'toolbar files' }, this.saveButton,
      el('span', { class: 'files' }, el('label', { for: this.fileInput.id }, 'Load a model'), this.fileInput),
      this.headsViewButton, this.copyLink());

    this.status = el('p', { class: 'status', role: 'status', dataset: { testid: 'trainer-status' } });
    this.modeNote = el('p', { class: 'small muted', dataset: { testid: 'trainer-mode' } });
    this.errorBox = el('div', { class: 'alert', role: 'alert', dataset: { testid: 'trainer-errors' } });
    this.summaryLine = el('p', { class: 'note summary-line', dataset: { testid: 'trainer-summary' } });
    this.readout = el('div', { class: 'table-scroll' });

    this.lossChart = this.chartSection('Loss', 'Cross-entropy per example, log scale', 'loss');
    this.accChart = this.chartSection('Accuracy', 'Fraction of examples with every answer right', 'accuracy');
    this.runsBox = el('div', { class: 'runs' });

    this.root.append(
      el('h2', {}, 'Train heads and watch them specialise'),
      this.status, this.settings, this.runBar, this.fileBar, this.errorBox, this.modeNote,
      this.summaryLine, this.readout,
      el('div', { class: 'charts' }, this.lossChart.section, this.accChart.section),
      this.runsBox);
    this.summaryLine.hidden = true;
    // Charts are drawn at their box's width, so their text keeps its size. (Kept in a property: an
    // observer nothing refers to can be garbage-collected.)
    const chartBox = this.lossChart.box;
    this._resizeObserver = onWidthChange(chartBox, () => this._chartWidth ?? 0, () => {
      this._chartWidth = chartBox.clientWidth;
      this.scheduleRender(true);
    }, 30, () => chartBox.clientWidth);
    // A hidden tab does not need to train: pause, and go on when it is shown again.
    this._onVisibility = () => {
      if (document.hidden && this._running) {
        this._resumeOnShow = true;
        this.pause();
      } else if (!document.hidden && this._resumeOnShow) {
        this._resumeOnShow = false;
        this.start();
      }
    };
  }

  chartSection(title, note, name) {
    const holder = { box: el('div'), fig: null };
    holder.section = el('div', { class: 'chart', part: 'chart', dataset: { testid: `trainer-chart-${name}` } },
      el('h3', {}, title), el('p', { class: 'small muted' }, note), holder.box,
      exportMenu({
        what: `${title.toLowerCase()} curves`,
        name: () => `${name}-${slug(this.task)}-${this._runs.map((r) => `h${r.numHeads}`).join('-vs-')}`,
        figure: () => holder.fig && forExport(holder.fig),
        csv: () => this.curvesCSV(),
        json: () => this._runs.length && { task: this.task, runs: this.history },
        onExport: (format, filename) => this.emit('export', { format, filename }),
      }));
    return holder;
  }

  connectedCallback() {
    super.connectedCallback();
    document.addEventListener('visibilitychange', this._onVisibility);
    clearTimeout(this._disposeTimer);
    if (this.lab && !this._client) this.requestUpdate();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    document.removeEventListener('visibilitychange', this._onVisibility);
    this.pause();
    // Removed for good (not just moved): free the Worker and the wasm memory.
    this._disposeTimer = setTimeout(() => {
      if (this.isConnected || !this._client) return;
      this._client.dispose();
      this._client = null;
      this._configKey = null;
      this._running = false;
    }, 0);
  }

  // ---------------------------------------------------------------- config

  intervalMs() {
    return this._reduced?.matches ? 500 : 50;
  }

  keyOf(c) {
    return [c.task, c.heads, c.dModel, +Number(c.learningRate).toPrecision(6), c.batchSize, c.seed, c.compare ? 1 : 0,
      this._extra.optimizer, this._extra.causal ? 1 : 0].join('|');
  }

  /** The task table comes from the training module, which this loads on the main thread. */
  async prepare(lab) {
    this._tasks = await lab.tasks();
  }

  /** The configuration the controls ask for, or the reason it cannot run. */
  desired() {
    const tasks = this._tasks;
    const task = tasks.find((t) => t.name === this.task);
    const c = { task: this.task, heads: this.heads, dModel: this.dModel, learningRate: this.learningRate, batchSize: this.batchSize,
      seed: this.seed, compare: this.compare };
    if (!task) return { c, error: `There is no task “${this.task}”. The tasks are: ${tasks.map((t) => t.name).join(', ')}.` };
    if (!divides(c.heads, c.dModel)) {
      const hs = HEADS.filter((h) => divides(h, c.dModel));
      const ds = D_MODELS.filter((d) => divides(c.heads, d));
      return { c, task, error: `h = ${c.heads} does not divide d_model = ${c.dModel}: the heads could not split it evenly (d_k would be ${fmt(c.dModel / c.heads, 2)}). ` +
        `Pick h = ${hs.join(', ')}${ds.length ? `, or d_model = ${ds.join(', ')}` : ''}.` };
    }
    const compareHeads = c.compare ? (c.heads === 1 ? 2 : c.heads) : 0;
    if (compareHeads && !divides(compareHeads, c.dModel)) return { c, task, error: `h = ${compareHeads} does not divide d_model = ${c.dModel}.` };
    return {
      c, task, key: this.keyOf(c), compareHeads,
      config: { task: c.task, numHeads: c.heads, dModel: c.dModel, seed: c.seed, learningRate: c.learningRate, batchSize: c.batchSize, ...this._extra },
    };
  }

  update() {
    // Controls mirror the properties.
    selectValue(this.headsSelect, this.heads);
    selectValue(this.dModelSelect, this.dModel);
    selectValue(this.lrSelect, this.learningRate);
    selectValue(this.batchSelect, this.batchSize);
    this.seedInput.value = String(this.seed);
    this.speedSelect.value = this.speed;
    this.compareBox.checked = this.compare;
    const other = this.heads === 1 ? 2 : this.heads;
    this.compareText.textContent = `Side by side: h = 1 and h = ${other}, same data`;
    this.settings.hidden = this.hideControls;
    this.fileBar.hidden = this.hideControls;
    if (!this.lab) return;

    const tasks = this._tasks;
    if (this.taskSelect.options.length !== tasks.length) {
      this.taskSelect.replaceChildren(...tasks.map((t) => option(t.name, t.name)));
    }
    if (tasks.some((t) => t.name === this.task)) this.taskSelect.value = this.task;
    const d = this.desired();
    this.taskDesc.textContent = d.task ? d.task.description : '';
    this._invalid = Boolean(d.error);
    if (d.error) {
      this.dkOut.classList.add('bad');
      this.dkOut.textContent = d.error;
      // The model being trained no longer matches the settings shown: pause until they can train.
      if (this._running) {
        this._resumeWhenValid = true;
        this.pause();
      }
      this.renderButtons();
      return;
    }
    this.dkOut.classList.remove('bad');
    this.dkOut.replaceChildren('d', el('sub', {}, 'k'), ' = d', el('sub', {}, 'model'), ` / h = ${d.c.dModel} / ${d.c.heads} = ${d.c.dModel / d.c.heads} per head`,
      ...(d.compareHeads ? ['; the h = 1 model has one head with d', el('sub', {}, 'k'), ` = ${d.c.dModel}`] : []));
    // A removed element gets no Worker (it may be removed before the module has loaded).
    if (!this._client && !this.isConnected) return;
    if (!this._client) {
      this._client = new TrainerClient((m) => this.onEvent(m));
      this._autoplayPending = this.autoplay;
    }
    if (this._client.dead) {
      this.renderButtons();
      return;
    }
    if (d.key !== this._configKey && !this._loading) this.recreate(d);
    else if (this._resumeWhenValid && !this._running) {
      // The settings can train again and are those of the paused model: go on.
      this._resumeWhenValid = false;
      this.start();
    } else if (this._running && this._sentUntil !== this._until) {
      // max-steps changed while training: the round ends at the new step.
      this._sentUntil = this._until;
      this._client.request('run', { until: this._until, pace: this.pace() });
    }
    this.renderButtons();
    this.updateHeadsViewButton();
  }

  async recreate(d) {
    this._configKey = d.key;
    const job = (this._job = (this._job ?? 0) + 1);
    // Settings changed while training: training goes on with the new model (also after several quick changes).
    if (this._running) {
      this.stopClock();
      this._resumeAfterCreate = true;
    }
    this._running = false;
    this.removeAttribute('data-running');
    let info;
    try {
      info = await this._client.request('create', { config: d.config, compareHeads: d.compareHeads });
    } catch (e) {
      if (job === this._job) this.fail(e);
      return;
    }
    if (job !== this._job) return;
    const resume = this._resumeAfterCreate || this._resumeWhenValid;
    this._resumeAfterCreate = false;
    this._resumeWhenValid = false;
    this.errorBox.replaceChildren();
    this.modeNote.textContent = this._client.note();
    this._trainMs = 0;
    this._marks = [];
    this._roundStart = 0;
    this.layout(info.runs);
    this.ingest(info.snapshot);
    if (resume || this._autoplayPending) {
      this._autoplayPending = false;
      this.start();
    }
  }

  // ---------------------------------------------------------------- layout

  /** Builds a section per run: heatmaps with verdicts and switches, and a metrics table. */
  layout(runsInfo) {
    this._snapshot = null;
    if (this._diverged) this.errorBox.replaceChildren();  // a new model: the old one's divergence no longer applies
    this._diverged = null;
    this.removeAttribute('data-specialised-step');
    this._runs = runsInfo.map((info, k) => {
      const { config, taskInfo, probe } = info;
      const T = taskInfo.seqLen;
      const labels = probe.tokenNames.map((t, i) => `${i}:${t}`);
      const name = runsInfo.length > 1 ? `h = ${config.numHeads}` : '';
      const run = { k, numHeads: config.numHeads, dModel: config.dModel, config, taskInfo, labels, T, history: [], specialisedAt: null, name };
      run.heads = Array.from({ length: config.numHeads }, (_, h) => {
        const hm = createHeatmap({
          title: `${name ? `${name}, h` : 'H'}ead ${h + 1}`, rowLabels: labels, colLabels: labels,
          markRow: taskInfo.queryPosition, testid: `trainer-weights-${k + 1}-${h + 1}`,
          fileName: `${slug(taskInfo.name)}-h${config.numHeads}-head-${h + 1}-weights`,
        });
        hm.element.dataset.head = String(h + 1);
        const verdict = el('p', { class: 'verdict', dataset: { testid: `trainer-verdict-${k + 1}-${h + 1}` } });
        const box = el('input', { type: 'checkbox', checked: true, id: uid('on'), dataset: { testid: `trainer-switch-${k + 1}-${h + 1}` } });
        box.addEventListener('change', () => this.setHeadEnabled(h, box.checked, k).catch((e) => this.fail(e)));
        const sw = el('label', { class: 'check switch', for: box.id }, box, `Head ${h + 1} on`);
        // Verdict and switch go under the heatmap's title, above the map.
        hm.element.querySelector('.heatmap__title').after(verdict, sw);
        const card = el('div', { class: 'head', part: 'heatmap' }, hm.element);
        return { hm, live: liveHeatmap(hm, T, T), verdict, box, card, lastVerdict: '' };
      });
      const R = taskInfo.numRelations;
      const head = el('tr', {}, el('th', { scope: 'col' }, 'Head'), el('th', { scope: 'col' }, 'Entropy'),
        el('th', { scope: 'col' }, 'Mean distance'),
        Array.from({ length: R }, (_, r) => el('th', { scope: 'col', title: taskInfo.relationNames[r] }, `Rel. ${r + 1} share`)));
      run.cells = run.heads.map((_, h) => ({
        entropy: el('td', { class: 'num' }, '—'), distance: el('td', { class: 'num' }, '—'),
        shares: Array.from({ length: R }, () => el('td', { class: 'num' }, '—')),
      }));
      const table = el('table', { class: 'matrix metrics', dataset: { testid: `trainer-metrics-${k + 1}` } },
        el('caption', {}, `Attention from “${probe.tokenNames[taskInfo.queryPosition]}”, per head, averaged over ${METRIC_EXAMPLES} held-out examples`),
        el('thead', {}, head),
        el('tbody', {}, run.cells.map((c, h) => el('tr', {}, el('th', { scope: 'row' }, `Head ${h + 1}`), c.entropy, c.distance, c.shares))));
      run.ablation = el('p', { class: 'note note--warn', hidden: true, dataset: { testid: `trainer-ablation-${k + 1}` } });
      run.line = el('p', { class: 'small', dataset: { testid: `trainer-run-line-${k + 1}` } });
      const relations = el('ul', { class: 'small muted' }, taskInfo.relationNames.map((n, r) => el('li', {}, `Relation ${r + 1}: ${n}`)));
      run.section = el('section', { class: 'run card', dataset: { run: String(k + 1), heads: String(config.numHeads) } },
        el('h3', {}, runsInfo.length > 1 ? `h = ${config.numHeads}` : `The ${config.numHeads === 1 ? 'head' : `${config.numHeads} heads`}`,
          el('span', { class: 'muted small' }, ` · d_model = ${config.dModel}, d_k = ${config.dModel / config.numHeads}`)),
        run.line, run.ablation,
        el('p', { class: 'small muted' }, `One example, the probe sequence: rows are queries, columns keys (position:token). The outlined row is the query “${probe.tokenNames[taskInfo.queryPosition]}”, where the answers are read out. ` +
          `The verdicts above the maps and the table below average over ${METRIC_EXAMPLES} held-out examples, so this one example can look sharper or more blurred than the average.`),
        el('div', { class: 'maps' }, run.heads.map((x) => x.card)),
        el('h4', {}, 'Per-head metrics'),
        el('p', { class: 'small muted' }, `Where each head looks from the query “${probe.tokenNames[taskInfo.queryPosition]}” (position ${taskInfo.queryPosition}), ` +
          `averaged over ${METRIC_EXAMPLES} held-out sequences: entropy of its weights in nats (0 = all on one key, ${fmt(Math.log(T), 2)} = even), ` +
          'mean distance from the query to the keys it reads, and the share of its weight on each relation’s position.'),
        relations,
        el('div', { class: 'table-scroll' }, table));
      return run;
    });
    this.runsBox.replaceChildren(...this._runs.map((r) => r.section));
    this._chartWidth = this.lossChart.box.clientWidth;
    this.buildReadout();
    this._runs.forEach((r) => r.heads.forEach((x) => x.hm.highlight(r.taskInfo.queryPosition)));
    this.summaryLine.hidden = true;
    this.updateHeadsViewButton();
  }

  buildReadout() {
    const cols = ['Step', 'Training loss', 'Training acc.', 'Held-out loss', 'Held-out acc.'];
    this._readoutCells = this._runs.map(() => cols.map(() => el('td', { class: 'num' }, '—')));
    const table = el('table', { class: 'matrix readout', dataset: { testid: 'trainer-readout' } },
      el('caption', {}, 'Now'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Model'), cols.map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, this._runs.map((r, k) => el('tr', { dataset: { run: String(k + 1) } },
        el('th', { scope: 'row' }, `h = ${r.numHeads}`), this._readoutCells[k]))));
    this.readout.replaceChildren(table, el('p', { class: 'small muted' },
      `Training: mean over the steps since the previous update. Held-out: ${EVAL_EXAMPLES} fixed examples the model never trains on. ` +
      'Accuracy (acc.): the fraction of examples with every answer right.'));
  }

  // ---------------------------------------------------------------- data

  onEvent(m) {
    if (m.event === 'snapshot') {
      this.ingest(m.snapshot);
    } else if (m.event === 'paused') {
      const wasRunning = this._running;
      this._running = false;
      this.stopClock();
      this.removeAttribute('data-running');
      this.renderButtons();
      if (m.reason === 'diverged') this.offerLowerRate(m.divergence);
      else if (m.reason === 'error' && m.fatal) this.offerRestart(m.message ?? 'the trainer Worker stopped');
      else if (m.reason === 'error') this.fail(new Error(m.message ?? 'unknown error'), 'Training stopped.');
      else if (this._resumeWhenValid && !this._invalid) {
        // The settings were fixed before the pause took effect.
        this._resumeWhenValid = false;
        this.start();
      } else if (this._resumeWhenValid) this.say(`Paused at step ${this._step}: the settings above cannot train. Training goes on once they can.`);
      else if (m.reason === 'limit') this.say(`Stopped at step ${this._step}, the end of a round of ${this.maxSteps} steps. Continue trains ${this.maxSteps} more.`);
      else if (wasRunning) this.say(`Paused at step ${this._step}.`);
      this.emit('run', { running: false, reason: m.reason });
    }
  }

  /** Training diverged: say where and why in plain words, and offer a lower rate or a reset. */
  offerLowerRate(d) {
    this._diverged = d;
    this._resumeWhenValid = false;
    const rate = rateText(d.learningRate);
    const lower = rateText(lowerRateFrom(d.learningRate));
    const model = this._runs.length > 1 ? ` of the h = ${d.numHeads} model` : '';
    const why = d.reason === 'loss'
      ? 'the loss blew up: it grew too large to compute'
      : 'the loss blew up: the updates kept overshooting and would have pushed the weights past ±10 000';
    const lowerButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'lower-rate' },
      on: { click: () => this.lowerRate() } }, `Lower the rate to ${lower} and train again`);
    const resetButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'reset-diverged' },
      on: { click: () => this.reset() } }, 'Reset');
    this.errorBox.replaceChildren(
      el('strong', { dataset: { testid: 'trainer-diverged' } }, `Training diverged at step ${d.step}.`),
      ` With learning rate ${rate}${d.optimizer === 'sgd' ? ' (SGD)' : ''}, ${why}. ` +
      `Each step was too big a jump. Training stopped, and the model${model} is kept as it was at step ${d.step - 1}. ` +
      `Lower the learning rate and train again, or reset to start over. `,
      el('span', { class: 'toolbar' }, lowerButton, resetButton));
    this.emit('diverged', { heads: d.numHeads, step: d.step, learningRate: +d.learningRate.toPrecision(6), optimizer: d.optimizer, reason: d.reason });
    this.renderButtons();
  }

  /** The Worker stopped: say so, and offer a new one. */
  offerRestart(message) {
    const button = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'restart' },
      on: { click: () => this.restart() } }, 'Restart training');
    const sentence = message.charAt(0).toUpperCase() + message.slice(1);
    this.errorBox.replaceChildren(el('strong', {}, 'Training stopped.'),
      ` ${sentence}. The model it was training is lost; Restart trains a new one from step 0 in a new Worker. `, button);
    this.emit('error', { message });
    this.renderButtons();
  }

  stopClock() {
    if (this._runStarted !== null && this._runStarted !== undefined) {
      this._trainMs += performance.now() - this._runStarted;
      this._runStarted = null;
    }
  }

  seconds() {
    return (this._trainMs + (this._running && this._runStarted != null ? performance.now() - this._runStarted : 0)) / 1000;
  }

  ingest(snap) {
    if (!snap || snap.runs.length !== this._runs.length) return;
    this._snapshot = snap;
    this._step = snap.runs[0].step;
    const seconds = this.seconds();
    snap.runs.forEach((s, k) => {
      const run = this._runs[k];
      const last = run.history[run.history.length - 1];
      const point = { step: s.step, trainLoss: s.train?.loss ?? null, trainAccuracy: s.train?.accuracy ?? null,
        evalLoss: s.eval.loss, evalAccuracy: s.eval.accuracy, headsOn: s.enabled.filter(Boolean).length, seconds: +seconds.toFixed(3) };
      const same = last && last.step === point.step && last.evalLoss === point.evalLoss && last.headsOn === point.headsOn;
      if (!same) run.history.push(point);
      if (!run.specialisedAt) {
        const tracks = specialisation(s);
        if (tracks) {
          run.specialisedAt = { step: s.step, seconds, tracks };
          if (run.k === this._runs.length - 1) {
            this.setAttribute('data-specialised-step', String(s.step));
          }
          const who = tracks.map((t) => `head ${t.head + 1} tracks relation ${t.relation + 1}`).join(', ');
          this.say(`${run.name ? `${run.name}: s` : 'S'}pecialised at step ${s.step} after ${fmt(seconds, 1)} s of training: ${who}.`);
          // The slow start has shown what it was for: go on at the normal pace.
          if (this.speed === 'learn' && this._running && this._runs.every((r) => r.specialisedAt)) {
            this._client.request('run', { until: this._until, pace: this.pace() }).catch((e) => this.fail(e));
          }
          this.emit('specialised', { heads: run.numHeads, step: s.step, seconds, tracks });
        }
      }
    });
    this.setAttribute('data-step', String(this._step));
    this.emit('step', {
      step: this._step, seconds,
      runs: snap.runs.map((s) => ({ heads: s.numHeads, step: s.step, loss: s.train?.loss ?? null, accuracy: s.train?.accuracy ?? null,
        evalLoss: s.eval.loss, evalAccuracy: s.eval.accuracy })),
    });
    this.scheduleRender();
  }

  scheduleRender(force = false) {
    if (force) this._forceCharts = true;
    if (this._raf) return;
    const minGap = this._reduced?.matches ? 400 : 0;
    const wait = Math.max(0, (this._lastRender ?? -Infinity) + minGap - performance.now());
    const go = () => {
      this._raf = 0;
      this._lastRender = performance.now();
      this.render();
    };
    this._raf = -1;
    if (wait > 0) setTimeout(() => { this._raf = requestAnimationFrame(go); }, wait);
    else this._raf = requestAnimationFrame(go);
  }

  // ---------------------------------------------------------------- render

  render() {
    const snap = this._snapshot;
    if (!snap) return;
    // Heatmaps follow every update: while training they are recoloured in place, and each is redrawn
    // in full (data table and export values too) about once a second, one map per frame; all of them
    // when training stops. Text, tables and curves change layout, which costs more: while training
    // they are refreshed every 250 ms (every second with reduced motion), together, in one frame.
    const now = performance.now();
    this._fullBudget = this._running ? 1 : Infinity;
    snap.runs.forEach((s, k) => this.renderMaps(this._runs[k], s, now));
    const gap = this._reduced?.matches ? 1000 : 250;
    if (this._running && !this._forceCharts && now - (this._lastSlow ?? 0) < gap) {
      clearTimeout(this._slowTimer);
      this._slowTimer = setTimeout(() => this.scheduleRender(true), gap);
      return;
    }
    this._forceCharts = false;
    this._lastSlow = now;
    snap.runs.forEach((s, k) => this.renderRun(this._runs[k], s));
    this.renderReadout(snap);
    this.renderCharts();
    this.renderButtons();
    this.renderSummary();
  }

  renderMaps(run, s, now) {
    const T = run.T;
    s.enabled.forEach((on, h) => {
      const x = run.heads[h];
      const full = this._fullBudget > 0 && (!this._running || now - (x.lastFull ?? 0) > 1000);
      if (full) { this._fullBudget -= 1; x.lastFull = now; }
      x.live.update(s.weights, h * T * T, { full });
    });
  }

  renderRun(run, s) {
    const names = run.taskInfo.relationNames;
    s.metrics.forEach((m, h) => {
      const x = run.heads[h];
      const v = headVerdict(m, names, { enabled: s.enabled[h], step: s.step });
      const key = `${v.tag}|${v.text}`;
      if (key !== x.lastVerdict) {
        x.lastVerdict = key;
        x.verdict.dataset.kind = v.kind;
        x.verdict.replaceChildren(el('span', { class: 'tag' }, v.tag), el('br'), el('span', { class: 'muted' }, v.text));
      }
      x.box.checked = x.pending ?? s.enabled[h];
      const c = run.cells[h];
      setText(c.entropy, fmt(m.entropy, 3));
      setText(c.distance, fmt(m.meanDistance, 2));
      m.relationShare.forEach((share, r) => setText(c.shares[r], fmt(share, 3)));
    });
    const off = s.enabled.map((on, h) => (on ? -1 : h)).filter((h) => h >= 0);
    run.ablation.hidden = off.length === 0;
    if (off.length && s.allOn) {
      setText(run.ablation, `Head${off.length > 1 ? 's' : ''} ${off.map((h) => h + 1).join(', ')} switched off: held-out accuracy ${fmt(s.eval.accuracy, 3)} ` +
        `(${fmt(s.allOn.accuracy, 3)} with every head on), loss ${fmt(s.eval.loss, 3)} (${fmt(s.allOn.loss, 3)}).` +
        (this._running ? ' Training goes on without it: the remaining heads can adapt.' : ''));
    }
    const rel = s.eval.relationAccuracy.map((a, r) => `relation ${r + 1} ${fmt(a, 3)}`).join(', ');
    setText(run.line, `Step ${s.step}: held-out accuracy ${fmt(s.eval.accuracy, 3)} (${rel}).` +
      (run.specialisedAt ? ` Specialised at step ${run.specialisedAt.step}.` : ''));
  }

  renderReadout(snap) {
    snap.runs.forEach((s, k) => {
      const cells = this._readoutCells[k];
      setText(cells[0], String(s.step));
      if (s.train) {
        setText(cells[1], fmt(s.train.loss, 4));
        setText(cells[2], fmt(s.train.accuracy, 3));
      }
      setText(cells[3], fmt(s.eval.loss, 4));
      setText(cells[4], fmt(s.eval.accuracy, 3));
    });
    this.progress.textContent = `Step ${this._step} · ${fmt(this.seconds(), 1)} s of training · pauses at ${Math.max(this._until, this._step)}`;
  }

  renderCharts() {
    const compare = this._runs.length > 1;
    const lines = (field, trainField) => this._runs.flatMap((r, k) => {
      const color = SERIES[k % SERIES.length].color;
      const dash = SERIES[k % SERIES.length].dash;
      const prefix = compare ? `h = ${r.numHeads} ` : '';
      return [
        { label: `${prefix}training batch`, color, dash, width: 1.4, opacity: 0.45,
          points: r.history.filter((p) => p[trainField] !== null).map((p) => [p.step, p[trainField]]) },
        { label: `${prefix}held-out`, color, dash, width: 2.6, points: r.history.map((p) => [p.step, p[field]]) },
      ];
    });
    // The step axis grows with training (a quarter ahead of the current step), up to where training pauses.
    const xMax = Math.min(Math.max(this._until, this._step ?? 0), Math.max(100, (this._step ?? 0) * 1.25));
    const marks = this._marks.slice();
    for (const r of this._runs) {
      if (r.specialisedAt) marks.push({ x: r.specialisedAt.step, label: `${compare ? `h = ${r.numHeads} ` : ''}specialised` });
    }
    const draw = (holder, fig, label) => {
      holder.fig = fig;
      holder.box.replaceChildren(asImage(curvesToSVG(fig), fig, label));
    };
    // Measured when the layout changes (onResize, layout()), never here: reading it now would force a layout.
    const width = Math.max(280, Math.min(620, this._chartWidth || 520));
    const lossSeries = lines('evalLoss', 'trainLoss');
    const lastText = (field, digits) => this._runs.map((r) => {
      const p = r.history[r.history.length - 1];
      return p ? `${compare ? `h = ${r.numHeads}: ` : ''}${fmt(p[field], digits)} at step ${p.step}` : '';
    }).join('; ');
    draw(this.lossChart, curvesFigure({ series: lossSeries, yLog: true, yMin: 1e-4, xMax, marks, width, yLabel: 'loss' }),
      `Loss curves, log scale. Held-out loss now ${lastText('evalLoss', 4)}.`);
    draw(this.accChart, curvesFigure({ series: lines('evalAccuracy', 'trainAccuracy'), yMin: 0, yMax: 1, xMax, marks, width, yLabel: 'accuracy',
      yRef: { y: SPECIALISED_ACCURACY, label: String(SPECIALISED_ACCURACY) } }),
    `Accuracy curves. Held-out accuracy now ${lastText('evalAccuracy', 3)}.`);
  }

  renderButtons() {
    const usable = Boolean(this._client && this._runs.length && !this._client.dead) && !this._invalid;
    const ready = usable && !this._diverged;
    this.startButton.textContent = this._running ? 'Pause' : (this._step ?? 0) >= this._until && this._step > 0 ? 'Continue' : 'Start';
    this.startButton.disabled = !ready;
    this.stepButton.disabled = !ready || this._running;
    this.resetButton.disabled = !this._client || this._client.dead;
    this.saveButton.disabled = !usable;
    this.headsViewButton.disabled = !usable;
  }

  renderSummary() {
    const runs = this._runs;
    const s = this._snapshot;
    if (!s || !runs.length || s.runs[0].step === 0) { this.summaryLine.hidden = true; return; }
    const parts = [];
    // Side by side, the held-out loss leads: it shows the cost of one blending head even when its
    // blend is still decodable and the accuracies look close.
    if (runs.length > 1) {
      parts.push(`Held-out loss ${runs.map((run, k) => `h = ${run.numHeads}: ${fmt(s.runs[k].eval.loss, 3)}`).join(', ')} (lower is better); ` +
        `held-out accuracy ${runs.map((run, k) => `${fmt(s.runs[k].eval.accuracy, 3)}`).join(' vs ')}.`);
    }
    runs.forEach((run, k) => {
      const r = s.runs[k];
      const names = run.taskInfo.relationNames;
      const verdicts = r.metrics.map((m, h) => headVerdict(m, names, { enabled: r.enabled[h], step: r.step }));
      const who = `With h = ${run.numHeads}`;
      const tracks = specialisation(r);
      const off = r.enabled.map((on, h) => (on ? -1 : h)).filter((h) => h >= 0);
      const blend = verdicts.findIndex((v) => v.kind === 'blends');
      const tracking = verdicts.map((v, h) => (v.kind === 'tracks' ? `head ${h + 1} tracks relation ${v.relation + 1}` : null)).filter(Boolean);
      if (tracks) {
        const first = run.specialisedAt;
        parts.push(`${who}, each relation has its own head: ${tracks.map((t) => `head ${t.head + 1} → relation ${t.relation + 1}`).join(', ')}` +
          (first ? ` (first seen at step ${first.step}, after ${fmt(first.seconds, 1)} s of training).` : '.'));
      } else if (off.length) {
        parts.push(`${who}, head${off.length > 1 ? 's' : ''} ${off.map((h) => h + 1).join(', ')} switched off: held-out accuracy ${fmt(r.eval.accuracy, 3)}` +
          (r.allOn ? ` (${fmt(r.allOn.accuracy, 3)} with every head on).` : '.'));
      } else if (blend >= 0) {
        const shares = r.metrics[blend].relationShare.map((x) => fmt(x, 2)).join(' / ');
        parts.push(`${who}, head ${blend + 1} blends: averaged over ${METRIC_EXAMPLES} held-out examples, its one softmax puts ${shares} of its weight on the relation positions.`);
      } else if (tracking.length) {
        parts.push(`${who}, ${tracking.join(', ')}; ${new Set(verdicts.filter((v) => v.kind === 'tracks').map((v) => v.relation)).size < names.length ? 'not every relation has a head of its own yet' : `held-out accuracy is ${fmt(r.eval.accuracy, 3)}, not yet ${SPECIALISED_ACCURACY}`}.`);
      } else {
        parts.push(`${who}, no head has settled on a relation yet.`);
      }
    });
    this.summaryLine.hidden = false;
    this.summaryLine.textContent = parts.join(' ');
  }

  curvesCSV() {
    if (!this._runs.length) return null;
    const lines = ['heads,step,training_loss,training_accuracy,heldout_loss,heldout_accuracy,heads_on,seconds'];
    const v = (x) => (x === null || x === undefined ? '' : String(x));
    for (const r of this._runs) {
      for (const p of r.history) {
        lines.push([r.numHeads, p.step, v(p.trainLoss), v(p.trainAccuracy), v(p.evalLoss), v(p.evalAccuracy), p.headsOn, p.seconds].join(','));
      }
    }
    return `${lines.join('\r\n')}\r\n`;
  }

  // ---------------------------------------------------------------- files

  async downloadModel() {
    try {
      const run = this._runs.length - 1;
      const bytes = await this.saveModel(run);
      const r = this._runs[run];
      const filename = `headlab-${slug(r.taskInfo.name)}-h${r.numHeads}-d${r.dModel}-seed${r.config.seed}-step${this._step}.hlab`;
      download(new Blob([bytes], { type: 'application/octet-stream' }), filename);
      this.say(`Saved the h = ${r.numHeads} model after ${this._step} steps as ${filename}.`);
      this.emit('export', { format: 'hlab', filename });
    } catch (e) {
      this.fail(e);
    }
  }

  async loadFile() {
    const file = this.fileInput.files?.[0];
    if (!file) return;
    this.errorBox.replaceChildren();
    const why = (text) => {
      this.errorBox.replaceChildren(el('strong', {}, `“${file.name}” was not loaded.`), ` ${text}`);
      this.emit('error', { message: `${file.name}: ${text}` });
    };
    if (file.size === 0) return why('The file is empty. Model files are the .hlab files that “Save model” writes.');
    if (file.size > MAX_FILE_BYTES) return why(`The file is ${(file.size / 2 ** 20).toFixed(1)} MB; a HeadLab model is at most 64 MB.`);
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      await this.loadModel(bytes, `“${file.name}”`);
    } catch (e) {
      const detail = String(e?.message ?? e).replace(/^loadTrainer: bytes: (load: )?/, '');
      if (detail.startsWith('the file is damaged')) why(`The file is damaged: it changed or was cut short after it was saved. Details: ${detail}.`);
      else why(`It is not a HeadLab model this page can read: ${detail}. Model files are the .hlab files that “Save model” writes.`);
    } finally {
      this.fileInput.value = '';
    }
  }

  headsViewTarget() {
    const id = this.headsView;
    if (!id) return null;
    const root = this.getRootNode();
    const target = root.getElementById?.(id) ?? document.getElementById(id);
    return target && target.localName === 'headlab-heads' ? target : null;
  }

  updateHeadsViewButton() {
    this.headsViewButton.hidden = !this.headsViewTarget();
  }

  async showInHeadsView() {
    const target = this.headsViewTarget();
    if (!target) return;
    try {
      const run = this._runs.length - 1;
      const m = await this._client.request('exportModel', { run });
      const r = this._runs[run];
      const s = this._snapshot.runs[run];
      const d = m.dModel;
      const verdicts = s.metrics.map((x, h) => headVerdict(x, r.taskInfo.relationNames, { enabled: true, step: s.step }));
      target.model = {
        name: `Trained on ${r.taskInfo.name}, h = ${m.numHeads}, step ${s.step}`,
        tokens: r.labels, X: rows(m.X, m.tokens.length, d), numHeads: m.numHeads,
        wQ: rows(m.wQ, d, d), wK: rows(m.wK, d, d), wV: rows(m.wV, d, d), wO: rows(m.wO, d, d),
        bQ: Array.from(m.bQ), bK: Array.from(m.bK), bV: Array.from(m.bV), bO: Array.from(m.bO),
        causal: Boolean(r.config.causal),
        headNames: verdicts.map((v) => v.tag.toLowerCase()),
      };
      target.hidden = false;
      target.scrollIntoView({ block: 'start', behavior: this._reduced?.matches ? 'auto' : 'smooth' });
      this.say(`The trained h = ${m.numHeads} layer is now shown in the heads view.`);
    } catch (e) {
      this.fail(e);
    }
  }

  // ---------------------------------------------------------------- messages

  say(text) {
    announce(this.status, text);
  }

  fail(e, title = 'HeadLab could not do that.') {
    const message = String(e?.message ?? e);
    this.errorBox.replaceChildren(el('strong', {}, title), ` ${message}`);
    this.emit('error', { message });
  }
}
