// Head importance by ablation (web/lib/teach/head-importance.js, issue 33 point 3) on a GPT-2 trained
// by PyTorch to copy repeated letters (tests/golden/induction/make_induction.py): its induction heads
// share the job. Each head's and the group's loss change must match PyTorch's own (expected.json),
// the ranking must name the induction group as redundant, and the controller and in-process session
// must give the same answer to the element. A second GPT-2 (make_copier.py) copies with one head that
// no detector labels (issue 33, point 7): the ranking must put it first and name it as unlabelled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { headImportance, labelOf, meanLoss } from '../../web/lib/teach/head-importance.js';
import { ExplorerController } from '../../web/lib/teach/explorer-controller.js';
import { ExplorerSession } from '../../web/lib/teach/explorer-session.js';

const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../golden/induction');
const DIR = path.join(GOLDEN, 'gpt2-induction');
const COPIER = path.join(GOLDEN, 'gpt2-copier');
const expected = JSON.parse(readFileSync(path.join(DIR, 'expected.json'), 'utf8'));
const copier = JSON.parse(readFileSync(path.join(COPIER, 'expected.json'), 'utf8'));
const source = (dir = DIR) => ({
  config: JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')),
  tokenizer: JSON.parse(readFileSync(path.join(dir, 'tokenizer.json'), 'utf8')),
  weights: (({ buffer, byteOffset, byteLength }) => buffer.slice(byteOffset, byteOffset + byteLength))(readFileSync(path.join(dir, 'model.safetensors'))),
});
const lab = await createHeadlab();

/** PyTorch's detector scores on its own letters sequence (n = 12: the repeat length these heads know by position). */
const referenceScores = () => Object.keys(expected.induction).map((k) => {
  const [layer, head] = k.split('.').map(Number);
  return { layer, head, induction: expected.induction[k], previousToken: expected.previousToken[k], duplicateToken: 0, firstToken: 0 };
});
const TOL = 2e-3;

test('meanLoss is the mean −log p of each next token (checked on a 2-token case by hand)', () => {
  // logits [2, 3]: row 0 softmax of (0, ln 3, 0) gives p(1) = 3/5.
  const loss = meanLoss(Float32Array.of(0, Math.log(3), 0, 9, 9, 9), [0, 1], 3);
  assert.ok(Math.abs(loss - -Math.log(3 / 5)) < 1e-6, String(loss));
});

test('each head\'s and the induction group\'s loss change agree with PyTorch; the group is named redundant', async () => {
  const model = await lab.loadPretrained(source());
  try {
    // Labels from PyTorch's own detector scores (on its letters sequence), so the groups are the reference's.
    const scores = referenceScores();
    const imp = await headImportance(model, expected.ids, { scores });
    assert.deepEqual(imp.ids, expected.ids);
    assert.ok(Math.abs(imp.loss - expected.loss) <= TOL, `loss ${imp.loss} vs ${expected.loss}`);
    let worst = 0;
    for (const h of imp.heads) {
      const ref = expected.lossChange[`${h.layer}.${h.head}`];
      worst = Math.max(worst, Math.abs(h.lossChange - ref));
      assert.ok(Math.abs(h.lossChange - ref) <= TOL + 1e-3 * Math.abs(ref), `head ${h.layer}.${h.head}: ${h.lossChange} vs ${ref}`);
    }
    const induction = imp.groups.find((g) => g.label === 'induction');
    assert.ok(induction, `an induction group: ${JSON.stringify(imp.groups.map((g) => g.label))}`);
    assert.deepEqual(induction.heads.map((h) => [h.layer, h.head]), expected.inductionHeads);
    assert.ok(Math.abs(induction.lossChange - expected.groupLossChange) <= TOL + 1e-3 * expected.groupLossChange, `${induction.lossChange} vs ${expected.groupLossChange}`);
    assert.equal(induction.redundant, true, `group ${induction.lossChange}, largest alone ${induction.largestAlone}`);
    console.log(`loss ${imp.loss.toFixed(4)}; induction group off +${induction.lossChange.toFixed(3)}, largest single +${induction.largestAlone.toFixed(3)}; ` +
      `largest difference from PyTorch ${worst.toExponential(2)}`);
  } finally {
    model.dispose();
  }
});

