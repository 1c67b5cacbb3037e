// A training session for <headlab-language-model>: one small language model, or
// two trained side by side on the same task (the chosen number of layers and one
// layer), stepped in time-boxed chunks like the trainer's (trainer-session.js,
// whose run/pause/step/chunk logic this reuses). Every number comes from the
// HeadLab API (web/lib/headlab.js); nothing here touches the DOM, so the same
// code runs in the language-model Worker and, where none can start, on the page.
//
// Requests (handle(type, payload) → Promise<{ result, transfer }>, answered in order):
//   tasks                                        lab.languageTasks(): the page learns them from the Worker,
//                                                 which loads the training module anyway
//   create   { config, compareLayers?, example }  new model(s); compareLayers = layers of the second
//                                                 (the reply's runs[k] has config, task and threads)
//   load     { files: Uint8Array[], example, examples? }  models from saved files (first = the main one);
//                                                 examples[task] is the text drawn when the file's task is `task`
//   run      { until, pace } · pause · step { n } · options { intervalMs } · snapshot · dispose
//                                                 as in trainer-session.js
//   setHead  { run, layer, head, enabled }       ablation; a snapshot follows
//   example  { text }                            the sequence every head is drawn on; a RangeError
//                                                 (the API's, naming the unknown word) leaves the old one
//   generate { run, prompt, maxTokens, temperature, seed }   model.generate(...)
//   save     { run }                             Uint8Array of model.save()
//   relations { text, run }                      english only: relationsReply() (the grammar's arcs of
//                                                 the text, every head's attention on it, headScores,
//                                                 baselines); the API's Error when the text is not the language
// Events: { event: 'snapshot', snapshot } and { event: 'paused', reason } as in trainer-session.js.

import { TrainerSession } from './trainer-session.js';

/** Steps per second of each pace; 0 = as fast as the machine goes. */
export const LM_PACES = { slow: 50, normal: 250, fast: 0 };
/** Held-out sequences per evaluation (the same ones every call) and sequences the head scores average over while training. */
export const LM_EVAL_EXAMPLES = 256;
export const LM_SCORE_EXAMPLES = 64;

export class LmSession extends TrainerSession {
  /**
   * options as TrainerSession's, plus `threads`: the models' `threads` option (default 1; the
   * element's Worker passes 'auto', so an isolated page splits each batch over its cores).
   */
  constructor(lab, emit, options = {}) {
    super(lab, emit, options);
    this.example = '';
    this.threads = options.threads ?? 1;
  }

  static async open(lab, emit, options) {
    await lab.languageTasks();
    const session = new LmSession(lab, emit, options);
    session.intervalMs = 250;
    return session;
  }

  async _handle(type, payload) {
    switch (type) {
      case 'tasks': return { result: await this.lab.languageTasks() };
      case 'create': return { result: await this.createModels(payload.config, payload.compareLayers, payload.example) };
      case 'load': return { result: await this.loadModels(payload.files, payload.example, payload.examples) };
      case 'setHead': {
        const { run = 0, layer, head, enabled } = payload;
        this.trainer(run).setHeadEnabled(layer, head, Boolean(enabled));
        return this.snapshotReply();
      }
      case 'example': {
        // Checked on the first model: every run shares the task, so the words are the same.
        if (this.trainers.length) this.trainers[0].tokenize(String(payload.text ?? ''));
        this.example = String(payload.text ?? '');
        return this.snapshotReply();
      }
      case 'generate': {
        const { run = 0, prompt, maxTokens, temperature, seed } = payload;
        return { result: this.trainer(run).generate({ prompt, maxTokens, temperature, seed }) };
      }
      case 'relations': return { result: relationsReply(this.trainer(payload.run ?? 0), String(payload.text ?? ''), this.running) };
      case 'exportModel': throw new TypeError('language-model session: exportModel is a trainer request');
      default: return super._handle(type, payload);
    }
  }

  async createModels(config, compareLayers = 0, example = '') {
    const threads = this.threads;
    const models = await this.makeModels([config, ...(compareLayers ? [{ ...config, numLayers: compareLayers }] : [])],
      (options, replacing) => this.lab.createLanguageModel({ ...options, threads, ...replacing }));
    this.example = example;
    return this.replace(models);
  }

  async loadModels(files, example = '', examples = {}) {
    const threads = this.threads;
    const models = await this.makeModels(files, (bytes, replacing) => this.lab.loadLanguageModel(bytes, { threads, ...replacing }));
    this.example = examples?.[models[0]?.config().task] ?? example;
    return this.replace(models);
  }

