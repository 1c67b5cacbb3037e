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
 * @attr {string} theme     light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * Properties: runsIn ('worker' | 'main-thread', read-only: where its calculations run; null before the first).
 *
 * @fires headlab-ready
 * @fires headlab-change  detail: { dModel, heads, dK, impostorRate }
 * @fires headlab-measured detail: { rows } after "Measure again" finishes
 * @fires headlab-link    detail: { url }
 *
 * @csspart chart      the charts
 * @csspart export     download menus
 * @csspart copy-link  the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el } from './shared/render/dom.js';
import { fmt, fmtInt } from '../lib/teach/format.js';
import { tex } from './shared/render/typeset.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { exportMenu, matrixCSV } from './shared/render/export.js';
import { compute, computeNote, computeRunsIn, computeStarted } from './shared/worker/compute.js';
import { histogramsFigure, lineChartFigure, SERIES } from './shared/render/charts.js';
import { CHOOSING_H_TABLE } from '../lib/teach/choosing-h-table.js';
import { SETUP, measure } from '../lib/teach/choosing-h-measure.js';

const D_MODELS = [64, 128, 256, 512, 768, 1024, 2048, 4096, 12288];
const EXAMPLES = [
  { label: 'Original transformer', dModel: 512, heads: 8 },
  { label: 'GPT-3 scale', dModel: 12288, heads: 96 },
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
const pct = (x) => `${fmt(100 * x, 1)}%`;
const LOOKUP_COLOR = SERIES[1].color, OWN_COLOR = SERIES[0].color, ALL_COLOR = '#009e73';

function divisors(n) {
  const out = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

export class HeadlabChoosingH extends HeadlabElement {
  static tag = 'headlab-choosing-h';
  static stateKey = 'choose';
  static css = CSS;
  static props = {
    dModel: { attr: 'd-model', type: 'int', default: 512, min: 1, max: 65536, state: true },
    heads: { type: 'int', default: 8, min: 1, max: 65536, state: true },
    hideControls: { attr: 'hide-controls', type: 'bool', default: false },
  };

  /** Where its calculations run: 'worker' or 'main-thread', null before the first. Read-only. */
  get runsIn() { return computeRunsIn(); }

  build() {
    this._job = 0;
    this.dModelSelect = el('select', { id: 'dmodel' }, D_MODELS.map((d) => el('option', { value: String(d) }, fmtInt(d))));
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
        exportMenu({ what: title, name: () => `${name}-dmodel-${this.dModel}-h-${this.heads}`, figure: () => holder.fig, json, csv }));
      return holder;
    };
    this.histChart = chart('Scores of unrelated query–key pairs', `Scaled scores q·k/√d_k of ${QUERIES} random queries against ${KEYS} random keys; the line marks what a key identical to the query would score.`, 'unrelated-scores',
      () => this._data && { dModel: this.dModel, heads: this.heads, dK: this._data.dK, scaledScores: Array.from(this._data.scaled) }, null);
    this.sweepChart = chart('Across h, for this d_model', 'How many unrelated keys score at least as high as a perfect match would (log scale of d_k).', 'impostors',
      () => this._sweep && { dModel: this.dModel, sweep: this._sweep },
      () => this._sweep && matrixCSV({ corner: 'h', rowLabels: this._sweep.map((s) => String(s.heads)), colLabels: ['dK', 'sqrtDK', 'impostorRate'], values: this._sweep.map((s) => [s.dK, Math.sqrt(s.dK), s.rate]) }));
    this.buildTradeoff(chart);
    this.root.append(
      el('h2', {}, 'Choosing the number of heads'),
      this.status,
      el('div', { class: 'field' }, el('label', { for: 'dmodel' }, tex('d_{\\text{model}}'), ' (fixed)'), this.dModelSelect),
      el('div', { class: 'field' }, el('label', { for: 'h' }, 'Heads ', tex('h')), this.hSlider, this.hOut),
      this.toolbar, this.dkLine, this.bar,
      el('h3', {}, 'Examples from the course'), this.examples,
      this.verdict,
      el('div', { class: 'charts' }, this.histChart.section, this.sweepChart.section),
      this.tradeoff, this.conclusion);
    this.onResize(() => this.requestUpdate());
  }

  /** The measured side: what more heads buy and what a tiny d_k costs, at d_model 16. */
  buildTradeoff(chart) {
    this._rows = CHOOSING_H_TABLE.rows;
    this._measuredLive = false;
    this._measureJob = 0;
    const T = CHOOSING_H_TABLE;
    this.tradeChart = chart('Both sides across h, at d_model = 16',
      'Solid blue: relations that got a head of their own. Dashed orange: the asked colour found by content. Green: all four answers right.',
      'choosing-h-tradeoff', () => ({ ...T, rows: this._rows, measuredInThisBrowser: this._measuredLive }),
      () => matrixCSV({ corner: 'h', rowLabels: this._rows.map((r) => String(r.numHeads)),
        colLabels: ['dK', 'relationsWithOwnHead', 'lookupAccuracy', 'positionAccuracy', 'accuracy', 'loss'],
        values: this._rows.map((r) => [r.dK, r.relationsWithOwnHead, r.lookupAccuracy, r.positionAccuracy, r.accuracy, r.loss]) }));
    this.tradeTable = el('div', { class: 'table-scroll' });
    this.tradeVerdict = el('p', { class: 'note', 'aria-live': 'polite', dataset: { testid: 'choose-tradeoff-verdict' } });
    this.remeasure = el('button', { type: 'button', class: 'btn btn--small', dataset: { testid: 'choose-remeasure' }, on: { click: () => this.measureAgain() } },
      'Measure again', el('span', { class: 'sr-only' }, ' in this browser (trains 15 small models)'));
    this.remeasureStatus = el('p', { class: 'small muted', role: 'status', dataset: { testid: 'choose-remeasure-status' } });
    this.tradeoff = el('section', { class: 'tradeoff', dataset: { testid: 'choose-tradeoff' } },
      el('h3', {}, 'What more heads buy, and what they cost'),
      el('p', { class: 'explain' }, 'The impostor count above shows only the cost of narrow heads. The benefit needs a task with several things to look for at once. ',
        `HeadLab’s trainer has one: seven coloured items, then a question such as “red?”. Answer 1 is the object of the asked colour: the question must match that item by content, query against key. `,
        'Answers 2 to 4 are the items at positions 0, 3 and 6: found by position. ',
        `For every h that divides d_model = ${T.dModel}, HeadLab trained its one-layer model for ${fmtInt(T.steps)} steps on ${T.seeds.length} seeds and tested it on ${fmtInt(T.evalExamples)} new examples. These are real measurements, made with this same WebAssembly module when the site was built and averaged over the seeds; “Measure again” repeats them here.`),
      this.tradeChart.section, this.tradeTable, this.tradeVerdict,
      el('div', { class: 'toolbar' }, this.remeasure), this.remeasureStatus);
    this.conclusion = el('div', { class: 'conclusion', dataset: { testid: 'choose-conclusion' } });
  }

  drawTradeoff(h) {
    const rows = this._rows, T = CHOOSING_H_TABLE, R = T.numRelations;
    const here = rows.find((r) => r.numHeads === h);
    const width = Math.max(300, Math.min(560, this.tradeChart.box.clientWidth || 520));
    this.tradeChart.fig = lineChartFigure({
      series: [
        { label: `relations with their own head (of ${R}, %)`, points: rows.map((r) => [r.numHeads, (100 * r.relationsWithOwnHead) / R]), color: OWN_COLOR },
        { label: 'asked colour found (%)', points: rows.map((r) => [r.numHeads, 100 * r.lookupAccuracy]), color: LOOKUP_COLOR, dash: true },
        { label: 'all four right (%)', points: rows.map((r) => [r.numHeads, 100 * r.accuracy]), color: ALL_COLOR },
      ],
      xLabel: `h at d_model = ${T.dModel} (d_k = ${T.dModel} / h)`, yLabel: '%', yMax: 100, width, mark: here ? h : null,
      yRef: { y: 25, label: 'guessing the object: 25%' },
    });
    this.show(this.tradeChart, rows.map((r) => `h = ${r.numHeads}: ${fmt(r.relationsWithOwnHead, 2)} of ${R} relations with their own head, asked colour found ${pct(r.lookupAccuracy)}, all four right ${pct(r.accuracy)}`).join('; '));
    this.tradeTable.replaceChildren(el('table', { class: 'matrix tradeoff-table', dataset: { testid: 'choose-tradeoff-table' } },
      el('caption', {}, `d_model = ${T.dModel}, ${T.seeds.length} seeds${this._measuredLive ? ', measured in this browser' : ''}`),
      el('thead', {}, el('tr', {}, ['h', 'd_k', `Own heads (of ${R})`, 'Colour found', 'Positions', 'All four'].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows.map((r) => el('tr', { class: r.numHeads === h ? 'is-query' : undefined },
        el('th', { scope: 'row' }, String(r.numHeads)), el('td', { class: 'num' }, String(r.dK)),
        el('td', { class: 'num' }, fmt(r.relationsWithOwnHead, 2)), el('td', { class: 'num' }, pct(r.lookupAccuracy)),
        el('td', { class: 'num' }, pct(r.positionAccuracy)), el('td', { class: 'num' }, pct(r.accuracy)))))));
    this.tradeVerdict.replaceChildren(...this.tradeoffVerdict(here, h));
    this.conclusion.replaceChildren(...this.conclusionText());
  }

  /** One sentence on the measured row for the current h, or how to reach one. */
  tradeoffVerdict(r, h) {
    const T = CHOOSING_H_TABLE, R = T.numRelations;
    if (!r) return [`h = ${h} is not one of the measured settings (${T.heads.join(', ')}); pick one of them to see its row.`];
    const own = fmt(r.relationsWithOwnHead, 2);
    const lead = el('strong', {}, `h = ${r.numHeads}, d_k = ${r.dK}: `);
    if (r.numHeads === 1) {
      return [lead, `one softmax has to serve all ${R} answers, so it blends them: ${own} relations get a head of their own and only ${pct(r.accuracy)} of examples get all four right. Plenty of room per head, too few heads.`];
    }
    if (r.dK === 1) {
      return [lead, `${own} of ${R} relations get their own head: the positions are easy, but the asked colour is found only ${pct(r.lookupAccuracy)} of the time (guessing gives 25%). `,
        'With d_k = 1 a query and a key are one number each; their product can only prefer the biggest or smallest key, not “the key that matches me”. Plenty of heads, too little room in each.'];
    }
    if (r.relationsWithOwnHead < R - 0.5) {
      return [lead, `${own} of ${R} relations get a head of their own; the rest share, and all four are right in only ${pct(r.accuracy)} of examples.`];
    }
    return [lead, `every relation gets a head of its own (${own} of ${R} on average) and each head still has ${r.dK} dimensions to match the asked colour: all four right in ${pct(r.accuracy)} of examples.`];
  }

  conclusionText() {
    const rows = this._rows, T = CHOOSING_H_TABLE;
    const first = rows[0], last = rows[rows.length - 1];
    const best = rows.reduce((a, b) => (b.accuracy > a.accuracy ? b : a));
    return [el('strong', {}, 'Partition a fixed budget; neither extreme is free.'),
      `Every h here costs the same 4 · ${T.dModel}² parameters: h only decides how d_model = ${T.dModel} is cut. `,
      `One wide head (h = ${first.numHeads}) gets all four right in ${pct(first.accuracy)} of examples, ${last.numHeads} one-dimensional heads in ${pct(last.accuracy)}, `,
      `and the middle (h = ${best.numHeads}, d_k = ${best.dK}) in ${pct(best.accuracy)}. Real models make the same choice at scale: 512 / 8 = 64 and 12288 / 96 = 128 dimensions per head.`];
  }

  async measureAgain() {
    const job = ++this._measureJob;
    this.remeasure.disabled = true;
    this.setAttribute('data-measuring', '');
    const say = (text) => { this.remeasureStatus.textContent = text; };
    await computeStarted();  // so the line below can say where the models train
    say(`Training ${SETUP.heads.length * SETUP.seeds.length} small models, one after another. ${computeNote()}`);
    try {
      const rows = await measure((options) => compute('headsTrial', options), (done, total, t) => {
        if (job === this._measureJob) say(`Trained ${done} of ${total} (h = ${t.numHeads}, seed ${t.seed}: all four right ${pct(t.accuracy)}).`);
      });
      if (job !== this._measureJob) return;
      const same = rows.every((r, i) => r.trials.every((t, k) => t.accuracy === CHOOSING_H_TABLE.rows[i].trials[k].accuracy));
      this._rows = rows;
      this._measuredLive = true;
      say(same ? 'Measured again in this browser: the same numbers as the table the page shipped with.'
        : 'Measured again in this browser. This browser’s arithmetic differs slightly from the build that made the shipped table, so some numbers moved a little; the shape is what matters.');
      this.requestUpdate();
      this.emit('measured', { rows });
    } catch (e) {
      if (job === this._measureJob) say(`HeadLab could not train the models: ${e.message}`);
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
    if (!D_MODELS.includes(dModel)) this.dModelSelect.append(el('option', { value: String(dModel) }, fmtInt(dModel)));
    this.dModelSelect.value = String(dModel);
    this.hSlider.max = String(ds.length - 1);
    this.hSlider.value = String(ds.indexOf(h));
    const dK = dModel / h;
    this.hSlider.setAttribute('aria-valuetext', `h = ${h}, d_k = ${dK}`);
    this.hOut.textContent = `${h}`;
    this.toolbar.hidden = this.hideControls;
    this.dkLine.replaceChildren(tex(`d_k = \\frac{d_{\\text{model}}}{h} = \\frac{${dModel}}{${h}} = ${dK}`, { display: true }),
      el('p', { class: 'small muted explain' }, `Each head compares queries and keys in ${fmtInt(dK)} dimension${dK > 1 ? 's' : ''}; the ${h} heads together still use all ${fmtInt(dModel)}, and the parameter count stays 4 · ${fmtInt(dModel)}² = ${fmtInt(4 * dModel * dModel)}.`));
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
    const svg = asImage(figureToSVG(fig), fig, `A bar of ${dModel} dimensions cut into ${h} equal slices of ${dModel / h}.`);
    this.bar.replaceChildren(el('p', { class: 'small' }, `d_model = ${fmtInt(dModel)}, cut into ${h} head${h > 1 ? 's' : ''} of d_k = ${fmtInt(dModel / h)}:`), svg);
  }

  fillExamples(dModel, h) {
    const rows = [...EXAMPLES, { label: 'Now', dModel, heads: h }];
    this.examples.replaceChildren(el('table', { class: 'matrix examples', dataset: { testid: 'choose-examples' } },
      el('caption', {}, 'd_k = d_model / h'),
      el('thead', {}, el('tr', {}, ['Model', 'd_model', 'h', 'd_k', 'Try it'].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows.map((r) => el('tr', { class: r.label === 'Now' ? 'is-query' : undefined },
        el('th', { scope: 'row' }, r.label), el('td', { class: 'num' }, fmtInt(r.dModel)), el('td', { class: 'num' }, String(r.heads)),
        el('td', { class: 'num' }, fmtInt(r.dModel / r.heads)),
        el('td', {}, r.label === 'Now' ? '' : el('button', { type: 'button', class: 'btn btn--small', on: { click: () => { this.dModel = r.dModel; this.heads = r.heads; } } },
          'Show', el('span', { class: 'sr-only' }, ` ${r.label}: d_model ${fmtInt(r.dModel)}, h = ${r.heads}`))))))));
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
    this.status.textContent = 'Computing…';
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
        series: [{ label: `unrelated pairs, d_k = ${dK}`, values: scaled, color: SERIES[0].color }],
        lo: -lim, hi: lim, bins: width < 400 ? 34 : 50, log: true, xLabel: 'scaled score q·k / √d_k', rowHeight: 110, width,
        marks: [{ x: sqrt, label: `exact match ≈ √d_k = ${fmt(sqrt, 2)}` }],
      });
      this.show(this.histChart, `Histogram of unrelated scores at d_k = ${dK}; an exact match would score about ${fmt(sqrt, 2)}.`);
      const pts = sweep.map((s) => [s.dK, s.rate * 100]);
      this.sweepChart.fig = lineChartFigure({
        series: [{ label: 'unrelated keys scoring like a match (%)', points: pts, color: SERIES[1].color }],
        xLabel: 'd_k (more heads → left)', yLabel: '% of pairs', yMax: Math.max(1, ...pts.map((p) => p[1])) * 1.1, mark: dK, width,
      });
      this.show(this.sweepChart, sweep.map((s) => `h = ${s.heads}, d_k = ${s.dK}: ${fmt(s.rate * 100, 2)}%`).join('; '));
      const perQuery = rate * KEYS;
      this.verdict.replaceChildren(
        el('strong', {}, `d_k = ${dK}: `),
        rate > 0
          ? `${fmt(rate * 100, 2)}% of unrelated query–key pairs score as high as an exact match would, about ${fmt(perQuery, 1)} impostors among ${KEYS} keys for every query. `
          : `none of the ${fmtInt(r.dotProducts.length)} unrelated pairs came close to an exact match’s score of ${fmt(sqrt, 2)}. `,
        dK <= 8 ? 'In so few dimensions a head has little room to tell a real match from noise.' : dK >= 64 ? 'There is plenty of room: matches stand far out from the noise.' : 'Matches mostly stand out, with some overlap.',
        ' That is only the cost side; below, what the extra heads buy.');
      this.status.textContent = `Random queries and keys drawn in WebAssembly. ${computeNote()}`;
      this.emit('change', { dModel, heads: h, dK, impostorRate: rate });
    } catch (e) {
      if (job !== this._job) return;
      this.verdict.replaceChildren(el('span', { role: 'alert' }, `HeadLab could not run the experiment: ${e.message}`));
    } finally {
      if (job === this._job) this.removeAttribute('data-busy');
    }
  }

  show(holder, label) {
    holder.box.replaceChildren(asImage(figureToSVG(holder.fig), holder.fig, label));
  }
}
