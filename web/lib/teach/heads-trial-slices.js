// One trial of the choosing-h experiment (lab.headsTrial: train a one-layer trainer, then measure
// it) in short slices, for a page where no Worker can start (HeadLab from another origin under a
// Content-Security-Policy that refuses blob: Workers, or file://): lab.headsTrial runs its
// thousands of steps in one call, which would freeze the page for seconds. The same trainer, the
// same steps, the same measurements through the API; the page gets the event loop back after
// every slice. tests/js/heads-trial-slices.test.mjs checks that the numbers equal lab.headsTrial's.

/**
 * A relation has a head of its own when some head puts more than this share of its weight on it
 * (kOwnHeadShare in cpp/include/headlab/experiments.hpp).
 */
export const OWN_HEAD_SHARE = 0.5;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * lab.headsTrial(options), stepping for at most `sliceMs` at a time and awaiting `pause()` in between.
 * @param {import('../headlab.js').Headlab} lab
 * @param {import('../headlab').HeadsTrialOptions} options
 * @param {{ sliceMs?: number, pause?: () => Promise<void> }} [o]
 * @returns {Promise<import('../headlab').HeadsTrialResult>}
 */
export async function headsTrialInSlices(lab, options, { sliceMs = 8, pause = nextTask } = {}) {
  const { task = 'lookup', dModel = 16, numHeads, seed = 1, steps = 4000, evalExamples = 1000 } = options ?? {};
  if (!Number.isSafeInteger(steps) || steps < 0) throw new RangeError(`headsTrial: steps must be a non-negative integer, got ${steps}`);
  const trainer = await lab.createTrainer({ task, dModel, numHeads, seed });
  try {
    let done = 0;
    let diverged = false;
    while (done < steps && !diverged) {
      const t0 = now();
      while (done < steps && now() - t0 < sliceMs) {
        try {
          trainer.step(1);
        } catch (e) {
          if (!trainer.divergence()) throw e;
          diverged = true;  // the trainer keeps the state before the step that diverged, as headsTrial's does
          break;
        }
        done += 1;
      }
      await pause();
    }
    const e = trainer.evaluate(evalExamples);
    await pause();
    const metrics = trainer.headMetrics(evalExamples);
    const relations = e.relationAccuracy.length;
    const bestShare = Array.from({ length: relations }, (_, k) => Math.max(0, ...metrics.map((m) => m.relationShare[k])));
    return {
      task, dModel, numHeads, dK: dModel / numHeads, seed, steps,
      loss: e.loss, accuracy: e.accuracy, relationAccuracy: e.relationAccuracy, bestShare,
      relationsWithOwnHead: bestShare.filter((s) => s >= OWN_HEAD_SHARE).length, diverged,
    };
  } finally {
    trainer.dispose();
  }
}
