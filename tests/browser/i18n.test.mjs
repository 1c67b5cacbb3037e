// Languages in the browser: every demo page opened with ?lang=es (web/site/page.js sets <html lang>)
// shows its elements with no English message left — in their text, their aria-label / title /
// placeholder / aria-valuetext attributes and their accessibility tree — axe-core finds nothing, and at
// 360 px wide the Spanish elements do not overflow sideways. An element's own `lang` re-renders it live.
//
// "English left" is judged against the catalogues themselves (web/lib/i18n/catalogues/): every
// English message that differs from its Spanish one becomes a pattern (placeholders match anything);
// proper names, numbers and formulas are the same in both languages and so are never looked for.
// Other helpers add their pages to PAGES below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { useSite, watch, waitForElements, ensureScreenshotDir, SCREENSHOTS } from './helpers.mjs';

const TIMEOUT = 240_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The pages checked: `page` under dist/, the catalogues whose messages its elements show
 * (shared.js is always added), and `prepare(page)`, run once the elements are ready, to bring
 * more of them on screen (every step, every part).
 */
export const PAGES = [
  {
    page: 'demos/worked-example/', catalogues: ['worked-example', 'theme-toggle'],
    prepare: (page) => page.evaluate(() => { document.querySelector('headlab-worked-example').setAttribute('step', 'all'); }),
  },
  { page: 'demos/heads/', catalogues: ['heads', 'theme-toggle'] },
  { page: 'demos/params/', catalogues: ['params', 'theme-toggle'] },
  { page: 'demos/scaling/', catalogues: ['scaling', 'theme-toggle'] },
  { page: 'demos/misconceptions/', catalogues: ['misconceptions', 'theme-toggle'] },
  { page: 'demos/choosing-h/', catalogues: ['choosing-h', 'theme-toggle'] },
  // The language model with the trained models side by side, a head off, an unknown word and a continuation.
  {
    page: 'demos/language-model/', catalogues: ['language-model', 'training', 'theme-toggle'],
    prepare: async (page) => {
      const lm = page.locator('headlab-language-model');
      await lm.evaluate((e) => { e.compare = true; e.pretrained = true; });
      await page.waitForFunction(() => document.querySelector('headlab-language-model').snapshot?.runs[1]?.scores.length > 0, null, { timeout: 120_000 });
      await lm.locator('[data-testid="lm-switch-2-1"]').uncheck();
      await page.waitForFunction(() => document.querySelector('headlab-language-model').snapshot.runs[0].allOn, null, { timeout: 60_000 });
      await lm.locator('[data-testid="lm-one-cell-1-2"]').click();
      await lm.locator('[data-testid="lm-text"]').fill('a b zz');
      await lm.locator('[data-testid="lm-text"]').press('Enter');
      await page.waitForFunction(() => document.querySelector('headlab-language-model').shadowRoot.querySelector('[data-testid="lm-text-error"]').textContent !== '');
      await lm.locator('[data-action="generate"]').click();
      await page.waitForFunction(() => document.querySelector('headlab-language-model').shadowRoot.querySelector('[data-testid="lm-generated-new"]'));
    },
  },
  // The english task: its shipped model and the relations view of the example sentence (the same page, another path).
  {
    page: 'demos/language-model/index.html', catalogues: ['language-model', 'training', 'theme-toggle'],
    prepare: async (page) => {
      await page.locator('headlab-language-model').evaluate((e) => { e.task = 'english'; e.pretrained = true; });
      await page.waitForFunction(() => document.querySelector('headlab-language-model').shadowRoot.querySelector('[data-testid="lm-relations"]').dataset.state === 'ready',
        null, { timeout: 120_000 });
    },
  },
  // The trainer, h = 1 and h = 2 side by side, a few steps in, a head off (and the heads view it can fill).
  {
    page: 'demos/trainer/', catalogues: ['trainer', 'training', 'heads', 'theme-toggle'],
    prepare: async (page) => {
      const tr = page.locator('headlab-trainer');
      await tr.locator('[data-testid="trainer-compare"]').check();
      await page.waitForFunction(() => document.querySelector('headlab-trainer').shadowRoot.querySelectorAll('section.run').length === 2);
      for (let i = 0; i < 3; i++) await tr.locator('[data-action="step"]').click();
      await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot?.runs[0].step >= 3);
      await tr.locator('[data-testid="trainer-switch-2-1"]').uncheck();
      await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot.runs[1].allOn);
    },
  },
  // The model explorer with a head open and switched off.
  {
    page: 'demos/real-models/', catalogues: ['model-explorer', 'theme-toggle'],
    prepare: async (page) => {
      const x = page.locator('headlab-model-explorer');
      await x.locator('[data-testid="explorer-cell-2-1"]').click();
      await x.locator('[data-action="toggle-head"]').click();
      await page.waitForFunction(() => document.querySelector('headlab-model-explorer').results?.baseline, null, { timeout: 60_000 });
    },
  },
];

