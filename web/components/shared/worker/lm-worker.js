// The Worker of <headlab-language-model> (bundled as dist/headlab-lm-worker.js):
// holds its training session (lm-session.js) and answers the page through session-host.js.
import { getLab } from '../lab/lab.js';
import { LmSession } from '../../../lib/teach/lm-session.js';
import { hostSession, schedule } from './session-host.js';

// The training module loads beside the forward-pass one from the start (both are needed before
// the session can answer; one after the other would add a round trip and a download).
getLab({ preload: ['train'] }).catch(() => {});

// Each model splits its batches over the cores where the page allows threads (cross-origin
// isolated, as `npm start` serves the site), one thread elsewhere (lab.createLanguageModel's 'auto').
const THREADS = 'auto';

// As in trainer-worker.js: the browser optimises hot wasm functions only after they
// have run for a while, so a throwaway model takes the first slow steps while the
// page is read, in small pieces, and stops as soon as real work starts. Not where the
// models run on threads (a cross-origin isolated page): a throwaway model there is a second
// threaded module, whose thread Worker Firefox ESR sometimes never started while the
// learner's model's was starting (the Worker blocked for good; 1 in 4 runs of its check).
let warming = true;
async function warmUp() {
  if (globalThis.crossOriginIsolated === true) return;
  const lab = await getLab();
  const m = await lab.createLanguageModel({ task: 'induction', seed: 99, threads: THREADS });
  const piece = () => {
    if (!warming || m.steps >= 120) {
      warming = false;
      m.dispose();
      return;
    }
    m.step(4);
    if (m.steps % 40 === 0) { m.evaluate(64); m.headScores(16); }
    setTimeout(piece, 0);
  };
  piece();
}

hostSession((post) => getLab().then((lab) => LmSession.open(lab, post, { chunkMs: 25, schedule, threads: THREADS })), {
  warmUp,
  stopWarmUp: () => { warming = false; },
  startsWork: (type) => type === 'run' || type === 'step' || type === 'load',
});
