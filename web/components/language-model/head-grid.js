// The layers × heads grid of <headlab-language-model>: each head's attention on the
// example as a small picture, its label and main score, whether it is switched off;
// arrow keys move through it (one cell in the Tab order), Enter, Space or a click
// opens a head, whose full heatmap HeadDetail draws below it. Beside the label, the
// score that shows the head's part in the task (head-trend.js) with where it is heading:
// an arrow over the last steps and a sparkline of the whole run (height 0..1). Every number comes from the session's
// snapshots. Words come from the element's message function `t` (catalogues/language-model.js).

import { el, svgEl, uid, setText } from '../shared/render/dom.js';
import { fixed } from '../../lib/i18n/index.js';
import { rowPeak } from '../../lib/teach/head-trend.js';
import { leadingLabels } from '../../lib/teach/lm-relations.js';
import { viridisInto } from '../shared/render/colormap.js';
import { createHeatmap } from '../shared/render/heatmap.js';
import { liveHeatmap } from '../shared/render/trainer-heatmap.js';

/** Score field of each head label (the API's label; lm.label.* and lm.means.* say it in learner words). */
const LABELS = {
  'previous token': { key: 'previousToken', kind: 'prev' },
  induction: { key: 'induction', kind: 'induction' },
  'duplicate token': { key: 'duplicateToken', kind: 'dup' },
  'first token': { key: 'firstToken', kind: 'first' },
  coreference: { key: 'coreference', kind: 'coref' },
  // english: the head's `relation` (its label names the relation and its kind)
  agreement: { key: 'agreement', kind: 'agree' },
  selection: { key: 'selection', kind: 'select' },
  previousToken: { key: 'previousToken', kind: 'prev' },
};
const SCORE_FIELDS = [['previousToken', 'previous token'], ['induction', 'induction'], ['duplicateToken', 'duplicate token'],
  ['firstToken', 'first token'], ['coreference', 'coreference'], ['agreement', 'agreement'], ['selection', 'selection']];

export const GRID_CSS = `
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
.cell .trend { display: flex; align-items: center; gap: 0.2rem; font-size: 0.75rem; color: var(--hl-muted); font-variant-numeric: tabular-nums; }
.cell .trend svg { width: 2.6rem; height: 1rem; flex: none; overflow: visible; border-bottom: 1px solid var(--hl-border); }
.cell .trend polyline { fill: none; stroke: currentColor; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
.cell .trend[data-direction="rising"] { color: var(--hl-ok); }
.cell[data-kind="induction"] .tag { color: var(--hl-ok); }
.cell[data-kind="prev"] .tag, .cell[data-kind="coref"] .tag { color: var(--hl-accent); }
.cell[data-kind="agree"] .tag, .cell[data-kind="select"] .tag { color: var(--hl-ok); }
.cell[data-kind="none"] .tag { color: var(--hl-muted); font-weight: 400; }
.cell[data-off] canvas { opacity: 0.35; }
.cell[data-off] .tag::after { content: " (" attr(data-off) ")"; color: var(--hl-error); font-weight: 400; }
.switches { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; }
@container (max-width: 30rem) {
  .heads-grid [role="row"] { grid-template-columns: 1.5rem repeat(var(--heads), minmax(0, 1fr)); gap: 0.25rem; }
  .wide-only { display: none; }
  .narrow-only { display: inline; }
  .cell { padding: 0.15rem; }
  .cell .tag { font-size: 0.68rem; }
  .cell .score { font-size: 0.7rem; }
  .cell .trend svg { width: 2rem; }
  .cell .score-name { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
}
`;

/** Learner names of the score fields (the API's label names). */
export const SCORE_NAMES = Object.fromEntries(SCORE_FIELDS);

/**
 * The label a head got, what it means, and the score to show: `key`'s (the task score,
 * head-trend.js's taskScoreKey) when given, else the label's, else the highest; in the words of `t`.
 */
