// What the explorer does when a load fails (issue 33, point 2), under Node: HeadLab's own models
// from the Cache API once the network is gone (shipped-cache.js, with a fake fetch and Cache
// Storage), a failed load keeping the model that was loaded (controller + in-process session), the
// API's errors carrying a code across the Worker's message layer, and each code said in the
// element's own words, in Spanish with no English API text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';
import { ExplorerController, explainLoadError } from '../../web/lib/teach/explorer-controller.js';
import { ExplorerSession } from '../../web/lib/teach/explorer-session.js';
import { readShipped, warmShipped, SHIPPED_CACHE } from '../../web/lib/teach/shipped-cache.js';
import { errorReply, rebuildError } from '../../web/components/shared/worker/worker-errors.js';
import { translator } from '../../web/lib/i18n/index.js';
import catalogue from '../../web/lib/i18n/catalogues/model-explorer.js';
import { fixtureObjects } from './pretrained-helpers.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HLM = (name) => new Uint8Array(readFileSync(path.join(REPO, 'web/models', `${name}.hlm`)));

/** Cache Storage as browsers have it, in memory: open(name) → { match, put }. */
function fakeCaches() {
  const stores = new Map();
  return {
    stores,
    async open(name) {
      if (!stores.has(name)) stores.set(name, new Map());
      const m = stores.get(name);
      return {
        async match(url) { return m.has(url) ? new Response(m.get(url)) : undefined; },
        async put(url, response) { m.set(url, new Uint8Array(await response.arrayBuffer())); },
      };
    },
  };
}

let online = true;
const files = new Map([['https://site.test/models/cricket.hlm', HLM('cricket')], ['https://site.test/models/induction.hlm', HLM('induction')]]);
const fetchFake = async (url) => {
  if (!online) throw new TypeError('Failed to fetch');
  return files.has(url) ? new Response(files.get(url)) : new Response('no', { status: 404 });
};

test('HeadLab\'s own models: warmed into the cache when the page loads, then read from it offline; the network first online', async () => {
  const caches = fakeCaches();
  online = true;
  const urls = [...files.keys()];
  assert.equal(await warmShipped(urls, { fetch: fetchFake, caches }), 2);
  assert.equal(await warmShipped(urls, { fetch: fetchFake, caches }), 0, 'nothing fetched twice');
  online = false;
  const bytes = await readShipped(urls[0], { fetch: fetchFake, caches });
  assert.deepEqual(bytes, files.get(urls[0]), 'offline: the bytes the network gave before');
  // Not in the cache and offline: a coded error naming the file.
  await assert.rejects(readShipped('https://site.test/models/induction-1-layer.hlm', { fetch: fetchFake, caches }),
    (e) => e.code === 'network' && e.params.file === 'induction-1-layer.hlm');
  online = true;
  await assert.rejects(readShipped('https://site.test/models/nope.hlm', { fetch: fetchFake, caches }), (e) => e.code === 'http' && e.params.status === 404);
  assert.ok(caches.stores.has(SHIPPED_CACHE));
  // No Cache Storage at all (opaque origins): the network alone.
  assert.deepEqual(await readShipped(urls[1], { fetch: fetchFake, caches: null }), files.get(urls[1]));
});

