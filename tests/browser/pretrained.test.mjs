// loadPretrained in Chromium with the Cache API: a fixture model loaded from the local stand-in
// for the hub (tests/js/hub-server.mjs, which also serves web/ at /static/), then loaded again
// on a fresh visit of the page with no request reaching the hub; and with cache: false, every
// file fetched again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO, launch, watch } from './helpers.mjs';
import { reposFromFolder, startHub } from '../js/hub-server.mjs';
import { FIXTURES, expectedOf } from '../js/pretrained-helpers.mjs';

let hub;
let browser;
const problems = [];

before(async () => {
  hub = await startHub({ repos: reposFromFolder(FIXTURES), staticRoot: path.join(REPO, 'web') });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await hub?.close();
});

/** Loads headlab-test/<name> in the page; returns the course logits, the progress events and the error, if any. */
function load(page, name, options = {}) {
  return page.evaluate(async ({ name, options, ids }) => {
    const { createHeadlab } = await import('/static/lib/headlab.js');
    const lab = await createHeadlab();
    const events = [];
    try {
      const model = await lab.loadPretrained(`headlab-test/${name}`, { hubUrl: location.origin, onProgress: (p) => events.push(p), ...options });
      const r = await model.run(ids, { topK: 3 });
      const out = { logits: Array.from(r.logits), next: r.next, info: model.info, events };
      model.dispose();
      return out;
    } catch (e) {
      return { error: `${e.name}: ${e.message}`, events };
    }
  }, { name, options, ids: expectedOf('gpt2-f32').cases[0].ids });
}

// The library's requests to the hub: not the page's own files, nor the favicon Chromium asks the page's
// origin for whenever it likes (it arrived in the middle of a load in one run).
const hubRequests = (from) => hub.requests.slice(from).filter((r) => !r.path.startsWith('/static/') && r.path !== '/favicon.ico');

test('a model loaded once loads again from the Cache API with no request to the hub', { timeout: 120_000 }, async () => {
  const context = await browser.newContext();
  try {
    const page = watch(await context.newPage(), 'pretrained', problems);
    await page.goto(`${hub.url}/static/lib/headlab-files.js`);  // an origin for the page; the module is imported by evaluate
    let from = hub.requests.length;
    const first = await load(page, 'gpt2-f32');
    assert.equal(first.error, undefined, first.error);
    assert.deepEqual(hubRequests(from).map((r) => r.path.replace(/\d+$/, 'N')),
      ['config.json', 'tokenizer.json', 'model.safetensors'].map((f) => `/headlab-test/gpt2-f32/resolve/main/${f}`).concat(['/cdn/N']));
    const size = expectedOf('gpt2-f32') && first.events.filter((e) => e.file === 'model.safetensors').at(-1);
    assert.equal(size.loaded, size.total, 'progress reaches the total');

    // A second visit: a new page in the same profile.
    await page.close();
    const again = watch(await context.newPage(), 'pretrained again', problems);
    await again.goto(`${hub.url}/static/lib/headlab-files.js`);
    from = hub.requests.length;
    const second = await load(again, 'gpt2-f32');
    assert.equal(second.error, undefined, second.error);
    assert.deepEqual(hubRequests(from), [], 'no request reached the hub');
    assert.deepEqual(second.logits, first.logits, 'the cached files give the same model');
    assert.ok(second.events.some((e) => e.file === 'model.safetensors' && e.loaded === e.total), 'progress from the cache too');
    assert.deepEqual(await again.evaluate(() => caches.keys()), ['headlab-pretrained-v1']);

    // cache: false fetches every file again.
    from = hub.requests.length;
    const third = await load(again, 'gpt2-f32', { cache: false });
    assert.equal(third.error, undefined, third.error);
    assert.equal(hubRequests(from).length, 4);
    assert.deepEqual(third.logits, first.logits);

    // A download cut in the browser: an Error naming the file; nothing of it is cached.
    hub.faults.set('headlab-test/gpt2-sharded/model-00002-of-00002.safetensors', { cut: 3000 });
    const cut = await load(again, 'gpt2-sharded');
    hub.faults.delete('headlab-test/gpt2-sharded/model-00002-of-00002.safetensors');
    assert.match(cut.error, /^Error: loadPretrained: the download of model-00002-of-00002\.safetensors was cut after \d+ of \d+ bytes/);
    const retried = await load(again, 'gpt2-sharded');
    assert.equal(retried.error, undefined, retried.error);
    assert.deepEqual(retried.logits, first.logits, 'the shards give the same model once the download completes');
    from = hub.requests.length;
    const shardsCached = await load(again, 'gpt2-sharded');
    assert.equal(shardsCached.error, undefined, shardsCached.error);
    assert.deepEqual(hubRequests(from), [], 'a sharded model loads from the cache with no request either');
    assert.deepEqual(shardsCached.logits, first.logits);
    assert.deepEqual(problems.filter((p) => !/HTTP 404|Failed to load resource|ERR_/.test(p)), []);
  } finally {
    await context.close();
  }
});
