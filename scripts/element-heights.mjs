// Measures how tall each element is once drawn (data-drawn), at several widths, with its default
// attributes and with `compact`, and writes web/components/shared/elements/reserved-heights.js:
// the room headlab-components.js and each element reserve while they load, so that the course text
// below does not move when they fill in (tests/browser/first-picture.test.mjs measures the shift).
//   node scripts/element-heights.mjs        (after `node scripts/bundle.mjs`; then bundle again)
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tools/serve.mjs';
import { launch } from '../tools/chromium.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Viewport widths; the element is as wide as the body (8 px margins) or as its own max-width.
const VIEWPORTS = [360, 480, 640, 800, 1024, 1280];
const TAGS = ['worked-example', 'heads', 'params', 'scaling', 'misconceptions', 'choosing-h', 'trainer', 'language-model', 'model-explorer'];

const site = await serve({ port: 0, root: path.join(repo, 'dist') });
const browser = await launch();
const table = {};
try {
  for (const name of TAGS) {
    const tag = `headlab-${name}`;
    table[tag] = { default: [], compact: [] };
    for (const width of VIEWPORTS) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const url = `${site.url}__heights/${name}.html`;
      await page.route(url, (route) => route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${name}</title>` +
          `<script type="module" src="/headlab-${name}.js"></script></head><body><${tag} id="a"></${tag}><${tag} id="b" compact></${tag}></body></html>`,
      }));
      await page.goto(url);
      try {
        await page.waitForFunction((t) => [...document.querySelectorAll(t)].every((e) => e.hasAttribute('data-drawn') && !e.hasAttribute('data-headlab-reserved') &&
          e.dataset.formulas !== 'loading'), tag, { timeout: 60_000 });
        // Fonts and late layout settle.
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const [a, b] = await page.evaluate((t) => [...document.querySelectorAll(t)].map((e) => {
          const r = e.getBoundingClientRect();
          return [Math.round(r.width), Math.round(r.height)];
        }), tag);
        table[tag].default.push(a);
        table[tag].compact.push(b);
        console.log(`${tag} @ ${width}: ${a[0]} × ${a[1]} px, compact ${b[1]} px`);
      } catch (e) {
        console.log(`${tag} @ ${width}: not drawn (${e.message.split('\n')[0]}); no entry`);
      } finally {
        await page.close();
      }
    }
  }
} finally {
  await browser.close();
  await site.close();
}
const rows = Object.entries(table).filter(([, t]) => t.default.length > 0).map(([tag, t]) =>
  `  '${tag}': {\n    default: ${JSON.stringify(t.default)},\n    compact: ${JSON.stringify(t.compact)},\n  },`);
const file = path.join(repo, 'web/components/shared/elements/reserved-heights.js');
await writeFile(file, `// Written by scripts/element-heights.mjs from the built elements: each element's height (px) once
// drawn, as [width, height] pairs, default attributes and \`compact\`. Rerun it after changing an
// element's layout (tests/browser/first-picture.test.mjs measures the layout shift it prevents).
export const RESERVED_HEIGHTS = {
${rows.join('\n')}
};
`);
console.log('element-heights: web/components/shared/elements/reserved-heights.js written');
