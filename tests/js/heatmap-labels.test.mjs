// Issue 32: at 360 px the heatmap's key labels overlapped (24 keys, rotated by 45°, 9 px apart).
// heatmapFigure lays out shapes without the DOM except to measure text: a stand-in measures each
// character as 0.6 em, and the test checks the geometry: rotated column labels one line of text
// apart across their direction (Δx · sin 45°), row labels one line apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= {
  createElement: () => ({ getContext: () => ({ font: '12px sans-serif', measureText(t) { return { width: t.length * 0.6 * parseFloat(/(\d+(\.\d+)?)px/.exec(this.font)?.[1] ?? 12) }; } }) }),
};
const { heatmapFigure } = await import('../../web/components/shared/render/heatmap.js');

const labels = (n) => Array.from({ length: n }, (_, i) => `${i}:tok${i}`);

for (const [n, fitWidth] of [[24, 320], [24, 1200], [64, 320], [12, 320], [200, 900]]) {
  test(`${n} tokens in ${fitWidth} px: no two labels overlap, and the first is drawn`, () => {
    const values = labels(n).map(() => labels(n).map(() => 0.5));
    const fig = heatmapFigure({ rowLabels: labels(n), colLabels: labels(n), values, fitWidth });
    const texts = fig.shapes.filter((s) => s.type === 'text');
    const cols = texts.filter((s) => labels(n).includes(s.text) && (s.rotate === -45 || s.anchor === 'middle'));
    const rows = texts.filter((s) => labels(n).includes(s.text) && s.anchor === 'end');
    assert.ok(cols.length >= 1 && rows.length >= 1, 'labels drawn');
    assert.equal(cols[0].text, '0:tok0');
    for (let i = 1; i < cols.length; i++) {
      const dx = cols[i].x - cols[i - 1].x;
      const gap = cols[i].rotate ? dx * Math.SQRT1_2 : dx - 0.6 * cols[i].size * (cols[i].text.length + cols[i - 1].text.length) / 2;
      assert.ok(gap >= cols[i].size, `column labels ${cols[i - 1].text} and ${cols[i].text}: ${gap.toFixed(1)} px apart, size ${cols[i].size}`);
    }
    for (let i = 1; i < rows.length; i++) {
      const dy = rows[i].y - rows[i - 1].y;
      assert.ok(dy >= rows[i].size, `row labels ${rows[i - 1].text} and ${rows[i].text}: ${dy.toFixed(1)} px apart, size ${rows[i].size}`);
    }
  });
}
