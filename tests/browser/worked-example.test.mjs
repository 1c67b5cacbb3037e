// Browser test of the landing page and the worked-example demo (<headlab-worked-example>)
// in headless Chromium, against the built site in dist/.
// Run: node --test tests/browser/
// Screenshots go to tests/browser/screenshots/ (git-ignored).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { DIST, SCREENSHOTS as SHOT_DIR, ensureScreenshotDir, watch, useSite } from './helpers.mjs';
import { eventually, expectText, expectCount, expectVisible } from './expect.mjs';
import { course, expected as courseNumbers } from '../fixtures/course.mjs';

const SCREENSHOTS = `${SHOT_DIR}/`;
const TIMEOUT = 60_000;
const DEMO = 'demos/worked-example/index.html';

/** Everything that went wrong in any page: console errors, page errors, failed or 4xx/5xx requests. */
const problems = [];

async function newPage(label, width = 1280, height = 900) {
  const page = await site.browser.newPage({ viewport: { width, height } });
  return watch(page, label, problems);
}

function assertNoProblems() {
  assert.deepEqual(problems, [], `problems in the browser:\n${problems.join('\n')}`);
}

/** Opens the demo with every step shown (state in the URL: #worked.step=all), so every cell is visible. */
async function openDemo(page, base = site.server.url) {
  await page.goto(new URL(`${DEMO}#worked.step=all`, base).href);
  await page.waitForSelector('headlab-worked-example[data-state="ready"]', { timeout: 20_000 });
  await page.waitForFunction(() => {
    const cells = document.querySelector('headlab-worked-example').shadowRoot.querySelectorAll('[data-testid="output"] td');
    return cells.length === 4 && [...cells].every((td) => /\d/.test(td.textContent));
  }, null, { timeout: 10_000 });
}

/** The numbers shown in the cells of `[data-testid=testid]`, parsed. */
async function numbers(page, testid) {
  const texts = await page.locator(`[data-testid="${testid}"] td.num`).allTextContents();
  return texts.map((t) => Number(t.trim()));
}

function assertClose(actual, expected, what, tol = 1e-4 + 1e-9) {
  assert.equal(actual.length, expected.length, `${what}: ${actual.length} values, expected ${expected.length}`);
  actual.forEach((a, i) => {
    assert.ok(Number.isFinite(a) && Math.abs(a - expected[i]) <= tol,
      `${what}[${i}] = ${a}, expected ${expected[i]} (±${tol}); all: [${actual.join(', ')}]`);
  });
}

// An independent float64 reference: softmax(QK^T/sqrt(dk))V per head, concat, times wO.
// The course's inputs (tests/fixtures/course.json) as nested arrays: x [T][dModel],
// wq [head][dModel][dK] (W_K = W_Q), wv [dModel][dV] (shared by both heads), wo.
const rows = (flat, width) => Array.from({ length: flat.length / width }, (_, r) => flat.slice(r * width, (r + 1) * width));
const COURSE = (() => {
  const { dModel, numHeads, query, wQ, wV, wO } = course.inputs;
  const dK = wQ.length / dModel / numHeads;
  return {
    x: rows(query, dModel),
    wq: Array.from({ length: numHeads }, (_, h) => rows(wQ, numHeads * dK).map((r) => r.slice(h * dK, (h + 1) * dK))),
    wv: rows(wV, numHeads * dK).map((r) => r.slice(0, dK)),
    wo: rows(wO, dModel),
  };
})();
const matmul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, v, k) => s + v * b[k][j], 0)));
function reference(x, { wq, wv, wo } = COURSE) {
  const weights = [];
  const heads = [];
  for (let h = 0; h < wq.length; h++) {
    const q = matmul(x, wq[h]);
    const k = matmul(x, wq[h]);  // W_K = W_Q in the course's example
    const v = matmul(x, wv);
    const w = q.map((qi) => {
      const s = k.map((kj) => qi.reduce((acc, val, d) => acc + val * kj[d], 0) / Math.sqrt(qi.length));
      const m = Math.max(...s);
      const e = s.map((z) => Math.exp(z - m));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((z) => z / sum);
    });
    weights.push(w);
    heads.push(matmul(w, v));
  }
  const concat = x.map((_, t) => heads.flatMap((head) => head[t]));
  return { weights, heads, concat, output: matmul(concat, wo) };
}

const site = useSite({}, {
  setup: async () => {
    ensureScreenshotDir();
  },
});

test('the reference reproduces the course numbers (sanity check of the test itself)', () => {
  const r = reference(COURSE.x);
  assertClose(r.weights[0][2], courseNumbers.weightsHead1, 'reference head 1');
  assertClose(r.output[2], courseNumbers.output, 'reference output');
});

