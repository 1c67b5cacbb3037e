// Heavy work off the main thread: the same API inside a Node worker thread (in a browser, a
// module Web Worker: see worker.html). The result comes back as a copy in a message.
// Run: node examples/api/worker.mjs
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { createHeadlab } from 'headlab';

if (isMainThread) {
  const worker = new Worker(new URL(import.meta.url));
  worker.once('message', (r) => {
    console.log(`from the worker: T=${r.T}, ${r.ms.toFixed(1)} ms, output[0..3]`, r.head.join(' '));
    worker.terminate();
  });
} else {
  const lab = await createHeadlab();
  const T = 256, dModel = 128, numHeads = 4;
  const x = new Float32Array(T * dModel).map((_, i) => Math.cos(i * 0.01));
  const w = new Float32Array(dModel * dModel).map((_, i) => ((i * 7919) % 13) / 13 - 0.5);
  const t0 = performance.now();
  const { output } = lab.multiHeadAttention({ query: x, dModel, numHeads, wQ: w, wK: w, wV: w, wO: w });
  parentPort.postMessage({ T, ms: performance.now() - t0, head: Array.from(output.slice(0, 4), (v) => v.toFixed(4)) });
}
