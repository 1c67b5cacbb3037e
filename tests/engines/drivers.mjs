// The three browser engines behind one small interface, for the checks in checks.mjs:
//   engine = await chromium() | firefox() | webkit()
//   engine.name, engine.version, engine.newPage(label) → page, engine.close()
//   page.goto(url), page.evaluate(fn, arg), page.waitFor(fn, arg, timeout),
//   page.errors(), page.close()
// `fn` (a function or its source text) runs in the page and must be self-contained; `arg`
// must survive JSON. Functions are sent through the automation protocol, never built
// in the page with eval, so they also run under the strict CSP.
// errors() is what the page's capture script (capture.js, injected by the test server)
// recorded, plus what the engine's protocol reports itself where it can (Chromium and
// Firefox: console, page errors, failed requests).
import { spawn } from 'node:child_process';
import net from 'node:net';
import puppeteer from 'puppeteer-core';
import { Builder } from 'selenium-webdriver';
import { launch, watch } from '../browser/helpers.mjs';

export const FIREFOX = '/usr/bin/firefox-esr';
export const MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const SCRIPT_TIMEOUT = 180_000;
const NEW_SESSION_TIMEOUT = 60_000;

/** `(fn)(arg)` as an expression whose value is a promise of { value } or { error }. */
function call(fn, arg) {
  return `Promise.resolve().then(() => (${fn})(${JSON.stringify(arg ?? null)}))` +
    '.then((value) => ({ value: value === undefined ? null : value }),' +
    ' (e) => ({ error: e && e.stack && e.stack.includes(e.message) ? e.stack : String(e && e.message || e) }))';
}

/**
 * Polls `fn(arg)` in the page every 50 ms until it returns a truthy value (resolves to it)
 * or `timeout` ms pass (rejects naming the predicate and its last value or exception).
 */
function poll(fn, arg, timeout) {
  return `(async () => {
    const fn = (${fn}), arg = ${JSON.stringify(arg ?? null)}, end = performance.now() + ${Number(timeout)};
    let last;
    for (;;) {
      try { last = await fn(arg); if (last) return last; } catch (e) { last = 'threw ' + e; }
      if (performance.now() > end) throw new Error('waitFor: not true after ${Number(timeout)} ms (last: ' + JSON.stringify(last) + ')');
      await new Promise((r) => setTimeout(r, 50));
    }
  })()`;
}

/** Wraps an engine's `run(expression)` (which resolves to { value } or { error }) into the page interface. */
function page({ run, goto, close, nativeErrors }) {
  const result = async (expression, what) => {
    const r = await run(expression);
    if (r && 'error' in r) throw new Error(`${what} failed in the page: ${r.error}`);
    return r?.value ?? null;
  };
  return {
    goto,
    close,
    evaluate: (fn, arg) => result(call(fn, arg), 'evaluate'),
    waitFor: (fn, arg, timeout = 20_000) => result(call(`() => ${poll(fn, arg, timeout)}`), `waitFor(${String(fn).slice(0, 200)})`),
    async errors() {
      const captured = await result(call(() => window.__headlabErrors?.slice() ?? ['the capture script did not run (window.__headlabErrors missing)']), 'errors');
      return [...captured, ...nativeErrors.splice(0)];
    },
  };
}

/** Chromium through playwright-core, with the same injected capture as the others (launch without its own). */
export async function chromium() {
  const browser = await launch({ windowErrors: false });
  return {
    name: 'chromium',
    version: browser.version(),
    async newPage(label) {
      const problems = [];
      const p = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }), label, problems);
      return page({
        nativeErrors: problems,
        run: (expression) => p.evaluate(expression),
        goto: async (url) => { await p.goto(url); },
        close: () => p.close(),
      });
    },
    close: () => browser.close(),
  };
}

