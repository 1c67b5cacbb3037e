// Pretrained models on threads (loadPretrained's `threads`, the threaded module
// headlab_pretrained_threads) under Node, where pthreads always run: every fixture checkpoint on
// 2 and 3 threads gives exactly the one-thread answers (each GEMM is split by columns, attention by
// heads: every output is computed by the same arithmetic) and both agree with the float64
// reference; 'auto'; bad values; dispose() and failed loads end every thread Worker; a folder
// without the threads build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { createHeadlab } from '../../web/lib/headlab.js';
import { assertClose, expectedOf, fixtureObjects, toleranceOf } from './pretrained-helpers.mjs';

const lab = await createHeadlab();

/** What the tests compare: run (every position, attention, ablation), the lens, head scores, generation. */
async function answers(model, c) {
  const ablate = c.ablate.map(([layer, head]) => ({ layer, head }));
  const r = await model.run(c.ids, { attention: true, allLogits: true, ablate });
  const lens = await model.logitLens(c.ids, { topK: 3 });
  const scores = await model.headScores({ length: 6, seed: 2 });
  const gen = await model.generate(c.ids.slice(0, 4), { maxTokens: 5, temperature: 0.7, seed: 9 });
  return { logits: r.logits, attention: r.attention, next: r.next, lens: lens.layers, scores: scores.scores, gen: gen.ids };
}

for (const name of ['gpt2-f32', 'gpt2-f16', 'gpt2-sharded', 'neo-f32', 'neo-bf16']) {
  test(`${name}: 2 and 3 threads give one thread's answers exactly, and the float64 reference's`, async () => {
    const expected = expectedOf(name);
    const tol = toleranceOf(name);
    const one = await lab.loadPretrained(fixtureObjects(name));
    assert.equal(one.threads, 1);
    try {
      for (const threads of [2, 3]) {
        const before = lab.liveWorkerCount();
        const many = await lab.loadPretrained(fixtureObjects(name), { threads });
        try {
          assert.equal(many.threads, threads);
          assert.equal(many.threadsNote, '');
          assert.equal(lab.liveWorkerCount(), before + threads - 1, 'the calling thread and threads − 1 thread Workers');
          for (const c of expected.cases) {
            const a = await answers(one, c);
            const b = await answers(many, c);
            assertClose(b.logits, Float32Array.from(c.logits), tol, `${c.name}: logits`);
            assertClose(b.attention, Float32Array.from(c.attention), tol, `${c.name}: attention`);
            assert.deepEqual(b, a, `${c.name}: ${threads} threads give one thread's answers`);
          }
        } finally {
          many.dispose();
        }
        assert.equal(many.threads, 0);
        assert.equal(lab.liveWorkerCount(), before, 'dispose() ended the thread Workers');
      }
    } finally {
      one.dispose();
    }
  });
}

test("threads: 'auto' takes the cores (at most 8); undefined and 1 are one thread", async () => {
  const want = Math.min(Math.max(1, os.availableParallelism?.() ?? os.cpus().length), 8);
  const auto = await lab.loadPretrained(fixtureObjects('gpt2-f32'), { threads: 'auto' });
  assert.equal(auto.threads, want);
  assert.equal(auto.threadsNote, want === 1 ? 'one core is available' : '');
  auto.dispose();
  for (const threads of [undefined, 1]) {
    const m = await lab.loadPretrained(fixtureObjects('gpt2-f32'), threads === undefined ? {} : { threads });
    assert.equal(m.threads, 1);
    assert.equal(m.threadsNote, '');
    m.dispose();
  }
});

