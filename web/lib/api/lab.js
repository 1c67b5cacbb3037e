// The Headlab class and createHeadlab, which loads it once per flavour. Each public method
// is documented here and carried out by the module of its job.
import { OPTION_KEYS, describe, requireObject } from './checks.js';
import { headsTrial, scalingExperiment } from './experiments.js';
import { checkShape, createLayer, forward, parameterCount } from './forward.js';
import { createLanguageModel, languageTaskTable, loadLanguageModel } from './language-model.js';
import { instantiate, simdSupported } from './load.js';
import { heapLimits } from './memory.js';
import { DEFAULT_MAX_THREADS, availableCores } from './cores.js';
import { checkWorkers, createParallelLayer, defaultMechanism, liveWorkerCount, workersUnavailable } from './parallel.js';
import { findings } from './findings.js';
import { syntaxHeads, syntaxSentences } from './syntax.js';
import { loadPretrained } from './pretrained.js';
import { createTrainer, loadTrainer } from './trainer.js';

/**
 * The loaded module. Get one with {@link createHeadlab}. The forward pass and the
 * experiments are synchronous; the training calls return promises because the
 * first of them loads the training module.
 */
export class Headlab {
  /**
   * @param {any} core the Emscripten module (private)
   * @param {'simd'|'scalar'} flavour which build it is
   * @param {object} options what createHeadlab was given, for loading the training module
   * @param {{train?: Promise, pretrained?: Promise}} [early] modules createHeadlab started loading (options.preload)
   */
  constructor(core, flavour, options, early = {}) {
    this._core = core;
    this._flavour = flavour;
    this._options = options;
    this._early = { ...early };
    this._heap = heapLimits(core);  // { maxMemoryBytes, maxRequestBytes } of the forward-pass module
    this._train = null;  // the training module once loaded
    this._trainPending = null;
    this._lmTasks = null;  // the language-model task table once read
    this._pretrained = null;  // the pretrained-model module once loaded
    this._pretrainedPending = null;
    this._findings = null;  // lab.findings, made on first use
    // Preloaded modules are pending from the start; a failure is reported by the call that uses them.
    if (early.train) this._trainModule().catch(() => {});
    if (early.pretrained) this._pretrainedModule().catch(() => {});
  }

  /** @private The pretrained-model module (headlab_pretrained), loaded on first use. */
  async _pretrainedModule() {
    if (!this._pretrainedPending) {
      this._pretrainedPending = this._load('pretrained').then((m) => { this._pretrained = m; return m; });
      this._pretrainedPending.catch(() => { this._pretrainedPending = null; });
    }
    return this._pretrainedPending;
  }

  /** @private A module's load: the one options.preload started (once), else a new one. */
  _load(module) {
    const early = this._early[module];
    delete this._early[module];
    return early ?? instantiate(module, this._flavour, this._options);
  }

  /** @private The training module, loaded on first use. */
  async _trainModule() {
    if (!this._trainPending) {
      this._trainPending = this._load('train').then((m) => { this._train = m; return m; });
      this._trainPending.catch(() => { this._trainPending = null; });  // a failed load can be retried
    }
    return this._trainPending;
  }

  /**
   * Multi-head attention forward pass:
   * `Concat(head_1..head_h) W^O`, `head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V`.
   *
   * Layouts are row-major. `wQ`, `wK` are `[dModel, numHeads*dK]` with head i in
   * columns `i*dK .. (i+1)*dK-1`; `wV` is `[dModel, numHeads*dV]`; `wO` is
   * `[numHeads*dV, dModel]`. `key` defaults to `query`, `value` to `key`.
   * A query row that can attend to no key (masked out) gets all-zero weights and
   * a zero head output, never NaN.
   *
   * @param {import('../headlab').MultiHeadAttentionOptions} options
   * @returns {import('../headlab').MultiHeadAttentionResult}
   * @throws {TypeError|RangeError} naming the argument, the expected shape and what it got
   * @example
   * const lab = await createHeadlab();
   * const dModel = 4, numHeads = 2, I = new Float32Array([1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]);
   * const r = lab.multiHeadAttention({
   *   query: new Float32Array([3,0,0,1, 0,3,0,1, 1,1,0,1]), dModel, numHeads,
   *   wQ: I, wK: I, wV: I, wO: I, returnWeights: true,
   * });
   * r.output;   // Float32Array(12)
   * r.weights;  // Float32Array(2*3*3), rows sum to 1
   */
  multiHeadAttention(options) {
    return forward(this, 'multiHeadAttention', options, null);
  }