/** Debian's firefox-esr through puppeteer-core over WebDriver BiDi. */
export async function firefox() {
  const browser = await puppeteer.launch({
    browser: 'firefox', protocol: 'webDriverBiDi', executablePath: FIREFOX, headless: true, protocolTimeout: SCRIPT_TIMEOUT,
  });
  return {
    name: 'firefox',
    version: await browser.version(),
    async newPage(label) {
      const problems = [];
      const p = await browser.newPage();
      await p.setViewport({ width: 1280, height: 900 });
      p.on('console', (msg) => {
        if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`${label}: console ${msg.type()}: ${msg.text()}`);
      });
      p.on('pageerror', (err) => problems.push(`${label}: page error: ${err.message}`));
      p.on('requestfailed', (req) => problems.push(`${label}: request failed: ${req.url()} (${req.failure()?.errorText})`));
      p.on('response', (res) => { if (res.status() >= 400) problems.push(`${label}: HTTP ${res.status()} for ${res.url()}`); });
      return page({
        nativeErrors: problems,
        run: (expression) => p.evaluate(expression),
        goto: async (url) => { await p.goto(url, { waitUntil: 'load', timeout: 60_000 }); },
        close: () => p.close(),
      });
    },
    close: () => browser.close(),
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function withTimeout(promise, ms, message) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(message)), ms); })])
    .finally(() => clearTimeout(timer));
}

/**
 * WebKitGTK's MiniBrowser through selenium-webdriver and WebKitWebDriver, under a
 * virtual X display (MiniBrowser has no headless mode). The driver, Xvfb and the
 * browser run in their own process group, which close() (or this process exiting)
 * ends as a whole. `args` are MiniBrowser's; a new session that does not answer within
 * `sessionTimeout` ms fails with an error saying so.
 */
export async function webkit({ args = ['--automation'], sessionTimeout = NEW_SESSION_TIMEOUT } = {}) {
  const port = await freePort();
  const child = spawn('xvfb-run', ['-a', 'WebKitWebDriver', `--port=${port}`], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const killGroup = (signal) => { try { process.kill(-child.pid, signal); } catch { /* already gone */ } };
  // The group is detached from ours, so a Ctrl+C or kill of this process would not reach it.
  const onExit = () => killGroup('SIGKILL');
  const onSignal = (signal) => {
    onExit();
    process.removeListener('SIGINT', onSignal).removeListener('SIGTERM', onSignal);
    process.kill(process.pid, signal);
  };
  process.once('exit', onExit).once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const stop = async () => {
    process.removeListener('exit', onExit).removeListener('SIGINT', onSignal).removeListener('SIGTERM', onSignal);
    killGroup('SIGTERM');
    if (await withTimeout(exited, 5000, 'slow').then(() => true, () => false)) return;
    killGroup('SIGKILL');
    await exited;
  };
  try {
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited (${child.exitCode}): ${output}`);
      const ready = await fetch(`${url}/status`).then((r) => r.json()).then((j) => j.value?.ready, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`WebKitWebDriver did not answer on ${url}/status within 30 s: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const driver = await withTimeout(new Builder().usingServer(url).withCapabilities({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args },
    }).build(), sessionTimeout,
    `WebKit: WebKitWebDriver did not create a session within ${sessionTimeout / 1000} s ` +
      `(MiniBrowser could not start: no X display, or an option it does not take?). Driver output: ${output || '(none)'}`);
    await driver.manage().setTimeouts({ script: SCRIPT_TIMEOUT, pageLoad: 60_000 });
    const caps = await driver.getCapabilities();
    return {
      name: 'webkit',
      version: `${caps.get('browserName')} ${caps.get('browserVersion')}`,
      async newPage() {
        // One window per session: start each check from a fresh document.
        await driver.get('about:blank');
        return page({
          nativeErrors: [],
          run: (expression) => driver.executeAsyncScript(
            `const done = arguments[arguments.length - 1]; (${expression}).then(done, (e) => done({ error: String(e) }));`),
          goto: (url) => driver.get(url),
          close: async () => {},
        });
      },
      async close() {
        await withTimeout(driver.quit(), 10_000, 'quit').catch(() => {});
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

export const ENGINES = { chromium, firefox, webkit };
