// The logic of <headlab-model-explorer> (web/lib/teach/explorer-controller.js) under Node:
// every transition of its one state with a fake client and a fake model (load, progress,
// cancel, a failed load in plain words, a text the model refuses, ablation, a change that
// arrives while a run is on its way, a Worker that dies, dispose), the table refusing an
// unlisted change; then the real path for HeadLab's shipped models: the controller through
// an in-process ExplorerSession holding the LanguageModel of web/models/cricket.hlm itself,
// checked against a second copy's own answers (heads switched off with setHeadEnabled).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import {
  ExplorerController, TRANSITIONS, COURSE_SENTENCE, explainLoadError, strongest, sizeText,
} from '../../web/lib/teach/explorer-controller.js';
import { ExplorerSession } from '../../web/lib/teach/explorer-session.js';
import { SHIPPED_MODELS } from '../../web/lib/teach/shipped-models.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A fake model with the PretrainedModel methods: 2 layers × 3 heads, tokens are the words. */
class FakeModel {
  constructor() {
    this.info = { architecture: 'gpt2', numLayers: 2, numHeads: 3, dModel: 12, vocabSize: 50, contextLength: 16, parameters: 1000, dtype: 'float32', bytes: 4000 };
    this.disposed = false;
    this.runs = [];
  }

  tokenize(text) {
    const tokens = text.split(/\s+/).filter(Boolean);
    if (tokens.includes('unknown')) throw new RangeError('FakeModel.tokenize: unknown word "unknown"');
    return { ids: Int32Array.from(tokens, (_, i) => i + 1), tokens };
  }

  async run(textOrIds, { attention = false, ablate = [], topK = 10 } = {}) {
    const { ids, tokens } = typeof textOrIds === 'string' ? this.tokenize(textOrIds) : { ids: Int32Array.from(textOrIds), tokens: Array.from(textOrIds, String) };
    this.runs.push({ ablate: ablate.map((a) => `${a.layer}.${a.head}`) });
    // The top token depends on how many heads are off, so a test can see ablation act.
    const next = Array.from({ length: topK }, (_, k) => ({ id: k, token: `t${k + ablate.length}`, probability: 1 / (k + 2) }));
    const T = ids.length;
    return {
      ids, tokens, logits: new Float32Array(50), next, attention: attention ? new Float32Array(2 * 3 * T * T).fill(1 / T) : undefined,
    };
  }

  async headScores() {
    const scores = [];
    for (let l = 0; l < 2; l++) {
      for (let h = 0; h < 3; h++) {
        const induction = l === 1 && h === 2 ? 0.9 : 0.05;
        scores.push({ layer: l, head: h, previousToken: 0.1, duplicateToken: 0.1, induction, firstToken: 0.2 });
      }
    }
    return { sequence: [0, 1, 2], scores };
  }

  async logitLens(ids, { ablate = [] } = {}) {
    this.lensOff = ablate.map((a) => `${a.layer}.${a.head}`);
    return { layers: [0, 1].map((layer) => ({ layer, positions: Array.from(ids, () => [{ id: 1, token: 'x', probability: 0.5 }]) })) };
  }

  dispose() { this.disposed = true; }
}

/**
 * A client that runs an ExplorerSession in-process (as the main-thread fallback does), whose
 * hub loads go to `loadPretrained`. `hold` keeps a request type's answer until release(type).
 */
function sessionClient(lab, loadPretrained) {
  return (onEvent) => {
    const session = new ExplorerSession(lab, onEvent, { loadPretrained });
    const held = new Map();
    const client = {
      dead: false, disposed: false, session, requests: [],
      hold(type) { held.set(type, []); },
      release(type) { const jobs = held.get(type) ?? []; held.delete(type); for (const go of jobs) go(); },
      request(type, payload) {
        client.requests.push(type);
        const go = () => session.handle(type, payload).then((r) => r.result);
        if (held.has(type)) return new Promise((resolve, reject) => held.get(type).push(() => go().then(resolve, reject)));
        return go();
      },
      dispose() { client.disposed = true; session.dispose(); },
    };
    return client;
  };
}

