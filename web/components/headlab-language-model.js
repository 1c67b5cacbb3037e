/**
 * <headlab-language-model>: trains a small transformer language model in the
 * browser on a next-token task and shows its heads take on jobs nobody named:
 * the loss curve with the phase change marked, a layers × heads grid (each head's
 * pattern on an example, its label and main score, live), one head's full
 * heatmap, every head on a sequence the learner types, heads switched off, one
 * layer against two side by side, and "continue this text". Training runs in a
 * Web Worker (on the page in short bursts where none can start); every number
 * comes from the HeadLab API, none is computed here.
 *
 * @attr {string} task        induction | cricket; default induction
 * @attr {number} layers      1–4; default the task's (2)
 * @attr {number} heads       heads per layer, 1, 2, 4 or 8; default the task's (4)
 * @attr {number} seed        seeds initialisation and data; default: the task's suggested seed
 * @attr {string} speed       slow | normal | fast (as fast as the machine goes); default fast
 * @attr {number} max-steps   training pauses every this many steps; default the task's
 * @attr {boolean} compare    also trains (or loads) a one-layer model on the same task, side by side
 * @attr {boolean} pretrained loads the trained model shipped with HeadLab (models/<task>.hlm) at once
 * @attr {boolean} autoplay   starts training once loaded
 * @attr {boolean} compact    hides the explanations
 * @attr {string} theme       light | dark | auto
 *
 * Methods: start(), pause(), step(n), reset(), setHeadEnabled(layer, head, on, run?),
 * openHead(layer, head), showText(text) → Promise, generate({ prompt, maxTokens, temperature }) → Promise,
 * saveModel(run?) → Promise<Uint8Array>. Layers, heads and runs count from 0.
 * Properties: running, snapshot, history, phaseChange ({ step, seconds } or null), computeMode,
 * threads (how many threads a training step uses: 2 or more only in the Worker of a cross-origin isolated page).
 *
 * @fires headlab-ready
 * @fires headlab-step          detail: { step, seconds, runs: [{ layers, step, loss, evalLoss, accuracy }] }
 * @fires headlab-run           detail: { running, reason }
 * @fires headlab-phase-change  detail: { layers, step, seconds, accuracy }
 * @fires headlab-ablate        detail: { run, layer, head, enabled }
 * @fires headlab-generate      detail: { prompt, text }
 * @fires headlab-export        detail: { format, filename }
 * @fires headlab-load          detail: { files }
 * @fires headlab-error         detail: { message }
 * @fires headlab-link          detail: { url }
 *
 * @csspart heads     the layers × heads grid
 * @csspart heatmap   the opened head's heatmap
 * @csspart chart     the loss and accuracy charts
 * @csspart export    download menus
 * @csspart copy-link the copy-link button
 */

import { TrainingElement, option, selectValue } from './shared/training-element.js';
import { el, uid, onWidthChange, setText } from './shared/dom.js';
import { fmt } from '../lib/teach/format.js';
import { createHeatmap } from './shared/heatmap.js';
import { liveHeatmap } from './shared/trainer-heatmap.js';
import { exportMenu, download } from './shared/export.js';
import { SERIES } from './shared/charts.js';
import { curvesFigure } from './shared/trainer-curves.js';
import { viridisRGB } from './shared/colormap.js';
import { TrainerClient } from './shared/trainer-client.js';
import { LmSession, LM_PACES, LM_EVAL_EXAMPLES, LM_SCORE_EXAMPLES } from '../lib/teach/lm-session.js';
import { BASE_URL } from './shared/assets.js';
import embeddedModels from 'headlab:embedded-models';

/** Held-out task accuracy at which the phase change is marked (see the note under the charts). */
export const PHASE_ACCURACY = 0.5;
const HEADS = [1, 2, 4, 8];
const LAYERS = [1, 2, 3, 4];
const SPEEDS = { slow: `Slow: ${LM_PACES.slow} steps/s`, normal: `Normal: ${LM_PACES.normal} steps/s`, fast: 'Fast: no limit' };

/** The trained models HeadLab ships, in web/models/ (written by `npm run train:models`). */
const SHIPPED = { induction: { main: 'induction.hlm', oneLayer: 'induction-1-layer.hlm' }, cricket: { main: 'cricket.hlm' } };

/** What each task's example, prompt and hint look like (token text only; the model tokenizes). */
const TASK_TEXT = {
  induction: {
    title: 'A small language model learns to copy',
    example: 'j 4 e p x 2 m q b k r p x 2 m q b k r 0 w z s',
    prompt: 'c 3 f a 5 w n t c 3 f',
    boxLabel: 'Your sequence',
    hint: 'Tokens a to z and 0 to 5, separated by spaces. Repeat a stretch to see the induction head look back.',
  },
  cricket: {
    title: 'A small language model learns what “it” refers to',
    example: 'virat hit the ball with the bat because it was full',
    prompt: 'smith checked the glove near the pitch because it was',
    boxLabel: 'Your sentence',
    hint: 'Words of the toy commentary, separated by spaces.',
  },
};

/** Score field of each head label, and what the label means in learner words. */
const LABELS = {
  'previous token': { key: 'previousToken', kind: 'prev', means: 'looks at the token just before' },
  induction: { key: 'induction', kind: 'induction', means: 'looks at what came after the last time this token appeared' },
  'duplicate token': { key: 'duplicateToken', kind: 'dup', means: 'looks at earlier copies of the same token' },
  'first token': { key: 'firstToken', kind: 'first', means: 'rests on the first token (a place to put weight it has no use for)' },
  coreference: { key: 'coreference', kind: 'coref', means: 'looks from “it” back to the noun it refers to' },
};
const SCORE_FIELDS = [['previousToken', 'previous token'], ['induction', 'induction'], ['duplicateToken', 'duplicate token'],
  ['firstToken', 'first token'], ['coreference', 'coreference']];

