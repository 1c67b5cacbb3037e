// Language models whose steps split each batch over threads (createLanguageModel's `threads`,
// the threaded training module headlab_train_threads) under Node, where pthreads always run:
// a step on k threads against the one-thread step (the same up to float rounding: the gradient
// sums run in another order), head switches, save/load, 'auto', errors after the module loaded,
// and that dispose() ends every thread Worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { createHeadlab } from '../../web/lib/headlab.js';
import { threadWorkers } from '../../web/lib/api/threaded-module.js';

const lab = await createHeadlab();

/** |a − b| ≤ tol·max(1, |a|, |b|) for every pair, else a message naming the first index off. */
function close(a, b, tol, what) {
  assert.equal(a.length, b.length, `${what}: lengths`);
  for (let i = 0; i < a.length; i++) {
    const scale = Math.max(1, Math.abs(a[i]), Math.abs(b[i]));
    assert.ok(Math.abs(a[i] - b[i]) <= tol * scale, `${what}[${i}]: ${a[i]} vs ${b[i]}`);
  }
}

async function pair(options, threads) {
  const one = await lab.createLanguageModel(options);
  const many = await lab.createLanguageModel({ ...options, threads });
  return [one, many];
}

for (const [label, options, threads] of [
  ['induction, defaults, 2 threads', { task: 'induction', seed: 3 }, 2],
  ['cricket with an MLP, a batch of 7 over 3 threads (slices of 3, 2, 2)', { task: 'cricket', seed: 2, mlp: true, batchSize: 7 }, 3],
]) {
  test(`${label}: every step's loss and the attention equal one thread's up to float rounding, heads switched off included`, async () => {
    const [one, many] = await pair(options, threads);
    try {
      assert.equal(one.threads, 1);
      assert.equal(many.threads, threads);
      assert.deepEqual(many.config(), one.config(), 'same config');
      const losses = [[], []];
      for (let i = 0; i < 40; i++) {
        losses[0].push(one.step().loss);
        losses[1].push(many.step().loss);
        if (i === 20) for (const m of [one, many]) m.setHeadEnabled(0, 1, false);
      }
      close(losses[1], losses[0], 2e-5, 'losses');
      assert.notDeepEqual(losses[0].slice(0, 5), losses[0].slice(-5), 'training moved the loss');
      const text = options.task === 'induction' ? 'a b c d a b c' : 'virat hit the ball because it was';
      close(many.attention(text).weights, one.attention(text).weights, 1e-4, 'attention');
      const [e1, e2] = [one.evaluate(64), many.evaluate(64)];
      close([e2.loss], [e1.loss], 1e-4, 'held-out loss');
      assert.equal(many.headEnabled(0, 1), false);
      assert.equal(many.steps, 40);
    } finally {
      one.dispose();
      many.dispose();
    }
  });
}

test('loadLanguageModel(bytes, { threads }) goes on from the saved state as one thread does', async () => {
  const source = await lab.createLanguageModel({ task: 'induction', seed: 5, batchSize: 8 });
  source.step(30);
  const bytes = source.save();
  source.dispose();
  const one = await lab.loadLanguageModel(bytes);
  const many = await lab.loadLanguageModel(bytes, { threads: 2 });
  try {
    assert.equal(many.threads, 2);
    assert.equal(many.steps, 30);
    close([many.step(10).loss], [one.step(10).loss], 2e-5, 'loss after 10 more steps');
    assert.equal((await lab.loadLanguageModel(bytes, { threads: 1 })).threads, 1);
  } finally {
    one.dispose();
    many.dispose();
  }
});

test("threads: 'auto' takes the cores (at most 8 and at most batchSize); undefined is 1", async () => {
  const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  for (const [batchSize, want] of [[32, Math.min(cores, 8, 32)], [1, 1]]) {
    const lm = await lab.createLanguageModel({ task: 'induction', numLayers: 1, dModel: 8, numHeads: 2, batchSize, threads: 'auto' });
    assert.equal(lm.threads, want, `batchSize ${batchSize}`);
    lm.step(2);
    lm.dispose();
    assert.equal(lm.threads, 0, 'disposed');
  }
  const plain = await lab.createLanguageModel({ task: 'induction', numLayers: 1, dModel: 8, numHeads: 2 });
  assert.equal(plain.threads, 1);
  plain.dispose();
});

