/**
 * <headlab-heads>: every head's attention heatmap side by side for a sequence
 * and a set of weights, and a lines view (thickness = weight) of the selected
 * head. Pointing at or focusing a query token highlights its row in every head.
 * Self-attention (T × T) and cross-attention (T_q × T_k: decoder queries over
 * encoder keys). Inputs: the course's worked example, a cross-attention toy,
 * a random untrained layer, a JSON file the learner or author supplies (checked
 * field by field), a JSON URL (`src`), or the `model` property (e.g. a model
 * trained on the page). Computation runs in a Web Worker when one can start.
 *
 * @attr {string} example        worked | cross | random; default worked
 * @attr {string} tokens         tokens of the random example, space- or "|"-separated
 * @attr {number} heads          heads of the random example; default 4
 * @attr {number} d-model        d_model of the random example; default 16
 * @attr {number} seed           seed of the random example's weights; default 1
 * @attr {number} selected-head  head shown in the lines view, from 1; default 1
 * @attr {boolean} causal        causal mask (self-attention only)
 * @attr {string} src            URL of a JSON model (same format as the file input)
 * @attr {boolean} hide-controls hides the source controls and toolbar
 * @attr {'light' | 'dark' | 'auto'} theme          light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 * @prop {object | null} model    a model object in the JSON format; setting it shows that model
 * @prop {'worker' | 'main-thread' | null} runsIn read-only: where its calculations run; null before the first
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ tokens: string[], queryTokens: string[], numHeads: number, weights: Float32Array }} headlab-change
 *   after every recompute (weights: [h, Tq, Tk] row-major)
 * @fires {{ message: string, errors?: string[] }} headlab-error  a model was rejected (errors: why, field by field),
 *   or the module did not load
 * @fires {{ query: number | null }} headlab-select  a query token was highlighted (from 0; null: none)
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart heatmap   each head's heatmap
 * @csspart lines     the lines view
 * @csspart tokens    the token strip
 * @csspart export    download menus
 * @csspart copy-link the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el, uid } from './shared/render/dom.js';
import { parseTokens } from '../lib/teach/format.js';
import { createHeatmap } from './shared/render/heatmap.js';
import { linesFigure, MAX_LINE_TOKENS } from './shared/render/lines.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { exportMenu, download } from './shared/render/export.js';
import { validateModel, parseModel, LIMITS } from '../lib/teach/model.js';
import { rows } from '../lib/teach/values.js';
import { headsDivide } from '../lib/teach/heads.js';
import { workedModel, crossModel, randomModel } from '../lib/teach/examples.js';
import { compute, computeNote, computeRunsIn } from './shared/worker/compute.js';
import messages from '../lib/i18n/catalogues/heads.js';
import modelMessages from '../lib/i18n/catalogues/model-file.js';
import { translator } from '../lib/i18n/index.js';

/** Tokens the random layer shows at most (its heatmaps are T × T). */
const MAX_TOKENS = 64;

const CSS = `
.sources { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: center; }
.random-opts { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; align-items: center; }
.random-opts input[type="text"] { width: min(100%, 22rem); }
.random-opts input[type="number"] { width: 5.5rem; }
.tokens { display: flex; flex-wrap: wrap; gap: 0.3rem; margin: 0.4rem 0; }
.token {
  font: inherit; font-size: 0.9rem; padding: 0.2rem 0.55rem; min-height: 2rem; border-radius: 999px;
  border: 1px solid var(--hl-border); background: var(--hl-surface); color: var(--hl-text); cursor: pointer;
  max-width: 14rem; overflow: hidden; text-overflow: ellipsis; white-space: pre;
}
.token[aria-pressed="true"], .token.is-hot { border-color: var(--hl-fig-highlight); box-shadow: inset 0 0 0 1px var(--hl-fig-highlight); font-weight: 700; }
.maps { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 15rem), 1fr)); gap: 1rem; }
.lines svg { max-width: 100%; height: auto; }
.head-pick { display: flex; flex-wrap: wrap; gap: 0.2rem 0.9rem; }
.info { font-size: 0.88rem; color: var(--hl-muted); }
.errors ul { margin: 0.3rem 0 0; padding-left: 1.2rem; }
input[type="file"] { font: inherit; font-size: 0.88rem; max-width: 100%; }
`;

