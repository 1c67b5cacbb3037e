// What the pretrained-model tests share: the fixture checkpoints of tests/golden/pretrained/
// (written by make_pretrained.py with float64 reference outputs) and the comparisons.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../golden/pretrained');
export const COURSE = 'Virat hit the ball because it was full and outside off.';

/** The files of one fixture folder, by name. */
export function fixtureFiles(name) {
  const dir = path.join(FIXTURES, name);
  return new Map(readdirSync(dir).map((f) => [f, readFileSync(path.join(dir, f))]));
}

/** A fixture as loadPretrained's `{ config, weights, tokenizer }` source (shards in the index's order). */
export function fixtureObjects(name) {
  const files = fixtureFiles(name);
  const config = JSON.parse(files.get('config.json'));
  const tokenizer = JSON.parse(files.get('tokenizer.json'));
  let weights;
  if (files.has('model.safetensors')) {
    weights = toArrayBuffer(files.get('model.safetensors'));
  } else {
    const index = JSON.parse(files.get('model.safetensors.index.json'));
    weights = [...new Set(Object.values(index.weight_map))].map((s) => toArrayBuffer(files.get(s)));
  }
  return { config, weights, tokenizer };
}

export function toArrayBuffer(buf) {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

export function expectedOf(name) {
  return JSON.parse(readFileSync(path.join(FIXTURES, name, 'expected.json'), 'utf8'));
}

/** Tolerance of a fixture: 1e-4 for float32 weights, 2e-3 for float16/bfloat16 (the numbers). */
export function toleranceOf(name) {
  return /f16|bf16/.test(name) ? 2e-3 : 1e-4;
}

/** Throws naming the first element with |got − want| > atol + rtol·|want|, and the largest difference. */
export function assertClose(got, want, tol, what) {
  if (got.length !== want.length) throw new Error(`${what}: length ${got.length}, want ${want.length}`);
  let worst = 0;
  let first = -1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= tol + tol * Math.abs(want[i])) && first < 0) first = i;
    if (!(d <= worst)) worst = d;
  }
  if (first >= 0) throw new Error(`${what}: element ${first} is ${got[first]}, want ${want[first]} (tolerance ${tol}); largest difference ${worst}`);
  return worst;
}

/**
 * The four detector scores of every head from attention [L, H, T, T] over BOS, r1..rn, r1..rn,
 * TransformerLens's definitions as the issue states them.
 */
export function scoresFromAttention(attention, L, H, n) {
  const T = 2 * n + 1;
  const A = (l, h, t, s) => attention[((l * H + h) * T + t) * T + s];
  const mean = (from, to, f) => { let s = 0; for (let t = from; t <= to; t++) s += f(t); return s / (to - from + 1); };
  const out = [];
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      out.push({
        layer: l, head: h,
        previousToken: mean(2, 2 * n, (t) => A(l, h, t, t - 1)),
        duplicateToken: mean(n + 1, 2 * n, (t) => A(l, h, t, t - n)),
        induction: mean(n + 1, 2 * n, (t) => A(l, h, t, t - n + 1)),
        firstToken: mean(1, 2 * n, (t) => A(l, h, t, 0)),
      });
    }
  }
  return out;
}

export function softmax(row) {
  const max = Math.max(...row);
  const e = row.map((x) => Math.exp(x - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}
