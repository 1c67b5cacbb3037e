/**
 * <headlab-choosing-h>: with d_model fixed, more heads means a smaller d_k.
 * Shows d_model split into h slices, the course's examples (512 / 8 → 64,
 * 12288 / 96 → 128), and how the space in which one head compares a query with
 * a key shrinks: random unit-variance queries and keys are drawn in wasm at the
 * current d_k; unrelated pairs score about N(0, 1) after scaling, while a key
 * that matches the query exactly scores about √d_k. The smaller d_k, the closer
 * the two, and the more often an unrelated key looks like a match.
 * Then both sides of the trade-off, measured by the module at d_model = 16
 * (lab.headsTrial, shipped as a table from scripts/choosing-h-table.mjs and
 * re-measurable in a Worker): how many relations get a head of their own (more
 * heads: more) and whether a head can still find an item by content (d_k = 1: no).
 *
 * @attr {number} d-model   model width; default 512
 * @attr {number} heads     number of heads; default 8 (snapped to a divisor of d-model)
 * @attr {boolean} hide-controls hides the toolbar
 * @attr {'light' | 'dark' | 'auto'} theme     light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * @prop {'worker' | 'main-thread' | null} runsIn read-only: where its calculations run; null before the first
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ dModel: number, heads: number, dK: number, impostorRate: number }} headlab-change  after every recompute
 * @fires {{ rows: object[] }} headlab-measured  after "Measure again" finishes: the re-measured table's rows
 * @fires {{ message: string }} headlab-error  the WebAssembly module or the element's code did not load
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart chart      the charts
 * @csspart export     download menus
 * @csspart copy-link  the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el } from './shared/render/dom.js';
import { tex, formulaCss } from './shared/render/typeset.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { exportMenu, matrixCSV } from './shared/render/export.js';
import { compute, computeNote, computeRunsIn, computeStarted } from './shared/worker/compute.js';
import { histogramsFigure, lineChartFigure, SERIES } from './shared/render/charts.js';
import { CHOOSING_H_TABLE } from '../lib/teach/choosing-h-table.js';
import { SETUP, measure } from '../lib/teach/choosing-h-measure.js';
import messages from '../lib/i18n/catalogues/choosing-h.js';

const D_MODELS = [64, 128, 256, 512, 768, 1024, 2048, 4096, 12288];
const EXAMPLES = [
  { label: 'original', dModel: 512, heads: 8 },
  { label: 'gpt3', dModel: 12288, heads: 96 },
];
const QUERIES = 64, KEYS = 256;

const CSS = `
.big { font-size: 1.5rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); gap: 1rem; }
.chart svg, .bar svg { max-width: 100%; height: auto; }
.chart h3 { font-size: 0.98rem; }
table.examples td.num { min-width: 3em; }
table.examples tbody th { white-space: normal; }
.tradeoff { margin-top: 1.5rem; }
.tradeoff .chart { max-width: 36rem; }
table.tradeoff-table td.num { min-width: 3.5em; }
.conclusion { margin-top: 1.25rem; padding: 0.75rem 1rem; border-left: 4px solid var(--hl-accent, #2f6fd0); }
.conclusion strong { display: block; font-size: 1.1rem; margin-bottom: 0.25rem; }
`;
const LOOKUP_COLOR = SERIES[1].color, OWN_COLOR = SERIES[0].color, ALL_COLOR = '#009e73';

function divisors(n) {
  const out = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

export class HeadlabChoosingH extends HeadlabElement {
  static tag = 'headlab-choosing-h';
  static stateKey = 'choose';
  static css = formulaCss + CSS;
  static formulas = true;
  static messages = messages;
  static props = {
    dModel: { attr: 'd-model', type: 'int', default: 512, min: 1, max: 65536, state: true },
    heads: { type: 'int', default: 8, min: 1, max: 65536, state: true },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
  };

  /** Where its calculations run: 'worker' or 'main-thread', null before the first. Read-only. */
  get runsIn() { return computeRunsIn(); }

  /** A share as a percentage with one decimal, written the element's way ("12.5%", "12,5 %"). */
  pct(x, digits = 1) {
    return this.t('percent', { n: this.fmt(100 * x, digits) });
  }

  build() {
    const t = this.t;
    this._job = 0;
    this.dModelSelect = el('select', { id: 'dmodel' }, D_MODELS.map((d) => el('option', { value: String(d) }, this.fmtInt(d))));
    this.dModelSelect.addEventListener('change', () => {
      const d = Number(this.dModelSelect.value);
      const ds = divisors(d);
      const h = ds.reduce((a, b) => (Math.abs(b - this.heads) < Math.abs(a - this.heads) ? b : a));
      this.dModel = d;
      this.heads = h;
    });
    this.hSlider = el('input', { type: 'range', id: 'h', min: 0, step: 1 });
    this.hSlider.addEventListener('input', () => { this.heads = this._divs[this.hSlider.valueAsNumber]; });
    this.hOut = el('output', { for: 'h', class: 'value', dataset: { testid: 'choose-h' } });
    this.examples = el('div', { class: 'table-scroll' });
    this.toolbar = el('div', { class: 'toolbar' }, this.copyLink());
    this.status = el('p', { class: 'status', role: 'status' });
    this.dkLine = el('div', { class: 'formula', dataset: { testid: 'choose-dk' } });
    this.bar = el('div', { class: 'bar' });
    this.verdict = el('p', { class: 'note', 'aria-live': 'polite', dataset: { testid: 'choose-verdict' } });
    const chart = (title, note, name, json, csv) => {
      const holder = { box: el('div') };
      holder.section = el('div', { class: 'chart', part: 'chart' }, el('h3', {}, title), el('p', { class: 'small muted explain' }, note), holder.box,
        exportMenu({ t, what: title, name: () => `${name}-dmodel-${this.dModel}-h-${this.heads}`, figure: () => holder.fig, json, csv }));
      return holder;
    };
    this.histChart = chart(t('choose.hist.title'), t('choose.hist.note', { queries: QUERIES, keys: KEYS }), 'unrelated-scores',
      () => this._data && { dModel: this.dModel, heads: this.heads, dK: this._data.dK, scaledScores: Array.from(this._data.scaled) }, null);
    this.sweepChart = chart(t('choose.sweep.title'), t('choose.sweep.note'), 'impostors',
      () => this._sweep && { dModel: this.dModel, sweep: this._sweep },
      () => this._sweep && matrixCSV({ corner: 'h', rowLabels: this._sweep.map((s) => String(s.heads)), colLabels: ['dK', 'sqrtDK', 'impostorRate'], values: this._sweep.map((s) => [s.dK, Math.sqrt(s.dK), s.rate]) }));
    this.buildTradeoff(chart);
    this.root.append(
      el('h2', {}, t('choose.title')),
      this.status,
      el('div', { class: 'field' }, el('label', { for: 'dmodel' }, tex('d_{\\text{model}}'), t('choose.fixed')), this.dModelSelect),
      el('div', { class: 'field' }, el('label', { for: 'h' }, t('choose.heads'), tex('h')), this.hSlider, this.hOut),
      this.toolbar, this.dkLine, this.bar,
      el('h3', {}, t('choose.examples')), this.examples,
      this.verdict,
      el('div', { class: 'charts' }, this.histChart.section, this.sweepChart.section),
      this.tradeoff, this.conclusion);
    this.onResize(() => this.requestUpdate());
  }

  /** The measured side: what more heads buy and what a tiny d_k costs, at d_model 16. */
  buildTradeoff(chart) {
    const t = this.t;
    // Measurements made in this browser survive a rebuild in another language (relocalise).
    this._rows ??= CHOOSING_H_TABLE.rows;
    this._measuredLive ??= false;
    this._measureJob ??= 0;
    const T = CHOOSING_H_TABLE;
    this.tradeChart = chart(t('choose.trade.title'), t('choose.trade.note'),
      'choosing-h-tradeoff', () => ({ ...T, rows: this._rows, measuredInThisBrowser: this._measuredLive }),
      () => matrixCSV({ corner: 'h', rowLabels: this._rows.map((r) => String(r.numHeads)),
        colLabels: ['dK', 'relationsWithOwnHead', 'lookupAccuracy', 'positionAccuracy', 'accuracy', 'loss'],
        values: this._rows.map((r) => [r.dK, r.relationsWithOwnHead, r.lookupAccuracy, r.positionAccuracy, r.accuracy, r.loss]) }));
    this.tradeTable = el('div', { class: 'table-scroll' });
    this.tradeVerdict = el('p', { class: 'note', 'aria-live': 'polite', dataset: { testid: 'choose-tradeoff-verdict' } });
    this.remeasure = el('button', { type: 'button', class: 'btn btn--small', dataset: { testid: 'choose-remeasure' }, on: { click: () => this.measureAgain() } },
      t('choose.remeasure'), el('span', { class: 'sr-only' }, t('choose.remeasureSr')));
    this.remeasureStatus = el('p', { class: 'small muted', role: 'status', dataset: { testid: 'choose-remeasure-status' } });
    this.tradeoff = el('section', { class: 'tradeoff', dataset: { testid: 'choose-tradeoff' } },
      el('h3', {}, t('choose.buyTitle')),
      el('p', { class: 'explain' }, t('choose.buyExplain', { dModel: T.dModel, steps: this.fmtInt(T.steps), seeds: T.seeds.length, examples: this.fmtInt(T.evalExamples) })),
      this.tradeChart.section, this.tradeTable, this.tradeVerdict,
      el('div', { class: 'toolbar' }, this.remeasure), this.remeasureStatus);
    this.conclusion = el('div', { class: 'conclusion', dataset: { testid: 'choose-conclusion' } });
  }

  drawTradeoff(h) {
    const t = this.t;
    const pct = (x) => this.pct(x);
    const rows = this._rows, T = CHOOSING_H_TABLE, R = T.numRelations;
    const here = rows.find((r) => r.numHeads === h);
    const width = Math.max(300, Math.min(560, this.tradeChart.box.clientWidth || 520));
    this.tradeChart.fig = lineChartFigure({
      series: [
        { label: t('choose.series.own', { R }), points: rows.map((r) => [r.numHeads, (100 * r.relationsWithOwnHead) / R]), color: OWN_COLOR },
        { label: t('choose.series.lookup'), points: rows.map((r) => [r.numHeads, 100 * r.lookupAccuracy]), color: LOOKUP_COLOR, dash: true },
        { label: t('choose.series.all'), points: rows.map((r) => [r.numHeads, 100 * r.accuracy]), color: ALL_COLOR },
      ],
      xLabel: t('choose.trade.x', { dModel: T.dModel }), yLabel: '%', yMax: 100, width, mark: here ? h : null,
      yRef: { y: 25, label: t('choose.trade.guess') }, lang: t.lang,
    });
    this.show(this.tradeChart, rows.map((r) => t('choose.trade.label', { h: r.numHeads, own: this.fmt(r.relationsWithOwnHead, 2), R, lookup: pct(r.lookupAccuracy), all: pct(r.accuracy) })).join('; '));
    this.tradeTable.replaceChildren(el('table', { class: 'matrix tradeoff-table', dataset: { testid: 'choose-tradeoff-table' } },
      el('caption', {}, t('choose.trade.caption', { dModel: T.dModel, seeds: T.seeds.length, live: this._measuredLive ? t('choose.trade.live') : '' })),
      el('thead', {}, el('tr', {}, ['h', 'd_k', t('choose.col.own', { R }), t('choose.col.colour'), t('choose.col.positions'), t('choose.col.all')].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows.map((r) => el('tr', { class: r.numHeads === h ? 'is-query' : undefined },
        el('th', { scope: 'row' }, String(r.numHeads)), el('td', { class: 'num' }, String(r.dK)),
        el('td', { class: 'num' }, this.fmt(r.relationsWithOwnHead, 2)), el('td', { class: 'num' }, pct(r.lookupAccuracy)),
        el('td', { class: 'num' }, pct(r.positionAccuracy)), el('td', { class: 'num' }, pct(r.accuracy)))))));
    this.tradeVerdict.replaceChildren(...this.tradeoffVerdict(here, h));
    this.conclusion.replaceChildren(...this.conclusionText());
  }

  /** One sentence on the measured row for the current h, or how to reach one. */
  tradeoffVerdict(r, h) {
    const T = CHOOSING_H_TABLE, R = T.numRelations;
    const t = this.t;
    if (!r) return [t('choose.notMeasured', { h, list: T.heads.join(', ') })];
    const own = this.fmt(r.relationsWithOwnHead, 2);
    const lead = el('strong', {}, `h = ${r.numHeads}, d_k = ${r.dK}: `);
    if (r.numHeads === 1) return [lead, t('choose.v.one', { R, own, all: this.pct(r.accuracy) })];
    if (r.dK === 1) return [lead, t('choose.v.dk1', { own, R, lookup: this.pct(r.lookupAccuracy) })];
    if (r.relationsWithOwnHead < R - 0.5) return [lead, t('choose.v.share', { own, R, all: this.pct(r.accuracy) })];
    return [lead, t('choose.v.every', { own, R, dK: r.dK, all: this.pct(r.accuracy) })];
  }

  conclusionText() {
    const rows = this._rows, T = CHOOSING_H_TABLE;
    const first = rows[0], last = rows[rows.length - 1];
    const best = rows.reduce((a, b) => (b.accuracy > a.accuracy ? b : a));
    return [el('strong', {}, this.t('choose.c.title')),
      this.t('choose.c.text', { dModel: T.dModel, firstH: first.numHeads, firstAll: this.pct(first.accuracy), lastH: last.numHeads, lastAll: this.pct(last.accuracy),
        bestH: best.numHeads, bestDK: best.dK, bestAll: this.pct(best.accuracy) })];
  }

  async measureAgain() {
    const job = ++this._measureJob;
    this.remeasure.disabled = true;
    this.setAttribute('data-measuring', '');
    const say = (text) => { this.remeasureStatus.textContent = text; };
    const t = this.t;
    await computeStarted();  // so the line below can say where the models train
    say(t('choose.m.training', { n: SETUP.heads.length * SETUP.seeds.length, note: computeNote(t) }));
    try {
      const rows = await measure((options) => compute('headsTrial', options), (done, total, trial) => {
        if (job === this._measureJob) say(t('choose.m.progress', { done, total, h: trial.numHeads, seed: trial.seed, all: this.pct(trial.accuracy) }));
      });
      if (job !== this._measureJob) return;
      const same = rows.every((r, i) => r.trials.every((trial, k) => trial.accuracy === CHOOSING_H_TABLE.rows[i].trials[k].accuracy));
      this._rows = rows;
      this._measuredLive = true;
      say(same ? t('choose.m.same') : t('choose.m.differs'));
      this.requestUpdate();
      this.emit('measured', { rows });
    } catch (e) {
      if (job === this._measureJob) say(t('choose.m.failed', { message: e.message }));
    } finally {
      if (job === this._measureJob) {
        this.remeasure.disabled = false;
        this.removeAttribute('data-measuring');
      }
    }
  }

  update() {
    let dModel = this.dModel;
    const ds = divisors(dModel);
    this._divs = ds;
    let h = ds.includes(this.heads) ? this.heads : ds.reduce((a, b) => (Math.abs(b - this.heads) < Math.abs(a - this.heads) ? b : a));
    if (!D_MODELS.includes(dModel)) this.dModelSelect.append(el('option', { value: String(dModel) }, this.fmtInt(dModel)));
    this.dModelSelect.value = String(dModel);
    this.hSlider.max = String(ds.length - 1);
    this.hSlider.value = String(ds.indexOf(h));
    const dK = dModel / h;
    this.hSlider.setAttribute('aria-valuetext', `h = ${h}, d_k = ${dK}`);
    this.hOut.textContent = `${h}`;
    this.toolbar.hidden = this.hideControls;
    this.dkLine.replaceChildren(tex(`d_k = \\frac{d_{\\text{model}}}{h} = \\frac{${dModel}}{${h}} = ${dK}`, { display: true }),
      el('p', { class: 'small muted explain' }, this.t.plural('choose.dims', dK, { h, dModel: this.fmtInt(dModel), params: this.fmtInt(4 * dModel * dModel) })));
    this.drawBar(dModel, h);
    this.fillExamples(dModel, h);
    this.drawTradeoff(h);
    if (!this.lab) return;
    dModel = this.dModel;
    this.run(dModel, h, dK);
  }

  drawBar(dModel, h) {
    const width = Math.max(240, Math.min(520, this.bar.clientWidth || 520)), height = 30;
    const shapes = [];
    const palette = ['#3b528b', '#5ec962'];
    const n = Math.min(h, 512);
    for (let i = 0; i < n; i++) {
      shapes.push({ type: 'rect', x: (i * width) / n, y: 1, w: width / n, h: 28, fill: palette[i % 2], opacity: 0.9 });
    }
    shapes.push({ type: 'rect', x: 0, y: 1, w: width, h: 28, fill: 'none', stroke: { role: 'text' }, strokeWidth: 1 });
    const fig = { width, height, shapes };
    const svg = asImage(figureToSVG(fig), fig, this.t('choose.bar.label', { dModel, h, dK: dModel / h }));
    this.bar.replaceChildren(el('p', { class: 'small' }, this.t.plural('choose.bar', h, { dModel: this.fmtInt(dModel), dK: this.fmtInt(dModel / h) })), svg);
  }

  fillExamples(dModel, h) {
    const t = this.t;
    const fmtInt = (n) => this.fmtInt(n);
    const rows = [...EXAMPLES, { label: 'now', dModel, heads: h }];
    this.examples.replaceChildren(el('table', { class: 'matrix examples', dataset: { testid: 'choose-examples' } },
      el('caption', {}, 'd_k = d_model / h'),
      el('thead', {}, el('tr', {}, [t('choose.col.model'), 'd_model', 'h', 'd_k', t('choose.col.try')].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows.map((r) => el('tr', { class: r.label === 'now' ? 'is-query' : undefined },
        el('th', { scope: 'row' }, t(`choose.example.${r.label}`)), el('td', { class: 'num' }, fmtInt(r.dModel)), el('td', { class: 'num' }, String(r.heads)),
        el('td', { class: 'num' }, fmtInt(r.dModel / r.heads)),
        el('td', {}, r.label === 'now' ? '' : el('button', { type: 'button', class: 'btn btn--small', on: { click: () => { this.dModel = r.dModel; this.heads = r.heads; } } },
          t('choose.show'), el('span', { class: 'sr-only' }, t('choose.showSr', { label: t(`choose.example.${r.label}`), dModel: fmtInt(r.dModel), h: r.heads })))))))));
  }

  /** Fraction of unrelated pairs whose scaled score reaches √d_k, the score of an exact match. */
  static impostorRate(dots, dK) {
    const bar = dK;  // q·k/√d_k ≥ √d_k  ⇔  q·k ≥ d_k
    let n = 0;
    for (let i = 0; i < dots.length; i++) if (dots[i] >= bar) n += 1;
    return n / dots.length;
  }

  async run(dModel, h, dK) {
    const job = ++this._job;
    this.setAttribute('data-busy', '');
    const t = this.t;
    const fmt = (v, d) => this.fmt(v, d);
    this.status.textContent = t('choose.computing');
    try {
      const r = await compute('scalingExperiment', { dK, numQueries: QUERIES, numKeys: KEYS, seed: 7 });
      let sweep = this._sweepFor === dModel ? this._sweep : null;
      if (!sweep) {
        const ds = divisors(dModel);
        const pick = ds.length <= 10 ? ds : ds.filter((_, i) => i % Math.ceil(ds.length / 10) === 0 || ds[i] === ds[ds.length - 1]);
        sweep = [];
        for (const heads of pick) {
          const k = dModel / heads;
          const s = await compute('scalingExperiment', { dK: k, numQueries: 32, numKeys: KEYS, seed: 7 });
          sweep.push({ heads, dK: k, rate: HeadlabChoosingH.impostorRate(s.dotProducts, k) });
        }
      }
      if (job !== this._job) return;
      this._sweep = sweep;
      this._sweepFor = dModel;
      const sqrt = Math.sqrt(dK);
      const scaled = r.dotProducts.map((v) => v / sqrt);
      this._data = { dK, scaled };
      const rate = HeadlabChoosingH.impostorRate(r.dotProducts, dK);
      const lim = Math.max(4.5, sqrt + 1);
      this.noteWidth();
      const width = Math.max(300, Math.min(560, this.histChart.box.clientWidth || 520));
      this.histChart.fig = histogramsFigure({
        series: [{ label: t('choose.hist.series', { dK }), values: scaled, color: SERIES[0].color }],
        lo: -lim, hi: lim, bins: width < 400 ? 34 : 50, log: true, xLabel: t('choose.hist.x'), rowHeight: 110, width,
        marks: [{ x: sqrt, label: t('choose.hist.mark', { value: fmt(sqrt, 2) }) }], lang: t.lang, logLabel: t('chart.logCount'),
      });
      this.show(this.histChart, t('choose.hist.label', { dK, value: fmt(sqrt, 2) }));
      const pts = sweep.map((s) => [s.dK, s.rate * 100]);
      this.sweepChart.fig = lineChartFigure({
        series: [{ label: t('choose.sweep.series'), points: pts, color: SERIES[1].color }],
        xLabel: t('choose.sweep.x'), yLabel: t('choose.sweep.y'), yMax: Math.max(1, ...pts.map((p) => p[1])) * 1.1, mark: dK, width, lang: t.lang,
      });
      this.show(this.sweepChart, sweep.map((s) => t('choose.sweep.label', { h: s.heads, dK: s.dK, rate: this.pct(s.rate, 2) })).join('; '));
      const perQuery = rate * KEYS;
      this.verdict.replaceChildren(
        el('strong', {}, `d_k = ${dK}: `),
        rate > 0
          ? t('choose.verdict.some', { rate: this.pct(rate, 2), perQuery: fmt(perQuery, 1), keys: KEYS })
          : t('choose.verdict.none', { n: this.fmtInt(r.dotProducts.length), value: fmt(sqrt, 2) }),
        dK <= 8 ? t('choose.verdict.small') : dK >= 64 ? t('choose.verdict.large') : t('choose.verdict.middle'),
        t('choose.verdict.cost'));
      this.status.textContent = t('choose.status', { note: computeNote(t) });
      this.emit('change', { dModel, heads: h, dK, impostorRate: rate });
    } catch (e) {
      if (job !== this._job) return;
      this.verdict.replaceChildren(el('span', { role: 'alert' }, t('element.experimentFailed', { message: e.message })));
    } finally {
      if (job === this._job) this.removeAttribute('data-busy');
    }
  }

  show(holder, label) {
    holder.box.replaceChildren(asImage(figureToSVG(holder.fig), holder.fig, label));
  }
}
