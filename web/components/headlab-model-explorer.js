/**
 * <headlab-model-explorer>: the heads of a real language model. Pick one of HeadLab's own
 * small models (in the page, offline, instant), a Hugging Face model (decoders: SmolLM2,
 * Qwen2.5, TinyLlama, Llama 3.2, Pythia, GPT-2, GPT-Neo, Phi-3, Gemma; encoders: BERT, RoBERTa,
 * DistilBERT; web/lib/teach/hub-models.js, each with its download size and a phone mark, shown
 * before anything is fetched) or your own files; see every head in a layers × heads grid
 * coloured by its detector scores (previous-token, duplicate-token, induction, first-token),
 * with the query heads that share a key-value head banded and the attention sinks named; open a
 * head to see its heatmap and lines view on your text; switch heads off and watch the top 5 next
 * tokens change (an encoder: its guesses at each mask token); read the logit lens (what each
 * layer would predict). The model lives in a Web
 * Worker (on the page where none can start, e.g. from file://); this element is a view over
 * web/lib/teach/explorer-controller.js and computes nothing itself.
 *
 * @attr {string} model   what to load at once: induction | induction-1-layer | cricket (HeadLab's own),
 *                        or a Hugging Face id such as openai-community/gpt2 (offered, downloaded only
 *                        when the reader presses the button); default induction
 * @attr {string} text    the text to run; default: the model's own example, or for a Hugging Face
 *                        model the course sentence "Virat hit the ball because it was full and outside off."
 * @attr {string} hub-url where Hugging Face ids are fetched from; default https://huggingface.co
 * @attr {boolean} compact hides the explanations
 * @attr {'light' | 'dark' | 'auto'} theme   light | dark | auto
 *
 * Layers and heads count from 0.
 * @method {(source: { kind: 'shipped', name: string } | { kind: 'hub', id: string, revision?: string } |
 *   { kind: 'files', files: File[] }) => Promise<void>} load
 *   loads a model: one of HeadLab's own (induction, induction-1-layer, cricket), a Hugging Face id, or files
 * @method {() => void} cancel stops a download under way
 * @method {(text: string) => Promise<void>} setText runs the model on `text`
 * @method {(layer: number, head: number, on: boolean) => Promise<void>} setHeadEnabled switches a head off or on
 * @method {() => Promise<void>} allHeadsOn switches every head back on
 * @method {(layer: number, head: number) => void} openHead opens a head's heatmap and lines view
 * @method {() => Promise<void>} computeLens computes the logit lens (a long text on a large model waits for this, or its button)
 * @prop {'empty' | 'loading' | 'ready' | 'running' | 'error' | 'cancelled'} state read-only: what the element is doing
 * @prop {object | null} info     read-only: the loaded model's info (name, layers, heads, …); null before one is loaded
 * @prop {object | null} scores   read-only: every head's detector scores; null before they are computed
 * @prop {object | null} results  read-only: the last run (tokens, attention, next, baseline, lens)
 * @prop {{ file: string, loaded: number, total: number | null } | null} progress read-only: the download under way
 * @prop {object | null} controller read-only: the DOM-free controller it views (web/lib/teach/explorer-controller.js)
 * @prop {{ source: object, code: string, message: string } | null} failed read-only: the last load that failed while the
 *   model before it stayed (the state is then ready, with that model)
 * @prop {'worker' | 'main-thread' | null} runsIn read-only: where the model runs; null before one is loaded
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ from: string, to: string, reason: string | null }} headlab-state  its state changed
 * @fires {{ file: string, loaded: number, total: number | null }} headlab-progress  download progress
 * @fires {{ info: object, source: { kind: 'shipped' | 'hub' | 'files', name?: string, id?: string, revision?: string } }} headlab-load
 *   a model was loaded
 * @fires {{ tokens: string[], next: object[], baseline: object[] | null, problem: string | null }} headlab-results
 *   a run finished (next: the top next tokens)
 * @fires {{ layer: number, head: number, enabled: boolean }} headlab-ablate  a head was switched off or on
 * @fires {{ layer: number, head: number }} headlab-open  a head was opened
 * @fires {{ format: string, filename: string }} headlab-export  a download was made
 * @fires {{ message: string }} headlab-error  a model or text was refused, or the module did not load
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart picker    the model buttons and the file drop
 * @csspart progress  the download progress bar and Cancel
 * @csspart heads     the layers × heads grid
 * @csspart detail    the opened head: its scores, switch, heatmap and lines
 * @csspart heatmap   the opened head's heatmap
 * @csspart lines     the opened head's lines view
 * @csspart next      the top-5 next-token table
 * @csspart lens      the logit-lens strip
 * @csspart export    download menus
 * @csspart copy-link the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { modeText, withTraining } from './shared/elements/training-element.js';
import { el, uid, setText, announce } from './shared/render/dom.js';
import { createHeatmap } from './shared/render/heatmap.js';
import { linesFigure, MAX_LINE_TOKENS } from './shared/render/lines.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { exportMenu } from './shared/render/export.js';
import { viridis } from './shared/render/colormap.js';
import { TrainerClient } from './shared/worker/trainer-client.js';
import { shippedModelUrl } from './shared/lab/model-urls.js';
import {
  ExplorerController, COURSE_SENTENCE, DETECTORS, STRONG, strongest, sizeText,
} from '../lib/teach/explorer-controller.js';
import { ExplorerSession } from '../lib/teach/explorer-session.js';
import { SHIPPED_MODELS } from '../lib/teach/shipped-models.js';
import { hubDownloadSize } from '../lib/teach/hub-size.js';
import { HUB_MODELS, hubModel, pickerGroups, whyKey, buttonTestId } from '../lib/teach/hub-models.js';
import { kvGroups, sinkHeads, sinkSentence, maskedCourseSentence, SINK } from '../lib/teach/explorer-families.js';
import { readShipped, warmShipped } from '../lib/teach/shipped-cache.js';
import embeddedModels from 'headlab:embedded-models';
import messages from '../lib/i18n/catalogues/model-explorer.js';
import { mountFindings, FINDINGS_CSS, sinkKeys } from './model-explorer/findings-panel.js';
import { mountRevisionTrend, TREND_CSS } from './model-explorer/revision-trend.js';

/** The Hugging Face models offered: web/lib/teach/hub-models.js (one row each, sizes as the hub listed them). */
export { HUB_MODELS };

/** Okabe–Ito colours (distinct under the common colour-vision deficiencies), one per detector; each cell also carries a letter. */
const DETECTOR_COLOURS = { previousToken: '#0072b2', duplicateToken: '#e69f00', induction: '#009e73', firstToken: '#cc79a7' };

