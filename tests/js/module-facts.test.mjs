// What the API reads from the WebAssembly modules instead of keeping its own copy: the heap's
// cap (linked with -sMAXIMUM_MEMORY in CMakeLists.txt).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';

const read = (p) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

/** -sMAXIMUM_MEMORY of the modules' link step, in bytes (Emscripten reads 1gb, 512mb, … as powers of 1024). */
function linkedMaximum() {
  const flags = [...read('CMakeLists.txt').matchAll(/-sMAXIMUM_MEMORY=(\d+)(kb|mb|gb)?\b/gi)];
  assert.equal(flags.length, 1, 'one -sMAXIMUM_MEMORY in CMakeLists.txt');
  const [, n, unit = ''] = flags[0];
  return Number(n) * { '': 1, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30 }[unit.toLowerCase()];
}

for (const flavour of ['simd', 'scalar']) {
  test(`${flavour}: the heap cap in info() and in the errors is the one both modules were linked with`, async () => {
    const lab = await createHeadlab({ flavour });
    const linked = linkedMaximum();
    assert.equal(lab.info().maxMemoryBytes, linked, 'info().maxMemoryBytes against CMakeLists.txt');
    // The training module is linked with the same flags (read through the private loader: no public field has it).
    assert.equal((await lab._trainModule()).heapMax(), linked, 'the training module');
    const I = new Float32Array(16);
    assert.throws(() => lab.multiHeadAttention({ query: new Float32Array(20000 * 4), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, returnWeights: true }),
      (e) => e instanceof RangeError && e.message.includes(`capped at ${linked / 2 ** 20} MiB`), 'the forward pass names the linked cap');
  });
}

test('no copy of the heap cap is left in web/lib', () => {
  for (const m of ['memory', 'forward', 'lab']) {
    assert.doesNotMatch(read(`web/lib/api/${m}.js`), /1024 \* 2 \*\* 20|2 \*\* 30|1073741824/, `${m}.js spells the heap cap`);
  }
});
