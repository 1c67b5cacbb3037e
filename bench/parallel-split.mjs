// How to split the forward pass over Workers, measured in Node (numbers quoted in
// ParallelLayer's comment in web/lib/api/parallel.js):
//   node bench/parallel-split.mjs [--T 256,1024] [--reps 9]
// heads:   lab.createParallelLayer({ threads: 2 }): each Worker holds 4 of the 8 heads (inputs shared
//          through a SharedArrayBuffer, or copied per Worker by postMessage)
// rows:    two 1-Worker layers with every head, each given half the query rows (key = the whole input)
// main:    lab.createLayer on the calling thread
// Also the cost of summing two partial outputs on the calling thread.
import { createHeadlab } from '../web/lib/headlab.js';
import { arg, layerWeights, median, seededFill } from './lib/scripts.mjs';

const seqs = arg('T', '256,1024').split(',').map(Number);
const reps = Number(arg('reps', 9));
const d = 512, h = 8;
const lab = await createHeadlab();
const fill = seededFill();
const w = layerWeights(d, h, fill);

const main = lab.createLayer(w);
const heads = await lab.createParallelLayer({ ...w, threads: 2, mechanism: 'workers' });
const halves = [await lab.createParallelLayer({ ...w, threads: 1, mechanism: 'workers' }), await lab.createParallelLayer({ ...w, threads: 1, mechanism: 'workers' })];

for (const T of seqs) {
  const query = fill(T * d);
  const variants = {
    main: async () => main.forward({ query }).output,
    'heads, shared input': async () => { heads._shareInputs = true; return (await heads.forward({ query })).output; },
    'heads, copied input': async () => { heads._shareInputs = false; return (await heads.forward({ query })).output; },
    rows: async () => {
      const half = (T >> 1) * d;
      const parts = await Promise.all([halves[0].forward({ query: query.subarray(0, half), key: query }),
        halves[1].forward({ query: query.subarray(half), key: query })]);
      const out = new Float32Array(T * d);
      out.set(parts[0].output);
      out.set(parts[1].output, half);
      return out;
    },
  };
  const want = await variants.main();
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (const [k, f] of Object.entries(variants)) {
    const got = await f();
    const diff = got.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i])), 0);
    if (!(diff < 1e-4)) throw new Error(`${k} differs from main by ${diff}`);
    for (let i = 0; i < 3; i++) await f();  // warm-up
  }
  for (let r = 0; r < reps; r++) {
    for (const [k, f] of Object.entries(variants)) {
      const t0 = performance.now();
      await f();
      times[k].push(performance.now() - t0);
    }
  }
  const a = fill(T * d), b = fill(T * d), sums = [];
  for (let r = 0; r < 50; r++) {
    const t0 = performance.now();
    for (let j = 0; j < a.length; j++) a[j] += b[j];
    sums.push(performance.now() - t0);
  }
  const line = Object.entries(times).map(([k, t]) => `${k} ${median(t).toFixed(1)} ms`).join(' · ');
  console.log(`T=${T}, d=${d}, h=${h}: ${line} · summing two outputs ${median(sums).toFixed(2)} ms`);
}
main.dispose();
await Promise.all([heads.dispose(), ...halves.map((l) => l.dispose())]);