/** An explorer controller over an in-process session that loads the checkpoint in `dir`. */
function controllerFor(dir) {
  return new ExplorerController({
    createClient: (onEvent) => {
      const session = new ExplorerSession(lab, onEvent, { loadPretrained: () => lab.loadPretrained(source(dir)) });
      const request = (type, payload) => session.handle(type, payload).then((r) => r.result);
      return { dead: false, request, dispose() { session.dispose(); } };
    },
    readShipped: async () => { throw new Error('not used'); },
    emit: () => {},
  });
}

test('the controller ranks through its session and switches the whole group off', async () => {
  const c = controllerFor(DIR);
  await c.load({ kind: 'hub', id: 'x/induction' }, { text: expected.text });
  // The explorer's own scores use n = 15 random tokens, where heads that copy by a 12-token offset do
  // not show: the labels here are the reference's.
  c.scores = { ...c.scores, scores: referenceScores() };
  await c.computeImportance();
  assert.equal(c.state, 'ready');
  assert.equal(c.importance.text, expected.text);
  const group = c.importance.groups.find((g) => g.label === 'induction');
  assert.equal(group?.redundant, true);
  await c.setHeadsEnabled(group.heads, false);
  assert.deepEqual(c.ablate.map((a) => [a.layer, a.head]), expected.inductionHeads);
  assert.notEqual(c.results.next[0].token, c.results.baseline[0].token, 'with the group off the copy is gone');
  c.dispose();
});

test('a head that copies without the induction shape: ranked first by its cost, as PyTorch says, and named as unlabelled', async () => {
  const c = controllerFor(COPIER);
  await c.load({ kind: 'hub', id: 'x/copier' }, { text: copier.text });
  // The explorer's own detector (a repeat of 15 random tokens): no head is induction-shaped, none is labelled.
  const scores = c.scores.scores;
  assert.equal(scores.length, 4);
  for (const s of scores) {
    assert.ok(s.induction < 0.2, `head ${s.layer}.${s.head}: induction ${s.induction}`);
    assert.equal(labelOf(s), null, `head ${s.layer}.${s.head} is labelled ${labelOf(s)}`);
  }
  await c.computeImportance();
  assert.equal(c.state, 'ready');
  const imp = c.importance;
  assert.deepEqual(imp.ids, copier.ids, 'the text is the sequence PyTorch scored');
  assert.ok(Math.abs(imp.loss - copier.loss) <= TOL, `loss ${imp.loss} vs ${copier.loss}`);
  for (const h of imp.heads) {
    const ref = copier.lossChange[`${h.layer}.${h.head}`];
    assert.ok(Math.abs(h.lossChange - ref) <= TOL + 1e-3 * Math.abs(ref), `head ${h.layer}.${h.head}: ${h.lossChange} vs ${ref}`);
  }
  // PyTorch's carrier first, every other head far behind it.
  assert.deepEqual([imp.heads[0].layer, imp.heads[0].head], copier.carrier);
  assert.ok(imp.heads[0].lossChange > 1 && imp.heads[1].lossChange < 0.1, JSON.stringify(imp.heads.map((h) => h.lossChange)));
  // It matters and no detector labels it: the element says so in words (unlabelled), with its induction score.
  assert.deepEqual(imp.unlabelled.map((h) => [h.layer, h.head]), [copier.carrier]);
  const carrierScore = scores.find((s) => s.layer === copier.carrier[0] && s.head === copier.carrier[1]);
  assert.equal(imp.unlabelled[0].induction, carrierScore.induction);
  assert.deepEqual(imp.groups, [], 'no label is shared');
  // Off, the copy is gone from the prediction after the repeat's first letter.
  await c.setHeadsEnabled([{ layer: copier.carrier[0], head: copier.carrier[1] }], false);
  assert.notEqual(c.results.next[0].token, c.results.baseline[0].token);
  console.log(`copier: loss ${imp.loss.toFixed(4)}; layer ${copier.carrier[0]} head ${copier.carrier[1]} off +${imp.heads[0].lossChange.toFixed(3)} ` +
    `(PyTorch +${copier.lossChange[copier.carrier.join('.')].toFixed(3)}), its induction score ${carrierScore.induction.toFixed(3)}`);
  c.dispose();
});

test('unlabelled lists only heads that were scored: without scores no head is called unlabelled', async () => {
  const model = await lab.loadPretrained(source(COPIER));
  try {
    const imp = await headImportance(model, copier.ids);
    assert.deepEqual(imp.unlabelled, []);
    assert.equal(imp.heads[0].matters, true);
    assert.ok(Number.isNaN(imp.heads[0].induction));
  } finally {
    model.dispose();
  }
});