const folder = new URL('../../web/lib/i18n/catalogues/', import.meta.url);
const catalogueNames = readdirSync(folder).filter((f) => f.endsWith('.js')).map((f) => f.replace(/\.js$/, ''));
const catalogues = Object.fromEntries(await Promise.all(catalogueNames.map(async (name) => [name, (await import(new URL(`${name}.js`, folder))).default])));

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Patterns of the English messages of `names` that a Spanish page must not show: each message's
 * literal text (at least 3 letters of it) with its {placeholders} matching anything, bounded by
 * non-letters so that "Model" does not match inside "Modelo".
 */
function englishPatterns(names) {
  const out = [];
  for (const name of ['shared', ...names]) {
    const { en, es } = catalogues[name];
    for (const [key, english] of Object.entries(en)) {
      if (english === es[key]) continue;
      const literal = english.replace(/\{\w+\}/g, ' ');
      if ((literal.match(/\p{L}/gu) ?? []).length < 3) continue;
      // Whitespace as in the message (so "Head {h}" does not match "HeadLab"), none needed at the ends.
      const parts = english.split(/\{\w+\}/).map((part) => escape(part).replace(/\s+/g, '\\s+'));
      parts[0] = parts[0].replace(/^(\\s\+)+/, '');
      parts[parts.length - 1] = parts[parts.length - 1].replace(/(\\s\+)+$/, '');
      const body = parts.join('[\\s\\S]+?');
      // Every run of non-space characters of the message's literal text, each of which a match must
      // hold as it is: a text that lacks one is passed over without the pattern, whose lazy gaps
      // cost seconds on the long texts of a page (the whole check took 20 of 25 s on real-models).
      const words = english.split(/\{\w+\}|\s+/).filter(Boolean);
      out.push({ key: `${name}: ${key}`, english, words, re: new RegExp(`(?<!\\p{L})${body}(?!\\p{L})`, 'u') });
    }
  }
  return out;
}

/**
 * The text of every element (and text node) in the page's HeadLab elements, shadow roots included,
 * and their labelling attributes. KaTeX's output (formulas, and the LaTeX source it keeps) is left out.
 */
function collectTexts() {
  const ATTRS = ['aria-label', 'title', 'placeholder', 'aria-valuetext', 'alt', 'aria-description', 'aria-roledescription'];
  const out = [];
  const seen = new Set();
  const add = (where, text) => {
    const t = text.replace(/\s+/g, ' ').trim();
    if (t && !seen.has(t)) { seen.add(t); out.push({ where, text: t }); }
  };
  const skip = (node) => node.nodeType === 1 && (node.localName === 'style' || node.localName === 'script' || node.classList?.contains('katex'));
  const textOf = (node) => (node.nodeType === 3 ? node.textContent : skip(node) ? ' ' : [...node.childNodes].map(textOf).join(''));
  const visit = (node, where) => {
    for (const child of node.childNodes) {
      if (child.nodeType === 3) add(where, child.textContent);
      if (child.nodeType !== 1 || skip(child)) continue;
      for (const a of ATTRS) if (child.hasAttribute(a)) add(`${where} [${a}]`, child.getAttribute(a));
      // A whole element's text catches messages split over several nodes (a token in <q>, a subscript).
      if (/^(p|li|h[1-6]|label|button|caption|th|td|legend|summary|option|output|strong|span|div|figcaption|title|text)$/.test(child.localName)) add(where, textOf(child));
      if (child.shadowRoot) visit(child.shadowRoot, child.localName);
      visit(child, where);
    }
  };
  for (const host of document.querySelectorAll('*')) {
    if (!host.localName.startsWith('headlab-')) continue;
    for (const a of ['aria-label', 'title']) if (host.hasAttribute(a)) add(host.localName, host.getAttribute(a));
    if (host.shadowRoot) visit(host.shadowRoot, host.localName);
  }
  return out;
}

