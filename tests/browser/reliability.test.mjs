// Reliability of the elements in headless Chromium, against dist/ under the strict CSP:
//   - hostile and invalid attribute values on every element: a readable note or a
//     documented default, no uncaught error, no HTML inserted, and the element works afterwards;
//   - attribute changes and method calls on <headlab-trainer> while it trains;
//   - the main thread's Embind handles and heap after every element is added, used and removed,
//     and the trainer's Worker terminated;
//   - faults: headlab_core.wasm missing (404) or cut short, in the module and classic builds,
//     and the trainer Worker crashing or going silent during training, then Restart.
//
// The page's HeadLab instance: the module bundle exports createHeadlab, which returns the
// instance the elements use (it is created once per page); the classic bundle exposes the
// same as window.HeadLab.createHeadlab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { STRICT_CSP } from '../../tools/serve.mjs';
import { DIST, SCREENSHOTS, ensureScreenshotDir, watch, waitForElements, fileUrl, numbers, assertClose, useSite } from './helpers.mjs';
import { eventually, expectText, expectCount } from './expect.mjs';
import { expected } from '../fixtures/course.mjs';

const TIMEOUT = 60_000;
const TAGS = ['headlab-worked-example', 'headlab-heads', 'headlab-params', 'headlab-scaling', 'headlab-misconceptions', 'headlab-choosing-h', 'headlab-trainer'];
const XSS = '<img src=x onerror="window.__pwned=1">';
// The course's numbers for the query "it" (tests/fixtures/course.json).
const WORKED_OUTPUT = expected.output;
const WORKED_HEAD1 = expected.weightsHead1;

const problems = [];

const site = useSite({ csp: true });

/** Takes the problems recorded so far, leaving out those that `expected` matches. */
function takeProblems(expected = []) {
  return problems.splice(0).filter((p) => !expected.some((re) => re.test(p)));
}

function assertNoProblems(expected) {
  const found = takeProblems(expected);
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

/**
 * A page on the test server (same origin as dist/, strict CSP) that loads the module bundle and
 * whose body is `body`; `setup(page)` runs before it loads (e.g. to add routes).
 */
async function blankPage(label, { name = 'reliability.html', body = '', setup } = {}) {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), label, problems);
  if (setup) await setup(page);
  await page.route(`**/${name}`, (route) => route.fulfill({
    status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': STRICT_CSP },
    body: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>HeadLab reliability</title>' +
      `<script type="module" src="/headlab-components.js"></script></head><body>${body}</body></html>`,
  }));
  await page.goto(new URL(name, site.server.url).href);
  return page;
}

/** Waits until the page's <headlab-trainer> shows step `step` or later. */
const untilStep = (page, step, timeout = 20_000) => page.waitForFunction((s) =>
  (document.querySelector('headlab-trainer')?.snapshot?.runs[0].step ?? -1) >= s, step, { timeout });

/** Elements, images, scripts or frames that HTML in an attribute or token could have inserted, in any shadow root. */
const injected = (page) => page.evaluate(() => {
  const found = [];
  const scan = (root, where) => {
    for (const node of root.querySelectorAll('img, script, iframe, object, embed, b, [onerror], [onclick]')) found.push(`${where}: <${node.localName}>`);
    for (const child of root.querySelectorAll('*')) if (child.shadowRoot) scan(child.shadowRoot, child.localName);
  };
  scan(document.body, 'body');
  return { found, pwned: window.__pwned ?? null };
});

// ------------------------------------------------------------------ attributes

