// A figure is a plain list of shapes (rects, lines, texts) in pixel units.
// The same figure is drawn as SVG on the page, serialised as an SVG file and
// painted on a canvas for PNG export, so all three look alike. (Under the
// strict CSP img-src is 'self', so PNG export cannot go through an <img> of the SVG.)

import { svgEl } from './dom.js';

export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

/** Colours used when a figure is exported: always the light theme. */
export const EXPORT_PALETTE = {
  background: '#ffffff', text: '#1d2330', muted: '#566074', border: '#c9ced8', accent: '#2454c5', highlight: '#d9480f',
};

let measureCtx = null;
/** Width in px of `text` drawn in `size`px (and optional weight) FONT. */
export function textWidth(text, size = 12, weight = 400) {
  if (!measureCtx) measureCtx = document.createElement('canvas').getContext('2d');
  if (!measureCtx) return text.length * size * 0.6;
  measureCtx.font = `${weight} ${size}px ${FONT}`;
  return measureCtx.measureText(text).width;
}

/**
 * `text` at `size` px if it is at most `maxWidth` wide; else at a smaller size (down to `min`), and
 * cut with "…" if even that is too wide: chart labels in a longer language stay inside the figure.
 * Returns { text, size }.
 */
export function fitText(text, size, maxWidth, weight = 400, min = 8) {
  const w = textWidth(text, size, weight);
  if (w <= maxWidth) return { text, size };
  const smaller = Math.max(min, Math.floor(size * (maxWidth / w) * 10) / 10);
  if (textWidth(text, smaller, weight) <= maxWidth) return { text, size: smaller };
  const chars = Array.from(text);
  let n = chars.length - 1;
  while (n > 1 && textWidth(`${chars.slice(0, n).join('')}…`, smaller, weight) > maxWidth) n -= 1;
  return { text: `${chars.slice(0, n).join('')}…`, size: smaller };
}

/**
 * A colour in a figure is either a literal CSS colour or a palette role
 * ({ role: 'text' }), resolved to currentColor-based CSS on screen and to
 * EXPORT_PALETTE in exports.
 */
function resolve(color, palette) {
  if (color && typeof color === 'object') return palette ? palette[color.role] : `var(--hl-fig-${color.role})`;
  return color;
}

/**
 * What one shape is in SVG: the element's name, its attributes (strings; a missing one is absent) and
 * its text. No DOM: figureToSVG builds from it and updateFigure compares two of them.
 * `palette` null = live page colours (CSS variables).
 */
export function shapeNode(s, palette = null) {
  let tag, attrs, text = null;
  if (s.type === 'rect') {
    tag = 'rect';
    attrs = { x: s.x, y: s.y, width: Math.max(0, s.w), height: Math.max(0, s.h), fill: resolve(s.fill, palette) ?? 'none',
      stroke: resolve(s.stroke, palette), 'stroke-width': s.strokeWidth, 'stroke-dasharray': s.dash, rx: s.rx, opacity: s.opacity };
  } else if (s.type === 'line') {
    tag = 'line';
    attrs = { x1: s.x1, y1: s.y1, x2: s.x2, y2: s.y2, stroke: resolve(s.stroke, palette),
      'stroke-width': s.strokeWidth, 'stroke-linecap': 'round', opacity: s.opacity };
  } else if (s.type === 'text') {
    tag = 'text';
    attrs = { x: s.x, y: s.y, fill: resolve(s.fill, palette), 'font-size': s.size ?? 12, 'font-weight': s.weight,
      'text-anchor': s.anchor ?? 'start', 'dominant-baseline': 'central',
      transform: s.rotate ? `rotate(${s.rotate} ${s.x} ${s.y})` : undefined };
    text = String(s.text);  // token text: always a text node
  } else if (s.type === 'polyline') {
    // One element per line (trainer-curves.js): hundreds of points, one node. Exports cut it into lines.
    tag = 'polyline';
    attrs = { points: s.points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' '), fill: 'none',
      stroke: resolve(s.stroke, palette), 'stroke-width': s.strokeWidth, opacity: s.opacity,
      'stroke-linejoin': 'round', 'stroke-linecap': s.dash ? 'butt' : 'round', 'stroke-dasharray': s.dash ? '7 5' : undefined };
  } else {
    return null;
  }
  const out = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && v !== false) out[k] = String(v);
  if (s.data) for (const [k, v] of Object.entries(s.data)) out[`data-${k}`] = String(v);
  return { tag, key: s.key ?? tag, attrs: out, text };
}

