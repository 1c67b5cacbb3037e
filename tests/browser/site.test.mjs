// The built site (dist/) in headless Chromium: every page and element over
// http under the strict CSP and from file://; screenshots at 1280 and 360 px;
// the parameter page's numbers; keyboard-only use; token text that looks like
// HTML; JSON model validation; exports; copy-link state.
// Screenshots go to tests/browser/screenshots/ (git-ignored).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { STRICT_CSP } from '../../tools/serve.mjs';
import { SCREENSHOTS, ensureScreenshotDir, watch, waitForElements, fileUrl, numbers, assertClose, useSite } from './helpers.mjs';
import { eventually, expectText, expectCount, expectVisible } from './expect.mjs';
import { expected } from '../fixtures/course.mjs';

const TIMEOUT = 120_000;
const ELEMENTS = ['headlab-worked-example', 'headlab-heads', 'headlab-params', 'headlab-scaling', 'headlab-misconceptions', 'headlab-choosing-h'];
const PAGES = [
  { path: 'index.html', name: 'landing', elements: [] },
  { path: 'demos/worked-example/index.html', name: 'worked-example', elements: ['headlab-worked-example'] },
  { path: 'demos/heads/index.html', name: 'heads', elements: ['headlab-heads'] },
  { path: 'demos/params/index.html', name: 'params', elements: ['headlab-params'] },
  { path: 'demos/scaling/index.html', name: 'scaling', elements: ['headlab-scaling'] },
  { path: 'demos/misconceptions/index.html', name: 'misconceptions', elements: ['headlab-misconceptions'] },
  { path: 'demos/choosing-h/index.html', name: 'choosing-h', elements: ['headlab-choosing-h'] },
  { path: 'demos/language-model/index.html', name: 'language-model', elements: ['headlab-language-model'] },
  { path: 'demos/real-models/index.html', name: 'real-models', elements: ['headlab-model-explorer'] },
  { path: 'examples/embed.html', name: 'embed', elements: ELEMENTS },
  // The module build: browsers refuse module scripts from file://, so this one is http(s) only.
  { path: 'examples/embed-module.html', name: 'embed-module', elements: ELEMENTS, module: true },
];

const problems = [];

const site = useSite({ csp: true }, {
  setup: async () => {
    ensureScreenshotDir();
  },
});

async function newPage(label, width = 1280, height = 900) {
  const page = await site.browser.newPage({ viewport: { width, height } });
  return watch(page, label, problems);
}

function takeProblems() {
  const out = problems.splice(0);
  return out;
}

function assertNoProblems() {
  const found = takeProblems();
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

/** Loads a page and checks that each expected element is defined, ready and idle. */
async function load(page, url, spec) {
  const response = await page.goto(url);
  if (response) assert.equal(response.status(), 200, `${url}: HTTP ${response.status()}`);
  if (spec.elements.length > 0) await waitForElements(page);
  const present = await page.evaluate(() => [...new Set([...document.querySelectorAll('*')].map((e) => e.localName).filter((n) => n.startsWith('headlab-') && n !== 'headlab-theme-toggle'))]);
  // The embed pages may show more elements than these (others add theirs); these must be there.
  const missing = spec.elements.filter((tag) => !present.includes(tag));
  assert.deepEqual(missing, [], `${spec.name}: elements missing from the page (present: ${present.join(', ')})`);
  if (!spec.path.startsWith('examples/')) assert.deepEqual(present.sort(), [...spec.elements].sort(), `${spec.name}: elements on the page`);
  // Every element rendered content into its shadow root, and none shows a load failure.
  const empty = await page.evaluate(() => [...document.querySelectorAll('*')]
    .filter((e) => e.localName.startsWith('headlab-') && e.localName !== 'headlab-theme-toggle')
    .filter((e) => !e.shadowRoot || e.shadowRoot.querySelectorAll('h2').length === 0 || e.dataset.state !== 'ready')
    .map((e) => e.localName));
  assert.deepEqual(empty, [], `${spec.name}: elements without content`);
  // No stray JavaScript values rendered as text.
  const stray = await page.evaluate((tags) => tags.flatMap((tag) => [...document.querySelectorAll(tag)]
    .map((e) => /\[object \w+\]|\bundefined\b|\bnull\b|\bNaN\b/.exec(e.shadowRoot.textContent)?.[0]).filter(Boolean)
    .map((m) => `${tag}: "${m}"`)), ELEMENTS);
  assert.deepEqual(stray, [], `${spec.name}: stray values in the text`);
  return response;
}

/** The focused element, looking inside shadow roots. */
async function deepActive(page) {
  return page.evaluate(() => {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a ? { id: a.id, tag: a.localName, type: a.getAttribute('type'), text: a.textContent.trim().slice(0, 40),
      outline: getComputedStyle(a).outlineStyle, outlineWidth: getComputedStyle(a).outlineWidth } : null;
  });
}

async function tabTo(page, predicate, max = 60) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const a = await deepActive(page);
    if (a && predicate(a)) return a;
  }
  throw new Error('did not reach the control by pressing Tab');
}

