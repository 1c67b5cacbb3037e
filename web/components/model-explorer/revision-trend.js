// "Across training" in <headlab-model-explorer> (issue 34): for a Pythia model from the hub, each
// head's induction score at several training revisions, one line per head. It renders state only:
// web/lib/teach/revision-trend.js (DOM-free, tested in Node) runs the revisions one after another
// through the explorer's controller (scoreRevision: the Worker loads each revision beside the
// explorer's model, takes headScores() and frees it; revisions fetched before come from the browser's
// cache, so they load offline). Words come from the explorer's catalogue (explorer.trend.*); the
// revision names a learner types go into the page as text only.

import { el, uid, setText, announce } from '../shared/render/dom.js';
import { asImage, figureToSVG, updateFigure, textWidth } from '../shared/render/figure.js';
import { explainLoadError } from '../../lib/teach/explorer-controller.js';
import {
  RevisionTrend, DEFAULT_REVISIONS, hasTrainingRevisions, parseRevisions, ordered, topHeads,
} from '../../lib/teach/revision-trend.js';

/** Lines drawn strongly: the top heads of the last revision (Okabe–Ito colours, each also named in the legend). */
export const TOP_HEADS = 3;
const TOP_COLOURS = ['#d55e00', '#0072b2', '#009e73'];

export const TREND_CSS = `
.trend .run-row { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: end; margin: 0.5rem 0; }
.trend .run-row .field { display: flex; flex-direction: column; align-items: stretch; gap: 0.15rem; margin: 0; flex: 1 1 16rem; min-width: 0; max-width: 40rem; }
.trend .run-row .field > label { min-width: 0; }
.trend .run-row input[type="text"] { min-width: 0; }
.trend .run-progress { display: flex; flex-wrap: wrap; gap: 0.3rem 0.7rem; align-items: center; }
.trend .run-progress progress { flex: 1 1 10rem; height: 1rem; accent-color: var(--hl-accent); }
.trend .run-progress .what { font-variant-numeric: tabular-nums; font-size: 0.88rem; overflow-wrap: anywhere; }
.trend .chart svg { max-width: 100%; height: auto; }
.trend ul.failures { margin: 0.3rem 0; padding-left: 1.2rem; color: var(--hl-error); overflow-wrap: anywhere; }
.trend ul.failures:empty { display: none; }
.trend table { min-width: min(100%, 18rem); }
.trend table caption { text-align: left; }
.trend table td.num { font-variant-numeric: tabular-nums; text-align: right; }
`;

/** A head as the grid names it: L1 H2 (from 1). */
const headLabel = (layer, head) => `L${layer + 1} H${head + 1}`;

/**
 * The chart: x = the revisions in training order, evenly spaced (Pythia's steps run from 0 to 143000,
 * and the phase change is in the first few thousand: even spacing shows it where a linear axis would
 * crush it into the left edge); y = induction score, from 0 (to 0.1, 0.25, 0.5 or 1). One polyline per head (`data-head`
 * "layer.head" from 0, `data-scores` its values), faint; the top heads of the last revision strong, in
 * colour, named in the legend and drawn last. Pure: no DOM.
 * @param {{ points: {revision: string, scores: number[][]}[], top: {layer: number, head: number}[],
 *   width?: number, yLabel?: string, fmt?: Function }} o
 */
