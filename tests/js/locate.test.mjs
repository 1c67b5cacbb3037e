// Where the .wasm files are found, under Node: locateFile is honoured, and a file that is not
// there is an error naming the path, the OS error and what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';

const gen = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/lib/gen');

test('Node: a locateFile that points nowhere is an error naming the path and the fix; one that points at a copy works', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-locate-'));
  try {
    const asked = [];
    await assert.rejects(createHeadlab({ flavour: 'scalar', locateFile: (f) => { asked.push(f); return path.join(dir, 'missing', f); } }), (e) =>
      e.message === `HeadLab could not load its WebAssembly module headlab_core_scalar.wasm from ${path.join(dir, 'missing', 'headlab_core_scalar.wasm')}: ENOENT. ` +
        'Serve headlab_core_scalar.wasm next to headlab_core_scalar.mjs, or tell createHeadlab where it is with locateFile (or pass its bytes as wasmBinary); ' +
        'a web server must send it in full, as application/wasm.');
    assert.deepEqual(asked, ['headlab_core_scalar.wasm']);
    // The same file somewhere else, found through locateFile (a path or a file: URL).
    copyFileSync(path.join(gen, 'headlab_core_scalar.wasm'), path.join(dir, 'headlab_core_scalar.wasm'));
    const lab = await createHeadlab({ flavour: 'scalar', locateFile: (f) => new URL(`file://${path.join(dir, f)}`).href });
    assert.equal(lab.info().flavour, 'scalar');
    assert.ok(Math.abs(lab.parameterCount({ dModel: 512, numHeads: 8 }).total - 1048576) === 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
