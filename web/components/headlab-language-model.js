/**
 * <headlab-language-model>: trains a small transformer language model in the
 * browser on a next-token task and shows its heads take on jobs nobody named:
 * the loss curve with the phase change marked, a layers × heads grid (each head's
 * pattern on an example, its label and main score, live), one head's full
 * heatmap, every head on a sequence the learner types, heads switched off, one
 * layer against two side by side, and "continue this text". Training runs in a
 * Web Worker (on the page in short bursts where none can start); every number
 * comes from the HeadLab API, none is computed here. The run logic is the shared
 * training controller's (web/lib/teach/lm-controller.js); the grid, the
 * generation panel and (english task) the relations view, each relation's true
 * arc beside the attention of the head that tracks it, are in ./language-model/.
 *
 * @attr {string} task        induction | cricket | english; default induction (english: with the relations view)
 * @attr {number} layers      1–4; default the task's (2; english 3)
 * @attr {number} heads       heads per layer, 1, 2, 4 or 8; default the task's (4)
 * @attr {number} seed        seeds initialisation and data; default: the task's suggested seed
 * @attr {string} speed       slow | normal | fast (as fast as the machine goes); default fast
 * @attr {number} max-steps   training pauses every this many steps; default the task's
 * @attr {boolean} compare    also trains (or loads) a one-layer model on the same task, side by side
 * @attr {boolean} pretrained loads the trained model shipped with HeadLab (models/<task>.hlm) at once
 * @attr {boolean} autoplay   starts training once loaded
 * @attr {boolean} compact    hides the explanations
 * @attr {'light' | 'dark' | 'auto'} theme       light | dark | auto
 *
 * Layers, heads and runs count from 0 (run 1: the one-layer model of `compare`).
 * @method {() => void} start starts training
 * @method {() => void} pause pauses training
 * @method {(n?: number) => Promise<void>} step trains n steps while paused (default 10)
 * @method {() => void} reset a new model from step 0
 * @method {(layer: number, head: number, on: boolean, run?: number) => Promise<void>} setHeadEnabled switches a head off or on
 * @method {(layer: number, head: number) => void} openHead shows one head's full heatmap below the grid
 * @method {(text: string) => Promise<void>} showText draws every head on `text`; rejects with the API's RangeError
 *   when a word is unknown
 * @method {(options?: { prompt?: string, maxTokens?: number, temperature?: number }) =>
 *   Promise<{ text: string, tokens: string[], newTokens: string[] }>} generate
 *   continues a prompt
 * @method {(run?: number) => Promise<Uint8Array>} saveModel the model as an .hlm file
 * @method {(bytes: Uint8Array | ArrayBuffer, name?: string | null) =>
 *   Promise<{ task: string, layers: number, heads: number, seed: number, step: number }>} loadModel
 *   loads a file saveModel wrote, paused; rejects with the API's RangeError for a file it cannot read
 * @prop {boolean} running        read-only: whether it is training
 * @prop {object | null} snapshot read-only: the latest numbers of every run
 * @prop {{ layers: number, points: object[] }[]} history read-only: every run's curves
 * @prop {{ step: number, seconds: number } | null} phaseChange read-only: when the phase change happened; null before
 * @prop {'worker' | 'main' | null} computeMode read-only: where training runs ('main': on the page, in short bursts)
 * @prop {'worker' | 'main-thread' | null} runsIn read-only: where training runs; null until known
 * @prop {number | null} threads  read-only: how many threads a training step uses (2 or more only in the Worker of a
 *   cross-origin isolated page)
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ step: number, seconds: number, runs: { layers: number, step: number, loss: number | null, evalLoss: number,
 *   accuracy: number }[] }} headlab-step  on every update
 * @fires {{ running: boolean, reason: string }} headlab-run  training started or paused
 * @fires {{ layers: number, step: number, seconds: number, accuracy: number }} headlab-phase-change  the induction heads formed
 * @fires {{ run: number, layer: number, head: number, enabled: boolean }} headlab-ablate  a head was switched off or on
 * @fires {{ prompt: string, text: string }} headlab-generate  a continuation was generated
 * @fires {{ format: string, filename: string }} headlab-export  a download was made
 * @fires {{ files: string[] }} headlab-load  a model was loaded
 * @fires {{ message: string }} headlab-error  something failed (training, a file, the module)
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart heads     the layers × heads grid
 * @csspart heatmap   the opened head's heatmap
 * @csspart chart     the loss and accuracy charts
 * @csspart export    download menus
 * @csspart copy-link the copy-link button
 */

