// The forward pass of multi-head self-attention on the course's worked example.
// Run from the repository (after `npm run build`): node examples/api/forward.mjs
// In your own project, after `npm install headlab`, the same import works.
import { createHeadlab } from 'headlab';

const lab = await createHeadlab();
const third = 1 / 3;
const wQK = new Float32Array([1,0,0,0,  0,0,1,0,  0,0,0,0,  0,1,0,1]);   // [d_model=4, h*d_k=4]
const r = lab.multiHeadAttention({
  query: new Float32Array([3,0,0,1,  0,3,0,1,  1,1,0,1]),              // ball, full, it: [T=3, d_model=4]
  dModel: 4, numHeads: 2,
  wQ: wQK, wK: wQK,
  wV: new Float32Array([third,0,third,0,  0,third,0,third,  0,0,0,0,  0,0,0,0]),
  wO: new Float32Array([1,0,0,0,  0,1,0,0,  0,0,1,0,  0,0,0,1]),
  returnWeights: true,
});
console.log('output for "it":', Array.from(r.output.slice(8, 12), (x) => x.toFixed(4)).join(' '));   // 0.7931 0.1474 0.1474 0.7931
console.log('head 1, "it" over (ball, full, it):', Array.from(r.weights.slice(6, 9), (x) => x.toFixed(4)).join(' '));  // 0.7337 0.0879 0.1784
