// Training curves as a figure (see figure.js, which draws it on the page and
// exports it as SVG and PNG): steps on a linear x axis, the y axis linear or
// logarithmic (loss spans several decades), one line per series, vertical
// marks for events such as a head switched off. charts.js's line chart has a
// log2 x axis and a marker per point, made for a handful of sizes; curves have
// hundreds of points, thinned here to about one per two pixels. Each series is
// one 'polyline' shape: the page draws it as one <polyline> and redraws the chart
// in place several times a second (figure.js's updateFigure); forExport cuts it
// into the line shapes that figure.js turns into SVG and PNG files.

import { textWidth, figureToSVG } from './figure.js';

function niceStep(span, count) {
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
}

function linearTicks(lo, hi, count) {
  const step = niceStep(hi - lo || 1, count);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < 1e-12 ? 0 : +t.toPrecision(12));
  return out;
}

function tickText(t) {
  if (t === 0) return '0';
  if (Math.abs(t) >= 10000) return `${+(t / 1000).toPrecision(3)}k`;
  if (Number.isInteger(t)) return String(t);
  return String(+t.toPrecision(3));
}

/** Keeps the last point of each `px`-wide column, so a line has at most plotW/px points. */
export function thin(points, X, px = 2) {
  if (points.length <= 2) return points;
  const out = [];
  let column = null;
  for (let i = 0; i < points.length; i++) {
    const c = Math.floor(X(points[i][0]) / px);
    if (c === column && i !== points.length - 1) out[out.length - 1] = points[i];
    else { out.push(points[i]); column = c; }
  }
  return out;
}

/** Line shapes of a polyline; dashed lines are cut into on/off pieces along their length. */
function segments(shapes, pts, { color, width = 2.5, opacity, dash = false }) {
  const on = 7, off = 5;
  let phase = 0;
  for (let i = 1; i < pts.length; i++) {
    const [x1, y1] = pts[i - 1], [x2, y2] = pts[i];
    if (!dash) {
      shapes.push({ type: 'line', x1, y1, x2, y2, stroke: color, strokeWidth: width, opacity });
      continue;
    }
    const len = Math.hypot(x2 - x1, y2 - y1);
    let t = 0;
    while (t < len) {
      const inOn = phase < on;
      const left = inOn ? on - phase : on + off - phase;
      const d = Math.min(left, len - t);
      if (inOn && d > 0.2) {
        const a = t / len, b = (t + d) / len;
        shapes.push({ type: 'line', x1: x1 + (x2 - x1) * a, y1: y1 + (y2 - y1) * a, x2: x1 + (x2 - x1) * b, y2: y1 + (y2 - y1) * b,
          stroke: color, strokeWidth: width, opacity });
      }
      t += d;
      phase = (phase + d) % (on + off);
    }
  }
}

/**
 * @param {object} o
 * @param {{label: string, points: number[][], color: string, dash?: boolean, width?: number, opacity?: number}[]} o.series
 *   points are [step, value]
 * @param {number} [o.xMax]       right end of the x axis (at least the last step)
 * @param {boolean} [o.yLog]      logarithmic y axis (values below yMin are drawn at yMin)
 * @param {number} [o.yMin] @param {number} [o.yMax]
 * @param {(text: string) => string} [o.tick]  writes a y tick's text the page's way (a decimal comma)
 * @param {{x: number, label: string}[]} [o.marks]  vertical lines
 * @param {{y: number, label: string}} [o.yRef]     a horizontal reference line
 * @param {{x1: number, x2: number, label: string}[]} [o.spans]  shaded stretches of steps, labelled at the foot
 * With yMin and yMax given, values outside them are drawn at the edge.
 */
