// An attention heatmap: SVG cells on the viridis scale with a legend, a data
// table with the same numbers (visually hidden until asked for, always there
// for screen readers), hover/focus row highlighting and PNG/SVG/JSON/CSV export.
// A map of more than CANVAS_CELLS cells paints its cells on a canvas under the
// SVG (labels, legend and highlight stay SVG): recolouring a thousand SVG rects
// restyles a thousand elements, one canvas is one paint.

import { el, svgEl, uid, onWidthChange } from './dom.js';
import { clip } from '../../../lib/teach/format.js';
import { SCALES } from './colormap.js';
import { figureToSVG, updateFigure, textWidth } from './figure.js';
import { exportMenu, matrixCSV, slug } from './export.js';
import { translator, fixed } from '../../../lib/i18n/index.js';
import shared from '../../../lib/i18n/catalogues/shared.js';

const LABEL_SIZE = 12;
const GAP = 6;
/** Maps with more cells than this paint them on a canvas. */
export const CANVAS_CELLS = 256;

/**
 * Lays out a heatmap as a figure (see figure.js).
 * `values` is rows × cols (array of arrays); null draws empty cells. `scale` is one of colormap.js's
 * SCALES (default viridis; SCALES.diverging for signed values, with min = −max). `outlines` are cells
 * drawn with a coloured, dashed frame: [{ r, c, stroke, dash }] (e.g. a paper's heads by role).
 */