/**
 * Which old node each new shape takes: `plan[i]` is the index in `before` of the node shape `i` of `after`
 * reuses, or -1 for a new one. Nodes pair up by key (a shape's `key`, else its element name), in order,
 * so a chart that gains a tick keeps every node it had but one. Both lists hold shapeNode()s.
 * @returns {{ plan: number[], removed: number[] }}  `removed`: indices of `before` that nothing reuses
 */
export function planFigure(before, after) {
  const queues = new Map();
  before.forEach((d, i) => {
    if (!queues.has(d.key)) queues.set(d.key, []);
    queues.get(d.key).push(i);
  });
  const taken = new Uint8Array(before.length);
  const plan = after.map((d) => {
    const q = queues.get(d.key);
    // Same key, same element (a key names one kind of element; a mismatch is a new node).
    while (q?.length) {
      const i = q.shift();
      if (before[i].tag === d.tag) { taken[i] = 1; return i; }
    }
    return -1;
  });
  const removed = [];
  taken.forEach((x, i) => { if (!x) removed.push(i); });
  return { plan, removed };
}

/**
 * The attribute writes that turn node `a` into `b` (both shapeNode()s of the same element):
 * [name, value] pairs, value null to remove; and the text when it changes (else undefined).
 */
export function nodeChanges(a, b) {
  const set = [];
  for (const [k, v] of Object.entries(b.attrs)) if (a.attrs[k] !== v) set.push([k, v]);
  for (const k of Object.keys(a.attrs)) if (!(k in b.attrs)) set.push([k, null]);
  return { set, text: a.text === b.text ? undefined : b.text };
}

function createNode(d) {
  const node = svgEl(d.tag);
  for (const [k, v] of Object.entries(d.attrs)) node.setAttribute(k, v);
  if (d.text !== null) node.textContent = d.text;
  return node;
}

/** Builds an <svg> from a figure. `palette` null = live page colours (CSS variables); updateFigure changes it in place. */
export function figureToSVG(fig, { palette = null, title = '' } = {}) {
  const svg = svgEl('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    viewBox: `0 0 ${fig.width} ${fig.height}`,
    width: fig.width, height: fig.height,
    'font-family': FONT,
  });
  if (title) svg.append(svgEl('title', {}, title));
  if (palette) svg.append(svgEl('rect', { x: 0, y: 0, width: fig.width, height: fig.height, fill: palette.background }));
  const descs = [], nodes = [];
  for (const s of fig.shapes) {
    const d = shapeNode(s, palette);
    if (!d) continue;
    const node = createNode(d);
    descs.push(d);
    nodes.push(node);
    svg.append(node);
  }
  if (!palette) svg._figure = { descs, nodes, width: fig.width, height: fig.height };
  return svg;
}

/**
 * Redraws `svg` (a page figure from figureToSVG) as `fig` by changing the attributes and text of the
 * nodes it has: a node is created only for a shape the old figure had no node for (planFigure), and
 * removed only when the new figure has fewer. Nothing is read from layout; nodes the caller added
 * after the figure's (an overlay) stay after them. Returns what it did: { created, removed, changed }
 * (changed: nodes with at least one write).
 */
