// The one HeadLab instance of the page. The module build finds headlab_core.wasm
// next to the bundle; the classic build carries the wasm inside itself (base64),
// which is what makes it work from file://, where fetch is not allowed.

import { createHeadlab } from '../../lib/headlab.js';
import embeddedWasm from 'headlab:embedded-wasm';

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
    pending = createHeadlab(embeddedWasm ? { wasmBinary: decodeBase64(embeddedWasm) } : {});
    pending.catch(() => { pending = null; });
  }
  return pending;
}
