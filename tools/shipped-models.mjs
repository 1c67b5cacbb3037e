// The language models the site ships, and how each is trained: scripts/train-models.mjs writes
// them into web/models/, tests/js/shipped-models.test.mjs retrains one and compares the bytes.

/**
 * What the site ships: each task at its defaults (seed included: one on which its heads form in the
 * WebAssembly SIMD build), and induction with one layer on the same seed, for the 1 vs 2 layers
 * comparison. Seeds are written out so a change of defaults shows up here.
 */
export const SHIPPED = [
  { file: 'induction.hlm', config: { task: 'induction', seed: 4 } },
  { file: 'induction-1-layer.hlm', config: { task: 'induction', numLayers: 1, seed: 4 } },
  { file: 'cricket.hlm', config: { task: 'cricket', seed: 2 } },
  { file: 'english.hlm', config: { task: 'english', seed: 1 } },
];

/** Trains one shipped model: its saved bytes and what it scores. */
export async function trainShipped(lab, entry, log = () => {}) {
  const tasks = await lab.languageTasks();
  const task = tasks.find((t) => t.name === entry.config.task);
  const steps = entry.steps ?? task.defaults.steps;
  const model = await lab.createLanguageModel(entry.config);
  try {
    const t0 = performance.now();
    for (let done = 0; done < steps;) {
      const n = Math.min(500, steps - done);
      const { loss } = model.step(n);
      done += n;
      log(`  ${entry.file}: step ${done}/${steps}, loss ${loss.toFixed(3)}`);
    }
    const seconds = (performance.now() - t0) / 1000;
    const evaluation = model.evaluate(1000);
    const heads = model.headScores(500);
    const { step, ...config } = model.config();  // the options, as the manifest has always held them
    return { bytes: model.save(), seconds, evaluation, heads, steps, config };
  } finally {
    model.dispose();
  }
}
