// The run logic of <headlab-language-model> (web/lib/teach/lm-controller.js) under Node,
// with a fake client: the shared state machine of training-controller.js driven as the
// element drives it. The case that stopped the element for good before it used the
// controller: the page hidden and shown again before the pause took effect (the old
// element's start() saw training still on and did nothing; the pause then came and
// nothing resumed). Also: the model the settings ask for (new, or the shipped one, with a
// new one in its place when it cannot be loaded), autoplay, new settings while training,
// the phase change, rounds, a lost Worker, reset, and the requests' argument checks.
// The tasks are the module's own (lab.languageTasks()).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { LmController, PHASE_ACCURACY, SHIPPED } from '../../web/lib/teach/lm-controller.js';
import { TrainingController, TRANSITIONS } from '../../web/lib/teach/training-controller.js';
import { TRANSITIONS as TRAINER_TRANSITIONS } from '../../web/lib/teach/trainer-controller.js';
import { LM_PACES } from '../../web/lib/teach/lm-session.js';
import { FakeClient, settle } from './fake-client.mjs';

let tasks, induction;
before(async () => {
  const lab = await createHeadlab();
  tasks = await lab.languageTasks();
  induction = tasks.find((t) => t.name === 'induction');
});

const EXAMPLE = 'a b c d a b c';
const SETTINGS = { task: 'induction', layers: 2, heads: 4, seed: 4, compare: false, pretrained: false, speed: 'fast', maxSteps: 3000, example: EXAMPLE };

/** A snapshot of models with `layers` (one per run) at `step`, with held-out task accuracy `accuracy`. */
function snapshot(step, { layers = [2], heads = 4, accuracy = 0.1, off = false } = {}) {
  return {
    running: false,
    runs: layers.map((L) => ({
      step, train: step ? { loss: 2, steps: 1 } : null, eval: { loss: 2, accuracy, nextTokenAccuracy: 0.3 },
      allOn: off ? { loss: 1, accuracy: 0.9 } : null, enabled: Array(L * heads).fill(true).map((on, i) => !(off && i === 0)),
      scores: Array.from({ length: L * heads }, (_, i) => ({ layer: Math.floor(i / heads), head: i % heads, label: '' })),
      tokens: ['<s>', ...EXAMPLE.split(' ')], weights: new Float32Array(L * heads * 64), shape: [L, heads, 8],
    })),
  };
}

function createdInfo({ layers = [2], heads = 4, step = 0, accuracy = 0.1 } = {}) {
  return {
    runs: layers.map((L) => ({ config: { task: 'induction', numLayers: L, numHeads: heads, dModel: 32 }, task: { name: 'induction' }, threads: 1 })),
    snapshot: snapshot(step, { layers, heads, accuracy }),
  };
}

/** A controller with a fake client, a fake clock and fake shipped files; `events` records what it emits. */
function setup({ fetchModel } = {}) {
  const clients = [];
  const events = [];
  const fetched = [];
  let clock = 0;
  const ctl = new LmController({
    createClient: (onEvent) => { const c = new FakeClient(onEvent); clients.push(c); return c; },
    tasks,
    fetchModel: fetchModel ?? (async (file) => { fetched.push(file); return new Uint8Array([fetched.length]); }),
    emit: (type, detail) => events.push({ type, ...detail }),
    now: () => clock,
  });
  return {
    ctl, events, clients, fetched,
    get client() { return clients[clients.length - 1]; },
    advance(ms) { clock += ms; },
    states: () => events.filter((e) => e.type === 'state').map((e) => e.to),
    runEvents: () => events.filter((e) => e.type === 'state'),
  };
}

/** A controller whose first (new) model exists: paused, or training with autoplay. */
async function ready({ autoplay = false, settings = SETTINGS, info = createdInfo() } = {}) {
  const t = setup();
  t.ctl.configure(settings, { autoplay });
  t.client.take('create').resolve(info);
  await settle();
  return t;
}

test('one state machine: the language model runs on the trainer’s transition table', () => {
  const { ctl } = setup();
  assert.ok(ctl instanceof TrainingController);
  assert.equal(TRANSITIONS, TRAINER_TRANSITIONS, 'the same table object');
  assert.equal(ctl.state, 'idle');
  assert.throws(() => ctl.go('running'), /no transition from idle to running/);
  assert.throws(() => ctl.whyNotReady('generate'), /^Error: headlab-language-model: generate: not ready yet \(wait for headlab-ready\)$/);
});

