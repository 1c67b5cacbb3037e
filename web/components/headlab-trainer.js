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
 * @attr {'light' | 'dark' | 'auto'} theme          light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * Numbers outside these ranges are clamped and values that are not numbers fall
 * back to the default; a note under the title says which. Settings that cannot
 * train (h not dividing d_model, an unknown task) are explained, and training
 * pauses until they can.
 *
 * The methods reject with a TypeError or RangeError naming a bad argument; heads and runs count from 0.
 * @method {() => void} start starts training
 * @method {() => void} pause pauses training
 * @method {(n?: number) => Promise<void>} step trains n steps (1 to 10000, default 1) while paused
 * @method {() => void} reset a new model from step 0
 * @method {() => void} restart a new Worker and a new model from step 0 (after the Worker stopped)
 * @method {() => void} lowerRate after a divergence: a tenth of the rate (at most the default), then a new model from step 0
 * @method {(head: number, on: boolean, run?: number) => Promise<void>} setHeadEnabled switches a head off or on
 * @method {(run?: number) => Promise<Uint8Array>} saveModel the model as a file loadModel reads
 * @method {(bytes: Uint8Array | ArrayBuffer, name?: string) => Promise<object>} loadModel loads a file saveModel wrote
 *   (resolves to its settings)
 *
 * If the trainer Worker stops (crash, or no answer for 10 s), the element says so and offers
 * "Restart training", which starts a new Worker and trains a new model from step 0 (restart()).
 * If training diverges (the learning rate is too high: the loss or the weights blow up), training
 * stops at the last good step and the element says so, with "Lower the rate and train again"
 * (lowerRate(): a tenth of the rate, at most the default, then a new model from step 0) and
 * "Reset"; Start and Step stay off until then, while saving and the views work on the kept model.
 *
 * @prop {boolean} running        read-only: whether it is training
 * @prop {object | null} snapshot read-only: the latest numbers of every run
 * @prop {{ heads: number, points: object[] }[]} history read-only: every run's curves
 * @prop {'worker' | 'main' | null} computeMode read-only: where training runs ('main': on the page, in short bursts)
 * @prop {'worker' | 'main-thread' | null} runsIn read-only: where training runs; null until known
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ step: number, seconds: number, runs: { heads: number, step: number, loss: number | null, accuracy: number | null,
 *   evalLoss: number, evalAccuracy: number }[] }} headlab-step  on every update
 * @fires {{ running: boolean, reason: string }} headlab-run  training started or paused
 * @fires {{ heads: number, step: number, seconds: number, tracks: { relation: string, head: number }[] }} headlab-specialised
 *   every relation has a head of its own and accuracy ≥ 0.99
 * @fires {{ run: number, head: number, enabled: boolean }} headlab-ablate  a head was switched off or on
 * @fires {{ format: string, filename: string }} headlab-export  a download was made
 * @fires {{ name: string, config: object }} headlab-load  a model was loaded
 * @fires {{ message: string }} headlab-error  something failed (training, a file, the module)
 * @fires {{ heads: number, step: number, learningRate: number, optimizer: string, reason: 'loss' | 'update' }} headlab-diverged
 *   training diverged and stopped at the last good step
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart heatmap   each head's heatmap
 * @csspart chart     the loss and accuracy charts
 * @csspart export    download menus
 * @csspart copy-link the copy-link button
 */

import { TrainingElement, option, selectValue, trainingCss, withTraining, modeText } from './shared/elements/training-element.js';
import { el, uid, onWidthChange, setText } from './shared/render/dom.js';
import { createHeatmap } from './shared/render/heatmap.js';
import { download, slug } from './shared/render/export.js';
import { SERIES } from './shared/render/charts.js';
import { curvesFigure } from './shared/render/trainer-curves.js';
import { liveHeatmap } from './shared/render/trainer-heatmap.js';
import { TrainerClient } from './shared/worker/trainer-client.js';
import { PACES, METRIC_EXAMPLES, EVAL_EXAMPLES } from '../lib/teach/trainer-session.js';
import { headVerdict, SPECIALISED_ACCURACY, summaryText, ablationText, runLineText } from '../lib/teach/trainer-verdicts.js';
import { TrainerController, HEADS, D_MODELS, DEFAULT_RATE, rateText, lowerRateFrom } from '../lib/teach/trainer-controller.js';
import { headsDivide } from '../lib/teach/heads.js';
import { rows } from '../lib/teach/values.js';
import messages from '../lib/i18n/catalogues/trainer.js';

const RATES = [0.0003, 0.001, 0.003, 0.01, 0.03];
const BATCHES = [8, 16, 32, 64, 128, 256];
const SPEEDS = ['learn', 'slow', 'normal', 'fast'];
const MAX_FILE_BYTES = 64 * 2 ** 20;

const CSS = `
.dk { font-variant-numeric: tabular-nums; }
.dk.bad { color: var(--hl-error); font-weight: 600; }
.task-desc { margin: 0.1rem 0 0.3rem; }
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
input[type="file"] { font: inherit; font-size: 0.88rem; max-width: 100%; }
@container (max-width: 30rem) {
  .runs { grid-template-columns: 1fr; }
}
`;