test('hostile attribute values: a note or the default, no uncaught error, no HTML, and every element works afterwards', { timeout: TIMEOUT }, async () => {
  const page = await blankPage('hostile attributes', {
    body: TAGS.map((t) => `<${t}></${t}>`).join('') + '<headlab-theme-toggle></headlab-theme-toggle><headlab-params id="big" d-model="65536" heads="8"></headlab-params>',
  });
  await waitForElements(page);
  const long = 'x'.repeat(5000);
  const many = Array.from({ length: 100 }, (_, i) => `t${i}`).join('|');
  const HOSTILE = {
    'headlab-worked-example': { step: '<b>11</b>', tokens: `${XSS}|${long}`, query: 'abc', wo: 'javascript:alert(1)', ablate: '1,<script>,99' },
    'headlab-heads': { example: 'random', tokens: `${XSS}|${long}|${many}`, heads: '2.5', 'd-model': '-3', seed: 'NaN', 'selected-head': '1e9' },
    'headlab-params': { 'd-model': 'abc', heads: '0', 'd-k': '1e400', 'd-v': '-1' },
    'headlab-scaling': { 'd-k': '0', keys: '1e9', seed: '-5' },
    'headlab-misconceptions': { part: XSS, heads: '99', ablate: `${XSS},2` },
    'headlab-choosing-h': { 'd-model': '', heads: '-3' },
    'headlab-trainer': { task: XSS, heads: 'abc', 'd-model': '1e9', 'learning-rate': 'Infinity', 'batch-size': '-1', speed: 'warp', 'max-steps': '0' },
    'headlab-theme-toggle': { theme: '<script>alert(1)</script>' },
  };
  await page.evaluate((hostile) => {
    for (const [tag, attrs] of Object.entries(hostile)) {
      const el = document.querySelector(tag);
      for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
    }
  }, HOSTILE);
  await waitForElements(page);

  // The notes appear with each element's next update.
  const readNotes = () => page.evaluate((tags) => Object.fromEntries(tags.map((tag) => {
    const root = document.querySelector(tag).shadowRoot;
    const note = root.querySelector('[data-testid="attribute-problems"]');
    return [tag, { note: note && !note.hidden ? note.textContent : '', error: root.querySelector('[data-testid="element-error"]')?.textContent ?? '',
      state: document.querySelector(tag).dataset.state }];
  })), TAGS);
  let notes;
  await eventually(async () => {
    notes = await readNotes();
    for (const tag of TAGS) assert.notEqual(notes[tag].note, '', `${tag} shows a note`);
  });
  await waitForElements(page);
  notes = await readNotes();
  const says = (tag, ...patterns) => {
    for (const p of patterns) assert.match(notes[tag].note, p, `${tag} explains its attributes: ${notes[tag].note}`);
  };
  says('headlab-worked-example', /step="<b>11<\/b>" is not one of 1, 2, .*all; using the default, 1\./, /query="abc" is not a whole number \(1 to 3\); using the default, 3\./,
    /wo="javascript:alert\(1\)" is not one of identity/, /tokens has 2 tokens; the worked example needs 3/, /ablate lists heads that do not exist \("<script>", "99"\)/);
  says('headlab-heads', /heads="2\.5" is not a whole number \(1 to 16\); using the default, 4\./, /d-model="-3" is below 1; using 1\./,
    /seed="NaN" is not a whole number/, /tokens has 102 tokens; the random layer shows the first 64\./,
    /tokens: token 2 is longer than 200 characters; it is shown cut to 200\./,
    /heads=4 does not divide d-model=1; showing h = 1\./);
  says('headlab-params', /d-model="abc" is not a whole number \(1 to 65536\); using the default, 512\./, /heads="0" is below 1; using 1\./,
    /d-k="1e400" is not a whole number/, /d-v="-1" is below 1; using 1\./);
  says('headlab-scaling', /d-k="0" is below 1; using 1\./, /keys="1e9" is above 1024; using 1024\./, /seed="-5" is below 0; using 0\./);
  says('headlab-misconceptions', /part="<img src=x onerror=\\"window\.__pwned=1\\">" is not one of all, a, b, c; using the default, all\./,
    /heads="99" is above 16; using 16\./, /ablate lists heads that do not exist/);
  says('headlab-choosing-h', /d-model="" is not a whole number \(1 to 65536\); using the default, 512\./, /heads="-3" is below 1; using 1\./);
  says('headlab-trainer', /heads="abc" is not a whole number \(1 to 64\); using the default, 2\./, /d-model="1e9" is above 128; using 128\./,
    /learning-rate="Infinity" is not a number/, /batch-size="-1" is below 1; using 1\./, /speed="warp" is not one of slow, normal, fast/, /max-steps="0" is below 1; using 1\./);
  for (const tag of TAGS) {
    assert.equal(notes[tag].error, '', `${tag}: no error while drawing`);
    assert.equal(notes[tag].state, 'ready', `${tag} is ready`);
  }
  ensureScreenshotDir();
  await page.screenshot({ path: path.join(SCREENSHOTS, 'reliability-hostile-attributes.png'), fullPage: true });
  // The unknown task is explained in the trainer's settings, as text.
  await expectText(page.locator('headlab-trainer [data-testid="trainer-dk"]'), /There is no task “<img src=x onerror="window\.__pwned=1">”\. The tasks are: two-relations/);
  await eventually(async () => assert.ok(await page.locator('headlab-trainer [data-action="start"]').isDisabled(), 'Start is disabled while the task is unknown'));
  // Token text is text: the heads view shows the tokens as typed.
  await expectCount(page.locator('headlab-heads .token'), 64);
  const tokens = await page.locator('headlab-heads .token').allTextContents();
  assert.deepEqual(tokens.slice(0, 2), [XSS, long.slice(0, 200)]);
  await eventually(async () => assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'auto', 'an unknown theme is the automatic one'));
  // The largest d_model the element takes is still counted exactly: 4 · 65536² (nothing is allocated).
  await expectText(page.locator('#big [data-testid="params-total"]'), (4 * 65536 ** 2).toLocaleString('en-US'));
  assert.doesNotMatch(await page.locator('#big [data-testid="params-explanation"]').textContent(), /does not divide/);
  assert.deepEqual(await injected(page), { found: [], pwned: null }, 'no HTML was inserted, nothing ran');

  // Back to valid values: every element computes again.
  await page.evaluate((hostile) => {
    for (const [tag, attrs] of Object.entries(hostile)) {
      for (const name of Object.keys(attrs)) document.querySelector(tag).removeAttribute(name);
    }
    document.querySelector('headlab-worked-example').setAttribute('step', 'all');
  }, HOSTILE);
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot?.runs[0].numHeads === 2 &&
    document.querySelector('headlab-trainer').snapshot?.runs.length === 1, null, { timeout: 10_000 });
  await waitForElements(page);
  await eventually(async () => {
    const left = await page.evaluate((tags) => tags.filter((t) => !document.querySelector(t).shadowRoot.querySelector('[data-testid="attribute-problems"]').hidden), TAGS);
    assert.deepEqual(left, [], 'no attribute notes once the values are valid');
    assertClose(assert, await numbers(page, 'output'), WORKED_OUTPUT, 'worked example output for "it" afterwards');
    assertClose(assert, await numbers(page, 'weights-head-1'), WORKED_HEAD1, 'worked example head 1 weights for "it" afterwards');
    assert.equal((await page.locator('headlab-params:not(#big) [data-testid="params-total"]').textContent()).trim(), '1,048,576');
    assert.equal(await page.locator('headlab-heads figure.heatmap').count(), 2, 'the heads view shows the worked example again');
    assert.equal(await page.locator('headlab-scaling [data-testid="scaling-dk"]').textContent(), '64');
    assert.match(await page.locator('headlab-choosing-h [data-testid="choose-dk"]').textContent(), /= 64/);
    assert.equal(await page.locator('headlab-misconceptions figure.heatmap').count(), 4, 'misconceptions (a) shows its 4 heads again');
  });
  await page.locator('headlab-trainer [data-action="step"]').click();
  await untilStep(page, 1, 10_000);
  await page.close();
  assertNoProblems();
});