const CSS = `
.picker { display: grid; gap: 0.2rem 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 19rem), 1fr)); }
.picker fieldset { margin: 0.3rem 0; }
.model-buttons { display: flex; flex-wrap: wrap; gap: 0.4rem; }
.model-buttons .btn { display: inline-flex; flex-direction: column; align-items: flex-start; text-align: left; }
.model-buttons .btn .size { font-size: 0.78rem; opacity: 0.85; }
.model-buttons .btn[aria-pressed="true"] .size { opacity: 1; }
.picker .hub-models { grid-column: 1 / -1; min-width: 0; }
.hub-models .kind-title { margin: 0.6rem 0 0.2rem; font-size: 0.95rem; font-weight: 700; }
.hub-models .family { display: grid; grid-template-columns: 7rem minmax(0, 1fr); gap: 0.2rem 0.6rem; align-items: start; margin: 0.3rem 0; }
.hub-models .family-name { font-size: 0.82rem; font-weight: 600; color: var(--hl-muted); padding-top: 0.4rem; }
.model-buttons .btn .meta { display: flex; flex-wrap: wrap; gap: 0 0.5rem; align-items: baseline; }
.model-buttons .btn .mark { font-size: 0.72rem; font-weight: 600; }
.hub-groups { display: grid; gap: 0 1.5rem; }
@container (min-width: 56rem) { .hub-groups { grid-template-columns: minmax(0, 7fr) minmax(0, 3fr); } }
.model-buttons .btn .mark.phone::before { content: ""; display: inline-block; width: 0.42rem; height: 0.68rem; border: 1.5px solid currentColor;
  border-radius: 2px; margin-right: 0.3rem; vertical-align: -0.1rem; }
.model-buttons .btn .mark.gated { font-style: italic; }
.heads-grid .kv-row .kv { font-size: 0.66rem; font-weight: 600; text-align: center; color: var(--hl-text); border-radius: 3px 3px 0 0;
  border-bottom: 3px solid var(--hl-text); background: color-mix(in srgb, var(--hl-accent) 22%, var(--hl-bg)); overflow: hidden; white-space: nowrap; }
.heads-grid .kv-row .kv[data-odd] { background: color-mix(in srgb, var(--hl-text) 10%, var(--hl-bg)); border-bottom-style: double; }
.hcell[data-kv-start] { box-shadow: -3px 0 0 0 var(--hl-bg), -5px 0 0 0 var(--hl-muted); }
.sink-line:empty { display: none; }
.fill-hint { font-weight: 600; }
.drop { border: 2px dashed var(--hl-border); border-radius: 8px; padding: 0.5rem 0.7rem; margin: 0.3rem 0; }
.drop[data-over] { border-color: var(--hl-accent); background: var(--hl-accent-soft); }
.drop input[type="file"] { max-width: 100%; }
.progress-box { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; margin: 0.5rem 0; }
.progress-box progress { flex: 1 1 12rem; height: 1.1rem; accent-color: var(--hl-accent); }
.progress-box .what { flex: 1 1 100%; font-variant-numeric: tabular-nums; font-size: 0.9rem; overflow-wrap: anywhere; }
.info { font-size: 0.9rem; }
.textbox { display: flex; flex-wrap: wrap; gap: 0.4rem 0.6rem; align-items: center; }
.textbox label { font-weight: 600; }
.textbox input[type="text"] { flex: 1 1 16rem; min-width: 0; }
.other { margin-top: 0.5rem; }
.other input[type="text"] { flex: 1 1 10rem; }
.text-error { color: var(--hl-error); font-weight: 600; margin: 0.2rem 0; overflow-wrap: anywhere; }
.text-error:empty { display: none; }
.tokens { display: flex; flex-wrap: wrap; gap: 0.25rem; margin: 0.4rem 0; padding: 0; list-style: none; }
.tokens li, .lens .tok, table.next bdi { unicode-bidi: isolate; }
.tokens li { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.85rem;
  border: 1px solid var(--hl-border); border-radius: 4px; padding: 0 0.3rem; background: var(--hl-surface); white-space: pre; max-width: 100%; overflow: hidden; text-overflow: ellipsis; }
section.part { margin-top: 0.9rem; min-width: 0; }
.legend { display: flex; flex-wrap: wrap; gap: 0.3rem 0.9rem; align-items: center; font-size: 0.85rem; margin: 0.3rem 0; padding: 0; list-style: none; }
.legend .swatch { width: 1.1rem; height: 1.1rem; text-align: center; font-size: 0.7rem; font-weight: 700; line-height: 1.05rem; color: var(--hl-text); }
.grid-wrap { max-width: 100%; overflow-x: auto; }
.heads-grid { display: grid; gap: 2px; margin: 0.4rem 0; width: max-content; max-width: 100%; }
.heads-grid [role="row"] { display: grid; grid-template-columns: 2.2rem repeat(var(--heads), minmax(1.15rem, var(--cell, 2.5rem))); gap: 2px; }
.heads-grid [role="columnheader"], .heads-grid [role="rowheader"] { font-size: 0.72rem; color: var(--hl-muted); font-weight: 600; text-align: center; align-self: center; }
.hcell { aspect-ratio: 1; border: 1px solid var(--hl-border); border-radius: 3px; cursor: pointer; display: flex; align-items: center; justify-content: center;
  font-size: 0.78rem; font-weight: 700; color: var(--hl-text); min-width: 0; position: relative; user-select: none; }
.hcell:hover { outline: 2px solid var(--hl-accent); outline-offset: -1px; }
.hcell[aria-selected="true"] { outline: 3px solid var(--hl-fig-highlight); outline-offset: -2px; }
.hcell[data-off]::after { content: ""; position: absolute; inset: 0; border-radius: 2px;
  background: repeating-linear-gradient(45deg, transparent 0 4px, var(--hl-text) 4px 5.5px); opacity: 0.4; }
.hcell[data-mode="one"] { color: transparent; }
.grid-tools { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: center; }
.grid-tools > .field { min-width: 0; max-width: 100%; }
.grid-tools select { max-width: 100%; min-width: 0; }
.detail { display: grid; gap: 0.8rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 20rem), 1fr)); align-items: start; }
.detail > * { min-width: 0; }
.lines-box svg { max-width: 100%; height: auto; }
table.next td.bar { width: 40%; min-width: 4rem; }
table.next .barfill { display: block; height: 0.7rem; background: var(--hl-accent); border-radius: 2px; min-width: 1px; }
table.next td.tok { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre; max-width: 10rem; overflow: hidden; text-overflow: ellipsis; }
table.next td.tok.new { font-weight: 700; color: var(--hl-query); }
table.next td.tok.new::after { content: " " attr(data-new); font-weight: 400; font-size: 0.75rem; font-family: system-ui, sans-serif; }
.lens { display: flex; flex-wrap: wrap; gap: 0.3rem; margin: 0.4rem 0; padding: 0; list-style: none; }
.lens li { border: 1px solid var(--hl-border); border-radius: 5px; padding: 0.15rem 0.4rem; min-width: 4.5rem; font-size: 0.82rem; }
.lens .layer { display: block; color: var(--hl-muted); font-size: 0.72rem; }
.lens .tok { display: block; font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-weight: 700; white-space: pre; overflow: hidden; text-overflow: ellipsis; max-width: 9rem; }
.lens .p { display: block; font-variant-numeric: tabular-nums; color: var(--hl-muted); font-size: 0.75rem; }
[aria-busy="true"] table.next, [aria-busy="true"] .lens { opacity: 0.55; }
@media (prefers-reduced-motion: no-preference) { table.next, .lens { transition: opacity 150ms linear 150ms; } }
.hcell[data-costly] { outline: 2px dashed var(--hl-text); outline-offset: -4px; }
ul.plain { list-style: none; padding: 0; margin: 0.4rem 0; }
ul.plain li { margin: 0.4rem 0; }
.off-list { display: flex; flex-wrap: wrap; gap: 0.3rem; align-items: center; }
@container (max-width: 30rem) {
  .heads-grid [role="row"] { grid-template-columns: 1.5rem repeat(var(--heads), minmax(0.9rem, 2.2rem)); gap: 1px; }
  .hcell { font-size: 0.62rem; }
  .hub-models .family { grid-template-columns: minmax(0, 1fr); gap: 0.1rem; }
  .hub-models .family-name { padding-top: 0; }
  .heads-grid [role="columnheader"] { font-size: 0.6rem; }
  /* The bar repeats the probability: dropped so "With every head on" fits. */
  table.next td.bar, table.next th.bar { display: none; }
  table.next td.tok { max-width: 6.5rem; }
  table.next th { white-space: normal; }
}
`;

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * One of HeadLab's models: carried inside the classic bundle (file://), else fetched next to the
 * bundle, from the Cache API when the network gives no answer (shipped-cache.js).
 */
async function shippedBytes(name) {
  const spec = SHIPPED_MODELS.find((m) => m.name === name);
  if (!spec) throw new RangeError(`headlab-model-explorer: no shipped model named ${JSON.stringify(name)} (known: ${SHIPPED_MODELS.map((m) => m.name).join(', ')})`);
  if (embeddedModels?.[spec.file]) return decodeBase64(embeddedModels[spec.file]);
  const url = shippedModelUrl(spec.file);
  return readShipped(url, { file: spec.file });
}

/** Over http(s), every one of HeadLab's models into the Cache API once the page has loaded: they open offline later. */
let warmed = null;
function warmShippedModels() {
  if (warmed || embeddedModels || !/^https?:$/.test(new URL(shippedModelUrl(SHIPPED_MODELS[0].file)).protocol)) return;
  warmed = warmShipped(SHIPPED_MODELS.map((spec) => shippedModelUrl(spec.file))).catch(() => 0);
}

