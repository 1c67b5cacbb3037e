// A training element far off screen does not draw while it trains (issue 32, point 5): its Worker trains on,
// and it draws in full once it is scrolled back into view. Checked on <headlab-trainer> below a tall block:
// while it trains there, its loss chart keeps the points it had; scrolled into view, the chart shows the
// steps trained meanwhile.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { serve } from '../../tools/serve.mjs';
import { DIST, ensureDist, launch, watch } from './helpers.mjs';

let cdn, course, browser;
const problems = [];

before(async () => {
  await ensureDist();
  cdn = await serve({ port: 0, root: DIST, cors: true });
  course = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', Connection: 'close' });
    res.end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson</title><link rel="icon" href="data:,">' +
      `<script type="module" src="${cdn.url}headlab-components.js"></script></head>` +
      '<body><h1>Lesson</h1><div style="height: 6000px">A long lesson.</div><headlab-trainer speed="normal"></headlab-trainer></body></html>');
  });
  await new Promise((resolve) => course.listen(0, '127.0.0.1', resolve));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await cdn?.close();
  course?.closeAllConnections();
  await new Promise((resolve) => (course ? course.close(resolve) : resolve()));
});

test('<headlab-trainer> far below the screen trains without drawing, and draws what it trained once in view', { timeout: 90_000 }, async () => {
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: 800 } }), 'offscreen', problems);
  // HeadLab from another origin (another port), as on a course platform: training in a blob: Worker.
  await page.goto(`http://127.0.0.1:${course.address().port}/`);
  const trainer = page.locator('headlab-trainer');
  // Elements load when they come near the screen: in view first, then far away again before training.
  await trainer.evaluate((e) => e.scrollIntoView());
  await page.waitForFunction(() => { const e = document.querySelector('headlab-trainer'); return e?.dataset.state === 'ready' && !e.hasAttribute('data-busy'); },
    null, { timeout: 60_000 });
  const points = () => trainer.evaluate((e) => [...e.shadowRoot.querySelectorAll('[data-testid="trainer-chart-loss"] svg polyline')].map((p) => p.getAttribute('points')).join('|'));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const drawn = await points();
  await trainer.evaluate((e) => e.start());
  // The Worker trains on: 300 steps past the start.
  await page.waitForFunction(() => Number(document.querySelector('headlab-trainer').dataset.step) >= 300, null, { timeout: 60_000 });
  const away = await points();
  const running = await trainer.evaluate((e) => e.running);
  assert.ok(running, 'still training when checked');
  assert.equal(away, drawn, 'the chart was not redrawn while the element trained off screen');
  await trainer.evaluate((e) => e.scrollIntoView());
  await page.waitForFunction((before) => {
    const e = document.querySelector('headlab-trainer');
    const now = [...e.shadowRoot.querySelectorAll('[data-testid="trainer-chart-loss"] svg polyline')].map((p) => p.getAttribute('points')).join('|');
    return now !== before;
  }, drawn, { timeout: 20_000 });
  await trainer.evaluate((e) => e.pause());
  assert.deepEqual(problems.splice(0), []);
});
