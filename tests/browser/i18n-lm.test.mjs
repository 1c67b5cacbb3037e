// The training and model elements in Spanish, in headless Chromium: each demo page served with
// <html lang="es"> (demos/language-model, demos/trainer, demos/real-models), its element brought
// into states that show most of its messages (a trained model, side by side, a head switched off,
// an unknown word, a continuation, a refused file ...), then no English message of its catalogues
// (one that differs from its Spanish) may be left in its text, its aria attributes or its
// accessibility tree; numbers carry the decimal comma; at 360 px nothing overflows sideways.
// A `lang` set on the element after it was drawn redraws it in that language, keeping its model.
// Screenshots of the Spanish pages at 360 and 1280 px go to tests/browser/screenshots/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DIST, SCREENSHOTS, ensureScreenshotDir, watch, useSite } from './helpers.mjs';
import { eventually, expectText } from './expect.mjs';
import shared from '../../web/lib/i18n/catalogues/shared.js';
import training from '../../web/lib/i18n/catalogues/training.js';
import languageModel from '../../web/lib/i18n/catalogues/language-model.js';
import trainer from '../../web/lib/i18n/catalogues/trainer.js';
import modelExplorer from '../../web/lib/i18n/catalogues/model-explorer.js';

const TIMEOUT = 180_000;
const problems = [];
const site = useSite({ csp: true }, { setup: () => ensureScreenshotDir() });

/**
 * The English of `catalogues` that must not show in Spanish: for every key whose English differs from its
 * Spanish, the pieces of the English between placeholders (bold marks removed) that the Spanish does not contain.
 */
function englishPieces(catalogues) {
  const pieces = new Set();
  for (const c of catalogues) {
    for (const [key, en] of Object.entries(c.en)) {
      const es = c.es[key];
      if (en === es) continue;
      for (const raw of en.replaceAll('**', '').split(/\{\w+\}/)) {
        const piece = raw.trim().replace(/^[,.:;·]\s*/, '').replace(/[,.:;]$/, '').trim();
        if (piece.length >= 4 && /[a-z]{3}/i.test(piece) && !es.includes(piece)) pieces.add(piece);
      }
    }
  }
  return [...pieces];
}

/** The element's text nodes, aria attributes and titles (through nested shadow roots), and its accessibility tree. */
async function whatItSays(page, tag) {
  const { texts, attrs } = await page.evaluate((t) => {
    const out = { texts: [], attrs: [] };
    const walk = (root) => {
      const tw = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      for (let n = tw.currentNode; n; n = tw.nextNode()) {
        if (n.nodeType === Node.TEXT_NODE) {
          const v = n.textContent.trim();
          if (v && !n.parentElement?.closest('style, script')) out.texts.push(v);
        } else if (n.nodeType === Node.ELEMENT_NODE) {
          for (const a of ['aria-label', 'aria-description', 'aria-valuetext', 'title', 'placeholder', 'alt', 'data-off']) {
            const v = n.getAttribute(a);
            if (v) out.attrs.push(v);
          }
          if (n.shadowRoot) walk(n.shadowRoot);
        }
      }
    };
    walk(document.querySelector(t).shadowRoot);
    return out;
  }, tag);
  const tree = await page.locator(tag).ariaSnapshot();
  return { texts, attrs, tree };
}

