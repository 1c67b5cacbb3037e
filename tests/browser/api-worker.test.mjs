// The JS API in headless Chromium, on the main thread and inside a module Worker,
// as shipped in dist/lib/ (npm run build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watch, useSite } from './helpers.mjs';
import { courseInputsSource, expected } from '../fixtures/course.mjs';

let page;
const problems = [];

const site = useSite({}, {
  setup: async () => {
    page = watch(await site.browser.newPage(), 'api', problems);
    await page.goto(site.server.url);
  },
});

// Runs the course's worked example with the API and returns what a caller sees.
const WORKED_EXAMPLE = `
  const r = lab.multiHeadAttention({ ...${courseInputsSource()}, returnWeights: true });
  let error = null;
  try { lab.multiHeadAttention({ query: new Float32Array(3), dModel: 4, numHeads: 2 }); }
  catch (e) { error = e.constructor.name + ': ' + e.message; }
  const result = { output: Array.from(r.output.slice(8)), weightsIt: Array.from(r.weights.slice(6, 9)),
    error, simd: lab.info().simd };
`;

function checkResult(r) {
  const want = expected.output;
  r.output.forEach((x, i) => assert.ok(Math.abs(x - want[i]) < 5e-5, `output[${i}] = ${x}, want ${want[i]}`));
  expected.weightsHead1.forEach((w, i) => assert.ok(Math.abs(r.weightsIt[i] - w) < 5e-5, `weight ${i}`));
  assert.match(r.error, /^RangeError: .*query/);
  assert.equal(r.simd, true);
}

test('the module runs on the main thread of a page', async () => {
  const r = await page.evaluate(async (body) => {
    const { createHeadlab } = await import('/lib/headlab.js');
    const lab = await createHeadlab();
    return new Function('lab', `${body}; return result;`)(lab);
  }, WORKED_EXAMPLE);
  checkResult(r);
});

test('the module runs inside a module Worker', async () => {
  const r = await page.evaluate((body) => new Promise((resolve, reject) => {
    const src = `import { createHeadlab } from '${location.origin}/lib/headlab.js';
      const lab = await createHeadlab();
      ${body}
      postMessage(result);`;
    const worker = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })), { type: 'module' });
    worker.onmessage = (e) => { resolve(e.data); worker.terminate(); };
    worker.onerror = (e) => reject(new Error(e.message || 'worker error'));
  }), WORKED_EXAMPLE);
  checkResult(r);
});

test('no console errors, page errors or failed requests', () => {
  assert.deepEqual(problems, []);
});