const CSS = `
.settings { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 8.5rem), 1fr)); gap: 0.2rem 0.9rem; align-items: end; }
.settings .field { flex-direction: column; align-items: stretch; gap: 0.15rem; margin: 0.25rem 0; }
.settings .field > label { min-width: 0; }
.settings select, .settings input[type="number"] { width: 100%; }
.settings .wide { grid-column: 1 / -1; }
.settings .wide select { width: min(100%, 24rem); }
.runbar .progress { font-variant-numeric: tabular-nums; color: var(--hl-muted); font-size: 0.9rem; }
.btn--start { min-width: 6.5rem; }
.btn--primary:hover { background: var(--hl-accent); color: var(--hl-bg); filter: brightness(1.12); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 21rem), 1fr)); gap: 0.9rem; margin: 0.5rem 0; }
.chart { min-width: 0; }
.chart h3 { margin: 0 0 0.2rem; font-size: 0.98rem; }
.chart svg { max-width: 100%; height: auto; }
.phase-note { margin: 0.2rem 0 0.6rem; }
.phase-note strong { color: var(--hl-ok); }
.heads-grid { display: grid; gap: 0.4rem; margin: 0.4rem 0; }
.heads-grid [role="row"] { display: grid; grid-template-columns: 3.6rem repeat(var(--heads), minmax(0, 9.5rem)); gap: 0.4rem; align-items: stretch; }
.heads-grid [role="rowheader"] { font-weight: 600; font-size: 0.85rem; color: var(--hl-muted); align-self: center; }
.narrow-only { display: none; }
.heads-grid [role="columnheader"] { font-weight: 600; font-size: 0.8rem; color: var(--hl-muted); text-align: center; }
.cell { position: relative; border: 1px solid var(--hl-border); border-radius: 6px; padding: 0.25rem; background: var(--hl-surface); cursor: pointer; min-width: 0; }
.cell:hover { border-color: var(--hl-accent); }
.cell[aria-selected="true"] { border: 2px solid var(--hl-accent); padding: calc(0.25rem - 1px); }
.cell canvas { display: block; width: 100%; aspect-ratio: 1; image-rendering: pixelated; border-radius: 3px; }
.cell .tag { display: block; font-size: 0.78rem; font-weight: 700; line-height: 1.2; margin-top: 0.2rem; overflow-wrap: break-word; hyphens: auto; min-height: 2.4em; }
.cell .score { display: block; font-size: 0.75rem; color: var(--hl-muted); font-variant-numeric: tabular-nums; }
.cell[data-kind="induction"] .tag { color: var(--hl-ok); }
.cell[data-kind="prev"] .tag, .cell[data-kind="coref"] .tag { color: var(--hl-accent); }
.cell[data-kind="none"] .tag { color: var(--hl-muted); font-weight: 400; }
.cell[data-off] canvas { opacity: 0.35; }
.cell[data-off] .tag::after { content: " (off)"; color: var(--hl-error); font-weight: 400; }
.textbox { display: flex; flex-wrap: wrap; gap: 0.4rem 0.6rem; align-items: center; }
.textbox input[type="text"] { flex: 1 1 16rem; min-width: 0; }
.textbox .field { flex: 1 1 100%; }
.textbox .field > label { min-width: 0; }
.text-error { color: var(--hl-error); font-weight: 600; margin: 0.2rem 0; overflow-wrap: anywhere; }
.text-error:empty { display: none; }
.text-error .known { display: block; color: var(--hl-muted); font-weight: 400; font-size: 0.875rem; }
.switches { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; }
.compare table td.num { min-width: 4em; }
.gen-out { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; overflow-wrap: anywhere; min-height: 1.5em; }
.gen-out .more { font-weight: 700; color: var(--hl-accent); }
.files { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; }
section.part { margin-top: 0.8rem; }
@container (max-width: 30rem) {
  .charts { grid-template-columns: 1fr; }
  .heads-grid [role="row"] { grid-template-columns: 1.5rem repeat(var(--heads), minmax(0, 1fr)); gap: 0.25rem; }
  .wide-only { display: none; }
  .narrow-only { display: inline; }
  .cell { padding: 0.15rem; }
  .cell .tag { font-size: 0.68rem; }
  .cell .score { font-size: 0.7rem; }
  .cell .score-name { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
}
`;

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A shipped model's bytes: carried inside the classic bundle (file://), else fetched next to the bundle. */
async function shippedModel(file) {
  if (embeddedModels?.[file]) return decodeBase64(embeddedModels[file]);
  const url = new URL(`models/${file}`, BASE_URL).href;
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`models/${file} could not be fetched (${e?.message ?? e})`, { cause: e });
  }
  if (!response.ok) throw new Error(`models/${file} could not be fetched (HTTP ${response.status})`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The label a head got, its main score and what the label means. */
function describeHead(s) {
  const info = LABELS[s.label];
  if (info) return { tag: s.label, score: s[info.key], scoreName: s.label, kind: info.kind, means: info.means };
  let best = null;
  for (const [key, name] of SCORE_FIELDS) {
    if (Number.isFinite(s[key]) && (!best || s[key] > best.score)) best = { score: s[key], scoreName: name };
  }
  return { tag: 'no label', kind: 'none', means: 'has no score at the threshold yet', ...best };
}

/**
 * The API's message about text it cannot read, in learner words: { text, known } (plain text;
 * `known` lists the words of the task when the problem is a word it does not know).
 */
function wordProblem(message, vocabulary) {
  const unknown = /unknown word "((?:[^"\\]|\\.)*)"(?: at word (\d+))?/.exec(message);
  if (unknown) {
    const word = unknown[1].replace(/\\(.)/g, '$1');
    const words = vocabulary.filter((w) => /\w/.test(w) && !w.startsWith('<'));
    const marks = vocabulary.filter((w) => !/\w/.test(w)).map((w) => `“${w}”`);
    return {
      text: `The model does not know “${word}”${unknown[2] ? ` (word ${unknown[2]})` : ''}: it only learned the words of its task.`,
      known: `It knows: ${words.join(' ')}${marks.length ? `, and ${marks.join(' ')}` : ''}.`,
    };
  }
  const long = /has (\d+) words;.*at most (\d+) words/.exec(message);
  if (long) return { text: `That is ${long[1]} words; this model reads at most ${long[2]}. Shorten it.`, known: '' };
  return { text: `The model cannot read that: ${message.replace(/^LanguageModel\.\w+: /, '')}`, known: '' };
}

/** Shows a wordProblem() in `node` (text only). */
function showProblem(node, problem) {
  node.replaceChildren(problem.text, ...(problem.known ? [' ', el('span', { class: 'known' }, problem.known)] : []));
}

export class HeadlabLanguageModel extends TrainingElement {
  static tag = 'headlab-language-model';
  static chartPrefix = 'lm';
  static stateKey = 'lm';
  static css = CSS;
  static props = {
    task: { type: 'enum', values: ['induction', 'cricket'], default: 'induction', state: true },
    layers: { type: 'int', default: 2, min: 1, max: 4, state: true },
    heads: { type: 'int', default: 4, min: 1, max: 8, state: true },
    seed: { type: 'int', default: null, min: 0, max: 2 ** 31 - 1, state: true },  // null: the task's defaults.seed
    speed: { type: 'enum', values: ['slow', 'normal', 'fast'], default: 'fast', state: true },
    maxSteps: { attr: 'max-steps', type: 'int', default: 0, min: 0, max: 1e6 },
    compare: { type: 'bool', default: false, state: true },
    pretrained: { type: 'bool', default: false, state: true },
    autoplay: { type: 'bool', default: false },
  };

  // ---------------------------------------------------------------- public

  get running() { return Boolean(this._running); }
  get snapshot() { return this._snapshot ?? null; }
  get history() { return (this._runs ?? []).map((r) => ({ layers: r.layers, points: r.history.slice() })); }
  get phaseChange() { return this._runs?.[0]?.phase ?? null; }
  get computeMode() { return this._client?.mode ?? null; }
  /** Threads each training step of the (first) model is split over: more than 1 in the Worker of a cross-origin isolated page; null before a model exists. */
  get threads() { return this._runs?.[0]?.threads ?? null; }

  /** Steps per round: max-steps, else the task's own training length. */
  get roundSteps() { return this.maxSteps || this._task?.defaults?.steps || 3000; }
  get _until() { return (this._roundStart ?? 0) + this.roundSteps; }

  start() {
    if (!this._client || this._client.dead || !this._runs?.length || this._running) return;
    const step = this._step ?? 0;
    if (step >= this._until) this._roundStart = step;
    this._running = true;
    this._runStarted = performance.now();
    this._client.request('options', { intervalMs: this._reduced?.matches ? 500 : 250 });
    this._client.request('run', { until: this._until, pace: LM_PACES[this.speed] }).catch((e) => this.fail(e));
    this.setAttribute('data-running', '');
    this.renderButtons();
    this.say('Training started.');
    this.emit('run', { running: true, reason: 'start' });
  }

  pause() {
    if (this._running) this._client.request('pause').catch((e) => this.fail(e));
  }

