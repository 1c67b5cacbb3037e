// Would the trainers gain from threads over their batches? A quick bound, in Node:
//   node bench/threads-trainers.mjs [--seconds 3]
// For the one-layer trainer (two-relations, h 2, d 16, batch 64) and the language model (its
// default task and size, its default batch), each in worker_threads:
//   one:   one trainer with the whole batch B, steps/s
//   split: two trainers with B/2 each, running at once on two threads: examples/s of both together
//          (what a data-parallel step over two threads could reach at best: the gradients would
//          still have to be summed and the two threads kept in step once per step)
// and the time of one step at B and at B/2 on one thread (how much of a step scales with the batch).
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { arg } from './lib/scripts.mjs';

const seconds = Number(arg('seconds', 3));
const api = new URL('../web/lib/headlab.js', import.meta.url).href;

// Runs in a Worker: makes the trainer, warms up, then steps for `seconds` and reports steps/s.
const body = `
const { workerData, parentPort } = require('node:worker_threads');
(async () => {
  const { createHeadlab } = await import(workerData.api);
  const lab = await createHeadlab();
  const { kind, batchSize, seconds } = workerData;
  let t;
  if (kind === 'trainer') t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, batchSize, seed: 1 });
  else {
    const task = (await lab.languageTasks())[0];
    t = await lab.createLanguageModel({ task: task.name, batchSize, seed: 1 });
  }
  for (let i = 0; i < 20; i++) t.step();
  parentPort.postMessage('ready');
  await new Promise((r) => parentPort.once('message', r));
  let steps = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) { t.step(); steps++; }
  parentPort.postMessage(steps / ((performance.now() - t0) / 1000));
})();
`;

async function run(specs) {
  const workers = specs.map((s) => new Worker(body, { eval: true, workerData: { ...s, api, seconds } }));
  await Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
  const rates = Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
  workers.forEach((w) => w.postMessage('go'));
  const out = await rates;
  await Promise.all(workers.map((w) => w.terminate()));
  return out;
}

const lmBatch = await (async () => {
  const { createHeadlab } = await import(api);
  const lab = await createHeadlab();
  return (await lab.languageTasks())[0].defaults.batchSize;
})();
const loadBefore = os.loadavg();
for (const [kind, B] of [['trainer', 64], ['lm', lmBatch]]) {
  const [whole] = await run([{ kind, batchSize: B }]);
  const [half] = await run([{ kind, batchSize: B / 2 }]);
  const both = await run([{ kind, batchSize: B / 2 }, { kind, batchSize: B / 2 }]);
  const examplesOne = whole * B, examplesSplit = (both[0] + both[1]) * (B / 2);
  console.log(`${kind}, batch ${B}: one thread ${whole.toFixed(0)} steps/s (${(1000 / whole).toFixed(2)} ms/step); ` +
    `batch ${B / 2} alone ${(1000 / half).toFixed(2)} ms/step (${((1000 / half) / (1000 / whole)).toFixed(2)} of a full step); ` +
    `two threads of ${B / 2}: ${examplesSplit.toFixed(0)} examples/s against ${examplesOne.toFixed(0)}, ${(examplesSplit / examplesOne).toFixed(2)}× at best`);
}
console.log(`load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
