// What a learner sees while the default induction model trains: every 100 steps, each head's
// previous-token and induction scores and labels (LanguageModel#headScores on 64 held-out
// sequences, as <headlab-language-model> scores while running) and the held-out accuracy.
// Prints when each label first appears (and stays) per seed, and saves the run as JSON.
//   node bench/phase-change/measure.mjs [--seeds 1,2,3,4,5] [--until 3000] [--out bench/results/phase-change.json]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHeadlab } from '../../web/lib/headlab.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const seeds = arg('seeds', '1,2,3,4,5').split(',').map(Number);
const until = Number(arg('until', 3000));
const out = arg('out', path.join(here, '../results/phase-change.json'));
const EVERY = 100, SCORE_EXAMPLES = 64, EVAL_EXAMPLES = 256;

const lab = await createHeadlab();
const runs = [];
for (const seed of seeds) {
  const m = await lab.createLanguageModel({ task: 'induction', seed });
  const rows = [];
  const record = () => {
    const scores = m.headScores(SCORE_EXAMPLES);
    const e = m.evaluate(EVAL_EXAMPLES);
    rows.push({
      step: m.steps, loss: e.loss, accuracy: e.accuracy,
      heads: scores.map((s) => ({ layer: s.layer, head: s.head, previousToken: s.previousToken, induction: s.induction, label: s.label })),
    });
  };
  record();
  while (m.steps < until) { m.step(EVERY); record(); }
  const config = m.config;
  m.dispose();
  runs.push({ seed, config, rows });
  console.error(`seed ${seed} done`);
}

/** First step from which `pred` holds for this head at every later record. */
function settled(rows, k, pred) {
  let first = null;
  for (const r of rows) {
    if (pred(r.heads[k])) first ??= r.step;
    else first = null;
  }
  return first;
}
const firstAt = (rows, k, pred) => rows.find((r) => pred(r.heads[k]))?.step ?? null;

const lines = [];
const p = (s) => lines.push(s);
p(`# The induction model's head labels while it trains (\`node bench/phase-change/measure.mjs\`, ${new Date().toISOString().slice(0, 10)})`);
p('');
p(`Default induction model, seeds ${seeds.join(', ')}; every ${EVERY} steps: headScores(${SCORE_EXAMPLES}) (what the element shows while training) and evaluate(${EVAL_EXAMPLES}). Phase change = first evaluation with accuracy ≥ 0.5. "first" = first record with the label; "stays" = from when the label holds at every later record up to step ${until}.`);
p('');
p('| seed | phase change | layer-2 "induction" first / stays (per head) | layer-1 "previous token" first / stays (per head) |');
p('| ---: | ---: | --- | --- |');
for (const { seed, config, rows } of runs) {
  const h = config.numHeads;
  const phase = rows.find((r) => r.accuracy >= 0.5)?.step ?? null;
  const l2 = [], l1 = [];
  for (let i = 0; i < h; i++) {
    const ind = (s) => s.label === 'induction', prev = (s) => s.label === 'previous token';
    l2.push(`${firstAt(rows, h + i, ind) ?? '–'}/${settled(rows, h + i, ind) ?? '–'}`);
    l1.push(`${firstAt(rows, i, prev) ?? '–'}/${settled(rows, i, prev) ?? '–'}`);
  }
  p(`| ${seed} | ${phase ?? '–'} | ${l2.join(', ')} | ${l1.join(', ')} |`);
}
p('');
p('Scores every 300 steps (best layer-1 previous-token score / best layer-2 induction score):');
p('');
const shown = [...new Set(runs[0].rows.map((r) => r.step))].filter((s) => s % 300 === 0);
p('| seed | ' + shown.join(' | ') + ' |');
p('| ---: | ' + shown.map(() => '---').join(' | ') + ' |');
for (const { seed, config, rows } of runs) {
  const h = config.numHeads;
  const cells = rows.filter((r) => r.step % 300 === 0).map((r) => {
    const prev = Math.max(...r.heads.slice(0, h).map((s) => s.previousToken));
    const ind = Math.max(...r.heads.slice(h).map((s) => s.induction));
    return `${prev.toFixed(2)} / ${ind.toFixed(2)}`;
  });
  p(`| ${seed} | ${cells.join(' | ')} |`);
}
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out,
  JSON.stringify({ date: new Date().toISOString(), seeds, every: EVERY, scoreExamples: SCORE_EXAMPLES, runs }, null, 1));
fs.writeFileSync(out.replace(/\.json$/, '.md'), lines.join('\n') + '\n');
console.log(lines.join('\n'));
