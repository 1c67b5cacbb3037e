// examples/api/index.html, served from the repository root as its comment says: the worked
// example on the page (through an import map) and in a module Worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { REPO, launch, watch } from './helpers.mjs';
import { expected, printed } from '../fixtures/course.mjs';

test('examples/api/index.html shows the worked example from the page and from its Worker', { timeout: 60_000 }, async () => {
  const server = await serve({ port: 0, root: REPO });
  const browser = await launch();
  try {
    const problems = [];
    const page = watch(await browser.newPage(), 'examples/api', problems);
    await page.goto(`${server.url}examples/api/index.html`);
    for (const id of ['page', 'worker']) {
      await page.waitForFunction((sel) => document.querySelector(sel).textContent !== '…', `#${id}`, { timeout: 30_000 });
      assert.equal(await page.locator(`#${id}`).textContent(), printed(expected.output));
    }
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
