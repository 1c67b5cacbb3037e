// The README's JavaScript example runs as printed and gives the numbers its comments claim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

test('README example prints the worked example', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, 'README has a ```js block');
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  assert.ok(block[1].includes("'./web/lib/headlab.js'"), 'the example imports ./web/lib/headlab.js');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-readme-'));
  try {
    const file = path.join(dir, 'example.mjs');
    writeFileSync(file, block[1].replace("'./web/lib/headlab.js'", `'${lib}'`));
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' });
    const numbers = (out.match(/-?\d+\.\d+|\d{4,}/g) ?? []).map(Number);
    const want = [0.7931, 0.1474, 0.1474, 0.7931, 0.7337, 0.0879, 0.1784];
    want.forEach((w, i) => assert.ok(Math.abs(numbers[i] - w) < 5e-5, `printed ${numbers[i]}, README says ${w}\n${out}`));
    assert.equal(numbers[7], 1048576);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
