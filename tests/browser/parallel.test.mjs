// createParallelLayer in headless Chromium, served with the site's strict
// Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval', no blob: Workers),
// on a page and inside a module Worker, and through the site's bundle; every option
// gives what multiHeadAttention gives; dispose() ends every Worker and thread.
// Twice: on a page that is not cross-origin isolated, where module Workers split the
// heads, and on one that is (COOP/COEP), where the threads build (pthreads, its thread
// Workers loaded from same-origin URLs) runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watch, useSite } from './helpers.mjs';

// Runs in the page and in a Worker: every option at threads 2 and 3 against
// multiHeadAttention; returns the largest difference and the Worker counts.
async function check(createHeadlab) {
  const lab = await createHeadlab();
  let x = 12345;
  const fill = (n) => Float32Array.from({ length: n }, () => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648 - 0.5; });
  const cases = [
    { tQ: 9, dModel: 12, numHeads: 3, causal: true, keyMask: true, bias: true },
    { tQ: 4, tK: 11, dModel: 16, numHeads: 4, keyMask: true, headMask: true },
    { tQ: 5, tK: 7, dModel: 10, numHeads: 3, dK: 3, dV: 6 },
    { tQ: 6, dModel: 8, numHeads: 1 },
  ];
  let maxDiff = 0, compared = 0;
  const counts = [];
  for (const threads of [2, 3]) {
    for (const c of cases) {
      const dK = c.dK ?? c.dModel / c.numHeads, dV = c.dV ?? c.dModel / c.numHeads, h = c.numHeads;
      const w = {
        dModel: c.dModel, numHeads: h, wQ: fill(c.dModel * h * dK), wK: fill(c.dModel * h * dK), wV: fill(c.dModel * h * dV),
        wO: fill(h * dV * c.dModel),
      };
      if (c.dK) Object.assign(w, { dK, dV });
      if (c.bias) Object.assign(w, { bQ: fill(h * dK), bK: fill(h * dK), bV: fill(h * dV), bO: fill(c.dModel) });
      const inputs = { query: fill(c.tQ * c.dModel), causal: Boolean(c.causal), returnWeights: true, returnIntermediates: true };
      if (c.tK) Object.assign(inputs, { key: fill(c.tK * c.dModel), value: fill(c.tK * c.dModel) });
      if (c.keyMask) inputs.keyMask = Uint8Array.from({ length: c.tK ?? c.tQ }, (_, j) => (j % 3 === 1 ? 0 : 1));
      if (c.headMask) inputs.headMask = Uint8Array.from({ length: h }, (_, i) => i % 2);
      const layer = await lab.createParallelLayer({ ...w, threads });
      counts.push([layer.mechanism, layer.threads, lab.liveWorkerCount()]);
      const got = await layer.forward(inputs);
      const want = lab.multiHeadAttention({ ...w, ...inputs });
      await layer.dispose();
      const pairs = [[got.output, want.output], [got.weights, want.weights],
        ...Object.keys(want.intermediates).map((k) => [got.intermediates[k], want.intermediates[k]])];
      for (const [a, b] of pairs) {
        if (a.length !== b.length) return { error: `length ${a.length} ≠ ${b.length}` };
        for (let i = 0; i < a.length; i++) {
          const d = Object.is(a[i], b[i]) ? 0 : Math.abs(a[i] - b[i]);
          maxDiff = Math.max(maxDiff, Number.isNaN(d) ? Infinity : d);
          compared++;
        }
      }
    }
  }
  let badInput = null;
  try { await lab.createParallelLayer({ dModel: 4, numHeads: 2, wQ: new Float32Array(3) }); } catch (e) { badInput = `${e.constructor.name}: ${e.message}`; }
  // The Workers on request, whatever the page allows.
  const w = { dModel: 8, numHeads: 2, wQ: fill(64), wK: fill(64), wV: fill(64), wO: fill(64) };
  const asked = await lab.createParallelLayer({ ...w, mechanism: 'workers' });
  const query = fill(24);
  const askedOut = (await asked.forward({ query })).output, want = lab.multiHeadAttention({ ...w, query }).output;
  await asked.dispose();
  const askedDiff = Math.max(...askedOut.map((v, i) => Math.abs(v - want[i])));
  return { maxDiff, compared, counts, after: lab.liveWorkerCount(), badInput, isolated: globalThis.crossOriginIsolated === true,
    info: lab.info().parallel, asked: [asked.mechanism, askedDiff] };
}

