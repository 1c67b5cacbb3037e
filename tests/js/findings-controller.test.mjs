// The findings controller (web/lib/teach/findings-controller.js) with a fake model that implements the
// issue-35 contract: its means against sums computed here from the fake's own formulas, prompts skipped when
// a name is two tokens, cancel between prompts (late answers dropped), errors, and the transition table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  FindingsController, TRANSITIONS, topHeads, inductionFinding, sinkFinding, paperOutlines, sessionModel,
  IOI_PAPER_HEADS, INDUCTION_PAPER_HEADS, SyntaxController, CLARK_PAPER,
} from '../../web/lib/teach/findings-controller.js';
import { createHeadlab } from '../../web/lib/headlab.js';
import { ExplorerSession } from '../../web/lib/teach/explorer-session.js';
import { ioiPrompts } from '../../web/lib/api/findings.js';

const lab = { findings: { ioiPrompts } };
const L = 2;
const H = 3;

/** Words to ids; "Jessica" is two tokens, so prompts that use it must be skipped. */
function fakeModel({ gate, failAt = -1, specials = null } = {}) {
  const vocab = new Map();
  const id = (w) => {
    if (!vocab.has(w)) vocab.set(w, vocab.size + 1);
    return vocab.get(w);
  };
  let calls = 0;
  const words = (text) => (text.match(/ ?[A-Za-z]+|[^\sA-Za-z]/g) ?? []).flatMap((w) => (w.endsWith('Jessica') ? [id(' Jess'), id('ica')] : [id(w)]));
  const tokenize = (text) => {
    if (!specials) return { ids: Int32Array.from(words(text)) };
    // Llama-like: <s> first, and a text that starts with a space gets a lone '▁' first (SentencePiece's
    // prefix space), so ' Mary' alone is two tokens. BERT-like: [CLS] … [SEP].
    const inner = specials === 'llama' && text.startsWith(' ') ? [id('▁'), ...words(text)] : words(text);
    return { ids: Int32Array.from(specials === 'llama' ? [9001, ...inner] : [9002, ...inner, 9003]) };
  };
  const model = {
    info: { numLayers: L, numHeads: H, kind: specials === 'bert' ? 'encoder' : 'decoder' },
    maskToken: '[MASK]',
    tokenize,
    async patchHeads({ clean, corrupted, answer, wrong }) {
      if (calls++ === failAt) throw new Error('engine stopped');
      if (gate) await gate();
      // The metric: how often each name occurs (the subject, seen twice, gets 2; the answer 1).
      const count = (id) => clean.filter((i) => i === id).length;
      return { effects: Float32Array.from({ length: L * H }, (_, i) => (answer * (i + 1) - wrong + clean.length - corrupted.length) % 7),
        metricClean: count(answer) - count(wrong) };
    },
    async directLogitAttribution({ ids, answer, wrong }) {
      return {
        heads: Float32Array.from({ length: L * H }, (_, i) => ((ids.length + i * answer) % 5) - wrong / 100),
        mlps: Float32Array.from({ length: L }, (_, l) => l - answer / 50),
      };
    },
  };
  return { model, tokenize };
}

/** The means, computed here from the prompts and the fake's formulas. */
function expectedMeans(n, seed, tokenize) {
  const sum = { eff: new Array(L * H).fill(0), dla: new Array(L * H).fill(0), mlp: new Array(L).fill(0), diff: 0, wins: 0 };
  let measured = 0;
  let skipped = 0;
  for (const p of ioiPrompts({ n, seed })) {
    if ([p.answer, p.wrong, ` ${p.names[2]}`].includes(' Jessica')) {
      skipped++;
      continue;
    }
    const clean = tokenize(p.clean).ids;
    const a = tokenize(p.answer).ids[0];
    const w = tokenize(p.wrong).ids[0];
    for (let i = 0; i < L * H; i++) {
      sum.eff[i] += (a * (i + 1) - w) % 7;
      sum.dla[i] += Math.fround(((clean.length + i * a) % 5) - w / 100);
    }
    for (let l = 0; l < L; l++) sum.mlp[l] += Math.fround(l - a / 50);
    sum.diff += 1 - 2;  // the fake's logits: the answer seen once, the subject twice
    measured++;
  }
  return { measured, skipped, ...sum };
}

const close = (a, b, what) => {
  assert.equal(a.length, b.length, what);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) <= 1e-9, `${what}[${i}]: ${a[i]} vs ${b[i]}`);
};

