// One engine on the GPT-2-small-shaped model in this Node process (bench/pretrained/run.mjs spawns
// one per run, so ORT's process-wide numThreads and idle threads never touch HeadLab's timings):
//   node bench/pretrained/engine.mjs --engine headlab|ort --threads 1 --folder build/bench-gpt2
//     --seqs 64,256 --reps 3 [--ref ort-logits.f32] [--save-logits out.f32] [--headlab-module web/lib/headlab.js]
// Loads the model from the folder's files (read into memory first: load time is from bytes in
// memory to a model ready to run), runs check.json's 64 ids (all positions' logits: compared with
// --ref before any timing, and with PyTorch's last position), then times one forward pass per T.
// Prints one line "RESULT {json}" on stdout.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { trackWasmMemory, wasmMemoryBytes } from '../lib/wasm-memory.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const TOLERANCE = 1e-3;  // max |a − b| ≤ 1e-3 · max |ref|

function parseArgs(argv) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument ${argv[i]}`);
    const key = argv[i].slice(2);
    a[key] = i + 1 < argv.length && !argv[i + 1].startsWith('--') ? argv[++i] : true;
  }
  return a;
}

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

const median = (xs) => {
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

async function headlabEngine(folder, threads, module) {
  const { createHeadlab } = await import(pathToFileURL(path.resolve(repo, module)).href);
  const files = {
    config: JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8')),
    tokenizer: JSON.parse(fs.readFileSync(path.join(folder, 'tokenizer.json'), 'utf8')),
    weights: new Uint8Array(fs.readFileSync(path.join(folder, 'model.safetensors'))),
  };
  const t0 = performance.now();
  const lab = await createHeadlab();
  const model = await lab.loadPretrained(files, { threads });
  const loadMs = performance.now() - t0;
  files.weights = null;
  return {
    name: 'HeadLab', loadMs, threadsUsed: model.threads, info: model.info,
    // The comparison needs every position: allLogits.
    check: async (ids) => (await model.run(ids, { allLogits: true })).logits,
    modes: {
      // The same work as ORT's graph (logits at every position), the default (the last position's
      // logits and the top 10, what the explorer asks), and with all 144 heads' attention.
      all: (ids) => model.run(ids, { allLogits: true }),
      last: (ids) => model.run(ids),
      attention: (ids) => model.run(ids, { attention: true }),
    },
    dispose: () => model.dispose(),
  };
}

async function ortEngine(folder, threads) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const bytes = new Uint8Array(fs.readFileSync(path.join(folder, 'model.onnx')));
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const loadMs = performance.now() - t0;
  const feed = (ids) => ({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, (x) => BigInt(x)), [1, ids.length]) });
  const all = async (ids) => (await session.run(feed(ids))).logits.data;
  return {
    name: 'ORT Web', version: ort.env.versions?.web ?? 'unknown', loadMs, threadsUsed: threads,
    check: all, modes: { all }, dispose: () => session.release(),
  };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const folder = path.resolve(repo, a.folder ?? 'build/bench-gpt2');
  const threads = Number(a.threads ?? 1);
  const seqs = String(a.seqs ?? '64,256').split(',').map(Number);
  const reps = Number(a.reps ?? 3);
  const baselineRss = process.resourceUsage().maxRSS * 1024;
  trackWasmMemory();
  const checkJson = JSON.parse(fs.readFileSync(path.join(folder, 'check.json'), 'utf8'));
  const V = checkJson.lastLogits.length;
  const e = a.engine === 'ort' ? await ortEngine(folder, threads) : await headlabEngine(folder, threads, a['headlab-module'] ?? 'web/lib/headlab.js');
  const result = { engine: a.engine, threads, threadsUsed: e.threadsUsed, version: e.version, loadMs: e.loadMs, info: e.info, runs: [] };

  // Correctness first: all 64 positions' logits.
  const ids64 = idsFor(checkJson.ids, checkJson.ids.length, V);
  const logits = await e.check(ids64);
  const last = logits.subarray((ids64.length - 1) * V, ids64.length * V);
  result.checkPytorch = compare(last, Float32Array.from(checkJson.lastLogits));
  if (a['save-logits']) fs.writeFileSync(a['save-logits'], new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength));
  if (a.ref) {
    const b = fs.readFileSync(a.ref);
    const ref = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
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
          const t0 = performance.now();
          await fn(ids);
          times.push(performance.now() - t0);
        }
        result.runs.push({ T, mode, times, medianMs: median(times), minMs: Math.min(...times) });
      }
    }
    result.status = 'ok';
  }
  result.memory = { wasmBytes: wasmMemoryBytes(), rssPeakBytes: process.resourceUsage().maxRSS * 1024, rssBaselineBytes: baselineRss };
  await e.dispose();
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
}

main().catch((err) => {
  process.stdout.write(`RESULT ${JSON.stringify({ status: 'fails', error: String(err?.message ?? err).split('\n')[0].slice(0, 400) })}\n`);
  process.exit(0);
});
