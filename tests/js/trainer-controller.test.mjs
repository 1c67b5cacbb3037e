// The run logic of <headlab-trainer> (web/lib/teach/trainer-controller.js) under Node,
// with a fake trainer client: every transition of its one state, including the page
// hidden and shown during a run, settings that cannot train while it trains, a run
// that diverges, a Worker that dies, reset, load and dispose. The settings check is
// the module's own (parameterCount), through web/lib/teach/heads.js.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { TrainerController, TRANSITIONS, trainerSettings, lowerRateFrom } from '../../web/lib/teach/trainer-controller.js';
import { headsDivide } from '../../web/lib/teach/heads.js';
import { PACES } from '../../web/lib/teach/trainer-session.js';
import { FakeClient, settle } from './fake-client.mjs';

let lab, tasks;
before(async () => {
  lab = await createHeadlab();
  tasks = await lab.tasks();
});

const TASK = { name: 'two-relations', seqLen: 8, numRelations: 2, relationNames: ['first', 'second'], queryPosition: 7 };

/** A snapshot of `numHeads` per run at `step`; specialised = each head on its own relation with accuracy 1. */
function snapshot(step, heads = [2], { specialised = false, running = false } = {}) {
  return {
    running,
    runs: heads.map((numHeads) => ({
      step, numHeads, train: step ? { loss: 1, accuracy: 0.5, steps: 1 } : null,
      eval: { loss: 1, accuracy: specialised ? 1 : 0.5, relationAccuracy: [0.5, 0.5] }, allOn: null,
      enabled: Array(numHeads).fill(true),
      metrics: Array.from({ length: numHeads }, (_, h) => ({ entropy: 1, meanDistance: 2,
        relationShare: specialised ? [h === 0 ? 0.9 : 0.05, h === 1 ? 0.9 : 0.05] : [0.3, 0.3] })),
      weights: new Float32Array(numHeads * 64),
    })),
  };
}

function createdInfo(heads = [2], step = 0, config = {}) {
  return {
    runs: heads.map((numHeads) => ({
      config: { task: 'two-relations', numHeads, dModel: 16, seed: 7, learningRate: 0.003, batchSize: 64, optimizer: 'adam', causal: false, step, ...config },
      taskInfo: TASK, probe: { tokenNames: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] },
    })),
    snapshot: snapshot(step, heads),
  };
}

const SETTINGS = { task: 'two-relations', heads: 2, dModel: 16, learningRate: 0.003, batchSize: 64, seed: 7, compare: false, speed: 'learn', maxSteps: 2000 };

/** A controller with a fake client and a fake clock; `events` records what it emits. */
function setup() {
  const clients = [];
  const events = [];
  let clock = 0;
  const ctl = new TrainerController({
    createClient: (onEvent) => { const c = new FakeClient(onEvent); clients.push(c); return c; },
    tasks, divides: (h, d) => headsDivide(lab, h, d),
    emit: (type, detail) => events.push({ type, ...detail }),
    now: () => clock,
    intervalMs: () => 50,
  });
  return {
    ctl, events, clients,
    get client() { return clients[clients.length - 1]; },
    advance(ms) { clock += ms; },
    states: () => events.filter((e) => e.type === 'state').map((e) => e.to),
  };
}

/** A controller whose first model exists and is paused (or running with autoplay). */
async function ready({ autoplay = false, heads = [2], settings = SETTINGS } = {}) {
  const t = setup();
  t.ctl.configure(settings, { autoplay });
  t.client.take('create').resolve(createdInfo(heads));
  await settle();
  return t;
}

