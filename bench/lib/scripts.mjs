// What the small multi-core scripts (parallel-mechanism, parallel-split, threads-trainers) share:
// their `--name value` options, and the seeded layer and inputs they time.
export { median } from './problem.mjs';

/** The value after `--name` on the command line, else `fallback`. */
export const arg = (name, fallback) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : fallback; };

/** A seeded generator of Float32Arrays, uniform in [-0.05, 0.05): fill(n) gives the next n values. */
export function seededFill(seed = 7) {
  let x = seed;
  return (n) => Float32Array.from({ length: n }, () => { x = (x * 1103515245 + 12345) % 2147483648; return (x / 2147483648 - 0.5) * 0.1; });
}

/** createLayer's options for a d_model × h self-attention layer with weights drawn from `fill`. */
export function layerWeights(d, h, fill) {
  return { dModel: d, numHeads: h, wQ: fill(d * d), wK: fill(d * d), wV: fill(d * d), wO: fill(d * d) };
}
