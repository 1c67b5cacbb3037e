// The benchmark problem: seeded inputs (identical in Node and Chromium), the FLOP
// count, and the output check. No engine code here.
//
// Layouts (row-major, as HeadLab's API takes them):
//   mode 'mha':  X [T, d]; Wq, Wk, Wv [d, d] with head i in columns i*dk..(i+1)*dk-1; Wo [d, d]
//   mode 'attn': Q, K, V [T, d], head i in columns i*dk.. (already projected)
// Every engine returns the output as a Float32Array [T, d] in the same layout.

/** mulberry32: a small, fast PRNG with a 32-bit state; same stream everywhere. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n floats uniform in [-scale, scale). */
function uniform(n, seed, scale) {
  const rand = mulberry32(seed);
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rand() - 1) * scale;
  return a;
}

/** A cell of the benchmark grid: { mode: 'mha'|'attn', d, h, T }. */
export function cellKey({ mode, d, h, T }) {
  return `${mode}-d${d}-h${h}-T${T}`;
}

/** FLOPs counted for a cell: 8·T·d² + 4·T²·d with projections, 4·T²·d without. */
export function flopsOf({ mode, d, T }) {
  const attention = 4 * T * T * d;
  return mode === 'mha' ? 8 * T * d * d + attention : attention;
}

/** The inputs of a cell. Weights have variance 1/d so activations stay O(1). */
export function makeProblem(cell) {
  const { mode, d, h, T } = cell;
  if (d % h !== 0) throw new RangeError(`d=${d} is not a multiple of h=${h}`);
  const dk = d / h;
  const seed = d * 1000003 + T * 7919 + h * 31 + (mode === 'mha' ? 1 : 2);
  const w = Math.sqrt(3 / d);  // uniform(-w, w) has variance 1/d
  if (mode === 'mha') {
    return {
      ...cell, dk,
      X: uniform(T * d, seed + 1, 1),
      Wq: uniform(d * d, seed + 2, w), Wk: uniform(d * d, seed + 3, w),
      Wv: uniform(d * d, seed + 4, w), Wo: uniform(d * d, seed + 5, w),
    };
  }
  if (mode === 'attn') {
    return { ...cell, dk, Q: uniform(T * d, seed + 1, 1), K: uniform(T * d, seed + 2, 1), V: uniform(T * d, seed + 3, 1) };
  }
  throw new RangeError(`unknown mode ${mode}`);
}

/**
 * Compares an output with the reference: passes when
 * max |y - ref| <= rtol * max |ref| (a relative tolerance on the output's scale).
 */
export function compare(output, ref, rtol = 1e-3) {
  if (!output || output.length !== ref.length) {
    return { ok: false, maxAbsDiff: NaN, relDiff: NaN, why: `output length ${output?.length} != ${ref.length}` };
  }
  let maxAbsDiff = 0, maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    const diff = Math.abs(output[i] - ref[i]);
    if (!(diff <= maxAbsDiff)) maxAbsDiff = diff;  // also catches NaN
    const r = Math.abs(ref[i]);
    if (r > maxRef) maxRef = r;
  }
  const relDiff = maxAbsDiff / (maxRef || 1);
  return { ok: relDiff <= rtol, maxAbsDiff, relDiff, maxRef };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
