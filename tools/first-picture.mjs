// A throttled, uncached page load timed in the page (bench/first-picture.mjs,
// tests/browser/first-picture.test.mjs): Chromium's network emulation at 1.6 Mbit/s down, 750 kbit/s up
// and 150 ms round trip (the "slow link"), from navigation start to the element's first room
// (its skeleton) and to its first draw with live controls (data-drawn).

export const THROTTLE = { offline: false, latency: 150, downloadThroughput: (1.6e6 / 8), uploadThroughput: (750e3 / 8) };

export const onePage = (tag) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${tag}</title><script type="module" src="/headlab-components.js"></script></head><body><h1>A course page</h1><${tag}></${tag}><p>Text below.</p></body></html>`;
export const SCENARIOS = [
  { name: 'worked example, module build (headlab-components.js)', tag: 'headlab-worked-example', page: onePage('headlab-worked-example'), goal: 2000 },
  { name: 'language model, module build (headlab-components.js)', tag: 'headlab-language-model', page: onePage('headlab-language-model'), goal: 4000 },
  { name: 'worked example, the site\'s demo page (classic build)', tag: 'headlab-worked-example', url: 'demos/worked-example/index.html', goal: 2000 },
  { name: 'language model, the site\'s demo page (classic build)', tag: 'headlab-language-model', url: 'demos/language-model/index.html', goal: 4000 },
];

/** One throttled, uncached load: ms from navigation start to the skeleton, to data-drawn; bytes over the wire. */
export async function measure(browser, siteUrl, scenario) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', THROTTLE);
  let bytes = 0, requests = 0;
  cdp.on('Network.loadingFinished', (e) => { bytes += e.encodedDataLength; requests += 1; });
  await page.addInitScript((tag) => {
    window.__times = {};
    const look = () => {
      const e = document.querySelector(tag);
      if (!e) return;
      if (window.__times.skeleton === undefined && e.getBoundingClientRect().height > 100) window.__times.skeleton = performance.now();
      if (window.__times.drawn === undefined && e.hasAttribute('data-drawn')) window.__times.drawn = performance.now();
    };
    new MutationObserver(look).observe(document, { childList: true, subtree: true, attributes: true });
    const frame = () => { look(); if (window.__times.drawn === undefined) requestAnimationFrame(frame); };
    requestAnimationFrame(frame);
  }, scenario.tag);
  const url = new URL(scenario.url ?? 'first-picture.html', siteUrl).href;
  if (scenario.page) await page.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: scenario.page }));
  await page.goto(url);
  await page.waitForFunction(() => window.__times.drawn !== undefined, null, { timeout: 120_000, polling: 100 });
  const times = await page.evaluate(() => window.__times);
  await context.close();
  return { ...times, bytes, requests };
}