test('landing page loads and links to the worked example', { timeout: TIMEOUT }, async () => {
  const page = await newPage('landing');
  const response = await page.goto(site.server.url);
  assert.equal(response.status(), 200);
  assert.equal(await page.title(), 'HeadLab');
  assert.equal(await page.locator('h1').textContent(), 'HeadLab');
  assert.equal(await page.locator('noscript').count(), 1, 'landing page has a <noscript> note');
  // index.html in the link, so that it also works opened from file:// (no directory index there).
  const link = page.locator('a[href="demos/worked-example/index.html"]');
  assert.equal(await link.count(), 1, 'one link to demos/worked-example/index.html');
  await link.click();
  await page.waitForURL(/\/demos\/worked-example\/index\.html$/);
  await page.waitForSelector('headlab-worked-example[data-state="ready"]', { timeout: 20_000 });
  assert.match(await page.locator('h1').textContent(), /Worked example/);
  await page.close();
  assertNoProblems();
});

test('worked example shows the course numbers for "it"', { timeout: TIMEOUT }, async () => {
  const page = await newPage('course numbers');
  await openDemo(page);
  const expected = reference(COURSE.x);
  assertClose(await numbers(page, 'weights-head-1'), courseNumbers.weightsHead1, 'weights head 1 (it)');
  assertClose(await numbers(page, 'weights-head-2'), courseNumbers.weightsHead2, 'weights head 2 (it)');
  assertClose(await numbers(page, 'head-output-1'), courseNumbers.headOutput1, 'head 1 output (it)');
  assertClose(await numbers(page, 'head-output-2'), courseNumbers.headOutput2, 'head 2 output (it)');
  assertClose(await numbers(page, 'concat'), courseNumbers.output, 'concat (it)');
  assertClose(await numbers(page, 'output'), courseNumbers.output, 'output (it)');
  // The full tables (all three query tokens) match the reference too.
  for (const h of [1, 2]) {
    assertClose(await numbers(page, `weights-table-head-${h}`), expected.weights[h - 1].flat(), `weights table head ${h}`);
  }
  assertClose(await numbers(page, 'output-table'), expected.output.flat(), 'output table');
  // Shown to exactly 4 decimals.
  for (const text of await page.locator('[data-testid="output-table"] td.num').allTextContents()) {
    assert.match(text.trim(), /^-?\d+\.\d{4}$/);
  }
  // The query row is highlighted and the weight cells are shaded by weight.
  assert.match(await page.locator('[data-testid="weights-head-1"]').getAttribute('class'), /is-query/);
  const shade = await page.locator('[data-testid="weights-head-1"] td').first()
    .evaluate((td) => getComputedStyle(td).backgroundColor);
  assert.notEqual(shade, 'rgba(0, 0, 0, 0)', 'weight cell has a background');
  // Every input has an accessible name.
  const unnamed = await page.locator('input').evaluateAll((inputs) =>
    inputs.filter((i) => !i.getAttribute('aria-label') && !(i.labels && i.labels.length > 0)).map((i) => i.id));
  assert.deepEqual(unnamed, []);
  assert.equal(await page.locator('#editor input.cell').count(), 12 + 2 * 3 * 8 + 16, 'X, 6 head matrices, WO');

  for (const [width, height] of [[1280, 900], [360, 740]]) {
    await page.setViewportSize({ width, height });
    // Wide tables scroll inside their container: the page itself never scrolls sideways.
    await eventually(async () => {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `page is ${overflow}px wider than the ${width}px viewport`);
    });
    await page.screenshot({ path: `${SCREENSHOTS}worked-example-all-steps-${width}.png`, fullPage: true });
  }
  await page.close();
  assertNoProblems();
});