export function heatmapFigure({ rowLabels, colLabels, values, min = 0, max = 1, digits = 4, title = '',
  rowAxis = 'query', colAxis = 'key', highlightRow = -1, markRow = -1, maxGrid = 420, fitWidth = 0, legend = 'attention weight', lang = 'en',
  scale = SCALES.viridis, outlines = [] }) {
  const fmt = (v, d) => fixed(lang, v, d);
  const rows = rowLabels.length, cols = colLabels.length;
  const rowText = rowLabels.map((l) => clip(l));
  let cs = Math.max(6, Math.min(60, Math.floor(maxGrid / Math.max(rows, cols, 1))));
  if (fitWidth > 0) {
    // Fit the element's width, so that text is drawn at its real size rather than scaled down.
    const labels = Math.max(0, ...rowText.map((t) => textWidth(t, LABEL_SIZE))) + GAP + 18 + 16;
    cs = Math.max(6, Math.min(cs, Math.floor((fitWidth - labels) / Math.max(cols, 1))));
  }
  const showValues = cs >= 34 && values;
  const valueSize = cs >= 52 ? 12 : cs >= 42 ? 11 : 10;
  const labelSize = cs < 14 ? 9 : LABEL_SIZE;
  const colText = colLabels.map((l) => clip(l));
  const rowW = Math.max(0, ...rowText.map((t) => textWidth(t, labelSize))) + GAP;
  const colW = Math.max(0, ...colText.map((t) => textWidth(t, labelSize)));
  const rotate = colW > cs - 4;
  // Labels are thinned out where neighbours would overlap: rows need a line of text each, and column
  // labels drawn at 45° lie cs·sin 45° apart, so a narrow map (a phone) labels every second or third key.
  const line = labelSize;
  const rowEvery = Math.ceil(line / cs);
  const colEvery = rotate ? Math.ceil(line / (cs * Math.SQRT1_2)) : 1;
  const titleH = title ? 24 : 0;
  const axisH = 16;
  const colH = rotate ? Math.ceil(colW * 0.72) + 8 : labelSize + 6;
  const left = Math.ceil(rowW) + 18;
  const top = titleH + axisH + colH;
  const gridW = cols * cs, gridH = rows * cs;
  const legendW = Math.max(140, Math.min(220, gridW));
  const width = Math.ceil(Math.max(left + gridW + (rotate ? colW * 0.5 : 0), left + legendW) + 12);
  const height = top + gridH + 60;
  const shapes = [];
  if (title) shapes.push({ type: 'text', x: 0, y: 10, text: title, size: 14, weight: 600, fill: { role: 'text' } });
  shapes.push({ type: 'text', x: left + gridW / 2, y: titleH + 7, text: `${colAxis} →`, anchor: 'middle', size: 11, fill: { role: 'muted' } });
  shapes.push({ type: 'text', x: 6, y: top + gridH / 2, text: `${rowAxis} →`, anchor: 'middle', size: 11, rotate: 90, fill: { role: 'muted' } });
  colText.forEach((t, c) => {
    if (c % colEvery) return;
    const x = left + c * cs + cs / 2;
    if (rotate) shapes.push({ type: 'text', x: x - 2, y: top - 6, text: t, size: labelSize, rotate: -45, fill: { role: 'text' } });
    else shapes.push({ type: 'text', x, y: top - 8, text: t, anchor: 'middle', size: labelSize, fill: { role: 'text' } });
  });
  rowText.forEach((t, r) => {
    if (r % rowEvery) return;
    shapes.push({ type: 'text', x: left - GAP, y: top + r * cs + cs / 2, text: t, anchor: 'end', size: labelSize,
      weight: r === highlightRow || r === markRow ? 700 : 400, fill: { role: 'text' } });
  });
  const span = max - min || 1;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = values ? values[r][c] : NaN;
      const t = (v - min) / span;
      const finite = Number.isFinite(v);
      shapes.push({ type: 'rect', x: left + c * cs, y: top + r * cs, w: cs, h: cs,
        fill: finite ? scale.css(t) : { role: 'background' }, stroke: { role: 'background' }, strokeWidth: cs > 12 ? 1 : 0,
        data: { r: String(r), c: String(c) } });
      if (showValues && finite) {
        shapes.push({ type: 'text', x: left + c * cs + cs / 2, y: top + r * cs + cs / 2, text: fmt(v, digits >= 4 && cs < 42 ? 3 : digits),
          anchor: 'middle', size: valueSize, fill: scale.textOn(t) });
      }
    }
  }
  // Outlined cells: a frame inside the cell over a white halo, so a dark frame still reads on a dark cell.
  const ow = cs >= 20 ? 3 : 2;
  for (const o of outlines) {
    if (o.r < 0 || o.r >= rows || o.c < 0 || o.c >= cols) continue;
    const frame = { type: 'rect', x: left + o.c * cs + ow / 2 + 1, y: top + o.r * cs + ow / 2 + 1, w: cs - ow - 2, h: cs - ow - 2, fill: 'none' };
    shapes.push({ ...frame, stroke: '#ffffff', strokeWidth: ow + 2 }, { ...frame, stroke: o.stroke, strokeWidth: ow, dash: o.dash });
  }
  if (highlightRow >= 0 && highlightRow < rows) {
    shapes.push({ type: 'rect', x: left - 1.5, y: top + highlightRow * cs - 1.5, w: gridW + 3, h: cs + 3,
      fill: 'none', stroke: { role: 'highlight' }, strokeWidth: 3 });
  }
  // Legend: a stepped bar, ticks at min, middle and max.
  const ly = top + gridH + 18;
  const steps = 48;
  for (let i = 0; i < steps; i++) {
    shapes.push({ type: 'rect', x: left + (i * legendW) / steps, y: ly, w: legendW / steps + 0.6, h: 10, fill: scale.css(i / (steps - 1)) });
  }
  shapes.push({ type: 'rect', x: left, y: ly, w: legendW, h: 10, fill: 'none', stroke: { role: 'border' }, strokeWidth: 1 });
  const tick = (v) => (Number.isInteger(v) ? String(v) : fmt(v, 2));
  shapes.push({ type: 'text', x: left, y: ly + 20, text: tick(min), size: 10, fill: { role: 'muted' } });
  shapes.push({ type: 'text', x: left + legendW / 2, y: ly + 20, text: tick((min + max) / 2), anchor: 'middle', size: 10, fill: { role: 'muted' } });
  shapes.push({ type: 'text', x: left + legendW, y: ly + 20, text: tick(max), anchor: 'end', size: 10, fill: { role: 'muted' } });
  shapes.push({ type: 'text', x: left + legendW / 2, y: ly + 32, text: legend, anchor: 'middle', size: 10, fill: { role: 'muted' } });
  return { width, height, shapes, grid: { left, top, cs, rows, cols } };
}

