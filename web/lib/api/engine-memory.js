// How far this JavaScript engine lets one WebAssembly memory grow, which may be less than the 4 GiB a
// wasm32 memory addresses (and the pretrained module is linked for).

const PAGE = 65536;  // bytes in a WebAssembly page
const PROBE_STEPS = [3 * 2 ** 30, 2 ** 31, 3 * 2 ** 29, 2 ** 30, 2 ** 29];
let engineLimit = null;

/** Every engine HeadLab runs in lets a memory grow this far: a model that needs no more asks no probe. */
export const SURE_BYTES = 2 ** 30;

/**
 * The most one WebAssembly memory may grow to here, for a model that needs `need` bytes: `cap` (a
 * module's heapMax) or less where the engine allows less (a wasm32 memory addresses 4 GiB, but an
 * engine may stop short of it: 32-bit browsers, some phones). Probed once, by `probeMemoryLimit`, the
 * first time a model needs more than SURE_BYTES: the probe grows a throwaway memory to 4 GiB (about
 * 0.2 s, and address space a page's memory counters then report), which a smaller model never pays.
 */
export function engineMemoryLimit(cap, need = Infinity) {
  if (need <= Math.min(cap, SURE_BYTES) && engineLimit === null) return cap;
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