import { TrainingElement, option, selectValue, trainingCss, withTraining, modeText } from './shared/elements/training-element.js';
import { el, uid, onWidthChange, setText } from './shared/render/dom.js';
import { exportMenu, download } from './shared/render/export.js';
import { TREND_WINDOW } from '../lib/teach/head-trend.js';
import { TrainerClient } from './shared/worker/trainer-client.js';
import { LmSession, LM_PACES, LM_SCORE_EXAMPLES } from '../lib/teach/lm-session.js';
import { LmController, PHASE_ACCURACY } from '../lib/teach/lm-controller.js';
import { HeadGrid, HeadDetail, GRID_CSS, scoresCSV } from './language-model/head-grid.js';
import { GenerationPanel, GENERATION_CSS, field } from './language-model/generation-panel.js';
import { TASK_TEXT, NOT_EMBEDDED, introParagraphs, shippedModel, clipText } from './language-model/task-text.js';
import { ComparePanel } from './language-model/compare-panel.js';
import { AblationPanel } from './language-model/ablation-panel.js';
import { TextPanel } from './language-model/text-panel.js';
import { RelationsView, RELATIONS_CSS } from './language-model/relations-view.js';
import { lmCurves, phaseNote, curvesCSV } from './language-model/curves.js';
import { loadModelButton, fileProblem, MAX_MODEL_BYTES } from './language-model/model-file.js';
import messages from '../lib/i18n/catalogues/language-model.js';

export { PHASE_ACCURACY };
const HEADS = [1, 2, 4, 8];
const LAYERS = [1, 2, 3, 4];

const CSS = `
.settings { grid-template-columns: repeat(auto-fill, minmax(min(100%, 8.5rem), 1fr)); }
.settings .wide select { width: min(100%, 24rem); }
.phase-note { margin: 0.2rem 0 0.6rem; }
.phase-note strong { color: var(--hl-ok); }
.textbox { display: flex; flex-wrap: wrap; gap: 0.4rem 0.6rem; align-items: center; }
.textbox input[type="text"] { flex: 1 1 16rem; min-width: 0; }
.textbox .field { flex: 1 1 100%; }
.textbox .field > label { min-width: 0; }
.text-error { color: var(--hl-error); font-weight: 600; margin: 0.2rem 0; overflow-wrap: anywhere; }
.text-error:empty { display: none; }
.text-error .known { display: block; color: var(--hl-muted); font-weight: 400; font-size: 0.875rem; }
.compare table td.num { min-width: 4em; }
section.part { margin-top: 0.8rem; }
`;

export class HeadlabLanguageModel extends TrainingElement {
  static tag = 'headlab-language-model';
  static chartPrefix = 'lm';
  static stateKey = 'lm';
  static css = trainingCss + CSS + GRID_CSS + GENERATION_CSS + RELATIONS_CSS;
  static messages = withTraining(messages);
  static props = {
    task: { type: 'enum', values: ['induction', 'cricket', 'english'], default: 'induction', state: true },
    layers: { type: 'int', default: null, min: 1, max: 4, state: true },  // null: the task's defaults.numLayers
    heads: { type: 'int', default: 4, min: 1, max: 8, state: true },
    seed: { type: 'int', default: null, min: 0, max: 2 ** 31 - 1, state: true },  // null: the task's defaults.seed
    speed: { type: 'enum', values: ['slow', 'normal', 'fast'], default: 'fast', state: true },
    maxSteps: { attr: 'max-steps', type: 'int', default: 0, min: 0, max: 1e6 },
    compare: { type: 'bool', default: false, state: true },
    pretrained: { type: 'bool', default: false, state: true },
    autoplay: { type: 'bool', default: false },
  };

  // ---------------------------------------------------------------- public

  /** The run logic and its one state (web/lib/teach/lm-controller.js); the element draws what it says. */
  get ctl() {
    this._ctl ??= new LmController({
      createClient: (onEvent) => new TrainerClient(onEvent, {
        workerFile: 'headlab-lm-worker.js', workerName: 'headlab-lm', openSession: (lab, emit, o) => LmSession.open(lab, emit, o),
      }),
      fetchModel: shippedModel,
      emit: (type, detail) => this.onController(type, detail),
      intervalMs: () => (this._reduced?.matches ? 500 : 250),
    });
    return this._ctl;
  }

