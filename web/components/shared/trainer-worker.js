// The trainer Worker of <headlab-trainer> (bundled as dist/headlab-trainer-worker.js):
// holds the training session and answers { id, type, payload } with
// { id, result } or { id, error }; snapshots and pauses arrive as { event }.
import { getLab } from './lab.js';
import { TrainerSession } from './trainer-session.js';

// Chunks are queued through a MessageChannel: setTimeout(0) is clamped to 4 ms
// once nested, which would idle the Worker for a sixth of every chunk.
const channel = new MessageChannel();
const queued = [];
channel.port1.onmessage = () => queued.shift()?.();
const schedule = (fn) => { queued.push(fn); channel.port2.postMessage(0); };

// A message marked fatal reports an abort of the WebAssembly module (e.g. out of
// memory), which leaves it unusable: the Worker stops after sending it, and the
// page starts a new one.
const post = (message, transfer = []) => {
  self.postMessage(message, transfer);
  if (message.fatal) self.close();
};
const ready = getLab().then((lab) => TrainerSession.open(lab, post, { chunkMs: 25, schedule }));

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

self.addEventListener('message', async (event) => {
  const { id, type, payload } = event.data ?? {};
  if (type === 'run' || type === 'step' || type === 'load') warming = false;
  try {
    const session = await ready;
    const { result, transfer } = await session.handle(type, payload);
    post({ id, result }, transfer ?? []);
  } catch (e) {
    post({ id, error: { name: e?.name ?? 'Error', message: e?.message ?? String(e) }, fatal: e instanceof WebAssembly.RuntimeError });
  }
});
ready.then(() => {
  post({ ready: true });
  setTimeout(() => warmUp().catch(() => { warming = false; }), 0);
}, (e) => post({ failed: String(e?.message ?? e) }));