test('a new model: the task’s defaults, the element’s layers, heads and seed, and the example; paused once there', async () => {
  const t = setup();
  t.ctl.configure(SETTINGS, { connect: false });
  assert.equal(t.clients.length, 0, 'a removed element gets no client');
  t.ctl.configure(SETTINGS);
  assert.equal(t.ctl.state, 'creating');
  const d = induction.defaults;
  assert.deepEqual(t.client.take('create').payload, {
    config: { task: 'induction', numLayers: 2, numHeads: 4, dModel: d.dModel, mlp: d.mlp, seed: 4, learningRate: d.learningRate, batchSize: d.batchSize },
    compareLayers: 0, example: EXAMPLE,
  });
  t.client.requests[0].resolve(createdInfo());
  await settle();
  assert.deepEqual(t.states(), ['creating', 'paused']);
  const created = t.events.find((e) => e.type === 'created');
  assert.deepEqual(created.runs.map((r) => [r.layers, r.heads, r.name, r.threads]), [[2, 4, '2 layers', 1]]);
  assert.equal(created.settings.example, EXAMPLE);
  assert.equal(created.note, 'Training runs in a fake Worker.');
  assert.equal(t.ctl.snapshot.runs[0].step, 0);
  assert.deepEqual(t.ctl.controls(), { start: 'Start', canStart: true, canStep: true, canReset: true, canSave: true });
  // The same settings again (a new example or speed is not a new model): no second model.
  t.ctl.configure({ ...SETTINGS, example: 'x y z', speed: 'slow' });
  assert.equal(t.client.sent('create').length, 1);
  // Side by side: a one-layer model too (none for a one-layer model).
  t.ctl.configure({ ...SETTINGS, compare: true });
  assert.equal(t.client.take('create').payload.compareLayers, 1);
  t.ctl.configure({ ...SETTINGS, compare: true, layers: 1 });
  assert.equal(t.client.take('create').payload.compareLayers, 0);
});

test('autoplay: a new model trains at once, as fast as the machine goes, in rounds of max-steps', async () => {
  const t = await ready({ autoplay: true });
  assert.deepEqual(t.states(), ['restarting', 'running']);
  assert.deepEqual(t.client.sent('options').map((r) => r.payload), [{ intervalMs: 250 }]);
  assert.deepEqual(t.client.sent('run').map((r) => r.payload), [{ until: 3000, pace: LM_PACES.fast }]);
  // A new speed while training: the new pace, on the same model.
  t.ctl.configure({ ...SETTINGS, speed: 'slow' });
  assert.deepEqual(t.client.sent('run').at(-1).payload, { until: 3000, pace: LM_PACES.slow });
  assert.equal(t.client.sent('create').length, 1);
});

test('connect() before the first settings: one client, started at once; the first configure uses it, autoplay included', async () => {
  for (const autoplay of [false, true]) {
    const t = setup();
    const client = t.ctl.connect();
    assert.equal(t.clients.length, 1, 'the client starts before any settings');
    assert.equal(t.ctl.connect(), client, 'a second connect() keeps it');
    assert.deepEqual(t.states(), [], 'nothing is made yet');
    t.ctl.configure(SETTINGS, { autoplay });
    assert.equal(t.clients.length, 1, 'configure() uses the client connect() started');
    t.client.take('create').resolve(createdInfo());
    await settle();
    assert.deepEqual(t.states(), autoplay ? ['restarting', 'running'] : ['creating', 'paused'], `autoplay ${autoplay}`);
  }
});

test('start() before the first settings (the client started early) trains the first model at once; pause() before them takes it back', async () => {
  for (const pauseToo of [false, true]) {
    const t = setup();
    t.ctl.connect();
    assert.equal(t.ctl.start(), true, 'start() is taken before the settings');
    if (pauseToo) t.ctl.pause();
    t.ctl.configure(SETTINGS);
    t.client.take('create').resolve(createdInfo());
    await settle();
    assert.deepEqual(t.states(), pauseToo ? ['creating', 'paused'] : ['restarting', 'running'], `pause() too: ${pauseToo}`);
    assert.equal(t.client.sent('run').length, pauseToo ? 0 : 1);
  }
});