export function describeHead(s, key, t) {
  // english (leadingLabels): only the relations the head leads, named as the relations view's headings.
  const label = s.leads ? s.relation : s.relation ?? s.label;
  const info = LABELS[label];
  const name = (l) => t(`lm.label.${l}`);
  const shown = key && Number.isFinite(s[key]) ? { score: s[key], scoreName: name(SCORE_NAMES[key]) } : null;
  const tag = () => (s.leads ? s.leads.map((k) => t(`lm.rel.name.${k}`).toLowerCase()).join(', ') : name(label));
  const means = () => t(s.leads && (label === 'coreference' || label === 'induction') ? `lm.means.en.${label}` : `lm.means.${label}`);
  if (info) return { tag: tag(), score: s[info.key], scoreName: name(label), kind: info.kind, means: means(), ...shown };
  let best = shown;
  for (const [key, label] of SCORE_FIELDS) {
    if (!shown && Number.isFinite(s[key]) && (!best || s[key] > best.score)) best = { score: s[key], scoreName: name(label) };
  }
  return { tag: t('lm.label.none'), kind: 'none', means: t(s.leads ? 'lm.means.noLead' : 'lm.means.none'), ...best };
}

export class HeadGrid {
  /**
   * @param {{ onOpen: (layer: number, head: number) => void, prefix?: string }} o  a head was opened (click, Enter or
   *   Space); `prefix` starts the test ids ('lm': lm-grid, lm-cell-1-2, …)
   */
  constructor({ onOpen, prefix = 'lm', t }) {
    this.onOpen = onOpen;
    this.prefix = prefix;
    this.t = t;
    this.cells = [];
    this.focus = null;
    this.shape = null;
    this.element = el('div', { class: 'heads-grid', role: 'grid', part: 'heads', dataset: { testid: `${prefix}-grid` } });
    this.element.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** Cells for a model of `layers` × `heads` (named `name`); the cell of `open` takes the Tab stop. */
  build({ layers, heads }, open) {
    this.shape = { layers, heads };
    const t = this.t;
    const grid = this.element;
    grid.style.setProperty('--heads', String(heads));
    grid.setAttribute('aria-label', t('lm.grid.aria', { name: t.plural('lm.layers', layers) }));
    grid.setAttribute('aria-rowcount', String(layers + 1));
    const header = el('div', { role: 'row' }, el('span', { role: 'columnheader' }, el('span', { class: 'sr-only' }, t('lm.grid.layer'))),
      Array.from({ length: heads }, (_, h) => el('span', { role: 'columnheader' }, t('lm.grid.headN', { head: h + 1 }))));
    this.cells = [];
    const rows = Array.from({ length: layers }, (_, l) => {
      const cells = Array.from({ length: heads }, (_, h) => {
        const canvas = el('canvas', { width: 1, height: 1, 'aria-hidden': 'true' });
        const tag = el('span', { class: 'tag', dataset: { off: t('lm.grid.off') } }, '…');
        const scoreName = el('span', { class: 'score-name' });
        const scoreValue = el('span', { class: 'score-value' });
        const score = el('span', { class: 'score' }, scoreName, scoreValue);
        const arrow = el('span', { class: 'arrow', 'aria-hidden': 'true' });
        const trendText = el('span', { class: 'sr-only' });
        const line = svgEl('polyline', { points: '' });
        const spark = svgEl('svg', { viewBox: '0 0 1 1', preserveAspectRatio: 'none', 'aria-hidden': 'true' }, line);
        const trend = el('span', { class: 'trend', dataset: { testid: `${this.prefix}-trend-${l + 1}-${h + 1}` } }, arrow, spark, trendText);
        // The cell's name is its text: which head (for screen readers), label, score, and whether it is off.
        const off = el('span', { class: 'sr-only' });
        const cell = el('div', { role: 'gridcell', class: 'cell', tabindex: '-1', 'aria-selected': 'false',
          dataset: { layer: String(l), head: String(h), testid: `${this.prefix}-cell-${l + 1}-${h + 1}` },
          on: { click: () => { this.focusCell(l, h); this.onOpen(l, h); } } },
        el('span', { class: 'sr-only' }, t('lm.grid.cell', { layer: l + 1, head: h + 1 })), canvas, tag, el('span', { class: 'sr-only' }, ', '), score, trend, off);
        this.cells.push({ cell, canvas, tag, scoreName, scoreValue, off, l, h, trend, arrow, trendText, line });
        return cell;
      });
      return el('div', { role: 'row' }, el('span', { role: 'rowheader', 'aria-label': t('lm.grid.layerN', { layer: l + 1 }) },
        el('span', { class: 'wide-only' }, `${t('lm.grid.layer')} `), el('span', { class: 'narrow-only' }, t('lm.grid.layerShort')), String(l + 1)), cells);
    });
    grid.replaceChildren(header, ...rows);
    const first = this.cellAt(open.layer, open.head) ?? this.cells[0];
    first.cell.tabIndex = 0;
    this.focus = { layer: first.l, head: first.h };
  }

  cellAt(layer, head) {
    return this.cells.find((x) => x.l === layer && x.h === head) ?? null;
  }

  focusCell(layer, head) {
    const x = this.cellAt(layer, head);
    if (!x) return;
    for (const c of this.cells) c.cell.tabIndex = c === x ? 0 : -1;
    this.focus = { layer, head };
    x.cell.focus();
  }

  onKey(e) {
    if (!this.shape || !this.focus) return;
    const { layers, heads } = this.shape;
    let { layer, head } = this.focus;
    switch (e.key) {
      case 'ArrowRight': head = Math.min(heads - 1, head + 1); break;
      case 'ArrowLeft': head = Math.max(0, head - 1); break;
      case 'ArrowDown': layer = Math.min(layers - 1, layer + 1); break;
      case 'ArrowUp': layer = Math.max(0, layer - 1); break;
      case 'Home': head = 0; if (e.ctrlKey) layer = 0; break;
      case 'End': head = heads - 1; if (e.ctrlKey) layer = layers - 1; break;
      case 'Enter': case ' ': e.preventDefault(); this.onOpen(layer, head); return;
      default: return;
    }
    e.preventDefault();
    this.focusCell(layer, head);
  }

  /**
   * Draws a run's snapshot `s` (shape [L, H, T], weights, scores, enabled) into the cells;
   * `trendOf(layer, head)` → { key, trend } (ScoreHistory#trend) gives the score shown beside the label.
   */
  draw(s, trendOf = null) {
    const [, H, T] = s.shape;
    const t = this.t;
    const scores = leadingLabels(s.scores);
    for (const x of this.cells) {
      const i = x.l * H + x.h;
      const score = scores.find((q) => q.layer === x.l && q.head === x.h) ?? scores[i];
      const trend = trendOf?.(x.l, x.h);
      const d = describeHead(score, trend?.key, t);
      const on = s.enabled[i];
      drawMini(x.canvas, s.weights, i * T * T, T);
      drawTrend(x, trend?.trend ?? null, t);
      setText(x.tag, d.tag);
      // On narrow screens only the number shows; the score's name stays for screen readers.
      setText(x.scoreName, d.score === undefined ? '' : `${d.scoreName} `);
      setText(x.scoreValue, d.score === undefined ? '\u00a0' : fixed(t.lang, d.score, 2));
      x.cell.dataset.kind = d.kind;
      x.cell.toggleAttribute('data-off', !on);  // the tag's data-off holds the word CSS shows
      x.cell.dataset.label = score.label || '';
      setText(x.off, on ? '' : t('lm.grid.switchedOff'));
    }
  }

  /** Marks the opened head's cell. */
  select(open) {
    for (const x of this.cells) x.cell.setAttribute('aria-selected', String(Boolean(open) && x.l === open.layer && x.h === open.head));
  }
}

/** The opened head: its heatmap (rebuilt when its tokens change, recoloured in place while training), label and scores. */
export class HeadDetail {
  /**
   * @param {{ fileName: (layer: number, head: number) => string, onExport: (format: string, filename: string) => void,
   *   prefix?: string, name?: string }} o  `prefix` starts the test ids (as HeadGrid's); `name` the model's, in the title
   */
  constructor({ fileName, onExport, prefix = 'lm', name = '', t }) {
    Object.assign(this, { fileName, onExport, prefix, name, t });
    this.title = el('h3', { dataset: { testid: `${prefix}-detail-title` } }, t('lm.detail.oneHead'));
    this.text = el('p', { class: 'small', dataset: { testid: `${prefix}-detail-text` } });
    this.box = el('div', { dataset: { testid: `${prefix}-detail` } });
    this.element = el('section', { class: 'part', part: 'heatmap' }, this.title, this.text, this.box);
    this.shown = null;
  }

