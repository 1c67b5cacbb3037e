// Pretrained Hugging Face checkpoints (GPT-2, GPT-Neo): loadPretrained, which fetches and checks
// config.json, tokenizer.json and the safetensors weights and hands them to the engine
// (headlab_pretrained, PretrainedCore), and the PretrainedModel it returns.
import { OPTION_KEYS, ablationMask, describe, requireBool, requireDim, requireObject, requireSeed } from './checks.js';
import { DEFAULT_MAX_THREADS, availableCores } from './cores.js';
import { loadTokenizers } from '../headlab-files.js';
import { doWithoutThreads, endModule, isLoadFailure, loadThreaded, threadsUnavailable } from './threaded-module.js';
import { CACHE_NAME, abortError, coded, makeSource, mib, readEntry, readJson } from './pretrained-files.js';
import { activationBytes, readConfig } from './pretrained-config.js';
import { engineMemoryLimit } from './engine-memory.js';

const FN = 'loadPretrained';
const DEFAULT_HEAP_MAX = 2 ** 32 - 2 ** 16;  // headlab_pretrained's heapMax(): -sMAXIMUM_MEMORY=4gb, a page short of 4 GiB
const FIT_TOKENS = 256;  // a model must hold at least this many tokens' activations beside its weights
const SLACK_BYTES = 64 * 2 ** 20;  // the module's own memory, malloc's overhead, the token buffers

const MAX_THREADS = 64;  // PretrainedCore.setThreads' limit

/** patchHeads({ …, [NAIVE]: true }): every head by a whole patched run, the benchmark's comparison. */
export const NAIVE = Symbol('headlab.patchHeads.naive');
/** generate(prompt, { …, [UNCACHED]: true }): every new token by a whole run (no key-value cache), the benchmark's comparison. */
export const UNCACHED = Symbol('headlab.generate.uncached');
/**
 * Tests only: loadPretrained(source, { …, [BALLAST]: bytes }) first takes `bytes` of the engine's
 * memory and holds them until dispose(), so the model's weights and activations sit above them
 * (above 2 GiB with 2.2e9, where the engine's pointers no longer fit a signed 32-bit integer).
 */
export const BALLAST = Symbol('headlab.loadPretrained.ballast');
const BALLAST_BLOCK = 2 ** 29;  // dlmalloc takes at most 2 GiB from sbrk at a time

/** GPT-2's byte-level alphabet, character → byte (bytes_to_unicode in OpenAI's encoder.py, inverted). */
let byteOfChar = null;
function byteLevelBytes(token) {
  if (typeof token !== 'string') return null;
  if (!byteOfChar) {
    byteOfChar = new Map();
    let n = 0;
    for (let b = 0; b < 256; b++) {
      const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      byteOfChar.set(String.fromCodePoint(printable ? b : 256 + n++), b);
    }
  }
  const out = [];
  for (const ch of token) {
    const b = byteOfChar.get(ch);
    if (b === undefined) return null;  // not a byte-level token
    out.push(b);
  }
  return out;
}

/** Bytes as text: each whole UTF-8 character as itself, every other byte as <0xE2>. */
function readableBytes(bytes) {
  if (!bytes) return null;
  let s = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    const seq = n && i + n <= bytes.length ? bytes.slice(i, i + n) : null;
    const ok = seq && seq.slice(1).every((c) => (c & 0xc0) === 0x80);
    let text = null;
    if (ok) {
      try { text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Uint8Array.from(seq)); } catch { /* overlong, surrogate: bytes */ }
    }
    if (text !== null) { s += text; i += n; } else { s += `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`; i += 1; }
  }
  return s;
}

/**
 * The `threads` option → { threads, why }: undefined → 1; 'auto' → the cores available (at most 8)
 * where the threaded module can run (threadsUnavailable: Node, cross-origin isolated pages and their
 * Workers), else 1 with `why` saying why; a number → that many (1..64), more than 1 only where threads
 * can run, else an Error saying why.
 */
function resolveThreads(lab, threads) {
  if (threads === undefined) return { threads: 1, why: '' };
  if (threads === 'auto') {
    const why = threadsUnavailable(lab, 'pretrained');
    if (why) return { threads: 1, why };
    const n = Math.min(availableCores(), DEFAULT_MAX_THREADS);
    return { threads: n, why: n === 1 ? 'one core is available' : '' };
  }
  if (typeof threads !== 'number') throw new TypeError(`${FN}: threads must be a positive integer or 'auto', got ${describe(threads)}`);
  requireDim(FN, 'threads', threads);
  if (threads > MAX_THREADS) throw new RangeError(`${FN}: threads must be at most ${MAX_THREADS}, got ${threads}`);
  if (threads > 1) {
    const why = threadsUnavailable(lab, 'pretrained');
    if (why) throw new Error(`${FN}: threads: ${threads} threads cannot run here: ${why}. Pass threads: 'auto' to use them where they can, 1 elsewhere`);
  }
  return { threads, why: '' };
}

function checkOptions(lab, options) {
  requireObject(FN, options, OPTION_KEYS[FN]);
  const { threads, why } = resolveThreads(lab, options.threads);
  const o = {
    hubUrl: options.hubUrl ?? 'https://huggingface.co',
    revision: options.revision ?? 'main',
    threads,
    threadsWhy: why,
    auto: options.threads === 'auto',
    cache: options.cache === undefined ? true : requireBool(FN, 'cache', options.cache),
    onProgress: options.onProgress ?? null,
    signal: options.signal ?? null,
    maxBytes: options.maxBytes ?? Infinity,
    ballast: options[BALLAST] ?? 0,
  };
  if (typeof o.hubUrl !== 'string' || !/^https?:\/\/[^/]/.test(o.hubUrl)) {
    throw new TypeError(`${FN}: hubUrl must be an http(s) URL such as 'https://huggingface.co', got ${describe(o.hubUrl)}`);
  }
  if (typeof o.revision !== 'string' || o.revision.length === 0 || o.revision.includes('..')) {
    throw new TypeError(`${FN}: revision must be a branch, tag, commit or 'refs/pr/N', got ${describe(o.revision)}`);
  }
  if (o.onProgress !== null && typeof o.onProgress !== 'function') {
    throw new TypeError(`${FN}: onProgress must be a function ({ file, loaded, total }) => void, got ${describe(o.onProgress)}`);
  }
  if (o.signal !== null && !(typeof AbortSignal === 'function' && o.signal instanceof AbortSignal)) {
    throw new TypeError(`${FN}: signal must be an AbortSignal (from an AbortController), got ${describe(o.signal)}`);
  }
  if (options.maxBytes !== undefined) {
    if (typeof o.maxBytes !== 'number') throw new TypeError(`${FN}: maxBytes must be a positive number of bytes, got ${describe(o.maxBytes)}`);
    if (!(o.maxBytes > 0)) throw new RangeError(`${FN}: maxBytes must be a positive number of bytes, got ${o.maxBytes}`);
  }
  return o;
}