  get history() { return this.ctl.runs.map((r) => ({ layers: r.layers, points: r.history.slice() })); }
  get phaseChange() { return this.ctl.runs[0]?.phase ?? null; }
  /**
   * Threads each training step of the (first) model is split over: more than 1 in the Worker of a
   * cross-origin isolated page; null before a model exists.
   */
  get threads() { return this.ctl.runs[0]?.threads ?? null; }

  /** Steps per round: max-steps, else the task's own training length. */
  get roundSteps() { return this.maxSteps || this._task?.defaults?.steps || 3000; }

  async step(n = 10) { return this.ctl.step(n); }

  reset() {
    this.ctl.reset();
    this.requestUpdate();
  }

  whyNotReady(what) { this.ctl.whyNotReady(what); }

  async setHeadEnabled(layer, head, enabled, run = 0) {
    const s = await this.ctl.setHeadEnabled(layer, head, enabled, run);
    this.say(this.t(`lm.said.ablate.${enabled ? 'on' : 'off'}`, { layer: layer + 1, head: head + 1, accuracy: this.fmt(s.eval.accuracy, 3), loss: this.fmt(s.eval.loss, 3) }));
    this.emit('ablate', { run, layer, head, enabled: Boolean(enabled) });
  }

  /** Shows one head's full heatmap below the grid. */
  openHead(layer, head) {
    const r = this.ctl.runs[0];
    if (!r || layer < 0 || layer >= r.layers || head < 0 || head >= r.heads) return;
    this._userOpened = true;
    this._open = { layer, head };
    this.grid.select(this._open);
    this.renderDetail(true);
    this.say(this.t('lm.said.open', { layer: layer + 1, head: head + 1 }));
  }

  /** Shows one head of the one-layer model (side by side) below its grid. */
  openOneLayerHead(layer, head) {
    const r = this.ctl.runs[1];
    if (!r || layer < 0 || layer >= r.layers || head < 0 || head >= r.heads) return;
    this.comparePanel.openHead(layer, head, this.snapshot?.runs[1], this.running);
    this.say(this.t('lm.said.openOne', { layer: layer + 1, head: head + 1 }));
  }

  /** Draws every head on `text`; rejects with the API's RangeError when a word is unknown (the element says so too). */
  async showText(text) {
    this.whyNotReady('showText');
    const value = String(text ?? '').trim();
    this.textPanel.input.value = value;
    try {
      await this.ctl.showText(value);
      this._example = value;
      this.textPanel.accepted();
      this.renderDetail(true);
      this.relView.show(value, this.ctl.currentStep);
    } catch (e) {
      this.textPanel.refused(String(e?.message ?? e), this._task.vocabulary);
      this.relView.clear();
      throw e;
    }
  }

  async generate({
    prompt = this.gen.promptInput.value, maxTokens = Number(this.gen.lengthSelect.value), temperature = Number(this.gen.tempInput.value),
  } = {}) {
    const result = await this.ctl.generate({ prompt: String(prompt).trim(), maxTokens, temperature });
    this.emit('generate', { prompt, text: result.text });
    return result;
  }

  async saveModel(run = 0) { return this.ctl.saveModel(run); }

  /** Loads a model saveModel() wrote, paused; the settings (task, layers, heads, seed) follow the file. */
  async loadModel(bytes, name = null) {
    const examples = Object.fromEntries(Object.entries(TASK_TEXT)
      .map(([task, t]) => [task, task === this.task && this._example ? this._example : t.example]));
    const m = await this.ctl.loadModel(bytes, examples);
    Object.assign(this, { pretrained: false, compare: false, task: m.task, layers: m.layers, heads: m.heads, seed: m.seed });
    const t = this.t;
    this.say(t(name ? 'lm.said.loaded' : 'lm.said.loadedBytes', { name, layers: t.plural('lm.layers', m.layers), heads: t.plural('lm.heads', m.heads), steps: m.step }));
    this.emit('load', { files: name ? [name] : [] });
    return m;
  }

  // ---------------------------------------------------------------- build