test('hidden and shown again before the pause took effect: training goes on once it does (it stopped for good before)', async () => {
  const t = await ready();
  assert.equal(t.ctl.start(), true);
  t.advance(1000);
  t.ctl.hide();
  assert.equal(t.client.sent('pause').length, 1, 'a hidden page asks the session to pause');
  t.ctl.show();
  // Shown while the pause is on its way: still training, and not started twice.
  assert.equal(t.ctl.state, 'hiding');
  assert.equal(t.ctl.running, true);
  assert.equal(t.client.sent('run').length, 1);
  t.ctl.ingest(snapshot(40));
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'running', 'the pause took effect on a page that is visible again: training goes on');
  assert.equal(t.client.sent('run').length, 2, 'a new run request');
  assert.deepEqual(t.client.sent('run').at(-1).payload, { until: 3000, pace: LM_PACES.fast });
  assert.deepEqual(t.states().slice(2), ['running', 'hiding', 'hidden', 'running']);
  const reasons = t.runEvents().slice(3).map((e) => [e.from, e.to, e.reason]);
  assert.deepEqual(reasons, [['running', 'hiding', ''], ['hiding', 'hidden', 'pause'], ['hidden', 'running', 'start']]);
  assert.equal(t.ctl.seconds(), 1, 'the clock ran until the pause took effect');
});

test('hidden during a run: paused while hidden, training again when shown; hidden while paused: nothing changes', async () => {
  const t = await ready();
  t.ctl.start();
  t.ctl.hide();
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'hidden');
  assert.equal(t.ctl.running, false);
  t.ctl.show();
  assert.equal(t.ctl.state, 'running');
  t.ctl.pause();
  t.client.paused('pause');
  assert.equal(t.ctl.state, 'paused');
  const sent = t.client.requests.length;
  t.ctl.hide();
  t.ctl.show();
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.client.requests.length, sent, 'nothing sent');
});

test('new settings while training: the new model trains; a reply overtaken by newer settings is dropped', async () => {
  const t = await ready({ autoplay: true });
  t.ctl.configure({ ...SETTINGS, layers: 3 });
  assert.equal(t.ctl.state, 'restarting');
  t.ctl.configure({ ...SETTINGS, layers: 4 });
  const [, first, second] = t.client.sent('create');
  assert.equal(first.payload.config.numLayers, 3);
  assert.equal(second.payload.config.numLayers, 4);
  t.client.take('create').resolve(createdInfo({ layers: [3] }));
  await settle();
  assert.equal(t.ctl.runs[0].layers, 2, 'the overtaken model is dropped');
  t.client.take('create').resolve(createdInfo({ layers: [4] }));
  await settle();
  assert.equal(t.ctl.runs[0].layers, 4);
  assert.equal(t.ctl.state, 'running');
});

test('the shipped model: fetched and loaded paused (even with autoplay), its rounds counted from its step', async () => {
  const t = setup();
  t.ctl.configure({ ...SETTINGS, pretrained: true, compare: true }, { autoplay: true });
  await settle();
  assert.deepEqual(t.fetched, [SHIPPED.induction.main, SHIPPED.induction.oneLayer]);
  const load = t.client.take('load');
  assert.deepEqual(load.payload.files, [new Uint8Array([1]), new Uint8Array([2])]);
  assert.equal(load.payload.example, EXAMPLE);
  load.resolve(createdInfo({ layers: [2, 1], step: 2400, accuracy: 0.99 }));
  await settle();
  assert.deepEqual(t.states(), ['restarting', 'creating', 'paused'], 'autoplay does not train a trained model');
  assert.deepEqual(t.events.find((e) => e.type === 'load').files, ['induction.hlm', 'induction-1-layer.hlm']);
  assert.equal(t.ctl.until, 2400 + 3000);
  assert.equal(t.client.sent('create').length, 0);
  // Already trained: its phase change happened before it was saved, so none is marked.
  t.ctl.ingest(snapshot(2400, { layers: [2, 1], accuracy: 0.99 }));
  assert.equal(t.events.filter((e) => e.type === 'phase-change').length, 0);
  assert.equal(t.ctl.runs[0].phase, null);
});

test('a shipped model that cannot be fetched: a new one in its place, with a note saying why', async () => {
  const t = setup({ fetchModel: async (file) => { throw new Error(`models/${file} could not be fetched (HTTP 404)`); } });
  t.ctl.configure({ ...SETTINGS, pretrained: true });
  await settle();
  t.client.take('create').resolve(createdInfo());
  await settle();
  const created = t.events.find((e) => e.type === 'created');
  assert.equal(created.info.note, 'The trained model could not be loaded (models/induction.hlm could not be fetched (HTTP 404)), so a new one trains here instead.');
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.events.filter((e) => e.type === 'load').length, 0);
});

