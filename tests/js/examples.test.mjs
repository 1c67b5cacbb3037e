// The Node examples in examples/api/ run as printed (they import 'headlab', which resolves to
// this package by its own name) and print what their comments say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = (file) => execFileSync(process.execPath, [path.join('examples/api', file)], { cwd: repo, encoding: 'utf8', timeout: 60_000 });

test('examples/api/forward.mjs prints the worked example', () => {
  const out = run('forward.mjs');
  assert.match(out, /output for "it": 0\.7931 0\.1474 0\.1474 0\.7931/);
  assert.match(out, /0\.7337 0\.0879 0\.1784/);
});

test('examples/api/layer.mjs: a causal first row is its input, and dispose leaves no handle', () => {
  const out = run('layer.mjs');
  assert.match(out, /causal=true: first row 0\.0000 0\.8415 0\.9093 0\.1411/);
  assert.match(out, /live handles after dispose: 0/);
});

test('examples/api/trainer.mjs trains to full accuracy', () => {
  const out = run('trainer.mjs');
  assert.match(out, /step 1000: loss/);
  assert.match(out, /accuracy: 1\.000/);
});

test('examples/api/worker.mjs gets its result back from a worker thread', () => {
  assert.match(run('worker.mjs'), /from the worker: T=256, [\d.]+ ms, output\[0\.\.3\] 20\.0322 23\.1381 28\.7616 24\.7638/);
});
