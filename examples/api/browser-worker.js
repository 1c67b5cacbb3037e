// The worked example in a module Web Worker (see index.html).
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = await createHeadlab();
const third = 1 / 3;
const wQK = new Float32Array([1,0,0,0,  0,0,1,0,  0,0,0,0,  0,1,0,1]);
const r = lab.multiHeadAttention({
  query: new Float32Array([3,0,0,1,  0,3,0,1,  1,1,0,1]), dModel: 4, numHeads: 2,
  wQ: wQK, wK: wQK, wV: new Float32Array([third,0,third,0,  0,third,0,third,  0,0,0,0,  0,0,0,0]),
  wO: new Float32Array([1,0,0,0,  0,1,0,0,  0,0,1,0,  0,0,0,1]),
});
postMessage(Array.from(r.output.slice(8, 12), (x) => x.toFixed(4)));