test('the phase change: the first evaluation at the threshold after one below it, every head on', async () => {
  const t = await ready();
  t.ctl.start();
  t.advance(2000);
  t.ctl.ingest(snapshot(500, { accuracy: 0.2 }));
  t.ctl.ingest(snapshot(600, { accuracy: 0.95, off: true }));  // a head switched off: not the model's own accuracy
  assert.equal(t.events.filter((e) => e.type === 'phase-change').length, 0);
  t.advance(1000);
  t.ctl.ingest(snapshot(700, { accuracy: PHASE_ACCURACY }));
  t.ctl.ingest(snapshot(800, { accuracy: 0.9 }));
  const phases = t.events.filter((e) => e.type === 'phase-change');
  assert.equal(phases.length, 1);
  assert.deepEqual({ step: phases[0].step, seconds: phases[0].seconds, accuracy: phases[0].accuracy },
    { step: 700, seconds: 3, accuracy: PHASE_ACCURACY });
  assert.equal(phases[0].run, t.ctl.runs[0]);
  assert.deepEqual(t.ctl.runs[0].history.map((p) => p.step), [0, 500, 600, 700, 800]);
  assert.deepEqual(Object.keys(t.ctl.runs[0].history[1]).sort(), ['accuracy', 'evalLoss', 'headsOn', 'nextToken', 'seconds', 'step', 'trainLoss']);
  const snaps = t.events.filter((e) => e.type === 'snapshot');
  assert.ok(t.events.indexOf(phases[0]) < t.events.indexOf(snaps.at(-2)), 'the phase change is reported before the snapshot that shows it');
});

test('a round ends: paused ("limit"); Continue trains the next round of max-steps', async () => {
  const t = await ready({ autoplay: true });
  t.ctl.ingest(snapshot(3000));
  t.client.paused('limit');
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.runEvents().at(-1).reason, 'limit');
  assert.equal(t.ctl.controls().start, 'Continue');
  t.ctl.start();
  assert.deepEqual(t.client.sent('run').at(-1).payload, { until: 6000, pace: LM_PACES.fast });
});

test('the Worker dies: dead, every request refused; Start again makes a new client and a paused model', async () => {
  const t = await ready({ autoplay: true });
  t.client.paused('error', { message: 'the language-model Worker stopped', fatal: true });
  assert.equal(t.ctl.state, 'dead');
  assert.equal(t.events.find((e) => e.type === 'dead').message, 'the language-model Worker stopped');
  t.client.dead = true;
  assert.throws(() => t.ctl.whyNotReady('generate'), /^Error: headlab-language-model: generate: the Worker has stopped; call reset\(\) first$/);
  await assert.rejects(t.ctl.saveModel(0), /the Worker has stopped/);
  const old = t.client;
  // What the element's "Start again" does (without autoplay): restart, paused once there.
  t.ctl.restart();
  t.ctl.pause();
  assert.equal(old.disposed, true);
  assert.equal(t.ctl.state, 'creating');
  t.ctl.configure(SETTINGS);
  assert.notEqual(t.client, old);
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'paused');
});

test('reset while training: a new model from step 0, paused; reset then start (the compare button): it trains', async () => {
  const t = await ready({ autoplay: true });
  t.ctl.ingest(snapshot(100));
  t.ctl.reset();
  assert.equal(t.ctl.state, 'creating');
  t.ctl.configure(SETTINGS);
  t.client.take('create').resolve(createdInfo());
  await settle();
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.currentStep, 0);
  t.ctl.reset();
  t.ctl.start();
  assert.equal(t.ctl.state, 'restarting');
  t.ctl.configure({ ...SETTINGS, compare: true });
  t.client.take('create').resolve(createdInfo({ layers: [2, 1] }));
  await settle();
  assert.equal(t.ctl.state, 'running');
  assert.deepEqual(t.ctl.runs.map((r) => r.name), ['2 layers', '1 layer']);
});