export function trendFigure({ points, top, width = 560, yLabel = '', fmt = (x) => String(x) }) {
  const pts = ordered(points);
  const left = 58, right = 16, bottom = 40;
  const shapes = [];
  // Legend: the strong heads.
  let x = left;
  top.forEach((h, i) => {
    shapes.push({ type: 'line', key: `legend-line-${i}`, x1: x, y1: 10, x2: x + 18, y2: 10, stroke: TOP_COLOURS[i], strokeWidth: 3 });
    const label = headLabel(h.layer, h.head);
    shapes.push({ type: 'text', key: `legend-text-${i}`, x: x + 24, y: 10, text: label, size: 11, fill: { role: 'text' } });
    x += 24 + textWidth(label, 11) + 16;
  });
  const topY = 28, height = 230, plotH = height - topY - bottom, plotW = width - left - right;
  const n = pts.length;
  // Up to the smallest of 0.1, 0.25, 0.5, 1 above every score: an untrained model's scores are all small.
  const high = Math.max(0, ...pts.flatMap((p) => p.scores.flat().filter(Number.isFinite)));
  const yMax = [0.1, 0.25, 0.5, 1].find((m) => high <= m) ?? 1;
  const X = (i) => left + (n <= 1 ? plotW / 2 : (i / (n - 1)) * plotW);
  const Y = (v) => topY + plotH - (Math.max(0, Math.min(yMax, v)) / yMax) * plotH;
  for (const t of [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax)) {
    shapes.push({ type: 'line', key: 'grid', x1: left, y1: Y(t), x2: left + plotW, y2: Y(t), stroke: { role: 'muted' }, strokeWidth: 1, opacity: t === 0 ? 0.8 : 0.2 });
    shapes.push({ type: 'text', key: 'ytick', x: left - 5, y: Y(t), text: fmt(t, t === 0 || t === 1 ? 0 : t < 0.1 ? 3 : 2), anchor: 'end', size: 10, fill: { role: 'muted' } });
  }
  const every = Math.max(1, Math.ceil((n * 70) / plotW));
  pts.forEach((p, i) => {
    if (i % every && i !== n - 1) return;
    shapes.push({ type: 'text', key: 'xtick', x: X(i), y: topY + plotH + 12, text: p.revision, anchor: n > 1 && i === 0 ? 'start' : n > 1 && i === n - 1 ? 'end' : 'middle', size: 10, fill: { role: 'muted' } });
  });
  if (yLabel) shapes.push({ type: 'text', key: 'ylabel', x: 9, y: topY + plotH / 2, text: yLabel, anchor: 'middle', size: 10, rotate: -90, fill: { role: 'muted' } });
  const layers = pts[0]?.scores.length ?? 0, heads = pts[0]?.scores[0]?.length ?? 0;
  const strong = new Map(top.map((h, i) => [`${h.layer}.${h.head}`, i]));
  const lines = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) {
      const values = pts.map((p) => p.scores[layer]?.[head]);
      const coords = values.map((v, i) => [X(i), Y(v)]).filter((_, i) => Number.isFinite(values[i]));
      const k = strong.get(`${layer}.${head}`);
      lines.push({ k, shape: {
        type: 'polyline', key: `head-${layer}-${head}`, points: coords.length === 1 ? [coords[0], coords[0]] : coords,
        stroke: k === undefined ? { role: 'muted' } : TOP_COLOURS[k], strokeWidth: k === undefined ? 1.2 : 3, opacity: k === undefined ? 0.4 : 1,
        data: { head: `${layer}.${head}`, scores: values.join(','), top: k === undefined ? '' : String(k + 1) },
      } });
    }
  }
  // Faint lines first, the strong ones on top in order.
  lines.sort((a, b) => (a.k ?? -1) - (b.k ?? -1));
  for (const { shape, k } of lines) {
    shapes.push(shape);
    if (k !== undefined) for (const [cx, cy] of shape.points) shapes.push({ type: 'rect', key: `dot-${k}`, x: cx - 3, y: cy - 3, w: 6, h: 6, fill: TOP_COLOURS[k] });
  }
  return { width, height, shapes };
}

const kept = new WeakMap();

/**
 * Builds the section after `anchor` for the explorer element `host` (from its build(), again after a
 * change of language: the run and its points stay); it follows the host's events from then on.
 */
export function mountRevisionTrend(host, anchor) {
  const panel = new RevisionTrendPanel(host);
  anchor.after(panel.element);
  return panel;
}