test('editing an embedding recomputes weights and output', { timeout: TIMEOUT }, async () => {
  const page = await newPage('edit');
  await openDemo(page);
  const before1 = await numbers(page, 'weights-head-1');
  const beforeOut = await numbers(page, 'output');
  await page.fill('#x-2-0', '2');  // x_it entity-ness 1 -> 2; fill fires the input event
  const x = COURSE.x.map((row) => row.slice());
  x[2][0] = 2;
  const expected = reference(x);
  await eventually(async () => {
    const after1 = await numbers(page, 'weights-head-1');
    const afterOut = await numbers(page, 'output');
    assert.notDeepEqual(after1, before1, 'head 1 weights changed');
    assert.notDeepEqual(afterOut, beforeOut, 'output changed');
    assertClose(after1, expected.weights[0][2], 'weights head 1 after edit');
    assertClose(await numbers(page, 'weights-head-2'), expected.weights[1][2], 'weights head 2 after edit');
    assertClose(afterOut, expected.output[2], 'output after edit');
    assertClose(await numbers(page, 'output-table'), expected.output.flat(), 'output table after edit');
  });

  // Editing a head's projection changes only what it should: zeroing W_2^V zeroes head 2's output.
  for (const id of ['wv-2-0-0', 'wv-2-1-1']) await page.fill(`#${id}`, '0');
  await eventually(async () => {
    assertClose(await numbers(page, 'head-output-2'), [0, 0], 'head 2 output with W_2^V = 0');
    assertClose((await numbers(page, 'output')).slice(0, 2), expected.output[2].slice(0, 2), 'head 1 half unchanged');
  });

  // Reset brings back the course's numbers.
  await page.click('#reset');
  await eventually(async () => {
    assert.equal(await page.inputValue('#x-2-0'), '1');
    assertClose(await numbers(page, 'output'), courseNumbers.output, 'output after reset');
    assertClose(await numbers(page, 'weights-head-2'), courseNumbers.weightsHead2, 'weights head 2 after reset');
  });
  await page.close();
  assertNoProblems();
});

