// createParallelLayer in Node, both mechanisms: pthreads (the threads build, Node's
// default) and Workers (worker_threads). Every option gives what multiHeadAttention
// gives, within float rounding (the partial outputs are summed in another order);
// dispose() ends every thread and Worker; a Worker that dies is reported and a new
// layer can be made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab, ParallelLayer } from '../../web/lib/headlab.js';

const lab = await createHeadlab();
const baseHandles = lab.liveHandleCount();

function filler(seed) {
  let x = seed;
  return (n) => Float32Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648 - 0.5;
  });
}

/** Weights and inputs of a case: { w (createLayer's options), inputs (forward's) }. */
function problem(c) {
  const fill = filler(c.tQ * 7 + c.dModel + c.numHeads);
  const dK = c.dK ?? c.dModel / c.numHeads, dV = c.dV ?? c.dModel / c.numHeads;
  const w = {
    dModel: c.dModel, numHeads: c.numHeads, wQ: fill(c.dModel * c.numHeads * dK), wK: fill(c.dModel * c.numHeads * dK),
    wV: fill(c.dModel * c.numHeads * dV), wO: fill(c.numHeads * dV * c.dModel),
  };
  if (c.dK) Object.assign(w, { dK, dV });
  if (c.bias) Object.assign(w, { bQ: fill(c.numHeads * dK), bK: fill(c.numHeads * dK), bV: fill(c.numHeads * dV), bO: fill(c.dModel) });
  const inputs = { query: fill(c.tQ * c.dModel), causal: Boolean(c.causal) };
  if (c.tK) { inputs.key = fill(c.tK * c.dModel); inputs.value = fill(c.tK * c.dModel); }
  if (c.keyMask) inputs.keyMask = Uint8Array.from({ length: c.tK ?? c.tQ }, (_, j) => (j % 3 === 1 ? 0 : 1));
  if (c.headMask) inputs.headMask = Uint8Array.from({ length: c.numHeads }, (_, i) => (i % 2 === 0 ? 1 : 0));
  return { w, inputs };
}

/** |got - want| <= 1e-5 + 1e-5·|want| everywhere; the message names the first index off and the largest difference. */
function close(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0, first = -1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (Object.is(got[i], want[i])) continue;
    if (!(d <= 1e-5 + 1e-5 * Math.abs(want[i])) && first < 0) first = i;
    if (d > worst || Number.isNaN(d)) worst = d;
  }
  assert.ok(first < 0, `${what}[${first}] = ${got[first]}, want ${want[first]} (max |diff| ${worst})`);
}

function sameResult(got, want, label) {
  assert.deepEqual(Object.keys(got), Object.keys(want), `${label}: result keys`);
  for (const k of ['tQ', 'tK', 'dK', 'dV']) assert.equal(got[k], want[k], `${label}: ${k}`);
  close(got.output, want.output, `${label}: output`);
  if (want.weights) close(got.weights, want.weights, `${label}: weights`);
  if (want.intermediates) {
    assert.deepEqual(Object.keys(got.intermediates), Object.keys(want.intermediates), `${label}: intermediates`);
    for (const [k, v] of Object.entries(want.intermediates)) close(got.intermediates[k], v, `${label}: intermediates.${k}`);
  }
}

const cases = [
  ['self-attention', { tQ: 6, dModel: 8, numHeads: 2 }],
  ['causal with biases and a key mask', { tQ: 9, dModel: 12, numHeads: 3, causal: true, bias: true, keyMask: true }],
  ['cross-attention (Tq ≠ Tk) with a key mask and biases', { tQ: 4, tK: 11, dModel: 16, numHeads: 4, keyMask: true, bias: true }],
  ['dK ≠ dV, cross-attention', { tQ: 5, tK: 7, dModel: 10, numHeads: 3, dK: 3, dV: 6 }],
  ['a head mask', { tQ: 7, dModel: 20, numHeads: 5, headMask: true, bias: true }],
  ['one head', { tQ: 5, dModel: 6, numHeads: 1, bias: true }],
  ['8 heads of 64, T = 33', { tQ: 33, dModel: 512, numHeads: 8 }],
];
const flagSets = [{}, { returnWeights: true }, { returnWeights: true, returnIntermediates: true }, { returnIntermediates: true }];

