// The wasm heap as the API sees it: its cap and the arena layout of one call's arrays.

const HEADROOM_BYTES = 32 * 2 ** 20;  // left to malloc and the workspace when a request is sized

/**
 * The heap's cap as the module was linked (-sMAXIMUM_MEMORY in CMakeLists.txt, through
 * emscripten_get_heap_max), read once at load: `maxMemoryBytes`, and `maxRequestBytes`,
 * the most one call's arrays may take.
 */
export function heapLimits(module) {
  const maxMemoryBytes = module.heapMax();
  return { maxMemoryBytes, maxRequestBytes: maxMemoryBytes - HEADROOM_BYTES };
}

const ALIGN = 16;  // bytes; each array in the arena starts on a SIMD boundary

export class Arena {
  constructor() { this.parts = []; this.bytes = 0; }
  /** Adds a part of `count` elements of `bytesPer` bytes; returns its index. */
  add(count, bytesPer) {
    const offset = this.bytes;
    this.bytes = offset + Math.ceil((count * bytesPer) / ALIGN) * ALIGN;
    this.parts.push(offset);
    return this.parts.length - 1;
  }
}
