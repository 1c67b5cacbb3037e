// Trains a one-layer, two-head attention model on a synthetic task until both heads specialise.
// Run: node examples/api/trainer.mjs
import { createHeadlab } from 'headlab';

const lab = await createHeadlab();
const trainer = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, seed: 7 });
try {
  for (let i = 0; i < 4; i++) {
    const { step, loss } = trainer.step(250);
    console.log(`step ${step}: loss ${loss.toFixed(3)}`);
  }
  console.log('accuracy:', trainer.evaluate(1000).accuracy.toFixed(3));
} finally {
  trainer.dispose();
}
