// Type declarations for HeadLab's JavaScript API (web/lib/headlab.js).
//
// Results are typed arrays whose buffer type is ArrayBuffer (TypeScript >= 5.7 takes it as a type argument): the
// API always returns copies, never views of the wasm heap (which is a SharedArrayBuffer in the threads
// builds), so `new Blob([model.save()])` and `crypto.subtle.digest('SHA-256', r.output)` compile.
// TypeScript < 5.7 reads web/lib/ts5.6/headlab.d.ts instead (package.json `typesVersions` and `types@<5.7`),
// this file without the type arguments, written by tools/types-compat.mjs.

// `Symbol.dispose` and `Symbol.asyncDispose` (explicit resource management: `using`, `await using`) for
// `lib` settings that predate them, such as ES2022 + DOM; the same declarations TypeScript's
// esnext.disposable lib and @types/node make.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
    readonly asyncDispose: unique symbol;
  }
  interface Disposable {
    [Symbol.dispose](): void;
  }
  interface AsyncDisposable {
    [Symbol.asyncDispose](): PromiseLike<void>;
  }
  // The platform types the API takes (files, URLs, abort signals), so a Node project without the DOM
  // lib (`lib: ["es2022"]`, no @types/node) compiles: empty declarations merge with the DOM lib's or
  // @types/node's where those are present, and change nothing there.
  interface Blob {}
  interface File extends Blob {}
  interface FileList {}
  interface URL {}
  interface AbortSignal {}
}

/**
 * Options of {@link Headlab.multiHeadAttention}. All matrices are flat, row-major Float32Arrays.
 *
 * - `wQ`, `wK`: `[dModel, numHeads*dK]`; columns `i*dK .. (i+1)*dK-1` are head i's W_i.
 * - `wV`: `[dModel, numHeads*dV]`; `wO`: `[numHeads*dV, dModel]`.
 */
export interface MultiHeadAttentionOptions {
  /** `[Tq, dModel]` */
  query: Float32Array;
  /** `[Tk, dModel]`; defaults to `query` (self-attention). */
  key?: Float32Array;
  /** `[Tk, dModel]`; defaults to `key`. */
  value?: Float32Array;
  dModel: number;
  numHeads: number;
  /** Per-head query/key width; default `dModel / numHeads`. */
  dK?: number;
  /** Per-head value width; default `dModel / numHeads`. */
  dV?: number;
  wQ: Float32Array;
  wK: Float32Array;
  wV: Float32Array;
  wO: Float32Array;
  /** `[numHeads*dK]` */
  bQ?: Float32Array;
  /** `[numHeads*dK]` */
  bK?: Float32Array;
  /** `[numHeads*dV]` */
  bV?: Float32Array;
  /** `[dModel]` */
  bO?: Float32Array;
  /** Query i sees key j only where j <= i. Requires Tq == Tk. */
  causal?: boolean;
  /** `[Tk]`; 0 = padding, never attended. */
  keyMask?: Uint8Array;
  /**
   * `[numHeads]`; 0 switches that head's output off before W^O: the output is what W^O with
   * that head's d_v rows zeroed gives, computed without a copy of W^O. Its weights and head
   * output are still reported.
   */
  headMask?: Uint8Array;
  /** Also return the attention weights. */
  returnWeights?: boolean;
  /** Also return every step of the pipeline. */
  returnIntermediates?: boolean;
}

/** The weights of {@link Headlab.createLayer}: the weight part of {@link MultiHeadAttentionOptions}. */
export type AttentionLayerOptions = Pick<MultiHeadAttentionOptions,
  'dModel' | 'numHeads' | 'dK' | 'dV' | 'wQ' | 'wK' | 'wV' | 'wO' | 'bQ' | 'bK' | 'bV' | 'bO'>;

/** The options of {@link Headlab.createParallelLayer}: createLayer's, and how many Workers. */
export interface ParallelLayerOptions extends AttentionLayerOptions {
  /**
   * How many threads (or Workers) split the heads: default the cores available (navigator.hardwareConcurrency,
   * os.availableParallelism() in Node), at most 8; never more than numHeads (a larger value is lowered).
   * 1..64; 1 runs in one thread or Worker.
   */
  threads?: number;
  /**
   * 'auto' (default): 'pthreads' where SharedArrayBuffer and cross-origin isolation allow it (Node,
   * isolated pages and their Workers) and the threads build can be next to headlab_core.wasm
   * (where that file kept its name: not in Vite/webpack/esbuild bundles), else 'workers', else (no Worker can start: a page on another origin whose CSP refuses blob: Workers) one thread, the
   * calling one. 'pthreads' and 'workers' reject where they cannot run.
   */
  mechanism?: 'auto' | 'pthreads' | 'workers';
}

/** The per-call part of {@link MultiHeadAttentionOptions}, for {@link AttentionLayer.forward}. */
export type LayerForwardOptions = Pick<MultiHeadAttentionOptions,
  'query' | 'key' | 'value' | 'causal' | 'keyMask' | 'headMask' | 'returnWeights' | 'returnIntermediates'>;

export interface MultiHeadAttentionIntermediates {
  /** Per-head Q_i: `[numHeads, Tq, dK]` */
  q: Float32Array<ArrayBuffer>;
  /** Per-head K_i: `[numHeads, Tk, dK]` */
  k: Float32Array<ArrayBuffer>;
  /** Per-head V_i: `[numHeads, Tk, dV]` */
  v: Float32Array<ArrayBuffer>;
  /** Raw Q_i K_i^T for every pair, masks ignored: `[numHeads, Tq, Tk]` */
  scores: Float32Array<ArrayBuffer>;
  /** scores / sqrt(dK), `-Infinity` where masked: `[numHeads, Tq, Tk]` */
  scaledScores: Float32Array<ArrayBuffer>;
  /** softmax(...) V_i: `[numHeads, Tq, dV]` */
  headOutputs: Float32Array<ArrayBuffer>;
  /** Concat(head_1..head_h): `[Tq, numHeads*dV]` */
  concat: Float32Array<ArrayBuffer>;
}

export interface MultiHeadAttentionResult {
  /** `[Tq, dModel]`, a copy owned by JS */
  output: Float32Array<ArrayBuffer>;
  /** `[numHeads, Tq, Tk]` when `returnWeights`; each row sums to 1, or is all 0 when every key is masked. */
  weights?: Float32Array<ArrayBuffer>;
  intermediates?: MultiHeadAttentionIntermediates;
  tQ: number;
  tK: number;
  dK: number;
  dV: number;
}

/** What `returnWeights: true` adds to a {@link MultiHeadAttentionResult}: `weights`, not optional. */
export interface WithWeights {
  weights: Float32Array<ArrayBuffer>;
}

/** What `returnIntermediates: true` adds to a {@link MultiHeadAttentionResult}: `intermediates`, not optional. */
export interface WithIntermediates {
  intermediates: MultiHeadAttentionIntermediates;
}

/**
 * The result for options of type O: `weights` and `intermediates` are present (not optional) when
 * `returnWeights: true` / `returnIntermediates: true` are given as literals. The methods themselves are
 * overloaded rather than generic over O, so that a misspelt option (`returnWeight: true`) is a compile error.
 */
export type MultiHeadAttentionResultFor<O> = MultiHeadAttentionResult
  & (O extends { returnWeights: true } ? WithWeights : unknown)
  & (O extends { returnIntermediates: true } ? WithIntermediates : unknown);

