// Plain JavaScript multi-head attention: straightforward loops over typed arrays,
// written for reading. With Float64Array it is the benchmark's float64 reference.

/** C [m, n] = A [m, k] · B [k, n], row-major; i-p-j order so the inner loop is contiguous. */
export function matmul(A, B, m, k, n, Arr = Float32Array) {
  const C = new Arr(m * n);
  for (let i = 0; i < m; i++) {
    const ci = i * n;
    for (let p = 0; p < k; p++) {
      const a = A[i * k + p], bp = p * n;
      for (let j = 0; j < n; j++) C[ci + j] += a * B[bp + j];
    }
  }
  return C;
}

/**
 * Scaled dot-product attention for every head.
 * Q, K, V: [T, d] with head i in columns i*dk..(i+1)*dk-1. Returns the concatenated
 * head outputs [T, d] in the same layout.
 */
export function attention(Q, K, V, T, d, h, Arr = Float32Array) {
  const dk = d / h, scale = 1 / Math.sqrt(dk);
  const out = new Arr(T * d);
  const s = new Arr(T);  // one row of scores, then of weights
  for (let head = 0; head < h; head++) {
    const off = head * dk;
    for (let i = 0; i < T; i++) {
      const qi = i * d + off;
      let max = -Infinity;
      for (let j = 0; j < T; j++) {
        const kj = j * d + off;
        let dot = 0;
        for (let c = 0; c < dk; c++) dot += Q[qi + c] * K[kj + c];
        s[j] = dot * scale;
        if (s[j] > max) max = s[j];
      }
      let sum = 0;
      for (let j = 0; j < T; j++) {
        s[j] = Math.exp(s[j] - max);
        sum += s[j];
      }
      const oi = i * d + off;
      for (let j = 0; j < T; j++) {
        const p = s[j] / sum, vj = j * d + off;
        for (let c = 0; c < dk; c++) out[oi + c] += p * V[vj + c];
      }
    }
  }
  return out;
}

/** The whole forward pass of a problem from lib/problem.mjs, computed in `Arr`. */
export function forward(p, Arr = Float32Array) {
  const { mode, T, d, h } = p;
  const cast = (a) => (a instanceof Arr ? a : Arr.from(a));
  if (mode === 'attn') return attention(cast(p.Q), cast(p.K), cast(p.V), T, d, h, Arr);
  const X = cast(p.X);
  const Q = matmul(X, cast(p.Wq), T, d, d, Arr);
  const K = matmul(X, cast(p.Wk), T, d, d, Arr);
  const V = matmul(X, cast(p.Wv), T, d, d, Arr);
  return matmul(attention(Q, K, V, T, d, h, Arr), cast(p.Wo), T, d, d, Arr);
}

/** Engine interface (see bench/lib/measure.mjs). */
export async function createEngine() {
  return {
    version: 'Float32Array loops',
    notes: [],
    async setup(p) {
      return { run: () => forward(p, Float32Array) };
    },
  };
}
