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

/** Builds an <svg> from a figure. `palette` null = live page colours (CSS variables). */
export function figureToSVG(fig, { palette = null, title = '' } = {}) {
  const svg = svgEl('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    viewBox: `0 0 ${fig.width} ${fig.height}`,
    width: fig.width, height: fig.height,
    'font-family': FONT,
  });
  if (title) svg.append(svgEl('title', {}, title));
  if (palette) svg.append(svgEl('rect', { x: 0, y: 0, width: fig.width, height: fig.height, fill: palette.background }));
  for (const s of fig.shapes) {
    let node;
    if (s.type === 'rect') {
      node = svgEl('rect', {
        x: s.x, y: s.y, width: Math.max(0, s.w), height: Math.max(0, s.h),
        fill: resolve(s.fill, palette) ?? 'none', stroke: resolve(s.stroke, palette), 'stroke-width': s.strokeWidth,
        'stroke-dasharray': s.dash, rx: s.rx, opacity: s.opacity,
      });
    } else if (s.type === 'line') {
      node = svgEl('line', {
        x1: s.x1, y1: s.y1, x2: s.x2, y2: s.y2, stroke: resolve(s.stroke, palette),
        'stroke-width': s.strokeWidth, 'stroke-linecap': 'round', opacity: s.opacity,
      });
    } else if (s.type === 'text') {
      node = svgEl('text', {
        x: s.x, y: s.y, fill: resolve(s.fill, palette), 'font-size': s.size ?? 12, 'font-weight': s.weight,
        'text-anchor': s.anchor ?? 'start', 'dominant-baseline': 'central',
        transform: s.rotate ? `rotate(${s.rotate} ${s.x} ${s.y})` : undefined,
      });
      node.textContent = s.text;  // token text: always a text node
    }
    if (!node) continue;
    if (s.data) for (const [k, v] of Object.entries(s.data)) node.dataset[k] = v;
    svg.append(node);
  }
  return svg;
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
