// The API alone (dist/lib/headlab.js, one ES module, and its .wasm files in dist/lib/gen/) served
// by a "CDN" on another origin with CORS, imported by a page and by a module Worker of that page
// as docs/install.md's "The API alone, as one file" example does: the worked example's numbers, and nothing
// fetched from the CDN but the module and the .wasm it needs (no elements, no KaTeX).
import { test, before, after } from 'node:test';
import http from 'node:http';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { DIST, ensureDist, launch, watch } from './helpers.mjs';
import { courseInputsSource, expected } from '../fixtures/course.mjs';

let cdn, site, browser;
const fromCdn = [];

// The example of docs/install.md (its inputs from tests/fixtures/course.json), with the CDN's address in
// place of https://cdn.example.org/headlab/.
const example = (base) => `import { createHeadlab } from '${base}lib/headlab.js';

const lab = await createHeadlab();
const r = lab.multiHeadAttention({ ...${courseInputsSource()}, returnWeights: true });
const result = { output: Array.from(r.output.slice(8, 12)), weights: Array.from(r.weights.slice(6, 9)), flavour: lab.info().flavour };
`;

before(async () => {
  await ensureDist();
  cdn = await serve({ port: 0, root: DIST, cors: true, onResponse: ({ url, status }) => fromCdn.push(`${status} ${url}`) });
  const base = cdn.url.replace('localhost', '127.0.0.1');
  const pages = {
    '/': '<!doctype html><meta charset="utf-8"><title>lesson</title><link rel="icon" href="data:,">' +
      `<script type="module">${example(base)}
const worker = new Worker('/worker.js', { type: 'module' });
const inWorker = await new Promise((resolve, reject) => { worker.onmessage = (e) => resolve(e.data); worker.onerror = (e) => reject(new Error(e.message)); });
window.result = { page: result, worker: inWorker };</script>`,
    '/worker.js': `${example(base)}postMessage(result);\n`,
  };
  site = http.createServer((req, res) => {
    const body = pages[req.url];
    res.writeHead(body ? 200 : 404, { 'Content-Type': req.url.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8' });
    res.end(body ?? '');
  });
  await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await cdn?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => (site ? site.close(resolve) : resolve()));
});

test('dist/lib/headlab.js imported from another origin runs the worked example in a page and in a Worker', { timeout: 60_000 }, async () => {
  const problems = [];
  const page = watch(await browser.newPage(), 'cdn', problems);
  await page.goto(`http://localhost:${site.address().port}/`);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
  const result = await page.evaluate(() => window.result);
  for (const [where, r] of Object.entries(result)) {
    expected.output.forEach((w, i) => assert.ok(Math.abs(r.output[i] - w) < 5e-5, `${where}: output[${i}] = ${r.output[i]}, want ${w}`));
    expected.weightsHead1.forEach((w, i) => assert.ok(Math.abs(r.weights[i] - w) < 5e-5, `${where}: weight ${i} = ${r.weights[i]}, want ${w}`));
    assert.equal(r.flavour, 'simd');
  }
  assert.deepEqual(problems, []);
  // The Worker may be answered 304 (cached by the page's requests).
  assert.deepEqual([...new Set(fromCdn.map((r) => r.replace(/^304 /, '200 ')))].sort(), ['200 /lib/gen/headlab_core.wasm', '200 /lib/headlab.js']);
  await page.close();
});
