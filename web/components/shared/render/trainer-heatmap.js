// Live updates of a shared heatmap (heatmap.js) while a model trains. Between
// full redraws only the colours of the cells already drawn change (hm.paint: the
// SVG rects' fills, or one canvas for a large map), with no layout. So the numbers
// printed in the cells, the data table and the export values follow at the pace
// of full updates (when a head is opened and when training stops); the colours
// follow every update.

/** @param {ReturnType<import('./heatmap.js').createHeatmap>} hm  a heatmap with min 0 and max 1 */
export function liveHeatmap(hm) {
  return {
    /** `flat` holds rows*cols weights from `offset`; `full` redraws everything, tables included. */
    update(flat, offset, { full = false } = {}) {
      if (full || !hm.values) hm.update(flat, offset);
      else hm.paint(flat, offset);
    },
  };
}
