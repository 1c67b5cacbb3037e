// Pretrained models on threads in Chromium. On a cross-origin isolated page, a module Worker loads a
// fixture checkpoint from its folder URL on 2 threads (the threaded module and its thread Worker) and
// gives exactly the one-thread answers, which agree with the float64 reference; on the page itself
// 'auto' takes the cores. On a page that is not isolated, 2 threads are refused saying why and 'auto'
// gives one thread with the reason in threadsNote.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { REPO, launch, watch } from './helpers.mjs';
import { serve } from '../../tools/serve.mjs';
import { assertClose, expectedOf } from '../js/pretrained-helpers.mjs';

const FIXTURE = '/tests/golden/pretrained/gpt2-f32/';
const PAGE = '/tests/browser/pretrained-threads.html';  // an empty page the tests import the library into
const WORKER = '/tests/browser/pretrained-threads-worker.mjs';
let browser, isolated, plain;
const problems = [];

before(async () => {
  browser = await launch();
  isolated = await serve({ port: 0, root: REPO, isolate: true });
  plain = await serve({ port: 0, root: REPO, isolate: false });
});
after(async () => {
  await browser?.close();
  await isolated?.close();
  await plain?.close();
  assert.deepEqual(problems, [], 'no console error or warning, page error or failed request');
});

test('isolated page: a Worker on 2 threads gives one thread\'s answers exactly; auto takes the cores', { timeout: 180_000 }, async () => {
  const page = watch(await browser.newPage(), 'pretrained threads, isolated', problems);
  await page.goto(isolated.url.replace(/\/$/, '') + PAGE);
  const c = expectedOf('gpt2-f32').cases.find((x) => x.ablate.length > 0);  // heads switched off too
  const r = await page.evaluate(async ({ folder, worker, ids, ablate }) => {
    const inWorker = (threads) => new Promise((resolve) => {
      const w = new Worker(worker, { type: 'module' });
      w.onmessage = ({ data }) => { w.terminate(); resolve(data); };
      w.onerror = (e) => { w.terminate(); resolve({ error: e.message }); };
      w.postMessage({ folder, threads, ids, ablate });
    });
    const one = await inWorker(1);
    const two = await inWorker(2);
    const { createHeadlab } = await import('/web/lib/headlab.js');
    const lab = await createHeadlab();
    const auto = await lab.loadPretrained(folder, { threads: 'auto', cache: false });
    const page = {
      isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency, auto: auto.threads, note: auto.threadsNote,
      live: lab.liveWorkerCount(),
    };
    auto.dispose();
    page.after = lab.liveWorkerCount();
    return { one, two, page };
  }, { folder: isolated.url.replace(/\/$/, '') + FIXTURE, worker: isolated.url.replace(/\/$/, '') + WORKER, ids: c.ids, ablate: c.ablate.map(([layer, head]) => ({ layer, head })) });
  assert.equal(r.one.error, undefined, r.one.error);
  assert.equal(r.two.error, undefined, r.two.error);
  assert.equal(r.page.isolated, true);
  assert.equal(r.one.threads, 1);
  assert.equal(r.two.threads, 2);
  assert.equal(r.two.note, '');
  assert.equal(r.two.live, 1, 'one thread Worker beside the calling thread');
  assert.equal(r.two.after, 0, 'dispose() ended it');
  assertClose(r.one.logits, Float32Array.from(c.logits), 1e-4, 'one thread: logits');
  assertClose(r.one.attention, Float32Array.from(c.attention), 1e-4, 'one thread: attention');
  for (const key of ['logits', 'attention']) assert.deepEqual(Array.from(r.two[key]), Array.from(r.one[key]), `2 threads: ${key}`);
  assert.deepEqual(r.two.lens, r.one.lens, '2 threads: logit lens');
  assert.deepEqual(r.two.gen, r.one.gen, '2 threads: generated ids');
  const want = Math.min(Math.max(1, r.page.cores), 8);
  assert.equal(r.page.auto, want, "'auto' takes the cores the page reports (at most 8)");
  assert.equal(r.page.live, want - 1);
  assert.equal(r.page.after, 0);
  await page.close();
});

test('page that is not isolated: 2 threads are refused saying why; auto gives one thread and says why', { timeout: 120_000 }, async () => {
  const page = watch(await browser.newPage(), 'pretrained threads, plain', problems);
  await page.goto(plain.url.replace(/\/$/, '') + PAGE);
  const r = await page.evaluate(async (folder) => {
    const { createHeadlab } = await import('/web/lib/headlab.js');
    const lab = await createHeadlab();
    let refused = null;
    try {
      (await lab.loadPretrained(folder, { threads: 2, cache: false })).dispose();
    } catch (e) {
      refused = `${e.name}: ${e.message}`;
    }
    const auto = await lab.loadPretrained(folder, { threads: 'auto', cache: false });
    const out = { isolated: crossOriginIsolated, refused, threads: auto.threads, note: auto.threadsNote, next: (await auto.run('a b')).next.length };
    auto.dispose();
    return out;
  }, plain.url.replace(/\/$/, '') + FIXTURE);
  assert.equal(r.isolated, false);
  assert.match(r.refused, /^Error: loadPretrained: threads: 2 threads cannot run here: the page is not cross-origin isolated \(COOP\/COEP headers\)\. Pass threads: 'auto'/);
  assert.equal(r.threads, 1);
  assert.equal(r.note, 'the page is not cross-origin isolated (COOP/COEP headers)');
  assert.equal(r.next, 10);
  await page.close();
});
