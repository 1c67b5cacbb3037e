// Written by scripts/custom-elements.mjs from custom-elements.json (itself from the elements' sources): do not edit by hand.
// The npm package's components/index.d.ts: `import 'headlab/components'` (every element, loaded on
// first use) or `import 'headlab/components/<name>'` (one), with each tag in HTMLElementTagNameMap.
// Per element: its class (attributes mirrored as properties, read-only properties, methods, typed
// addEventListener), its events (<Class>Events: each CustomEvent's detail) and its markup attributes
// (<Class>Attributes, what JSX, Vue and Svelte type: headlab/components/react, /vue, /svelte, /preact).
// (In the package, components/index.d.ts imports '../web/lib/headlab.js'.)
import type { CreateHeadlabOptions, Headlab } from '../lib/headlab.js';

/** The events <headlab-choosing-h> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabChoosingHEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** after every recompute */
  'headlab-change': CustomEvent<{ dModel: number, heads: number, dK: number, impostorRate: number }>;
  /** after "Measure again" finishes: the re-measured table's rows */
  'headlab-measured': CustomEvent<{ rows: object[] }>;
  /** the WebAssembly module or the element's code did not load */
  'headlab-error': CustomEvent<{ message: string }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-choosing-h> sees: its own and HTMLElement's. */
export interface HeadlabChoosingHEventMap extends HTMLElementEventMap, HeadlabChoosingHEvents {}
/** The attributes of <headlab-choosing-h> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabChoosingHAttributes {
  /** model width; default 512 */
  'd-model'?: number | `${number}`;
  /** number of heads; default 8 (snapped to a divisor of d-model) */
  'heads'?: number | `${number}`;
  /** hides the toolbar */
  'hide-controls'?: boolean;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-choosing-h>: with d_model fixed, more heads means a smaller d_k. Shows d_model split into h slices, the course's examples (512 / 8 → 64, 12288 / 96 → 128), and how the space in which one head compares a query with a key shrinks: random unit-variance queries and keys are drawn in wasm at the current d_k; unrelated pairs score about N(0, 1) after scaling, while a key that matches the query exactly scores about √d_k. The smaller d_k, the closer the two, and the more often an unrelated key looks like a match. Then both sides of the trade-off, measured by the module at d_model = 16 (lab.headsTrial, shipped as a table from scripts/choosing-h-table.mjs and re-measurable in a Worker): how many relations get a head of their own (more heads: more) and whether a head can still find an item by content (d_k = 1: no). */