/** Runs `fn` over `items`, `limit` at a time. */
async function pool(items, limit, fn) {
  const queue = items.slice();
  const workers = Array.from({ length: Math.min(limit, queue.length) }, async () => {
    while (queue.length) await fn(queue.shift());
  });
  await Promise.all(workers);
}

// The main server sends the strict CSP, so every http test also checks that the
// site works under it: script-src 'self' 'wasm-unsafe-eval', no 'unsafe-eval'.
test('every page and element loads over http under the strict CSP with no error; screenshots at 1280 and 360 px', { timeout: TIMEOUT }, async () => {
  await pool(PAGES, 3, async (spec) => {
    const page = await newPage(`http+csp ${spec.name}`);
    const response = await load(page, new URL(spec.path, site.server.url).href, spec);
    assert.equal(response.headers()['content-security-policy'], STRICT_CSP);
    if (spec.module) {
      // The module build (ES module + module Worker + wasm fetched next to the bundle).
      const status = await page.locator('headlab-scaling .status').first().textContent();
      assert.match(status, /Web Worker/, `the module build computes in a Worker: ${status}`);
    } else {
      await page.screenshot({ path: `${SCREENSHOTS}/${spec.name}-1280.png`, fullPage: true });
      await page.setViewportSize({ width: 360, height: 740 });
      // Figures redraw for the new width in the next frames.
      await eventually(async () => {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `${spec.name}: the page is ${overflow}px wider than a 360px screen`);
        // No element is wider than the screen, and none has content that spills out of it (wide tables scroll inside their own box).
        const wide = await page.evaluate(() => [...document.querySelectorAll('*')]
          .filter((e) => e.localName.startsWith('headlab-') && e.localName !== 'headlab-theme-toggle' && !e.hidden)
          .filter((e) => e.getBoundingClientRect().right > 360.5 || e.scrollWidth > e.clientWidth + 1)
          .map((e) => `${e.localName}: right edge ${Math.round(e.getBoundingClientRect().right)} px, content ${e.scrollWidth} px in ${e.clientWidth} px`));
        assert.deepEqual(wide, [], `${spec.name}: elements wider than a 360px screen`);
      });
      if (spec.elements.length > 0) await waitForElements(page);
      await page.screenshot({ path: `${SCREENSHOTS}/${spec.name}-360.png`, fullPage: true });
    }
    await page.close();
  });
  assertNoProblems();
});

test('every page works opened from file://, with the Worker fallback explained', { timeout: TIMEOUT }, async () => {
  await pool(PAGES.filter((p) => !p.module), 3, async (spec) => {
    const page = await newPage(`file ${spec.name}`);
    await load(page, fileUrl(spec.path), spec);
    if (spec.name === 'scaling') {
      const status = await page.locator('headlab-scaling .status').first().textContent();
      assert.match(status, /main thread/, `file:// computes on the main thread and says so: ${status}`);
    }
    if (spec.name === 'worked-example') {
      // The wasm embedded in the classic build computes the course's numbers.
      const w = await numbers(page, 'weights-head-1');
      expected.weightsHead1.forEach((x, i) => assert.ok(Math.abs(w[i] - x) < 1e-4, `file:// weights ${w}`));
      const out = await numbers(page, 'output');
      expected.output.forEach((x, i) => assert.ok(Math.abs(out[i] - x) < 1e-4, `file:// output ${out}`));
    }
    if (spec.name === 'params') assert.equal((await page.locator('[data-testid="params-total"]').textContent()).trim(), '1,048,576');
    await page.close();
  });
  assertNoProblems();
});

