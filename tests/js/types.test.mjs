// headlab.d.ts under `tsc --strict`, as a TypeScript user compiles against it: the README's
// JavaScript examples type-check with `lib` ES2022 + DOM and with ESNext; `returnWeights: true`
// makes `weights` non-optional, and without it reading `weights` as a Float32Array is an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const api = path.join(repo, 'web/lib/headlab.js');

function compile(files, lib) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-types-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler',
        lib, types: [], skipLibCheck: false, allowImportingTsExtensions: false },
      files: Object.keys(files),
    }));
    const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    return { status: r.status, out: (r.stdout + r.stderr).replaceAll(dir, '.') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
const [first, ...rest] = blocks;
// The README's blocks continue one another (the training block uses the first one's `lab`).
const examples = `${first.replace("'./web/lib/headlab.js'", `'${api}'`)}\n${rest.map((b) => b.replace(/^import .*$/gm, '')).join('\n')}\nexport {};\n`;
const typed = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const r = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I, returnWeights: true });
const w: Float32Array = r.weights;
const layer = lab.createLayer({ dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I });
const q: Float32Array = layer.forward({ query: new Float32Array(8), returnIntermediates: true }).intermediates.concat;
layer[Symbol.dispose]();
export { w, q };
`;
const untyped = `import { createHeadlab } from '${api}';
const lab = await createHeadlab();
const I = new Float32Array(16);
const w: Float32Array = lab.multiHeadAttention({ query: new Float32Array(8), dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I }).weights;
export { w };
`;

for (const lib of [['ES2022', 'DOM'], ['ESNext', 'DOM']]) {
  test(`tsc --strict, lib ${lib.join(' + ')}: the README examples and the typed results compile`, { timeout: 120_000 }, () => {
    assert.ok(blocks.length >= 2, 'README has its ```js examples');
    const r = compile({ 'examples.ts': examples, 'typed.ts': typed }, lib);
    assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  });
}

test('tsc --strict: without returnWeights, weights may be undefined (the overload does not lie)', { timeout: 120_000 }, () => {
  const r = compile({ 'untyped.ts': untyped }, ['ES2022', 'DOM']);
  assert.notEqual(r.status, 0, 'reading weights without returnWeights must not type-check as Float32Array');
  assert.match(r.out, /TS2322: Type 'Float32Array(<ArrayBufferLike>)? \| undefined' is not assignable to type 'Float32Array(<ArrayBufferLike>)?'/);
});