// Served at /parallel-check.js: does nothing on a page; in a module Worker it runs the check.
const WORKER_SCRIPT = `if (typeof WorkerGlobalScope === 'function' && self instanceof WorkerGlobalScope) {
  onmessage = async () => {
    try {
      const { createHeadlab } = await import('/lib/headlab.js');
      postMessage(await (${check})(createHeadlab));
    } catch (e) { postMessage({ error: String(e && e.message || e) }); }
  };
}`;

let page, isolatedPage;
const problems = [];

const inject = { path: '/parallel-check.js', script: WORKER_SCRIPT };
const site = useSite({ csp: true, inject, isolate: false }, {
  setup: async () => {
    page = watch(await site.browser.newPage(), 'parallel', problems);
    await page.goto(site.server.url);
  },
});
const isolatedSite = useSite({ csp: true, inject, isolate: true }, {
  setup: async () => {
    isolatedPage = watch(await isolatedSite.browser.newPage(), 'parallel, isolated', problems);
    await isolatedPage.goto(isolatedSite.server.url);
  },
});

function checkResult(r, { isolated }) {
  const expected = isolated ? 'pthreads' : 'workers';
  assert.equal(r.error, undefined, r.error);
  assert.ok(r.compared > 1000, `${r.compared} numbers compared`);
  assert.ok(r.maxDiff <= 2e-6, `max |parallel − multiHeadAttention| = ${r.maxDiff}`);
  for (const [mechanism, threads, live] of r.counts) {
    assert.equal(mechanism, expected);
    assert.equal(live, threads, `one live Worker per thread (${expected})`);
  }
  assert.deepEqual(r.counts.map(([, t]) => t), [2, 2, 2, 1, 3, 3, 3, 1], 'threads capped at numHeads');
  assert.equal(r.after, 0, 'dispose() ended every Worker and thread');
  assert.match(r.badInput, /^RangeError: createParallelLayer: wQ/);
  assert.equal(r.isolated, isolated, isolated ? 'the page is cross-origin isolated' : 'the page is not cross-origin isolated: Workers need no isolation');
  assert.equal(r.info.mechanism, expected);
  assert.equal(r.asked[0], 'workers', "mechanism: 'workers' gives Workers");
  assert.ok(r.asked[1] <= 2e-6, `Workers asked for: max |diff| ${r.asked[1]}`);
}

const inWorker = () => new Promise((resolve, reject) => {
  const worker = new Worker('/parallel-check.js', { type: 'module' });
  worker.onmessage = (e) => { resolve(e.data); worker.terminate(); };
  worker.onerror = (e) => reject(new Error(e.message || 'worker error'));
  worker.postMessage('run');
});

test('on a page under the strict CSP: Workers split the heads and agree with multiHeadAttention', { timeout: 120_000 }, async () => {
  const r = await page.evaluate(`import('/lib/headlab.js').then((m) => (${check})(m.createHeadlab))`);
  checkResult(r, { isolated: false });
});

test('inside a module Worker under the strict CSP (nested Workers)', { timeout: 120_000 }, async () => {
  checkResult(await page.evaluate(inWorker), { isolated: false });
});

test('on a cross-origin isolated page under the strict CSP: pthreads split the heads and agree with multiHeadAttention', { timeout: 120_000 }, async () => {
  const r = await isolatedPage.evaluate(`import('/lib/headlab.js').then((m) => (${check})(m.createHeadlab))`);
  checkResult(r, { isolated: true });
});

test('inside a module Worker of an isolated page: pthreads there too (thread Workers nested in it)', { timeout: 120_000 }, async () => {
  checkResult(await isolatedPage.evaluate(inWorker), { isolated: true });
});

