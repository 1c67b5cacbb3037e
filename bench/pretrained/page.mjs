// The browser side of one real-model run: the page, served from the repository root, exposes
// benchPretrained(args) for bench/pretrained/run.mjs, benchFamily(args) and benchPeak() for
// bench/pretrained/families.mjs to call (a fresh Chromium per run).
import { measurePretrained } from './measure.mjs';
import { measureFamily } from './measure-families.mjs';
import { measurePeak } from '../lib/peak.mjs';

const root = new URL('/', location.href).href;
const ctx = {
  readBytes: async (rel) => {
    const res = await fetch(root + rel);
    if (!res.ok) throw new Error(`GET ${rel}: ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  },
  importHeadlab: () => import(root + 'web/lib/headlab.js'),
  importOrt: () => import(root + 'node_modules/onnxruntime-web/dist/ort.wasm.min.mjs'),
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
window.benchFamily = async (args) => {
  const result = await measureFamily({ ctx, ...args });
  if (result.memory && performance.memory) result.memory.jsHeapBytes = performance.memory.usedJSHeapSize;
  result.isolated = globalThis.crossOriginIsolated === true;
  return result;
};
window.benchPeak = () => measurePeak();
window.benchReady = true;