export function updateFigure(svg, fig) {
  const state = svg._figure;
  if (!state) throw new TypeError('updateFigure: svg must be a page figure made by figureToSVG (without a palette)');
  if (state.width !== fig.width || state.height !== fig.height) {
    svg.setAttribute('viewBox', `0 0 ${fig.width} ${fig.height}`);
    svg.setAttribute('width', String(fig.width));
    svg.setAttribute('height', String(fig.height));
    state.width = fig.width;
    state.height = fig.height;
  }
  const descs = [];
  for (const s of fig.shapes) {
    const d = shapeNode(s);
    if (d) descs.push(d);
  }
  const { plan, removed } = planFigure(state.descs, descs);
  // The figure's nodes are contiguous, after a <title> if any and before any the caller appended.
  let before = state.nodes.length ? state.nodes[0].previousSibling : svg.firstChild?.nodeName === 'title' ? svg.firstChild : null;
  for (const i of removed) state.nodes[i].remove();
  let created = 0, changed = 0;
  const nodes = descs.map((d, k) => {
    const i = plan[k];
    let node;
    if (i < 0) {
      node = createNode(d);
      created += 1;
    } else {
      node = state.nodes[i];
      const { set, text } = nodeChanges(state.descs[i], d);
      for (const [name, value] of set) {
        if (value === null) node.removeAttribute(name);
        else node.setAttribute(name, value);
      }
      if (text !== undefined) {
        // The text node's data, so the text node stays too (textContent would put a new one in).
        const child = node.firstChild;
        if (child && child.nodeType === 3 && !child.nextSibling) child.data = text;
        else node.textContent = text;
      }
      if (set.length || text !== undefined) changed += 1;
    }
    const want = before ? before.nextSibling : svg.firstChild;
    if (node !== want) svg.insertBefore(node, want);
    before = node;
    return node;
  });
  state.descs = descs;
  state.nodes = nodes;
  return { created, removed: removed.length, changed };
}

/** Marks an SVG drawn from `fig` as one labelled image, no wider than the figure; returns it. */
export function asImage(svg, fig, label, className = 'fig') {
  svg.setAttribute('class', className);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.style.maxWidth = `${fig.width}px`;
  return svg;
}

/** Serialised SVG file text for download. */
export function figureToSVGText(fig, title) {
  const svg = figureToSVG(fig, { palette: EXPORT_PALETTE, title });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(svg)}\n`;
}

/** Paints a figure on a canvas at `scale`× and resolves to a PNG Blob. */
export function figureToPNG(fig, scale = 2) {
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(fig.width * scale);
  canvas.height = Math.ceil(fig.height * scale);
  const ctx = canvas.getContext('2d');
  const P = EXPORT_PALETTE;
  ctx.scale(scale, scale);
  ctx.fillStyle = P.background;
  ctx.fillRect(0, 0, fig.width, fig.height);
  for (const s of fig.shapes) {
    ctx.save();
    if (s.opacity !== undefined) ctx.globalAlpha = s.opacity;
    if (s.type === 'rect') {
      const fill = resolve(s.fill, P);
      if (fill && fill !== 'none') { ctx.fillStyle = fill; ctx.fillRect(s.x, s.y, s.w, s.h); }
      const stroke = resolve(s.stroke, P);
      if (stroke && stroke !== 'none') {
        ctx.strokeStyle = stroke;
        ctx.lineWidth = s.strokeWidth ?? 1;
        if (s.dash) ctx.setLineDash(String(s.dash).split(/[\s,]+/).map(Number));
        ctx.strokeRect(s.x, s.y, s.w, s.h);
      }
    } else if (s.type === 'line') {
      ctx.strokeStyle = resolve(s.stroke, P);
      ctx.lineWidth = s.strokeWidth ?? 1;
      ctx.lineCap = 'round';
      ctx.beginPath();
      ctx.moveTo(s.x1, s.y1);
      ctx.lineTo(s.x2, s.y2);
      ctx.stroke();
    } else if (s.type === 'text') {
      ctx.fillStyle = resolve(s.fill, P);
      ctx.font = `${s.weight ?? 400} ${s.size ?? 12}px ${FONT}`;
      ctx.textAlign = s.anchor === 'middle' ? 'center' : s.anchor === 'end' ? 'right' : 'left';
      ctx.textBaseline = 'middle';
      ctx.translate(s.x, s.y);
      if (s.rotate) ctx.rotate((s.rotate * Math.PI) / 180);
      ctx.fillText(s.text, 0, 0);
    }
    ctx.restore();
  }
  return new Promise((resolvePng, reject) => {
    canvas.toBlob((blob) => (blob ? resolvePng(blob) : reject(new Error('could not encode the PNG'))), 'image/png');
  });
}