test('bad threads values are errors naming the option; a load that fails after the threads started leaves none', async () => {
  const objects = fixtureObjects('gpt2-f32');
  for (const [threads, type, pattern] of [
    [0, RangeError, /loadPretrained: threads must be a positive integer/],
    [1.5, RangeError, /loadPretrained: threads must be a positive integer/],
    [65, RangeError, /loadPretrained: threads must be at most 64, got 65/],
    ['2', TypeError, /loadPretrained: threads must be a positive integer or 'auto', got/],
  ]) {
    await assert.rejects(lab.loadPretrained(objects, { threads }), (e) => e instanceof type && pattern.test(e.message), String(threads));
  }
  const before = lab.liveWorkerCount();
  const damaged = { ...objects, weights: objects.weights.slice(0, 1000) };
  await assert.rejects(lab.loadPretrained(damaged, { threads: 2 }), /loadPretrained: model\.safetensors/);
  const badConfig = { ...objects, config: { ...objects.config, architectures: ['T5ForConditionalGeneration'] } };
  await assert.rejects(lab.loadPretrained(badConfig, { threads: 2 }), /T5ForConditionalGeneration/);
  // The threaded module loads beside config.json; the failed loads end it once it has.
  for (let i = 0; i < 100 && lab.liveWorkerCount() !== before; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(lab.liveWorkerCount(), before, 'no thread Worker left running');
});

test('an idle threaded model does not keep Node running', async () => {
  const m = await lab.loadPretrained(fixtureObjects('gpt2-f32'), { threads: 2 });
  await m.run('a b');
  // The previous test's failed loads end their thread Workers asynchronously: a port of theirs may
  // close a moment later (seen once in a full run). Give the loop up to 2 s to let go; a model that
  // holds it keeps it forever.
  const holding = () => process.getActiveResourcesInfo().filter((r) => /Worker|MessagePort/.test(r));
  for (let i = 0; i < 100 && holding().length; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(holding(), [], 'no Worker or MessagePort holds the event loop');
  m.dispose();
});

test("where the threads build is missing, threads: 2 says so and 'auto' runs on one thread saying why", async () => {
  const { mkdtempSync, copyFileSync, rmSync, writeFileSync } = await import('node:fs');
  const { execFileSync } = await import('node:child_process');
  const path = await import('node:path');
  const gen = new URL('../../web/lib/gen/', import.meta.url);
  // A folder with the one-thread modules only, as a server that did not copy the threads build;
  // in a process of its own (createHeadlab caches its first lab, whose files are the repository's).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-nothreads-'));
  try {
    for (const f of ['headlab_core.wasm', 'headlab_pretrained.wasm']) copyFileSync(new URL(f, gen), path.join(dir, f));
    const script = path.join(dir, 'check.mjs');
    writeFileSync(script, `
      import { createHeadlab } from ${JSON.stringify(new URL('../../web/lib/headlab.js', import.meta.url).href)};
      import { fixtureObjects } from ${JSON.stringify(new URL('./pretrained-helpers.mjs', import.meta.url).href)};
      const lab = await createHeadlab({ locateFile: (name) => ${JSON.stringify(dir)} + '/' + name });
      const error = (p) => p.then((m) => { m.dispose(); return null; }, (e) => e.constructor.name + ': ' + e.message);
      const first = await error(lab.loadPretrained(fixtureObjects('gpt2-f32'), { threads: 2 }));
      const live = lab.liveWorkerCount();
      const auto = await lab.loadPretrained(fixtureObjects('gpt2-f32'), { threads: 'auto' });
      const out = { first, live, autoThreads: auto.threads, note: auto.threadsNote, next: (await auto.run('a b')).next.length };
      auto.dispose();
      out.again = await error(lab.loadPretrained(fixtureObjects('gpt2-f32'), { threads: 2 }));
      console.log(JSON.stringify(out));
    `);
    const r = JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim().split('\n').pop());
    assert.match(r.first, /^Error: loadPretrained: threads: the threaded pretrained module failed to load: .*headlab_pretrained_threads/);
    assert.equal(r.live, 0, 'nothing left running');
    if (os.availableParallelism?.() !== 1) {
      assert.equal(r.autoThreads, 1, "'auto' runs on one thread");
      assert.match(r.note, /^the threads build did not load/);
    }
    assert.equal(r.next, 10);
    assert.match(r.again, /^Error: loadPretrained: threads: 2 threads cannot run here: the threads build did not load/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
