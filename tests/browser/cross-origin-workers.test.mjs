// HeadLab's Workers when a course page on one origin loads HeadLab from another (docs/embedding.md,
// "Workers from another origin"): the page is served from http://localhost:<port>, dist/ from a
// test server on http://127.0.0.1:<port> with CORS (two origins). Browsers refuse
// `new Worker(crossOriginUrl)`; HeadLab starts a same-origin blob: Worker that imports the script.
//   module build, no CSP              → <headlab-language-model> trains in a Worker (runsIn 'worker');
//                                       no main-thread task over 100 ms while it trains
//   module build, worker-src 'self'   → it trains on the main thread (runsIn 'main-thread'), says why
//                                       in the element, and no task over 200 ms while it trains
//   module build, the strict CSP of docs/embedding.md for this mode → it trains in a Worker
//   trainer, explorer, choosing h     → in Workers; under worker-src 'self' on the main thread, saying why
//                                       (the trainer and choosing h in Spanish, by the reason's code)
//   lib/headlab.js, no CSP            → createParallelLayer({ threads: 2 }) runs in 2 Workers, same
//                                       outputs as one thread; info().parallel says 'workers'
//   lib/headlab.js, worker-src 'self' → one thread (the calling one), and info().parallel says why
//                                       (reason, and reasonCode 'csp')
// Long tasks are read with a PerformanceObserver ('longtask': any task over 50 ms), registered
// before HeadLab loads, and each main-thread task's CPU time from a Chromium trace (see
// assertResponsive: wall time on a busy machine counts other processes' time). Both are printed.
import { test, before, after } from 'node:test';
import http from 'node:http';
import os from 'node:os';
import assert from 'node:assert/strict';
import { serve } from '../../tools/serve.mjs';
import { DIST, SCREENSHOTS, ensureDist, ensureScreenshotDir, launch, watch } from './helpers.mjs';
import { expectText } from './expect.mjs';

const TIMEOUT = 60_000;
const TAG = 'headlab-language-model';
const NO_BLOB_WORKERS = "worker-src 'self'";
let cdn, course, browser, base;
const pages = new Map();  // path → { body, csp }
const problems = [];