test('an emptied cell shows the API error, and fixing it restores the result', { timeout: TIMEOUT }, async () => {
  const page = await newPage('error');
  const infos = [];
  page.on('console', (m) => { if (m.type() === 'info') infos.push(m.text()); });
  await openDemo(page);
  const alert = page.getByRole('alert');
  assert.equal((await alert.textContent()).trim(), '', 'no error at first');

  await page.fill('#x-0-0', '');
  await page.waitForFunction(() => document.querySelector('headlab-worked-example').shadowRoot.getElementById('error').textContent !== '', null, { timeout: 5_000 });
  await expectVisible(alert);  // the error alert is visible
  const message = await alert.textContent();
  assert.match(message, /^A cell is empty or not a number: Embedding of "ball", entity-ness\. Type a number to see the results again\.$/, `alert says it in a learner's words: ${message}`);
  assert.doesNotMatch(message, /multiHeadAttention|query\[/, 'no developer detail in the alert');
  assert.ok(infos.some((m) => /multiHeadAttention: query\[0\] is NaN/.test(m)), `the API message goes to the console: ${infos}`);
  assert.equal(await page.getAttribute('#x-0-0', 'aria-invalid'), 'true');
  const stale = await page.locator('[data-testid="output"] td').allTextContents();
  assert.ok(stale.every((t) => !/\d/.test(t)), `no stale numbers shown while in error: ${stale}`);
  assert.match(await page.locator('[data-testid="results-note"]').textContent(), /cells marked in red/);
  await page.screenshot({ path: `${SCREENSHOTS}worked-example-error-1280.png` });

  // A second bad cell, then fix both: the page keeps working.
  await page.fill('#wo-3-3', '');
  await page.waitForFunction(() => document.querySelector('headlab-worked-example').shadowRoot.getElementById('wo-3-3').getAttribute('aria-invalid') === 'true');
  await expectText(alert, /^2 cells are empty or not a number: Embedding of "ball", entity-ness; .*\. Type a number/);
  await page.fill('#wo-3-3', '1');
  await page.fill('#x-0-0', '3');
  await eventually(async () => {
    assert.equal((await alert.textContent()).trim(), '', 'error cleared');
    assert.equal(await alert.evaluate((e) => e.getBoundingClientRect().height), 0, 'empty alert takes no space');
    assert.equal(await page.getAttribute('#x-0-0', 'aria-invalid'), null);
    assert.equal(await page.locator('[data-testid="results-note"]').textContent(), '');
    assertClose(await numbers(page, 'output'), courseNumbers.output, 'output after fixing');
    assertClose(await numbers(page, 'weights-head-1'), courseNumbers.weightsHead1, 'weights head 1 after fixing');
  });
  await page.close();
  assertNoProblems();
});

test('the demo works under the strict Content-Security-Policy', { timeout: TIMEOUT }, async () => {
  const strict = await serve({ port: 0, root: DIST, csp: true });
  try {
    const page = await newPage('csp');
    await openDemo(page, strict.url);
    assertClose(await numbers(page, 'output'), courseNumbers.output, 'output under CSP');
    await page.close();
  } finally {
    await strict.close();
  }
  assertNoProblems();
});

test('switching a head off changes the output; W^O decides which heads reach it', { timeout: TIMEOUT }, async () => {
  const page = await newPage('ablation');
  await openDemo(page);
  const full = await numbers(page, 'output');
  assertClose(full, courseNumbers.output, 'output with both heads');
  await page.uncheck('#head-on-2');
  await eventually(async () => {
    assertClose(await numbers(page, 'output'), [...courseNumbers.headOutput1, 0, 0], 'output with head 2 off');
    assertClose(await numbers(page, 'head-output-2'), courseNumbers.headOutput2, 'head 2 still computes; only W^O ignores it');
  });
  await page.click('[data-action="copy-link"]');
  await eventually(async () => assert.match(page.url(), /worked\.ablate=2/, 'the switch is in the copy-link state'));
  await page.check('#head-on-2');
  await eventually(async () => assertClose(await numbers(page, 'output'), full, 'output with head 2 back on'));

  // A real mixing matrix: the output changes and both heads still reach it.
  await page.selectOption('#wo-preset', 'mix');
  await eventually(async () => {
    assertClose(await numbers(page, 'output'), [0.72853, 0.64361, 0.1474, 0.48499], 'output with the mixing W^O', 2e-4);
  });
  await expectCount(page.locator('[data-testid="survive"] li[data-reaches="true"]'), 2);  // both heads reach the output
  // Zero where W^O reads head 2: head 2 is lost.
  await page.selectOption('#wo-preset', 'drop-2');
  await eventually(async () => {
    assertClose(await numbers(page, 'output'), [...courseNumbers.headOutput1, 0, 0], 'output when W^O zeroes head 2');
    assert.equal(await page.locator('[data-testid="survive"] li[data-head="2"]').getAttribute('data-reaches'), 'false');
    assert.equal(await page.locator('[data-testid="survive"] li[data-head="1"]').getAttribute('data-reaches'), 'true');
  });
  // Editing a W^O cell makes it custom.
  await page.fill('#wo-2-2', '2');
  await eventually(async () => assert.equal(await page.inputValue('#wo-preset'), 'custom'));
  await page.close();
  assertNoProblems();
});

test('a browser without WebAssembly SIMD gets the scalar build and the same numbers', { timeout: TIMEOUT }, async () => {
  // Chromium always runs SIMD, so the page is told otherwise: validate() refuses any module with a
  // SIMD opcode (0xfd), and the SIMD wasm files are not served (a Worker, which the stub does not
  // reach, then fails over to the main thread).
  const context = await site.browser.newContext();
  await context.addInitScript(() => {
    const validate = WebAssembly.validate;
    WebAssembly.validate = (bytes) => (new Uint8Array(bytes).includes(0xfd) ? false : validate(bytes));
  });
  const wasm = [];
  context.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(r.url().split('/').pop()); });
  await context.route(/headlab_(core|train)\.wasm$/, (route) => route.fulfill({ status: 404, body: 'no SIMD here' }));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await openDemo(page);
  assertClose(await numbers(page, 'weights-head-1'), courseNumbers.weightsHead1, 'weights head 1 (it), scalar build');
  assertClose(await numbers(page, 'output'), courseNumbers.output, 'output (it), scalar build');
  assert.ok(wasm.includes('headlab_core_scalar.wasm'), `the scalar module was fetched: ${wasm.join(', ')}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('no console error, page error or failed request in any page', () => {
  assertNoProblems();
});

test('every “what to try” suggestion on the page does what it says', { timeout: TIMEOUT }, async () => {
  const page = await newPage('what to try');
  await openDemo(page);
  const tips = await page.locator('.prose li').allTextContents();
  assert.equal(tips.length, 3, `three suggestions: ${tips.join(' | ')}`);
  const why = (h) => page.locator(`[data-testid="weights-why"] li[data-head="${h}"]`);

  // 1. At step 7 head 1 leans on “ball”, head 2 on “full”; the row's softmax is written out as in the course.
  assert.match(tips[0], /step 7.*one leans on.*ball.*the other on.*full/s);
  await expectText(why(1), /scores highest with “ball”.*0\.7337/);
  await expectText(why(2), /scores highest with “full”.*0\.7337/);
  // The softmax arithmetic as in the course, from a double-precision reference. (The course prints e^1.4142 as
  // 4.1132; e^√2 = 4.113250…, which rounds to 4.1133. Its sum, 23.0602, is the same.)
  const s1 = [4, 1, 2].map((v) => v / Math.SQRT2);
  const e1 = s1.map(Math.exp);
  const arithmetic = `${s1.map((v) => `exp(${v.toFixed(4)})`).join(' + ')} = ${e1.map((v) => v.toFixed(4)).join(' + ')} = ${e1.reduce((a, b) => a + b).toFixed(4)}`;
  assert.equal(arithmetic, 'exp(2.8284) + exp(0.7071) + exp(1.4142) = 16.9188 + 2.0281 + 4.1133 = 23.0602');
  assert.ok((await why(1).textContent()).includes(arithmetic), `the softmax arithmetic: ${await why(1).textContent()}`);

  // 2. “it”'s first number 1 → 2: head 1 leans harder on “ball” (the figure the tip prints, which the element must
  // show to 4 decimals); at 3 it splits, at 5 it attends to itself, and the page says why.
  const said = /from 1 to 2.*0\.7337 becomes (0\.\d{4}).*3 and to 5.*attending to itself/s.exec(tips[1]);
  assert.ok(said, `the second tip: ${tips[1]}`);
  const expectedAt = (a) => { const x = COURSE.x.map((r) => r.slice()); x[2][0] = a; return reference(x).weights[0][2]; };
  await page.fill('#x-2-0', '2');
  await eventually(async () => assertClose(await numbers(page, 'weights-head-1'), expectedAt(2), 'head 1 at 2'));
  const [ball2] = await numbers(page, 'weights-head-1');
  assert.ok(ball2 > courseNumbers.weightsHead1[0] && ball2.toFixed(4) === said[1], `head 1 leans harder on “ball”: ${ball2}, the tip says ${said[1]}`);
  await page.fill('#x-2-0', '3');
  await expectText(why(1), /splits its weight between “ball” and itself \(0\.4996 each\)/);
  await page.fill('#x-2-0', '5');
  await eventually(async () => assertClose(await numbers(page, 'weights-head-1'), expectedAt(5), 'head 1 at 5'));
  await expectText(why(1), /“it” now puts most weight on itself \(0\.9992\)\. Its embedding is in its key as well as in its query/);
  await page.click('#reset');

  // 3. At step 10 a mixing W^O lets both heads reach the output; zeroing what reads head 2 loses it.
  assert.match(tips[2], /step 10.*mixing matrix.*both heads still reach.*zero the part that reads\s+head 2/s);
  await page.selectOption('#wo-preset', 'mix');
  await expectCount(page.locator('[data-testid="survive"] li[data-reaches="true"]'), 2);
  await page.selectOption('#wo-preset', 'drop-2');
  await eventually(async () => assert.equal(await page.locator('[data-testid="survive"] li[data-head="2"]').getAttribute('data-reaches'), 'false'));
  await page.close();
  assertNoProblems();
});

test('the pipeline overview: every stage opens its step and marks where the learner is; the per-head stages are framed together', { timeout: TIMEOUT }, async () => {
  const page = await newPage('pipeline');
  await page.goto(new URL(DEMO, site.server.url).href);
  await page.waitForSelector('headlab-worked-example[data-state="ready"]', { timeout: 20_000 });
  const perHead = await page.locator('nav.pipeline li.per-head button').evaluateAll((bs) => bs.map((b) => b.dataset.step));
  assert.deepEqual(perHead, ['2', '3', '4', '5', '6', '7', '8'], 'steps 2–8 happen in each head');
  for (const n of [1, 5, 9, 10]) {
    await page.locator(`nav.pipeline button[data-step="${n}"]`).click();
    await expectVisible(page.locator(`section.step[data-step="${n}"]`));
    await eventually(async () => {
      const current = await page.locator('nav.pipeline button[aria-current="step"]').evaluateAll((bs) => bs.map((b) => b.dataset.step));
      assert.deepEqual(current, [String(n)], `stage ${n} is marked as the current one`);
    });
  }
  await page.close();
  assertNoProblems();
});

test('at step 7 the attention maps are shown once, not again in the summary', { timeout: TIMEOUT }, async () => {
  const page = await newPage('step 7 once');
  await page.goto(new URL(`${DEMO}#worked.step=7`, site.server.url).href);
  await page.waitForSelector('headlab-worked-example[data-state="ready"]', { timeout: 20_000 });
  const visibleMaps = () => page.locator('headlab-worked-example figure.heatmap').evaluateAll((fs) => fs.filter((f) => f.getClientRects().length > 0).length);
  await eventually(async () => assert.equal(await visibleMaps(), 2, 'two maps at step 7: one per head'));
  await page.locator('nav.pipeline button[data-step="1"]').click();
  await eventually(async () => assert.equal(await visibleMaps(), 2, 'at step 1 the summary shows the two maps'));
  assert.equal(await page.locator('headlab-worked-example section.summary figure.heatmap').evaluateAll((fs) => fs.filter((f) => f.getClientRects().length > 0).length), 2);
  await page.close();
  assertNoProblems();
});
