// Where a pretrained model's files come from, and how they are read: a Hugging Face repository
// id, a URL of a folder, File objects, or the contents themselves. Every source answers
// open(name) with null (no such file) or an entry whose body is read once, in chunks, with
// progress, a byte budget and cancellation; the Cache API keeps downloaded files in browsers.
import { describe } from './checks.js';

export const CACHE_NAME = 'headlab-pretrained-v1';

/** The DOMException a cancelled load rejects with (name 'AbortError'). */
export function abortError(fn, file, signal) {
  const what = file ? ` while reading ${file}` : '';
  const e = new DOMException(`${fn}: cancelled${what}`, 'AbortError');
  if (signal?.reason !== undefined) Object.defineProperty(e, 'cause', { value: signal.reason });
  return e;
}

export function mib(bytes) {
  return `${(bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 1 : 0)} MiB`;
}

const HUB_ID = /^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/;

/** True for `org/name` or a legacy `name`, as the hub spells repository ids. */
export function isHubId(s) {
  return HUB_ID.test(s) && !s.includes('..') && !s.endsWith('.') && !/\.(json|safetensors|bin)$/.test(s);
}

/**
 * The source as an object with `where` (for messages), `hub` (the repository id, or null) and
 * `open(name, ctx)`. Throws a TypeError or RangeError naming `source`.
 */
export function makeSource(fn, source, options) {
  if (typeof source === 'string' || source instanceof URL) {
    const s = String(source);
    if (typeof source === 'string' && isHubId(s) && !s.includes(':')) return hubSource(fn, s, options);
    return urlSource(fn, s);
  }
  if (isFileList(source)) return fileSource(fn, Array.from(source));
  if (isBlob(source)) return fileSource(fn, [source]);
  if (source !== null && typeof source === 'object' && !ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer)) {
    return objectSource(fn, source);
  }
  throw new TypeError(`${fn}: source must be a Hugging Face repository id ('openai-community/gpt2'), the URL of a folder, ` +
    `File objects (a FileList or File[]) or { config, weights, tokenizer }, got ${describe(source)}`);
}

function isBlob(x) {
  return typeof Blob === 'function' && x instanceof Blob;
}

function isFileList(x) {
  if (typeof FileList === 'function' && x instanceof FileList) return true;
  return Array.isArray(x) && x.length > 0 && x.every(isBlob);
}

// ----- HTTP: the hub and folders ------------------------------------------------------------

function hubSource(fn, id, { hubUrl, revision }) {
  const base = hubUrl.replace(/\/+$/, '');
  const rev = encodeURIComponent(revision);
  return {
    hub: id,
    where: `${id} (revision ${revision} on ${base})`,
    url: (name) => `${base}/${id}/resolve/${rev}/${name}`,
    open(name, ctx) { return openUrl(fn, this.url(name), name, ctx, this.where); },
    head(name, ctx) { return headUrl(this.url(name), ctx); },
    cached(name, ctx) { return inCache(this.url(name), ctx); },
  };
}

/** Whether the Cache API holds a file (so a sharded model loads offline without asking for model.safetensors). */
async function inCache(url, ctx) {
  const cache = await ctx.openCache();
  if (!cache) return false;
  try {
    return (await cache.match(url)) !== undefined;
  } catch {
    return false;
  }
}

