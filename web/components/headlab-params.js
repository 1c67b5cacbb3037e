/**
 * <headlab-params>: the parameter budget of multi-head attention. Sliders for
 * d_model and h (starting at the original transformer's 512 and 8; the h slider
 * steps through the divisors of d_model, the number box takes any h) show
 * d_k = d_model / h, every projection matrix drawn to scale with one stripe per
 * head, and the counts 3·d_model² + d_model² = 4·d_model², which stay the same
 * for every h that divides d_model. An h that does not divide d_model shows why
 * instead of a number. Optional mode with d_k ≠ d_v. Counts come from the wasm
 * module (lab.parameterCount).
 *
 * @attr {number} d-model          model width; default 512
 * @attr {number} heads            number of heads h; default 8
 * @attr {boolean} split-dk-dv     choose d_k and d_v freely instead of d_model / h
 * @attr {number} d-k              per-head query/key width in split mode; default 64
 * @attr {number} d-v              per-head value width in split mode; default 64
 * @attr {boolean} bias            count the bias vectors too
 * @attr {boolean} hide-controls   hides presets and the copy-link toolbar
 * @attr {'light' | 'dark' | 'auto'} theme light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ dModel: number, heads: number, dK: number | null, dV: number | null, total: number | null }} headlab-change
 *   after every change (dK, dV and total null when h does not divide d_model)
 * @fires {{ message: string }} headlab-error  the WebAssembly module or the element's code did not load
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart drawing    the matrices drawn to scale
 * @csspart export     the download menu
 * @csspart copy-link  the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el } from './shared/render/dom.js';
import { tex, formulaCss } from './shared/render/typeset.js';
import { headsDivide } from '../lib/teach/heads.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { exportMenu, matrixCSV } from './shared/render/export.js';
import messages from '../lib/i18n/catalogues/params.js';

const PRESETS = [
  { label: 'original', dModel: 512, heads: 8 },
  { label: 'bert', dModel: 768, heads: 12 },
  { label: 'gpt3', dModel: 12288, heads: 96 },
];

const CSS = `
.controls { display: grid; gap: 0.2rem; }
.presets { display: flex; flex-wrap: wrap; gap: 0.4rem; margin: 0.3rem 0 0.6rem; }
.explain { font-size: 1rem; }
.explain strong { color: var(--hl-query); }
.counts td.num { min-width: 7em; }
.counts tr.total th, .counts tr.total td { font-weight: 700; border-top: 2px solid var(--hl-text); }
.big-total { font-size: 1.6rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.drawing svg { max-width: 100%; height: auto; }
.invariance td.num { min-width: 4em; }
.invariance tr.is-current th, .invariance tr.is-current td { background: var(--hl-accent-soft); font-weight: 700; }
`;

function divisors(n) {
  const out = [];
  for (let d = 1; d <= Math.sqrt(n); d++) {
    if (n % d === 0) { out.push(d); if (d * d !== n) out.push(n / d); }
  }
  return out.sort((a, b) => a - b);
}

export class HeadlabParams extends HeadlabElement {
  static tag = 'headlab-params';
  static stateKey = 'params';
  static css = formulaCss + CSS;
  static formulas = true;
  static messages = messages;
  static props = {
    dModel: { attr: 'd-model', type: 'int', default: 512, min: 1, max: 65536, state: true },
    heads: { type: 'int', default: 8, min: 1, max: 4096, state: true },
    splitDkDv: { attr: 'split-dk-dv', type: 'bool', default: false, state: true },
    dK: { attr: 'd-k', type: 'int', default: 64, min: 1, max: 65536, state: true },
    dV: { attr: 'd-v', type: 'int', default: 64, min: 1, max: 65536, state: true },
    bias: { type: 'bool', default: false, state: true },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
  };

  build() {
    const t = this.t;
    const range = (id, min, max, step, label) => el('input', { type: 'range', id, min, max, step, 'aria-label': label });
    const number = (id, min, max, label) => el('input', { type: 'number', id, min, max, step: 1, class: 'num-input', inputmode: 'numeric', 'aria-label': label });
    this.dModelRange = range('d-model-range', 8, 2048, 8, t('params.dModelSlider'));
    this.dModelInput = number('d-model', 1, 65536, 'd_model');
    // The h slider moves through the divisors of d_model (its value is an index into them), so
    // dragging it always shows a count; the number box next to it takes any h and explains a misfit.
    this.headsRange = range('heads-range', 0, 0, 1, t('params.headsSlider'));
    this.headsInput = number('heads', 1, 4096, t('params.headsBox'));
    this.dKRange = range('d-k-range', 1, 1024, 1, t('params.dKSlider'));
    this.dKInput = number('d-k', 1, 65536, 'd_k');
    this.dVRange = range('d-v-range', 1, 1024, 1, t('params.dVSlider'));
    this.dVInput = number('d-v', 1, 65536, 'd_v');
    this.splitBox = el('input', { type: 'checkbox', id: 'split' });
    this.biasBox = el('input', { type: 'checkbox', id: 'bias' });

    const link = (rangeEl, inputEl, prop) => {
      rangeEl.addEventListener('input', () => { this[prop] = rangeEl.valueAsNumber; });
      inputEl.addEventListener('input', () => { if (Number.isFinite(inputEl.valueAsNumber) && inputEl.valueAsNumber >= 1) this[prop] = Math.round(inputEl.valueAsNumber); });
    };
    link(this.dModelRange, this.dModelInput, 'dModel');
    this.headsRange.addEventListener('input', () => {
      const h = this._headChoices?.[this.headsRange.valueAsNumber];
      if (h) this.heads = h;
    });
    this.headsInput.addEventListener('input', () => {
      const v = this.headsInput.valueAsNumber;
      if (Number.isFinite(v) && v >= 1) this.heads = Math.round(v);
    });
    link(this.dKRange, this.dKInput, 'dK');
    link(this.dVRange, this.dVInput, 'dV');
    this.splitBox.addEventListener('change', () => { this.splitDkDv = this.splitBox.checked; });
    this.biasBox.addEventListener('change', () => { this.bias = this.biasBox.checked; });

    const labelled = (text, rangeEl, inputEl) => {
      const lab = el('label', { for: inputEl.id }, text);
      return el('div', { class: 'field' }, lab, rangeEl, inputEl);
    };
    this.splitFields = el('div', {},
      labelled(tex('d_k'), this.dKRange, this.dKInput),
      labelled(tex('d_v'), this.dVRange, this.dVInput));
    this.presets = el('div', { class: 'presets', role: 'group', 'aria-label': t('params.presets') },
      PRESETS.map((p) => el('button', {
        type: 'button', class: 'btn btn--small',
        on: { click: () => { this.splitDkDv = false; this.dModel = p.dModel; this.heads = p.heads; } },
      }, `${t(`params.preset.${p.label}`)}: ${p.dModel} / ${p.heads}`)));
    this.toolbar = el('div', { class: 'toolbar' }, this.copyLink());

    this.status = el('p', { class: 'status', role: 'status' });
    this.dkLine = el('div', { class: 'formula', dataset: { testid: 'params-dk' } });
    this.explanation = el('div', { class: 'note note--warn explain', role: 'alert', hidden: true, dataset: { testid: 'params-explanation' } });
    this.totalLine = el('p', { 'aria-live': 'polite' });
    this.drawing = el('div', { class: 'drawing', part: 'drawing' });
    this.countsBox = el('div', { class: 'table-scroll' });
    this.formulaBox = el('div', { class: 'formula' });
    this.invariance = el('div', { class: 'table-scroll' });
    this.results = el('div', {},
      this.totalLine, this.formulaBox,
      el('h3', {}, t('params.drawnTitle')),
      el('p', { class: 'small muted explain' }, t.parts('params.drawnExplain', {
        WQ: () => ['W', el('sup', {}, 'Q')], WK: () => ['W', el('sup', {}, 'K')], WV: () => ['W', el('sup', {}, 'V')], WO: () => ['W', el('sup', {}, 'O')] })),
      this.drawing,
      exportMenu({ t, what: t('params.exportWhat'), name: () => `params-dmodel-${this.dModel}-h-${this.heads}`, figure: () => this._figure,
        json: () => this._counts, csv: () => this._counts && matrixCSV({ corner: 'matrix', rowLabels: ['wQ', 'wK', 'wV', 'wO', 'bias', 'total'], colLabels: ['parameters'],
          values: ['wQ', 'wK', 'wV', 'wO', 'bias', 'total'].map((k) => [this._counts[k]]) }) }),
      el('h3', {}, t('params.countTitle')), this.countsBox,
      // Closed at first: it answers the page's "check yourself" question.
      el('details', { class: 'invariance-box', dataset: { testid: 'params-invariance-box' } },
        el('summary', {}, el('strong', {}, t('params.invarianceSummary')), t('params.invarianceOpen')), this.invariance));

    this.root.append(
      el('h2', {}, t('params.title')),
      this.status,
      el('div', { class: 'controls' },
        labelled(tex('d_{\\text{model}}'), this.dModelRange, this.dModelInput),
        labelled(el('span', {}, t('params.heads'), tex('h')), this.headsRange, this.headsInput),
        el('label', { class: 'check', for: 'bias' }, this.biasBox, t('params.bias')),
        el('label', { class: 'check', for: 'split' }, this.splitBox, t.parts('params.split', { dk: () => tex('d_k'), dv: () => tex('d_v'), ratio: () => tex('d_{\\text{model}}/h') })),
        this.splitFields),
      this.presets, this.toolbar, this.dkLine, this.explanation, this.results);

    this.onResize(() => this.requestUpdate());
  }

  update() {
    const t = this.t;
    const fmtInt = (n) => this.fmtInt(n);
    const dModel = this.dModel, heads = this.heads, split = this.splitDkDv;
    const setPair = (r, i, v) => { r.value = String(v); if (i.valueAsNumber !== v) i.value = String(v); };
    setPair(this.dModelRange, this.dModelInput, dModel);
    this.setHeadsSlider(dModel, heads);
    if (this.headsInput.valueAsNumber !== heads) this.headsInput.value = String(heads);
    setPair(this.dKRange, this.dKInput, this.dK);
    setPair(this.dVRange, this.dVInput, this.dV);
    this.splitBox.checked = split;
    this.biasBox.checked = this.bias;
    this.splitFields.hidden = !split;
    this.presets.hidden = this.hideControls;
    this.toolbar.hidden = this.hideControls;
    if (!this.lab) return;

    const divides = headsDivide(this.lab, heads, dModel);
    if (!split && !divides) {
      this.showNotDivisible(dModel, heads);
      this.emit('change', { dModel, heads, dK: null, dV: null, total: null });
      return;
    }
    const dK = split ? this.dK : dModel / heads;
    const dV = split ? this.dV : dModel / heads;
    let counts;
    try {
      counts = this.lab.parameterCount({ dModel, numHeads: heads, dK, dV, bias: this.bias });
    } catch (e) {
      if (/divide/.test(e.message)) this.showNotDivisible(dModel, heads, e.message);
      else this.showRefused(dModel, heads, dK, dV, e.message);
      this.emit('change', { dModel, heads, dK: null, dV: null, total: null });
      return;
    }
    this.explanation.hidden = true;
    this.explanation.replaceChildren();
    this.results.hidden = false;
    this.dkLine.replaceChildren(split
      ? tex(`d_k = ${dK},\\quad d_v = ${dV},\\quad h\\,d_k = ${fmtInt(heads * dK)},\\quad h\\,d_v = ${fmtInt(heads * dV)}`, { display: true })
      : tex(`d_k = d_v = \\frac{d_{\\text{model}}}{h} = \\frac{${dModel}}{${heads}} = ${dK}`, { display: true }));
    this.status.textContent = t('params.status', { version: this.lab.info().version });

    this.totalLine.replaceChildren(t('params.total'), el('span', { class: 'big-total', dataset: { testid: 'params-total' } }, fmtInt(counts.total)),
      t('params.parameters'), this.bias ? t('params.withBias', { weights: fmtInt(counts.weights), bias: fmtInt(counts.bias) }) : '',
      !split ? el('span', { class: 'muted' }, t('params.whatever', { dModel: fmtInt(dModel), bias: this.bias ? ` + 4 × ${fmtInt(dModel)}` : '' })) : '');
    this.formulaBox.replaceChildren(...[].concat(split
      ? tex(`\\underbrace{2\\,h\\,d_k\\,d_{\\text{model}}}_{W^Q,\\,W^K} + \\underbrace{2\\,h\\,d_v\\,d_{\\text{model}}}_{W^V,\\,W^O} = ${fmtInt(counts.weights).replace(/,/g, '{,}')}`, { display: true })
      : [tex('\\underbrace{3\\,d_{\\text{model}}^2}_{W^Q,\\,W^K,\\,W^V} + \\underbrace{d_{\\text{model}}^2}_{W^O} = 4\\,d_{\\text{model}}^2', { display: true }),
        tex(`4 \\cdot ${dModel}^2 = ${fmtInt(counts.weights).replace(/,/g, '{,}')}`, { display: true })]));

    this._counts = { dModel, heads, dK, dV, ...counts };
    this.drawMatrices(dModel, heads, dK, dV);
    this.fillCounts(counts, dModel, heads, dK, dV);
    this.fillInvariance(dModel, heads, split);
    this.emit('change', { dModel, heads, dK, dV, total: counts.total });
  }

  /** The h slider's stops: the divisors of d_model (up to the largest h the element takes). */
  setHeadsSlider(dModel, heads) {
    if (this._headChoicesFor !== dModel) {
      this._headChoicesFor = dModel;
      this._headChoices = divisors(dModel).filter((d) => d <= HeadlabParams.props.heads.max);
      this.headsRange.max = String(this._headChoices.length - 1);
    }
    const choices = this._headChoices;
    // An h that does not divide d_model (typed in the box) puts the slider at the nearest divisor below it.
    let at = choices.length - 1;
    while (at > 0 && choices[at] > heads) at -= 1;
    this.headsRange.value = String(at);
    this.headsRange.setAttribute('aria-valuetext', `h = ${choices[at]}`);
  }

  showNotDivisible(dModel, heads, apiMessage) {
    const t = this.t;
    this.results.hidden = true;
    // Inside TeX a decimal comma needs braces, or it is spaced as punctuation.
    this.dkLine.replaceChildren(tex(`\\frac{d_{\\text{model}}}{h} = \\frac{${dModel}}{${heads}} = ${this.fmt(dModel / heads, 2).replace(',', '{,}')}\\ \\text{— ${t('params.notWhole')}}`, { display: true }));
    const ds = divisors(dModel);
    const below = ds.filter((d) => d < heads).pop();
    const above = ds.find((d) => d > heads);
    const jump = (h) => el('button', { type: 'button', class: 'btn btn--small', on: { click: () => { this.heads = h; } } }, t('params.jump', { h, dK: dModel / h }));
    this.explanation.replaceChildren(
      el('p', {}, el('strong', {}, t('params.noCount', { heads, dModel }))),
      el('p', {}, t.parts('params.whyNot', { dModel, heads, ratio: this.fmt(dModel / heads, 2), WO: () => ['W', el('sup', {}, 'O')] })),
      apiMessage ? el('p', { class: 'small muted' }, t('params.apiSays', { message: apiMessage })) : '',
      el('div', { class: 'toolbar' }, el('span', {}, t('params.nearest')), below ? jump(below) : null, above ? jump(above) : null));
    this.explanation.hidden = false;
    this.status.textContent = '';
  }

  /** The module would not count these sizes (a count beyond 2^53, exact in no JS number): say so, in its words. */
  showRefused(dModel, heads, dK, dV, apiMessage) {
    this.results.hidden = true;
    this.dkLine.replaceChildren();
    const t = this.t;
    this.explanation.replaceChildren(
      el('p', {}, el('strong', {}, t('params.refused', { dModel: this.fmtInt(dModel), heads, dK: this.fmtInt(dK), dV: this.fmtInt(dV) }))),
      el('p', {}, t('params.refusedWhy')),
      el('p', { class: 'small muted' }, t('params.apiSays', { message: apiMessage })));
    this.explanation.hidden = false;
    this.status.textContent = '';
  }

  drawMatrices(dModel, heads, dK, dV) {
    this.noteWidth();
    const mats = [
      { name: 'W', sup: 'Q', rows: dModel, cols: heads * dK, split: 'cols' },
      { name: 'W', sup: 'K', rows: dModel, cols: heads * dK, split: 'cols' },
      { name: 'W', sup: 'V', rows: dModel, cols: heads * dV, split: 'cols' },
      { name: 'W', sup: 'O', rows: heads * dV, cols: dModel, split: 'rows' },
    ];
    const width = this.drawing.clientWidth || this.getBoundingClientRect().width || 600;
    const perRow = width < 520 ? 2 : 4;
    const box = perRow === 2 ? 130 : 150;
    const big = Math.max(...mats.map((m) => Math.max(m.rows, m.cols)));
    const u = box / big;
    const gap = 34, top = 40;
    const cellW = box + gap;
    const shapes = [];
    const palette = ['#586c9c', '#76d17a'];  // #3b528b and #5ec962 at 85 % over white, opaque
    mats.forEach((m, i) => {
      const col = i % perRow, row = Math.floor(i / perRow);
      const x0 = 10 + col * cellW;
      const y0 = top + row * (box + top + 26);
      const w = m.cols * u, h = m.rows * u;
      shapes.push({ type: 'text', x: x0, y: y0 - 26, text: m.name, size: 15, weight: 700, fill: { role: 'text' } });
      shapes.push({ type: 'text', x: x0 + 15, y: y0 - 32, text: m.sup, size: 10, weight: 700, fill: { role: 'text' } });
      shapes.push({ type: 'text', x: x0, y: y0 - 10, text: `${this.fmtInt(m.rows)} × ${this.fmtInt(m.cols)}`, size: 11, fill: { role: 'muted' } });
      // One opaque rect in the first colour, then every second stripe on top: adjacent
      // translucent stripes at fractional edges let the page show through as hairlines (WebKit).
      const stripes = Math.min(heads, 256);
      shapes.push({ type: 'rect', x: x0, y: y0, w, h, fill: palette[0] });
      for (let s = 1; s < stripes; s += 2) {
        const frac0 = s / stripes, frac1 = (s + 1) / stripes;
        const rect = m.split === 'cols'
          ? { x: x0 + frac0 * w, y: y0, w: (frac1 - frac0) * w, h }
          : { x: x0, y: y0 + frac0 * h, w, h: (frac1 - frac0) * h };
        shapes.push({ type: 'rect', ...rect, fill: palette[1] });
      }
      shapes.push({ type: 'rect', x: x0, y: y0, w, h, fill: 'none', stroke: { role: 'text' }, strokeWidth: 1 });
    });
    const rowsUsed = Math.ceil(mats.length / perRow);
    const fig = {
      width: 10 + perRow * cellW,
      height: top + rowsUsed * (box + top + 26) - top + 24,
      shapes,
    };
    shapes.push({ type: 'text', x: 10, y: fig.height - 10, text: this.t.plural('params.stripes', heads), size: 11, fill: { role: 'muted' } });
    this._figure = fig;
    this.drawing.replaceChildren(asImage(figureToSVG(fig), fig,
      this.t('params.figureLabel', { dModel, hdK: heads * dK, hdV: heads * dV, heads })));
  }

  fillCounts(counts, dModel, heads, dK, dV) {
    const t = this.t;
    const row = (name, shape, n, cls) => el('tr', { class: cls }, el('th', { scope: 'row' }, name), el('td', {}, shape), el('td', { class: 'num' }, this.fmtInt(n)));
    const w = (sup, note) => el('span', {}, 'W', el('sup', {}, sup), note ? el('span', { class: 'muted' }, note) : null);
    const table = el('table', { class: 'matrix counts', dataset: { testid: 'params-counts' } },
      el('caption', {}, t('params.countsCaption')),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('params.col.matrix')), el('th', { scope: 'col' }, t('params.col.shape')), el('th', { scope: 'col' }, t('params.col.parameters')))),
      el('tbody', {},
        row(w('Q', t('params.allHeads')), `${dModel} × ${heads}·${dK}`, counts.wQ),
        row(w('K', t('params.allHeads')), `${dModel} × ${heads}·${dK}`, counts.wK),
        row(w('V', t('params.allHeads')), `${dModel} × ${heads}·${dV}`, counts.wV),
        row(w('O'), `${heads}·${dV} × ${dModel}`, counts.wO),
        this.bias ? row(t('params.biases'), `2·${heads}·${dK} + ${heads}·${dV} + ${dModel}`, counts.bias) : null,
        row(t('params.totalRow'), this.splitDkDv ? '' : `4 × ${dModel}²`, counts.total, 'total')));
    this.countsBox.replaceChildren(table);
  }

  fillInvariance(dModel, heads, split) {
    if (split) {
      this.invariance.replaceChildren(el('p', { class: 'muted' }, this.t('params.splitNote')));
      return;
    }
    const ds = divisors(dModel);
    let pick = ds.filter((d) => d <= 128);
    if (pick.length > 8) {
      const i = Math.max(0, pick.indexOf(heads));
      const start = Math.max(0, Math.min(pick.length - 8, i - 3));
      pick = pick.slice(start, start + 8);
    }
    if (!pick.includes(heads)) pick.push(heads);
    pick.sort((a, b) => a - b);
    const rows = pick.map((h) => {
      const c = this.lab.parameterCount({ dModel, numHeads: h, bias: this.bias });
      return el('tr', { class: h === heads ? 'is-current' : undefined },
        el('th', { scope: 'row' }, String(h)), el('td', { class: 'num' }, String(dModel / h)), el('td', { class: 'num' }, this.fmtInt(c.total)));
    });
    this.invariance.replaceChildren(el('table', { class: 'matrix invariance', dataset: { testid: 'params-invariance' } },
      el('caption', {}, this.t('params.invarianceCaption', { dModel })),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'h'), el('th', { scope: 'col' }, 'd_k'), el('th', { scope: 'col' }, this.t('params.col.total')))),
      el('tbody', {}, rows)));
  }
}