test('parameter budget: 1,048,576 for d_model 512 at h = 8 and h = 16; an explanation at h = 3', { timeout: TIMEOUT }, async () => {
  const page = await newPage('params');
  await load(page, new URL('demos/params/index.html', site.server.url).href, PAGES[3]);
  const total = page.locator('[data-testid="params-total"]');
  assert.equal((await total.textContent()).trim(), '1,048,576');
  assert.match(await page.locator('[data-testid="params-dk"]').textContent(), /64/);
  // The table of every h is the answer to the page's "check yourself": closed until the reader opens it.
  assert.equal(await page.locator('[data-testid="params-invariance-box"]').evaluate((d) => d.open), false);
  await page.fill('#heads', '16');
  await expectText(page.locator('[data-testid="params-dk"]'), /32/);
  await expectText(total, '1,048,576');
  await expectText(page.locator('[data-testid="params-counts"]'), /262,144/);
  await page.fill('#heads', '3');
  const explanation = page.locator('[data-testid="params-explanation"]');
  await expectVisible(explanation);  // explanation shown at h = 3
  await expectText(explanation, /does not divide/);
  assert.match(await explanation.textContent(), /512 \/ 3 = 170\.67/);
  assert.doesNotMatch(await explanation.textContent(), /null|undefined/);
  assert.equal(await total.count(), 1);
  await expectVisible(total, false);  // no total shown when h does not divide d_model
  // A "nearest that works" button goes back to a count.
  await page.locator('[data-testid="params-explanation"] button', { hasText: 'h = 4' }).click();
  await expectVisible(total);
  await expectText(total, '1,048,576');
  // d_k ≠ d_v mode.
  await page.check('#split');
  await page.fill('#d-k', '32');
  await page.fill('#d-v', '128');
  await expectText(total, (2 * 4 * 32 * 512 + 2 * 4 * 128 * 512).toLocaleString('en-US'));
  await page.close();
  assertNoProblems();
});

test('parameter budget: dragging h from 1 to 64 at d_model 512 always shows the matrices and the same total', { timeout: TIMEOUT }, async () => {
  const page = await newPage('params drag');
  await load(page, new URL('demos/params/index.html', site.server.url).href, PAGES[3]);
  const slider = page.locator('#heads-range');
  const box = await slider.boundingBox();
  const seen = [];
  // Drag the thumb from the left end to the right in small moves, as a mouse would.
  await page.mouse.move(box.x + 2, box.y + box.height / 2);
  await page.mouse.down();
  for (let i = 0; i <= 40; i++) {
    await page.mouse.move(box.x + 2 + ((box.width - 4) * i) / 40, box.y + box.height / 2);
    const h = Number(await page.inputValue('#heads'));
    if (h > 64) break;
    await eventually(async () => {
      assert.equal(512 % h, 0, `the slider stopped at h = ${h}, which does not divide 512`);
      assert.equal(await page.locator('[data-testid="params-explanation"]').isVisible(), false, `no “does not divide” at h = ${h}`);
      await expectText(page.locator('[data-testid="params-total"]'), '1,048,576');
      assert.equal(await page.locator('headlab-params .drawing svg').count(), 1, `the matrices are drawn at h = ${h}`);
      const texts = await page.locator('headlab-params .drawing svg text').allTextContents();
      assert.ok(texts.some((t) => t.startsWith(`${h} head${h === 1 ? '' : 's'}:`)), `the drawing is for h = ${h}: ${texts.join(' | ')}`);
    });
    if (!seen.includes(h)) seen.push(h);
  }
  await page.mouse.up();
  assert.deepEqual(seen.filter((h) => h <= 64), [1, 2, 4, 8, 16, 32, 64], 'every divisor up to 64 was shown on the way');
  await page.close();
  assertNoProblems();
});

