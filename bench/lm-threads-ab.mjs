// The language models' data-parallel step of two builds against each other and one thread, in
// one Node process, taking turns step by step (so load from other processes falls on all alike); with --busy
// under the benchmark's standard background load (bench/lib/busy-load.mjs). Builds are copies of
// web/lib with their gen/ (see bench/parallel-ab.mjs).
//   node bench/lm-threads-ab.mjs --a /tmp/lib-a --b /tmp/lib-b [--tasks induction,cricket] [--steps 20] [--rounds 8] [--busy]
// Prints per task, from the median step time: steps/s on 1 thread (build a) and on 2 threads with each build, each one's
// speed-up over 1 thread, and b ÷ a.
import path from 'node:path';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { arg, median } from './lib/scripts.mjs';
import { startBusyLoad } from './lib/busy-load.mjs';

const dirs = { a: arg('a'), b: arg('b') };
if (!dirs.a || !dirs.b) throw new Error('--a and --b name two copies of web/lib (see the top of this file)');
const tasks = arg('tasks', 'induction,cricket').split(',');
const steps = Number(arg('steps', 20));
const rounds = Number(arg('rounds', 8));

const labs = {};
for (const [k, dir] of Object.entries(dirs)) {
  const { createHeadlab } = await import(pathToFileURL(path.resolve(dir, 'headlab.js')).href);
  labs[k] = await createHeadlab();
}
const load = process.argv.includes('--busy') ? startBusyLoad() : null;
const loadBefore = os.loadavg();
for (const task of tasks) {
  const models = {
    one: await labs.a.createLanguageModel({ task, seed: 1 }),
    a: await labs.a.createLanguageModel({ task, seed: 1, threads: 2 }),
    b: await labs.b.createLanguageModel({ task, seed: 1, threads: 2 }),
  };
  for (const m of Object.values(models)) m.step(10);  // warm-up
  // Step by step in turn (one, a, b, one, ...): a change in the machine's load falls on all three.
  const times = { one: [], a: [], b: [] };
  for (let i = 0; i < rounds * steps; i++) {
    for (const [k, m] of Object.entries(models)) {
      const t0 = performance.now();
      m.step(1);
      times[k].push(performance.now() - t0);
    }
  }
  const rates = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, [1000 / median(v)]]));
  const m = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, median(v)]));
  console.log(`${task}: 1 thread ${m.one.toFixed(0)} steps/s · a ${m.a.toFixed(0)} (${(m.a / m.one).toFixed(2)}×) · ` +
    `b ${m.b.toFixed(0)} (${(m.b / m.one).toFixed(2)}×) · b is ${(m.b / m.a).toFixed(2)}× a`);
  for (const lm of Object.values(models)) await lm.dispose();
}
const loadStats = load ? await load.stop() : null;
console.log(`${steps * rounds} steps each, taking turns step by step; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}` +
  (loadStats ? `; background load used ${loadStats.cores?.toFixed(2) ?? '?'} of a core` : ''));
