// The choosing-h trade-off: lab.headsTrial, and the table the page ships
// (web/lib/teach/choosing-h-table.js, written by scripts/choosing-h-table.mjs),
// recomputed from the module and checked against expectations that do not come from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { CHOOSING_H_TABLE as TABLE } from '../../web/lib/teach/choosing-h-table.js';
import { SETUP, summarise } from '../../web/lib/teach/choosing-h-measure.js';

const lab = await createHeadlab();
const byH = Object.fromEntries(TABLE.rows.map((r) => [r.numHeads, r]));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

test('headsTrial: shape of the result, deterministic, no handle left behind', async () => {
  const before = lab.liveHandleCount();
  const a = await lab.headsTrial({ numHeads: 8, steps: 50, evalExamples: 100 });
  const b = await lab.headsTrial({ numHeads: 8, steps: 50, evalExamples: 100 });
  assert.deepEqual(a, b);
  assert.equal(a.task, 'lookup');
  assert.equal(a.dModel, 16);
  assert.equal(a.dK, 2);
  assert.equal(a.relationAccuracy.length, 4);
  assert.equal(a.bestShare.length, 4);
  for (const s of a.bestShare) assert.ok(s >= 0 && s <= 1 + 1e-5, `share ${s}`);
  assert.equal(a.relationsWithOwnHead, a.bestShare.filter((s) => s >= 0.5).length);
  assert.equal(lab.liveHandleCount(), before);
});

test('the shipped table is what the module measures (seed 1 of every h, recomputed exactly)', { timeout: 300_000 }, async (t) => {
  assert.deepEqual({ task: TABLE.task, dModel: TABLE.dModel, heads: TABLE.heads, seeds: TABLE.seeds, steps: TABLE.steps,
    evalExamples: TABLE.evalExamples }, { ...SETUP }, 'the table was made with the setup the page describes');
  if (lab.info().flavour !== TABLE.flavour) t.skip(`the table comes from the ${TABLE.flavour} build`);
  for (const row of TABLE.rows) {
    const shipped = row.trials[0];
    const r = await lab.headsTrial({
      task: TABLE.task, dModel: TABLE.dModel, numHeads: row.numHeads, seed: shipped.seed, steps: TABLE.steps,
      evalExamples: TABLE.evalExamples,
    });
    assert.equal(r.accuracy, shipped.accuracy, `h = ${row.numHeads}: accuracy`);
    assert.equal(r.loss, shipped.loss, `h = ${row.numHeads}: loss`);
    assert.deepEqual(r.relationAccuracy, shipped.relationAccuracy, `h = ${row.numHeads}: per relation`);
    assert.equal(r.relationsWithOwnHead, shipped.relationsWithOwnHead, `h = ${row.numHeads}: own heads`);
  }
});

test('the table’s rows are the means of its trials', () => {
  for (const row of TABLE.rows) {
    assert.deepEqual(summarise(row.numHeads, row.trials), row);
    assert.equal(row.dK * row.numHeads, TABLE.dModel);
    assert.ok(Math.abs(row.lookupAccuracy - mean(row.trials.map((t) => t.relationAccuracy[0]))) < 1e-12);
  }
});

test('every h spends the same parameter budget: only the split changes', () => {
  const totals = TABLE.heads.map((numHeads) => lab.parameterCount({ dModel: TABLE.dModel, numHeads }).total);
  assert.deepEqual(new Set(totals).size, 1, `totals ${totals}`);
  assert.equal(totals[0], 4 * TABLE.dModel ** 2);  // the course: W^Q, W^K, W^V and W^O, d_model² each
});

test('the benefit of more heads: one softmax cannot give two relations a head of their own', () => {
  // A head's weights sum to 1, so at most one of four distinct positions gets half of them:
  // a trial can never count more relations with their own head than it has heads.
  for (const row of TABLE.rows) for (const t of row.trials) assert.ok(t.relationsWithOwnHead <= Math.min(row.numHeads, TABLE.numRelations));
  assert.ok(byH[1].relationsWithOwnHead <= 1);
  assert.ok(byH[4].relationsWithOwnHead >= TABLE.numRelations - 1, `h = 4: ${byH[4].relationsWithOwnHead}`);
  assert.ok(byH[1].accuracy < 0.5, `one head blends four relations: all four right ${byH[1].accuracy}`);
  assert.ok(byH[4].accuracy > 0.9, `one head per relation: ${byH[4].accuracy}`);
});

test('the cost of tiny d_k: with d_k = 1 positions are still found, the asked colour is not', () => {
  // q·k with d_k = 1 is a product of two numbers: it prefers the largest (or smallest) key,
  // never "the key like mine", so finding an item by content needs d_k of at least 2.
  const one = byH[16];
  assert.equal(one.dK, 1);
  assert.ok(one.positionAccuracy > 0.99, `positions at d_k = 1: ${one.positionAccuracy}`);
  assert.ok(one.lookupAccuracy < byH[4].lookupAccuracy - 0.2, `colour found at d_k = 1: ${one.lookupAccuracy}, at d_k = 4: ${byH[4].lookupAccuracy}`);
  for (const t of one.trials) assert.ok(t.relationsWithOwnHead < TABLE.numRelations, 'no d_k = 1 head finds the asked colour on its own');
});

test('neither extreme is free: a middle h beats both h = 1 and h = d_model', () => {
  const best = TABLE.rows.reduce((a, b) => (b.accuracy > a.accuracy ? b : a));
  assert.ok(best.numHeads > 1 && best.numHeads < TABLE.dModel, `best h = ${best.numHeads}`);
  assert.ok(best.accuracy > byH[1].accuracy + 0.3 && best.accuracy > byH[16].accuracy + 0.2);
  assert.ok(best.loss < byH[1].loss && best.loss < byH[16].loss);
});

test('the trade-off table of docs/training.md is the shipped one', async () => {
  const { readFile } = await import('node:fs/promises');
  const readme = await readFile(new URL('../../docs/training.md', import.meta.url), 'utf8');
  for (const r of TABLE.rows) {
    const line = `| ${r.numHeads} (${r.dK}) | ${r.relationsWithOwnHead.toFixed(2)} | ${(100 * r.lookupAccuracy).toFixed(1)}% | ${(100 * r.positionAccuracy).toFixed(1)}% | ${(100 * r.accuracy).toFixed(1)}% |`;
    assert.ok(readme.includes(line), `docs/training.md row for h = ${r.numHeads}: ${line}`);
  }
});
