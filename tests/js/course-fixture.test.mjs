// The course-numbers fixture (tests/fixtures/course.json) is the one copy of the
// worked example every other test reads, so it is checked here against the
// course's own arithmetic: each printed number is the exact value, recomputed in
// double precision from the fixture's inputs, rounded to the course's 4 decimals.
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { course, expected } from '../fixtures/course.mjs';

const { dModel, numHeads, query, wQ, wK, wV, wO } = course.inputs;
const T = query.length / dModel, dK = wQ.length / dModel / numHeads, it = course.queryToken;

// x [dModel] times columns c0..c0+n-1 of w [dModel, width].
const project = (x, w, c0, n) => {
  const width = w.length / dModel;
  return Array.from({ length: n }, (_, c) => x.reduce((s, xm, m) => s + xm * w[m * width + c0 + c], 0));
};
const token = (t) => query.slice(t * dModel, (t + 1) * dModel);

// Head i of the worked example for embeddings x [T, dModel] (the course's by default).
function head(i, x = query) {
  const token = (t) => x.slice(t * dModel, (t + 1) * dModel);
  const q = project(token(it), wQ, i * dK, dK);
  const k = Array.from({ length: T }, (_, t) => project(token(t), wK, i * dK, dK));
  const v = Array.from({ length: T }, (_, t) => project(token(t), wV, i * dK, dK));
  const raw = k.map((kt) => kt.reduce((s, x, c) => s + x * q[c], 0));
  const scaled = raw.map((s) => s / Math.sqrt(dK));
  const exps = scaled.map(Math.exp);
  const sum = exps.reduce((a, b) => a + b, 0);
  const weights = exps.map((e) => e / sum);
  const out = Array.from({ length: dK }, (_, c) => weights.reduce((s, w, t) => s + w * v[t][c], 0));
  return { q, k: k.flat(), v: v.flat(), raw, scaled, sum, weights, out };
}

function assertPrinted(printed, exact, what) {
  const values = [].concat(printed), want = [].concat(exact);
  assert.equal(values.length, want.length, `${what}: length`);
  const half = 0.5 * 10 ** -course.decimals + 1e-12;
  values.forEach((p, i) => assert.ok(Math.abs(p - want[i]) <= half,
    `${what}[${i}]: the fixture says ${p}, the arithmetic gives ${want[i]}`));
}

test('every number of the course fixture is the worked example recomputed in double, to 4 decimals', () => {
  assert.deepEqual(course.tokens, ['ball', 'full', 'it']);
  const h1 = head(0), h2 = head(1);
  assertPrinted(expected.q1, h1.q, 'q1');
  assertPrinted(expected.k1, h1.k, 'K1');
  assertPrinted(expected.v1, h1.v, 'V1');
  assertPrinted(expected.rawScores1, h1.raw, 'raw scores, head 1');
  assertPrinted(expected.rawScores2, h2.raw, 'raw scores, head 2');
  assertPrinted(expected.scaledScores1, h1.scaled, 'scaled scores, head 1');
  assertPrinted(expected.expSum1, h1.sum, 'sum of exponentials, head 1');
  assertPrinted(expected.weightsHead1, h1.weights, 'weights, head 1');
  assertPrinted(expected.weightsHead2, h2.weights, 'weights, head 2');
  assertPrinted(expected.headOutput1, h1.out, 'head 1 output');
  assertPrinted(expected.headOutput2, h2.out, 'head 2 output');
  const concat = [...h1.out, ...h2.out];
  assertPrinted(expected.output, project(concat, wO, 0, dModel), 'output (W^O = I)');
});

test('the fixture holds the course inputs: the toy embeddings and the hand-built projections', () => {
  // x_ball = [3, 0, 0, 1], x_full = [0, 3, 0, 1], x_it = [1, 1, 0, 1]; W^O = I.
  assert.deepEqual([token(0), token(1), token(2)], [[3, 0, 0, 1], [0, 3, 0, 1], [1, 1, 0, 1]]);
  assert.deepEqual(wO, Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)));
  assert.equal(numHeads, 2);
  assert.equal(dK, 2);
});

test('the worked-example page\'s "what to try" figure is the arithmetic of the edit it describes', () => {
  // "change its first number from 1 to 2, and at step 7 head 1 leans harder on ball (0.7337 becomes X)"
  const page = readFileSync(new URL('../../web/demos/worked-example/index.html', import.meta.url), 'utf8');
  const m = /from 1 to 2,[^]*?\((\d\.\d{4}) becomes (\d\.\d{4})\)/.exec(page);
  assert.ok(m, 'the page states the weight on "ball" before and after the edit');
  const edited = [...query];
  edited[it * dModel] = 2;
  assertPrinted(Number(m[1]), head(0).weights[0], 'weight of ball, head 1, before the edit');
  assertPrinted(Number(m[2]), head(0, edited).weights[0], 'weight of ball, head 1, after the edit');
});
