// Iframes that fit (docs/embedding.md, "A demo page in an iframe"): a course page on another
// origin (http://localhost:<port>) frames demo pages served from http://127.0.0.1:<port>.
//   with headlab-embed.js   → the iframe grows to its content at 1280 and 360 px, no inner scrollbar
//   without it              → every demo fits the height docs/embedding.md gives it, at both widths
//   foreign messages        → a window that is not a marked iframe, or a frame now on another
//                             origin than its src, cannot resize anything
import { test, before, after } from 'node:test';
import http from 'node:http';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { serve } from '../../tools/serve.mjs';
import { DEMOS, WIDTHS, coursePage, waitForDrawn, frameMetrics, documentedHeights, snippetHeights } from '../../tools/embed-fit.mjs';
import { DIST, REPO, ensureDist, launch, watch, SCREENSHOTS, ensureScreenshotDir } from './helpers.mjs';
import { eventually } from './expect.mjs';

let browser;
let site;   // HeadLab's files: http://127.0.0.1:<port>
let other;  // the same files on yet another origin
let course; // the course page: http://localhost:<port>
let lesson = '';
const problems = [];

before(async () => {
  await ensureDist();
  ensureScreenshotDir();
  site = await serve({ port: 0, root: DIST });
  other = await serve({ port: 0, root: DIST });
  course = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
    res.end(lesson);
  });
  await new Promise((resolve) => course.listen(0, '127.0.0.1', resolve));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await site?.close();
  await other?.close();
  course?.closeAllConnections();
  await new Promise((resolve) => (course ? course.close(resolve) : resolve()));
});

function assertNoProblems() {
  const found = problems.splice(0);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

async function openLesson(html, width, label) {
  const page = watch(await browser.newPage({ viewport: { width, height: 900 } }), label, problems);
  lesson = html;
  await page.goto(`http://localhost:${course.address().port}/lesson.html`);
  return page;
}

const frameOf = (page, index = 0) => page.frames().filter((f) => f !== page.mainFrame())[index];
const iframeHeight = (page, index = 0) => page.evaluate((i) => document.querySelectorAll('iframe')[i].getBoundingClientRect().height, index);

for (const name of ['worked-example', 'language-model']) {
  test(`with headlab-embed.js, an iframe of ${name} grows to its content at ${WIDTHS.join(' and ')} px, with no scrollbar inside`, { timeout: 180_000 }, async () => {
    for (const width of WIDTHS) {
      const page = await openLesson(coursePage(`${site.url}demos/${name}/index.html?embed`, { height: 200, helper: `${site.url}headlab-embed.js` }), width, `${name} ${width} helper`);
      const frame = frameOf(page);
      await waitForDrawn(frame);
      const m = await eventually(async () => {
        const metrics = await frameMetrics(frame);
        assert.ok(metrics.scrollHeight <= metrics.clientHeight, `${name} at ${width} px: no scrolling inside the frame (scrollHeight ${metrics.scrollHeight} > clientHeight ${metrics.clientHeight})`);
        assert.equal(await iframeHeight(page), metrics.content, `${name} at ${width} px: the iframe is as tall as its content`);
        return metrics;
      });
      assert.ok(m.content > 900, `${name} at ${width} px: the iframe grew from 200 px to ${m.content} px`);
      if (width === 360) {
        // A cross-origin frame paints only what is in view: make the window as tall as the page to see all of it.
        await page.setViewportSize({ width, height: Math.ceil(await page.evaluate(() => document.documentElement.scrollHeight)) });
        await page.screenshot({ path: `${SCREENSHOTS}/embed-fit-${name}-360.png` });
      }
      await page.close();
    }
    assertNoProblems();
  });
}

test('without the helper, every demo fits the iframe height docs/embedding.md gives it, at both widths', { timeout: 600_000 }, async () => {
  const markdown = readFileSync(path.join(REPO, 'docs/embedding.md'), 'utf8');
  const documented = documentedHeights(markdown);
  assert.deepEqual([...documented.keys()].sort(), DEMOS.map(([name]) => name).sort(), 'docs/embedding.md gives a height for every demo page');
  const snippets = snippetHeights(markdown);
  assert.ok(snippets.length >= 2, 'docs/embedding.md has iframe snippets');
  for (const { name, height } of snippets) assert.equal(height, documented.get(name), `the ${name} snippet uses the table's height`);
  for (const [name] of DEMOS) {
    for (const width of WIDTHS) {
      const height = documented.get(name);
      const page = await openLesson(coursePage(`${site.url}demos/${name}/index.html?embed`, { height }), width, `${name} ${width} documented`);
      const frame = frameOf(page);
      await waitForDrawn(frame);
      const m = await frameMetrics(frame);
      assert.equal(m.clientHeight, height, `${name} at ${width} px: the frame is the documented ${height} px`);
      assert.ok(m.scrollHeight <= m.clientHeight && m.content <= height,
        `${name} at ${width} px: its content (${m.content} px, scrollHeight ${m.scrollHeight}) outgrew the documented ${height} px; run node scripts/embed-heights.mjs`);
      await page.close();
    }
  }
  assertNoProblems();
});

test('a height message from a window that is not a marked iframe, or from another origin than the iframe’s src, changes nothing', { timeout: 120_000 }, async () => {
  const html = coursePage(`${site.url}demos/params/index.html?embed`, { height: 200, helper: `${site.url}headlab-embed.js` }).replace('</body>',
    // An unmarked iframe of a demo on another origin: its own height messages must not resize the marked one.
    `<iframe src="${other.url}demos/scaling/index.html?embed" title="other" style="width: 300px; height: 150px; border: 0"></iframe></body>`);
  const page = await openLesson(html, 1280, 'foreign messages');
  await waitForDrawn(frameOf(page, 0));
  await waitForDrawn(frameOf(page, 1));
  const content = (await frameMetrics(frameOf(page, 0))).content;
  await eventually(async () => assert.equal(await iframeHeight(page, 0), content));
  assert.equal(await iframeHeight(page, 1), 150, 'the unmarked iframe keeps its height');

  // Resolves once the course page has received a message of `height` (the helper's listener ran first).
  const seen = (height) => page.waitForFunction((h) => window.__heights?.includes(h), height);
  await page.evaluate(() => {
    window.__heights = [];
    window.addEventListener('message', (e) => { if (e.data?.type === 'headlab:height') window.__heights.push(e.data.height); });
  });

  // The course page's own window (or a script on it) posting to itself.
  await page.evaluate(() => window.postMessage({ type: 'headlab:height', height: 50, id: null }, '*'));
  await seen(50);
  // The unmarked frame, on another origin.
  await frameOf(page, 1).evaluate(() => parent.postMessage({ type: 'headlab:height', height: 60, id: null }, '*'));
  await seen(60);
  assert.deepEqual([await iframeHeight(page, 0), await iframeHeight(page, 1)], [content, 150], 'messages from other windows change nothing');

  // The marked frame itself is listened to (the checks above are not vacuous) …
  await frameOf(page, 0).evaluate(() => parent.postMessage({ type: 'headlab:height', height: 333, id: null }, '*'));
  await eventually(async () => assert.equal(await iframeHeight(page, 0), 333));
  // … but not once it shows a page of another origin than its src.
  await frameOf(page, 0).goto(`${other.url}demos/params/index.html`);
  await frameOf(page, 0).evaluate(() => parent.postMessage({ type: 'headlab:height', height: 77, id: null }, '*'));
  await seen(77);
  assert.equal(await iframeHeight(page, 0), 333, 'a message from the frame’s window on another origin than its src changes nothing');
  await page.close();
  assertNoProblems();
});