test('the settings check: trainable settings give the config; h not dividing d_model and unknown tasks say why', () => {
  const divides = (h, d) => headsDivide(lab, h, d);
  const ok = trainerSettings(SETTINGS, tasks, divides);
  assert.equal(ok.error, undefined);
  assert.deepEqual(ok.config, { task: 'two-relations', numHeads: 2, dModel: 16, seed: 7, learningRate: 0.003, batchSize: 64, optimizer: 'adam', causal: false });
  assert.equal(ok.compareHeads, 0);
  const bad = trainerSettings({ ...SETTINGS, heads: 3 }, tasks, divides);
  assert.equal(bad.error, 'h = 3 does not divide d_model = 16: the heads could not split it evenly (d_k would be 5.33). Pick h = 1, 2, 4, 8, or d_model = 12, 24, 48.');
  assert.match(trainerSettings({ ...SETTINGS, task: 'nope' }, tasks, divides).error, /^There is no task “nope”\. The tasks are: .*two-relations/);
  assert.equal(trainerSettings({ ...SETTINGS, heads: 1, compare: true }, tasks, divides).compareHeads, 2);
  assert.equal(trainerSettings({ ...SETTINGS, heads: 6, dModel: 12, compare: true }, tasks, divides).compareHeads, 6);
});

test('the transition table names only known states, and a change it does not list throws', () => {
  const states = Object.keys(TRANSITIONS);
  assert.deepEqual(states.sort(), ['creating', 'dead', 'diverged', 'held', 'hidden', 'hiding', 'holding', 'idle', 'loading', 'paused', 'pausing', 'restarting', 'running'].sort());
  for (const [from, to] of Object.entries(TRANSITIONS)) for (const s of to) assert.ok(states.includes(s), `${from} → ${s}`);
  assert.deepEqual(TRANSITIONS.dead, ['restarting'], 'only restart() leaves dead');
  const { ctl } = setup();
  assert.throws(() => ctl.go('running'), /no transition from idle to running/);
});

test('idle → creating → paused: the first model is made paused, laid out and its snapshot taken in', async () => {
  const t = setup();
  assert.equal(t.ctl.state, 'idle');
  assert.throws(() => t.ctl.whyNotReady('step(n)'), /^Error: headlab-trainer: step\(n\): not ready yet \(wait for headlab-ready\)$/);
  const d = t.ctl.configure(SETTINGS, { connect: false });
  assert.equal(d.error, undefined);
  assert.equal(t.clients.length, 0, 'a removed element gets no client');
  t.ctl.configure(SETTINGS);
  assert.equal(t.ctl.state, 'creating');
  assert.deepEqual(t.client.take('create').payload, { config: d.config, compareHeads: 0 });
  assert.equal(t.ctl.running, false);
  t.client.requests[0].resolve(createdInfo());
  await settle();
  assert.deepEqual(t.states(), ['creating', 'paused']);
  const created = t.events.find((e) => e.type === 'created');
  assert.equal(created.runs.length, 1);
  assert.equal(created.note, 'Training runs in a fake Worker.');
  assert.deepEqual(t.ctl.runs[0].labels.slice(0, 2), ['0:a', '1:b']);
  assert.equal(t.ctl.snapshot.runs[0].step, 0);
  assert.deepEqual(t.ctl.controls(), { start: 'Start', canStart: true, canStep: true, canReset: true, canSave: true });
  // The same settings again: no second model.
  t.ctl.configure(SETTINGS);
  assert.equal(t.client.sent('create').length, 1);
});

test('autoplay: idle → restarting → running, with the round end and the slow pace of "learn"', async () => {
  const t = await ready({ autoplay: true });
  assert.deepEqual(t.states(), ['restarting', 'running']);
  assert.deepEqual(t.client.sent('options').map((r) => r.payload), [{ intervalMs: 50 }]);
  assert.deepEqual(t.client.sent('run').map((r) => r.payload), [{ until: 2000, pace: PACES.slow }]);
  assert.equal(t.events.filter((e) => e.type === 'state').at(-1).reason, 'start');
});

test('start, pause: running → pausing → paused; training counts as running until the pause takes effect; the clock only runs while training', async () => {
  const t = await ready();
  assert.equal(t.ctl.start(), true);
  assert.equal(t.ctl.state, 'running');
  t.advance(1500);
  assert.equal(t.ctl.seconds(), 1.5);
  t.ctl.pause();
  assert.equal(t.ctl.state, 'pausing');
  assert.equal(t.ctl.running, true);
  assert.equal(t.ctl.controls().start, 'Pause');
  assert.equal(t.ctl.start(), false, 'Start waits for the pause');
  t.advance(500);
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.running, false);
  t.advance(5000);
  assert.equal(t.ctl.seconds(), 2);
  assert.deepEqual(t.states(), ['creating', 'paused', 'running', 'pausing', 'paused']);
  assert.equal(t.events.filter((e) => e.type === 'state').at(-1).reason, 'pause');
});

