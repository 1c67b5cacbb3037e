// Live updates of a shared heatmap (heatmap.js) while a model trains. Between
// full redraws only the colours of the cells already drawn change: a colour is
// a repaint, while new text in an SVG lays out every text of that SVG again. So
// the numbers printed in the cells, the data table and the export values follow
// at the pace of full updates (the caller asks for one about once a second, and
// when training stops); the colours follow every update.

import { viridis } from './colormap.js';

/**
 * @param {ReturnType<import('./heatmap.js').createHeatmap>} hm  a heatmap with min 0 and max 1
 * @param {number} rows @param {number} cols
 */
export function liveHeatmap(hm, rows, cols) {
  return {
    /** `flat` holds rows*cols weights from `offset`; `full` redraws everything, tables included. */
    update(flat, offset, { full = false } = {}) {
      const svg = hm.element.querySelector('.heatmap__figure svg');
      const cells = svg ? svg.querySelectorAll('rect[data-r]') : [];
      if (full || !hm.values || cells.length !== rows * cols) {
        hm.update(flat, offset);
        return;
      }
      for (const rect of cells) {
        rect.setAttribute('fill', viridis(flat[offset + Number(rect.dataset.r) * cols + Number(rect.dataset.c)]));
      }
    },
  };
}