test('a run gives the means over the prompts, skipping prompts whose names are two tokens', async () => {
  const { model, tokenize } = fakeModel();
  const events = [];
  const c = new FindingsController({ lab, emit: (type, detail) => events.push([type, detail]) });
  c.setModel(model);
  await c.run({ n: 40, seed: 5 });
  assert.equal(c.state, 'done');
  const e = expectedMeans(40, 5, tokenize);
  assert.ok(e.skipped > 0 && e.measured > 0, 'seed 5 has both kinds of prompt');
  assert.equal(c.result.prompts, e.measured);
  assert.equal(c.result.skipped, e.skipped);
  close(c.result.effects, e.eff.map((v) => v / e.measured), 'effects');
  close(c.result.dlaHeads, e.dla.map((v) => v / e.measured), 'dlaHeads');
  close(c.result.dlaMlps, e.mlp.map((v) => v / e.measured), 'dlaMlps');
  assert.equal(c.result.logitDiff, e.diff / e.measured);
  assert.equal(c.result.answerWins, 0);
  assert.deepEqual(c.result.topPatch, topHeads(c.result.effects, H));
  assert.equal(events.filter(([t]) => t === 'progress').length, 40);
  assert.deepEqual(events.filter(([t]) => t === 'state').map(([, d]) => d.to), ['running', 'done']);
});

test('names as they follow the prompt: a tokenizer that adds <s>, or [CLS] … [SEP], skips only the two-token names', async () => {
  const plain = expectedMeans(40, 5, fakeModel().tokenize);
  for (const specials of ['llama', 'bert']) {
    const { model } = fakeModel({ specials });
    const c = new FindingsController({ lab, emit: () => {} });
    c.setModel(model);
    await c.run({ n: 40, seed: 5 });
    assert.equal(c.state, 'done', `${specials}: ${c.error}`);
    assert.deepEqual([c.result.prompts, c.result.skipped], [plain.measured, plain.skipped], specials);
    assert.equal(c.result.encoder, specials === 'bert');
  }
});

test('topHeads ranks by value, then by layer and head', () => {
  assert.deepEqual(topHeads([0.5, 2, -1, 2, 0, 3], 3).map((h) => [h.layer, h.head, h.value]), [[1, 2, 3], [0, 1, 2], [1, 0, 2]]);
});

test('cancel stops between prompts; the late answer is dropped and the means so far are kept', async () => {
  let release;
  let calls = 0;
  const gate = () => (++calls === 3 ? new Promise((r) => { release = r; }) : Promise.resolve());
  const { model } = fakeModel({ gate });
  const c = new FindingsController({ lab, emit: () => {} });
  c.setModel(model);
  const running = c.run({ n: 10, seed: 0 });
  while (!release) await new Promise((r) => setImmediate(r));
  const before = c.progress.done;
  c.cancel();
  assert.equal(c.state, 'cancelled');
  assert.ok(c.result === null || c.result.prompts <= before);
  const kept = c.result;
  release();
  await running;
  assert.equal(c.state, 'cancelled');
  assert.equal(c.progress.done, before);
  assert.equal(c.result, kept);
  await c.run({ n: 3, seed: 0 });  // runs again after a cancel
  assert.equal(c.state, 'done');
});

test('a failing call ends in error with its message; setModel goes back to idle', async () => {
  const { model } = fakeModel({ failAt: 2 });
  const errors = [];
  const c = new FindingsController({ lab, emit: (type, d) => type === 'error' && errors.push(d.message) });
  await assert.rejects(c.run(), /run\(\) before setModel\(\)/);
  c.setModel(model);
  await c.run({ n: 10, seed: 1 });
  assert.equal(c.state, 'error');
  assert.deepEqual(errors, ['engine stopped']);
  c.setModel(fakeModel().model);
  assert.equal(c.state, 'idle');
  assert.equal(c.result, null);
});

test('the transition table is enforced', () => {
  const c = new FindingsController({ lab, emit: () => {} });
  for (const [from, tos] of Object.entries(TRANSITIONS)) {
    for (const to of Object.keys(TRANSITIONS)) {
      c.state = from;
      if (tos.includes(to)) c.go(to);
      else assert.throws(() => c.go(to), new RegExp(`no transition from ${from} to ${to}`));
    }
  }
});

test('an encoder: prompts end with its mask token, no attribution is asked for, the DLA fields are null', async () => {
  const { model } = fakeModel();
  const seen = [];
  const patch = model.patchHeads;
  model.patchHeads = (a) => { seen.push(a.clean); return patch(a); };
  model.directLogitAttribution = () => { throw new Error('an encoder has no direct logit attribution'); };
  model.info = { ...model.info, kind: 'encoder' };
  model.maskToken = '[MASK]';
  const c = new FindingsController({ lab, emit: () => {} });
  c.setModel(model);
  await c.run({ n: 6, seed: 2 });
  assert.equal(c.state, 'done', c.error);
  assert.ok(seen.length > 0 && seen.every((ids) => ids.length >= 3));
  assert.equal(c.result.dlaHeads, null);
  assert.equal(c.result.topDla, null);
  assert.equal(c.result.encoder, true);
  assert.equal(c.result.effects.length, L * H);
});

