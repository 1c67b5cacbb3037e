// The README's worked example and the JavaScript examples of docs/training.md and docs/language-models.md
// (which continue it: they use its `lab`) run as printed and give the numbers their comments claim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expected } from '../fixtures/course.mjs';

const doc = (file) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const jsBlocks = (text) => [...text.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

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
    const want = [...expected.output, ...expected.weightsHead1];
    want.forEach((w, i) => assert.ok(Math.abs(numbers[i] - w) < 5e-5, `printed ${numbers[i]}, README says ${w}\n${out}`));
    assert.equal(numbers[7], 1048576);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the package README (docs/package-readme.md) example prints the worked example', () => {
  const block = jsBlocks(doc('docs/package-readme.md'))[0];
  assert.ok(block.includes("from 'headlab'"), 'the example imports the package by its name');
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-readme-'));
  try {
    const file = path.join(dir, 'example.mjs');
    writeFileSync(file, block.replace("from 'headlab'", `from '${lib}'`));
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' });
    const numbers = (out.match(/-?\d+\.\d+/g) ?? []).map(Number);
    const want = [...expected.output, ...expected.weightsHead1];
    assert.equal(numbers.length, want.length, out);
    want.forEach((w, i) => assert.ok(Math.abs(numbers[i] - w) < 5e-5, `printed ${numbers[i]}, the course says ${w}\n${out}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/training.md example runs as printed after the README one', () => {
  const blocks = [jsBlocks(doc('README.md'))[0], ...jsBlocks(doc('docs/training.md'))];
  assert.ok(blocks.length >= 2, 'docs/training.md has a training ```js block');
  const training = blocks.find((b) => b.includes('createTrainer'));
  assert.ok(training, 'a block uses createTrainer');
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-readme-'));
  try {
    const file = path.join(dir, 'training.mjs');
    // The training block continues the first one (it uses its `lab`); report what it computed.
    const report = 'console.log(JSON.stringify({ trained: again.config().step, handles: lab.liveHandleCount() }));\n';
    assert.ok(training.includes('t.dispose(); again.dispose();'), 'the block ends by disposing both trainers');
    writeFileSync(file, blocks[0].replace("'./web/lib/headlab.js'", `'${lib}'`) +
      training.replace('t.dispose(); again.dispose();', `${report}t.dispose(); again.dispose();`));
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' });
    const last = JSON.parse(out.trim().split('\n').pop());
    assert.equal(last.trained, 300, `the reloaded trainer has the saved step count\n${out}`);
    assert.equal(last.handles, 0, 'no Embind handle left alive');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/language-models.md example runs as printed: heads form and the model copies the repeat', { timeout: 120_000 }, () => {
  const blocks = [jsBlocks(doc('README.md'))[0], ...jsBlocks(doc('docs/language-models.md'))];
  const lm = blocks.find((b) => b.includes('createLanguageModel'));
  assert.ok(lm, 'a block uses createLanguageModel');
  const end = 'lm.dispose(); copy.dispose();';
  assert.ok(lm.includes(end), 'the block ends by disposing both models');
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-readme-'));
  try {
    const file = path.join(dir, 'lm.mjs');
    const report = "console.log(JSON.stringify({ next: lm.predict('x q 3 k a x q', { topK: 1 })[0].token, " +
      "shape: lm.attention('x q 3 k a x q 3 k').shape, steps: copy.steps, off: copy.headEnabled(1, 0) }));\n";
    writeFileSync(file, blocks[0].replace("'./web/lib/headlab.js'", `'${lib}'`) + lm.replace(end, `${report}${end}\nconsole.log(lab.liveHandleCount());\n`));
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim().split('\n');
    assert.equal(out.pop(), '0', 'no Embind handle left alive');
    const r = JSON.parse(out.pop());
    const printed = out.join('\n');
    const said = /accuracy on the repeat: (\d\.\d\d)/.exec(lm)?.[1];
    assert.ok(said, 'the block says the accuracy it prints');
    assert.ok(printed.split('\n').includes(said), `accuracy ${said} as the comment says\n${printed}`);
    assert.match(printed, /^layer 1 head \d: previous token$/m, printed);
    assert.match(printed, /^layer 2 head \d: induction$/m, printed);
    assert.equal(r.next, '3');
    assert.deepEqual(r.shape, [2, 4, 10, 10]);
    assert.equal(r.steps, 3000);
    assert.equal(r.off, false, 'the head switch is saved');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("docs/language-models.md threads example runs as printed: 'auto' takes the cores in Node, the loss is one thread's up to rounding", { timeout: 120_000 }, () => {
  const blocks = [jsBlocks(doc('README.md'))[0], ...jsBlocks(doc('docs/language-models.md'))];
  const block = blocks.find((b) => b.includes("threads: 'auto'"));
  assert.ok(block, "a block uses threads: 'auto'");
  const end = 'fast.dispose();';
  assert.ok(block.includes(`fast.step(100);`) && block.includes(end), 'the block steps 100 times and disposes the model');
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-readme-'));
  try {
    const file = path.join(dir, 'threads.mjs');
    // The loss of the block's 100th step, and of the same model on one thread, for comparison.
    const withLoss = block.replace('fast.step(100);', 'const lastLoss = fast.step(100).loss;');
    const report = "const one = await lab.createLanguageModel({ task: 'induction' });\n" +
      'console.log(JSON.stringify({ threads: fast.threads, live: lab.liveWorkerCount(), loss: lastLoss, oneLoss: one.step(100).loss }));\none.dispose();\n';
    writeFileSync(file, blocks[0].replace("'./web/lib/headlab.js'", `'${lib}'`) + withLoss.replace(end, `${report}${end}\nconsole.log(lab.liveWorkerCount());\n`));
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim().split('\n');
    assert.equal(out.pop(), '0', 'dispose() ended the thread Workers');
    const r = JSON.parse(out.pop());
    const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
    assert.equal(r.threads, Math.min(cores, 8));
    assert.equal(r.live, r.threads - 1, 'threads − 1 thread Workers while the model lives');
    assert.ok(Math.abs(r.loss - r.oneLoss) <= 2e-5 * r.oneLoss, `loss after 100 steps: ${r.loss} on ${r.threads} threads, ${r.oneLoss} on one`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/language-models.md replacing example runs as printed: the second model has the first one\'s threads, which is disposed', { timeout: 120_000 }, () => {
  const blocks = [jsBlocks(doc('README.md'))[0], ...jsBlocks(doc('docs/language-models.md'))];
  const block = blocks.find((b) => b.includes('replacing: lm'));
  assert.ok(block, 'a block uses replacing');
  const lib = new URL('../../web/lib/headlab.js', import.meta.url).href;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-readme-'));
  try {
    const file = path.join(dir, 'replacing.mjs');
    const first = block.replace(/\nlm = await/, '\nconst first = lm;\nconst live = lab.liveWorkerCount();\nlm = await');
    const report = '\nconsole.log(JSON.stringify({ threads: lm.threads, firstThreads: first.threads, live, liveAfter: lab.liveWorkerCount(), config: lm.config().seed }));\nlm.dispose();\nconsole.log(lab.liveWorkerCount());\n';
    writeFileSync(file, blocks[0].replace("'./web/lib/headlab.js'", `'${lib}'`) + first + report);
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim().split('\n');
    assert.equal(out.pop(), '0', 'dispose() ended the thread Workers');
    const r = JSON.parse(out.pop());
    assert.equal(r.config, 7, 'the new model has the seed it was made with');
    assert.equal(r.firstThreads, 0, 'the first model is disposed');
    assert.equal(r.liveAfter, r.live, 'the same thread Workers, none more');
    assert.equal(r.live, r.threads - 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
