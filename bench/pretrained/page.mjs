// The browser side of one real-model run: the page, served from the repository root, exposes
// benchPretrained(args) for bench/pretrained/run.mjs, benchFamily(args) and benchPeak() for
// bench/pretrained/families.mjs to call (a fresh Chromium per run).
import { measurePretrained } from './measure.mjs';
import { measureFamily } from './measure-families.mjs';
import { measurePeak } from '../lib/peak.mjs';
import { ctx as base, root } from './page-context.mjs';

const ctx = {
  ...base,
  importWllama: async () => ({
    ...(await import(root + 'node_modules/@wllama/wllama/esm/index.js')),
    wasmUrl: root + 'node_modules/@wllama/wllama/esm/wasm/wllama.wasm',
  }),
};

window.benchPretrained = async ({ engine, threads, folder, seqs, reps, refPath }) => {
  const ref = refPath ? new Float32Array((await ctx.readBytes(refPath)).buffer) : null;
  const { result } = await measurePretrained({ ctx, engine, threads, folder, seqs, reps, ref });
  if (performance.memory) result.memory.jsHeapBytes = performance.memory.usedJSHeapSize;
  result.isolated = globalThis.crossOriginIsolated === true;
  return result;
};
// where: 'worker' runs the engine in a dedicated Worker of this page (workerFamily), else on the page.
window.benchFamily = async ({ where, ...args }) => {
  const result = where === 'worker' ? await workerFamily(args) : await measureFamily({ ctx, ...args });
  if (result.memory && performance.memory) result.memory.jsHeapBytes = performance.memory.usedJSHeapSize;
  result.isolated = globalThis.crossOriginIsolated === true;
  return result;
};
function workerFamily(args) {
  const worker = new Worker(new URL('./page-worker.mjs', import.meta.url), { type: 'module' });
  const done = new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => (data.error ? reject(new Error(data.error)) : resolve(data.result));
    worker.onerror = (e) => reject(new Error(`the bench Worker failed: ${e.message || 'no message'}`));
  });
  worker.postMessage(args);
  return done.finally(() => worker.terminate());
}
window.benchPeak = () => measurePeak();
window.benchReady = true;