  /** Head `open` of a run's snapshot `s`; `full` redraws all of it (else about once a second while `running`). */
  draw(s, { layer, head }, { full, running }) {
    const [L, H, T] = s.shape;
    if (layer >= L || head >= H) return;
    const labels = s.tokens.map((t, i) => `${i}:${t}`);
    const key = labels.join('\u0001');
    const t = this.t;
    const num = (v) => fixed(t.lang, v, 2);
    const title = this.name ? t('lm.detail.titleNamed', { name: this.name, layer: layer + 1, head: head + 1 }) : t('lm.detail.title', { layer: layer + 1, head: head + 1 });
    // The figure and its table are built once per sequence; another head on it fills them again.
    if (!this.shown || this.shown.key !== key) {
      const hm = createHeatmap({ title, rowLabels: labels, colLabels: labels, testid: `${this.prefix}-detail-table`,
        fileName: this.fileName(layer, head), onExport: this.onExport, t });
      this.shown = { key, hm, live: liveHeatmap(hm), head: `${layer}.${head}` };
      this.box.replaceChildren(hm.element);
      full = true;
    } else if (this.shown.head !== `${layer}.${head}`) {
      this.shown.head = `${layer}.${head}`;
      this.shown.hm.setFileName(this.fileName(layer, head));
      full = true;
    }
    const score = leadingLabels(s.scores).find((q) => q.layer === layer && q.head === head);
    const d = describeHead(score, null, t);
    this.shown.hm.setTitle(t('lm.detail.labelled', { title, tag: d.tag }));
    setText(this.title, t('lm.detail.opened', { title }));
    const scores = SCORE_FIELDS.filter(([k]) => Number.isFinite(score[k])).map(([k, n]) => t('lm.detail.score', { name: t(`lm.label.${n}`), value: num(score[k]) }));
    setText(this.text, `${d.kind === 'none' ? t('lm.detail.noLabel', { means: d.means }) : t('lm.detail.withLabel', { tag: d.tag, means: d.means })} ` +
      t('lm.detail.scores', { scores: scores.join(', ') }) + (Number.isFinite(score.coreference) && !Number.isFinite(score.agreement) ? ` ${corefNote(s, layer * H + head, score, t)}` : ''));
    // While training only the cells' colours change (one canvas at T = 32); the numbers follow when a
    // head is opened or training stops.
    this.shown.live.update(s.weights, (layer * H + head) * T * T, { full: full || !running });
    this.box.dataset.head = `${layer + 1}.${head + 1}`;
  }
}

/** "Heads on": a checkbox per head; a change asks setHead(layer, head, on), and settled() follows its answer. */
export class HeadSwitches {
  /** @param {{ setHead: (layer: number, head: number, on: boolean) => Promise<void>, settled: () => void }} o */
  constructor({ setHead, settled, t }) {
    Object.assign(this, { setHead, settled, t });
    this.boxes = [];
    this.pending = 0;  // requests on their way: a snapshot answering an earlier one must not flip a box back
    this.element = el('div', { class: 'switches', dataset: { testid: 'lm-switches' } });
  }