async function englishLeft(page, patterns) {
  const texts = await page.evaluate(collectTexts);
  const hosts = await page.evaluate(() => [...document.querySelectorAll('*')].filter((e) => e.localName.startsWith('headlab-')).map((e) => e.localName));
  for (const tag of new Set(hosts)) {
    for (const [i, snapshot] of (await Promise.all((await page.locator(tag).all()).map((l) => l.ariaSnapshot()))).entries()) {
      for (const line of snapshot.split('\n')) texts.push({ where: `${tag}#${i + 1} accessibility tree`, text: line.trim() });
    }
  }
  // One line per English message found (its shortest text), so a message repeated in many places reads once.
  const byKey = new Map();
  for (const { where, text } of texts) {
    for (const p of patterns) {
      if (!p.words.every((w) => text.includes(w)) || !p.re.test(text)) continue;
      const seen = byKey.get(p.key);
      if (!seen || text.length < seen.text.length) byKey.set(p.key, { where, text, p, n: (seen?.n ?? 0) + 1 });
      else seen.n += 1;
    }
  }
  const found = [...byKey.values()].map(({ where, text, p, n }) => `${where}: "${text.slice(0, 160)}" matches English ${p.key} ("${p.english.slice(0, 80)}")${n > 1 ? ` and ${n - 1} more texts` : ''}`);
  return { found, count: texts.length };
}

const site = useSite();

for (const { page: pagePath, catalogues: names, prepare } of PAGES) {
  test(`${pagePath}?lang=es shows no English message; at 360 px nothing overflows sideways`, { timeout: TIMEOUT }, async () => {
    const problems = [];
    const page = await site.browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, pagePath, problems);
    // A missing Spanish message throws instead of falling back to English.
    await page.addInitScript(() => { globalThis.HEADLAB_I18N_STRICT = true; });
    await page.goto(site.url(`${pagePath}?lang=es`));
    await waitForElements(page, 120_000);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'es');
    await prepare?.(page);
    await waitForElements(page, 120_000);
    const patterns = englishPatterns(names);
    const { found, count } = await englishLeft(page, patterns);
    assert.ok(count > 20, `${pagePath}: only ${count} texts collected`);
    assert.deepEqual(found, [], `${pagePath}: English left in Spanish:\n${found.join('\n')}`);
    // The Spanish labels still name what they label (axe-core, as tests/browser/a11y.test.mjs runs it in English).
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
      .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' > ')).join(' | ')}`));
    assert.deepEqual(violations, [], `${pagePath} in Spanish: axe violations`);

    await page.setViewportSize({ width: 360, height: 800 });
    // Elements redraw their figures for the new width on a ResizeObserver: wait for the idle state again.
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))));
    await waitForElements(page, 120_000);
    const overflow = await page.evaluate(overflowAt360);
    if (pagePath === PAGES[0].page || process.env.HEADLAB_I18N_SCREENSHOTS) {
      ensureScreenshotDir();
      await page.screenshot({ path: path.join(SCREENSHOTS, `i18n-es-360-${pagePath.split('/').filter(Boolean).pop()}.png`), fullPage: true });
    }
    assert.deepEqual(overflow, [], `${pagePath} in Spanish at 360 px:\n${overflow.join('\n')}`);
    // A language 30 % longer than English still fits: every word of the elements' text made 30 % longer again.
    await page.evaluate(stretchWords);
    const stretched = await page.evaluate(overflowAt360);
    assert.deepEqual(stretched, [], `${pagePath} with every word 30 % longer at 360 px:\n${stretched.join('\n')}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

/** Every word of the text in the HeadLab elements' shadow roots (not formulas, not figures) made 30 % longer. */
function stretchWords() {
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === 3) child.textContent = child.textContent.replace(/\p{L}{2,}/gu, (w) => w + w.slice(0, Math.round(w.length * 0.3)));
      else if (child.nodeType === 1 && !['style', 'script', 'svg'].includes(child.localName) && !child.classList.contains('katex')) {
        if (child.shadowRoot) walk(child.shadowRoot);
        walk(child);
      }
    }
  };
  for (const host of document.querySelectorAll('*')) if (host.localName.startsWith('headlab-') && host.shadowRoot) walk(host.shadowRoot);
}

