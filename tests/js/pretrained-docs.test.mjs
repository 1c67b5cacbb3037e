// docs/pretrained.md's Node example runs as printed (with `headlab` resolved to this checkout)
// and prints what the API computes: the same numbers as calling it here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { COURSE, fixtureObjects } from './pretrained-helpers.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test("docs/pretrained.md's Node example runs and prints the model's answers", async () => {
  const doc = readFileSync(path.join(repo, 'docs/pretrained.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## A Node example'));
  const block = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.includes("from 'headlab'"), 'the example imports headlab');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'headlab-pretrained-doc-'));
  try {
    const file = path.join(dir, 'example.mjs');
    const entry = new URL('../../web/lib/headlab.node.js', import.meta.url).href;
    writeFileSync(file, block.replace("from 'headlab'", `from '${entry}'`));
    const out = execFileSync(process.execPath, [file], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
    const lab = await createHeadlab();
    const model = await lab.loadPretrained(fixtureObjects('gpt2-f32'));
    try {
      assert.equal(out[0], `GPT2LMHeadModel ${model.info.parameters} parameters`);
      const { tokens } = model.tokenize(COURSE);
      assert.equal(out[1], `${tokens.length} tokens: ${tokens.join('|')}`);
      const fmt = (r) => r.next.map((n) => `${n.token} ${n.probability.toFixed(3)}`).join(', ');
      assert.equal(out[2], `next: ${fmt(await model.run(COURSE, { topK: 3 }))}`);
      assert.equal(out[3], `with layer 1 head 2 off: ${fmt(await model.run(COURSE, { topK: 3, ablate: [{ layer: 1, head: 2 }] }))}`);
      assert.notEqual(out[2].slice(6), out[3].slice(25), 'switching the head off changes the prediction');
      const { scores } = await model.headScores({ length: 10 });
      const best = scores.reduce((a, b) => (b.previousToken > a.previousToken ? b : a));
      assert.equal(out[4], `most previous-token-like head: layer ${best.layer} head ${best.head} (${best.previousToken.toFixed(3)})`);
    } finally {
      model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