/** The shape of a layer: {@link Headlab.checkShape}. dK and dV default to dModel / numHeads. */
export interface LayerShape {
  dModel: number;
  numHeads: number;
  dK?: number;
  dV?: number;
}

export interface ParameterCountOptions {
  dModel: number;
  numHeads: number;
  dK?: number;
  dV?: number;
  /** Count b^Q, b^K, b^V, b^O too. */
  bias?: boolean;
}

export interface ParameterCount {
  wQ: number;
  wK: number;
  wV: number;
  wO: number;
  bias: number;
  /** wQ + wK + wV + wO: 4·dModel² when dK = dV = dModel/numHeads */
  weights: number;
  total: number;
}

export interface ScalingExperimentOptions {
  /** Width of each query and key vector. */
  dK: number;
  /** Default 256. */
  numQueries?: number;
  /** Default 64. */
  numKeys?: number;
  /** Default 1. */
  seed?: number;
}

/** Options of {@link Headlab.headsTrial}. */
export interface HeadsTrialOptions {
  /** Heads; must divide dModel (1..64). dK = dModel / numHeads. */
  numHeads: number;
  /** Default 'lookup' (answer 1 found by content, answers 2–4 by position). */
  task?: string;
  /** Default 16. */
  dModel?: number;
  /** Default 1. */
  seed?: number;
  /** Adam steps, 0..20000; default 4000. */
  steps?: number;
  /** Held-out examples measured, 1..20000; default 1000. */
  evalExamples?: number;
}

export interface HeadsTrialResult {
  task: string;
  dModel: number;
  numHeads: number;
  dK: number;
  seed: number;
  steps: number;
  /** Held-out loss and the fraction of examples with every answer right. */
  loss: number;
  accuracy: number;
  /** Held-out accuracy per relation (on 'lookup', index 0 is the content lookup). */
  relationAccuracy: number[];
  /** Per relation, the largest share of attention one head puts on its answer's position. */
  bestShare: number[];
  /** Relations whose bestShare is at least 0.5: how many got a head of their own. */
  relationsWithOwnHead: number;
  /** Whether training diverged (the trial then measures the last good state). */
  diverged: boolean;
}

export interface ScalingExperimentResult {
  dK: number;
  numQueries: number;
  numKeys: number;
  /** Raw q·k, `[numQueries, numKeys]`; q and k entries i.i.d. N(0, 1). */
  dotProducts: Float32Array<ArrayBuffer>;
  /** Row softmax of q·k/√dK. */
  weightsScaled: Float32Array<ArrayBuffer>;
  /** Row softmax of q·k. */
  weightsUnscaled: Float32Array<ArrayBuffer>;
  /** Variance of q·k (about dK) and of q·k/√dK (about 1). */
  varianceRaw: number;
  varianceScaled: number;
  /** Mean row entropy of each softmax, in nats. */
  entropyScaled: number;
  entropyUnscaled: number;
  /** Mean of each row's largest weight (1 = one-hot). */
  maxWeightScaled: number;
  maxWeightUnscaled: number;
}

export interface TaskDescription {
  name: string;
  description: string;
  seqLen: number;
  vocab: number;
  numRelations: number;
  queryPosition: number;
  /** Position of each relation's answer; -1 where it varies per example. */
  relationPositions: number[];
  relationNames: string[];
  tokenNames: string[];
}

export interface TrainerOptions {
  /** Default 'two-relations'; see {@link Headlab.tasks}. */
  task?: string;
  /** Default 2. */
  numHeads?: number;
  /** Default 16; numHeads must divide it. */
  dModel?: number;
  /** Default 1. The same seed gives the same run, bit for bit, in a given build. */
  seed?: number;
  /** Default 0.003. */
  learningRate?: number;
  /** Default 64. */
  batchSize?: number;
  /** Default 'adam' (with bias correction). */
  optimizer?: 'adam' | 'sgd';
  /** Causal mask in the attention layer. */
  causal?: boolean;
}

export interface HeadMetric {
  /** Entropy of the query row's attention, nats. */
  entropy: number;
  /** Mean |query − key| position distance, weighted by attention. */
  meanDistance: number;
  /** Share of the query row's weight on each relation's answer position. */
  relationShare: number[];
}

export interface ExportedModel {
  tokens: string[];
  /** `[T, dModel]`: the attention layer's input for the probe sequence. */
  X: Float32Array<ArrayBuffer>;
  dModel: number;
  numHeads: number;
  wQ: Float32Array<ArrayBuffer>;
  wK: Float32Array<ArrayBuffer>;
  wV: Float32Array<ArrayBuffer>;
  wO: Float32Array<ArrayBuffer>;
  bQ: Float32Array<ArrayBuffer>;
  bK: Float32Array<ArrayBuffer>;
  bV: Float32Array<ArrayBuffer>;
  bO: Float32Array<ArrayBuffer>;
}

/** Where and why training diverged; see {@link Trainer.step}. */
export interface TrainerDivergence {
  /** The step that was not taken; the trainer kept its state from `step - 1`. */
  step: number;
  learningRate: number;
  optimizer: 'adam' | 'sgd';
  /** 'loss': the loss was not finite; 'update': the update would have made a parameter or Adam moment non-finite, or a parameter larger than 1e4 in magnitude. */
  reason: 'loss' | 'update';
  /** What step() throws, e.g. "training diverged at step 3 with learningRate 10 (sgd): the loss became non-finite; the trainer kept its state from step 2 — lower learningRate". */
  message: string;
}

export interface LanguageModelDivergence {
  /** The step that was not taken; the model kept its state from `step - 1`. */
  step: number;
  learningRate: number;
  /** 'loss': the loss was not finite; 'update': the update would have made a weight or Adam moment non-finite, or a weight larger than 1e4 in magnitude. */
  reason: 'loss' | 'update';
  /** What step() throws. */
  message: string;
}

