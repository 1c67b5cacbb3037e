// The relations view's numbers (issue 24) under Node: the language-model session's
// `relations` request on the shipped english model (web/models/english.hlm) against the
// API called directly (relations, attention, headScores, baselines), the rows
// lm-relations.js slices from it against a slice written here from the attention tensor,
// a sentence outside the grammar (the API's Error, naming the word), and the controller's
// relations(text) through a fake client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';
import { LmSession } from '../../web/lib/teach/lm-session.js';
import { LmController } from '../../web/lib/teach/lm-controller.js';
import { relationRows, RELATIONS, MAX_ARCS } from '../../web/lib/teach/lm-relations.js';
import { FakeClient, settle } from './fake-client.mjs';
import { scoresCSV } from '../../web/components/language-model/head-grid.js';

const MODEL = new URL('../../web/models/english.hlm', import.meta.url);
const TEXT = 'the girls near the king eat the cake . anna berg met tom and she was happy . later anna berg smiled .';

let lab, session, direct;
before(async () => {
  lab = await createHeadlab();
  session = await LmSession.open(lab, () => {});
  await session.handle('load', { files: [new Uint8Array(readFileSync(MODEL))], example: TEXT });
  direct = await lab.loadLanguageModel(new Uint8Array(readFileSync(MODEL)));
});
after(() => {
  session.handle('dispose', {});
  direct.dispose();
});

test('the session\'s relations request: the API\'s arcs, attention, head scores and baselines of the text', async () => {
  const { result } = await session.handle('relations', { text: TEXT });
  const r = direct.relations(TEXT);
  assert.deepEqual(result.tokens, r.tokens);
  assert.deepEqual(result.arcs, r.arcs);
  const att = direct.attention(TEXT);
  assert.deepEqual(result.shape, att.shape);
  assert.deepEqual(Array.from(result.weights), Array.from(att.weights));
  assert.deepEqual(result.heads, direct.headScores(256));
  assert.deepEqual(result.baselines, direct.baselines(256));
});

test('relationRows: per relation the best head, its attention row at each arc\'s query, the target, the baseline', async () => {
  const { result } = await session.handle('relations', { text: TEXT });
  const rows = relationRows(result);
  assert.deepEqual(rows.relations.map((x) => x.key), RELATIONS.map((x) => x.key), 'the example holds all five relations, in order');
  const [, H, T] = result.shape;
  for (const rel of rows.relations) {
    // The best head, found here by sorting.
    const best = [...result.heads].sort((a, b) => b[rel.key] - a[rel.key])[0];
    assert.deepEqual([rel.head.layer, rel.head.head, rel.head.score], [best.layer, best.head, best[rel.key]], rel.key);
    assert.equal(rel.head.labelled, best.relation === rel.key);
    assert.equal(rel.baseline, result.baselines[rel.key]);
    const all = result.arcs.filter((a) => a.relation === rel.key);
    assert.equal(rel.arcs.length + rel.more, all.length);
    assert.ok(rel.arcs.length >= 1 && rel.arcs.length <= (rel.key === 'previousToken' ? 1 : MAX_ARCS));
    for (const a of rel.arcs) {
      const arc = all.find((x) => x.query === a.query);
      assert.equal(a.target, arc.target);
      assert.equal(a.targetWord, result.tokens[arc.target]);
      assert.equal(a.row.length, a.query + 1);
      for (let k = 0; k <= a.query; k++) assert.equal(a.row[k], result.weights[(((best.layer * H) + best.head) * T + a.query) * T + k]);
      assert.equal(a.onTarget, a.row[a.target]);
      assert.equal(a.row[a.peak], Math.max(...a.row));
    }
  }
  // The previous-token arc shown is the one at the agreement query.
  const agreement = rows.relations.find((x) => x.key === 'agreement').arcs[0];
  assert.equal(rows.relations.find((x) => x.key === 'previousToken').arcs[0].query, agreement.query);
  // The shipped model: the agreement head beats position on this sentence and over held-out ones.
  assert.equal(agreement.targetWord, 'girls');
  assert.ok(agreement.onTarget > 0.5, `weight on the subject: ${agreement.onTarget}`);
});

test('a sentence outside the grammar: the API\'s Error naming the word; an unknown word: its RangeError', async () => {
  await assert.rejects(session.handle('relations', { text: 'the dog run .' }), (e) => /word 3 \('run'\)/.test(e.message) && /does not agree/.test(e.message));
  await assert.rejects(session.handle('relations', { text: 'the dog xyz .' }), (e) => e instanceof RangeError && /unknown word "xyz"/.test(e.message));
});

test('the controller asks the session for relations(text), and checks its argument', async () => {
  const tasks = await lab.languageTasks();
  const clients = [];
  const ctl = new LmController({ createClient: (onEvent) => { const c = new FakeClient(onEvent); clients.push(c); return c; }, tasks,
    fetchModel: async () => new Uint8Array([1]), emit: () => {} });
  await assert.rejects(ctl.relations(TEXT), /relations/, 'no model yet');
  ctl.configure({ task: 'english', layers: 2, heads: 4, seed: 3, compare: false, pretrained: false, speed: 'fast', maxSteps: 3000, example: TEXT }, { autoplay: false });
  const client = clients[clients.length - 1];
  const { result: snap } = await session.handle('snapshot', {});
  client.take('create').resolve({ runs: [{ config: { task: 'english', numLayers: 2, numHeads: 4 }, task: { name: 'english' }, threads: 1 }], snapshot: snap });
  await settle();
  await assert.rejects(ctl.relations(42), (e) => e instanceof TypeError && /text must be a string/.test(e.message));
  const asked = ctl.relations(TEXT);
  const req = client.take('relations');
  assert.deepEqual(req.payload, { run: 0, text: TEXT });
  req.resolve({ ok: 1 });
  assert.deepEqual(await asked, { ok: 1 });
  ctl.dispose?.();
});

test('the head-scores CSV of an english snapshot carries its agreement and selection scores', async () => {
  const { result: snap } = await session.handle('snapshot', {});
  const s = snap.runs[0];
  const lines = scoresCSV(s).trim().split(/\r?\n/);
  const header = lines[0].split(',');
  assert.deepEqual(header.slice(-3), ['agreement', 'selection', 'enabled']);
  const heads = direct.headScores(256);
  lines.slice(1).forEach((line, i) => {
    const cells = line.split(',');
    assert.equal(Number(cells[header.indexOf('agreement')]), heads[i].agreement);
    assert.equal(Number(cells[header.indexOf('selection')]), heads[i].selection);
  });
});
