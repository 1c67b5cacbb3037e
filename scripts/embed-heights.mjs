// Measures how tall each demo page is with ?embed, in an iframe of a course page on another
// origin, at 1280 and 360 px wide, and writes docs/embedding.md's table of iframe heights (and the
// heights of its iframe snippets):
//   node scripts/embed-heights.mjs        (after `node scripts/bundle.mjs`)
// tests/browser/embed-fit.test.mjs fails when a demo outgrows its documented height.
import http from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../tools/serve.mjs';
import { launch } from '../tools/chromium.mjs';
import { DEMOS, WIDTHS, coursePage, waitForDrawn, frameMetrics, heightsTable, replaceTable, documentedHeight, setSnippetHeights } from '../tools/embed-fit.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const site = await serve({ port: 0, root: path.join(repo, 'dist') });
let lesson = '';
const course = http.createServer((_req, res) => { res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', Connection: 'close' }); res.end(lesson); });
await new Promise((r) => course.listen(0, '127.0.0.1', r));
const browser = await launch();
const rows = [];
try {
  for (const [name] of DEMOS) {
    const heights = [];
    for (const width of WIDTHS) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      lesson = coursePage(`${site.url}demos/${name}/index.html?embed`);
      await page.goto(`http://localhost:${course.address().port}/lesson.html`);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      await waitForDrawn(frame);
      const m = await frameMetrics(frame);
      heights.push(Math.max(m.content, m.scrollHeight));
      await page.close();
    }
    rows.push({ name, heights });
    console.log(`${name}: ${heights.join(' / ')} px → iframe height ${documentedHeight(heights)} px`);
  }
} finally {
  await browser.close();
  await site.close();
  course.closeAllConnections();
  course.close();
}
const doc = path.join(repo, 'docs/embedding.md');
const heights = new Map(rows.map(({ name, heights: h }) => [name, documentedHeight(h)]));
await writeFile(doc, setSnippetHeights(replaceTable(await readFile(doc, 'utf8'), heightsTable(rows)), heights));
console.log('embed-heights: docs/embedding.md written');