  build({ layers, heads }) {
    this.boxes = [];
    const labels = [];
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const box = el('input', { type: 'checkbox', checked: true, id: uid('on'), dataset: { testid: `lm-switch-${l + 1}-${h + 1}` } });
        box.addEventListener('change', () => {
          this.pending += 1;
          this.setHead(l, h, box.checked).finally(() => {
            this.pending -= 1;
            if (this.pending === 0) this.settled();
          });
        });
        this.boxes.push(box);
        labels.push(el('label', { class: 'check', for: box.id }, box, this.t('lm.switch', { layer: l + 1, head: h + 1 })));
      }
    }
    this.element.replaceChildren(...labels);
  }

  /** The boxes show `enabled` (with `always`, even while a switch's request is on its way). */
  show(enabled, always = false) {
    if (this.pending && !always) return;
    this.boxes.forEach((b, i) => { if (b.checked !== enabled[i]) b.checked = enabled[i]; });
  }
}

/** The head scores of a run's snapshot as CSV (one row per head; english adds its agreement and selection scores). */
export function scoresCSV(s) {
  const english = s.scores.some((q) => Number.isFinite(q.agreement));
  const lines = [`layer,head,label,previous_token,induction,duplicate_token,first_token,coreference,${english ? 'agreement,selection,' : ''}enabled`];
  const v = (x) => (Number.isFinite(x) ? String(x) : '');
  s.scores.forEach((q, i) => lines.push([q.layer + 1, q.head + 1, q.label || '', v(q.previousToken), v(q.induction), v(q.duplicateToken),
    v(q.firstToken), v(q.coreference), ...(english ? [v(q.agreement), v(q.selection)] : []), s.enabled[i] ? 1 : 0].join(',')));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Cricket: which query the coreference score reads, where the rows of “it” and “was” point on the drawn
 * sentence, and the fixed-position baseline (headReport's positionPeak and bestFixedPosition).
 */
export function corefNote(s, i, score, t) {
  const num = (v) => fixed(t.lang, v, 2);
  const rows = ['it', 'was'].map((word) => rowPeak(s, i, word)).filter(Boolean)
    .map((p) => t('lm.coref.row', { query: p.query, weight: num(p.weight), key: p.key }));
  const base = Number.isFinite(s.bestFixedPosition) ? t('lm.coref.base', { best: num(s.bestFixedPosition) }) : '';
  return t('lm.coref.note', { rows: rows.length ? t('lm.coref.rows', { rows: rows.join(t('lm.coref.and')) }) : '', peak: num(score.positionPeak), base });
}

/** A cell's trend: arrow, sparkline and, for screen readers, the words. */
function drawTrend(x, trend, t) {
  x.trend.hidden = !trend;
  if (!trend) return;
  x.trend.dataset.direction = trend.direction;
  setText(x.arrow, trend.arrow);
  setText(x.trendText, t(`lm.trend.${trend.direction}`, { from: fixed(t.lang, trend.from, 2) }));
  // Scores are 0..1: the line's height is the score, so 0.5 (a label) is half way up.
  const n = trend.points.length;
  x.line.setAttribute('points', trend.points.map((v, k) => `${(n > 1 ? k / (n - 1) : 0).toFixed(3)},${(1 - Math.min(1, Math.max(0, v))).toFixed(3)}`).join(' '));
}

/** One head's T × T weights as T × T pixels (the canvas is scaled up by CSS, pixelated). */
function drawMini(canvas, weights, offset, T) {
  if (canvas.width !== T) { canvas.width = T; canvas.height = T; }
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const image = ctx.createImageData(T, T);
  for (let i = 0; i < T * T; i++) viridisInto(weights[offset + i], image.data, 4 * i);
  ctx.putImageData(image, 0, 0);
}