// ------------------------------------------------------------------ trainer while training

test('<headlab-trainer> while it trains: attribute changes and method calls are answered clearly and training goes on', { timeout: TIMEOUT }, async () => {
  const page = await blankPage('trainer calls', { body: '<headlab-trainer seed="7" speed="fast" max-steps="1000000"></headlab-trainer>' });
  await waitForElements(page);
  const t = page.locator('headlab-trainer');
  const running = () => page.evaluate(() => document.querySelector('headlab-trainer').running);
  const untilRunning = (on, why) => page.waitForFunction((v) => document.querySelector('headlab-trainer').running === v, on, { timeout: 5000 })
    .catch((e) => { throw new Error(`waiting for running = ${on} (${why}): ${e.message}`); });
  /** Calls a method of the element and returns what it threw or rejected with, as "Type: message". */
  const call = (method, ...args) => page.evaluate(async ([m, a]) => {
    try {
      await document.querySelector('headlab-trainer')[m](...a);
      return 'no error';
    } catch (e) {
      return `${e.constructor.name}: ${e.message}`;
    }
  }, [method, args]);
  const setAttr = (name, value) => page.evaluate(([n, v]) => {
    const el = document.querySelector('headlab-trainer');
    if (v === null) el.removeAttribute(n); else el.setAttribute(n, v);
  }, [name, value]);

  await t.locator('[data-action="start"]').click();
  await untilStep(page, 20);
  assert.ok(await running());

  // A value that is not a number: the default, which is what it trains with, so training goes on.
  await setAttr('heads', 'abc');
  await expectText(t.locator('[data-testid="attribute-problems"]'), /heads="abc" is not a whole number/);
  assert.ok(await running(), 'still training with h = 2');

  // Settings that cannot train pause it, with the reason; once they can, it goes on.
  await setAttr('heads', '3');
  await untilRunning(false, 'h = 3');
  await expectText(t.locator('[data-testid="trainer-dk"]'), /h = 3 does not divide d_model = 16/);
  await eventually(async () => assert.ok(await t.locator('[data-action="start"]').isDisabled()));
  assert.match(await call('step', 1), /^Error: headlab-trainer: step\(n\): the settings cannot train: h = 3 does not divide/);
  await setAttr('heads', '2');
  await untilRunning(true, 'h = 2 again');

  // Method calls with bad arguments, and calls that make no sense while training.
  assert.match(await call('step', 5), /^Error: headlab-trainer: step\(n\): training is running; pause\(\) first$/);
  assert.match(await call('step', -1), /^RangeError: headlab-trainer: step\(n\): n must be a whole number from 1 to 10000, got -1$/);
  assert.match(await call('step', 'many'), /^TypeError: .*n must be a whole number from 1 to 10000, got string$/);
  assert.match(await call('setHeadEnabled', 7, false), /^RangeError: Trainer\.setHeadEnabled: head must be an integer in 0\.\.1, got 7$/);
  assert.match(await call('setHeadEnabled', 0, false, 3), /^RangeError: headlab-trainer: setHeadEnabled: run must be 0, got 3$/);
  assert.match(await call('loadModel', 'model.hlab'), /^TypeError: headlab-trainer: loadModel\(bytes\): bytes must be a Uint8Array or ArrayBuffer .*got string$/);
  assert.ok(await running(), 'bad calls leave training running');
  const mine = await page.evaluate(async () => {
    const bytes = new Uint8Array([1, 2, 3, 4]);
    let message = '';
    try { await document.querySelector('headlab-trainer').loadModel(bytes); } catch (e) { message = `${e.constructor.name}: ${e.message}`; }
    return { message, length: bytes.length };
  });
  assert.match(mine.message, /^RangeError: loadTrainer: bytes: .*magic 'HLAB' missing/);
  assert.equal(mine.length, 4, 'the caller’s bytes are not detached');
  // loadModel pauses first; the model in use stays and trains on.
  await untilRunning(false, 'after loadModel');
  const stepBefore = (await page.evaluate(() => document.querySelector('headlab-trainer').snapshot.runs[0].step));
  await t.locator('[data-action="start"]').click();
  await untilStep(page, stepBefore + 20);

  // An unknown task (HTML in it is shown as text) pauses; the default task again goes on.
  await setAttr('task', XSS);
  await untilRunning(false, 'unknown task');
  await expectText(t.locator('[data-testid="trainer-dk"]'), /There is no task “<img/);
  await setAttr('task', null);
  await untilRunning(true, 'task again');

  // A new size while training: a new model that trains at once; an absurd one is clamped and said so.
  await setAttr('d-model', '1e9');
  await page.waitForFunction(() => document.querySelector('headlab-trainer').snapshot?.runs[0].step > 5 &&
    document.querySelector('headlab-trainer').history[0]?.points.length > 0 && document.querySelector('headlab-trainer').running, null, { timeout: 15_000 });
  await expectText(t.locator('[data-testid="attribute-problems"]'), /d-model="1e9" is above 128; using 128\./);
  await expectText(t.locator('[data-testid="trainer-dk"]'), /128 \/ 2 = 64 per head/);
  await setAttr('d-model', null);
  await setAttr('heads', null);
  await page.waitForFunction(() => /16 \/ 2 = 8 per head/.test(document.querySelector('headlab-trainer').shadowRoot.querySelector('[data-testid="trainer-dk"]').textContent));
  // max-steps below 1 is 1: the round ends at once, and Continue trains on.
  await untilRunning(true, 'default size');
  await setAttr('max-steps', '-5');
  await untilRunning(false, 'max-steps -5');
  await setAttr('max-steps', null);
  const before = await page.evaluate(() => document.querySelector('headlab-trainer').snapshot.runs[0].step);
  await t.locator('[data-action="start"]').click();
  await untilStep(page, before + 50);
  assert.equal(await t.locator('[data-testid="trainer-errors"]').textContent(), '', 'no error shown');
  assert.deepEqual(await injected(page), { found: [], pwned: null });
  await page.close();
  assertNoProblems();
});