test('hidden during a run: running → hiding → hidden, and shown: → running', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.hide();
  assert.equal(t.ctl.state, 'hiding');
  assert.equal(t.client.sent('pause').length, 1);
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'hidden');
  t.ctl.show();
  assert.equal(t.ctl.state, 'running');
  assert.equal(t.client.sent('run').length, 2);
  assert.deepEqual(t.states().slice(2), ['running', 'hiding', 'hidden', 'running']);
});

test('hidden and shown again before the pause took effect: training goes on once it does', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.hide();
  t.ctl.show();
  assert.equal(t.ctl.state, 'hiding');
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'running');
  assert.deepEqual(t.states().slice(2), ['running', 'hiding', 'hidden', 'running']);
});

test('hidden while paused: nothing changes, and showing does not start training', async () => {
  const t = await ready();
  t.ctl.hide();
  t.ctl.show();
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.client.sent('pause').length + t.client.sent('run').length, 0);
});

test('settings that cannot train while running: running → holding → held, explained; trainable again: → running on the same model', async () => {
  const t = await ready();
  t.ctl.start();
  const d = t.ctl.configure({ ...SETTINGS, heads: 3 });
  assert.match(d.error, /^h = 3 does not divide d_model = 16/);
  assert.equal(t.ctl.state, 'holding');
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'held');
  assert.throws(() => t.ctl.whyNotReady('step(n)'), /^Error: headlab-trainer: step\(n\): the settings cannot train: h = 3 does not divide d_model = 16/);
  assert.equal(t.ctl.start(), false);
  assert.equal(t.ctl.controls().canStart, false);
  t.ctl.configure(SETTINGS);
  assert.equal(t.ctl.state, 'running');
  assert.equal(t.client.sent('create').length, 1, 'the model is the one that was paused');
  assert.deepEqual(t.states().slice(2), ['running', 'holding', 'held', 'running']);
});

test('settings that cannot train, fixed before the pause took effect: training goes on', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.configure({ ...SETTINGS, task: 'no-such-task' });
  t.ctl.configure(SETTINGS);
  assert.equal(t.ctl.state, 'holding');
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'running');
});

test('held, then new trainable settings: restarting, and the new model trains', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.configure({ ...SETTINGS, heads: 3 });
  t.client.paused('pause');
  t.ctl.configure({ ...SETTINGS, heads: 4 });
  assert.equal(t.ctl.state, 'restarting');
  t.client.take('create').resolve(createdInfo([4]));
  await settle();
  assert.equal(t.ctl.state, 'running');
  assert.equal(t.ctl.runs[0].numHeads, 4);
});

test('invalid settings while paused: Start is off and nothing is sent; the model stays', async () => {
  const t = await ready();
  t.ctl.configure({ ...SETTINGS, heads: 5 });
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.controls().canStart, false);
  assert.equal(t.ctl.controls().canSave, false);
  assert.equal(t.client.requests.length, 1);
});

test('new settings while running: restarting; a reply overtaken by newer settings is dropped; the newest model trains', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.configure({ ...SETTINGS, seed: 8 });
  assert.equal(t.ctl.state, 'restarting');
  assert.equal(t.ctl.running, false);
  t.ctl.configure({ ...SETTINGS, seed: 9 });
  const [, first, second] = t.client.sent('create');
  assert.equal(second.payload.config.seed, 9);
  first.answered = second.answered = true;
  second.resolve(createdInfo([2], 0, { seed: 9 }));
  await settle();
  first.resolve(createdInfo([2], 0, { seed: 8 }));
  await settle();
  assert.equal(t.ctl.state, 'running');
  assert.equal(t.ctl.runs[0].config.seed, 9);
  assert.equal(t.events.filter((e) => e.type === 'created').length, 2);
});

test('new settings while paused: creating → paused; pause() during restarting and start() during creating swap the two', async () => {
  const t = await ready();
  t.ctl.configure({ ...SETTINGS, seed: 8 });
  assert.equal(t.ctl.state, 'creating');
  t.ctl.start();
  assert.equal(t.ctl.state, 'restarting');
  t.ctl.pause();
  assert.equal(t.ctl.state, 'creating');
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'paused');
});