  build() {
    const t = this.t;
    this.setAttribute('data-busy', '');
    this._reduced = typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;
    this.heading = el('h2', {}, t('lm.title.induction'));
    this._introTask = null;
    this.status = el('p', { class: 'status', role: 'status', dataset: { testid: 'lm-status' } });
    this.intro = el('div', { class: 'explain' });

    const select = (testid, options, change) => {
      const s = el('select', { dataset: { testid } }, options);
      s.addEventListener('change', () => change(s.value));
      return s;
    };
    // english trains for minutes: picking it loads the shipped model, with the task's own layers.
    this.taskSelect = select('lm-task', ['induction', 'cricket', 'english'].map((k) => option(k, t(`lm.task.${k}`))),
      (v) => { this.pretrained = v === 'english'; if (this.pretrained) this.layers = null; this.task = v; });
    this.layersSelect = select('lm-layers', LAYERS.map((n) => option(n)), (v) => { this.pretrained = false; this.layers = Number(v); });
    this.headsSelect = select('lm-heads', HEADS.map((n) => option(n)), (v) => { this.pretrained = false; this.heads = Number(v); });
    // While training, the controller sends the new pace (see configure).
    this.speedSelect = select('lm-speed', Object.entries(LM_PACES).map(([v, n]) => option(v, t(`lm.speed.${v}`, { n }))), (v) => { this.speed = v; });
    this.seedInput = el('input', { type: 'number', min: 0, step: 1, inputmode: 'numeric', dataset: { testid: 'lm-seed' } });
    this.seedInput.addEventListener('change', () => {
      const v = this.seedInput.valueAsNumber;
      if (Number.isInteger(v) && v >= 0) { this.pretrained = false; this.seed = v; } else this.seedInput.value = String(this.runSeed);
    });
    this.compareBox = el('input', { type: 'checkbox', id: uid('cmp'), dataset: { testid: 'lm-compare' } });
    this.compareBox.addEventListener('change', () => { this.compare = this.compareBox.checked; });
    this.settings = el('fieldset', {},
      el('legend', {}, t('lm.settings')),
      el('div', { class: 'settings' },
        el('div', { class: 'wide' }, field(t('lm.field.task'), this.taskSelect)),
        field(t('lm.field.layers'), this.layersSelect), field(t('lm.field.heads'), this.headsSelect),
        field(t('lm.field.speed'), this.speedSelect), field(t('lm.field.seed'), this.seedInput),
        this.compareField = el('div', { class: 'wide' }, el('label', { class: 'check', for: this.compareBox.id }, this.compareBox, t('lm.field.compare')))));

    const button = (action, label, click, primary = '') => el('button', { type: 'button', class: `btn${primary}`, dataset: { action }, on: { click } }, label);
    this.startButton = button('start', t('training.start'), () => (this.running ? this.pause() : this.start()), ' btn--primary btn--start');
    this.stepButton = button('step', t('lm.tenSteps'), () => this.step(10).catch((e) => this.fail(e)));
    this.resetButton = button('reset', t('lm.reset'), () => { this.pretrained = false; this.reset(); });
    this.pretrainedButton = button('pretrained', t('lm.loadTrained'), () => { if (this.pretrained) this.reset(); else this.pretrained = true; });
    this.progress = el('span', { class: 'progress', dataset: { testid: 'lm-progress' } });
    this.runBar = el('div', { class: 'toolbar runbar' }, this.startButton, this.stepButton, this.resetButton, this.pretrainedButton, this.progress);
    this.errorBox = el('div', { class: 'alert', role: 'alert', dataset: { testid: 'lm-errors' } });
    this.modeNote = el('p', { class: 'small muted', dataset: { testid: 'lm-mode' } });

    // Curves
    this.lossChart = this.chartSection(t('lm.chart.loss'), t('lm.chart.lossNote'), 'loss');
    this.accChart = this.chartSection(t('lm.chart.accuracy'), '', 'accuracy');
    this.phaseNote = el('p', { class: 'small phase-note', dataset: { testid: 'lm-phase' } });
    this._phaseSaid = null;

    // Heads grid
    this.grid = new HeadGrid({ onOpen: (layer, head) => this.openHead(layer, head), t });
    this.gridExport = exportMenu({
      what: t('lm.headScores'), t, name: () => `head-scores-${this.task}-${this.ctl.runs[0]?.layers ?? 0}-layers-step-${this.ctl.currentStep}`,
      csv: () => this.snapshot && scoresCSV(this.snapshot.runs[0]),
      json: () => this.snapshot && { task: this.task, step: this.ctl.currentStep, heads: this.snapshot.runs[0].scores },
      onExport: (format, filename) => this.emit('export', { format, filename }),
    });
    this.gridNote = el('p', { class: 'small muted' });

    // The opened head
    this.detail = new HeadDetail({ t, fileName: (layer, head) => `${this.task}-layer-${layer + 1}-head-${head + 1}`,
      onExport: (format, filename) => this.emit('export', { format, filename }) });

    this.textPanel = new TextPanel({ button, t, onShow: (text) => this.showText(text).catch(() => {}) });
    this.relView = new RelationsView({ t, relations: (text) => this.ctl.relations(text), vocabulary: () => this._task.vocabulary,
      generate: (o) => this.ctl.generate(o), showText: (text) => this.showText(text) });
    this.ablation = new AblationPanel({ t, setHead: (l, h, on) => this.setHeadEnabled(l, h, on).catch((e) => this.fail(e)),
      settled: () => { if (this.snapshot) this.renderAblation(); } });
    // One layer against two: a new pair trains at once.
    this.comparePanel = new ComparePanel({
      button, t, onOpen: (layer, head) => this.openOneLayerHead(layer, head), fileName: (head) => `${this.task}-1-layer-model-head-${head + 1}`,
      onExport: (format, filename) => this.emit('export', { format, filename }),
      onCompare: () => {
        this.ctl.reset();
        this.ctl.start();
        this.pretrained = false;
        this.compare = true;
      },
    });

    // Continue this text
    this.gen = new GenerationPanel({ generate: (o) => this.generate(o), vocabulary: () => this._task.vocabulary, t });

    this.saveButton = button('save-model', t('lm.saveModel'), () => this.downloadModel());
    const load = loadModelButton({ button, t, onFile: (file) => this.loadFile(file) });
    this.loadButton = load.button;
    this.fileBar = el('div', { class: 'toolbar files' }, this.saveButton, this.loadButton, load.input, this.copyLink());

    this.root.append(
      this.heading, this.status, this.intro, this.settings, this.runBar, this.errorBox, this.modeNote,
      el('div', { class: 'charts' }, this.lossChart.section, this.accChart.section),
      this.phaseNote,
      el('section', { class: 'part', dataset: { testid: 'lm-heads-part' } }, el('h3', {}, t('lm.headsTitle')), this.gridNote, this.grid.element, this.gridExport),
      this.detail.element, this.textPanel.element, this.relView.element, this.ablation.element, this.comparePanel.element, this.gen.element,
      this.fileBar);

    const chartBox = this.lossChart.box;
    this._resizeObserver = onWidthChange(chartBox, () => this._chartWidth ?? 0, () => {
      this._chartWidth = this._chartBoxWidth;
      this.scheduleRender(true);
    }, 30, (e) => { this._chartBoxWidth = e.contentRect.width; return this._chartBoxWidth; });
  }

