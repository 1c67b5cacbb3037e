// One engine on one of make_families.py's models, the same code in Node (engine-families.mjs) and on a
// Chromium page (page-families.mjs). `ctx` says where: { readBytes(rel) -> Uint8Array, importHeadlab(),
// importOrt(), importWllama() (Chromium only) }, paths relative to the repository root.
// Correctness first (last position's logits against PyTorch's within 1e-3 · max |logit|, or, for
// wllama, which gives no logits, its greedy continuations against PyTorch's), then timing: one forward
// pass per T (logits at every position), and for a decoder generation with a KV cache (genNew tokens
// after genPrompt ids, greedy).
import { trackWasmMemory, wasmMemoryBytes } from '../lib/wasm-memory.mjs';
import { idsFor, median } from './measure.mjs';
import { ortFeeds } from './ort-feeds.mjs';

const TOLERANCE = 1e-3;
const WLLAMA_MARGIN = 0.25;  // logits; PyTorch's float32 top-1 − top-2 below which a 16-bit engine may differ
const now = () => performance.now();
const text = (bytes) => new TextDecoder().decode(bytes);

function compare(out, ref) {
  let maxAbs = 0, maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(out[i] - ref[i]));
    maxRef = Math.max(maxRef, Math.abs(ref[i]));
  }
  return { maxAbsDiff: maxAbs, maxAbsRef: maxRef, relDiff: maxAbs / (maxRef || 1), pass: maxAbs <= TOLERANCE * maxRef };
}

/** An engine that cannot run this architecture (yet): the cells say so instead of failing. */
class Unavailable extends Error {}

async function headlabEngine(ctx, folder, threads) {
  const { createHeadlab } = await ctx.importHeadlab();
  const config = JSON.parse(text(await ctx.readBytes(`${folder}/config.json`)));
  // Generation is timed over a fixed number of tokens: no stop at a random model's eos.
  delete config.eos_token_id;
  const files = {
    config, tokenizer: JSON.parse(text(await ctx.readBytes(`${folder}/tokenizer.json`))),
    weights: await ctx.readBytes(`${folder}/model.safetensors`),
  };
  const t0 = now();
  const lab = await createHeadlab();
  let model;
  try {
    model = await lab.loadPretrained(files, { threads });
  } catch (e) {
    if (/not supported/i.test(e.message)) throw new Unavailable(e.message);
    throw e;
  }
  const loadMs = now() - t0;
  const V = model.info.vocabSize;
  return {
    loadMs, threadsUsed: model.threads, info: model.info,
    lastLogits: async (ids) => {
      const { logits } = await model.run(ids, { allLogits: true });
      return logits.subarray((ids.length - 1) * V);
    },
    forward: (ids) => model.run(ids, { allLogits: true }),
    generate: async (ids, n) => {
      const g = await model.generate(ids, { maxTokens: n, temperature: 0 });
      return Array.from(g.ids.subarray(g.promptLength));
    },
    dispose: () => model.dispose(),
  };
}

async function ortEngine(ctx, folder, threads) {
  const ort = await ctx.importOrt();
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const config = JSON.parse(text(await ctx.readBytes(`${folder}/config.json`)));
  const bytes = await ctx.readBytes(`${folder}/model.onnx`);
  const t0 = now();
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const loadMs = now() - t0;
  const io = ortFeeds(ort, session, config);
  const V = config.vocab_size;
  const shared = typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated !== false;
  return {
    version: ort.env.versions?.web ?? 'unknown', loadMs, threadsUsed: shared ? threads : 1,
    lastLogits: async (ids) => (await session.run(io.feed(ids))).logits.data.subarray((ids.length - 1) * V),
    forward: async (ids) => (await session.run(io.feed(ids))).logits.data,
    generate: io.hasPast ? (ids, n) => io.greedy(ids, n) : null,
    dispose: () => session.release(),
  };
}