test('a create that fails: paused on the model there was (idle without one), and the error is reported', async () => {
  const t = setup();
  t.ctl.configure(SETTINGS);
  t.client.take('create').reject(new RangeError('createTrainer: too large'));
  await settle();
  assert.equal(t.ctl.state, 'idle');
  assert.match(String(t.events.find((e) => e.type === 'error').error), /too large/);
  const u = await ready();
  u.ctl.configure({ ...SETTINGS, dModel: 64 });
  u.client.take('create').reject(new RangeError('nope'));
  await settle();
  assert.equal(u.ctl.state, 'paused');
});

test('a round ends: running → paused ("limit"), Continue starts the next round of max-steps', async () => {
  const t = await ready({ settings: { ...SETTINGS, maxSteps: 100 } });
  t.ctl.start();
  assert.deepEqual(t.client.sent('run').at(-1).payload, { until: 100, pace: PACES.slow });
  t.client.onEvent({ event: 'snapshot', snapshot: snapshot(100) });
  t.client.paused('limit');
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.events.filter((e) => e.type === 'state').at(-1).reason, 'limit');
  assert.equal(t.ctl.controls().start, 'Continue');
  t.ctl.start();
  assert.deepEqual(t.client.sent('run').at(-1).payload, { until: 200, pace: PACES.slow });
  // max-steps and speed changed while training: the session hears the new round end and pace once.
  t.ctl.configure({ ...SETTINGS, maxSteps: 150, speed: 'fast' });
  t.ctl.configure({ ...SETTINGS, maxSteps: 150, speed: 'fast' });
  assert.deepEqual(t.client.sent('run').slice(2).map((r) => r.payload), [{ until: 250, pace: 0 }]);
});

test('learn speed: once every run has specialised, the pace goes from slow to normal, and the event says when', async () => {
  const t = await ready();
  t.ctl.start();
  t.advance(2000);
  t.client.onEvent({ event: 'snapshot', snapshot: snapshot(300, [2], { specialised: true }) });
  const found = t.events.find((e) => e.type === 'specialised');
  assert.deepEqual({ step: found.step, seconds: found.seconds, tracks: found.tracks },
    { step: 300, seconds: 2, tracks: [{ relation: 0, head: 0 }, { relation: 1, head: 1 }] });
  assert.deepEqual(t.client.sent('run').map((r) => r.payload.pace), [PACES.slow, PACES.normal]);
  t.client.onEvent({ event: 'snapshot', snapshot: snapshot(320, [2], { specialised: true }) });
  assert.equal(t.events.filter((e) => e.type === 'specialised').length, 1, 'once per run');
  assert.equal(t.ctl.runs[0].history.length, 3);
});

test('divergence while running: → diverged; Start and Step refused with the reason, saving still allowed; lowerRate → restarting → running', async () => {
  const t = await ready({ settings: { ...SETTINGS, learningRate: 10 } });
  t.ctl.start();
  const divergence = { run: 0, numHeads: 2, step: 41, learningRate: 10, optimizer: 'adam', reason: 'loss', message: 'diverged' };
  t.client.onEvent({ event: 'snapshot', snapshot: snapshot(40) });
  t.client.paused('diverged', { divergence });
  assert.equal(t.ctl.state, 'diverged');
  assert.deepEqual(t.events.find((e) => e.type === 'diverged').divergence, divergence);
  assert.equal(t.ctl.start(), false);
  assert.deepEqual(t.ctl.controls(), { start: 'Start', canStart: false, canStep: false, canReset: true, canSave: true });
  await assert.rejects(t.ctl.step(1), /^RangeError: headlab-trainer: step\(n\): training diverged at step 41 with learning rate 10; call lowerRate\(\) or reset\(\) first$/);
  const rate = t.ctl.lowerRate(10);
  assert.equal(rate, 0.003);
  assert.equal(lowerRateFrom(0.01), 0.001);
  assert.equal(t.ctl.state, 'restarting');
  assert.equal(t.ctl.divergence, null);
  t.ctl.configure({ ...SETTINGS, learningRate: rate });
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'running');
  assert.deepEqual(t.states().slice(2), ['running', 'diverged', 'restarting', 'running']);
});