  /**
   * A multi-head attention layer whose weights are checked and copied into the
   * wasm heap once: `layer.forward({ query, key?, value?, keyMask?, headMask?, causal?,
   * returnWeights?, returnIntermediates? })` then only moves the inputs, which is
   * what repeated calls with the same weights (a demo redrawing, a benchmark)
   * want. Same options and layouts as {@link Headlab#multiHeadAttention}.
   * Call `dispose()` when done (it is also freed when garbage-collected).
   * @param {import('../headlab').AttentionLayerOptions} options
   * @returns {AttentionLayer}
   * @throws {TypeError|RangeError} naming the argument, the expected shape and what it got
   * @example
   * const layer = lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I });
   * layer.forward({ query: x }).output;
   * layer.dispose();
   */
  createLayer(options) {
    return createLayer(this, options);
  }

  /**
   * Parameter counts of multi-head attention. With dK = dV = dModel/numHeads the
   * weights total 4·dModel² whatever numHeads is.
   * @param {{dModel: number, numHeads: number, dK?: number, dV?: number, bias?: boolean}} options
   * @returns {{wQ: number, wK: number, wV: number, wO: number, bias: number, weights: number, total: number}}
   * @throws {RangeError} when numHeads does not divide dModel and dK/dV are not given
   * @example
   * lab.parameterCount({ dModel: 512, numHeads: 8 }).total;  // 1048576 = 4 * 512**2
   */
  parameterCount(options) {
    return parameterCount(this, options);
  }

  /**
   * Whether a layer of this shape can be made: null when createLayer accepts
   * dModel, numHeads, dK and dV (multiHeadAttention checks them the same way), else
   * the reason, the message createLayer would throw without its "createLayer: "
   * prefix. The one place a UI asks "does h divide d_model?" (with dK/dV not
   * given, numHeads must divide dModel) and whether the sizes fit one buffer.
   * Nothing is allocated.
   * @param {{dModel: number, numHeads: number, dK?: number, dV?: number}} shape
   * @returns {string | null}
   * @throws {TypeError} when shape is not an object, or names an option other than these four
   * @example
   * lab.checkShape({ dModel: 512, numHeads: 8 });  // null
   * lab.checkShape({ dModel: 16, numHeads: 3 });
   * // 'numHeads must divide dModel when dK/dV are not given: dModel 16 / numHeads 3 is not an integer'
   * lab.checkShape({ dModel: 16, numHeads: 3, dK: 4, dV: 4 });  // null: the head sizes are given
   */
  checkShape(shape) {
    return checkShape(this, shape);
  }

  /**
   * Why scores are divided by √dK: draws queries and keys with i.i.d. N(0, 1)
   * entries (seeded, in wasm) and returns their dot products and the row
   * softmax with and without the scaling, plus summary statistics.
   * @param {{dK: number, numQueries?: number, numKeys?: number, seed?: number}} options
   *   numQueries defaults to 256, numKeys to 64, seed to 1
   * @returns {import('../headlab').ScalingExperimentResult}
   * @example
   * const s = lab.scalingExperiment({ dK: 512 });
   * s.varianceRaw;        // ≈ 512
   * s.varianceScaled;     // ≈ 1
   * s.maxWeightUnscaled;  // close to 1: softmax saturates without the scaling
   */
  scalingExperiment(options) {
    return scalingExperiment(this, options);
  }

  /**
   * The training tasks, as a table: name, description, seqLen, vocab,
   * numRelations, queryPosition, relationPositions (-1 = varies per example),
   * relationNames, tokenNames. Loads the training module on first use.
   * @returns {Promise<import('../headlab').TaskDescription[]>}
   * @example
   * (await lab.tasks()).map((t) => t.name);  // ['two-relations', 'three-relations', 'four-relations', 'pronoun']
   */
  async tasks() {
    return (await this._trainModule()).taskTable();
  }

  /**
   * A training session: a synthetic task, a one-layer multi-head attention model
   * (token + position embedding → MHA with residual → one read-out per relation)
   * and its optimizer. Call `dispose()` when done. The first call loads the
   * training module (headlab_train.wasm); the trainer's own methods are synchronous.
   * @param {import('../headlab').TrainerOptions} [options]
   * @returns {Promise<Trainer>} rejects with a TypeError or RangeError naming the bad option
   * @example
   * const t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, seed: 7 });
   * t.step(500);                 // { step: 500, loss, accuracy }
   * t.evaluate(1000).accuracy;   // close to 1 once both heads have specialised
   * t.dispose();
   */
  async createTrainer(options = {}) {
    return createTrainer(this, options);
  }