export function curvesFigure({ series, title = '', xLabel = 'training step', yLabel = '', xMax = 0, yLog = false, yMin, yMax,
  marks = [], yRef = null, spans = [], width = 520, height = 230, tick = (text) => text }) {
  const shapes = [];
  const left = 50, right = 14, bottom = 40;
  let y = 0;
  if (title) { shapes.push({ type: 'text', x: 0, y: 10, text: title, size: 14, weight: 600, fill: { role: 'text' } }); y = 24; }
  // Legend, wrapped to the width.
  let lx = left;
  const rowH = 18;
  y += 9;
  for (const s of series) {
    const w = 26 + textWidth(s.label, 11) + 16;
    if (lx + w > width && lx > left) { lx = left; y += rowH; }
    shapes.push({ type: 'polyline', points: [[lx, y], [lx + 20, y]], stroke: s.color, strokeWidth: Math.max(2, s.width ?? 2.5), opacity: s.opacity, dash: s.dash });
    shapes.push({ type: 'text', x: lx + 26, y, text: s.label, size: 11, fill: { role: 'text' } });
    lx += w;
  }
  const top = y + 16;
  const plotW = width - left - right, plotH = Math.max(60, height - top - bottom);
  const figH = top + plotH + bottom;

  const all = series.flatMap((s) => s.points.map((p) => p[1])).filter(Number.isFinite);
  const lastX = Math.max(1, xMax, ...series.map((s) => (s.points.length ? s.points[s.points.length - 1][0] : 0)));
  const x1 = linearTicks(0, lastX, 5).find((t) => t >= lastX) ?? lastX;
  const X = (v) => left + (v / x1) * plotW;
  let Y, yTicks;
  if (yLog) {
    const lo = yMin ?? 1e-3;
    const hi = Math.max(lo * 10, yMax ?? Math.max(lo * 10, ...all));
    const l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
    Y = (v) => top + plotH - ((Math.log10(Math.max(v, 10 ** l0)) - l0) / (l1 - l0 || 1)) * plotH;
    yTicks = [];
    const every = Math.ceil((l1 - l0 + 1) / 6);
    for (let k = l0; k <= l1; k += every) yTicks.push(10 ** k);
  } else {
    const lo = yMin ?? Math.min(0, ...all), hi = yMax ?? Math.max(lo + 1e-9, ...all);
    Y = (v) => top + plotH - ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo || 1)) * plotH;
    yTicks = linearTicks(lo, hi, 4);
  }

  for (const sp of spans) {
    const a = X(Math.max(0, sp.x1)), b = X(Math.min(x1, sp.x2));
    if (!(b > a)) continue;
    shapes.push({ type: 'rect', x: a, y: top, w: b - a, h: plotH, fill: { role: 'highlight' }, opacity: 0.08 });
    if (sp.label && b - a > textWidth(sp.label, 10) + 6) {
      shapes.push({ type: 'text', x: (a + b) / 2, y: top + plotH - 7, text: sp.label, anchor: 'middle', size: 10, fill: { role: 'muted' } });
    }
  }
  // Grid and axes.
  for (const t of yTicks) {
    shapes.push({ type: 'line', x1: left, y1: Y(t), x2: left + plotW, y2: Y(t), stroke: { role: 'border' }, strokeWidth: 1, opacity: 0.6 });
    const text = tick(yLog ? (t >= 1 ? String(t) : String(+t.toPrecision(1))) : tickText(t));
    shapes.push({ type: 'text', x: left - 6, y: Y(t), text, anchor: 'end', size: 10, fill: { role: 'muted' } });
  }
  shapes.push({ type: 'line', x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, stroke: { role: 'muted' }, strokeWidth: 1 });
  for (const t of linearTicks(0, x1, Math.max(2, Math.floor(plotW / 90)))) {
    shapes.push({ type: 'line', x1: X(t), y1: top + plotH, x2: X(t), y2: top + plotH + 4, stroke: { role: 'muted' }, strokeWidth: 1 });
    shapes.push({ type: 'text', x: X(t), y: top + plotH + 13, text: tickText(t), anchor: 'middle', size: 10, fill: { role: 'muted' } });
  }
  shapes.push({ type: 'text', x: left + plotW / 2, y: figH - 9, text: xLabel, anchor: 'middle', size: 11, fill: { role: 'muted' } });
  if (yLabel) shapes.push({ type: 'text', x: 11, y: top + plotH / 2, text: yLabel, anchor: 'middle', size: 11, rotate: -90, fill: { role: 'muted' } });
  if (yRef) {
    shapes.push({ type: 'polyline', points: [[left, Y(yRef.y)], [left + plotW, Y(yRef.y)]], stroke: { role: 'muted' }, strokeWidth: 1, dash: true });
    shapes.push({ type: 'text', x: left + plotW - 2, y: Y(yRef.y) + 9, text: yRef.label, anchor: 'end', size: 10, fill: { role: 'muted' } });
  }
  let lastLabel = -Infinity;
  for (const m of marks) {
    const mx = X(m.x);
    shapes.push({ type: 'line', x1: mx, y1: top, x2: mx, y2: top + plotH, stroke: { role: 'highlight' }, strokeWidth: 1.5, opacity: 0.8 });
    if (m.label && mx - lastLabel > 70) {
      const fits = mx + textWidth(m.label, 10) + 4 < left + plotW;
      shapes.push({ type: 'text', x: fits ? mx + 4 : mx - 4, y: top + 7, text: m.label, anchor: fits ? 'start' : 'end', size: 10, fill: { role: 'highlight' } });
      lastLabel = mx;
    }
  }
  for (const s of series) {
    const pts = thin(s.points.filter((p) => Number.isFinite(p[1])), X).map(([px, py]) => [X(px), Y(py)]);
    if (pts.length === 1) shapes.push({ type: 'rect', x: pts[0][0] - 2, y: pts[0][1] - 2, w: 4, h: 4, fill: s.color, opacity: s.opacity });
    if (pts.length > 1) shapes.push({ type: 'polyline', points: pts, stroke: s.color, strokeWidth: s.width ?? 2.5, opacity: s.opacity, dash: s.dash });
  }
  return { width, height: figH, shapes };
}

/** The figure with every polyline cut into line shapes, for figure.js's SVG and PNG export. */
export function forExport(fig) {
  const shapes = [];
  for (const s of fig.shapes) {
    if (s.type === 'polyline') segments(shapes, s.points, { color: s.stroke, width: s.strokeWidth, opacity: s.opacity, dash: s.dash });
    else shapes.push(s);
  }
  return { ...fig, shapes };
}

/**
 * The figure as the page draws it: each polyline one element, after the other shapes (the curves on top
 * of the grid and labels). figureToSVG draws it once; updateFigure redraws it in place.
 */
export function forPage(fig) {
  return { ...fig, shapes: [...fig.shapes.filter((s) => s.type !== 'polyline'), ...fig.shapes.filter((s) => s.type === 'polyline')] };
}

/** An <svg> of the figure for the page (forPage's order). */
export function curvesToSVG(fig) {
  return figureToSVG(forPage(fig));
}