/** What one load shares: progress, the byte budget, the signal, the cache. */
function loadContext(o) {
  let spent = 0;
  let cachePromise = null;
  const useCache = o.cache && typeof caches === 'object' && caches !== null && typeof caches.open === 'function';
  return {
    fn: FN,
    signal: o.signal,
    progress(file, loaded, total) {
      if (o.onProgress) o.onProgress({ file, loaded, total });
    },
    /** Refuses a file before its body is read when its announced length would pass maxBytes. */
    budget(name, total) {
      if (total !== null && spent + total > o.maxBytes) {
        throw coded(new RangeError(`${FN}: maxBytes: ${name} is ${total} bytes (${mib(total)})${spent ? ` after ${spent} bytes already read` : ''}, ` +
          `more than maxBytes ${o.maxBytes} (${mib(o.maxBytes)}); nothing more was downloaded`), 'too-large');
      }
    },
    spend(name, n) {
      spent += n;
      if (spent > o.maxBytes) throw coded(new RangeError(`${FN}: maxBytes: reading ${name} passed maxBytes ${o.maxBytes} (${mib(o.maxBytes)}); the download was stopped`), 'too-large');
    },
    openCache() {
      if (!useCache) return null;
      cachePromise ??= caches.open(CACHE_NAME).catch(() => null);
      return cachePromise;
    },
  };
}

/** Opens a file that must be there: an Error naming it and the source when it is not. */
async function required(source, name, ctx, hint = '') {
  const entry = await source.open(name, ctx);
  if (!entry) throw coded(new Error(`${FN}: ${source.where} has no ${name}${hint}`), 'not-found', { file: name });
  return entry;
}

/**
 * The safetensors files to load, in order: [entry] for model.safetensors, the shards named by
 * model.safetensors.index.json, or an Error when there is neither (saying so when only
 * pytorch_model.bin is there).
 */
async function weightEntries(source, ctx) {
  if (source.shards) return Promise.all(source.shards.map((n) => required(source, n, ctx)));
  // A sharded model in the Cache API: straight to its index, with no request for model.safetensors.
  const shardedInCache = source.cached && await source.cached('model.safetensors.index.json', ctx) && !(await source.cached('model.safetensors', ctx));
  const single = shardedInCache ? null : await source.open('model.safetensors', ctx);
  if (single) return [single];
  const indexEntry = await source.open('model.safetensors.index.json', ctx);
  if (indexEntry) {
    const index = await readJson(indexEntry, ctx);
    const map = index?.weight_map;
    if (map === null || typeof map !== 'object' || Array.isArray(map)) {
      throw new Error(`${FN}: model.safetensors.index.json: weight_map must map tensor names to shard files, got ${JSON.stringify(map)?.slice(0, 80)}`);
    }
    const shards = [...new Set(Object.values(map))];
    for (const s of shards) {
      if (typeof s !== 'string' || !/^[\w.-]+\.safetensors$/.test(s)) {
        throw new Error(`${FN}: model.safetensors.index.json: weight_map names the shard ${JSON.stringify(s)}, not a .safetensors file in the same folder`);
      }
    }
    const total = index.metadata?.total_size;
    if (typeof total === 'number') ctx.budget('the shards of model.safetensors.index.json', total);
    const list = shards.map((s) => ({ lazy: s }));
    if (typeof total === 'number') list.totalBytes = total;
    return list;
  }
  if (await source.head('pytorch_model.bin', ctx)) {
    const where = source.hub
      ? ` The hub's conversion bot often has a safetensors copy on a pull-request revision: look for "Adding \`safetensors\` variant of this model" ` +
        `at ${ctx.hubUrl}/${source.hub}/discussions and pass its revision, e.g. { revision: 'refs/pr/1' }.`
      : ' Convert it to model.safetensors first (for example with the safetensors conversion Space on the Hugging Face hub).';
    throw coded(new Error(`${FN}: ${source.where} has only pytorch_model.bin, a pickle that HeadLab does not read (loading a pickle can run code); it needs model.safetensors.${where}`), 'pytorch-only');
  }
  throw coded(new Error(`${FN}: ${source.where} has no model.safetensors (nor model.safetensors.index.json)`), 'not-found', { file: 'model.safetensors' });
}

