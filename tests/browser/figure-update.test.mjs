// Issue 32, point 5: charts and heatmaps are redrawn in place, in a real page (Chromium). The render
// modules are imported from web/ into an empty page; a heatmap (SVG cells, and one large enough for
// its canvas) and a training chart are drawn, then given new numbers: the same nodes must still be
// there (no node added, checked with a MutationObserver), holding the new numbers, and the result must
// equal the same numbers drawn from scratch in a fresh figure (the independent answer).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { REPO, launch, watch } from './helpers.mjs';

let server, browser, page;
const problems = [];

before(async () => {
  server = await serve({ port: 0, root: REPO });
  browser = await launch();
  page = watch(await browser.newPage({ viewport: { width: 1000, height: 800 } }), 'figure-update', problems);
  await page.goto(`${server.url}tests/browser/figure-update.html`);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

for (const n of [4, 20]) {
  test(`a ${n} × ${n} heatmap (${n * n > 256 ? 'canvas' : 'SVG'} cells) keeps its nodes on update and shows the new weights`, { timeout: 20_000 }, async () => {
    const r = await page.evaluate(async (n) => {
      const { createHeatmap } = await import('/web/components/shared/render/heatmap.js');
      const { viridis } = await import('/web/components/shared/render/colormap.js');
      const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      const labels = Array.from({ length: n }, (_, i) => `${i}:t${i}`);
      const weights = (seed) => Float32Array.from({ length: n * n }, (_, i) => ((i * 7 + seed * 13) % 17) / 16);
      const box = (hm) => { const d = document.createElement('div'); d.style.width = '600px'; d.append(hm.element); document.body.append(d); return hm; };
      const hm = box(createHeatmap({ title: 'live', rowLabels: labels, colLabels: labels }));
      hm.update(weights(1));
      await frame();
      const figure = hm.element.querySelector('.heatmap__figure');
      const svg = figure.querySelector('svg');
      const nodes = [...figure.querySelectorAll('*')];
      let added = 0;
      const watcher = new MutationObserver((records) => { for (const m of records) added += m.addedNodes.length; });
      watcher.observe(figure, { childList: true, subtree: true });
      hm.update(weights(2));
      await frame();
      watcher.disconnect();
      const after = [...figure.querySelectorAll('*')];
      // The same numbers drawn from scratch, at the same width.
      const fresh = box(createHeatmap({ title: 'live', rowLabels: labels, colLabels: labels }));
      fresh.update(weights(2));
      await frame();
      const freshFigure = fresh.element.querySelector('.heatmap__figure');
      const pixels = (f) => { const c = f.querySelector('canvas'); return c ? Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data) : null; };
      const w = weights(2);
      const rects = [...svg.querySelectorAll('rect[data-r]')];
      return {
        sameSvg: figure.querySelector('svg') === svg, sameNodes: after.length === nodes.length && after.every((x, i) => x === nodes[i]), added,
        sameAsFresh: svg.outerHTML === freshFigure.querySelector('svg').outerHTML,
        samePixels: JSON.stringify(pixels(figure)) === JSON.stringify(pixels(freshFigure)), canvas: Boolean(figure.querySelector('canvas')),
        fills: rects.map((x) => x.getAttribute('fill')), want: rects.map((x) => viridis(w[Number(x.dataset.r) * n + Number(x.dataset.c)])),
        table: [...hm.element.querySelectorAll('tbody td')].map((td) => td.textContent), tableWant: Array.from(w, (v) => v.toFixed(4)),
      };
    }, n);
    assert.equal(r.canvas, n * n > 256, 'a canvas paints the cells of a large map only');
    assert.ok(r.sameSvg, 'the same <svg>');
    assert.ok(r.sameNodes, 'the same nodes, in the same order');
    assert.equal(r.added, 0, 'no node added by the update');
    assert.ok(r.sameAsFresh, 'the SVG equals the new numbers drawn from scratch');
    assert.ok(r.samePixels, 'the canvas equals the new numbers painted from scratch');
    assert.deepEqual(r.fills, r.want, 'each SVG cell has the colour of its new weight');
    assert.deepEqual(r.table, r.tableWant, 'the data table holds the new weights');
    assert.deepEqual(problems.splice(0), []);
  });
}

test('a training chart redrawn with more steps keeps its <svg> and polylines, and equals the chart drawn from scratch', { timeout: 20_000 }, async () => {
  const r = await page.evaluate(async () => {
    const { curvesFigure, curvesToSVG, forPage } = await import('/web/components/shared/render/trainer-curves.js');
    const { updateFigure } = await import('/web/components/shared/render/figure.js');
    // The axis to step 1000 from the start, so both figures have the same ticks: the same shape.
    const chart = (step) => curvesFigure({ yLog: true, yMin: 1e-4, xMax: 1000, width: 520, xLabel: 'training step', yLabel: 'loss',
      series: [0, 1].map((k) => ({ label: `h = ${k + 1}`, color: k ? '#d55e00' : '#2f6fd0', dash: k === 1,
        points: Array.from({ length: step / 10 + 1 }, (_, i) => [i * 10, 2 * Math.exp(-i / (30 + 20 * k))]) })) });
    const svg = curvesToSVG(chart(400));
    document.body.append(svg);
    const lines = [...svg.querySelectorAll('polyline')];
    const before = lines.map((l) => l.getAttribute('points'));
    let added = 0;
    const watcher = new MutationObserver((records) => { for (const m of records) added += m.addedNodes.length; });
    watcher.observe(svg, { childList: true, subtree: true });
    const done = updateFigure(svg, forPage(chart(410)));
    await new Promise((resolve) => requestAnimationFrame(resolve));
    watcher.disconnect();
    const now = [...svg.querySelectorAll('polyline')];
    return { done, added, same: now.length === lines.length && now.every((x, i) => x === lines[i]),
      moved: now.map((l, i) => l.getAttribute('points') !== before[i]), equal: svg.outerHTML === curvesToSVG(chart(410)).outerHTML };
  });
  assert.ok(r.same, 'the same polyline nodes');
  assert.deepEqual(r.moved, [false, false, true, true], 'the legend lines stay, both curves gained their new points');
  assert.equal(r.added, 0, 'no node added');
  assert.deepEqual([r.done.created, r.done.removed], [0, 0]);
  assert.ok(r.equal, 'the SVG equals the chart drawn from scratch');
  assert.deepEqual(problems.splice(0), []);
});
