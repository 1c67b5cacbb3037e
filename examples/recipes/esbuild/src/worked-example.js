// The course's worked example (tokens ball, full, it; two heads), as the package README runs it.
// Returns the output row of "it" and head 1's weights of "it" over (ball, full, it), to 4 decimals.
export function workedExample(lab) {
  const third = 1 / 3;
  const wQK = new Float32Array([1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1]);  // [d_model=4, h*d_k=4]
  const r = lab.multiHeadAttention({
    query: new Float32Array([3, 0, 0, 1, 0, 3, 0, 1, 1, 1, 0, 1]),  // ball, full, it: [T=3, d_model=4]
    dModel: 4, numHeads: 2,                                          // d_k = d_v = 4/2 = 2
    wQ: wQK, wK: wQK,
    wV: new Float32Array([third, 0, third, 0, 0, third, 0, third, 0, 0, 0, 0, 0, 0, 0, 0]),
    wO: new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),  // identity
    returnWeights: true,
  });
  const fixed = (a) => Array.from(a, (x) => x.toFixed(4)).join(' ');
  // output 0.7931 0.1474 0.1474 0.7931, weights 0.7337 0.0879 0.1784
  return { output: fixed(r.output.slice(8, 12)), weights: fixed(r.weights.slice(6, 9)) };
}
