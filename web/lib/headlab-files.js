// Every file the API loads by URL or by import(), named relative to this folder. This module
// must stay next to headlab.js: Vite and webpack resolve `new URL('./…', import.meta.url)`
// against the file that holds it, while esbuild (dist/lib/headlab.js, the site bundles) keeps
// import.meta.url as the URL of the bundle it writes, which sits where headlab.js does.

// Three wasm modules, each in two flavours. `core` is the forward pass and the
// experiments; `train` is the trainer, loaded the first time a page asks for it;
// `pretrained` runs Hugging Face checkpoints, loaded by the first loadPretrained().
// The scalar flavour is the same C++ compiled without WebAssembly SIMD, for
// engines that lack it. The import() paths and the `new URL(…, import.meta.url)`
// of each .wasm are literal so bundlers (Vite, webpack) see them and emit the files.
export const MODULES = {
  core: {
    simd: { file: 'headlab_core', load: () => import('./gen/headlab_core.mjs'), url: () => new URL('./gen/headlab_core.wasm', import.meta.url) },
    scalar: { file: 'headlab_core_scalar', load: () => import('./gen/headlab_core_scalar.mjs'), url: () => new URL('./gen/headlab_core_scalar.wasm', import.meta.url) },
  },
  train: {
    simd: { file: 'headlab_train', load: () => import('./gen/headlab_train.mjs'), url: () => new URL('./gen/headlab_train.wasm', import.meta.url) },
    scalar: { file: 'headlab_train_scalar', load: () => import('./gen/headlab_train_scalar.mjs'), url: () => new URL('./gen/headlab_train_scalar.wasm', import.meta.url) },
  },
  // The pretrained-model engine (GPT-2, GPT-Neo inference), loaded by the first loadPretrained().
  pretrained: {
    simd: { file: 'headlab_pretrained', load: () => import('./gen/headlab_pretrained.mjs'), url: () => new URL('./gen/headlab_pretrained.wasm', import.meta.url) },
    scalar: { file: 'headlab_pretrained_scalar', load: () => import('./gen/headlab_pretrained_scalar.mjs'), url: () => new URL('./gen/headlab_pretrained_scalar.wasm', import.meta.url) },
  },
};

/**
 * @huggingface/tokenizers (Apache-2.0), copied from node_modules into gen/ at build time
 * (scripts/vendor-tokenizers.mjs), imported by the first loadPretrained() only.
 */
export function loadTokenizers() {
  return import('./gen/tokenizers.mjs');
}

// Not written `new URL('./…', import.meta.url)`: Vite and webpack emit every such literal as an
// asset, and this one would be a stray unbundled copy of the Worker script (which cannot run
// alone: it imports ./headlab.js) beside the bundled Worker of startParallelWorker(); webpack
// also reads `new URL(<variable>, import.meta.url)` as a request for every file of the folder.
// Node (worker_threads) starts its Worker from this URL; browsers use it to see where it is.
const PARALLEL_WORKER = './headlab-parallel-worker.js';
const HERE = import.meta.url;

/** The URL of createParallelLayer's Worker script, next to headlab.js. */
export function parallelWorkerUrl() {
  // webpack's classic (not output.module) bundles replace import.meta.url by the file: URL the
  // module had at build time; their Worker is the one they bundled, on the page's origin.
  if (/^file:/.test(HERE) && typeof location === 'object' && !/^file:/.test(String(location.href))) return new URL(PARALLEL_WORKER, location.href);
  return new URL(PARALLEL_WORKER, HERE);
}

/**
 * Starts createParallelLayer's Worker in a browser. Written as one literal
 * `new Worker(new URL('./…', import.meta.url), { type: 'module' })`, the pattern Vite and webpack
 * bundle as a Worker entry of its own (with the API it imports).
 */
export function startParallelWorker() {
  return new Worker(new URL('./headlab-parallel-worker.js', import.meta.url), { type: 'module', name: 'headlab-parallel' });
}
