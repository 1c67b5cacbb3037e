// The small causal transformer language models (training module): their task table,
// createLanguageModel, loadLanguageModel and the LanguageModel they return.
import { OPTION_KEYS, ablationMask, describe, fromFloat32, requireBool, requireDim, requireObject, requireSeed, unknownTask } from './checks.js';
import { DEFAULT_MAX_THREADS, availableCores } from './cores.js';
import { TrainingSession } from './session.js';
import { doWithoutThreads, endModule, isLoadFailure, loadThreaded, onPageMainThread, threadsUnavailable } from './threaded-module.js';

// Threads a language model may split its batches over: at most this many, and at most batchSize
// (every thread runs at least one sequence).
const MAX_LM_THREADS = 64;

/** The language-model task table, read once from the training module and kept on `lab`. */
/** A text of each task's language, in its vocabulary: what `example` holds in languageTasks(). */
const TASK_EXAMPLES = {
  induction: 'j 4 e p x 2 m q b k r p x 2 m q b k r 0 w z s',
  cricket: 'virat hit the ball with the bat because it was full',
  english: 'the girls near the king eat the cake . anna berg met tom and she was happy . later anna berg smiled .',
};

export async function languageTaskTable(lab) {
  if (!lab._lmTasks) {
    lab._lmTasks = (await lab._trainModule()).languageTaskTable();
    for (const t of lab._lmTasks) {
      t.defaults.learningRate = fromFloat32(t.defaults.learningRate);
      if (TASK_EXAMPLES[t.name]) t.example = TASK_EXAMPLES[t.name];
    }
  }
  return lab._lmTasks;
}

/** Headlab#createLanguageModel. */
export async function createLanguageModel(lab, options) {
  const fn = 'createLanguageModel';
  requireObject(fn, options, OPTION_KEYS[fn]);
  const tasks = await languageTaskTable(lab);
  const names = tasks.map((t) => t.name).join(', ');
  if (options.task === undefined) throw new TypeError(`${fn}: task is required: one of ${names}`);
  if (typeof options.task !== 'string') throw new TypeError(`${fn}: task must be a string (one of ${names}), got ${describe(options.task)}`);
  const spec = tasks.find((t) => t.name === options.task);
  if (!spec) throw new RangeError(`${fn}: task: ${unknownTask(options.task, tasks.map((t) => t.name))}`);
  const d = spec.defaults;
  const dim = (name) => (options[name] === undefined ? d[name] : requireDim(fn, name, options[name]));
  const config = {
    task: spec.name, numLayers: dim('numLayers'), numHeads: dim('numHeads'), dModel: dim('dModel'),
    mlp: options.mlp === undefined ? d.mlp : requireBool(fn, 'mlp', options.mlp),
    seed: options.seed === undefined ? d.seed : options.seed,
    learningRate: options.learningRate === undefined ? d.learningRate : options.learningRate,
    batchSize: dim('batchSize'),
  };
  requireSeed(fn, 'seed', config.seed);
  const threads = resolveThreads(lab, fn, options.threads, config.batchSize);
  if (typeof config.learningRate !== 'number') throw new TypeError(`${fn}: learningRate must be a number, got ${describe(config.learningRate)}`);
  if (!(Number.isFinite(config.learningRate) && config.learningRate > 0 && config.learningRate <= 1)) {
    throw new RangeError(`${fn}: learningRate must be a finite number in (0, 1], got ${config.learningRate}`);
  }
  const replacing = requireReplacing(lab, fn, options.replacing);
  const init = (n) => withCore(lab, fn, n, (core) => core.init(config), (e) => new RangeError(`${fn}: ${e}`),
    (core, module) => new LanguageModel(lab, core, spec, module, n), replacing);
  return options.threads === 'auto' ? orOneThread(lab, threads, init) : init(threads);
}

/**
 * `make(threads)`, and for threads: 'auto', `make(1)` when the threaded module failed to load (a
 * file missing next to headlab_train.wasm, a Worker blocked): the lab remembers why and uses one
 * thread from then on, as createParallelLayer falls back to its Workers.
 */
async function orOneThread(lab, threads, make) {
  if (threads === 1) return make(1);
  try {
    return await make(threads);
  } catch (e) {
    if (!isLoadFailure(e?.cause)) throw e;  // withCore's Error when the threaded module did not load
    doWithoutThreads(lab, e.cause);
    return make(1);
  }
}

/**
 * The `threads` option: undefined → 1; 'auto' → the cores available (at most 8 and at most
 * batchSize) where the threaded training module can run, else 1; a number → that many, which must
 * be at most batchSize, and more than 1 only where threads can run (else an Error saying why).
 */
