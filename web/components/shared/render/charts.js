// Small charts as figures (see figure.js): stacked histograms that share an
// x axis, a bar chart, and a line chart. Binning and sorting only; every
// number plotted comes from the wasm module.

/** Series colours safe for the common colour-vision deficiencies (blue / orange). */
export const SERIES = [
  { color: '#2f6fd0', dash: false },
  { color: '#d55e00', dash: true },
];

import { textWidth, fitText } from './figure.js';
import { fixed } from '../../../lib/i18n/index.js';

const LEGEND_ROW = 15;

/** The widest text centred at `x` that stays inside a figure `width` wide. */
const centred = (x, width) => 2 * Math.min(x, width - x) - 4;

/**
 * A legend along the top of a chart: one marker and label per series, left to
 * right, wrapping to a new row where the next would pass `right` (narrow
 * screens), so no label is cut. Returns { shapes, rows }.
 */
function legend(series, left, right, marker) {
  const shapes = [];
  let x = left, row = 0;
  const inset = marker === 'line' ? 24 : 14;
  for (const s of series) {
    const label = fitText(s.label, 11, right - left - inset);
    const w = inset + textWidth(label.text, label.size);
    if (x > left && x + w > right) { x = left; row += 1; }
    const y = 9 + row * LEGEND_ROW;
    shapes.push(marker === 'line'
      ? { type: 'line', x1: x, y1: y, x2: x + 18, y2: y, stroke: s.color, strokeWidth: 3 }
      : { type: 'rect', x, y: y - 5, w: 10, h: 10, fill: s.color });
    shapes.push({ type: 'text', x: x + inset, y, text: label.text, size: label.size, fill: { role: 'text' } });
    x += w + 16;
  }
  return { shapes, rows: row + 1 };
}

function niceTicks(lo, hi, count = 5) {
  const span = hi - lo || 1;
  const step0 = span / count;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= step0) ?? step0;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) ticks.push(Math.abs(t) < 1e-12 ? 0 : t);
  return ticks;
}

/** A tick value; `lang` gives the decimal sign (every chart takes `lang`, default 'en'). */
function tickText(t, lang = 'en') {
  if (Number.isInteger(t)) return String(t);
  return fixed(lang, t, Math.abs(t) >= 10 ? 0 : Math.abs(t) >= 1 ? 1 : 2);
}

/** Counts of `values` in `bins` equal bins over [lo, hi]; values outside go to the end bins. */
export function histogram(values, lo, hi, bins) {
  const counts = new Array(bins).fill(0);
  const k = bins / (hi - lo || 1);
  for (let i = 0; i < values.length; i++) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor((values[i] - lo) * k)));
    counts[b] += 1;
  }
  return counts;
}

/**
 * Histograms stacked in rows that share one x axis.
 * series: [{ label, values, color }]; marks: [{ x, label }] vertical lines on every row.
 */
