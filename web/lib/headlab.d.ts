// Type declarations for HeadLab's JavaScript API (web/lib/headlab.js).

// `Symbol.dispose` (explicit resource management) for `lib` settings that predate it, such as
// ES2022 + DOM; the same declaration TypeScript's esnext.disposable lib and @types/node make.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
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

/** The per-call part of {@link MultiHeadAttentionOptions}, for {@link AttentionLayer.forward}. */
export type LayerForwardOptions = Pick<MultiHeadAttentionOptions,
  'query' | 'key' | 'value' | 'causal' | 'keyMask' | 'headMask' | 'returnWeights' | 'returnIntermediates'>;

export interface MultiHeadAttentionIntermediates {
  /** Per-head Q_i: `[numHeads, Tq, dK]` */
  q: Float32Array;
  /** Per-head K_i: `[numHeads, Tk, dK]` */
  k: Float32Array;
  /** Per-head V_i: `[numHeads, Tk, dV]` */
  v: Float32Array;
  /** Raw Q_i K_i^T for every pair, masks ignored: `[numHeads, Tq, Tk]` */
  scores: Float32Array;
  /** scores / sqrt(dK), `-Infinity` where masked: `[numHeads, Tq, Tk]` */
  scaledScores: Float32Array;
  /** softmax(...) V_i: `[numHeads, Tq, dV]` */
  headOutputs: Float32Array;
  /** Concat(head_1..head_h): `[Tq, numHeads*dV]` */
  concat: Float32Array;
}

export interface MultiHeadAttentionResult {
  /** `[Tq, dModel]`, a copy owned by JS */
  output: Float32Array;
  /** `[numHeads, Tq, Tk]` when `returnWeights`; each row sums to 1, or is all 0 when every key is masked. */
  weights?: Float32Array;
  intermediates?: MultiHeadAttentionIntermediates;
  tQ: number;
  tK: number;
  dK: number;
  dV: number;
}

/**
 * The result for these options: `weights` and `intermediates` are present (not optional) when
 * `returnWeights: true` / `returnIntermediates: true` are given as literals.
 */
export type MultiHeadAttentionResultFor<O> = MultiHeadAttentionResult
  & (O extends { returnWeights: true } ? { weights: Float32Array } : unknown)
  & (O extends { returnIntermediates: true } ? { intermediates: MultiHeadAttentionIntermediates } : unknown);

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

export interface ScalingExperimentResult {
  dK: number;
  numQueries: number;
  numKeys: number;
  /** Raw q·k, `[numQueries, numKeys]`; q and k entries i.i.d. N(0, 1). */
  dotProducts: Float32Array;
  /** Row softmax of q·k/√dK. */
  weightsScaled: Float32Array;
  /** Row softmax of q·k. */
  weightsUnscaled: Float32Array;
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
  X: Float32Array;
  dModel: number;
  numHeads: number;
  wQ: Float32Array;
  wK: Float32Array;
  wV: Float32Array;
  wO: Float32Array;
  bQ: Float32Array;
  bK: Float32Array;
  bV: Float32Array;
  bO: Float32Array;
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
  attentionWeights(): Float32Array;
  probe(): { tokens: Int32Array; tokenNames: string[] };
  taskInfo(): TaskDescription;
  config(): Required<TrainerOptions> & { step: number };
  setHeadEnabled(head: number, enabled: boolean): void;
  headEnabled(head: number): boolean;
  exportModel(): ExportedModel;
  /** Bytes in the documented "HLAB" format. */
  save(): Uint8Array;
  dispose(): void;
  [Symbol.dispose](): void;
}

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
  /** the heap's cap */
  maxMemoryBytes: number;
  /** whether the training module has been loaded (by tasks(), createTrainer() or loadTrainer()) */
  trainingLoaded: boolean;
  /** size of the training module's wasm heap; 0 until it loads */
  trainingMemoryBytes: number;
  /** bytes malloc has handed out in the training module */
  trainingHeapInUseBytes: number;
}

export declare class Headlab {
  private constructor();
  /**
   * `Concat(head_1..head_h) W^O`, `head_i = softmax(Q W_i^Q (K W_i^K)^T / sqrt(d_k)) V W_i^V`.
   * @throws TypeError or RangeError naming the argument, the expected shape and what it got.
   */
  multiHeadAttention<O extends MultiHeadAttentionOptions>(options: O): MultiHeadAttentionResultFor<O>;
  /**
   * Checks the weights and copies them into the wasm heap once; `forward` then moves only the inputs.
   * @throws TypeError or RangeError naming the argument; RangeError when the weights do not fit the heap.
   */
  createLayer(options: AttentionLayerOptions): AttentionLayer;
  /** @throws RangeError when numHeads does not divide dModel and dK/dV are not given. */
  parameterCount(options: ParameterCountOptions): ParameterCount;
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
  info(): HeadlabInfo;
  /** Live Embind handles in both modules; 0 when nothing leaked. */
  liveHandleCount(): number;
}

/** Multi-head attention whose weights live in the wasm heap (see {@link Headlab.createLayer}). */
export declare class AttentionLayer {
  private constructor();
  readonly shape: { dModel: number; numHeads: number; dK: number; dV: number };
  /** Same result as multiHeadAttention with this layer's weights. @throws TypeError once disposed. */
  forward<O extends LayerForwardOptions>(options: O): MultiHeadAttentionResultFor<O>;
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
  /** Maps the wasm file name to its URL. */
  locateFile?: (path: string, prefix: string) => string;
}

/** Whether this engine runs WebAssembly SIMD; createHeadlab() loads the scalar build when it does not. */
export declare function simdSupported(): boolean;

/** Loads the module once per flavour; later calls return the same instance. */
export declare function createHeadlab(options?: CreateHeadlabOptions): Promise<Headlab>;
export default createHeadlab;