export declare class HeadlabChoosingH extends HTMLElement {
  /** model width; default 512 (attribute `d-model`) */
  dModel: number;
  /** number of heads; default 8 (snapped to a divisor of d-model) (attribute `heads`) */
  heads: number;
  /** hides the toolbar (attribute `hide-controls`) */
  hideControls: boolean;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  /** where its calculations run; null before the first */
  readonly runsIn: 'worker' | 'main-thread' | null;
  addEventListener<K extends keyof HeadlabChoosingHEventMap>(type: K, listener: (this: HeadlabChoosingH, event: HeadlabChoosingHEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabChoosingHEventMap>(type: K, listener: (this: HeadlabChoosingH, event: HeadlabChoosingHEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-choosing-h> dispatches. */
export type HeadlabChoosingHEventType = keyof HeadlabChoosingHEvents;

/** The events <headlab-heads> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabHeadsEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** after every recompute (weights: [h, Tq, Tk] row-major) */
  'headlab-change': CustomEvent<{ tokens: string[], queryTokens: string[], numHeads: number, weights: Float32Array }>;
  /** a model was rejected (errors: why, field by field), or the module did not load */
  'headlab-error': CustomEvent<{ message: string, errors?: string[] }>;
  /** a query token was highlighted (from 0; null: none) */
  'headlab-select': CustomEvent<{ query: number | null }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-heads> sees: its own and HTMLElement's. */
export interface HeadlabHeadsEventMap extends HTMLElementEventMap, HeadlabHeadsEvents {}
/** The attributes of <headlab-heads> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabHeadsAttributes {
  /** worked | cross | random; default worked */
  'example'?: 'worked' | 'cross' | 'random';
  /** tokens of the random example, space- or "|"-separated */
  'tokens'?: string;
  /** heads of the random example; default 4 */
  'heads'?: number | `${number}`;
  /** d_model of the random example; default 16 */
  'd-model'?: number | `${number}`;
  /** seed of the random example's weights; default 1 */
  'seed'?: number | `${number}`;
  /** head shown in the lines view, from 1; default 1 */
  'selected-head'?: number | `${number}`;
  /** causal mask (self-attention only) */
  'causal'?: boolean;
  /** URL of a JSON model (same format as the file input) */
  'src'?: string;
  /** hides the source controls and toolbar */
  'hide-controls'?: boolean;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-heads>: every head's attention heatmap side by side for a sequence and a set of weights, and a lines view (thickness = weight) of the selected head. Pointing at or focusing a query token highlights its row in every head. Self-attention (T × T) and cross-attention (T_q × T_k: decoder queries over encoder keys). Inputs: the course's worked example, a cross-attention toy, a random untrained layer, a JSON file the learner or author supplies (checked field by field), a JSON URL (`src`), or the `model` property (e.g. a model trained on the page). Computation runs in a Web Worker when one can start. */
export declare class HeadlabHeads extends HTMLElement {
  /** worked | cross | random; default worked (attribute `example`) */
  example: 'worked' | 'cross' | 'random';
  /** tokens of the random example, space- or "|"-separated (attribute `tokens`) */
  tokens: string;
  /** heads of the random example; default 4 (attribute `heads`) */
  heads: number;
  /** d_model of the random example; default 16 (attribute `d-model`) */
  dModel: number;
  /** seed of the random example's weights; default 1 (attribute `seed`) */
  seed: number;
  /** head shown in the lines view, from 1; default 1 (attribute `selected-head`) */
  selectedHead: number;
  /** causal mask (self-attention only) (attribute `causal`) */
  causal: boolean;
  /** URL of a JSON model (same format as the file input) (attribute `src`) */
  src: string;
  /** hides the source controls and toolbar (attribute `hide-controls`) */
  hideControls: boolean;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  /** a model object in the JSON format; setting it shows that model */
  model: object | null;
  /** where its calculations run; null before the first */
  readonly runsIn: 'worker' | 'main-thread' | null;
  addEventListener<K extends keyof HeadlabHeadsEventMap>(type: K, listener: (this: HeadlabHeads, event: HeadlabHeadsEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabHeadsEventMap>(type: K, listener: (this: HeadlabHeads, event: HeadlabHeadsEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-heads> dispatches. */
export type HeadlabHeadsEventType = keyof HeadlabHeadsEvents;

/** The events <headlab-language-model> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabLanguageModelEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** on every update */
  'headlab-step': CustomEvent<{ step: number, seconds: number, runs: { layers: number, step: number, loss: number | null, evalLoss: number, accuracy: number }[] }>;
  /** training started or paused */
  'headlab-run': CustomEvent<{ running: boolean, reason: string }>;
  /** the induction heads formed */
  'headlab-phase-change': CustomEvent<{ layers: number, step: number, seconds: number, accuracy: number }>;
  /** a head was switched off or on */
  'headlab-ablate': CustomEvent<{ run: number, layer: number, head: number, enabled: boolean }>;
  /** a continuation was generated */
  'headlab-generate': CustomEvent<{ prompt: string, text: string }>;
  /** a download was made */
  'headlab-export': CustomEvent<{ format: string, filename: string }>;
  /** a model was loaded */
  'headlab-load': CustomEvent<{ files: string[] }>;
  /** something failed (training, a file, the module) */
  'headlab-error': CustomEvent<{ message: string }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-language-model> sees: its own and HTMLElement's. */
export interface HeadlabLanguageModelEventMap extends HTMLElementEventMap, HeadlabLanguageModelEvents {}
/** The attributes of <headlab-language-model> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabLanguageModelAttributes {
  /** induction | cricket | english; default induction (english: with the relations view) */
  'task'?: 'induction' | 'cricket' | 'english';
  /** 1–4; default the task's (2; english 3) */
  'layers'?: number | `${number}`;
  /** heads per layer, 1, 2, 4 or 8; default the task's (4) */
  'heads'?: number | `${number}`;
  /** seeds initialisation and data; default: the task's suggested seed */
  'seed'?: number | `${number}`;
  /** slow | normal | fast (as fast as the machine goes); default fast */
  'speed'?: 'slow' | 'normal' | 'fast';
  /** training pauses every this many steps; default the task's */
  'max-steps'?: number | `${number}`;
  /** also trains (or loads) a one-layer model on the same task, side by side */
  'compare'?: boolean;
  /** loads the trained model shipped with HeadLab (models/<task>.hlm) at once */
  'pretrained'?: boolean;
  /** starts training once loaded */
  'autoplay'?: boolean;
  /** hides the explanations */
  'compact'?: boolean;
  /** light | dark | auto */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-language-model>: trains a small transformer language model in the browser on a next-token task and shows its heads take on jobs nobody named: the loss curve with the phase change marked, a layers × heads grid (each head's pattern on an example, its label and main score, live), one head's full heatmap, every head on a sequence the learner types, heads switched off, one layer against two side by side, and "continue this text". Training runs in a Web Worker (on the page in short bursts where none can start); every number comes from the HeadLab API, none is computed here. The run logic is the shared training controller's (web/lib/teach/lm-controller.js); the grid, the generation panel and (english task) the relations view, each relation's true arc beside the attention of the head that tracks it, are in ./language-model/. */
export declare class HeadlabLanguageModel extends HTMLElement {
  /** induction | cricket | english; default induction (english: with the relations view) (attribute `task`) */
  task: 'induction' | 'cricket' | 'english';
  /** 1–4; default the task's (2; english 3) (attribute `layers`) */
  layers: number | null;
  /** heads per layer, 1, 2, 4 or 8; default the task's (4) (attribute `heads`) */
  heads: number;
  /** seeds initialisation and data; default: the task's suggested seed (attribute `seed`) */
  seed: number | null;
  /** slow | normal | fast (as fast as the machine goes); default fast (attribute `speed`) */
  speed: 'slow' | 'normal' | 'fast';
  /** training pauses every this many steps; default the task's (attribute `max-steps`) */
  maxSteps: number;
  /** also trains (or loads) a one-layer model on the same task, side by side (attribute `compare`) */
  compare: boolean;
  /** loads the trained model shipped with HeadLab (models/<task>.hlm) at once (attribute `pretrained`) */
  pretrained: boolean;
  /** starts training once loaded (attribute `autoplay`) */
  autoplay: boolean;
  /** hides the explanations (attribute `compact`) */
  compact: boolean;
  /** whether it is training */
  readonly running: boolean;
  /** the latest numbers of every run */
  readonly snapshot: object | null;
  /** every run's curves */
  readonly history: { layers: number, points: object[] }[];
  /** when the phase change happened; null before */
  readonly phaseChange: { step: number, seconds: number } | null;
  /** where training runs ('main': on the page, in short bursts) */
  readonly computeMode: 'worker' | 'main' | null;
  /** where training runs; null until known */
  readonly runsIn: 'worker' | 'main-thread' | null;
  /** how many threads a training step uses (2 or more only in the Worker of a cross-origin isolated page) */
  readonly threads: number | null;
  /** starts training */
  start(): void;
  /** pauses training */
  pause(): void;
  /** trains n steps while paused (default 10) */
  step(n?: number): Promise<void>;
  /** a new model from step 0 */
  reset(): void;
  /** switches a head off or on */
  setHeadEnabled(layer: number, head: number, on: boolean, run?: number): Promise<void>;
  /** shows one head's full heatmap below the grid */
  openHead(layer: number, head: number): void;
  /** draws every head on `text`; rejects with the API's RangeError when a word is unknown */
  showText(text: string): Promise<void>;
  /** continues a prompt */
  generate(options?: { prompt?: string, maxTokens?: number, temperature?: number }): Promise<{ text: string, tokens: string[], newTokens: string[] }>;
  /** the model as an .hlm file */
  saveModel(run?: number): Promise<Uint8Array>;
  /** loads a file saveModel wrote, paused; rejects with the API's RangeError for a file it cannot read */
  loadModel(bytes: Uint8Array | ArrayBuffer, name?: string | null): Promise<{ task: string, layers: number, heads: number, seed: number, step: number }>;
  addEventListener<K extends keyof HeadlabLanguageModelEventMap>(type: K, listener: (this: HeadlabLanguageModel, event: HeadlabLanguageModelEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabLanguageModelEventMap>(type: K, listener: (this: HeadlabLanguageModel, event: HeadlabLanguageModelEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-language-model> dispatches. */
export type HeadlabLanguageModelEventType = keyof HeadlabLanguageModelEvents;

/** The events <headlab-misconceptions> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabMisconceptionsEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** after each recompute, with the numbers of each part shown */
  'headlab-change': CustomEvent<{ part: 'all' | 'a' | 'b' | 'c', a?: object, b?: object, c?: object }>;
  /** the WebAssembly module or the element's code did not load */
  'headlab-error': CustomEvent<{ message: string }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-misconceptions> sees: its own and HTMLElement's. */
export interface HeadlabMisconceptionsEventMap extends HTMLElementEventMap, HeadlabMisconceptionsEvents {}
/** The attributes of <headlab-misconceptions> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabMisconceptionsAttributes {
  /** all | a | b | c; default all */
  'part'?: 'all' | 'a' | 'b' | 'c';
  /** heads in part (a); default 4 (1, 2, 4, 8 or 16) */
  'heads'?: number | `${number}`;
  /** part (b): the two heads swap roles */
  'swap'?: boolean;
  /** part (c): heads switched off, comma-separated, e.g. "1" */
  'ablate'?: string;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-misconceptions>: three wrong ideas about heads, each tested with numbers from the wasm module. (a) "More heads means each head sees fewer tokens": every head's full T × T matrix, all weights strictly positive; heads split the representation, not the sequence. (b) "Heads are averaged (or summed)": averaging, summing and a learned W^O side by side, with what each loses (swap what the two heads do and only the concatenation notices). (c) Head ablation: switch heads off and see the output change. */
export declare class HeadlabMisconceptions extends HTMLElement {
  /** heads in part (a); default 4 (1, 2, 4, 8 or 16) (attribute `heads`) */
  heads: number;
  /** part (b): the two heads swap roles (attribute `swap`) */
  swap: boolean;
  /** part (c): heads switched off, comma-separated, e.g. "1" (attribute `ablate`) */
  ablate: string;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  addEventListener<K extends keyof HeadlabMisconceptionsEventMap>(type: K, listener: (this: HeadlabMisconceptions, event: HeadlabMisconceptionsEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabMisconceptionsEventMap>(type: K, listener: (this: HeadlabMisconceptions, event: HeadlabMisconceptionsEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-misconceptions> dispatches. */
export type HeadlabMisconceptionsEventType = keyof HeadlabMisconceptionsEvents;

/** The events <headlab-model-explorer> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabModelExplorerEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** its state changed */
  'headlab-state': CustomEvent<{ from: string, to: string, reason: string | null }>;
  /** download progress */
  'headlab-progress': CustomEvent<{ file: string, loaded: number, total: number | null }>;
  /** a model was loaded */
  'headlab-load': CustomEvent<{ info: object, source: { kind: 'shipped' | 'hub' | 'files', name?: string, id?: string, revision?: string } }>;
  /** a run finished (next: the top next tokens) */
  'headlab-results': CustomEvent<{ tokens: string[], next: object[], baseline: object[] | null, problem: string | null }>;
  /** a head was switched off or on */
  'headlab-ablate': CustomEvent<{ layer: number, head: number, enabled: boolean }>;
  /** a head was opened */
  'headlab-open': CustomEvent<{ layer: number, head: number }>;
  /** a download was made */
  'headlab-export': CustomEvent<{ format: string, filename: string }>;
  /** a model or text was refused, or the module did not load */
  'headlab-error': CustomEvent<{ message: string }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-model-explorer> sees: its own and HTMLElement's. */
export interface HeadlabModelExplorerEventMap extends HTMLElementEventMap, HeadlabModelExplorerEvents {}
/** The attributes of <headlab-model-explorer> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabModelExplorerAttributes {
  /** what to load at once: induction | induction-1-layer | cricket (HeadLab's own), or a Hugging Face id such as openai-community/gpt2 (offered, downloaded only when the reader presses the button); default induction */
  'model'?: string;
  /** the text to run; default: the model's own example, or for a Hugging Face model the course sentence "Virat hit the ball because it was full and outside off." */
  'text'?: string;
  /** where Hugging Face ids are fetched from; default https://huggingface.co */
  'hub-url'?: string;
  /** hides the explanations */
  'compact'?: boolean;
  /** light | dark | auto */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-model-explorer>: the heads of a real language model. Pick one of HeadLab's own small models (in the page, offline, instant), a Hugging Face model (decoders: SmolLM2, Qwen2.5, TinyLlama, Llama 3.2, Pythia, GPT-2, GPT-Neo, Phi-3, Gemma; encoders: BERT, RoBERTa, DistilBERT; web/lib/teach/hub-models.js, each with its download size and a phone mark, shown before anything is fetched) or your own files; see every head in a layers × heads grid coloured by its detector scores (previous-token, duplicate-token, induction, first-token), with the query heads that share a key-value head banded and the attention sinks named; open a head to see its heatmap and lines view on your text; switch heads off and watch the top 5 next tokens change (an encoder: its guesses at each mask token); read the logit lens (what each layer would predict). The model lives in a Web Worker (on the page where none can start, e.g. from file://); this element is a view over web/lib/teach/explorer-controller.js and computes nothing itself. */
export declare class HeadlabModelExplorer extends HTMLElement {
  /** what to load at once: induction | induction-1-layer | cricket (HeadLab's own), or a Hugging Face id such as openai-community/gpt2 (offered, downloaded only when the reader presses the button); default induction (attribute `model`) */
  model: string;
  /** the text to run; default: the model's own example, or for a Hugging Face model the course sentence "Virat hit the ball because it was full and outside off." (attribute `text`) */
  text: string;
  /** where Hugging Face ids are fetched from; default https://huggingface.co (attribute `hub-url`) */
  hubUrl: string;
  /** hides the explanations (attribute `compact`) */
  compact: boolean;
  /** what the element is doing */
  readonly state: 'empty' | 'loading' | 'ready' | 'running' | 'error' | 'cancelled';
  /** the loaded model's info (name, layers, heads, …); null before one is loaded */
  readonly info: object | null;
  /** every head's detector scores; null before they are computed */
  readonly scores: object | null;
  /** the last run (tokens, attention, next, baseline, lens) */
  readonly results: object | null;
  /** the download under way */
  readonly progress: { file: string, loaded: number, total: number | null } | null;
  /** the DOM-free controller it views (web/lib/teach/explorer-controller.js) */
  readonly controller: object | null;
  /** the last load that failed while the model before it stayed (the state is then ready, with that model) */
  readonly failed: { source: object, code: string, message: string } | null;
  /** where the model runs; null before one is loaded */
  readonly runsIn: 'worker' | 'main-thread' | null;
  /** loads a model: one of HeadLab's own (induction, induction-1-layer, cricket), a Hugging Face id, or files */
  load(source: { kind: 'shipped', name: string } | { kind: 'hub', id: string, revision?: string } | { kind: 'files', files: File[] }): Promise<void>;
  /** stops a download under way */
  cancel(): void;
  /** runs the model on `text` */
  setText(text: string): Promise<void>;
  /** switches a head off or on */
  setHeadEnabled(layer: number, head: number, on: boolean): Promise<void>;
  /** switches every head back on */
  allHeadsOn(): Promise<void>;
  /** opens a head's heatmap and lines view */
  openHead(layer: number, head: number): void;
  /** computes the logit lens (a long text on a large model waits for this, or its button) */
  computeLens(): Promise<void>;
  addEventListener<K extends keyof HeadlabModelExplorerEventMap>(type: K, listener: (this: HeadlabModelExplorer, event: HeadlabModelExplorerEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabModelExplorerEventMap>(type: K, listener: (this: HeadlabModelExplorer, event: HeadlabModelExplorerEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-model-explorer> dispatches. */
export type HeadlabModelExplorerEventType = keyof HeadlabModelExplorerEvents;

/** The events <headlab-params> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabParamsEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** after every change (dK, dV and total null when h does not divide d_model) */
  'headlab-change': CustomEvent<{ dModel: number, heads: number, dK: number | null, dV: number | null, total: number | null }>;
  /** the WebAssembly module or the element's code did not load */
  'headlab-error': CustomEvent<{ message: string }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-params> sees: its own and HTMLElement's. */
export interface HeadlabParamsEventMap extends HTMLElementEventMap, HeadlabParamsEvents {}
/** The attributes of <headlab-params> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabParamsAttributes {
  /** model width; default 512 */
  'd-model'?: number | `${number}`;
  /** number of heads h; default 8 */
  'heads'?: number | `${number}`;
  /** choose d_k and d_v freely instead of d_model / h */
  'split-dk-dv'?: boolean;
  /** per-head query/key width in split mode; default 64 */
  'd-k'?: number | `${number}`;
  /** per-head value width in split mode; default 64 */
  'd-v'?: number | `${number}`;
  /** count the bias vectors too */
  'bias'?: boolean;
  /** hides presets and the copy-link toolbar */
  'hide-controls'?: boolean;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-params>: the parameter budget of multi-head attention. Sliders for d_model and h (starting at the original transformer's 512 and 8; the h slider steps through the divisors of d_model, the number box takes any h) show d_k = d_model / h, every projection matrix drawn to scale with one stripe per head, and the counts 3·d_model² + d_model² = 4·d_model², which stay the same for every h that divides d_model. An h that does not divide d_model shows why instead of a number. Optional mode with d_k ≠ d_v. Counts come from the wasm module (lab.parameterCount). */
export declare class HeadlabParams extends HTMLElement {
  /** model width; default 512 (attribute `d-model`) */
  dModel: number;
  /** number of heads h; default 8 (attribute `heads`) */
  heads: number;
  /** choose d_k and d_v freely instead of d_model / h (attribute `split-dk-dv`) */
  splitDkDv: boolean;
  /** per-head query/key width in split mode; default 64 (attribute `d-k`) */
  dK: number;
  /** per-head value width in split mode; default 64 (attribute `d-v`) */
  dV: number;
  /** count the bias vectors too (attribute `bias`) */
  bias: boolean;
  /** hides presets and the copy-link toolbar (attribute `hide-controls`) */
  hideControls: boolean;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  addEventListener<K extends keyof HeadlabParamsEventMap>(type: K, listener: (this: HeadlabParams, event: HeadlabParamsEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabParamsEventMap>(type: K, listener: (this: HeadlabParams, event: HeadlabParamsEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-params> dispatches. */
export type HeadlabParamsEventType = keyof HeadlabParamsEvents;

/** The events <headlab-scaling> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabScalingEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** after every recompute */
  'headlab-change': CustomEvent<{ dK: number, varianceRaw: number, varianceScaled: number, entropyScaled: number, entropyUnscaled: number, maxWeightScaled: number, maxWeightUnscaled: number }>;
  /** the WebAssembly module or the element's code did not load */
  'headlab-error': CustomEvent<{ message: string }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-scaling> sees: its own and HTMLElement's. */
export interface HeadlabScalingEventMap extends HTMLElementEventMap, HeadlabScalingEvents {}
/** The attributes of <headlab-scaling> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabScalingAttributes {
  /** the dimension of queries and keys; default 64 (a power of 2 from 1 to 4096) */
  'd-k'?: number | `${number}`;
  /** keys per query (the softmax's length); default 64 */
  'keys'?: number | `${number}`;
  /** random seed; default 1 */
  'seed'?: number | `${number}`;
  /** hides the toolbar */
  'hide-controls'?: boolean;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-scaling>: why attention divides by √d_k. Queries and keys with independent N(0, 1) entries are drawn in the wasm module; the element shows the histogram of their dot products with and without the scaling, the histogram of the resulting softmax weights, one query's weights sorted, and live statistics (variance, mean row entropy, mean largest weight). A sweep over d_k shows the unscaled softmax saturating toward one-hot as d_k grows. All computation runs in a Web Worker when one can start. */
export declare class HeadlabScaling extends HTMLElement {
  /** the dimension of queries and keys; default 64 (a power of 2 from 1 to 4096) (attribute `d-k`) */
  dK: number;
  /** keys per query (the softmax's length); default 64 (attribute `keys`) */
  keys: number;
  /** random seed; default 1 (attribute `seed`) */
  seed: number;
  /** hides the toolbar (attribute `hide-controls`) */
  hideControls: boolean;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  /** where its calculations run; null before the first */
  readonly runsIn: 'worker' | 'main-thread' | null;
  addEventListener<K extends keyof HeadlabScalingEventMap>(type: K, listener: (this: HeadlabScaling, event: HeadlabScalingEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabScalingEventMap>(type: K, listener: (this: HeadlabScaling, event: HeadlabScalingEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-scaling> dispatches. */
export type HeadlabScalingEventType = keyof HeadlabScalingEvents;

/** The events <headlab-theme-toggle> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabThemeToggleEvents {
  /** the reader chose a theme */
  'headlab-theme': CustomEvent<{ theme: 'light' | 'dark' | 'auto' }>;
}
/** Every event a listener on <headlab-theme-toggle> sees: its own and HTMLElement's. */
export interface HeadlabThemeToggleEventMap extends HTMLElementEventMap, HeadlabThemeToggleEvents {}
/** The attributes of <headlab-theme-toggle> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabThemeToggleAttributes {
  /** light | dark | auto; default: the remembered choice, else auto */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-theme-toggle>: a light/dark switch for pages that host HeadLab elements. It sets `data-theme` on <html> and the `theme` attribute of every headlab-* element on the page, and remembers the choice (localStorage) when allowed. */
export declare class HeadlabThemeToggle extends HTMLElement {
  /** the reader's choice (the `theme` attribute; auto when it is neither light nor dark) (attribute `theme`) */
  theme: 'light' | 'dark' | 'auto';
  addEventListener<K extends keyof HeadlabThemeToggleEventMap>(type: K, listener: (this: HeadlabThemeToggle, event: HeadlabThemeToggleEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabThemeToggleEventMap>(type: K, listener: (this: HeadlabThemeToggle, event: HeadlabThemeToggleEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-theme-toggle> dispatches. */
export type HeadlabThemeToggleEventType = keyof HeadlabThemeToggleEvents;

/** The events <headlab-trainer> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabTrainerEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** on every update */
  'headlab-step': CustomEvent<{ step: number, seconds: number, runs: { heads: number, step: number, loss: number | null, accuracy: number | null, evalLoss: number, evalAccuracy: number }[] }>;
  /** training started or paused */
  'headlab-run': CustomEvent<{ running: boolean, reason: string }>;
  /** every relation has a head of its own and accuracy ≥ 0.99 */
  'headlab-specialised': CustomEvent<{ heads: number, step: number, seconds: number, tracks: { relation: string, head: number }[] }>;
  /** a head was switched off or on */
  'headlab-ablate': CustomEvent<{ run: number, head: number, enabled: boolean }>;
  /** a download was made */
  'headlab-export': CustomEvent<{ format: string, filename: string }>;
  /** a model was loaded */
  'headlab-load': CustomEvent<{ name: string, config: object }>;
  /** something failed (training, a file, the module) */
  'headlab-error': CustomEvent<{ message: string }>;
  /** training diverged and stopped at the last good step */
  'headlab-diverged': CustomEvent<{ heads: number, step: number, learningRate: number, optimizer: string, reason: 'loss' | 'update' }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-trainer> sees: its own and HTMLElement's. */
export interface HeadlabTrainerEventMap extends HTMLElementEventMap, HeadlabTrainerEvents {}
/** The attributes of <headlab-trainer> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabTrainerAttributes {
  /** a task name from lab.tasks(); default two-relations */
  'task'?: string;
  /** h (1–64); default 2. Must divide d-model */
  'heads'?: number | `${number}`;
  /** d_model (1–128); default 16 */
  'd-model'?: number | `${number}`;
  /** Adam's learning rate (up to 10); default 0.003 */
  'learning-rate'?: number | `${number}`;
  /** examples per step (1–4096); default 64 */
  'batch-size'?: number | `${number}`;
  /** seeds initialisation, data and probe; default 7 */
  'seed'?: number | `${number}`;
  /** learn | slow | normal | fast (as fast as the machine goes); default learn: slow until the heads have specialised, so a learner sees it happen, then normal */
  'speed'?: 'slow' | 'normal' | 'fast' | 'learn';
  /** training pauses every this many steps; default 2000 */
  'max-steps'?: number | `${number}`;
  /** trains h = 1 and h = heads side by side on the same data */
  'compare'?: boolean;
  /** starts training once loaded */
  'autoplay'?: boolean;
  /** hides the settings and the file tools (start, pause, step, reset and head switches stay) */
  'hide-controls'?: boolean;
  /** id of a <headlab-heads> on the page: "Show in the heads view" hands the trained layer to it */
  'heads-view'?: string;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-trainer>: trains a one-layer multi-head attention model on a synthetic task in the browser and shows the heads specialise: live loss and accuracy curves (training batch and held-out), every head's attention on a fixed probe sequence, per-head metrics (entropy, mean attention distance, share of weight on each relation's position) and a verdict per head. Side by side, h = 1 and h = N train on the same data: the single head can only blend the relations. Heads can be switched off during and after training. Training runs in a Web Worker (main thread in short bursts where none can start); every number comes from the HeadLab API, none is computed here. */
export declare class HeadlabTrainer extends HTMLElement {
  /** a task name from lab.tasks(); default two-relations (attribute `task`) */
  task: string;
  /** h (1–64); default 2. Must divide d-model (attribute `heads`) */
  heads: number;
  /** d_model (1–128); default 16 (attribute `d-model`) */
  dModel: number;
  /** Adam's learning rate (up to 10); default 0.003 (attribute `learning-rate`) */
  learningRate: number;
  /** examples per step (1–4096); default 64 (attribute `batch-size`) */
  batchSize: number;
  /** seeds initialisation, data and probe; default 7 (attribute `seed`) */
  seed: number;
  /** learn | slow | normal | fast (as fast as the machine goes); default learn: slow until the heads have specialised, so a learner sees it happen, then normal (attribute `speed`) */
  speed: 'slow' | 'normal' | 'fast' | 'learn';
  /** training pauses every this many steps; default 2000 (attribute `max-steps`) */
  maxSteps: number;
  /** trains h = 1 and h = heads side by side on the same data (attribute `compare`) */
  compare: boolean;
  /** starts training once loaded (attribute `autoplay`) */
  autoplay: boolean;
  /** hides the settings and the file tools (start, pause, step, reset and head switches stay) (attribute `hide-controls`) */
  hideControls: boolean;
  /** id of a <headlab-heads> on the page: "Show in the heads view" hands the trained layer to it (attribute `heads-view`) */
  headsView: string;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  /** whether it is training */
  readonly running: boolean;
  /** the latest numbers of every run */
  readonly snapshot: object | null;
  /** every run's curves */
  readonly history: { heads: number, points: object[] }[];
  /** where training runs ('main': on the page, in short bursts) */
  readonly computeMode: 'worker' | 'main' | null;
  /** where training runs; null until known */
  readonly runsIn: 'worker' | 'main-thread' | null;
  /** starts training */
  start(): void;
  /** pauses training */
  pause(): void;
  /** trains n steps (1 to 10000, default 1) while paused */
  step(n?: number): Promise<void>;
  /** a new model from step 0 */
  reset(): void;
  /** a new Worker and a new model from step 0 (after the Worker stopped) */
  restart(): void;
  /** after a divergence: a tenth of the rate (at most the default), then a new model from step 0 */
  lowerRate(): void;
  /** switches a head off or on */
  setHeadEnabled(head: number, on: boolean, run?: number): Promise<void>;
  /** the model as a file loadModel reads */
  saveModel(run?: number): Promise<Uint8Array>;
  /** loads a file saveModel wrote (resolves to its settings) */
  loadModel(bytes: Uint8Array | ArrayBuffer, name?: string): Promise<object>;
  addEventListener<K extends keyof HeadlabTrainerEventMap>(type: K, listener: (this: HeadlabTrainer, event: HeadlabTrainerEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabTrainerEventMap>(type: K, listener: (this: HeadlabTrainer, event: HeadlabTrainerEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-trainer> dispatches. */
export type HeadlabTrainerEventType = keyof HeadlabTrainerEvents;

/** The events <headlab-worked-example> dispatches (bubbling, composed CustomEvents), by name. */
export interface HeadlabWorkedExampleEvents {
  /** the module is loaded and the first result shown */
  'headlab-ready': CustomEvent<{ element: string }>;
  /** after every recompute */
  'headlab-change': CustomEvent<{ output: number[][], weights: number[][][] }>;
  /** the inputs cannot be computed, or the module did not load */
  'headlab-error': CustomEvent<{ message: string, detail?: unknown }>;
  /** its language changed (the `lang` attribute or an ancestor's) */
  'headlab-relocalised': CustomEvent<{ lang: string }>;
  /** a share link was made */
  'headlab-link': CustomEvent<{ url: string }>;
}
/** Every event a listener on <headlab-worked-example> sees: its own and HTMLElement's. */
export interface HeadlabWorkedExampleEventMap extends HTMLElementEventMap, HeadlabWorkedExampleEvents {}
/** The attributes of <headlab-worked-example> in markup (HTMLElement's own, such as id and class, come from each framework). */
export interface HeadlabWorkedExampleAttributes {
  /** "1".."10" or "all" (every step at once); default "1" */
  'step'?: '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '10' | 'all' | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;
  /** hides the toolbar and step navigation (for a fixed step in a course page) */
  'hide-controls'?: boolean;
  /** three token labels, space- or "|"-separated; default "ball full it" */
  'tokens'?: string;
  /** the highlighted query token, 1..3; default 3 ("it") */
  'query'?: number | `${number}`;
  /** W^O preset: identity | mix | drop-1 | drop-2 | custom; default identity */
  'wo'?: 'identity' | 'mix' | 'drop-1' | 'drop-2' | 'custom';
  /** heads switched off, comma-separated, e.g. "2" */
  'ablate'?: string;
  /** hides the explanations (for narrow course columns) */
  'compact'?: boolean;
  /** light | dark | auto (default: light, or dark when the page declares a dark color-scheme) */
  'theme'?: 'light' | 'dark' | 'auto';
}
/** <headlab-worked-example>: the course's worked example (tokens ball, full, it; d_model = 4; two heads with d_k = d_v = 2), stepped through the whole pipeline X → Q_i, K_i, V_i → scores → ÷√d_k → softmax → weighted sum → concat → W^O. Every number comes from the WebAssembly module; embeddings and every projection matrix are editable and everything downstream recomputes. Step 10 turns W^O into a real mixing matrix or zeroes one head's part of it, and switches heads off, to show which heads' information reaches the output. */
export declare class HeadlabWorkedExample extends HTMLElement {
  /** "1".."10" or "all" (every step at once); default "1" (attribute `step`) */
  step: '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '10' | 'all';
  /** hides the toolbar and step navigation (for a fixed step in a course page) (attribute `hide-controls`) */
  hideControls: boolean;
  /** three token labels, space- or "|"-separated; default "ball full it" (attribute `tokens`) */
  tokens: string;
  /** the highlighted query token, 1..3; default 3 ("it") (attribute `query`) */
  query: number;
  /** W^O preset: identity | mix | drop-1 | drop-2 | custom; default identity (attribute `wo`) */
  wo: 'identity' | 'mix' | 'drop-1' | 'drop-2' | 'custom';
  /** heads switched off, comma-separated, e.g. "2" (attribute `ablate`) */
  ablate: string;
  /** hides the explanations (for narrow course columns) (attribute `compact`) */
  compact: boolean;
  addEventListener<K extends keyof HeadlabWorkedExampleEventMap>(type: K, listener: (this: HeadlabWorkedExample, event: HeadlabWorkedExampleEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof HeadlabWorkedExampleEventMap>(type: K, listener: (this: HeadlabWorkedExample, event: HeadlabWorkedExampleEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}
/** The names of the events <headlab-worked-example> dispatches. */
export type HeadlabWorkedExampleEventType = keyof HeadlabWorkedExampleEvents;

/** Every HeadLab tag, in the order of the site. */
export declare const tags: readonly ('headlab-choosing-h' | 'headlab-heads' | 'headlab-language-model' | 'headlab-misconceptions' | 'headlab-model-explorer' | 'headlab-params' | 'headlab-scaling' | 'headlab-theme-toggle' | 'headlab-trainer' | 'headlab-worked-example')[];
/**
 * Loads and registers one element (once); for elements the document watcher cannot see (inside shadow roots).
 * Rejects where there is no DOM (a server): there the tag is rendered as HTML and the browser loads its code.
 */
export declare function loadElement<K extends (typeof tags)[number]>(tag: K): Promise<Record<string, CustomElementConstructor>>;
/** createHeadlab of 'headlab'; without options, the instance the elements use (one per page). */
export declare function createHeadlab(options?: CreateHeadlabOptions): Promise<Headlab>;

declare global {
  interface HTMLElementTagNameMap {
    'headlab-choosing-h': HeadlabChoosingH;
    'headlab-heads': HeadlabHeads;
    'headlab-language-model': HeadlabLanguageModel;
    'headlab-misconceptions': HeadlabMisconceptions;
    'headlab-model-explorer': HeadlabModelExplorer;
    'headlab-params': HeadlabParams;
    'headlab-scaling': HeadlabScaling;
    'headlab-theme-toggle': HeadlabThemeToggle;
    'headlab-trainer': HeadlabTrainer;
    'headlab-worked-example': HeadlabWorkedExample;
  }
}
