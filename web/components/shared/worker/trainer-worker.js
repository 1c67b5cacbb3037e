// The trainer Worker of <headlab-trainer> (bundled as dist/headlab-trainer-worker.js):
// holds the training session (trainer-session.js) and answers the page through session-host.js.
import { getLab } from '../lab/lab.js';
import { TrainerSession } from '../../../lib/teach/trainer-session.js';
import { hostSession, schedule } from './session-host.js';

// The browser first runs wasm with its baseline compiler and optimises the hot
// functions after they have run for a while: the first hundred or so steps are
// several times slower. A throwaway trainer takes that hit while the page is
// read, in small pieces, and stops as soon as real training starts.
let warming = true;
async function warmUp() {
  const lab = await getLab();
  const t = await lab.createTrainer({ task: 'two-relations', numHeads: 2, dModel: 16, batchSize: 64, seed: 1 });
  let steps = 0;
  const piece = () => {
    if (!warming || steps >= 150) {
      warming = false;
      t.dispose();
      return;
    }
    t.step(5);
    steps += 5;
    if (steps % 50 === 0) { t.evaluate(200); t.headMetrics(64); t.attentionWeights(); }
    setTimeout(piece, 0);
  };
  piece();
}

hostSession((post) => getLab().then((lab) => TrainerSession.open(lab, post, { chunkMs: 25, schedule })), {
  warmUp,
  stopWarmUp: () => { warming = false; },
  startsWork: (type) => type === 'run' || type === 'step' || type === 'load',
});
