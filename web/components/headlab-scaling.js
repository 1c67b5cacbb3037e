/**
 * <headlab-scaling>: why attention divides by √d_k. Queries and keys with
 * independent N(0, 1) entries are drawn in the wasm module; the element shows
 * the histogram of their dot products with and without the scaling, the
 * histogram of the resulting softmax weights, one query's weights sorted, and
 * live statistics (variance, mean row entropy, mean largest weight). A sweep
 * over d_k shows the unscaled softmax saturating toward one-hot as d_k grows.
 * All computation runs in a Web Worker when one can start.
 *
 * @attr {number} d-k            the dimension of queries and keys; default 64 (a power of 2 from 1 to 4096)
 * @attr {number} keys           keys per query (the softmax's length); default 64
 * @attr {number} seed           random seed; default 1
 * @attr {boolean} hide-controls hides the toolbar
 * @attr {'light' | 'dark' | 'auto'} theme          light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * @prop {'worker' | 'main-thread' | null} runsIn read-only: where its calculations run; null before the first
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ dK: number, varianceRaw: number, varianceScaled: number, entropyScaled: number, entropyUnscaled: number,
 *   maxWeightScaled: number, maxWeightUnscaled: number }} headlab-change  after every recompute
 * @fires {{ message: string }} headlab-error  the WebAssembly module or the element's code did not load
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart chart      each chart
 * @csspart export     download menus
 * @csspart copy-link  the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el } from './shared/render/dom.js';
import { tex, formulaCss } from './shared/render/typeset.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { exportMenu, matrixCSV } from './shared/render/export.js';
import { compute, computeNote, computeRunsIn } from './shared/worker/compute.js';
import { histogramsFigure, barsFigure, lineChartFigure, SERIES } from './shared/render/charts.js';
import messages from '../lib/i18n/catalogues/scaling.js';

const NUM_QUERIES = 256;
const SWEEP = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

const CSS = `
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 13rem), 1fr)); gap: 0.6rem; margin: 0.6rem 0; }
.stat { background: var(--hl-surface); border: 1px solid var(--hl-border); border-radius: 8px; padding: 0.5rem 0.7rem; }
.stat .label { font-size: 0.82rem; color: var(--hl-muted); }
.stat .pair { display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; font-variant-numeric: tabular-nums; }
.stat .v { font-size: 1.15rem; font-weight: 700; }
.stat .scaled { color: var(--hl-head-1); }
.stat .unscaled { color: var(--hl-head-2); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); gap: 1rem; }
.chart svg { max-width: 100%; height: auto; }
.chart h3 { font-size: 0.98rem; margin-top: 0.4rem; }
.sweep td.num { min-width: 4em; }
`;

export class HeadlabScaling extends HeadlabElement {
  static tag = 'headlab-scaling';
  static stateKey = 'scaling';
  static css = formulaCss + CSS;
  static formulas = true;
  static messages = messages;
  static props = {
    dK: { attr: 'd-k', type: 'int', default: 64, min: 1, max: 4096, state: true },
    keys: { type: 'int', default: 64, min: 2, max: 1024, state: true },
    seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, state: true },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
  };

  /** Where its calculations run: 'worker' or 'main-thread', null before the first. Read-only. */
  get runsIn() { return computeRunsIn(); }

  build() {
    const t = this.t;
    this._job = 0;
    // Its visible label is typeset maths (KaTeX), which gives no accessible name: name it here.
    this.slider = el('input', { type: 'range', id: 'dk', min: 0, max: SWEEP.length - 1, step: 1, 'aria-label': t('scaling.sliderLabel') });
    this.slider.addEventListener('input', () => { this.dK = SWEEP[this.slider.valueAsNumber]; });
    this.dkOut = el('output', { for: 'dk', class: 'value', dataset: { testid: 'scaling-dk' } });
    this.keysSelect = el('select', { id: 'keys' }, [8, 16, 64, 256].map((n) => el('option', { value: String(n) }, String(n))));
    this.keysSelect.addEventListener('change', () => { this.keys = Number(this.keysSelect.value); });
    this.reroll = el('button', { type: 'button', class: 'btn btn--small', on: { click: () => { this.seed = (this.seed % 100000) + 1; } } }, t('scaling.reroll'));
    this.toolbar = el('div', { class: 'toolbar' }, this.reroll, this.copyLink());
    this.status = el('p', { class: 'status', role: 'status' });
    this.stats = el('div', { class: 'stats', 'aria-live': 'polite', dataset: { testid: 'scaling-stats' } });
    const chart = (title, note, name) => {
      const box = el('div', { class: 'chart__figure' });
      const holder = { box, fig: null };
      const section = el('div', { class: 'chart', part: 'chart' }, el('h3', {}, title), note ? el('p', { class: 'small muted explain' }, note) : null, box,
        exportMenu({ t, what: title, name: () => `${name}-dk-${this.dK}`, figure: () => holder.fig, json: () => this._data && this.jsonOf(name), csv: () => this._data && this.csvOf(name) }));
      holder.section = section;
      return holder;
    };
    this.dotChart = chart(t('scaling.dots.title'), t('scaling.dots.note'), 'scores');
    this.weightChart = chart(t('scaling.weights.title'), t('scaling.weights.note'), 'weights');
    this.rowChart = chart(t('scaling.row.title'), t('scaling.row.note'), 'one-query');
    this.sweepChart = chart(t('scaling.sweep.title'), t('scaling.sweep.note'), 'sweep');
    this.sweepTable = el('div', { class: 'table-scroll' });
    this.root.append(
      el('h2', {}, t('scaling.title'), el('sub', {}, 'k')),
      this.status,
      el('div', { class: 'field' }, el('label', { for: 'dk' }, tex('d_k')), this.slider, this.dkOut),
      el('div', { class: 'field' }, el('label', { for: 'keys' }, t('scaling.keys')), this.keysSelect),
      this.toolbar,
      // Two halves that sit side by side where there is room and one above the other on a phone.
      el('div', { class: 'formula formula--wrap' },
        tex('\\operatorname{Var}(q\\cdot k) = \\sum_{i=1}^{d_k} \\operatorname{Var}(q_i k_i) = d_k', { display: true }),
        tex('\\Longrightarrow\\quad \\operatorname{Var}\\!\\left(\\frac{q\\cdot k}{\\sqrt{d_k}}\\right) = 1', { display: true })),
      this.stats,
      el('div', { class: 'charts' }, this.dotChart.section, this.weightChart.section, this.rowChart.section, this.sweepChart.section),
      el('details', {}, el('summary', {}, t('scaling.sweepTable')), this.sweepTable));
    this.onResize(() => { if (this._data) this.render(this._data.r, this._data.dK, this._data.keys, this._sweep); });
  }

  update() {
    const dK = SWEEP.includes(this.dK) ? this.dK : SWEEP.reduce((a, b) => (Math.abs(b - this.dK) < Math.abs(a - this.dK) ? b : a));
    this.slider.value = String(SWEEP.indexOf(dK));
    this.slider.setAttribute('aria-valuetext', `d_k = ${dK}`);
    this.dkOut.textContent = String(dK);
    this.keysSelect.value = String(this.keys);
    if (![...this.keysSelect.options].some((o) => o.value === String(this.keys))) {
      this.keysSelect.append(el('option', { value: String(this.keys) }, String(this.keys)));
      this.keysSelect.value = String(this.keys);
    }
    this.toolbar.hidden = this.hideControls;
    if (!this.lab) return;
    this.run(dK);
  }

  async run(dK) {
    const job = ++this._job;
    const keys = this.keys, seed = this.seed;
    this.setAttribute('data-busy', '');
    const t = this.t;
    this.status.textContent = t('scaling.computing');
    try {
      const sweepKey = `${keys}|${seed}`;
      const [r, sweep] = await Promise.all([
        compute('scalingExperiment', { dK, numQueries: NUM_QUERIES, numKeys: keys, seed }),
        this._sweepKey === sweepKey ? this._sweep : this.runSweep(keys, seed),
      ]);
      if (job !== this._job) return;
      this._sweepKey = sweepKey;
      this._sweep = sweep;
      this._data = { r, dK, keys };
      this.render(r, dK, keys, sweep);
      this.status.textContent = t('scaling.status', { queries: NUM_QUERIES, keys, note: computeNote(t) });
      this.emit('change', {
        dK, varianceRaw: r.varianceRaw, varianceScaled: r.varianceScaled, entropyScaled: r.entropyScaled,
        entropyUnscaled: r.entropyUnscaled, maxWeightScaled: r.maxWeightScaled, maxWeightUnscaled: r.maxWeightUnscaled,
      });
    } catch (e) {
      if (job !== this._job) return;
      this.status.textContent = '';
      this.stats.replaceChildren(el('div', { class: 'alert', role: 'alert' }, t('element.experimentFailed', { message: e.message })));
    } finally {
      if (job === this._job) this.removeAttribute('data-busy');
    }
  }

  async runSweep(keys, seed) {
    const out = [];
    for (const d of SWEEP) {
      const r = await compute('scalingExperiment', { dK: d, numQueries: 64, numKeys: keys, seed });
      out.push({
        dK: d, entropyScaled: r.entropyScaled, entropyUnscaled: r.entropyUnscaled,
        maxWeightScaled: r.maxWeightScaled, maxWeightUnscaled: r.maxWeightUnscaled,
      });
    }
    return out;
  }

  draw(holder, fig, label) {
    holder.fig = fig;
    holder.box.replaceChildren(asImage(figureToSVG(fig), fig, label));
  }

  render(r, dK, keys, sweep) {
    const t = this.t, lang = t.lang;
    const fmt = (v, d) => this.fmt(v, d);
    const sqrt = Math.sqrt(dK);
    this.noteWidth();
    const width = Math.max(300, Math.min(560, this.dotChart.box.clientWidth || 520));
    const stat = (label, scaled, unscaled, testid, note) => el('div', { class: 'stat', dataset: { testid } },
      el('div', { class: 'label' }, label),
      el('div', { class: 'pair' },
        el('span', {}, t('scaling.scaled'), el('span', { class: 'v scaled' }, scaled)),
        unscaled !== null ? el('span', {}, t('scaling.unscaled'), el('span', { class: 'v unscaled' }, unscaled)) : null),
      note ? el('div', { class: 'small muted' }, note) : null);
    const lnK = Math.log(keys);
    this.stats.replaceChildren(
      stat(t('scaling.stat.variance'), fmt(r.varianceScaled, 2), fmt(r.varianceRaw, 2), 'stat-variance', t('scaling.stat.varianceNote', { dK })),
      stat(t('scaling.stat.entropy'), fmt(r.entropyScaled, 3), fmt(r.entropyUnscaled, 3), 'stat-entropy', t('scaling.stat.entropyNote', { keys, lnK: fmt(lnK, 3) })),
      stat(t('scaling.stat.max'), fmt(r.maxWeightScaled, 3), fmt(r.maxWeightUnscaled, 3), 'stat-max', t('scaling.stat.maxNote')));

    const dots = r.dotProducts;
    const scaled = dots.map((v) => v / sqrt);
    let spread = 0;
    for (let i = 0; i < dots.length; i++) spread = Math.max(spread, Math.abs(dots[i]));
    const lim = Math.max(4, spread);
    this.draw(this.dotChart, histogramsFigure({
      series: [
        { label: t('scaling.withFormula'), values: scaled, color: SERIES[0].color },
        { label: t('scaling.withoutFormula'), values: dots, color: SERIES[1].color },
      ],
      lo: -lim, hi: lim, bins: width < 400 ? 32 : 48, xLabel: t('scaling.score'), width, lang,
    }), t('scaling.dots.label', { dK, scaled: fmt(r.varianceScaled, 2), raw: fmt(r.varianceRaw, 2) }));

    this.draw(this.weightChart, histogramsFigure({
      series: [
        { label: t('scaling.with'), values: r.weightsScaled, color: SERIES[0].color },
        { label: t('scaling.without'), values: r.weightsUnscaled, color: SERIES[1].color },
      ],
      lo: 0, hi: 1, bins: width < 400 ? 25 : 40, log: true, xLabel: t('scaling.softmaxWeight'), width, lang, logLabel: t('chart.logCount'),
    }), t('scaling.weights.label', { dK }));

    const shown = Math.min(keys, 16);
    const row = (w) => Array.from(w.subarray(0, keys)).sort((a, b) => b - a).slice(0, shown);
    this.draw(this.rowChart, barsFigure({
      series: [
        { label: t('scaling.with'), values: row(r.weightsScaled), color: SERIES[0].color },
        { label: t('scaling.without'), values: row(r.weightsUnscaled), color: SERIES[1].color },
      ],
      max: 1, xLabel: t('scaling.row.x', { shown, keys }), yLabel: t('scaling.weight'), width, lang,
    }), t('scaling.row.label', { scaled: fmt(row(r.weightsScaled)[0], 3), unscaled: fmt(row(r.weightsUnscaled)[0], 3) }));

    this.draw(this.sweepChart, lineChartFigure({
      series: [
        { label: t('scaling.with'), points: sweep.map((s) => [s.dK, s.entropyScaled]), color: SERIES[0].color },
        { label: t('scaling.without'), points: sweep.map((s) => [s.dK, s.entropyUnscaled]), color: SERIES[1].color, dash: true },
      ],
      yMax: Math.log(keys) * 1.05, xLabel: t('scaling.sweep.x'), yLabel: t('scaling.sweep.y'), mark: dK, width, lang,
      yRef: { y: Math.log(keys), label: t('scaling.sweep.ref', { keys }) },
    }), t('scaling.sweep.label', { scaled: fmt(sweep[sweep.length - 1].entropyScaled, 2), unscaled: fmt(sweep[sweep.length - 1].entropyUnscaled, 2), dK: SWEEP[SWEEP.length - 1] }));

    this.sweepTable.replaceChildren(el('table', { class: 'matrix sweep', dataset: { testid: 'scaling-sweep' } },
      el('caption', {}, t('scaling.table.caption', { keys })),
      el('thead', {}, el('tr', {}, ['d_k', t('scaling.col.entropyScaled'), t('scaling.col.entropyUnscaled'), t('scaling.col.largestScaled'), t('scaling.col.largestUnscaled')]
        .map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, sweep.map((s) => el('tr', { class: s.dK === dK ? 'is-query' : undefined },
        el('th', { scope: 'row' }, String(s.dK)),
        [s.entropyScaled, s.entropyUnscaled, s.maxWeightScaled, s.maxWeightUnscaled].map((v) => el('td', { class: 'num' }, fmt(v, 3))))))));
  }

  jsonOf(name) {
    const { r, dK, keys } = this._data;
    if (name === 'sweep') return { keys, sweep: this._sweep };
    const stats = { dK, numQueries: NUM_QUERIES, numKeys: keys, varianceRaw: r.varianceRaw, varianceScaled: r.varianceScaled,
      entropyScaled: r.entropyScaled, entropyUnscaled: r.entropyUnscaled, maxWeightScaled: r.maxWeightScaled,
      maxWeightUnscaled: r.maxWeightUnscaled };
    if (name === 'scores') return { ...stats, dotProducts: Array.from(r.dotProducts) };
    if (name === 'weights') return { ...stats, weightsScaled: Array.from(r.weightsScaled), weightsUnscaled: Array.from(r.weightsUnscaled) };
    return { ...stats, query1Scaled: Array.from(r.weightsScaled.subarray(0, keys)),
      query1Unscaled: Array.from(r.weightsUnscaled.subarray(0, keys)) };
  }

  csvOf(name) {
    const { r, dK, keys } = this._data;
    if (name === 'sweep') {
      return matrixCSV({ corner: 'd_k', rowLabels: this._sweep.map((s) => String(s.dK)), colLabels: ['entropyScaled', 'entropyUnscaled', 'maxWeightScaled', 'maxWeightUnscaled'],
        values: this._sweep.map((s) => [s.entropyScaled, s.entropyUnscaled, s.maxWeightScaled, s.maxWeightUnscaled]) });
    }
    const n = name === 'one-query' ? keys : r.dotProducts.length;
    const sqrt = Math.sqrt(dK);
    return matrixCSV({ corner: 'pair', rowLabels: Array.from({ length: n }, (_, i) => `q${Math.floor(i / keys) + 1}·k${(i % keys) + 1}`),
      colLabels: ['dot', 'dot/sqrt(dK)', 'weightScaled', 'weightUnscaled'],
      values: Array.from({ length: n }, (_, i) => [r.dotProducts[i], r.dotProducts[i] / sqrt, r.weightsScaled[i], r.weightsUnscaled[i]]) });
  }
}