test('divergence in step(n) while paused: → diverged; reset → creating → a new paused model', async () => {
  const t = await ready();
  const stepped = t.ctl.step(5);
  t.client.paused('diverged', { divergence: { run: 0, numHeads: 2, step: 3, learningRate: 0.003, optimizer: 'adam', reason: 'update' } });
  t.client.take('step').reject(new RangeError('trainer session: diverged'));
  await assert.rejects(stepped, /diverged/);
  assert.equal(t.ctl.state, 'diverged');
  t.ctl.reset();
  assert.equal(t.ctl.state, 'creating');
  t.ctl.configure(SETTINGS);
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.snapshot.runs[0].step, 0);
});

test('reset while running: → creating at once, the clock stops, a new model from step 0, paused', async () => {
  const t = await ready();
  t.ctl.start();
  t.advance(1000);
  t.ctl.reset();
  assert.equal(t.ctl.state, 'creating');
  assert.equal(t.ctl.running, false);
  t.advance(1000);
  assert.equal(t.ctl.seconds(), 1);
  t.ctl.configure(SETTINGS);
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.seconds(), 0);
});

test('the Worker dies while training: → dead, every action refused until restart(), which starts a new client and trains', async () => {
  const t = await ready();
  t.ctl.start();
  t.client.dead = true;
  t.client.onEvent({ event: 'paused', reason: 'error', fatal: true, message: 'the trainer Worker stopped with an error: boom' });
  assert.equal(t.ctl.state, 'dead');
  assert.equal(t.events.find((e) => e.type === 'dead').message, 'the trainer Worker stopped with an error: boom');
  assert.throws(() => t.ctl.whyNotReady('step(n)'), /^Error: headlab-trainer: step\(n\): the trainer Worker has stopped; call restart\(\) first$/);
  assert.deepEqual(t.ctl.controls(), { start: 'Start', canStart: false, canStep: false, canReset: false, canSave: false });
  t.ctl.reset();
  t.ctl.lowerRate(0.003);
  t.ctl.configure({ ...SETTINGS, seed: 99 });
  assert.equal(t.ctl.state, 'dead', 'reset, lowerRate and new settings do not leave dead');
  const old = t.client;
  t.ctl.restart();
  assert.ok(old.disposed);
  assert.equal(t.ctl.state, 'restarting');
  t.ctl.configure(SETTINGS);
  assert.notEqual(t.client, old);
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'running');
});

test('a non-fatal error pauses with the message; a failed run request is reported', async () => {
  const t = await ready();
  t.ctl.start();
  t.client.paused('error', { message: 'out of luck' });
  assert.equal(t.ctl.state, 'paused');
  const e = t.events.find((x) => x.type === 'error');
  assert.equal(e.title, 'Training stopped.');
  assert.equal(e.error.message, 'out of luck');
});

test('step(n): bad n named, refused while training, else stepped and taken in', async () => {
  const t = await ready();
  await assert.rejects(t.ctl.step(0), /^RangeError: headlab-trainer: step\(n\): n must be a whole number from 1 to 10000, got 0$/);
  await assert.rejects(t.ctl.step('many'), /^TypeError: .*got string$/);
  const stepped = t.ctl.step(3);
  t.client.take('step').resolve(snapshot(3));
  await stepped;
  assert.equal(t.ctl.currentStep, 3);
  t.ctl.start();
  await assert.rejects(t.ctl.step(1), /^Error: headlab-trainer: step\(n\): training is running; pause\(\) first$/);
});

test('setHeadEnabled: run checked, a mark on the curves, the snapshot taken in', async () => {
  const t = await ready({ heads: [1, 2], settings: { ...SETTINGS, compare: true } });
  await assert.rejects(t.ctl.setHeadEnabled(0, false, 2), /^RangeError: headlab-trainer: setHeadEnabled: run must be 0\.\.1, got 2$/);
  const asked = t.ctl.setHeadEnabled(1, false);
  const r = t.client.take('setHead');
  assert.deepEqual(r.payload, { run: 1, head: 1, enabled: false });
  r.resolve(snapshot(12, [1, 2]));
  assert.equal((await asked).step, 12);
  assert.deepEqual(t.ctl.marks, [{ x: 12, label: 'h = 2: head 2 off', head: 1, enabled: false, numHeads: 2 }]);
});

