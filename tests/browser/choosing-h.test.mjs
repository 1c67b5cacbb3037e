// <headlab-choosing-h> shows both sides of the h trade-off, in headless Chromium from dist/
// under the strict CSP: the measured table (the module's numbers, as shipped), a verdict that
// names the cost of one head (it blends) and of d_k = 1 (no match by content) as the slider
// moves, the conclusion as the element's last word, nothing wider than 360 px at 360 px, and
// "Measure again" recomputing the same numbers in a Worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SCREENSHOTS, ensureScreenshotDir, watch, waitForElements, useSite } from './helpers.mjs';
import { CHOOSING_H_TABLE as TABLE } from '../../web/lib/teach/choosing-h-table.js';

const PAGE = 'demos/choosing-h/index.html';
const problems = [];

const site = useSite({ csp: true }, {
  setup: async () => {
    ensureScreenshotDir();
  },
});

const shadow = (page, testid) => page.locator(`headlab-choosing-h [data-testid="${testid}"]`);
const pct = (x) => `${(100 * x).toFixed(1)}%`;

for (const width of [1280, 360]) {
  test(`choosing h at ${width} px: the benefit of more heads and the cost of tiny d_k, both measured`, { timeout: 90_000 }, async () => {
    const page = watch(await site.browser.newPage({ viewport: { width, height: 900 } }), `choosing-h ${width}`, problems);
    await page.goto(new URL(PAGE, site.server.url).href);
    await waitForElements(page, 30_000);
    await page.waitForSelector('headlab-choosing-h[data-drawn]');

    // The table is the shipped measurement, row for row.
    const rows = await shadow(page, 'choose-tradeoff-table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
    assert.deepEqual(rows.map((r) => r[0]), TABLE.rows.map((r) => String(r.numHeads)));
    TABLE.rows.forEach((r, i) => assert.deepEqual(rows[i].slice(3), [pct(r.lookupAccuracy), pct(r.positionAccuracy), pct(r.accuracy)], `row h = ${r.numHeads}`));

    // h = 1 at d_model 512 (Home on the slider): one head blends; the row is highlighted.
    await page.locator('headlab-choosing-h #h').focus();
    await page.keyboard.press('Home');
    await page.waitForFunction(() => /h = 1, d_k = 16:/.test(document.querySelector('headlab-choosing-h').shadowRoot.querySelector('[data-testid="choose-tradeoff-verdict"]').textContent));
    const one = await shadow(page, 'choose-tradeoff-verdict').textContent();
    assert.match(one, /blends them/);
    assert.match(one, new RegExp(`only ${pct(TABLE.rows[0].accuracy).replace('.', '\\.')} of examples get all four right`));
    assert.equal(await shadow(page, 'choose-tradeoff-table').locator('tr.is-query th').textContent(), '1');

    // Four steps right: h = 16, and the table's d_k = 1 row: positions found, the asked colour not.
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => /h = 16, d_k = 1:/.test(document.querySelector('headlab-choosing-h').shadowRoot.querySelector('[data-testid="choose-tradeoff-verdict"]').textContent));
    const sixteen = await shadow(page, 'choose-tradeoff-verdict').textContent();
    assert.match(sixteen, /one number each/);
    assert.match(sixteen, /too little room in each/);

    // The conclusion is the element's last word, with the module's numbers in it.
    const last = await page.evaluate(() => [...document.querySelector('headlab-choosing-h').shadowRoot.children].filter((e) => e.localName !== 'style').at(-1).dataset.testid);
    assert.equal(last, 'choose-conclusion');
    const conclusion = await shadow(page, 'choose-conclusion').textContent();
    assert.match(conclusion, /^Partition a fixed budget; neither extreme is free\./);
    const best = TABLE.rows.reduce((a, b) => (b.accuracy > a.accuracy ? b : a));
    assert.ok(conclusion.includes(`the middle (h = ${best.numHeads}, d_k = ${best.dK}) in ${pct(best.accuracy)}`), conclusion);

    const tooWide = await page.evaluate((w) => document.documentElement.scrollWidth > w, width);
    assert.equal(tooWide, false, 'the page scrolls sideways');
    if (width === 360) {
      const box = await page.locator('headlab-choosing-h').boundingBox();
      assert.ok(box.width <= 360, `element width ${box.width}`);
    }
    await page.screenshot({ path: `${SCREENSHOTS}/choosing-h-tradeoff-${width}.png`, fullPage: true });
    await page.close();
    assert.deepEqual(problems.splice(0), []);
  });
}

test('choosing h: "Measure again" trains every setting in a Worker and gets the shipped numbers', { timeout: 300_000 }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'choosing-h measure', problems);
  await page.goto(new URL(PAGE, site.server.url).href);
  await waitForElements(page, 30_000);
  const t0 = Date.now();
  await shadow(page, 'choose-remeasure').click();
  await page.waitForFunction(() => /Trained \d+ of 15/.test(document.querySelector('headlab-choosing-h').shadowRoot.querySelector('[data-testid="choose-remeasure-status"]').textContent), null, { timeout: 60_000 });
  // The page stays responsive while the Worker trains.
  const lag = await page.evaluate(() => new Promise((resolve) => {
    const s = performance.now();
    setTimeout(() => resolve(performance.now() - s), 0);
  }));
  assert.ok(lag < 250, `a timer waited ${lag} ms`);
  await page.waitForFunction(() => /Measured again in this browser/.test(document.querySelector('headlab-choosing-h').shadowRoot.querySelector('[data-testid="choose-remeasure-status"]').textContent), null, { timeout: 280_000 });
  console.log(`# measured again in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  assert.match(await shadow(page, 'choose-remeasure-status').textContent(), /the same numbers as the table the page shipped with/);
  assert.match(await shadow(page, 'choose-tradeoff-table').locator('caption').textContent(), /measured in this browser/);
  await page.close();
  assert.deepEqual(problems.splice(0), []);
});
