// Training speed of two checkouts of HeadLab side by side, in one Node process:
//
//   node bench/training/compare-builds.mjs <before-repo> [<after-repo>] [--rounds 7] [--steps 400]
//
// Each repository must hold a wasm build (web/lib/gen). For each workload (the one-layer
// trainer's demo preset and the language models' tasks at their defaults) the two builds
// take turns, round after round, each timing the same number of steps from the same seed,
// so that load from other processes falls on both alike; the table gives the median steps/s
// of each and the ratio after/before. Refactors that should not change speed are checked
// with it (the ratio should be ~1.00); it is not a benchmark of absolute speed.
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
if (!positional[0]) {
  console.error('usage: node bench/training/compare-builds.mjs <before-repo> [<after-repo>] [--rounds 7] [--steps 400]');
  process.exit(2);
}
const repos = [path.resolve(positional[0]), path.resolve(positional[1] ?? path.join(here, '../..'))];
const ROUNDS = option('rounds', 7);
const STEPS = option('steps', 400);

const WORKLOADS = [
  { name: 'trainer two-relations h=2 d=16 batch 64', kind: 'trainer', config: { task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 64 }, scale: 5 },
  { name: 'trainer three-relations h=3 d=24 batch 64', kind: 'trainer', config: { task: 'three-relations', numHeads: 3, dModel: 24, batchSize: 64 }, scale: 5 },
  { name: 'language model induction (defaults)', kind: 'lm', config: { task: 'induction' }, scale: 0.25 },
  { name: 'language model cricket (defaults)', kind: 'lm', config: { task: 'cricket' }, scale: 0.25 },
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function labOf(repo) {
  const { createHeadlab } = await import(pathToFileURL(path.join(repo, 'web/lib/headlab.js')).href);
  return createHeadlab();
}

/** Steps per second of `steps` steps after a warm-up, seed fixed. */
async function time(lab, workload, steps) {
  const model = workload.kind === 'trainer'
    ? await lab.createTrainer({ ...workload.config, seed: 1 })
    : await lab.createLanguageModel({ ...workload.config, seed: 1 });
  model.step(Math.max(1, Math.round(steps / 10)));
  const t0 = performance.now();
  model.step(steps);
  const seconds = (performance.now() - t0) / 1000;
  model.dispose();
  return steps / seconds;
}

const labs = [];
for (const repo of repos) labs.push(await labOf(repo));
console.log(`before: ${repos[0]}\nafter:  ${repos[1]}\n${ROUNDS} rounds, builds alternating within each round\n`);
console.log('| workload | before steps/s | after steps/s | after / before |');
console.log('|---|---:|---:|---:|');
for (const workload of WORKLOADS) {
  const steps = Math.max(10, Math.round(STEPS * workload.scale));
  const rates = [[], []];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [1, 0] : [0, 1];
    for (const which of order) rates[which].push(await time(labs[which], workload, steps));
  }
  const [before, after] = rates.map(median);
  console.log(`| ${workload.name} | ${before.toFixed(0)} | ${after.toFixed(0)} | ${(after / before).toFixed(3)} |`);
}