  /**
   * Restores a trainer from the bytes of `trainer.save()` (format documented in
   * cpp/include/headlab/trainer.hpp). Adam's moments are not saved.
   * @param {Uint8Array} bytes
   * @returns {Promise<Trainer>} rejects with a TypeError or RangeError when the bytes are not a valid HeadLab model file
   */
  async loadTrainer(bytes) {
    return loadTrainer(this, bytes);
  }

  /**
   * One trial of the choosing-h experiment: at a fixed `dModel`, trains the
   * one-layer trainer with `numHeads` heads (dK = dModel / numHeads) on `task`
   * for `steps` Adam steps, then measures it on `evalExamples` held-out
   * examples. `relationsWithOwnHead` counts the relations some head gives at
   * least half its attention (the benefit of more heads); on the `lookup` task
   * `relationAccuracy[0]` needs query–key matching by content, which a tiny dK
   * cannot do (the cost). Deterministic for given options in a given build.
   * Loads the training module on first use; the trial itself is synchronous
   * inside the promise (seconds at the defaults), so call it from a Worker.
   * @param {import('../headlab').HeadsTrialOptions} options
   * @returns {Promise<import('../headlab').HeadsTrialResult>}
   * @example
   * const r = await lab.headsTrial({ numHeads: 4 });   // lookup, dModel 16, seed 1, 4000 steps
   * r.dK;                    // 4
   * r.relationsWithOwnHead;  // up to 4: one head per relation
   */
  async headsTrial(options) {
    return headsTrial(this, options);
  }

  /**
   * The language-model tasks, as a table: name, description, metric (what
   * `evaluate().accuracy` measures), seqLen, vocabulary (token names; a token's
   * id is its index), startToken (at position 0 of every sequence), padToken
   * (or null), stopToken (generation stops after it, or null) and the defaults
   * {@link Headlab#createLanguageModel} starts from (with `steps`, a run long
   * enough for the task's heads to form). Loads the training module on first use.
   * @returns {Promise<import('../headlab').LanguageTask[]>} a fresh copy on every call
   * @example
   * const [induction] = await lab.languageTasks();
   * induction.seqLen;             // 24
   * induction.defaults.numLayers; // 2
   */
  async languageTasks() {
    return structuredClone(await languageTaskTable(this));
  }

  /**
   * A small causal transformer language model (token + position embedding,
   * `numLayers` pre-LayerNorm blocks of causal multi-head attention, an MLP when
   * `mlp`, an unembedding) trained with Adam on a task of
   * {@link Headlab#languageTasks}. `task` is required; every other option
   * defaults to the task's `defaults` (seed too: one on which the task's heads
   * form in browsers). The same options give the same
   * losses, step for step. Call `dispose()` when done.
   *
   * `threads` (default 1) splits each step's batch over that many threads of a
   * threaded training module of the model's own (pthreads: Node, and Workers of
   * cross-origin isolated pages; not a page's main thread, which must not wait
   * for threads); `'auto'` takes the cores available (at
   * most 8 and at most batchSize) where threads can run and 1 elsewhere. A step
   * on k threads equals the one-thread step up to float rounding, not bit for
   * bit, so runs with different `threads` drift apart slowly; the default keeps
   * every run reproducible. `model.threads` says how many are used.
   * @param {import('../headlab').LanguageModelOptions} options
   * @returns {Promise<LanguageModel>} rejects with a TypeError or RangeError naming the bad option,
   *   or an Error when `threads` > 1 cannot run here (saying why)
   * @example
   * const lm = await lab.createLanguageModel({ task: 'induction', seed: 3 });
   * lm.step(300);                 // { step: 300, loss }
   * lm.evaluate().accuracy;       // next-token accuracy on the repeated segment
   * lm.attention('a b c a b c');  // { tokens, weights, shape: [2, 4, 7, 7] }
   * lm.dispose();
   */
  async createLanguageModel(options) {
    return createLanguageModel(this, options);
  }

