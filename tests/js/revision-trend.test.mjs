// Each head's induction score across training revisions (web/lib/teach/revision-trend.js): the
// run logic with a fake scorer (order, progress, a failed revision kept apart, stop, refusals), and
// the real thing through the explorer's session (explorer-session.js's 'revision' request) on the
// two revisions of tests/golden/families' Pythia fixture served by the hub stand-in, against
// headScores() of each revision loaded directly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createHeadlab } from '../../web/lib/headlab.js';
import { startHub } from './hub-server.mjs';
import {
  RevisionTrend, DEFAULT_REVISIONS, parseRevisions, stepOf, inductionGrid, topHeads, ordered, hasTrainingRevisions,
} from '../../web/lib/teach/revision-trend.js';
import { ExplorerSession, headScoreOptions } from '../../web/lib/teach/explorer-session.js';

const FAMILIES = path.join(import.meta.dirname, '../golden/families');
const folder = (name) => new Map(readdirSync(path.join(FAMILIES, name)).map((f) => [f, readFileSync(path.join(FAMILIES, name, f))]));
const ID = 'EleutherAI/pythia-70m';

/** A fake scorer: each revision's head (l, h) scores (step + 1) * (10 l + h) / 1e6; `fail` revisions reject. */
function fakeScorer({ fail = [], layers = 2, heads = 3, calls = [] } = {}) {
  return async (revision, signal) => {
    calls.push(revision);
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    if (fail.includes(revision)) throw Object.assign(new Error(`no file at revision ${revision}`), { code: 'not-found' });
    const step = stepOf(revision) ?? 0;
    const scores = [];
    for (let layer = 0; layer < layers; layer++) {
      for (let head = 0; head < heads; head++) scores.push({ layer, head, induction: ((step + 1) * (10 * layer + head)) / 1e6 });
    }
    return { scores: { scores }, info: { numLayers: layers, numHeads: heads } };
  };
}

test('the default revisions start before the phase change and end at the last step', () => {
  assert.equal(DEFAULT_REVISIONS[0], 'step0');
  assert.equal(DEFAULT_REVISIONS.at(-1), 'step143000');
  const steps = DEFAULT_REVISIONS.map(stepOf);
  assert.deepEqual([...steps].sort((a, b) => a - b), steps, 'in training order');
  assert.equal(stepOf('main'), 143000);
  assert.equal(stepOf('refs/pr/1'), null);
});

test('parseRevisions: commas, spaces and lines; duplicates dropped; bad names named', () => {
  assert.deepEqual(parseRevisions('step0, step1000\nstep0  main'), { revisions: ['step0', 'step1000', 'main'], bad: [] });
  assert.deepEqual(parseRevisions('step0 ../x <b>'), { revisions: ['step0'], bad: ['../x', '<b>'] });
  assert.throws(() => parseRevisions(null), /text must be a string, got null/);
});

test('which models have training revisions', () => {
  assert.ok(hasTrainingRevisions({ architecture: 'LlamaForCausalLM' }, { kind: 'hub', id: 'EleutherAI/pythia-160m' }));
  assert.ok(hasTrainingRevisions({ architecture: 'GPTNeoXForCausalLM' }, { kind: 'hub', id: 'someone/neox' }));
  assert.ok(!hasTrainingRevisions({ architecture: 'GPTNeoXForCausalLM' }, { kind: 'files', files: [] }), 'dropped files have no revisions');
  assert.ok(!hasTrainingRevisions({ architecture: 'GPT2LMHeadModel' }, { kind: 'hub', id: 'openai-community/gpt2' }));
});

test('a run scores each revision in turn, reports progress, and keeps the others when one fails', async () => {
  const events = [], calls = [];
  const trend = new RevisionTrend({ score: fakeScorer({ fail: ['step2000'], calls }), emit: (type, d) => events.push([type, d]) });
  await trend.run(['step0', 'step1000', 'step2000', 'step4000']);
  assert.equal(trend.state, 'done');
  assert.deepEqual(calls, ['step0', 'step1000', 'step2000', 'step4000'], 'one at a time, in order');
  assert.deepEqual(trend.points.map((p) => [p.revision, p.step]), [['step0', 0], ['step1000', 1000], ['step4000', 4000]]);
  assert.equal(trend.points[1].scores[1][2], (1001 * 12) / 1e6, 'scores[layer][head] from the scorer');
  assert.deepEqual(trend.failures.map((f) => [f.revision, f.code]), [['step2000', 'not-found']]);
  assert.match(trend.failures[0].message, /no file at revision step2000/);
  assert.deepEqual(events.filter(([t]) => t === 'progress').map(([, d]) => d.done), [0, 1, 2, 3]);
  assert.deepEqual(trend.progress, { done: 4, total: 4, revision: null });
  assert.deepEqual(trend.top(2), [{ layer: 1, head: 2, score: (4001 * 12) / 1e6 }, { layer: 1, head: 1, score: (4001 * 11) / 1e6 }]);
});