/** A token as it is drawn: spaces made visible at its ends, control characters as escapes. */
function showToken(token) {
  const escape = (c) => {
    const code = c.charCodeAt(0);
    if (code >= 0x20 && code !== 0x7f) return c;
    return c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\x${code.toString(16).padStart(2, '0')}`;
  };
  const t = Array.from(String(token ?? ''), escape).join('');
  return t.replace(/^ /, '␣').replace(/ $/, '␣');
}

/** **text** as text with bold parts (the catalogue is ours; it goes in as text). */
const rich = (text) => text.split('**').map((part, k) => (k % 2 ? el('strong', {}, part) : part));

export class HeadlabModelExplorer extends HeadlabElement {
  static tag = 'headlab-model-explorer';
  static stateKey = 'explorer';
  static css = CSS + FINDINGS_CSS + TREND_CSS;
  static messages = withTraining(messages);  // with the training catalogue: modeText's words
  static props = {
    model: { type: 'string', default: 'induction', state: true },
    text: { type: 'string', default: null },
    hubUrl: { attr: 'hub-url', type: 'string', default: 'https://huggingface.co' },
  };

  // ---------------------------------------------------------------- public

  get controller() { return this._c; }
  // 'error' too when the element itself could not start (its box then says why).
  get state() { return this.dataset.state === 'failed' ? 'error' : this._c?.state ?? 'empty'; }
  get info() { return this._c?.info ?? null; }
  get scores() { return this._c?.scores ?? null; }
  get results() { return this._c?.results ?? null; }
  get progress() { return this._c?.progress ?? null; }
  /** The last load that failed while the model before it stayed: { source, code, message }, else null. */
  get failed() { return this._c?.failed ?? null; }
  /** Where the model runs: 'worker' or 'main-thread', null before a model is loaded. Read-only. */
  get runsIn() { return this._c?.client?.runsIn ?? null; }

  load(source) { return this._c.load(source, { text: this.textFor(source) }); }
  cancel() { return this._c.cancel(); }
  setText(text) { this.textInput.value = String(text); return this._c.setText(String(text)); }
  setHeadEnabled(layer, head, on) { return this._c.setHeadEnabled(layer, head, on); }
  allHeadsOn() { return this._c.allHeadsOn(); }
  openHead(layer, head) { this._c.openHead(layer, head); }
  computeLens() { return this._c.computeLens(); }

  // ---------------------------------------------------------------- build

  /** A probability with three decimals, or in scientific notation where three decimals would show 0.000 (a large vocabulary's tail). */
  prob(p) { return Number.isFinite(p) && p > 0 && p < 0.0005 ? p.toExponential(1).replace('.', this.fmt(0.5, 1).charAt(1)) : this.fmt(p, 3); }
  /** Bytes as a learner reads them, with the language's decimal sign. */
  size(bytes) { return sizeText(bytes).replace('.', this.fmt(0.5, 1).charAt(1)); }
  headName(layer, head) { return this.t('explorer.headName', { layer: layer + 1, head: head + 1 }); }
  detector(d) { return this.t(`explorer.detector.${d.key}`); }

  build() {
    const t = this.t;
    if (!this._c?.hasModel) this.setAttribute('data-busy', '');
    // Built again in a new language (relocalise): the controller and its model stay; the grid and heatmap are made anew.
    this._gridKey = null;
    this._heat = null;
    this._c ??= new ExplorerController({
      t: () => this.t,
      createClient: (onEvent) => new TrainerClient(onEvent, {
        workerFile: 'headlab-explorer-worker.js', workerName: 'headlab-explorer', activity: 'The model',
        // A pretrained model's load and pass can compute for longer than the watchdog in one go, answering nothing meanwhile.
        watchRequests: [],
        openSession: (lab, emit) => ExplorerSession.open(lab, emit),
      }),
      readShipped: shippedBytes,
      emit: (type, detail) => this.onController(type, detail),
      online: () => (typeof navigator === 'undefined' ? true : navigator.onLine !== false),
    });
    this.heading = el('h2', {}, t('explorer.title'));
    this.status = el('p', { class: 'status', role: 'status', dataset: { testid: 'explorer-status' } });
    this.intro = el('div', { class: 'explain' }, el('p', {}, rich(t('explorer.intro'))));

    // Model picker
    this.shippedButtons = SHIPPED_MODELS.map((m) => el('button', {
      type: 'button', class: 'btn', 'aria-pressed': 'false', dataset: { model: m.name, testid: `explorer-model-${m.name}` },
      title: t(`explorer.shipped.${m.name}.about`), on: { click: () => this.pick(m.name) },
    }, el('span', {}, t(`explorer.shipped.${m.name}`)), el('span', { class: 'size' }, t('explorer.inPage', { size: this.size(m.bytes) }))));
    // The hub's models, decoders then encoders, one row of buttons per family (hub-models.js).
    this.hubButtons = [];
    const hubButton = (m) => {
      // One line: the size and the phone mark; a second for "gated".
      const marks = [el('span', { class: 'meta' }, el('span', { class: 'size' }, t('explorer.download', { size: this.size(m.bytes) })),
        m.phone
          ? el('span', { class: 'mark phone', dataset: { testid: 'explorer-phone' } }, t('explorer.phone'))
          : el('span', { class: 'sr-only' }, t('explorer.notPhone')))];
      if (m.gated) marks.push(el('span', { class: 'mark gated' }, t('explorer.gated')));
      const b = el('button', {
        type: 'button', class: 'btn', 'aria-pressed': 'false', dataset: { model: m.id, testid: buttonTestId(m) },
        title: t(whyKey(m)), on: { click: () => this.pick(m.id) },
      }, el('span', { class: 'name' }, m.title), ...marks);
      this.hubButtons.push(b);
      return b;
    };
    const hubGroups = el('div', { class: 'hub-groups' }, pickerGroups().map((k) => el('div', { class: 'kind', role: 'group', 'aria-labelledby': `${this._pickerId ??= uid('kind')}-${k.kind}`,
      dataset: { testid: `explorer-kind-${k.kind}` } },
    el('p', { class: 'kind-title', id: `${this._pickerId}-${k.kind}` }, t(k.kind === 'decoder' ? 'explorer.decoders' : 'explorer.encoders')),
    k.families.map((f) => el('div', { class: 'family', role: 'group', 'aria-label': t('explorer.familyModels', { family: f.family }) },
      el('span', { class: 'family-name', 'aria-hidden': 'true' }, f.family),
      el('div', { class: 'model-buttons' }, f.models.map(hubButton)))))));
    this.fileInput = el('input', { type: 'file', multiple: true, id: uid('files'), dataset: { testid: 'explorer-files' },
      accept: '.json,.safetensors', on: { change: () => { if (this.fileInput.files.length) this.loadFiles([...this.fileInput.files]); } } });
    this.drop = el('div', { class: 'drop', dataset: { testid: 'explorer-drop' } },
      el('label', { for: this.fileInput.id }, t('explorer.files')),
      this.fileInput);
    this.drop.addEventListener('dragover', (e) => { e.preventDefault(); this.drop.setAttribute('data-over', ''); });
    this.drop.addEventListener('dragleave', () => this.drop.removeAttribute('data-over'));
    this.drop.addEventListener('drop', (e) => {
      e.preventDefault();
      this.drop.removeAttribute('data-over');
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) this.loadFiles(files);
    });
    this.pendingNote = el('p', { class: 'note note--warn', hidden: true, 'aria-live': 'polite', dataset: { testid: 'explorer-pending' } });
    this.otherInput = el('input', { type: 'text', id: uid('other'), placeholder: t('explorer.idPlaceholder'), autocomplete: 'off', spellcheck: 'false', class: 'mono',
      dataset: { testid: 'explorer-other' } });
    this.otherButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'check-size' }, on: { click: () => this.offer(this.otherInput.value.trim()) } }, t('explorer.checkSize'));
    this.otherInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.offer(this.otherInput.value.trim()); } });
    this.picker = el('div', { class: 'picker', part: 'picker' },
      el('fieldset', {}, el('legend', {}, t('explorer.own')),
        el('p', { class: 'small muted explain' }, t('explorer.ownNote')),
        el('div', { class: 'model-buttons' }, this.shippedButtons)),
      el('fieldset', { class: 'hub-models' }, el('legend', {}, t('explorer.hub')),
        el('p', { class: 'small muted explain' }, t('explorer.hubNote'), ' ', t('explorer.hubSizesNote')),
        hubGroups,
        el('div', { class: 'textbox other' }, el('label', { for: this.otherInput.id }, t('explorer.another')), this.otherInput, this.otherButton)));

    // Progress
    this.progressBar = el('progress', { max: 1, value: 0, 'aria-label': t('explorer.progress'), dataset: { testid: 'explorer-progress' } });
    this.progressText = el('span', { class: 'what', dataset: { testid: 'explorer-progress-text' } });
    this.cancelButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'cancel' }, on: { click: () => this.cancel() } }, t('explorer.cancel'));
    this.progressBox = el('div', { class: 'progress-box', part: 'progress', hidden: true }, this.progressText, this.progressBar, this.cancelButton);
    this.errorBox = el('div', { class: 'alert', role: 'alert', dataset: { testid: 'explorer-error' } });
    // Shown only where the model runs on the page itself (no Worker could start): says why.
    this.modeNote = el('p', { class: 'small muted', hidden: true, dataset: { testid: 'explorer-mode' } });
    this.infoLine = el('p', { class: 'info muted', dataset: { testid: 'explorer-info' } });

    // Text
    this.textInput = el('input', { type: 'text', id: uid('text'), autocomplete: 'off', spellcheck: 'false', class: 'mono', dataset: { testid: 'explorer-text' } });
    if (this._c.hasModel) this.textInput.value = this._c.text;
    this.textInput.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.runText(); } });
    this.runButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'run' }, on: { click: () => this.runText() } }, t('explorer.run'));
    this.textError = el('p', { class: 'text-error', 'aria-live': 'polite', dataset: { testid: 'explorer-text-error' } });
    this.tokenList = el('ol', { class: 'tokens', 'aria-label': t('explorer.tokensLabel'), dataset: { testid: 'explorer-tokens' } });
    this.tokenNote = el('p', { class: 'small muted' });
    this.textPart = el('section', { class: 'part' },
      el('div', { class: 'textbox' }, el('label', { for: this.textInput.id }, t('explorer.text')), this.textInput, this.runButton),
      this.textError, this.tokenList, this.tokenNote);

    // Grid
    this.colourSelect = el('select', { id: uid('colour'), dataset: { testid: 'explorer-colour' } },
      el('option', { value: 'strongest' }, t('explorer.strongest')),
      DETECTORS.map((d) => el('option', { value: d.key }, t('explorer.scoreOf', { name: this.detector(d) }))));
    this.colourSelect.addEventListener('change', () => this.renderGrid());
    this.legend = el('ul', { class: 'legend', dataset: { testid: 'explorer-legend' } });
    this.grid = el('div', { class: 'heads-grid', role: 'grid', part: 'heads', dataset: { testid: 'explorer-grid' } });
    this.grid.addEventListener('keydown', (e) => this.onGridKey(e));
    this.gridNote = el('p', { class: 'small muted', dataset: { testid: 'explorer-grid-note' } });
    this.kvNote = el('p', { class: 'small sink-line', dataset: { testid: 'explorer-kv-note' } });
    this.sinkLine = el('p', { class: 'small sink-line', dataset: { testid: 'explorer-sink' } });
    this.gridExport = exportMenu({
      what: t('explorer.headScores'), name: () => `head-scores-${this.modelSlug()}`, t,
      csv: () => this.scoresCSV(), json: () => this._c.scores && { model: this._c.info, ...this._c.scores },
      onExport: (format, filename) => this.emit('export', { format, filename }),
    });
    this.gridPart = el('section', { class: 'part', dataset: { testid: 'explorer-heads-part' } },
      el('h3', {}, t('explorer.everyHead')),
      el('div', { class: 'grid-tools' }, el('div', { class: 'field' }, el('label', { for: this.colourSelect.id }, t('explorer.colourBy')), this.colourSelect)),
      this.legend, el('div', { class: 'grid-wrap' }, this.grid), this.kvNote, this.sinkLine, this.gridNote, this.gridExport);

    // What each head costs: loss change with it off, and with its label's group off
    this.importanceButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'importance' },
      on: { click: () => this._c.computeImportance().catch((e) => this.showError(e)) } }, t('explorer.imp.button'));
    this.importanceText = el('div', { class: 'small', dataset: { testid: 'explorer-importance' } });
    this.importancePart = el('section', { class: 'part', dataset: { testid: 'explorer-importance-part' } },
      el('h3', {}, t('explorer.imp.title')), el('p', { class: 'small muted explain' }, t('explorer.imp.explain')),
      el('div', { class: 'toolbar' }, this.importanceButton), this.importanceText);

    // Opened head
    this.detailTitle = el('h3', { dataset: { testid: 'explorer-detail-title' } }, t('explorer.oneHead'));
    this.detailText = el('p', { class: 'small', dataset: { testid: 'explorer-detail-text' } });
    this.toggleButton = el('button', { type: 'button', class: 'btn', dataset: { action: 'toggle-head' }, on: { click: () => this.toggleOpen() } }, t('explorer.switchOff'));
    this.heatBox = el('div', { dataset: { testid: 'explorer-heatmap' } });
    this.linesBox = el('div', { class: 'lines-box', part: 'lines', dataset: { testid: 'explorer-lines' } });
    this.detailPart = el('section', { class: 'part', part: 'detail' }, this.detailTitle, this.detailText,
      el('div', { class: 'toolbar' }, this.toggleButton), el('div', { class: 'detail' }, this.heatBox, this.linesBox));

    // Switched off, next tokens, lens
    this.offList = el('div', { class: 'off-list', dataset: { testid: 'explorer-off' } });
    this.nextBox = el('div', { class: 'table-scroll', part: 'next', dataset: { testid: 'explorer-next' } });
    this.nextTitle = el('h3', { dataset: { testid: 'explorer-next-title' } }, t('explorer.nextTitle'));
    this.nextExplain = el('p', { class: 'small muted explain' }, t('explorer.nextExplain'));
    this.nextPart = el('section', { class: 'part' }, this.nextTitle, this.nextExplain, this.offList, this.nextBox);
    this.lensSelect = el('select', { id: uid('pos'), dataset: { testid: 'explorer-lens-position' } });
    this.lensSelect.addEventListener('change', () => this.renderLens());
    this.lensStrip = el('ol', { class: 'lens', part: 'lens', dataset: { testid: 'explorer-lens' } });
    this.lensNote = el('p', { class: 'small muted', dataset: { testid: 'explorer-lens-note' } });
    this.lensButton = el('button', { type: 'button', class: 'btn', hidden: true, dataset: { action: 'lens' },
      on: { click: () => this.computeLens().catch((e) => this.showError(e)) } }, t('explorer.lensButton'));
    this.lensPart = el('section', { class: 'part' }, el('h3', {}, t('explorer.lensTitle')),
      el('p', { class: 'small muted explain' }, t('explorer.lensExplain')),
      el('div', { class: 'field' }, el('label', { for: this.lensSelect.id }, t('explorer.afterToken')), this.lensSelect), this.lensStrip, this.lensNote, this.lensButton);

    this.resultsBox = el('div', { dataset: { testid: 'explorer-results' } }, this.gridPart, this.importancePart, this.detailPart, this.nextPart, this.lensPart);
    this.root.append(this.heading, this.status, this.intro, this.picker, this.drop, this.pendingNote, this.progressBox, this.errorBox,
      this.modeNote, this.infoLine, this.textPart, this.resultsBox, el('div', { class: 'toolbar' }, this.copyLink()));
    this._findings = mountFindings(this, this.resultsBox);
    this._trend = mountRevisionTrend(this, this._findings.element);
    this.renderLegend();
    this.renderAll();
  }

  // ---------------------------------------------------------------- lifecycle

  connectedCallback() {
    super.connectedCallback();
    clearTimeout(this._disposeTimer);
    if (document.readyState === 'complete') warmShippedModels();
    else addEventListener('load', warmShippedModels, { once: true });
    // Back after being removed for good: load again.
    if (this.lab && !this._loadedKey) this.requestUpdate();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    // Removed for good (not just moved): free the Worker and the model.
    this._disposeTimer = setTimeout(() => { if (!this.isConnected) { this._c.dispose(); this._loadedKey = null; } }, 0);
  }

  getExtraState() {
    const out = {};
    const c = this._c;
    if (c.text && c.text !== this.defaultText()) out.text = c.text;
    if (c.open) out.head = `${c.open.layer + 1}.${c.open.head + 1}`;
    if (c.off.size) out.off = c.ablate.map((a) => `${a.layer + 1}.${a.head + 1}`).join(',');
    return out;
  }

  setExtraState(map) {
    if (map.has('text')) this._pendingText = map.get('text');
    const head = /^(\d+)\.(\d+)$/.exec(map.get('head') ?? '');
    this._pendingHead = head ? { layer: Number(head[1]) - 1, head: Number(head[2]) - 1 } : null;
    this._pendingOff = (map.get('off') ?? '').split(',').map((s) => /^(\d+)\.(\d+)$/.exec(s)).filter(Boolean)
      .map((m) => ({ layer: Number(m[1]) - 1, head: Number(m[2]) - 1 }));
  }

  update() {
    if (!this.lab) return;
    // A new text attribute runs at once on the model there is.
    const textAttr = this.getAttribute('text');
    if (textAttr !== null && textAttr !== this._textAttr && this._textAttr !== undefined && this._c.hasModel) {
      this.setText(textAttr).catch((e) => this.showError(e));
    }
    this._textAttr = textAttr;
    const key = `${this.model}|${this.hubUrl}`;
    if (key === this._loadedKey) return;
    this._loadedKey = key;
    const shipped = SHIPPED_MODELS.find((m) => m.name === this.model);
    if (shipped) {
      this.load({ kind: 'shipped', name: shipped.name });
    } else if (/^[\w.-]+\/[\w.-]+$/.test(this.model)) {
      // A Hugging Face model is only offered: nothing is downloaded before the reader asks.
      this.offer(this.model);
    } else {
      this.removeAttribute('data-busy');
    }
  }

  /** The attribute problems base.js reports, plus a model it does not know. */
  attributeProblems() {
    const out = super.attributeProblems();
    const m = this.model;
    if (m && !SHIPPED_MODELS.some((s) => s.name === m) && !/^[\w.-]+\/[\w.-]+$/.test(m)) {
      out.push(this.t('explorer.badModel', { value: JSON.stringify(m.slice(0, 40)), models: SHIPPED_MODELS.map((s) => s.name).join(', ') }));
    }
    return out;
  }

  // ---------------------------------------------------------------- actions

  /** A button of the picker: HeadLab's models load at once, Hugging Face ones download now (the size was on the button). */
  pick(name) {
    this.pendingNote.hidden = true;
    const shipped = SHIPPED_MODELS.find((m) => m.name === name);
    this._loadedKey = `${name}|${this.hubUrl}`;
    this.model = name;
    if (shipped) return this.load({ kind: 'shipped', name });
    const hub = hubModel(name);
    return this.load({ kind: 'hub', id: name, revision: hub?.revision, hubUrl: this.hubUrl });
  }

  /** A link or attribute named a Hugging Face model: say what it is and what it costs, and wait for the reader. */
  async offer(id) {
    this.removeAttribute('data-busy');
    this.pendingNote.hidden = false;
    if (!/^[\w.-]+\/[\w.-]+$/.test(id)) {
      this.pendingNote.replaceChildren(this.t('explorer.notId', { id: id.slice(0, 60) }));
      return;
    }
    const t = this.t;
    const hub = hubModel(id);
    const button = (bytes) => el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'download' }, on: { click: () => this.pick(id) } },
      bytes ? t('explorer.downloadButtonSize', { name: hub?.title ?? id, size: this.size(bytes) }) : t('explorer.downloadButton', { name: hub?.title ?? id }));
    if (hub) {
      this.pendingNote.replaceChildren(t('explorer.hubSize', { id, size: this.size(hub.bytes) }), button(hub.bytes));
      return;
    }
    const ask = (this._asked = (this._asked ?? 0) + 1);
    this.pendingNote.replaceChildren(t('explorer.hubAsking', { id }));
    let size;
    try {
      size = await hubDownloadSize({ hubUrl: this.hubUrl, id });
    } catch (e) {
      size = { bytes: null, problem: t('explorer.hubNoAnswer', { detail: e?.message ?? e }) };
    }
    if (ask !== this._asked) return;
    this.pendingNote.replaceChildren(size.bytes ? t('explorer.hubSize', { id, size: this.size(size.bytes) }) : t('explorer.hubProblem', { id, problem: size.problem }),
      ...(size.bytes || !/pytorch_model|no model/.test(size.problem) ? [button(size.bytes)] : []));
  }

  loadFiles(files) {
    this.pendingNote.hidden = true;
    return this.load({ kind: 'files', files });
  }

  /** The text a new model starts with: the reader's own, else the model's example (the course sentence for real models). */
  textFor(source) {
    if (this._pendingText !== undefined) {
      const t = this._pendingText;
      this._pendingText = undefined;
      return t;
    }
    const current = this._c.text;
    const defaults = [COURSE_SENTENCE, maskedCourseSentence('[MASK]'), maskedCourseSentence('<mask>'), ...SHIPPED_MODELS.map((m) => m.text), this.getAttribute('text')];
    const keep = this.textInput.value && !defaults.includes(this.textInput.value) ? this.textInput.value : null;
    if (keep) return keep;
    if (this.getAttribute('text')) return this.getAttribute('text');
    return source.kind === 'shipped' ? SHIPPED_MODELS.find((m) => m.name === source.name).text : (current && !defaults.includes(current) ? current : COURSE_SENTENCE);
  }

  defaultText() {
    const shipped = SHIPPED_MODELS.find((m) => m.name === this._c.source?.name);
    return this.getAttribute('text') || (this._c.source?.kind === 'shipped' ? shipped?.text : COURSE_SENTENCE);
  }

  runText() {
    this._c.setText(this.textInput.value).catch((e) => this.showError(e));
  }

  toggleOpen() {
    const o = this._c.open;
    if (!o) return;
    this._c.setHeadEnabled(o.layer, o.head, !this._c.headEnabled(o.layer, o.head)).catch((e) => this.showError(e));
  }

  showError(e) {
    const message = String(e?.message ?? e);
    this.errorBox.replaceChildren(el('strong', {}, this.t('explorer.failed')), ` ${message}`);
    this.emit('error', { message });
  }

  say(text) { announce(this.status, text); }

  // ---------------------------------------------------------------- controller events

  onController(type, detail) {
    const c = this._c;
    if (type === 'state') {
      this.dataset.explorerState = detail.to;
      this.emit('state', detail);
      if (detail.to === 'loading') {
        this.errorBox.replaceChildren();
        this.setAttribute('data-busy', '');
        this.say(this.t('explorer.loading', { model: this.modelTitle() }));
      } else if (detail.to === 'cancelled') {
        this.removeAttribute('data-busy');
        this.say(this.t('explorer.cancelled'));
      } else if (detail.to === 'running' && detail.reason === 'lens') {
        this.say(this.t('explorer.computingLens'));
      } else if (detail.to === 'error') {
        this.removeAttribute('data-busy');
        this.errorBox.replaceChildren(el('strong', {}, this.t('explorer.noModel')), ` ${c.error}`);
        this.say(`${this.t('explorer.noModel')} ${c.error}`);
      } else if (detail.to === 'ready' && detail.reason === 'load-failed') {
        // The model loaded before is still there: say so beside why the new one did not load.
        this.removeAttribute('data-busy');
        const kept = this.t('explorer.keptModel', { model: this.modelTitle() });
        this.errorBox.replaceChildren(el('strong', {}, this.t('explorer.loadFailed')), ` ${c.error} ${kept}`);
        this.say(`${this.t('explorer.loadFailed')} ${kept}`);
      }
      this.renderAll();
    } else if (type === 'progress') {
      this.emit('progress', detail);
      this.renderProgress();
    } else if (type === 'loaded') {
      this.emit('load', { info: detail.info, source: { ...detail.source, files: undefined } });
      const i = detail.info;
      this.modeNote.hidden = c.client?.mode !== 'main';
      this.modeNote.textContent = this.modeNote.hidden ? '' : modeText(this.t, c.client, 1, 'model');
      this.say(this.t('explorer.loaded', { model: this.modelTitle(), layers: i.numLayers, heads: i.numHeads }));
      // State from a link: the head it opened and the heads it switched off.
      const head = this._pendingHead, off = this._pendingOff ?? [];
      this._pendingHead = null;
      this._pendingOff = null;
      if (head && head.layer < i.numLayers && head.head < i.numHeads) c.open = head;
      for (const o of off) if (o.layer < i.numLayers && o.head < i.numHeads) c.off.add(`${o.layer}.${o.head}`);
    } else if (type === 'results') {
      this.removeAttribute('data-busy');
      if (!this.textInput.matches(':focus')) this.textInput.value = c.text;
      this.emit('results', { tokens: c.results?.tokens ?? [], next: c.results?.next ?? [], baseline: c.results?.baseline ?? null, problem: detail.problem });
      this.renderAll();
      if (!detail.problem && c.results) {
        const top = c.results.next[0] ?? c.results.fill?.[0]?.top[0];
        if (top) this.say(this.t('explorer.mostLikely', { off: c.off.size ? this.t.plural('explorer.headsOff', c.off.size) : '', token: showToken(top?.token), p: this.prob(top?.probability ?? NaN) }));
      }
    } else if (type === 'importance') {
      this.removeAttribute('data-busy');
      this.renderImportance();
      this.renderGrid();
      if (detail.problem) this.showError(new Error(detail.problem));
    } else if (type === 'head') {
      this.emit('ablate', detail);
    } else if (type === 'open') {
      this.emit('open', detail);
      this.renderSelection();
      this.renderDetail();
    } else if (type === 'error') {
      this.emit('error', { message: detail.message });
      if (!detail.kept && (c.state === 'error' || c.state === 'empty')) this.errorBox.replaceChildren(el('strong', {}, this.t('explorer.noModel')), ` ${detail.message}`);
    }
  }

  modelTitle() {
    const s = this._c.source;
    if (!s) return '';
    const title = `explorer.shipped.${s.name}`;
    if (s.kind === 'shipped') return this.t('explorer.shippedTitle', { title: this.t.has(title) ? this.t(title) : s.name });
    if (s.kind === 'hub') return hubModel(s.id)?.title ?? s.id;
    return this.t('explorer.yourModel');
  }

  modelSlug() {
    const s = this._c.source;
    return String(s?.name ?? s?.id ?? 'model').replace(/[^\w.-]+/g, '-');
  }

  // ---------------------------------------------------------------- render

  renderAll() {
    const c = this._c;
    const chosen = c.source?.kind === 'shipped' ? c.source.name : c.source?.kind === 'hub' ? c.source.id : null;
    for (const b of [...this.shippedButtons, ...this.hubButtons]) {
      b.setAttribute('aria-pressed', String(b.dataset.model === chosen && c.state !== 'cancelled' && c.state !== 'error'));
      b.disabled = c.state === 'loading' && b.dataset.model === chosen;
    }
    this.renderProgress();
    this.resultsBox.setAttribute('aria-busy', String(c.state === 'running'));
    const has = c.hasModel && c.info;
    this.resultsBox.hidden = !(has && c.results);
    this.textPart.hidden = !has;
    setText(this.textError, c.textProblem ? this.textProblemWords(c.textProblem) : '');
    this.textInput.toggleAttribute('aria-invalid', Boolean(c.textProblem));
    const t = this.t;
    if (!has) { setText(this.infoLine, c.state === 'empty' ? t('explorer.pick') : ''); return; }
    const i = c.info;
    const parts = [t('explorer.info', { model: this.modelTitle(), layers: i.numLayers, heads: i.numHeads, d: i.dModel, vocab: this.fmtInt(i.vocabSize), context: i.contextLength })];
    if (i.parameters) {
      parts.push(i.parameters >= 1e6 ? t('explorer.millions', { n: this.formatNumber(+(i.parameters / 1e6).toPrecision(3)) }) : t('explorer.parameters', { n: this.fmtInt(i.parameters) }));
    }
    if (i.dtype && i.architecture !== 'headlab') parts.push(t('explorer.dtype', { dtype: i.dtype }));
    const line = parts.join(', ');
    // A repository id is written as the hub writes it ("me/tiny"), never capitalised.
    const asWritten = c.source?.kind === 'hub' && line.startsWith(this.modelTitle());
    setText(this.infoLine, `${asWritten ? line.charAt(0) : line.charAt(0).toUpperCase()}${line.slice(1)}.`);
    if (!c.results) return;
    this.renderTokens();
    this.buildGrid();
    this.renderGrid();
    this.renderDetail();
    this.renderNext();
    this.renderLens();
    this.renderImportance();
  }

  /** The heads ranked by what switching them off costs on the text, the groups, and redundancy in words. */
  renderImportance() {
    const c = this._c, t = this.t, imp = c.importance;
    // The cost is a next-token loss: an encoder, which guesses masked words, has none to lose.
    this.importancePart.hidden = c.info?.kind === 'encoder';
    this.importanceButton.disabled = c.state !== 'ready';
    if (!imp) { this.importanceText.replaceChildren(); return; }
    const nats = (x) => `${x >= 0 ? '+' : '−'}${this.fmt(Math.abs(x), 2)}`;
    const label = (key) => (key ? this.detector(DETECTORS.find((d) => d.key === key)) : t('explorer.imp.noLabel'));
    const rows = imp.heads.slice(0, 8).map((h) => el('tr', {},
      el('th', { scope: 'row' }, this.headName(h.layer, h.head)), el('td', {}, label(h.label)), el('td', { class: 'num' }, nats(h.lossChange))));
    const table = el('table', { class: 'matrix next', dataset: { testid: 'explorer-importance-heads' } },
      el('caption', { class: 'small muted' }, t('explorer.imp.caption', { loss: this.fmt(imp.loss, 2), text: imp.text === c.text ? t('explorer.imp.thisText') : t('explorer.imp.earlierText') })),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('explorer.imp.head')), el('th', { scope: 'col' }, t('explorer.imp.label')),
        el('th', { scope: 'col' }, t('explorer.imp.change')))),
      el('tbody', {}, rows));
    const groups = imp.groups.map((g) => {
      const name = label(g.label);
      const words = g.redundant
        ? t('explorer.imp.redundant', { n: g.heads.length, name, group: nats(g.lossChange), alone: nats(g.largestAlone) })
        : t('explorer.imp.group', { n: g.heads.length, name, group: nats(g.lossChange), alone: nats(g.largestAlone) });
      const allOff = g.heads.every((h) => !c.headEnabled(h.layer, h.head));
      return el('li', { dataset: { testid: `explorer-group-${g.label}`, redundant: String(g.redundant) } }, el('p', {}, words),
        el('button', { type: 'button', class: 'btn', dataset: { action: 'group-off', label: g.label }, disabled: allOff || c.state !== 'ready',
          on: { click: () => c.setHeadsEnabled(g.heads, false).catch((e) => this.showError(e)) } }, t('explorer.imp.groupOff', { name })));
    });
    // A head that matters while no pattern score labels it: only the loss can name it (it may copy by position).
    const strong = this.fmt(STRONG, String(STRONG).split('.')[1]?.length ?? 0);
    const unlabelled = (imp.unlabelled ?? []).slice(0, 3).map((h) => {
      const name = this.headName(h.layer, h.head);
      return el('li', { dataset: { testid: `explorer-unlabelled-${h.layer}-${h.head}` } },
        el('p', {}, t('explorer.imp.unlabelled', { name, change: nats(h.lossChange), induction: this.fmt(h.induction, 2), strong })),
        el('button', { type: 'button', class: 'btn', dataset: { action: 'open-head', layer: String(h.layer), head: String(h.head) },
          on: { click: () => this.openHead(h.layer, h.head) } }, t('explorer.imp.open', { name })));
    });
    this.importanceText.replaceChildren(table,
      ...(unlabelled.length ? [el('ul', { class: 'plain', dataset: { testid: 'explorer-unlabelled' } }, unlabelled)] : []),
      groups.length ? el('ul', { class: 'plain' }, groups) : el('p', { class: 'muted' }, t('explorer.imp.noGroups')));
  }

  textProblemWords(message) {
    const m = /unknown word "((?:[^"\\]|\\.)*)"/.exec(message);
    if (m && this._c.info?.architecture === 'headlab') {
      return this.t('explorer.unknownWord', { word: m[1] });
    }
    const long = /(\d+) tokens?.*(?:context|at most|longer)/i.exec(message);
    if (long) return this.t('explorer.tooLong', { detail: message });
    return this.t('explorer.cannotRead', { detail: message.replace(/^\w+(\.\w+)?: /, '') });
  }

  renderProgress() {
    const c = this._c;
    const loading = c.state === 'loading';
    this.progressBox.hidden = !loading;
    if (!loading) return;
    const p = c.progress;
    if (p && p.total) {
      this.progressBar.max = p.total;
      this.progressBar.value = Math.min(p.loaded, p.total);
      setText(this.progressText, this.t('explorer.downloading', { file: p.file, loaded: this.size(p.loaded), total: this.size(p.total), percent: Math.floor((100 * p.loaded) / p.total) }));
    } else {
      this.progressBar.removeAttribute('value');
      setText(this.progressText, p ? this.t('explorer.downloadingSome', { file: p.file, loaded: this.size(p.loaded) }) : this.t('explorer.loading', { model: this.modelTitle() }));
    }
  }

  renderTokens() {
    const r = this._c.results;
    this.tokenList.replaceChildren(...r.tokens.map((t, i) => el('li', { title: this.t('explorer.tokenTitle', { i, id: r.ids[i] }) }, showToken(t))));
    const spaced = r.tokens.some((t) => /^ | $/.test(String(t)));
    setText(this.tokenNote, this.t('explorer.tokenCount', { n: r.tokens.length }) + (spaced ? this.t('explorer.spaced') : ''));
  }

  renderLegend() {
    const mode = this.colourSelect.value;
    if (mode === 'strongest') {
      this.legend.replaceChildren(...DETECTORS.map((d) => el('li', {},
        el('span', { class: 'swatch', style: { background: `color-mix(in srgb, ${DETECTOR_COLOURS[d.key]} 65%, var(--hl-bg))` } }, d.mark),
        this.detector(d))), el('li', { class: 'muted' }, this.t('explorer.legendPaler')));
    } else {
      const d = DETECTORS.find((x) => x.key === mode);
      this.legend.replaceChildren(el('li', {}, el('span', { class: 'swatch', style: { background: viridis(0) } }), '0'),
        el('li', {}, el('span', { class: 'swatch', style: { background: viridis(0.5) } }), this.fmt(0.5, 1)),
        el('li', {}, el('span', { class: 'swatch', style: { background: viridis(1) } }), this.t('explorer.legendOne', { name: this.detector(d) })),
        el('li', { class: 'muted' }, this.t('explorer.legendHatched')));
    }
  }

  /** The grid's cells, made again only when the model's shape changes. */
  buildGrid() {
    const { numLayers: L, numHeads: H } = this._c.info;
    // Grouped-query attention: a band over each set of query heads that share a key-value head.
    const groups = kvGroups(this._c.info);
    const key = `${L}x${H}x${groups.length}|${this._c.source?.name ?? this._c.source?.id ?? ''}`;
    if (this._gridKey === key) return;
    this._gridKey = key;
    this.grid.style.setProperty('--heads', String(H));
    this.grid.style.setProperty('--cell', H <= 4 ? '3.4rem' : H <= 8 ? '2.8rem' : '2.4rem');
    const t = this.t;
    this.grid.setAttribute('aria-label', t('explorer.gridAria'));
    this.grid.setAttribute('aria-rowcount', String(L + 1 + (groups.length ? 1 : 0)));
    const header = el('div', { role: 'row' }, el('span', { role: 'columnheader' }, el('span', { class: 'sr-only' }, t('explorer.layer'))),
      Array.from({ length: H }, (_, h) => el('span', { role: 'columnheader', 'aria-label': t('explorer.headN', { head: h + 1 }) }, String(h + 1))));
    this._kvOf = new Map();
    const bands = groups.length ? el('div', { role: 'row', class: 'kv-row', dataset: { testid: 'explorer-kv' } },
      el('span', { role: 'columnheader' }, el('span', { class: 'sr-only' }, t('explorer.kvHeads'))),
      groups.map((g, k) => {
        const words = { from: g.heads[0] + 1, to: g.heads[g.heads.length - 1] + 1, kv: g.kvHead + 1 };
        for (const h of g.heads) this._kvOf.set(h, words);
        const share = t('explorer.kvShare', words);
        return el('span', { role: 'columnheader', class: 'kv', 'aria-colspan': String(g.heads.length), title: share,
          style: { 'grid-column': `span ${g.heads.length}` }, dataset: k % 2 ? { odd: '', kv: String(g.kvHead + 1) } : { kv: String(g.kvHead + 1) } },
        el('span', { 'aria-hidden': 'true' }, t('explorer.kvShort', { kv: g.kvHead + 1 })), el('span', { class: 'sr-only' }, share));
      })) : null;
    const starts = new Set(groups.slice(1).map((g) => g.heads[0]));
    this._cells = [];
    const rows = Array.from({ length: L }, (_, l) => el('div', { role: 'row' },
      el('span', { role: 'rowheader', 'aria-label': t('explorer.layerN', { layer: l + 1 }) }, t('explorer.layerShort', { layer: l + 1 })),
      Array.from({ length: H }, (_, h) => {
        const cell = el('div', { role: 'gridcell', class: 'hcell', tabindex: '-1', 'aria-selected': 'false',
          dataset: { layer: String(l), head: String(h), testid: `explorer-cell-${l + 1}-${h + 1}`, ...(starts.has(h) ? { kvStart: '' } : {}) },
          on: { click: () => { this.focusCell(l, h); this.openHead(l, h); } } });
        this._cells.push(cell);
        return cell;
      })));
    this.grid.replaceChildren(...(bands ? [bands] : []), header, ...rows);
    const g0 = groups[0];
    setText(this.kvNote, g0 ? t('explorer.kvNote', { n: g0.heads.length, kv: groups.length }) : '');
    const o = this._c.open ?? { layer: 0, head: 0 };
    this._focus = { layer: o.layer, head: o.head };
    this.cellAt(o.layer, o.head).tabIndex = 0;
  }

  cellAt(layer, head) { return this._cells?.[layer * this._c.info.numHeads + head] ?? null; }

  renderGrid() {
    const c = this._c;
    if (!c.info || !this._cells) return;
    this.renderLegend();
    const mode = this.colourSelect.value;
    const H = c.info.numHeads;
    const scores = c.scores?.scores ?? [];
    for (const s of scores) {
      const cell = this._cells[s.layer * H + s.head];
      if (!cell) continue;
      const best = strongest(s);
      const off = !c.headEnabled(s.layer, s.head);
      cell.toggleAttribute('data-off', off);
      cell.dataset.mode = mode === 'strongest' ? 'strongest' : 'one';
      cell.dataset.strongest = best.key;
      if (mode === 'strongest') {
        const share = Math.round(22 + 53 * Math.min(1, Math.max(0, best.score)));
        cell.style.background = `color-mix(in srgb, ${DETECTOR_COLOURS[best.key]} ${share}%, var(--hl-bg))`;
        cell.textContent = best.score >= STRONG ? best.mark : '';
      } else {
        cell.style.background = viridis(s[mode]);
        cell.textContent = '';
      }
      const t = this.t;
      const all = DETECTORS.map((d) => `${this.detector(d)} ${this.fmt(s[d.key], 2)}`).join(', ');
      const name = this.headName(s.layer, s.head);
      const cost = c.importance?.heads.find((h) => h.layer === s.layer && h.head === s.head);
      const costText = cost ? t('explorer.imp.cell', { change: `${cost.lossChange >= 0 ? '+' : '−'}${this.fmt(Math.abs(cost.lossChange), 2)}` }) : '';
      cell.toggleAttribute('data-costly', Boolean(cost && cost.lossChange >= 0.1));
      const kv = this._kvOf?.get(s.head);
      cell.setAttribute('aria-label', `${name}: ${best.score >= STRONG ? t('explorer.cellHead', { name: this.detector(best) }) : ''}${all}${costText ? `, ${costText}` : ''}` +
        `${kv ? t('explorer.kvCell', kv) : ''}${off ? t('explorer.cellOff') : ''}`);
      cell.title = `${name}\n${DETECTORS.map((d) => `${this.detector(d)}: ${this.fmt(s[d.key], 2)}`).join('\n')}${costText ? `\n${costText}` : ''}${off ? `\n${t('explorer.titleOff')}` : ''}`;
    }
    const basis = c.scores?.basis === 'task' ? this.t('explorer.basisTask')
      : this.t('explorer.basisLens', { n: c.scores?.sequence ? (c.scores.sequence.length - 1) / 2 : 20 });
    setText(this.gridNote, this.t('explorer.gridNote', { basis, strong: this.fmt(STRONG, String(STRONG).split('.')[1]?.length ?? 0) }));
    this.renderSink();
    this.renderSelection();
  }

  /**
   * A decoder's attention sinks beside the grid: the heads with a first-token score of at least SINK, in the
   * words of the findings panel's attention-sink card (sinkSentence), which is redrawn with it.
   */
  renderSink() {
    const c = this._c;
    this._findings?.renderSinksNow();
    if (c.info?.kind !== 'decoder' || !c.scores) { setText(this.sinkLine, ''); return; }
    const sinks = sinkHeads(c.scores.scores, SINK);
    const headName = (layer, head) => this.t('explorer.offHead', { layer: layer + 1, head: head + 1 });
    setText(this.sinkLine, this.t('explorer.sink', { sentence: sinkSentence(sinks, { t: this.t, fmt: (v, d) => this.fmt(v, d), headName }) }));
    this.sinkLine.dataset.sinks = String(sinks.heads.length);
    this.sinkLine.dataset.heads = sinkKeys(sinks.heads);
  }

  renderSelection() {
    const o = this._c.open;
    for (const cell of this._cells ?? []) {
      cell.setAttribute('aria-selected', String(Boolean(o) && Number(cell.dataset.layer) === o.layer && Number(cell.dataset.head) === o.head));
    }
  }

  focusCell(layer, head) {
    const cell = this.cellAt(layer, head);
    if (!cell) return;
    for (const x of this._cells) x.tabIndex = x === cell ? 0 : -1;
    this._focus = { layer, head };
    cell.focus();
  }

  onGridKey(e) {
    const info = this._c.info;
    if (!info || !this._focus) return;
    let { layer, head } = this._focus;
    switch (e.key) {
      case 'ArrowRight': head = Math.min(info.numHeads - 1, head + 1); break;
      case 'ArrowLeft': head = Math.max(0, head - 1); break;
      case 'ArrowDown': layer = Math.min(info.numLayers - 1, layer + 1); break;
      case 'ArrowUp': layer = Math.max(0, layer - 1); break;
      case 'Home': head = 0; if (e.ctrlKey) layer = 0; break;
      case 'End': head = info.numHeads - 1; if (e.ctrlKey) layer = info.numLayers - 1; break;
      case 'Enter': case ' ': e.preventDefault(); this.openHead(layer, head); return;
      case 'o': case 'O':
        e.preventDefault();
        this.openHead(layer, head);
        this.toggleOpen();
        return;
      default: return;
    }
    e.preventDefault();
    this.focusCell(layer, head);
  }

  /** The opened head: its scores, heatmap and lines view on the text. */
  renderDetail() {
    const c = this._c;
    const r = c.results;
    if (!r || !c.open || !c.info) return;
    const { layer, head } = c.open;
    const [, H, T] = r.shape;
    const s = c.scores?.scores.find((q) => q.layer === layer && q.head === head);
    const best = strongest(s);
    const on = c.headEnabled(layer, head);
    const t = this.t;
    const title = t('explorer.detailTitle', { layer: layer + 1, head: head + 1 });
    const named = best.score >= STRONG
      ? t('explorer.detailKind', { title, article: t(/^[aeiou]/.test(best.name) ? 'explorer.article.an' : 'explorer.article.a'), name: this.detector(best) }) : title;
    setText(this.detailTitle, on ? named : t('explorer.detailOff', { title: named }));
    setText(this.detailText, s ? `${best.score >= STRONG ? t('explorer.detailIt', { means: t(`explorer.means.${best.key}`) }) : t('explorer.detailNone')}` +
      t('explorer.detailScores', { scores: DETECTORS.map((d) => `${this.detector(d)} ${this.fmt(s[d.key], 2)}`).join(', ') }) + (on ? '' : t('explorer.detailSwitchedOff')) : '');
    setText(this.toggleButton, t(on ? 'explorer.switchOff' : 'explorer.switchOn'));
    this.toggleButton.setAttribute('aria-pressed', String(!on));
    const labels = r.tokens.map((t, i) => `${i}:${showToken(t)}`);
    const offset = (layer * H + head) * T * T;
    const key = `${layer}.${head}\u0002${labels.join('\u0001')}`;
    if (!this._heat || this._heat.key !== key) {
      const hm = createHeatmap({ title: t('explorer.onText', { title }), rowLabels: labels, colLabels: labels, testid: 'explorer-detail-table', maxGrid: 380, t,
        fileName: `${this.modelSlug()}-layer-${layer + 1}-head-${head + 1}`, onExport: (format, filename) => this.emit('export', { format, filename }) });
      this._heat = { key, hm };
      this.heatBox.replaceChildren(hm.element);
    }
    this._heat.hm.update(r.attention, offset);
    this.heatBox.dataset.head = `${layer + 1}.${head + 1}`;
    if (T > MAX_LINE_TOKENS) {
      this.linesBox.replaceChildren(el('p', { class: 'small muted' }, t('explorer.linesMax', { max: MAX_LINE_TOKENS, n: T })));
      return;
    }
    const tokens = r.tokens.map(showToken);
    const fig = linesFigure({ queryTokens: tokens, keyTokens: tokens, weights: r.attention.subarray(offset, offset + T * T), title: t('explorer.linesTitle', { title }),
      queryLabel: t('heatmap.query'), keyLabel: t('heatmap.key'),
      width: Math.min(560, Math.max(280, this.linesBox.clientWidth || 420)) });
    this.linesBox.replaceChildren(asImage(figureToSVG(fig), fig, t('explorer.linesLabel', { head: this.headName(layer, head) })));
  }

  renderNext() {
    const c = this._c;
    const r = c.results;
    const offHeads = c.ablate;
    const t = this.t;
    this.offList.replaceChildren(...(offHeads.length ? [
      el('span', { class: 'small' }, t('explorer.offList', { heads: offHeads.map((a) => t('explorer.offHead', { layer: a.layer + 1, head: a.head + 1 })).join(', ') })),
      el('button', { type: 'button', class: 'btn btn--small', dataset: { action: 'all-on' }, on: { click: () => this.allHeadsOn().catch((e) => this.showError(e)) } }, t('explorer.allOn')),
    ] : [el('span', { class: 'small muted' }, t('explorer.everyOn'))]));
    const encoder = c.info?.kind === 'encoder';
    if (c.info?.head === 'none') {
      // BertModel: no output layer, nothing guessed; the grid and heatmaps are the whole story.
      setText(this.nextTitle, t('explorer.noHeadTitle'));
      setText(this.nextExplain, t('explorer.noHeadExplain', { architecture: c.info.architecture }));
      this.nextExplain.dataset.testid = 'explorer-no-head';
      this.nextBox.replaceChildren();
      return;
    }
    delete this.nextExplain.dataset.testid;
    setText(this.nextTitle, t(encoder ? 'explorer.fillTitle' : 'explorer.nextTitle'));
    setText(this.nextExplain, t(encoder ? 'explorer.fillExplain' : 'explorer.nextExplain'));
    if (encoder) { this.renderFill(); return; }
    const base = r.baseline;
    const last = showToken(r.tokens[r.tokens.length - 1]);
    const before = new Set((base ?? []).map((n) => n.id));
    const head = ['#', t('explorer.nextToken'), t('explorer.probability'), el('span', { class: 'sr-only' }, t('explorer.bar'))];
    if (base) head.push(t('explorer.withAll'));
    const prob = (p) => this.prob(p);
    const rows = r.next.map((n, k) => el('tr', {},
      el('td', {}, String(k + 1)), el('td', { class: base && !before.has(n.id) ? 'tok new' : 'tok', dataset: { new: t('explorer.new') } }, el('bdi', {}, showToken(n.token))),
      el('td', { class: 'num' }, prob(n.probability)),
      el('td', { class: 'bar', 'aria-hidden': 'true' }, el('span', { class: 'barfill', style: { width: `${Math.max(0.5, 100 * n.probability)}%` } })),
      base ? el('td', { class: 'tok' }, el('bdi', {}, showToken(base[k].token)), ` ${prob(base[k].probability)}`) : null));
    this.nextBox.replaceChildren(el('table', { class: 'matrix next' },
      el('caption', {}, offHeads.length ? t.plural('explorer.afterOff', offHeads.length, { token: last }) : t('explorer.after', { token: last })),
      el('thead', {}, el('tr', {}, head.map((h, k) => el('th', { scope: 'col', class: k === 3 ? 'bar' : null }, h)))),
      el('tbody', {}, rows)));
  }

  /** An encoder's guesses at each mask (model.fill), or how to write a mask when the text has none. */
  renderFill() {
    const c = this._c, r = c.results, t = this.t;
    const mask = c.info.maskToken;
    if (!r.fill || !r.fill.length) {
      this.nextBox.replaceChildren(el('p', { class: 'fill-hint', dataset: { testid: 'explorer-fill-hint' } },
        mask ? t('explorer.fillHint', { mask, example: maskedCourseSentence(mask) }) : t('explorer.cannotRead', { detail: 'no [MASK] or <mask> token' })));
      return;
    }
    const base = r.fillBaseline;
    const prob = (p) => this.prob(p);
    this.nextBox.replaceChildren(...r.fill.map((m, i) => {
      const before = new Set((base?.[i]?.top ?? []).map((n) => n.id));
      const head = ['#', t('explorer.fillWord'), t('explorer.probability'), el('span', { class: 'sr-only' }, t('explorer.bar'))];
      if (base) head.push(t('explorer.withAll'));
      return el('table', { class: 'matrix next', dataset: { testid: 'explorer-fill', position: String(m.position) } },
        el('caption', {}, t(c.ablate.length ? 'explorer.fillAtOff' : 'explorer.fillAt', { mask, position: m.position })),
        el('thead', {}, el('tr', {}, head.map((h, k) => el('th', { scope: 'col', class: k === 3 ? 'bar' : null }, h)))),
        el('tbody', {}, m.top.map((n, k) => el('tr', {},
          el('td', {}, String(k + 1)), el('td', { class: base && !before.has(n.id) ? 'tok new' : 'tok', dataset: { new: t('explorer.new') } }, el('bdi', {}, showToken(n.token))),
          el('td', { class: 'num' }, prob(n.probability)),
          el('td', { class: 'bar', 'aria-hidden': 'true' }, el('span', { class: 'barfill', style: { width: `${Math.max(0.5, 100 * n.probability)}%` } })),
          base ? el('td', { class: 'tok' }, el('bdi', {}, showToken(base[i].top[k].token)), ` ${prob(base[i].top[k].probability)}`) : null))));
    }));
  }

  renderLens() {
    const r = this._c.results;
    if (!r) return;
    // An encoder has no next token to read the layers through.
    this.lensPart.hidden = this._c.info?.kind === 'encoder';
    const T = r.tokens.length;
    if (this.lensSelect.options.length !== T || this._lensTokens !== r.tokens.join('\u0001')) {
      this._lensTokens = r.tokens.join('\u0001');
      this.lensSelect.replaceChildren(...r.tokens.map((t, i) => el('option', { value: String(i) }, `${i}: ${showToken(t)}`)));
      this.lensSelect.value = String(T - 1);
    }
    this.lensSelect.disabled = !r.lens;
    this.lensButton.hidden = Boolean(r.lens || r.lensNote);
    if (!r.lens) {
      this.lensStrip.replaceChildren();
      const i = this._c.info;
      setText(this.lensNote, (r.lensNoteKey && this.t(r.lensNoteKey)) || r.lensNote || this.t('explorer.lensWaits', { layers: i.numLayers, n: T, vocab: this.fmtInt(i.vocabSize) }));
      return;
    }
    const p = Number(this.lensSelect.value);
    this.lensStrip.replaceChildren(...r.lens.map((row) => {
      const top = row.positions[p]?.[0];
      return el('li', {}, el('span', { class: 'layer' }, this.t('explorer.afterLayer', { layer: row.layer + 1 })), el('span', { class: 'tok' }, showToken(top?.token)),
        el('span', { class: 'p' }, this.prob(top?.probability ?? NaN)));
    }));
    setText(this.lensNote, this.t(r.ablate?.length ? 'explorer.lensNoteOff' : 'explorer.lensNote', { p, token: showToken(r.tokens[p]) }));
  }

  scoresCSV() {
    const s = this._c.scores?.scores;
    if (!s) return null;
    const lines = ['layer,head,previous_token,duplicate_token,induction,first_token,enabled'];
    for (const q of s) lines.push([q.layer + 1, q.head + 1, q.previousToken, q.duplicateToken, q.induction, q.firstToken, this._c.headEnabled(q.layer, q.head) ? 1 : 0].join(','));
    return `${lines.join('\r\n')}\r\n`;
  }
}
