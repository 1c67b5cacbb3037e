// The heatmap's diverging scale and framed cells (the findings panel's patching and attribution grids):
// SCALES.diverging puts 0 of a symmetric range on near-white, negative values on blue, positive on red,
// with readable text on each; heatmapFigure colours cells by the scale it is given and draws each framed
// cell's frame (over a white halo) inside that cell, skipping cells outside the grid.
import { test } from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= {
  createElement: () => ({ getContext: () => ({ font: '12px sans-serif', measureText(t) { return { width: t.length * 7 }; } }) }),
};
const { heatmapFigure } = await import('../../web/components/shared/render/heatmap.js');
const { SCALES } = await import('../../web/components/shared/render/colormap.js');

const rgb = (css) => css.match(/\d+/g).map(Number);
/** Relative luminance (WCAG) of an rgb() colour. */
const luminance = (css) => rgb(css).map((c) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; })
  .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

test('the diverging scale: blue below the middle, near-white at it, red above; text readable on every step', () => {
  const [r0, g0, b0] = rgb(SCALES.diverging.css(0));
  const [r1, g1, b1] = rgb(SCALES.diverging.css(1));
  const mid = rgb(SCALES.diverging.css(0.5));
  assert.ok(b0 > r0 && b0 > g0, `t = 0 is blue: ${SCALES.diverging.css(0)}`);
  assert.ok(r1 > g1 && r1 > b1, `t = 1 is red: ${SCALES.diverging.css(1)}`);
  assert.ok(mid.every((c) => c >= 240), `t = 0.5 is near white: ${mid}`);
  for (let i = 0; i <= 20; i++) {
    const t = i / 20;
    const bg = SCALES.diverging.css(t);
    const fg = `rgb(${rgb(SCALES.diverging.textOn(t).replace(/^#(..)(..)(..)$/, (_, a, b, c) => `${parseInt(a, 16)},${parseInt(b, 16)},${parseInt(c, 16)}`)).join(', ')})`;
    assert.ok(contrast(bg, fg) >= 4.5, `text on ${bg} (t = ${t}): contrast ${contrast(bg, fg).toFixed(2)}`);
    const px = new Uint8ClampedArray(4);
    SCALES.diverging.into(t, px, 0);
    assert.deepEqual([...px], [...rgb(bg), 255], `into(${t}) paints css(${t})`);
  }
});

test('heatmapFigure colours by the scale given and frames the cells asked for, inside them', () => {
  const values = [[-2, 0, 2], [1, -1, 0.5]];
  const labels = (n) => Array.from({ length: n }, (_, i) => String(i));
  const outlines = [{ r: 1, c: 2, stroke: '#009e73', dash: '5 3' }, { r: 5, c: 0, stroke: '#000000' }];
  const fig = heatmapFigure({ rowLabels: labels(2), colLabels: labels(3), values, min: -2, max: 2, scale: SCALES.diverging, outlines });
  const cells = fig.shapes.filter((s) => s.data);
  assert.equal(cells.length, 6);
  const at = (r, c) => cells.find((s) => s.data.r === String(r) && s.data.c === String(c));
  assert.equal(at(0, 0).fill, SCALES.diverging.css(0));
  assert.equal(at(0, 1).fill, SCALES.diverging.css(0.5));
  assert.equal(at(0, 2).fill, SCALES.diverging.css(1));
  const frames = fig.shapes.filter((s) => s.type === 'rect' && s.fill === 'none' && (s.stroke === '#009e73' || s.stroke === '#ffffff' || s.stroke === '#000000'));
  assert.equal(frames.length, 2, 'the frame and its halo; the cell outside the grid is skipped');
  const cell = at(1, 2);
  for (const f of frames) {
    assert.ok(f.x - f.strokeWidth / 2 >= cell.x && f.y - f.strokeWidth / 2 >= cell.y, 'the frame starts inside the cell');
    assert.ok(f.x + f.w + f.strokeWidth / 2 <= cell.x + cell.w && f.y + f.h + f.strokeWidth / 2 <= cell.y + cell.h, 'and ends inside it');
  }
  assert.equal(frames.find((f) => f.stroke === '#009e73').dash, '5 3');
  // Without a scale, viridis as before.
  assert.equal(heatmapFigure({ rowLabels: ['a'], colLabels: ['b'], values: [[1]] }).shapes.find((s) => s.data).fill, SCALES.viridis.css(1));
});