  // ---------------------------------------------------------------- state

  connectedCallback() {
    super.connectedCallback();
    // The Worker (and the training module it loads) starts with the element, not once the page's
    // own WebAssembly is in; an element removed at once (moved is re-added in the same task) starts none.
    queueMicrotask(() => { if (this.isConnected) this.ctl.connect(); });
  }

  /**
   * The task table, from the session: in the Worker, which loads the training module anyway, so the
   * page does not. An element no longer on the page (no client), or a client that failed, reads it here.
   */
  async prepare(lab) {
    const client = this.isConnected ? this.ctl.connect() : null;
    this.ctl.tasks = await (client ? client.request('tasks') : Promise.reject(new Error('no client'))).catch(() => lab.languageTasks());
  }

  getExtraState() {
    const out = {};
    if (this._example && this._example !== TASK_TEXT[this.task].example) out.text = this._example;
    if (this._open) out.head = `${this._open.layer + 1}.${this._open.head + 1}`;
    return out;
  }

  setExtraState(map) {
    // A link to the english task opens the shipped model, as picking the task does (unless it says otherwise).
    if (map.get('task') === 'english' && !map.has('pretrained')) { this.pretrained = true; this.layers = null; }
    if (map.has('text')) this._pendingText = map.get('text');
    const head = /^(\d+)\.(\d+)$/.exec(map.get('head') ?? '');
    if (head) { this._open = { layer: Number(head[1]) - 1, head: Number(head[2]) - 1 }; this._userOpened = true; }
  }

