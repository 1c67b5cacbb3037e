/**
 * <headlab-misconceptions>: three wrong ideas about heads, each tested with
 * numbers from the wasm module.
 *  (a) "More heads means each head sees fewer tokens": every head's full T × T
 *      matrix, all weights strictly positive; heads split the representation,
 *      not the sequence.
 *  (b) "Heads are averaged (or summed)": averaging, summing and a learned W^O
 *      side by side, with what each loses (swap what the two heads do and only
 *      the concatenation notices).
 *  (c) Head ablation: switch heads off and see the output change.
 *
 * @attr {string} part      all | a | b | c; default all
 * @attr {number} heads     heads in part (a); default 4 (1, 2, 4, 8 or 16)
 * @attr {boolean} swap     part (b): the two heads swap roles
 * @attr {string} ablate    part (c): heads switched off, comma-separated, e.g. "1"
 * @attr {'light' | 'dark' | 'auto'} theme     light | dark | auto (default: light, or dark when the page declares a dark color-scheme)
 *
 * @fires {{ element: string }} headlab-ready  the module is loaded and the first result shown
 * @fires {{ part: 'all' | 'a' | 'b' | 'c', a?: object, b?: object, c?: object }} headlab-change  after each recompute,
 *   with the numbers of each part shown
 * @fires {{ message: string }} headlab-error  the WebAssembly module or the element's code did not load
 * @fires {{ lang: string }} headlab-relocalised  its language changed (the `lang` attribute or an ancestor's)
 * @fires {{ url: string }} headlab-link  a share link was made
 *
 * @csspart heatmap    heatmaps in part (a)
 * @csspart export     download menus
 * @csspart copy-link  the copy-link button
 */

import { HeadlabElement } from './shared/elements/base.js';
import { el } from './shared/render/dom.js';
import { fixed } from '../lib/i18n/index.js';
import { parseTokens, clip } from '../lib/teach/format.js';
import { tex, formulaCss } from './shared/render/typeset.js';
import { createHeatmap } from './shared/render/heatmap.js';
import { resultMatrix } from './shared/render/matrix.js';
import { asImage, figureToSVG } from './shared/render/figure.js';
import { validateModel } from '../lib/teach/model.js';
import { rows } from '../lib/teach/values.js';
import { workedModel, randomModel } from '../lib/teach/examples.js';
import messages from '../lib/i18n/catalogues/misconceptions.js';

const SENTENCE = 'Virat hit the ball because it was full';
const D_MODEL_A = 16;
const HEAD_CHOICES = [1, 2, 4, 8, 16];
const MIX = [[0.8, 0.2, 0.3, -0.1], [-0.2, 0.7, 0.1, 0.4], [0.3, -0.1, 0.9, 0.2], [0.1, 0.5, -0.3, 0.6]];

const CSS = `
section.part { border-top: 1px solid var(--hl-border); margin-top: 0.8rem; padding-top: 0.2rem; }
.claim { font-style: italic; }
.verdict { font-weight: 600; }
.maps { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 13rem), 1fr)); gap: 0.8rem; }
.split svg { max-width: 100%; height: auto; margin: 0.2rem 0 0.4rem; }
.split p { margin: 0.3rem 0 0; }
table.compare td.num { min-width: 4.2em; }
table.compare tbody th { white-space: normal; max-width: 11rem; }
table.compare caption { white-space: normal; }
.keeps { margin: 0.4rem 0; padding-left: 1.2rem; }
table.compare td.same { color: var(--hl-error); font-weight: 700; }
table.compare td.diff { color: var(--hl-ok); font-weight: 700; }
.switches { display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; }
`;

export class HeadlabMisconceptions extends HeadlabElement {
  static tag = 'headlab-misconceptions';
  static stateKey = 'misc';
  static css = formulaCss + CSS;
  static formulas = true;
  static messages = messages;
  static props = {
    part: { type: 'enum', values: ['all', 'a', 'b', 'c'], default: 'all', state: true },
    heads: { type: 'int', default: 4, min: 1, max: 16, state: true },
    swap: { type: 'bool', default: false, state: true },
    ablate: { type: 'string', default: '', state: true },
  };

  build() {
    this.status = el('p', { class: 'status', role: 'status' });
    this.partA = this.buildA();
    this.partB = this.buildB();
    this.partC = this.buildC();
    this.root.append(el('h2', {}, this.t('misc.title')), this.status,
      el('div', { class: 'toolbar' }, this.copyLink()), this.partA, this.partB, this.partC);
    this.onResize(() => this.requestUpdate());
  }

