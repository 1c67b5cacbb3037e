// The lines view of one head: query tokens on the left, key tokens on the
// right, one stroke per pair whose thickness and opacity follow the weight.

import { clip } from '../../../lib/teach/format.js';
import { textWidth } from './figure.js';

export const MAX_LINE_TOKENS = 64;

/** weights: Float32Array [tQ*tK] (row-major, one head). */
export function linesFigure({ queryTokens, keyTokens, weights, highlight = -1, title = '', width = 520, queryLabel = 'query', keyLabel = 'key' }) {
  const tQ = queryTokens.length, tK = keyTokens.length;
  const row = Math.max(26, Math.min(40, 200 / Math.max(tQ, tK, 1)));
  const size = 13;
  const qText = queryTokens.map((t) => clip(t, 16));
  const kText = keyTokens.map((t) => clip(t, 16));
  // Room for the tokens and for the column words ("query", "consulta") above them.
  const qW = Math.max(textWidth(queryLabel, 11), ...qText.map((t) => textWidth(t, size, 600))) + 8;
  const kW = Math.max(textWidth(keyLabel, 11), ...kText.map((t) => textWidth(t, size, 600))) + 8;
  const titleH = title ? 26 : 0;
  const top = titleH + 26;
  const x1 = 8 + qW, x2 = Math.max(x1 + 140, width - 8 - kW);
  const figW = Math.ceil(x2 + kW + 8);
  const height = top + Math.max(tQ, tK) * row + 8;
  const yq = (i) => top + i * row + row / 2 + ((Math.max(tQ, tK) - tQ) * row) / 2;
  const yk = (j) => top + j * row + row / 2 + ((Math.max(tQ, tK) - tK) * row) / 2;
  const shapes = [];
  if (title) shapes.push({ type: 'text', x: 0, y: 12, text: title, size: 14, weight: 600, fill: { role: 'text' } });
  shapes.push({ type: 'text', x: x1 - 4, y: titleH + 10, text: queryLabel, anchor: 'end', size: 11, fill: { role: 'muted' } });
  shapes.push({ type: 'text', x: x2 + 4, y: titleH + 10, text: keyLabel, size: 11, fill: { role: 'muted' } });
  const order = [];
  for (let i = 0; i < tQ; i++) if (i !== highlight) order.push(i);
  if (highlight >= 0 && highlight < tQ) order.push(highlight);  // highlighted query drawn last, on top
  for (const i of order) {
    for (let j = 0; j < tK; j++) {
      const w = weights ? weights[i * tK + j] : 0;
      if (!(w > 0.004)) continue;
      const hot = i === highlight;
      const faded = highlight >= 0 && !hot;
      shapes.push({ type: 'line', x1: x1 + 4, y1: yq(i), x2: x2 - 4, y2: yk(j),
        stroke: hot ? { role: 'highlight' } : { role: 'accent' }, strokeWidth: 0.6 + 9 * w,
        opacity: faded ? 0.07 + 0.12 * w : 0.18 + 0.82 * w });
    }
  }
  qText.forEach((t, i) => shapes.push({ type: 'text', x: x1 - 4, y: yq(i), text: t, anchor: 'end', size, weight: i === highlight ? 700 : 500,
    fill: i === highlight ? { role: 'highlight' } : { role: 'text' } }));
  kText.forEach((t, j) => shapes.push({ type: 'text', x: x2 + 4, y: yk(j), text: t, size, weight: 500, fill: { role: 'text' } }));
  return { width: figW, height, shapes, rows: { top, row, tQ, yq } };
}
