// Two builds of the multi-core layer (pthreads) against each other in one Node process, taking
// turns call by call, so load from other processes falls on both alike; with --busy under the benchmark's
// standard background load (bench/lib/busy-load.mjs). Each build is a copy of web/lib (with its
// gen/): e.g. cp -r web/lib /tmp/lib-a, rebuild, cp -r web/lib /tmp/lib-b.
//   node bench/parallel-ab.mjs --a /tmp/lib-a --b /tmp/lib-b [--T 256,1024] [--reps 7] [--rounds 5] [--busy]
// Prints, per T: the 1-thread layer (build a), each build's 2-thread median, efficiency
// (1-thread ÷ 2-thread ÷ 2) and b ÷ a.
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { arg, layerWeights, median, seededFill } from './lib/scripts.mjs';
import { startBusyLoad } from './lib/busy-load.mjs';

const dirs = { a: arg('a'), b: arg('b') };
if (!dirs.a || !dirs.b) throw new Error('--a and --b name two copies of web/lib (see the top of this file)');
const seqs = arg('T', '256,1024').split(',').map(Number);
const reps = Number(arg('reps', 7));
const rounds = Number(arg('rounds', 5));
const d = 512, h = 8;
const fill = seededFill();
const w = layerWeights(d, h, fill);

const labs = {};
for (const [k, dir] of Object.entries(dirs)) {
  const { createHeadlab } = await import(pathToFileURL(path.resolve(dir, 'headlab.js')).href);
  labs[k] = await createHeadlab();
}
const one = labs.a.createLayer(w);
const layers = {
  a: await labs.a.createParallelLayer({ ...w, threads: 2, mechanism: 'pthreads' }),
  b: await labs.b.createParallelLayer({ ...w, threads: 2, mechanism: 'pthreads' }),
};
const load = process.argv.includes('--busy') ? startBusyLoad() : null;
const loadBefore = os.loadavg();
for (const T of seqs) {
  const query = fill(T * d);
  const variants = {
    one: async () => one.forward({ query }).output,
    a: async () => (await layers.a.forward({ query })).output,
    b: async () => (await layers.b.forward({ query })).output,
  };
  const want = await variants.one();
  for (const [name, run] of Object.entries(variants)) {
    const got = await run();
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
    if (!(worst <= 1e-5)) throw new Error(`${name} differs from one thread by ${worst} at T = ${T}`);
  }
  const times = { one: [], a: [], b: [] };
  // Call by call in turn (one, a, b, one, a, b, ...): a change in the machine's load falls on all three.
  for (let i = 0; i < rounds * reps; i++) {
    for (const [name, run] of Object.entries(variants)) {
      const t0 = performance.now();
      await run();
      times[name].push(performance.now() - t0);
    }
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  console.log(`T = ${T}: 1 thread ${m.one.toFixed(2)} ms · a ${m.a.toFixed(2)} ms (efficiency ${(m.one / m.a / 2).toFixed(2)}) · ` +
    `b ${m.b.toFixed(2)} ms (efficiency ${(m.one / m.b / 2).toFixed(2)}) · b is ${(m.a / m.b).toFixed(2)}× a`);
}
const loadStats = load ? await load.stop() : null;
await layers.a.dispose();
await layers.b.dispose();
one.dispose();
console.log(`${reps * rounds} runs each, taking turns call by call; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}` +
  (loadStats ? `; background load used ${loadStats.cores?.toFixed(2) ?? '?'} of a core` : ''));