test('run refuses a bad n or seed, naming it', async () => {
  const c = new FindingsController({ lab, emit: () => {} });
  c.setModel(fakeModel().model);
  await assert.rejects(c.run({ n: 0 }), /n must be an integer in 1\.\.1000, got 0/);
  await assert.rejects(c.run({ n: 2, seed: -1 }), /seed must be an integer ≥ 0, got -1/);
  assert.equal(c.state, 'idle');
});

/** headScores()'s shape for a 12 × 12 model, each score from a formula of the head. */
function fakeScores(L2, H2, f) {
  const out = [];
  for (let layer = 0; layer < L2; layer++) for (let head = 0; head < H2; head++) out.push({ layer, head, ...f(layer, head) });
  return out;
}

test('inductionFinding: the top heads by induction score and the paper\'s heads\' ranks', () => {
  // The paper's four heads score 0.9, 0.8, 0.7, 0.6 in its order; head 0.0 scores 0.75 and so ranks third.
  const paper = new Map(INDUCTION_PAPER_HEADS.map(([l, h], i) => [`${l}.${h}`, 0.9 - 0.1 * i]));
  const scores = fakeScores(12, 12, (l, h) => ({ induction: paper.get(`${l}.${h}`) ?? (l === 0 && h === 0 ? 0.75 : (l * 12 + h) / 1000), firstToken: 0 }));
  const f = inductionFinding(scores, { numLayers: 12, numHeads: 12 });
  assert.deepEqual(f.top.map((h) => [h.layer, h.head]), [[5, 5], [6, 9], [0, 0], [7, 10]]);
  assert.deepEqual(f.paper.map((p) => p.rank), [1, 2, 4, 5]);
  assert.equal(f.found, 3);
  assert.equal(f.grid[5 * 12 + 5], 0.9);
  // A smaller model: heads beyond its shape have no rank and no value.
  const small = inductionFinding(fakeScores(2, 4, (l, h) => ({ induction: l + h / 10 })), { numLayers: 2, numHeads: 4 });
  assert.deepEqual(small.paper.map((p) => p.rank), [null, null, null, null]);
  assert.deepEqual(small.top.map((h) => [h.layer, h.head]), [[1, 3], [1, 2], [1, 1], [1, 0]]);
  assert.equal(small.found, 0);
  assert.throws(() => inductionFinding(null, { numLayers: 2, numHeads: 4 }), /scores must be headScores\(\)\.scores/);
});

test('sinkFinding: the share of heads with first-token score at least 0.5, and the grid', () => {
  const scores = fakeScores(3, 4, (l, h) => ({ firstToken: [0.1, 0.5, 0.49, 0.95][h] * (l === 2 ? 0 : 1) }));
  const f = sinkFinding(scores, { numLayers: 3, numHeads: 4 });
  // Layers 0 and 1: heads 1 (0.5) and 3 (0.95) count; layer 2 is all zero.
  assert.equal(f.count, 4);
  assert.equal(f.total, 12);
  assert.equal(f.share, 4 / 12);
  assert.equal(f.grid[1 * 4 + 3], 0.95);
  assert.deepEqual(f.top.map((h) => [h.layer, h.head]), [[0, 3], [1, 3], [0, 1]]);
  assert.equal(sinkFinding(scores, { numLayers: 3, numHeads: 4 }, 0.9).count, 2);
});

test('paperOutlines: every paper head in GPT-2 small once, under its first role; none outside a small shape', () => {
  const all = paperOutlines({ numLayers: 12, numHeads: 12 });
  const listed = new Set(Object.values(IOI_PAPER_HEADS).flat().map(([l, h]) => `${l}.${h}`));
  assert.equal(all.length, listed.size);
  assert.deepEqual(all.find((o) => o.layer === 9 && o.head === 9), { layer: 9, head: 9, role: 'nameMover' });
  assert.deepEqual(paperOutlines({ numLayers: 2, numHeads: 4 }), [{ layer: 0, head: 1, role: 'duplicateToken' }]);
});