// wllama answers with text, not ids: PyTorch's greedy ids are turned into the same text through the
// byte-level vocabulary, and the two texts compared with each run of U+FFFD (bytes that are not UTF-8
// on their own, which either side may replace differently) counted as one.
function byteLevelDecoder(tokenizer) {
  const byteOf = new Map();
  const printable = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  let extra = 0;
  for (let b = 0; b < 256; b++) byteOf.set(printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++), b);
  const tokenOf = new Map(Object.entries(tokenizer.model.vocab).map(([s, id]) => [id, s]));
  return (ids) => new TextDecoder().decode(Uint8Array.from(ids.flatMap((id) => [...(tokenOf.get(id) ?? '')].map((c) => byteOf.get(c)).filter((b) => b !== undefined))));
}
const squash = (s) => s.replace(/\uFFFD+/g, '\uFFFD');

async function wllamaEngine(ctx, folder, threads) {
  if (!ctx.importWllama) throw new Unavailable('wllama runs in the browser only (a Web Worker and fetch of its wasm)');
  const { Wllama, wasmUrl } = await ctx.importWllama();
  const bytes = await ctx.readBytes(`${folder}/model-f16.gguf`);
  const t0 = now();
  const wllama = new Wllama({ default: wasmUrl }, { logger: { debug() {}, log() {}, info() {}, warn() {}, error: console.error } });
  await wllama.loadModel([new Blob([bytes], { type: 'application/octet-stream' })], { n_threads: threads, n_ctx: 512, n_batch: 512, n_gpu_layers: 0 });
  const loadMs = now() - t0;
  const decode = byteLevelDecoder(JSON.parse(text(await ctx.readBytes(`${folder}/tokenizer.json`))));
  // wllama takes a prompt as text only (an array of ids is refused): check.json's prompt texts,
  // whose encodings are the ids the other engines get.
  const check = JSON.parse(text(await ctx.readBytes(`${folder}/check.json`)));
  const texts = new Map([check.generate, ...check.greedy].filter(Boolean).map((g) => [(g.ids ?? g.prompt).join(','), g.text]));
  const textOf = (ids) => {
    const t = texts.get(Array.from(ids).join(','));
    if (t === undefined) throw new Error('wllama: no prompt text in check.json for these ids');
    return t;
  };
  const complete = async (ids, n) => {
    // llama.cpp's server cannot answer with a token that is not UTF-8 on its own (a JSON error): those
    // 128 ids are banned here, and the check compares with PyTorch's greedy under the same ban.
    const last = await wllama.createCompletion({
      prompt: textOf(ids), max_tokens: n, temp: 0, top_k: 1, ignore_eos: true, cache_prompt: false,
      logit_bias: check.nonUtf8Ids.map((id) => [id, false]),
    });
    const used = last.usage?.prompt_tokens;
    if (used !== undefined && used !== ids.length) throw new Error(`wllama read the prompt as ${used} tokens, not ${ids.length}: its tokenizer disagrees`);
    return last;
  };
  return {
    version: wllama.constructor.getLibllamaVersion?.() ?? 'unknown', loadMs,
    threadsUsed: wllama.getNumThreads?.() ?? (wllama.isMultithread() ? threads : 1),
    multithread: wllama.isMultithread(),
    greedyText: async (ids, n) => (await complete(ids, n)).choices[0].text,
    expectText: (ids) => decode(ids),
    generate: async (ids, n) => {
      const r = await complete(ids, n);
      return { n: r.timings?.predicted_n ?? r.usage?.completion_tokens ?? n, timings: r.timings };
    },
    dispose: () => wllama.exit(),
  };
}

const ENGINES = { headlab: headlabEngine, ort: ortEngine, wllama: wllamaEngine };

/**
 * Returns the result of one run: { status: 'ok' | 'fails' | 'unavailable', check…, runs: [{ T, mode:
 * 'forward' | 'generate', times }] }. `gen`: { prompt, tokens } or null (no generation).
 */