/** The English pieces found in what the element says, with where. */
function englishLeft(said, pieces) {
  const all = [...said.texts, ...said.attrs];
  const found = [];
  for (const piece of pieces) {
    const long = piece.length >= 16;
    const inText = all.find((s) => (long ? s.includes(piece) : s === piece));
    const inTree = long ? said.tree.includes(piece) : new RegExp(`"${piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"|: ${piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').test(said.tree);
    if (inText || inTree) found.push(`“${piece}” in ${inText ? `“${inText.slice(0, 160)}”` : 'the accessibility tree'}`);
  }
  return found;
}

async function openSpanish(relative, { width = 1280, hash = '' } = {}) {
  const page = watch(await site.browser.newPage({ viewport: { width, height: 900 } }), `es ${relative}`, problems);
  page.on('filechooser', () => {});  // Playwright takes file choosers only while a listener is on
  // The page as a Spanish course would serve it: <html lang="es">.
  await page.route(/\/demos\/.*index\.html/, async (route) => {
    const response = await route.fetch();
    route.fulfill({ response, body: (await response.text()).replace(/<html lang="en">/, '<html lang="es">') });
  });
  await page.goto(new URL(`${relative}index.html${hash}`, site.server.url).href);
  return page;
}

const overflow = (page, tag) => page.evaluate((t) => {
  const e = document.querySelector(t);
  return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, element: e.scrollWidth - e.clientWidth };
}, tag);

function assertNoProblems() {
  const found = problems.splice(0);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

const LM = 'headlab-language-model';

/** The language model with much of its text on screen: both models, a head off, an unknown word, a continuation, a refused file. */
async function languageModelStates(page) {
  const lm = page.locator(LM);
  await page.waitForSelector(`${LM}[data-drawn]`, { timeout: 60_000 });
  await eventually(async () => assert.ok(await page.evaluate((t) => document.querySelector(t).snapshot?.runs[0].scores.some((s) => s.label === 'induction'), LM)));
  await lm.locator('[data-testid="lm-switch-2-1"]').uncheck();
  await expectText(lm.locator('[data-testid="lm-ablation"]'), /desactivada/);
  await lm.locator('[data-testid="lm-one-cell-1-2"]').click();
  await lm.locator('[data-testid="lm-text"]').fill('a b zz');
  await lm.locator('[data-testid="lm-text"]').press('Enter');
  await expectText(lm.locator('[data-testid="lm-text-error"]'), /no conoce «zz»/);
  await lm.locator('[data-action="generate"]').click();
  await expectText(lm.locator('[data-testid="lm-generated-new"]'), /\S/);
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), lm.locator('[data-action="load-model"]').click()]);
  await chooser.setFiles({ name: 'apuntes.hlm', mimeType: 'application/octet-stream', buffer: Buffer.from('no es un modelo') });
  await expectText(lm.locator('[data-testid="lm-errors"]'), /No se cargó «apuntes\.hlm»\. No es un archivo de modelo de lenguaje de HeadLab\./);
}

test('language model in Spanish: no English message left, decimal commas, 360 px without overflow; screenshots', { timeout: TIMEOUT }, async () => {
  assert.ok(existsSync(path.join(DIST, 'models', 'induction.hlm')), 'dist/models/induction.hlm is missing: run `npm run train:models`, then `node scripts/bundle.mjs`');
  const pieces = englishPieces([shared, training, languageModel]);
  for (const width of [1280, 360]) {
    const page = await openSpanish('demos/language-model/', { width, hash: '#lm.pretrained=1&lm.compare=1' });
    await languageModelStates(page);
    const said = await whatItSays(page, LM);
    assert.deepEqual(englishLeft(said, pieces), [], `English left at ${width} px`);
    await expectText(page.locator(`${LM} [data-testid="lm-progress"]`), /^Paso \d+ · \d+,\d s · exactitud de validación \d,\d\d · pausa en \d+$/);
    assert.match(said.tree, /button "Empezar"/);
    const o = await overflow(page, LM);
    assert.ok(o.page <= 0 && o.element <= 1, `${width} px: the page is ${o.page} px and the element ${o.element} px wider than they should be`);
    await page.locator(LM).screenshot({ path: `${SCREENSHOTS}/language-model-es-${width}.png` });
    await page.close();
  }
  assertNoProblems();
});

test('lang set on the language model after it was drawn: redrawn in Spanish with the same model, then back in English', { timeout: TIMEOUT }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'lm relocalise', problems);
  await page.goto(new URL('demos/language-model/index.html#lm.pretrained=1', site.server.url).href);
  await page.waitForSelector(`${LM}[data-drawn]`, { timeout: 60_000 });
  const step = await eventually(async () => {
    const s = await page.evaluate((t) => document.querySelector(t).snapshot?.runs[0].step, LM);
    assert.ok(s > 0);
    return s;
  });
  await page.evaluate((t) => document.querySelector(t).setAttribute('lang', 'es'), LM);
  await expectText(page.locator(`${LM} h2`), /^Un pequeño modelo de lenguaje aprende a copiar$/);
  await expectText(page.locator(`${LM} [data-testid="lm-progress"]`), new RegExp(`^Paso ${step} `));
  await eventually(async () => assert.equal(await page.locator(`${LM} [role="gridcell"]`).count(), 8));
  await expectText(page.locator(`${LM} [data-testid="lm-cell-2-1"] .tag`), /^(inducción|token anterior|token duplicado|primer token|sin etiqueta)$/);
  const said = await whatItSays(page, LM);
  assert.deepEqual(englishLeft(said, englishPieces([shared, training, languageModel])), []);
  await page.evaluate((t) => document.querySelector(t).removeAttribute('lang'), LM);
  await expectText(page.locator(`${LM} h2`), /^A small language model learns to copy$/);
  await page.locator(`${LM} [data-action="step"]`).click();
  await eventually(async () => assert.equal(await page.evaluate((t) => document.querySelector(t).snapshot.runs[0].step, LM), step + 10));
  await page.close();
  assertNoProblems();
});

const TRAINER = 'headlab-trainer';

test('trainer in Spanish: no English message left, decimal commas, 360 px without overflow; screenshots', { timeout: TIMEOUT }, async () => {
  const pieces = englishPieces([shared, training, trainer]);
  for (const width of [1280, 360]) {
    const page = await openSpanish('demos/trainer/', { width });
    const tr = page.locator(TRAINER);
    await page.waitForSelector(`${TRAINER}[data-drawn]`, { timeout: 60_000 });
    await tr.locator('[data-testid="trainer-compare"]').check();
    await page.waitForFunction((t) => document.querySelector(t).shadowRoot.querySelectorAll('section.run').length === 2, TRAINER);
    for (let i = 0; i < 3; i++) await tr.locator('[data-action="step"]').click();
    await eventually(async () => assert.ok(await page.evaluate((t) => document.querySelector(t).snapshot?.runs[0].step >= 3, TRAINER)));
    await tr.locator('[data-testid="trainer-switch-2-1"]').uncheck();
    await expectText(tr.locator('[data-testid="trainer-ablation-2"]'), /desactivada/);
    await tr.locator('[data-testid="trainer-model-file"]').setInputFiles({ name: 'apuntes.hlab', mimeType: 'application/octet-stream', buffer: Buffer.from('no es un modelo') });
    await expectText(tr.locator('[data-testid="trainer-errors"]'), /No se cargó «apuntes\.hlab»/);
    await expectText(tr.locator('[data-testid="trainer-progress"]'), /^Paso \d+ · \d+,\d s de entrenamiento · pausa en \d+$/);
    const said = await whatItSays(page, TRAINER);
    assert.deepEqual(englishLeft(said, pieces), [], `English left at ${width} px`);
    // An h that does not divide d_model is explained in Spanish.
    await tr.locator('[data-testid="trainer-heads"]').selectOption('3');
    await expectText(tr.locator('[data-testid="trainer-dk"]'), /^h = 3 no divide a d_model = 16: .*d_k sería 5,33/);
    const o = await overflow(page, TRAINER);
    assert.ok(o.page <= 0 && o.element <= 1, `${width} px: the page is ${o.page} px and the element ${o.element} px wider than they should be`);
    await tr.screenshot({ path: `${SCREENSHOTS}/trainer-es-${width}.png` });
    await page.close();
  }
  assertNoProblems();
});

const EXPLORER = 'headlab-model-explorer';

test('model explorer in Spanish: no English message left, decimal commas, 360 px without overflow; screenshots', { timeout: TIMEOUT }, async () => {
  const pieces = englishPieces([shared, modelExplorer]);
  for (const width of [1280, 360]) {
    const page = await openSpanish('demos/real-models/', { width });
    const x = page.locator(EXPLORER);
    await page.waitForSelector(`${EXPLORER}[data-drawn]`, { timeout: 60_000 });
    await eventually(async () => assert.equal(await x.locator('[role="gridcell"]').count(), 8));
    await x.locator('[data-testid="explorer-cell-2-1"]').click();
    await x.locator('[data-action="toggle-head"]').click();
    await expectText(x.locator('[data-testid="explorer-off"]'), /^Desactivadas: C2 · cab\. 1\./);
    await expectText(x.locator('[data-testid="explorer-detail-title"]'), /^Capa 2, cabeza 1: una cabeza de inducción \(desactivada\)$/);
    await expectText(x.locator('[data-testid="explorer-next"] caption'), /^Tras «.+», con 1 cabeza desactivada$/);
    await expectText(x.locator('[data-testid="explorer-next"] td.num').first(), /^\d,\d{3}$|e/);
    await x.locator('[data-testid="explorer-text"]').fill('a b zz');
    await x.locator('[data-testid="explorer-text"]').press('Enter');
    await expectText(x.locator('[data-testid="explorer-text-error"]'), /no conoce «zz»/);
    const said = await whatItSays(page, EXPLORER);
    assert.deepEqual(englishLeft(said, pieces), [], `English left at ${width} px`);
    const o = await overflow(page, EXPLORER);
    assert.ok(o.page <= 0 && o.element <= 1, `${width} px: the page is ${o.page} px and the element ${o.element} px wider than they should be`);
    await x.screenshot({ path: `${SCREENSHOTS}/model-explorer-es-${width}.png` });
    await page.close();
  }
  assertNoProblems();
});

test('lang set on the trainer and the explorer after they were drawn: redrawn in Spanish with their models', { timeout: TIMEOUT }, async () => {
  for (const { relative, tag, heading, ready, check } of [
    { relative: 'demos/trainer/', tag: TRAINER, heading: /^Entrene cabezas y vea cómo se especializan$/,
      ready: async (page) => {
        await page.locator(`${TRAINER} [data-action="step"]`).click();
        await page.waitForFunction((t) => document.querySelector(t).snapshot?.runs[0].step === 1, TRAINER);
      },
      check: async (page) => {
        await expectText(page.locator(`${TRAINER} [data-testid="trainer-progress"]`), /^Paso 1 · /);
        await eventually(async () => assert.equal(await page.locator(`${TRAINER} [data-testid="trainer-verdict-1-1"]`).count(), 1));
      } },
    { relative: 'demos/real-models/', tag: EXPLORER, heading: /^Encuentre las cabezas de un modelo real$/,
      ready: async (page) => {
        await eventually(async () => assert.equal(await page.locator(`${EXPLORER} [role="gridcell"]`).count(), 8));
        await page.locator(`${EXPLORER} [data-testid="explorer-cell-1-3"]`).click();
      },
      check: async (page) => {
        await eventually(async () => assert.equal(await page.locator(`${EXPLORER} [role="gridcell"]`).count(), 8));
        await expectText(page.locator(`${EXPLORER} [data-testid="explorer-detail-title"]`), /^Capa 1, cabeza 3/);
        await page.waitForFunction((t) => !document.querySelector(t).hasAttribute('data-busy'), EXPLORER);
      } },
  ]) {
    const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), `relocalise ${tag}`, problems);
    await page.goto(new URL(`${relative}index.html`, site.server.url).href);
    await page.waitForSelector(`${tag}[data-drawn]`, { timeout: 60_000 });
    await ready(page);
    await page.evaluate((t) => document.querySelector(t).setAttribute('lang', 'es'), tag);
    await expectText(page.locator(`${tag} h2`), heading);
    await check(page);
    await page.close();
  }
  assertNoProblems();
});
