// Accessibility of every page in headless Chromium, checked with axe-core (the
// rules of WCAG 2.x A and AA and axe's best practices): light and dark system
// settings, every worked-example step shown at once, and the trainer before and
// after training. Any violation fails, with the rule and the elements named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { watch, waitForElements, useSite } from './helpers.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TIMEOUT = 120_000;
const PAGES = ['index.html', 'demos/worked-example/index.html#worked.step=all', 'demos/heads/index.html', 'demos/params/index.html',
  'demos/scaling/index.html', 'demos/misconceptions/index.html', 'demos/choosing-h/index.html', 'demos/trainer/index.html',
  'demos/language-model/index.html', 'demos/real-models/index.html',
  'examples/embed.html'];

const problems = [];

const site = useSite({});

/** axe's violations on the page as it is now, one line per rule. */
async function violations(page) {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' > ')).join(' | ')}`);
  });
}

async function ready(page) {
  if (await page.evaluate(() => [...document.querySelectorAll('*')].some((e) => e.localName.startsWith('headlab-') && e.localName !== 'headlab-theme-toggle'))) {
    await waitForElements(page, 30_000);
  }
}

// Each page is loaded once with the light system setting and checked, then the reader's system
// turns dark (the elements follow prefers-color-scheme's change event) and it is checked again.
test('axe finds no violation on any page, with the light system setting and after it turns dark', { timeout: TIMEOUT }, async () => {
  const context = await site.browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 900 } });
  const found = [];
  for (const path of PAGES) {
    const page = watch(await context.newPage(), `axe ${path}`, problems);
    await page.goto(new URL(path, site.server.url).href);
    await ready(page);
    for (const v of await violations(page)) found.push(`${path} (light): ${v}`);
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true, `${path}: the system setting is dark now`);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await ready(page);
    assert.notEqual(await background(), light, `${path}: the page's background follows the system setting (${light} in light)`);
    for (const v of await violations(page)) found.push(`${path} (dark): ${v}`);
    await page.close();
  }
  await context.close();
  assert.deepEqual(found, [], `axe violations:\n${found.join('\n')}`);
});

test('axe finds no violation on the trainer after it has trained and specialised', { timeout: TIMEOUT }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'axe trainer trained', problems);
  await page.goto(new URL('demos/trainer/index.html', site.server.url).href);
  await ready(page);
  await page.locator('headlab-trainer [data-testid="trainer-speed"]').selectOption('fast');
  await page.locator('headlab-trainer [data-action="start"]').click();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').hasAttribute('data-specialised-step'), null, { timeout: 60_000 });
  await page.locator('headlab-trainer [data-action="start"]').click();
  await page.waitForFunction(() => !document.querySelector('headlab-trainer').running);
  await page.locator('headlab-trainer [data-action="heads-view"]').click();
  await page.waitForFunction(() => !document.getElementById('trained-heads').hidden);
  await waitForElements(page);
  const found = await violations(page);
  await page.close();
  assert.deepEqual(found, [], `axe violations after training:\n${found.join('\n')}`);
});

test('axe finds no violation on the language model with a trained model, a head off, 1 vs 2 layers (a one-layer head opened) and a generated text', { timeout: TIMEOUT }, async () => {
  for (const scheme of ['light', 'dark']) {
    const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: scheme }), `axe language model ${scheme}`, problems);
    await page.goto(new URL(`demos/language-model/index.html#lm.pretrained=1&lm.compare=1`, site.server.url).href);
    await ready(page);
    await page.locator('headlab-language-model [data-testid="lm-switch-1-1"]').uncheck();
    await page.locator('headlab-language-model [data-testid="lm-ablation"]').waitFor();
    await page.locator('headlab-language-model [data-action="generate"]').click();
    await page.locator('headlab-language-model [data-testid="lm-generated-new"]').waitFor();
    await page.locator('headlab-language-model [data-testid="lm-one-cell-1-1"]').click();
    await page.locator('headlab-language-model [data-testid="lm-one-detail-table"]').waitFor();
    await page.locator('headlab-language-model [data-testid="lm-text"]').fill('a b zz');
    await page.locator('headlab-language-model [data-action="show-text"]').click();
    await page.waitForFunction(() => document.querySelector('headlab-language-model').shadowRoot.querySelector('[data-testid="lm-text-error"]').textContent !== '');
    const found = await violations(page);
    await page.close();
    assert.deepEqual(found, [], `axe violations on the language model (${scheme}):\n${found.join('\n')}`);
  }
});

test('no console error, page error or failed request while checking', () => {
  assert.deepEqual(problems, [], problems.join('\n'));
});