  async step(n = 10) {
    if (!Number.isInteger(n) || n < 1 || n > 10000) throw new RangeError(`headlab-language-model: step(n): n must be a whole number from 1 to 10000, got ${n}`);
    this.whyNotReady('step(n)');
    if (this._running) throw new Error('headlab-language-model: step(n): training is running; pause() first');
    this.ingest(await this._client.request('step', { n }));
  }

  reset() {
    this._configKey = null;
    this._running = false;
    this.removeAttribute('data-running');
    this.stopClock();
    this.requestUpdate();
  }

  whyNotReady(what) {
    if (!this._client || !this._runs?.length) throw new Error(`headlab-language-model: ${what}: not ready yet (wait for headlab-ready)`);
    if (this._client.dead) throw new Error(`headlab-language-model: ${what}: the Worker has stopped; call reset() first`);
  }

  async setHeadEnabled(layer, head, enabled, run = 0) {
    this.whyNotReady('setHeadEnabled');
    const r = this._runs[run];
    if (!r) throw new RangeError(`headlab-language-model: setHeadEnabled: run must be 0${this._runs.length > 1 ? ' or 1' : ''}, got ${run}`);
    if (!Number.isInteger(layer) || layer < 0 || layer >= r.layers) throw new RangeError(`headlab-language-model: setHeadEnabled: layer must be 0..${r.layers - 1}, got ${layer}`);
    if (!Number.isInteger(head) || head < 0 || head >= r.heads) throw new RangeError(`headlab-language-model: setHeadEnabled: head must be 0..${r.heads - 1}, got ${head}`);
    const snap = await this._client.request('setHead', { run, layer, head, enabled: Boolean(enabled) });
    this.ingest(snap);
    const s = snap.runs[run];
    this.say(`Layer ${layer + 1}, head ${head + 1} switched ${enabled ? 'on' : 'off'}: held-out accuracy ${fmt(s.eval.accuracy, 3)}, loss ${fmt(s.eval.loss, 3)}.`);
    this.emit('ablate', { run, layer, head, enabled: Boolean(enabled) });
  }

  /** Shows one head's full heatmap below the grid. */
  openHead(layer, head) {
    const r = this._runs?.[0];
    if (!r || layer < 0 || layer >= r.layers || head < 0 || head >= r.heads) return;
    this._userOpened = true;
    this._open = { layer, head };
    this.renderGridSelection();
    this.renderDetail(true);
    this.say(`Layer ${layer + 1}, head ${head + 1} opened below the grid.`);
  }

  /** Draws every head on `text`; rejects with the API's RangeError when a word is unknown (the element says so too). */
  async showText(text) {
    this.whyNotReady('showText');
    const value = String(text ?? '').trim();
    this.textInput.value = value;
    try {
      const snap = await this._client.request('example', { text: value });
      this._example = value;
      setText(this.textError, '');
      this.textInput.removeAttribute('aria-invalid');
      this.ingest(snap);
      this.renderDetail(true);
    } catch (e) {
      showProblem(this.textError, wordProblem(String(e?.message ?? e), this._task.vocabulary));
      this.textInput.setAttribute('aria-invalid', 'true');
      throw e;
    }
  }

  async generate({ prompt = this.promptInput.value, maxTokens = Number(this.lengthSelect.value), temperature = Number(this.tempInput.value) } = {}) {
    this.whyNotReady('generate');
    const result = await this._client.request('generate', { run: 0, prompt: String(prompt).trim(), maxTokens, temperature, seed: this._genSeed = (this._genSeed ?? 0) + 1 });
    this.emit('generate', { prompt, text: result.text });
    return result;
  }

  async saveModel(run = 0) {
    this.whyNotReady('saveModel');
    return this._client.request('save', { run });
  }

  // ---------------------------------------------------------------- build

