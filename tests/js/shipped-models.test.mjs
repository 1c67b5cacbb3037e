// The language models the site ships (web/models/, written by `npm run train:models`) are what
// training gives, not hand-made files: one is retrained here from its manifest entry, with the same
// seed through the same public API, and must come out byte for byte the same, scoring what the
// manifest says. Every shipped file must load and score its manifest's numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { SHIPPED, trainShipped } from '../../tools/shipped-models.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(repo, 'web/models');
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'models.json'), 'utf8'));
const lab = await createHeadlab({ flavour: 'simd' });

const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-3, `${what}: ${a} vs the manifest's ${b}`);

test('every shipped model is in the manifest and in tools/shipped-models.mjs, loads, and scores what the manifest says', async () => {
  assert.deepEqual(manifest.models.map((m) => m.file), SHIPPED.map((s) => s.file));
  for (const m of manifest.models) {
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, m.file)));
    assert.equal(bytes.length, m.bytes, m.file);
    const model = await lab.loadLanguageModel(bytes);
    try {
      assert.equal(model.steps, m.steps, `${m.file}: steps`);
      const e = model.evaluate(1000);
      close(e.accuracy, m.evaluation.accuracy, `${m.file}: accuracy`);
      const heads = model.headScores(500);
      for (const [i, h] of heads.entries()) {
        assert.equal(h.label, m.heads[i].label, `${m.file}: label of layer ${h.layer + 1} head ${h.head + 1}`);
        close(h.induction, m.heads[i].induction, `${m.file}: induction score of layer ${h.layer + 1} head ${h.head + 1}`);
        close(h.previousToken, m.heads[i].previousToken, `${m.file}: previous-token score of layer ${h.layer + 1} head ${h.head + 1}`);
      }
    } finally {
      model.dispose();
    }
  }
});

test('the shipped cricket model is what training it again gives, byte for byte', { timeout: 120_000 }, async () => {
  const entry = SHIPPED.find((s) => s.file === 'cricket.hlm');
  const retrained = await trainShipped(lab, entry);
  const shipped = new Uint8Array(fs.readFileSync(path.join(dir, entry.file)));
  assert.equal(retrained.bytes.length, shipped.length);
  assert.ok(Buffer.from(retrained.bytes).equals(Buffer.from(shipped)), 'the retrained bytes equal the shipped file');
  const m = manifest.models.find((x) => x.file === entry.file);
  assert.deepEqual(retrained.heads.map((h) => h.label), m.heads.map((h) => h.label));
});