  // ------------------------------------------------------------------ (a)

  buildA() {
    const t = this.t;
    this.headsSlider = el('input', { type: 'range', id: 'a-heads', min: 0, max: HEAD_CHOICES.length - 1, step: 1 });
    this.headsSlider.addEventListener('input', () => { this.heads = HEAD_CHOICES[this.headsSlider.valueAsNumber]; });
    this.headsOut = el('output', { for: 'a-heads', class: 'value' });
    this.splitBox = el('div', { class: 'split' });
    this.aVerdict = el('p', { class: 'note note--ok verdict', 'aria-live': 'polite', dataset: { testid: 'misc-a-verdict' } });
    this.aMaps = el('div', { class: 'maps' });
    return el('section', { class: 'part', 'aria-labelledby': 'a-title' },
      el('h3', { id: 'a-title' }, t('misc.a.title')),
      el('p', { class: 'explain' }, t.parts('misc.a.explain', {
        width: () => el('em', {}, t('misc.a.width')), dmodel: () => ['d', el('sub', {}, 'model')], dk: () => ['d', el('sub', {}, 'k')] })),
      el('div', { class: 'field' }, el('label', { for: 'a-heads' }, t('misc.a.heads'), tex('h')), this.headsSlider, this.headsOut),
      this.splitBox, this.aVerdict,
      el('p', { class: 'small muted explain' }, t('misc.a.random', { sentence: SENTENCE })),
      this.aMaps);
  }

  drawSplit(h, tokens) {
    this.noteWidth();
    const dims = D_MODEL_A;
    const avail = Math.max(240, Math.min(520, (this.splitBox.clientWidth || 520)));
    const cell = Math.max(10, Math.min(22, Math.floor(avail / dims) - 3));
    const palette = ['#3b528b', '#5ec962', '#21918c', '#fde725', '#440154', '#addc30', '#2c728e', '#28ae80'];
    const strip = (n, fill, label) => {
      const shapes = [];
      for (let i = 0; i < n; i++) shapes.push({ type: 'rect', x: i * (cell + 3) + 1, y: 1, w: cell, h: cell, fill: fill(i), stroke: { role: 'text' }, strokeWidth: 0.6 });
      const fig = { width: n * (cell + 3) + 2, height: cell + 2, shapes };
      return asImage(figureToSVG(fig), fig, label, 'fig strip');
    };
    const t = this.t;
    this.splitBox.replaceChildren(
      el('p', { class: 'small' }, el('strong', {}, t('misc.a.sees')), t('misc.a.all', { n: tokens.length })),
      strip(tokens.length, () => ({ role: 'muted' }), t('misc.a.stripTokens', { n: tokens.length })),
      el('p', { class: 'small' }, el('strong', {}, t('misc.a.numbers')), t.plural('misc.a.slices', h, { dims, dk: dims / h })),
      strip(dims, (d) => palette[Math.floor(d / (dims / h)) % palette.length], t('misc.a.stripDims', { dims, h, dk: dims / h })));
  }

  static small(v, lang = 'en') {
    if (v >= 0.001) return fixed(lang, v, 4);
    const [digits, exp] = v.toExponential(1).split('e');
    const mant = fixed(lang, Number(digits), 1);
    const sup = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
    return `${mant} × 10${[...String(Number(exp))].map((c) => sup[c]).join('')}`;
  }

  updateA() {
    const h = HEAD_CHOICES.includes(this.heads) ? this.heads : 4;
    this.headsSlider.value = String(HEAD_CHOICES.indexOf(h));
    const t = this.t;
    this.headsSlider.setAttribute('aria-valuetext', t.plural('misc.a.valuetext', h, { dk: D_MODEL_A / h }));
    this.headsOut.textContent = `${h} (d_k = ${D_MODEL_A / h})`;
    const tokens = parseTokens(SENTENCE);
    this.drawSplit(h, tokens);
    const { model } = validateModel(randomModel({ tokens, dModel: D_MODEL_A, numHeads: h, seed: 3 }));
    const r = this.lab.multiHeadAttention({
      query: model.query, dModel: model.dModel, numHeads: h, wQ: model.wQ, wK: model.wK, wV: model.wV, wO: model.wO, returnWeights: true,
    });
    const T = tokens.length;
    let min = Infinity;
    for (const w of r.weights) min = Math.min(min, w);
    this.aVerdict.replaceChildren(t.plural('misc.a.verdict', h, { T, weights: h * T * T, min: HeadlabMisconceptions.small(min, t.lang) }));
    const maps = [];
    for (let k = 0; k < h; k++) {
      const hm = createHeatmap({ t, title: t('misc.a.map', { h: k + 1, T }), rowLabels: tokens, colLabels: tokens, testid: `misc-a-head-${k + 1}`, fileName: `misconception-a-head-${k + 1}`, maxGrid: 200 });
      hm.update(r.weights, k * T * T);
      maps.push(hm.element);
    }
    this.aMaps.replaceChildren(...maps);
    return { heads: h, minWeight: min };
  }

