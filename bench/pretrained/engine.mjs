// One engine on the GPT-2-small-shaped model in this Node process (bench/pretrained/run.mjs spawns
// one per run, so ORT's process-wide numThreads and idle threads never touch HeadLab's timings):
//   node bench/pretrained/engine.mjs --engine headlab|ort --threads 1 --folder build/bench-gpt2
//     --seqs 64,256 --reps 3 [--ref ort-logits.f32] [--save-logits out.f32] [--headlab-module web/lib/headlab.js]
//   node bench/pretrained/engine.mjs --family --engine headlab|ort --threads 1 --folder build/bench-smollm2
//     --seqs 64,256 --reps 3 [--gen 64x32]   (make_families.py's models: measure-families.mjs)
// What it measures: measure.mjs, measure-families.mjs. Prints one line "RESULT {json}" on stdout.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { measurePretrained } from './measure.mjs';
import { measureFamily } from './measure-families.mjs';
import { parseArgs, printResult } from '../lib/child.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const baselineRss = process.resourceUsage().maxRSS * 1024;
  const ctx = {
    readBytes: async (rel) => new Uint8Array(fs.readFileSync(path.resolve(repo, rel))),
    importHeadlab: () => import(pathToFileURL(path.resolve(repo, a['headlab-module'] ?? 'web/lib/headlab.js')).href),
    importOrt: () => import('onnxruntime-web'),
  };
  if (a.family) {
    const [prompt, tokens] = String(a.gen ?? '').split('x').map(Number);
    const result = await measureFamily({
      ctx, engine: a.engine, threads: Number(a.threads ?? 1), folder: path.relative(repo, path.resolve(repo, a.folder)),
      seqs: String(a.seqs ?? '64,256').split(',').filter(Boolean).map(Number), reps: Number(a.reps ?? 3),
      gen: tokens ? { prompt, tokens } : null,
    });
    result.memory = { ...result.memory, rssPeakBytes: process.resourceUsage().maxRSS * 1024, rssBaselineBytes: baselineRss };
    printResult(result);
    process.exit(0);
  }
  let ref = null;
  if (a.ref) {
    const b = fs.readFileSync(a.ref);
    ref = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }
  const { result, logits } = await measurePretrained({
    ctx, engine: a.engine, threads: Number(a.threads ?? 1), folder: path.relative(repo, path.resolve(repo, a.folder ?? 'build/bench-gpt2')),
    seqs: String(a.seqs ?? '64,256').split(',').filter(Boolean).map(Number), reps: Number(a.reps ?? 3), ref,
  });
  if (a['save-logits']) fs.writeFileSync(a['save-logits'], new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength));
  result.memory.rssPeakBytes = process.resourceUsage().maxRSS * 1024;
  result.memory.rssBaselineBytes = baselineRss;
  printResult(result);
  process.exit(0);  // ORT may keep handles open
}

main().catch((err) => {
  printResult({ status: 'fails', error: String(err?.message ?? err).split('\n')[0].slice(0, 400) });
  process.exit(0);
});
