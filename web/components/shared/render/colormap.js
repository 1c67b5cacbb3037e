// Viridis, a perceptually uniform sequential scale that stays readable under
// the common colour-vision deficiencies and in greyscale. 17 stops, linear in between.

const VIRIDIS = [
  '#440154', '#481a6c', '#472f7d', '#414487', '#3b528b', '#355f8d', '#2c728e', '#26828e', '#21918c',
  '#1fa088', '#28ae80', '#3fbc73', '#5ec962', '#84d44b', '#addc30', '#d8e219', '#fde725',
].map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));

/** [r, g, b] for t in [0, 1]. */
export function viridisRGB(t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  return VIRIDIS[i].map((c, k) => Math.round(c + (VIRIDIS[i + 1][k] - c) * f));
}

/** viridisRGB(t) written to `out[at..at+2]` and alpha 255 to `out[at+3]` (pixels of an ImageData, no garbage per cell). */
export function viridisInto(t, out, at) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const a = VIRIDIS[i], b = VIRIDIS[i + 1];
  out[at] = Math.round(a[0] + (b[0] - a[0]) * f);
  out[at + 1] = Math.round(a[1] + (b[1] - a[1]) * f);
  out[at + 2] = Math.round(a[2] + (b[2] - a[2]) * f);
  out[at + 3] = 255;
}

export function viridis(t) {
  const [r, g, b] = viridisRGB(t);
  return `rgb(${r}, ${g}, ${b})`;
}

/** Black or white, whichever reads better on viridis(t). */
export function textOn(t) {
  const [r, g, b] = viridisRGB(t).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return lum > 0.22 ? '#111111' : '#ffffff';
}

// A diverging scale for signed values (patching effects, attributions): ColorBrewer's RdBu, blue for
// negative, near-white at 0, red for positive; the two hues stay apart under the common colour-vision
// deficiencies. A heatmap maps [−m, m] onto t in [0, 1], so 0 sits at t = 0.5.
const RDBU = ['#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7', '#f4a582', '#d6604d', '#b2182b']
  .map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));

function stopsRGB(stops, t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0.5)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  return stops[i].map((c, k) => Math.round(c + (stops[i + 1][k] - c) * f));
}

/** Whichever of black and white has the higher WCAG contrast on [r, g, b] (both stay ≥ 4.5 on RdBu's steps). */
function textOnRGB([r, g, b]) {
  const lin = (c) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
  const lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) ? '#000000' : '#ffffff';
}

/**
 * A colour scale as the heatmap takes it: css(t) a CSS colour, into(t, out, at) RGBA pixels, textOn(t)
 * black or white over css(t), for t in [0, 1].
 */
export const SCALES = {
  viridis: { css: viridis, into: viridisInto, textOn },
  diverging: {
    css: (t) => `rgb(${stopsRGB(RDBU, t).join(', ')})`,
    into: (t, out, at) => { const c = stopsRGB(RDBU, t); out[at] = c[0]; out[at + 1] = c[1]; out[at + 2] = c[2]; out[at + 3] = 255; },
    textOn: (t) => textOnRGB(stopsRGB(RDBU, t)),
  },
};