function controller(createClient, extra = {}) {
  const events = [];
  const c = new ExplorerController({
    createClient, readShipped: async (name) => new Uint8Array(readFileSync(path.join(REPO, 'web/models', `${name}.hlm`))),
    emit: (type, detail) => events.push({ type, detail }), ...extra,
  });
  return { c, events, states: () => events.filter((e) => e.type === 'state').map((e) => e.detail.to) };
}

let lab;
before(async () => { lab = await createHeadlab(); });

test('the transition table names only known states and go() refuses an unlisted change', () => {
  const states = Object.keys(TRANSITIONS);
  for (const to of Object.values(TRANSITIONS).flat()) assert.ok(states.includes(to), `${to} is a state`);
  const { c } = controller(() => ({}));
  assert.throws(() => c.go('ready'), /no transition from empty to ready/);
  assert.throws(() => c.go('running'), /no transition from empty to running/);
  assert.equal(c.state, 'empty');
});

test('a hub model: loading with progress, ready with head scores and results for the course sentence', async () => {
  const model = new FakeModel();
  let release;
  const loadPretrained = (source, o) => new Promise((resolve) => {
    assert.equal(source, 'openai-community/gpt2');
    assert.equal(o.revision, 'main');
    o.onProgress({ file: 'config.json', loaded: 10, total: 10 });
    o.onProgress({ file: 'model.safetensors', loaded: 100, total: 1000 });
    release = () => resolve(model);
  });
  const { c, events, states } = controller(sessionClient(lab, loadPretrained));
  assert.equal(c.text, COURSE_SENTENCE);
  const done = c.load({ kind: 'hub', id: 'openai-community/gpt2', revision: 'main' });
  await settle();
  assert.equal(c.state, 'loading');
  assert.deepEqual(c.progress, { file: 'model.safetensors', loaded: 100, total: 1000 });
  assert.equal(events.filter((e) => e.type === 'progress').length, 2);
  release();
  await done;
  // Loaded, run, then the (cheap) logit lens of the text.
  assert.deepEqual(states(), ['loading', 'ready', 'running', 'ready', 'running', 'ready']);
  assert.equal(c.state, 'ready');
  assert.equal(c.info.numHeads, 3);
  assert.equal(c.scores.scores.length, 6);
  assert.deepEqual(c.results.tokens, COURSE_SENTENCE.split(' '));
  assert.deepEqual(c.results.shape, [2, 3, 11, 11]);
  assert.equal(c.results.next.length, 5, 'the top 5 next tokens');
  assert.equal(c.results.lens.length, 2, 'the logit lens: one row per layer');
  assert.equal(c.results.baseline, null, 'no baseline while every head is on');
  assert.deepEqual(c.open, { layer: 1, head: 2 }, 'the strongest induction head is shown first');
  assert.equal(c.progress, null);
});

test('progress held back by the 100 ms limit is sent late, not lost: a download that stalls shows the bytes it got', async () => {
  let release;
  const loadPretrained = (source, o) => new Promise((resolve) => {
    o.onProgress({ file: 'model.safetensors', loaded: 0, total: 1000 });
    o.onProgress({ file: 'model.safetensors', loaded: 200, total: 1000 });
    o.onProgress({ file: 'model.safetensors', loaded: 400, total: 1000 });
    // ... and then nothing more arrives for a while.
    release = () => resolve(new FakeModel());
  });
  const { c, events } = controller(sessionClient(lab, loadPretrained));
  const done = c.load({ kind: 'hub', id: 'openai-community/gpt2', revision: 'main' });
  await settle();
  assert.deepEqual(c.progress, { file: 'model.safetensors', loaded: 0, total: 1000 }, 'the first update goes out at once');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.deepEqual(c.progress, { file: 'model.safetensors', loaded: 400, total: 1000 }, 'the latest held update followed');
  assert.equal(events.filter((e) => e.type === 'progress').length, 2, 'the one in between was merged');
  release();
  await done;
  assert.equal(c.state, 'ready');
});

