// Assertions that wait for what they assert. After an action (a click, a key,
// a changed attribute) the page updates when its work is done: at once, in a
// microtask, after a Worker answers or in the next animation frame. A test that
// reads the page right after the action reads whatever happens to be there, and
// fails on a loaded machine. `eventually` reruns a block of ordinary assertions
// until they all pass, and fails with the last assertion error when they do not
// within the timeout; nothing waits for a fixed time.

const POLL_MS = 40;

/**
 * Runs `check()` (which throws when its assertions fail) until it passes and
 * returns what it returned; after `timeout` ms rethrows its last error.
 * @example await eventually(async () => assert.equal(await total.textContent(), '1,048,576'));
 */
export async function eventually(check, { timeout = 20_000 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() >= deadline) {
        if (e && typeof e === 'object' && 'message' in e) e.message = `still failing after ${timeout} ms: ${e.message}`;
        throw e;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Waits until the locator's text matches `expected` (a RegExp, or a string compared trimmed) and returns it. */
export function expectText(locator, expected, options) {
  return eventually(async () => {
    const text = await locator.textContent({ timeout: 5_000 });
    const ok = expected instanceof RegExp ? expected.test(text) : text.trim() === expected;
    if (!ok) throw new Error(`text is “${text}”, expected ${expected instanceof RegExp ? expected : `“${expected}”`}`);
    return text;
  }, options);
}

/** Waits until the locator matches `n` elements. */
export function expectCount(locator, n, options) {
  return eventually(async () => {
    const count = await locator.count();
    if (count !== n) throw new Error(`${count} elements, expected ${n}`);
  }, options);
}

/** Waits until the locator's element is visible (or hidden, with `visible = false`). */
export function expectVisible(locator, visible = true, options) {
  return eventually(async () => {
    const now = await locator.isVisible();
    if (now !== visible) throw new Error(`element is ${now ? 'visible' : 'hidden'}, expected ${visible ? 'visible' : 'hidden'}`);
  }, options);
}