test('keyboard only: tab to a control, change it, see the result (with a visible focus ring)', { timeout: TIMEOUT }, async () => {
  const page = await newPage('keyboard');
  await load(page, new URL('demos/params/index.html', site.server.url).href, PAGES[3]);
  const slider = await tabTo(page, (a) => a.id === 'heads-range');
  assert.equal(slider.outline, 'solid', 'focused slider shows an outline');
  assert.notEqual(slider.outlineWidth, '0px');
  // The slider steps through the divisors of d_model: 8 → 16 → 32, and back.
  await page.keyboard.press('ArrowRight');
  await eventually(async () => assert.equal(await page.inputValue('#heads'), '16'));
  await page.keyboard.press('ArrowRight');
  await eventually(async () => assert.equal(await page.inputValue('#heads'), '32'));
  assert.equal(await page.getAttribute('#heads-range', 'aria-valuetext'), 'h = 32', 'the slider announces h, not its position');
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowLeft');
  await eventually(async () => assert.equal(await page.inputValue('#heads'), '4'));
  await expectVisible(page.locator('[data-testid="params-total"]'));
  await expectText(page.locator('[data-testid="params-total"]'), '1,048,576');
  // Any h can be typed; one that does not divide d_model is explained.
  await page.fill('#heads', '9');
  await expectVisible(page.locator('[data-testid="params-explanation"]'));
  await expectText(page.locator('[data-testid="params-explanation"]'), /h = 9 does not divide d_model = 512/);
  await page.close();

  // Worked example: step navigation by keyboard.
  const we = await newPage('keyboard worked example');
  await load(we, new URL('demos/worked-example/index.html', site.server.url).href, PAGES[1]);
  const step7 = await tabTo(we, (a) => a.tag === 'button' && /^Step 7 /.test(a.text));
  assert.equal(step7.outline, 'solid');
  await we.keyboard.press('Enter');
  await expectVisible(we.locator('section.step[data-step="7"]'));  // step 7 shown
  await expectVisible(we.locator('section.step[data-step="1"]'), false);  // step 1 hidden
  await tabTo(we, (a) => a.tag === 'button' && /Next/.test(a.text));
  await we.keyboard.press('Enter');
  await expectVisible(we.locator('section.step[data-step="8"]'));  // Next goes to step 8
  await we.close();

  // Heads view: focusing a token outlines its row in every head.
  const hv = await newPage('keyboard heads');
  await load(hv, new URL('demos/heads/index.html', site.server.url).href, PAGES[2]);
  await tabTo(hv, (a) => a.tag === 'button' && a.text === 'it');
  await eventually(async () => {
    for (const h of [1, 2]) {
      const hot = await hv.locator(`[data-testid="heads-weights-${h}"] tbody tr.is-hot th`).allTextContents();
      assert.deepEqual(hot, ['it'], `head ${h}: the row of "it" is outlined`);
    }
  });
  await expectText(hv.locator('[data-testid="lines-note"]'), /“it” puts its largest weight/);
  await hv.keyboard.press('Tab');
  await hv.close();
  assertNoProblems();
});

const XSS = '<img src=x onerror=alert(1)>';
const XSS2 = '<img src=y onerror="window.__pwned=1">';

function tinyModel(tokens) {
  return {
    name: 'tiny', tokens, X: tokens.map((_, i) => [i + 1, 1]), numHeads: 1,
    wQ: [[1, 0], [0, 1]], wK: [[1, 0], [0, 1]], wV: [[1, 0], [0, 1]],
  };
}

test('token text that looks like HTML is shown as text and runs nothing', { timeout: TIMEOUT }, async () => {
  const page = await newPage('xss');
  await load(page, new URL('demos/heads/index.html', site.server.url).href, PAGES[2]);
  await page.locator('[data-testid="model-file"]').setInputFiles({
    name: 'evil.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tinyModel([XSS, XSS2, '<b>bold</b>']))),
  });
  await page.waitForFunction(() => document.querySelector('headlab-heads').shadowRoot.querySelectorAll('.token').length === 3);
  await waitForElements(page);
  const tokens = await page.locator('headlab-heads .token').allTextContents();
  assert.deepEqual(tokens, [XSS, XSS2, '<b>bold</b>']);
  const svgText = await page.locator('[data-testid="heads-weights-1"]').evaluate((table) =>
    [...table.closest('figure').querySelectorAll('svg text')].map((t) => t.textContent));
  assert.ok(svgText.some((t) => t.startsWith('<img')), 'the heatmap labels show the token text');
  const injected = await page.evaluate(() => {
    const root = document.querySelector('headlab-heads').shadowRoot;
    return { img: root.querySelectorAll('img').length + document.querySelectorAll('img').length, b: root.querySelectorAll('b').length, pwned: window.__pwned ?? null };
  });
  assert.deepEqual(injected, { img: 0, b: 0, pwned: null });

  // The worked example's tokens attribute is text too.
  const we = await newPage('xss worked');
  await load(we, new URL('demos/worked-example/index.html', site.server.url).href, PAGES[1]);
  await we.evaluate((t) => { document.querySelector('headlab-worked-example').tokens = `${t}|full|it`; }, XSS2);
  await we.waitForFunction((t) => [...document.querySelector('headlab-worked-example').shadowRoot.querySelectorAll('[data-testid="x-table"] tbody th')]
    .some((th) => th.textContent === t), XSS2);
  await waitForElements(we);
  assert.equal(await we.evaluate(() => document.querySelector('headlab-worked-example').shadowRoot.querySelectorAll('img').length), 0);
  assert.equal(await we.evaluate(() => window.__pwned ?? null), null);
  await page.close();
  await we.close();
  assertNoProblems();  // includes: no dialog opened
});