before(async () => {
  await ensureDist();
  ensureScreenshotDir();
  cdn = await serve({ port: 0, root: DIST, cors: true });
  base = cdn.url.replace('localhost', '127.0.0.1');
  course = http.createServer((req, res) => {
    const p = pages.get(new URL(req.url, 'http://x').pathname);
    const headers = { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' };
    if (p?.csp) headers['Content-Security-Policy'] = p.csp;
    res.writeHead(p ? 200 : 404, headers);
    res.end(p?.body ?? '');
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

// Records every long task (over 50 ms) of the page from its first script on.
const LONG_TASKS = `<script>window.longTasks = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) window.longTasks.push({ start: e.startTime, duration: e.duration }); })
  .observe({ type: 'longtask', buffered: true });</script>`;

async function open(label, path, body, csp = '') {
  pages.set(path, { body, csp });
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }), label, problems);
  await page.goto(`http://localhost:${course.address().port}${path}`);
  return page;
}

/** Takes the problems recorded so far, leaving out those `expected` matches. */
function assertNoProblems(expected = []) {
  const found = problems.splice(0).filter((p) => !expected.some((re) => re.test(p)));
  assert.deepEqual(found, [], `problems in the browser:\n${found.join('\n')}`);
}

// Chromium's console line for the blob: Worker the policy refused (HeadLab's one probe).
const REFUSED = /console error: Creating a worker from 'blob:http:\/\/localhost:\d+\/[\w-]+' violates the following Content Security Policy directive: "worker-src 'self'"/;

const lessonPage = () => '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson 7: induction heads</title>' +
  `<link rel="icon" href="data:,">${LONG_TASKS}<script type="module" src="${base}headlab-components.js"></script></head>` +
  `<body><h1>Lesson 7</h1><${TAG} compact><p>The demo appears here once HeadLab has loaded.</p></${TAG}></body></html>`;

/**
 * Starts training, waits until it has trained `steps` steps past the start and drawn several
 * snapshots, pauses, and returns where it ran and the long tasks of that stretch.
 */
async function trainAndWatch(page, steps) {
  await page.waitForFunction((tag) => document.querySelector(tag)?.dataset.state === 'ready' && !document.querySelector(tag).hasAttribute('data-busy') &&
    document.querySelector(tag).runsIn !== null, TAG, { timeout: 40_000 });
  await browser.startTracing(page, { categories: ['disabled-by-default-devtools.timeline', 'devtools.timeline'] });
  const start = await page.evaluate((tag) => {
    const e = document.querySelector(tag);
    e.start();
    return { at: performance.now(), step: e.snapshot?.runs[0].step ?? 0 };
  }, TAG);
  await page.waitForFunction(([tag, until]) => (document.querySelector(tag).snapshot?.runs[0].step ?? 0) >= until,
    [TAG, start.step + steps], { timeout: 45_000, polling: 100 });
  const r = await page.evaluate(([tag, from]) => {
    const e = document.querySelector(tag);
    e.pause();
    const tasks = window.longTasks.filter((t) => t.start + t.duration > from);
    return { runsIn: e.runsIn, mode: e.computeMode, step: e.snapshot.runs[0].step, seconds: (performance.now() - from) / 1000, tasks };
  }, [TAG, start.at]);
  const trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
  const events = trace.traceEvents ?? trace;
  const main = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  // Every task of the renderer's main thread: wall time and the main thread's own CPU time (ms).
  const mainTasks = events.filter((e) => e.name === 'RunTask' && e.ph === 'X' && main.has(`${e.pid}:${e.tid}`))
    .map((e) => ({ wall: e.dur / 1000, cpu: (e.tdur ?? e.dur) / 1000 }));
  return { ...r, steps: r.step - start.step, mainTasks };
}

/**
 * Asserts that the page's main thread ran no task over `limitMs` while training. A long task's
 * duration (PerformanceObserver) is wall time: on a machine running more threads than it has cores
 * it includes the time other processes held the core. The page's own work per task is its CPU time
 * (the trace's thread time), asserted always; the wall time is asserted too when the machine is not
 * oversubscribed (load average below the core count), and printed either way.
 */
function assertResponsive(r, limitMs, what) {
  const worstCpu = Math.max(0, ...r.mainTasks.map((t) => t.cpu));
  const longest = Math.max(0, ...r.tasks.map((t) => t.duration));
  const load = os.loadavg()[0], cores = os.availableParallelism();
  console.log(`# ${what}: ${r.steps} steps in ${r.seconds.toFixed(1)} s (${(r.steps / r.seconds).toFixed(0)} steps/s); main-thread tasks: ${r.mainTasks.length}, ` +
    `most CPU in one ${worstCpu.toFixed(0)} ms; long tasks (PerformanceObserver): ${r.tasks.length}, longest ${longest.toFixed(0)} ms wall; load average ${load.toFixed(1)} on ${cores} cores`);
  assert.ok(r.mainTasks.length > 0, 'the trace holds the main thread\'s tasks');
  assert.ok(worstCpu <= limitMs, `no main-thread task uses over ${limitMs} ms of CPU while training: worst ${worstCpu.toFixed(1)} ms`);
  if (load < cores) assert.ok(longest <= limitMs, `no long task over ${limitMs} ms while training: ${JSON.stringify(r.tasks)}`);
}

test('a course page loading the module build from another origin trains the language model in a Worker, with no main-thread task over 100 ms', { timeout: TIMEOUT }, async () => {
  const page = await open('lm cross-origin', '/lesson.html', lessonPage());
  const r = await trainAndWatch(page, 300);
  assert.equal(r.runsIn, 'worker');
  assert.equal(r.mode, 'worker');
  assertResponsive(r, 100, 'Worker from another origin');
  // runsIn is read-only.
  const kept = await page.evaluate((tag) => { const e = document.querySelector(tag); try { e.runsIn = 'main-thread'; } catch { /* strict mode */ } return e.runsIn; }, TAG);
  assert.equal(kept, 'worker');
  await expectText(page.locator(`${TAG} [data-testid="lm-mode"]`), /runs in a Web Worker/);
  await page.close();
  assertNoProblems();
});

test('with worker-src \'self\' (no blob: Workers) it trains on the main thread, says so, and no task exceeds 200 ms', { timeout: TIMEOUT }, async () => {
  const page = await open('lm cross-origin csp', '/strict.html', lessonPage(), NO_BLOB_WORKERS);
  const r = await trainAndWatch(page, 150);
  assert.equal(r.runsIn, 'main-thread');
  const note = await expectText(page.locator(`${TAG} [data-testid="lm-mode"]`), /runs on the page itself \(its main thread\)/);
  assert.match(note, /Content-Security-Policy does not allow blob: Workers \(worker-src\).*: add blob: to its worker-src directive/, note);
  assert.ok(await page.locator(`${TAG} [data-testid="lm-mode"]`).isVisible(), 'the note is visible');
  assertResponsive(r, 200, 'main thread (the CSP refuses blob: Workers)');
  await page.screenshot({ path: `${SCREENSHOTS}/cross-origin-csp-main-thread.png` });
  await page.close();
  // One refusal only: HeadLab asks once (its probe) and remembers the answer.
  const refused = problems.filter((p) => REFUSED.test(p)).length;
  assert.equal(refused, 1, `one refused blob: Worker, got ${refused}:\n${problems.join('\n')}`);
  assertNoProblems([REFUSED]);
});

test('under the strict CSP docs/embedding.md gives for this mode (blob: Workers allowed), it trains in a Worker with no violation', { timeout: TIMEOUT }, async () => {
  const cdnOrigin = new URL(base).origin;
  const csp = `default-src 'self'; script-src 'self' 'wasm-unsafe-eval' ${cdnOrigin}; worker-src 'self' blob:; ` +
    `connect-src 'self' ${cdnOrigin}; font-src ${cdnOrigin}; style-src 'self' 'unsafe-inline'; img-src 'self' data:`;
  // The page's own long-task recorder is an inline script, which this policy forbids: none here.
  const body = lessonPage().replace(LONG_TASKS, '');
  const page = await open('lm cross-origin strict csp', '/csp.html', body, csp);
  await page.waitForFunction((tag) => document.querySelector(tag)?.runsIn === 'worker', TAG, { timeout: 40_000 });
  await page.evaluate((tag) => document.querySelector(tag).start(), TAG);
  await page.waitForFunction((tag) => (document.querySelector(tag).snapshot?.runs[0].step ?? 0) >= 40, TAG, { timeout: 40_000 });
  await page.evaluate((tag) => document.querySelector(tag).pause(), TAG);
  await expectText(page.locator(`${TAG} [data-testid="lm-mode"]`), /runs in a Web Worker/);
  await page.close();
  assertNoProblems();
});

// The other computing elements on one page: the trainer, the real-models explorer (HeadLab's own
// model) and choosing h (its compute Worker), each saying where it runs; with `spanish`, the
// trainer and choosing h say it in Spanish (their own lang), the explorer in English.
const ELEMENTS = ['headlab-trainer', 'headlab-model-explorer', 'headlab-choosing-h'];
const elementsPage = (spanish = false) => '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson 8</title>' +
  `<link rel="icon" href="data:,"><script type="module" src="${base}headlab-components.js"></script></head><body>` +
  `<headlab-trainer compact${spanish ? ' lang="es"' : ''}></headlab-trainer><headlab-model-explorer model="induction"></headlab-model-explorer>` +
  `<headlab-choosing-h${spanish ? ' lang="es"' : ''}></headlab-choosing-h></body></html>`;
const whereEach = (page) => page.waitForFunction((tags) => {
  const r = tags.map((t) => document.querySelector(t)?.runsIn ?? null);
  return r.every((x) => x !== null) && r;
}, ELEMENTS, { timeout: 45_000, polling: 200 }).then((h) => h.jsonValue());

test('the trainer, the real-models explorer and choosing h run in Workers from another origin, and on the main thread (saying why) under worker-src \'self\'', { timeout: TIMEOUT }, async () => {
  let page = await open('elements cross-origin', '/elements.html', elementsPage());
  assert.deepEqual(await whereEach(page), ['worker', 'worker', 'worker']);
  await page.close();
  assertNoProblems();
  page = await open('elements cross-origin csp', '/elements-strict.html', elementsPage(true), NO_BLOB_WORKERS);
  assert.deepEqual(await whereEach(page), ['main-thread', 'main-thread', 'main-thread']);
  const why = /Content-Security-Policy does not allow blob: Workers \(worker-src\).*: add blob: to its worker-src directive/;
  const porque = /la Content-Security-Policy de esta página no permite Workers blob: \(worker-src\), que HeadLab necesita.*: añada blob: a su directiva worker-src/;
  assert.match(await expectText(page.locator('headlab-trainer [data-testid="trainer-mode"]'), porque), /^El entrenamiento se hace en la propia página \(su hilo principal\)/);
  assert.match(await expectText(page.locator('headlab-model-explorer [data-testid="explorer-mode"]'), why), /The model runs on the page itself/);
  assert.match(await expectText(page.locator('headlab-choosing-h p.status'), porque), /^Consultas y claves .*Los cálculos se hacen en la propia página \(su hilo principal\)/);
  assert.ok(await page.locator('headlab-model-explorer [data-testid="explorer-mode"]').isVisible());
  await page.close();
  assertNoProblems([REFUSED]);
});

// In the page: a layer of 8 heads on 2 Workers (or what runs), against createLayer on one thread.
async function parallelCheck(base) {
  const { createHeadlab } = await import(`${base}lib/headlab.js`);
  const lab = await createHeadlab();
  const info = lab.info().parallel;
  let s = 12345;
  const rand = (n) => Float32Array.from({ length: n }, () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 - 0.5; });
  const dModel = 64, numHeads = 8, T = 24;
  const weights = {
    dModel, numHeads, wQ: rand(dModel * dModel), wK: rand(dModel * dModel), wV: rand(dModel * dModel), wO: rand(dModel * dModel),
    bO: rand(dModel),
  };
  const query = rand(T * dModel);
  const layer = await lab.createParallelLayer({ ...weights, threads: 2 });
  const live = lab.liveWorkerCount();
  const p = await layer.forward({ query, causal: true, returnWeights: true });
  const one = lab.createLayer(weights);
  const o = one.forward({ query, causal: true, returnWeights: true });
  let maxDiff = 0;
  for (let i = 0; i < o.output.length; i++) maxDiff = Math.max(maxDiff, Math.abs(o.output[i] - p.output[i]));
  for (let i = 0; i < o.weights.length; i++) maxDiff = Math.max(maxDiff, Math.abs(o.weights[i] - p.weights[i]));
  const result = {
    info, after: lab.info().parallel, mechanism: layer.mechanism, threads: layer.threads, reason: layer.reason ?? null,
    reasonCode: layer.reasonCode ?? null, live, maxDiff, n: o.output.length,
  };
  one.dispose();
  await layer.dispose();
  result.liveAfter = lab.liveWorkerCount();
  return result;
}

const apiPage = () => '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>API</title><link rel="icon" href="data:,"></head><body><p>API</p></body></html>';

test('a page importing lib/headlab.js from another origin runs createParallelLayer({ threads: 2 }) in 2 Workers, with the outputs of one thread', { timeout: TIMEOUT }, async () => {
  const page = await open('parallel cross-origin', '/api.html', apiPage());
  const r = await page.evaluate(parallelCheck, base);
  console.log(`# parallel from another origin: ${JSON.stringify(r)}`);
  assert.equal(r.info.mechanism, 'workers');
  assert.ok(r.info.defaultThreads >= 1 && !('reason' in r.info) && !('reasonCode' in r.info), JSON.stringify(r.info));
  assert.equal(r.reasonCode, null);
  assert.equal(r.mechanism, 'workers');
  assert.equal(r.threads, 2);
  assert.equal(r.live, 2, 'two Workers running');
  assert.equal(r.liveAfter, 0);
  assert.ok(r.maxDiff <= 1e-5, `outputs and weights as on one thread: max difference ${r.maxDiff}`);
  await page.close();
  assertNoProblems();
});

test('with a CSP that refuses blob: Workers, createParallelLayer falls back to one thread and info().parallel says why', { timeout: TIMEOUT }, async () => {
  const page = await open('parallel cross-origin csp', '/api-strict.html', apiPage(), NO_BLOB_WORKERS);
  const r = await page.evaluate(parallelCheck, base);
  console.log(`# parallel, CSP refuses blob: Workers: ${JSON.stringify(r)}`);
  // Before any layer was made, info() already tells the truth (createHeadlab asked the page).
  assert.equal(r.info.mechanism, 'calling-thread');
  assert.equal(r.info.defaultThreads, 1);
  assert.match(r.info.reason, /Content-Security-Policy does not allow blob: Workers \(worker-src\)/);
  assert.equal(r.info.reasonCode, 'csp');
  assert.deepEqual(r.after, r.info);
  assert.equal(r.mechanism, 'calling-thread');
  assert.equal(r.threads, 1);
  assert.equal(r.reason, r.info.reason);
  assert.equal(r.reasonCode, 'csp');
  assert.equal(r.live, 0, 'no Worker running');
  assert.ok(r.maxDiff <= 1e-6, `outputs as on one thread: max difference ${r.maxDiff}`);
  // mechanism: 'workers', asked for by name, says why it cannot run.
  const asked = await page.evaluate(async (b) => {
    const lab = await (await import(`${b}lib/headlab.js`)).createHeadlab();
    return lab.createParallelLayer({ dModel: 8, numHeads: 2, wQ: new Float32Array(64), wK: new Float32Array(64), wV: new Float32Array(64), wO: new Float32Array(64), mechanism: 'workers' })
      .then(() => 'resolved', (e) => String(e.message));
  }, base);
  assert.match(asked, /^createParallelLayer: the workers mechanism cannot run here: this page’s Content-Security-Policy/);
  await page.close();
  assertNoProblems([REFUSED]);
});
