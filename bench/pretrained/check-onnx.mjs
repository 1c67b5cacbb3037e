// Checks a model.onnx written by make_gpt2_small.py or make_families.py with ONNX Runtime Web in Node:
// the last position's logits for check.json's ids must match PyTorch's within 1e-4 + 1e-3·|ref|; a graph
// with past_key_values inputs starts from an empty cache and must reproduce check.json's greedy
// continuations through the cache; then times a few forward passes.
// Usage: node bench/pretrained/check-onnx.mjs [folder] [--threads N] [--check-only]
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as ort from 'onnxruntime-web';
import { ortFeeds } from './ort-feeds.mjs';

const args = process.argv.slice(2);
const ti = args.indexOf('--threads');
const threads = ti >= 0 ? Number(args[ti + 1]) : 1;
const folder = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--threads') ?? 'build/bench-gpt2';
ort.env.wasm.numThreads = threads;
ort.env.logLevel = 'error';

const check = JSON.parse(readFileSync(`${folder}/check.json`, 'utf8'));
let t0 = performance.now();
const session = await ort.InferenceSession.create(readFileSync(`${folder}/model.onnx`),
  { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
const loadMs = performance.now() - t0;
const io = ortFeeds(ort, session, JSON.parse(readFileSync(`${folder}/config.json`, 'utf8')));

const out = (await session.run(io.feed(check.ids))).logits;
const V = out.dims[2];
const last = out.data.subarray((check.ids.length - 1) * V);
let worst = 0;
for (let i = 0; i < V; i++) {
  worst = Math.max(worst, Math.abs(last[i] - check.lastLogits[i]) / (1e-4 + 1e-3 * Math.abs(check.lastLogits[i])));
}
const top = [...last.keys()].sort((a, b) => last[b] - last[a]).slice(0, 5);
console.log(`ORT Web ${ort.env.versions?.web ?? ''}, ${threads} thread(s): load ${loadMs.toFixed(0)} ms; ` +
  `last-position logits vs PyTorch: worst |d|/(1e-4 + 1e-3|ref|) = ${worst.toFixed(3)}; top-5 ${top} (PyTorch ${check.top5})`);
if (worst > 1) process.exitCode = 1;
for (const g of io.hasPast ? check.greedy ?? [] : []) {
  const got = await io.greedy(g.prompt, g.next.length);
  const same = got.every((t, i) => t === g.next[i]);
  console.log(`  greedy with the KV cache after ${g.prompt.length} ids: ${got} (PyTorch ${g.next}): ${same ? 'same' : 'DIFFERENT'}`);
  if (!same) process.exitCode = 1;
}
for (const T of args.includes('--check-only') ? [] : [64, 256]) {
  const ids = Array.from({ length: T }, (_, i) => check.ids[i % check.ids.length]);
  await session.run(io.feed(ids));
  const times = [];
  for (let r = 0; r < 3; r++) {
    t0 = performance.now();
    await session.run(io.feed(ids));
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`  T = ${T}: median ${times[1].toFixed(0)} ms (min ${times[0].toFixed(0)})`);
}
await session.release();