function resolveThreads(lab, fn, threads, batchSize) {
  if (threads === undefined) return 1;
  if (threads === 'auto') {
    if (lmThreadsUnavailable(lab)) return 1;
    return Math.max(1, Math.min(availableCores(), DEFAULT_MAX_THREADS, batchSize));
  }
  if (typeof threads !== 'number') throw new TypeError(`${fn}: threads must be a positive integer or 'auto', got ${describe(threads)}`);
  requireDim(fn, 'threads', threads);
  if (threads > Math.min(batchSize, MAX_LM_THREADS)) {
    throw new RangeError(`${fn}: threads must be at most ${Math.min(batchSize, MAX_LM_THREADS)} (the batch size${batchSize > MAX_LM_THREADS ? `, capped at ${MAX_LM_THREADS}` : ''}: ` +
      `every thread runs at least one sequence), got ${threads}`);
  }
  if (threads > 1) {
    const why = lmThreadsUnavailable(lab);
    if (why) throw new Error(`${fn}: threads: ${threads} threads cannot run here: ${why}. Pass threads: 'auto' to use them where they can, 1 elsewhere`);
  }
  return threads;
}

/**
 * Why a language model cannot split its batches over threads here, or '': as threadsUnavailable,
 * and never on a page's main thread, where a step would have to block the page while it waits for
 * its threads (the model's methods are synchronous; in a Worker they may wait).
 */
function lmThreadsUnavailable(lab) {
  const why = threadsUnavailable(lab, 'train');
  if (why || !onPageMainThread) return why;
  return "on a page's main thread a step cannot wait for its threads without blocking the page: run the model in a Worker";
}

/**
 * The `replacing` option: a live LanguageModel of this lab, or undefined (→ null).
 */
function requireReplacing(lab, fn, replacing) {
  if (replacing === undefined) return null;
  if (!(replacing instanceof LanguageModel) || replacing._lab !== lab) {
    throw new TypeError(`${fn}: replacing must be a LanguageModel of this lab (the model the new one replaces), got ${describe(replacing)}`);
  }
  if (!replacing._core) throw new TypeError(`${fn}: replacing: that model has been disposed`);
  return replacing;
}

/**
 * Makes a LanguageModelCore and sets it up with `setUp(core)` (→ '' or an error message): in the
 * training module for one thread, in a threaded training module of its own (threads − 1 thread
 * Workers; the calling thread runs the first slice of each batch) for more. `replacing` (a live
 * LanguageModel, or null) is disposed once the new model is made; when it runs on as many threads,
 * the new model is made in its threaded module, whose thread Workers it takes over: no Worker is
 * started (Firefox ESR now and then freezes a Worker that starts one, never at its first). Nothing
 * is left running, and `replacing` is untouched, when it throws.
 */
async function withCore(lab, fn, threads, setUp, error, make, replacing = null) {
  if (threads === 1) {
    const train = await lab._trainModule();
    const core = new train.LanguageModelCore();
    const e = setUp(core, train);
    if (e) {
      core.delete();
      throw error(e);
    }
    const made = make(core, null);
    replacing?.dispose();
    return made;
  }
  // Its module, when it has one of this many threads: both models' cores live in it until the new
  // one is set up; then the old one is deleted (its threads joined, their Workers back in the pool)
  // and the new one's threads take those Workers.
  let module = replacing?._threads === threads ? replacing._module : null;
  const inherited = module !== null;
  if (!inherited) {
    try {
      module = await loadThreaded(lab, 'train', threads - 1);
    } catch (e) {
      throw new Error(`${fn}: threads: the threaded training module failed to load: ${e.message}`, { cause: e });
    }
  }
  let core = null;
  let handedOver = false;
  try {
    core = new module.LanguageModelCore();
    const e = setUp(core, module);
    if (e) throw error(e);
    if (inherited) {
      replacing._giveUpModule();
      handedOver = true;
    }
    const t = core.setThreads(threads);
    if (t) throw new RangeError(`${fn}: ${t}`);
    const made = make(core, module);
    replacing?.dispose();
    return made;
  } catch (e) {
    if (inherited && !handedOver) core?.delete();  // the module stays replacing's
    else endModule(module, core);
    throw e;
  }
}