test('a load that fails sends no progress held back before it failed', async () => {
  const events = [];
  const session = new ExplorerSession(lab, (m) => events.push(m), {
    loadPretrained: async (source, o) => {
      o.onProgress({ file: 'model.safetensors', loaded: 0, total: 1000 });
      o.onProgress({ file: 'model.safetensors', loaded: 200, total: 1000 });
      throw new Error('the download of model.safetensors was cut after 200 of 1000 bytes');
    },
  });
  await assert.rejects(() => session.handle('load', { kind: 'hub', id: 'openai-community/gpt2' }), /cut after 200/);
  const sent = events.length;
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(events.length, sent, `nothing after the failure: ${JSON.stringify(events.slice(sent))}`);
  session.dispose();
});

test('switching heads off runs again with them off, shows the all-on top tokens beside, and back on', async () => {
  const model = new FakeModel();
  const { c } = controller(sessionClient(lab, async () => model));
  await c.load({ kind: 'hub', id: 'x/y' });
  assert.equal(c.results.next[0].token, 't0');
  const runs = model.runs.length;
  await c.setHeadEnabled(1, 2, false);
  assert.equal(c.headEnabled(1, 2), false);
  assert.deepEqual(model.runs.at(-1).ablate, ['1.2'], 'the run had head 1.2 off');
  assert.equal(model.runs.length, runs + 1, 'the all-on answer for this text is kept, not run again');
  assert.equal(c.results.next[0].token, 't1', 'the top token changed with the head off');
  assert.equal(c.results.baseline[0].token, 't0', 'the all-on answer is there to compare');
  await c.allHeadsOn();
  assert.equal(c.results.next[0].token, 't0');
  assert.equal(c.results.baseline, null);
  assert.throws(() => c.setHeadEnabled(2, 0, false), RangeError);
  assert.throws(() => c.openHead(0, 3), /head must be an integer in 0..2, got 3/);
});

test('changes that arrive while a run is on its way are run once after it, with the last settings', async () => {
  const model = new FakeModel();
  const { c, states } = controller(sessionClient(lab, async () => model));
  await c.load({ kind: 'hub', id: 'x/y' });
  c.client.hold('analyze');
  const first = c.setText('a b c');
  assert.equal(c.state, 'running');
  c.setHeadEnabled(0, 0, false);
  c.setHeadEnabled(0, 1, false);
  c.setText('a b c d');
  assert.equal(c.state, 'running');
  c.client.release('analyze');
  await first;
  await settle();
  // One more run, with both heads off and the last text.
  assert.deepEqual(c.client.requests.filter((t) => t === 'analyze').length, 3);
  assert.deepEqual(c.results.tokens, ['a', 'b', 'c', 'd']);
  assert.deepEqual(model.runs.at(-2).ablate, ['0.0', '0.1']);
  assert.equal(c.state, 'ready');
  assert.deepEqual(states().slice(-4), ['running', 'ready', 'running', 'ready']);
});

test('a text the model cannot read leaves the model ready, with the problem in words', async () => {
  const { c } = controller(sessionClient(lab, async () => new FakeModel()));
  await c.load({ kind: 'hub', id: 'x/y' });
  const before = c.results;
  await c.setText('an unknown word');
  assert.equal(c.state, 'ready');
  assert.match(c.textProblem, /unknown word "unknown"/);
  assert.equal(c.results, before, 'the last results stay');
  await c.setText('fine words');
  assert.equal(c.textProblem, '');
});

