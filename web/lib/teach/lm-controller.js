// The run logic of <headlab-language-model>, without the DOM: the shared state machine
// of training-controller.js (the trainer's states and transitions, so hiding and
// showing the page, pausing, settings changed while training and a lost Worker behave
// as in <headlab-trainer>) for language models: the model the settings ask for (new,
// or the trained one HeadLab ships, with a new one in its place when that cannot be
// loaded), a run per model of the session (lm-session.js), the phase change of each
// run, each head's task score over time (head-trend.js), and the requests the element's panels make (head switches, the example text,
// generation, saving, loading a saved model).

import { TrainingController } from './training-controller.js';
import { LM_PACES } from './lm-session.js';
import { ScoreHistory } from './head-trend.js';

/** Held-out task accuracy at which the phase change is marked. */
export const PHASE_ACCURACY = 0.5;

/** The trained models HeadLab ships, in web/models/ (written by `npm run train:models`). */
export const SHIPPED = { induction: { main: 'induction.hlm', oneLayer: 'induction-1-layer.hlm' }, cricket: { main: 'cricket.hlm' },
  english: { main: 'english.hlm' } };

const MAX_STEP_N = 10000;

/** Held-out task accuracy that ends the plateau and the drop on the charts (below and above PHASE_ACCURACY). */
export const PLATEAU_ACCURACY = 0.25;
export const DROP_ACCURACY = 0.75;

/**
 * The plateau and the drop of a run trained from step 0, from its history points ({ step, accuracy }):
 * the plateau lasts until the last point before the held-out accuracy first reaches PLATEAU_ACCURACY,
 * the drop from there until it first reaches DROP_ACCURACY (or the last point, while it has not).
 * @returns {{plateau: [number, number] | null, drop: [number, number] | null}}
 */
export function phaseSpans(history) {
  const pts = history.filter((p) => Number.isFinite(p.accuracy));
  if (pts.length < 2) return { plateau: null, drop: null };
  const up = pts.findIndex((p) => p.accuracy >= PLATEAU_ACCURACY);
  if (up < 0) return { plateau: [pts[0].step, pts[pts.length - 1].step], drop: null };
  if (up === 0) return { plateau: null, drop: null };
  const start = pts[up - 1].step;
  const top = pts.findIndex((p) => p.accuracy >= DROP_ACCURACY);
  return { plateau: [pts[0].step, start], drop: [start, top < 0 ? pts[pts.length - 1].step : pts[top].step] };
}

export class LmController extends TrainingController {
  /**
   * @param {object} o  as TrainingController's, plus:
   * @param {{name: string, defaults: object}[]} [o.tasks]      lab.languageTasks() (set later when not known yet)
   * @param {(file: string) => Promise<Uint8Array>} o.fetchModel  the bytes of a shipped model file (SHIPPED)
   */
  constructor({ tasks = [], fetchModel, ...o }) {
    super({ name: 'headlab-language-model', deadText: 'the Worker has stopped; call reset() first', intervalMs: () => 250, ...o });
    Object.assign(this, { tasks, fetchModel });
    this.settings = { speed: 'fast', maxSteps: 3000 };
    // this.runs: per run { k, layers, heads, config, threads, history, phase, below, name, scores (a ScoreHistory) }
  }

  pace() { return LM_PACES[this.settings.speed]; }

  // ---------------------------------------------------------------- the model (see TrainingController)

  /**
   * The model the settings ask for (language-model settings can always train).
   * @param {object} s  task, layers, heads, seed, compare, pretrained, speed, maxSteps, example (the text every head is drawn on)
   * @returns {{task: object, pretrained: boolean, files: string[], config: object, compareLayers: number, example: string}}
   */
  check(s) {
    const task = this.tasks.find((t) => t.name === s.task) ?? this.tasks[0];
    const d = task.defaults;
    const shipped = SHIPPED[task.name];
    return {
      name: s.task, task, pretrained: Boolean(s.pretrained), layers: s.layers, heads: s.heads, seed: s.seed, compare: Boolean(s.compare),
      files: shipped ? [shipped.main, ...(s.compare && shipped.oneLayer ? [shipped.oneLayer] : [])] : [],
      config: {
        task: task.name, numLayers: s.layers, numHeads: s.heads, dModel: d.dModel, mlp: d.mlp, seed: s.seed, learningRate: d.learningRate,
        batchSize: d.batchSize,
      },
      compareLayers: s.compare && s.layers !== 1 ? 1 : 0,
      example: s.example,
    };
  }

  modelKey(d) {
    return [d.pretrained ? 'trained' : 'new', d.name, d.layers, d.heads, d.seed, d.compare ? 1 : 0].join('|');
  }

  /** A trained model is loaded paused; a new one trains when the settings changed while training. */
  trainsNewModel(d) {
    return !d.pretrained && super.trainsNewModel(d);
  }

  /** A loaded model's rounds count from the step it was saved at. */
  roundStartOf(info) {
    return info.snapshot.runs[0].step;
  }

  /**
   * The shipped model(s) for `pretrained` (a new model, with a note saying why and the loadError,
   * when they cannot be loaded), else new ones.
   */
  async makeModel(d, current) {
    let note = '', loadError = '';
    if (d.pretrained) {
      try {
        const bytes = await Promise.all(d.files.map((f) => this.fetchModel(f)));
        if (!current()) return null;
        const info = await this.client.request('load', { files: bytes, example: d.example }, bytes.map((b) => b.buffer));
        this.emit('load', { files: d.files });
        return info;
      } catch (e) {
        if (!current()) return null;
        loadError = String(e?.message ?? e);
        note = `The trained model could not be loaded (${loadError}), so a new one trains here instead.`;
      }
    }
    const info = await this.client.request('create', { config: d.config, compareLayers: d.compareLayers, example: d.example });
    return note ? { ...info, note, loadError } : info;
  }