  update() {
    selectValue(this.layersSelect, this.runLayers);
    selectValue(this.headsSelect, this.heads);
    this.taskSelect.value = this.task;
    this.speedSelect.value = this.speed;
    this.seedInput.value = String(this.runSeed);
    this.compareBox.checked = this.compare;
    // The 1-vs-2-layer comparison is about the induction trick; the 3-layer english page does not offer it.
    this.compareField.hidden = this.comparePanel.element.hidden = this.task === 'english';
    if (!this.lab) return;
    const tasks = this.ctl.tasks;
    this._task = tasks.find((t) => t.name === this.task) ?? tasks[0];
    this.seedInput.value = String(this.runSeed);  // now with the task's suggested seed, the one the run uses
    selectValue(this.layersSelect, this.runLayers);  // and its layers
    setText(this.heading, this.t(`lm.title.${this._task.name}`));
    if (this._introTask !== this.task) {
      this._introTask = this.task;
      this.intro.replaceChildren(...introParagraphs(this.task, this.t));
    }
    // The controller makes, pauses or resumes the model; a removed element gets no Worker.
    const example = this._pendingText ??
      (this._example && this._exampleTask === this._task.name ? this._example : TASK_TEXT[this._task.name].example);
    this.ctl.configure({
      task: this.task, layers: this.runLayers, heads: this.heads, seed: this.runSeed, compare: this.compare && this.task !== 'english', pretrained: this.pretrained,
      speed: this.speed, maxSteps: this.roundSteps, example,
    }, { autoplay: this.autoplay, connect: this.isConnected });
    this.renderButtons();
  }

  /** The layers attribute, else the task's own (english needs a third layer for its relations). */
  get runLayers() {
    return this.layers ?? this._task?.defaults.numLayers ?? 2;
  }

  /** The seed attribute, else the task's suggested seed (one on which its heads form in browsers). */
  get runSeed() {
    return this.seed ?? this._task?.defaults.seed ?? 1;
  }

  // ---------------------------------------------------------------- controller

  /** What the controller reports: state changes, new models, snapshots, and what went wrong. */
  onController(type, detail) {
    switch (type) {
      case 'state': this.onRunState(detail); if (!this.ctl.running && this.snapshot) this.scheduleRender(true); break;  // head detail in full
      case 'created': this.onCreated(detail); break;
      case 'snapshot': {
        const { snapshot: snap, seconds } = detail;
        const step = this.ctl.currentStep;
        this.setAttribute('data-step', String(step));
        this.emit('step', {
          step, seconds,
          runs: snap.runs.map((s, k) => ({
            layers: this.ctl.runs[k].layers, step: s.step, loss: s.train?.loss ?? null, evalLoss: s.eval.loss, accuracy: s.eval.accuracy,
          })),
        });
        this.scheduleRender();
        break;
      }
      case 'phase-change': {
        const { run, step, seconds, accuracy } = detail;
        if (run.k === 0) {
          this.setAttribute('data-phase-step', String(step));
          this.say(this.t('lm.said.phase', { step, seconds: this.fmt(seconds, 1), accuracy: this.fmt(accuracy, 2) }));
        }
        this.emit('phase-change', { layers: run.layers, step, seconds, accuracy });
        break;
      }
      case 'load': this.emit('load', detail); break;
      case 'dead':
        // Stopped before its first model (Firefox ESR sometimes never starts the thread Worker of a
        // threaded module, and the Worker that made it stops answering): a new Worker at once, once.
        if (!this._madeModel && !this._restartedUnasked) {
          this._restartedUnasked = true;
          // In the learner's language, not the client's English reason: how long the Worker was silent.
          this.say(this.t('lm.said.workerRestarted', { seconds: Math.round(this.ctl.client.watchdogMs / 1000) }));
          this._restartWorker();
        } else {
          this.offerRestart(detail.message);
        }
        break;
      case 'error':
        this.removeAttribute('data-busy');
        this.fail(detail.error, detail.title);
        break;
      default: break;
    }
  }

  /** A new model: the example, prompt and hints of its task, and the grid, switches and curves laid out for it. */
  onCreated({ runs, info, settings: d }) {
    const t = this.t;
    this._madeModel = true;
    this.errorBox.replaceChildren();
    const detail = info.loadError === NOT_EMBEDDED ? t('lm.notEmbedded') : info.loadError;
    if (info.note) this.errorBox.replaceChildren(el('strong', {}, t('lm.noTrained')), ` ${t('lm.noTrainedNote', { detail })}`);
    this._pendingText = undefined;
    this._example = d.example;
    this._exampleTask = d.task.name;
    this.showModel(runs);
    if (d.pretrained) this.say(t('lm.said.loadedTrained', { layers: t.plural('lm.layers', runs[0].layers), steps: info.snapshot.runs[0].step }));
  }

