// Starts Debian's headless Chromium (playwright-core) for the browser tests, the engine checks
// and scripts/make-previews.mjs, with every page's window errors reported to Node.
import { chromium } from 'playwright-core';

/** The event launch()'s pages emit for each window `error` event or unhandled rejection; watch() reports it. */
export const WINDOW_ERROR = 'headlab:window-error';

/**
 * Runs in every page before its own scripts: window `error` events (which Chromium's
 * console does not always show, e.g. "ResizeObserver loop completed with undelivered
 * notifications") and unhandled rejections go to the test through a binding.
 */
function reportWindowErrors() {
  const report = (text) => window.__headlabWindowError?.(text);
  const describe = (value) => (value instanceof Error ? `${value.name}: ${value.message}` : String(value));
  window.addEventListener('error', (e) => {
    report(`window error: ${e.error ? describe(e.error) : e.message}${e.filename ? ` (${e.filename}:${e.lineno})` : ''}`);
  });
  window.addEventListener('unhandledrejection', (e) => report(`unhandled rejection: ${describe(e.reason)}`));
}

/**
 * Starts Debian's Chromium. Every context it makes (and so every `browser.newPage()`)
 * reports window errors as WINDOW_ERROR events of its pages, unless `windowErrors` is false
 * (the shared engine checks use their own capture script, as in Firefox and WebKit).
 */
export async function launch({ windowErrors = true } = {}) {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  if (!windowErrors) return browser;
  // browser.newPage() makes its context with this.newContext(), so both get the capture.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    await context.exposeBinding('__headlabWindowError', ({ page }, text) => { page.emit(WINDOW_ERROR, String(text)); });
    await context.addInitScript(reportWindowErrors);
    return context;
  };
  return browser;
}