test('a bad JSON model is rejected with the field and the problem named', { timeout: TIMEOUT }, async () => {
  const page = await newPage('json errors');
  await load(page, new URL('demos/heads/index.html', site.server.url).href, PAGES[2]);
  const upload = (name, text) => page.locator('[data-testid="model-file"]').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
  const errors = page.locator('[data-testid="model-errors"]');
  await upload('broken.json', '{"tokens": [');
  await page.waitForFunction(() => document.querySelector('headlab-heads').shadowRoot.querySelector('[data-testid="model-errors"]').textContent !== '');
  assert.match(await errors.textContent(), /broken\.json.*not loaded/s);
  assert.match(await errors.textContent(), /not valid JSON/);
  const bad = tinyModel(['a', 'b', 'c']);
  bad.X[1] = [1, 2, 3];
  await upload('ragged.json', JSON.stringify(bad));
  await page.waitForFunction(() => /X\[1\]/.test(document.querySelector('headlab-heads').shadowRoot.querySelector('[data-testid="model-errors"]').textContent));
  assert.match(await errors.textContent(), /X\[1\] has 3 numbers; every row of X needs 2/);
  const noHeads = tinyModel(['a', 'b']);
  noHeads.numHeads = 3;
  noHeads.wQ = 'oops';
  await upload('heads.json', JSON.stringify(noHeads));
  await page.waitForFunction(() => /numHeads = 3/.test(document.querySelector('headlab-heads').shadowRoot.querySelector('[data-testid="model-errors"]').textContent));
  // The previous model (the worked example) is still shown.
  assert.equal(await page.locator('headlab-heads .token').count(), 3);
  // A good file replaces the error.
  await upload('good.json', JSON.stringify(tinyModel(['x', 'y'])));
  await page.waitForFunction(() => document.querySelector('headlab-heads').shadowRoot.querySelectorAll('.token').length === 2);
  await waitForElements(page);
  assert.equal((await errors.textContent()).trim(), '');
  await page.close();
  // Problems here are the rejected files only, and those are shown, not logged.
  assertNoProblems();
});

test('heads view: cross-attention is rectangular; the lines view follows the selected head', { timeout: TIMEOUT }, async () => {
  const page = await newPage('cross');
  await load(page, new URL('demos/heads/index.html#heads.example=cross', site.server.url).href, PAGES[2]);
  for (const h of [1, 2]) {
    assert.equal(await page.locator(`[data-testid="heads-weights-${h}"] tbody tr`).count(), 7, 'Tq = 7 decoder queries');
    assert.equal(await page.locator(`[data-testid="heads-weights-${h}"] thead th`).count(), 6, 'Tk = 6 encoder keys');
  }
  assert.match(await page.locator('[data-testid="model-info"]').textContent(), /cross-attention, 7 query tokens over 6 key tokens/);
  // "chat" attends to "cat" in the meaning head.
  const chat = await page.locator('[data-testid="heads-weights-1"] tbody tr').nth(1).locator('td').allTextContents();
  const values = chat.map(Number);
  assert.equal(values.indexOf(Math.max(...values)), 1, `"chat" looks at "cat" most: ${chat}`);
  await page.locator('headlab-heads .head-pick label', { hasText: 'Head 2' }).click();
  // The lines view re-renders for the picked head.
  await expectText(page.locator('headlab-heads .lines svg text').first(), /Head 2 · position/);
  // A model handed over by the page (e.g. one trained on it) through the `model` property.
  await page.evaluate((m) => { document.querySelector('headlab-heads').model = m; }, tinyModel(['p', 'q', 'r', 's']));
  await page.waitForFunction(() => document.querySelector('headlab-heads').shadowRoot.querySelectorAll('.token').length === 4);
  await waitForElements(page);
  assert.match(await page.locator('[data-testid="model-info"]').textContent(), /self-attention over 4 tokens; d_model = 2, h = 1/);
  await page.close();
  assertNoProblems();
});

