// Writes the landing page's card previews, web/site/previews/<demo>.jpg: a photograph of each
// demo's element as the built site (dist/) draws it, in headless Chromium. The pictures are
// committed; run this again after a demo changes how it looks: `node scripts/make-previews.mjs`.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../tools/chromium.mjs';
import { serve } from '../tools/serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(repo, 'web/site/previews');
// demo → what to show (the state in the URL), its element, and the part of it that shows what the demo is about
const DEMOS = [
  ['worked-example', '#worked.step=7', 'headlab-worked-example', 'section.step[data-step="7"] .heads'],
  ['heads', '', 'headlab-heads', '.maps'],
  ['params', '#params.heads=16', 'headlab-params', '.drawing'],
  ['scaling', '', 'headlab-scaling', '.chart'],
  ['misconceptions', '', 'headlab-misconceptions', '.maps'],
  ['choosing-h', '', 'headlab-choosing-h', '.chart'],
  ['trainer', '', 'headlab-trainer', 'section.run .maps'],
  ['language-model', '', 'headlab-language-model', '[data-testid="lm-grid"]'],
  ['real-models', '#explorer.head=2.2', 'headlab-model-explorer', '[data-testid="explorer-heads-part"]'],
];
// `node scripts/make-previews.mjs real-models heads` writes only the previews named.
const only = process.argv.slice(2);

mkdirSync(out, { recursive: true });
const server = await serve({ port: 0, root: path.join(repo, 'dist') });
const browser = await launch();
try {
  for (const [name, state, tag, part] of DEMOS.filter(([n]) => only.length === 0 || only.includes(n))) {
    const page = await browser.newPage({ viewport: { width: 760, height: 2600 }, deviceScaleFactor: 1 });
    await page.goto(new URL(`demos/${name}/index.html?embed${state}`, server.url).href);
    await page.waitForSelector(`${tag}[data-drawn]`, { timeout: 30_000 });
    if (name === 'trainer') {
      // A trained model: the heads have specialised.
      await page.waitForFunction(() => document.querySelector('headlab-trainer').dataset.step !== undefined, null, { timeout: 30_000 });
      await page.evaluate(() => { const t = document.querySelector('headlab-trainer'); t.speed = 'fast'; t.start(); });
      await page.waitForFunction(() => document.querySelector('headlab-trainer').running, null, { timeout: 10_000 });
      await page.waitForFunction(() => document.querySelector('headlab-trainer').hasAttribute('data-specialised-step'), null, { timeout: 60_000 });
      await page.evaluate(() => document.querySelector('headlab-trainer').pause());
    }
    if (name === 'language-model') {
      // Trained in the page past its phase change, until the induction head has its label.
      await page.evaluate(() => document.querySelector('headlab-language-model').start());
      await page.waitForFunction(() => document.querySelector('headlab-language-model').shadowRoot
        .querySelector('[role="gridcell"][data-label="induction"]'), null, { timeout: 120_000 });
      await page.evaluate(() => document.querySelector('headlab-language-model').pause());
      await page.waitForFunction(() => !document.querySelector('headlab-language-model').running, null, { timeout: 10_000 });
    }
    if (name === 'real-models') {
      await page.waitForFunction(() => document.querySelector('headlab-model-explorer').results, null, { timeout: 30_000 });
    }
    await page.evaluate(() => document.fonts.ready);
    const box = await page.locator(`${tag} ${part}`).first().boundingBox();
    await page.screenshot({ path: path.join(out, `${name}.jpg`), type: 'jpeg', quality: 72, clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 360) } });
    console.log(`previews: ${name}.jpg`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}