test('dispose() ends every thread Worker; a config the C++ refuses after the threads started leaves none running', async () => {
  const before = lab.liveWorkerCount();
  const lm = await lab.createLanguageModel({ task: 'induction', numLayers: 1, dModel: 8, numHeads: 2, batchSize: 6, threads: 3 });
  assert.equal(lab.liveWorkerCount(), before + 2, 'three threads: the calling one and two thread Workers');
  lm.step(3);
  lm[Symbol.dispose]();
  lm.dispose();
  assert.equal(lab.liveWorkerCount(), before);
  assert.throws(() => lm.step(), (e) => e instanceof TypeError && /LanguageModel.step: this model has been disposed/.test(e.message));

  // numHeads 3 does not divide dModel 8: the C++ says so once the threaded module has loaded.
  await assert.rejects(lab.createLanguageModel({ task: 'induction', numLayers: 1, dModel: 8, numHeads: 3, threads: 2 }),
    (e) => e instanceof RangeError && /createLanguageModel: .*numHeads/.test(e.message));
  assert.equal(lab.liveWorkerCount(), before, 'the refused model left no thread Worker');
  const bad = new Uint8Array(64);
  await assert.rejects(lab.loadLanguageModel(bad, { threads: 2 }), (e) => e instanceof RangeError && /loadLanguageModel: bytes: /.test(e.message));
  assert.equal(lab.liveWorkerCount(), before);
});

test('replacing: the new model takes over the old one\'s thread Workers when it runs on as many threads (none started), trains as a fresh model does, and the old one is disposed; refused, the old one is untouched', async () => {
  const before = lab.liveWorkerCount();
  const options = { task: 'induction', numLayers: 1, dModel: 8, numHeads: 2, batchSize: 6 };
  const old = await lab.createLanguageModel({ ...options, seed: 1, threads: 3 });
  old.step(2);
  const workers = threadWorkers(old._module);
  assert.equal(workers.length, 2, 'three threads: two thread Workers');
  const same = (model) => { const now = threadWorkers(model._module); return now.length === 2 && workers.every((w) => now.includes(w)); };

  // Refused by the C++ once set up beside the old one (numHeads 3 does not divide dModel 8).
  await assert.rejects(lab.createLanguageModel({ ...options, numHeads: 3, threads: 3, replacing: old }),
    (e) => e instanceof RangeError && /createLanguageModel: .*numHeads/.test(e.message));
  assert.equal(old.threads, 3, 'the old model still runs on its threads');
  assert.equal(old.step(1).step, 3);
  assert.equal(lab.liveWorkerCount(), before + 2);

  const reference = await lab.createLanguageModel({ ...options, seed: 5, threads: 3 });
  const heir = await lab.createLanguageModel({ ...options, seed: 5, threads: 3, replacing: old });
  assert.equal(old.threads, 0, 'the old model is disposed');
  assert.throws(() => old.step(1), (e) => e instanceof TypeError && /this model has been disposed/.test(e.message));
  assert.equal(heir.threads, 3);
  assert.ok(same(heir), 'the same two thread Workers, no new one');
  assert.equal(lab.liveWorkerCount(), before + 4, 'the reference\'s two and the heir\'s (the old one\'s) two');
  for (let k = 0; k < 3; k++) assert.equal(heir.step(2).loss, reference.step(2).loss, `step ${2 * (k + 1)}: the loss of a fresh model on 3 threads`);

  // loadLanguageModel too, through its one-thread probe.
  const loaded = await lab.loadLanguageModel(heir.save(), { threads: 3, replacing: heir });
  assert.equal(heir.threads, 0);
  assert.ok(same(loaded), 'loaded: the same two thread Workers');
  assert.equal(loaded.step(1).loss, reference.step(1).loss, 'the loaded model steps as the reference');

  // Another number of threads: a module of its own, and the old one's Workers end with it.
  const other = await lab.createLanguageModel({ ...options, seed: 5, threads: 2, replacing: loaded });
  assert.equal(loaded.threads, 0);
  assert.equal(lab.liveWorkerCount(), before + 2 + 1);
  // One thread: no module; the threaded model it replaces ends its Workers.
  const single = await lab.createLanguageModel({ ...options, seed: 5, replacing: other });
  assert.equal(other.threads, 0);
  assert.equal(single.threads, 1);
  assert.equal(lab.liveWorkerCount(), before + 2);

  await assert.rejects(lab.createLanguageModel({ ...options, replacing: {} }),
    (e) => e instanceof TypeError && /createLanguageModel: replacing must be a LanguageModel of this lab/.test(e.message));
  await assert.rejects(lab.loadLanguageModel(single.save(), { replacing: old }),
    (e) => e instanceof TypeError && /loadLanguageModel: replacing: that model has been disposed/.test(e.message));
  single.dispose();
  reference.dispose();
  assert.equal(lab.liveWorkerCount(), before);
});

