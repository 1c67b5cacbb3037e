// Model files and divergence through the public API: damaged files are refused
// with a message (never load into NaN), version-1 files still load under the
// parameter bound, and training that diverges throws a RangeError and keeps its
// last finite state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHeadlab } from '../../web/lib/headlab.js';

const lab = await createHeadlab();

/** Seeded uniform numbers in [0, 1) (mulberry32). */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function trainedModel() {
  const t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, seed: 7 });
  try {
    t.step(600);
    return t.save();
  } finally {
    t.dispose();
  }
}

/** The same model as a version-1 file: version 1, without the CRC-32 at the end. */
function toVersion1(bytes) {
  const v1 = bytes.slice(0, bytes.length - 4);
  new DataView(v1.buffer).setUint32(4, 1, true);
  return v1;
}

// What a refusal must say: that the file is damaged, or that it is no HeadLab model file at all.
const CLEAR = /^loadTrainer: bytes: load: (the file is damaged \(checksum mismatch.*\) — save it again or download it again|not a HeadLab file \(magic 'HLAB' missing\)|unsupported version \d+ \(expected 1 or 2\)|truncated header)$/s;

test('2,000 damaged copies of a saved model: each is refused with a clear message, or is unchanged and evaluates finite', async (t) => {
  const saved = await trainedModel();
  const rand = random(20261201);
  const counts = { copies: 0, truncated: 0, refused: 0, damaged: 0, otherRefusal: 0, unchangedLoaded: 0 };
  for (let i = 0; i < 2000; i++) {
    let bytes = saved.slice();
    const changes = 1 + Math.floor(rand() * 8);
    for (let k = 0; k < changes; k++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
    if (rand() < 0.1) {
      bytes = bytes.slice(0, Math.floor(rand() * bytes.length));
      counts.truncated += 1;
    }
    const changed = bytes.length !== saved.length || bytes.some((b, k) => b !== saved[k]);
    counts.copies += 1;
    let trainer;
    try {
      trainer = await lab.loadTrainer(bytes);
    } catch (e) {
      assert.ok(e instanceof RangeError, `copy ${i}: ${e?.constructor?.name}: ${e?.message}`);
      assert.match(e.message, CLEAR, `copy ${i}`);
      counts.refused += 1;
      if (e.message.includes('damaged')) counts.damaged += 1;
      else counts.otherRefusal += 1;
      continue;
    }
    try {
      assert.ok(!changed, `copy ${i}: a changed file loaded (${changes} bytes set${bytes.length < saved.length ? `, cut to ${bytes.length}` : ''})`);
      const loss = trainer.evaluate().loss;
      assert.ok(Number.isFinite(loss), `copy ${i}: loss ${loss}`);
      counts.unchangedLoaded += 1;
    } finally {
      trainer.dispose();
    }
  }
  t.diagnostic(`damaged copies: ${JSON.stringify(counts)}`);
  assert.equal(counts.refused + counts.unchangedLoaded, 2000);
  assert.ok(counts.refused >= 1900, `refused ${counts.refused}`);
  assert.equal(lab.liveHandleCount(), 0);
});

test('version-1 files still load; a weight of 3e38 in one is refused by the bound, naming the parameter', async () => {
  const saved = await trainedModel();
  const v1 = toVersion1(saved);
  const t = await lab.loadTrainer(v1);
  try {
    assert.equal(t.config().step, 600);
    assert.ok(Number.isFinite(t.evaluate().loss));
    assert.deepEqual(t.save(), saved, 'saved again as version 2');
  } finally {
    t.dispose();
  }
  const huge = v1.slice();
  new DataView(huge.buffer).setFloat32(huge.length - 4 * 5, 3e38, true);
  await assert.rejects(lab.loadTrainer(huge), (e) => e instanceof RangeError && /parameter \d+ is 3e\+38, beyond the ±1e4/.test(e.message) || assert.fail(e.message));
});

test('sgd at learningRate 10 diverges: step() throws a RangeError naming the step and the rate; the kept state works', async (t) => {
  const trainer = await lab.createTrainer({ learningRate: 10, optimizer: 'sgd', seed: 1 });
  try {
    let error = null;
    let last = 0;
    for (let i = 0; i < 2000 && !error; i++) {
      try {
        const r = trainer.step(1);
        assert.ok(Number.isFinite(r.loss), `step ${r.step}: loss ${r.loss}`);
        last = r.step;
      } catch (e) {
        error = e;
      }
    }
    assert.ok(error, 'training diverged within 2000 steps');
    t.diagnostic(error.message);
    assert.ok(error instanceof RangeError);
    const at = last + 1;
    const d = trainer.divergence();
    assert.deepEqual({ step: d.step, learningRate: d.learningRate, optimizer: d.optimizer }, { step: at, learningRate: 10, optimizer: 'sgd' });
    const what = { loss: 'the loss became non-finite', update: 'the update would have made a parameter non-finite or larger than 1e4 in magnitude' }[d.reason];
    assert.equal(error.message, `Trainer.step: training diverged at step ${at} with learningRate 10 (sgd): ${what}; ` +
      `the trainer kept its state from step ${last} — lower learningRate`);
    assert.equal(`Trainer.step: ${d.message}`, error.message);
    // The kept state: step count, finite evaluation, a file that loads.
    assert.equal(trainer.config().step, last);
    const ev = trainer.evaluate(1000);
    assert.ok(Number.isFinite(ev.loss), `evaluate loss ${ev.loss}`);
    assert.ok(trainer.headMetrics(64).every((m) => Number.isFinite(m.entropy)));
    const copy = await lab.loadTrainer(trainer.save());
    try {
      assert.equal(copy.evaluate(1000).loss, ev.loss);
    } finally {
      copy.dispose();
    }
    // Later steps throw the same error and change nothing.
    assert.throws(() => trainer.step(5), (e) => e instanceof RangeError && e.message === error.message);
    assert.equal(trainer.config().step, last);
    // Many steps at once stop at the same step.
    const again = await lab.createTrainer({ learningRate: 10, optimizer: 'sgd', seed: 1 });
    assert.throws(() => again.step(1000), (e) => e.message === error.message);
    again.dispose();
  } finally {
    trainer.dispose();
  }
  assert.equal(lab.liveHandleCount(), 0);
});

test('a trainer that trains normally never reports divergence', async () => {
  const t = await lab.createTrainer({ seed: 2 });
  try {
    assert.equal(t.step(200).step, 200);
    assert.equal(t.divergence(), null);
  } finally {
    t.dispose();
  }
});
