// Head importance by ablation (web/lib/teach/head-importance.js, issue 33 point 3) on a GPT-2 trained
// by PyTorch to copy repeated letters (tests/golden/induction/make_induction.py): its induction heads
// share the job. Each head's and the group's loss change must match PyTorch's own (expected.json),
// the ranking must name the induction group as redundant, and the controller and in-process session
// must give the same answer to the element.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { headImportance, meanLoss } from '../../web/lib/teach/head-importance.js';
import { ExplorerController } from '../../web/lib/teach/explorer-controller.js';
import { ExplorerSession } from '../../web/lib/teach/explorer-session.js';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../golden/induction/gpt2-induction');
const expected = JSON.parse(readFileSync(path.join(DIR, 'expected.json'), 'utf8'));
const source = () => ({
  config: JSON.parse(readFileSync(path.join(DIR, 'config.json'), 'utf8')),
  tokenizer: JSON.parse(readFileSync(path.join(DIR, 'tokenizer.json'), 'utf8')),
  weights: (({ buffer, byteOffset, byteLength }) => buffer.slice(byteOffset, byteOffset + byteLength))(readFileSync(path.join(DIR, 'model.safetensors'))),
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

test('the controller ranks through its session and switches the whole group off', async () => {
  const c = new ExplorerController({
    createClient: (onEvent) => {
      const session = new ExplorerSession(lab, onEvent, { loadPretrained: () => lab.loadPretrained(source()) });
      const request = (type, payload) => session.handle(type, payload).then((r) => r.result);
      return { dead: false, request, dispose() { session.dispose(); } };
    },
    readShipped: async () => { throw new Error('not used'); },
    emit: () => {},
  });
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