  /** The panels laid out for the model (new, or the same one drawn again in another language). */
  showModel(runs) {
    this.textPanel.reset(this._example, this._exampleTask);
    this.gen.reset(this._exampleTask, TASK_TEXT[this._exampleTask].prompt);
    this.relView.reset(this._exampleTask === 'english', this._example);
    this.layout(runs);
    setText(this.modeNote, modeText(this.t, this.ctl.client, this.threads ?? 1));
    this.removeAttribute('data-busy');
  }

  /** Drawn again in a new language: the model and its state stay. */
  relocalise() {
    this._resizeObserver?.disconnect();
    const prompt = this.gen?.promptInput.value;
    super.relocalise();
    if (!this.ctl.runs.length || !this._exampleTask) return;
    this.showModel(this.ctl.runs);
    if (prompt) this.gen.promptInput.value = prompt;
    this.renderButtons();
    if (this.snapshot) this.scheduleRender(true);
  }

  /** A new Worker and a new model in it (which trains at once only with autoplay, as at first). */
  _restartWorker() {
    this.ctl.restart();
    if (!this.autoplay) this.ctl.pause();
    this.requestUpdate();
  }

  /** The Worker stopped: say so, and offer a new one (which trains at once only with autoplay, as at first). */
  offerRestart(message) {
    const button = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'restart' }, on: { click: () => this._restartWorker() } },
      this.t('lm.startAgain'));
    const said = this.t.lang === 'en' ? message : this.t('lm.workerStopped', { detail: message });
    this.errorBox.replaceChildren(el('strong', {}, this.t('training.stopped')), ` ${this.t('lm.workerLost', { message: `${said.charAt(0).toUpperCase()}${said.slice(1)}` })} `, button);
    this.emit('error', { message });
  }

  // ---------------------------------------------------------------- layout

  layout(runs) {
    this.removeAttribute('data-phase-step');
    const r = runs[0];
    if (!this._open || this._open.layer >= r.layers || this._open.head >= r.heads) {
      this._open = { layer: r.layers - 1, head: Math.min(1, r.heads - 1) };
    }
    this.grid.build(r, this._open);
    this.ablation.switches.build(r);
    this.comparePanel.layout(runs);
    this._chartWidth = this._chartBoxWidth ?? 0;  // as the observer reported it: no layout read here
    this.detail.shown = null;
  }

  // ---------------------------------------------------------------- render

  render() {
    if (!this.snapshot) return;
    this.renderGrid();
    this.renderDetail(false);
    // The rest changes layout, which costs more: while training it is refreshed every 250 ms (every
    // second with reduced motion) in four parts, each in an animation frame of its own; stopped, at once.
    this._paced.update({ running: this.running, gap: this._pacedGap, parts: () => this.slowParts(),
      again: () => this.scheduleRender(true) });
  }

  /** The parts of a refresh of curves, text and tables; each reads the controller's state when it runs. */
  slowParts() {
    let curves = null;
    const parts = [
      () => {
        curves = this.curves();
        this.drawChart(this.lossChart, curves.loss.fig, curves.loss.label);
      },
      () => this.renderAccuracy(curves ?? this.curves()),
      () => {
        this.renderProgress();
        this.renderButtons();
        this.relView.refresh(this.ctl.currentStep, this.running);
      },
      () => {
        this.renderAblation();
        this.renderCompare();
      },
    ];
    return parts.map((part) => () => { if (this.snapshot) part(); });
  }

  renderGrid() {
    const r = this.ctl.runs[0];
    const s = this.snapshot.runs[0];
    const [L, H] = s.shape;
    if (L !== r.layers || H !== r.heads) return;
    this.grid.draw(s, (l, h) => r.scores.trend(l, h));
    if (document.activeElement !== this) this.ablation.switches.show(s.enabled, true);
    // Until the learner opens a head, the one that carries the task (induction, coreference) is shown once it has its label.
    if (!this._userOpened) {
      const want = { cricket: 'coreference', english: 'agreement' }[this.task] ?? 'induction';
      const star = s.scores.filter((q) => (q.relation ?? q.label) === want).sort((a, b) => b[want] - a[want])[0];
      if (star && (star.layer !== this._open.layer || star.head !== this._open.head)) {
        this._open = { layer: star.layer, head: star.head };
        this.renderDetail(true);
      }
    }
    setText(this.gridNote, this.t('lm.gridNote', { text: clipText(s.tokens), n: this.running ? LM_SCORE_EXAMPLES : 4 * LM_SCORE_EXAMPLES, window: TREND_WINDOW, threshold: this.fmt(s.threshold ?? 0.5, 1),
      what: this.t(this.task !== 'induction' ? `lm.gridNote.${this.task}` : r.layers > 1 ? 'lm.gridNote.twoLayers' : 'lm.gridNote.induction') }));
    this.grid.select(this._open);
  }

  /** The opened head's heatmap. */
  renderDetail(full) {
    const s = this.snapshot?.runs[0];
    if (s && this._open) this.detail.draw(s, this._open, { full, running: this.running });
  }

  /** Both curves as figures, for the charts' width. */
  curves() {
    const width = Math.max(280, Math.min(620, this._chartWidth || 520));
    return lmCurves(this.ctl.runs,
      { step: this.ctl.currentStep, until: this.ctl.until, width, vocabularySize: this._task.vocabulary.length }, this.t);
  }

  /** The held-out chart, its note and the phase note. */
  renderAccuracy({ accuracy }) {
    this.drawChart(this.accChart, accuracy.fig, accuracy.label);
    const metric = `lm.metric.${this._task.name}`;
    setText(this.accChart.note, this.t('lm.chart.heldOutMetric', { metric: this.t.has(metric) ? this.t(metric) : this._task.metric }));
    // The note's nodes are replaced only when what it says changes (rarely: at the phase change).
    const note = phaseNote(this.ctl.runs[0], this.t);
    const said = note.map((n) => (typeof n === 'string' ? n : `<${n.textContent}>`)).join('');
    if (said !== this._phaseSaid) {
      this._phaseSaid = said;
      this.phaseNote.replaceChildren(...note);
    }
  }

  renderProgress() {
    const s = this.snapshot.runs[0];
    const n = this.threads ?? 1;
    setText(this.progress, this.t(n > 1 ? 'lm.progressThreads' : 'lm.progress', { step: s.step, seconds: this.fmt(this.ctl.seconds(), 1), n,
      accuracy: this.fmt(s.eval.accuracy, 2), until: Math.max(this.ctl.until, s.step) }));
  }

  renderAblation() {
    this.ablation.render(this.snapshot.runs[0], this.running);
  }

  renderCompare() {
    this.comparePanel.render(this.ctl.runs, this.snapshot,
      { task: this.task, pretrained: this.pretrained, compare: this.compare, running: this.running, step: this.ctl.currentStep });
  }

  renderButtons() {
    const c = this.ctl.controls();
    this.startButton.textContent = this.startText(c);
    this.startButton.disabled = !c.canStart;
    this.stepButton.disabled = !c.canStep;
    this.saveButton.disabled = !c.canSave;
    this.loadButton.disabled = !c.canReset || this.ctl.state === 'loading';
    this.pretrainedButton.textContent = this.t(this.pretrained ? 'lm.reloadTrained' : 'lm.loadTrained');
  }

  curvesFileName(name) {
    return `${name}-${this.task}-${this.ctl.runs.map((r) => `${r.layers}-layer`).join('-vs-')}`;
  }

  curvesCSV() { return curvesCSV(this.ctl.runs); }

  /** A file the learner chose: loaded, or why not in the error box (the model in use stays). */
  async loadFile(file) {
    this.errorBox.replaceChildren();
    try {
      if (file.size > MAX_MODEL_BYTES) throw Object.assign(new RangeError('file too large'), { said: this.t('lm.file.tooLarge', { size: this.fmt(file.size / 2 ** 20, 1) }) });
      await this.loadModel(new Uint8Array(await file.arrayBuffer()), file.name);
    } catch (e) {
      const text = fileProblem(e, this.t);
      this.errorBox.replaceChildren(el('strong', {}, this.t('lm.file.notLoaded', { name: file.name })), ` ${text}`);
      this.emit('error', { message: `${file.name}: ${text}` });
    }
  }

  async downloadModel() {
    try {
      const bytes = await this.saveModel(0);
      const filename = `headlab-${this.task}-${this.ctl.runs[0].layers}-layers-step-${this.ctl.currentStep}.hlm`;
      download(new Blob([bytes], { type: 'application/octet-stream' }), filename);
      this.say(this.t('lm.said.saved', { steps: this.ctl.currentStep, filename }));
      this.emit('export', { format: 'hlm', filename });
    } catch (e) {
      this.fail(e);
    }
  }
}