test('isolated page, main thread: dispose() stops and joins every thread; a thread Worker error rejects the pending and later calls; a new layer works', { timeout: 120_000 }, async () => {
  const r = await isolatedPage.evaluate(async () => {
    const { createHeadlab } = await import('/lib/headlab.js');
    const lab = await createHeadlab();
    let x = 99;
    const fill = (n) => Float32Array.from({ length: n }, () => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648 - 0.5; });
    const d = 64, w = { dModel: d, numHeads: 4, wQ: fill(d * d), wK: fill(d * d), wV: fill(d * d), wO: fill(d * d) };
    const query = fill(256 * d);
    const outcome = (p) => p.then(() => 'resolved', (e) => `${e.constructor.name}: ${e.message}`);

    // dispose() on the main thread: the threads leave their loops (the exit word), are joined (the core deleted), their Workers end.
    const layer = await lab.createParallelLayer({ ...w, threads: 2 });
    await layer.forward({ query });
    const { PThread, HEAP32 } = layer._module, core = layer._core;
    const exited = core.exitedAddress() >> 2;
    const before = { mechanism: layer.mechanism, running: PThread.runningWorkers.length, exited: Atomics.load(HEAP32, exited),
      live: lab.liveWorkerCount() };
    await layer.dispose();
    const disposed = { exited: Atomics.load(HEAP32, exited), deleted: core.isDeleted(),
      workers: PThread.runningWorkers.length + PThread.unusedWorkers.length, pthreads: Object.keys(PThread.pthreads).length,
      live: lab.liveWorkerCount() };

    // An 'error' event on a thread Worker (as a crashed thread's Worker sends) while a call runs and another waits.
    const second = await lab.createParallelLayer({ ...w, threads: 2 });
    const worker = second._module.PThread.runningWorkers[1];
    const pending = [second.forward({ query, returnWeights: true }), second.forward({ query })].map(outcome);
    await null;  // the first call has been started (its turn came in the microtask before this one) and awaits the threads
    worker.dispatchEvent(new ErrorEvent('error', { message: 'a dispatched error' }));
    const rejected = await Promise.all(pending);
    const liveAfterError = lab.liveWorkerCount();
    const later = await outcome(second.forward({ query }));
    await second.dispose();

    const third = await lab.createParallelLayer({ ...w, threads: 2 });
    const got = (await third.forward({ query })).output, want = lab.multiHeadAttention({ ...w, query }).output;
    await third.dispose();
    return { before, disposed, rejected, liveAfterError, later, diff: Math.max(...got.map((v, i) => Math.abs(v - want[i]))),
      after: lab.liveWorkerCount() };
  });
  assert.deepEqual(r.before, { mechanism: 'pthreads', running: 2, exited: 0, live: 2 });
  assert.deepEqual(r.disposed, { exited: 2, deleted: true, workers: 0, pthreads: 0, live: 0 }, 'every thread left its loop, was joined, and its Worker ended');
  const died = /^Error: ParallelLayer.forward: thread Worker 2 of 2 ended unexpectedly \(a dispatched error\); this layer cannot run any more: dispose\(\) it and create a new one with lab.createParallelLayer\(\)$/;
  r.rejected.forEach((m, i) => assert.match(m, died, `call ${i + 1}`));
  assert.equal(r.liveAfterError, 0, 'the other thread Worker is ended at once');
  assert.match(r.later, died);
  assert.ok(r.diff <= 2e-6, `a new layer: max |diff| ${r.diff}`);
  assert.equal(r.after, 0);
});

for (const isolated of [false, true]) {
  test(`through the bundled API (dist/headlab-components.js)${isolated ? ', isolated: its threads build is dist/headlab_core_threads.*' : ': its Worker is dist/headlab-parallel-worker.js'}`, { timeout: 120_000 }, async () => {
    const r = await (isolated ? isolatedPage : page).evaluate(async () => {
      const { createHeadlab } = await import('/headlab-components.js');
      const lab = await createHeadlab();
      const I = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
      const w = { dModel: 4, numHeads: 2, wQ: I, wK: I, wV: I, wO: I };
      const query = new Float32Array([3, 0, 0, 1, 0, 3, 0, 1, 1, 1, 0, 1]);
      const layer = await lab.createParallelLayer({ ...w, threads: 2 });
      const got = await layer.forward({ query, returnWeights: true });
      await layer.dispose();
      const want = lab.multiHeadAttention({ ...w, query, returnWeights: true });
      return { got: Array.from(got.output).concat(Array.from(got.weights)), want: Array.from(want.output).concat(Array.from(want.weights)),
        live: lab.liveWorkerCount(), mechanism: layer.mechanism };
    });
    r.got.forEach((x, i) => assert.ok(Math.abs(x - r.want[i]) <= 1e-6, `[${i}] ${x} vs ${r.want[i]}`));
    assert.equal(r.live, 0);
    assert.equal(r.mechanism, isolated ? 'pthreads' : 'workers');
  });
}

test('no console errors, CSP violations, page errors or failed requests', () => {
  assert.deepEqual(problems, []);
});
