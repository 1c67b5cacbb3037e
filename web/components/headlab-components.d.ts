// Written by scripts/custom-elements.mjs from the elements' sources: do not edit by hand.
// The npm package's components/index.d.ts: `import 'headlab/components'` (every element, loaded on
// first use) or `import 'headlab/components/<name>'` (one), with each tag in HTMLElementTagNameMap.
// (In the package, components/index.d.ts imports '../web/lib/headlab.js'.)
import type { CreateHeadlabOptions, Headlab } from '../lib/headlab.js';

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
}
/** The events <headlab-choosing-h> dispatches (bubbling, composed CustomEvents). */
export type HeadlabChoosingHEventType = 'headlab-ready' | 'headlab-change' | 'headlab-measured' | 'headlab-link';

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
  /** a model object in the JSON format; setting it shows that model Properties: runsIn ('worker' | 'main-thread', read-only: where its calculations run; null before the first). */
  model: object | null;
}
/** The events <headlab-heads> dispatches (bubbling, composed CustomEvents). */
export type HeadlabHeadsEventType = 'headlab-ready' | 'headlab-change' | 'headlab-error' | 'headlab-select' | 'headlab-link';

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
}
/** The events <headlab-language-model> dispatches (bubbling, composed CustomEvents). */
export type HeadlabLanguageModelEventType = 'headlab-ready' | 'headlab-step' | 'headlab-run' | 'headlab-phase-change' | 'headlab-ablate' | 'headlab-generate' | 'headlab-export' | 'headlab-load' | 'headlab-error' | 'headlab-link';

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
}
/** The events <headlab-misconceptions> dispatches (bubbling, composed CustomEvents). */
export type HeadlabMisconceptionsEventType = 'headlab-ready' | 'headlab-change' | 'headlab-link';

/** <headlab-model-explorer>: the heads of a real language model. Pick one of HeadLab's own small models (in the page, offline, instant), a Hugging Face model (GPT-2 small, distilgpt2, TinyStories; its download size is shown before anything is fetched) or your own files; see every head in a layers × heads grid coloured by its detector scores (previous-token, duplicate-token, induction, first-token); open a head to see its heatmap and lines view on your text; switch heads off and watch the top 5 next tokens change; read the logit lens (what each layer would predict). The model lives in a Web Worker (on the page where none can start, e.g. from file://); this element is a view over web/lib/teach/explorer-controller.js and computes nothing itself. */
export declare class HeadlabModelExplorer extends HTMLElement {
  /** what to load at once: induction | induction-1-layer | cricket (HeadLab's own), or a Hugging Face id such as openai-community/gpt2 (offered, downloaded only when the reader presses the button); default induction (attribute `model`) */
  model: string;
  /** the text to run; default: the model's own example, or for a Hugging Face model the course sentence "Virat hit the ball because it was full and outside off." (attribute `text`) */
  text: string;
  /** where Hugging Face ids are fetched from; default https://huggingface.co (attribute `hub-url`) */
  hubUrl: string;
  /** hides the explanations (attribute `compact`) */
  compact: boolean;
}
/** The events <headlab-model-explorer> dispatches (bubbling, composed CustomEvents). */
export type HeadlabModelExplorerEventType = 'headlab-ready' | 'headlab-state' | 'headlab-progress' | 'headlab-load' | 'headlab-results' | 'headlab-ablate' | 'headlab-open' | 'headlab-export' | 'headlab-error' | 'headlab-link';

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
}
/** The events <headlab-params> dispatches (bubbling, composed CustomEvents). */
export type HeadlabParamsEventType = 'headlab-ready' | 'headlab-change' | 'headlab-link';

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
}
/** The events <headlab-scaling> dispatches (bubbling, composed CustomEvents). */
export type HeadlabScalingEventType = 'headlab-ready' | 'headlab-change' | 'headlab-link';

/** <headlab-theme-toggle>: a light/dark switch for pages that host HeadLab elements. It sets `data-theme` on <html> and the `theme` attribute of every headlab-* element on the page, and remembers the choice (localStorage) when allowed. */
export declare class HeadlabThemeToggle extends HTMLElement {
}
/** The events <headlab-theme-toggle> dispatches (bubbling, composed CustomEvents). */
export type HeadlabThemeToggleEventType = 'headlab-theme';

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
}
/** The events <headlab-trainer> dispatches (bubbling, composed CustomEvents). */
export type HeadlabTrainerEventType = 'headlab-ready' | 'headlab-step' | 'headlab-run' | 'headlab-specialised' | 'headlab-ablate' | 'headlab-export' | 'headlab-load' | 'headlab-error' | 'headlab-diverged' | 'headlab-link';

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
}
/** The events <headlab-worked-example> dispatches (bubbling, composed CustomEvents). */
export type HeadlabWorkedExampleEventType = 'headlab-ready' | 'headlab-change' | 'headlab-error' | 'headlab-link';

/** Every HeadLab tag, in the order of the site. */
export declare const tags: readonly ('headlab-choosing-h' | 'headlab-heads' | 'headlab-language-model' | 'headlab-misconceptions' | 'headlab-model-explorer' | 'headlab-params' | 'headlab-scaling' | 'headlab-theme-toggle' | 'headlab-trainer' | 'headlab-worked-example')[];
/** Loads and registers one element (once); for elements the document watcher cannot see (inside shadow roots). */
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
