// The one-layer trainer of the synthetic relation tasks (training module): createTrainer,
// loadTrainer and the Trainer they return.
import { OPTION_KEYS, describe, fromFloat32, requireBool, requireDim, requireObject, unknownTask } from './checks.js';
import { TrainingSession } from './session.js';

/** Headlab#createTrainer. */
export async function createTrainer(lab, options) {
  const fn = 'createTrainer';
  requireObject(fn, options, OPTION_KEYS[fn]);
  // The options given, checked; undefined where the default applies (null too for task,
  // learningRate and optimizer). The defaults are TrainerConfig's (trainer.hpp).
  const given = {
    task: options.task ?? undefined,
    numHeads: options.numHeads === undefined ? undefined : requireDim(fn, 'numHeads', options.numHeads),
    dModel: options.dModel === undefined ? undefined : requireDim(fn, 'dModel', options.dModel),
    seed: options.seed,
    learningRate: options.learningRate ?? undefined,
    batchSize: options.batchSize === undefined ? undefined : requireDim(fn, 'batchSize', options.batchSize),
    optimizer: options.optimizer ?? undefined,
    causal: options.causal === undefined ? undefined : requireBool(fn, 'causal', options.causal),
  };
  if (given.task !== undefined) {
    const names = (await lab.tasks()).map((t) => t.name);
    if (typeof given.task !== 'string') throw new TypeError(`${fn}: task must be a string (one of ${names.join(', ')}), got ${describe(given.task)}`);
    if (!names.includes(given.task)) throw new RangeError(`${fn}: task: ${unknownTask(given.task, names)}`);
  }
  if (given.seed !== undefined) {
    if (typeof given.seed !== 'number') throw new TypeError(`${fn}: seed must be a non-negative integer, got ${describe(given.seed)}`);
    if (!Number.isSafeInteger(given.seed) || given.seed < 0) throw new RangeError(`${fn}: seed must be a non-negative integer, got ${given.seed}`);
  }
  if (given.learningRate !== undefined) {
    if (typeof given.learningRate !== 'number') throw new TypeError(`${fn}: learningRate must be a number, got ${describe(given.learningRate)}`);
    if (!(Number.isFinite(given.learningRate) && given.learningRate > 0 && given.learningRate <= 10)) {
      throw new RangeError(`${fn}: learningRate must be a finite number in (0, 10], got ${given.learningRate}`);
    }
  }
  if (given.optimizer !== undefined && given.optimizer !== 'adam' && given.optimizer !== 'sgd') {
    throw new RangeError(`${fn}: optimizer must be 'adam' or 'sgd', got ${describe(given.optimizer)}`);
  }
  const train = await lab._trainModule();
  const config = train.trainerDefaults();
  for (const [name, value] of Object.entries(given)) if (value !== undefined) config[name] = value;
  const core = new train.TrainerCore();
  const error = core.init(config);
  if (error) {
    core.delete();
    throw new RangeError(`${fn}: ${error}`);
  }
  return new Trainer(lab, core);
}