export async function measureFamily({ ctx, engine, threads, folder, seqs, reps, gen }) {
  trackWasmMemory();
  const check = JSON.parse(text(await ctx.readBytes(`${folder}/check.json`)));
  const V = check.lastLogits.length;
  const result = { engine, threads, runs: [] };
  let e;
  try {
    e = await ENGINES[engine](ctx, folder, threads);
  } catch (err) {
    if (err instanceof Unavailable) return { ...result, status: 'unavailable', error: err.message };
    throw err;
  }
  Object.assign(result, { threadsUsed: e.threadsUsed, version: e.version, loadMs: e.loadMs, info: e.info, multithread: e.multithread });

  // Correctness first.
  if (e.lastLogits) {
    const ids = idsFor(check.ids, check.ids.length, V);
    result.checkPytorch = compare(await e.lastLogits(ids), Float32Array.from(check.lastLogits));
    if (!result.checkPytorch.pass) {
      result.status = 'fails';
      result.error = `last-position logits differ from PyTorch's: max |diff| ${result.checkPytorch.maxAbsDiff.toExponential(2)} > 1e-3 · ${result.checkPytorch.maxAbsRef.toFixed(3)}`;
    }
  }
  if (check.greedy && result.status !== 'fails') {
    result.checkGreedy = [];
    for (const g of check.greedy) {
      let same, got, margins;
      if (e.greedyText) {
        // llama.cpp computes in 16 bits in places (f16 KV cache, f16 activations into f16 matrices): compare
        // up to the first step that PyTorch decides by less than WLLAMA_MARGIN (later steps follow from it).
        const k = g.marginsText.findIndex((m) => m < WLLAMA_MARGIN);
        margins = g.marginsText.slice(0, k < 0 ? undefined : k);
        if (!margins.length) continue;
        got = await e.greedyText(g.prompt, margins.length);
        same = squash(got) === squash(e.expectText(g.nextText.slice(0, margins.length)));
      } else if (e.generate) {
        margins = g.margins;
        got = Array.from(await e.generate(Int32Array.from(g.prompt), g.next.length));
        same = got.length === g.next.length && got.every((t, i) => t === g.next[i]);
      } else continue;
      result.checkGreedy.push({ promptLength: g.prompt.length, tokens: margins.length, same, got, minMargin: Math.min(...margins) });
      if (!same) {
        result.status = 'fails';
        result.error = `greedy continuation after ${g.prompt.length} ids differs from PyTorch's`;
      }
    }
  }
  if (result.status === 'fails') {
    result.memory = { wasmBytes: wasmMemoryBytes() };
    await e.dispose();
    return result;
  }

  const timeIt = async (fn) => {
    await fn();  // warm-up
    const times = [];
    for (let r = 0; r < reps; r++) {
      const t0 = now();
      await fn();
      times.push(now() - t0);
    }
    return times;
  };
  if (e.forward) {
    for (const T of seqs) {
      const ids = idsFor(check.ids, T, V);
      const times = await timeIt(() => e.forward(ids));
      result.runs.push({ T, mode: 'forward', times, medianMs: median(times), minMs: Math.min(...times) });
    }
  }
  if (gen && e.generate && check.generate) {
    if (check.generate.ids.length !== gen.prompt) throw new Error(`check.json's prompt has ${check.generate.ids.length} ids, not ${gen.prompt}`);
    const ids = Int32Array.from(check.generate.ids);
    const extra = [];
    const times = await timeIt(async () => {
      const g = await e.generate(ids, gen.tokens);
      const n = g.n ?? g.length;
      if (n !== gen.tokens) throw new Error(`generated ${n} tokens, not ${gen.tokens}`);
      if (g.timings) extra.push(g.timings);
    });
    const run = { T: gen.prompt, mode: 'generate', newTokens: gen.tokens, times, medianMs: median(times), minMs: Math.min(...times) };
    // wllama's own split: prompt processing and decoding (llama.cpp's timings), warm-up excluded
    if (extra.length) run.engineTimings = extra.slice(1);
    result.runs.push(run);
  }
  result.status = 'ok';
  result.memory = { wasmBytes: wasmMemoryBytes() };
  await e.dispose();
  return result;
}