  /**
   * Restores a language model from the bytes of `model.save()` (format
   * documented in cpp/include/headlab/lm_file.hpp): same task, config, seed,
   * weights, head switches and step count. Adam's moments are not saved: further
   * training restarts them from zero. `options.threads` as for
   * {@link Headlab#createLanguageModel} (at most the file's batchSize).
   * @param {Uint8Array|ArrayBuffer} bytes
   * @param {{threads?: number|'auto'}} [options]
   * @returns {Promise<LanguageModel>} rejects with a TypeError when bytes is not a Uint8Array or ArrayBuffer,
   *   a RangeError (an Error) whose message names what is wrong when the file is not a valid language model
   * @example
   * const copy = await lab.loadLanguageModel(lm.save());
   */
  async loadLanguageModel(bytes, options) {
    return loadLanguageModel(this, bytes, options);
  }

  /**
   * A pretrained GPT-2 (`GPT2LMHeadModel`) or GPT-Neo (`GPTNeoForCausalLM`) checkpoint in the
   * Hugging Face layout: config.json, model.safetensors (float32, float16 or bfloat16; or
   * model.safetensors.index.json and its shards) and tokenizer.json. `source` is a repository id
   * ('openai-community/gpt2', fetched from `${hubUrl}/${id}/resolve/${revision}/${file}`), the URL
   * of a folder holding the files, the files themselves (a FileList or File[], matched by name),
   * or `{ config, weights, tokenizer }` (objects, strings, ArrayBuffers, Uint8Arrays or Blobs).
   *
   * The weights stream straight into the WebAssembly module's memory; a model that cannot fit
   * (weights plus the activations of 256 tokens, within the module's 4 GiB, or less where the
   * browser lets a memory grow less far) or whose files are
   * larger than `maxBytes` is refused from the sizes the server announces, before its weights are
   * downloaded. `onProgress({ file, loaded, total })` follows every file (`total` null when the
   * server does not say); `signal` cancels (the promise rejects with an AbortError and nothing
   * stays allocated). In browsers the files are kept in the Cache API (`cache`, default true), so
   * a second visit loads them with no request, offline too. The first call loads the engine
   * (headlab_pretrained.wasm) and the tokenizer library (gen/tokenizers.mjs).
   * @param {string|URL|FileList|File[]|import('../headlab').PretrainedObjects} source
   * @param {import('../headlab').LoadPretrainedOptions} [options]
   * @returns {Promise<import('./pretrained.js').PretrainedModel>} rejects with a TypeError or RangeError
   *   naming a bad argument, a RangeError for a model beyond maxBytes or memory, an Error naming the file
   *   (and the tensor or field) for a missing, damaged or unsupported one, an AbortError when cancelled
   * @example
   * const model = await lab.loadPretrained('openai-community/gpt2', { onProgress: (p) => console.log(p.file, p.loaded, p.total) });
   * const r = await model.run('Virat hit the ball because it was full and outside off', { topK: 5 });
   * r.next.map((n) => n.token);
   * model.dispose();
   */
  async loadPretrained(source, options) {
    return loadPretrained(this, source, options);
  }

  /**
   * Prompt sets and checks for the interpretability papers' findings (issue 35; docs/findings.md).
   * `ioiPrompts({ n, seed })`: indirect-object prompts in Wang et al. 2022's form, clean and corrupted (pure
   * data). `syntaxSentences({ n, seed })`: the English grammar's sentences with their dependencies
   * (determiner, subject, object, coreference; loads the training module). `syntaxHeads({ model, sentences })`:
   * every head of a loaded model scored against those dependencies, with the best fixed offset beside it.
   * @returns {import('../headlab').Findings}
   * @example
   * const prompts = lab.findings.ioiPrompts({ n: 8, seed: 1 });
   * prompts[0].clean;   // 'When … and … went to the …, … gave a … to'
   * prompts[0].answer;  // the indirect object, e.g. ' Mary'
   * const sentences = await lab.findings.syntaxSentences({ n: 20 });
   * sentences[0].arcs[0];  // { relation: 'determiner', dependent: 0, head: 1 }
   */
  get findings() {
    this._findings ??= Object.freeze({
      ioiPrompts: findings.ioiPrompts,
      syntaxSentences: (options) => syntaxSentences(this, options),
      syntaxHeads: (options) => syntaxHeads(options),
    });
    return this._findings;
  }