test('stop() keeps the revisions scored so far and aborts the one on its way', async () => {
  let seen = null;
  const score = fakeScorer();
  const trend = new RevisionTrend({
    score: (rev, signal) => { seen = signal; return score(rev, signal); },
    emit: (type, d) => { if (type === 'point' && d.revision === 'step1000') trend.stop(); },
  });
  await trend.run(['step0', 'step1000', 'step2000']);
  assert.equal(trend.state, 'cancelled');
  assert.deepEqual(trend.points.map((p) => p.revision), ['step0', 'step1000']);
  // Stopped during a download: its signal aborts, and no point arrives after.
  const t2 = new RevisionTrend({ score: (rev, signal) => { seen = signal; return score(rev, signal); } });
  const running = t2.run(['step0', 'step1000']);
  t2.stop();
  await running;
  assert.ok(seen.aborted, 'the download was aborted');
  assert.equal(t2.state, 'cancelled');
  assert.deepEqual(t2.points, []);
});

test('refusals name the argument; a revision of another shape is a failure in words', async () => {
  assert.throws(() => new RevisionTrend({}), /score must be a function/);
  const trend = new RevisionTrend({ score: fakeScorer() });
  await assert.rejects(trend.run([]), /revisions must be a non-empty list/);
  await assert.rejects(trend.run(['step0', 3]), /revisions must be a non-empty list/);
  const shapes = { step0: 3, step1000: 4 };
  const odd = new RevisionTrend({ score: (rev) => fakeScorer({ heads: shapes[rev] })(rev, null) });
  await odd.run(['step0', 'step1000']);
  assert.equal(odd.points.length, 1);
  assert.match(odd.failures[0].message, /2 layers × 4 heads where step0 has 2 × 3/);
});

test('inductionGrid, ordered, topHeads', () => {
  const g = inductionGrid({ scores: [{ layer: 0, head: 1, induction: 0.5 }, { layer: 1, head: 0, induction: 0.25 }] }, 2, 2);
  assert.ok(Number.isNaN(g[0][0]));
  assert.equal(g[0][1], 0.5);
  assert.equal(g[1][0], 0.25);
  const pts = [{ revision: 'main', step: 143000, scores: [[0.1, 0.9]] }, { revision: 'x', step: null, scores: [[1, 0]] }, { revision: 'step0', step: 0, scores: [[0.5, 0]] }];
  assert.deepEqual(ordered(pts).map((p) => p.revision), ['step0', 'main', 'x']);
  assert.deepEqual(topHeads(pts.slice(0, 1), 1), [{ layer: 0, head: 1, score: 0.9 }]);
});

// ---------------------------------------------------------------- through the real API

let hub, lab;
before(async () => {
  const repos = new Map([[ID, new Map([['main', folder('pythia')], ['step1000', folder('pythia-step1000')]])]]);
  hub = await startHub({ repos });
  lab = await createHeadlab();
});
after(() => hub?.close());

test('through the explorer session: each revision\'s scores are headScores() of that revision loaded directly', async () => {
  const session = new ExplorerSession(lab, () => {});
  // The explorer's own model stays loaded throughout.
  const { info } = await session.load({ kind: 'hub', id: ID, hubUrl: hub.url });
  const held = session.model;
  const trend = new RevisionTrend({ score: (revision) => session.handle('revision', { id: ID, revision, hubUrl: hub.url }).then((a) => a.result) });
  await trend.run(['main', 'step1000', 'step999']);
  assert.equal(trend.state, 'done');
  assert.equal(session.model, held, 'the explorer\'s model is the same object');
  assert.doesNotThrow(() => held.tokenize('still here'), 'and still usable');
  assert.deepEqual(trend.points.map((p) => p.revision), ['main', 'step1000']);
  assert.equal(trend.failures.length, 1);
  assert.equal(trend.failures[0].revision, 'step999');
  assert.match(trend.failures[0].message, /step999|404|not found/i);
  for (const p of trend.points) {
    const m = await lab.loadPretrained(ID, { hubUrl: hub.url, revision: p.revision, cache: false });
    const direct = inductionGrid(await m.headScores(headScoreOptions(m.info)), info.numLayers, info.numHeads);
    m.dispose();
    assert.deepEqual(p.scores, direct, `${p.revision}: the trend's scores are headScores()'s`);
  }
  // Two different checkpoints: the two revisions' scores differ.
  assert.notDeepEqual(trend.points[0].scores, trend.points[1].scores);
  assert.ok(trend.points.every((p) => p.scores.flat().every(Number.isFinite)));
  session.dispose();
});

