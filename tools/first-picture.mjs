// A throttled page load with an empty cache, timed in the page (bench/first-picture.mjs,
// tests/browser/first-picture.test.mjs): Chromium's network emulation at 1.6 Mbit/s down, 750 kbit/s up
// and 150 ms round trip (the "slow link"), from navigation start to the element's first room
// (its skeleton), to its first draw with live controls (data-drawn) and, for an element with formulas,
// to their showing (data-formulas="ready", once KaTeX's fonts have loaded). Each load has a new browser
// context (an empty HTTP cache, which the page and its Workers then share, as on a first visit); the
// pages are served by `pageServer`, not by request interception, which would turn that cache off.
import http from 'node:http';

export const THROTTLE = { offline: false, latency: 150, downloadThroughput: (1.6e6 / 8), uploadThroughput: (750e3 / 8) };

/**
 * A server on 127.0.0.1 with `pages` (pathname → HTML) and every other request passed on to the
 * server at `upstream` (dist/, with its headers and precompressed files). Resolves to { url, close }.
 */
export function pageServer(upstream, pages) {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const page = pages[new URL(req.url, 'http://localhost').pathname];
    if (page) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' });
      return res.end(page);
    }
    const options = {
      hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host },
    };
    const forward = http.request(options, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => { res.statusCode = 502; res.end(); });
    req.pipe(forward);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  })));
}

export const onePage = (tag) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${tag}</title><script type="module" src="/headlab-components.js"></script></head><body><h1>A course page</h1><${tag}></${tag}><p>Text below.</p></body></html>`;
export const SCENARIOS = [
  { name: 'worked example, module build (headlab-components.js)', tag: 'headlab-worked-example', url: 'first-picture/worked-example.html', page: onePage('headlab-worked-example'), goal: 2000 },
  { name: 'language model, module build (headlab-components.js)', tag: 'headlab-language-model', url: 'first-picture/language-model.html', page: onePage('headlab-language-model'), goal: 4000 },
  { name: 'worked example, the site\'s demo page (module build via site/page.js)', tag: 'headlab-worked-example', url: 'demos/worked-example/index.html', goal: 2000 },
  { name: 'language model, the site\'s demo page (module build via site/page.js)', tag: 'headlab-language-model', url: 'demos/language-model/index.html', goal: 4000 },
];

/** The pages of SCENARIOS that are not in dist/, for pageServer. */
export const PAGES = Object.fromEntries(SCENARIOS.filter((sc) => sc.page).map((sc) => [`/${sc.url}`, sc.page]));

/**
 * One throttled load with an empty cache, from `siteUrl` (a pageServer with PAGES): ms from navigation
 * start to the skeleton, to data-drawn and to the formulas shown (undefined without formulas); bytes
 * over the wire and responses, the page's and its Workers' (Playwright reports both; the page's CDP
 * session sees only the page's own).
 */
export async function measure(browser, siteUrl, scenario) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', THROTTLE);
  const sizes = [];
  page.on('requestfinished', (request) => sizes.push(request.sizes().then((s) => s.responseHeadersSize + s.responseBodySize, () => 0)));
  await page.addInitScript((tag) => {
    window.__times = {};
    const look = () => {
      const e = document.querySelector(tag);
      if (!e) return;
      if (window.__times.skeleton === undefined && e.getBoundingClientRect().height > 100) window.__times.skeleton = performance.now();
      if (window.__times.drawn === undefined && e.hasAttribute('data-drawn')) window.__times.drawn = performance.now();
      if (window.__times.formulas === undefined && e.dataset.formulas === 'ready') window.__times.formulas = performance.now();
    };
    new MutationObserver(look).observe(document, { childList: true, subtree: true, attributes: true });
    // Elements without formulas have no data-formulas.
    const settled = () => window.__times.drawn !== undefined &&
      (window.__times.formulas !== undefined || document.querySelector(tag)?.dataset.formulas === undefined);
    const frame = () => { look(); if (!settled()) requestAnimationFrame(frame); };
    requestAnimationFrame(frame);
  }, scenario.tag);
  await page.goto(new URL(scenario.url, siteUrl).href);
  await page.waitForFunction((tag) => window.__times.drawn !== undefined &&
    (window.__times.formulas !== undefined || document.querySelector(tag).dataset.formulas === undefined),
  scenario.tag, { timeout: 120_000, polling: 100 });
  const times = await page.evaluate(() => window.__times);
  const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
  await context.close();
  return { ...times, bytes, requests: sizes.length };
}