test('requests: step, head switches, text, generation and saving, with their arguments checked', async () => {
  const t = await ready();
  await assert.rejects(t.ctl.step(0), /^RangeError: headlab-language-model: step\(n\): n must be a whole number from 1 to 10000, got 0$/);
  const stepped = t.ctl.step(10);
  assert.deepEqual(t.client.take('step').payload, { n: 10 });
  t.client.sent('step')[0].resolve(snapshot(10));
  await stepped;
  assert.equal(t.ctl.currentStep, 10);
  t.ctl.start();
  await assert.rejects(t.ctl.step(1), /training is running; pause\(\) first/);
  await assert.rejects(t.ctl.setHeadEnabled(2, 0, false), /^RangeError: headlab-language-model: setHeadEnabled: layer must be 0\.\.1, got 2$/);
  await assert.rejects(t.ctl.setHeadEnabled(0, 4, false), /head must be 0\.\.3, got 4/);
  await assert.rejects(t.ctl.setHeadEnabled(0, 0, false, 1), /run must be 0, got 1/);
  const head = t.ctl.setHeadEnabled(1, 2, false);
  assert.deepEqual(t.client.take('setHead').payload, { run: 0, layer: 1, head: 2, enabled: false });
  t.client.sent('setHead')[0].resolve(snapshot(12, { off: true }));
  assert.equal((await head).step, 12);
  const shown = t.ctl.showText('q r s q r s');
  assert.deepEqual(t.client.take('example').payload, { text: 'q r s q r s' });
  t.client.sent('example')[0].resolve(snapshot(12));
  await shown;
  const generated = [t.ctl.generate({ prompt: 'a b', maxTokens: 4, temperature: 0 }), t.ctl.generate({ prompt: 'a b', maxTokens: 4, temperature: 0 })];
  assert.deepEqual(t.client.sent('generate').map((r) => r.payload.seed), [1, 2], 'each continuation samples with a new seed');
  t.client.sent('generate').forEach((r) => r.resolve({ text: 'a b c d', newTokens: ['c', 'd'] }));
  assert.deepEqual((await Promise.all(generated)).map((r) => r.text), ['a b c d', 'a b c d']);
  const saved = t.ctl.saveModel();
  assert.deepEqual(t.client.take('save').payload, { run: 0 });
  t.client.sent('save')[0].resolve(new Uint8Array(3));
  assert.equal((await saved).length, 3);
});

test('a saved model loaded while training: paused first, then it replaces the runs with the file’s settings; a refused file changes nothing', async () => {
  const t = await ready({ autoplay: true, settings: { ...SETTINGS, compare: true }, info: createdInfo({ layers: [2, 1] }) });
  assert.equal(t.ctl.state, 'running');
  await assert.rejects(t.ctl.loadModel('bytes'), /^TypeError: headlab-language-model: loadModel\(bytes\): bytes must be a Uint8Array or ArrayBuffer \(a saved \.hlm model\), got string$/);
  // A file the API refuses: the model in use stays, paused, and the API's error comes through.
  const refused = t.ctl.loadModel(new Uint8Array([1, 2, 3]));
  await settle();
  t.client.paused();
  await settle();
  assert.equal(t.ctl.state, 'loading');
  t.client.take('load').reject(new RangeError('loadLanguageModel: bytes: load: magic: not a HeadLab language-model file (\'HLLM\' missing)'));
  await assert.rejects(refused, /^RangeError: loadLanguageModel: bytes: load: magic: not a HeadLab/);
  assert.equal(t.ctl.state, 'paused');
  assert.equal(t.ctl.runs.length, 2, 'the side-by-side pair is still there');
  // A cricket model (1 layer of 2 heads, seed 9, saved at step 700): the example drawn is the one for its task.
  const bytes = new Uint8Array([7, 7, 7]);
  const loaded = t.ctl.loadModel(bytes, { induction: EXAMPLE, cricket: 'virat hit the ball' });
  await settle();
  const request = t.client.take('load');
  assert.deepEqual(request.payload, { files: [new Uint8Array([7, 7, 7])], example: EXAMPLE, examples: { induction: EXAMPLE, cricket: 'virat hit the ball' } });
  assert.notEqual(request.payload.files[0], bytes, 'a copy goes to the Worker; the caller’s array stays usable');
  const info = createdInfo({ layers: [1], heads: 2, step: 700, accuracy: 0.8 });
  info.runs[0].config = { task: 'cricket', numLayers: 1, numHeads: 2, dModel: 32, seed: 9 };
  request.resolve(info);
  assert.deepEqual(await loaded, { task: 'cricket', layers: 1, heads: 2, seed: 9, step: 700 });
  assert.equal(t.ctl.state, 'paused');
  assert.deepEqual(t.runEvents().slice(-2).map((e) => [e.to, e.reason]), [['loading', ''], ['paused', 'loaded']]);
  assert.equal(t.ctl.runs.length, 1);
  assert.equal(t.ctl.until, 700 + 3000, 'its rounds count from the step it was saved at');
  const created = t.events.filter((e) => e.type === 'created').pop();
  assert.equal(created.settings.example, 'virat hit the ball');
  // The element then takes the file's settings: configure() keeps the loaded model.
  t.ctl.configure({ ...SETTINGS, task: 'cricket', layers: 1, heads: 2, seed: 9, compare: false, pretrained: false, example: 'virat hit the ball' });
  await settle();
  assert.equal(t.client.sent('create').length, 1, 'no new model');
  assert.equal(t.ctl.state, 'paused');
});
