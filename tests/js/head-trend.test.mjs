// The numbers <headlab-language-model> shows beside each head's label (web/lib/teach/head-trend.js)
// and the plateau and drop it shades (lm-controller.js's phaseSpans), against values worked out by
// hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { taskScoreKey, scoreTrend, ScoreHistory, rowPeak, TREND_WINDOW } from '../../web/lib/teach/head-trend.js';
import { phaseSpans } from '../../web/lib/teach/lm-controller.js';

test('the task score: previous token below the top layer, induction in it; coreference for cricket', () => {
  assert.equal(taskScoreKey('induction', 2, 0), 'previousToken');
  assert.equal(taskScoreKey('induction', 2, 1), 'induction');
  assert.equal(taskScoreKey('induction', 1, 0), 'induction');
  assert.equal(taskScoreKey('induction', 3, 1), 'previousToken');
  assert.equal(taskScoreKey('cricket', 2, 0), 'coreference');
});

test('a trend compares the latest score with the one TREND_WINDOW steps back', () => {
  assert.equal(TREND_WINDOW, 300);
  assert.equal(scoreTrend([{ step: 0, value: 0.1 }]), null);
  // Steps 0..1000 by 100, value = step / 2000: the window [700, 1000] goes 0.35 → 0.5.
  const pts = Array.from({ length: 11 }, (_, k) => ({ step: k * 100, value: k * 100 / 2000 }));
  const t = scoreTrend(pts);
  assert.equal(t.from, 0.35);
  assert.equal(t.to, 0.5);
  assert.ok(Math.abs(t.change - 0.15) < 1e-12);
  assert.equal(t.direction, 'rising');
  assert.equal(t.arrow, '↑');
  // The sparkline keeps the whole history (11 values, under 24).
  assert.deepEqual(t.points, pts.map((p) => p.value));
  // Falling by 0.1 over the window; steady within 0.03.
  assert.equal(scoreTrend([{ step: 0, value: 0.5 }, { step: 200, value: 0.4 }]).direction, 'falling');
  assert.equal(scoreTrend([{ step: 0, value: 0.5 }, { step: 200, value: 0.52 }]).direction, 'steady');
  // Shorter than the window: from the oldest record; non-finite values are skipped.
  const s = scoreTrend([{ step: 0, value: NaN }, { step: 40, value: 0.2 }, { step: 80, value: 0.3 }]);
  assert.equal(s.from, 0.2);
  assert.equal(s.to, 0.3);
});

test('a sparkline keeps at most 24 points, the latest always', () => {
  // 100 values, every 5th kept counting back from the last: 99, 94, …, 4 (20 values).
  const pts = Array.from({ length: 100 }, (_, k) => ({ step: k * 100, value: k }));
  const t = scoreTrend(pts);
  assert.deepEqual(t.points, Array.from({ length: 20 }, (_, k) => 4 + 5 * k));
  assert.equal(t.from, 96);  // the arrow still looks back 300 steps only
});

test('ScoreHistory: one record per step, the task score of each head, a new model starts over', () => {
  const snap = (step, prev, ind) => ({ step, scores: [
    { layer: 0, head: 0, previousToken: prev, induction: 0.1 }, { layer: 0, head: 1, previousToken: 0.1, induction: 0.1 },
    { layer: 1, head: 0, previousToken: 0.1, induction: ind }, { layer: 1, head: 1, previousToken: 0.1, induction: 0.1 }] });
  const h = new ScoreHistory({ task: 'induction', layers: 2, heads: 2 });
  h.add(snap(0, 0.15, 0.08));
  h.add(snap(100, 0.2, 0.1));
  h.add(snap(100, 0.25, 0.2));  // the same step again (a paused snapshot): replaces
  assert.equal(h.records.length, 2);
  const l1 = h.trend(0, 0), l2 = h.trend(1, 0);
  assert.equal(l1.key, 'previousToken');
  assert.equal(l1.trend.from, 0.15);
  assert.equal(l1.trend.to, 0.25);
  assert.equal(l2.key, 'induction');
  assert.equal(l2.trend.to, 0.2);
  assert.equal(h.trend(0, 1).trend.direction, 'steady');
  h.add(snap(50, 0.3, 0.3));  // back in steps: a new model
  assert.equal(h.records.length, 1);
  assert.equal(h.trend(0, 0).trend, null);
});

test('rowPeak reads the key with the most weight from a query row (hand-made attention)', () => {
  // One layer, two heads, T = 4: tokens <s> the ball it. Head 1's row of "it" (q = 3): [0.1, 0.6, 0.2, 0.1].
  const T = 4;
  const weights = new Float32Array(2 * T * T);
  weights.set([0.1, 0.6, 0.2, 0.1], (1 * T + 3) * T);
  weights.set([0.7, 0.1, 0.1, 0.1], (0 * T + 3) * T);
  const s = { tokens: ['<s>', 'the', 'ball', 'it'], weights, shape: [1, 2, T] };
  const p = rowPeak(s, 1, 'it');
  assert.equal(p.key, 'the');
  assert.equal(p.keyIndex, 1);
  assert.ok(Math.abs(p.weight - 0.6) < 1e-7);
  // Head 0 rests on <s>: the start token counts as a key too.
  assert.equal(rowPeak(s, 0, 'it').key, '<s>');
  assert.equal(rowPeak(s, 0, 'was'), null);
});

test('phaseSpans: plateau until accuracy reaches 0.25, drop until 0.75', () => {
  const h = [0, 100, 200, 300, 400, 500].map((step, k) => ({ step, accuracy: [0.03, 0.1, 0.2, 0.4, 0.8, 0.9][k] }));
  assert.deepEqual(phaseSpans(h), { plateau: [0, 200], drop: [200, 400] });
  // Still climbing: the drop runs to the last point.
  assert.deepEqual(phaseSpans(h.slice(0, 4)), { plateau: [0, 200], drop: [200, 300] });
  // Not yet off the plateau.
  assert.deepEqual(phaseSpans(h.slice(0, 3)), { plateau: [0, 200], drop: null });
  // Already above it at the first point (a trained model): nothing to shade.
  assert.deepEqual(phaseSpans([{ step: 3000, accuracy: 0.99 }, { step: 3100, accuracy: 0.99 }]), { plateau: null, drop: null });
});