export function histogramsFigure({ series, lo, hi, bins = 40, log = false, xLabel = '', width = 520, rowHeight = 92, marks = [], lang = 'en', logLabel = ' (log of count)' }) {
  const left = 46, right = 14, gap = 26;
  const top = marks.some((m) => m.label) ? 24 : 8;
  const plotW = width - left - right;
  const shapes = [];
  const x = (v) => left + ((v - lo) / (hi - lo || 1)) * plotW;
  series.forEach((s, k) => {
    const y0 = top + k * (rowHeight + gap) + 16;
    const counts = histogram(s.values, lo, hi, bins);
    const scale = (c) => (log ? Math.log10(1 + c) : c);
    const maxC = Math.max(1, ...counts.map(scale));
    shapes.push({ type: 'text', x: left, y: y0 - 9, ...fitText(s.label, 12, width - left - 4, 600), weight: 600, fill: s.color });
    counts.forEach((c, b) => {
      const h = (scale(c) / maxC) * rowHeight;
      const bx = left + (b * plotW) / bins;
      if (h > 0) shapes.push({ type: 'rect', x: bx + 0.5, y: y0 + rowHeight - h, w: plotW / bins - 1, h, fill: s.color, opacity: 0.85 });
    });
    shapes.push({ type: 'line', x1: left, y1: y0 + rowHeight, x2: left + plotW, y2: y0 + rowHeight, stroke: { role: 'muted' }, strokeWidth: 1 });
    shapes.push({ type: 'text', x: left - 6, y: y0 + 4, text: String(Math.max(...counts)), anchor: 'end', size: 9, fill: { role: 'muted' } });
    shapes.push({ type: 'text', x: left - 6, y: y0 + rowHeight, text: '0', anchor: 'end', size: 9, fill: { role: 'muted' } });
    for (const m of marks) {
      if (m.x < lo || m.x > hi) continue;
      shapes.push({ type: 'line', x1: x(m.x), y1: y0 - 2, x2: x(m.x), y2: y0 + rowHeight, stroke: { role: 'highlight' }, strokeWidth: 2 });
      if (k === 0 && m.label) {
        shapes.push({ type: 'line', x1: left, y1: 9, x2: left + 14, y2: 9, stroke: { role: 'highlight' }, strokeWidth: 2 });
        shapes.push({ type: 'text', x: left + 18, y: 9, ...fitText(m.label, 11, width - left - 18 - 4), fill: { role: 'highlight' } });
      }
    }
  });
  const axisY = top + series.length * (rowHeight + gap) - gap + 16;
  for (const t of niceTicks(lo, hi)) {
    shapes.push({ type: 'line', x1: x(t), y1: axisY, x2: x(t), y2: axisY + 4, stroke: { role: 'muted' }, strokeWidth: 1 });
    shapes.push({ type: 'text', x: x(t), y: axisY + 12, text: tickText(t, lang), anchor: 'middle', size: 10, fill: { role: 'muted' } });
  }
  shapes.push({ type: 'text', x: left + plotW / 2, y: axisY + 27, ...fitText(xLabel + (log ? logLabel : ''), 11, centred(left + plotW / 2, width)), anchor: 'middle', fill: { role: 'muted' } });
  return { width, height: axisY + 36, shapes };
}

/** Bars for several series side by side per category (values in [0, max]). */
export function barsFigure({ series, max = 1, xLabel = '', yLabel = '', width = 520, height = 150, lang = 'en' }) {
  const left = 50, right = 10, bottom = 30;
  const key = legend(series, left, width - right, 'rect');
  const top = 24 + (key.rows - 1) * LEGEND_ROW;
  height += (key.rows - 1) * LEGEND_ROW;
  const n = Math.max(...series.map((s) => s.values.length));
  const plotW = width - left - right, plotH = height - top - bottom;
  const shapes = [...key.shapes];
  const slot = plotW / n;
  const bw = Math.max(1, (slot - 1) / series.length);
  series.forEach((s, k) => {
    s.values.forEach((v, i) => {
      const h = (Math.min(max, Math.max(0, v)) / max) * plotH;
      if (h > 0.2) shapes.push({ type: 'rect', x: left + i * slot + k * bw, y: top + plotH - h, w: bw, h, fill: s.color, opacity: 0.9 });
    });
  });
  shapes.push({ type: 'line', x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, stroke: { role: 'muted' }, strokeWidth: 1 });
  for (const t of [0, max / 2, max]) {
    const y = top + plotH - (t / max) * plotH;
    shapes.push({ type: 'text', x: left - 5, y, text: tickText(t, lang), anchor: 'end', size: 10, fill: { role: 'muted' } });
  }
  shapes.push({ type: 'text', x: left + plotW / 2, y: height - 8, ...fitText(xLabel, 11, centred(left + plotW / 2, width)), anchor: 'middle', fill: { role: 'muted' } });
  if (yLabel) shapes.push({ type: 'text', x: 10, y: top + plotH / 2, text: yLabel, anchor: 'middle', size: 10, rotate: -90, fill: { role: 'muted' } });
  return { width, height, shapes };
}

/**
 * Lines over a log2 x axis. series: [{ label, points: [[x, y]], color, dash }]; mark: x to outline.
 */