// The controller over the explorer's session (the requests the Worker answers), on the IOI model that
// make_findings.py trained: the means over ioiPrompts({ n: 16, seed: 3 }) single out PyTorch's top 3.
test('through an ExplorerSession on the trained IOI model: PyTorch\'s top-3 heads by patching and by attribution', { timeout: 60_000 }, async () => {
  const dir = new URL('../golden/findings/ioi-model/', import.meta.url);
  const read = (f) => readFileSync(new URL(f, dir));
  const expected = JSON.parse(read('expected.json'));
  const real = await createHeadlab();
  const bytes = read('model.safetensors');
  const session = new ExplorerSession(real, () => {}, {
    loadPretrained: () => real.loadPretrained({ config: JSON.parse(read('config.json')), tokenizer: JSON.parse(read('tokenizer.json')),
      weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) }),
  });
  const request = async (type, payload) => (await session.handle(type, payload)).result;
  await assert.rejects(sessionModel(request, { numLayers: 2, numHeads: 4 }), /no model is loaded/);
  const { info } = await request('load', { kind: 'files', files: [] });
  try {
    const model = await sessionModel(request, info);
    assert.deepEqual([model.info.kind, model.maskToken, model.causal], ['decoder', null, true]);
    const c = new FindingsController({ lab, emit: () => {} });
    c.setModel(model);
    await c.run({ n: expected.mean.prompts, seed: 3 });
    assert.equal(c.state, 'done', c.error);
    assert.equal(c.result.prompts, expected.cases.length);
    const heads = (list) => list.map((h) => (Array.isArray(h) ? h : [h.layer, h.head]));
    assert.deepEqual(heads(c.result.topPatch), expected.mean.top3Patch);
    assert.deepEqual(heads(c.result.topDla), expected.mean.top3Dla);
    const largest = Math.max(...expected.mean.effects.map(Math.abs));
    expected.mean.effects.forEach((v, i) => assert.ok(Math.abs(c.result.effects[i] - v) <= 1e-3 * largest, `effect ${i}: ${c.result.effects[i]} vs ${v}`));
    await assert.rejects(request('findings', { op: 'nothing' }), /unknown findings call "nothing"/);
  } finally {
    session.dispose();
  }
});