for (const mechanism of ['workers', 'pthreads']) for (const threads of [1, 2, 3]) {
  test(`${mechanism}, threads ${threads}: forward equals multiHeadAttention for every option`, { timeout: 120_000 }, async () => {
    for (const [name, c] of cases) {
      const { w, inputs } = problem(c);
      const layer = await lab.createParallelLayer({ ...w, threads, mechanism });
      try {
        assert.ok(layer instanceof ParallelLayer);
        assert.equal(layer.mechanism, mechanism);
        assert.equal(layer.threads, Math.min(threads, c.numHeads), `${name}: threads`);
        assert.deepEqual(layer.shape, lab.createLayer(w).shape);
        // Calls in flight together come back each with its own answer.
        const got = await Promise.all(flagSets.map((flags) => layer.forward({ ...inputs, ...flags })));
        flagSets.forEach((flags, i) => sameResult(got[i], lab.multiHeadAttention({ ...w, ...inputs, ...flags }), `${name}, ${mechanism}, threads ${threads}, ${JSON.stringify(flags)}`));
      } finally {
        await layer.dispose();
      }
    }
    assert.equal(lab.liveWorkerCount(), 0);
  });
}

for (const mechanism of ['workers', 'pthreads']) {
  test(`${mechanism}: key and value given separately, and value defaulting to key, as multiHeadAttention reads them`, async () => {
    const { w, inputs } = problem({ tQ: 4, tK: 6, dModel: 8, numHeads: 4 });
    const layer = await lab.createParallelLayer({ ...w, threads: 2, mechanism });
    try {
      assert.equal(layer.mechanism, mechanism);
      for (const call of [{ query: inputs.query, key: inputs.key }, { query: inputs.query, key: inputs.key, value: inputs.value },
        { query: inputs.key, value: inputs.value }, { query: inputs.query, key: inputs.query, value: inputs.query }]) {
        sameResult(await layer.forward(call), lab.multiHeadAttention({ ...w, ...call }), `${mechanism}: ${Object.keys(call).join('+')}`);
      }
    } finally {
      await layer.dispose();
    }
  });
}

test('threads defaults to the cores available, at most 8 and at most numHeads; Node runs pthreads by default; lab.info() says so', async () => {
  const { parallel } = lab.info();
  assert.equal(parallel.mechanism, 'pthreads');
  assert.ok(parallel.cores >= 1 && parallel.defaultThreads === Math.min(parallel.cores, 8), JSON.stringify(parallel));
  for (const numHeads of [1, 16]) {
    const { w } = problem({ tQ: 2, dModel: 16, numHeads });
    const layer = await lab.createParallelLayer(w);
    assert.equal(layer.mechanism, 'pthreads');
    assert.equal(layer.threads, Math.min(parallel.defaultThreads, numHeads));
    await layer.dispose();
  }
  const { w } = problem({ tQ: 2, dModel: 8, numHeads: 2 });
  for (const mechanism of ['workers', 'pthreads']) {
    const wide = await lab.createParallelLayer({ ...w, threads: 5, mechanism });
    assert.equal(wide.threads, 2, `${mechanism}: threads above numHeads is lowered to numHeads`);
    await wide.dispose();
  }
});

test('dispose() ends every Worker; calls afterwards reject with a TypeError; nothing leaks', async () => {
  const { w, inputs } = problem({ tQ: 6, dModel: 12, numHeads: 3 });
  const layer = await lab.createParallelLayer({ ...w, threads: 3, mechanism: 'workers' });
  assert.equal(lab.liveWorkerCount(), 3);
  const pending = assert.rejects(layer.forward(inputs), /disposed before this call finished/);
  await layer.dispose();
  await pending;
  assert.equal(lab.liveWorkerCount(), 0);
  assert.equal(layer.threads, 0);
  await assert.rejects(layer.forward(inputs), (e) => e instanceof TypeError && /ParallelLayer.forward: .*disposed/.test(e.message));
  await layer.dispose();  // twice is fine
  layer[Symbol.dispose]();
  assert.equal(lab.liveHandleCount(), baseHandles);
});

// What `await using layer = …` calls at the end of its block (Node 24, TypeScript >= 5.2 or a transpiler;
// Node 20 does not parse it): Symbol.asyncDispose, which resolves once every thread or Worker has ended.
test('Symbol.asyncDispose is dispose(), awaited: both mechanisms have ended every Worker when it resolves', async () => {
  assert.equal(typeof Symbol.asyncDispose, 'symbol', 'this Node has Symbol.asyncDispose');
  const { w, inputs } = problem({ tQ: 6, dModel: 12, numHeads: 3 });
  for (const mechanism of ['pthreads', 'workers']) {
    const layer = await lab.createParallelLayer({ ...w, threads: 3, mechanism });
    assert.equal(lab.liveWorkerCount(), 3, mechanism);
    const pending = assert.rejects(layer.forward(inputs), /disposed before this call finished/);
    const done = layer[Symbol.asyncDispose]();
    assert.ok(done instanceof Promise, `${mechanism}: it returns a promise`);
    assert.equal(await done, undefined);
    await pending;
    assert.equal(lab.liveWorkerCount(), 0, `${mechanism}: every Worker ended when it resolved`);
    assert.equal(layer.threads, 0);
    await layer[Symbol.asyncDispose]();  // twice is fine
  }
  assert.equal(lab.liveHandleCount(), baseHandles);
});