test('the chart: one line per head with its scores in training order, the top heads last and in colour', async () => {
  // No canvas in Node: textWidth falls back to an estimate.
  globalThis.document ??= { createElement: () => ({ getContext: () => null }) };
  const { trendFigure } = await import('../../web/components/model-explorer/revision-trend.js');
  const points = [
    { revision: 'main', step: 143000, scores: [[0.1, 0.9], [0.4, 0.2]] },
    { revision: 'step0', step: 0, scores: [[0.05, 0.1], [0.3, 0.0]] },
  ];
  const top = topHeads(points, 2);
  assert.deepEqual(top.map((h) => [h.layer, h.head]), [[0, 1], [1, 0]]);
  const fig = trendFigure({ points, top });
  const lines = fig.shapes.filter((s) => s.type === 'polyline');
  assert.equal(lines.length, 4, 'one line per head');
  const byHead = Object.fromEntries(lines.map((l) => [l.data.head, l.data.scores]));
  assert.deepEqual(byHead, { '0.0': '0.05,0.1', '0.1': '0.1,0.9', '1.0': '0.3,0.4', '1.1': '0,0.2' }, 'step0 first, main last');
  assert.deepEqual(lines.slice(-2).map((l) => l.data.head), ['0.1', '1.0'], 'the top heads drawn last, strongest on top');
  assert.deepEqual(lines.map((l) => l.data.top), ['', '', '1', '2']);
  assert.ok(lines[0].opacity < 1 && lines[3].opacity === 1);
  const xticks = fig.shapes.filter((s) => s.key === 'xtick').map((s) => s.text);
  assert.deepEqual(xticks, ['step0', 'main']);
  // A higher score is drawn higher (smaller y).
  const l01 = lines.find((l) => l.data.head === '0.1');
  assert.ok(l01.points[1][1] < l01.points[0][1]);
});

test('the session\'s revision request: cache on, one revision model at a time, each freed, the explorer\'s model kept', async () => {
  const log = [];
  let alive = 0, most = 0;
  const fakeModel = (revision) => {
    alive += 1;
    most = Math.max(most, alive);
    return {
      info: { numLayers: 1, numHeads: 2, contextLength: 64, architecture: 'GPTNeoXForCausalLM' },
      headScores: async (o) => {
        await new Promise((resolve) => setTimeout(resolve, 10));  // long enough for another load to overlap it
        log.push(['scores', revision, o.length, o.seed]); return { scores: [{ layer: 0, head: 0, induction: 0.5 }, { layer: 0, head: 1, induction: revision.length / 10 }] };
      },
      dispose: () => { alive -= 1; log.push(['dispose', revision]); },
    };
  };
  const session = new ExplorerSession({}, () => {}, {
    loadPretrained: async (id, o) => {
      log.push(['load', id, o.revision ?? 'main', o.cache]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (o.revision === 'step7') throw new Error('HTTP 404');
      return fakeModel(o.revision ?? 'main');
    },
  });
  await session.load({ kind: 'hub', id: ID });
  const held = session.model;
  // Two requests at once: the second waits for the first to free its model.
  const [a, b, c] = await Promise.allSettled(['step1', 'step7', 'step1000'].map((revision) => session.handle('revision', { id: ID, revision })));
  assert.equal(a.status, 'fulfilled');
  assert.equal(b.status, 'rejected');
  assert.deepEqual(c.value.result.info, { numLayers: 1, numHeads: 2, architecture: 'GPTNeoXForCausalLM' });
  assert.equal(c.value.result.scores.scores[1].induction, 0.8);
  assert.equal(most, 2, 'the explorer\'s model and one revision at most');
  assert.equal(alive, 1, 'only the explorer\'s model is left');
  assert.equal(session.model, held);
  assert.deepEqual(log.filter((l) => l[0] === 'load').map((l) => l.slice(2)), [['main', true], ['step1', true], ['step7', true], ['step1000', true]]);
  assert.deepEqual(log.filter((l) => l[0] === 'dispose').map((l) => l[1]), ['step1', 'step1000']);
  assert.deepEqual(log.filter((l) => l[0] === 'scores').map((l) => l.slice(2)), [[20, 1], [20, 1], [20, 1]], 'the same sequence as the grid');
  await assert.rejects(session.handle('revision', { id: ID }), /revision must be a revision name/);
});