  build() {
    this.setAttribute('data-busy', '');
    this._running = false;
    this._runs = [];
    this._trainMs = 0;
    this._roundStart = 0;
    this._reduced = typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;
    const field = (label, control) => {
      if (!control.id) control.id = uid('f');
      return el('div', { class: 'field' }, el('label', { for: control.id }, label), control);
    };
    this.heading = el('h2', {}, TASK_TEXT.induction.title);
    this.status = el('p', { class: 'status', role: 'status', dataset: { testid: 'lm-status' } });
    this.intro = el('div', { class: 'explain' });

    this.taskSelect = el('select', { dataset: { testid: 'lm-task' } }, option('induction', 'Induction: copy a repeated stretch'), option('cricket', 'Cricket: what “it” refers to'));
    this.taskSelect.addEventListener('change', () => { this.pretrained = false; this.task = this.taskSelect.value; });
    this.layersSelect = el('select', { dataset: { testid: 'lm-layers' } }, LAYERS.map((n) => option(n)));
    this.layersSelect.addEventListener('change', () => { this.pretrained = false; this.layers = Number(this.layersSelect.value); });
    this.headsSelect = el('select', { dataset: { testid: 'lm-heads' } }, HEADS.map((n) => option(n)));
    this.headsSelect.addEventListener('change', () => { this.pretrained = false; this.heads = Number(this.headsSelect.value); });
    this.speedSelect = el('select', { dataset: { testid: 'lm-speed' } }, Object.entries(SPEEDS).map(([v, l]) => option(v, l)));
    this.speedSelect.addEventListener('change', () => {
      this.speed = this.speedSelect.value;
      if (this._running) this._client.request('run', { until: this._until, pace: LM_PACES[this.speed] });
    });
    this.seedInput = el('input', { type: 'number', min: 0, step: 1, inputmode: 'numeric', dataset: { testid: 'lm-seed' } });
    this.seedInput.addEventListener('change', () => {
      const v = this.seedInput.valueAsNumber;
      if (Number.isInteger(v) && v >= 0) { this.pretrained = false; this.seed = v; } else this.seedInput.value = String(this.runSeed);
    });
    this.compareBox = el('input', { type: 'checkbox', id: uid('cmp'), dataset: { testid: 'lm-compare' } });
    this.compareBox.addEventListener('change', () => { this.compare = this.compareBox.checked; });
    this.settings = el('fieldset', {},
      el('legend', {}, 'Task and model'),
      el('div', { class: 'settings' },
        el('div', { class: 'wide' }, field('Task', this.taskSelect)),
        field('Layers', this.layersSelect), field('Heads per layer', this.headsSelect),
        field('Speed', this.speedSelect), field('Seed', this.seedInput),
        el('div', { class: 'wide' }, el('label', { class: 'check', for: this.compareBox.id }, this.compareBox,
          'Side by side: also a model with 1 layer, same task'))));

    this.startButton = el('button', { type: 'button', class: 'btn btn--primary btn--start', dataset: { action: 'start' },
      on: { click: () => (this._running ? this.pause() : this.start()) } }, 'Start');
    this.stepButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'step' },
      on: { click: () => this.step(10).catch((e) => this.fail(e)) } }, '10 steps');
    this.resetButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'reset' },
      on: { click: () => { this.pretrained = false; this.reset(); } } }, 'Reset');
    this.pretrainedButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'pretrained' },
      on: { click: () => { if (this.pretrained) this.reset(); else this.pretrained = true; } } }, 'Load the trained model');
    this.progress = el('span', { class: 'progress', dataset: { testid: 'lm-progress' } });
    this.runBar = el('div', { class: 'toolbar runbar' }, this.startButton, this.stepButton, this.resetButton, this.pretrainedButton, this.progress);
    this.errorBox = el('div', { class: 'alert', role: 'alert', dataset: { testid: 'lm-errors' } });
    this.modeNote = el('p', { class: 'small muted', dataset: { testid: 'lm-mode' } });

    // Curves
    this.lossChart = this.chartSection('Loss', 'Cross-entropy of the next token, held-out sequences', 'loss');
    this.accChart = this.chartSection('Task accuracy', '', 'accuracy');
    this.phaseNote = el('p', { class: 'small phase-note', dataset: { testid: 'lm-phase' } });

    // Heads grid
    this.grid = el('div', { class: 'heads-grid', role: 'grid', part: 'heads', dataset: { testid: 'lm-grid' } });
    this.grid.addEventListener('keydown', (e) => this.onGridKey(e));
    this.gridExport = exportMenu({
      what: 'head scores', name: () => `head-scores-${this.task}-${this._runs[0]?.layers ?? 0}-layers-step-${this._step ?? 0}`,
      csv: () => this.scoresCSV(), json: () => this._snapshot && { task: this.task, step: this._step, heads: this._snapshot.runs[0].scores },
      onExport: (format, filename) => this.emit('export', { format, filename }),
    });
    this.gridNote = el('p', { class: 'small muted' });

    // The opened head
    this.detailTitle = el('h3', { dataset: { testid: 'lm-detail-title' } }, 'One head');
    this.detailText = el('p', { class: 'small', dataset: { testid: 'lm-detail-text' } });
    this.detailBox = el('div', { dataset: { testid: 'lm-detail' } });
    this.detail = el('section', { class: 'part', part: 'heatmap' }, this.detailTitle, this.detailText, this.detailBox);

    // Your own text
    this.textInput = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', dataset: { testid: 'lm-text' } });
    this.textInput.id = uid('txt');
    this.textLabel = el('label', { for: this.textInput.id }, 'Your sequence');
    this.textError = el('p', { class: 'text-error', 'aria-live': 'polite', dataset: { testid: 'lm-text-error' } });
    this.textHint = el('p', { class: 'small muted', id: uid('hint') });
    this.textInput.setAttribute('aria-describedby', this.textHint.id);
    this.textInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.showText(this.textInput.value).catch(() => {}); } });
    const showButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'show-text' },
      on: { click: () => this.showText(this.textInput.value).catch(() => {}) } }, 'Show every head on it');
    this.textPart = el('section', { class: 'part' }, el('h3', {}, 'Every head on your own text'),
      el('div', { class: 'textbox' }, this.textLabel, this.textInput, showButton), this.textError, this.textHint);

    // Switching heads off
    this.switches = el('div', { class: 'switches', dataset: { testid: 'lm-switches' } });
    this.ablation = el('p', { class: 'note note--warn', hidden: true, dataset: { testid: 'lm-ablation' } });
    this.ablationPart = el('section', { class: 'part' }, el('h3', {}, 'Switch heads off'),
      el('p', { class: 'small muted explain' }, `A switched-off head adds nothing to its layer’s output. The held-out loss and accuracy (${LM_EVAL_EXAMPLES} fixed sequences) show what it carried.`),
      el('fieldset', {}, el('legend', {}, 'Heads on'), this.switches), this.ablation);

    // One layer against two
    this.compareBody = el('div', { dataset: { testid: 'lm-compare-table' } });
    this.compareButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'compare' },
      on: { click: () => { this._autoplayPending = true; this.pretrained = false; this.compare = true; } } }, 'Train 1 layer and 2 layers side by side');
    this.comparePart = el('section', { class: 'part compare' }, el('h3', {}, 'One layer against two'), this.compareText = el('p', { class: 'small explain' }),
      this.compareBody, this.compareButton);

    // Continue this text
    this.promptInput = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', class: 'mono', dataset: { testid: 'lm-prompt' } });
    this.tempInput = el('input', { type: 'range', min: 0, max: 2, step: 0.1, value: 0.5, dataset: { testid: 'lm-temperature' } });
    this.tempOut = el('output', {}, '0.5');
    this.tempInput.addEventListener('input', () => { this.tempOut.textContent = fmt(Number(this.tempInput.value), 1); });
    this.lengthSelect = el('select', { dataset: { testid: 'lm-length' } }, [4, 8, 12].map((n) => option(n)));
    this.lengthSelect.value = '8';
    this.genOut = el('p', { class: 'gen-out', 'aria-live': 'polite', dataset: { testid: 'lm-generated' } });
    this.genError = el('p', { class: 'text-error', 'aria-live': 'polite' });
    const genButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'generate' },
      on: { click: () => this.runGenerate() } }, 'Continue this text');
    this.promptInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.runGenerate(); } });
    this.genPart = el('section', { class: 'part' }, el('h3', {}, 'Continue this text'),
      el('p', { class: 'small muted explain' }, 'The model picks one next token at a time from its predicted probabilities. At temperature 0 it always takes the most likely one; higher temperatures flatten the choice, so less likely tokens come up too.'),
      el('div', { class: 'textbox' }, field('Start', this.promptInput)),
      el('div', { class: 'toolbar' }, field('Temperature', this.tempInput), this.tempOut, field('New tokens', this.lengthSelect), genButton),
      this.genError, this.genOut);

    this.saveButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'save-model' },
      on: { click: () => this.downloadModel() } }, 'Save model');
    this.fileBar = el('div', { class: 'toolbar files' }, this.saveButton, this.copyLink());

    this.root.append(
      this.heading, this.status, this.intro, this.settings, this.runBar, this.errorBox, this.modeNote,
      el('div', { class: 'charts' }, this.lossChart.section, this.accChart.section),
      this.phaseNote,
      el('section', { class: 'part', dataset: { testid: 'lm-heads-part' } }, el('h3', {}, 'Every head, live'), this.gridNote, this.grid, this.gridExport),
      this.detail, this.textPart, this.ablationPart, this.comparePart, this.genPart, this.fileBar);

    const chartBox = this.lossChart.box;
    this._resizeObserver = onWidthChange(chartBox, () => this._chartWidth ?? 0, () => {
      this._chartWidth = chartBox.clientWidth;
      this.scheduleRender(true);
    }, 30, () => chartBox.clientWidth);
  }

  // ---------------------------------------------------------------- lifecycle (see shared/training-element.js)

  hasClient() { return Boolean(this._client); }

  freeClient() {
    this._client.dispose();
    this._client = null;
    this._configKey = null;
    this._running = false;
  }

  /** A hidden tab does not need to train: pause, and go on when it is shown again. */
  pageHidden(hidden) {
    if (hidden && this._running) {
      this._resumeOnShow = true;
      this.pause();
    } else if (!hidden && this._resumeOnShow) {
      this._resumeOnShow = false;
      this.start();
    }
  }

  // ---------------------------------------------------------------- state

  async prepare(lab) {
    this._tasks = await lab.languageTasks();
  }

  getExtraState() {
    const out = {};
    if (this._example && this._example !== TASK_TEXT[this.task].example) out.text = this._example;
    if (this._open) out.head = `${this._open.layer + 1}.${this._open.head + 1}`;
    return out;
  }

  setExtraState(map) {
    if (map.has('text')) this._pendingText = map.get('text');
    const head = /^(\d+)\.(\d+)$/.exec(map.get('head') ?? '');
    if (head) { this._open = { layer: Number(head[1]) - 1, head: Number(head[2]) - 1 }; this._userOpened = true; }
  }

  update() {
    selectValue(this.layersSelect, this.layers);
    selectValue(this.headsSelect, this.heads);
    this.taskSelect.value = this.task;
    this.speedSelect.value = this.speed;
    this.seedInput.value = String(this.runSeed);
    this.compareBox.checked = this.compare;
    if (!this.lab) return;
    this._task = this._tasks.find((t) => t.name === this.task) ?? this._tasks[0];
    this.seedInput.value = String(this.runSeed);  // now with the task's suggested seed, the one the run uses
    const text = TASK_TEXT[this._task.name];
    setText(this.heading, text.title);
    this.renderIntro();
    if (!this._client && !this.isConnected) return;
    if (!this._client) {
      this._client = new TrainerClient((m) => this.onEvent(m), {
        workerFile: 'headlab-lm-worker.js', workerName: 'headlab-lm', openSession: (lab, emit, o) => LmSession.open(lab, emit, o),
      });
      this._autoplayPending = this.autoplay;
    }
    const key = [this.pretrained ? 'trained' : 'new', this.task, this.layers, this.heads, this.runSeed, this.compare ? 1 : 0].join('|');
    if (key !== this._configKey) this.recreate(key);
    this.renderButtons();
  }

  async recreate(key) {
    this._configKey = key;
    const job = (this._job = (this._job ?? 0) + 1);
    const resume = this._running || this._autoplayPending;
    this._autoplayPending = false;
    this._running = false;
    this.removeAttribute('data-running');
    this.stopClock();
    const task = this._task;
    const text = TASK_TEXT[task.name];
    const example = this._pendingText ?? (this._example && this._exampleTask === task.name ? this._example : text.example);
    this._pendingText = undefined;
    let info;
    let note = '';
    try {
      if (this.pretrained) {
        try {
          const files = SHIPPED[task.name];
          const wanted = [files.main, ...(this.compare && files.oneLayer ? [files.oneLayer] : [])];
          const bytes = await Promise.all(wanted.map(shippedModel));
          if (job !== this._job) return;
          info = await this._client.request('load', { files: bytes, example }, bytes.map((b) => b.buffer));
          this.emit('load', { files: wanted });
        } catch (e) {
          if (job !== this._job) return;
          note = `The trained model could not be loaded (${e?.message ?? e}), so a new one trains here instead.`;
          info = null;
        }
      }
      if (!info) {
        info = await this._client.request('create', { config: this.desiredConfig(), compareLayers: this.compare && this.layers !== 1 ? 1 : 0, example });
      }
    } catch (e) {
      if (job !== this._job) return;
      this.removeAttribute('data-busy');
      this.fail(e);
      return;
    }
    if (job !== this._job) return;
    this.errorBox.replaceChildren();
    if (note) this.errorBox.replaceChildren(el('strong', {}, 'No trained model.'), ` ${note}`);
    this._example = example;
    this._exampleTask = task.name;
    this.textInput.value = example;
    setText(this.textError, '');
    if (!this.promptInput.value || this._promptTask !== task.name) this.promptInput.value = text.prompt;
    this._promptTask = task.name;
    setText(this.genOut, '');
    setText(this.textLabel, text.boxLabel);
    setText(this.textHint, text.hint);
    this._trainMs = 0;
    this.layout(info.runs);
    const threads = this.threads ?? 1;
    this.modeNote.textContent = threads > 1
      ? `Training runs in a Web Worker, each step's batch split over ${threads} threads (this page is cross-origin isolated), so the page stays responsive.`
      : this._client.note();
    this._roundStart = info.snapshot.runs[0].step;
    this.ingest(info.snapshot);
    this.renderDetail(true);
    this.removeAttribute('data-busy');
    if (this.pretrained) this.say(`Loaded the trained model: ${this._runs[0].layers} layers, trained for ${info.snapshot.runs[0].step} steps.`);
    if (resume && !this.pretrained) this.start();
  }

  /** The seed attribute, else the task's suggested seed (one on which its heads form in browsers). */
  get runSeed() {
    return this.seed ?? this._task?.defaults.seed ?? 1;
  }

  desiredConfig() {
    const d = this._task.defaults;
    return { task: this._task.name, numLayers: this.layers, numHeads: this.heads, dModel: d.dModel, mlp: d.mlp,
      seed: this.runSeed, learningRate: d.learningRate, batchSize: d.batchSize };
  }

  // ---------------------------------------------------------------- layout

  layout(runsInfo) {
    this._snapshot = null;
    this.removeAttribute('data-phase-step');
    this._runs = runsInfo.map((info, k) => {
      const c = info.config ?? {};
      const layers = c.numLayers ?? this.layers;
      const heads = c.numHeads ?? this.heads;
      return { k, layers, heads, config: c, threads: info.threads ?? 1, history: [], phase: null, name: `${layers} layer${layers === 1 ? '' : 's'}` };
    });
    const r = this._runs[0];
    if (!this._open || this._open.layer >= r.layers || this._open.head >= r.heads) this._open = this.defaultOpen();
    this.buildGrid(r);
    this.buildSwitches(r);
    this._chartWidth = this.lossChart.box.clientWidth;
    this._detail = null;
  }

  defaultOpen() {
    const r = this._runs[0];
    return { layer: r.layers - 1, head: Math.min(1, r.heads - 1) };
  }

  buildGrid(r) {
    this.grid.style.setProperty('--heads', String(r.heads));
    this.grid.setAttribute('aria-label', `Heads of the ${r.name} model: rows are layers, columns heads. Arrow keys move, Enter or Space opens a head.`);
    this.grid.setAttribute('aria-rowcount', String(r.layers + 1));
    const header = el('div', { role: 'row' }, el('span', { role: 'columnheader' }, el('span', { class: 'sr-only' }, 'Layer')),
      Array.from({ length: r.heads }, (_, h) => el('span', { role: 'columnheader' }, `Head ${h + 1}`)));
    r.cells = [];
    const rows = Array.from({ length: r.layers }, (_, l) => {
      const cells = Array.from({ length: r.heads }, (_, h) => {
        const canvas = el('canvas', { width: 1, height: 1, 'aria-hidden': 'true' });
        const tag = el('span', { class: 'tag' }, '…');
        const scoreName = el('span', { class: 'score-name' });
        const scoreValue = el('span', { class: 'score-value' });
        const score = el('span', { class: 'score' }, scoreName, scoreValue);
        // The cell's name is its text: which head (for screen readers), label, score, and whether it is off.
        const off = el('span', { class: 'sr-only' });
        const cell = el('div', { role: 'gridcell', class: 'cell', tabindex: '-1', 'aria-selected': 'false',
          dataset: { layer: String(l), head: String(h), testid: `lm-cell-${l + 1}-${h + 1}` },
          on: { click: () => { this.focusCell(l, h); this.openHead(l, h); } } },
        el('span', { class: 'sr-only' }, `Layer ${l + 1}, head ${h + 1}: `), canvas, tag, el('span', { class: 'sr-only' }, ', '), score, off);
        const x = { cell, canvas, tag, scoreName, scoreValue, off, l, h };
        r.cells.push(x);
        return cell;
      });
      return el('div', { role: 'row' }, el('span', { role: 'rowheader', 'aria-label': `Layer ${l + 1}` },
        el('span', { class: 'wide-only' }, 'Layer '), el('span', { class: 'narrow-only' }, 'L'), String(l + 1)), cells);
    });
    this.grid.replaceChildren(header, ...rows);
    const first = this.cellAt(this._open.layer, this._open.head) ?? r.cells[0];
    first.cell.tabIndex = 0;
    this._focus = { layer: first.l, head: first.h };
  }

  cellAt(layer, head) {
    return this._runs[0]?.cells?.find((x) => x.l === layer && x.h === head) ?? null;
  }

  focusCell(layer, head) {
    const x = this.cellAt(layer, head);
    if (!x) return;
    for (const c of this._runs[0].cells) c.cell.tabIndex = c === x ? 0 : -1;
    this._focus = { layer, head };
    x.cell.focus();
  }

  onGridKey(e) {
    const r = this._runs[0];
    if (!r || !this._focus) return;
    let { layer, head } = this._focus;
    switch (e.key) {
      case 'ArrowRight': head = Math.min(r.heads - 1, head + 1); break;
      case 'ArrowLeft': head = Math.max(0, head - 1); break;
      case 'ArrowDown': layer = Math.min(r.layers - 1, layer + 1); break;
      case 'ArrowUp': layer = Math.max(0, layer - 1); break;
      case 'Home': head = 0; if (e.ctrlKey) layer = 0; break;
      case 'End': head = r.heads - 1; if (e.ctrlKey) layer = r.layers - 1; break;
      case 'Enter': case ' ': e.preventDefault(); this.openHead(layer, head); return;
      default: return;
    }
    e.preventDefault();
    this.focusCell(layer, head);
  }

  buildSwitches(r) {
    r.boxes = [];
    const labels = [];
    for (let l = 0; l < r.layers; l++) {
      for (let h = 0; h < r.heads; h++) {
        const box = el('input', { type: 'checkbox', checked: true, id: uid('on'), dataset: { testid: `lm-switch-${l + 1}-${h + 1}` } });
        box.addEventListener('change', () => {
          // While a switch's request is on its way, a snapshot answering an earlier one must not flip it back.
          this._switchesPending = (this._switchesPending ?? 0) + 1;
          this.setHeadEnabled(l, h, box.checked).catch((e) => this.fail(e)).finally(() => {
            this._switchesPending -= 1;
            if (this._switchesPending === 0 && this._snapshot) this.renderAblation();
          });
        });
        r.boxes.push(box);
        labels.push(el('label', { class: 'check', for: box.id }, box, `L${l + 1} H${h + 1}`));
      }
    }
    this.switches.replaceChildren(...labels);
  }

  // ---------------------------------------------------------------- data

  onEvent(m) {
    if (m.event === 'snapshot') {
      this.ingest(m.snapshot);
    } else if (m.event === 'paused') {
      const was = this._running;
      this._running = false;
      this.stopClock();
      this.removeAttribute('data-running');
      this.renderButtons();
      if (m.reason === 'error' && m.fatal) this.offerRestart(m.message ?? 'the Worker stopped');
      else if (m.reason === 'error') this.fail(new Error(m.message ?? 'unknown error'), 'Training stopped.');
      else if (m.reason === 'limit') this.say(`Stopped at step ${this._step}, the end of a round of ${this.roundSteps} steps. Continue trains ${this.roundSteps} more.`);
      else if (was) this.say(`Paused at step ${this._step}.`);
      this.emit('run', { running: false, reason: m.reason });
    }
  }

  offerRestart(message) {
    const button = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'restart' },
      on: { click: () => { this._client?.dispose(); this._client = null; this.reset(); } } }, 'Start again');
    this.errorBox.replaceChildren(el('strong', {}, 'Training stopped.'), ` ${message.charAt(0).toUpperCase()}${message.slice(1)}. The model is lost; Start again trains a new one in a new Worker. `, button);
    this.emit('error', { message });
  }

  stopClock() {
    if (this._runStarted != null) {
      this._trainMs += performance.now() - this._runStarted;
      this._runStarted = null;
    }
  }

  seconds() {
    return (this._trainMs + (this._running && this._runStarted != null ? performance.now() - this._runStarted : 0)) / 1000;
  }

  ingest(snap) {
    if (!snap || snap.runs.length !== this._runs.length) return;
    this._snapshot = snap;
    this._step = snap.runs[0].step;
    const seconds = this.seconds();
    snap.runs.forEach((s, k) => {
      const run = this._runs[k];
      const last = run.history[run.history.length - 1];
      const point = { step: s.step, trainLoss: s.train?.loss ?? null, evalLoss: s.eval.loss, accuracy: s.eval.accuracy,
        nextToken: s.eval.nextTokenAccuracy, headsOn: s.enabled.filter(Boolean).length, seconds: +seconds.toFixed(3) };
      if (!(last && last.step === point.step && last.evalLoss === point.evalLoss && last.headsOn === point.headsOn)) run.history.push(point);
      // The phase change: the first evaluation at which the task accuracy reaches PHASE_ACCURACY, every head on,
      // after one below it here (a model loaded already trained went through its phase change elsewhere).
      if (!s.allOn && s.eval.accuracy < PHASE_ACCURACY) run.below = true;
      if (!run.phase && run.below && s.step > 0 && !s.allOn && s.eval.accuracy >= PHASE_ACCURACY) {
        run.phase = { step: s.step, seconds, accuracy: s.eval.accuracy };
        if (k === 0) {
          this.setAttribute('data-phase-step', String(s.step));
          this.say(`Phase change at step ${s.step}, after ${fmt(seconds, 1)} s of training: held-out accuracy ${fmt(s.eval.accuracy, 2)}.`);
        }
        this.emit('phase-change', { layers: run.layers, step: s.step, seconds, accuracy: s.eval.accuracy });
      }
    });
    this.setAttribute('data-step', String(this._step));
    this.emit('step', {
      step: this._step, seconds,
      runs: snap.runs.map((s, k) => ({ layers: this._runs[k].layers, step: s.step, loss: s.train?.loss ?? null, evalLoss: s.eval.loss, accuracy: s.eval.accuracy })),
    });
    this.scheduleRender();
  }

  // ---------------------------------------------------------------- render

  render() {
    if (!this._snapshot) return;
    this.renderGrid();
    this.renderDetail(false);
    const now = performance.now();
    const gap = this._reduced?.matches ? 1000 : 250;
    if (this._running && !this._forceSlow && now - (this._lastSlow ?? 0) < gap) {
      clearTimeout(this._slowTimer);
      this._slowTimer = setTimeout(() => this.scheduleRender(true), gap);
      return;
    }
    this._forceSlow = false;
    this._lastSlow = now;
    this.renderCharts();
    this.renderProgress();
    this.renderAblation();
    this.renderCompare();
    this.renderButtons();
  }

  renderIntro() {
    const induction = this.task === 'induction';
    const key = `${this.task}`;
    if (this._introKey === key) return;
    this._introKey = key;
    const p = (...parts) => el('p', {}, ...parts);
    this.intro.replaceChildren(...(induction ? [
      p('Each training sequence is a start token and 23 random tokens, with one stretch of 4 to 10 tokens that repeats right after itself. ',
        'The model only ever learns to predict the next token. Before the repeat nothing can be predicted, so the best it can do is guess; ',
        'inside the second copy, every next token can be read off the first copy, if the model knows where to look.'),
      p(el('strong', {}, 'A previous-token head'), ' attends from each position to the one just before it, so its output there says “the token before me was x”. ',
        el('strong', {}, 'An induction head'), ' attends from the current token to the position right after an earlier copy of that same token, and copies what it finds there: ',
        'having seen “… p x …”, at the next “p” it predicts “x”.'),
      p('An induction head cannot work on its own. To find “the position after the earlier p”, it matches the current token against what a previous-token head ',
        'in the layer below wrote at each position. With one layer there is no layer below, and the trick is out of reach; with two it appears, ',
        'suddenly, after a long plateau (Olsson et al., 2022, “In-context learning and induction heads”). Nobody told the model about copying or about positions: ',
        'both heads come from learning to predict the next token.'),
    ] : [
      p('Each training sentence is toy cricket commentary such as “virat hit the ball because it was full”. The word after “it was” describes a noun: ',
        'a ball can be full, short or wide; a bat heavy, light or broken; and so on. “It” is always the thing that was hit, watched, checked or grabbed, ',
        'while another noun often sits nearby to mislead.'),
      p(el('strong', {}, 'A coreference head'), ' attends from “it” (or from “was”, where the adjective is predicted) back to the noun that “it” refers to. ',
        'Its output carries which noun that is, and the model can then pick one of that noun’s adjectives.'),
      p('Nobody told the model what “it” means, which noun is the object, or that adjectives belong to nouns: it only learned to predict the next word, ',
        'and a head that links “it” to its noun is what made that prediction good.'),
    ]));
  }

  renderGrid() {
    const r = this._runs[0];
    const s = this._snapshot.runs[0];
    const [L, H, T] = s.shape;
    if (L !== r.layers || H !== r.heads) return;
    for (const x of r.cells) {
      const i = x.l * H + x.h;
      const score = s.scores.find((q) => q.layer === x.l && q.head === x.h) ?? s.scores[i];
      const d = describeHead(score);
      const on = s.enabled[i];
      drawMini(x.canvas, s.weights, i * T * T, T);
      setText(x.tag, d.tag);
      // On narrow screens only the number shows; the score's name stays for screen readers.
      setText(x.scoreName, d.score === undefined ? '' : `${d.scoreName} `);
      setText(x.scoreValue, d.score === undefined ? '\u00a0' : fmt(d.score, 2));
      x.cell.dataset.kind = d.kind;
      x.cell.toggleAttribute('data-off', !on);
      x.cell.dataset.label = score.label || '';
      setText(x.off, on ? '' : ', switched off');
      if (r.boxes[i].checked !== on && document.activeElement !== this) r.boxes[i].checked = on;
    }
    // Until the learner opens a head, the one that carries the task (induction, coreference) is shown once it has its label.
    if (!this._userOpened) {
      const want = this.task === 'cricket' ? 'coreference' : 'induction';
      const star = s.scores.filter((q) => q.label === want).sort((a, b) => b[want] - a[want])[0];
      if (star && (star.layer !== this._open.layer || star.head !== this._open.head)) {
        this._open = { layer: star.layer, head: star.head };
        this.renderDetail(true);
      }
    }
    setText(this.gridNote, `Each picture is one head’s attention on “${clipText(s.tokens)}”: rows are queries, columns keys, brighter is more weight. ` +
      `Labels and scores average over ${this._running ? LM_SCORE_EXAMPLES : 4 * LM_SCORE_EXAMPLES} held-out sequences; a label needs a score of at least 0.5.`);
    this.renderGridSelection();
  }

  renderGridSelection() {
    for (const x of this._runs[0]?.cells ?? []) {
      x.cell.setAttribute('aria-selected', String(this._open && x.l === this._open.layer && x.h === this._open.head));
    }
  }

  /** The opened head's heatmap, rebuilt when its tokens change; recoloured in place while training. */
  renderDetail(full) {
    const s = this._snapshot?.runs[0];
    if (!s || !this._open) return;
    const [L, H, T] = s.shape;
    const { layer, head } = this._open;
    if (layer >= L || head >= H) return;
    const labels = s.tokens.map((t, i) => `${i}:${t}`);
    const key = `${layer}.${head}\u0002${labels.join('\u0001')}`;
    const title = `Layer ${layer + 1}, head ${head + 1}`;
    if (!this._detail || this._detail.key !== key) {
      const hm = createHeatmap({ title, rowLabels: labels, colLabels: labels, testid: 'lm-detail-table',
        fileName: `${this.task}-layer-${layer + 1}-head-${head + 1}`, onExport: (format, filename) => this.emit('export', { format, filename }) });
      this._detail = { key, hm, live: liveHeatmap(hm, T, T), lastFull: 0 };
      this.detailBox.replaceChildren(hm.element);
      full = true;
    }
    const score = s.scores.find((q) => q.layer === layer && q.head === head);
    const d = describeHead(score);
    this._detail.hm.setTitle(`${title}: ${d.tag}`);
    setText(this.detailTitle, `${title}, opened`);
    setText(this.detailText, `${d.kind === 'none' ? 'No label: this head' : `Labelled “${d.tag}”: this head`} ${d.means}. ` +
      `Scores: ${SCORE_FIELDS.filter(([k]) => Number.isFinite(score[k])).map(([k, n]) => `${n} ${fmt(score[k], 2)}`).join(', ')}.`);
    const now = performance.now();
    const refresh = full || !this._running || now - this._detail.lastFull > 1000;
    if (refresh) this._detail.lastFull = now;
    this._detail.live.update(s.weights, (layer * H + head) * T * T, { full: refresh });
    this.detailBox.dataset.head = `${layer + 1}.${head + 1}`;
  }

  renderCharts() {
    const compare = this._runs.length > 1;
    const series = (field, trainField) => this._runs.flatMap((r, k) => {
      const { color, dash } = SERIES[k % SERIES.length];
      const prefix = compare ? `${r.name}: ` : '';
      const out = [];
      if (trainField) {
        out.push({ label: `${prefix}training batch`, color, dash, width: 1.4, opacity: 0.45,
          points: r.history.filter((p) => p[trainField] !== null).map((p) => [p.step, p[trainField]]) });
      }
      out.push({ label: `${prefix}held-out`, color, dash, width: 2.6, points: r.history.map((p) => [p.step, p[field]]) });
      return out;
    });
    const step = this._step ?? 0;
    const xMax = Math.min(Math.max(this._until, step), Math.max(200, step * 1.25));
    const marks = this._runs.filter((r) => r.phase).map((r) => ({ x: r.phase.step, label: `${compare ? `${r.name}: ` : ''}phase change` }));
    const width = Math.max(280, Math.min(620, this._chartWidth || 520));
    const now = (field, digits) => this._runs.map((r) => {
      const p = r.history[r.history.length - 1];
      return p ? `${compare ? `${r.name}: ` : ''}${fmt(p[field], digits)} at step ${p.step}` : '';
    }).join('; ');
    this.drawChart(this.lossChart, curvesFigure({ series: series('evalLoss', 'trainLoss'), yMin: 0, xMax, marks, width, yLabel: 'loss' }),
      `Loss curves. Held-out loss now ${now('evalLoss', 3)}.`);
    this.drawChart(this.accChart, curvesFigure({ series: series('accuracy'), yMin: 0, yMax: 1, xMax, marks, width, yLabel: 'accuracy',
      yRef: { y: PHASE_ACCURACY, label: String(PHASE_ACCURACY) } }), `Task accuracy curves. Held-out accuracy now ${now('accuracy', 3)}.`);
    setText(this.accChart.note, `Held-out: ${this._task.metric}.`);
    const r = this._runs[0];
    const defined = `The phase change is marked at the first evaluation where the held-out task accuracy reaches ${PHASE_ACCURACY}` +
      (this.task === 'induction' ? '; before it the loss sits on a plateau.' : '.');
    if (r.phase) {
      this.phaseNote.replaceChildren(el('strong', {}, `Phase change at step ${r.phase.step}`), ` (after ${fmt(r.phase.seconds, 1)} s of training). ${defined}`);
    } else if (!r.below && r.history.length) {
      this.phaseNote.replaceChildren(`This model was trained ahead of time, for ${r.history[0].step} steps: its phase change happened then, so it is not on these charts. Reset trains a new model from step 0, to watch it happen. ${defined}`);
    } else {
      this.phaseNote.replaceChildren(`No phase change yet. ${defined}`);
    }
  }

  renderProgress() {
    const s = this._snapshot.runs[0];
    const threads = this._runs[0]?.threads ?? 1;
    const on = threads > 1 ? ` on ${threads} threads` : '';
    setText(this.progress, `Step ${s.step} · ${fmt(this.seconds(), 1)} s${on} · held-out accuracy ${fmt(s.eval.accuracy, 2)} · pauses at ${Math.max(this._until, s.step)}`);
  }

  renderAblation() {
    const s = this._snapshot.runs[0];
    const r = this._runs[0];
    const off = s.scores.filter((_, i) => !s.enabled[i]);
    this.ablation.hidden = off.length === 0;
    if (!off.length || !s.allOn) return;
    const names = off.map((q) => `layer ${q.layer + 1} head ${q.head + 1}`).join(', ');
    setText(this.ablation, `With ${names} off: held-out accuracy ${fmt(s.eval.accuracy, 3)} (${fmt(s.allOn.accuracy, 3)} with every head on), ` +
      `loss ${fmt(s.eval.loss, 3)} (${fmt(s.allOn.loss, 3)}).${this._running ? ' Training goes on without it, so the other heads may take over.' : ''}`);
    if (!this._switchesPending) r.boxes.forEach((b, i) => { b.checked = s.enabled[i]; });
  }

  renderCompare() {
    const runs = this._runs;
    const snap = this._snapshot;
    const best = (s, key) => s.scores.reduce((b, q) => (Number.isFinite(q[key]) && (!b || q[key] > b[key]) ? q : b), null);
    const key = this.task === 'cricket' ? 'coreference' : 'induction';
    this.compareButton.hidden = runs.length > 1 || runs[0].layers === 1;
    setText(this.compareText, this.task === 'cricket'
      ? 'Does the coreference head need a layer below it? A model with one layer, trained on the same sentences, answers that.'
      : 'With one layer the induction trick needs a previous-token head below the induction head, which is not there: accuracy on the repeat stays low, and no head earns the induction label.');
    if (runs.length < 2 && runs[0].layers !== 1) {
      this.compareBody.replaceChildren(el('p', { class: 'small muted' }, this.pretrained && this.compare
        ? 'No one-layer model ships for this task. Train both from step 0 to compare them.'
        : 'Train a model with one layer on the same sequences, next to this one, to compare them.'));
      return;
    }
    const rows = runs.map((r, k) => {
      const s = snap.runs[k];
      const b = best(s, key);
      return el('tr', { dataset: { layers: String(r.layers) } }, el('th', { scope: 'row' }, r.name),
        el('td', { class: 'num' }, b ? fmt(b[key], 2) : '—'),
        el('td', {}, b ? `L${b.layer + 1} H${b.head + 1}` : '—'),
        el('td', { class: 'num' }, fmt(s.eval.accuracy, 3)), el('td', { class: 'num' }, fmt(s.eval.loss, 3)),
        el('td', {}, r.phase ? `step ${r.phase.step}` : 'not yet'));
    });
    this.compareBody.replaceChildren(el('div', { class: 'table-scroll' }, el('table', { class: 'matrix', dataset: { testid: 'lm-compare-rows' } },
      el('caption', {}, `Step ${this._step}: best ${key} score and held-out results`),
      el('thead', {}, el('tr', {}, ['Model', `Best ${key} score`, 'Head', 'Accuracy', 'Loss', 'Phase change'].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows))));
  }

  renderButtons() {
    const usable = Boolean(this._client && !this._client.dead && this._runs?.length);
    this.startButton.textContent = this._running ? 'Pause' : (this._step ?? 0) >= this._until && this._step > 0 ? 'Continue' : 'Start';
    this.startButton.disabled = !usable;
    this.stepButton.disabled = !usable || this._running;
    this.saveButton.disabled = !usable;
    this.pretrainedButton.textContent = this.pretrained ? 'Reload the trained model' : 'Load the trained model';
  }

  scoresCSV() {
    const s = this._snapshot?.runs[0];
    if (!s) return null;
    const lines = ['layer,head,label,previous_token,induction,duplicate_token,first_token,coreference,enabled'];
    const v = (x) => (Number.isFinite(x) ? String(x) : '');
    s.scores.forEach((q, i) => lines.push([q.layer + 1, q.head + 1, q.label || '', v(q.previousToken), v(q.induction), v(q.duplicateToken),
      v(q.firstToken), v(q.coreference), s.enabled[i] ? 1 : 0].join(',')));
    return `${lines.join('\r\n')}\r\n`;
  }

  curvesFileName(name) {
    return `${name}-${this.task}-${this._runs.map((r) => `${r.layers}-layer`).join('-vs-')}`;
  }

  curvesCSV() {
    if (!this._runs.length) return null;
    const lines = ['layers,step,training_loss,heldout_loss,task_accuracy,next_token_accuracy,heads_on,seconds'];
    const v = (x) => (x === null || x === undefined ? '' : String(x));
    for (const r of this._runs) {
      for (const p of r.history) lines.push([r.layers, p.step, v(p.trainLoss), v(p.evalLoss), v(p.accuracy), v(p.nextToken), p.headsOn, p.seconds].join(','));
    }
    return `${lines.join('\r\n')}\r\n`;
  }

  async runGenerate() {
    setText(this.genError, '');
    try {
      const prompt = this.promptInput.value.trim();
      const result = await this.generate({ prompt });
      this.genOut.replaceChildren(el('span', {}, prompt), ' ', el('span', { class: 'more', dataset: { testid: 'lm-generated-new' } }, result.newTokens.join(' ')));
    } catch (e) {
      const message = String(e?.message ?? e);
      showProblem(this.genError, wordProblem(message, this._task.vocabulary));
    }
  }

  async downloadModel() {
    try {
      const bytes = await this.saveModel(0);
      const filename = `headlab-${this.task}-${this._runs[0].layers}-layers-step-${this._step}.hlm`;
      download(new Blob([bytes], { type: 'application/octet-stream' }), filename);
      this.say(`Saved the model after ${this._step} steps as ${filename}.`);
      this.emit('export', { format: 'hlm', filename });
    } catch (e) {
      this.fail(e);
    }
  }
}

/** The example's tokens, shortened for a sentence. */
function clipText(tokens) {
  const words = tokens.filter((t) => !t.startsWith('<'));
  return words.length > 14 ? `${words.slice(0, 13).join(' ')} …` : words.join(' ');
}

/** One head's T × T weights as T × T pixels (the canvas is scaled up by CSS, pixelated). */
function drawMini(canvas, weights, offset, T) {
  if (canvas.width !== T) { canvas.width = T; canvas.height = T; }
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const image = ctx.createImageData(T, T);
  for (let q = 0; q < T; q++) {
    for (let k = 0; k < T; k++) {
      const [r, g, b] = viridisRGB(weights[offset + q * T + k]);
      const p = (q * T + k) * 4;
      image.data[p] = r; image.data[p + 1] = g; image.data[p + 2] = b; image.data[p + 3] = 255;
    }
  }
  ctx.putImageData(image, 0, 0);
}