/** Headlab#loadLanguageModel. */
export async function loadLanguageModel(lab, bytes, options = {}) {
  const fn = 'loadLanguageModel';
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${fn}: bytes must be a Uint8Array or ArrayBuffer (a saved language model), got ${describe(bytes)}`);
  if (bytes.length > 64 * 2 ** 20) throw new RangeError(`${fn}: bytes: a saved language model is at most 64 MiB, got ${bytes.length} bytes`);
  requireObject(fn, options, OPTION_KEYS[fn]);
  const replacing = requireReplacing(lab, fn, options.replacing);
  const tasks = await languageTaskTable(lab);
  // The batch size is the file's: read it from a one-thread load first when threads are asked for.
  let threads = 1;
  if (options.threads !== undefined && options.threads !== 1) {
    const probe = await loadLanguageModel(lab, bytes);
    try {
      threads = resolveThreads(lab, fn, options.threads, probe.config().batchSize);
    } catch (e) {
      probe.dispose();
      throw e;
    }
    if (threads === 1) {
      replacing?.dispose();
      return probe;
    }
    probe.dispose();
  }
  const load = (core, module) => {
    const base = module.reserveFile(Math.max(bytes.length, 1));
    if (!base) return 'too large for the wasm heap';
    module.HEAPU8.set(bytes, base);
    return core.load(base, bytes.length);
  };
  const make = (n) => withCore(lab, fn, n, load, (e) => new RangeError(`${fn}: bytes: ${e}`),
    (core, module) => new LanguageModel(lab, core, tasks.find((t) => t.name === core.taskName()), module, n), replacing);
  return options.threads === 'auto' ? orOneThread(lab, threads, make) : make(threads);
}

/**
 * A causal transformer language model, made by {@link Headlab#createLanguageModel}
 * or {@link Headlab#loadLanguageModel}. Every method is synchronous; run it in a
 * Worker to keep a page responsive. Results are plain objects and typed arrays
 * (copies), so they can be posted between threads.
 *
 * Sequences: methods that take `tokensOrText` accept a string of
 * whitespace-separated vocabulary words, or the words as a string[] or their
 * token ids as an Int32Array or number[]; all three alike. Every sequence the
 * model reads starts with the task's start token: it is put first unless the
 * sequence already begins with it, so 'virat hit', ['virat', 'hit'] and
 * ['<s>', 'virat', 'hit'] are the same sequence. The tokens the model reserves
 * are refused anywhere else (a RangeError naming the token and its position):
 * the start token after position 0 and the pad token anywhere; the stop token
 * (cricket's ".") is an ordinary word of the text. A sequence holds 1..seqLen
 * tokens, the start token included; because the model is causal, a shorter one
 * gives exactly what the first positions of a longer one would. Text is read
 * case-insensitively (every vocabulary is lower case) and the sentence marks
 * . , ! ? are words of their own: 'Virat hit the ball.' is 'virat hit the ball .'.
 *
 * The model also has the methods of a {@link PretrainedModel} that
 * <headlab-model-explorer> drives, with the same signatures and result shapes:
 * `info`, `run`, `headScores(options)` and `generate(prompt, options)`. Those
 * return Promises, as a PretrainedModel's do (the work itself is synchronous).
 */
export class LanguageModel extends TrainingSession {
  /** @private */
  constructor(lab, core, spec, module = null, threads = 1) {
    super(lab, core, 'LanguageModel', 'model', module);
    /** @private */
    this._threads = threads;
    /** @private */
    this._spec = spec;
    /** @private */
    this._config = core.config();
    this._config.learningRate = fromFloat32(this._config.learningRate);
    /** @private word → id */
    this._ids = new Map(spec.vocabulary.map((w, i) => [w, i]));
    /** @private weights held (floats) */
    this._parameters = core.parameters();
  }

  /** @private An integer in 0..count-1. */
  _index(fn, name, value, count) {
    const msg = `LanguageModel.${fn}: ${name} must be an integer in 0..${count - 1}, got ${describe(value)}`;
    if (typeof value !== 'number') throw new TypeError(msg);
    if (!Number.isInteger(value) || value < 0 || value >= count) throw new RangeError(msg);
  }

  /** @private Where to see the vocabulary, for error messages. */
  _vocabularyHint() {
    return `the words of task ${this._spec.name} are in model.vocabulary and lab.languageTasks()`;
  }

  /** @private Text → { ids, tokens }: the model's sequence, start token first, naming `name` in errors. */
  _tokenize(fn, name, text) {
    if (typeof text !== 'string') {
      throw new TypeError(`LanguageModel.${fn}: ${name} must be a string of words separated by spaces, got ${describe(text)}`);
    }
    const words = text.toLowerCase().replace(/([.,!?])/g, ' $1 ').split(/\s+/).filter((w) => w.length > 0);
    this._checkLength(fn, name, words.length - (words[0] === this._spec.startToken ? 1 : 0), 'words');
    const ids = words.map((w, i) => {
      const id = this._ids.get(w);
      if (id === undefined) {
        throw new RangeError(`LanguageModel.${fn}: ${name}: unknown word ${JSON.stringify(w.length > 40 ? w.slice(0, 40) + '…' : w)} ` +
          `at word ${i + 1}; ${this._vocabularyHint()}`);
      }
      return id;
    });
    return this._startFirst(fn, name, ids, (i, token) => `${name}: ${token} at word ${i + 1}`, 'words');
  }

  /**
   * @private The user's token ids → the model's sequence: the start token first (put there unless
   * ids[0] is it), no reserved token elsewhere (`where(i, token)` names it and position i in errors), at most seqLen;
   * `noun` is what the user gave ('words', 'tokens').
   */
  _startFirst(fn, name, ids, where, noun) {
    const { startToken, padToken, name: task } = this._spec;
    const start = this._ids.get(startToken);
    const pad = padToken === null ? -1 : this._ids.get(padToken);
    const given = ids[0] === start ? 1 : 0;
    for (let i = given; i < ids.length; i++) {
      if (ids[i] !== start && ids[i] !== pad) continue;
      const [token, role] = ids[i] === start ? [startToken, 'start token, which the model puts at position 0 only']
        : [padToken, 'pad token, which fills a sequence after its end'];
      throw new RangeError(`LanguageModel.${fn}: ${where(i, JSON.stringify(token))} is task ${task}'s ${role}; ` +
        'the model reserves it: leave it out of the text');
    }
    const n = ids.length - given;
    this._checkLength(fn, name, n, noun);
    const out = new Int32Array(n + 1);
    out[0] = start;
    for (let i = given; i < ids.length; i++) out[i - given + 1] = ids[i];
    const tokens = Array.from(out, (id) => this._spec.vocabulary[id]);
    return { ids: out, tokens };
  }

  /** @private A RangeError when `n` tokens besides the start token do not fit the sequence. */
  _checkLength(fn, name, n, noun) {
    const { seqLen, startToken, name: task } = this._spec;
    if (n + 1 <= seqLen) return;
    throw new RangeError(`LanguageModel.${fn}: ${name} has ${n} ${noun}; with the start token ${startToken} that is ` +
      `${n + 1} tokens, more than the sequence length ${seqLen} of task ${task} (at most ${seqLen - 1} ${noun} besides the start token)`);
  }

  /** @private tokensOrText → Int32Array of ids, 1..seqLen long, the start token first. */
  _sequence(fn, value, name = 'tokensOrText') {
    if (typeof value === 'string') return this._tokenize(fn, name, value).ids;
    const { seqLen, vocabulary } = this._spec;
    const what = `a string of words, an Int32Array or number[] of token ids (0..${vocabulary.length - 1}), or a string[] of words`;
    if (!(value instanceof Int32Array) && !Array.isArray(value)) {
      throw new TypeError(`LanguageModel.${fn}: ${name} must be ${what}, got ${describe(value)}`);
    }
    if (value.length > seqLen) {
      throw new RangeError(`LanguageModel.${fn}: ${name} must hold at most ${seqLen} tokens (the sequence length of task ${this._spec.name}, ` +
        `the start token included), got ${value.length}`);
    }
    const ids = new Int32Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const x = value[i];
      if (typeof x === 'string') {
        const id = this._ids.get(x);
        if (id === undefined) throw new RangeError(`LanguageModel.${fn}: ${name}[${i}]: unknown word ${JSON.stringify(x.slice(0, 40))}; ${this._vocabularyHint()}`);
        ids[i] = id;
      } else if (typeof x === 'number') {
        if (!Number.isInteger(x) || x < 0 || x >= vocabulary.length) {
          throw new RangeError(`LanguageModel.${fn}: ${name}[${i}] must be a token id in 0..${vocabulary.length - 1}, got ${x}`);
        }
        ids[i] = x;
      } else {
        throw new TypeError(`LanguageModel.${fn}: ${name}[${i}] must be a token id or a word, got ${describe(x)}`);
      }
    }
    return this._startFirst(fn, name, ids, (i, token) => `${name}[${i}]: ${token}`, 'tokens').ids;
  }

  /** @private Copies ids into the model's token buffer. */
  _put(core, ids) {
    core.tokenBuffer().set(ids);
  }

  /**
   * What the model is, in the shape of {@link PretrainedModel#info}: `{ architecture: 'headlab',
   * kind: 'decoder', task, numLayers, numHeads, numKeyValueHeads, dModel, vocabSize, contextLength,
   * parameters, dtype: 'F32', bytes }` (every head has its own keys and values, so numKeyValueHeads
   * is numHeads; contextLength is the task's seqLen, the start token included; bytes the weights held).
   * A new object each call.
   * @returns {import('../headlab').LanguageModelInfo}
   * @example
   * lm.info;  // { architecture: 'headlab', kind: 'decoder', task: 'cricket', numLayers: 2, numHeads: 4, … }
   */
  get info() {
    this._live('info');
    const { numLayers, numHeads, dModel } = this._config;
    return {
      architecture: 'headlab', kind: 'decoder', task: this._spec.name, numLayers, numHeads, numKeyValueHeads: numHeads, dModel,
      vocabSize: this._spec.vocabulary.length, contextLength: this._spec.seqLen, parameters: this._parameters,
      dtype: 'F32', bytes: 4 * this._parameters,
    };
  }

  /** The task this model learns: the entry of {@link Headlab#languageTasks} (a copy). */
  get task() {
    this._live('task');
    return structuredClone(this._spec);
  }

  /**
   * `config()`: the options the model was made with (every default filled in) and `step`, the
   * steps taken so far — `{ task, numLayers, numHeads, dModel, mlp, seed, learningRate, batchSize,
   * step }`, a new object each call, the shape of {@link Trainer#config}. `learningRate` reads as
   * given (0.003, not the float32 0.003000000026077032), after save and load too.
   *
   * Deprecated, until 0.4: in 0.2 `config` was a property holding those options (without `step`);
   * reading one off it (`lm.config.dModel`, `{ ...lm.config }`) still works, because `config` is a
   * function that carries them. It cannot be posted or cloned: post `lm.config()`.
   * @returns {() => import('../headlab').LanguageModelConfig & {step: number}}
   * @example
   * lm.config();              // { task: 'induction', numLayers: 2, …, learningRate: 0.01, batchSize: 64, step: 0 }
   * lm.config().learningRate; // 0.01
   */
  get config() {
    this._live('config');
    const config = () => ({ ...this._config, step: this._live('config').steps() });
    return Object.assign(config, this._config);
  }

  /** The task's token names; a token's id is its index (a copy). */
  get vocabulary() {
    this._live('vocabulary');
    return this._spec.vocabulary.slice();
  }

  /**
   * How many threads each step's batch is split over (the `threads` option; 0 once disposed).
   * With more than one, a step equals the one-thread step up to float rounding, not bit for bit.
   */
  get threads() {
    return this._core ? this._threads : 0;
  }

  /** Training steps taken in all, including those of a loaded file. */
  get steps() {
    return this._live('steps').steps();
  }

  /**
   * Runs `n` Adam steps (default 1), each on a fresh batch of the task.
   * @param {number} [n] 1..1000000
   * @returns {{step: number, loss: number}} `step` is the total so far, `loss` the last batch's
   * @throws {RangeError} `LanguageModel.step: training diverged at step N with learningRate X (adam): …`
   *   when a step's loss is not finite or its update would make a weight non-finite or larger than 1e4
   *   (the one-layer Trainer's rule): that step is not taken, the model keeps its state from step N − 1
   *   (evaluate, attention, save … go on working) and every later step() throws the same; see divergence()
   * @example
   * lm.step(100);  // { step: 100, loss: 3.1 }
   */
  step(n) {
    const core = this._live('step');
    const { step, loss, diverged } = core.step(this._count('step', 'n', n, 1, 1e6));
    if (diverged) throw new RangeError(`LanguageModel.step: ${diverged}`);
    return { step, loss };
  }

  /**
   * null while training is fine; once a step has diverged (see {@link LanguageModel#step}),
   * where and why: `step` is the step that was not taken, `reason` 'loss' or 'update',
   * `message` the text step() throws.
   * @returns {import('../headlab').LanguageModelDivergence | null}
   */
  divergence() {
    const d = this._live('divergence').divergence();
    return d.step === 0 ? null : { ...d, learningRate: fromFloat32(d.learningRate) };
  }

  /**
   * Loss and the task's metric on `n` held-out sequences (default 500), the same
   * sequences on every call and never trained on. `accuracy` is the task's
   * metric (induction: next-token accuracy on the repeated segment's second
   * copy; cricket: the adjective predicted after "it was" belongs to the noun
   * "it" refers to; english: agreementAccuracy); `nextTokenAccuracy` counts every
   * position with a target. The english task adds, at each relation's query on
   * the grammar's own arcs (docs/language-models.md): `agreementAccuracy` (the
   * verb form that agrees with the subject is more probable than the other
   * form), `agreementAccuracyAttractor` and `agreementAccuracyNoAttractor` (arcs
   * with and without a noun of the other number in between),
   * `selectionAccuracy` (the class of nouns the verb selects holds the most
   * probability), `coreferenceAccuracy` (the antecedent's class of predicate
   * adjectives holds the most probability) and `arcs`, how many each counted.
   * @param {number} [n] 1..100000
   * @returns {import('../headlab').LanguageEvaluation}
   * @example
   * english.evaluate().agreementAccuracyAttractor;  // 0.99 for the shipped english model
   */
  evaluate(n) {
    const core = this._live('evaluate');
    return core.evaluate(this._count('evaluate', 'n', n, 500, 1e5));
  }

  /**
   * Every head's detector scores on `n` held-out sequences (default 500),
   * layer-major: mean attention on the previous token, on the token after an
   * earlier occurrence of the current one (induction), on earlier occurrences
   * (duplicateToken), on position 0 (firstToken) and, for cricket, from the
   * pronoun onto its referent (coreference). `label` names the highest score
   * at or above 0.5, or is null. For cricket each head also has `positionPeak`:
   * see {@link LanguageModel#headReport}, which returns these with the baselines.
   * For english every head has the five relation scores of the grammar — the
   * mean weight from the query where a relation is needed to its true target:
   * `agreement` (token before a present-tense verb → the subject's head noun),
   * `selection` (token before a selected object → the verb), `coreference`
   * ("was"/"were" after a pronoun → the antecedent), `induction` (a repeated
   * first name → the last name after its earlier copy), `previousToken` (t →
   * t − 1); `label` names the best relation at or above 0.3 and its kind
   * ('verb → subject · syntax': from the word that looks to the word it looks at,
   * as the arcs go), `relation` its key; {@link LanguageModel#baselines}
   * gives what position alone scores on the same arcs.
   *
   * Given an options object `{ examples? }` instead of n, it answers as
   * {@link PretrainedModel#headScores} does, in a Promise: `{ sequence: null, basis: 'task',
   * examples, scores }`, scores the same entries as above.
   * @param {number} [n] 1..100000
   * @returns {import('../headlab').LanguageHeadScore[]}
   * @example
   * lm.headScores().filter((h) => h.label === 'induction');
   * english.headScores().filter((h) => h.relation === 'agreement');  // the verb → subject heads
   */
  headScores(n) {
    if (n !== null && typeof n === 'object') return this._taskScores(n);
    return this._headReport('headScores', n).heads;
  }

  /**
   * @private headScores({ examples }): the shape of {@link PretrainedModel#headScores}, measured on the
   * task's held-out sequences rather than one random repeated sequence, so `sequence` is null and
   * `basis` 'task'.
   */
  async _taskScores(options) {
    const fn = 'LanguageModel.headScores';
    this._live('headScores');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const examples = this._count('headScores', 'examples', options.examples, 500, 1e5);
    return { sequence: null, basis: 'task', examples, scores: this._headReport('headScores', examples).heads };
  }

  /**
   * {@link LanguageModel#headScores} plus what it takes to judge them:
   * `threshold` (0.5, the score a label needs) and, for cricket,
   * `bestFixedPosition`: the coreference score of an ideal head that looks at one
   * fixed absolute position, or one fixed offset back, whichever is best — the
   * baseline a real coreference head must beat; `bestCoreference`, the best
   * head's coreference score; and per head `positionPeak`, its highest mean
   * weight on one fixed position or offset from the pronoun (a head with
   * coreference near positionPeak and near bestFixedPosition may attend by
   * position rather than by referent).
   * @param {number} [n] 1..100000, default 500
   * @returns {import('../headlab').LanguageHeadReport}
   */
  headReport(n) {
    return this._headReport('headReport', n);
  }

  /** @private */
  _headReport(fn, n) {
    const core = this._live(fn);
    const report = core.headReport(this._count(fn, 'n', n, 500, 1e5));
    report.threshold = fromFloat32(report.threshold);  // 0.3 reads 0.3, not its float
    return report;
  }

  /** @private The core, for a method only the english task has (else an Error naming the task). */
  _english(fn) {
    const core = this._live(fn);
    if (this._spec.name !== 'english') {
      throw new Error(`LanguageModel.${fn}: only the english task has a grammar with known relations; this model's task is ${this._spec.name}`);
    }
    return core;
  }

  /**
   * English only: what position alone scores on the arcs {@link LanguageModel#headScores}
   * uses (`n` held-out sequences, default 500, the same ones), per relation (the keys of
   * headScores): `fixedOffset`, the score of the best "k tokens back" pattern, k chosen
   * after the fact (`offset`); `lastNoun`, the score of attending to the last noun or
   * name at or before the query; `best`, the larger; `arcs`, how many arcs. A head that
   * beats `best` by far tracks the relation, not a position.
   * @param {number} [n] 1..100000
   * @returns {import('../headlab').LanguageBaselines}
   * @throws {Error} when the model's task is not english
   * @example
   * english.baselines().agreement;  // { fixedOffset: 0.23, offset: 4, lastNoun: 0.27, best: 0.27, arcs: 1170 }
   */
  baselines(n) {
    const core = this._english('baselines');
    return core.baselines(this._count('baselines', 'n', n, 500, 1e5));
  }

  /**
   * English only: the grammar's own analysis of a sentence typed in the vocabulary
   * (one or more sentences, each ending in "."; a last sentence without its "." gets one, as learners
   * type them): `tokens` (start token first, as
   * {@link LanguageModel#attention} numbers them) and `arcs`, each `{ relation,
   * query, target, label, answer, class?, foil?, attractor? }` with query and target
   * positions in `tokens`, exactly the arcs headScores averages over.
   * @param {string|Int32Array|number[]|string[]} tokensOrText
   * @returns {import('../headlab').LanguageRelations}
   * @throws {Error} naming the word and position where the text stops being the
   *   language ("word 3 ('run'): the verb does not agree …", positions count the start token as 0),
   *   or when the model's task is not english; RangeError for an unknown word
   * @example
   * english.relations('the keys to the old cabinet are on the table .').arcs
   *   .find((a) => a.relation === 'agreement');  // { query: 6, target: 2, answer: 'are', foil: 'is', attractor: true, … }
   */
  relations(tokensOrText) {
    const core = this._english('relations');
    let ids = this._sequence('relations', tokensOrText);
    const stop = this._spec.vocabulary.indexOf('.');
    const room = ids.length > 1 && ids.length < this._spec.seqLen;
    if (stop >= 0 && room && ids[ids.length - 1] !== stop) ids = Int32Array.from([...ids, stop]);
    this._put(core, ids);
    const r = core.relations(ids.length);
    if (r.error !== undefined) {
      // code 'grammar', params { position, word? (where it stops being the language), stops (the text ends too soon) }
      const at = /word (\d+)(?: \('([^']*)'\))?/.exec(r.error);
      const params = at ? { position: Number(at[1]), word: at[2] ?? null, stops: /stops after/.test(r.error) } : {};
      throw Object.assign(new Error(`LanguageModel.relations: the text is not a sentence of the english grammar: ${r.error} ` +
        '(positions count the start token as 0)'), { code: 'grammar', params });
    }
    return { tokens: Array.from(ids, (i) => this._spec.vocabulary[i]), arcs: r.arcs };
  }

  /**
   * Words → token ids: `text` is split on whitespace, every word must be in the
   * vocabulary, and the start token is put first (unless the text begins with it:
   * 'virat hit' and '<s> virat hit' give the same). The start token after the first
   * word and the pad token anywhere are refused: the model reserves them. The same shape as
   * {@link PretrainedModel#tokenize}: `ids` and their `tokens` (the words, start token
   * first); `words` is the same array under its former name. (Before 0.3, `tokens` held
   * the ids; the methods that take a sequence accept either.)
   * @param {string} text at most seqLen − 1 words
   * @returns {{ids: Int32Array, tokens: string[], words: string[]}}
   * @throws {TypeError} when text is not a string
   * @throws {RangeError} naming an unknown word or a reserved token and its position, or when the text is longer than the sequence
   * @example
   * lm.tokenize('virat hit the ball');  // { ids: Int32Array [0, 3, 9, 13, 14], tokens: ['<s>', 'virat', …], words: (the same) }
   */
  tokenize(text) {
    this._live('tokenize');
    const { ids, tokens } = this._tokenize('tokenize', 'text', text);
    return { ids, tokens, words: tokens };
  }

  /**
   * The attention weights of every layer and head on a sequence of T tokens.
   * Rows are queries, columns keys; every row sums to 1 and is 0 above the
   * diagonal (causal). Heads switched off still show their weights (only their
   * output is dropped), but heads switched off in earlier layers change later ones.
   * @param {string|Int32Array|number[]|string[]} tokensOrText
   * @returns {{tokens: string[], weights: Float32Array, shape: [number, number, number, number]}}
   *   weights `[numLayers, numHeads, T, T]` row-major, as `shape` says
   * @example
   * const { weights, shape: [L, H, T] } = lm.attention('a b c a b c');
   * weights[((1 * H + 0) * T + 5) * T + 3];  // layer 1, head 0, query 5 on key 3
   */
  attention(tokensOrText) {
    const core = this._live('attention');
    const ids = this._sequence('attention', tokensOrText);
    this._put(core, ids);
    const t = ids.length;
    const weights = core.attention(t);
    const shape = [this._config.numLayers, this._config.numHeads, t, t];
    return { tokens: Array.from(ids, (i) => this._spec.vocabulary[i]), weights, shape };
  }

  /**
   * The model's next-token distribution after the last token of the sequence:
   * every vocabulary word with its probability, most probable first (ties by
   * id), or only the first `topK`.
   * @param {string|Int32Array|number[]|string[]} tokensOrText
   * @param {{topK?: number}} [options] topK defaults to the vocabulary size
   * @returns {{token: string, id: number, probability: number}[]}
   * @example
   * lm.predict('virat hit the ball because it was', { topK: 3 });
   * // [{ token: 'full', id: 27, probability: 0.41 }, …]
   */
  predict(tokensOrText, options = {}) {
    const fn = 'LanguageModel.predict';
    const core = this._live('predict');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('predict', tokensOrText);
    const v = this._spec.vocabulary.length;
    const topK = this._count('predict', 'topK', options.topK, v, v);
    this._put(core, ids);
    return this._top(core.predict(ids.length), topK);
  }

  /**
   * One forward pass, as {@link PretrainedModel#run}: `{ ids, tokens, logits, next, attention? }`.
   * `logits` are log-probabilities (the logits shifted by their log-sum-exp: the same softmax) of the
   * last position ([V]), or of every position ([T, V] row-major) with `allLogits`, all from the one
   * pass; row t is what {@link LanguageModel#predict} gives after the first t + 1 tokens. `next` the
   * topK (default 10) most probable next tokens, predict's; `attention` (with `attention: true`)
   * [numLayers, numHeads, T, T], as {@link LanguageModel#attention}. `ablate` switches heads off for
   * this call only (with those setHeadEnabled switched off); the switches are as they were after it.
   * @param {string|Int32Array|number[]|string[]} textOrIds a sequence, start token first (put there when missing)
   * @param {{attention?: boolean, ablate?: Array<{layer: number, head: number}>, allLogits?: boolean, topK?: number}} [options]
   * @returns {Promise<import('../headlab').PretrainedRunResult>}
   * @example
   * const r = await lm.run('virat hit the ball because it was', { attention: true, ablate: [{ layer: 1, head: 2 }] });
   * r.next[0];  // { id, token, probability } with layer 1 head 2 off
   */
  async run(textOrIds, options = {}) {
    const fn = 'LanguageModel.run';
    const core = this._live('run');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('run', textOrIds, 'textOrIds');
    const attention = requireBool(fn, 'attention', options.attention);
    const allLogits = requireBool(fn, 'allLogits', options.allLogits);
    const v = this._spec.vocabulary.length;
    const topK = this._count('run', 'topK', options.topK, Math.min(10, v), v);
    const off = ablationMask(fn, options.ablate, this._config.numLayers, this._config.numHeads);
    this._put(core, ids);
    core.offBuffer().set(off);
    const r = core.run(ids.length, attention);
    const t = ids.length;
    const out = {
      ids, tokens: Array.from(ids, (i) => this._spec.vocabulary[i]),
      logits: allLogits ? r.logProbs : r.logProbs.slice((t - 1) * v), next: this._top(r.probabilities, topK),
    };
    if (attention) out.attention = r.attention;
    return out;
  }

  /** @private The topK entries of p [vocab], most probable first, ties by id (predict's order). */
  _top(p, topK) {
    const order = Array.from({ length: p.length }, (_, i) => i).sort((a, b) => p[b] - p[a] || a - b);
    return order.slice(0, topK).map((i) => ({ token: this._spec.vocabulary[i], id: i, probability: p[i] }));
  }

  /**
   * Continues a prompt token by token. Each token is drawn from the model's
   * next-token distribution sharpened by `temperature` (p^(1/temperature),
   * renormalised; 0 takes the most probable token), with HeadLab's seeded SplitMix64
   * generator (the C++ `Rng(seed, 7)`): the same model, prompt and options give the
   * same tokens. The start token belongs at position 0 only: it is left out of every
   * draw (the others keep their relative odds).
   * Stops after `maxTokens` new tokens, at the sequence length, after the task's
   * stop token (cricket's ".") or before its pad token (never emitted).
   * @param {import('../headlab').GenerateOptions} [options] prompt (a sequence, as every method takes one)
   *   defaults to '' (the start token alone), maxTokens to seqLen, temperature to 1, seed to 1
   * @returns {{tokens: string[], text: string, newTokens: string[]}} `tokens` is the whole sequence
   *   (start token first), `text` its words after the start token (tokenize(text) gives `tokens` back),
   *   `newTokens` the generated ones
   * @example
   * lm.generate({ prompt: 'virat hit the', temperature: 0 }).text;  // 'virat hit the ball because it was full .'
   *
   * Given the prompt first, `generate(prompt, { maxTokens, temperature, seed })` answers as
   * {@link PretrainedModel#generate} does, in a Promise: `{ ids, tokens, promptLength, text }`, `ids`
   * and `tokens` the whole sequence (start token, prompt, new tokens), `text` the new words alone;
   * maxTokens defaults to 20.
   * @example
   * (await lm.generate('virat hit the', { temperature: 0 })).text;  // 'ball because it was full .'
   */
  generate(options = {}, more = undefined) {
    if (typeof options === 'string' || Array.isArray(options) || options instanceof Int32Array) return this._continue(options, more);
    const fn = 'LanguageModel.generate';
    this._live('generate');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('generate', options.prompt ?? '', 'prompt');
    const maxTokens = this._count('generate', 'maxTokens', options.maxTokens, this._spec.seqLen, 1e6);
    const all = this._draw(fn, ids, maxTokens, options);
    const tokens = Array.from(all, (i) => this._spec.vocabulary[i]);
    return { tokens, text: tokens.slice(1).join(' '), newTokens: tokens.slice(ids.length) };
  }

  /** @private generate(prompt, options): PretrainedModel#generate's shape. */
  async _continue(prompt, options = {}) {
    const fn = 'LanguageModel.generate';
    this._live('generate');
    requireObject(fn, options, OPTION_KEYS['PretrainedModel.generate']);
    const ids = this._sequence('generate', prompt, 'prompt');
    const maxTokens = this._count('generate', 'maxTokens', options.maxTokens, 20, this._spec.seqLen - 1);
    const all = this._draw(fn, ids, maxTokens, options);
    const tokens = Array.from(all, (i) => this._spec.vocabulary[i]);
    return { ids: all, tokens, promptLength: ids.length, text: tokens.slice(ids.length).join(' ') };
  }

  /** @private Up to maxTokens new tokens after ids, with options' temperature and seed: the whole sequence. */
  _draw(fn, ids, maxTokens, options) {
    const core = this._core;
    const temperature = options.temperature ?? 1;
    if (typeof temperature !== 'number') throw new TypeError(`${fn}: temperature must be a number ≥ 0, got ${describe(temperature)}`);
    if (!(Number.isFinite(temperature) && temperature >= 0 && temperature <= 100)) {
      throw new RangeError(`${fn}: temperature must be a finite number in [0, 100], got ${temperature}`);
    }
    const seed = options.seed ?? 1;
    requireSeed(fn, 'seed', seed);
    // The C++ sampler (Rng(seed, 7)) never draws the start token, stops after the stop token and
    // before the pad token (cpp/include/headlab/lm_session.hpp).
    this._put(core, ids);
    const n = core.generate(ids.length, Math.min(maxTokens, this._spec.seqLen), temperature, seed);
    return core.tokenBuffer().slice(0, n);
  }

  /**
   * Switches a head off (its output is zeroed before W^O, in training and in
   * every later result) or back on.
   * @param {number} layer 0..numLayers-1
   * @param {number} head 0..numHeads-1
   * @param {boolean} on
   * @example
   * lm.setHeadEnabled(1, 2, false); lm.evaluate().accuracy;  // drops when layer 1 head 2 is the induction head
   */
  setHeadEnabled(layer, head, on) {
    const core = this._live('setHeadEnabled');
    this._index('setHeadEnabled', 'layer', layer, this._config.numLayers);
    this._index('setHeadEnabled', 'head', head, this._config.numHeads);
    if (typeof on !== 'boolean') throw new TypeError(`LanguageModel.setHeadEnabled: on must be a boolean, got ${describe(on)}`);
    core.setHeadEnabled(layer, head, on);
  }

  /** Whether a head is on. */
  headEnabled(layer, head) {
    const core = this._live('headEnabled');
    this._index('headEnabled', 'layer', layer, this._config.numLayers);
    this._index('headEnabled', 'head', head, this._config.numHeads);
    return core.headEnabled(layer, head);
  }

  /**
   * The model as bytes (format in cpp/include/headlab/lm_file.hpp, magic "HLLM",
   * CRC-32 at the end); {@link Headlab#loadLanguageModel} restores it.
   * @returns {Uint8Array}
   * @throws {RangeError} when a weight is not finite or beyond ±1e4 (training keeps its last good state
   *   instead, see step(), so this guards against weights changed some other way)
   */
  save() {
    const r = this._live('save').save();
    if (typeof r === 'string') throw new RangeError(`LanguageModel.save: ${r}`);
    return r;
  }
}
