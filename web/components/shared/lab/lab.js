// The one HeadLab instance of the page. The module build finds the wasm files
// next to the bundle; the classic build carries the SIMD modules inside itself
// (base64), which is what makes it work from file://, where fetch is not
// allowed. Engines without WebAssembly SIMD get the scalar build, fetched next
// to the bundle in both builds.

import { createHeadlab, simdSupported } from '../../../lib/headlab.js';
import embeddedWasm from 'headlab:embedded-wasm';
import { BASE_URL } from './assets.js';

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

let pending = null;

/** Resolves to the shared Headlab instance (see web/lib/headlab.js). */
export function getLab() {
  if (!pending) {
    const options = { locateFile: (file) => new URL(file, BASE_URL).href };
    if (embeddedWasm && simdSupported()) {
      options.wasmBinary = decodeBase64(embeddedWasm.core);
      options.trainWasmBinary = decodeBase64(embeddedWasm.train);
    }
    pending = createHeadlab(options);
    pending.catch(() => { pending = null; });
  }
  return pending;
}
