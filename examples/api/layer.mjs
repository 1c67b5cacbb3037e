// A layer keeps its weights inside the WebAssembly module, so repeated calls copy only the input.
// Run: node examples/api/layer.mjs
import { createHeadlab } from 'headlab';

const lab = await createHeadlab();
const dModel = 8, numHeads = 2, T = 5;
const identity = new Float32Array(dModel * dModel).map((_, i) => (i % (dModel + 1) === 0 ? 1 : 0));
const layer = lab.createLayer({ dModel, numHeads, wQ: identity, wK: identity, wV: identity, wO: identity });
try {
  for (const causal of [false, true]) {
    const x = new Float32Array(T * dModel).map((_, i) => Math.sin(i));
    const { output } = layer.forward({ query: x, causal });
    // With causal masking the first token attends only to itself: its output is its input.
    console.log(`causal=${causal}: first row`, Array.from(output.slice(0, 4), (v) => v.toFixed(4)).join(' '));
  }
} finally {
  layer.dispose();
}
console.log('live handles after dispose:', lab.liveHandleCount());   // 0
