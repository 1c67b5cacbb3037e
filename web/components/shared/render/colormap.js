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