test('cancel stops a download: cancelled, the abort reaches the loader, a late answer is dropped', async () => {
  let signal, resolveLoad;
  const model = new FakeModel();
  const { c, states } = controller(sessionClient(lab, (source, o) => new Promise((resolve) => {
    signal = o.signal;
    resolveLoad = resolve;
  })));
  const done = c.load({ kind: 'hub', id: 'x/y' });
  await settle();
  assert.equal(c.cancel(), true);
  await settle();
  assert.equal(c.state, 'cancelled');
  assert.equal(signal.aborted, true, 'the download was aborted');
  resolveLoad(model);
  await done;
  await settle();
  assert.equal(c.state, 'cancelled');
  assert.equal(model.disposed, true, 'a model that arrives after cancel is freed');
  assert.equal(c.cancel(), false, 'nothing to cancel now');
  assert.deepEqual(states(), ['loading', 'cancelled']);
  // A new load works from there.
  await c.load({ kind: 'shipped', name: 'cricket' });
  assert.equal(c.state, 'ready');
});

test('a failed load is an error in plain words; offline and a blocked download say so', async () => {
  const { c, events } = controller(sessionClient(lab, async () => { throw new Error('openai-community/gpt2: model.safetensors: HTTP 404'); }));
  await c.load({ kind: 'hub', id: 'openai-community/gpt2' });
  assert.equal(c.state, 'error');
  assert.match(c.error, /The hub has no such file: .*404/);
  assert.ok(events.some((e) => e.type === 'error'));
  assert.match(explainLoadError('Failed to fetch', { online: false }), /You are offline/);
  assert.match(explainLoadError('TypeError: Failed to fetch'), /did not go through/);
  assert.match(explainLoadError('Refused to connect because it violates the document\'s Content Security Policy'), /Content-Security-Policy blocks them/);
  assert.match(explainLoadError('roneneldan/TinyStories-1M has only pytorch_model.bin'), /refs\/pr/);
  assert.match(explainLoadError('loadPretrained: the download of model.safetensors was cut after 2048 of 105316 bytes: network error'), /stopped before the end of a file; try again/);
});

test('a Worker that dies takes the model with it: error, and the next load starts a new client', async () => {
  const made = [];
  const make = sessionClient(lab, async () => new FakeModel());
  const { c } = controller((onEvent) => { const client = make(onEvent); made.push({ client, onEvent }); return client; });
  await c.load({ kind: 'hub', id: 'x/y' });
  made[0].onEvent({ event: 'paused', reason: 'error', fatal: true, message: 'out of memory' });
  assert.equal(c.state, 'error');
  assert.match(c.error, /Worker stopped \(out of memory\)/);
  await c.load({ kind: 'hub', id: 'x/y' });
  assert.equal(made.length, 2, 'a new client');
  assert.equal(c.state, 'ready');
  c.dispose();
  assert.equal(c.state, 'empty');
  assert.equal(made[1].client.disposed, true);
});

test('small helpers: the strongest detector, sizes as people read them', () => {
  assert.deepEqual(((s) => [s.key, s.mark, s.score])(strongest({ previousToken: 0.2, duplicateToken: 0.1, induction: 0.7, firstToken: 0.3 })), ['induction', 'I', 0.7]);
  assert.ok(Number.isNaN(strongest({}).score));
  assert.equal(sizeText(548_105_171), '548 MB');
  assert.equal(sizeText(48_600_000), '48.6 MB');
  assert.equal(sizeText(46_299), '46 KB');
});