  /**
   * What is running: `flavour` is 'simd' or 'scalar' (the fallback for engines
   * without WebAssembly SIMD). `memoryBytes` is the size of the forward-pass
   * module's wasm heap, `heapInUseBytes` what malloc has handed out there; the
   * `training*` fields are the same for the training module (0 until it loads).
   * `parallel` says what {@link Headlab#createParallelLayer} would use: `mechanism`
   * ('pthreads' where isolation allows, else 'workers'; 'calling-thread' where no Worker can start, e.g. a page on
   * another origin than HeadLab whose Content-Security-Policy refuses blob: Workers, with `reason` saying why in
   * English and `reasonCode` by a stable code, e.g. 'csp') and
   * `defaultThreads` (the cores available, at most 8, or 1 on the calling thread; a layer also uses at most numHeads), with `cores`.
   * @returns {import('../headlab').HeadlabInfo}
   * @example
   * lab.info().simd;  // true on the SIMD build
   */
  info() {
    const i = this._core.info();
    return {
      version: i.version, flavour: this._flavour, simd: i.simd, isa: i.isa,
      memoryBytes: this._core.HEAPU8.length, heapInUseBytes: i.heapInUse, maxMemoryBytes: this._heap.maxMemoryBytes,
      trainingLoaded: this._train !== null,
      trainingMemoryBytes: this._train ? this._train.HEAPU8.length : 0,
      trainingHeapInUseBytes: this._train ? this._train.heapInUse() : 0,
      parallel: this._parallelInfo(),
    };
  }

  /**
   * @private info().parallel: the mechanism createParallelLayer would use, its default threads, and
   * why it runs on one thread when it does.
   */
  _parallelInfo() {
    const mechanism = defaultMechanism(this);
    if (mechanism === 'calling-thread') {
      const { code, reason } = workersUnavailable(this);
      return { mechanism, defaultThreads: 1, cores: availableCores(), reason, reasonCode: code };
    }
    return { mechanism, defaultThreads: Math.min(availableCores(), DEFAULT_MAX_THREADS), cores: availableCores() };
  }

  /** Live Embind handles in the modules loaded; 0 when nothing leaked (for tests). */
  liveHandleCount() {
    return this._core.count_emval_handles() + (this._train ? this._train.count_emval_handles() : 0) +
      (this._pretrained?.count_emval_handles ? this._pretrained.count_emval_handles() : 0);
  }

  /**
   * A multi-head attention layer whose forward pass runs on several cores, by one
   * of two mechanisms (`layer.mechanism` says which; `mechanism: 'pthreads' |
   * 'workers'` asks for one, 'auto' by default).
   *
   * 'pthreads', where SharedArrayBuffer and cross-origin isolation allow (Node,
   * isolated pages and their Workers): the threads build (gen/headlab_core_threads.*,
   * looked for next to headlab_core.wasm) shares the pass among `threads` threads
   * of one wasm module, which take its heads, then blocks of query rows, one at a
   * time (a thread the system holds up delays one item, not a share fixed in
   * advance); inputs and outputs stay in its shared memory, and the
   * calling thread waits for the threads as createLayer's forward waits for its one.
   * Its thread Workers load from a same-origin URL, so a strict CSP allows them.
   *
   * 'workers', everywhere else (or when the threads build is not found): each
   * of `threads` Workers (module Workers in browsers, worker_threads in Node)
   * loads the module and holds a contiguous slice of the heads (their columns of
   * W^Q, W^K, W^V, their rows of W^O; b^O in the first one), and the calling
   * thread sums the partial outputs. `forward` takes {@link AttentionLayer#forward}'s
   * options and resolves to the same result, within float rounding (the output
   * is summed in a different order). The options are checked here, before
   * anything is posted, with the same errors as createLayer and forward.
   *
   * `threads` defaults to the cores available (navigator.hardwareConcurrency,
   * os.availableParallelism() in Node), at most 8 and at most numHeads; a larger
   * value is lowered to numHeads (`layer.threads` says what runs). `threads: 1`
   * still runs in one Worker, so the calling thread stays free. No
   * cross-origin isolation is needed. When headlab.js is on another origin than the page (a CDN),
   * each Worker is a same-origin blob: Worker that imports the script; where the page's
   * Content-Security-Policy refuses those, 'auto' falls back to one thread, the calling one
   * (`layer.mechanism` 'calling-thread', `layer.reason` and `layer.reasonCode`, and info().parallel says the same). The Worker script is
   * headlab-parallel-worker.js, loaded from next to headlab.js (same origin, so a
   * strict Content-Security-Policy allows it). Call `dispose()` when done: it ends
   * the Workers (they are not ended by garbage collection; in Node they do not keep
   * the process alive while idle).
   * @param {import('../headlab').ParallelLayerOptions} options createLayer's options and `threads`
   * @returns {Promise<ParallelLayer>} rejects with a TypeError or RangeError naming the bad option,
   *   or an Error when a Worker cannot start (no Worker is left running then)
   * @example
   * const layer = await lab.createParallelLayer({ dModel: 512, numHeads: 8, wQ, wK, wV, wO, threads: 2 });
   * const { output } = await layer.forward({ query: x, causal: true });
   * layer.mechanism;  // 'pthreads' in Node and on isolated pages, else 'workers'
   * await layer.dispose();
   */
  async createParallelLayer(options) {
    return createParallelLayer(this, options);
  }

