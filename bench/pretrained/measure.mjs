// One engine on the GPT-2-small-shaped model, the same code in Node (engine.mjs) and on a
// Chromium page (page.mjs). `ctx` says where: { readBytes(rel) -> Uint8Array, importHeadlab(),
// importOrt() }, paths relative to the repository root.
// Loads the model from the folder's files (read into memory first: load time is from bytes in
// memory to a model ready to run), runs check.json's 64 ids (every position's logits: compared with
// `ref` before any timing, and the last position with PyTorch's), then times one forward pass per T.
import { trackWasmMemory, wasmMemoryBytes } from '../lib/wasm-memory.mjs';

const TOLERANCE = 1e-3;  // max |a − b| ≤ 1e-3 · max |ref|
const now = () => performance.now();

/** The ids of a run of T tokens: check.json's 64, then a seeded LCG over the vocabulary. */
export function idsFor(checkIds, T, V) {
  const ids = new Int32Array(T);
  let s = 12345;
  for (let i = 0; i < T; i++) {
    if (i < checkIds.length) ids[i] = checkIds[i];
    else {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      ids[i] = s % (V - 1);  // not the special token
    }
  }
  return ids;
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function compare(out, ref) {
  let maxAbs = 0, maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(out[i] - ref[i]));
    maxRef = Math.max(maxRef, Math.abs(ref[i]));
  }
  return { maxAbsDiff: maxAbs, maxAbsRef: maxRef, relDiff: maxAbs / (maxRef || 1), pass: maxAbs <= TOLERANCE * maxRef };
}

const text = (bytes) => new TextDecoder().decode(bytes);

async function headlabEngine(ctx, folder, threads) {
  const { createHeadlab } = await ctx.importHeadlab();
  const files = {
    config: JSON.parse(text(await ctx.readBytes(`${folder}/config.json`))),
    tokenizer: JSON.parse(text(await ctx.readBytes(`${folder}/tokenizer.json`))),
    weights: await ctx.readBytes(`${folder}/model.safetensors`),
  };
  const t0 = now();
  const lab = await createHeadlab();
  const model = await lab.loadPretrained(files, { threads });
  const loadMs = now() - t0;
  files.weights = null;
  return {
    loadMs, threadsUsed: model.threads, info: model.info,
    check: async (ids) => (await model.run(ids, { allLogits: true })).logits,
    modes: {
      // The same work as ORT's graph (logits at every position); the default call (the last
      // position's logits and the top 10, what the explorer asks); and with all 144 heads' attention.
      all: (ids) => model.run(ids, { allLogits: true }),
      last: (ids) => model.run(ids),
      attention: (ids) => model.run(ids, { attention: true }),
    },
    dispose: () => model.dispose(),
  };
}

async function ortEngine(ctx, folder, threads) {
  const ort = await ctx.importOrt();
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const bytes = await ctx.readBytes(`${folder}/model.onnx`);
  const t0 = now();
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const loadMs = now() - t0;
  const feed = (ids) => ({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, (x) => BigInt(x)), [1, ids.length]) });
  const all = async (ids) => (await session.run(feed(ids))).logits.data;
  // ORT falls back to 1 thread where SharedArrayBuffer is missing (a page that is not isolated).
  const shared = typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated !== false;
  return {
    version: ort.env.versions?.web ?? 'unknown', loadMs, threadsUsed: shared ? threads : 1,
    check: all, modes: { all }, dispose: () => session.release(),
  };
}

/**
 * Returns { result, logits } where logits are check.json's 64 ids' logits at every position.
 * `ref`: a Float32Array of the same, from another engine, or null.
 */
export async function measurePretrained({ ctx, engine, threads, folder, seqs, reps, ref }) {
  trackWasmMemory();
  const checkJson = JSON.parse(text(await ctx.readBytes(`${folder}/check.json`)));
  const V = checkJson.lastLogits.length;
  const e = engine === 'ort' ? await ortEngine(ctx, folder, threads) : await headlabEngine(ctx, folder, threads);
  const result = { engine, threads, threadsUsed: e.threadsUsed, version: e.version, loadMs: e.loadMs, info: e.info, runs: [] };

  // Correctness first: all 64 positions' logits.
  const ids64 = idsFor(checkJson.ids, checkJson.ids.length, V);
  const logits = await e.check(ids64);
  const last = logits.subarray((ids64.length - 1) * V, ids64.length * V);
  result.checkPytorch = compare(last, Float32Array.from(checkJson.lastLogits));
  if (ref) {
    result.checkRef = compare(logits, ref);
    if (!result.checkRef.pass) {
      result.status = 'fails';
      result.error = `logits differ from the reference: max |diff| ${result.checkRef.maxAbsDiff.toExponential(2)} > 1e-3 · ${result.checkRef.maxAbsRef.toFixed(3)}`;
    }
  }
  if (!result.checkPytorch.pass) {
    result.status = 'fails';
    result.error = `last-position logits differ from PyTorch's: max |diff| ${result.checkPytorch.maxAbsDiff.toExponential(2)}`;
  }

  if (result.status !== 'fails') {
    for (const T of seqs) {
      const ids = idsFor(checkJson.ids, T, V);
      for (const [mode, fn] of Object.entries(e.modes)) {
        if (mode === 'attention' && T !== 64) continue;
        await fn(ids);  // warm-up
        const times = [];
        for (let r = 0; r < reps; r++) {
          const t0 = now();
          await fn(ids);
          times.push(now() - t0);
        }
        result.runs.push({ T, mode, times, medianMs: median(times), minMs: Math.min(...times) });
      }
    }
    result.status = 'ok';
  }
  result.memory = { wasmBytes: wasmMemoryBytes() };
  await e.dispose();
  return { result, logits };
}
