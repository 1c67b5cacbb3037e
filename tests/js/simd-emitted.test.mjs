// The hot loops really compile to WASM SIMD128: disassemble the wasm doctest
// binary (linked with function names) and look inside each SIMD kernel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const wasm = (name) => fileURLToPath(new URL(`../../${name}`, import.meta.url));

/** Map from function name to the SIMD opcodes in its body. */
function simdOpsByFunction(file) {
  const text = execFileSync('wasm-objdump', ['-d', file], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  const ops = new Map();
  let current = null;
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+ func\[\d+\] <(.*)>:$/.exec(line);
    if (head) {
      current = new Set();
      ops.set(head[1], current);
      continue;
    }
    const op = /\|\s+((?:f32x4|i32x4|v128)\.[a-z0-9_]+)/.exec(line);
    if (op && current) current.add(op[1]);
  }
  return ops;
}

test('each SIMD kernel uses f32x4 arithmetic in wasm', () => {
  const ops = simdOpsByFunction(wasm('build/wasm/headlab_tests.wasm'));
  // A prefix may name alternatives (a|b): a kernel the compiler inlined into its Path dispatch.
  const find = (prefix) => prefix.split('|').map((p) => [...ops.keys()].find((k) => k.startsWith(p))).find(Boolean);
  const expectations = {
    // gemm_simd picks a layout (trans_a / trans_b) and calls the row kernel of that layout.
    'void headlab::(anonymous namespace)::gemm_simd_plain_b<false>(': ['f32x4.mul', 'f32x4.add', 'v128.load'],
    'void headlab::(anonymous namespace)::gemm_simd_plain_b<true>(': ['f32x4.mul', 'f32x4.add'],
    'headlab::softmax_rows_simd(': ['f32x4.mul', 'f32x4.add', 'f32x4.sub', 'i32x4.shl'],
    'headlab::exp_simd(': ['f32x4.mul', 'f32x4.add', 'i32x4.shl'],
    'headlab::scale_simd(|headlab::scale(headlab::Path': ['f32x4.mul'],
    'headlab::attention_fused_simd(': ['f32x4.mul', 'f32x4.add', 'i32x4.shl'],
    // The packed GEMM: its loop over matrices (gemm_packed_run) holds the micro-kernel once inlined.
    'headlab::gemm_shared_a_simd(|headlab::(anonymous namespace)::gemm_packed_run(': ['f32x4.mul', 'f32x4.add'],
  };
  for (const [prefix, needed] of Object.entries(expectations)) {
    const name = find(prefix);
    assert.ok(name, `no function named ${prefix}… in the wasm test binary`);
    for (const op of needed) assert.ok(ops.get(name).has(op), `${name} has no ${op}; it has ${[...ops.get(name)].join(', ')}`);
  }
  // And the scalar references stay scalar, so the comparison tests compare two paths.
  for (const prefix of ['headlab::gemm_ref(', 'headlab::attention_fused_ref(']) {
    const name = find(prefix);
    assert.ok(name && !ops.get(name).has('f32x4.mul'), `${prefix}… was auto-vectorised; the reference should be scalar`);
  }
});

test('the shipped module contains f32x4 arithmetic', () => {
  const ops = simdOpsByFunction(wasm('web/lib/gen/headlab_core.wasm'));
  const all = new Set([...ops.values()].flatMap((s) => [...s]));
  for (const op of ['f32x4.mul', 'f32x4.add', 'i32x4.shl']) assert.ok(all.has(op), `shipped wasm lacks ${op}`);
});