test('an idle threaded model does not keep Node running', async () => {
  const lm = await lab.createLanguageModel({ task: 'induction', numLayers: 1, dModel: 8, numHeads: 2, threads: 2 });
  lm.step(2);
  const workers = process.getActiveResourcesInfo().filter((r) => /Worker|MessagePort/.test(r));
  assert.deepEqual(workers, [], 'no Worker or MessagePort holds the event loop');
  lm.dispose();
});

test("where the threads build is missing, threads: 2 says so and 'auto' falls back to one thread (and the lab remembers why)", async () => {
  const { mkdtempSync, copyFileSync, rmSync, writeFileSync } = await import('node:fs');
  const { execFileSync } = await import('node:child_process');
  const path = await import('node:path');
  const gen = new URL('../../web/lib/gen/', import.meta.url);
  // A folder with the one-thread modules only, as a server that did not copy the threads build.
  // In a process of its own: createHeadlab caches its first lab, whose files are the repository's.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-nothreads-'));
  try {
    for (const f of ['headlab_core.wasm', 'headlab_train.wasm']) copyFileSync(new URL(f, gen), path.join(dir, f));
    const script = path.join(dir, 'check.mjs');
    writeFileSync(script, `
      import { createHeadlab } from ${JSON.stringify(new URL('../../web/lib/headlab.js', import.meta.url).href)};
      const lab = await createHeadlab({ locateFile: (name) => ${JSON.stringify(dir)} + '/' + name });
      const options = { task: 'induction', numLayers: 1, dModel: 8, numHeads: 2 };
      const error = (p) => p.then((m) => { m.dispose(); return null; }, (e) => e.constructor.name + ': ' + e.message);
      const first = await error(lab.createLanguageModel({ ...options, threads: 2 }));
      const live = lab.liveWorkerCount();
      const auto = await lab.createLanguageModel({ ...options, threads: 'auto' });
      const autoThreads = auto.threads, autoStep = auto.step(2).step;
      const loaded = await lab.loadLanguageModel(auto.save(), { threads: 'auto' });
      auto.dispose();
      const again = await error(lab.createLanguageModel({ ...options, threads: 2 }));
      console.log(JSON.stringify({ first, live, autoThreads, autoStep, loadedThreads: loaded.threads, again }));
      loaded.dispose();
    `);
    const r = JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim().split('\n').pop());
    assert.match(r.first, /^Error: createLanguageModel: threads: the threaded training module failed to load: .*headlab_train_threads\.wasm/);
    assert.equal(r.live, 0, 'nothing left running');
    assert.equal(r.autoThreads, 1, "'auto' trains on one thread");
    assert.equal(r.autoStep, 2);
    assert.equal(r.loadedThreads, 1);
    assert.match(r.again, /^Error: createLanguageModel: threads: 2 threads cannot run here: the threads build did not load/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