export class HeadlabTrainer extends TrainingElement {
  static tag = 'headlab-trainer';
  static chartPrefix = 'trainer';
  static stateKey = 'train';
  static css = trainingCss + CSS;
  static messages = withTraining(messages);
  static props = {
    task: { type: 'string', default: 'two-relations', state: true },
    heads: { type: 'int', default: 2, min: 1, max: 64, state: true },
    // Kept small so a trainer, and a second one side by side, stay well inside the 384 MiB a trainer
    // may use (createTrainer refuses larger ones).
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

  /** The run logic and its one state (web/lib/teach/trainer-controller.js); the element draws what it says. */
  get ctl() {
    if (!this._ctl) {
      this._ctl = new TrainerController({
        createClient: (onEvent) => new TrainerClient(onEvent),
        tasks: [], divides: () => true,  // until prepare() has the module
        emit: (type, detail) => this.onController(type, detail),
        intervalMs: () => this.intervalMs(),
      });
    }
    return this._ctl;
  }

  get history() { return this.ctl.runs.map((r) => ({ heads: r.numHeads, points: r.history.slice() })); }
  /** The trainer client (shared/worker/trainer-client.js), null while there is none. */
  get _client() { return this.ctl.client; }

  /** Steps per second to ask the session for: 'learn' is slow until every run has specialised, then normal. */
  pace() { return this.ctl.pace(); }

  async step(n = 1) { return this.ctl.step(n); }

  /** Throws an Error saying why the element cannot train now (not loaded, settings that cannot train, Worker stopped, diverged). */
  whyNotReady(what) { this.ctl.whyNotReady(what); }

  /** After training diverged: a tenth of the learning rate (at most the default), a new model from step 0, and training again. */
  lowerRate() {
    const rate = this.ctl.lowerRate(this.learningRate);
    this.errorBox.replaceChildren();
    this._divergedShown = false;
    this.learningRate = rate;
    this.requestUpdate();
  }

  /** After the trainer Worker stopped: a new Worker, a new model from step 0, and training again. */
  restart() {
    this.ctl.restart();
    this.errorBox.replaceChildren();
    this.say(this.t('trainer.restarting'));
    this.requestUpdate();
  }

  reset() {
    this.ctl.reset();
    this.requestUpdate();
  }

  async setHeadEnabled(head, enabled, run = this.ctl.runs.length - 1) {
    const asked = this.ctl.setHeadEnabled(head, enabled, run);
    // Updates already on their way still have the old state: the switch keeps the new one until the reply.
    const x = this._views?.[run]?.heads[head];
    if (x) x.pending = Boolean(enabled);
    let s;
    try {
      s = await asked;
    } finally {
      if (x) x.pending = undefined;
    }
    const multi = this.ctl.runs.length > 1;
    this.say(this.t(`trainer.said.ablate.${enabled ? 'on' : 'off'}`, { head: head + 1, model: multi ? this.t('trainer.ofModel', { h: this.ctl.runs[run].numHeads }) : '',
      accuracy: this.fmt(s.eval.accuracy, 3), loss: this.fmt(s.eval.loss, 3) }));
    this.emit('ablate', { run, head, enabled: Boolean(enabled) });
  }

  async saveModel(run = this.ctl.runs.length - 1) {
    return this.ctl.saveModel(run);
  }

  async loadModel(bytes, name = this.t('trainer.theModel')) {
    const { config: c, settings } = await this.ctl.loadModel(bytes);
    Object.assign(this, settings);  // the controller already holds them: no new model is made
    const s = this.ctl.snapshot.runs[0];
    this.say(this.t('trainer.said.loaded', { name, task: this.taskName(c.task), h: c.numHeads, d: c.dModel, steps: s.step, accuracy: this.fmt(s.eval.accuracy, 3) }));
    this.emit('load', { name, config: c });
    return c;
  }

  // ---------------------------------------------------------------- build

  /** A task's name, description and relation names in this element's language (the module's English when the catalogue has none). */
  taskName(name) { return this.taskWords(name, 'name', name); }
  taskWords(name, what, english) {
    const key = `trainer.task.${name}.${what}`;
    return this.t.has(key) ? this.t(key) : english;
  }

  relationNames(info) { return info.relationNames.map((n, r) => this.taskWords(info.name, `rel.${r}`, n)); }

  build() {
    const t = this.t;
    // Drawn (data-drawn) once the first model's layout is in: the page reserves room until then.
    this.setAttribute('data-busy', '');
    this._views = [];  // per run: its heatmaps, switches, table cells and lines
    this._reduced = typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;
    this._reduced?.addEventListener?.('change', () => {
      if (this.ctl.running) this.ctl.client.request('options', { intervalMs: this.intervalMs() });
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
    this.lrSelect = el('select', { dataset: { testid: 'trainer-lr' } }, RATES.map((r) => option(r, this.formatNumber(r, { maximumSignificantDigits: 6 }))));
    this.lrSelect.addEventListener('change', () => { this.learningRate = Number(this.lrSelect.value); });
    this.batchSelect = el('select', { dataset: { testid: 'trainer-batch' } }, BATCHES.map((b) => option(b)));
    this.batchSelect.addEventListener('change', () => { this.batchSize = Number(this.batchSelect.value); });
    this.seedInput = el('input', { type: 'number', min: 0, max: 2 ** 31 - 1, step: 1, inputmode: 'numeric', dataset: { testid: 'trainer-seed' } });
    this.seedInput.addEventListener('change', () => {
      const v = this.seedInput.valueAsNumber;
      if (Number.isInteger(v) && v >= 0) this.seed = v;
      else this.seedInput.value = String(this.seed);
    });
    this.speedSelect = el('select', { dataset: { testid: 'trainer-speed' } },
      SPEEDS.map((v) => option(v, t(`trainer.speed.${v}`, { n: PACES[v], slow: PACES.slow, normal: PACES.normal }))));
    // While training, the controller sends the new pace (see configure).
    this.speedSelect.addEventListener('change', () => { this.speed = this.speedSelect.value; });
    this.compareBox = el('input', { type: 'checkbox', id: uid('cmp'), dataset: { testid: 'trainer-compare' } });
    this.compareBox.addEventListener('change', () => { this.compare = this.compareBox.checked; });
    this.compareText = el('span', {}, t('trainer.compare', { h: 2 }));

    this.settings = el('fieldset', { class: 'settings-box' },
      el('legend', {}, t('trainer.settings')),
      el('div', { class: 'settings' },
        el('div', { class: 'wide' }, field(t('trainer.field.task'), this.taskSelect), this.taskDesc),
        field(el('span', {}, t('trainer.field.heads'), el('i', {}, 'h')), this.headsSelect),
        field(el('span', {}, el('i', {}, 'd'), el('sub', {}, 'model')), this.dModelSelect),
        field(t('trainer.field.rate'), this.lrSelect),
        field(t('trainer.field.batch'), this.batchSelect),
        field(t('trainer.field.seed'), this.seedInput),
        field(t('trainer.field.speed'), this.speedSelect),
        el('div', { class: 'wide' }, this.dkOut,
          el('label', { class: 'check', for: this.compareBox.id }, this.compareBox, this.compareText))));

    this.startButton = el('button', { type: 'button', class: 'btn btn--primary btn--start', dataset: { action: 'start' },
      on: { click: () => (this.running ? this.pause() : this.start()) } }, t('training.start'));
    this.stepButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'step' },
      on: { click: () => this.step(1).catch((e) => { if (this.ctl.state !== 'diverged') this.fail(e); }) } }, t('trainer.step'));
    this.resetButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'reset' },
      on: { click: () => this.reset() } }, t('trainer.reset'));
    this.progress = el('span', { class: 'progress', dataset: { testid: 'trainer-progress' } });
    this.runBar = el('div', { class: 'toolbar runbar' }, this.startButton, this.stepButton, this.resetButton, this.progress);

    this.saveButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'save-model' },
      on: { click: () => this.downloadModel() } }, t('trainer.save'));
    // The file input sits behind a button: the button takes focus and keys and speaks the element's language
    // (a file input's own text is the browser's).
    this.fileInput = el('input', { type: 'file', accept: '.hlab,application/octet-stream', hidden: true, tabindex: '-1', dataset: { testid: 'trainer-model-file' } });
    this.fileInput.addEventListener('change', () => this.loadFile());
    this.loadButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'load-model' }, on: { click: () => this.fileInput.click() } }, t('trainer.load'));
    this.headsViewButton = el('button', { type: 'button', class: 'btn', hidden: true, dataset: { action: 'heads-view' },
      on: { click: () => this.showInHeadsView() } }, t('trainer.headsView'));
    this.fileBar = el('div', { class: 'toolbar files' }, this.saveButton,
      this.loadButton, this.fileInput,
      this.headsViewButton, this.copyLink());

    this.status = el('p', { class: 'status', role: 'status', dataset: { testid: 'trainer-status' } });
    this.modeNote = el('p', { class: 'small muted', dataset: { testid: 'trainer-mode' } });
    this.errorBox = el('div', { class: 'alert', role: 'alert', dataset: { testid: 'trainer-errors' } });
    this.summaryLine = el('p', { class: 'note summary-line', dataset: { testid: 'trainer-summary' } });
    this.readout = el('div', { class: 'table-scroll' });

    this.lossChart = this.chartSection(t('trainer.chart.loss'), t('trainer.chart.lossNote'), 'loss');
    this.accChart = this.chartSection(t('trainer.chart.accuracy'), t('trainer.chart.accuracyNote'), 'accuracy');
    this.runsBox = el('div', { class: 'runs' });

    this.root.append(
      el('h2', {}, t('trainer.title')),
      this.status, this.settings, this.runBar, this.fileBar, this.errorBox, this.modeNote,
      this.summaryLine, this.readout,
      el('div', { class: 'charts' }, this.lossChart.section, this.accChart.section),
      this.runsBox);
    this.summaryLine.hidden = true;
    // Charts are drawn at their box's width, so their text keeps its size. (Kept in a property: an
    // observer nothing refers to can be garbage-collected.)
    const chartBox = this.lossChart.box;
    this._resizeObserver = onWidthChange(chartBox, () => this._chartWidth ?? 0, () => {
      this._chartWidth = this._chartBoxWidth;
      this.scheduleRender(true);
    }, 30, (e) => { this._chartBoxWidth = e.contentRect.width; return this._chartBoxWidth; });
  }

  // ---------------------------------------------------------------- config

  intervalMs() {
    return this._reduced?.matches ? 500 : 50;
  }

  /** The task table comes from the training module, which this loads on the main thread; h | d_model is the module's check. */
  async prepare(lab) {
    this.ctl.tasks = await lab.tasks();
    this.ctl.divides = (h, d) => headsDivide(lab, h, d);
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
    this.compareText.textContent = this.t('trainer.compare', { h: other });
    this.settings.hidden = this.hideControls;
    this.fileBar.hidden = this.hideControls;
    if (!this.lab) return;

    const tasks = this.ctl.tasks;
    if (this.taskSelect.options.length !== tasks.length) {
      this.taskSelect.replaceChildren(...tasks.map((t) => option(t.name, this.taskName(t.name))));
    }
    if (tasks.some((t) => t.name === this.task)) this.taskSelect.value = this.task;
    // The controller makes, pauses or resumes the model; a removed element gets no Worker
    // (it may be removed before the module has loaded).
    const d = this.ctl.configure({
      task: this.task, heads: this.heads, dModel: this.dModel, learningRate: this.learningRate, batchSize: this.batchSize,
      seed: this.seed, compare: this.compare, speed: this.speed, maxSteps: this.maxSteps,
    }, { autoplay: this.autoplay, connect: this.isConnected });
    // No model is coming (a removed element, settings that cannot make one): nothing to wait for.
    if (!this.isConnected || d.error) this.removeAttribute('data-busy');
    this.taskDesc.textContent = d.task ? this.taskWords(d.task.name, 'desc', d.task.description) : '';
    if (d.error) {
      this.dkOut.classList.add('bad');
      const p = d.problem;
      this.dkOut.textContent = p
        ? this.t(p.key, { ...p.params, ...(p.params.dk !== undefined ? { dk: this.fmt(p.params.dk, 2) } : {}) })
        : d.error;
    } else {
      this.dkOut.classList.remove('bad');
      this.dkOut.replaceChildren('d', el('sub', {}, 'k'), ' = d', el('sub', {}, 'model'), this.t('trainer.dk.perHead', { d: d.c.dModel, h: d.c.heads, dk: d.c.dModel / d.c.heads }),
        ...(d.compareHeads ? [this.t('trainer.dk.one'), el('sub', {}, 'k'), ` = ${d.c.dModel}`] : []));
    }
    this.renderButtons();
    this.updateHeadsViewButton();
  }

  /** Drawn again in a new language: the runs and their state stay. */
  relocalise() {
    this._resizeObserver?.disconnect();
    super.relocalise();
    if (!this.ctl.runs.length) return;
    this.modeNote.textContent = modeText(this.t, this.ctl.client);
    this.layout(this.ctl.runs);
    this.renderButtons();
    if (this.ctl.snapshot) this.scheduleRender(true);
  }

  // ---------------------------------------------------------------- layout

  /** Builds a section per run of the controller: heatmaps with verdicts and switches, and a metrics table. */
  layout(runs) {
    const t = this.t;
    this.removeAttribute('data-specialised-step');
    this._views = runs.map(({ k, config, taskInfo, probe, labels, T, name }) => {
      const run = {};
      run.heads = Array.from({ length: config.numHeads }, (_, h) => {
        const hm = createHeatmap({
          title: name ? t('trainer.heatmapNamed', { name, head: h + 1 }) : t('trainer.heatmap', { head: h + 1 }), rowLabels: labels, colLabels: labels, t,
          markRow: taskInfo.queryPosition, testid: `trainer-weights-${k + 1}-${h + 1}`,
          fileName: `${slug(taskInfo.name)}-h${config.numHeads}-head-${h + 1}-weights`,
          onFirstDraw: () => this.mapDrawn(),
        });
        hm.element.dataset.head = String(h + 1);
        const verdict = el('p', { class: 'verdict', dataset: { testid: `trainer-verdict-${k + 1}-${h + 1}` } });
        const box = el('input', { type: 'checkbox', checked: true, id: uid('on'), dataset: { testid: `trainer-switch-${k + 1}-${h + 1}` } });
        box.addEventListener('change', () => this.setHeadEnabled(h, box.checked, k).catch((e) => this.fail(e)));
        const sw = el('label', { class: 'check switch', for: box.id }, box, t('trainer.headOn', { head: h + 1 }));
        // Verdict and switch go under the heatmap's title, above the map.
        hm.element.querySelector('.heatmap__title').after(verdict, sw);
        const card = el('div', { class: 'head', part: 'heatmap' }, hm.element);
        return { hm, live: liveHeatmap(hm), verdict, box, card, lastVerdict: '' };
      });
      const R = taskInfo.numRelations;
      const relationNames = this.relationNames(taskInfo);
      const head = el('tr', {}, el('th', { scope: 'col' }, t('trainer.table.head')), el('th', { scope: 'col' }, t('trainer.table.entropy')),
        el('th', { scope: 'col' }, t('trainer.table.distance')),
        Array.from({ length: R }, (_, r) => el('th', { scope: 'col', title: relationNames[r] }, t('trainer.table.share', { r: r + 1 }))));
      run.cells = run.heads.map(() => ({
        entropy: el('td', { class: 'num' }, '—'), distance: el('td', { class: 'num' }, '—'),
        shares: Array.from({ length: R }, () => el('td', { class: 'num' }, '—')),
      }));
      const table = el('table', { class: 'matrix metrics', dataset: { testid: `trainer-metrics-${k + 1}` } },
        el('caption', {}, t('trainer.table.caption', { token: probe.tokenNames[taskInfo.queryPosition], n: METRIC_EXAMPLES })),
        el('thead', {}, head),
        el('tbody', {}, run.cells.map((c, h) => el('tr', {}, el('th', { scope: 'row' }, t('trainer.heatmap', { head: h + 1 })), c.entropy, c.distance, c.shares))));
      run.ablation = el('p', { class: 'note note--warn', hidden: true, dataset: { testid: `trainer-ablation-${k + 1}` } });
      run.line = el('p', { class: 'small', dataset: { testid: `trainer-run-line-${k + 1}` } });
      const relations = el('ul', { class: 'small muted' }, relationNames.map((n, r) => el('li', {}, t('trainer.relation', { r: r + 1, name: n }))));
      run.section = el('section', { class: 'run card', dataset: { run: String(k + 1), heads: String(config.numHeads) } },
        el('h3', {}, runs.length > 1 ? `h = ${config.numHeads}` : config.numHeads === 1 ? t('trainer.run.theHead') : t('trainer.run.theHeads', { n: config.numHeads }),
          el('span', { class: 'muted small' }, ` · d_model = ${config.dModel}, d_k = ${config.dModel / config.numHeads}`)),
        run.line, run.ablation,
        el('p', { class: 'small muted' }, t('trainer.run.probe', { token: probe.tokenNames[taskInfo.queryPosition], n: METRIC_EXAMPLES })),
        el('div', { class: 'maps' }, run.heads.map((x) => x.card)),
        el('h4', {}, t('trainer.run.metricsTitle')),
        el('p', { class: 'small muted' }, t('trainer.run.metrics', { token: probe.tokenNames[taskInfo.queryPosition], position: taskInfo.queryPosition, n: METRIC_EXAMPLES,
          even: this.fmt(Math.log(T), 2) })),
        relations,
        el('div', { class: 'table-scroll' }, table));
      return run;
    });
    this.runsBox.replaceChildren(...this._views.map((v) => v.section));
    this._chartWidth = this._chartBoxWidth ?? 0;  // as the observer reported it: no layout read here
    this.buildReadout();
    runs.forEach((r, k) => this._views[k].heads.forEach((x) => x.hm.highlight(r.taskInfo.queryPosition)));
    this.summaryLine.hidden = true;
    this.updateHeadsViewButton();
  }

  /** Calls `fn` once every heatmap of the runs laid out (the latest layout()) has been drawn. */
  whenMapsDrawn(fn) {
    this._onMapsDrawn = fn;
    this.mapDrawn();
  }

  mapDrawn() {
    if (!this._onMapsDrawn || !this._views.every((v) => v.heads.every((x) => x.hm.drawn))) return;
    const fn = this._onMapsDrawn;
    this._onMapsDrawn = null;
    fn();
  }

  buildReadout() {
    const t = this.t;
    const cols = ['step', 'trainLoss', 'trainAcc', 'evalLoss', 'evalAcc'].map((c) => t(`trainer.readout.${c}`));
    this._readoutCells = this.ctl.runs.map(() => cols.map(() => el('td', { class: 'num' }, '—')));
    const table = el('table', { class: 'matrix readout', dataset: { testid: 'trainer-readout' } },
      el('caption', {}, t('trainer.readout.caption')),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('trainer.readout.model')), cols.map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, this.ctl.runs.map((r, k) => el('tr', { dataset: { run: String(k + 1) } },
        el('th', { scope: 'row' }, `h = ${r.numHeads}`), this._readoutCells[k]))));
    this.readout.replaceChildren(table, el('p', { class: 'small muted' }, t('trainer.readout.note', { n: EVAL_EXAMPLES })));
  }

  // ---------------------------------------------------------------- controller

  startedText() { return this.ctl.runs.length > 1 ? this.t('trainer.startedBoth') : this.t('training.started'); }

  /** What the controller reports: state changes, new runs, snapshots, and what went wrong. */
  onController(type, detail) {
    const ctl = this.ctl;
    switch (type) {
      case 'state': this.onRunState(detail); break;
      case 'created':
        // A new model: the old one's divergence no longer applies.
        if (ctl.state !== 'loading' || this._divergedShown) this.errorBox.replaceChildren();
        this._divergedShown = false;
        if (ctl.state !== 'loading') this.modeNote.textContent = modeText(this.t, ctl.client);
        this.layout(detail.runs);
        // Shown (and startable) once its heatmaps are drawn at their size: their first draw is the
        // costliest frame of the element, and it comes before training, not in its first frame.
        this.whenMapsDrawn(() => this.removeAttribute('data-busy'));
        break;
      case 'snapshot': {
        const snap = detail.snapshot;
        this.setAttribute('data-step', String(ctl.currentStep));
        this.emit('step', {
          step: ctl.currentStep, seconds: detail.seconds,
          runs: snap.runs.map((s) => ({ heads: s.numHeads, step: s.step, loss: s.train?.loss ?? null, accuracy: s.train?.accuracy ?? null,
            evalLoss: s.eval.loss, evalAccuracy: s.eval.accuracy })),
        });
        this.scheduleRender();
        break;
      }
      case 'specialised': {
        const { run, step, seconds, tracks } = detail;
        if (run.k === ctl.runs.length - 1) this.setAttribute('data-specialised-step', String(step));
        const who = tracks.map((x) => this.t('trainer.tracksWho', { head: x.head + 1, relation: x.relation + 1 })).join(', ');
        this.say(this.t(run.name ? 'trainer.said.specialisedNamed' : 'trainer.said.specialised', { name: run.name, step, seconds: this.fmt(seconds, 1), who }));
        this.emit('specialised', { heads: run.numHeads, step, seconds, tracks });
        break;
      }
      case 'diverged': this.offerLowerRate(detail.divergence); break;
      case 'dead': this.removeAttribute('data-busy'); this.offerRestart(detail.message); break;
      case 'error': this.removeAttribute('data-busy'); this.fail(detail.error, detail.title); break;
      default: break;
    }
  }

  /** Training diverged: say where and why in plain words, and offer a lower rate or a reset. */
  offerLowerRate(d) {
    this._divergedShown = true;
    const rate = rateText(d.learningRate);
    const lower = rateText(lowerRateFrom(d.learningRate));
    const t = this.t;
    const model = this.ctl.runs.length > 1 ? t('trainer.ofModel', { h: d.numHeads }) : '';
    const why = t(d.reason === 'loss' ? 'trainer.diverged.loss' : 'trainer.diverged.weights');
    const lowerButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'lower-rate' },
      on: { click: () => this.lowerRate() } }, t('trainer.diverged.lower', { rate: lower }));
    const resetButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'reset-diverged' },
      on: { click: () => this.reset() } }, t('trainer.reset'));
    this.errorBox.replaceChildren(
      el('strong', { dataset: { testid: 'trainer-diverged' } }, t('trainer.diverged.title', { step: d.step })),
      t('trainer.diverged.text', { rate, sgd: d.optimizer === 'sgd' ? ' (SGD)' : '', why, model, kept: d.step - 1 }),
      el('span', { class: 'toolbar' }, lowerButton, resetButton));
    this.emit('diverged', { heads: d.numHeads, step: d.step, learningRate: +d.learningRate.toPrecision(6), optimizer: d.optimizer, reason: d.reason });
    this.renderButtons();
  }

  /** The Worker stopped: say so, and offer a new one. */
  offerRestart(message) {
    const button = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'restart' },
      on: { click: () => this.restart() } }, this.t('trainer.restart'));
    const said = this.t.lang === 'en' ? message : this.t('trainer.workerStopped', { detail: message });
    const sentence = said.charAt(0).toUpperCase() + said.slice(1);
    this.errorBox.replaceChildren(el('strong', {}, this.t('training.stopped')), this.t('trainer.workerLost', { sentence }), button);
    this.emit('error', { message });
    this.renderButtons();
  }

  // ---------------------------------------------------------------- render

  render() {
    const snap = this.ctl.snapshot;
    if (!snap || snap.runs.length !== this._views.length) return;
    const running = this.ctl.running;
    // Heatmaps follow every update: while training they are recoloured in place, and each is redrawn
    // in full (data table and export values too) about once a second, one map per frame; all of them
    // when training stops. Text, tables and curves change layout, which costs more: while training
    // they are refreshed every 250 ms (every second with reduced motion) in three parts, each in a
    // frame of its own (the runs' text and tables; the loss chart and the readout; the accuracy chart
    // and the summary), so no frame carries the style and layout of all of them, and a map's full redraw
    // waits for a frame without a part. Stopped, all at once.
    const now = performance.now();
    // A frame that draws a part of the refresh, or drew one already (two updates can fall in one frame),
    // redraws no map in full (it only recolours them); a frame that redrew a map in full draws no part.
    const budget = !running ? Infinity : this._paced.due(this._pacedGap) || this._paced.frameTaken() ? 0 : 1;
    this._fullBudget = budget;
    snap.runs.forEach((s, k) => this.renderMaps(this._views[k], this.ctl.runs[k].T, s, now, running));
    if (budget === 1 && this._fullBudget === 0) this._paced.claimFrame();
    this._paced.update({ running, gap: this._pacedGap, parts: () => this.slowParts(), again: () => this.scheduleRender(true) });
  }

  /**
   * The three parts of a refresh of text, tables and curves; each reads the controller's state when it
   * runs. (Each run's tables in a part of its own, two runs side by side, cost 3–18 % more main-thread
   * CPU while training, from the frame more per refresh, and no shorter worst frame:
   * bench/results/long-frames-2026-12-07f.md.)
   */
  slowParts() {
    let axis = null;
    const parts = [
      () => {
        this.ctl.snapshot.runs.forEach((s, k) => this.renderRun(this._views[k], this.ctl.runs[k], s, this.ctl.running));
        this.renderButtons();
      },
      () => {
        axis = this.chartAxis();
        this.renderChart('loss', axis);
        this.renderReadout(this.ctl.snapshot);
      },
      () => {
        this.renderChart('accuracy', axis ?? this.chartAxis());
        this.renderSummary();
      },
    ];
    // A part that comes after the runs were laid out again (the learner changed the comparison) draws nothing.
    return parts.map((part) => () => {
      const snap = this.ctl.snapshot;
      if (snap && snap.runs.length === this._views.length) part();
    });
  }

  renderMaps(view, T, s, now, running) {
    s.enabled.forEach((on, h) => {
      const x = view.heads[h];
      const full = this._fullBudget > 0 && (!running || now - (x.lastFull ?? 0) > 1000);
      if (full) { this._fullBudget -= 1; x.lastFull = now; }
      x.live.update(s.weights, h * T * T, { full });
    });
  }

  renderRun(view, run, s, running) {
    const names = this.relationNames(run.taskInfo);
    s.metrics.forEach((m, h) => {
      const x = view.heads[h];
      const v = headVerdict(m, names, { enabled: s.enabled[h], step: s.step }, this.t);
      const key = `${v.tag}|${v.text}`;
      if (key !== x.lastVerdict) {
        x.lastVerdict = key;
        x.verdict.dataset.kind = v.kind;
        x.verdict.replaceChildren(el('span', { class: 'tag' }, v.tag), el('br'), el('span', { class: 'muted' }, v.text));
      }
      x.box.checked = x.pending ?? s.enabled[h];
      const c = view.cells[h];
      setText(c.entropy, this.fmt(m.entropy, 3));
      setText(c.distance, this.fmt(m.meanDistance, 2));
      m.relationShare.forEach((share, r) => setText(c.shares[r], this.fmt(share, 3)));
    });
    const ablation = ablationText(s, running, this.t);
    view.ablation.hidden = !s.enabled.includes(false);
    if (ablation) setText(view.ablation, ablation);
    setText(view.line, runLineText(s, run.specialisedAt, this.t));
  }

  renderReadout(snap) {
    snap.runs.forEach((s, k) => {
      const cells = this._readoutCells[k];
      setText(cells[0], String(s.step));
      if (s.train) {
        setText(cells[1], this.fmt(s.train.loss, 4));
        setText(cells[2], this.fmt(s.train.accuracy, 3));
      }
      setText(cells[3], this.fmt(s.eval.loss, 4));
      setText(cells[4], this.fmt(s.eval.accuracy, 3));
    });
    const { currentStep: step, until } = this.ctl;
    this.progress.textContent = this.t('trainer.progress', { step, seconds: this.fmt(this.ctl.seconds(), 1), until: Math.max(until, step) });
  }

  /** What both charts share: the step axis's end, the marks and the width. */
  chartAxis() {
    const { runs, currentStep: step, until } = this.ctl;
    const t = this.t;
    // The step axis grows with training (a quarter ahead of the current step), up to where training pauses.
    const xMax = Math.min(Math.max(until, step), Math.max(100, step * 1.25));
    const marks = this.ctl.marks.map((m) => {
      if (m.head === undefined) return m;
      const label = t(`trainer.curve.mark.${m.enabled ? 'on' : 'off'}`, { head: m.head + 1 });
      return { x: m.x, label: m.numHeads ? t('trainer.curve.markNamed', { h: m.numHeads, label }) : label };
    });
    for (const r of runs) {
      if (r.specialisedAt) marks.push({ x: r.specialisedAt.step, label: this.curveName(r, t('trainer.curve.specialised')) });
    }
    // Measured when the layout changes (onResize, layout()), never here: reading it now would force a layout.
    const width = Math.max(280, Math.min(620, this._chartWidth || 520));
    return { xMax, marks, width };
  }

  /** A series' label, with the run's h when two runs are compared. */
  curveName(r, label) {
    return this.ctl.runs.length > 1 ? this.t('trainer.curve.named', { h: r.numHeads, label }) : label;
  }

  /** Draws one chart ('loss' or 'accuracy') over `axis` (chartAxis()). */
  renderChart(which, { xMax, marks, width }) {
    const { runs } = this.ctl;
    const compare = runs.length > 1;
    const t = this.t;
    const lines = (field, trainField) => runs.flatMap((r, k) => {
      const color = SERIES[k % SERIES.length].color;
      const dash = SERIES[k % SERIES.length].dash;
      return [
        { label: this.curveName(r, t('trainer.curve.batch')), color, dash, width: 1.4, opacity: 0.45,
          points: r.history.filter((p) => p[trainField] !== null).map((p) => [p.step, p[trainField]]) },
        { label: this.curveName(r, t('trainer.curve.heldOut')), color, dash, width: 2.6, points: r.history.map((p) => [p.step, p[field]]) },
      ];
    });
    const lastText = (field, digits) => runs.map((r) => {
      const p = r.history[r.history.length - 1];
      if (!p) return '';
      const value = this.fmt(p[field], digits);
      return compare ? t('trainer.curve.nowNamed', { h: r.numHeads, value, step: p.step }) : t('trainer.curve.now', { value, step: p.step });
    }).join('; ');
    const tick = (text) => text.replace('.', this.fmt(0.5, 1).charAt(1));
    const xLabel = t('training.step');
    if (which === 'loss') {
      this.drawChart(this.lossChart, curvesFigure({ series: lines('evalLoss', 'trainLoss'), yLog: true, yMin: 1e-4, xMax, marks, width, xLabel,
        yLabel: t('trainer.curve.loss'), tick }),
      t('trainer.curve.lossLabel', { now: lastText('evalLoss', 4) }));
    } else {
      this.drawChart(this.accChart, curvesFigure({ series: lines('evalAccuracy', 'trainAccuracy'), yMin: 0, yMax: 1, xMax, marks, width, xLabel,
        yLabel: t('trainer.curve.accuracy'), tick, yRef: { y: SPECIALISED_ACCURACY, label: tick(String(SPECIALISED_ACCURACY)) } }),
      t('trainer.curve.accuracyLabel', { now: lastText('evalAccuracy', 3) }));
    }
  }

  renderButtons() {
    const c = this.ctl.controls();
    this.startButton.textContent = this.startText(c);
    this.startButton.disabled = !c.canStart;
    this.stepButton.disabled = !c.canStep;
    this.resetButton.disabled = !c.canReset;
    this.saveButton.disabled = !c.canSave;
    this.headsViewButton.disabled = !c.canSave;
  }

  renderSummary() {
    const runs = this.ctl.runs.map((r) => ({ ...r, taskInfo: { ...r.taskInfo, relationNames: this.relationNames(r.taskInfo) } }));
    const text = summaryText(runs, this.ctl.snapshot, this.t);
    this.summaryLine.hidden = !text;
    if (text) this.summaryLine.textContent = text;
  }

  curvesFileName(name) {
    return `${name}-${slug(this.task)}-${this.ctl.runs.map((r) => `h${r.numHeads}`).join('-vs-')}`;
  }

  curvesCSV() {
    if (!this.ctl.runs.length) return null;
    const lines = ['heads,step,training_loss,training_accuracy,heldout_loss,heldout_accuracy,heads_on,seconds'];
    const v = (x) => (x === null || x === undefined ? '' : String(x));
    for (const r of this.ctl.runs) {
      for (const p of r.history) {
        lines.push([r.numHeads, p.step, v(p.trainLoss), v(p.trainAccuracy), v(p.evalLoss), v(p.evalAccuracy), p.headsOn, p.seconds].join(','));
      }
    }
    return `${lines.join('\r\n')}\r\n`;
  }

  // ---------------------------------------------------------------- files

  async downloadModel() {
    try {
      const run = this.ctl.runs.length - 1;
      const bytes = await this.saveModel(run);
      const r = this.ctl.runs[run];
      const filename = `headlab-${slug(r.taskInfo.name)}-h${r.numHeads}-d${r.dModel}-seed${r.config.seed}-step${this.ctl.currentStep}.hlab`;
      download(new Blob([bytes], { type: 'application/octet-stream' }), filename);
      this.say(this.t('trainer.said.saved', { h: r.numHeads, steps: this.ctl.currentStep, filename }));
      this.emit('export', { format: 'hlab', filename });
    } catch (e) {
      this.fail(e);
    }
  }

  async loadFile() {
    const file = this.fileInput.files?.[0];
    if (!file) return;
    this.errorBox.replaceChildren();
    const t = this.t;
    const why = (text) => {
      this.errorBox.replaceChildren(el('strong', {}, t('trainer.file.notLoaded', { name: file.name })), ` ${text}`);
      this.emit('error', { message: `${file.name}: ${text}` });
    };
    if (file.size === 0) return why(t('trainer.file.empty'));
    if (file.size > MAX_FILE_BYTES) return why(t('trainer.file.tooLarge', { size: this.fmt(file.size / 2 ** 20, 1) }));
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      await this.loadModel(bytes, t('trainer.quoted', { name: file.name }));
    } catch (e) {
      const detail = String(e?.message ?? e).replace(/^loadTrainer: bytes: (load: )?/, '');
      if (detail.startsWith('the file is damaged')) why(t('trainer.file.damaged', { detail }));
      else why(t('trainer.file.notModel', { detail }));
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
      const run = this.ctl.runs.length - 1;
      const m = await this.ctl.exportModel(run);
      const r = this.ctl.runs[run];
      const s = this.ctl.snapshot.runs[run];
      const d = m.dModel;
      const verdicts = s.metrics.map((x) => headVerdict(x, this.relationNames(r.taskInfo), { enabled: true, step: s.step }, this.t));
      target.model = {
        name: this.t('trainer.headsViewName', { task: this.taskName(r.taskInfo.name), h: m.numHeads, step: s.step }),
        tokens: r.labels, X: rows(m.X, m.tokens.length, d), numHeads: m.numHeads,
        wQ: rows(m.wQ, d, d), wK: rows(m.wK, d, d), wV: rows(m.wV, d, d), wO: rows(m.wO, d, d),
        bQ: Array.from(m.bQ), bK: Array.from(m.bK), bV: Array.from(m.bV), bO: Array.from(m.bO),
        causal: Boolean(r.config.causal),
        headNames: verdicts.map((v) => v.tag.toLowerCase()),
      };
      target.hidden = false;
      target.scrollIntoView({ block: 'start', behavior: this._reduced?.matches ? 'auto' : 'smooth' });
      this.say(this.t('trainer.said.headsView', { h: m.numHeads }));
    } catch (e) {
      this.fail(e);
    }
  }
}
