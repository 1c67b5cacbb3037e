// The one HeadLab instance of the page. The site's module build finds the wasm files
// next to the bundle; the classic build carries the SIMD modules inside itself
// (base64), which is what makes it work from file://, where fetch is not
// allowed. Engines without WebAssembly SIMD get the scalar build, fetched next
// to the bundle in both builds. The npm package's components (headlab/components)
// leave the files to web/lib/headlab.js, the package's own API module, so a page that
// also imports 'headlab' shares one instance and fetches each .wasm once
// (headlab:layout, set by the build, says which build this is).

import { createHeadlab, simdSupported } from '../../../lib/headlab.js';
import embeddedWasm from 'headlab:embedded-wasm';
import { wasmNextToBundle } from 'headlab:layout';
import { BASE_URL } from './assets.js';

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

let pending = null;
let options = null;

/**
 * Resolves to the shared Headlab instance (see web/lib/headlab.js). `preload` as createHeadlab's:
 * modules to load beside the forward-pass one (a Worker that trains passes ['train']).
 */
export function getLab({ preload } = {}) {
  if (!options) {
    options = wasmNextToBundle ? { locateFile: (file) => new URL(file, BASE_URL).href } : {};
    if (embeddedWasm && simdSupported()) {
      options.wasmBinary = decodeBase64(embeddedWasm.core);
      options.trainWasmBinary = decodeBase64(embeddedWasm.train);
    }
  }
  const withPreload = preload ? { ...options, preload } : options;
  if (!pending) {
    pending = createHeadlab(withPreload);
    pending.catch(() => { pending = null; });
  } else if (preload) {
    createHeadlab(withPreload).catch(() => {});  // the instance there is; it starts those modules
  }
  return pending;
}
