// headsTrialInSlices (web/lib/teach/heads-trial-slices.js), the choosing-h trial the page runs in
// slices when no Worker can start, against lab.headsTrial (the same trial in one wasm call): the
// same numbers for one, four and sixteen heads, and the event loop reached between slices.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';
import { headsTrialInSlices } from '../../web/lib/teach/heads-trial-slices.js';

const lab = await createHeadlab();

for (const numHeads of [1, 4, 16]) {
  test(`h = ${numHeads}: the numbers of lab.headsTrial, stepped in slices`, async () => {
    const options = { task: 'lookup', dModel: 16, numHeads, seed: 2, steps: 300, evalExamples: 400 };
    const whole = await lab.headsTrial(options);
    let pauses = 0;
    const sliced = await headsTrialInSlices(lab, options, { sliceMs: 1, pause: async () => { pauses++; } });
    const pick = (r) => ({
      dK: r.dK, loss: r.loss, accuracy: r.accuracy, relationAccuracy: Array.from(r.relationAccuracy),
      bestShare: Array.from(r.bestShare), relationsWithOwnHead: r.relationsWithOwnHead, diverged: r.diverged,
    });
    assert.deepEqual(pick(sliced), pick(whole));
    assert.ok(pauses >= 2, `the event loop is reached between slices (${pauses} pauses)`);
  });
}

test('bad options are refused by the API, naming the argument', async () => {
  await assert.rejects(headsTrialInSlices(lab, { numHeads: 3, dModel: 16 }), /numHeads/);
  await assert.rejects(headsTrialInSlices(lab, { numHeads: 2, steps: -1 }), /steps must be a non-negative integer/);
});