test('pthreads: dispose() ends every thread and its Worker; calls not started reject; calls afterwards reject with a TypeError', async () => {
  const { w, inputs } = problem({ tQ: 64, dModel: 12, numHeads: 3 });
  const layer = await lab.createParallelLayer({ ...w, threads: 3 });
  assert.equal(layer.mechanism, 'pthreads');
  assert.equal(lab.liveWorkerCount(), 3, 'one thread Worker per thread');
  const { PThread } = layer._module;
  assert.equal(PThread.runningWorkers.length, 3, 'three threads are running');
  sameResult(await layer.forward(inputs), lab.multiHeadAttention({ ...w, ...inputs }), 'before dispose');
  // Calls wait their turn (the threads serve one at a time): disposing rejects those not started.
  const pending = [layer.forward(inputs), layer.forward(inputs)].map((p) => assert.rejects(p, /disposed before this call finished/));
  await layer.dispose();
  await Promise.all(pending);
  assert.equal(lab.liveWorkerCount(), 0);
  assert.equal(PThread.runningWorkers.length + PThread.unusedWorkers.length, 0, 'every thread Worker ended');
  assert.equal(layer.threads, 0);
  await assert.rejects(layer.forward(inputs), (e) => e instanceof TypeError && /ParallelLayer.forward: .*disposed/.test(e.message));
  await layer.dispose();  // twice is fine
  layer[Symbol.dispose]();
  assert.equal(lab.liveHandleCount(), baseHandles);
});

test('a Worker that dies rejects pending and later calls; a new layer works', async () => {
  const { w, inputs } = problem({ tQ: 512, dModel: 128, numHeads: 4 });  // long enough that the call is still running
  const layer = await lab.createParallelLayer({ ...w, threads: 2, mechanism: 'workers' });
  const pending = assert.rejects(layer.forward({ ...inputs, returnIntermediates: true }),
    (e) => e.constructor === Error && /Worker 2 of 2 ended unexpectedly .*create a new one with lab.createParallelLayer/.test(e.message));
  await layer._workers[1].worker.terminate();  // as if the Worker crashed or something ended it
  await pending;
  await assert.rejects(layer.forward(inputs), /ended unexpectedly.*dispose\(\) it and create a new one/);
  await layer.dispose();
  assert.equal(lab.liveWorkerCount(), 0, 'the other Worker is ended too');
  const again = await lab.createParallelLayer({ ...w, threads: 2, mechanism: 'workers' });
  sameResult(await again.forward(inputs), lab.multiHeadAttention({ ...w, ...inputs }), 'recreated');
  await again.dispose();
  assert.equal(lab.liveWorkerCount(), 0);
});

test('pthreads: a thread Worker that dies rejects the pending and later calls; the others are ended; a new layer works', async () => {
  const { w, inputs } = problem({ tQ: 512, dModel: 128, numHeads: 4 });  // long enough that the call is still running
  const layer = await lab.createParallelLayer({ ...w, threads: 2, mechanism: 'pthreads' });
  const { PThread } = layer._module;
  const [, second] = PThread.runningWorkers;
  assert.equal(PThread.runningWorkers.length, 2);
  assert.equal(lab.liveWorkerCount(), 2);
  const died = (e) => e.constructor === Error &&
    /^ParallelLayer.forward: thread Worker 2 of 2 ended unexpectedly \(it exited with code 1\); .*dispose\(\) it and create a new one with lab.createParallelLayer\(\)$/.test(e.message) &&
    e.cause instanceof Error;
  const pending = assert.rejects(layer.forward({ ...inputs, returnIntermediates: true }), died);
  const queued = assert.rejects(layer.forward(inputs), died);  // waiting its turn behind the first
  // One turn of the event loop: the first call has been laid out and started, and is awaiting the threads.
  await new Promise((resolve) => setImmediate(resolve));
  await second.terminate();  // as if the thread's Worker crashed or something ended it
  await pending;
  await queued;
  assert.equal(lab.liveWorkerCount(), 0, 'the other thread Worker is ended at once');
  await assert.rejects(layer.forward(inputs), died);
  await layer.dispose();
  assert.equal(lab.liveWorkerCount(), 0);
  assert.equal(PThread.runningWorkers.length + PThread.unusedWorkers.length, 0, 'no thread Worker left');
  await assert.rejects(layer.forward(inputs), (e) => e instanceof TypeError && /disposed/.test(e.message));
  const again = await lab.createParallelLayer({ ...w, threads: 2, mechanism: 'pthreads' });
  sameResult(await again.forward(inputs), lab.multiHeadAttention({ ...w, ...inputs }), 'recreated');
  await again.dispose();
  assert.equal(lab.liveWorkerCount(), 0);
});

