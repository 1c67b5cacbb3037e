// HeadLab's own model files (.hlm) kept in the Cache API, so that a page loaded over http(s) can
// open any of them after the network is gone. No DOM: `fetch` and `caches` are passed in (the
// browser's by default; fakes in the Node tests).
//
// readShipped(url): the network first (the site serves .hlm files no-cache, so a new build is
// picked up), the copy in the cache when the network gives no answer or an error status.
// warmShipped(urls): fetches, once, every file not in the cache yet (called when the page loads).

import { coded } from '../api/pretrained-files.js';

/** The cache that holds HeadLab's own models (the hub's files are in pretrained-files.js's CACHE_NAME). */
export const SHIPPED_CACHE = 'headlab-shipped-models-v1';

const defaults = () => ({
  fetch: globalThis.fetch?.bind(globalThis),
  caches: typeof caches !== 'undefined' ? caches : null,
});

async function openCache(c) {
  try {
    return c ? await c.open(SHIPPED_CACHE) : null;
  } catch {
    return null;  // opaque origins, private modes: no cache, the network alone
  }
}

/**
 * The bytes of one model file. Rejects with a coded Error ('network' or 'http', params { file,
 * status }) when neither the network nor the cache has it.
 * @param {string} url
 * @param {{ file?: string, fetch?: typeof fetch, caches?: CacheStorage | null }} [o]
 * @returns {Promise<Uint8Array>}
 */
export async function readShipped(url, o = {}) {
  const { fetch, caches } = { ...defaults(), ...o };
  const file = o.file ?? url.split('/').pop();
  const cache = await openCache(caches);
  let failure;
  try {
    const response = await fetch(url);
    if (response.ok) {
      const bytes = new Uint8Array(await response.clone().arrayBuffer());
      await cache?.put(url, response).catch(() => {});
      return bytes;
    }
    failure = coded(new Error(`models/${file} could not be fetched (HTTP ${response.status})`), 'http', { file, status: response.status });
  } catch (e) {
    failure = coded(new Error(`models/${file} could not be fetched (${e?.message ?? e})`, { cause: e }), 'network', { file });
  }
  const hit = await cache?.match(url).catch(() => null);
  if (hit) return new Uint8Array(await hit.arrayBuffer());
  throw failure;
}

/**
 * Puts every file of `urls` that the cache lacks into it (errors are ignored: this is a head start,
 * and readShipped still tries the network). Resolves to the number of files added.
 * @param {string[]} urls
 * @param {{ fetch?: typeof fetch, caches?: CacheStorage | null }} [o]
 */
export async function warmShipped(urls, o = {}) {
  const { fetch, caches } = { ...defaults(), ...o };
  const cache = await openCache(caches);
  if (!cache) return 0;
  let added = 0;
  for (const url of urls) {
    try {
      if (await cache.match(url)) continue;
      const response = await fetch(url);
      if (!response.ok) continue;
      await cache.put(url, response);
      added += 1;
    } catch { /* offline, or the cache is full: the next page load tries again */ }
  }
  return added;
}
