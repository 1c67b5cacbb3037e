// Steps to the induction phase change at default settings in the WebAssembly build under Node, per
// seed: the exact half of bench:training's phase-change table, without the clock (a busy machine
// changes the seconds, not the steps). Same rule: the first evaluation, every 50 steps on 256 held-out
// sequences, with accuracy on the repeated part >= 0.5. With --full it trains on to the task's
// default steps and prints what the final model scores (evaluate(1000); the best layer-1
// previous-token and layer-2 induction scores of headScores(500)).
//   node bench/training/phase-steps.mjs [--full] [seed ...]
import { createHeadlab } from '../../web/lib/headlab.js';

const EVAL_EVERY = 50, UNTIL = 4000;
const full = process.argv.includes('--full');
const seeds = process.argv.slice(2).filter((a) => a !== '--full').map(Number);
const lab = await createHeadlab();
const steps = (await lab.languageTasks()).find((t) => t.name === 'induction').defaults.steps;
for (const seed of seeds.length ? seeds : [1, 2, 3, 4, 5]) {
  const m = await lab.createLanguageModel({ task: 'induction', seed });
  let step = null;
  while (m.steps < UNTIL) {
    m.step(EVAL_EVERY);
    if (m.evaluate(256).accuracy >= 0.5) { step = m.steps; break; }
  }
  let final = '';
  if (full) {
    while (m.steps < steps) m.step(Math.min(500, steps - m.steps));
    const heads = m.headScores(500);
    const best = (layer, key) => Math.max(...heads.filter((h) => h.layer === layer).map((h) => h[key]));
    final = `; step ${m.steps}: accuracy ${m.evaluate(1000).accuracy.toFixed(3)}, previous token (layer 1) ` +
      `${best(0, 'previousToken').toFixed(3)}, induction (layer 2) ${best(1, 'induction').toFixed(3)}`;
  }
  m.dispose();
  console.log(`seed ${seed} phase ${step ?? 'never'} (${lab.flavour})${final}`);
}