// ------------------------------------------------------------------ handles after removal

/**
 * Adds a set of every element and removes it at once, before the module has loaded: such
 * elements must not start anything when the module arrives. Resolves once they have seen it.
 */
async function addRemovedEarly(page, loadLab) {
  // The module build loads each element's code on first use (headlab-components.js): here, all of it first.
  await page.evaluate(async () => {
    if (window.HeadLab) return;  // the classic build defines every element at once
    const { tags, loadElement } = await import('/headlab-components.js');
    await Promise.all(tags.map((tag) => loadElement(tag)));
  });
  await page.waitForFunction(() => customElements.get('headlab-trainer'));
  await page.evaluate((tags) => {
    window.__early = tags.map((tag) => document.body.appendChild(document.createElement(tag)));
    for (const el of window.__early) el.remove();
  }, TAGS);
  await loadLab();
  await page.waitForFunction(() => window.__early.every((el) => el.dataset.state === 'ready' && !el.hasAttribute('data-busy')));
  // That nothing starts has no event to wait for: the elements are watched over a short window.
  await page.waitForTimeout(100);
  assert.deepEqual(await page.evaluate(() => window.__early.filter((el) => el._client).map((el) => el.localName)), [],
    'elements removed before the module loaded hold no trainer client');
}

/** Adds every element, waits until each is ready, trains a few steps, removes them all and lets them clean up. */
async function addUseRemove(page) {
  await page.evaluate((tags) => {
    for (const tag of tags) document.body.append(Object.assign(document.createElement(tag), { id: `x-${tag}` }));
  }, TAGS);
  await waitForElements(page);
  await page.locator('headlab-trainer [data-action="step"]').click();
  await untilStep(page, 1);
  await page.locator('headlab-trainer [data-action="start"]').click();
  await untilStep(page, 10);
  // Removal frees resources in a task after disconnect (a move re-adds within the same task):
  // the callers wait for what they check.
  await page.evaluate(() => { for (const el of [...document.querySelectorAll('body > *')].filter((e) => e.localName.startsWith('headlab-'))) el.remove(); });
}