/** The tokenizer: an Error naming tokenizer.json and the field when it is not one the library reads. */
async function makeTokenizer(json, vocabSize) {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${FN}: tokenizer.json must hold a JSON object`);
  const model = json.model;
  if (model === null || typeof model !== 'object') throw new Error(`${FN}: tokenizer.json: model is missing (the tokenizer's vocabulary and merges)`);
  if (typeof model.type !== 'string' && !model.vocab) throw new Error(`${FN}: tokenizer.json: model.type is missing`);
  if (model.vocab === null || typeof model.vocab !== 'object') throw new Error(`${FN}: tokenizer.json: model.vocab must be an object or a list, got ${JSON.stringify(model.vocab)}`);
  const { Tokenizer } = await loadTokenizers();
  let tokenizer;
  try {
    tokenizer = new Tokenizer(json, {});
    tokenizer.encode('a b');
  } catch (e) {
    throw new Error(`${FN}: tokenizer.json: ${e.message}`, { cause: e });
  }
  let maxId = -1;
  for (const id of tokenizer.get_vocab(true).values()) if (id > maxId) maxId = id;
  if (maxId >= vocabSize) {
    throw new Error(`${FN}: tokenizer.json: the tokenizer has token id ${maxId}, beyond config.json's vocab_size ${vocabSize}`);
  }
  const special = new Set();
  for (const t of json.added_tokens ?? []) if (t?.special && Number.isInteger(t.id)) special.add(t.id);
  return { tokenizer, special, size: maxId + 1 };
}

/** BALLAST's blocks: addresses of malloc'd blocks of `bytes` in all, or an Error when they do not fit. */
function takeBallast(module, bytes) {
  const blocks = [];
  for (let left = bytes; left > 0; left -= BALLAST_BLOCK) {
    const p = module._malloc(Math.min(left, BALLAST_BLOCK)) >>> 0;
    if (!p) {
      freeBallast(module, blocks);
      throw new RangeError(`${FN}: [BALLAST]: ${bytes} bytes do not fit the engine's memory`);
    }
    blocks.push(p);
  }
  return blocks;
}

function freeBallast(module, blocks) {
  for (const p of blocks.splice(0)) module._free(p);
}

/** Copies one safetensors file into the engine (streamed straight into the wasm heap) and registers it. */
async function addWeights(module, core, entry, ctx, limit, reserved) {
  let ptr = 0;
  let length = 0;
  await readEntry(entry, ctx, (n) => {
    length = n;
    const heapMax = limit(reserved.bytes + n);
    if (reserved.bytes + n > heapMax) {
      throw coded(new RangeError(`${FN}: ${entry.name} (${mib(n)}) does not fit the WebAssembly module's ${mib(heapMax)} beside what is loaded`), 'too-large',
        { file: entry.name, bytes: n, limit: heapMax });
    }
    ptr = core.allocFile(Math.max(n, 1));
    if (!ptr) throw coded(new RangeError(`${FN}: ${entry.name} (${mib(n)}) does not fit the WebAssembly module's memory (${mib(heapMax)} at most)`), 'too-large', { file: entry.name, bytes: n, limit: heapMax });
    return (chunk, at) => { module.HEAPU8.set(chunk, ptr + at); };
  });
  reserved.bytes += length;
  const e = core.addSafetensors(entry.name, ptr, length);
  if (e) throw new Error(`${FN}: ${e}`);
}

/**
 * The engine for `o.threads`: { module, threaded } with the one-thread module (shared by the lab's
 * models), or a threaded module of the model's own (o.threads − 1 thread Workers; the calling
 * thread is the first worker). With threads: 'auto', a threaded module that fails to load means
 * one thread (o.threads and o.threadsWhy say so) and the lab does without threads from then on.
 */
async function engine(lab, o) {
  if (o.threads === 1) return { module: await lab._pretrainedModule(), threaded: false };
  try {
    return { module: await loadThreaded(lab, 'pretrained', o.threads - 1), threaded: true };
  } catch (e) {
    if (!o.auto || !isLoadFailure(e)) throw new Error(`${FN}: threads: the threaded pretrained module failed to load: ${e.message}`, { cause: e });
    doWithoutThreads(lab, e);
    o.threads = 1;
    o.threadsWhy = threadsUnavailable(lab, 'pretrained');
    return { module: await lab._pretrainedModule(), threaded: false };
  }
}

/** Headlab#loadPretrained. */
export async function loadPretrained(lab, source, options = {}) {
  const o = checkOptions(lab, options);
  const src = makeSource(FN, source, o);
  const ctx = loadContext(o);
  ctx.hubUrl = o.hubUrl.replace(/\/+$/, '');
  if (o.signal?.aborted) throw abortError(FN, null, o.signal);
  // The engine and the tokenizer library load while config.json downloads. A threaded engine that
  // is not handed to a model is ended, whatever stopped the load.
  const enginePending = engine(lab, o);
  enginePending.catch(() => {});
  let handedOver = false;
  loadTokenizers().catch(() => {});
  try {
    return await loadWith(lab, o, src, ctx, enginePending, () => { handedOver = true; });
  } finally {
    if (!handedOver) enginePending.then((e) => { if (e.threaded) endModule(e.module, null); }, () => {});
  }
}

/** The rest of loadPretrained once the engine is on its way; `handOver()` just before the model is returned. */
async function loadWith(lab, o, src, ctx, enginePending, handOver) {
  const config = readConfig(FN, await readJson(await required(src, 'config.json', ctx,
    src.hub ? ` (is ${src.hub} a model repository, and is revision ${o.revision} right?)` : ''), ctx));
  const tok = await makeTokenizer(await readJson(await required(src, 'tokenizer.json', ctx), ctx), config.engine.vocabSize);
  const weights = await weightEntries(src, ctx);

  const { module, threaded } = await enginePending;
  if (o.signal?.aborted) throw abortError(FN, null, o.signal);
  // The module's cap, or less where this engine lets a memory grow less far (asked only of a model
  // that needs more than every engine gives: engine-memory.js).
  const linked = typeof module.heapMax === 'function' ? module.heapMax() : DEFAULT_HEAP_MAX;
  const limit = (need) => engineMemoryLimit(linked, need);
  const holds = (max) => (max < linked ? 'this browser lets a WebAssembly module hold' : 'a WebAssembly module can hold');
  const T = Math.min(config.engine.contextLength, FIT_TOKENS);
  const ballast = takeBallast(module, o.ballast);
  let core = new module.PretrainedCore();
  try {
    const e = core.configure(config.engine);
    if (e) throw new Error(`${FN}: config.json: ${e}`);
    if (threaded) {
      // Before the weights: the activations counted below include every thread's workspace.
      const t = core.setThreads(o.threads);
      if (t) throw new Error(`${FN}: ${t}`);
    }
    // What a run of T tokens with every output asked for holds beside the weights: the engine's
    // own count where it gives one.
    const activations = typeof core.activationBytes === 'function' ? core.activationBytes(T, true, false, true) : activationBytes(config.engine, T);
    const reserved = { bytes: activations + SLACK_BYTES };
    // A sharded model announces its size in its index: refused before any shard is downloaded.
    if (weights.totalBytes !== undefined) {
      const heapMax = limit(reserved.bytes + weights.totalBytes);
      if (reserved.bytes + weights.totalBytes > heapMax) {
        throw coded(new RangeError(`${FN}: ${src.where} cannot fit: its shards hold ${mib(weights.totalBytes)} (model.safetensors.index.json) and a run of ${T} tokens ` +
          `needs about ${mib(activations)} of activations, more than the ${mib(heapMax)} ${holds(heapMax)}; nothing more was downloaded`), 'too-large',
        { file: 'model.safetensors.index.json', bytes: weights.totalBytes, activations, limit: heapMax });
      }
    }
    // Shards are opened one at a time (an entry holds a live response).
    for (let i = 0; i < weights.length; i++) {
      const entry = weights[i].lazy ? await required(src, weights[i].lazy, ctx, ' (named by model.safetensors.index.json)') : weights[i];
      if (entry.total !== null) {
        const need = reserved.bytes + entry.total;
        const heapMax = limit(need);
        if (need > heapMax) {
          entry.cancel();
          for (const later of weights.slice(i + 1)) later.cancel?.();
          throw coded(new RangeError(`${FN}: ${src.where} cannot fit: ${entry.name} is ${mib(entry.total)} and a run of ${T} tokens needs about ${mib(activations)} ` +
            `of activations, ${mib(need)} with what is loaded, more than the ${mib(heapMax)} ${holds(heapMax)}; nothing more was downloaded`), 'too-large',
          { file: entry.name, bytes: entry.total, activations, limit: heapMax });
        }
        try {
          ctx.budget(entry.name, entry.total);
        } catch (err) {
          entry.cancel();
          for (const later of weights.slice(i + 1)) later.cancel?.();
          throw err;
        }
      }
      await addWeights(module, core, entry, ctx, limit, reserved);
    }
    const f = core.finish();
    if (f) throw new Error(`${FN}: ${f}`);
    const model = new PretrainedModel(lab, module, core, config, tok, { threads: o.threads, why: o.threadsWhy, threaded, ballast });
    core = null;
    handOver();
    return model;
  } catch (e) {
    for (const w of weights) w.cancel?.();
    if (o.signal?.aborted && !(e instanceof DOMException && e.name === 'AbortError')) throw abortError(FN, null, o.signal);
    throw e;
  } finally {
    // A threaded module is ended with its core (endModule joins its threads only where that may block).
    if (core && threaded) endModule(module, core);
    else if (core && !core.isDeleted?.()) core.delete();
    if (core && !threaded) freeBallast(module, ballast);
  }
}

// Models not disposed by their owner are freed when garbage-collected (with their thread Workers).
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ core, module, shared, ballast }) => {
    if (module) endModule(module, core);
    else if (!core.isDeleted?.()) core.delete();
    freeBallast(shared, ballast);
  })
  : null;

