// The findings controller (web/lib/teach/findings-controller.js) with a fake model that implements the
// issue-35 contract: its means against sums computed here from the fake's own formulas, prompts skipped when
// a name is two tokens, cancel between prompts (late answers dropped), errors, and the transition table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FindingsController, TRANSITIONS, topHeads } from '../../web/lib/teach/findings-controller.js';
import { ioiPrompts } from '../../web/lib/api/findings.js';

const lab = { findings: { ioiPrompts } };
const L = 2;
const H = 3;

/** Words to ids; "Jessica" is two tokens, so prompts that use it must be skipped. */
function fakeModel({ gate, failAt = -1 } = {}) {
  const vocab = new Map();
  const id = (w) => {
    if (!vocab.has(w)) vocab.set(w, vocab.size + 1);
    return vocab.get(w);
  };
  let calls = 0;
  const tokenize = (text) => ({
    ids: Int32Array.from((text.match(/ ?[A-Za-z]+|[^\sA-Za-z]/g) ?? []).flatMap((w) => (w.endsWith('Jessica') ? [id(' Jess'), id('ica')] : [id(w)]))),
  });
  const model = {
    info: { numLayers: L, numHeads: H },
    tokenize,
    async run(ids) {
      const logits = new Float32Array(200);
      for (const i of ids) logits[i] += 1;  // a name seen twice (the subject) gets 2, the answer 1
      return { logits };
    },
    async patchHeads({ clean, corrupted, answer, wrong }) {
      if (calls++ === failAt) throw new Error('engine stopped');
      if (gate) await gate();
      return { effects: Float32Array.from({ length: L * H }, (_, i) => (answer * (i + 1) - wrong + clean.length - corrupted.length) % 7) };
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
