// The two mechanisms of createParallelLayer side by side in Node (which one is Node's default
// is decided from this; see web/lib/api/parallel.js):
//   node bench/parallel-mechanism.mjs [--T 256,1024] [--reps 15] [--rounds 3] [--threads 2]
// main:     lab.createLayer on the calling thread (one thread)
// pthreads: lab.createParallelLayer({ mechanism: 'pthreads' }): threads of one wasm module
// workers:  lab.createParallelLayer({ mechanism: 'workers' }): worker_threads holding slices of the heads
// d_model 512, h 8, self-attention with projections. The variants take turns (round-robin, a
// warm-up call each first), so load from other processes falls on all of them alike; medians
// over every round, and the load average before and after.
import os from 'node:os';
import { createHeadlab } from '../web/lib/headlab.js';
import { arg, layerWeights, median, seededFill } from './lib/scripts.mjs';

const seqs = arg('T', '256,1024').split(',').map(Number);
const reps = Number(arg('reps', 15));
const rounds = Number(arg('rounds', 3));
const threads = Number(arg('threads', 2));
const d = 512, h = 8;
const lab = await createHeadlab();
const fill = seededFill();
const w = layerWeights(d, h, fill);

const loadBefore = os.loadavg();
const main = lab.createLayer(w);
const layers = {
  pthreads: await lab.createParallelLayer({ ...w, threads, mechanism: 'pthreads' }),
  workers: await lab.createParallelLayer({ ...w, threads, mechanism: 'workers' }),
};
const rows = [];
for (const T of seqs) {
  const query = fill(T * d);
  const variants = {
    main: async () => main.forward({ query }).output,
    pthreads: async () => (await layers.pthreads.forward({ query })).output,
    workers: async () => (await layers.workers.forward({ query })).output,
  };
  const want = await variants.main();
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (const [name, run] of Object.entries(variants)) {
    const got = await run();
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
    if (!(worst <= 1e-5)) throw new Error(`${name} differs from main by ${worst} at T = ${T}`);
  }
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(variants)) {
      for (let r = 0; r < reps; r++) {
        const t0 = performance.now();
        await run();
        times[name].push(performance.now() - t0);
      }
    }
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  rows.push({ T, ...m, best: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.min(...v)])) });
  console.log(`T = ${T}: main ${m.main.toFixed(2)} ms · pthreads ${m.pthreads.toFixed(2)} ms (efficiency ${(m.main / m.pthreads / threads).toFixed(2)}) · ` +
    `workers ${m.workers.toFixed(2)} ms (efficiency ${(m.main / m.workers / threads).toFixed(2)}) · workers ÷ pthreads ${(m.workers / m.pthreads).toFixed(2)}× ` +
    `(best: main ${rows.at(-1).best.main.toFixed(2)}, pthreads ${rows.at(-1).best.pthreads.toFixed(2)}, workers ${rows.at(-1).best.workers.toFixed(2)})`);
}
await layers.pthreads.dispose();
await layers.workers.dispose();
main.dispose();
console.log(`threads ${threads}, ${reps} × ${rounds} runs each; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