export class RevisionTrendPanel {
  constructor(host) {
    this.host = host;
    let state = kept.get(host);
    if (!state) {
      state = { trend: null, modelKey: null, text: DEFAULT_REVISIONS.join(', '), panel: null };
      state.trend = new RevisionTrend({
        score: (revision, signal) => host.controller.scoreRevision(revision, signal),
        emit: (type, detail) => state.panel?.onTrend(type, detail),
      });
      kept.set(host, state);
      const rerender = () => state.panel?.render();
      for (const type of ['headlab-load', 'headlab-state']) host.addEventListener(type, rerender);
    }
    this.state = state;
    state.panel = this;
    this._svg = null;
    this.build();
    this.render();
  }

  get t() { return this.host.t; }
  get trend() { return this.state.trend; }

  build() {
    const t = this.t;
    this.input = el('input', { type: 'text', id: uid('revisions'), value: this.state.text, spellcheck: 'false', autocomplete: 'off',
      dataset: { testid: 'trend-revisions' } });
    this.hint = el('span', { id: uid('revisions-hint'), class: 'small muted' }, t('explorer.trend.hint'));
    this.input.setAttribute('aria-describedby', this.hint.id);
    this.input.addEventListener('input', () => { this.state.text = this.input.value; setText(this.inputError, ''); });
    this.input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.run(); } });
    this.inputError = el('p', { class: 'text-error', role: 'alert', dataset: { testid: 'trend-input-error' } });
    this.runButton = el('button', { type: 'button', class: 'btn btn--primary', dataset: { action: 'trend-run', testid: 'trend-run' },
      on: { click: () => (this.trend.state === 'running' ? this.trend.stop() : this.run()) } }, t('explorer.trend.run'));
    this.progressBar = el('progress', { max: 1, value: 0, 'aria-label': t('explorer.trend.progress'), dataset: { testid: 'trend-progress' } });
    this.progressText = el('span', { class: 'what', dataset: { testid: 'trend-progress-text' } });
    this.progressBox = el('div', { class: 'run-progress', hidden: true }, this.progressBar, this.progressText);
    this.failures = el('ul', { class: 'failures', dataset: { testid: 'trend-failures' } });
    this.chart = el('div', { class: 'chart', dataset: { testid: 'trend-chart' } });
    this.summary = el('p', { class: 'small', dataset: { testid: 'trend-summary' } });
    this.tableBox = el('div', { class: 'table-scroll', dataset: { testid: 'trend-table' } });
    this.status = el('p', { class: 'sr-only', role: 'status' });
    this.element = el('section', { class: 'part trend', dataset: { testid: 'explorer-trend' } },
      el('h3', {}, t('explorer.trend.title')),
      el('p', { class: 'small muted explain' }, t('explorer.trend.explain')),
      el('div', { class: 'run-row' },
        el('div', { class: 'field' }, el('label', { for: this.input.id }, t('explorer.trend.revisions')), this.input, this.hint),
        this.runButton),
      this.inputError, this.progressBox, this.status, this.failures, this.summary, this.chart, this.tableBox);
  }

  /** The host's model when it has training revisions, with a key that changes with the model. */
  model() {
    const c = this.host.controller;
    if (!c?.hasModel || !hasTrainingRevisions(c.info, c.source)) return null;
    return { key: `${c.source.id}|${c.source.hubUrl ?? ''}|${c.source.revision ?? ''}`, info: c.info };
  }

  run() {
    if (!this.model() || this.trend.state === 'running') return;
    const { revisions, bad } = parseRevisions(this.input.value);
    if (bad.length) return setText(this.inputError, this.t('explorer.trend.bad', { names: bad.join(', ') }));
    if (!revisions.length) return setText(this.inputError, this.t('explorer.trend.none'));
    setText(this.inputError, '');
    this.trend.run(revisions).catch((e) => setText(this.inputError, String(e?.message ?? e)));
  }

  onTrend(type) {
    if (type === 'state') {
      const s = this.trend.state;
      if (s === 'running') announce(this.status, this.t('explorer.trend.started'));
      else if (s === 'done') announce(this.status, this.t('explorer.trend.finished', { n: this.trend.points.length, total: this.trend.revisions.length }));
      else if (s === 'cancelled') announce(this.status, this.t('explorer.trend.stopped', { n: this.trend.points.length }));
    }
    this.render();
  }

  render() {
    const m = this.model();
    this.element.hidden = !m;
    if (!m) {
      // Another model (or none): a run for the old one stops, its points go.
      if (this.state.modelKey !== null) { this.trend.reset(); this.state.modelKey = null; }
      return;
    }
    if (this.state.modelKey !== m.key) {
      if (this.state.modelKey !== null) this.trend.reset();
      this.state.modelKey = m.key;
    }
    const t = this.t, tr = this.trend, running = tr.state === 'running';
    setText(this.runButton, t(running ? 'explorer.trend.stop' : 'explorer.trend.run'));
    this.runButton.dataset.running = running ? 'true' : 'false';
    const p = tr.progress;
    this.progressBox.hidden = !p;
    if (p) {
      this.progressBar.max = p.total;
      this.progressBar.value = p.done;
      setText(this.progressText, p.revision
        ? t('explorer.trend.loading', { revision: p.revision, i: p.done + 1, total: p.total })
        : t('explorer.trend.finished', { n: tr.points.length, total: p.total }));
    }
    this.failures.replaceChildren(...tr.failures.map((f) => el('li', {}, t('explorer.trend.failed', { revision: f.revision, why: this.why(f) }))));
    this.renderChart();
  }

  /** Why a revision failed, in words: a revision the hub lacks is named as such, else as a load's error. */
  why(f) {
    const t = this.t, online = typeof navigator === 'undefined' || navigator.onLine !== false;
    if (online && (f.code === 'not-found' || (f.code === 'http' && f.params?.status === 404))) return t('explorer.trend.noRevision', { revision: f.revision });
    return explainLoadError(f.message, { t, code: f.code, online, params: f.params, what: t('explorer.trend.what', { revision: f.revision }) });
  }

  renderChart() {
    const t = this.t, pts = this.trend.points;
    if (!pts.length) {
      this.chart.replaceChildren();
      this._svg = null;
      this.tableBox.replaceChildren();
      setText(this.summary, '');
      return;
    }
    const top = topHeads(pts, TOP_HEADS);
    const fig = trendFigure({ points: pts, top, yLabel: t('explorer.trend.yLabel'), fmt: (x, d) => this.host.fmt(x, d) });
    const label = t('explorer.trend.chartLabel', { n: pts.length, heads: pts[0].scores.length * (pts[0].scores[0]?.length ?? 0) });
    if (this._svg?.isConnected && this._svg.parentNode === this.chart) {
      updateFigure(this._svg, fig);
      this._svg.setAttribute('aria-label', label);
      this._svg.style.maxWidth = `${fig.width}px`;
    } else {
      this._svg = asImage(figureToSVG(fig), fig, label);
      this.chart.replaceChildren(this._svg);
    }
    const last = ordered(pts).at(-1);
    setText(this.summary, top.length
      ? t('explorer.trend.summary', { revision: last.revision, heads: top.map((h) => `${headLabel(h.layer, h.head)} (${this.host.fmt(h.score, 2)})`).join(', ') })
      : '');
    // The numbers behind the strong lines, as a table.
    const order = ordered(pts);
    this.tableBox.replaceChildren(el('table', {},
      el('caption', { class: 'small muted' }, t('explorer.trend.tableCaption')),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('explorer.trend.head')), ...order.map((p) => el('th', { scope: 'col' }, p.revision)))),
      el('tbody', {}, ...top.map((h) => el('tr', {}, el('th', { scope: 'row' }, headLabel(h.layer, h.head)),
        ...order.map((p) => el('td', { class: 'num' }, this.host.fmt(p.scores[h.layer][h.head], 3))))))));
  }
}
