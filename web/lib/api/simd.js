// The SIMD probe on its own, importing nothing: load.js uses it to choose a build, and
// headlab-components.js to preload that build's .wasm before the API's code has arrived.

// The smallest module that uses a SIMD instruction: (func (result v128) i32.const 0 i32x4.splat).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 8, 1, 6, 0, 65, 0, 253, 17, 11]);

/**
 * Whether this JavaScript engine runs WebAssembly SIMD (fixed-width, 128-bit).
 * {@link createHeadlab} loads the scalar build when it does not.
 * @returns {boolean}
 */
export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}