test('a failed load keeps the model that was loaded: ready again, results and switched-off heads as they were, `failed` says what happened', async () => {
  const lab = await createHeadlab();
  let fail = null;
  const loadPretrained = async () => {
    if (fail) throw fail;
    return lab.loadPretrained(fixtureObjects('gpt2-f32'));
  };
  const client = (onEvent) => {
    const session = new ExplorerSession(lab, onEvent, { loadPretrained });
    const request = (type, payload) => session.handle(type, payload).then((r) => r.result);
    return { dead: false, session, request, dispose() { session.dispose(); } };
  };
  const events = [];
  let isOnline = true;
  const c = new ExplorerController({
    createClient: client,
    readShipped: async () => { throw Object.assign(new Error('models/cricket.hlm could not be fetched (Failed to fetch)'), { code: 'network', params: { file: 'cricket.hlm' } }); },
    emit: (type, detail) => events.push({ type, detail }), online: () => isOnline,
    t: () => translator(catalogue, 'es'),
  });
  await c.load({ kind: 'hub', id: 'a/b' });
  await c.setHeadEnabled(1, 2, false);
  const before = { info: c.info, next: c.results.next, off: [...c.off] };
  // A hub model whose file is missing (a coded error from the API).
  fail = Object.assign(new Error('loadPretrained: the repository c/d has no model.safetensors (nor model.safetensors.index.json)'), { code: 'not-found', params: { file: 'model.safetensors' } });
  await c.load({ kind: 'hub', id: 'c/d' });
  assert.equal(c.state, 'ready', 'the model loaded before is still usable');
  assert.equal(c.info, before.info);
  assert.deepEqual(c.results.next, before.next);
  assert.deepEqual([...c.off], before.off);
  assert.deepEqual(c.source, { kind: 'hub', id: 'a/b' });
  assert.equal(c.failed.code, 'not-found');
  assert.equal(c.failed.source.id, 'c/d');
  assert.match(c.error, /no tiene model\.safetensors/);
  assert.doesNotMatch(c.error, /repository|loadPretrained|nor/, 'no English API text in Spanish');
  assert.deepEqual(events.filter((e) => e.type === 'state').at(-1).detail, { from: 'loading', to: 'ready', reason: 'load-failed' });
  // The session still runs the kept model.
  await c.setHeadEnabled(1, 2, true);
  assert.equal(c.results.baseline, null);
  // Offline, a shipped model the cache does not hold: said in Spanish, what to do next included.
  isOnline = false;
  await c.load({ kind: 'shipped', name: 'cricket' });
  assert.equal(c.state, 'ready');
  assert.match(c.error, /No hay conexión.*vuelva a conectarse/);
  c.dispose();
});

test('coded errors cross the Worker\'s message layer with their code; each code has its own words in both languages', () => {
  const e = Object.assign(new RangeError('loadPretrained: maxBytes: …'), { code: 'too-large', params: { file: 'model.safetensors' } });
  const back = rebuildError(JSON.parse(JSON.stringify(errorReply(e).error)));
  assert.ok(back instanceof RangeError);
  assert.equal(back.code, 'too-large');
  assert.deepEqual(back.params, { file: 'model.safetensors' });
  const en = translator(catalogue, 'en'), es = translator(catalogue, 'es');
  const english = 'loadPretrained: an English sentence from the API';
  for (const [code, params] of [['not-found', { file: 'x' }], ['forbidden', { file: 'x' }], ['pytorch-only', {}], ['cut', { file: 'x' }],
    ['network', { file: 'x' }], ['too-large', {}], ['http', { file: 'x', status: 500 }]]) {
    const a = explainLoadError(english, { code, params, t: en }), b = explainLoadError(english, { code, params, t: es });
    assert.ok(!a.includes(english) && !b.includes(english), `${code}: the API's words are not quoted`);
    assert.notEqual(a, b, `${code}: Spanish differs`);
    assert.match(a, /Try again|Pick|pick|drop|Check/, `${code}: says what to do next`);
  }
});

test('HeadLab\'s own model that neither the network nor the cache gives is said offline, though the browser says it is online', () => {
  // readShipped's error when the page's server gives no answer and the cache has no copy (a network that is up but
  // reaches nothing, or a server gone): navigator.onLine stays true.
  const message = 'models/cricket.hlm could not be fetched (Failed to fetch)';
  for (const lang of ['en', 'es']) {
    const t = translator(catalogue, lang);
    const what = t('explorer.err.whatShipped');
    const got = explainLoadError(message, { online: true, code: 'network', params: { file: 'cricket.hlm' }, shipped: true, what, t });
    assert.equal(got, catalogue[lang]['explorer.err.offlineShipped'].replace('{what}', catalogue[lang]['explorer.err.whatShipped']), lang);
  }
  // A hub model's network error keeps its own words (it may be the hub's CORS as well as the network).
  assert.equal(explainLoadError('x', { online: true, code: 'network', params: { file: 'config.json' } }), catalogue.en['explorer.err.networkPlain']);
});
