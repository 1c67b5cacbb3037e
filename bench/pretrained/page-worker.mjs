// A dedicated Worker of the bench page (page.mjs): runs measureFamily there, as a user's page that
// keeps the page responsive runs a model (and as the explorer does, in its Worker). A Worker may
// block (Atomics.wait), where the page's main thread must busy-wait for its pool threads.
import { measureFamily } from './measure-families.mjs';

const root = new URL('/', location.href).href;
const ctx = {
  readBytes: async (rel) => {
    const res = await fetch(root + rel);
    if (!res.ok) throw new Error(`GET ${rel}: ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  },
  importHeadlab: () => import(root + 'web/lib/headlab.js'),
  importOrt: () => import(root + 'node_modules/onnxruntime-web/dist/ort.wasm.min.mjs'),
};

self.onmessage = async ({ data }) => {
  try {
    const result = await measureFamily({ ctx, ...data });
    result.isolated = globalThis.crossOriginIsolated === true;
    self.postMessage({ result });
  } catch (e) {
    self.postMessage({ error: String(e?.message ?? e) });
  }
};
