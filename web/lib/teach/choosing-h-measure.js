// The choosing-h trade-off measurement, shared by scripts/choosing-h-table.mjs (which writes the
// table the page ships) and <headlab-choosing-h> (which can re-measure it in a Worker). Every
// number comes from the module's headsTrial; this file only runs the trials and averages seeds.

/** The lookup task at d_model 16, every h dividing it, three seeds. */
export const SETUP = Object.freeze({ task: 'lookup', dModel: 16, heads: [1, 2, 4, 8, 16], seeds: [1, 2, 3], steps: 4000, evalExamples: 1000 });

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Runs every trial of SETUP through `runTrial(options)` (lab.headsTrial, or a Worker call to it),
 * one at a time, calling onTrial(done, total, trial) after each; returns one row per h.
 */
export async function measure(runTrial, onTrial = () => {}) {
  const total = SETUP.heads.length * SETUP.seeds.length;
  const rows = [];
  let done = 0;
  for (const numHeads of SETUP.heads) {
    const trials = [];
    for (const seed of SETUP.seeds) {
      const { task, dModel, steps, evalExamples } = SETUP;
      const r = await runTrial({ task, dModel, numHeads, seed, steps, evalExamples });
      const trial = {
        seed, accuracy: r.accuracy, loss: r.loss, relationAccuracy: Array.from(r.relationAccuracy),
        relationsWithOwnHead: r.relationsWithOwnHead,
      };
      trials.push(trial);
      onTrial(++done, total, { numHeads, ...trial });
    }
    rows.push(summarise(numHeads, trials));
  }
  return rows;
}

/** One h: the seeds' means. On lookup, relation 0 is found by content, the others by position. */
export function summarise(numHeads, trials) {
  return {
    numHeads, dK: SETUP.dModel / numHeads,
    accuracy: mean(trials.map((t) => t.accuracy)),
    loss: mean(trials.map((t) => t.loss)),
    lookupAccuracy: mean(trials.map((t) => t.relationAccuracy[0])),
    positionAccuracy: mean(trials.map((t) => mean(t.relationAccuracy.slice(1)))),
    relationsWithOwnHead: mean(trials.map((t) => t.relationsWithOwnHead)),
    trials,
  };
}