export class HeadlabHeads extends HeadlabElement {
  static tag = 'headlab-heads';
  static stateKey = 'heads';
  static css = CSS;
  static messages = messages;
  static props = {
    example: { type: 'enum', values: ['worked', 'cross', 'random'], default: 'worked', state: true },
    tokens: { type: 'string', default: 'Virat hit the ball because it was full', state: true },
    heads: { type: 'int', default: 4, min: 1, max: 16, state: true },
    dModel: { attr: 'd-model', type: 'int', default: 16, min: 1, max: 256, state: true },
    seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, state: true },
    selectedHead: { attr: 'selected-head', type: 'int', default: 1, min: 1, max: 256, state: true },
    causal: { type: 'bool', default: false, state: true },
    src: { type: 'string', default: '' },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
  };

  /** Where its calculations run: 'worker' or 'main-thread', null before the first. Read-only. */
  get runsIn() { return computeRunsIn(); }

  /** A model object in the JSON format (see web/lib/teach/model.js). Setting it shows it. */
  get model() { return this._userModelInput ?? null; }
  set model(value) {
    this._userModelInput = value;
    this._source = value ? 'property' : null;
    this._fileName = null;
    this.requestUpdate();
  }

  build() {
    const t = this.t;
    // Kept when the element is built again in another language (relocalise), or set before it was built.
    this._source ??= null;      // null (use `example`), 'property', 'file', 'src'
    this._pinned = null;
    this._hover = null;
    this._job = 0;
    const id = uid('src');
    this.sourceSelect = el('select', { id },
      el('option', { value: 'worked' }, t('heads.source.worked')),
      el('option', { value: 'cross' }, t('heads.source.cross')),
      el('option', { value: 'random' }, t('heads.source.random')),
      el('option', { value: 'custom', hidden: true }, t('heads.source.custom')));
    this.sourceSelect.addEventListener('change', () => {
      if (this.sourceSelect.value === 'custom') return;
      this._source = null;
      this.example = this.sourceSelect.value;
      this.requestUpdate();
    });
    this.fileInput = el('input', { type: 'file', accept: '.json,application/json', id: uid('file'), dataset: { testid: 'model-file' } });
    this.fileInput.addEventListener('change', () => this.loadFile());

    this.tokensInput = el('input', { type: 'text', id: uid('tok'), spellcheck: 'false', autocomplete: 'off' });
    this.tokensInput.addEventListener('change', () => { this.tokens = this.tokensInput.value; });
    this.headsInput = el('input', { type: 'number', id: uid('h'), min: 1, max: 16, step: 1 });
    this.headsInput.addEventListener('change', () => { if (this.headsInput.valueAsNumber >= 1) this.heads = this.headsInput.valueAsNumber; });
    this.dModelSelect = el('select', { id: uid('d') }, [4, 8, 16, 32, 64, 128].map((d) => el('option', { value: String(d) }, String(d))));
    this.dModelSelect.addEventListener('change', () => { this.dModel = Number(this.dModelSelect.value); });
    this.reroll = el('button', { type: 'button', class: 'btn btn--small', on: { click: () => { this.seed = (this.seed % 100000) + 1; } } }, t('heads.reroll'));
    this.causalBox = el('input', { type: 'checkbox', id: uid('c') });
    this.causalBox.addEventListener('change', () => { this.causal = this.causalBox.checked; });

    this.randomOpts = el('div', { class: 'random-opts' },
      el('label', { for: this.tokensInput.id }, t('heads.tokens')), this.tokensInput,
      el('label', { for: this.headsInput.id }, t('heads.heads')), this.headsInput,
      el('label', { for: this.dModelSelect.id }, 'd', el('sub', {}, 'model')), this.dModelSelect,
      this.reroll);
    this.controls = el('div', {},
      el('div', { class: 'sources' }, el('label', { for: id }, t('heads.show')), this.sourceSelect),
      this.randomOpts,
      el('div', { class: 'sources' },
        el('label', { for: this.fileInput.id }, t('heads.loadFile')), this.fileInput),
      el('label', { class: 'check', for: this.causalBox.id }, this.causalBox, t('heads.causal')));
    this.toolbar = el('div', { class: 'toolbar' }, this.copyLink(),
      el('button', { type: 'button', class: 'btn', on: { click: () => this.downloadModel() } }, t('heads.save')));

    this.status = el('p', { class: 'status', role: 'status' });
    this.errorBox = el('div', { class: 'alert errors', role: 'alert', dataset: { testid: 'model-errors' } });
    this.info = el('p', { class: 'info', dataset: { testid: 'model-info' } });
    this.tokenStrip = el('div', { class: 'tokens', part: 'tokens', role: 'group', 'aria-label': t('heads.stripLabel') });
    this.maps = el('div', { class: 'maps' });
    this.headPick = el('div', { class: 'head-pick', role: 'radiogroup', 'aria-label': t('heads.pickLabel') });
    this.linesBox = el('div', { class: 'lines', part: 'lines' });
    this.linesNote = el('p', { class: 'small muted', 'aria-live': 'polite', dataset: { testid: 'lines-note' } });

    this.root.append(
      el('h2', {}, t('heads.title')),
      this.status, this.controls, this.toolbar, this.errorBox, this.info,
      el('h3', {}, t('heads.queryTokens')),
      el('p', { class: 'small muted explain' }, t('heads.queryExplain')),
      this.tokenStrip,
      el('h3', {}, t('heads.weightsTitle')),
      el('p', { class: 'small muted explain' }, t('heads.weightsExplain')),
      this.maps,
      el('h3', {}, t('heads.linesTitle')),
      this.headPick, this.linesNote, this.linesBox,
      exportMenu({ t, what: t('heads.linesWhat'), name: () => `lines-head-${this.selectedHead}`, figure: () => this._linesFig, json: () => this.selectedHeadJSON() }));
    this._renderedKey = null;
  }

  // ---------------------------------------------------------------- models

  async loadFile() {
    const file = this.fileInput.files?.[0];
    if (!file) return;
    const text = await file.text();
    const { model, errors } = parseModel(text, this.modelWords());
    if (!model) {
      this.showErrors(this.t('heads.fileNotLoaded', { name: file.name }), errors);
      return;
    }
    this._fileModel = model;
    this._fileName = file.name;
    this._source = 'file';
    this.requestUpdate();
  }

  async loadSrc(src) {
    this._srcLoaded = src;
    try {
      const response = await fetch(new URL(src, document.baseURI));
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const { model, errors } = parseModel(await response.text(), this.modelWords());
      if (!model) { this.showErrors(this.t('heads.srcNotLoaded', { src }), errors); return; }
      this._srcModel = model;
      this._source = 'src';
      this.requestUpdate();
    } catch (e) {
      this.showErrors(this.t('heads.srcNotFetched', { src, message: e.message }), location.protocol === 'file:'
        ? [this.t('heads.srcFromFile')] : []);
    }
  }

  showErrors(title, errors) {
    const list = errors.slice(0, 12);
    this.errorBox.replaceChildren(el('strong', {}, title), el('ul', {}, list.map((e) => el('li', {}, e))),
      errors.length > list.length ? el('p', {}, this.t('heads.more', { n: errors.length - list.length })) : '');
    this.emit('error', { message: title, errors });
  }

  /** The model to show, validated; null when there is none. */
  currentModel() {
    if (this._source === 'file' && this._fileModel) return this._fileModel;
    if (this._source === 'src' && this._srcModel) return this._srcModel;
    if (this._source === 'property' && this._userModelInput) {
      if (this._userModelInput !== this._validatedInput) {
        this._validatedInput = this._userModelInput;
        const { model, errors } = validateModel(this._userModelInput, this.modelWords());
        this._propertyModel = model;
        if (!model) this.showErrors(this.t('heads.propertyRejected'), errors);
      }
      return this._propertyModel;
    }
    const example = this.example;
    let raw;
    if (example === 'cross') raw = crossModel();
    else if (example === 'random') {
      let tokens = parseTokens(this.tokens).slice(0, MAX_TOKENS).map((token) => Array.from(token).slice(0, LIMITS.tokenLength).join(''));
      if (tokens.length === 0) tokens = parseTokens(HeadlabHeads.props.tokens.default);
      raw = randomModel({ tokens, dModel: this.dModel, numHeads: this.randomHeads(), seed: this.seed });
    } else raw = workedModel();
    const { model, errors } = validateModel(raw);
    if (!model) this.showErrors(this.t('heads.internalRejected'), errors);
    else this.nameExample(model, example);
    return model;
  }

  /** The model format's messages (web/lib/teach/model.js) in this element's language. */
  modelWords() {
    return translator(modelMessages, this.language);
  }

  /** Names a built-in example (and its heads) in the element's language. */
  nameExample(model, example) {
    const t = this.t;
    model.name = t(`heads.example.${example}`, { seed: this.seed });
    if (model.headNames && example !== 'random') model.headNames = model.headNames.map((_, h) => t(`heads.example.${example}.head${h + 1}`));
  }

  attributeProblems() {
    const out = super.attributeProblems();
    const t = this.t;
    if (this._source !== null || this.example !== 'random') return out;
    const n = parseTokens(this.tokens).length;
    if (n > MAX_TOKENS) out.push(t('heads.problem.tooMany', { n, max: MAX_TOKENS }));
    const long = parseTokens(this.tokens).slice(0, MAX_TOKENS).findIndex((token) => Array.from(token).length > LIMITS.tokenLength);
    if (long >= 0) out.push(t('heads.problem.tooLong', { i: long + 1, limit: LIMITS.tokenLength }));
    if (n === 0 && this.hasAttribute('tokens')) out.push(t('heads.problem.none'));
    const h = this.randomHeads();
    if (h !== this.heads) out.push(t('heads.problem.divide', { heads: this.heads, dModel: this.dModel, h }));
    return out;
  }

  /** The number of heads the random layer uses: the largest h ≤ heads that divides d-model (asked of the module, once loaded). */
  randomHeads() {
    if (!this.lab) return this.heads;
    const dModel = this.dModel;
    let heads = Math.min(this.heads, dModel);
    while (!headsDivide(this.lab, heads, dModel)) heads -= 1;
    return heads;
  }

  downloadModel() {
    const m = this._lastModel;
    if (!m) return;
    const hk = m.numHeads * m.dK, hv = m.numHeads * m.dV;
    const json = {
      name: m.name, tokens: m.tokens, X: rows(m.key, m.tokens.length, m.dModel),
      ...(m.cross ? { queryTokens: m.queryTokens, queryX: rows(m.query, m.queryTokens.length, m.dModel) } : {}),
      numHeads: m.numHeads, dK: m.dK, dV: m.dV,
      wQ: rows(m.wQ, m.dModel, hk), wK: rows(m.wK, m.dModel, hk), wV: rows(m.wV, m.dModel, hv), wO: rows(m.wO, hv, m.dModel),
      ...(m.headNames ? { headNames: m.headNames } : {}),
    };
    download(new Blob([`${JSON.stringify(json)}\n`], { type: 'application/json' }), 'headlab-model.json');
  }

  // ---------------------------------------------------------------- update

  update() {
    const src = this.src;
    if (src && src !== this._srcLoaded && !this._source) this.loadSrc(src);
    const custom = this._source !== null;
    this.sourceSelect.value = custom ? 'custom' : this.example;
    this.sourceSelect.querySelector('option[value="custom"]').hidden = !custom;
    this.sourceSelect.querySelector('option[value="custom"]').textContent = this._source === 'file' ? this.t('heads.source.file', { name: this._fileName })
      : this._source === 'src' ? this.t('heads.source.src') : this.t('heads.source.property');
    this.randomOpts.hidden = custom || this.example !== 'random';
    this.tokensInput.value = this.tokens;
    this.headsInput.value = String(this.heads);
    this.dModelSelect.value = String(this.dModel);
    this.causalBox.checked = this.causal;
    this.controls.hidden = this.hideControls;
    this.toolbar.hidden = this.hideControls;
    if (!this.lab) return;

    const model = this.currentModel();
    if (!model) return;
    const causal = (this.causal || model.causal) && !model.cross;
    this.causalBox.disabled = model.cross;
    const key = [model, causal].map((x) => (typeof x === 'object' ? this.objectId(x) : String(x))).join('|');
    if (key === this._renderedKey) {
      this.renderSelection();
      return;
    }
    this.run(model, causal, key);
  }

  objectId(obj) {
    if (!this._ids) { this._ids = new WeakMap(); this._nextId = 1; }
    if (!this._ids.has(obj)) this._ids.set(obj, this._nextId++);
    return this._ids.get(obj);
  }

  async run(model, causal, key) {
    const job = ++this._job;
    this.setAttribute('data-busy', '');
    this.status.textContent = this.t('heads.computing');
    const args = {
      query: model.query, key: model.cross ? model.key : undefined, dModel: model.dModel, numHeads: model.numHeads,
      dK: model.dK, dV: model.dV, wQ: model.wQ, wK: model.wK, wV: model.wV, wO: model.wO,
      bQ: model.bQ, bK: model.bK, bV: model.bV, bO: model.bO, causal, returnWeights: true,
    };
    for (const k of Object.keys(args)) if (args[k] === undefined) delete args[k];
    let result;
    const t0 = performance.now();
    try {
      result = await compute('multiHeadAttention', args);
    } catch (e) {
      if (job !== this._job) return;
      this.removeAttribute('data-busy');
      this.status.textContent = '';
      this.showErrors(this.t('heads.cannotCompute'), [e.message]);
      return;
    }
    if (job !== this._job) return;
    this.errorBox.replaceChildren();
    this._lastModel = model;
    this._weights = result.weights;
    this._renderedKey = key;
    this._causal = causal;
    this.renderModel(model, result);
    this.status.textContent = this.t('heads.computedIn', { ms: this.fmt(performance.now() - t0, 0), note: computeNote(this.t) });
    this.removeAttribute('data-busy');
    this.emit('change', { tokens: model.tokens, queryTokens: model.queryTokens, numHeads: model.numHeads, weights: result.weights });
  }

  renderModel(model, result) {
    const { queryTokens, tokens: keyTokens, numHeads } = model;
    const tQ = queryTokens.length, tK = keyTokens.length;
    const t = this.t;
    this.info.textContent = t('heads.info', {
      name: model.name, kind: model.cross ? t('heads.info.cross', { tQ, tK }) : t('heads.info.self', { tK }),
      dModel: model.dModel, h: numHeads, dK: model.dK, dV: model.dV, causal: this._causal ? t('heads.info.causal') : '', tQ, tK,
    });
    if (this._pinned !== null && this._pinned >= tQ) this._pinned = null;
    this._hover = null;

    this.tokenButtons = queryTokens.map((token, i) => {
      const b = el('button', { type: 'button', class: 'token', 'aria-pressed': String(this._pinned === i), dataset: { index: String(i) },
        title: token, 'aria-label': t('heads.tokenLabel', { i: i + 1, token }) }, token);
      b.addEventListener('mouseenter', () => this.setHover(i));
      b.addEventListener('mouseleave', () => this.setHover(null));
      b.addEventListener('focus', () => this.setHover(i));
      b.addEventListener('blur', () => this.setHover(null));
      b.addEventListener('click', () => {
        this._pinned = this._pinned === i ? null : i;
        this.renderSelection();
      });
      return b;
    });
    this.tokenStrip.replaceChildren(...this.tokenButtons);

    this.heatmaps = [];
    const maps = [];
    for (let h = 0; h < numHeads; h++) {
      const name = model.headNames?.[h];
      const hm = createHeatmap({
        title: name ? t('heads.headNamed', { h: h + 1, name }) : t('heads.head', { h: h + 1 }), rowLabels: queryTokens, colLabels: keyTokens,
        testid: `heads-weights-${h + 1}`, fileName: `head-${h + 1}-weights`, t,
        onHoverRow: (r) => this.setHover(r),
      });
      hm.update(result.weights, h * tQ * tK);
      hm.element.dataset.head = String(h + 1);
      this.heatmaps.push(hm);
      maps.push(hm.element);
    }
    this.maps.replaceChildren(...maps);

    if (this.selectedHead > numHeads) this.selectedHead = 1;
    const group = uid('hp');
    this.headRadios = Array.from({ length: numHeads }, (_, h) => {
      const radio = el('input', { type: 'radio', name: group, id: `${group}-${h}`, value: String(h + 1) });
      radio.addEventListener('change', () => { if (radio.checked) this.selectedHead = h + 1; });
      return el('label', { class: 'check', for: radio.id }, radio, t('heads.head', { h: h + 1 }));
    });
    this.headPick.replaceChildren(el('span', {}, t('heads.linesFor')), ...this.headRadios);
    this.renderSelection();
  }

  /** The selected head's weights with their tokens, for the lines view's JSON download. */
  selectedHeadJSON() {
    const m = this._lastModel;
    if (!m || !this._weights) return null;
    const head = Math.min(this.selectedHead, m.numHeads) - 1;
    const tQ = m.queryTokens.length, tK = m.tokens.length;
    const flat = this._weights.subarray(head * tQ * tK, (head + 1) * tQ * tK);
    return { head: head + 1, queryTokens: m.queryTokens, keyTokens: m.tokens,
      weights: Array.from({ length: tQ }, (_, i) => Array.from(flat.subarray(i * tK, (i + 1) * tK))) };
  }

  setHover(row) {
    this._hover = row;
    this.renderSelection();
    this.emit('select', { query: row ?? this._pinned });
  }

  /** Highlight in heatmaps, token strip and the lines view. */
  renderSelection() {
    const model = this._lastModel;
    if (!model || !this.heatmaps) return;
    const active = this._hover ?? this._pinned;
    this.heatmaps.forEach((hm) => hm.highlight(active));
    this.tokenButtons.forEach((b, i) => {
      b.setAttribute('aria-pressed', String(this._pinned === i));
      b.classList.toggle('is-hot', active === i);
    });
    const numHeads = model.numHeads;
    const head = Math.min(this.selectedHead, numHeads) - 1;
    this.headRadios.forEach((label, h) => { label.querySelector('input').checked = h === head; });
    const tQ = model.queryTokens.length, tK = model.tokens.length;
    if (Math.max(tQ, tK) > MAX_LINE_TOKENS) {
      this._linesFig = null;
      this.linesBox.replaceChildren();
      this.linesNote.textContent = this.t('heads.linesTooMany', { max: MAX_LINE_TOKENS, n: Math.max(tQ, tK) });
      return;
    }
    const weights = this._weights.subarray(head * tQ * tK, (head + 1) * tQ * tK);
    const name = model.headNames?.[head];
    const fig = linesFigure({ queryTokens: model.queryTokens, keyTokens: model.tokens, weights, highlight: active ?? -1,
      queryLabel: this.t('heatmap.query'), keyLabel: this.t('heatmap.key'),
      title: name ? this.t('heads.headNamed', { h: head + 1, name }) : this.t('heads.head', { h: head + 1 }), width: Math.min(640, Math.max(300, (this.linesBox.clientWidth || 520))) });
    this._linesFig = fig;
    let focusNote = '';
    if (active !== null && active !== undefined) {
      const row = Array.from(weights.subarray(active * tK, (active + 1) * tK));
      const best = row.indexOf(Math.max(...row));
      focusNote = this.t('heads.focus', { h: head + 1, query: model.queryTokens[active], weight: this.fmt(row[best]), key: model.tokens[best] });
    }
    const svg = asImage(figureToSVG(fig), fig, this.t('heads.linesLabel', { h: head + 1, focus: focusNote }));
    svg.addEventListener('pointermove', (event) => {
      const box = svg.getBoundingClientRect();
      const y = ((event.clientY - box.top) * fig.height) / box.height;
      const x = ((event.clientX - box.left) * fig.width) / box.width;
      if (x > fig.width / 2) return;
      let bestI = null, bestD = Infinity;
      for (let i = 0; i < tQ; i++) { const d = Math.abs(fig.rows.yq(i) - y); if (d < bestD) { bestD = d; bestI = i; } }
      if (bestD < fig.rows.row / 2 && bestI !== this._hover) this.setHover(bestI);
    });
    svg.addEventListener('pointerleave', () => { if (this._hover !== null) this.setHover(null); });
    this.linesBox.replaceChildren(svg);
    this.linesNote.textContent = focusNote;
  }

  getExtraState() { return {}; }
}
