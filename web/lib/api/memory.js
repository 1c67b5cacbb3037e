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

const PAGE = 65536;  // bytes in a WebAssembly page
const PROBE_STEPS = [3 * 2 ** 30, 2 ** 31, 3 * 2 ** 29, 2 ** 30, 2 ** 29];
let engineLimit = null;

/**
 * The most one WebAssembly memory may grow to here: `cap` (a module's heapMax) or less where the
 * engine allows less (a wasm32 memory addresses 4 GiB, but an engine may stop short of it: 32-bit
 * browsers, some phones). Probed once, on first use, by `probeMemoryLimit`.
 */
export function engineMemoryLimit(cap) {
  engineLimit ??= probeMemoryLimit(2 ** 32 - PAGE);
  return Math.min(cap, engineLimit);
}

/**
 * The largest of `cap` and a few steps below it (3, 2, 1.5, 1 GiB, 512 MiB) that a fresh memory
 * declared as Emscripten declares the module's (maximum 65536 pages) grows to; the smallest step when
 * none does. The memory is never written, so no page of it is used, and it is dropped at once.
 * `Memory` is WebAssembly.Memory (a test passes its own).
 */
export function probeMemoryLimit(cap, Memory = WebAssembly.Memory) {
  const steps = [cap, ...PROBE_STEPS.filter((b) => b < cap)];
  for (const bytes of steps) {
    try {
      new Memory({ initial: 0, maximum: 65536 }).grow(Math.floor(bytes / PAGE));
      return Math.floor(bytes / PAGE) * PAGE;
    } catch {
      // this engine stops below `bytes`: try the next step down
    }
  }
  return steps.at(-1);
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
