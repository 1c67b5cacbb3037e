// A fast first picture (issue 23): the module build loads each element's code on first use, shows a
// sized "Loading …" skeleton until then, and nothing below an element moves when it fills in.
//  - A page with only <headlab-worked-example> requests its code and none of another element's
//    (the chunks only other elements import, from the import graph of dist/).
//  - A page with only <headlab-language-model> loads no KaTeX (code or fonts) and leaves the training
//    module to its Worker (the page fetches its .wasm early, for the Worker to find in the HTTP cache).
//  - The worked example's formulas are typeset at build time: its page loads no KaTeX code, in either
//    language; with KaTeX's fonts held back it is interactive, its formulas (KaTeX's HTML and MathML,
//    as katex.render makes them in the page) in place but unseen, and once the fonts arrive they are shown and
//    nothing moves.
//  - Every element is a skeleton saying "Loading …" at the first frame after headlab-components.js
//    runs, as tall as the element will be (reserved-heights.js); the time is printed.
//  - Layout shift: the paragraph under the element stays where it was while the element loads and
//    draws, and the page's cumulative layout shift (PerformanceObserver 'layout-shift') is ~0.
//  - A refused headlab-chunk-*.js (404) replaces the skeleton with the reason, in words.
//  - On a throttled link (1.6 Mbit/s, 150 ms RTT), the time until the worked example is interactive
//    and the language model's controls appear, printed (bench/first-picture.mjs asserts nothing
//    either: it writes the times and whether the goals, 2 s and 4 s, are met).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DIST, REPO, useSite, watch, ensureScreenshotDir, SCREENSHOTS } from './helpers.mjs';
import { SCENARIOS, PAGES, measure, pageServer } from '../../tools/first-picture.mjs';
import { stepTex } from '../../web/components/worked-example/formulas.js';
import { translator } from '../../web/lib/i18n/index.js';
import workedExampleMessages from '../../web/lib/i18n/catalogues/worked-example.js';

const site = useSite();
const ELEMENTS = ['worked-example', 'heads', 'params', 'scaling', 'misconceptions', 'choosing-h', 'trainer', 'language-model', 'model-explorer'];

/** The files a module in dist/ imports statically, itself included, transitively. */
function staticClosure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(path.join(DIST, file), 'utf8');
  for (const m of text.matchAll(/(?:from|import)\s*"\.\/([\w.-]+\.js)"/g)) staticClosure(m[1], seen);
  return seen;
}

/** Whether a file of dist/ holds KaTeX's code (its own error message). */
const carriesKatex = (file) => readFileSync(path.join(DIST, file), 'utf8').includes('KaTeX parse error');