function urlSource(fn, s) {
  let base;
  try {
    base = new URL(s.endsWith('/') ? s : `${s}/`, globalThis.location?.href);
  } catch {
    throw new TypeError(`${fn}: source ${describe(s)} is neither a Hugging Face repository id (org/name) nor a URL of a folder` +
      `${globalThis.location ? '' : ' (relative URLs need a page: give an absolute http(s) URL)'}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new TypeError(`${fn}: source: only http(s) folders can be fetched, got ${base.protocol} (${describe(s)}); ` +
      'pass File objects or { config, weights, tokenizer } for files on disk');
  }
  return {
    hub: null,
    where: `the folder ${base.href}`,
    url: (name) => new URL(name, base).href,
    open(name, ctx) { return openUrl(fn, this.url(name), name, ctx, this.where); },
    head(name, ctx) { return headUrl(this.url(name), ctx); },
    cached(name, ctx) { return inCache(this.url(name), ctx); },
  };
}

async function headUrl(url, ctx) {
  try {
    const r = await fetch(url, { method: 'HEAD', signal: ctx.signal });
    return r.ok;
  } catch {
    if (ctx.signal?.aborted) throw abortError(ctx.fn, null, ctx.signal);
    return false;
  }
}

/**
 * An Error with a stable `code` (and `params`) beside its English message: elements say it in their
 * own words by the code. Codes: 'network' (no answer: offline, or no CORS headers), 'http' (an error
 * status), 'forbidden' (401/403), 'not-found' (a file the model needs is missing), 'pytorch-only',
 * 'cut' (a download stopped early), 'too-large' (maxBytes, or the module's memory), 'csp'.
 */
export function coded(error, code, params = {}) {
  error.code = code;
  error.params = params;
  return error;
}

/** GET a file (from the Cache API first, when it is on): null on 404, else an entry. */
async function openUrl(fn, url, name, ctx, where) {
  if (ctx.signal?.aborted) throw abortError(fn, name, ctx.signal);
  const cache = await ctx.openCache();
  if (cache) {
    try {
      const hit = await cache.match(url);
      if (hit) return responseEntry(hit, name, null);
    } catch { /* a cache that cannot be read is skipped */ }
  }
  let response;
  try {
    response = await fetch(url, { signal: ctx.signal, cache: 'no-store' });
  } catch (e) {
    if (ctx.signal?.aborted) throw abortError(fn, name, ctx.signal);
    throw coded(new Error(`${fn}: could not download ${name} from ${url}: ${e.cause?.message ?? e.message}. ` +
      'The network may be offline, or the server may not send CORS headers (the Hugging Face hub does; a self-hosted folder must send Access-Control-Allow-Origin)', { cause: e }), 'network', { file: name });
  }
  if (response.status === 404) {
    response.body?.cancel().catch(() => {});
    return null;
  }
  if (!response.ok) {
    response.body?.cancel().catch(() => {});
    const why = response.status === 401 || response.status === 403
      ? ': the repository may be gated or private (HeadLab sends no access token), or the URL may be wrong'
      : '';
    throw coded(new Error(`${fn}: ${where} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} for ${name} (${url})${why}`),
      why ? 'forbidden' : 'http', { file: name, status: response.status });
  }
  return responseEntry(response, name, cache ? url : null, cache);
}

function responseEntry(response, name, cacheKey, cache) {
  // A compressed body's Content-Length counts the compressed bytes, not what the stream gives.
  const length = response.headers.get('content-length');
  const encoding = response.headers.get('content-encoding');
  const total = length !== null && /^\d+$/.test(length) && (!encoding || encoding === 'identity') ? Number(length) : null;
  return {
    name,
    total,
    stream() {
      // Stored in the Cache API while it is read (a tee): only once the body is wanted, so a
      // file refused for its size is never downloaded.
      if (cacheKey) this.stored = cache.put(cacheKey, response.clone()).catch(() => {});
      return response.body;
    },
    cancel() { response.body?.cancel().catch(() => {}); },
  };
}

// ----- Files and objects --------------------------------------------------------------------

function fileSource(fn, files) {
  const byName = new Map();
  for (const f of files) {
    const name = String(f.name ?? '').split('/').pop();
    if (!name) throw new TypeError(`${fn}: source: every file needs a name (config.json, model.safetensors, tokenizer.json), got a Blob without one`);
    byName.set(name, f);
  }
  return {
    hub: null,
    where: `the set of files given (${[...byName.keys()].join(', ')})`,
    names: [...byName.keys()],
    async open(name) {
      const f = byName.get(name);
      if (!f) return null;
      return { name, total: f.size, stream: () => f.stream(), cancel() {} };
    },
    async head(name) { return byName.has(name); },
  };
}

function bytesOf(fn, key, value, json) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (json && typeof value === 'string') return new TextEncoder().encode(value);
  if (json && value !== null && typeof value === 'object' && !Array.isArray(value) && !isBlob(value)) {
    return new TextEncoder().encode(JSON.stringify(value));
  }
  if (isBlob(value)) return value;
  throw new TypeError(`${fn}: source.${key} must be ${json ? 'an object (the parsed JSON), a string, ' : ''}an ArrayBuffer, a Uint8Array or a Blob, got ${describe(value)}`);
}

function objectSource(fn, source) {
  const known = ['config', 'weights', 'tokenizer'];
  for (const k of Object.keys(source)) {
    if (!known.includes(k)) throw new TypeError(`${fn}: source: unknown key ${JSON.stringify(k)}; the keys are config, weights, tokenizer`);
  }
  for (const k of known) {
    if (source[k] === undefined) throw new TypeError(`${fn}: source.${k} is missing: { config, weights, tokenizer } needs all three`);
  }
  const files = new Map();
  files.set('config.json', bytesOf(fn, 'config', source.config, true));
  files.set('tokenizer.json', bytesOf(fn, 'tokenizer', source.tokenizer, true));
  if (Array.isArray(source.weights)) {
    if (source.weights.length === 0) throw new RangeError(`${fn}: source.weights is an empty array; give the safetensors file, or its shards`);
    const shards = source.weights.map((w, i) => bytesOf(fn, `weights[${i}]`, w, false));
    if (shards.length === 1) files.set('model.safetensors', shards[0]);
    else shards.forEach((s, i) => files.set(`weights[${i}]`, s));
    if (shards.length > 1) files.set('#shards', shards.map((_, i) => `weights[${i}]`));
  } else {
    files.set('model.safetensors', bytesOf(fn, 'weights', source.weights, false));
  }
  return {
    hub: null,
    where: 'the objects given',
    shards: files.get('#shards') ?? null,
    async open(name) {
      const b = files.get(name);
      if (!b || name === '#shards') return null;
      if (isBlob(b)) return { name, total: b.size, stream: () => b.stream(), cancel() {} };
      return { name, total: b.byteLength, bytes: b, cancel() {} };
    },
    async head(name) { return files.has(name); },
  };
}

// ----- Reading a body -----------------------------------------------------------------------

/**
 * Reads an entry's body in chunks, reporting progress and keeping to the byte budget.
 * `sink(total)` returns `write(chunk, offset)`; it is called once the size is known (at the
 * start when the entry has a length, else at the end with the chunks gathered). Throws an Error
 * naming the file when the body is cut short or longer than announced; an AbortError when cancelled.
 */
export async function readEntry(entry, ctx, sink) {
  const { fn, signal } = ctx;
  const name = entry.name;
  const total = entry.total;
  if (total !== null) {
    try {
      ctx.budget(name, total);
    } catch (e) {
      entry.cancel();
      throw e;
    }
  }
  ctx.progress(name, 0, total);
  if (entry.bytes) {
    ctx.spend(name, entry.bytes.byteLength);
    sink(entry.bytes.byteLength)(entry.bytes, 0);
    ctx.progress(name, entry.bytes.byteLength, entry.bytes.byteLength);
    return entry.bytes.byteLength;
  }
  let write = total !== null ? sink(total) : null;
  const pending = write ? null : [];
  const reader = entry.stream().getReader();
  let loaded = 0;
  const onAbort = () => { reader.cancel().catch(() => {}); };
  signal?.addEventListener('abort', onAbort);
  try {
    for (;;) {
      if (signal?.aborted) throw abortError(fn, name, signal);
      let step;
      try {
        step = await reader.read();
      } catch (e) {
        if (signal?.aborted) throw abortError(fn, name, signal);
        throw coded(new Error(`${fn}: the download of ${name} was cut after ${loaded}${total !== null ? ` of ${total}` : ''} bytes: ${e.cause?.message ?? e.message}`, { cause: e }), 'cut', { file: name });
      }
      if (signal?.aborted) throw abortError(fn, name, signal);
      if (step.done) break;
      const chunk = step.value;
      if (total !== null && loaded + chunk.length > total) {
        throw new Error(`${fn}: ${name} is longer than the ${total} bytes its Content-Length announced`);
      }
      ctx.spend(name, chunk.length);
      if (write) write(chunk, loaded);
      else pending.push(chunk);
      loaded += chunk.length;
      ctx.progress(name, loaded, total);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (signal?.aborted) reader.cancel().catch(() => {});
    reader.releaseLock?.();
  }
  if (total !== null && loaded !== total) {
    throw coded(new Error(`${fn}: the download of ${name} was cut after ${loaded} of ${total} bytes`), 'cut', { file: name });
  }
  if (!write) {
    write = sink(loaded);
    let at = 0;
    for (const c of pending) { write(c, at); at += c.length; }
    ctx.progress(name, loaded, loaded);
  }
  if (entry.stored) await entry.stored;
  return loaded;
}

/** Reads a whole entry into one Uint8Array. */
export async function readBytes(entry, ctx) {
  let out = null;
  await readEntry(entry, ctx, (n) => {
    if (entry.bytes) { out = entry.bytes; return () => {}; }
    out = new Uint8Array(n);
    return (chunk, at) => out.set(chunk, at);
  });
  return out;
}

/** Reads a JSON file; an Error naming it when it is not JSON. */
export async function readJson(entry, ctx) {
  const bytes = await readBytes(entry, ctx);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Error(`${ctx.fn}: ${entry.name} is not valid JSON: ${e.message}`, { cause: e });
  }
}