export function lineChartFigure({ series, xLabel = '', yLabel = '', yMax, width = 520, height = 210, mark = null, yRef = null, lang = 'en' }) {
  const left = 46, right = 14, bottom = 40;
  const key = legend(series, left, width - right, 'line');
  const top = 26 + (key.rows - 1) * LEGEND_ROW;
  height += (key.rows - 1) * LEGEND_ROW;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const lx0 = Math.log2(Math.min(...xs)), lx1 = Math.log2(Math.max(...xs));
  const ymax = yMax ?? Math.max(...series.flatMap((s) => s.points.map((p) => p[1])));
  const plotW = width - left - right, plotH = height - top - bottom;
  const X = (v) => left + ((Math.log2(v) - lx0) / (lx1 - lx0 || 1)) * plotW;
  const Y = (v) => top + plotH - (v / (ymax || 1)) * plotH;
  const shapes = [...key.shapes];
  series.forEach((s) => {
    for (let i = 1; i < s.points.length; i++) {
      const [a, b] = [s.points[i - 1], s.points[i]];
      if (s.dash) {
        // Dashes drawn as short segments so PNG and SVG look the same.
        const segs = 6;
        for (let j = 0; j < segs; j += 2) {
          const t0 = j / segs, t1 = (j + 1) / segs;
          shapes.push({ type: 'line', x1: X(a[0]) + (X(b[0]) - X(a[0])) * t0, y1: Y(a[1]) + (Y(b[1]) - Y(a[1])) * t0,
            x2: X(a[0]) + (X(b[0]) - X(a[0])) * t1, y2: Y(a[1]) + (Y(b[1]) - Y(a[1])) * t1, stroke: s.color, strokeWidth: 2.5 });
        }
      } else {
        shapes.push({ type: 'line', x1: X(a[0]), y1: Y(a[1]), x2: X(b[0]), y2: Y(b[1]), stroke: s.color, strokeWidth: 2.5 });
      }
    }
    for (const p of s.points) shapes.push({ type: 'rect', x: X(p[0]) - 2.5, y: Y(p[1]) - 2.5, w: 5, h: 5, fill: s.color });
  });
  if (yRef) {
    shapes.push({ type: 'line', x1: left, y1: Y(yRef.y), x2: left + plotW, y2: Y(yRef.y), stroke: { role: 'muted' }, strokeWidth: 1, opacity: 0.7 });
    shapes.push({ type: 'text', x: left + plotW, y: Y(yRef.y) - 8, ...fitText(yRef.label, 10, left + plotW - 4), anchor: 'end', fill: { role: 'muted' } });
  }
  if (mark !== null) {
    shapes.push({ type: 'line', x1: X(mark), y1: top, x2: X(mark), y2: top + plotH, stroke: { role: 'highlight' }, strokeWidth: 2 });
  }
  shapes.push({ type: 'line', x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, stroke: { role: 'muted' }, strokeWidth: 1 });
  const xsSorted = [...new Set(xs)].sort((a, b) => a - b);
  const every = Math.ceil(xsSorted.length / 8);
  xsSorted.forEach((v, i) => {
    if (i % every) return;
    shapes.push({ type: 'text', x: X(v), y: top + plotH + 12, text: String(v), anchor: 'middle', size: 10, fill: { role: 'muted' } });
  });
  for (const t of niceTicks(0, ymax, 4)) {
    shapes.push({ type: 'text', x: left - 5, y: Y(t), text: tickText(t, lang), anchor: 'end', size: 10, fill: { role: 'muted' } });
  }
  shapes.push({ type: 'text', x: left + plotW / 2, y: height - 8, ...fitText(xLabel, 11, centred(left + plotW / 2, width)), anchor: 'middle', fill: { role: 'muted' } });
  if (yLabel) shapes.push({ type: 'text', x: 11, y: top + plotH / 2, text: yLabel, anchor: 'middle', size: 10, rotate: -90, fill: { role: 'muted' } });
  return { width, height, shapes };
}