test('removing every element frees what it held: live Embind handles and the heap return to their baseline, the trainer Worker ends', { timeout: TIMEOUT }, async () => {
  // Over http (module build): compute and training in Workers.
  const overHttp = async () => {
    const page = await blankPage('handles http');
    const workers = [];
    page.on('worker', (w) => {
      const entry = { url: w.url(), closed: false };
      workers.push(entry);
      w.on('close', () => { entry.closed = true; });
    });
    const lab = () => page.evaluate(async () => {
      const { createHeadlab } = await import('/headlab-components.js');
      const l = await createHeadlab();
      return { handles: l.liveHandleCount(), heap: l.info().heapInUseBytes };
    });
    await addRemovedEarly(page, lab);
    const start = await lab();
    await addUseRemove(page);
    const trainerWorkers = workers.filter((w) => /headlab-trainer-worker\.js$/.test(w.url));
    assert.equal(trainerWorkers.length, 1, `one trainer Worker was started (none for the trainer removed early): ${JSON.stringify(workers)}`);
    await eventually(async () => {
      assert.ok(trainerWorkers.every((w) => w.closed), 'the trainer Worker ended when its element was removed');
      const end = await lab();
      assert.equal(end.handles, start.handles, 'live Embind handles on the main thread');
    });
    await page.close();
  };

  // From file:// (classic build): everything on the main thread, trainers included.
  const fromFile = async () => {
    const page = watch(await site.browser.newPage(), 'handles file://', problems);
    await page.goto(fileUrl('index.html'));
    const lab = () => page.evaluate(async () => {
      const l = await window.HeadLab.createHeadlab();
      return { handles: l.liveHandleCount(), heap: l.info().heapInUseBytes };
    });
    await addRemovedEarly(page, lab);
    const base = await lab();
    await addUseRemove(page);
    const first = await eventually(async () => {
      const now = await lab();
      assert.equal(now.handles, base.handles, 'live Embind handles after the first round');
      return now;
    });
    await addUseRemove(page);
    // The arena the API reuses may have grown in the first round; a second identical round must not grow the heap.
    await eventually(async () => {
      const second = await lab();
      assert.equal(second.handles, base.handles, 'live Embind handles after the second round');
      assert.equal(second.heap, first.heap, `wasm heap in use after two rounds: ${first.heap} then ${second.heap} bytes (trainers not freed?)`);
    });
    await page.close();
  };

  await Promise.all([overHttp(), fromFile()]);
  assertNoProblems();
});

// ------------------------------------------------------------------ faults

const LOAD_FAILURE = /This demo could not start: its WebAssembly module \(headlab_core\.wasm\) did not load\..*Details: \S/s;