/** Headlab#loadTrainer. */
export async function loadTrainer(lab, bytes) {
  const fn = 'loadTrainer';
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${fn}: bytes must be a Uint8Array (a saved model), got ${describe(bytes)}`);
  if (bytes.length > 64 * 2 ** 20) throw new RangeError(`${fn}: bytes: a saved model is at most 64 MiB, got ${bytes.length} bytes`);
  const train = await lab._trainModule();
  const base = train.reserveFile(Math.max(bytes.length, 1));
  if (!base) throw new RangeError(`${fn}: bytes: too large for the wasm heap`);
  train.HEAPU8.set(bytes, base);
  const core = new train.TrainerCore();
  const error = core.load(base, bytes.length);
  if (error) {
    core.delete();
    throw new RangeError(`${fn}: bytes: ${error}`);
  }
  return new Trainer(lab, core);
}

/**
 * A training session created by {@link Headlab#createTrainer} or
 * {@link Headlab#loadTrainer}. Every method is synchronous; run it in a Worker
 * to keep a page responsive.
 */
export class Trainer extends TrainingSession {
  /** @private */
  constructor(lab, core) {
    super(lab, core, 'Trainer', 'trainer');
    const info = core.taskInfo();
    const config = core.config();
    /** @private */
    this._shape = { seqLen: info.seqLen, numHeads: config.numHeads, dModel: config.dModel };
  }

  /** @private A head index in 0..numHeads-1. */
  _head(fn, head) {
    if (typeof head !== 'number') {
      throw new TypeError(`Trainer.${fn}: head must be an integer in 0..${this._shape.numHeads - 1}, got ${describe(head)}`);
    }
    if (!Number.isInteger(head) || head < 0 || head >= this._shape.numHeads) {
      throw new RangeError(`Trainer.${fn}: head must be an integer in 0..${this._shape.numHeads - 1}, got ${describe(head)}`);
    }
  }

  /**
   * Runs `n` optimizer steps now (default 1).
   *
   * A step whose loss, or whose update of the parameters (or of Adam's moments),
   * would be non-finite — or would push a parameter past ±1e4 — is not taken: the
   * trainer keeps its state from the step before and `step()` throws a RangeError
   * naming the step and the learning rate. It throws the same error on every later
   * call; everything else (evaluate, save, …) works on the kept state. To go on,
   * create a trainer with a lower learningRate. {@link Trainer#divergence} says
   * whether and where it happened.
   * @returns {{step: number, loss: number, accuracy: number}} accuracy on the last training batch
   * @throws {RangeError} when training diverges
   * @example
   * t.step(100).loss;
   * @example
   * const t = await lab.createTrainer({ learningRate: 10, optimizer: 'sgd' });
   * try { t.step(1000); } catch (e) {
   *   e.message;              // 'Trainer.step: training diverged at step 3 with learningRate 10 (sgd): …'
   *   t.evaluate().loss;      // finite: the state from step 2
   * }
   */
  step(n) {
    const core = this._live('step');
    const { step, loss, accuracy, diverged } = core.step(this._count('step', 'n', n, 1, 1e6));
    if (diverged) throw new RangeError(`Trainer.step: ${diverged}`);
    return { step, loss, accuracy };
  }

  /**
   * null while training is fine; once a step has diverged (see {@link Trainer#step}),
   * where and why: `step` is the step that was not taken, `reason` 'loss' (the loss
   * was not finite) or 'update' (the update would have been), `message` the text
   * step() throws.
   * @returns {import('../headlab').TrainerDivergence | null}
   */
  divergence() {
    const d = this._live('divergence').divergence();
    return d.step === 0 ? null : { ...d, learningRate: fromFloat32(d.learningRate) };
  }

  /**
   * Loss and accuracy on the first `n` held-out examples (default 1000; the same
   * examples every call). Accuracy counts an example right when every relation's
   * answer is right.
   * @returns {{loss: number, accuracy: number, relationAccuracy: number[]}}
   */
  evaluate(n) {
    const core = this._live('evaluate');
    return core.evaluate(this._count('evaluate', 'n', n, 1000, 1e5));
  }

  /**
   * Each head's attention from the query position, averaged over `n` held-out
   * examples (default 256): entropy (nats), mean attention distance, and the
   * share of weight on each relation's position.
   * @returns {{entropy: number, meanDistance: number, relationShare: number[]}[]}
   */
  headMetrics(n) {
    const core = this._live('headMetrics');
    return core.headMetrics(this._count('headMetrics', 'n', n, 256, 1e5));
  }

  /** Every head's attention on the fixed probe sequence: Float32Array [numHeads * T * T]. */
  attentionWeights() {
    return this._live('attentionWeights').attentionWeights();
  }

  /** The fixed probe sequence: token ids and their names. */
  probe() {
    const core = this._live('probe');
    const tokens = core.probeTokens();
    const names = core.taskInfo().tokenNames;
    return { tokens, tokenNames: Array.from(tokens, (t) => names[t]) };
  }

  /**
   * @returns {{name: string, seqLen: number, queryPosition: number, relationPositions: number[], relationNames: string[],
   *   tokenNames: string[], numRelations: number, vocab: number, description: string}}
   */
  taskInfo() {
    return this._live('taskInfo').taskInfo();
  }

  /**
   * The options the trainer was made with (every default filled in) and `step`, the steps taken so
   * far: the shape of {@link LanguageModel#config}. `learningRate` reads as given (0.005, not the
   * float32 0.004999999888241291), after save and load too.
   * @returns {{task: string, numHeads: number, dModel: number, seed: number, learningRate: number, batchSize: number,
   *   optimizer: 'adam'|'sgd', causal: boolean, step: number}}
   * @example
   * (await lab.createTrainer({ learningRate: 0.005 })).config().learningRate;  // 0.005
   */
  config() {
    const core = this._live('config');
    const c = core.config();
    return { ...c, learningRate: fromFloat32(c.learningRate), step: core.steps() };
  }

  /**
   * Switches a head off (its output is zeroed before W^O) or back on, in
   * training and evaluation alike.
   * @example
   * t.setHeadEnabled(0, false); t.evaluate(1000).accuracy;  // drops when head 0 carried a relation
   */
  setHeadEnabled(head, enabled) {
    const core = this._live('setHeadEnabled');
    this._head('setHeadEnabled', head);
    if (typeof enabled !== 'boolean') throw new TypeError(`Trainer.setHeadEnabled: enabled must be a boolean, got ${describe(enabled)}`);
    core.setHeadEnabled(head, enabled);
  }

  /** Whether a head is on. */
  headEnabled(head) {
    const core = this._live('headEnabled');
    this._head('headEnabled', head);
    return core.headEnabled(head);
  }

  /**
   * The attention layer and the probe sequence in the shape
   * {@link Headlab#multiHeadAttention} takes: the heads view shows a trained model from this.
   * @returns {{tokens: string[], X: Float32Array, dModel: number, numHeads: number,
   *   wQ: Float32Array, wK: Float32Array, wV: Float32Array, wO: Float32Array,
   *   bQ: Float32Array, bK: Float32Array, bV: Float32Array, bO: Float32Array}}
   */
  exportModel() {
    const core = this._live('exportModel');
    const p = (name) => core.parameters(name);
    return {
      tokens: this.probe().tokenNames, X: core.probeInputs(),
      dModel: this._shape.dModel, numHeads: this._shape.numHeads,
      wQ: p('wQ'), wK: p('wK'), wV: p('wV'), wO: p('wO'), bQ: p('bQ'), bK: p('bK'), bV: p('bV'), bO: p('bO'),
    };
  }

  /** The trained parameters as bytes; {@link Headlab#loadTrainer} restores an equivalent trainer. */
  save() {
    return this._live('save').save();
  }
}