test('exports: a heatmap as PNG, SVG, JSON and CSV', { timeout: TIMEOUT }, async () => {
  const page = await newPage('exports');
  await load(page, new URL('demos/heads/index.html', site.server.url).href, PAGES[2]);
  const figure = page.locator('headlab-heads figure.heatmap').first();
  await figure.locator('details.export summary').click();
  const grab = async (format) => {
    const [download] = await Promise.all([page.waitForEvent('download'), figure.locator(`[data-export="${format}"]`).click()]);
    const path = await download.path();
    return { name: download.suggestedFilename(), data: await readFile(path) };
  };
  const png = await grab('png');
  assert.equal(png.name, 'head-1-weights.png');
  assert.deepEqual([...png.data.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG file');
  assert.ok(png.data.length > 2000, 'the PNG has content');
  const svg = await grab('svg');
  assert.match(svg.data.toString(), /^<\?xml[^>]*>\s*<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg.data.toString(), />ball</);
  const json = JSON.parse((await grab('json')).data.toString());
  assert.deepEqual(json.rowLabels, ['ball', 'full', 'it']);
  assert.ok(Math.abs(json.values[2][0] - expected.weightsHead1[0]) < 1e-4, `JSON holds the weights: ${json.values[2]}`);
  const csv = (await grab('csv')).data.toString();
  assert.equal(csv.split('\r\n')[0], 'query \\ key,ball,full,it');
  assert.match(csv.split('\r\n')[3], /^it,0\.733/);
  await page.close();
  assertNoProblems();
});

test('copy link restores a demo’s state from the URL', { timeout: TIMEOUT }, async () => {
  const page = await newPage('copy link');
  await load(page, new URL('demos/params/index.html', site.server.url).href, PAGES[3]);
  await page.fill('#heads', '16');
  await page.check('#bias');
  await page.click('[data-action="copy-link"]');
  const url = await eventually(async () => {
    const now = page.url();
    assert.match(now, /#.*params\.heads=16/);
    assert.match(now, /params\.bias=1/);
    return now;
  });
  await eventually(async () => assert.match(await page.locator('headlab-params .copy-link input').inputValue(), /params\.heads=16/));
  const again = await newPage('copy link restored');
  await load(again, url, PAGES[3]);
  assert.equal(await again.inputValue('#heads'), '16');
  assert.equal(await again.isChecked('#bias'), true);
  await expectText(again.locator('[data-testid="params-total"]'), (4 * 512 * 512 + 4 * 512).toLocaleString('en-US'));
  await page.close();
  await again.close();

  // The worked example keeps edited matrices in the link.
  const we = await newPage('copy link worked');
  await load(we, new URL('demos/worked-example/index.html', site.server.url).href, PAGES[1]);
  await we.fill('#x-2-0', '2');
  await we.click('[data-action="copy-link"]');
  await eventually(async () => assert.match(we.url(), /worked\.x=3,0,0,1;0,3,0,1;2,1,0,1/));
  const we2 = await newPage('copy link worked restored');
  await load(we2, we.url(), PAGES[1]);
  assert.equal(await we2.inputValue('#x-2-0'), '2');
  await eventually(async () => {
    const out = await numbers(we2, 'output');
    assert.ok(out.length === 4 && out.every(Number.isFinite), `output shown: ${out}`);
    assert.notDeepEqual(out, expected.output);
  });
  await we.close();
  await we2.close();
  assertNoProblems();
});

test('scaling: variance ≈ d_k unscaled and ≈ 1 scaled; the unscaled softmax saturates as d_k grows', { timeout: TIMEOUT }, async () => {
  const page = await newPage('scaling');
  await load(page, new URL('demos/scaling/index.html', site.server.url).href, PAGES[4]);
  const stat = async (testid) => (await page.locator(`[data-testid="${testid}"] .v`).allTextContents()).map(Number);
  const [vScaled, vRaw] = await stat('stat-variance');
  assert.ok(Math.abs(vScaled - 1) < 0.15, `scaled variance ${vScaled}`);
  assert.ok(Math.abs(vRaw / 64 - 1) < 0.15, `raw variance ${vRaw} ≈ 64`);
  await page.locator('#dk').focus();
  await page.keyboard.press('End');  // d_k = 4096
  await page.waitForFunction(() => document.querySelector('headlab-scaling').shadowRoot.querySelector('[data-testid="scaling-dk"]').textContent === '4096');
  await waitForElements(page);
  const [maxScaled, maxUnscaled] = await stat('stat-max');
  assert.ok(maxUnscaled > 0.9, `unscaled rows are nearly one-hot at d_k = 4096: mean max ${maxUnscaled}`);
  assert.ok(maxScaled < 0.3, `scaled rows are not: ${maxScaled}`);
  const [hScaled, hUnscaled] = await stat('stat-entropy');
  assert.ok(hUnscaled < 0.3 && hScaled > 3, `entropy scaled ${hScaled}, unscaled ${hUnscaled}`);
  await page.close();
  assertNoProblems();
});

test('misconceptions: all weights positive; averaging cannot tell heads apart; ablation changes the output', { timeout: TIMEOUT }, async () => {
  const page = await newPage('misconceptions');
  await load(page, new URL('demos/misconceptions/index.html', site.server.url).href, PAGES[5]);
  assert.match(await page.locator('[data-testid="misc-a-verdict"]').textContent(), /more than zero/);
  assert.equal(await page.locator('headlab-misconceptions figure.heatmap').count(), 4);
  await page.locator('#a-heads').focus();
  await page.keyboard.press('End');  // 16 heads
  await expectCount(page.locator('headlab-misconceptions figure.heatmap'), 16);
  await page.check('#b-swap');
  const row = (name) => page.locator(`[data-testid="misc-b-table"] tr[data-row="${name}"] td.num`);
  await eventually(async () => {
    assert.equal(await row('Average of the heads').evaluateAll((tds) => tds.length > 0 && tds.every((td) => td.classList.contains('same'))), true, 'average unchanged by the swap');
    assert.equal(await row('Concat, then W^O = identity').evaluateAll((tds) => tds.length > 0 && tds.every((td) => td.classList.contains('diff'))), true, 'concat changed by the swap');
  });
  await waitForElements(page);
  const before = await numbers(page, 'misc-c-output');
  await page.uncheck('#c-head-1');
  await eventually(async () => {
    const afterOff = await numbers(page, 'misc-c-output');
    assert.notDeepEqual(afterOff, before, 'switching head 1 off changes the output');
    assert.deepEqual(afterOff.filter((_, i) => i % 4 < 2), [0, 0, 0, 0, 0, 0], 'head 1’s columns are zero');
  });
  await page.close();
  assertNoProblems();
});

test('choosing h: the course’s examples 512/8 → 64 and 12288/96 → 128', { timeout: TIMEOUT }, async () => {
  const page = await newPage('choosing h');
  await load(page, new URL('demos/choosing-h/index.html', site.server.url).href, PAGES[6]);
  assert.match(await page.locator('[data-testid="choose-dk"]').textContent(), /= 64/);
  await page.locator('[data-testid="choose-examples"] tr', { hasText: 'GPT-3' }).locator('button').click();
  await page.waitForFunction(() => /= 128/.test(document.querySelector('headlab-choosing-h').shadowRoot.querySelector('[data-testid="choose-dk"]').textContent));
  await waitForElements(page);
  assert.equal(await page.inputValue('#dmodel'), '12288');
  await page.locator('#h').focus();
  await page.keyboard.press('End');  // h = 12288, d_k = 1
  await page.waitForFunction(() => /in 1 dimension;/.test(document.querySelector('headlab-choosing-h').shadowRoot.querySelector('[data-testid="choose-dk"]').textContent));
  await waitForElements(page);
  assert.match(await page.locator('[data-testid="choose-verdict"]').textContent(), /impostors/);
  await page.close();
  assertNoProblems();
});

test('a demo works inside an iframe of a course page', { timeout: TIMEOUT }, async () => {
  const page = await newPage('iframe');
  await page.goto(new URL('index.html', site.server.url).href);
  await page.evaluate(() => {
    const frame = document.createElement('iframe');
    frame.src = 'demos/params/index.html';
    frame.title = 'HeadLab parameter budget';
    frame.style.width = '800px';
    frame.style.height = '900px';
    document.body.append(frame);
  });
  const total = page.frameLocator('iframe[title="HeadLab parameter budget"]').locator('[data-testid="params-total"]');
  await total.waitFor({ timeout: 60_000 });
  await expectText(total, '1,048,576');
  await page.close();
  assertNoProblems();
});

test('theme: light on a light course page even when the reader’s system is dark; dark when asked or when the page declares it', { timeout: TIMEOUT }, async () => {
  const context = await site.browser.newContext({ colorScheme: 'dark', viewport: { width: 1000, height: 800 } });
  const cases = [
    { name: 'plain', head: '', attr: '', dark: false },
    { name: 'theme-dark', head: '', attr: ' theme="dark"', dark: true },
    { name: 'theme-auto', head: '', attr: ' theme="auto"', dark: true },
    { name: 'theme-light', head: '<meta name="color-scheme" content="dark">', attr: ' theme="light"', dark: false },
    { name: 'meta-dark', head: '<meta name="color-scheme" content="dark">', attr: '', dark: true },
    { name: 'css-dark', head: '<link rel="stylesheet" href="/__dark.css">', attr: '', dark: true },
    { name: 'light-dark', head: '<meta name="color-scheme" content="light dark">', attr: '', dark: true },
  ];
  await context.route('**/__dark.css', (route) => route.fulfill({ status: 200, contentType: 'text/css', body: ':root { color-scheme: dark; }' }));
  for (const c of cases) {
    await context.route(`**/theme-${c.name}.html`, (route) => route.fulfill({
      status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': STRICT_CSP },
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>theme ${c.name}</title>${c.head}` +
        `<script type="module" src="/headlab-components.js"></script></head><body><headlab-params${c.attr}></headlab-params></body></html>`,
    }));
    const page = watch(await context.newPage(), `theme ${c.name}`, problems);
    await page.goto(new URL(`theme-${c.name}.html`, site.server.url).href);
    await waitForElements(page);
    const bg = await page.evaluate(() => getComputedStyle(document.querySelector('headlab-params')).backgroundColor);
    const [r, g, b] = bg.match(/\d+/g).map(Number);
    const dark = (r + g + b) / 3 < 128;
    assert.equal(dark, c.dark, `${c.name}: the element's background is ${bg}; expected ${c.dark ? 'dark' : 'light'}`);
    await page.close();
  }
  await context.close();
  assertNoProblems();
});

test('the landing page loads the module build over http and the classic build only from file://; its theme toggle works in both', { timeout: TIMEOUT }, async () => {
  for (const [where, url, build, not] of [
    ['http', new URL('index.html', site.server.url).href, 'headlab-components.js', 'headlab-components.classic.js'],
    ['file://', fileUrl('index.html'), 'headlab-components.classic.js', 'headlab-components.js'],
  ]) {
    const page = await newPage(`landing ${where}`);
    const scripts = [];
    page.on('request', (r) => { if (r.resourceType() === 'script') scripts.push(new URL(r.url()).pathname.split('/').pop()); });
    await page.goto(url);
    const toggle = page.locator('headlab-theme-toggle button');
    await toggle.waitFor({ timeout: 20_000 });
    assert.ok(scripts.includes(build), `${where}: ${build} loaded (scripts: ${scripts.join(', ')})`);
    assert.ok(!scripts.includes(not), `${where}: ${not} not loaded (scripts: ${scripts.join(', ')})`);
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    const before = await theme();
    await toggle.click();
    await eventually(async () => assert.notEqual(await theme(), before, `${where}: the toggle changed the page's theme (${before})`));
    await page.close();
  }
  assertNoProblems();
});

test('compact: every element hides its explanations for a course column and keeps working', { timeout: TIMEOUT }, async () => {
  const tags = ['headlab-worked-example', 'headlab-heads', 'headlab-params', 'headlab-scaling', 'headlab-misconceptions', 'headlab-choosing-h'];
  const heights = {};
  for (const compact of [false, true]) {
    const page = await newPage(`compact ${compact}`, 700, 900);
    await page.route('**/compact.html', (route) => route.fulfill({
      status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': STRICT_CSP },
      body: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>compact</title><script type="module" src="/headlab-components.js"></script></head>' +
        `<body style="max-width:640px">${tags.map((t) => `<${t}${compact ? ' compact' : ''}${t === 'headlab-worked-example' ? ' step="all"' : ''}></${t}>`).join('')}</body></html>`,
    }));
    await page.goto(new URL('compact.html', site.server.url).href);
    await waitForElements(page);
    for (const tag of tags) {
      const r = await page.locator(tag).evaluate((e) => ({
        height: e.getBoundingClientRect().height,
        explain: [...e.shadowRoot.querySelectorAll('.explain')].length,
        shown: [...e.shadowRoot.querySelectorAll('.explain')].filter((p) => p.getClientRects().length > 0).length,
      }));
      assert.ok(r.explain > 0, `${tag} marks its explanations`);
      assert.equal(r.shown, compact ? 0 : r.shown, `${tag}: explanations hidden when compact`);
      if (!compact) assert.ok(r.shown > 0, `${tag}: explanations shown by default`);
      (heights[tag] ??= {})[compact] = r.height;
    }
    if (compact) await eventually(async () => assertClose(assert, await numbers(page, 'output'), expected.output, 'compact worked example output'));
    await page.close();
  }
  const lines = tags.map((t) => `${t}: ${Math.round(heights[t].false)} → ${Math.round(heights[t].true)} px`);
  console.log(`# compact heights in a 640 px column: ${lines.join('; ')}`);
  for (const t of tags) assert.ok(heights[t].true < heights[t].false, `${t} is shorter when compact: ${lines.join('; ')}`);
  assertNoProblems();
});

test('the landing page shows a preview of each demo on its card', { timeout: TIMEOUT }, async () => {
  const page = await newPage('landing previews');
  await page.goto(new URL('index.html', site.server.url).href);
  const cards = await page.locator('.demo-list > li').count();
  await page.locator('.demo-list img.preview').last().scrollIntoViewIfNeeded();
  await eventually(async () => {
    const shown = await page.locator('.demo-list img.preview').evaluateAll((imgs) => imgs.map((i) => ({ src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 100 })));
    assert.equal(shown.length, cards, 'one preview per card');
    assert.deepEqual(shown.filter((s) => !s.ok), [], 'every preview loaded');
  });
  await page.close();
  assertNoProblems();
});