/**
 * A live heatmap element.
 * @param {object} o
 * @param {string} o.title                shown above, used in exports and as the table caption
 * @param {string[]} o.rowLabels          query tokens
 * @param {string[]} o.colLabels          key tokens
 * @param {string} [o.testid]             data-testid of the data table
 * @param {number} [o.markRow]            a row marked in the table (class is-query), e.g. the query "it"
 * @param {string} [o.markRowTestid]      data-testid of that row
 * @param {(row: number|null) => void} [o.onHoverRow]
 * @param {number} [o.min] @param {number} [o.max] @param {number} [o.digits]
 * @param {object} [o.scale]              one of colormap.js's SCALES (default viridis)
 * @param {Array<{r: number, c: number, stroke: string, dash?: string}>} [o.outlines]  cells framed (setOutlines changes them)
 * @param {() => void} [o.onFirstDraw]    with it, where ResizeObserver exists, the map is first drawn once its box's width
 *   is known (the frame after the box is laid out), then `onFirstDraw()` is called: drawn once at its size rather than
 *   built at a guessed size and redrawn a frame later. `drawn` says whether it has been.
 */
export function createHeatmap(o) {
  const t = o.t ?? translator(shared, 'en');
  const num = (v, d) => fixed(t.lang, v, d);
  let rowLabels = o.rowLabels.slice();
  let colLabels = o.colLabels.slice();
  let min = o.min ?? 0, max = o.max ?? 1;
  const digits = o.digits ?? 4;
  const scale = o.scale ?? SCALES.viridis;
  let outlines = o.outlines ?? [];
  const rowAxis = o.rowAxis ?? t('heatmap.query'), colAxis = o.colAxis ?? t('heatmap.key');
  let values = null;
  let highlightRow = -1;
  const figureBox = el('div', { class: 'heatmap__figure', 'aria-hidden': 'true' });
  const readout = el('p', { class: 'heatmap__readout small muted', 'aria-hidden': 'true' }, '\u00a0');
  const tableId = uid('tbl');
  const tableBox = el('div', { class: 'table-scroll sr-only', id: tableId });
  const toggle = el('button', {
    type: 'button', class: 'btn btn--small', 'aria-expanded': 'false', 'aria-controls': tableId,
    on: {
      click: () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        toggle.textContent = open ? t('heatmap.hide') : t('heatmap.show');
        tableBox.classList.toggle('sr-only', !open);
        if (open) fillTable();
      },
    },
  }, t('heatmap.show'));
  const title = el('h4', { class: 'heatmap__title' }, o.title);
  const menu = exportMenu({
    what: o.title,
    name: () => o.fileName ?? slug(o.title),
    figure: () => values && heatmapFigure({ rowLabels, colLabels, values, min, max, digits, title: o.title, rowAxis, colAxis, legend: o.legend ?? t('heatmap.legend'), lang: t.lang, scale, outlines }),
    json: () => values && {
      title: o.title, rows: rowAxis, columns: colAxis, rowLabels, colLabels, values: values.map((r) => Array.from(r)),
    },
    csv: () => values && matrixCSV({ corner: `${rowAxis} \\ ${colAxis}`, rowLabels, colLabels, values: values.map((r) => Array.from(r)) }),
    onExport: o.onExport,
    t,
  });
  const tools = el('div', { class: 'heatmap__tools' }, toggle, menu);
  const element = el('figure', { class: 'heatmap', part: 'heatmap' }, title, figureBox, readout, tools, tableBox);

  let cells = [];
  let caption = null;
  function buildTable() {
    if (rowLabels.length * colLabels.length > 4096) {
      cells = [];
      caption = null;
      tableBox.replaceChildren(el('p', { class: 'small' }, t('heatmap.tooMany', { rows: rowLabels.length, cols: colLabels.length })));
      return;
    }
    const table = el('table', { class: 'matrix matrix--heat', dataset: o.testid ? { testid: o.testid } : {} },
      caption = el('caption', {}, t('heatmap.caption', { title: o.title, rows: rowAxis, cols: colAxis })),
      el('thead', {}, el('tr', {}, el('td', {}), colLabels.map((l) => el('th', { scope: 'col' }, l)))));
    const body = el('tbody');
    cells = rowLabels.map((label, r) => {
      const marked = r === o.markRow;
      const tr = el('tr', {
        class: marked ? 'is-query' : undefined,
        dataset: marked && o.markRowTestid ? { testid: o.markRowTestid } : {},
      }, el('th', { scope: 'row' }, label));
      const tds = colLabels.map(() => el('td', { class: 'num weight' }, '—'));
      tr.append(...tds);
      body.append(tr);
      return tds;
    });
    table.append(body);
    tableBox.replaceChildren(table);
  }

  let overlay = null;
  let grid = null;
  let shown = null;  // the figure drawn: its width and height, for the pointer's cell
  let svg = null;
  let plot = null;
  let borders = null;  // a painted map's cell borders: one path
  let rects = [];  // the SVG's cells, [r][c]: { node, desc } (none when a canvas paints them)
  let canvas = null;
  // The width drawn for and the box's width as the observer last reported it (never read from layout:
  // a read after the element's writes in the same frame forces a layout of the page).
  let lastWidth = 0, boxWidth = 0;
  let waiting = Boolean(o.onFirstDraw) && typeof ResizeObserver !== 'undefined';
  const observed = (e) => { boxWidth = e.contentRect.width; return boxWidth; };
  // While waiting, the observer's first report draws whatever the width (a hidden box reports 0).
  figureBox._widthObserver = onWidthChange(figureBox, () => (waiting ? -Infinity : lastWidth), () => {
    const first = waiting;
    waiting = false;
    draw();
    if (first) o.onFirstDraw();
  }, 24, observed);

  /** The cells' 1 px borders (the SVG rects' strokes, when a canvas paints the cells) as one path's `d`. */
  const borderPath = ({ left, top, cs, rows, cols }) => {
    const lines = [];
    for (let r = 0; r <= rows; r++) lines.push(`M${left} ${top + r * cs}h${cols * cs}`);
    for (let c = 0; c <= cols; c++) lines.push(`M${left + c * cs} ${top}v${rows * cs}`);
    return lines.join('');
  };
  const pct = (v, of) => `${(100 * v) / of}%`;
  const setStyle = (node, name, value) => { if (node.style.getPropertyValue(name) !== value) node.style.setProperty(name, value); };
  const setAttr = (node, name, value) => { if (node.getAttribute(name) !== value) node.setAttribute(name, value); };

  /**
   * Draws the map: the first time, and when its rows or columns change, a new SVG (and canvas); else the
   * SVG drawn already, changed in place (figure.js's updateFigure), so its nodes stay the same nodes.
   */
  function draw() {
    if (waiting) return;
    lastWidth = boxWidth;
    const fig = heatmapFigure({ rowLabels, colLabels, values, min, max, digits, rowAxis, colAxis, markRow: o.markRow ?? -1,
      maxGrid: o.maxGrid ?? 420, fitWidth: lastWidth, legend: o.legend ?? t('heatmap.legend'), lang: t.lang, scale, outlines });
    const { left, top, cs, rows, cols } = fig.grid;
    const painted = rows * cols > CANVAS_CELLS;
    const page = painted ? { ...fig, shapes: fig.shapes.filter((s) => !s.data) } : fig;
    const same = svg && grid.rows === rows && grid.cols === cols;
    grid = fig.grid;
    shown = fig;
    if (same) {
      updateFigure(svg, page);
      if (painted) {
        const d = cs > 12 ? borderPath(grid) : '';
        if (borders) setAttr(borders, 'd', d);
        setStyle(canvas, 'left', pct(left, fig.width));
        setStyle(canvas, 'top', pct(top, fig.height));
        setStyle(canvas, 'width', pct(cols * cs, fig.width));
        setStyle(canvas, 'height', pct(rows * cs, fig.height));
        setStyle(plot, 'max-width', `${fig.width}px`);
        paintCanvas(values ? (r, c) => values[r][c] : null);
      } else {
        setStyle(svg, 'max-width', `${fig.width}px`);
        collectRects();
      }
      setAttr(overlay, 'x', String(left - 1.5));
      setAttr(overlay, 'width', String(cols * cs + 3));
      setAttr(overlay, 'height', String(cs + 3));
      placeOverlay();
      return;
    }
    svg = figureToSVG(page);
    borders = null;
    if (painted) {
      borders = svgEl('path', { d: cs > 12 ? borderPath(grid) : '', stroke: 'var(--hl-fig-background)', 'stroke-width': 1, fill: 'none' });
      svg.append(borders);
    }
    svg.setAttribute('class', 'fig');
    plot = svg;
    if (painted) {
      // The canvas sits under the (transparent) SVG, placed in the figure's own units so it scales with it.
      canvas = el('canvas', { class: 'heatmap__cells', 'aria-hidden': 'true', style: {
        left: pct(left, fig.width), top: pct(top, fig.height), width: pct(cols * cs, fig.width), height: pct(rows * cs, fig.height) } });
      plot = el('div', { class: 'heatmap__plot', style: { 'max-width': `${fig.width}px` } }, canvas, svg);
      rects = [];
      paintCanvas(values ? (r, c) => values[r][c] : null);
    } else {
      canvas = null;
      svg.style.maxWidth = `${fig.width}px`;
      collectRects();
    }
    // The hover/focus outline is one rect moved in place, so the map is not redrawn while pointing.
    overlay = svgEl('rect', { x: left - 1.5, y: top - 1.5, width: cols * cs + 3, height: cs + 3, fill: 'none',
      stroke: 'var(--hl-fig-highlight)', 'stroke-width': 3, visibility: 'hidden', 'pointer-events': 'none' });
    svg.append(overlay);
    placeOverlay();
    figureBox.replaceChildren(plot);
    const target = svg;
    // The pointer's cell, from the figure drawn when it moves (a redraw in place may have moved the grid).
    const cellAt = (event) => {
      const box = target.getBoundingClientRect();
      const k = shown.width / box.width;
      const c = Math.floor(((event.clientX - box.left) * k - grid.left) / grid.cs);
      const r = Math.floor(((event.clientY - box.top) * k - grid.top) / grid.cs);
      return r >= 0 && r < grid.rows && c >= 0 && c < grid.cols ? [r, c] : null;
    };
    let lastRow = null;
    svg.addEventListener('pointermove', (event) => {
      const hit = cellAt(event);
      if (!hit) return;
      const [r, c] = hit;
      readout.textContent = values ? t('heatmap.readout', { rows: rowAxis, row: rowLabels[r], cols: colAxis, col: colLabels[c], value: num(values[r][c], digits) }) : '\u00a0';
      if (r !== lastRow) { lastRow = r; o.onHoverRow?.(r); }
    });
    svg.addEventListener('pointerleave', () => { lastRow = null; readout.textContent = '\u00a0'; o.onHoverRow?.(null); });
  }

  /** rects[r][c]: each SVG cell's node and what figure.js keeps of it (its shapeNode), without a DOM query. */
  function collectRects() {
    rects = Array.from({ length: grid.rows }, () => new Array(grid.cols));
    const { descs, nodes } = svg._figure;
    descs.forEach((d, i) => { if (d.attrs['data-r'] !== undefined) rects[d.attrs['data-r']][d.attrs['data-c']] = { node: nodes[i], desc: d }; });
  }

  /** The cells on the canvas, one pixel each (scaled up, pixelated): `at(r, c)` the value, null for none. */
  function paintCanvas(at) {
    const { rows, cols } = grid;
    if (canvas.width !== cols) canvas.width = cols;
    if (canvas.height !== rows) canvas.height = rows;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    const image = ctx.createImageData(cols, rows);
    if (at) {
      const data = image.data;
      const span = max - min || 1;
      for (let r = 0, p = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++, p += 4) {
          const v = at(r, c);
          if (!Number.isFinite(v)) continue;
          scale.into((v - min) / span, data, p);
        }
      }
    }
    ctx.putImageData(image, 0, 0);
  }

  function placeOverlay() {
    if (!overlay || !grid) return;
    const visible = highlightRow >= 0 && highlightRow < grid.rows;
    overlay.setAttribute('visibility', visible ? 'visible' : 'hidden');
    if (visible) overlay.setAttribute('y', String(grid.top + highlightRow * grid.cs - 1.5));
    cells.forEach((_, r) => cells[r][0]?.parentElement?.classList.toggle('is-hot', r === highlightRow));
  }

  function fillTable() {
    // A large map's hidden table skips its colours (the toggle fills it again when shown); a small one
    // keeps them, which cost nothing.
    const hidden = tableBox.classList.contains('sr-only') && cells.length * (cells[0]?.length ?? 0) > CANVAS_CELLS;
    cells.forEach((tds, r) => tds.forEach((td, c) => {
      if (!values) {
        td.textContent = '—';
        td.style.removeProperty('background-color');
        td.style.removeProperty('color');
        return;
      }
      const v = values[r][c];
      const share = (v - min) / (max - min || 1);
      const text = num(v, digits);
      if (td.textContent !== text) td.textContent = text;
      if (hidden) return;
      td.style.backgroundColor = scale.css(share);
      td.style.color = scale.textOn(share);
    }));
  }

  buildTable();
  draw();
  if (!waiting) o.onFirstDraw?.();
  return {
    element,
    /** Whether the map has been drawn (see o.onFirstDraw). */
    get drawn() { return !waiting; },
    /** `flat` holds rows*cols numbers from `offset` (row-major); null shows an empty map. */
    update(flat, offset = 0) {
      if (!flat) values = null;
      else {
        values = rowLabels.map((_, r) => Array.from(flat.subarray
          ? flat.subarray(offset + r * colLabels.length, offset + (r + 1) * colLabels.length)
          : flat.slice(offset + r * colLabels.length, offset + (r + 1) * colLabels.length)));
      }
      draw();
      fillTable();
    },
    setLabels(rows, cols) {
      rowLabels = rows.slice();
      colLabels = cols.slice();
      values = null;
      buildTable();
      draw();
    },
    /**
     * Recolours the cells drawn for `flat` (rows*cols weights from `offset`) in place, leaving the
     * numbers (table, readout, exports) as the last update() set them.
     */
    paint(flat, offset = 0) {
      const cols = colLabels.length;
      if (canvas) { paintCanvas((r, c) => flat[offset + r * cols + c]); return; }
      rects.forEach((row, r) => row.forEach((cell, c) => {
        const v = flat[offset + r * cols + c];
        const fill = Number.isFinite(v) ? scale.css((v - min) / (max - min || 1)) : 'var(--hl-fig-background)';
        // The node and what figure.js keeps of it change together, so the next updateFigure compares with what is drawn.
        if (cell.desc.attrs.fill === fill) return;
        cell.desc.attrs.fill = fill;
        cell.node.setAttribute('fill', fill);
      }));
    },
    /** New bounds of the colour scale (drawn at the next update). */
    setRange(lo, hi) {
      min = lo;
      max = hi;
    },
    /** New framed cells ([{ r, c, stroke, dash }]), drawn now. */
    setOutlines(list) {
      outlines = list ?? [];
      draw();
    },
    setFileName(name) {
      o.fileName = name;
    },
    setTitle(text) {
      if (o.title === text) return;
      o.title = text;
      title.textContent = text;
      if (caption) caption.textContent = t('heatmap.caption', { title: text, rows: rowAxis, cols: colAxis });
    },
    highlight(row) {
      const next = row === null || row === undefined ? -1 : row;
      if (next === highlightRow) return;
      highlightRow = next;
      placeOverlay();
    },
    get values() { return values; },
  };
}