test('HeadLab\'s cricket model through the session: the same numbers as the LanguageModel', async () => {
  const bytes = readFileSync(path.join(REPO, 'web/models/cricket.hlm'));
  const lm = await lab.loadLanguageModel(bytes);
  const { c } = controller(sessionClient(lab, async () => { throw new Error('no hub here'); }));
  const spec = SHIPPED_MODELS.find((m) => m.name === 'cricket');
  await c.load({ kind: 'shipped', name: 'cricket' }, { text: spec.text });
  assert.equal(c.state, 'ready');
  assert.deepEqual([c.info.numLayers, c.info.numHeads, c.info.architecture], [2, 4, 'headlab']);
  // Head scores: the LanguageModel's, on the same 500 held-out sequences.
  const mine = lm.headScores(500);
  assert.equal(c.scores.basis, 'task');
  assert.equal(c.scores.sequence, null);
  c.scores.scores.forEach((s, i) => {
    for (const k of ['previousToken', 'duplicateToken', 'induction', 'firstToken', 'coreference']) assert.equal(s[k], mine[i][k], `${k} of head ${i}`);
  });
  // Attention and the next tokens with every head on.
  const att = lm.attention(spec.text);
  assert.deepEqual(c.results.tokens, att.tokens);
  assert.deepEqual(Array.from(c.results.attention), Array.from(att.weights));
  const top = lm.predict(spec.text, { topK: 5 });
  assert.deepEqual(c.results.next.map((n) => n.token), top.map((n) => n.token));
  assert.match(c.results.lensNote, /no logit lens/);
  // The coreference head off: the answer is the LanguageModel's with that head switched off.
  const coref = c.scores.scores.reduce((b, s) => (s.coreference > b.coreference ? s : b));
  await c.setHeadEnabled(coref.layer, coref.head, false);
  lm.setHeadEnabled(coref.layer, coref.head, false);
  const off = lm.predict(spec.text, { topK: 5 });
  assert.deepEqual(c.results.next.map((n) => [n.token, n.probability]), off.map((n) => [n.token, n.probability]));
  assert.deepEqual(c.results.baseline.map((n) => n.token), top.map((n) => n.token));
  assert.notDeepEqual(c.results.next.map((n) => n.token), top.map((n) => n.token), 'switching the coreference head off changes the top 5');
  // The model's own switches are back on after the run (ablation is per call).
  const held = c.client.session.model;
  assert.equal(held.info.task, 'cricket', 'the session holds the LanguageModel itself');
  for (let l = 0; l < 2; l++) for (let h = 0; h < 4; h++) assert.equal(held.headEnabled(l, h), true);
  // A word the model does not know: the LanguageModel's error, naming it.
  await c.setText(COURSE_SENTENCE);
  assert.match(c.textProblem, /unknown word "outside"/);
  lm.dispose();
  c.dispose();
});

test('an expensive logit lens waits to be asked for; it is computed with the heads that are off, and kept per text and heads', async () => {
  const model = new FakeModel();
  let lensCalls = 0;
  const logitLens = model.logitLens.bind(model);
  model.logitLens = (ids, o) => { lensCalls += 1; return logitLens(ids, o); };
  // 2 layers × 11 tokens × 50 × 12 = 13,200 multiply-adds: above a budget of 10,000.
  const { c, states } = controller(sessionClient(lab, async () => model), { lensBudget: 10_000 });
  await c.load({ kind: 'hub', id: 'x/y' });
  assert.equal(c.results.lens, null, 'no lens with the run');
  assert.equal(c.results.lensNote, '');
  assert.equal(lensCalls, 0);
  await c.computeLens();
  assert.equal(c.results.lens.length, 2);
  assert.equal(lensCalls, 1);
  assert.deepEqual(model.lensOff, []);
  assert.deepEqual(states().slice(-2), ['running', 'ready']);
  await c.setHeadEnabled(0, 1, false);
  assert.equal(c.results.lens, null, 'the all-on lens is not shown beside a run with a head off');
  await c.computeLens();
  assert.equal(lensCalls, 2);
  assert.deepEqual(model.lensOff, ['0.1'], 'the lens ran with the same head off');
  await c.setHeadEnabled(0, 1, true);
  assert.equal(c.results.lens.length, 2, 'the all-on lens of this text is kept');
  assert.equal(lensCalls, 2, 'and not computed again');
  await c.setText('a short one');
  assert.equal(c.results.lens.length, 2, 'a short text is under the budget: its lens comes with the run');
  assert.equal(lensCalls, 3);
});