test('loadModel while running: pausing → paused → loading → paused, with the file’s settings (no new model for them); a refused file keeps the model', async () => {
  const t = await ready();
  t.ctl.start();
  await assert.rejects(t.ctl.loadModel('model.hlab'), /^TypeError: headlab-trainer: loadModel\(bytes\): bytes must be a Uint8Array or ArrayBuffer \(a saved \.hlab model\), got string$/);
  const bytes = new Uint8Array([1, 2, 3]);
  const loading = t.ctl.loadModel(bytes);
  assert.equal(t.ctl.state, 'pausing');
  t.client.paused('pause');
  await settle();
  assert.equal(t.ctl.state, 'loading');
  const r = t.client.take('load');
  assert.notEqual(r.payload.bytes, bytes, 'a copy goes to the Worker');
  r.resolve(createdInfo([4], 500, { numHeads: 4, seed: 3, learningRate: 0.0010000000474974513, optimizer: 'sgd' }));
  const { settings, config } = await loading;
  assert.equal(t.ctl.state, 'paused');
  assert.equal(config.optimizer, 'sgd');
  assert.deepEqual(settings, { task: 'two-relations', heads: 4, dModel: 16, learningRate: 0.001, batchSize: 64, seed: 3, compare: false });
  assert.equal(t.ctl.currentStep, 500);
  assert.equal(t.ctl.roundStart, 500);
  t.ctl.configure({ ...SETTINGS, ...settings });
  assert.equal(t.client.sent('create').length, 1, 'the loaded model is the one the settings ask for');
  // A refused file: the model stays.
  const refused = t.ctl.loadModel(new Uint8Array([9]));
  t.client.take('load').reject(new RangeError("loadTrainer: bytes: magic 'HLAB' missing"));
  await assert.rejects(refused, /magic 'HLAB' missing/);
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.runs[0].numHeads, 4);
});

test('a refused file while diverged leaves it diverged, with its reason', async () => {
  const t = await ready();
  const divergence = { run: 0, numHeads: 2, step: 9, learningRate: 10, optimizer: 'adam', reason: 'loss' };
  t.client.paused('diverged', { divergence });
  const refused = t.ctl.loadModel(new Uint8Array([1]));
  assert.equal(t.ctl.state, 'loading');
  t.client.take('load').reject(new RangeError('no'));
  await assert.rejects(refused);
  assert.equal(t.ctl.state, 'diverged');
  assert.deepEqual(t.ctl.divergence, divergence);
});

test('dispose: → idle, the client freed; configured again it makes a new client and model (autoplay trains it)', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.pause();
  t.ctl.dispose();
  assert.equal(t.ctl.state, 'idle');
  assert.ok(t.clients[0].disposed);
  assert.equal(t.ctl.client, null);
  t.ctl.configure(SETTINGS, { autoplay: true });
  assert.equal(t.clients.length, 2);
  assert.equal(t.ctl.state, 'restarting');
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'running');
});

test('a pause the session answers without a report (it had already stopped) still leaves pausing', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.pause();
  const r = t.client.take('pause');
  r.resolve(null);
  await settle();
  assert.equal(t.ctl.state, 'paused');
  t.ctl.start();
  t.ctl.hide();
  t.client.take('pause').resolve(null);
  await settle();
  assert.equal(t.ctl.state, 'hidden');
});

test('loadModel while a hide is on its way: waits for the pause, then loads; shown again, training goes on', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.hide();
  const loading = t.ctl.loadModel(new Uint8Array([1]));
  t.client.paused('pause');
  t.client.take('pause').resolve(null);
  await settle();
  assert.equal(t.ctl.state, 'loading');
  t.client.take('load').resolve(createdInfo([2], 40));
  await loading;
  assert.equal(t.ctl.state, 'paused');
  t.ctl.show();
  assert.equal(t.ctl.state, 'paused', 'a loaded model waits for Start');
});