test('pthreads: a thread Worker that dies while the layer is idle rejects the next call; dispose() after it resolves', async () => {
  const { w, inputs } = problem({ tQ: 6, dModel: 12, numHeads: 3 });
  const layer = await lab.createParallelLayer({ ...w, threads: 3, mechanism: 'pthreads' });
  sameResult(await layer.forward(inputs), lab.multiHeadAttention({ ...w, ...inputs }), 'before');
  await layer._module.PThread.runningWorkers[0].terminate();
  await assert.rejects(layer.forward(inputs), /thread Worker 1 of 3 ended unexpectedly \(it exited with code 1\)/);
  await layer.dispose();
  assert.equal(lab.liveWorkerCount(), 0);
});

test("pthreads: an 'error' event from a thread Worker (an exception in it) is reported the same way", async () => {
  const { w, inputs } = problem({ tQ: 6, dModel: 12, numHeads: 3 });
  const layer = await lab.createParallelLayer({ ...w, threads: 3, mechanism: 'pthreads' });
  layer._module.PThread.runningWorkers[2].emit('error', new Error('a thread threw'));
  assert.equal(lab.liveWorkerCount(), 0, 'every thread Worker is ended');
  await assert.rejects(layer.forward(inputs), (e) => e.constructor === Error &&
    /^ParallelLayer.forward: thread Worker 3 of 3 ended unexpectedly \(a thread threw\); .*create a new one/.test(e.message));
  await layer.dispose();
  assert.equal(lab.liveWorkerCount(), 0);
});

test('pthreads: dispose() asks the threads to stop and awaits them all leaving their loops before joining them', async () => {
  const { w, inputs } = problem({ tQ: 8, dModel: 12, numHeads: 3 });
  const layer = await lab.createParallelLayer({ ...w, threads: 3, mechanism: 'pthreads' });
  await layer.forward(inputs);
  const module = layer._module, core = layer._core, exited = core.exitedAddress() >> 2;
  assert.equal(Atomics.load(module.HEAP32, exited), 0);
  const exits = module.PThread.runningWorkers.map((w) => new Promise((resolve) => w.once('exit', resolve)));
  await layer.dispose();
  assert.equal(Atomics.load(module.HEAP32, exited), 3, 'every thread left its loop');
  assert.ok(core.isDeleted(), 'joined (the core deleted) rather than its Workers just ended');
  assert.equal(lab.liveWorkerCount(), 0);
  await Promise.all(exits);
  assert.equal(layer._failure, null, 'Workers that dispose() ended are no deaths');
});

for (const mechanism of ['workers', 'pthreads']) {
  test(`${mechanism}: an error in the forward pass (a request too large for the heap) rejects that call with its type; the layer goes on`, async () => {
    const { w, inputs } = problem({ tQ: 3, dModel: 4, numHeads: 2 });
    const layer = await lab.createParallelLayer({ ...w, threads: 2, mechanism });
    try {
      // 2^14 queries × 2^14 keys of weights per head: more than the 1 GiB heap, refused by forward's checks.
      const big = new Float32Array(16384 * 4);
      await assert.rejects(layer.forward({ query: big, returnWeights: true }), (e) => e instanceof RangeError && /too large/.test(e.message));
      sameResult(await layer.forward(inputs), lab.multiHeadAttention({ ...w, ...inputs }), 'after the error');
    } finally {
      await layer.dispose();
    }
  });

  test(`${mechanism}: an idle layer does not keep Node running`, async () => {
    const { w } = problem({ tQ: 2, dModel: 8, numHeads: 2 });
    const layer = await lab.createParallelLayer({ ...w, threads: 2, mechanism });
    try {
      assert.equal(layer.mechanism, mechanism);
      const workers = process.getActiveResourcesInfo().filter((r) => /Worker|MessagePort/.test(r));
      assert.deepEqual(workers, [], 'no ref\'d Worker handle while idle');
    } finally {
      await layer.dispose();
    }
  });
}

test('mechanism: an unknown one is a TypeError naming it; nothing starts', async () => {
  const { w } = problem({ tQ: 2, dModel: 8, numHeads: 2 });
  await assert.rejects(lab.createParallelLayer({ ...w, mechanism: 'threads' }),
    (e) => e instanceof TypeError && /createParallelLayer: mechanism must be 'auto', 'pthreads' or 'workers', got string "threads"/.test(e.message));
  assert.equal(lab.liveWorkerCount(), 0);
});