  /**
   * Workers started by {@link Headlab#createParallelLayer} and thread Workers of language models with
   * `threads` > 1 that have not ended yet (for tests).
   */
  liveWorkerCount() {
    return liveWorkerCount();
  }
}

const cached = new Map();  // flavour → Promise<Headlab>

/**
 * Loads the WebAssembly module once per flavour and returns the shared {@link Headlab}.
 * By default the SIMD build is loaded where the engine runs WebAssembly SIMD
 * and the scalar build elsewhere; `lab.info().flavour` says which one runs.
 * @param {import('../headlab').CreateHeadlabOptions} [options]
 * @returns {Promise<Headlab>}
 * @example
 * import { createHeadlab } from './web/lib/headlab.js';
 * const lab = await createHeadlab();
 * console.log(lab.info().flavour);  // 'simd' in every current browser and in Node
 */
export function createHeadlab(options = {}) {
  try {
    requireObject('createHeadlab', options, OPTION_KEYS.createHeadlab);
  } catch (e) {
    return withAwaitHint(Promise.reject(e));
  }
  const wanted = options.flavour ?? 'auto';
  if (wanted !== 'auto' && wanted !== 'simd' && wanted !== 'scalar') {
    return Promise.reject(new RangeError(`createHeadlab: flavour must be 'auto', 'simd' or 'scalar', got ${describe(wanted)}`));
  }
  const flavour = wanted === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : wanted;
  if (flavour === 'simd' && !simdSupported()) {
    return Promise.reject(new Error("createHeadlab: this engine does not run WebAssembly SIMD; use flavour 'auto' or 'scalar'"));
  }
  const preload = options.preload ?? [];
  if (!Array.isArray(preload) || !preload.every((m) => m === 'train' || m === 'pretrained')) {
    return withAwaitHint(Promise.reject(new TypeError(`createHeadlab: preload must be an array of 'train' and 'pretrained' (modules to load beside the forward pass), got ${describe(preload)}`)));
  }
  if (!cached.has(flavour)) {
    // Modules asked for in preload load beside the forward-pass one, not after it.
    const early = {};
    for (const m of new Set(preload)) {
      early[m] = instantiate(m, flavour, options);
      early[m].catch(() => {});  // reported by the call that uses it
    }
    // Beside the load: whether this page lets createParallelLayer's Workers start (info().parallel).
    const pending = withAwaitHint(Promise.all([instantiate('core', flavour, options), checkWorkers()])
      .then(([core]) => new Headlab(core, flavour, options, early)));
    pending.catch(() => { cached.delete(flavour); });  // a failed load can be retried
    cached.set(flavour, pending);
  } else if (preload.length) {
    cached.get(flavour).then((lab) => {
      for (const m of preload) (m === 'train' ? lab._trainModule() : lab._pretrainedModule()).catch(() => {});
    }, () => {});
  }
  return cached.get(flavour);
}

/**
 * createHeadlab() returns a Promise. Calling a Headlab method on it (a forgotten
 * `await`) would fail with "… is not a function"; instead the Promise answers
 * with what to write.
 */
function withAwaitHint(promise) {
  for (const name of Object.getOwnPropertyNames(Headlab.prototype)) {
    if (name === 'constructor' || name.startsWith('_')) continue;
    Object.defineProperty(promise, name, {
      get() {
        throw new TypeError(`createHeadlab() returns a Promise, not the instance: write \`const lab = await createHeadlab()\`, then lab.${name}(…)`);
      },
    });
  }
  return promise;
}