  /**
   * One new model per source (`make(source, { replacing })`), each replacing the model of the same
   * run: made in its threaded module when it runs on as many threads, so the Worker starts no
   * thread Worker for it (Firefox ESR now and then freezes a Worker that starts one, never at its
   * first; lab.createLanguageModel's `replacing`). Training stops first: a replaced model is
   * disposed as soon as its successor is made. If one cannot be made, the new ones are disposed, and
   * when some old one was replaced already no old run is left either (the runs are replaced, or none).
   */
  async makeModels(sources, make) {
    const old = this.trainers;
    if (old.length) this.pause(null);
    const fresh = [];
    try {
      // (An old model already disposed, by the session's dispose meanwhile, is replaced by nothing.)
      for (const [k, source] of sources.entries()) fresh.push(await make(source, old[k]?.threads ? { replacing: old[k] } : {}));
    } catch (e) {
      for (const m of fresh) m.dispose();
      if (old.some((m) => m.threads === 0)) {
        for (const m of old) m.dispose();
        this.trainers = [];
      }
      throw e;
    }
    return fresh;
  }

  replace(models) {
    if (this._disposed) {
      for (const m of models) m.dispose();
      throw new Error('language-model session: disposed while a model was being created');
    }
    this.pause(null);
    for (const m of this.trainers) m.dispose();
    this.trainers = models;
    this.diverged = null;
    this._acc = models.map(() => ({ loss: 0, accuracy: 0, steps: 0 }));
    this._steps = models.map((m) => m.steps);
    this.currentStep = this._steps[0] ?? 0;
    return { runs: models.map((m) => ({ config: optionsOf(m), task: m.task, threads: m.threads })), snapshot: this.snapshot() };
  }

  oneStep() {
    this.trainers.forEach((m, k) => {
      const r = m.step(1);
      this._steps[k] = r.step;
      const a = this._acc[k];
      a.loss += r.loss;
      a.steps += 1;
    });
    this.currentStep = this._steps[0];
  }

  /**
   * For every run: step, mean training loss since the previous snapshot (null when no step was
   * taken), held-out loss and accuracies (and the same with every head on, while a head is off),
   * every head's scores and label (cricket: with bestFixedPosition, headReport's fixed-position
   * baseline), which heads are on, and the attention of every head on the example: tokens, weights
   * [L, H, T, T] and shape.
   */
  snapshot() {
    const runs = this.trainers.map((m, k) => {
      const a = this._acc[k];
      const train = a.steps ? { loss: a.loss / a.steps, steps: a.steps } : null;
      this._acc[k] = { loss: 0, accuracy: 0, steps: 0 };
      // Labels while training are rough and cheap; when training stops they get four times the sequences.
      const report = m.headReport(this.running ? LM_SCORE_EXAMPLES : 4 * LM_SCORE_EXAMPLES);
      const scores = report.heads;
      const enabled = scores.map((s) => m.headEnabled(s.layer, s.head));
      const evaluation = m.evaluate(LM_EVAL_EXAMPLES);
      let allOn = null;
      if (enabled.includes(false)) {
        scores.forEach((s, i) => { if (!enabled[i]) m.setHeadEnabled(s.layer, s.head, true); });
        allOn = m.evaluate(LM_EVAL_EXAMPLES);
        scores.forEach((s, i) => { if (!enabled[i]) m.setHeadEnabled(s.layer, s.head, false); });
      }
      const att = m.attention(this.example);
      return {
        step: this._steps[k], train, eval: evaluation, allOn, enabled, scores, threshold: report.threshold,
        bestFixedPosition: report.bestFixedPosition ?? null,
        tokens: att.tokens, weights: att.weights, shape: att.shape,
      };
    });
    return { running: this.running, runs };
  }
}

/**
 * What the relations view of an english model needs for `text`: the grammar's `arcs` and `tokens`
 * (model.relations), every head's `weights` [L, H, T, T] and `shape` on it (model.attention),
 * `heads` (model.headScores: the relation scores and labels) and `baselines` (model.baselines), on
 * LM_SCORE_EXAMPLES held-out sequences while training and four times as many when not.
 */
export function relationsReply(model, text, running = false) {
  const { tokens, arcs } = model.relations(text);
  const att = model.attention(text);
  const n = running ? LM_SCORE_EXAMPLES : 4 * LM_SCORE_EXAMPLES;
  return { tokens, arcs, weights: att.weights, shape: att.shape, heads: model.headScores(n), baselines: model.baselines(n) };
}

/** A model's options as createLanguageModel takes them: its config() without `step`. */
function optionsOf(model) {
  const { step, ...options } = model.config();
  return options;
}
