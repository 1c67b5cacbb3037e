// The trained IOI model of tests/golden/findings/ioi-model/ (make_findings.py) as today's engine reads it:
// its tokenizer gives the ids make_findings.py encoded, and the logit difference (answer − wrong) at the last
// position agrees with the script's float64 forward within 1e-4 of the largest, for every stored case.
// The causal tools' tests (issue 35) will run patchHeads and directLogitAttribution on the same cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHeadlab } from '../../web/lib/headlab.js';

const dir = new URL('../golden/findings/ioi-model/', import.meta.url);
const read = (f) => readFileSync(new URL(f, dir));
const expected = JSON.parse(read('expected.json'));

test('the engine reads the IOI model; tokens and logit differences agree with make_findings.py', async () => {
  const lab = await createHeadlab();
  const bytes = read('model.safetensors');
  const model = await lab.loadPretrained({
    config: JSON.parse(read('config.json')),
    tokenizer: JSON.parse(read('tokenizer.json')),
    weights: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  });
  try {
    assert.deepEqual([model.info.numLayers, model.info.numHeads], [2, 4]);
    const largest = Math.max(...expected.cases.map((c) => Math.abs(c.metricClean)));
    let worst = 0;
    for (const c of expected.cases) {
      assert.deepEqual(Array.from(model.tokenize(c.clean).ids), c.ids, c.clean);
      assert.deepEqual(Array.from(model.tokenize(c.corrupted).ids), c.corruptedIds, c.corrupted);
      const { logits } = await model.run(c.ids);
      const diff = logits[c.answerId] - logits[c.wrongId];
      worst = Math.max(worst, Math.abs(diff - c.metricClean));
      assert.ok(Math.abs(diff - c.metricClean) <= 1e-4 * largest, `${c.clean}: ${diff} vs ${c.metricClean}`);
    }
    console.log(`# IOI model: logit difference max |HeadLab − float64| ${worst.toExponential(2)} (largest ${largest.toFixed(3)})`);
  } finally {
    model.dispose();
  }
});