/** What sticks out sideways at the current (360 px) width: the page, each element, anything in its shadow root. */
function overflowAt360() {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) out.push(`the page is ${root.scrollWidth} px wide in a ${root.clientWidth} px window`);
  for (const e of document.querySelectorAll('*')) {
    if (!e.localName.startsWith('headlab-') || e.localName === 'headlab-theme-toggle') continue;
    if (e.scrollWidth > e.clientWidth) out.push(`${e.localName}: scrollWidth ${e.scrollWidth} > clientWidth ${e.clientWidth}`);
    const box = e.getBoundingClientRect();
    if (box.right > root.clientWidth + 0.5) out.push(`${e.localName} reaches x = ${box.right} in a ${root.clientWidth} px window`);
    // What sticks out of the element's own box, inside its shadow root (scroll boxes clip what they hold).
    const right = box.right;
    const walk = (node, clipped) => {
      for (const child of node.children) {
        const style = getComputedStyle(child);
        if (style.display === 'none' || child.closest('[hidden]')) continue;
        const r = child.getBoundingClientRect();
        if (!clipped && r.width > 0 && r.right > right + 1) out.push(`${e.localName} › ${child.localName}${child.className ? `.${String(child.className).split(' ')[0]}` : ''} "${(child.textContent ?? '').trim().slice(0, 50)}" ends at ${Math.round(r.right)} > ${Math.round(right)}`);
        const clips = clipped || /(auto|scroll|hidden|clip)/.test(style.overflowX);
        walk(child, clips);
      }
    };
    if (e.shadowRoot) walk(e.shadowRoot, false);
  }
  return [...new Set(out)].slice(0, 20);
}

test('an element follows its own lang attribute, live, and English stays as it was', { timeout: TIMEOUT }, async () => {
  const problems = [];
  const page = await site.browser.newPage({ viewport: { width: 1280, height: 900 } });
  watch(page, 'scaling', problems);
  await page.addInitScript(() => { globalThis.HEADLAB_I18N_STRICT = true; });
  await page.goto(site.url('demos/scaling/'));
  await waitForElements(page, 120_000);
  const { en, es } = catalogues.scaling;
  const heading = page.locator('headlab-scaling h2');
  const reroll = page.locator('headlab-scaling button', { hasText: es['scaling.reroll'] });
  assert.equal((await heading.textContent()).trim(), `${en['scaling.title']}k`);
  await page.locator('headlab-scaling').evaluate((e) => e.setAttribute('lang', 'es-ES'));
  await waitForElements(page, 120_000);
  assert.equal((await heading.textContent()).trim(), `${es['scaling.title']}k`);
  assert.equal(await reroll.count(), 1);
  // Numbers follow: the variance stat is written with a decimal comma.
  const variance = await page.locator('[data-testid="stat-variance"] .v.scaled').textContent();
  assert.match(variance, /^\d+,\d{2}$/, `Spanish variance "${variance}"`);
  const { found } = await englishLeft(page, englishPatterns(['scaling']).filter((p) => !p.key.startsWith('theme-toggle')));
  assert.deepEqual(found.filter((f) => f.startsWith('headlab-scaling')), []);
  // Without its own lang the element speaks the page's language (en) again.
  await page.locator('headlab-scaling').evaluate((e) => { e.removeAttribute('lang'); });
  await waitForElements(page, 120_000);
  assert.equal((await heading.textContent()).trim(), `${en['scaling.title']}k`);
  assert.match(await page.locator('[data-testid="stat-variance"] .v.scaled').textContent(), /^\d+\.\d{2}$/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('switching the worked example to Spanish keeps an edited cell and its results, written with decimal commas', { timeout: TIMEOUT }, async () => {
  const problems = [];
  const page = await site.browser.newPage({ viewport: { width: 1280, height: 900 } });
  watch(page, 'worked example', problems);
  await page.addInitScript(() => { globalThis.HEADLAB_I18N_STRICT = true; });
  await page.goto(site.url('demos/worked-example/#worked.step=all'));
  await waitForElements(page, 120_000);
  await page.fill('#x-2-0', '2');  // "it" more of an entity: every later number changes
  const output = () => page.locator('[data-testid="output"] td').allTextContents();
  await page.waitForFunction(() => document.querySelector('headlab-worked-example').shadowRoot.querySelector('#x-2-0').value === '2');
  const english = await output();
  const { es } = catalogues['worked-example'];
  await page.locator('headlab-worked-example').evaluate((e) => e.setAttribute('lang', 'es'));
  await page.locator('headlab-worked-example h2', { hasText: es['we.title'] }).waitFor();
  assert.equal(await page.inputValue('#x-2-0'), '2', 'the edited cell survives the rebuild');
  assert.equal(await page.getAttribute('headlab-worked-example', 'step'), 'all');
  const spanish = await output();
  assert.ok(spanish.every((text) => /^-?\d+,\d{4}$/.test(text.trim())), `Spanish output: ${spanish.join(' ')}`);
  assert.deepEqual(spanish.map((text) => text.replace(',', '.')), english, 'the same numbers, with a decimal comma');
  assert.deepEqual(problems, []);
  await page.close();
});
