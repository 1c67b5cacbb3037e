// The language-model session (web/lib/teach/lm-session.js, what <headlab-language-model>'s Worker
// runs) with the real API on threads under Node: a new model, or a pair, replaces the old ones in
// their threaded modules (no thread Worker started after the first models), training that was
// running stops first, and a pair that cannot be made whole leaves no half-replaced run behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { threadWorkers } from '../../web/lib/api/threaded-module.js';
import { LmSession } from '../../web/lib/teach/lm-session.js';

const lab = await createHeadlab();
const config = { task: 'induction', numLayers: 2, numHeads: 2, dModel: 8, batchSize: 4 };

/** Every thread Worker of the session's models. */
const workersOf = (session) => session.trainers.flatMap((m) => threadWorkers(m._module));

test('new settings and a loaded file replace the models in their threaded modules: the same thread Workers, the old models disposed', async () => {
  const before = lab.liveWorkerCount();
  const session = await LmSession.open(lab, () => {}, { threads: 2 });
  const first = (await session.handle('create', { config, compareLayers: 1 })).result;
  assert.deepEqual(first.runs.map((r) => r.threads), [2, 2]);
  const workers = workersOf(session);
  assert.equal(workers.length, 2, 'one thread Worker per model');
  const old = [...session.trainers];

  await session.handle('run', { until: 1_000_000, pace: 0 });
  assert.equal(session.running, true);
  const second = (await session.handle('create', { config: { ...config, seed: 9 }, compareLayers: 1 })).result;
  assert.equal(session.running, false, 'training stopped for the new models');
  assert.deepEqual(second.runs.map((r) => [r.config.seed, r.config.numLayers, r.threads]), [[9, 2, 2], [9, 1, 2]]);
  assert.deepEqual(old.map((m) => m.threads), [0, 0], 'the old models are disposed');
  const now = workersOf(session);
  assert.ok(now.length === 2 && workers.every((w) => now.includes(w)), 'the same two thread Workers');
  assert.equal(lab.liveWorkerCount(), before + 2);

  const files = session.trainers.map((m) => m.save());
  await session.handle('load', { files, example: '' });
  const loaded = workersOf(session);
  assert.ok(loaded.length === 2 && workers.every((w) => loaded.includes(w)), 'loaded: the same two thread Workers');
  assert.deepEqual(session.trainers.map((m) => m.config().seed), [9, 9]);

  // Without the comparison: the first run replaces the first model; the second model is disposed.
  const previous = [...session.trainers];
  await session.handle('create', { config, compareLayers: 0 });
  assert.equal(session.trainers.length, 1);
  assert.deepEqual(previous.map((m) => m.threads), [0, 0]);
  assert.equal(lab.liveWorkerCount(), before + 1);
  await session.handle('dispose');
  assert.equal(lab.liveWorkerCount(), before);
});

test('a pair whose second model is refused after the first replaced its old model: no run is left (never a disposed one)', async () => {
  const before = lab.liveWorkerCount();
  const session = await LmSession.open(lab, () => {}, { threads: 2 });
  await session.handle('create', { config, compareLayers: 1 });
  // The second model of a pair has compareLayers layers: 0 layers is refused once the first is made.
  await assert.rejects(session.handle('create', { config: { ...config, seed: 4 }, compareLayers: -1 }), RangeError);
  assert.deepEqual(session.trainers, [], 'no run');
  assert.equal(lab.liveWorkerCount(), before, 'every thread Worker ended');
  await assert.rejects(session.handle('step', { n: 1 }), /create a run first/);
  const again = (await session.handle('create', { config, compareLayers: 1 })).result;
  assert.deepEqual(again.runs.map((r) => r.threads), [2, 2]);
  await session.handle('dispose');
  assert.equal(lab.liveWorkerCount(), before);
});

test('a refused first model leaves the old runs as they were', async () => {
  const session = await LmSession.open(lab, () => {}, { threads: 2 });
  await session.handle('create', { config, compareLayers: 1 });
  const old = [...session.trainers];
  await assert.rejects(session.handle('create', { config: { ...config, numHeads: 3 }, compareLayers: 1 }), RangeError);
  assert.deepEqual(session.trainers, old);
  assert.deepEqual(old.map((m) => m.threads), [2, 2]);
  const r = (await session.handle('step', { n: 2 })).result;
  assert.ok(r, 'the old runs still step');
  await session.handle('dispose');
});