/** SplitMix64 on BigInt: the random tokens of headScores, the same in every engine. */
function splitmix(seed) {
  let s = BigInt.asUintN(64, BigInt(seed));
  return () => {
    s = BigInt.asUintN(64, s + 0x9e3779b97f4a7c15n);
    let z = s;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
}

/**
 * A pretrained GPT-2 or GPT-Neo model, made by {@link Headlab#loadPretrained}. Its methods
 * return promises (they will run in a Worker or on threads later without changing the API);
 * results are plain objects and typed arrays (copies). Layers and heads are numbered from 0.
 *
 * `textOrIds` is a string (tokenized with the model's tokenizer.json, no token added) or the
 * token ids themselves (an Int32Array or number[]), 1..contextLength of them.
 */
export class PretrainedModel {
  /** @private */
  constructor(lab, module, core, config, tok, { threads, why, threaded, ballast = [] }) {
    /** @private */ this._lab = lab;
    /** @private */ this._module = module;
    /** @private */ this._core = core;
    /** @private */ this._config = config;
    /** @private */ this._tok = tok;
    /** @private */ this._threads = threads;
    /** @private */ this._threadsWhy = why;
    /** @private a threaded module of this model's own, ended with it; null for the lab's shared one */
    this._threadedModule = threaded ? module : null;
    /** @private BALLAST's blocks in the lab's shared module (a threaded module ends with the model) */
    this._ballast = threaded ? [] : ballast;
    /** @private */ this._pieces = new Map();
    const i = core.info();
    /** @private */
    const dtype = { float32: 'F32', float16: 'F16', bfloat16: 'BF16' }[i.dtype] ?? i.dtype;
    this._info = Object.freeze({ ...config.info, parameters: i.parameters, dtype, bytes: i.bytes });
    finalizer?.register(this, { core, module: this._threadedModule, shared: module, ballast: this._ballast }, this);
  }

  /** @private */
  _live(fn) {
    if (!this._core) throw new TypeError(`PretrainedModel.${fn}: this model has been disposed`);
    return this._core;
  }

  /**
   * `{ architecture, kind, head, numLayers, numHeads, numKeyValueHeads, dModel, vocabSize, contextLength,
   * parameters, dtype, bytes }`: `architecture` as config.json names it, `kind` 'decoder' or 'encoder',
   * `head` 'next-token', 'masked-lm' or 'none' (BertModel: no logits, run gives the last hidden state),
   * `dtype` of the weights as stored ('F32', 'F16', 'BF16'), `bytes` the weights held in memory.
   */
  get info() {
    this._live('info');
    return { ...this._info };
  }

  /**
   * Threads each call splits its work over (the `threads` option, resolved: 'auto' is the cores
   * available, at most 8, where the threaded module can run); 0 once disposed.
   */
  get threads() {
    return this._core ? this._threads : 0;
  }

  /**
   * Why the model runs on one thread although `threads: 'auto'` was asked for ('the page is not
   * cross-origin isolated (COOP/COEP headers)', 'one core is available', …); '' when it runs on the
   * threads asked for, or when none were.
   */
  get threadsNote() {
    return this._threadsWhy;
  }

  /** @private The text of one token, as decoding it alone gives (' hit', not 'Ġhit'). */
  _piece(id) {
    let s = this._pieces.get(id);
    if (s === undefined) {
      s = this._tok.tokenizer.decode([id], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
      // Bytes that are not whole characters decode to U+FFFD: show them as <0xE2> instead.
      if (s.includes('\uFFFD')) s = readableBytes(byteLevelBytes(this._tok.tokenizer.id_to_token?.(id))) ?? s;
      this._pieces.set(id, s);
    }
    return s;
  }

  /** @private */
  _tokens(ids) {
    return Array.from(ids, (id) => this._piece(id));
  }

  /**
   * @private text → ids, without the context check. The post-processor's special tokens are added as
   * Hugging Face's tokenizer adds them (Llama's `<s>`, Gemma's `<bos>`; GPT-2's ByteLevel adds none).
   */
  _encode(fn, name, text) {
    if (typeof text !== 'string') throw new TypeError(`PretrainedModel.${fn}: ${name} must be a string, got ${describe(text)}`);
    return Int32Array.from(this._tok.tokenizer.encode(text, { add_special_tokens: true }).ids);
  }

  /** @private textOrIds → Int32Array of 1..contextLength ids (`room` more must fit for generation). */
  _sequence(fn, value, name = 'textOrIds', room = 0) {
    const { contextLength, vocabSize } = this._info;
    const max = contextLength - room;
    let ids;
    if (typeof value === 'string') {
      ids = this._encode(fn, name, value);
      if (ids.length === 0) throw new RangeError(`PretrainedModel.${fn}: ${name} gives no tokens; give some text or token ids`);
      if (ids.length > max) {
        throw new RangeError(`PretrainedModel.${fn}: ${name} is ${ids.length} tokens long, more than the ${max} ` +
          `${room ? `left for it (context length ${contextLength} − ${room} to generate)` : `the model's context length allows`}`);
      }
      return ids;
    }
    if (!(value instanceof Int32Array) && !Array.isArray(value)) {
      throw new TypeError(`PretrainedModel.${fn}: ${name} must be a string, or token ids as an Int32Array or number[], got ${describe(value)}`);
    }
    if (value.length < 1 || value.length > max) {
      throw new RangeError(`PretrainedModel.${fn}: ${name} must hold 1..${max} token ids (${room ? `context length ${contextLength} − ${room} to generate` : 'the context length'}), got ${value.length}`);
    }
    ids = new Int32Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const x = value[i];
      if (typeof x !== 'number') throw new TypeError(`PretrainedModel.${fn}: ${name}[${i}] must be a token id, got ${describe(x)}`);
      if (!Number.isInteger(x) || x < 0 || x >= vocabSize) throw new RangeError(`PretrainedModel.${fn}: ${name}[${i}] must be a token id in 0..${vocabSize - 1}, got ${x}`);
      ids[i] = x;
    }
    return ids;
  }

  /** @private Copies ids into the engine's token buffer, just before a call. */
  _put(core, ids) {
    core.tokenBuffer(ids.length).set(ids);
  }

  /** @private An engine answer that is an error message → RangeError. */
  _check(fn, r) {
    if (typeof r === 'string') throw new RangeError(`PretrainedModel.${fn}: ${r}`);
    return r;
  }

  /** @private The k most probable next tokens from one row of logits (softmax in double). */
  _top(logits, offset, V, k) {
    let max = -Infinity;
    for (let i = 0; i < V; i++) if (logits[offset + i] > max) max = logits[offset + i];
    let sum = 0;
    for (let i = 0; i < V; i++) sum += Math.exp(logits[offset + i] - max);
    const best = [];  // ids, kept sorted by logit (descending), then id
    for (let i = 0; i < V; i++) {
      const x = logits[offset + i];
      if (best.length === k && x <= logits[offset + best[k - 1]]) continue;
      let j = best.length;
      while (j > 0 && logits[offset + best[j - 1]] < x) j--;
      best.splice(j, 0, i);
      if (best.length > k) best.pop();
    }
    return best.map((id) => ({ id, token: this._piece(id), probability: Math.exp(logits[offset + id] - max) / sum }));
  }

  /**
   * Text → token ids through the model's tokenizer.json (@huggingface/tokenizers), with no token
   * added; `tokens` are the ids' texts, each decoded alone (' hit': the leading space is part of the token).
   * @param {string} text
   * @returns {{ids: Int32Array, tokens: string[]}}
   * @throws {TypeError} when text is not a string
   * @example
   * model.tokenize('Virat hit the ball');  // { ids: Int32Array [...], tokens: ['Vir', 'at', ' hit', ' the', ' ball'] }
   */
  tokenize(text) {
    this._live('tokenize');
    const ids = this._encode('tokenize', 'text', text);
    return { ids, tokens: this._tokens(ids) };
  }

  /**
   * Token ids → text, through the tokenizer's decoder.
   * @param {Int32Array|number[]} ids
   * @returns {string}
   */
  decode(ids) {
    this._live('decode');
    return this._tok.tokenizer.decode(Array.from(this._sequence('decode', ids, 'ids')));
  }

  /**
   * One forward pass. `logits` are the last position's (Float32Array [V]), or every position's
   * ([T, V] row-major) with `allLogits`; `next` the topK most probable next tokens after the last
   * one; `attention` (with `attention: true`) every layer's and head's weights, Float32Array
   * [numLayers, numHeads, T, T], rows queries, columns keys. `ablate` switches heads off for this
   * call: their outputs are zeroed before the output projection (whose bias stays). An encoder's
   * `logits` are the masked-LM logits at every position ([T, V]) and `next` is empty (see fill);
   * `pair` (a second text) or `tokenTypes` (one per id) give it token types, returned as `tokenTypes`.
   * A model without a head (BertModel, `info.head` 'none': sentence-transformers, fine-tunes) has no
   * logits: `hidden` is its last hidden state (Float32Array [T, dModel], Hugging Face's
   * last_hidden_state), `logits` is empty and `next` too; `allLogits: true` is refused.
   * `patch: { source, heads }` is activation patching: the listed heads' outputs (before the output
   * projection, at every position) are taken from a run on `source` (text or ids of the same length).
   * @param {string|Int32Array|number[]} textOrIds
   * @param {import('../headlab').PretrainedRunOptions} [options]
   * @returns {Promise<import('../headlab').PretrainedRunResult>}
   * @example
   * const r = await model.run('Virat hit the ball because it was full and outside off', { attention: true, topK: 5 });
   * r.next[0];  // { id, token: '.', probability }
   * const { numHeads: H } = model.info, T = r.ids.length;
   * r.attention[((1 * H + 0) * T + 5) * T + 3];  // layer 1, head 0, query 5 on key 3
   */
  async run(textOrIds, options = {}) {
    const fn = 'PretrainedModel.run';
    const core = this._live('run');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const { ids, types } = this._input(fn, textOrIds, options);
    const attention = requireBool(fn, 'attention', options.attention);
    const encoder = this._info.kind === 'encoder';
    const headless = this._info.head === 'none';
    if (headless && options.allLogits === true) {
      throw new TypeError(`${fn}: allLogits: this model (${this._info.architecture}) has no head, so it has no logits; run gives its last hidden state as hidden [T, dModel]`);
    }
    // An encoder's logits are the masked-LM predictions at every position.
    const allLogits = requireBool(fn, 'allLogits', options.allLogits) || encoder;
    const { vocabSize: V } = this._info;
    const topK = this._count(fn, 'topK', options.topK, 10, V);
    const ablate = this._ablation(fn, options.ablate);
    const patch = this._patch(fn, options.patch);
    this._put(core, ids);
    const r = this._check('run', core.run(ids.length, { attention, allLogits, ablate, lens: false, lensTopK: 0, tokenTypes: types, ...patch }));
    const T = ids.length;
    const offset = allLogits ? (T - 1) * V : 0;
    const logits = r.logits ?? new Float32Array(0);  // none without a head
    const out = { ids, tokens: this._tokens(ids), logits, next: encoder ? [] : this._top(logits, offset, V, topK) };
    if (headless) out.hidden = r.hidden;
    if (types) out.tokenTypes = types;
    if (attention) out.attention = r.attention;
    return out;
  }

  /**
   * @private textOrIds and run's pair / tokenTypes → ids and token types (undefined: all 0). A pair
   * goes through the tokenizer's post-processor ([CLS] A [SEP] B [SEP]), which gives the types.
   */
  _input(fn, textOrIds, options) {
    const { pair, tokenTypes } = options;
    const encoder = this._info.kind === 'encoder';
    if ((pair !== undefined || tokenTypes !== undefined) && !encoder) {
      throw new TypeError(`${fn}: ${pair !== undefined ? 'pair' : 'tokenTypes'} is for encoders (BERT, RoBERTa, DistilBERT); this model is a decoder`);
    }
    if (pair !== undefined && tokenTypes !== undefined) throw new TypeError(`${fn}: give pair or tokenTypes, not both`);
    if (pair !== undefined) {
      if (typeof pair !== 'string') throw new TypeError(`${fn}: pair must be a string (the second sentence), got ${describe(pair)}`);
      if (typeof textOrIds !== 'string') throw new TypeError(`${fn}: pair needs textOrIds to be a string (the first sentence), got ${describe(textOrIds)}`);
      const e = this._tok.tokenizer.encode(textOrIds, { text_pair: pair, add_special_tokens: true, return_token_type_ids: true });
      const ids = Int32Array.from(e.ids);
      if (ids.length > this._info.contextLength) {
        throw new RangeError(`${fn}: textOrIds and pair are ${ids.length} tokens long, more than the ${this._info.contextLength} the model's context length allows`);
      }
      return { ids, types: Int32Array.from(e.token_type_ids ?? new Array(ids.length).fill(0)) };
    }
    const ids = this._sequence(fn.slice(fn.indexOf('.') + 1), textOrIds);
    return { ids, types: this._types(fn, tokenTypes, ids.length) };
  }

  /** @private tokenTypes (one per token, undefined: all 0) → Int32Array or undefined. */
  _types(fn, tokenTypes, length) {
    if (tokenTypes === undefined) return undefined;
    if (this._info.kind !== 'encoder') throw new TypeError(`${fn}: tokenTypes is for encoders (BERT, RoBERTa, DistilBERT); this model is a decoder`);
    if (!(tokenTypes instanceof Int32Array) && !Array.isArray(tokenTypes)) {
      throw new TypeError(`${fn}: tokenTypes must be an Int32Array or number[] with one type per token, got ${describe(tokenTypes)}`);
    }
    if (tokenTypes.length !== length) throw new RangeError(`${fn}: tokenTypes must have one entry per token (${length}), got ${tokenTypes.length}`);
    const types = new Int32Array(length);
    for (let i = 0; i < length; i++) {
      const x = tokenTypes[i];
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0) throw new RangeError(`${fn}: tokenTypes[${i}] must be a non-negative integer, got ${describe(x)}`);
      types[i] = x;
    }
    return types;
  }

  /** @private Throws when a decoder-only method is called on an encoder. */
  _decoderOnly(fn, why) {
    if (this._info.head === 'none') this._needsHead(fn);
    if (this._info.kind === 'encoder') {
      throw new TypeError(`${fn}: this model is an encoder (${this._info.architecture}: bidirectional attention, masked-LM head); ${why}`);
    }
  }

  /** @private Throws for what needs logits on a model without a head (BertModel). */
  _needsHead(fn) {
    if (this._info.head !== 'none') return;
    throw new TypeError(`${fn}: this model (${this._info.architecture}) is an encoder without a head: it gives attention and its last hidden state ` +
      `(run's hidden), no logits to guess tokens with. Load a checkpoint with a masked-LM head (BertForMaskedLM, e.g. google-bert/bert-base-uncased) for that`);
  }

  /**
   * An encoder's guesses for its mask tokens ([MASK], <mask>): for each mask in the text, in order,
   * its position in `ids` and the topK most probable tokens there (softmax over the masked-LM logits).
   * @param {string} text with one or more mask tokens
   * @param {{topK?: number, ablate?: Array<{layer: number, head: number}>}} [options] topK default 5
   * @returns {Promise<import('../headlab').PretrainedFillResult>}
   * @example
   * const f = await model.fill('Virat hit the [MASK] through the covers.');
   * f.masks[0].top[0].token;  // the most probable token at the mask
   */
  async fill(text, options = {}) {
    const fn = 'PretrainedModel.fill';
    const core = this._live('fill');
    requireObject(fn, options, OPTION_KEYS[fn]);
    if (this._info.kind !== 'encoder') throw new TypeError(`${fn}: fill needs an encoder with a masked-LM head (BERT, RoBERTa, DistilBERT); this model is a decoder: use run or generate`);
    this._needsHead(fn);
    if (typeof text !== 'string') throw new TypeError(`${fn}: text must be a string with a mask token, got ${describe(text)}`);
    const { vocabSize: V } = this._info;
    const topK = this._count(fn, 'topK', options.topK, 5, V);
    const ablate = this._ablation(fn, options.ablate);
    const ids = this._sequence('fill', text, 'text');
    const maskToken = this._maskToken();
    const mask = this._tok.tokenizer.token_to_id(maskToken);
    const positions = [];
    ids.forEach((id, i) => { if (id === mask) positions.push(i); });
    if (positions.length === 0) throw new RangeError(`${fn}: text has no mask token; write ${maskToken} where the model should guess`);
    this._put(core, ids);
    const r = this._check('fill', core.run(ids.length, { attention: false, allLogits: true, ablate, lens: false, lensTopK: 0 }));
    const masks = positions.map((position) => ({ position, top: this._top(r.logits, position * V, V, topK) }));
    return { ids, tokens: this._tokens(ids), masks };
  }

  /** @private The tokenizer's mask token: tokenizer_config.json's convention, [MASK] or <mask>. */
  _maskToken() {
    for (const t of ['[MASK]', '<mask>']) if ((this._tok.tokenizer.token_to_id(t) ?? null) !== null) return t;
    throw new RangeError('PretrainedModel.fill: the tokenizer has no [MASK] or <mask> token');
  }

  /** @private A count in 1..max, or the default when undefined. */
  _count(fn, name, n, fallback, max) {
    if (n === undefined) return fallback;
    const v = requireDim(fn, name, n);
    if (v > max) throw new RangeError(`${fn}: ${name} must be at most ${max}, got ${v}`);
    return v;
  }

  /** @private [{ layer, head }] → Uint8Array [numLayers * numHeads], 1 = listed. */
  _ablation(fn, ablate, name = 'ablate') {
    return ablationMask(fn, ablate, this._info.numLayers, this._info.numHeads, name);
  }

  /** @private run's patch option → the engine's { patchSource, patchHeads }, or {} without one. */
  _patch(fn, patch) {
    if (patch === undefined) return {};
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
      throw new TypeError(`${fn}: patch must be { source, heads }, got ${describe(patch)}`);
    }
    for (const key of Object.keys(patch)) {
      if (key !== 'source' && key !== 'heads') throw new TypeError(`${fn}: patch has no option '${key}' (it takes source and heads)`);
    }
    if (patch.heads === undefined) throw new TypeError(`${fn}: patch.heads must list the heads to patch, as [{ layer, head }, …]`);
    const patchSource = this._sequence(fn.slice(fn.indexOf('.') + 1), patch.source, 'patch.source');
    return { patchSource, patchHeads: this._ablation(fn, patch.heads, 'patch.heads') };
  }

  /** @private A token id, or a text that is one token (nothing added), as the metric's answer or wrong token. */
  _oneToken(fn, name, value) {
    const V = this._info.vocabSize;
    if (typeof value === 'number') {
      if (!Number.isInteger(value) || value < 0 || value >= V) throw new RangeError(`${fn}: ${name} must be a token id in 0..${V - 1}, got ${value}`);
      return value;
    }
    if (typeof value !== 'string') throw new TypeError(`${fn}: ${name} must be a token id or a text that is one token (like ' Mary'), got ${describe(value)}`);
    const ids = this._tok.tokenizer.encode(value, { add_special_tokens: false }).ids;
    if (ids.length !== 1) {
      throw new RangeError(`${fn}: ${name} ${JSON.stringify(value)} is ${ids.length} tokens (${this._tokens(ids).map((t) => JSON.stringify(t)).join(', ')}); ` +
        'the metric compares two single tokens: give a token id or a one-token text');
    }
    return ids[0];
  }

  /** @private The metric's position: options.position, else an encoder's first mask token, else the last. */
  _position(fn, position, ids, name) {
    if (position !== undefined) {
      if (typeof position !== 'number' || !Number.isInteger(position) || position < 0 || position >= ids.length) {
        throw new RangeError(`${fn}: position must be an integer in 0..${ids.length - 1} (a position of ${name}), got ${describe(position)}`);
      }
      return position;
    }
    if (this._info.kind !== 'encoder') return ids.length - 1;
    const mask = this._tok.tokenizer.token_to_id(this._maskToken());
    const at = ids.indexOf(mask);
    if (at < 0) throw new RangeError(`${fn}: ${name} has no mask token and no position was given: an encoder's metric is read where it guesses`);
    return at;
  }

  /**
   * Activation patching of every head: for each head, metric(corrupted run with that head's outputs
   * from the clean run) − metric(corrupted run), metric = logit[answer] − logit[wrong] at `position`
   * (a decoder's last; an encoder's first mask token). `clean` and `corrupted` are texts or ids of the
   * same length; `answer` and `wrong` token ids or one-token texts (' Mary'); an encoder's `tokenTypes`
   * (one per token, e.g. 1 for a pair's second sentence) hold for both runs. Work the heads share is
   * done once: layers before a head's, a decoder's rows before the first difference, and each layer's
   * heads run as one batch. The work goes a layer at a time, giving the page its turn between layers;
   * `onProgress({ done, total })` hears of each, and `signal` stops it (the promise rejects with an
   * AbortError).
   * @param {import('../headlab').PatchHeadsOptions} options
   * @returns {Promise<import('../headlab').PatchHeadsResult>}
   * @example
   * const [p] = lab.findings.ioiPrompts({ n: 1 });
   * const { effects } = await model.patchHeads(p);  // p: { clean, corrupted, answer, wrong }
   * effects[9 * model.info.numHeads + 9];  // head 9.9's effect
   */
  async patchHeads(options) {
    const fn = 'PretrainedModel.patchHeads';
    const core = this._live('patchHeads');
    this._needsHead(fn);
    requireObject(fn, options, OPTION_KEYS[fn]);
    const clean = this._sequence('patchHeads', options.clean, 'clean');
    const corrupted = this._sequence('patchHeads', options.corrupted, 'corrupted');
    if (clean.length !== corrupted.length) {
      throw new RangeError(`${fn}: clean is ${clean.length} tokens and corrupted ${corrupted.length}; patching takes a head's output at every position, so both must have the same length`);
    }
    const answer = this._oneToken(fn, 'answer', options.answer);
    const wrong = this._oneToken(fn, 'wrong', options.wrong);
    const position = this._position(fn, options.position, clean, 'clean');
    const types = this._types(fn, options.tokenTypes, clean.length);
    const { onProgress, signal } = options;
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError(`${fn}: onProgress must be a function, got ${describe(onProgress)}`);
    if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean')) throw new TypeError(`${fn}: signal must be an AbortSignal, got ${describe(signal)}`);
    const naive = options[NAIVE] === true;
    const { numLayers: L, numHeads: H } = this._info;
    if (signal?.aborted) throw abortError(fn, null, signal);
    this._put(core, clean);
    const begun = this._check('patchHeads', types
      ? core.patchHeadsBegin(clean.length, corrupted, answer, wrong, position, types)
      : core.patchHeadsBegin(clean.length, corrupted, answer, wrong, position));
    const effects = new Float32Array(L * H);
    try {
      for (let l = 0; l < L; l++) {
        effects.set(this._check('patchHeads', core.patchHeadsLayer(l, naive)), l * H);
        onProgress?.({ done: l + 1, total: L });
        if (l + 1 < L) await new Promise((resolve) => setTimeout(resolve, 0));
        if (signal?.aborted) throw abortError(fn, null, signal);
        if (!this._core) throw new TypeError(`${fn}: this model was disposed while patching`);
      }
    } finally {
      this._core?.patchHeadsEnd();
    }
    return { effects, metricClean: begun.metricClean, metricCorrupted: begun.metricCorrupted, position, answer, wrong };
  }

  /**
   * Direct logit attribution at `position` (default the last) of a pre-norm decoder: each head's output
   * there through its rows of the output projection (no bias), and each MLP's output, centred (LayerNorm)
   * and divided by the final norm's scale of the whole residual, times the norm's weight, dotted with
   * W_U[answer] − W_U[wrong] (TransformerLens's apply_ln_to_stack). Encoders (post-norm, masked-LM head)
   * are refused: their logits are no sum of parts; patchHeads works on them.
   * @param {import('../headlab').DirectLogitAttributionOptions} options
   * @returns {Promise<import('../headlab').DirectLogitAttribution>}
   * @example
   * const ids = 'When Mary and John went to the store, John gave a drink to';
   * const d = await model.directLogitAttribution({ ids, answer: ' Mary', wrong: ' John' });
   * d.heads;  // Float32Array [numLayers × numHeads]
   */
  async directLogitAttribution(options) {
    const fn = 'PretrainedModel.directLogitAttribution';
    const core = this._live('directLogitAttribution');
    this._needsHead(fn);
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('directLogitAttribution', options.ids, 'ids');
    const answer = this._oneToken(fn, 'answer', options.answer);
    const wrong = this._oneToken(fn, 'wrong', options.wrong);
    const position = this._position(fn, options.position, ids, 'ids');
    this._put(core, ids);
    const r = this._check('directLogitAttribution', core.directLogitAttribution(ids.length, answer, wrong, position));
    return { heads: r.heads, mlps: r.mlps, scale: r.scale, logitDiff: r.logitDiff, position, answer, wrong };
  }

  /**
   * Every head's detector scores, TransformerLens's definitions on one sequence: BOS (config.json's
   * bos_token_id) then n random non-special tokens r₁…rₙ then r₁…rₙ again (positions 0…2n), with
   * A the head's attention: previousToken = mean over t = 2…2n of A[t, t−1]; duplicateToken =
   * mean over t = n+1…2n of A[t, t−n]; induction = mean over t = n+1…2n of A[t, t−n+1];
   * firstToken = mean over t = 1…2n of A[t, 0]. `sequence` is returned so anyone can recompute them.
   * @param {{length?: number, seed?: number}} [options] n (default 20; 2n + 1 ≤ contextLength) and the seed of
   *   the random tokens (default 1)
   * @returns {Promise<import('../headlab').PretrainedHeadScores>}
   * @example
   * const { scores } = await model.headScores();
   * scores.filter((s) => s.induction > 0.4);  // the induction heads
   */
  async headScores(options = {}) {
    const fn = 'PretrainedModel.headScores';
    const core = this._live('headScores');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const maxN = Math.floor((this._info.contextLength - 1) / 2);
    const n = this._count(fn, 'length', options.length, Math.min(20, maxN), maxN);
    const seed = options.seed ?? 1;
    requireSeed(fn, 'seed', seed);
    // An encoder's texts start with [CLS] (BERT, DistilBERT: no bos_token_id in config.json).
    const cls = this._info.kind === 'encoder' ? this._tok.tokenizer.token_to_id('[CLS]') ?? null : null;
    const bos = this._config.bosId ?? cls ?? this._config.eosId;
    if (bos === null) throw new Error(`${fn}: config.json has no bos_token_id (nor eos_token_id) to start the sequence with`);
    const sequence = this._randomSequence(n, seed, bos);
    this._put(core, sequence);
    const s = this._check('headScores', core.headScores(sequence.length, n));
    const { numLayers: L, numHeads: H } = this._info;
    const scores = [];
    for (let layer = 0; layer < L; layer++) {
      for (let head = 0; head < H; head++) {
        const b = (layer * H + head) * 4;
        scores.push({ layer, head, previousToken: s[b], duplicateToken: s[b + 1], induction: s[b + 2], firstToken: s[b + 3] });
      }
    }
    return { sequence, scores };
  }

  /** @private BOS, n random non-special tokens of the tokenizer, the same n again. */
  _randomSequence(n, seed, bos) {
    const next = splitmix(seed);
    const size = this._tok.size;
    const seq = new Int32Array(2 * n + 1);
    seq[0] = bos;
    for (let i = 1; i <= n; i++) {
      let id;
      do id = Number(next() % BigInt(size)); while (this._tok.special.has(id) || id === bos);
      seq[i] = id;
      seq[n + i] = id;
    }
    return seq;
  }

  /**
   * The logit lens: for each layer l, the residual stream after block l read through the final
   * LayerNorm and the unembedding, as the topK most probable tokens at every position. `ablate`
   * switches heads off as in run(), so the last layer's answer is run()'s with the same heads off.
   * @param {string|Int32Array|number[]} textOrIds
   * @param {{topK?: number, ablate?: Array<{layer: number, head: number}>}} [options] topK default 5
   * @returns {Promise<import('../headlab').PretrainedLogitLens>}
   * @example
   * const lens = await model.logitLens('The cat sat on the');
   * lens.layers[0].positions[4][0].token;  // layer 0's best guess after ' the'
   * await model.logitLens('The cat sat on the', { ablate: [{ layer: 1, head: 0 }] });  // with that head off
   */
  async logitLens(textOrIds, options = {}) {
    const fn = 'PretrainedModel.logitLens';
    const core = this._live('logitLens');
    this._decoderOnly(fn, 'the logit lens reads the next-token prediction of a decoder; use run or fill');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const ids = this._sequence('logitLens', textOrIds);
    const topK = this._count(fn, 'topK', options.topK, 5, Math.min(100, this._info.vocabSize));
    const ablate = this._ablation(fn, options.ablate);
    this._put(core, ids);
    const r = this._check('logitLens', core.run(ids.length, { attention: false, allLogits: false, ablate, lens: true, lensTopK: topK }));
    const T = ids.length;
    const layers = [];
    for (let layer = 0; layer < this._info.numLayers; layer++) {
      const positions = [];
      for (let t = 0; t < T; t++) {
        const b = (layer * T + t) * topK;
        const row = [];
        for (let k = 0; k < topK; k++) {
          row.push({ id: r.lensIds[b + k], token: this._piece(r.lensIds[b + k]), probability: r.lensProbs[b + k] });
        }
        positions.push(row);
      }
      layers.push({ layer, positions });
    }
    return { ids, tokens: this._tokens(ids), layers };
  }

  /**
   * Continues a prompt token by token, each drawn from the next-token distribution sharpened by
   * `temperature` (0 takes the most probable token), seeded: the same model, prompt and options
   * give the same tokens. Stops after maxTokens, at the context length, or before config.json's
   * eos_token_id (never emitted). `ids` and `tokens` are the whole sequence, prompt first
   * (`promptLength` of them), so `run(result.ids, { attention: true })` shows the generated
   * tokens' attention; `text` is the decoded continuation alone. `ablate` switches heads off for every
   * token of the continuation, as in run. The prompt runs once and each layer's keys and values are
   * kept, so each new token costs one position's pass through the model.
   * @param {string|Int32Array|number[]} prompt '' starts from bos_token_id
   * @param {import('../headlab').PretrainedGenerateOptions} [options]
   * @returns {Promise<import('../headlab').PretrainedGenerateResult>}
   * @example
   * const g = await model.generate('Once upon a time', { maxTokens: 10, seed: 3 });
   * g.text;  // the ten tokens that follow, as text
   * await model.generate('Once upon a time', { temperature: 0, ablate: [{ layer: 0, head: 1 }] });  // with that head off
   */
  async generate(prompt, options = {}) {
    const fn = 'PretrainedModel.generate';
    const core = this._live('generate');
    this._decoderOnly(fn, 'it predicts masked tokens, not the next one: use fill');
    requireObject(fn, options, OPTION_KEYS[fn]);
    const { contextLength } = this._info;
    const maxTokens = this._count(fn, 'maxTokens', options.maxTokens, 20, contextLength - 1);
    const temperature = options.temperature ?? 1;
    if (typeof temperature !== 'number') throw new TypeError(`${fn}: temperature must be a number ≥ 0, got ${describe(temperature)}`);
    if (!(Number.isFinite(temperature) && temperature >= 0 && temperature <= 100)) {
      throw new RangeError(`${fn}: temperature must be a finite number in [0, 100], got ${temperature}`);
    }
    const seed = options.seed ?? 1;
    requireSeed(fn, 'seed', seed);
    let ids;
    if (prompt === '' || (Array.isArray(prompt) && prompt.length === 0)) {
      const bos = this._config.bosId ?? this._config.eosId;
      if (bos === null) throw new RangeError(`${fn}: prompt is empty and config.json has no bos_token_id to start from`);
      ids = Int32Array.of(bos);
    } else {
      ids = this._sequence('generate', prompt, 'prompt', 1);
    }
    const ablate = this._ablation(fn, options.ablate);
    const n = Math.min(maxTokens, contextLength - ids.length);
    this._put(core, ids);
    const stop = this._config.eosId ?? -1;
    const added = this._check('generate', core.generate(ids.length, n, temperature, seed, stop, { ablate, cached: options[UNCACHED] !== true }));
    const all = new Int32Array(ids.length + added.length);
    all.set(ids);
    all.set(added, ids.length);
    return {
      ids: all, tokens: this._tokens(all), promptLength: ids.length,
      text: this._tok.tokenizer.decode(Array.from(added), { skip_special_tokens: false }),
    };
  }

  /** Frees the weights and the engine's memory. Every method afterwards throws a TypeError; dispose() twice is fine. */
  dispose() {
    if (!this._core) return;
    finalizer?.unregister(this);
    if (this._threadedModule) endModule(this._threadedModule, this._core);
    else if (!this._core.isDeleted?.()) this._core.delete();
    freeBallast(this._module, this._ballast);
    this._core = null;
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}