  // ------------------------------------------------------------------ (b)

  buildB() {
    const t = this.t;
    this.swapBox = el('input', { type: 'checkbox', id: 'b-swap' });
    this.swapBox.addEventListener('change', () => { this.swap = this.swapBox.checked; });
    this.bTable = el('div', { class: 'table-scroll' });
    this.bVerdict = el('div', { class: 'note', 'aria-live': 'polite', dataset: { testid: 'misc-b-verdict' } });
    return el('section', { class: 'part', 'aria-labelledby': 'b-title' },
      el('h3', { id: 'b-title' }, t('misc.b.title')),
      el('p', { class: 'explain' }, t.parts('misc.b.explain', {
        avg: () => tex('W^{O} = \\tfrac12\\begin{bmatrix} I \\\\ I \\end{bmatrix}'), sum: () => tex('\\begin{bmatrix} I \\\\ I \\end{bmatrix}'),
        hdv: () => ['h·d', el('sub', {}, 'v')], dv: () => ['d', el('sub', {}, 'v')], WO: () => ['W', el('sup', {}, 'O')], it: () => el('q', {}, 'it') })),
      el('label', { class: 'check', for: 'b-swap' }, this.swapBox, t('misc.b.swap')),
      this.bTable, this.bVerdict);
  }

  updateB() {
    const base = validateModel(workedModel()).model;
    const it = 2, d = 4;
    const swapHeads = (flat) => {
      // Columns 0..1 belong to head 1, 2..3 to head 2 ([4][4] row-major).
      const m = flat.slice();
      for (let r = 0; r < d; r++) {
        m[r * 4] = flat[r * 4 + 2]; m[r * 4 + 1] = flat[r * 4 + 3]; m[r * 4 + 2] = flat[r * 4]; m[r * 4 + 3] = flat[r * 4 + 1];
      }
      return m;
    };
    const run = (swapped, wO) => this.lab.multiHeadAttention({
      query: base.query, dModel: d, numHeads: 2, wQ: swapped ? swapHeads(base.wQ) : base.wQ, wK: swapped ? swapHeads(base.wK) : base.wK,
      wV: base.wV, wO: Float32Array.from(wO.flat()),
    }).output.slice(it * d, (it + 1) * d);
    const avg = [[0.5, 0, 0, 0], [0, 0.5, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0]];
    const sum = [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]];
    const ident = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]];
    const t = this.t;
    // `name` is the row's id (data-row and the change event's keys, in English); `id` names its messages.
    const rows = [
      { name: 'Concat, then W^O = identity', id: 'identity', wO: ident, width: 4 },
      { name: 'Concat, then a learned W^O', id: 'learned', wO: MIX, width: 4 },
      { name: 'Average of the heads', id: 'average', wO: avg, width: 2 },
      { name: 'Sum of the heads', id: 'sum', wO: sum, width: 2 },
    ];
    const swapped = this.swap;
    const table = el('table', { class: 'matrix compare', dataset: { testid: 'misc-b-table' } },
      el('caption', {}, t('misc.b.caption'), el('span', { class: 'shape' }, swapped ? t('misc.b.swapped') : t('misc.b.tick'))),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('misc.b.combination')), ['1', '2', '3', '4'].map((c) => el('th', { scope: 'col' }, c)))));
    const body = el('tbody');
    const changed = {};
    for (const row of rows) {
      const normal = run(false, row.wO);
      const now = swapped ? run(true, row.wO) : normal;
      let same = true;
      for (let i = 0; i < row.width; i++) if (Math.abs(now[i] - normal[i]) > 5e-5) same = false;
      changed[row.name] = !same;
      const cells = Array.from({ length: 4 }, (_, i) => (i < row.width
        ? el('td', { class: `num${swapped ? (same ? ' same' : ' diff') : ''}` }, this.fmt(now[i]))
        : el('td', { class: 'muted' }, '—')));
      body.append(el('tr', { dataset: { row: row.name } }, el('th', { scope: 'row' }, t(`misc.b.row.${row.id}`)), cells));
    }
    table.append(body);
    this.bTable.replaceChildren(table, el('ul', { class: 'keeps small' },
      rows.map((row) => el('li', {}, el('strong', {}, `${t(`misc.b.row.${row.id}`)}: `), t('misc.b.keepsLine', { width: row.width, keeps: t(`misc.b.keeps.${row.id}`) })))));
    this.bVerdict.replaceChildren(swapped
      ? el('p', {}, t.parts('misc.b.verdictSwapped', {
        strong: () => el('strong', {}, t('misc.b.noChange')), ball: () => el('q', {}, 'ball'), full: () => el('q', {}, 'full'), WO: () => ['W', el('sup', {}, 'O')] }))
      : el('p', {}, t('misc.b.verdict')));
    return { swapped, changed };
  }

  // ------------------------------------------------------------------ (c)

  buildC() {
    const t = this.t;
    this.cSwitches = [0, 1].map((h) => {
      const box = el('input', { type: 'checkbox', id: `c-head-${h + 1}`, checked: true });
      box.addEventListener('change', () => {
        this.ablate = [0, 1].filter((k) => !this.cSwitches[k].checked).map((k) => k + 1).join(',');
      });
      return box;
    });
    this.cResult = resultMatrix({ caption: el('span', {}, t('misc.c.caption'), el('span', { class: 'shape' }, t('misc.c.shape'))),
      rowLabels: ['ball', 'full', 'it'], colLabels: ['1', '2', '3', '4'], testid: 'misc-c-output', markRow: 2, t });
    this.cVerdict = el('p', { class: 'note', 'aria-live': 'polite', dataset: { testid: 'misc-c-verdict' } });
    return el('section', { class: 'part', 'aria-labelledby': 'c-title' },
      el('h3', { id: 'c-title' }, t('misc.c.title')),
      el('p', { class: 'explain' }, t('misc.c.explain')),
      el('fieldset', {}, el('legend', {}, t('misc.c.switches')),
        el('div', { class: 'switches' }, this.cSwitches.map((b, h) => el('label', { class: 'check', for: b.id }, b, t('misc.c.head', { h: h + 1 }))))),
      this.cResult.element, this.cVerdict);
  }

  updateC() {
    const base = validateModel(workedModel()).model;
    const off = new Set(this.ablate.split(',').map(Number).filter((n) => n === 1 || n === 2));
    this.cSwitches.forEach((b, h) => { b.checked = !off.has(h + 1); });
    const wO = base.wO.slice();
    for (const h of off) wO.fill(0, (h - 1) * 2 * 4, h * 2 * 4);
    const args = { query: base.query, dModel: 4, numHeads: 2, wQ: base.wQ, wK: base.wK, wV: base.wV };
    const full = this.lab.multiHeadAttention({ ...args, wO: base.wO }).output;
    const now = this.lab.multiHeadAttention({ ...args, wO }).output;
    this.cResult.update(now);
    this.cResult.markChanged(now, full);
    let delta = 0;
    for (let i = 0; i < now.length; i++) delta = Math.max(delta, Math.abs(now[i] - full[i]));
    const t = this.t;
    this.cVerdict.textContent = off.size === 0
      ? t('misc.c.bothOn')
      : t.plural('misc.c.off', off.size, { heads: [...off].join(t('misc.c.and')), delta: this.fmt(delta) });
    return { off: [...off], output: rows(now, 3, 4), maxChange: delta };
  }

  attributeProblems() {
    const out = super.attributeProblems();
    const unknown = this.ablate.split(',').map((x) => x.trim()).filter((x) => x && x !== '1' && x !== '2');
    if (unknown.length) out.push(this.t('misc.problem.ablate', { list: unknown.slice(0, 3).map((x) => JSON.stringify(clip(x, 20))).join(', ') }));
    return out;
  }

  update() {
    const part = this.part;
    this.partA.hidden = part !== 'all' && part !== 'a';
    this.partB.hidden = part !== 'all' && part !== 'b';
    this.partC.hidden = part !== 'all' && part !== 'c';
    this.swapBox.checked = this.swap;
    if (!this.lab) return;
    const detail = { part };
    if (!this.partA.hidden) detail.a = this.updateA();
    if (!this.partB.hidden) detail.b = this.updateB();
    if (!this.partC.hidden) detail.c = this.updateC();
    this.status.textContent = this.t('misc.status', { version: this.lab.info().version });
    this.emit('change', detail);
  }
}