// An encoder through the session (the BERT fixture of tests/golden/families/, whose word pieces keep
// single letters whole, so its names are letters): the prompts end with [MASK], the describe call finds
// it past [CLS] … [SEP], there is no attribution, and the means are those of the API's own patchHeads and
// of run()'s logits at the mask.
test('an encoder through the session: patched at [MASK], no attribution, means as the API gives them', { timeout: 60_000 }, async () => {
  const dir = new URL('../golden/families/bert/', import.meta.url);
  const read = (f) => readFileSync(new URL(f, dir));
  const real = await createHeadlab();
  const bytes = read('model.safetensors');
  const open = () => real.loadPretrained({ config: JSON.parse(read('config.json')), tokenizer: JSON.parse(read('tokenizer.json')),
    weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
  const letters = [['a', 'b', 'c'], ['d', 'e', 'f'], ['b', 'a', 'g']];
  const prompts = letters.map(([io, s, other]) => ({
    clean: `When ${io} and ${s} went to the store, ${s} gave a drink to`, corrupted: `When ${io} and ${s} went to the store, ${other} gave a drink to`,
    answer: ` ${io}`, wrong: ` ${s}`,
  }));
  const session = new ExplorerSession(real, () => {}, { loadPretrained: open });
  const request = async (type, payload) => (await session.handle(type, payload)).result;
  const { info } = await request('load', { kind: 'files', files: [] });
  const direct = await open();
  try {
    const model = await sessionModel(request, info);
    assert.deepEqual([model.info.kind, model.maskToken], ['encoder', '[MASK]']);
    const c = new FindingsController({ lab: { findings: { ioiPrompts: () => prompts } }, emit: () => {} });
    c.setModel(model);
    await c.run({ n: prompts.length });
    assert.equal(c.state, 'done', c.error);
    assert.deepEqual([c.result.prompts, c.result.skipped, c.result.dlaHeads, c.result.topDla], [3, 0, null, null]);
    const V = direct.info.vocabSize;
    const effects = new Float64Array(info.numLayers * info.numHeads);
    let diff = 0;
    for (const p of prompts) {
      const r = await direct.patchHeads({ clean: `${p.clean} [MASK].`, corrupted: `${p.corrupted} [MASK].`, answer: p.answer, wrong: p.wrong });
      r.effects.forEach((v, i) => { effects[i] += v / prompts.length; });
      const run = await direct.run(`${p.clean} [MASK].`);
      const at = Array.from(run.ids).indexOf(direct.tokenize('[MASK]').ids[1]);
      assert.equal(at, r.position, 'patchHeads reads the metric at the mask');
      diff += (run.logits[at * V + r.answer] - run.logits[at * V + r.wrong]) / prompts.length;
    }
    const largest = Math.max(...Array.from(effects, Math.abs));
    effects.forEach((v, i) => assert.ok(Math.abs(c.result.effects[i] - v) <= 1e-5 * largest, `effect ${i}`));
    assert.ok(Math.abs(c.result.logitDiff - diff) <= 1e-4 * Math.max(1, Math.abs(diff)), `logit difference ${c.result.logitDiff} vs ${diff}`);
  } finally {
    session.dispose();
    direct.dispose();
  }
});

test('the syntax controller: the model\'s answer with the paper\'s numbers per relation; Stop tells the model and drops the late answer', async () => {
  const answer = (n) => ({ sentences: n, skipped: 0, shape: [1, 2], relations: [
    { relation: 'determiner', arcs: 4, accuracy: Float64Array.from([0.5, 1]), best: { layer: 0, head: 1, accuracy: 1 }, baseline: { offset: 1, accuracy: 0.75 } },
    { relation: 'subject', arcs: 2, accuracy: Float64Array.from([0, 0.5]), best: { layer: 0, head: 1, accuracy: 0.5 }, baseline: { offset: 2, accuracy: 1 } },
  ] });
  let release;
  let stops = 0;
  const asked = [];
  const model = {
    syntaxHeads: (o) => {
      asked.push(o);
      return o.seed === 9 ? new Promise((r) => { release = () => r(answer(o.n)); }) : Promise.resolve(answer(o.n));
    },
    stopSyntax: () => { stops++; },
  };
  const states = [];
  const c = new SyntaxController({ emit: (type, d) => type === 'state' && states.push(d.to) });
  await assert.rejects(c.run(), /run\(\) before setModel\(\)/);
  c.setModel(model);
  await assert.rejects(c.run({ n: 0 }), /n must be an integer in 1\.\.1000, got 0/);
  await c.run({ n: 12, seed: 3 });
  assert.deepEqual(asked, [{ n: 12, seed: 3 }]);
  assert.equal(c.state, 'done');
  assert.deepEqual(c.result.relations.map((r) => r.paper), [CLARK_PAPER.determiner, null]);
  assert.equal(c.result.sentences, 12);
  const running = c.run({ n: 5, seed: 9 });
  c.cancel();
  assert.equal(c.state, 'cancelled');
  assert.equal(stops, 1);
  release();
  await running;
  assert.equal(c.state, 'cancelled');
  assert.equal(c.result, null, 'the late answer is dropped');
  c.setModel({ syntaxHeads: () => Promise.reject(new Error('no attention here')) });
  await c.run({ n: 2 });
  assert.deepEqual([c.state, c.error], ['error', 'no attention here']);
  assert.deepEqual(states, ['running', 'done', 'running', 'cancelled', 'idle', 'running', 'error']);
});

test('the syntax check through the session on the BERT fixture: lab.findings.syntaxHeads\'s answer on the same sentences', { timeout: 60_000 }, async () => {
  const dir = new URL('../golden/families/bert/', import.meta.url);
  const read = (f) => readFileSync(new URL(f, dir));
  const real = await createHeadlab();
  const bytes = read('model.safetensors');
  const open = () => real.loadPretrained({ config: JSON.parse(read('config.json')), tokenizer: JSON.parse(read('tokenizer.json')),
    weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
  const session = new ExplorerSession(real, () => {}, { loadPretrained: open });
  const request = async (type, payload) => (await session.handle(type, payload)).result;
  const { info } = await request('load', { kind: 'files', files: [] });
  const direct = await open();
  try {
    const c = new SyntaxController({ emit: () => {} });
    c.setModel(await sessionModel(request, info));
    await c.run({ n: 6, seed: 2 });
    assert.equal(c.state, 'done', c.error);
    const want = await real.findings.syntaxHeads({ model: direct, sentences: await real.findings.syntaxSentences({ n: 6, seed: 2 }) });
    assert.ok(want.sentences > 0 && want.relations.length > 0, 'the fixture reads some sentences');
    assert.deepEqual([c.result.sentences, c.result.skipped], [want.sentences, want.skipped]);
    assert.deepEqual(c.result.relations.map((r) => [r.relation, r.arcs, r.best, r.baseline, Array.from(r.accuracy)]),
      want.relations.map((r) => [r.relation, r.arcs, r.best, r.baseline, Array.from(r.accuracy)]));
  } finally {
    session.dispose();
    direct.dispose();
  }
});
