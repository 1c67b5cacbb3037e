// What the bench's engines read in a browser, from the repository root that serves the page: the
// files of a model and the engines' modules. Shared by the page (page.mjs) and its Worker (page-worker.mjs).
export const root = new URL('/', location.href).href;

export const ctx = {
  readBytes: async (rel) => {
    const res = await fetch(root + rel);
    if (!res.ok) throw new Error(`GET ${rel}: ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  },
  importHeadlab: () => import(root + 'web/lib/headlab.js'),
  importOrt: () => import(root + 'node_modules/onnxruntime-web/dist/ort.wasm.min.mjs'),
};