  runOf(info, k) {
    const c = info.config ?? {};
    const layers = c.numLayers ?? this.settings.layers;
    const heads = c.numHeads ?? this.settings.heads;
    const task = c.task ?? this.settings.task;
    return { k, layers, heads, config: c, threads: info.threads ?? 1, history: [], phase: null, below: false, name: `${layers} layer${layers === 1 ? '' : 's'}`,
      scores: new ScoreHistory({ task, layers, heads }) };
  }

  pointOf(s, seconds) {
    return { step: s.step, trainLoss: s.train?.loss ?? null, evalLoss: s.eval.loss, accuracy: s.eval.accuracy,
      nextToken: s.eval.nextTokenAccuracy, headsOn: s.enabled.filter(Boolean).length, seconds: +seconds.toFixed(3) };
  }

  /**
   * The phase change: the first evaluation at which the task accuracy reaches PHASE_ACCURACY, every head on,
   * after one below it here (a model loaded already trained went through its phase change elsewhere).
   */
  track(run, s, k, seconds) {
    run.scores.add(s);
    if (!s.allOn && s.eval.accuracy < PHASE_ACCURACY) run.below = true;
    if (run.phase || !run.below || s.step <= 0 || s.allOn || s.eval.accuracy < PHASE_ACCURACY) return null;
    run.phase = { step: s.step, seconds, accuracy: s.eval.accuracy };
    return ['phase-change', { run, ...run.phase }];
  }

  // ---------------------------------------------------------------- requests

  async step(n = 10) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_STEP_N) throw new RangeError(`${this.name}: step(n): n must be a whole number from 1 to ${MAX_STEP_N}, got ${n}`);
    this.whyNotReady('step(n)');
    if (this.running) throw new Error(`${this.name}: step(n): training is running; pause() first`);
    return super.step(n);
  }

  /** Switches a head on or off; resolves to the run's snapshot after it. Layers, heads and runs count from 0. */
  async setHeadEnabled(layer, head, enabled, run = 0) {
    this.whyNotReady('setHeadEnabled');
    const r = this.runs[run];
    const where = `${this.name}: setHeadEnabled`;
    if (!r) throw new RangeError(`${where}: run must be 0${this.runs.length > 1 ? ' or 1' : ''}, got ${run}`);
    if (!Number.isInteger(layer) || layer < 0 || layer >= r.layers) throw new RangeError(`${where}: layer must be 0..${r.layers - 1}, got ${layer}`);
    if (!Number.isInteger(head) || head < 0 || head >= r.heads) throw new RangeError(`${where}: head must be 0..${r.heads - 1}, got ${head}`);
    const snap = await this.client.request('setHead', { run, layer, head, enabled: Boolean(enabled) });
    this.ingest(snap);
    return snap.runs[run];
  }

  /** Every head drawn on `text` from now on; rejects with the API's RangeError when a word is unknown. */
  async showText(text) {
    this.whyNotReady('showText');
    this.ingest(await this.client.request('example', { text }));
  }

  /** The first model continues `prompt` (model.generate); each call samples with a new seed. */
  async generate({ prompt, maxTokens, temperature }) {
    this.whyNotReady('generate');
    this._genSeed = (this._genSeed ?? 0) + 1;
    return this.client.request('generate', { run: 0, prompt, maxTokens, temperature, seed: this._genSeed });
  }

  /**
   * English only: the grammar's arcs of `text` with every head's attention on it, the head scores and the
   * baselines (lm-session.js relationsReply); rejects with the API's Error naming the word where the text
   * stops being the language.
   */
  async relations(text) {
    this.whyNotReady('relations');
    if (typeof text !== 'string') throw new TypeError(`${this.name}: relations(text): text must be a string, got ${text === null ? 'null' : typeof text}`);
    return this.client.request('relations', { run: 0, text });
  }

  async saveModel(run = 0) {
    this.whyNotReady('saveModel');
    return this.client.request('save', { run });
  }

  /**
   * Loads a model saveModel() wrote (pausing first): it replaces the runs (one model, no side by side) and is
   * paused. A file the API refuses leaves the model in use as it was, and rejects with the API's RangeError.
   * @param {Uint8Array | ArrayBuffer} bytes
   * @param {Record<string, string>} [examples]  the text every head is drawn on, by task name (else the current one)
   * @returns {Promise<{task: string, layers: number, heads: number, seed: number, step: number}>} the file's model
   */
  async loadModel(bytes, examples = {}) {
    return this.loadSaved(bytes, '.hlm', (b) => ({ files: [b], example: this.settings.example, examples }), (info) => {
      const c = info.runs[0].config;
      // The settings the element takes from the file: configure() with them keeps this model.
      const d = this.check({ ...this.settings, task: c.task, layers: c.numLayers, heads: c.numHeads, seed: c.seed, compare: false,
        pretrained: false, example: examples[c.task] ?? this.settings.example });
      this.key = this.modelKey(d);
      const result = { task: c.task, layers: c.numLayers, heads: c.numHeads, seed: c.seed, step: info.snapshot.runs[0].step };
      return { result, roundStart: this.roundStartOf(info), settings: d };
    });
  }
}