/** A page at `name` on the site with `body`, loading `script` (the registrar by default). */
async function openPage(label, { name, body, script = '/headlab-components.js', blocking = false, viewport = { width: 1280, height: 2400 }, setup, problems = [], waitUntil = 'load' }) {
  const page = watch(await site.browser.newPage({ viewport }), label, problems);
  await page.addInitScript(() => {
    // Layout shifts, and the first frame after the registrar added its skeleton style.
    window.__shifts = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push({ value: e.value, at: e.startTime });
    }).observe({ type: 'layout-shift', buffered: true });
    new MutationObserver((records, observer) => {
      if (!records.some((r) => [...r.addedNodes].some((n) => n.dataset?.headlabSkeleton !== undefined))) return;
      observer.disconnect();
      const defined = performance.now();
      requestAnimationFrame(() => {
        window.__skeleton = {
          defined,
          ms: performance.now() - defined,
          elements: [...document.body.children].filter((e) => e.localName.startsWith('headlab-')).map((e) => ({
            tag: e.localName, defined: Boolean(customElements.get(e.localName)), text: getComputedStyle(e, '::before').content,
            height: e.getBoundingClientRect().height, reserved: Number(e.getAttribute('data-headlab-reserved') ?? 0),
          })),
          below: document.getElementById('below')?.getBoundingClientRect().top,
        };
      });
    }).observe(document, { childList: true, subtree: true });
  });
  await setup?.(page);
  await page.route(`**/${name}`, (route) => route.fulfill({
    contentType: 'text/html; charset=utf-8',
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${label}</title>` +
      `<script type="module"${blocking ? ' blocking="render"' : ''} src="${script}"></script></head><body>${body}<p id="below">The course text below the demo.</p></body></html>`,
  }));
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname.slice(1)));
  await page.goto(site.url(name), { waitUntil });
  return { page, requests, problems };
}

test('a page with only the worked example loads its code and no other element\'s', { timeout: 120_000 }, async () => {
  const own = new Set([...staticClosure('headlab-components.js'), ...staticClosure('headlab-worked-example.js')]);
  const othersOnly = new Set();
  for (const name of ELEMENTS.filter((n) => n !== 'worked-example')) {
    for (const f of staticClosure(`headlab-${name}.js`)) if (!own.has(f)) othersOnly.add(f);
  }
  assert.ok(othersOnly.size >= 9, `the other elements have code of their own: ${[...othersOnly].join(', ')}`);
  const { page, requests, problems } = await openPage('worked example alone', { name: 'only-worked-example.html', body: '<headlab-worked-example></headlab-worked-example>' });
  await page.waitForSelector('headlab-worked-example[data-drawn]', { timeout: 30_000 });
  const js = requests.filter((f) => f.endsWith('.js'));
  assert.ok(js.includes('headlab-worked-example.js'), `the element's entry was loaded: ${js.join(', ')}`);
  const stray = js.filter((f) => othersOnly.has(f));
  assert.deepEqual(stray, [], `no other element's code was requested (requested: ${js.join(', ')})`);
  const bytes = (files) => files.reduce((n, f) => n + readFileSync(path.join(DIST, f)).length, 0);
  console.log(`# worked example alone: ${js.length} scripts, ${(bytes(js.filter((f) => !f.includes('/'))) / 1024).toFixed(0)} KiB ` +
    `(every element: ${(bytes([...new Set(ELEMENTS.flatMap((n) => [...staticClosure(`headlab-${n}.js`)]))]) / 1024).toFixed(0)} KiB), minified, before compression`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a page with only the language model: no KaTeX, and the training module only in its Worker, started with the element and fetched early', { timeout: 120_000 }, async () => {
  // KaTeX's own code has this message; the language model typesets no formula.
  const katexFiles = [...staticClosure('headlab-language-model.js')].filter(carriesKatex);
  assert.deepEqual(katexFiles, [], 'the language model\'s code carries no KaTeX');
  assert.ok([...staticClosure('headlab-params.js')].some(carriesKatex), 'the parameter budget\'s does (the check finds KaTeX where it is)');
  const { page, problems } = await openPage('language model alone', { name: 'only-language-model.html', body: '<headlab-language-model></headlab-language-model>' });
  await page.waitForSelector('headlab-language-model[data-drawn]', { timeout: 60_000 });
  // The page's own resource timing (a Worker's requests are the Worker's).
  const own = await page.evaluate(() => performance.getEntriesByType('resource').map((r) => ({ file: new URL(r.name).pathname.slice(1), by: r.initiatorType })));
  assert.equal(await page.evaluate(() => document.querySelector('headlab-language-model').runsIn), 'worker');
  const list = own.map((r) => `${r.file} (${r.by})`).join(', ');
  assert.deepEqual(own.filter((r) => /katex/.test(r.file)), [], `no KaTeX font on the page (it fetched ${list})`);
  // The registrar fetches the training module for the Worker's HTTP cache; the page's API never loads it.
  assert.deepEqual(own.filter((r) => /headlab_train/.test(r.file) && r.by !== 'fetch'), [], `the training module only fetched, for the Worker (${list})`);
  assert.ok(own.some((r) => r.file === 'headlab_train.wasm'), `the training module fetched early (${list})`);
  const pageLab = await page.evaluate(async () => (await (await import(new URL('/headlab-lab.js', location.href).href)).getLab()).info());
  assert.equal(pageLab.trainingLoaded, false, 'the page\'s API did not load the training module');
  assert.deepEqual(problems, []);
  await page.close();
});

for (const lang of ['en', 'es']) {
  test(`worked example (${lang}): no KaTeX code; interactive with KaTeX's fonts held back, its formulas shown when they arrive, nothing moving`, { timeout: 120_000 }, async () => {
    const t = translator([workedExampleMessages], lang);
    let release;
    const fontsHeld = new Promise((resolve) => { release = resolve; });
    const held = [];
    const { page, requests, problems } = await openPage(`worked example, fonts held (${lang})`, {
      name: `fonts-held-${lang}.html`, body: `<headlab-worked-example step="all" lang="${lang}"></headlab-worked-example>`, waitUntil: 'domcontentloaded',
      setup: (p) => p.route(/\/katex\/fonts\/[\w-]+\.woff2$/, async (route) => {
        held.push(new URL(route.request().url()).pathname.split('/').pop());
        await fontsHeld;
        await route.continue();
      }),
    });
    const element = page.locator('headlab-worked-example');
    await page.waitForSelector('headlab-worked-example[data-drawn]', { timeout: 30_000 });
    const layout = () => page.evaluate(() => {
      const e = document.querySelector('headlab-worked-example');
      return {
        height: e.getBoundingClientRect().height, below: document.getElementById('below').getBoundingClientRect().top,
        formulas: [...e.shadowRoot.querySelectorAll('.tex')].map((f) => {
          const r = f.getBoundingClientRect();
          return { height: r.height, width: r.width, opacity: getComputedStyle(f).opacity };
        }),
      };
    });
    const before = await layout();
    assert.ok(held.length >= 2, `KaTeX's fonts were asked for and held back: ${held.join(', ')}`);
    assert.equal(await element.getAttribute('data-formulas'), 'loading');
    assert.ok(before.formulas.length >= 30 && before.formulas.every((f) => f.opacity === '0' && f.height > 10),
      `every formula is in place, unseen: ${JSON.stringify(before.formulas.slice(0, 3))}`);
    // KaTeX's DOM for the TeX, as KaTeX itself makes it in this page (katex.render, its own build, added
    // inline now: no request); screen readers get its MathML. Compared node by node: name, namespace,
    // attributes, style, text.
    const tex = [...Array(10)].map((_, i) => stepTex(i + 1, t));
    await page.addScriptTag({ path: path.join(REPO, 'node_modules/katex/dist/katex.min.js') });
    const { shown, expected } = await page.evaluate((sources) => {
      const norm = (node) => {
        if (node.nodeType === 3) return JSON.stringify(node.data);
        const attrs = [...node.attributes].filter((a) => a.name !== 'style' && !(a.name === 'class' && a.value === ''))
          .map((a) => `${a.name}=${a.value}`).sort().join(' ');
        return `<${node.namespaceURI} ${node.localName} ${attrs} style=${node.style?.cssText ?? ''}>${[...node.childNodes].map(norm).join('')}</>`;
      };
      const steps = [...document.querySelector('headlab-worked-example').shadowRoot.querySelectorAll('section.step')];
      return {
        shown: steps.map((st) => [...st.querySelectorAll('.formula .tex--display')].map((f) => ({ dom: norm(f.firstChild), nodes: f.childNodes.length, math: f.querySelectorAll('.katex-mathml math').length }))),
        expected: sources.map((step) => step.map((src) => {
          const span = document.createElement('span');
          window.katex.render(src, span, { displayMode: true, throwOnError: false, output: 'htmlAndMathml', strict: 'ignore', trust: false });
          return norm(span.firstChild);
        })),
      };
    }, tex);
    shown.forEach((formulas, i) => {
      assert.equal(formulas.length, tex[i].length, `step ${i + 1}: ${tex[i].length} display formulas`);
      formulas.forEach((f, k) => {
        assert.equal(f.math, 1, `step ${i + 1}, formula ${k + 1}: MathML`);
        assert.equal(f.nodes, 1, `step ${i + 1}, formula ${k + 1}: one KaTeX tree`);
        assert.equal(f.dom, expected[i][k], `step ${i + 1}, formula ${k + 1} (${tex[i][k]}) is KaTeX's DOM`);
      });
    });
    // Interactive: the first head's weight for "it" on "ball" follows an edited embedding.
    const weight = async () => Number((await page.locator('[data-testid="weights-head-1"] td.num').first().textContent()).trim());
    const w0 = await weight();
    await page.locator('headlab-worked-example input#x-2-0').fill('2');
    await page.waitForFunction((w) => Number(document.querySelector('headlab-worked-example').shadowRoot
      .querySelector('[data-testid="weights-head-1"] td.num').textContent.trim()) !== w, w0, { timeout: 10_000 });
    assert.equal(await element.getAttribute('data-formulas'), 'loading', 'still waiting for the fonts');
    release();
    await page.waitForSelector('headlab-worked-example[data-formulas="ready"]', { timeout: 20_000 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const after = await layout();
    assert.ok(after.formulas.every((f) => f.opacity === '1'), 'the formulas are shown');
    const moved = before.formulas.map((f, i) => [i, f.height, after.formulas[i].height]).filter(([, a, b]) => Math.abs(a - b) > 0.5);
    assert.deepEqual(moved, [], 'no formula changed height when the fonts arrived ([index, before, after])');
    assert.ok(Math.abs(after.below - before.below) <= 1, `the text below stayed put (${before.below} → ${after.below} px)`);
    const js = requests.filter((f) => f.endsWith('.js'));
    assert.deepEqual(js.filter((f) => !f.includes('/') && carriesKatex(f)), [], `no KaTeX code requested (${js.join(', ')})`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

for (const viewport of [{ width: 1280, height: 2400 }, { width: 360, height: 2400 }]) {
  test(`every element is a sized "Loading …" skeleton at the first frame, and fills in without a layout shift (${viewport.width} px)`, { timeout: 240_000 }, async () => {
    // Each element's code is held back 1.5 s, so the skeleton is what the page shows meanwhile.
    const body = ELEMENTS.map((n) => `<headlab-${n}></headlab-${n}>`).join('\n');
    const { page, problems } = await openPage(`skeletons ${viewport.width}`, {
      // blocking="render": the first paint waits for the registrar (4 KiB), so it already shows the skeletons;
      // without it a first paint may show the page without the elements' room, and the text below moves once.
      name: `skeletons-${viewport.width}.html`, body, viewport, blocking: true,
      setup: (p) => p.route(new RegExp(`/headlab-(${ELEMENTS.join('|')})\\.js$`), async (route) => {
        await new Promise((r) => setTimeout(r, 1500));
        await route.continue();
      }),
    });
    await page.waitForFunction(() => window.__skeleton !== undefined, null, { timeout: 20_000 });
    const skeleton = await page.evaluate(() => window.__skeleton);
    console.log(`# ${viewport.width} px: skeletons drawn ${skeleton.ms.toFixed(1)} ms after headlab-components.js defined the elements`);
    assert.equal(skeleton.elements.length, ELEMENTS.length);
    for (const e of skeleton.elements) {
      assert.equal(e.defined, false, `${e.tag}: its code is still loading`);
      assert.match(e.text, /Loading …/, `${e.tag} says "Loading …"`);
      assert.ok(e.reserved > 300 && Math.abs(e.height - e.reserved) <= 1, `${e.tag}: ${e.height} px tall, the ${e.reserved} px it will take`);
    }
    ensureScreenshotDir();
    await page.screenshot({ path: path.join(SCREENSHOTS, `first-picture-skeletons-${viewport.width}.png`) });
    await page.waitForFunction(() => [...document.body.children].filter((e) => e.localName.startsWith('headlab-')).every((e) => e.hasAttribute('data-drawn')), null, { timeout: 120_000 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const after = await page.evaluate(() => ({
      below: document.getElementById('below').getBoundingClientRect().top,
      heights: [...document.body.children].filter((e) => e.localName.startsWith('headlab-')).map((e) => [e.localName, e.getBoundingClientRect().height]),
      cls: window.__shifts.reduce((s, e) => s + e.value, 0),
      shifts: window.__shifts,
    }));
    console.log(`# ${viewport.width} px: cumulative layout shift ${after.cls.toFixed(4)}; text below at ${skeleton.below.toFixed(0)} px, then ${after.below.toFixed(0)} px`);
    const moved = after.heights.map(([tag, h], i) => `${tag} ${skeleton.elements[i].height.toFixed(0)} → ${h.toFixed(0)} px`).join(', ');
    assert.ok(Math.abs(after.below - skeleton.below) <= 2, `the text below stayed put (${skeleton.below} → ${after.below}): ${moved}`);
    // ≈ 0 ("good" is < 0.1): what remains are a few lines inside elements at 360 px after their first draw.
    assert.ok(after.cls < 0.01, `cumulative layout shift ${after.cls} (${JSON.stringify(after.shifts)}): ${moved}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('a refused headlab-chunk-*.js: the skeleton says in words that part of the code did not load', { timeout: 120_000 }, async () => {
  const chunk = [...staticClosure('headlab-worked-example.js')].find((f) => f.startsWith('headlab-chunk-') && !staticClosure('headlab-components.js').has(f));
  assert.ok(chunk, 'the worked example has a chunk of its own');
  const problems = [];
  const { page } = await openPage('refused chunk', {
    name: 'refused-chunk.html', body: '<headlab-worked-example></headlab-worked-example>', problems,
    setup: (p) => p.route(`**/${chunk}`, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'Not found' })),
  });
  const alert = page.locator('headlab-worked-example [role="alert"]');
  await alert.waitFor({ timeout: 20_000 });
  const text = await alert.textContent();
  assert.match(text, new RegExp(`This demo could not start: part of its code \\(${chunk.replace('.', '\\.')}, HTTP 404\\) did not load\\.`));
  assert.match(text, /headlab-chunk-\*\.js/);
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('headlab-worked-example'), '::before').content), 'none', 'no "Loading …" left');
  ensureScreenshotDir();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'first-picture-refused-chunk.png') });
  // The browser reports the 404 itself; nothing else.
  assert.deepEqual(problems.filter((p) => !new RegExp(`(HTTP 404 for|Failed to load resource).*|${chunk}`).test(p)), []);
  await page.close();
});

test('on a throttled link: the time until the worked example is interactive and the language model\'s controls appear (printed)', { timeout: 300_000 }, async (t) => {
  const pages = await pageServer(site.server.url, PAGES);
  t.after(() => pages.close());
  for (const scenario of SCENARIOS.filter((sc) => sc.page)) {
    const r = await measure(site.browser, pages.url, scenario);
    console.log(`# ${scenario.name}: skeleton at ${r.skeleton?.toFixed(0)} ms, drawn at ${r.drawn.toFixed(0)} ms ` +
      `(goal ${scenario.goal} ms), ${(r.bytes / 1024).toFixed(0)} KiB in ${r.requests} requests`);
    assert.ok(r.skeleton <= r.drawn, `${scenario.name}: the skeleton came first`);
    assert.ok(r.bytes > 0 && r.requests > 2);
  }
});