export declare class Trainer {
  private constructor();
  /**
   * @throws RangeError `Trainer.step: training diverged at step N with learningRate X (…)` when a step's loss
   * or update would be non-finite: that step is not taken, the trainer keeps its state from step N − 1 (evaluate,
   * save and the rest still work) and every later step() throws the same error. Create a trainer with a lower
   * learningRate to go on.
   */
  step(n?: number): { step: number; loss: number; accuracy: number };
  /** null, or where and why training diverged. */
  divergence(): TrainerDivergence | null;
  evaluate(n?: number): { loss: number; accuracy: number; relationAccuracy: number[] };
  headMetrics(n?: number): HeadMetric[];
  /** `[numHeads, T, T]` on the fixed probe sequence. */
  attentionWeights(): Float32Array<ArrayBuffer>;
  probe(): { tokens: Int32Array<ArrayBuffer>; tokenNames: string[] };
  taskInfo(): TaskDescription;
  /** The options (defaults filled in) and the steps taken: the shape of {@link LanguageModel.config}. `learningRate` reads as given (0.003). */
  config(): Required<TrainerOptions> & { step: number };
  setHeadEnabled(head: number, enabled: boolean): void;
  headEnabled(head: number): boolean;
  exportModel(): ExportedModel;
  /** Bytes in the documented "HLAB" format. */
  save(): Uint8Array<ArrayBuffer>;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** A language-model task (see {@link Headlab.languageTasks}). */
export interface LanguageTask {
  name: string;
  description: string;
  /** What `LanguageModel.evaluate().accuracy` measures. */
  metric: string;
  /** Tokens per sequence, start token included. */
  seqLen: number;
  /** A text of the task's language, in its vocabulary (what the pages draw heads on). */
  example: string;
  /** Token names; a token's id is its index. */
  vocabulary: string[];
  /** The token at position 0 of every sequence; `tokenize` prepends it. */
  startToken: string;
  /** The token that fills a sequence after its end, or null; `generate` stops before it. */
  padToken: string | null;
  /** The token `generate` stops after (cricket's "."), or null. */
  stopToken: string | null;
  /** What {@link Headlab.createLanguageModel} uses for options not given; `steps` is a run long enough for the task's heads to form. */
  defaults: {
    numLayers: number;
    numHeads: number;
    dModel: number;
    mlp: boolean;
    learningRate: number;
    batchSize: number;
    steps: number;
    /** A seed on which the task's heads form within `steps` in browsers (the WebAssembly SIMD build). */
    seed: number;
  };
}

export interface LanguageModelOptions {
  /** A name from {@link Headlab.languageTasks}. Required. */
  task: string;
  /** 1..4. Default: the task's. */
  numLayers?: number;
  /** 1..64, divides dModel. Default: the task's. */
  numHeads?: number;
  /** 1..1024. Default: the task's. */
  dModel?: number;
  /** A GELU MLP (dModel → 4 dModel → dModel) after each attention block. Default: the task's. */
  mlp?: boolean;
  /** Non-negative integer; the same seed gives the same model and losses. Default: the task's `defaults.seed`. */
  seed?: number;
  /** Adam's learning rate, in (0, 1]. Default: the task's. */
  learningRate?: number;
  /** Sequences per step, 1..4096. Default: the task's. */
  batchSize?: number;
  /**
   * Threads each step's batch is split over (pthreads: Node, Workers of cross-origin isolated pages), at most
   * batchSize; 'auto': the cores available (at most 8) where threads can run, else 1. Default 1 (bit-reproducible; k
   * threads equal one thread up to float rounding). More than 1 where threads cannot run rejects with an Error saying why.
   */
  threads?: number | 'auto';
  /**
   * A model of this lab that the new one replaces: disposed once the new one is made (untouched if it cannot be). When both
   * run on the same number of threads, the new model takes over its thread Workers instead of starting its own.
   */
  replacing?: LanguageModel;
}

/** The resolved options of a {@link LanguageModel}; `config()` adds `step`. `learningRate` reads as given (0.003). */
export interface LanguageModelConfig {
  task: string;
  numLayers: number;
  numHeads: number;
  dModel: number;
  mlp: boolean;
  seed: number;
  learningRate: number;
  batchSize: number;
}

/**
 * `lm.config()`: the options and the steps taken, as {@link Trainer.config}. Until 0.4 the function also
 * carries the options as fields (`lm.config.dModel`), as the property `config` of 0.2 held them: deprecated.
 */
export interface LanguageModelConfigMethod {
  (): LanguageModelConfig & { step: number };
  /** @deprecated read `config().task` */
  readonly task: string;
  /** @deprecated read `config().numLayers` */
  readonly numLayers: number;
  /** @deprecated read `config().numHeads` */
  readonly numHeads: number;
  /** @deprecated read `config().dModel` */
  readonly dModel: number;
  /** @deprecated read `config().mlp` */
  readonly mlp: boolean;
  /** @deprecated read `config().seed` */
  readonly seed: number;
  /** @deprecated read `config().learningRate` */
  readonly learningRate: number;
  /** @deprecated read `config().batchSize` */
  readonly batchSize: number;
}

export interface LanguageEvaluation {
  loss: number;
  /** The task's metric (LanguageTask.metric). */
  accuracy: number;
  /** Arg-max equals the next token, over every position with a target. */
  nextTokenAccuracy: number;
  /** Held-out sequences evaluated. */
  examples: number;
  /** English only: p(verb) > p(its other-number form) at the token before a present-tense verb. */
  agreementAccuracy?: number;
  /** English only: agreementAccuracy on arcs with an attractor (a noun of the other number between subject and verb). */
  agreementAccuracyAttractor?: number;
  /** English only: agreementAccuracy on arcs without one. */
  agreementAccuracyNoAttractor?: number;
  /** English only: the selected class of nouns holds the most probability before a selected object. */
  selectionAccuracy?: number;
  /** English only: the antecedent's class of predicate adjectives holds the most probability after "was"/"were". */
  coreferenceAccuracy?: number;
  /** English only: arcs each accuracy counted. */
  arcs?: { agreement: number; attractor: number; selection: number; coreference: number };
}

/** English only: what position alone scores on one relation's arcs (LanguageModel.baselines). */
export interface LanguageBaseline {
  /** The best "k tokens back" pattern's score, k chosen after the fact. */
  fixedOffset: number;
  /** That k. */
  offset: number;
  /** Attending to the last noun or name at or before the query. */
  lastNoun: number;
  /** max(fixedOffset, lastNoun). */
  best: number;
  /** Held-out arcs. */
  arcs: number;
}

export interface LanguageBaselines {
  agreement: LanguageBaseline;
  selection: LanguageBaseline;
  coreference: LanguageBaseline;
  induction: LanguageBaseline;
  previousToken: LanguageBaseline;
}

/** One arc of the english grammar: a query position, the true target it needs, positions counting the start token as 0. */
export interface LanguageArc {
  relation: 'agreement' | 'selection' | 'coreference' | 'induction' | 'previousToken';
  query: number;
  target: number;
  /** 'verb → subject · syntax', …: from the word that looks (query) to the word it looks at (target). */
  label: string;
  /** The word the query predicts (the verb, the object, the predicate, the last name), or null (previousToken). */
  answer: string | null;
  /** Selection, coreference: the semantic class the answer belongs to. */
  class?: string;
  /** Agreement: the verb's other-number form. */
  foil?: string;
  /** Agreement: a noun of the other number lies between subject and verb. */
  attractor?: boolean;
}

export interface LanguageRelations {
  tokens: string[];
  arcs: LanguageArc[];
}

/** One head's detector scores (means of attention weights over held-out sequences). */
export interface LanguageHeadScore {
  /** 0-based. */
  layer: number;
  /** 0-based. */
  head: number;
  /** Weight on position t − 1. */
  previousToken: number;
  /** Weight on the tokens right after earlier occurrences of the current token. */
  induction: number;
  /** Weight on earlier occurrences of the current token. */
  duplicateToken: number;
  /** Weight on position 0. */
  firstToken: number;
  /** Cricket: weight from the pronoun's prediction query onto the referent noun. English: from "was"/"were" after a pronoun onto the antecedent. */
  coreference?: number;
  /** English only: from the token before a present-tense verb onto the subject's head noun. */
  agreement?: number;
  /** English only: from the token before a selected object onto the verb. */
  selection?: number;
  /** English only: the relation key of `label`, or null. */
  relation?: string | null;
  /** Cricket only: the highest mean weight on one fixed absolute position or fixed offset back, from the pronoun queries. */
  positionPeak?: number;
  /** 'previous token', 'induction', 'duplicate token', 'first token' or 'coreference': the highest score ≥ threshold; null when none is. English: the best relation ≥ 0.3 and its kind ('verb → subject · syntax'). */
  label: string | null;
}

export interface LanguageHeadReport {
  /** Layer-major: heads[layer * numHeads + head]. */
  heads: LanguageHeadScore[];
  /** The score a label needs (0.5; english 0.3). */
  threshold: number;
  /** Cricket only: the coreference score of the best head that attends to one fixed position or offset (a baseline). */
  bestFixedPosition?: number;
  /** Cricket only: the highest coreference score of any head. */
  bestCoreference?: number;
}

/**
 * A sequence: a string of vocabulary words, or the words (string[]) or their ids (Int32Array, number[]), all alike:
 * the start token is put first unless the sequence begins with it; elsewhere it, and the pad token anywhere, is a RangeError.
 */
export type TokensOrText = string | Int32Array | number[] | string[];

export interface GenerateOptions {
  /** A sequence, as every method takes one (start token put first). Default '' (the start token alone). */
  prompt?: TokensOrText;
  /** New tokens at most (also bounded by seqLen). Default seqLen. */
  maxTokens?: number;
  /** 0 = greedy; otherwise p^(1/temperature), renormalised; in [0, 100]. Default 1. */
  temperature?: number;
  /** Seed of the sampling generator (SplitMix64: the C++ `Rng(seed, 7)`). Default 1. */
  seed?: number;
}

export interface NextToken {
  token: string;
  id: number;
  probability: number;
}

/** The shape fields every model's `info` has: {@link PretrainedInfo} and {@link LanguageModelInfo} extend it. */
export interface ModelShapeInfo {
  /** As config.json names it ('headlab' for HeadLab's own models). */
  architecture: string;
  /**
   * 'decoder': causal attention, next-token logits. 'encoder' (BERT, RoBERTa, DistilBERT, BertModel):
   * bidirectional attention, masked-LM logits at every position; fill() works, generate() and logitLens() refuse.
   */
  kind: 'decoder' | 'encoder';
  numLayers: number;
  /** Query heads: attention maps and ablation are per query head. */
  numHeads: number;
  /** Key-value heads (fewer than numHeads: grouped-query; query head h reads h / (numHeads / numKeyValueHeads)). */
  numKeyValueHeads: number;
  dModel: number;
  vocabSize: number;
  /** The most tokens a sequence may have. */
  contextLength: number;
  parameters: number;
  /** The weights as stored, and held: 16-bit weights stay 16-bit. */
  dtype: 'F32' | 'F16' | 'BF16';
  /** Bytes of weights held. */
  bytes: number;
}

/**
 * LanguageModel.info: the fields of {@link PretrainedInfo}, for one of HeadLab's own models. Every head has its
 * own keys and values (numKeyValueHeads is numHeads); contextLength is the task's seqLen, the start token
 * included; bytes is 4 × parameters.
 */
export interface LanguageModelInfo extends ModelShapeInfo {
  architecture: 'headlab';
  kind: 'decoder';
  /** The task the model learns. */
  task: string;
  dtype: 'F32';
}

/** LanguageModel.headScores({ examples }): the shape of {@link PretrainedHeadScores}, measured on the task's held-out sequences. */
export interface LanguageHeadScores {
  /** No single sequence: the scores are means over `examples` held-out sequences of the task. */
  sequence: null;
  basis: 'task';
  examples: number;
  /** Layer-major, numLayers × numHeads entries: headScores(examples)'s. */
  scores: LanguageHeadScore[];
}

/** LanguageModel.run's options: PretrainedModel.run's that apply to a decoder of words. */
export interface LanguageRunOptions {
  /** Return every layer's and head's attention. Default false. */
  attention?: boolean;
  /** Heads to switch off for this call (besides those setHeadEnabled switched off); the switches are as they were after it. */
  ablate?: Array<{ layer: number; head: number }>;
  /** log-probabilities for every position ([T, V]) rather than the last ([V]). Default false. */
  allLogits?: boolean;
  /** How many next-token candidates. Default 10 (at most the vocabulary). */
  topK?: number;
}

/** A causal transformer language model; see {@link Headlab.createLanguageModel}. Every method throws a TypeError once disposed. */
export declare class LanguageModel {
  private constructor();
  /** The task (a copy of its {@link Headlab.languageTasks} entry). */
  readonly task: LanguageTask;
  /** `config()`: the options and `step`, as {@link Trainer.config}; reading fields off `config` itself is deprecated (0.2's property). */
  readonly config: LanguageModelConfigMethod;
  /** Token names; a token's id is its index. */
  readonly vocabulary: string[];
  /** Training steps taken in all, including those of a loaded file. */
  readonly steps: number;
  /** Threads each step's batch is split over (the `threads` option, resolved); 0 once disposed. */
  readonly threads: number;
  /**
   * n Adam steps (default 1).
   * @throws RangeError `LanguageModel.step: training diverged at step N with learningRate X (adam): …` when a
   * step's loss is not finite or its update would make a weight non-finite or larger than 1e4: that step is not
   * taken, the model keeps its state from step N − 1, and every later step() throws the same.
   */
  step(n?: number): { step: number; loss: number };
  /** null while training is fine; where and why once a step has diverged. */
  divergence(): LanguageModelDivergence | null;
  /** On n held-out sequences (default 500), the same on every call. */
  evaluate(n?: number): LanguageEvaluation;
  /**
   * What {@link PretrainedModel.info} gives: architecture 'headlab', kind 'decoder', sizes, parameters. A new object each read.
   */
  readonly info: LanguageModelInfo;
  /** Per head, layer-major, on n held-out sequences (default 500). */
  headScores(n?: number): LanguageHeadScore[];
  /** The same scores in the shape of {@link PretrainedModel.headScores}: `{ sequence: null, basis: 'task', examples, scores }`. */
  headScores(options: { examples?: number }): Promise<LanguageHeadScores>;
  /** headScores plus the threshold and, for cricket, the fixed-position baseline. */
  headReport(n?: number): LanguageHeadReport;
  /** English only: per relation, what a fixed offset or the last noun scores on the same held-out arcs. @throws Error for other tasks. */
  baselines(n?: number): LanguageBaselines;
  /** English only: the grammar's arcs of a typed sentence. @throws Error naming the word and position where parsing stops. */
  relations(tokensOrText: TokensOrText): LanguageRelations;
  /**
   * Whitespace-separated vocabulary words → ids, start token first (put there unless the text begins with it): `ids` and their `tokens` (words),
   * the shape of {@link PretrainedModel.tokenize}; `words` is `tokens` under its former name (before 0.3, `tokens` held the ids).
   * @throws TypeError when text is not a string; RangeError naming an unknown word or a reserved token (the start token after
   * the first word, the pad token) and its position, or text longer than seqLen − 1 words besides the start token.
   */
  tokenize(text: string): { ids: Int32Array<ArrayBuffer>; tokens: string[]; words: string[] };
  /** weights `[numLayers, numHeads, T, T]`; rows sum to 1, zeros above the diagonal. */
  attention(tokensOrText: TokensOrText): { tokens: string[]; weights: Float32Array<ArrayBuffer>; shape: [number, number, number, number] };
  /** The next-token distribution after the last token, most probable first (topK defaults to the vocabulary size). */
  predict(tokensOrText: TokensOrText, options?: { topK?: number }): NextToken[];
  /**
   * One forward pass, as {@link PretrainedModel.run}: `logits` are log-probabilities, the last position's [V] or every
   * position's [T, V] with allLogits (row t is predict's after the first t + 1 tokens); `next` predict's topK; `ablate` per call.
   */
  run(textOrIds: TokensOrText, options: LanguageRunOptions & { attention: true }): Promise<PretrainedRunResult & { attention: Float32Array<ArrayBuffer> }>;
  run(textOrIds: TokensOrText, options?: LanguageRunOptions): Promise<PretrainedRunResult>;
  /** Seeded continuation, never the start token; `tokens` is the whole sequence, `text` its words after the start token, `newTokens` the generated ones. */
  generate(options?: GenerateOptions): { tokens: string[]; text: string; newTokens: string[] };
  /**
   * The same continuation in the shape of {@link PretrainedModel.generate}: `ids` and `tokens` the whole sequence (start token,
   * prompt, new tokens), `promptLength`, `text` the new words alone. maxTokens defaults to 20.
   */
  generate(prompt: TokensOrText, options?: PretrainedGenerateOptions): Promise<PretrainedGenerateResult>;
  setHeadEnabled(layer: number, head: number, on: boolean): void;
  headEnabled(layer: number, head: number): boolean;
  /** Bytes in the documented "HLLM" format (cpp/include/headlab/lm_file.hpp). @throws RangeError when training diverged. */
  save(): Uint8Array<ArrayBuffer>;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** One next-token candidate of a pretrained model: `token` is the id's text decoded alone (' hit'). */
export interface PretrainedNextToken {
  id: number;
  token: string;
  probability: number;
}

/** `{ config, weights, tokenizer }`: a checkpoint's files as values (loadPretrained's last kind of source). */
export interface PretrainedObjects {
  /** config.json: the parsed object, its text or its bytes. */
  config: object | string | ArrayBuffer | ArrayBufferView | Blob;
  /** model.safetensors, or its shards (in any order) when sharded. */
  weights: ArrayBuffer | ArrayBufferView | Blob | Array<ArrayBuffer | ArrayBufferView | Blob>;
  /** tokenizer.json: the parsed object, its text or its bytes. */
  tokenizer: object | string | ArrayBuffer | ArrayBufferView | Blob;
}

export interface PretrainedProgress {
  /** 'config.json', 'tokenizer.json', 'model.safetensors', a shard's name… */
  file: string;
  loaded: number;
  /** The file's size as announced (Content-Length, File.size); null when the server does not say. */
  total: number | null;
}

export interface LoadPretrainedOptions {
  /** Where repository ids are fetched from: `${hubUrl}/${id}/resolve/${revision}/${file}`. Default 'https://huggingface.co'. */
  hubUrl?: string;
  /** A branch, tag, commit or 'refs/pr/N' (the hub's converted safetensors often live on one). Default 'main'. */
  revision?: string;
  /**
   * Threads each call splits its work over (GEMM columns, attention heads): default 1; 'auto' the cores
   * available (at most 8) where the threaded module can run (Node, cross-origin isolated pages and their
   * Workers), else 1 (`model.threadsNote` says why); a number 1..64, more than 1 only where threads can
   * run (else an Error saying why). Results are the same on any number of threads.
   */
  threads?: number | 'auto';
  /** Browsers: keep the downloaded files in the Cache API ('headlab-pretrained-v1') and read them from there next time, offline too. Default true; no effect in Node. */
  cache?: boolean;
  onProgress?: (progress: PretrainedProgress) => void;
  /** Cancels the load: it rejects with an AbortError and frees what it had allocated. */
  signal?: AbortSignal;
  /** The most bytes to read, all files together; a file whose announced size would pass it is refused before it is downloaded. */
  maxBytes?: number;
}

export interface PretrainedInfo extends ModelShapeInfo {
  /** As config.json names it. */
  architecture: 'GPT2LMHeadModel' | 'GPTNeoForCausalLM' | 'LlamaForCausalLM' | 'Qwen2ForCausalLM' |
    'MistralForCausalLM' | 'GPTNeoXForCausalLM' | 'Phi3ForCausalLM' | 'GemmaForCausalLM' |
    'BertForMaskedLM' | 'RobertaForMaskedLM' | 'DistilBertForMaskedLM' | 'BertModel';
  /**
   * What the model ends in: 'next-token' (decoders), 'masked-lm' (BertForMaskedLM, RoBERTa, DistilBERT) or
   * 'none' (BertModel, as sentence-transformers and many fine-tunes publish BERT): no logits, so run()
   * gives the last hidden state (`hidden`) and attention; fill(), patchHeads(), directLogitAttribution(),
   * logitLens() and generate() refuse, saying why; headScores() works.
   */
  head: 'next-token' | 'masked-lm' | 'none';
}

export interface PretrainedRunOptions {
  /** Return every layer's and head's attention. Default false. */
  attention?: boolean;
  /** Heads to switch off for this call: their outputs are zeroed before the output projection (its bias stays). */
  ablate?: Array<{ layer: number; head: number }>;
  /** logits for every position ([T, V]) rather than the last ([V]). Default false. Refused by a model without a head (BertModel). */
  allLogits?: boolean;
  /** How many next-token candidates. Default 10. */
  topK?: number;
  /** Encoders: a second text (textOrIds must be text): [CLS] A [SEP] B [SEP], token types 0 then 1. */
  pair?: string;
  /** Encoders: one token type per id (default all 0); not with pair. */
  tokenTypes?: Int32Array | number[];
  /**
   * Activation patching: the listed heads' outputs (per head, before the output projection, at every
   * position) are taken from a run on `source`, which must have the same length (a RangeError otherwise).
   */
  patch?: { source: string | Int32Array | number[]; heads: Array<{ layer: number; head: number }> };
}

/** A token for a metric: its id, or a text that is exactly one token (' Mary'; nothing added). */
export type OneToken = number | string;

export interface PatchHeadsOptions {
  /** The prompt whose heads' outputs are patched in. */
  clean: string | Int32Array | number[];
  /** The prompt run with one head at a time patched; the same length as clean. */
  corrupted: string | Int32Array | number[];
  answer: OneToken;
  wrong: OneToken;
  /** Where the metric is read: default a decoder's last position, an encoder's first mask token. */
  position?: number;
  /** An encoder's token types, one per token, for both prompts (e.g. 1 for a pair's second sentence). */
  tokenTypes?: Int32Array | number[];
  /** Called after each layer's heads. */
  onProgress?: (progress: { done: number; total: number }) => void;
  /** Stops between layers; the promise rejects with an AbortError. */
  signal?: AbortSignal;
}

export interface PatchHeadsResult {
  /** numLayers × numHeads, layer-major: metric(corrupted with the head from clean) − metric(corrupted). */
  effects: Float32Array<ArrayBuffer>;
  /** logit[answer] − logit[wrong] on the clean prompt. */
  metricClean: number;
  /** logit[answer] − logit[wrong] on the corrupted prompt. */
  metricCorrupted: number;
  position: number;
  /** The token ids compared. */
  answer: number;
  wrong: number;
}

export interface DirectLogitAttributionOptions {
  ids: string | Int32Array | number[];
  answer: OneToken;
  wrong: OneToken;
  /** Default the last position. */
  position?: number;
}

export interface DirectLogitAttribution {
  /** numLayers × numHeads, layer-major: each head's direct share of logit[answer] − logit[wrong]. */
  heads: Float32Array<ArrayBuffer>;
  /** numLayers: each MLP's direct share. */
  mlps: Float32Array<ArrayBuffer>;
  /** The final norm's scale of the whole residual at the position. */
  scale: number;
  /** logit[answer] − logit[wrong] from the run itself. */
  logitDiff: number;
  position: number;
  answer: number;
  wrong: number;
}

export interface PretrainedRunResult {
  ids: Int32Array<ArrayBuffer>;
  tokens: string[];
  /**
   * The last position's logits [V], or [T, V] row-major with allLogits (an encoder's: always [T, V]).
   * Empty (length 0) for a model without a head (info.head 'none'): see `hidden`.
   */
  logits: Float32Array<ArrayBuffer>;
  /** A model without a head (BertModel): the last hidden state, [T, dModel] row-major (Hugging Face's last_hidden_state). */
  hidden?: Float32Array<ArrayBuffer>;
  /** The most probable next tokens after the last one, most probable first (empty for an encoder: see fill()). */
  next: PretrainedNextToken[];
  /** Encoders given pair or tokenTypes: the token types used. */
  tokenTypes?: Int32Array<ArrayBuffer>;
  /** With `attention: true`: [numLayers, numHeads, T, T] row-major, rows queries, columns keys. */
  attention?: Float32Array<ArrayBuffer>;
}

/** PretrainedModel.fill(): each mask token's position in ids and the most probable tokens there. */
export interface PretrainedFillResult {
  ids: Int32Array<ArrayBuffer>;
  tokens: string[];
  masks: Array<{ position: number; top: PretrainedNextToken[] }>;
}

export interface PretrainedHeadScore {
  layer: number;
  head: number;
  previousToken: number;
  duplicateToken: number;
  induction: number;
  firstToken: number;
}

export interface PretrainedHeadScores {
  /** BOS, r1…rn, r1…rn: what the scores were measured on. */
  sequence: Int32Array<ArrayBuffer>;
  /** Layer-major, numLayers × numHeads entries. */
  scores: PretrainedHeadScore[];
}

export interface PretrainedLogitLens {
  ids: Int32Array<ArrayBuffer>;
  tokens: string[];
  /** layers[l].positions[t]: the topK tokens the residual stream after block l predicts at position t. */
  layers: Array<{ layer: number; positions: PretrainedNextToken[][] }>;
}

export interface PretrainedGenerateOptions {
  /** New tokens at most (the context length bounds them too). Default 20. */
  maxTokens?: number;
  /** 0 takes the most probable token; default 1. */
  temperature?: number;
  /** Default 1. */
  seed?: number;
  /** Heads switched off for every generated token, as in run. */
  ablate?: Array<{ layer: number; head: number }>;
}

export interface PretrainedGenerateResult {
  /** The whole sequence, prompt first. */
  ids: Int32Array<ArrayBuffer>;
  tokens: string[];
  /** How many of ids are the prompt's. */
  promptLength: number;
  /** The continuation alone, decoded. */
  text: string;
}

/**
 * What <headlab-model-explorer> drives, and what {@link PretrainedModel} and {@link LanguageModel} both are:
 * `info`, `tokenize`, `run` (with per-call `ablate`), `headScores`, `generate`, `dispose`.
 */
export interface ExplorableModel {
  readonly info: PretrainedInfo | LanguageModelInfo;
  tokenize(text: string): { ids: Int32Array<ArrayBuffer>; tokens: string[] };
  run(textOrIds: string | Int32Array | number[], options?: LanguageRunOptions): Promise<PretrainedRunResult>;
  headScores(options?: { length?: number; seed?: number; examples?: number }): Promise<PretrainedHeadScores | LanguageHeadScores>;
  generate(prompt: string | Int32Array | number[], options?: PretrainedGenerateOptions): Promise<PretrainedGenerateResult>;
  dispose(): void;
}

/**
 * A pretrained checkpoint of any family loadPretrained reads (see {@link Headlab.loadPretrained}). Layers
 * and heads are numbered from 0. `textOrIds`: text (tokenized with the model's tokenizer, with the special
 * tokens its post-processor adds: Llama's `<s>`, BERT's `[CLS]` … `[SEP]`, none for GPT-2) or token ids,
 * 1..contextLength of them (a RangeError naming both lengths otherwise). Every method throws (or rejects
 * with) a TypeError once disposed.
 */
export declare class PretrainedModel {
  private constructor();
  readonly info: PretrainedInfo;
  /** Threads each call splits its work over (the `threads` option, resolved); 0 once disposed. */
  readonly threads: number;
  /** Why the model runs on one thread although threads: 'auto' asked for more; '' otherwise. */
  readonly threadsNote: string;
  tokenize(text: string): { ids: Int32Array<ArrayBuffer>; tokens: string[] };
  decode(ids: Int32Array | number[]): string;
  /** With `attention: true` written in the call, `attention` is typed as present. */
  run(textOrIds: string | Int32Array | number[], options: PretrainedRunOptions & { attention: true }): Promise<PretrainedRunResult & { attention: Float32Array<ArrayBuffer> }>;
  run(textOrIds: string | Int32Array | number[], options?: PretrainedRunOptions): Promise<PretrainedRunResult>;
  /** TransformerLens's detector scores on BOS + n random tokens repeated (length n, default 20). */
  headScores(options?: { length?: number; seed?: number }): Promise<PretrainedHeadScores>;
  /** `ablate` switches heads off as in run(): the last layer's answer is run()'s with them off. */
  logitLens(textOrIds: string | Int32Array | number[], options?: { topK?: number; ablate?: Array<{ layer: number; head: number }> }): Promise<PretrainedLogitLens>;
  /** Encoders: the topK (default 5) most probable tokens at each [MASK] / <mask> of text. */
  fill(text: string, options?: { topK?: number; ablate?: Array<{ layer: number; head: number }> }): Promise<PretrainedFillResult>;
  /**
   * Activation patching of every head, clean into corrupted: effects[layer × numHeads + head]. Layers
   * before a head's, and a decoder's rows before the first difference, are computed once.
   */
  patchHeads(options: PatchHeadsOptions): Promise<PatchHeadsResult>;
  /** Each head's and MLP's direct contribution to logit[answer] − logit[wrong]. Pre-norm decoders. */
  directLogitAttribution(options: DirectLogitAttributionOptions): Promise<DirectLogitAttribution>;
  /** '' starts from bos_token_id. Decoders only. */
  generate(prompt: string | Int32Array | number[], options?: PretrainedGenerateOptions): Promise<PretrainedGenerateResult>;
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * Why no Worker could start, as a stable code (the English `reason` beside it may be reworded; key
 * translations and program logic on this): 'csp' the page's Content-Security-Policy refuses the
 * blob: Workers that start HeadLab's Workers from another origin; 'no-workers' no Worker constructor;
 * 'file-url' a page opened from a file; 'no-origin' a sandboxed frame; 'no-blob-urls' no blob: URLs;
 * 'bad-url' the Worker script's address is not a URL; 'timeout' the Worker did not start in time;
 * 'cors' its script could not be loaded from another origin (no Access-Control-Allow-Origin);
 * 'blocked' it failed without a message (the policy, or CORS); 'start-error' it failed with one;
 * 'constructor' `new Worker` threw.
 */
export type WorkerReasonCode =
  | 'no-workers' | 'bad-url' | 'file-url' | 'no-origin' | 'no-blob-urls' | 'csp'
  | 'timeout' | 'cors' | 'blocked' | 'start-error' | 'constructor';

export interface HeadlabInfo {
  version: string;
  /** which build runs: 'scalar' is the fallback for engines without WebAssembly SIMD */
  flavour: 'simd' | 'scalar';
  /** true when the WebAssembly SIMD build runs */
  simd: boolean;
  isa: string;
  /** current size of the wasm heap */
  memoryBytes: number;
  /** bytes malloc has handed out */
  heapInUseBytes: number;
  /** the heap's cap, read from the module (as linked: -sMAXIMUM_MEMORY) */
  maxMemoryBytes: number;
  /** whether the training module has been loaded (by tasks(), createTrainer() or loadTrainer()) */
  trainingLoaded: boolean;
  /** size of the training module's wasm heap; 0 until it loads */
  trainingMemoryBytes: number;
  /** bytes malloc has handed out in the training module */
  trainingHeapInUseBytes: number;
  /** What {@link Headlab.createParallelLayer} uses: its mechanism, and its default thread count (before the cap at numHeads). */
  parallel: {
    /**
     * 'calling-thread' where no Worker can start: a page on another origin than HeadLab whose
     * Content-Security-Policy refuses the blob: Workers that start them (then `reason` says why).
     */
    mechanism: 'pthreads' | 'workers' | 'calling-thread';
    /** 1 on the calling thread */
    defaultThreads: number;
    /** why the layer runs on the calling thread, in English (only with mechanism 'calling-thread') */
    reason?: string;
    /** the same as a stable code (only with mechanism 'calling-thread') */
    reasonCode?: WorkerReasonCode;
    /** navigator.hardwareConcurrency, or os.availableParallelism() in Node */
    cores: number;
  };
}

/** One prompt of {@link Findings.ioiPrompts}. */
export interface IoiPrompt {
  /** e.g. 'When Mary and John went to the store, John gave a drink to' */
  clean: string;
  /** `clean` with the repeated name replaced by a third one (Wang et al.'s ABC form) */
  corrupted: string;
  /** the indirect object with its leading space, e.g. ' Mary' */
  answer: string;
  /** the subject (the repeated name) with its leading space, e.g. ' John' */
  wrong: string;
  /** index of the template used */
  template: number;
  /** 'ABBA': the indirect object is named first; 'BABA': the subject is */
  order: 'ABBA' | 'BABA';
  /** [indirect object, subject, the corrupted prompt's third name], without spaces */
  names: [string, string, string];
}

/** `lab.findings`: prompt sets for checking the interpretability papers' findings (docs/findings.md). */
export interface Findings {
  /**
   * `n` indirect-object-identification prompts (Wang et al. 2022), ABBA and BABA in turn; the same seed
   * gives the same set.
   * @throws TypeError or RangeError naming `n` or `seed` (n from 1 to 100000, seed a non-negative integer).
   * @example
   * const [p] = lab.findings.ioiPrompts({ n: 1, seed: 3 });
   * p.clean;   // 'When Mary and Lisa got a bone at the station, Lisa decided to give it to'
   * p.answer;  // ' Mary'
   */
  ioiPrompts(options: { n: number; seed?: number }): IoiPrompt[];
  /**
   * `n` sequences of HeadLab's English grammar (about 3.5 sentences each) with their dependencies; the
   * same seed gives the same sentences. Loads the training module on first use.
   * @example
   * const [s] = await lab.findings.syntaxSentences({ n: 1 });
   * s.words[s.arcs[0].dependent];  // 'the' (a determiner) …
   * s.words[s.arcs[0].head];       // … and its noun
   */
  syntaxSentences(options: { n: number; seed?: number }): Promise<SyntaxSentence[]>;
  /**
   * Every head of `model` against the sentences' dependencies (Clark et al. 2019): per relation, each
   * head's accuracy (how often a dependent's most-attended other word is its head word; word-level
   * attention, mean over a word's tokens from it, sum to it), the best head and the best fixed offset.
   */
  syntaxHeads(options: {
    model: PretrainedModel;
    sentences: SyntaxSentence[];
    onProgress?: (progress: { done: number; total: number }) => void;
    signal?: AbortSignal;
  }): Promise<SyntaxHeads>;
}

export type SyntaxRelation = 'determiner' | 'subject' | 'object' | 'coreference';

/** One item of {@link Findings.syntaxSentences}: positions index `words`. */
export interface SyntaxSentence {
  text: string;
  words: string[];
  /** The dependent word and the word it depends on (determiner → noun, subject → verb, object → verb, pronoun → antecedent). */
  arcs: Array<{ relation: SyntaxRelation; dependent: number; head: number }>;
}

export interface SyntaxHeads {
  /** Sentences scored, and skipped (a tokenizer that does not split the text at its spaces). */
  sentences: number;
  skipped: number;
  /** [numLayers, numHeads] */
  shape: [number, number];
  relations: Array<{
    relation: SyntaxRelation;
    arcs: number;
    /** numLayers × numHeads, layer-major. */
    accuracy: Float64Array<ArrayBuffer>;
    best: { layer: number; head: number; accuracy: number };
    /** The best fixed offset (head word = dependent + offset) on the same arcs. */
    baseline: { offset: number; accuracy: number };
  }>;
}

export declare class Headlab {
  private constructor();
  /**
   * `Concat(head_1..head_h) W^O`, `head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V`.
   * @throws TypeError or RangeError naming the argument, the expected shape and what it got.
   */
  multiHeadAttention(options: MultiHeadAttentionOptions & { returnWeights: true; returnIntermediates: true }): MultiHeadAttentionResult & WithWeights & WithIntermediates;
  multiHeadAttention(options: MultiHeadAttentionOptions & { returnWeights: true }): MultiHeadAttentionResult & WithWeights;
  multiHeadAttention(options: MultiHeadAttentionOptions & { returnIntermediates: true }): MultiHeadAttentionResult & WithIntermediates;
  multiHeadAttention(options: MultiHeadAttentionOptions): MultiHeadAttentionResult;
  /**
   * Checks the weights and copies them into the wasm heap once; `forward` then moves only the inputs.
   * @throws TypeError or RangeError naming the argument; RangeError when the weights do not fit the heap.
   */
  createLayer(options: AttentionLayerOptions): AttentionLayer;
  /** @throws RangeError when numHeads does not divide dModel and dK/dV are not given. */
  parameterCount(options: ParameterCountOptions): ParameterCount;
  /**
   * null when createLayer accepts this shape (multiHeadAttention checks it the same way), else the reason:
   * the message createLayer would throw, without its "createLayer: " prefix (e.g. numHeads does not
   * divide dModel and dK/dV are not given). Nothing is allocated.
   * @throws TypeError when shape is not an object or names another option.
   */
  checkShape(shape: LayerShape): string | null;
  /** Why scores are divided by √dK, measured on random unit-variance queries and keys. */
  scalingExperiment(options: ScalingExperimentOptions): ScalingExperimentResult;
  /** The training tasks. The first training call loads the training module (headlab_train.wasm). */
  tasks(): Promise<TaskDescription[]>;
  /** Rejects with a TypeError or RangeError naming the bad option. */
  createTrainer(options?: TrainerOptions): Promise<Trainer>;
  /**
   * Rejects with a RangeError when the bytes are not a valid saved model: "the file is damaged (checksum mismatch…)"
   * for a version-2 file that was changed or cut short; a parameter beyond ±1e4 or non-finite; any field out of range.
   */
  loadTrainer(bytes: Uint8Array | ArrayBuffer): Promise<Trainer>;
  /**
   * One trial of the choosing-h experiment: train the one-layer trainer at a fixed dModel with numHeads heads, then measure
   * held-out accuracy per relation and how many relations got a head of their own. Takes seconds: run it in a Worker.
   * Rejects with a TypeError or RangeError naming the bad option.
   */
  headsTrial(options: HeadsTrialOptions): Promise<HeadsTrialResult>;
  /** The language-model tasks (a fresh copy on every call). Loads the training module on first use. */
  languageTasks(): Promise<LanguageTask[]>;
  /** Options not given default to the task's defaults, seed included. Rejects with a TypeError or RangeError naming the bad option. */
  createLanguageModel(options: LanguageModelOptions): Promise<LanguageModel>;
  /** Rejects with a TypeError for a non-byte argument, a RangeError (an Error) naming what is wrong with a bad file. */
  loadLanguageModel(bytes: Uint8Array | ArrayBuffer, options?: Pick<LanguageModelOptions, 'threads' | 'replacing'>): Promise<LanguageModel>;
  /**
   * The forward pass on several cores. 'pthreads': threads of one wasm module (headlab_core_threads,
   * shared memory), where SharedArrayBuffer and cross-origin isolation allow; 'workers' elsewhere:
   * Workers that each hold a slice of the heads, needing no isolation (headlab-parallel-worker.js
   * served next to headlab.js; from another origin than the page through a same-origin blob: Worker).
   * Where no Worker can start (a Content-Security-Policy that refuses blob: Workers), 'auto' resolves to a
   * layer on the calling thread (mechanism 'calling-thread', threads 1, `reason`, `reasonCode`). Rejects with a TypeError
   * or RangeError naming the bad option (nothing started), or an Error when a Worker cannot start.
   */
  createParallelLayer(options: ParallelLayerOptions): Promise<ParallelLayer>;
  /**
   * A pretrained GPT2LMHeadModel or GPTNeoForCausalLM checkpoint (config.json, model.safetensors or its
   * shards, tokenizer.json) from a Hugging Face repository id, the URL of a folder, File objects, or the
   * contents. Rejects with a TypeError or RangeError naming a bad argument; a RangeError when maxBytes or
   * memory refuses the model (before its weights are downloaded); an Error naming the file (and the tensor
   * or field) that is missing, damaged or unsupported, or the download that was cut; an AbortError when cancelled.
   */
  loadPretrained(source: string | URL | FileList | Blob | Blob[] | PretrainedObjects, options?: LoadPretrainedOptions): Promise<PretrainedModel>;
  /** Prompt sets and checks for the papers' findings (docs/findings.md). */
  readonly findings: Findings;
  info(): HeadlabInfo;
  /** Live Embind handles in the modules loaded; 0 when nothing leaked. */
  liveHandleCount(): number;
  /** Workers (and thread Workers) started by createParallelLayer and by language models on several threads that have not ended; 0 when every one is disposed. */
  liveWorkerCount(): number;
}

/** Multi-head attention on several cores (see {@link Headlab.createParallelLayer}). */
export declare class ParallelLayer {
  private constructor();
  /**
   * How the work is split: 'pthreads' (threads of one wasm module sharing its memory, each running a
   * slice of the heads) or 'workers' (module Workers / worker_threads, each holding a slice of the heads);
   * 'calling-thread' (one thread, the caller's) where no Worker can start and `mechanism` was 'auto'.
   */
  readonly mechanism: 'pthreads' | 'workers' | 'calling-thread';
  /** With mechanism 'calling-thread': why no Worker could start, in English (e.g. the page's Content-Security-Policy). */
  readonly reason?: string;
  /** With mechanism 'calling-thread': the same as a stable code (e.g. 'csp'). */
  readonly reasonCode?: WorkerReasonCode;
  /** Threads or Workers running the forward pass; 0 once disposed. */
  readonly threads: number;
  readonly shape: { dModel: number; numHeads: number; dK: number; dV: number };
  /**
   * Resolves to what {@link AttentionLayer.forward} returns, within float rounding. Rejects with a
   * TypeError or RangeError naming the argument, a TypeError once disposed, or an Error once a
   * Worker (or a pthread's Worker) has died: dispose() the layer and create a new one.
   */
  forward(options: LayerForwardOptions & { returnWeights: true; returnIntermediates: true }): Promise<MultiHeadAttentionResult & WithWeights & WithIntermediates>;
  forward(options: LayerForwardOptions & { returnWeights: true }): Promise<MultiHeadAttentionResult & WithWeights>;
  forward(options: LayerForwardOptions & { returnIntermediates: true }): Promise<MultiHeadAttentionResult & WithIntermediates>;
  forward(options: LayerForwardOptions): Promise<MultiHeadAttentionResult>;
  /**
   * Ends every thread and Worker without blocking the calling thread (pthreads are asked to stop,
   * awaited and joined); calls not started reject. Resolves once they are gone. Twice is fine.
   */
  dispose(): Promise<void>;
  /** `await using layer = await lab.createParallelLayer(…)`: dispose(), awaited when the block ends. */
  [Symbol.asyncDispose](): Promise<void>;
  /** `using layer = …`: starts dispose() without waiting for the threads and Workers to end. */
  [Symbol.dispose](): void;
}

/** Multi-head attention whose weights live in the wasm heap (see {@link Headlab.createLayer}). */
export declare class AttentionLayer {
  private constructor();
  readonly shape: { dModel: number; numHeads: number; dK: number; dV: number };
  /** Same result as multiHeadAttention with this layer's weights. @throws TypeError once disposed. */
  forward(options: LayerForwardOptions & { returnWeights: true; returnIntermediates: true }): MultiHeadAttentionResult & WithWeights & WithIntermediates;
  forward(options: LayerForwardOptions & { returnWeights: true }): MultiHeadAttentionResult & WithWeights;
  forward(options: LayerForwardOptions & { returnIntermediates: true }): MultiHeadAttentionResult & WithIntermediates;
  forward(options: LayerForwardOptions): MultiHeadAttentionResult;
  /** Frees the weights; dispose() twice is fine. */
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface CreateHeadlabOptions {
  /**
   * 'auto' (default): the SIMD build where the engine runs WebAssembly SIMD, the
   * scalar build elsewhere. 'simd' fails on engines without SIMD; 'scalar' always works.
   */
  flavour?: 'auto' | 'simd' | 'scalar';
  /** The bytes of headlab_core.wasm (or headlab_core_scalar.wasm), when the loader should not fetch them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** The bytes of headlab_train.wasm (or headlab_train_scalar.wasm), likewise. */
  trainWasmBinary?: ArrayBuffer | Uint8Array;
  /** The bytes of headlab_pretrained.wasm (or headlab_pretrained_scalar.wasm), likewise. */
  pretrainedWasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps the wasm file name to its URL. */
  locateFile?: (path: string, prefix: string) => string;
  /**
   * Modules to load beside the forward-pass one instead of on first use: a Worker that trains
   * passes ['train'], so both downloads run at once. Given to a later call, starts them on the cached instance.
   */
  preload?: Array<'train' | 'pretrained'>;
}

/** Whether this engine runs WebAssembly SIMD; createHeadlab() loads the scalar build when it does not. */
export declare function simdSupported(): boolean;

/** Loads the module once per flavour; later calls return the same instance. */
export declare function createHeadlab(options?: CreateHeadlabOptions): Promise<Headlab>;
export default createHeadlab;