/** Every element shows the load failure as text in its shadow root, within `timeout` ms; the theme toggle still works. */
async function expectLoadFailure(page, what, timeout = 15_000) {
  await page.waitForFunction((tags) => tags.every((t) => document.querySelector(t)?.dataset.state === 'failed'), TAGS, { timeout });
  const shown = await page.evaluate((tags) => tags.map((t) => {
    const box = document.querySelector(t).shadowRoot.querySelector('[role="alert"]');
    return { tag: t, text: box?.textContent ?? '', visible: Boolean(box && box.getBoundingClientRect().height > 20) };
  }), TAGS);
  for (const s of shown) {
    assert.match(s.text, LOAD_FAILURE, `${what}: ${s.tag} explains the failure: “${s.text}”`);
    assert.ok(s.visible, `${what}: ${s.tag}'s message is visible`);
  }
  await page.locator('headlab-theme-toggle button').click();
  await eventually(async () => assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light', `${what}: the theme toggle still works`));
  return shown[0].text;
}

const ALL_ELEMENTS = TAGS.map((t) => `<${t}></${t}>`).join('') + '<headlab-theme-toggle></headlab-theme-toggle>';
// The browser logs the 404 itself (once: the library asks once); Emscripten's loader, which would
// ask again and log "Aborted(…)" and "falling back to ArrayBuffer", is not used. Page errors are not expected.
const LOAD_NOISE = [/console error: Failed to load resource: .*404/i, /HTTP 404 for .*headlab_core\.wasm/, /request failed: .*headlab_core\.wasm/];

test('the wasm file missing (404) or cut short: every element says so in words, in the module and the classic build', { timeout: TIMEOUT }, async () => {
  const moduleBuild = async (fault) => {
    const page = watch(await site.browser.newPage(), `wasm ${fault}`, problems);
    await page.route('**/headlab_core.wasm', async (route) => {
      if (fault === '404') return route.fulfill({ status: 404, contentType: 'text/plain', body: 'Not found' });
      const response = await route.fetch();
      const body = await response.body();
      return route.fulfill({ response, body: body.subarray(0, body.length >> 1) });
    });
    await page.route('**/reliability-fault.html', (route) => route.fulfill({
      status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': STRICT_CSP },
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>fault</title><script type="module" src="/headlab-components.js"></script></head><body>${ALL_ELEMENTS}</body></html>`,
    }));
    await page.goto(new URL('reliability-fault.html', site.server.url).href);
    const text = await expectLoadFailure(page, `module build, wasm ${fault}`);
    ensureScreenshotDir();
    await page.screenshot({ path: path.join(SCREENSHOTS, `reliability-wasm-${fault}.png`) });
    // The details name what the server answered (the library's one request), then the browser's reason.
    assert.match(text, fault === '404' ? /Details: HTTP 404 Not Found$/ : /Details: HTTP 200, application\/wasm; CompileError: /);
    // A missing or damaged file, not the policy, CORS or the network.
    assert.match(text, /The file may be missing, cut short or blocked\./);
    assert.doesNotMatch(text, /ASSERTIONS/, 'no build advice meant for developers');
    await page.close();
  };

  // The classic build carries the wasm inside itself (base64): cut that short.
  const classicBuild = async () => {
    const wasm = readFileSync(path.join(DIST, 'headlab_core.wasm')).toString('base64');
    const page = watch(await site.browser.newPage(), 'classic wasm truncated', problems);
    await page.route('**/headlab-components.classic.js', async (route) => {
      const response = await route.fetch();
      const text = await response.text();
      assert.equal(text.split(wasm).length, 2, 'the classic bundle embeds the wasm once');
      return route.fulfill({ response, body: text.replace(wasm, wasm.slice(0, (wasm.length >> 3) * 4)) });
    });
    await page.route('**/reliability-classic.html', (route) => route.fulfill({
      status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': STRICT_CSP },
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>fault</title><script src="/headlab-components.classic.js" defer></script></head><body>${ALL_ELEMENTS}</body></html>`,
    }));
    await page.goto(new URL('reliability-classic.html', site.server.url).href);
    assert.match(await expectLoadFailure(page, 'classic build, embedded wasm cut short'), /Details: CompileError: /);
    await page.close();
  };

  await Promise.all([moduleBuild('404'), moduleBuild('truncated'), classicBuild()]);
  assertNoProblems(LOAD_NOISE);
});

test('a CSP whose worker-src refuses HeadLab\'s own Workers: the trainer and choosing h compute on the main thread and name the directive to add', { timeout: TIMEOUT }, async () => {
  const page = watch(await site.browser.newPage({ viewport: { width: 1280, height: 900 } }), 'worker-src none', problems);
  await page.route('**/reliability-workers.html', (route) => route.fulfill({
    status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': `${STRICT_CSP}; worker-src 'none'` },
    body: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>HeadLab reliability</title><script type="module" src="/headlab-components.js"></script>' +
      '</head><body><headlab-trainer></headlab-trainer><headlab-choosing-h lang="es"></headlab-choosing-h></body></html>',
  }));
  await page.goto(new URL('reliability-workers.html', site.server.url).href);
  await expectText(page.locator('headlab-trainer [data-testid="trainer-mode"]'),
    /its main thread.*this page’s Content-Security-Policy refused the Worker script \(worker-src\): add 'self' to its worker-src directive/s);
  await expectText(page.locator('headlab-choosing-h p.status'),
    /su hilo principal.*la Content-Security-Policy de esta página rechazó el script del Worker \(worker-src\): añada 'self' a su directiva worker-src/s);
  await page.close();
  assertNoProblems([/console error: Creating a worker from '.*headlab-(trainer-)?worker\.js' violates the following Content Security Policy directive: "worker-src 'none'"/]);
});

test('offline (no answer to any .wasm request): every element, the language model too, says the connection is the cause, with no uncaught error', { timeout: TIMEOUT }, async () => {
  const lm = 'headlab-language-model', explorer = 'headlab-model-explorer';
  const page = await blankPage('wasm offline', {
    name: 'reliability-offline.html', body: `${ALL_ELEMENTS}<${lm}></${lm}><${explorer}></${explorer}>`,
    // The page's requests and its Workers' (the language model's Worker loads its own module).
    setup: (p) => p.route('**/*.wasm', (route) => route.abort('internetdisconnected')),
  });
  // Each element that connects after a failed load asks again (a failed load can be retried): on a busy machine that takes a while.
  const text = await expectLoadFailure(page, 'offline', 45_000);
  const cause = /did not load\.The request for headlab_core\.wasm got no answer: the connection may have dropped, or the browser is offline\./;
  assert.match(text, cause);
  await page.waitForFunction((t) => document.querySelector(t)?.dataset.state === 'failed', lm, { timeout: 45_000 });
  assert.match(await page.locator(`${lm} [role="alert"]`).first().textContent(), cause);
  // The language model's Worker could not load its module either: its main-thread fallback fails quietly (the element already says why).
  await eventually(async () => assert.ok(await page.evaluate((t) => document.querySelector(t).ctl?.client?.mode === 'main', lm), 'the Worker gave up'));
  // Issue 32: the explorer's state said 'empty' while its box said it could not start.
  await page.waitForFunction((t) => document.querySelector(t)?.dataset.state === 'failed', explorer, { timeout: 45_000 });
  assert.match(await page.locator(`${explorer} [role="alert"]`).first().textContent(), /did not load/);
  assert.equal(await page.evaluate((t) => document.querySelector(t).state, explorer), 'error');
  await page.close();
  assertNoProblems([/request failed: .*\.wasm \(net::ERR_INTERNET_DISCONNECTED\)$/, /console error: Failed to load resource: net::ERR_INTERNET_DISCONNECTED$/]);
});

test('the trainer Worker crashes, then goes silent, during training: the element says so, and Restart trains again in a new Worker', { timeout: TIMEOUT }, async () => {
  // The first trainer Worker is served with a fault: it throws an uncaught error after its 10th snapshot.
  let served = 0;
  const page = await blankPage('worker crash', {
    body: '<headlab-trainer seed="7" speed="fast" max-steps="100000"></headlab-trainer>',
    setup: (p) => p.route('**/headlab-trainer-worker.js', async (route) => {
      const response = await route.fetch();
      let body = await response.text();
      served += 1;
      if (served === 1) {
        body += `\n;(() => { let n = 0; const post = self.postMessage.bind(self);
          self.postMessage = (m, t) => { post(m, t); if (m && m.event === 'snapshot' && ++n === 10) setTimeout(() => { throw new Error('injected crash'); }); };
        })();\n`;
      }
      return route.fulfill({ response, body });
    }),
  });
  await waitForElements(page);
  const t = page.locator('headlab-trainer');
  const errors = [];
  await page.exposeFunction('__headlabError', (m) => errors.push(m));
  await page.evaluate(() => document.querySelector('headlab-trainer').addEventListener('headlab-error', (e) => window.__headlabError(e.detail.message)));

  await t.locator('[data-action="start"]').click();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').shadowRoot.querySelector('[data-action="restart"]'), null, { timeout: 20_000 });
  await expectText(t.locator('[data-testid="trainer-errors"]'),
    /^Training stopped\. The trainer Worker stopped with an error: .*injected crash\. The model it was training is lost; Restart trains a new one from step 0 in a new Worker\./);
  ensureScreenshotDir();
  await t.screenshot({ path: path.join(SCREENSHOTS, 'reliability-worker-crash.png') });
  assert.equal(await page.evaluate(() => document.querySelector('headlab-trainer').running), false);
  assert.ok(await t.locator('[data-action="start"]').isDisabled(), 'Start waits for Restart');
  assert.match(await page.evaluate(async () => {
    try { await document.querySelector('headlab-trainer').step(1); return 'no error'; } catch (e) { return e.message; }
  }), /the trainer Worker has stopped; call restart\(\) first/);
  assert.ok(errors.some((m) => /injected crash/.test(m)), `headlab-error fired: ${errors}`);

  // Restart: a new Worker, a new model from step 0, training at once; the heads specialise.
  await t.locator('[data-action="restart"]').click();
  await page.waitForFunction(() => document.querySelector('headlab-trainer').running, null, { timeout: 10_000 });
  assert.equal(served, 2, 'a new trainer Worker was loaded');
  await eventually(async () => assert.equal(await t.locator('[data-testid="trainer-errors"]').textContent(), ''));
  await page.waitForFunction(() => document.querySelector('headlab-trainer').hasAttribute('data-specialised-step'), null, { timeout: 30_000 });

  // A Worker that stops answering (here: terminated behind the element's back) is noticed by the watchdog.
  await page.evaluate(() => {
    const client = document.querySelector('headlab-trainer')._client;
    client.watchdogMs = 1000;
    client._worker.terminate();
  });
  await page.waitForFunction(() => document.querySelector('headlab-trainer').shadowRoot.querySelector('[data-action="restart"]'), null, { timeout: 10_000 });
  await expectText(t.locator('[data-testid="trainer-errors"]'), /The trainer Worker stopped answering \(no message for \d+ s\)/);
  const old = await page.evaluate(() => document.querySelector('headlab-trainer').snapshot.runs[0].step);
  await t.locator('[data-action="restart"]').click();
  // The new model starts from step 0 (the dead one had reached `old`), and trains.
  await page.waitForFunction((s) => document.querySelector('headlab-trainer').snapshot?.runs[0].step < s, old, { timeout: 10_000 });
  await untilStep(page, 100);
  assert.ok(await page.evaluate(() => document.querySelector('headlab-trainer').running));
  await page.close();
  assertNoProblems([/injected crash/]);
});

test('<headlab-language-model>: a Worker that never answers before its first model is replaced at once, unasked; one that stops answering a request later is reported with Start again', { timeout: TIMEOUT }, async () => {
  // The first Worker posts that it is ready, then answers nothing (as Firefox ESR's did when the
  // thread Worker it made never started); the Worker started after it is the real one.
  let served = 0;
  const page = await blankPage('lm silent worker', {
    body: '<headlab-language-model></headlab-language-model>',
    setup: (p) => p.route('**/headlab-lm-worker.js', (route) => {
      if (served++ > 0) return route.fallback();
      return route.fulfill({ status: 200, headers: { 'Content-Type': 'text/javascript' }, body: 'postMessage({ ready: true });' });
    }),
  });
  const lm = page.locator('headlab-language-model');
  // The watchdog's 10 s, a new Worker, its model.
  await waitForElements(page, 40_000);
  assert.equal(served, 2, 'a second Worker was started');
  await expectText(lm.locator('[data-testid="lm-status"]'), /^The first Worker stopped answering before it made the model \(no message for 10 s\), so the model comes from a new Worker\.$/);
  assert.equal(await lm.locator('[data-action="restart"]').count(), 0, 'no button to press');
  assert.equal(await page.evaluate(() => document.querySelector('headlab-language-model').snapshot?.runs.length), 1, 'a model');

  // Later, a request the Worker never answers (it is gone): said, with Start again, which works.
  await page.evaluate(() => {
    const client = document.querySelector('headlab-language-model').ctl.client;
    client.watchdogMs = 1000;
    client._worker.terminate();
  });
  await page.evaluate(() => document.querySelector('headlab-language-model').setAttribute('seed', '7'));
  await page.waitForFunction(() => document.querySelector('headlab-language-model').shadowRoot.querySelector('[data-action="restart"]'), null, { timeout: 10_000 });
  await expectText(lm.locator('[data-testid="lm-errors"]'), /stopped answering \(no message for \d+ s\)/);
  await lm.locator('[data-action="restart"]').click();
  await page.waitForFunction(() => {
    const e = document.querySelector('headlab-language-model');
    return !e.shadowRoot.querySelector('[data-action="restart"]') && e.snapshot?.runs.length === 1 && !e.hasAttribute('data-busy');
  }, null, { timeout: 20_000 });
  await page.close();
  assertNoProblems([/stopped answering/]);
});
