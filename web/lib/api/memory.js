// The wasm heap as the API sees it: its cap and the arena layout of one call's arrays.

/** Must match -sMAXIMUM_MEMORY in CMakeLists.txt. */
export const MAX_MEMORY_BYTES = 1024 * 2 ** 20;
export const MAX_REQUEST_BYTES = MAX_MEMORY_BYTES - 32 * 2 ** 20;

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
